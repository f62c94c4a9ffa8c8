#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [--reps N] [--calls N] [--rows LIST] [--out FILE] [--no-build]
#
# The stock kernel and the Rust kernel (variant "rust", no shadow check),
# same tree and config, booted alternately REPS times each in the guest's
# bench mode (scripts/guest/init):
#   - per-call overhead: samples/ftrace/ftrace-ops, rows relevant:irrelevant
#     0:0 1:0 1:1 1:2 1:10 1:100 2:0 10:0 100:0, with and without saved regs
#   - patching latency: the function tracer on/off over every traceable
#     function and over a 1000-function filter
#   - boot-time record setup and table size (dyn_ftrace_total_info)
# Writes a machine-readable JSON file (default build/bench/results.json)
# with machine, CPU model, accelerator, kernel and config, and prints a
# table of medians, spread and Rust/C ratios.
#
# These are TCG figures (no usable KVM here): absolute times are those of
# an emulator; compare the ratios of runs that alternate in one session.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

reps=3 calls=100000 rows= out=$BUILD/bench/results.json build=1
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift ;;
	--calls) calls=$2; shift ;;
	--rows) rows=$2; shift ;;
	--out) out=$2; shift ;;
	--no-build) build=0 ;;
	*) die "unknown option $1" ;;
	esac
	shift
done

variants=(stock rust)
if [ $build = 1 ]; then
	"$top/scripts/setup.sh" >/dev/null
	for v in "${variants[@]}"; do
		"$top/scripts/build-kernel.sh" "$v"
	done
fi

dir=$(dirname "$out")
mkdir -p "$dir/logs"
extra=(rft.calls="$calls")
[ -n "$rows" ] && extra+=(rft.rows="$rows")
for rep in $(seq 1 "$reps"); do
	for v in "${variants[@]}"; do
		log=$dir/logs/$v-$rep.log
		step "bench: $v kernel, run $rep of $reps"
		RFT_LOG=$log RFT_TIMEOUT=3600 "$top/scripts/run-guest.sh" "$v" bench \
			"${extra[@]}" >/dev/null 2>&1 ||
			die "bench boot of $v failed, see $log"
	done
done

python3 "$top/scripts/bench-report.py" --dir "$dir" --out "$out" \
	--reps "$reps" --calls "$calls" --config "$top/configs/x86_64.config" \
	--kernel "$(cat "$SRC/.debian-version" 2>/dev/null || echo unknown)"
