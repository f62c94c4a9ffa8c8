#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guests' "@@RFT BENCH" lines (scripts/bench.sh) into a JSON file
and a table: medians, spread (min-max) and the Rust/C ratio of each row."""

import argparse
import glob
import json
import os
import platform
import re
import statistics
import subprocess
import sys


def parse_log(path):
    out = {"ops": {}, "patch_all": [], "patch_1000": [], "boot": None}
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.strip().replace("\r", "")
            if not line.startswith("@@RFT BENCH "):
                continue
            body = line[len("@@RFT BENCH "):]
            kind, _, rest = body.partition(" ")
            kv = dict(re.findall(r"(\w+)=(\S+)", rest))
            if kind == "ops":
                calls = int(kv["calls"])
                total = int(kv["total_ns"])
                key = (int(kv["relevant"]), int(kv["irrelevant"]), int(kv["save_regs"]))
                out["ops"][key] = total / calls if calls and total else None
            elif kind in ("patch_all", "patch_1000"):
                out[kind].append((int(kv["sites"]), int(kv["on_us"]), int(kv["off_us"])))
            elif kind == "boot":
                out["boot"] = rest
            elif kind.startswith("records"):
                out["records"] = int(body.split("=")[1])
    return out


def boot_numbers(text):
    # "20555 pages:81 groups: 10 ftrace boot update time = 12345 (ns) ..."
    nums = {}
    if not text:
        return nums
    m = re.search(r"(\d+) pages:(\d+) groups: (\d+)", text)
    if m:
        nums["records"], nums["pages"], nums["groups"] = map(int, m.groups())
    m = re.search(r"boot update time = (\d+)", text)
    if m:
        nums["boot_update_ns"] = int(m.group(1))
    return nums


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values), "n": len(values)}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, required=True)
    ap.add_argument("--calls", type=int, required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--kernel", required=True)
    a = ap.parse_args()

    runs = {}
    for v in ("stock", "rust"):
        runs[v] = [parse_log(p) for p in sorted(glob.glob(os.path.join(a.dir, "logs", f"{v}-*.log")))]
        if not runs[v]:
            sys.exit(f"no logs for {v} in {a.dir}/logs")

    rows = sorted({k for r in runs["stock"] + runs["rust"] for k in r["ops"]})
    result = {
        "machine": {"cpu_model": cpu_model(), "cpus": os.cpu_count(),
                    "host_kernel": platform.release()},
        "accelerator": "QEMU TCG (thread=single), -cpu max -smp 2 -m 2G",
        "qemu": subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True,
                               text=True).stdout.splitlines()[0:1],
        "kernel": f"linux-source-7.2 {a.kernel}",
        "config": open(a.config).read().splitlines(),
        "reps": a.reps, "calls_per_row": a.calls,
        "ops_ns_per_call": [], "patching_us": {}, "boot": {},
    }
    print(f"# rftrace bench: {result['machine']['cpu_model']}, {os.cpu_count()} CPUs, "
          f"{result['accelerator']}, kernel {result['kernel']}, {a.reps} alternating runs each")
    print("# TCG figures: absolute times are an emulator's; read the ratios.")
    print()
    print("| relevant | irrelevant | save_regs | stock ns/call (min-max) | Rust ns/call (min-max) | Rust/C |")
    print("|---:|---:|---:|---|---|---:|")
    for key in rows:
        s = summary([r["ops"].get(key) for r in runs["stock"]])
        r = summary([x["ops"].get(key) for x in runs["rust"]])
        ratio = (r["median"] / s["median"]) if s and r and s["median"] else None
        result["ops_ns_per_call"].append({"relevant": key[0], "irrelevant": key[1],
                                          "save_regs": key[2], "stock": s, "rust": r,
                                          "ratio": ratio})
        fmt = lambda x: f"{x['median']:.1f} ({x['min']:.1f}-{x['max']:.1f})" if x else "n/a"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {fmt(s)} | {fmt(r)} | "
              f"{ratio:.2f} |" if ratio else f"| {key[0]} | {key[1]} | {key[2]} | {fmt(s)} | {fmt(r)} | n/a |")
    print()
    print("| patching | sites | stock on / off ms (median) | Rust on / off ms (median) | Rust/C on, off |")
    print("|---|---:|---|---|---|")
    for kind in ("patch_all", "patch_1000"):
        entry = {}
        for v in ("stock", "rust"):
            samples = [x for r in runs[v] for x in r[kind]]
            entry[v] = {"sites": samples[0][0] if samples else None,
                        "on_us": summary([x[1] for x in samples]),
                        "off_us": summary([x[2] for x in samples])}
        result["patching_us"][kind] = entry
        s, r = entry["stock"], entry["rust"]
        if s["on_us"] and r["on_us"]:
            print(f"| {kind} | {s['sites']} | {s['on_us']['median'] / 1000:.1f} / "
                  f"{s['off_us']['median'] / 1000:.1f} | {r['on_us']['median'] / 1000:.1f} / "
                  f"{r['off_us']['median'] / 1000:.1f} | "
                  f"{r['on_us']['median'] / s['on_us']['median']:.2f}, "
                  f"{r['off_us']['median'] / s['off_us']['median']:.2f} |")
    print()
    print("| boot | records | pages | groups | bytes per record | boot update ms (median) |")
    print("|---|---:|---:|---:|---:|---:|")
    for v in ("stock", "rust"):
        nums = [boot_numbers(r["boot"]) for r in runs[v]]
        upd = summary([n.get("boot_update_ns") for n in nums])
        n0 = nums[0] if nums else {}
        per = (n0.get("pages", 0) * 4096 / n0["records"]) if n0.get("records") else None
        result["boot"][v] = {"records": n0.get("records"), "pages": n0.get("pages"),
                             "groups": n0.get("groups"), "bytes_per_record": per,
                             "boot_update_ns": upd}
        print(f"| {v} | {n0.get('records')} | {n0.get('pages')} | {n0.get('groups')} | "
              f"{per:.1f} | {upd['median'] / 1e6:.1f} |" if per and upd else f"| {v} | n/a |")
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print()
    print(f"results: {a.out}")


if __name__ == "__main__":
    main()
