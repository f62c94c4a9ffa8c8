// SPDX-License-Identifier: GPL-2.0

//! The C functions the core calls that ask nothing of their caller but
//! what their arguments' types prove, declared `safe` so that calling one
//! needs no `unsafe` block: address lookups, constants, owner questions,
//! pure arithmetic, an atomic exchange, functions that only read hashes a
//! [`HashRef`] proves live and unchanged (or allocate a new one from
//! them). The C functions safe on a view of another module (an ops, a
//! module) are declared there, beside the view. Every other C function
//! is called through the bindgen declarations, with its contract at the
//! call.
//!
//! Each declaration is checked against bindgen's for the same prototype
//! (`same_prototype!` of `kside::abi`: bindgen's must be the declaration's
//! function-pointer type with each view type lowered to the C pointer it
//! passes as), so a prototype change in `include/rftrace.h`
//! or the patched `ftrace.c` fails the build here.
//!
//! A leaf module with `unsafe` code: the foreign block.

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_long,
        c_ulong, //
    },
};

use crate::kside::abi::{
    same_prototype,
    HashRef, //
};

// Why they are `safe`: each function is defined by the C shim
// (`c/rftrace_shim*.c`) or by the patched `kernel/trace/ftrace.c` with exactly
// this prototype (checked against bindgen's below), and none has a
// precondition: each returns a constant or an address, asks who owns a mutex,
// computes from its argument's value alone (no memory behind it), exchanges a
// word atomically, reads kernel text with a fault-safe accessor into what its
// `&mut` argument lends, or reads the hashes its `HashRef` arguments name (live and
// unchanged while the view exists: `HashRef`'s invariants), allocating the
// hash it returns.
unsafe extern "C" {
    /// `ftrace_kill()`: stops every update until reboot (sets the C
    /// side's flags, from any context).
    pub(crate) safe fn ftrace_kill();
    /// Whether ftrace is disabled (`ftrace_disabled`, read once).
    pub(crate) safe fn ftrace_c_disabled() -> bool;
    /// Whether `a` and `b` name the same functions (none: every function).
    pub(crate) safe fn ftrace_c_hash_equal(a: Option<HashRef<'_>>, b: Option<HashRef<'_>>) -> bool;
    /// Whether `hash` is a filter of nothing (no function, flagged so).
    pub(crate) safe fn rftrace_shim_hash_is_nothing(hash: Option<HashRef<'_>>) -> bool;
    /// Whether `hash` names `ip`.
    pub(crate) safe fn rftrace_shim_hash_contains(hash: Option<HashRef<'_>>, ip: c_ulong) -> bool;
    /// A new, empty hash flagged as a filter of nothing (null when out of
    /// memory).
    pub(crate) safe fn rftrace_shim_hash_nothing() -> *mut bindings::ftrace_hash;

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
    /// The empty direct-functions table (`EMPTY_HASH`, a static's
    /// address).
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) safe fn ftrace_c_direct_empty() -> *mut bindings::ftrace_hash;
    /// Whether `ip` is a callback site of an ftrace trampoline: one of
    /// the shared callers' sites, or in an ops' trampoline
    /// (`is_ftrace_trampoline()`, which walks the ops list with
    /// preemption off).
    #[cfg(CONFIG_X86)]
    pub(crate) safe fn rftrace_shim_callback_site(ip: c_ulong) -> bool;
    /// The kernel's `ftrace_location()`: the call site of the function at
    /// `ip`, 0 for none (a lookup under the RCU read lock it takes).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) safe fn ftrace_location(ip: c_ulong) -> c_ulong;
    /// `MAX_PAGE_ORDER`.
    pub(crate) safe fn rftrace_shim_max_order() -> c_int;
    /// Blocks retired and not freed yet (an atomic counter's value).
    pub(crate) safe fn rftrace_shim_retire_pending() -> c_long;
    /// The address of `ftrace_caller` (or with `regs` the caller that
    /// saves registers).
    pub(crate) safe fn rftrace_shim_caller(regs: bool) -> c_ulong;
    /// Whether `addr` is in the core kernel's data.
    pub(crate) safe fn rftrace_shim_core_data(addr: c_ulong) -> bool;
    /// The address of `ftrace_list_ops` (`list`) or `ftrace_nop_ops`.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
    pub(crate) safe fn rftrace_shim_stub_ops(list: bool) -> c_ulong;
    /// The 8 bytes at `addr`, read with a fault-safe accessor (0 if they
    /// cannot be read): what a per-callsite literal holds.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
    pub(crate) safe fn rftrace_shim_literal_read(addr: c_ulong) -> c_ulong;
    /// The shadow builds' test-only write failure: whether `ip` is the
    /// site named in `fail_write`, which it then clears (one `cmpxchg()`).
    pub(crate) safe fn rftrace_shim_take_fail_write(ip: c_ulong) -> bool;
    /// Reads the instruction at `ip` into `insn` with a fault-safe
    /// accessor: 0, or an error if it cannot be read.
    #[cfg(CONFIG_ARM64)]
    pub(crate) safe fn rftrace_shim_insn_read(ip: c_ulong, insn: &mut u32) -> c_int;
    /// The number of functions of `hash` (0 for none).
    pub(crate) safe fn rftrace_shim_hash_count(hash: Option<HashRef<'_>>) -> c_ulong;
    /// Whether `a` and `b` name a function in common.
    pub(crate) safe fn rftrace_shim_hash_meets(
        a: Option<HashRef<'_>>,
        b: Option<HashRef<'_>>,
    ) -> bool;
    /// Whether the direct-functions table `table` has an entry for every
    /// function of `hash`, with the target that function's entry names.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) safe fn rftrace_shim_direct_table_holds(
        table: HashRef<'_>,
        hash: HashRef<'_>,
    ) -> bool;
}

same_prototype!(bindings::ftrace_kill, ftrace_kill, fn() -> ());
same_prototype!(bindings::ftrace_c_disabled, ftrace_c_disabled, fn() -> bool);
same_prototype!(
    bindings::ftrace_c_hash_equal,
    ftrace_c_hash_equal,
    fn(Option<HashRef<'static>>, Option<HashRef<'static>>) -> bool
);
same_prototype!(
    bindings::rftrace_shim_hash_is_nothing,
    rftrace_shim_hash_is_nothing,
    fn(Option<HashRef<'static>>) -> bool
);
same_prototype!(
    bindings::rftrace_shim_hash_contains,
    rftrace_shim_hash_contains,
    fn(Option<HashRef<'static>>, c_ulong) -> bool
);
same_prototype!(
    bindings::rftrace_shim_hash_nothing,
    rftrace_shim_hash_nothing,
    fn() -> *mut bindings::ftrace_hash
);
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
    bindings::ftrace_c_direct_empty,
    ftrace_c_direct_empty,
    fn() -> *mut bindings::ftrace_hash
);
#[cfg(CONFIG_X86)]
same_prototype!(
    bindings::rftrace_shim_callback_site,
    rftrace_shim_callback_site,
    fn(c_ulong) -> bool
);
same_prototype!(
    bindings::ftrace_location,
    ftrace_location,
    fn(c_ulong) -> c_ulong
);
same_prototype!(
    bindings::rftrace_shim_max_order,
    rftrace_shim_max_order,
    fn() -> c_int
);
same_prototype!(
    bindings::rftrace_shim_retire_pending,
    rftrace_shim_retire_pending,
    fn() -> c_long
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
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
same_prototype!(
    bindings::rftrace_shim_literal_read,
    rftrace_shim_literal_read,
    fn(c_ulong) -> c_ulong
);
same_prototype!(
    bindings::rftrace_shim_take_fail_write,
    rftrace_shim_take_fail_write,
    fn(c_ulong) -> bool
);
#[cfg(CONFIG_ARM64)]
same_prototype!(
    bindings::rftrace_shim_insn_read,
    rftrace_shim_insn_read,
    fn(c_ulong, &'static mut u32) -> c_int
);
same_prototype!(
    bindings::rftrace_shim_hash_count,
    rftrace_shim_hash_count,
    fn(Option<HashRef<'static>>) -> c_ulong
);
same_prototype!(
    bindings::rftrace_shim_hash_meets,
    rftrace_shim_hash_meets,
    fn(Option<HashRef<'static>>, Option<HashRef<'static>>) -> bool
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
same_prototype!(
    bindings::rftrace_shim_direct_table_holds,
    rftrace_shim_direct_table_holds,
    fn(HashRef<'static>, HashRef<'static>) -> bool
);
