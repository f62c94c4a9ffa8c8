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
//! - the architecture turns an entry into the patch-site address; a site
//!   it cannot use (arm64: a function that lost its alignment, so the ops
//!   literal before it would not be aligned) is refused;
//! - two entries for one site would make two records that each patch it:
//!   the second is refused.
//!
//! A refused entry is set to zero in the list, which the kernel's loop
//! skips as padding, so no record is ever made for it.

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

/// The call-site list, in place.
pub trait Locs {
    /// Number of entries.
    fn len(&self) -> usize;
    /// Whether the list has no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Entry `i` (`None` past the end).
    fn get(&self, i: usize) -> Option<u64>;
    /// Sets entry `i` to `value` (zero: no record; else the site's
    /// patch-site address).
    fn set(&mut self, i: usize, value: u64);
    /// Sorts the entries in ascending order.
    fn sort(&mut self);
}

/// What the checks need from the kernel.
pub trait Text {
    /// The list belongs to a module (not the core kernel).
    fn module(&self) -> bool;
    /// `addr` is in the text of the core kernel (or its init text), or of
    /// the module.
    fn in_text(&mut self, addr: u64) -> bool;
    /// The patch-site address of a list entry (`ftrace_call_adjust()`),
    /// `None` when the architecture cannot patch it.
    fn adjust(&mut self, addr: u64) -> Option<u64>;
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

/// Whether the list is in ascending order.
fn sorted<L: Locs>(locs: &L) -> bool {
    let mut prev = 0u64;
    for i in 0..locs.len() {
        match locs.get(i) {
            Some(a) if a >= prev => prev = a,
            Some(_) => return false,
            None => break,
        }
    }
    true
}

/// Why entry `addr` is skipped, given the previous kept site.
fn verdict<T: Text>(text: &mut T, addr: u64, prev: Option<u64>) -> Result<u64, Skip> {
    if addr == 0 {
        return Err(Skip::Padding);
    }
    if !text.in_text(addr) {
        return Err(if text.module() {
            Skip::OutOfText
        } else {
            Skip::WeakLeftover
        });
    }
    let site = text.adjust(addr).ok_or(Skip::Misaligned)?;
    if prev == Some(site) {
        return Err(Skip::Duplicate);
    }
    Ok(site)
}

/// Checks the list, sorts it if needed, zeroes every entry that must not
/// become a record and turns every kept entry into its patch-site address
/// (`ftrace_call_adjust()`, asked once per entry), so that the records are
/// made from the list as it is.
pub fn scan<L: Locs, T: Text>(locs: &mut L, text: &mut T) -> Report {
    let mut report = Report::default();
    if !sorted(locs) {
        report.unsorted = true;
        locs.sort();
    }
    let mut prev = None;
    for i in 0..locs.len() {
        let Some(addr) = locs.get(i) else {
            break;
        };
        report.total = report.total.saturating_add(1);
        match verdict(text, addr, prev) {
            Ok(site) => {
                prev = Some(site);
                report.kept = report.kept.saturating_add(1);
                if site != addr {
                    locs.set(i, site);
                }
            }
            Err(skip) => {
                report.count(skip, addr);
                if addr != 0 {
                    locs.set(i, 0);
                }
            }
        }
    }
    report
}
