#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpftrace-test.sh [--ids A,B,C] [--out FILE] [VARIANT...]   (default: stock-bpf bpf)
#
# bpftrace, a real BPF client, beside ftrace's own tracers, on each
# kernel VARIANT (x86_64 bpf variants, built by scripts/build-kernel.sh),
# one after the other in one run.  In the guest (scripts/guest/init, mode
# bpftrace) Debian's bpftrace attaches fentry and fexit programs (BPF
# trampolines: direct calls) and a kprobe to three system call functions
# while the function tracer, two instances with their own filters and a
# kprobe event trace them too, so each site holds a direct call and other
# ops at once, and an IPMODIFY ops (rftrace_ipmodify's hold) claims the
# getsid site before the trampolines and the getpgid site after them,
# which the fexit trampolines must share; then a fixed workload
# (selftests/bpftrace/getids.c) makes A getpriority, B getsid and C
# getpgid calls (default 1000,2000,3000).
#
# Each tool must count exactly what the workload made (the function
# tracer's entries in each buffer, the kprobe event's, each bpftrace map),
# and the same on every VARIANT; after every tool is detached,
# enabled_functions holds what it held before; no kernel warning; on the
# shadow build, 0 differences from the C logic.  Writes FILE (default
# build/bpftrace.results): one line "<variant> <tool> <function> <count>".
# Last line: "N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

ids=1000,2000,3000 out=
while [ $# -gt 0 ]; do
	case $1 in
	--ids) ids=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) sed -n '3,25p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- stock-bpf bpf
arch_vars "$RFT_ARCH"
[ "$RFT_ARCH" = x86_64 ] || die "bpftrace-test.sh: x86_64 only so far (the probes name x86_64's system call functions)"
[[ $ids =~ ^[0-9]+,[0-9]+,[0-9]+$ ]] || die "--ids wants A,B,C"
out=${out:-$BUILD/bpftrace.results}
IFS=, read -r na nb nc <<<"$ids"

# the guest's /rftrace/bpftrace: bpftrace with its libraries, the script
# and the workload
dir=$BUILD/bpftrace
mkdir -p "$dir"
gcc -O2 -static -Wall -o "$dir/getids" "$top/selftests/bpftrace/getids.c" ||
	die "getids did not build"
bpftrace_bundle "$dir" "$dir/getids" "$top/selftests/bpftrace/probes.bt"
step "bpftrace: $("$bt" --version), bundle $(du -h "$dir/bundle.cpio" | cut -f1)"

pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
: >"$out.tmp"
for v in "$@"; do
	[ -f "$BUILD/out-$RFT_ARCH-$v/$KIMAGE" ] || die "no $v kernel: scripts/build-kernel.sh $v"
	log=$BUILD/guest-$RFT_ARCH-$v-bpftrace.log
	step "guest: bpftrace beside the function tracer on $v (log: $log)"
	RFT_INITRD_EXTRA=$dir/bundle.cpio RFT_MEM=3G RFT_TIMEOUT=${RFT_TIMEOUT:-1200} RFT_LOG=$log \
		"$top/scripts/run-guest.sh" "$v" bpftrace "rft.ids=$ids" >/dev/null 2>&1
	rc=$?
	tr -d '\r' <"$log" | grep -a '^@@RFT BPFTRACE-SITE' | sed 's/^@@RFT BPFTRACE-SITE /  site: /'
	if [ $rc = 0 ] && tr -d '\r' <"$log" | grep -aq '^@@RFT BPFTRACE PASS'; then
		ok
	else
		bad "$v: the guest run did not finish (rc=$rc): $(tr -d '\r' <"$log" | grep -a '^@@RFT BPFTRACE FAIL' | head -n 1)"
		continue
	fi
	tr -d '\r' <"$log" | sed -n "s/^@@RFT BPFTRACE-COUNT /$v /p" >>"$out.tmp"
	# what each tool must have counted
	while read -r tool fn want; do
		got=$(awk -v v="$v" -v t="$tool" -v f="$fn" '$1 == v && $2 == t && $3 == f { print $4 }' "$out.tmp")
		if [ "$got" = "$want" ]; then ok; else bad "$v: $tool counted ${got:-nothing} $fn calls, the workload made $want"; fi
	done <<EOF
function-top getpriority $na
function-top getsid $nb
function-top getpgid $nc
function-rfta getpriority $na
function-rfta getsid $nb
function-rfta getpgid 0
function-rftb getpriority 0
function-rftb getsid $nb
function-rftb getpgid $nc
kprobe-event getpgid $nc
bpftrace-kfunc getpriority $na
bpftrace-kretfunc getsid $nb
bpftrace-kfunc getpgid $nc
bpftrace-kretfunc getpgid $nc
bpftrace-kprobe getpriority $na
ipmodify getsid $nb
ipmodify getpgid $nc
EOF
	en=$(tr -d '\r' <"$log" | sed -n 's/^@@RFT BPFTRACE-ENABLED //p')
	b=${en%% *} a=${en##* }
	if [ -n "$en" ] && [ "${b#before=}" = "${a#after=}" ]; then ok; else bad "$v: enabled_functions ${en:-not counted}"; fi
	if grep -aE 'WARNING:|BUG:|possible circular locking|KFENCE:|KASAN:|Oops' "$log" >/dev/null; then
		grep -aE -A 12 'WARNING:|BUG:|possible circular locking|KFENCE:|KASAN:|Oops' "$log" | head -40
		bad "$v: kernel warnings (log: $log)"
	else
		ok
	fi
	st=$(tr -d '\r' <"$log" | sed -n 's/^@@RFT BPFTRACE-STATS //p')
	if [ -n "$st" ]; then
		d=$(echo "$st" | tr ' ' '\n' | paste -d' ' - - |
		    awk '$1 == "shadow_differences" || $1 == "consistency_differences" { s += $2 } END { print s + 0 }')
		if [ "$d" = 0 ]; then ok; else bad "$v: $d shadow/consistency differences ($st)"; fi
	fi
done
# the same counts on every kernel
if [ $# -gt 1 ]; then
	diffs=$(awk '{ k = $2 " " $3; c[k] = c[k] " " $4 } END { for (k in c) print k, c[k] }' "$out.tmp" |
		awk '{ for (i = 4; i <= NF; i++) if ($i != $3) { print; break } }')
	if [ -z "$diffs" ]; then ok; else echo "$diffs"; bad "counts differ between $*"; fi
fi
{
	echo "# bpftrace beside ftrace's tracers: scripts/bpftrace-test.sh --ids $ids $*"
	echo "# bpftrace $("$bt" --version | awk '{print $2}') (Debian), kernel $(sed -n 's/^@@RFT BOOTED \([^ ]*\).*/\1/p' "$log" | tr -d '\r' | head -n 1), x86_64 guest under TCG"
	echo "# columns: <variant> <tool> <function> <count>"
	cat "$out.tmp"
} >"$out"
rm -f "$out.tmp"
step "results: $out"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
