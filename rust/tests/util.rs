// SPDX-License-Identifier: GPL-2.0

//! Small helpers shared by the tests: a seeded PRNG and uncaptured notes;
//! and the parts of a simulated kernel that the update pass runs on: a
//! record table in a vector ([`VecRecords`], made the pass's `Records` by
//! [`Walk`]), a simulated x86 ([`SimX86`]) and a store of plans
//! ([`VecStore`]). The update pass tests (`update`), the whole-kernel
//! simulation (`sim`) and the criterion benches all run on these.
//!
//! The fuzz target and the benches compile this file too (`#[path]`); it
//! reaches the core as `crate::rfcore`, which those crates provide with a
//! `use rftrace::rfcore` at their root.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::format;
use std::io::Write;
use std::rc::Rc;
use std::string::String;
use std::vec::Vec;

use crate::rfcore::arch::x86::{self as x86c, X86Change, INSN_SIZE};
use crate::rfcore::dirty::Find;
use crate::rfcore::flags::RecFlags;
use crate::rfcore::record::{Decision, Update};
use crate::rfcore::select::Need;
use crate::rfcore::update::{Arch, Checked, Facts, Failure, Records, Store};

/// Writes one line to stderr, past libtest's output capture, so that a plain
/// `cargo test` shows how many cases a test checked.
pub fn note(msg: &str) {
    let mut err = std::io::stderr().lock();
    // A note that cannot be written is not a test failure.
    let _ = writeln!(err, "    note: {msg}");
}

/// The seed of the randomised tests: `RFTRACE_SEED` (decimal or 0x-hex) if
/// set, else `default`, so that a failing run can be replayed.
pub fn seed(default: u64) -> u64 {
    match std::env::var("RFTRACE_SEED") {
        Ok(s) => {
            let s = s.trim();
            let parsed = match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("RFTRACE_SEED={s:?} is not a number"))
        }
        Err(_) => default,
    }
}

/// SplitMix64: tiny, fast, and reproducible from its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the tiny modulo bias does not matter here.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        self.next_u64() % n
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    pub fn bool(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

// ---------------------------------------------------------------------
// The parts of a simulated kernel the update pass runs on.

/// What a simulated arch or record table saw, in order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ev {
    /// The check read the instruction at the address.
    Read(u64),
    /// A record's flags were stored.
    Store(usize),
    /// A change of the record at the address was written (queued on x86).
    Write(u64),
    /// The writes so far were made live.
    Flush,
}

/// An event log, shared by the record table and the arch of one kernel.
pub type Log = Rc<RefCell<Vec<Ev>>>;

/// A record table kept in a vector, as the simulated kernels keep theirs:
/// record `i` is index `i`, walked in index order. What the kernel answers
/// about a record (its targets, its unique ops) and what it does with a
/// failure are its own; [`Walk`] makes it the [`Records`] of the update
/// pass.
pub trait VecRecords {
    /// Number of records.
    fn count(&self) -> usize;
    /// Call-site address and flags word of record `rec`.
    fn site(&self, rec: usize) -> (u64, u64);
    /// Stores the flags word of record `rec`.
    fn set_flags(&mut self, rec: usize, flags: u64);
    /// [`Records::gather`].
    fn facts(&mut self, rec: usize, need: Need) -> Facts;
    /// [`Records::unique`].
    fn unique(&mut self, rec: usize) -> Option<u64>;
    /// [`Records::shadow`]; nothing by default.
    fn shadow(&mut self, _rec: usize, _enable: bool, _decision: &Decision, _facts: Option<&Facts>) {
    }
    /// [`Records::report`].
    fn report(&mut self, rec: usize, update: Update, failure: &Failure);
    /// [`Records::quarantine`].
    fn quarantine(&mut self, rec: usize, update: Update, failure: &Failure);
    /// [`Records::literal_set`]; no sets by default.
    fn literal_set(&mut self, _rec: usize) -> Option<u64> {
        None
    }
    /// [`Records::literal_due`]; never by default.
    fn literal_due(&mut self, _rec: usize) -> bool {
        false
    }
    /// [`Records::literal_written`]; nothing by default.
    fn literal_written(&mut self, _rec: usize, _set: u64) {}
}

/// The [`Records`] of a [`VecRecords`], for one call into the update pass.
pub struct Walk<'a, T>(pub &'a mut T);

impl<T: VecRecords> Records for Walk<'_, T> {
    type Rec = usize;
    type Cursor = usize;

    fn first(&mut self) -> Option<usize> {
        (self.0.count() > 0).then_some(0)
    }

    fn next(&mut self, at: usize) -> Option<usize> {
        (at + 1 < self.0.count()).then_some(at + 1)
    }

    fn record(&self, at: usize) -> usize {
        at
    }

    fn ip(&self, rec: usize) -> u64 {
        self.0.site(rec).0
    }

    fn flags(&self, rec: usize) -> RecFlags {
        RecFlags::from_raw(self.0.site(rec).1)
    }

    fn store_flags(&mut self, rec: usize, flags: RecFlags) {
        self.0.set_flags(rec, flags.raw());
    }

    fn gather(&mut self, rec: usize, need: Need) -> Facts {
        self.0.facts(rec, need)
    }

    fn unique(&mut self, rec: usize) -> Option<u64> {
        self.0.unique(rec)
    }

    fn shadow(&mut self, rec: usize, enable: bool, decision: &Decision, facts: Option<&Facts>) {
        self.0.shadow(rec, enable, decision, facts);
    }

    fn report(&mut self, rec: usize, update: Update, failure: &Failure) {
        self.0.report(rec, update, failure);
    }

    fn quarantine(&mut self, rec: usize, update: Update, failure: &Failure) {
        self.0.quarantine(rec, update, failure);
    }

    fn literal_set(&mut self, rec: usize) -> Option<u64> {
        self.0.literal_set(rec)
    }

    fn literal_due(&mut self, rec: usize) -> bool {
        self.0.literal_due(rec)
    }

    fn literal_written(&mut self, rec: usize, set: u64) {
        self.0.literal_written(rec, set);
    }
}

impl<T: VecRecords> Find for Walk<'_, T> {
    fn find(&mut self, ip: u64) -> Option<usize> {
        (0..self.0.count()).find(|&i| self.0.site(i).0 == ip)
    }
}

/// The plans of one pass, in a vector, with room for `room` of them: a push
/// past that fails, as an allocation can, and the pass falls back.
#[derive(Debug)]
pub struct VecStore<C> {
    /// The plans pushed since the last clear, in order.
    pub items: Vec<(usize, Checked<C>, Decision)>,
    /// How many plans fit.
    pub room: usize,
}

impl<C> VecStore<C> {
    /// A store with room for any number of plans, and space for `n` before
    /// its vector grows.
    pub fn with_capacity(n: usize) -> Self {
        VecStore {
            items: Vec::with_capacity(n),
            room: usize::MAX,
        }
    }
}

impl<C> Default for VecStore<C> {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl<C: Copy> Store<usize, C> for VecStore<C> {
    fn push(&mut self, rec: usize, change: Checked<C>, decision: Decision) -> bool {
        if self.items.len() >= self.room {
            return false;
        }
        self.items.push((rec, change, decision));
        true
    }

    fn get(&self, i: usize) -> Option<(usize, &Checked<C>, Decision)> {
        self.items
            .get(i)
            .map(|(rec, change, decision)| (*rec, change, *decision))
    }

    fn clear(&mut self) {
        self.items.clear();
    }
}

/// `__fentry__`, which the compiler's call sites call before boot.
pub const FENTRY: u64 = 0xffff_ffff_81f0_0000;

/// Where a [`SimX86`] keeps its call sites.
pub trait X86Text {
    /// The instruction at `ip`, if `ip` is a call site.
    fn site(&self, ip: u64) -> Option<&[u8; INSN_SIZE]>;
    /// The instruction at `ip`, to write, if `ip` is a call site.
    fn site_mut(&mut self, ip: u64) -> Option<&mut [u8; INSN_SIZE]>;
}

/// The call sites by address.
impl X86Text for BTreeMap<u64, [u8; INSN_SIZE]> {
    fn site(&self, ip: u64) -> Option<&[u8; INSN_SIZE]> {
        self.get(&ip)
    }

    fn site_mut(&mut self, ip: u64) -> Option<&mut [u8; INSN_SIZE]> {
        self.get_mut(&ip)
    }
}

/// A simulated x86: the text and the text-poke queue, as the update pass
/// sees them. It plans with the core's `x86::plan_update`, checks a change
/// against the text as the kernel does (`X86Change::verify`), and queues
/// the writes until a flush makes them live. A breach of the [`Arch`]
/// contract (a site that is not one, more than `BATCH_MAX` writes queued,
/// writes not ascending) panics, or is collected in `errs`.
#[derive(Clone, Debug, Default)]
pub struct SimX86<T = BTreeMap<u64, [u8; INSN_SIZE]>> {
    /// The call sites.
    pub text: T,
    /// A kernel with the jump bit (`CONFIG_DYNAMIC_FTRACE_WITH_JMP`): bit 0
    /// of a direct-call target asks for a `JMP`.
    pub jmp: bool,
    /// The writes queued since the last flush, in order.
    pub queue: Vec<(u64, [u8; INSN_SIZE])>,
    /// The sites each flush made live, in order.
    pub flushes: Vec<Vec<u64>>,
    /// Where a read faults.
    pub fault_at: Option<u64>,
    /// Where a write fails.
    pub fail_write_at: Option<u64>,
    /// Where reads, writes and flushes are logged, if anywhere.
    pub log: Option<Log>,
    /// The contract breaches met, when they are collected; with `None` a
    /// breach panics.
    pub errs: Option<Vec<String>>,
}

impl<T: X86Text> SimX86<T> {
    /// An x86 with the call sites in `text`, with the jump bit or not, that
    /// panics on a breach of the contract and logs nothing.
    pub fn new(text: T, jmp: bool) -> Self {
        SimX86 {
            text,
            jmp,
            queue: Vec::new(),
            flushes: Vec::new(),
            fault_at: None,
            fail_write_at: None,
            log: None,
            errs: None,
        }
    }

    fn event(&self, ev: Ev) {
        if let Some(log) = &self.log {
            log.borrow_mut().push(ev);
        }
    }

    fn breach(&mut self, msg: String) {
        match &mut self.errs {
            Some(errs) => errs.push(msg),
            None => panic!("{msg}"),
        }
    }
}

impl<T: X86Text> Arch for SimX86<T> {
    type Change = X86Change;
    const BATCH_MAX: usize = 256;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<X86Change, Failure> {
        x86c::plan_update(facts, decision, self.jmp)
    }

    fn plan_init(&mut self, ip: u64) -> Result<X86Change, Failure> {
        x86c::plan_init(ip, FENTRY)
    }

    fn call_site(entry: u64) -> Option<u64> {
        x86c::call_site(entry)
    }

    fn ip(change: &X86Change) -> u64 {
        change.ip
    }

    fn check(&mut self, change: &X86Change) -> Result<(), Failure> {
        let ip = change.ip;
        self.event(Ev::Read(ip));
        if self.fault_at == Some(ip) {
            return Err(Failure::Fault);
        }
        match self.text.site(ip) {
            Some(actual) => change.verify(actual),
            None => {
                self.breach(format!("read of {ip:#x}: not a site"));
                Err(Failure::Fault)
            }
        }
    }

    fn write(
        &mut self,
        change: &Checked<X86Change>,
        _literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure> {
        let ip = change.ip;
        if self.text.site(ip).is_none() {
            self.breach(format!("write queued at {ip:#x}: not a site"));
        }
        if self.queue.len() >= Self::BATCH_MAX {
            self.breach("more than BATCH_MAX writes queued".into());
        }
        if let Some(&(last, _)) = self.queue.last() {
            if ip <= last {
                self.breach(format!("writes not ascending: {ip:#x} after {last:#x}"));
            }
        }
        if self.fail_write_at == Some(ip) {
            return Err(Failure::Write);
        }
        self.event(Ev::Write(ip));
        self.queue.push((ip, change.new));
        Ok(())
    }

    fn flush(&mut self) {
        self.event(Ev::Flush);
        let mut ips = Vec::with_capacity(self.queue.len());
        for (ip, new) in self.queue.drain(..) {
            if let Some(site) = self.text.site_mut(ip) {
                *site = new;
            }
            ips.push(ip);
        }
        self.flushes.push(ips);
    }
}
