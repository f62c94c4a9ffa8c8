// SPDX-License-Identifier: GPL-2.0

//! Per-record accounting (`rfcore::account`) against a model written from
//! the documented behaviour of the C `__ftrace_hash_rec_update()`, and a
//! simulation of several ops coming and going on one record.

use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::account::{add, remove, AccountError, CallOps, OpsProps, Others};
use crate::rfcore::flags::{RecFlags, CALL_OPS, DIRECT, REF_MAX, REGS, TRAMP};

/// Answers to the questions about the other ops, and how often each was asked.
struct Fixed {
    regs: bool,
    tramp: bool,
    survivor: bool,
    asked_regs: u32,
    asked_tramp: u32,
    asked_survivor: u32,
}

impl Fixed {
    fn new(regs: bool, tramp: bool, survivor: bool) -> Self {
        Fixed {
            regs,
            tramp,
            survivor,
            asked_regs: 0,
            asked_tramp: 0,
            asked_survivor: 0,
        }
    }
}

impl Others for Fixed {
    fn need_regs(&mut self) -> bool {
        self.asked_regs += 1;
        self.regs
    }
    fn other_has_trampoline(&mut self) -> bool {
        self.asked_tramp += 1;
        self.tramp
    }
    fn survivor_call_ops_ok(&mut self) -> bool {
        self.asked_survivor += 1;
        self.survivor
    }
}

fn props(bits: u32) -> OpsProps {
    OpsProps {
        direct: bits & 1 != 0,
        save_regs: bits & 2 != 0,
        trampoline: bits & 4 != 0,
        call_ops_ok: bits & 8 != 0,
    }
}

/// The model: plain words and the documented rules, step by step.
fn model_add(w: u64, o: OpsProps, call_ops: bool) -> Option<u64> {
    let count = w & REF_MAX;
    if count + 1 == REF_MAX || count == REF_MAX {
        return None;
    }
    let mut w = w + 1;
    let count = count + 1;
    if o.direct {
        w |= DIRECT;
    }
    if count == 1 && o.trampoline {
        w |= TRAMP;
    } else {
        w &= !TRAMP;
    }
    if o.save_regs {
        w |= REGS;
    }
    if call_ops && count == 1 && o.call_ops_ok {
        w |= CALL_OPS;
    } else {
        w &= !CALL_OPS;
    }
    Some(w)
}

/// After a removal the CALL_OPS request follows the ops left (`survivor`:
/// it may be called through the literal), not the ops removed.
fn model_remove(
    w: u64,
    o: OpsProps,
    call_ops: bool,
    regs: bool,
    tramp: bool,
    survivor: bool,
) -> Option<u64> {
    let count = w & REF_MAX;
    if count == 0 {
        return None;
    }
    let mut w = w - 1;
    let count = count - 1;
    if o.direct {
        w &= !DIRECT;
    }
    if count > 0 && w & REGS != 0 && o.save_regs && !regs {
        w &= !REGS;
    }
    if count == 1 && tramp {
        w |= TRAMP;
    } else {
        w &= !TRAMP;
    }
    if call_ops && count == 1 && survivor {
        w |= CALL_OPS;
    } else {
        w &= !CALL_OPS;
    }
    Some(w)
}

#[test]
fn add_and_remove_match_the_model() {
    let counts = [0u64, 1, 2, 3, REF_MAX - 2, REF_MAX - 1, REF_MAX];
    let mut cases = 0u32;
    for high in 0u64..(1 << 13) {
        for &count in &counts {
            let w = (high << 19) | count;
            for bits in 0..16 {
                let o = props(bits);
                for call_ops in [false, true] {
                    let mode = if call_ops {
                        CallOps::Supported
                    } else {
                        CallOps::Unsupported
                    };
                    let got = add(RecFlags::from_raw(w), o, mode);
                    match model_add(w, o, call_ops) {
                        Some(want) => {
                            assert_eq!(got, Ok(RecFlags::from_raw(want)), "add {w:#x} {o:?}")
                        }
                        None => assert_eq!(got, Err(AccountError::Overflow), "add {w:#x}"),
                    }
                    for others_bits in 0..8u32 {
                        let (regs, tramp, survivor) = (
                            others_bits & 1 != 0,
                            others_bits & 2 != 0,
                            others_bits & 4 != 0,
                        );
                        let mut others = Fixed::new(regs, tramp, survivor);
                        let got = remove(RecFlags::from_raw(w), o, mode, &mut others);
                        match model_remove(w, o, call_ops, regs, tramp, survivor) {
                            Some(want) => {
                                assert_eq!(got, Ok(RecFlags::from_raw(want)), "remove {w:#x} {o:?}")
                            }
                            None => assert_eq!(got, Err(AccountError::Underflow), "remove {w:#x}"),
                        }
                        // The ops list is only walked when the answer matters.
                        let left = count.saturating_sub(1);
                        let regs_matters = count > 0 && left > 0 && w & REGS != 0 && o.save_regs;
                        assert_eq!(others.asked_regs, u32::from(regs_matters));
                        assert_eq!(others.asked_tramp, u32::from(count > 0 && left == 1));
                        assert_eq!(
                            others.asked_survivor,
                            u32::from(call_ops && count > 0 && left == 1)
                        );
                        cases += 1;
                    }
                }
            }
        }
    }
    note(&std::format!(
        "account: {cases} add/remove cases equal the model"
    ));
}

#[test]
fn errors_leave_the_word_alone() {
    let full = RecFlags::from_raw(REGS | (REF_MAX - 1));
    assert_eq!(
        add(full, props(0), CallOps::Supported),
        Err(AccountError::Overflow)
    );
    let empty = RecFlags::from_raw(REGS | TRAMP);
    let mut others = Fixed::new(true, true, true);
    assert_eq!(
        remove(empty, props(0), CallOps::Supported, &mut others),
        Err(AccountError::Underflow)
    );
    assert_eq!(
        others.asked_regs + others.asked_tramp + others.asked_survivor,
        0
    );
}

/// The survivor, not the ops removed, decides whether the site may call
/// through the per-site literal: with 7.2's rule a survivor that needs the
/// recursion/RCU assist function would be called directly.
#[test]
fn call_ops_follows_the_survivor() {
    // Two ops: A needs no assist, B does (RECURSION/RCU: not eligible).
    let a = OpsProps {
        call_ops_ok: true,
        ..OpsProps::default()
    };
    let b = OpsProps {
        call_ops_ok: false,
        ..OpsProps::default()
    };
    let mode = CallOps::Supported;
    let one = add(RecFlags::default(), b, mode).unwrap();
    assert!(!one.any(CALL_OPS));
    let two = add(one, a, mode).unwrap();
    assert!(!two.any(CALL_OPS));
    // Removing A leaves B alone on the site: the literal would hold B, and
    // B needs the assist function, so the site keeps the list function
    // (7.2 would set CALL_OPS here, from A).
    let mut others = Fixed::new(false, false, b.call_ops_ok);
    let left_b = remove(two, a, mode, &mut others).unwrap();
    assert_eq!(others.asked_survivor, 1);
    assert!(!left_b.any(CALL_OPS), "B needs the assist function");
    assert_eq!(left_b.count(), 1);
    // Removing B instead leaves A, which may use the literal (7.2 would
    // keep the list function, from B).
    let mut others = Fixed::new(false, false, a.call_ops_ok);
    let left_a = remove(two, b, mode, &mut others).unwrap();
    assert!(left_a.any(CALL_OPS), "A may be called through the literal");
    // Without per-site literals nobody is asked.
    let mut others = Fixed::new(false, false, true);
    let two_x86 = add(
        add(RecFlags::default(), b, CallOps::Unsupported).unwrap(),
        a,
        CallOps::Unsupported,
    )
    .unwrap();
    let left = remove(two_x86, b, CallOps::Unsupported, &mut others).unwrap();
    assert!(!left.any(CALL_OPS));
    assert_eq!(others.asked_survivor, 0);
}

/// Random ops coming and going on one record: the count is the number of
/// ops on it, and the request bits follow the ops that are there.
#[test]
fn random_ops_on_one_record() {
    let base = seed(0x5eed_acc0);
    let mut rng = Rng::new(base);
    let mut steps = 0u32;
    for _ in 0..200 {
        let mut on: Vec<OpsProps> = Vec::new();
        let mut w = RecFlags::default();
        for _ in 0..200 {
            let adding = on.is_empty() || (on.len() < 8 && rng.bool());
            if adding {
                let o = props((rng.next_u64() % 16) as u32);
                // At most one direct ops, as the kernel guarantees.
                if o.direct && on.iter().any(|p| p.direct) {
                    continue;
                }
                w = add(w, o, CallOps::Supported).unwrap();
                on.push(o);
            } else {
                let i = (rng.next_u64() % on.len() as u64) as usize;
                let o = on.remove(i);
                let mut others = Fixed::new(
                    on.iter().any(|p| p.save_regs),
                    on.iter().any(|p| p.trampoline),
                    on.len() == 1 && on[0].call_ops_ok,
                );
                w = remove(w, o, CallOps::Supported, &mut others).unwrap();
            }
            steps += 1;
            assert_eq!(w.count(), on.len() as u64);
            assert_eq!(w.any(DIRECT), on.iter().any(|p| p.direct));
            assert_eq!(w.any(TRAMP), on.len() == 1 && on[0].trampoline);
            assert_eq!(w.any(CALL_OPS), on.len() == 1 && on[0].call_ops_ok);
            if on.iter().any(|p| p.save_regs) {
                assert!(w.any(REGS), "an ops that saves regs is on the record");
            }
        }
    }
    note(&std::format!(
        "account: seed {base:#x}: {steps} random add/remove steps"
    ));
}
