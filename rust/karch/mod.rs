// SPDX-License-Identifier: GPL-2.0

//! What differs per architecture: each implements the update pass's
//! [`Arch`] (plan, check, write, flush) over its own text patching, and
//! [`KernelArch`], how the hooks below get one. The hooks themselves
//! (`ftrace_make_call()`, `ftrace_modify_call()`, `ftrace_make_nop()`,
//! `ftrace_init_nop()`, `__ftrace_replace_code()`, `ftrace_replace_code()`)
//! are written once here, over [`Native`], the architecture being built.

use kernel::ffi::c_int;
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
        flags::CALL_OPS_EN,
        record::Decision,
        update::Facts, //
    },
};
use crate::{
    kside::env::{
        Module,
        Rec, //
    },
    kside::lock::FtraceLocked,
    kside::pass,
    kside::records::Group,
    rfcore::flags::RecFlags,
    rfcore::update::{
        Arch,
        Single, //
    },
};

#[cfg(CONFIG_ARM64)]
pub(crate) mod arm64;
#[cfg(CONFIG_RISCV)]
pub(crate) mod riscv64;
#[cfg(CONFIG_X86_64)]
pub(crate) mod x86;

/// The architecture being built.
#[cfg(CONFIG_ARM64)]
pub(crate) type Native<'a> = arm64::Arm64<'a>;
/// The architecture being built.
#[cfg(CONFIG_RISCV)]
pub(crate) type Native<'a> = riscv64::Riscv64<'a>;
/// The architecture being built.
#[cfg(CONFIG_X86_64)]
pub(crate) type Native<'a> = x86::X86<'a>;

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

/// The patch-site address of a call-site list entry, as the architecture
/// being built computes it (`ftrace_call_adjust()`).
pub(crate) fn call_site(entry: u64) -> Option<u64> {
    <Native<'static> as Arch>::call_site(entry)
}

/// `ftrace_replace_code()`: check every change, then write them in the
/// architecture's batches.
/// `ftrace_update_code()`'s loop over new record groups
/// ([`pass::init_groups`]) of `module`, the groups' owner; `mcount`: what
/// the compiler's calls call.
pub(crate) fn init_groups(
    lock: &FtraceLocked,
    module: Module<'_>,
    first: Option<Group<'_>>,
    flags: RecFlags,
    init: bool,
    mcount: u64,
) -> Option<u64> {
    let arch = &mut Native::for_site(lock, module, mcount);
    pass::init_groups(lock, arch, first, flags, init)
}

pub(crate) fn replace_code(lock: &FtraceLocked, enable: bool, may_sleep: MaySleep) {
    pass::replace_all(lock, &mut Native::for_pass(lock, may_sleep), enable);
}

/// `__ftrace_replace_code()`: one record and its site; 0 or -errno.
pub(crate) fn replace_one(rec: Rec<'_>, enable: bool) -> c_int {
    pass::replace_one(rec, &mut Native::for_pass(rec.lock(), MaySleep::NO), enable)
}

/// `ftrace_make_call()`. As in the kernel, the record has been updated
/// already: its flags say what `addr` is (a direct trampoline or not).
pub(crate) fn make_call(rec: Rec<'_>, addr: u64) -> c_int {
    let arch = &mut Native::for_pass(rec.lock(), MaySleep::NO);
    pass::single(rec, arch, Single::MakeCall { addr })
}

/// `ftrace_modify_call()`: from a call to `old` to a call to `new`.
pub(crate) fn modify_call(rec: Rec<'_>, old: u64, new: u64) -> c_int {
    let arch = &mut Native::for_pass(rec.lock(), MaySleep::NO);
    pass::single(rec, arch, Single::ModifyCall { old, new })
}

/// `ftrace_make_nop()` (a call to `addr` becomes the NOP), or with `init`
/// the first conversion of a site (boot, module load: `ftrace_init_nop()`,
/// or x86's `ftrace_make_nop()` of the compiler's call to `addr`);
/// `module`: the record's.
pub(crate) fn make_nop(module: Module<'_>, rec: Rec<'_>, addr: u64, init: bool) -> c_int {
    let arch = &mut Native::for_site(rec.lock(), module, addr);
    let op = if init {
        Single::Init
    } else {
        Single::MakeNop { old: addr }
    };
    pass::single(rec, arch, op)
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
