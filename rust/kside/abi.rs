// SPDX-License-Identifier: GPL-2.0

//! The views that cross the C boundary as pointers, the build-time check
//! that a Rust prototype using them is the C one, and the core's 64-bit
//! word as a C `unsigned long` ([`word()`], [`c_word()`]).
//!
//! A view ([`HashRef`], [`Lent`], `ops::CallOps`, `module::Module`,
//! `pages::Group`, `registry::Deferred`, and the handles that borrow a
//! lock proof, `record::Rec`, `ops::Ops`, `ops::ListOps`) is
//! `#[repr(transparent)]` over a pointer, so an entry point can take one
//! where its C prototype in `include/rftrace.h` has that pointer, and a C
//! function declared `safe` (`kside::shim`, or beside the view) can take
//! one where its C prototype has it. What the
//! view's invariants say of the pointer is then the C side's duty,
//! written once at the view and once in the header, instead of an
//! `unsafe` block at every entry. No Rust code makes a view from a raw
//! pointer without `unsafe`. `Option` of a view over a non-null pointer
//! passes as the same pointer, null for `None`.
//!
//! [`same_prototype!`] checks each such prototype against the one bindgen
//! made of the C declaration, with every view lowered to its C pointer
//! ([`Lowered`]: each view's module says what it lowers to), so the two
//! cannot drift apart.
//!
//! A leaf module: it uses no other module of the crate. With `unsafe`
//! code: the views' constructors and [`Lent`]'s accesses.

use core::{
    marker::PhantomData,
    ptr::{
        self,
        NonNull, //
    }, //
};

use kernel::{
    bindings,
    ffi::{
        c_char,
        c_int,
        c_long,
        c_uint,
        c_ulong, //
    },
};

/// A C callback on each record taken out of the table, with the caller's
/// data (`rftrace_remove_range()`).
pub(crate) type EachRec = unsafe extern "C" fn(*mut core::ffi::c_void, *mut bindings::dyn_ftrace);

/// A type of a Rust prototype of a C function and the C type it passes
/// as: the same ABI (a `#[repr(transparent)]` view over a pointer, or
/// `Option` of one over a non-null pointer, which is null for `None`), or
/// the type itself.
pub(crate) trait Lowered {
    /// The C type.
    type C;
}

/// Each type listed passes as itself.
macro_rules! lowered_as_itself {
    ($($t:ty),* $(,)?) => { $(impl Lowered for $t { type C = $t; })* };
}

lowered_as_itself!(
    (),
    bool,
    c_int,
    c_uint,
    c_long,
    c_ulong,
    *mut c_ulong,
    *mut core::ffi::c_void,
    *mut bindings::dyn_ftrace,
    *mut bindings::ftrace_ops,
    *mut bindings::ftrace_hash,
    *mut *mut bindings::ftrace_hash,
    *mut bindings::ftrace_page,
    *mut *mut bindings::ftrace_page,
    Option<EachRec>,
    bindings::ftrace_func_t,
);

/// Lowers each view type (its lifetimes `'static`) to its C type: for
/// the views of other modules.
macro_rules! lowered_as {
    ($($t:ty => $c:ty),* $(,)?) => { $(impl $crate::kside::abi::Lowered for $t { type C = $c; })* };
}
pub(crate) use lowered_as;

/// [`lowered_as!`] for the views of this module.
macro_rules! lowered_here {
    ($($t:ty => $c:ty),* $(,)?) => { $(impl Lowered for $t { type C = $c; })* };
}

lowered_here!(
    HashRef<'static> => *mut bindings::ftrace_hash,
    Option<HashRef<'static>> => *mut bindings::ftrace_hash,
    Option<Lent<'static, *mut bindings::ftrace_page>> => *mut *mut bindings::ftrace_page,
    Option<Lent<'static, *mut bindings::ftrace_hash>> => *mut *mut bindings::ftrace_hash,
    Option<Lent<'static, c_ulong>> => *mut c_ulong,
    Option<Lent<'static, u64>> => *mut u64,
    Option<Lent<'static, *const c_char>> => *mut *const c_char,
    &'static mut bindings::dyn_ftrace => *mut bindings::dyn_ftrace,
    &'static mut c_int => *mut c_int,
    &'static mut u32 => *mut u32,
    &'static mut [c_ulong; 4] => *mut c_ulong,
    &'static [u64; 8] => *const u64,
);

/// Checks at build time that `ours` has the argument and return types
/// listed, and that bindgen gave `theirs` the same types lowered to C
/// ([`Lowered`]).
macro_rules! same_prototype {
    ($theirs:path, $ours:path, fn($($arg:ty),* $(,)?) -> $ret:ty) => {
        const _: [unsafe extern "C" fn(
            $(<$arg as $crate::kside::abi::Lowered>::C),*
        ) -> <$ret as $crate::kside::abi::Lowered>::C; 1] = [$theirs];
        const _: [unsafe extern "C" fn($($arg),*) -> $ret; 1] = [$ours];
    };
}
pub(crate) use same_prototype;

/// A read-only view of a kernel `ftrace_hash` that stays live and
/// unchanged for `'a`: a hash C passed for the length of a call, the
/// published direct-functions table while `direct_mutex` is held, a
/// `hash::KHash` while it is borrowed.
///
/// Only [`HashRef::from_raw()`] (`unsafe`) and `hash::KHash::view()` make one,
/// so the C functions that only read a hash are declared safe on it
/// (`kside::shim`): the view is the proof their argument is live.
/// `#[repr(transparent)]` over a non-null pointer, so a `HashRef` and an
/// `Option<HashRef>` pass to C as a `struct ftrace_hash *`.
///
/// # Invariants
///
/// `ptr` is a live hash that nobody changes or frees for `'a`.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct HashRef<'a> {
    ptr: NonNull<bindings::ftrace_hash>,
    _life: PhantomData<&'a bindings::ftrace_hash>,
}

impl HashRef<'_> {
    /// A view of a hash C handed over (`None` for null).
    ///
    /// # Safety
    ///
    /// `ptr` is null or a live hash that nobody changes or frees for the
    /// lifetime the caller picks.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::ftrace_hash) -> Option<Self> {
        // INVARIANT: the caller's contract.
        NonNull::new(ptr).map(|ptr| HashRef {
            ptr,
            _life: PhantomData,
        })
    }

    /// A view of a hash the caller holds.
    ///
    /// # Safety
    ///
    /// `ptr` is a live hash that nobody changes or frees for the lifetime
    /// the caller picks.
    pub(crate) unsafe fn from_non_null(ptr: NonNull<bindings::ftrace_hash>) -> Self {
        // INVARIANT: the caller's contract.
        HashRef {
            ptr,
            _life: PhantomData,
        }
    }

    /// The hash, for C.
    pub(crate) fn as_ptr(self) -> *mut bindings::ftrace_hash {
        self.ptr.as_ptr()
    }

    /// The hash of `hash` for C, null for none.
    pub(crate) fn ptr_of(hash: Option<Self>) -> *mut bindings::ftrace_hash {
        hash.map_or(ptr::null_mut(), Self::as_ptr)
    }
}

/// Something an entry's C caller lends for the call: an out parameter, or
/// a counter the entry updates. Made only by C, as an entry's argument.
///
/// `#[repr(transparent)]` over a non-null pointer, so an entry takes an
/// `Option<Lent<T>>` where its prototype has a `T *` (null: `None`).
///
/// # Invariants
///
/// `ptr` is valid for reads and writes of a `T` for `'c`, and nobody else
/// writes it meanwhile (others may only read a counter lent this way, as
/// C reads it).
#[repr(transparent)]
pub(crate) struct Lent<'c, T> {
    ptr: NonNull<T>,
    _call: PhantomData<&'c mut T>,
}

impl<T: Copy> Lent<'_, T> {
    /// The value now.
    pub(crate) fn read(&self) -> T {
        // SAFETY: valid for reads for the call, written by nobody else
        // (type invariants).
        unsafe { self.ptr.as_ptr().read() }
    }

    /// Stores `value`.
    pub(crate) fn write(&mut self, value: T) {
        // SAFETY: valid for writes for the call, written by nobody else
        // (type invariants).
        unsafe { self.ptr.as_ptr().write(value) }
    }
}

// The core's word is a C `unsigned long` (the records' and the hashes'
// addresses, the call-site lists' entries).
const _: () = assert!(core::mem::size_of::<c_ulong>() == core::mem::size_of::<u64>());
const _: () = assert!(core::mem::align_of::<c_ulong>() == core::mem::align_of::<u64>());

/// A C `unsigned long` as the core's 64-bit word (same size, asserted above).
pub(crate) fn word(x: c_ulong) -> u64 {
    x as u64
}

/// The core's 64-bit word as a C `unsigned long`.
pub(crate) fn c_word(x: u64) -> c_ulong {
    x as c_ulong
}
