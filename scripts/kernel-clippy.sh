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
out=$BUILD/out-$RFT_ARCH-$variant
cmdfile=$out/kernel/trace/rftrace/rust/.rftrace.o.cmd
[ -f "$cmdfile" ] || die "no kernel build in $out (scripts/build-kernel.sh $variant)"
command -v clippy-driver >/dev/null || die "no clippy-driver (rustup component add clippy)"

work=$BUILD/clippy-$RFT_ARCH
rm -rf "$work"
mkdir -p "$work"
cmd=$(sed -n 's/^savedcmd_kernel\/trace\/rftrace\/rust\/rftrace.o := //p' "$cmdfile")
src=$(sed -n 's/^source_kernel\/trace\/rftrace\/rust\/rftrace.o := //p' "$cmdfile")
case " $cmd " in *" rustc "*) ;; *) die "no rustc in the build's command" ;; esac
cmd=${cmd/ rustc / clippy-driver }
cmd=${cmd//"$src"/"$top/rust/rftrace.rs"}
cmd=${cmd//--out-dir kernel\/trace\/rftrace\/rust\//--out-dir "$work/"}
cmd=${cmd//--emit=dep-info=kernel\/trace\/rftrace\/rust\/.rftrace.o.d/--emit=dep-info="$work/x.d"}
cmd=${cmd//--emit=obj=kernel\/trace\/rftrace\/rust\/rftrace.o/--emit=obj="$work/rftrace.o"}
log=$work/clippy.log
(cd "$out" && RUSTC_BOOTSTRAP=1 eval "$cmd -D warnings") >"$log" 2>&1
rc=$?
cat "$log"
# rustc's closing "error: aborting due to N previous errors" is not one.
n=$(grep '^error' "$log" | grep -vc '^error: aborting' || true)
echo "kernel clippy: $n warnings"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ]
