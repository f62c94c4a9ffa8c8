// SPDX-License-Identifier: GPL-2.0

//! Inputs for the criterion benches of the Rust ftrace core
//! (`benches/core.rs`): a deterministic mix of record flags, and [`Flat`], a
//! minimal in-memory [`Env`] so that a measured driver pass costs the driver's
//! own work per record and little else.
//!
//! [`Flat`] keeps one flags word and one 5-byte text slot per record, in two
//! vectors indexed by record. Call-site addresses and targets are computed
//! from the index, not stored; `queue` appends to a small vector and `flush`
//! copies it into the text. Unlike the simulated kernel of the host tests it
//! checks no contract and keeps no log: the tests do that; this only has to be
//! cheap and right. [`Flat::check`] compares every site with its record
//! outside the measured loops.

use rftrace::rfcore::driver::{Env, Failure, BATCH_MAX};
use rftrace::rfcore::flags::{self, RecFlags};
use rftrace::rfcore::record::Update;
use rftrace::rfcore::x86::{encode_call, INSN_SIZE, NOP5};

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
/// First of the ops trampolines (one page each, a few ops).
pub const TRAMP_BASE: u64 = 0xffff_ffff_c000_0000;
/// First of the direct-call trampolines.
pub const DIRECT_BASE: u64 = 0xffff_ffff_a000_0000;

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

/// A minimal in-memory kernel: flags and text per record.
#[derive(Clone, Debug)]
pub struct Flat {
    flags: Vec<u64>,
    text: Vec<[u8; INSN_SIZE]>,
    pending: Vec<(usize, [u8; INSN_SIZE])>,
    /// Failures reported by the driver.
    pub reports: usize,
}

impl Flat {
    /// `n` records with the [`initial_flags`] mix, every site a NOP.
    pub fn new(n: usize) -> Self {
        Flat {
            flags: (0..n).map(initial_flags).collect(),
            text: vec![NOP5; n],
            pending: Vec::with_capacity(BATCH_MAX),
            reports: 0,
        }
    }

    /// The record index of a call-site address.
    fn index(ip: u64) -> usize {
        ((ip - TEXT_BASE) / TEXT_STRIDE) as usize
    }

    /// The flags words, in record order.
    pub fn flags_words(&self) -> &[u64] {
        &self.flags
    }

    /// Number of sites that are calls.
    pub fn calls(&self) -> usize {
        self.text.iter().filter(|t| **t != NOP5).count()
    }

    /// Every site holds what its record says; nothing is left queued.
    ///
    /// # Panics
    ///
    /// On the first site that does not.
    pub fn check(&self) {
        assert!(self.pending.is_empty(), "writes left queued");
        for (i, (&raw, text)) in self.flags.iter().zip(&self.text).enumerate() {
            let f = RecFlags::from_raw(raw);
            let want = if f.any(flags::ENABLED) {
                let direct = f.any(flags::DIRECT_EN);
                encode_call(site_ip(i), target_curr(i, f), direct).expect("in range")
            } else {
                NOP5
            };
            assert_eq!(*text, want, "record {i}, flags {raw:#010x}");
        }
    }
}

impl Env for Flat {
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

    fn addr_new(&mut self, rec: usize) -> u64 {
        target_new(rec, self.flags(rec))
    }

    fn addr_curr(&mut self, rec: usize) -> u64 {
        target_curr(rec, self.flags(rec))
    }

    fn jmp_bit(&self) -> bool {
        true
    }

    fn read(&mut self, ip: u64) -> Result<[u8; INSN_SIZE], Failure> {
        Ok(self.text[Self::index(ip)])
    }

    fn queue(&mut self, ip: u64, insn: &[u8; INSN_SIZE]) {
        self.pending.push((Self::index(ip), *insn));
    }

    fn flush(&mut self) {
        for (i, insn) in self.pending.drain(..) {
            self.text[i] = insn;
        }
    }

    fn report(&mut self, _rec: usize, _update: Update, _failure: Failure) {
        self.reports += 1;
    }
}

/// `(ip, target, jmp)` triples as the driver encodes them: record `i`'s site
/// and the caller, regs caller, trampoline or direct trampoline it would
/// call (about the proportions of [`initial_flags`] among the sites with
/// users), `jmp` true for the direct one (its bit 0 selects a `JMP`).
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
