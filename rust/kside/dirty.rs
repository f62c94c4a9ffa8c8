// SPDX-License-Identifier: GPL-2.0

//! The kernel side of [`crate::rfcore::dirty`]: the registry's one list of
//! the records the next update pass visits, kept under `ftrace_lock`.
//!
//! The accounting walk over a small filter lists each record it changes
//! ([`touch`]); a walk over every function, or one over more functions
//! than a pass over them would save, asks for the whole table ([`whole`]).
//! The update pass ([`super::update::replace_all`]) walks what
//! [`pass`] gives it, and the list starts again.

use kernel::alloc::KVVec;

use super::lock::{
    FtraceLocked,
    FtraceState, //
};
use crate::rfcore::dirty::{
    Dirty,
    Scope, //
};

/// A pass over a listed record costs a lookup (the groups' bounds, a
/// binary search) against a check of one record in a whole pass: a list
/// longer than the table's records divided by this is no cheaper than the
/// whole table.
pub(crate) const CUT: u64 = 8;

static DIRTY: FtraceState<Option<Dirty<KVVec<u64>>>> = FtraceState::new(None, reset);

/// A call missed the list: what it was to add is lost, so the next pass
/// visits every record.
fn reset(d: &mut Option<Dirty<KVVec<u64>>>) {
    if let Some(d) = d {
        d.whole();
    }
}

/// The list's limit for a table of `records`.
fn limit(records: u64) -> usize {
    usize::try_from(records / CUT).unwrap_or(usize::MAX)
}

/// Whether a walk over `n` functions, of a table of `records`, is to list
/// the records it changes: the list has room for them.
pub(crate) fn has_room(n: u64, records: u64, lock: &FtraceLocked) -> bool {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    DIRTY
        .with(lock, |d| {
            d.as_mut().is_some_and(|d| {
                d.set_limit(limit(records));
                d.has_room(n)
            })
        })
        .unwrap_or(false)
}

/// The record at `ip` changed: the next pass visits it.
pub(crate) fn touch(ip: u64, lock: &FtraceLocked) {
    DIRTY.with(lock, |d| {
        if let Some(d) = d {
            d.touch(ip);
        }
    });
}

/// The next pass visits every record.
pub(crate) fn whole(lock: &FtraceLocked) {
    DIRTY.with(lock, |d| {
        if let Some(d) = d {
            d.whole();
        }
    });
}

/// Runs the update pass `f` (which enables the sites, or with `enable`
/// false disables them) over the records it is to visit, then starts the
/// list again. The first pass, and any pass whose list cannot be had, is
/// over the whole table.
pub(crate) fn pass(enable: bool, lock: &FtraceLocked, f: impl FnOnce(Scope<'_>)) {
    let mut f = Some(f);
    DIRTY.with(lock, |d| {
        let d = d.get_or_insert_with(|| Dirty::new(KVVec::new(), KVVec::new(), 0));
        if let Some(f) = f.take() {
            f(d.scope(enable));
        }
        d.done(enable);
    });
    if let Some(f) = f {
        f(Scope::Whole);
    }
}

/// Calls `f` with the ip of every record changed since the pass before
/// last (the last pass's list and what was listed since), and returns
/// true; returns false, calling nothing, when that is the whole table.
pub(crate) fn each_touched(lock: &FtraceLocked, mut f: impl FnMut(u64)) -> bool {
    DIRTY
        .with(lock, |d| {
            let Some((last, pending)) = d.as_ref().and_then(|d| d.touched()) else {
                return false;
            };
            last.iter().chain(pending.iter()).for_each(|&ip| f(ip));
            true
        })
        .unwrap_or(false)
}
