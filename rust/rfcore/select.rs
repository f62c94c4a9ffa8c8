// SPDX-License-Identifier: GPL-2.0

//! Target and ops selection: which address a call site is to reach, which
//! address it reaches now, and which single ops a site belongs to.
//!
//! These are the questions `ftrace_get_addr_new()`, `ftrace_get_addr_curr()`
//! and the `ftrace_find_tramp_ops_*()` / `ftrace_find_unique_ops()` helpers
//! answer in C. The answers come from the record's flags word and a
//! walk of the registered ops in list order ([`OpsList`]); the kernel side
//! supplies the list, the hash lookups and the addresses of the shared
//! callers, and turns a [`Problem`] into the kernel's warnings.
//!
//! The rules, from the kernel's documented behaviour:
//!
//! - A site wants a **direct call** when a direct ops is attached and it is
//!   the only user of the site (count 1); its address comes from the direct
//!   functions table. A direct flag without a table entry is a bug: it is
//!   reported once and the choice falls through to the next rules.
//! - Otherwise an ops' **own trampoline** when the record asks for one
//!   (`TRAMP`): the trampoline of the first ops in the list whose filter
//!   covers the site. If there is none, or it has no trampoline, the
//!   accounting is broken: reported, and the plain caller is used.
//! - Otherwise the **register-saving caller** when some ops needs registers
//!   (`REGS`), else the **plain caller**.
//! - For the address a site reaches *now* the same order applies to the
//!   `_EN` bits, and the trampoline is searched with the update in mind: an
//!   ops being removed (`removed_ops`) owns the site if its old filter
//!   covered it; an ops still being added does not own anything yet; an ops
//!   changing its filter owns the sites of its old filter.
//!
//! One quirk is kept on purpose: the kernel's list walk visits the list head
//! even when the list is empty, and the empty list's head is the
//! `ftrace_list_end` stub, whose empty hashes cover every site. The
//! [`OpsList`] of the kernel reproduces that walk, so the answers here are
//! the kernel's in that case too.

use super::flags::{
    RecFlags,
    CALL_OPS,
    DIRECT,
    DIRECT_EN,
    REGS,
    REGS_EN,
    TRAMP,
    TRAMP_EN, //
};

/// The registered ops, in the order of the kernel's ops list, and what the
/// selection needs to know about each.
pub trait OpsList {
    /// A handle on one ops.
    type Ops: Copy + PartialEq;

    /// The head of the list: the first ops, or the list's end marker when
    /// no ops is registered (the walk visits it once, as the kernel's does).
    /// `None` only if the list has no head at all.
    fn head(&mut self) -> Option<Self::Ops>;
    /// The ops after `op`, or `None` at the end of the list.
    fn next(&mut self, op: Self::Ops) -> Option<Self::Ops>;
    /// The ops' own trampoline, 0 when it has none.
    fn trampoline(&mut self, op: Self::Ops) -> u64;
    /// The ops is being registered and has not been accounted yet.
    fn adding(&mut self, op: Self::Ops) -> bool;
    /// The ops is changing its filter (its old filter is in `old_hash`).
    fn modifying(&mut self, op: Self::Ops) -> bool;
    /// The ops' current filter and notrace hashes select `ip`.
    fn covers(&mut self, op: Self::Ops, ip: u64) -> bool;
    /// The ops' previous filter and notrace hashes selected `ip`.
    fn covered(&mut self, op: Self::Ops, ip: u64) -> bool;
    /// The ops being unregistered by the update in progress, if any.
    fn removed(&mut self) -> Option<Self::Ops>;
}

/// Where a site's call goes, by kind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Route {
    /// The direct trampoline registered for the site.
    Direct,
    /// The trampoline of the site's single ops.
    Trampoline,
    /// The shared caller that saves all registers (`FTRACE_REGS_ADDR`).
    RegsCaller,
    /// The shared caller (`FTRACE_ADDR`).
    Caller,
}

/// The route a record asks for, from its request bits.
pub const fn route_new(flags: RecFlags) -> Route {
    if flags.any(DIRECT) && flags.count() == 1 {
        Route::Direct
    } else {
        fallback(flags.any(TRAMP), flags.any(REGS))
    }
}

/// The route the site takes now, from the record's `_EN` bits.
pub const fn route_curr(flags: RecFlags) -> Route {
    if flags.any(DIRECT_EN) {
        Route::Direct
    } else {
        fallback(flags.any(TRAMP_EN), flags.any(REGS_EN))
    }
}

/// The route when a direct call is not (or cannot be) taken.
const fn fallback(tramp: bool, regs: bool) -> Route {
    if tramp {
        Route::Trampoline
    } else if regs {
        Route::RegsCaller
    } else {
        Route::Caller
    }
}

/// A broken invariant met while choosing a target.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Problem {
    /// The record asks for (or has) a direct call but the direct functions
    /// table has no entry for the site. The choice went on without it.
    NoDirect,
    /// The record asks for (or has) a trampoline but no ops on the site
    /// provides one. The plain caller was chosen; the kernel treats this
    /// as fatal for ftrace.
    NoTrampoline,
}

/// The chosen address, and the invariant broken on the way, if any.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Choice {
    /// The address the site is to call (or calls).
    pub addr: u64,
    /// What went wrong; the address is still the one the kernel would use.
    pub problem: Option<Problem>,
}

/// The addresses of the shared callers and the direct functions table.
pub trait Callers {
    /// `FTRACE_ADDR`.
    fn caller(&self) -> u64;
    /// `FTRACE_REGS_ADDR`.
    fn regs_caller(&self) -> u64;
    /// The direct trampoline registered for `ip`, 0 if none.
    fn direct(&mut self, ip: u64) -> u64;
}

/// The first ops in list order for which `want` holds.
fn find<L: OpsList>(list: &mut L, mut want: impl FnMut(&mut L, L::Ops) -> bool) -> Option<L::Ops> {
    let mut op = list.head()?;
    loop {
        if want(list, op) {
            return Some(op);
        }
        op = list.next(op)?;
    }
}

/// The ops whose trampoline a site is to call: the first ops covering it
/// (with or without a trampoline; the caller checks).
pub fn tramp_ops_new<L: OpsList>(list: &mut L, ip: u64) -> Option<L::Ops> {
    find(list, |l, op| l.covers(op, ip))
}

/// The ops whose trampoline a site calls now, during an update.
pub fn tramp_ops_curr<L: OpsList>(list: &mut L, ip: u64) -> Option<L::Ops> {
    if let Some(gone) = list.removed() {
        if list.covered(gone, ip) {
            return Some(gone);
        }
    }
    find(list, |l, op| {
        if l.trampoline(op) == 0 || l.adding(op) {
            return false;
        }
        if l.modifying(op) {
            l.covered(op, ip)
        } else {
            l.covers(op, ip)
        }
    })
}

/// The first ops other than `exclude` that has a trampoline and covers
/// the site.
pub fn tramp_ops_other<L: OpsList>(list: &mut L, ip: u64, exclude: L::Ops) -> Option<L::Ops> {
    find(list, |l, op| {
        op != exclude && l.trampoline(op) != 0 && l.covers(op, ip)
    })
}

/// The single ops covering the site, `None` when there are several (or
/// none).
pub fn unique_ops<L: OpsList>(list: &mut L, ip: u64) -> Option<L::Ops> {
    unique_ops_but(list, ip, None)
}

/// The one ops other than `exclude` that covers `ip`, if there is exactly
/// one: the survivor on a site `exclude` is leaving, which the site's
/// per-site literal will hold.
pub fn unique_ops_other<L: OpsList>(list: &mut L, ip: u64, exclude: L::Ops) -> Option<L::Ops> {
    unique_ops_but(list, ip, Some(exclude))
}

fn unique_ops_but<L: OpsList>(list: &mut L, ip: u64, exclude: Option<L::Ops>) -> Option<L::Ops> {
    let mut found = None;
    let mut op = list.head()?;
    loop {
        if Some(op) != exclude && list.covers(op, ip) {
            if found.is_some() {
                return None;
            }
            found = Some(op);
        }
        match list.next(op) {
            Some(n) => op = n,
            None => return found,
        }
    }
}

/// Whether the site may call its single ops through the per-site literal
/// (CALL_OPS architectures), and which ops that is.
pub fn call_ops_target<L: OpsList>(list: &mut L, ip: u64, flags: RecFlags) -> Option<L::Ops> {
    if flags.any(CALL_OPS) && flags.count() == 1 {
        unique_ops(list, ip)
    } else {
        None
    }
}

/// Resolves `route` to an address; `tramp` finds the trampoline ops.
///
/// `strict`: an ops found without a trampoline is a problem too (the
/// kernel checks that for the new target only; for the current one it
/// takes the trampoline field as it is).
#[inline]
fn resolve<L: OpsList, C: Callers>(
    list: &mut L,
    callers: &mut C,
    ip: u64,
    route: Route,
    fall: Route,
    tramp: fn(&mut L, u64) -> Option<L::Ops>,
    strict: bool,
) -> Choice {
    let p = pending(callers, ip, route, fall, &mut None);
    let found = if p.route == Route::Trampoline {
        tramp(list, ip).map(|op| list.trampoline(op))
    } else {
        None
    };
    settle(callers, p, found, strict)
}

/// The address the site at `ip` with `flags` is to call
/// (`ftrace_get_addr_new()`).
#[inline]
pub fn addr_new<L: OpsList, C: Callers>(
    list: &mut L,
    callers: &mut C,
    ip: u64,
    flags: RecFlags,
) -> Choice {
    let fall = fallback(flags.any(TRAMP), flags.any(REGS));
    resolve(
        list,
        callers,
        ip,
        route_new(flags),
        fall,
        tramp_ops_new,
        true,
    )
}

/// The address the site at `ip` with `flags` calls now
/// (`ftrace_get_addr_curr()`).
#[inline]
pub fn addr_curr<L: OpsList, C: Callers>(
    list: &mut L,
    callers: &mut C,
    ip: u64,
    flags: RecFlags,
) -> Choice {
    let fall = fallback(flags.any(TRAMP_EN), flags.any(REGS_EN));
    resolve(
        list,
        callers,
        ip,
        route_curr(flags),
        fall,
        tramp_ops_curr,
        false,
    )
}

/// Which answers a [`gather`] walk is to find: what the update of a site
/// uses, and nothing else (a site going to a NOP needs only where it calls
/// now; a site gaining its call, only where it is to call).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Need {
    /// [`addr_new`]: where the site is to call.
    pub new: bool,
    /// [`addr_curr`]: where the site calls now.
    pub curr: bool,
    /// [`unique_ops`]: the single ops on the site.
    pub unique: bool,
}

/// What one walk of the ops list tells about a site: the answers of
/// [`addr_new`], [`addr_curr`] and [`unique_ops`] that were asked for
/// ([`Need`]), `None` for the others.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Gathered<O> {
    /// What [`addr_new`] answers for the site, if asked.
    pub new: Option<Choice>,
    /// What [`addr_curr`] answers for the site, if asked.
    pub curr: Option<Choice>,
    /// What [`unique_ops`] answers for the site when it was asked for;
    /// `None` when it was not.
    pub unique: Option<O>,
}

/// A route whose direct-table lookup, if it needed one, is done.
#[derive(Clone, Copy)]
struct Pending {
    /// [`Route::Direct`] only with a non-zero `direct`.
    route: Route,
    /// The direct trampoline, when `route` is [`Route::Direct`].
    direct: u64,
    /// [`Problem::NoDirect`] when the direct entry was missing.
    problem: Option<Problem>,
}

/// Looks up the direct trampoline when `route` asks for it, at most once
/// per site (`cache`), and falls back to `fall` without one.
fn pending<C: Callers>(
    callers: &mut C,
    ip: u64,
    route: Route,
    fall: Route,
    cache: &mut Option<u64>,
) -> Pending {
    if route != Route::Direct {
        return Pending {
            route,
            direct: 0,
            problem: None,
        };
    }
    let addr = match *cache {
        Some(a) => a,
        None => {
            let a = callers.direct(ip);
            *cache = Some(a);
            a
        }
    };
    if addr != 0 {
        Pending {
            route,
            direct: addr,
            problem: None,
        }
    } else {
        Pending {
            route: fall,
            direct: 0,
            problem: Some(Problem::NoDirect),
        }
    }
}

/// The choice of a pending route, given the trampoline of the ops found
/// for it (`None`: no ops found). `strict` as for [`resolve`].
fn settle<C: Callers>(callers: &C, p: Pending, tramp: Option<u64>, strict: bool) -> Choice {
    let mut problem = p.problem;
    let addr = match p.route {
        Route::Direct if p.direct != 0 => p.direct,
        Route::Trampoline => match tramp {
            Some(t) if t != 0 || !strict => t,
            _ => {
                // A later problem replaces an earlier one: this one is
                // the fatal kind.
                problem = Some(Problem::NoTrampoline);
                callers.caller()
            }
        },
        Route::RegsCaller => callers.regs_caller(),
        Route::Caller | Route::Direct => callers.caller(),
    };
    Choice { addr, problem }
}

/// Whether `op` covers `ip`, asking the list at most once per ops.
fn covers_once<L: OpsList>(list: &mut L, op: L::Ops, ip: u64, seen: &mut Option<bool>) -> bool {
    match *seen {
        Some(c) => c,
        None => {
            let c = list.covers(op, ip);
            *seen = Some(c);
            c
        }
    }
}

/// The answers `need` asks for, among [`addr_new`], [`addr_curr`] and
/// [`unique_ops`], for the site at `ip` whose flags (before the update)
/// are `flags`, in one walk of the ops list.
///
/// The answers are exactly those of the three functions. The list is only
/// walked when one of them needs it (a trampoline route, or the unique ops),
/// its head is asked for at most once, and the walk stops as soon as every
/// answer is known. The direct-table lookup is made at most once too.
#[inline(always)]
pub fn gather<L: OpsList, C: Callers>(
    list: &mut L,
    callers: &mut C,
    ip: u64,
    flags: RecFlags,
    need: Need,
) -> Gathered<L::Ops> {
    // One target alone (the common case: a site gaining or losing its
    // call) is the one function that answers it; no bookkeeping for the
    // answers not asked.
    if !(need.unique || need.new && need.curr) {
        return Gathered {
            new: need.new.then(|| addr_new(list, callers, ip, flags)),
            curr: need.curr.then(|| addr_curr(list, callers, ip, flags)),
            unique: None,
        };
    }
    gather_walk(list, callers, ip, flags, need)
}

/// [`gather`] for two targets, or with the unique ops: the bookkeeping of
/// several answers in one walk, kept out of line so that the common case
/// of one target stays small.
#[inline(never)]
fn gather_walk<L: OpsList, C: Callers>(
    list: &mut L,
    callers: &mut C,
    ip: u64,
    flags: RecFlags,
    need: Need,
) -> Gathered<L::Ops> {
    let mut cache = None;
    let new = need.new.then(|| {
        pending(
            callers,
            ip,
            route_new(flags),
            fallback(flags.any(TRAMP), flags.any(REGS)),
            &mut cache,
        )
    });
    let curr = need.curr.then(|| {
        pending(
            callers,
            ip,
            route_curr(flags),
            fallback(flags.any(TRAMP_EN), flags.any(REGS_EN)),
            &mut cache,
        )
    });

    let mut new_op = None;
    let mut curr_op = None;
    let mut unique = None;
    let mut several = false;
    let mut want_new = new.is_some_and(|p| p.route == Route::Trampoline);
    let mut want_curr = false;
    let mut want_unique = need.unique;
    if curr.is_some_and(|p| p.route == Route::Trampoline) {
        // The ops being removed owns the sites of its old filter first.
        match list.removed() {
            Some(gone) if list.covered(gone, ip) => curr_op = Some(gone),
            _ => want_curr = true,
        }
    }

    if want_new || want_curr || want_unique {
        if let Some(mut op) = list.head() {
            loop {
                let mut seen = None;
                if want_new && covers_once(list, op, ip, &mut seen) {
                    new_op = Some(op);
                    want_new = false;
                }
                if want_unique && covers_once(list, op, ip, &mut seen) {
                    if unique.is_some() {
                        several = true;
                        want_unique = false;
                    } else {
                        unique = Some(op);
                    }
                }
                if want_curr && list.trampoline(op) != 0 && !list.adding(op) {
                    let hit = if list.modifying(op) {
                        list.covered(op, ip)
                    } else {
                        covers_once(list, op, ip, &mut seen)
                    };
                    if hit {
                        curr_op = Some(op);
                        want_curr = false;
                    }
                }
                if !(want_new || want_curr || want_unique) {
                    break;
                }
                match list.next(op) {
                    Some(n) => op = n,
                    None => break,
                }
            }
        }
    }

    let new = new.map(|p| {
        let tramp = new_op.map(|op| list.trampoline(op));
        settle(callers, p, tramp, true)
    });
    let curr = curr.map(|p| {
        let tramp = curr_op.map(|op| list.trampoline(op));
        settle(callers, p, tramp, false)
    });
    Gathered {
        new,
        curr,
        unique: if need.unique && !several {
            unique
        } else {
            None
        },
    }
}
