#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# site-set-bytes.sh [VARIANT]
#
# What the per-site sets hold, step by step, on the VARIANT kernel
# (default shadow; built already): the stats file's site_sets,
# site_set_sites and site_set_bytes after boot, with the function tracer
# on vfs_read, on every function and on the first 1000 functions, and
# after each is switched off.  One line per step, "STEP: name=value ...".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
v=${1:-shadow}
out=$BUILD/site-set-bytes-$v.log
cmds='S=/sys/kernel/debug/rftrace/stats; cd /sys/kernel/tracing
b() { echo "STEP $1: $(awk '"'"'$1 == "site_sets" || $1 == "site_set_sites" || $1 == "site_set_bytes" { printf "%s=%s ", $1, $2 }'"'"' $S)"; }
b boot
echo vfs_read >set_ftrace_filter; echo function >current_tracer; b one-function
echo nop >current_tracer; b off
echo >set_ftrace_filter; echo function >current_tracer; b every-function
echo nop >current_tracer; b off
head -n 1000 available_filter_functions | cut -d" " -f1 >set_ftrace_filter; echo function >current_tracer; b 1000-functions
echo nop >current_tracer; b off
echo SETS-DONE; poweroff -f'
(sleep "${RFT_BOOTWAIT:-60}"; printf '%s\n' "$cmds"
 for _ in $(seq 150); do grep -q '^SETS-DONE' "$out" 2>/dev/null && break; sleep 2; done) |
	RFT_TIMEOUT=600 timeout 600 "$top/scripts/run-guest.sh" "$v" shell >"$out" 2>&1 || true
grep -q '^SETS-DONE' "$out" || die "$v: the guest did not finish (log: $out)"
grep '^STEP ' "$out" | sed 's/^STEP //'
