// SPDX-License-Identifier: GPL-2.0

//! The update pass: gather, plan, check, write, for every architecture.
//!
//! One orchestrator, generic over two traits the kernel implements:
//!
//! - [`Records`]: the record table, the facts one walk of the ops list
//!   gives about a record ([`Facts`]), the comparator hook
//!   ([`Records::shadow`]) and the bug report;
//! - [`Arch`]: how a record's [`Facts`] and [`Decision`] become a change of
//!   the text (a pure plan, from [`x86::plan_update`] or
//!   [`arm64::plan_update`]), how a change is checked against the text
//!   without writing, and how it is written.
//!
//! [`update_all`] is the whole-table pass (`ftrace_replace_code()`): pass
//! one decides every record, gathers and plans every change and checks it
//! against the text, keeping the plans in a [`Store`]; a site that was to
//! become a call and cannot is quarantined ([`Verdict`]) and the pass goes
//! on, any other failure is reported and nothing at all has been written. Pass two writes the stored
//! plans in order. [`update_one`] is the generic one-record update
//! (`__ftrace_replace_code()`), [`single`] the arch hooks the generic code
//! calls with explicit addresses (`ftrace_make_call()` and friends).
//!
//! Every failure of every architecture is one [`Failure`], which maps to
//! one [`Errno`].
//!
//! [`x86::plan_update`]: super::arch::x86::plan_update
//! [`arm64::plan_update`]: super::arch::arm64::plan_update
//! [`riscv64::plan_update`]: super::arch::riscv64::plan_update

pub use super::fault::{
    EncodeFault,
    Errno,
    Failure,
    Insn,
    INSN_MAX, //
};
use super::{
    flags::{
        RecFlags,
        CALL_OPS_EN,
        ENABLED, //
    },
    record::{
        decide,
        Decision,
        Update, //
    },
    select::{
        Gathered,
        Need, //
    },
};

/// What one walk of the ops list tells about a record, with the record's
/// state before the update: everything a plan needs besides the decision.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Facts {
    /// The record's call site.
    pub ip: u64,
    /// The record's flags before the update.
    pub flags: RecFlags,
    /// Where the site is to call (`ftrace_get_addr_new()`), when the
    /// update needs it.
    pub new: Option<u64>,
    /// Where the site calls now (`ftrace_get_addr_curr()`), when the
    /// update needs it.
    pub curr: Option<u64>,
    /// The address of the single ops on the site
    /// (`ftrace_find_unique_ops()`), when it was asked for and there is
    /// exactly one: what a CALL_OPS literal holds.
    pub unique: Option<u64>,
    /// The address of the site's published ops set, as its literal names
    /// it ([`Records::literal_set`]), when the site has two or more ops on
    /// a `CALL_OPS` architecture and the set was asked for.
    pub set: Option<u64>,
}

impl Facts {
    /// The facts of the site at `ip` with `flags` from one
    /// [`select::gather`] walk; `addr` gives an ops' address.
    ///
    /// [`select::gather`]: super::select::gather
    pub fn from_gathered<O: Copy>(
        ip: u64,
        flags: RecFlags,
        g: &Gathered<O>,
        addr: impl FnOnce(O) -> u64,
    ) -> Facts {
        Facts {
            ip,
            flags,
            new: g.new.map(|c| c.addr),
            curr: g.curr.map(|c| c.addr),
            unique: g.unique.map(addr),
            set: None,
        }
    }

    /// Where the site is to call; [`EncodeFault::Unknown`] if it was not
    /// gathered.
    pub fn new_target(&self) -> Result<u64, Failure> {
        self.new.ok_or(Failure::Encode(EncodeFault::Unknown))
    }

    /// Where the site calls now; [`EncodeFault::Unknown`] if it was not
    /// gathered.
    pub fn curr_target(&self) -> Result<u64, Failure> {
        self.curr.ok_or(Failure::Encode(EncodeFault::Unknown))
    }
}

/// What the orchestrator needs from an architecture.
pub trait Arch {
    /// A planned change of one site: everything needed to check and write
    /// it, computed before anything is read or written.
    type Change: Copy;
    /// The most changes queued before [`Arch::flush`] must be called.
    const BATCH_MAX: usize;
    /// The sites have per-site ops literals (arm64 and riscv64
    /// `CALL_OPS`): plans of a record with `CALL_OPS_EN` need
    /// [`Facts::unique`]. An architecture with literals sets it and
    /// overrides [`Arch::plan_literal`] and [`Arch::literal_holds`]; the
    /// defaults are those of sites without literals. A wrapper around
    /// another `Arch` must forward all three.
    const CALL_OPS: bool = false;

    /// Plans the change `decision` asks of the site `facts` describe.
    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<Self::Change, Failure>;
    /// Plans the first initialisation of the site at `ip`.
    fn plan_init(&mut self, ip: u64) -> Result<Self::Change, Failure>;
    /// The patch-site address (the record's ip) of an entry of the
    /// call-site list (`ftrace_call_adjust()`), `None` if the architecture
    /// cannot patch such a site. A pure function of the entry, asked once
    /// per entry by the list check ([`crate::rfcore::table::scan`]).
    fn call_site(entry: u64) -> Option<u64>;
    /// The record ip of a change (the order of the batch).
    fn ip(change: &Self::Change) -> u64;
    /// Reads the text and verifies every word the change replaces; writes
    /// nothing. Only [`Checked::check`] calls it for a change to be
    /// written.
    fn check(&mut self, change: &Self::Change) -> Result<(), Failure>;
    /// Writes a checked change: x86 queues it into the INT3 batch; arm64
    /// stores the literal, then the instruction, now. A plain
    /// [`Arch::Change`] cannot be written: only what [`Checked::check`]
    /// made.
    ///
    /// `literal` is called once for each literal store that landed, with
    /// the set that literal names from then on (0: none) and before any
    /// later store of the change is tried, so the registry's account of
    /// what a literal names follows every store: a change whose
    /// instruction store fails after its literal store has still
    /// re-pointed the literal. No default: an implementation that stores a
    /// literal without saying so would let the registry free a set a live
    /// literal names.
    fn write(
        &mut self,
        change: &Checked<Self::Change>,
        literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure>;
    /// Makes every queued write live.
    fn flush(&mut self);
    /// A rescheduling point between two records (`cond_resched()`).
    fn relax(&mut self) {}
    /// Plans a literal-only change (`CALL_OPS` architectures): the site
    /// calls now and keeps its call (`decision.update` is
    /// [`Update::Ignore`], the flags do not change), but its literal must
    /// name `facts.set`, or the list ops if that is `None`. The default,
    /// for sites without literals: [`EncodeFault::Nothing`].
    fn plan_literal(
        &mut self,
        _facts: &Facts,
        _decision: &Decision,
    ) -> Result<Self::Change, Failure> {
        Err(Failure::Encode(EncodeFault::Nothing))
    }
    /// For the shadow check after a pass: what the literal of the site at
    /// `ip` holds now, read from the text (0 if it cannot be read), and
    /// what it must hold for a record with `flags` (after the pass), the
    /// unique ops `unique` and the published set `set` (the address of the
    /// set's ops). The default, for sites without literals: `None`.
    fn literal_holds(
        &mut self,
        _ip: u64,
        _flags: RecFlags,
        _unique: Option<u64>,
        _set: Option<u64>,
    ) -> Option<(u64, u64)> {
        None
    }
}

/// A change the architecture has checked against the text: the only thing
/// [`Arch::write`] accepts.
///
/// Nothing outside this module can make one but [`Checked::check`], which
/// runs [`Arch::check`] first. It is neither `Copy` nor `Clone`: a check
/// is good for the write it was made for.
///
/// A change that was never checked does not reach the text:
///
/// ```compile_fail,E0308
/// use rftrace::rfcore::update::{Arch, Failure};
/// fn poke<A: Arch>(arch: &mut A, change: A::Change) -> Result<(), Failure> {
///     arch.write(&change, &mut |_| {})
/// }
/// ```
///
/// nor can one be dressed up as checked:
///
/// ```compile_fail,E0451
/// use rftrace::rfcore::update::Checked;
/// use rftrace::rfcore::arch::x86::X86Change;
/// fn dress(change: X86Change) -> Checked<X86Change> {
///     Checked { change }
/// }
/// ```
///
/// # Invariants
///
/// `change` passed the [`Arch::check`] of the architecture that made it
/// (through [`Checked::check`]).
#[derive(Debug)]
pub struct Checked<C> {
    change: C,
}

impl<C> Checked<C> {
    /// Checks `change` against the text with `arch` ([`Arch::check`]):
    /// the change, checked, or why not.
    pub fn check<A: Arch<Change = C>>(arch: &mut A, change: C) -> Result<Self, Failure> {
        arch.check(&change)?;
        // INVARIANT: `arch` has just checked the change.
        Ok(Checked { change })
    }
}

impl<C> core::ops::Deref for Checked<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.change
    }
}

/// What the orchestrator needs from the record table.
pub trait Records {
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
    /// The facts of the record in its current state, from ONE walk of the
    /// ops list (`select::gather`): the answers `need` asks for.
    /// The kernel also reports the problems met on the way.
    fn gather(&mut self, rec: Self::Rec, need: Need) -> Facts;
    /// The address of the single ops on the record's site, if there is
    /// exactly one (`select::unique_ops`): one walk, for [`single`].
    fn unique(&mut self, rec: Self::Rec) -> Option<u64>;
    /// The comparator hook: called exactly once for every record a pass
    /// decides on, with the facts when they were gathered (always for a
    /// change, never for [`Update::Ignore`]).
    fn shadow(&mut self, rec: Self::Rec, enable: bool, decision: &Decision, facts: Option<&Facts>);
    /// Reports a failure on a record, as `ftrace_bug()` does, which stops
    /// function tracing everywhere (`ftrace_kill()`).
    fn report(&mut self, rec: Self::Rec, update: Update, failure: &Failure);
    /// Reports a record quarantined by the pass (its flags already say so,
    /// [`RecFlags::quarantined`]): once, with the failure, the update
    /// asked of it and the bytes found.
    fn quarantine(&mut self, rec: Self::Rec, update: Update, failure: &Failure);
    /// The address the literal of the record's site is to name for the
    /// site's published ops set (`CALL_OPS` architectures, two or more
    /// ops), if it has one ([`Facts::set`]).
    fn literal_set(&mut self, rec: Self::Rec) -> Option<u64>;
    /// Whether the literal of the record's site names another set than
    /// [`Records::literal_set`] says it is to name: a literal-only change
    /// is due although the record's flags do not change.
    fn literal_due(&mut self, rec: Self::Rec) -> bool;
    /// The literal of the record's site names `set` now (0: no set): its
    /// store landed ([`Arch::write`]), whether or not the rest of the
    /// change did.
    fn literal_written(&mut self, rec: Self::Rec, set: u64);
}

/// What becomes of a record whose change failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Only the site is given up: the pass leaves it as it is, marks the
    /// record [`RecFlags::quarantined`], reports it and goes on with the
    /// other records.
    Quarantine,
    /// Function tracing stops everywhere (`ftrace_bug()`, `ftrace_kill()`),
    /// as in C: the pass stops.
    Stop,
}

impl Verdict {
    /// The verdict on a failed `update`, at any stage (plan, check, write).
    ///
    /// Only a site that was to become a call is quarantined: it was a NOP
    /// as far as the core knows, and it still is one after any failure
    /// (nothing was written, or on arm64 only the literal, which a NOP
    /// never reads), so nothing can be running, or will run, into an ops or
    /// a trampoline the core stops accounting for. A site that was a call
    /// (a failed re-target or NOP) may still call into ftrace: giving it up
    /// would let its ops and trampoline be freed under it, so that stops
    /// tracing, as the C code does.
    pub const fn of(update: Update) -> Verdict {
        match update {
            Update::MakeCall => Verdict::Quarantine,
            Update::Ignore | Update::ModifyCall | Update::MakeNop => Verdict::Stop,
        }
    }
}

/// Where [`update_all`] keeps the plans between its check pass and its
/// write pass (a growable kernel vector).
pub trait Store<R, C> {
    /// Appends a record, its checked change and its decision; false if
    /// there is no room (allocation failed), nothing appended.
    fn push(&mut self, rec: R, change: Checked<C>, decision: Decision) -> bool;
    /// The `i`-th entry pushed since the last [`Store::clear`].
    fn get(&self, i: usize) -> Option<(R, &Checked<C>, Decision)>;
    /// Forgets every entry.
    fn clear(&mut self);
}

/// Counters kept by the passes. Plain numbers: the caller accumulates them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Counts {
    /// Records decided on.
    pub walked: u64,
    /// NOPs turned into calls.
    pub make_call: u64,
    /// Calls re-targeted.
    pub modify_call: u64,
    /// Calls turned into NOPs.
    pub make_nop: u64,
    /// Batches made live ([`Arch::flush`] calls).
    pub batches: u64,
    /// Updates stopped by a failure.
    pub failures: u64,
    /// Records quarantined (of [`Counts::failures`]).
    pub quarantined: u64,
    /// Walks of the ops list ([`Records::gather`], [`Records::unique`]).
    pub gathers: u64,
    /// Targets chosen by those walks (new and current, as the plans
    /// needed them).
    pub targets: u64,
    /// Passes whose plans could not all be stored, so that the write pass
    /// walked the records and gathered again.
    pub fallbacks: u64,
    /// Literal-only changes written: a site that keeps its call and its
    /// flags, whose literal names another ops set.
    pub literals: u64,
}

/// Adds one, saturating.
fn bump(c: &mut u64) {
    *c = c.saturating_add(1);
}

impl Counts {
    /// Sites whose text was changed.
    pub fn patched(&self) -> u64 {
        self.make_call
            .saturating_add(self.modify_call)
            .saturating_add(self.make_nop)
    }

    fn count(&mut self, update: Update) {
        match update {
            Update::Ignore => bump(&mut self.literals),
            Update::MakeCall => bump(&mut self.make_call),
            Update::ModifyCall => bump(&mut self.modify_call),
            Update::MakeNop => bump(&mut self.make_nop),
        }
    }
}

/// Whether a plan of `decision` needs the unique ops of the site.
fn want_unique<A: Arch>(decision: &Decision) -> bool {
    A::CALL_OPS && decision.flags.any(CALL_OPS_EN)
}

/// Whether a plan of `decision` names the site's ops set in its literal:
/// the site calls, with two or more ops, on a `CALL_OPS` architecture.
fn want_set<A: Arch>(decision: &Decision) -> bool {
    A::CALL_OPS
        && decision.update != Update::MakeNop
        && decision.flags.any(ENABLED)
        && decision.flags.count() > 1
}

/// What a plan of `decision` needs to know about the site: the current
/// target when the site calls now and changes, the new target when it is
/// to call, and the unique ops for a per-site literal ([`want_unique`]).
pub fn need<A: Arch>(decision: &Decision) -> Need {
    Need {
        new: matches!(decision.update, Update::MakeCall | Update::ModifyCall),
        curr: matches!(decision.update, Update::ModifyCall | Update::MakeNop),
        unique: want_unique::<A>(decision),
    }
}

/// Gathers what a plan of `decision` needs about a record, counting the
/// walk.
#[inline(always)]
fn gather<R: Records, A: Arch>(
    recs: &mut R,
    rec: R::Rec,
    decision: &Decision,
    counts: &mut Counts,
) -> Facts {
    let need = need::<A>(decision);
    bump(&mut counts.gathers);
    counts.targets = counts
        .targets
        .saturating_add(u64::from(need.new))
        .saturating_add(u64::from(need.curr));
    let mut facts = recs.gather(rec, need);
    if want_set::<A>(decision) {
        facts.set = recs.literal_set(rec);
    }
    facts
}

/// The facts of a literal-only change of `rec`, if one is due: the site
/// calls, keeps its call and flags ([`Update::Ignore`]), and its literal
/// names another set than the one published for it.
fn literal_due<R: Records, A: Arch>(
    recs: &mut R,
    rec: R::Rec,
    decision: &Decision,
    counts: &mut Counts,
) -> Option<Facts> {
    if decision.update != Update::Ignore || !A::CALL_OPS || !decision.flags.any(ENABLED) {
        return None;
    }
    if !recs.literal_due(rec) {
        return None;
    }
    bump(&mut counts.gathers);
    counts.targets = counts.targets.saturating_add(1);
    let mut facts = recs.gather(
        rec,
        Need {
            new: false,
            curr: true,
            unique: false,
        },
    );
    facts.set = if decision.flags.count() > 1 {
        recs.literal_set(rec)
    } else {
        None
    };
    Some(facts)
}

/// Plans and checks the change of `rec` that `decision` asks, or the
/// literal-only change that is due; `None` if there is nothing to write.
/// Calls the comparator hook once.
fn plan_checked<R: Records, A: Arch>(
    recs: &mut R,
    arch: &mut A,
    rec: R::Rec,
    enable: bool,
    decision: &Decision,
    counts: &mut Counts,
) -> Option<Result<Checked<A::Change>, Failure>> {
    let facts =
        (decision.update != Update::Ignore).then(|| gather::<R, A>(recs, rec, decision, counts));
    recs.shadow(rec, enable, decision, facts.as_ref());
    let Some(facts) = facts else {
        let facts = literal_due::<R, A>(recs, rec, decision, counts)?;
        return Some(
            arch.plan_literal(&facts, decision)
                .and_then(|change| Checked::check(arch, change)),
        );
    };
    Some(
        arch.plan(&facts, decision)
            .and_then(|change| Checked::check(arch, change)),
    )
}

/// Takes a failed update of `rec` to its [`Verdict`]: a quarantined record
/// is marked and reported, and the pass goes on (true); otherwise the
/// failure is reported as `ftrace_bug()` and the pass must stop (false).
fn failed<R: Records>(
    recs: &mut R,
    rec: R::Rec,
    update: Update,
    failure: &Failure,
    counts: &mut Counts,
) -> bool {
    bump(&mut counts.failures);
    match Verdict::of(update) {
        Verdict::Quarantine => {
            bump(&mut counts.quarantined);
            let flags = recs.flags(rec).quarantined();
            recs.store_flags(rec, flags);
            recs.quarantine(rec, update, failure);
            true
        }
        Verdict::Stop => {
            recs.report(rec, update, failure);
            false
        }
    }
}

/// Writes a checked change of `rec`, and tells `recs` of every literal
/// store that landed, whether or not a later store of the change fails.
fn write_change<R: Records, A: Arch>(
    recs: &mut R,
    arch: &mut A,
    rec: R::Rec,
    change: &Checked<A::Change>,
) -> Result<(), Failure> {
    let mut landed = None;
    let result = arch.write(change, &mut |set| landed = Some(set));
    if let Some(set) = landed {
        recs.literal_written(rec, set);
    }
    result
}

/// The changes being written by pass two, and the batch they go into.
struct Writer {
    queued: usize,
    last_ip: u64,
}

impl Writer {
    /// Writes one change, flushing first if the batch is full or the ip
    /// does not ascend; then stores the record's new flags.
    #[inline]
    fn write<R: Records, A: Arch>(
        &mut self,
        recs: &mut R,
        arch: &mut A,
        rec: R::Rec,
        change: &Checked<A::Change>,
        decision: &Decision,
        counts: &mut Counts,
    ) -> Result<(), Failure> {
        let ip = A::ip(change);
        if self.queued > 0 && (self.queued >= A::BATCH_MAX || ip <= self.last_ip) {
            self.flush(arch, counts);
        }
        if let Err(failure) = write_change(recs, arch, rec, change) {
            // A quarantined site was left a NOP: the batch goes on.
            if failed(recs, rec, decision.update, &failure, counts) {
                return Ok(());
            }
            self.flush(arch, counts);
            return Err(failure);
        }
        self.queued = self.queued.saturating_add(1);
        self.last_ip = ip;
        recs.store_flags(rec, decision.flags);
        counts.count(decision.update);
        Ok(())
    }

    /// Makes what is queued live, if anything is.
    fn flush<A: Arch>(&mut self, arch: &mut A, counts: &mut Counts) {
        if self.queued > 0 {
            arch.flush();
            bump(&mut counts.batches);
            self.queued = 0;
        }
    }
}

/// Pass one of [`update_all`] on one record: decide, shadow and, for a
/// change, gather, plan, check and keep the plan. Returns whether the
/// record changes; `stored` is cleared when the store is full.
fn check_record<R: Records, A: Arch, S: Store<R::Rec, A::Change>>(
    recs: &mut R,
    arch: &mut A,
    store: &mut S,
    rec: R::Rec,
    enable: bool,
    stored: &mut bool,
    counts: &mut Counts,
) -> Result<bool, (Update, Failure)> {
    bump(&mut counts.walked);
    let decision = decide(recs.flags(rec), enable);
    let change = match plan_checked(recs, arch, rec, enable, &decision, counts) {
        None => return Ok(false),
        Some(planned) => planned.map_err(|f| (decision.update, f))?,
    };
    if *stored && !store.push(rec, change, decision) {
        // No room: forget the plans, pass two gathers again.
        *stored = false;
        store.clear();
        bump(&mut counts.fallbacks);
    }
    Ok(true)
}

/// The update pass over every record (`ftrace_replace_code()`).
///
/// Pass one decides every record (calling [`Records::shadow`] once for
/// each) and, for every change, gathers the record's facts, plans the
/// change, checks it against the text and keeps it in `store`. A failed
/// change that [`Verdict::of`] quarantines is marked, reported, and the
/// pass goes on without it; the first other failure is reported and
/// returned: nothing has been written.
///
/// Pass two writes the kept changes in order, in batches of at most
/// [`Arch::BATCH_MAX`], flushing whenever the ip does not ascend, and
/// stores each record's new flags as its change is written. A write failure
/// quarantines its record, or (see [`Verdict`]) is reported and stops the
/// pass, after what was queued is made live.
/// If the store ran out of room, pass two walks the records again and
/// gathers and plans every change a second time (counted in
/// [`Counts::fallbacks`]); with a working store there is one ops-list walk
/// per changed record.
pub fn update_all<R: Records, A: Arch, S: Store<R::Rec, A::Change>>(
    recs: &mut R,
    arch: &mut A,
    store: &mut S,
    enable: bool,
    counts: &mut Counts,
) -> Result<(), Failure> {
    store.clear();
    let mut stored = true;
    let mut changes = 0usize;
    let mut at = recs.first();
    while let Some(pos) = at {
        let rec = recs.record(pos);
        match check_record(recs, arch, store, rec, enable, &mut stored, counts) {
            Ok(true) => changes = changes.saturating_add(1),
            Ok(false) => {}
            Err((update, failure)) => {
                if !failed(recs, rec, update, &failure, counts) {
                    store.clear();
                    return Err(failure);
                }
            }
        }
        arch.relax();
        at = recs.next(pos);
    }
    if changes == 0 {
        return Ok(());
    }

    let mut writer = Writer {
        queued: 0,
        last_ip: 0,
    };
    let result = if stored {
        write_stored(recs, arch, store, &mut writer, changes, enable, counts)
    } else {
        write_walked(recs, arch, &mut writer, enable, counts)
    };
    store.clear();
    if result.is_ok() {
        writer.flush(arch, counts);
    }
    result
}

/// Pass two from the store: its first `n` entries.
fn write_stored<R: Records, A: Arch, S: Store<R::Rec, A::Change>>(
    recs: &mut R,
    arch: &mut A,
    store: &mut S,
    writer: &mut Writer,
    n: usize,
    enable: bool,
    counts: &mut Counts,
) -> Result<(), Failure> {
    for i in 0..n {
        match store.get(i) {
            Some((rec, change, decision)) => {
                writer.write(recs, arch, rec, change, &decision, counts)?;
            }
            None => {
                // A store that lost what it accepted: the records written
                // so far now decide Ignore, so a walk finishes the job.
                bump(&mut counts.fallbacks);
                return write_walked(recs, arch, writer, enable, counts);
            }
        }
        arch.relax();
    }
    Ok(())
}

/// Pass two without a store: decide, gather, plan and check every record
/// again.
///
/// The text is as pass one checked it (nothing else writes it under the
/// locks the caller holds), so the plans are the ones checked; they are
/// checked again all the same, since only a checked change is written (one
/// more read per change, on a path taken only when the store ran out of
/// memory).
fn write_walked<R: Records, A: Arch>(
    recs: &mut R,
    arch: &mut A,
    writer: &mut Writer,
    enable: bool,
    counts: &mut Counts,
) -> Result<(), Failure> {
    let mut at = recs.first();
    while let Some(pos) = at {
        let rec = recs.record(pos);
        let decision = decide(recs.flags(rec), enable);
        let planned = if decision.update != Update::Ignore {
            let facts = gather::<R, A>(recs, rec, &decision, counts);
            Some(
                arch.plan(&facts, &decision)
                    .and_then(|change| Checked::check(arch, change)),
            )
        } else {
            literal_due::<R, A>(recs, rec, &decision, counts).map(|facts| {
                arch.plan_literal(&facts, &decision)
                    .and_then(|change| Checked::check(arch, change))
            })
        };
        match planned {
            Some(Ok(change)) => writer.write(recs, arch, rec, &change, &decision, counts)?,
            Some(Err(failure)) if !failed(recs, rec, decision.update, &failure, counts) => {
                writer.flush(arch, counts);
                return Err(failure);
            }
            _ => {}
        }
        arch.relax();
        at = recs.next(pos);
    }
    Ok(())
}

/// Updates one record the generic way (`__ftrace_replace_code()`): decide,
/// gather, shadow, plan, store the new flags, check, write.
///
/// The write is not flushed: the caller makes it live (x86: the arch
/// post-process). A failure is returned, not reported: the kernel's
/// callers call `ftrace_bug()`. As in the kernel, a failure of the check or
/// the write leaves the record updated; a plan failure leaves it as it was.
pub fn update_one<R: Records, A: Arch>(
    recs: &mut R,
    arch: &mut A,
    rec: R::Rec,
    enable: bool,
    counts: &mut Counts,
) -> Result<Update, Failure> {
    bump(&mut counts.walked);
    let decision = decide(recs.flags(rec), enable);
    let facts =
        (decision.update != Update::Ignore).then(|| gather::<R, A>(recs, rec, &decision, counts));
    recs.shadow(rec, enable, &decision, facts.as_ref());
    let Some(facts) = facts else {
        let Some(facts) = literal_due::<R, A>(recs, rec, &decision, counts) else {
            return Ok(Update::Ignore);
        };
        let result = arch
            .plan_literal(&facts, &decision)
            .and_then(|change| Checked::check(arch, change))
            .and_then(|change| write_change(recs, arch, rec, &change));
        return match result {
            Ok(()) => {
                counts.count(Update::Ignore);
                Ok(Update::Ignore)
            }
            Err(failure) => {
                bump(&mut counts.failures);
                Err(failure)
            }
        };
    };
    let result = arch.plan(&facts, &decision).and_then(|change| {
        recs.store_flags(rec, decision.flags);
        let change = Checked::check(arch, change)?;
        write_change(recs, arch, rec, &change)
    });
    match result {
        Ok(()) => {
            counts.count(decision.update);
            Ok(decision.update)
        }
        Err(failure) => {
            bump(&mut counts.failures);
            Err(failure)
        }
    }
}

/// An arch hook the generic code calls with explicit addresses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Single {
    /// `ftrace_make_call()`: NOP to a call to `addr`.
    MakeCall {
        /// The new target.
        addr: u64,
    },
    /// `ftrace_modify_call()`: the call to `old` to a call to `new`.
    ModifyCall {
        /// The current target.
        old: u64,
        /// The new target.
        new: u64,
    },
    /// `ftrace_make_nop()`: the call to `old` to a NOP.
    MakeNop {
        /// The current target.
        old: u64,
    },
    /// `ftrace_init_nop()`: the first initialisation of the site.
    Init,
}

/// Runs an arch hook on one record: plan, check, write (not flushed).
///
/// The record's flags have been updated by the caller already, so they
/// describe the site after the change: for the plan they are both the
/// "before" flags of the facts and the decision's flags (the old target
/// is taken to be of the same kind as the new one). On a `CALL_OPS`
/// architecture, a call on a record with `CALL_OPS_EN` looks up the
/// site's unique ops with one walk ([`Records::unique`]).
pub fn single<R: Records, A: Arch>(
    recs: &mut R,
    arch: &mut A,
    rec: R::Rec,
    op: Single,
) -> Result<(), Failure> {
    let ip = recs.ip(rec);
    let flags = recs.flags(rec);
    let (update, new, curr) = match op {
        Single::Init => {
            let change = arch.plan_init(ip)?;
            let change = Checked::check(arch, change)?;
            // A first initialisation points the literal at no set.
            return write_change(recs, arch, rec, &change);
        }
        Single::MakeCall { addr } => (Update::MakeCall, Some(addr), None),
        Single::ModifyCall { old, new } => (Update::ModifyCall, Some(new), Some(old)),
        Single::MakeNop { old } => (Update::MakeNop, None, Some(old)),
    };
    let decision = Decision { update, flags };
    let unique = if update != Update::MakeNop && want_unique::<A>(&decision) {
        recs.unique(rec)
    } else {
        None
    };
    let set = if want_set::<A>(&decision) {
        recs.literal_set(rec)
    } else {
        None
    };
    let facts = Facts {
        ip,
        flags,
        new,
        curr,
        unique,
        set,
    };
    let change = arch.plan(&facts, &decision)?;
    let change = Checked::check(arch, change)?;
    write_change(recs, arch, rec, &change)
}
