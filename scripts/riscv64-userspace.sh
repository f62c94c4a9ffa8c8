#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# riscv64-userspace.sh
#
# Fetch the Debian riscv64 packages the riscv64 test guest runs (busybox,
# dash, bash, gawk, chrt, lscpu, nice, readelf and their shared libraries)
# and unpack them into build/riscv64-root/, for scripts/mkinitramfs.sh.
# Idempotent: nothing is fetched when the unpacked tree matches the
# package list.  The riscv64 counterpart of scripts/arm64-userspace.sh.
#
# bookworm has no riscv64 port: the packages come from Debian unstable
# (the suite of build/apt/sid.list, written by scripts/setup.sh), through
# a private apt setup under build/apt/riscv64/: its own sources list,
# lists, cache and an empty dpkg status, and a config file that sets
# APT::Architecture to riscv64 for these apt-get calls only.  The
# machine's apt and dpkg configuration are not touched (no
# "dpkg --add-architecture"): the .debs are only unpacked with dpkg-deb -x.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# The programs and, after them, the libraries they need (checked by
# scripts/mkinitramfs.sh: a missing library is an error that names it).
# Names are unstable's: the 64-bit time_t transition renamed
# libreadline8 to libreadline8t64, and readelf needs libsframe3.
pkgs=(busybox-static dash bash gawk util-linux coreutils
      binutils-riscv64-linux-gnu
      libc6 libtinfo6 libreadline8t64 libgmp10 libmpfr6
      libsmartcols1 libctf-nobfd0 libsframe3 zlib1g libzstd1)

root=$BUILD/riscv64-root
adir=$BUILD/apt/riscv64
dl=$BUILD/dl/riscv64
stamp=$root/.packages

want="v1 ${pkgs[*]}"
if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$want" ]; then
	exit 0
fi

[ -f "$BUILD/apt/sid.list" ] ||
	die "no $BUILD/apt/sid.list: run scripts/setup.sh first"
mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial" "$dl"
grep -E '^deb .* unstable main' "$BUILD/apt/sid.list" >"$adir/sources.list"
[ -s "$adir/sources.list" ] || die "no unstable line in $BUILD/apt/sid.list"
: >"$adir/status"
cat >"$adir/apt.conf" <<'EOF'
// Private to the project's riscv64 guest packages: used with apt-get -c only.
APT::Architecture "riscv64";
APT::Architectures { "riscv64"; };
APT::Get::List-Cleanup "false";
EOF
apt_riscv64=(-c "$adir/apt.conf"
	     -o Dir::Etc::sourcelist="$adir/sources.list"
	     -o Dir::Etc::sourceparts=/dev/null
	     -o Dir::State::Lists="$adir/lists"
	     -o Dir::State::status="$adir/status"
	     -o Dir::Cache="$adir/cache")

step "apt (riscv64, unstable, private config): fetching ${#pkgs[@]} packages for the riscv64 guest"
if [ -z "$(find "$adir/updated" -mmin -1440 2>/dev/null)" ]; then
	apt-get "${apt_riscv64[@]}" update -q >"$adir/update.log" 2>&1 ||
		die "apt-get update (riscv64) failed, see $adir/update.log"
	touch "$adir/updated"
fi
(cd "$dl" && apt-get "${apt_riscv64[@]}" download "${pkgs[@]}" >"$adir/download.log" 2>&1) ||
	die "apt-get download (riscv64) failed, see $adir/download.log"

rm -rf "$root.tmp"
mkdir -p "$root.tmp"
for p in "${pkgs[@]}"; do
	# the newest downloaded version of each package
	deb=$(find "$dl" -maxdepth 1 -name "${p}_*_riscv64.deb" -printf '%f\n' |
	      sort -V | tail -n 1)
	[ -n "$deb" ] || die "no riscv64 .deb of $p in $dl"
	dpkg-deb -x "$dl/$deb" "$root.tmp"
	echo "$deb" >>"$root.tmp/.debs"
done
# unstable's packages ship merged-/usr paths only (/usr/lib/ld-linux-...):
# the links base-files would make, so that /bin/busybox and the
# interpreter /lib/ld-linux-riscv64-lp64d.so.1 resolve inside the tree.
for d in bin sbin lib; do
	[ -e "$root.tmp/$d" ] || ln -s "usr/$d" "$root.tmp/$d"
done
{ echo "$want"; cat "$root.tmp/.debs"; } >"$root.tmp/.packages"
rm -f "$root.tmp/.debs"
rm -rf "$root"
mv "$root.tmp" "$root"
step "riscv64 guest userspace in $root ($(du -sh "$root" | cut -f1))"
