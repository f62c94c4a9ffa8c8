#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Fuzzes the whole-kernel simulation (rust/tests/sim.rs, target fuzz/sim)
# or the ops registry's lifecycle (rust/tests/registry.rs, target
# fuzz/registry) with libFuzzer for a bounded time:
#   scripts/fuzz.sh [SECONDS] [sim|registry]   (default: 60 s, sim)
#
# Built with stable cargo: the coverage instrumentation flags cargo-fuzz
# passes are stable rustc flags; no sanitizer is used (the core forbids
# unsafe code). New inputs go to fuzz/corpus/TARGET-run (git-ignored); the
# committed seeds in fuzz/corpus/TARGET are read, not written, and are
# replayed by `cargo test` (sim::fuzz_corpus_replays,
# registry::random_lifecycles_match_the_model). A crash is saved under
# fuzz/artifacts/; replay it with
#   fuzz/target/x86_64-unknown-linux-gnu/release/TARGET fuzz/artifacts/crash-...
set -eu

secs=${1:-60}
bin=${2:-sim}
case $bin in sim|registry) ;; *) echo "fuzz.sh: no target $bin (sim, registry)" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"

target=x86_64-unknown-linux-gnu
RUSTFLAGS="-Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
--cfg fuzzing -Cdebug-assertions -Coverflow-checks"
export RUSTFLAGS
# --target keeps the instrumentation out of build scripts.
cargo build -j1 --release --target "$target" --bin "$bin"

mkdir -p "corpus/$bin-run" artifacts
exec "target/$target/release/$bin" -max_total_time="$secs" -max_len=4096 \
    -artifact_prefix=artifacts/ "corpus/$bin-run" "corpus/$bin"
