#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# breaks-apply-check.sh: every deliberate break of scripts/breaks.sh whose
# file is one of the project's (not a patched kernel file, which
# prepare-tree.sh checks when it applies one) still changes that file, so
# that scripts/break-check.sh can never test an unbroken kernel.  Applies
# each substitution to a copy; prints one line per break that no longer
# applies and "N breaks apply" at the end; exits 1 if any does not.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/breaks.sh"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
n=0 bad=0
for b in $BREAKS; do
	BREAK_FILE= BREAK_PERL=
	break_def "$b" || { echo "$b: no definition"; bad=$((bad + 1)); continue; }
	case $BREAK_FILE in /*) continue ;; esac
	cp "$top/$BREAK_FILE" "$tmp"
	perl -0pi -e "$BREAK_PERL" "$tmp"
	if cmp -s "$tmp" "$top/$BREAK_FILE"; then
		echo "$b: no longer applies to $BREAK_FILE"
		bad=$((bad + 1))
	else
		n=$((n + 1))
	fi
done
echo "$n breaks apply, $bad do not"
[ "$bad" -eq 0 ]
