#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-bench.sh [--runs N] [--kprobes N] [--out FILE] [VARIANT...]
#              (default: --runs 1 --kprobes 200 stock-bpf rust-bpf)
#
# What attaching BPF to many functions at once costs, stock and the Rust
# core side by side in one run: the kernel's own attach benchmarks of
# test_progs (scripts/bpf-progs.sh), kprobe_multi_bench_attach (a
# kprobe.multi link, through fprobe, on every function it can attach to,
# in vmlinux and then in modules) and tracing_multi_bench_attach (a
# tracing_multi link of fentry programs), then N kprobe events on ftrace
# sites (default 200) added one at a time, enabled and disabled as a
# group and removed one at a time (the guest's bpf mode, rft.kprobes).
# Each guest runs under QEMU's instruction counter as scripts/bench.sh
# --icount does (-icount shift=0,align=off,sleep=off: one guest
# nanosecond is one guest instruction, and an idle guest jumps to its
# next timer), so the times printed in the guest are guest instructions
# plus the timer steps of waits (grace periods), whatever the host does;
# the host's wall time of each boot is printed beside them.  N runs per kernel (--runs, default 1), one after the other.
#
# Prints a table (rows: benchmark, kernel; columns: functions, attach and
# detach in millions of guest instructions) and writes it to FILE (default
# build/bpf-bench.txt) with the machine and the kernels.  A benchmark: it
# asserts nothing about speed; it fails only if a guest does not finish
# or a figure is missing.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

runs=1 out= kprobes=200
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--kprobes) kprobes=$2; shift 2 ;;
	-h|--help) sed -n '3,26p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
# rust-bpf: the Rust core without the shadow build's checks against C
[ $# -gt 0 ] || set -- stock-bpf rust-bpf
out=${out:-$BUILD/bpf-bench.txt}
benches="kprobe_multi_bench_attach tracing_multi_bench_attach"

# the runner of the test set (bpf_test_set holds both benchmarks)
"$top/scripts/bpf-progs.sh" "$@" || die "the BPF benchmarks did not build"
rows=$BUILD/bpf-bench.rows
: >"$rows"
fail=0
for v in "$@"; do
	for r in $(seq 1 "$runs"); do
		log=$BUILD/guest-$RFT_ARCH-$v-bpf-bench-$r.log
		step "guest: $benches on $v under -icount shift=0,sleep=off, run $r (log: $log)"
		t0=$(date +%s)
		RFT_INITRD_EXTRA=$BUILD/bpf-$RFT_ARCH/bundle-$v.cpio RFT_TIMEOUT=${RFT_TIMEOUT:-3600} \
			RFT_QEMU_ARGS="-icount shift=0,align=off,sleep=off" RFT_LOG=$log \
			"$top/scripts/run-guest.sh" "$v" bpf "rft.bpf=${benches// /,}" rft.bpfopt=-v \
			"rft.kprobes=$kprobes" \
			>/dev/null 2>&1
		rc=$?
		wall=$(( $(date +%s) - t0 ))
		# each benchmark prints "F: found N functions", "F: attached in
		# S s", "F: detached in S s", then its result line "#N/M test/sub:OK"
		# (kprobe_multi_bench_attach has kernel and modules twice: by
		# symbols, then by addresses; #1 and #2)
		tr -d '\r' <"$log" | awk -v v="$v" -v r="$r" -v wall="$wall" '
			/: found [0-9]+ functions$/ { n = $(NF - 1) }
			/: attached in / { a = $NF; sub(/s$/, "", a) }
			/: detached in / { d = $NF; sub(/s$/, "", d) }
			/^#[0-9]+(\/[0-9]+)?[ \t]/ && n != "" {
				name = $2; sub(/:[A-Z]+$/, "", name)
				k[name]++
				printf "%s#%d %s %s %s %s %s %s\n", name, k[name], v, r, n, a, d, wall
				n = ""
			}
			# "@@RFT BPF-KPROBES n=N add=US enable=US disable=US remove=US"
			/^@@RFT BPF-KPROBES / {
				for (i = 3; i <= NF; i++) { split($i, kv, "="); k[kv[1]] = kv[2] }
				printf "kprobe_events/add+remove#1 %s %s %s %.6f %.6f %s\n", v, r, k["n"], k["add"] / 1e6, k["remove"] / 1e6, wall
				printf "kprobe_events/enable+disable#1 %s %s %s %.6f %.6f %s\n", v, r, k["n"], k["enable"] / 1e6, k["disable"] / 1e6, wall
			}' >>"$rows"
		got=$(awk -v v="$v" -v r="$r" '$2 == v && $3 == r && $5 != "" && $6 != ""' "$rows" | wc -l)
		if [ "$got" -lt 7 ]; then
			echo "$v run $r: $got of 7 benchmark figures printed (rc=$rc, log: $log)"
			fail=$((fail + 1))
		fi
	done
done
{
	echo "# BPF attach and detach at scale: scripts/bpf-bench.sh --runs $runs $*"
	echo "# host: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); guest: x86_64 TCG -icount shift=0,align=off,sleep=off, -smp ${RFT_SMP:-2}"
	echo "# kernels: $* (scripts/build-kernel.sh: the test configuration with BPF; kernel $(sed -n 's/^@@RFT BOOTED \([^ ]*\).*/\1/p' "$log" | tr -d '\r' | head -n 1))"
	echo "# columns: benchmark, kernel, run, functions, attach and detach (guest ms: millions of guest instructions, with timer steps), host wall seconds of the boot"
	sort -s -k1,1 "$rows" |
	awk '{ printf "%-38s %-10s %s %8s %10.1f %10.1f %6s\n", $1, $2, $3, $4, $5 * 1000, $6 * 1000, $7 }'
} | tee "$out"
step "results: $out"
echo "$(( $(wc -l <"$rows") )) figures, $fail missing"
[ "$fail" = 0 ]
