// SPDX-License-Identifier: GPL-2.0

//! The record table: page groups of call-site records, how big they are,
//! and how an address is found in them.
//!
//! The kernel keeps its records (`struct dyn_ftrace`) in a list of page
//! groups (`struct ftrace_page`): each group is `2^order` contiguous pages
//! holding records in ascending address order, and the groups themselves
//! are in ascending order within the core kernel and within each module.
//! The core kernel's groups come first; each module's groups are appended
//! when it loads and unlinked when it goes.
//!
//! This module holds the rules, on plain values:
//!
//! - [`Geometry`]: how many records a group of a given order holds, and
//!   the order to try first for a number of records (the largest group
//!   that the records fill completely, so no whole page is left empty);
//! - [`hits`]: which records of one group a range of addresses touches, by
//!   bisection. A record covers `[ip, ip + insn_size)`; the range
//!   `[start, end]` includes `end`. Records of a group do not overlap, so
//!   the records a range touches are consecutive;
//! - [`group_may_hold`]: the quick test on a group's first and last
//!   record before it is bisected;
//! - [`remove_range`]: taking consecutive records out of a group, keeping
//!   the rest in order (freed init text).
//!
//! Records are read through a closure (`ip_at`) rather than a slice, so the
//! kernel side can read each record once, through a raw pointer, without
//! claiming the whole group for the length of a reference.

use core::ops::Range;

/// The shape of the record table's page groups.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Geometry {
    /// Size of one record (`sizeof(struct dyn_ftrace)`).
    pub entry_size: usize,
    /// Size of one page.
    pub page_size: usize,
    /// The largest order the page allocator can give.
    pub max_order: u32,
}

impl Geometry {
    /// How many records a group of `order` holds; `None` if the order is
    /// above [`Geometry::max_order`], the record size is zero, or the size
    /// does not fit a `usize`.
    pub fn entries(&self, order: u32) -> Option<usize> {
        if order > self.max_order || self.entry_size == 0 {
            return None;
        }
        let bytes = self.page_size.checked_shl(order)?;
        if bytes >> order != self.page_size {
            return None;
        }
        bytes.checked_div(self.entry_size)
    }

    /// The order to try first for `count` records: the largest group that
    /// `count` records fill entirely, that is `2^order` pages with
    /// `2^order <= ceil(count * entry_size / page_size)` (at least order 0),
    /// and no more than [`Geometry::max_order`]. If that allocation fails,
    /// the caller tries the orders below it.
    pub fn first_order(&self, count: usize) -> u32 {
        let pages = count
            .checked_mul(self.entry_size)
            .and_then(|bytes| bytes.checked_add(self.page_size.checked_sub(1)?))
            .and_then(|bytes| bytes.checked_div(self.page_size))
            .unwrap_or(usize::MAX);
        pages
            .checked_ilog2()
            .unwrap_or_default()
            .min(self.max_order)
    }
}

/// Whether a group whose records run from `first_ip` to `last_ip` can
/// hold a record touching `[start, end]`.
pub fn group_may_hold(first_ip: u64, last_ip: u64, start: u64, end: u64, insn_size: u64) -> bool {
    end >= first_ip && last_ip.checked_add(insn_size).is_none_or(|e| start < e)
}

/// The records among `len` (in ascending order, read by `ip_at`) whose
/// instruction `[ip, ip + insn_size)` touches `[start, end]`.
///
/// An empty range (`start > end`) touches nothing. The result is an empty
/// range at the insertion point when no record is touched.
pub fn hits(
    len: usize,
    mut ip_at: impl FnMut(usize) -> u64,
    start: u64,
    end: u64,
    insn_size: u64,
) -> Range<usize> {
    // First record that ends after `start`.
    // An instruction whose end is past `u64::MAX` ends after any `start`.
    let lo = partition_point(len, |i| {
        ip_at(i).checked_add(insn_size).is_some_and(|e| e <= start)
    });
    if start > end {
        return lo..lo;
    }
    // First record that begins after `end`.
    let hi = partition_point(len, |i| ip_at(i) <= end);
    lo..hi.max(lo)
}

/// The index of the record at `ip` among the first `len` of a group
/// whose records ascend, searched for from index `from` on: the gaps to
/// `from + 1`, `+ 2`, `+ 4` ... until one passes `ip`, then a bisection of
/// the last gap. `None` when `ip` is below the record at `from`, above the
/// group's last record, or between two records. Ascending ips found one
/// after the other cost about twice the logarithm of the distance between
/// them, not of the group's length.
pub fn gallop(
    len: usize,
    from: usize,
    ip: u64,
    mut ip_at: impl FnMut(usize) -> u64,
) -> Option<usize> {
    if from >= len || ip_at(from) > ip {
        return None;
    }
    // `lo` is at or below the record sought; `hi` past it (or `len`).
    let mut lo = from;
    let mut step = 1usize;
    let hi = loop {
        let probe = lo.saturating_add(step);
        if probe >= len {
            break len;
        }
        if ip_at(probe) > ip {
            break probe;
        }
        lo = probe;
        step = step.saturating_mul(2);
    };
    // The last record of `lo..hi` at or below `ip`.
    let (mut a, mut b) = (lo, hi);
    // `a < b` throughout: the differences do not saturate (saturating
    // all the same, so that no overflow check is compiled in).
    while b.saturating_sub(a) > 1 {
        let mid = a.saturating_add(b.saturating_sub(a) / 2);
        if ip_at(mid) <= ip {
            a = mid;
        } else {
            b = mid;
        }
    }
    (ip_at(a) == ip).then_some(a)
}

/// The first record touching `[start, end]`, as [`hits`] finds it.
pub fn first_hit(
    len: usize,
    ip_at: impl FnMut(usize) -> u64,
    start: u64,
    end: u64,
    insn_size: u64,
) -> Option<usize> {
    let r = hits(len, ip_at, start, end, insn_size);
    if r.start < r.end {
        Some(r.start)
    } else {
        None
    }
}

/// The number of leading indices in `0..len` for which `pred` holds,
/// `pred` being true on a prefix and false after it.
fn partition_point(len: usize, mut pred: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, len);
    while lo < hi {
        // lo < hi <= len: neither sum can saturate.
        let mid = lo.saturating_add((hi - lo) / 2);
        if pred(mid) {
            lo = mid.saturating_add(1);
        } else {
            hi = mid;
        }
    }
    lo
}

/// How to take consecutive records out of a group: move `count` records
/// from index `from` down to index `to` (overlapping, like `memmove`),
/// and the group then holds `len` records.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Removal {
    /// First record to keep after the range.
    pub from: usize,
    /// Where it goes: the first index of the range.
    pub to: usize,
    /// How many records move.
    pub count: usize,
    /// The group's length afterwards.
    pub len: usize,
}

/// The plan to take the records `range` out of the first `len` records of
/// a group; `None` if the range is not within them.
pub fn removal(len: usize, range: Range<usize>) -> Option<Removal> {
    if range.start > range.end || range.end > len {
        return None;
    }
    let gone = range.end - range.start;
    Some(Removal {
        from: range.end,
        to: range.start,
        count: len - range.end,
        len: len - gone,
    })
}

/// Takes the records `range` out of the first `len` records of `recs`,
/// moving the later ones down, as [`removal`] plans it. Returns the new
/// length, or `None` (and leaves `recs` alone) if the range is not within
/// the first `len`.
pub fn remove_range<R: Copy>(recs: &mut [R], len: usize, range: Range<usize>) -> Option<usize> {
    if len > recs.len() {
        return None;
    }
    let plan = removal(len, range)?;
    let src = plan.from..plan.from.checked_add(plan.count)?;
    recs.copy_within(src, plan.to);
    Some(plan.len)
}

/// The list of groups, as a reader walks it.
pub trait Walk {
    /// A handle on one group.
    type Group: Copy + PartialEq;

    /// The first group, `None` for an empty table.
    fn first(&mut self) -> Option<Self::Group>;
    /// The group after `g`.
    fn next(&mut self, g: Self::Group) -> Option<Self::Group>;
    /// The number of records in `g`.
    fn len(&mut self, g: Self::Group) -> usize;
    /// The address of record `i` of `g` (`i` below `len(g)`).
    fn ip_at(&mut self, g: Self::Group, i: usize) -> u64;
}

/// The list of groups, as its owner (under `ftrace_lock`) changes it.
pub trait Table: Walk {
    /// Takes `g` out of the list: the link to it (the head if `prev` is
    /// `None`, else `prev`'s) now points at `g`'s next, and if `g` was the
    /// last group, `prev` becomes the last. `g` is kept aside, its records
    /// and its own link untouched, until readers are done with it.
    fn take(&mut self, prev: Option<Self::Group>, g: Self::Group);
    /// Takes records out of `g` as `plan` says (moving the later ones
    /// down first, then setting the new length).
    fn shrink(&mut self, g: Self::Group, plan: Removal);
}

/// The records of group `g` touching `[start, end]` (empty when the
/// group's first and last records already rule it out).
fn group_hits<W: Walk>(
    t: &mut W,
    g: W::Group,
    start: u64,
    end: u64,
    insn_size: u64,
) -> Range<usize> {
    let len = t.len(g);
    match len.checked_sub(1) {
        Some(last) if group_may_hold(t.ip_at(g, 0), t.ip_at(g, last), start, end, insn_size) => {
            hits(len, |i| t.ip_at(g, i), start, end, insn_size)
        }
        _ => 0..0,
    }
}

/// The first record touching `[start, end]`: its group and index.
pub fn lookup<W: Walk>(
    t: &mut W,
    start: u64,
    end: u64,
    insn_size: u64,
) -> Option<(W::Group, usize)> {
    let mut at = t.first();
    while let Some(g) = at {
        let r = group_hits(t, g, start, end, insn_size);
        if r.start < r.end {
            return Some((g, r.start));
        }
        at = t.next(g);
    }
    None
}

/// What a walk took out of the table.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Released {
    /// Groups taken out of the list.
    pub groups: usize,
    /// Records taken out (those of the groups, or out of their groups).
    pub records: usize,
    /// The first group matched but was kept: the core kernel's groups come
    /// first, so this is a broken table, reported by the caller.
    pub kept_first: bool,
}

/// What a sweep does with a group.
enum Verdict {
    Keep,
    Take,
}

/// Visits every group in list order, telling `visit` whether the group is
/// the first of the list, and takes out those it says to. Returns the
/// number of groups taken out.
fn sweep<T: Table>(t: &mut T, mut visit: impl FnMut(&mut T, T::Group, bool) -> Verdict) -> usize {
    let mut taken = 0usize;
    let mut prev = None;
    let mut at = t.first();
    while let Some(g) = at {
        let next = t.next(g);
        match visit(t, g, prev.is_none()) {
            Verdict::Take => {
                t.take(prev, g);
                taken = taken.saturating_add(1);
            }
            Verdict::Keep => prev = Some(g),
        }
        at = next;
    }
    taken
}

/// Takes out every group whose first record `belongs` (a module's groups
/// when it goes), except the first group of the table.
pub fn take_groups<T: Table>(t: &mut T, mut belongs: impl FnMut(u64) -> bool) -> Released {
    let mut out = Released::default();
    out.groups = sweep(t, |t, g, first| {
        let len = t.len(g);
        if len == 0 || !belongs(t.ip_at(g, 0)) {
            return Verdict::Keep;
        }
        if first {
            out.kept_first = true;
            return Verdict::Keep;
        }
        out.records = out.records.saturating_add(len);
        Verdict::Take
    });
    out
}

/// Takes the records touching `[start, end]` out of their groups (freed
/// init text), calling `each(group, index)` on each first; groups left
/// empty are taken out of the list.
pub fn take_records<T: Table>(
    t: &mut T,
    start: u64,
    end: u64,
    insn_size: u64,
    mut each: impl FnMut(&mut T, T::Group, usize),
) -> Released {
    let mut out = Released::default();
    out.groups = sweep(t, |t, g, _| {
        let len = t.len(g);
        let hit = group_hits(t, g, start, end, insn_size);
        let plan = match removal(len, hit.clone()) {
            Some(plan) if plan.len < len => plan,
            _ => return Verdict::Keep,
        };
        for i in hit {
            each(t, g, i);
        }
        t.shrink(g, plan);
        out.records = out.records.saturating_add(len - plan.len);
        if plan.len == 0 {
            Verdict::Take
        } else {
            Verdict::Keep
        }
    });
    out
}
