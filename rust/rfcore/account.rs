// SPDX-License-Identifier: GPL-2.0

//! Per-record accounting: what a record asks for once an ops starts or stops
//! wanting its site.
//!
//! When an `ftrace_ops` is enabled, disabled, or its filter changes, every
//! record it matches gains or loses one user. The record's reference count
//! and request bits (`REGS`, `TRAMP`, `DIRECT`, `CALL_OPS`) follow; the
//! `*_EN` bits are left to the state machine ([`super::record`]), which turns
//! the requests into text changes. This is the per-record body of
//! the C `__ftrace_hash_rec_update()`.
//!
//! The reference count lives in the low [`REF_BITS`](super::flags::REF_BITS)
//! bits of the word. Unlike the kernel, which increments first and checks
//! afterwards, an overflow or underflow here is an error and the word is
//! left as it was.

use super::flags::{
    RecFlags,
    CALL_OPS,
    DIRECT,
    REF_MAX,
    REGS,
    TRAMP, //
};

/// What the accounting needs to know about the ops being added or removed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct OpsProps {
    /// The ops is a direct-call ops (`FTRACE_OPS_FL_DIRECT`).
    pub direct: bool,
    /// The ops wants the registers saved (`FTRACE_OPS_FL_SAVE_REGS`).
    pub save_regs: bool,
    /// The ops has its own trampoline (`ops->trampoline`).
    pub trampoline: bool,
    /// The site may call the ops' function through the per-site literal:
    /// `ftrace_ops_get_func(ops) == ops->func`, i.e. no recursion or RCU
    /// assist function is needed.
    pub call_ops_ok: bool,
}

/// Facts about the *other* ops on a record, asked only when needed.
///
/// The kernel answers them by walking its ops list, which is why they are
/// questions rather than inputs.
pub trait Others {
    /// Some ops on the kernel's ops list still wants this record's
    /// registers saved (`test_rec_ops_needs_regs()`). An ops being
    /// unregistered is off the list by then; an ops whose filter is being
    /// changed is still on it, with its old filter, so it still counts: a
    /// `SAVE_REGS` ops that leaves a site through a filter change leaves
    /// the regs caller behind while other ops remain there (the kernel's
    /// behaviour, kept).
    fn need_regs(&mut self) -> bool;
    /// An ops other than the one being removed, with a trampoline, still
    /// traces this record (`ftrace_find_tramp_ops_any_other()`).
    fn other_has_trampoline(&mut self) -> bool;
    /// Exactly one ops other than the one being removed still traces this
    /// record, and its function may be called through the per-site literal
    /// (it needs no recursion or RCU assist function). Asked only on
    /// architectures with per-site literals, when one user is left.
    fn survivor_call_ops_ok(&mut self) -> bool;
}

/// Why a record's count could not change.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AccountError {
    /// Adding a user would reach [`REF_MAX`].
    Overflow,
    /// Removing a user from a record that has none.
    Underflow,
}

/// How per-site ops literals are set (`CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CallOps {
    /// The architecture has no per-site literal (x86): `CALL_OPS` stays clear.
    Unsupported,
    /// The literal is used when a single ops traces the site.
    Supported,
}

fn call_ops_bit(flags: RecFlags, eligible: bool, call_ops: CallOps) -> RecFlags {
    flags.set(
        CALL_OPS,
        call_ops == CallOps::Supported && flags.count() == 1 && eligible,
    )
}

/// `ops` starts tracing the record.
#[inline]
pub fn add(flags: RecFlags, ops: OpsProps, call_ops: CallOps) -> Result<RecFlags, AccountError> {
    // The kernel treats reaching REF_MAX as the overflow (it warns when the
    // incremented count equals it), so the largest usable count is one less.
    let count = flags.count();
    if count.saturating_add(1) >= REF_MAX {
        return Err(AccountError::Overflow);
    }
    // The count is below REF_MAX: one more does not carry into the flags.
    let mut next = RecFlags::from_raw(flags.raw().saturating_add(1));
    if ops.direct {
        next = next.with(DIRECT);
    }
    // A trampoline is only called directly while its ops is alone.
    next = next.set(TRAMP, next.count() == 1 && ops.trampoline);
    if ops.save_regs {
        next = next.with(REGS);
    }
    Ok(call_ops_bit(next, ops.call_ops_ok, call_ops))
}

/// `ops` stops tracing the record.
///
/// # The `CALL_OPS` request after a removal
///
/// When one user is left, the site may call that user's function through
/// its per-site literal, and the literal is filled at patch time with the
/// single ops that still covers the site (`ftrace_find_unique_ops()`): the
/// survivor. Whether that is allowed is therefore a property of the
/// survivor: an ops whose function needs the recursion or RCU assist
/// (`ftrace_ops_get_func(ops) != ops->func`) must be reached through the
/// list function, which provides it.
///
/// 7.2 decides by the ops being *removed* instead. With A (no assist
/// needed) and B (`FTRACE_OPS_FL_RECURSION`) on one site, removing A sets
/// `CALL_OPS`, and B's function is then called from the site with no
/// recursion protection; removing B first leaves A behind the slower list
/// function. Both are wrong, the first one unsafely, so this core asks
/// about the survivor ([`Others::survivor_call_ops_ok`]). If no single
/// survivor can be found, the request is cleared: the list function is
/// correct for any set of ops.
#[inline(always)]
pub fn remove(
    flags: RecFlags,
    ops: OpsProps,
    call_ops: CallOps,
    others: &mut impl Others,
) -> Result<RecFlags, AccountError> {
    let next = remove_counts(flags, ops, others)?;
    let eligible =
        call_ops == CallOps::Supported && next.count() == 1 && others.survivor_call_ops_ok();
    Ok(call_ops_bit(next, eligible, call_ops))
}

#[inline(always)]
fn remove_counts(
    flags: RecFlags,
    ops: OpsProps,
    others: &mut impl Others,
) -> Result<RecFlags, AccountError> {
    let count = flags.count();
    if count == 0 {
        return Err(AccountError::Underflow);
    }
    // The count is not 0: one less does not borrow from the flags.
    let mut next = RecFlags::from_raw(flags.raw().saturating_sub(1));
    let left = next.count();
    // Only the direct ops sets DIRECT; when it goes, so does the request.
    if ops.direct {
        next = next.without(DIRECT);
    }
    if left > 0 && next.any(REGS) && ops.save_regs && !others.need_regs() {
        next = next.without(REGS);
    }
    let tramp = left == 1 && others.other_has_trampoline();
    next = next.set(TRAMP, tramp);
    Ok(next)
}
