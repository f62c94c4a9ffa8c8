#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerates rust/tests/riscv64_golden.txt: riscv64 patch-site encodings
# made by the GNU riscv64 assembler and linker and read back with objdump,
# and patch-site layouts made by LLVM 19, the oracle of the `riscv64` tests.
#
# usage: scripts/gen-riscv64-golden.sh [OUTPUT]
#
# Calls: each case is the pair `auipc t0, 0; jalr t0, 0(t0)` carrying one
# R_RISCV_CALL relocation against T, assembled with `.option norelax` and
# linked alone at an absolute address with
# `ld --no-relax -Ttext=IP --defsym T=TARGET`, so ld splits the offset
# into hi20 and lo12 (with the carry of a negative lo12) as the kernel
# must. (A %pcrel_hi/%pcrel_lo pair is no good here: against an absolute
# symbol out of pc-relative reach, ld quietly turns the auipc into a lui.)
# A case past the reach of the pair is "refused" when ld reports
# "relocation truncated to fit"; it is written with `out-of-range` instead
# of the words. Every encoded case is checked against the target objdump
# computes from the pair.
#
# Layouts: a few C functions, some of them cold, compiled for riscv64 with
# -fpatchable-function-entry=8,4 and RVC, or 4,2 without, as the kernel
# does, with and without -falign-functions=8 and at -Os, linked at a
# kernel address. For every address recorded in
# `__patchable_function_entries` the line gives the function symbol that
# follows it and the 16 bytes from that address on. The compiler is
# clang-19 when it is installed. Without it, llc-19 (LLVM 19's code
# generator, which is what lays out the patchable entries) compiles
# hand-written IR carrying the attributes clang-19 sets for those options
# (`patchable-function-prefix`, `patchable-function-entry`, `align 8`,
# `optsize`, `cold`). Without either, the layout lines are left out and the
# header says so.
#
# Exit status 77 means the binutils are missing (or cannot target
# riscv64): the caller may skip. AS, LD, OBJDUMP, NM, CC and LLC override
# the tool names.

set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$top/rust/tests/riscv64_golden.txt}
AS=${AS:-riscv64-linux-gnu-as}
LD=${LD:-riscv64-linux-gnu-ld}
OBJDUMP=${OBJDUMP:-riscv64-linux-gnu-objdump}
NM=${NM:-riscv64-linux-gnu-nm}
CC=${CC:-clang-19}
LLC=${LLC:-llc-19}

skip() { printf 'gen-riscv64-golden: skipped: %s\n' "$*" >&2; exit 77; }
die() { printf 'gen-riscv64-golden: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

for tool in "$AS" "$LD" "$OBJDUMP" "$NM"; do
	have "$tool" || skip "$tool not found"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src() { printf '\t.option norelax\n\t.text\n\t.globl _start\n_start:\n%s\n' "$2" >"$work/$1.s"; }
src call "$(printf '\t.option norvc\n1:\tauipc t0, 0\n\tjalr t0, 0(t0)\n\t.reloc 1b, R_RISCV_CALL, T')"
src nop "$(printf '\t.option norvc\n\tnop')"
src c.nop "$(printf '\tc.nop')"
src ebreak "$(printf '\t.option norvc\n\tebreak')"
src c.ebreak "$(printf '\tc.ebreak')"
for k in call nop c.nop ebreak c.ebreak; do
	"$AS" -march=rv64gc -o "$work/$k.o" "$work/$k.s" 2>"$work/as.err" ||
		skip "$AS cannot assemble riscv64: $(head -n1 "$work/as.err")"
done

# Bash arithmetic is 64-bit and wraps, like the addresses it stands for.
hex() { printf '%016x' "$(($1))"; }

# link KIND IP [TARGET]: links the KIND instruction(s) at IP; ld's status.
link() {
	local defsym=()
	[ $# -ge 3 ] && defsym=(--defsym "T=0x$(hex "$3")")
	rm -f "$work/a.elf"
	"$LD" --no-relax -e 0 -Ttext="0x$(hex "$2")" "${defsym[@]}" \
		-o "$work/a.elf" "$work/$1.o" 2>"$work/ld.err"
}

# The instructions of the linked file, one a line: address, word,
# mnemonic and operands (with objdump's comment, if any).
disasm() {
	"$OBJDUMP" -d -w "$work/a.elf" | awk -F'\t' '
		/^ *[0-9a-f]+:\t/ {
			a = $1; sub(/^ +/, "", a); sub(/:$/, "", a)
			w = $2; gsub(/ /, "", w)
			print a, w, $3, $4
		}'
}

# good IP TARGET: a pair that reaches; writes its line.
good() {
	local ip=$1 target=$2 a1 w1 m1 o1 a2 w2 m2 o2 to
	link call "$ip" "$target" ||
		die "ld refused the call at $(hex "$ip") to $(hex "$target"): $(cat "$work/ld.err")"
	{ read -r a1 w1 m1 o1; read -r a2 w2 m2 o2; } < <(disasm)
	[ "$(hex "0x$a1")" = "$(hex "$ip")" ] || die "objdump shows address $a1, wanted $(hex "$ip")"
	[ "$(hex "0x$a2")" = "$(hex "$ip + 4")" ] || die "objdump shows address $a2 for the jalr"
	[ "$m1" = auipc ] && [ "$m2" = jalr ] || die "objdump shows $m1/$m2, wanted auipc/jalr"
	case "$o1" in t0,*) ;; *) die "auipc writes '$o1', wanted t0" ;; esac
	case "$o2" in 't0,'*'(t0) # '* | 't0,t0 # '*) ;; *) die "jalr is '$o2', wanted jalr t0, imm(t0)" ;; esac
	# objdump resolves the pair: its comment is where the call goes.
	to=${o2#*# }
	to=${to%% *}
	[ "$(hex "0x$to")" = "$(hex "$target")" ] ||
		die "objdump says the pair at $(hex "$ip") goes to $to, wanted $(hex "$target")"
	[ ${#w1} -eq 8 ] && [ ${#w2} -eq 8 ] || die "the pair at $(hex "$ip") is not two words: $w1 $w2"
	printf '%s %s call %s %s\n' "$(hex "$ip")" "$(hex "$target")" "$w1" "$w2" >>"$work/out"
}

# bad IP TARGET: a pair past the reach; ld must refuse it.
bad() {
	local ip=$1 target=$2
	if link call "$ip" "$target"; then
		die "ld encoded the call at $(hex "$ip") to $(hex "$target"): $(disasm | head -n2 | tr '\n' ' ')"
	fi
	grep -q 'relocation truncated to fit' "$work/ld.err" ||
		die "ld failed for another reason: $(cat "$work/ld.err")"
	printf '%s %s call out-of-range\n' "$(hex "$ip")" "$(hex "$target")" >>"$work/out"
}

# fixed KIND IP MNEMONIC: an instruction that does not depend on where it is.
fixed() {
	local kind=$1 ip=$2 want=$3 a w insn rest
	link "$kind" "$ip" || die "ld refused $kind at $(hex "$ip"): $(cat "$work/ld.err")"
	read -r a w insn rest < <(disasm)
	[ "$(hex "0x$a")" = "$(hex "$ip")" ] || die "objdump shows address $a, wanted $(hex "$ip")"
	[ "$insn" = "$want" ] || die "objdump shows '$insn', wanted '$want'"
	printf '%s - %s %s\n' "$(hex "$ip")" "$kind" "$w" >>"$work/out"
}

# The compiler of the layout cases.
if have "$CC"; then
	cc_how="$("$CC" --version | head -n1)"
elif have "$LLC"; then
	cc_how="$CC not found; llc-19 from IR with clang's attributes: $("$LLC" --version | awk '/LLVM version/ { sub(/.*LLVM version /, ""); print "LLVM", $1; exit }')"
else
	cc_how="$CC and $LLC not found: no layout lines"
fi

cat >"$work/out" <<EOF
# riscv64 patch-site encodings made by GNU as/ld and layouts made by LLVM,
# read back with objdump and nm.
# Generated by scripts/gen-riscv64-golden.sh: do not edit, regenerate.
# as: $("$AS" --version | head -n1)
# cc: $cc_how
#
# Instruction lines: ip target kind words
#   ip      address of the first instruction (hex, 64-bit)
#   target  where a call goes (hex); - for the others
#   kind    call (auipc t0 + jalr t0 with one R_RISCV_CALL), nop (the
#           4-byte nop), c.nop, ebreak (4-byte) or c.ebreak
#   words   the instruction words in hex (two for a call: auipc, jalr), or
#           out-of-range when ld could not encode the call
#
# Layout lines: patch entry func name bytes flags
#   entry   an address from __patchable_function_entries
#   func    the address of the function symbol after it
#   name    the function
#   bytes   the 16 bytes from entry on, in memory order
#   flags   the compiler options of the case (with RVC the kernel's
#           -fpatchable-function-entry=8,4, without it 4,2)
EOF

ktext=0xffffffff80010000  # kernel text (sv39 and up)
caller=0xffffffff80a12340 # an ftrace_caller-like address
mod=0xffffffff0a123450    # a module below the kernel, within 2 GiB
far=0xfffffffe7f000000    # more than 2 GiB below ftrace_caller

# Ordinary kernel and module cases.
good $ktext $caller
good $((caller - 0x1234)) $caller
good $((caller + 0x2000)) $caller
good $mod $caller
good $ktext $ktext               # to itself: offset 0
good 0xffffffff8123456c $ktext
good $((caller - 4)) $caller     # one word before it
good $((caller + 4)) $caller     # one word after it
bad $far $caller
bad $ktext 0xffffffd800000000    # linear map
bad $ktext 0x0000000000400000    # user space

# The sign carry of lo12: offsets whose low 12 bits are 0x7fc, 0x7ff,
# 0x800, 0x804 and 0xffc, forward and back, near and far. From 0x800 on,
# lo12 is negative and hi20 carries one more.
for ip in $ktext $((ktext + 0x7fc)) $((ktext + 0x800)) $mod; do
	for d in 0x7fc 0x7ff 0x800 0x804 0xffc 0x1000 0x17fc 0x1800 \
		0x123457fc 0x12345800 0x7ffff7fc 0x7ffff000 0x7fffe800; do
		good "$ip" $((ip + d))
		good "$ip" $((ip - d))
	done
	good "$ip" $((ip - 0x7ffff804))
	good "$ip" $((ip - 0x80000000))
done

# The reach: offsets in [-2^31 - 2^11, 2^31 - 2^11 - 1]. The words at each
# end (the last one odd), and one word past each.
for ip in $ktext $((ktext + 4)) $mod $far 0xffffffff8ffffffc 0x1000 0x400004 \
	0xfffffffffffff000 0xffffffffffffe000; do
	fwd=$((ip + 0x7ffff7fc))
	back=$((ip - 0x80000800))
	good "$ip" $fwd
	good "$ip" $((fwd + 3))
	good "$ip" $back
	bad "$ip" $((fwd + 4))
	bad "$ip" $((back - 4))
done

# Near the wrap of the address space.
good 0xfffffffffffff000 0x10
good 0x1000 0xfffffffffffff000
good 0xfffffffffffffff8 0x4

# The other words do not depend on where they are.
for ip in $ktext $mod; do
	fixed nop "$ip" nop
	fixed c.nop "$ip" nop
	fixed ebreak "$ip" ebreak
	fixed c.ebreak "$ip" ebreak
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

# ir FLAGS: the IR clang-19 makes of f.c with FLAGS (its function
# attributes; the bodies as -O2 leaves them).
ir() {
	local flags=$1 align='' fattr='' feat='+m,+a,+f,+d' n=2
	case " $flags " in *" -march=rv64gc "*) feat='+m,+a,+f,+d,+c'; n=4 ;; esac
	case " $flags " in *" -falign-functions=8 "*) align='align 8' ;; esac
	case " $flags " in *" -Os "*) fattr='optsize' ;; esac
	cat <<EOF
target datalayout = "e-m:e-p:64:64-i64:64-i128:128-n32:64-S128"
target triple = "riscv64-unknown-linux-gnu"
@g = dso_local global i32 0, align 4
define dso_local void @f_empty() #0 $align { ret void }
define dso_local void @f_store() #0 $align { store i32 1, ptr @g, align 4
  ret void }
define dso_local void @f_cold_empty() #1 $align { ret void }
define dso_local void @f_cold_store() #1 $align { store i32 2, ptr @g, align 4
  ret void }
define dso_local void @f_two() #0 $align { store i32 4, ptr @g, align 4
  ret void }
define dso_local void @f_after() #0 $align { store i32 4, ptr @g, align 4
  ret void }
attributes #0 = { nounwind $fattr "patchable-function-entry"="$n" "patchable-function-prefix"="$n" "target-cpu"="generic-rv64" "target-features"="$feat" }
attributes #1 = { cold nounwind $fattr "patchable-function-entry"="$n" "patchable-function-prefix"="$n" "target-cpu"="generic-rv64" "target-features"="$feat" }
EOF
}

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
	local flags=$1 pfe=4,2 e f name bytes
	case " $flags " in *" -march=rv64gc "*) pfe=8,4 ;; esac
	if have "$CC"; then
		# shellcheck disable=SC2086 # the flags are words
		"$CC" --target=riscv64-linux-gnu $flags -mabi=lp64d -mcmodel=medany \
			-fpatchable-function-entry=$pfe -fno-asynchronous-unwind-tables \
			-c -o "$work/f.o" "$work/f.c" 2>"$work/cc.err" ||
			die "$CC cannot compile: $(head -n1 "$work/cc.err")"
	else
		ir "$flags" >"$work/f.ll"
		"$LLC" -O2 -mtriple=riscv64-linux-gnu -target-abi=lp64d -code-model=medium \
			-filetype=obj -o "$work/f.o" "$work/f.ll" 2>"$work/cc.err" ||
			die "$LLC cannot compile: $(head -n1 "$work/cc.err")"
	fi
	"$LD" --no-relax -e 0 -Ttext="$ktext" -o "$work/f.elf" "$work/f.o" 2>"$work/ld.err" ||
		die "ld failed on the layout case: $(cat "$work/ld.err")"
	# Every byte of .text, one "address byte" a line; addresses are linked
	# high, so objdump and nm print all 16 digits.
	"$OBJDUMP" -s -j .text "$work/f.elf" | awk '
		/^ [0-9a-f]+ / {
			a = $1
			for (i = 2; i <= 5; i++) {
				if ($i !~ /^[0-9a-f]+$/ || length($i) % 2)
					break
				for (j = 1; j < length($i); j += 2)
					print a "+" (j - 1) / 2 + 4 * (i - 2), substr($i, j, 2)
			}
		}' | while read -r k b; do
		printf '%s %s\n' "$(hex "0x${k%+*} + ${k#*+}")" "$b"
	done >"$work/bytes"
	"$NM" "$work/f.elf" | awk '$2 == "T" { print $1, $3 }' | LC_ALL=C sort >"$work/syms"
	[ -s "$work/syms" ] || die "no function symbols in the layout case"
	for e in $(entries); do
		# The function symbol is the first one after the entry.
		read -r f name < <(awk -v e="$e" '($1 "") > (e "") { print; exit }' "$work/syms")
		[ -n "${f:-}" ] || die "no function after patch entry $e"
		bytes=$(awk -v lo="$e" -v hi="$(hex "0x$e + 16")" \
			'($1 "") >= (lo "") && ($1 "") < (hi "") { printf "%s", $2 }' "$work/bytes")
		[ ${#bytes} -eq 32 ] || die "no 16 bytes at patch entry $e: $bytes"
		printf 'patch %s %s %s %s %s\n' "$e" "$f" "$name" "$bytes" "${flags// /,}" >>"$work/out"
	done
}

if have "$CC" || have "$LLC"; then
	layout "-O2 -march=rv64gc -falign-functions=8"
	layout "-O2 -march=rv64g -falign-functions=8"
	layout "-O2 -march=rv64gc"
	layout "-Os -march=rv64gc -falign-functions=8"
fi

mkdir -p "$(dirname "$out")"
mv "$work/out" "$out"
