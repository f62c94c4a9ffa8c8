#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-plot.py RESULTS.json OUT.svg

Per-call overhead of samples/ftrace/ftrace-ops against the number of ops,
for every kernel in a scripts/bench.sh results file, with and without saved
registers: left, 1 to 100 relevant ops (no irrelevant ones); right, the
same with 100 irrelevant ops beside them when the results have such rows
(k:100), else one relevant op and 0 to 100 irrelevant ones.  Medians,
with min-max bars.
Python standard library only; writes a self-contained SVG."""

import json
import math
import sys

W, H = 980, 470
PANEL_W, PANEL_H = 400, 300
TOP, LEFT = 70, 80
GAP = 90
COLORS = ["#1f5fa8", "#d9641c", "#2a8a3a", "#8a2a8a"]


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def series(data, variant, save_regs, sweep):
    """[(x label, summary)] of one line."""
    pts = []
    for row in data["ops_ns_per_call"]:
        if row["save_regs"] != save_regs or not row.get(variant):
            continue
        if sweep == "relevant" and row["irrelevant"] == 0 and row["relevant"] >= 1:
            pts.append((row["relevant"], row[variant]))
        elif sweep == "irrelevant" and row["relevant"] == 1:
            pts.append((row["irrelevant"], row[variant]))
        elif sweep == "relevant100" and row["irrelevant"] == 100 and row["relevant"] >= 1:
            pts.append((row["relevant"], row[variant]))
    return sorted(pts, key=lambda p: p[0])


def nice_ticks(lo, hi, logscale):
    if logscale:
        ticks = []
        e = math.floor(math.log10(lo))
        while 10 ** e <= hi * 1.0001:
            for m in (1, 2, 5):
                t = m * 10 ** e
                if lo <= t <= hi:
                    ticks.append(t)
            e += 1
        return ticks
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / 4)) if span > 0 else 1
    for m in (1, 2, 5, 10):
        if span / (step * m) <= 6:
            step *= m
            break
    t = math.ceil(lo / step) * step
    ticks = []
    while t <= hi + 1e-9:
        ticks.append(t)
        t += step
    return ticks


def panel(out, data, x0, sweep, title, xlabel, logscale):
    variants = data["variants"]
    lines = []
    xs = set()
    for vi, v in enumerate(variants):
        for sr in (0, 1):
            pts = series(data, v, sr, sweep)
            if pts:
                lines.append((vi, v, sr, pts))
                xs.update(p[0] for p in pts)
    if not lines:
        return
    xs = sorted(xs)
    vals = [s[k] for *_, pts in lines for _, s in pts for k in ("min", "max")]
    lo, hi = min(vals), max(vals)
    if logscale:
        lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
    else:
        pad = (hi - lo) * 0.1 or hi * 0.1
        lo, hi = max(0, lo - pad), hi + pad

    def ypos(y):
        if logscale:
            f = (math.log10(y) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        else:
            f = (y - lo) / (hi - lo)
        return TOP + PANEL_H - f * PANEL_H

    def xpos(x):
        i = xs.index(x)
        return x0 + 30 + i * (PANEL_W - 60) / max(1, len(xs) - 1)

    out.append(f'<rect x="{x0}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" '
               'fill="none" stroke="#444"/>')
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 12}" text-anchor="middle" '
               f'font-weight="bold">{esc(title)}</text>')
    for t in nice_ticks(lo, hi, logscale):
        y = ypos(t)
        out.append(f'<line x1="{x0}" x2="{x0 + PANEL_W}" y1="{y:.1f}" y2="{y:.1f}" '
                   'stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
    for x in xs:
        out.append(f'<text x="{xpos(x):.1f}" y="{TOP + PANEL_H + 18}" '
                   f'text-anchor="middle">{x}</text>')
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP + PANEL_H + 40}" '
               f'text-anchor="middle">{esc(xlabel)}</text>')
    for vi, v, sr, pts in lines:
        color = COLORS[vi % len(COLORS)]
        dash = ' stroke-dasharray="6,4"' if sr else ""
        path = " ".join(f"{'M' if i == 0 else 'L'}{xpos(x):.1f},{ypos(s['median']):.1f}"
                        for i, (x, s) in enumerate(pts))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for x, s in pts:
            px = xpos(x) + (vi - (len(variants) - 1) / 2) * 5
            if s["max"] > s["min"]:
                out.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{ypos(s["min"]):.1f}" '
                           f'y2="{ypos(s["max"]):.1f}" stroke="{color}"/>')
            py = ypos(s["median"])
            tip = (f"{v}, save_regs={sr}, {x} ops: median {s['median']:.2f} "
                   f"(min {s['min']:.2f}, max {s['max']:.2f}, n={s['n']})")
            if vi == 0:
                out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{color}">'
                           f'<title>{esc(tip)}</title></circle>')
            else:
                out.append(f'<rect x="{px - 4:.1f}" y="{py - 4:.1f}" width="8" height="8" '
                           f'fill="white" stroke="{color}" stroke-width="2">'
                           f'<title>{esc(tip)}</title></rect>')


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-plot.py RESULTS.json OUT.svg")
    with open(sys.argv[1]) as f:
        data = json.load(f)
    icount = data.get("clock", "").startswith("icount")
    unit = "guest instructions per call" if icount else "ns per call (TCG wall clock)"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
           f'ftrace-ops per-call overhead: {esc(", ".join(data["variants"]))}</text>',
           f'<text x="{W / 2}" y="40" text-anchor="middle" fill="#555">'
           f'{esc(data.get("clock", ""))}; {esc(data.get("kernel", ""))}; '
           f'median of {data.get("reps")} boot(s) each, bars min-max</text>',
           f'<text transform="translate(18,{TOP + PANEL_H / 2}) rotate(-90)" '
           f'text-anchor="middle">{esc(unit)}</text>']
    panel(out, data, LEFT, "relevant", "relevant ops (0 irrelevant), log scale",
          "ops on the called function", True)
    if any(r["irrelevant"] == 100 and r["relevant"] >= 2 for r in data["ops_ns_per_call"]):
        panel(out, data, LEFT + PANEL_W + GAP, "relevant100",
              "relevant ops + 100 irrelevant ops, log scale", "ops on the called function", True)
    else:
        panel(out, data, LEFT + PANEL_W + GAP, "irrelevant", "1 relevant op + irrelevant ops",
              "ops on another function", False)
    ly = H - 38
    x = LEFT
    for vi, v in enumerate(data["variants"]):
        color = COLORS[vi % len(COLORS)]
        for sr in (0, 1):
            dash = ' stroke-dasharray="6,4"' if sr else ""
            out.append(f'<line x1="{x}" x2="{x + 34}" y1="{ly}" y2="{ly}" stroke="{color}" '
                       f'stroke-width="2"{dash}/>')
            if vi == 0:
                out.append(f'<circle cx="{x + 17}" cy="{ly}" r="4" fill="{color}"/>')
            else:
                out.append(f'<rect x="{x + 13}" y="{ly - 4}" width="8" height="8" '
                           f'fill="white" stroke="{color}" stroke-width="2"/>')
            label = f"{v}, {'saved regs' if sr else 'no saved regs'}"
            out.append(f'<text x="{x + 40}" y="{ly + 4}">{esc(label)}</text>')
            x += 210
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
