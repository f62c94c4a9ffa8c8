#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ftracetest.sh VARIANT [options] [-- KERNEL PARAMETER...]
#
# Run the kernel's ftrace selftests (tools/testing/selftests/ftrace) on the
# VARIANT kernel under QEMU, one .tc file per ftracetest invocation, and
# survive oopses and hangs: the guest is booted again at the next test.
# Writes a results file with one line per .tc file,
#   <relpath> <RESULT> <seconds> [warn=N]
# (RESULT: the worst of the file's ftracetest results, or HANG/OOPS/NORESULT),
# followed by the raw per-line results as '#=' comments.
#
# Options:
#   --only LIST        comma separated globs on the relative test path
#                      (e.g. 00basic/basic2.tc,ftrace/*); a directory name
#                      selects all its tests
#   --out FILE         results file (default: OUTDIR/results)
#   --outdir DIR       console logs, failure logs and excerpts (default:
#                      build/ftracetest-VARIANT-<date>)
#   --jobs N           guests run side by side (default: number of CPUs, max 4)
#   --timeout SECS     per-test timeout (default 600; direct/ftrace-direct.tc
#                      gets at least 1800)
#   --test-timeout GLOB=SECS   per-test override (repeatable)
#   --selftests        run the project's selftests/ instead (guest /rftrace/selftests;
#                      RFT_SELFTESTS=DIR packs and runs another directory)
#   --estimates FILE   results file whose durations balance the guests
#                      (default: selftests/expected/ARCH-stock.results)
# The architecture is RFT_ARCH (x86_64 by default, arm64 or riscv64).
# Examples (the stock baselines):
#   scripts/ftracetest.sh stock --out selftests/expected/x86_64-stock.results
#   RFT_ARCH=arm64 scripts/ftracetest.sh stock --jobs 1 \
#       --out selftests/expected/arm64-stock.results
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

usage() { sed -n '3,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit "${1:-2}"; }

[ $# -ge 1 ] || usage
case $1 in -h|--help) usage 0 ;; esac
variant=$1; shift
arch=$RFT_ARCH
arch_vars "$arch"
only= out= outdir= jobs= timeout=600 mode=ftracetest
estimates=$top/selftests/expected/$arch-stock.results
rargs=()
while [ $# -gt 0 ]; do
	case $1 in
	--only) only=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--outdir) outdir=$2; shift 2 ;;
	--jobs|-j) jobs=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--test-timeout) rargs+=(--test-timeout "$2"); shift 2 ;;
	--estimates) estimates=$2; shift 2 ;;
	--selftests) mode=selftests; shift ;;
	-h|--help) usage 0 ;;
	--) shift; for k in "$@"; do rargs+=(--karg "$k"); done; break ;;
	*) usage ;;
	esac
done

# Under KASAN and TCG the fault-injection selftest's 300-odd failed
# allocations take 15 to 20 minutes, and module-churn.tc's twelve cycles
# up to 15 (a --test-timeout given above wins).
case $variant in
*kasan*) rargs+=(--test-timeout 'rftrace/fault-injection.tc=2400'
		 --test-timeout 'rftrace/module-churn.tc=1500') ;;
# riscv64's debug kernel needs about 760 s for fault-injection.tc alone
# (2026-12-02), more beside other guests.
*debug*) if [ "$arch" = riscv64 ]; then
		rargs+=(--test-timeout 'rftrace/fault-injection.tc=1800')
	fi ;;
esac
if [ -z "$jobs" ]; then
	jobs=$(nproc)
	[ "$jobs" -gt 4 ] && jobs=4
fi
atag=
[ "$arch" = x86_64 ] || atag=$arch-
outdir=${outdir:-$BUILD/ftracetest-$atag$variant-$(date +%Y%m%d-%H%M%S)}
out=${out:-$outdir/results}
mkdir -p "$outdir" "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
# for the header of the results file: no absolute path of this machine
outrel=$(realpath -m --relative-to="$top" "$out")
case $outrel in ../*) outrel=$(basename "$out") ;; esac

case $mode in
ftracetest) root=$SRC/tools/testing/selftests/ftrace/test.d ;;
selftests) root=${RFT_SELFTESTS:-$top/selftests} ;;
esac
[ -d "$root" ] || die "no test directory $root"

"$top/scripts/mkinitramfs.sh" "$variant" "$arch"

kout=$BUILD/out-$arch-$variant
krel=$(cat "$kout/include/config/kernel.release" 2>/dev/null || echo unknown)
qver=$($QEMU --version | head -n 1 | sed 's/^QEMU emulator version //')
machine= envp= jobsopt=
if [ "$arch" != x86_64 ]; then
	machine="-M virt "
	envp="RFT_ARCH=$arch "
	jobsopt=" --jobs $jobs"
fi
step "ftracetest ($mode) on ${envp:+$arch }$variant kernel $krel, $jobs guest(s)"

exec python3 "$top/scripts/ftracetest-runner.py" "$variant" \
	--mode "$mode" --root "$root" --run-guest "$top/scripts/run-guest.sh" \
	--only "$only" --out "$out" --outdir "$outdir" --jobs "$jobs" \
	--timeout "$timeout" --estimates "$estimates" --tmpdir "$BUILD" \
	--header "ftracetest results: variant=$variant arch=$arch kernel=$krel qemu=$qver" \
	--header "guest: TCG thread=single, $machine-cpu max -smp ${RFT_SMP:-2} -m ${RFT_MEM:-2G}; host: $(nproc) CPUs" \
	--header "command: ${envp}scripts/ftracetest.sh $variant${jobsopt}${only:+ --only $only} --out $outrel" \
	"${rargs[@]}"
