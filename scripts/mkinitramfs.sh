#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh VARIANT [ARCH]
#
# Pack build/out-ARCH-VARIANT/initramfs.cpio.gz for the test guest:
# busybox, bash, gawk and the few host tools ftracetest needs (with their
# shared libraries; for arm64 and riscv64 (ARCH, else $RFT_ARCH) the same
# programs from Debian's packages of that architecture, see
# scripts/arm64-userspace.sh and scripts/riscv64-userspace.sh), on x86_64
# trace-cmd (Debian's package, scripts/x86_64-tools.sh) and the host's perf
# when they can be had (selftests/rftrace/trace-cmd.tc and perf-ftrace.tc;
# without them those two are UNSUPPORTED), the kernel modules of that
# build, the ftracetest
# suite of the kernel tree (in /rftrace/ftrace), the project's selftests/
# (in /rftrace/selftests) and scripts/guest/init as /init.
# The archive is rebuilt only when one of its inputs changed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

variant=${1:?usage: mkinitramfs.sh stock|rust|shadow [x86_64|arm64|riscv64]}
arch=${2:-$RFT_ARCH}
arch_vars "$arch"
out=$BUILD/out-$arch-$variant
img=$out/initramfs.cpio.gz
ftsrc=$SRC/tools/testing/selftests/ftrace
modroot=$out/modroot/lib/modules
# RFT_SELFTESTS: another directory of .tc files to pack instead of selftests/
stdir=${RFT_SELFTESTS:-$top/selftests}

[ -d "$out" ] || die "$out does not exist: build the kernel first (scripts/build-kernel.sh $variant)"
[ -d "$modroot" ] || die "no modules in $modroot: build the kernel first"
[ -x "$ftsrc/ftracetest" ] || die "no ftracetest in $ftsrc"

# Host programs copied with their libraries (busybox covers the rest).
# dash: /bin/sh; gawk: awk with strtonum; util-linux: chrt, lscpu; coreutils: nice;
# binutils: readelf.
# dash is /bin/sh: the static busybox of Debian runs its own applets in
# preference to programs of PATH (so its ash would never use gawk).
hostbins=(dash bash gawk chrt nice readelf lscpu)
hostbusybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
bins=()
if [ -z "$CROSS" ]; then
	sysroot=
	busybox=$hostbusybox
	for b in "${hostbins[@]}"; do
		p=$(command -v "$b") || die "$b not found on the host"
		bins+=("$(readlink -f "$p")")	# e.g. readelf -> x86_64-linux-gnu-readelf
	done
else
	# The guest's programs come from Debian packages of its architecture,
	# unpacked (not installed) under build/.
	"$top/scripts/$arch-userspace.sh" || die "no $arch userspace"
	sysroot=$BUILD/$arch-root
	# sysroot_path PATH: PATH in the sysroot, its symbolic links followed
	# inside the sysroot
	sysroot_path() {
		local p=$sysroot$1 t n=0
		while [ -L "$p" ] && [ $n -lt 20 ]; do
			t=$(readlink "$p")
			case $t in /*) p=$sysroot$t ;; *) p=$(dirname "$p")/$t ;; esac
			n=$((n + 1))
		done
		echo "$p"
	}
	busybox=$(sysroot_path /bin/busybox)
	# the applet list is the host's (below): say so if the versions differ
	hv=$(dpkg-query -W -f '${Version}' busybox-static 2>/dev/null | sed 's/:/%3a/')
	grep -q "^busybox-static_${hv}_" "$sysroot/.packages" ||
		echo "mkinitramfs: host busybox-static $hv is not the $arch one" \
			"($(grep '^busybox-static_' "$sysroot/.packages")): applet list may differ" >&2
	for b in "${hostbins[@]}"; do
		p=
		for d in /usr/bin /bin /usr/sbin /sbin; do
			[ -e "$sysroot$d/$b" ] && { p=$(sysroot_path "$d/$b"); break; }
			# readelf: the binutils-TRIPLET package has it prefixed only
			[ -e "$sysroot$d/$CROSS$b" ] && { p=$(sysroot_path "$d/$CROSS$b"); break; }
		done
		[ -n "$p" ] || die "$b not found in $sysroot"
		bins+=("$p")
	done
fi

# Optional tools of the x86_64 guest: trace-cmd unpacked from Debian's
# package under build/x86_64-tools (with its libraries), and the host's
# perf (bookworm's linux-perf; /usr/bin/perf may be a wrapper script that
# runs perf_VERSION: the real program is taken).  One that cannot be had
# is left out with a note: no other test needs them.
tctree= perfbin=
if [ -z "$CROSS" ]; then
	if "$top/scripts/x86_64-tools.sh" >&2; then
		tctree=$BUILD/x86_64-tools
		[ -x "$tctree/usr/bin/trace-cmd" ] || tctree=
	fi
	[ -n "$tctree" ] ||
		echo "mkinitramfs: no trace-cmd (scripts/x86_64-tools.sh failed): trace-cmd.tc will be UNSUPPORTED" >&2
	if p=$(command -v perf); then
		p=$(readlink -f "$p")
		if [ "$(head -c 4 "$p" | od -An -c | tr -d ' ')" != 177ELF ]; then
			# a wrapper: the newest perf_X.Y beside it
			p=$(ls "$(dirname "$p")"/perf_[0-9]* 2>/dev/null | sort -V | tail -n 1)
		fi
		[ -n "$p" ] && [ -x "$p" ] && perfbin=$p
	fi
	[ -n "$perfbin" ] ||
		echo "mkinitramfs: no perf on the host (apt-get install linux-perf): perf-ftrace.tc will be UNSUPPORTED" >&2
fi

# --- cache key: everything that goes into the archive ----------------------
stamp=$out/.initramfs.stamp
key=$( {
	echo "v1 $arch $variant $stdir"
	[ -n "$sysroot" ] && cat "$sysroot/.packages"
	[ -n "$tctree" ] && cat "$tctree/.packages"
	[ -n "$perfbin" ] && ls -lL "$perfbin"
	find "$top/scripts/guest" "$top/scripts/mkinitramfs.sh" "$ftsrc" "$modroot" \
		$( [ -d "$stdir" ] && echo "$stdir" ) \
		-path "$ftsrc/logs" -prune -o -printf '%p %s %T@\n'
	ls -lL "$busybox" "${bins[@]}"
} | LC_ALL=C sort | sha256sum | cut -d' ' -f1 )
if [ -f "$img" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
	step "initramfs up to date: $img"
	exit 0
fi

step "packing $img"
stage=$out/initramfs.d
rm -rf "$stage"
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{etc,proc,sys,dev,tmp,run,root,rft,rftrace}
# merged /usr, as on the host, so that library paths from ldd resolve
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done
chmod 1777 "$stage/tmp"

# busybox and its applets (those we bring from the host win).  The list of
# applets comes from the host's busybox-static: for another architecture,
# the same Debian release of the package, built with the same config.
cp "$busybox" "$stage/usr/bin/busybox"
"$hostbusybox" --list-full | while read -r a; do
	a=${a#/}
	case $a in bin/*|sbin/*|usr/bin/*|usr/sbin/*) ;; *) continue ;; esac
	dest=$stage/usr/${a#usr/}
	[ -e "$dest" ] || [ -L "$dest" ] || ln -s /usr/bin/busybox "$dest"
done

# copy_elf FILE [DEST [TREE]]: copy an executable and the libraries it
# needs; with TREE (a tree of unpacked packages of the host's
# architecture), the libraries of TREE's library directory come first and
# go to their path inside TREE
copy_elf() {
	local f=$1 dest=${2:-$1} tree=${3:-} lib to
	mkdir -p "$stage$(dirname "$dest")"
	rm -f "$stage$dest"
	cp -L "$f" "$stage$dest"
	LD_LIBRARY_PATH=${tree:+$tree/usr/lib/x86_64-linux-gnu} ldd "$f" 2>/dev/null |
	awk '/=> \//{print $3} /^[[:space:]]*\/[^ ]*ld-linux/{print $1}' |
	while read -r lib; do
		to=$lib
		[ -n "$tree" ] && to=${lib#"$tree"}
		[ -e "$stage$to" ] && continue
		mkdir -p "$stage$(dirname "$to")"
		cp -L "$lib" "$stage$to"
	done
}
# copy_elf_sysroot FILE DEST: the same for a program of the sysroot; its
# libraries are found from the ELF headers (the host cannot run it)
copy_elf_sysroot() {
	local f=$1 dest=$2 interp todo lib d p
	mkdir -p "$stage$(dirname "$dest")"
	rm -f "$stage$dest"
	cp "$f" "$stage$dest"
	interp=$(readelf -l "$f" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
	if [ -n "$interp" ] && [ ! -e "$stage$interp" ]; then
		mkdir -p "$stage$(dirname "$interp")"
		cp "$(sysroot_path "$interp")" "$stage$interp"
	fi
	todo=("$f")
	while [ ${#todo[@]} -gt 0 ]; do
		for lib in $(readelf -d "${todo[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
			p=
			for d in /lib/$triplet /usr/lib/$triplet /lib /usr/lib; do
				[ -e "$sysroot$d/$lib" ] && { p=$(sysroot_path "$d/$lib"); break; }
			done
			[ -n "$p" ] || die "$lib (needed by ${todo[0]##*/}) is in none of the packages of scripts/$arch-userspace.sh"
			[ -e "$stage/usr/lib/$triplet/$lib" ] && continue
			mkdir -p "$stage/usr/lib/$triplet"
			cp "$p" "$stage/usr/lib/$triplet/$lib"
			todo+=("$p")
		done
		todo=("${todo[@]:1}")
	done
}
for i in "${!hostbins[@]}"; do
	if [ -z "$sysroot" ]; then
		copy_elf "${bins[i]}" "/usr/bin/${hostbins[i]}"
	else
		triplet=${CROSS%-}
		copy_elf_sysroot "${bins[i]}" "/usr/bin/${hostbins[i]}"
	fi
done
ln -sf gawk "$stage/usr/bin/awk"
# the optional tools (see above): trace-cmd with libtraceevent's plugins
if [ -n "$tctree" ]; then
	copy_elf "$tctree/usr/bin/trace-cmd" /usr/bin/trace-cmd "$tctree"
	pl=usr/lib/x86_64-linux-gnu/traceevent/plugins
	if [ -d "$tctree/$pl" ]; then
		mkdir -p "$stage/$pl"
		cp -L "$tctree/$pl"/*.so "$stage/$pl/"
	fi
fi
[ -n "$perfbin" ] && copy_elf "$perfbin" /usr/bin/perf
# ftracetest and the .tc files are POSIX sh scripts, run by dash as on Debian
ln -sf dash "$stage/usr/bin/sh"

# helper program of trigger-hist-poll.tc
if [ -z "$CROSS" ] && command -v gcc >/dev/null; then
	gcc -O2 -static -o "$out/ftracetest-poll" "$ftsrc/poll.c" 2>/dev/null ||
		gcc -O2 -o "$out/ftracetest-poll" "$ftsrc/poll.c"
elif [ -n "$CROSS" ]; then
	# needs the cross C library (libc6-dev-arm64-cross or
	# libc6-dev-riscv64-cross, scripts/setup.sh)
	rm -f "$out/ftracetest-poll"
	"${CROSS}gcc" -O2 -static -o "$out/ftracetest-poll" "$ftsrc/poll.c" 2>/dev/null ||
		echo "mkinitramfs: cannot build poll.c with ${CROSS}gcc -static;" \
			"trigger-hist-poll.tc will miss it" >&2
fi

# users and groups: ftracetest wants a second user and the groups
# mount_options and test_ownership to chgrp tracefs files to.
cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/bash
rftuser:x:1000:1000:rftrace test user:/tmp:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$stage/etc/group" <<'EOF'
root:x:0:
rftuser:x:1000:
mount_options:x:1001:
test_ownership:x:1002:
nogroup:x:65534:
EOF
echo "127.0.0.1 localhost rftrace-guest" >"$stage/etc/hosts"
: >"$stage/etc/fstab"
echo "export PS1='rft# '" >"$stage/etc/profile"

# modules
rel=$(ls "$modroot")
[ "$(echo "$rel" | wc -l)" = 1 ] || die "expected one kernel release in $modroot, got: $rel"
mkdir -p "$stage/usr/lib/modules"
cp -a "$modroot/$rel" "$stage/usr/lib/modules/"
rm -f "$stage/usr/lib/modules/$rel"/{build,source}

# test suites
mkdir -p "$stage/rftrace/ftrace"
cp -a "$ftsrc/ftracetest" "$ftsrc/test.d" "$stage/rftrace/ftrace/"
[ -x "$out/ftracetest-poll" ] && cp "$out/ftracetest-poll" "$stage/rftrace/ftrace/poll"
if [ -d "$stdir" ]; then
	mkdir -p "$stage/rftrace/selftests"
	(cd "$stdir" && find . -name expected -prune -o -type f -print0 |
		cpio -0pdm --quiet "$stage/rftrace/selftests")
fi

install -m 755 "$top/scripts/guest/init" "$stage/init"
install -m 644 "$top/scripts/guest/kunit-cases.awk" "$stage/rftrace/kunit-cases.awk"

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet | gzip -n -6) >"$img.tmp"
mv "$img.tmp" "$img"
echo "$key" >"$stamp"
step "initramfs: $img ($(du -h "$img" | cut -f1), kernel $rel)"
