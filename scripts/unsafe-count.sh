#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# unsafe-count.sh: the kernel side's `unsafe` count and its rate, as the
# README states it: every line of rust/rftrace.rs, rust/kside/ and
# rust/karch/ that is not a comment and holds the word `unsafe`, against
# the lines of those files. Prints "N unsafe in L lines (R per 1,000)".
set -euo pipefail
cd "$(dirname "$0")/.."
files=(rust/rftrace.rs rust/kside/*.rs rust/karch/*.rs)
n=$(cat "${files[@]}" | grep -v '^\s*//' | grep -c '\bunsafe\b' || true)
l=$(cat "${files[@]}" | wc -l)
awk -v n="$n" -v l="$l" 'BEGIN { printf "%d unsafe in %d lines (%.1f per 1,000)\n", n, l, 1000 * n / l }'
