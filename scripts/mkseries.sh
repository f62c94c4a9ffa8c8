#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# mkseries.sh [--rev REV] [OUTDIR]
#
# Writes the project as a patch series for a Linux 7.2 tree, one mail per
# file, as `git format-patch -s --cover-letter` would (default OUTDIR:
# build/series; its old *.patch files are removed first).  Apply it with
# `git am --empty=drop OUTDIR/*.patch` (git 2.35 or later; the cover
# letter holds no change, and without --empty=drop git am stops on it),
# or leave 0000-cover-letter.patch out:
#
#   0000  the cover letter, "[PATCH 0/N]": what the series is, why, how
#         it was tested (docs/kernel/cover-letter.txt, with the base's
#         Debian version and the number of fixes filled in), then the
#         shortlog and the diffstat of the whole series (generated)
#   0001  the fixes of 7.2 defects that stand alone (patches/*.patch
#   ...   whose lines never name the core), in their order, renumbered
#   NNNN  kernel/trace: add the Rust dynamic ftrace core
#         (generated: Kbuild, Kconfig, rust/, c/ and include/ as new files
#         under kernel/trace/rftrace/, the file set scripts/prepare-tree.sh
#         copies)
#   ...   the other patches/*.patch (the hooks), in their order, renumbered
#         (the last one hooks kernel/trace/rftrace/ into Kconfig and Kbuild)
#   NNNN  Documentation: trace: describe the Rust dynamic ftrace core
#         (generated: docs/kernel/rftrace.rst as
#         Documentation/trace/rftrace.rst, and its entry in
#         Documentation/trace/index.rst)
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
# with --rev from a commit (tracked files only), patches/ and docs/kernel/
# included.
#
# Every mail is from the user, with the user's sign-off, once: the git
# identity (git config user.name and user.email), or RFT_AUTHOR="Name
# <mail>"; without either the script stops.  The series is checked with
# git am against the files it touches, taken pristine from the cached
# build/dl/linux-source-7.2_*.deb (scripts/setup.sh fetches it); the
# diffstat and the documentation patch come from that check.
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

# The user's identity, as git format-patch -s takes it.
if [ -n "${RFT_AUTHOR:-}" ]; then
	author=$RFT_AUTHOR
else
	a_name=$(git -C "$top" config user.name || true)
	a_mail=$(git -C "$top" config user.email || true)
	if [ -z "$a_name" ] || [ -z "$a_mail" ]; then
		die "no git identity: the patches are sent as yours, From and Signed-off-by.
Set it with
    git config --global user.name \"Your Name\"
    git config --global user.email you@example.org
or give it for this run: RFT_AUTHOR=\"Your Name <you@example.org>\" $0 ..."
	fi
	author="$a_name <$a_mail>"
fi
[[ $author =~ ^([^\<\>]*[^\<\>\ ])\ \<([^\<\>\ ]+@[^\<\>\ ]+)\>$ ]] ||
	die "the author must read \"Name <mail>\", not \"$author\" (RFT_AUTHOR or git config)"
a_name=${BASH_REMATCH[1]} a_mail=${BASH_REMATCH[2]}
# The From: header as a mail has it (quoted or encoded when the name needs it).
from_hdr=$(python3 -c 'import sys, email.utils
print(email.utils.formataddr((sys.argv[1], sys.argv[2])))' "$a_name" "$a_mail")
sob="Signed-off-by: $author"
# The placeholder identity the files in patches/ carry.
placeholder='rftrace developers <rftrace@localhost>'
crate_paths=(Kbuild Kconfig rust c include)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$rev" ]; then
	git -C "$top" rev-parse -q --verify "$rev^{commit}" >/dev/null ||
		die "no commit $rev"
	mkdir "$tmp/src"
	git -C "$top" archive "$rev" "${crate_paths[@]}" patches | tar -x -C "$tmp/src"
	if git -C "$top" cat-file -e "$rev:docs/kernel" 2>/dev/null; then
		git -C "$top" archive "$rev" docs/kernel | tar -x -C "$tmp/src"
	fi
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
GIT_AUTHOR_NAME=$a_name GIT_AUTHOR_EMAIL=$a_mail \
GIT_COMMITTER_NAME=$a_name GIT_COMMITTER_EMAIL=$a_mail \
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
  call-site list check, the record table, the update pass, and under
  arch/ the x86, arm64 and riscv64 encoders and verifiers), shared with
  the host tests.  rust/kside/: the kernel side (entry points, lock
  proofs, records, the update pass and its shadow comparator, KUnit
  tests), and under arch/ each architecture's half of the update pass.
- rust/lib.rs, rust/tests/: the host build of rfcore and its tests
  (cargo test); Kbuild does not build them.

Nothing here is built yet: the last patch of the series hooks the
directory into Kconfig and Kbuild.

$sob
EOF

# rewrite FILE: the mail as the user's: its From: header (with any folded
# continuation) becomes the user's, the placeholder's sign-off becomes the
# user's, and a mail without the user's sign-off gets it at the end of its
# trailers, as git format-patch -s adds it.  One sign-off of the user's.
rewrite() {
	awk -v from="From: $from_hdr" -v sob="$sob" \
	    -v old="Signed-off-by: $placeholder" '
	BEGIN { hdr = 1; cont = 0; seen = 0; done = 0; last = "" }
	hdr && cont && /^[ \t]/ { next }
	{ cont = 0 }
	hdr && /^From: / { if (!hasfrom) print from; hasfrom = 1; cont = 1; next }
	hdr && /^$/ { if (!hasfrom) print from; hdr = 0; print; next }
	hdr { print; next }
	!done && $0 == "---" {
		if (!seen) {
			if (last != "" && last !~ /^[A-Za-z-]+: /) print ""
			print sob
		}
		done = 1; print; next
	}
	!done && ($0 == old || $0 == sob) {
		if (!seen) print sob
		seen = 1; last = sob; next
	}
	{ print; if (!done) last = $0 }
	END { if (!done) exit 1 }' "$1"
}

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
			--binary HEAD >"$tmp/crate.patch"
		rewrite "$tmp/crate.patch" \
			>"$out/$(name kernel-trace-add-the-Rust-dynamic-ftrace-core)"
	fi
	n=$((n + 1))
	f=$(name "$(basename "$p" .patch | sed 's/^[0-9]*-//')")
	# An mbox From_ line as format-patch writes it; the rest as it is,
	# but for the author and the sign-off.
	{ echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	  rewrite "$p" || die "$(basename "$p") has no '---' line after its message"
	} >"$out/$f"
done
mapfile -t series < <(ls "$out"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-')

# The check: the files the series changes, pristine, in a scratch
# repository; every patch must apply there with git am, in order.  Files
# an earlier patch of the series creates are not taken from the source.
deb=$(ls "$BUILD"/dl/linux-source-7.2_*.deb 2>/dev/null | tail -1 || true)
[ -n "$deb" ] || die "no $BUILD/dl/linux-source-7.2_*.deb (run scripts/setup.sh): the series is checked against the pristine source"
base_ver=$(basename "$deb" | sed 's/^linux-source-7.2_//; s/_all.deb$//')
if [ -f "$SRC/.debian-version" ] && [ "$(cat "$SRC/.debian-version")" != "$base_ver" ]; then
	echo "mkseries: note: $SRC is linux-source-7.2 $(cat "$SRC/.debian-version"), the series is checked against $base_ver" >&2
fi
index=Documentation/trace/index.rst
mapfile -t touched < <(awk '
	/^--- \/dev\/null$/ { new = 1; next }
	/^--- a\// { p = substr($0, 7); sub(/\t.*/, "", p); if (!(p in made)) need[p] = 1; new = 0; next }
	/^\+\+\+ b\// { p = substr($0, 7); sub(/\t.*/, "", p); if (new) made[p] = 1; new = 0 }
	END { for (p in need) print p }' "${series[@]}" | sort)
am=$tmp/am
mkdir -p "$am"
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/src/linux-source-7.2.tar.xz |
	xz -dc | tar -x -C "$am" --strip-components=1 \
		$(printf 'linux-source-7.2/%s\n' "${touched[@]}" "$index" | sort -u) ||
	die "cannot take the series' files from $(basename "$deb")"
gitam=(git -C "$am" -c user.name="$a_name" -c user.email="$a_mail"
       -c commit.gpgsign=false)
git -C "$am" init -q
"${gitam[@]}" add -A -f .
"${gitam[@]}" commit -q -m "linux-source-7.2 $base_ver, the files the series changes"
"${gitam[@]}" tag base
for p in "${series[@]}"; do
	"${gitam[@]}" am -q "$p" >"$tmp/am.log" 2>&1 || {
		cat "$tmp/am.log" >&2
		die "$(basename "$p") does not apply to linux-source-7.2 $base_ver (git am)"
	}
done

# The documentation, against the pristine index.
docs=$src/docs/kernel
[ -f "$docs/rftrace.rst" ] || docs=$top/docs/kernel
cp "$docs/rftrace.rst" "$am/Documentation/trace/rftrace.rst"
awk '{ print } $1 == "ftrace-uses" && !done { sub(/[^ ].*/, ""); print $0 "rftrace"; done = 1 }
     END { exit !done }' "$am/$index" >"$tmp/index.rst" ||
	die "no ftrace-uses entry in $index to put rftrace after"
cp "$tmp/index.rst" "$am/$index"
"${gitam[@]}" add Documentation/trace/rftrace.rst "$index"
doc_date=$(git -C "$top" log -1 --format=%aD "$rev" -- docs/kernel)
GIT_AUTHOR_NAME=$a_name GIT_AUTHOR_EMAIL=$a_mail \
GIT_COMMITTER_NAME=$a_name GIT_COMMITTER_EMAIL=$a_mail \
GIT_AUTHOR_DATE=${doc_date:-$date} GIT_COMMITTER_DATE=${doc_date:-$date} \
git -C "$am" -c commit.gpgsign=false commit -q -F - <<EOF
Documentation: trace: describe the Rust dynamic ftrace core

Add Documentation/trace/rftrace.rst, with its entry in the tracing
guide's index: what CONFIG_FTRACE_RUST_CORE replaces, the split between
the Rust crate and the C shim, the Kconfig options, the files the core
adds to debugfs, and each deliberate difference from the C core with
its reason.

$sob
EOF
n=$((n + 1))
git -C "$am" format-patch -q -1 --stdout --zero-commit --no-signature \
	HEAD >"$tmp/doc.patch"
rewrite "$tmp/doc.patch" >"$out/$(name Documentation-trace-describe-the-Rust-dynamic-ftrace-core)"
series+=("$out/$(name Documentation-trace-describe-the-Rust-dynamic-ftrace-core)")

# The cover letter, in format-patch's form: the text of
# docs/kernel/cover-letter.txt (first line: the subject), the shortlog
# and the diffstat of the whole series.
fixes=0
for p in "${patches[@]}"; do
	grep -q '^[-+].*\(rftrace\|RUST_CORE\)' "$p" && break
	fixes=$((fixes + 1))
done
cover=$docs/cover-letter.txt
[ -f "$cover" ] || cover=$top/docs/kernel/cover-letter.txt
cover_date=$(git -C "$top" log -1 --format=%aD "$rev" -- "${crate_paths[@]}" patches docs/kernel)
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: $from_hdr"
	echo "Date: ${cover_date:-$date}"
	echo "Subject: [PATCH 0/$n] $(head -1 "$cover")"
	echo
	tail -n +2 "$cover" | sed '1{/^$/d}' |
		sed "s/@BASE@/$base_ver/g; s/@FIXES@/$fixes/g; s/@N@/$n/g"
	echo
	git -C "$am" shortlog -w72,2,4 base..HEAD
	git -C "$am" diff --stat=72 --summary base HEAD
	echo
	echo "-- "
	git --version | sed 's/^git version //'
} >"$out/0000-cover-letter.patch"

# Every mail is the user's: one From: header of theirs, and in each patch
# one sign-off of theirs.
for f in "$out"/*.patch; do
	c=$(grep -cxF "From: $from_hdr" "$f" || true)
	[ "$c" = 1 ] || die "$(basename "$f"): $c From: lines of $author, not 1"
	case $f in */0000-cover-letter.patch) continue ;; esac
	c=$(grep -cxF "$sob" "$f" || true)
	[ "$c" = 1 ] || die "$(basename "$f"): $c sign-offs of $author, not 1"
	grep -qF "$placeholder" "$f" && die "$(basename "$f") still names $placeholder"
done

echo "$n patches and a cover letter in $out (linux-source-7.2 $base_ver; each applied with git am):"
for f in "$out"/*.patch; do
	printf '  %s  %s\n' "$(basename "$f" | cut -c1-4)" \
		"$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$f" | head -1)"
done
