// SPDX-License-Identifier: GPL-2.0

//! Inputs for the criterion benches of the Rust ftrace core
//! (`benches/core.rs`): a deterministic mix of record flags, and [`Flat`], a
//! minimal in-memory kernel for the update pass (`update::update_all`), so
//! that a measured pass costs the pass's own work per record and little else.
//!
//! [`Flat`] is the three things the pass is generic over:
//!
//! - [`FlatRecords`], the [`Records`]: one flags word per record in a vector
//!   indexed by record. Call-site addresses and targets are computed from
//!   the index and the flags, not stored, and not found by walking an ops
//!   list: [`Records::gather`] is two small functions of the flags.
//! - [`FlatX86`], the [`Arch`]: one 5-byte text slot per record. It plans
//!   with the core's own [`x86::plan_update`], checks a change by comparing
//!   the bytes in the text with the change's ([`X86Change::verify`], as the
//!   kernel does), writes the new bytes into the text at once, and counts
//!   the batches [`Arch::flush`] would make live.
//! - [`VecStore`], the [`Store`]: the plans of one pass in a vector, kept by
//!   the caller so that its capacity is reused from one pass to the next.
//!
//! Unlike the simulated kernel of the host tests it checks no contract and
//! keeps no log: the tests do that; this only has to be cheap and right.
//! [`Flat::check`] compares every site with its record outside the measured
//! loops.

use rftrace::rfcore::{
    flags::{
        self,
        RecFlags, //
    },
    record::{
        Decision,
        Update, //
    },
    update::{
        update_all,
        Arch,
        Counts,
        Facts,
        Failure,
        Records,
        Store, //
    },
    x86::{
        self,
        X86Change,
        INSN_SIZE,
        NOP5, //
    }, //
};

/// Records in every bench: the order of a distribution kernel's
/// `available_filter_functions`.
pub const RECORDS: usize = 100_000;

/// Address of the first call site.
pub const TEXT_BASE: u64 = 0xffff_ffff_8100_0000;
/// Distance between two call sites (one function each).
pub const TEXT_STRIDE: u64 = 0x40;
/// `ftrace_caller`.
pub const CALLER: u64 = 0xffff_ffff_81e0_0000;
/// `ftrace_regs_caller`.
pub const REGS_CALLER: u64 = 0xffff_ffff_81e0_0100;
/// `__fentry__`, which the compiler's call sites call before they are
/// initialised.
pub const MCOUNT: u64 = 0xffff_ffff_81f0_0000;
/// First of the ops trampolines (one page each, a few ops).
pub const TRAMP_BASE: u64 = 0xffff_ffff_c000_0000;
/// First of the direct-call trampolines.
pub const DIRECT_BASE: u64 = 0xffff_ffff_a000_0000;

/// The most changes the x86 text-poke engine batches (as the kernel's).
pub const BATCH_MAX: usize = 256;

/// Address of record `i`'s call site.
pub const fn site_ip(i: usize) -> u64 {
    TEXT_BASE + i as u64 * TEXT_STRIDE
}

/// The trampoline of record `i`'s single ops (one of five ops).
pub const fn tramp_of(i: usize) -> u64 {
    TRAMP_BASE + (i as u64 % 5) * 0x1000
}

/// Record `i`'s direct trampoline, with the jump bit set.
pub const fn direct_of(i: usize) -> u64 {
    (DIRECT_BASE + (i as u64 % 64) * 0x100) | 1
}

/// The flags word of record `i` before any update: who wants the site and
/// what they need, no `*_EN` bit, the text a NOP.
///
/// Per 1000 records: 800 without users (they stay NOPs), 100 with one ops
/// that has its own trampoline, 40 with two ops wanting registers (shared
/// regs caller), 30 with one ops wanting registers, 10 with one direct-call
/// ops (a BPF trampoline), 15 with three plain ops (list function), and
/// 5 disabled records without users (a module still loading).
pub const fn initial_flags(i: usize) -> u64 {
    match i % 1000 {
        0..=799 => 0,
        800..=899 => flags::TRAMP | 1,
        900..=939 => flags::REGS | 2,
        940..=969 => flags::REGS | 1,
        970..=979 => flags::DIRECT | 1,
        980..=994 => 3,
        _ => flags::DISABLED,
    }
}

/// Records per 1000 of [`initial_flags`] that become calls on enable.
pub const CALLS_PER_1000: usize = 195;

/// Where a site must call, from the request bits (`ftrace_get_addr_new()`).
fn target_new(i: usize, f: RecFlags) -> u64 {
    if f.all(flags::DIRECT) && f.count() == 1 {
        direct_of(i)
    } else if f.any(flags::TRAMP) {
        tramp_of(i)
    } else if f.any(flags::REGS) {
        REGS_CALLER
    } else {
        CALLER
    }
}

/// Where a site calls now, from the `*_EN` bits (`ftrace_get_addr_curr()`).
fn target_curr(i: usize, f: RecFlags) -> u64 {
    if f.any(flags::DIRECT_EN) {
        direct_of(i)
    } else if f.any(flags::TRAMP_EN) {
        tramp_of(i)
    } else if f.any(flags::REGS_EN) {
        REGS_CALLER
    } else {
        CALLER
    }
}

/// The record index of a call-site address.
fn index(ip: u64) -> usize {
    ((ip - TEXT_BASE) / TEXT_STRIDE) as usize
}

/// The record table: one flags word per record.
#[derive(Clone, Debug)]
pub struct FlatRecords {
    flags: Vec<u64>,
    /// Failures reported by the update pass.
    pub reports: usize,
}

impl Records for FlatRecords {
    type Rec = usize;
    type Cursor = usize;

    fn first(&mut self) -> Option<usize> {
        (!self.flags.is_empty()).then_some(0)
    }

    fn next(&mut self, at: usize) -> Option<usize> {
        (at + 1 < self.flags.len()).then_some(at + 1)
    }

    fn record(&self, at: usize) -> usize {
        at
    }

    fn ip(&self, rec: usize) -> u64 {
        site_ip(rec)
    }

    fn flags(&self, rec: usize) -> RecFlags {
        RecFlags::from_raw(self.flags[rec])
    }

    fn store_flags(&mut self, rec: usize, flags: RecFlags) {
        self.flags[rec] = flags.raw();
    }

    fn gather(&mut self, rec: usize, _want_unique: bool) -> Facts {
        let flags = self.flags(rec);
        Facts {
            ip: site_ip(rec),
            flags,
            new: target_new(rec, flags),
            curr: target_curr(rec, flags),
            unique: None,
        }
    }

    fn unique(&mut self, _rec: usize) -> Option<u64> {
        None
    }

    fn shadow(&mut self, _: usize, _: bool, _: &Decision, _: Option<&Facts>) {}

    fn report(&mut self, _rec: usize, _update: Update, _failure: &Failure) {
        self.reports += 1;
    }
}

/// The x86 text: one 5-byte slot per record, written at once.
#[derive(Clone, Debug)]
pub struct FlatX86 {
    text: Vec<[u8; INSN_SIZE]>,
    /// Batches made live ([`Arch::flush`] calls).
    pub batches: u64,
}

impl Arch for FlatX86 {
    type Change = X86Change;
    const BATCH_MAX: usize = BATCH_MAX;
    const CALL_OPS: bool = false;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<X86Change, Failure> {
        // A kernel with CONFIG_DYNAMIC_FTRACE_WITH_JMP.
        x86::plan_update(facts, decision, true)
    }

    fn plan_init(&mut self, ip: u64) -> Result<X86Change, Failure> {
        x86::plan_init(ip, MCOUNT)
    }

    fn ip(change: &X86Change) -> u64 {
        change.ip
    }

    fn check(&mut self, change: &X86Change) -> Result<(), Failure> {
        change.verify(&self.text[index(change.ip)])
    }

    fn write(&mut self, change: &X86Change) -> Result<(), Failure> {
        self.text[index(change.ip)] = change.new;
        Ok(())
    }

    fn flush(&mut self) {
        self.batches += 1;
    }
}

/// One entry of a [`VecStore`].
pub type Entry = (usize, X86Change, Decision);

/// The plans of one pass, in a vector.
#[derive(Clone, Debug, Default)]
pub struct VecStore {
    items: Vec<Entry>,
}

impl VecStore {
    /// A store with room for `n` plans before it grows.
    pub fn with_capacity(n: usize) -> Self {
        VecStore {
            items: Vec::with_capacity(n),
        }
    }
}

impl Store<usize, X86Change> for VecStore {
    fn push(&mut self, rec: usize, change: X86Change, decision: Decision) -> bool {
        self.items.push((rec, change, decision));
        true
    }

    fn get(&self, i: usize) -> Option<Entry> {
        self.items.get(i).copied()
    }

    fn clear(&mut self) {
        self.items.clear();
    }
}

/// A minimal in-memory kernel: flags and text per record.
#[derive(Clone, Debug)]
pub struct Flat {
    /// The record table.
    pub recs: FlatRecords,
    /// The text.
    pub arch: FlatX86,
}

impl Flat {
    /// `n` records with the [`initial_flags`] mix, every site a NOP.
    pub fn new(n: usize) -> Self {
        Flat {
            recs: FlatRecords {
                flags: (0..n).map(initial_flags).collect(),
                reports: 0,
            },
            arch: FlatX86 {
                text: vec![NOP5; n],
                batches: 0,
            },
        }
    }

    /// One update pass (`update_all`) over every record, its plans kept in
    /// `store`.
    pub fn pass(
        &mut self,
        store: &mut VecStore,
        enable: bool,
        counts: &mut Counts,
    ) -> Result<(), Failure> {
        update_all(&mut self.recs, &mut self.arch, store, enable, counts)
    }

    /// The flags words, in record order.
    pub fn flags_words(&self) -> &[u64] {
        &self.recs.flags
    }

    /// Number of sites that are calls.
    pub fn calls(&self) -> usize {
        self.arch.text.iter().filter(|t| **t != NOP5).count()
    }

    /// Every site holds what its record says.
    ///
    /// # Panics
    ///
    /// On the first site that does not.
    pub fn check(&self) {
        let sites = self.recs.flags.iter().zip(&self.arch.text);
        for (i, (&raw, text)) in sites.enumerate() {
            let f = RecFlags::from_raw(raw);
            let want = if f.any(flags::ENABLED) {
                let direct = f.any(flags::DIRECT_EN);
                x86::encode_call(site_ip(i), target_curr(i, f), direct).expect("in range")
            } else {
                NOP5
            };
            assert_eq!(*text, want, "record {i}, flags {raw:#010x}");
        }
    }
}

/// `(ip, target, jmp)` triples as the x86 plan encodes them: record `i`'s
/// site and the caller, regs caller, trampoline or direct trampoline it
/// would call (about the proportions of [`initial_flags`] among the sites
/// with users), `jmp` true for the direct one (its bit 0 selects a `JMP`).
pub fn encode_inputs(n: usize) -> Vec<(u64, u64, bool)> {
    (0..n)
        .map(|i| {
            let (target, jmp) = match i % 20 {
                0..=9 => (tramp_of(i), false),
                10..=16 => (REGS_CALLER, false),
                17 => (direct_of(i), true),
                _ => (CALLER, false),
            };
            (site_ip(i), target, jmp)
        })
        .collect()
}
