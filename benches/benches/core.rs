// SPDX-License-Identifier: GPL-2.0

//! Criterion microbenchmarks of the Rust ftrace core's own work, per record,
//! over [`RECORDS`] records:
//!
//! - `decide`: `rfcore::record::decide` on a realistic flags mix, for an
//!   enable pass over NOPs, a disable pass over calls, and an enable pass
//!   over calls that are already right (everything `Ignore`).
//! - `encode`: `rfcore::arch::x86::encode_call` of `(ip, target)` pairs, and
//!   `rfcore::arch::x86::X86Change::verify` of 5-byte buffers (the check of the
//!   update pass).
//! - `update_all`: the update pass (`rfcore::update::update_all`) with the
//!   x86 plans over the minimal in-memory [`Flat`]: a full enable pass, a
//!   full disable pass, and a pass where nothing changes.
//!
//! Each result is reported per record (`Throughput::Elements`). Run with
//! `cargo bench --bench core`; `cargo bench --bench core -- --test` runs
//! every bench once, as a smoke test that asserts nothing about speed. The
//! results of every pass are checked once, outside the measured loops.

use std::{
    hint::black_box,
    time::Duration, //
};

use criterion::{
    criterion_group,
    criterion_main,
    BatchSize,
    Criterion,
    Throughput, //
};
use rftrace::rfcore::{
    arch::x86::{
        encode_call,
        X86Change,
        INSN_SIZE, //
    }, //
    flags::RecFlags,
    record::{
        decide,
        Update, //
    },
    update::Counts,
};
use rftrace_bench::{
    encode_inputs,
    Flat,
    VecStore,
    BATCH_MAX,
    CALLS_PER_1000,
    RECORDS, //
};

/// Short runs: the whole `cargo bench` must finish well under two minutes.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

/// Sites that become calls on enable.
const CALLS: u64 = (RECORDS / 1000 * CALLS_PER_1000) as u64;

/// Runs one update pass on `env`, returning its counters.
fn pass(env: &mut Flat, store: &mut VecStore<X86Change>, enable: bool) -> Counts {
    let mut counts = Counts::default();
    env.pass(store, enable, &mut counts).expect("pass failed");
    counts
}

/// Checks the counters of a pass that changed `changed` sites: one ops
/// "walk" per change, every plan stored, full batches.
fn check_counts(env: &Flat, counts: &Counts, changed: u64) {
    assert_eq!(counts.walked, RECORDS as u64, "{counts:?}");
    assert_eq!(counts.patched(), changed, "{counts:?}");
    assert_eq!(counts.gathers, changed, "{counts:?}");
    assert_eq!(counts.failures, 0, "{counts:?}");
    assert_eq!(counts.fallbacks, 0, "{counts:?}");
    assert_eq!(
        counts.batches,
        changed.div_ceil(BATCH_MAX as u64),
        "{counts:?}"
    );
    assert_eq!(env.reports(), 0);
    env.check();
}

/// The env before any update (all NOPs) and after a full enable pass, both
/// checked against their records.
fn states() -> (Flat, Flat) {
    let nop = Flat::new(RECORDS);
    nop.check();
    let mut on = nop.clone();
    let counts = pass(&mut on, &mut VecStore::default(), true);
    assert_eq!(counts.make_call, CALLS, "{counts:?}");
    check_counts(&on, &counts, CALLS);
    assert_eq!(on.batches(), counts.batches);
    assert_eq!(on.calls() as u64, CALLS);
    (nop, on)
}

/// Sums what `decide` returns so that none of it can be optimised away.
fn decide_all(words: &[u64], enable: bool) -> u64 {
    words.iter().fold(0u64, |acc, &raw| {
        let d = decide(RecFlags::from_raw(raw), enable);
        acc.wrapping_add(d.flags.raw() ^ d.update as u64)
    })
}

/// Number of records `decide` would change.
fn changes(words: &[u64], enable: bool) -> u64 {
    words
        .iter()
        .filter(|&&raw| decide(RecFlags::from_raw(raw), enable).update != Update::Ignore)
        .count() as u64
}

fn bench_decide(c: &mut Criterion) {
    let (nop, on) = states();
    let nop = nop.flags_words().to_vec();
    let on = on.flags_words().to_vec();
    assert_eq!(changes(&nop, true), CALLS);
    assert_eq!(changes(&on, false), CALLS);
    assert_eq!(changes(&on, true), 0);

    let mut g = c.benchmark_group("decide");
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("enable_from_nops", |b| {
        b.iter(|| decide_all(black_box(&nop), black_box(true)))
    });
    g.bench_function("disable_from_calls", |b| {
        b.iter(|| decide_all(black_box(&on), black_box(false)))
    });
    g.bench_function("enable_unchanged", |b| {
        b.iter(|| decide_all(black_box(&on), black_box(true)))
    });
    g.finish();
}

fn bench_encode(c: &mut Criterion) {
    let inputs = encode_inputs(RECORDS);
    let changes: Vec<X86Change> = inputs
        .iter()
        .map(|&(ip, target, jmp)| X86Change {
            ip,
            old: encode_call(ip, target, jmp).expect("in range"),
            new: [0; INSN_SIZE],
        })
        .collect();
    // What the sites hold, in a separate buffer: all match.
    let actual: Vec<[u8; INSN_SIZE]> = changes.iter().map(|c| c.old).collect();
    assert!(changes
        .iter()
        .zip(&actual)
        .all(|(c, a)| c.verify(a).is_ok()));

    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Elements(RECORDS as u64));
    g.bench_function("encode_call", |b| {
        b.iter(|| {
            black_box(&inputs)
                .iter()
                .fold(0u64, |acc, &(ip, target, jmp)| {
                    match encode_call(ip, target, jmp) {
                        Ok(insn) => acc.wrapping_add(
                            u64::from(u32::from_le_bytes([insn[0], insn[1], insn[2], insn[3]]))
                                ^ u64::from(insn[4]),
                        ),
                        Err(_) => acc.wrapping_add(1),
                    }
                })
        })
    });
    g.bench_function("verify", |b| {
        b.iter(|| {
            black_box(&changes)
                .iter()
                .zip(black_box(&actual))
                .filter(|(c, a)| c.verify(a).is_ok())
                .count()
        })
    });
    g.finish();
}

fn bench_update_all(c: &mut Criterion) {
    let (nop, on) = states();
    let mut store = VecStore::with_capacity(CALLS as usize);
    let mut off = on.clone();
    let counts = pass(&mut off, &mut store, false);
    assert_eq!(counts.make_nop, CALLS, "{counts:?}");
    check_counts(&off, &counts, CALLS);
    assert_eq!(off.calls(), 0);
    let mut same = on.clone();
    let counts = pass(&mut same, &mut store, true);
    check_counts(&same, &counts, 0);

    let mut g = c.benchmark_group("update_all");
    g.throughput(Throughput::Elements(RECORDS as u64));
    // The env is cloned outside the measurement and dropped after it; the
    // store keeps its capacity from one pass to the next.
    g.bench_function("enable", |b| {
        b.iter_batched(
            || nop.clone(),
            |mut env| {
                let counts = pass(&mut env, &mut store, true);
                (env, counts)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("disable", |b| {
        b.iter_batched(
            || on.clone(),
            |mut env| {
                let counts = pass(&mut env, &mut store, false);
                (env, counts)
            },
            BatchSize::PerIteration,
        )
    });
    // Nothing changes, so the same env serves every iteration.
    g.bench_function("unchanged", |b| {
        b.iter(|| pass(&mut same, &mut store, true))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_decide, bench_encode, bench_update_all
}
criterion_main!(benches);
