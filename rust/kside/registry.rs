// SPDX-License-Identifier: GPL-2.0

//! The `ftrace_ops` registry on the kernel's structures: the ops list
//! (`ftrace_ops_list`, which the list function and the arch code read
//! without a lock), joining and leaving it, the function the shared
//! callers call, an ops' accounting walk over the record table, and the
//! start-up and shut-down of an ops, each a typed state.
//!
//! The decisions are [`crate::rfcore::registry`]'s; this module reads the
//! facts under `ftrace_lock` and writes the answers where the C readers
//! expect them. The list keeps the form those readers walk: a singly
//! linked list ending at `ftrace_list_end`, each link published with
//! release semantics (`rcu_assign_pointer()`) and read with
//! `rcu_dereference()`; an ops taken out keeps its `next`, so a reader
//! standing on it walks on to the end.
//!
//! A leaf module with `unsafe` code: the list links and ops fields as
//! atomics, and the C calls for the ops' function, trampoline and the
//! shared callers.

use core::ptr;

use kernel::{
    bindings,
    error::{
        code::{
            EBUSY,
            EINVAL,
            ENODEV,
            EPERM, //
        },
        Error,
    },
    ffi::c_int,
    sync::atomic::Relaxed,
};

use crate::{
    kside::filter::KHash,
    kside::ipmodify,
    kside::lock::{
        FtraceCell,
        FtraceLocked, //
    },
    kside::ops::{
        first_ops,
        list_end,
        next_ops,
        read_head,
        read_next,
        set_head,
        set_next,
        set_removed_ops,
        Ops, //
    },
    kside::pages,
    kside::record::Rec,
    kside::siteset,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::filter::FnSet,
    rfcore::record::Update,
    rfcore::registry::{
        self,
        ops_fl,
        Callee,
        Joining,
        Links,
        Passed,
        Reach,
        Refusal, //
    },
};

// The pure core's flag values are the kernel's.
const _: () = {
    assert!(ops_fl::ENABLED == bindings::FTRACE_OPS_FL_ENABLED as u64);
    assert!(ops_fl::DYNAMIC == bindings::FTRACE_OPS_FL_DYNAMIC as u64);
    assert!(ops_fl::SAVE_REGS == bindings::FTRACE_OPS_FL_SAVE_REGS as u64);
    assert!(
        ops_fl::SAVE_REGS_IF_SUPPORTED == bindings::FTRACE_OPS_FL_SAVE_REGS_IF_SUPPORTED as u64
    );
    assert!(ops_fl::RECURSION == bindings::FTRACE_OPS_FL_RECURSION as u64);
    assert!(ops_fl::STUB == bindings::FTRACE_OPS_FL_STUB as u64);
    assert!(ops_fl::DELETED == bindings::FTRACE_OPS_FL_DELETED as u64);
    assert!(ops_fl::ADDING == bindings::FTRACE_OPS_FL_ADDING as u64);
    assert!(ops_fl::REMOVING == bindings::FTRACE_OPS_FL_REMOVING as u64);
    assert!(ops_fl::MODIFYING == bindings::FTRACE_OPS_FL_MODIFYING as u64);
    assert!(ops_fl::RCU == bindings::FTRACE_OPS_FL_RCU as u64);
    assert!(ops_fl::PERMANENT == bindings::FTRACE_OPS_FL_PERMANENT as u64);
};

/// The kernel's ops list as [`Links`]: `ftrace_ops_list` and the ops'
/// `next` fields, `ftrace_list_end` read as the end; every store a
/// release (`rcu_assign_pointer()`), since the list function reads the
/// links without a lock.
pub(crate) struct KernelLinks<'a> {
    lock: &'a FtraceLocked,
}

/// The kernel's ops list, to read or change under `lock`.
pub(crate) fn links(lock: &FtraceLocked) -> KernelLinks<'_> {
    KernelLinks { lock }
}

impl<'a> KernelLinks<'a> {
    fn raw(to: Option<Ops<'a>>) -> *mut bindings::ftrace_ops {
        to.map_or_else(list_end, |op| op.as_ptr())
    }
}

impl<'a> Links for KernelLinks<'a> {
    type Op = Ops<'a>;

    fn head(&self) -> Option<Ops<'a>> {
        first_ops(self.lock)
    }

    fn next(&self, op: Ops<'a>) -> Option<Ops<'a>> {
        next_ops(op, self.lock)
    }

    fn set_head(&mut self, to: Option<Ops<'a>>) {
        set_head(self.lock, Self::raw(to));
    }

    fn set_next(&mut self, op: Ops<'a>, to: Option<Ops<'a>>) {
        set_next(op, Self::raw(to));
    }
}

/// What the registry knows of `ops` as it asks to join.
fn joining(ops: Ops<'_>, lock: &FtraceLocked) -> Joining {
    let enabled = ftrace_enabled(lock);
    let core_data =
        crate::kside::shim::rftrace_shim_core_data(ops.as_ptr() as usize as kernel::ffi::c_ulong);
    Joining {
        flags: ops.flags(),
        ftrace_enabled: enabled,
        core_data,
        with_regs: cfg!(CONFIG_DYNAMIC_FTRACE_WITH_REGS),
    }
}

/// The `ftrace_enabled` sysctl.
pub(crate) fn ftrace_enabled(_lock: &FtraceLocked) -> bool {
    // SAFETY: the sysctl is written under ftrace_lock, which we hold.
    unsafe { ptr::addr_of!(bindings::ftrace_enabled).read() != 0 }
}

/// `__register_ftrace_function()`: puts `ops` on the list (it is not
/// started yet: its records are the caller's next step), saves its
/// function, gives it the pid filter and its trampoline, and updates what
/// the shared callers call. The refusals and their errnos are those of C;
/// registering an enabled ops twice warns, as in C.
pub(crate) fn register(ops: Ops<'_>, lock: &FtraceLocked) -> Result<(), Error> {
    // The operations before this one have settled.
    crate::kside::update::settled(lock);
    let flags = match registry::admit(joining(ops, lock)) {
        Ok(flags) => flags,
        Err(refusal) => {
            return Err(match refusal {
                Refusal::Deleted | Refusal::RegsUnsupported => EINVAL,
                Refusal::AlreadyEnabled => {
                    kernel::warn_on!(true);
                    EBUSY
                }
                Refusal::PermanentWhileDisabled => EBUSY,
            });
        }
    };
    ops.flags_word().store(flags, Relaxed);
    registry::push_front(&mut KernelLinks { lock }, ops);
    // SAFETY: `ops` is live and its functions are written under
    // ftrace_lock; the C calls read the ops and the pid settings, and
    // allocate or update the ops' own trampoline (x86) under the same lock.
    unsafe {
        let o = ops.as_ptr();
        (*o).saved_func = (*o).func;
        if bindings::ftrace_c_pids_enabled(o) {
            bindings::ftrace_c_use_pid_func(o);
        }
        bindings::ftrace_c_update_trampoline(o);
    }
    bump(&STATS.registered, 1);
    if ftrace_enabled(lock) {
        update_function(lock);
    }
    Ok(())
}

/// An ops on the list that has not been started: its records do not count
/// it yet. Made only by [`startup()`] after [`register()`].
///
/// # Invariants
///
/// `ops` is on the list, without `FTRACE_OPS_FL_ENABLED`.
#[must_use = "an ops on the list must be started or taken off again"]
struct Joined<'a> {
    ops: Ops<'a>,
    lock: &'a FtraceLocked,
}

/// An ops being started: enabled and marked `ADDING` (the trampoline
/// finders skip it), counted by the start-up counter, its records being
/// accounted. It ends [`Starting::finish()`]ed, [`Starting::roll_back()`]
/// to where it was before it joined, or [`Starting::abandon()`]ed when
/// ftrace has been killed meanwhile.
///
/// # Invariants
///
/// `ops` is on the list with `ENABLED | ADDING`, and the start-up counter
/// counts it.
#[must_use = "a start-up must be finished, rolled back or abandoned"]
struct Starting<'a> {
    ops: Ops<'a>,
    lock: &'a FtraceLocked,
}

impl<'a> Joined<'a> {
    fn start(self) -> Starting<'a> {
        start_up_add(1, self.lock);
        let flags = self.ops.flags_word();
        flags.store(
            flags.load(Relaxed) | ops_fl::ENABLED | ops_fl::ADDING,
            Relaxed,
        );
        // INVARIANT: enabled and adding, counted.
        Starting {
            ops: self.ops,
            lock: self.lock,
        }
    }
}

impl Starting<'_> {
    /// The ops' records are accounted and its sites updated: it is started.
    fn finish(self) {
        let flags = self.ops.flags_word();
        flags.store(flags.load(Relaxed) & !ops_fl::ADDING, Relaxed);
    }

    /// Back to before the ops joined the list (no record was accounted):
    /// off the list, not counted, not enabled, and its trampoline freed if
    /// the ops is dynamic. The C code leaves `ADDING` set on such an ops;
    /// it is cleared here too.
    fn roll_back(self) {
        let _ = unregister(self.ops, self.lock);
        start_up_add(-1, self.lock);
        let flags = self.ops.flags_word();
        let now = flags.load(Relaxed) & !(ops_fl::ENABLED | ops_fl::ADDING);
        flags.store(now, Relaxed);
        if now & ops_fl::DYNAMIC != 0 {
            // SAFETY: the ops is off the list and not enabled; its
            // trampoline (if it has one) is called by no site.
            unsafe { bindings::ftrace_c_trampoline_free(self.ops.as_ptr()) };
        }
    }

    /// ftrace was killed during the start-up: only take the ops off the
    /// list, as the C code does, leaving the rest as it is, since undoing
    /// more could do more damage.
    fn abandon(self) {
        let _ = unregister(self.ops, self.lock);
    }
}

/// `ftrace_startup()`: `ops` joins the list ([`register()`]), is enabled
/// and counted, passes the IPMODIFY check of the functions it covers
/// (else it goes back to where it was), is accounted on its records, and
/// the update pass runs with `command` (plus `FTRACE_UPDATE_CALLS` if a
/// site changes). The shadow build then checks the whole accounting.
pub(crate) fn startup(ops: Ops<'_>, command: c_int, lock: &FtraceLocked) -> Result<(), Error> {
    if disabled(lock) {
        return Err(ENODEV);
    }
    register(ops, lock)?;
    // INVARIANT: on the list, and `register()` refused an enabled ops.
    let starting = Joined { ops, lock }.start();
    if let Err(e) = ipmodify::enable(ops, lock) {
        starting.roll_back();
        return Err(e);
    }
    let mut command = command;
    match account_walk(ops, true, lock) {
        Ok(true) => command |= bindings::FTRACE_UPDATE_CALLS as c_int,
        Ok(false) => {}
        Err(()) => {
            // A reference count overflow, already logged: as C's
            // FTRACE_WARN_ON(), warn and stop ftrace.
            kernel::warn_on!(true);
            crate::kside::under_lock::kill(lock);
        }
    }
    crate::kside::under_lock::startup_enable(lock, command);
    if disabled(lock) {
        starting.abandon();
        return Err(ENODEV);
    }
    starting.finish();
    crate::kside::update::settled(lock);
    bump(&STATS.started, 1);
    Ok(())
}

/// Where the release of a dynamic ops goes when its caller will wait for
/// the grace periods itself, after dropping ftrace_lock (C's `struct
/// ftrace_release`, which only C reads and writes).
///
/// # Invariants
///
/// The pointer is valid for writes for `'c`, the call of the shut-down
/// that was given it.
///
/// Made only by C: `rftrace_shutdown()` takes an `Option<Deferred>` where
/// its prototype has a `struct ftrace_release *` (`kside::abi`), and the
/// header asks the caller for these invariants.
#[repr(transparent)]
pub(crate) struct Deferred<'c>(
    ptr::NonNull<bindings::ftrace_release>,
    core::marker::PhantomData<&'c mut bindings::ftrace_release>,
);

crate::kside::abi::lowered_as!(Option<Deferred<'static>> => *mut bindings::ftrace_release);

/// An ops taken off the list by [`shutdown()`] that is still enabled and
/// counted: its records still count it, and its sites may still call it.
///
/// # Invariants
///
/// `ops` is off the list, with `FTRACE_OPS_FL_ENABLED`, and the start-up
/// counter counts it.
#[must_use = "an ops taken off the list must be disabled"]
struct Leaving<'a> {
    ops: Ops<'a>,
    lock: &'a FtraceLocked,
}

/// An ops that is off the list, no longer counted or enabled, and on none
/// of its records; sites may still call it until the update pass has run,
/// and a dynamic ops must then be released.
///
/// # Invariants
///
/// `ops` is off the list and without `FTRACE_OPS_FL_ENABLED`; no record
/// counts it.
#[must_use = "a stopped ops must be released"]
struct Stopped<'a> {
    ops: Ops<'a>,
    lock: &'a FtraceLocked,
}

/// A stopped ops while the update pass takes it off its sites: marked
/// `REMOVING` and published as the removed ops (the trampoline finders ask
/// it first, with the hashes it had).
///
/// # Invariants
///
/// `ops` is a [`Stopped`] ops, marked as being removed.
#[must_use = "the removal mark must be cleared"]
struct Removing<'a> {
    ops: Ops<'a>,
    lock: &'a FtraceLocked,
}

impl<'a> Leaving<'a> {
    /// No longer counted, its IPMODIFY claims and its users on its records
    /// released, not enabled. Also says whether a site must change.
    fn disable(self) -> (Stopped<'a>, bool) {
        start_up_add(-1, self.lock);
        // The C code only warns on a negative count: the shared callers
        // may stay enabled, which is not fatal.
        kernel::warn_on!(start_up_count(self.lock) < 0);
        ipmodify::disable(self.ops, self.lock);
        let update = match account_walk(self.ops, false, self.lock) {
            Ok(update) => update,
            Err(()) => {
                // An underflow, already logged: as C's FTRACE_WARN_ON().
                kernel::warn_on!(true);
                crate::kside::under_lock::kill(self.lock);
                false
            }
        };
        let flags = self.ops.flags_word();
        flags.store(flags.load(Relaxed) & !ops_fl::ENABLED, Relaxed);
        // INVARIANT: off the list (`Leaving`), now not enabled, and the
        // walk took it off every record it covers.
        (
            Stopped {
                ops: self.ops,
                lock: self.lock,
            },
            update,
        )
    }
}

impl<'a> Stopped<'a> {
    /// Runs the update pass with `command`, the ops marked as the one
    /// being removed for its duration.
    fn update_sites(&self, command: c_int) {
        mark_removing(self.ops, true, self.lock);
        // INVARIANT: marked.
        Removing {
            ops: self.ops,
            lock: self.lock,
        }
        .run(command);
    }

    /// A dynamic ops may be freed once its caller returns: wait until no
    /// task can be on its function or trampoline and free the trampoline,
    /// or, with `deferred`, leave both to the caller, who does them after
    /// dropping ftrace_lock.
    fn release(self, deferred: Option<Deferred<'_>>) {
        if self.ops.flags() & ops_fl::DYNAMIC == 0 {
            return;
        }
        let rel = deferred.map_or(ptr::null_mut(), |d| d.0.as_ptr());
        // SAFETY: under ftrace_lock; `ops` is off the list and its sites
        // are updated (`Stopped`); `rel` is null or valid for writes
        // (invariant of `Deferred`).
        unsafe { bindings::ftrace_c_release(self.ops.as_ptr(), rel) };
    }
}

impl Removing<'_> {
    fn run(self, command: c_int) {
        crate::kside::under_lock::run_update_code(self.lock, command);
        sweep(self.lock);
        mark_removing(self.ops, false, self.lock);
    }
}

/// With no ops left on the list, no record may keep more than the bits
/// that survive the last ops ([`registry::left_behind`]); each one that
/// does is reported and ftrace is stopped, as the C code does. The C code
/// checks every record; here the records the last operations changed are
/// checked ([`crate::kside::dirty::each_touched`]), every record when
/// that is the whole table. The shadow build also checks every record
/// after the changed ones, and counts a difference if the two disagree.
fn sweep(lock: &FtraceLocked) {
    if read_head(lock) != list_end() {
        return;
    }
    let mut warned = false;
    let mut report = |rec: Rec<'_>| {
        if !warned {
            kernel::warn_on!(true);
            warned = true;
        }
        crate::kside::under_lock::kill(lock);
        kernel::pr_warn!("  {:#x} flags:{:#x}\n", rec.ip(), rec.flags().raw());
    };
    let mut found: u64 = 0;
    let mut finder = pages::Finder::new(lock);
    let listed = crate::kside::dirty::each_touched(lock, |ip| {
        if let Some(rec) = finder.find(ip) {
            if registry::left_behind(rec.flags()) {
                found = found.saturating_add(1);
                report(rec);
            }
        }
    });
    if listed && !cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        return;
    }
    let mut all: u64 = 0;
    for rec in pages::every(lock) {
        if registry::left_behind(rec.flags()) {
            all = all.saturating_add(1);
            if !listed {
                report(rec);
            }
        }
    }
    if listed && all != found {
        crate::kside::stats::consistency_diff(format_args!(
            "the sweep over the changed records found {found} records left with flags, the table {all}"
        ));
    }
}

/// `__ftrace_shutdown()`: `ops` leaves the list ([`unregister()`]), is
/// disabled ([`Leaving::disable()`]), the update pass runs with `command`
/// (plus `FTRACE_UPDATE_CALLS` if a site changes and
/// `FTRACE_UPDATE_TRACE_FUNC` if the shared callers' function did) unless
/// there is nothing to do or `ftrace_enabled` is off, and a dynamic ops is
/// released. The shadow build then checks the whole accounting.
pub(crate) fn shutdown(
    ops: Ops<'_>,
    command: c_int,
    deferred: Option<Deferred<'_>>,
    lock: &FtraceLocked,
) -> Result<(), Error> {
    if disabled(lock) {
        return Err(ENODEV);
    }
    unregister(ops, lock)?;
    // INVARIANT: `unregister()` refused an ops that was not enabled, and
    // took this one off the list.
    let (stopped, update) = Leaving { ops, lock }.disable();
    let mut command = command;
    if update {
        command |= bindings::FTRACE_UPDATE_CALLS as c_int;
    }
    if crate::kside::under_lock::trace_func_changed(lock) {
        command |= bindings::FTRACE_UPDATE_TRACE_FUNC as c_int;
    }
    if command != 0 && ftrace_enabled(lock) {
        stopped.update_sites(command);
    }
    if !disabled(lock) {
        crate::kside::update::settled(lock);
    }
    stopped.release(deferred);
    bump(&STATS.stopped, 1);
    Ok(())
}

/// Marks `ops` as the ops being removed (`removed_ops`) and points its old
/// hashes at its current ones, or with `!on` clears that.
fn mark_removing(ops: Ops<'_>, on: bool, lock: &FtraceLocked) {
    // SAFETY: `ops` is live and ftrace_lock is held (type invariants of
    // `Ops`).
    unsafe { bindings::ftrace_c_removing(ops.as_ptr(), on) };
    set_removed_ops(on.then_some(ops), lock);
}

/// The start-up counter (the C `ftrace_start_up`): how many started ops
/// want the call sites live. The C readers (module load, the
/// `ftrace_enabled` sysctl) ask [`start_up_count()`] through
/// `rftrace_start_up()`.
static START_UP: FtraceCell<c_int> = FtraceCell::new(0);

/// Adds `n` to the start-up counter.
fn start_up_add(n: c_int, lock: &FtraceLocked) {
    let now = START_UP.get(lock).saturating_add(n);
    START_UP.set(lock, now);
}

/// The start-up counter.
pub(crate) fn start_up_count(lock: &FtraceLocked) -> c_int {
    START_UP.get(lock)
}

/// ftrace has been killed: no update may run.
pub(crate) fn disabled(_lock: &FtraceLocked) -> bool {
    crate::kside::shim::ftrace_c_disabled()
}

/// `__unregister_ftrace_function()`: takes `ops` off the list (it has been
/// stopped by the caller), updates what the shared callers call, and gives
/// the ops its own function back. An ops that is not enabled is refused
/// with a warning (`-EBUSY`), one not on the list with `-EPERM` (C's `-1`).
pub(crate) fn unregister(ops: Ops<'_>, lock: &FtraceLocked) -> Result<(), Error> {
    let flags = ops.flags();
    // The operations before this one have settled, unless this is the
    // roll-back of a start-up that failed half-way (the ops is enabled and
    // on the list, its records not accounted).
    if flags & ops_fl::ADDING == 0 {
        crate::kside::update::settled(lock);
    }
    if kernel::warn_on!(flags & ops_fl::ENABLED == 0) {
        return Err(EBUSY);
    }
    if !registry::unlink(&mut KernelLinks { lock }, ops) {
        return Err(EPERM);
    }
    if ftrace_enabled(lock) {
        update_function(lock);
    }
    // SAFETY: `ops` is live and its functions are written under
    // ftrace_lock.
    unsafe {
        let o = ops.as_ptr();
        (*o).func = (*o).saved_func;
    }
    bump(&STATS.unregistered, 1);
    Ok(())
}

/// What the shared callers are to call (`RFTRACE_CALLEE_*`) and the ops
/// they are to pass, from the head of the list.
pub(crate) fn trace_function(lock: &FtraceLocked) -> (u32, *mut bindings::ftrace_ops) {
    let first = first_ops(lock);
    let more = first.is_some_and(|op| read_next(op) != list_end());
    let (callee, passed) = registry::trace_function(
        first.map(|op| op.flags()),
        more,
        bindings::FTRACE_FORCE_LIST_FUNC != 0,
    );
    let op = match (passed, first) {
        (Passed::First, Some(op)) => op.as_ptr(),
        _ => list_end(),
    };
    let which = match callee {
        Callee::Stub => bindings::RFTRACE_CALLEE_STUB,
        Callee::List => bindings::RFTRACE_CALLEE_LIST,
        Callee::Ops => bindings::RFTRACE_CALLEE_OPS,
    };
    (which, op)
}

/// `update_ftrace_function()`: sets what the shared callers call, and the
/// ops they pass. In the shadow build the kernel's own choice is computed
/// beside it and a difference counted.
pub(crate) fn update_function(lock: &FtraceLocked) {
    let (which, op) = trace_function(lock);
    crate::kside::shadow::trace_function(lock, which, op);
    // SAFETY: under ftrace_lock; `op` is the end marker or an ops on the
    // list.
    unsafe { bindings::ftrace_c_set_trace_function(op, which) };
    bump(&STATS.trace_function_updates, 1);
}

/// The accounting walk of `ops` over the record table
/// (`__ftrace_hash_rec_update()`): one more (`inc`) or one less user on
/// every record its hashes cover. Returns whether any site needs an update
/// pass, or `Err` after a reference count overflow or underflow (already
/// logged; the caller stops ftrace).
///
/// A filter of a few functions is walked function by function, each
/// record found from its ip ([`pages::Finder`]), and the records changed
/// are listed for the update pass ([`crate::kside::dirty`]); a filter of
/// many, or none (every function), walks the whole table, and the next
/// pass visits every record.
pub(crate) fn account_walk(ops: Ops<'_>, inc: bool, lock: &FtraceLocked) -> Result<bool, ()> {
    if ops.flags() & ops_fl::ENABLED == 0 {
        return Ok(false);
    }
    let filter = KHash::of_ops(ops, false);
    let notrace = KHash::of_ops(ops, true);
    // An empty filter is every function; one flagged as naming nothing is
    // not empty, and matches no record.
    let reach = if filter.count() == 0 && !filter.is_nothing() {
        Reach::All
    } else {
        Reach::Filter {
            count: filter.count(),
        }
    };
    bump(&STATS.account_walks, 1);
    let total = STATS
        .records_made
        .load(Relaxed)
        .saturating_sub(STATS.records_released.load(Relaxed));
    // The functions of a small filter, when the pass can be told them.
    let listed = match reach {
        Reach::Filter { count } if crate::kside::dirty::has_room(count, total, lock) => {
            filter.ips()
        }
        _ => None,
    };
    if listed.is_none() {
        crate::kside::dirty::whole(lock);
    }
    let mut walk = Walk {
        reach,
        notrace: &notrace,
        // An empty notrace hash excludes nothing: no lookup per record.
        any_notrace: notrace.count() != 0,
        accounting: crate::kside::decide::Accounting::new(ops, inc),
        listed: listed.is_some(),
        update: false,
        counted: 0,
        overflow: false,
        lock,
    };
    siteset::begin_walk(ops, inc, lock);
    if inc {
        // Every record, or the filter's: room for them before the walk.
        let n = match reach {
            Reach::All => total,
            Reach::Filter { count } => count,
        };
        siteset::expect(n, total, lock);
    }
    match &listed {
        Some(ips) => {
            bump(&STATS.listed_walks, 1);
            let mut finder = pages::Finder::new(lock);
            for &ip in ips.iter() {
                // A function of the hash without a record (its module
                // went) is skipped, as the table walk never meets it.
                if let Some(rec) = finder.find(ip) {
                    if !walk.visit(rec, true) {
                        break;
                    }
                }
            }
        }
        None => {
            for rec in pages::every(lock) {
                let in_filter = match reach {
                    Reach::All => false,
                    Reach::Filter { .. } => filter.contains(rec.ip()),
                };
                if matches!(reach, Reach::Filter { .. }) && !in_filter {
                    continue;
                }
                if !walk.visit(rec, in_filter) {
                    break;
                }
            }
        }
    }
    siteset::end_walk(lock);
    bump(&STATS.checks, walk.counted);
    if walk.overflow {
        siteset::clear(lock);
        Err(())
    } else {
        Ok(walk.update)
    }
}

/// One accounting walk's state, record by record.
struct Walk<'w, 'l> {
    reach: Reach,
    notrace: &'w KHash<'l>,
    any_notrace: bool,
    accounting: crate::kside::decide::Accounting<'l>,
    /// The records changed go on the update pass's list.
    listed: bool,
    update: bool,
    counted: u64,
    overflow: bool,
    lock: &'l FtraceLocked,
}

impl Walk<'_, '_> {
    /// Accounts `rec` (in the filter, or not with a walk over every
    /// function) if the ops covers it. Returns whether to go on.
    fn visit(&mut self, rec: Rec<'_>, in_filter: bool) -> bool {
        if !registry::walk_takes(rec.flags()) {
            return true;
        }
        let ip = rec.ip();
        let in_notrace = self.any_notrace && self.notrace.contains(ip);
        if !registry::walk_matches(self.reach, in_filter, in_notrace) {
            return true;
        }
        if !self.accounting.rec(rec) {
            self.overflow = true;
            return false;
        }
        siteset::account(ip, rec.flags().count(), self.lock);
        if self.listed {
            crate::kside::dirty::touch(ip, self.lock);
        }
        self.counted = self.counted.saturating_add(1);
        // What the update pass will do with the record. With CALL_OPS a
        // live site's literal names its set, which the walk changed: a
        // literal-only change, even when the record's flags stay.
        self.update |= crate::kside::decide::decide_record(rec, true, false).update
            != Update::Ignore
            || (cfg!(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)
                && rec.flags().any(crate::rfcore::flags::ENABLED));
        match self.reach {
            Reach::Filter { count } => self.counted != count,
            Reach::All => true,
        }
    }
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
