// SPDX-License-Identifier: GPL-2.0

//! The shadow mode: every answer of the core checked against the kernel's
//! C logic, in one module. The code it checks calls it once per place: the
//! accounting ([`account()`]), the target ([`target()`]), the single ops
//! ([`unique()`]), the call-site list ([`call_site_list()`]), the lookup
//! ([`lookup()`], [`removed()`]), the trace function
//! ([`trace_function()`]), and in the update pass one call per record
//! ([`record()`], through `Records::shadow`), the registry's accounting
//! before it ([`consistency()`]) and the literals after it
//! ([`literals()`]). Each check is a no-op unless
//! `CONFIG_FTRACE_RUST_CORE_SHADOW` is set (a `cfg!` test, so the code
//! type-checks in every build); a difference is counted and logged
//! ([`shadow_diff`], `consistency_diff`), and the Rust result is used.
//!
//! The C side ([`c_decision()`], [`c_select_addr()`], [`c_unique_ops()`],
//! [`c_account()`], [`c_lookup_rec()`], [`c_trace_function()`]) serves
//! KUnit too.
//!
//! A leaf module with `unsafe` code: the C lookup's call and the foreign
//! declarations.

use kernel::{
    alloc::{
        flags::GFP_KERNEL,
        KVVec, //
    },
    bindings,
    ffi::{
        c_int,
        c_ulong, //
    },
    sync::atomic::Relaxed,
};

use crate::{
    kside::abi::{
        c_word,
        word, //
    },
    kside::lock::FtraceLocked,
    kside::ops::{
        KernelOpsList,
        Ops, //
    },
    kside::pages::Cursor,
    kside::record::Rec,
    kside::stats::{
        consistency_diff,
        shadow_diff,
        STATS, //
    },
    rfcore::{
        account::{
            AccountError,
            OpsProps, //
        },
        consistency::{
            self,
            Users, //
        },
        flags::{
            RecFlags,
            CALL_OPS_EN, //
        },
        record::Decision,
        select::OpsList,
        table::Report,
        update::{
            Arch,
            Facts,
            Records, //
        },
    },
};

const ON: bool = cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW);

/// Checks the accounting of `ops` on `rec` (its flags `before`), which
/// gave `rust`, against C's on a copy of the record.
pub(crate) fn account(
    rec: Rec<'_>,
    ops: Ops<'_>,
    inc: bool,
    before: RecFlags,
    props: &OpsProps,
    rust: &Result<RecFlags, AccountError>,
) {
    if !ON {
        return;
    }
    let (c_ok, c_flags) = c_account(rec, ops, inc);
    STATS.shadow_checks.add(1, Relaxed);
    let same = match rust {
        Ok(flags) => c_ok && c_flags == *flags,
        Err(_) => !c_ok,
    };
    if !same {
        shadow_diff(format_args!(
            "accounting differs for {:#x} flags {:#x} inc {} ops {:?}: Rust {:?}, C {} {:#x}",
            rec.ip(),
            before.raw(),
            inc,
            props,
            rust,
            c_ok,
            c_flags.raw()
        ));
    }
}

/// Checks the target `rust` chosen for `rec` (`new`: the one it is to
/// call, else the one it calls) against C's choice.
pub(crate) fn target(rec: Rec<'_>, new: bool, rust: u64) {
    if !ON {
        return;
    }
    let c = c_select_addr(rec, new);
    STATS.shadow_checks.add(1, Relaxed);
    if c != rust {
        shadow_diff(format_args!(
            "target differs for {:#x} flags {:#x} new {}: Rust {:#x}, C {:#x}",
            rec.ip(),
            rec.flags().raw(),
            new,
            rust,
            c
        ));
    }
}

/// Checks the single ops `rust` found on `rec` against C's.
pub(crate) fn unique(rec: Rec<'_>, rust: *mut bindings::ftrace_ops) {
    if !ON {
        return;
    }
    let c = c_unique_ops(rec);
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

/// Checks what the check of a call-site list refused: C would make
/// working records of the duplicates and of the sites outside the text.
/// (Of a misaligned site it makes a record at address 0, whose
/// initialisation fails and stops ftrace: refusing it is the intended
/// difference.)
pub(crate) fn call_site_list(report: &Report) {
    if !ON {
        return;
    }
    STATS.shadow_checks.add(1, Relaxed);
    let differ = report.duplicate.saturating_add(report.out_of_text);
    if differ != 0 {
        shadow_diff(format_args!(
            "call-site list: Rust refused {} sites the C code would keep",
            differ
        ));
    }
}

/// Checks the record `rust` found for `[start, end]` against C's lookup:
/// for one address both must find the same record; for a range, both a
/// record or both none (C's bisection may stop at any record in the
/// range).
pub(crate) fn lookup(
    start: u64,
    end: u64,
    rust: *mut bindings::dyn_ftrace,
    rcu: &kernel::sync::rcu::Guard,
) {
    if !ON {
        return;
    }
    let c = c_lookup_rec(start, end, rcu);
    STATS.shadow_checks.add(1, Relaxed);
    let same = if start == end {
        c == rust
    } else {
        c.is_null() == rust.is_null()
    };
    if !same {
        shadow_diff(format_args!(
            "lookup of [{:#x}, {:#x}]: Rust {:p}, C {:p}",
            start, end, rust, c
        ));
    }
}

/// Checks that C finds no record left in `[start, end]` after the records
/// of that range were removed.
pub(crate) fn removed(start: u64, end: u64) {
    if !ON || start > end {
        return;
    }
    let left = c_lookup_rec(start, end, &kernel::sync::rcu::read_lock());
    STATS.shadow_checks.add(1, Relaxed);
    if !left.is_null() {
        shadow_diff(format_args!(
            "records left in [{:#x}, {:#x}] after removal",
            start, end
        ));
    }
}

/// Checks what the shared callers are to call (`which`, with `op`)
/// against C's choice from the same list.
pub(crate) fn trace_function(lock: &FtraceLocked, which: u32, op: *mut bindings::ftrace_ops) {
    if !ON {
        return;
    }
    let (c_which, c_op) = c_trace_function(lock);
    STATS.shadow_checks.add(1, Relaxed);
    if (c_which, c_op) != (which, op) {
        shadow_diff(format_args!(
            "trace function: Rust {} with {:p}, C {} with {:p}",
            which, op, c_which, c_op
        ));
    }
}

/// What the comparator found different between Rust and C on one record.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Differences {
    /// The decision (update and new flags) against `ftrace_check_record()`.
    pub(crate) decision: bool,
    /// The new and current targets gathered against
    /// `ftrace_get_addr_new/curr()`.
    pub(crate) targets: bool,
    /// The unique ops against `ftrace_find_unique_ops()`.
    pub(crate) unique: bool,
}

impl Differences {
    pub(crate) fn any(&self) -> bool {
        self.decision || self.targets || self.unique
    }
}

/// The one comparator: the decision on `rec` against the kernel's C
/// `ftrace_check_record()` on a copy, and the facts gathered for it against
/// C's `ftrace_get_addr_new()`, `ftrace_get_addr_curr()` and
/// `ftrace_find_unique_ops()`: every fact the plan was made from. Records
/// nothing; [`record`] does.
pub(crate) fn compare(
    rec: Rec<'_>,
    enable: bool,
    decision: &Decision,
    facts: Option<&Facts>,
) -> Differences {
    let (c_verdict, c_flags) = rec.c_decision(enable);
    let mut d = Differences {
        decision: c_verdict != decision.update as c_int || c_flags != decision.flags,
        ..Differences::default()
    };
    if let Some(f) = facts {
        let new_differs = f.new.is_some_and(|new| new != c_select_addr(rec, true));
        let curr_differs = f.curr.is_some_and(|curr| curr != c_select_addr(rec, false));
        d.targets = new_differs || curr_differs;
        if let Some(unique) = f.unique {
            let c = c_unique_ops(rec);
            d.unique = c as usize as u64 != unique;
        }
    }
    d
}

/// The check of one record an update pass (or a single decision) decides
/// on: [`compare`], counted, and any difference logged.
pub(crate) fn record(rec: Rec<'_>, enable: bool, decision: &Decision, facts: Option<&Facts>) {
    if !ON {
        return;
    }
    STATS.shadow_checks.add(1, Relaxed);
    STATS.pass_shadow.add(1, Relaxed);
    let d = compare(rec, enable, decision, facts);
    if d.any() {
        shadow_diff(format_args!(
            "update pass differs for {:#x} flags {:#x} enable {}: {:?}, Rust {:?} -> {:#x}, facts {:?}",
            rec.ip(),
            rec.flags().raw(),
            enable,
            d,
            decision.update,
            decision.flags.raw(),
            facts
        ));
    }
}

/// The registry's consistency check ([`crate::rfcore::consistency`]),
/// before every update pass and when an ops joins or leaves the list (so
/// after every registry operation that went before it): each record's
/// count and request bits against the enabled ops that cover it now, from
/// one walk of the ops list per record; each published set against those
/// ops; the stale marks. A difference is counted
/// (`consistency_differences`) and the first few are logged.
pub(crate) fn consistency(lock: &FtraceLocked) {
    if !ON {
        return;
    }
    let mut want: KVVec<usize> = KVVec::new();
    let mut got: KVVec<usize> = KVVec::new();
    let mode = crate::kside::ops::call_ops_mode();
    let mut list = KernelOpsList::new(lock);
    let mut at = Cursor::first(lock);
    while let Some(cursor) = at {
        let rec = cursor.rec();
        let flags = rec.flags();
        // Not accounted by the kernel either (`skip_record()`).
        if crate::rfcore::registry::walk_takes(flags) {
            let mut users = Users::none();
            let mut op = list.head();
            want.clear();
            let mut listed = true;
            while let Some(o) = op {
                if o.enabled() && list.covers(o, rec.ip()) {
                    let (props, ipmodify) = o.props();
                    users.add(props, ipmodify);
                    listed &= want.push(o.as_ptr() as usize, GFP_KERNEL).is_ok();
                }
                op = list.next(o);
            }
            // The site's published set, if any, is exactly those ops.
            if listed && crate::kside::siteset::published(rec.ip(), &mut got, lock) == Ok(true) {
                STATS.consistency_checks.add(1, Relaxed);
                if !got.iter().eq(want.iter()) {
                    consistency_diff(format_args!(
                        "{:#x}: published set {:x?}, the ops covering it {:x?}",
                        rec.ip(),
                        &*got,
                        &*want
                    ));
                }
            }
            STATS.consistency_checks.add(1, Relaxed);
            let m = consistency::check(flags, &users, mode);
            if m.any() {
                consistency_diff(format_args!(
                    "{:#x} flags {:#x}, {} enabled ops cover it: {:?}",
                    rec.ip(),
                    flags.raw(),
                    users.count(),
                    m
                ));
            }
        }
        at = cursor.next();
    }
    // Every set a literal names at a site that wants another is marked
    // stale, and no other set is.
    STATS.consistency_checks.add(1, Relaxed);
    if let Err(at) = crate::kside::siteset::check_stale(lock) {
        consistency_diff(format_args!("stale mark wrong at {at:#x}"));
    }
}

/// The check after a whole-table pass on `CALL_OPS` architectures: the
/// literal of every record's site, read from the text, holds what the
/// record's flags, its unique ops and its published set say
/// ([`Arch::literal_holds`]). A literal the pass should have written and
/// did not, or one naming a set other than the site's, is a shadow
/// difference. The published set itself is checked against the ops that
/// cover the site by [`consistency`].
pub(crate) fn literals<'a, R, A>(lock: &'a FtraceLocked, recs: &mut R, arch: &mut A)
where
    R: Records<Rec = Rec<'a>>,
    A: Arch,
{
    if !ON || !A::CALL_OPS {
        return;
    }
    let mut at = recs.first();
    while let Some(cursor) = at {
        let rec = recs.record(cursor);
        let flags = rec.flags();
        if crate::rfcore::registry::walk_takes(flags) {
            let unique = if flags.count() == 1 && flags.any(CALL_OPS_EN) {
                recs.unique(rec)
            } else {
                None
            };
            let set = crate::kside::siteset::literal_want(rec.ip(), lock);
            if let Some((now, want)) = arch.literal_holds(rec.ip(), flags, unique, set) {
                STATS.shadow_checks.add(1, Relaxed);
                if now != want {
                    shadow_diff(format_args!(
                        "literal of {:#x} flags {:#x} holds {:#x}, must hold {:#x}",
                        rec.ip(),
                        flags.raw(),
                        now,
                        want
                    ));
                }
            }
        }
        at = recs.next(cursor);
    }
}

/// After an update pass over the listed records only
/// ([`crate::kside::dirty`]): no record of the table is left with a change
/// a pass over every record would make, and no literal is due. A record
/// left behind is a consistency difference.
pub(crate) fn left_behind(lock: &FtraceLocked, enable: bool) {
    if !ON {
        return;
    }
    let mut at = Cursor::first(lock);
    while let Some(cursor) = at {
        let rec = cursor.rec();
        let flags = rec.flags();
        STATS.consistency_checks.add(1, Relaxed);
        let update = crate::rfcore::record::decide(flags, enable).update;
        // As the pass asks: a site that calls and keeps its call.
        let literal = flags.any(crate::rfcore::flags::ENABLED)
            && crate::kside::siteset::literal_due(rec.ip(), lock);
        if update != crate::rfcore::record::Update::Ignore || literal {
            consistency_diff(format_args!(
                "{:#x} flags {:#x}: left behind by a pass over the changed records \
                 ({update:?}, literal due: {literal})",
                rec.ip(),
                flags.raw()
            ));
        }
        at = cursor.next();
    }
}

/// The choice the kernel's C code makes from the list, for the shadow
/// mode and KUnit.
pub(crate) fn c_trace_function(lock: &FtraceLocked) -> (u32, *mut bindings::ftrace_ops) {
    crate::kside::under_lock::c_trace_function(lock)
}

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

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
