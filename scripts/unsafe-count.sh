#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# unsafe-count.sh: the kernel side's `unsafe` count and its rate, as the
# README states it: every line of rust/rftrace.rs and of the files under
# rust/kside/ (its arch/ too) that is not a comment and holds the word
# `unsafe`, against the lines of those files. Prints "N unsafe in L lines (R per 1,000)".
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(echo rust/rftrace.rs; find rust/kside -name '*.rs' | sort)
n=$(cat "${files[@]}" | grep -v '^\s*//' | grep -c '\bunsafe\b' || true)
l=$(cat "${files[@]}" | wc -l)
awk -v n="$n" -v l="$l" 'BEGIN { printf "%d unsafe in %d lines (%.1f per 1,000)\n", n, l, 1000 * n / l }'
