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
"""
import os
import re
import sys

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


def main():
    args = sys.argv[1:]
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
