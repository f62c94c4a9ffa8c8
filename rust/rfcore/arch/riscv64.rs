// SPDX-License-Identifier: GPL-2.0

//! riscv64 call sites with `DYNAMIC_FTRACE_WITH_CALL_OPS`: encoders, the
//! decoder and verifier, the patch-site layout, the reach of the fixed
//! `auipc` and the order of the writes.
//!
//! # The patch site
//!
//! The kernel is built with `-fpatchable-function-entry=8,4` when it has
//! the C extension (`c.nop` is 2 bytes) and `=4,2` without it: either way
//! 8 bytes of NOPs in front of the function symbol and 8 at the entry, and
//! the address of the first NOP in `__patchable_function_entries`. With
//! `CALL_OPS` functions are 8-byte aligned (`FUNCTION_ALIGNMENT_8B`), so
//! the front 8 bytes form an aligned slot, the *literal*, that holds the
//! address of an `ftrace_ops`. The 8 bytes at the entry become a call:
//!
//! ```text
//!   literal+0    c.nop x4 (or nop x2)   literal
//!   literal+8    c.nop x2 (or nop)      <- func, pc   becomes auipc t0, hi20
//!   literal+12   c.nop x2 (or nop)      <- ip         becomes nop / jalr t0, lo12(t0)
//! ```
//!
//! The first initialisation writes `auipc t0` (pointing at
//! `ftrace_caller`) and a 4-byte `nop` over the 8 bytes at `pc` once; the
//! `auipc` is never written again. The record's `ip` is the 4-byte slot
//! after it, which toggles between `nop` and `jalr t0` ([`Site`]). The call
//! leaves `ip + 4` in `t0`; `ftrace_caller` loads the ops from `t0 - 16`
//! ([`literal_from_t0`]), the kernel writes it at `ALIGN_DOWN(ip - 12, 8)`
//! ([`literal_addr`]). The two agree only when the function is 8-byte
//! aligned: a site whose literal is not is refused, never patched
//! ([`LayoutError::MisalignedLiteral`]; the C code does not check).
//!
//! # The reach
//!
//! `auipc` adds a signed 20-bit immediate shifted by 12 to `pc`, `jalr` a
//! signed 12-bit one to that: the pair reaches offsets
//! `[-2^31 - 2^11, 2^31 - 2^11)` from `pc`, and the low 12 bits borrow
//! from the high 20 when they are negative ([`split`]). As the `auipc` is
//! fixed for `ftrace_caller`, a site can only call the 4 KiB window
//! that `auipc` leads to; any other target is replaced by
//! `ftrace_caller`, which reaches a direct trampoline through the
//! literal's `ops->direct_call` ([`reach`]).
//!
//! # The writes
//!
//! Each change is an aligned 64-bit data store to the literal and an
//! aligned 32-bit store to the `ip` slot (or, once, an aligned 64-bit
//! store of the `auipc` and the `nop`), in the order the C code uses: the
//! literal first ([`plan`], [`Plan`]).

use crate::rfcore::{
    flags::ENABLED,
    record::{
        Decision,
        Update, //
    },
    update::{
        Facts,
        Failure,
        Insn, //
    }, //
};

pub use crate::rfcore::fault::riscv64::{
    EncodeError,
    LayoutError,
    PlanError,
    ReachError, //
};

pub use super::call_ops::{
    literal_ops,
    ListReason,
    LiteralOps, //
};

/// Size of the `auipc`, the `jalr` and the 4-byte `nop`.
pub const INSN_SIZE: u64 = 4;

/// Size of the per-site ops literal.
pub const LITERAL_SIZE: u64 = 8;

/// Distance from the literal (the call-site list entry) to the function
/// symbol, where the `auipc` goes.
pub const FUNC_OFFSET: u64 = 8;

/// Distance from the literal to the record's ip, the slot that toggles
/// between `nop` and `jalr`.
pub const IP_OFFSET: u64 = 12;

/// Bytes of a call: the `auipc` and the slot after it.
pub const CALL_SIZE: usize = 8;

/// The 4-byte `nop` (`addi x0, x0, 0`).
pub const NOP: u32 = 0x0000_0013;

/// The 2-byte `c.nop` of the C extension.
pub const C_NOP: u16 = 0x0001;

/// `auipc t0, 0`: the opcode and destination bits of every `auipc t0`.
pub const AUIPC_T0: u32 = 0x0000_0297;

/// `jalr t0, 0(t0)`: the opcode, destination, function and source bits of
/// every `jalr t0, imm(t0)`.
pub const JALR_T0: u32 = 0x0002_82e7;

/// `ebreak` (the breakpoint a kprobe writes).
pub const EBREAK: u32 = 0x0010_0073;

/// `c.ebreak` (the 2-byte breakpoint a kprobe writes with the C
/// extension).
pub const C_EBREAK: u16 = 0x9002;

/// The most a `jalr` adds to the `auipc`'s result.
pub const LO12_MAX: i64 = 0x7ff;

/// The least a `jalr` adds to the `auipc`'s result.
pub const LO12_MIN: i64 = -0x800;

/// The largest offset from `pc` the pair reaches: `2^31 - 2^11 - 1`.
pub const CALL_MAX: i64 = 0x7fff_f7ff;

/// The smallest offset from `pc` the pair reaches: `-2^31 - 2^11`.
pub const CALL_MIN: i64 = -0x8000_0800;

/// The compiler's 8 bytes at the entry with the C extension (`c.nop` x4).
pub const BLANK_RVC: [u8; CALL_SIZE] = [0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00];

/// The compiler's 8 bytes at the entry without the C extension (`nop` x2).
pub const BLANK: [u8; CALL_SIZE] = [0x13, 0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00];

/// Mask of the bits [`AUIPC_T0`] fixes.
const AUIPC_MASK: u32 = 0x0000_0fff;

/// Mask of the bits [`JALR_T0`] fixes.
const JALR_MASK: u32 = 0x000f_ffff;

/// True if `addr` is a multiple of `size`, a power of two.
const fn aligned(addr: u64, size: u64) -> bool {
    addr & size.wrapping_sub(1) == 0
}

/// The compiler's 8 bytes at the entry, with or without the C extension.
pub const fn blank(rvc: bool) -> [u8; CALL_SIZE] {
    if rvc {
        BLANK_RVC
    } else {
        BLANK
    }
}

/// Splits `offset` into the `auipc` and `jalr` immediates: `(hi20, lo12)`
/// with `offset == (hi20 << 12) + lo12`, `lo12` in
/// `[LO12_MIN, LO12_MAX]` (so a `lo12` from `0x800` up is negative and
/// `hi20` carries one more) and `hi20` a signed 20-bit value. `None` if
/// `offset` is outside `[CALL_MIN, CALL_MAX]`.
pub const fn split(offset: i64) -> Option<(i32, i32)> {
    if offset < CALL_MIN || offset > CALL_MAX {
        return None;
    }
    // In range, neither the sum nor the differences overflow, and hi20 is
    // in [-2^19, 2^19).
    let hi = offset.wrapping_add(0x800) >> 12;
    let lo = offset.wrapping_sub(hi.wrapping_shl(12));
    Some((hi as i32, lo as i32))
}

/// `auipc t0, hi20`.
const fn auipc_word(hi20: i32) -> u32 {
    ((hi20 as u32) << 12) | AUIPC_T0
}

/// `jalr t0, lo12(t0)`.
const fn jalr_word(lo12: i32) -> u32 {
    ((lo12 as u32) << 20) | JALR_T0
}

/// The pair of words of a call: `auipc t0, hi20` then `jalr t0, lo12(t0)`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Call {
    /// `auipc t0, hi20`, at `pc`.
    pub auipc: u32,
    /// `jalr t0, lo12(t0)`, at `pc + 4` (the record's ip).
    pub jalr: u32,
}

impl Call {
    /// The 8 bytes of the call, in memory order.
    pub const fn bytes(self) -> [u8; CALL_SIZE] {
        pair(self.auipc, self.jalr)
    }

    /// The 8 bytes of the same site not calling: the `auipc`, then `nop`.
    pub const fn nop_bytes(self) -> [u8; CALL_SIZE] {
        pair(self.auipc, NOP)
    }
}

/// Two words, in memory order (little-endian).
const fn pair(a: u32, b: u32) -> [u8; CALL_SIZE] {
    let [a0, a1, a2, a3] = a.to_le_bytes();
    let [b0, b1, b2, b3] = b.to_le_bytes();
    [a0, a1, a2, a3, b0, b1, b2, b3]
}

/// The call a pair of words at `pc` makes to `pc + offset`, as the linker
/// encodes an `R_RISCV_CALL`; `None` if the pair cannot reach it. No
/// alignment is checked: `jalr` clears bit 0 of what it computes.
pub const fn encode_offset(offset: i64) -> Option<Call> {
    match split(offset) {
        Some((hi, lo)) => Some(Call {
            auipc: auipc_word(hi),
            jalr: jalr_word(lo),
        }),
        None => None,
    }
}

/// Encodes `auipc t0; jalr t0` at `pc` to `target` (the kernel's
/// `make_call_t0()`), refusing a zero or misaligned target or site and a
/// target out of reach.
pub fn encode_call(pc: u64, target: u64) -> Result<Call, EncodeError> {
    if target == 0 {
        return Err(EncodeError::NoTarget { pc });
    }
    if !aligned(pc, INSN_SIZE) || !aligned(target, INSN_SIZE) {
        return Err(EncodeError::Misaligned { pc, target });
    }
    // The CPU adds the offsets to pc modulo 2^64.
    encode_offset(target.wrapping_sub(pc) as i64).ok_or(EncodeError::OutOfRange { pc, target })
}

/// What one 4-byte word at a patch site is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Word {
    /// The 4-byte `nop`.
    Nop,
    /// `auipc t0` adding `hi` (the immediate shifted by 12, sign-extended)
    /// to its own address.
    AuipcT0 {
        /// What the instruction adds to `pc`.
        hi: i64,
    },
    /// `jalr t0, lo(t0)`.
    JalrT0 {
        /// The signed 12-bit immediate.
        lo: i64,
    },
    /// `ebreak`, or `c.ebreak` in the low half (a kprobe).
    Ebreak,
    /// Anything else.
    Other,
}

/// Decodes one word read at a site.
pub const fn decode_word(word: u32) -> Word {
    if word == NOP {
        Word::Nop
    } else if word & AUIPC_MASK == AUIPC_T0 {
        Word::AuipcT0 {
            hi: (word & !AUIPC_MASK) as i32 as i64,
        }
    } else if word & JALR_MASK == JALR_T0 {
        Word::JalrT0 {
            lo: ((word as i32) >> 20) as i64,
        }
    } else if word == EBREAK || word as u16 == C_EBREAK {
        Word::Ebreak
    } else {
        Word::Other
    }
}

/// What the 8 bytes at a site's `pc` are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decoded {
    /// The compiler's NOPs ([`BLANK_RVC`] or [`BLANK`]): never initialised.
    Blank,
    /// `auipc t0` then `nop`: initialised, not calling.
    Nop {
        /// What the `auipc` leaves in `t0`: a `jalr` in the slot can reach
        /// `[base - 0x800, base + 0x7ff]`.
        base: u64,
    },
    /// `auipc t0` then `jalr t0`: calls the address (with bit 0 cleared,
    /// as `jalr` does).
    Call(u64),
    /// Anything else (for example a kprobe's `ebreak` on the `auipc`).
    Other,
}

/// Decodes the 8 bytes read at `pc` (the `auipc` slot and the record's ip).
pub const fn decode(pc: u64, bytes: &[u8; CALL_SIZE]) -> Decoded {
    let [a0, a1, a2, a3, b0, b1, b2, b3] = *bytes;
    let first = u32::from_le_bytes([a0, a1, a2, a3]);
    let second = u32::from_le_bytes([b0, b1, b2, b3]);
    let blank = u32::from_le_bytes([0x01, 0x00, 0x01, 0x00]);
    if (first == NOP && second == NOP) || (first == blank && second == blank) {
        return Decoded::Blank;
    }
    let Word::AuipcT0 { hi } = decode_word(first) else {
        return Decoded::Other;
    };
    let base = pc.wrapping_add(hi as u64);
    match decode_word(second) {
        Word::Nop => Decoded::Nop { base },
        // `jalr` clears bit 0 of the address it computes.
        Word::JalrT0 { lo } => Decoded::Call(base.wrapping_add(lo as u64) & !1),
        _ => Decoded::Other,
    }
}

/// The bytes at a site are not what the record says they should be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Mismatch {
    /// The bytes the record's state implies.
    pub expected: [u8; CALL_SIZE],
    /// The bytes found.
    pub actual: [u8; CALL_SIZE],
}

/// Checks the 8 bytes read at a site against the expected ones (see
/// [`Call::bytes`], [`Call::nop_bytes`], [`blank`]).
pub fn verify(actual: &[u8; CALL_SIZE], expected: &[u8; CALL_SIZE]) -> Result<(), Mismatch> {
    if actual == expected {
        Ok(())
    } else {
        Err(Mismatch {
            expected: *expected,
            actual: *actual,
        })
    }
}

/// Whether `actual`, read where the `auipc` `expected` should be, is it or
/// a kprobe's breakpoint over it: `ebreak`, or `c.ebreak` over the low
/// half with the high half of `expected` left. (The C code accepts a
/// `c.ebreak` with any high half.)
pub const fn auipc_or_kprobe(actual: u32, expected: u32) -> bool {
    actual == expected
        || actual == EBREAK
        || (actual as u16 == C_EBREAK && actual >> 16 == expected >> 16)
}

/// The literal of the site whose `jalr` slot is at `ip`:
/// `ALIGN_DOWN(ip - 12, 8)`, where the kernel writes it (modulo 2^64).
/// Only meaningful for a site accepted by [`Site::from_ip`] or
/// [`Site::from_patch_entry`].
pub const fn literal_addr(ip: u64) -> u64 {
    ip.wrapping_sub(IP_OFFSET) & !(LITERAL_SIZE - 1)
}

/// The literal `ftrace_caller` loads when the `jalr` left `t0` (the
/// address after it): `t0 - 16`, with no rounding.
pub const fn literal_from_t0(t0: u64) -> u64 {
    t0.wrapping_sub(2 * LITERAL_SIZE)
}

/// A patch site whose layout has been checked.
///
/// # Invariants
///
/// - `literal` is a multiple of [`LITERAL_SIZE`];
/// - `literal + IP_OFFSET + INSN_SIZE - 1` (the last byte of the `jalr`
///   slot) does not overflow, so every address the accessors return is
///   inside `[literal, literal + 16)` without wrapping.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Site {
    literal: u64,
}

impl Site {
    /// Builds a site from its literal address, checking the invariants.
    fn new(literal: u64) -> Result<Site, LayoutError> {
        if !aligned(literal, LITERAL_SIZE) {
            return Err(LayoutError::MisalignedLiteral { literal });
        }
        match literal.checked_add(IP_OFFSET + INSN_SIZE - 1) {
            Some(_) => Ok(Site { literal }),
            None => Err(LayoutError::Wraps { addr: literal }),
        }
    }

    /// The site recorded by the compiler at `entry` (an address from
    /// `__patchable_function_entries`, the first byte of the literal).
    pub fn from_patch_entry(entry: u64) -> Result<Site, LayoutError> {
        Site::new(entry)
    }

    /// The site of a record whose `jalr` slot is at `ip`. Refuses an `ip`
    /// that is not 4-byte aligned, and one whose literal (`ip - 12`) is
    /// not 8-byte aligned.
    pub fn from_ip(ip: u64) -> Result<Site, LayoutError> {
        if !aligned(ip, INSN_SIZE) {
            return Err(LayoutError::MisalignedInsn { ip });
        }
        match ip.checked_sub(IP_OFFSET) {
            Some(literal) => Site::new(literal),
            None => Err(LayoutError::Wraps { addr: ip }),
        }
    }

    /// The address of the 8-byte ops literal.
    pub const fn literal(self) -> u64 {
        self.literal
    }

    /// The function symbol, where the `auipc` is (the kernel's
    /// `ftrace_get_symaddr()`).
    pub const fn func(self) -> u64 {
        // Cannot wrap: see the type invariants.
        self.literal.wrapping_add(FUNC_OFFSET)
    }

    /// The `auipc` slot, the start of the 8-byte call: [`Site::func`].
    pub const fn pc(self) -> u64 {
        self.func()
    }

    /// The slot that toggles between `nop` and `jalr`: the record's ip.
    pub const fn ip(self) -> u64 {
        // Cannot wrap: see the type invariants.
        self.literal.wrapping_add(IP_OFFSET)
    }
}

/// The patch-site address (the `jalr` slot) of a call-site list entry
/// (`ftrace_call_adjust()` with `CALL_OPS`), 12 bytes on; `None` for a
/// zero entry and one whose literal is not 8-byte aligned (the C code
/// makes a record of it all the same).
pub const fn call_site(entry: u64) -> Option<u64> {
    if entry == 0 || !entry.is_multiple_of(LITERAL_SIZE) {
        return None;
    }
    match entry.checked_add(IP_OFFSET + INSN_SIZE - 1) {
        Some(_) => entry.checked_add(IP_OFFSET),
        None => None,
    }
}

/// How a site reaches the place it must call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reach {
    /// `jalr` straight to the target, which the fixed `auipc` reaches.
    Direct(u64),
    /// The target is out of the `auipc`'s window; `jalr` to
    /// `ftrace_caller` instead, which reaches a direct trampoline through
    /// the literal's `ops->direct_call`.
    Caller(u64),
}

impl Reach {
    /// Where the `jalr` goes.
    pub const fn addr(self) -> u64 {
        match self {
            Reach::Direct(a) | Reach::Caller(a) => a,
        }
    }
}

/// The `auipc` the site whose `jalr` slot is at `ip` holds once
/// initialised: `auipc t0` towards `caller` (`FTRACE_ADDR`).
pub fn fixed_auipc(ip: u64, caller: u64) -> Result<u32, EncodeError> {
    Ok(encode_call(ip.wrapping_sub(INSN_SIZE), caller)?.auipc)
}

/// The `jalr` at `ip` to `target`, if the site's fixed `auipc` (made for
/// `caller`) reaches it.
fn jalr_to(ip: u64, target: u64, caller: u64) -> Result<u32, ReachError> {
    let fixed = fixed_auipc(ip, caller).map_err(ReachError::Caller)?;
    match encode_call(ip.wrapping_sub(INSN_SIZE), target) {
        Ok(call) if call.auipc == fixed => Ok(call.jalr),
        _ => Err(ReachError::Window { ip, target }),
    }
}

/// Decides how the site whose `jalr` slot is at `ip` calls `target`, with
/// its `auipc` fixed for `caller` (`FTRACE_ADDR`): a target the fixed
/// `auipc` and a `jalr` reach is called directly, any other goes to
/// `caller`.
///
/// 7.2's `ftrace_make_call()` asks instead whether the target is within
/// `0x7ff` bytes of `ftrace_caller`, and then encodes the `jalr` from the
/// target's own split: a target that close but across a 4 KiB boundary of
/// the window gets a `jalr` that lands 4 KiB away, and one in the window
/// but farther than `0x7ff` from `ftrace_caller` is sent to it.
pub fn reach(ip: u64, target: u64, caller: u64) -> Result<Reach, ReachError> {
    match jalr_to(ip, target, caller) {
        Ok(_) => Ok(Reach::Direct(target)),
        Err(ReachError::Window { .. }) => match jalr_to(ip, caller, caller) {
            Ok(_) => Ok(Reach::Caller(caller)),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// One store the update pass makes, in [`Plan`] order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Write {
    /// Store the address of `ops` in the 8-byte literal at `addr` (one
    /// aligned 64-bit store).
    Literal {
        /// The literal's address.
        addr: u64,
        /// What to store there.
        ops: LiteralOps,
    },
    /// Check that the word at `ip` is `old`, then replace it with `new`
    /// (one aligned 32-bit store and the instruction-cache maintenance).
    /// `old == new` when only the ops changes.
    Jalr {
        /// The record's ip.
        ip: u64,
        /// The word the slot must hold now.
        old: u32,
        /// The word to write.
        new: u32,
    },
    /// The first initialisation: check that the 8 bytes at `pc` are
    /// `old` (the compiler's NOPs), then replace them with `new` (the
    /// fixed `auipc` and `nop`; one aligned 64-bit store).
    Entry {
        /// The `auipc` slot.
        pc: u64,
        /// The bytes the site must hold now.
        old: [u8; CALL_SIZE],
        /// The bytes to write.
        new: [u8; CALL_SIZE],
    },
}

/// What a site update does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Step {
    /// First initialisation (`ftrace_init_nop()`): literal to
    /// `ftrace_nop_ops`, then the compiler's NOPs to the fixed `auipc` and
    /// `nop`.
    Init {
        /// The kernel has the C extension (the NOPs are `c.nop`).
        rvc: bool,
    },
    /// `nop` to `jalr` (`ftrace_make_call()`).
    Enable {
        /// Where the `jalr` goes.
        to: Reach,
        /// What the literal must hold ([`literal_ops`]).
        ops: LiteralOps,
    },
    /// `jalr` to another `jalr`, or the same one with other ops
    /// (`ftrace_modify_call()`).
    Modify {
        /// Where the `jalr` goes now.
        from: Reach,
        /// Where it must go.
        to: Reach,
        /// What the literal must hold ([`literal_ops`]).
        ops: LiteralOps,
    },
    /// `jalr` to `nop` (`ftrace_make_nop()`).
    Disable {
        /// Where the `jalr` goes now.
        from: Reach,
    },
}

/// The checked word and the two stores of a site update.
///
/// The literal is stored first in every case, as C does; why every state
/// between and during the two stores is safe for a CPU running through the
/// site is written once for both CALL_OPS architectures, in
/// [`super::call_ops`]. The `auipc` is not written after
/// the first initialisation, so a CPU between it and the slot always finds
/// the one it was made with.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Plan {
    /// The fixed `auipc` the site must hold at `pc` before anything is
    /// written (checked, never written); `None` for [`Step::Init`], which
    /// writes it.
    pub auipc: Option<u32>,
    /// The stores, first to last.
    pub writes: [Write; 2],
}

/// The stores that carry out `step` at `site`, whose `auipc` is (or is to
/// be) fixed for `caller` (`FTRACE_ADDR`).
pub fn plan(site: Site, caller: u64, step: Step) -> Result<Plan, PlanError> {
    let ip = site.ip();
    let fixed = fixed_auipc(ip, caller).map_err(ReachError::Caller)?;
    let literal = |ops| Write::Literal {
        addr: site.literal(),
        ops,
    };
    let jalr = |old, new| Write::Jalr { ip, old, new };
    let to_jalr = |r: Reach| jalr_to(ip, r.addr(), caller);
    let writes = match step {
        Step::Init { rvc } => {
            return Ok(Plan {
                auipc: None,
                writes: [
                    literal(LiteralOps::Nop),
                    Write::Entry {
                        pc: site.pc(),
                        old: blank(rvc),
                        new: pair(fixed, NOP),
                    },
                ],
            })
        }
        Step::Enable { to, ops } => {
            if ops == LiteralOps::Nop {
                return Err(PlanError::NopOpsOnCall);
            }
            [literal(ops), jalr(NOP, to_jalr(to)?)]
        }
        Step::Modify { from, to, ops } => {
            if ops == LiteralOps::Nop {
                return Err(PlanError::NopOpsOnCall);
            }
            let old = to_jalr(from)?;
            let new = to_jalr(to)?;
            [literal(ops), jalr(old, new)]
        }
        Step::Disable { from } => [literal(LiteralOps::Nop), jalr(to_jalr(from)?, NOP)],
    };
    Ok(Plan {
        auipc: Some(fixed),
        writes,
    })
}

/// One check of the text a change makes before any store: the bytes at
/// `addr` must be `expected`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Check {
    /// Where to read.
    pub addr: u64,
    /// What must be there; read as many bytes as it has.
    pub expected: Insn,
    /// The fixed `auipc`: a kprobe's breakpoint over it is accepted
    /// ([`auipc_or_kprobe`]), as the C code accepts it.
    pub kprobe: bool,
}

impl Check {
    /// Checks the bytes read at [`Check::addr`].
    pub fn verify(&self, actual: Insn) -> Result<(), Failure> {
        if self.kprobe {
            if let (Some(e), Some(a)) = (word_of(&self.expected), word_of(&actual)) {
                if auipc_or_kprobe(a, e) {
                    return Ok(());
                }
            }
        }
        Failure::verify(self.expected, actual)
    }
}

/// The word an [`Insn`] of 4 bytes holds.
fn word_of(insn: &Insn) -> Option<u32> {
    let b: [u8; 4] = insn.bytes().try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// A planned change of one riscv64 patch site: the record's ip and the
/// plan.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Riscv64Change {
    /// The record's ip (the `jalr` slot).
    pub ip: u64,
    /// The checked `auipc` and the stores; every check is made before any
    /// store.
    pub plan: Plan,
}

impl Riscv64Change {
    /// Everything the change checks before it writes: the fixed `auipc`
    /// (if the site has it already), then the bytes each store replaces.
    pub fn checks(&self) -> [Option<Check>; 3] {
        let pc = self.ip.wrapping_sub(INSN_SIZE);
        let auipc = self.plan.auipc.map(|w| Check {
            addr: pc,
            expected: Insn::word(w),
            kprobe: true,
        });
        let [a, b] = self.plan.writes.map(|w| match w {
            Write::Literal { .. } => None,
            Write::Jalr { ip, old, .. } => Some(Check {
                addr: ip,
                expected: Insn::word(old),
                kprobe: false,
            }),
            Write::Entry { pc, old, .. } => Insn::new(&old).map(|expected| Check {
                addr: pc,
                expected,
                kprobe: false,
            }),
        });
        [auipc, a, b]
    }
}

/// Plans the change `decision` asks of the site `facts` describe.
///
/// `caller` is `FTRACE_ADDR`, for which the site's `auipc` was made. The
/// `jalr` reaches `facts.new` (and, for a site that calls now,
/// `facts.curr`) as [`reach`] decides; the literal holds
/// `literal_ops(decision.flags, facts.unique, facts.set)`, the flags after
/// the update, as the kernel's hooks see them.
pub fn plan_update(
    facts: &Facts,
    decision: &Decision,
    caller: u64,
) -> Result<Riscv64Change, PlanError> {
    let site = Site::from_ip(facts.ip)?;
    let ip = site.ip();
    let to = || -> Result<Reach, PlanError> {
        Ok(reach(ip, facts.new.ok_or(PlanError::Unknown)?, caller)?)
    };
    let from = || -> Result<Reach, PlanError> {
        Ok(reach(ip, facts.curr.ok_or(PlanError::Unknown)?, caller)?)
    };
    let ops = || literal_ops(decision.flags, facts.unique, facts.set);
    let step = match decision.update {
        Update::Ignore => return Err(PlanError::Nothing),
        Update::MakeCall => Step::Enable {
            to: to()?,
            ops: ops(),
        },
        Update::ModifyCall => Step::Modify {
            from: from()?,
            to: to()?,
            ops: ops(),
        },
        Update::MakeNop => Step::Disable { from: from()? },
    };
    Ok(Riscv64Change {
        ip,
        plan: plan(site, caller, step)?,
    })
}

/// Plans a literal-only change of a site that calls now and keeps its
/// call (`decision.update` is [`Update::Ignore`]) but whose ops set
/// changed: the literal to `literal_ops(decision.flags, facts.unique,
/// facts.set)`, then the `jalr` to `facts.curr` checked and left as it is
/// (a [`Step::Modify`] to the same place).
pub fn plan_literal(
    facts: &Facts,
    decision: &Decision,
    caller: u64,
) -> Result<Riscv64Change, PlanError> {
    if !decision.flags.any(ENABLED) {
        return Err(PlanError::Nothing);
    }
    let site = Site::from_ip(facts.ip)?;
    let ip = site.ip();
    let at = reach(ip, facts.curr.ok_or(PlanError::Unknown)?, caller)?;
    let ops = literal_ops(decision.flags, facts.unique, facts.set);
    Ok(Riscv64Change {
        ip,
        plan: plan(
            site,
            caller,
            Step::Modify {
                from: at,
                to: at,
                ops,
            },
        )?,
    })
}

/// Plans the first initialisation of the site whose `jalr` slot is at
/// `ip` (`ftrace_init_nop()`): the literal to the nop ops, then the fixed
/// `auipc` to `caller` and `nop` over the compiler's NOPs (`c.nop` if
/// `rvc`).
pub fn plan_init(ip: u64, caller: u64, rvc: bool) -> Result<Riscv64Change, PlanError> {
    let site = Site::from_ip(ip)?;
    Ok(Riscv64Change {
        ip,
        plan: plan(site, caller, Step::Init { rvc })?,
    })
}
