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
//! with the host test crate. The kernel side is [`kside`]: `entry` holds
//! every function C calls (the only `#[no_mangle]` items, checked against
//! the bindgen'd `include/rftrace.h`); `lock` the lock proofs that every
//! record and ops handle borrows; `env` the handles, the ops-list walk and
//! the call-site list; `records` the record table; `pass` the kernel side
//! of the one update pass and its shadow comparator. [`karch`] holds what
//! differs per architecture (`x86`, `arm64`).

use kernel::{
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

pub mod rfcore;

mod karch;
mod kside;

use kside::env::{
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
    ops_walks: Atomic<u64>,
    gathers: Atomic<u64>,
    changed: Atomic<u64>,
    fallbacks: Atomic<u64>,
    pass_walks: Atomic<u64>,
    pass_shadow: Atomic<u64>,
    manager_hashes: Atomic<u64>,
    manager_nothing: Atomic<u64>,
    consistency_checks: Atomic<u64>,
    consistency_diffs: Atomic<u64>,
    registered: Atomic<u64>,
    unregistered: Atomic<u64>,
    trace_function_updates: Atomic<u64>,
    account_walks: Atomic<u64>,
    started: Atomic<u64>,
    stopped: Atomic<u64>,
    quarantined: Atomic<u64>,
    ipmodify_walks: Atomic<u64>,
    ipmodify_retargets: Atomic<u64>,
    filter_changes: Atomic<u64>,
    modify_passes: Atomic<u64>,
    subops_started: Atomic<u64>,
    subops_stopped: Atomic<u64>,
    subops_changes: Atomic<u64>,
    direct_registered: Atomic<u64>,
    direct_unregistered: Atomic<u64>,
    direct_retargeted: Atomic<u64>,
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
    ops_walks: Atomic::new(0),
    gathers: Atomic::new(0),
    changed: Atomic::new(0),
    fallbacks: Atomic::new(0),
    pass_walks: Atomic::new(0),
    pass_shadow: Atomic::new(0),
    manager_hashes: Atomic::new(0),
    manager_nothing: Atomic::new(0),
    consistency_checks: Atomic::new(0),
    consistency_diffs: Atomic::new(0),
    registered: Atomic::new(0),
    unregistered: Atomic::new(0),
    trace_function_updates: Atomic::new(0),
    account_walks: Atomic::new(0),
    started: Atomic::new(0),
    stopped: Atomic::new(0),
    quarantined: Atomic::new(0),
    ipmodify_walks: Atomic::new(0),
    ipmodify_retargets: Atomic::new(0),
    filter_changes: Atomic::new(0),
    modify_passes: Atomic::new(0),
    subops_started: Atomic::new(0),
    subops_stopped: Atomic::new(0),
    subops_changes: Atomic::new(0),
    direct_registered: Atomic::new(0),
    direct_unregistered: Atomic::new(0),
    direct_retargeted: Atomic::new(0),
};

fn bump(counter: &Atomic<u64>, by: u64) {
    if by != 0 {
        counter.add(by, Relaxed);
    }
}

impl Stats {
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
            19 => (b"ops_list_walks\0", r(&self.ops_walks)),
            20 => (b"pass_gathers\0", r(&self.gathers)),
            21 => (b"pass_changed_records\0", r(&self.changed)),
            22 => (b"pass_ops_list_walks\0", r(&self.pass_walks)),
            23 => (b"pass_store_fallbacks\0", r(&self.fallbacks)),
            24 => (b"pass_shadow_checks\0", r(&self.pass_shadow)),
            25 => (b"manager_hashes\0", r(&self.manager_hashes)),
            26 => (b"manager_traces_nothing\0", r(&self.manager_nothing)),
            27 => (b"consistency_checks\0", r(&self.consistency_checks)),
            28 => (b"consistency_differences\0", r(&self.consistency_diffs)),
            29 => (b"registry_registered\0", r(&self.registered)),
            30 => (b"registry_unregistered\0", r(&self.unregistered)),
            31 => (
                b"registry_trace_function_updates\0",
                r(&self.trace_function_updates),
            ),
            32 => (b"registry_account_walks\0", r(&self.account_walks)),
            33 => (b"registry_started\0", r(&self.started)),
            34 => (b"registry_stopped\0", r(&self.stopped)),
            35 => (b"sites_quarantined\0", r(&self.quarantined)),
            36 => (b"registry_ipmodify_walks\0", r(&self.ipmodify_walks)),
            37 => (
                b"registry_ipmodify_retargets\0",
                r(&self.ipmodify_retargets),
            ),
            38 => (b"registry_filter_changes\0", r(&self.filter_changes)),
            39 => (b"registry_modify_passes\0", r(&self.modify_passes)),
            40 => (b"registry_subops_started\0", r(&self.subops_started)),
            41 => (b"registry_subops_stopped\0", r(&self.subops_stopped)),
            42 => (b"registry_subops_changes\0", r(&self.subops_changes)),
            43 => (b"registry_direct_registered\0", r(&self.direct_registered)),
            44 => (
                b"registry_direct_unregistered\0",
                r(&self.direct_unregistered),
            ),
            45 => (b"registry_direct_retargeted\0", r(&self.direct_retargeted)),
            i => return kside::sites::stat(usize::try_from(i).ok()?.checked_sub(46)?),
        })
    }
}

/// Counts a shadow difference and logs the first few.
fn shadow_diff(args: core::fmt::Arguments<'_>) {
    let seen = STATS.shadow_diffs.fetch_add(1, Relaxed);
    if seen < 8 {
        kernel::pr_warn!("shadow: {}\n", args);
    }
}

/// Counts a difference found by the registry's consistency check and logs
/// the first few.
fn consistency_diff(args: core::fmt::Arguments<'_>) {
    let seen = STATS.consistency_diffs.fetch_add(1, Relaxed);
    if seen < 8 {
        kernel::pr_warn!("consistency: {}\n", args);
    }
}

/// Whether this architecture has per-site ops literals.
fn call_ops_mode() -> CallOps {
    if cfg!(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS) {
        CallOps::Supported
    } else {
        CallOps::Unsupported
    }
}

/// The accounting of one ops over records (the body of the kernel's
/// `__ftrace_hash_rec_update()` loop): one more user of a record if `inc`,
/// one less otherwise. What does not change from record to record (the
/// ops' properties, the arch's mode) is read once, when it is made, and
/// the records accounted are added to the stats once, when it goes.
///
/// On an arch with per-site ops literals the `CALL_OPS` request after a
/// removal follows the ops that is left (see `account::remove`), as in C
/// since the series' fix of 7.2's rule, which followed the ops removed;
/// the removals where the two rules differ are counted
/// (`call_ops_survivor_rule`).
pub(crate) struct Accounting<'a> {
    ops: Ops<'a>,
    props: OpsProps,
    mode: CallOps,
    inc: bool,
    accounted: u64,
    survivor_rule: u64,
}

impl<'a> Accounting<'a> {
    /// The accounting of `ops`, adding a user if `inc`.
    pub(crate) fn new(ops: Ops<'a>, inc: bool) -> Self {
        Accounting {
            ops,
            props: ops.props(),
            mode: call_ops_mode(),
            inc,
            accounted: 0,
            survivor_rule: 0,
        }
    }

    /// Accounts `rec`. Returns false on a reference count overflow or
    /// underflow, leaving the record as it was; the caller warns and stops
    /// ftrace.
    #[inline(always)]
    pub(crate) fn rec(&mut self, rec: Rec<'_>) -> bool {
        let before = rec.flags();
        let props = self.props;
        let mut others = KernelOthers::new(rec, self.ops);
        let result = if self.inc {
            account::add(before, props, self.mode)
        } else {
            account::remove(before, props, self.mode, &mut others)
        };
        if others
            .survivor_ok
            .is_some_and(|left| left != props.call_ops_ok)
        {
            self.survivor_rule = self.survivor_rule.saturating_add(1);
        }
        if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
            let (c_ok, c_flags) = kside::env::c_account(rec, self.ops, self.inc);
            STATS.shadow_checks.add(1, Relaxed);
            let same = match result {
                Ok(flags) => c_ok && c_flags == flags,
                Err(_) => !c_ok,
            };
            if !same {
                shadow_diff(format_args!(
                    "accounting differs for {:#x} flags {:#x} inc {} ops {:?}: Rust {:?}, C {} {:#x}",
                    rec.ip(),
                    before.raw(),
                    self.inc,
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
                self.accounted = self.accounted.saturating_add(1);
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
}

impl Drop for Accounting<'_> {
    fn drop(&mut self) {
        bump(&STATS.accounted, self.accounted);
        bump(&STATS.survivor_rule, self.survivor_rule);
    }
}

/// The address `rec` is to call (`new`) or calls now, with the shadow
/// check against the kernel's C choice. Used by the update drivers and the
/// C entry points alike.
pub(crate) fn choose_target(rec: Rec<'_>, new: bool) -> u64 {
    let addr = kside::env::select_addr(rec, new);
    STATS.selected.add(1, Relaxed);
    if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
        let c = kside::env::c_select_addr(rec, new);
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

/// `ftrace_find_unique_ops()`: the single ops whose filter covers the
/// site, or null, with the shadow check.
pub(crate) fn find_unique_ops(rec: Rec<'_>) -> *mut kernel::bindings::ftrace_ops {
    let (rust, c) = kside::env::unique_ops(rec);
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
/// kernel), writable and used by nobody else during the call.
pub(crate) unsafe fn scan_call_sites(
    module: kside::env::Module<'_>,
    start: *mut kernel::ffi::c_ulong,
    end: *mut kernel::ffi::c_ulong,
) -> rfcore::table::Report {
    // SAFETY: the caller's contract is `scan_locs()`'s.
    let report = unsafe { kside::env::scan_locs(module, start, end, karch::call_site) };
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

/// The state machine on one record, with the shadow check: stores the new
/// flags if `update` (and there is something to do), and sets the bug type
/// `ftrace_bug()` would print.
pub(crate) fn check_record(rec: Rec<'_>, enable: bool, update: bool) -> Decision {
    // Counted here; a walk over many records counts them once, when it is
    // over, and calls [`decide_record()`].
    STATS.checks.add(1, Relaxed);
    decide_record(rec, enable, update)
}

/// [`check_record()`] without counting the check.
#[inline]
pub(crate) fn decide_record(rec: Rec<'_>, enable: bool, update: bool) -> Decision {
    let decision = decide(rec.flags(), enable);
    // The one comparator, as in the update pass.
    kside::pass::shadow(rec, enable, &decision, None);
    if update && decision.update != Update::Ignore {
        rec.set_flags(decision.flags);
    }
    kside::env::set_bug_type(rec.lock(), decision.update.bug_type());
    decision
}
