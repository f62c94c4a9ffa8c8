#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh VARIANT [ARCH]
#
# Configure and build one kernel out of tree in build/out-ARCH-VARIANT
# (ARCH: the second argument, else $RFT_ARCH, else x86_64; arm64 is
# cross-built with aarch64-linux-gnu-gcc, riscv64 with clang-19 and the
# LLVM 19 tools, LLVM=-19):
#   stock   CONFIG_FTRACE_RUST_CORE=n (the kernel's own C dynamic ftrace)
#   rust    CONFIG_FTRACE_RUST_CORE=y
#   shadow  CONFIG_FTRACE_RUST_CORE=y and CONFIG_FTRACE_RUST_CORE_SHADOW=y
#   debug   shadow plus lockdep (PROVE_LOCKING: the Rust core's lock proofs
#           assert with lockdep_assert_held()), DEBUG_ATOMIC_SLEEP,
#           DEBUG_LIST and KFENCE
#   kcsan   shadow plus KCSAN (data races, e.g. on the record table)
#   kasan   debug plus generic KASAN; built with clang-19 on x86_64 too
#           (7.2's RUST depends on !KASAN || CC_IS_CLANG)
#   bpf, rust-bpf, stock-bpf
#           shadow, rust and stock with BPF tracing (syscall, JIT, events,
#           BTF); rust-bpf is the one to time against stock-bpf
#   debug-bpf
#           debug plus BPF tracing: the BPF selftests under lockdep
#   distro-stock, distro-rust
#           Debian's own configuration of 7.2 (scripts/distro-config.sh):
#           x86_64 and arm64, stock and with the Rust core
# All variants use the same patched tree and the same config fragment
# (configs/ARCH.config, built with -O2).  A "-os" suffix (stock-os, rust-os,
# shadow-os) builds the same with CONFIG_CC_OPTIMIZE_FOR_SIZE instead; a
# "-gcov" suffix (stock-gcov, rust-gcov) adds CONFIG_GCOV_KERNEL and
# profiles kernel/trace/ftrace.o (scripts/gcov-ftrace.sh).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/config-fragment.sh"

variant=${1:?usage: build-kernel.sh stock|rust|shadow [x86_64|arm64|riscv64]}
arch=${2:-$RFT_ARCH}
arch_vars "$arch"
variant_vars "$variant"
out=$BUILD/out-$arch-$variant
jobs=${JOBS:-$(nproc)}

"$top/scripts/prepare-tree.sh"

image=$KIMAGE

mk=(make -C "$SRC" O="$out" ARCH="$KARCH" LLVM="$KLLVM" CC="ccache $KCC"
    -j"$jobs" LIBCLANG_PATH="$LIBCLANG_PATH")
[ -n "$CROSS" ] && mk+=(CROSS_COMPILE="$CROSS")
# -gcov variants: coverage of kernel/trace/ftrace.o alone (the name also
# profiles an arch's ftrace.o, which nobody reads).
case $variant in *-gcov) mk+=(GCOV_PROFILE_ftrace.o=y) ;; esac

mkdir -p "$out"
# BTF (the bpf variants): Kconfig drops it without a word if pahole is
# missing or old; the kfuncs' declarations need 1.27 (need_pahole).  The
# distribution configuration builds BTF with the same pahole.
case $variant in
bpf|bpf-*|rust-bpf|rust-bpf-*|stock-bpf|stock-bpf-*|debug-bpf|debug-bpf-*)
	need_pahole "the bpf variants build DEBUG_INFO_BTF"
	mk+=(PAHOLE="$PAHOLE_BIN") ;;
distro-*) mk+=(PAHOLE="$PAHOLE_BIN") ;;
esac
frag=$out/.rftrace-fragment
case $variant in
distro-stock|distro-rust)
	# Debian's own configuration (scripts/distro-config.sh, which checks
	# what it must), made again when that script changes.
	sha256sum "$top/scripts/distro-config.sh" >"$frag.new"
	if ! cmp -s "$frag.new" "$frag" || [ ! -f "$out/.config" ]; then
		step "configuring $arch/$variant (Debian's configuration)"
		"$top/scripts/distro-config.sh" "$arch" "${variant#distro-}" "$out"
		mv "$frag.new" "$frag"
	else
		rm -f "$frag.new"
	fi ;;
*)	rft_config_fragment "$arch" "$variant" >"$frag.new" ;;
esac

if [ -f "$frag.new" ] && { ! cmp -s "$frag.new" "$frag" || [ ! -f "$out/.config" ]; }; then
	step "configuring $arch/$variant"
	"${mk[@]}" -s tinyconfig >/dev/null
	(cd "$out" && KCONFIG_CONFIG=.config "$SRC/scripts/kconfig/merge_config.sh" \
		-m -O "$out" .config "$frag.new" >/dev/null)
	"${mk[@]}" -s olddefconfig >/dev/null
	# Every line of the fragment must have survived olddefconfig (checked
	# before the fragment is recorded, so a refused one is tried again).
	rft_check_fragment "$frag.new" "$out/.config" ||
		die "config fragment not honoured (missing deps?); see $out/.config"
	mv "$frag.new" "$frag"
else
	rm -f "$frag.new"
fi

step "building $arch/$variant kernel in $out (-j$jobs)"
start=$(date +%s)
"${mk[@]}" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; die "kernel build failed"; }
"${mk[@]}" modules >>"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; die "module build failed"; }
# No warning from the Rust core, its shim or a file our patches touch
# (C and objtool warnings name the file or function on their line; a Rust
# warning names its file on the "-->" line under it).  A warning of the
# files compiled in this build only: an incremental build recompiles
# what changed.
own='kernel/trace/rftrace/|rftrace|kernel/trace/(ftrace|fgraph)[.]c|arch/(x86|arm64|riscv)/kernel/ftrace[.]c|arch/x86/include/asm/ftrace[.]h|samples/ftrace/'
warns=$(awk -v own="$own" '
	/warning:/ { if ($0 ~ own) { print; next } w = $0; n = 4; next }
	n > 0 { n--; if ($0 ~ /-->/ && $0 ~ own) { print w; print; n = 0 } }
' "$out/build.log")
if [ -n "$warns" ]; then
	printf '%s\n' "$warns" | head -40
	die "kernel build: warnings in the Rust core, its shim or the patched files (log: $out/build.log)"
fi
# The post-link call-site tool (tools/sites, README "Call sites after the
# link"): every call site recorded in vmlinux checked against the symbol
# table, the bytes the kernel expects and CALL_OPS alignment.  A site the
# kernel would patch wrongly, or an unreadable list, fails the build;
# sites the kernel refuses too (misaligned literals) are only reported.
case $arch in
x86_64 | arm64 | riscv64)
	step "checking the call sites of $out/vmlinux (rftrace-sites)"
	# objtool already wrote the NOPs (CC_USING_NOP_MCOUNT: x86_64 built
	# with clang, the kasan variant): the sites hold no call to convert.
	nop_mcount=()
	grep -q '^CONFIG_FTRACE_MCOUNT_USE_OBJTOOL=y' "$out/.config" &&
		grep -q '^CONFIG_HAVE_OBJTOOL_NOP_MCOUNT=y' "$out/.config" &&
		nop_mcount=(--nop-mcount)
	sites_rc=0
	cargo run --quiet --release --manifest-path "$top/tools/sites/Cargo.toml" \
		--bin rftrace-sites -- --max-lines 20 "${nop_mcount[@]}" "$out/vmlinux" || sites_rc=$?
	[ "$sites_rc" = 0 ] ||
		die "rftrace-sites: exit $sites_rc on $out/vmlinux (1: a site the kernel would patch wrongly, 2: an unreadable call-site list)"
	;;
esac
rm -rf "$out/modroot"
"${mk[@]}" INSTALL_MOD_PATH="$out/modroot" INSTALL_MOD_STRIP=1 modules_install \
	>>"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; die "modules_install failed"; }
# The test modules every variant needs, stock included (selftests/modules),
# built out of tree against this build.
ext=$out/ext-modules
mkdir -p "$ext"
rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
	--exclude many/ "$top/selftests/modules/" "$ext/"
exts=("$ext")
# The benchmarks' kernels get rftrace_many too (selftests/modules/many):
# 40,000 more records when loaded, a minute of compiling, so not for the
# test kernels.
case $variant in
stock|rust)
	mkdir -p "$out/ext-many"
	rsync -a --delete --exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' \
		--exclude 'rftrace_many_gen.h' "$top/selftests/modules/many/" "$out/ext-many/"
	exts+=("$out/ext-many") ;;
esac
for e in "${exts[@]}"; do
	"${mk[@]}" M="$e" modules >>"$out/build.log" 2>&1 ||
		{ tail -20 "$out/build.log"; die "test module build failed ($e)"; }
	"${mk[@]}" M="$e" INSTALL_MOD_PATH="$out/modroot" INSTALL_MOD_STRIP=1 \
		modules_install >>"$out/build.log" 2>&1 ||
		{ tail -20 "$out/build.log"; die "test module install failed ($e)"; }
done
# The text of kernel/trace (ftrace, the tracers, the Rust core and its
# shim) as one address range, for the stack filter of the fault-injection
# selftest: the longest run of kernel/trace's symbols in System.map (a
# run survives up to two other symbols in a row, such as an alias made in
# assembly), up to the symbol after its last one.  A name defined more than
# once in System.map is left out: a compiler makes the same local name in
# every object (clang's KASAN "asan.module_ctor" would otherwise make the
# longest run one of constructors).  Written as
# "START END" into the guest's module tree.
nm_tool=$(command -v llvm-nm-19 || command -v nm)
rel=$(cat "$out/include/config/kernel.release")
"$nm_tool" --defined-only "$out/kernel/trace/built-in.a" 2>/dev/null |
	awk 'NF == 3 && $2 ~ /^[tT]$/ { print $3 }' |
	awk 'function close_run() { if (run && n > best) { best = n; bs = s; be = e }; run = 0 }
	     FNR == 1 { f++ }
	     f == 1 { mine[$1] = 1; next }
	     f == 2 { if ($2 ~ /^[tT]$/) defs[$3]++; next }
	     $3 == "_etext" { exit }
	     $2 !~ /^[tT]$/ || defs[$3] > 1 { next }
	     ($3 in mine) { if (!run) { run = 1; s = $1; n = 0 }
			    n++; gap = 0; e = ""; next }
	     run { if (e == "") e = $1; if (++gap > 2) close_run() }
	     END { close_run(); if (best) print bs, be }' - "$out/System.map" "$out/System.map" \
	>"$out/modroot/lib/modules/$rel/rftrace-trace-text"
[ -s "$out/modroot/lib/modules/$rel/rftrace-trace-text" ] ||
	die "cannot find the text of kernel/trace in $out/System.map"

step "built $out/$image in $(( $(date +%s) - start )) s"
