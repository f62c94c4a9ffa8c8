// SPDX-License-Identifier: GPL-2.0

//! The kernel side of `rfcore::select`: the address a record is to call
//! or calls now ([`select_addr()`]), chosen over the kernel's ops list
//! and its shared callers and direct functions table ([`KernelCallers`]),
//! with a broken invariant reported as the C core reports it
//! ([`report_problem()`]); and the single ops on a record
//! ([`unique_ops()`]).
//!
//! A leaf module with `unsafe` code: the foreign declarations.

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_ulong, //
    },
};

use crate::{
    kside::abi::{
        c_word,
        word, //
    },
    kside::ops::KernelOpsList,
    kside::record::Rec,
    rfcore::select::{
        self,
        Callers,
        Problem, //
    },
};

// Why they are `safe`: each function is defined by the C shim
// (`c/rftrace_shim*.c`) with exactly this prototype (checked against
// bindgen's below), and asks nothing but what its arguments' types prove:
// it reads the record a `Rec` proves live, or the direct-functions table
// as `ftrace_find_rec_direct()` reads it.
//
// The lint looks through the view's pointer into the C struct, which
// holds an empty arch placeholder (`dyn_arch_ftrace` on x86_64, as in C);
// only a pointer crosses, as in bindgen's declaration of the same
// function.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// Reports a broken invariant met while choosing `rec`'s target (a
    /// warning; for a missing trampoline, ftrace stops).
    pub(crate) safe fn rftrace_shim_select_problem(rec: Rec<'_>, problem: c_int, new: bool);
    /// The target the direct-functions table gives `ip`, 0 for none
    /// (`ftrace_find_rec_direct()`, which reads the table with preemption
    /// disabled, so the table it reads is not freed under it).
    pub(crate) safe fn rftrace_shim_direct(ip: c_ulong) -> c_ulong;
}

crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_select_problem,
    rftrace_shim_select_problem,
    fn(Rec<'static>, c_int, bool) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_direct,
    rftrace_shim_direct,
    fn(c_ulong) -> c_ulong
);

/// The kernel's shared callers and direct functions table.
pub(crate) struct KernelCallers;

/// The address of the shared ftrace caller (`FTRACE_ADDR`), or with `regs`
/// of the one that saves all registers (`FTRACE_REGS_ADDR`).
pub(crate) fn shared_caller(regs: bool) -> u64 {
    word(crate::kside::shim::rftrace_shim_caller(regs))
}

impl Callers for KernelCallers {
    fn caller(&self) -> u64 {
        shared_caller(false)
    }

    fn regs_caller(&self) -> u64 {
        shared_caller(true)
    }

    fn direct(&mut self, ip: u64) -> u64 {
        word(rftrace_shim_direct(c_word(ip)))
    }
}

/// Reports a broken invariant met while choosing a target, as the C core
/// reports it.
pub(crate) fn report_problem(rec: Rec<'_>, problem: Problem, new: bool) {
    let code = match problem {
        Problem::NoDirect => bindings::RFTRACE_PROBLEM_NO_DIRECT,
        Problem::NoTrampoline => bindings::RFTRACE_PROBLEM_NO_TRAMPOLINE,
    };
    let code = c_int::try_from(code).unwrap_or(0);
    rftrace_shim_select_problem(rec, code, new);
}

/// The address `rec` is to call (`new`) or calls now, chosen by
/// [`select`]; a broken invariant is reported as the C core reports it.
pub(crate) fn select_addr(rec: Rec<'_>, new: bool) -> u64 {
    let mut list = KernelOpsList::new(rec.lock());
    let mut callers = KernelCallers;
    let choice = if new {
        select::addr_new(&mut list, &mut callers, rec.ip(), rec.flags())
    } else {
        select::addr_curr(&mut list, &mut callers, rec.ip(), rec.flags())
    };
    if let Some(problem) = choice.problem {
        report_problem(rec, problem, new);
    }
    choice.addr
}

/// The single ops on `rec` (`ftrace_find_unique_ops()`), by Rust (by C:
/// `kside::shadow::c_unique_ops()`).
pub(crate) fn unique_ops(rec: Rec<'_>) -> *mut bindings::ftrace_ops {
    let mut list = KernelOpsList::new(rec.lock());
    select::unique_ops(&mut list, rec.ip()).map_or(core::ptr::null_mut(), |o| o.as_ptr())
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
