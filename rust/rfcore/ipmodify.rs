// SPDX-License-Identifier: GPL-2.0

//! Claims on a function's instruction pointer: at most one started ops
//! with `FTRACE_OPS_FL_IPMODIFY` (a kprobe with a post handler, a live
//! patch) may change where a traced function resumes, and a direct-call
//! ops may share a function with such an ops only if it says it can.
//!
//! When an ops' filter changes, or it starts or stops, the records it
//! leaves or reaches are walked (the C `__ftrace_hash_update_ipmodify()`).
//! An IPMODIFY ops claims every record it reaches and releases every record
//! it leaves, and is refused with `-EBUSY` if a record it reaches is
//! claimed already. A direct ops claims nothing; for every record it
//! reaches that is claimed it asks its own `ops_func` whether it may share
//! (`FTRACE_OPS_CMD_ENABLE_SHARE_IPMODIFY_SELF`), and is refused with what
//! that answers (`-EBUSY` without an `ops_func`).
//!
//! The C code writes the claims during the walk and, on a conflict, walks
//! again to undo the ones written before it. Here an IPMODIFY ops is
//! checked first ([`Plan::Check`]) and claims only if nothing conflicts
//! ([`Plan::Write`]): a refused change writes nothing. The outcome is the
//! same (the host tests compare the two against every small table).

use crate::rfcore::flags::{
    RecFlags,
    DIRECT,
    DISABLED,
    IPMODIFY, //
};

/// Who is changing its set of functions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Claimant {
    /// An ops with `FTRACE_OPS_FL_IPMODIFY`.
    IpModify,
    /// A direct-call ops (`FTRACE_OPS_FL_DIRECT`); `retarget`: its call
    /// target is changing (`modify_ftrace_direct()`), so every record it
    /// keeps is asked about again, not only the ones it reaches.
    Direct {
        /// The direct target changes; the set of functions does not.
        retarget: bool,
    },
}

/// Why a walk is not done at all, or refused before it starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Skip {
    /// The ops is not started, or neither IPMODIFY nor direct: nothing to
    /// claim (success).
    Nothing,
    /// The ops says it is both IPMODIFY and direct, which no user sets:
    /// the kernel warns once, and nothing is claimed (success).
    Both,
    /// One of the two sets is "every function" (an empty filter): such an
    /// ops may not claim (`-EINVAL`).
    EveryFunction,
}

/// The ops flag bits read here (`FTRACE_OPS_FL_*` of Linux 7.2).
pub mod ops_bits {
    /// Started.
    pub const ENABLED: u64 = 1 << 0;
    /// Changes the instruction pointer.
    pub const IPMODIFY: u64 = 1 << 12;
    /// Calls a direct trampoline.
    pub const DIRECT: u64 = 1 << 17;
}

/// Who the ops with flags `ops_flags` claims as, with `old_all` /
/// `new_all` saying whether its old / new set of functions is every
/// function, and `retarget` whether only its direct target changes.
pub fn claimant(
    ops_flags: u64,
    old_all: bool,
    new_all: bool,
    retarget: bool,
) -> Result<Claimant, Skip> {
    let has = |bit: u64| ops_flags & bit != 0;
    if !has(ops_bits::ENABLED) {
        return Err(Skip::Nothing);
    }
    let who = match (has(ops_bits::IPMODIFY), has(ops_bits::DIRECT)) {
        (false, false) => return Err(Skip::Nothing),
        (true, true) => return Err(Skip::Both),
        (true, false) => Claimant::IpModify,
        (false, true) => Claimant::Direct { retarget },
    };
    if old_all || new_all {
        return Err(Skip::EveryFunction);
    }
    Ok(who)
}

/// What the walk knows of one record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Site {
    /// The record's flags.
    pub flags: RecFlags,
    /// In the ops' old set of functions.
    pub in_old: bool,
    /// In the ops' new set of functions.
    pub in_new: bool,
}

/// The phase of an IPMODIFY ops' walk.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Plan {
    /// The first walk: find a conflict, write nothing.
    Check,
    /// The second walk, after a clean check: write the claims.
    Write,
}

/// What to do at one record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Step {
    /// Nothing.
    Pass,
    /// Set `FTRACE_FL_IPMODIFY` (the IPMODIFY ops reaches the record).
    Claim,
    /// Clear `FTRACE_FL_IPMODIFY` (the IPMODIFY ops leaves it).
    Release,
    /// The record is claimed by another IPMODIFY ops: refuse (`-EBUSY`)
    /// before anything is written.
    Conflict,
    /// A direct ops reaches a claimed record: ask its `ops_func` whether
    /// it may share; `warn`: the record already calls a direct trampoline
    /// although the target is not changing, which the kernel reports as a
    /// bug of its own bookkeeping (and goes on).
    AskShare {
        /// Report the inconsistency.
        warn: bool,
    },
}

/// The step at `site` for `who` in `plan` (only [`Claimant::IpModify`]
/// has two phases; a direct ops' walk is one [`Plan::Check`]).
pub fn step(who: Claimant, plan: Plan, site: Site) -> Step {
    if site.flags.any(DISABLED) {
        return Step::Pass;
    }
    let retarget = matches!(who, Claimant::Direct { retarget: true });
    if !retarget && site.in_old == site.in_new {
        return Step::Pass;
    }
    let claimed = site.flags.any(IPMODIFY);
    match (who, plan) {
        (Claimant::IpModify, Plan::Check) if site.in_new && claimed => Step::Conflict,
        (Claimant::IpModify, Plan::Check) => Step::Pass,
        (Claimant::IpModify, Plan::Write) if site.in_new => Step::Claim,
        (Claimant::IpModify, Plan::Write) => Step::Release,
        (Claimant::Direct { .. }, _) if site.in_new && claimed => Step::AskShare {
            warn: !retarget && site.flags.any(DIRECT),
        },
        (Claimant::Direct { .. }, _) => Step::Pass,
    }
}

/// The record's flags after `step` (only claims and releases write).
pub fn apply(flags: RecFlags, step: Step) -> RecFlags {
    match step {
        Step::Claim => flags.with(IPMODIFY),
        Step::Release => flags.without(IPMODIFY),
        Step::Pass | Step::Conflict | Step::AskShare { .. } => flags,
    }
}
