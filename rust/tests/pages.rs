// SPDX-License-Identifier: GPL-2.0

//! The record table rules (`rfcore::pages`) against plain references: a
//! linear scan for the bisection, counting for the group sizes, and
//! `Vec::drain` for the removal.

use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::pages::{first_hit, group_may_hold, hits, remove_range, Geometry};

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
    let base = seed(0x4e30_0e);
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
