#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# distro-config.sh ARCH VARIANT OUT
#
# Write OUT/.config, a distribution configuration of the project's tree:
# Debian's own configuration of Linux 7.2 (package linux-config-7.2 of
# unstable, the suite linux-source-7.2 comes from; flavour amd64 for ARCH
# x86_64, arm64 for arm64) made into a test kernel, where
# scripts/build-kernel.sh starts from tinyconfig:
#   stock   CONFIG_FTRACE_RUST_CORE=n
#   rust    CONFIG_FTRACE_RUST_CORE=y (KUnit stays off as at Debian's: the
#           two kernels differ by the core alone, so that the second
#           build recompiles only what includes its option)
# Every module of Debian's (=m) is switched off but the few the tests load
# (the ftrace and trace samples, preemptirq_delay_test, and for rust the
# core's rftrace_test_sites; selftests/modules are built out of tree), and
# everything Debian builds in stays as Debian has it (IBT, the retpoline,
# return thunk and call depth mitigations, BTF, BPF, kprobes, livepatch,
# the preemption model).  Changed otherwise, each with its reason in the
# fragment below: module signing (a key the build generates instead of
# Debian's keys, which we do not have) and the system keyring's extra
# certificates (Debian's files are not in the tree).  What the QEMU
# guest needs (initramfs, serial console, devtmpfs, tracefs) is asserted
# built in: the guest has no disk, network or 9p (scripts/run-guest.sh).
#
# Then olddefconfig in OUT with the compiler of scripts/build-kernel.sh
# (gcc; arm64: aarch64-linux-gnu-gcc) and a check that every line of the
# fragment survived (RUST, FTRACE_RUST_CORE, DYNAMIC_FTRACE, on arm64
# DYNAMIC_FTRACE_WITH_CALL_OPS; a dropped RUST is explained), and a
# summary of the hardening, BPF, tracing and preemption options of the
# result.  It configures only; to build, run make with the arguments it
# prints (docs/distro-config.md).
#
# The build needs pahole: Debian builds DEBUG_INFO_BTF (pahole 1.22 or
# later), RUST beside BTF needs PAHOLE_HAS_LANG_EXCLUDE (1.24), and Kconfig
# drops BTF without a word when pahole is missing.  need_pahole
# (scripts/lib.sh) unpacks Debian unstable's through the project's private
# apt configuration, and kargs passes it to make as PAHOLE.
#
# Files: the .deb is fetched by scripts/fetch-debs.sh (private apt setup
# build/apt/distro-config-DEBARCH/, kept in build/dl/distro-config-DEBARCH/)
# and unpacked in build/distro-config/DEBARCH/.  In OUT: .config.debian
# (Debian's file as shipped), .distro-config-fragment (what was merged on
# it) and .distro-config.changes (every option whose value is not
# Debian's, with its cause).  build/distro-config/baseline-ARCH/ holds
# Debian's file after olddefconfig alone: what the host's toolchain
# changes by itself.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/config-fragment.sh"

usage="usage: distro-config.sh x86_64|arm64 stock|rust OUT"
[ $# -eq 3 ] || die "$usage"
arch=$1 variant=$2 out=$3
case $arch in
x86_64)	debarch=amd64 flavour=amd64 ;;
arm64)	debarch=arm64 flavour=arm64 ;;
*)	die "unsupported arch '$arch' (x86_64 or arm64); $usage" ;;
esac
case $variant in
stock|rust) ;;
*)	die "unknown variant '$variant' (stock or rust); $usage" ;;
esac
arch_vars "$arch"

[ -f "$SRC/kernel/trace/rftrace/Kconfig" ] ||
	die "$SRC is not the project's patched tree (no kernel/trace/rftrace/Kconfig): run scripts/prepare-tree.sh"
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ "$out" != "$(cd "$SRC" && pwd)" ] || die "OUT must be a build directory, not the tree"
dcdir=$BUILD/distro-config
mkdir -p "$dcdir"

# kmake DIR ARG...: make in the build directory DIR with the command line
# of scripts/build-kernel.sh (without -j)
kargs=(ARCH="$KARCH" LLVM="$KLLVM" CC="ccache $KCC" LIBCLANG_PATH="$LIBCLANG_PATH"
       PAHOLE="$PAHOLE_BIN")
[ -n "$CROSS" ] && kargs+=(CROSS_COMPILE="$CROSS")
kmake() { local dir=$1; shift; make -C "$SRC" O="$dir" "${kargs[@]}" "$@"; }

# --- pahole ------------------------------------------------------------------
need_pahole "Debian's config builds DEBUG_INFO_BTF"

# --- Debian's configuration ----------------------------------------------------
root=$dcdir/$debarch
"$top/scripts/fetch-debs.sh" "distro-config-$debarch" "$debarch" "$BUILD/apt/sid.list" \
	unstable "$root" linux-config-7.2
cfgdir=$root/usr/src/linux-config-7.2
cfgxz=$cfgdir/config.${debarch}_none_$flavour.xz
[ -f "$cfgxz" ] || die "no $(basename "$cfgxz") in linux-config-7.2; it has: $(ls "$cfgdir" 2>/dev/null | tr '\n' ' ')"
deb=$(sed -n 's/^\(linux-config-7\.2_.*\.deb\)$/\1/p' "$root/.packages")
debver=${deb#linux-config-7.2_}
debver=${debver%_"$debarch".deb}
debver=${debver//%3a/:}
if [ -f "$SRC/.debian-version" ] && [ "$(cat "$SRC/.debian-version")" != "$debver" ]; then
	echo "distro-config: note: Debian's config is of $debver, the tree is linux-source-7.2 $(cat "$SRC/.debian-version")"
fi
xz -dc "$cfgxz" >"$out/.config.debian"

# --- the fragment merged on Debian's configuration ---------------------------
# Modules stay modules only when they are listed here with =m.
fragment() {
	cat <<'EOF'
# Module signing: Debian's modules are signed with Debian's keys, which we
# do not have, and the file it ships names no key (no MODULE_SIG_ALL,
# MODULE_SIG_KEY or SYSTEM_TRUSTED_KEYS line).  The build generates a key
# of its own (certs/signing_key.pem in the build directory) and signs
# every module at modules_install, the out-of-tree test modules too, so
# that loading one does not taint the kernel ("module verification
# failed").  MODULE_SIG stays on, not enforcing, as Debian has it.
CONFIG_MODULE_SIG_ALL=y
CONFIG_MODULE_SIG_KEY="certs/signing_key.pem"
# Debian's own build points this at its certificates under debian/certs,
# which a tree of linux-source-7.2 does not have (the build would stop):
# empty, whatever a later file says.
CONFIG_SYSTEM_TRUSTED_KEYS=""
# The modules the tests load: the ftrace samples (ftrace-direct*,
# ftrace-ops), trace-events-sample and trace-printk (ftracetest's module
# tests), preemptirq_delay_test (ftracetest's preemptirq tests, which stay
# unsupported: Debian has IRQSOFF_TRACER and PREEMPT_TRACER off).  They
# stay xz-compressed, as Debian compresses modules: the guest's modprobe is
# busybox's (Debian 12), which reads a .ko.xz.
CONFIG_SAMPLES=y
CONFIG_SAMPLE_FTRACE_DIRECT=m
CONFIG_SAMPLE_FTRACE_DIRECT_MULTI=m
CONFIG_SAMPLE_FTRACE_OPS=m
CONFIG_SAMPLE_TRACE_EVENTS=m
CONFIG_SAMPLE_TRACE_PRINTK=m
CONFIG_PREEMPTIRQ_DELAY_TEST=m
# What the QEMU guest needs built in (Debian has it so; checked): the
# kernel boots from the gzipped initramfs of scripts/mkinitramfs.sh, with
# no disk, network or 9p, and scripts/guest/init mounts proc, sysfs,
# devtmpfs, tmpfs, tracefs and debugfs and loads modules.
CONFIG_BLK_DEV_INITRD=y
CONFIG_RD_GZIP=y
CONFIG_BINFMT_ELF=y
CONFIG_BINFMT_SCRIPT=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
CONFIG_DEVTMPFS=y
CONFIG_TMPFS=y
CONFIG_UNIX=y
CONFIG_TTY=y
CONFIG_DEBUG_FS=y
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_KALLSYMS_ALL=y
CONFIG_FTRACE=y
CONFIG_FUNCTION_TRACER=y
CONFIG_DYNAMIC_FTRACE=y
EOF
	case $arch in
	x86_64)	cat <<'EOF'
# the serial console, ttyS0
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
EOF
		;;
	arm64)	cat <<'EOF'
# -M virt's PL011 UART, ttyAMA0
CONFIG_SERIAL_AMBA_PL011=y
CONFIG_SERIAL_AMBA_PL011_CONSOLE=y
# not a prompt: listed so that the check below sees it (FTRACE_RUST_CORE
# needs it on arm64)
CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS=y
EOF
		;;
	esac
	case $variant in
	stock)	echo "# CONFIG_FTRACE_RUST_CORE is not set" ;;
	rust)	cat <<'EOF'
CONFIG_RUST=y
CONFIG_FTRACE_RUST_CORE=y
# CONFIG_FTRACE_RUST_CORE_SHADOW is not set
# rftrace_test_sites.ko (the selftests' misaligned and quarantined sites)
CONFIG_FTRACE_RUST_CORE_TEST_MODULE=m
EOF
		;;
	esac
}
frag=$out/.distro-config-fragment
fragment >"$frag"
keep=$(sed -n 's/^CONFIG_\([A-Za-z0-9_]*\)=m$/\1/p' "$frag" | LC_ALL=C sort)

# mods_off FILE: every =m of FILE not in $keep switched off
mods_off() {
	awk -v keep="$keep" '
		BEGIN { n = split(keep, k, "\n"); for (i = 1; i <= n; i++) K["CONFIG_" k[i]] = 1 }
		/^CONFIG_[A-Za-z0-9_]*=m$/ { s = substr($0, 1, index($0, "=") - 1)
					      if (!(s in K)) { print "# " s " is not set"; next } }
		{ print }' "$1" >"$1.tmp"
	mv "$1.tmp" "$1"
}

# Debian's file after olddefconfig alone, for the list of changes: what the
# host's compilers, rustc and pahole make of it (one at a time per arch).
base=$dcdir/baseline-$arch
mkdir -p "$base"
exec 8>"$base.lock"
flock 8
step "olddefconfig of Debian's $flavour config as shipped (baseline: the host's toolchain)"
cp "$out/.config.debian" "$base/.config"
kmake "$base" -s olddefconfig >"$base/olddefconfig.log" 2>&1 ||
	{ tail -20 "$base/olddefconfig.log"; die "olddefconfig of Debian's config failed"; }
exec 8>&-

step "configuring $arch/$variant from Debian's $flavour config ($debver) in $out"
cp "$out/.config.debian" "$out/.config"
mods_off "$out/.config"
(cd "$out" && KCONFIG_CONFIG=.config "$SRC/scripts/kconfig/merge_config.sh" \
	-m -O "$out" .config "$frag" >"$out/.distro-config.merge.log" 2>&1) ||
	{ tail -20 "$out/.distro-config.merge.log"; die "merge_config.sh failed"; }
# olddefconfig until no module is left but those of the fragment (a symbol
# new in 7.2's tree or ours may default to m).  An m that comes back after
# being switched off is a tristate without a prompt (Kconfig ignores a value
# given to it): accepted, with a note, when no Makefile builds anything of
# it (such as arm64's WATCHDOG_PRETIMEOUT_GOV_SEL, a governor selector).
prev=
for pass in 1 2 3 4; do
	kmake "$out" -s olddefconfig >"$out/.distro-config.olddefconfig.log" 2>&1 ||
		{ tail -20 "$out/.distro-config.olddefconfig.log"; die "olddefconfig failed"; }
	left=$(sed -n 's/^CONFIG_\([A-Za-z0-9_]*\)=m$/\1/p' "$out/.config" | LC_ALL=C sort |
	       LC_ALL=C comm -23 - <(echo "$keep"))
	[ -n "$left" ] || break
	if [ "$left" = "$prev" ]; then
		for s in $left; do
			! grep -rqs --include=Makefile --include=Kbuild "CONFIG_$s)" "$SRC" ||
				die "CONFIG_$s stays m after olddefconfig (no prompt) and builds a module"
			echo "distro-config: note: CONFIG_$s=m stays (a tristate without a prompt that builds nothing)"
		done
		break
	fi
	[ "$pass" -lt 4 ] || die "modules left after olddefconfig: $left"
	prev=$left
	mods_off "$out/.config"
done

# --- checks ------------------------------------------------------------------------
val() { # SYMBOL: its value in OUT/.config, n when not set
	local v
	v=$(sed -n "s/^CONFIG_$1=//p" "$out/.config")
	echo "${v:-n}"
}
# rust_why: the dependencies of init/Kconfig's RUST that the result breaks
rust_why() {
	[ "$(val HAVE_RUST)" = y ] ||
		echo "  HAVE_RUST=n: the architecture's conditions for Rust (arch/$KARCH/Kconfig) fail"
	if [ "$(val RUST_IS_AVAILABLE)" != y ]; then
		echo "  RUST_IS_AVAILABLE=n: the Rust toolchain; make rustavailable says:"
		kmake "$out" -s rustavailable 2>&1 | sed 's/^/    /' | tail -n 8 || true
	fi
	[ "$(val MODVERSIONS)" = y ] && [ "$(val GENDWARFKSYMS)" != y ] &&
		echo "  MODVERSIONS=y without GENDWARFKSYMS (depends on !MODVERSIONS || GENDWARFKSYMS)"
	{ [ "$(val RANDSTRUCT)" = y ] || [ "$(val GCC_PLUGIN_RANDSTRUCT)" = y ]; } &&
		echo "  RANDSTRUCT=y (depends on !RANDSTRUCT)"
	if [ "$(val DEBUG_INFO_BTF)" = y ] &&
	   { [ "$(val PAHOLE_HAS_LANG_EXCLUDE)" != y ] || [ "$(val LTO)" = y ]; }; then
		echo "  DEBUG_INFO_BTF=y with PAHOLE_HAS_LANG_EXCLUDE=$(val PAHOLE_HAS_LANG_EXCLUDE) (pahole $(val PAHOLE_VERSION), 124 needed) and LTO=$(val LTO)"
	fi
	[ "$(val CFI)" = y ] && [ "$(val HAVE_CFI_ICALL_NORMALIZE_INTEGERS_RUSTC)" != y ] &&
		echo "  CFI=y without HAVE_CFI_ICALL_NORMALIZE_INTEGERS_RUSTC"
	[ "$(val KASAN)" = y ] && [ "$(val CC_IS_CLANG)" != y ] &&
		echo "  KASAN=y with GCC (depends on !KASAN || CC_IS_CLANG)"
	[ "$(val KASAN_SW_TAGS)" = y ] && [ "$(val RUSTC_VERSION)" -lt 109600 ] &&
		echo "  KASAN_SW_TAGS=y with rustc older than 1.96"
	true
}
bad=0
rft_check_fragment "$frag" "$out/.config" || bad=1
if [ "$variant" = rust ] && [ "$(val RUST)" != y ]; then
	echo "distro-config: CONFIG_RUST was dropped; what init/Kconfig's RUST depends on and does not have:"
	rust_why
fi
[ $bad = 0 ] || die "the configuration lost what the tests need; see $out/.config"

# --- changes from Debian's file ---------------------------------------------------
# One line per option whose value in OUT/.config is not Debian's:
#   SYMBOL DEBIAN -> RESULT CAUSE
# with "-" for an option that is not in the file and n for "is not set";
# CAUSE: fragment (a line of the fragment), module (a module of Debian's
# switched off), toolchain (olddefconfig of Debian's file alone changes it
# so: the host's compilers, rustc, pahole), follows (follows from the
# others: an option of a module switched off, or one the fragment's
# options bring in).
changes=$out/.distro-config.changes
awk '
	function parse(line) {
		if (line ~ /^CONFIG_[A-Za-z0-9_]*=/) {
			sym = substr(line, 1, index(line, "=") - 1); v = substr(line, index(line, "=") + 1)
			return 1
		}
		if (line ~ /^# CONFIG_[A-Za-z0-9_]* is not set$/) {
			split(line, w, " "); sym = w[2]; v = "n"; return 1
		}
		return 0
	}
	FNR == 1 { f++ }
	!parse($0) { next }
	f == 1 { fr[sym] = v; next }
	f == 2 { deb[sym] = v; all[sym] = 1; next }
	f == 3 { bl[sym] = v; all[sym] = 1; next }
	f == 4 { res[sym] = v; all[sym] = 1; next }
	END {
		for (s in all) {
			d = (s in deb) ? deb[s] : "-"; b = (s in bl) ? bl[s] : "-"; r = (s in res) ? res[s] : "-"
			dn = (d == "-") ? "n" : d; rn = (r == "-") ? "n" : r
			if (dn == rn) continue
			if (s in fr) c = "fragment"
			else if (d == "m") c = "module"
			else if (b == r) c = "toolchain"
			else c = "follows"
			printf "%s %s -> %s %s\n", substr(s, 8), d, r, c
		}
	}' "$frag" "$out/.config.debian" "$base/.config" "$out/.config" | LC_ALL=C sort >"$changes"

# --- summary -----------------------------------------------------------------------
# on, off, or (when the option does not exist for ARCH) not listed
onoff() {
	local on=() off=() none=() s
	for s in "$@"; do
		if grep -q "^CONFIG_$s=[ym]$" "$out/.config"; then on+=("$s")
		elif grep -q "^# CONFIG_$s is not set$" "$out/.config" ||
		     grep -rqs --include='Kconfig*' "^[[:space:]]*\(menu\)\?config $s$" \
			"$SRC/arch/$KARCH" "$SRC/arch/Kconfig" "$SRC/init" "$SRC/kernel" \
			"$SRC/lib" "$SRC/security" "$SRC/mm"; then off+=("$s")
		else none+=("$s")
		fi
	done
	echo "  on:  ${on[*]:-(none)}"
	echo "  off: ${off[*]:-(none)}"
	[ ${#none[@]} = 0 ] || echo "  not options of $arch: ${none[*]}"
}
model=
for s in PREEMPT_NONE PREEMPT_VOLUNTARY PREEMPT PREEMPT_LAZY PREEMPT_RT; do
	[ "$(val $s)" != y ] || model="$model $s"
done
count() { awk -v c="$1" '$NF == c' "$changes" | wc -l; }

echo "== distro-config $arch/$variant: Debian linux-config-7.2 $debver, flavour $flavour -> $out/.config"
onoff X86_KERNEL_IBT MITIGATION_RETPOLINE MITIGATION_RETHUNK MITIGATION_CALL_DEPTH_TRACKING \
	CALL_THUNKS CALL_PADDING FINEIBT ARM64_BTI_KERNEL ARM64_PTR_AUTH_KERNEL DEBUG_INFO_BTF \
	BPF_SYSCALL BPF_JIT KPROBES LIVEPATCH MODULE_SIG
echo "  preemption:${model:- (none)}, PREEMPT_DYNAMIC=$(val PREEMPT_DYNAMIC)"
callops=
[ "$arch" != arm64 ] || callops=" DYNAMIC_FTRACE_WITH_CALL_OPS=$(val DYNAMIC_FTRACE_WITH_CALL_OPS)"
echo "  rftrace: RUST=$(val RUST) FTRACE_RUST_CORE=$(val FTRACE_RUST_CORE) KUNIT=$(val KUNIT)" \
	"DYNAMIC_FTRACE=$(val DYNAMIC_FTRACE)$callops"
echo "  modules: $(grep -c '=m$' "$out/.config") ($(grep '=m$' "$out/.config" | sed 's/^CONFIG_//; s/=m$//' | tr '\n' ' ' | sed 's/ $//'))"
echo "  changed from Debian's: $(count fragment) by the fragment, $(count module) modules off," \
	"$(count follows) following from those, $(count toolchain) by the host's toolchain" \
	"(each in $changes)"
awk '$NF == "fragment" { print "    " $1 ": " $2 " -> " $4 }' "$changes"
lost=$(awk '$NF == "toolchain" && $2 == "y" { print $1 }' "$changes" | tr '\n' ' ')
[ -z "$lost" ] || echo "  built in at Debian's, dropped by the host's toolchain: ${lost% }"
# what the project's own test kernels have (configs/ARCH.config) and this
# one does not: Debian's choice, left as it is (tests that need it are
# unsupported on stock and rust alike)
unlike=
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) grep -qx -- "$line" "$out/.config" ||
		unlike="$unlike ${line#CONFIG_}(here: $(val "$(sed 's/^CONFIG_//; s/=.*//' <<<"$line")"))" ;;
	esac
done <"$top/configs/$arch.config"
[ -z "$unlike" ] || echo "  unlike configs/$arch.config:$unlike"
echo "  to build (not done here): make -C $SRC O=$out$(printf ' %q' "${kargs[@]}") -j\$(nproc), then modules"
