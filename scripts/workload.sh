#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# workload.sh [--extra LIST] [--reads N] [--lists N] [--out FILE] [VARIANT...]
#             (default: --extra 0,50,200 --reads 3000 --lists 30; stock rust)
#
# What irrelevant ops cost a traced workload, per kernel: each variant's
# guest (scripts/guest/init, mode workload) times a fixed workload (N
# one-byte dd reads and writes, N ls of /sys) untraced, then with the top
# tracer and two instances tracing eight hot functions (vfs_read,
# vfs_write, ...), while 0, 50, 200 (--extra) more ops are registered that
# trace none of them (samples/ftrace/ftrace-ops, persist=1).  The guests
# run with QEMU's instruction counter (-icount shift=0: 1 guest ns = 1
# guest instruction), one after the other; the kernels must be built
# (scripts/build-kernel.sh VARIANT).  Prints a table of guest
# milliseconds (millions of instructions) per kernel and configuration,
# with each row's growth over the row without extra ops, and writes it
# to FILE (default build/workload/results.txt) with the machine, the
# kernels and the config.  A benchmark: it asserts nothing about speed;
# it fails only if a guest does not finish or a line is missing.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

extra=0,50,200 reads=3000 lists=30 out=
while [ $# -gt 0 ]; do
	case $1 in
	--extra) extra=$2; shift ;;
	--reads) reads=$2; shift ;;
	--lists) lists=$2; shift ;;
	--out) out=$2; shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(stock rust)
out=${out:-$BUILD/workload/results.txt}
dir=$(dirname "$out")
mkdir -p "$dir/logs"

for v in "${variants[@]}"; do
	"$top/scripts/mkinitramfs.sh" "$v" >/dev/null || die "initramfs of $v failed"
done
for v in "${variants[@]}"; do
	log=$dir/logs/$v.log
	step "workload: $v kernel"
	RFT_LOG=$log RFT_TIMEOUT=${RFT_TIMEOUT:-3600} RFT_NO_MKINITRAMFS=1 \
		RFT_QEMU_ARGS="${RFT_QEMU_ARGS:-} -icount shift=0,align=off,sleep=off" \
		"$top/scripts/run-guest.sh" "$v" workload rft.reads="$reads" \
		rft.lists="$lists" rft.extra="$extra" >/dev/null 2>&1 ||
		die "workload boot of $v failed, see $log"
done

{
	echo "# scripts/workload.sh --extra $extra --reads $reads --lists $lists ${variants[*]}"
	echo "# machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "# guests: QEMU TCG -icount shift=0 (1 guest us = 1000 guest instructions), config configs/$RFT_ARCH.config"
	echo "# commit: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "# kernel: $(cat "$SRC/.debian-version" 2>/dev/null || echo unknown)"
	hot=$(grep -a -o 'WORKLOAD hot=[^ ]*' "$dir/logs/${variants[0]}.log" | head -n 1 | cut -d= -f2)
	echo "# traced by the top tracer and two instances: $hot"
	echo "# extra ops trace tracee_irrelevant() of samples/ftrace/ftrace-ops only"
	printf '%-8s %-9s %6s %12s %8s\n' kernel config extra guest_ms growth
} >"$out"
rc=0
for v in "${variants[@]}"; do
	log=$dir/logs/$v.log
	base=
	while read -r config n us; do
		[ -n "$us" ] && [ "$us" -gt 0 ] || { rc=1; continue; }
		growth=-
		if [ "$config" = traced ]; then
			[ "$n" -eq 0 ] && base=$us
			[ -n "$base" ] && growth=$(awk -v a="$us" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
		fi
		printf '%-8s %-9s %6s %12s %8s\n' "$v" "$config" "$n" \
			"$(awk -v u="$us" 'BEGIN { printf "%.1f", u / 1000 }')" "$growth" >>"$out"
	done < <(grep -a -o 'WORKLOAD config=[a-z]* extra=[0-9]* us=[0-9]*' "$log" |
		sed 's/WORKLOAD config=\([a-z]*\) extra=\([0-9]*\) us=\([0-9]*\)/\1 \2 \3/')
	n=$(grep -a -c 'WORKLOAD config=' "$log" || true)
	want=$(( $(echo "$extra" | tr ',' '\n' | grep -c .) + 1 ))
	[ "$n" -eq "$want" ] || { echo "$v: $n of $want workload lines in $log" >&2; rc=1; }
	stats=$(grep -a -o 'WORKLOAD stats .*' "$log" | head -n 1 | tr -d '\r' || true)
	[ -n "$stats" ] && echo "# $v: ${stats#WORKLOAD stats }" >>"$out"
done
cat "$out"
[ $rc = 0 ] || die "some workload lines are missing"
