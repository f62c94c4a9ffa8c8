#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# docs-check.sh
#
# Checks that docs/ holds prose and the results it cites: every file under
# docs/results/ and docs/bench/, and every file directly in docs/ that is
# not Markdown, is named (by its file name) in README.md or in a text file
# under docs/ other than itself.  A results file nothing cites is history:
# git keeps it, the tree does not.  And the other way round: every dated
# results file name (NAME-YYYY-MM-DD...) that README.md, a text file under
# docs/ or a list under selftests/expected/ names is in docs/results/,
# docs/bench/ or docs/.  Prints each uncited or missing file and exits 1
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
missing=0
while IFS= read -r t; do
	while IFS= read -r name; do
		[ -e "docs/results/$name" ] || [ -e "docs/bench/$name" ] || [ -e "docs/$name" ] && continue
		echo "docs-check: $t names $name, which is not in docs/"
		missing=$((missing + 1))
	done < <(grep -oE '[A-Za-z0-9_.-]+-20[0-9]{2}-[0-9]{2}-[0-9]{2}[A-Za-z0-9_.-]*[.](results|txt|json|svg|md)' \
		"$t" | sort -u)
done < <(printf '%s\n' "${texts[@]}"; find selftests/expected -type f | sort)
if [ $uncited -gt 0 ] || [ $missing -gt 0 ]; then
	[ $missing -eq 0 ] || echo "docs-check: $missing results files named but missing"
	[ $uncited -eq 0 ] || {
	echo "docs-check: $uncited of $n results files uncited"; }
	exit 1
fi
echo "docs-check: $n results files, each cited, none missing: ok"
