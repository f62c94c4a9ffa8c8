// SPDX-License-Identifier: GPL-2.0

//! The kernel side of the per-site ops sets ([`crate::rfcore::siteset`]):
//! the registry's one [`Sites`], kept under `ftrace_lock`; its blocks from
//! `kvmalloc()`, handed to the C shim's grace-period worker when they go;
//! its table published for the list function with `rcu_assign_pointer()`.
//!
//! The accounting walk ([`super::registry::account_walk`]) stages the
//! changes ([`begin_walk`], [`account`], [`end_walk`]); the update pass
//! publishes them before it writes any text ([`publish`]), and so do the
//! registry operations that end without a pass. Module records that go are
//! forgotten ([`forget_module`], [`forget_range`]).
//!
//! A leaf module with `unsafe` code: the C calls that publish a table and
//! retire a block.

use core::{
    cell::Cell,
    marker::PhantomData,
    mem::ManuallyDrop, //
};

use kernel::{
    alloc::{
        flags::{
            __GFP_ZERO, //
            GFP_KERNEL,
        },
        kvec::PushError,
        KVVec, //
    },
    bindings,
    ffi::c_long,
    sync::{
        atomic::{
            Atomic,
            Relaxed,
            Release, //
        },
        barrier::smp_wmb,
    },
};

use super::{
    lock::{
        FtraceLocked,
        FtraceState, //
    },
    module::Module,
    ops::Ops,
};
use crate::rfcore::siteset::{
    layout,
    Block,
    Mem,
    NoMem,
    Readers,
    Seq,
    SiteStats,
    Sites,
    Table,
    Writer, //
};

/// The registry's sequences grow with the table (one word per slot):
/// `kvmalloc()`, so that a large one needs no contiguous pages.
impl<T> Seq<T> for KVVec<T> {
    fn items(&self) -> &[T] {
        self
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
    fn push(&mut self, v: T) -> Result<(), NoMem> {
        // Inline while there is room (most pushes: the registry reserves
        // before its walks); the allocation out of line.
        match self.push_within_capacity(v) {
            Ok(()) => Ok(()),
            Err(PushError(v)) => KVVec::push(self, v, GFP_KERNEL).map_err(|_| NoMem),
        }
    }
    fn clear(&mut self) {
        KVVec::clear(self)
    }
    fn reserve(&mut self, n: usize) -> Result<(), NoMem> {
        KVVec::reserve(self, n, GFP_KERNEL).map_err(|_| NoMem)
    }
}

/// A published block: `kvmalloc()`ed words that readers load without a
/// lock.
///
/// Only the registry's [`Sites`] holds blocks, inside [`SITES`], which
/// lends them to one task at a time under `ftrace_lock`: a block is not
/// `Sync` (`_one_task`), so no two tasks can reach one, and its only other
/// accesses are the C readers' `READ_ONCE()`s.
///
/// # Invariants
///
/// `words` is never resized, so its buffer stays where readers found it;
/// when the block is dropped the buffer goes to the shim's retirement
/// worker, which frees it after the grace periods that end every reader
/// `readers` names.
struct KBlock {
    words: ManuallyDrop<KVVec<Atomic<usize>>>,
    /// Who may read the block: until it is retired, the table's readers
    /// only, unless [`Mem::retire`] says otherwise.
    readers: Readers,
    _one_task: PhantomData<Cell<()>>,
}

impl Block for KBlock {
    fn words(&self) -> usize {
        self.words.len()
    }
    fn load(&self, i: usize) -> usize {
        // Inline, where `Atomic::load()` is an out-of-line helper.
        // SAFETY: a live, aligned word of the block. The only writer is
        // the task holding this block (it is not `Sync`), and a volatile
        // load of an aligned machine word is one untorn load
        // (`READ_ONCE()`), as the C readers' are.
        self.words
            .get(i)
            .map_or(0, |w| unsafe { core::ptr::read_volatile(w.as_ptr()) })
    }
    fn store(&self, i: usize, v: usize, _: &Writer) {
        if let Some(w) = self.words.get(i) {
            w.store(v, Release);
        }
    }
    fn put(&self, i: usize, v: usize, _: &Writer) {
        // Inline, where `Atomic::store()` is an out-of-line helper.
        if let Some(w) = self.words.get(i) {
            // SAFETY: a live, aligned word of the block; a volatile store
            // of an aligned machine word is one untorn store, as the C
            // readers' `READ_ONCE()` expects (`WRITE_ONCE()`).
            unsafe { core::ptr::write_volatile(w.as_ptr(), v) };
        }
    }
    fn addr(&self) -> usize {
        self.words.as_ptr() as usize
    }
}

impl Drop for KBlock {
    fn drop(&mut self) {
        // SAFETY: `words` is not used again: this is its owner's drop.
        let words = unsafe { ManuallyDrop::take(&mut self.words) };
        let (ptr, _, _) = words.into_raw_parts();
        // SAFETY: `ptr` is a `kvmalloc()` buffer of at least one word
        // (every block has its link word) that no Rust value owns any
        // more; the worker frees it after the readers that may still hold
        // it are done (type invariants).
        unsafe { bindings::rftrace_shim_retire(ptr.cast(), self.readers == Readers::Literal) };
    }
}

/// The blocks come from `kvmalloc()`, and go through the retirement worker.
///
/// # Invariants
///
/// `published` is the address of the table readers were last given (0:
/// none).
struct KMem {
    published: usize,
}

impl Mem for KMem {
    type Block = KBlock;
    type Vec<T> = KVVec<T>;

    fn vec<T>(&self) -> KVVec<T> {
        KVVec::new()
    }

    fn alloc(&mut self, words: usize) -> Option<KBlock> {
        let n = words.max(1);
        // Zeroed by the allocator: a table of 2^17 words is one memset, not
        // one store per word.
        let mut v: KVVec<Atomic<usize>> = KVVec::with_capacity(n, GFP_KERNEL | __GFP_ZERO).ok()?;
        // SAFETY: the capacity is at least `n` and the whole buffer is
        // zeroed (`__GFP_ZERO`, which kvmalloc() honours on both its
        // paths); an all-zero word is a valid `Atomic<usize>` (0).
        unsafe { v.inc_len(n) };
        Some(KBlock {
            words: ManuallyDrop::new(v),
            readers: Readers::Table,
            _one_task: PhantomData,
        })
    }

    fn retire(&mut self, mut b: KBlock, readers: Readers) {
        // A table still published must never go: readers would find it.
        if b.addr() == self.published {
            self.publish(None);
        }
        b.readers = readers;
        drop(b);
    }

    const SET_HEADER: usize = bindings::RFTRACE_SET_HEADER as usize;

    fn init_set(&mut self, b: &KBlock) {
        if Self::SET_HEADER == 0 || b.words() < layout::set_ops(Self::SET_HEADER) {
            return;
        }
        // SAFETY: `b` has room for the header (checked above), whose
        // `ftrace_ops` the shim writes at word `RFTRACE_SET_FOPS` and
        // nothing else. Only `Sites` calls `init_set` (nothing else has
        // the `&mut KMem`), on a set it has just made and whose address
        // it stores nowhere before this returns (`Sites::intern`), so no
        // reader loads these words yet.
        unsafe { bindings::rftrace_shim_set_init(b.words.as_ptr().cast_mut().cast()) };
    }

    fn publish(&mut self, table: Option<&Table<KBlock>>) {
        let ptr = table.map_or(core::ptr::null_mut(), |t| t.addr() as *mut usize);
        // SAFETY: `ptr` is null or the words of a `Table`, which only
        // `Sites` makes, with the shift and mask its length needs (the
        // reader stays within them). A block stays allocated until it is
        // dropped, and its drop frees it only after the readers' grace
        // periods; `retire()` above unpublishes the published table before
        // it goes, so that grace period starts after no reader can find it.
        unsafe { bindings::rftrace_shim_sites_publish(ptr.cast()) };
        self.published = ptr as usize;
    }

    fn order_stores(&self) {
        smp_wmb();
    }

    fn may_grow(&self) -> bool {
        crate::kside::shim::rftrace_shim_retire_pending() < RETIRE_CAP
    }
}

/// Retired blocks waiting for their grace periods past which no new set
/// is made (each set a few hundred bytes: about a megabyte at most).
const RETIRE_CAP: c_long = 4096;

static SITES: FtraceState<Option<Sites<KMem>>> = FtraceState::new(None, reset);

/// A call found the sets lent already, and what it was to change (a walk's
/// accounting, a publication) is lost: every set goes, as when the
/// accounting went wrong ([`clear`]), so none is stale; the sites' callers
/// walk the list until they are accounted again.
fn reset(sites: &mut Option<Sites<KMem>>) {
    if let Some(s) = sites {
        s.clear();
        mirror(s.stats());
    }
}

/// The counters of the last publication, for the lockless stats reader.
static COUNTERS: [Atomic<u64>; 11] = [const { Atomic::new(0) }; 11];

/// Names of [`COUNTERS`], NUL-terminated.
const NAMES: [&[u8]; 11] = [
    b"site_sets\0",
    b"site_set_sites\0",
    b"site_set_unknown\0",
    b"site_set_bytes\0",
    b"site_set_updates\0",
    b"site_set_publishes\0",
    b"site_set_retired\0",
    b"site_set_tables\0",
    b"site_set_failures\0",
    b"site_set_literals\0",
    b"site_set_deferred\0",
];

/// Counter `idx` of the per-site sets, named.
pub(crate) fn stat(idx: usize) -> Option<(&'static [u8], u64)> {
    Some((NAMES.get(idx)?, COUNTERS.get(idx)?.load(Relaxed)))
}

fn mirror(s: SiteStats) {
    let v = [
        s.sets,
        s.sites,
        s.unknown,
        s.bytes,
        s.updates,
        s.publishes,
        s.retired,
        s.tables,
        s.failures,
        s.literals,
        s.deferred,
    ];
    for (c, v) in COUNTERS.iter().zip(v) {
        c.store(v, Relaxed);
    }
}

fn with<R>(lock: &FtraceLocked, f: impl FnOnce(&mut Sites<KMem>) -> R) -> Option<R> {
    SITES.with(lock, |s| {
        let s = s.get_or_insert_with(|| Sites::new(KMem { published: 0 }));
        f(s)
    })
}

/// An accounting walk of `ops` (`inc`: adding it) starts.
pub(crate) fn begin_walk(ops: Ops<'_>, inc: bool, lock: &FtraceLocked) {
    let mut list = super::ops::first_ops(lock);
    let order = core::iter::from_fn(|| {
        let op = list?;
        list = super::ops::next_ops(op, lock);
        Some(op.as_ptr() as usize)
    });
    with(lock, |s| s.begin_walk(ops.as_ptr() as usize, inc, order));
}

/// The walk about to run adds at most `n` of the `total` records' sites.
pub(crate) fn expect(n: u64, total: u64, lock: &FtraceLocked) {
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    with(lock, |s| s.expect(n, total));
}

/// The walk changed the record at `ip`, which now has `count` users.
pub(crate) fn account(ip: u64, count: u64, lock: &FtraceLocked) {
    let count = u32::try_from(count).unwrap_or(u32::MAX);
    with(lock, |s| s.account(ip as usize, count));
}

/// The walk is over.
pub(crate) fn end_walk(lock: &FtraceLocked) {
    with(lock, |s| s.end_walk());
}

/// Every set goes: the accounting went wrong (a count overflowed or
/// underflowed, and ftrace is stopped), so no set may name an ops the
/// walk left half done; every caller walks the list.
pub(crate) fn clear(lock: &FtraceLocked) {
    with(lock, |s| {
        s.clear();
        mirror(s.stats());
    });
}

/// The staged sets become the ones readers find.
pub(crate) fn publish(lock: &FtraceLocked) {
    with(lock, |s| {
        s.publish();
        mirror(s.stats());
    });
}

/// The records for which `gone` holds have left the table.
fn forget_where(lock: &FtraceLocked, mut gone: impl FnMut(usize) -> bool) {
    with(lock, |s| {
        let mut ips: KVVec<usize> = KVVec::new();
        let mut short = false;
        s.each_ip(|ip| {
            if gone(ip) && ips.push(ip, GFP_KERNEL).is_err() {
                short = true;
            }
        });
        for &ip in ips.iter() {
            s.forget(ip);
        }
        if short {
            // Some could not be listed: no set may outlive its site.
            s.clear();
        }
        mirror(s.stats());
    });
}

/// A module's records have left the table.
pub(crate) fn forget_module(module: Module<'_>, lock: &FtraceLocked) {
    let text = module.text();
    forget_where(lock, |ip| text.contains(ip as u64));
}

/// The records in `[start, end]` have left the table (freed init text).
pub(crate) fn forget_range(start: u64, end: u64, lock: &FtraceLocked) {
    forget_where(lock, |ip| (start as usize..=end as usize).contains(&ip));
}

/// Bytes from a set block to its own `ftrace_ops`, which literals name.
const FOPS_BYTES: u64 = (layout::SET_FOPS * core::mem::size_of::<usize>()) as u64;

/// What the literal of the site at `ip` is to name: its published set's
/// own `ftrace_ops` (`CALL_OPS` builds, two or more ops), if it has one.
pub(crate) fn literal_want(ip: u64, lock: &FtraceLocked) -> Option<u64> {
    with(lock, |s| s.literal_want(ip as usize))
        .flatten()
        .map(|b| (b as u64).saturating_add(FOPS_BYTES))
}

/// Whether the literal of the site at `ip` names another set than
/// [`literal_want`] says.
pub(crate) fn literal_due(ip: u64, lock: &FtraceLocked) -> bool {
    with(lock, |s| s.literal_due(ip as usize)).unwrap_or(false)
}

/// The literal of the site at `ip` was written to name `lit`: a set's
/// `ftrace_ops`, or 0 for none.
pub(crate) fn literal_written(ip: u64, lit: u64, lock: &FtraceLocked) {
    let block = if lit == 0 {
        0
    } else {
        lit.saturating_sub(FOPS_BYTES) as usize
    };
    with(lock, |s| {
        s.literal_written(ip as usize, block);
        mirror(s.stats());
    });
}

/// Whether the stale marks are right ([`Sites::check_stale`]): `Err` with
/// the ip or set address found wrong.
pub(crate) fn check_stale(lock: &FtraceLocked) -> Result<(), usize> {
    with(lock, |s| s.check_stale()).unwrap_or(Ok(()))
}

/// The published set of the site at `ip`, into `out`: `Ok(false)` if it
/// has none.
pub(crate) fn published(
    ip: u64,
    out: &mut KVVec<usize>,
    lock: &FtraceLocked,
) -> Result<bool, NoMem> {
    with(lock, |s| match s.lookup(ip as usize) {
        Some(addr) => s.ops_of(addr, out),
        None => Ok(false),
    })
    .unwrap_or(Ok(false))
}

const _: () = {
    assert!(layout::TABLE_SHIFT == bindings::RFTRACE_SITES_SHIFT as usize);
    assert!(layout::TABLE_MASK == bindings::RFTRACE_SITES_MASK as usize);
    assert!(layout::TABLE_SLOTS == bindings::RFTRACE_SITES_SLOTS as usize);
    assert!(layout::SET_FOPS == bindings::RFTRACE_SET_FOPS as usize);
    assert!(layout::set_len(KMem::SET_HEADER) == bindings::RFTRACE_SET_LEN as usize);
    assert!(layout::set_ops(KMem::SET_HEADER) == bindings::RFTRACE_SET_OPS as usize);
    // Bindgen's struct is the compiler's: the header holds it, then the
    // stale word.
    assert!(
        KMem::SET_HEADER == 0
            || (KMem::SET_HEADER - 1) * core::mem::size_of::<usize>()
                >= core::mem::size_of::<bindings::ftrace_ops>()
    );
    assert!(layout::HASH_MUL == bindings::RFTRACE_SITES_HASH);
    assert!(layout::LINK == 0);
};

// The stale word where the C reader looks for it (`CALL_OPS` only: a set
// has no header elsewhere).
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS)]
const _: () = assert!(layout::set_stale(KMem::SET_HEADER) == bindings::RFTRACE_SET_STALE as usize);
