// SPDX-License-Identifier: GPL-2.0

//! IPMODIFY claims on the kernel's records (`__ftrace_hash_update_ipmodify()`
//! and its three C callers: an ops starting, stopping, or
//! changing its filter; and a direct ops changing its target), decided by
//! [`crate::rfcore::ipmodify`]: the records are walked once to check and,
//! for an IPMODIFY ops that may claim, once more to write the claims. A
//! refused change has written nothing.
//!
//! No `unsafe` here: records, ops and hashes come as handles that borrow
//! the `ftrace_lock` proof.

use kernel::{
    alloc::{
        flags::GFP_KERNEL,
        KVVec, //
    },
    error::{
        code::{
            EBUSY,
            EINVAL, //
        },
        Error,
        Result, //
    },
    sync::atomic::Relaxed,
};

use crate::{
    kside::filter::KHash,
    kside::lock::FtraceLocked,
    kside::ops::Ops,
    kside::pages,
    kside::record::Rec,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::filter::FnSet,
    rfcore::ipmodify::{
        apply,
        claimant,
        step,
        Claimant,
        Plan,
        Site,
        Skip,
        Step, //
    },
};

/// One side of a change: `None` is every function (an empty filter).
type Side<'h, 'a> = Option<&'h KHash<'a>>;

/// When a direct ops is asked whether it may share a claimed function.
pub(crate) enum Asks<'v> {
    /// During the walk, under `ftrace_lock` (a start or a filter change,
    /// as in C).
    Now,
    /// After the walk, once `ftrace_lock` is dropped: the functions to ask
    /// about are collected here, in walk order. For a direct target change
    /// (`modify_ftrace_direct()`), whose caller holds `direct_mutex` but
    /// not `ftrace_lock`, and whose `ops_func` may register ops itself.
    Later(&'v mut KVVec<u64>),
}

/// A filter hash as a side: an empty one is every function, but one
/// flagged as naming nothing (`FTRACE_HASH_FL_MOD`, a filter on a module
/// not loaded yet) is a side with no function, as `ftrace_hash_empty()`
/// reads it.
fn filter_side<'h, 'a>(filter: &'h KHash<'a>) -> Side<'h, 'a> {
    (filter.count() != 0 || filter.is_nothing()).then_some(filter)
}

/// `ops` moves from the functions of `old` to those of `new` (`retarget`:
/// only its direct target changes): claims and releases, or the errno C
/// returns (`-EINVAL` for every function, `-EBUSY` for a claimed record, or
/// what a direct ops' `ops_func` answers; with [`Asks::Later`] the caller
/// asks, and `-ENOMEM` if the list cannot grow).
pub(crate) fn update(
    ops: Ops<'_>,
    old: Side<'_, '_>,
    new: Side<'_, '_>,
    retarget: bool,
    lock: &FtraceLocked,
    mut asks: Asks<'_>,
) -> Result {
    let flags = ops.flags();
    let who = match claimant(flags, old.is_none(), new.is_none(), retarget) {
        Ok(who) => who,
        Err(Skip::Nothing) => return Ok(()),
        Err(Skip::Both) => {
            kernel::warn_on!(true);
            return Ok(());
        }
        Err(Skip::EveryFunction) => return Err(EINVAL),
    };
    let (Some(old), Some(new)) = (old, new) else {
        return Err(EINVAL);
    };
    let listed = listed(old, new);
    let listed = listed.as_deref();
    walk(who, Plan::Check, ops, old, new, listed, lock, &mut asks)?;
    if who == Claimant::IpModify {
        walk(who, Plan::Write, ops, old, new, listed, lock, &mut asks)?;
    }
    Ok(())
}

/// The functions of `old` and `new`, ascending and each once, when they
/// are few against the table (`kside::dirty::CUT`): the only records a
/// walk can claim, release or ask about. `None`: the walk visits every
/// record (many functions, or no memory for the list).
fn listed(old: &KHash<'_>, new: &KHash<'_>) -> Option<KVVec<u64>> {
    let total = STATS
        .records_made
        .load(Relaxed)
        .saturating_sub(STATS.records_released.load(Relaxed));
    let k = old.count().saturating_add(new.count());
    if k.saturating_mul(crate::kside::dirty::CUT) > total {
        return None;
    }
    let mut ips = old.ips()?;
    let more = new.ips()?;
    ips.extend_from_slice(&more, GFP_KERNEL).ok()?;
    let n = crate::rfcore::dirty::sort_unique(&mut ips);
    ips.truncate(n);
    Some(ips)
}

/// `ftrace_hash_ipmodify_enable()`: `ops` starts, from no function to its
/// filter.
pub(crate) fn enable(ops: Ops<'_>, lock: &FtraceLocked) -> Result {
    let filter = KHash::of_ops(ops, false);
    let none = KHash::empty()?;
    update(
        ops,
        Some(&none),
        filter_side(&filter),
        false,
        lock,
        Asks::Now,
    )
}

/// `ftrace_hash_ipmodify_update()`: `ops` changes its filter from the one
/// it has to `new`.
pub(crate) fn change(ops: Ops<'_>, new: &KHash<'_>, lock: &FtraceLocked) -> Result {
    let old = KHash::of_ops(ops, false);
    update(
        ops,
        filter_side(&old),
        filter_side(new),
        false,
        lock,
        Asks::Now,
    )
}

/// `ftrace_hash_ipmodify_disable()`: `ops` stops, from its filter to no
/// function. As in C this cannot fail: a refusal (an ops of every
/// function never claimed anything) is ignored.
pub(crate) fn disable(ops: Ops<'_>, lock: &FtraceLocked) {
    let filter = KHash::of_ops(ops, false);
    if let Ok(none) = KHash::empty() {
        let _ = update(
            ops,
            filter_side(&filter),
            Some(&none),
            false,
            lock,
            Asks::Now,
        );
    }
}

/// One walk in `plan` over the records of `listed`, or with `None` over
/// the whole table.
#[allow(clippy::too_many_arguments)]
fn walk(
    who: Claimant,
    plan: Plan,
    ops: Ops<'_>,
    old: &KHash<'_>,
    new: &KHash<'_>,
    listed: Option<&[u64]>,
    lock: &FtraceLocked,
    asks: &mut Asks<'_>,
) -> Result {
    bump(&STATS.ipmodify_walks, 1);
    if matches!(who, Claimant::Direct { retarget: true }) {
        bump(&STATS.ipmodify_retargets, 1);
    }
    let mut visit = |rec: Rec<'_>| -> Result {
        let ip = rec.ip();
        let site = Site {
            flags: rec.flags(),
            in_old: old.contains(ip),
            in_new: new.contains(ip),
        };
        match step(who, plan, site) {
            Step::Pass => {}
            Step::Conflict => return Err(EBUSY),
            s @ (Step::Claim | Step::Release) => rec.set_flags(apply(site.flags, s)),
            Step::AskShare { warn } => {
                // C's FTRACE_WARN_ON(): the records disagree with the
                // ops; warn, stop ftrace, and still ask.
                if warn {
                    kernel::warn_on!(true);
                    crate::kside::under_lock::kill(lock);
                }
                match asks {
                    Asks::Now => share_answer(ops.share_ipmodify_self(ip))?,
                    Asks::Later(ips) => ips.push(ip, GFP_KERNEL)?,
                }
            }
        }
        Ok(())
    };
    match listed {
        Some(ips) => {
            let mut finder = pages::Finder::new(lock);
            for &ip in ips {
                if let Some(rec) = finder.find(ip) {
                    visit(rec)?;
                }
            }
        }
        None => {
            for rec in pages::every(lock) {
                visit(rec)?;
            }
        }
    }
    Ok(())
}

/// A direct ops' answer to "may you share?": `None` (no `ops_func`) is
/// `-EBUSY`.
pub(crate) fn share_answer(answer: Option<kernel::ffi::c_int>) -> Result {
    match answer {
        None => Err(EBUSY),
        Some(0) => Ok(()),
        Some(ret) => Err(Error::from_errno(ret)),
    }
}
