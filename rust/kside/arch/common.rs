// SPDX-License-Identifier: GPL-2.0

//! What every architecture's implementation uses: [`KernelArch`], how the
//! hooks of `kside::arch` get an `Arch` of the kernel's text; [`MaySleep`]; and
//! the CALL_OPS helpers of arm64 and riscv64. Names no architecture, so
//! that each one can use it and `kside::arch` can name each one.
//!
//! A leaf module with `unsafe` code: the rescheduling point.

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
use kernel::{
    bindings,
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
use crate::{
    kside::env::word,
    rfcore::{
        arch::arm64::literal_ops,
        flags::{
            RecFlags,
            CALL_OPS_EN, //
        },
        record::Decision,
        update::Facts, //
    },
};
use crate::{
    kside::env::Module,
    kside::lock::FtraceLocked,
    rfcore::update::Arch, //
};

/// How the generic hooks get an [`Arch`] of the kernel's text.
pub(crate) trait KernelArch<'a>: Arch + Sized {
    /// For an update pass over the table, under `lock`; `may_sleep`: the
    /// pass may `cond_resched()` between records.
    fn for_pass(lock: &'a FtraceLocked, may_sleep: MaySleep) -> Self;

    /// For one site of `module` (the core kernel: the core kernel, or a
    /// live module found by address); `mcount`: what the compiler's call
    /// at the site calls before its first conversion (0 if that is not the
    /// question).
    fn for_site(lock: &'a FtraceLocked, module: Module<'a>, mcount: u64) -> Self;
}

/// CALL_OPS sites found without their unique ops (the kernel warns once).
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
static NO_UNIQUE: Atomic<u32> = Atomic::new(0);

/// CALL_OPS: warns once when a site is to call its single ops through the
/// literal and that ops was not found (the literal then gets the list ops).
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
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
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
pub(crate) fn literal_holds(
    addr: u64,
    flags: RecFlags,
    unique: Option<u64>,
    set: Option<u64>,
) -> Option<(u64, u64)> {
    use crate::kside::{
        env::c_word,
        shim::rftrace_shim_literal_read, //
    };
    let (nop, list) = stub_ops();
    let want = literal_ops(flags, unique, set).addr(nop, list);
    Some((word(rftrace_shim_literal_read(c_word(addr))), want))
}

/// CALL_OPS: the addresses of the kernel's two static ops a literal holds
/// besides a unique one, `(ftrace_nop_ops, ftrace_list_ops)`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
pub(crate) fn stub_ops() -> (u64, u64) {
    use crate::kside::shim::rftrace_shim_stub_ops;
    (
        word(rftrace_shim_stub_ops(false)),
        word(rftrace_shim_stub_ops(true)),
    )
}

/// Whether an update pass may reschedule between two records.
///
/// # Invariants
///
/// `self.0` is true only if the pass runs where it may sleep: made by
/// [`MaySleep::allowed()`], whose caller vouches for it.
#[derive(Clone, Copy)]
pub(crate) struct MaySleep(
    #[cfg_attr(not(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS), allow(dead_code))] bool,
);

impl MaySleep {
    /// The pass must not sleep.
    pub(crate) const NO: Self = MaySleep(false);

    /// The pass may sleep.
    ///
    /// # Safety
    ///
    /// The pass runs in process context and may sleep: no spinlock held,
    /// preemption and interrupts on (C's `FTRACE_MODIFY_MAY_SLEEP_FL`).
    pub(crate) unsafe fn allowed() -> Self {
        // INVARIANT: the caller's contract.
        MaySleep(true)
    }

    /// A rescheduling point between two records, if the pass may sleep.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
    pub(crate) fn relax(self) {
        if self.0 {
            // SAFETY: the pass may sleep (type invariants).
            unsafe { bindings::rftrace_shim_cond_resched() };
        }
    }
}
