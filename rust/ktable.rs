// SPDX-License-Identifier: GPL-2.0

//! The record table in the kernel: the list of page groups
//! (`struct ftrace_page`) that holds every call-site record.
//!
//! A leaf module with `unsafe` code (raw record access). The rules (group
//! sizes, bisection, removal) are `rfcore::pages`; the list check before a
//! table is built is `rfcore::table`. The C side keeps the list heads
//! (`ftrace_pages_start`, `ftrace_pages`), allocates and frees the groups
//! (`ftrace_c_group_alloc()`, which also keeps the page counts that tracefs
//! shows) and waits for RCU readers before groups taken out are freed.
//!
//! Readers (`ftrace_location()` and friends) walk the table under RCU
//! without `ftrace_lock`, so every change made here keeps the list walkable
//! at each step: a new chain is filled before it is handed back to be
//! linked, a group is unlinked with one pointer store, and records taken
//! out of a group are moved down before its length shrinks.

use core::ptr::{
    self,
    NonNull, //
};

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_ulong,
        c_void, //
    }, //
};

use crate::{
    kenv::{
        c_word,
        word,
        KernelText, //
    },
    rfcore::{
        pages::{
            self,
            Geometry,
            Removal,
            Table,
            Walk, //
        },
        table::Text,
    },
};

/// `struct ftrace_page` of `kernel/trace/ftrace.c`, which has no header:
/// one group of `2^order` pages holding `index` records. The C side
/// asserts the same offsets (patch 0008).
#[repr(C)]
pub struct FtracePage {
    next: *mut FtracePage,
    records: *mut bindings::dyn_ftrace,
    index: c_int,
    order: c_int,
}

const _: () = {
    use core::mem::{
        offset_of,
        size_of, //
    };
    assert!(offset_of!(FtracePage, next) == 0);
    assert!(offset_of!(FtracePage, records) == size_of::<usize>());
    assert!(offset_of!(FtracePage, index) == 2 * size_of::<usize>());
    assert!(offset_of!(FtracePage, order) == 2 * size_of::<usize>() + size_of::<c_int>());
    assert!(size_of::<FtracePage>() == 3 * size_of::<usize>());
};

/// The size of a patch site (`MCOUNT_INSN_SIZE`, asserted by the shim): a
/// record covers `[ip, ip + INSN_SIZE)`.
pub(crate) const INSN_SIZE: u64 = if cfg!(CONFIG_X86_64) { 5 } else { 4 };

// `struct dyn_arch_ftrace` is empty (zero-sized in GNU C and in the
// bindings), as in `kenv`: pointers to records and groups are fine.
#[allow(improper_ctypes)]
extern "C" {
    fn ftrace_c_group_alloc(order: c_int) -> *mut FtracePage;
    fn ftrace_c_free_groups(pages: *mut FtracePage);
    fn rftrace_shim_max_order() -> c_int;
    fn rftrace_shim_within_module(module: *mut bindings::module, addr: c_ulong) -> bool;
    /// The C core's lookup (shadow mode and KUnit).
    pub(crate) fn ftrace_c_lookup_rec(start: c_ulong, end: c_ulong) -> *mut bindings::dyn_ftrace;
    /// The head of the table (KUnit).
    pub(crate) fn ftrace_c_pages_start() -> *mut FtracePage;
}

/// The kernel's group shape.
pub(crate) fn geometry() -> Geometry {
    // SAFETY: returns a constant.
    let max = unsafe { rftrace_shim_max_order() };
    Geometry {
        entry_size: core::mem::size_of::<bindings::dyn_ftrace>(),
        page_size: kernel::page::PAGE_SIZE,
        max_order: u32::try_from(max).unwrap_or(0),
    }
}

/// A group of the table.
///
/// # Invariants
///
/// The pointer is to a live group whose first `index` records are
/// initialised, and the holder runs where the group cannot be freed: under
/// `ftrace_lock` (which also makes it the only writer), in an RCU
/// read-side section, or on a group nobody else can see yet.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Group(NonNull<FtracePage>);

impl Group {
    /// # Safety
    ///
    /// `ptr` is null or a group as the type invariants require, for as long
    /// as the `Group` is used.
    pub(crate) unsafe fn from_raw(ptr: *mut FtracePage) -> Option<Self> {
        NonNull::new(ptr).map(Group)
    }

    fn as_ptr(self) -> *mut FtracePage {
        self.0.as_ptr()
    }

    /// The number of records in the group.
    pub(crate) fn len(self) -> usize {
        // SAFETY: a live group (type invariants); a plain read, as C's.
        let index = unsafe { ptr::addr_of!((*self.as_ptr()).index).read() };
        usize::try_from(index).unwrap_or(0)
    }

    /// The next group, or null. Read once (`READ_ONCE()`): groups are
    /// published with a release store after they are filled, and the
    /// loads through this pointer depend on it.
    pub(crate) fn next(self) -> *mut FtracePage {
        // SAFETY: as in `len()`.
        unsafe { ptr::addr_of!((*self.as_ptr()).next).read_volatile() }
    }

    fn order(self) -> u32 {
        // SAFETY: as in `len()`.
        let order = unsafe { ptr::addr_of!((*self.as_ptr()).order).read() };
        u32::try_from(order).unwrap_or(0)
    }

    /// Record `i`, or null if `i` is not below `len`.
    pub(crate) fn rec(self, len: usize, i: usize) -> *mut bindings::dyn_ftrace {
        if i >= len {
            return ptr::null_mut();
        }
        // SAFETY: as in `len()`; `i < len <= index`, within the group.
        unsafe { ptr::addr_of!((*self.as_ptr()).records).read().add(i) }
    }

    /// The address of record `i` (`u64::MAX` if `i` is not below `len`).
    pub(crate) fn ip_at(self, len: usize, i: usize) -> u64 {
        let rec = self.rec(len, i);
        if rec.is_null() {
            return u64::MAX;
        }
        // SAFETY: `rec` is an initialised record of a live group (type
        // invariants, `rec()`).
        word(unsafe { ptr::addr_of!((*rec).ip).read() })
    }

    fn set_len(self, len: usize) {
        let index = c_int::try_from(len).unwrap_or(0);
        // SAFETY: a live group; writers hold ftrace_lock or own the group
        // (type invariants).
        unsafe { ptr::addr_of_mut!((*self.as_ptr()).index).write(index) };
    }

    fn set_next(self, next: *mut FtracePage) {
        // SAFETY: as in `set_len()`.
        unsafe { ptr::addr_of_mut!((*self.as_ptr()).next).write(next) };
    }
}

/// The table's groups, reached through the link to the first one.
///
/// `M` is what the holder may do besides reading: `()` for a reader,
/// [`Writer`] for the owner, which takes groups and records out.
///
/// # Invariants
///
/// `head` is valid for reads, and every group reachable from it is live
/// for as long as the walk is used (an RCU read-side section,
/// `ftrace_lock`, or a private chain). With [`Writer`], see its invariants.
struct Groups<M> {
    head: *mut *mut FtracePage,
    mode: M,
}

impl<M> Walk for Groups<M> {
    type Group = Group;

    fn first(&mut self) -> Option<Group> {
        // SAFETY: `head` is readable and reachable groups are live (type
        // invariants).
        unsafe { Group::from_raw(self.head.read()) }
    }

    fn next(&mut self, g: Group) -> Option<Group> {
        // SAFETY: as in `first()`.
        unsafe { Group::from_raw(g.next()) }
    }

    fn len(&mut self, g: Group) -> usize {
        g.len()
    }

    fn ip_at(&mut self, g: Group, i: usize) -> u64 {
        g.ip_at(g.len(), i)
    }
}

/// The first record touching `[start, end]`, or null.
///
/// # Safety
///
/// `head` is the head of the table (or of a chain of groups nobody frees
/// meanwhile), and the caller is in an RCU read-side section or holds
/// `ftrace_lock`.
pub(crate) unsafe fn lookup(
    head: *mut FtracePage,
    start: u64,
    end: u64,
) -> *mut bindings::dyn_ftrace {
    let mut first = head;
    // The type invariants of `Groups` are the caller's contract.
    let mut walk = Groups {
        head: &mut first,
        mode: (),
    };
    match pages::lookup(&mut walk, start, end, INSN_SIZE) {
        Some((g, i)) => g.rec(g.len(), i),
        None => ptr::null_mut(),
    }
}

/// Groups allocated for a new table part, freed on drop unless taken.
struct Chain {
    first: *mut FtracePage,
    last: *mut FtracePage,
}

impl Chain {
    fn push(&mut self, g: Group) {
        // SAFETY: `last` is null or a group of this chain, owned by us.
        match unsafe { Group::from_raw(self.last) } {
            Some(last) => last.set_next(g.as_ptr()),
            None => self.first = g.as_ptr(),
        }
        self.last = g.as_ptr();
    }

    fn take(mut self) -> (*mut FtracePage, *mut FtracePage) {
        let taken = (self.first, self.last);
        self.first = ptr::null_mut();
        self.last = ptr::null_mut();
        taken
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        if !self.first.is_null() {
            // SAFETY: the groups were made by `ftrace_c_group_alloc()`,
            // linked through `next`, and nobody else has seen them.
            unsafe { ftrace_c_free_groups(self.first) };
        }
    }
}

/// Ends the chain of groups taken out and frees them, as the C side does
/// after the grace period.
///
/// # Safety
///
/// Nobody can reach the groups any more.
#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
pub(crate) unsafe fn free_taken(taken: Taken) {
    // SAFETY: the function's contract; the groups are ours.
    if let Some(last) = unsafe { Group::from_raw(taken.last) } {
        last.set_next(ptr::null_mut());
    }
    if !taken.first.is_null() {
        // SAFETY: the function's contract.
        unsafe { ftrace_c_free_groups(taken.first) };
    }
}

/// A new part of the table, not linked anywhere yet.
pub(crate) struct Built {
    pub(crate) first: *mut FtracePage,
    pub(crate) last: *mut FtracePage,
    pub(crate) pages: usize,
    pub(crate) records: usize,
}

/// Why a table part could not be built.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BuildError {
    /// No memory for a group, even of order 0.
    NoMemory,
    /// The groups did not hold the records counted (the list changed).
    Inconsistent,
}

/// Makes the records of the checked call-site list `[start, end)` of
/// `module` (null: the core kernel) in new groups: one record for each of
/// its `count` non-zero entries (the sites `rfcore::table::scan()` kept),
/// moved to its patch site by the architecture, in list order.
///
/// # Safety
///
/// `[start, end)` is the aligned call-site list of `module` (or of the
/// core kernel), already checked by `rfcore::table::scan()` (which zeroes
/// every entry that must not become a record and counts the others as
/// `kept`), which nobody changes during the call, and `module` is null or
/// the module being loaded.
pub(crate) unsafe fn build(
    module: *mut bindings::module,
    start: *const c_ulong,
    end: *const c_ulong,
    count: usize,
) -> Result<Built, BuildError> {
    let bytes = (end as usize).saturating_sub(start as usize);
    let len = bytes / core::mem::size_of::<c_ulong>();
    let none = Built {
        first: ptr::null_mut(),
        last: ptr::null_mut(),
        pages: 0,
        records: 0,
    };
    if start.is_null() || len == 0 || count == 0 {
        return Ok(none);
    }
    // SAFETY: by the function's contract the range is a valid, aligned
    // array of `len` words that nobody writes during the call.
    let list = unsafe { core::slice::from_raw_parts(start, len) };
    let mut text = KernelText(module);

    let geo = geometry();
    let mut chain = Chain {
        first: ptr::null_mut(),
        last: ptr::null_mut(),
    };
    let (mut remaining, mut nr_pages) = (count, 0usize);
    while remaining > 0 {
        let mut order = geo.first_order(remaining);
        let group = loop {
            let order_c = c_int::try_from(order).map_err(|_| BuildError::NoMemory)?;
            // SAFETY: allocates and counts a zeroed group; nothing else.
            let pg = unsafe { ftrace_c_group_alloc(order_c) };
            // SAFETY: a fresh group, only ours.
            if let Some(g) = unsafe { Group::from_raw(pg) } {
                break g;
            }
            order = order.checked_sub(1).ok_or(BuildError::NoMemory)?;
        };
        chain.push(group);
        let cap = geo.entries(order).ok_or(BuildError::Inconsistent)?;
        remaining = remaining.saturating_sub(cap);
        nr_pages = nr_pages.saturating_add(1usize << order.min(usize::BITS - 1));
    }

    // SAFETY: the chain's first group, ours.
    let mut group = unsafe { Group::from_raw(chain.first) }.ok_or(BuildError::Inconsistent)?;
    let mut cap = geo.entries(group.order()).ok_or(BuildError::Inconsistent)?;
    let mut filled = 0usize;
    let mut made = 0usize;
    for &entry in list {
        let addr = word(entry);
        if addr == 0 {
            continue;
        }
        // The scan kept the entry, so the architecture can patch it.
        let site = text.adjust(addr).ok_or(BuildError::Inconsistent)?;
        if filled == cap {
            group.set_len(filled);
            // SAFETY: the next group of our chain (or null).
            group = unsafe { Group::from_raw(group.next()) }.ok_or(BuildError::Inconsistent)?;
            cap = geo.entries(group.order()).ok_or(BuildError::Inconsistent)?;
            filled = 0;
        }
        // SAFETY: `filled < cap`, and the group's pages hold `cap` records
        // (`ftrace_c_group_alloc()` of this order); the group is ours.
        unsafe {
            let rec = ptr::addr_of!((*group.as_ptr()).records).read().add(filled);
            rec.write(bindings::dyn_ftrace {
                ip: c_word(site),
                flags: 0,
                ..Default::default()
            });
        }
        filled += 1;
        made += 1;
    }
    group.set_len(filled);
    if made != count || !group.next().is_null() {
        return Err(BuildError::Inconsistent);
    }
    let (first, last) = chain.take();
    Ok(Built {
        first,
        last,
        pages: nr_pages,
        records: made,
    })
}

/// What the owner of the table (under `ftrace_lock`) keeps while it takes
/// groups and records out.
///
/// Groups taken out keep their `next` link until readers are done with
/// them: a reader standing on one goes on into the table as if the group
/// were still there. A module's groups, and the groups a freed range
/// empties, are consecutive in the list, so they come out as one run whose
/// links already chain them; the caller ends the run (`last->next = NULL`)
/// after the grace period and frees it. A group that is not next to the
/// run (never seen: it would take a part whose groups are not
/// consecutive) is put in front of the run at once, as the C core does
/// with every group.
///
/// # Invariants
///
/// In a `Groups<Writer>`, `head` and `tail` are `&ftrace_pages_start` and
/// `&ftrace_pages` (or a private chain's), and the holder has
/// `ftrace_lock` (or owns the chain): it is the only writer, and every
/// group on the list is live.
struct Writer {
    tail: *mut *mut FtracePage,
    /// The first group of the chain of groups taken out.
    taken: *mut FtracePage,
    /// The last group of the run (its `next` still points into the table).
    run_last: Option<Group>,
    /// Groups taken out that were not next to the run.
    strays: usize,
}

impl Table for Groups<Writer> {
    fn take(&mut self, prev: Option<Group>, g: Group) {
        let link = match prev {
            // SAFETY: `prev` is a live group on the list (type invariants).
            Some(p) => unsafe { ptr::addr_of_mut!((*p.as_ptr()).next) },
            None => self.head,
        };
        let w = &mut self.mode;
        // Before the link changes: does `g` follow the run directly?
        let adjacent = w.run_last.is_some_and(|last| last.next() == g.as_ptr());
        // SAFETY: `link` and `tail` are valid and we are the only writer
        // (type invariants). One store takes the group off the list for
        // new readers; `g`'s own link is left for those already on it.
        unsafe {
            ptr::write_volatile(link, g.next());
            if w.tail.read() == g.as_ptr() {
                w.tail.write(prev.map_or(ptr::null_mut(), |p| p.as_ptr()));
            }
        }
        match w.run_last {
            None => {
                w.taken = g.as_ptr();
                w.run_last = Some(g);
            }
            Some(_) if adjacent => w.run_last = Some(g),
            Some(_) => {
                g.set_next(w.taken);
                w.taken = g.as_ptr();
                w.strays = w.strays.saturating_add(1);
            }
        }
    }

    fn shrink(&mut self, g: Group, plan: Removal) {
        let len = g.len();
        // `removal()` made the plan for this group's `len`; check it again
        // before moving anything.
        let within = plan.from.checked_add(plan.count) == Some(len) && plan.to <= plan.from;
        if !within {
            return;
        }
        // SAFETY: the plan moves records within the first `len` of the
        // group, overlapping as memmove allows; we are the only writer
        // (type invariants).
        unsafe {
            let recs = ptr::addr_of!((*g.as_ptr()).records).read();
            ptr::copy(recs.add(plan.from), recs.add(plan.to), plan.count);
        }
        g.set_len(plan.len);
    }
}

/// Groups taken out of the table: `first` to `last` through `next`, but
/// `last`'s `next` still points into the table. After an RCU grace period
/// the caller sets it to null and frees the chain.
pub(crate) struct Taken {
    pub(crate) first: *mut FtracePage,
    pub(crate) last: *mut FtracePage,
    pub(crate) records: usize,
}

impl Groups<Writer> {
    /// # Safety
    ///
    /// As the type invariants require, for as long as the walk is used.
    unsafe fn owner(head: *mut *mut FtracePage, tail: *mut *mut FtracePage) -> Self {
        Groups {
            head,
            mode: Writer {
                tail,
                taken: ptr::null_mut(),
                run_last: None,
                strays: 0,
            },
        }
    }

    fn into_taken(self, records: usize) -> Taken {
        let w = self.mode;
        if w.strays > 0 {
            kernel::pr_warn!(
                "record table: {} groups taken out were not next to the others\n",
                w.strays
            );
        }
        Taken {
            first: w.taken,
            last: w.run_last.map_or(ptr::null_mut(), |g| g.as_ptr()),
            records,
        }
    }
}

/// Takes the groups of `module` (those whose first record is in it) out
/// of the table, to be freed after an RCU grace period.
///
/// # Safety
///
/// `head` and `tail` are `&ftrace_pages_start` and `&ftrace_pages`, the
/// caller holds `ftrace_lock`, and `module` is the module going away.
pub(crate) unsafe fn unlink_module(
    head: *mut *mut FtracePage,
    tail: *mut *mut FtracePage,
    module: *mut bindings::module,
) -> Taken {
    // SAFETY: the function's contract is the type invariants.
    let mut table = unsafe { Groups::owner(head, tail) };
    let out = pages::take_groups(&mut table, |ip| {
        // SAFETY: reads the module's layout; the module is alive.
        unsafe { rftrace_shim_within_module(module, c_word(ip)) }
    });
    if out.kept_first {
        kernel::pr_err!("record table: the first group belongs to a module; kept\n");
    }
    table.into_taken(out.records)
}

/// A function the C side calls on each record taken out by
/// [`remove_range`], before it goes.
pub(crate) type EachRec = unsafe extern "C" fn(*mut c_void, *mut bindings::dyn_ftrace);

/// Takes the records touching `[start, end]` out of the table (freed init
/// text), calling `each` on each first. Groups left empty are taken out,
/// to be freed after an RCU grace period.
///
/// # Safety
///
/// As for [`unlink_module`]; `each`, if given, may be called with `data`
/// and any record of the table under ftrace_lock.
pub(crate) unsafe fn remove_range(
    head: *mut *mut FtracePage,
    tail: *mut *mut FtracePage,
    start: u64,
    end: u64,
    each: Option<EachRec>,
    data: *mut c_void,
) -> Taken {
    // SAFETY: the function's contract is the type invariants.
    let mut table = unsafe { Groups::owner(head, tail) };
    let out = pages::take_records(&mut table, start, end, INSN_SIZE, |_, g, i| {
        if let Some(each) = each {
            // SAFETY: a record of the table, under ftrace_lock; the
            // callback's contract is the caller's.
            unsafe { each(data, g.rec(g.len(), i)) };
        }
    });
    table.into_taken(out.records)
}
