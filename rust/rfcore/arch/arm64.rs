// SPDX-License-Identifier: GPL-2.0

//! arm64 call sites with `DYNAMIC_FTRACE_WITH_CALL_OPS`: encoders, the
//! patch-site layout, the per-site ops literal and the order of the writes.
//!
//! # The patch site
//!
//! With `CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS` the kernel is built with
//! `-fpatchable-function-entry=4,2`: the compiler puts two NOPs in front of
//! the function symbol and two at the entry, and records the address of the
//! first of them in `__patchable_function_entries`. Functions are 8-byte
//! aligned (`FUNCTION_ALIGNMENT_8B`), so the two front NOPs form an 8-byte
//! slot, the *literal*, that holds the address of an `ftrace_ops`. A
//! `BTI C` (kernels built with `CONFIG_ARM64_BTI_KERNEL`) sits at the symbol,
//! before the two entry NOPs:
//!
//! ```text
//!   literal+0    NOP            literal, low half   | literal+0   NOP
//!   literal+4    NOP            literal, high half  | literal+4   NOP
//!   literal+8    NOP <- func    becomes MOV X9, LR  | literal+8   BTI C <- func
//!   literal+12   NOP <- ip      becomes BL          | literal+12  NOP (MOV X9, LR)
//!                                                   | literal+16  NOP <- ip (BL)
//! ```
//!
//! The record's `ip` is the slot that toggles between NOP and `BL`, so it is
//! 12 or 16 bytes past the literal; in both cases the literal is
//! `ALIGN_DOWN(ip - 12, 8)` ([`literal_addr`]). `ftrace_caller` finds it from
//! its return address `ip + 4` by clearing the low three bits and stepping
//! back 16 bytes ([`literal_from_lr`]). Both computations are only right when
//! the literal is 8-byte aligned: GCC ignores the function alignment for
//! cold functions and at `-Os`, and a site whose literal is misaligned must
//! never be patched ([`LayoutError::MisalignedLiteral`]); the C code warns
//! "Misaligned patch-site" and gives the record an ip of 0.
//!
//! # The writes
//!
//! Each change is two single-copy-atomic stores: the literal (one aligned
//! 64-bit data store, which `ftrace_caller` reads with one 64-bit load) and
//! the aligned 32-bit instruction at `ip` (NOP and `BL` may be swapped while
//! other CPUs execute them, so no stop_machine is needed). [`plan`] gives them
//! in the order the C code uses, the literal first in every case; see
//! [`super::call_ops`] for why every intermediate state is safe for a CPU
//! running through the site.

use crate::rfcore::{
    flags::ENABLED,
    record::{
        Decision,
        Update, //
    },
    update::{
        EncodeFault,
        Facts,
        Failure,
        Insn, //
    }, //
};

pub use super::call_ops::{
    literal_ops,
    ListReason,
    LiteralOps, //
};
pub use crate::rfcore::fault::arm64::{
    EncodeError,
    LayoutError,
    PlanError,
    ReachError, //
};

/// Size of every A64 instruction.
pub const INSN_SIZE: u64 = 4;

/// Size of the per-site ops literal.
pub const LITERAL_SIZE: u64 = 8;

/// Distance from the literal to the `BL` slot without `BTI C`.
pub const IP_OFFSET: u64 = 12;

/// Distance from the literal to the `BL` slot with `BTI C`.
pub const IP_OFFSET_BTI: u64 = 16;

/// `NOP` (`HINT #0`).
pub const NOP: u32 = 0xd503_201f;

/// `MOV X9, LR` (`ORR X9, XZR, X30`): saves the caller's return address for
/// `ftrace_caller`, written once when the site is initialised.
pub const MOV_X9_LR: u32 = 0xaa1e_03e9;

/// `BTI C` (`HINT #34`), the landing pad for indirect calls.
pub const BTI_C: u32 = 0xd503_245f;

/// Opcode bits of `BL imm26`.
pub const BL_OPCODE: u32 = 0x9400_0000;

/// Mask of the opcode bits of `BL imm26`.
pub const BL_MASK: u32 = 0xfc00_0000;

/// The reach of `BL`: the target may be `[-BL_RANGE, BL_RANGE)` bytes from
/// the instruction itself.
pub const BL_RANGE: u64 = 128 << 20;

/// The 26-bit word offset of `BL`.
const IMM26_MASK: u32 = 0x03ff_ffff;

/// Mask and value that match every `BTI` variant (`BTI`, `BTI C`, `BTI J`,
/// `BTI JC`), as the kernel's `aarch64_insn_is_bti()` does.
const BTI_MASK: u32 = 0xffff_ff3f;
const BTI_VALUE: u32 = 0xd503_241f;

/// True if `addr` is a multiple of `size`, a power of two.
const fn aligned(addr: u64, size: u64) -> bool {
    addr & size.wrapping_sub(1) == 0
}

/// Encodes `BL target` at `ip`.
pub fn encode_bl(ip: u64, target: u64) -> Result<u32, EncodeError> {
    if target == 0 {
        return Err(EncodeError::NoTarget { ip });
    }
    if !aligned(ip, INSN_SIZE) || !aligned(target, INSN_SIZE) {
        return Err(EncodeError::Misaligned { ip, target });
    }
    // The CPU adds the offset to the address of the BL itself, modulo 2^64.
    let offset = target.wrapping_sub(ip) as i64;
    let range = BL_RANGE as i64;
    if offset < -range || offset >= range {
        return Err(EncodeError::OutOfRange { ip, target });
    }
    // In range, `offset / 4` fits in 26 signed bits; keep its two's
    // complement low 26 bits.
    let imm = u32::try_from((offset >> 2) & i64::from(IMM26_MASK))
        .map_err(|_| EncodeError::OutOfRange { ip, target })?;
    Ok(BL_OPCODE | imm)
}

/// What a 4-byte word at a patch site is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decoded {
    /// `NOP`.
    Nop,
    /// `BL` to the address.
    Bl(u64),
    /// `MOV X9, LR`.
    MovX9Lr,
    /// Anything else (for example a `BRK` from a kprobe, or `BTI C`).
    Other,
}

/// Decodes the instruction word found at `ip`.
pub fn decode(ip: u64, word: u32) -> Decoded {
    match word {
        NOP => Decoded::Nop,
        MOV_X9_LR => Decoded::MovX9Lr,
        w if w & BL_MASK == BL_OPCODE => {
            // Shift the opcode out, then shift back arithmetically: the
            // imm26 comes out sign-extended and already multiplied by 4.
            let offset = i64::from(((w << 6) as i32) >> 4);
            Decoded::Bl(ip.wrapping_add(offset as u64))
        }
        _ => Decoded::Other,
    }
}

/// True for every `BTI` variant (the kernel's `aarch64_insn_is_bti()`).
pub fn is_bti(word: u32) -> bool {
    word & BTI_MASK == BTI_VALUE
}

/// The word at a site is not what the record says it should be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Mismatch {
    /// The word the record's state implies.
    pub expected: u32,
    /// The word found.
    pub actual: u32,
}

/// Checks the word read at a site against the expected one.
pub fn verify(actual: u32, expected: u32) -> Result<(), Mismatch> {
    if actual == expected {
        Ok(())
    } else {
        Err(Mismatch { expected, actual })
    }
}

/// The literal of the site whose `BL` slot is at `ip`: `ALIGN_DOWN(ip - 12,
/// 8)`, as the kernel computes it (modulo 2^64). Only meaningful for a site
/// accepted by [`Site::from_ip`] or [`Site::from_patch_entry`].
pub const fn literal_addr(ip: u64) -> u64 {
    ip.wrapping_sub(IP_OFFSET) & !(LITERAL_SIZE - 1)
}

/// The literal `ftrace_caller` loads when its link register is `lr` (the
/// address after the `BL`): `(lr & !7) - 16`.
pub const fn literal_from_lr(lr: u64) -> u64 {
    (lr & !(LITERAL_SIZE - 1)).wrapping_sub(2 * LITERAL_SIZE)
}

/// A patch site whose layout has been checked.
///
/// # Invariants
///
/// - `literal` is a multiple of [`LITERAL_SIZE`];
/// - `literal + IP_OFFSET(_BTI) + INSN_SIZE - 1` (the last byte of the `BL`
///   slot) does not overflow, so every address the accessors return is
///   inside `[literal, literal + 20)` without wrapping.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Site {
    literal: u64,
    bti: bool,
}

impl Site {
    /// Builds a site from its literal address, checking the invariants.
    fn new(literal: u64, bti: bool) -> Result<Site, LayoutError> {
        if !aligned(literal, LITERAL_SIZE) {
            return Err(LayoutError::MisalignedLiteral { literal });
        }
        let site = Site { literal, bti };
        match literal.checked_add(site.ip_offset() + INSN_SIZE - 1) {
            Some(_) => Ok(site),
            None => Err(LayoutError::Wraps { addr: literal }),
        }
    }

    /// The site recorded by the compiler at `entry` (an address from
    /// `__patchable_function_entries`, i.e. the literal), as the kernel's
    /// `ftrace_call_adjust()` turns it into a record.
    ///
    /// `entry_insn` is the word at `entry + 8` (the function symbol) when
    /// the kernel has `CONFIG_ARM64_BTI_KERNEL`, and `None` without it: the
    /// kernel then does not look and there is no `BTI` in the site.
    pub fn from_patch_entry(entry: u64, entry_insn: Option<u32>) -> Result<Site, LayoutError> {
        // Alignment first: the word at entry + 8 is not even read for a
        // misaligned site.
        if !aligned(entry, LITERAL_SIZE) {
            return Err(LayoutError::MisalignedLiteral { literal: entry });
        }
        let bti = match entry_insn {
            None => false,
            Some(w) if is_bti(w) => true,
            Some(NOP) => false,
            Some(insn) => {
                return Err(LayoutError::UnexpectedEntry {
                    func: entry.wrapping_add(2 * INSN_SIZE),
                    insn,
                })
            }
        };
        Site::new(entry, bti)
    }

    /// The site of a record whose `BL` slot is at `ip`; `bti` says whether
    /// the function starts with a `BTI` (the word at `ip - 8`; always false
    /// without `CONFIG_ARM64_BTI_KERNEL`).
    ///
    /// Refuses an `ip` that is not 4-byte aligned, and one whose literal
    /// (`ip - 12`, or `ip - 16` with BTI) is not 8-byte aligned.
    pub fn from_ip(ip: u64, bti: bool) -> Result<Site, LayoutError> {
        if !aligned(ip, INSN_SIZE) {
            return Err(LayoutError::MisalignedInsn { ip });
        }
        let back = if bti { IP_OFFSET_BTI } else { IP_OFFSET };
        match ip.checked_sub(back) {
            Some(literal) => Site::new(literal, bti),
            None => Err(LayoutError::Wraps { addr: ip }),
        }
    }

    const fn ip_offset(self) -> u64 {
        if self.bti {
            IP_OFFSET_BTI
        } else {
            IP_OFFSET
        }
    }

    /// The address of the 8-byte ops literal.
    pub const fn literal(self) -> u64 {
        self.literal
    }

    /// Whether the function starts with `BTI C`.
    pub const fn bti(self) -> bool {
        self.bti
    }

    /// The function symbol (the kernel's `ftrace_get_symaddr()`).
    pub const fn func(self) -> u64 {
        // Cannot wrap: see the type invariants.
        self.literal.wrapping_add(2 * INSN_SIZE)
    }

    /// The slot that holds `MOV X9, LR` once the site is initialised.
    pub const fn mov_ip(self) -> u64 {
        self.ip().wrapping_sub(INSN_SIZE)
    }

    /// The slot that toggles between `NOP` and `BL`: the record's ip.
    pub const fn ip(self) -> u64 {
        // Cannot wrap: see the type invariants.
        self.literal.wrapping_add(self.ip_offset())
    }
}

/// How a site reaches the place it must call.
///
/// A value made by [`reach`] holds an address that a `BL` at the ip it was
/// computed for can encode. The variants are public, so this is not relied
/// upon: [`plan`] encodes the address again and refuses what does not fit.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reach {
    /// `BL` straight to the target.
    Direct(u64),
    /// The target (a custom or direct trampoline) is out of range; `BL` to
    /// `ftrace_caller` instead, which reaches a direct trampoline through
    /// the literal's `ops->direct_call`.
    Caller(u64),
    /// Even `ftrace_caller` is out of range (a module far from the kernel):
    /// `BL` to the module's ftrace PLT, which jumps to `ftrace_caller`.
    Plt(u64),
}

impl Reach {
    /// Where the `BL` goes.
    pub const fn addr(self) -> u64 {
        match self {
            Reach::Direct(a) | Reach::Caller(a) | Reach::Plt(a) => a,
        }
    }
}

/// Decides how the site at `ip` calls `target`, as the kernel's
/// `ftrace_find_callable_addr()` does.
///
/// `caller` is `FTRACE_ADDR` (`ftrace_caller`); `plt` is the ftrace PLT of
/// the module text (init or core) that holds `ip`, if any. A target the
/// site can encode is called directly; otherwise a target other than the
/// caller is replaced by the caller; a caller out of range is reached
/// through the PLT. Unlike the kernel, "reachable" also means 4-byte aligned
/// and non-zero ([`encode_bl`]).
pub fn reach(ip: u64, target: u64, caller: u64, plt: Option<u64>) -> Result<Reach, ReachError> {
    if encode_bl(ip, target).is_ok() {
        return Ok(Reach::Direct(target));
    }
    if target != caller && encode_bl(ip, caller).is_ok() {
        return Ok(Reach::Caller(caller));
    }
    match plt {
        None => Err(ReachError::NoPlt { ip, target }),
        Some(p) => match encode_bl(ip, p) {
            Ok(_) => Ok(Reach::Plt(p)),
            Err(e) => Err(ReachError::Plt(e)),
        },
    }
}

/// One store the update pass makes (through [`Arch::write`]), in [`Plan`]
/// order.
///
/// [`Arch::write`]: crate::rfcore::update::Arch::write
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Write {
    /// Store the address of `ops` in the 8-byte literal at `addr` (one
    /// aligned 64-bit store; data, so no instruction-cache maintenance).
    Literal {
        /// The literal's address.
        addr: u64,
        /// What to store there.
        ops: LiteralOps,
    },
    /// Check that the instruction at `ip` is `old`, then replace it with
    /// `new` (one aligned 32-bit store and the cache maintenance of a text
    /// patch). `old == new` when only the ops changes: the word is still
    /// checked and rewritten, as the C code does.
    Insn {
        /// The instruction's address.
        ip: u64,
        /// The word the site must hold now.
        old: u32,
        /// The word to write.
        new: u32,
    },
}

/// What a site update does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Step {
    /// First initialisation (`ftrace_init_nop()`): literal to
    /// `ftrace_nop_ops`, then `NOP` to `MOV X9, LR` in the slot before `ip`.
    Init,
    /// `NOP` to `BL` (`ftrace_make_call()`).
    Enable {
        /// Where the `BL` goes.
        to: Reach,
        /// What the literal must hold ([`literal_ops`]).
        ops: LiteralOps,
    },
    /// `BL` to another `BL`, or the same one with other ops
    /// (`ftrace_modify_call()`).
    Modify {
        /// Where the `BL` goes now.
        from: Reach,
        /// Where it must go.
        to: Reach,
        /// What the literal must hold ([`literal_ops`]).
        ops: LiteralOps,
    },
    /// `BL` to `NOP` (`ftrace_make_nop()`).
    Disable {
        /// Where the `BL` goes now.
        from: Reach,
    },
}

/// The two stores of a site update, to be made in order; the arm64
/// `Arch::write` of the update pass stops at the first one that fails (an
/// instruction that is not `old` is refused and left unwritten).
///
/// The literal is stored first in every case, as C does; why every state
/// between and during the two stores is safe for a CPU running through the
/// site is written once for both CALL_OPS architectures, in
/// [`super::call_ops`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Plan {
    /// The stores, first to last.
    pub writes: [Write; 2],
}

/// The stores that carry out `step` at `site`.
pub fn plan(site: Site, step: Step) -> Result<Plan, PlanError> {
    let ip = site.ip();
    let literal = |ops| Write::Literal {
        addr: site.literal(),
        ops,
    };
    let insn = |old, new| Write::Insn { ip, old, new };
    let writes = match step {
        Step::Init => [
            literal(LiteralOps::Nop),
            Write::Insn {
                ip: site.mov_ip(),
                old: NOP,
                new: MOV_X9_LR,
            },
        ],
        Step::Enable { to, ops } => {
            if ops == LiteralOps::Nop {
                return Err(PlanError::NopOpsOnCall);
            }
            [literal(ops), insn(NOP, encode_bl(ip, to.addr())?)]
        }
        Step::Modify { from, to, ops } => {
            if ops == LiteralOps::Nop {
                return Err(PlanError::NopOpsOnCall);
            }
            let old = encode_bl(ip, from.addr())?;
            let new = encode_bl(ip, to.addr())?;
            [literal(ops), insn(old, new)]
        }
        Step::Disable { from } => [
            literal(LiteralOps::Nop),
            insn(encode_bl(ip, from.addr())?, NOP),
        ],
    };
    Ok(Plan { writes })
}

/// A planned change of one arm64 patch site: the record's ip and the
/// stores, in order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Arm64Change {
    /// The record's ip (the `BL` slot).
    pub ip: u64,
    /// The stores; every [`Write::Insn`] is checked before any is made.
    pub plan: Plan,
}

impl Arm64Change {
    /// The instructions the change replaces, as `(ip, old)`; `None` for a
    /// literal store.
    pub fn replaced(&self) -> [Option<(u64, u32)>; 2] {
        self.plan.writes.map(|w| match w {
            Write::Insn { ip, old, .. } => Some((ip, old)),
            Write::Literal { .. } => None,
        })
    }
}

/// Checks the word read at a site against the one a change replaces.
pub fn verify_word(expected: u32, actual: u32) -> Result<(), Failure> {
    Failure::verify(Insn::word(expected), Insn::word(actual))
}

/// Plans the change `decision` asks of the site `facts` describe.
///
/// `bti`: the function starts with `BTI C`; `caller` is `FTRACE_ADDR`;
/// `plt` the ftrace PLT of the module text holding the site, if any. The
/// `BL` reaches `facts.new` (and, for a site that calls now, `facts.curr`)
/// as [`reach`] decides; the literal holds
/// `literal_ops(decision.flags, facts.unique, facts.set)`, the flags after
/// the update, as the kernel's hooks see them.
pub fn plan_update(
    facts: &Facts,
    decision: &Decision,
    bti: bool,
    caller: u64,
    plt: Option<u64>,
) -> Result<Arm64Change, Failure> {
    let site = Site::from_ip(facts.ip, bti)?;
    let ip = site.ip();
    let to = || -> Result<_, Failure> { Ok(reach(ip, facts.new_target()?, caller, plt)?) };
    let from = || -> Result<_, Failure> { Ok(reach(ip, facts.curr_target()?, caller, plt)?) };
    let ops = || literal_ops(decision.flags, facts.unique, facts.set);
    let step = match decision.update {
        Update::Ignore => return Err(Failure::Encode(EncodeFault::Nothing)),
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
    Ok(Arm64Change {
        ip,
        plan: plan(site, step)?,
    })
}

/// Plans a literal-only change of a site that calls now and keeps its
/// call (its record's flags do not change: `decision.update` is
/// [`Update::Ignore`]) but whose ops set changed: the literal to
/// `literal_ops(decision.flags, facts.unique, facts.set)`, then the `BL` to
/// `facts.curr` checked and left as it is (a [`Step::Modify`] to the same
/// place).
pub fn plan_literal(
    facts: &Facts,
    decision: &Decision,
    bti: bool,
    caller: u64,
    plt: Option<u64>,
) -> Result<Arm64Change, Failure> {
    if !decision.flags.any(ENABLED) {
        return Err(Failure::Encode(EncodeFault::Nothing));
    }
    let site = Site::from_ip(facts.ip, bti)?;
    let ip = site.ip();
    let at = reach(ip, facts.curr_target()?, caller, plt)?;
    let ops = literal_ops(decision.flags, facts.unique, facts.set);
    Ok(Arm64Change {
        ip,
        plan: plan(
            site,
            Step::Modify {
                from: at,
                to: at,
                ops,
            },
        )?,
    })
}

/// The patch-site address (the `BL` slot) of a call-site list entry
/// (`ftrace_call_adjust()` with `CALL_OPS`): the entry is the first of the
/// two NOPs that hold the ops literal, which must be 8-byte aligned, else
/// the site is refused (`None`; the C code warns and makes a record at 0).
/// The `BL` slot is 12 bytes on, or 16 when the function starts with
/// `BTI C` (`bti`: the word at the function, `entry + 8`, is a `BTI`).
pub const fn call_site(entry: u64, bti: bool) -> Option<u64> {
    if entry == 0 || !entry.is_multiple_of(LITERAL_SIZE) {
        return None;
    }
    entry.checked_add(if bti { IP_OFFSET_BTI } else { IP_OFFSET })
}

/// Plans the first initialisation of the site whose `BL` slot is at `ip`
/// (`ftrace_init_nop()`): the literal to the nop ops, then `MOV X9, LR`.
pub fn plan_init(ip: u64, bti: bool) -> Result<Arm64Change, Failure> {
    let site = Site::from_ip(ip, bti)?;
    Ok(Arm64Change {
        ip,
        plan: plan(site, Step::Init)?,
    })
}
