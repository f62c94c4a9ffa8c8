#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# unsafe-count.sh: where the crate's `unsafe` is, as two rates: the lines
# that are not a comment and hold the word `unsafe`, per 1,000 lines,
#
#   kernel side   rust/rftrace.rs and rust/kside/ (arch/ too), tests left out;
#   crate         every file under rust/ but the tests (rust/tests/, and
#                 each tests.rs or tests/ beside a module), the measure
#                 issue 51 set its limit of 10 per 1,000 in.
#
# The pure core (rust/rfcore/) forbids `unsafe`, so the two counts are the
# same and only the lines differ.  Prints one line per measure,
# "NAME: N unsafe in L lines (R per 1,000)".
set -euo pipefail
cd "$(dirname "$0")/.."
not_tests() { grep -v -E '(^|/)tests(\.rs$|/)'; }
rate() { # NAME FILE...
	local name=$1 n l
	shift
	n=$(cat "$@" | grep -v '^\s*//' | grep -c '\bunsafe\b' || true)
	l=$(cat "$@" | wc -l)
	awk -v m="$name" -v n="$n" -v l="$l" \
		'BEGIN { printf "%s: %d unsafe in %d lines (%.1f per 1,000)\n", m, n, l, 1000 * n / l }'
}
mapfile -t kside < <({ echo rust/rftrace.rs; find rust/kside -name '*.rs'; } | not_tests | sort)
mapfile -t crate < <(find rust -name '*.rs' | not_tests | sort)
rate "kernel side" "${kside[@]}"
rate "crate" "${crate[@]}"
