#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""module-cycles.py [DIR] [--edges]: the module graph of the crate in DIR
(default: the project's rust/), built from the crate::, super::, self::
and child-module paths of the code (comments, doc comments and string
literals stripped). Prints the strongly connected components of more
than one module and the direct two-way imports, with the crate root and
without; exits 1 if there is any. Last line: "module cycles: N"."""
import os, re, sys, collections
args = [a for a in sys.argv[1:] if not a.startswith('--')]
ROOT = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'rust')
ROOT = os.path.normpath(ROOT)
INCLUDE_TESTS = '--tests' in sys.argv

def modname(path):
    rel = os.path.relpath(path, ROOT)[:-3].split('/')
    if rel in (['rftrace'],): return 'crate'
    if rel == ['lib']: return 'crate(lib)'
    if rel[-1] == 'mod': rel = rel[:-1]
    return '::'.join(rel)

files = {}
for d, _, fs in os.walk(ROOT):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f); m = modname(p)
            if m.startswith('tests') and not INCLUDE_TESTS: continue
            files[m] = p
mods = set(files)

def strip(src):
    out = []; i = 0; n = len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); i = n if j < 0 else j; continue
        if src.startswith('/*', i):
            depth = 0
            while i < n:
                if src.startswith('/*', i): depth += 1; i += 2
                elif src.startswith('*/', i): depth -= 1; i += 2
                else: i += 1
                if depth == 0: break
            out.append(' '); continue
        m = re.match(r'b?r(#*)"', src[i:i+10])
        if m and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            end = '"' + m.group(1); j = src.find(end, i + len(m.group(0))); i = j + len(end); out.append('""'); continue
        if c == '"' or (c == 'b' and src.startswith('b"', i)):
            i += 1 if c == '"' else 2
            while i < n and src[i] != '"':
                i += 2 if src[i] == '\\' else 1
            i += 1; out.append('""'); continue
        if c == "'":  # char literal vs lifetime
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:i+12])
            if m: i += len(m.group(0)); out.append("' '"); continue
        out.append(c); i += 1
    return ''.join(out)

def resolve(segs):
    """longest prefix of segs naming a module file."""
    best = None
    for k in range(len(segs), 0, -1):
        cand = '::'.join(segs[:k])
        if cand in mods: return cand
    return 'crate'

def expand_tree(s, i):
    """parse a use-tree starting at s[i]; return (list of paths (list of segs), new i)."""
    paths = []
    def ws(i):
        while i < len(s) and s[i].isspace(): i += 1
        return i
    def tree(i, prefix):
        i = ws(i)
        if s[i] == '{':
            i += 1
            while True:
                i = ws(i)
                if s[i] == '}': return i + 1
                i = tree(i, prefix)
                i = ws(i)
                if s[i] == ',': i += 1
        m = re.compile(r'(\w+|\*)').match(s, i)
        seg = m.group(1); i = m.end()
        i = ws(i)
        if s.startswith('::', i):
            return tree(i + 2, prefix + [seg])
        if seg != 'self' or not prefix: paths.append(prefix + ([seg] if seg != 'self' else []))
        else: paths.append(prefix)
        m2 = re.compile(r'\s*as\s+\w+').match(s, i)
        if m2: i = m2.end()
        return i
    i = tree(i, [])
    return paths, i

edges = collections.defaultdict(lambda: collections.defaultdict(list))
TOP = {'rfcore', 'kside'}
for m, p in sorted(files.items()):
    raw = open(p).read(); s = strip(raw)
    # inline module stack, by brace depth
    inline = []  # (name, depth_at_open)
    depth = 0; i = 0; n = len(s)
    base = [] if m in ('crate', 'crate(lib)') else m.split('::')
    while i < n:
        c = s[i]
        mm = re.compile(r'\bmod\s+(\w+)\s*\{').match(s, i)
        if mm and (i == 0 or not (s[i-1].isalnum() or s[i-1] == '_')):
            inline.append((mm.group(1), depth)); depth += 1; i = mm.end(); continue
        if c == '{': depth += 1
        elif c == '}':
            depth -= 1
            if inline and inline[-1][1] == depth: inline.pop()
        mm = re.compile(r'(crate|super|self)::').match(s, i)
        if mm and (i == 0 or not (s[i-1].isalnum() or s[i-1] in '_:')):
            kw = mm.group(1)
            cur = base + [x for x, _ in inline]
            paths, j = expand_tree(s, mm.end())
            for segs in paths:
                if kw == 'crate': full = segs
                elif kw == 'self': full = cur + segs
                else:
                    up = cur[:-1]; k = 0
                    while k < len(segs) and segs[k] == 'super': up = up[:-1]; k += 1
                    full = up + segs[k:]
                if m.startswith('crate'):
                    pass
                tgt = resolve(full)
                if tgt != m:
                    edges[m][tgt].append(s.count('\n', 0, i) + 1)
            i = j; continue
        # bare child-module paths (2018 uniform paths), e.g. `x86::X86` in kside/arch/mod.rs
        cur = base + [x for x, _ in inline]
        mm = re.compile(r'(\w+)::').match(s, i)
        if mm and (i == 0 or not (s[i-1].isalnum() or s[i-1] in '_:')) and mm.group(1) not in ('crate','super','self','Self','kernel','core','alloc'):
            cand = '::'.join(cur + [mm.group(1)])
            if cand in mods and cand != m:
                paths, j = expand_tree(s, i)
                for segs in paths:
                    tgt = resolve(cur + segs)
                    if tgt != m: edges[m][tgt].append(s.count('\n', 0, i) + 1)
                i = j; continue
        # bare first-segment paths from crate root (2018 relative): rfcore::, kside::
        if m in ('crate', 'crate(lib)'):
            mm = re.compile(r'(rfcore|kside)::').match(s, i)
            if mm and (i == 0 or not (s[i-1].isalnum() or s[i-1] in '_:')):
                paths, j = expand_tree(s, i)
                for segs in paths:
                    tgt = resolve(segs); edges[m][tgt].append(s.count('\n', 0, i) + 1)
                i = j; continue
        i += 1

# Tarjan SCC
def sccs(nodes, E):
    idx = {}; low = {}; st = []; on = set(); out = []; c = [0]
    sys.setrecursionlimit(10000)
    def sc(v):
        idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
        for w in E.get(v, {}):
            if w not in idx: sc(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop(); on.discard(w); comp.append(w)
                if w == v: break
            out.append(comp)
    for v in sorted(nodes):
        if v not in idx: sc(v)
    return out

found = 0

def report(title, E):
    global found
    print('==', title)
    comps = [sorted(c) for c in sccs(mods, E) if len(c) > 1]
    if not comps: print('  no SCC of size > 1')
    for c in comps:
        print('  SCC (%d): %s' % (len(c), ', '.join(c)))
        for a in c:
            for b in sorted(E.get(a, {})):
                if b in c: print('    %s -> %s  (lines %s)' % (a, b, ','.join(map(str, sorted(set(E[a][b]))[:8]))))
    mutual = sorted({(a, b) for a in E for b in E[a] if a < b and a in E.get(b, {})})
    print('  direct 2-cycles:', ', '.join('%s<->%s' % x for x in mutual) or 'none')
    found += len(comps) + len(mutual)

if '--edges' in sys.argv:
    for a in sorted(edges):
        print(a, '->', ', '.join('%s(%s)' % (b, ','.join(map(str, sorted(set(l))[:5]))) for b, l in sorted(edges[a].items())))
root = {'crate', 'crate(lib)'}
Eno = {a: {b: l for b, l in d.items() if b not in root} for a, d in edges.items() if a not in root}
report('graph without crate root (rftrace.rs / lib.rs)', Eno)
report('full graph including crate root', edges)
print('== edges into crate root:')
for a in sorted(edges):
    for b in root:
        if b in edges[a]: print('  %s -> %s (lines %s)' % (a, b, ','.join(map(str, sorted(set(edges[a][b]))))))
print('== edges out of crate root:', ', '.join(sorted(edges.get('crate', {}))))
print('module cycles: %d' % found)
sys.exit(1 if found else 0)
