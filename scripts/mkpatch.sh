#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mkpatch.sh PRISTINE EDITED OUT FILE...: regenerate the diff of FILE...
# (paths relative to the kernel tree) between two copies of the tree into
# OUT, keeping OUT's mail header (everything up to the first "---" line).
# A maintainer tool for patches/.
set -euo pipefail
a=$1 b=$2 out=$3
shift 3
hdr=$(mktemp)
if [ -f "$out" ]; then
	sed '/^---$/q' "$out" >"$hdr"
fi
cp "$hdr" "$out"
rm -f "$hdr"
for f in "$@"; do
	echo "diff --git a/$f b/$f" >>"$out"
	diff -u -p --label "a/$f" --label "b/$f" "$a/$f" "$b/$f" >>"$out" || true
done
