#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerates rust/tests/arm64_golden.txt: arm64 patch-site encodings made
# by the GNU aarch64 assembler and linker and read back with objdump, and
# patch-site layouts made by the aarch64 GCC, the oracle of the `arm64` tests.
#
# usage: scripts/gen-arm64-golden.sh [OUTPUT]
#
# Instructions: each case is one instruction (`bl T`, `nop`, `mov x9, x30`,
# `bti c`) linked alone at an absolute address with
# `ld -Ttext=IP --defsym T=TARGET`, so ld resolves the imm26 offset as for
# the kernel. GNU ld has no option to refuse an out-of-range BL: it inserts a
# long-branch veneer (`__T_veneer`) instead. A case past the +-128 MiB reach
# is therefore "refused" when ld either reports "relocation truncated to
# fit" or had to branch to a veneer; it is written with `out-of-range`
# instead of a word.
#
# Layouts: a few C functions, some of them cold, compiled with
# `-fpatchable-function-entry=4,2` as the kernel does with
# DYNAMIC_FTRACE_WITH_CALL_OPS, with and without `-mbranch-protection=bti`
# and at -Os, linked at a kernel address. For every address GCC recorded in
# `__patchable_function_entries` the line gives the function symbol that
# follows it and the five words from that address on. GCC 12 does not keep
# the 8-byte function alignment for cold functions, so some entries are
# misaligned: the tests check that those are refused.
#
# Exit status 77 means the tools are missing (or cannot target aarch64):
# the caller may skip. AS, LD, OBJDUMP, NM and CC override the tool names.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$top/rust/tests/arm64_golden.txt}
AS=${AS:-aarch64-linux-gnu-as}
LD=${LD:-aarch64-linux-gnu-ld}
OBJDUMP=${OBJDUMP:-aarch64-linux-gnu-objdump}
NM=${NM:-aarch64-linux-gnu-nm}
CC=${CC:-aarch64-linux-gnu-gcc}

skip() { printf 'gen-arm64-golden: skipped: %s\n' "$*" >&2; exit 77; }
die() { printf 'gen-arm64-golden: error: %s\n' "$*" >&2; exit 1; }

for tool in "$AS" "$LD" "$OBJDUMP" "$NM" "$CC"; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src() { printf '\t.text\n\t.globl _start\n_start:\n\t%s\n' "$2" >"$work/$1.s"; }
src bl 'bl T'
src nop 'nop'
src mov 'mov x9, x30'
src bti 'bti c'
for k in bl nop mov bti; do
	"$AS" -o "$work/$k.o" "$work/$k.s" 2>"$work/as.err" ||
		skip "$AS cannot assemble aarch64: $(head -n1 "$work/as.err")"
done

# Bash arithmetic is 64-bit and wraps, like the addresses it stands for.
hex() { printf '%016x' "$(($1))"; }

# link KIND IP [TARGET]: links the KIND instruction at IP; ld's status.
link() {
	local defsym=()
	[ $# -ge 3 ] && defsym=(--defsym "T=0x$(hex "$3")")
	"$LD" -e 0 -Ttext="0x$(hex "$2")" "${defsym[@]}" \
		-o "$work/a.elf" "$work/$1.o" 2>"$work/ld.err"
}

# The first instruction of the linked file: address, word, mnemonic and the
# operand (for bl: the target address and the symbol objdump names).
disasm() {
	"$OBJDUMP" -d -w "$work/a.elf" | awk -F'\t' '
		/^ *[0-9a-f]+:\t/ {
			a = $1; sub(/^ +/, "", a); sub(/:$/, "", a)
			w = $2; gsub(/ /, "", w)
			print a, w, $3, $4
			exit
		}'
}

# good IP TARGET: a BL that reaches; writes its line.
good() {
	local ip=$1 target=$2 a w mn op sym
	link bl "$ip" "$target" ||
		die "ld refused bl at $(hex "$ip") to $(hex "$target"): $(cat "$work/ld.err")"
	read -r a w mn op sym < <(disasm)
	[ "$(hex "0x$a")" = "$(hex "$ip")" ] || die "objdump shows address $a, wanted $(hex "$ip")"
	[ "$mn" = bl ] || die "objdump shows $mn, wanted bl"
	[ "$sym" = '<T>' ] || [ "$sym" = '<_start>' ] ||
		die "bl at $(hex "$ip") to $(hex "$target") goes through $sym"
	[ "$(hex "0x$op")" = "$(hex "$target")" ] ||
		die "objdump shows target $op, wanted $(hex "$target")"
	[ ${#w} -eq 8 ] || die "bl at $(hex "$ip") is not one word: $w"
	printf '%s %s bl %s\n' "$(hex "$ip")" "$(hex "$target")" "$w" >>"$work/out"
}

# bad IP TARGET: a BL past the reach; ld must refuse it or use a veneer.
bad() {
	local ip=$1 target=$2 a w mn op sym
	if link bl "$ip" "$target"; then
		read -r a w mn op sym < <(disasm)
		[ "$mn" = bl ] || die "objdump shows $mn, wanted bl"
		[ "$sym" = '<__T_veneer>' ] ||
			die "ld encoded bl at $(hex "$ip") to $(hex "$target") directly ($w $sym)"
	else
		grep -q 'relocation truncated to fit' "$work/ld.err" ||
			die "ld failed for another reason: $(cat "$work/ld.err")"
	fi
	printf '%s %s bl out-of-range\n' "$(hex "$ip")" "$(hex "$target")" >>"$work/out"
}

# fixed KIND IP MNEMONIC: an instruction that does not depend on where it is.
fixed() {
	local kind=$1 ip=$2 want=$3 a w insn
	link "$kind" "$ip" || die "ld refused $kind at $(hex "$ip"): $(cat "$work/ld.err")"
	read -r a w insn < <(disasm)
	[ "$(hex "0x$a")" = "$(hex "$ip")" ] || die "objdump shows address $a, wanted $(hex "$ip")"
	[ "$insn" = "$want" ] || die "objdump shows '$insn', wanted '$want'"
	printf '%s - %s %s\n' "$(hex "$ip")" "$kind" "$w" >>"$work/out"
}

cat >"$work/out" <<EOF
# arm64 patch-site encodings made by GNU as/ld and layouts made by GCC,
# read back with objdump and nm.
# Generated by scripts/gen-arm64-golden.sh: do not edit, regenerate.
# as: $("$AS" --version | head -n1)
# cc: $("$CC" --version | head -n1)
#
# Instruction lines: ip target kind word
#   ip      address of the instruction (hex, 64-bit)
#   target  where a bl goes (hex); - for the others
#   kind    bl, nop, mov (mov x9, x30) or bti (bti c)
#   word    the instruction word in hex, or out-of-range when ld could not
#           encode the bl (it refused it or branched to a veneer)
#
# Layout lines: patch entry func name w0 w1 w2 w3 w4 flags
#   entry   an address from __patchable_function_entries
#   func    the address of the function symbol after it
#   name    the function
#   w0..w4  the five words from entry on
#   flags   the compiler options of the case
EOF

ktext=0xffff800080010000  # kernel text
caller=0xffff800080e12340 # an ftrace_caller-like address
mod=0xffff80007a123450    # a module close to the kernel
far=0xffff80007010000c    # a module more than 128 MiB below ftrace_caller
plt=0xffff800070100000    # that module's ftrace PLT

# Ordinary kernel and module cases.
good $ktext $caller
good $((caller - 0x1234)) $caller
good $mod $caller
good $far $plt
good $plt $((plt + 0x7ff0))
good $ktext $ktext               # to itself: offset 0
good 0xffff80008123456c $ktext
good 0xffff800080e12344 $caller   # just after it: offset -4
bad $far $caller
bad $ktext 0xffff000000000000     # linear map
bad $ktext 0x0000000000400000     # user space

# The imm26 edges: exactly +128 MiB - 4 and -128 MiB from the BL, and one
# instruction past each. From the top of the address space the forward edge
# wraps past zero, and from the bottom the backward one does.
for ip in $ktext $((ktext + 4)) $mod $far 0xffff800087fffffc 0x1000 0x400004 \
	0xfffffffffffff000 0xffffffffffffe000; do
	fwd=$((ip + 0x7fffffc))
	back=$((ip - 0x8000000))
	good "$ip" $fwd
	good "$ip" $back
	bad "$ip" $((fwd + 4))
	bad "$ip" $((back - 4))
done

# Near the wrap of the address space.
good 0xfffffffffffff000 0x10
good 0x1000 0xfffffffffffff000
good 0xfffffffffffffffc 0x4

# The other words of the site do not depend on where they are.
for ip in $ktext $mod; do
	fixed nop "$ip" nop
	fixed mov "$ip" 'mov x9, x30'
	fixed bti "$ip" 'bti c'
done

# Layouts made by the compiler.
cat >"$work/f.c" <<'EOF'
int g;
void f_empty(void) { }
void f_store(void) { g = 1; }
__attribute__((cold)) void f_cold_empty(void) { }
__attribute__((cold)) void f_cold_store(void) { g = 2; }
void f_two(void) { g = 3; g++; }
void f_after(void) { g = 4; }
EOF

# The 64-bit little-endian values of the section dumped by objdump -s.
entries() {
	"$OBJDUMP" -s -j __patchable_function_entries "$work/f.elf" | awk '
		/^ [0-9a-f]+ / { h = h substr($0, 19, 35) }
		END {
			gsub(/ /, "", h)
			for (i = 1; i + 15 <= length(h); i += 16) {
				v = ""
				for (j = 14; j >= 0; j -= 2)
					v = v substr(h, i + j, 2)
				print v
			}
		}'
}

layout() {
	local flags=$1 e f name words i w
	# shellcheck disable=SC2086 # the flags are words
	"$CC" $flags -fpatchable-function-entry=4,2 -fno-asynchronous-unwind-tables \
		-c -o "$work/f.o" "$work/f.c" 2>"$work/cc.err" ||
		skip "$CC cannot compile: $(head -n1 "$work/cc.err")"
	"$LD" -e 0 -Ttext="$ktext" -o "$work/f.elf" "$work/f.o" 2>"$work/ld.err" ||
		die "ld failed on the layout case: $(cat "$work/ld.err")"
	# Addresses are linked high, so objdump and nm print all 16 digits.
	"$OBJDUMP" -d -w "$work/f.elf" | awk -F'\t' '
		/^ *[0-9a-f]+:\t/ {
			a = $1; sub(/^ +/, "", a); sub(/:$/, "", a)
			w = $2; gsub(/ /, "", w)
			print a, w
		}' >"$work/words"
	"$NM" "$work/f.elf" | awk '$2 == "T" { print $1, $3 }' | LC_ALL=C sort >"$work/syms"
	[ -s "$work/syms" ] || die "no function symbols in the layout case"
	for e in $(entries); do
		# The function symbol is the first one after the entry.
		read -r f name < <(awk -v e="$e" '($1 "") > (e "") { print; exit }' "$work/syms")
		[ -n "${f:-}" ] || die "no function after patch entry $e"
		words=
		for i in 0 4 8 12 16; do
			w=$(awk -v a="$(hex "0x$e + $i")" '$1 == a { print $2 }' "$work/words")
			[ -n "$w" ] || die "no instruction at $(hex "0x$e + $i")"
			words="$words $w"
		done
		printf 'patch %s %s %s%s %s\n' "$e" "$f" "$name" "$words" "${flags// /,}" >>"$work/out"
	done
}

layout "-O2 -falign-functions=8"
layout "-O2 -falign-functions=8 -mbranch-protection=bti"
layout "-Os -falign-functions=8"

mkdir -p "$(dirname "$out")"
mv "$work/out" "$out"
