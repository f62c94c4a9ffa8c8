// SPDX-License-Identifier: GPL-2.0

//! The decisions of the `ftrace_ops` registry that do not depend on where
//! the ops live: whether an ops may join the list and with which flags,
//! which records an ops' accounting walk touches, and what the shared
//! callers (`ftrace_caller`, the sites that are not per-ops) call.
//!
//! The kernel side (`kside::registry`) reads the facts, asks here, and
//! writes the answer into the kernel's structures; the host tests check
//! these answers against a model written from the documented rules.

/// `ftrace_ops` flag bits (`FTRACE_OPS_FL_*` of Linux 7.2,
/// `include/linux/ftrace.h`); the kernel side asserts each against its
/// generated binding.
pub mod ops_fl {
    /// Started: the records the ops covers count it.
    pub const ENABLED: u64 = 1 << 0;
    /// Not in the kernel's core data (a module's or an allocated ops).
    pub const DYNAMIC: u64 = 1 << 1;
    /// Wants the full register set.
    pub const SAVE_REGS: u64 = 1 << 2;
    /// Wants the full register set if the arch can give it.
    pub const SAVE_REGS_IF_SUPPORTED: u64 = 1 << 3;
    /// Needs the recursion protection of the assist function.
    pub const RECURSION: u64 = 1 << 4;
    /// Skipped by the list function.
    pub const STUB: u64 = 1 << 5;
    /// Freed or about to be: may not register again.
    pub const DELETED: u64 = 1 << 7;
    /// Being started: on the list, its records not accounted yet.
    pub const ADDING: u64 = 1 << 8;
    /// Being stopped: off the list, its sites being updated (the
    /// trampoline finders ask it first).
    pub const REMOVING: u64 = 1 << 9;
    /// Its hashes are changing: the update pass runs for it, and the
    /// trampoline finders read the hashes it had.
    pub const MODIFYING: u64 = 1 << 10;
    /// May only be called while RCU is watching.
    pub const RCU: u64 = 1 << 14;
    /// Cannot be registered while `ftrace_enabled` is off.
    pub const PERMANENT: u64 = 1 << 16;
}

/// What the registry knows when an ops asks to join the list
/// (`__register_ftrace_function()`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Joining {
    /// The ops' flags word.
    pub flags: u64,
    /// The `ftrace_enabled` sysctl is on.
    pub ftrace_enabled: bool,
    /// The ops lives in the kernel's core data (not a module's, not
    /// allocated).
    pub core_data: bool,
    /// The arch saves the full register set on request
    /// (`CONFIG_DYNAMIC_FTRACE_WITH_REGS`).
    pub with_regs: bool,
}

/// Why an ops may not join the list; each is what the C code answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Refusal {
    /// The ops was deleted (`-EINVAL`).
    Deleted,
    /// The ops is already enabled: registered twice (`-EBUSY`, and the
    /// kernel warns).
    AlreadyEnabled,
    /// It wants the register set the arch cannot save, and did not say
    /// "if supported" (`-EINVAL`).
    RegsUnsupported,
    /// A permanent ops while `ftrace_enabled` is off (`-EBUSY`).
    PermanentWhileDisabled,
}

/// Whether an ops may join the list, and its flags once it has: the
/// "if supported" request becomes a plain one where the arch lacks the
/// register set, and an ops outside the core data is dynamic (its
/// unregistration waits for the tasks that may still run its function).
pub fn admit(j: Joining) -> Result<u64, Refusal> {
    let has = |bit: u64| j.flags & bit != 0;
    if has(ops_fl::DELETED) {
        return Err(Refusal::Deleted);
    }
    if has(ops_fl::ENABLED) {
        return Err(Refusal::AlreadyEnabled);
    }
    let mut flags = j.flags;
    if !j.with_regs {
        if has(ops_fl::SAVE_REGS) && !has(ops_fl::SAVE_REGS_IF_SUPPORTED) {
            return Err(Refusal::RegsUnsupported);
        }
        if has(ops_fl::SAVE_REGS_IF_SUPPORTED) {
            flags |= ops_fl::SAVE_REGS;
        }
    }
    if !j.ftrace_enabled && has(ops_fl::PERMANENT) {
        return Err(Refusal::PermanentWhileDisabled);
    }
    if !j.core_data {
        flags |= ops_fl::DYNAMIC;
    }
    Ok(flags)
}

/// What the shared callers call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Callee {
    /// `ftrace_stub`: nothing is registered.
    Stub,
    /// The list function, which tests every ops on the list.
    List,
    /// The single ops' function as `ftrace_ops_get_func()` gives it (its
    /// own, or the assist function that adds recursion protection).
    Ops,
}

/// The ops the shared callers pass along.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Passed {
    /// The list's end marker (the list function ignores it).
    ListEnd,
    /// The first (and, with [`Callee::Ops`], only) ops on the list.
    First,
}

/// The shared callers' function and the ops they pass
/// (`update_ftrace_function()`), from the head of the list: `first` is
/// the flags of the first ops (none: the list is empty), `more` whether
/// another follows it, `force_list` whether the arch cannot pass an ops
/// to a function (`FTRACE_FORCE_LIST_FUNC`).
///
/// One ops is called directly unless it is dynamic (it may go away while a
/// CPU is between loading the function and calling it; the list function
/// holds off its freeing) or must only run while RCU is watching (the list
/// function checks). Two or more always go through the list function.
pub fn trace_function(first: Option<u64>, more: bool, force_list: bool) -> (Callee, Passed) {
    match first {
        None => (Callee::Stub, Passed::ListEnd),
        Some(_) if more => (Callee::List, Passed::ListEnd),
        Some(flags) if force_list || flags & (ops_fl::DYNAMIC | ops_fl::RCU) != 0 => {
            (Callee::List, Passed::First)
        }
        Some(_) => (Callee::Ops, Passed::First),
    }
}

/// How an ops' accounting walk (`__ftrace_hash_rec_update()`) reads its
/// hashes: every record not in `notrace` when the filter is empty, else
/// the records in the filter and not in `notrace`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reach {
    /// Every record except those in the notrace hash.
    All,
    /// Only records of the filter hash (which holds `count` functions, so
    /// the walk may stop after that many).
    Filter {
        /// Functions in the filter hash.
        count: u64,
    },
}

/// Whether the accounting walk takes a record with these flags: a record
/// disabled at boot (a weak function's, one of a module still forming) is
/// left out unless it is enabled already, whose accounting must go on.
pub fn walk_takes(flags: crate::rfcore::flags::RecFlags) -> bool {
    use crate::rfcore::flags::{
        DISABLED,
        ENABLED, //
    };
    !flags.any(DISABLED) || flags.any(ENABLED)
}

/// Whether the accounting walk of an ops with `reach` matches a record
/// that is (`in_filter`) or is not in its filter, and is or is not in its
/// notrace hash.
pub fn walk_matches(reach: Reach, in_filter: bool, in_notrace: bool) -> bool {
    match reach {
        Reach::All => !in_notrace,
        Reach::Filter { .. } => in_filter && !in_notrace,
    }
}

/// Whether a record with these flags keeps something it may not once no
/// ops is registered: a user, a request bit or a site still enabled. Only
/// the bits that survive the last ops (`DISABLED`, `TOUCHED`, `MODIFIED`)
/// may stay; a record that keeps more was accounted wrongly.
pub fn left_behind(flags: crate::rfcore::flags::RecFlags) -> bool {
    flags.any(!crate::rfcore::flags::NOCLEAR)
}

/// The links of an ops list as the registry writes them: a head and one
/// `next` per ops, `None` being the end marker. The kernel's list is read
/// without a lock while it is written, so each write must leave a list a
/// reader can walk to its end: the kernel implementation publishes with
/// release stores, and the order of the writes below is what makes a
/// reader see either the old list or the new one.
pub trait Links {
    /// An ops on (or joining) the list.
    type Op: Copy + PartialEq;
    /// The first ops.
    fn head(&self) -> Option<Self::Op>;
    /// The ops after `op`.
    fn next(&self, op: Self::Op) -> Option<Self::Op>;
    /// Points the head at `to`.
    fn set_head(&mut self, to: Option<Self::Op>);
    /// Points `op`'s link at `to`.
    fn set_next(&mut self, op: Self::Op, to: Option<Self::Op>);
}

/// Puts `op` first: its link before the head, so a reader that finds it
/// through the new head walks on into the old list.
pub fn push_front<L: Links>(list: &mut L, op: L::Op) {
    let first = list.head();
    list.set_next(op, first);
    list.set_head(Some(op));
}

/// Takes `op` out of the list by pointing the link that reached it at its
/// successor; `op` keeps its own link, so a reader standing on it walks on
/// to the end. False if `op` is not on the list.
pub fn unlink<L: Links>(list: &mut L, op: L::Op) -> bool {
    let mut prev: Option<L::Op> = None;
    let mut cur = list.head();
    while let Some(c) = cur {
        if c == op {
            let after = list.next(c);
            match prev {
                None => list.set_head(after),
                Some(p) => list.set_next(p, after),
            }
            return true;
        }
        prev = Some(c);
        cur = list.next(c);
    }
    false
}

/// Whether a filter (`notrace` false) or notrace change of an ops with
/// these flags is refused before anything is touched: an IPMODIFY ops may
/// not have a notrace hash (refused with `-EINVAL`).
pub fn change_refused(flags: u64, notrace: bool) -> bool {
    notrace && flags & crate::rfcore::ipmodify::ops_bits::IPMODIFY != 0
}

/// The ops on the list, first to last.
pub fn members<L: Links>(list: &L) -> impl Iterator<Item = L::Op> + '_ {
    let mut at = list.head();
    core::iter::from_fn(move || {
        let op = at?;
        at = list.next(op);
        Some(op)
    })
}

/// An ops as a filter change sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Sharing {
    /// Started (`FTRACE_OPS_FL_ENABLED`): its records count it.
    pub enabled: bool,
    /// Its hashes are `global_ops`' own (the top tracing instance's
    /// function tracers share them), so a change of them is everyone's.
    pub global_hash: bool,
}

/// The ops whose records a filter or notrace change of `changed`
/// accounts again (`ftrace_hash_rec_update_modify()`): `changed`, then,
/// if its hashes are `global_ops`', every other ops on the list that
/// shares them, in list order. (The walk itself skips an ops that is not
/// started.)
pub fn rewalked<'l, L: Links>(
    list: &'l L,
    changed: L::Op,
    facts: impl Fn(L::Op) -> Sharing + 'l,
) -> impl Iterator<Item = L::Op> + 'l {
    let shared = facts(changed).global_hash;
    core::iter::once(changed)
        .chain(members(list).filter(move |&op| shared && op != changed && facts(op).global_hash))
}

/// The ops the update pass runs for after a filter or notrace change of
/// `changed` (`ftrace_ops_update_code()`), marked as modifying with the
/// hashes it had: none while `ftrace_enabled` is off; `changed` if it is
/// started; else, if its hashes are `global_ops`', the first started ops
/// on the list that shares them; else none, since no site follows the
/// changed hashes.
pub fn modifier<L: Links>(
    list: &L,
    changed: L::Op,
    ftrace_enabled: bool,
    facts: impl Fn(L::Op) -> Sharing,
) -> Option<L::Op> {
    if !ftrace_enabled {
        return None;
    }
    let own = facts(changed);
    if own.enabled {
        return Some(changed);
    }
    if !own.global_hash {
        return None;
    }
    members(list).find(|&op| {
        let f = facts(op);
        f.global_hash && f.enabled
    })
}
