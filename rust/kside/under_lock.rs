// SPDX-License-Identifier: GPL-2.0

//! The C functions whose one duty for their caller is a lock held:
//! `ftrace_lock` (the update pass and the shared callers' function) or
//! `text_mutex` (x86's batched text writes).
//!
//! The foreign declarations are private to this module and declared
//! `safe`; the only code that can call them is the wrapper beside each,
//! which takes the proof of the lock ([`FtraceLocked`], [`TextLocked`]).
//! What a call site had to promise in a comment, the wrapper's argument
//! now proves.
//!
//! A leaf module with `unsafe` code: the foreign block.

use kernel::{
    bindings,
    ffi::c_int, //
};

use crate::kside::lock::FtraceLocked;
#[cfg(CONFIG_X86)]
use crate::kside::lock::TextLocked;

// Why they are `safe`: each function is defined by the patched
// `kernel/trace/ftrace.c` or the C shim with exactly this prototype (checked
// against bindgen's below), and asks of its caller only that the lock its
// wrapper's proof names is held: every declaration is private to this module,
// so only the wrappers below, which take that proof, call one.
// - `ftrace_c_startup_enable()` and `ftrace_c_run_update_code()` run the
//   update pass (the records' new states are the Rust core's, written by
//   its checked encoders) under `ftrace_lock`;
// - `ftrace_c_trace_func_changed()` compares and notes the shared
//   callers' function, a global written under `ftrace_lock`;
// - `ftrace_c_trace_function()` reads the ops list under `ftrace_lock`
//   and stores one pointer in the place `op` lends;
// - `ftrace_c_check_record()` reads and writes the flags of the record
//   the `&mut` lends and writes the global `ftrace_bug_type`, under
//   `ftrace_lock`;
// - `rftrace_shim_poke_late()` reads a flag the arch hooks write under
//   `ftrace_lock`;
// - `rftrace_shim_poke_finish()` writes the batch of text changes
//   `rftrace_shim_poke()` queued (each checked before it was queued),
//   under `text_mutex`; with nothing queued it does nothing.
//
// The lint looks through `&mut dyn_ftrace` into the C struct, whose arch
// part is empty on x86_64 (as in C); only a pointer crosses.
#[allow(improper_ctypes)]
unsafe extern "C" {
    safe fn ftrace_c_startup_enable(command: c_int);
    safe fn ftrace_c_run_update_code(command: c_int);
    safe fn ftrace_c_trace_func_changed() -> bool;
    safe fn ftrace_c_trace_function(op: &mut *mut bindings::ftrace_ops) -> u32;
    safe fn ftrace_c_check_record(
        rec: &mut bindings::dyn_ftrace,
        enable: bool,
        update: bool,
    ) -> c_int;
    #[cfg(CONFIG_X86)]
    safe fn rftrace_shim_poke_late() -> bool;
    #[cfg(CONFIG_X86)]
    safe fn rftrace_shim_poke_finish();
}

crate::kside::abi::lowered_as!(
    &'static mut *mut bindings::ftrace_ops => *mut *mut bindings::ftrace_ops,
);

crate::kside::abi::same_prototype!(
    bindings::ftrace_c_startup_enable,
    ftrace_c_startup_enable,
    fn(c_int) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_run_update_code,
    ftrace_c_run_update_code,
    fn(c_int) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_trace_func_changed,
    ftrace_c_trace_func_changed,
    fn() -> bool
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_trace_function,
    ftrace_c_trace_function,
    fn(&'static mut *mut bindings::ftrace_ops) -> u32
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_check_record,
    ftrace_c_check_record,
    fn(&'static mut bindings::dyn_ftrace, bool, bool) -> c_int
);
#[cfg(CONFIG_X86)]
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_poke_late,
    rftrace_shim_poke_late,
    fn() -> bool
);
#[cfg(CONFIG_X86)]
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_poke_finish,
    rftrace_shim_poke_finish,
    fn() -> ()
);

/// `ftrace_startup_enable()`: runs the update pass if there is anything
/// to do.
pub(crate) fn startup_enable(_lock: &FtraceLocked, command: c_int) {
    ftrace_c_startup_enable(command);
}

/// `ftrace_run_update_code()`: the update pass.
pub(crate) fn run_update_code(_lock: &FtraceLocked, command: c_int) {
    ftrace_c_run_update_code(command);
}

/// Whether the shared callers' function changed since the last call
/// (which notes the new one).
pub(crate) fn trace_func_changed(_lock: &FtraceLocked) -> bool {
    ftrace_c_trace_func_changed()
}

/// The kernel's C choice of the shared callers' function: which one, and
/// the ops it is called with.
pub(crate) fn c_trace_function(_lock: &FtraceLocked) -> (u32, *mut bindings::ftrace_ops) {
    let mut op = core::ptr::null_mut();
    let which = ftrace_c_trace_function(&mut op);
    (which, op)
}

/// `ftrace_check_record()` with `update` on `rec`, which the caller lends.
pub(crate) fn check_record(
    _lock: &FtraceLocked,
    rec: &mut bindings::dyn_ftrace,
    enable: bool,
) -> c_int {
    ftrace_c_check_record(rec, enable, true)
}

/// `ftrace_kill()`: stops every update until reboot.
pub(crate) fn kill(_lock: &FtraceLocked) {
    crate::kside::shim::ftrace_kill();
}

/// Whether the text is live for the update pass (x86's arch prepare hook
/// ran).
#[cfg(CONFIG_X86)]
pub(crate) fn poke_late(_lock: &FtraceLocked) -> bool {
    rftrace_shim_poke_late()
}

/// Writes the queued text changes (`smp_text_poke_batch_finish()`).
#[cfg(CONFIG_X86)]
pub(crate) fn poke_finish(_text: &TextLocked) {
    rftrace_shim_poke_finish();
}
