# SPDX-License-Identifier: GPL-2.0
# The kernel configuration of a build variant: the config fragment and the
# way it is applied.  Source it after scripts/lib.sh; do not run it.
#
# Used by scripts/build-kernel.sh and scripts/series-check.sh (one copy
# of the fragment logic): configs/ARCH.config, built with -O2,
# plus the variant's lines; a "-os" suffix builds with
# CONFIG_CC_OPTIMIZE_FOR_SIZE instead, a "-gcov" suffix (after it) with
# CONFIG_GCOV_KERNEL; on riscv64 a "-norelax" suffix (before "-gcov")
# links vmlinux with --no-relax as 7.2 does (CONFIG_FTRACE_RUST_CORE_
# RISCV_RELAX=n), which the other Rust variants leave on.
#   stock   CONFIG_FTRACE_RUST_CORE=n
#   rust    CONFIG_FTRACE_RUST_CORE=y
#   shadow  CONFIG_FTRACE_RUST_CORE=y and CONFIG_FTRACE_RUST_CORE_SHADOW=y
#   debug   shadow plus lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_LIST, KFENCE,
#           fault injection (FAILSLAB, FAIL_PAGE_ALLOC) and kmemleak
#   kcsan   shadow plus KCSAN
#   kasan   debug plus generic KASAN (x86_64 builds it with clang: 7.2's
#           RUST depends on !KASAN || CC_IS_CLANG; see variant_vars)
#   stock-debug, stock-kcsan, stock-kasan
#           the stock kernel with the debug / KCSAN / KASAN options above
#           (what the Rust variants are compared with)
#   bpf, rust-bpf, stock-bpf
#           shadow / rust / stock plus what BPF tracing needs: the BPF
#           syscall and JIT, BPF events (kprobe, fentry, kprobe.multi),
#           error injection, BTF of vmlinux and modules (pahole 1.27 or
#           later: need_pahole); rust-bpf, without the shadow checks, is
#           the one to time against stock-bpf
#   debug-bpf
#           debug plus the bpf lines: the BPF selftests under lockdep

# rft_debug_options debug|kcsan: the lines the debug / KCSAN variants add,
# on the Rust kernels and on stock alike.
rft_debug_options() {
	case $1 in
	debug)	echo "CONFIG_DEBUG_KERNEL=y"
		echo "CONFIG_PROVE_LOCKING=y"
		echo "CONFIG_DEBUG_ATOMIC_SLEEP=y"
		echo "CONFIG_DEBUG_LIST=y"
		echo "CONFIG_KFENCE=y"
		# Fault injection (selftests/rftrace/fault-injection.tc)
		# and kmemleak, scanned on demand only.
		echo "CONFIG_FAULT_INJECTION=y"
		echo "CONFIG_FAILSLAB=y"
		echo "CONFIG_FAIL_PAGE_ALLOC=y"
		echo "CONFIG_FAULT_INJECTION_DEBUG_FS=y"
		echo "CONFIG_FAULT_INJECTION_STACKTRACE_FILTER=y"
		echo "CONFIG_DEBUG_KMEMLEAK=y"
		echo "# CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN is not set" ;;
	kcsan)	echo "CONFIG_DEBUG_KERNEL=y"
		echo "CONFIG_KCSAN=y" ;;
	kasan)	rft_debug_options debug
		# tinyconfig's SLUB_TINY excludes KASAN.
		echo "# CONFIG_SLUB_TINY is not set"
		echo "CONFIG_KASAN=y"
		echo "CONFIG_KASAN_GENERIC=y" ;;
	esac
}

# rft_bpf_options ARCH: the lines the bpf variants add: what the kernel's
# BPF selftests (tools/testing/selftests/bpf/config) ask for tracing.
rft_bpf_options() {
	echo "CONFIG_BPF_SYSCALL=y"
	echo "CONFIG_BPF_JIT=y"
	echo "CONFIG_BPF_EVENTS=y"
	echo "CONFIG_BPF_KPROBE_OVERRIDE=y"
	echo "CONFIG_FUNCTION_ERROR_INJECTION=y"
	echo "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT=y"
	echo "CONFIG_DEBUG_INFO_BTF=y"
	echo "CONFIG_DEBUG_INFO_BTF_MODULES=y"
	# test_progs adds its key to the session keyring before any test, and
	# fentry_test and fexit_test load signed programs (PKCS#7, which
	# MODULE_SIG selects)
	echo "CONFIG_KEYS=y"
	echo "CONFIG_MODULE_SIG=y"
	echo "CONFIG_CRYPTO_SHA256=y"
	# livepatch_trampoline: a livepatch and fentry on one function
	# (riscv has no livepatch in 7.2: HAVE_LIVEPATCH)
	if [ "${1:-}" != riscv64 ]; then
		echo "CONFIG_LIVEPATCH=y"
		echo "CONFIG_SAMPLE_LIVEPATCH=m"
	fi
	# tests that read the running kernel's options
	echo "CONFIG_IKCONFIG=y"
	echo "CONFIG_IKCONFIG_PROC=y"
	# test_progs keeps its network namespace (/proc/self/ns/net) and
	# waits for RCU with membarrier(); bpf_testmod's struct_ops look up
	# the cgroup kfuncs
	echo "CONFIG_NAMESPACES=y"
	echo "CONFIG_NET_NS=y"
	echo "CONFIG_MEMBARRIER=y"
	echo "CONFIG_CGROUPS=y"
	echo "CONFIG_CGROUP_BPF=y"
}

# rft_config_fragment ARCH VARIANT: prints the fragment.
rft_config_fragment() {
	local arch=$1 variant=${2%-gcov} base norelax=0
	case $variant in
	*-norelax) norelax=1; variant=${variant%-norelax} ;;
	esac
	base=${variant%-os}
	if [ "$base" != "$variant" ]; then
		# The -Os flavour: what tinyconfig picks, and where GCC 12 leaves
		# functions unaligned (see README).
		grep -v 'CONFIG_CC_OPTIMIZE_FOR' "$top/configs/$arch.config"
		echo "CONFIG_CC_OPTIMIZE_FOR_SIZE=y"
	else
		cat "$top/configs/$arch.config"
	fi
	case $base in
	stock)	echo "# CONFIG_FTRACE_RUST_CORE is not set" ;;
	stock-debug|stock-kcsan|stock-kasan)
		echo "# CONFIG_FTRACE_RUST_CORE is not set"
		rft_debug_options "${base#stock-}" ;;
	stock-bpf)
		echo "# CONFIG_FTRACE_RUST_CORE is not set"
		rft_bpf_options "$arch" ;;
	rust|rust-bpf)
		echo "CONFIG_FTRACE_RUST_CORE=y"
		echo "# CONFIG_FTRACE_RUST_CORE_SHADOW is not set"
		echo "CONFIG_FTRACE_RUST_CORE_KUNIT_TEST=y"
		if [ "$base" = rust-bpf ]; then rft_bpf_options "$arch"; fi ;;
	shadow|debug|kcsan|kasan|bpf|debug-bpf)
		echo "CONFIG_FTRACE_RUST_CORE=y"
		echo "CONFIG_FTRACE_RUST_CORE_SHADOW=y"
		echo "CONFIG_FTRACE_RUST_CORE_KUNIT_TEST=y"
		case $base in
		debug|kcsan|kasan) rft_debug_options "$base" ;;
		bpf) rft_bpf_options "$arch" ;;
		debug-bpf) rft_debug_options debug; rft_bpf_options "$arch" ;;
		esac ;;
	*) die "unknown variant $variant" ;;
	esac
	# riscv64 with the Rust core keeps linker relaxation for vmlinux
	# (patch 0026) unless the variant ends in "-norelax" (as 7.2 links).
	if [ "$arch" = riscv64 ] && [ "${base%%-*}" != stock ]; then
		if [ $norelax = 1 ]; then
			echo "# CONFIG_FTRACE_RUST_CORE_RISCV_RELAX is not set"
		else
			echo "CONFIG_FTRACE_RUST_CORE_RISCV_RELAX=y"
		fi
	fi
	# A "-gcov" suffix: gcov data of kernel/trace/ftrace.o in debugfs
	# (scripts/gcov-ftrace.sh; build-kernel.sh profiles that object only).
	case $2 in
	*-gcov) echo "CONFIG_GCOV_KERNEL=y" ;;
	esac
}

# rft_check_fragment FRAG CONFIG: every line of the fragment FRAG survived
# in CONFIG (a value set, or an option off); says which did not (the
# lines "config: ... was dropped (now ...)", "config: ... should be off")
# and returns 1 if one did not.
rft_check_fragment() {
	local frag=$1 config=$2 line sym now bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qx -- "$line" "$config" || {
				sym=${line%%=*}
				now=$(sed -n "s/^$sym=//p" "$config")
				echo "config: $line was dropped (now ${now:-not set})"
				bad=1
			} ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym% is not set}
			grep -q "^$sym=" "$config" &&
				{ echo "config: $sym should be off"; bad=1; } ;;
		esac
	done <"$frag"
	return $bad
}

# rft_configure [-f] SRC OUT FRAG MAKE...: configures the build directory
# OUT of the tree SRC with the fragment file FRAG (tinyconfig, the fragment
# merged on top, olddefconfig) when FRAG differs from the one OUT was last
# configured with (OUT/.rftrace-fragment), OUT has no .config, or -f is
# given (the tree's Kconfig files changed); MAKE... is the make command
# line (make -C SRC O=OUT ARCH=...).  Then checks that every line of the
# fragment survived: returns 1 (after saying which) if not.
rft_configure() {
	local force=0 src out frag
	[ "$1" = -f ] && { force=1; shift; }
	src=$1 out=$2 frag=$3
	shift 3
	if [ $force = 1 ] || ! cmp -s "$frag" "$out/.rftrace-fragment" ||
	   [ ! -f "$out/.config" ]; then
		"$@" -s tinyconfig >/dev/null || return 1
		(cd "$out" && KCONFIG_CONFIG=.config "$src/scripts/kconfig/merge_config.sh" \
			-m -O "$out" .config "$frag" >/dev/null) || return 1
		"$@" -s olddefconfig >/dev/null || return 1
		cp "$frag" "$out/.rftrace-fragment"
	fi
	rft_check_fragment "$frag" "$out/.config"
}
