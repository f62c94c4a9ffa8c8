#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mkseries.sh [--rev REV] [OUTDIR]
#
# Writes the project as a patch series for a Linux 7.2 tree, one mail per
# file, for `git am OUTDIR/*.patch` (default OUTDIR: build/series; its old
# *.patch files are removed first):
#
#   0001  the fixes of 7.2 defects that stand alone (patches/*.patch
#   ...   whose lines never name the core), in their order, renumbered
#   NNNN  kernel/trace: add the Rust dynamic ftrace core
#         (generated: Kbuild, Kconfig, rust/, c/ and include/ as new files
#         under kernel/trace/rftrace/, the file set scripts/prepare-tree.sh
#         copies)
#   ...   the other patches/*.patch (the hooks), in their order, renumbered
#         (the last one hooks kernel/trace/rftrace/ into Kconfig and Kbuild)
#
# The fixes come first so that upstream can take them alone, and each
# prefix of them is 7.2 with fixes.  The core's directory comes just
# before the first hook, not just before the Kconfig/Kbuild patch: the
# hook patches include its interface header (kernel/trace/ftrace.c
# includes rftrace/include/rftrace.h whatever the configuration), so
# without it no later prefix would compile.  Nothing in the directory is
# built before the last patch.
#
# The files come from the working copy, as prepare-tree.sh takes them, or
# with --rev from a commit (tracked files only), patches/ included.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

rev=
while [ $# -gt 0 ]; do
	case $1 in
	--rev)	rev=${2:?--rev needs a commit}; shift 2 ;;
	-h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*)	die "unknown option $1" ;;
	*)	break ;;
	esac
done
out=${1:-$BUILD/series}

author='rftrace developers <rftrace@localhost>'
crate_paths=(Kbuild Kconfig rust c include)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$rev" ]; then
	git -C "$top" rev-parse -q --verify "$rev^{commit}" >/dev/null ||
		die "no commit $rev"
	mkdir "$tmp/src"
	git -C "$top" archive "$rev" "${crate_paths[@]}" patches | tar -x -C "$tmp/src"
	src=$tmp/src
else
	rev=HEAD
	src=$top
fi

patches=()
for p in "$src"/patches/*.patch; do
	[ -f "$p" ] && patches+=("$p")
done
[ ${#patches[@]} -gt 0 ] || die "no patches in $src/patches"
# The symbol must come last: every earlier prefix is then the stock kernel.
grep -q '^+source "kernel/trace/rftrace/Kconfig"' "${patches[-1]}" ||
	die "the last patch, $(basename "${patches[-1]}"), does not add the Kconfig hook"
for p in "${patches[@]::${#patches[@]}-1}"; do
	grep -q '^+source "kernel/trace/rftrace/Kconfig"' "$p" &&
		die "$(basename "$p") adds the Kconfig hook, but is not the last patch"
done

# The core's directory, committed in a scratch repository: paths in the
# patch are the kernel tree's, nothing of this machine.  The file set and
# the exclusions are prepare-tree.sh's rsync (keep them in step).
repo=$tmp/repo
dest=$repo/kernel/trace/rftrace
mkdir -p "$dest"
git -C "$repo" init -q
rsync -a --exclude '*.o' --exclude '.*.cmd' --exclude '*.rmeta' \
	--exclude '*.a' --exclude 'modules.order' \
	"${crate_paths[@]/#/$src/}" "$dest/"
git -C "$repo" add -A -f .
# The date of the last commit of the core's files: the same files give
# the same patch.
date=$(git -C "$top" log -1 --format=%aD "$rev" -- "${crate_paths[@]}")
GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=rftrace@localhost \
GIT_COMMITTER_NAME=${author% <*} GIT_COMMITTER_EMAIL=rftrace@localhost \
GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
git -C "$repo" -c commit.gpgsign=false commit -q -F - <<EOF
kernel/trace: add the Rust dynamic ftrace core

kernel/trace/rftrace/ holds the Rust core of dynamic ftrace and its thin
C shim, selected by CONFIG_FTRACE_RUST_CORE:

- Kconfig, Kbuild: the option, its shadow-check and KUnit options and
  the test module; what is built when it is on.
- include/rftrace.h: the interface between kernel/trace/ftrace.c, the
  shims and the Rust core, both ways; bindgen turns it into the
  bindings the Rust side is checked against.
- c/: rftrace_shim.c (what the core asks of C, its reports and counters)
  and the x86 and arm64 shims (the arch hooks ftrace.c calls, forwarded
  to Rust, and text patching); rftrace_test_sites.c, the test module
  with patch sites of every alignment.
- rust/rftrace.rs: the kernel crate.  rust/rfcore/: the pure core (the
  per-record state machine, accounting, target and ops selection, the
  call-site list check, the record table, the update pass, the x86 and
  arm64 encoders and verifiers), shared with the host tests.
  rust/kside/: the kernel side (entry points, lock proofs, records, the
  update pass and its shadow comparator, KUnit tests).  rust/karch/: the
  x86 and arm64 halves of the update pass.
- rust/lib.rs, rust/tests/: the host build of rfcore and its tests
  (cargo test); Kbuild does not build them.

Nothing here is built yet: the last patch of the series hooks the
directory into Kconfig and Kbuild.

Signed-off-by: $author
EOF

mkdir -p "$out"
rm -f "$out"/*.patch
n=0 crate_done=0
name() { printf '%04d-%s.patch' "$n" "$1"; }
for p in "${patches[@]}"; do
	# The fixes that stand alone (no line of theirs names the core) come
	# first, so upstream can take them without the rest; the core's
	# directory comes just before the first patch that hooks it.
	if [ $crate_done = 0 ] && grep -q '^[-+].*\(rftrace\|RUST_CORE\)' "$p"; then
		n=$((n + 1)) crate_done=1
		git -C "$repo" format-patch -q -1 --stdout --zero-commit --no-signature \
			--binary HEAD >"$out/$(name kernel-trace-add-the-Rust-dynamic-ftrace-core)"
	fi
	n=$((n + 1))
	f=$(name "$(basename "$p" .patch | sed 's/^[0-9]*-//')")
	# An mbox From_ line as format-patch writes it; the rest as it is.
	{ echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	  cat "$p"; } >"$out/$f"
done
echo "$n patches in $out:"
for f in "$out"/*.patch; do
	printf '  %s  %s\n' "$(basename "$f" | cut -c1-4)" \
		"$(sed -n 's/^Subject: \[PATCH\] //p' "$f" | head -1)"
done
