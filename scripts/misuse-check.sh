#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# misuse-check.sh [VARIANT]: the programs that must not compile, against
# the kernel side as the kernel builds it.  Copies rust/ to a scratch
# directory, adds tools/misuse/misuse.rs to it as kside::misuse, and
# compiles the crate (twice: see below) with the exact rustc command of
# the last kernel build of VARIANT (default: debug on x86_64, shadow
# elsewhere; RFT_ARCH as everywhere; the kernel must be built).  Every "// misuse: NAME: TEXT" block of misuse.rs must fail with
# a message containing TEXT at one of its lines, and nothing else may
# fail.  Last line: "N passed, N failed" (one per block, plus one for
# "no other error").
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
arch_vars "$RFT_ARCH"
variant=${1:-debug}
[ "$RFT_ARCH" = x86_64 ] || variant=${1:-shadow}

work=$BUILD/misuse-$RFT_ARCH
rm -rf "$work"
mkdir -p "$work/out"
cp -r "$top/rust" "$work/rust"
cp "$top/tools/misuse/misuse.rs" "$work/rust/kside/misuse.rs"
echo "pub(crate) mod misuse;" >>"$work/rust/kside/mod.rs"

core_rustc_cmd "$variant" "$work/rust/rftrace.rs" "$work/out"
out=$core_out cmd=$core_cmd
log=$work/rustc.log
# The kernel build runs rustc with its unstable options allowed
# (RUSTC_BOOTSTRAP=1, set by the kernel's Makefile).  Two runs: rustc
# checks field privacy only in a crate without type errors, so the blocks
# that forge a view are built alone (--cfg misuse_late).
: >"$log"
for late in "" "--cfg misuse_late"; do
	(cd "$out" && RUSTC_BOOTSTRAP=1 eval "$cmd $late") >>"$log" 2>&1 &&
		{ cat "$log"; die "the misuse file compiled (${late:-first run})"; }
done

python3 - "$top/tools/misuse/misuse.rs" "$log" <<'PY'
import re, sys
src, log = sys.argv[1], sys.argv[2]
blocks = []  # (name, text, first, last)
lines = open(src).read().split('\n')
for i, l in enumerate(lines, 1):
    m = re.match(r'\s*// misuse: ([\w-]+): (.+)$', l)
    if m:
        if blocks:
            blocks[-1][3] = i - 1
        blocks.append([m.group(1), m.group(2), i, len(lines)])
# rustc's diagnostics: a header line, then " --> FILE:LINE:COL".
errors = []
cur = None
for l in open(log).read().split('\n'):
    if l.startswith('warning') or l.startswith('error: aborting'):
        cur = None
    elif l.startswith('error'):
        cur = [l, None, None]
        errors.append(cur)
    m = re.match(r'\s*--> (\S+):(\d+):\d+', l)
    if m and cur is not None and cur[1] is None:
        cur[1], cur[2] = m.group(1), int(m.group(2))
errors = [e for e in errors if e[1] is not None]
passed = failed = 0
for name, text, first, last in blocks:
    hit = [e for e in errors if e[1].endswith('kside/misuse.rs') and first <= e[2] <= last]
    if any(text in e[0] for e in hit):
        print(f"  ok: {name}: {text}")
        passed += 1
    else:
        print(f"  FAIL: {name}: no error '{text}' at lines {first}-{last}: " +
              ('; '.join(e[0] for e in hit) or 'it compiled'))
        failed += 1
other = [e for e in errors if not e[1].endswith('kside/misuse.rs')]
if other:
    print("  FAIL: errors outside the misuse blocks:")
    for e in other:
        print(f"    {e[1]}:{e[2]}: {e[0]}")
    failed += 1
else:
    print("  ok: no error outside the misuse blocks")
    passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
