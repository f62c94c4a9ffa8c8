#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh [rust|shadow|stock]
#
# The main job, end to end: install what is missing, fetch the kernel
# source, build Linux 7.2 with the Rust ftrace core, boot it under QEMU,
# switch the function tracer on and off, and show a slice of the trace,
# enabled_functions and the Rust core's counters.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
variant=${1:-rust}

"$top/scripts/setup.sh"
"$top/scripts/build-kernel.sh" "$variant"
step "booting the $variant kernel (QEMU, TCG)"
log=$BUILD/guest-$variant-demo.log
RFT_LOG=$log "$top/scripts/run-guest.sh" "$variant" demo
step "console log: $log"
