#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# series-check.sh [--arch x86_64|arm64] [--rev REV] [--jobs N] [--list]
#
# Checks that the patch series scripts/mkseries.sh writes is bisectable:
# every prefix of it applies with `git am` to a pristine Linux 7.2 tree and
# builds (make vmlinux modules) with CONFIG_FTRACE_RUST_CORE=n, and with =y
# (the shadow variant's config fragment) once the series defines the
# option.
#
#   build/series-check/linux-7.2   the tree: extracted once from the cached
#                                  build/dl/linux-source-7.2_*.deb, a git
#                                  repository whose first commit (tag
#                                  "pristine") is the stock source; reset to
#                                  it at the start of every run
#   build/series-check/series      the series checked (mkseries.sh output)
#   build/series-check/out-n,-y    the two build directories, incremental
#                                  across prefixes (and runs); with ccache
#   build/series-check/logs/       NNNN-n.log, NNNN-y.log: the build logs
#   build/series-check/results     one line per patch (number, subject, =n
#                                  result, =y result, seconds), then
#                                  "N passed, N failed"
#
# --list only prints the series.  --rev REV takes the core and patches/ from
# a commit instead of the working copy (see mkseries.sh).  Every make runs
# under nice -n 19.  Exit status: 0 if every patch passed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/config-fragment.sh"

arch=$RFT_ARCH rev=() list=0 jobs=${JOBS:-$(nproc)}
while [ $# -gt 0 ]; do
	case $1 in
	--arch)	arch=${2:?--arch needs x86_64 or arm64}; shift 2 ;;
	--rev)	rev=(--rev "${2:?--rev needs a commit}"); shift 2 ;;
	--jobs)	jobs=${2:?--jobs needs a number}; shift 2 ;;
	--list)	list=1; shift ;;
	-h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*)	die "unknown argument $1 (see --help)" ;;
	esac
done
arch_vars "$arch"

if [ $list = 1 ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	"$top/scripts/mkseries.sh" "${rev[@]}" "$tmp" | tail -n +2
	exit 0
fi

dir=$BUILD/series-check
tree=$dir/linux-7.2
mkdir -p "$dir/logs"
exec 9>"$dir/.lock"
flock -n 9 || die "another series-check.sh is running"

# Whatever runs here: the lowest CPU priority (the machine is shared).
nice19=(nice -n 19)
gitc=("${nice19[@]}" git -C "$tree" -c user.name="rftrace series-check"
      -c user.email=rftrace@localhost -c commit.gpgsign=false)

step "writing the series"
"$top/scripts/mkseries.sh" "${rev[@]}" "$dir/series" | sed 's/^/    /'
# The cover letter (0000) is no patch: git am would stop on it.
mapfile -t series < <(ls "$dir"/series/*.patch | grep -v /0000-cover-letter.patch)

# The pristine tree, once.
if [ ! -d "$tree/.git" ]; then
	deb=$(ls "$BUILD"/dl/linux-source-7.2_*.deb 2>/dev/null | tail -1 || true)
	[ -n "$deb" ] || die "no build/dl/linux-source-7.2_*.deb (run scripts/setup.sh)"
	step "extracting $(basename "$deb") into $tree"
	rm -rf "$dir/deb-x" "$tree.tmp"
	"${nice19[@]}" dpkg-deb -x "$deb" "$dir/deb-x"
	mkdir -p "$tree.tmp"
	"${nice19[@]}" tar -C "$tree.tmp" --strip-components=1 \
		-xf "$dir"/deb-x/usr/src/linux-source-7.2.tar.xz
	rm -rf "$dir/deb-x"
	basename "$deb" | sed 's/^linux-source-7.2_//; s/_all.deb$//' \
		>"$tree.tmp/.debian-version"
	step "committing the pristine tree"
	git -C "$tree.tmp" init -q
	git -C "$tree.tmp" config gc.auto 0
	git -C "$tree.tmp" config core.autocrlf false
	# -f: the tarball holds files its own .gitignore files name.
	"${nice19[@]}" git -C "$tree.tmp" add -A -f .
	"${nice19[@]}" git -C "$tree.tmp" -c user.name="rftrace series-check" \
		-c user.email=rftrace@localhost -c commit.gpgsign=false commit -q \
		-m "linux-source-7.2 $(cat "$tree.tmp/.debian-version"), pristine"
	git -C "$tree.tmp" tag pristine
	mv "$tree.tmp" "$tree"
fi
step "resetting $tree to the pristine source ($(cat "$tree/.debian-version"))"
if [ -d "$tree/.git/rebase-apply" ]; then "${gitc[@]}" am --abort; fi
"${gitc[@]}" reset -q --hard
"${gitc[@]}" clean -q -fdx
"${gitc[@]}" checkout -q -B series pristine

mk() { # mk OUT ARGS...: make in the check tree, build directory OUT
	local out=$1
	shift
	"${nice19[@]}" make -C "$tree" O="$out" ARCH="$KARCH" LLVM= \
		CC="ccache ${CROSS}gcc" ${CROSS:+CROSS_COMPILE="$CROSS"} \
		-j"$jobs" LIBCLANG_PATH="$LIBCLANG_PATH" "$@"
}

# build VARIANT OUT LOG: configures OUT for the variant (again for every
# prefix: the tree's Kconfig files change along the series) and builds
# vmlinux and the modules.  Prints the result (ok, ok with warnings,
# FAIL); returns 1 on failure.
build() {
	local variant=$1 out=$2 log=$3 warn
	mkdir -p "$out"
	rft_config_fragment "$arch" "$variant" >"$out/.fragment-wanted"
	if ! rft_configure -f "$tree" "$out" "$out/.fragment-wanted" mk "$out" >"$log" 2>&1; then
		echo "FAIL (config, logs/$(basename "$log"))"
		return 1
	fi
	if ! mk "$out" vmlinux modules >>"$log" 2>&1; then
		echo "FAIL (build, logs/$(basename "$log"))"
		return 1
	fi
	warn=$(grep -c ' warning: ' "$log" || true)
	if [ "$warn" -gt 0 ]; then
		echo "ok ($warn warnings, logs/$(basename "$log"))"
	else
		echo "ok"
	fi
}

# Whether the Kconfig files the =n configuration of this prefix read (the
# list syncconfig writes) define the option.
option_defined() {
	local out=$1 hits
	mk "$out" -s syncconfig >/dev/null 2>&1 || return 1
	hits=$(sed -n 's/^\t\(.*[^\\ ]\) *\\\?$/\1/p' "$out/include/config/auto.conf.cmd" |
		(cd "$tree" && xargs grep -lx 'config FTRACE_RUST_CORE') || true)
	[ -n "$hits" ]
}

results=$dir/results
: >"$results"
passed=0 failed=0
step "checking ${#series[@]} patches for $arch (-j$jobs, nice 19, ccache)"
for p in "${series[@]}"; do
	start=$SECONDS
	num=$(basename "$p" | cut -c1-4)
	subj=$(sed -n 's/^Subject: \[PATCH\] //p' "$p" | head -1)
	n_res="not built" y_res="not built" ok=1
	if ! "${gitc[@]}" am -q "$p" >"$dir/logs/$num-am.log" 2>&1; then
		n_res="git am FAILED (logs/$num-am.log)" y_res="-" ok=0
	else
		step "$num $subj: =n"
		n_res=$(build stock "$dir/out-n" "$dir/logs/$num-n.log") || ok=0
		if option_defined "$dir/out-n"; then
			step "$num $subj: =y"
			y_res=$(build shadow "$dir/out-y" "$dir/logs/$num-y.log") || ok=0
		else
			y_res="option not defined yet (same as =n)"
		fi
	fi
	secs=$((SECONDS - start))
	line="$num | $subj | =n: $n_res | =y: $y_res | $secs s"
	echo "$line" >>"$results"
	step "$line"
	if [ $ok = 1 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		# A patch that does not apply leaves nothing to check after it.
		case $n_res in "git am FAILED"*) break ;; esac
	fi
done
# Patches after one that did not apply count as failed.
failed=$((${#series[@]} - passed))
echo "$passed passed, $failed failed" | tee -a "$results"
[ $failed = 0 ]
