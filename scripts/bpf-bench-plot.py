#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bpf-bench-plot.py RESULTS.txt OUT.svg

The attach and detach figures of a scripts/bpf-bench.sh results file as
grouped bars: one group per benchmark, attach on the left panel and
detach on the right, one bar per kernel (the median of its runs), in
guest milliseconds under -icount shift=0.  Python standard library only;
writes a self-contained SVG."""

import statistics
import sys

COLORS = ["#1f5fa8", "#d9641c", "#2a8a3a", "#8a2a8a"]
PANEL_W, PANEL_H, TOP, LEFT, GAP = 430, 320, 60, 230, 60


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def read(path):
    """{bench: {kernel: (attach, detach)}} (medians), kernels in order."""
    runs, kernels = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            bench, kernel, _run, _n, att, det = line.split()[:6]
            if kernel not in kernels:
                kernels.append(kernel)
            runs.setdefault(bench, {}).setdefault(kernel, []).append(
                (float(att), float(det)))
    med = {}
    for bench, per in runs.items():
        med[bench] = {k: (statistics.median(a for a, _ in v),
                          statistics.median(d for _, d in v))
                      for k, v in per.items()}
    return med, kernels


def panel(out, x0, title, benches, kernels, data, which):
    top = max((data[b][k][which] for b in benches for k in kernels
               if k in data[b]), default=1.0) or 1.0
    out.append(f'<text x="{x0 + PANEL_W / 2}" y="{TOP - 20}" '
               f'text-anchor="middle" font-weight="bold">{esc(title)}</text>')
    row_h = PANEL_H / max(len(benches), 1)
    bar_h = row_h * 0.8 / max(len(kernels), 1)
    for i, b in enumerate(benches):
        y = TOP + i * row_h
        if x0 == LEFT:
            out.append(f'<text x="{LEFT - 8}" y="{y + row_h / 2 + 4}" '
                       f'text-anchor="end">{esc(b)}</text>')
        for j, k in enumerate(kernels):
            if k not in data[b]:
                continue
            v = data[b][k][which]
            w = PANEL_W * v / top
            yy = y + row_h * 0.1 + j * bar_h
            out.append(f'<rect x="{x0}" y="{yy:.1f}" width="{w:.1f}" '
                       f'height="{bar_h - 1:.1f}" fill="{COLORS[j % 4]}"/>')
            out.append(f'<text x="{x0 + w + 4:.1f}" y="{yy + bar_h - 3:.1f}" '
                       f'font-size="10">{v:.0f}</text>')
    out.append(f'<line x1="{x0}" y1="{TOP}" x2="{x0}" y2="{TOP + PANEL_H}" '
               f'stroke="black"/>')


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bpf-bench-plot.py RESULTS.txt OUT.svg")
    data, kernels = read(sys.argv[1])
    benches = sorted(data)
    width = LEFT + 2 * PANEL_W + GAP + 80
    height = TOP + PANEL_H + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    panel(out, LEFT, "attach (guest ms, -icount shift=0)", benches,
          kernels, data, 0)
    panel(out, LEFT + PANEL_W + GAP, "detach (guest ms)", benches,
          kernels, data, 1)
    for j, k in enumerate(kernels):
        x = LEFT + j * 160
        out.append(f'<rect x="{x}" y="{TOP + PANEL_H + 25}" width="14" '
                   f'height="14" fill="{COLORS[j % 4]}"/>')
        out.append(f'<text x="{x + 20}" y="{TOP + PANEL_H + 37}">'
                   f'{esc(k)}</text>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
