// SPDX-License-Identifier: GPL-2.0

//! The registry's consistency check: what a record's accounting must be,
//! recomputed from scratch from the ops that trace it now.
//!
//! The accounting ([`super::account`]) keeps each record's user count and
//! request bits incrementally: one ops at a time is added or removed as it
//! is registered, unregistered or changes its filter. A missed or doubled
//! step leaves a record that no single step looks wrong in. This module is
//! the independent answer: given every enabled ops that covers a record
//! ([`Users`], gathered by one walk of the registry), [`check`] says which
//! parts of the record's flags disagree. It is the oracle of the Rust
//! registry (C and Rust cannot both own the registry, so there is no C
//! answer to compare with once it moves).
//!
//! What is exact and what is only implied, by the accounting's rules:
//!
//! - the user count is the number of enabled ops that cover the record;
//! - `DIRECT` is set exactly when a direct-call ops covers it;
//! - `TRAMP` exactly when one ops covers it and that ops has a trampoline;
//! - `CALL_OPS` only where one ops covers the record and its function may
//!   be called from the per-site literal (and never on an architecture
//!   without literals): the safety half. The converse is not kept: a
//!   module's records enabled at load (`ftrace_module_enable()`) count
//!   their users without asking for the literal, so they use the list
//!   function until an ops changes on them, which is slower but correct;
//! - `IPMODIFY` exactly when an IPMODIFY ops covers the record: the claims
//!   ([`super::ipmodify`]) follow every start, stop and filter change of
//!   such an ops, and nothing else writes the bit (an IPMODIFY ops may not
//!   have a notrace filter, so what it covers is what it claims);
//! - `REGS` is implied only: it must be set when an ops that saves the
//!   registers covers the record, but may be left behind (the C code keeps
//!   `REGS` after a `SAVE_REGS` ops leaves a site through a filter change,
//!   and the accounting keeps that behaviour).

use super::{
    account::{
        CallOps,
        OpsProps, //
    },
    flags::{
        RecFlags,
        CALL_OPS,
        DIRECT,
        IPMODIFY,
        REGS,
        TRAMP, //
    },
};

/// The enabled ops that cover one record, as far as the check needs them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Users {
    count: u64,
    direct: bool,
    save_regs: bool,
    ipmodify: bool,
    /// The first ops seen; the only one when `count` is 1.
    first: Option<OpsProps>,
}

impl Users {
    /// No ops covers the record.
    pub const fn none() -> Self {
        Users {
            count: 0,
            direct: false,
            save_regs: false,
            ipmodify: false,
            first: None,
        }
    }

    /// One more enabled ops covers the record; `ipmodify`: it has
    /// `FTRACE_OPS_FL_IPMODIFY`.
    pub fn add(&mut self, ops: OpsProps, ipmodify: bool) {
        self.count = self.count.saturating_add(1);
        self.direct |= ops.direct;
        self.save_regs |= ops.save_regs;
        self.ipmodify |= ipmodify;
        if self.first.is_none() {
            self.first = Some(ops);
        }
    }

    /// How many enabled ops cover the record.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The single ops, when exactly one covers the record.
    fn sole(&self) -> Option<OpsProps> {
        if self.count == 1 {
            self.first
        } else {
            None
        }
    }
}

/// The parts of a record's flags that disagree with its users.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Mismatch {
    /// The user count differs.
    pub count: bool,
    /// `DIRECT` differs.
    pub direct: bool,
    /// `TRAMP` differs.
    pub tramp: bool,
    /// `CALL_OPS` is set where the literal may not be used.
    pub call_ops: bool,
    /// `REGS` is clear although an ops that saves registers covers it.
    pub regs: bool,
    /// `IPMODIFY` differs: clear although an IPMODIFY ops covers the
    /// record, or left set although none does (a stale claim, which would
    /// refuse the next IPMODIFY ops with `-EBUSY`).
    pub ipmodify: bool,
}

impl Mismatch {
    /// Some part disagrees.
    pub fn any(&self) -> bool {
        self.count || self.direct || self.tramp || self.call_ops || self.regs || self.ipmodify
    }
}

/// Checks a record's flags against the ops that cover it now.
pub fn check(flags: RecFlags, users: &Users, call_ops: CallOps) -> Mismatch {
    let sole = users.sole();
    let may_call_ops = call_ops == CallOps::Supported && sole.is_some_and(|o| o.call_ops_ok);
    Mismatch {
        count: flags.count() != users.count,
        direct: flags.any(DIRECT) != users.direct,
        tramp: flags.any(TRAMP) != sole.is_some_and(|o| o.trampoline),
        call_ops: flags.any(CALL_OPS) && !may_call_ops,
        regs: users.save_regs && !flags.any(REGS),
        ipmodify: users.ipmodify != flags.any(IPMODIFY),
    }
}
