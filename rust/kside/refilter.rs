// SPDX-License-Identifier: GPL-2.0

//! Filter and notrace changes of an ops: what the C code does in
//! `__ftrace_hash_move_and_update_ops()` and the functions it calls
//! (`ftrace_hash_move()`, the accounting walks of
//! `ftrace_hash_rec_update_modify()`, `ftrace_ops_update_code()`,
//! `ftrace_run_modify_code()`).
//!
//! A change goes through typed steps: the new functions are moved out of
//! the caller's hash into a [`Fresh`] one that nobody sees yet; an
//! IPMODIFY ops' claims are checked against it (a refusal has changed
//! nothing); the ops, and every ops sharing its hashes, leave the records
//! they cover, the new hash is published and they come back; then the
//! update pass runs for the ops the sites follow, marked as
//! [`Modifying`] with the hashes it had, and the replaced hash is freed
//! after a grace period. The decisions (who is walked again, who the
//! pass runs for) are [`crate::rfcore::registry`]'s; tracefs parsing, hash
//! allocation and the sub-ops' dispatch stay C.
//!
//! A leaf module with `unsafe` code: the C calls that mark an ops as
//! modifying and read whether it shares `global_ops`' hashes.

use kernel::{
    bindings,
    error::{
        code::EINVAL,
        Result, //
    },
    ffi::c_int,
};

use crate::{
    kside::filter::{
        HashSlot,
        KHash, //
    },
    kside::ipmodify,
    kside::lock::FtraceLocked,
    kside::ops::Ops,
    kside::registry,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::registry::{
        change_refused,
        modifier,
        rewalked,
        Sharing, //
    },
};

/// The hashes an ops had before a change, for the trampoline finders
/// while the update pass runs (C's `ops->old_hash`). Only handed back to
/// C, never read here.
#[derive(Clone, Copy)]
pub(crate) struct OldHashes {
    filter: *mut bindings::ftrace_hash,
    notrace: *mut bindings::ftrace_hash,
}

impl OldHashes {
    /// The hashes `ops` has now.
    fn of_ops(ops: Ops<'_>) -> Self {
        OldHashes {
            filter: KHash::of_ops(ops, false).as_ptr(),
            notrace: KHash::of_ops(ops, true).as_ptr(),
        }
    }

    /// Hashes a C caller saved.
    pub(crate) fn from_c(
        filter: *mut bindings::ftrace_hash,
        notrace: *mut bindings::ftrace_hash,
    ) -> Self {
        OldHashes { filter, notrace }
    }
}

/// An ops whose sites the update pass is bringing in line with changed
/// hashes: marked `FTRACE_OPS_FL_MODIFYING`, its old hashes where the
/// trampoline finders read them. Made and ended by [`run_modify_code()`].
///
/// # Invariants
///
/// `ops` is marked as modifying, with the old hashes set.
#[must_use = "the modifying mark must be cleared"]
struct Modifying<'a> {
    ops: Ops<'a>,
    lock: &'a FtraceLocked,
}

impl<'a> Modifying<'a> {
    fn begin(ops: Ops<'a>, old: OldHashes, lock: &'a FtraceLocked) -> Self {
        // SAFETY: `ops` is live and ftrace_lock is held (type invariants
        // of `Ops`); the hashes are only stored for the C readers.
        unsafe { bindings::ftrace_c_modifying(ops.as_ptr(), old.filter, old.notrace, true) };
        // INVARIANT: just marked.
        Modifying { ops, lock }
    }

    fn run(self, command: c_int) {
        crate::kside::under_lock::run_update_code(self.lock, command);
        // SAFETY: as in `begin()`; clears the mark and the old hashes.
        unsafe {
            bindings::ftrace_c_modifying(
                self.ops.as_ptr(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                false,
            )
        };
    }
}

/// `ftrace_run_modify_code()`: the update pass with `command`, `ops`
/// marked as modifying from the hashes `old` for its duration.
pub(crate) fn run_modify_code(ops: Ops<'_>, command: c_int, old: OldHashes, lock: &FtraceLocked) {
    Modifying::begin(ops, old, lock).run(command);
    bump(&STATS.modify_passes, 1);
}

/// What a filter change needs to know of `op`.
fn sharing(op: Ops<'_>) -> Sharing {
    let global_hash = crate::kside::ops::ftrace_c_shares_global_hash(op);
    Sharing {
        enabled: op.flags() & crate::rfcore::registry::ops_fl::ENABLED != 0,
        global_hash,
    }
}

/// The accounting walks of the ops a change of `ops` touches, all leaving
/// (`inc` false) or all coming back. A reference count overflow or
/// underflow stops ftrace, as C's `FTRACE_WARN_ON()` does.
fn walk_all(ops: Ops<'_>, inc: bool, lock: &FtraceLocked) {
    let links = registry::links(lock);
    for op in rewalked(&links, ops, sharing) {
        if registry::account_walk(op, inc, lock).is_err() {
            kernel::warn_on!(true);
            crate::kside::under_lock::kill(lock);
        }
    }
}

/// `__ftrace_hash_move_and_update_ops()`: `ops`'s filter (`notrace`
/// false) or notrace hash becomes the functions of `new`, which is left
/// empty for its owner to free. Returns the errno C returns for it
/// (`-EINVAL` for a notrace hash of an IPMODIFY ops, `-ENOMEM`, or the
/// IPMODIFY refusal) with nothing changed.
pub(crate) fn apply(ops: Ops<'_>, notrace: bool, new: KHash<'_>, lock: &FtraceLocked) -> Result {
    if change_refused(ops.flags(), notrace) {
        return Err(EINVAL);
    }
    let slot = HashSlot::of_ops(ops, notrace).ok_or(EINVAL)?;
    let fresh = new.take_entries()?;
    let old = OldHashes::of_ops(ops);
    if !notrace {
        ipmodify::change(ops, fresh.hash(), lock)?;
    }
    walk_all(ops, false, lock);
    let retired = fresh.publish(&slot);
    walk_all(ops, true, lock);
    let links = registry::links(lock);
    if let Some(op) = modifier(&links, ops, registry::ftrace_enabled(lock), sharing) {
        run_modify_code(op, bindings::FTRACE_UPDATE_CALLS as c_int, old, lock);
    }
    retired.free_after_grace_period();
    bump(&STATS.filter_changes, 1);
    crate::kside::update::settled(lock);
    Ok(())
}
