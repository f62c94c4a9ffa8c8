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
# scripts/fetch-debs.sh's private apt setup under build/apt/riscv64/; the
# machine's apt and dpkg configuration are not touched.
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

exec "$top/scripts/fetch-debs.sh" riscv64 riscv64 "$BUILD/apt/sid.list" \
	unstable "$BUILD/riscv64-root" "${pkgs[@]}"
