#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# churn.sh [--secs N] [VARIANT...]   (default: 300 s; stock shadow)
#
# Registry churn under load, per kernel (issue #15): each variant's guest
# runs, for N seconds, the ftrace-ops sample loaded and unloaded with a few
# relevant and irrelevant ops, every direct-call sample loaded, kept a
# second and unloaded, random filter / notrace / tracer / instance /
# kprobe changes (each one timed) and a syscall loop, all at once
# (scripts/guest/init, mode churn), with rcupdate.rcu_task_stall_timeout
# at 60 seconds.  Then every loop must stop within 120 s.  Prints, per
# kernel: the cycles each loop made, the longest registry operation, the
# loops left stuck (with the blocked tasks' kernel stacks in the log),
# RCU-tasks stall reports, warnings and oopses.  The guests run side by
# side, one core each; the kernels must be built
# (scripts/build-kernel.sh VARIANT).  Last line: "N passed, N failed",
# where a kernel passes if nothing got stuck and nothing oopsed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

secs=300
variants=()
while [ $# -gt 0 ]; do
	case $1 in
	--secs) secs=$2; shift ;;
	-*) die "unknown option $1" ;;
	*) variants+=("$1") ;;
	esac
	shift
done
[ ${#variants[@]} -gt 0 ] || variants=(stock shadow)
arch_vars "$RFT_ARCH"
atag=
[ "$RFT_ARCH" = x86_64 ] || atag=$RFT_ARCH-

pids=()
for v in "${variants[@]}"; do
	out=$BUILD/out-$RFT_ARCH-$v
	hz=$(sed -n 's/^CONFIG_HZ=//p' "$out/.config" 2>/dev/null)
	[ -n "$hz" ] || die "no kernel in $out: run scripts/build-kernel.sh $v"
	log=$BUILD/churn-$atag$v.log
	step "churn on $v for $secs s (log: $log)"
	RFT_LOG=$log RFT_TIMEOUT=$((secs + 900)) "$top/scripts/run-guest.sh" "$v" churn \
		rft.secs="$secs" rcupdate.rcu_task_stall_timeout=$((60 * hz)) \
		>/dev/null 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p"
done

passed=0 failed=0
printf '\n%-8s %10s %10s %10s %8s %7s %7s %7s %5s %5s\n' kernel ops-cycles direct reg-ops reg-max-ms stuck stalls slow-gp warn bugs
for v in "${variants[@]}"; do
	log=$BUILD/churn-$atag$v.log
	get() { tr -d '\r' <"$log" | sed -n "s/^@@RFT CHURN .*$1=\([^ ]*\).*/\1/p" | tail -n 1; }
	ops=$(get ops_module_cycles) direct=$(get direct_module_cycles)
	reg=$(get registry_ops) regmax=$(get registry_max_ms)
	stuck=$(get stuck_loops) stalls=$(get rcu_tasks_stalls)
	slow=$(get rcu_tasks_slow_gp) warn=$(get warnings) bugs=$(get bugs)
	done_line=$(tr -d '\r' <"$log" | grep -a -c '^@@RFT DONE ')
	if [ "$done_line" -ge 1 ]; then
		printf '%-8s %10s %10s %10s %8s %7s %7s %7s %5s %5s\n' "$v" "${ops:--}" "${direct:--}" \
			"${reg:--}" "${regmax:--}" "${stuck:--}" "${stalls:--}" "${slow:--}" "${warn:--}" "${bugs:--}"
	else
		# the guest never reported: it froze (killed at the timeout) or died
		printf '%-8s %s\n' "$v" "no report: the guest froze or died (see $log)"
	fi
	if [ "$done_line" -ge 1 ] && [ "${stuck:-1}" = 0 ] && [ "${bugs:-1}" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
