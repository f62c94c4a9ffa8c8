#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# locking-doc-check.sh [RUST_DIR [DOC]]
#
# Checks that docs/locking.md (DOC) names every entry point C calls: every
# function marked #[no_mangle] in rust/ (RUST_DIR) must appear in it as
# code, `name`.  Prints each missing name, and a count.  Exit status: 0 if
# none is missing, 1 if any is, 2 on a usage error.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)

case ${1:-} in -h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

rust=${1:-$top/rust}
doc=${2:-$top/docs/locking.md}
[ -d "$rust" ] || { echo "locking-doc-check: no directory $rust" >&2; exit 2; }
[ -f "$doc" ] || { echo "locking-doc-check: no file $doc" >&2; exit 2; }

# The name of the first function after each #[no_mangle] attribute (other
# attributes may stand between them); a mention in a comment is not one.
names=$(find "$rust" -name '*.rs' -print0 | sort -z | xargs -0 awk '
	/^[[:space:]]*#\[(unsafe\()?no_mangle\)?\]/ { want = 1; next }
	want && match($0, /fn [A-Za-z_][A-Za-z0-9_]*/) {
		print substr($0, RSTART + 3, RLENGTH - 3); want = 0
	}')
[ -n "$names" ] || { echo "locking-doc-check: no #[no_mangle] function in $rust" >&2; exit 2; }

total=0 missing=0
for n in $names; do
	total=$((total + 1))
	if ! grep -qF "\`$n\`" "$doc"; then
		echo "missing from $(basename "$doc"): $n"
		missing=$((missing + 1))
	fi
done
echo "$total #[no_mangle] functions, $missing missing from $(basename "$doc")"
[ "$missing" -eq 0 ]
