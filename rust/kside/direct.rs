// SPDX-License-Identifier: GPL-2.0

//! Direct calls: `register_ftrace_direct()`, `unregister_ftrace_direct()`
//! and `modify_ftrace_direct()`.
//!
//! A direct ops makes the sites of its functions call one trampoline (its
//! target) directly. Each function has at most one target, kept in the
//! kernel's direct-functions table (`ip -> target`, an `ftrace_hash`
//! published with RCU, changed under `direct_mutex`), which the list
//! function reads when a site is shared with other ops. Here:
//!
//! - registering refuses what C refuses ([`rfcore::direct::admit()`]),
//!   then, holding `direct_mutex` and `ftrace_lock`, refuses functions
//!   that have a target already (`-EBUSY`), builds a new table with the
//!   ops' functions added ([`NewTable`]), installs it ([`Installed`]) and
//!   starts the ops with the registry's own start-up; if the start-up
//!   fails the old table goes back, so nothing is left behind; a function
//!   whose call site the update pass quarantined is refused first
//!   (`-ENODEV`, [`refuse_quarantined()`]), on both interfaces;
//! - unregistering stops the ops (the registry's shut-down) and publishes
//!   a table without its functions under `direct_mutex`, then waits for
//!   the grace periods with no lock held;
//! - changing the target starts a stub ops over the same functions, so
//!   that their sites go through the list function meanwhile, checks the
//!   IPMODIFY claims, points the table's entries and the ops at the new
//!   target, and stops the stub.
//!
//! The replaced table is freed after an RCU-tasks grace period, since
//! trampolines may be reading it.
//!
//! A leaf module with `unsafe` code: the C calls on `direct_mutex`, the
//! table and the direct fields of an ops.

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    alloc::KVVec,
    bindings,
    error::{
        code::{
            EBUSY,
            EINVAL,
            ENODEV,
            ENOMEM, //
        },
        to_result,
        Error,
        Result, //
    },
    ffi::{
        c_int,
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
    kside::filter::KHash,
    kside::ipmodify,
    kside::lock::{
        DirectLocked,
        FtraceLocked, //
    },
    kside::ops::{
        CallOps,
        DirectOps, //
    },
    kside::registry,
    kside::shim,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::direct::{
        self as rules,
        Asking,
        Refusal, //
    },
};

// The flag bits are the kernel's.
const _: () = {
    assert!(rules::INITIALIZED == bindings::FTRACE_OPS_FL_INITIALIZED as u64);
    assert!(rules::DIRECT == bindings::FTRACE_OPS_FL_DIRECT as u64);
};

/// The errno C gives for a refusal.
fn errno(r: Refusal) -> Error {
    match r {
        Refusal::Invalid => EINVAL,
        Refusal::Busy => EBUSY,
    }
}

// Why they are `safe`: each function is defined by the patched
// `kernel/trace/ftrace.c` or the C shim with exactly this prototype (checked
// against bindgen's below), and asks nothing but what its arguments' types
// prove:
// - a `DirectOps` proves the ops live and `direct_mutex` held, under which
//   only its holder reads or writes the ops' direct fields and filter
//   (`ftrace_c_direct_ops()`, `ftrace_c_direct_filter()`, whose filter
//   stays as it is until the holder changes it, for `'d`);
// - a `HashRef` proves a hash live and unchanged while it is read;
// - a hash C allocates is returned as a `NewTable`, which the caller then
//   owns alone (`None`: out of memory);
// - `ftrace_c_unregister_deferred()` takes `ftrace_lock` itself and
//   returns its release record as a `Waits`, which
//   `ftrace_c_release_finish()` takes by value: finished once;
// - `ftrace_c_direct_free_table()` takes by value a `Retired` table that
//   nothing else frees and frees it after an RCU-tasks grace period;
// - the table's slot is a static, aligned pointer that lives forever,
//   written only under `direct_mutex` (by `Table`'s atomic stores, or by
//   C with `rcu_assign_pointer()`) and read with `rcu_dereference_sched()`
//   or under `direct_mutex`: every access is atomic or excluded.
//
// The lint looks through the views' pointers into the C structs (as in
// `kside::ops`); only pointers cross.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// Where the direct-functions table is published.
    safe fn ftrace_c_direct_slot() -> &'static Atomic<*mut bindings::ftrace_hash>;
    /// `ops` becomes a direct ops calling `addr`, or (`on` false) keeps no
    /// function or trampoline.
    safe fn ftrace_c_direct_ops(ops: DirectOps<'_>, addr: c_ulong, on: bool);
    /// The filter of `ops`.
    safe fn ftrace_c_direct_filter<'d>(ops: DirectOps<'d>) -> Option<HashRef<'d>>;
    /// A new table `bits` wide: the entries of `table` and, for each
    /// function of `hash`, one calling `addr`.
    safe fn rftrace_shim_direct_table_with(
        table: Option<HashRef<'_>>,
        hash: HashRef<'_>,
        addr: c_ulong,
        bits: c_uint,
    ) -> Option<NewTable>;
    /// A new table: the entries of `table` but those of the functions of
    /// `ops` that call `addr`.
    safe fn rftrace_shim_direct_table_without(
        table: Option<HashRef<'_>>,
        ops: DirectOps<'_>,
        addr: c_ulong,
    ) -> Option<NewTable>;
    /// The C `hash_add()`: a new hash with the entries of `a` and `b`.
    safe fn ftrace_c_direct_hash_add(a: Option<HashRef<'_>>, b: HashRef<'_>) -> Option<NewTable>;
    /// The C `hash_sub()`: a new hash with the entries of `a` but those of
    /// `b` (with a warning when `a` lacks one).
    safe fn ftrace_c_direct_hash_sub(a: HashRef<'_>, b: HashRef<'_>) -> Option<NewTable>;
    /// Stops `ops` under `ftrace_lock` (taken here), storing 0 or an
    /// errno in `err`; the waits are left to [`ftrace_c_release_finish()`].
    safe fn ftrace_c_unregister_deferred(ops: CallOps<'_>, err: &mut c_int) -> Waits;
    /// The waits of an unregistration, then what it left is freed.
    safe fn ftrace_c_release_finish(waits: Waits);
    /// Frees a replaced table after an RCU-tasks grace period.
    safe fn ftrace_c_direct_free_table(table: Retired);
}

crate::kside::abi::lowered_as!(
    &'static Atomic<*mut bindings::ftrace_hash> => *mut *mut bindings::ftrace_hash,
    Option<NewTable> => *mut bindings::ftrace_hash,
    Waits => *mut bindings::ftrace_release,
    Retired => *mut bindings::ftrace_hash,
);

crate::kside::abi::same_prototype!(
    bindings::ftrace_c_direct_slot,
    ftrace_c_direct_slot,
    fn() -> &'static Atomic<*mut bindings::ftrace_hash>
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_direct_ops,
    ftrace_c_direct_ops,
    fn(DirectOps<'static>, c_ulong, bool) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_direct_filter,
    ftrace_c_direct_filter,
    fn(DirectOps<'static>) -> Option<HashRef<'static>>
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_direct_table_with,
    rftrace_shim_direct_table_with,
    fn(Option<HashRef<'static>>, HashRef<'static>, c_ulong, c_uint) -> Option<NewTable>
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_direct_table_without,
    rftrace_shim_direct_table_without,
    fn(Option<HashRef<'static>>, DirectOps<'static>, c_ulong) -> Option<NewTable>
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_direct_hash_add,
    ftrace_c_direct_hash_add,
    fn(Option<HashRef<'static>>, HashRef<'static>) -> Option<NewTable>
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_direct_hash_sub,
    ftrace_c_direct_hash_sub,
    fn(HashRef<'static>, HashRef<'static>) -> Option<NewTable>
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_unregister_deferred,
    ftrace_c_unregister_deferred,
    fn(CallOps<'static>, &'static mut c_int) -> Waits
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_release_finish,
    ftrace_c_release_finish,
    fn(Waits) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_direct_free_table,
    ftrace_c_direct_free_table,
    fn(Retired) -> ()
);

/// Points the entries of `table` (`None`: of `hash` itself) for the
/// functions of `hash` at `addr` (0: at the target each entry of `hash`
/// names). Only the target word of each entry is written.
fn retarget(
    table: Option<HashRef<'_>>,
    hash: HashRef<'_>,
    addr: u64,
    _direct: &DirectLocked,
    _lock: &FtraceLocked,
) {
    // SAFETY: the table is read and written under direct_mutex (held,
    // `_direct`), and `hash` is live for the call (`HashRef`); the one
    // word of each entry written is read by the list function and the
    // update pass as a whole word, the pass under ftrace_lock (held,
    // `_lock`), so a target changes between passes, never within one.
    unsafe {
        bindings::rftrace_shim_direct_retarget(HashRef::ptr_of(table), hash.as_ptr(), c_word(addr))
    };
}

/// The direct-functions table's slot (`direct_functions`).
///
/// # Invariants
///
/// `slot` is the kernel's table pointer, which never holds null, written
/// only under `direct_mutex`, held for `'a`; a table it held is freed only
/// through [`Retired`], after `direct_mutex` is dropped.
struct Table<'a> {
    slot: &'static Atomic<*mut bindings::ftrace_hash>,
    _lock: PhantomData<&'a DirectLocked>,
}

impl<'a> Table<'a> {
    fn of(_lock: &'a DirectLocked) -> Self {
        let slot = ftrace_c_direct_slot();
        // INVARIANT: the table's slot, with `direct_mutex` held for `'a`.
        Table {
            slot,
            _lock: PhantomData,
        }
    }

    fn atomic(&self) -> &Atomic<*mut bindings::ftrace_hash> {
        self.slot
    }

    /// The table now, for as long as `self` is borrowed: replacing it
    /// ([`Table::install()`]) takes `self`. Never `None`: the slot holds
    /// `EMPTY_HASH` when the table has no entry.
    fn current(&self) -> Option<HashRef<'_>> {
        let now = self.atomic().load(Relaxed);
        // SAFETY: the table in the slot is replaced only under
        // direct_mutex, by `install()`, which cannot run while `self` is
        // borrowed, and freed after direct_mutex is dropped (type
        // invariants).
        unsafe { HashRef::from_raw(now) }
    }

    /// Whether the table has no entry.
    fn is_empty(&self) -> bool {
        self.atomic().load(Relaxed) == shim::ftrace_c_direct_empty()
    }

    /// Publishes `new` for the readers (a release store, as
    /// `rcu_assign_pointer()`), keeping the table it replaces until the
    /// change is kept or undone.
    fn install(self, new: NewTable) -> Installed<'a> {
        let new = new.give();
        let old = self.atomic().load(Relaxed);
        self.atomic().store(new, Release);
        // INVARIANT: `new` is in the slot now, and replaced `old`.
        Installed {
            slot: self,
            new,
            old,
        }
    }
}

/// A hash just allocated that nobody else has: a new direct-functions
/// table, or a new filter for a direct ops.
///
/// # Invariants
///
/// `.0` is a live hash nobody else has, freed on drop unless given away.
///
/// Made only by C: the functions below that allocate a hash return an
/// `Option<NewTable>` (`None`: out of memory).
#[must_use = "a new hash is installed or dropped"]
#[repr(transparent)]
struct NewTable(NonNull<bindings::ftrace_hash>);

impl NewTable {
    /// The hash a C allocation returned (`None`: out of memory).
    fn from_alloc(new: Option<NewTable>) -> Result<Self> {
        new.ok_or(ENOMEM)
    }

    /// A view of the hash while `self` is borrowed.
    fn view(&self) -> HashRef<'_> {
        // SAFETY: live and ours alone (type invariants), so unchanged
        // while `self` is borrowed.
        unsafe { HashRef::from_non_null(self.0) }
    }

    /// The hash, which the caller now owns.
    fn give(self) -> *mut bindings::ftrace_hash {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }
}

impl Drop for NewTable {
    fn drop(&mut self) {
        // SAFETY: ours alone and never published (type invariants).
        unsafe { bindings::free_ftrace_hash(self.0.as_ptr()) };
    }
}

/// The entries of `table` and, for each function of `hash`, one calling
/// `addr`, in a table `bits` wide.
fn table_with(
    table: Option<HashRef<'_>>,
    hash: HashRef<'_>,
    addr: u64,
    bits: u32,
) -> Result<NewTable> {
    NewTable::from_alloc(rftrace_shim_direct_table_with(
        table,
        hash,
        c_word(addr),
        bits,
    ))
}

/// The grace-period waits an unregistration left for after `direct_mutex`
/// is dropped (`ftrace_c_unregister_deferred()`).
///
/// # Invariants
///
/// `.0` is null or a record from `ftrace_c_unregister_deferred()` that
/// nothing else finishes.
///
/// Made only by C: `ftrace_c_unregister_deferred()` returns one.
#[must_use = "an unregistration returns only after its grace periods"]
#[repr(transparent)]
struct Waits(*mut bindings::ftrace_release);

impl Waits {
    /// Stops `ops` (the registry's shut-down, which takes `ftrace_lock`
    /// itself) and keeps its grace-period waits for after `direct_mutex`
    /// is dropped; 0 or the shut-down's errno.
    fn shut_down(ops: CallOps<'_>, _direct: &DirectLocked) -> (Self, c_int) {
        let mut ret: c_int = 0;
        let waits = ftrace_c_unregister_deferred(ops, &mut ret);
        (waits, ret)
    }

    /// Waits until no task can be on the ops' code any more, then frees
    /// what it left. Called without `direct_mutex` and `ftrace_lock`.
    fn finish(self) {
        ftrace_c_release_finish(self);
    }
}

/// A table published by a change that is then kept or undone.
///
/// # Invariants
///
/// The slot holds `new`, which replaced `old`; `direct_mutex` is held for
/// `'a`.
#[must_use = "an installed table must be kept or undone"]
struct Installed<'a> {
    slot: Table<'a>,
    new: *mut bindings::ftrace_hash,
    old: *mut bindings::ftrace_hash,
}

impl Installed<'_> {
    /// The change stays: the replaced table is to be freed.
    fn keep(self) -> Retired {
        Retired(self.old)
    }

    /// The change is undone: the replaced table goes back and the new one
    /// is to be freed.
    fn undo(self) -> Retired {
        self.slot.atomic().store(self.old, Release);
        Retired(self.new)
    }
}

/// A table taken out of the slot, which readers may still be on.
///
/// # Invariants
///
/// The table was published, is no longer, and nothing else frees it.
#[must_use = "a replaced table must be freed after a grace period"]
#[repr(transparent)]
struct Retired(*mut bindings::ftrace_hash);

impl Retired {
    /// Frees the table after an RCU-tasks grace period (`EMPTY_HASH` is
    /// never freed). Called after `direct_mutex` is dropped.
    fn free_after_grace_period(self) {
        ftrace_c_direct_free_table(self);
    }
}

/// The direct fields and the filter of an ops, which only this module
/// writes, under `direct_mutex`.
impl<'c> CallOps<'c> {
    /// `ops` becomes a direct ops calling `addr` (its function, flags,
    /// trampoline and target), or (`on` false) keeps no function or
    /// trampoline, as the C code leaves it for another registration.
    fn make_direct(self, addr: u64, on: bool, direct: &DirectLocked) {
        ftrace_c_direct_ops(self.direct(direct), c_word(addr), on);
    }

    /// The ops' filter, kept by `direct_mutex` until this module replaces
    /// it (the callers take no view of it past that).
    fn direct_filter<'d>(self, direct: &'d DirectLocked) -> Option<HashRef<'d>>
    where
        'c: 'd,
    {
        ftrace_c_direct_filter(self.direct(direct))
    }
}

/// The first function of `hash` whose call site was quarantined (the
/// update pass could not make it a call and never writes it again), if
/// any. Out of memory for the list of functions, none is found, and the
/// registration goes on as it would have.
fn quarantined_site(hash: HashRef<'_>, lock: &FtraceLocked) -> Option<u64> {
    let ips = crate::kside::filter::ips_of(Some(hash))?;
    let mut finder = crate::kside::pages::Finder::new(lock);
    ips.iter().copied().find(|&ip| {
        finder
            .find(ip)
            .is_some_and(|rec| rec.flags().is_quarantined())
    })
}

/// Refuses a direct call to a function whose call site is quarantined:
/// no call would ever be made there, and the caller (a BPF trampoline, a
/// direct-call module) would believe it attached. `-ENODEV`, the errno of
/// a registration while ftrace is stopped, with one log line naming the
/// site.
fn refuse_quarantined(hash: HashRef<'_>, lock: &FtraceLocked) -> Result {
    let Some(ip) = quarantined_site(hash, lock) else {
        return Ok(());
    };
    bump(&STATS.direct_refused_quarantined, 1);
    kernel::pr_warn!(
        "refusing a direct call at {:#x}: its call site is quarantined (<debugfs>/rftrace/quarantine)\n",
        ip
    );
    Err(ENODEV)
}

/// `register_ftrace_direct()`.
pub(crate) fn register(
    ops: CallOps<'_>,
    addr: u64,
    direct: &DirectLocked,
    lock: &FtraceLocked,
) -> Result {
    let handle = ops.locked(lock);
    let props = handle.props();
    let filter = KHash::of_ops(handle, false);
    rules::admit(&Asking {
        flags: handle.flags(),
        has_func: handle.has_func(),
        has_trampoline: props.trampoline,
        filter_empty: filter.count() == 0,
    })
    .map_err(errno)?;
    let fview = filter.view().ok_or(EINVAL)?;
    refuse_quarantined(fview, lock)?;
    let table = Table::of(direct);
    let now = table.current();
    if fview.meets(now) {
        return Err(errno(Refusal::Busy));
    }
    let bits = rules::table_bits(fview.count(), HashRef::count_of(now));
    let new = table_with(now, fview, addr, bits)?;
    retarget(None, fview, addr, direct, lock);
    let installed = table.install(new);
    ops.make_direct(addr, true, direct);
    match registry::startup(handle, 0, lock) {
        Ok(()) => {
            installed.keep().free_after_grace_period();
            bump(&STATS.direct_registered, 1);
            Ok(())
        }
        Err(e) => {
            ops.make_direct(addr, false, direct);
            installed.undo().free_after_grace_period();
            Err(e)
        }
    }
}

/// The checks of `unregister_ftrace_direct()` and `modify_ftrace_direct()`
/// on the ops' flags.
fn admit_change(ops: CallOps<'_>) -> Result {
    let multi = crate::kside::abi::word(shim::ftrace_c_direct_multi_flags());
    FtraceLocked::with(|lock| rules::admit_change(ops.locked(lock).flags(), multi).map_err(errno))
}

/// `unregister_ftrace_direct()`.
///
/// The ops is stopped and its functions leave the table under
/// `direct_mutex`; the grace-period waits come after the mutex is dropped,
/// since every `register_ftrace_function()` takes it first. The replaced
/// table is freed after an RCU-tasks grace period, not in place as upstream
/// does under readers of the table. Out of memory for the new table, the
/// entries are taken out in place after the waits, with `ftrace_lock`
/// held as well so that no update pass reads them meanwhile. The caller
/// holds neither `direct_mutex` nor `ftrace_lock`.
pub(crate) fn unregister(ops: CallOps<'_>, addr: u64, free_filters: bool) -> Result {
    admit_change(ops)?;
    let (ret, waits, retired) = DirectLocked::with(|direct| {
        let (waits, ret) = Waits::shut_down(ops, direct);
        let table = Table::of(direct);
        let new =
            rftrace_shim_direct_table_without(table.current(), ops.direct(direct), c_word(addr));
        let retired = NewTable::from_alloc(new).map(|new| table.install(new).keep());
        (ret, waits, retired.ok())
    });
    waits.finish();
    DirectLocked::with(|direct| {
        match retired {
            Some(retired) => retired.free_after_grace_period(),
            None => FtraceLocked::with(|_lock| {
                // SAFETY: under direct_mutex and ftrace_lock: the entries
                // of the ops' functions that call `addr` go, in place.
                unsafe { bindings::ftrace_c_direct_forget(ops.as_ptr(), c_word(addr)) }
            }),
        }
        // After the grace periods: the ops keeps no function for another
        // registration.
        ops.make_direct(addr, false, direct);
    });
    if free_filters {
        // SAFETY: a live ops, stopped.
        unsafe { bindings::ftrace_free_filter(ops.as_ptr()) };
    }
    bump(&STATS.direct_unregistered, 1);
    to_result(ret)
}

/// The IPMODIFY check of a direct ops' target change
/// (`__ftrace_hash_update_ipmodify()` from `update_ftrace_direct_mod()` or
/// [`modify()`]): the walk takes `ftrace_lock` itself, and the ops is asked
/// about the functions it shares with an IPMODIFY ops after the lock is
/// dropped, as C asks it without the lock. The caller holds
/// `direct_mutex` (which keeps the ops' `ops_func`) and not `ftrace_lock`.
pub(crate) fn retarget_claims(
    ops: CallOps<'_>,
    old: Option<HashRef<'_>>,
    new: Option<HashRef<'_>>,
    direct: &DirectLocked,
) -> Result {
    let mut later = KVVec::new();
    FtraceLocked::with(|lock| {
        let (old, new) = (old.map(KHash::of_view), new.map(KHash::of_view));
        let asks = ipmodify::Asks::Later(&mut later);
        ipmodify::update(
            ops.locked(lock),
            old.as_ref(),
            new.as_ref(),
            true,
            lock,
            asks,
        )
    })?;
    for ip in later {
        ipmodify::share_answer(ops.direct(direct).share_ipmodify_self(ip))?;
    }
    Ok(())
}

/// C's static stub ops, started over some functions so that their sites
/// go through the list function while their targets change.
///
/// An inner module: the stub can be registered only by
/// [`stub::with_stub()`], which stops it again before returning, so a
/// registered stub never outlives the hash it reads (no value whose drop
/// would stop it, and which could be forgotten).
mod stub {
    use core::{
        marker::PhantomData,
        ptr::NonNull, //
    };

    use kernel::{
        bindings,
        error::{
            to_result,
            Result, //
        },
        ffi::{
            c_int,
            c_ulong, //
        },
    };

    use crate::kside::{
        abi::HashRef,
        lock::DirectLocked, //
        ops::DirectOps,
    };

    /// One of C's static stub ops, set up by the C call that returned it
    /// for the functions of a hash live for `'h`.
    ///
    /// # Invariants
    ///
    /// `ptr` is a static ops (live forever) with `FTRACE_OPS_FL_STUB`,
    /// whose filter is a hash live and unchanged for `'h`; `direct_mutex`
    /// is held for `'h`, which makes its holder the stub's only user.
    ///
    /// Made only by C: the functions below return one.
    #[repr(transparent)]
    #[derive(Clone, Copy)]
    pub(super) struct StubOps<'h> {
        ptr: NonNull<bindings::ftrace_ops>,
        _life: PhantomData<&'h bindings::ftrace_hash>,
    }

    crate::kside::abi::lowered_as!(StubOps<'static> => *mut bindings::ftrace_ops);

    // Why they are `safe`: each function is defined by the patched
    // `kernel/trace/ftrace.c` with exactly this prototype (checked against
    // bindgen's below):
    // - `ftrace_c_direct_tmp_ops()` sets up its static stub over the
    //   hashes of the direct ops, which `direct_mutex` (held for `'d`, as
    //   the `DirectOps` proves) keeps, and returns it;
    // - `ftrace_c_direct_batch_tmp_ops()` sets up another static stub
    //   over `hash`: `unsafe`, as only a holder of `direct_mutex` may use
    //   that static;
    // - registering and unregistering a static ops (both take
    //   `ftrace_lock` themselves) and reading its filter touch nothing
    //   else; a registered stub reads its hash, which `with_stub()` keeps
    //   live by stopping the stub before it returns.
    //
    // The lint looks through the views' pointers into the C structs (as
    // in `kside::ops`); only pointers cross.
    #[allow(improper_ctypes)]
    unsafe extern "C" {
        safe fn ftrace_c_direct_tmp_ops<'d>(ops: DirectOps<'d>, addr: c_ulong) -> StubOps<'d>;
        fn ftrace_c_direct_batch_tmp_ops<'h>(hash: HashRef<'h>) -> StubOps<'h>;
        #[link_name = "ftrace_c_direct_register"]
        safe fn stub_register(stub: StubOps<'_>) -> c_int;
        #[link_name = "ftrace_c_direct_filter"]
        safe fn stub_filter<'h>(stub: StubOps<'h>) -> Option<HashRef<'h>>;
        #[link_name = "unregister_ftrace_function"]
        safe fn stub_unregister(stub: StubOps<'_>) -> c_int;
    }

    crate::kside::abi::same_prototype!(
        bindings::ftrace_c_direct_tmp_ops,
        ftrace_c_direct_tmp_ops,
        fn(DirectOps<'static>, c_ulong) -> StubOps<'static>
    );
    crate::kside::abi::same_prototype!(
        bindings::ftrace_c_direct_batch_tmp_ops,
        ftrace_c_direct_batch_tmp_ops,
        fn(HashRef<'static>) -> StubOps<'static>
    );
    crate::kside::abi::same_prototype!(
        bindings::ftrace_c_direct_register,
        stub_register,
        fn(StubOps<'static>) -> c_int
    );
    crate::kside::abi::same_prototype!(
        bindings::ftrace_c_direct_filter,
        stub_filter,
        fn(StubOps<'static>) -> Option<HashRef<'static>>
    );
    crate::kside::abi::same_prototype!(
        bindings::unregister_ftrace_function,
        stub_unregister,
        fn(StubOps<'static>) -> c_int
    );

    /// The stub over the functions of the direct ops `ops`, for a change
    /// of its target to `addr`.
    pub(super) fn of_direct<'d>(ops: DirectOps<'d>, addr: u64) -> StubOps<'d> {
        ftrace_c_direct_tmp_ops(ops, crate::kside::abi::c_word(addr))
    }

    /// The stub over the functions of `hash`.
    pub(super) fn of_hash<'h>(hash: HashRef<'h>, _direct: &'h DirectLocked) -> StubOps<'h> {
        // SAFETY: direct_mutex is held for `'h` (`_direct`), which makes
        // the caller the static stub's only user; `hash` is live for `'h`.
        unsafe { ftrace_c_direct_batch_tmp_ops(hash) }
    }

    /// Starts `stub`, runs `f` with the functions it holds, and stops it
    /// (a static ops: nothing waits) before returning `f`'s answer.
    pub(super) fn with_stub<R>(
        stub: StubOps<'_>,
        f: impl FnOnce(Option<HashRef<'_>>) -> Result<R>,
    ) -> Result<R> {
        to_result(stub_register(stub))?;
        let answer = f(stub_filter(stub));
        stub_unregister(stub);
        answer
    }
}

/// Gives the enabled direct ops `ops` a copy of `filter` as its filter,
/// under `ftrace_lock` (taken here), and updates its sites; 0 or an
/// errno.
fn update_filter(ops: CallOps<'_>, filter: HashRef<'_>, _direct: &DirectLocked) -> c_int {
    FtraceLocked::with(|_lock| {
        // SAFETY: a live ops (`CallOps`) whose filter only this module
        // changes, under direct_mutex (held, `_direct`) and ftrace_lock
        // (held, `_lock`); the filter is copied into the ops' slot as
        // for any filter change (`__ftrace_hash_move_and_update_ops()`).
        unsafe { bindings::ftrace_c_direct_update_filter(ops.as_ptr(), filter.as_ptr()) }
    })
}

/// Runs `run` under `direct_mutex`: taken here if `take`, else the
/// caller's (`-EINVAL` if it does not hold it).
fn under_direct_mutex(take: bool, run: impl FnOnce(&DirectLocked) -> Result) -> Result {
    if take {
        DirectLocked::with(run)
    } else {
        DirectLocked::held(run).unwrap_or(Err(EINVAL))
    }
}

/// `modify_ftrace_direct()` (`lock`: takes `direct_mutex`) and
/// `modify_ftrace_direct_nolock()`. The caller does not hold
/// `ftrace_lock`, and holds `direct_mutex` if and only if `lock` is false.
pub(crate) fn modify(ops: CallOps<'_>, addr: u64, lock: bool) -> Result {
    admit_change(ops)?;
    let run = |direct: &DirectLocked| -> Result {
        stub::with_stub(stub::of_direct(ops.direct(direct), addr), |filter| {
            // A registered direct ops has a filter (the C code refuses one
            // without): a stub without one would stand for every function.
            let filter = filter.ok_or(EINVAL)?;
            retarget_claims(ops, Some(filter), Some(filter), direct)?;
            FtraceLocked::with(|lock| {
                let table = Table::of(direct);
                retarget(table.current(), filter, addr, direct, lock);
                ops.locked(lock).set_direct_call(addr);
            });
            Ok(())
        })?;
        bump(&STATS.direct_retargeted, 1);
        Ok(())
    };
    under_direct_mutex(lock, run)
}

/// `update_ftrace_direct_add()`: the functions of `hash`, each entry
/// naming its own target, join the direct ops `ops`, which is registered
/// if it traces none yet. A function with a target already is refused
/// (`-EINVAL`, as in C), and so is an ops to register that has a function,
/// a trampoline or is enabled. A new direct table is published under
/// `direct_mutex` and the old one freed after an RCU-tasks grace period.
/// The caller holds neither `direct_mutex` nor `ftrace_lock`.
pub(crate) fn batch_add(ops: CallOps<'_>, hash: HashRef<'_>) -> Result {
    if hash.count() == 0 {
        return Err(EINVAL);
    }
    let (ret, retired, registered) =
        DirectLocked::with(|direct| -> (Result, Option<Retired>, bool) {
            let table = Table::of(direct);
            if hash.meets(table.current()) {
                return (Err(EINVAL), None, false);
            }
            if let Err(e) = FtraceLocked::with(|lock| refuse_quarantined(hash, lock)) {
                return (Err(e), None, false);
            }
            let old_filter = ops.direct_filter(direct);
            let register = HashRef::count_of(old_filter) == 0;
            if register {
                let busy = FtraceLocked::with(|lock| {
                    let o = ops.locked(lock);
                    o.has_func()
                        || o.props().trampoline
                        || o.flags() & crate::rfcore::registry::ops_fl::ENABLED != 0
                });
                if busy {
                    return (Err(EINVAL), None, false);
                }
            }
            let new_filter = match NewTable::from_alloc(ftrace_c_direct_hash_add(old_filter, hash))
            {
                Ok(f) => f,
                Err(e) => return (Err(e), None, false),
            };
            let new_table =
                match NewTable::from_alloc(ftrace_c_direct_hash_add(table.current(), hash)) {
                    Ok(t) => t,
                    Err(e) => return (Err(e), None, false),
                };
            let old_filter = HashRef::ptr_of(old_filter);
            let installed = table.install(new_table);
            let ret = if register {
                let filter = new_filter.give();
                // SAFETY: a live ops that traces nothing yet takes the new
                // filter as its own, under direct_mutex.
                unsafe { bindings::ftrace_c_direct_batch_ops(ops.as_ptr(), filter, true) };
                // SAFETY: a live ops; takes ftrace_lock itself, direct_mutex
                // is held as C holds it here.
                let ret = unsafe { bindings::ftrace_c_direct_register(ops.as_ptr()) };
                // SAFETY: if the ops did not start, its old (empty) filter
                // goes back and the new one is spare; else the ops keeps
                // the new one and the old one is spare. The spare hash is
                // ours alone now (free_ftrace_hash() takes null and
                // `EMPTY_HASH` too), and no view of it is used again.
                unsafe {
                    let spare = if ret != 0 {
                        bindings::ftrace_c_direct_batch_ops(ops.as_ptr(), old_filter, false);
                        filter
                    } else {
                        old_filter
                    };
                    bindings::free_ftrace_hash(spare);
                }
                ret
            } else {
                update_filter(ops, new_filter.view(), direct)
            };
            let retired = if ret == 0 {
                installed.keep()
            } else {
                installed.undo()
            };
            (to_result(ret), Some(retired), register)
        });
    if let Some(retired) = retired {
        retired.free_after_grace_period();
    }
    if ret.is_ok() && registered {
        bump(&STATS.direct_registered, 1);
    }
    ret
}

/// `update_ftrace_direct_del()`: the functions of `hash` (each entry with
/// the target it has in the table) leave the direct ops `ops`, which is
/// unregistered when none is left. A new direct table without them is
/// published under `direct_mutex`; an unregistration waits for its grace
/// periods after `direct_mutex` is dropped, unlike upstream. The caller holds
/// neither `direct_mutex` nor `ftrace_lock`.
pub(crate) fn batch_del(ops: CallOps<'_>, hash: HashRef<'_>) -> Result {
    if hash.count() == 0 {
        return Err(EINVAL);
    }
    admit_change(ops)?;
    let (ret, retired, waits) = DirectLocked::with(|direct| -> (Result, Option<Retired>, _) {
        let table = Table::of(direct);
        let (Some(old_filter), Some(now)) = (ops.direct_filter(direct), table.current()) else {
            return (Err(EINVAL), None, None);
        };
        if table.is_empty()
            || old_filter.count() == 0
            || !shim::rftrace_shim_direct_table_holds(now, hash)
        {
            return (Err(EINVAL), None, None);
        }
        // Each function of `hash` is in both (checked above for the table;
        // the ops traces its table entries).
        let new_filter = match NewTable::from_alloc(ftrace_c_direct_hash_sub(old_filter, hash)) {
            Ok(f) => f,
            Err(e) => return (Err(e), None, None),
        };
        let new_table = match NewTable::from_alloc(ftrace_c_direct_hash_sub(now, hash)) {
            Ok(t) => t,
            Err(e) => return (Err(e), None, None),
        };
        let mut waits = None;
        let ret = if new_filter.view().count() == 0 {
            let (w, ret) = Waits::shut_down(ops, direct);
            waits = Some(w);
            ret
        } else {
            update_filter(ops, new_filter.view(), direct)
        };
        if ret != 0 {
            // Never published: `new_table` is freed on drop.
            return (to_result(ret), None, waits);
        }
        let retired = table.install(new_table).keep();
        (Ok(()), Some(retired), waits)
    });
    let unregistered = waits.is_some() && ret.is_ok();
    if let Some(waits) = waits {
        waits.finish();
    }
    if unregistered {
        // SAFETY: the ops is stopped and nothing runs its code any more:
        // it keeps no function and no filter, for another registration.
        DirectLocked::with(|_direct| unsafe {
            bindings::ftrace_c_direct_batch_reset(ops.as_ptr())
        });
        bump(&STATS.direct_unregistered, 1);
    }
    if let Some(retired) = retired {
        retired.free_after_grace_period();
    }
    ret
}

/// `update_ftrace_direct_mod()` (`lock`: takes `direct_mutex`): the
/// functions of `hash` get the targets its entries name. A stub ops holds
/// them on the list function meanwhile, as for [`modify()`]. The caller
/// does not hold `ftrace_lock`, and holds `direct_mutex` if and only if
/// `lock` is false.
pub(crate) fn batch_mod(ops: CallOps<'_>, hash: HashRef<'_>, lock: bool) -> Result {
    if hash.count() == 0 {
        return Err(EINVAL);
    }
    admit_change(ops)?;
    let run = |direct: &DirectLocked| -> Result {
        let table = Table::of(direct);
        let filter = ops.direct_filter(direct);
        if table.is_empty() || filter.is_none() {
            return Err(EINVAL);
        }
        stub::with_stub(stub::of_hash(hash, direct), |_| {
            retarget_claims(ops, filter, filter, direct)?;
            FtraceLocked::with(|lock| retarget(table.current(), hash, 0, direct, lock));
            Ok(())
        })?;
        bump(&STATS.direct_retargeted, 1);
        Ok(())
    };
    under_direct_mutex(lock, run)
}

/// Runs `register()` for C: takes `direct_mutex`, then `ftrace_lock`. The
/// caller holds neither.
pub(crate) fn register_locked(ops: CallOps<'_>, addr: u64) -> c_int {
    DirectLocked::with(|direct| {
        FtraceLocked::with(|lock| register(ops, addr, direct, lock))
            .map_or_else(|e| e.to_errno(), |()| 0)
    })
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
