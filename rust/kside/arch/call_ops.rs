// SPDX-License-Identifier: GPL-2.0

//! The kernel side of the per-callsite ops literal, shared by arm64 and
//! riscv64 (`DYNAMIC_FTRACE_WITH_CALL_OPS`): the kernel's two static ops a
//! literal may hold, what a literal holds now (for the shadow check), and
//! the warning for a site that should call its single ops but has none.
//! What a literal must hold is decided by
//! [`crate::rfcore::arch::call_ops`]. Names no architecture.

use kernel::sync::atomic::{
    Atomic,
    Relaxed, //
};

use crate::{
    kside::abi::word,
    rfcore::{
        arch::call_ops::literal_ops,
        flags::{
            RecFlags,
            CALL_OPS_EN, //
        },
        record::Decision,
        update::Facts, //
    },
};

/// CALL_OPS sites found without their unique ops (the kernel warns once).
static NO_UNIQUE: Atomic<u32> = Atomic::new(0);

/// CALL_OPS: warns once when a site is to call its single ops through the
/// literal and that ops was not found (the literal then gets the list ops).
pub(crate) fn check_unique(facts: &Facts, decision: &Decision) {
    if decision.flags.any(CALL_OPS_EN)
        && facts.unique.is_none()
        && NO_UNIQUE.fetch_add(1, Relaxed) == 0
    {
        kernel::pr_warn!("no unique ops for a CALL_OPS site at {:#x}\n", facts.ip);
    }
}

/// CALL_OPS, for the shadow check: what the literal at `addr` holds now
/// (0 if it cannot be read), and what it should hold for a record with
/// `flags`, its unique ops and its published set (`Arch::literal_holds`).
pub(crate) fn literal_holds(
    addr: u64,
    flags: RecFlags,
    unique: Option<u64>,
    set: Option<u64>,
) -> Option<(u64, u64)> {
    use crate::kside::{
        abi::c_word,
        shim::rftrace_shim_literal_read, //
    };
    let (nop, list) = stub_ops();
    let want = literal_ops(flags, unique, set).addr(nop, list);
    Some((word(rftrace_shim_literal_read(c_word(addr))), want))
}

/// CALL_OPS: the addresses of the kernel's two static ops a literal holds
/// besides a unique one, `(ftrace_nop_ops, ftrace_list_ops)`.
pub(crate) fn stub_ops() -> (u64, u64) {
    use crate::kside::shim::rftrace_shim_stub_ops;
    (
        word(rftrace_shim_stub_ops(false)),
        word(rftrace_shim_stub_ops(true)),
    )
}
