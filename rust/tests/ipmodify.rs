// SPDX-License-Identifier: GPL-2.0

//! The IPMODIFY claims (`rfcore::ipmodify`) against a model of the
//! documented behaviour of the C walk (the comments of
//! `__ftrace_hash_update_ipmodify()` and `include/linux/ftrace.h`): the
//! walk goes through the records in table order, skipping disabled ones
//! and, unless a direct target changes, the ones whose membership does not
//! change; an IPMODIFY ops claims as it goes and, at a record it reaches
//! that is claimed already, undoes the claims and releases it wrote so far
//! and answers `-EBUSY`; a direct ops asks its `ops_func` at every claimed
//! record it reaches and stops at the first refusal (`-EBUSY` without an
//! `ops_func`).
//!
//! The core checks first and writes only after a clean check; both must
//! end with the same answer, the same flags on every record, the same
//! questions asked in the same order and the same warnings. Every table of
//! up to three records (every mix of the flags that matter and of old and
//! new membership) is checked for each kind of claimant and each way the
//! `ops_func` answers; longer tables at random.

use std::vec::Vec;

use super::util::{
    seed,
    Rng, //
};
use crate::rfcore::flags::{
    RecFlags,
    DIRECT,
    DISABLED,
    ENABLED,
    IPMODIFY,
    TOUCHED, //
};
use crate::rfcore::ipmodify::{
    apply,
    claimant,
    ops_bits,
    step,
    Claimant,
    Plan,
    Site,
    Skip,
    Step, //
};

const EBUSY: i32 = -16;
const EAGAIN: i32 = -11;

/// How the direct ops' `ops_func` answers.
#[derive(Clone, Copy, Debug)]
enum Answer {
    /// There is no `ops_func`.
    Missing,
    /// It answers 0 every time.
    Yes,
    /// It answers 0 `n` times, then `-EAGAIN`.
    NoAfter(usize),
}

impl Answer {
    fn ask(self, asked: usize) -> Option<i32> {
        match self {
            Answer::Missing => None,
            Answer::Yes => Some(0),
            Answer::NoAfter(n) if asked >= n => Some(EAGAIN),
            Answer::NoAfter(_) => Some(0),
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Rec {
    flags: u64,
    in_old: bool,
    in_new: bool,
}

/// What a walk left behind.
#[derive(PartialEq, Eq, Debug)]
struct Outcome {
    ret: i32,
    flags: Vec<u64>,
    asked: Vec<usize>,
    warned: usize,
}

/// The model: one walk writing as it goes, undone on a conflict.
fn model(who: Claimant, answer: Answer, recs: &[Rec]) -> Outcome {
    let mut flags: Vec<u64> = recs.iter().map(|r| r.flags).collect();
    let mut asked = Vec::new();
    let mut warned = 0;
    let retarget = matches!(who, Claimant::Direct { retarget: true });
    for (i, r) in recs.iter().enumerate() {
        if r.flags & DISABLED != 0 || (!retarget && r.in_old == r.in_new) {
            continue;
        }
        let claimed = flags[i] & IPMODIFY != 0;
        match who {
            Claimant::IpModify => {
                if r.in_new && claimed {
                    // Undo what was written before this record.
                    for (j, rr) in recs.iter().enumerate().take(i) {
                        if rr.flags & DISABLED != 0 || rr.in_old == rr.in_new {
                            continue;
                        }
                        if rr.in_new {
                            flags[j] &= !IPMODIFY;
                        } else {
                            flags[j] |= IPMODIFY;
                        }
                    }
                    return Outcome {
                        ret: EBUSY,
                        flags,
                        asked,
                        warned,
                    };
                }
                if r.in_new {
                    flags[i] |= IPMODIFY;
                } else {
                    flags[i] &= !IPMODIFY;
                }
            }
            Claimant::Direct { .. } => {
                if !(r.in_new && claimed) {
                    continue;
                }
                if !retarget && r.flags & DIRECT != 0 {
                    warned += 1;
                }
                let Some(ret) = answer.ask(asked.len()) else {
                    return Outcome {
                        ret: EBUSY,
                        flags,
                        asked,
                        warned,
                    };
                };
                asked.push(i);
                if ret != 0 {
                    return Outcome {
                        ret,
                        flags,
                        asked,
                        warned,
                    };
                }
            }
        }
    }
    Outcome {
        ret: 0,
        flags,
        asked,
        warned,
    }
}

/// The core: a check walk, then (IPMODIFY only) a write walk.
fn core_walk(who: Claimant, answer: Answer, recs: &[Rec]) -> Outcome {
    let mut flags: Vec<u64> = recs.iter().map(|r| r.flags).collect();
    let mut asked = Vec::new();
    let mut warned = 0;
    let site = |flags: u64, r: &Rec| Site {
        flags: RecFlags::from_raw(flags),
        in_old: r.in_old,
        in_new: r.in_new,
    };
    for (i, r) in recs.iter().enumerate() {
        match step(who, Plan::Check, site(flags[i], r)) {
            Step::Pass => {}
            Step::Conflict => {
                return Outcome {
                    ret: EBUSY,
                    flags,
                    asked,
                    warned,
                }
            }
            Step::AskShare { warn } => {
                warned += usize::from(warn);
                let Some(ret) = answer.ask(asked.len()) else {
                    return Outcome {
                        ret: EBUSY,
                        flags,
                        asked,
                        warned,
                    };
                };
                asked.push(i);
                if ret != 0 {
                    return Outcome {
                        ret,
                        flags,
                        asked,
                        warned,
                    };
                }
            }
            s @ (Step::Claim | Step::Release) => panic!("the check wrote: {s:?}"),
        }
    }
    if who == Claimant::IpModify {
        for (i, r) in recs.iter().enumerate() {
            let s = step(who, Plan::Write, site(flags[i], r));
            assert!(
                !matches!(s, Step::Conflict | Step::AskShare { .. }),
                "write walk asked {s:?}"
            );
            flags[i] = apply(RecFlags::from_raw(flags[i]), s).raw();
        }
    }
    Outcome {
        ret: 0,
        flags,
        asked,
        warned,
    }
}

/// Whether the table is one the kernel can be in for `who`: an IPMODIFY
/// ops has claimed every enabled record of its old set. (On a table where
/// it has not, the C walk's undo would set a claim that was never there; the
/// core, which writes nothing when refused, leaves it as it was.)
fn consistent(who: Claimant, table: &[Rec]) -> bool {
    who != Claimant::IpModify
        || table
            .iter()
            .all(|r| !r.in_old || r.flags & DISABLED != 0 || r.flags & IPMODIFY != 0)
}

const WHO: [Claimant; 3] = [
    Claimant::IpModify,
    Claimant::Direct { retarget: false },
    Claimant::Direct { retarget: true },
];

const ANSWERS: [Answer; 5] = [
    Answer::Missing,
    Answer::Yes,
    Answer::NoAfter(0),
    Answer::NoAfter(1),
    Answer::NoAfter(2),
];

/// Every record kind: the three flags that matter (and one that does not)
/// times old and new membership.
fn kinds() -> Vec<Rec> {
    let mut out = Vec::new();
    for bits in 0..16u64 {
        let mut flags = 0;
        for (k, f) in [DISABLED, IPMODIFY, DIRECT, ENABLED | TOUCHED | 3]
            .iter()
            .enumerate()
        {
            if bits & (1 << k) != 0 {
                flags |= f;
            }
        }
        for m in 0..4 {
            out.push(Rec {
                flags,
                in_old: m & 1 != 0,
                in_new: m & 2 != 0,
            });
        }
    }
    out
}

#[test]
fn every_small_table_agrees_with_the_model() {
    let kinds = kinds();
    let mut tables = 0u64;
    let mut refused = 0u64;
    let mut written = 0u64;
    let mut table = Vec::new();
    for n in 0..=3usize {
        let total = kinds.len().pow(n as u32);
        for mut code in 0..total {
            table.clear();
            for _ in 0..n {
                table.push(kinds[code % kinds.len()]);
                code /= kinds.len();
            }
            for who in WHO {
                if !consistent(who, &table) {
                    continue;
                }
                for answer in ANSWERS {
                    let want = model(who, answer, &table);
                    let got = core_walk(who, answer, &table);
                    assert_eq!(got, want, "{who:?} {answer:?} {table:?}");
                    tables += 1;
                    refused += u64::from(want.ret != 0);
                    let before = table.iter().map(|r| r.flags);
                    written += u64::from(!want.flags.iter().copied().eq(before));
                }
            }
        }
    }
    // The cases must include refusals and writes, or the test shows little.
    assert!(tables > 1_000_000, "{tables}");
    assert!(
        refused > 100_000 && written > 100_000,
        "{refused} {written}"
    );
}

#[test]
fn a_refused_claim_writes_nothing_even_where_7_2_writes_and_undoes() {
    // Claims the first record, then meets a claimed one: the model wrote
    // and undid; the core's check stops before any write.
    let table = [
        Rec {
            flags: 0,
            in_old: false,
            in_new: true,
        },
        Rec {
            flags: IPMODIFY,
            in_old: false,
            in_new: true,
        },
    ];
    let got = core_walk(Claimant::IpModify, Answer::Missing, &table);
    assert_eq!(got.ret, EBUSY);
    assert_eq!(got.flags, [0, IPMODIFY]);
    let released = [
        Rec {
            flags: IPMODIFY,
            in_old: true,
            in_new: false,
        },
        Rec {
            flags: 0,
            in_old: false,
            in_new: true,
        },
    ];
    let got = core_walk(Claimant::IpModify, Answer::Missing, &released);
    assert_eq!(got.ret, 0);
    assert_eq!(got.flags, [0, IPMODIFY]);
    // On a table the kernel cannot be in (a record of the old set not
    // claimed), the C walk's undo would claim it; the core leaves it alone.
    let odd = [
        Rec {
            flags: 0,
            in_old: true,
            in_new: false,
        },
        Rec {
            flags: IPMODIFY,
            in_old: false,
            in_new: true,
        },
    ];
    assert_eq!(
        model(Claimant::IpModify, Answer::Missing, &odd).flags,
        [IPMODIFY, IPMODIFY]
    );
    assert_eq!(
        core_walk(Claimant::IpModify, Answer::Missing, &odd).flags,
        [0, IPMODIFY]
    );
}

#[test]
fn long_random_tables_agree_with_the_model() {
    let kinds = kinds();
    let mut rng = Rng::new(seed(0x1b_0d1f));
    for _ in 0..20_000 {
        let n = rng.below(40) as usize;
        let table: Vec<Rec> = (0..n)
            .map(|_| kinds[rng.below(kinds.len() as u64) as usize])
            .collect();
        let who = rng.pick(&WHO);
        if !consistent(who, &table) {
            continue;
        }
        let answer = match rng.below(3) {
            0 => Answer::Missing,
            1 => Answer::Yes,
            _ => Answer::NoAfter(rng.below(6) as usize),
        };
        assert_eq!(
            core_walk(who, answer, &table),
            model(who, answer, &table),
            "{who:?} {answer:?} {table:?}"
        );
    }
}

#[test]
fn who_claims() {
    use ops_bits::{
        DIRECT as D,
        ENABLED as E,
        IPMODIFY as I, //
    };
    let mut seen = 0;
    for other in [0u64, 1 << 1, 1 << 9, (1 << 19) | (1 << 2)] {
        for bits in 0..8u64 {
            let flags = other
                | if bits & 1 != 0 { E } else { 0 }
                | if bits & 2 != 0 { I } else { 0 }
                | if bits & 4 != 0 { D } else { 0 };
            for all in 0..4 {
                let (old_all, new_all) = (all & 1 != 0, all & 2 != 0);
                for retarget in [false, true] {
                    let got = claimant(flags, old_all, new_all, retarget);
                    let want = if flags & E == 0 || flags & (I | D) == 0 {
                        Err(Skip::Nothing)
                    } else if flags & I != 0 && flags & D != 0 {
                        Err(Skip::Both)
                    } else if old_all || new_all {
                        Err(Skip::EveryFunction)
                    } else if flags & I != 0 {
                        Ok(Claimant::IpModify)
                    } else {
                        Ok(Claimant::Direct { retarget })
                    };
                    assert_eq!(got, want, "{flags:#x} {all} {retarget}");
                    seen += 1;
                }
            }
        }
    }
    assert_eq!(seen, 4 * 8 * 4 * 2);
}
