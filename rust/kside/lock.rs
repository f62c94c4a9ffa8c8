// SPDX-License-Identifier: GPL-2.0

//! Proofs that the kernel's ftrace locks are held, as types.
//!
//! The records, the ops list and the text the core works on are protected
//! by C mutexes: `ftrace_lock` (records, ops, the record table's writers),
//! `text_mutex` (live kernel text) and `direct_mutex` (the
//! direct-functions table, `kside::direct`). None is a Rust lock, so the
//! core cannot use `kernel::sync::Mutex`; instead it uses tokens in the
//! spirit of `kernel::sync::LockedBy`: a [`Locked<M>`] ([`FtraceLocked`],
//! [`TextLocked`], [`DirectLocked`]) is only ever seen by reference, and
//! only inside a closure during which the current task holds the mutex:
//!
//! - [`Locked::with()`] takes the mutex, runs the closure with the proof
//!   and releases the mutex when the closure returns;
//! - [`Locked::held()`], for a C entry point whose C caller holds the
//!   mutex, checks that the mutex's owner is the current task (with or
//!   without lockdep) and runs the closure with the proof; a caller that
//!   does not hold it gets a warning and no proof.
//!
//! There is no guard value: nothing a closure can drop, forget or move
//! releases the mutex while a proof lives, and releasing it takes an
//! `unsafe` call of the mutex's C function. The reference's lifetime is
//! the closure call's, so a proof cannot be kept past it. Every handle on
//! a record or an ops (`kside::record::Rec`, `kside::ops::Ops`, ...)
//! borrows such a reference, so no handle outlives the lock either.
//!
//! A leaf module with `unsafe` code: the C calls that take, release and
//! ask about the mutexes, made in one place for all three.

use core::{
    cell::{
        Cell,
        UnsafeCell, //
    },
    marker::PhantomData, //
};

use kernel::bindings;

use super::shim;

/// A C function that asks whether the current task owns a mutex (declared
/// safe: it asks nothing of its caller, `kside::shim`).
pub(crate) type OwnerFn = extern "C" fn() -> bool;
/// A C function that takes or releases a mutex.
pub(crate) type LockFn = unsafe extern "C" fn();

/// A kernel mutex the core proves held and may take: the C functions that
/// ask about it, take it and release it. Implementations are only data.
///
/// # Safety
///
/// `MINE` says whether the current task owns the mutex; `LOCK` takes it
/// (and may sleep); `UNLOCK` releases it when the current task took it
/// with `LOCK`. None needs anything else of its caller.
pub(crate) unsafe trait CMutex {
    /// Whether the current task holds the mutex (its owner is this task).
    const MINE: OwnerFn;
    /// Takes the mutex. Only [`Locked::with()`] calls it.
    const LOCK: LockFn;
    /// Releases the mutex. Only [`Locked::with()`] calls it.
    const UNLOCK: LockFn;

    /// Whether the current task holds the mutex.
    fn mine() -> bool {
        (Self::MINE)()
    }
}

/// Proof that the current task holds the mutex `M`.
///
/// Only ever seen as `&Locked<M>`, inside [`Locked::with()`] or
/// [`Locked::held()`].
///
/// # Invariants
///
/// While a reference to a `Locked<M>` is live, the current task holds `M`.
/// It is neither `Send` nor `Sync`, so it stays on the task that holds the
/// mutex.
pub(crate) struct Locked<M> {
    _not_send: PhantomData<*mut M>,
}

impl<M: CMutex> Locked<M> {
    /// Runs `f` with the proof that `M` is held, if the current task holds
    /// it; else warns and returns `None`.
    ///
    /// For the C entry points whose C callers hold the mutex.
    pub(crate) fn held<R>(f: impl FnOnce(&Self) -> R) -> Option<R> {
        if kernel::warn_on!(!M::mine()) {
            return None;
        }
        // INVARIANT: the current task holds the mutex, and cannot release
        // it during the call: the task runs `f`, no safe code can release
        // a mutex (there is no guard, and the release is an `unsafe` C
        // call), and the reference cannot leave the closure (its lifetime
        // is the call's).
        let token = Locked {
            _not_send: PhantomData,
        };
        Some(f(&token))
    }

    /// Takes the mutex (may sleep), runs `f` with the proof that it is
    /// held, and releases it when `f` returns.
    ///
    /// The current task must not hold `M` already (the mutex is not
    /// recursive: lockdep reports the deadlock).
    pub(crate) fn with<R>(f: impl FnOnce(&Self) -> R) -> R {
        // SAFETY: takes the mutex; only sleeping is asked of the caller
        // (trait contract), and the core takes these mutexes from process
        // context.
        unsafe { (M::LOCK)() };
        let release = Release::<M>(PhantomData);
        // INVARIANT: just taken, and held until `release` goes, after the
        // closure (which cannot reach `release`) has returned.
        let token = Locked {
            _not_send: PhantomData,
        };
        let answer = f(&token);
        drop(release);
        answer
    }
}

/// A proof of `M` a `#[repr(transparent)]` handle can carry in place of
/// a reference: zero-sized, made only from a live proof
/// ([`Locked::witness()`]), and turned back into one for the same
/// lifetime ([`Witness::proof()`]).
///
/// # Invariants
///
/// A `&'a Locked<M>` was live when it was made: the current task holds `M`
/// for `'a`. Neither `Send` nor `Sync`, as the proof.
pub(crate) struct Witness<'a, M>(PhantomData<&'a Locked<M>>);

// A proof is zero-sized, so a witness can stand for one (`proof()`).
const _: () = assert!(core::mem::size_of::<Locked<FtraceMutex>>() == 0);

impl<M> Clone for Witness<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Witness<'_, M> {}

impl<M> Locked<M> {
    /// The witness of this proof, for as long as it lives.
    pub(crate) fn witness(&self) -> Witness<'_, M> {
        // INVARIANT: made from a live proof for its lifetime.
        Witness(PhantomData)
    }
}

impl<'a, M> Witness<'a, M> {
    /// The proof the witness was made from.
    pub(crate) fn proof(self) -> &'a Locked<M> {
        // SAFETY: `Locked<M>` is zero-sized, so a dangling, aligned pointer
        // is a valid reference to one; and a proof may exist for `'a`,
        // since one did (type invariants).
        unsafe { core::ptr::NonNull::<Locked<M>>::dangling().as_ref() }
    }
}

/// Releases `M` when dropped: private to [`Locked::with()`], which makes
/// one after taking `M`, so that the mutex is released however the
/// closure ends.
///
/// # Invariants
///
/// The current task took `M` with `LOCK` before making the value, and no
/// proof of `M` made with it is live when it is dropped.
struct Release<M: CMutex>(PhantomData<*mut M>);

impl<M: CMutex> Drop for Release<M> {
    fn drop(&mut self) {
        // SAFETY: taken with `LOCK` by this task, and the proof the
        // closure had is gone (type invariants).
        unsafe { (M::UNLOCK)() };
    }
}

/// `ftrace_lock`: records, the ops list, the record table's writers.
pub(crate) enum FtraceMutex {}

// SAFETY: the shim's functions for `ftrace_lock`: the owner question,
// mutex_lock() and mutex_unlock().
unsafe impl CMutex for FtraceMutex {
    const MINE: OwnerFn = shim::rftrace_shim_ftrace_lock_mine;
    const LOCK: LockFn = bindings::rftrace_shim_ftrace_lock;
    const UNLOCK: LockFn = bindings::rftrace_shim_ftrace_unlock;
}

/// Proof that the current task holds `ftrace_lock`.
pub(crate) type FtraceLocked = Locked<FtraceMutex>;

/// `text_mutex`: live kernel text (the x86 INT3 batches and trampoline
/// calls, the riscv64 stores).
#[cfg_attr(CONFIG_ARM64, allow(dead_code))]
pub(crate) enum TextMutex {}

// SAFETY: the shim's functions for `text_mutex`: the owner question,
// mutex_lock() and mutex_unlock().
unsafe impl CMutex for TextMutex {
    const MINE: OwnerFn = shim::rftrace_shim_text_lock_mine;
    const LOCK: LockFn = bindings::rftrace_shim_text_lock;
    const UNLOCK: LockFn = bindings::rftrace_shim_text_unlock;
}

/// Proof that the current task holds `text_mutex`.
#[cfg_attr(CONFIG_ARM64, allow(dead_code))]
pub(crate) type TextLocked = Locked<TextMutex>;

/// `direct_mutex`: the direct-functions table.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
pub(crate) enum DirectMutex {}

// SAFETY: the functions for `direct_mutex`: the owner question, and
// mutex_lock() and mutex_unlock() (taken before `ftrace_lock`, as in C).
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
unsafe impl CMutex for DirectMutex {
    const MINE: OwnerFn = shim::ftrace_c_direct_lock_mine;
    const LOCK: LockFn = bindings::rftrace_shim_direct_lock;
    const UNLOCK: LockFn = bindings::rftrace_shim_direct_unlock;
}

/// Proof that the current task holds `direct_mutex`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
pub(crate) type DirectLocked = Locked<DirectMutex>;

/// A value kept under `ftrace_lock`: read and written only with the proof
/// that the lock is held, by copy, so that no reference to it escapes
/// (in the spirit of `kernel::sync::LockedBy`, for a C lock).
///
/// # Invariants
///
/// `value` is only accessed inside [`FtraceCell::get()`] and
/// [`FtraceCell::set()`], which take a [`FtraceLocked`]: every access
/// happens with `ftrace_lock` held, so no two overlap.
pub(crate) struct FtraceCell<T> {
    value: Cell<T>,
}

// SAFETY: every access is serialised by ftrace_lock (type invariants), and
// a `T: Send` may be written by whichever task holds it.
unsafe impl<T: Copy + Send> Sync for FtraceCell<T> {}

impl<T: Copy> FtraceCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        FtraceCell {
            value: Cell::new(value),
        }
    }

    /// The value.
    pub(crate) fn get(&self, _lock: &FtraceLocked) -> T {
        self.value.get()
    }

    /// Replaces the value.
    pub(crate) fn set(&self, _lock: &FtraceLocked, value: T) {
        self.value.set(value);
    }
}

/// A value kept under `ftrace_lock` and lent, by `&mut`, to one closure at
/// a time (the `RefCell` of [`FtraceCell`], for values that are not
/// `Copy`).
///
/// A call that finds the value lent already (a caller up the stack is
/// running a closure on it) cannot run. What it was to change is then
/// lost, so the value is not left as it is: the cell remembers the miss
/// and runs the owner's `reset` on the value as soon as the lending
/// closure returns, before the lock can be released.
///
/// # Invariants
///
/// `value`, `busy` and `missed` are only accessed inside
/// [`FtraceState::with()`], which takes a [`FtraceLocked`]: every access
/// happens with `ftrace_lock` held. `busy` is true exactly while a closure
/// holds the `&mut` to `value`, so no two such references exist. `missed`
/// is true only while `busy` is.
pub(crate) struct FtraceState<T> {
    value: UnsafeCell<T>,
    busy: Cell<bool>,
    missed: Cell<bool>,
    reset: fn(&mut T),
}

// SAFETY: every access is serialised by ftrace_lock (type invariants), and
// a `T: Send` may be used by whichever task holds it.
unsafe impl<T: Send> Sync for FtraceState<T> {}

impl<T> FtraceState<T> {
    /// A cell holding `value`; `reset` puts the value into a state that
    /// is correct whatever a missed call was to do.
    pub(crate) const fn new(value: T, reset: fn(&mut T)) -> Self {
        FtraceState {
            value: UnsafeCell::new(value),
            busy: Cell::new(false),
            missed: Cell::new(false),
            reset,
        }
    }

    /// Runs `f` on the value. Returns `None` without running it if a
    /// caller up the stack is running a closure on the value: then the
    /// kernel is told (an error, not a warning: a test makes one), and the
    /// value is reset when that caller's closure returns.
    pub(crate) fn with<R>(&self, _lock: &FtraceLocked, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        if self.busy.get() {
            kernel::pr_err!("state lent twice; resetting it\n");
            self.missed.set(true);
            return None;
        }
        self.busy.set(true);
        // SAFETY: ftrace_lock is held (so no other task is here: type
        // invariants) and `busy` was false: no other reference to the
        // value exists, and none is made until `busy` is false again,
        // after `f` returns.
        let value = unsafe { &mut *self.value.get() };
        let r = f(&mut *value);
        if self.missed.replace(false) {
            (self.reset)(value);
        }
        self.busy.set(false);
        Some(r)
    }

    /// Whether a call missed the value since the last [`Self::with`]
    /// began: for the test that a nested call is caught.
    #[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
    pub(crate) fn missed(&self, _lock: &FtraceLocked) -> bool {
        self.missed.get()
    }
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
