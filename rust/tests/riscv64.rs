// SPDX-License-Identifier: GPL-2.0

//! `rfcore::arch::riscv64` against encodings made by GNU as/ld and layouts made
//! by LLVM (`riscv64_golden.txt`, written by
//! `scripts/gen-riscv64-golden.sh`), and the CALL_OPS rules: the sign
//! carry, the reach of the fixed `auipc`, refusals, order of the writes.

use std::format;
use std::string::String;
use std::vec::Vec;

use super::golden::{self, parse_hex};
use super::util::{note, seed, Rng};
use crate::rfcore::arch::riscv64::{
    auipc_or_kprobe, blank, call_site, decode, decode_word, encode_call, encode_offset,
    fixed_auipc, literal_addr, literal_from_t0, plan, plan_init, plan_update, reach, split, verify,
    Call, Decoded, EncodeError, LayoutError, ListReason, LiteralOps, Mismatch, Plan, PlanError,
    Reach, ReachError, Riscv64Change, Site, Step, Word, Write, AUIPC_T0, BLANK, BLANK_RVC,
    CALL_MAX, CALL_MIN, C_EBREAK, C_NOP, EBREAK, JALR_T0, NOP,
};
use crate::rfcore::flags::{RecFlags, CALL_OPS, CALL_OPS_EN, ENABLED};
use crate::rfcore::record::{decide, Update};
use crate::rfcore::update::{Facts, Failure, Insn};

const GOLDEN: &str = include_str!("riscv64_golden.txt");

const KTEXT: u64 = 0xffff_ffff_8001_0000;
const CALLER: u64 = 0xffff_ffff_80a1_2340;
const NOP_OPS: u64 = 0xffff_ffff_8200_0100;
const LIST_OPS: u64 = 0xffff_ffff_8200_0200;
const OPS_A: u64 = 0xffff_ffd8_c123_4500;
const OPS_B: u64 = 0xffff_ffd8_c123_4600;

/// The fewest lines of each kind the golden file must have.
const MIN_CALLS: usize = 150;
const MIN_REFUSED: usize = 21;
const MIN_FIXED: usize = 8;
const MIN_SITES: usize = 21;
const MIN_MISALIGNED: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Call,
    Nop,
    CNop,
    Ebreak,
    CEbreak,
}

#[derive(Clone, Copy, Debug)]
struct Line {
    ip: u64,
    target: u64,
    kind: Kind,
    /// The words (one, or two for a call); `None` when ld could not
    /// encode the call.
    words: Option<[u32; 2]>,
}

#[derive(Clone, Debug)]
struct Patch {
    entry: u64,
    func: u64,
    name: String,
    bytes: [u8; 16],
    flags: String,
}

fn parse_word(s: &str, len: usize) -> u32 {
    assert_eq!(s.len(), len, "bad word {s:?}");
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
            assert_eq!(f.len(), 6, "bad layout line {l:?}");
            assert_eq!(f[4].len(), 32, "bad bytes in {l:?}");
            let mut bytes = [0u8; 16];
            for (i, b) in bytes.iter_mut().enumerate() {
                *b = u8::from_str_radix(&f[4][2 * i..2 * i + 2], 16)
                    .unwrap_or_else(|_| panic!("bad bytes in {l:?}"));
            }
            patches.push(Patch {
                entry: parse_hex(f[1]),
                func: parse_hex(f[2]),
                name: f[3].into(),
                bytes,
                flags: f[5].into(),
            });
            continue;
        }
        let kind = match f[2] {
            "call" => Kind::Call,
            "nop" => Kind::Nop,
            "c.nop" => Kind::CNop,
            "ebreak" => Kind::Ebreak,
            "c.ebreak" => Kind::CEbreak,
            k => panic!("bad kind {k:?} in {l:?}"),
        };
        let (target, words) = match kind {
            Kind::Call if f[3] == "out-of-range" => {
                assert_eq!(f.len(), 4, "bad golden line {l:?}");
                (parse_hex(f[1]), None)
            }
            Kind::Call => {
                assert_eq!(f.len(), 5, "bad golden line {l:?}");
                (
                    parse_hex(f[1]),
                    Some([parse_word(f[3], 8), parse_word(f[4], 8)]),
                )
            }
            Kind::CNop | Kind::CEbreak => {
                assert_eq!((f.len(), f[1]), (4, "-"), "bad golden line {l:?}");
                (0, Some([parse_word(f[3], 4), 0]))
            }
            Kind::Nop | Kind::Ebreak => {
                assert_eq!((f.len(), f[1]), (4, "-"), "bad golden line {l:?}");
                (0, Some([parse_word(f[3], 8), 0]))
            }
        };
        lines.push(Line {
            ip: parse_hex(f[0]),
            target,
            kind,
            words,
        });
    }
    (lines, patches)
}

/// The offset from the `auipc`, as a 64-bit signed difference modulo 2^64.
fn offset(ip: u64, target: u64) -> i64 {
    target.wrapping_sub(ip) as i64
}

/// The kernel's `to_auipc_t0()` and `to_jalr_t0()`, on the offset
/// truncated to 32 bits as the C code computes it: a model to compare with.
fn kernel_make_call_t0(pc: u64, target: u64) -> [u32; 2] {
    let offset = target.wrapping_sub(pc) as u32;
    let auipc = if offset & 0x800 != 0 {
        (offset & 0xffff_f000).wrapping_add(0x1000) | 0x297
    } else {
        (offset & 0xffff_f000) | 0x297
    };
    [auipc, ((offset & 0xfff) << 20) | 0x0002_82e7]
}

#[test]
fn golden_encodings() {
    let (lines, _) = parse(GOLDEN);
    let (mut good, mut refused, mut fixed) = (0, 0, 0);
    let (mut carries, mut odd, mut max_edges, mut min_edges) = (0, 0, 0, 0);
    for l in &lines {
        let ctx = format!("{l:x?}");
        match (l.kind, l.words) {
            (Kind::Nop, Some([w, _])) => {
                assert_eq!(w, NOP, "{ctx}");
                assert_eq!(decode_word(w), Word::Nop, "{ctx}");
                fixed += 1;
            }
            (Kind::CNop, Some([w, _])) => {
                assert_eq!(w, u32::from(C_NOP), "{ctx}");
                fixed += 1;
            }
            (Kind::Ebreak, Some([w, _])) => {
                assert_eq!(w, EBREAK, "{ctx}");
                assert_eq!(decode_word(w), Word::Ebreak, "{ctx}");
                fixed += 1;
            }
            (Kind::CEbreak, Some([w, _])) => {
                assert_eq!(w, u32::from(C_EBREAK), "{ctx}");
                // Over the low half of an auipc, the high half stays.
                let auipc = fixed_auipc(KTEXT + 4, CALLER).unwrap();
                let over = (auipc & 0xffff_0000) | w;
                assert_eq!(decode_word(over), Word::Ebreak, "{ctx}");
                assert!(auipc_or_kprobe(over, auipc), "{ctx}");
                fixed += 1;
            }
            (Kind::Call, Some([auipc, jalr])) => {
                good += 1;
                let call = Call { auipc, jalr };
                let d = offset(l.ip, l.target);
                // The linker's split is ours, and the kernel's.
                assert_eq!(encode_offset(d), Some(call), "{ctx}");
                assert_eq!(kernel_make_call_t0(l.ip, l.target), [auipc, jalr], "{ctx}");
                let (hi, lo) = split(d).unwrap();
                assert_eq!(
                    decode_word(auipc),
                    Word::AuipcT0 {
                        hi: i64::from(hi) << 12
                    },
                    "{ctx}"
                );
                assert_eq!(decode_word(jalr), Word::JalrT0 { lo: lo.into() }, "{ctx}");
                if lo < 0 {
                    carries += 1;
                }
                // What a CPU does with the pair.
                assert_eq!(
                    decode(l.ip, &call.bytes()),
                    Decoded::Call(l.target & !1),
                    "{ctx}"
                );
                assert_eq!(
                    decode(l.ip, &call.nop_bytes()),
                    Decoded::Nop {
                        base: l.ip.wrapping_add((i64::from(hi) << 12) as u64)
                    },
                    "{ctx}"
                );
                assert_eq!(verify(&call.bytes(), &call.bytes()), Ok(()), "{ctx}");
                if l.target % 4 != 0 {
                    // ld encodes it; the kernel must not.
                    odd += 1;
                    assert_eq!(
                        encode_call(l.ip, l.target),
                        Err(EncodeError::Misaligned {
                            pc: l.ip,
                            target: l.target
                        }),
                        "{ctx}"
                    );
                    continue;
                }
                assert_eq!(encode_call(l.ip, l.target), Ok(call), "{ctx}");
                // One word past an edge is refused.
                let past = if d == CALL_MAX - 3 {
                    max_edges += 1;
                    Some(l.target.wrapping_add(4))
                } else if d == CALL_MIN {
                    min_edges += 1;
                    Some(l.target.wrapping_sub(4))
                } else {
                    None
                };
                if let Some(p) = past {
                    assert_eq!(
                        encode_call(l.ip, p),
                        Err(EncodeError::OutOfRange {
                            pc: l.ip,
                            target: p
                        }),
                        "{ctx} one past"
                    );
                }
            }
            (Kind::Call, None) => {
                refused += 1;
                let d = offset(l.ip, l.target);
                assert_eq!(split(d), None, "{ctx}");
                assert_eq!(encode_offset(d), None, "{ctx}");
                assert_eq!(
                    encode_call(l.ip, l.target),
                    Err(EncodeError::OutOfRange {
                        pc: l.ip,
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
        good >= MIN_CALLS && refused >= MIN_REFUSED && fixed >= MIN_FIXED,
        "{good} {refused} {fixed}"
    );
    assert!(
        carries >= 50 && odd >= 9 && max_edges >= 9 && min_edges >= 9,
        "{carries} {odd} {max_edges} {min_edges}"
    );
    note(&format!(
        "riscv64: {} golden instruction lines: {good} calls ({carries} with a negative lo12, \
         {odd} odd targets, {max_edges} +2GiB-2KiB-4 and {min_edges} -2GiB-2KiB edges), \
         {refused} refused by ld, {fixed} fixed words",
        lines.len()
    ));
}

/// The layouts LLVM made with `-fpatchable-function-entry=8,4` (RVC) and
/// `4,2`: every aligned entry becomes a site whose slots hold what the
/// kernel expects and initialises to the fixed `auipc` and `nop`; every
/// misaligned one is refused.
#[test]
fn golden_layouts() {
    let (_, patches) = parse(GOLDEN);
    let (mut sites, mut rvc_sites, mut misaligned) = (0, 0, 0);
    for p in &patches {
        let ctx = format!("{} {:#x} {}", p.name, p.entry, p.flags);
        let rvc = p.flags.contains("-march=rv64gc");
        assert!(rvc || p.flags.contains("-march=rv64g"), "{ctx}");
        // 8 bytes of NOPs before the symbol and 8 at it, whatever the
        // alignment.
        assert_eq!(p.func, p.entry + 8, "{ctx}");
        let front: [u8; 8] = p.bytes[..8].try_into().unwrap();
        let at: [u8; 8] = p.bytes[8..].try_into().unwrap();
        assert_eq!((front, at), (blank(rvc), blank(rvc)), "{ctx}");
        let ip = p.entry + 12;
        if p.entry % 8 != 0 {
            misaligned += 1;
            let err = Err(LayoutError::MisalignedLiteral { literal: p.entry });
            assert_eq!(Site::from_patch_entry(p.entry), err, "{ctx}");
            assert_eq!(call_site(p.entry), None, "{ctx}");
            // Why it must be refused: the kernel would write the ops where
            // ftrace_caller does not read them.
            assert_eq!(literal_from_t0(ip + 4), p.entry, "{ctx}");
            assert_ne!(literal_addr(ip), p.entry, "{ctx}");
            assert!(Site::from_ip(ip).is_err(), "{ctx}");
            assert!(plan_init(ip, CALLER, rvc).is_err(), "{ctx}");
            continue;
        }
        let site = Site::from_patch_entry(p.entry).unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
        sites += 1;
        if rvc {
            rvc_sites += 1;
        }
        assert_eq!(call_site(p.entry), Some(ip), "{ctx}");
        assert_eq!(
            (site.literal(), site.func(), site.pc(), site.ip()),
            (p.entry, p.func, p.func, ip),
            "{ctx}"
        );
        assert_eq!(Site::from_ip(ip), Ok(site), "{ctx}");
        // The kernel's formula and ftrace_caller's agree.
        assert_eq!(literal_addr(ip), p.entry, "{ctx}");
        assert_eq!(literal_from_t0(ip + 4), p.entry, "{ctx}");
        assert_eq!(decode(site.pc(), &at), Decoded::Blank, "{ctx}");
        // The first initialisation replaces exactly these bytes.
        let init = plan_init(ip, CALLER, rvc).unwrap();
        let Write::Entry { pc, old, new } = init.plan.writes[1] else {
            panic!("{ctx}: {init:?}");
        };
        assert_eq!((pc, old), (site.pc(), at), "{ctx}");
        assert_eq!(
            new,
            encode_call(site.pc(), CALLER).unwrap().nop_bytes(),
            "{ctx}"
        );
        // A wrong guess about RVC is caught, not silently wrong.
        let wrong = plan_init(ip, CALLER, !rvc).unwrap();
        let [_, _, check] = wrong.checks();
        assert!(
            matches!(
                check.unwrap().verify(Insn::new(&at).unwrap()),
                Err(Failure::Mismatch { .. })
            ),
            "{ctx}"
        );
    }
    assert!(
        sites >= MIN_SITES && rvc_sites >= 12 && sites > rvc_sites && misaligned >= MIN_MISALIGNED,
        "{sites} {rvc_sites} {misaligned}"
    );
    note(&format!(
        "riscv64: {} LLVM patch entries: {sites} sites ({rvc_sites} with RVC), \
         {misaligned} misaligned and refused",
        patches.len()
    ));
}

/// The split and its sign carry, at the boundaries of lo12 and of the
/// reach.
#[test]
fn sign_carry() {
    let cases: [(i64, Option<(i32, i32)>); 16] = [
        (0, Some((0, 0))),
        (4, Some((0, 4))),
        (0x7fc, Some((0, 0x7fc))),
        (0x7ff, Some((0, 0x7ff))),
        (0x800, Some((1, -0x800))),
        (0xffc, Some((1, -4))),
        (0x1000, Some((1, 0))),
        (-4, Some((0, -4))),
        (-0x800, Some((0, -0x800))),
        (-0x804, Some((-1, 0x7fc))),
        (-0x1000, Some((-1, 0))),
        (CALL_MAX, Some((0x7ffff, 0x7ff))),
        (CALL_MIN, Some((-0x80000, -0x800))),
        (CALL_MAX + 1, None),
        (CALL_MIN - 1, None),
        (i64::MIN, None),
    ];
    for (d, want) in cases {
        assert_eq!(split(d), want, "{d:#x}");
    }
    assert_eq!(split(i64::MAX), None);
    // At 0x800 the jalr's immediate turns negative and the auipc carries.
    let ip = KTEXT;
    let below = encode_call(ip, ip + 0x7fc).unwrap();
    let at = encode_call(ip, ip + 0x800).unwrap();
    assert_eq!((below.auipc, below.jalr), (AUIPC_T0, 0x7fc0_0000 | JALR_T0));
    assert_eq!(
        (at.auipc, at.jalr),
        (0x1000 | AUIPC_T0, 0x8000_0000 | JALR_T0)
    );
}

#[test]
fn encode_errors() {
    assert_eq!(
        encode_call(KTEXT, 0),
        Err(EncodeError::NoTarget { pc: KTEXT })
    );
    for (pc, target) in [
        (KTEXT + 2, CALLER),
        (KTEXT, CALLER + 2),
        (KTEXT + 1, CALLER + 3),
        (KTEXT, KTEXT + 1),
    ] {
        assert_eq!(
            encode_call(pc, target),
            Err(EncodeError::Misaligned { pc, target })
        );
    }
    // Misalignment is reported before the range.
    let (pc, target) = (KTEXT, KTEXT.wrapping_add(1 << 40) + 2);
    assert_eq!(
        encode_call(pc, target),
        Err(EncodeError::Misaligned { pc, target })
    );
    // Out of reach: a module more than 2 GiB from the kernel, the linear
    // map, user space.
    for target in [0xffff_fffe_7f00_0000, 0xffff_ffd8_0000_0000, 0x40_0000] {
        assert_eq!(
            encode_call(KTEXT, target),
            Err(EncodeError::OutOfRange { pc: KTEXT, target })
        );
    }
}

#[test]
fn decode_other_and_verify() {
    let pc = KTEXT;
    let call = encode_call(pc, CALLER).unwrap();
    for w in [
        0u32,
        0x0000_0317,
        0x0003_02e7,
        0x0000_00ef,
        0x8082,
        0xffff_ffff,
    ] {
        assert!(
            matches!(decode_word(w), Word::Other),
            "{w:#x}: {:?}",
            decode_word(w)
        );
    }
    assert_eq!(decode_word(0xabcd_9002), Word::Ebreak);
    // An auipc with a non-call second word, a non-auipc first word.
    let pair = |a: u32, b: u32| {
        let mut v = [0u8; 8];
        v[..4].copy_from_slice(&a.to_le_bytes());
        v[4..].copy_from_slice(&b.to_le_bytes());
        v
    };
    assert_eq!(decode(pc, &pair(call.auipc, EBREAK)), Decoded::Other);
    assert_eq!(decode(pc, &pair(EBREAK, call.jalr)), Decoded::Other);
    assert_eq!(decode(pc, &pair(NOP, call.jalr)), Decoded::Other);
    assert_eq!(decode(pc, &BLANK), Decoded::Blank);
    assert_eq!(decode(pc, &BLANK_RVC), Decoded::Blank);
    // A mix of the two NOPs is no compiler's.
    assert_eq!(
        decode(pc, &pair(NOP, u32::from_le_bytes([1, 0, 1, 0]))),
        Decoded::Other
    );
    // Wrong bytes: the error carries what was expected and what was found.
    assert_eq!(verify(&call.bytes(), &call.bytes()), Ok(()));
    assert_eq!(
        verify(&call.nop_bytes(), &call.bytes()),
        Err(Mismatch {
            expected: call.bytes(),
            actual: call.nop_bytes()
        })
    );
    assert_eq!(
        verify(&BLANK_RVC, &call.nop_bytes()),
        Err(Mismatch {
            expected: call.nop_bytes(),
            actual: BLANK_RVC
        })
    );
}

#[test]
fn layout_refusals() {
    // The jalr slot must be 4-byte aligned.
    for ip in [KTEXT + 13, KTEXT + 14, KTEXT + 15] {
        assert_eq!(Site::from_ip(ip), Err(LayoutError::MisalignedInsn { ip }));
    }
    // The slot is at 4 mod 8: the literal 12 bytes before it is aligned.
    assert_eq!(
        Site::from_ip(KTEXT + 16),
        Err(LayoutError::MisalignedLiteral { literal: KTEXT + 4 })
    );
    for e in [KTEXT + 4, KTEXT + 2, KTEXT + 6, KTEXT + 1] {
        assert_eq!(
            Site::from_patch_entry(e),
            Err(LayoutError::MisalignedLiteral { literal: e })
        );
        assert_eq!(call_site(e), None);
    }
    assert_eq!(call_site(0), None);
    assert_eq!(call_site(KTEXT), Some(KTEXT + 12));
    // The ends of the address space.
    assert_eq!(Site::from_ip(8), Err(LayoutError::Wraps { addr: 8 }));
    let s = Site::from_ip(12).unwrap();
    assert_eq!((s.literal(), s.func(), s.ip()), (0, 8, 12));
    let top = u64::MAX - 15; // 8-aligned, the site ends at u64::MAX
    let s = Site::from_patch_entry(top).unwrap();
    assert_eq!(s.ip(), u64::MAX - 3);
    assert_eq!(Site::from_ip(u64::MAX - 3), Ok(s));
    assert_eq!(call_site(top), Some(u64::MAX - 3));
    assert_eq!(
        Site::from_patch_entry(top + 8),
        Err(LayoutError::Wraps { addr: top + 8 })
    );
    assert_eq!(call_site(top + 8), None);
    // A refused layout is never planned.
    assert_eq!(
        plan_init(KTEXT + 16, CALLER, true),
        Err(PlanError::Layout(LayoutError::MisalignedLiteral {
            literal: KTEXT + 4
        }))
    );
}

/// The fixed auipc reaches a 4 KiB window; other targets go to the caller,
/// and 7.2's own rule (within 0x7ff of ftrace_caller) is not the window.
#[test]
fn reach_window() {
    // A site whose auipc lands 0x7f0 bytes below the caller: the window
    // is [caller - 0xff0, caller + 0xf].
    let ip = CALLER - 0x1000 - 0x7f0 + 4;
    let pc = ip - 4;
    let fixed = fixed_auipc(ip, CALLER).unwrap();
    let Word::AuipcT0 { hi } = decode_word(fixed) else {
        panic!("{fixed:#x}");
    };
    let base = pc.wrapping_add(hi as u64);
    assert_eq!(CALLER - base, 0x7f0);
    for (target, want) in [
        (CALLER, Reach::Direct(CALLER)),
        (base - 0x800, Reach::Direct(base - 0x800)),
        (base + 0x7fc, Reach::Direct(base + 0x7fc)),
        // Within 0x7ff of ftrace_caller, yet out of the window: 7.2 would
        // call `target - 0x1000`.
        (CALLER + 0x20, Reach::Caller(CALLER)),
        // In the window, farther than 0x7ff from ftrace_caller.
        (CALLER - 0xff0, Reach::Direct(CALLER - 0xff0)),
        (base - 0x804, Reach::Caller(CALLER)),
        (0xffff_ffd8_c000_0000, Reach::Caller(CALLER)),
        // Misaligned or none: never called.
        (CALLER + 2, Reach::Caller(CALLER)),
        (0, Reach::Caller(CALLER)),
    ] {
        assert_eq!(reach(ip, target, CALLER), Ok(want), "{target:#x}");
        // Whatever it decides, the jalr after the fixed auipc goes there.
        let call = encode_call(pc, want.addr()).unwrap();
        assert_eq!(call.auipc, fixed, "{target:#x}");
        assert_eq!(
            decode(pc, &call.bytes()),
            Decoded::Call(want.addr()),
            "{target:#x}"
        );
    }
    // 7.2's jalr for CALLER + 0x20 after the fixed auipc.
    let [_, jalr72] = kernel_make_call_t0(pc, CALLER + 0x20);
    let bytes = Call {
        auipc: fixed,
        jalr: jalr72,
    }
    .bytes();
    assert_eq!(decode(pc, &bytes), Decoded::Call(CALLER + 0x20 - 0x1000));
    // A site too far from the caller has no auipc at all.
    let far = 0xffff_fffe_7f00_000c;
    assert_eq!(
        reach(far, CALLER, CALLER),
        Err(ReachError::Caller(EncodeError::OutOfRange {
            pc: far - 4,
            target: CALLER
        }))
    );
    assert_eq!(
        reach(ip, CALLER, 0),
        Err(ReachError::Caller(EncodeError::NoTarget { pc }))
    );
    assert_eq!(Reach::Caller(CALLER).addr(), CALLER);
}

/// What a CPU running through the site does in a state of the text.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Runs {
    Nothing,
    /// `ftrace_caller` called the ops in the literal.
    Ops(u64),
    /// A jalr straight to somewhere else.
    Direct(u64),
}

#[derive(Clone, Copy, Debug)]
struct Text {
    literal: u64,
    bytes: [u8; 8],
}

fn run(site: Site, t: Text) -> Runs {
    match decode(site.pc(), &t.bytes) {
        Decoded::Nop { .. } | Decoded::Blank => Runs::Nothing,
        Decoded::Call(CALLER) => Runs::Ops(t.literal),
        Decoded::Call(x) => Runs::Direct(x),
        Decoded::Other => panic!("site holds {:x?}", t.bytes),
    }
}

/// Applies a change as an `Arch::write` would: every check first, then
/// the stores. Returns the states seen after each store.
fn apply(site: Site, mut t: Text, change: &Riscv64Change) -> Vec<Text> {
    for c in change.checks().into_iter().flatten() {
        let off = usize::try_from(c.addr - site.pc()).unwrap();
        let actual = Insn::new(&t.bytes[off..off + c.expected.len()]).unwrap();
        assert_eq!(c.verify(actual), Ok(()), "{c:x?}");
    }
    let mut seen = Vec::new();
    for w in change.plan.writes {
        match w {
            Write::Literal { addr, ops } => {
                assert_eq!(addr, site.literal());
                t.literal = ops.addr(NOP_OPS, LIST_OPS);
            }
            Write::Jalr { ip, new, .. } => {
                assert_eq!(ip, site.ip());
                t.bytes[4..].copy_from_slice(&new.to_le_bytes());
            }
            Write::Entry { pc, new, .. } => {
                assert_eq!(pc, site.pc());
                t.bytes = new;
            }
        }
        seen.push(t);
    }
    seen
}

#[test]
fn write_order() {
    let site = Site::from_patch_entry(KTEXT).unwrap();
    let ip = site.ip();
    let call = |p: Plan| Riscv64Change { ip, plan: p };
    let near = CALLER + 0x10; // in the window of this site
    let a = LiteralOps::Ops(OPS_A);
    let lit = |ops| Write::Literal {
        addr: site.literal(),
        ops,
    };
    let fixed = fixed_auipc(ip, CALLER).unwrap();
    let jalr = |t| encode_call(site.pc(), t).unwrap().jalr;
    assert_eq!(reach(ip, near, CALLER), Ok(Reach::Direct(near)));

    // Init: nop ops, then the compiler's NOPs become auipc + nop.
    let init = plan(site, CALLER, Step::Init { rvc: true }).unwrap();
    assert_eq!(init.auipc, None);
    assert_eq!(init.writes[0], lit(LiteralOps::Nop));
    let states = apply(
        site,
        Text {
            literal: 0,
            bytes: BLANK_RVC,
        },
        &call(init),
    );
    assert_eq!(states[0].literal, NOP_OPS);
    assert_eq!(run(site, states[1]), Runs::Nothing);
    assert!(matches!(
        decode(site.pc(), &states[1].bytes),
        Decoded::Nop { .. }
    ));

    // Enable: literal first, then nop -> jalr.
    let enable = plan(
        site,
        CALLER,
        Step::Enable {
            to: Reach::Caller(CALLER),
            ops: a,
        },
    )
    .unwrap();
    assert_eq!(enable.auipc, Some(fixed));
    assert_eq!(
        enable.writes,
        [
            lit(a),
            Write::Jalr {
                ip,
                old: NOP,
                new: jalr(CALLER)
            }
        ]
    );
    let states = apply(site, states[1], &call(enable));
    assert_eq!(run(site, states[0]), Runs::Nothing);
    assert_eq!(run(site, states[1]), Runs::Ops(OPS_A));

    // Another ops joins: the same jalr, checked and rewritten, list first.
    let list = LiteralOps::List(ListReason::Shared);
    let change = plan(
        site,
        CALLER,
        Step::Modify {
            from: Reach::Caller(CALLER),
            to: Reach::Caller(CALLER),
            ops: list,
        },
    )
    .unwrap();
    let states = apply(site, states[1], &call(change));
    assert_eq!(run(site, states[0]), Runs::Ops(LIST_OPS));
    assert_eq!(run(site, states[1]), Runs::Ops(LIST_OPS));

    // To a target in the window, with its ops.
    let b = LiteralOps::Ops(OPS_B);
    let to_near = plan(
        site,
        CALLER,
        Step::Modify {
            from: Reach::Caller(CALLER),
            to: Reach::Direct(near),
            ops: b,
        },
    )
    .unwrap();
    let states = apply(site, states[1], &call(to_near));
    assert_eq!(run(site, states[0]), Runs::Ops(OPS_B));
    assert_eq!(run(site, states[1]), Runs::Direct(near));

    // Disable: nop ops first, while the jalr is still there.
    let disable = plan(
        site,
        CALLER,
        Step::Disable {
            from: Reach::Direct(near),
        },
    )
    .unwrap();
    let states = apply(site, states[1], &call(disable));
    assert_eq!(run(site, states[0]), Runs::Direct(near));
    assert_eq!(run(site, states[1]), Runs::Nothing);
    assert_eq!(states[1].literal, NOP_OPS);
}

#[test]
fn checks_and_kprobes() {
    let site = Site::from_patch_entry(KTEXT).unwrap();
    let ip = site.ip();
    let facts = Facts {
        ip,
        flags: RecFlags::from_raw(1 | CALL_OPS),
        new: Some(CALLER),
        curr: None,
        unique: Some(OPS_A),
        set: None,
    };
    let d = decide(facts.flags, true);
    assert_eq!(d.update, Update::MakeCall);
    let change = plan_update(&facts, &d, CALLER).unwrap();
    let fixed = fixed_auipc(ip, CALLER).unwrap();
    let [Some(auipc), None, Some(slot)] = change.checks() else {
        panic!("{:?}", change.checks());
    };
    assert_eq!(
        (auipc.addr, auipc.expected, auipc.kprobe),
        (site.pc(), Insn::word(fixed), true)
    );
    assert_eq!(
        (slot.addr, slot.expected, slot.kprobe),
        (ip, Insn::word(NOP), false)
    );
    // The auipc may carry a kprobe's breakpoint, as the C code allows.
    assert_eq!(auipc.verify(Insn::word(fixed)), Ok(()));
    assert_eq!(auipc.verify(Insn::word(EBREAK)), Ok(()));
    let c_over = (fixed & 0xffff_0000) | u32::from(C_EBREAK);
    assert_eq!(auipc.verify(Insn::word(c_over)), Ok(()));
    // ... but not over another auipc, nor anything else.
    for bad in [
        (fixed ^ 0x8000_0000) & 0xffff_0000 | u32::from(C_EBREAK),
        fixed ^ 0x1000,
        NOP,
    ] {
        assert_eq!(
            auipc.verify(Insn::word(bad)),
            Err(Failure::Mismatch {
                expected: Insn::word(fixed),
                actual: Insn::word(bad)
            }),
            "{bad:#x}"
        );
    }
    // The slot takes no breakpoint: wrong bytes fail with both words.
    assert_eq!(
        slot.verify(Insn::word(EBREAK)),
        Err(Failure::Mismatch {
            expected: Insn::word(NOP),
            actual: Insn::word(EBREAK)
        })
    );
    let init = plan_init(ip, CALLER, false).unwrap();
    let [None, None, Some(entry)] = init.checks() else {
        panic!("{:?}", init.checks());
    };
    assert_eq!(entry.verify(Insn::new(&BLANK).unwrap()), Ok(()));
    assert_eq!(
        entry.verify(Insn::new(&BLANK_RVC).unwrap()),
        Err(Failure::Mismatch {
            expected: Insn::new(&BLANK).unwrap(),
            actual: Insn::new(&BLANK_RVC).unwrap()
        })
    );
}

#[test]
fn plan_update_rules() {
    let ip = KTEXT + 12;
    let one = RecFlags::from_raw(ENABLED | 1 | CALL_OPS | CALL_OPS_EN);
    let facts = |flags, new, curr| Facts {
        ip,
        flags,
        new: Some(new),
        curr: Some(curr),
        unique: Some(OPS_A),
        set: None,
    };
    // A far direct trampoline: the jalr goes to the caller, the literal
    // holds the ops (whose direct_call ftrace_caller follows).
    let far = 0xffff_ffd8_c000_0000;
    let f = facts(RecFlags::from_raw(1 | CALL_OPS), far, 0);
    let c = plan_update(&f, &decide(f.flags, true), CALLER).unwrap();
    let caller_jalr = encode_call(ip - 4, CALLER).unwrap().jalr;
    assert_eq!(
        c.plan.writes,
        [
            Write::Literal {
                addr: KTEXT,
                ops: LiteralOps::Ops(OPS_A)
            },
            Write::Jalr {
                ip,
                old: NOP,
                new: caller_jalr
            }
        ]
    );
    // Disabling it: the old jalr is the caller's.
    let f = facts(one, 0, far);
    let d = decide(f.flags, false);
    assert_eq!(d.update, Update::MakeNop);
    let c = plan_update(&f, &d, CALLER).unwrap();
    assert_eq!(
        c.plan.writes[1],
        Write::Jalr {
            ip,
            old: caller_jalr,
            new: NOP
        }
    );
    // Nothing to do.
    let f = facts(one, CALLER, CALLER);
    let d = decide(f.flags, true);
    assert_eq!(d.update, Update::Ignore);
    assert_eq!(plan_update(&f, &d, CALLER), Err(PlanError::Nothing));
    // A target the facts were gathered without is refused, not guessed.
    let g = Facts { curr: None, ..f };
    let d = decide(g.flags, false);
    assert_eq!(plan_update(&g, &d, CALLER), Err(PlanError::Unknown));
    // A misaligned site.
    let f = Facts { ip: ip + 4, ..f };
    let d = decide(RecFlags::from_raw(1), true);
    assert_eq!(
        plan_update(&f, &d, CALLER),
        Err(PlanError::Layout(LayoutError::MisalignedLiteral {
            literal: KTEXT + 4
        }))
    );
    // A site too far from ftrace_caller.
    let far_ip = 0xffff_fffe_7f00_000c;
    let f = Facts { ip: far_ip, ..f };
    assert_eq!(
        plan_update(&f, &d, CALLER),
        Err(PlanError::Reach(ReachError::Caller(
            EncodeError::OutOfRange {
                pc: far_ip - 4,
                target: CALLER
            }
        )))
    );
}

#[test]
fn plan_refusals() {
    let site = Site::from_patch_entry(KTEXT).unwrap();
    for step in [
        Step::Enable {
            to: Reach::Caller(CALLER),
            ops: LiteralOps::Nop,
        },
        Step::Modify {
            from: Reach::Caller(CALLER),
            to: Reach::Caller(CALLER),
            ops: LiteralOps::Nop,
        },
    ] {
        assert_eq!(
            plan(site, CALLER, step),
            Err(PlanError::NopOpsOnCall),
            "{step:?}"
        );
    }
    // A Reach out of this site's window is refused, never encoded.
    let other = CALLER + 0x4000;
    let err = Err(PlanError::Reach(ReachError::Window {
        ip: site.ip(),
        target: other,
    }));
    let ops = LiteralOps::Ops(OPS_A);
    for step in [
        Step::Enable {
            to: Reach::Direct(other),
            ops,
        },
        Step::Modify {
            from: Reach::Direct(other),
            to: Reach::Caller(CALLER),
            ops,
        },
        Step::Modify {
            from: Reach::Caller(CALLER),
            to: Reach::Caller(other),
            ops,
        },
        Step::Disable {
            from: Reach::Direct(other),
        },
    ] {
        assert_eq!(plan(site, CALLER, step), err, "{step:?}");
    }
}

/// Random sites and offsets around lo12's carry and the reach, against an
/// encoding computed here another way; random pairs of words back to
/// their targets; random sites against their layout.
#[test]
fn random_round_trip() {
    let mut rng = Rng::new(seed(0x0052_5636));
    let mut cases = 0;
    for _ in 0..50_000 {
        let pc = match rng.below(3) {
            0 => 0xffff_ffff_8000_0000 | (rng.below(1 << 29) << 2),
            1 => rng.next_u64() & !3,
            _ => (u64::MAX - rng.below(64)) & !3,
        };
        let d: i64 = match rng.below(5) {
            0 => i64::from(rng.next_u64() as i32) & !3,
            1 => CALL_MAX - 11 + 4 * rng.below(4) as i64,
            2 => CALL_MIN - 8 + 4 * rng.below(4) as i64,
            // Around a carry: k * 4 KiB + [0x7f0, 0x810).
            3 => {
                let k = rng.below(1 << 20) as i64 - (1 << 19);
                (k << 12) + 0x7f0 + 4 * rng.below(8) as i64
            }
            _ => (rng.next_u64() as i64) >> rng.below(40) & !3,
        };
        let target = pc.wrapping_add(d as u64);
        if target == 0 {
            continue;
        }
        cases += 1;
        // The reference: lo12 is the sign-extended low 12 bits, hi20
        // what is left, which must fit in 20 signed bits.
        let lo = (d << 52) >> 52;
        let hi = (d - lo) >> 12;
        let got = encode_call(pc, target);
        if (-(1 << 19)..(1 << 19)).contains(&hi) {
            let want = Call {
                auipc: ((hi as u32) << 12) | 0x297,
                jalr: ((lo as u32) << 20) | 0x0002_82e7,
            };
            assert_eq!(got, Ok(want), "pc {pc:#x} target {target:#x}");
            assert_eq!(split(d), Some((hi as i32, lo as i32)));
            assert_eq!(decode(pc, &want.bytes()), Decoded::Call(target));
            assert_eq!(kernel_make_call_t0(pc, target), [want.auipc, want.jalr]);
        } else {
            assert_eq!(got, Err(EncodeError::OutOfRange { pc, target }));
            assert_eq!(split(d), None);
        }
        // Any auipc t0 + jalr t0 decodes to a target that encodes back.
        let w = Call {
            auipc: (rng.next_u64() as u32 & 0xffff_f000) | AUIPC_T0,
            jalr: (rng.next_u64() as u32 & 0xffc0_0000) | JALR_T0,
        };
        let Decoded::Call(t) = decode(pc, &w.bytes()) else {
            panic!("{w:x?} is a call");
        };
        if t != 0 {
            assert_eq!(encode_call(pc, t), Ok(w), "pc {pc:#x} {w:x?}");
        }
        // Misaligned ends.
        let skew = 1 + rng.below(3);
        let (mpc, mt) = if rng.bool() {
            (pc | skew, target)
        } else {
            (pc, target | skew)
        };
        assert_eq!(
            encode_call(mpc, mt),
            Err(EncodeError::Misaligned {
                pc: mpc,
                target: mt
            })
        );

        // A site around an 8-aligned literal.
        let literal = rng.next_u64() & !7 & (u64::MAX >> 1);
        let s = Site::from_patch_entry(literal).unwrap();
        let sip = literal + 12;
        assert_eq!((s.ip(), s.pc(), s.func()), (sip, literal + 8, literal + 8));
        assert_eq!(Site::from_ip(sip), Ok(s));
        assert_eq!(call_site(literal), Some(sip));
        assert_eq!(literal_addr(sip), literal);
        assert_eq!(literal_from_t0(sip + 4), literal);
        let skewed = literal + 2 * (1 + rng.below(3));
        assert!(Site::from_patch_entry(skewed).is_err());
        assert_eq!(call_site(skewed), None);
    }
    note(&format!(
        "riscv64: {cases} random encode/decode/layout round trips"
    ));
}

/// Reruns the generator and compares with the committed file, when the
/// riscv64 binutils are here and the compiler line matches.
#[test]
fn golden_file_is_current() {
    let tools = [
        "riscv64-linux-gnu-as",
        "riscv64-linux-gnu-ld",
        "riscv64-linux-gnu-objdump",
        "riscv64-linux-gnu-nm",
        "bash",
    ];
    let Some(fresh) = golden::regenerate("riscv64", &tools, "riscv64 binutils or bash") else {
        return;
    };
    // Another LLVM (or none) may lay functions out differently: compare
    // only with the same tools.
    let versions = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("# as:") || l.starts_with("# cc:"))
            .map(String::from)
            .collect()
    };
    if versions(&fresh) != versions(GOLDEN) {
        note(&format!(
            "riscv64: not comparing riscv64_golden.txt: made with {:?}, tools here are {:?}",
            versions(GOLDEN),
            versions(&fresh)
        ));
        return;
    }
    golden::assert_current("riscv64", &fresh, GOLDEN, "riscv64 binutils and LLVM");
}

/// A riscv64 plan error is one [`Failure`] of the update pass, with the
/// errno class of every other encoding failure; a plan of nothing is the
/// pass's own [`EncodeFault::Nothing`].
#[test]
fn plan_errors_are_failures() {
    use crate::rfcore::update::{
        EncodeFault,
        Errno, //
    };
    let misaligned = plan_init(0x1000_0008, 0x1000_0000, true).unwrap_err();
    let failure = Failure::from(misaligned);
    assert_eq!(failure, Failure::Encode(EncodeFault::Riscv64(misaligned)));
    assert_eq!(failure.errno(), Errno::Invalid);
    assert_eq!(
        Failure::from(PlanError::Nothing),
        Failure::Encode(EncodeFault::Nothing)
    );
}
