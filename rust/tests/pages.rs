// SPDX-License-Identifier: GPL-2.0

//! The record table rules (`rfcore::pages`) against plain references: a
//! linear scan for the bisection, counting for the group sizes, and
//! `Vec::drain` for the removal.

use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::pages::{
    first_hit, gallop, group_may_hold, hits, lookup, remove_range, take_groups, take_records,
    Geometry, Removal, Table, Walk,
};

const X86: Geometry = Geometry {
    entry_size: 16,
    page_size: 4096,
    max_order: 10,
};

/// Sorted call sites `size` bytes long with random gaps, some touching.
fn sites(rng: &mut Rng, n: usize, size: u64) -> Vec<u64> {
    let mut ip = 0x1000 + rng.below(64);
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(ip);
        ip += size + rng.below(3) * rng.below(40);
    }
    v
}

fn touches(ip: u64, size: u64, start: u64, end: u64) -> bool {
    start <= end && ip + size > start && ip <= end
}

#[test]
fn gallop_finds_what_a_scan_finds() {
    let mut rng = Rng::new(seed(0x2026_1206));
    let mut reads = 0u64;
    let mut found = 0u64;
    for n in [0usize, 1, 2, 3, 7, 64, 1000] {
        let recs = sites(&mut rng, n, 4);
        for _ in 0..300 {
            let from = rng.below(n as u64 + 2) as usize;
            // A record's ip, one next to it, or one outside the group.
            let ip = match (rng.below(3), recs.get(rng.below(n.max(1) as u64) as usize)) {
                (0, Some(&ip)) => ip,
                (1, Some(&ip)) => ip + 1 + rng.below(8),
                _ => rng.below(0x1000 + 60 * n as u64 + 100),
            };
            let want = recs
                .iter()
                .position(|&r| r == ip)
                .filter(|&i| from < n && recs[from] <= ip && i >= from);
            let got = gallop(n, from, ip, |i| {
                reads += 1;
                recs[i]
            });
            assert_eq!(got, want, "n {n} from {from} ip {ip:#x}");
            found += u64::from(got.is_some());
        }
    }
    assert!(found > 100, "{found}");
    // Neighbours cost a few reads, not a bisection of the group.
    let recs = sites(&mut rng, 4096, 4);
    let mut r = 0u64;
    let mut at = 0;
    for i in 0..4096 {
        at = gallop(4096, at, recs[i], |k| {
            r += 1;
            recs[k]
        })
        .unwrap();
        assert_eq!(at, i);
    }
    assert!(r < 5 * 4096, "{r} reads for 4096 neighbours");
    note(&std::format!(
        "gallop: {reads} reads in the random cases, {r} for 4096 neighbours"
    ));
}

#[test]
fn bisection_finds_what_a_scan_finds() {
    let base = seed(0x9a6e_5eed);
    let mut rng = Rng::new(base);
    let mut cases = 0u32;
    let mut found = 0u32;
    for _ in 0..400 {
        let size = [4u64, 5][rng.below(2) as usize];
        let n = rng.below(40) as usize;
        let v = sites(&mut rng, n, size);
        let hi = v.last().map_or(0x1100, |&l| l + 64);
        for _ in 0..200 {
            let start = 0xff0 + rng.below(hi - 0xff0);
            let end = if rng.chance(1, 3) {
                start
            } else if rng.chance(1, 10) {
                start.saturating_sub(1 + rng.below(4))
            } else {
                start + rng.below(80)
            };
            let want: Vec<usize> = (0..n)
                .filter(|&i| touches(v[i], size, start, end))
                .collect();
            let got = hits(n, |i| v[i], start, end, size);
            if want.is_empty() {
                assert_eq!(got.start, got.end, "{v:x?} [{start:#x}, {end:#x}]");
                assert_eq!(first_hit(n, |i| v[i], start, end, size), None);
            } else {
                assert_eq!(got, want[0]..want[want.len() - 1] + 1);
                assert_eq!(first_hit(n, |i| v[i], start, end, size), Some(want[0]));
                found += 1;
            }
            if n > 0 {
                // The quick test never rules out a group that has a hit.
                let may = group_may_hold(v[0], v[n - 1], start, end, size);
                assert!(may || want.is_empty());
            }
            cases += 1;
        }
    }
    assert!(
        found > cases / 10,
        "the ranges must often hit: {found} of {cases}"
    );
    note(&std::format!(
        "pages: seed {base:#x}: {cases} lookups equal a linear scan ({found} hits)"
    ));
}

#[test]
fn lookups_at_the_edges() {
    let v = [0x1000u64, 0x1005, 0x2000];
    let at = |i: usize| v[i];
    // The first and last byte of an instruction, and the byte after it.
    assert_eq!(first_hit(3, at, 0x1000, 0x1000, 5), Some(0));
    assert_eq!(first_hit(3, at, 0x1004, 0x1004, 5), Some(0));
    assert_eq!(first_hit(3, at, 0x1005, 0x1005, 5), Some(1));
    assert_eq!(first_hit(3, at, 0x100a, 0x1fff, 5), None);
    assert_eq!(first_hit(3, at, 0x0fff, 0x0fff, 5), None);
    // A range over several sites: the first one, and all of them.
    assert_eq!(first_hit(3, at, 0x0f00, 0x3000, 5), Some(0));
    assert_eq!(hits(3, at, 0x1003, 0x2000, 5), 0..3);
    // Addresses at the top of the address space do not wrap.
    let top = [u64::MAX - 2];
    assert_eq!(first_hit(1, |i| top[i], u64::MAX, u64::MAX, 5), Some(0));
    assert!(group_may_hold(top[0], top[0], u64::MAX, u64::MAX, 5));
    // An empty group and an empty range.
    assert_eq!(first_hit(0, at, 0, u64::MAX, 5), None);
    assert_eq!(hits(3, at, 0x1006, 0x1005, 5), 1..1);
}

#[test]
fn group_sizes() {
    assert_eq!(X86.entries(0), Some(256));
    assert_eq!(X86.entries(3), Some(2048));
    assert_eq!(X86.entries(11), None);
    let zero = Geometry {
        entry_size: 0,
        ..X86
    };
    assert_eq!(zero.entries(0), None);
    let huge = Geometry {
        page_size: 1 << 62,
        ..X86
    };
    assert_eq!(huge.entries(3), None);
    // The first order is the largest group the records fill completely.
    for count in 1..20_000usize {
        let order = X86.first_order(count);
        let pages = (count * 16).div_ceil(4096);
        assert!(1usize << order <= pages.max(1), "{count}: order {order}");
        assert!(
            order == X86.max_order || 2usize << order > pages,
            "{count}: order {order}"
        );
    }
    assert_eq!(X86.first_order(0), 0);
    assert_eq!(X86.first_order(256), 0);
    assert_eq!(X86.first_order(257), 1);
    assert_eq!(X86.first_order(21_934), 6);
    assert_eq!(X86.first_order(usize::MAX), X86.max_order);
}

#[test]
fn removal_keeps_the_rest_in_order() {
    let base = seed(0x004e_300e);
    let mut rng = Rng::new(base);
    for _ in 0..2000 {
        let cap = 1 + rng.below(30) as usize;
        let len = rng.below(cap as u64 + 1) as usize;
        let mut recs: Vec<u64> = (0..cap as u64).map(|i| 100 + i).collect();
        let a = rng.below(len as u64 + 2) as usize;
        let b = rng.below(len as u64 + 2) as usize;
        let before = recs.clone();
        let got = remove_range(&mut recs, len, a..b);
        if a > b || b > len {
            assert_eq!(got, None);
            assert_eq!(recs, before, "refused removals leave the group alone");
            continue;
        }
        let mut want: Vec<u64> = before[..len].to_vec();
        want.drain(a..b);
        assert_eq!(got, Some(want.len()));
        assert_eq!(&recs[..want.len()], &want[..]);
    }
    let mut short = [1u64, 2];
    assert_eq!(remove_range(&mut short, 3, 0..1), None);
}

/// A table in plain vectors: groups in an arena, linked by index, with a
/// head, a tail (the kernel's `ftrace_pages`) and the groups taken out.
struct VecTable {
    recs: Vec<Vec<u64>>,
    next: Vec<Option<usize>>,
    head: Option<usize>,
    tail: Option<usize>,
    taken: Vec<usize>,
}

impl Walk for VecTable {
    type Group = usize;
    fn first(&mut self) -> Option<usize> {
        self.head
    }
    fn next(&mut self, g: usize) -> Option<usize> {
        self.next[g]
    }
    fn len(&mut self, g: usize) -> usize {
        self.recs[g].len()
    }
    fn ip_at(&mut self, g: usize, i: usize) -> u64 {
        self.recs[g][i]
    }
}

impl Table for VecTable {
    fn take(&mut self, prev: Option<usize>, g: usize) {
        match prev {
            Some(p) => self.next[p] = self.next[g],
            None => self.head = self.next[g],
        }
        if self.tail == Some(g) {
            self.tail = prev;
        }
        self.taken.push(g);
    }
    fn shrink(&mut self, g: usize, plan: Removal) {
        let v = &mut self.recs[g];
        let len = v.len();
        let gone = len - plan.len;
        assert_eq!(
            (plan.from, plan.count),
            (plan.to + gone, len - plan.to - gone)
        );
        let got = remove_range(v, len, plan.to..plan.to + gone).unwrap();
        assert_eq!(got, plan.len);
        v.truncate(plan.len);
    }
}

impl VecTable {
    fn new() -> Self {
        VecTable {
            recs: Vec::new(),
            next: Vec::new(),
            head: None,
            tail: None,
            taken: Vec::new(),
        }
    }

    /// Appends the sites (sorted) as new groups of `geo`'s sizes.
    fn append(&mut self, geo: &Geometry, sites: &[u64]) {
        let mut rest = sites;
        while !rest.is_empty() {
            let order = geo.first_order(rest.len());
            let take = geo.entries(order).unwrap().min(rest.len());
            let g = self.recs.len();
            self.recs.push(rest[..take].to_vec());
            self.next.push(None);
            match self.tail {
                Some(t) => self.next[t] = Some(g),
                None => self.head = Some(g),
            }
            self.tail = Some(g);
            rest = &rest[take..];
        }
    }

    /// The groups in list order.
    fn groups(&self) -> Vec<usize> {
        let mut v = Vec::new();
        let mut at = self.head;
        while let Some(g) = at {
            v.push(g);
            at = self.next[g];
        }
        v
    }

    fn all(&self) -> Vec<u64> {
        self.groups()
            .iter()
            .flat_map(|&g| self.recs[g].clone())
            .collect()
    }
}

/// Random tables of a core part and modules coming and going, with init
/// text freed: after every step the records are what a flat list of the
/// live sites says, the tail is the last group, no group is empty, and
/// lookups equal a scan of the flat list.
#[test]
fn table_walks_match_a_flat_list() {
    let base = seed(0x7ab1_e5ee);
    let mut rng = Rng::new(base);
    // Small pages, so that tables have many groups.
    let geo = Geometry {
        entry_size: 16,
        page_size: 256,
        max_order: 3,
    };
    let (mut steps, mut taken_groups, mut taken_recs) = (0u32, 0usize, 0usize);
    for _ in 0..300 {
        let mut t = VecTable::new();
        // (base, sites): the core at 0x10000, module m at 0x100000 * (m + 1).
        let mut parts: Vec<(u64, Vec<u64>)> = Vec::new();
        let n = 1 + rng.below(120) as usize;
        let core = sites(&mut rng, n, 5)
            .iter()
            .map(|ip| ip + 0x10000)
            .collect::<Vec<_>>();
        t.append(&geo, &core);
        parts.push((0x10000, core));
        let mut next_mod = 1u64;
        for _ in 0..30 {
            match rng.below(4) {
                0 => {
                    // A module loads.
                    let at = 0x100000 * next_mod;
                    next_mod += 1;
                    let n = rng.below(70) as usize;
                    let s: Vec<u64> = sites(&mut rng, n, 5).iter().map(|ip| ip + at).collect();
                    t.append(&geo, &s);
                    parts.push((at, s));
                }
                1 if parts.len() > 1 => {
                    // A module goes.
                    let k = 1 + rng.below(parts.len() as u64 - 1) as usize;
                    let (at, s) = parts.remove(k);
                    let r = take_groups(&mut t, |ip| ip >= at && ip < at + 0x100000);
                    assert!(!r.kept_first);
                    // Its groups are those holding its remaining sites.
                    assert_eq!(r.records, s.len());
                    taken_groups += r.groups;
                    taken_recs += r.records;
                }
                2 => {
                    // Init text freed: a range of one part.
                    let k = rng.below(parts.len() as u64) as usize;
                    let (at, s) = &mut parts[k];
                    let mut lo = *at + 0x1000 + rng.below(0x400);
                    if k == 0 {
                        // The core kernel keeps its first site (its text
                        // is not all init text).
                        lo = lo.max(s[0] + 5);
                    }
                    let hi = lo + rng.below(0x600);
                    let mut seen = Vec::new();
                    let r = take_records(&mut t, lo, hi, 5, |t, g, i| {
                        seen.push(t.ip_at(g, i));
                    });
                    let gone: Vec<u64> = s
                        .iter()
                        .copied()
                        .filter(|&ip| ip + 5 > lo && ip <= hi)
                        .collect();
                    assert_eq!(seen, gone);
                    assert_eq!(r.records, gone.len());
                    s.retain(|&ip| !(ip + 5 > lo && ip <= hi));
                    taken_groups += r.groups;
                    taken_recs += r.records;
                }
                _ => {
                    // Lookups.
                    let flat: Vec<u64> = parts.iter().flat_map(|(_, s)| s.clone()).collect();
                    for _ in 0..20 {
                        let k = rng.below(parts.len() as u64) as usize;
                        let start = parts[k].0 + 0x1000 + rng.below(0x600);
                        let end = start + rng.below(12);
                        let want = flat.iter().copied().find(|&ip| ip + 5 > start && ip <= end);
                        let got = lookup(&mut t, start, end, 5).map(|(g, i)| t.recs[g][i]);
                        assert_eq!(got, want, "[{start:#x}, {end:#x}]");
                    }
                }
            }
            steps += 1;
            // The table is the parts' sites, in order; no empty group; the
            // tail is the last group; taken groups are off the list.
            let flat: Vec<u64> = parts.iter().flat_map(|(_, s)| s.clone()).collect();
            assert_eq!(t.all(), flat);
            let groups = t.groups();
            assert!(groups.iter().all(|&g| !t.recs[g].is_empty()));
            assert_eq!(t.tail, groups.last().copied());
            assert!(t.taken.iter().all(|g| !groups.contains(g)));
        }
    }
    assert!(taken_groups > 100 && taken_recs > 1000);
    note(&std::format!(
        "pages: seed {base:#x}: {steps} table steps, {taken_groups} groups and {taken_recs} records taken out"
    ));
}

/// A table whose first group looks like a module's keeps it.
#[test]
fn the_first_group_is_never_taken() {
    let geo = Geometry {
        entry_size: 16,
        page_size: 64,
        max_order: 0,
    };
    let mut t = VecTable::new();
    t.append(&geo, &[0x100, 0x110, 0x120, 0x130, 0x140]);
    let r = take_groups(&mut t, |ip| ip < 0x135);
    assert!(r.kept_first);
    assert_eq!((r.groups, r.records), (0, 0));
    // The second group starts at 0x140: not matched.
    assert_eq!(t.all().len(), 5);
    let r = take_groups(&mut t, |_| true);
    assert_eq!((r.groups, r.records, r.kept_first), (1, 1, true));
    assert_eq!(t.tail, t.head);
}
