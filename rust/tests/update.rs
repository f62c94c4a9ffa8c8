// SPDX-License-Identifier: GPL-2.0

//! The update pass (`rfcore::update`) on a simulated kernel, for a
//! simulated x86 and a simulated arm64.
//!
//! [`Table`] is a record table over a vector of records and an ops list
//! (ops `i` traces site `i` only, with the site's trampoline), gathering
//! with the real `select::gather`; the pass walks it through
//! `util::Walk`. The x86 is `util::SimX86`: a map of 5-byte sites with a
//! batching queue that checks the ascending / `BATCH_MAX` contract;
//! [`Arm64`] is over instruction words and 8-byte literals, written at
//! once. Both inject read faults and write failures.
//! The expected text of every site is computed here, from the record's
//! flags, with encoders of this file's own; every test runs on both arches.

use std::collections::BTreeMap;
use std::format;
use std::rc::Rc;
use std::vec;
use std::vec::Vec;

use super::model::{self, bit, has, m};
use super::util::{note, seed, Ev, Log, Rng, SimX86 as X86, VecRecords, VecStore, Walk, FENTRY};
use crate::rfcore::arch::arm64::{self as a64, Arm64Change, LayoutError, ReachError, Write};
use crate::rfcore::arch::x86::{self as x86c, EncodeError};
use crate::rfcore::dirty::{Dirty, Scope, Scoped};
use crate::rfcore::flags::RecFlags;
use crate::rfcore::record::{Decision, Update};
use crate::rfcore::select::{self, Callers, Choice, Need, OpsList};
use crate::rfcore::update::{
    single, update_all, update_one, Arch, Checked, Counts, EncodeFault, Errno, Facts, Failure,
    Insn, Single, Verdict,
};

#[derive(Clone, Copy, Debug)]
struct Site {
    ip: u64,
    flags: u64,
    /// The trampoline of the site's ops.
    tramp: u64,
    /// The direct trampoline; on x86 bit 0 set means "jump" on a jmp-bit
    /// kernel.
    direct: u64,
}

const OPS_BASE: u64 = 0xffff_0000_0100_0000;

/// The address of ops `i`, the one whose filter is site `i`.
fn ops_addr(i: usize) -> u64 {
    OPS_BASE + i as u64 * 0x100
}

/// Target from the request bits (`ftrace_get_addr_new()`), by the rules.
fn target_new(s: &Site, caller: u64, regs_caller: u64) -> u64 {
    let count = s.flags & model::COUNT_MASK;
    if has(s.flags, bit::DIRECT) && count == 1 {
        s.direct
    } else if has(s.flags, bit::TRAMP) {
        s.tramp
    } else if has(s.flags, bit::REGS) {
        regs_caller
    } else {
        caller
    }
}

/// Target from the `_EN` bits (`ftrace_get_addr_curr()`), by the rules.
fn target_curr(s: &Site, caller: u64, regs_caller: u64) -> u64 {
    if has(s.flags, bit::DIRECT_EN) {
        s.direct
    } else if has(s.flags, bit::TRAMP_EN) {
        s.tramp
    } else if has(s.flags, bit::REGS_EN) {
        regs_caller
    } else {
        caller
    }
}

// ---------------------------------------------------------------------
// The record table and its ops list.

/// Ops `i` covers site `i` only and has the site's trampoline.
struct Ops<'a> {
    recs: &'a [Site],
    heads: &'a mut u64,
}

impl OpsList for Ops<'_> {
    type Ops = usize;
    fn head(&mut self) -> Option<usize> {
        *self.heads += 1;
        (!self.recs.is_empty()).then_some(0)
    }
    fn next(&mut self, op: usize) -> Option<usize> {
        (op + 1 < self.recs.len()).then_some(op + 1)
    }
    fn trampoline(&mut self, op: usize) -> u64 {
        self.recs[op].tramp
    }
    fn adding(&mut self, _: usize) -> bool {
        false
    }
    fn modifying(&mut self, _: usize) -> bool {
        false
    }
    fn covers(&mut self, op: usize, ip: u64) -> bool {
        self.recs[op].ip == ip
    }
    fn covered(&mut self, op: usize, ip: u64) -> bool {
        self.recs[op].ip == ip
    }
    fn removed(&mut self) -> Option<usize> {
        None
    }
}

struct Calls<'a> {
    recs: &'a [Site],
    caller: u64,
    regs_caller: u64,
}

impl Callers for Calls<'_> {
    fn caller(&self) -> u64 {
        self.caller
    }
    fn regs_caller(&self) -> u64 {
        self.regs_caller
    }
    fn direct(&mut self, ip: u64) -> u64 {
        self.recs
            .iter()
            .find(|s| s.ip == ip)
            .map_or(0, |s| s.direct)
    }
}

struct Table {
    recs: Vec<Site>,
    caller: u64,
    regs_caller: u64,
    log: Log,
    /// `head()` calls of the ops list.
    heads: u64,
    /// `gather()` calls.
    gathers: u64,
    /// `unique()` calls.
    uniques: u64,
    shadows: Vec<(usize, bool, Decision, Option<Facts>)>,
    reports: Vec<(usize, Update, Failure)>,
    quarantines: Vec<(usize, Update, Failure)>,
    /// Problems the selection met.
    problems: u64,
    /// The published ops set of a record's site ([`Records::literal_set`]).
    sets: BTreeMap<usize, u64>,
    /// The set a record's literal names, as the pass reported it written
    /// ([`Records::literal_written`]); absent: none.
    named: BTreeMap<usize, u64>,
}

impl Table {
    fn ops_and_calls(&mut self) -> (Ops<'_>, Calls<'_>) {
        (
            Ops {
                recs: &self.recs,
                heads: &mut self.heads,
            },
            Calls {
                recs: &self.recs,
                caller: self.caller,
                regs_caller: self.regs_caller,
            },
        )
    }
}

impl VecRecords for Table {
    fn count(&self) -> usize {
        self.recs.len()
    }
    fn site(&self, rec: usize) -> (u64, u64) {
        (self.recs[rec].ip, self.recs[rec].flags)
    }
    fn set_flags(&mut self, rec: usize, flags: u64) {
        self.log.borrow_mut().push(Ev::Store(rec));
        self.recs[rec].flags = flags;
    }
    fn facts(&mut self, rec: usize, need: Need) -> Facts {
        self.gathers += 1;
        let (ip, flags) = (self.recs[rec].ip, RecFlags::from_raw(self.recs[rec].flags));
        let (mut ops, mut calls) = self.ops_and_calls();
        let g = select::gather(&mut ops, &mut calls, ip, flags, need);
        let problem = |c: Option<Choice>| u64::from(c.is_some_and(|c| c.problem.is_some()));
        self.problems += problem(g.new) + problem(g.curr);
        Facts::from_gathered(ip, flags, &g, ops_addr)
    }
    fn unique(&mut self, rec: usize) -> Option<u64> {
        self.uniques += 1;
        let ip = self.recs[rec].ip;
        let (mut ops, _) = self.ops_and_calls();
        select::unique_ops(&mut ops, ip).map(ops_addr)
    }
    fn shadow(&mut self, rec: usize, enable: bool, decision: &Decision, facts: Option<&Facts>) {
        self.shadows.push((rec, enable, *decision, facts.copied()));
    }
    fn report(&mut self, rec: usize, update: Update, failure: &Failure) {
        self.reports.push((rec, update, *failure));
    }
    fn quarantine(&mut self, rec: usize, update: Update, failure: &Failure) {
        self.quarantines.push((rec, update, *failure));
    }
    fn literal_set(&mut self, rec: usize) -> Option<u64> {
        self.sets.get(&rec).copied()
    }
    fn literal_due(&mut self, rec: usize) -> bool {
        self.sets.get(&rec).copied().unwrap_or(0) != self.named.get(&rec).copied().unwrap_or(0)
    }
    fn literal_written(&mut self, rec: usize, set: u64) {
        if set == 0 {
            self.named.remove(&rec);
        } else {
            self.named.insert(rec, set);
        }
    }
}

// ---------------------------------------------------------------------
// The simulated arches.

/// What the tests need of a simulated arch besides `Arch`.
trait SimArch: Arch + Sized {
    const NAME: &'static str;
    const CALLER: u64;
    const REGS_CALLER: u64;
    /// `variant`: x86 with the jump bit; arm64 without a module PLT.
    fn create(log: Log, variant: bool) -> Self;
    /// `n` records at ascending kernel-text addresses, no users.
    fn sites(n: usize, variant: bool) -> Vec<Site>;
    /// The ip of the `j`-th record in module text.
    fn module_ip(j: usize) -> u64;
    /// Makes every site an initialised NOP.
    fn reset(&mut self, recs: &[Site]);
    /// What the site at `ip` holds: (instruction, literal or 0).
    fn state(&self, ip: u64) -> (u64, u64);
    /// Sets what the site at `ip` holds.
    fn set_state(&mut self, ip: u64, st: (u64, u64));
    /// What record `i`'s flags say its site holds.
    fn expected(&self, s: &Site, i: usize) -> (u64, u64);
    /// Every word of text and every literal.
    fn snapshot(&self) -> Vec<(u64, u64)>;
    /// Where a read faults.
    fn fault_at(&mut self) -> &mut Option<u64>;
    /// Where an instruction write fails.
    fn fail_write_at(&mut self) -> &mut Option<u64>;
    /// Flips byte `byte` of the instruction at `ip`; returns what was
    /// there and what is now.
    fn corrupt(&mut self, ip: u64, byte: usize) -> (Insn, Insn);
    /// The ips of each flush, in order.
    fn flushes(&mut self) -> &mut Vec<Vec<u64>>;
    /// Writes (x86: queued) since the last flush.
    fn pending(&self) -> usize;
    /// Bytes in an instruction.
    const INSN_LEN: usize;
}

// x86 -----------------------------------------------------------------

const X86_NOP: [u8; 5] = [0x0f, 0x1f, 0x44, 0x00, 0x00];

/// `CALL rel32` / `JMP rel32` at `ip` to `dest`, encoded here.
fn x86_insn(ip: u64, dest: u64, jmp: bool) -> [u8; 5] {
    let d = dest.wrapping_sub(ip.wrapping_add(5)) as i64;
    assert!(
        d >= i64::from(i32::MIN) && d <= i64::from(i32::MAX),
        "test setup: {dest:#x} out of range of {ip:#x}"
    );
    let r = (d as i32).to_le_bytes();
    [if jmp { 0xe9 } else { 0xe8 }, r[0], r[1], r[2], r[3]]
}

/// The call at `ip` to `target`; on a jump-bit kernel only a direct-call
/// target reads bit 0 as "jump".
fn x86_call(jmp_bit: bool, ip: u64, target: u64, direct: bool) -> [u8; 5] {
    if jmp_bit && direct && target & 1 == 1 {
        x86_insn(ip, target & !1, true)
    } else {
        x86_insn(ip, target, false)
    }
}

fn x86_word(b: [u8; 5]) -> u64 {
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], 0, 0, 0])
}

fn x86_bytes(w: u64) -> [u8; 5] {
    let b = w.to_le_bytes();
    [b[0], b[1], b[2], b[3], b[4]]
}

impl SimArch for X86 {
    const NAME: &'static str = "x86";
    const CALLER: u64 = 0xffff_ffff_81e0_0000;
    const REGS_CALLER: u64 = 0xffff_ffff_81e0_0100;
    const INSN_LEN: usize = 5;

    fn create(log: Log, jmp: bool) -> Self {
        X86 {
            log: Some(log),
            ..X86::new(BTreeMap::new(), jmp)
        }
    }
    fn sites(n: usize, jmp: bool) -> Vec<Site> {
        (0..n as u64)
            .map(|i| Site {
                ip: 0xffff_ffff_8100_0000 + i * 0x40 + (i % 7),
                flags: 0,
                tramp: 0xffff_ffff_c000_0000 + (i % 5) * 0x1000,
                direct: 0xffff_ffff_a000_0000 + i * 0x100 + u64::from(jmp),
            })
            .collect()
    }
    fn module_ip(j: usize) -> u64 {
        0xffff_ffff_c0a0_0000 + j as u64 * 0x33
    }
    fn reset(&mut self, recs: &[Site]) {
        self.text = recs.iter().map(|s| (s.ip, X86_NOP)).collect();
    }
    fn state(&self, ip: u64) -> (u64, u64) {
        (x86_word(self.text[&ip]), 0)
    }
    fn set_state(&mut self, ip: u64, st: (u64, u64)) {
        self.text.insert(ip, x86_bytes(st.0));
    }
    fn expected(&self, s: &Site, _: usize) -> (u64, u64) {
        let b = if has(s.flags, bit::ENABLED) {
            x86_call(
                self.jmp,
                s.ip,
                target_curr(s, Self::CALLER, Self::REGS_CALLER),
                has(s.flags, bit::DIRECT_EN),
            )
        } else {
            X86_NOP
        };
        (x86_word(b), 0)
    }
    fn snapshot(&self) -> Vec<(u64, u64)> {
        self.text
            .iter()
            .map(|(&ip, &b)| (ip, x86_word(b)))
            .collect()
    }
    fn fault_at(&mut self) -> &mut Option<u64> {
        &mut self.fault_at
    }
    fn fail_write_at(&mut self) -> &mut Option<u64> {
        &mut self.fail_write_at
    }
    fn corrupt(&mut self, ip: u64, byte: usize) -> (Insn, Insn) {
        let before = self.text[&ip];
        let mut after = before;
        after[byte] ^= 0x5a;
        self.text.insert(ip, after);
        (Insn::x86(before), Insn::x86(after))
    }
    fn flushes(&mut self) -> &mut Vec<Vec<u64>> {
        &mut self.flushes
    }
    fn pending(&self) -> usize {
        self.queue.len()
    }
}

// arm64 ---------------------------------------------------------------

const A64_NOP: u32 = 0xd503_201f;
const A64_MOV_X9_LR: u32 = 0xaa1e_03e9;
const NOP_OPS: u64 = 0xffff_8000_8ff0_0000;
const LIST_OPS: u64 = 0xffff_8000_8ff0_0100;
const A64_MODULES: u64 = 0xffff_8000_c0a0_0000;
const A64_PLT: u64 = 0xffff_8000_c0b0_0000;
const A64_FAR: u64 = 0xffff_8000_f000_0000;

/// `BL dest` at `ip`, encoded here.
fn bl(ip: u64, dest: u64) -> u32 {
    let d = dest.wrapping_sub(ip) as i64;
    assert!(
        (-(128 << 20)..128 << 20).contains(&d) && d % 4 == 0,
        "test setup: {dest:#x} out of reach of {ip:#x}"
    );
    0x9400_0000 | ((d >> 2) as u32 & 0x03ff_ffff)
}

/// Whether a `BL` at `ip` can reach `dest`.
fn bl_reaches(ip: u64, dest: u64) -> bool {
    let d = dest.wrapping_sub(ip) as i64;
    dest != 0 && dest.is_multiple_of(4) && (-(128 << 20)..128 << 20).contains(&d)
}

struct Arm64 {
    plt: bool,
    words: BTreeMap<u64, u32>,
    literals: BTreeMap<u64, u64>,
    written: Vec<u64>,
    flushes: Vec<Vec<u64>>,
    fault_at: Option<u64>,
    fail_write_at: Option<u64>,
    log: Log,
}

impl Arm64 {
    fn plt_for(&self, ip: u64) -> Option<u64> {
        (self.plt && ip >= A64_MODULES).then_some(A64_PLT)
    }

    /// Where a `BL` at `ip` to `target` goes, by the rules: the target, else
    /// the caller, else the module PLT.
    fn reach(&self, ip: u64, target: u64) -> u64 {
        if bl_reaches(ip, target) {
            target
        } else if target != Self::CALLER && bl_reaches(ip, Self::CALLER) {
            Self::CALLER
        } else {
            self.plt_for(ip).expect("test setup: no PLT")
        }
    }
}

impl Arch for Arm64 {
    type Change = Arm64Change;
    const BATCH_MAX: usize = usize::MAX;
    const CALL_OPS: bool = true;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<Arm64Change, Failure> {
        a64::plan_update(facts, decision, false, Self::CALLER, self.plt_for(facts.ip))
    }
    fn plan_init(&mut self, ip: u64) -> Result<Arm64Change, Failure> {
        a64::plan_init(ip, false)
    }
    fn plan_literal(&mut self, facts: &Facts, decision: &Decision) -> Result<Arm64Change, Failure> {
        a64::plan_literal(facts, decision, false, Self::CALLER, self.plt_for(facts.ip))
    }
    fn literal_holds(
        &mut self,
        ip: u64,
        flags: RecFlags,
        unique: Option<u64>,
        set: Option<u64>,
    ) -> Option<(u64, u64)> {
        let now = self
            .literals
            .get(&a64::literal_addr(ip))
            .copied()
            .unwrap_or(0);
        Some((
            now,
            a64::literal_ops(flags, unique, set).addr(NOP_OPS, LIST_OPS),
        ))
    }
    fn call_site(entry: u64) -> Option<u64> {
        a64::call_site(entry, false)
    }
    fn ip(change: &Arm64Change) -> u64 {
        change.ip
    }
    fn check(&mut self, change: &Arm64Change) -> Result<(), Failure> {
        for (ip, old) in change.replaced().into_iter().flatten() {
            self.log.borrow_mut().push(Ev::Read(ip));
            if self.fault_at == Some(ip) {
                return Err(Failure::Fault);
            }
            let actual = *self
                .words
                .get(&ip)
                .unwrap_or_else(|| panic!("read of {ip:#x}: not a site"));
            a64::verify_word(old, actual)?;
        }
        Ok(())
    }
    fn write(
        &mut self,
        change: &Checked<Arm64Change>,
        literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure> {
        for w in change.plan.writes {
            match w {
                Write::Literal { addr, ops } => {
                    assert!(self.literals.contains_key(&addr), "literal {addr:#x}");
                    self.literals.insert(addr, ops.addr(NOP_OPS, LIST_OPS));
                    literal(ops.set().unwrap_or(0));
                }
                Write::Insn { ip, new, .. } => {
                    assert!(self.words.contains_key(&ip), "insn {ip:#x}");
                    if self.fail_write_at == Some(ip) {
                        return Err(Failure::Write);
                    }
                    self.words.insert(ip, new);
                }
            }
        }
        self.log.borrow_mut().push(Ev::Write(change.ip));
        self.written.push(change.ip);
        Ok(())
    }
    fn flush(&mut self) {
        self.log.borrow_mut().push(Ev::Flush);
        self.flushes.push(std::mem::take(&mut self.written));
    }
}

impl SimArch for Arm64 {
    const NAME: &'static str = "arm64";
    const CALLER: u64 = 0xffff_8000_81e0_0000;
    const REGS_CALLER: u64 = 0xffff_8000_81e0_0100;
    const INSN_LEN: usize = 4;

    fn create(log: Log, no_plt: bool) -> Self {
        Arm64 {
            plt: !no_plt,
            words: BTreeMap::new(),
            literals: BTreeMap::new(),
            written: Vec::new(),
            flushes: Vec::new(),
            fault_at: None,
            fail_write_at: None,
            log,
        }
    }
    fn sites(n: usize, _: bool) -> Vec<Site> {
        (0..n as u64)
            .map(|i| Site {
                ip: 0xffff_8000_8100_000c + i * 0x40,
                flags: 0,
                tramp: 0xffff_8000_8200_0000 + (i % 5) * 0x1000,
                // Some direct trampolines out of reach: the caller then.
                direct: if i % 7 == 3 {
                    A64_FAR + i * 0x100
                } else {
                    0xffff_8000_8300_0000 + i * 0x100
                },
            })
            .collect()
    }
    fn module_ip(j: usize) -> u64 {
        A64_MODULES + 0xc + j as u64 * 0x40
    }
    fn reset(&mut self, recs: &[Site]) {
        self.words.clear();
        self.literals.clear();
        for s in recs {
            self.words.insert(s.ip - 4, A64_MOV_X9_LR);
            self.words.insert(s.ip, A64_NOP);
            self.literals.insert(s.ip - 12, NOP_OPS);
        }
    }
    fn state(&self, ip: u64) -> (u64, u64) {
        (u64::from(self.words[&ip]), self.literals[&(ip - 12)])
    }
    fn set_state(&mut self, ip: u64, st: (u64, u64)) {
        self.words.insert(ip, st.0 as u32);
        self.literals.insert(ip - 12, st.1);
    }
    fn expected(&self, s: &Site, i: usize) -> (u64, u64) {
        if !has(s.flags, bit::ENABLED) {
            return (u64::from(A64_NOP), NOP_OPS);
        }
        let target = self.reach(s.ip, target_curr(s, Self::CALLER, Self::REGS_CALLER));
        let literal = if has(s.flags, bit::CALL_OPS_EN) {
            ops_addr(i)
        } else {
            LIST_OPS
        };
        (u64::from(bl(s.ip, target)), literal)
    }
    fn snapshot(&self) -> Vec<(u64, u64)> {
        let words = self.words.iter().map(|(&a, &w)| (a, u64::from(w)));
        let lits = self.literals.iter().map(|(&a, &l)| (a | 1 << 63, l));
        words.chain(lits).collect()
    }
    fn fault_at(&mut self) -> &mut Option<u64> {
        &mut self.fault_at
    }
    fn fail_write_at(&mut self) -> &mut Option<u64> {
        &mut self.fail_write_at
    }
    fn corrupt(&mut self, ip: u64, byte: usize) -> (Insn, Insn) {
        let before = self.words[&ip];
        let after = before ^ (0x5a << (8 * byte));
        self.words.insert(ip, after);
        (Insn::word(before), Insn::word(after))
    }
    fn flushes(&mut self) -> &mut Vec<Vec<u64>> {
        &mut self.flushes
    }
    fn pending(&self) -> usize {
        self.written.len()
    }
}

// ---------------------------------------------------------------------
// A simulated kernel: records, an arch, a store.

struct World<A: SimArch> {
    t: Table,
    a: A,
    store: VecStore<A::Change>,
    log: Log,
}

impl<A: SimArch> World<A> {
    fn new(recs: Vec<Site>, variant: bool) -> Self {
        for w in recs.windows(2) {
            assert_ne!(w[0].ip, w[1].ip, "test setup: duplicate ip");
        }
        let log: Log = Rc::default();
        let mut a = A::create(log.clone(), variant);
        a.reset(&recs);
        World {
            t: Table {
                recs,
                caller: A::CALLER,
                regs_caller: A::REGS_CALLER,
                log: log.clone(),
                heads: 0,
                gathers: 0,
                uniques: 0,
                shadows: Vec::new(),
                reports: Vec::new(),
                quarantines: Vec::new(),
                problems: 0,
                sets: BTreeMap::new(),
                named: BTreeMap::new(),
            },
            a,
            store: VecStore::default(),
            log,
        }
    }

    fn kernel(n: usize, variant: bool) -> Self {
        World::new(A::sites(n, variant), variant)
    }

    /// Moves the last `k` records into module text.
    fn modules(&mut self, k: usize) {
        let n = self.t.recs.len();
        for (j, r) in self.t.recs[n - k..].iter_mut().enumerate() {
            r.ip = A::module_ip(j);
        }
        self.a.reset(&self.t.recs);
    }

    fn flags_vec(&self) -> Vec<u64> {
        self.t.recs.iter().map(|s| s.flags).collect()
    }

    fn expected(&self, i: usize) -> (u64, u64) {
        self.a.expected(&self.t.recs[i], i)
    }

    fn state(&self, i: usize) -> (u64, u64) {
        self.a.state(self.t.recs[i].ip)
    }

    /// Every site holds what its record says, and nothing is pending.
    fn check_text(&self) {
        assert_eq!(self.a.pending(), 0, "writes left unflushed");
        for i in 0..self.t.recs.len() {
            assert_eq!(
                self.state(i),
                self.expected(i),
                "{}: site {i} ({:#x}) flags {:#010x}",
                A::NAME,
                self.t.recs[i].ip,
                self.t.recs[i].flags
            );
        }
    }

    fn pass(&mut self, enable: bool, counts: &mut Counts) -> Result<(), Failure> {
        update_all(
            &mut Walk(&mut self.t),
            &mut self.a,
            &mut self.store,
            enable,
            counts,
        )
    }

    fn wrote_any(&self) -> bool {
        self.log
            .borrow()
            .iter()
            .any(|e| matches!(e, Ev::Write(_) | Ev::Flush))
    }

    fn reads(&self) -> Vec<u64> {
        self.log
            .borrow()
            .iter()
            .filter_map(|e| match e {
                Ev::Read(ip) => Some(*ip),
                _ => None,
            })
            .collect()
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

/// Runs one pass with room for `room` plans and checks everything about
/// it against the model.
fn checked_pass<A: SimArch>(w: &mut World<A>, enable: bool, room: usize) -> Counts {
    let before = w.flags_vec();
    let snap_before: Vec<(u64, u64)> = (0..before.len()).map(|i| w.state(i)).collect();
    let planned: Vec<(u8, u64)> = before
        .iter()
        .map(|&f| model::check_record(f, enable))
        .collect();
    let flushes_before = w.a.flushes().len();
    let (gathers, uniques, heads) = (w.t.gathers, w.t.uniques, w.t.heads);
    w.log.borrow_mut().clear();
    w.t.shadows.clear();
    w.store.room = room;

    let mut counts = Counts::default();
    assert_eq!(w.pass(enable, &mut counts), Ok(()));
    assert!(w.t.reports.is_empty(), "{:?}", w.t.reports);

    let n = w.t.recs.len() as u64;
    let of = |code| planned.iter().filter(|p| p.0 == code).count() as u64;
    let changed = n - of(model::IGNORE);
    assert_eq!(counts.walked, n);
    assert_eq!(counts.make_call, of(model::MAKE_CALL));
    assert_eq!(counts.modify_call, of(model::MODIFY_CALL));
    assert_eq!(counts.make_nop, of(model::MAKE_NOP));
    assert_eq!(counts.failures, 0);
    assert_eq!(counts.patched(), changed);

    // One ops-list walk per change, two when the store ran out of room.
    let fell_back = (room as u64) < changed;
    assert_eq!(counts.fallbacks, u64::from(fell_back));
    let walks = if fell_back { 2 * changed } else { changed };
    assert_eq!(counts.gathers, walks);
    assert_eq!(w.t.gathers - gathers, walks);
    assert_eq!(w.t.uniques, uniques);
    assert!(w.t.heads - heads <= walks);

    // The comparator saw every record once, with facts exactly for changes.
    assert_eq!(w.t.shadows.len() as u64, n);
    for (i, &(rec, en, d, facts)) in w.t.shadows.iter().enumerate() {
        assert_eq!((rec, en), (i, enable));
        assert_eq!(d.update, update_of(planned[i].0));
        assert_eq!(d.flags.raw(), planned[i].1);
        assert_eq!(facts.is_some(), d.update != Update::Ignore, "record {i}");
        if let Some(f) = facts {
            let site = Site {
                flags: before[i],
                ..w.t.recs[i]
            };
            assert_eq!((f.ip, f.flags.raw()), (site.ip, before[i]));
            // Exactly the targets the update uses: the new one for a call,
            // the current one for a site that calls now.
            let calls = d.update != Update::MakeNop;
            let called = d.update != Update::MakeCall;
            let new = calls.then(|| target_new(&site, A::CALLER, A::REGS_CALLER));
            let curr = called.then(|| target_curr(&site, A::CALLER, A::REGS_CALLER));
            assert_eq!((f.new, f.curr), (new, curr), "record {i}");
            let unique = A::CALL_OPS && has(planned[i].1, bit::CALL_OPS_EN);
            assert_eq!(f.unique, unique.then(|| ops_addr(i)), "record {i}");
        }
    }

    // Batches: one flush each, none empty, at most BATCH_MAX, and for
    // ascending records as few as possible.
    let flushes = &w.a.flushes()[flushes_before..];
    assert_eq!(counts.batches, flushes.len() as u64);
    assert!(flushes
        .iter()
        .all(|f| !f.is_empty() && f.len() <= A::BATCH_MAX));
    assert_eq!(flushes.iter().map(Vec::len).sum::<usize>() as u64, changed);
    assert_eq!(counts.batches, changed.div_ceil(A::BATCH_MAX as u64));

    // The check pass read each changing site once, and no other; a pass
    // that fell back checks each again before writing it.
    let mut want_reads: Vec<u64> = (0..w.t.recs.len())
        .filter(|&i| planned[i].0 != model::IGNORE)
        .map(|i| w.t.recs[i].ip)
        .collect();
    if fell_back {
        want_reads.extend_from_within(..);
    }
    assert_eq!(w.reads(), want_reads);

    for i in 0..w.t.recs.len() {
        let (code, word) = planned[i];
        assert_eq!(
            w.t.recs[i].flags, word,
            "record {i}: {:#010x} enable={enable}",
            before[i]
        );
        assert_eq!(
            model::check_record(word, enable).0,
            model::IGNORE,
            "record {i}"
        );
        if code == model::IGNORE {
            assert_eq!(w.state(i), snap_before[i], "ignored site {i} written");
        }
    }
    w.check_text();
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

fn random_step(recs: &mut [Site], rng: &mut Rng) {
    let n = recs.len();
    let all = rng.chance(1, 40);
    let k = if all { n } else { 1 + rng.below(8) as usize };
    for j in 0..k {
        let i = if all { j } else { rng.below(n as u64) as usize };
        let mut w = recs[i].flags & !model::COUNT_MASK;
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
        recs[i].flags = w | count;
    }
}

fn random_passes<A: SimArch>(default_seed: u64) {
    let base = seed(default_seed);
    let mut passes = 0u64;
    let mut totals = Counts::default();
    let mut max_batches = 0;
    let mut starved = 0u64;
    let mut call_ops = 0u64;
    let (mut direct_shared, mut disabled_call) = (0u64, 0u64);
    for run in 0..4u64 {
        let s = base.wrapping_add(run);
        let mut rng = Rng::new(s);
        // x86: odd runs have the jump bit. arm64: always a module PLT.
        let variant = A::NAME == "x86" && run % 2 == 1;
        let mut w = World::<A>::kernel(300 + rng.below(300) as usize, variant);
        w.modules(50);
        for _ in 0..1500 {
            random_step(&mut w.t.recs, &mut rng);
            // Interesting states met on the way: a direct call whose ops
            // got company, and a call on a disabled record.
            for r in &w.t.recs {
                let count = r.flags & model::COUNT_MASK;
                direct_shared += u64::from(has(r.flags, bit::DIRECT_EN) && count > 1);
                disabled_call +=
                    u64::from(has(r.flags, bit::DISABLED) && has(r.flags, bit::ENABLED));
            }
            let enable = rng.chance(9, 10);
            // Now and then the store runs out of room.
            let room = if rng.chance(1, 10) {
                rng.below(8) as usize
            } else {
                usize::MAX
            };
            let c = checked_pass(&mut w, enable, room);
            max_batches = max_batches.max(c.batches);
            starved += c.fallbacks;
            call_ops +=
                w.t.recs
                    .iter()
                    .filter(|r| has(r.flags, bit::CALL_OPS_EN))
                    .count() as u64;
            totals.make_call += c.make_call;
            totals.modify_call += c.modify_call;
            totals.make_nop += c.make_nop;
            totals.batches += c.batches;
            totals.gathers += c.gathers;
            passes += 1;
        }
        // A disable pass leaves only NOPs.
        checked_pass(&mut w, false, usize::MAX);
        for i in 0..w.t.recs.len() {
            assert!(!has(w.t.recs[i].flags, bit::ENABLED));
        }
    }
    assert!(totals.make_call > 0 && totals.modify_call > 0 && totals.make_nop > 0);
    assert!(starved > 0 && call_ops > 0);
    assert!(
        direct_shared > 0 && disabled_call > 0,
        "{direct_shared} {disabled_call}"
    );
    if A::BATCH_MAX < 1000 {
        assert!(max_batches > 1, "no pass needed two batches");
    }
    note(&format!(
        "update {}: seed {base:#x} (RFTRACE_SEED): {passes} random passes, {} make_call, \
         {} modify_call, {} make_nop, {} batches, {} gathers, {starved} store fallbacks; \
         {direct_shared} shared direct calls and {disabled_call} disabled calls met",
        A::NAME,
        totals.make_call,
        totals.modify_call,
        totals.make_nop,
        totals.batches,
        totals.gathers
    ));
}

/// Passes over the records the steps changed ([`Dirty`], [`Scoped`])
/// leave every site of the table as its record says, as passes over every
/// record do, and visit the listed records only.
fn dirty_passes<A: SimArch>(default_seed: u64) {
    let base = seed(default_seed);
    let (mut listed, mut whole, mut cut) = (0u64, 0u64, 0u64);
    for run in 0..3u64 {
        let mut rng = Rng::new(base.wrapping_add(run));
        let variant = A::NAME == "x86" && run % 2 == 1;
        let mut w = World::<A>::kernel(200 + rng.below(200) as usize, variant);
        w.modules(40);
        let n = w.t.recs.len();
        let mut dirty = Dirty::new(Vec::new(), Vec::new(), n / 8);
        for _ in 0..800 {
            let before = w.flags_vec();
            random_step(&mut w.t.recs, &mut rng);
            for (r, &f) in w.t.recs.iter().zip(&before) {
                if r.flags != f {
                    dirty.touch(r.ip);
                }
            }
            // Now and then a record listed twice, or one that did not
            // change: visited once, and harmless.
            if rng.chance(1, 4) {
                dirty.touch(w.t.recs[rng.below(n as u64) as usize].ip);
            }
            let enable = rng.chance(9, 10);
            let was_whole = dirty.is_whole();
            let scope = dirty.scope(enable);
            let want = match scope {
                Scope::Whole => n as u64,
                Scope::Sites(ips) => ips.len() as u64,
            };
            if let Scope::Sites(ips) = scope {
                assert!(ips.windows(2).all(|p| p[0] < p[1]), "{ips:x?}");
            }
            let mut counts = Counts::default();
            let mut walk = Walk(&mut w.t);
            let r = update_all(
                &mut Scoped::new(&mut walk, scope),
                &mut w.a,
                &mut w.store,
                enable,
                &mut counts,
            );
            assert_eq!(r, Ok(()));
            assert_eq!(counts.walked, want);
            let visited: Vec<u64> = match scope {
                Scope::Sites(ips) => ips.to_vec(),
                Scope::Whole => Vec::new(),
            };
            let listed_pass = matches!(scope, Scope::Sites(_));
            dirty.done(enable);
            // What a sweep after the pass visits: what the pass visited.
            match dirty.touched() {
                Some((last, pending)) => {
                    assert!(listed_pass && enable);
                    assert_eq!(last, &visited[..]);
                    assert!(pending.is_empty());
                }
                None => assert!(!listed_pass || !enable),
            }
            assert_eq!(dirty.is_whole(), !enable);
            if was_whole {
                whole += 1;
            } else {
                listed += 1;
            }
            cut += u64::from(was_whole && enable);
            // Nothing left for a pass over every record to do.
            for (i, r) in w.t.recs.iter().enumerate() {
                let code = model::check_record(r.flags, enable).0;
                assert_eq!(code, model::IGNORE, "record {i} {:#x} left behind", r.ip);
            }
            w.check_text();
            assert!(w.t.reports.is_empty(), "{:?}", w.t.reports);
        }
    }
    assert!(listed > 0 && whole > 0 && cut > 0, "{listed} {whole} {cut}");
    note(&format!(
        "dirty {}: seed {base:#x}: {listed} passes over the listed records, {whole} whole",
        A::NAME
    ));
}

#[test]
fn x86_dirty_passes() {
    dirty_passes::<X86>(0x2026_1203);
}

#[test]
fn arm64_dirty_passes() {
    dirty_passes::<Arm64>(0x2026_1204);
}

#[test]
fn x86_random_passes() {
    random_passes::<X86>(0x2026_0f7b);
}

#[test]
fn arm64_random_passes() {
    random_passes::<Arm64>(0x2026_a064);
}

/// A world with a mix of pending updates of every kind, in address order:
/// `[make_call, ignore, modify_call, make_nop, make_call]`.
fn mixed<A: SimArch>(variant: bool) -> World<A> {
    let mut w = World::<A>::kernel(5, variant);
    let one = 1;
    // 1: already the plain call it wants.
    // 2: a call to the caller that now wants regs.
    // 3: a direct call with no users left.
    w.t.recs[1].flags = m(bit::ENABLED) | m(bit::TOUCHED) | one;
    w.t.recs[2].flags = m(bit::ENABLED) | m(bit::REGS) | one;
    w.t.recs[3].flags = m(bit::ENABLED) | m(bit::DIRECT_EN) | m(bit::DIRECT);
    for i in 1..4 {
        let e = w.expected(i);
        w.a.set_state(w.t.recs[i].ip, e);
    }
    // 0 and 4 are NOPs that want a direct call and a trampoline.
    w.t.recs[0].flags = m(bit::DIRECT) | one;
    w.t.recs[4].flags = m(bit::TRAMP) | one;
    let plan: Vec<u8> =
        w.t.recs
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
    w
}

/// Runs a pass that must fail in its check pass, and checks that nothing
/// at all was written and the failure was reported once, for `rec`.
fn failing_pass<A: SimArch>(w: &mut World<A>, rec: usize) -> Failure {
    let snap = w.a.snapshot();
    let flags = w.flags_vec();
    let want_update = update_of(model::check_record(flags[rec], true).0);
    w.log.borrow_mut().clear();
    w.t.shadows.clear();
    let mut counts = Counts::default();
    let failure = w.pass(true, &mut counts).expect_err("the pass must fail");
    assert_eq!(w.t.reports, vec![(rec, want_update, failure)]);
    assert_eq!(w.a.snapshot(), snap, "text or literal written");
    assert_eq!(w.flags_vec(), flags, "flags written");
    assert!(!w.wrote_any(), "{:?}", w.log.borrow());
    assert!(w.a.pending() == 0 && w.a.flushes().is_empty());
    assert_eq!(counts.failures, 1);
    assert_eq!(counts.patched(), 0);
    assert_eq!(counts.batches, 0);
    // Every record up to the failing one was shown to the comparator.
    assert_eq!(w.t.shadows.len(), rec + 1);
    assert_eq!(counts.walked, rec as u64 + 1);
    assert!(w.store.items.is_empty());
    w.t.reports.clear();
    failure
}

/// Runs a pass in which record `rec` (a NOP to become a call) fails and
/// is quarantined: the pass goes on and every other record is updated;
/// `rec`'s site is left as it was (its instruction only, if `wrote_literal`:
/// arm64 stores the literal first), its flags say quarantined, and it is
/// reported once. A second pass does not look at it again.
fn quarantining_pass<A: SimArch>(w: &mut World<A>, rec: usize, wrote_literal: bool) -> Failure {
    let before = w.flags_vec();
    let snap = w.state(rec);
    let planned: Vec<(u8, u64)> = before
        .iter()
        .map(|&f| model::check_record(f, true))
        .collect();
    assert_eq!(update_of(planned[rec].0), Update::MakeCall);
    assert_eq!(Verdict::of(Update::MakeCall), Verdict::Quarantine);
    w.t.shadows.clear();
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert!(w.t.reports.is_empty(), "{:?}", w.t.reports);
    assert_eq!(w.t.quarantines.len(), 1, "{:?}", w.t.quarantines);
    let (qrec, qupdate, failure) = w.t.quarantines[0];
    assert_eq!((qrec, qupdate), (rec, Update::MakeCall));
    assert_eq!((counts.failures, counts.quarantined), (1, 1));
    let changes = planned.iter().filter(|p| p.0 != model::IGNORE).count() as u64;
    assert_eq!(counts.patched(), changes - 1);
    let q = RecFlags::from_raw(before[rec]).quarantined();
    assert_eq!(w.t.recs[rec].flags, q.raw());
    assert!(q.skipped() && q.raw() & 0xff == 0);
    if wrote_literal {
        assert_eq!(w.state(rec).0, snap.0);
    } else {
        assert_eq!(w.state(rec), snap);
    }
    for i in (0..before.len()).filter(|&i| i != rec) {
        assert_eq!(w.t.recs[i].flags, planned[i].1, "record {i}");
        assert_eq!(w.state(i), w.expected(i), "site {i}");
    }
    assert_eq!(w.a.pending(), 0);
    assert_eq!(w.t.shadows.len(), before.len());

    // The quarantined record is skipped from now on: not read, not
    // reported again, whatever the pass.
    let ip = w.t.recs[rec].ip;
    for enable in [true, false, true] {
        w.log.borrow_mut().clear();
        let mut again = Counts::default();
        assert_eq!(w.pass(enable, &mut again), Ok(()));
        assert!(!w.reads().contains(&ip));
        assert_eq!(again.failures, 0);
        assert_eq!(w.t.recs[rec].flags, q.raw());
    }
    assert_eq!(w.t.quarantines.len(), 1);
    w.t.quarantines.clear();
    failure
}

fn corrupted_site_is_refused<A: SimArch>() {
    let mut cases = 0;
    for variant in [false, true] {
        for byte in 0..A::INSN_LEN {
            // A corrupted site that was to be made a call is quarantined.
            for rec in [0, 4] {
                let mut w = mixed::<A>(variant);
                let ip = w.t.recs[rec].ip;
                let (expected, actual) = w.a.corrupt(ip, byte);
                let f = quarantining_pass(&mut w, rec, false);
                assert_eq!(f, Failure::Mismatch { expected, actual });
                cases += 1;
            }
            // One that modifies a call or makes a NOP stops the pass.
            for rec in [2, 3] {
                let mut w = mixed::<A>(variant);
                let ip = w.t.recs[rec].ip;
                let (expected, actual) = w.a.corrupt(ip, byte);
                let f = failing_pass(&mut w, rec);
                assert_eq!(f, Failure::Mismatch { expected, actual });
                assert_eq!(f.errno(), Errno::Invalid);
                cases += 1;
            }
        }
    }
    // A corrupted site whose record needs nothing is not looked at.
    let mut w = mixed::<A>(false);
    let ip = w.t.recs[1].ip;
    w.a.corrupt(ip, 0);
    let bad = w.state(1);
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(w.state(1), bad);
    assert!(!w.log.borrow().contains(&Ev::Read(ip)));
    note(&format!(
        "update {}: {cases} corrupted-site passes: a NOP site quarantined, a call site refused with nothing written",
        A::NAME
    ));
}

#[test]
fn x86_corrupted_site_is_refused() {
    corrupted_site_is_refused::<X86>();
}

#[test]
fn arm64_corrupted_site_is_refused() {
    corrupted_site_is_refused::<Arm64>();
}

fn read_fault_is_refused<A: SimArch>() {
    for rec in [2, 3] {
        let mut w = mixed::<A>(true);
        *w.a.fault_at() = Some(w.t.recs[rec].ip);
        let f = failing_pass(&mut w, rec);
        assert_eq!((f, f.errno()), (Failure::Fault, Errno::Fault));
    }
    for rec in [0, 4] {
        let mut w = mixed::<A>(true);
        *w.a.fault_at() = Some(w.t.recs[rec].ip);
        let f = quarantining_pass(&mut w, rec, false);
        assert_eq!((f, f.errno()), (Failure::Fault, Errno::Fault));
    }
    // A fault at a site that needs nothing does not matter.
    let mut w = mixed::<A>(true);
    *w.a.fault_at() = Some(w.t.recs[1].ip);
    checked_pass(&mut w, true, usize::MAX);
}

#[test]
fn x86_read_fault_is_refused() {
    read_fault_is_refused::<X86>();
}

#[test]
fn arm64_read_fault_is_refused() {
    read_fault_is_refused::<Arm64>();
}

/// A write failure in the write pass: what was queued before it is made
/// live with its records updated, the failing record and those after it
/// are left alone, and the failure is reported once.
fn write_failure_stops_the_pass<A: SimArch>() {
    for room in [usize::MAX, 0] {
        let mut w = mixed::<A>(false);
        let ip = w.t.recs[3].ip;
        *w.a.fail_write_at() = Some(ip);
        let flags = w.flags_vec();
        let planned: Vec<(u8, u64)> = flags
            .iter()
            .map(|&f| model::check_record(f, true))
            .collect();
        let snap: Vec<(u64, u64)> = (0..5).map(|i| w.state(i)).collect();
        w.store.room = room;
        let mut counts = Counts::default();
        assert_eq!(w.pass(true, &mut counts), Err(Failure::Write));
        assert_eq!(Failure::Write.errno(), Errno::Perm);
        assert_eq!(w.t.reports, vec![(3, Update::MakeNop, Failure::Write)]);
        assert_eq!((counts.failures, counts.patched()), (1, 2));
        assert_eq!(counts.batches, 1);
        assert_eq!(*w.a.flushes(), vec![vec![w.t.recs[0].ip, w.t.recs[2].ip]]);
        assert_eq!(w.a.pending(), 0);
        for i in [0, 2] {
            assert_eq!(w.t.recs[i].flags, planned[i].1);
            assert_eq!(w.state(i), w.expected(i));
        }
        for i in [3, 4] {
            assert_eq!(w.t.recs[i].flags, flags[i], "record {i} updated");
        }
        assert_eq!(w.state(4), snap[4]);
        // The instruction at the failing site is as it was (on arm64 its
        // literal was stored first, as the arch writes it).
        assert_eq!(w.state(3).0, snap[3].0);
        assert_eq!(w.t.shadows.len(), 5);
    }
}

/// A write failure on a NOP to become a call quarantines the record; the
/// others, before and after it, are written, with and without a store.
fn write_failure_quarantines_a_nop_site<A: SimArch>() {
    for room in [usize::MAX, 0] {
        for rec in [0, 4] {
            let mut w = mixed::<A>(false);
            *w.a.fail_write_at() = Some(w.t.recs[rec].ip);
            w.store.room = room;
            let f = quarantining_pass(&mut w, rec, true);
            assert_eq!(f, Failure::Write);
        }
    }
}

#[test]
fn x86_write_failure_quarantines_a_nop_site() {
    write_failure_quarantines_a_nop_site::<X86>();
}

#[test]
fn arm64_write_failure_quarantines_a_nop_site() {
    write_failure_quarantines_a_nop_site::<Arm64>();
}

#[test]
fn x86_write_failure_stops_the_pass() {
    write_failure_stops_the_pass::<X86>();
}

#[test]
fn arm64_write_failure_stops_the_pass() {
    write_failure_stops_the_pass::<Arm64>();
}

#[test]
fn x86_unencodable_target_is_refused() {
    // The new target: a trampoline one byte past rel32 reach.
    let mut w = mixed::<X86>(false);
    let ip = w.t.recs[4].ip;
    let far = ip.wrapping_add(5).wrapping_add(1 << 31);
    w.t.recs[4].tramp = far;
    let f = quarantining_pass(&mut w, 4, false);
    let out = |target| Failure::Encode(EncodeFault::X86(EncodeError::OutOfRange { ip, target }));
    assert_eq!(f, out(far));
    assert_eq!(f.errno(), Errno::Invalid);

    // The current target: the text of record 3 cannot be what its record
    // says.
    let mut w = mixed::<X86>(false);
    let ip = w.t.recs[3].ip;
    let far = ip.wrapping_add(5).wrapping_sub((1 << 31) + 1);
    w.t.recs[3].direct = far;
    let f = failing_pass(&mut w, 3);
    assert_eq!(
        f,
        Failure::Encode(EncodeFault::X86(EncodeError::OutOfRange {
            ip,
            target: far
        }))
    );

    // No target at all: only a plan given a zero address can see one (the
    // selection never yields 0 here).
    let facts = Facts {
        ip,
        flags: RecFlags::from_raw(0),
        new: Some(0),
        curr: Some(0),
        unique: None,
        set: None,
    };
    let d = Decision {
        update: Update::MakeCall,
        flags: RecFlags::from_raw(1),
    };
    assert_eq!(
        x86c::plan_update(&facts, &d, false),
        Err(Failure::Encode(EncodeFault::X86(EncodeError::NoTarget {
            ip
        })))
    );
    let d = Decision {
        update: Update::Ignore,
        ..d
    };
    assert_eq!(
        x86c::plan_update(&facts, &d, false),
        Err(Failure::Encode(EncodeFault::Nothing))
    );
    // A target the facts were gathered without is refused, not taken as 0.
    let unknown = Err(Failure::Encode(EncodeFault::Unknown));
    let no_new = Facts { new: None, ..facts };
    let no_curr = Facts {
        curr: None,
        ..facts
    };
    for (update, facts) in [
        (Update::MakeCall, no_new),
        (Update::ModifyCall, no_curr),
        (Update::MakeNop, no_curr),
    ] {
        let d = Decision { update, ..d };
        assert_eq!(x86c::plan_update(&facts, &d, false), unknown, "{update:?}");
    }

    // A missing direct entry is a problem of the selection, not of the
    // plan: the site calls the caller.
    let mut w = mixed::<X86>(false);
    w.t.recs[0].direct = 0;
    let mut c = Counts::default();
    assert_eq!(w.pass(true, &mut c), Ok(()));
    assert_eq!((c.make_call, c.gathers), (2, 4));
    assert_eq!(w.t.problems, 1);
    let ip = w.t.recs[0].ip;
    assert_eq!(w.a.text[&ip], x86_insn(ip, X86::CALLER, false));
}

#[test]
fn arm64_unusable_site_is_refused() {
    // A module site without a PLT cannot reach its trampoline: neither it
    // nor the caller is in reach.
    let mut w = World::<Arm64>::kernel(1, true);
    w.modules(1);
    let (ip, target) = (w.t.recs[0].ip, w.t.recs[0].tramp);
    w.t.recs[0].flags = m(bit::TRAMP) | 1;
    let f = quarantining_pass(&mut w, 0, false);
    assert_eq!(
        f,
        Failure::Encode(EncodeFault::Reach(ReachError::NoPlt { ip, target }))
    );
    assert_eq!(f.errno(), Errno::Invalid);

    // The current target: a call to the regs caller from module text
    // without a PLT cannot be what the site holds.
    let mut w = World::<Arm64>::kernel(1, true);
    w.modules(1);
    let ip = w.t.recs[0].ip;
    w.t.recs[0].flags = m(bit::ENABLED) | m(bit::REGS_EN);
    let f = failing_pass(&mut w, 0);
    assert_eq!(
        f,
        Failure::Encode(EncodeFault::Reach(ReachError::NoPlt {
            ip,
            target: Arm64::REGS_CALLER
        }))
    );

    // A direct trampoline out of reach of a kernel site: the caller, and
    // that is fine.
    let mut w = World::<Arm64>::kernel(1, true);
    w.t.recs[0].direct = A64_FAR;
    w.t.recs[0].flags = m(bit::DIRECT) | 1;
    checked_pass(&mut w, true, usize::MAX);
    let ip = w.t.recs[0].ip;
    assert_eq!(w.state(0).0, u64::from(bl(ip, Arm64::CALLER)));

    // A record whose literal would be misaligned.
    let mut w = mixed::<Arm64>(false);
    w.t.recs[0].ip += 4;
    w.a.reset(&w.t.recs);
    // The reset made every site a NOP: the calls of records 1 to 3 again.
    for i in 1..4 {
        let e = w.expected(i);
        w.a.set_state(w.t.recs[i].ip, e);
    }
    let literal = w.t.recs[0].ip - 12;
    let f = quarantining_pass(&mut w, 0, false);
    assert_eq!(
        f,
        Failure::Encode(EncodeFault::Layout(LayoutError::MisalignedLiteral {
            literal
        }))
    );
}

/// `update_one` on record `rec`, then a flush. Returns the result.
fn one<A: SimArch>(w: &mut World<A>, rec: usize, enable: bool) -> Result<Update, Failure> {
    w.log.borrow_mut().clear();
    w.t.shadows.clear();
    let gathers = w.t.gathers;
    let mut counts = Counts::default();
    let r = update_one(&mut Walk(&mut w.t), &mut w.a, rec, enable, &mut counts);
    assert_eq!(counts.walked, 1);
    assert_eq!(w.t.shadows.len(), 1);
    let changes = matches!(r, Ok(u) if u != Update::Ignore) || r.is_err();
    assert_eq!(w.t.shadows[0].3.is_some(), changes);
    assert_eq!(counts.gathers, u64::from(changes));
    assert_eq!(w.t.gathers - gathers, counts.gathers);
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
    w.a.flush();
    w.a.flushes().clear();
    r
}

fn update_one_paths<A: SimArch>() {
    for variant in [false, true] {
        let mut w = World::<A>::kernel(3, variant);
        let ip = w.t.recs[1].ip;
        let first = [Ev::Store(1), Ev::Read(ip), Ev::Write(ip)];

        // NOP -> call to the regs caller (one ops with CALL_OPS on arm64);
        // the record is stored before the text is read and written.
        w.t.recs[1].flags = m(bit::REGS) | m(bit::CALL_OPS) | 1;
        let want = model::check_record(w.t.recs[1].flags, true).1;
        assert_eq!(one(&mut w, 1, true), Ok(Update::MakeCall));
        assert_eq!(w.log.borrow()[..3], first);
        assert_eq!(w.t.recs[1].flags, want);
        assert_eq!(w.state(1), w.expected(1));

        // Nothing to do: nothing read or written.
        assert_eq!(one(&mut w, 1, true), Ok(Update::Ignore));
        assert_eq!(*w.log.borrow(), [Ev::Flush]);

        // -> direct trampoline (a jmp on a jmp-bit x86 kernel).
        w.t.recs[1].flags |= m(bit::DIRECT);
        let want = model::check_record(w.t.recs[1].flags, true).1;
        assert_eq!(one(&mut w, 1, true), Ok(Update::ModifyCall));
        assert_eq!(w.log.borrow()[..3], first);
        assert_eq!(w.t.recs[1].flags, want);
        assert!(has(want, bit::MODIFIED) && has(want, bit::DIRECT_EN));
        assert_eq!(w.state(1), w.expected(1));

        // A second user: the shared caller, the list ops.
        w.t.recs[1].flags += 1;
        assert_eq!(one(&mut w, 1, true), Ok(Update::ModifyCall));
        assert_eq!(w.state(1), w.expected(1));

        // Last user gone: back to a NOP, only the NOCLEAR bits stay.
        w.t.recs[1].flags &= !model::COUNT_MASK;
        assert_eq!(one(&mut w, 1, true), Ok(Update::MakeNop));
        assert_eq!(w.log.borrow()[..3], first);
        assert_eq!(w.t.recs[1].flags & !model::NOCLEAR_MASK, 0);
        assert_eq!(w.state(1), w.expected(1));
        for i in 0..3 {
            assert_eq!(w.state(i), w.expected(i), "site {i}");
        }
    }
}

#[test]
fn x86_update_one_paths() {
    update_one_paths::<X86>();
}

#[test]
fn arm64_update_one_paths() {
    update_one_paths::<Arm64>();
}

fn update_one_refuses_mismatch<A: SimArch>() {
    let mut w = World::<A>::kernel(3, false);
    let ip = w.t.recs[1].ip;
    // Each starting state, with the site's text corrupted.
    let states = [
        (m(bit::REGS) | 1, Update::MakeCall),
        (m(bit::ENABLED) | m(bit::REGS) | 1, Update::ModifyCall),
        (m(bit::ENABLED) | m(bit::REGS_EN), Update::MakeNop),
    ];
    for (f, update) in states {
        w.t.recs[1].flags = f;
        let good = w.expected(1);
        w.a.set_state(ip, good);
        let (expected, actual) = w.a.corrupt(ip, 0);
        let snap = w.a.snapshot();
        let r = one(&mut w, 1, true);
        assert_eq!(r, Err(Failure::Mismatch { expected, actual }), "{update:?}");
        // The record was updated first, as in the kernel; the text was not
        // written, and reporting is the caller's job.
        assert_eq!(w.t.recs[1].flags, model::check_record(f, true).1);
        assert_eq!(w.a.snapshot(), snap);
        assert!(!w.log.borrow().iter().any(|e| matches!(e, Ev::Write(_))));
        assert!(w.t.reports.is_empty());
    }
}

#[test]
fn x86_update_one_refuses_mismatch() {
    update_one_refuses_mismatch::<X86>();
}

#[test]
fn arm64_update_one_refuses_mismatch() {
    update_one_refuses_mismatch::<Arm64>();
}

/// `update_one` on record `rec`, whose change cannot be planned: the
/// failure is returned, and neither the record nor the text is touched.
fn update_one_refuses_unplannable<A: SimArch>(w: &mut World<A>, rec: usize, want: Failure) {
    let flags = w.flags_vec();
    let snap = w.a.snapshot();
    let r = one(w, rec, true);
    assert_eq!(r, Err(want));
    assert_eq!(want.errno(), Errno::Invalid);
    // A plan failure leaves the record as it was, as in the kernel.
    assert_eq!(w.flags_vec(), flags);
    assert_eq!(w.a.snapshot(), snap);
    assert!(!w.log.borrow().iter().any(|e| matches!(e, Ev::Write(_))));
    assert!(w.t.reports.is_empty());
}

#[test]
fn x86_update_one_refuses_unencodable_target() {
    // A trampoline one byte past rel32 reach.
    let mut w = World::<X86>::kernel(3, false);
    let ip = w.t.recs[1].ip;
    let target = ip.wrapping_add(5).wrapping_add(1 << 31);
    w.t.recs[1].tramp = target;
    w.t.recs[1].flags = m(bit::TRAMP) | 1;
    let want = Failure::Encode(EncodeFault::X86(EncodeError::OutOfRange { ip, target }));
    update_one_refuses_unplannable(&mut w, 1, want);
    assert_eq!(w.a.text[&ip], X86_NOP);
}

#[test]
fn arm64_update_one_refuses_unreachable_target() {
    // A module site without a PLT cannot reach its trampoline.
    let mut w = World::<Arm64>::kernel(1, true);
    w.modules(1);
    let (ip, target) = (w.t.recs[0].ip, w.t.recs[0].tramp);
    w.t.recs[0].flags = m(bit::TRAMP) | 1;
    let want = Failure::Encode(EncodeFault::Reach(ReachError::NoPlt { ip, target }));
    update_one_refuses_unplannable(&mut w, 0, want);
    assert_eq!(w.state(0), (u64::from(A64_NOP), NOP_OPS));
}

fn batches_of_at_most_batch_max<A: SimArch>() {
    let mut checked = 0;
    for n in [1, 2, 255, 256, 257, 511, 512, 513, 1000, 1025] {
        let mut w = World::<A>::kernel(n, false);
        for r in &mut w.t.recs {
            r.flags = 1;
        }
        let c = checked_pass(&mut w, true, usize::MAX);
        let want = n.div_ceil(A::BATCH_MAX);
        assert_eq!(c.batches, want as u64, "n = {n}");
        assert_eq!(c.make_call, n as u64);
        assert_eq!(c.gathers, n as u64);
        // Greedy: every batch but the last is full.
        let sizes: Vec<usize> = w.a.flushes().iter().map(Vec::len).collect();
        assert!(
            sizes[..want - 1].iter().all(|&s| s == A::BATCH_MAX),
            "{sizes:?}"
        );
        w.a.flushes().clear();
        let c = checked_pass(&mut w, false, usize::MAX);
        assert_eq!((c.batches, c.make_nop), (want as u64, n as u64));
        // And with no room at all for the plans.
        for r in &mut w.t.recs {
            r.flags |= 1;
        }
        let c = checked_pass(&mut w, true, 0);
        assert_eq!((c.batches, c.gathers), (want as u64, 2 * n as u64));
        checked += 1;
    }
    note(&format!("update {}: {checked} batch-size cases", A::NAME));
}

#[test]
fn x86_batches_of_at_most_batch_max() {
    batches_of_at_most_batch_max::<X86>();
}

#[test]
fn arm64_batches_of_at_most_batch_max() {
    batches_of_at_most_batch_max::<Arm64>();
}

/// Records out of address order (two tables, as with module pages): the
/// pass flushes at the descent rather than queue out of order.
fn batches_split_at_descending_ip<A: SimArch>() {
    let mut w = World::<A>::kernel(10, false);
    let low = A::sites(5, false);
    for (j, r) in w.t.recs[5..].iter_mut().enumerate() {
        r.ip = low[j].ip - 0x10_0000;
    }
    w.a.reset(&w.t.recs);
    for r in &mut w.t.recs {
        r.flags = 1;
    }
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(counts.batches, 2);
    assert_eq!(
        w.a.flushes().iter().map(Vec::len).collect::<Vec<_>>(),
        [5, 5]
    );
    w.check_text();
}

#[test]
fn x86_batches_split_at_descending_ip() {
    batches_split_at_descending_ip::<X86>();
}

#[test]
fn arm64_batches_split_at_descending_ip() {
    batches_split_at_descending_ip::<Arm64>();
}

/// The store failing part-way: the write pass walks and gathers again,
/// with the same result, and it is counted.
fn store_failure_falls_back<A: SimArch>() {
    for room in [0, 1, 2, 3, 4] {
        let mut w = mixed::<A>(true);
        let c = checked_pass(&mut w, true, room);
        let fell_back = room < 4;
        assert_eq!(c.fallbacks, u64::from(fell_back));
        assert_eq!(c.gathers, if fell_back { 8 } else { 4 });
        assert_eq!(c.patched(), 4);
        // The comparator still saw each record once.
        assert_eq!(w.t.shadows.len(), 5);
    }
}

#[test]
fn x86_store_failure_falls_back() {
    store_failure_falls_back::<X86>();
}

#[test]
fn arm64_store_failure_falls_back() {
    store_failure_falls_back::<Arm64>();
}

/// The comparator hook is called once for every record decided on, by
/// every path: whole passes (with and without a store, failing or not)
/// and single updates. A pass that skipped it would fail here.
fn shadow_sees_every_decision<A: SimArch>() {
    let mut w = World::<A>::kernel(64, false);
    let mut rng = Rng::new(seed(0x5ad0));
    let mut decided = 0u64;
    for k in 0..200 {
        random_step(&mut w.t.recs, &mut rng);
        w.t.shadows.clear();
        let mut counts = Counts::default();
        if k % 3 == 0 {
            let rec = rng.below(64) as usize;
            let _ = update_one(&mut Walk(&mut w.t), &mut w.a, rec, true, &mut counts);
            w.a.flush();
        } else {
            w.store.room = if k % 5 == 0 { 2 } else { usize::MAX };
            w.pass(k % 7 != 0, &mut counts).expect("pass");
        }
        assert_eq!(w.t.shadows.len() as u64, counts.walked, "step {k}");
        let with_facts = w.t.shadows.iter().filter(|s| s.3.is_some()).count() as u64;
        assert_eq!(with_facts, counts.patched() + counts.failures, "step {k}");
        decided += counts.walked;
    }
    w.check_text();
    note(&format!(
        "update {}: {decided} decisions, each shown to the comparator once",
        A::NAME
    ));
}

#[test]
fn x86_shadow_sees_every_decision() {
    shadow_sees_every_decision::<X86>();
}

#[test]
fn arm64_shadow_sees_every_decision() {
    shadow_sees_every_decision::<Arm64>();
}

/// The single-site hooks with explicit addresses: the record's flags are
/// already updated, as the generic code does.
fn single_hooks<A: SimArch>() {
    let mut w = World::<A>::kernel(3, false);
    let tramp = w.t.recs[1].tramp;

    // NOP -> call to the trampoline of the site's one CALL_OPS ops.
    let f = model::check_record(m(bit::TRAMP) | m(bit::CALL_OPS) | 1, true).1;
    w.t.recs[1].flags = f;
    let uniques = w.t.uniques;
    let r = single(
        &mut Walk(&mut w.t),
        &mut w.a,
        1,
        Single::MakeCall { addr: tramp },
    );
    assert_eq!(r, Ok(()));
    w.a.flush();
    assert_eq!(w.state(1), w.expected(1));
    assert_eq!(w.t.uniques - uniques, u64::from(A::CALL_OPS));

    // Wrong "old" address: refused, nothing written.
    w.t.recs[1].flags = model::check_record(f | m(bit::REGS), true).1;
    let snap = w.a.snapshot();
    let r = single(
        &mut Walk(&mut w.t),
        &mut w.a,
        1,
        Single::ModifyCall {
            old: A::CALLER,
            new: A::REGS_CALLER,
        },
    );
    assert!(matches!(r, Err(Failure::Mismatch { .. })), "{r:?}");
    assert_eq!(w.a.snapshot(), snap);

    // The right one.
    let r = single(
        &mut Walk(&mut w.t),
        &mut w.a,
        1,
        Single::ModifyCall {
            old: tramp,
            new: tramp,
        },
    );
    assert_eq!(r, Ok(()));
    w.a.flush();
    assert_eq!(w.state(1), w.expected(1));

    // Back to a NOP.
    w.t.recs[1].flags = model::check_record(w.t.recs[1].flags & !model::COUNT_MASK, true).1;
    let r = single(
        &mut Walk(&mut w.t),
        &mut w.a,
        1,
        Single::MakeNop { old: tramp },
    );
    assert_eq!(r, Ok(()));
    w.a.flush();
    assert_eq!(w.state(1), w.expected(1));
    assert!(w.t.shadows.is_empty() && w.t.reports.is_empty());
}

#[test]
fn x86_single_hooks() {
    single_hooks::<X86>();
    // Init: the compiler's call to __fentry__ becomes the NOP.
    let mut w = World::<X86>::kernel(2, false);
    let ip = w.t.recs[0].ip;
    w.a.text.insert(ip, x86_insn(ip, FENTRY, false));
    assert_eq!(
        single(&mut Walk(&mut w.t), &mut w.a, 0, Single::Init),
        Ok(())
    );
    w.a.flush();
    assert_eq!(w.a.text[&ip], X86_NOP);
    // A site that is not the call is refused.
    assert!(matches!(
        single(&mut Walk(&mut w.t), &mut w.a, 1, Single::Init),
        Err(Failure::Mismatch { .. })
    ));
}

#[test]
fn arm64_single_hooks() {
    single_hooks::<Arm64>();
    // Init: the literal to the nop ops, then MOV X9, LR before the ip.
    let mut w = World::<Arm64>::kernel(2, false);
    let ip = w.t.recs[0].ip;
    w.a.words.insert(ip - 4, A64_NOP);
    w.a.literals.insert(ip - 12, 0);
    assert_eq!(
        single(&mut Walk(&mut w.t), &mut w.a, 0, Single::Init),
        Ok(())
    );
    assert_eq!(w.a.words[&(ip - 4)], A64_MOV_X9_LR);
    assert_eq!(w.a.literals[&(ip - 12)], NOP_OPS);
    w.a.flush();
    w.check_text();
    // Twice is refused, with the literal untouched.
    w.a.literals.insert(ip - 12, 0);
    assert!(matches!(
        single(&mut Walk(&mut w.t), &mut w.a, 0, Single::Init),
        Err(Failure::Mismatch { .. })
    ));
    assert_eq!(w.a.literals[&(ip - 12)], 0);
}

/// On a jmp-bit kernel only a direct-call target reads bit 0 as "jump".
/// A trampoline or caller at an odd address (a C function built with GCC
/// 12 at -Os) must be called, not jumped to one byte before it.
#[test]
fn x86_odd_non_direct_targets_are_called() {
    let mut w = World::<X86>::kernel(4, true);
    for s in w.t.recs.iter_mut() {
        s.tramp |= 1;
    }
    w.t.recs[0].flags = m(bit::TRAMP) | 1;
    w.t.recs[1].flags = m(bit::REGS) | 1;
    w.t.recs[2].flags = m(bit::DIRECT) | 1;
    w.t.recs[3].flags = m(bit::DIRECT) | m(bit::TRAMP) | 2;
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    let (r0, r2, r3) = (w.t.recs[0], w.t.recs[2], w.t.recs[3]);
    assert_eq!(w.a.text[&r0.ip], x86_insn(r0.ip, r0.tramp, false));
    assert_eq!(w.a.text[&r0.ip][0], 0xe8);
    assert_eq!(w.a.text[&r2.ip], x86_insn(r2.ip, r2.direct & !1, true));
    assert_eq!(w.a.text[&r3.ip], x86_insn(r3.ip, r3.tramp, false));
    w.check_text();

    // And back: the old bytes are expected as calls too.
    for s in w.t.recs.iter_mut() {
        s.flags &= !model::COUNT_MASK;
    }
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert!(w.a.text.values().all(|b| *b == X86_NOP));
}

/// The arm64 literal follows the site's single ops, the list ops when
/// shared or not eligible, and reaches through the caller and the PLT.
#[test]
fn arm64_literals_and_reach() {
    let mut w = World::<Arm64>::kernel(8, false);
    w.modules(2);
    // 3: a direct trampoline out of reach (through the caller); 6, 7 in
    // module text (through the PLT).
    for i in [0, 3, 6, 7] {
        w.t.recs[i].flags = m(bit::DIRECT) | m(bit::CALL_OPS) | 1;
    }
    w.t.recs[1].flags = m(bit::CALL_OPS) | 2;
    w.t.recs[2].flags = m(bit::TRAMP) | 1;
    let c = checked_pass(&mut w, true, usize::MAX);
    assert_eq!(c.make_call, 6);
    let lit = |w: &World<Arm64>, i: usize| w.state(i).1;
    assert_eq!(lit(&w, 0), ops_addr(0));
    assert_eq!(lit(&w, 1), LIST_OPS);
    assert_eq!(lit(&w, 2), LIST_OPS);
    let ip3 = w.t.recs[3].ip;
    assert_eq!(w.state(3).0, u64::from(bl(ip3, Arm64::CALLER)));
    for i in [6, 7] {
        let ip = w.t.recs[i].ip;
        assert_eq!(w.state(i), (u64::from(bl(ip, A64_PLT)), ops_addr(i)));
    }
    checked_pass(&mut w, false, usize::MAX);
    assert!((0..8).all(|i| lit(&w, i) == NOP_OPS));
}

// ---------------------------------------------------------------------
// Literal-only changes: a site with two or more ops whose literal names
// the site's published set (issue 36, arm64 and riscv64).

/// Two published ops sets, as the literal names them (the `ftrace_ops` in
/// front of a set block).
const SET_A: u64 = 0xffff_0000_c200_1008;
const SET_B: u64 = 0xffff_0000_c200_2008;

#[test]
fn arm64_literal_names_the_set_and_follows_it() {
    let mut w = World::<Arm64>::kernel(3, false);
    let ip = w.t.recs[1].ip;
    // Two ops on the site, its set published: the pass makes the call and
    // the literal names the set (not the list ops), and says so.
    w.t.recs[1].flags = 2;
    w.t.sets.insert(1, SET_A);
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(counts.make_call, 1);
    assert_eq!(counts.literals, 0);
    let (insn, lit) = w.state(1);
    assert_eq!(insn, w.expected(1).0);
    assert_eq!(lit, SET_A);
    assert_eq!(w.t.named.get(&1), Some(&SET_A));
    // The C comparator's bits are untouched: a set is not CALL_OPS_EN.
    assert!(!has(w.t.recs[1].flags, bit::CALL_OPS_EN));

    // Nothing due: nothing read or written, no walk.
    let gathers = w.t.gathers;
    w.log.borrow_mut().clear();
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert!(!w.wrote_any());
    assert!(w.reads().is_empty());
    assert_eq!(w.t.gathers, gathers);

    // The set changes (an ops joins, a filter moves): the flags do not, so
    // the decision is Ignore, but the literal is due. One literal-only
    // change: the call is checked and kept, the literal names the new set.
    w.t.sets.insert(1, SET_B);
    let flags = w.t.recs[1].flags;
    w.log.borrow_mut().clear();
    w.t.shadows.clear();
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(counts.literals, 1);
    assert_eq!(counts.patched(), 0);
    assert_eq!(counts.gathers, 1);
    assert_eq!(w.t.recs[1].flags, flags);
    assert_eq!(w.state(1), (insn, SET_B));
    assert_eq!(w.t.named.get(&1), Some(&SET_B));
    assert_eq!(w.reads(), [ip]);
    // The comparator saw an Ignore without facts, as C decides it.
    assert!(w
        .t
        .shadows
        .iter()
        .all(|(_, _, d, f)| d.update == Update::Ignore && f.is_none()));

    // The set is gone (the table cleared): back to the list ops.
    w.t.sets.remove(&1);
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(counts.literals, 1);
    assert_eq!(w.state(1), (insn, LIST_OPS));
    assert_eq!(w.t.named.get(&1), None);
}

#[test]
fn arm64_literal_only_change_checks_the_call() {
    let mut w = World::<Arm64>::kernel(3, false);
    let ip = w.t.recs[2].ip;
    w.t.recs[2].flags = 3;
    w.t.sets.insert(2, SET_A);
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(w.state(2).1, SET_A);

    // A wrong word where the call must be: refused with both words,
    // nothing written (the literal still names the old set).
    let (want, found) = w.a.corrupt(ip, 1);
    w.t.sets.insert(2, SET_B);
    w.log.borrow_mut().clear();
    let mut counts = Counts::default();
    let f = w.pass(true, &mut counts);
    assert_eq!(
        f,
        Err(Failure::Mismatch {
            expected: want,
            actual: found
        })
    );
    assert!(!w.wrote_any());
    assert_eq!(w.state(2).1, SET_A);
    assert_eq!(w.t.named.get(&2), Some(&SET_A));
    assert_eq!(w.t.reports.len(), 1);
    assert_eq!(w.t.reports[0].1, Update::Ignore);
}

#[test]
fn arm64_update_one_writes_a_due_literal() {
    let mut w = World::<Arm64>::kernel(2, false);
    w.t.recs[0].flags = 2;
    w.t.sets.insert(0, SET_A);
    let mut counts = Counts::default();
    assert_eq!(
        update_one(&mut Walk(&mut w.t), &mut w.a, 0, true, &mut counts),
        Ok(Update::MakeCall)
    );
    w.a.flush();
    assert_eq!(w.state(0).1, SET_A);
    w.t.sets.insert(0, SET_B);
    let mut counts = Counts::default();
    assert_eq!(
        update_one(&mut Walk(&mut w.t), &mut w.a, 0, true, &mut counts),
        Ok(Update::Ignore)
    );
    w.a.flush();
    assert_eq!(counts.literals, 1);
    assert_eq!(w.state(0).1, SET_B);
    assert_eq!(w.t.named.get(&0), Some(&SET_B));
}

#[test]
fn x86_has_no_literal_to_change() {
    // Sets exist on x86 too (the list function looks them up), but no
    // site names one: the pass never asks whether a literal is due.
    let mut w = World::<X86>::kernel(2, false);
    w.t.recs[0].flags = 2;
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    w.t.sets.insert(0, SET_A);
    w.log.borrow_mut().clear();
    let mut counts = Counts::default();
    assert_eq!(w.pass(true, &mut counts), Ok(()));
    assert_eq!(counts.literals, 0);
    assert!(!w.wrote_any());
    assert!(w.t.named.is_empty());
}

/// Issue 55, review item 2: the registry hears of a literal store as soon
/// as it lands, not once the whole change is written. A site becoming a
/// call with a set stores its literal, then its instruction; when the
/// instruction store fails, the literal names the new set all the same,
/// and the registry must know it (else it could free that set without
/// waiting for the literal's readers).
#[test]
fn arm64_literal_store_is_known_when_the_instruction_store_fails() {
    for pass in [true, false] {
        let mut w = World::<Arm64>::kernel(3, false);
        let ip = w.t.recs[1].ip;
        w.t.recs[1].flags = 2;
        w.t.sets.insert(1, SET_A);
        *w.a.fail_write_at() = Some(ip);
        let mut counts = Counts::default();
        let r = if pass {
            w.pass(true, &mut counts).map(|()| Update::MakeCall)
        } else {
            update_one(&mut Walk(&mut w.t), &mut w.a, 1, true, &mut counts)
        };
        // Quarantined in a pass (a NOP to become a call), an error from the
        // single-record path: either way the instruction is as it was.
        assert!(
            r == Ok(Update::MakeCall) && w.t.quarantines.len() == 1 || r == Err(Failure::Write),
            "{r:?}"
        );
        let (insn, lit) = w.state(1);
        assert_eq!(insn, u64::from(A64_NOP));
        // The literal store landed: the registry is told what it names.
        assert_eq!(lit, SET_A);
        assert_eq!(w.t.named.get(&1), Some(&SET_A), "pass {pass}");
    }
}

#[test]
fn sort_unique_sorts_and_drops_copies() {
    use crate::rfcore::dirty::sort_unique;
    let mut rng = Rng::new(seed(0x2026_1205));
    for len in (0..200).chain([1000, 4097]) {
        let span = 1 + rng.below(3 * len as u64 + 1);
        let mut v: Vec<u64> = (0..len).map(|_| rng.below(span)).collect();
        let mut want = v.clone();
        want.sort_unstable();
        want.dedup();
        let n = sort_unique(&mut v);
        assert_eq!(&v[..n], &want[..], "len {len}");
    }
}
