// SPDX-License-Identifier: GPL-2.0

//! The kernel's C logic, which the shadow mode (and KUnit) compares the
//! core's answers with: C's decision on a record ([`c_decision()`],
//! [`Rec::c_decision()`]), its choice of a record's target
//! ([`c_select_addr()`]), its single ops on a record ([`c_unique_ops()`];
//! [`unique_ops()`] is the C half of `ftrace_find_unique_ops()`), its
//! accounting ([`c_account()`]) and its lookup of a record
//! ([`c_lookup_rec()`]).
//!
//! A leaf module with `unsafe` code: the C lookup's call and the foreign
//! declarations.

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
    kside::lock::FtraceLocked,
    kside::ops::Ops,
    kside::record::Rec,
    rfcore::flags::RecFlags, //
};

// Why they are `safe`: each function is defined by the patched
// `kernel/trace/ftrace.c` with exactly this prototype (checked against
// bindgen's below), and asks nothing but what its arguments' types prove:
// it reads the ops an `Ops` proves live and the record a `Rec` proves live
// (and, under the `ftrace_lock` the handle proves held, the ops list and
// the ops' hashes), and writes only what its `&mut` argument lends.
//
// The lint looks through the views' pointers into the C structs, some of
// which hold an empty arch placeholder (`dyn_arch_ftrace` on x86_64, as in
// C); only pointers cross, as in bindgen's declarations of the same
// functions.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// C's accounting of `ops` on `rec` (a copy: C writes only its
    /// flags); false on an overflow or underflow.
    pub(crate) safe fn ftrace_c_rec_account(
        rec: &mut bindings::dyn_ftrace,
        ops: Ops<'_>,
        inc: bool,
    ) -> bool;
    /// C's choice of the address `rec` is to call.
    pub(crate) safe fn ftrace_c_get_addr_new(rec: Rec<'_>) -> c_ulong;
    /// C's choice of the address `rec` calls now.
    pub(crate) safe fn ftrace_c_get_addr_curr(rec: Rec<'_>) -> c_ulong;
    /// C's single ops on `rec`, or null.
    pub(crate) safe fn ftrace_c_find_unique_ops(rec: Rec<'_>) -> *mut bindings::ftrace_ops;
}

crate::kside::abi::same_prototype!(
    bindings::ftrace_c_rec_account,
    ftrace_c_rec_account,
    fn(&'static mut bindings::dyn_ftrace, Ops<'static>, bool) -> bool
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_get_addr_new,
    ftrace_c_get_addr_new,
    fn(Rec<'static>) -> c_ulong
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_get_addr_curr,
    ftrace_c_get_addr_curr,
    fn(Rec<'static>) -> c_ulong
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_find_unique_ops,
    ftrace_c_find_unique_ops,
    fn(Rec<'static>) -> *mut bindings::ftrace_ops
);

impl Rec<'_> {
    /// Runs the kernel's C decision logic on a copy of the record.
    pub(crate) fn c_decision(self, enable: bool) -> (c_int, RecFlags) {
        c_decision(self.lock(), self.ip(), self.flags(), enable)
    }
}

/// Runs the kernel's C decision logic (`ftrace_check_record()` with
/// `update`) on a record made of `ip` and `flags`.
///
/// Returns the C verdict and the word C would store. No record of the table
/// is touched; the caller sets `ftrace_bug_type` again if it matters. C
/// writes the global `ftrace_bug_type` on the way, which only a holder of
/// `ftrace_lock` may do: hence `_lock`.
pub(crate) fn c_decision(
    lock: &FtraceLocked,
    ip: u64,
    flags: RecFlags,
    enable: bool,
) -> (c_int, RecFlags) {
    let mut copy = bindings::dyn_ftrace {
        ip: c_word(ip),
        flags: c_word(flags.raw()),
        ..Default::default()
    };
    let verdict = crate::kside::under_lock::check_record(lock, &mut copy, enable);
    (verdict, RecFlags::from_raw(word(copy.flags)))
}

/// The kernel's C choice, for the shadow mode and KUnit.
pub(crate) fn c_select_addr(rec: Rec<'_>, new: bool) -> u64 {
    word(if new {
        ftrace_c_get_addr_new(rec)
    } else {
        ftrace_c_get_addr_curr(rec)
    })
}

/// The single ops on `rec` (`ftrace_find_unique_ops()`) by C, for the
/// shadow mode; without it, `rust` (the answer by Rust,
/// `kside::select::unique_ops()`).
pub(crate) fn unique_ops(
    rec: Rec<'_>,
    rust: *mut bindings::ftrace_ops,
) -> *mut bindings::ftrace_ops {
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        c_unique_ops(rec)
    } else {
        rust
    }
}

/// The kernel's C answer to `ftrace_find_unique_ops()` on `rec`.
pub(crate) fn c_unique_ops(rec: Rec<'_>) -> *mut bindings::ftrace_ops {
    ftrace_c_find_unique_ops(rec)
}

/// Runs the kernel's C accounting on a copy of `rec` (same ip and flags).
///
/// Returns whether C accepted the change and the word it would store.
pub(crate) fn c_account(rec: Rec<'_>, ops: Ops<'_>, inc: bool) -> (bool, RecFlags) {
    let mut copy = bindings::dyn_ftrace {
        ip: c_word(rec.ip()),
        flags: c_word(rec.flags().raw()),
        ..Default::default()
    };
    let ok = ftrace_c_rec_account(&mut copy, ops, inc);
    (ok, RecFlags::from_raw(word(copy.flags)))
}

/// The kernel's C lookup (`lookup_rec()`): the first record touching
/// `[start, end]`, or null; for the shadow mode and KUnit.
pub(crate) fn c_lookup_rec(
    start: u64,
    end: u64,
    _rcu: &kernel::sync::rcu::Guard,
) -> *mut bindings::dyn_ftrace {
    // SAFETY: the C lookup walks the table, whose groups are freed only
    // after an RCU grace period, which `_rcu` holds off.
    unsafe { bindings::ftrace_c_lookup_rec(c_word(start), c_word(end)) }
}
