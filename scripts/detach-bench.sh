#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# detach-bench.sh [--runs R] [--ops "N ..."] [VARIANT ...]
#
# How long unregistering many dynamic ftrace_ops takes, one after another
# and all at once from their own threads, on each VARIANT kernel (default:
# stock rust; built already), in one run: the test module rftrace_detach
# (selftests/modules) registers N ops on one function of its own, keeps
# them called, unregisters them, and checks that no ops is called after
# its unregistration returned.  R runs of each case (default 3).
#
# Prints one line per case and run, then a table of the median detach
# time per variant in milliseconds of guest time (QEMU TCG).  Fails when a
# load fails, an ops is called after its unregistration returned (late),
# or no ops was called at all.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

runs=3
sizes="1 16 64"
variants=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?--runs wants a number}; shift 2 ;;
	--ops) sizes=${2:?--ops wants a list of sizes}; shift 2 ;;
	-h|--help) sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) variants+=("$1"); shift ;;
	esac
done
[ ${#variants[@]} -gt 0 ] || variants=(stock rust)
case $runs in ''|*[!0-9]*|0) die "--runs wants a positive number, not '$runs'" ;; esac
for n in $sizes; do
	case $n in ''|*[!0-9]*|0) die "--ops wants sizes 1..1024, not '$n'" ;; esac
	[ "$n" -le 1024 ] || die "--ops wants sizes 1..1024, not '$n'"
done
for v in "${variants[@]}"; do
	[ -e "$BUILD/out-$RFT_ARCH-$v/vmlinux" ] ||
		die "no $BUILD/out-$RFT_ARCH-$v/vmlinux: scripts/build-kernel.sh $v first"
done

res=$BUILD/detach-bench.txt
: >"$res"
for v in "${variants[@]}"; do
	out=$BUILD/detach-bench-$v.log
	# One line per command, no tab (the guest's shell would complete it).
	cmds="for r in \$(seq $runs); do for n in $sizes; do for c in 0 1; do if modprobe rftrace_detach nr_ops=\$n concurrent=\$c; then dmesg | grep 'rftrace_detach: ops=' | tail -n 1 | sed 's/^.*rftrace_detach: /DETACH /'; rmmod rftrace_detach; else echo \"DETACH-FAILED ops=\$n concurrent=\$c\"; dmesg | tail -n 5; fi; done; done; done
echo DETACH-DONE; poweroff -f"
	step "$v: $runs runs of ops $sizes, one after another and at once"
	(sleep "${RFT_BOOTWAIT:-60}"; printf '%s\n' "$cmds"
	 for _ in $(seq 900); do grep -q '^DETACH-DONE' "$out" 2>/dev/null && break; sleep 2; done) |
		RFT_TIMEOUT=1900 timeout 1900 "$top/scripts/run-guest.sh" "$v" shell >"$out" 2>&1 || true
	grep -q '^DETACH-DONE' "$out" || die "$v: the guest did not finish (log: $out)"
	if grep -q '^DETACH-FAILED' "$out"; then
		grep -A5 '^DETACH-FAILED' "$out"; die "$v: a load failed (log: $out)"
	fi
	grep '^DETACH ' "$out" | sed "s/^DETACH /$v /" | tee -a "$res"
done

# Each line must say late=0 err=0 and a nonzero call count.
bad=$(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	if (f["late"] != 0 || f["err"] != 0 || f["calls"] == 0) print }' "$res")
[ -z "$bad" ] || { echo "$bad"; die "an ops was called after its unregistration returned, or a case failed"; }
want=$(( ${#variants[@]} * runs * $(echo $sizes | wc -w) * 2 ))
got=$(wc -l <"$res")
[ "$got" -eq "$want" ] || die "$got result lines, $want expected (logs: $BUILD/detach-bench-*.log)"

echo
echo "median detach time (ms of guest time), $runs runs; machine: $(nproc) CPUs, QEMU TCG"
awk -v vs="${variants[*]}" '
	{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
	  k = $1 SUBSEP f["ops"] SUBSEP f["concurrent"]
	  n[k]++; t[k, n[k]] = f["detach_us"] / 1000; ops[f["ops"]] = 1 }
	function median(k,   i, j, m, a, x) {
		m = n[k]; for (i = 1; i <= m; i++) a[i] = t[k, i]
		for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		nv = split(vs, v, " ")
		printf "%-6s %-12s", "ops", "how"
		for (i = 1; i <= nv; i++) printf " %12s", v[i]
		printf "\n"
		no = asorti(ops, o, "@ind_num_asc")
		for (j = 1; j <= no; j++) for (c = 0; c <= 1; c++) {
			printf "%-6s %-12s", o[j], c ? "at once" : "in turn"
			for (i = 1; i <= nv; i++) printf " %12.1f", median(v[i] SUBSEP o[j] SUBSEP c)
			printf "\n"
		}
	}' "$res"
echo "lines: $res"
