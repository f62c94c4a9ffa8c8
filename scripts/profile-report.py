#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Function-by-function guest instruction counts of two kernels, from the
counts of tools/tbcount (see scripts/profile.sh).

profile-report.py [--slots sysctl|listing|tracer|kprobe] [--top N] [--share] A A.tbcount B B.tbcount
profile-report.py [--slots ...] --blocks FUNCTION A A.tbcount

With --blocks, the translation blocks of one function of A's vmlinux that
ran, in address order, with their offset, instructions, runs and
instructions times runs, per window slot: where inside the function the
count goes (read beside `objdump -d`).

A block's instructions go to the function whose symbol (from the variant's
vmlinux) starts at or before it. With "sysctl" the two window slots are
printed apart ("off": ftrace_enabled 0, "on": 1), with "tracer" too
("off": echo nop, "on": echo function); with "listing" they are
summed.
"""
import argparse
import bisect
import collections
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get('RFTRACE_BUILD', os.path.join(TOP, 'build'))


def symbols(variant):
    vm = os.path.join(BUILD, 'out-x86_64-' + variant, 'vmlinux')
    out = subprocess.run(['nm', '-n', vm], capture_output=True, text=True,
                         check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'tTwW':
            addrs.append(int(p[0], 16))
            names.append(p[2])
    return addrs, names


def load(path, syms, slots):
    addrs, names = syms
    per = collections.Counter()
    with open(path) as f:
        for line in f:
            va, insns, _runs, s0, s1 = line.split()
            va = int(va, 16)
            i = bisect.bisect_right(addrs, va) - 1
            name = names[i] if i >= 0 else '?'
            runs = sum(int((s0, s1)[s]) for s in slots)
            per[name] += int(insns) * runs
    return per


def blocks(variant, counts, func, parts):
    addrs, names = symbols(variant)
    try:
        i = names.index(func)
    except ValueError:
        sys.exit(f'profile-report: no function {func} in {variant}')
    lo = addrs[i]
    hi = addrs[i + 1] if i + 1 < len(addrs) else lo
    rows = []
    with open(counts) as f:
        for line in f:
            va, insns, _runs, s0, s1 = line.split()
            va = int(va, 16)
            if lo <= va < hi:
                rows.append((va, int(insns), (int(s0), int(s1))))
    rows.sort()
    for label, slots in parts:
        total = sum(n * sum(r[s] for s in slots) for _, n, r in rows)
        print(f'== {label}: {func} {total} instructions')
        print(f'{"offset":>8} {"insns":>6} {"runs":>10} {"total":>12}')
        for va, n, r in rows:
            runs = sum(r[s] for s in slots)
            if runs:
                print(f'{va - lo:#8x} {n:6d} {runs:10d} {n * runs:12d}')


# Where a window's instructions go, by kind of function, for --share: the
# first pattern a function's name matches names its kind.
SHARE = [
    ('the Rust core', lambda n: '7rftrace' in n),
    ('ftrace.c and the shim', lambda n: n.startswith(('rftrace_', 'ftrace', '__ftrace'))
     or 'ftrace_hash' in n),
    ('text patching', lambda n: 'text_poke' in n or 'change_page_attr' in n
     or 'smp_call_function' in n or 'flush_tlb' in n),
    ('irq and preempt tracing hooks', lambda n: 'preempt' in n or 'hardirqs' in n
     or n == 'in_lock_functions'),
    ('ring buffer', lambda n: n.startswith(('rb_', '__rb_')) or 'ring_buffer' in n
     or 'cpu_buffer' in n),
    ('allocation', lambda n: 'alloc' in n or 'rmqueue' in n or 'free' in n
     or 'slab' in n or 'page' in n),
]


def share(counts):
    """The window's instructions by kind of function (SHARE), and the rest."""
    out = {}
    for name, c in counts.items():
        kind = next((k for k, f in SHARE if f(name)), 'the rest')
        out[kind] = out.get(kind, 0) + c
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--slots', default='sysctl', choices=['sysctl', 'listing', 'tracer', 'kprobe'])
    ap.add_argument('--top', type=int, default=25)
    ap.add_argument('--blocks', metavar='FUNCTION')
    ap.add_argument('--share', action='store_true',
                    help='the instructions by kind of function, not function by function')
    ap.add_argument('a')
    ap.add_argument('a_counts')
    ap.add_argument('b', nargs='?')
    ap.add_argument('b_counts', nargs='?')
    o = ap.parse_args()
    parts = [('off (ftrace_enabled 0)', [0]), ('on (ftrace_enabled 1)', [1])]
    if o.slots == 'listing':
        parts = [('reads of enabled_functions', [0, 1])]
    elif o.slots == 'kprobe':
        parts = [('off (echo 0 >enable)', [1]),
                 ('on (echo 1 >enable)', [0])]
    elif o.slots == 'tracer':
        parts = [('off (echo nop >current_tracer)', [1]),
                 ('on (echo function >current_tracer)', [0])]
    if o.blocks:
        blocks(o.a, o.a_counts, o.blocks, parts)
        return
    if not o.b_counts:
        ap.error('two variants and their counts, or --blocks')
    sa, sb = symbols(o.a), symbols(o.b)
    for label, slots in parts:
        a = load(o.a_counts, sa, slots)
        b = load(o.b_counts, sb, slots)
        ta, tb = sum(a.values()), sum(b.values())
        print(f'== {label}: {o.a} {ta} instructions, {o.b} {tb}, '
              f'difference {ta - tb} ({ta / tb:.4f})' if tb else f'== {label}: no counts')
        if o.share:
            sa_, sb_ = share(a), share(b)
            print(f'{o.a:>14} {o.b:>14}  kind')
            for k in [k for k, _ in SHARE] + ['the rest']:
                print(f'{sa_.get(k, 0):14d} {sb_.get(k, 0):14d}  {k}')
            continue
        print(f'{o.a:>14} {o.b:>14} {"difference":>14}  function')
        keys = sorted(set(a) | set(b), key=lambda k: -abs(a[k] - b[k]))
        for k in keys[:o.top]:
            print(f'{a[k]:14d} {b[k]:14d} {a[k] - b[k]:14d}  {k[:90]}')


if __name__ == '__main__':
    main()
