#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guests' "@@RFT BENCH" lines (scripts/bench.sh) into a JSON file
and a table: medians, spread (min-max) and the ratio of the second kernel
over the first (Rust/C) of each row.

    bench-report.py --dir DIR --out FILE --variants "stock rust" ...
    bench-report.py --check FILE     (every field there and well-formed?)
"""

import argparse
import glob
import hashlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys

# Patching rows: sites, then the "on" and "off" times.  register_1: one
# function's ops registered and unregistered (the function tracer on and
# off with a one-function filter); filter_change: a started ops' filter
# changed from vfs_* to sched_* ("on") and back ("off").
PATCH_KINDS = ("patch_all", "patch_1000", "register_1", "filter_change")
ROW_FIELDS = ("relevant", "irrelevant", "save_regs", "ratio")
SUMMARY_FIELDS = ("median", "min", "max", "n", "samples")
TOP_FIELDS = ("machine", "accelerator", "clock", "unit", "qemu", "qemu_args",
              "kernel", "kernel_builds", "project_commit", "config", "variants",
              "reps", "calls_per_row", "patch_reps", "ops_ns_per_call",
              "patching_us", "boot", "guest_clock", "wall_seconds_per_boot")


def parse_log(path):
    out = {"ops": {}, "site": {}, "patch_all": [], "patch_1000": [], "register_1": [],
           "filter_change": [], "listing": [], "sysctl": [], "tracer": [], "boot": None,
           "clock": None}
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
            elif kind == "site":
                # "relevant=R irrelevant=I save_regs=S <enabled_functions line>"
                key = (int(kv["relevant"]), int(kv["irrelevant"]), int(kv["save_regs"]))
                out["site"][key] = rest.split(" ", 3)[3] if rest.count(" ") >= 3 else ""
            elif kind in PATCH_KINDS:
                out[kind].append((int(kv["sites"]), int(kv["on_us"]), int(kv["off_us"])))
            elif kind == "sysctl":
                out["sysctl"].append((int(kv["off_us"]), int(kv["on_us"])))
            elif kind == "tracer":
                out["tracer"].append((int(kv["on_us"]), int(kv["off_us"])))
            elif kind == "listing":
                out["listing"].append((int(kv["enabled_us"]), int(kv["available_us"])))
            elif kind == "boot":
                out["boot"] = rest
            elif kind == "clock":
                out["clock"] = rest
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
    if m and int(m.group(1)):
        nums["boot_update_ns"] = int(m.group(1))
    # The whole boot table: groups built, records made, sites converted
    # (ftrace_process_locs() in ftrace_init(), patch 0021); the table
    # build alone is the whole minus the conversion (the update time).
    m = re.search(r"boot records built and converted in (\d+) ns", text)
    if m and int(m.group(1)):
        nums["boot_total_ns"] = int(m.group(1))
        if nums.get("boot_update_ns") and nums["boot_total_ns"] >= nums["boot_update_ns"]:
            nums["boot_table_ns"] = nums["boot_total_ns"] - nums["boot_update_ns"]
    return nums


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values), "n": len(values), "samples": values}


def ratio(a, b, key="median"):
    return b[key] / a[key] if a and b and a[key] else None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def kernel_build(build, variant):
    """What identifies one booted kernel: release, its ftrace core options
    and a hash of the image and of the whole .config."""
    arch = os.environ.get("RFT_ARCH", "x86_64")
    out = os.path.join(build, f"out-{arch}-{variant}")
    info = {"variant": variant}
    try:
        with open(os.path.join(out, "include/config/kernel.release")) as f:
            info["release"] = f.read().strip()
        with open(os.path.join(out, ".config"), "rb") as f:
            cfg = f.read()
        info["config_sha256"] = hashlib.sha256(cfg).hexdigest()
        info["ftrace_rust_core"] = [l for l in cfg.decode(errors="replace").splitlines()
                                    if "FTRACE_RUST_CORE" in l]
        image = {"arm64": "arch/arm64/boot/Image",
                 "riscv64": "arch/riscv/boot/Image"}.get(arch, "arch/x86/boot/bzImage")
        with open(os.path.join(out, image), "rb") as f:
            info["image_sha256"] = hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        info["error"] = str(e)
    return info


def run_files(d, variant, ext):
    """The files VARIANT-REP.EXT of one variant's runs ("rust-1.log", not
    "rust-norelax-1.log")."""
    pat = re.compile(re.escape(variant) + r"-\d+\." + re.escape(ext) + "$")
    return sorted(p for p in glob.glob(os.path.join(d, "logs", f"{variant}-*.{ext}"))
                  if pat.match(os.path.basename(p)))


def alone_rows(runs, variants, kind, keys):
    """{variant: {key: summary}} of the samples of `kind` (tuples in the
    order of `keys`), for the variants that have any."""
    table = {}
    for v in variants:
        samples = [x for r in runs[v] for x in r.get(kind, [])]
        if samples:
            table[v] = {key: summary([x[i] for x in samples]) for i, key in enumerate(keys)}
    return table


def fmt(x, scale=1.0, prec=1):
    if not x:
        return "n/a"
    m, lo, hi = x["median"] / scale, x["min"] / scale, x["max"] / scale
    if lo == hi:
        return f"{m:.{prec}f} (all {x['n']} equal)"
    return f"{m:.{prec}f} ({lo:.{prec}f}-{hi:.{prec}f})"


def fr(r):
    return f"{r:.3f}" if r is not None else "n/a"


def report(a):
    variants = a.variants.split()
    runs = {}
    for v in variants:
        logs = run_files(a.dir, v, "log")
        runs[v] = [parse_log(p) for p in logs]
        if not runs[v]:
            sys.exit(f"no logs for {v} in {a.dir}/logs")
    secs = {}
    for v in variants:
        vals = []
        for p in run_files(a.dir, v, "secs"):
            with open(p) as f:
                vals.append(int(f.read().strip() or 0))
        secs[v] = summary(vals)
    base, other = variants[0], variants[-1]
    icount = a.clock.startswith("icount")
    unit = "guest instructions (icount: 1 ns = 1 instruction)" if icount else "ns (TCG wall clock)"
    allruns = [r for v in variants for r in runs[v]]
    rows = sorted({k for r in allruns for k in r["ops"]})
    qemu_bin = {"arm64": "qemu-system-aarch64",
                "riscv64": "qemu-system-riscv64"}.get(os.environ.get("RFT_ARCH", "x86_64"),
                                                      "qemu-system-x86_64")
    qemu = subprocess.run([qemu_bin, "--version"], capture_output=True,
                          text=True).stdout.splitlines()[0:1]
    result = {
        "machine": {"cpu_model": cpu_model(), "cpus": os.cpu_count(),
                    "host_kernel": platform.release()},
        "accelerator": f"QEMU TCG (thread=single), -cpu max -smp {os.environ.get('RFT_SMP', '2')}"
                       f" -m {os.environ.get('RFT_MEM', '2G')}",
        "clock": a.clock,
        "unit": unit,
        "qemu": qemu,
        "qemu_args": a.qemu_args.split(),
        "kernel": f"linux-source-7.2 {a.kernel}",
        "kernel_builds": {v: kernel_build(a.build, v) for v in variants},
        "project_commit": a.commit,
        "config": open(a.config).read().splitlines(),
        "variants": variants,
        "ratio": f"{other}/{base}" if len(variants) > 1 else "none (one kernel)",
        "reps": a.reps, "calls_per_row": a.calls, "patch_reps": a.patch_reps,
        "ops_ns_per_call": [], "patching_us": {}, "boot": {},
        "guest_clock": {v: sorted({r["clock"] for r in runs[v] if r["clock"]}) for v in variants},
        "wall_seconds_per_boot": secs,
    }
    u = "instructions" if icount else "ns"
    print(f"# rftrace bench: {result['machine']['cpu_model']}, {os.cpu_count()} CPUs, "
          f"{result['accelerator']}, kernel {result['kernel']}, "
          f"{a.reps} alternating run(s) of {', '.join(variants)}")
    print(f"# clock: {a.clock}")
    if icount:
        print("# TCG with QEMU's instruction counter: guest-side times are guest instruction counts.")
    else:
        print("# TCG figures: absolute times are an emulator's; read the ratios.")
    print()
    cols = " | ".join(f"{v} {u}/call (min-max)" for v in variants)
    print(f"| relevant | irrelevant | save_regs | {cols} | {result['ratio']} (medians) "
          f"| {result['ratio']} (minima) |")
    print("|---:|---:|---:|" + "---|" * len(variants) + "---:|---:|")
    for key in rows:
        s = {v: summary([r["ops"].get(key) for r in runs[v]]) for v in variants}
        rt = ratio(s[base], s[other]) if len(variants) > 1 else None
        # interrupts only ever add to a row's count: the minimum is the
        # run with the fewest of them
        rtmin = ratio(s[base], s[other], "min") if len(variants) > 1 else None
        entry = {"relevant": key[0], "irrelevant": key[1], "save_regs": key[2], "ratio": rt,
                 "ratio_of_min": rtmin}
        entry.update(s)
        # what the traced site called, as enabled_functions showed it
        entry["site"] = {v: sorted({r["site"][key] for r in runs[v] if key in r["site"]})
                         for v in variants}
        result["ops_ns_per_call"].append(entry)
        cells = " | ".join(fmt(s[v], prec=2 if icount else 1) for v in variants)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {cells} | {fr(rt)} | {fr(rtmin)} |")
    print()
    pu = "M instructions" if icount else "ms"
    print(f"| patching | sites | " + " | ".join(f"{v} on / off {pu} (median)" for v in variants)
          + f" | {result['ratio']} on, off |")
    print("|---|---:|" + "---|" * len(variants) + "---|")
    for kind in PATCH_KINDS:
        entry = {}
        for v in variants:
            samples = [x for r in runs[v] for x in r[kind]]
            entry[v] = {"sites": samples[0][0] if samples else None,
                        "on_us": summary([x[1] for x in samples]),
                        "off_us": summary([x[2] for x in samples])}
        b, o = entry[base], entry[other]
        entry["ratio_on"] = ratio(b["on_us"], o["on_us"]) if len(variants) > 1 else None
        entry["ratio_off"] = ratio(b["off_us"], o["off_us"]) if len(variants) > 1 else None
        result["patching_us"][kind] = entry
        if b["on_us"]:
            cells = " | ".join(f"{fmt(entry[v]['on_us'], 1000)} / {fmt(entry[v]['off_us'], 1000)}"
                               for v in variants)
            print(f"| {kind} | {b['sites']} | {cells} | {fr(entry['ratio_on'])}, "
                  f"{fr(entry['ratio_off'])} |")
    # Rows timed alone (runs made before the guest timed them have none):
    # the listings, and the update pass nearly alone (the ftrace_enabled
    # sysctl with the function tracer on).
    for kind, title, rows in (
            ("listing", "listing, read whole with wc -l",
             (("enabled_us", "enabled_functions, function tracer on"),
              ("available_us", "available_filter_functions"))),
            ("sysctl", "ftrace_enabled, function tracer on",
             (("off_us", "0: every site to a NOP"), ("on_us", "1: every site back"))),
            ("tracer", "function tracer, nothing between on and off",
             (("on_us", "on: every site to its call"), ("off_us", "off: every site to a NOP")))):
        table = alone_rows(runs, variants, kind, [key for key, _ in rows])
        if not table:
            continue
        result[f"{kind}_us"] = table
        print()
        print(f"| {title} | " + " | ".join(f"{v} {pu} (median)" for v in variants) + " |")
        print("|---|" + "---:|" * len(variants))
        for key, what in rows:
            cells = " | ".join(fmt(table[v][key], 1000) if v in table else "n/a" for v in variants)
            print(f"| {what} | {cells} |")
    print()
    bu = "M instructions" if icount else "ms"
    print(f"| boot | records | pages | groups | bytes per record | conversion {bu} | "
          f"table build {bu} | whole {bu} |")
    print("|---|---:|---:|---:|---:|---|---|---|")
    for v in variants:
        nums = [boot_numbers(r["boot"]) for r in runs[v]]
        upd = summary([n.get("boot_update_ns") for n in nums])
        table = summary([n.get("boot_table_ns") for n in nums])
        total = summary([n.get("boot_total_ns") for n in nums])
        n0 = nums[0] if nums else {}
        per = (n0.get("pages", 0) * 4096 / n0["records"]) if n0.get("records") else None
        result["boot"][v] = {"records": n0.get("records"), "pages": n0.get("pages"),
                             "groups": n0.get("groups"), "bytes_per_record": per,
                             "boot_update_ns": upd, "boot_table_ns": table,
                             "boot_total_ns": total}
        print(f"| {v} | {n0.get('records')} | {n0.get('pages')} | {n0.get('groups')} | "
              f"{per:.1f} | {fmt(upd, 1e6, 3)} | {fmt(table, 1e6, 3)} | {fmt(total, 1e6, 3)} |"
              if per else f"| {v} | n/a |")
    if len(variants) > 1:
        for key, what in (("update", "conversion"), ("table", "table build"),
                          ("total", "whole")):
            result["boot"][f"ratio_{key}"] = ratio(result["boot"][base][f"boot_{key}_ns"],
                                                   result["boot"][other][f"boot_{key}_ns"])
            print(f"boot {what} {result['ratio']}: {fr(result['boot'][f'ratio_{key}'])}")
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print()
    print(f"results: {a.out}")


def check(path):
    """Every field present and of the right shape; nothing about speed."""
    errs = []
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"bench check: {path}: {e}")
    for k in TOP_FIELDS:
        if k not in d:
            errs.append(f"missing field {k}")
    for k in ("cpu_model", "cpus", "host_kernel"):
        if not d.get("machine", {}).get(k):
            errs.append(f"missing machine.{k}")
    variants = d.get("variants") or []
    if not variants:
        errs.append("no variants")
    if not d.get("ops_ns_per_call"):
        errs.append("no ftrace-ops rows")

    def summ(s, where):
        if not isinstance(s, dict):
            errs.append(f"{where}: no measurement")
            return
        for k in SUMMARY_FIELDS:
            if k not in s:
                errs.append(f"{where}: missing {k}")
        if not (isinstance(s.get("median"), (int, float)) and s["median"] > 0):
            errs.append(f"{where}: median not a positive number")

    for row in d.get("ops_ns_per_call", []):
        where = f"row {row.get('relevant')}:{row.get('irrelevant')} regs={row.get('save_regs')}"
        for k in ROW_FIELDS:
            if k not in row:
                errs.append(f"{where}: missing {k}")
        for v in variants:
            summ(row.get(v), f"{where} {v}")
        if len(variants) > 1 and not isinstance(row.get("ratio"), (int, float)):
            errs.append(f"{where}: no ratio")
    if d.get("patch_reps", 0) > 0:
        for kind in PATCH_KINDS:
            for v in variants:
                e = d.get("patching_us", {}).get(kind, {}).get(v, {})
                if not e.get("sites"):
                    errs.append(f"{kind} {v}: no sites")
                summ(e.get("on_us"), f"{kind} {v} on")
                summ(e.get("off_us"), f"{kind} {v} off")
    for v in variants:
        b = d.get("boot", {}).get(v, {})
        for k in ("records", "pages", "groups", "bytes_per_record"):
            if not b.get(k):
                errs.append(f"boot {v}: missing {k}")
        summ(b.get("boot_update_ns"), f"boot {v} update")
        # The table-build line came with patch 0022: a kernel of the
        # project's older code, booted between the two compared, has none.
        if v in (variants[0], variants[-1]):
            summ(b.get("boot_table_ns"), f"boot {v} table build")
            summ(b.get("boot_total_ns"), f"boot {v} whole")
        if not d.get("kernel_builds", {}).get(v, {}).get("image_sha256"):
            errs.append(f"kernel_builds {v}: no image hash")
    if errs:
        print("\n".join(f"bench check: {e}" for e in errs), file=sys.stderr)
        sys.exit(1)
    print(f"bench check: {path}: every field present ({len(d['ops_ns_per_call'])} rows, "
          f"{len(variants)} kernel(s), clock: {d['clock']})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", metavar="FILE")
    ap.add_argument("--dir")
    ap.add_argument("--out")
    ap.add_argument("--variants", default="stock rust")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--calls", type=int)
    ap.add_argument("--patch-reps", type=int, default=3)
    ap.add_argument("--config")
    ap.add_argument("--kernel", default="unknown")
    ap.add_argument("--clock", default="guest clock (TSC), TCG wall-clock time")
    ap.add_argument("--qemu-args", default="")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "build"))
    a = ap.parse_args()
    if a.check:
        check(a.check)
        return
    for k in ("dir", "out", "reps", "calls", "config"):
        if getattr(a, k) is None:
            ap.error(f"--{k} is required")
    report(a)


if __name__ == "__main__":
    main()
