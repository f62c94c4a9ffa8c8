#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# arm64-userspace.sh
#
# Fetch the Debian bookworm arm64 packages the arm64 test guest runs
# (busybox, dash, bash, gawk, chrt, lscpu, nice, readelf and their shared
# libraries) and unpack them into build/arm64-root/, for
# scripts/mkinitramfs.sh.  Idempotent: nothing is fetched when the unpacked
# tree matches the package list.
#
# The packages come through a private apt setup under build/apt/arm64/:
# its own sources list (the mirror of build/apt/sources.list, written by
# scripts/setup.sh), lists, cache and an empty dpkg status, and a config
# file that sets APT::Architecture to arm64 for these apt-get calls only.
# The machine's apt and dpkg configuration are not touched (no
# "dpkg --add-architecture"): the .debs are only unpacked with dpkg-deb -x.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# The programs and, after them, the libraries they need (checked below:
# a missing library is an error that names it).
pkgs=(busybox-static dash bash gawk util-linux coreutils
      binutils-aarch64-linux-gnu
      libc6 libtinfo6 libreadline8 libgmp10 libmpfr6 libsigsegv2
      libsmartcols1 libctf-nobfd0 libbinutils zlib1g libzstd1)

root=$BUILD/arm64-root
adir=$BUILD/apt/arm64
dl=$BUILD/dl/arm64
stamp=$root/.packages

want="v1 ${pkgs[*]}"
if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$want" ]; then
	exit 0
fi

[ -f "$BUILD/apt/sources.list" ] ||
	die "no $BUILD/apt/sources.list: run scripts/setup.sh first"
mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial" "$dl"
# bookworm main and updates from the mirror setup.sh found (no backports:
# the guest's programs are the distribution's own)
grep -E '^deb .* bookworm(-updates)? main' "$BUILD/apt/sources.list" >"$adir/sources.list"
[ -s "$adir/sources.list" ] || die "no bookworm lines in $BUILD/apt/sources.list"
: >"$adir/status"
cat >"$adir/apt.conf" <<'EOF'
// Private to the project's arm64 guest packages: used with apt-get -c only.
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Get::List-Cleanup "false";
EOF
apt_arm64=(-c "$adir/apt.conf"
	   -o Dir::Etc::sourcelist="$adir/sources.list"
	   -o Dir::Etc::sourceparts=/dev/null
	   -o Dir::State::Lists="$adir/lists"
	   -o Dir::State::status="$adir/status"
	   -o Dir::Cache="$adir/cache")

step "apt (arm64, private config): fetching ${#pkgs[@]} packages for the arm64 guest"
if [ -z "$(find "$adir/updated" -mmin -1440 2>/dev/null)" ]; then
	apt-get "${apt_arm64[@]}" update -q >"$adir/update.log" 2>&1 ||
		die "apt-get update (arm64) failed, see $adir/update.log"
	touch "$adir/updated"
fi
(cd "$dl" && apt-get "${apt_arm64[@]}" download "${pkgs[@]}" >"$adir/download.log" 2>&1) ||
	die "apt-get download (arm64) failed, see $adir/download.log"

rm -rf "$root.tmp"
mkdir -p "$root.tmp"
for p in "${pkgs[@]}"; do
	# the newest downloaded version of each package
	deb=$(ls "$dl/${p}_"*_arm64.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$deb" ] || die "no arm64 .deb of $p in $dl"
	dpkg-deb -x "$deb" "$root.tmp"
	echo "$(basename "$deb")" >>"$root.tmp/.debs"
done
{ echo "$want"; cat "$root.tmp/.debs"; } >"$root.tmp/.packages"
rm -f "$root.tmp/.debs"
rm -rf "$root"
mv "$root.tmp" "$root"
step "arm64 guest userspace in $root ($(du -sh "$root" | cut -f1))"
