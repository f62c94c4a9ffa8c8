#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The panics compiled into the Rust core of a kernel image.

panic-check.py [--objdump TOOL] VMLINUX

Lists every call, from a function of the core (the `rftrace` crate, its
KUnit tests left out), to a function of Rust's panic machinery
(core::panicking, the unwrap/expect failures, the slice and index
checks). Each call's source location is read from the `Location` the
compiler passes it in the first argument register (x86_64: `mov
$addr,%rdi`; arm64: `adrp x0` and `add x0, x0`; riscv64: `auipc a0` and
`addi a0, a0`, whose target GNU objdump prints), and the call is counted
as the core's own (a file of the core), the
kernel crate's (rust/kernel/..., inlined into the core: e.g. KVVec's
checked capacity arithmetic, unreachable by that type's invariants) or
the core library's. A call whose location cannot be read counts as the
core's.

Exit status: 0 when the core itself and the core library have no panic
call in the image, 1 otherwise; the kernel crate's are printed and
counted, not failed.
"""
import argparse
import re
import struct
import subprocess
import sys

PANIC = re.compile(r'<(_R\w*(panic|unwrap_failed|expect_failed|slice_\w*fail|'
                   r'panic_bounds_check|str_index_overflow_fail)\w*)>')
CALL = re.compile(r'\s(call|callq|bl|jal|jalr|jmp|b)\s')


def sections(data):
    """The loaded sections of an ELF64 image: (address, offset, size)."""
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
    out = []
    for i in range(shnum):
        _, typ, _, addr, off, size = struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize)
        if addr and typ != 8:  # not SHT_NOBITS
            out.append((addr, off, size))
    return out


def relocations(data):
    """The addends of a relocatable image's RELA entries, by address: an
    arm64 kernel with RELOCATABLE (Debian's, for KASLR) keeps its absolute
    pointers in .rela.dyn and zeros in the sections, until boot."""
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum = struct.unpack_from('<HH', data, 0x3a)
    out = {}
    for i in range(shnum):
        _, typ, _, _, off, size, _, _, _, entsize = struct.unpack_from(
            '<IIQQQQIIQQ', data, shoff + i * shentsize)
        if typ != 4 or entsize != 24:  # SHT_RELA
            continue
        for r in range(off, off + size - 23, 24):
            where, _, addend = struct.unpack_from('<QQq', data, r)
            out[where] = addend & 0xffffffffffffffff
    return out


def reader(data):
    secs = sections(data)
    rela = relocations(data)

    def read(va, n):
        for addr, off, size in secs:
            if addr <= va and va + n <= addr + size:
                return data[off + va - addr:off + va - addr + n]
        return None

    def pointer(va):
        """The pointer stored at va, as it is once the kernel is relocated."""
        raw = read(va, 8)
        if raw is None:
            return None
        ptr, = struct.unpack('<Q', raw)
        return ptr if ptr else rela.get(va, 0)
    read.pointer = pointer
    return read


def location(read, va):
    """The file:line:col of a core::panic::Location at `va`, if readable."""
    raw = read(va, 24)
    if not raw:
        return None
    _, length, line, col = struct.unpack('<QQII', raw)
    ptr = read.pointer(va)
    if not 0 < length < 512:
        return None
    name = read(ptr, length)
    if not name:
        return None
    return f'{name.decode(errors="replace")}:{line}:{col}'


def owner(loc):
    if loc is None:
        return 'core'
    if '/rftrace/' in loc or loc.startswith('rust/rfcore') or loc.startswith('rust/kside'):
        return 'core'
    if loc.startswith('rust/kernel/') or '/rust/kernel/' in loc:
        return 'kernel crate'
    if '/library/' in loc:
        return 'core library'
    return 'core'


def ours(fn):
    """A function of the rftrace crate (mangled path or exported entry),
    not a KUnit test."""
    if 'kunit' in fn:
        return False
    return '7rftrace' in fn or (fn.startswith('rftrace_') and not fn.startswith('rftrace_shim_'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--objdump', default='objdump')
    ap.add_argument('vmlinux')
    o = ap.parse_args()
    data = open(o.vmlinux, 'rb').read()
    read = reader(data)
    dis = subprocess.run([o.objdump, '-d', '--no-show-raw-insn', o.vmlinux],
                         capture_output=True, text=True, check=True).stdout
    fn, rdi, seen = None, None, 0
    counts = {'core': 0, 'kernel crate': 0, 'core library': 0}
    for line in dis.splitlines():
        m = re.match(r'^[0-9a-f]+ <(.*)>:$', line)
        if m:
            fn, rdi = m.group(1), None
            if ours(fn):
                seen += 1
            continue
        if fn is None or not ours(fn):
            continue
        m = re.search(r'mov\s+\$0x([0-9a-f]+),%rdi', line)
        if m:
            rdi = int(m.group(1), 16)
        m = re.search(r'adrp\s+x0,\s*([0-9a-f]+)', line)
        if m:
            rdi = int(m.group(1), 16)
        m = re.search(r'add\s+x0,\s*x0,\s*#0x([0-9a-f]+)', line)
        if m and rdi is not None:
            rdi += int(m.group(1), 16)
        m = re.search(r'addi\s+a0,a0,-?\d+\s*#\s*([0-9a-f]+)', line)
        if m:
            rdi = int(m.group(1), 16)
        m = PANIC.search(line)
        if not m or not CALL.search(line):
            continue
        loc = location(read, rdi) if rdi else None
        who = owner(loc)
        counts[who] += 1
        print(f'{who:12}  {fn[:70]}  ->  {m.group(1)[-48:]}  {loc or ""}')
    if seen == 0:
        print(f'panic-check: no function of the core in {o.vmlinux}')
        return 1
    print(f'panic-check: {seen} functions of the core; panic calls: '
          f'{counts["core"]} of the core, {counts["core library"]} of the core library, '
          f'{counts["kernel crate"]} of the kernel crate (inlined)')
    return 1 if counts['core'] or counts['core library'] else 0


if __name__ == '__main__':
    sys.exit(main())
