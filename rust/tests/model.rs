// SPDX-License-Identifier: GPL-2.0

//! Reference model of the C `ftrace_check_record()`, for the tests.
//!
//! Written from the documented rules, bit by bit, on plain `u64` words and
//! its own bit numbers. It deliberately shares nothing with `rfcore` (no
//! `RecFlags`, no `CallKind`, no `SiteState`), so that a mistake in one is
//! not silently repeated in the other.

/// Bit numbers of the flags word.
pub mod bit {
    pub const MODIFIED: u32 = 19;
    pub const TOUCHED: u32 = 20;
    pub const CALL_OPS_EN: u32 = 21;
    pub const CALL_OPS: u32 = 22;
    pub const DIRECT_EN: u32 = 23;
    pub const DIRECT: u32 = 24;
    pub const DISABLED: u32 = 25;
    pub const IPMODIFY: u32 = 26;
    pub const TRAMP_EN: u32 = 27;
    pub const TRAMP: u32 = 28;
    pub const REGS_EN: u32 = 29;
    pub const REGS: u32 = 30;
    pub const ENABLED: u32 = 31;
}

/// The ref count is bits 0..=18.
pub const COUNT_BITS: u32 = 19;
pub const COUNT_MASK: u64 = (1u64 << COUNT_BITS) - 1;
/// Number of flag bits above the count (19..=31).
pub const FLAG_BITS: u32 = 13;

/// `FTRACE_UPDATE_*` values.
pub const IGNORE: u8 = 0;
pub const MAKE_CALL: u8 = 1;
pub const MODIFY_CALL: u8 = 2;
pub const MAKE_NOP: u8 = 3;

pub const fn m(b: u32) -> u64 {
    1u64 << b
}

pub const fn has(w: u64, b: u32) -> bool {
    w >> b & 1 == 1
}

/// Bits kept when the last user leaves.
pub const NOCLEAR_MASK: u64 = m(bit::DISABLED) | m(bit::TOUCHED) | m(bit::MODIFIED);

/// A request bit, the `_EN` bit that says the text honours it, and whether
/// the request only counts with a single user.
struct Pair {
    req: u32,
    en: u32,
    single_only: bool,
}

#[rustfmt::skip]
const PAIRS: [Pair; 4] = [
    Pair { req: bit::REGS, en: bit::REGS_EN, single_only: false },
    Pair { req: bit::TRAMP, en: bit::TRAMP_EN, single_only: false },
    Pair { req: bit::DIRECT, en: bit::DIRECT_EN, single_only: true },
    Pair { req: bit::CALL_OPS, en: bit::CALL_OPS_EN, single_only: true },
];

/// Every `_EN` bit, and ENABLED: what a NOP with users left clears.
pub const NOP_CLEARS: u64 =
    m(bit::ENABLED) | m(bit::TRAMP_EN) | m(bit::REGS_EN) | m(bit::DIRECT_EN) | m(bit::CALL_OPS_EN);

/// The model: `(FTRACE_UPDATE_* value, flags word after the update)`.
pub fn check_record(w: u64, enable: bool) -> (u8, u64) {
    let count = w & COUNT_MASK;
    let enabled = has(w, bit::ENABLED);

    // Skipped: disabled and not a call.
    if has(w, bit::DISABLED) && !enabled {
        return (IGNORE, w);
    }

    if enable && count > 0 {
        let mut out = w;
        let mut any_mismatch = false;
        for p in &PAIRS {
            let req = has(w, p.req);
            let en = has(w, p.en);
            let mismatch = if p.single_only && count != 1 {
                en
            } else {
                req != en
            };
            if mismatch {
                any_mismatch = true;
                let want = if p.single_only {
                    count == 1 && req
                } else {
                    req
                };
                out = if want { out | m(p.en) } else { out & !m(p.en) };
            }
        }
        if enabled && !any_mismatch {
            return (IGNORE, w);
        }
        out |= m(bit::ENABLED) | m(bit::TOUCHED);
        if has(w, bit::DIRECT) || has(w, bit::IPMODIFY) {
            out |= m(bit::MODIFIED);
        }
        return (if enabled { MODIFY_CALL } else { MAKE_CALL }, out);
    }

    if !enabled {
        return (IGNORE, w);
    }
    let out = if count == 0 {
        w & NOCLEAR_MASK
    } else {
        w & !NOP_CLEARS
    };
    (MAKE_NOP, out)
}

/// The states the kernel can be in between updates, as the tests define
/// them: `_EN` bits only on a call, and the single-user ones only with a
/// single user.
pub fn reachable(w: u64) -> bool {
    let count = w & COUNT_MASK;
    let any_en = PAIRS.iter().any(|p| has(w, p.en));
    let single_en = PAIRS.iter().any(|p| p.single_only && has(w, p.en));
    (has(w, bit::ENABLED) || !any_en) && (count == 1 || !single_en)
}
