#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-commit.sh COMMIT NAME [VARIANT]
#
# Builds the kernel of the project as it was at COMMIT (variant "rust"
# unless VARIANT says otherwise), with that commit's own scripts, patches
# and sources, and links it as build/out-ARCH-NAME, so that the bench and
# the profile boot it beside today's kernels in the same run:
#
#   scripts/build-commit.sh 5f21cd0 filing
#   scripts/bench.sh --no-build --variants stock,filing,rust --icount ...
#   scripts/profile.sh --what tracer filing rust
#
# The commit is checked out in a worktree, build/NAME-tree, and built in
# its own build directory, build/NAME (RFTRACE_BUILD), which shares the
# downloads, tools and ccache of build/ and starts from a copy of
# build/linux-7.2 (so run scripts/setup.sh first): the commit's
# prepare-tree.sh takes off the patches applied there and applies its own.
# A second run rebuilds incrementally. Commits whose scripts do not know
# RFTRACE_BUILD or the applied-patches record (build/linux-7.2/
# .rftrace-applied) cannot be built this way.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

commit=${1:?usage: build-commit.sh COMMIT NAME [VARIANT]}
name=${2:?usage: build-commit.sh COMMIT NAME [VARIANT]}
variant=${3:-rust}
case $name in
stock | rust | shadow | debug | kcsan | stock-* | rust-* | shadow-*)
	die "NAME $name is a variant of today's tree: pick another" ;;
*[!A-Za-z0-9_-]*) die "NAME: letters, digits, - and _ only" ;;
esac
git -C "$top" rev-parse --verify -q "$commit^{commit}" >/dev/null || die "no commit $commit"
[ -d "$SRC" ] || die "no kernel tree at $SRC: run scripts/setup.sh"

tree=$BUILD/$name-tree
dir=$BUILD/$name
if [ -d "$tree" ]; then
	git -C "$tree" checkout -q --detach "$commit"
else
	# a worktree of an earlier build/ that was deleted since
	git -C "$top" worktree prune
	git -C "$top" worktree add -q --detach "$tree" "$commit"
fi
mkdir -p "$dir"
for d in apt tools ccache dl x86_64-tools arm64-root riscv64-root; do
	[ -e "$BUILD/$d" ] && ln -sfn "../$d" "$dir/$d"
done
if [ ! -d "$dir/linux-7.2" ]; then
	step "copying $SRC to $dir/linux-7.2"
	cp -a "$SRC" "$dir/linux-7.2.new"
	rm -rf "$dir/linux-7.2.new/kernel/trace/rftrace"
	mv "$dir/linux-7.2.new" "$dir/linux-7.2"
fi
step "building $name ($commit, $RFT_ARCH/$variant) in $dir"
(cd "$tree" && RFTRACE_BUILD=$dir RFT_SRC=$dir/linux-7.2 \
	scripts/build-kernel.sh "$variant" "$RFT_ARCH")
[ -d "$dir/out-$RFT_ARCH-$variant" ] || die "no $dir/out-$RFT_ARCH-$variant"
ln -sfn "$name/out-$RFT_ARCH-$variant" "$BUILD/out-$RFT_ARCH-$name"
step "built: $BUILD/out-$RFT_ARCH-$name ($(git -C "$top" log -1 --format='%h %s' "$commit" | cut -c1-60))"
