// SPDX-License-Identifier: GPL-2.0

//! Proofs that the kernel's ftrace locks are held, as types.
//!
//! The records, the ops list and the text the core works on are protected
//! by two C mutexes: `ftrace_lock` (records, ops, the record table's
//! writers) and `text_mutex` (live kernel text). Neither is a Rust lock,
//! so the core cannot use `kernel::sync::Mutex`; instead it uses tokens in
//! the spirit of `kernel::sync::LockedBy`: a [`FtraceLocked`] can only be
//! had by reference, from a [`FtraceLockGuard`] that took the lock, or
//! inside [`FtraceLocked::held()`], which a C entry point calls when its C
//! caller holds the lock and which asserts that with lockdep. Every handle
//! on a record or an ops (`kside::env::Rec`, `kside::env::Ops`, ...) borrows such a
//! reference, so no handle can outlive the lock that made it valid.
//!
//! `direct_mutex` (the direct-functions table, `kside::direct`) has the
//! same pair: [`DirectLocked`] and [`DirectLockGuard`].
//!
//! A leaf module with `unsafe` code: the C calls that take, release and
//! assert the locks.

use core::{
    cell::UnsafeCell,
    marker::PhantomData, //
};

use kernel::bindings;

/// Proof that the current task holds `ftrace_lock`.
///
/// Only ever seen as `&FtraceLocked`: from a [`FtraceLockGuard`] or
/// [`FtraceLocked::held()`].
///
/// # Invariants
///
/// While a reference to a `FtraceLocked` is live, the current task holds
/// `ftrace_lock`. It is neither `Send` nor `Sync`, so it stays on the task
/// that holds the lock.
pub(crate) struct FtraceLocked {
    _not_send: PhantomData<*mut ()>,
}

impl FtraceLocked {
    /// Runs `f` with the proof that `ftrace_lock` is held.
    ///
    /// For the C entry points whose C callers hold the lock. With lockdep
    /// (`CONFIG_PROVE_LOCKING`) the claim is checked: a caller that does
    /// not hold the lock gets a lockdep warning.
    ///
    /// # Safety
    ///
    /// The current task holds `ftrace_lock` for the whole call.
    pub(crate) unsafe fn held<R>(f: impl FnOnce(&FtraceLocked) -> R) -> R {
        // SAFETY: only reads the lock's owner (lockdep).
        unsafe { bindings::rftrace_shim_assert_ftrace_lock() };
        // INVARIANT: the caller holds the lock for the whole call, and the
        // reference cannot leave the closure (its lifetime is the call's).
        let token = FtraceLocked {
            _not_send: PhantomData,
        };
        f(&token)
    }
}

/// `ftrace_lock`, taken; released on drop.
///
/// # Invariants
///
/// The current task took `ftrace_lock` when the guard was made and holds
/// it until the guard is dropped.
pub(crate) struct FtraceLockGuard {
    token: FtraceLocked,
}

impl FtraceLockGuard {
    /// Takes `ftrace_lock` (may sleep).
    pub(crate) fn lock() -> Self {
        // SAFETY: a plain mutex_lock() of a static mutex, from process
        // context; the guard releases it.
        unsafe { bindings::rftrace_shim_ftrace_lock() };
        // INVARIANT: the lock was just taken.
        FtraceLockGuard {
            token: FtraceLocked {
                _not_send: PhantomData,
            },
        }
    }
}

impl core::ops::Deref for FtraceLockGuard {
    type Target = FtraceLocked;

    fn deref(&self) -> &FtraceLocked {
        // The proof lives as long as the guard, which holds the lock.
        &self.token
    }
}

impl Drop for FtraceLockGuard {
    fn drop(&mut self) {
        // SAFETY: the guard took the lock (type invariants) and every
        // handle borrowing its token is gone, since they borrow `self`.
        unsafe { bindings::rftrace_shim_ftrace_unlock() };
    }
}

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
    value: UnsafeCell<T>,
}

// SAFETY: every access is serialised by ftrace_lock (type invariants), and
// a `T: Send` may be written by whichever task holds it.
unsafe impl<T: Copy + Send> Sync for FtraceCell<T> {}

impl<T: Copy> FtraceCell<T> {
    /// A cell holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        FtraceCell {
            value: UnsafeCell::new(value),
        }
    }

    /// The value.
    pub(crate) fn get(&self, _lock: &FtraceLocked) -> T {
        // SAFETY: ftrace_lock is held, so no other access overlaps (type
        // invariants); the value is copied out.
        unsafe { *self.value.get() }
    }

    /// Replaces the value.
    pub(crate) fn set(&self, _lock: &FtraceLocked, value: T) {
        // SAFETY: as in `get()`; no reference into the cell exists.
        unsafe { *self.value.get() = value };
    }
}

/// Proof that the current task holds `text_mutex`, which live text
/// patching needs (the x86 INT3 batches, the trampoline calls).
///
/// # Invariants
///
/// While a reference to a `TextLocked` is live, the current task holds
/// `text_mutex`.
pub(crate) struct TextLocked {
    _not_send: PhantomData<*mut ()>,
}

impl TextLocked {
    /// Runs `f` with the proof that `text_mutex` is held; checked by
    /// lockdep.
    ///
    /// # Safety
    ///
    /// The current task holds `text_mutex` for the whole call.
    #[cfg_attr(not(CONFIG_X86_64), allow(dead_code))]
    pub(crate) unsafe fn held<R>(f: impl FnOnce(&TextLocked) -> R) -> R {
        // SAFETY: only reads the lock's owner (lockdep).
        unsafe { bindings::rftrace_shim_assert_text_lock() };
        // INVARIANT: as in `FtraceLocked::held()`.
        let token = TextLocked {
            _not_send: PhantomData,
        };
        f(&token)
    }
}

/// Proof that the current task holds `direct_mutex`.
///
/// # Invariants
///
/// While a reference to a `DirectLocked` is live, the current task holds
/// `direct_mutex`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
pub(crate) struct DirectLocked {
    _not_send: PhantomData<*mut ()>,
}

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl DirectLocked {
    /// Runs `f` with the proof that `direct_mutex` is held; checked by
    /// lockdep.
    ///
    /// # Safety
    ///
    /// The current task holds `direct_mutex` for the whole call.
    pub(crate) unsafe fn held<R>(f: impl FnOnce(&DirectLocked) -> R) -> R {
        // SAFETY: only reads the lock's owner (lockdep).
        unsafe { bindings::ftrace_c_direct_assert_lock() };
        // INVARIANT: the caller holds the lock for the whole call.
        let token = DirectLocked {
            _not_send: PhantomData,
        };
        f(&token)
    }
}

/// `direct_mutex`, taken; released on drop.
///
/// # Invariants
///
/// The current task took `direct_mutex` when the guard was made and holds
/// it until the guard is dropped.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
pub(crate) struct DirectLockGuard {
    token: DirectLocked,
}

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl DirectLockGuard {
    /// Takes `direct_mutex` (may sleep; before `ftrace_lock`, as in 7.2).
    pub(crate) fn lock() -> Self {
        // SAFETY: a plain mutex_lock() of a static mutex from process
        // context; the guard releases it.
        unsafe { bindings::ftrace_c_direct_lock(true) };
        // INVARIANT: just taken.
        DirectLockGuard {
            token: DirectLocked {
                _not_send: PhantomData,
            },
        }
    }
}

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl core::ops::Deref for DirectLockGuard {
    type Target = DirectLocked;

    fn deref(&self) -> &DirectLocked {
        &self.token
    }
}

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl Drop for DirectLockGuard {
    fn drop(&mut self) {
        // SAFETY: the guard took the lock (type invariants).
        unsafe { bindings::ftrace_c_direct_lock(false) };
    }
}
