#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-refusal-test.sh [VARIANT]   (default: bpf; x86_64)
#
# A BPF program's attach to a quarantined call site is refused, seen from
# BPF itself.  In the guest (shell mode, the VARIANT kernel: a bpf variant
# built by scripts/build-kernel.sh) rftrace_test_sites.ko corrupts the
# call site of __x64_sys_getsid on purpose (its corrupt parameter, with
# the address from /proc/kallsyms) and the function tracer is switched on
# for it, which quarantines that site; then Debian's bpftrace attaches a
# kfunc (fentry) probe to __x64_sys_getpgid, which must work, and one to
# __x64_sys_getsid, which must fail: the BPF trampoline's direct call is
# refused by the Rust core (-ENODEV, one kernel log line, one count of
# registry_direct_refused_quarantined).  Afterwards no function is left
# enabled and the kernel log holds no warning.  Last line: "N passed, N
# failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

v=${1:-bpf}
[ "$RFT_ARCH" = x86_64 ] || die "bpf-refusal-test.sh: x86_64 only (the test module's quarantine and direct calls are checked there)"
[ -e "$BUILD/out-$RFT_ARCH-$v/vmlinux" ] || die "no $BUILD/out-$RFT_ARCH-$v/vmlinux: scripts/build-kernel.sh $v first"
grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$BUILD/out-$RFT_ARCH-$v/.config" ||
	die "$v has no BTF: use a bpf variant"
dir=$BUILD/bpftrace
mkdir -p "$dir"
bpftrace_bundle "$dir"
log=$BUILD/guest-$RFT_ARCH-$v-bpf-refusal.log

# One line per command, no tab (the guest's shell would complete it).
cmds='M=rftrace_test_sites; S=/sys/kernel/debug/rftrace/stats; B=/rftrace/bpftrace/bpftrace; Q=/sys/kernel/debug/rftrace/quarantine; BAD=__x64_sys_getsid; GOOD=__x64_sys_getpgid; cd /sys/kernel/tracing
echo "BT-BEFORE $(wc -l < enabled_functions)"; modprobe $M; a=$(grep " $BAD\$" /proc/kallsyms | head -n 1 | cut -d" " -f1); echo "BT-ADDR $a"; echo 0x$a > /sys/module/$M/parameters/corrupt && echo $BAD > set_ftrace_filter && echo function > current_tracer; echo nop > current_tracer; echo > set_ftrace_filter; echo "BT-QUARANTINE $(grep -c "^$BAD+" $Q)"
mkdir -p /sys/fs/bpf; mount -t bpf bpf /sys/fs/bpf; ulimit -l unlimited; r0=$(awk "\$1 == \"registry_direct_refused_quarantined\" { print \$2 }" $S)
timeout 300 $B -e "kfunc:$GOOD { @good = count(); } interval:s:2 { exit(); }" > /tmp/good.out 2>&1; echo "BT-GOOD rc=$?"; sed "s/^/BT-OUT-GOOD /" /tmp/good.out
timeout 300 $B -e "kfunc:$BAD { @bad = count(); } interval:s:2 { exit(); }" > /tmp/bad.out 2>&1; echo "BT-BAD rc=$?"; sed "s/^/BT-OUT-BAD /" /tmp/bad.out
echo "BT-REFUSED $(( $(awk "\$1 == \"registry_direct_refused_quarantined\" { print \$2 }" $S) - r0 ))"; dmesg | grep "rftrace: refusing a direct call" | sed "s/^.*rftrace: /BT-LOG /"; rmmod $M; echo "BT-AFTER $(wc -l < enabled_functions)"
echo BT-DONE; poweroff -f'
step "guest: bpftrace's kfunc probes at a traced and at a quarantined site ($v; log: $log)"
(sleep "${RFT_BOOTWAIT:-60}"; printf '%s\n' "$cmds"
 for _ in $(seq 450); do grep -q '^BT-DONE' "$log" 2>/dev/null && break; sleep 2; done) |
	RFT_INITRD_EXTRA=$dir/bundle.cpio RFT_MEM=3G RFT_TIMEOUT=1000 timeout 1000 \
	"$top/scripts/run-guest.sh" "$v" shell >"$log" 2>&1 || true
tr -d '\r' <"$log" >"$log.txt"
grep '^BT-' "$log.txt" | grep -v '^BT-OUT' | sed 's/^/  /'

pass=0 fail=0
check() { # what, then the command that must succeed
	local what=$1
	shift
	if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}
val() { sed -n "s/^$1 //p" "$log.txt" | head -n 1; }
check "the guest finished" grep -q '^BT-DONE' "$log.txt"
check "__x64_sys_getsid's site quarantined" [ "$(val BT-QUARANTINE)" = 1 ]
check "the kfunc probe on a traced site attached and ran" \
	grep -q '^BT-GOOD rc=0$' "$log.txt"
check "bpftrace said it attached the good probe" grep -q '^BT-OUT-GOOD Attaching' "$log.txt"
check "the kfunc probe on the quarantined site was refused" \
	grep -Eq '^BT-BAD rc=[1-9]' "$log.txt"
check "bpftrace said it could not attach it" grep -q '^BT-OUT-BAD ERROR: Error attaching probe' "$log.txt"
check "the refusal counted once" [ "$(val BT-REFUSED)" = 1 ]
check "one kernel log line for it" [ "$(grep -c '^BT-LOG refusing a direct call' "$log.txt")" = 1 ]
before=$(val BT-BEFORE) after=$(val BT-AFTER)
check "nothing left enabled (before: ${before:-?}, after: ${after:-?})" [ "${after:-none}" = "${before:-unknown}" ]
check "no kernel warning" bash -c "! grep -Eq 'WARNING:|BUG:|Oops|KASAN:|possible circular locking' '$log.txt'"
if [ $fail -gt 0 ]; then
	grep '^BT-OUT' "$log.txt" | head -20
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
