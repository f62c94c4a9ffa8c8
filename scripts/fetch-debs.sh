#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-debs.sh NAME DEBARCH LIST SUITE ROOT PKG...
#
# Fetch the newest Debian packages PKG... of architecture DEBARCH (amd64,
# arm64, riscv64) and unpack them into ROOT, for scripts/mkinitramfs.sh:
# the one step behind scripts/arm64-userspace.sh,
# scripts/riscv64-userspace.sh and scripts/x86_64-tools.sh.  Idempotent:
# nothing is fetched when ROOT/.packages matches the package list; one
# fetch and unpack at a time (two initramfs builds may ask together).
#
# The packages come through a private apt setup under build/apt/NAME/: its
# own sources list (the lines of suite SUITE of the list LIST, which
# scripts/setup.sh wrote from the machine's mirror: build/apt/sources.list
# for bookworm, build/apt/sid.list for unstable), lists, cache and an
# empty dpkg status, and a config file that sets APT::Architecture for
# these apt-get calls only; the .debs are kept in build/dl/NAME/.  The
# machine's apt and dpkg configuration are not touched (no "dpkg
# --add-architecture"): the .debs are only unpacked with dpkg-deb -x.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

[ $# -ge 6 ] || die "usage: fetch-debs.sh NAME DEBARCH LIST SUITE ROOT PKG..."
name=$1 debarch=$2 list=$3 suite=$4 root=$5
shift 5
pkgs=("$@")

adir=$BUILD/apt/$name
dl=$BUILD/dl/$name
stamp=$root/.packages
want="v1 ${pkgs[*]}"
fresh() { [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$want" ]; }
fresh && exit 0

mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial" "$dl"
exec 9>"$adir/lock"
flock 9
fresh && exit 0

[ -f "$list" ] || die "no $list: run scripts/setup.sh first"
grep -E "^deb .* $suite main" "$list" >"$adir/sources.list" ||
	die "no '$suite main' line in $list"
: >"$adir/status"
cat >"$adir/apt.conf" <<CONF
// Private to the project's $name guest packages: used with apt-get -c only.
APT::Architecture "$debarch";
APT::Architectures { "$debarch"; };
APT::Get::List-Cleanup "false";
CONF
apt_priv=(-c "$adir/apt.conf"
	  -o Dir::Etc::sourcelist="$adir/sources.list"
	  -o Dir::Etc::sourceparts=/dev/null
	  -o Dir::State::Lists="$adir/lists"
	  -o Dir::State::status="$adir/status"
	  -o Dir::Cache="$adir/cache")

step "apt ($debarch, private config): fetching ${#pkgs[@]} packages for the $name guest"
if [ -z "$(find "$adir/updated" -mmin -1440 2>/dev/null)" ]; then
	apt-get "${apt_priv[@]}" update -q >"$adir/update.log" 2>&1 ||
		die "apt-get update ($name) failed, see $adir/update.log"
	touch "$adir/updated"
fi
(cd "$dl" && apt-get "${apt_priv[@]}" download "${pkgs[@]}" >"$adir/download.log" 2>&1) ||
	die "apt-get download ($name) failed, see $adir/download.log"

tmp=$(mktemp -d "$root.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for p in "${pkgs[@]}"; do
	# the newest downloaded version of each package
	deb=$(find "$dl" -maxdepth 1 -name "${p}_*_$debarch.deb" -printf '%f\n' |
	      sort -V | tail -n 1)
	[ -n "$deb" ] || die "no $debarch .deb of $p in $dl"
	dpkg-deb -x "$dl/$deb" "$tmp"
	echo "$deb" >>"$tmp/.debs"
done
# Packages that ship merged-/usr paths only (unstable's): the links
# base-files would make, so that /bin/... and the interpreter /lib/ld-...
# resolve inside the tree.
for d in bin sbin lib; do
	[ -e "$tmp/$d" ] || [ ! -d "$tmp/usr/$d" ] || ln -s "usr/$d" "$tmp/$d"
done
{ echo "$want"; cat "$tmp/.debs"; } >"$tmp/.packages"
rm -f "$tmp/.debs"
chmod 755 "$tmp"
rm -rf "$root"
mv "$tmp" "$root"
trap - EXIT
step "$name guest packages in $root ($(du -sh "$root" | cut -f1))"
