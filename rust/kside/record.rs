// SPDX-License-Identifier: GPL-2.0

//! A record of the kernel's call-site table (`struct dyn_ftrace`) as the
//! core sees it: the handle [`Rec`], borrowed under `ftrace_lock`; the
//! build-time checks that the C layout, flag bits, update codes and bug
//! types are the core's; the kernel's `ftrace_bug_type` ([`set_bug_type()`]);
//! and the kernel's record functions that KUnit calls on a handle.
//!
//! A leaf module with `unsafe` code: the record's accesses and the
//! foreign declarations.

use core::ptr::NonNull;

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
    kside::lock::{
        FtraceLocked,
        FtraceMutex,
        Witness, //
    },
    rfcore::{
        flags::RecFlags,
        record::{
            BugType,
            Update, //
        },
        update::INSN_MAX, //
    },
};

// `struct dyn_ftrace` is walked by C, arch code and tracefs alike: the Rust
// view must be the C layout (the shim asserts the same on the C side).
const _: () = assert!(core::mem::size_of::<bindings::dyn_ftrace>() == 16);
const _: () = assert!(core::mem::offset_of!(bindings::dyn_ftrace, ip) == 0);
const _: () = assert!(core::mem::offset_of!(bindings::dyn_ftrace, flags) == 8);

// The flag bits and update codes are the kernel's.
const _: () = {
    use crate::rfcore::flags as f;
    assert!(bindings::FTRACE_FL_ENABLED as u64 == f::ENABLED);
    assert!(bindings::FTRACE_FL_REGS as u64 == f::REGS);
    assert!(bindings::FTRACE_FL_REGS_EN as u64 == f::REGS_EN);
    assert!(bindings::FTRACE_FL_TRAMP as u64 == f::TRAMP);
    assert!(bindings::FTRACE_FL_TRAMP_EN as u64 == f::TRAMP_EN);
    assert!(bindings::FTRACE_FL_IPMODIFY as u64 == f::IPMODIFY);
    assert!(bindings::FTRACE_FL_DISABLED as u64 == f::DISABLED);
    assert!(bindings::FTRACE_FL_DIRECT as u64 == f::DIRECT);
    assert!(bindings::FTRACE_FL_DIRECT_EN as u64 == f::DIRECT_EN);
    assert!(bindings::FTRACE_FL_CALL_OPS as u64 == f::CALL_OPS);
    assert!(bindings::FTRACE_FL_CALL_OPS_EN as u64 == f::CALL_OPS_EN);
    assert!(bindings::FTRACE_FL_TOUCHED as u64 == f::TOUCHED);
    assert!(bindings::FTRACE_FL_MODIFIED as u64 == f::MODIFIED);
    assert!(bindings::FTRACE_REF_MAX_SHIFT == f::REF_BITS);
    assert!(bindings::FTRACE_UPDATE_IGNORE as u8 == Update::Ignore as u8);
    assert!(bindings::FTRACE_UPDATE_MAKE_CALL as u8 == Update::MakeCall as u8);
    assert!(bindings::FTRACE_UPDATE_MODIFY_CALL as u8 == Update::ModifyCall as u8);
    assert!(bindings::FTRACE_UPDATE_MAKE_NOP as u8 == Update::MakeNop as u8);
    assert!(bindings::ftrace_bug_type_FTRACE_BUG_UNKNOWN as u8 == BugType::Unknown as u8);
    assert!(bindings::ftrace_bug_type_FTRACE_BUG_INIT as u8 == BugType::Init as u8);
    assert!(bindings::ftrace_bug_type_FTRACE_BUG_NOP as u8 == BugType::Nop as u8);
    assert!(bindings::ftrace_bug_type_FTRACE_BUG_CALL as u8 == BugType::Call as u8);
    assert!(bindings::ftrace_bug_type_FTRACE_BUG_UPDATE as u8 == BugType::Update as u8);
};

/// A record of the kernel's call-site table, borrowed under `ftrace_lock`.
///
/// # Invariants
///
/// The pointer is to a live `struct dyn_ftrace` of the table (or to a
/// record nobody else can see, such as a copy on the stack), and `ftrace_lock`
/// is held for `'a` (the witness of an [`FtraceLocked`] proves it): nobody
/// else writes the record meanwhile, and it is not freed.
///
/// `#[repr(transparent)]`: the C functions that only read a record and the
/// ops list under `ftrace_lock` are declared safe on it (here and beside
/// the code that calls them).
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct Rec<'a> {
    ptr: NonNull<bindings::dyn_ftrace>,
    lock: Witness<'a, FtraceMutex>,
}

crate::kside::abi::lowered_as!(Rec<'static> => *mut bindings::dyn_ftrace);

impl<'a> Rec<'a> {
    /// Wraps a record pointer received from C.
    ///
    /// # Safety
    ///
    /// `ptr` is null or points to a record of the table, or to a record that
    /// only the caller can see, valid for `'a`.
    pub(crate) unsafe fn from_raw(
        ptr: *mut bindings::dyn_ftrace,
        lock: &'a FtraceLocked,
    ) -> Option<Self> {
        // INVARIANT: the caller's contract, and `lock` proves ftrace_lock.
        NonNull::new(ptr).map(|ptr| Rec {
            ptr,
            lock: lock.witness(),
        })
    }

    /// A handle on a record the caller owns (a copy, or a test record).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn from_mut(rec: &'a mut bindings::dyn_ftrace, lock: &'a FtraceLocked) -> Self {
        // INVARIANT: the exclusive borrow keeps the record valid and
        // unshared for `'a`; `lock` proves ftrace_lock.
        Rec {
            ptr: NonNull::from(rec),
            lock: lock.witness(),
        }
    }

    /// The raw pointer, for C calls.
    pub(crate) fn as_ptr(self) -> *mut bindings::dyn_ftrace {
        self.ptr.as_ptr()
    }

    /// The proof of `ftrace_lock` the handle borrows.
    pub(crate) fn lock(self) -> &'a FtraceLocked {
        self.lock.proof()
    }

    /// The call-site address.
    pub(crate) fn ip(self) -> u64 {
        // SAFETY: by the type invariants the record is live and not written
        // concurrently.
        word(unsafe { (*self.ptr.as_ptr()).ip })
    }

    /// The flags word.
    pub(crate) fn flags(self) -> RecFlags {
        // SAFETY: as in `ip()`.
        RecFlags::from_raw(word(unsafe { (*self.ptr.as_ptr()).flags }))
    }

    /// Stores the flags word.
    pub(crate) fn set_flags(self, flags: RecFlags) {
        // SAFETY: as in `ip()`; ftrace_lock makes this the only writer.
        unsafe { (*self.ptr.as_ptr()).flags = c_word(flags.raw()) };
    }
}

/// Sets the kernel's `ftrace_bug_type`, which `ftrace_bug()` prints.
pub(crate) fn set_bug_type(_lock: &FtraceLocked, bug: BugType) {
    // SAFETY: `ftrace_bug_type` is a plain global written under
    // ftrace_lock, which `_lock` proves; a raw write does not create a
    // reference to the `static mut`.
    unsafe {
        core::ptr::addr_of_mut!(bindings::ftrace_bug_type).write(bug as bindings::ftrace_bug_type)
    };
}

// Why they are `safe`: each function is defined by the patched
// `kernel/trace/ftrace.c` with exactly this prototype (checked against
// bindgen's below), and asks nothing but what its arguments' types prove:
// it reads the record a `Rec` proves live and, under the `ftrace_lock` the
// handle proves held, the ops list and the ops' hashes;
// `ftrace_update_record()` writes the record's flags, which only that
// lock's holder writes; the two reports read the record and the bytes
// their arrays lend (`MCOUNT_INSN_SIZE <= INSN_MAX` of each, asserted
// below), print, and write the globals `ftrace_bug()` reads, which that
// lock's holder writes.
//
// The lint looks through the view's pointer into the C struct, which
// holds an empty arch placeholder (`dyn_arch_ftrace` on x86_64, as in C);
// only a pointer crosses, as in bindgen's declarations of the same
// functions.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// The kernel's `ftrace_test_record()` on `rec` (which reaches the
    /// core's decision): reads the record's flags.
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) safe fn ftrace_test_record(rec: Rec<'_>, enable: bool) -> c_int;
    /// The kernel's `ftrace_update_record()` on `rec`: reads and writes
    /// the record's flags (the core's decision).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) safe fn ftrace_update_record(rec: Rec<'_>, enable: bool) -> c_int;
    /// The kernel's `ftrace_get_addr_new()` on `rec` (the core's choice).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) safe fn ftrace_get_addr_new(rec: Rec<'_>) -> c_ulong;
    /// `ftrace_bug()` on `rec` for the error `err`: the kernel's report,
    /// and ftrace stops.
    pub(crate) safe fn rftrace_shim_bug(err: c_int, rec: Rec<'_>);
    /// Logs that `rec` was refused with the bytes expected and found, and
    /// hands the expected ones to `ftrace_bug()`.
    pub(crate) safe fn rftrace_shim_refuse(
        rec: Rec<'_>,
        expected: &[u8; INSN_MAX],
        actual: &[u8; INSN_MAX],
    );
}

// The shim reads `MCOUNT_INSN_SIZE` bytes of each array.
const _: () = assert!(bindings::MCOUNT_INSN_SIZE as usize <= INSN_MAX);

crate::kside::abi::lowered_as!(&'static [u8; INSN_MAX] => *const u8);

crate::kside::abi::same_prototype!(
    bindings::ftrace_test_record,
    ftrace_test_record,
    fn(Rec<'static>, bool) -> c_int
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_update_record,
    ftrace_update_record,
    fn(Rec<'static>, bool) -> c_int
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_get_addr_new,
    ftrace_get_addr_new,
    fn(Rec<'static>) -> c_ulong
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_bug,
    rftrace_shim_bug,
    fn(c_int, Rec<'static>) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_refuse,
    rftrace_shim_refuse,
    fn(Rec<'static>, &'static [u8; INSN_MAX], &'static [u8; INSN_MAX]) -> ()
);

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
