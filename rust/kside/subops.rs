// SPDX-License-Identifier: GPL-2.0

//! Sub-ops of a manager ops (function graph's users):
//! `ftrace_startup_subops()`, `ftrace_shutdown_subops()` and
//! `ftrace_hash_move_and_update_subops()`.
//!
//! A sub-ops is never on the ops list: it hangs on its manager's sub-ops
//! list, and the manager, on the ops list, traces the union of its
//! sub-ops' selections ([`manager_hashes()`]). The first sub-ops starts
//! the manager with the sub-ops' hashes, the last one stops it; in
//! between, joining, leaving or changing a filter recomputes the
//! manager's hashes and changes them like any ops' ([`refilter::apply()`]).
//! Every step that fails puts back what it changed.
//!
//! A leaf module with `unsafe` code: the C calls that keep the manager's
//! list of sub-ops and its canonical hashes.

use kernel::{
    bindings,
    error::{
        code::{
            EBUSY,
            EINVAL,
            ENODEV, //
        },
        Result, //
    },
    ffi::c_int,
};

use crate::{
    kside::filter::{
        manager_hashes,
        HashSlot,
        KHash, //
    },
    kside::lock::FtraceLocked,
    kside::ops::Ops,
    kside::refilter,
    kside::registry,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::registry::ops_fl,
};

/// `ops_fl` has no name for it: the ops is a sub-ops of a manager.
const SUBOP: u64 = bindings::FTRACE_OPS_FL_SUBOP as u64;

/// Puts `subops` on `manager`'s list (`on`) or takes it off.
fn attach(manager: Ops<'_>, subops: Ops<'_>, on: bool) {
    // SAFETY: both live, under ftrace_lock (type invariants of `Ops`),
    // which keeps the manager's list; the sub-ops is off the list when
    // added and on it when taken off (the callers' order).
    unsafe { bindings::rftrace_shim_subops_attach(manager.as_ptr(), subops.as_ptr(), on) };
}

/// Whether `manager` has no sub-ops.
fn alone(manager: Ops<'_>, lock: &FtraceLocked) -> bool {
    crate::kside::filter::subops(manager, lock).next().is_none()
}

/// `subops` now belongs to `manager` (or, with `None`, to none): its
/// `managed` link and its `ENABLED | SUBOP` bits.
fn set_managed(subops: Ops<'_>, manager: Option<Ops<'_>>) {
    let raw = manager.map_or(core::ptr::null_mut(), |m| m.as_ptr());
    // SAFETY: a live sub-ops, under ftrace_lock; only C's sub-ops code
    // reads the link, under the same lock.
    unsafe { (*subops.as_ptr()).managed = raw };
    let bits = ops_fl::ENABLED | SUBOP;
    let flags = subops.flags();
    subops.set_flags(if manager.is_some() {
        flags | bits
    } else {
        flags & !bits
    });
}

/// `ftrace_update_ops()`: the manager's filter and notrace hashes become
/// those its sub-ops make now, each changed only if it differs.
fn update_manager(manager: Ops<'_>, lock: &FtraceLocked) -> Result {
    let made = manager_hashes(manager, lock)?;
    for (notrace, new) in [(false, made.filter), (true, made.notrace)] {
        let now = KHash::of_ops(manager, notrace);
        if crate::kside::shim::ftrace_c_hash_equal(new.view(), now.view()) {
            continue;
        }
        refilter::apply(manager, notrace, new, lock)?;
    }
    Ok(())
}

/// `subops` joins (`on`) or leaves a manager that keeps other sub-ops: the
/// manager's hashes follow; if they cannot, the sub-ops goes back to
/// where it was.
fn follow(manager: Ops<'_>, subops: Ops<'_>, on: bool, lock: &FtraceLocked) -> Result {
    attach(manager, subops, on);
    if let Err(e) = update_manager(manager, lock) {
        attach(manager, subops, !on);
        return Err(e);
    }
    set_managed(subops, on.then_some(manager));
    let counter = if on {
        &STATS.subops_started
    } else {
        &STATS.subops_stopped
    };
    bump(counter, 1);
    Ok(())
}

/// `ftrace_startup_subops()`: `subops` joins `manager`, which starts with
/// it if it is the first, or else follows the union of its sub-ops.
pub(crate) fn startup(
    manager: Ops<'_>,
    subops: Ops<'_>,
    command: c_int,
    lock: &FtraceLocked,
) -> Result {
    if registry::disabled(lock) {
        return Err(ENODEV);
    }
    crate::kside::ops::ftrace_c_subops_prepare(manager, subops);
    if kernel::warn_on!(subops.flags() & ops_fl::ENABLED != 0) {
        return Err(EBUSY);
    }
    if !alone(manager, lock) {
        return follow(manager, subops, true, lock);
    }
    // The first: the manager, not started, takes the sub-ops' hashes.
    attach(manager, subops, true);
    let made = manager_hashes(manager, lock);
    attach(manager, subops, false);
    let made = made?;
    let (Some(fslot), Some(nslot)) = (
        HashSlot::of_ops(manager, false),
        HashSlot::of_ops(manager, true),
    ) else {
        return Err(EINVAL);
    };
    // Both are owned: making them fresh allocates nothing.
    let filter = made.filter.into_fresh()?;
    let notrace = made.notrace.into_fresh()?;
    let filter = filter.install(&fslot);
    let notrace = notrace.install(&nslot);
    attach(manager, subops, true);
    match registry::startup(manager, command, lock) {
        Ok(()) => {
            // SAFETY: the manager was not started while its slots held
            // the replaced hashes.
            unsafe {
                filter.keep().free_now();
                notrace.keep().free_now();
            }
            set_managed(subops, Some(manager));
            bump(&STATS.subops_started, 1);
            Ok(())
        }
        Err(e) => {
            attach(manager, subops, false);
            // SAFETY: the start-up failed: the manager is not started and
            // no record counts it, so nothing reads the hashes it had.
            unsafe {
                filter.undo().free_now();
                notrace.undo().free_now();
            }
            Err(e)
        }
    }
}

/// `ftrace_shutdown_subops()`: `subops` leaves `manager`, which stops if
/// it was the last, or else follows the sub-ops left.
pub(crate) fn shutdown(
    manager: Ops<'_>,
    subops: Ops<'_>,
    command: c_int,
    lock: &FtraceLocked,
) -> Result {
    if registry::disabled(lock) {
        return Err(ENODEV);
    }
    if kernel::warn_on!(subops.flags() & ops_fl::ENABLED == 0) {
        return Err(EINVAL);
    }
    attach(manager, subops, false);
    if !alone(manager, lock) {
        // Back on the list, so that `follow()` takes it off again.
        attach(manager, subops, true);
        return follow(manager, subops, false, lock);
    }
    // The last: the manager stops and gets empty hashes again.
    if let Err(e) = registry::shutdown(manager, command, None, lock) {
        attach(manager, subops, true);
        return Err(e);
    }
    // SAFETY: the manager is stopped and off the list; its hashes are
    // freed and replaced by the empty ones, as the C code does.
    unsafe { bindings::ftrace_c_subops_reset(manager.as_ptr()) };
    set_managed(subops, None);
    bump(&STATS.subops_stopped, 1);
    Ok(())
}

/// `ftrace_update_manager()`: `manager` follows its sub-ops' hashes again
/// after one of them changed in place (the function profiler's, which are
/// `global_ops`' own, when the function tracer's filter changes).
pub(crate) fn refresh(manager: Ops<'_>, lock: &FtraceLocked) -> Result {
    if kernel::warn_on!(manager.flags() & SUBOP != 0) {
        return Err(EINVAL);
    }
    update_manager(manager, lock)?;
    bump(&STATS.subops_changes, 1);
    Ok(())
}

/// `ftrace_hash_move_and_update_subops()`: the filter (`notrace` false) or
/// notrace hash of `subops` becomes the functions of `new`, and its
/// manager follows; on failure the sub-ops keeps the hash it had.
pub(crate) fn change(
    subops: Ops<'_>,
    notrace: bool,
    new: KHash<'_>,
    lock: &FtraceLocked,
) -> Result {
    let manager = subops.managed(lock);
    let Some(manager) = manager else {
        kernel::warn_on!(true);
        return Err(EINVAL);
    };
    if kernel::warn_on!(manager.flags() & SUBOP != 0) {
        return Err(EINVAL);
    }
    let slot = HashSlot::of_ops(subops, notrace).ok_or(EINVAL)?;
    let installed = new.take_entries()?.install(&slot);
    match update_manager(manager, lock) {
        Ok(()) => {
            installed.keep().free_after_grace_period();
            bump(&STATS.subops_changes, 1);
            Ok(())
        }
        Err(e) => {
            installed.undo().free_after_grace_period();
            Err(e)
        }
    }
}
