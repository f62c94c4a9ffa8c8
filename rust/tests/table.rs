// SPDX-License-Identifier: GPL-2.0

//! The call-site list checks (`rfcore::table`): crafted lists with every
//! kind of bad entry, and random lists against a plain reference.

use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::table::{scan, Locs, Report, Skip, Text};

impl Locs for Vec<u64> {
    fn len(&self) -> usize {
        <[u64]>::len(self)
    }
    fn get(&self, i: usize) -> Option<u64> {
        <[u64]>::get(self, i).copied()
    }
    fn set(&mut self, i: usize, value: u64) {
        self[i] = value;
    }
    fn sort(&mut self) {
        self.sort_unstable();
    }
}

/// Text is `[lo, hi)`; sites must be `align`-aligned; `shift` moves an
/// entry to its site (arm64 adds 8 or 12, x86 nothing).
struct Fake {
    module: bool,
    lo: u64,
    hi: u64,
    align: u64,
    shift: u64,
}

impl Text for Fake {
    fn module(&self) -> bool {
        self.module
    }
    fn in_text(&mut self, addr: u64) -> bool {
        (self.lo..self.hi).contains(&addr)
    }
    fn adjust(&mut self, addr: u64) -> Option<u64> {
        addr.is_multiple_of(self.align).then_some(addr + self.shift)
    }
}

const LO: u64 = 0xffff_ffff_8100_0000;
const HI: u64 = 0xffff_ffff_8200_0000;

fn core_text() -> Fake {
    Fake {
        module: false,
        lo: LO,
        hi: HI,
        align: 1,
        shift: 0,
    }
}

#[test]
fn a_clean_sorted_list_is_kept_whole() {
    let mut locs: Vec<u64> = (0..100).map(|i| LO + i * 0x40).collect();
    let before = locs.clone();
    let r = scan(&mut locs, &mut core_text());
    assert_eq!(locs, before);
    assert_eq!(r.total, 100);
    assert_eq!(r.kept, 100);
    assert_eq!(r.refused(), 0);
    assert!(!r.unsorted);
    assert_eq!(r.first, Report::default().first);
}

#[test]
fn every_kind_of_bad_entry_is_zeroed_and_counted() {
    // padding, a weak leftover (relocated zero: tiny address), a site,
    // the same site again, a misaligned one, one beyond the text
    let mut t = Fake {
        align: 8,
        shift: 8,
        ..core_text()
    };
    let mut locs = std::vec![
        0,
        0x1234,
        LO + 0x100,
        LO + 0x100,
        LO + 0x204,
        LO + 0x300,
        HI + 8
    ];
    let r = scan(&mut locs, &mut t);
    // kept entries are now their sites (shift 8)
    assert_eq!(locs, std::vec![0, 0, LO + 0x108, 0, 0, LO + 0x308, 0]);
    assert_eq!(
        (
            r.total,
            r.kept,
            r.padding,
            r.weak,
            r.duplicate,
            r.misaligned,
            r.out_of_text
        ),
        (7, 2, 1, 2, 1, 1, 0)
    );
    assert_eq!(r.refused(), 2);
    assert_eq!(r.first[0], (LO + 0x100, Some(Skip::Duplicate)));
    assert_eq!(r.first[1], (LO + 0x204, Some(Skip::Misaligned)));
    assert_eq!(r.first[2], (0, None));
    // The same outside entries of a module are corrupt, not weak.
    t.module = true;
    let mut locs = std::vec![0x1234, LO + 0x100, HI + 8];
    let r = scan(&mut locs, &mut t);
    assert_eq!((r.weak, r.out_of_text, r.kept), (0, 2, 1));
    assert_eq!(locs, std::vec![0, LO + 0x108, 0]);
}

#[test]
fn an_unsorted_list_is_sorted_and_reported() {
    let mut locs = std::vec![LO + 0x300, LO + 0x100, 0, LO + 0x200];
    let r = scan(&mut locs, &mut core_text());
    assert!(r.unsorted);
    assert_eq!(locs, std::vec![0, LO + 0x100, LO + 0x200, LO + 0x300]);
    assert_eq!((r.kept, r.padding), (3, 1));
}

#[test]
fn duplicates_are_found_after_adjustment() {
    // two entries that the architecture maps to one site
    let mut t = Fake {
        align: 1,
        shift: 0,
        ..core_text()
    };
    struct Round(Fake);
    impl Text for Round {
        fn module(&self) -> bool {
            self.0.module
        }
        fn in_text(&mut self, a: u64) -> bool {
            self.0.in_text(a)
        }
        fn adjust(&mut self, a: u64) -> Option<u64> {
            Some(a & !0xf)
        }
    }
    t.module = false;
    let mut locs = std::vec![LO + 0x100, LO + 0x104, LO + 0x110];
    let r = scan(&mut locs, &mut Round(t));
    assert_eq!(locs, std::vec![LO + 0x100, 0, LO + 0x110]);
    assert_eq!(r.duplicate, 1);
}

/// Random lists: the kept entries equal a plain reference (sort, drop
/// zero, outside and misaligned entries, keep the first of each site).
#[test]
fn random_lists_against_a_reference() {
    let s = seed(0x7ab1e);
    let mut rng = Rng::new(s);
    let mut lists = 0u64;
    for _ in 0..3000 {
        let n = rng.below(40) as usize;
        let module = rng.bool();
        let align = rng.pick(&[1u64, 4, 8]);
        let shift = rng.pick(&[0u64, 8, 12]);
        let mut locs: Vec<u64> = (0..n)
            .map(|_| match rng.below(10) {
                0 => 0,
                1 => rng.below(0x10000),
                2 => HI + rng.below(0x100),
                _ => LO + rng.below(0x400),
            })
            .collect();
        if rng.chance(1, 2) {
            locs.sort_unstable();
        }
        let mut want: Vec<u64> = locs.clone();
        want.sort_unstable();
        let mut kept = Vec::new();
        let mut last_site = None;
        for a in want.iter_mut() {
            let ok = *a != 0 && (LO..HI).contains(a) && *a % align == 0;
            if ok && last_site != Some(*a + shift) {
                last_site = Some(*a + shift);
                kept.push(*a);
                // a kept entry becomes its patch site
                *a += shift;
            } else {
                *a = 0;
            }
        }
        let mut text = Fake {
            module,
            lo: LO,
            hi: HI,
            align,
            shift,
        };
        let r = scan(&mut locs, &mut text);
        assert_eq!(locs, want, "seed {s:#x}");
        assert_eq!(r.kept, kept.len() as u64, "seed {s:#x}");
        assert_eq!(r.total, n as u64, "seed {s:#x}");
        let skipped = r.padding + r.weak + r.out_of_text + r.misaligned + r.duplicate;
        assert_eq!(r.kept + skipped, r.total, "seed {s:#x}");
        if module {
            assert_eq!(r.weak, 0, "seed {s:#x}");
        } else {
            assert_eq!(r.out_of_text, 0, "seed {s:#x}");
        }
        lists += 1;
    }
    note(&std::format!("table random lists: {lists} (seed {s:#x})"));
}
