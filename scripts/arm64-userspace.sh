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
# The packages come from bookworm (main and updates of
# build/apt/sources.list) through scripts/fetch-debs.sh's private apt
# setup under build/apt/arm64/; the machine's apt and dpkg configuration
# are not touched.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

# The programs and, after them, the libraries they need (checked by
# scripts/mkinitramfs.sh: a missing library is an error that names it).
pkgs=(busybox-static dash bash gawk util-linux coreutils
      binutils-aarch64-linux-gnu
      libc6 libtinfo6 libreadline8 libgmp10 libmpfr6 libsigsegv2
      libsmartcols1 libctf-nobfd0 libbinutils zlib1g libzstd1)

exec "$top/scripts/fetch-debs.sh" arm64 arm64 "$BUILD/apt/sources.list" \
	'bookworm(-updates)?' "$BUILD/arm64-root" "${pkgs[@]}"
