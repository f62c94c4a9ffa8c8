#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# docs-check.sh
#
# Checks that docs/ holds prose and the results it cites: every file under
# docs/results/ and docs/bench/, and every file directly in docs/ that is
# not Markdown, is named (by its file name) in README.md or in a text file
# under docs/ other than itself.  A results file nothing cites is history:
# git keeps it, the tree does not.  Prints each uncited file and exits 1
# if there is one.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

mapfile -t texts < <(echo README.md; find docs -type f \( -name '*.md' -o -name '*.rst' \
	-o -name '*.txt' -o -name '*.results' \) | sort)
uncited=0 n=0
while IFS= read -r f; do
	n=$((n + 1))
	b=$(basename "$f")
	found=0
	for t in "${texts[@]}"; do
		[ "$t" = "$f" ] && continue
		if grep -qF -- "$b" "$t"; then found=1; break; fi
	done
	if [ $found -eq 0 ]; then
		echo "docs-check: $f is cited by no document"
		uncited=$((uncited + 1))
	fi
done < <(find docs/results docs/bench -type f 2>/dev/null
	 find docs -maxdepth 1 -type f ! -name '*.md')
if [ $uncited -gt 0 ]; then
	echo "docs-check: $uncited of $n results files uncited"
	exit 1
fi
echo "docs-check: $n results files, each cited: ok"
