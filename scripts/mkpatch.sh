#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mkpatch.sh PRISTINE EDITED OUT FILE...: write a -p1 patch of FILE... (paths
# relative to the kernel tree) from two copies of the tree, without the
# timestamps diff puts in the headers.  A maintainer tool for patches/.
set -euo pipefail
a=$1 b=$2 out=$3
shift 3
: >"$out"
for f in "$@"; do
	diff -u --label "a/$f" --label "b/$f" "$a/$f" "$b/$f" >>"$out" || true
done
