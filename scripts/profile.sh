#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# profile.sh [--what sysctl|listing|tracer|kprobe] [--reps N] [--filter N] [--module NAME]
#            [--out DIR] VARIANT...
#
# Where the guest instructions of one operation go, function by function,
# for each x86_64 VARIANT (built already), from QEMU's TCG plugin
# tools/tbcount (built here with the host's cc):
#
#   sysctl   with the function tracer on, N times: ftrace_enabled 0 then 1
#            (the update pass nearly alone; windows from the entry of
#            ftrace_enable_sysctl to the next syscall entry, "off" and "on"
#            counted apart)
#   listing  with the function tracer on, N reads of enabled_functions
#            (windows from seq_read_iter to the next syscall entry)
#   tracer   N times: the function tracer on, then off (the bench's
#            whole-table rows without the listing; windows from
#            tracing_set_trace_write to the next syscall entry, "on" and
#            "off" counted apart)
#   kprobe   N times: a kprobe event on vfs_read's ftrace site enabled,
#            then disabled (the kprobe armed and disarmed through ftrace;
#            windows from event_enable_write, "on" and "off" apart)
#
# scripts/profile-report.py --blocks FUNCTION VARIANT DIR/VARIANT.tbcount
# prints one function's blocks and their counts.
#
# --filter N: before the loop, the first N functions of
# available_filter_functions go into set_ftrace_filter (the bench's
# 1000-function and one-function rows: --what tracer --filter 1000 or 1).
# --module NAME: the module is loaded before the loop, and stays
# untraced: rftrace_many (selftests/modules, on the stock and rust
# variants) adds 40,000 records to the ~22,000 of the test kernel.
#
# Each guest boots in shell mode with the commands piped in; the counts are
# in DIR/VARIANT.tbcount, and scripts/profile-report.py prints the table of
# the first two variants side by side (functions sorted by the difference).
# Counts are exact guest instruction counts of the blocks run inside the
# windows, so the two kernels can be compared function by function; the
# function tracer's own work on interrupts inside a window is counted too.
#
#   scripts/profile.sh --what sysctl --reps 10 stock rust
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

what=sysctl reps=10 out=$BUILD/profile filter=0 module=
while [ $# -gt 0 ]; do
	case $1 in
	--what) what=$2; shift ;;
	--reps) reps=$2; shift ;;
	--filter) filter=$2; shift ;;
	--module) module=$2; shift ;;
	--out) out=$2; shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || die "usage: profile.sh [--what sysctl|listing|tracer|kprobe] [--reps N] [--filter N] [--module NAME] [--out DIR] VARIANT..."
case $filter in *[!0-9]*) die "--filter: a number" ;; esac
[ "$RFT_ARCH" = x86_64 ] || die "profile.sh: x86_64 only"
mkdir -p "$out"
plugin=$BUILD/tbcount.so
if [ ! -f "$plugin" ] || [ "$top/tools/tbcount/tbcount.c" -nt "$plugin" ] ||
	[ "$top/tools/tbcount/qemu-plugin-api.h" -nt "$plugin" ]; then
	cc -O2 -Wall -shared -fPIC -o "$plugin" "$top/tools/tbcount/tbcount.c"
fi

case $what in
sysctl)
	arm_sym=ftrace_enable_sysctl
	loop="for i in \$(seq $reps); do echo 0 >/proc/sys/kernel/ftrace_enabled; echo 1 >/proc/sys/kernel/ftrace_enabled; done" ;;
listing)
	arm_sym=seq_read_iter
	loop="for i in \$(seq $reps); do wc -l <enabled_functions; done" ;;
tracer)
	arm_sym=tracing_set_trace_write
	loop="for i in \$(seq $reps); do echo function >current_tracer; echo nop >current_tracer; done" ;;
kprobe)
	arm_sym=event_enable_write
	loop="echo 'p:rftp vfs_read' >>kprobe_events; grep -q 'vfs_read.*FTRACE' ../debug/kprobes/list 2>/dev/null || grep -q 'vfs_read.*FTRACE' /sys/kernel/debug/kprobes/list || echo PROFILE-NOT-FTRACE; for i in \$(seq $reps); do echo 1 >events/kprobes/rftp/enable; echo 0 >events/kprobes/rftp/enable; done; echo '-:rftp' >>kprobe_events" ;;
*) die "unknown --what $what" ;;
esac

for v in "$@"; do
	vm=$BUILD/out-x86_64-$v/vmlinux
	[ -f "$vm" ] || die "no $vm: build it with scripts/build-kernel.sh $v"
	arm=$(nm "$vm" | awk -v s="$arm_sym" '$3 == s { print $1 }')
	disarm=$(nm "$vm" | awk '$3 == "do_syscall_64" { print $1 }')
	[ -n "$arm" ] && [ -n "$disarm" ] || die "$vm: no $arm_sym or do_syscall_64"
	start="echo function >current_tracer;" stop="echo nop >current_tracer;"
	case $what in tracer|kprobe) start= stop= ;; esac
	pick=
	[ "$filter" -gt 0 ] && pick="head -n $filter available_filter_functions | cut -d' ' -f1 >set_ftrace_filter;"
	load=
	[ -n "$module" ] && load="modprobe $module || echo PROFILE-NO-MODULE;"
	cmds="$load cd /sys/kernel/tracing; echo 0 >tracing_on; $pick $start $loop; $stop grep -c . available_filter_functions; echo PROFILE-DONE; poweroff -f"
	step "profile: $v ($what, $reps times)"
	rm -f "$out/$v.tbcount"
	# The shell reads the commands once it is up (boot: under a minute);
	# its input stays open until the plugin has written the counts (at
	# the guest's exit), or 10 minutes.
	(sleep "${RFT_BOOTWAIT:-60}"; printf '%s\n' "$cmds"
	 for _ in $(seq 300); do [ -s "$out/$v.tbcount" ] && break; sleep 2; done) |
		RFT_QEMU_ARGS="-plugin $plugin,out=$out/$v.tbcount,arm=$arm,disarm=$disarm" \
		RFT_TIMEOUT=900 timeout 900 "$top/scripts/run-guest.sh" "$v" shell \
		>"$out/$v.log" 2>&1 || true
	grep -q PROFILE-DONE "$out/$v.log" || die "$v: the guest did not finish (log: $out/$v.log)"
	# The guest's echo of the command line holds the words too: a line
	# of its own is the shell's answer.
	! grep -q '^PROFILE-NO-MODULE' "$out/$v.log" || die "$v: no module $module (log: $out/$v.log)"
	! grep -q '^PROFILE-NOT-FTRACE' "$out/$v.log" || die "$v: the kprobe is not on the ftrace site (log: $out/$v.log)"
	[ -s "$out/$v.tbcount" ] || die "$v: no counts written"
done
if [ $# -ge 2 ]; then
	python3 "$top/scripts/profile-report.py" --slots "$what" \
		"$1" "$out/$1.tbcount" "$2" "$out/$2.tbcount" | tee "$out/report.txt"
fi
