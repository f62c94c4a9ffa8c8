#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# distro-test.sh [--jobs N]
#
# The Rust core on Debian's own configuration of 7.2 (docs/distro-config.md)
# against the same configuration's stock kernel, for RFT_ARCH (x86_64 or
# arm64):
#   1. build distro-stock, then distro-rust from a copy of stock's build
#      directory (x86_64: about 62 minutes cold on 2 cores, then about
#      1,000 objects for the core's option)
#   2. on stock: the upstream ftracetest smoke set (the baseline) and the
#      null-func boot (the walk's refusal of an ops without a function)
#   3. scripts/test.sh --variant distro-rust --skip-host --baseline (the
#      stock results of step 2): KUnit, null-func, the ftrace=function boot,
#      the project's selftests, the bench smoke and the same smoke set,
#      compared test by test with stock's
#   4. x86_64: the smoke set again on both kernels, and the project's
#      selftests on distro-rust, with call depth tracking on: a Skylake
#      CPU model (QEMU's Skylake-Client-v1 under TCG) booted with
#      retbleed=stuff spectre_v2=retpoline, so that Debian's call thunks
#      and RSB stuffing run ("callthunks: Setting up call depth tracking"
#      must be in each boot log)
# Writes build/distro-ARCH.summary and prints one closing line
# "N passed, N failed" (the stock steps and test.sh's together).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

jobs=
while [ $# -gt 0 ]; do
	case $1 in
	--jobs) jobs=$2; shift ;;
	*) die "unknown option $1" ;;
	esac
	shift
done
arch=$RFT_ARCH
case $arch in x86_64|arm64) ;; *) die "no Debian configuration is used for $arch" ;; esac
atag=
[ "$arch" = x86_64 ] || atag=$arch-
t0=$(date +%s)
passed=0 failed=0
summary=()
account() { # name passed failed
	passed=$((passed + $2))
	failed=$((failed + $3))
	summary+=("$(printf '%-28s %5d passed, %d failed' "$1" "$2" "$3")")
}

"$top/scripts/setup.sh" >/dev/null || die "setup failed"
for v in distro-stock distro-rust; do
	s=$(date +%s)
	# The Rust kernel starts from the stock one's build directory when it
	# has none: the two configurations differ by the core alone, so make
	# rebuilds only what depends on it (about 1,000 of x86_64's 2,746
	# objects) instead of compiling everything through ccache again.
	rout=$BUILD/out-$arch-distro-rust sout=$BUILD/out-$arch-distro-stock
	if [ "$v" = distro-rust ] && [ ! -f "$rout/.config" ] && [ -f "$sout/vmlinux" ]; then
		step "$arch/distro-rust: starting from the stock build directory"
		rm -rf "$rout"
		cp -a "$sout" "$rout"
		rm -f "$rout/.rftrace-fragment" "$rout/initramfs.cpio.gz"
	fi
	if "$top/scripts/build-kernel.sh" "$v" >"$BUILD/distro-build-$atag$v.log" 2>&1; then
		step "$arch/$v built in $(( $(date +%s) - s )) s"
		account "kernel build ($v)" 1 0
	else
		tail -20 "$BUILD/distro-build-$atag$v.log"
		account "kernel build ($v)" 0 1
		printf '%s\n' "${summary[@]}"
		echo "$passed passed, $failed failed"
		exit 1
	fi
done

step "guest: stock, the upstream ftracetest smoke set (the baseline)"
only=$(grep -v '^#' "$top/selftests/expected/smoke.list" | paste -sd, -)
base=$BUILD/ftracetest-${atag}distro-stock.results
args=(--only "$only" --out "$base")
[ -n "$jobs" ] && args+=(--jobs "$jobs")
"$top/scripts/ftracetest.sh" distro-stock "${args[@]}" >"$BUILD/ftracetest-${atag}distro-stock.log" 2>&1
n=$(grep -vc '^#' "$base" 2>/dev/null || echo 0)
want=$(echo "$only" | tr , '\n' | grep -c .)
if [ "$n" -eq "$want" ]; then
	account "stock smoke baseline" 1 0
else
	echo "stock smoke baseline: $n results, want $want (log: $BUILD/ftracetest-${atag}distro-stock.log)"
	account "stock smoke baseline" 0 1
fi
grep -v '^#' "$base" | awk '{ print "  stock:", $0 }'

step "guest: stock, an ops without a function at a traced site (null-func)"
nlog=$BUILD/guest-${atag}distro-stock-null-func.log
RFT_LOG=$nlog "$top/scripts/run-guest.sh" distro-stock null-func >/dev/null 2>&1
if grep -aq '@@RFT NULL-FUNC PASS' "$nlog" && [ "$(grep -ac 'WARNING:' "$nlog")" = 1 ]; then
	account "stock null-func" 1 0
else
	tr -d '\r' <"$nlog" | grep -a '@@RFT NULL-FUNC\|WARNING:' || true
	account "stock null-func" 0 1
fi

step "the Rust core on the same configuration: scripts/test.sh --variant distro-rust"
targs=(--variant distro-rust --skip-host --baseline "$base")
[ -n "$jobs" ] && targs+=(--jobs "$jobs")
tlog=$BUILD/distro-test-${atag}rust.log
"$top/scripts/test.sh" "${targs[@]}" 2>&1 | tee "$tlog"
read -r p f < <(tail -n 1 "$tlog" |
	awk '/^[0-9]+ passed, [0-9]+ failed$/ { print $1, $3; ok = 1 } END { if (!ok) print 0, 1 }')
account "test.sh (distro-rust)" "$p" "$f"

if [ "$arch" = x86_64 ]; then
	step "call depth tracking (retbleed=stuff on a Skylake model): the smoke set on both, the selftests on rust"
	stuff=(retbleed=stuff spectre_v2=retpoline loglevel=7)
	sres=()
	for v in distro-stock distro-rust; do
		r=$BUILD/ftracetest-$v-stuff.results
		RFT_QEMU_ARGS="-cpu Skylake-Client-v1" "$top/scripts/ftracetest.sh" "$v" \
			--only "$only" ${jobs:+--jobs "$jobs"} --out "$r" -- "${stuff[@]}" \
			>"$BUILD/ftracetest-$v-stuff.log" 2>&1
		sres+=("$r")
	done
	RFT_QEMU_ARGS="-cpu Skylake-Client-v1" "$top/scripts/ftracetest.sh" distro-rust \
		--selftests ${jobs:+--jobs "$jobs"} --out "$BUILD/selftests-distro-rust-stuff.results" \
		-- "${stuff[@]}" >"$BUILD/selftests-distro-rust-stuff.log" 2>&1
	n=0
	for l in "$BUILD"/ftracetest-distro-*-stuff.log "$BUILD/selftests-distro-rust-stuff.log"; do
		d=$(sed -n 's/^logs:[[:space:]]*//p' "$l" | tail -1)
		[ -d "$d/console" ] || { n=$((n + 1)); continue; }
		for c in "$d"/console/*.log; do
			grep -aq 'callthunks: Setting up call depth tracking' "$c" || n=$((n + 1))
		done
	done
	if [ $n = 0 ]; then
		account "call depth tracking on in every boot" 1 0
	else
		account "call depth tracking on in every boot" 0 1
	fi
	cmp=$BUILD/ftracetest-distro-stuff.compare
	"$top/scripts/compare-results.sh" --subset "${sres[0]}" "${sres[1]}" | tee "$cmp"
	read -r p f < <(tail -n 1 "$cmp" |
		awk '/^[0-9]+ passed, [0-9]+ failed$/ { print $1, $3; ok = 1 } END { if (!ok) print 0, 1 }')
	account "smoke with stuffing (parity)" "$p" "$f"
	# the project's selftests: PASS, or UNSUPPORTED where test.sh skips
	# them (debug-only, tools-only and config-only files)
	skip=$(grep -hv '^#' "$top/selftests/expected/debug-only.list" \
		"$top/selftests/expected/tools-only.list" | paste -sd'|' -)
	coff=$(config_only_off "$arch" distro-rust)
	skip=$skip${coff:+|$coff}
	p=$(grep -v '^#' "$BUILD/selftests-distro-rust-stuff.results" | awk '$2 == "PASS" && !/warn=/' | wc -l)
	f=$(grep -v '^#' "$BUILD/selftests-distro-rust-stuff.results" |
		awk -v s="^rftrace/($skip)\$" '($2 != "PASS" || /warn=/) && !($2 == "UNSUPPORTED" && $1 ~ s)' | wc -l)
	grep -v '^#' "$BUILD/selftests-distro-rust-stuff.results" | sed 's/^/  stuffing: /'
	account "selftests with stuffing" "$p" "$f"
fi

{
	echo "== distribution configuration, $arch ($(( $(date +%s) - t0 )) s)"
	printf '%s\n' "${summary[@]}"
	echo "$passed passed, $failed failed"
} | tee "$BUILD/distro-$arch.summary"
[ "$failed" -eq 0 ]
