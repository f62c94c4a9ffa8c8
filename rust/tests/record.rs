// SPDX-License-Identifier: GPL-2.0

//! `rfcore::record::decide` against the reference model, over every
//! combination of the 13 flag bits, six ref counts and both pass kinds.

use std::format;
use std::vec::Vec;

use super::model::{self, bit, m};
use super::util::note;
use crate::rfcore::flags::{self, RecFlags, SiteState};
use crate::rfcore::record::{decide, BugType, Update};

/// Counts tried with every flag combination: none, one, a few, and the top
/// of the 19-bit field.
const COUNTS: [u64; 6] = [0, 1, 2, 3, model::COUNT_MASK - 1, model::COUNT_MASK];

/// Every word of the test space, with both values of `enable`.
fn space() -> impl Iterator<Item = (u64, bool)> {
    (0..1u64 << model::FLAG_BITS).flat_map(|f| {
        COUNTS.iter().flat_map(move |&c| {
            let w = f << model::COUNT_BITS | c;
            [(w, false), (w, true)]
        })
    })
}

fn update_code(u: Update) -> u8 {
    u as u8
}

#[test]
fn layout_matches_documented_bits() {
    let table: [(u64, u32); 13] = [
        (flags::MODIFIED, bit::MODIFIED),
        (flags::TOUCHED, bit::TOUCHED),
        (flags::CALL_OPS_EN, bit::CALL_OPS_EN),
        (flags::CALL_OPS, bit::CALL_OPS),
        (flags::DIRECT_EN, bit::DIRECT_EN),
        (flags::DIRECT, bit::DIRECT),
        (flags::DISABLED, bit::DISABLED),
        (flags::IPMODIFY, bit::IPMODIFY),
        (flags::TRAMP_EN, bit::TRAMP_EN),
        (flags::TRAMP, bit::TRAMP),
        (flags::REGS_EN, bit::REGS_EN),
        (flags::REGS, bit::REGS),
        (flags::ENABLED, bit::ENABLED),
    ];
    for (mask, b) in table {
        assert_eq!(mask, m(b), "bit {b}");
    }
    assert_eq!(flags::REF_BITS, model::COUNT_BITS);
    assert_eq!(flags::REF_MAX, model::COUNT_MASK);
    assert_eq!(flags::NOCLEAR, model::NOCLEAR_MASK);
    assert_eq!(flags::KNOWN, u64::from(u32::MAX));
    assert_eq!(RecFlags::from_raw(0x8000_0003).count(), 3);
}

#[test]
fn update_values_and_bug_types() {
    let table = [
        (Update::Ignore, model::IGNORE, BugType::Unknown),
        (Update::MakeCall, model::MAKE_CALL, BugType::Call),
        (Update::ModifyCall, model::MODIFY_CALL, BugType::Update),
        (Update::MakeNop, model::MAKE_NOP, BugType::Nop),
    ];
    for (u, code, bug) in table {
        assert_eq!(update_code(u), code, "{u:?}");
        assert_eq!(u.bug_type(), bug, "{u:?}");
    }
    assert_eq!(BugType::Unknown as u8, 0);
    assert_eq!(BugType::Init as u8, 1);
    assert_eq!(BugType::Nop as u8, 2);
    assert_eq!(BugType::Call as u8, 3);
    assert_eq!(BugType::Update as u8, 4);
}

#[test]
fn decide_equals_model_exhaustively() {
    let mut cases = 0u64;
    let mut per_update = [0u64; 4];
    for (w, enable) in space() {
        let d = decide(RecFlags::from_raw(w), enable);
        let (code, want) = model::check_record(w, enable);
        assert_eq!(
            (update_code(d.update), d.flags.raw()),
            (code, want),
            "decide({w:#010x}, enable={enable}): got {:?} {:#010x}, model {code} {want:#010x}",
            d.update,
            d.flags.raw()
        );
        if d.update == Update::Ignore {
            assert_eq!(d.flags.raw(), w, "Ignore changed {w:#010x}");
        }
        per_update[code as usize] += 1;
        cases += 1;
    }
    assert_eq!(cases, (1 << 13) * COUNTS.len() as u64 * 2);
    // Every outcome occurs: the space is not degenerate.
    assert!(per_update.iter().all(|&n| n > 0), "{per_update:?}");
    note(&format!(
        "record: {cases} decide cases equal the model \
         (ignore {}, make_call {}, modify_call {}, make_nop {})",
        per_update[0], per_update[1], per_update[2], per_update[3]
    ));
}

#[test]
fn decide_properties() {
    let mut cases = 0u64;
    let mut reachable = 0u64;
    let en_bits = flags::REGS_EN | flags::TRAMP_EN | flags::DIRECT_EN | flags::CALL_OPS_EN;
    for (w, enable) in space() {
        let old = RecFlags::from_raw(w);
        let d = decide(old, enable);
        let new = d.flags;
        cases += 1;

        // One update reaches a fixed point.
        let again = decide(new, enable);
        assert_eq!(
            again.update,
            Update::Ignore,
            "not converged: {w:#010x} enable={enable} -> {:#010x} -> {:?}",
            new.raw(),
            again.update
        );
        assert_eq!(again.flags, new);

        // The ref count is never touched.
        assert_eq!(new.count(), old.count(), "count changed: {w:#010x}");
        // No bit outside the known ones appears.
        assert_eq!(new.raw() & !flags::KNOWN, 0);

        match d.update {
            Update::MakeCall | Update::ModifyCall => {
                assert!(enable && old.count() > 0);
                assert!(new.all(flags::ENABLED | flags::TOUCHED));
                assert_eq!(d.update == Update::ModifyCall, old.any(flags::ENABLED));
                // The text now is the call the users want.
                assert_eq!(new.current(), SiteState::Call(old.wanted_call()));
                assert_eq!(new.wanted_call(), old.wanted_call());
                if old.any(flags::DIRECT | flags::IPMODIFY) {
                    assert!(new.any(flags::MODIFIED));
                }
                // Only ENABLED, TOUCHED, MODIFIED and the _EN bits move.
                let movable = flags::ENABLED | flags::TOUCHED | flags::MODIFIED | en_bits;
                assert_eq!((new.raw() ^ w) & !movable, 0, "{w:#010x}");
            }
            Update::MakeNop => {
                assert!(old.any(flags::ENABLED));
                assert!(!new.any(flags::ENABLED | en_bits));
                if old.count() == 0 {
                    assert_eq!(new.raw() & !flags::NOCLEAR, 0, "{w:#010x}");
                }
            }
            Update::Ignore => assert_eq!(new, old),
        }

        if model::reachable(w) {
            reachable += 1;
            assert!(
                model::reachable(new.raw()),
                "{w:#010x} -> {:#010x}",
                new.raw()
            );
            if new.any(flags::DIRECT_EN | flags::CALL_OPS_EN) {
                assert_eq!(new.count(), 1, "{w:#010x} -> {:#010x}", new.raw());
            }
            // At the fixed point of an enable pass, a record with users is
            // the call they want, unless it is skipped.
            if enable && old.count() > 0 && !old.skipped() {
                assert_eq!(
                    new.current(),
                    SiteState::Call(old.wanted_call()),
                    "{w:#010x}"
                );
            }
            if !enable && !old.skipped() {
                assert_eq!(new.current(), SiteState::Nop);
            }
        }
    }
    note(&format!(
        "record: {cases} property cases, {reachable} of them from reachable states"
    ));
}

/// Sequences of flag changes keep the word reachable and every record at a
/// fixed point after each update: a short walk over the reachable states,
/// as the update pass tests (`tests::update`) do at scale.
#[test]
fn walk_stays_reachable() {
    let mut rng = super::util::Rng::new(0x5eed_0001);
    let req = [
        flags::REGS,
        flags::TRAMP,
        flags::DIRECT,
        flags::CALL_OPS,
        flags::IPMODIFY,
    ];
    let mut w = RecFlags::default();
    let mut seen = Vec::new();
    for _ in 0..20_000 {
        let mut next = w.raw() & !(model::COUNT_MASK | req.iter().fold(0, |a, b| a | b));
        for r in req {
            if rng.bool() {
                next |= r;
            }
        }
        next |= rng.pick(&COUNTS);
        w = RecFlags::from_raw(next);
        let enable = rng.chance(7, 8);
        let d = decide(w, enable);
        let (code, want) = model::check_record(w.raw(), enable);
        assert_eq!((update_code(d.update), d.flags.raw()), (code, want));
        w = d.flags;
        assert!(model::reachable(w.raw()), "{:#010x}", w.raw());
        seen.push(d.update);
    }
    for u in [
        Update::Ignore,
        Update::MakeCall,
        Update::ModifyCall,
        Update::MakeNop,
    ] {
        assert!(seen.contains(&u), "{u:?} never happened");
    }
}

/// A quarantined word is told apart from every other word a record can
/// have: it is skipped by every update, and no word of a record an ops
/// could still use (enabled, counted) or of one that was never touched
/// (a module being loaded, a weak function) reads as quarantined.
#[test]
fn quarantined_words_are_told_apart() {
    let mut seen = 0;
    for (w, _) in space() {
        let f = RecFlags::from_raw(w);
        let q = f.quarantined();
        assert!(q.is_quarantined(), "{w:#x} -> {:#x}", q.raw());
        assert!(q.skipped(), "{w:#x}");
        assert_eq!(
            q.quarantined(),
            q,
            "{w:#x}: quarantining twice changes the word"
        );
        if f.is_quarantined() {
            // Only a word already in the quarantine's shape reads so.
            assert_eq!(f.quarantined(), f, "{w:#x}");
            seen += 1;
        }
        if f.any(flags::ENABLED) || f.count() > 0 || !f.any(flags::TOUCHED) {
            assert!(!f.is_quarantined(), "{w:#x}");
        }
    }
    // A module's new record and a weak function's are disabled, untouched.
    assert!(!RecFlags::from_raw(flags::DISABLED).is_quarantined());
    assert!(!RecFlags::from_raw(flags::DISABLED | flags::MODIFIED).is_quarantined());
    assert!(RecFlags::from_raw(flags::DISABLED | flags::TOUCHED).is_quarantined());
    assert!(seen > 0, "the space holds no quarantined word");
}
