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

use core::{
    marker::PhantomData,
    mem::ManuallyDrop,
    ptr::{
        self,
        NonNull, //
    }, //
};

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_void, //
    }, //
    sync::{
        atomic::{
            atomic_load,
            atomic_store,
            Acquire,
            Atomic,
            Relaxed, //
        },
        rcu, //
    },
};

use crate::{
    kside::abi::{
        c_word,
        word, //
    },
    kside::lock::FtraceLocked,
    kside::module::Module,
    kside::record::Rec,
    rfcore::{
        pages::{
            self,
            Geometry,
            Removal,
            Table,
            Walk, //
        }, //
    },
};

/// `struct ftrace_page` of `kernel/trace/ftrace.c`, which has no header:
/// one group of `2^order` pages holding `index` records. The C side
/// asserts the same offsets (the record-table patch).
///
/// What changes while lockless readers walk the table (`next`, `index`) is
/// atomic (`READ_ONCE()` / `WRITE_ONCE()`; the C side publishes `next`
/// with `smp_store_release()`); `records` and `order` are written once,
/// before the group is published, and never again. So a shared reference
/// to a live group is sound.
#[repr(C)]
pub(crate) struct FtracePage {
    next: Atomic<*mut FtracePage>,
    records: *mut bindings::dyn_ftrace,
    index: Atomic<c_int>,
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

/// The C side's group pointer as this module's view of the group.
pub(crate) fn from_c(pg: *mut bindings::ftrace_page) -> *mut FtracePage {
    pg.cast::<FtracePage>()
}

/// This module's group pointer as the C side's.
pub(crate) fn to_c(pg: *mut FtracePage) -> *mut bindings::ftrace_page {
    pg.cast::<bindings::ftrace_page>()
}

/// The kernel's group shape.
pub(crate) fn geometry() -> Geometry {
    let max = crate::kside::shim::rftrace_shim_max_order();
    Geometry {
        entry_size: core::mem::size_of::<bindings::dyn_ftrace>(),
        page_size: kernel::page::PAGE_SIZE,
        max_order: u32::try_from(max).unwrap_or(0),
    }
}

mod write {
    /// The right to write a group's length, its link to the next group and
    /// its records ([`super::Group`]'s writers take it): held by the
    /// table's writer under `ftrace_lock` and by a chain of groups nobody
    /// else sees, never by a reader's handle.
    ///
    /// # Invariants
    ///
    /// Its holder is the only writer of every group it writes with it,
    /// for as long as it holds it.
    pub(super) struct WriteCap(());

    impl WriteCap {
        /// # Safety
        ///
        /// The caller is the only writer of every group it will write with
        /// the capability, for as long as it holds it.
        pub(super) unsafe fn new() -> Self {
            // INVARIANT: the caller's contract.
            WriteCap(())
        }
    }
}
use write::WriteCap;

/// A group of the table, or of a chain of groups, live for `'a`.
///
/// # Invariants
///
/// The pointer is to a live group whose first `index` records are
/// initialised, and neither it nor any group reachable from it through
/// `next` is freed during `'a`: `'a` is an RCU read-side section (groups
/// taken out are freed after a grace period, and keep their link into the
/// table until then), the hold of `ftrace_lock` (which also makes the
/// holder the only writer), or the life of a chain nobody else can see
/// ([`Built`]).
///
/// `rftrace_init_nops()` takes one where its prototype has a `struct
/// ftrace_page *` (`kside::abi`): the header asks the caller for these
/// invariants.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Group<'a>(NonNull<FtracePage>, PhantomData<&'a FtracePage>);

crate::kside::abi::lowered_as!(Option<Group<'static>> => *mut bindings::ftrace_page);

/// An index bound of one group.
///
/// # Invariants
///
/// Not above the capacity of the group that made it ([`Group::bound`]).
#[derive(Clone, Copy)]
struct Bound(usize);

impl<'a> Group<'a> {
    /// # Safety
    ///
    /// `ptr` is null or a group as the type invariants require for `'a`.
    pub(crate) unsafe fn from_raw(ptr: *mut FtracePage) -> Option<Self> {
        NonNull::new(ptr).map(|p| Group(p, PhantomData))
    }

    /// The group after this one, live for the same `'a`.
    pub(crate) fn following(self) -> Option<Group<'a>> {
        // SAFETY: groups reachable from a live group stay live for `'a`
        // (type invariants).
        unsafe { Group::from_raw(self.next()) }
    }

    fn as_ptr(self) -> *mut FtracePage {
        self.0.as_ptr()
    }

    /// The group itself.
    fn page(self) -> &'a FtracePage {
        // SAFETY: a live group for `'a` (type invariants); what others
        // change while it is shared is atomic (`FtracePage`).
        unsafe { self.0.as_ref() }
    }

    /// The number of records in the group, read once (`READ_ONCE()`): the
    /// owner shrinks it under lockless readers.
    pub(crate) fn len(self) -> usize {
        usize::try_from(self.page().index.load(Relaxed)).unwrap_or(0)
    }

    /// The next group, or null, read with acquire: groups are published
    /// with a release store after they are filled.
    pub(crate) fn next(self) -> *mut FtracePage {
        self.page().next.load(Acquire)
    }

    fn order(self) -> u32 {
        u32::try_from(self.page().order).unwrap_or(0)
    }

    /// How many records the group's pages hold.
    fn capacity(self) -> usize {
        let bytes = 1usize
            .checked_shl(self.order())
            .and_then(|pages| pages.checked_mul(kernel::page::PAGE_SIZE))
            .unwrap_or(0);
        bytes / core::mem::size_of::<bindings::dyn_ftrace>()
    }

    /// `len`, or the group's capacity if that is smaller: a bound below
    /// which every index is a record of the group.
    fn bound(self, len: usize) -> Bound {
        Bound(len.min(self.capacity()))
    }

    /// Record `i`, or null if `i` is not below `len`.
    pub(crate) fn rec(self, len: usize, i: usize) -> *mut bindings::dyn_ftrace {
        self.rec_below(self.bound(len), i)
    }

    /// Record `i`, or null if `i` is not below `bound`.
    fn rec_below(self, bound: Bound, i: usize) -> *mut bindings::dyn_ftrace {
        if i >= bound.0 {
            return ptr::null_mut();
        }
        // `i` is below the group's capacity (`Bound`), so the record is
        // within the group's pages (and initialised: records are written
        // before `index` covers them, and records beyond `index` keep the
        // values they had).
        self.page().records.wrapping_add(i)
    }

    /// Record `i` as a handle under `lock`, or `None` if `i` is not below
    /// `len` or the group's capacity.
    pub(crate) fn handle<'l>(self, len: usize, i: usize, lock: &'l FtraceLocked) -> Option<Rec<'l>>
    where
        'a: 'l,
    {
        self.handle_below(self.bound(len), i, lock)
    }

    fn handle_below<'l>(self, bound: Bound, i: usize, lock: &'l FtraceLocked) -> Option<Rec<'l>>
    where
        'a: 'l,
    {
        let rec = self.rec_below(bound, i);
        // SAFETY: `rec_below()` gives null or record `i` of this group,
        // below its capacity, live for `'a`, which outlasts `'l` (type
        // invariants); its writers hold ftrace_lock, which `lock` proves
        // held for `'l`.
        unsafe { Rec::from_raw(rec, lock) }
    }

    /// The first `len` records (no more than the group holds), as handles
    /// under `lock`: for the update pass and the boot's conversion. The
    /// group's capacity is read once, not per record (the boot's hot loop).
    pub(crate) fn handles<'l>(
        self,
        len: usize,
        lock: &'l FtraceLocked,
    ) -> impl Iterator<Item = Rec<'l>> + 'l
    where
        'a: 'l,
    {
        let bound = self.bound(len);
        (0..bound.0).filter_map(move |i| self.handle_below(bound, i, lock))
    }

    /// The address of record `i` (`u64::MAX` if `i` is not below `len`),
    /// read once (`READ_ONCE()`): the owner moves records under lockless
    /// readers.
    pub(crate) fn ip_at(self, len: usize, i: usize) -> u64 {
        let rec = self.rec(len, i);
        if rec.is_null() {
            return u64::MAX;
        }
        // SAFETY: `rec` is a record in a live group (type invariants,
        // `rec()`), aligned; the owner stores `ip` atomically
        // (`move_records()`).
        word(unsafe { atomic_load(ptr::addr_of_mut!((*rec).ip), Relaxed) })
    }

    /// Stores the number of records (`WRITE_ONCE()`). A length that does
    /// not fit the C `int` is refused and the old one kept.
    fn set_len(self, len: usize, _w: &WriteCap) -> bool {
        let Ok(index) = c_int::try_from(len) else {
            kernel::pr_err!("record table: group length {} does not fit\n", len);
            return false;
        };
        // The only writer (`WriteCap`).
        self.page().index.store(index, Relaxed);
        true
    }

    /// Stores the link to the next group (`WRITE_ONCE()`).
    fn set_next(self, next: *mut FtracePage, _w: &WriteCap) {
        self.page().next.store(next, Relaxed);
    }

    /// Moves `count` records from `from` down to `to` (`to <= from`),
    /// first to last, each `ip` with one atomic store, so a lockless
    /// reader sees either record's address in every slot, never a torn
    /// one. The caller stays within the group's length. False, nothing
    /// moved, if the move is not within the group.
    #[must_use = "the length may only change if the records moved"]
    fn move_records(self, from: usize, to: usize, count: usize, _w: &WriteCap) -> bool {
        let end = from.saturating_add(count);
        if to > from || end > self.capacity() {
            return false;
        }
        // The bound once, not per record moved.
        let bound = self.bound(end);
        for k in 0..count {
            let (src, dst) = (
                // k < count, and from + count did not overflow (`end`).
                self.rec_below(bound, from.saturating_add(k)),
                self.rec_below(bound, to.saturating_add(k)),
            );
            if src.is_null() || dst.is_null() {
                // Not reached: both are below `end`, within the capacity.
                return false;
            }
            // SAFETY: both are records of this live group below its
            // capacity (`rec_below()`); we are the only writer (`WriteCap`),
            // and readers load `ip` atomically. `flags` is only read under
            // ftrace_lock, which we hold.
            unsafe {
                let ip = ptr::addr_of!((*src).ip).read();
                let flags = ptr::addr_of!((*src).flags).read();
                atomic_store(ptr::addr_of_mut!((*dst).ip), ip, Relaxed);
                ptr::addr_of_mut!((*dst).flags).write(flags);
            }
        }
        true
    }
}

/// A record of the live table and its position, for a walk of every record
/// under `ftrace_lock` (the update pass): the group's bounds are read once
/// per group, as no record comes or goes while the lock is held.
///
/// # Invariants
///
/// `i < len`, `len` is a [`Bound`] of `group` (no more than it holds),
/// and `rec` is record `i` of `group`.
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'l> {
    group: Group<'l>,
    len: Bound,
    i: usize,
    rec: Rec<'l>,
}

impl<'l> Cursor<'l> {
    /// The first record of the live table.
    pub(crate) fn first(lock: &'l FtraceLocked) -> Option<Self> {
        Self::at(table_first(lock)?, 0, lock)
    }

    /// The record after this one, in table order.
    pub(crate) fn next(self) -> Option<Self> {
        let lock = self.rec.lock();
        match self.i.checked_add(1) {
            Some(i) if i < self.len.0 => Self::make(self.group, self.len, i, lock),
            _ => Self::at(self.group.following()?, 0, lock),
        }
    }

    /// The record.
    pub(crate) fn rec(self) -> Rec<'l> {
        self.rec
    }

    /// Record `i` of `group` or, past its end, the first record of the
    /// groups after it.
    fn at(mut group: Group<'l>, i: usize, lock: &'l FtraceLocked) -> Option<Self> {
        let mut i = i;
        loop {
            let len = group.bound(group.len());
            if i < len.0 {
                return Self::make(group, len, i, lock);
            }
            group = group.following()?;
            i = 0;
        }
    }

    /// The capacity is not computed again per record: the update pass
    /// walks every record of the table.
    fn make(group: Group<'l>, len: Bound, i: usize, lock: &'l FtraceLocked) -> Option<Self> {
        let rec = group.handle_below(len, i, lock)?;
        // INVARIANT: `handle_below()` checked `i` against `len`, a bound of
        // `group`.
        Some(Cursor { group, len, i, rec })
    }
}

/// Every record of the live table, in table order, for a walk under
/// `ftrace_lock` that only reads and stores records (no ops-list walk: the
/// accounting of one ops, the sweep after the last, the IPMODIFY claims).
#[inline(always)]
pub(crate) fn every(lock: &FtraceLocked) -> impl Iterator<Item = Rec<'_>> {
    core::iter::successors(Cursor::first(lock), |at| at.next()).map(Cursor::rec)
}

/// The table's groups, reached through the link to the first one.
///
/// `M` is what the holder may do besides reading: `()` for a reader,
/// [`Writer`] for the owner, which takes groups and records out.
///
/// # Invariants
///
/// `head` is valid for reads and writes, and every group reachable from it
/// is live for `'a` (an RCU read-side section, `ftrace_lock`, or a private
/// chain). With [`Writer`], see its invariants.
struct Groups<'a, M> {
    head: *mut *mut FtracePage,
    mode: M,
    _groups: PhantomData<Group<'a>>,
}

impl<'a, M> Walk for Groups<'a, M> {
    type Group = Group<'a>;

    fn first(&mut self) -> Option<Group<'a>> {
        // SAFETY: `head` is readable and reachable groups are live (type
        // invariants).
        unsafe { Group::from_raw(self.head.read()) }
    }

    fn next(&mut self, g: Group<'a>) -> Option<Group<'a>> {
        g.following()
    }

    fn len(&mut self, g: Group<'a>) -> usize {
        g.len()
    }

    fn ip_at(&mut self, g: Group<'a>, i: usize) -> u64 {
        // The walk read the length once and asks below it; the length is
        // not read again (it may shrink meanwhile): the group's capacity
        // bounds the access.
        g.ip_at(usize::MAX, i)
    }
}

/// What keeps the groups of the live table from being freed while it is
/// borrowed: an RCU read-side section (groups taken out are freed after a
/// grace period) or the hold of `ftrace_lock` (under which they are taken
/// out and freed).
pub(crate) trait KeepsGroups {}

impl KeepsGroups for rcu::Guard {}
impl KeepsGroups for FtraceLocked {}

/// The first group of the live table, for a walk under `_keep`.
pub(crate) fn table_first<K: KeepsGroups>(_keep: &K) -> Option<Group<'_>> {
    // SAFETY: `ftrace_c_pages_start()` reads the head of the table; its
    // groups stay live while `_keep` is borrowed (`KeepsGroups`).
    unsafe { Group::from_raw(from_c(bindings::ftrace_c_pages_start())) }
}

/// The record `ptr` points to, if it is one of the live table: a pointer
/// from C is compared with the groups' bounds before anything is read
/// through it, so a stray or misaligned one is refused, never used.
pub(crate) fn find(ptr: *const bindings::dyn_ftrace, lock: &FtraceLocked) -> Option<Rec<'_>> {
    let size = core::mem::size_of::<bindings::dyn_ftrace>();
    let mut group = table_first(lock);
    while let Some(g) = group {
        // Below the group's first record, the offset wraps to a huge one,
        // which no group holds.
        let offset = (ptr as usize).wrapping_sub(g.page().records as usize);
        // Only the group whose pages hold `ptr` has its length read: this
        // runs once per record the kernel accounts.
        if offset / size < g.bound(usize::MAX).0 {
            // Groups do not overlap: a misaligned pointer, or one past the
            // group's records, is in no other group either.
            if !offset.is_multiple_of(size) {
                return None;
            }
            return g.handle(g.len(), offset / size, lock);
        }
        group = g.following();
    }
    None
}

/// Finds records from their ips, for the walks that visit the functions
/// of a small filter rather than every record: each group's bounds, then
/// a binary search in the group that holds the ip (the table's groups are
/// sorted, `pages::lookup`). It remembers the last record found: the next
/// ip, if it is in the same group and not below, is searched for from
/// there (`pages::gallop`), so ascending ips cost about the logarithm of
/// the distance between them; any other is searched for from that
/// record's group on, then from the first group.
pub(crate) struct Finder<'l> {
    lock: &'l FtraceLocked,
    hint: Option<(Group<'l>, usize)>,
}

impl<'l> Finder<'l> {
    /// A finder over the live table, which `lock` keeps as it is.
    pub(crate) fn new(lock: &'l FtraceLocked) -> Self {
        Finder { lock, hint: None }
    }

    /// The record whose call site is at `ip`.
    pub(crate) fn find(&mut self, ip: u64) -> Option<Rec<'l>> {
        if let Some((g, from)) = self.hint {
            let len = g.len();
            if let Some(i) = pages::gallop(len, from, ip, |i| g.ip_at(len, i)) {
                return self.hit(g, len, i);
            }
            if let Some(found) = self.search(Some(g), ip) {
                return Some(found);
            }
        }
        self.search(table_first(self.lock), ip)
    }

    /// The record at `ip` in the groups from `first` on.
    fn search(&mut self, first: Option<Group<'l>>, ip: u64) -> Option<Rec<'l>> {
        let mut head = first.map_or(ptr::null_mut(), |g| g.as_ptr());
        // INVARIANT: `head` is a local, and the groups from `first` on are
        // live while `lock` is held (`KeepsGroups`).
        let mut walk = Groups {
            head: &mut head,
            mode: (),
            _groups: PhantomData,
        };
        let (g, i) = pages::lookup(&mut walk, ip, ip, INSN_SIZE)?;
        let rec = self.hit(g, g.len(), i)?;
        (rec.ip() == ip).then_some(rec)
    }

    /// Record `i` of `g`, which becomes the last one found.
    fn hit(&mut self, g: Group<'l>, len: usize, i: usize) -> Option<Rec<'l>> {
        let rec = g.handle(len, i, self.lock)?;
        self.hint = Some((g, i));
        Some(rec)
    }
}

/// The first record of the live table touching `[start, end]`, or null.
pub(crate) fn lookup(start: u64, end: u64, rcu: &rcu::Guard) -> *mut bindings::dyn_ftrace {
    lookup_from(table_first(rcu), start, end)
}

/// The first record touching `[start, end]` in the groups from `first` on,
/// or null.
pub(crate) fn lookup_from(
    first: Option<Group<'_>>,
    start: u64,
    end: u64,
) -> *mut bindings::dyn_ftrace {
    let mut head = first.map_or(ptr::null_mut(), |g| g.as_ptr());
    // INVARIANT: `head` is a local, and the groups from `first` on are live
    // while it is used (`Group`).
    let mut walk = Groups {
        head: &mut head,
        mode: (),
        _groups: PhantomData,
    };
    match pages::lookup(&mut walk, start, end, INSN_SIZE) {
        // `i` was below the length the walk read once; the group's
        // capacity bounds it still.
        Some((g, i)) => g.rec(usize::MAX, i),
        None => ptr::null_mut(),
    }
}

/// A chain of groups nobody else can see: a new part of the table before
/// it is handed to C to be linked in, or groups taken out of such a chain.
/// Freed on drop.
///
/// # Invariants
///
/// `first` to `last` are groups made by `ftrace_c_group_alloc()`, linked
/// through `next`, `last`'s `next` null, reachable from nowhere else (or
/// both null).
#[must_use = "a built part of the table must be linked in, or it is freed"]
pub(crate) struct Built {
    first: *mut FtracePage,
    last: *mut FtracePage,
    pages: usize,
    records: usize,
    /// The chain is ours alone: we may write its groups.
    cap: WriteCap,
}

impl Built {
    fn empty() -> Self {
        // INVARIANT: no group.
        Built {
            first: ptr::null_mut(),
            last: ptr::null_mut(),
            pages: 0,
            records: 0,
            // SAFETY: the groups a `Built` writes are those of its own
            // chain, which nobody else sees (type invariants).
            cap: unsafe { WriteCap::new() },
        }
    }

    /// The number of pages of the groups.
    pub(crate) fn pages(&self) -> usize {
        self.pages
    }

    /// The number of records in the groups.
    pub(crate) fn records(&self) -> usize {
        self.records
    }

    /// The first group, live while the chain is borrowed.
    pub(crate) fn first(&self) -> Option<Group<'_>> {
        // SAFETY: our own groups, freed only when `self` goes (type
        // invariants).
        unsafe { Group::from_raw(self.first) }
    }

    /// The last group.
    fn last(&self) -> Option<Group<'_>> {
        // SAFETY: as in `first()`.
        unsafe { Group::from_raw(self.last) }
    }

    /// The first record touching `[start, end]`, or null.
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn lookup(&self, start: u64, end: u64) -> *mut bindings::dyn_ftrace {
        lookup_from(self.first(), start, end)
    }

    /// Appends a fresh group (whose `next` is null).
    fn push(&mut self, g: Group<'_>) {
        match self.last() {
            Some(last) => last.set_next(g.as_ptr(), &self.cap),
            None => self.first = g.as_ptr(),
        }
        // INVARIANT: `g` is ours and ends the chain.
        self.last = g.as_ptr();
    }

    /// Hands the chain over, to be linked into the table: its first and
    /// last group.
    pub(crate) fn into_raw(self) -> (*mut FtracePage, *mut FtracePage) {
        let me = ManuallyDrop::new(self);
        (me.first, me.last)
    }

    /// Takes the records touching `[start, end]` out of the chain as
    /// [`remove_range`] does out of the table, calling `each` on each
    /// first. Returns the groups left empty, as their own chain, and where
    /// the last of them led before that chain was ended (what a reader
    /// still on it would have gone on to: for the table, the next group
    /// left in it).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn remove_range(
        &mut self,
        start: u64,
        end: u64,
        mut each: impl FnMut(*mut bindings::dyn_ftrace),
    ) -> (Built, *mut FtracePage) {
        // SAFETY: our own chain, which nobody else sees: we are its only
        // writer and reader, for the life of `table`.
        let mut table = unsafe { Groups::owner(&mut self.first, &mut self.last) };
        let out = pages::take_records(&mut table, start, end, INSN_SIZE, |_, g, i| {
            each(g.rec(g.len(), i));
        });
        let taken = table.into_taken(out.records);
        self.records = self.records.saturating_sub(taken.records);
        let mut gone = Built::empty();
        // INVARIANT: the groups taken out, chained, reachable from nowhere
        // else any more; no reader can be on them, so their chain ends now.
        gone.first = taken.first;
        gone.last = taken.last;
        let mut led_to = ptr::null_mut();
        if let Some(last) = gone.last() {
            led_to = last.next();
            last.set_next(ptr::null_mut(), &gone.cap);
        }
        (gone, led_to)
    }

    /// The first group, as a pointer (for comparisons).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn first_ptr(&self) -> *mut FtracePage {
        self.first
    }
}

impl Drop for Built {
    fn drop(&mut self) {
        if !self.first.is_null() {
            // SAFETY: our own groups, made by `ftrace_c_group_alloc()` and
            // linked through `next` (type invariants).
            unsafe { bindings::ftrace_c_free_groups(to_c(self.first)) };
        }
    }
}

/// Why a table part could not be built.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BuildError {
    /// No memory for a group, even of order 0.
    NoMemory,
    /// The groups did not hold the records counted (the list changed).
    Inconsistent,
}

/// Makes the records of a call-site list already checked by
/// `rfcore::table::scan()` in new groups: one record for each of its
/// `count` non-zero entries (the patch sites `scan()` kept and moved
/// there; it zeroes every entry that must not become a record), in list
/// order. Fails with [`BuildError::Inconsistent`] if the list does not
/// hold `count` of them.
pub(crate) fn build(list: &[u64], count: usize) -> Result<Built, BuildError> {
    if list.is_empty() || count == 0 {
        return Ok(Built::empty());
    }

    let geo = geometry();
    let mut chain = Built::empty();
    let (mut remaining, mut nr_pages) = (count, 0usize);
    while remaining > 0 {
        let mut order = geo.first_order(remaining);
        let group = loop {
            let order_c = c_int::try_from(order).map_err(|_| BuildError::NoMemory)?;
            // SAFETY: allocates and counts a zeroed group; nothing else.
            let pg = from_c(unsafe { bindings::ftrace_c_group_alloc(order_c) });
            // SAFETY: a fresh group, only ours until `chain` goes.
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

    // The kept sites, in list order, into the groups, each filled to its
    // capacity before the next. In the common case (nothing refused but
    // padding, which a sorted list has in front) the kept sites are the
    // whole rest of the list: it is copied group by group, each site
    // still checked to be non-zero, without looking for gaps.
    let lead = list.iter().take_while(|&&ip| ip == 0).count();
    let mut dense = match list.get(lead..) {
        Some(rest) if rest.len() == count => Some(rest),
        _ => None,
    };
    let mut sites = list.iter();
    let mut made = 0usize;
    let mut next = chain.first();
    while let Some(group) = next {
        let cap = geo.entries(group.order()).ok_or(BuildError::Inconsistent)?;
        // SAFETY: the group's pages hold `cap` records
        // (`ftrace_c_group_alloc()` of this order); the group is ours, not
        // yet linked anywhere, and no reference to its records exists.
        let slots = unsafe {
            core::slice::from_raw_parts_mut(
                group
                    .page()
                    .records
                    .cast::<core::mem::MaybeUninit<bindings::dyn_ftrace>>(),
                cap,
            )
        };
        let filled = match dense.as_mut() {
            Some(rest) => fill_dense(slots, rest)?,
            None => fill(slots, &mut sites),
        };
        if !group.set_len(filled, &chain.cap) {
            return Err(BuildError::Inconsistent);
        }
        made = made.saturating_add(filled);
        next = group.following();
    }
    let left = match dense {
        Some(rest) => !rest.is_empty(),
        None => sites.any(|&ip| ip != 0),
    };
    if made != count || left {
        return Err(BuildError::Inconsistent);
    }
    chain.pages = nr_pages;
    chain.records = made;
    Ok(chain)
}

/// A record of the table for the site `ip`, with no flags.
fn record(ip: u64) -> bindings::dyn_ftrace {
    bindings::dyn_ftrace {
        ip: c_word(ip),
        flags: 0,
        ..Default::default()
    }
}

/// Fills `slots` with records of the next non-zero entries of `sites`
/// (an entry is read only when there is a slot for it); returns how many.
fn fill(
    slots: &mut [core::mem::MaybeUninit<bindings::dyn_ftrace>],
    sites: &mut core::slice::Iter<'_, u64>,
) -> usize {
    let cap = slots.len();
    let mut free = slots.iter_mut();
    while free.len() > 0 {
        let Some(&ip) = sites.next() else {
            break;
        };
        if ip == 0 {
            continue;
        }
        if let Some(slot) = free.next() {
            slot.write(record(ip));
        }
    }
    cap.saturating_sub(free.len())
}

/// Fills `slots` with records of the first entries of `rest`, every one of
/// which must be non-zero, and moves `rest` past them; returns how many.
fn fill_dense(
    slots: &mut [core::mem::MaybeUninit<bindings::dyn_ftrace>],
    rest: &mut &[u64],
) -> Result<usize, BuildError> {
    let (now, later) = rest.split_at(slots.len().min(rest.len()));
    for (slot, &ip) in slots.iter_mut().zip(now) {
        if ip == 0 {
            return Err(BuildError::Inconsistent);
        }
        slot.write(record(ip));
    }
    *rest = later;
    Ok(now.len())
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
struct Writer<'a> {
    /// The right to write the groups (the type invariants).
    cap: WriteCap,
    tail: *mut *mut FtracePage,
    /// The first group of the chain of groups taken out.
    taken: *mut FtracePage,
    /// The last group of the run (its `next` still points into the table).
    run_last: Option<Group<'a>>,
    /// Groups taken out that were not next to the run.
    strays: usize,
}

impl<'a> Table for Groups<'a, Writer<'a>> {
    fn take(&mut self, prev: Option<Group<'a>>, g: Group<'a>) {
        let link = match prev {
            Some(p) => p.page().next.as_ptr(),
            None => self.head,
        };
        let w = &mut self.mode;
        // Before the link changes: does `g` follow the run directly?
        let adjacent = w.run_last.is_some_and(|last| last.next() == g.as_ptr());
        // SAFETY: `link` and `tail` are valid and we are the only writer
        // (type invariants). One store takes the group off the list for
        // new readers; `g`'s own link is left for those already on it.
        unsafe {
            atomic_store(link, g.next(), Relaxed);
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
                g.set_next(w.taken, &w.cap);
                w.taken = g.as_ptr();
                w.strays = w.strays.saturating_add(1);
            }
        }
    }

    fn shrink(&mut self, g: Group<'a>, plan: Removal) {
        let len = g.len();
        // `removal()` made the plan for this group's `len`; check it again
        // before moving anything.
        let within = plan.from.checked_add(plan.count) == Some(len) && plan.to <= plan.from;
        // The length shrinks only over records that moved: a group whose
        // records could not move keeps them all (and says so), never a
        // length that drops live ones.
        if !within || !g.move_records(plan.from, plan.to, plan.count, &self.mode.cap) {
            kernel::pr_err!(
                "record table: a group of {} records not shrunk (move {}+{} to {})\n",
                len,
                plan.from,
                plan.count,
                plan.to
            );
            return;
        }
        let _ = g.set_len(plan.len, &self.mode.cap);
    }
}

/// Groups taken out of the table: `first` to `last` through `next`, but
/// `last`'s `next` still points into the table. After an RCU grace period
/// the caller sets it to null and frees the chain.
#[must_use = "groups taken out must be freed after an RCU grace period"]
pub(crate) struct Taken {
    pub(crate) first: *mut FtracePage,
    pub(crate) last: *mut FtracePage,
    pub(crate) records: usize,
}

impl<'a> Groups<'a, Writer<'a>> {
    /// # Safety
    ///
    /// As the type invariants require, for `'a`.
    unsafe fn owner(head: *mut *mut FtracePage, tail: *mut *mut FtracePage) -> Self {
        Groups {
            head,
            mode: Writer {
                // SAFETY: the only writer of the groups on the list (the
                // function contract).
                cap: unsafe { WriteCap::new() },
                tail,
                taken: ptr::null_mut(),
                run_last: None,
                strays: 0,
            },
            _groups: PhantomData,
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
/// `head` and `tail` are `&ftrace_pages_start` and `&ftrace_pages` (whose
/// writers hold `ftrace_lock`, which `_lock` proves); `module` is the
/// module going away.
pub(crate) unsafe fn unlink_module(
    head: *mut *mut FtracePage,
    tail: *mut *mut FtracePage,
    module: Module<'_>,
    _lock: &FtraceLocked,
) -> Taken {
    // SAFETY: the function's contract is the type invariants.
    let mut table = unsafe { Groups::owner(head, tail) };
    let out = pages::take_groups(&mut table, |ip| {
        crate::kside::module::rftrace_shim_within_module(module, c_word(ip))
    });
    if out.kept_first {
        kernel::pr_err!("record table: the first group belongs to a module; kept\n");
    }
    table.into_taken(out.records)
}

/// A function the C side calls on each record taken out by
/// [`remove_range`], before it goes.
pub(crate) use crate::kside::abi::EachRec;

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
    _lock: &FtraceLocked,
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

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
