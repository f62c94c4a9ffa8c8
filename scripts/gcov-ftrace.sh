#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# gcov-ftrace.sh [--report] [--only LIST] [VARIANT...]
#
# How much of kernel/trace/ftrace.c still runs: for each VARIANT (default:
# stock rust), build VARIANT-gcov (the variant with CONFIG_GCOV_KERNEL and
# gcov profiling of kernel/trace/ftrace.o alone), boot it, run the
# ftracetest files of the smoke set (selftests/expected/smoke.list, or
# --only LIST) in one boot, bring the coverage data of ftrace.o out over the
# console and read it with the host's gcov (the compiler that built it).
# Prints, per variant, the lines of ftrace.c executed and the functions
# entered, then the registry functions of the registry issue line by line.
# Writes build/gcov-VARIANT.txt (gcov's function summaries); --report
# prints the tables again from those files without building or booting.
# The rust variant is the Rust kernel without the shadow mode, whose checks
# call the C functions on purpose. Example:
#   scripts/gcov-ftrace.sh stock rust
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
arch_vars "$RFT_ARCH"

only=$(grep -v '^#' "$top/selftests/expected/smoke.list" | paste -sd, -)
report=0
if [ "${1:-}" = --report ]; then
	report=1
	shift
fi
if [ "${1:-}" = --only ]; then
	only=$2
	shift 2
fi
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(stock rust)

# The C functions the registry issue names, in the order it names them.
watch="add_ftrace_ops remove_ftrace_ops __register_ftrace_function
__unregister_ftrace_function register_ftrace_function
unregister_ftrace_function update_ftrace_function ftrace_startup
ftrace_shutdown ftrace_startup_subops ftrace_shutdown_subops
ftrace_hash_move_and_update_ops ftrace_ops_update_code
__ftrace_hash_rec_update ftrace_hash_rec_enable_modify
ftrace_hash_ipmodify_enable ftrace_hash_ipmodify_disable
ftrace_run_update_code ftrace_modify_all_code register_ftrace_direct
unregister_ftrace_direct modify_ftrace_direct"

# Build VARIANT-gcov, boot it, run the files, read the counts with gcov.
gcov_run() {
	local v=$1 gv=$1-gcov out log
	out=$BUILD/out-$RFT_ARCH-$gv
	"$top/scripts/build-kernel.sh" "$gv"
	log=$BUILD/gcov-$v.log
	step "guest: $gv, ftracetest ($only)"
	RFT_LOG=$log "$top/scripts/run-guest.sh" "$gv" gcov "rft.only=$only" >/dev/null ||
		die "the $gv guest did not finish (see $log)"
	tr -d '\r' <"$log" |
		sed -n '/^@@RFT GCOV-BEGIN /,/^@@RFT GCOV-END/p' | sed '1d;$d' |
		base64 -d >"$out/kernel/trace/ftrace.gcda" ||
		die "no coverage data in $log"
	grep -a -c '^@@RFT RESULT .* PASS' "$log" >"$BUILD/gcov-$v.passed" || true
	(cd "$out" && gcov -f -n -o kernel/trace "$SRC/kernel/trace/ftrace.c") \
		>"$BUILD/gcov-$v.txt" 2>/dev/null || die "gcov failed for $gv"
}

summary=()
for v in "${variants[@]}"; do
	if [ $report = 0 ]; then
		gcov_run "$v"
	fi
	[ -s "$BUILD/gcov-$v.txt" ] || die "no $BUILD/gcov-$v.txt (run without --report first)"
	# "Function 'name'" then "Lines executed:P% of N", per function; the
	# file's own pair last.
	read -r lines_run lines_all funcs_run funcs_all < <(awk '
		/^Function / { f = 1; next }
		/^File .*ftrace\.c/ { file = 1; next }
		/^Lines executed:/ {
			split($0, a, /[:% ]+/); p = a[3]; n = $NF
			if (file) { run = p * n / 100; all = n; file = 0 }
			else if (f) { fa++; if (p > 0) fr++ }
			f = 0
		}
		END { printf "%d %d %d %d\n", run + 0.5, all, fr, fa }' "$BUILD/gcov-$v.txt")
	summary+=("$(printf '%-8s %6d of %6d lines of ftrace.c run (%5.1f %%), %4d of %4d functions entered, %s ftracetest results PASS' \
		"$v" "$lines_run" "$lines_all" "$(awk -v a="$lines_run" -v b="$lines_all" 'BEGIN { print b ? 100 * a / b : 0 }')" \
		"$funcs_run" "$funcs_all" "$(cat "$BUILD/gcov-$v.passed")")")
done

echo
echo "== kernel/trace/ftrace.c under the ftracetest files above ($RFT_ARCH, $(date -u +%F))"
printf '%s\n' "${summary[@]}"
echo
echo "== the registry's C functions: lines run (of lines) per variant"
printf '%-34s' function
for v in "${variants[@]}"; do printf ' %14s' "$v"; done
echo
for fn in $watch; do
	printf '%-34s' "$fn"
	for v in "${variants[@]}"; do
		printf ' %14s' "$(awk -v fn="$fn" '
			$0 == "Function '\''" fn "'\''" { f = 1; next }
			f && /^Lines executed:/ { split($0, a, /[:% ]+/); printf "%d/%d", a[3] * $NF / 100 + 0.5, $NF; f = 0; found = 1 }
			END { if (!found) printf "-" }' "$BUILD/gcov-$v.txt")"
	done
	echo
done
