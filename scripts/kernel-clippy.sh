#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-clippy.sh [VARIANT]: clippy on the kernel side, with the kernel's
# own lint set, as `make CLIPPY=1` would run it on the core's object:
# the exact rustc command of the last kernel build of VARIANT (default:
# debug on x86_64, shadow elsewhere; RFT_ARCH as everywhere; the kernel
# must be built) with clippy-driver in place of rustc and every warning
# an error.  The object goes to a scratch directory, so the build is left
# as it was.  Last line: "kernel clippy: N warnings".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
arch_vars "$RFT_ARCH"
variant=${1:-debug}
[ "$RFT_ARCH" = x86_64 ] || variant=${1:-shadow}
command -v clippy-driver >/dev/null || die "no clippy-driver (rustup component add clippy)"

work=$BUILD/clippy-$RFT_ARCH
rm -rf "$work"
mkdir -p "$work"
core_rustc_cmd "$variant" "$top/rust/rftrace.rs" "$work"
out=$core_out
case " $core_cmd " in *" rustc "*) ;; *) die "no rustc in the build's command" ;; esac
cmd=${core_cmd/ rustc / clippy-driver }
log=$work/clippy.log
(cd "$out" && RUSTC_BOOTSTRAP=1 eval "$cmd -D warnings") >"$log" 2>&1
rc=$?
cat "$log"
# rustc's closing "error: aborting due to N previous errors" is not one.
n=$(grep '^error' "$log" | grep -vc '^error: aborting' || true)
echo "kernel clippy: $n warnings"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ]
