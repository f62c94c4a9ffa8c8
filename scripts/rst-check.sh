#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rst-check.sh [FILE.rst...]
#
# Checks the project's kernel documentation (default: docs/kernel/*.rst,
# which scripts/mkseries.sh puts into the series under Documentation/)
# with docutils: every file must start with an SPDX line, and docutils
# must parse it without a warning (halt level 2: a warning or an error
# fails the file, with its line).
#
# Plain docutils does not know the kernel's Sphinx roles and directives;
# the common ones (:c:func:, :ref:, :doc:, .. kernel-doc::, .. toctree::,
# ...) are registered here as no-ops, so a file may use them.  docutils
# comes from Debian's python3-docutils (scripts/setup.sh installs it).
# Exit status: 0 if every file passed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

case ${1:-} in -h|--help) sed -n '3,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

files=("$@")
if [ ${#files[@]} = 0 ]; then
	files=("$top"/docs/kernel/*.rst)
	[ -f "${files[0]}" ] || die "no docs/kernel/*.rst"
fi
python3 -c 'import docutils' 2>/dev/null ||
	die "python3 has no docutils (apt-get install python3-docutils, or run scripts/setup.sh)"

python3 - "${files[@]}" <<'EOF'
import sys

import docutils.core
import docutils.utils
from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles


class AnyOption(dict):
    """An option_spec that takes every option of a directive as text."""

    def __contains__(self, key):
        return True

    def __getitem__(self, key):
        return directives.unchanged


class NoOp(Directive):
    """A Sphinx or kernel directive plain docutils lacks: parsed, dropped."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = AnyOption()

    def run(self):
        return []


def literal_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [nodes.literal(rawtext, text)], []


for d in ("kernel-doc", "kernel-abi", "kernel-feat", "toctree", "c:function",
          "c:type", "c:macro", "c:struct", "only", "glossary", "index"):
    directives.register_directive(d, NoOp)
for r in ("c:func", "c:type", "c:macro", "c:data", "c:member", "c:struct",
          "c:union", "c:enum", "c:expr", "ref", "doc", "manpage", "kbd",
          "file", "envvar", "option", "program"):
    roles.register_local_role(r, literal_role)

failed = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    first = text.split("\n", 1)[0]
    if first != ".. SPDX-License-Identifier: GPL-2.0":
        print(f"{path}:1: the first line must be '.. SPDX-License-Identifier: GPL-2.0'")
        failed += 1
        continue
    try:
        docutils.core.publish_doctree(
            text, source_path=path,
            settings_overrides={"halt_level": 2, "report_level": 2,
                                "warning_stream": sys.stdout,
                                "input_encoding": "utf-8"})
    except docutils.utils.SystemMessage:
        # docutils has printed the message (file:line) on the warning stream
        print(f"{path}: failed")
        failed += 1
        continue
    print(f"{path}: ok")
print(f"rst-check: {len(sys.argv) - 1 - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOF
