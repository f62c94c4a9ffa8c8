#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-progs.sh [--arch ARCH] [--tests "A B ..."] VARIANT...
#
# Build the kernel's own BPF test runner, test_progs, from the tree's
# tools/testing/selftests/bpf (its libbpf, its bpftool, clang-19), for
# the tests named (default: the tracing set of scripts/bpf-test.sh), and
# the selftests' test modules (bpf_testmod and its siblings) for each
# kernel VARIANT (bpf, stock-bpf, ...; built by scripts/build-kernel.sh).
#
# Only the named tests are built: a copy of the selftests directory beside
# it in the tree (tools/testing/selftests/bpf-rftrace) keeps those tests'
# prog_tests/*.c, the BPF programs their skeletons and object names ask
# for, and the programs the Makefile itself names; the rest is left out,
# so the build takes minutes, not an hour.  The runner is built once,
# against the BTF of the first VARIANT, and serves every kernel (its
# programs are CO-RE: relocated against the running kernel's BTF when
# loaded), so stock and the Rust core run the same programs; the modules
# are built against each VARIANT's own build directory.
#
# Output: build/bpf-ARCH/ (test_progs, the .bpf.o files, the helpers) and
# build/bpf-ARCH/kmods-VARIANT/*.ko; build/bpf-ARCH/bundle-VARIANT.cpio,
# the guest's /rftrace/bpf (runner, programs, modules and the runner's
# shared libraries), which scripts/bpf-test.sh appends to the initramfs.
# A second run with the same inputs rebuilds nothing.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

arch=$RFT_ARCH tests=
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=$2; shift 2 ;;
	--tests) tests=$2; shift 2 ;;
	-h|--help) sed -n '3,25p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || die "usage: bpf-progs.sh [--arch ARCH] [--tests LIST] VARIANT..."
arch_vars "$arch"
[ -n "$tests" ] || tests=$(bpf_test_set "$arch")

bpfsrc=$SRC/tools/testing/selftests/bpf
copy=$SRC/tools/testing/selftests/bpf-rftrace
outdir=$BUILD/bpf-$arch
first=$BUILD/out-$arch-$1
for v in "$@"; do
	[ -f "$BUILD/out-$arch-$v/vmlinux" ] || die "no $BUILD/out-$arch-$v/vmlinux: scripts/build-kernel.sh $v first"
	grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$BUILD/out-$arch-$v/.config" ||
		die "$v has no DEBUG_INFO_BTF: the BPF selftests need a bpf variant"
done

apt_need "the BPF selftests' runner" clang-19 llvm-19 libelf-dev zlib1g-dev \
	libssl-dev libzstd-dev pkgconf

# Another architecture: test_progs is cross-built (the tree's Makefile
# builds bpftool and resolve_btfids for the host, libbpf and the runner
# for the target, and bpftool for the target too) against the target's
# libelf, zlib, libzstd and OpenSSL, which come as Debian packages of
# that architecture (bookworm's; unstable's for riscv64) unpacked under
# build/bpf-ARCH-sysroot (scripts/fetch-debs.sh), through a wrapper of
# the cross compiler that adds their paths.
cross_make=()
if [ -n "$CROSS" ]; then
	sysroot=$BUILD/bpf-$arch-sysroot
	triplet=${CROSS%-}
	shlib=
	case $arch in
	arm64)	"$top/scripts/fetch-debs.sh" "bpf-$arch" arm64 "$BUILD/apt/sources.list" \
			'bookworm(-updates)?' "$sysroot" \
			libelf-dev libelf1 zlib1g-dev zlib1g libzstd-dev libzstd1 libssl-dev libssl3 ||
			die "no $arch libraries for test_progs" ;;
	riscv64)
		# bookworm has no riscv64 port: unstable's packages (names after
		# the time_t transition), as the guest's (riscv64-userspace.sh).
		# They need a newer C library than the cross compiler's, which
		# the guest has: the link lets their symbols go unresolved.
		"$top/scripts/fetch-debs.sh" "bpf-$arch" riscv64 "$BUILD/apt/sid.list" \
			unstable "$sysroot" \
			libelf-dev libelf1t64 zlib1g-dev zlib1g libzstd-dev libzstd1 libssl-dev libssl3t64 ||
			die "no $arch libraries for test_progs"
		shlib=" -Wl,--allow-shlib-undefined" ;;
	esac
	mkdir -p "$outdir"
	printf '%s\n' '#!/bin/sh' \
		"# ${CROSS}gcc with the $arch libraries of $sysroot (scripts/bpf-progs.sh)" \
		"exec ${CROSS}gcc -isystem $sysroot/usr/include -isystem $sysroot/usr/include/$triplet \\" \
		"	-L$sysroot/usr/lib/$triplet -L$sysroot/lib/$triplet \\" \
		"	-Wl,-rpath-link,$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet$shlib \"\$@\"" \
		>"$outdir/cross-cc"
	chmod +x "$outdir/cross-cc"
	# LDFLAGS: clang links urandom_read and its library for the target
	cross_make=(ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="$outdir/cross-cc"
		    LDFLAGS="-L$sysroot/usr/lib/$triplet -L$sysroot/lib/$triplet -Wl,-rpath-link,$sysroot/usr/lib/$triplet:$sysroot/lib/$triplet$shlib")
fi

# --- the pruned copy ---------------------------------------------------------
# mkvars RE...: the values of the Makefile's simple assignments whose
# names match one of the REs (continuation lines joined)
mkvars() {
	local re
	re=$(printf '%s|' "$@")
	MKVARS_RE="^(${re%|})$" awk '
		{ line = line $0 }
		/\\$/ { sub(/\\$/, " ", line); next }
		{ if (match(line, /^[^ \t:=]+[ \t]*:=/)) {
			name = line; sub(/[ \t]*:=.*/, "", name)
			if (name ~ ENVIRON["MKVARS_RE"]) { v = line; sub(/^[^:]*:=[ \t]*/, "", v); print v }
		  }
		  line = "" }' "$bpfsrc/Makefile" | tr -s ' \t' '  '
}

# test_file NAME: the prog_tests file of test NAME (NAME.c, or the file
# that defines test_NAME() or serial_test_NAME())
test_file() {
	if [ -f "$bpfsrc/prog_tests/$1.c" ]; then
		echo "$bpfsrc/prog_tests/$1.c"
	else
		grep -l "^void \(serial_\)\{0,1\}test_$1(void)" "$bpfsrc"/prog_tests/*.c | head -n 1
	fi
}

# keep_progs: the BPF program sources the named tests need, one a line:
# skeleton headers (X.skel.h, X.lskel.h, X.subskel.h: progs/X.c, or the
# parts of a linked skeleton), object files named in the test, and what
# those sources include, followed to the end.
keep_progs() {
	local t f x
	{
		for t in $tests; do
			f=$(test_file "$t")
			grep -ho '#include "[A-Za-z0-9_]*\.\(l\|sub\)\{0,1\}skel\.h"' "$f" |
				sed 's/#include "//; s/\.\(l\|sub\)\{0,1\}skel\.h"$//'
			grep -ho '"[A-Za-z0-9_]*\.bpf\.o"' "$f" | sed 's/"//g; s/\.bpf\.o$//'
		done
		# what the Makefile names itself (light and linked skeletons)
		mkvars LSKELS LSKELS_SIGNED LSKELS_EXTRA | tr ' ' '\n' | sed -n 's/\.c$//p'
		mkvars '[A-Za-z0-9_]*\.skel\.h-deps' | tr ' ' '\n' | sed -n 's/\.bpf\.o$//p'
	} | sort -u | while read -r x; do
		# a linked skeleton's name is no source: its parts are
		if [ -f "$bpfsrc/progs/$x.c" ]; then
			echo "$x"
		else
			mkvars "$x\.skel\.h-deps" | tr ' ' '\n' | sed -n 's/\.bpf\.o$//p'
		fi
	done | sort -u
}

key=$( {
	echo "v1 $arch $tests"
	find "$bpfsrc" "$top/scripts/bpf-progs.sh" -printf '%P %s %T@\n' 2>/dev/null | LC_ALL=C sort
	# what vmlinux.h can declare (kfuncs from pahole 1.27 on)
	grep '^CONFIG_PAHOLE_VERSION=' "$first/.config"
} | sha256sum | cut -d' ' -f1)
stamp=$outdir/.runner.stamp
mkdir -p "$outdir"
if [ -x "$outdir/test_progs" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
	step "test_progs up to date: $outdir/test_progs"
else
	for t in $tests; do
		[ -n "$(test_file "$t")" ] || die "no test $t in $bpfsrc/prog_tests"
	done
	step "bpf: a copy of the selftests with $(echo $tests | wc -w) tests"
	rm -rf "$copy"
	mkdir -p "$copy"
	(cd "$bpfsrc" && find . -path ./prog_tests -prune -o -path ./progs -prune -o -print0 |
		cpio -0pdm --quiet "$copy")
	mkdir -p "$copy/prog_tests" "$copy/progs"
	cp -a "$bpfsrc"/prog_tests/*.h "$copy/prog_tests/" 2>/dev/null || true
	for t in $tests; do cp -a "$(test_file "$t")" "$copy/prog_tests/"; done
	cp -a "$bpfsrc"/progs/*.h "$copy/progs/"
	# the kept programs and, to the end, the .c files they include
	todo=$(keep_progs)
	seen=" "
	while [ -n "$todo" ]; do
		next=
		for p in $todo; do
			case $seen in *" $p "*) continue ;; esac
			seen="$seen$p "
			[ -f "$bpfsrc/progs/$p.c" ] || continue
			cp -a "$bpfsrc/progs/$p.c" "$copy/progs/"
			next="$next $(sed -n 's/^#include "\([A-Za-z0-9_]*\)\.c"$/\1/p' "$bpfsrc/progs/$p.c")"
		done
		todo=$next
	done
	step "bpf: $(ls "$copy/progs"/*.c | wc -l) of $(ls "$bpfsrc/progs"/*.c | wc -l) BPF programs kept"
	rm -f "$outdir/test_progs"
	# TRUNNER_EXTRA_FILES: the helper programs the tests run; without the
	# test modules (built below, per kernel), sign-file and xdp_synproxy
	# (programs of tests not in the set, built for the target).
	# BPF_STRICT_BUILD=0: a program or test that does not build against
	# this kernel's BTF is left out (SKIP-BPF, SKIP-OBJ lines in the log)
	# instead of stopping the build; the run reports what is missing.
	step "bpf: building test_progs (log: $outdir/build.log)"
	make -C "$copy" -j"${JOBS:-$(nproc)}" \
		OUTPUT="$outdir" VMLINUX_BTF="$first/vmlinux" \
		CLANG=clang-19 LLC=llc-19 LLVM_STRIP=llvm-strip-19 LLD=/usr/lib/llvm-19/bin/ld.lld \
		BPF_STRICT_BUILD=0 SKIP_LLVM=1 SKIP_DOCS=1 SKIP_LIBBFD=1 \
		LIBARENA_SKEL= LIBARENA_ASAN_SKEL= "${cross_make[@]}" \
		TRUNNER_EXTRA_FILES="$outdir/urandom_read $outdir/liburandom_read.so $outdir/uprobe_multi" \
		test_progs >"$outdir/build.log" 2>&1 ||
		{ tail -n 40 "$outdir/build.log"; die "test_progs did not build (log: $outdir/build.log)"; }
	[ -x "$outdir/test_progs" ] || die "no test_progs after the build (log: $outdir/build.log)"
	grep -E '^ *SKIP-[A-Z]+ ' "$outdir/build.log" | sed 's/^/bpf: left out: /' || true
	echo "$key" >"$stamp"
	echo "vmlinux.h from $first/vmlinux" >"$outdir/btf-source"
fi

# --- the test modules, per kernel -------------------------------------------
for v in "$@"; do
	out=$BUILD/out-$arch-$v
	kd=$outdir/kmods-$v
	kkey=$( {
		find "$bpfsrc/test_kmods" -printf '%P %s %T@\n' | LC_ALL=C sort
		ls -lL "$out/vmlinux" "$out/Module.symvers"
	} | sha256sum | cut -d' ' -f1)
	if [ -f "$kd/bpf_testmod.ko" ] && [ "$(cat "$kd/.stamp" 2>/dev/null)" = "$kkey" ]; then
		step "test modules for $v up to date"
	else
		step "bpf: test modules for $v"
		rm -rf "$kd" "$outdir/kmods-src"
		mkdir -p "$kd"
		cp -a "$bpfsrc/test_kmods" "$outdir/kmods-src"
		make -C "$SRC" O="$out" M="$outdir/kmods-src" -j"${JOBS:-$(nproc)}" \
			ARCH="$KARCH" ${CROSS:+CROSS_COMPILE=$CROSS} ${KLLVM:+LLVM=$KLLVM} \
			PAHOLE="$PAHOLE_BIN" modules >"$kd/build.log" 2>&1 ||
			{ tail -n 30 "$kd/build.log"; die "test modules for $v did not build (log: $kd/build.log)"; }
		cp "$outdir/kmods-src"/*.ko "$kd/"
		echo "$kkey" >"$kd/.stamp"
	fi
	# the guest's /rftrace/bpf
	stage=$outdir/stage-$v
	rm -rf "$stage"
	mkdir -p "$stage/rftrace/bpf"
	(cd "$outdir" && find . -maxdepth 1 \( -name '*.bpf.o' -o -name 'urandom_read' \
		-o -name 'liburandom_read.so' -o -name 'uprobe_multi' -o -name 'test_progs' \
		-o -name 'btf_dump_test_case_*.c' \) -print0 | cpio -0pdm --quiet "$stage/rftrace/bpf")
	cp "$kd"/*.ko "$stage/rftrace/bpf/"
	# livepatch_trampoline loads $KBUILD_OUTPUT/samples/livepatch/livepatch-sample.ko
	lp=$(find "$out/modroot" -name 'livepatch-sample.ko*' | head -n 1)
	if [ -n "$lp" ]; then
		mkdir -p "$stage/rftrace/bpf/kbuild/samples/livepatch"
		cp "$lp" "$stage/rftrace/bpf/kbuild/samples/livepatch/"
	fi
	for f in "$outdir/test_progs" "$outdir/urandom_read" "$outdir/uprobe_multi"; do
		[ -x "$f" ] || continue
		if [ -n "$CROSS" ]; then
			# the libraries of the sysroot the programs need (the C
			# library is in the guest's initramfs already)
			todo=("$f")
			while [ ${#todo[@]} -gt 0 ]; do
				for lib in $(readelf -d "${todo[0]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
					for d in usr/lib/$triplet lib/$triplet; do
						[ -e "$sysroot/$d/$lib" ] || continue
						[ -e "$stage/usr/lib/$triplet/$lib" ] && break
						mkdir -p "$stage/usr/lib/$triplet"
						cp -L "$sysroot/$d/$lib" "$stage/usr/lib/$triplet/$lib"
						todo+=("$stage/usr/lib/$triplet/$lib")
						break
					done
				done
				todo=("${todo[@]:1}")
			done
			continue
		fi
		# liburandom_read.so is beside the programs (rpath .)
		stage_host_libs "$stage" "$f" "$outdir"
	done
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) >"$outdir/bundle-$v.cpio"
	step "bpf: $outdir/bundle-$v.cpio ($(du -h "$outdir/bundle-$v.cpio" | cut -f1))"
done
