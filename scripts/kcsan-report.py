#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kcsan-report.py [--stock PATH]... PATH...: the KCSAN reports in guest
console logs (a PATH that is a directory stands for every file under it).

Prints one line per distinct report title ("data-race in A / B"), with how
often it was seen, and marks a report "CORE" when any frame of its stacks
is the Rust core or its C shim (a symbol with "rftrace" in it: the shim's
rftrace_* functions, the Rust crate's mangled names, kernel/trace/rftrace/
paths) or one of the kernel functions whose work the core took over.
With --stock (the console logs of a stock kernel built with the same
options, run over the same tests), a report title also seen there is
marked "STOCK".  Last line: "N reports, N distinct, N involving the core,
N not seen on stock" (the last count only with --stock).  Exit status 1
if any report involves the core.

The same rule decides which KCSAN reports fail a test:
scripts/ftracetest-runner.py reads each guest console through a Reader
of this file, counts a report that involves the core as a kernel
warning of the test that was running (warn=N in the results file, which
scripts/test.sh counts as a failure), and lists the others as notes
("#!" lines of the results file), not counted.

kcsan-report.py --self-test: checks the rule and the runner's use of it
on a synthetic console (one report with a frame in the core, one in
process_one_work() only); exit status 1 if either is misjudged.
"""
import os
import re
import subprocess
import sys
import tempfile

# The kernel functions the core's hooks sit in, or whose work it does.
TAKEN_OVER = (
    "ftrace_update_record", "ftrace_test_record", "__ftrace_replace_code",
    "ftrace_replace_code", "ftrace_make_call", "ftrace_make_nop",
    "ftrace_modify_call", "ftrace_init_nop", "ftrace_get_addr_new",
    "ftrace_get_addr_curr", "ftrace_find_unique_ops", "lookup_rec",
    "ftrace_process_locs", "ftrace_release_mod", "ftrace_free_mem",
    "ftrace_rec_account", "ftrace_rust_process_locs",
)


def reports(text):
    """Yields (title, body) per KCSAN report."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.search(r"BUG: KCSAN: (.*)$", lines[i])
        if not m:
            i += 1
            continue
        title = m.group(1).strip()
        body = []
        i += 1
        while i < len(lines) and "=====" not in lines[i]:
            body.append(lines[i])
            i += 1
        yield title, "\n".join(body)


def involves_core(title, body):
    text = title + "\n" + body
    if "rftrace" in text:
        return True
    for f in TAKEN_OVER:
        if re.search(r"\b%s\b" % re.escape(f), text):
            return True
    return False


class Reader:
    """Reads a console line by line, for a caller that cannot wait for the
    whole log (scripts/ftracetest-runner.py).  feed() gives back a report
    once its closing "=====" line (or the next report) is read, as
    (first line, title, involves the core); end() gives back one left
    open when the console stopped, which counts as involving the core,
    since its frames were not all seen."""

    def __init__(self):
        self.first = None
        self.title = None
        self.body = []

    def _close(self, whole):
        if self.first is None:
            return None
        body = "\n".join(self.body)
        done = (self.first, self.title,
                involves_core(self.title, body) or not whole)
        self.first, self.title, self.body = None, None, []
        return done

    def feed(self, line):
        m = re.search(r"BUG: KCSAN: (.*)$", line)
        if m:
            done = self._close(False)
            self.first, self.title = line.strip(), m.group(1).strip()
            return done
        if self.first is None:
            return None
        if "=====" in line:
            return self._close(True)
        self.body.append(line)
        return None

    def end(self):
        return self._close(False)


def files(paths):
    """Every file of PATHS, a directory standing for the files under it."""
    for path in paths:
        if os.path.isdir(path):
            for root, _, names in sorted(os.walk(path)):
                for name in sorted(names):
                    yield os.path.join(root, name)
        else:
            yield path


def titles(paths):
    """The report titles of PATHS and how often each was seen, and the
    titles involving the core; plus the number of reports."""
    seen = {}
    core = {}
    total = 0
    for path in files(paths):
        with open(path, errors="replace") as f:
            text = f.read().replace("\r", "")
        for title, body in reports(text):
            total += 1
            seen[title] = seen.get(title, 0) + 1
            if involves_core(title, body):
                core[title] = True
    return seen, core, total


# Two KCSAN reports as the kernel prints them (kernel/kcsan/report.c), for
# --self-test: the first has frames in the Rust core (a mangled name of
# rftrace::kside::records, the shim's rftrace_lookup_rec) and none in a
# function of TAKEN_OVER; the second is the workqueue report that stock
# kernels show too, with no frame in the core.
SELF_TEST_CORE = """\
[  101.234501] ==================================================================
[  101.234502] BUG: KCSAN: data-race in _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside7records12remove_range / _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside7records6lookup
[  101.234503]
[  101.234504] write to 0xffff88800a1b2c38 of 8 bytes by task 312 on cpu 1:
[  101.234505]  _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside7records12remove_range+0x1f4/0x3a0
[  101.234506]  rftrace_remove_range+0x9c/0x180
[  101.234507]  free_initmem+0x2d/0x60
[  101.234508]  kernel_init+0x24/0x1d0
[  101.234509]  ret_from_fork+0x1a4/0x1f0
[  101.234510]
[  101.234511] read to 0xffff88800a1b2c38 of 8 bytes by task 305 on cpu 0:
[  101.234512]  _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside7records6lookup+0x5e/0x180
[  101.234513]  rftrace_lookup_rec+0x3b/0x120
[  101.234514]  register_kprobe+0x1c2/0x9a0
[  101.234515]  do_syscall_64+0x76/0x1b0
[  101.234516]  entry_SYSCALL_64_after_hwframe+0x76/0x7e
[  101.234517]
[  101.234518] value changed: 0xffff88800a1b3000 -> 0x0000000000000000
[  101.234519]
[  101.234520] Reported by Kernel Concurrency Sanitizer on:
[  101.234521] CPU: 0 UID: 0 PID: 305 Comm: ftracetest Not tainted 7.2.0 #1 PREEMPT(voluntary)
[  101.234522] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[  101.234523] ==================================================================
"""
SELF_TEST_OTHER = """\
[  242.186701] ==================================================================
[  242.186702] BUG: KCSAN: data-race in process_one_work+0x168/0x740
[  242.186703]
[  242.186704] race at unknown origin, with read to 0xffff888004a3c1e8 of 8 bytes by task 47 on cpu 1:
[  242.186705]  process_one_work+0x168/0x740
[  242.186706]  worker_thread+0x3a7/0x5b0
[  242.186707]  kthread+0x1c2/0x200
[  242.186708]  ret_from_fork+0x1a4/0x1f0
[  242.186709]  ret_from_fork_asm+0x1a/0x30
[  242.186710]
[  242.186711] value changed: 0x000000000d71dede -> 0x000000000d756f53
[  242.186712]
[  242.186713] Reported by Kernel Concurrency Sanitizer on:
[  242.186714] CPU: 1 UID: 0 PID: 47 Comm: kworker/1:2 Not tainted 7.2.0 #1 PREEMPT(voluntary)
[  242.186715] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[  242.186716] Workqueue: events vmstat_shepherd
[  242.186717] ==================================================================
"""


def self_test():
    """Checks the rule, the Reader and the runner's use of them on a
    synthetic console; returns the number of failed checks."""
    bad = 0

    def check(what, ok):
        nonlocal bad
        print("%s: %s" % ("ok" if ok else "FAILED", what))
        bad += 0 if ok else 1

    console = SELF_TEST_CORE + SELF_TEST_OTHER
    judged = [(t, involves_core(t, b)) for t, b in reports(console)]
    check("two reports read from the console", len(judged) == 2)
    check("the report with rftrace/kside frames involves the core",
          judged[:1] == [(judged[0][0], True)])
    check("the process_one_work() report does not involve the core",
          judged[1:] == [("data-race in process_one_work+0x168/0x740", False)])

    rd = Reader()
    streamed = [r for r in map(rd.feed, console.splitlines()) if r]
    check("Reader: the same two verdicts line by line",
          [(t, c) for _, t, c in streamed] == judged and rd.end() is None)
    rd = Reader()
    for line in SELF_TEST_OTHER.splitlines()[:6]:
        rd.feed(line)
    left = rd.end()
    check("Reader: a report cut short counts", left is not None and left[2])

    # The runner, on a fake guest that prints the console of two tests,
    # each with one report: only the core's is a warning of its test.
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="kcsan-self-test-") as d:
        root = os.path.join(d, "tests")
        os.makedirs(root)
        for name in ("a-core.tc", "b-other.tc"):
            open(os.path.join(root, name), "w").close()
        log = ["@@RFT BOOTED 7.2.0 mode=selftests",
               "@@RFT BEGIN 0 a-core.tc", SELF_TEST_CORE.rstrip("\n"),
               "@@RFT RESULT a-core.tc PASS a", "@@RFT END 0 a-core.tc rc=0 secs=1",
               "@@RFT BEGIN 1 b-other.tc", SELF_TEST_OTHER.rstrip("\n"),
               "@@RFT RESULT b-other.tc PASS b", "@@RFT END 1 b-other.tc rc=0 secs=1",
               "@@RFT DONE mode=selftests rc=0"]
        with open(os.path.join(d, "console"), "w") as f:
            f.write("\n".join(log) + "\n")
        guest = os.path.join(d, "guest.sh")
        with open(guest, "w") as f:
            f.write('#!/bin/sh\ncat "%s"\n' % os.path.join(d, "console"))
        os.chmod(guest, 0o755)
        out = os.path.join(d, "results")
        run = subprocess.run(
            [sys.executable, os.path.join(here, "ftracetest-runner.py"), "kcsan",
             "--mode", "selftests", "--root", root, "--run-guest", guest,
             "--out", out, "--outdir", os.path.join(d, "out"), "--tmpdir", d],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = open(out).read().splitlines() if os.path.exists(out) else []
        res = {w[0]: w for w in (l.split() for l in lines if l and l[0] != "#")}
        check("runner: ran both tests", run.returncode == 0 and len(res) == 2)
        check("runner: the core's report is a warning of its test",
              res.get("a-core.tc", [])[-1:] == ["warn=1"])
        check("runner: the other report is no warning",
              res.get("b-other.tc", ["", ""])[1:2] == ["PASS"]
              and not res["b-other.tc"][-1].startswith("warn="))
        check("runner: the other report is listed as a note",
              any(l.startswith("#! b-other.tc KCSAN report not involving the core")
                  for l in lines))
        if bad:
            print(run.stdout)
    print("kcsan-report.py self-test: %d failed" % bad)
    return bad


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return 1 if self_test() else 0
    stock_paths = []
    paths = []
    while args:
        a = args.pop(0)
        if a == "--stock" and args:
            stock_paths.append(args.pop(0))
        else:
            paths.append(a)
    seen, core, total = titles(paths)
    stock = titles(stock_paths)[0] if stock_paths else {}
    new = 0
    for title in sorted(seen):
        mark = "CORE " if title in core else "     "
        if stock_paths:
            if title in stock:
                mark += "STOCK "
            else:
                mark += "      "
                new += 1
        print("%s%4d  %s" % (mark, seen[title], title))
    line = "%d reports, %d distinct, %d involving the core" % (
        total, len(seen), len(core))
    if stock_paths:
        line += ", %d not seen on stock" % new
    print(line)
    return 1 if core else 0


if __name__ == "__main__":
    sys.exit(main())
