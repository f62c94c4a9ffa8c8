// SPDX-License-Identifier: GPL-2.0

//! The call-site list checks (`rfcore::table`): crafted lists with every
//! kind of bad entry, and random lists against a plain reference.

use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::{
    arch::{arm64, x86},
    table::{scan, sort, Report, Skip, Span, Text},
};

/// Text is `[lo, hi)`; sites must be `align`-aligned; `shift` moves an
/// entry to its site (arm64 adds 12 or 16, x86 nothing).
struct Fake {
    module: bool,
    lo: u64,
    hi: u64,
    align: u64,
    shift: u64,
}

impl Fake {
    fn text(&self) -> Text {
        Text {
            module: self.module,
            spans: [Span::new(self.lo, self.hi), Span::default()],
        }
    }
    fn site(&self) -> impl Fn(u64) -> Option<u64> {
        let (align, shift) = (self.align, self.shift);
        move |addr: u64| addr.is_multiple_of(align).then_some(addr + shift)
    }
    fn scan(&self, locs: &mut [u64]) -> Report {
        scan(locs, &self.text(), self.site())
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
    let r = core_text().scan(&mut locs);
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
    let r = t.scan(&mut locs);
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
    let r = t.scan(&mut locs);
    assert_eq!((r.weak, r.out_of_text, r.kept), (0, 2, 1));
    assert_eq!(locs, std::vec![0, LO + 0x108, 0]);
}

#[test]
fn an_unsorted_list_is_sorted_and_reported() {
    let mut locs = std::vec![LO + 0x300, LO + 0x100, 0, LO + 0x200];
    let r = core_text().scan(&mut locs);
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
    t.module = false;
    let mut locs = std::vec![LO + 0x100, LO + 0x104, LO + 0x110];
    let r = scan(&mut locs, &t.text(), |a| Some(a & !0xf));
    assert_eq!(locs, std::vec![LO + 0x100, 0, LO + 0x110]);
    assert_eq!(r.duplicate, 1);
}

#[test]
fn spans_hold_exactly_their_range() {
    let s = Span::new(0x1000, 0x2000);
    assert!(!s.contains(0xfff));
    assert!(s.contains(0x1000));
    assert!(s.contains(0x1fff));
    assert!(!s.contains(0x2000));
    assert!(!s.contains(0));
    assert!(!s.contains(u64::MAX));
    // empty and inverted ranges hold nothing
    for e in [Span::new(0x2000, 0x1000), Span::new(5, 5), Span::default()] {
        for a in [0, 1, 4, 5, 6, 0x1000, 0x1fff, u64::MAX] {
            assert!(!e.contains(a), "{e:?} {a:#x}");
        }
    }
    // a range that ends at the top of the address space
    let top = Span::new(u64::MAX - 3, u64::MAX);
    assert!(top.contains(u64::MAX - 1));
    assert!(!top.contains(u64::MAX));
    assert!(!top.contains(0));
    // the second range (init text) counts as text too
    let t = Text {
        module: false,
        spans: [Span::new(LO, LO + 0x100), Span::new(HI, HI + 0x100)],
    };
    assert!(t.contains(LO) && t.contains(HI + 0xff));
    assert!(!t.contains(LO + 0x100) && !t.contains(HI - 1));
    let mut locs = std::vec![0, LO, LO + 0x100, HI - 1, HI, HI + 0x100];
    let r = scan(&mut locs, &t, x86::call_site);
    assert_eq!(locs, std::vec![0, LO, 0, 0, HI, 0]);
    assert_eq!((r.kept, r.weak, r.padding, r.total), (2, 3, 1, 6));
}

#[test]
fn the_architectures_patch_sites_of_entries() {
    // x86: the entry is the call itself; zero is no site
    assert_eq!(x86::call_site(LO + 3), Some(LO + 3));
    assert_eq!(x86::call_site(0), None);
    // arm64 CALL_OPS: the literal must be 8-byte aligned; the BL slot is
    // 12 bytes on, 16 with BTI C at the function
    assert_eq!(arm64::call_site(LO, false), Some(LO + 12));
    assert_eq!(arm64::call_site(LO, true), Some(LO + 16));
    for off in [1, 2, 4, 6] {
        assert_eq!(arm64::call_site(LO + off, false), None);
        assert_eq!(arm64::call_site(LO + off, true), None);
    }
    assert_eq!(arm64::call_site(0, false), None);
    assert_eq!(arm64::call_site(u64::MAX - 7, false), None);
    assert_eq!(arm64::call_site(u64::MAX - 15, false), Some(u64::MAX - 3));
    assert_eq!(arm64::call_site(u64::MAX - 15, true), None);
    // an arm64 list: the misaligned function is refused and reported
    let t = core_text().text();
    let mut locs = std::vec![LO, LO + 0x44, LO + 0x80];
    let r = scan(&mut locs, &t, |a| arm64::call_site(a, false));
    assert_eq!(locs, std::vec![LO + 12, 0, LO + 0x8c]);
    assert_eq!((r.kept, r.misaligned), (2, 1));
    assert_eq!(r.first[0], (LO + 0x44, Some(Skip::Misaligned)));
}

#[test]
fn an_unsorted_list_with_refusals_is_checked_from_the_start() {
    // The order breaks after a duplicate and a weak leftover were seen:
    // nothing the first pass saw is written before the list is sorted.
    let mut locs = std::vec![LO + 0x100, LO + 0x100, HI + 8, LO + 0x80, 0];
    let r = core_text().scan(&mut locs);
    assert!(r.unsorted);
    assert_eq!(locs, std::vec![0, LO + 0x80, LO + 0x100, 0, 0]);
    assert_eq!(
        (r.total, r.kept, r.padding, r.weak, r.duplicate),
        (5, 2, 1, 1, 1)
    );
    assert_eq!(r.first[0], (LO + 0x100, Some(Skip::Duplicate)));
    assert_eq!(r.first[1], (0, None));
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
        let text = Fake {
            module,
            lo: LO,
            hi: HI,
            align,
            shift,
        };
        let r = text.scan(&mut locs);
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

#[test]
fn the_heapsort_sorts_like_the_standard_sort() {
    let s = seed(0x50e7);
    let mut rng = Rng::new(s);
    let mut cases = 0u32;
    for len in (0..70usize).chain([255, 256, 257, 1000, 4097]) {
        for _ in 0..8 {
            // Few distinct values (duplicates), or any value.
            let span = if rng.below(2) == 0 { 8 } else { u64::MAX };
            let mut v: Vec<u64> = (0..len).map(|_| rng.next_u64() % span).collect();
            if rng.below(4) == 0 {
                v.sort_unstable();
                if rng.below(2) == 0 {
                    v.reverse();
                }
            }
            let mut want = v.clone();
            want.sort_unstable();
            sort(&mut v);
            assert_eq!(v, want, "len {len} (seed {s:#x})");
            cases += 1;
        }
    }
    note(&std::format!("heapsort: {cases} lists (seed {s:#x})"));
}
