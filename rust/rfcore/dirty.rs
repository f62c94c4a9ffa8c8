// SPDX-License-Identifier: GPL-2.0

//! The records the next update pass must visit.
//!
//! An update pass brings every record's call site in line with its flags
//! (and, with `CALL_OPS`, its literal in line with its set). A record's
//! flags and set change in the accounting walks only, and the pass after
//! them leaves every record it visits in line. So a pass that follows
//! walks over a few functions only needs to visit those functions'
//! records, not the whole table: [`Dirty`] keeps their addresses between
//! the walks and the pass.
//!
//! The list is a shortcut, never the only record of what changed. It
//! falls back to the whole table ([`Scope::Whole`]) when it cannot be
//! trusted or is no cheaper: at boot, after a walk over every function,
//! when it grows past its limit or runs out of memory, and after a pass
//! that took the sites out of line on purpose (a disabling pass, which
//! leaves the flags as they are and every site a NOP).
//!
//! # Examples
//!
//! ```
//! use rftrace::rfcore::dirty::{Dirty, Scope};
//! # use rftrace::rfcore::siteset::{NoMem, Seq};
//! # struct V(Vec<u64>);
//! # impl Seq<u64> for V {
//! #     fn items(&self) -> &[u64] { &self.0 }
//! #     fn items_mut(&mut self) -> &mut [u64] { &mut self.0 }
//! #     fn push(&mut self, v: u64) -> Result<(), NoMem> { self.0.push(v); Ok(()) }
//! #     fn clear(&mut self) { self.0.clear() }
//! #     fn reserve(&mut self, n: usize) -> Result<(), NoMem> { self.0.reserve(n); Ok(()) }
//! # }
//!
//! let mut d = Dirty::new(V(Vec::new()), V(Vec::new()), 4);
//! assert_eq!(d.scope(true), Scope::Whole); // boot: nothing is known yet
//! d.done(true);
//! d.touch(0x30);
//! d.touch(0x10);
//! d.touch(0x30);
//! assert_eq!(d.scope(true), Scope::Sites(&[0x10, 0x30][..]));
//! assert_eq!(d.scope(false), Scope::Whole); // a disabling pass
//! d.done(true);
//! assert_eq!(d.touched(), Some((&[0x10, 0x30][..], &[][..])));
//! assert_eq!(d.scope(true), Scope::Sites(&[][..]));
//! ```

use crate::rfcore::{
    flags::RecFlags,
    record::{
        Decision,
        Update, //
    },
    select::Need,
    siteset::Seq,
    update::{
        Facts,
        Failure,
        Records, //
    },
};

/// What an update pass visits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope<'a> {
    /// Every record of the table.
    Whole,
    /// The records at these addresses, ascending, each once; an address
    /// whose record has gone since is skipped.
    Sites(&'a [u64]),
}

/// The addresses of the records whose flags or sets changed since the
/// last update pass.
///
/// # Invariants
///
/// Unless `whole`, every record whose site may be out of line with its
/// flags or set has its address in `ips` (maybe more than once), and
/// `ips` holds at most `limit` addresses. With `last_len` `Some(n)`, the
/// first `n` addresses of `last` are those the last pass visited, each
/// once.
pub struct Dirty<S: Seq<u64>> {
    ips: S,
    whole: bool,
    limit: usize,
    /// The distinct addresses at the front of `ips`, as the last
    /// [`Dirty::scope`] sorted them.
    sorted: usize,
    last: S,
    last_len: Option<usize>,
}

impl<S: Seq<u64>> Dirty<S> {
    /// Nothing known: the next pass visits every record. A list longer
    /// than `limit` gives way to a whole pass. `ips` and `last` are two
    /// empty sequences, the list and the last pass's.
    pub fn new(ips: S, last: S, limit: usize) -> Self {
        // INVARIANT: whole, and no last pass.
        Dirty {
            ips,
            whole: true,
            limit,
            sorted: 0,
            last,
            last_len: None,
        }
    }

    /// The next pass visits every record (a walk over every function, or
    /// a change this list cannot follow).
    pub fn whole(&mut self) {
        self.ips.clear();
        // INVARIANT: whole.
        self.whole = true;
    }

    /// Whether the next pass visits every record.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// The list is cut over to a whole pass beyond `limit` addresses (the
    /// table grew or shrank).
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        if self.ips.items().len() > limit {
            self.whole();
        }
    }

    /// Whether `n` more addresses fit under the limit: the caller's walk
    /// over `n` functions keeps a list, else it asks for a whole pass.
    pub fn has_room(&self, n: usize) -> bool {
        !self.whole && self.ips.items().len().saturating_add(n) <= self.limit
    }

    /// The record at `ip` changed: the next pass visits it.
    pub fn touch(&mut self, ip: u64) {
        if self.whole {
            return;
        }
        if self.ips.items().len() >= self.limit || self.ips.push(ip).is_err() {
            self.whole();
        }
    }

    /// What the next pass visits: the list sorted, each address once. A
    /// pass that disables (`enable` false) turns every site off: it visits
    /// every record.
    pub fn scope(&mut self, enable: bool) -> Scope<'_> {
        if self.whole || !enable {
            return Scope::Whole;
        }
        let n = sort_unique(self.ips.items_mut());
        self.sorted = n;
        Scope::Sites(self.ips.items().get(..n).unwrap_or(&[]))
    }

    /// The records changed since the pass before last: those the last
    /// pass visited and those listed since, or `None` when one of the two
    /// is the whole table (or no pass ran yet).
    pub fn touched(&self) -> Option<(&[u64], &[u64])> {
        if self.whole {
            return None;
        }
        let n = self.last_len?;
        Some((self.last.items().get(..n).unwrap_or(&[]), self.ips.items()))
    }

    /// A pass is over. One that enabled brought every record it visited
    /// in line: the list starts again empty. One that disabled left every
    /// site a NOP whatever its flags: the next pass visits every record.
    pub fn done(&mut self, enabled: bool) {
        if self.whole || !enabled {
            self.last.clear();
            self.last_len = None;
        } else {
            // INVARIANT: `scope()` sorted the first `sorted` addresses,
            // the ones the pass visited.
            core::mem::swap(&mut self.ips, &mut self.last);
            self.last_len = Some(self.sorted);
        }
        self.ips.clear();
        self.sorted = 0;
        // INVARIANT: after an enabling pass, no site is out of line; after
        // a disabling one, whole.
        self.whole = !enabled;
    }
}

/// Sorts `v` ascending and moves each value's first copy to the front;
/// returns how many values are distinct (the front's length; what lies
/// after it is unspecified). The sort is the call-site list's
/// ([`crate::rfcore::table::sort`]: no allocation, no panic path); a list
/// sorted already costs one comparison per value.
pub fn sort_unique(v: &mut [u64]) -> usize {
    if !v.windows(2).all(|p| p.first() < p.get(1)) {
        crate::rfcore::table::sort(v);
    }
    let mut n = 0usize;
    for i in 0..v.len() {
        let Some(&x) = v.get(i) else {
            break;
        };
        let seen = n
            .checked_sub(1)
            .and_then(|last| v.get(last))
            .is_some_and(|&last| last == x);
        if !seen {
            if let Some(slot) = v.get_mut(n) {
                *slot = x;
            }
            n = n.saturating_add(1);
        }
    }
    n
}

/// A record table whose records can be found from their address.
pub trait Find: Records {
    /// The record whose call site is at `ip`, if the table has one.
    fn find(&mut self, ip: u64) -> Option<Self::Rec>;
}

/// A position in a [`Scoped`] table.
#[derive(Clone, Copy)]
pub enum At<C, R> {
    /// In the whole table.
    Table(C),
    /// At the `n`th address of the scope, whose record is `rec`.
    Listed(usize, R),
}

/// The record table as an update pass over a [`Scope`] walks it: every
/// record, or the records of the listed addresses (those whose record has
/// gone are skipped). Everything else is the table's own.
pub struct Scoped<'a, R> {
    recs: &'a mut R,
    scope: Scope<'a>,
}

impl<'a, R: Find> Scoped<'a, R> {
    /// `recs` as a pass over `scope` walks it.
    pub fn new(recs: &'a mut R, scope: Scope<'a>) -> Self {
        Scoped { recs, scope }
    }

    /// The first listed address from the `n`th on that has a record.
    fn listed_from(&mut self, n: usize) -> Option<At<R::Cursor, R::Rec>> {
        let Scope::Sites(ips) = self.scope else {
            return None;
        };
        let mut i = n;
        while let Some(&ip) = ips.get(i) {
            if let Some(rec) = self.recs.find(ip) {
                return Some(At::Listed(i, rec));
            }
            i = i.saturating_add(1);
        }
        None
    }
}

impl<R: Find> Records for Scoped<'_, R> {
    type Rec = R::Rec;
    type Cursor = At<R::Cursor, R::Rec>;

    fn first(&mut self) -> Option<Self::Cursor> {
        match self.scope {
            Scope::Whole => self.recs.first().map(At::Table),
            Scope::Sites(_) => self.listed_from(0),
        }
    }

    fn next(&mut self, at: Self::Cursor) -> Option<Self::Cursor> {
        match at {
            At::Table(c) => self.recs.next(c).map(At::Table),
            At::Listed(i, _) => self.listed_from(i.saturating_add(1)),
        }
    }

    fn record(&self, at: Self::Cursor) -> Self::Rec {
        match at {
            At::Table(c) => self.recs.record(c),
            At::Listed(_, rec) => rec,
        }
    }

    fn ip(&self, rec: Self::Rec) -> u64 {
        self.recs.ip(rec)
    }

    fn flags(&self, rec: Self::Rec) -> RecFlags {
        self.recs.flags(rec)
    }

    fn store_flags(&mut self, rec: Self::Rec, flags: RecFlags) {
        self.recs.store_flags(rec, flags)
    }

    #[inline(always)]
    fn gather(&mut self, rec: Self::Rec, need: Need) -> Facts {
        self.recs.gather(rec, need)
    }

    fn unique(&mut self, rec: Self::Rec) -> Option<u64> {
        self.recs.unique(rec)
    }

    fn shadow(&mut self, rec: Self::Rec, enable: bool, decision: &Decision, facts: Option<&Facts>) {
        self.recs.shadow(rec, enable, decision, facts)
    }

    fn report(&mut self, rec: Self::Rec, update: Update, failure: &Failure) {
        self.recs.report(rec, update, failure)
    }

    fn quarantine(&mut self, rec: Self::Rec, update: Update, failure: &Failure) {
        self.recs.quarantine(rec, update, failure)
    }

    fn literal_set(&mut self, rec: Self::Rec) -> Option<u64> {
        self.recs.literal_set(rec)
    }

    fn literal_due(&mut self, rec: Self::Rec) -> bool {
        self.recs.literal_due(rec)
    }

    fn literal_written(&mut self, rec: Self::Rec, set: u64) {
        self.recs.literal_written(rec, set)
    }
}
