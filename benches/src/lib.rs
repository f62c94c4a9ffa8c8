// SPDX-License-Identifier: GPL-2.0

//! Inputs for the criterion benches of the Rust ftrace core
//! (`benches/core.rs`): a deterministic mix of record flags, and [`Flat`], a
//! minimal in-memory kernel for the update pass (`update::update_all`), so
//! that a measured pass costs the pass's own work per record and little else.
//!
//! [`Flat`] is the three things the pass is generic over, on the simulated
//! kernel parts of the host tests (`rust/tests/util.rs`, compiled in here):
//!
//! - the records: one flags word per record in a vector indexed by record,
//!   walked by the tests' `Walk`. Call-site addresses and targets are
//!   computed from the index and the flags, not stored, and not found by
//!   walking an ops list: a gather is two small functions of the flags.
//! - the arch: the tests' simulated x86 (`SimX86`) over one 5-byte text
//!   slot per record, found from the address by arithmetic. It plans with
//!   the core's own [`x86::plan_update`], checks a change by comparing the
//!   bytes in the text with the change's ([`X86Change::verify`], as the
//!   kernel does), queues the writes and makes them live at each flush,
//!   checking the `Arch` contract as it goes. It keeps no log here.
//! - [`VecStore`]: the plans of one pass in a vector, kept by the caller so
//!   that its capacity is reused from one pass to the next.
//!
//! [`Flat::check`] compares every site with its record outside the measured
//! loops.

// The simulated kernel parts of the host tests; they reach the core as
// `crate::rfcore`.
use rftrace::rfcore;

#[allow(dead_code)]
#[path = "../../rust/tests/util.rs"]
mod util;

use rfcore::{
    arch::x86::{
        self,
        X86Change,
        INSN_SIZE,
        NOP5, //
    }, //
    flags::{
        self,
        RecFlags, //
    },
    record::Update,
    select::Need,
    update::{
        update_all,
        Arch,
        Counts,
        Facts,
        Failure, //
    },
};
pub use util::VecStore;
use util::{
    SimX86,
    VecRecords,
    Walk,
    X86Text, //
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
pub const BATCH_MAX: usize = <SimX86<Slots> as Arch>::BATCH_MAX;

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

/// The record index of a call-site address, if it is one.
fn index(ip: u64) -> Option<usize> {
    let off = ip.checked_sub(TEXT_BASE)?;
    (off % TEXT_STRIDE == 0).then_some((off / TEXT_STRIDE) as usize)
}

/// The record table: one flags word per record.
#[derive(Clone, Debug)]
struct FlatRecords {
    flags: Vec<u64>,
    /// Failures reported by the update pass.
    reports: usize,
}

impl VecRecords for FlatRecords {
    fn count(&self) -> usize {
        self.flags.len()
    }

    fn site(&self, rec: usize) -> (u64, u64) {
        (site_ip(rec), self.flags[rec])
    }

    fn set_flags(&mut self, rec: usize, flags: u64) {
        self.flags[rec] = flags;
    }

    fn facts(&mut self, rec: usize, need: Need) -> Facts {
        let flags = RecFlags::from_raw(self.flags[rec]);
        Facts {
            ip: site_ip(rec),
            flags,
            new: need.new.then(|| target_new(rec, flags)),
            curr: need.curr.then(|| target_curr(rec, flags)),
            unique: None,
            set: None,
        }
    }

    fn unique(&mut self, _rec: usize) -> Option<u64> {
        None
    }

    fn report(&mut self, _rec: usize, _update: Update, _failure: &Failure) {
        self.reports += 1;
    }

    fn quarantine(&mut self, _rec: usize, _update: Update, _failure: &Failure) {
        self.reports += 1;
    }
}

/// The x86 text: one 5-byte slot per record.
#[derive(Clone, Debug)]
struct Slots(Vec<[u8; INSN_SIZE]>);

impl X86Text for Slots {
    fn site(&self, ip: u64) -> Option<&[u8; INSN_SIZE]> {
        self.0.get(index(ip)?)
    }

    fn site_mut(&mut self, ip: u64) -> Option<&mut [u8; INSN_SIZE]> {
        self.0.get_mut(index(ip)?)
    }
}

/// A minimal in-memory kernel: flags and text per record.
#[derive(Clone, Debug)]
pub struct Flat {
    /// The record table.
    recs: FlatRecords,
    /// A kernel with `CONFIG_DYNAMIC_FTRACE_WITH_JMP`.
    arch: SimX86<Slots>,
}

impl Flat {
    /// `n` records with the [`initial_flags`] mix, every site a NOP.
    pub fn new(n: usize) -> Self {
        Flat {
            recs: FlatRecords {
                flags: (0..n).map(initial_flags).collect(),
                reports: 0,
            },
            arch: SimX86::new(Slots(vec![NOP5; n]), true),
        }
    }

    /// One update pass (`update_all`) over every record, its plans kept in
    /// `store`.
    pub fn pass(
        &mut self,
        store: &mut VecStore<X86Change>,
        enable: bool,
        counts: &mut Counts,
    ) -> Result<(), Failure> {
        update_all(
            &mut Walk(&mut self.recs),
            &mut self.arch,
            store,
            enable,
            counts,
        )
    }

    /// The flags words, in record order.
    pub fn flags_words(&self) -> &[u64] {
        &self.recs.flags
    }

    /// Number of sites that are calls.
    pub fn calls(&self) -> usize {
        self.arch.text.0.iter().filter(|t| **t != NOP5).count()
    }

    /// Failures the update passes reported (quarantined sites included).
    pub fn reports(&self) -> usize {
        self.recs.reports
    }

    /// Batches the update passes made live (flushes).
    pub fn batches(&self) -> u64 {
        self.arch.flushes.len() as u64
    }

    /// Every site holds what its record says.
    ///
    /// # Panics
    ///
    /// On the first site that does not.
    pub fn check(&self) {
        assert!(self.arch.queue.is_empty(), "writes left queued");
        let sites = self.recs.flags.iter().zip(&self.arch.text.0);
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
