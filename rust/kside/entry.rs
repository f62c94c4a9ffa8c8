// SPDX-License-Identifier: GPL-2.0

//! Every function the C side calls: the only `#[no_mangle]` items of the
//! crate.
//!
//! Each entry checks what C hands it (a null record or ops is a warning
//! and an errno, never a panic), turns the lock its C caller holds into a
//! proof ([`FtraceLocked::held()`], [`TextLocked::held()`], which ask who
//! owns the mutex) and its raw pointers into handles that borrow that
//! proof, calls safe code, and maps the result to what C expects (an
//! errno, a verdict, an address). A record pointer is looked up in the
//! record table before it is used ([`pages::find()`]), so an entry that
//! takes only records and values is a safe function, whatever C passes.
//! An ops, a hash, a module, a record group or an out pointer arrives as
//! a view (`kside::abi`): a `#[repr(transparent)]` type whose invariants
//! are what the header asks of the C caller for that argument (live, or
//! valid for writes, for the call). No Rust code can make such a view
//! from a raw pointer without `unsafe`, so these entries are safe
//! functions too; only the entries that take raw memory (the call-site
//! list, the table's ends, a C callback) are `unsafe`.
//!
//! The prototypes are those of `include/rftrace.h`, which bindgen turns
//! into `kernel::bindings`; each entry is checked against its generated
//! declaration at compile time ([`same_signature!`], or
//! [`same_prototype!`] with the views lowered to their C pointers), so the
//! two cannot drift apart.
//!
//! A leaf module with `unsafe` code: the raw-memory entries and [`Lent`].

use kernel::{
    bindings,
    error::code::EINVAL,
    ffi::{
        c_char,
        c_int,
        c_long,
        c_uint,
        c_ulong,
        c_void, //
    },
    sync::rcu, //
};

use crate::{
    kside::abi::{
        c_word,
        word,
        HashRef,
        Lent, //
    },
    kside::filter::{
        self,
        HashSlot,
        KHash, //
    },
    kside::ipmodify,
    kside::lock::{
        FtraceLocked, //
    },
    kside::module::Module,
    kside::ops::{
        CallOps,
        Ops, //
    },
    kside::pages::{
        self,
        to_c, //
    },
    kside::record::Rec,
    kside::refilter,
    kside::registry,
    kside::stats::{
        bump,
        STATS, //
    },
    kside::subops,
    rfcore::{
        flags::RecFlags,
        record::Update, //
    },
};

use crate::kside::arch;
#[cfg(CONFIG_X86_64)]
use crate::kside::{
    arch::x86,
    lock::TextLocked, //
};
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
use crate::kside::{
    direct,
    lock::DirectLocked, //
};

/// Checks at compile time that an entry has the prototype bindgen made of
/// its declaration in `include/rftrace.h`: both must coerce to one
/// function pointer type.
macro_rules! same_signature {
    ($($name:ident),* $(,)?) => {
        $(
            // Two distinct function items in one array coerce to one
            // function pointer type only if their signatures are equal.
            const _: () = {
                let _ = [bindings::$name, $name];
            };
        )*
    };
}

/// Warns once (the first null pointer seen from C) and says whether `p` is
/// null.
fn null_from_c<T>(p: *const T) -> bool {
    kernel::warn_on!(p.is_null())
}

/// A view C passed, or `None` (after a warning, once) for null.
fn given<T>(view: Option<T>) -> Option<T> {
    if view.is_none() {
        kernel::warn_on!(true);
    }
    view
}

/// `-EINVAL`, for arguments C should never pass.
fn einval() -> c_int {
    EINVAL.to_errno()
}

/// Runs `f` on a record handed over by C, under `ftrace_lock`; `null` is
/// the answer for a null record, or one that is not a record of the table
/// (both also warn).
fn with_rec<R>(rec: *mut bindings::dyn_ftrace, null: R, f: impl FnOnce(Rec<'_>) -> R) -> R {
    if null_from_c(rec) {
        return null;
    }
    FtraceLocked::held(|lock| {
        let found = pages::find(rec, lock);
        if found.is_none() {
            kernel::pr_err!("a record from C is not one of the table\n");
            kernel::warn_on!(true);
        }
        found.map(f)
    })
    .flatten()
    .unwrap_or(null)
}

/// Runs `f` on an ops handed over by C, under `ftrace_lock`; `null` is
/// the answer for a null ops (which also warns once), or when the caller
/// does not hold the lock.
fn with_ops<R>(
    ops: Option<CallOps<'_>>,
    null: R,
    f: impl FnOnce(Ops<'_>, &FtraceLocked) -> R,
) -> R {
    let Some(ops) = given(ops) else {
        return null;
    };
    FtraceLocked::held(|lock| f(ops.locked(lock), lock)).unwrap_or(null)
}

/// An errno of a result, 0 for `Ok`.
fn errno(r: kernel::error::Result) -> c_int {
    r.map_or_else(|e| e.to_errno(), |()| 0)
}

/// `ftrace_update_record()` (`update`) and `ftrace_test_record()`:
/// `FTRACE_UPDATE_*`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_check_record(
    rec: *mut bindings::dyn_ftrace,
    enable: bool,
    update: bool,
) -> c_int {
    with_rec(rec, Update::Ignore as c_int, |rec| {
        crate::kside::decide::check_record(rec, enable, update).update as c_int
    })
}

/// Per-record accounting for `ops` (the body of the kernel's
/// `__ftrace_hash_rec_update()` loop); false on a reference count overflow
/// or underflow, or a null argument.
#[no_mangle]
pub(crate) extern "C" fn rftrace_account(
    rec: *mut bindings::dyn_ftrace,
    ops: Option<CallOps<'_>>,
    inc: bool,
) -> bool {
    if null_from_c(rec) {
        return false;
    }
    with_ops(ops, false, |ops, lock| {
        pages::find(rec, lock)
            .is_some_and(|rec| crate::kside::decide::Accounting::new(ops, inc).rec(rec))
    })
}

/// `ftrace_get_addr_new()`: the address the site is to call.
#[no_mangle]
pub(crate) extern "C" fn rftrace_get_addr_new(rec: *mut bindings::dyn_ftrace) -> c_ulong {
    with_rec(rec, 0, |rec| {
        c_word(crate::kside::decide::choose_target(rec, true))
    })
}

/// `ftrace_get_addr_curr()`: the address the site calls now.
#[no_mangle]
pub(crate) extern "C" fn rftrace_get_addr_curr(rec: *mut bindings::dyn_ftrace) -> c_ulong {
    with_rec(rec, 0, |rec| {
        c_word(crate::kside::decide::choose_target(rec, false))
    })
}

/// `ftrace_find_unique_ops()`: the single ops whose filter covers the
/// site, or null.
#[no_mangle]
pub(crate) extern "C" fn rftrace_find_unique_ops(
    rec: *mut bindings::dyn_ftrace,
) -> *mut bindings::ftrace_ops {
    with_rec(
        rec,
        core::ptr::null_mut(),
        crate::kside::decide::find_unique_ops,
    )
}

/// `ftrace_process_locs()`: checks the call-site list `[start, end)` of
/// `module` (null: the core kernel), then builds the records of the sites
/// it keeps in new page groups, not linked into the table yet: `*first`
/// to `*last`, `*pages` pages, `*recs` records (0 and null groups when
/// the list has no site). Returns 0, -ENOMEM, or -EINVAL (the list changed
/// under us, or a null out pointer).
///
/// # Safety
///
/// `[start, end)` is the `unsigned long`-aligned call-site list of
/// `module` (or of the core kernel), writable and used by nobody else
/// during the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_build_table(
    module: Module<'_>,
    start: *mut c_ulong,
    end: *mut c_ulong,
    first: Option<Lent<'_, *mut bindings::ftrace_page>>,
    last: Option<Lent<'_, *mut bindings::ftrace_page>>,
    pages: Option<Lent<'_, c_ulong>>,
    recs: Option<Lent<'_, c_ulong>>,
) -> c_int {
    let (Some(mut first), Some(mut last), Some(mut pages), Some(mut recs)) =
        (given(first), given(last), given(pages), given(recs))
    else {
        return einval();
    };
    let words = (end as usize).saturating_sub(start as usize) / core::mem::size_of::<c_ulong>();
    let list: &mut [u64] = if start.is_null() || words == 0 {
        &mut []
    } else {
        // SAFETY: by the function's contract `[start, end)` is an aligned,
        // writable array of `words` words nobody else uses during the
        // call; an `unsigned long` is a u64 (size and alignment asserted
        // in `kside::abi`).
        unsafe { core::slice::from_raw_parts_mut(start.cast::<u64>(), words) }
    };
    let report = crate::kside::table::scan_call_sites(module, list, arch::call_site);
    let kept = usize::try_from(report.kept).unwrap_or(usize::MAX);
    let (f, l, p, r, ret) = match pages::build(list, kept) {
        Ok(b) => {
            let (pages, records) = (b.pages(), b.records());
            let (first, last) = b.into_raw();
            (first, last, pages, records, 0)
        }
        Err(e) => {
            kernel::pr_err!("record table: cannot build the records: {:?}\n", e);
            let errno = match e {
                pages::BuildError::NoMemory => kernel::error::code::ENOMEM,
                pages::BuildError::Inconsistent => EINVAL,
            };
            (
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                0,
                0,
                errno.to_errno(),
            )
        }
    };
    bump(&STATS.records_made, r as u64);
    first.write(to_c(f));
    last.write(to_c(l));
    pages.write(p as c_ulong);
    recs.write(r as c_ulong);
    ret
}

/// `lookup_rec()`: the first record touching `[start, end]` (`end`
/// included), or null. The read-side section below ends on return: the
/// record stays valid for the caller only under its own `rcu_read_lock()`
/// or `ftrace_lock`, which every C caller holds
/// (`ftrace_location_range()`: `rcu_read_lock()`). In the shadow mode the C lookup runs too: for one
/// address both must find the same record; for a range, both a record or
/// both none (C's bisection may stop at any record in the range).
#[no_mangle]
pub(crate) extern "C" fn rftrace_lookup_rec(
    start: c_ulong,
    end: c_ulong,
) -> *mut bindings::dyn_ftrace {
    let (s, e) = (word(start), word(end));
    // Whatever the caller holds, the groups reached stay alive while this
    // read-side section lasts.
    let rcu = rcu::read_lock();
    let rec = pages::lookup(s, e, &rcu);
    crate::kside::shadow::lookup(s, e, rec, &rcu);
    drop(rcu);
    rec
}

/// Counts what went, and stores the last group and the record count.
fn hand_over(
    taken: pages::Taken,
    mut last: Lent<'_, *mut bindings::ftrace_page>,
    mut records: Lent<'_, c_ulong>,
) -> *mut bindings::ftrace_page {
    bump(&STATS.records_released, taken.records as u64);
    last.write(to_c(taken.last));
    records.write(records.read().saturating_sub(taken.records as c_ulong));
    to_c(taken.first)
}

/// `ftrace_release_mod()`: takes the page groups of `module` out of the
/// table and subtracts their records from `*records`. Returns the first
/// group taken out and stores the last in `*last`: they are linked, but
/// `(*last)->next` still points into the table for the readers on them;
/// after an RCU grace period the caller sets it to null and frees them.
///
/// # Safety
///
/// `head` and `tail` are `&ftrace_pages_start` and `&ftrace_pages`, and
/// the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_unlink_module(
    head: *mut *mut bindings::ftrace_page,
    tail: *mut *mut bindings::ftrace_page,
    module: Module<'_>,
    last: Option<Lent<'_, *mut bindings::ftrace_page>>,
    records: Option<Lent<'_, c_ulong>>,
) -> *mut bindings::ftrace_page {
    let (Some(last), Some(records)) = (given(last), given(records)) else {
        return core::ptr::null_mut();
    };
    if null_from_c(head) || null_from_c(tail) {
        return core::ptr::null_mut();
    }
    FtraceLocked::held(|lock| {
        // SAFETY: the function's contract is `unlink_module()`'s.
        let taken = unsafe { pages::unlink_module(head.cast(), tail.cast(), module, lock) };
        crate::kside::siteset::forget_module(module, lock);
        hand_over(taken, last, records)
    })
    .unwrap_or(core::ptr::null_mut())
}

/// `ftrace_free_mem()`: takes the records touching `[start, end]` out of
/// the table, calling `each(data, rec)` on each first, and subtracts them
/// from `*records`. Groups left empty are taken out and handed back as
/// `rftrace_unlink_module()` does. In the shadow mode the C lookup must
/// then find nothing in the range.
///
/// # Safety
///
/// As for [`rftrace_unlink_module`]; `each`, if given, may be called with
/// `data` and any record of the table.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_remove_range(
    head: *mut *mut bindings::ftrace_page,
    tail: *mut *mut bindings::ftrace_page,
    start: c_ulong,
    end: c_ulong,
    each: Option<crate::kside::abi::EachRec>,
    data: *mut c_void,
    last: Option<Lent<'_, *mut bindings::ftrace_page>>,
    records: Option<Lent<'_, c_ulong>>,
) -> *mut bindings::ftrace_page {
    let (Some(last), Some(records)) = (given(last), given(records)) else {
        return core::ptr::null_mut();
    };
    if null_from_c(head) || null_from_c(tail) {
        return core::ptr::null_mut();
    }
    let (s, e) = (word(start), word(end));
    FtraceLocked::held(|lock| {
        // SAFETY: the function's contract is `remove_range()`'s.
        let taken =
            unsafe { pages::remove_range(head.cast(), tail.cast(), s, e, each, data, lock) };
        crate::kside::siteset::forget_range(s, e, lock);
        crate::kside::shadow::removed(s, e);
        hand_over(taken, last, records)
    })
    .unwrap_or(core::ptr::null_mut())
}

/// `rebuild_hashes()` of a manager ops (function graph's): the filter and
/// notrace hashes that cover what its sub-ops trace, stored in `*filter`
/// and `*notrace_hash` (null: empty). A sub-ops whose filter is wholly covered
/// by its notrace hash traces nothing, and a manager whose sub-ops all
/// trace nothing gets a filter of nothing, never an empty filter (every
/// function) as in 7.2. Returns 0 or `-ENOMEM`; the caller holds
/// `ftrace_lock`, which keeps the sub-ops list and their hashes.
#[no_mangle]
pub(crate) extern "C" fn rftrace_manager_hashes(
    ops: Option<CallOps<'_>>,
    filter: Option<Lent<'_, *mut bindings::ftrace_hash>>,
    notrace_hash: Option<Lent<'_, *mut bindings::ftrace_hash>>,
) -> c_int {
    let (Some(mut filter), Some(mut notrace_hash)) = (given(filter), given(notrace_hash)) else {
        return einval();
    };
    let made = with_ops(ops, Err(EINVAL), |ops, lock| {
        let made = filter::manager_hashes(ops, lock)?;
        let f = made.filter.into_raw()?;
        // Both are owned: handing them over allocates nothing.
        let n = made.notrace.into_raw()?;
        Ok((f, n))
    });
    match made {
        Ok((f, n)) => {
            filter.write(f);
            notrace_hash.write(n);
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// `__register_ftrace_function()`: 0 or the errno C returns for it. The
/// caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_register_ops(ops: Option<CallOps<'_>>) -> c_int {
    with_ops(ops, einval(), |ops, lock| {
        errno(registry::register(ops, lock))
    })
}

/// `__unregister_ftrace_function()`: 0 or the errno C returns for it. The
/// caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_unregister_ops(ops: Option<CallOps<'_>>) -> c_int {
    with_ops(ops, einval(), |ops, lock| {
        errno(registry::unregister(ops, lock))
    })
}

/// `update_ftrace_function()`; the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_function() {
    FtraceLocked::held(registry::update_function);
}

/// `__ftrace_hash_rec_update()`: 1 if a site needs an update pass, 0 if
/// none, -1 after a reference count overflow or underflow. The caller
/// holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_account_walk(ops: Option<CallOps<'_>>, inc: bool) -> c_int {
    with_ops(ops, -1, |ops, lock| {
        match registry::account_walk(ops, inc, lock) {
            Ok(update) => c_int::from(update),
            Err(()) => -1,
        }
    })
}

/// The start-up counter (the C `ftrace_start_up`), which the Rust
/// registry keeps, for the C code that reads it under `ftrace_lock`
/// (0 if the caller does not hold it, after a warning).
#[no_mangle]
pub(crate) extern "C" fn rftrace_start_up() -> c_int {
    FtraceLocked::held(registry::start_up_count).unwrap_or(0)
}

/// `__ftrace_hash_update_ipmodify()`: 0 or the errno C returns for it.
/// `old` and `new` are null (every function) or hashes nobody changes
/// during the call.
///
/// Its C callers hold `ftrace_lock`, except the two direct-call paths
/// that change a direct ops' target (`retarget`), which hold
/// `direct_mutex` only: for those the walk takes `ftrace_lock` itself and
/// the direct ops is asked about shared functions after dropping it, as
/// C asks it without the lock.
#[no_mangle]
pub(crate) extern "C" fn rftrace_ipmodify_update(
    ops: Option<CallOps<'_>>,
    old: Option<HashRef<'_>>,
    new: Option<HashRef<'_>>,
    retarget: bool,
) -> c_int {
    if !retarget {
        return with_ops(ops, einval(), |ops, lock| {
            let (old, new) = (old.map(KHash::of_view), new.map(KHash::of_view));
            let asks = ipmodify::Asks::Now;
            errno(ipmodify::update(
                ops,
                old.as_ref(),
                new.as_ref(),
                false,
                lock,
                asks,
            ))
        });
    }
    // A target change exists only with direct calls.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    {
        let Some(ops) = given(ops) else {
            return einval();
        };
        errno(
            DirectLocked::held(|direct| direct::retarget_claims(ops, old, new, direct))
                .unwrap_or(Err(EINVAL)),
        )
    }
    #[cfg(not(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS))]
    einval()
}

/// `ftrace_startup()`: 0 or the errno C returns for it. The caller holds
/// `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_startup(ops: Option<CallOps<'_>>, command: c_int) -> c_int {
    with_ops(ops, einval(), |ops, lock| {
        errno(registry::startup(ops, command, lock))
    })
}

/// Runs `change` for a hash change C asked for: the hash of `ops` at
/// `orig_hash` (its filter or its notrace slot; if `want` says which, it
/// must be that one) becomes the functions of `hash` (which the caller
/// owns and frees after the call). A slot that is not one of the ops' (or
/// not the one wanted) would put the hash where C does not expect it:
/// `-EINVAL`, with a warning. The caller holds `ftrace_lock`.
fn with_hash_change(
    ops: Option<CallOps<'_>>,
    orig_hash: *mut *mut bindings::ftrace_hash,
    hash: Option<HashRef<'_>>,
    want: Option<bool>,
    change: impl for<'a> FnOnce(Ops<'a>, bool, KHash<'a>, &'a FtraceLocked) -> kernel::error::Result,
) -> c_int {
    let Some(hash) = given(hash) else {
        return einval();
    };
    with_ops(ops, einval(), |ops, lock| {
        let slot = |notrace| HashSlot::of_ops(ops, notrace).map(|s| s.as_ptr());
        let found = [false, true]
            .into_iter()
            .find(|&notrace| slot(notrace) == Some(orig_hash));
        let notrace = match (found, want) {
            (Some(n), None) => n,
            (Some(n), Some(w)) if n == w => n,
            _ => {
                kernel::warn_on!(true);
                return einval();
            }
        };
        errno(change(ops, notrace, KHash::of_view(hash), lock))
    })
}

/// `__ftrace_hash_move_and_update_ops()`: the filter (`enable` non-zero)
/// or notrace hash of `ops`, at `orig_hash`, becomes the functions of
/// `hash`; 0 or the errno C returns for it, with nothing changed.
#[no_mangle]
pub(crate) extern "C" fn rftrace_hash_move_and_update(
    ops: Option<CallOps<'_>>,
    orig_hash: *mut *mut bindings::ftrace_hash,
    hash: Option<HashRef<'_>>,
    enable: c_int,
) -> c_int {
    with_hash_change(ops, orig_hash, hash, Some(enable == 0), refilter::apply)
}

/// `ftrace_run_modify_code()`: the update pass with `command`, `ops`
/// marked as modifying from the hashes it had (`old_filter`,
/// `old_notrace`: null or live until the call returns; C's trampoline
/// finders read them meanwhile). The caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_run_modify_code(
    ops: Option<CallOps<'_>>,
    command: c_int,
    old_filter: *mut bindings::ftrace_hash,
    old_notrace: *mut bindings::ftrace_hash,
) {
    with_ops(ops, (), |ops, lock| {
        let old = refilter::OldHashes::from_c(old_filter, old_notrace);
        refilter::run_modify_code(ops, command, old, lock);
    })
}

/// Runs `f` on a manager ops and one of its sub-ops handed over by C,
/// under `ftrace_lock`; `-EINVAL` for a null one (which also warns once).
fn with_subops(
    ops: Option<CallOps<'_>>,
    subops: Option<CallOps<'_>>,
    f: impl FnOnce(Ops<'_>, Ops<'_>, &FtraceLocked) -> kernel::error::Result,
) -> c_int {
    let Some(subops) = given(subops) else {
        return einval();
    };
    with_ops(ops, einval(), |ops, lock| {
        errno(f(ops, subops.locked(lock), lock))
    })
}

/// `ftrace_startup_subops()`: 0 or the errno C returns for it. The caller
/// holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_startup_subops(
    ops: Option<CallOps<'_>>,
    subops: Option<CallOps<'_>>,
    command: c_int,
) -> c_int {
    with_subops(ops, subops, |m, s, lock| {
        subops::startup(m, s, command, lock)
    })
}

/// `ftrace_shutdown_subops()`: 0 or the errno C returns for it. The
/// caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_shutdown_subops(
    ops: Option<CallOps<'_>>,
    subops: Option<CallOps<'_>>,
    command: c_int,
) -> c_int {
    with_subops(ops, subops, |m, s, lock| {
        subops::shutdown(m, s, command, lock)
    })
}

/// `ftrace_hash_move_and_update_subops()`: the hash of `subops` at
/// `orig_hash` (its filter or its notrace slot) becomes the functions of
/// `hash`, and its manager follows; 0 or the errno C returns for it, with
/// nothing changed.
#[no_mangle]
pub(crate) extern "C" fn rftrace_subops_change(
    subops: Option<CallOps<'_>>,
    orig_hash: *mut *mut bindings::ftrace_hash,
    hash: Option<HashRef<'_>>,
) -> c_int {
    with_hash_change(subops, orig_hash, hash, None, subops::change)
}

/// `ftrace_update_manager()`: the manager `ops` follows its sub-ops'
/// hashes again, after one changed in place. 0 or the errno C returns for
/// it. The caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_manager(ops: Option<CallOps<'_>>) -> c_int {
    with_ops(ops, einval(), |ops, lock| errno(subops::refresh(ops, lock)))
}

/// `register_ftrace_direct()`: 0 or the errno C returns for it. The caller
/// holds neither `direct_mutex` nor `ftrace_lock`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_register_direct(ops: Option<CallOps<'_>>, addr: c_ulong) -> c_int {
    match given(ops) {
        Some(ops) => direct::register_locked(ops, word(addr)),
        None => einval(),
    }
}

/// `unregister_ftrace_direct()`: 0 or the errno C returns for it. The
/// caller holds neither `direct_mutex` nor `ftrace_lock`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_unregister_direct(
    ops: Option<CallOps<'_>>,
    addr: c_ulong,
    free_filters: bool,
) -> c_int {
    errno(
        given(ops)
            .ok_or(EINVAL)
            .and_then(|ops| direct::unregister(ops, word(addr), free_filters)),
    )
}

/// `modify_ftrace_direct()` (`lock`) and `modify_ftrace_direct_nolock()`:
/// 0 or the errno C returns for it. The caller does not hold
/// `ftrace_lock`, and holds `direct_mutex` if and only if `lock` is false.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_modify_direct(
    ops: Option<CallOps<'_>>,
    addr: c_ulong,
    lock: bool,
) -> c_int {
    errno(
        given(ops)
            .ok_or(EINVAL)
            .and_then(|ops| direct::modify(ops, word(addr), lock)),
    )
}

/// An ops and a hash C passed, `-EINVAL` (with a warning) for either null.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
fn ops_hash<'c>(
    ops: Option<CallOps<'c>>,
    hash: Option<HashRef<'c>>,
) -> kernel::error::Result<(CallOps<'c>, HashRef<'c>)> {
    Ok((given(ops).ok_or(EINVAL)?, given(hash).ok_or(EINVAL)?))
}

/// `update_ftrace_direct_add()`: 0 or the errno C returns for it. The
/// caller holds neither `direct_mutex` nor `ftrace_lock`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_direct_add(
    ops: Option<CallOps<'_>>,
    hash: Option<HashRef<'_>>,
) -> c_int {
    errno(ops_hash(ops, hash).and_then(|(ops, hash)| direct::batch_add(ops, hash)))
}

/// `update_ftrace_direct_del()`: 0 or the errno C returns for it. The
/// caller holds neither `direct_mutex` nor `ftrace_lock`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_direct_del(
    ops: Option<CallOps<'_>>,
    hash: Option<HashRef<'_>>,
) -> c_int {
    errno(ops_hash(ops, hash).and_then(|(ops, hash)| direct::batch_del(ops, hash)))
}

/// `update_ftrace_direct_mod()` (`lock`: `do_direct_lock`): 0 or the
/// errno C returns for it. The caller does not hold `ftrace_lock`, and
/// holds `direct_mutex` if and only if `lock` is false.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_direct_mod(
    ops: Option<CallOps<'_>>,
    hash: Option<HashRef<'_>>,
    lock: bool,
) -> c_int {
    errno(ops_hash(ops, hash).and_then(|(ops, hash)| direct::batch_mod(ops, hash, lock)))
}

/// `__ftrace_shutdown()`: 0 or the errno C returns for it. With a non-null
/// `rel`, a dynamic ops' grace-period waits are left to the caller. The
/// caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_shutdown(
    ops: Option<CallOps<'_>>,
    command: c_int,
    rel: Option<registry::Deferred<'_>>,
) -> c_int {
    with_ops(ops, einval(), |ops, lock| {
        errno(registry::shutdown(ops, command, rel, lock))
    })
}

/// Counter `idx`: stores its name in `*name` and returns true, or false.
#[no_mangle]
pub(crate) extern "C" fn rftrace_stat(
    idx: c_uint,
    name: Option<Lent<'_, *const c_char>>,
    val: Option<Lent<'_, u64>>,
) -> bool {
    let (Some(mut name), Some(mut val)) = (given(name), given(val)) else {
        return false;
    };
    // The core's counters, then the site sets' (`kside::siteset`).
    let found = STATS.get(idx).or_else(|| {
        let i = idx.checked_sub(crate::kside::stats::Stats::COUNT)?;
        crate::kside::siteset::stat(usize::try_from(i).ok()?)
    });
    let Some((n, v)) = found else {
        return false;
    };
    // A static NUL-terminated string.
    name.write(n.as_ptr().cast::<c_char>());
    val.write(v);
    true
}

/// `__ftrace_replace_code()`: update one record and its text, the generic
/// way. Returns 0 or -errno; the caller reports a failure with
/// `ftrace_bug()`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_replace_one(
    rec: *mut bindings::dyn_ftrace,
    enable: bool,
) -> c_int {
    with_rec(rec, einval(), |rec| arch::replace_one(rec, enable))
}

/// `ftrace_replace_code()`: check every change, then write them (x86: in
/// INT3 batches). `may_sleep`: `cond_resched()` between records is
/// allowed. The caller holds `ftrace_lock`; on x86 also `text_mutex`
/// (between the arch prepare and post-process hooks).
#[no_mangle]
pub(crate) extern "C" fn rftrace_replace_code(enable: bool, may_sleep: bool) {
    let may_sleep = if may_sleep {
        // SAFETY: C asked for a pass that may sleep
        // (`FTRACE_MODIFY_MAY_SLEEP_FL`: process context, nothing atomic
        // held).
        unsafe { arch::MaySleep::allowed() }
    } else {
        arch::MaySleep::NO
    };
    #[cfg(CONFIG_X86_64)]
    FtraceLocked::held(|lock| {
        TextLocked::held(|_text| arch::replace_code(lock, enable, may_sleep))
    });
    #[cfg(not(CONFIG_X86_64))]
    FtraceLocked::held(|lock| arch::replace_code(lock, enable, may_sleep));
}

/// `ftrace_make_call()`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_make_call(rec: *mut bindings::dyn_ftrace, addr: c_ulong) -> c_int {
    with_rec(rec, einval(), |rec| arch::make_call(rec, word(addr)))
}

/// `ftrace_modify_call()`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_modify_call(
    rec: *mut bindings::dyn_ftrace,
    old: c_ulong,
    new: c_ulong,
) -> c_int {
    with_rec(rec, einval(), |rec| {
        arch::modify_call(rec, word(old), word(new))
    })
}

/// `ftrace_make_nop()`, or with `init` the first conversion of a site
/// (`ftrace_init_nop()`; on x86 `ftrace_make_nop()` of the compiler's call
/// to `__fentry__`); `module` is null or the module of the record.
#[no_mangle]
pub(crate) extern "C" fn rftrace_make_nop(
    module: Module<'_>,
    rec: *mut bindings::dyn_ftrace,
    addr: c_ulong,
    init: bool,
) -> c_int {
    with_rec(rec, einval(), |rec| {
        arch::make_nop(module, rec, word(addr), init)
    })
}

/// `ftrace_update_code()`'s loop: every record of the new groups from
/// `pgs` (null, or a group of the table and those after it) gets `flags`
/// and, with `init`, its site's first conversion to a NOP (from a call to
/// `mcount`). Returns the records done, or -1 if ftrace is disabled (or
/// the caller does not hold `ftrace_lock`); a failed site is reported
/// with `ftrace_bug()`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_init_nops(
    module: Module<'_>,
    pgs: Option<pages::Group<'_>>,
    flags: c_ulong,
    init: bool,
    mcount: c_ulong,
) -> c_long {
    let run = |lock: &FtraceLocked| {
        let flags = RecFlags::from_raw(word(flags));
        match arch::init_groups(lock, module, pgs, flags, init, word(mcount)) {
            Some(n) => c_long::try_from(n).unwrap_or(c_long::MAX),
            None => -1,
        }
    };
    FtraceLocked::held(run).unwrap_or(-1)
}

/// Re-points the callback call at `ip` in an ftrace trampoline to the C
/// function `func` (never a jump, whatever bit 0 of `func`); 0 or -errno.
/// The caller holds `text_mutex`; an `ip` outside the trampolines, or one
/// that holds no call, is refused.
#[cfg(CONFIG_X86_64)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_call(ip: c_ulong, func: c_ulong) -> c_int {
    TextLocked::held(|text| x86::update_callback_call(text, word(ip), word(func)))
        .unwrap_or_else(einval)
}

/// Arch post-process: make the writes queued by the single-site hooks
/// live; the caller holds `text_mutex`.
#[cfg(CONFIG_X86_64)]
#[no_mangle]
pub(crate) extern "C" fn rftrace_finish() {
    TextLocked::held(x86::finish);
}

same_signature!(
    rftrace_check_record,
    rftrace_get_addr_new,
    rftrace_get_addr_curr,
    rftrace_find_unique_ops,
    rftrace_lookup_rec,
    rftrace_replace_one,
    rftrace_replace_code,
    rftrace_make_call,
    rftrace_modify_call,
    rftrace_update_function,
    rftrace_start_up,
);
#[cfg(CONFIG_X86_64)]
same_signature!(rftrace_update_call, rftrace_finish);

/// The prototypes with views: an ops, a hash, a module, a group, or a
/// pointer lent for the call.
mod views {
    use super::*;
    use crate::kside::abi::same_prototype;
    use pages::Group;
    use registry::Deferred;

    type Ops = Option<CallOps<'static>>;
    type Hash = Option<HashRef<'static>>;
    type Mod = Module<'static>;
    type Out<T> = Option<Lent<'static, T>>;
    type Page = *mut bindings::ftrace_page;
    type Slot = *mut *mut bindings::ftrace_hash;

    same_prototype!(
        bindings::rftrace_account,
        rftrace_account,
        fn(*mut bindings::dyn_ftrace, Ops, bool) -> bool
    );
    same_prototype!(
        bindings::rftrace_build_table,
        rftrace_build_table,
        fn(
            Mod,
            *mut c_ulong,
            *mut c_ulong,
            Out<Page>,
            Out<Page>,
            Out<c_ulong>,
            Out<c_ulong>,
        ) -> c_int
    );
    same_prototype!(
        bindings::rftrace_unlink_module,
        rftrace_unlink_module,
        fn(*mut Page, *mut Page, Mod, Out<Page>, Out<c_ulong>) -> Page
    );
    same_prototype!(
        bindings::rftrace_remove_range,
        rftrace_remove_range,
        fn(
            *mut Page,
            *mut Page,
            c_ulong,
            c_ulong,
            Option<crate::kside::abi::EachRec>,
            *mut c_void,
            Out<Page>,
            Out<c_ulong>,
        ) -> Page
    );
    same_prototype!(
        bindings::rftrace_manager_hashes,
        rftrace_manager_hashes,
        fn(Ops, Out<*mut bindings::ftrace_hash>, Out<*mut bindings::ftrace_hash>) -> c_int
    );
    same_prototype!(
        bindings::rftrace_register_ops,
        rftrace_register_ops,
        fn(Ops) -> c_int
    );
    same_prototype!(
        bindings::rftrace_unregister_ops,
        rftrace_unregister_ops,
        fn(Ops) -> c_int
    );
    same_prototype!(
        bindings::rftrace_account_walk,
        rftrace_account_walk,
        fn(Ops, bool) -> c_int
    );
    same_prototype!(
        bindings::rftrace_ipmodify_update,
        rftrace_ipmodify_update,
        fn(Ops, Hash, Hash, bool) -> c_int
    );
    same_prototype!(
        bindings::rftrace_startup,
        rftrace_startup,
        fn(Ops, c_int) -> c_int
    );
    same_prototype!(
        bindings::rftrace_shutdown,
        rftrace_shutdown,
        fn(Ops, c_int, Option<Deferred<'static>>) -> c_int
    );
    same_prototype!(
        bindings::rftrace_hash_move_and_update,
        rftrace_hash_move_and_update,
        fn(Ops, Slot, Hash, c_int) -> c_int
    );
    same_prototype!(
        bindings::rftrace_run_modify_code,
        rftrace_run_modify_code,
        fn(Ops, c_int, *mut bindings::ftrace_hash, *mut bindings::ftrace_hash) -> ()
    );
    same_prototype!(
        bindings::rftrace_startup_subops,
        rftrace_startup_subops,
        fn(Ops, Ops, c_int) -> c_int
    );
    same_prototype!(
        bindings::rftrace_shutdown_subops,
        rftrace_shutdown_subops,
        fn(Ops, Ops, c_int) -> c_int
    );
    same_prototype!(
        bindings::rftrace_subops_change,
        rftrace_subops_change,
        fn(Ops, Slot, Hash) -> c_int
    );
    same_prototype!(
        bindings::rftrace_update_manager,
        rftrace_update_manager,
        fn(Ops) -> c_int
    );
    same_prototype!(
        bindings::rftrace_stat,
        rftrace_stat,
        fn(c_uint, Out<*const c_char>, Out<u64>) -> bool
    );
    same_prototype!(
        bindings::rftrace_make_nop,
        rftrace_make_nop,
        fn(Mod, *mut bindings::dyn_ftrace, c_ulong, bool) -> c_int
    );
    same_prototype!(
        bindings::rftrace_init_nops,
        rftrace_init_nops,
        fn(Mod, Option<Group<'static>>, c_ulong, bool, c_ulong) -> c_long
    );
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    same_prototype!(
        bindings::rftrace_register_direct,
        rftrace_register_direct,
        fn(Ops, c_ulong) -> c_int
    );
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    same_prototype!(
        bindings::rftrace_unregister_direct,
        rftrace_unregister_direct,
        fn(Ops, c_ulong, bool) -> c_int
    );
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    same_prototype!(
        bindings::rftrace_modify_direct,
        rftrace_modify_direct,
        fn(Ops, c_ulong, bool) -> c_int
    );
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    same_prototype!(
        bindings::rftrace_update_direct_add,
        rftrace_update_direct_add,
        fn(Ops, Hash) -> c_int
    );
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    same_prototype!(
        bindings::rftrace_update_direct_del,
        rftrace_update_direct_del,
        fn(Ops, Hash) -> c_int
    );
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    same_prototype!(
        bindings::rftrace_update_direct_mod,
        rftrace_update_direct_mod,
        fn(Ops, Hash, bool) -> c_int
    );
}
