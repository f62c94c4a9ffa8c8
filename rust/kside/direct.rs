// SPDX-License-Identifier: GPL-2.0

//! Direct calls: `register_ftrace_direct()`, `unregister_ftrace_direct()`
//! and `modify_ftrace_direct()` of Linux 7.2.
//!
//! A direct ops makes the sites of its functions call one trampoline (its
//! target) directly. Each function has at most one target, kept in the
//! kernel's direct-functions table (`ip -> target`, an `ftrace_hash`
//! published with RCU, changed under `direct_mutex`), which the list
//! function reads when a site is shared with other ops. Here:
//!
//! - registering refuses what 7.2 refuses ([`rfcore::direct::admit()`]),
//!   then, holding `direct_mutex` and `ftrace_lock`, refuses functions
//!   that have a target already (`-EBUSY`), builds a new table with the
//!   ops' functions added ([`NewTable`]), installs it ([`Installed`]) and
//!   starts the ops with the registry's own start-up; if the start-up
//!   fails the old table goes back, so nothing is left behind;
//! - unregistering stops the ops (the registry's shut-down) and publishes
//!   a table without its functions under `direct_mutex`, then waits for
//!   the grace periods with no lock held;
//! - changing the target starts a stub ops over the same functions, so
//!   that their sites go through the list function meanwhile, checks the
//!   IPMODIFY claims, points the table's entries and the ops at the new
//!   target, and stops the stub.
//!
//! The replaced table is freed after an RCU-tasks grace period, since
//! trampolines may be reading it.
//!
//! A leaf module with `unsafe` code: the C calls on `direct_mutex`, the
//! table and the direct fields of an ops.

use core::marker::PhantomData;

use kernel::{
    alloc::KVVec,
    bindings,
    error::{
        code::{
            EBUSY,
            EINVAL,
            ENOMEM, //
        },
        to_result,
        Error,
        Result, //
    },
    ffi::c_int,
    sync::atomic::{
        Atomic,
        Relaxed,
        Release, //
    },
};

use crate::{
    bump,
    kside::env::{
        c_word,
        Ops, //
    },
    kside::hash::KHash,
    kside::ipmodify,
    kside::lock::{
        DirectLocked,
        FtraceLocked, //
    },
    kside::registry,
    rfcore::direct::{
        self as rules,
        Asking,
        Refusal, //
    },
    STATS,
};

// The flag bits are the kernel's.
const _: () = {
    assert!(rules::INITIALIZED == bindings::FTRACE_OPS_FL_INITIALIZED as u64);
    assert!(rules::DIRECT == bindings::FTRACE_OPS_FL_DIRECT as u64);
};

/// The errno 7.2 gives for a refusal.
fn errno(r: Refusal) -> Error {
    match r {
        Refusal::Invalid => EINVAL,
        Refusal::Busy => EBUSY,
    }
}

/// The direct-functions table's slot (`direct_functions`).
///
/// # Invariants
///
/// `slot` is the kernel's table pointer, written only under
/// `direct_mutex`, held for `'a`.
struct Table<'a> {
    slot: *mut *mut bindings::ftrace_hash,
    _lock: PhantomData<&'a DirectLocked>,
}

impl<'a> Table<'a> {
    fn of(_lock: &'a DirectLocked) -> Self {
        let slot = crate::kside::shim::ftrace_c_direct_slot();
        // INVARIANT: the table's slot, with `direct_mutex` held for `'a`.
        Table {
            slot,
            _lock: PhantomData,
        }
    }

    fn atomic(&self) -> &Atomic<*mut bindings::ftrace_hash> {
        // SAFETY: a static pointer, written only under direct_mutex (held,
        // type invariants) and read by RCU readers with
        // rcu_dereference_sched(), which an atomic access does not upset.
        unsafe { Atomic::from_ptr(self.slot) }
    }

    /// The table now (never null: `EMPTY_HASH` when it has no entry).
    fn current(&self) -> *mut bindings::ftrace_hash {
        self.atomic().load(Relaxed)
    }

    /// Publishes `new` for the readers (a release store, as
    /// `rcu_assign_pointer()`), keeping the table it replaces until the
    /// change is kept or undone.
    fn install(&self, new: NewTable) -> Installed<'a> {
        let old = self.current();
        self.atomic().store(new.0, Release);
        // INVARIANT: `new` is in the slot now, and replaced `old`.
        Installed {
            slot: Table {
                slot: self.slot,
                _lock: PhantomData,
            },
            new: new.0,
            old,
        }
    }
}

/// A direct-functions table built and not yet published.
///
/// # Invariants
///
/// `.0` is a live hash nobody else has.
#[must_use = "a new table is installed"]
struct NewTable(*mut bindings::ftrace_hash);

impl NewTable {
    /// The entries of `table` and, for each function of `hash`, one
    /// calling `addr`, in a table `bits` wide.
    fn build(
        table: *mut bindings::ftrace_hash,
        hash: &KHash<'_>,
        addr: u64,
        bits: u32,
    ) -> Result<Self> {
        // SAFETY: `table` is the live table, kept by direct_mutex (the
        // caller's `Table`), and `hash` a live ops hash under ftrace_lock;
        // both are only read.
        let new = unsafe {
            bindings::rftrace_shim_direct_table_with(table, hash.as_ptr(), c_word(addr), bits)
        };
        if new.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: just allocated, seen by nobody.
        Ok(NewTable(new))
    }
}

impl NewTable {
    /// The entries of `table` but those of `ops`' functions that call
    /// `addr`, in a table as wide.
    fn without(
        table: *mut bindings::ftrace_hash,
        ops: *mut bindings::ftrace_ops,
        addr: u64,
        _lock: &DirectLocked,
    ) -> Result<Self> {
        // SAFETY: `table` is the live table and `ops` a live direct ops
        // whose filter only changes under direct_mutex, which is held;
        // both are only read.
        let new = unsafe { bindings::rftrace_shim_direct_table_without(table, ops, c_word(addr)) };
        if new.is_null() {
            return Err(ENOMEM);
        }
        // INVARIANT: just allocated, seen by nobody.
        Ok(NewTable(new))
    }
}

/// The grace-period waits an unregistration left for after `direct_mutex`
/// is dropped (`ftrace_c_unregister_deferred()`).
///
/// # Invariants
///
/// `.0` is null or a record from `ftrace_c_unregister_deferred()` that
/// nothing else finishes.
#[must_use = "an unregistration returns only after its grace periods"]
struct Waits(*mut bindings::ftrace_release);

impl Waits {
    /// Waits until no task can be on the ops' code any more, then frees
    /// what it left. Called without `direct_mutex` and `ftrace_lock`.
    fn finish(self) {
        // SAFETY: a record of ftrace_c_unregister_deferred() or null,
        // finished once (type invariants).
        unsafe { bindings::ftrace_c_release_finish(self.0) };
    }
}

/// A table published by a change that is then kept or undone.
///
/// # Invariants
///
/// The slot holds `new`, which replaced `old`; `direct_mutex` is held for
/// `'a`.
#[must_use = "an installed table must be kept or undone"]
struct Installed<'a> {
    slot: Table<'a>,
    new: *mut bindings::ftrace_hash,
    old: *mut bindings::ftrace_hash,
}

impl Installed<'_> {
    /// The change stays: the replaced table is to be freed.
    fn keep(self) -> Retired {
        Retired(self.old)
    }

    /// The change is undone: the replaced table goes back and the new one
    /// is to be freed.
    fn undo(self) -> Retired {
        self.slot.atomic().store(self.old, Release);
        Retired(self.new)
    }
}

/// A table taken out of the slot, which readers may still be on.
///
/// # Invariants
///
/// The table was published, is no longer, and nothing else frees it.
#[must_use = "a replaced table must be freed after a grace period"]
struct Retired(*mut bindings::ftrace_hash);

impl Retired {
    /// Frees the table after an RCU-tasks grace period (`EMPTY_HASH` is
    /// never freed).
    fn free_after_grace_period(self) {
        // SAFETY: ours alone to free (type invariants); call_rcu_tasks()
        // waits for the readers, trampolines included.
        unsafe { bindings::ftrace_c_direct_free_table(self.0) };
    }
}

/// `ops` becomes a direct ops calling `addr` (its function, flags,
/// trampoline and target), or (`on` false) keeps no function or
/// trampoline, as 7.2 leaves it for another registration.
fn make_direct(ops: Ops<'_>, addr: u64, on: bool) {
    // SAFETY: a live ops under ftrace_lock (type invariants of `Ops`),
    // not started when `on`, or no longer started when not.
    unsafe { bindings::ftrace_c_direct_ops(ops.as_ptr(), c_word(addr), on) };
}

/// `register_ftrace_direct()`.
pub(crate) fn register(
    ops: Ops<'_>,
    addr: u64,
    direct: &DirectLocked,
    lock: &FtraceLocked,
) -> Result {
    let props = ops.props();
    let filter = KHash::of_ops(ops, false);
    rules::admit(&Asking {
        flags: ops.flags(),
        has_func: ops.has_func(),
        has_trampoline: props.trampoline,
        filter_empty: filter.count() == 0,
    })
    .map_err(errno)?;
    let table = Table::of(direct);
    let now = table.current();
    // SAFETY: both live: the table under direct_mutex, the filter under
    // ftrace_lock; only read.
    if unsafe { bindings::rftrace_shim_hash_meets(filter.as_ptr(), now) } {
        return Err(errno(Refusal::Busy));
    }
    // SAFETY: the live table, only read.
    let in_table = crate::kside::env::word(unsafe { bindings::rftrace_shim_hash_count(now) });
    let bits = rules::table_bits(filter.count(), in_table);
    let new = NewTable::build(now, &filter, addr, bits)?;
    // SAFETY: the ops' filter, under ftrace_lock: each entry records the
    // target (only the `direct` word of its entries is written).
    unsafe {
        bindings::rftrace_shim_direct_retarget(core::ptr::null_mut(), filter.as_ptr(), c_word(addr))
    };
    let installed = table.install(new);
    make_direct(ops, addr, true);
    match registry::startup(ops, 0, lock) {
        Ok(()) => {
            installed.keep().free_after_grace_period();
            bump(&STATS.direct_registered, 1);
            Ok(())
        }
        Err(e) => {
            make_direct(ops, addr, false);
            installed.undo().free_after_grace_period();
            Err(e)
        }
    }
}

/// The checks of `unregister_ftrace_direct()` and `modify_ftrace_direct()`
/// on the ops' flags.
fn admit_change(ops: *mut bindings::ftrace_ops) -> Result {
    FtraceLocked::with(|lock| {
        // SAFETY: the caller's ops (live for the call, the entries'
        // contract), under ftrace_lock.
        let ops = unsafe { Ops::from_raw(ops, lock) }.ok_or(EINVAL)?;
        let multi = crate::kside::env::word(crate::kside::shim::ftrace_c_direct_multi_flags());
        rules::admit_change(ops.flags(), multi).map_err(errno)
    })
}

/// `unregister_ftrace_direct()`.
///
/// The ops is stopped and its functions leave the table under
/// `direct_mutex`; the grace-period waits come after the mutex is dropped,
/// since every `register_ftrace_function()` takes it first. The replaced
/// table is freed after an RCU-tasks grace period, not in place as 7.2
/// does under readers of the table. Out of memory for the new table, the
/// entries are taken out in place after the waits, with `ftrace_lock`
/// held as well so that no update pass reads them meanwhile.
///
/// # Safety
///
/// `ops` is a live ops, registered with `register_ftrace_direct()` or not;
/// the caller holds neither `direct_mutex` nor `ftrace_lock`.
pub(crate) unsafe fn unregister(
    ops: *mut bindings::ftrace_ops,
    addr: u64,
    free_filters: bool,
) -> Result {
    admit_change(ops)?;
    let (ret, waits, retired) = DirectLocked::with(|direct| {
        let mut ret: c_int = 0;
        // SAFETY: a live ops; the shut-down takes ftrace_lock itself and
        // leaves its waits in the record (or waits, without one).
        let waits = Waits(unsafe { bindings::ftrace_c_unregister_deferred(ops, &mut ret) });
        let table = Table::of(direct);
        let retired = NewTable::without(table.current(), ops, addr, direct)
            .map(|new| table.install(new).keep())
            .ok();
        (ret, waits, retired)
    });
    waits.finish();
    DirectLocked::with(|_direct| {
        match retired {
            Some(retired) => retired.free_after_grace_period(),
            None => FtraceLocked::with(|_lock| {
                // SAFETY: under direct_mutex and ftrace_lock: the entries
                // of the ops' functions that call `addr` go, in place.
                unsafe { bindings::ftrace_c_direct_forget(ops, c_word(addr)) }
            }),
        }
        // SAFETY: under direct_mutex, after the grace periods: the ops
        // keeps no function for another registration.
        unsafe { bindings::ftrace_c_direct_ops(ops, c_word(addr), false) };
    });
    if free_filters {
        // SAFETY: a live ops, stopped.
        unsafe { bindings::ftrace_free_filter(ops) };
    }
    bump(&STATS.direct_unregistered, 1);
    to_result(ret)
}

/// The IPMODIFY check of a direct ops' target change
/// (`__ftrace_hash_update_ipmodify()` from `update_ftrace_direct_mod()` or
/// [`modify()`]): the walk takes `ftrace_lock` itself, and the ops is asked
/// about the functions it shares with an IPMODIFY ops after the lock is
/// dropped, as 7.2 asks it without the lock.
///
/// # Safety
///
/// `ops` is a live, initialised ops, `old` and `new` are null or hashes
/// nobody changes during the call; the caller holds `direct_mutex` and not
/// `ftrace_lock`.
pub(crate) unsafe fn retarget_claims(
    ops: *mut bindings::ftrace_ops,
    old: *mut bindings::ftrace_hash,
    new: *mut bindings::ftrace_hash,
) -> Result {
    let mut later = KVVec::new();
    FtraceLocked::with(|lock| {
        // SAFETY: `ops` is live (function contract), under ftrace_lock.
        let handle = unsafe { Ops::from_raw(ops, lock) }.ok_or(EINVAL)?;
        // SAFETY: live hashes or null, unchanged during the call (function
        // contract), under `lock`.
        let (old, new) = unsafe { (KHash::from_c(old, lock), KHash::from_c(new, lock)) };
        let asks = ipmodify::Asks::Later(&mut later);
        ipmodify::update(handle, old.as_ref(), new.as_ref(), true, lock, asks)
    })?;
    for ip in later {
        // SAFETY: `ops` is live and the caller holds `direct_mutex`, under
        // which 7.2 asks a direct ops too.
        let answer = unsafe { crate::kside::env::share_ipmodify_self_unlocked(ops, ip) };
        ipmodify::share_answer(answer)?;
    }
    Ok(())
}

/// `modify_ftrace_direct()` (`lock`: takes `direct_mutex`) and
/// `modify_ftrace_direct_nolock()`.
///
/// # Safety
///
/// `ops` is a live ops; the caller does not hold `ftrace_lock`, and holds
/// `direct_mutex` if and only if `lock` is false.
pub(crate) unsafe fn modify(ops: *mut bindings::ftrace_ops, addr: u64, lock: bool) -> Result {
    admit_change(ops)?;
    let run = |direct: &DirectLocked| -> Result {
        // SAFETY: the ops is live (function contract); the stub ops is
        // C's static, initialised by the call.
        let tmp = unsafe { bindings::ftrace_c_direct_tmp_ops(ops, c_word(addr)) };
        let filter = FtraceLocked::with(|lock| -> Result<_> {
            // SAFETY: the static stub ops, live forever.
            let stub = unsafe { Ops::from_raw(tmp, lock) }.ok_or(EINVAL)?;
            registry::startup(stub, 0, lock)?;
            // The stub shares the ops' hashes (C set it up so).
            Ok(KHash::of_ops(stub, false).as_ptr())
        })?;
        // SAFETY: the IPMODIFY check of a target change: a live ops and
        // its filter (which only its owner changes, and not during this
        // call), with direct_mutex held and ftrace_lock not.
        let ret =
            unsafe { retarget_claims(ops, filter, filter) }.map_or_else(|e| e.to_errno(), |()| 0);
        if ret == 0 {
            FtraceLocked::with(|lock| {
                let table = Table::of(direct);
                // SAFETY: the table under direct_mutex and the ops' filter
                // under ftrace_lock; only the targets of the table's
                // entries for the ops' functions are written, one word
                // each.
                unsafe {
                    bindings::rftrace_shim_direct_retarget(table.current(), filter, c_word(addr))
                };
                // SAFETY: a live ops (function contract).
                if let Some(handle) = unsafe { Ops::from_raw(ops, lock) } {
                    handle.set_direct_call(addr);
                }
            });
        }
        // SAFETY: the stub started above; unregister_ftrace_function()
        // takes ftrace_lock itself.
        unsafe { bindings::unregister_ftrace_function(tmp) };
        if ret == 0 {
            bump(&STATS.direct_retargeted, 1);
        }
        to_result(ret)
    };
    if lock {
        DirectLocked::with(run)
    } else {
        DirectLocked::held(run).unwrap_or(Err(EINVAL))
    }
}

/// A hash the batch interface made for itself (7.2's `hash_add()` and
/// `hash_sub()` copies), freed on drop unless it was handed on.
///
/// # Invariants
///
/// `.0` is null or a live hash nobody else has.
struct Own(*mut bindings::ftrace_hash);

impl Own {
    /// The hash, which the caller now owns (or null).
    fn give(self) -> *mut bindings::ftrace_hash {
        let p = self.0;
        core::mem::forget(self);
        p
    }
}

impl Drop for Own {
    fn drop(&mut self) {
        // SAFETY: ours alone (type invariants); free_ftrace_hash() takes
        // null too.
        unsafe { bindings::free_ftrace_hash(self.0) };
    }
}

/// The number of functions of a live hash (0 for null).
fn count(hash: *mut bindings::ftrace_hash) -> u64 {
    // SAFETY: only reads the count of a live hash or null, which the
    // callers keep live (their contracts).
    crate::kside::env::word(unsafe { bindings::rftrace_shim_hash_count(hash) })
}

/// `update_ftrace_direct_add()`: the functions of `hash`, each entry
/// naming its own target, join the direct ops `ops`, which is registered
/// if it traces none yet. A function with a target already is refused
/// (`-EINVAL`, as 7.2), and so is an ops to register that has a function,
/// a trampoline or is enabled. A new direct table is published under
/// `direct_mutex` and the old one freed after an RCU-tasks grace period.
///
/// # Safety
///
/// `ops` is a live ops and `hash` a live hash that nobody changes during
/// the call; the caller holds neither `direct_mutex` nor `ftrace_lock`.
pub(crate) unsafe fn batch_add(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
) -> Result {
    if count(hash) == 0 {
        return Err(EINVAL);
    }
    let (ret, retired, registered) =
        DirectLocked::with(|direct| -> (Result, Option<Retired>, bool) {
            let table = Table::of(direct);
            // SAFETY: both live (the table under direct_mutex), only read.
            if unsafe { bindings::rftrace_shim_hash_meets(hash, table.current()) } {
                return (Err(EINVAL), None, false);
            }
            // SAFETY: a live ops; its filter changes only under direct_mutex
            // for a direct ops.
            let old_filter = unsafe { bindings::ftrace_c_direct_filter(ops) };
            let register = count(old_filter) == 0;
            if register {
                let busy = FtraceLocked::with(|lock| {
                    // SAFETY: a live ops (function contract), under ftrace_lock.
                    match unsafe { Ops::from_raw(ops, lock) } {
                        Some(o) => {
                            o.has_func()
                                || o.props().trampoline
                                || o.flags() & crate::rfcore::registry::ops_fl::ENABLED != 0
                        }
                        None => true,
                    }
                });
                if busy {
                    return (Err(EINVAL), None, false);
                }
            }
            // SAFETY: live hashes (or a null filter), only read.
            let new_filter = Own(unsafe { bindings::ftrace_c_direct_hash_add(old_filter, hash) });
            if new_filter.0.is_null() {
                return (Err(ENOMEM), None, false);
            }
            // SAFETY: as above, the table kept by direct_mutex.
            let new_table = unsafe { bindings::ftrace_c_direct_hash_add(table.current(), hash) };
            if new_table.is_null() {
                return (Err(ENOMEM), None, false);
            }
            // INVARIANT: just allocated, seen by nobody.
            let installed = table.install(NewTable(new_table));
            let ret = if register {
                let filter = new_filter.give();
                // SAFETY: a live ops that traces nothing yet takes the new
                // filter as its own.
                unsafe { bindings::ftrace_c_direct_batch_ops(ops, filter, true) };
                // SAFETY: a live ops; takes ftrace_lock itself, direct_mutex
                // is held as 7.2 holds it here.
                let ret = unsafe { bindings::ftrace_c_direct_register(ops) };
                if ret != 0 {
                    // SAFETY: the ops did not start: its old (empty) filter
                    // goes back, and the new one is ours again.
                    unsafe { bindings::ftrace_c_direct_batch_ops(ops, old_filter, false) };
                    drop(Own(filter));
                } else {
                    // The ops owns the new filter; its old one was empty.
                    drop(Own(old_filter));
                }
                ret
            } else {
                // SAFETY: a live, enabled ops; the filter is copied.
                FtraceLocked::with(|_lock| unsafe {
                    bindings::ftrace_c_direct_update_filter(ops, new_filter.0)
                })
            };
            let retired = if ret == 0 {
                installed.keep()
            } else {
                installed.undo()
            };
            (to_result(ret), Some(retired), register)
        });
    if let Some(retired) = retired {
        retired.free_after_grace_period();
    }
    if ret.is_ok() && registered {
        bump(&STATS.direct_registered, 1);
    }
    ret
}

/// `update_ftrace_direct_del()`: the functions of `hash` (each entry with
/// the target it has in the table) leave the direct ops `ops`, which is
/// unregistered when none is left. A new direct table without them is
/// published under `direct_mutex`; an unregistration waits for its grace
/// periods after `direct_mutex` is dropped, unlike 7.2.
///
/// # Safety
///
/// As for [`batch_add()`].
pub(crate) unsafe fn batch_del(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
) -> Result {
    if count(hash) == 0 {
        return Err(EINVAL);
    }
    admit_change(ops)?;
    let (ret, retired, waits) = DirectLocked::with(|direct| -> (Result, Option<Retired>, _) {
        let table = Table::of(direct);
        let now = table.current();
        // SAFETY: a live ops, its filter kept by direct_mutex.
        let old_filter = unsafe { bindings::ftrace_c_direct_filter(ops) };
        // SAFETY: live hashes, only read.
        if now == crate::kside::shim::ftrace_c_direct_empty()
            || count(old_filter) == 0
            || !unsafe { bindings::rftrace_shim_direct_table_holds(now, hash) }
        {
            return (Err(EINVAL), None, None);
        }
        // SAFETY: live hashes, only read; each function of `hash` is in
        // both (checked above for the table; the ops traces its table
        // entries).
        let new_filter = Own(unsafe { bindings::ftrace_c_direct_hash_sub(old_filter, hash) });
        if new_filter.0.is_null() {
            return (Err(ENOMEM), None, None);
        }
        // SAFETY: as above.
        let new_table = unsafe { bindings::ftrace_c_direct_hash_sub(now, hash) };
        if new_table.is_null() {
            return (Err(ENOMEM), None, None);
        }
        let mut waits = None;
        let ret = if count(new_filter.0) == 0 {
            let mut ret: c_int = 0;
            // SAFETY: a live ops; the shut-down takes ftrace_lock itself
            // and leaves its waits in the record.
            waits = Some(Waits(unsafe {
                bindings::ftrace_c_unregister_deferred(ops, &mut ret)
            }));
            ret
        } else {
            // SAFETY: a live, enabled ops; the filter is copied.
            FtraceLocked::with(|_lock| unsafe {
                bindings::ftrace_c_direct_update_filter(ops, new_filter.0)
            })
        };
        // INVARIANT: just allocated, seen by nobody.
        let new_table = NewTable(new_table);
        let retired = if ret == 0 {
            table.install(new_table).keep()
        } else {
            // Never published: nobody reads it.
            Retired(new_table.0)
        };
        (to_result(ret), Some(retired), waits)
    });
    let unregistered = waits.is_some() && ret.is_ok();
    if let Some(waits) = waits {
        waits.finish();
    }
    if unregistered {
        // SAFETY: the ops is stopped and nothing runs its code any more:
        // it keeps no function and no filter, for another registration.
        DirectLocked::with(|_direct| unsafe { bindings::ftrace_c_direct_batch_reset(ops) });
        bump(&STATS.direct_unregistered, 1);
    }
    if let Some(retired) = retired {
        retired.free_after_grace_period();
    }
    ret
}

/// `update_ftrace_direct_mod()` (`lock`: takes `direct_mutex`): the
/// functions of `hash` get the targets its entries name. A stub ops holds
/// them on the list function meanwhile, as for [`modify()`].
///
/// # Safety
///
/// `ops` is a live ops and `hash` a live hash nobody changes during the
/// call; the caller does not hold `ftrace_lock`, and holds `direct_mutex`
/// if and only if `lock` is false.
pub(crate) unsafe fn batch_mod(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
    lock: bool,
) -> Result {
    if count(hash) == 0 {
        return Err(EINVAL);
    }
    admit_change(ops)?;
    let run = |direct: &DirectLocked| -> Result {
        let table = Table::of(direct);
        // SAFETY: a live ops, its filter kept by direct_mutex.
        let filter = unsafe { bindings::ftrace_c_direct_filter(ops) };
        if table.current() == crate::kside::shim::ftrace_c_direct_empty() || filter.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: the static stub, initialised by the call, covering the
        // functions of `hash` (live for the call).
        let tmp = unsafe { bindings::ftrace_c_direct_batch_tmp_ops(hash) };
        // SAFETY: a live ops; takes ftrace_lock itself.
        to_result(unsafe { bindings::ftrace_c_direct_register(tmp) })?;
        // SAFETY: the IPMODIFY check of a target change: a live ops and its
        // filter, with direct_mutex held and ftrace_lock not.
        let ret = unsafe { retarget_claims(ops, filter, filter) };
        if ret.is_ok() {
            FtraceLocked::with(|_lock| {
                // SAFETY: the table under direct_mutex, `hash` live; only
                // the targets of the table's entries are written, one word
                // each, while the stub holds their sites on the list.
                unsafe { bindings::rftrace_shim_direct_table_retarget(table.current(), hash) }
            });
            bump(&STATS.direct_retargeted, 1);
        }
        // SAFETY: the stub started above; a static ops, so nothing waits.
        unsafe { bindings::unregister_ftrace_function(tmp) };
        ret
    };
    if lock {
        DirectLocked::with(run)
    } else {
        DirectLocked::held(run).unwrap_or(Err(EINVAL))
    }
}

/// Runs `register()` for C: takes `direct_mutex`, then `ftrace_lock`.
///
/// # Safety
///
/// `ops` is a live ops; the caller holds neither lock.
pub(crate) unsafe fn register_locked(ops: *mut bindings::ftrace_ops, addr: u64) -> c_int {
    DirectLocked::with(|direct| {
        FtraceLocked::with(|lock| {
            // SAFETY: a live ops (function contract), under ftrace_lock.
            let Some(handle) = (unsafe { Ops::from_raw(ops, lock) }) else {
                return EINVAL.to_errno();
            };
            register(handle, addr, direct, lock).map_or_else(|e| e.to_errno(), |()| 0)
        })
    })
}
