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
//! record table before it is used ([`records::find()`]): an entry that
//! takes only records and values is a safe function, whatever C passes. The prototypes are those of
//! `include/rftrace.h`, which bindgen turns into `kernel::bindings`; each
//! entry is checked against its generated declaration at compile time
//! ([`same_signature!`]), so the two cannot drift apart.
//!
//! A leaf module with `unsafe` code: every block turns a C contract into a
//! handle.

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
    sync::{
        atomic::Relaxed,
        rcu, //
    }, //
};

use crate::{
    bump,
    kside::env::{
        c_word,
        word,
        CallOps,
        Module,
        Ops,
        Rec, //
    },
    kside::filters,
    kside::hash::{
        self,
        HashSlot,
        KHash, //
    },
    kside::ipmodify,
    kside::lock::{
        FtraceLocked, //
    },
    kside::records::{
        self,
        from_c,
        to_c, //
    },
    kside::registry,
    kside::subops,
    rfcore::{
        flags::RecFlags,
        record::Update, //
    },
    shadow_diff,
    STATS, //
};

use crate::karch;
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
use crate::kside::{
    direct,
    hash::HashRef,
    lock::DirectLocked, //
};
#[cfg(CONFIG_X86_64)]
use crate::{
    karch::x86,
    kside::lock::TextLocked, //
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

/// An ops C keeps live for the call (`None`, with a warning, for null).
///
/// # Safety
///
/// `ops` is null or a live, initialised ops for the call.
unsafe fn call_ops<'c>(ops: *mut bindings::ftrace_ops) -> Option<CallOps<'c>> {
    if null_from_c(ops) {
        return None;
    }
    // SAFETY: the function contract.
    unsafe { CallOps::from_raw(ops) }
}

/// An ops and a hash C keeps live and unchanged for the call (`None`, with
/// a warning, for either null).
///
/// # Safety
///
/// `ops` is null or a live, initialised ops and `hash` null or a live
/// hash nobody changes, both for the call.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
unsafe fn call_ops_hash<'c>(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
) -> Option<(CallOps<'c>, HashRef<'c>)> {
    if null_from_c(hash) {
        return None;
    }
    // SAFETY: the function contract.
    unsafe { Some((call_ops(ops)?, HashRef::from_raw(hash)?)) }
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
        let found = records::find(rec, lock);
        if found.is_none() {
            kernel::pr_err!("a record from C is not one of the table\n");
            kernel::warn_on!(true);
        }
        found.map(f)
    })
    .flatten()
    .unwrap_or(null)
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
        crate::check_record(rec, enable, update).update as c_int
    })
}

/// Per-record accounting for `ops` (the body of the kernel's
/// `__ftrace_hash_rec_update()` loop); false on a reference count overflow
/// or underflow, or a null argument.
///
/// # Safety
///
/// `ops` is a registered ops.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_account(
    rec: *mut bindings::dyn_ftrace,
    ops: *mut bindings::ftrace_ops,
    inc: bool,
) -> bool {
    if null_from_c(rec) || null_from_c(ops) {
        return false;
    }
    FtraceLocked::held(|lock| {
        // SAFETY: a registered ops (function contract).
        let ops = unsafe { Ops::from_raw(ops, lock) };
        match (records::find(rec, lock), ops) {
            (Some(rec), Some(ops)) => crate::Accounting::new(ops, inc).rec(rec),
            _ => false,
        }
    })
    .unwrap_or(false)
}

/// `ftrace_get_addr_new()`: the address the site is to call.
#[no_mangle]
pub(crate) extern "C" fn rftrace_get_addr_new(rec: *mut bindings::dyn_ftrace) -> c_ulong {
    with_rec(rec, 0, |rec| c_word(crate::choose_target(rec, true)))
}

/// `ftrace_get_addr_curr()`: the address the site calls now.
#[no_mangle]
pub(crate) extern "C" fn rftrace_get_addr_curr(rec: *mut bindings::dyn_ftrace) -> c_ulong {
    with_rec(rec, 0, |rec| c_word(crate::choose_target(rec, false)))
}

/// `ftrace_find_unique_ops()`: the single ops whose filter covers the
/// site, or null.
#[no_mangle]
pub(crate) extern "C" fn rftrace_find_unique_ops(
    rec: *mut bindings::dyn_ftrace,
) -> *mut bindings::ftrace_ops {
    with_rec(rec, core::ptr::null_mut(), crate::find_unique_ops)
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
/// `[start, end)` is the call-site list of `module` (or of the core
/// kernel), writable and used by nobody else during the call, `module` is
/// null or the module being loaded, and the out pointers are valid for
/// writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_build_table(
    module: *mut bindings::module,
    start: *mut c_ulong,
    end: *mut c_ulong,
    first: *mut *mut bindings::ftrace_page,
    last: *mut *mut bindings::ftrace_page,
    pages: *mut c_ulong,
    recs: *mut c_ulong,
) -> c_int {
    if null_from_c(first) || null_from_c(last) || null_from_c(pages) || null_from_c(recs) {
        return einval();
    }
    // SAFETY: the function's contract is `scan_call_sites()`'s, and
    // `module` is null or the module being loaded, alive during the call.
    let report = unsafe { crate::scan_call_sites(Module::from_raw(module), start, end) };
    let kept = usize::try_from(report.kept).unwrap_or(usize::MAX);
    // SAFETY: the list was just checked by the scan; the rest of the
    // function's contract is `build()`'s.
    let built = unsafe { records::build(start, end, kept) };
    let (f, l, p, r, ret) = match built {
        Ok(b) => {
            let (pages, records) = (b.pages(), b.records());
            let (first, last) = b.into_raw();
            (first, last, pages, records, 0)
        }
        Err(e) => {
            kernel::pr_err!("record table: cannot build the records: {:?}\n", e);
            let errno = match e {
                records::BuildError::NoMemory => kernel::error::code::ENOMEM,
                records::BuildError::Inconsistent => EINVAL,
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
    // SAFETY: valid out pointers (function contract, checked non-null).
    unsafe {
        first.write(to_c(f));
        last.write(to_c(l));
        pages.write(p as c_ulong);
        recs.write(r as c_ulong);
    }
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
    let rec = records::lookup(s, e, &rcu);
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        let c = crate::kside::env::c_lookup_rec(s, e, &rcu);
        STATS.shadow_checks.add(1, Relaxed);
        let same = if s == e {
            c == rec
        } else {
            c.is_null() == rec.is_null()
        };
        if !same {
            shadow_diff(format_args!(
                "lookup of [{:#x}, {:#x}]: Rust {:p}, C {:p}",
                s, e, rec, c
            ));
        }
    }
    drop(rcu);
    rec
}

/// Counts what went, and stores the last group and the record count.
///
/// # Safety
///
/// `last` and `records` are valid for reads and writes.
unsafe fn hand_over(
    taken: records::Taken,
    last: *mut *mut bindings::ftrace_page,
    records: *mut c_ulong,
) -> *mut bindings::ftrace_page {
    bump(&STATS.records_released, taken.records as u64);
    // SAFETY: the function's contract.
    unsafe {
        last.write(to_c(taken.last));
        records.write(records.read().saturating_sub(taken.records as c_ulong));
    }
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
/// `head` and `tail` are `&ftrace_pages_start` and `&ftrace_pages`,
/// `module` is the module going away, `last` and `records` are valid, and
/// the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_unlink_module(
    head: *mut *mut bindings::ftrace_page,
    tail: *mut *mut bindings::ftrace_page,
    module: *mut bindings::module,
    last: *mut *mut bindings::ftrace_page,
    records: *mut c_ulong,
) -> *mut bindings::ftrace_page {
    if null_from_c(head) || null_from_c(tail) || null_from_c(last) || null_from_c(records) {
        return core::ptr::null_mut();
    }
    FtraceLocked::held(|lock| {
        // SAFETY: the function's contract is `unlink_module()`'s and
        // `hand_over()`'s, and `module` is alive during the call.
        unsafe {
            let module = Module::from_raw(module);
            let taken = records::unlink_module(head.cast(), tail.cast(), module, lock);
            crate::kside::sites::forget_module(module, lock);
            hand_over(taken, last, records)
        }
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
    each: Option<unsafe extern "C" fn(*mut c_void, *mut bindings::dyn_ftrace)>,
    data: *mut c_void,
    last: *mut *mut bindings::ftrace_page,
    records: *mut c_ulong,
) -> *mut bindings::ftrace_page {
    if null_from_c(head) || null_from_c(tail) || null_from_c(last) || null_from_c(records) {
        return core::ptr::null_mut();
    }
    let (s, e) = (word(start), word(end));
    FtraceLocked::held(|lock| {
        // SAFETY: the function's contract is `remove_range()`'s.
        let taken =
            unsafe { records::remove_range(head.cast(), tail.cast(), s, e, each, data, lock) };
        crate::kside::sites::forget_range(s, e, lock);
        if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) && s <= e {
            let left = crate::kside::env::c_lookup_rec(s, e, &rcu::read_lock());
            STATS.shadow_checks.add(1, Relaxed);
            if !left.is_null() {
                shadow_diff(format_args!(
                    "records left in [{:#x}, {:#x}] after removal",
                    s, e
                ));
            }
        }
        // SAFETY: valid out pointers (function contract).
        unsafe { hand_over(taken, last, records) }
    })
    .unwrap_or(core::ptr::null_mut())
}

/// `rebuild_hashes()` of a manager ops (function graph's): the filter and
/// notrace hashes that cover what its sub-ops trace, stored in `*filter`
/// and `*notrace_hash` (null: empty). A sub-ops whose filter is wholly covered
/// by its notrace hash traces nothing, and a manager whose sub-ops all
/// trace nothing gets a filter of nothing, never an empty filter (every
/// function) as in 7.2. Returns 0 or `-ENOMEM`.
///
/// # Safety
///
/// `ops` is a manager ops whose sub-ops list (and their hashes) the caller
/// keeps under `ftrace_lock`, which it holds; `filter` and `notrace_hash` are
/// valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_manager_hashes(
    ops: *mut bindings::ftrace_ops,
    filter: *mut *mut bindings::ftrace_hash,
    notrace_hash: *mut *mut bindings::ftrace_hash,
) -> c_int {
    if null_from_c(ops) || null_from_c(filter) || null_from_c(notrace_hash) {
        return einval();
    }
    let made: kernel::error::Result<_> = FtraceLocked::held(|lock| {
        // SAFETY: a live ops (function contract).
        let ops = unsafe { Ops::from_raw(ops, lock) }.ok_or(EINVAL)?;
        let made = hash::manager_hashes(ops, lock)?;
        let f = made.filter.into_raw()?;
        // Both are owned: handing them over allocates nothing.
        let n = made.notrace.into_raw()?;
        Ok((f, n))
    })
    .unwrap_or(Err(EINVAL));
    match made {
        Ok((f, n)) => {
            // SAFETY: writable pointers (function contract).
            unsafe {
                filter.write(f);
                notrace_hash.write(n);
            }
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Runs `f` on an ops handed over by C, under `ftrace_lock`; `null` is
/// the answer for a null ops (which also warns once).
///
/// # Safety
///
/// `ops` is null or a live, initialised ops, and the caller holds
/// `ftrace_lock`.
unsafe fn with_ops<R>(
    ops: *mut bindings::ftrace_ops,
    null: R,
    f: impl FnOnce(Ops<'_>, &FtraceLocked) -> R,
) -> R {
    if null_from_c(ops) {
        return null;
    }
    FtraceLocked::held(|lock| {
        // SAFETY: `ops` is live (function contract).
        unsafe { Ops::from_raw(ops, lock) }.map(|ops| f(ops, lock))
    })
    .flatten()
    .unwrap_or(null)
}

/// `__register_ftrace_function()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live, initialised ops and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_register_ops(ops: *mut bindings::ftrace_ops) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, einval(), |ops, lock| {
            registry::register(ops, lock).map_or_else(|e| e.to_errno(), |()| 0)
        })
    }
}

/// `__unregister_ftrace_function()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live, initialised ops and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_unregister_ops(ops: *mut bindings::ftrace_ops) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, einval(), |ops, lock| {
            registry::unregister(ops, lock).map_or_else(|e| e.to_errno(), |()| 0)
        })
    }
}

/// `update_ftrace_function()`; the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_function() {
    FtraceLocked::held(registry::update_function);
}

/// `__ftrace_hash_rec_update()`: 1 if a site needs an update pass, 0 if
/// none, -1 after a reference count overflow or underflow.
///
/// # Safety
///
/// `ops` is a live, initialised ops and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_account_walk(
    ops: *mut bindings::ftrace_ops,
    inc: bool,
) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, -1, |ops, lock| {
            match registry::account_walk(ops, inc, lock) {
                Ok(update) => c_int::from(update),
                Err(()) => -1,
            }
        })
    }
}

/// The start-up counter (`ftrace_start_up` of 7.2), which the Rust
/// registry keeps, for the C code that reads it under `ftrace_lock`
/// (0 if the caller does not hold it, after a warning).
#[no_mangle]
pub(crate) extern "C" fn rftrace_start_up() -> c_int {
    FtraceLocked::held(registry::start_up_count).unwrap_or(0)
}

/// `__ftrace_hash_update_ipmodify()`: 0 or 7.2's errno.
///
/// Its callers in 7.2 hold `ftrace_lock`, except the two direct-call
/// paths that change a direct ops' target (`retarget`), which hold
/// `direct_mutex` only: for those the walk takes `ftrace_lock` itself and
/// the direct ops is asked about shared functions after dropping it, as
/// 7.2 asks it without the lock.
///
/// # Safety
///
/// `ops` is a live, initialised ops, `old` and `new` are null or hashes
/// nobody changes during the call; the caller holds `ftrace_lock`, or,
/// with `retarget`, `direct_mutex` and not `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_ipmodify_update(
    ops: *mut bindings::ftrace_ops,
    old: *mut bindings::ftrace_hash,
    new: *mut bindings::ftrace_hash,
    retarget: bool,
) -> c_int {
    if !retarget {
        let run = |ops: Ops<'_>, lock: &FtraceLocked| {
            // SAFETY: live hashes or null, unchanged during the call (the
            // function contract), under `lock`.
            let (old, new) = unsafe { (KHash::from_c(old, lock), KHash::from_c(new, lock)) };
            let asks = ipmodify::Asks::Now;
            ipmodify::update(ops, old.as_ref(), new.as_ref(), false, lock, asks)
                .map_or_else(|e| e.to_errno(), |()| 0)
        };
        // SAFETY: the same contract, with ftrace_lock held.
        return unsafe { with_ops(ops, einval(), run) };
    }
    // A target change exists only with direct calls.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    {
        // SAFETY: the same contract: all live for the call.
        let (ops, old, new) = unsafe {
            (
                CallOps::from_raw(ops),
                HashRef::from_raw(old),
                HashRef::from_raw(new),
            )
        };
        let Some(ops) = ops else {
            return einval();
        };
        DirectLocked::held(|direct| direct::retarget_claims(ops, old, new, direct))
            .unwrap_or(Err(EINVAL))
            .map_or_else(|e| e.to_errno(), |()| 0)
    }
    #[cfg(not(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS))]
    einval()
}

/// `ftrace_startup()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live, initialised ops and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_startup(
    ops: *mut bindings::ftrace_ops,
    command: c_int,
) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, einval(), |ops, lock| {
            registry::startup(ops, command, lock).map_or_else(|e| e.to_errno(), |()| 0)
        })
    }
}

/// Runs `change` for a hash change C asked for: the hash of `ops` at
/// `orig_hash` (its filter or its notrace slot; if `want` says which, it
/// must be that one) becomes the functions of `hash`. A slot that is not
/// one of the ops' (or not the one wanted) would put the hash where C
/// does not expect it: `-EINVAL`, with a warning.
///
/// # Safety
///
/// `ops` is null or a live, initialised ops; `hash` is null or a live hash
/// the caller owns and frees after the call; the caller holds
/// `ftrace_lock`.
unsafe fn with_hash_change(
    ops: *mut bindings::ftrace_ops,
    orig_hash: *mut *mut bindings::ftrace_hash,
    hash: *mut bindings::ftrace_hash,
    want: Option<bool>,
    change: impl for<'a> FnOnce(Ops<'a>, bool, KHash<'a>, &'a FtraceLocked) -> kernel::error::Result,
) -> c_int {
    if null_from_c(hash) {
        return einval();
    }
    let run = |ops: Ops<'_>, lock: &FtraceLocked| {
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
        // SAFETY: the caller's hash, live and changed by no one else for
        // the call (function contract).
        let Some(new) = (unsafe { KHash::from_c(hash, lock) }) else {
            return einval();
        };
        change(ops, notrace, new, lock).map_or_else(|e| e.to_errno(), |()| 0)
    };
    // SAFETY: the same contract.
    unsafe { with_ops(ops, einval(), run) }
}

/// `__ftrace_hash_move_and_update_ops()`: the filter (`enable` non-zero)
/// or notrace hash of `ops`, at `orig_hash`, becomes the functions of
/// `hash`; 0 or 7.2's errno, with nothing changed.
///
/// # Safety
///
/// `ops` is a live, initialised ops and `orig_hash` its filter or notrace
/// hash slot; `hash` is a live hash the caller owns and frees after the
/// call; the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_hash_move_and_update(
    ops: *mut bindings::ftrace_ops,
    orig_hash: *mut *mut bindings::ftrace_hash,
    hash: *mut bindings::ftrace_hash,
    enable: c_int,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { with_hash_change(ops, orig_hash, hash, Some(enable == 0), filters::change) }
}

/// `ftrace_run_modify_code()`: the update pass with `command`, `ops`
/// marked as modifying from the hashes it had (`old_filter`,
/// `old_notrace`).
///
/// # Safety
///
/// `ops` is a live, initialised ops, the old hashes are null or live until
/// the call returns, and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_run_modify_code(
    ops: *mut bindings::ftrace_ops,
    command: c_int,
    old_filter: *mut bindings::ftrace_hash,
    old_notrace: *mut bindings::ftrace_hash,
) {
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, (), |ops, lock| {
            let old = filters::OldHashes::from_c(old_filter, old_notrace);
            filters::run_modify_code(ops, command, old, lock);
        })
    }
}

/// Runs `f` on a manager ops and one of its sub-ops handed over by C,
/// under `ftrace_lock`; `-EINVAL` for a null one (which also warns once).
///
/// # Safety
///
/// `ops` and `subops` are null or live, and the caller holds
/// `ftrace_lock`.
unsafe fn with_subops(
    ops: *mut bindings::ftrace_ops,
    subops: *mut bindings::ftrace_ops,
    f: impl FnOnce(Ops<'_>, Ops<'_>, &FtraceLocked) -> kernel::error::Result,
) -> c_int {
    if null_from_c(subops) {
        return einval();
    }
    let run = |ops: Ops<'_>, lock: &FtraceLocked| {
        // SAFETY: a live sub-ops (function contract), under `lock`.
        match unsafe { Ops::from_raw(subops, lock) } {
            Some(subops) => f(ops, subops, lock).map_or_else(|e| e.to_errno(), |()| 0),
            None => einval(),
        }
    };
    // SAFETY: the same contract.
    unsafe { with_ops(ops, einval(), run) }
}

/// `ftrace_startup_subops()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` (a manager) and `subops` are live ops and the caller holds
/// `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_startup_subops(
    ops: *mut bindings::ftrace_ops,
    subops: *mut bindings::ftrace_ops,
    command: c_int,
) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_subops(ops, subops, |m, s, lock| {
            subops::startup(m, s, command, lock)
        })
    }
}

/// `ftrace_shutdown_subops()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` (a manager) and `subops` are live ops and the caller holds
/// `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_shutdown_subops(
    ops: *mut bindings::ftrace_ops,
    subops: *mut bindings::ftrace_ops,
    command: c_int,
) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_subops(ops, subops, |m, s, lock| {
            subops::shutdown(m, s, command, lock)
        })
    }
}

/// `ftrace_hash_move_and_update_subops()`: the hash of `subops` at
/// `orig_hash` (its filter or its notrace slot) becomes the functions of
/// `hash`, and its manager follows; 0 or 7.2's errno, with nothing
/// changed.
///
/// # Safety
///
/// `subops` is a live sub-ops and `orig_hash` one of its hash slots;
/// `hash` is a live hash the caller owns and frees after the call; the
/// caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_subops_change(
    subops: *mut bindings::ftrace_ops,
    orig_hash: *mut *mut bindings::ftrace_hash,
    hash: *mut bindings::ftrace_hash,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { with_hash_change(subops, orig_hash, hash, None, subops::change) }
}

/// `ftrace_update_manager()`: the manager `ops` follows its sub-ops'
/// hashes again, after one changed in place. 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live manager ops and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_update_manager(ops: *mut bindings::ftrace_ops) -> c_int {
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, einval(), |ops, lock| {
            subops::refresh(ops, lock).map_or_else(|e| e.to_errno(), |()| 0)
        })
    }
}

/// `register_ftrace_direct()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live ops and the caller holds neither `direct_mutex` nor
/// `ftrace_lock`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_register_direct(
    ops: *mut bindings::ftrace_ops,
    addr: c_ulong,
) -> c_int {
    // SAFETY: the same contract.
    match unsafe { call_ops(ops) } {
        Some(ops) => direct::register_locked(ops, word(addr)),
        None => einval(),
    }
}

/// `unregister_ftrace_direct()`: 0 or 7.2's errno.
///
/// # Safety
///
/// As for [`rftrace_register_direct`].
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_unregister_direct(
    ops: *mut bindings::ftrace_ops,
    addr: c_ulong,
    free_filters: bool,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { call_ops(ops) }
        .ok_or(EINVAL)
        .and_then(|ops| direct::unregister(ops, word(addr), free_filters))
        .map_or_else(|e| e.to_errno(), |()| 0)
}

/// `modify_ftrace_direct()` (`lock`) and `modify_ftrace_direct_nolock()`:
/// 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live ops; the caller does not hold `ftrace_lock`, and holds
/// `direct_mutex` if and only if `lock` is false.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_modify_direct(
    ops: *mut bindings::ftrace_ops,
    addr: c_ulong,
    lock: bool,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { call_ops(ops) }
        .ok_or(EINVAL)
        .and_then(|ops| direct::modify(ops, word(addr), lock))
        .map_or_else(|e| e.to_errno(), |()| 0)
}

/// `update_ftrace_direct_add()`: 0 or 7.2's errno.
///
/// # Safety
///
/// `ops` is a live ops and `hash` a live hash nobody changes during the
/// call; the caller holds neither `direct_mutex` nor `ftrace_lock`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_update_direct_add(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { call_ops_hash(ops, hash) }
        .ok_or(EINVAL)
        .and_then(|(ops, hash)| direct::batch_add(ops, hash))
        .map_or_else(|e| e.to_errno(), |()| 0)
}

/// `update_ftrace_direct_del()`: 0 or 7.2's errno.
///
/// # Safety
///
/// As for [`rftrace_update_direct_add`].
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_update_direct_del(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { call_ops_hash(ops, hash) }
        .ok_or(EINVAL)
        .and_then(|(ops, hash)| direct::batch_del(ops, hash))
        .map_or_else(|e| e.to_errno(), |()| 0)
}

/// `update_ftrace_direct_mod()` (`lock`: `do_direct_lock`): 0 or 7.2's
/// errno.
///
/// # Safety
///
/// `ops` is a live ops and `hash` a live hash nobody changes during the
/// call; the caller does not hold `ftrace_lock`, and holds `direct_mutex`
/// if and only if `lock` is false.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_update_direct_mod(
    ops: *mut bindings::ftrace_ops,
    hash: *mut bindings::ftrace_hash,
    lock: bool,
) -> c_int {
    // SAFETY: the same contract.
    unsafe { call_ops_hash(ops, hash) }
        .ok_or(EINVAL)
        .and_then(|(ops, hash)| direct::batch_mod(ops, hash, lock))
        .map_or_else(|e| e.to_errno(), |()| 0)
}

/// `__ftrace_shutdown()`: 0 or 7.2's errno. With a non-null `rel`, a
/// dynamic ops' grace-period waits are left to the caller.
///
/// # Safety
///
/// `ops` is a live, initialised ops and the caller holds `ftrace_lock`;
/// `rel` is null or valid for writes until this returns.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_shutdown(
    ops: *mut bindings::ftrace_ops,
    command: c_int,
    rel: *mut bindings::ftrace_release,
) -> c_int {
    // SAFETY: the same contract.
    let deferred = unsafe { registry::Deferred::new(rel) };
    // SAFETY: the same contract.
    unsafe {
        with_ops(ops, einval(), |ops, lock| {
            registry::shutdown(ops, command, deferred, lock).map_or_else(|e| e.to_errno(), |()| 0)
        })
    }
}

/// Counter `idx`: stores its name in `*name` and returns true, or false.
///
/// # Safety
///
/// `name` and `val` are valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_stat(
    idx: c_uint,
    name: *mut *const c_char,
    val: *mut u64,
) -> bool {
    if null_from_c(name) || null_from_c(val) {
        return false;
    }
    let Some((n, v)) = STATS.get(idx) else {
        return false;
    };
    // SAFETY: writable pointers (function contract); the name is a static
    // NUL-terminated string.
    unsafe {
        name.write(n.as_ptr().cast::<c_char>());
        val.write(v);
    }
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
    with_rec(rec, einval(), |rec| karch::replace_one(rec, enable))
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
        unsafe { karch::MaySleep::allowed() }
    } else {
        karch::MaySleep::NO
    };
    #[cfg(CONFIG_X86_64)]
    FtraceLocked::held(|lock| {
        TextLocked::held(|_text| karch::replace_code(lock, enable, may_sleep))
    });
    #[cfg(not(CONFIG_X86_64))]
    FtraceLocked::held(|lock| karch::replace_code(lock, enable, may_sleep));
}

/// `ftrace_make_call()`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_make_call(rec: *mut bindings::dyn_ftrace, addr: c_ulong) -> c_int {
    with_rec(rec, einval(), |rec| karch::make_call(rec, word(addr)))
}

/// `ftrace_modify_call()`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_modify_call(
    rec: *mut bindings::dyn_ftrace,
    old: c_ulong,
    new: c_ulong,
) -> c_int {
    with_rec(rec, einval(), |rec| {
        karch::modify_call(rec, word(old), word(new))
    })
}

/// `ftrace_make_nop()`, or with `init` the first conversion of a site
/// (`ftrace_init_nop()`; on x86 `ftrace_make_nop()` of the compiler's call
/// to `__fentry__`).
///
/// # Safety
///
/// `module` is null or the module of the record, alive during the call.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_make_nop(
    module: *mut bindings::module,
    rec: *mut bindings::dyn_ftrace,
    addr: c_ulong,
    init: bool,
) -> c_int {
    with_rec(rec, einval(), |rec| {
        // SAFETY: `module` is null or alive during the call (function
        // contract).
        let module = unsafe { Module::from_raw(module) };
        karch::make_nop(module, rec, word(addr), init)
    })
}

/// `ftrace_update_code()`'s loop: every record of the new groups from
/// `pgs` gets `flags` and, with `init`, its site's first conversion to a
/// NOP (from a call to `mcount`). Returns the records done, or -1 if
/// ftrace is disabled (or the caller does not hold `ftrace_lock`); a
/// failed site is reported with `ftrace_bug()`.
///
/// # Safety
///
/// `pgs` is null or the first of a chain of groups of the table, `module`
/// is null or the module they belong to, alive during the call, and the
/// caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_init_nops(
    module: *mut bindings::module,
    pgs: *mut bindings::ftrace_page,
    flags: c_ulong,
    init: bool,
    mcount: c_ulong,
) -> c_long {
    let run = |lock: &FtraceLocked| {
        // SAFETY: `pgs` is null or a group of the table, which ftrace_lock
        // keeps with every group after it (contract).
        let first = unsafe { records::Group::from_raw(from_c(pgs)) };
        let flags = RecFlags::from_raw(word(flags));
        // SAFETY: `module` is null or alive during the call (contract).
        let module = unsafe { Module::from_raw(module) };
        match karch::init_groups(lock, module, first, flags, init, word(mcount)) {
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
    rftrace_account,
    rftrace_get_addr_new,
    rftrace_get_addr_curr,
    rftrace_find_unique_ops,
    rftrace_build_table,
    rftrace_lookup_rec,
    rftrace_unlink_module,
    rftrace_remove_range,
    rftrace_stat,
    rftrace_replace_one,
    rftrace_replace_code,
    rftrace_make_call,
    rftrace_modify_call,
    rftrace_make_nop,
    rftrace_init_nops,
    rftrace_manager_hashes,
    rftrace_register_ops,
    rftrace_unregister_ops,
    rftrace_update_function,
    rftrace_account_walk,
    rftrace_ipmodify_update,
    rftrace_start_up,
    rftrace_startup,
    rftrace_shutdown,
    rftrace_hash_move_and_update,
    rftrace_run_modify_code,
    rftrace_startup_subops,
    rftrace_shutdown_subops,
    rftrace_subops_change,
    rftrace_update_manager,
);
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
same_signature!(
    rftrace_register_direct,
    rftrace_unregister_direct,
    rftrace_modify_direct,
    rftrace_update_direct_add,
    rftrace_update_direct_del,
    rftrace_update_direct_mod,
);
#[cfg(CONFIG_X86_64)]
same_signature!(rftrace_update_call, rftrace_finish);
