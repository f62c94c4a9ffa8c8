#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test.sh [--variant shadow|rust|stock|debug|kcsan|kasan] [--skip-host] [--skip-ftracetest]
#         [--full | --only LIST] [--jobs N]
#
# The project's whole test suite, from nothing:
#   1. host: cargo test (state machine, x86 golden encodings, driver
#      simulation), rustfmt and the x86 golden file against GNU as
#   2. build the kernel with the Rust core (default on x86_64: the debug
#      variant, which is the shadow variant (the Rust kernel plus a check
#      of every decision against the kernel's C logic) with lockdep,
#      DEBUG_ATOMIC_SLEEP, DEBUG_LIST, KFENCE, fault injection and
#      kmemleak; on arm64 and riscv64: the shadow variant)
#      and check that its compiled code calls no Rust panic
#      (scripts/panic-check.py) and that the misuses of its types in
#      tools/misuse/misuse.rs do not compile (scripts/misuse-check.sh),
#      and clippy with the kernel's lints is clean (kernel-clippy.sh)
#   3. in the guest: the Rust core's KUnit tests, and a boot with the
#      function tracer started from the command line (ftrace=function)
#   4. in the guest: the project's own ftracetest-style tests (selftests/)
#   5. in the guest: upstream ftracetest files, test by test, compared
#      with the stock kernel's results (selftests/expected/): by default
#      the smoke set of selftests/expected/smoke.list (a few minutes; what
#      CI runs), with --full all 142 files (about 25 minutes on x86_64)
# and prints one closing line "N passed, N failed" over all of them.
#
# RFT_ARCH=arm64 runs the same for the arm64 kernel (cross-built, booted on
# qemu-system-aarch64 -M virt), compared with selftests/expected/arm64-*.
# --variant stock tests the stock kernel itself (no Rust core: steps 3 and 4
# only check that the guest boots and KUnit reports no failure), e.g.
#   RFT_ARCH=arm64 scripts/test.sh --variant stock --skip-host --jobs 1
# --skip-host leaves out step 1; --jobs N: guests side by side for step 5;
# --baseline FILE: the stock results step 5 compares with (default
# selftests/expected/ARCH-stock.results; scripts/distro-test.sh gives the
# distribution configuration's stock run).
# On arm64 and riscv64 a run without --full leaves the selftests of
# selftests/expected/cross-smoke-skip.list out (they test the registry,
# which is the same on every architecture, and run on x86_64), and riscv64
# leaves out the boot with ftrace=function (7 minutes under TCG); --full
# runs them.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

variant=
run_ftracetest=1
run_host=1
full=0
only=
jobs=
baseline=
while [ $# -gt 0 ]; do
	case $1 in
	--variant) variant=$2; shift ;;
	--skip-ftracetest) run_ftracetest=0 ;;
	--skip-host) run_host=0 ;;
	--only) only=$2; shift ;;
	--full) full=1 ;;
	--jobs) jobs=$2; shift ;;
	--baseline) baseline=$2; shift ;;
	*) die "unknown option $1" ;;
	esac
	shift
done

passed=0 failed=0
summary=()
account() { # name passed failed
	passed=$((passed + $2))
	failed=$((failed + $3))
	summary+=("$(printf '%-28s %5d passed, %d failed' "$1" "$2" "$3")")
}

arch=$RFT_ARCH
arch_vars "$arch"
# One checking kernel per architecture, built once: on x86_64 the debug
# variant (its lockdep checks the core's lock proofs), elsewhere shadow.
if [ -z "$variant" ]; then
	variant=shadow
	[ "$arch" = x86_64 ] && variant=debug
fi
# files of this run: the x86_64 names are those of before the arch option
atag=
[ "$arch" = x86_64 ] || atag=$arch-

t0=$(date +%s)
"$top/scripts/setup.sh" || die "setup failed"

# 1. Host tests.
if [ $run_host = 1 ]; then
step "host: cargo test"
log=$BUILD/cargo-test.log
(cd "$top" && cargo test --quiet 2>&1) | tee "$log" | grep -E '^test result|panicked|FAILED|cases' || true
p=$(awk '/^test result:/ { s += $4 } END { print s + 0 }' "$log")
f=$(awk '/^test result:/ { s += $6 } END { print s + 0 }' "$log")
grep -q '^test result:' "$log" || f=$((f + 1))
account "host cargo test" "$p" "$f"

step "host: criterion benches, once each (smoke; nothing is asserted about speed)"
if (cd "$top" && cargo bench --quiet --bench core -- --test >"$BUILD/bench-smoke.log" 2>&1); then
	account "host bench smoke" 1 0
else
	tail -20 "$BUILD/bench-smoke.log"; account "host bench smoke" 0 1
fi

step "host: rustfmt, clippy and checkpatch"
p=0 f=0
if (cd "$top" && rustfmt --edition 2021 --check rust/rftrace.rs rust/lib.rs); then
	p=$((p + 1))
else
	echo "rustfmt: formatting differs (run rustfmt on rust/*.rs)"; f=$((f + 1))
fi
cp_log=$BUILD/checkpatch.log
if perl "$SRC/scripts/checkpatch.pl" --no-tree -q -f "$top"/c/*.c \
	"$top"/include/*.h >"$cp_log" 2>&1 &&
   (cd "$top/patches" && for x in *.patch; do
	perl "$SRC/scripts/checkpatch.pl" --no-tree -q "$x" || exit 1; done) >>"$cp_log" 2>&1; then
	p=$((p + 1))
else
	cat "$cp_log"; f=$((f + 1))
fi
if (cd "$top" && cargo clippy --quiet --all-targets -- -D warnings >"$BUILD/clippy.log" 2>&1); then
	p=$((p + 1))
else
	cat "$BUILD/clippy.log"; f=$((f + 1))
fi
account "style (rustfmt, clippy, checkpatch)" "$p" "$f"

# host_check NAME LOG COMMAND...: one pass/fail check of the host step;
# its output goes to $BUILD/LOG, shown when it fails.
host_check() {
	local name=$1 log=$BUILD/$2
	shift 2
	if "$@" >"$log" 2>&1; then
		account "$name" 1 0
	else
		cat "$log"; account "$name" 0 1
	fi
}

step "host: the kernel documentation's rst (rst-check.sh)"
host_check "rst check" rst-check.log "$top/scripts/rst-check.sh"
step "host: which KCSAN reports fail a test (kcsan-report.py --self-test)"
host_check "KCSAN report rule" kcsan-self-test.log \
	python3 "$top/scripts/kcsan-report.py" --self-test
step "host: every entry point is in docs/locking.md (locking-doc-check.sh)"
host_check "locking doc" locking-doc-check.log "$top/scripts/locking-doc-check.sh"
step "host: every deliberate break still applies (breaks-apply-check.sh)"
host_check "breaks apply" breaks-apply-check.log "$top/scripts/breaks-apply-check.sh"
step "host: no import cycle between the crate's modules (module-cycles.py)"
host_check "module cycles" module-cycles.log python3 "$top/scripts/module-cycles.py"
step "host: the README names only what exists (readme-check.sh)"
host_check "README check" readme-check.log "$top/scripts/readme-check.sh"
step "host: docs/ holds the results it cites (docs-check.sh)"
host_check "docs check" docs-check.log "$top/scripts/docs-check.sh"
fi

# 2. The kernel.
if ! "$top/scripts/build-kernel.sh" "$variant"; then
	account "kernel build ($variant)" 0 1
	printf '%s\n' "${summary[@]}"
	echo "$passed passed, $failed failed"
	exit 1
fi
"$top/scripts/mkinitramfs.sh" "$variant" >/dev/null || die "initramfs failed"

# 2b. No panic compiled into the core: no call from its functions to
# Rust's panic machinery (the kernel crate's inlined checks are listed).
if [ "$variant" != stock ]; then
	step "kernel: no panic call in the core's compiled code (panic-check.py)"
	plog=$BUILD/panic-check-$atag$variant.log
	if python3 "$top/scripts/panic-check.py" --objdump "${CROSS}objdump" \
		"$BUILD/out-$arch-$variant/vmlinux" >"$plog" 2>&1; then
		tail -n 1 "$plog"; account "no panic in the core" 1 0
	else
		cat "$plog"; account "no panic in the core" 0 1
	fi
	# 2c. The programs that must not compile, against the kernel crate
	# and bindings of this build (tools/misuse/misuse.rs).
	step "kernel: the misuses the types forbid do not compile (misuse-check.sh)"
	mlog=$BUILD/misuse-check-$atag$variant.log
	if "$top/scripts/misuse-check.sh" "$variant" >"$mlog" 2>&1; then
		tail -n 1 "$mlog"; account "misuse does not compile" 1 0
	else
		cat "$mlog"; account "misuse does not compile" 0 1
	fi
	# 2d. clippy with the kernel's lint set, on this build's command.
	step "kernel: clippy with the kernel's lints (kernel-clippy.sh)"
	clog=$BUILD/kernel-clippy-$atag$variant.log
	if "$top/scripts/kernel-clippy.sh" "$variant" >"$clog" 2>&1; then
		tail -n 1 "$clog"; account "kernel clippy" 1 0
	else
		cat "$clog"; account "kernel clippy" 0 1
	fi
fi

# 3. KUnit in the guest.  A configuration without the core's KUnit tests
# (Debian's: scripts/distro-config.sh) only boots, cleanly.
kunit_cfg=1
grep -qx 'CONFIG_FTRACE_RUST_CORE_KUNIT_TEST=y' "$BUILD/out-$arch-$variant/.config" || kunit_cfg=0
step "guest: KUnit (rftrace suite)"
klog=$BUILD/guest-$atag$variant-kunit.log
# loglevel=7: the boot log line of the core is pr_info().
RFT_LOG=$klog "$top/scripts/run-guest.sh" "$variant" kunit loglevel=7 >/dev/null 2>&1
krc=$?
# The core's suites are rftrace_<module>, one beside each module tested;
# a suite that started and never ended counts as a failure.
read -r p f unfinished <<<"$(kunit_counts "$klog")"
f=$((f + unfinished))
grep -E '^\s+(not )?ok [0-9]+ ' "$klog" | sed -n '/rftrace\|rust_and_c\|wrong_bytes\|x86_call\|update_and_test\|call_site\|record_lookup\|table_build/p'
if [ "$variant" = stock ]; then
	# no Rust core: the guest must boot and KUnit report no failure
	if [ $krc = 0 ] && grep -q '^@@RFT BOOTED' "$klog"; then
		p=$((p + 1))
	else
		echo "stock guest: no clean kunit run (rc=$krc, log: $klog)"; f=$((f + 1))
	fi
	account "guest boot + KUnit (stock)" "$p" "$f"
else
if [ $kunit_cfg = 1 ]; then
	[ "$p" -ge 4 ] || { echo "KUnit: expected at least 4 rftrace cases, saw $p (log: $klog)"; f=$((f + 1)); }
elif [ $krc = 0 ] && grep -aq '^@@RFT BOOTED' "$klog"; then
	echo "no KUnit in this configuration: the boot alone is checked"; p=$((p + 1))
else
	echo "guest boot: rc=$krc (log: $klog)"; f=$((f + 1))
fi
# No kernel warning (WARN, lockdep, KFENCE, BUG) while KUnit ran, and
# no KCSAN report that involves the core or is not in the stock list
# (kcsan-report.py's rule; stock's own races are listed, not counted, as
# in the runner).
warn_re='WARNING:|BUG:|possible circular locking|KFENCE:'
if grep -aE "$warn_re" "$klog" | grep -av 'BUG: KCSAN:' >/dev/null; then
	grep -aE -A 12 "$warn_re" "$klog" | head -60
	echo "KUnit boot: kernel warnings (log: $klog)"; f=$((f + 1))
fi
if grep -aq 'BUG: KCSAN:' "$klog"; then
	if python3 "$top/scripts/kcsan-report.py" "$klog" >"$klog.kcsan" 2>&1; then
		echo "KUnit boot: KCSAN reports, none counted (kcsan-report.py):"
	else
		echo "KUnit boot: KCSAN reports involving the core or not in the stock list (log: $klog)"; f=$((f + 1))
	fi
	cat "$klog.kcsan"
fi
grep -q 'rftrace: Rust dynamic ftrace core active' "$klog" ||
	{ echo "no 'Rust dynamic ftrace core active' line in the boot log"; f=$((f + 1)); }
account "guest KUnit" "$p" "$f"

# one_warning_mode MODE TITLE [RE]: boots the guest in MODE (scripts/guest/
# init), which must print "@@RFT <MODE in capitals> PASS"; the boot log
# must hold exactly one WARNING, at kernel/trace/ftrace.c, a line matching
# RE if given, and no other report (BUG, Oops, KASAN, KFENCE, lockdep).
one_warning_mode() {
	local mode=$1 title=$2 re=${3:-} marker log rc bad=0 nwarn
	local reports='BUG:|KFENCE:|possible circular locking|Oops|Unable to handle'
	marker=$(echo "$mode" | tr a-z A-Z)
	log=$BUILD/guest-$atag$variant-$mode.log
	RFT_LOG=$log "$top/scripts/run-guest.sh" "$variant" "$mode" >/dev/null 2>&1
	rc=$?
	tr -d '\r' <"$log" | grep -a "@@RFT $marker" || true
	grep -aq "@@RFT $marker PASS" "$log" && [ $rc = 0 ] || bad=1
	nwarn=$(grep -acE 'WARNING:' "$log")
	if [ "$nwarn" -ne 1 ] || ! grep -aE 'WARNING:' "$log" | grep -aq 'kernel/trace/ftrace.c'; then
		echo "$mode: $nwarn warnings, want exactly one at kernel/trace/ftrace.c"; bad=1
	fi
	if [ -n "$re" ] && ! grep -aqE "$re" "$log"; then
		echo "$mode: no line matching '$re' beside the warning"; bad=1
	fi
	if grep -aqE "$reports" "$log"; then
		grep -aE -A 20 "$reports" "$log" | head -60
		echo "$mode: kernel reports beside the warning"; bad=1
	fi
	[ $bad = 0 ] || echo "$mode: rc=$rc (log: $log)"
	account "$title" $((1 - bad)) $bad
}

# CALL_OPS kernels with the shadow check: a shut-down whose pass ends in
# ftrace_bug() while a literal names a set (mode literal-bug). The set
# must be stale: calls through it walk the list, the stopped instance's
# freed ops is never called. ftrace_bug() warns once by design.
case $variant in shadow|debug|kcsan|kasan) shadowed=1 ;; *) shadowed=0 ;; esac
if [ "$arch" != x86_64 ] && [ $shadowed = 1 ]; then
	step "guest: a failed pass while a literal names a set (literal-bug)"
	one_warning_mode literal-bug "guest literal-bug (failed pass, literal naming a set)"
fi

# An ops whose function is cleared while it traces (test module
# rftrace_null_func, mode null-func): the walk over the site's ops (the
# list walk on stock, the site's set with the core) must warn once, print
# the ops (its "op=" line) and stop ftrace; a call to address 0 fails.
# Every x86_64 variant; on arm64 and riscv64 (where the literal names the
# set: the same walk, reached through rftrace_set_func()) every variant
# but the CI smoke's shadow one, and with --full.
if [ "$arch" = x86_64 ] || [ "$variant" != shadow ] || [ $full = 1 ]; then
	step "guest: an ops without a function at a traced site (null-func)"
	one_warning_mode null-func "guest null-func (an ops without a function is not called)" \
		'(^|[] :])op=[0-9a-f]+ '
fi

# A boot-time tracer (ftrace=function) registers before the workqueues
# exist and before the scheduler runs: the guest must boot, trace and
# pass KUnit with it (a retired set table was once queued to a workqueue
# that did not exist yet).
if [ "$arch" = riscv64 ] && [ $full = 0 ]; then
	step "guest: boot with ftrace=function: left to --full on riscv64"
else
step "guest: boot with ftrace=function"
blog=$BUILD/guest-$atag$variant-boot-tracer.log
# Every function is traced from early boot on, so under TCG this boot is
# slow (riscv64: about 7 minutes of a loaded host): twice the usual limit.
RFT_TIMEOUT=${RFT_TIMEOUT:-1200} RFT_LOG=$blog \
	"$top/scripts/run-guest.sh" "$variant" kunit ftrace=function >/dev/null 2>&1
brc=$?
if [ $brc = 0 ] && { kunit_clean "$blog" ||
	{ [ $kunit_cfg = 0 ] && grep -aq '^@@RFT BOOTED' "$blog"; }; }; then
	account "guest boot with ftrace=function" 1 0
else
	tail -n 40 "$blog"
	echo "boot with ftrace=function: rc=$brc, no clean KUnit (log: $blog)"
	account "guest boot with ftrace=function" 0 1
fi
fi
fi

# 4. The project's own tests (they test the Rust core: not on stock).
if [ "$variant" != stock ]; then
step "guest: selftests/rftrace"
sres=$BUILD/selftests-$atag$variant.results
sonly=
sskip=0
if [ "$arch" != x86_64 ] && [ $full = 0 ]; then
	skip_re="^($(grep -v '^#' "$top/selftests/expected/cross-smoke-skip.list" | paste -sd'|' -))\$"
	for t in "$top"/selftests/rftrace/*.tc; do
		if basename "$t" | grep -qE "$skip_re"; then
			echo "  (left to --full on $arch: rftrace/$(basename "$t"))"
			sskip=$((sskip + 1))
		else
			sonly=${sonly:+$sonly,}rftrace/$(basename "$t")
		fi
	done
fi
"$top/scripts/ftracetest.sh" "$variant" --selftests ${sonly:+--only "$sonly"} \
	--out "$sres" >/dev/null 2>&1
grep -v '^#' "$sres" 2>/dev/null | sed 's/^/  /'
# The files of selftests/expected/debug-only.list need the debug variant
# (fault injection, kmemleak): elsewhere they are UNSUPPORTED, and skipped.
# Those of selftests/expected/tools-only.list need a program that only
# some guests have (trace-cmd, perf: scripts/mkinitramfs.sh packs them
# into the x86_64 guest when it can have them): UNSUPPORTED without it,
# and skipped.  Where the program is, they must PASS.
# Those of selftests/expected/config-only.list need a kernel option (IBT):
# UNSUPPORTED and skipped on a kernel without it; where it is, they must
# PASS.
donly=$(grep -v '^#' "$top/selftests/expected/debug-only.list" | paste -sd'|' -)
tonly=$(grep -v '^#' "$top/selftests/expected/tools-only.list" | paste -sd'|' -)
coff=$(config_only_off "$arch" "$variant")
tonly=$tonly${coff:+|$coff}
dbg=0
case $variant in debug|kasan) dbg=1 ;; esac
: >"$sres.counted"
grep -v '^#' "$sres" 2>/dev/null |
	awk -v d="^rftrace/($donly)\$" -v t="^rftrace/($tonly)\$" -v dbg=$dbg \
	    -v counted="$sres.counted" '
	$2 == "UNSUPPORTED" && !dbg && $1 ~ d { print "  (skipped, debug variant only: " $1 ")"; next }
	$2 == "UNSUPPORTED" && $1 ~ t { print "  (skipped, program or kernel option not in this guest: " $1 ")"; next }
	{ print >counted }'
skipped=$(grep -v '^#' "$sres" 2>/dev/null |
	awk -v d="^rftrace/($donly)\$" -v t="^rftrace/($tonly)\$" -v dbg=$dbg '
	$2 == "UNSUPPORTED" && ((!dbg && $1 ~ d) || $1 ~ t)' | wc -l)
# a kernel warning during a test (warn=N) fails it
p=$(awk '$2 == "PASS" && !/warn=/' "$sres.counted" | wc -l)
f=$(awk '$2 != "PASS" || /warn=/' "$sres.counted" | wc -l)
want=$(( $(ls "$top"/selftests/rftrace/*.tc | wc -l) - skipped - sskip ))
[ $((p + f)) -eq "$want" ] || f=$((f + want - p - f))
account "guest selftests/rftrace" "$p" "$f"
fi

# Guest benchmark (scripts/bench.sh), once at tiny sizes so that it cannot
# rot: nothing about speed is asserted, only that it ran and wrote a results
# file with every field (bench-report.py --check).  About 2 minutes.
# (on the debug variant too, whose timings mean nothing, as the smoke's do
# not matter; not on the KCSAN and KASAN ones)
if [ "${RFT_ARCH:-x86_64}" = x86_64 ] && [ "$variant" != kcsan ] &&
   [ "$variant" != kasan ]; then
step "guest: bench smoke (bench.sh --icount at tiny sizes, $variant kernel)"
blog=$BUILD/bench-smoke-guest.log
if "$top/scripts/bench.sh" --no-build --variants "$variant" --reps 1 --calls 100 \
	--rows 1:0 --patch-reps 1 --icount --out "$BUILD/bench-smoke/results.json" \
	>"$blog" 2>&1; then
	account "guest bench smoke" 1 0
else
	tail -20 "$blog"; account "guest bench smoke" 0 1
fi
fi

# 5. Upstream ftracetest against the stock kernel's results.
if [ $run_ftracetest = 1 ]; then
	if [ -z "$only" ] && [ $full = 0 ]; then
		only=$(grep -v '^#' "$top/selftests/expected/smoke.list" | paste -sd, -)
		step "guest: upstream ftracetest, smoke set ($(echo "$only" | tr , '\n' | wc -l) files; --full for all)"
	else
		step "guest: upstream ftracetest (${only:-all files}; long)"
	fi
	res=$BUILD/ftracetest-$atag$variant.results
	args=(--out "$res")
	[ -n "$only" ] && args+=(--only "$only")
	[ -n "$jobs" ] && args+=(--jobs "$jobs")
	ftlog=$BUILD/ftracetest-$atag$variant.log
	"$top/scripts/ftracetest.sh" "$variant" "${args[@]}" 2>&1 | tee "$ftlog"
	logs=$(sed -n 's/^logs:[[:space:]]*//p' "$ftlog" | tail -1)
	# Known racy files (selftests/expected/x86_64-flaky.list, each with
	# its reason) that ended FAIL get up to four more tries, each on a
	# fresh boot.
	flaky=$top/selftests/expected/$arch-flaky.list
	[ -f "$flaky" ] || flaky=/dev/null
	for t in $(grep -v '^#' "$flaky" | awk 'NF { print $1 }'); do
		[ "$(awk -v t="$t" '$1 == t { print $2 }' "$res")" = FAIL ] || continue
		for try in 1 2 3 4; do
			rres=$BUILD/ftracetest-$atag$variant-retry.results
			"$top/scripts/ftracetest.sh" "$variant" --only "$t" --jobs 1 \
				--out "$rres" --outdir "$logs/retry-$try" >/dev/null 2>&1 || true
			r=$(awk -v t="$t" '$1 == t { print $2 }' "$rres" 2>/dev/null)
			echo "flaky-list retry $try of $t: ${r:-no result}"
			[ "$r" = PASS ] || continue
			# the retry's own line (with its warn=N, if any) replaces the FAIL
			line="$(awk -v t="$t" '$1 == t && !/^#/' "$rres") retried=$try"
			awk -v t="$t" -v l="$line" '$1 == t && !/^#/ { print l; next } 1' \
				"$res" >"$res.tmp" && mv "$res.tmp" "$res"
			break
		done
	done
	cmp_args=()
	[ -n "$only" ] && cmp_args+=(--subset)
	cmp_log=$BUILD/ftracetest-$atag$variant.compare
	"$top/scripts/compare-results.sh" "${cmp_args[@]}" \
		"${baseline:-$top/selftests/expected/$arch-stock.results}" "$res" | tee "$cmp_log"
	line=$(tail -1 "$cmp_log")
	p=$(echo "$line" | awk '{ print $1 + 0 }')
	f=$(echo "$line" | awk '{ print $3 + 0 }')
	echo "$line" | grep -qE '^[0-9]+ passed, [0-9]+ failed$' || f=$((f + 1))
	account "upstream ftracetest (parity)" "$p" "$f"
	# The shadow kernel logs every difference between a Rust and a C
	# decision ("rftrace: shadow: ...") and every record whose accounting
	# the registry's consistency check finds wrong ("rftrace:
	# consistency: ..."); none may appear in the whole run.
	case $variant in shadow|debug|kcsan|kasan) shadowed=1 ;; *) shadowed=0 ;; esac
	if [ $shadowed = 1 ] && [ -d "$logs/console" ]; then
		n=$(find "$logs" -path '*console*' -name '*.log' -exec cat {} + |
			grep -a -c 'rftrace: shadow:\|rftrace: consistency:' || true)
		echo "shadow and consistency differences logged during ftracetest: $n"
		if [ "$n" -eq 0 ]; then
			account "shadow check over ftracetest" 1 0
		else
			account "shadow check over ftracetest" 0 1
		fi
	fi
fi

echo
echo "== summary (${atag}$variant kernel, $(( $(date +%s) - t0 )) s)"
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
