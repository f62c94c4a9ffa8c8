# SPDX-License-Identifier: GPL-2.0
# Shared settings for the project's scripts.  Source it; do not run it.

top=${top:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${RFTRACE_BUILD:-$top/build}
SRC=${RFT_SRC:-$BUILD/linux-7.2}
BINDGEN_VERSION=0.72.1
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export PATH="$BUILD/tools/bin:$PATH"
export CCACHE_DIR=$BUILD/ccache
# Room for the distribution kernels too (full debug info: about 3 GiB of
# cache each).  The build directory (the compiler's working directory
# with O=) is left out of the hash: every variant's object of an
# unchanged file is the same, and only DW_AT_comp_dir names the other
# build directory.
export CCACHE_MAXSIZE=20G
export CCACHE_NOHASHDIR=true

step() { printf '==> [%(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Target architecture: RFT_ARCH (x86_64 by default, arm64 or riscv64).
# Every script that builds, packs or boots takes it from the environment.
RFT_ARCH=${RFT_ARCH:-x86_64}
export RFT_ARCH

# arch_vars ARCH: the per-architecture facts, as KARCH (the kernel's ARCH=),
# KIMAGE (boot image in the build directory), CROSS (CROSS_COMPILE prefix,
# empty for a native build; also the guest's library triplet), KLLVM (the
# kernel's LLVM=: empty for GCC, -19 for clang-19 and the LLVM 19 tools),
# KCC (the compiler, without ccache), QEMU (system emulator) and CONSOLE
# (the guest's serial console).  riscv64 is built with clang: 7.2 allows
# Rust on riscv only with CC_IS_CLANG.
arch_vars() {
	case $1 in
	x86_64)	KARCH=x86 KIMAGE=arch/x86/boot/bzImage CROSS=
		KLLVM='' KCC=gcc
		QEMU=qemu-system-x86_64 CONSOLE=ttyS0 ;;
	arm64)	KARCH=arm64 KIMAGE=arch/arm64/boot/Image CROSS=aarch64-linux-gnu-
		KLLVM='' KCC=${CROSS}gcc
		QEMU=qemu-system-aarch64 CONSOLE=ttyAMA0 ;;
	riscv64) KARCH=riscv KIMAGE=arch/riscv/boot/Image CROSS=riscv64-linux-gnu-
		KLLVM=-19 KCC=clang-19
		QEMU=qemu-system-riscv64 CONSOLE=ttyS0 ;;
	*) die "unsupported arch '$1' (RFT_ARCH: x86_64, arm64 or riscv64)" ;;
	esac
}

# variant_vars VARIANT: what a build variant changes in arch_vars (call it
# after).  The KASAN variants of x86_64 and arm64 are built with clang-19
# and the LLVM 19 tools: 7.2's RUST depends on !KASAN || CC_IS_CLANG.
variant_vars() {
	case $1 in
	kasan|stock-kasan)
		[ -n "$KLLVM" ] || { KLLVM=-19 KCC=clang-19; } ;;
	esac
}

# core_rustc_cmd VARIANT SRC WORK: the rustc command the last kernel build
# of VARIANT (arch from RFT_ARCH) compiled the core with, reading SRC
# instead of the tree's copy and writing its outputs into WORK; sets
# $core_out (the build directory to run it in) and $core_cmd.
core_rustc_cmd() {
	local variant=$1 src_new=$2 work=$3 cmdfile src
	core_out=$BUILD/out-$RFT_ARCH-$variant
	cmdfile=$core_out/kernel/trace/rftrace/rust/.rftrace.o.cmd
	[ -f "$cmdfile" ] ||
		die "no kernel build in $core_out (scripts/build-kernel.sh $variant)"
	core_cmd=$(sed -n 's/^savedcmd_kernel\/trace\/rftrace\/rust\/rftrace.o := //p' "$cmdfile")
	src=$(sed -n 's/^source_kernel\/trace\/rftrace\/rust\/rftrace.o := //p' "$cmdfile")
	core_cmd=${core_cmd//"$src"/"$src_new"}
	core_cmd=${core_cmd//--out-dir kernel\/trace\/rftrace\/rust\//--out-dir "$work/"}
	core_cmd=${core_cmd//--emit=dep-info=kernel\/trace\/rftrace\/rust\/.rftrace.o.d/--emit=dep-info="$work/x.d"}
	core_cmd=${core_cmd//--emit=obj=kernel\/trace\/rftrace\/rust\/rftrace.o/--emit=obj="$work/rftrace.o"}
}

# config_only_off ARCH VARIANT: the files of selftests/expected/config-only.list
# whose kernel option is not =y in that build's .config, '|'-joined (they
# may be UNSUPPORTED there, and are skipped).
config_only_off() {
	local cf copt out=
	while read -r cf copt; do
		grep -qx "$copt=y" "$BUILD/out-$1-$2/.config" 2>/dev/null ||
			out=${out:+$out|}$cf
	done < <(grep -v '^#' "$top/selftests/expected/config-only.list")
	echo "$out"
}

# kunit_counts LOG: "PASSED FAILED UNFINISHED" of the core's KUnit suites
# (rftrace_<module>) in the console log LOG of a kunit-mode boot, read
# from the KTAP the guest's init prints again once the kernel is up (the
# lines without a time stamp), not from the "# rftrace_X: pass:N"
# summaries, which KUnit leaves out for a suite of one case.
kunit_counts() {
	tr -d '\r' <"$1" | awk -f "$top/scripts/guest/kunit-cases.awk"
}

# kunit_clean LOG: true if those suites ran, each to its end, with at
# least one case passed and none failed.
kunit_clean() {
	kunit_counts "$1" | awk '{ exit !($1 > 0 && $2 == 0 && $3 == 0) }'
}

# apt_need WHY PKG...: installs the Debian packages of PKG that are
# missing, with the project's own apt configuration (build/apt, from
# scripts/setup.sh; the machine's is never edited).
apt_need() {
	local why=$1 apt_dir apt_main sudo_ p missing=()
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	apt_dir=$BUILD/apt
	[ -f "$apt_dir/sources.list" ] || die "no $apt_dir/sources.list: run scripts/setup.sh first"
	apt_main=(-o Dir::Etc::sourceparts=/dev/null
		  -o Dir::State::Lists="$apt_dir/lists"
		  -o Dir::Cache::Archives="$apt_dir/archives"
		  -o APT::Get::List-Cleanup=0
		  -o Dir::Etc::sourcelist="$apt_dir/sources.list")
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
	sudo_=""
	[ "$(id -u)" = 0 ] || sudo_=sudo
	step "apt: installing ${missing[*]} ($why)"
	if [ ! -e "$apt_dir/updated" ] ||
	   [ -n "$(find "$apt_dir/updated" -mmin +720 2>/dev/null)" ]; then
		$sudo_ apt-get "${apt_main[@]}" update -q >"$BUILD/apt-update.log" 2>&1 ||
			die "apt-get update failed, see $BUILD/apt-update.log"
		touch "$apt_dir/updated"
	fi
	DEBIAN_FRONTEND=noninteractive $sudo_ apt-get "${apt_main[@]}" install -y -q \
		--no-install-recommends "${missing[@]}" >>"$BUILD/apt-install.log" 2>&1 ||
		die "apt-get install ${missing[*]} failed, see $BUILD/apt-install.log"
}

# The pahole the bpf variants build BTF with: Debian unstable's (1.32),
# unpacked with its libraries under build/tools/pahole-root by need_pahole
# and run through its own dynamic loader (it needs a newer C library than
# the host's).  Bookworm's 1.24 builds BTF but declares none of the
# kernel's BPF kfuncs (pahole 1.27's decl_tag_kfuncs), which the BPF
# selftests' programs take from vmlinux.h.  RFT_PAHOLE names another.
PAHOLE_BIN=${RFT_PAHOLE:-$BUILD/tools/pahole}

# pahole_version: PAHOLE_BIN's version as Kconfig sees it (0 if none).
pahole_version() {
	local v
	v=$("$SRC/scripts/pahole-version.sh" "$PAHOLE_BIN" 2>/dev/null) || v=0
	echo "${v:-0}"
}

# need_pahole WHY: unpacks Debian unstable's pahole (scripts/fetch-debs.sh,
# the project's own apt configuration) unless PAHOLE_BIN is there and 1.27
# or later.
need_pahole() {
	local v root=$BUILD/tools/pahole-root
	[ "$(pahole_version)" -ge 127 ] && return 0
	[ -n "${RFT_PAHOLE:-}" ] && die "RFT_PAHOLE=$RFT_PAHOLE is not pahole 1.27 or later ($1)"
	step "pahole: Debian unstable's, unpacked under $root ($1)"
	"$top/scripts/fetch-debs.sh" pahole amd64 "$BUILD/apt/sid.list" unstable "$root" \
		pahole libdwarves1 libbpf1 libelf1t64 libdw1t64 libc6 libgcc-s1 \
		zlib1g libzstd1 liblzma5 libbz2-1.0 ||
		die "could not fetch pahole from Debian unstable"
	mkdir -p "$(dirname "$PAHOLE_BIN")"
	printf '%s\n' '#!/bin/sh' \
		'# Debian unstable'"'"'s pahole with its own C library (scripts/lib.sh need_pahole)' \
		"r=$root" \
		'exec "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \' \
		'	--library-path "$r/usr/lib/x86_64-linux-gnu" "$r/usr/bin/pahole" "$@"' \
		>"$PAHOLE_BIN"
	chmod +x "$PAHOLE_BIN"
	v=$(pahole_version)
	[ "$v" -ge 127 ] || die "pahole from $root reports version $v, 1.27 or later is needed ($1)"
}

# bpf_test_set ARCH: the kernel BPF selftests (test_progs -t names: each
# selects the tests whose names contain it) that
# judge the core as a BPF client (scripts/bpf-test.sh): BPF trampolines
# (fentry, fexit, fmod_ret, fsession), the tracing_multi link, kprobe.multi
# (fprobe), kprobes, modules and the refusals.
bpf_test_set() {
	echo "fentry_test fexit_test fentry_fexit fexit_stress fexit_sleep" \
	     "modify_return trampoline_count recursive_fentry fentry_attach_stress" \
	     "fentry_attach_btf_presence fsession_test" \
	     "tracing_multi kprobe_multi_test kprobe_multi_bench_attach" \
	     "kprobe_multi_testmod_test" \
	     "module_attach module_fentry_shadow attach_probe tracing_failure" \
	     "get_func_ip_test livepatch_trampoline"
}

# stage_host_libs STAGE FILE [BESIDE]: copies the shared libraries a host
# program FILE needs (ldd; with LD_LIBRARY_PATH=BESIDE, whose own
# libraries are left out: they travel beside the program) to the same
# paths under STAGE, for a cpio appended to a guest's initramfs.
stage_host_libs() {
	local stage=$1 f=$2 beside=${3:-} lib
	LD_LIBRARY_PATH=$beside ldd "$f" 2>/dev/null |
	awk '/=> \//{print $3} /^[[:space:]]*\/[^ ]*ld-linux/{print $1}' |
	while read -r lib; do
		[ -n "$beside" ] && case $lib in "$beside"/*) continue ;; esac
		[ -e "$stage$lib" ] && continue
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done
}

# bpftrace_bundle DIR [FILE...]: Debian's bpftrace (installed on the host
# if missing) with its libraries, and FILEs beside it, packed for the
# guest's initramfs (RFT_INITRD_EXTRA) as DIR/bundle.cpio, where the guest
# finds them in /rftrace/bpftrace.  Sets $bt to the host's bpftrace.
bpftrace_bundle() {
	local dir=$1 stage=$1/stage f
	shift
	apt_need "bpftrace for the guest" bpftrace
	bt=$(command -v bpftrace) || die "no bpftrace after installing it"
	rm -rf "$stage"
	mkdir -p "$stage/rftrace/bpftrace"
	for f in "$@"; do cp "$f" "$stage/rftrace/bpftrace/"; done
	cp -L "$bt" "$stage/rftrace/bpftrace/bpftrace"
	stage_host_libs "$stage" "$bt"
	# The initramfs's /lib, /lib64, /bin and /sbin are links into /usr
	# (mkinitramfs.sh): a directory of the same name in the bundle would
	# replace the link, and hide /lib/modules.
	for f in bin sbin lib lib64; do
		[ -d "$stage/$f" ] || continue
		mkdir -p "$stage/usr/$f"
		cp -a "$stage/$f/." "$stage/usr/$f/"
		rm -rf "${stage:?}/$f"
	done
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$dir/bundle.cpio"
}
