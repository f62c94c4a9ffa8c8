// SPDX-License-Identifier: GPL-2.0

//! What every architecture's implementation uses: [`KernelArch`], how the
//! hooks of `kside::arch` get an `Arch` of the kernel's text, and
//! [`MaySleep`]. Names no architecture, so that each one can use it and
//! `kside::arch` can name each one.
//!
//! A leaf module with `unsafe` code: the rescheduling point.

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
use kernel::bindings;

use crate::{
    kside::lock::FtraceLocked,
    kside::module::Module,
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
