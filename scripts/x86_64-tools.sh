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
# The packages come from bookworm (main and updates of
# build/apt/sources.list) through scripts/fetch-debs.sh's private apt
# setup under build/apt/x86_64/; the machine's apt and dpkg configuration
# are not touched.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# trace-cmd and, after it, its libraries (libc6 is the host's)
pkgs=(trace-cmd libtracefs1 libtraceevent1 libtraceevent1-plugin libzstd1)
root=$BUILD/x86_64-tools

"$top/scripts/fetch-debs.sh" x86_64 amd64 "$BUILD/apt/sources.list" \
	'bookworm(-updates)?' "$root" "${pkgs[@]}"
# every library trace-cmd needs is in the tree or on the host
miss=$(LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu ldd "$root/usr/bin/trace-cmd" |
	grep 'not found' || true)
[ -z "$miss" ] || die "trace-cmd needs libraries none of ${pkgs[*]} has: $miss"
