#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# shell.sh [rust|shadow|stock]: a root shell in the booted guest, tracefs at
# /sys/kernel/tracing, the Rust core's counters in /sys/kernel/debug/rftrace.
# Leave with "poweroff -f" (or C-a x).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
variant=${1:-rust}
arch_vars "$RFT_ARCH"	# RFT_ARCH=arm64: the arm64 guest
[ -f "$BUILD/out-$RFT_ARCH-$variant/$KIMAGE" ] ||
	"$top/scripts/build-kernel.sh" "$variant"
exec "$top/scripts/run-guest.sh" "$variant" shell
