// SPDX-License-Identifier: GPL-2.0

//! The filter algebra (`rfcore::filter`) against a plain set model written
//! from the documented semantics of `set_ftrace_filter` and
//! `set_ftrace_notrace`: an empty filter traces every function, a
//! non-empty one only its functions, and notrace wins over the filter.
//!
//! The universe is four named functions plus [`ELSEWHERE`], a function no
//! hash names (one of a module loaded later, say): "every function" covers
//! it, "only these" does not. Every (filter, notrace) pair of the four is
//! checked for one ops (256 pairs), every combination of two sub-ops for a
//! manager (65,536), and a seeded random sample of three sub-ops.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::fmt::Debug;
use std::format;
use std::string::String;
use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::filter::{union_of, FnSet, Hashes, Selection};

const VFS_READ: u64 = 0;
const VFS_WRITE: u64 = 1;
const DO_SYS_OPEN: u64 = 2;
const SCHEDULE: u64 = 3;
/// A function no set in these tests names.
const ELSEWHERE: u64 = 4;
/// Every function the checks ask about.
const IPS: [u64; 5] = [VFS_READ, VFS_WRITE, DO_SYS_OPEN, SCHEDULE, ELSEWHERE];
/// Number of subsets of the four named functions.
const SUBSETS: u8 = 16;

/// The success value of a set operation that cannot fail.
fn ok<T>(r: Result<T, Infallible>) -> T {
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// A set over the four named functions: bit `i` is the function at `i`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Bits(u8);

impl FnSet for Bits {
    type Error = Infallible;
    fn empty() -> Result<Self, Infallible> {
        Ok(Bits(0))
    }
    fn contains(&self, ip: u64) -> bool {
        ip < 8 && self.0 & (1 << ip) != 0
    }
    fn is_empty(&self) -> bool {
        self.0 == 0
    }
    fn union(&self, other: &Self) -> Result<Self, Infallible> {
        Ok(Bits(self.0 | other.0))
    }
    fn intersection(&self, other: &Self) -> Result<Self, Infallible> {
        Ok(Bits(self.0 & other.0))
    }
    fn difference(&self, other: &Self) -> Result<Self, Infallible> {
        Ok(Bits(self.0 & !other.0))
    }
}

/// The same sets as ordered sets of addresses.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Tree(BTreeSet<u64>);

impl FnSet for Tree {
    type Error = Infallible;
    fn empty() -> Result<Self, Infallible> {
        Ok(Tree(BTreeSet::new()))
    }
    fn contains(&self, ip: u64) -> bool {
        self.0.contains(&ip)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn union(&self, other: &Self) -> Result<Self, Infallible> {
        Ok(Tree(self.0.union(&other.0).copied().collect()))
    }
    fn intersection(&self, other: &Self) -> Result<Self, Infallible> {
        Ok(Tree(self.0.intersection(&other.0).copied().collect()))
    }
    fn difference(&self, other: &Self) -> Result<Self, Infallible> {
        Ok(Tree(self.0.difference(&other.0).copied().collect()))
    }
}

/// A set the tests can build from a mask of the four named functions.
trait Mask: FnSet<Error = Infallible> + Clone + PartialEq + Debug {
    fn from_mask(mask: u8) -> Self;
}

impl Mask for Bits {
    fn from_mask(mask: u8) -> Self {
        Bits(mask)
    }
}

impl Mask for Tree {
    fn from_mask(mask: u8) -> Self {
        Tree(
            IPS.iter()
                .copied()
                .filter(|&ip| ip < 8 && mask & (1 << ip) != 0)
                .collect(),
        )
    }
}

/// What a user wrote to `set_ftrace_filter` and `set_ftrace_notrace`, as
/// masks of the named functions.
#[derive(Clone, Copy, Debug)]
struct Pair {
    filter: u8,
    notrace: u8,
}

fn in_mask(mask: u8, ip: u64) -> bool {
    ip < 8 && mask & (1 << ip) != 0
}

/// The model: the documented reading of one user's pair.
fn model(p: Pair, ip: u64) -> bool {
    !in_mask(p.notrace, ip) && (p.filter == 0 || in_mask(p.filter, ip))
}

/// The documented reading of a pair of hashes handed to the kernel.
fn reads<S: FnSet>(filter: &S, notrace: &S, ip: u64) -> bool {
    !notrace.contains(ip) && (filter.is_empty() || filter.contains(ip))
}

fn select<S: Mask>(p: Pair) -> Selection<S> {
    ok(Selection::from_user(
        S::from_mask(p.filter),
        S::from_mask(p.notrace),
    ))
}

/// Checks `sel` against the model `want` (what it must trace), its
/// emptiness, and the round trip through [`Hashes`]. Returns whether the
/// model traces nothing.
fn check<S: Mask>(
    sel: &Selection<S>,
    want: impl Fn(u64) -> bool,
    what: &dyn Fn() -> String,
) -> bool {
    for ip in IPS {
        assert_eq!(
            sel.traces(ip),
            want(ip),
            "traces({ip}): {}: {sel:?}",
            what()
        );
    }
    let nothing = !IPS.iter().any(|&ip| want(ip));
    assert_eq!(sel.is_nothing(), nothing, "is_nothing: {}: {sel:?}", what());

    let hashes = ok(sel.clone().into_hashes());
    match &hashes {
        Hashes::Nothing => assert!(nothing, "Nothing for a selection that traces: {}", what()),
        Hashes::Filter { filter, notrace } => {
            assert!(
                !nothing,
                "a pair of hashes for nothing: {}: {hashes:?}",
                what()
            );
            assert!(
                filter.is_empty() || notrace.is_empty(),
                "both hashes set: {}: {hashes:?}",
                what()
            );
            for ip in IPS {
                assert_eq!(
                    reads(filter, notrace, ip),
                    want(ip),
                    "the kernel reads the pair wrong at {ip}: {}: {hashes:?}",
                    what()
                );
            }
        }
    }
    let back = ok(Selection::from_hashes(hashes));
    assert_eq!(&back, sel, "round trip: {}", what());
    nothing
}

fn pairs() -> impl Iterator<Item = Pair> {
    (0..SUBSETS).flat_map(|filter| (0..SUBSETS).map(move |notrace| Pair { filter, notrace }))
}

fn one_ops<S: Mask>() -> (u64, u64) {
    let (mut cases, mut nothing) = (0u64, 0u64);
    for p in pairs() {
        let sel = select::<S>(p);
        if check(&sel, |ip| model(p, ip), &|| format!("{p:?}")) {
            nothing += 1;
        }
        cases += 1;
    }
    (cases, nothing)
}

#[test]
fn one_ops_every_pair() {
    // A non-empty filter inside notrace is the only way to trace nothing:
    // per function, "in neither", "notrace only" or "both", and not all
    // "in neither" or "notrace only": 3^4 - 2^4.
    let (cases, nothing) = one_ops::<Bits>();
    assert_eq!((cases, nothing), (256, 65));
    assert_eq!(one_ops::<Tree>(), (256, 65));
    note(&format!(
        "filter: {cases} pairs per set type, {nothing} trace nothing"
    ));
}

#[test]
fn manager_two_subops_every_combination() {
    let all: Vec<(Pair, Selection<Bits>)> = pairs().map(|p| (p, select(p))).collect();
    let (mut cases, mut nothing_union, mut nothing_inter) = (0u64, 0u64, 0u64);
    for (pa, a) in &all {
        for (pb, b) in &all {
            let what = || format!("{pa:?} and {pb:?}");
            let any = |ip| model(*pa, ip) || model(*pb, ip);
            let both = |ip| model(*pa, ip) && model(*pb, ip);

            let u = ok(a.union(b));
            if check(&u, any, &what) {
                nothing_union += 1;
            }
            assert_eq!(ok(b.union(a)), u, "union order: {}", what());
            assert_eq!(ok(union_of([a, b])), u, "union_of: {}", what());

            let i = ok(a.intersection(b));
            if check(&i, both, &what) {
                nothing_inter += 1;
            }
            assert_eq!(ok(b.intersection(a)), i, "intersection order: {}", what());
            cases += 1;
        }
    }
    assert_eq!(cases, 65_536);
    // The union traces nothing exactly when both sub-ops do.
    assert_eq!(nothing_union, 65 * 65);
    note(&format!(
        "filter: {cases} sub-ops pairs, union and intersection; nothing: {nothing_union} unions, {nothing_inter} intersections"
    ));
}

fn random_pair(rng: &mut Rng) -> Pair {
    // Lean towards the interesting shapes: an empty filter, an empty
    // notrace, a filter inside notrace.
    let filter = if rng.chance(1, 4) {
        0
    } else {
        rng.below(16) as u8
    };
    let notrace = match rng.below(4) {
        0 => 0,
        1 => filter | rng.below(16) as u8,
        _ => rng.below(16) as u8,
    };
    Pair { filter, notrace }
}

fn three_subops<S: Mask>(seed: u64, cases: u64) -> (u64, u64) {
    let mut rng = Rng::new(seed);
    let (mut nothing_union, mut nothing_inter) = (0u64, 0u64);
    for _ in 0..cases {
        let ps = [
            random_pair(&mut rng),
            random_pair(&mut rng),
            random_pair(&mut rng),
        ];
        let subs: Vec<Selection<S>> = ps.iter().map(|&p| select(p)).collect();
        let what = || format!("seed {seed:#x}: {ps:?}");

        let u = ok(union_of(&subs));
        if check(&u, |ip| ps.iter().any(|&p| model(p, ip)), &what) {
            nothing_union += 1;
        }
        let mut pairwise = ok(Selection::nothing());
        for s in subs.iter().rev() {
            pairwise = ok(s.union(&pairwise));
        }
        assert_eq!(pairwise, u, "union in another order: {}", what());

        let mut i = ok(Selection::everything());
        for s in &subs {
            i = ok(i.intersection(s));
        }
        if check(&i, |ip| ps.iter().all(|&p| model(p, ip)), &what) {
            nothing_inter += 1;
        }
    }
    (nothing_union, nothing_inter)
}

#[test]
fn manager_three_subops_random() {
    const CASES: u64 = 30_000;
    let seed = seed(0x6a09_e667_f3bc_c908);
    note(&format!(
        "filter: three sub-ops, {CASES} random cases per set type, seed {seed:#x}"
    ));
    let bits = three_subops::<Bits>(seed, CASES);
    let tree = three_subops::<Tree>(seed, CASES);
    assert_eq!(bits, tree);
    // The sample must reach both outcomes, or it proves little.
    assert!(
        bits.0 > 0 && bits.0 < CASES,
        "unions tracing nothing: {}",
        bits.0
    );
    assert!(
        bits.1 > 0 && bits.1 < CASES,
        "intersections tracing nothing: {}",
        bits.1
    );
    note(&format!(
        "filter: nothing in {} unions and {} intersections",
        bits.0, bits.1
    ));
}

#[test]
fn manager_without_subops_traces_nothing() {
    let none: [Selection<Bits>; 0] = [];
    let m = ok(union_of(&none));
    assert!(m.is_nothing());
    assert_eq!(ok(m.into_hashes()), Hashes::Nothing);
    // And the neutral elements do what they say.
    let e = ok(Selection::<Bits>::everything());
    check(&e, |_| true, &|| String::from("everything"));
    let n = ok(Selection::<Bits>::nothing());
    check(&n, |_| false, &|| String::from("nothing"));
}

/// Linux 7.2 builds the manager's filter as the union of every sub-op's
/// "filter minus notrace", each kept as a filter hash in which empty reads
/// as every function. That reading, from the description of the defect.
fn as_7_2(subs: &[Pair]) -> Pair {
    let mut filter = 0;
    for p in subs {
        let own = p.filter & !p.notrace;
        if p.filter == 0 || own == 0 {
            // An empty hash in the union: every function.
            return Pair {
                filter: 0,
                notrace: 0,
            };
        }
        filter |= own;
    }
    Pair { filter, notrace: 0 }
}

fn mask(ips: &[u64]) -> u8 {
    ips.iter().fold(0, |m, &ip| m | (1 << ip))
}

#[test]
fn defect_7_2_notrace_covers_filter() {
    // One function_graph user: filter = notrace = {vfs_read}.
    let top = Pair {
        filter: mask(&[VFS_READ]),
        notrace: mask(&[VFS_READ]),
    };
    // What 7.2 makes of it: every function, ELSEWHERE included.
    let old = as_7_2(&[top]);
    assert!(
        IPS.iter().all(|&ip| model(old, ip)),
        "7.2 traces everything"
    );

    let sel: Selection<Bits> = select(top);
    assert!(sel.is_nothing());
    assert!(IPS.iter().all(|&ip| !sel.traces(ip)));
    let manager = ok(union_of([&sel]));
    assert!(manager.is_nothing());
    assert_eq!(ok(manager.clone().into_hashes()), Hashes::Nothing);
    assert!(ok(manager.intersection(&ok(Selection::everything()))).is_nothing());

    // Top level as above, plus an instance tracing vfs_write: the manager
    // traces vfs_write and nothing else.
    let instance = Pair {
        filter: mask(&[VFS_WRITE]),
        notrace: 0,
    };
    assert!(IPS.iter().all(|&ip| model(as_7_2(&[top, instance]), ip)));
    let both = ok(union_of([&sel, &select(instance)]));
    for ip in IPS {
        assert_eq!(both.traces(ip), ip == VFS_WRITE, "at {ip}");
    }
    assert_eq!(
        ok(both.into_hashes()),
        Hashes::Filter {
            filter: Bits(mask(&[VFS_WRITE])),
            notrace: Bits(0),
        }
    );

    // The instance traces everything but schedule: so does the manager,
    // and vfs_read comes from the instance, not from the top level.
    let wide = Pair {
        filter: 0,
        notrace: mask(&[SCHEDULE]),
    };
    let m = ok(union_of([&sel, &select(wide)]));
    assert_eq!(
        ok(m.into_hashes()),
        Hashes::Filter {
            filter: Bits(0),
            notrace: Bits(mask(&[SCHEDULE])),
        }
    );

    // Both users asked for nothing: still nothing, in either order.
    let open = Pair {
        filter: mask(&[DO_SYS_OPEN, VFS_WRITE]),
        notrace: mask(&[DO_SYS_OPEN, VFS_WRITE, SCHEDULE]),
    };
    let o: Selection<Bits> = select(open);
    for m in [ok(union_of([&sel, &o])), ok(union_of([&o, &sel]))] {
        assert!(m.is_nothing());
        assert!(!m.traces(ELSEWHERE));
        assert_eq!(ok(m.into_hashes()), Hashes::Nothing);
    }
}

/// A set whose every new set fails, as an allocation would.
#[derive(Clone, PartialEq, Debug)]
struct NoMemory(u8);

#[derive(PartialEq, Debug)]
struct Enomem;

impl FnSet for NoMemory {
    type Error = Enomem;
    fn empty() -> Result<Self, Enomem> {
        Err(Enomem)
    }
    fn contains(&self, ip: u64) -> bool {
        in_mask(self.0, ip)
    }
    fn is_empty(&self) -> bool {
        self.0 == 0
    }
    fn union(&self, _: &Self) -> Result<Self, Enomem> {
        Err(Enomem)
    }
    fn intersection(&self, _: &Self) -> Result<Self, Enomem> {
        Err(Enomem)
    }
    fn difference(&self, _: &Self) -> Result<Self, Enomem> {
        Err(Enomem)
    }
}

#[test]
fn failed_sets_are_returned() {
    // No new set needed: the user's hashes are taken as they are.
    let all = Selection::from_user(NoMemory(0), NoMemory(1)).unwrap();
    assert_eq!(
        all,
        Selection::All {
            except: NoMemory(1)
        }
    );
    let only = Selection::from_user(NoMemory(3), NoMemory(0)).unwrap();
    assert!(only.traces(VFS_WRITE));
    // Everything else that makes a set reports the failure.
    assert_eq!(Selection::from_user(NoMemory(3), NoMemory(1)), Err(Enomem));
    assert_eq!(all.union(&only), Err(Enomem));
    assert_eq!(all.intersection(&only), Err(Enomem));
    assert_eq!(only.clone().into_hashes(), Err(Enomem));
    assert_eq!(union_of([&only]), Err(Enomem));
    assert_eq!(
        Selection::<NoMemory>::from_hashes(Hashes::Nothing),
        Err(Enomem)
    );
}
