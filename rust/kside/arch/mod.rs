// SPDX-License-Identifier: GPL-2.0

//! What differs per architecture: each implements the update pass's
//! [`Arch`] (plan, check, write, flush) over its own text patching, and
//! [`KernelArch`] (`common`), how the hooks below get one. The hooks themselves
//! (`ftrace_make_call()`, `ftrace_modify_call()`, `ftrace_make_nop()`,
//! `ftrace_init_nop()`, `__ftrace_replace_code()`, `ftrace_replace_code()`)
//! are written once here, over [`Native`], the architecture being built.

use kernel::ffi::c_int;

use crate::{
    kside::lock::FtraceLocked,
    kside::module::Module,
    kside::pages::Group,
    kside::record::Rec,
    kside::update,
    rfcore::flags::RecFlags,
    rfcore::update::{
        Arch,
        Single, //
    },
};
pub(crate) use common::{
    KernelArch,
    MaySleep, //
};

#[cfg(CONFIG_ARM64)]
pub(crate) mod arm64;
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
pub(crate) mod call_ops;
pub(crate) mod common;
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

/// The patch-site address of a call-site list entry, as the architecture
/// being built computes it (`ftrace_call_adjust()`).
pub(crate) fn call_site(entry: u64) -> Option<u64> {
    <Native<'static> as Arch>::call_site(entry)
}

/// `ftrace_replace_code()`: check every change, then write them in the
/// architecture's batches.
/// `ftrace_update_code()`'s loop over new record groups
/// ([`update::init_groups`]) of `module`, the groups' owner; `mcount`: what
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
    update::init_groups(lock, arch, first, flags, init)
}

pub(crate) fn replace_code(lock: &FtraceLocked, enable: bool, may_sleep: MaySleep) {
    update::replace_all(lock, &mut Native::for_pass(lock, may_sleep), enable);
}

/// `__ftrace_replace_code()`: one record and its site; 0 or -errno.
pub(crate) fn replace_one(rec: Rec<'_>, enable: bool) -> c_int {
    update::replace_one(rec, &mut Native::for_pass(rec.lock(), MaySleep::NO), enable)
}

/// `ftrace_make_call()`. As in the kernel, the record has been updated
/// already: its flags say what `addr` is (a direct trampoline or not).
pub(crate) fn make_call(rec: Rec<'_>, addr: u64) -> c_int {
    let arch = &mut Native::for_pass(rec.lock(), MaySleep::NO);
    update::single(rec, arch, Single::MakeCall { addr })
}

/// `ftrace_modify_call()`: from a call to `old` to a call to `new`.
pub(crate) fn modify_call(rec: Rec<'_>, old: u64, new: u64) -> c_int {
    let arch = &mut Native::for_pass(rec.lock(), MaySleep::NO);
    update::single(rec, arch, Single::ModifyCall { old, new })
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
    update::single(rec, arch, op)
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
