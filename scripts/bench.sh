#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [--reps N] [--calls N] [--rows LIST] [--patch-reps N] [--icount]
#          [--variants LIST] [--out FILE] [--no-build]
#
# The stock kernel and the Rust kernel (variant "rust", no shadow check),
# same tree and config, booted alternately REPS times each in the guest's
# bench mode (scripts/guest/init):
#   - per-call overhead: samples/ftrace/ftrace-ops, rows relevant:irrelevant
#     0:0 1:0 1:1 1:2 1:10 1:100 2:0 10:0 100:0, with and without saved regs
#     (--rows 1:0,2:0 picks some)
#   - patching latency: the function tracer on/off over every traceable
#     function and over a 1000-function filter, PATCH_REPS times (default 3)
#   - registry latency: one function's ops registered and unregistered
#     (the tracer on and off with a one-function filter), and a started
#     ops' filter changed (vfs_* to sched_* and back), PATCH_REPS times
#   - boot-time record setup and table size (dyn_ftrace_total_info)
# Writes a machine-readable JSON file (default build/bench/results.json)
# with machine, CPU model, accelerator, clock, kernel and config, prints a
# table of medians, spread and Rust/C ratios, and checks that the file has
# every field (scripts/bench-report.py --check).
#
# --icount runs the guests with QEMU's instruction counter,
#   -icount shift=0,align=off,sleep=off
# (TCG only): the guest's clocks advance exactly 1 ns per executed guest
# instruction (over all vCPUs), and jump to the next timer deadline when
# every vCPU is idle, so the guest-side times become instruction counts
# that repeat from boot to boot.  Without it the times are TCG wall-clock
# figures (no usable KVM here): absolute times are those of an emulator;
# compare the ratios of runs that alternate in one session.  The harness
# passes nothing else accelerator-specific: RFT_QEMU_ARGS (e.g.
# "-accel kvm", if scripts/run-guest.sh is taught to use it) still applies.
#
# --variants LIST (default "stock,rust"): the kernels to boot, in this
# order; the Rust/C ratio is the last over the first.  A kernel of the
# project's older code, built with scripts/build-commit.sh COMMIT NAME, is
# one more name here (stock,NAME,rust: the three side by side).  The test suite
# runs this once on its shadow kernel at tiny sizes:
#   bench.sh --no-build --variants shadow --reps 1 --calls 100 --rows 1:0 \
#            --patch-reps 1 --icount --out build/bench-smoke/results.json
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

reps=3 calls=100000 rows= out=$BUILD/bench/results.json build=1
preps=3 icount=0 variants="stock,rust"
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--calls) calls=$2; shift ;;
	--rows) rows=$2; shift ;;
	--patch-reps) preps=$2; shift ;;
	--icount) icount=1 ;;
	--variants) variants=$2; shift ;;
	--out) out=$2; shift ;;
	--no-build) build=0 ;;
	*) die "unknown option $1" ;;
	esac
	shift
done

IFS=', ' read -r -a vlist <<<"$variants"
[ ${#vlist[@]} -ge 1 ] || die "no variants"
if [ $build = 1 ]; then
	"$top/scripts/setup.sh" >/dev/null
	for v in "${vlist[@]}"; do
		"$top/scripts/build-kernel.sh" "$v"
	done
fi

# The commit checked out now, before the boots (with --no-build, the
# kernels' own sources are whatever was built last: build them first).
commit=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$top" status --porcelain -- rust c include patches Kconfig Kbuild configs 2>/dev/null)" ]; then
	commit="$commit (with uncommitted changes to the kernel sources)"
fi

qargs=${RFT_QEMU_ARGS:-}
clock="guest clock (TSC), TCG wall-clock time"
if [ $icount = 1 ]; then
	qargs="$qargs -icount shift=0,align=off,sleep=off"
	clock="icount shift=0 (1 ns = 1 guest instruction)"
fi

dir=$(dirname "$out")
# logs of an earlier run in the same directory would be read as this one's
rm -rf "$dir/logs"
mkdir -p "$dir/logs"
extra=(rft.calls="$calls" rft.preps="$preps")
[ -n "$rows" ] && extra+=(rft.rows="$rows")
for v in "${vlist[@]}"; do
	"$top/scripts/mkinitramfs.sh" "$v" >/dev/null || die "initramfs of $v failed"
done
for rep in $(seq 1 "$reps"); do
	for v in "${vlist[@]}"; do
		log=$dir/logs/$v-$rep.log
		step "bench: $v kernel, run $rep of $reps"
		t0=$(date +%s)
		RFT_LOG=$log RFT_TIMEOUT=${RFT_TIMEOUT:-3600} RFT_NO_MKINITRAMFS=1 \
			RFT_QEMU_ARGS="$qargs" \
			"$top/scripts/run-guest.sh" "$v" bench "${extra[@]}" >/dev/null 2>&1 ||
			die "bench boot of $v failed, see $log"
		echo "$(( $(date +%s) - t0 ))" >"$dir/logs/$v-$rep.secs"
	done
done

python3 "$top/scripts/bench-report.py" --dir "$dir" --out "$out" \
	--variants "${vlist[*]}" --reps "$reps" --calls "$calls" --patch-reps "$preps" \
	--config "$top/configs/$RFT_ARCH.config" --clock "$clock" --qemu-args "$qargs" \
	--commit "$commit" --build "$BUILD" \
	--kernel "$(cat "$SRC/.debian-version" 2>/dev/null || echo unknown)"
python3 "$top/scripts/bench-report.py" --check "$out"
