// SPDX-License-Identifier: GPL-2.0

//! The replace-code driver: walk the records, decide, verify, patch.
//!
//! The driver is written against [`Env`], which the kernel implements over
//! the real record table and text-poking engine and the host tests implement
//! over a simulated one. Nothing here touches memory by itself.
//!
//! Two drivers exist, as in the kernel:
//!
//! - [`replace_batched`] is the x86 update pass. Pass one checks every site
//!   that will change against the bytes its record says are there (and that
//!   the new instruction can be encoded); the first problem is reported and
//!   nothing at all is patched. Pass two queues every change in ascending
//!   address order into batches of at most [`BATCH_MAX`] sites, each made live
//!   with one INT3 round (three IPIs) by [`Env::flush`], updating each record
//!   as its change is queued.
//! - [`replace_one`] handles one record the generic way (update the record
//!   first, then make/modify the call or make the NOP), as
//!   `__ftrace_replace_code()` does; it is used when a module's records are
//!   enabled and by arches without a batching engine.

use super::{
    flags::{
        RecFlags,
        DIRECT_EN, //
    },
    record::{
        decide,
        Decision,
        Update, //
    },
    x86::{
        encode_call,
        verify,
        EncodeError,
        Mismatch,
        INSN_SIZE,
        NOP5, //
    }, //
};

/// The most sites queued before the batch is made live.
///
/// The x86 engine holds `PAGE_SIZE / sizeof(struct smp_text_poke_loc)` = 4096
/// / 16 = 256 entries; queueing no more than that, in ascending order, means
/// every flush of the engine is one the driver asked for and counted.
pub const BATCH_MAX: usize = 256;

/// Why a site could not be updated. Reported through [`Env::report`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Failure {
    /// Reading the site faulted.
    Fault,
    /// The site does not hold what its record says; nothing was written.
    Mismatch(Mismatch),
    /// The new instruction cannot be encoded.
    Encode(EncodeError),
}

impl From<Mismatch> for Failure {
    fn from(m: Mismatch) -> Self {
        Failure::Mismatch(m)
    }
}

impl From<EncodeError> for Failure {
    fn from(e: EncodeError) -> Self {
        Failure::Encode(e)
    }
}

/// Where a site calls, and whether that is a direct-call trampoline.
///
/// Only a direct-call target may carry the "jump" bit
/// (`CONFIG_DYNAMIC_FTRACE_WITH_JMP`, bit 0): callers, trampolines and
/// callbacks are plain functions, and with GCC 12 at `-Os` a C function can
/// start at an odd address. Reading bit 0 of those as "jump" would write a
/// `JMP` one byte before the function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Target {
    /// The address the site calls (or jumps to).
    pub addr: u64,
    /// The address is a direct-call trampoline (the record's `DIRECT_EN`).
    pub direct: bool,
}

impl Target {
    /// The target the `*_EN` bits of `flags` say the site uses.
    pub fn of(addr: u64, flags: RecFlags) -> Self {
        Target {
            addr,
            direct: flags.any(DIRECT_EN),
        }
    }
}

/// Encodes the instruction that makes the site at `ip` reach `target`.
fn encode<E: Env>(env: &E, ip: u64, target: Target) -> Result<[u8; INSN_SIZE], EncodeError> {
    encode_call(ip, target.addr, target.direct && env.jmp_bit())
}

/// Counters kept by the drivers. Plain numbers: the caller accumulates them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Counts {
    /// Records looked at.
    pub walked: u64,
    /// NOPs turned into calls.
    pub make_call: u64,
    /// Calls re-targeted.
    pub modify_call: u64,
    /// Calls turned into NOPs.
    pub make_nop: u64,
    /// Batches made live.
    pub batches: u64,
    /// Updates stopped by a failure.
    pub failures: u64,
}

impl Counts {
    /// Sites whose text was changed.
    pub fn patched(&self) -> u64 {
        self.make_call
            .saturating_add(self.modify_call)
            .saturating_add(self.make_nop)
    }

    fn count(&mut self, update: Update) {
        let c = match update {
            Update::Ignore => return,
            Update::MakeCall => &mut self.make_call,
            Update::ModifyCall => &mut self.modify_call,
            Update::MakeNop => &mut self.make_nop,
        };
        *c = c.saturating_add(1);
    }
}

/// What the drivers need from the kernel (or from a simulation of it).
pub trait Env {
    /// A record handle.
    type Rec: Copy;
    /// A position in the record table.
    type Cursor: Copy;

    /// The first record of the table, if any.
    fn first(&mut self) -> Option<Self::Cursor>;
    /// The record after `at`, if any.
    fn next(&mut self, at: Self::Cursor) -> Option<Self::Cursor>;
    /// The record at a position.
    fn record(&self, at: Self::Cursor) -> Self::Rec;

    /// The address of the record's call site.
    fn ip(&self, rec: Self::Rec) -> u64;
    /// The record's flags word.
    fn flags(&self, rec: Self::Rec) -> RecFlags;
    /// Stores the record's flags word.
    fn store_flags(&mut self, rec: Self::Rec, flags: RecFlags);
    /// Where the site must call once updated (`ftrace_get_addr_new()`).
    fn addr_new(&mut self, rec: Self::Rec) -> u64;
    /// Where the site calls now (`ftrace_get_addr_curr()`).
    fn addr_curr(&mut self, rec: Self::Rec) -> u64;
    /// Whether bit 0 of a target selects a jump (`CONFIG_DYNAMIC_FTRACE_WITH_JMP`).
    fn jmp_bit(&self) -> bool;

    /// Reads the instruction at a site.
    fn read(&mut self, ip: u64) -> Result<[u8; INSN_SIZE], Failure>;
    /// Queues a write of `insn` at `ip`.
    ///
    /// Addresses arrive in ascending order between two flushes, at most
    /// [`BATCH_MAX`] of them.
    fn queue(&mut self, ip: u64, insn: &[u8; INSN_SIZE]);
    /// Makes every queued write live.
    fn flush(&mut self);
    /// Reports a failure on a record, as `ftrace_bug()` does.
    fn report(&mut self, rec: Self::Rec, update: Update, failure: Failure);
}

/// The bytes the site holds now, from the record's current state.
fn expected_old<E: Env>(
    env: &mut E,
    rec: E::Rec,
    update: Update,
) -> Result<[u8; INSN_SIZE], Failure> {
    match update {
        Update::MakeCall => Ok(NOP5),
        _ => {
            let old = Target::of(env.addr_curr(rec), env.flags(rec));
            Ok(encode(env, env.ip(rec), old)?)
        }
    }
}

/// The bytes the site must hold once `decision` is applied.
fn wanted_new<E: Env>(
    env: &mut E,
    rec: E::Rec,
    decision: Decision,
) -> Result<[u8; INSN_SIZE], Failure> {
    match decision.update {
        Update::MakeNop => Ok(NOP5),
        _ => {
            // `addr_new()` reads the request bits, which the decision does
            // not change; the new `DIRECT_EN` says whether it is direct.
            let new = Target::of(env.addr_new(rec), decision.flags);
            Ok(encode(env, env.ip(rec), new)?)
        }
    }
}

/// Checks that a record's site can be updated: the old text is as expected
/// and the new one can be encoded. Returns the update and the new bytes.
fn check_site<E: Env>(
    env: &mut E,
    rec: E::Rec,
    decision: Decision,
) -> Result<[u8; INSN_SIZE], Failure> {
    let old = expected_old(env, rec, decision.update)?;
    let actual = env.read(env.ip(rec))?;
    verify(&actual, &old)?;
    wanted_new(env, rec, decision)
}

/// The x86 batched update pass over every record (`ftrace_replace_code()`).
///
/// Returns the failure that stopped it, after reporting it. On failure in
/// pass one, no site has been written.
pub fn replace_batched<E: Env>(
    env: &mut E,
    enable: bool,
    counts: &mut Counts,
) -> Result<(), Failure> {
    // Pass one: verify everything that would change.
    let mut changes = 0u64;
    let mut at = env.first();
    while let Some(pos) = at {
        let rec = env.record(pos);
        counts.walked = counts.walked.saturating_add(1);
        let decision = decide(env.flags(rec), enable);
        if decision.update != Update::Ignore {
            if let Err(failure) = check_site(env, rec, decision) {
                counts.failures = counts.failures.saturating_add(1);
                env.report(rec, decision.update, failure);
                return Err(failure);
            }
            changes = changes.saturating_add(1);
        }
        at = env.next(pos);
    }
    if changes == 0 {
        // Nothing to write: no second walk, no batch.
        return Ok(());
    }

    // Pass two: queue the new text and update the records.
    let mut queued = 0usize;
    let mut last_ip = 0u64;
    let mut at = env.first();
    while let Some(pos) = at {
        let rec = env.record(pos);
        let decision = decide(env.flags(rec), enable);
        if decision.update != Update::Ignore {
            // Cannot fail: pass one checked the same decision on the same
            // state. Still, never write what was not verified.
            let new = match wanted_new(env, rec, decision) {
                Ok(new) => new,
                Err(failure) => {
                    counts.failures = counts.failures.saturating_add(1);
                    env.flush();
                    counts.batches = counts.batches.saturating_add(1);
                    env.report(rec, decision.update, failure);
                    return Err(failure);
                }
            };
            let ip = env.ip(rec);
            if queued == BATCH_MAX || (queued > 0 && ip <= last_ip) {
                env.flush();
                counts.batches = counts.batches.saturating_add(1);
                queued = 0;
            }
            env.queue(ip, &new);
            queued += 1;
            last_ip = ip;
            env.store_flags(rec, decision.flags);
            counts.count(decision.update);
        }
        at = env.next(pos);
    }
    if queued > 0 {
        env.flush();
        counts.batches = counts.batches.saturating_add(1);
    }
    Ok(())
}

/// Turns a NOP at `rec` into a call to `target` (`ftrace_make_call()`).
pub fn make_call<E: Env>(env: &mut E, rec: E::Rec, target: Target) -> Result<(), Failure> {
    let ip = env.ip(rec);
    let new = encode(env, ip, target)?;
    let actual = env.read(ip)?;
    verify(&actual, &NOP5)?;
    env.queue(ip, &new);
    Ok(())
}

/// Turns the call to `old` at `rec` into a NOP (`ftrace_make_nop()`).
pub fn make_nop<E: Env>(env: &mut E, rec: E::Rec, old: Target) -> Result<(), Failure> {
    let ip = env.ip(rec);
    let expected = encode(env, ip, old)?;
    let actual = env.read(ip)?;
    verify(&actual, &expected)?;
    env.queue(ip, &NOP5);
    Ok(())
}

/// Re-targets the call at `rec` from `old` to `new` (`ftrace_modify_call()`).
pub fn modify_call<E: Env>(
    env: &mut E,
    rec: E::Rec,
    old: Target,
    new: Target,
) -> Result<(), Failure> {
    let ip = env.ip(rec);
    let expected = encode(env, ip, old)?;
    let insn = encode(env, ip, new)?;
    let actual = env.read(ip)?;
    verify(&actual, &expected)?;
    env.queue(ip, &insn);
    Ok(())
}

/// Updates one record the generic way (`__ftrace_replace_code()`).
///
/// The targets are computed from the state before the update, the record is
/// updated, then the text is changed. A failure is returned, not reported:
/// the caller reports it (the kernel's callers call `ftrace_bug()`).
pub fn replace_one<E: Env>(
    env: &mut E,
    rec: E::Rec,
    enable: bool,
    counts: &mut Counts,
) -> Result<Update, Failure> {
    let flags = env.flags(rec);
    let new_addr = env.addr_new(rec);
    let old = Target::of(env.addr_curr(rec), flags);
    let decision = decide(flags, enable);
    let new = Target::of(new_addr, decision.flags);
    counts.walked = counts.walked.saturating_add(1);
    if decision.update == Update::Ignore {
        return Ok(Update::Ignore);
    }
    env.store_flags(rec, decision.flags);
    let result = match decision.update {
        Update::Ignore => Ok(()),
        Update::MakeCall => make_call(env, rec, new),
        Update::MakeNop => make_nop(env, rec, old),
        Update::ModifyCall => modify_call(env, rec, old, new),
    };
    match result {
        Ok(()) => {
            counts.count(decision.update);
            Ok(decision.update)
        }
        Err(failure) => {
            counts.failures = counts.failures.saturating_add(1);
            Err(failure)
        }
    }
}
