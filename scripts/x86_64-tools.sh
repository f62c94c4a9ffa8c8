#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# x86_64-tools.sh
#
# Fetch Debian bookworm's trace-cmd and the libraries it needs that the
# host may not have (libtracefs, libtraceevent and its plugins, libzstd)
# and unpack them into build/x86_64-tools/, for scripts/mkinitramfs.sh,
# which copies trace-cmd into the x86_64 guest (with the host's perf) for
# selftests/rftrace/trace-cmd.tc and perf-ftrace.tc.  trace-cmd is not
# installed on the host: the guest's C library is the host's, so the
# programs of the unpacked tree run there and in the guest.
# Idempotent: nothing is fetched when the unpacked tree matches the
# package list.
#
# The packages come through a private apt setup under build/apt/x86_64/:
# its own sources list (bookworm's lines of build/apt/sources.list,
# written by scripts/setup.sh), lists, cache and an empty dpkg status.
# The machine's apt and dpkg configuration are not touched: the .debs are
# only downloaded and unpacked with dpkg-deb -x.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# trace-cmd and, after it, its libraries (libc6 is the host's)
pkgs=(trace-cmd libtracefs1 libtraceevent1 libtraceevent1-plugin libzstd1)

root=$BUILD/x86_64-tools
adir=$BUILD/apt/x86_64
dl=$BUILD/dl/x86_64
stamp=$root/.packages

want="v1 ${pkgs[*]}"
if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$want" ]; then
	exit 0
fi

mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial" "$dl"
# one fetch and unpack at a time (two initramfs builds may call this)
exec 9>"$adir/lock"
flock 9
if [ -f "$stamp" ] && [ "$(head -n 1 "$stamp")" = "$want" ]; then
	exit 0
fi

[ -f "$BUILD/apt/sources.list" ] ||
	die "no $BUILD/apt/sources.list: run scripts/setup.sh first"
# bookworm main and updates from the mirror setup.sh found: the host's
# release, so that the programs run with the host's C library
grep -E '^deb .* bookworm(-updates)? main' "$BUILD/apt/sources.list" >"$adir/sources.list"
[ -s "$adir/sources.list" ] || die "no bookworm lines in $BUILD/apt/sources.list"
: >"$adir/status"
apt_x86=(-o APT::Architecture=amd64
	 -o Dir::Etc::sourcelist="$adir/sources.list"
	 -o Dir::Etc::sourceparts=/dev/null
	 -o Dir::State::Lists="$adir/lists"
	 -o Dir::State::status="$adir/status"
	 -o Dir::Cache="$adir/cache"
	 -o APT::Get::List-Cleanup=0)

step "apt (private config): fetching ${pkgs[*]} for the x86_64 guest"
if [ -z "$(find "$adir/updated" -mmin -1440 2>/dev/null)" ]; then
	apt-get "${apt_x86[@]}" update -q >"$adir/update.log" 2>&1 ||
		die "apt-get update failed, see $adir/update.log"
	touch "$adir/updated"
fi
(cd "$dl" && apt-get "${apt_x86[@]}" download "${pkgs[@]}" >"$adir/download.log" 2>&1) ||
	die "apt-get download failed, see $adir/download.log"

tmp=$(mktemp -d "$root.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for p in "${pkgs[@]}"; do
	# the newest downloaded version of each package
	deb=$(ls "$dl/${p}_"*_amd64.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$deb" ] || die "no amd64 .deb of $p in $dl"
	dpkg-deb -x "$deb" "$tmp"
	basename "$deb" >>"$tmp/.debs"
done
# every library trace-cmd needs is in the tree or on the host
miss=$(LD_LIBRARY_PATH=$tmp/usr/lib/x86_64-linux-gnu ldd "$tmp/usr/bin/trace-cmd" |
	grep 'not found' || true)
[ -z "$miss" ] || die "trace-cmd needs libraries none of ${pkgs[*]} has: $miss"
{ echo "$want"; cat "$tmp/.debs"; } >"$tmp/.packages"
rm -f "$tmp/.debs"
rm -rf "$root"
mv "$tmp" "$root"
trap - EXIT
step "x86_64 guest tools in $root ($(du -sh "$root" | cut -f1))"
