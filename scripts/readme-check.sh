#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# readme-check.sh [README]
#
# Checks that the README (default: README.md at the top of the project)
# names only what exists.  Paths are taken relative to the project's top
# whatever README file is given, so a copy elsewhere is checked as if it
# were the project's.  It fails, printing each problem, when:
#
#   - the README is longer than 280 lines;
#   - a relative link target ([text](target), without its #anchor) does
#     not exist, or a link to a Markdown file names an #anchor that none
#     of its headings makes;
#   - a project path in backticks or in a fenced code block (a word
#     starting with scripts/, selftests/, docs/, rust/, c/, include/,
#     configs/, tools/, patches/, benches/, fuzz/ or .ci/, or one of the
#     top-level files Kconfig, Kbuild, Cargo.toml) does not exist (globs
#     must match something);
#   - a CONFIG_ symbol is neither defined in ./Kconfig nor on the short
#     list below of the kernel's own symbols the README may name; the
#     project's CONFIG_FTRACE_RUST_CORE* symbols must be in ./Kconfig.
#     When the kernel tree is there (RFT_SRC, else build/linux-7.2), each
#     listed kernel symbol must also be defined in it;
#   - an option shown for scripts/test.sh (a --option in backticks in a
#     paragraph that names scripts/test.sh) is not one that
#     scripts/test.sh accepts.
#
# Exit status 0 when there is no problem, 1 otherwise.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
readme=${1:-$top/README.md}
[ -f "$readme" ] || { echo "readme-check: no file $readme" >&2; exit 1; }
max_lines=280

# Kernel symbols the README may name (not the project's own): keep this
# list to what the README uses.
kernel_symbols=(CONFIG_RUST CONFIG_DYNAMIC_FTRACE CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)

problems=0
problem() {
	echo "readme-check: $*"
	problems=$((problems + 1))
}

# The README without its fenced code blocks (links, inline code, headings)
# and the lines of the fenced code blocks alone.
# Prose paragraphs are joined into one line each, so that a code span or
# a link that wraps is seen whole.
prose=$(awk '/^[[:space:]]*```/ { fence = !fence; next } !fence' "$readme" |
	awk 'BEGIN { RS = "" } { gsub(/\n/, " "); print }')
code=$(awk '/^[[:space:]]*```/ { fence = !fence; next } fence' "$readme")

# 1. Length.
lines=$(wc -l <"$readme")
[ "$lines" -le $max_lines ] ||
	problem "$(basename "$readme") has $lines lines, more than $max_lines"

# GitHub's anchor of a heading: lower case, punctuation other than - and _
# dropped, spaces turned into -.
anchors_of() { # FILE
	awk '/^[[:space:]]*```/ { fence = !fence; next } !fence && /^#+ / {
		sub(/^#+ +/, ""); print }' "$1" |
		tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

exists() { # PATH (relative to the top; may be a glob)
	local p=$1
	compgen -G "$top/$p" >/dev/null || [ -e "$top/$p" ]
}

# 2. Relative link targets.
nlinks=0
while IFS= read -r target; do
	[ -n "$target" ] || continue
	case $target in
	http://*|https://*|mailto:*) continue ;;
	esac
	nlinks=$((nlinks + 1))
	file=${target%%#*}
	anchor=
	[ "$file" = "$target" ] || anchor=${target#*#}
	if [ -z "$file" ]; then
		file_path=$readme
	else
		file=${file#./}
		if ! exists "$file"; then
			problem "link to $target: no such file $file"
			continue
		fi
		file_path=$top/$file
	fi
	if [ -n "$anchor" ] && [ -f "$file_path" ] && [[ $file_path == *.md ]]; then
		anchors_of "$file_path" | grep -qxF -- "$anchor" ||
			problem "link to $target: no heading in ${file:-the README} makes #$anchor"
	fi
done < <(printf '%s\n' "$prose" | grep -oE '\]\([^) ]+\)' | sed 's/^](//; s/)$//')

# 3. Project paths in inline code and in code blocks.
path_re='^(scripts|selftests|docs|rust|c|include|configs|tools|patches|benches|fuzz|\.ci)/|^(Kconfig|Kbuild|Cargo\.toml)$'
npaths=0
while IFS= read -r word; do
	word=${word%%[,;:.)\']}
	word=${word#\(}
	[ -n "$word" ] || continue
	printf '%s\n' "$word" | grep -qE "$path_re" || continue
	npaths=$((npaths + 1))
	exists "$word" || problem "names $word, which does not exist"
done < <({ printf '%s\n' "$prose" | grep -oE '`[^`]+`' | tr -d '`'
	   printf '%s\n' "$code"; } | tr -s ' \t' '\n\n' | sed 's/^[A-Z_]*=[^ ]*$//')

# 4. CONFIG_ symbols.
nsyms=0
for sym in $(grep -oE 'CONFIG_[A-Z0-9_]+' "$readme" | sort -u); do
	nsyms=$((nsyms + 1))
	if grep -qx "config ${sym#CONFIG_}" "$top/Kconfig"; then
		continue
	fi
	case $sym in
	CONFIG_FTRACE_RUST_CORE*)
		problem "names $sym, which Kconfig does not define"
		continue ;;
	esac
	if ! printf '%s\n' "${kernel_symbols[@]}" | grep -qxF "$sym"; then
		problem "names $sym: neither in Kconfig nor on the list of kernel symbols in $(basename "$0")"
	fi
done
# The list stays honest: each kernel symbol on it is one the kernel defines.
src=${RFT_SRC:-$top/build/linux-7.2}
if [ -f "$src/Makefile" ]; then
	for sym in "${kernel_symbols[@]}"; do
		grep -rqx --include='Kconfig*' "config ${sym#CONFIG_}" "$src" ||
			problem "$sym is on the list of kernel symbols but no Kconfig file of $src defines it"
	done
fi

# 5. Options shown for scripts/test.sh: --options in backticks in each
# paragraph that names scripts/test.sh.
nopts=0
accepted=$(sed -n 's/^[[:space:]]*\(--[a-z][a-z-]*\)).*/\1/p' "$top/scripts/test.sh")
for opt in $(printf '%s\n' "$prose" | grep -F 'scripts/test.sh' |
	grep -oE '`[^`]+`' | grep -oE '(^|[ `])--[a-z][a-z-]*' | tr -d ' `' | sort -u); do
	nopts=$((nopts + 1))
	printf '%s\n' "$accepted" | grep -qxF -- "$opt" ||
		problem "shows $opt for scripts/test.sh, which test.sh does not accept"
done

if [ $problems -gt 0 ]; then
	echo "readme-check: $(basename "$readme"): $problems problem(s)"
	exit 1
fi
echo "readme-check: $(basename "$readme"): $lines lines, $nlinks links, $npaths paths, $nsyms CONFIG symbols, $nopts test.sh options: ok"
