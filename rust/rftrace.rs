// SPDX-License-Identifier: GPL-2.0

//! Dynamic ftrace core in Rust.
//!
//! Built into the kernel as `kernel/trace/rftrace/` when
//! `CONFIG_FTRACE_RUST_CORE=y`. The kernel's `kernel/trace/ftrace.c` keeps the
//! ops registry, hashes and tracefs; it asks this crate what each call-site
//! record needs (`ftrace_update_record()`, `ftrace_test_record()`) and has it
//! drive the text changes (`__ftrace_replace_code()` and the x86 hooks, via
//! the C shim in `c/rftrace_shim.c`).
//!
//! The decisions and encoders are in [`rfcore`], which is pure and shared
//! with the host test crate; [`kenv`] is the only place that touches kernel
//! memory, and the `extern "C"` entry points below the only place that takes
//! raw pointers from C.

use kernel::{
    bindings,
    ffi::{
        c_char,
        c_int,
        c_uint,
        c_ulong,
        c_void, //
    },
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

pub mod rfcore;

#[cfg(CONFIG_ARM64)]
mod karm64;
mod kenv;
mod ktable;
#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod kunit;
#[cfg(CONFIG_X86_64)]
mod kx86;

use kenv::{
    KernelOthers,
    Ops,
    Rec, //
};
use rfcore::{
    account::{
        self,
        AccountError,
        CallOps,
        OpsProps, //
    },
    flags::{
        RecFlags,
        CALL_OPS, //
    },
    record::{
        decide,
        Decision,
        Update, //
    }, //
};

/// Prefix of this crate's kernel log lines.
const __LOG_PREFIX: &[u8] = b"rftrace\0";

/// The core's counters, shown in `<debugfs>/rftrace/stats`.
///
/// Counters only: they are bumped with relaxed atomics and read without a
/// lock, so a reader may see one counter updated before another.
struct Stats {
    init_nops: Atomic<u64>,
    passes: Atomic<u64>,
    walked: Atomic<u64>,
    make_call: Atomic<u64>,
    modify_call: Atomic<u64>,
    make_nop: Atomic<u64>,
    batches: Atomic<u64>,
    failures: Atomic<u64>,
    one_shot: Atomic<u64>,
    checks: Atomic<u64>,
    shadow_checks: Atomic<u64>,
    shadow_diffs: Atomic<u64>,
    accounted: Atomic<u64>,
    survivor_rule: Atomic<u64>,
    records_made: Atomic<u64>,
    records_released: Atomic<u64>,
    selected: Atomic<u64>,
    sites_refused: Atomic<u64>,
}

static STATS: Stats = Stats {
    init_nops: Atomic::new(0),
    passes: Atomic::new(0),
    walked: Atomic::new(0),
    make_call: Atomic::new(0),
    modify_call: Atomic::new(0),
    make_nop: Atomic::new(0),
    batches: Atomic::new(0),
    failures: Atomic::new(0),
    one_shot: Atomic::new(0),
    checks: Atomic::new(0),
    shadow_checks: Atomic::new(0),
    shadow_diffs: Atomic::new(0),
    accounted: Atomic::new(0),
    survivor_rule: Atomic::new(0),
    records_made: Atomic::new(0),
    records_released: Atomic::new(0),
    selected: Atomic::new(0),
    sites_refused: Atomic::new(0),
};

fn bump(counter: &Atomic<u64>, by: u64) {
    if by != 0 {
        counter.add(by, Relaxed);
    }
}

impl Stats {
    #[cfg(CONFIG_X86_64)]
    fn add(&self, c: &rfcore::driver::Counts) {
        bump(&self.walked, c.walked);
        bump(&self.make_call, c.make_call);
        bump(&self.modify_call, c.modify_call);
        bump(&self.make_nop, c.make_nop);
        bump(&self.batches, c.batches);
        bump(&self.failures, c.failures);
    }

    /// Counter `idx` as a NUL-terminated name and a value.
    fn get(&self, idx: u32) -> Option<(&'static [u8], u64)> {
        let r = |a: &Atomic<u64>| a.load(Relaxed);
        let patched = r(&self.make_call)
            .saturating_add(r(&self.modify_call))
            .saturating_add(r(&self.make_nop));
        Some(match idx {
            0 => (b"records_initialized\0", r(&self.init_nops)),
            1 => (b"update_passes\0", r(&self.passes)),
            2 => (b"records_walked\0", r(&self.walked)),
            3 => (b"sites_patched\0", patched),
            4 => (b"make_call\0", r(&self.make_call)),
            5 => (b"modify_call\0", r(&self.modify_call)),
            6 => (b"make_nop\0", r(&self.make_nop)),
            7 => (b"batches\0", r(&self.batches)),
            8 => (b"failures\0", r(&self.failures)),
            9 => (b"single_updates\0", r(&self.one_shot)),
            10 => (b"record_checks\0", r(&self.checks)),
            11 => (b"shadow_checks\0", r(&self.shadow_checks)),
            12 => (b"shadow_differences\0", r(&self.shadow_diffs)),
            13 => (b"records_accounted\0", r(&self.accounted)),
            14 => (b"targets_selected\0", r(&self.selected)),
            15 => (b"call_sites_refused\0", r(&self.sites_refused)),
            16 => (b"call_ops_survivor_rule\0", r(&self.survivor_rule)),
            17 => (b"records_made\0", r(&self.records_made)),
            18 => (b"records_released\0", r(&self.records_released)),
            _ => return None,
        })
    }
}

/// Shadow mode: compare a Rust decision with the kernel's C logic.
///
/// The C function runs on a copy of the record, so it cannot disturb it.
/// Differences are counted and the first few are logged in full.
fn shadow_check(rec: Rec, enable: bool, rust: &Decision) {
    if !cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        return;
    }
    let (c_verdict, c_flags) = rec.c_decision(enable);
    STATS.shadow_checks.add(1, Relaxed);
    if c_verdict == rust.update as c_int && c_flags == rust.flags {
        return;
    }
    shadow_diff(format_args!(
        "decision differs for {:#x} flags {:#x} enable {}: Rust {:?} -> {:#x}, C {} -> {:#x}",
        rec.ip(),
        rec.flags().raw(),
        enable,
        rust.update,
        rust.flags.raw(),
        c_verdict,
        c_flags.raw()
    ));
}

/// Counts a shadow difference and logs the first few.
fn shadow_diff(args: core::fmt::Arguments<'_>) {
    let seen = STATS.shadow_diffs.fetch_add(1, Relaxed);
    if seen < 8 {
        kernel::pr_warn!("shadow: {}\n", args);
    }
}

/// Per-record accounting for one ops (the body of the kernel's
/// `__ftrace_hash_rec_update()` loop): one more user of `rec` if `inc`,
/// one less otherwise. Returns false on a reference count overflow or
/// underflow, leaving the record as it was; the caller warns and stops
/// ftrace.
///
/// On an arch with per-site ops literals the `CALL_OPS` request after a
/// removal follows the ops that is left, not the ops removed as in 7.2
/// (see `account::remove`); the shadow mode counts those deliberate
/// differences apart (`call_ops_survivor_rule`).
///
/// # Safety
///
/// `rec` is a record of the table, `ops` a registered ops, and the caller
/// holds `ftrace_lock`.
#[no_mangle]
pub unsafe extern "C" fn rftrace_account(
    rec: *mut bindings::dyn_ftrace,
    ops: *mut bindings::ftrace_ops,
    inc: bool,
) -> bool {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s and
    // `Ops::from_raw()`'s.
    let (Some(rec), Some(ops)) = (unsafe { Rec::from_raw(rec) }, unsafe { Ops::from_raw(ops) })
    else {
        return false;
    };
    let mode = if cfg!(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS) {
        CallOps::Supported
    } else {
        CallOps::Unsupported
    };
    let before = rec.flags();
    let props = ops.props();
    let mut others = KernelOthers::new(rec, ops);
    let result = if inc {
        account::add(before, props, mode)
    } else {
        account::remove(before, props, mode, &mut others)
    };
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        let (c_ok, c_flags) = kenv::c_account(rec, ops, inc);
        STATS.shadow_checks.add(1, Relaxed);
        let same = match result {
            Ok(flags) => c_ok && c_flags == flags,
            Err(_) => !c_ok,
        };
        let survivor_rule = survivor_rule_explains(result, c_ok, c_flags, &others, props);
        if let Some(survivor) = survivor_rule {
            let seen = STATS.survivor_rule.fetch_add(1, Relaxed);
            if seen < 4 {
                kernel::pr_info!(
                    "{:#x}: the ops left on the site decides CALL_OPS ({}), not the ops removed as in 7.2\n",
                    rec.ip(),
                    if survivor { "set" } else { "clear" }
                );
            }
        } else if !same {
            shadow_diff(format_args!(
                "accounting differs for {:#x} flags {:#x} inc {} ops {:?}: Rust {:?}, C {} {:#x}",
                rec.ip(),
                before.raw(),
                inc,
                props,
                result,
                c_ok,
                c_flags.raw()
            ));
        }
    }
    match result {
        Ok(flags) => {
            rec.set_flags(flags);
            STATS.accounted.add(1, Relaxed);
            true
        }
        Err(e) => {
            let what = match e {
                AccountError::Overflow => "overflow",
                AccountError::Underflow => "underflow",
            };
            kernel::pr_err!(
                "reference count {} on the record at {:#x} (flags {:#x})\n",
                what,
                rec.ip(),
                before.raw()
            );
            false
        }
    }
}

/// Whether a difference between the Rust and the C accounting of a record
/// is the deliberate one of the survivor rule (`account::remove`): only
/// the `CALL_OPS` request differs, the ops left on the site was asked
/// about, and it and the ops removed disagree on whether the literal may
/// be used. Returns the survivor's answer in that case.
pub(crate) fn survivor_rule_explains(
    rust: Result<RecFlags, AccountError>,
    c_ok: bool,
    c_flags: RecFlags,
    others: &KernelOthers,
    removed: OpsProps,
) -> Option<bool> {
    match (rust, others.survivor_ok) {
        (Ok(flags), Some(survivor))
            if c_ok
                && (c_flags.raw() ^ flags.raw()) == CALL_OPS
                && survivor != removed.call_ops_ok =>
        {
            Some(survivor)
        }
        _ => None,
    }
}

/// The address `rec` is to call (`new`) or calls now, with the shadow
/// check against the kernel's C choice. Used by the update drivers and the
/// C entry points alike.
///
/// # Safety
///
/// The caller holds `ftrace_lock`.
pub(crate) unsafe fn choose_target(rec: Rec, new: bool) -> u64 {
    // SAFETY: the caller holds ftrace_lock.
    let addr = unsafe { kenv::select_addr(rec, new) };
    STATS.selected.add(1, Relaxed);
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        let c = kenv::c_select_addr(rec, new);
        STATS.shadow_checks.add(1, Relaxed);
        if c != addr {
            shadow_diff(format_args!(
                "target differs for {:#x} flags {:#x} new {}: Rust {:#x}, C {:#x}",
                rec.ip(),
                rec.flags().raw(),
                new,
                addr,
                c
            ));
        }
    }
    addr
}

/// [`choose_target()`] for a raw record from C.
///
/// # Safety
///
/// `rec` is null or a record of the table, and the caller holds
/// `ftrace_lock`.
unsafe fn target(rec: *mut bindings::dyn_ftrace, new: bool) -> c_ulong {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s.
    let Some(rec) = (unsafe { Rec::from_raw(rec) }) else {
        return 0;
    };
    // SAFETY: the caller holds ftrace_lock.
    kenv::c_word(unsafe { choose_target(rec, new) })
}

/// `ftrace_get_addr_new()`: the address the site is to call.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock`.
#[no_mangle]
pub unsafe extern "C" fn rftrace_get_addr_new(rec: *mut bindings::dyn_ftrace) -> c_ulong {
    // SAFETY: the caller's contract is `target()`'s.
    unsafe { target(rec, true) }
}

/// `ftrace_get_addr_curr()`: the address the site calls now.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock`.
#[no_mangle]
pub unsafe extern "C" fn rftrace_get_addr_curr(rec: *mut bindings::dyn_ftrace) -> c_ulong {
    // SAFETY: the caller's contract is `target()`'s.
    unsafe { target(rec, false) }
}

/// `ftrace_find_unique_ops()`: the single ops whose filter covers the
/// site, or null.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock`.
#[no_mangle]
pub unsafe extern "C" fn rftrace_find_unique_ops(
    rec: *mut bindings::dyn_ftrace,
) -> *mut bindings::ftrace_ops {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s.
    let Some(rec) = (unsafe { Rec::from_raw(rec) }) else {
        return core::ptr::null_mut();
    };
    let (rust, c) = kenv::unique_ops(rec);
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        STATS.shadow_checks.add(1, Relaxed);
        if rust != c {
            shadow_diff(format_args!(
                "unique ops differs for {:#x}: Rust {:p}, C {:p}",
                rec.ip(),
                rust,
                c
            ));
        }
    }
    rust
}

/// Checks the call-site list of the core kernel (`module` null) or of a
/// module before records are made of it: sorts it if needed and zeroes
/// the entries that must not become records (duplicates, misaligned
/// sites, addresses outside the text), reporting them.
///
/// # Safety
///
/// `[start, end)` is the call-site list of `module` (or of the core
/// kernel), writable and used by nobody else during the call, and `module`
/// is null or the module being loaded.
unsafe fn scan_call_sites(
    module: *mut bindings::module,
    start: *mut c_ulong,
    end: *mut c_ulong,
) -> rfcore::table::Report {
    // SAFETY: the caller's contract is `scan_locs()`'s.
    let report = unsafe { kenv::scan_locs(module, start, end) };
    let refused = report.refused();
    bump(&STATS.sites_refused, refused);
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        STATS.shadow_checks.add(1, Relaxed);
        // C would make working records of these. (Of a misaligned site it
        // makes a record at address 0, whose initialisation fails and
        // stops ftrace: refusing it is the intended difference.)
        let differ = report.duplicate.saturating_add(report.out_of_text);
        if differ != 0 {
            shadow_diff(format_args!(
                "call-site list: Rust refused {} sites the C code would keep",
                differ
            ));
        }
    }
    report
}

/// `ftrace_process_locs()`: checks the call-site list `[start, end)` of
/// `module` (null: the core kernel), then builds the records of the sites
/// it keeps in new page groups, not linked into the table yet: `*first`
/// to `*last`, `*pages` pages, `*recs` records (0 and null groups when
/// the list has no site). Returns 0 or -ENOMEM (-EINVAL if the list
/// changed under us).
///
/// # Safety
///
/// `[start, end)` is the call-site list of `module` (or of the core
/// kernel), writable and used by nobody else during the call, `module` is
/// null or the module being loaded, and the out pointers are valid for
/// writes.
#[no_mangle]
pub unsafe extern "C" fn rftrace_build_table(
    module: *mut bindings::module,
    start: *mut c_ulong,
    end: *mut c_ulong,
    first: *mut *mut ktable::FtracePage,
    last: *mut *mut ktable::FtracePage,
    pages: *mut c_ulong,
    recs: *mut c_ulong,
) -> c_int {
    // SAFETY: the caller's contract is `scan_call_sites()`'s.
    let report = unsafe { scan_call_sites(module, start, end) };
    let kept = usize::try_from(report.kept).unwrap_or(usize::MAX);
    // SAFETY: the list was just checked by the scan; the rest of the
    // caller's contract is `build()`'s.
    let built = unsafe { ktable::build(module, start, end, kept) };
    let (f, l, p, r, ret) = match built {
        Ok(b) => (b.first, b.last, b.pages, b.records, 0),
        Err(e) => {
            kernel::pr_err!("record table: cannot build the records: {:?}\n", e);
            let errno = match e {
                ktable::BuildError::NoMemory => bindings::ENOMEM,
                ktable::BuildError::Inconsistent => bindings::EINVAL,
            };
            let ret = c_int::try_from(errno).map_or(-1, |e: c_int| -e);
            (core::ptr::null_mut(), core::ptr::null_mut(), 0, 0, ret)
        }
    };
    bump(&STATS.records_made, r as u64);
    // SAFETY: valid out pointers (function contract).
    unsafe {
        first.write(f);
        last.write(l);
        pages.write(p as c_ulong);
        recs.write(r as c_ulong);
    }
    ret
}

/// `lookup_rec()`: the first record touching `[start, end]` (`end`
/// included), or null. In the shadow mode the C lookup runs too: for one
/// address both must find the same record; for a range, both a record or
/// both none (C's bisection may stop at any record in the range).
///
/// # Safety
///
/// `head` is `ftrace_pages_start`, and the caller is in an RCU read-side
/// section or holds `ftrace_lock`.
#[no_mangle]
pub unsafe extern "C" fn rftrace_lookup_rec(
    head: *mut ktable::FtracePage,
    start: c_ulong,
    end: c_ulong,
) -> *mut bindings::dyn_ftrace {
    let (s, e) = (kenv::word(start), kenv::word(end));
    // SAFETY: the caller's contract is `lookup()`'s.
    let rec = unsafe { ktable::lookup(head, s, e) };
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        // SAFETY: same context as ours.
        let c = unsafe { ktable::ftrace_c_lookup_rec(start, end) };
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
    rec
}

/// `ftrace_release_mod()`: takes the page groups of `module` out of the
/// table and subtracts their records from `*records`. Returns the first
/// group taken out and stores the last in `*last`: they are linked, but
/// `(*last)->next` still points into the table for the readers on them;
/// after an RCU grace period the caller sets it to null and frees them.
///
/// # Safety
///
/// As for `ktable::unlink_module()`; `last` and `records` are valid.
#[no_mangle]
pub unsafe extern "C" fn rftrace_unlink_module(
    head: *mut *mut ktable::FtracePage,
    tail: *mut *mut ktable::FtracePage,
    module: *mut bindings::module,
    last: *mut *mut ktable::FtracePage,
    records: *mut c_ulong,
) -> *mut ktable::FtracePage {
    // SAFETY: the caller's contract is `unlink_module()`'s.
    let taken = unsafe { ktable::unlink_module(head, tail, module) };
    // SAFETY: valid out pointers (function contract), under ftrace_lock.
    unsafe { hand_over(&taken, last, records) }
}

/// Counts what went, and stores the last group and the record count.
///
/// # Safety
///
/// `last` and `records` are valid, and the caller holds `ftrace_lock`.
unsafe fn hand_over(
    taken: &ktable::Taken,
    last: *mut *mut ktable::FtracePage,
    records: *mut c_ulong,
) -> *mut ktable::FtracePage {
    bump(&STATS.records_released, taken.records as u64);
    // SAFETY: the function's contract.
    unsafe {
        last.write(taken.last);
        records.write(records.read().saturating_sub(taken.records as c_ulong));
    }
    taken.first
}

/// `ftrace_free_mem()`: takes the records touching `[start, end]` out of
/// the table, calling `each(data, rec)` on each first, and subtracts them
/// from `*records`. Groups left empty are taken out and handed back as
/// `rftrace_unlink_module()` does. In the shadow mode the C lookup must
/// then find nothing in the range.
///
/// # Safety
///
/// As for `ktable::remove_range()`; `last` and `records` are valid.
#[no_mangle]
pub unsafe extern "C" fn rftrace_remove_range(
    head: *mut *mut ktable::FtracePage,
    tail: *mut *mut ktable::FtracePage,
    start: c_ulong,
    end: c_ulong,
    each: Option<ktable::EachRec>,
    data: *mut c_void,
    last: *mut *mut ktable::FtracePage,
    records: *mut c_ulong,
) -> *mut ktable::FtracePage {
    let (s, e) = (kenv::word(start), kenv::word(end));
    // SAFETY: the caller's contract is `remove_range()`'s.
    let taken = unsafe { ktable::remove_range(head, tail, s, e, each, data) };
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) && s <= e {
        // SAFETY: we hold ftrace_lock.
        let left = unsafe { ktable::ftrace_c_lookup_rec(start, end) };
        STATS.shadow_checks.add(1, Relaxed);
        if !left.is_null() {
            shadow_diff(format_args!(
                "records left in [{:#x}, {:#x}] after removal",
                s, e
            ));
        }
    }
    // SAFETY: valid out pointers (function contract), under ftrace_lock.
    unsafe { hand_over(&taken, last, records) }
}

/// `ftrace_update_record()` (`update`) and `ftrace_test_record()`.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock` (or
/// runs where record updates are otherwise serialised).
#[no_mangle]
pub unsafe extern "C" fn rftrace_check_record(
    rec: *mut bindings::dyn_ftrace,
    enable: bool,
    update: bool,
) -> c_int {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s.
    let Some(rec) = (unsafe { Rec::from_raw(rec) }) else {
        return Update::Ignore as c_int;
    };
    check_record(rec, enable, update).update as c_int
}

/// The state machine on one record, with the shadow check: stores the new
/// flags if `update` (and there is something to do), and sets the bug type
/// `ftrace_bug()` would print.
fn check_record(rec: Rec, enable: bool, update: bool) -> Decision {
    STATS.checks.add(1, Relaxed);
    let decision = decide(rec.flags(), enable);
    shadow_check(rec, enable, &decision);
    if update && decision.update != Update::Ignore {
        rec.set_flags(decision.flags);
    }
    kenv::set_bug_type(decision.update.bug_type());
    decision
}

/// Counter `idx` for the debugfs file.
///
/// # Safety
///
/// `name` and `val` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn rftrace_stat(
    idx: c_uint,
    name: *mut *const c_char,
    val: *mut u64,
) -> bool {
    let Some((n, v)) = STATS.get(idx) else {
        return false;
    };
    // SAFETY: the caller passes writable pointers; the name is a static
    // NUL-terminated string.
    unsafe {
        name.write(n.as_ptr().cast::<c_char>());
        val.write(v);
    }
    true
}
