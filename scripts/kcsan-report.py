#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kcsan-report.py [--stock PATH]... [--stock-list FILE] PATH...: the
KCSAN reports in guest console logs (a PATH that is a directory stands for
every file under it).

Prints one line per distinct report title ("data-race in A / B"), with how
often it was seen, and marks a report "CORE" when any frame of its stacks
is the Rust core or its C shim (a symbol with "rftrace" in it: the shim's
rftrace_* functions, the Rust crate's mangled names, kernel/trace/rftrace/
paths) or one of the kernel functions whose work the core took over, and
"NEW" when its signature is not in the stock list.  A report's signature
is its title without the "+0x../0x.." offsets, the two functions of
"A / B" in sorted order (signature()).  The stock list is FILE, by
default selftests/expected/$RFT_ARCH-stock-kcsan-reports.list (x86_64
if RFT_ARCH is unset): the signatures stock's KCSAN kernel shows.  With
--stock (the console logs of a stock kernel built with the same options,
run over the same tests), a report whose signature is also seen there is
marked "STOCK".  Last line: "N reports, N distinct, N involving the
core, N not in the stock list, N not seen on stock" (the last count only
with --stock).  Exit status 1 if any report involves the core or is not
in the stock list.  With no list file for the arch, only the reports
involving the core count, and a line says so.

kcsan-report.py --signatures PATH...: the distinct signatures of the
reports in PATH (console logs, or results files, whose notes quote each
report's first line), sorted, one a line: the body of a stock list.

The same rule decides which KCSAN reports fail a test:
scripts/ftracetest-runner.py reads each guest console through a Reader
of this file, counts a report that involves the core or is not in the
stock list as a kernel warning of the test that was running (warn=N in
the results file, which scripts/test.sh counts as a failure), and lists
the others as notes ("#! " lines of the results file), not counted.

kcsan-report.py --self-test: checks the rule and the runner's use of it
on a synthetic console (one report with a frame in the core and its
signature in a stock list, one in process_one_work() only and in the
list, one in neither); exit status 1 if any is misjudged.
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


HERE = os.path.dirname(os.path.abspath(__file__))
TITLE = re.compile(r"BUG: KCSAN: (.*)$")
OFFSET = re.compile(r"\+0x[0-9a-fA-F]+/0x[0-9a-fA-F]+")


def reports(text):
    """Yields (title, body) per KCSAN report."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = TITLE.search(lines[i])
        if not m:
            i += 1
            continue
        title = m.group(1).strip()
        body = []
        i += 1
        while (i < len(lines) and "=====" not in lines[i]
               and not TITLE.search(lines[i])):
            body.append(lines[i])
            i += 1
        yield title, "\n".join(body)


def signature(title):
    """A report's title as the stock list names it: without offsets (KCSAN
    prints "func+0x168/0x740" when it saw one access only, plain names for
    two), and the two functions of "A / B" sorted, since either side may
    be the one that trapped."""
    t = " ".join(OFFSET.sub("", title).split())
    m = re.match(r"(.*? in )(.*) / (.*)$", t)
    if m:
        t = m.group(1) + " / ".join(sorted((m.group(2), m.group(3))))
    return t


def stock_list_path(arch=None):
    """The committed stock list of ARCH (default $RFT_ARCH, else x86_64)."""
    arch = arch or os.environ.get("RFT_ARCH") or "x86_64"
    return os.path.join(os.path.dirname(HERE), "selftests", "expected",
                        "%s-stock-kcsan-reports.list" % arch)


def read_stock_list(path):
    """The set of signatures of a stock list file ("#" lines are
    comments), or None if there is no such file."""
    if not path or not os.path.isfile(path):
        return None
    with open(path) as f:
        return {signature(l.strip()) for l in f
                if l.strip() and not l.lstrip().startswith("#")}


def involves_core(title, body):
    text = title + "\n" + body
    if "rftrace" in text:
        return True
    for f in TAKEN_OVER:
        if re.search(r"\b%s\b" % re.escape(f), text):
            return True
    return False


def verdict(title, body, stock):
    """(counted, why) of a report: it counts if it involves the core or,
    when there is a stock list (STOCK, a set of signatures; None for an
    arch without one), if its signature is not on it."""
    if involves_core(title, body):
        return True, "involving the core"
    if stock is None:
        return False, "not involving the core (no stock list)"
    if signature(title) in stock:
        return False, "not involving the core, in the stock list"
    return True, "not in the stock list"


class Reader:
    """Reads a console line by line, for a caller that cannot wait for the
    whole log (scripts/ftracetest-runner.py).  feed() gives back a report
    once its closing "=====" line (or the next report) is read, as
    (first line, title, counted, why), by verdict() with the stock list
    STOCK; end() gives back one left open when the console stopped, which
    counts, since its frames were not all seen."""

    def __init__(self, stock=None):
        self.stock = stock
        self.first = None
        self.title = None
        self.body = []

    def _close(self, whole):
        if self.first is None:
            return None
        if whole:
            counted, why = verdict(self.title, "\n".join(self.body), self.stock)
        else:
            counted, why = True, "cut short"
        done = (self.first, self.title, counted, why)
        self.first, self.title, self.body = None, None, []
        return done

    def feed(self, line):
        m = TITLE.search(line)
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


def titles(paths, stock=None):
    """The report titles of PATHS and how often each was seen, the titles
    involving the core and those that count by verdict() with the stock
    list STOCK; plus the number of reports."""
    seen = {}
    core = {}
    counted = {}
    total = 0
    for path in files(paths):
        with open(path, errors="replace") as f:
            text = f.read().replace("\r", "")
        for title, body in reports(text):
            total += 1
            seen[title] = seen.get(title, 0) + 1
            if involves_core(title, body):
                core[title] = True
            if verdict(title, body, stock)[0]:
                counted[title] = True
    return seen, core, counted, total


# Three KCSAN reports as the kernel prints them (kernel/kcsan/report.c), for
# --self-test: the first has frames in the Rust core (a mangled name of
# rftrace::kside::pages, the shim's rftrace_lookup_rec) and none in a
# function of TAKEN_OVER; the second is the workqueue report that stock
# kernels show too, with no frame in the core; the third a race between
# two tty functions, neither in the core nor in the test's stock list.
SELF_TEST_CORE = """\
[  101.234501] ==================================================================
[  101.234502] BUG: KCSAN: data-race in _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside5pages12remove_range / _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside5pages6lookup
[  101.234503]
[  101.234504] write to 0xffff88800a1b2c38 of 8 bytes by task 312 on cpu 1:
[  101.234505]  _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside5pages12remove_range+0x1f4/0x3a0
[  101.234506]  rftrace_remove_range+0x9c/0x180
[  101.234507]  free_initmem+0x2d/0x60
[  101.234508]  kernel_init+0x24/0x1d0
[  101.234509]  ret_from_fork+0x1a4/0x1f0
[  101.234510]
[  101.234511] read to 0xffff88800a1b2c38 of 8 bytes by task 305 on cpu 0:
[  101.234512]  _RNvNtNtCs9xQd1kL2mZp_7rftrace5kside5pages6lookup+0x5e/0x180
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

SELF_TEST_NEW = """\
[  517.402101] ==================================================================
[  517.402102] BUG: KCSAN: data-race in n_tty_receive_buf_common / n_tty_write
[  517.402103]
[  517.402104] write to 0xffff8880061f3418 of 8 bytes by task 61 on cpu 0:
[  517.402105]  n_tty_receive_buf_common+0x8d2/0xb90
[  517.402106]  tty_port_default_receive_buf+0x5f/0x90
[  517.402107]  flush_to_ldisc+0x123/0x290
[  517.402108]  process_one_work+0x2f1/0x740
[  517.402109]  worker_thread+0x3a7/0x5b0
[  517.402110]  kthread+0x1c2/0x200
[  517.402111]  ret_from_fork+0x1a4/0x1f0
[  517.402112]
[  517.402113] read to 0xffff8880061f3418 of 8 bytes by task 402 on cpu 1:
[  517.402114]  n_tty_write+0x1b4/0x760
[  517.402115]  file_tty_write.isra.0+0x1e8/0x4b0
[  517.402116]  vfs_write+0x1d6/0x6f0
[  517.402117]  ksys_write+0xa4/0x150
[  517.402118]  do_syscall_64+0x76/0x1b0
[  517.402119]  entry_SYSCALL_64_after_hwframe+0x76/0x7e
[  517.402120]
[  517.402121] value changed: 0x0000000000000a3e -> 0x0000000000000a40
[  517.402122]
[  517.402123] Reported by Kernel Concurrency Sanitizer on:
[  517.402124] CPU: 1 UID: 0 PID: 402 Comm: sh Not tainted 7.2.0 #1 PREEMPT(voluntary)
[  517.402125] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996)
[  517.402126] ==================================================================
"""
NEW_TITLE = "data-race in n_tty_receive_buf_common / n_tty_write"
OTHER_TITLE = "data-race in process_one_work+0x168/0x740"


def run_runner(d, name, stock_list):
    """ftracetest-runner.py on a fake guest that prints the console of
    three tests, each with one report (a-core, b-other, c-new), with the
    stock list STOCK_LIST; gives back (exit status and output, the
    results lines, {test: fields of its results line})."""
    root = os.path.join(d, "tests")
    os.makedirs(root, exist_ok=True)
    log = ["@@RFT BOOTED 7.2.0 mode=selftests"]
    for i, (test, text) in enumerate((("a-core.tc", SELF_TEST_CORE),
                                      ("b-other.tc", SELF_TEST_OTHER),
                                      ("c-new.tc", SELF_TEST_NEW))):
        open(os.path.join(root, test), "w").close()
        log += ["@@RFT BEGIN %d %s" % (i, test), text.rstrip("\n"),
                "@@RFT RESULT %s PASS %s" % (test, test),
                "@@RFT END %d %s rc=0 secs=1" % (i, test)]
    log.append("@@RFT DONE mode=selftests rc=0")
    console = os.path.join(d, name + ".console")
    with open(console, "w") as f:
        f.write("\n".join(log) + "\n")
    guest = os.path.join(d, name + ".sh")
    with open(guest, "w") as f:
        f.write('#!/bin/sh\ncat "%s"\n' % console)
    os.chmod(guest, 0o755)
    out = os.path.join(d, name + ".results")
    run = subprocess.run(
        [sys.executable, os.path.join(HERE, "ftracetest-runner.py"), "kcsan",
         "--mode", "selftests", "--root", root, "--run-guest", guest,
         "--kcsan-stock-list", stock_list,
         "--out", out, "--outdir", os.path.join(d, name + ".out"), "--tmpdir", d],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = open(out).read().splitlines() if os.path.exists(out) else []
    res = {w[0]: w for w in (l.split() for l in lines if l and l[0] != "#")}
    return run, lines, res


def self_test():
    """Checks the rule, the Reader and the runner's use of them on a
    synthetic console; returns the number of failed checks."""
    bad = 0

    def check(what, ok):
        nonlocal bad
        print("%s: %s" % ("ok" if ok else "FAILED", what))
        bad += 0 if ok else 1

    console = SELF_TEST_CORE + SELF_TEST_OTHER + SELF_TEST_NEW
    found = list(reports(console))
    core_title = found[0][0]
    check("three reports read from the console", len(found) == 3)
    check("the report with rftrace/kside frames involves the core",
          involves_core(*found[0]))
    check("the process_one_work() and tty reports do not involve the core",
          [t for t, b in found[1:] if not involves_core(t, b)]
          == [OTHER_TITLE, NEW_TITLE])
    check("signature: offsets dropped, the two functions in sorted order",
          signature(OTHER_TITLE) == "data-race in process_one_work"
          and signature("data-race in b_fn / a_fn") == "data-race in a_fn / b_fn")

    # The test's stock list: the core's report (its two functions the other
    # way round) and the workqueue one (with other offsets), not the tty one.
    with tempfile.TemporaryDirectory(prefix="kcsan-self-test-") as d:
        listed = os.path.join(d, "stock.list")
        a, b = core_title.split(" in ", 1)[1].split(" / ")
        with open(listed, "w") as f:
            f.write("# test list\n\ndata-race in %s / %s\n"
                    "data-race in process_one_work+0x170/0x750\n" % (b, a))
        stock = read_stock_list(listed)
        check("stock list read: two signatures", len(stock) == 2)
        want = [(core_title, True, "involving the core"),
                (OTHER_TITLE, False, "not involving the core, in the stock list"),
                (NEW_TITLE, True, "not in the stock list")]
        check("(c) core report in the list counts; (a) listed non-core report "
              "does not; (b) unlisted non-core report counts",
              [(t,) + verdict(t, b, stock) for t, b in found] == want)
        check("no list (an arch without one): only the core's report counts",
              [verdict(t, b, None)[0] for t, b in found] == [True, False, False])
        check("no list file reads as no list",
              read_stock_list(os.path.join(d, "none.list")) is None)

        rd = Reader(stock)
        streamed = [r for r in map(rd.feed, console.splitlines()) if r]
        check("Reader: the same three verdicts line by line",
              [(t, c, w) for _, t, c, w in streamed] == want and rd.end() is None)
        rd = Reader(stock)
        for line in SELF_TEST_OTHER.splitlines()[:6]:
            rd.feed(line)
        left = rd.end()
        check("Reader: a listed report cut short counts",
              left is not None and left[2])

        cons = os.path.join(d, "console.log")
        for text, rc in ((SELF_TEST_OTHER, 0), (SELF_TEST_OTHER + SELF_TEST_NEW, 1)):
            with open(cons, "w") as f:
                f.write(text)
            run = subprocess.run([sys.executable, os.path.abspath(__file__),
                                  "--stock-list", listed, cons],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            check("command line: exit status %d for %s" % (
                rc, "the listed report alone" if rc == 0 else "it and the unlisted one"),
                run.returncode == rc)

        # The runner, with the list: a-core and c-new are warnings of their
        # tests, b-other a note.
        run, lines, res = run_runner(d, "listed", listed)
        check("runner: ran the three tests", run.returncode == 0 and len(res) == 3)
        check("runner (c): the core's report, though listed, is a warning of its test",
              res.get("a-core.tc", [])[-1:] == ["warn=1"])
        check("runner (a): the listed non-core report is no warning",
              res.get("b-other.tc", ["", ""])[1:2] == ["PASS"]
              and not res["b-other.tc"][-1].startswith("warn="))
        check("runner (a): ... and is listed as a note",
              any(l.startswith("#! b-other.tc KCSAN report not involving the core, "
                               "in the stock list, not counted") for l in lines))
        check("runner (b): the unlisted non-core report is a warning of its test",
              res.get("c-new.tc", [])[-1:] == ["warn=1"]
              and any(l.startswith("#! c-new.tc kernel report (KCSAN, not in the stock list)")
                      for l in lines))
        if bad:
            print(run.stdout)

        # The runner for an arch with no list: only the core's report counts.
        run, lines, res = run_runner(d, "nolist", os.path.join(d, "none.list"))
        check("runner, no list: the core's report is a warning, the others notes",
              run.returncode == 0
              and [res.get(t, [""])[-1].startswith("warn=")
                   for t in ("a-core.tc", "b-other.tc", "c-new.tc")] == [True, False, False]
              and any(l.startswith("#! c-new.tc KCSAN report not involving the core "
                                   "(no stock list), not counted") for l in lines))
        if bad:
            print(run.stdout)

    committed = read_stock_list(stock_list_path("x86_64"))
    check("the committed x86_64 stock list reads and has the workqueue report",
          committed is not None and signature(OTHER_TITLE) in committed)
    print("kcsan-report.py self-test: %d failed" % bad)
    return bad


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return 1 if self_test() else 0
    if args[:1] == ["--signatures"]:
        sigs = set()
        for path in files(args[1:]):
            with open(path, errors="replace") as f:
                sigs |= {signature(t) for t, _ in reports(f.read())}
        print("".join(s + "\n" for s in sorted(sigs)), end="")
        return 0
    stock_paths = []
    list_path = stock_list_path()
    paths = []
    while args:
        a = args.pop(0)
        if a == "--stock" and args:
            stock_paths.append(args.pop(0))
        elif a == "--stock-list" and args:
            list_path = args.pop(0)
        else:
            paths.append(a)
    listed = read_stock_list(list_path)
    seen, core, counted, total = titles(paths, listed)
    stock = {signature(t) for t in titles(stock_paths)[0]}
    new = unlisted = 0
    for title in sorted(seen):
        mark = "CORE " if title in core else "     "
        if listed is not None:
            if signature(title) in listed:
                mark += "    "
            else:
                mark += "NEW "
                unlisted += 1
        if stock_paths:
            if signature(title) in stock:
                mark += "STOCK "
            else:
                mark += "      "
                new += 1
        print("%s%4d  %s" % (mark, seen[title], title))
    line = "%d reports, %d distinct, %d involving the core" % (
        total, len(seen), len(core))
    if listed is not None:
        line += ", %d not in the stock list" % unlisted
    if stock_paths:
        line += ", %d not seen on stock" % new
    print(line)
    if listed is None:
        print("no stock list %s: only reports involving the core count"
              % os.path.relpath(list_path))
    return 1 if counted else 0


if __name__ == "__main__":
    sys.exit(main())
