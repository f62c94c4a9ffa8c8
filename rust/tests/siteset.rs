// SPDX-License-Identifier: GPL-2.0

//! `rfcore::siteset` against a model: random registrations,
//! unregistrations, filter changes and module unloads and reloads, each
//! published set compared with the set computed from the ops' filters in
//! list order, the staged state checked between the two walks of a filter
//! change, and a deliberate defect caught.

use super::util::Rng;
use crate::rfcore::siteset::{
    layout,
    Block,
    Mem,
    NoMem,
    Readers,
    Seq,
    Sites,
    Table,
    Writer, //
};
use std::boxed::Box;
use std::collections::{
    BTreeMap,
    BTreeSet, //
};
use std::format;
use std::string::String;
use std::sync::atomic::{
    AtomicUsize,
    Ordering, //
};
use std::vec::Vec;

impl<T> Seq<T> for Vec<T> {
    fn items(&self) -> &[T] {
        self
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
    fn push(&mut self, v: T) -> Result<(), NoMem> {
        Vec::push(self, v);
        Ok(())
    }
    fn clear(&mut self) {
        Vec::clear(self)
    }
    fn reserve(&mut self, n: usize) -> Result<(), NoMem> {
        Vec::reserve(self, n);
        Ok(())
    }
}

/// A block on the host: its address is its words' address.
struct HBlock(Box<[AtomicUsize]>);

impl Block for HBlock {
    fn words(&self) -> usize {
        self.0.len()
    }
    fn load(&self, i: usize) -> usize {
        self.0.get(i).map_or(0, |w| w.load(Ordering::Acquire))
    }
    fn store(&self, i: usize, v: usize, _: &Writer) {
        if let Some(w) = self.0.get(i) {
            w.store(v, Ordering::Release)
        }
    }
    fn put(&self, i: usize, v: usize, _: &Writer) {
        if let Some(w) = self.0.get(i) {
            w.store(v, Ordering::Relaxed)
        }
    }
    fn addr(&self) -> usize {
        self.0.as_ptr() as usize
    }
}

/// Host memory: counts allocations, keeps retired blocks (so that their
/// addresses are not reused while a test looks) and can fail on request.
#[derive(Default)]
struct HMem<const H: usize = 0> {
    allocs: usize,
    fail_after: Option<usize>,
    retired: Vec<(HBlock, Readers)>,
    /// Each set block's address, header mark, length and first ops, as
    /// `init_set` saw it.
    inited: Vec<(usize, usize, usize, usize)>,
    published: usize,
    publishes: usize,
    /// [`Mem::may_grow`] answers no (retired blocks piling up).
    backlogged: std::cell::Cell<bool>,
}

/// What a host set header holds in its first word (the kernel's holds
/// the set function there).
const HEADER_MARK: usize = 0x5e7_f0f5;

impl<const H: usize> Mem for HMem<H> {
    type Block = HBlock;
    const SET_HEADER: usize = H;
    fn init_set(&mut self, b: &HBlock) {
        // The header's last word is the stale mark, not the ops'.
        if H > 1 {
            // The kernel's shim writes its header through a pointer, not
            // through `Block`, as this does.
            b.0[layout::SET_FOPS].store(HEADER_MARK, Ordering::Release);
        }
        self.inited.push((
            b.addr(),
            b.load(layout::SET_FOPS),
            b.load(layout::set_len(H)),
            b.load(layout::set_ops(H)),
        ));
    }
    type Vec<T> = Vec<T>;
    fn vec<T>(&self) -> Vec<T> {
        Vec::new()
    }
    fn alloc(&mut self, words: usize) -> Option<HBlock> {
        if self.fail_after.is_some_and(|n| self.allocs >= n) {
            return None;
        }
        self.allocs += 1;
        Some(HBlock((0..words).map(|_| AtomicUsize::new(0)).collect()))
    }
    fn retire(&mut self, b: HBlock, readers: Readers) {
        self.retired.push((b, readers));
    }
    fn publish(&mut self, table: Option<&Table<HBlock>>) {
        self.published = table.map_or(0, |t| t.addr());
        self.publishes += 1;
    }
    fn order_stores(&self) {
        std::sync::atomic::fence(Ordering::Release);
    }
    fn may_grow(&self) -> bool {
        !self.backlogged.get()
    }
}

const BASE: usize = 0xffff_ffff_8100_0000;

fn ip(i: usize) -> usize {
    BASE + 16 * i
}

fn op(i: usize) -> usize {
    0xffff_8880_0000_0000 + 0x100 * (i + 1)
}

/// The registry as the model sees it.
struct World<const H: usize = 0> {
    sites: Sites<HMem<H>>,
    /// The ops list, head first.
    list: Vec<usize>,
    /// Each registered ops' filter.
    filter: BTreeMap<usize, BTreeSet<usize>>,
    /// Each live record's user count.
    count: BTreeMap<usize, u32>,
    /// Records whose counts were set without a walk (module enable).
    unwalked: BTreeSet<usize>,
    /// Every block a literal has named.
    named_ever: BTreeSet<usize>,
    nrec: usize,
}

impl<const H: usize> World<H> {
    fn new(nrec: usize) -> Self {
        World {
            sites: Sites::new(HMem::default()),
            list: Vec::new(),
            filter: BTreeMap::new(),
            count: (0..nrec).map(|i| (ip(i), 0)).collect(),
            unwalked: BTreeSet::new(),
            named_ever: BTreeSet::new(),
            nrec,
        }
    }

    fn walk(&mut self, o: usize, inc: bool, ips: &BTreeSet<usize>) {
        self.sites.begin_walk(o, inc, self.list.iter().copied());
        if inc {
            self.sites.expect(ips.len(), self.count.len());
        }
        for &i in ips {
            let Some(c) = self.count.get_mut(&i) else {
                continue;
            };
            *c = if inc { *c + 1 } else { *c - 1 };
            self.sites.account(i, *c);
        }
        self.sites.end_walk();
    }

    fn register(&mut self, o: usize, f: BTreeSet<usize>) {
        self.list.insert(0, o);
        self.walk(o, true, &f);
        self.filter.insert(o, f);
        self.sites.publish();
    }

    fn unregister(&mut self, o: usize) {
        self.list.retain(|&x| x != o);
        let f = self.filter.remove(&o).unwrap();
        self.walk(o, false, &f);
        self.sites.publish();
    }

    /// A filter change; checks the staged state between its two walks.
    fn change(&mut self, o: usize, f: BTreeSet<usize>) -> Result<(), String> {
        let before: BTreeMap<usize, Vec<usize>> =
            self.count.keys().map(|&i| (i, self.expected(i))).collect();
        let old = self.filter.insert(o, BTreeSet::new()).unwrap();
        self.walk(o, false, &old);
        for (&i, want) in &before {
            if let Some(got) = self.published(i) {
                if &got != want {
                    return Err(format!("mid-change {i:#x}: {got:x?}, before {want:x?}"));
                }
            }
        }
        self.walk(o, true, &f);
        self.filter.insert(o, f);
        self.sites.publish();
        Ok(())
    }

    /// Module text at records `lo..hi` freed, then loaded again: the new
    /// records are counted by the C module code, not by a walk.
    fn reload(&mut self, lo: usize, hi: usize) {
        for r in lo..hi {
            self.sites.forget(ip(r));
            self.count.remove(&ip(r));
        }
        for r in lo..hi {
            let i = ip(r);
            let n = self.filter.values().filter(|f| f.contains(&i)).count() as u32;
            self.count.insert(i, n);
            if n > 0 {
                self.unwalked.insert(i);
            }
        }
    }

    fn expected(&self, i: usize) -> Vec<usize> {
        self.list
            .iter()
            .copied()
            .filter(|o| self.filter.get(o).is_some_and(|f| f.contains(&i)))
            .collect()
    }

    fn published(&self, i: usize) -> Option<Vec<usize>> {
        let addr = self.sites.lookup(i)?;
        let mut out = Vec::new();
        assert!(
            self.sites.ops_of(addr, &mut out).unwrap(),
            "{i:#x} names a dead set"
        );
        Some(out)
    }

    /// Every site's published set is exact; a site without one is allowed
    /// only where a count was made without a walk.
    fn check(&mut self) -> Result<(), String> {
        for r in 0..self.nrec {
            let i = ip(r);
            let want = self.expected(i);
            if self.count.get(&i) == Some(&0) {
                self.unwalked.remove(&i);
            }
            match self.published(i) {
                Some(got) if got != want => {
                    return Err(format!("{i:#x}: published {got:x?}, want {want:x?}"))
                }
                Some(_) => {}
                None if want.is_empty() || self.unwalked.contains(&i) => {}
                None => return Err(format!("{i:#x}: no set, want {want:x?}")),
            }
        }
        // No retired block is still reachable.
        let retired: BTreeSet<usize> = self
            .sites
            .mem()
            .retired
            .iter()
            .map(|(b, _)| b.addr())
            .collect();
        let mut bad = None;
        self.sites.each_site(|i, set| {
            if retired.contains(&set) {
                bad = Some(i);
            }
        });
        if let Some(i) = bad {
            return Err(format!("{i:#x} names a retired set"));
        }
        if retired.contains(&self.sites.mem().published) {
            return Err(String::from("the published table is retired"));
        }
        Ok(())
    }
}

fn random_filter(rng: &mut Rng, nrec: usize) -> BTreeSet<usize> {
    match rng.below(4) {
        0 => (0..nrec).map(ip).collect(),
        1 => {
            let lo = rng.below(nrec as u64) as usize;
            let hi = (lo + 1 + rng.below(40) as usize).min(nrec);
            (lo..hi).map(ip).collect()
        }
        _ => (0..1 + rng.below(20))
            .map(|_| ip(rng.below(nrec as u64) as usize))
            .collect(),
    }
}

fn run_case(seed: u64, steps: usize) -> Result<(Sites<HMem>, usize), String> {
    let mut rng = Rng::new(seed);
    let nrec = 50 + rng.below(300) as usize;
    let mut w = World::<0>::new(nrec);
    let mut published_sites = 0;
    for step in 0..steps {
        if rng.chance(1, 40) {
            // Everything dropped (a module's ips could not be listed): the
            // traced sites are unknown until their counts reach 0.
            w.sites.clear();
            let traced: Vec<usize> = w
                .count
                .iter()
                .filter(|(_, &c)| c > 0)
                .map(|(&i, _)| i)
                .collect();
            w.unwalked.extend(traced);
        }
        let o = op(rng.below(12) as usize);
        let on = w.filter.contains_key(&o);
        match (on, rng.below(10)) {
            (false, _) => {
                let f = random_filter(&mut rng, nrec);
                w.register(o, f);
            }
            (true, 0..=3) => w.unregister(o),
            (true, 4..=7) => {
                let f = random_filter(&mut rng, nrec);
                w.change(o, f).map_err(|e| format!("step {step}: {e}"))?;
            }
            (true, _) => {
                let lo = rng.below(nrec as u64) as usize;
                let hi = (lo + 1 + rng.below(10) as usize).min(nrec);
                w.reload(lo, hi);
            }
        }
        w.check()
            .map_err(|e| format!("seed {seed} step {step}: {e}"))?;
        let mut n = 0;
        w.sites.each_site(|_, _| n += 1);
        published_sites += n;
    }
    Ok((w.sites, published_sites))
}

#[test]
fn random_registry_sequences_publish_exact_sets() {
    let cases: u64 = 300;
    let mut published = 0;
    for seed in 0..cases {
        let (sites, n) = run_case(seed, 60).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sites.failed());
        published += n;
    }
    // The sets are really used: most checks found one.
    assert!(
        published > 100_000,
        "only {published} published sites checked"
    );
}

#[test]
fn a_set_missing_an_ops_is_caught() {
    let mut w = World::<0>::new(64);
    w.register(op(0), (0..64).map(ip).collect());
    w.register(op(1), (0..32).map(ip).collect());
    w.check().unwrap();
    assert!(w.sites.break_one(ip(3)).unwrap());
    let e = w.check().unwrap_err();
    assert!(e.contains(&format!("{:#x}", ip(3))), "{e}");
}

#[test]
fn sets_are_interned_and_retired() {
    let mut w = World::<0>::new(2000);
    let all: BTreeSet<usize> = (0..2000).map(ip).collect();
    w.register(op(0), all.clone());
    assert_eq!(w.sites.stats().sets, 1);
    w.register(op(1), all.clone());
    // {op1, op0} on every site; {op0} retired.
    assert_eq!(w.sites.stats().sets, 1);
    assert_eq!(w.sites.stats().sites, 2000);
    w.register(op(2), (0..10).map(ip).collect());
    assert_eq!(w.sites.stats().sets, 2);
    w.check().unwrap();
    let got = w.published(ip(5)).unwrap();
    assert_eq!(got, [op(2), op(1), op(0)]);
    w.unregister(op(1));
    w.unregister(op(2));
    w.unregister(op(0));
    w.check().unwrap();
    let s = w.sites.stats();
    assert_eq!((s.sets, s.sites, s.unknown), (0, 0, 0));
    // Made once, before the first walk (4096 slots, at most half full with
    // its 2000 sites), and gone with the last ops: nothing is left.
    assert_eq!(s.tables, 1, "{s:?}");
    assert_eq!(s.bytes, 0, "{s:?}");
    assert_eq!(w.sites.mem().published, 0);
    for i in 0..2000 {
        assert_eq!(w.sites.lookup(ip(i)), None);
    }
}

#[test]
fn the_table_shrinks_with_what_is_traced() {
    // Every function, then one: the table is rebuilt for the one site.
    let mut w = World::<0>::new(20_000);
    w.register(op(0), (0..20_000).map(ip).collect());
    let big = w.sites.stats().bytes;
    assert!(big > 8 * 2 * 32_768, "{big}");
    w.register(op(1), [ip(7)].into_iter().collect());
    w.unregister(op(0));
    w.check().unwrap();
    let s = w.sites.stats();
    assert_eq!((s.sets, s.sites), (1, 1), "{s:?}");
    // A 16-slot table and one set: under 4 KiB, and what readers find.
    assert!(s.bytes < 4096, "{s:?}");
    assert_eq!(w.published(ip(7)).unwrap(), [op(1)]);
    w.unregister(op(1));
    w.check().unwrap();
    assert_eq!(w.sites.stats().bytes, 0);
    assert_eq!(w.sites.mem().published, 0);
}

#[test]
fn a_filter_change_never_publishes_its_intermediate_set() {
    let mut w = World::<0>::new(16);
    w.register(op(0), (0..16).map(ip).collect());
    w.register(op(1), (0..16).map(ip).collect());
    let before = w.sites.stats().updates;
    // Same filter back: every site loses op(1) then regains it.
    w.change(op(1), (0..16).map(ip).collect()).unwrap();
    w.check().unwrap();
    assert!(w.sites.stats().updates > before);
    assert_eq!(w.published(ip(0)).unwrap(), [op(1), op(0)]);
}

#[test]
fn out_of_memory_clears_the_table_and_never_panics() {
    for n in 0..12 {
        let mut sites = Sites::new(HMem::<0> {
            fail_after: Some(n),
            ..HMem::default()
        });
        let list = [op(1), op(0)];
        for (k, &o) in list.iter().rev().enumerate() {
            sites.begin_walk(o, true, list[list.len() - 1 - k..].iter().copied());
            for i in 0..3000 {
                sites.account(ip(i), k as u32 + 1);
            }
            sites.end_walk();
            sites.publish();
        }
        if sites.failed() {
            assert_eq!(sites.mem().published, 0);
            assert_eq!(sites.lookup(ip(1)), None);
            assert_eq!(sites.stats().bytes, 0);
        } else {
            let addr = sites.lookup(ip(1)).unwrap();
            let mut out = Vec::new();
            assert!(sites.ops_of(addr, &mut out).unwrap());
            assert_eq!(out, list);
        }
    }
}

#[test]
fn the_probe_the_c_reader_makes_is_the_one_the_table_is_built_for() {
    // The C reader computes the home slot the same way; pin the hash.
    assert_eq!(crate::rfcore::siteset::home(0, 10), 0);
    assert_eq!(
        crate::rfcore::siteset::home(0xffff_ffff_8100_0010, 10),
        ((0xffff_ffff_8100_0010u64.wrapping_mul(layout::HASH_MUL)) >> 54) as usize
    );
}

#[test]
fn a_module_loaded_again_and_again_reuses_its_gone_slots() {
    let mut w = World::<0>::new(10);
    w.register(op(0), (0..10).map(ip).collect());
    w.register(op(1), (0..10).map(ip).collect());
    for _ in 0..200 {
        // Unloaded, loaded at the same address, its sites walked again.
        w.reload(0, 10);
        w.unregister(op(1));
        w.register(op(1), (0..10).map(ip).collect());
        w.check().unwrap();
    }
    // 2,000 sites made and gone: without reuse the 1,024-slot table would
    // have grown at 512.
    assert_eq!(w.sites.stats().tables, 1);
}

#[test]
fn a_tracer_switched_on_and_off_frees_its_table() {
    // The function tracer on a 1000-function filter, on and off again:
    // the table is built once per switch on, sized for the filter, and
    // gone after each switch off.
    let mut w = World::<0>::new(3000);
    let filter: BTreeSet<usize> = (0..1000).map(|i| ip(3 * i)).collect();
    for _ in 0..20 {
        w.register(op(0), filter.clone());
        w.check().unwrap();
        assert_eq!(w.sites.stats().tables, w.sites.stats().retired / 2 + 1);
        w.unregister(op(0));
        w.check().unwrap();
        assert_eq!(w.sites.stats().bytes, 0);
    }
    assert_eq!(w.sites.stats().tables, 20, "{:?}", w.sites.stats());
    // Other sites come: the table grows once for the live ones.
    let other: BTreeSet<usize> = (0..1000).map(|i| ip(3 * i + 1)).collect();
    w.register(op(0), filter);
    w.register(op(1), other);
    w.check().unwrap();
    let s = w.sites.stats();
    assert_eq!((s.sites, s.tables), (2000, 22), "{s:?}");
}

// ---------------------------------------------------------------------
// Per-site literals naming sets (`CALL_OPS` architectures).

/// What the update pass does with the literals after an operation: a site
/// with two or more ops names its published set (or the list ops, 0, when
/// it has none), any other site names no set. Returns how many literals
/// were written. Checks that `literal_due` says exactly which.
fn literal_pass<const H: usize>(
    w: &mut World<H>,
    lits: &mut BTreeMap<usize, usize>,
) -> Result<usize, String> {
    let mut written = 0;
    let ips: Vec<(usize, u32)> = w.count.iter().map(|(&i, &c)| (i, c)).collect();
    for (i, c) in ips {
        let target = if c > 1 {
            w.sites.literal_want(i).unwrap_or(0)
        } else {
            0
        };
        let now = lits.get(&i).copied().unwrap_or(0);
        if c > 1 && w.sites.literal_due(i) != (now != target) {
            return Err(format!(
                "{i:#x}: literal_due {} but the literal names {now:#x}, wants {target:#x}",
                w.sites.literal_due(i)
            ));
        }
        if now != target {
            if target == 0 {
                lits.remove(&i);
            } else {
                lits.insert(i, target);
            }
            w.sites.literal_written(i, target);
            if target != 0 {
                w.named_ever.insert(target);
            }
            written += 1;
        }
    }
    Ok(written)
}

/// No literal names a retired block, every literal of a site with a
/// published set names that set, and the counts agree.
fn check_literals<const H: usize>(
    w: &mut World<H>,
    lits: &BTreeMap<usize, usize>,
    settled: bool,
) -> Result<(), String> {
    let retired: BTreeSet<usize> = w
        .sites
        .mem()
        .retired
        .iter()
        .map(|(b, _)| b.addr())
        .collect();
    for (b, r) in &w.sites.mem().retired {
        if *r == Readers::Table && w.named_ever.contains(&b.addr()) {
            return Err(format!(
                "{:#x}: a literal named it, and it was retired for the table's readers only",
                b.addr()
            ));
        }
    }
    for (&i, &addr) in lits {
        if retired.contains(&addr) {
            return Err(format!("{i:#x}: its literal names a retired set {addr:#x}"));
        }
        let mut out = Vec::new();
        if !w.sites.ops_of(addr, &mut out).unwrap() && !w.sites.failed() {
            return Err(format!("{i:#x}: its literal names no live set"));
        }
        if let Some(p) = w.sites.lookup(i).filter(|_| settled) {
            if p != addr {
                return Err(format!("{i:#x}: literal {addr:#x}, published {p:#x}"));
            }
        }
    }
    let mut known = BTreeMap::new();
    w.sites.each_literal(|i, a| {
        known.insert(i, a);
    });
    if &known != lits {
        return Err(format!(
            "the sites know {known:x?}, the literals are {lits:x?}"
        ));
    }
    if w.sites.stats().literals != lits.len() as u64 {
        return Err(format!(
            "{} literals counted, {} named",
            w.sites.stats().literals,
            lits.len()
        ));
    }
    Ok(())
}

/// Issue 55, review item 1: what a call through a literal runs. A set
/// that is not marked stale is called as it is, so it must hold only ops
/// that trace the site now; a stale one walks the list (the current
/// filters). An ops that left a site is never called there through a
/// literal, from the moment its accounting walk staged the site.
fn check_no_stray_call<const H: usize>(
    w: &World<H>,
    lits: &BTreeMap<usize, usize>,
) -> Result<(), String> {
    w.sites
        .check_stale()
        .map_err(|a| format!("stale marks wrong at {a:#x}"))?;
    for (&i, &addr) in lits {
        if w.sites.is_stale(addr) {
            continue;
        }
        let mut out = Vec::new();
        if !w.sites.ops_of(addr, &mut out).unwrap() {
            continue;
        }
        let want = w.expected(i);
        if let Some(o) = out.iter().find(|o| !want.contains(o)) {
            return Err(format!(
                "{i:#x}: its literal's set {out:x?} is not stale and calls {o:#x}, which left the site (wants {want:x?})"
            ));
        }
    }
    Ok(())
}

fn run_literal_case<const H: usize>(seed: u64, steps: usize) -> Result<usize, String> {
    let mut rng = Rng::new(seed);
    let nrec = 30 + rng.below(200) as usize;
    let mut w = World::<H>::new(nrec);
    let mut lits = BTreeMap::new();
    let mut written = 0;
    for step in 0..steps {
        let e = |m: String| format!("seed {seed} step {step}: {m}");
        if rng.chance(1, 60) {
            w.sites.clear();
            let traced: Vec<usize> = w
                .count
                .iter()
                .filter(|(_, &c)| c > 0)
                .map(|(&i, _)| i)
                .collect();
            w.unwalked.extend(traced);
        }
        let o = op(rng.below(10) as usize);
        let on = w.filter.contains_key(&o);
        match (on, rng.below(10)) {
            (false, _) => {
                let f = random_filter(&mut rng, nrec);
                w.register(o, f);
            }
            (true, 0..=3) => w.unregister(o),
            (true, 4..=7) => {
                let f = random_filter(&mut rng, nrec);
                w.change(o, f).map_err(e)?;
            }
            (true, _) => {
                let lo = rng.below(nrec as u64) as usize;
                let hi = (lo + 1 + rng.below(10) as usize).min(nrec);
                // The text goes, and its literals with it.
                for r in lo..hi {
                    lits.remove(&ip(r));
                }
                w.reload(lo, hi);
            }
        }
        // Between the operation and its pass the literals may name sets
        // no slot names any more: those must still be alive, and no
        // literal may call an ops that left its site.
        check_literals(&mut w, &lits, false).map_err(e)?;
        check_no_stray_call(&w, &lits).map_err(e)?;
        written += literal_pass(&mut w, &mut lits).map_err(e)?;
        check_literals(&mut w, &lits, true).map_err(e)?;
        check_no_stray_call(&w, &lits).map_err(e)?;
        // A second pass has nothing to do.
        if literal_pass(&mut w, &mut lits).map_err(e)? != 0 {
            return Err(e(String::from("a second pass wrote literals")));
        }
        if !w.sites.failed() {
            w.check().map_err(e)?;
        }
    }
    // Everything goes: every literal back to the list, every set retired.
    for o in w.filter.keys().copied().collect::<Vec<_>>() {
        w.unregister(o);
    }
    literal_pass(&mut w, &mut lits).map_err(|m| format!("seed {seed} end: {m}"))?;
    if !lits.is_empty() || w.sites.stats().sets != 0 || w.sites.stats().literals != 0 {
        return Err(format!(
            "seed {seed}: left {} literals, {:?}",
            lits.len(),
            w.sites.stats()
        ));
    }
    Ok(written)
}

#[test]
fn literals_never_name_a_retired_set() {
    let mut written = 0;
    for seed in 0..200 {
        written += run_literal_case::<1>(seed, 50).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(written > 10_000, "only {written} literals written");
}

/// Without a set header no literal names a set.
#[test]
fn no_header_no_literal() {
    let mut w = World::<0>::new(8);
    w.register(op(0), (0..8).map(ip).collect());
    w.register(op(1), (0..8).map(ip).collect());
    assert!(w.sites.lookup(ip(1)).is_some());
    assert_eq!(w.sites.literal_want(ip(1)), None);
    assert!(!w.sites.literal_due(ip(1)));
}

/// The same with a set header as large as arm64's `struct ftrace_ops`:
/// every set starts with it, the length and the ops after it.
#[test]
fn sets_with_a_header_for_the_literal() {
    let mut written = 0;
    for seed in 0..50 {
        written += run_literal_case::<30>(seed, 50).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(written > 1_000, "only {written} literals written");
    let mut w = World::<30>::new(16);
    w.register(op(0), (0..16).map(ip).collect());
    w.register(op(1), (0..8).map(ip).collect());
    w.check().unwrap();
    let addr = w.sites.lookup(ip(2)).unwrap();
    let mut out = Vec::new();
    assert!(w.sites.ops_of(addr, &mut out).unwrap());
    assert_eq!(out, [op(1), op(0)]);
    // The header was filled when the set was made, after its length and
    // ops, which sit behind the header.
    let init = w.sites.mem().inited.iter().find(|i| i.0 == addr).copied();
    assert_eq!(init, Some((addr, HEADER_MARK, 2, op(1))));
}

/// Eight sites, `op(0)` on all of them and `op(1)` on the first `m`, after
/// the literal pass: the literals of those `m` sites name `{op1, op0}`.
fn two_ops_named<const H: usize>(m: usize) -> (World<H>, BTreeMap<usize, usize>) {
    let mut w = World::<H>::new(8);
    let mut lits = BTreeMap::new();
    w.register(op(0), (0..8).map(ip).collect());
    w.register(op(1), (0..m).map(ip).collect());
    assert_eq!(literal_pass(&mut w, &mut lits).unwrap(), m);
    (w, lits)
}

#[test]
fn a_set_a_literal_names_outlives_its_last_slot() {
    let (mut w, mut lits) = two_ops_named::<2>(8);
    let first = lits[&ip(0)];
    // A third ops joins: every slot names {op2, op1, op0}; the literals
    // still name {op1, op0}, which must stay until they are rewritten.
    w.register(op(2), (0..8).map(ip).collect());
    let retired = w.sites.stats().retired;
    let mut out = Vec::new();
    assert!(w.sites.ops_of(first, &mut out).unwrap());
    assert_eq!(out, [op(1), op(0)]);
    assert!(w.sites.literal_due(ip(3)));
    assert_eq!(literal_pass(&mut w, &mut lits).unwrap(), 8);
    // Now it goes.
    assert_eq!(w.sites.stats().retired, retired + 1);
    assert!(!w.sites.ops_of(first, &mut out).unwrap());
    check_literals(&mut w, &lits, true).unwrap();
}

#[test]
fn a_cleared_registry_keeps_named_sets_until_their_literals_move() {
    let (mut w, mut lits) = two_ops_named::<2>(4);
    w.sites.clear();
    // Readers see no table; the literals still name a live set.
    assert_eq!(w.sites.mem().published, 0);
    assert_eq!(w.sites.lookup(ip(1)), None);
    check_literals(&mut w, &lits, true).unwrap();
    assert!(w.sites.literal_due(ip(1)));
    assert_eq!(w.sites.literal_want(ip(1)), None);
    assert_eq!(literal_pass(&mut w, &mut lits).unwrap(), 4);
    assert!(lits.is_empty());
    let s = w.sites.stats();
    assert_eq!((s.sets, s.literals, s.bytes), (0, 0, 0), "{s:?}");
}

/// Issue 55, review item 1: a filter change removes an ops from sites
/// whose literal names a set holding it. From the change's first walk
/// (where the C list walk stops calling the ops: the hash swap) the set is
/// stale, so a call through the literal walks the list; it stays stale
/// through a pass that never rewrites the literal (one that ended in
/// `ftrace_bug()`), and is alive for as long as the literal names it. Its
/// mark goes when the last literal naming it wants it again.
#[test]
fn a_literal_set_is_stale_from_the_change_until_its_literal_moves() {
    let (mut w, mut lits) = two_ops_named::<4>(4);
    let s = lits[&ip(0)];
    assert!((0..4).all(|r| lits[&ip(r)] == s));
    assert!(!w.sites.is_stale(s));
    w.sites.check_stale().unwrap();

    // op1 leaves ip(0) only. Its removal walk stages ip(0): the set its
    // literal names is stale at once (for ip(1..4) too: they walk, which
    // is slower, never wrong).
    let new: BTreeSet<usize> = (1..4).map(ip).collect();
    let old = w.filter.insert(op(1), BTreeSet::new()).unwrap();
    w.walk(op(1), false, &old);
    assert!(w.sites.is_stale(s));
    w.sites.check_stale().unwrap();
    check_no_stray_call(&w, &lits).unwrap();
    w.walk(op(1), true, &new);
    w.filter.insert(op(1), new);
    w.sites.publish();
    // Published, the literal not rewritten: still stale.
    assert!(w.sites.is_stale(s));
    check_no_stray_call(&w, &lits).unwrap();

    // The pass fails before it rewrites the literal, and op1 is shut down
    // all the same: the set stays alive (the literal names it) and stale.
    w.unregister(op(1));
    assert!(w.sites.is_stale(s));
    let mut out = Vec::new();
    assert!(w.sites.ops_of(s, &mut out).unwrap());
    assert!(w.sites.mem().retired.iter().all(|(b, _)| b.addr() != s));
    check_no_stray_call(&w, &lits).unwrap();

    // op1 comes back on ip(1..4), which want the set again; ip(0)'s literal
    // still names it: stale until that one moves.
    w.register(op(1), (1..4).map(ip).collect());
    assert_eq!(w.sites.literal_want(ip(1)), Some(s));
    assert!(w.sites.is_stale(s));
    assert_eq!(literal_pass(&mut w, &mut lits).unwrap(), 1);
    assert!(!lits.contains_key(&ip(0)));
    assert!(!w.sites.is_stale(s));
    w.sites.check_stale().unwrap();
    check_no_stray_call(&w, &lits).unwrap();
}

/// Issue 55, review item 6: while retired blocks wait for slow grace
/// periods, no new set is made, so their backlog cannot grow without
/// bound. A site that would need a new set has none (its callers walk,
/// never wrong), the sets that exist stay, and sets come back once the
/// backlog has drained and the sites are accounted again.
#[test]
fn a_retirement_backlog_makes_no_new_set() {
    let mut w = World::<0>::new(16);
    w.register(op(0), (0..16).map(ip).collect());
    w.register(op(1), (0..8).map(ip).collect());
    w.check().unwrap();
    let sets = w.sites.stats().sets;
    let allocs = w.sites.mem().allocs;

    w.sites.mem().backlogged.set(true);
    // op(2) on ip(0..4) would need the set {op2, op1, op0}: none is made.
    w.register(op(2), (0..4).map(ip).collect());
    assert_eq!(w.sites.mem().allocs, allocs);
    assert_eq!(w.sites.stats().sets, sets);
    assert_eq!(w.sites.stats().deferred, 1);
    for r in 0..4 {
        assert_eq!(w.sites.lookup(ip(r)), None, "ip({r}) must walk");
    }
    assert_eq!(w.sites.stats().unknown, 4);
    // The others keep theirs.
    assert_eq!(w.published(ip(5)).unwrap(), [op(1), op(0)]);
    assert_eq!(w.published(ip(12)).unwrap(), [op(0)]);

    // Drained: the walking sites get a set once no ops traces them and they
    // are accounted again.
    w.sites.mem().backlogged.set(false);
    w.unregister(op(2));
    w.unregister(op(1));
    w.unregister(op(0));
    assert_eq!(w.sites.stats().unknown, 0);
    w.register(op(0), (0..16).map(ip).collect());
    w.register(op(2), (0..4).map(ip).collect());
    w.check().unwrap();
    assert_eq!(w.published(ip(1)).unwrap(), [op(2), op(0)]);
}
