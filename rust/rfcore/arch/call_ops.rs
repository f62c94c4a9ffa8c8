// SPDX-License-Identifier: GPL-2.0

//! The per-callsite ops literal of the `DYNAMIC_FTRACE_WITH_CALL_OPS`
//! architectures (arm64 and riscv64): which `ftrace_ops` the literal in
//! front of a function must hold, decided once for both.
//!
//! A CALL_OPS site is an 8-byte literal before the function and a call slot
//! at its entry. The shared caller (`ftrace_caller`) loads the literal and
//! calls that ops' function, so a site traced by one ops costs the same
//! however many others are registered. The literal holds the kernel's
//! `ftrace_nop_ops` while the site is a NOP, the site's one ops when that
//! ops may be called straight from the caller, the site's published ops
//! set when two or more ops trace it, and the kernel's `ftrace_list_ops`
//! otherwise ([`literal_ops`]).
//!
//! Each architecture's plan stores the literal first and the call slot
//! second. Why a CPU running through the site between or during the two
//! stores is safe, on both architectures:
//!
//! - each store is single-copy atomic: a CPU sees the old or the new
//!   instruction and the old or the new literal, never a torn one;
//! - the literal is read only after the call slot has run: the shared
//!   caller calls the function of the ops it loads, a direct trampoline
//!   ignores the literal;
//! - every value the literal can hold is an ops that stays valid for as long
//!   as a CPU may have loaded it: the stub ops are static, a dynamic ops is
//!   freed only after it is off every site and a tasks-RCU grace period has
//!   passed, and a set is retired only after the same wait;
//! - enable: until the call is visible the site does nothing; a CPU that
//!   sees the call but still the old literal calls `ftrace_nop_ops` and
//!   misses one event;
//! - change: the old call with the new ops, or the new call with the old
//!   ops, calls an ops that was on the site a moment ago; a fallback through
//!   the caller with the direct ops in the literal still reaches the direct
//!   trampoline;
//! - disable: the literal becomes `ftrace_nop_ops` while the call is still
//!   there, so a CPU between the two stores, or already inside the caller,
//!   calls the nop function instead of an ops that is being removed; once the
//!   NOP is in, the site calls nothing, and the literal never keeps the
//!   address of an ops that may be freed later.

use crate::rfcore::flags::{
    RecFlags,
    CALL_OPS_EN,
    ENABLED, //
};

/// Why the literal points at the kernel's list ops.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ListReason {
    /// More than one ops traces the site.
    Shared,
    /// One ops traces the site but may not be called straight from
    /// `ftrace_caller` (it needs the recursion or RCU assist function), so
    /// the record has no `CALL_OPS_EN`.
    NotEligible,
    /// The record has `CALL_OPS_EN` but no unique ops was found (or its
    /// address was 0). The kernel warns once and uses the list ops.
    NoUnique,
}

/// Which `ftrace_ops` a site's literal must hold.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LiteralOps {
    /// The kernel's `ftrace_nop_ops`, whose function does nothing: the site
    /// is (or is becoming) a NOP.
    Nop,
    /// The single ops on the site (its address), whose function
    /// `ftrace_caller` calls directly.
    Ops(u64),
    /// The kernel's `ftrace_list_ops`, whose function walks the ops list.
    List(ListReason),
    /// The site's published ops set, as the `ftrace_ops` in front of its
    /// block (its address): its function calls exactly the set's ops, so a
    /// site with two or more ops needs no lookup of its ip.
    Set(u64),
}

impl LiteralOps {
    /// The address to store, given where the kernel's two stub ops are.
    pub const fn addr(self, nop_ops: u64, list_ops: u64) -> u64 {
        match self {
            LiteralOps::Nop => nop_ops,
            LiteralOps::Ops(ops) | LiteralOps::Set(ops) => ops,
            LiteralOps::List(_) => list_ops,
        }
    }

    /// The set the literal names, if it names one.
    pub const fn set(self) -> Option<u64> {
        match self {
            LiteralOps::Set(set) => Some(set),
            _ => None,
        }
    }
}

/// The ops a site's literal must hold once its record is updated.
///
/// `flags` is the record's word *after* the state machine has updated it
/// (`decide(..).flags`), which is how the C arm64 hooks see it: the generic
/// code updates the record before calling `ftrace_make_call()` and friends.
/// `unique` is the one ops whose filter holds the site
/// (`ftrace_find_unique_ops()`), or `None` if there are none or several; it
/// is only used when the record has `CALL_OPS_EN`, which the state machine
/// sets exactly when the count is 1 and the record asks for `CALL_OPS`.
///
/// - the site is not a call (no `ENABLED`, or no user): [`LiteralOps::Nop`]
///   (`ftrace_make_nop()` and `ftrace_init_nop()` store `ftrace_nop_ops`);
/// - one user and `CALL_OPS_EN`: that ops;
/// - two or more users and a published set (`set`, the address of the
///   set's ops; not 0): [`LiteralOps::Set`];
/// - otherwise: [`LiteralOps::List`] (`arm64_rec_get_ops()`).
///
/// The `CALL_OPS` request is only as right as the accounting that set it;
/// after a removal it follows the ops that is left (see
/// `account::remove`). A set never sets `CALL_OPS_EN`, which keeps its
/// meaning (one ops), so the C comparator is unchanged.
pub fn literal_ops(flags: RecFlags, unique: Option<u64>, set: Option<u64>) -> LiteralOps {
    let count = flags.count();
    if !flags.any(ENABLED) || count == 0 {
        return LiteralOps::Nop;
    }
    if count > 1 {
        return match set {
            Some(set) if set != 0 => LiteralOps::Set(set),
            _ => LiteralOps::List(ListReason::Shared),
        };
    }
    if !flags.any(CALL_OPS_EN) {
        return LiteralOps::List(ListReason::NotEligible);
    }
    match unique {
        Some(ops) if ops != 0 => LiteralOps::Ops(ops),
        _ => LiteralOps::List(ListReason::NoUnique),
    }
}
