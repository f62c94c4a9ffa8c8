// SPDX-License-Identifier: GPL-2.0

//! Checking the call-site list before the record table is built from it.
//!
//! At boot and at module load the kernel turns the list the compiler and
//! the build recorded (`__mcount_loc`, one address per traceable function)
//! into records. The Rust core looks at the whole list first and keeps
//! only sites it is willing to patch:
//!
//! - the list must be in ascending order (the record table is searched by
//!   bisection): an unsorted list is sorted, and that is reported;
//! - zero entries are padding between the sections of different objects;
//! - for the core kernel, an address outside kernel text is the leftover
//!   of a weak function the linker dropped (its entry was zeroed and then
//!   relocated); for a module, an address outside the module's text is a
//!   corrupt entry;
//! - the architecture turns an entry into the patch-site address (a pure
//!   function of the entry, `Arch::call_site`); a site it cannot use (arm64: a function that lost its alignment, so the ops
//!   literal before it would not be aligned) is refused;
//! - two entries for one site would make two records that each patch it:
//!   the second is refused.
//!
//! A refused entry is set to zero in the list, which the record build
//! skips as padding, so no record is ever made for it.
//!
//! This is the boot's hot loop (some 20,000 entries): the text ranges are
//! fetched once per list ([`Text`]), the order is checked in the same pass
//! as the entries, and only refusals (rare) leave the loop.

/// Why an entry of the call-site list is not made into a record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Skip {
    /// A zero entry (padding between sections).
    Padding,
    /// Outside kernel text in the core kernel: a dropped weak function.
    WeakLeftover,
    /// Outside the module's text.
    OutOfText,
    /// The architecture cannot patch this site (misaligned function).
    Misaligned,
    /// The same site as the entry before it.
    Duplicate,
}

impl Skip {
    /// Whether the kernel's own C code skips such an entry too (it does
    /// for padding and weak leftovers, and for nothing else).
    pub const fn c_skips(self) -> bool {
        matches!(self, Skip::Padding | Skip::WeakLeftover)
    }
}

/// A range of text, `[start, end)`: the core kernel's text or init text, or
/// a module's `MOD_TEXT` or `MOD_INIT_TEXT`. An empty range holds nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Span {
    start: u64,
    len: u64,
}

impl Span {
    /// The range `[start, end)` (empty if `end <= start`). Address 0 is
    /// in no range (a zero entry is padding): a range from 0 starts at 1.
    pub const fn new(start: u64, end: u64) -> Self {
        let start = if start == 0 { 1 } else { start };
        Span {
            start,
            len: end.saturating_sub(start),
        }
    }

    /// Whether `addr` is in the range (one subtraction and one compare).
    #[inline]
    pub const fn contains(self, addr: u64) -> bool {
        // Below `start` the difference wraps to 2^64 - (start - addr),
        // more than `len`, since `start + len` (`end`) fits in a u64.
        addr.wrapping_sub(self.start) < self.len
    }
}

/// The text a call-site list may point into, fetched once per list.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Text {
    /// The list belongs to a module (not the core kernel).
    pub module: bool,
    /// The text ranges: the core kernel's text and init text, or the
    /// module's text and init text.
    pub spans: [Span; 2],
}

impl Text {
    /// Whether `addr` is in one of the text ranges.
    #[inline]
    pub const fn contains(&self, addr: u64) -> bool {
        self.spans[0].contains(addr) || self.spans[1].contains(addr)
    }
}

/// How many entries of each kind a list had, and the first refusals.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Report {
    /// Entries in the list.
    pub total: u64,
    /// Entries kept (records will be made for them).
    pub kept: u64,
    /// The list was not sorted (and has been sorted).
    pub unsorted: bool,
    /// Zero entries.
    pub padding: u64,
    /// Dropped weak functions (core kernel).
    pub weak: u64,
    /// Outside the module's text.
    pub out_of_text: u64,
    /// Misaligned sites.
    pub misaligned: u64,
    /// Duplicate sites.
    pub duplicate: u64,
    /// The first refusals the kernel's C code would not have made, with
    /// the entry's address (0 when unused).
    pub first: [(u64, Option<Skip>); 4],
}

impl Report {
    fn count(&mut self, skip: Skip, addr: u64) {
        let n = match skip {
            Skip::Padding => &mut self.padding,
            Skip::WeakLeftover => &mut self.weak,
            Skip::OutOfText => &mut self.out_of_text,
            Skip::Misaligned => &mut self.misaligned,
            Skip::Duplicate => &mut self.duplicate,
        };
        *n = n.saturating_add(1);
        if !skip.c_skips() {
            if let Some(slot) = self.first.iter_mut().find(|s| s.1.is_none()) {
                *slot = (addr, Some(skip));
            }
        }
    }

    /// Entries refused that the kernel's C code would have made records of.
    pub fn refused(&self) -> u64 {
        self.out_of_text
            .saturating_add(self.misaligned)
            .saturating_add(self.duplicate)
    }
}

/// Why entry `addr` is not made into a record: the cold half of the
/// scan, which also counts it.
#[cold]
#[inline(never)]
fn refuse(report: &mut Report, text: &Text, addr: u64, site: Option<u64>) -> Skip {
    let skip = if addr == 0 {
        Skip::Padding
    } else if !text.contains(addr) {
        if text.module {
            Skip::OutOfText
        } else {
            Skip::WeakLeftover
        }
    } else if site.is_none() {
        Skip::Misaligned
    } else {
        Skip::Duplicate
    };
    report.count(skip, addr);
    skip
}

/// What a pass keeps while it walks a list.
struct Walk {
    /// The last kept site (0: none yet; no site is 0).
    last: u64,
    /// Whether an entry is to change (for a pass that does not write).
    writes: bool,
    /// The text range of the last entry in the text: in a sorted list the
    /// entries of one range are next to each other.
    cur: Span,
}

/// Every entry [`pass`] does not settle inline (an entry outside the
/// current text range, padding, a refusal, a site not above the last kept
/// one): the site the entry is to become, or 0 if it is refused (and then
/// counted). An entry in the other text range makes it the current one.
#[inline(never)]
fn other(
    report: &mut Report,
    text: &Text,
    site: &impl Fn(u64) -> Option<u64>,
    addr: u64,
    walk: &mut Walk,
) -> u64 {
    // Address 0 is in no text range: padding is refused here.
    let s = match text.spans.iter().find(|span| span.contains(addr)) {
        Some(span) => {
            walk.cur = *span;
            site(addr)
        }
        None => None,
    };
    match s {
        Some(s) if s != 0 && s != walk.last => {
            walk.last = s;
            s
        }
        _ => {
            refuse(report, text, addr, s.filter(|&s| s != 0));
            0
        }
    }
}

/// One pass over a list: checks every entry and counts the refusals; with
/// `WRITE`, also zeroes every refused entry that is not zero yet and moves
/// every kept entry to its patch site. Stops at the first entry below the
/// one before it (`Err(())`: the list is not sorted), having written
/// nothing if `WRITE` is false. Returns whether a later pass has anything
/// to write (with `WRITE` false).
///
/// `site` is the architecture's patch-site address of an entry
/// (`ftrace_call_adjust()`, [`crate::rfcore::update::Arch::call_site`]),
/// `None` (or zero) when the site cannot be patched.
///
/// The common case is settled inline: an entry in the text range of the
/// entry before (in a sorted list, only the first entry of each range is
/// not) whose site is above the last kept one (so neither refused, 0, nor
/// a duplicate); everything else is [`other`]'s.
fn pass<const WRITE: bool>(
    locs: &mut [u64],
    text: &Text,
    site: &impl Fn(u64) -> Option<u64>,
    report: &mut Report,
) -> Result<bool, ()> {
    let mut walk = Walk {
        last: 0,
        writes: false,
        cur: text.spans[0],
    };
    let mut prev = 0u64;
    for entry in locs.iter_mut() {
        let addr = *entry;
        if addr < prev {
            return Err(());
        }
        prev = addr;
        let mut new = 0;
        if walk.cur.contains(addr) {
            new = site(addr).unwrap_or(0);
        }
        if new > walk.last {
            walk.last = new;
        } else {
            new = other(report, text, site, addr, &mut walk);
        }
        if new != addr {
            walk.writes = true;
            if WRITE {
                *entry = new;
            }
        }
    }
    Ok(walk.writes)
}

/// Sorts `v` in ascending order, in place: a heapsort, with no
/// allocation, no recursion and no panic path (the core library's sorts
/// keep theirs, for comparisons that are not a total order, which `u64`'s
/// is). O(n log n) in every case; it runs only for a list that the build
/// did not sort.
pub fn sort(v: &mut [u64]) {
    let n = v.len();
    // A max-heap: every parent at least as large as its children.
    let mut start = n / 2;
    while start > 0 {
        start -= 1;
        sift_down(v, start, n);
    }
    // The largest of the heap to its end, which then shrinks by one.
    let mut end = n;
    while end > 1 {
        end -= 1;
        swap(v, 0, end);
        sift_down(v, 0, end);
    }
}

/// Moves `v[root]` down the heap `v[..end]` until its children are not
/// larger.
fn sift_down(v: &mut [u64], mut root: usize, end: usize) {
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    loop {
        let Some(left) = root.checked_mul(2).and_then(|i| i.checked_add(1)) else {
            return;
        };
        if left >= end {
            return;
        }
        let right = left.saturating_add(1);
        let child = if right < end && at(v, right) > at(v, left) {
            right
        } else {
            left
        };
        if at(v, child) <= at(v, root) {
            return;
        }
        swap(v, root, child);
        root = child;
    }
}

/// Exchanges `v[i]` and `v[j]`; nothing when either is out of range.
fn swap(v: &mut [u64], i: usize, j: usize) {
    if let (Some(&a), Some(&b)) = (v.get(i), v.get(j)) {
        if let Some(x) = v.get_mut(i) {
            *x = b;
        }
        if let Some(y) = v.get_mut(j) {
            *y = a;
        }
    }
}

/// Checks the list, sorts it if needed, zeroes every entry that must not
/// become a record and turns every kept entry into its patch-site address
/// (`site`, asked once per entry and pass), so that the records are made
/// from the list as it is.
///
/// The order is checked in the same pass as the entries: the first pass
/// writes nothing, so an unsorted list is sorted and checked again from
/// the start; a second pass writes, only if there is something to write
/// (a refused entry that is not zero, or a patch site that is not the
/// entry itself, as on arm64).
pub fn scan(locs: &mut [u64], text: &Text, site: impl Fn(u64) -> Option<u64>) -> Report {
    let mut report = Report::default();
    let writes = match pass::<false>(locs, text, &site, &mut report) {
        Ok(writes) => writes,
        Err(()) => {
            sort(locs);
            report = Report {
                unsorted: true,
                ..Report::default()
            };
            // Sorted now: the pass cannot stop early.
            pass::<false>(locs, text, &site, &mut report).unwrap_or(true)
        }
    };
    if writes {
        // The same verdicts again (the counts are kept from the first
        // pass), now written.
        let mut again = Report::default();
        let _ = pass::<true>(locs, text, &site, &mut again);
    }
    report.total = u64::try_from(locs.len()).unwrap_or(u64::MAX);
    report.kept = report
        .total
        .saturating_sub(report.padding)
        .saturating_sub(report.weak)
        .saturating_sub(report.refused());
    report
}
