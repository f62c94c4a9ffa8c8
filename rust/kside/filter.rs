// SPDX-License-Identifier: GPL-2.0

//! The kernel's `ftrace_hash` as a set of functions for the core's filter
//! algebra ([`crate::rfcore::filter`]), and the hashes of a manager ops
//! (function graph's) computed from its sub-ops with that algebra.
//!
//! Linux 7.2 builds a manager's filter from each sub-ops' filter minus its
//! notrace hash and stores an empty difference as an empty filter hash,
//! which means every function: `echo f > set_ftrace_filter; echo f >
//! set_ftrace_notrace; echo function_graph > current_tracer` graphs the
//! whole kernel. Here the sub-ops' selections are combined as
//! [`Selection`]s and "no function" comes back as [`Hashes::Nothing`],
//! which is stored as an empty filter hash flagged `FTRACE_HASH_FL_MOD`:
//! the kernel's own value for "a filter that names no loaded function"
//! (`ftrace_hash_empty()` does not call it empty), so every C reader of
//! the manager's hashes sees nothing to trace.
//!
//! A leaf module with `unsafe` code: the C calls on hashes.

use core::{
    marker::PhantomData,
    ptr::{
        self,
        NonNull, //
    },
};

use kernel::{
    alloc::{
        flags::{
            __GFP_NOWARN,
            GFP_KERNEL, //
        },
        KVVec, //
    },
    bindings,
    error::{
        code::ENOMEM,
        to_result,
        Error,
        Result, //
    },
    ffi::{
        c_uint,
        c_ulong, //
    },
    sync::atomic::{
        Atomic,
        Relaxed,
        Release, //
    },
};

use crate::{
    kside::abi::{
        c_word,
        HashRef, //
    },
    kside::lock::FtraceLocked,
    kside::ops::Ops,
    kside::shim,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::filter::{
        FnSet,
        Hashes,
        Selection, //
    },
};

// Why they are `safe`: defined by the C shim or the patched
// `kernel/trace/ftrace.c` with exactly these prototypes (checked against
// bindgen's below):
// - the first two only read the ops an `Ops` proves live under
//   `ftrace_lock` (held for `'a`, which the handle proves), and return a
//   pointer found there; a hash slot is a pointer field of the live ops'
//   hashes, aligned, written only under `ftrace_lock` (by the holder,
//   with atomic stores here or plain ones in C) and read under it or with
//   `rcu_dereference()`, so every access concurrent with the returned
//   `Atomic` is atomic;
// - `ftrace_c_free_hash_rcu()` takes by value a `Retired` hash nothing
//   else frees, and frees it after an RCU grace period (not null or
//   `EMPTY_HASH`).
unsafe extern "C" {
    /// The filter (`no_trace` false) or notrace hash of `ops` (null for
    /// none).
    pub(crate) safe fn rftrace_shim_ops_hash(
        ops: Ops<'_>,
        no_trace: bool,
    ) -> *mut bindings::ftrace_hash;
    /// Where `ops` keeps its filter or notrace hash (null for an ops
    /// without hashes).
    pub(crate) safe fn rftrace_shim_ops_hash_slot<'a>(
        ops: Ops<'a>,
        no_trace: bool,
    ) -> Option<&'a Atomic<*mut bindings::ftrace_hash>>;
    /// Frees a replaced hash after an RCU grace period.
    safe fn ftrace_c_free_hash_rcu(hash: Retired);
    /// Copies at most `max` functions of `hash` into `ips` and returns how
    /// many it copied. Not `safe`: it writes through `ips`.
    fn rftrace_shim_hash_ips(hash: Option<HashRef<'_>>, ips: *mut c_ulong, max: c_ulong)
        -> c_ulong;
}

crate::kside::abi::lowered_as!(
    Option<&'static Atomic<*mut bindings::ftrace_hash>> => *mut *mut bindings::ftrace_hash,
    Retired => *mut bindings::ftrace_hash,
);

crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_ops_hash,
    rftrace_shim_ops_hash,
    fn(Ops<'static>, bool) -> *mut bindings::ftrace_hash
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_ops_hash_slot,
    rftrace_shim_ops_hash_slot,
    fn(Ops<'static>, bool) -> Option<&'static Atomic<*mut bindings::ftrace_hash>>
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_hash_ips,
    rftrace_shim_hash_ips,
    fn(Option<HashRef<'static>>, *mut c_ulong, c_ulong) -> c_ulong
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_free_hash_rcu,
    ftrace_c_free_hash_rcu,
    fn(Retired) -> ()
);

impl HashRef<'_> {
    /// The number of functions of `hash` (0 for none).
    pub(crate) fn count_of(hash: Option<Self>) -> u64 {
        crate::kside::abi::word(shim::rftrace_shim_hash_count(hash))
    }

    /// The number of functions the hash names.
    pub(crate) fn count(self) -> u64 {
        Self::count_of(Some(self))
    }

    /// Whether this hash and `other` name a function in common.
    pub(crate) fn meets(self, other: Option<HashRef<'_>>) -> bool {
        shim::rftrace_shim_hash_meets(Some(self), other)
    }
}

/// A set of functions held in a kernel `ftrace_hash`.
///
/// # Invariants
///
/// `ptr` is null (the empty set) or a live hash that nobody changes while
/// the `KHash` exists. If `owned`, the hash was allocated for this value
/// alone, is published nowhere and is freed on drop; if not, it is a hash
/// of an ops, kept alive and unchanged by `ftrace_lock`, held for `'a`.
pub(crate) struct KHash<'a> {
    ptr: *mut bindings::ftrace_hash,
    owned: bool,
    _lock: PhantomData<&'a FtraceLocked>,
}

impl<'a> KHash<'a> {
    /// The filter (`notrace` false) or notrace hash of `ops`.
    pub(crate) fn of_ops(ops: Ops<'a>, notrace: bool) -> Self {
        let ptr = rftrace_shim_ops_hash(ops, notrace);
        // INVARIANT: a hash of a live ops, kept by ftrace_lock for `'a`.
        KHash {
            ptr,
            owned: false,
            _lock: PhantomData,
        }
    }

    /// The hash a view shows, not ours to free.
    pub(crate) fn of_view(view: HashRef<'a>) -> Self {
        // INVARIANT: live and unchanged for `'a` (`HashRef`'s invariants).
        KHash {
            ptr: view.as_ptr(),
            owned: false,
            _lock: PhantomData,
        }
    }

    /// A hash made for this value: null, or just allocated.
    fn new_owned(ptr: *mut bindings::ftrace_hash) -> Self {
        // INVARIANT: the callers pass a hash nobody else has.
        KHash {
            ptr,
            owned: true,
            _lock: PhantomData,
        }
    }

    /// The hash names no function yet says it is not empty: a filter of
    /// nothing (`FTRACE_HASH_FL_MOD`, e.g. `:mod:` of a module not loaded).
    pub(crate) fn is_nothing(&self) -> bool {
        shim::rftrace_shim_hash_is_nothing(self.view())
    }

    /// The hash, for C (null for the empty set).
    pub(crate) fn as_ptr(&self) -> *mut bindings::ftrace_hash {
        self.ptr
    }

    /// The number of functions the hash names.
    pub(crate) fn count(&self) -> u64 {
        HashRef::count_of(self.view())
    }

    /// The functions the hash names, in ascending order, each once;
    /// `None` when there is no memory for the list (the caller then walks
    /// the table).
    pub(crate) fn ips(&self) -> Option<KVVec<u64>> {
        ips_of(self.view())
    }

    /// The hash as a read-only view for as long as this value is
    /// borrowed (`None`: the empty set).
    pub(crate) fn view(&self) -> Option<HashRef<'_>> {
        // SAFETY: a live hash nobody changes while `self` exists (type
        // invariants), and the view borrows `self`.
        NonNull::new(self.ptr).map(|ptr| unsafe { HashRef::from_non_null(ptr) })
    }

    /// Moves the functions of this hash, one C handed over, into a hash of
    /// their own (`__ftrace_hash_move()`; `EMPTY_HASH` for none), which
    /// nobody sees until it is published. The hash this was is left empty
    /// for its owner to free.
    pub(crate) fn take_entries(self) -> Result<Fresh<'a>> {
        // SAFETY: a live hash or null (type invariants); the move empties
        // it, and `self` is consumed, so no `KHash` sees it change.
        let moved = unsafe { bindings::ftrace_c_hash_move(self.ptr) };
        if moved.is_null() {
            return Err(ENOMEM);
        }
        Ok(Fresh(Self::new_owned(moved)))
    }

    fn combine(&self, other: &Self, op: c_uint) -> Result<Self> {
        let mut out = ptr::null_mut();
        // SAFETY: both are null or live hashes (type invariants), only
        // read; `out` is a valid place for the result.
        to_result(unsafe {
            bindings::rftrace_shim_hash_combine(self.ptr, other.ptr, op, &mut out)
        })?;
        Ok(Self::new_owned(out))
    }

    /// The hash as one of its own: an ops' hash is copied.
    fn into_owned(self) -> Result<Self> {
        if self.owned {
            Ok(self)
        } else {
            self.union(&Self::new_owned(ptr::null_mut()))
        }
    }

    /// The hash as a new one for an ops, not published yet: an ops' hash
    /// is copied.
    pub(crate) fn into_fresh(self) -> Result<Fresh<'a>> {
        Ok(Fresh(self.into_owned()?))
    }

    /// The hash, handed over to C (null for the empty set): an ops' hash
    /// is copied, since the caller frees what it gets.
    pub(crate) fn into_raw(self) -> Result<*mut bindings::ftrace_hash> {
        let own = self.into_owned()?;
        let raw = own.ptr;
        core::mem::forget(own);
        Ok(raw)
    }
}

impl Drop for KHash<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: an owned hash is ours alone (type invariants);
            // free_ftrace_hash() takes null too.
            unsafe { bindings::free_ftrace_hash(self.ptr) };
        }
    }
}

/// A hash made for an ops and not published yet: freed on drop, or
/// [`Fresh::publish()`]ed into the ops' slot.
#[must_use = "a new hash is published or freed"]
pub(crate) struct Fresh<'a>(KHash<'a>);

impl<'a> Fresh<'a> {
    /// The hash, to read before it is published.
    pub(crate) fn hash(&self) -> &KHash<'a> {
        &self.0
    }

    /// Puts the hash in `slot` for every reader (`rcu_assign_pointer()`)
    /// and hands back the one it replaces.
    pub(crate) fn publish(self, slot: &HashSlot<'_>) -> Retired {
        self.install(slot).keep()
    }

    /// Puts the hash in `slot` for a change that may still be undone.
    pub(crate) fn install<'s>(self, slot: &HashSlot<'s>) -> Installed<'s> {
        let new = self.0.ptr;
        core::mem::forget(self);
        let old = slot.swap(new);
        // INVARIANT: `new` was ours and is in the slot now; `old` was
        // there; the slot's lock proof lives for `'s`.
        Installed {
            slot: slot.ptr,
            new,
            old,
            _lock: PhantomData,
        }
    }
}

/// A hash put in an ops' slot by a change that is either kept or undone.
///
/// # Invariants
///
/// `slot` is a live ops' hash slot holding `new`, which replaced `old`;
/// `ftrace_lock` is held for `'a` (the value borrows the proof its slot
/// was reached with, so it cannot outlive the lock).
#[must_use = "an installed hash must be kept or undone"]
pub(crate) struct Installed<'a> {
    slot: &'a Atomic<*mut bindings::ftrace_hash>,
    new: *mut bindings::ftrace_hash,
    old: *mut bindings::ftrace_hash,
    _lock: PhantomData<&'a FtraceLocked>,
}

impl Installed<'_> {
    /// The change stays: the replaced hash is to be freed.
    pub(crate) fn keep(self) -> Retired {
        Retired(self.old)
    }

    /// The change is undone: the replaced hash goes back, and the one
    /// that was installed is to be freed.
    pub(crate) fn undo(self) -> Retired {
        self.slot.store(self.old, Release);
        Retired(self.new)
    }
}

/// Where an ops keeps its filter or notrace hash
/// (`ops->func_hash->filter_hash`): lockless readers (the list function)
/// reach the hash through it with RCU.
///
/// # Invariants
///
/// `ptr` points at a hash pointer of a live ops, written only under
/// `ftrace_lock`, which is held for `'a`.
pub(crate) struct HashSlot<'a> {
    ptr: &'a Atomic<*mut bindings::ftrace_hash>,
    _lock: PhantomData<&'a FtraceLocked>,
}

impl<'a> HashSlot<'a> {
    /// The filter (`notrace` false) or notrace hash slot of `ops`; `None`
    /// for an ops without hashes.
    pub(crate) fn of_ops(ops: Ops<'a>, notrace: bool) -> Option<Self> {
        // INVARIANT: a field of the live ops' hashes, under ftrace_lock.
        rftrace_shim_ops_hash_slot(ops, notrace).map(|ptr| HashSlot {
            ptr,
            _lock: PhantomData,
        })
    }

    /// Puts `new` in the slot (a release store, for the RCU readers) and
    /// returns what it held.
    fn swap(&self, new: *mut bindings::ftrace_hash) -> *mut bindings::ftrace_hash {
        let old = self.ptr.load(Relaxed);
        self.ptr.store(new, Release);
        old
    }

    /// The slot's address, to compare with one C passed.
    pub(crate) fn as_ptr(&self) -> *mut *mut bindings::ftrace_hash {
        self.ptr.as_ptr()
    }
}

/// A hash taken out of its slot, which lockless readers may still be
/// reading: freed after an RCU grace period.
///
/// # Invariants
///
/// The hash was published in a slot, is no longer, and nothing else frees
/// it.
#[must_use = "a replaced hash must be freed after a grace period"]
#[repr(transparent)]
pub(crate) struct Retired(*mut bindings::ftrace_hash);

impl Retired {
    /// Frees the hash once no reader can be on it
    /// (`free_ftrace_hash_rcu()`).
    pub(crate) fn free_after_grace_period(self) {
        ftrace_c_free_hash_rcu(self);
    }

    /// Frees the hash now (`free_ftrace_hash()`), as the C code does with
    /// the hashes of a manager ops that did not start.
    ///
    /// # Safety
    ///
    /// No reader can be on the hash: its ops was not started while the
    /// slot held it.
    pub(crate) unsafe fn free_now(self) {
        // SAFETY: ours alone (type invariants) and unread (the caller's
        // contract); null or `EMPTY_HASH` is not freed.
        unsafe { bindings::free_ftrace_hash(self.0) };
    }
}

impl FnSet for KHash<'_> {
    type Error = Error;

    fn empty() -> Result<Self> {
        Ok(Self::new_owned(ptr::null_mut()))
    }

    fn contains(&self, ip: u64) -> bool {
        shim::rftrace_shim_hash_contains(self.view(), c_word(ip))
    }

    fn is_empty(&self) -> bool {
        self.count() == 0
    }

    fn union(&self, other: &Self) -> Result<Self> {
        self.combine(other, bindings::RFTRACE_SET_UNION)
    }

    fn intersection(&self, other: &Self) -> Result<Self> {
        self.combine(other, bindings::RFTRACE_SET_INTERSECTION)
    }

    fn difference(&self, other: &Self) -> Result<Self> {
        self.combine(other, bindings::RFTRACE_SET_DIFFERENCE)
    }
}

/// What one sub-ops traces, read from its hashes as documented (a filter
/// flagged as naming nothing selects nothing).
fn selection_of(ops: Ops<'_>) -> Result<Selection<KHash<'_>>> {
    let filter = KHash::of_ops(ops, false);
    if filter.is_nothing() {
        return Selection::nothing();
    }
    Selection::from_user(filter, KHash::of_ops(ops, true))
}

/// The sub-ops of a manager, under `ftrace_lock`.
pub(crate) fn subops<'a>(
    manager: Ops<'a>,
    lock: &'a FtraceLocked,
) -> impl Iterator<Item = Ops<'a>> {
    let mut prev: Option<Ops<'a>> = None;
    core::iter::from_fn(move || {
        let after = prev.map_or(ptr::null_mut(), |p| p.as_ptr());
        // SAFETY: `manager` is live and `after` null or one of its sub-ops
        // (the previous answer), under ftrace_lock, which keeps the list.
        let next = unsafe { bindings::rftrace_shim_subops_next(manager.as_ptr(), after) };
        // SAFETY: a sub-ops on the manager's list, live while ftrace_lock
        // is held.
        prev = unsafe { Ops::from_raw(next, lock) };
        prev
    })
}

/// A manager ops' hashes, computed from its sub-ops: owned, for the
/// caller to publish or free.
pub(crate) struct ManagerHashes<'a> {
    /// The filter: empty for every function, or flagged as naming nothing.
    pub(crate) filter: KHash<'a>,
    /// The notrace hash.
    pub(crate) notrace: KHash<'a>,
}

/// The manager ops' hashes from its sub-ops' selections, with "no
/// function" as the flagged empty filter.
pub(crate) fn manager_hashes<'a>(
    manager: Ops<'a>,
    lock: &'a FtraceLocked,
) -> Result<ManagerHashes<'a>> {
    bump(&STATS.manager_hashes, 1);
    let mut all = Selection::nothing()?;
    for sub in subops(manager, lock) {
        all = all.union(&selection_of(sub)?)?;
    }
    match all.into_hashes()? {
        Hashes::Nothing => {
            let nothing = shim::rftrace_shim_hash_nothing();
            if nothing.is_null() {
                return Err(ENOMEM);
            }
            bump(&STATS.manager_nothing, 1);
            Ok(ManagerHashes {
                filter: KHash::new_owned(nothing),
                notrace: KHash::new_owned(ptr::null_mut()),
            })
        }
        Hashes::Filter { filter, notrace } => Ok(ManagerHashes {
            filter: filter.into_owned()?,
            notrace: notrace.into_owned()?,
        }),
    }
}

/// The functions `hash` names (none for `None`), in ascending order, each
/// once; `None` when there is no memory for the list.
pub(crate) fn ips_of(hash: Option<HashRef<'_>>) -> Option<KVVec<u64>> {
    let n = usize::try_from(HashRef::count_of(hash)).ok()?;
    let mut ips = KVVec::from_elem(0u64, n, GFP_KERNEL | __GFP_NOWARN).ok()?;
    let max = c_word(u64::try_from(ips.len()).ok()?);
    // SAFETY: `ips` has room for `max` words (`c_ulong` and `u64` have one
    // size, asserted in `kside::abi`), and the view is of a hash nobody
    // changes while it lives.
    let got = unsafe { rftrace_shim_hash_ips(hash, ips.as_mut_ptr().cast(), max) };
    ips.truncate(usize::try_from(crate::kside::abi::word(got)).ok()?);
    let n = crate::rfcore::dirty::sort_unique(&mut ips);
    ips.truncate(n);
    Some(ips)
}
