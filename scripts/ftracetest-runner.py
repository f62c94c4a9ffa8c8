#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hang- and oops-tolerant ftracetest runner (driven by scripts/ftracetest.sh).

Boots the test guest (scripts/run-guest.sh) in ftracetest (or selftests)
mode and watches its console.  Every .tc file runs in its own ftracetest
invocation and is framed by "@@RFT BEGIN/END" markers (scripts/guest/init).
A test that oopses, panics, hangs past its timeout, or after which the
guest dies, is recorded as OOPS/HANG/NORESULT with a console excerpt; QEMU
is killed and the guest is booted again at the next test.  Kernel WARNING:
and BUG: reports are attributed to the test that was running.  A KCSAN
report counts if it involves the dynamic ftrace core or if stock's KCSAN
kernel is not known to show it (its signature is not in
selftests/expected/$RFT_ARCH-stock-kcsan-reports.list, or the file given
with --kcsan-stock-list), by the rule of scripts/kcsan-report.py; the
others are kept as notes.  For an arch with no such list, only the
reports involving the core count.

With --jobs N the tests are split over N guests that run side by side
(longest first, balanced on the durations of the expected results file).
"""

import argparse
import collections
import datetime
import fnmatch
import importlib.util
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

RANK = {
    "PASS": 0,
    "XFAIL": 1, "UNSUPPORTED": 1, "UNTESTED": 1,
    "UNRESOLVED": 2,
    "FAIL": 3, "UNDEFINED": 3,
    "NORESULT": 4, "HANG": 4, "OOPS": 4,
}
ORDER = ["PASS", "XFAIL", "UNSUPPORTED", "UNTESTED", "UNRESOLVED", "FAIL",
         "UNDEFINED", "NORESULT", "HANG", "OOPS"]

MARK = re.compile(r"@@RFT (BOOTED|LIST|BEGIN|RESULT|LOG-BEGIN|LOG-END|END|DONE)\b ?(.*)")
CRASH = re.compile(r"(Oops:|Kernel panic - not syncing|general protection fault|"
                   r"kernel BUG at|BUG: unable to handle)")
WARN = re.compile(r"(WARNING:|BUG:|rcu: INFO: .*detected stall|"
                  r"\[ ftrace bug \]|INFO: task .* blocked for more than)")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# Kernel reports seen on both kinds of kernel's code paths that are not the
# dynamic ftrace core, recorded as notes but not counted as warnings: see
# docs/findings.md ("Known kernel report").  Keep this list short.
KNOWN = re.compile(r"WARNING: kernel/trace/trace_snapshot\.c:\d+ at update_max_tr_single\+|"
                   r"WARNING: stack going in the wrong direction\? at return_to_handler\+")

KCSAN = re.compile(r"BUG: KCSAN: ")


def load_kcsan_report():
    """scripts/kcsan-report.py as a module: its rule says which KCSAN
    reports count."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kcsan-report.py")
    spec = importlib.util.spec_from_file_location("kcsan_report", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


KCSAN_REPORT = load_kcsan_report()

DEFAULT_EST = 20.0
SLOW = {"direct/ftrace-direct.tc": 1800}


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def matches(rel, only):
    if not only:
        return True
    for pat in only.split(","):
        if not pat:
            continue
        if (fnmatch.fnmatchcase(rel, pat) or fnmatch.fnmatchcase(rel, pat + ".tc")
                or rel.startswith(pat.rstrip("/") + "/")):
            return True
    return False


def list_tests(root, only):
    tests = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".tc"):
                tests.append(os.path.relpath(os.path.join(d, f), root))
    return [t for t in sorted(tests) if matches(t, only)]


def read_results(path):
    """{rel: (result, secs or None, extra fields)} of a results file."""
    res = {}
    if not path or not os.path.exists(path):
        return res
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            w = line.split()
            secs = None
            if len(w) > 2:
                try:
                    secs = float(w[2])
                except ValueError:
                    pass
            res[w[0]] = (w[1], secs, w[3:])
    return res


def worst(results):
    if not results:
        return "NORESULT"
    return max(results, key=lambda r: RANK.get(r, 4))


class Test:
    def __init__(self, rel):
        self.rel = rel
        self.raw = []          # (RESULT, description)
        self.result = None
        self.secs = None
        self.warnings = []     # console lines
        self.notes = []


class Worker(threading.Thread):
    def __init__(self, wid, tests, args, outdir, lock):
        super().__init__(name="guest%d" % wid, daemon=True)
        self.wid, self.tests, self.args, self.outdir = wid, tests, args, outdir
        self.lock = lock
        self.qemu_pidfile = None
        self.proc = None
        self.boots = 0
        self.stop = False
        self.outside = []      # kernel reports while no test ran
        self.kill_at = None
        self.qemu_killed = False
        self.tmpd = None

    def timeout_for(self, rel):
        for pat, t in self.args.test_timeout:
            if fnmatch.fnmatchcase(rel, pat):
                return t
        return max(self.args.timeout, SLOW.get(rel, 0))

    def kill(self):
        """Kill this guest's QEMU; run-guest.sh then ends by itself (and
        removes its temporary initrd).  Escalate if it does not."""
        now = time.time()
        if self.kill_at is None:
            self.kill_at = now
        pid = None
        if self.qemu_pidfile and not self.qemu_killed:
            try:
                with open(self.qemu_pidfile) as f:
                    pid = int(f.read().strip())
            except (OSError, ValueError):
                pid = None
        if pid:
            self.qemu_killed = True
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        elif self.proc and self.proc.poll() is None and now - self.kill_at > 5:
            # no QEMU pid (not started yet) or it is dead and run-guest.sh
            # still runs: stop the process group of run-guest.sh
            sig = signal.SIGKILL if now - self.kill_at > 10 else signal.SIGTERM
            try:
                os.killpg(self.proc.pid, sig)
            except OSError:
                pass

    def excerpt(self, test, kind, lines):
        d = os.path.join(self.outdir, "excerpts")
        os.makedirs(d, exist_ok=True)
        name = "%s.%s.txt" % (test.rel.replace("/", "__"), kind)
        with open(os.path.join(d, name), "a") as f:
            f.write("".join(l + "\n" for l in lines))
        return os.path.join("excerpts", name)

    def run(self):
        idx = 0
        bad_boots = 0
        while idx < len(self.tests) and not self.stop:
            nidx, booted = self.boot(idx)
            if booted:
                bad_boots = 0
                idx = nidx
                continue
            bad_boots += 1
            if bad_boots >= 2:
                for t in self.tests[idx:]:
                    if t.result is None:
                        t.result = "NORESULT"
                        t.notes.append("guest did not boot")
                return

    def boot(self, start):
        """Boot a guest that runs self.tests[start:]; return (next index, booted)."""
        a = self.args
        self.boots += 1
        tag = "g%d-boot%d" % (self.wid, self.boots)
        consdir = os.path.join(self.outdir, "console")
        os.makedirs(consdir, exist_ok=True)
        conslog = os.path.join(consdir, tag + ".log")
        tmpd = tempfile.mkdtemp(prefix="rft-%s-" % tag, dir=a.tmpdir)
        self.tmpd = tmpd
        self.kill_at = None
        self.qemu_killed = False
        listdir = os.path.join(tmpd, "root")
        os.makedirs(os.path.join(listdir, "rft"))
        with open(os.path.join(listdir, "rft", "tests.list"), "w") as f:
            f.write("".join(t.rel + "\n" for t in self.tests))
        extra = os.path.join(tmpd, "extra.cpio")
        with open(extra, "wb") as out:
            subprocess.run("find rft rft/tests.list | cpio -o -H newc -R 0:0 --quiet",
                           shell=True, cwd=listdir, stdout=out, check=True)
        self.qemu_pidfile = os.path.join(tmpd, "qemu.pid")
        env = dict(os.environ,
                   RFT_LOG=conslog, RFT_INITRD_EXTRA=extra, RFT_NO_MKINITRAMFS="1",
                   RFT_TIMEOUT=str(a.guest_timeout),
                   RFT_QEMU_ARGS=(os.environ.get("RFT_QEMU_ARGS", "") +
                                  " -pidfile " + self.qemu_pidfile).strip())
        cmd = [a.run_guest, a.variant, a.mode, "rft.start=%d" % start] + a.cmdline
        log("%s: booting at test %d/%d (%s)" % (self.name, start, len(self.tests),
                                                self.tests[start].rel))
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        fd = self.proc.stdout.fileno()
        buf = b""
        recent = collections.deque(maxlen=a.excerpt_lines)
        t_boot = time.time()
        booted = False
        cur = None          # Test running now
        cur_idx = start
        t_begin = None
        nxt = start
        crash_at = None     # time a crash was seen
        crash_lines = None
        wcap = None         # (test, lines) of a kernel report being copied
        logcap = None       # (test, file name, lines) of a LOG-BEGIN block
        kcsan = KCSAN_REPORT.Reader(a.kcsan_stock)
        kcsan_test = None   # the test running when the open KCSAN report began
        done = False
        eof = False
        last_out = time.time()

        def judge_kcsan(report):
            """A KCSAN report read whole: a warning of its test if it
            counts (it involves the core, or is not in the stock list),
            else a note."""
            if report is None or kcsan_test is None:
                return
            first, _, counted, why = report
            if counted:
                kcsan_test.warnings.append(first)
                kcsan_test.notes.append("kernel report (KCSAN, %s): %s" % (why, first))
            else:
                kcsan_test.notes.append(
                    "KCSAN report %s, not counted "
                    "(scripts/kcsan-report.py): %s" % (why, first))

        def finish_test(result, note=None):
            nonlocal cur
            if cur is None:
                return
            cur.secs = time.time() - t_begin
            cur.result = result
            if note:
                cur.notes.append(note)
            with self.lock:
                log("%s: %-50s %-11s %5.0f s%s" % (
                    self.name, cur.rel, result, cur.secs,
                    " (%d kernel warnings)" % len(cur.warnings) if cur.warnings else ""))
            cur = None

        while True:
            now = time.time()
            # timeouts
            if self.kill_at is not None:
                self.kill()
            elif crash_at is not None and now - crash_at > 30:
                self.kill()
            elif cur is not None and now - t_begin > self.timeout_for(cur.rel):
                ex = self.excerpt(cur, "hang", list(recent))
                finish_test("HANG", "no END after %d s; console excerpt in %s" %
                            (self.timeout_for(cur.rel), ex))
                nxt = cur_idx + 1
                self.kill()
            elif not booted and now - t_boot > a.boot_timeout:
                log("%s: no BOOTED marker after %d s" % (self.name, a.boot_timeout))
                self.kill()
            elif booted and cur is None and not done and now - last_out > a.timeout:
                log("%s: guest silent for %d s between tests" % (self.name, a.timeout))
                self.kill()
            r, _, _ = select.select([fd], [], [], 1.0)
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    eof = True
                else:
                    buf += chunk
                    last_out = time.time()
            lines = buf.split(b"\n")
            buf = lines.pop() if not eof else b""
            if eof and lines == [b""]:
                lines = []
            for raw in lines:
                line = ANSI.sub("", raw.decode("utf-8", "replace").rstrip("\r\n"))
                line = line.replace("\r", "")
                recent.append(line)
                if logcap is not None:
                    if "@@RFT LOG-END" in line:
                        t, fname, ll = logcap
                        d = os.path.join(self.outdir, "logs")
                        os.makedirs(d, exist_ok=True)
                        with open(os.path.join(d, t.rel.replace("/", "__") + ".log"), "a") as f:
                            f.write("==== %s\n" % fname)
                            f.write("".join(l + "\n" for l in ll))
                        logcap = None
                    else:
                        logcap[2].append(line)
                    continue
                judge_kcsan(kcsan.feed(line))
                if KCSAN.search(line):
                    kcsan_test = cur
                if wcap is not None:
                    wcap[1].append(line)
                    if len(wcap[1]) >= a.excerpt_lines or "---[ end trace" in line:
                        self.excerpt(wcap[0], "warn", wcap[1] + [""])
                        wcap = None
                if crash_lines is not None:
                    crash_lines.append(line)
                m = MARK.search(line)
                if m:
                    kind, rest = m.group(1), m.group(2)
                    if kind == "BOOTED":
                        booted = True
                        log("%s: booted in %.0f s: %s" % (self.name, time.time() - t_boot, rest))
                    elif kind == "BEGIN":
                        w = rest.split(None, 1)
                        try:
                            i = int(w[0])
                        except (ValueError, IndexError):
                            continue
                        cur_idx = i
                        if i < len(self.tests):
                            cur = self.tests[i]
                            cur.raw = []
                            t_begin = time.time()
                            nxt = i + 1
                    elif kind == "RESULT" and cur is not None:
                        w = rest.split(None, 2)
                        if len(w) >= 2:
                            cur.raw.append((w[1], w[2] if len(w) > 2 else ""))
                    elif kind == "LOG-BEGIN" and cur is not None:
                        logcap = (cur, rest, [])
                    elif kind == "END" and cur is not None:
                        rc = re.search(r"rc=(\d+)", rest)
                        res = worst([r for r, _ in cur.raw])
                        note = None
                        if not cur.raw:
                            note = "ftracetest printed no result (rc=%s)" % (rc.group(1) if rc else "?")
                        finish_test(res, note)
                    elif kind == "DONE":
                        done = True
                    continue
                if CRASH.search(line):
                    if crash_at is None:
                        crash_at = time.time()
                        crash_lines = list(recent)
                elif WARN.search(line) and KNOWN.search(line):
                    if cur is not None:
                        cur.notes.append("known kernel report, not counted "
                                         "(docs/findings.md): %s" % line.strip())
                elif WARN.search(line):
                    if cur is not None:
                        if wcap is not None:
                            self.excerpt(wcap[0], "warn", wcap[1] + [""])
                        if not KCSAN.search(line):
                            # (a KCSAN report is judged once read whole)
                            cur.warnings.append(line.strip())
                            cur.notes.append("kernel report: %s" % line.strip())
                        wcap = (cur, list(recent)[-8:])
                    else:
                        log("%s: kernel report outside a test: %s" % (self.name, line.strip()))
                        self.outside.append("%s (%s)" % (line.strip(), tag))
            if eof:
                break
        self.proc.wait()
        judge_kcsan(kcsan.end())
        if wcap is not None:
            self.excerpt(wcap[0], "warn", wcap[1] + [""])
        if cur is not None:
            # the guest died or was killed during a test
            if crash_lines is not None:
                ex = self.excerpt(cur, "oops", crash_lines)
                finish_test("OOPS", "kernel crash; console excerpt in %s" % ex)
            else:
                ex = self.excerpt(cur, "died", list(recent))
                finish_test("NORESULT", "guest stopped during the test; excerpt in %s" % ex)
            nxt = cur_idx + 1
        elif crash_lines is not None and booted:
            log("%s: kernel crash between tests" % self.name)
            self.outside.append("kernel crash between tests, see console/%s.log" % tag)
        if not done and booted and nxt < len(self.tests) and nxt == start and cur is None:
            # booted, ran nothing: avoid looping on the same index
            t = self.tests[start]
            if t.result is None:
                t.result = "NORESULT"
                t.notes.append("guest stopped before the test began")
            nxt = start + 1
        if done:
            nxt = len(self.tests)
            for t in self.tests[start:]:
                if t.result is None:
                    t.result = "NORESULT"
                    t.notes.append("guest finished without running it")
        self.qemu_pidfile = None
        subprocess.run(["rm", "-rf", tmpd])
        self.tmpd = None
        return nxt, booted


def partition(tests, jobs, est):
    """Longest-processing-time split; each shard keeps the sorted order."""
    shards = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for t in sorted(tests, key=lambda t: (-est(t), t)):
        i = load.index(min(load))
        shards[i].append(t)
        load[i] += est(t)
    return [sorted(s) for s in shards if s], load


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("variant")
    ap.add_argument("--mode", default="ftracetest", choices=["ftracetest", "selftests"])
    ap.add_argument("--root", required=True, help="directory of the .tc files (host copy)")
    ap.add_argument("--run-guest", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=600, help="per-test timeout (s)")
    ap.add_argument("--test-timeout", action="append", default=[],
                    help="GLOB=SECS per-test timeout override")
    ap.add_argument("--boot-timeout", type=int, default=300)
    ap.add_argument("--guest-timeout", type=int, default=4 * 3600)
    ap.add_argument("--excerpt-lines", type=int, default=150)
    ap.add_argument("--estimates", default="", help="results file with durations")
    ap.add_argument("--header", action="append", default=[])
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("--karg", dest="cmdline", action="append", default=[],
                    help="extra kernel parameter (repeatable)")
    ap.add_argument("--kcsan-stock-list", default=KCSAN_REPORT.stock_list_path(),
                    help="signatures of the KCSAN reports stock shows (default: "
                    "selftests/expected/$RFT_ARCH-stock-kcsan-reports.list)")
    a = ap.parse_args()
    a.kcsan_stock = KCSAN_REPORT.read_stock_list(a.kcsan_stock_list)
    if a.kcsan_stock is None:
        log("no KCSAN stock list %s: only KCSAN reports involving the core count"
            % a.kcsan_stock_list)
    tt = []
    for s in a.test_timeout:
        pat, _, secs = s.rpartition("=")
        tt.append((pat, int(secs)))
    a.test_timeout = tt

    rels = list_tests(a.root, a.only)
    if not rels:
        log("no test matches %r" % a.only)
        return 2
    prev = read_results(a.estimates)

    def est(rel):
        r = prev.get(rel)
        if r and r[1]:
            return r[1]
        return {"direct/ftrace-direct.tc": 250.0}.get(rel, DEFAULT_EST)

    jobs = max(1, min(a.jobs, len(rels)))
    shards, load = partition(rels, jobs, est)
    os.makedirs(a.outdir, exist_ok=True)
    log("%d tests, %d guest(s); estimated %s s per guest; output in %s" % (
        len(rels), len(shards), "/".join("%.0f" % l for l in load), a.outdir))
    tests = {r: Test(r) for r in rels}
    lock = threading.Lock()
    workers = [Worker(i, [tests[r] for r in s], a, a.outdir, lock)
               for i, s in enumerate(shards)]
    t0 = time.time()

    def on_signal(signum, frame):
        for w in workers:
            w.stop = True
            w.kill()
        for w in workers:
            if w.proc:
                try:
                    w.proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    w.kill_at = 0
                    w.kill()
            if w.tmpd:
                subprocess.run(["rm", "-rf", w.tmpd])
        log("interrupted")
        os._exit(130)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    for w in workers:
        w.start()
        time.sleep(2)
    for w in workers:
        while w.is_alive():
            w.join(1.0)
    wall = time.time() - t0

    for t in tests.values():
        if t.result is None:
            t.result = "NORESULT"
    counts = collections.Counter(t.result for t in tests.values())
    raw_counts = collections.Counter(r for t in tests.values() for r, _ in t.raw)
    boots = sum(w.boots for w in workers)

    with open(a.out + ".tmp", "w") as f:
        for h in a.header:
            f.write("# %s\n" % h)
        f.write("# run: %s, %d guest(s) in parallel, %d boot(s), wall time %.0f s\n" % (
            datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), len(shards), boots, wall))
        f.write("# columns: <test> <RESULT> <seconds, host wall time> [warn=N]\n")
        f.write("# RESULT: worst ftracetest result of the file (incl. the instance re-run),\n"
                "#   or HANG (timeout), OOPS (kernel crash), NORESULT (no result printed)\n")
        for rel in rels:
            t = tests[rel]
            extra = " warn=%d" % len(t.warnings) if t.warnings else ""
            f.write("%s %s %s%s\n" % (rel, t.result,
                                      "%.0f" % t.secs if t.secs is not None else "-", extra))
        f.write("#\n# raw ftracetest results, one per line of its output:\n")
        for rel in rels:
            for r, d in tests[rel].raw:
                f.write("#= %s %s %s\n" % (rel, r, d))
        notes = [(rel, n) for rel in rels for n in tests[rel].notes]
        notes += [("(no-test)", n) for w in workers for n in w.outside]
        if notes:
            f.write("#\n# notes:\n")
            for rel, n in notes:
                f.write("#! %s %s\n" % (rel, n))
        f.write("#\n# files: %s\n" % "  ".join("%s=%d" % (k, counts[k]) for k in ORDER if counts[k]))
        f.write("# lines: %s\n" % "  ".join("%s=%d" % (k, raw_counts[k]) for k in ORDER if raw_counts[k]))
    os.replace(a.out + ".tmp", a.out)

    print()
    print("== ftracetest on %s: %d test files, %d guest(s), %d boot(s), %.0f s (%.1f min)" % (
        a.variant, len(rels), len(shards), boots, wall, wall / 60))
    print("files:  " + "  ".join("%s=%d" % (k, counts[k]) for k in ORDER if counts[k]))
    print("lines:  " + "  ".join("%s=%d" % (k, raw_counts[k]) for k in ORDER if raw_counts[k]))
    for rel in rels:
        t = tests[rel]
        if RANK.get(t.result, 4) >= 2 or t.warnings or t.notes:
            print("  %-55s %s%s" % (rel, t.result, " warn=%d" % len(t.warnings) if t.warnings else ""))
            for n in t.notes:
                print("      " + n)
    for w in workers:
        for n in w.outside:
            print("  kernel report outside any test: " + n)
    slow = sorted((t for t in tests.values() if t.secs), key=lambda t: -t.secs)[:5]
    print("slowest: " + ", ".join("%s %.0fs" % (t.rel, t.secs) for t in slow))
    print("results: %s\nlogs:    %s" % (a.out, a.outdir))
    return 0 if all(RANK.get(t.result, 4) < 4 for t in tests.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
