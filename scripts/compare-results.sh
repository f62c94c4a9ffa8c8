#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# compare-results.sh [--subset] [--ignore-warnings] EXPECTED ACTUAL
#
# Compare two results files of scripts/ftracetest.sh (lines
# "<test> <RESULT> [<seconds>] [warn=N]"; '#' lines are comments).
# Order, best first: PASS > XFAIL = UNSUPPORTED = UNTESTED > UNRESOLVED >
# FAIL = UNDEFINED > NORESULT = HANG = OOPS.
# A test is at parity if its ACTUAL result is not worse than EXPECTED (so a
# test passing in EXPECTED must pass) and it caused no kernel warning
# (warn=N) where EXPECTED had none.  A test missing from ACTUAL is a
# regression unless --subset; a test missing from EXPECTED is at parity if
# it is PASS, XFAIL, UNSUPPORTED or UNTESTED.
# Prints both summaries side by side, every difference, and as its last
# line "N passed, N failed" (failed = regressions); exits 1 on any.
set -euo pipefail

subset=0 nowarn=0
while [ $# -gt 0 ]; do
	case $1 in
	--subset) subset=1; shift ;;
	--ignore-warnings) nowarn=1; shift ;;
	-h|--help) sed -n '3,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
	*) break ;;
	esac
done
[ $# = 2 ] || { echo "usage: compare-results.sh [--subset] [--ignore-warnings] EXPECTED ACTUAL" >&2; exit 2; }
exp=$1 act=$2
[ -f "$exp" ] || { echo "no such file: $exp" >&2; exit 2; }
[ -f "$act" ] || { echo "no such file: $act" >&2; exit 2; }

awk -v subset=$subset -v nowarn=$nowarn -v expname="$exp" -v actname="$act" '
function rank(r) {
	if (r == "PASS") return 0
	if (r == "XFAIL" || r == "UNSUPPORTED" || r == "UNTESTED") return 1
	if (r == "UNRESOLVED") return 2
	if (r == "FAIL" || r == "UNDEFINED") return 3
	return 4
}
function warns(i,   k, w) {
	w = 0
	for (k = 3; k <= NF; k++) if ($k ~ /^warn=/) { w = substr($k, 6) + 0 }
	return w
}
/^[ \t]*(#|$)/ { next }
FNR == NR { e[$1] = $2; ew[$1] = warns(); eorder[++ne] = $1; ec[$2]++; next }
{ a[$1] = $2; aw[$1] = warns(); aorder[++na] = $1; ac[$2]++ }
END {
	split("PASS XFAIL UNSUPPORTED UNTESTED UNRESOLVED FAIL UNDEFINED NORESULT HANG OOPS", names, " ")
	printf "%-12s %10s %10s\n", "result", "expected", "actual"
	for (i = 1; i <= 10; i++) {
		n = names[i]
		if (ec[n] || ac[n]) printf "%-12s %10d %10d\n", n, ec[n], ac[n]
	}
	printf "%-12s %10d %10d\n", "total", ne, na
	print ""
	pass = fail = 0
	for (i = 1; i <= ne; i++) {
		t = eorder[i]
		if (!(t in a)) {
			if (subset) continue
			printf "REGRESSION  %-55s %s -> (not run)\n", t, e[t]; fail++; continue
		}
		bad = rank(a[t]) > rank(e[t])
		wbad = !nowarn && aw[t] > 0 && ew[t] == 0
		if (bad || wbad) {
			printf "REGRESSION  %-55s %s -> %s%s\n", t, e[t], a[t], (wbad ? " (kernel warnings: " aw[t] ")" : "")
			fail++
		} else {
			if (rank(a[t]) < rank(e[t]))
				printf "better      %-55s %s -> %s\n", t, e[t], a[t]
			else if (a[t] != e[t])
				printf "changed     %-55s %s -> %s\n", t, e[t], a[t]
			if (aw[t] > 0)
				printf "warnings    %-55s %d (expected %d)\n", t, aw[t], ew[t]
			pass++
		}
	}
	for (i = 1; i <= na; i++) {
		t = aorder[i]
		if (t in e) continue
		if (rank(a[t]) <= 1) { printf "new         %-55s %s\n", t, a[t]; pass++ }
		else { printf "REGRESSION  %-55s (new) %s\n", t, a[t]; fail++ }
	}
	printf "%d passed, %d failed\n", pass, fail
	exit (fail > 0)
}' "$exp" "$act"
