#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools-compare.sh [--outdir DIR] [REFERENCE VARIANT...]
#
# trace-cmd and perf ftrace on two kernels: runs selftests/rftrace/
# trace-cmd.tc and perf-ftrace.tc (scripts/ftracetest.sh --selftests, one
# guest at a time) on the REFERENCE kernel and on each VARIANT (default:
# stock, then shadow), takes each test's normalised summary from the
# guest's console (its lines "rft-summary FILE STEP: ...": the sorted
# function names each step of the tools saw and the tracefs state they
# left, no timestamps) and diffs every VARIANT's summaries against the
# REFERENCE's.  Counted: each test's PASS on each kernel, and each test's
# summary on each VARIANT identical to the REFERENCE's (and not empty).
# The architecture is RFT_ARCH, as for the other scripts; the kernels must
# be built (scripts/build-kernel.sh VARIANT).  Results, console logs and
# the summaries (VARIANT/FILE.summary) stay in DIR (default
# build/tools-compare-<date>).  Last line: "N passed, N failed".
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

outdir=
while [ $# -gt 0 ]; do
	case $1 in
	--outdir) outdir=$2; shift 2 ;;
	-h|--help) sed -n '3,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
variants=("$@")
[ ${#variants[@]} -ge 2 ] || variants=(stock shadow)
atag=
[ "$RFT_ARCH" = x86_64 ] || atag=$RFT_ARCH-
outdir=${outdir:-$BUILD/tools-compare-$atag$(date +%Y%m%d-%H%M%S)}
mkdir -p "$outdir"
tests=(trace-cmd.tc perf-ftrace.tc)
only=$(printf 'rftrace/%s,' "${tests[@]}")
only=${only%,}

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok:   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

for v in "${variants[@]}"; do
	d=$outdir/$v
	rm -rf "$d"
	mkdir -p "$d"
	step "$v kernel: ${tests[*]}"
	"$top/scripts/ftracetest.sh" "$v" --selftests --jobs 1 --only "$only" \
		--out "$d/results" --outdir "$d" >"$d/run.log" 2>&1 ||
		echo "ftracetest.sh $v exited $? (see $d/run.log)"
	for t in "${tests[@]}"; do
		r=$(awk -v t="rftrace/$t" '$1 == t { print $2 }' "$d/results" 2>/dev/null || true)
		if [ "$r" = PASS ]; then
			ok "$v: $t PASS"
		else
			bad "$v: $t ${r:-no result} (logs in $d)"
		fi
		# the console's summary lines of the test (serial lines end in
		# \r), not those of a failed test's log the guest prints after it
		cat "$d"/console/*.log 2>/dev/null | tr -d '\r' |
			awk '/@@RFT LOG-BEGIN/ { skip = 1 } /@@RFT LOG-END/ { skip = 0; next } !skip' |
			sed -n "s/^rft-summary $t //p" >"$d/$t.summary" || true
	done
done

ref=${variants[0]}
for v in "${variants[@]:1}"; do
	for t in "${tests[@]}"; do
		a=$outdir/$ref/$t.summary b=$outdir/$v/$t.summary
		if [ ! -s "$a" ] || [ ! -s "$b" ]; then
			bad "$t: no summary on $([ -s "$a" ] && echo "$v" || echo "$ref")"
		elif diff -u --label "$ref/$t" --label "$v/$t" "$a" "$b"; then
			ok "$t: $v's summary is $ref's ($(wc -l <"$a") lines)"
		else
			bad "$t: $v's summary differs from $ref's (diff above)"
		fi
	done
done
echo "== summaries of the $ref kernel"
for t in "${tests[@]}"; do
	sed "s/^/$t  /" "$outdir/$ref/$t.summary"
done
echo "results in $outdir"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
