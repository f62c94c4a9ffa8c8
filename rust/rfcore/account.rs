// SPDX-License-Identifier: GPL-2.0

//! Per-record accounting: what a record asks for once an ops starts or stops
//! wanting its site.
//!
//! When an `ftrace_ops` is enabled, disabled, or its filter changes, every
//! record it matches gains or loses one user. The record's reference count
//! and request bits (`REGS`, `TRAMP`, `DIRECT`, `CALL_OPS`) follow; the
//! `*_EN` bits are left to the state machine ([`super::record`]), which turns
//! the requests into text changes. This is the per-record body of
//! `__ftrace_hash_rec_update()` in 7.2.
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

fn call_ops_bit(flags: RecFlags, ops: OpsProps, call_ops: CallOps) -> RecFlags {
    let eligible = call_ops == CallOps::Supported && flags.count() == 1 && ops.call_ops_ok;
    flags.set(CALL_OPS, eligible)
}

/// `ops` starts tracing the record.
pub fn add(flags: RecFlags, ops: OpsProps, call_ops: CallOps) -> Result<RecFlags, AccountError> {
    // The kernel treats reaching REF_MAX as the overflow (it warns when the
    // incremented count equals it), so the largest usable count is one less.
    let count = flags.count();
    if count.saturating_add(1) >= REF_MAX {
        return Err(AccountError::Overflow);
    }
    let mut next = RecFlags::from_raw(flags.raw() + 1);
    if ops.direct {
        next = next.with(DIRECT);
    }
    // A trampoline is only called directly while its ops is alone.
    next = next.set(TRAMP, next.count() == 1 && ops.trampoline);
    if ops.save_regs {
        next = next.with(REGS);
    }
    Ok(call_ops_bit(next, ops, call_ops))
}

/// `ops` stops tracing the record.
///
/// The `CALL_OPS` eligibility of the record afterwards is decided by the ops
/// being removed, exactly as the kernel does it. See the module tests for
/// why that is only right when a single ops can be on a CALL_OPS site with
/// the survivor's own properties; [`remove_with_survivor`] is the variant
/// that asks about the survivor.
pub fn remove(
    flags: RecFlags,
    ops: OpsProps,
    call_ops: CallOps,
    others: &mut impl Others,
) -> Result<RecFlags, AccountError> {
    let next = remove_counts(flags, ops, others)?;
    Ok(call_ops_bit(next, ops, call_ops))
}

/// Like [`remove`], but the `CALL_OPS` eligibility comes from the ops that
/// is left (`survivor_call_ops_ok`), which is the one the site's literal
/// will point at.
pub fn remove_with_survivor(
    flags: RecFlags,
    ops: OpsProps,
    call_ops: CallOps,
    survivor_call_ops_ok: bool,
    others: &mut impl Others,
) -> Result<RecFlags, AccountError> {
    let next = remove_counts(flags, ops, others)?;
    let survivor = OpsProps {
        call_ops_ok: survivor_call_ops_ok,
        ..ops
    };
    Ok(call_ops_bit(next, survivor, call_ops))
}

fn remove_counts(
    flags: RecFlags,
    ops: OpsProps,
    others: &mut impl Others,
) -> Result<RecFlags, AccountError> {
    let count = flags.count();
    if count == 0 {
        return Err(AccountError::Underflow);
    }
    let mut next = RecFlags::from_raw(flags.raw() - 1);
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
