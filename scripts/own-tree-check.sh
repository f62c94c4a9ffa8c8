#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# own-tree-check.sh [--jobs N]
#
# The README's "Your own tree" path, tried from nothing, as a kernel
# developer would follow it (x86_64 only):
#
#   1. apply   a fresh tree, build/own-tree/linux-7.2 (wiped first), from
#              the cached build/dl/linux-source-7.2_*.deb, made a git
#              repository as the README says (git init, git add -A -f,
#              git commit); the series written by scripts/mkseries.sh
#              into build/own-tree/series; applied with
#              `git am --empty=drop series/*.patch`
#   2. config  tinyconfig, the project's fragment of the "rust" variant
#              (scripts/config-fragment.sh) merged on top, olddefconfig,
#              in build/own-tree/out (wiped first); every fragment line
#              must survive, CONFIG_FTRACE_RUST_CORE=y among them
#   3. build   make (vmlinux, bzImage, modules) and modules_install, with
#              build-kernel.sh's toolchain (gcc through ccache, the Rust
#              toolchain, LIBCLANG_PATH, build/tools/bin); log:
#              build/own-tree/build.log
#   4. boot    scripts/run-guest.sh pointed at this tree (RFTRACE_BUILD=
#              build/own-tree, RFT_SRC=its linux-7.2; out-x86_64-rust is a
#              link to out), guest mode "demo" (scripts/guest/init); the
#              log (build/own-tree/guest.log) must hold the boot line
#              "rftrace: Rust dynamic ftrace core active"
#   5. trace   and the demo's trace with set_ftrace_filter "schedule" and
#              the function tracer on must hold an entry of schedule
#
# Then "N passed, N failed" (one check a step; a step after a failed one
# is not run and counts as failed).  Every make runs under nice -n 19.
# The patches are sent as yours (mkseries.sh): the git identity, or
# RFT_AUTHOR; without either, "Own Tree Check <own-tree-check@localhost>"
# is used for this run only.  A cold run is a full kernel build (15-25
# minutes on two CPUs); too slow for scripts/test.sh.
# Exit status: 0 if all five checks passed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/config-fragment.sh"

jobs=${JOBS:-$(nproc)}
while [ $# -gt 0 ]; do
	case $1 in
	--jobs)	jobs=${2:?--jobs needs a number}; shift 2 ;;
	-h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)	die "unknown argument $1 (see --help)" ;;
	esac
done
[ "$(uname -m)" = x86_64 ] || die "x86_64 hosts only"
arch=x86_64 variant=rust
arch_vars "$arch"

own=$BUILD/own-tree
tree=$own/linux-7.2
out=$own/out
series=$own/series
mkdir -p "$own"
exec 9>"$own/.lock"
flock -n 9 || die "another own-tree-check.sh is running"

nice19=(nice -n 19)
t_start=$SECONDS

# The identity of the patches and of the tree's commits: the user's if
# git has one, else a throw-away one for this run (never written to a
# git config file).
if [ -z "${RFT_AUTHOR:-}" ] &&
   { [ -z "$(git -C "$top" config user.name || true)" ] ||
     [ -z "$(git -C "$top" config user.email || true)" ]; }; then
	export RFT_AUTHOR="Own Tree Check <own-tree-check@localhost>"
fi
if [ -n "${RFT_AUTHOR:-}" ] &&
   { [ -z "$(git config --global user.name || true)" ] ||
     [ -z "$(git config --global user.email || true)" ]; }; then
	[[ $RFT_AUTHOR =~ ^(.*[^ ])\ \<(.*)\>$ ]] || die "RFT_AUTHOR must read \"Name <mail>\""
	export GIT_AUTHOR_NAME=${BASH_REMATCH[1]} GIT_AUTHOR_EMAIL=${BASH_REMATCH[2]}
	export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
fi

passed=0 failed=0 base_ver='?' src_rev='?'
ok() { passed=$((passed + 1)); step "ok   $*"; }
fail() { failed=$((failed + 1)); step "FAIL $*"; }
# finish: the closing line; the steps not reached count as failed.
finish() {
	failed=$((5 - passed))
	step "own tree: linux-source-7.2 $base_ver, series of $src_rev, $((SECONDS - t_start)) s"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ] && exit 0
	exit 1
}

# --- 1. the tree, the series, git am ---------------------------------------
deb=$(ls "$BUILD"/dl/linux-source-7.2_*.deb 2>/dev/null | tail -1 || true)
[ -n "$deb" ] || die "no build/dl/linux-source-7.2_*.deb (run scripts/setup.sh)"
base_ver=$(basename "$deb" | sed 's/^linux-source-7.2_//; s/_all.deb$//')
step "extracting $(basename "$deb") into $tree (wiped first)"
rm -rf "$tree" "$out" "$own/out-$arch-$variant"
mkdir -p "$tree"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-7.2.tar.xz |
	"${nice19[@]}" xz -dc | tar -x -C "$tree" --strip-components=1 ||
	die "cannot extract the source from $(basename "$deb")"
echo "$base_ver" >"$tree/.debian-version"

step "git init, add, commit (README: Your own tree)"
(cd "$tree" && git init -q && git config gc.auto 0 &&
 "${nice19[@]}" git add -A -f . &&
 git -c commit.gpgsign=false commit -q -m "linux-source-7.2 $base_ver") ||
	die "cannot commit the pristine tree"

# mkseries.sh takes the core and patches/ from the working copy: say
# which commit that is, and whether it had changes of its own.
src_rev=$(git -C "$top" rev-parse --short HEAD)
git -C "$top" diff --quiet HEAD -- Kbuild Kconfig rust c include patches docs/kernel ||
	src_rev="$src_rev + uncommitted changes"
step "writing the series: scripts/mkseries.sh $series (working copy: $src_rev)"
if ! "$top/scripts/mkseries.sh" "$series" 2>&1 | sed 's/^/    /'; then
	fail "apply: scripts/mkseries.sh could not write the series"
	finish
fi

step "git am --empty=drop series/*.patch"
if (cd "$tree" && "${nice19[@]}" git -c commit.gpgsign=false am -q --empty=drop \
	"$series"/*.patch) >"$own/am.log" 2>&1; then
	n=$(($(git -C "$tree" rev-list --count HEAD) - 1))
	ok "apply: $n patches applied with git am ($(ls "$series"/*.patch | wc -l) files with the cover letter)"
else
	sed 's/^/    /' "$own/am.log"
	cur=$(cat "$tree/.git/rebase-apply/next" 2>/dev/null || echo '?')
	fail "apply: the series does not apply to linux-source-7.2 $base_ver with git am (stopped at patch $cur of the files; log: am.log)"
	finish
fi

# --- 2. configuration -------------------------------------------------------
# build-kernel.sh's toolchain: gcc through ccache, LIBCLANG_PATH for
# bindgen (lib.sh: also CCACHE_DIR and build/tools/bin on PATH).  The base
# directory makes ccache's keys independent of where the checkout lies.
export CCACHE_BASEDIR=$top
mk=("${nice19[@]}" make -C "$tree" O="$out" ARCH="$KARCH" LLVM="$KLLVM"
    CC="ccache $KCC" -j"$jobs" LIBCLANG_PATH="$LIBCLANG_PATH")
mkdir -p "$out"
rft_config_fragment "$arch" "$variant" >"$own/fragment"
step "configuring: tinyconfig, the $variant fragment, olddefconfig"
if rft_configure -f "$tree" "$out" "$own/fragment" "${mk[@]}" >"$own/config.log" 2>&1 &&
   grep -qx 'CONFIG_FTRACE_RUST_CORE=y' "$out/.config"; then
	ok "config: every line of the $variant fragment kept, CONFIG_FTRACE_RUST_CORE=y"
else
	sed 's/^/    /' "$own/config.log" | tail -20
	fail "config: the fragment was not honoured (CONFIG_FTRACE_RUST_CORE=$(sed -n 's/^CONFIG_FTRACE_RUST_CORE=//p' "$out/.config" 2>/dev/null))"
	finish
fi

# --- 3. build ---------------------------------------------------------------
step "building in $out (-j$jobs, nice 19, ccache)"
b_start=$SECONDS
if "${mk[@]}" >"$own/build.log" 2>&1 &&
   "${mk[@]}" INSTALL_MOD_PATH="$out/modroot" INSTALL_MOD_STRIP=1 \
	modules_install >>"$own/build.log" 2>&1 &&
   [ -f "$out/$KIMAGE" ]; then
	ok "build: $KIMAGE and modules in $((SECONDS - b_start)) s ($(cat "$out/include/config/kernel.release"))"
else
	tail -30 "$own/build.log" | sed 's/^/    /'
	fail "build: make failed (log: build.log)"
	finish
fi

# --- 4, 5. boot and trace ---------------------------------------------------
# run-guest.sh and mkinitramfs.sh take the build directory from
# RFTRACE_BUILD (build/own-tree/out-x86_64-rust: the link to out) and the
# tree (ftracetest) from RFT_SRC.  trace-cmd for the guest: the unpacked
# packages of build/x86_64-tools, copied when there (else the initramfs
# goes without, which the demo does not need).
ln -sfn out "$own/out-$arch-$variant"
if [ -f "$BUILD/x86_64-tools/.packages" ] && [ ! -f "$own/x86_64-tools/.packages" ]; then
	rm -rf "$own/x86_64-tools"
	cp -a "$BUILD/x86_64-tools" "$own/x86_64-tools"
fi
log=$own/guest.log
rm -f "$log"
grc=0
step "packing the initramfs: scripts/mkinitramfs.sh $variant"
RFTRACE_BUILD=$own RFT_SRC=$tree "${nice19[@]}" "$top/scripts/mkinitramfs.sh" \
	"$variant" "$arch" >"$own/initramfs.log" 2>&1 || {
	sed 's/^/    /' "$own/initramfs.log" | tail -20
	grc=initramfs
}
if [ "$grc" = 0 ]; then
	step "booting under QEMU: scripts/run-guest.sh $variant demo (log: guest.log)"
	RFTRACE_BUILD=$own RFT_SRC=$tree RFT_LOG=$log RFT_NO_MKINITRAMFS=1 \
		RFT_TIMEOUT=${RFT_TIMEOUT:-1200} \
		"$top/scripts/run-guest.sh" "$variant" demo >/dev/null || grc=$?
fi
clean=$(tr -d '\r' <"$log" 2>/dev/null || true)
boot=$(printf '%s\n' "$clean" | grep -a -m1 -o 'rftrace: Rust dynamic ftrace core active.*' || true)
if [ -n "$boot" ]; then
	ok "boot line: $boot"
else
	fail "boot line: no 'rftrace: Rust dynamic ftrace core active' in guest.log (run-guest.sh rc=$grc)"
fi
# The demo's trace with set_ftrace_filter "schedule": the lines after its
# heading, up to the next "==" line; an entry reads "... schedule <-caller".
traced=$(printf '%s\n' "$clean" |
	awk '/^== trace with filter .schedule./ { on = 1; next }
	     on && /^(==|@@RFT)/ { exit }
	     on && /[: ]schedule <-/ { print; exit }')
if [ -n "$traced" ]; then
	ok "traced function: schedule, set_ftrace_filter and the function tracer: $(echo "$traced" | sed 's/^ *//')"
else
	fail "traced function: no entry of schedule in the demo's filtered trace (guest.log, run-guest.sh rc=$grc)"
fi
finish
