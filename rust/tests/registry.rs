// SPDX-License-Identifier: GPL-2.0

//! The registry's decisions (`rfcore::registry`) against a model written
//! from the documented rules of `register_ftrace_function()` and of the
//! shared callers (Documentation/trace/ftrace-uses.rst, the comments of
//! `include/linux/ftrace.h`), not from either implementation:
//!
//! - an ops may not join twice, nor after it was deleted; one that wants
//!   the full register set where the arch cannot save it is refused unless
//!   it asked "if supported", in which case it simply gets it where the
//!   arch can; a permanent ops needs `ftrace_enabled`; an ops outside the
//!   kernel's core data is dynamic;
//! - nothing registered: the callers call the stub; two or more: the list
//!   function; one: its function directly, unless it is dynamic or
//!   RCU-only or the arch cannot pass an ops, when the list function calls
//!   it;
//! - an ops' accounting walk covers what its filter and notrace hashes
//!   select ([`Selection::from_user`], itself checked against a set model
//!   in `filter.rs`), and leaves out records disabled at boot unless they
//!   are enabled;
//! - once the last ops has left, a record keeps no user, no request and no
//!   enabled site: only "disabled", "touched" and "modified" survive.
//!
//! Every combination of the flags that matter is checked, with the other
//! bits of the flags word set at random.

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::vec;
use std::vec::Vec;

use super::sim::{Bytes, Source};
use super::util::{seed, Rng};
use crate::rfcore::filter::{FnSet, Selection};
use crate::rfcore::flags::{
    RecFlags, CALL_OPS, CALL_OPS_EN, DIRECT, DIRECT_EN, DISABLED, ENABLED, IPMODIFY, KNOWN,
    MODIFIED, REF_MAX, REGS, REGS_EN, TOUCHED, TRAMP, TRAMP_EN,
};
use crate::rfcore::ipmodify::ops_bits;
use crate::rfcore::registry::{
    admit, change_refused, left_behind, members, modifier, ops_fl, push_front, rewalked,
    trace_function, unlink, walk_matches, walk_takes, Callee, Joining, Links, Passed, Reach,
    Refusal, Sharing,
};

/// The bits `admit()` reads; the others must pass through unchanged.
const READ: [u64; 6] = [
    ops_fl::DELETED,
    ops_fl::ENABLED,
    ops_fl::SAVE_REGS,
    ops_fl::SAVE_REGS_IF_SUPPORTED,
    ops_fl::PERMANENT,
    ops_fl::DYNAMIC,
];

/// The model's answer to an ops asking to join.
fn model_admit(j: Joining) -> Result<u64, Refusal> {
    let has = |bit| j.flags & bit != 0;
    // The refusals that apply, in the order the kernel checks them (the
    // first wins: a deleted ops is "deleted" even if also enabled).
    let mut refusals = Vec::new();
    if has(ops_fl::DELETED) {
        refusals.push(Refusal::Deleted);
    }
    if has(ops_fl::ENABLED) {
        refusals.push(Refusal::AlreadyEnabled);
    }
    let wants_regs = has(ops_fl::SAVE_REGS) || has(ops_fl::SAVE_REGS_IF_SUPPORTED);
    let must_have_regs = has(ops_fl::SAVE_REGS) && !has(ops_fl::SAVE_REGS_IF_SUPPORTED);
    if must_have_regs && !j.with_regs {
        refusals.push(Refusal::RegsUnsupported);
    }
    if has(ops_fl::PERMANENT) && !j.ftrace_enabled {
        refusals.push(Refusal::PermanentWhileDisabled);
    }
    if let Some(first) = refusals.first() {
        return Err(*first);
    }
    let mut flags = j.flags;
    // Without the arch's register set, "if supported" means "yes": the
    // ops is treated as asking for regs everywhere.
    if wants_regs && !j.with_regs {
        flags |= ops_fl::SAVE_REGS;
    }
    if !j.core_data {
        flags |= ops_fl::DYNAMIC;
    }
    Ok(flags)
}

#[test]
fn admission_matches_the_documented_rules() {
    let mut rng = Rng::new(seed(0x7e61));
    let mut checked = 0u32;
    for bits in 0u32..(1 << READ.len()) {
        for env in 0u32..8 {
            for _ in 0..4 {
                // Random noise in the bits admit() does not read.
                let mut flags = rng.next_u64() & !READ.iter().fold(0, |a, b| a | b);
                for (i, bit) in READ.iter().enumerate() {
                    if bits & (1 << i) != 0 {
                        flags |= bit;
                    }
                }
                let j = Joining {
                    flags,
                    ftrace_enabled: env & 1 != 0,
                    core_data: env & 2 != 0,
                    with_regs: env & 4 != 0,
                };
                assert_eq!(admit(j), model_admit(j), "{j:?}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 64 * 8 * 4);
}

#[test]
fn admission_cases_from_the_documentation() {
    let j = |flags, with_regs| Joining {
        flags,
        ftrace_enabled: true,
        core_data: true,
        with_regs,
    };
    // Registering twice.
    assert_eq!(
        admit(j(ops_fl::ENABLED, true)),
        Err(Refusal::AlreadyEnabled)
    );
    // SAVE_REGS without the arch's support, with and without "if supported".
    assert_eq!(
        admit(j(ops_fl::SAVE_REGS, false)),
        Err(Refusal::RegsUnsupported)
    );
    let both = ops_fl::SAVE_REGS | ops_fl::SAVE_REGS_IF_SUPPORTED;
    assert_eq!(admit(j(both, false)), Ok(both));
    assert_eq!(
        admit(j(ops_fl::SAVE_REGS_IF_SUPPORTED, false)),
        Ok(both),
        "\"if supported\" becomes a plain request without the arch's support"
    );
    assert_eq!(
        admit(j(ops_fl::SAVE_REGS_IF_SUPPORTED, true)),
        Ok(ops_fl::SAVE_REGS_IF_SUPPORTED),
        "with the arch's support the flags stay as asked"
    );
    // A module's ops is dynamic.
    let module = Joining {
        core_data: false,
        ..j(0, true)
    };
    assert_eq!(admit(module), Ok(ops_fl::DYNAMIC));
    // A permanent ops while ftrace is switched off.
    let off = Joining {
        ftrace_enabled: false,
        ..j(ops_fl::PERMANENT, true)
    };
    assert_eq!(admit(off), Err(Refusal::PermanentWhileDisabled));
}

/// The model's choice for the shared callers, from the list as the flags
/// of its ops (head first).
fn model_trace_function(list: &[u64], force_list: bool) -> (Callee, Passed) {
    match list {
        [] => (Callee::Stub, Passed::ListEnd),
        [only] => {
            let needs_list = only & ops_fl::DYNAMIC != 0 || only & ops_fl::RCU != 0 || force_list;
            if needs_list {
                (Callee::List, Passed::First)
            } else {
                (Callee::Ops, Passed::First)
            }
        }
        _ => (Callee::List, Passed::ListEnd),
    }
}

#[test]
fn trace_function_matches_the_documented_rules() {
    let kinds = [
        0,
        ops_fl::DYNAMIC,
        ops_fl::RCU,
        ops_fl::RECURSION,
        ops_fl::DYNAMIC | ops_fl::RCU,
        ops_fl::SAVE_REGS | ops_fl::RECURSION,
        ops_fl::STUB,
    ];
    let mut lists: Vec<Vec<u64>> = vec![Vec::new()];
    for a in kinds {
        lists.push(vec![a]);
        for b in kinds {
            lists.push(vec![a, b]);
            for c in kinds {
                lists.push(vec![a, b, c]);
            }
        }
    }
    for list in &lists {
        for force_list in [false, true] {
            let got = trace_function(list.first().copied(), list.len() > 1, force_list);
            assert_eq!(
                got,
                model_trace_function(list, force_list),
                "{list:?} {force_list}"
            );
        }
    }
    assert_eq!(lists.len(), 1 + 7 + 49 + 343);
}

/// A set of functions for the walk checks.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Set(BTreeSet<u64>);

impl FnSet for Set {
    type Error = Infallible;
    fn empty() -> Result<Self, Infallible> {
        Ok(Set(BTreeSet::new()))
    }
    fn contains(&self, ip: u64) -> bool {
        self.0.contains(&ip)
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    fn union(&self, o: &Self) -> Result<Self, Infallible> {
        Ok(Set(self.0.union(&o.0).copied().collect()))
    }
    fn intersection(&self, o: &Self) -> Result<Self, Infallible> {
        Ok(Set(self.0.intersection(&o.0).copied().collect()))
    }
    fn difference(&self, o: &Self) -> Result<Self, Infallible> {
        Ok(Set(self.0.difference(&o.0).copied().collect()))
    }
}

fn subset(bits: u8) -> Set {
    Set((0..4).filter(|i| bits & (1 << i) != 0).collect())
}

#[test]
fn the_walk_covers_what_the_ops_selects() {
    // Every (filter, notrace) pair over four functions, and a fifth no
    // hash names: the walk's reading of the hashes is the selection's.
    for f in 0u8..16 {
        for n in 0u8..16 {
            let (filter, notrace) = (subset(f), subset(n));
            let reach = if filter.is_empty() {
                Reach::All
            } else {
                Reach::Filter {
                    count: filter.0.len() as u64,
                }
            };
            let selection = match Selection::from_user(filter.clone(), notrace.clone()) {
                Ok(s) => s,
                Err(never) => match never {},
            };
            for ip in 0..5 {
                let walk = walk_matches(reach, filter.contains(ip), notrace.contains(ip));
                assert_eq!(
                    walk,
                    selection.traces(ip),
                    "filter {f:#x} notrace {n:#x} ip {ip}"
                );
            }
        }
    }
}

#[test]
fn the_walk_leaves_out_disabled_records_unless_enabled() {
    for count in [0u64, 1, 7] {
        for extra in [0, DISABLED, ENABLED, DISABLED | ENABLED] {
            let flags = RecFlags::from_raw(count | extra);
            let want = extra & DISABLED == 0 || extra & ENABLED != 0;
            assert_eq!(walk_takes(flags), want, "{:#x}", flags.raw());
        }
    }
}

/// What a record may not keep once no ops is registered, from the
/// documented meaning of each bit: a user, anything an ops asked for, a
/// site still calling, or a bit the kernel does not define.
fn model_left_behind(w: u64) -> bool {
    let wanted_or_enabled = [
        ENABLED,
        REGS,
        REGS_EN,
        TRAMP,
        TRAMP_EN,
        IPMODIFY,
        DIRECT,
        DIRECT_EN,
        CALL_OPS,
        CALL_OPS_EN,
    ];
    w & REF_MAX != 0 || wanted_or_enabled.iter().any(|b| w & b != 0) || w & !KNOWN != 0
}

#[test]
fn after_the_last_ops_only_the_surviving_bits_may_stay() {
    // Each bit alone, then the three survivors in every combination with
    // each bit, then random words.
    for bit in 0..64 {
        let w = 1u64 << bit;
        assert_eq!(
            left_behind(RecFlags::from_raw(w)),
            model_left_behind(w),
            "{w:#x}"
        );
    }
    for keep in 0..8u64 {
        let base = [DISABLED, TOUCHED, MODIFIED]
            .iter()
            .enumerate()
            .filter(|(i, _)| keep & (1 << i) != 0)
            .fold(0, |a, (_, b)| a | b);
        assert!(!left_behind(RecFlags::from_raw(base)), "{base:#x}");
        for bit in 0..64 {
            let w = base | 1u64 << bit;
            assert_eq!(
                left_behind(RecFlags::from_raw(w)),
                model_left_behind(w),
                "{w:#x}"
            );
        }
    }
    let mut rng = Rng::new(seed(0x1ef7_be41));
    for _ in 0..20_000 {
        // Mostly known bits, so both answers are common.
        let w = rng.next_u64() & rng.next_u64() & (KNOWN | 1 << 40);
        assert_eq!(
            left_behind(RecFlags::from_raw(w)),
            model_left_behind(w),
            "{w:#x}"
        );
    }
}

/// A list of ops numbered 0..N, as the registry's [`Links`] see it.
struct Model {
    head: Option<u8>,
    next: [Option<u8>; 8],
}

impl Links for Model {
    type Op = u8;
    fn head(&self) -> Option<u8> {
        self.head
    }
    fn next(&self, op: u8) -> Option<u8> {
        self.next[usize::from(op)]
    }
    fn set_head(&mut self, to: Option<u8>) {
        self.head = to;
    }
    fn set_next(&mut self, op: u8, to: Option<u8>) {
        self.next[usize::from(op)] = to;
    }
}

impl Model {
    fn walk_from(&self, mut at: Option<u8>) -> Vec<u8> {
        let mut seen = Vec::new();
        while let Some(op) = at {
            assert!(seen.len() <= 8, "the links loop: {seen:?}");
            seen.push(op);
            at = self.next[usize::from(op)];
        }
        seen
    }
}

#[test]
fn the_list_joins_and_leaves_like_a_sequence() {
    let mut rng = Rng::new(seed(0x11a7));
    for _ in 0..2000 {
        let mut list = Model {
            head: None,
            next: [None; 8],
        };
        let mut want: Vec<u8> = Vec::new();
        for _ in 0..40 {
            let op = (rng.next_u64() % 8) as u8;
            if rng.next_u64() & 1 == 0 && !want.contains(&op) {
                push_front(&mut list, op);
                want.insert(0, op);
            } else {
                let was_on = want.contains(&op);
                let before: Vec<u8> = want.clone();
                assert_eq!(unlink(&mut list, op), was_on, "{op} in {before:?}");
                want.retain(|&o| o != op);
                if was_on {
                    // A reader standing on the op that left walks on to
                    // the end through ops that were after it.
                    let after = list.walk_from(list.next[usize::from(op)]);
                    let pos = before.iter().position(|&o| o == op).unwrap();
                    assert_eq!(after, before[pos + 1..].to_vec());
                }
            }
            assert_eq!(list.walk_from(list.head), want);
        }
    }
}

/// One registry of eight ops driven by `src` for at most `steps` steps:
/// each step asks one ops to join (with request bits, the `ftrace_enabled`
/// sysctl, where it lives and the arch's register support chosen by
/// `src`) or to leave. The admission is checked against the model, an
/// admitted ops joins the list and is enabled, a leaving one is disabled;
/// after every step the list walks as the model's sequence and the shared
/// callers' choice is the model's for that sequence. A reader standing on
/// an ops that left walks on to the end through the ops after it. Returns
/// the steps run (fewer once `src` runs out). Used by the test below and
/// by the fuzz target `fuzz/registry`.
pub fn lifecycle<S: Source>(src: &mut S, steps: u32) -> u32 {
    let mut list = Model {
        head: None,
        next: [None; 8],
    };
    let mut want: Vec<u8> = Vec::new();
    let mut flags = [0u64; 8];
    let mut ran = 0;
    while ran < steps {
        let Some(op) = src.below(8) else { break };
        let Some(join) = src.chance(1, 2) else { break };
        let Some(bits) = src.below(1 << READ.len()) else {
            break;
        };
        let Some(env) = src.below(8) else { break };
        let Some(force_list) = src.chance(1, 4) else {
            break;
        };
        let Some(rcu) = src.chance(1, 4) else { break };
        let op = op as u8;
        let i = usize::from(op);
        if join {
            // An ops already on the list asks with its own flags (it is
            // enabled, so refused); another asks with the chosen bits.
            let mut asked = flags[i];
            if asked & ops_fl::ENABLED == 0 {
                asked = READ
                    .iter()
                    .enumerate()
                    .filter(|(b, _)| bits & (1 << b) != 0)
                    .fold(if rcu { ops_fl::RCU } else { 0 }, |a, (_, f)| a | f)
                    & !ops_fl::ENABLED;
            }
            let j = Joining {
                flags: asked,
                ftrace_enabled: env & 1 != 0,
                core_data: env & 2 != 0,
                with_regs: env & 4 != 0,
            };
            let got = admit(j);
            assert_eq!(got, model_admit(j), "{j:?}");
            if let Ok(f) = got {
                push_front(&mut list, op);
                want.insert(0, op);
                flags[i] = f | ops_fl::ENABLED;
            }
        } else {
            let before = want.clone();
            let was_on = before.contains(&op);
            assert_eq!(unlink(&mut list, op), was_on, "{op} in {before:?}");
            if was_on {
                want.retain(|&o| o != op);
                flags[i] &= !ops_fl::ENABLED;
                let after = list.walk_from(list.next[i]);
                let pos = before.iter().position(|&o| o == op).unwrap_or(0);
                assert_eq!(after, before.get(pos + 1..).unwrap_or(&[]).to_vec());
            }
        }
        assert_eq!(list.walk_from(list.head), want);
        let on: Vec<u64> = want.iter().map(|&o| flags[usize::from(o)]).collect();
        let first = list.head.map(|o| flags[usize::from(o)]);
        let more = list
            .head
            .is_some_and(|o| list.next[usize::from(o)].is_some());
        assert_eq!(
            trace_function(first, more, force_list),
            model_trace_function(&on, force_list),
            "list {on:x?}"
        );
        ran += 1;
    }
    ran
}

#[test]
fn random_lifecycles_match_the_model() {
    let mut rng = Rng::new(seed(0x11fe));
    let mut steps = 0u64;
    for _ in 0..2000 {
        steps += u64::from(lifecycle(&mut rng, 60));
    }
    assert_eq!(steps, 2000 * 60);
    // The committed fuzz seeds replay too.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/registry");
    let mut seeds = 0;
    for e in std::fs::read_dir(dir).expect("fuzz/corpus/registry") {
        let data = std::fs::read(e.expect("corpus entry").path()).expect("corpus file");
        lifecycle(&mut Bytes::new(&data), u32::MAX);
        seeds += 1;
    }
    assert!(seeds > 0, "no seeds in {dir}");
}

/// The model of a filter or notrace change, from the comments of
/// `ftrace_hash_rec_update_modify()` and `ftrace_ops_update_code()` in
/// the C code: the changed ops is accounted again, and "if the ops shares
/// the global_ops hash, then we need to update all ops that are enabled
/// and use this hash"; the sites are updated for the changed ops if it is
/// enabled, and for a shared global_ops filter "if there is another ops
/// that shares it, is enabled" (the first one), and never while
/// `ftrace_enabled` is off.
fn model_change(
    on_list: &[u8],
    facts: &[Sharing; 8],
    changed: u8,
    ftrace_enabled: bool,
) -> (Vec<u8>, Option<u8>) {
    let shared = facts[usize::from(changed)].global_hash;
    let mut walked = vec![changed];
    for &op in on_list {
        if shared && op != changed && facts[usize::from(op)].global_hash {
            walked.push(op);
        }
    }
    let own = facts[usize::from(changed)];
    let runner = if !ftrace_enabled {
        None
    } else if own.enabled {
        Some(changed)
    } else if own.global_hash {
        on_list
            .iter()
            .copied()
            .find(|&op| facts[usize::from(op)].global_hash && facts[usize::from(op)].enabled)
    } else {
        None
    };
    (walked, runner)
}

#[test]
fn a_filter_change_walks_and_updates_as_the_model() {
    let mut rng = Rng::new(seed(0xf117));
    let mut runs_for_other = 0u32;
    for _ in 0..5000 {
        let mut list = Model {
            head: None,
            next: [None; 8],
        };
        let mut on_list = Vec::new();
        for op in 0..8u8 {
            if !rng.next_u64().is_multiple_of(3) {
                push_front(&mut list, op);
                on_list.insert(0, op);
            }
        }
        let mut facts = [Sharing {
            enabled: false,
            global_hash: false,
        }; 8];
        for f in &mut facts {
            let r = rng.next_u64();
            *f = Sharing {
                enabled: r & 1 != 0,
                global_hash: r & 6 != 0,
            };
        }
        // The changed ops may be off the list (not registered, or the
        // manager of sub-ops).
        let changed = (rng.next_u64() % 8) as u8;
        let ftrace_enabled = !rng.next_u64().is_multiple_of(4);
        assert_eq!(members(&list).collect::<Vec<_>>(), on_list);
        let walked: Vec<u8> = rewalked(&list, changed, |op| facts[usize::from(op)]).collect();
        let runner = modifier(&list, changed, ftrace_enabled, |op| facts[usize::from(op)]);
        let (want_walked, want_runner) = model_change(&on_list, &facts, changed, ftrace_enabled);
        assert_eq!(walked, want_walked, "{on_list:?} {facts:?} {changed}");
        assert_eq!(runner, want_runner, "{on_list:?} {facts:?} {changed}");
        if runner.is_some_and(|r| r != changed) {
            runs_for_other += 1;
        }
    }
    // The sharing case where another ops runs the pass was reached.
    assert!(runs_for_other > 100, "{runs_for_other}");
}

#[test]
fn an_ipmodify_ops_has_no_notrace_hash() {
    for flags in [
        0,
        ops_fl::ENABLED,
        ops_bits::IPMODIFY,
        ops_bits::IPMODIFY | ops_fl::ENABLED,
    ] {
        let ipmodify = flags & ops_bits::IPMODIFY != 0;
        assert!(!change_refused(flags, false), "{flags:#x}");
        assert_eq!(change_refused(flags, true), ipmodify, "{flags:#x}");
    }
}
