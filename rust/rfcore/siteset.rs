// SPDX-License-Identifier: GPL-2.0

//! Per-site ops sets: for every traced call site, the ops that trace it.
//!
//! A site traced by two or more ops calls the shared list function, which
//! in C walks every registered ops and tests its hashes for the ip. The
//! registry already knows which ops cover each site: every ops' accounting
//! walk adds or removes it on exactly the records it matches. [`Sites`]
//! keeps that knowledge as an immutable, interned set per site (one set per
//! distinct combination of ops, in ops-list order) and publishes it for the
//! list function in an open-addressing table keyed by ip.
//!
//! # What the readers see
//!
//! Everything a reader loads is in *published blocks* of machine words
//! ([`Block`]), laid out as [`layout`] says. A table slot is an `{ip, set}`
//! pair: the ip is written once, before the slot's set; the set word is
//! changed with one store. A set block is filled before its address is
//! stored and never written again (but for its stale mark, below). A reader that finds no slot, or a slot
//! whose set word is 0, walks the ops list as C does: a missing set costs
//! speed, never correctness.
//!
//! # Transitions
//!
//! An operation (registration, unregistration, filter change) is one or
//! more accounting walks, each adding or removing one ops on some records
//! ([`Sites::begin_walk`], [`Sites::account`]). While the walks go on, a
//! changed site is *staged*: its published set word is cleared at once (its
//! callers walk the list, exactly as C does) and its new set is kept on
//! the side. [`Sites::publish`] stores the new sets when the operation's
//! walks are done, one store per site: a call sees the walk, the old set or
//! the new one, never a set that is half of each (a filter change removes
//! the ops and adds it back; its intermediate sets are never published).
//! A set no site names any more is handed to [`Mem::retire`], which frees it
//! once no reader can hold it.
//!
//! # When the bookkeeping disagrees
//!
//! A set must have as many ops as the record has users. When it would not
//! (a record counted by code that does not walk, such as a module's
//! records enabled at load), the site becomes *unknown*: it keeps no set,
//! so its callers walk, until its count drops to zero. Running out of
//! memory clears the whole table for good ([`Sites::failed`]).

/// The word layout of published blocks, shared with the C reader.
pub mod layout {
    /// Word 0 of every block is the reader-invisible retirement link.
    pub const LINK: usize = 0;
    /// Table: word 1 holds the shift of the slot hash (64 minus the number
    /// of index bits).
    pub const TABLE_SHIFT: usize = 1;
    /// Table: word 2 holds the index mask (the number of slots less one).
    pub const TABLE_MASK: usize = 2;
    /// Table: words from here are `{ip, set}` slot pairs.
    pub const TABLE_SLOTS: usize = 3;
    /// Set: the words from here are the set's own `ftrace_ops`
    /// ([`Mem::SET_HEADER`] words less one, its last word being the stale
    /// mark, [`set_stale`]; no header on x86), which a per-site literal
    /// names on `CALL_OPS` architectures.
    ///
    /// [`Mem::SET_HEADER`]: super::Mem::SET_HEADER
    pub const SET_FOPS: usize = 1;
    /// Set: word 1 holds the number of ops, after the header if any
    /// ([`set_len`]).
    pub const SET_LEN: usize = 1;
    /// Set: words from here are the ops' addresses, in ops-list order,
    /// after the header if any ([`set_ops`]).
    pub const SET_OPS: usize = 2;

    /// The word of a set block that holds the number of ops, with a header
    /// of `header` words.
    pub const fn set_len(header: usize) -> usize {
        SET_LEN.saturating_add(header)
    }

    /// The first word of a set block that holds an ops' address, with a
    /// header of `header` words.
    pub const fn set_ops(header: usize) -> usize {
        SET_OPS.saturating_add(header)
    }

    /// The word of a set block with a header of `header` words (at least
    /// one) that is not 0 while the set is *stale*: a literal names it at
    /// a site whose ops are changing or have changed, so the set may hold
    /// an ops that must no longer be called there. The set's function
    /// then walks the list, as the list ops would. The one word of a set
    /// that changes after it is published.
    pub const fn set_stale(header: usize) -> usize {
        header
    }
    /// The ip of a slot whose site has gone (module text freed): matches
    /// no call site.
    pub const GONE: usize = 1;
    /// The multiplier of the slot hash (`(ip * HASH_MUL) >> (64 - bits)`).
    pub const HASH_MUL: u64 = 0x61c8_8646_80b5_83eb;
    /// Index bits of the smallest table (16 slots: 280 bytes).
    pub const MIN_BITS: u32 = 4;
    /// Index bits of the largest table.
    pub const MAX_BITS: u32 = 24;
}

/// The slot an ip's probe starts at, in a table of `1 << bits` slots.
pub fn home(ip: usize, bits: u32) -> usize {
    let shift = 64u32.saturating_sub(bits.clamp(1, 63));
    let h = (ip as u64).wrapping_mul(layout::HASH_MUL);
    h.checked_shr(shift).unwrap_or(0) as usize
}

/// An allocation failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NoMem;

/// A growable sequence (a `Vec` on the host, a `KVec` in the kernel).
pub trait Seq<T> {
    /// The elements.
    fn items(&self) -> &[T];
    /// The elements, writable.
    fn items_mut(&mut self) -> &mut [T];
    /// Appends `v`.
    fn push(&mut self, v: T) -> Result<(), NoMem>;
    /// Removes every element.
    fn clear(&mut self);
    /// Makes room for `n` more elements at once.
    fn reserve(&mut self, n: usize) -> Result<(), NoMem>;
}

/// The right to write a block's words: only [`Sites`] has one.
///
/// A word the C reader trusts (a table's mask, a set's length) rewritten
/// after the reader can find the block would send it out of bounds, and a
/// block could be freed under it only through a wrong retirement; so the
/// words are written by the code that knows which blocks are published,
/// and by nothing else. Its field is private to this module: a `Writer`
/// cannot be made elsewhere,
///
/// ```compile_fail,E0423
/// use rftrace::rfcore::siteset::{Block, Writer};
/// fn scribble<B: Block>(b: &B) {
///     b.put(2, 0, &Writer(()));
/// }
/// ```
///
/// and a block's words cannot be written without one:
///
/// ```compile_fail,E0061
/// use rftrace::rfcore::siteset::Block;
/// fn scribble<B: Block>(b: &B) {
///     b.put(2, 0);
/// }
/// ```
pub struct Writer(());

/// A published block of machine words that readers may load at any time.
pub trait Block {
    /// Number of words.
    fn words(&self) -> usize;
    /// Word `i` (0 beyond the end).
    fn load(&self, i: usize) -> usize;
    /// Stores `v` into word `i` with release ordering (ignored beyond the
    /// end).
    fn store(&self, i: usize, v: usize, w: &Writer);
    /// Stores `v` into word `i` as one untorn store with no ordering of
    /// its own (ignored beyond the end): for a word of a block no reader
    /// can find yet, for a word whose readers accept either value, or
    /// after [`Mem::order_stores`].
    fn put(&self, i: usize, v: usize, w: &Writer);
    /// The address readers know the block by.
    fn addr(&self) -> usize;
}

/// Which readers may still hold a block that is retired: what the
/// retirement has to wait for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Readers {
    /// Only the list function, which reads the table and the sets it
    /// finds there with preemption disabled.
    Table,
    /// Also a call site whose per-site literal named the set: the
    /// `CALL_OPS` caller loads the literal with preemption enabled, before
    /// the set's function disables it.
    Literal,
}

/// A table block, with its shift and mask written for its length: what
/// [`Mem::publish`] gives readers. Only [`Sites`] makes one (its field is
/// private to this module), so no other block can be published as a
/// table:
///
/// ```compile_fail,E0423
/// use rftrace::rfcore::siteset::{Mem, Table};
/// fn publish_any<M: Mem>(m: &mut M, b: M::Block) {
///     m.publish(Some(&Table(b)));
/// }
/// ```
pub struct Table<B>(B);

impl<B: Block> Table<B> {
    /// The address readers know the table by.
    pub fn addr(&self) -> usize {
        self.0.addr()
    }

    fn words(&self) -> usize {
        self.0.words()
    }

    fn load(&self, i: usize) -> usize {
        self.0.load(i)
    }

    fn store(&self, i: usize, v: usize, w: &Writer) {
        self.0.store(i, v, w)
    }

    fn put(&self, i: usize, v: usize, w: &Writer) {
        self.0.put(i, v, w)
    }
}

/// Where the sets and tables come from and go to.
///
/// Only the [`Sites`] that owns it calls these: [`Sites::mem`] lends it
/// for reading only,
///
/// ```compile_fail,E0596
/// use rftrace::rfcore::siteset::{Mem, Sites};
/// fn unpublish<M: Mem>(s: &mut Sites<M>) {
///     s.mem().publish(None);
/// }
/// ```
pub trait Mem {
    /// A published block.
    type Block: Block;
    /// The registry's private sequences.
    type Vec<T>: Seq<T>;
    /// An empty sequence.
    fn vec<T>(&self) -> Self::Vec<T>;
    /// A block of `words` zeroed words.
    fn alloc(&mut self, words: usize) -> Option<Self::Block>;
    /// Whether a new set may be made now. While the blocks retired and
    /// not yet freed pile up (their grace periods are slow), a site that
    /// would need a new set gets none: its callers walk, and it is counted
    /// unknown until no ops traces it; the sets that exist are kept.
    fn may_grow(&self) -> bool {
        true
    }
    /// `b` is no longer reachable by new readers: free it after the
    /// `readers` that may hold it are done. The published table, if `b` is
    /// it, is unpublished first.
    fn retire(&mut self, b: Self::Block, readers: Readers);
    /// Makes `table` the table readers look up (one pointer store).
    fn publish(&mut self, table: Option<&Table<Self::Block>>);
    /// Orders every store made before it before every store made after
    /// it, for readers on other CPUs (a write barrier): a set's words
    /// before the [`Block::put`] of its address.
    fn order_stores(&self);
    /// Words of the `ftrace_ops` every set block starts with
    /// ([`layout::SET_FOPS`]): 0, or on `CALL_OPS` architectures the size
    /// of a `struct ftrace_ops` in words, so that a literal can name the
    /// set.
    const SET_HEADER: usize = 0;
    /// Fills the header of a new set block (its ops and length are stored
    /// already). Called by [`Sites`] only, before the block's address is
    /// stored anywhere a reader could find it.
    fn init_set(&mut self, b: &Self::Block) {
        let _ = b;
    }
}

/// No set: the site is traced by no ops.
const NONE: u32 = 0x3fff_ffff;
/// The site's ops are not known: its callers walk.
const UNKNOWN: u32 = 0x3fff_fffe;
/// The slot is staged: its published set word is 0 until the next publish.
/// In a word of `lits`: the literal's set is not the one the slot wants,
/// and is counted in that set's `stale`.
const DIRTY: u32 = 1 << 31;
/// The value bits of a slot's logical word.
const VALUE: u32 = !DIRTY;

/// One interned set.
struct SetRec<B> {
    /// The published block; `None` once retired (the id is free).
    block: Option<B>,
    /// Slots whose logical value is this set.
    refs: usize,
    /// Sites whose per-site literal names this set (`CALL_OPS`
    /// architectures): the set lives on until the update pass has pointed
    /// them elsewhere.
    lits: usize,
    /// A literal has named this set: its retirement waits for the
    /// literal's readers too ([`Readers::Literal`]).
    named: bool,
    /// Slots whose literal names this set while they want another (staged,
    /// or published and not rewritten yet): while not 0, the set's stale
    /// word ([`layout::set_stale`]) is set.
    stale: usize,
    /// Hash of its ops, for interning.
    hash: u64,
}

impl<B> SetRec<B> {
    /// Who may still read the set when it goes.
    fn readers(&self) -> Readers {
        if self.named {
            Readers::Literal
        } else {
            Readers::Table
        }
    }
}

/// Counters, shown in the stats file.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct SiteStats {
    /// Interned sets alive.
    pub sets: u64,
    /// Sites with a set.
    pub sites: u64,
    /// Sites whose ops are unknown (their callers walk).
    pub unknown: u64,
    /// Bytes of the published table and sets.
    pub bytes: u64,
    /// Changes of a site's set.
    pub updates: u64,
    /// Publications.
    pub publishes: u64,
    /// Blocks handed back for freeing after a grace period.
    pub retired: u64,
    /// Tables built (the first and each growth).
    pub tables: u64,
    /// Allocation failures (the table is then cleared for good).
    pub failures: u64,
    /// Per-site literals naming a set (`CALL_OPS` architectures).
    pub literals: u64,
    /// New sets not made because too many retired blocks wait for their
    /// grace periods ([`Mem::may_grow`]).
    pub deferred: u64,
}

/// The per-site sets of one registry.
///
/// # Invariants
///
/// - `logical` has one word per table slot; a slot's value is a live set
///   id, [`NONE`] or [`UNKNOWN`]; `refs` of a set counts the slots naming
///   it.
/// - A published slot's set word is the address of its logical set, or 0;
///   it is 0 whenever the slot is [`DIRTY`], and every dirty slot is in
///   `dirty` once.
/// - At most half of the slots hold an ip, so every probe meets an empty
///   slot.
/// - With a set header ([`Mem::SET_HEADER`], `CALL_OPS` architectures),
///   `lits` has one word per slot too (else it is empty and no literal
///   names a set): the set id the site's literal names
///   (as [`Sites::literal_written`] was told), or [`NONE`], with
///   [`DIRTY`] set exactly when that set is not the one the slot wants
///   ([`Sites::literal_want`]); `lits` of a set counts the slots naming it
///   there, `stale` those with [`DIRTY`], and the set's stale word is not
///   0 exactly when `stale` is not. A set is retired only when neither a
///   slot's logical value nor a literal names it, and a slot whose literal
///   names a set is kept by every rebuild.
pub struct Sites<M: Mem> {
    mem: M,
    table: Option<Table<M::Block>>,
    /// The right to write blocks' words.
    writer: Writer,
    bits: u32,
    used: usize,
    logical: M::Vec<u32>,
    lits: M::Vec<u32>,
    dirty: M::Vec<u32>,
    sets: M::Vec<SetRec<M::Block>>,
    memo: M::Vec<(u32, u32)>,
    scratch: M::Vec<usize>,
    order: M::Vec<usize>,
    walk: Option<(usize, bool)>,
    failed: bool,
    stats: SiteStats,
}

fn block_in<B>(sets: &[SetRec<B>], id: u32) -> Option<&B> {
    sets.get(id as usize)?.block.as_ref()
}

fn words_bytes(words: usize) -> u64 {
    (words as u64).saturating_mul(core::mem::size_of::<usize>() as u64)
}

fn set_hash(ops: &[usize]) -> u64 {
    ops.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &op| {
        (h ^ op as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl<M: Mem> Sites<M> {
    /// The word of a set block holding its length.
    const LEN: usize = layout::set_len(M::SET_HEADER);
    /// The first word of a set block holding an ops.
    const OPS: usize = layout::set_ops(M::SET_HEADER);

    /// An empty registry: no table, every caller walks.
    pub fn new(mem: M) -> Self {
        let logical = mem.vec();
        let lits = mem.vec();
        let dirty = mem.vec();
        let sets = mem.vec();
        let memo = mem.vec();
        let scratch = mem.vec();
        let order = mem.vec();
        Sites {
            mem,
            table: None,
            writer: Writer(()),
            bits: 0,
            used: 0,
            logical,
            lits,
            dirty,
            sets,
            memo,
            scratch,
            order,
            walk: None,
            failed: false,
            stats: SiteStats::default(),
        }
    }

    /// The counters.
    pub fn stats(&self) -> SiteStats {
        self.stats
    }

    /// An allocation failed once: no set is kept or published any more.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The allocator, to read its own bookkeeping: lent for reading only,
    /// so that nothing but `Sites` publishes or retires a block.
    pub fn mem(&self) -> &M {
        &self.mem
    }

    /// An accounting walk of the ops at `op` starts: it will be added to
    /// (`inc`) or removed from the records it matches. `list` is the ops
    /// list in order (it need not hold `op` when `op` leaves).
    pub fn begin_walk(&mut self, op: usize, inc: bool, list: impl Iterator<Item = usize>) {
        self.memo.clear();
        self.order.clear();
        self.walk = None;
        if self.failed {
            return;
        }
        for o in list {
            if self.order.push(o).is_err() {
                self.fail();
                return;
            }
        }
        self.walk = Some((op, inc));
    }

    /// The walk about to run adds at most `n` sites, and there are at most
    /// `total` sites in all: the table grows once now, to at most half
    /// full with them, instead of doubling again and again during the
    /// walk.
    pub fn expect(&mut self, n: usize, total: usize) {
        if self.failed || self.walk.is_none() {
            return;
        }
        let slots = match self.table {
            Some(_) => 1usize.checked_shl(self.bits).unwrap_or(0),
            None => 0,
        };
        // Slots of sites no ops traces any more are reused when those sites
        // come back, and dropped by a rebuild: count the live ones only,
        // or every registration would rebuild the table.
        let live = self.live_bound();
        let n = n.min(total.saturating_sub(live));
        let need = live.saturating_add(n).saturating_mul(2);
        if need > slots {
            let r = self.rebuild_for(n).and_then(|()| self.dirty.reserve(n));
            if r.is_err() {
                self.fail();
            }
        }
    }

    /// At least the number of slots a rebuild keeps: the sites with a set
    /// or an unknown one, and those a literal names.
    fn live_bound(&self) -> usize {
        let n = self
            .stats
            .sites
            .saturating_add(self.stats.unknown)
            .saturating_add(self.stats.literals);
        usize::try_from(n).unwrap_or(usize::MAX)
    }

    /// The walk is over.
    pub fn end_walk(&mut self) {
        self.walk = None;
        self.memo.clear();
    }

    /// The walk changed the record at `ip`, which now has `count` users.
    pub fn account(&mut self, ip: usize, count: u32) {
        let Some((op, inc)) = self.walk else {
            return;
        };
        if self.failed || ip == 0 || ip == layout::GONE {
            return;
        }
        let slot = match self.probe(ip) {
            Ok(slot) => slot,
            Err(_) if count == 0 => return,
            Err(free) => match self.insert(ip, free) {
                Ok(slot) => slot,
                Err(NoMem) => return self.fail(),
            },
        };
        let cur = self.value(slot);
        let next = if count == 0 {
            NONE
        } else if cur == UNKNOWN {
            UNKNOWN
        } else {
            match self.transition(cur, op, inc) {
                Ok(to) if self.len_of(to) == count as usize => to,
                Ok(_) => UNKNOWN,
                Err(NoMem) => return self.fail(),
            }
        };
        if self.set_value(slot, next).is_err() {
            self.fail();
        }
    }

    /// The site at `ip` has gone (its module's text is freed): its slot
    /// never matches again.
    pub fn forget(&mut self, ip: usize) {
        let Some(slot) = self.find(ip) else {
            return;
        };
        // Its literal went with its text (a cleared registry still counts
        // the literals that name sets).
        self.name(slot, NONE);
        if self.failed {
            return;
        }
        if self.set_value(slot, NONE).is_err() {
            return self.fail();
        }
        if let Some(t) = &self.table {
            let w = Self::slot_word(slot);
            t.store(w.saturating_add(1), 0, &self.writer);
            t.store(w, layout::GONE, &self.writer);
        }
    }

    /// Stores every staged site's set: the operation's walks are done.
    pub fn publish(&mut self) {
        if self.failed {
            return;
        }
        let Some(t) = &self.table else {
            return;
        };
        // The sets' words, written when they were made, before their
        // addresses.
        self.mem.order_stores();
        for &slot in self.dirty.items() {
            let slot = slot as usize;
            let Some(v) = self.logical.items_mut().get_mut(slot) else {
                continue;
            };
            *v &= VALUE;
            let addr = self
                .sets
                .items()
                .get(*v as usize)
                .and_then(|s| s.block.as_ref())
                .map_or(0, |b| b.addr());
            t.put(Self::slot_word(slot).saturating_add(1), addr, &self.writer);
        }
        if M::SET_HEADER > 0 {
            for i in 0..self.dirty.items().len() {
                if let Some(&slot) = self.dirty.items().get(i) {
                    self.restale(slot as usize);
                }
            }
        }
        self.dirty.clear();
        self.retire_unused();
        self.shrink();
        self.stats.publishes = self.stats.publishes.saturating_add(1);
    }

    /// Memory follows what is traced: once no site has a set or an
    /// unknown one and no literal names a set, the table and the
    /// bookkeeping go (a later walk builds them again); a table at most
    /// a sixteenth full is rebuilt a quarter full. Run after a
    /// publication, when no site is staged. A rebuild out of memory
    /// keeps the table it has.
    fn shrink(&mut self) {
        if self.failed || self.walk.is_some() || !self.dirty.items().is_empty() {
            return;
        }
        if self.table.is_none() {
            return;
        }
        let live = self.live_bound();
        if live == 0 {
            self.mem.publish(None);
            if let Some(t) = self.table.take() {
                self.stats.bytes = self.stats.bytes.saturating_sub(words_bytes(t.words()));
                self.stats.retired = self.stats.retired.saturating_add(1);
                self.mem.retire(t.0, Readers::Table);
            }
            // No slot and no literal names a set: every set was retired.
            if self.sets.items().iter().all(|s| s.block.is_none()) {
                self.sets = self.mem.vec();
            }
            self.logical = self.mem.vec();
            self.lits = self.mem.vec();
            self.dirty = self.mem.vec();
            self.memo = self.mem.vec();
            self.scratch = self.mem.vec();
            self.order = self.mem.vec();
            self.bits = 0;
            self.used = 0;
            return;
        }
        let slots = 1usize.checked_shl(self.bits).unwrap_or(0);
        if self.bits > layout::MIN_BITS && live.saturating_mul(16) < slots {
            // Out of memory: the old table stays, still correct.
            let _ = self.rebuild();
        }
    }

    /// The published set of the site at `ip`, as a reader finds it: the
    /// set's block address, or `None` (the reader walks).
    pub fn lookup(&self, ip: usize) -> Option<usize> {
        if self.failed {
            // Cleared: the table kept for the literals is not published.
            return None;
        }
        let t = self.table.as_ref()?;
        let bits = 64u32.saturating_sub(t.load(layout::TABLE_SHIFT) as u32);
        let slots = 1usize.checked_shl(bits)?;
        let mut i = home(ip, bits);
        for _ in 0..slots {
            let w = Self::slot_word(i);
            let k = t.load(w);
            if k == ip {
                return match t.load(w.saturating_add(1)) {
                    0 => None,
                    set => Some(set),
                };
            }
            if k == 0 {
                return None;
            }
            i = (i.wrapping_add(1)) & slots.wrapping_sub(1);
        }
        None
    }

    /// The block address of the published set the literal of the site at
    /// `ip` is to name (`CALL_OPS` architectures), if it has one.
    pub fn literal_want(&self, ip: usize) -> Option<usize> {
        if M::SET_HEADER == 0 || self.failed {
            return None;
        }
        let slot = self.find(ip)?;
        self.block_of(self.wanted(slot)).map(|b| b.addr())
    }

    /// Whether the literal of the site at `ip` names another set than
    /// [`Sites::literal_want`] says: the update pass must rewrite it.
    pub fn literal_due(&self, ip: usize) -> bool {
        if M::SET_HEADER == 0 {
            return false;
        }
        let Some(slot) = self.find(ip) else {
            return false;
        };
        let want = if self.failed { NONE } else { self.wanted(slot) };
        self.named(slot) != want
    }

    /// The literal of the site at `ip` names the set at block address
    /// `addr` now (0: no set), as the update pass wrote it. A set no slot
    /// and no literal names any more is retired; a literal naming a set
    /// that is not live (it cannot be: the pass names what
    /// [`Sites::literal_want`] gave) counts as naming none.
    pub fn literal_written(&mut self, ip: usize, addr: usize) {
        let Some(slot) = self.find(ip) else {
            return;
        };
        let id = if addr == 0 {
            NONE
        } else {
            let want = self.wanted(slot);
            if self.block_of(want).is_some_and(|b| b.addr() == addr) {
                want
            } else {
                self.sets
                    .items()
                    .iter()
                    .position(|s| s.block.as_ref().is_some_and(|b| b.addr() == addr))
                    .map_or(NONE, |i| i as u32)
            }
        };
        self.name(slot, id);
    }

    /// Checks the stale marks (for the host tests and the shadow build):
    /// a set is marked stale exactly while a literal names it at a site
    /// that wants another set. `Err` with the ip of the first site, or
    /// the block address of the first set, found wrong.
    pub fn check_stale(&self) -> Result<(), usize> {
        if M::SET_HEADER == 0 {
            return Ok(());
        }
        let Some(t) = &self.table else {
            return Ok(());
        };
        let mut counts: M::Vec<usize> = self.mem.vec();
        for _ in self.sets.items() {
            if counts.push(0).is_err() {
                // No memory to check with: nothing is claimed.
                return Ok(());
            }
        }
        let slots = 1usize.checked_shl(self.bits).unwrap_or(0);
        for i in 0..slots {
            let raw = self.lits.items().get(i).copied().unwrap_or(NONE);
            let id = raw & VALUE;
            if id == NONE {
                continue;
            }
            let due = self.wanted(i) != id;
            if due != (raw & DIRTY != 0) {
                return Err(t.load(Self::slot_word(i)));
            }
            if due {
                if let Some(c) = counts.items_mut().get_mut(id as usize) {
                    *c = c.saturating_add(1);
                }
            }
        }
        for (s, &c) in self.sets.items().iter().zip(counts.items()) {
            let Some(b) = &s.block else {
                continue;
            };
            let marked = b.load(layout::set_stale(M::SET_HEADER)) != 0;
            if s.stale != c || marked != (c != 0) {
                return Err(b.addr());
            }
        }
        Ok(())
    }

    /// Whether the set at block address `addr` is marked stale.
    pub fn is_stale(&self, addr: usize) -> bool {
        M::SET_HEADER > 0
            && self
                .sets
                .items()
                .iter()
                .filter_map(|s| s.block.as_ref())
                .find(|b| b.addr() == addr)
                .is_some_and(|b| b.load(layout::set_stale(M::SET_HEADER)) != 0)
    }

    /// Every site whose literal names a set, with the set's block address
    /// (for checking against the literals themselves).
    pub fn each_literal(&self, mut f: impl FnMut(usize, usize)) {
        let Some(t) = &self.table else {
            return;
        };
        let slots = 1usize.checked_shl(self.bits).unwrap_or(0);
        for i in 0..slots {
            if let Some(b) = self.block_of(self.named(i)) {
                f(t.load(Self::slot_word(i)), b.addr());
            }
        }
    }

    /// The ops of the published set at `addr`, into `out` (cleared first).
    /// Returns false when no live set has that address.
    pub fn ops_of(&self, addr: usize, out: &mut impl Seq<usize>) -> Result<bool, NoMem> {
        out.clear();
        let Some(b) = self
            .sets
            .items()
            .iter()
            .filter_map(|s| s.block.as_ref())
            .find(|b| b.addr() == addr)
        else {
            return Ok(false);
        };
        let n = b.load(Self::LEN);
        for i in 0..n {
            out.push(b.load(Self::OPS.saturating_add(i)))?;
        }
        Ok(true)
    }

    /// Every published `{ip, set address}` pair with a set, for checking.
    pub fn each_site(&self, mut f: impl FnMut(usize, usize)) {
        let Some(t) = &self.table else {
            return;
        };
        let slots = 1usize.checked_shl(self.bits).unwrap_or(0);
        for i in 0..slots {
            let w = Self::slot_word(i);
            let (ip, set) = (t.load(w), t.load(w.saturating_add(1)));
            if ip != 0 && ip != layout::GONE && set != 0 {
                f(ip, set);
            }
        }
    }

    /// Every ip the table holds a slot for (with a set or not).
    pub fn each_ip(&self, mut f: impl FnMut(usize)) {
        let Some(t) = &self.table else {
            return;
        };
        let slots = 1usize.checked_shl(self.bits).unwrap_or(0);
        for i in 0..slots {
            let ip = t.load(Self::slot_word(i));
            if ip != 0 && ip != layout::GONE {
                f(ip);
            }
        }
    }

    /// A deliberate defect for the test that the checks catch one:
    /// publishes the site at `ip` with a set missing its last ops.
    /// Returns false when the site has no set of two or more ops.
    pub fn break_one(&mut self, ip: usize) -> Result<bool, NoMem> {
        let Some(slot) = self.find(ip) else {
            return Ok(false);
        };
        let cur = self.value(slot);
        let n = self.len_of(cur);
        if cur >= UNKNOWN || n < 2 {
            return Ok(false);
        }
        self.scratch.clear();
        if let Some(b) = block_in(self.sets.items(), cur) {
            for i in 0..n.saturating_sub(1) {
                self.scratch.push(b.load(Self::OPS.saturating_add(i)))?;
            }
        }
        let id = self.intern()?;
        // Bypass the count check on purpose.
        self.set_value(slot, id)?;
        self.publish();
        Ok(true)
    }

    fn fail(&mut self) {
        self.failed = true;
        self.stats.failures = self.stats.failures.saturating_add(1);
        self.clear();
    }

    /// Drops every set and the table: every caller walks. Sites traced
    /// now become unknown when next accounted (their counts no longer
    /// match), so nothing stale is ever published.
    ///
    /// While per-site literals name sets, those sets and the slots that
    /// know the literals stay (the table is no longer published, so no
    /// reader finds it): each literal is then due to go back to the list
    /// ops ([`Sites::literal_due`]), and the last one rewritten clears the
    /// rest.
    pub fn clear(&mut self) {
        self.walk = None;
        self.mem.publish(None);
        if self.stats.literals != 0 {
            let slots = self.logical.items().len();
            for slot in 0..slots {
                let cur = self.value(slot);
                self.adjust(cur, false);
                if let Some(l) = self.logical.items_mut().get_mut(slot) {
                    *l = NONE;
                }
                // No set is wanted now: every literal naming one is due,
                // and its set stale.
                self.restale(slot);
            }
            self.dirty.clear();
            self.memo.clear();
            self.retire_unused();
            self.failed = true;
            return;
        }
        if let Some(t) = self.table.take() {
            self.mem.retire(t.0, Readers::Table);
        }
        let mut sets = self.mem.vec();
        core::mem::swap(&mut sets, &mut self.sets);
        for s in sets.items_mut() {
            if let Some(b) = s.block.take() {
                self.mem.retire(b, s.readers());
            }
        }
        self.logical.clear();
        self.lits.clear();
        self.dirty.clear();
        self.memo.clear();
        self.bits = 0;
        self.used = 0;
        self.stats.sets = 0;
        self.stats.sites = 0;
        self.stats.unknown = 0;
        self.stats.bytes = 0;
    }

    fn slot_word(slot: usize) -> usize {
        layout::TABLE_SLOTS.saturating_add(slot.saturating_mul(2))
    }

    /// The set id the slot's literal names, or [`NONE`].
    fn named(&self, slot: usize) -> u32 {
        self.lits.items().get(slot).map_or(NONE, |&l| l & VALUE)
    }

    /// Keeps the slot's share of the stale count of the set its literal
    /// names: the set is stale while the slot wants another one (its
    /// logical set staged, or published and the literal not rewritten).
    /// Call after every change of the slot's logical word or literal.
    fn restale(&mut self, slot: usize) {
        let Some(&raw) = self.lits.items().get(slot) else {
            return;
        };
        let id = raw & VALUE;
        let was = raw & DIRTY != 0;
        let now = id != NONE && self.wanted(slot) != id;
        if was == now {
            return;
        }
        if let Some(l) = self.lits.items_mut().get_mut(slot) {
            *l = if now { id | DIRTY } else { id };
        }
        self.count_stale(id, now);
    }

    /// One more (`up`) or one less slot makes the set `id` stale; stores
    /// its stale word when that changes whether it is.
    fn count_stale(&mut self, id: u32, up: bool) {
        let Some(s) = self.sets.items_mut().get_mut(id as usize) else {
            return;
        };
        let before = s.stale;
        s.stale = if up {
            before.saturating_add(1)
        } else {
            before.saturating_sub(1)
        };
        if (before == 0) != (s.stale == 0) {
            if let Some(b) = &s.block {
                // Release: a reader that sees the set unmarked again sees
                // the literals rewritten before it.
                b.store(
                    layout::set_stale(M::SET_HEADER),
                    usize::from(s.stale != 0),
                    &self.writer,
                );
            }
        }
    }

    /// The slot's literal names `id` now (or nothing: [`NONE`]): moves the
    /// literal counts, and retires a set nothing names any more.
    fn name(&mut self, slot: usize, id: u32) {
        let raw = self.lits.items().get(slot).copied().unwrap_or(NONE);
        let old = raw & VALUE;
        if old == id {
            return;
        }
        let Some(l) = self.lits.items_mut().get_mut(slot) else {
            return;
        };
        *l = id;
        if raw & DIRTY != 0 {
            self.count_stale(old, false);
        }
        if let Some(s) = self.sets.items_mut().get_mut(id as usize) {
            s.lits = s.lits.saturating_add(1);
            s.named = true;
            self.stats.literals = self.stats.literals.saturating_add(1);
        }
        if let Some(s) = self.sets.items_mut().get_mut(old as usize) {
            s.lits = s.lits.saturating_sub(1);
            self.stats.literals = self.stats.literals.saturating_sub(1);
            if s.lits == 0 && s.refs == 0 {
                if let Some(b) = s.block.take() {
                    self.stats.sets = self.stats.sets.saturating_sub(1);
                    self.stats.bytes = self.stats.bytes.saturating_sub(words_bytes(b.words()));
                    self.stats.retired = self.stats.retired.saturating_add(1);
                    self.mem.retire(b, s.readers());
                }
            }
        }
        self.restale(slot);
        if self.failed && self.stats.literals == 0 {
            // The last literal of a cleared registry has moved on.
            self.clear();
        }
    }

    /// The set id a site's literal is to name: its published logical set
    /// (not one staged for the next publish) if it has two or more ops, or
    /// [`NONE`].
    fn wanted(&self, slot: usize) -> u32 {
        match self.logical.items().get(slot) {
            // A literal names a set of two or more ops: one ops is named
            // itself, or the site goes through the list.
            Some(&w) if w & DIRTY == 0 && w < UNKNOWN && self.len_of(w) > 1 => w,
            _ => NONE,
        }
    }

    fn value(&self, slot: usize) -> u32 {
        self.logical.items().get(slot).map_or(NONE, |v| v & VALUE)
    }

    fn block_of(&self, id: u32) -> Option<&M::Block> {
        block_in(self.sets.items(), id)
    }

    fn len_of(&self, id: u32) -> usize {
        self.block_of(id).map_or(0, |b| b.load(Self::LEN))
    }

    fn find(&self, ip: usize) -> Option<usize> {
        self.probe(ip).ok()
    }

    /// One probe for `ip`: `Ok` with its slot, or `Err` with the slot an
    /// insertion would take (the first slot of a gone site on the probe,
    /// else the empty slot that ends it; `None` without a table).
    fn probe(&self, ip: usize) -> Result<usize, Option<usize>> {
        if ip == 0 || ip == layout::GONE {
            return Err(None);
        }
        let t = self.table.as_ref().ok_or(None)?;
        let slots = 1usize.checked_shl(self.bits).ok_or(None)?;
        let mut i = home(ip, self.bits);
        let mut gone = None;
        for _ in 0..slots {
            match t.load(Self::slot_word(i)) {
                k if k == ip => return Ok(i),
                0 => return Err(gone.or(Some(i))),
                layout::GONE if gone.is_none() => gone = Some(i),
                _ => {}
            }
            i = i.wrapping_add(1) & slots.wrapping_sub(1);
        }
        Err(gone)
    }

    /// A slot for `ip`, which has none; `free` is where its probe ended.
    /// The first slot of a gone site on the probe is reused, so a module
    /// loaded again and again at one address does not lengthen the probe.
    /// The slot's set word is 0 already: a reader finding the ip walks.
    /// Grows the table first if it would pass half full.
    fn insert(&mut self, ip: usize, free: Option<usize>) -> Result<usize, NoMem> {
        let slots = 1usize.checked_shl(self.bits).unwrap_or(0);
        let mut free = free;
        if self.table.is_none() || self.used.saturating_add(1).saturating_mul(2) > slots {
            self.rebuild()?;
            free = self.probe(ip).err().flatten();
        }
        let slot = free.ok_or(NoMem)?;
        let t = self.table.as_ref().ok_or(NoMem)?;
        let w = Self::slot_word(slot);
        if t.load(w) == 0 {
            self.used = self.used.saturating_add(1);
        }
        // Its set word is 0: a reader finding the ip walks, until the
        // publish that orders its set before the set's address. A release
        // store: a reused slot's cleared set word before its new ip.
        t.store(w, ip, &self.writer);
        Ok(slot)
    }

    /// A new table for the live sites, at most a quarter full, published in
    /// place of the old one.
    fn rebuild(&mut self) -> Result<(), NoMem> {
        self.rebuild_for(0)
    }

    /// A new table for the live sites and `more` sites to come: at most a
    /// quarter full now, at most half full with them.
    fn rebuild_for(&mut self, more: usize) -> Result<(), NoMem> {
        let old_slots = match self.table {
            Some(_) => 1usize.checked_shl(self.bits).unwrap_or(0),
            None => 0,
        };
        let mut live = 0usize;
        for i in 0..old_slots {
            if self.value(i) != NONE || self.named(i) != NONE {
                live = live.saturating_add(1);
            }
        }
        let want = live
            .saturating_add(1)
            .saturating_mul(4)
            .max(live.saturating_add(more).saturating_mul(2));
        let mut bits = layout::MIN_BITS;
        while 1usize.checked_shl(bits).unwrap_or(usize::MAX) < want {
            if bits >= layout::MAX_BITS {
                return Err(NoMem);
            }
            bits = bits.saturating_add(1);
        }
        let slots = 1usize.checked_shl(bits).ok_or(NoMem)?;
        let words = Self::slot_word(slots);
        let t = self.mem.alloc(words).ok_or(NoMem)?;
        // No reader finds the table before `Mem::publish`, which orders
        // its words before its address.
        t.put(
            layout::TABLE_SHIFT,
            64usize.saturating_sub(bits as usize),
            &self.writer,
        );
        t.put(layout::TABLE_MASK, slots.wrapping_sub(1), &self.writer);
        let mut logical: M::Vec<u32> = self.mem.vec();
        let mut lits: M::Vec<u32> = self.mem.vec();
        let mut dirty: M::Vec<u32> = self.mem.vec();
        logical.reserve(slots)?;
        for _ in 0..slots {
            logical.push(NONE)?;
        }
        // Only sets with a header can be named by a literal.
        if M::SET_HEADER > 0 {
            lits.reserve(slots)?;
            for _ in 0..slots {
                lits.push(NONE)?;
            }
        }
        let mut used = 0usize;
        for i in 0..old_slots {
            let word = self.logical.items().get(i).copied().unwrap_or(NONE);
            // With its stale bit: the slot moves, its share of the count
            // with it.
            let lit = self.lits.items().get(i).copied().unwrap_or(NONE);
            if word & VALUE == NONE && lit & VALUE == NONE {
                continue;
            }
            let Some(old) = &self.table else {
                break;
            };
            let ip = old.load(Self::slot_word(i));
            let mut j = home(ip, bits);
            let mut placed = false;
            for _ in 0..slots {
                let w = Self::slot_word(j);
                if t.load(w) == 0 {
                    let addr = if word & DIRTY != 0 {
                        0
                    } else {
                        self.block_of(word & VALUE).map_or(0, |b| b.addr())
                    };
                    t.put(w.saturating_add(1), addr, &self.writer);
                    t.put(w, ip, &self.writer);
                    if let Some(l) = logical.items_mut().get_mut(j) {
                        *l = word;
                    }
                    if let Some(l) = lits.items_mut().get_mut(j) {
                        *l = lit;
                    }
                    if word & DIRTY != 0 {
                        dirty.push(j as u32)?;
                    }
                    used = used.saturating_add(1);
                    placed = true;
                    break;
                }
                j = j.wrapping_add(1) & slots.wrapping_sub(1);
            }
            if !placed {
                return Err(NoMem);
            }
        }
        // Its shift and mask are written for its length: a table now.
        let t = Table(t);
        self.mem.publish(Some(&t));
        if let Some(old) = self.table.replace(t) {
            self.stats.bytes = self.stats.bytes.saturating_sub(words_bytes(old.words()));
            self.mem.retire(old.0, Readers::Table);
            self.stats.retired = self.stats.retired.saturating_add(1);
        }
        self.stats.bytes = self.stats.bytes.saturating_add(words_bytes(words));
        self.stats.tables = self.stats.tables.saturating_add(1);
        self.logical = logical;
        self.lits = lits;
        self.dirty = dirty;
        self.bits = bits;
        self.used = used;
        Ok(())
    }

    /// Changes a slot's logical set, staging it for the next publish.
    fn set_value(&mut self, slot: usize, next: u32) -> Result<(), NoMem> {
        let word = self.logical.items().get(slot).copied().ok_or(NoMem)?;
        let cur = word & VALUE;
        if cur == next {
            return Ok(());
        }
        if word & DIRTY == 0 {
            self.dirty.push(slot as u32)?;
        }
        self.adjust(cur, false);
        self.adjust(next, true);
        if let Some(l) = self.logical.items_mut().get_mut(slot) {
            *l = next | DIRTY;
        }
        // A literal naming a set makes it stale from now on: the ops
        // leaving this site must not be called through it.
        self.restale(slot);
        if let Some(t) = &self.table {
            // A site just inserted, or staged already, has no set word.
            // A reader sees the old set or 0 (it walks): either is right
            // until the operation's grace periods.
            let w = Self::slot_word(slot).saturating_add(1);
            if t.load(w) != 0 {
                t.put(w, 0, &self.writer);
            }
        }
        self.stats.updates = self.stats.updates.saturating_add(1);
        Ok(())
    }

    fn adjust(&mut self, id: u32, up: bool) {
        match id {
            NONE => {}
            UNKNOWN => {
                self.stats.unknown = if up {
                    self.stats.unknown.saturating_add(1)
                } else {
                    self.stats.unknown.saturating_sub(1)
                };
            }
            id => {
                if let Some(s) = self.sets.items_mut().get_mut(id as usize) {
                    s.refs = if up {
                        s.refs.saturating_add(1)
                    } else {
                        s.refs.saturating_sub(1)
                    };
                }
                self.stats.sites = if up {
                    self.stats.sites.saturating_add(1)
                } else {
                    self.stats.sites.saturating_sub(1)
                };
            }
        }
    }

    /// The set `cur` with the walking ops added or removed (memoised for
    /// the walk).
    fn transition(&mut self, cur: u32, op: usize, inc: bool) -> Result<u32, NoMem> {
        if let Some(&(_, to)) = self.memo.items().iter().find(|(from, _)| *from == cur) {
            return Ok(to);
        }
        self.scratch.clear();
        let mut had = false;
        if let Some(b) = block_in(self.sets.items(), cur) {
            for i in 0..b.load(Self::LEN) {
                let o = b.load(Self::OPS.saturating_add(i));
                if o == op {
                    had = true;
                } else {
                    self.scratch.push(o)?;
                }
            }
        }
        let to = if had == inc {
            // Added twice, or removed without being there.
            UNKNOWN
        } else if inc {
            self.scratch.push(op)?;
            if self.sort_by_list() {
                self.intern()?
            } else {
                UNKNOWN
            }
        } else if self.scratch.items().is_empty() {
            NONE
        } else {
            self.intern()?
        };
        self.memo.push((cur, to))?;
        Ok(to)
    }

    /// Sorts `scratch` into ops-list order; false if an ops is not on the
    /// list.
    fn sort_by_list(&mut self) -> bool {
        let order = self.order.items();
        let rank = |o: usize| order.iter().position(|&x| x == o);
        if self.scratch.items().iter().any(|&o| rank(o).is_none()) {
            return false;
        }
        // Insertion sort: sets are short and arrive nearly sorted.
        let s = self.scratch.items_mut();
        for i in 1..s.len() {
            let mut j = i;
            while j > 0 {
                let (Some(&a), Some(&b)) = (s.get(j.wrapping_sub(1)), s.get(j)) else {
                    break;
                };
                if rank(a) <= rank(b) {
                    break;
                }
                s.swap(j.wrapping_sub(1), j);
                j -= 1;
            }
        }
        true
    }

    /// The id of the set holding exactly `scratch`, made if new.
    fn intern(&mut self) -> Result<u32, NoMem> {
        let ops = self.scratch.items();
        let hash = set_hash(ops);
        for (id, s) in self.sets.items().iter().enumerate() {
            let Some(b) = &s.block else {
                continue;
            };
            if s.hash != hash || b.load(Self::LEN) != ops.len() {
                continue;
            }
            let same = ops
                .iter()
                .enumerate()
                .all(|(i, &o)| b.load(Self::OPS.saturating_add(i)) == o);
            if same {
                return Ok(id as u32);
            }
        }
        if !self.mem.may_grow() {
            // Not a failure: this site walks, the others keep their sets.
            self.stats.deferred = self.stats.deferred.saturating_add(1);
            return Ok(UNKNOWN);
        }
        let words = Self::OPS.saturating_add(ops.len());
        let b = self.mem.alloc(words).ok_or(NoMem)?;
        for (i, &o) in ops.iter().enumerate() {
            b.put(Self::OPS.saturating_add(i), o, &self.writer);
        }
        b.put(Self::LEN, ops.len(), &self.writer);
        self.mem.init_set(&b);
        let rec = SetRec {
            block: Some(b),
            refs: 0,
            lits: 0,
            named: false,
            stale: 0,
            hash,
        };
        self.stats.sets = self.stats.sets.saturating_add(1);
        self.stats.bytes = self.stats.bytes.saturating_add(words_bytes(words));
        let free = self.sets.items().iter().position(|s| s.block.is_none());
        let id = match free {
            Some(id) => {
                if let Some(s) = self.sets.items_mut().get_mut(id) {
                    *s = rec;
                }
                id
            }
            None => {
                self.sets.push(rec)?;
                self.sets.items().len().saturating_sub(1)
            }
        };
        if id as u32 >= UNKNOWN {
            return Err(NoMem);
        }
        Ok(id as u32)
    }

    /// Retires the sets no slot and no literal names.
    fn retire_unused(&mut self) {
        for s in self.sets.items_mut() {
            if s.refs != 0 || s.lits != 0 {
                continue;
            }
            if let Some(b) = s.block.take() {
                self.stats.sets = self.stats.sets.saturating_sub(1);
                self.stats.bytes = self.stats.bytes.saturating_sub(words_bytes(b.words()));
                self.stats.retired = self.stats.retired.saturating_add(1);
                self.mem.retire(b, s.readers());
            }
        }
    }
}
