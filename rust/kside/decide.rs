// SPDX-License-Identifier: GPL-2.0

//! What the core decides about one record, with the shadow check against
//! the kernel's C logic: its accounting for an ops ([`Accounting`]), its
//! target ([`choose_target()`]), its single ops ([`find_unique_ops()`])
//! and its state machine ([`check_record()`]).

use kernel::{
    bindings,
    sync::atomic::Relaxed, //
};

use crate::{
    kside::ops::{
        KernelOthers,
        Ops, //
    },
    kside::record::Rec,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::{
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
    },
};

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
            mode: crate::kside::ops::call_ops_mode(),
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
        crate::kside::shadow::account(rec, self.ops, self.inc, before, &props, &result);
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
    let addr = crate::kside::select::select_addr(rec, new);
    STATS.selected.add(1, Relaxed);
    crate::kside::shadow::target(rec, new, addr);
    addr
}

/// `ftrace_find_unique_ops()`: the single ops whose filter covers the
/// site, or null, with the shadow check.
pub(crate) fn find_unique_ops(rec: Rec<'_>) -> *mut bindings::ftrace_ops {
    let rust = crate::kside::select::unique_ops(rec);
    crate::kside::shadow::unique(rec, rust);
    rust
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
    crate::kside::shadow::record(rec, enable, &decision, None);
    if update && decision.update != Update::Ignore {
        rec.set_flags(decision.flags);
    }
    crate::kside::record::set_bug_type(rec.lock(), decision.update.bug_type());
    decision
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
