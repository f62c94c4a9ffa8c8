// SPDX-License-Identifier: GPL-2.0

//! The decisions of the direct-call interface (`register_ftrace_direct()`,
//! `unregister_ftrace_direct()`, `modify_ftrace_direct()`): which ops may
//! ask, and how wide the new direct-functions table is.
//!
//! A direct ops makes its functions' sites call one trampoline (its
//! target) directly, without the ftrace caller. Each function has at most
//! one direct target, kept in the kernel's direct-functions table
//! (`ip -> target`), which the list function reads when a site is shared.
//! The rules here are the C code's, in its order, with its errnos chosen by
//! the kernel side from the [`Refusal`].

use crate::rfcore::registry::ops_fl;

/// `FTRACE_OPS_FL_INITIALIZED`: `ftrace_ops_init()` has run.
pub const INITIALIZED: u64 = 1 << 6;
/// `FTRACE_OPS_FL_DIRECT`: the ops' functions have a direct target.
pub const DIRECT: u64 = 1 << 17;
/// The width limit of an `ftrace_hash` (`FTRACE_HASH_MAX_BITS`).
pub const HASH_MAX_BITS: u32 = 12;

/// Why a direct-call request is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The ops is not in a state to ask (`-EINVAL`).
    Invalid,
    /// A function of the ops already has a direct target (`-EBUSY`).
    Busy,
}

/// What the kernel knows of an ops that asks to become a direct ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asking {
    /// Its flags word.
    pub flags: u64,
    /// It has a function of its own already.
    pub has_func: bool,
    /// It has a trampoline already.
    pub has_trampoline: bool,
    /// Its filter names no function (empty or absent).
    pub filter_empty: bool,
}

/// `register_ftrace_direct()`'s checks before it looks at the table: an
/// ops with a function or trampoline of its own, not initialised, already
/// started, or whose filter names no function is refused.
pub fn admit(a: &Asking) -> Result<(), Refusal> {
    let refused = a.has_func
        || a.has_trampoline
        || a.flags & INITIALIZED == 0
        || a.flags & ops_fl::ENABLED != 0
        || a.filter_empty;
    if refused {
        Err(Refusal::Invalid)
    } else {
        Ok(())
    }
}

/// `unregister_ftrace_direct()`'s and `modify_ftrace_direct()`'s checks:
/// only a started ops that was made a direct ops (every bit of `multi`,
/// the kernel's `MULTI_FLAGS`, set; initialised) may be stopped or
/// retargeted.
pub fn admit_change(flags: u64, multi: u64) -> Result<(), Refusal> {
    let refused =
        flags & INITIALIZED == 0 || flags & multi != multi || flags & ops_fl::ENABLED == 0;
    if refused {
        Err(Refusal::Invalid)
    } else {
        Ok(())
    }
}

/// The width (`size_bits`) of the new direct-functions table holding
/// `table` entries and `adding` more: the bits of the total, at most
/// [`HASH_MAX_BITS`] (the C code's `fls()` of the sum).
pub fn table_bits(adding: u64, table: u64) -> u32 {
    let n = adding.saturating_add(table);
    let bits = u64::BITS - n.leading_zeros();
    bits.min(HASH_MAX_BITS)
}

/// Whether two direct targets are the same trampoline: on architectures
/// that mark a jump (rather than a call) in bit 0 of the target
/// (`jmp_bit`), that bit is not compared.
pub fn same_target(a: u64, b: u64, jmp_bit: bool) -> bool {
    let mask = if jmp_bit { !1u64 } else { !0u64 };
    a & mask == b & mask
}
