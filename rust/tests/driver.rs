// SPDX-License-Identifier: GPL-2.0

//! The replace-code drivers on a simulated kernel.
//!
//! [`Sim`] implements `rfcore::driver::Env` over a vector of records and a
//! map of call-site text. Targets are chosen as the kernel chooses them
//! (`ftrace_get_addr_new()` / `ftrace_get_addr_curr()`); the text-poke queue
//! checks the ascending / `BATCH_MAX` contract and only makes writes live on
//! flush. Expected text is computed here, from the record's flags, with an
//! encoder of its own.

use std::collections::BTreeMap;
use std::format;
use std::vec;
use std::vec::Vec;

use super::model::{self, bit, has, m};
use super::util::{note, seed, Rng};
use crate::rfcore::driver::{replace_batched, replace_one, Counts, Env, Failure, BATCH_MAX};
use crate::rfcore::flags::RecFlags;
use crate::rfcore::record::Update;
use crate::rfcore::x86::{EncodeError, Mismatch};

const NOP: [u8; 5] = [0x0f, 0x1f, 0x44, 0x00, 0x00];
const CALLER: u64 = 0xffff_ffff_81e0_0000;
const REGS_CALLER: u64 = 0xffff_ffff_81e0_0100;

/// `CALL rel32` / `JMP rel32` at `ip` to `dest`, encoded here.
fn insn(ip: u64, dest: u64, jmp: bool) -> [u8; 5] {
    let d = dest.wrapping_sub(ip.wrapping_add(5)) as i64;
    assert!(
        d >= i64::from(i32::MIN) && d <= i64::from(i32::MAX),
        "test setup: {dest:#x} out of range of {ip:#x}"
    );
    let r = (d as i32).to_le_bytes();
    [if jmp { 0xe9 } else { 0xe8 }, r[0], r[1], r[2], r[3]]
}

#[derive(Clone, Copy, Debug)]
struct Site {
    ip: u64,
    flags: u64,
    /// The trampoline of the site's single ops, when it has one.
    tramp: u64,
    /// The direct trampoline; bit 0 set means "jump" on a jmp-bit kernel.
    direct: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ev {
    Read(u64),
    Store(usize),
    Queue(u64),
    Flush,
}

struct Sim {
    recs: Vec<Site>,
    text: BTreeMap<u64, [u8; 5]>,
    jmp: bool,
    pending: Vec<(u64, [u8; 5])>,
    /// The ips of each flush, in order.
    flushes: Vec<Vec<u64>>,
    reports: Vec<(usize, Update, Failure)>,
    fault_at: Option<u64>,
    log: Vec<Ev>,
}

impl Sim {
    fn new(recs: Vec<Site>, jmp: bool) -> Self {
        for w in recs.windows(2) {
            assert_ne!(w[0].ip, w[1].ip, "test setup: duplicate ip");
        }
        let text = recs.iter().map(|s| (s.ip, NOP)).collect();
        Sim {
            recs,
            text,
            jmp,
            pending: Vec::new(),
            flushes: Vec::new(),
            reports: Vec::new(),
            fault_at: None,
            log: Vec::new(),
        }
    }

    /// `n` records at ascending kernel-text addresses, all NOPs, no users.
    fn kernel(n: usize, jmp: bool) -> Self {
        let recs = (0..n as u64)
            .map(|i| Site {
                ip: 0xffff_ffff_8100_0000 + i * 0x40 + (i % 7),
                flags: 0,
                tramp: 0xffff_ffff_c000_0000 + (i % 5) * 0x1000,
                direct: 0xffff_ffff_a000_0000 + i * 0x100 + u64::from(jmp),
            })
            .collect();
        Sim::new(recs, jmp)
    }

    /// Target from the request bits (`ftrace_get_addr_new()`).
    fn target_new(&self, s: &Site) -> u64 {
        let count = s.flags & model::COUNT_MASK;
        if has(s.flags, bit::DIRECT) && count == 1 {
            s.direct
        } else if has(s.flags, bit::TRAMP) {
            s.tramp
        } else if has(s.flags, bit::REGS) {
            REGS_CALLER
        } else {
            CALLER
        }
    }

    /// Target from the `_EN` bits (`ftrace_get_addr_curr()`).
    fn target_curr(&self, s: &Site) -> u64 {
        if has(s.flags, bit::DIRECT_EN) {
            s.direct
        } else if has(s.flags, bit::TRAMP_EN) {
            s.tramp
        } else if has(s.flags, bit::REGS_EN) {
            REGS_CALLER
        } else {
            CALLER
        }
    }

    /// Only a direct-call target reads bit 0 as "jump".
    fn encode(&self, ip: u64, target: u64, direct: bool) -> [u8; 5] {
        if self.jmp && direct && target & 1 == 1 {
            insn(ip, target & !1, true)
        } else {
            insn(ip, target, false)
        }
    }

    /// What the text at record `i` must be, from its flags alone.
    fn expected_text(&self, i: usize) -> [u8; 5] {
        let s = &self.recs[i];
        if has(s.flags, bit::ENABLED) {
            self.encode(s.ip, self.target_curr(s), has(s.flags, bit::DIRECT_EN))
        } else {
            NOP
        }
    }

    fn flags_vec(&self) -> Vec<u64> {
        self.recs.iter().map(|s| s.flags).collect()
    }

    /// Every site holds what its record says, and nothing is queued.
    fn check_text(&self) {
        assert!(self.pending.is_empty(), "writes left queued");
        for i in 0..self.recs.len() {
            assert_eq!(
                self.text[&self.recs[i].ip],
                self.expected_text(i),
                "site {i} ({:#x}) flags {:#010x}",
                self.recs[i].ip,
                self.recs[i].flags
            );
        }
    }

    fn queued_any(&self) -> bool {
        self.log
            .iter()
            .any(|e| matches!(e, Ev::Queue(_) | Ev::Flush))
    }
}

impl Env for Sim {
    type Rec = usize;
    type Cursor = usize;

    fn first(&mut self) -> Option<usize> {
        (!self.recs.is_empty()).then_some(0)
    }

    fn next(&mut self, at: usize) -> Option<usize> {
        (at + 1 < self.recs.len()).then_some(at + 1)
    }

    fn record(&self, at: usize) -> usize {
        at
    }

    fn ip(&self, rec: usize) -> u64 {
        self.recs[rec].ip
    }

    fn flags(&self, rec: usize) -> RecFlags {
        RecFlags::from_raw(self.recs[rec].flags)
    }

    fn store_flags(&mut self, rec: usize, flags: RecFlags) {
        self.log.push(Ev::Store(rec));
        self.recs[rec].flags = flags.raw();
    }

    fn addr_new(&mut self, rec: usize) -> u64 {
        self.target_new(&self.recs[rec])
    }

    fn addr_curr(&mut self, rec: usize) -> u64 {
        self.target_curr(&self.recs[rec])
    }

    fn jmp_bit(&self) -> bool {
        self.jmp
    }

    fn read(&mut self, ip: u64) -> Result<[u8; 5], Failure> {
        self.log.push(Ev::Read(ip));
        if self.fault_at == Some(ip) {
            return Err(Failure::Fault);
        }
        Ok(*self
            .text
            .get(&ip)
            .unwrap_or_else(|| panic!("read of {ip:#x}: not a site")))
    }

    fn queue(&mut self, ip: u64, insn: &[u8; 5]) {
        assert!(self.text.contains_key(&ip), "queue at {ip:#x}: not a site");
        assert!(self.pending.len() < BATCH_MAX, "more than BATCH_MAX queued");
        if let Some(&(last, _)) = self.pending.last() {
            assert!(ip > last, "queue not ascending: {ip:#x} after {last:#x}");
        }
        self.log.push(Ev::Queue(ip));
        self.pending.push((ip, *insn));
    }

    fn flush(&mut self) {
        self.log.push(Ev::Flush);
        let batch: Vec<(u64, [u8; 5])> = self.pending.drain(..).collect();
        for &(ip, b) in &batch {
            self.text.insert(ip, b);
        }
        self.flushes.push(batch.iter().map(|&(ip, _)| ip).collect());
    }

    fn report(&mut self, rec: usize, update: Update, failure: Failure) {
        self.reports.push((rec, update, failure));
    }
}

fn update_of(code: u8) -> Update {
    match code {
        model::IGNORE => Update::Ignore,
        model::MAKE_CALL => Update::MakeCall,
        model::MODIFY_CALL => Update::ModifyCall,
        model::MAKE_NOP => Update::MakeNop,
        _ => unreachable!(),
    }
}

/// Runs one batched pass and checks everything about it against the model.
fn checked_pass(sim: &mut Sim, enable: bool) -> Counts {
    let before = sim.flags_vec();
    let text_before = sim.text.clone();
    let planned: Vec<(u8, u64)> = before
        .iter()
        .map(|&w| model::check_record(w, enable))
        .collect();
    let flushes_before = sim.flushes.len();
    sim.log.clear();

    let mut counts = Counts::default();
    assert_eq!(replace_batched(sim, enable, &mut counts), Ok(()));
    assert!(sim.reports.is_empty(), "{:?}", sim.reports);

    let n = sim.recs.len() as u64;
    let of = |code| planned.iter().filter(|p| p.0 == code).count() as u64;
    let changed = n - of(model::IGNORE);
    assert_eq!(counts.walked, n);
    assert_eq!(counts.make_call, of(model::MAKE_CALL));
    assert_eq!(counts.modify_call, of(model::MODIFY_CALL));
    assert_eq!(counts.make_nop, of(model::MAKE_NOP));
    assert_eq!(counts.failures, 0);
    assert_eq!(counts.patched(), changed);

    // Batches: one flush each, none empty, at most BATCH_MAX, and for
    // ascending records as few as possible.
    let flushes = &sim.flushes[flushes_before..];
    assert_eq!(counts.batches, flushes.len() as u64);
    assert!(flushes
        .iter()
        .all(|f| !f.is_empty() && f.len() <= BATCH_MAX));
    assert_eq!(flushes.iter().map(Vec::len).sum::<usize>() as u64, changed);
    assert_eq!(counts.batches, changed.div_ceil(BATCH_MAX as u64));

    // Pass one read each changing site once, and no other.
    let reads: Vec<u64> = sim
        .log
        .iter()
        .filter_map(|e| {
            if let Ev::Read(ip) = e {
                Some(*ip)
            } else {
                None
            }
        })
        .collect();
    let want_reads: Vec<u64> = (0..sim.recs.len())
        .filter(|&i| planned[i].0 != model::IGNORE)
        .map(|i| sim.recs[i].ip)
        .collect();
    assert_eq!(reads, want_reads);

    for i in 0..sim.recs.len() {
        let (code, word) = planned[i];
        assert_eq!(
            sim.recs[i].flags, word,
            "record {i}: {:#010x} enable={enable}",
            before[i]
        );
        // Fixed point.
        assert_eq!(
            model::check_record(word, enable).0,
            model::IGNORE,
            "record {i}"
        );
        if code == model::IGNORE {
            assert_eq!(
                sim.text[&sim.recs[i].ip], text_before[&sim.recs[i].ip],
                "ignored site {i} written"
            );
        }
    }
    sim.check_text();
    counts
}

/// The request bits a step may change.
const REQ: [u32; 6] = [
    bit::REGS,
    bit::TRAMP,
    bit::DIRECT,
    bit::CALL_OPS,
    bit::IPMODIFY,
    bit::DISABLED,
];

fn random_step(sim: &mut Sim, rng: &mut Rng) {
    let n = sim.recs.len();
    let all = rng.chance(1, 40);
    let k = if all { n } else { 1 + rng.below(8) as usize };
    for j in 0..k {
        let i = if all { j } else { rng.below(n as u64) as usize };
        let mut w = sim.recs[i].flags & !model::COUNT_MASK;
        for &b in &REQ {
            let p = if b == bit::DISABLED { 1 } else { 3 };
            w = if rng.chance(p, 8) {
                w | m(b)
            } else {
                w & !m(b)
            };
        }
        let count = match rng.below(10) {
            0..=2 => 0,
            3..=6 => 1,
            7 | 8 => 2 + rng.below(3),
            _ => model::COUNT_MASK - rng.below(2),
        };
        sim.recs[i].flags = w | count;
    }
}

#[test]
fn random_passes() {
    let base = seed(0x2026_0f7a);
    // Four runs, seeds base..base+3; odd runs have the jump bit.
    let mut passes = 0u64;
    let mut totals = Counts::default();
    let mut max_batches = 0;
    let (mut direct_shared, mut disabled_call) = (0u64, 0u64);
    for run in 0..4u64 {
        let s = base.wrapping_add(run);
        let mut rng = Rng::new(s);
        let jmp = run % 2 == 1;
        let mut sim = Sim::kernel(300 + rng.below(300) as usize, jmp);
        // Some records in module text, further up.
        let n = sim.recs.len();
        for (j, r) in sim.recs[n - 50..].iter_mut().enumerate() {
            r.ip = 0xffff_ffff_c0a0_0000 + j as u64 * 0x33;
        }
        sim.text = sim.recs.iter().map(|s| (s.ip, NOP)).collect();
        for _ in 0..1500 {
            random_step(&mut sim, &mut rng);
            // Interesting states met on the way: a direct call whose ops
            // got company, and a call on a disabled record.
            for r in &sim.recs {
                let count = r.flags & model::COUNT_MASK;
                direct_shared += u64::from(has(r.flags, bit::DIRECT_EN) && count > 1);
                disabled_call +=
                    u64::from(has(r.flags, bit::DISABLED) && has(r.flags, bit::ENABLED));
            }
            let enable = rng.chance(9, 10);
            let c = checked_pass(&mut sim, enable);
            max_batches = max_batches.max(c.batches);
            totals.make_call += c.make_call;
            totals.modify_call += c.modify_call;
            totals.make_nop += c.make_nop;
            totals.batches += c.batches;
            passes += 1;
        }
        // A disable pass leaves only NOPs.
        checked_pass(&mut sim, false);
        assert!(sim.text.values().all(|b| *b == NOP));
    }
    assert!(totals.make_call > 0 && totals.modify_call > 0 && totals.make_nop > 0);
    assert!(max_batches > 1, "no pass needed two batches");
    assert!(
        direct_shared > 0 && disabled_call > 0,
        "{direct_shared} {disabled_call}"
    );
    note(&format!(
        "driver: seed {base:#x} (RFTRACE_SEED): {passes} random passes, {} make_call, \
         {} modify_call, {} make_nop, {} batches; {direct_shared} shared direct calls \
         and {disabled_call} disabled calls met",
        totals.make_call, totals.modify_call, totals.make_nop, totals.batches
    ));
}

/// A simulation with a mix of pending updates of every kind, in address
/// order: `[make_call, ignore, modify_call, make_nop, make_call]`.
fn mixed(jmp: bool) -> Sim {
    let mut sim = Sim::kernel(5, jmp);
    let one = 1;
    // 1: already the plain call it wants.
    // 2: a call to the caller that now wants regs.
    // 3: a call with no users left.
    sim.recs[1].flags = m(bit::ENABLED) | m(bit::TOUCHED) | one;
    sim.recs[2].flags = m(bit::ENABLED) | m(bit::REGS) | one;
    sim.recs[3].flags = m(bit::ENABLED) | m(bit::DIRECT_EN) | m(bit::DIRECT);
    for i in 1..4 {
        let e = sim.expected_text(i);
        sim.text.insert(sim.recs[i].ip, e);
    }
    // 0 and 4 are NOPs that want a direct call and a trampoline.
    sim.recs[0].flags = m(bit::DIRECT) | one;
    sim.recs[4].flags = m(bit::TRAMP) | one;
    let plan: Vec<u8> = sim
        .recs
        .iter()
        .map(|s| model::check_record(s.flags, true).0)
        .collect();
    assert_eq!(
        plan,
        [
            model::MAKE_CALL,
            model::IGNORE,
            model::MODIFY_CALL,
            model::MAKE_NOP,
            model::MAKE_CALL
        ]
    );
    sim
}

/// Runs a batched pass that must fail, and checks that nothing at all was
/// written and the failure was reported once, for record `rec`.
fn failing_pass(sim: &mut Sim, rec: usize) -> Failure {
    let text = sim.text.clone();
    let flags = sim.flags_vec();
    let want_update = update_of(model::check_record(flags[rec], true).0);
    sim.log.clear();
    let mut counts = Counts::default();
    let failure = replace_batched(sim, true, &mut counts).expect_err("the pass must fail");
    assert_eq!(sim.reports, vec![(rec, want_update, failure)]);
    assert_eq!(sim.text, text, "text written");
    assert_eq!(sim.flags_vec(), flags, "flags written");
    assert!(!sim.queued_any(), "{:?}", sim.log);
    assert!(sim.pending.is_empty() && sim.flushes.is_empty());
    assert_eq!(counts.failures, 1);
    assert_eq!(counts.patched(), 0);
    assert_eq!(counts.batches, 0);
    failure
}

#[test]
fn corrupted_site_is_refused() {
    let mut cases = 0;
    for jmp in [false, true] {
        // The corrupted site makes a call, modifies one, makes a NOP.
        for rec in [0, 2, 3, 4] {
            for byte in 0..5 {
                let mut sim = mixed(jmp);
                let ip = sim.recs[rec].ip;
                let expected = match model::check_record(sim.recs[rec].flags, true).0 {
                    model::MAKE_CALL => NOP,
                    _ => {
                        let r = &sim.recs[rec];
                        sim.encode(ip, sim.target_curr(r), has(r.flags, bit::DIRECT_EN))
                    }
                };
                assert_eq!(sim.text[&ip], expected);
                let mut actual = expected;
                actual[byte] ^= 0x5a;
                sim.text.insert(ip, actual);
                let f = failing_pass(&mut sim, rec);
                assert_eq!(f, Failure::Mismatch(Mismatch { expected, actual }));
                cases += 1;
            }
        }
    }
    // A corrupted site whose record needs nothing is not looked at.
    let mut sim = mixed(false);
    let ip = sim.recs[1].ip;
    sim.text.insert(ip, [0xcc; 5]);
    let mut counts = Counts::default();
    assert_eq!(replace_batched(&mut sim, true, &mut counts), Ok(()));
    assert_eq!(sim.text[&ip], [0xcc; 5]);
    assert!(!sim.log.contains(&Ev::Read(ip)));
    note(&format!(
        "driver: {cases} corrupted-site passes refused with nothing written"
    ));
}

#[test]
fn out_of_range_target_is_refused() {
    // The new target: a trampoline one byte past rel32 reach.
    let mut sim = mixed(false);
    let ip = sim.recs[4].ip;
    let far = ip.wrapping_add(5).wrapping_add(1 << 31);
    sim.recs[4].tramp = far;
    let f = failing_pass(&mut sim, 4);
    assert_eq!(
        f,
        Failure::Encode(EncodeError::OutOfRange { ip, target: far })
    );

    // The current target: the text of record 3 cannot be what its record says.
    let mut sim = mixed(false);
    let ip = sim.recs[3].ip;
    let far = ip.wrapping_add(5).wrapping_sub((1 << 31) + 1);
    sim.recs[3].direct = far;
    let f = failing_pass(&mut sim, 3);
    assert_eq!(
        f,
        Failure::Encode(EncodeError::OutOfRange { ip, target: far })
    );

    // No target at all.
    let mut sim = mixed(false);
    let ip = sim.recs[0].ip;
    sim.recs[0].direct = 0;
    let f = failing_pass(&mut sim, 0);
    assert_eq!(f, Failure::Encode(EncodeError::NoTarget { ip }));
}

#[test]
fn read_fault_is_refused() {
    for rec in [0, 2, 3, 4] {
        let mut sim = mixed(true);
        sim.fault_at = Some(sim.recs[rec].ip);
        assert_eq!(failing_pass(&mut sim, rec), Failure::Fault);
    }
    // A fault at a site that needs nothing does not matter.
    let mut sim = mixed(true);
    sim.fault_at = Some(sim.recs[1].ip);
    checked_pass(&mut sim, true);
}

/// `replace_one` on record `rec`, then flushes. Returns the result.
fn one(sim: &mut Sim, rec: usize, enable: bool) -> Result<Update, Failure> {
    sim.log.clear();
    let mut counts = Counts::default();
    let r = replace_one(sim, rec, enable, &mut counts);
    assert_eq!(counts.walked, 1);
    match r {
        Ok(u) => {
            assert_eq!(counts.patched(), u64::from(u != Update::Ignore));
            assert_eq!(counts.failures, 0);
        }
        Err(_) => {
            assert_eq!(counts.patched(), 0);
            assert_eq!(counts.failures, 1);
        }
    }
    sim.flush();
    r
}

#[test]
fn replace_one_paths() {
    for jmp in [false, true] {
        let mut sim = Sim::kernel(3, jmp);
        let ip = sim.recs[1].ip;
        let direct = sim.recs[1].direct;

        // NOP -> call to the regs caller; the record is stored before the
        // write is queued.
        sim.recs[1].flags = m(bit::REGS) | 1;
        let want = model::check_record(sim.recs[1].flags, true).1;
        assert_eq!(one(&mut sim, 1, true), Ok(Update::MakeCall));
        assert_eq!(sim.log[..3], [Ev::Store(1), Ev::Read(ip), Ev::Queue(ip)]);
        assert_eq!(sim.recs[1].flags, want);
        assert_eq!(sim.text[&ip], insn(ip, REGS_CALLER, false));

        // Nothing to do: nothing read or written.
        assert_eq!(one(&mut sim, 1, true), Ok(Update::Ignore));
        assert_eq!(sim.log, [Ev::Flush]);

        // regs caller -> direct trampoline (a jmp on a jmp-bit kernel).
        sim.recs[1].flags |= m(bit::DIRECT);
        let want = model::check_record(sim.recs[1].flags, true).1;
        assert_eq!(one(&mut sim, 1, true), Ok(Update::ModifyCall));
        assert_eq!(sim.log[..3], [Ev::Store(1), Ev::Read(ip), Ev::Queue(ip)]);
        assert_eq!(sim.recs[1].flags, want);
        assert!(has(want, bit::MODIFIED) && has(want, bit::DIRECT_EN));
        assert_eq!(sim.text[&ip], insn(ip, direct & !1, jmp));

        // Last user gone: back to a NOP, only the NOCLEAR bits stay.
        sim.recs[1].flags &= !model::COUNT_MASK;
        assert_eq!(one(&mut sim, 1, true), Ok(Update::MakeNop));
        assert_eq!(sim.log[..3], [Ev::Store(1), Ev::Read(ip), Ev::Queue(ip)]);
        assert_eq!(sim.recs[1].flags & !model::NOCLEAR_MASK, 0);
        assert_eq!(sim.text[&ip], NOP);
        assert!(sim.text.values().all(|b| *b == NOP), "another site written");
    }
}

#[test]
fn replace_one_refuses_mismatch() {
    let mut sim = Sim::kernel(3, false);
    let ip = sim.recs[1].ip;
    // Each starting state, with the site's text corrupted.
    let states = [
        (m(bit::REGS) | 1, Update::MakeCall),
        (m(bit::ENABLED) | m(bit::REGS) | 1, Update::ModifyCall),
        (m(bit::ENABLED) | m(bit::REGS_EN), Update::MakeNop),
    ];
    for (w, update) in states {
        sim.recs[1].flags = w;
        let good = sim.expected_text(1);
        let bad = [0xcc, good[1], good[2], good[3], good[4]];
        sim.text.insert(ip, bad);
        let text = sim.text.clone();
        let r = one(&mut sim, 1, true);
        assert_eq!(
            r,
            Err(Failure::Mismatch(Mismatch {
                expected: good,
                actual: bad
            })),
            "{update:?}"
        );
        // The record was updated first, as in the kernel; the text was not
        // written, and reporting is the caller's job.
        assert_eq!(sim.recs[1].flags, model::check_record(w, true).1);
        assert_eq!(sim.text, text);
        assert!(!sim.log.iter().any(|e| matches!(e, Ev::Queue(_))));
        assert!(sim.reports.is_empty());
    }
    // An out-of-range target is refused the same way.
    sim.recs[1].flags = m(bit::TRAMP) | 1;
    sim.recs[1].tramp = ip.wrapping_add(5).wrapping_add(1 << 31);
    sim.text.insert(ip, NOP);
    let target = sim.recs[1].tramp;
    assert_eq!(
        one(&mut sim, 1, true),
        Err(Failure::Encode(EncodeError::OutOfRange { ip, target }))
    );
    assert_eq!(sim.text[&ip], NOP);
}

#[test]
fn batches_of_at_most_batch_max() {
    let mut checked = 0;
    for n in [1, 2, 255, 256, 257, 511, 512, 513, 1000, 1025] {
        let mut sim = Sim::kernel(n, false);
        for r in &mut sim.recs {
            r.flags = 1;
        }
        let c = checked_pass(&mut sim, true);
        let want = n.div_ceil(BATCH_MAX);
        assert_eq!(c.batches, want as u64, "n = {n}");
        assert_eq!(c.make_call, n as u64);
        // Greedy: every batch but the last is full.
        let sizes: Vec<usize> = sim.flushes.iter().map(Vec::len).collect();
        assert!(
            sizes[..want - 1].iter().all(|&s| s == BATCH_MAX),
            "{sizes:?}"
        );
        sim.flushes.clear();
        let c = checked_pass(&mut sim, false);
        assert_eq!((c.batches, c.make_nop), (want as u64, n as u64));
        checked += 1;
    }
    note(&format!("driver: {checked} batch-size cases"));
}

/// Records out of address order (two tables, as with module pages): the
/// driver flushes at the descent rather than queue out of order.
#[test]
fn batches_split_at_descending_ip() {
    let mut sim = Sim::kernel(10, false);
    for (j, r) in sim.recs[5..].iter_mut().enumerate() {
        r.ip = 0xffff_ffff_8000_0000 + j as u64 * 0x10;
    }
    sim.text = sim.recs.iter().map(|s| (s.ip, NOP)).collect();
    for r in &mut sim.recs {
        r.flags = 1;
    }
    let mut counts = Counts::default();
    assert_eq!(replace_batched(&mut sim, true, &mut counts), Ok(()));
    assert_eq!(counts.batches, 2);
    assert_eq!(sim.flushes.iter().map(Vec::len).collect::<Vec<_>>(), [5, 5]);
    sim.check_text();
}

/// On a jmp-bit kernel only a direct-call target reads bit 0 as "jump".
/// A trampoline or caller at an odd address (a C function built with GCC
/// 12 at -Os) must be called, not jumped to one byte before it.
#[test]
fn odd_non_direct_targets_are_called() {
    let mut sim = Sim::kernel(4, true);
    for s in sim.recs.iter_mut() {
        s.tramp |= 1;
    }
    // Record 0: single ops with an odd trampoline; record 1: regs caller;
    // record 2: direct trampoline with the jump bit; record 3: direct
    // trampoline shared with another ops (so: the caller, not the direct).
    sim.recs[0].flags = m(bit::TRAMP) | 1;
    sim.recs[1].flags = m(bit::REGS) | 1;
    sim.recs[2].flags = m(bit::DIRECT) | 1;
    sim.recs[3].flags = m(bit::DIRECT) | m(bit::TRAMP) | 2;
    let mut counts = Counts::default();
    assert_eq!(replace_batched(&mut sim, true, &mut counts), Ok(()));
    let (r0, r2, r3) = (sim.recs[0], sim.recs[2], sim.recs[3]);
    assert_eq!(sim.text[&r0.ip], insn(r0.ip, r0.tramp, false));
    assert_eq!(sim.text[&r0.ip][0], 0xe8);
    assert_eq!(sim.text[&r2.ip], insn(r2.ip, r2.direct & !1, true));
    assert_eq!(sim.text[&r3.ip], insn(r3.ip, r3.tramp, false));
    sim.check_text();

    // And back: the old bytes are expected as calls too.
    for s in sim.recs.iter_mut() {
        s.flags &= !model::COUNT_MASK;
    }
    assert_eq!(replace_batched(&mut sim, true, &mut counts), Ok(()));
    assert!(sim.text.values().all(|b| *b == NOP));
}
