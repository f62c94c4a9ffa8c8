// SPDX-License-Identifier: GPL-2.0

//! `rfcore::arch::x86` against encodings made by GNU as/ld and objdump
//! (`x86_golden.txt`, written by `scripts/gen-x86-golden.sh`).

use std::format;
use std::vec::Vec;

use super::golden::{self, parse_hex};
use super::util::{note, Rng};
use crate::rfcore::arch::x86::{decode, encode_call, verify, Decoded, EncodeError, Mismatch, NOP5};

const GOLDEN: &str = include_str!("x86_golden.txt");

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Call,
    Jmp,
    Nop,
}

#[derive(Clone, Copy, Debug)]
struct Line {
    ip: u64,
    target: u64,
    kind: Kind,
    /// `None` when ld refused the displacement.
    bytes: Option<[u8; 5]>,
}

fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "bad golden line {l:?}");
            let kind = match f[2] {
                "call" => Kind::Call,
                "jmp" => Kind::Jmp,
                "nop" => Kind::Nop,
                k => panic!("bad kind {k:?} in {l:?}"),
            };
            let target = if kind == Kind::Nop {
                0
            } else {
                parse_hex(f[1])
            };
            let bytes = if f[3] == "out-of-range" {
                None
            } else {
                assert_eq!(f[3].len(), 10, "bad bytes in {l:?}");
                let mut b = [0u8; 5];
                for (i, x) in b.iter_mut().enumerate() {
                    *x = u8::from_str_radix(&f[3][2 * i..2 * i + 2], 16).unwrap();
                }
                Some(b)
            };
            Line {
                ip: parse_hex(f[0]),
                target,
                kind,
                bytes,
            }
        })
        .collect()
}

/// The displacement from the end of the instruction, as a 64-bit signed
/// difference modulo 2^64.
fn disp(ip: u64, target: u64) -> i64 {
    target.wrapping_sub(ip.wrapping_add(5)) as i64
}

/// What the encoder is asked for a golden line: the jump bit marks a jmp.
fn request(l: &Line) -> (u64, bool) {
    match l.kind {
        Kind::Jmp => (l.target | 1, true),
        _ => (l.target, false),
    }
}

#[test]
fn golden_encodings() {
    let lines = parse(GOLDEN);
    let (mut good, mut refused, mut nops, mut jmps) = (0, 0, 0, 0);
    let (mut max_edges, mut min_edges) = (0, 0);
    let mut past_edges = 0;
    for l in &lines {
        let ctx = format!("{l:x?}");
        if l.kind == Kind::Nop {
            let b = l.bytes.expect("nop has bytes");
            assert_eq!(b, NOP5, "{ctx}");
            assert_eq!(decode(l.ip, &b), Decoded::Nop, "{ctx}");
            nops += 1;
            continue;
        }
        let (target, jmp_bit) = request(l);
        match l.bytes {
            Some(b) => {
                good += 1;
                assert_eq!(encode_call(l.ip, target, jmp_bit), Ok(b), "{ctx}");
                let want = match l.kind {
                    Kind::Jmp => {
                        jmps += 1;
                        assert_eq!(l.target & 1, 0, "{ctx}");
                        Decoded::Jmp(l.target)
                    }
                    _ => {
                        // A call is also a call when the kernel has the jump
                        // bit, as long as bit 0 of the target is clear.
                        if l.target & 1 == 0 {
                            assert_eq!(encode_call(l.ip, l.target, true), Ok(b), "{ctx}");
                        }
                        Decoded::Call(l.target)
                    }
                };
                assert_eq!(decode(l.ip, &b), want, "{ctx}");

                // One past an edge is refused.
                let d = disp(l.ip, l.target);
                let step = if l.kind == Kind::Jmp { 2 } else { 1 };
                let past = if d == i64::from(i32::MAX) {
                    max_edges += 1;
                    Some(target.wrapping_add(step))
                } else if d == i64::from(i32::MIN) {
                    min_edges += 1;
                    Some(target.wrapping_sub(step))
                } else {
                    None
                };
                if let Some(p) = past {
                    past_edges += 1;
                    assert_eq!(
                        encode_call(l.ip, p, jmp_bit),
                        Err(EncodeError::OutOfRange {
                            ip: l.ip,
                            target: p
                        }),
                        "{ctx} one past"
                    );
                }
            }
            None => {
                refused += 1;
                assert_eq!(
                    encode_call(l.ip, target, jmp_bit),
                    Err(EncodeError::OutOfRange { ip: l.ip, target }),
                    "{ctx}"
                );
            }
        }
    }
    // The file really covers what it is meant to.
    assert!(
        good >= 30 && refused >= 20 && nops >= 1 && jmps >= 10,
        "{good} {refused} {nops} {jmps}"
    );
    assert!(max_edges >= 8 && min_edges >= 8, "{max_edges} {min_edges}");
    note(&format!(
        "x86: {} golden lines: {good} encodings ({jmps} jmp), {refused} refused by ld, \
         {nops} nop; {past_edges} one-past-edge checks",
        lines.len()
    ));
}

#[test]
fn no_target() {
    for ip in [0xffff_ffff_8100_0000, 0xffff_ffff_a012_3456, 0] {
        for jmp_bit in [false, true] {
            assert_eq!(
                encode_call(ip, 0, jmp_bit),
                Err(EncodeError::NoTarget { ip })
            );
        }
        // With the jump bit, target 1 is "jump to 0".
        assert_eq!(encode_call(ip, 1, true), Err(EncodeError::NoTarget { ip }));
    }
}

#[test]
fn jmp_bit_off_keeps_bit_0_in_the_address() {
    let ip = 0xffff_ffff_8100_0000u64;
    let target = 0xffff_ffff_a000_1001u64;
    let b = encode_call(ip, target, false).unwrap();
    // A call, to the odd address itself: rel32 = target - (ip + 5).
    assert_eq!(b, [0xe8, 0xfc, 0x0f, 0x00, 0x1f]);
    assert_eq!(decode(ip, &b), Decoded::Call(target));
    // The same target with the jump bit is a jmp to the even address.
    let j = encode_call(ip, target, true).unwrap();
    assert_eq!(j, [0xe9, 0xfb, 0x0f, 0x00, 0x1f]);
    assert_eq!(decode(ip, &j), Decoded::Jmp(target & !1));
    // Target 1 without the jump bit is a call to address 1, not "no target".
    assert_eq!(encode_call(0, 1, false), Ok([0xe8, 0xfc, 0xff, 0xff, 0xff]));
}

#[test]
fn decode_other_and_verify() {
    let ip = 0xffff_ffff_8100_0000u64;
    for b in [
        [0xcc, 0xfb, 0xff, 0xdf, 0x00], // INT3 over a call (text poke in progress)
        [0x0f, 0x1f, 0x04, 0x00, 0x00], // 4-byte NOP + junk
        [0x0f, 0x1f, 0x44, 0x00, 0x01],
        [0x66, 0x90, 0x0f, 0x1f, 0x00],
        [0xeb, 0x03, 0x00, 0x00, 0x00], // short jmp
    ] {
        assert_eq!(decode(ip, &b), Decoded::Other, "{b:x?}");
    }
    let call = encode_call(ip, 0xffff_ffff_81e0_0000, false).unwrap();
    assert_eq!(verify(&call, &call), Ok(()));
    assert_eq!(
        verify(&NOP5, &call),
        Err(Mismatch {
            expected: call,
            actual: NOP5
        })
    );
}

/// Random sites and displacements around the range edges, against an
/// encoding computed here.
#[test]
fn random_round_trip() {
    let mut rng = Rng::new(super::util::seed(0x0086_0086));
    let mut cases = 0;
    for _ in 0..50_000 {
        let ip = match rng.below(3) {
            0 => 0xffff_ffff_8000_0000 | rng.below(1 << 31),
            1 => rng.next_u64(),
            _ => u64::MAX - rng.below(64),
        };
        let d: i64 = match rng.below(3) {
            0 => i64::from(rng.next_u64() as i32),
            1 => i64::from(i32::MAX) - 2 + rng.below(5) as i64,
            _ => i64::from(i32::MIN) - 2 + rng.below(5) as i64,
        };
        let target = ip.wrapping_add(5).wrapping_add(d as u64);
        if target == 0 || target & 1 == 1 {
            continue;
        }
        cases += 1;
        for (t, jmp_bit, op) in [(target, false, 0xe8), (target | 1, true, 0xe9)] {
            let got = encode_call(ip, t, jmp_bit);
            match i32::try_from(d) {
                Ok(r) => {
                    let r = r.to_le_bytes();
                    let b = [op, r[0], r[1], r[2], r[3]];
                    assert_eq!(got, Ok(b), "ip {ip:#x} target {t:#x}");
                    let want = if jmp_bit {
                        Decoded::Jmp(target)
                    } else {
                        Decoded::Call(target)
                    };
                    assert_eq!(decode(ip, &b), want);
                }
                Err(_) => assert_eq!(got, Err(EncodeError::OutOfRange { ip, target: t })),
            }
        }
    }
    note(&format!("x86: {cases} random encode/decode round trips"));
}

/// Reruns the generator and compares with the committed file, when GNU
/// binutils are here.
#[test]
fn golden_file_is_current() {
    let tools = ["as", "ld", "objdump", "bash"];
    if let Some(fresh) = golden::regenerate("x86", &tools, "GNU as/ld/objdump or bash") {
        golden::assert_current("x86", &fresh, GOLDEN, "GNU binutils");
    }
}
