// SPDX-License-Identifier: GPL-2.0

//! The C functions the core calls that ask nothing of their caller,
//! declared `safe` so that calling one needs no `unsafe` block: address
//! lookups, constants, owner questions, pure arithmetic and an atomic
//! exchange. Every other C function is called through the bindgen
//! declarations, with its contract at the call.
//!
//! Each declaration is checked against bindgen's for the same prototype
//! (`same_prototype!` below: both must have the one function-pointer
//! type), so a prototype change in `include/rftrace.h` or the patched
//! `ftrace.c` fails the build here.
//!
//! A leaf module with `unsafe` code: the foreign block.

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_ulong, //
    },
};

// SAFETY: each function is defined by the C shim (`c/rftrace_shim*.c`) or
// by the patched `kernel/trace/ftrace.c` with exactly this prototype
// (checked against bindgen's below), and none has a precondition: each
// returns a constant or an address, asks who owns a mutex, computes from
// its argument's value alone (no memory behind it), or exchanges a word atomically.
unsafe extern "C" {
    /// Whether the current task holds `ftrace_lock`.
    pub(crate) safe fn rftrace_shim_ftrace_lock_mine() -> bool;
    /// Whether the current task holds `text_mutex`.
    pub(crate) safe fn rftrace_shim_text_lock_mine() -> bool;
    /// Whether the current task holds `direct_mutex`.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) safe fn ftrace_c_direct_lock_mine() -> bool;
    /// The flags a direct ops of the multi interface must carry.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) safe fn ftrace_c_direct_multi_flags() -> c_ulong;
    /// Where the direct-functions table is published (a static's
    /// address).
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) safe fn ftrace_c_direct_slot() -> *mut *mut bindings::ftrace_hash;
    /// The empty direct-functions table (`EMPTY_HASH`, a static's
    /// address).
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) safe fn ftrace_c_direct_empty() -> *mut bindings::ftrace_hash;
    /// `MAX_PAGE_ORDER`.
    pub(crate) safe fn rftrace_shim_max_order() -> c_int;
    /// The address of `ftrace_caller` (or with `regs` the caller that
    /// saves registers).
    pub(crate) safe fn rftrace_shim_caller(regs: bool) -> c_ulong;
    /// Whether `addr` is in the core kernel's data.
    pub(crate) safe fn rftrace_shim_core_data(addr: c_ulong) -> bool;
    /// The address of `ftrace_list_ops` (`list`) or `ftrace_nop_ops`.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
    pub(crate) safe fn rftrace_shim_stub_ops(list: bool) -> c_ulong;
    /// The shadow builds' test-only write failure: whether `ip` is the
    /// site named in `fail_write`, which it then clears (one `cmpxchg()`).
    pub(crate) safe fn rftrace_shim_take_fail_write(ip: c_ulong) -> bool;
}

/// Checks at build time that `ours` has the C prototype bindgen gave
/// `theirs`: both must be the one function-pointer type.
macro_rules! same_prototype {
    ($theirs:path, $ours:path, fn($($arg:ty),*) -> $ret:ty) => {
        const _: [unsafe extern "C" fn($($arg),*) -> $ret; 2] = [$theirs, $ours];
    };
}

same_prototype!(
    bindings::rftrace_shim_ftrace_lock_mine,
    rftrace_shim_ftrace_lock_mine,
    fn() -> bool
);
same_prototype!(
    bindings::rftrace_shim_text_lock_mine,
    rftrace_shim_text_lock_mine,
    fn() -> bool
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
same_prototype!(
    bindings::ftrace_c_direct_lock_mine,
    ftrace_c_direct_lock_mine,
    fn() -> bool
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
same_prototype!(
    bindings::ftrace_c_direct_multi_flags,
    ftrace_c_direct_multi_flags,
    fn() -> c_ulong
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
same_prototype!(
    bindings::ftrace_c_direct_slot,
    ftrace_c_direct_slot,
    fn() -> *mut *mut bindings::ftrace_hash
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
same_prototype!(
    bindings::ftrace_c_direct_empty,
    ftrace_c_direct_empty,
    fn() -> *mut bindings::ftrace_hash
);
same_prototype!(
    bindings::rftrace_shim_max_order,
    rftrace_shim_max_order,
    fn() -> c_int
);
same_prototype!(
    bindings::rftrace_shim_caller,
    rftrace_shim_caller,
    fn(bool) -> c_ulong
);
same_prototype!(
    bindings::rftrace_shim_core_data,
    rftrace_shim_core_data,
    fn(c_ulong) -> bool
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
same_prototype!(
    bindings::rftrace_shim_stub_ops,
    rftrace_shim_stub_ops,
    fn(bool) -> c_ulong
);
same_prototype!(
    bindings::rftrace_shim_take_fail_write,
    rftrace_shim_take_fail_write,
    fn(c_ulong) -> bool
);
