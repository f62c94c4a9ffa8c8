#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run-guest.sh VARIANT MODE [KERNEL PARAMETER...]
#
# Boot build/out-x86_64-VARIANT/arch/x86/boot/bzImage under QEMU (TCG,
# single-threaded: multi-threaded TCG gives spurious int3 oopses in live
# patching) with the initramfs of scripts/mkinitramfs.sh, in guest mode
# MODE (shell | demo | ftracetest | selftests | kunit; see scripts/guest/init).
# Extra arguments are appended to the kernel command line, e.g.
#   scripts/run-guest.sh stock ftracetest rft.only=00basic/basic2.tc
#   scripts/run-guest.sh rust demo
#   scripts/run-guest.sh stock shell          (quit with C-a x or poweroff -f)
#   RFT_ARCH=arm64 scripts/run-guest.sh stock demo
#   RFT_ARCH=riscv64 scripts/run-guest.sh stock ftracetest rft.only=ftrace
# With RFT_ARCH=arm64 it boots build/out-arm64-VARIANT/arch/arm64/boot/Image
# on qemu-system-aarch64 -M virt -cpu max (same TCG mode, console ttyAMA0);
# with RFT_ARCH=riscv64 build/out-riscv64-VARIANT/arch/riscv/boot/Image on
# qemu-system-riscv64 -M virt -cpu max, started by QEMU's OpenSBI
# (-bios default; console ttyS0).
#
# The console is copied to a log (default build/guest-VARIANT-MODE.log,
# build/guest-ARCH-VARIANT-MODE.log for arm64 and riscv64).
# Exit status: the rc of the guest's final "@@RFT DONE" marker, 124 on
# timeout, 3 if the guest stopped without reaching that marker.
#
# Environment:
#   RFT_TIMEOUT=SECS       overall limit (default: 600; 14400 for ftracetest
#                          and selftests; none for shell)
#   RFT_LOG=FILE           console log file
#   RFT_INITRD_EXTRA=FILE  a cpio archive appended to the initramfs
#   RFT_NO_MKINITRAMFS=1   do not (re)pack the initramfs first
#   RFT_SMP, RFT_MEM       vCPUs (2) and memory (2G)
#   RFT_QEMU_ARGS          more QEMU arguments (word-split)
#   RFT_CMDLINE            replaces the default kernel parameters
#   RFT_ARCH               x86_64 (default), arm64 or riscv64
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

variant=${1:?usage: run-guest.sh VARIANT MODE [kernel parameters...]}
mode=${2:?usage: run-guest.sh VARIANT MODE [kernel parameters...]}
shift 2
arch=$RFT_ARCH
arch_vars "$arch"
out=$BUILD/out-$arch-$variant
kernel=$out/$KIMAGE
initrd=$out/initramfs.cpio.gz
envp=
[ "$arch" = x86_64 ] || envp="RFT_ARCH=$arch "

[ -f "$kernel" ] || die "no kernel $kernel: run ${envp}scripts/build-kernel.sh $variant"
if [ -z "${RFT_NO_MKINITRAMFS:-}" ]; then
	"$top/scripts/mkinitramfs.sh" "$variant" "$arch" >&2 || die "mkinitramfs failed"
fi
[ -f "$initrd" ] || die "no initramfs $initrd"

tmp=
cleanup() { [ -n "$tmp" ] && rm -f "$tmp"; }
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
if [ -n "${RFT_INITRD_EXTRA:-}" ]; then
	tmp=$(mktemp "$BUILD/initrd.XXXXXX")
	cat "$initrd" >"$tmp"
	# the kernel reads an uncompressed cpio only at a 4-byte aligned offset
	truncate -s %512 "$tmp"
	cat "$RFT_INITRD_EXTRA" >>"$tmp"
	initrd=$tmp
fi

cmdline=${RFT_CMDLINE:-"console=$CONSOLE loglevel=5 panic=-1 oops=panic"}
cmdline="$cmdline rft.mode=$mode $*"
# KASAN reports only its first bug unless told otherwise: one report of
# the kernel's own (or an early boot one) would hide every later one.
# On x86_64 the kasan guests also run with 4-level paging: with -cpu max
# the kernel uses 5-level paging, and an interrupt that comes while
# identify_cpu() rebuilds the CPU's feature bits (LA57 among them) makes
# KASAN see every direct-map address as wild; stock's KASAN kernel shows
# the same "wild-memory-access" reports from irq_work_tick(),
# do_raw_spin_lock() and account_process_tick() in the first 10 ms.
case $variant in
*kasan*) cmdline="$cmdline kasan_multi_shot"
	[ "$arch" = x86_64 ] && cmdline="$cmdline no5lvl" ;;
esac

qemu=("$QEMU")
case $arch in
# arm64: QEMU's generic "virt" board (PL011 UART, GIC, PSCI, device tree)
arm64)	qemu+=(-M virt) ;;
# riscv64: the "virt" board (16550 UART, PLIC, device tree), the kernel
# started in S-mode by the OpenSBI firmware that comes with QEMU
riscv64) qemu+=(-M virt -bios default) ;;
esac
qemu+=(-accel tcg,thread=single -cpu max
      -smp "${RFT_SMP:-2}" -m "${RFT_MEM:-2G}" -nographic -no-reboot -nic none
      -kernel "$kernel" -initrd "$initrd" -append "$cmdline"
      ${RFT_QEMU_ARGS:-})

if [ "$mode" = shell ]; then
	"${qemu[@]}"
	exit
fi

case $mode in
ftracetest|selftests|gcov) deftimeout=14400 ;;
*) deftimeout=600 ;;
esac
timeout=${RFT_TIMEOUT:-$deftimeout}
if [ "$arch" = x86_64 ]; then
	log=${RFT_LOG:-$BUILD/guest-$variant-$mode.log}
else
	log=${RFT_LOG:-$BUILD/guest-$arch-$variant-$mode.log}
fi
mkdir -p "$(dirname "$log")"

timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tee "$log"
qrc=${PIPESTATUS[0]}

done_line=$(tr -d '\r' <"$log" | grep -a '^@@RFT DONE ' | tail -n 1)
if [ -n "$done_line" ]; then
	rc=${done_line##*rc=}
	[[ $rc =~ ^[0-9]+$ ]] || rc=1
	exit "$rc"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "run-guest: timeout after $timeout s without the final marker (log: $log)" >&2
	exit 124
fi
echo "run-guest: guest stopped (qemu rc=$qrc) without the final marker (log: $log)" >&2
exit 3
