#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-test.sh [--arch ARCH] [--tests "A B ..."] [--out FILE] [--baseline FILE] VARIANT
#
# Run the kernel's own BPF selftests (test_progs, built from the tree by
# scripts/bpf-progs.sh) in the guest of VARIANT (bpf, stock-bpf, ... built
# by scripts/build-kernel.sh) and judge them against stock's results.
#
# The tests are those of bpf_test_set (scripts/lib.sh) unless --tests
# names others (then the baseline's other tests are not asked for).  Writes FILE (default build/bpf-ARCH-VARIANT.results): one
# line "<test> <RESULT>" for each test and subtest test_progs reports
# (OK is PASS, SKIP is UNSUPPORTED, FAIL is FAIL; a test of the list that
# printed nothing is NORESULT), then compares it with the baseline
# (default selftests/expected/ARCH-stock-bpf.results; none for the
# stock-bpf variant itself) by scripts/compare-results.sh: a test that
# passes on stock must pass here, a failure stock shares is listed as
# shared, not hidden.  The boot log must hold no kernel warning (WARN,
# BUG, lockdep, KASAN, KFENCE), and after the tests enabled_functions must
# hold what it held before them.  Last line: "N passed, N failed".
#
# Environment: RFT_TIMEOUT (default 3600 s for the whole run).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
cmdline="scripts/bpf-test.sh $*"

arch=$RFT_ARCH tests= out= base= subset=
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=$2; shift 2 ;;
	--tests) tests=$2; subset=--subset; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--baseline) base=$2; shift 2 ;;
	-h|--help) sed -n '3,22p' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
variant=${1:?usage: bpf-test.sh [--arch ARCH] [--tests LIST] [--out FILE] VARIANT}
export RFT_ARCH=$arch
arch_vars "$arch"
[ -n "$tests" ] || tests=$(bpf_test_set "$arch")
out=${out:-$BUILD/bpf-$arch-$variant.results}
if [ -z "$base" ] && [ "${variant#stock}" = "$variant" ]; then
	base=$top/selftests/expected/$arch-stock-bpf.results
fi

"$top/scripts/bpf-progs.sh" --arch "$arch" --tests "$tests" "$variant" ||
	die "the BPF selftests did not build"
bundle=$BUILD/bpf-$arch/bundle-$variant.cpio
log=$BUILD/guest-$arch-$variant-bpf.log
list=$(echo $tests | tr ' ' ',')
step "guest: test_progs -t $list on $arch/$variant (log: $log)"
t0=$(date +%s)
RFT_INITRD_EXTRA=$bundle RFT_TIMEOUT=${RFT_TIMEOUT:-3600} RFT_LOG=$log \
	"$top/scripts/run-guest.sh" "$variant" bpf "rft.bpf=$list" >/dev/null 2>&1
grc=$?
secs=$(( $(date +%s) - t0 ))

pass=0 fail=0
# the results: "#N name:RESULT" and "#N/M name/sub:RESULT" lines
tr -d '\r' <"$log" | sed -n '/^@@RFT BPF-BEGIN/,/^@@RFT BPF-END/p' |
	sed -n 's/^#[0-9][0-9/]*[[:space:]]\{1,\}\([^ :]*\):\(OK\|FAIL\|SKIP\)\( (.*)\)\{0,1\}$/\1 \2/p' |
	awk '{ r = $2 == "OK" ? "PASS" : ($2 == "SKIP" ? "UNSUPPORTED" : "FAIL"); print $1, r }' \
	>"$out.tmp"
for t in $tests; do
	# -t selects by substring: tracing_multi runs tracing_multi_test, ...
	grep -q "^[^ /]*$t[^ /]* " "$out.tmp" || echo "$t NORESULT" >>"$out.tmp"
done
{
	echo "# BPF selftests (test_progs $(date +%Y-%m-%d)): variant=$variant arch=$arch kernel=$(sed -n 's/^@@RFT BOOTED \([^ ]*\).*/\1/p' "$log" | tr -d '\r' | head -n 1)"
	echo "# command: $cmdline; guest rc=$grc, wall time $secs s"
	echo "# $(tr -d '\r' <"$log" | grep -a '^Summary:' | tail -n 1)"
	echo "# columns: <test or test/subtest> <RESULT>"
	LC_ALL=C sort -u "$out.tmp"
} >"$out"
rm -f "$out.tmp"
step "results: $out"
grep -a '^Summary:' "$log" | tr -d '\r' | tail -n 1

# the run itself: reached its end, no kernel warning, nothing left attached
if tr -d '\r' <"$log" | grep -aq '^@@RFT BPF-END'; then
	pass=$((pass + 1))
else
	echo "the guest did not finish the tests (rc=$grc, log: $log)"; fail=$((fail + 1))
fi
warn_re='WARNING:|BUG:|possible circular locking|KFENCE:|KASAN:|Oops|Unable to handle'
if grep -aE "$warn_re" "$log" >/dev/null; then
	grep -aE -A 12 "$warn_re" "$log" | head -60
	echo "kernel warnings during the BPF selftests (log: $log)"; fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
en=$(tr -d '\r' <"$log" | sed -n 's/^@@RFT BPF-ENABLED //p')
case $en in
"before="*" after="*)
	b=${en%% *}; a=${en##* }
	if [ "${b#before=}" = "${a#after=}" ]; then
		pass=$((pass + 1))
	else
		echo "enabled_functions: $en (the tests left sites enabled)"; fail=$((fail + 1))
	fi ;;
*) echo "no enabled_functions count after the tests"; fail=$((fail + 1)) ;;
esac

# the shadow build (the bpf variant): 0 differences from the C logic
st=$(tr -d '\r' <"$log" | sed -n 's/^@@RFT BPF-STATS //p')
if [ -n "$st" ]; then
	echo "core stats after the tests: $st"
	d=$(echo "$st" | tr ' ' '\n' | paste - - -d' ' |
	    awk '$1 == "shadow_differences" || $1 == "consistency_differences" { s += $2 } END { print s + 0 }')
	if [ "$d" = 0 ] && grep -q 'rftrace: shadow:\|rftrace: consistency:' "$log"; then d=1; fi
	if [ "$d" = 0 ]; then
		pass=$((pass + 1))
	else
		grep -a 'rftrace: shadow:\|rftrace: consistency:' "$log" | head -20
		echo "shadow/consistency differences: $d"; fail=$((fail + 1))
	fi
fi

if [ -n "$base" ]; then
	if [ -f "$base" ]; then
		# --tests: the baseline's other tests did not run here
		"$top/scripts/compare-results.sh" $subset "$base" "$out" >"$out.cmp" 2>&1
		cat "$out.cmp" | sed '$d'
		read -r p _ f _ <<<"$(tail -n 1 "$out.cmp")"
		pass=$((pass + p)) fail=$((fail + f))
		# failures stock shares: listed, not counted
		shared=$(awk 'NR == FNR { if ($2 == "FAIL") bad[$1] = 1; next }
			      $2 == "FAIL" && bad[$1] { print $1 }' "$base" "$out" | tr '\n' ' ')
		[ -n "$shared" ] && echo "failing on stock too (shared, not ours): $shared"
	else
		echo "no baseline $base: run scripts/bpf-test.sh --arch $arch --out $base stock-bpf"
		fail=$((fail + 1))
	fi
else
	# the stock run: every test must have reported
	nr=$(grep -c ' NORESULT$' "$out" || true)
	[ "$nr" = 0 ] || { echo "$nr tests printed no result"; fail=$((fail + 1)); }
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
