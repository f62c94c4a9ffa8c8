#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Drop the project into the kernel tree as kernel/trace/rftrace/ and apply the
# project's own small kernel patches (patches/*.patch).  Re-running it brings
# the tree in line with the working copy: the previously applied patch set is
# reverted first when it changed.
#
# RFT_BREAK=NAME applies one deliberate break of scripts/breaks.sh to the
# copy in the tree, or to a patched kernel file (scripts/break-check.sh);
# the next run without it puts the file back.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
tree=${1:-$SRC}
[ -f "$tree/Makefile" ] || die "no kernel tree at $tree (run scripts/setup.sh)"

dest=$tree/kernel/trace/rftrace

# A break of a kernel file (breaks.sh: BREAK_FILE starting with "/") left by
# the last run: its file as the patches left it comes back first, so the
# patches below can be reverted.
broken=$tree/.rftrace-broken
if [ -f "$broken" ]; then
	f=$tree/$(cat "$broken")
	cp "$f.rftrace-orig" "$f" || die "cannot restore $f"
	rm -f "$f.rftrace-orig" "$broken"
fi
mkdir -p "$dest"
# By content (--checksum), and a copied file gets the time of the copy
# (--no-times): a file restored to older contents must still look newer
# than the objects built from it, or make keeps the stale objects.
rsync -a --checksum --no-times --delete --exclude '*.o' --exclude '.*.cmd' --exclude '*.rmeta' \
	--exclude '*.a' --exclude 'modules.order' \
	"$top/Kbuild" "$top/Kconfig" "$top/rust" "$top/c" "$top/include" "$dest/"

applied=$tree/.rftrace-applied
new_sum=$(cat "$top"/patches/*.patch | sha256sum | cut -d' ' -f1)
old_sum=$(cat "$applied/sum" 2>/dev/null || true)
if [ "$new_sum" != "$old_sum" ]; then
	if [ -d "$applied" ]; then
		for p in $(ls "$applied"/*.patch 2>/dev/null | sort -r); do
			patch -d "$tree" -p1 -R -s <"$p" ||
				die "cannot revert $(basename "$p"); re-extract the tree"
		done
	fi
	rm -rf "$applied"
	mkdir -p "$applied"
	for p in "$top"/patches/*.patch; do
		patch -d "$tree" -p1 -s -N --no-backup-if-mismatch <"$p" ||
			die "patch $(basename "$p") does not apply to $tree"
		cp "$p" "$applied/"
	done
	echo "$new_sum" >"$applied/sum"
	step "applied $(ls "$top"/patches/*.patch | wc -l) kernel patches"
fi

if [ -n "${RFT_BREAK:-}" ]; then
	. "$top/scripts/breaks.sh"
	break_def "$RFT_BREAK" || die "no break named $RFT_BREAK (see scripts/breaks.sh)"
	case $BREAK_FILE in
	/*)	# a patched kernel file, kept as it was beside it
		f=$tree$BREAK_FILE
		cp "$f" "$f.rftrace-orig"
		echo "$BREAK_FILE" >"$broken"
		perl -0pi -e "$BREAK_PERL" "$f"
		cmp -s "$f" "$f.rftrace-orig" && die "break $RFT_BREAK no longer applies to $BREAK_FILE" ;;
	*)	f=$dest/$BREAK_FILE
		perl -0pi -e "$BREAK_PERL" "$f"
		cmp -s "$f" "$top/$BREAK_FILE" && die "break $RFT_BREAK no longer applies to $BREAK_FILE" ;;
	esac
	step "deliberate break $RFT_BREAK applied to $f"
fi

