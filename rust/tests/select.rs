// SPDX-License-Identifier: GPL-2.0

//! Target and ops selection (`rfcore::select`) against a reference written
//! from the documented rules, over every flag combination that matters and
//! over random ops lists.

use std::vec::Vec;

use super::util::{note, seed, Rng};
use crate::rfcore::flags::{
    RecFlags, CALL_OPS, DIRECT, DIRECT_EN, ENABLED, REGS, REGS_EN, TRAMP, TRAMP_EN,
};
use crate::rfcore::select::{
    addr_curr, addr_new, call_ops_target, gather, route_curr, route_new, tramp_ops_curr,
    tramp_ops_new, tramp_ops_other, unique_ops, Callers, Choice, Gathered, Need, OpsList, Problem,
    Route,
};

const CALLER: u64 = 0xffff_ffff_8100_0000;
const REGS_CALLER: u64 = 0xffff_ffff_8100_1000;
const DIRECT_TRAMP: u64 = 0xffff_ffff_a000_0000;

/// One simulated ops: filter as a set of ips (`None` = all), notrace set.
#[derive(Clone, Debug, Default)]
struct Op {
    filter: Option<Vec<u64>>,
    notrace: Vec<u64>,
    old_filter: Option<Vec<u64>>,
    old_notrace: Vec<u64>,
    trampoline: u64,
    adding: bool,
    modifying: bool,
}

fn selects(filter: &Option<Vec<u64>>, notrace: &[u64], ip: u64) -> bool {
    filter.as_ref().is_none_or(|f| f.contains(&ip)) && !notrace.contains(&ip)
}

/// A list of ops; an empty list walks the end marker (index `usize::MAX`)
/// whose empty hashes cover every site, as the kernel's does.
#[derive(Default)]
struct List {
    ops: Vec<Op>,
    removed: Option<usize>,
    direct: Vec<(u64, u64)>,
    /// Calls of `head()`: one per walk.
    heads: u64,
}

const END: usize = usize::MAX;

impl OpsList for List {
    type Ops = usize;
    fn head(&mut self) -> Option<usize> {
        self.heads += 1;
        Some(if self.ops.is_empty() { END } else { 0 })
    }
    fn next(&mut self, op: usize) -> Option<usize> {
        let n = op.checked_add(1)?;
        (n < self.ops.len()).then_some(n)
    }
    fn trampoline(&mut self, op: usize) -> u64 {
        self.ops.get(op).map_or(0, |o| o.trampoline)
    }
    fn adding(&mut self, op: usize) -> bool {
        self.ops.get(op).is_some_and(|o| o.adding)
    }
    fn modifying(&mut self, op: usize) -> bool {
        self.ops.get(op).is_some_and(|o| o.modifying)
    }
    fn covers(&mut self, op: usize, ip: u64) -> bool {
        self.ops
            .get(op)
            .is_none_or(|o| selects(&o.filter, &o.notrace, ip))
    }
    fn covered(&mut self, op: usize, ip: u64) -> bool {
        self.ops
            .get(op)
            .is_none_or(|o| selects(&o.old_filter, &o.old_notrace, ip))
    }
    fn removed(&mut self) -> Option<usize> {
        self.removed
    }
}

impl Callers for List {
    fn caller(&self) -> u64 {
        CALLER
    }
    fn regs_caller(&self) -> u64 {
        REGS_CALLER
    }
    fn direct(&mut self, ip: u64) -> u64 {
        self.direct
            .iter()
            .find(|(i, _)| *i == ip)
            .map_or(0, |(_, a)| *a)
    }
}

fn new_choice(list: &mut List, ip: u64, flags: u64) -> Choice {
    let mut callers = List {
        direct: list.direct.clone(),
        ..Default::default()
    };
    addr_new(list, &mut callers, ip, RecFlags::from_raw(flags))
}

fn curr_choice(list: &mut List, ip: u64, flags: u64) -> Choice {
    let mut callers = List {
        direct: list.direct.clone(),
        ..Default::default()
    };
    addr_curr(list, &mut callers, ip, RecFlags::from_raw(flags))
}

/// The routes, over every combination of the bits they read and counts
/// 0..=3, against a table written from the rules.
#[test]
fn routes_follow_the_documented_precedence() {
    let mut n = 0;
    for bits in 0u64..64 {
        for count in 0u64..=3 {
            let pick = |b: u64| bits & b != 0;
            let mut flags = count;
            for (i, b) in [DIRECT, TRAMP, REGS, DIRECT_EN, TRAMP_EN, REGS_EN]
                .iter()
                .enumerate()
            {
                if bits & (1 << i) != 0 {
                    flags |= b;
                }
            }
            let f = RecFlags::from_raw(flags | ENABLED);
            let want_new = if pick(1) && count == 1 {
                Route::Direct
            } else if pick(2) {
                Route::Trampoline
            } else if pick(4) {
                Route::RegsCaller
            } else {
                Route::Caller
            };
            let want_curr = if pick(8) {
                Route::Direct
            } else if pick(16) {
                Route::Trampoline
            } else if pick(32) {
                Route::RegsCaller
            } else {
                Route::Caller
            };
            assert_eq!(route_new(f), want_new, "flags {flags:#x}");
            assert_eq!(route_curr(f), want_curr, "flags {flags:#x}");
            n += 1;
        }
    }
    note(&std::format!("select routes: {n} flag words"));
}

#[test]
fn direct_wins_only_for_a_single_user_and_falls_through_without_an_entry() {
    let mut list = List {
        ops: std::vec![Op::default()],
        direct: std::vec![(0x10, DIRECT_TRAMP)],
        ..Default::default()
    };
    let c = new_choice(&mut list, 0x10, DIRECT | REGS | 1);
    assert_eq!(
        c,
        Choice {
            addr: DIRECT_TRAMP,
            problem: None
        }
    );
    // two users: no direct call, the regs caller
    let c = new_choice(&mut list, 0x10, DIRECT | REGS | 2);
    assert_eq!(
        c,
        Choice {
            addr: REGS_CALLER,
            problem: None
        }
    );
    // no table entry: reported, then the next rule
    let c = new_choice(&mut list, 0x20, DIRECT | REGS | 1);
    assert_eq!(
        c,
        Choice {
            addr: REGS_CALLER,
            problem: Some(Problem::NoDirect)
        }
    );
    let c = curr_choice(&mut list, 0x20, DIRECT_EN | 1);
    assert_eq!(
        c,
        Choice {
            addr: CALLER,
            problem: Some(Problem::NoDirect)
        }
    );
    let c = curr_choice(&mut list, 0x10, DIRECT_EN | TRAMP_EN | 3);
    assert_eq!(
        c,
        Choice {
            addr: DIRECT_TRAMP,
            problem: None
        }
    );
}

#[test]
fn trampoline_of_the_first_covering_ops_and_its_failures() {
    let a = Op {
        filter: Some(std::vec![0x10]),
        trampoline: 0xa000,
        ..Default::default()
    };
    let b = Op {
        filter: Some(std::vec![0x10, 0x20]),
        trampoline: 0xb000,
        ..Default::default()
    };
    let plain = Op {
        filter: Some(std::vec![0x30]),
        ..Default::default()
    };
    let mut list = List {
        ops: std::vec![a, b, plain],
        ..Default::default()
    };
    assert_eq!(new_choice(&mut list, 0x10, TRAMP | 1).addr, 0xa000);
    assert_eq!(new_choice(&mut list, 0x20, TRAMP | REGS | 1).addr, 0xb000);
    // the first covering ops has no trampoline: broken accounting
    let c = new_choice(&mut list, 0x30, TRAMP | 1);
    assert_eq!(
        c,
        Choice {
            addr: CALLER,
            problem: Some(Problem::NoTrampoline)
        }
    );
    // nobody covers the site
    let c = new_choice(&mut list, 0x40, TRAMP | REGS | 1);
    assert_eq!(
        c,
        Choice {
            addr: CALLER,
            problem: Some(Problem::NoTrampoline)
        }
    );
    assert_eq!(tramp_ops_other(&mut list, 0x10, 0), Some(1));
    assert_eq!(tramp_ops_other(&mut list, 0x10, 1), Some(0));
    assert_eq!(tramp_ops_other(&mut list, 0x30, 9), None);
}

#[test]
fn current_trampoline_during_an_update() {
    let owner = Op {
        filter: Some(std::vec![0x10]),
        trampoline: 0xa000,
        ..Default::default()
    };
    let newcomer = Op {
        filter: Some(std::vec![0x10]),
        trampoline: 0xb000,
        adding: true,
        ..Default::default()
    };
    let mut list = List {
        ops: std::vec![newcomer.clone(), owner.clone()],
        ..Default::default()
    };
    // an ops still being added is skipped
    assert_eq!(tramp_ops_curr(&mut list, 0x10), Some(1));
    assert_eq!(curr_choice(&mut list, 0x10, TRAMP_EN | 1).addr, 0xa000);
    // the ops being removed owns the sites of its old filter first
    let gone = Op {
        old_filter: Some(std::vec![0x10]),
        trampoline: 0xc000,
        ..Default::default()
    };
    list.ops.push(gone);
    list.removed = Some(2);
    assert_eq!(tramp_ops_curr(&mut list, 0x10), Some(2));
    assert_eq!(curr_choice(&mut list, 0x10, TRAMP_EN | 1).addr, 0xc000);
    list.removed = None;
    // an ops changing its filter owns its old sites, not its new ones
    let moving = Op {
        filter: Some(std::vec![0x20]),
        old_filter: Some(std::vec![0x30]),
        trampoline: 0xd000,
        modifying: true,
        ..Default::default()
    };
    let mut list = List {
        ops: std::vec![moving],
        ..Default::default()
    };
    assert_eq!(tramp_ops_curr(&mut list, 0x30), Some(0));
    assert_eq!(tramp_ops_curr(&mut list, 0x20), None);
    let c = curr_choice(&mut list, 0x20, TRAMP_EN | REGS_EN | 1);
    assert_eq!(
        c,
        Choice {
            addr: CALLER,
            problem: Some(Problem::NoTrampoline)
        }
    );
    // the removed ops is taken as it is, even without a trampoline: the
    // kernel checks for a missing ops only
    let mut list = List {
        ops: std::vec![Op::default()],
        removed: Some(0),
        ..Default::default()
    };
    assert_eq!(
        curr_choice(&mut list, 0x10, TRAMP_EN | 1),
        Choice {
            addr: 0,
            problem: None
        }
    );
}

#[test]
fn the_empty_list_walks_its_end_marker() {
    let mut list = List::default();
    // the end marker's empty hashes cover every site
    assert_eq!(tramp_ops_new(&mut list, 0x10), Some(END));
    assert_eq!(unique_ops(&mut list, 0x10), Some(END));
    // and it has no trampoline
    let c = new_choice(&mut list, 0x10, TRAMP | 1);
    assert_eq!(c.problem, Some(Problem::NoTrampoline));
    assert_eq!(tramp_ops_curr(&mut list, 0x10), None);
}

/// Random ops lists: unique_ops and call_ops_target against a count of the
/// covering ops, tramp_ops_new against a plain scan.
#[test]
fn random_lists_against_a_scan() {
    let s = seed(0x5e1e_c7ed);
    let mut rng = Rng::new(s);
    let ips: Vec<u64> = (1..=8).map(|i| i * 0x10).collect();
    let mut cases = 0u64;
    for _ in 0..4000 {
        let n = rng.below(5) as usize;
        let mut list = List::default();
        for _ in 0..n {
            let sub = |rng: &mut Rng| -> Vec<u64> {
                ips.iter().copied().filter(|_| rng.chance(1, 3)).collect()
            };
            let filter = if rng.chance(1, 4) {
                None
            } else {
                Some(sub(&mut rng))
            };
            let notrace = if rng.chance(1, 3) {
                sub(&mut rng)
            } else {
                Vec::new()
            };
            list.ops.push(Op {
                filter,
                notrace,
                trampoline: if rng.bool() {
                    0x1000 + rng.below(16) * 8
                } else {
                    0
                },
                ..Default::default()
            });
        }
        for &ip in &ips {
            let covering: Vec<usize> = (0..list.ops.len())
                .filter(|&i| selects(&list.ops[i].filter, &list.ops[i].notrace, ip))
                .collect();
            let want_unique = if list.ops.is_empty() {
                Some(END)
            } else if covering.len() == 1 {
                Some(covering[0])
            } else {
                None
            };
            assert_eq!(unique_ops(&mut list, ip), want_unique, "seed {s:#x}");
            let want_first = if list.ops.is_empty() {
                Some(END)
            } else {
                covering.first().copied()
            };
            assert_eq!(tramp_ops_new(&mut list, ip), want_first, "seed {s:#x}");
            let flags = RecFlags::from_raw(CALL_OPS | covering.len() as u64);
            let want_call_ops = if covering.len() == 1 {
                want_unique
            } else {
                None
            };
            assert_eq!(
                call_ops_target(&mut list, ip, flags),
                want_call_ops,
                "seed {s:#x}"
            );
            if let Some(&first) = covering.first() {
                let t = list.ops[first].trampoline;
                let c = new_choice(&mut list, ip, TRAMP | 1);
                if t != 0 {
                    assert_eq!(
                        c,
                        Choice {
                            addr: t,
                            problem: None
                        },
                        "seed {s:#x}"
                    );
                } else {
                    assert_eq!(c.problem, Some(Problem::NoTrampoline), "seed {s:#x}");
                }
            }
            cases += 1;
        }
    }
    note(&std::format!(
        "select random lists: {cases} cases (seed {s:#x})"
    ));
}

/// A random subset of `ips`, or (one time in four) every site.
fn random_filter(rng: &mut Rng, ips: &[u64]) -> Option<Vec<u64>> {
    if rng.chance(1, 4) {
        None
    } else {
        Some(ips.iter().copied().filter(|_| rng.chance(1, 3)).collect())
    }
}

/// A random subset of `ips` for a notrace hash, often empty.
fn random_notrace(rng: &mut Rng, ips: &[u64]) -> Vec<u64> {
    if rng.chance(1, 3) {
        ips.iter().copied().filter(|_| rng.chance(1, 4)).collect()
    } else {
        Vec::new()
    }
}

/// A random ops list with every kind of ops the selection cares about:
/// trampolines or not, old filters, ops being added or changing their
/// filter, a removed ops, direct entries for some sites.
fn random_list(rng: &mut Rng, ips: &[u64]) -> List {
    let n = rng.below(6) as usize;
    let mut list = List::default();
    for _ in 0..n {
        list.ops.push(Op {
            filter: random_filter(rng, ips),
            notrace: random_notrace(rng, ips),
            old_filter: random_filter(rng, ips),
            old_notrace: random_notrace(rng, ips),
            trampoline: if rng.bool() {
                0x1000 + rng.below(16) * 8
            } else {
                0
            },
            adding: rng.chance(1, 5),
            modifying: rng.chance(1, 5),
        });
    }
    if n > 0 && rng.chance(1, 4) {
        list.removed = Some(rng.below(n as u64) as usize);
    }
    for &ip in ips {
        if rng.chance(1, 2) {
            list.direct.push((ip, DIRECT_TRAMP + ip));
        }
    }
    list
}

/// Random flags over the bits the selection reads, counts 0..=3.
fn random_flags(rng: &mut Rng) -> u64 {
    let mut flags = rng.below(4);
    for b in [
        DIRECT, TRAMP, REGS, DIRECT_EN, TRAMP_EN, REGS_EN, CALL_OPS, ENABLED,
    ] {
        if rng.chance(1, 3) {
            flags |= b;
        }
    }
    flags
}

/// `gather` against the three functions it replaces, on random ops lists
/// and flags: the same answers, and the list's head asked for at most once
/// (exactly once when the unique ops is wanted).
#[test]
fn gather_answers_as_the_three_walks() {
    let s = seed(0x6a7e_e12d);
    let mut rng = Rng::new(s);
    let ips: Vec<u64> = (1..=8).map(|i| i * 0x10).collect();
    let (mut cases, mut walks, mut tramp_routes, mut uniques) = (0u64, 0u64, 0u64, 0u64);
    for _ in 0..3000 {
        let mut list = random_list(&mut rng, &ips);
        for _ in 0..4 {
            let ip = rng.pick(&ips);
            let flags = random_flags(&mut rng);
            let need = Need {
                new: rng.bool(),
                curr: rng.bool(),
                unique: rng.bool(),
            };
            let want_unique = need.unique;
            let f = RecFlags::from_raw(flags);
            let mut callers = List {
                direct: list.direct.clone(),
                ..Default::default()
            };
            let new = need.new.then(|| addr_new(&mut list, &mut callers, ip, f));
            let curr = need.curr.then(|| addr_curr(&mut list, &mut callers, ip, f));
            let unique = if want_unique {
                unique_ops(&mut list, ip)
            } else {
                None
            };
            let heads = list.heads;
            let g = gather(&mut list, &mut callers, ip, f, need);
            let ctx = || std::format!("seed {s:#x} ip {ip:#x} flags {flags:#x}");
            assert_eq!(g, Gathered { new, curr, unique }, "{}", ctx());
            let walked = list.heads - heads;
            assert!(walked <= 1, "{} head() calls: {}", walked, ctx());
            if want_unique {
                assert_eq!(walked, 1, "{}", ctx());
                uniques += u64::from(unique.is_some());
            }
            walks += walked;
            // The list is walked only for an answer asked for (a direct
            // route without its entry falls back to the trampoline one).
            let tramp =
                |route, bit| route == Route::Trampoline || (route == Route::Direct && f.any(bit));
            let tramp_new = need.new && tramp(route_new(f), TRAMP);
            let tramp_curr = need.curr && tramp(route_curr(f), TRAMP_EN);
            if !(tramp_new || tramp_curr || need.unique) {
                assert_eq!(walked, 0, "{}", ctx());
            }
            tramp_routes += u64::from(tramp_new || tramp_curr);
            cases += 1;
        }
    }
    assert!(tramp_routes > cases / 8 && uniques > cases / 20);
    note(&std::format!(
        "select gather: {cases} random cases equal to addr_new/addr_curr/unique_ops, \
         {walks} list walks (seed {s:#x})"
    ));
}
