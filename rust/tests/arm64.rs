// SPDX-License-Identifier: GPL-2.0

//! `rfcore::arch::arm64` against encodings made by GNU as/ld and layouts made by
//! GCC (`arm64_golden.txt`, written by `scripts/gen-arm64-golden.sh`), and
//! the CALL_OPS rules: literal choice, reach, order of the writes.

use std::format;
use std::string::String;
use std::vec::Vec;

use super::golden::{self, parse_hex};
use super::util::{note, seed, Rng};
use crate::rfcore::arch::arm64::{
    decode, encode_bl, is_bti, literal_addr, literal_from_lr, literal_ops, plan, reach, verify,
    Decoded, EncodeError, LayoutError, ListReason, LiteralOps, Mismatch, Plan, PlanError, Reach,
    ReachError, Site, Step, Write, BL_RANGE, BTI_C, MOV_X9_LR, NOP,
};
use crate::rfcore::flags::{RecFlags, CALL_OPS, CALL_OPS_EN, ENABLED, REF_BITS};
use crate::rfcore::record::decide;

const GOLDEN: &str = include_str!("arm64_golden.txt");

const KTEXT: u64 = 0xffff_8000_8001_0000;
const CALLER: u64 = 0xffff_8000_80e1_2340;
const NOP_OPS: u64 = 0xffff_8000_8200_0100;
const LIST_OPS: u64 = 0xffff_8000_8200_0200;
const OPS_A: u64 = 0xffff_0000_c123_4500;
const OPS_B: u64 = 0xffff_0000_c123_4600;
/// The ops in front of a published set block.
const SET_A: u64 = 0xffff_0000_c200_1008;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Bl,
    Nop,
    Mov,
    Bti,
}

#[derive(Clone, Copy, Debug)]
struct Line {
    ip: u64,
    target: u64,
    kind: Kind,
    /// `None` when ld could not encode the BL.
    word: Option<u32>,
}

#[derive(Clone, Debug)]
struct Patch {
    entry: u64,
    func: u64,
    name: String,
    words: [u32; 5],
    flags: String,
}

fn parse_word(s: &str) -> u32 {
    assert_eq!(s.len(), 8, "bad word {s:?}");
    u32::from_str_radix(s, 16).unwrap_or_else(|_| panic!("bad word {s:?}"))
}

fn parse(text: &str) -> (Vec<Line>, Vec<Patch>) {
    let mut lines = Vec::new();
    let mut patches = Vec::new();
    for l in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f[0] == "patch" {
            assert_eq!(f.len(), 10, "bad layout line {l:?}");
            let mut words = [0u32; 5];
            for (w, s) in words.iter_mut().zip(&f[4..9]) {
                *w = parse_word(s);
            }
            patches.push(Patch {
                entry: parse_hex(f[1]),
                func: parse_hex(f[2]),
                name: f[3].into(),
                words,
                flags: f[9].into(),
            });
            continue;
        }
        assert_eq!(f.len(), 4, "bad golden line {l:?}");
        let kind = match f[2] {
            "bl" => Kind::Bl,
            "nop" => Kind::Nop,
            "mov" => Kind::Mov,
            "bti" => Kind::Bti,
            k => panic!("bad kind {k:?} in {l:?}"),
        };
        let target = if kind == Kind::Bl { parse_hex(f[1]) } else { 0 };
        let word = if f[3] == "out-of-range" {
            None
        } else {
            Some(parse_word(f[3]))
        };
        lines.push(Line {
            ip: parse_hex(f[0]),
            target,
            kind,
            word,
        });
    }
    (lines, patches)
}

/// The offset from the BL itself, as a 64-bit signed difference modulo 2^64.
fn offset(ip: u64, target: u64) -> i64 {
    target.wrapping_sub(ip) as i64
}

#[test]
fn golden_encodings() {
    let (lines, _) = parse(GOLDEN);
    let (mut good, mut refused, mut fixed) = (0, 0, 0);
    let (mut max_edges, mut min_edges) = (0, 0);
    for l in &lines {
        let ctx = format!("{l:x?}");
        match (l.kind, l.word) {
            (Kind::Nop, Some(w)) => {
                assert_eq!(w, NOP, "{ctx}");
                assert_eq!(decode(l.ip, w), Decoded::Nop, "{ctx}");
                fixed += 1;
            }
            (Kind::Mov, Some(w)) => {
                assert_eq!(w, MOV_X9_LR, "{ctx}");
                assert_eq!(decode(l.ip, w), Decoded::MovX9Lr, "{ctx}");
                fixed += 1;
            }
            (Kind::Bti, Some(w)) => {
                assert_eq!(w, BTI_C, "{ctx}");
                assert!(is_bti(w), "{ctx}");
                assert_eq!(decode(l.ip, w), Decoded::Other, "{ctx}");
                fixed += 1;
            }
            (Kind::Bl, Some(w)) => {
                good += 1;
                assert_eq!(encode_bl(l.ip, l.target), Ok(w), "{ctx}");
                assert_eq!(decode(l.ip, w), Decoded::Bl(l.target), "{ctx}");
                assert!(!is_bti(w), "{ctx}");
                assert_eq!(verify(w, w), Ok(()), "{ctx}");
                // One instruction past an edge is refused.
                let d = offset(l.ip, l.target);
                let past = if d == BL_RANGE as i64 - 4 {
                    max_edges += 1;
                    Some(l.target.wrapping_add(4))
                } else if d == -(BL_RANGE as i64) {
                    min_edges += 1;
                    Some(l.target.wrapping_sub(4))
                } else {
                    None
                };
                if let Some(p) = past {
                    assert_eq!(
                        encode_bl(l.ip, p),
                        Err(EncodeError::OutOfRange {
                            ip: l.ip,
                            target: p
                        }),
                        "{ctx} one past"
                    );
                }
            }
            (Kind::Bl, None) => {
                refused += 1;
                assert_eq!(
                    encode_bl(l.ip, l.target),
                    Err(EncodeError::OutOfRange {
                        ip: l.ip,
                        target: l.target
                    }),
                    "{ctx}"
                );
            }
            _ => panic!("no word in {ctx}"),
        }
    }
    // The file really covers what it is meant to.
    assert!(
        good >= 25 && refused >= 20 && fixed >= 6,
        "{good} {refused} {fixed}"
    );
    assert!(max_edges >= 8 && min_edges >= 8, "{max_edges} {min_edges}");
    note(&format!(
        "arm64: {} golden instruction lines: {good} bl ({max_edges} +128MiB-4 and \
         {min_edges} -128MiB edges), {refused} refused by ld, {fixed} fixed words",
        lines.len()
    ));
}

/// The layouts GCC made with `-fpatchable-function-entry=4,2`: every
/// aligned entry becomes a site whose slots hold what the kernel expects,
/// every misaligned one is refused.
#[test]
fn golden_layouts() {
    let (_, patches) = parse(GOLDEN);
    let (mut sites, mut bti_sites, mut misaligned) = (0, 0, 0);
    for p in &patches {
        let ctx = format!("{} {:#x} {}", p.name, p.entry, p.flags);
        let [w0, w1, w2, w3, w4] = p.words;
        let bti = p.flags.contains("bti");
        // GCC puts the symbol 8 bytes past the entry, and the two front
        // NOPs are the literal slot, whatever the alignment.
        assert_eq!(p.func, p.entry + 8, "{ctx}");
        assert_eq!((w0, w1), (NOP, NOP), "{ctx}");
        assert_eq!(is_bti(w2), bti, "{ctx}");
        if p.entry % 8 != 0 {
            misaligned += 1;
            let err = Err(LayoutError::MisalignedLiteral { literal: p.entry });
            assert_eq!(Site::from_patch_entry(p.entry, Some(w2)), err, "{ctx}");
            assert_eq!(Site::from_patch_entry(p.entry, None), err, "{ctx}");
            // Why it must be refused: from the BL slot, the kernel's formula
            // lands 4 bytes before the real literal, in the previous
            // function.
            let ip = p.entry + if bti { 16 } else { 12 };
            assert_eq!(literal_addr(ip), p.entry - 4, "{ctx}");
            assert!(Site::from_ip(ip, bti).is_err(), "{ctx}");
            continue;
        }
        let site =
            Site::from_patch_entry(p.entry, Some(w2)).unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
        sites += 1;
        assert_eq!(site.bti(), bti, "{ctx}");
        assert_eq!(site.literal(), p.entry, "{ctx}");
        assert_eq!(site.func(), p.func, "{ctx}");
        if bti {
            bti_sites += 1;
            assert_eq!(
                (site.mov_ip(), site.ip()),
                (p.entry + 12, p.entry + 16),
                "{ctx}"
            );
            assert_eq!((w3, w4), (NOP, NOP), "{ctx}");
        } else {
            assert_eq!(
                (site.mov_ip(), site.ip()),
                (p.entry + 8, p.entry + 12),
                "{ctx}"
            );
            assert_eq!((w2, w3), (NOP, NOP), "{ctx}");
            assert_eq!(Site::from_patch_entry(p.entry, None), Ok(site), "{ctx}");
        }
        // The record's ip leads back to the same site, through the kernel's
        // formula and through ftrace_caller's.
        assert_eq!(Site::from_ip(site.ip(), bti), Ok(site), "{ctx}");
        assert_eq!(literal_addr(site.ip()), p.entry, "{ctx}");
        assert_eq!(literal_from_lr(site.ip() + 4), p.entry, "{ctx}");
        // A wrong guess about the BTI is caught, not silently wrong.
        assert!(
            matches!(
                Site::from_ip(site.ip(), !bti),
                Err(LayoutError::MisalignedLiteral { .. })
            ),
            "{ctx}"
        );
    }
    assert!(
        sites >= 10 && bti_sites >= 4 && misaligned >= 2,
        "{sites} {bti_sites} {misaligned}"
    );
    note(&format!(
        "arm64: {} GCC patch entries: {sites} sites ({bti_sites} with BTI), \
         {misaligned} misaligned and refused",
        patches.len()
    ));
}

#[test]
fn encode_errors() {
    // Target 0 is "no caller", even when it would be in range.
    assert_eq!(
        encode_bl(0x1000, 0),
        Err(EncodeError::NoTarget { ip: 0x1000 })
    );
    // Misaligned site or target (GNU ld silently drops the low bits; the
    // kernel's encoder returns a BRK).
    for (ip, target) in [
        (KTEXT + 2, CALLER),
        (KTEXT, CALLER + 1),
        (KTEXT + 1, CALLER + 3),
        (KTEXT, KTEXT + 2),
    ] {
        assert_eq!(
            encode_bl(ip, target),
            Err(EncodeError::Misaligned { ip, target })
        );
    }
    // Misalignment is reported before the range.
    let (ip, target) = (KTEXT, KTEXT + BL_RANGE + 2);
    assert_eq!(
        encode_bl(ip, target),
        Err(EncodeError::Misaligned { ip, target })
    );
}

#[test]
fn decode_other_and_verify() {
    let ip = KTEXT;
    for w in [
        0xd420_0000, // BRK #0
        0xd420_0080, // BRK #4 (kprobes)
        0x1400_0000, // B, not BL
        BTI_C,
        0xd503_241f, // BTI
        0xd503_233f, // PACIASP
        0xaa1e_03e8, // MOV X8, LR
        0,
    ] {
        assert_eq!(decode(ip, w), Decoded::Other, "{w:#x}");
    }
    for w in [0xd503_241f, 0xd503_245f, 0xd503_249f, 0xd503_24df] {
        assert!(is_bti(w), "{w:#x}");
    }
    for w in [NOP, MOV_X9_LR, 0xd503_243f, 0xd503_251f] {
        assert!(!is_bti(w), "{w:#x}");
    }
    let bl = encode_bl(ip, CALLER).unwrap();
    assert_eq!(verify(bl, bl), Ok(()));
    assert_eq!(
        verify(NOP, bl),
        Err(Mismatch {
            expected: bl,
            actual: NOP
        })
    );
}

#[test]
fn layout_refusals() {
    // The BL slot must be 4-byte aligned.
    for ip in [KTEXT + 13, KTEXT + 14, KTEXT + 15] {
        for bti in [false, true] {
            assert_eq!(
                Site::from_ip(ip, bti),
                Err(LayoutError::MisalignedInsn { ip })
            );
        }
    }
    // Without BTI the BL slot is at 4 mod 8, with BTI at 0 mod 8.
    assert_eq!(
        Site::from_ip(KTEXT + 16, false),
        Err(LayoutError::MisalignedLiteral { literal: KTEXT + 4 })
    );
    assert_eq!(
        Site::from_ip(KTEXT + 12, true),
        Err(LayoutError::MisalignedLiteral { literal: KTEXT - 4 })
    );
    // The patchable entry must be 8-byte aligned.
    for e in [KTEXT + 4, KTEXT + 2, KTEXT + 1] {
        assert_eq!(
            Site::from_patch_entry(e, Some(NOP)),
            Err(LayoutError::MisalignedLiteral { literal: e })
        );
    }
    // With BTI the function must start with BTI or the NOP.
    assert_eq!(
        Site::from_patch_entry(KTEXT, Some(MOV_X9_LR)),
        Err(LayoutError::UnexpectedEntry {
            func: KTEXT + 8,
            insn: MOV_X9_LR
        })
    );
    // Any BTI variant is skipped, as the kernel does.
    let s = Site::from_patch_entry(KTEXT, Some(0xd503_24df)).unwrap();
    assert_eq!((s.bti(), s.ip()), (true, KTEXT + 16));
    // Sites at the ends of the address space.
    assert_eq!(Site::from_ip(8, false), Err(LayoutError::Wraps { addr: 8 }));
    assert_eq!(
        Site::from_ip(12, true),
        Err(LayoutError::Wraps { addr: 12 })
    );
    let s = Site::from_ip(12, false).unwrap();
    assert_eq!((s.literal(), s.func(), s.mov_ip()), (0, 8, 8));
    let top = u64::MAX - 15; // 8-aligned
    assert_eq!(
        Site::from_patch_entry(top, Some(BTI_C)),
        Err(LayoutError::Wraps { addr: top })
    );
    let s = Site::from_patch_entry(top, Some(NOP)).unwrap();
    assert_eq!(s.ip(), u64::MAX - 3);
    assert_eq!(Site::from_ip(u64::MAX - 3, false), Ok(s));
}

#[test]
fn literal_choice() {
    let one = RecFlags::from_raw(ENABLED | 1);
    let cases = [
        // Nothing on the site, enabled or not.
        (RecFlags::from_raw(0), Some(OPS_A), LiteralOps::Nop),
        (RecFlags::from_raw(ENABLED), Some(OPS_A), LiteralOps::Nop),
        // Users but the site is not a call (calls disabled, or a module
        // record not enabled yet).
        (
            RecFlags::from_raw(1 | CALL_OPS | CALL_OPS_EN),
            Some(OPS_A),
            LiteralOps::Nop,
        ),
        // One eligible ops.
        (
            one.with(CALL_OPS | CALL_OPS_EN),
            Some(OPS_A),
            LiteralOps::Ops(OPS_A),
        ),
        (
            one.with(CALL_OPS | CALL_OPS_EN),
            None,
            LiteralOps::List(ListReason::NoUnique),
        ),
        (
            one.with(CALL_OPS | CALL_OPS_EN),
            Some(0),
            LiteralOps::List(ListReason::NoUnique),
        ),
        // One ops that needs the assist function.
        (one, Some(OPS_A), LiteralOps::List(ListReason::NotEligible)),
        // Requested but not (yet) in the record's state: the arm64 hooks
        // read CALL_OPS_EN.
        (
            one.with(CALL_OPS),
            Some(OPS_A),
            LiteralOps::List(ListReason::NotEligible),
        ),
        // Several ops.
        (
            RecFlags::from_raw(ENABLED | 2),
            None,
            LiteralOps::List(ListReason::Shared),
        ),
        (
            RecFlags::from_raw(ENABLED | 7 | CALL_OPS | CALL_OPS_EN),
            Some(OPS_A),
            LiteralOps::List(ListReason::Shared),
        ),
    ];
    for (flags, unique, want) in cases {
        assert_eq!(
            literal_ops(flags, unique, None),
            want,
            "{flags:x?} {unique:x?}"
        );
        // A published set changes the answer only for several ops.
        let with_set = literal_ops(flags, unique, Some(SET_A));
        if want == LiteralOps::List(ListReason::Shared) {
            assert_eq!(with_set, LiteralOps::Set(SET_A), "{flags:x?}");
        } else {
            assert_eq!(with_set, want, "{flags:x?} {unique:x?}");
        }
        // A set at 0 is no set.
        assert_eq!(literal_ops(flags, unique, Some(0)), want);
    }
    assert_eq!(LiteralOps::Set(SET_A).addr(NOP_OPS, LIST_OPS), SET_A);
    assert_eq!(LiteralOps::Set(SET_A).set(), Some(SET_A));
    assert_eq!(LiteralOps::Ops(OPS_A).set(), None);
    assert_eq!(LiteralOps::Nop.addr(NOP_OPS, LIST_OPS), NOP_OPS);
    assert_eq!(LiteralOps::Ops(OPS_A).addr(NOP_OPS, LIST_OPS), OPS_A);
    assert_eq!(
        LiteralOps::List(ListReason::Shared).addr(NOP_OPS, LIST_OPS),
        LIST_OPS
    );
}

/// After the state machine, the literal is "that ops" exactly when the
/// record is a call with one user that asked for CALL_OPS, over every flags
/// word the record can hold.
#[test]
fn literal_choice_after_every_update() {
    let mut checked = 0u64;
    for high in 0u64..(1 << 13) {
        for count in [0u64, 1, 2, 3] {
            let flags = RecFlags::from_raw((high << REF_BITS) | count);
            for enable in [false, true] {
                let after = decide(flags, enable).flags;
                let call = after.any(ENABLED) && after.count() > 0;
                let single = call && after.count() == 1 && after.any(CALL_OPS);
                let want = if !call {
                    LiteralOps::Nop
                } else if single {
                    LiteralOps::Ops(OPS_B)
                } else if after.count() > 1 {
                    LiteralOps::Set(SET_A)
                } else {
                    LiteralOps::List(ListReason::NotEligible)
                };
                // Skipped records keep their word, whatever it says.
                if flags.skipped() {
                    continue;
                }
                assert_eq!(
                    literal_ops(after, Some(OPS_B), Some(SET_A)),
                    want,
                    "{flags:x?} enable {enable} -> {after:x?}"
                );
                checked += 1;
            }
        }
    }
    note(&format!(
        "arm64: literal choice after decide() for {checked} flag states"
    ));
}

#[test]
fn reach_decisions() {
    let ip = KTEXT + 0x1234;
    let far_mod = 0xffff_8000_7010_000c;
    let plt = 0xffff_8000_7010_0000;
    let direct_near = 0xffff_8000_8400_0000;
    let direct_far = 0xffff_0000_c000_0000;
    // In range: straight there.
    assert_eq!(reach(ip, CALLER, CALLER, None), Ok(Reach::Direct(CALLER)));
    assert_eq!(
        reach(ip, direct_near, CALLER, None),
        Ok(Reach::Direct(direct_near))
    );
    // A far trampoline: through ftrace_caller instead.
    assert_eq!(
        reach(ip, direct_far, CALLER, None),
        Ok(Reach::Caller(CALLER))
    );
    // A misaligned target is not called (the C code would encode a BRK).
    assert_eq!(
        reach(ip, CALLER + 2, CALLER, None),
        Ok(Reach::Caller(CALLER))
    );
    // A far module: its PLT, for the caller and for a far trampoline.
    assert_eq!(
        reach(far_mod, CALLER, CALLER, Some(plt)),
        Ok(Reach::Plt(plt))
    );
    assert_eq!(
        reach(far_mod, direct_far, CALLER, Some(plt)),
        Ok(Reach::Plt(plt))
    );
    // ... but a trampoline next to the module is called directly.
    assert_eq!(
        reach(far_mod, plt + 0x1000, CALLER, Some(plt)),
        Ok(Reach::Direct(plt + 0x1000))
    );
    // No PLT: refused.
    assert_eq!(
        reach(far_mod, CALLER, CALLER, None),
        Err(ReachError::NoPlt {
            ip: far_mod,
            target: CALLER
        })
    );
    // A PLT out of reach is refused too.
    assert_eq!(
        reach(far_mod, CALLER, CALLER, Some(KTEXT)),
        Err(ReachError::Plt(EncodeError::OutOfRange {
            ip: far_mod,
            target: KTEXT
        }))
    );
    assert_eq!(Reach::Plt(plt).addr(), plt);
    assert_eq!(Reach::Caller(CALLER).addr(), CALLER);
}

/// What a CPU running through the site does in a state of the text: the
/// ops it ends up calling, if any.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Runs {
    Nothing,
    /// `ftrace_caller` called the ops in the literal.
    Ops(u64),
    /// A BL straight to somewhere else (a direct trampoline).
    Direct(u64),
}

#[derive(Clone, Copy, Debug)]
struct Text {
    literal: u64,
    insn: u32,
}

fn run(site: Site, t: Text) -> Runs {
    match decode(site.ip(), t.insn) {
        Decoded::Nop => Runs::Nothing,
        Decoded::Bl(CALLER) => Runs::Ops(t.literal),
        Decoded::Bl(x) => Runs::Direct(x),
        d => panic!("site holds {d:?}"),
    }
}

/// Applies a plan as the update pass's `Arch::write` would, checking each
/// instruction's old word.
/// Returns the states seen after each store.
fn apply(site: Site, mut t: Text, p: Plan) -> Vec<Text> {
    let mut seen = Vec::new();
    for w in p.writes {
        match w {
            Write::Literal { addr, ops } => {
                assert_eq!(addr, site.literal());
                t.literal = ops.addr(NOP_OPS, LIST_OPS);
            }
            Write::Insn { ip, old, new } => {
                assert_eq!(ip, site.ip());
                assert_eq!(verify(t.insn, old), Ok(()));
                t.insn = new;
            }
        }
        seen.push(t);
    }
    seen
}

#[test]
fn write_order() {
    let site = Site::from_ip(KTEXT + 12, false).unwrap();
    let ip = site.ip();
    let bl_caller = encode_bl(ip, CALLER).unwrap();
    let direct = KTEXT + 0x40_0000;
    let bl_direct = encode_bl(ip, direct).unwrap();
    let a = LiteralOps::Ops(OPS_A);
    let lit = |ops| Write::Literal {
        addr: site.literal(),
        ops,
    };
    // The plan of `step`, checked to store the literal (`ops`) first, then
    // the instruction in the BL slot (`old` to `new`).
    let planned = |step: Step, ops: LiteralOps, old: u32, new: u32| -> Plan {
        let p = plan(site, step).unwrap();
        assert_eq!(
            p.writes,
            [lit(ops), Write::Insn { ip, old, new }],
            "{step:?}"
        );
        p
    };

    // Init: nop ops, then MOV X9, LR before the BL slot.
    assert_eq!(
        plan(site, Step::Init).unwrap().writes,
        [
            lit(LiteralOps::Nop),
            Write::Insn {
                ip: ip - 4,
                old: NOP,
                new: MOV_X9_LR
            }
        ]
    );

    // Enable: literal first, then NOP -> BL.
    let enable = planned(
        Step::Enable {
            to: Reach::Direct(CALLER),
            ops: a,
        },
        a,
        NOP,
        bl_caller,
    );
    let idle = Text {
        literal: NOP_OPS,
        insn: NOP,
    };
    let states = apply(site, idle, enable);
    assert_eq!(run(site, states[0]), Runs::Nothing);
    assert_eq!(run(site, states[1]), Runs::Ops(OPS_A));

    // Change of ops only (a second ops joins): same BL, checked and
    // rewritten, list ops in the literal first.
    let list = LiteralOps::List(ListReason::Shared);
    let change = planned(
        Step::Modify {
            from: Reach::Direct(CALLER),
            to: Reach::Direct(CALLER),
            ops: list,
        },
        list,
        bl_caller,
        bl_caller,
    );
    let states = apply(site, states[1], change);
    assert_eq!(run(site, states[0]), Runs::Ops(LIST_OPS));
    assert_eq!(run(site, states[1]), Runs::Ops(LIST_OPS));

    // Change of target: to a direct trampoline with its ops.
    let d = LiteralOps::Ops(OPS_B);
    let to_direct = planned(
        Step::Modify {
            from: Reach::Direct(CALLER),
            to: Reach::Direct(direct),
            ops: d,
        },
        d,
        bl_caller,
        bl_direct,
    );
    let states = apply(site, states[1], to_direct);
    // In between, ftrace_caller already sees the direct ops (and would
    // follow its direct_call).
    assert_eq!(run(site, states[0]), Runs::Ops(OPS_B));
    assert_eq!(run(site, states[1]), Runs::Direct(direct));

    // Disable: nop ops first, while the BL is still there, then the NOP.
    let disable = planned(
        Step::Disable {
            from: Reach::Direct(direct),
        },
        LiteralOps::Nop,
        bl_direct,
        NOP,
    );
    let states = apply(site, states[1], disable);
    assert_eq!(run(site, states[0]), Runs::Direct(direct));
    assert_eq!(run(site, states[1]), Runs::Nothing);
    assert_eq!(states[1].literal, NOP_OPS);

    // From ftrace_caller, a CPU between the two stores of a disable calls
    // the nop ops, never the ops being removed.
    let states = apply(
        site,
        Text {
            literal: OPS_A,
            insn: bl_caller,
        },
        plan(
            site,
            Step::Disable {
                from: Reach::Direct(CALLER),
            },
        )
        .unwrap(),
    );
    assert_eq!(run(site, states[0]), Runs::Ops(NOP_OPS));
    assert_eq!(run(site, states[1]), Runs::Nothing);
}

#[test]
fn plan_refusals() {
    let site = Site::from_ip(KTEXT + 16, true).unwrap();
    for step in [
        Step::Enable {
            to: Reach::Direct(CALLER),
            ops: LiteralOps::Nop,
        },
        Step::Modify {
            from: Reach::Direct(CALLER),
            to: Reach::Direct(CALLER),
            ops: LiteralOps::Nop,
        },
    ] {
        assert_eq!(plan(site, step), Err(PlanError::NopOpsOnCall), "{step:?}");
    }
    // A Reach made for another site does not fit this one.
    let far = 0xffff_0000_c000_0000;
    let err = Err(PlanError::Encode(EncodeError::OutOfRange {
        ip: site.ip(),
        target: far,
    }));
    let ops = LiteralOps::Ops(OPS_A);
    for step in [
        Step::Enable {
            to: Reach::Plt(far),
            ops,
        },
        Step::Modify {
            from: Reach::Direct(far),
            to: Reach::Direct(CALLER),
            ops,
        },
        Step::Modify {
            from: Reach::Direct(CALLER),
            to: Reach::Caller(far),
            ops,
        },
        Step::Disable {
            from: Reach::Direct(far),
        },
    ] {
        assert_eq!(plan(site, step), err, "{step:?}");
    }
}

/// Random sites and offsets around the range edges, against an encoding
/// computed here; random sites against their layout.
#[test]
fn random_round_trip() {
    let mut rng = Rng::new(seed(0x00a6_4a64));
    let mut cases = 0;
    for _ in 0..50_000 {
        let ip = match rng.below(3) {
            0 => 0xffff_8000_8000_0000 | (rng.below(1 << 30) << 2),
            1 => rng.next_u64() & !3,
            _ => (u64::MAX - rng.below(64)) & !3,
        };
        let range = BL_RANGE as i64;
        let d: i64 = match rng.below(4) {
            0 => (rng.next_u64() as i32 as i64) << 2,
            1 => range - 8 + 4 * rng.below(4) as i64,
            2 => -range - 8 + 4 * rng.below(4) as i64,
            _ => (rng.below(1 << 26) as i64 - (1 << 25)) << 2,
        };
        let target = ip.wrapping_add(d as u64);
        if target == 0 {
            continue;
        }
        cases += 1;
        let got = encode_bl(ip, target);
        if (-range..range).contains(&d) {
            let w = 0x9400_0000 | ((d >> 2) as u32 & 0x03ff_ffff);
            assert_eq!(got, Ok(w), "ip {ip:#x} target {target:#x}");
            assert_eq!(decode(ip, w), Decoded::Bl(target));
        } else {
            assert_eq!(got, Err(EncodeError::OutOfRange { ip, target }));
        }
        // Any BL word decodes to a target that encodes back to it.
        let w = 0x9400_0000 | (rng.next_u64() as u32 & 0x03ff_ffff);
        if let Decoded::Bl(t) = decode(ip, w) {
            if t != 0 {
                assert_eq!(encode_bl(ip, t), Ok(w), "ip {ip:#x} word {w:#x}");
            }
        } else {
            panic!("{w:#x} is a BL");
        }
        // Misaligned ends.
        let skew = 1 + rng.below(3);
        let (mip, mt) = if rng.bool() {
            (ip | skew, target)
        } else {
            (ip, target | skew)
        };
        assert_eq!(
            encode_bl(mip, mt),
            Err(EncodeError::Misaligned {
                ip: mip,
                target: mt
            })
        );

        // A site around an 8-aligned literal.
        let literal = rng.next_u64() & !7 & (u64::MAX >> 1);
        let bti = rng.bool();
        let entry_insn = if bti { BTI_C } else { NOP };
        let s = Site::from_patch_entry(literal, Some(entry_insn)).unwrap();
        let sip = literal + if bti { 16 } else { 12 };
        assert_eq!((s.ip(), s.mov_ip(), s.func()), (sip, sip - 4, literal + 8));
        assert_eq!(Site::from_ip(sip, bti), Ok(s));
        assert_eq!(literal_addr(sip), literal);
        assert_eq!(literal_from_lr(sip + 4), literal);
        assert!(Site::from_ip(sip, !bti).is_err());
        assert!(Site::from_patch_entry(literal + 4, Some(entry_insn)).is_err());
    }
    note(&format!(
        "arm64: {cases} random encode/decode/layout round trips"
    ));
}

/// Reruns the generator and compares with the committed file, when the
/// aarch64 binutils and GCC are here.
#[test]
fn golden_file_is_current() {
    let tools = [
        "aarch64-linux-gnu-as",
        "aarch64-linux-gnu-ld",
        "aarch64-linux-gnu-objdump",
        "aarch64-linux-gnu-nm",
        "aarch64-linux-gnu-gcc",
        "bash",
    ];
    let Some(fresh) = golden::regenerate("arm64", &tools, "aarch64 binutils/gcc or bash") else {
        return;
    };
    // Another GCC may lay functions out differently: compare only with the
    // same tools.
    let versions = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("# as:") || l.starts_with("# cc:"))
            .map(String::from)
            .collect()
    };
    if versions(&fresh) != versions(GOLDEN) {
        note(&format!(
            "arm64: not comparing arm64_golden.txt: made with {:?}, tools here are {:?}",
            versions(GOLDEN),
            versions(&fresh)
        ));
        return;
    }
    golden::assert_current("arm64", &fresh, GOLDEN, "aarch64 binutils and GCC");
}
