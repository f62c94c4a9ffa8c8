// SPDX-License-Identifier: GPL-2.0

//! x86_64 call-site instructions: encoders and the verifier.
//!
//! A call site is the 5-byte `call __fentry__` that GCC emits at function
//! entry (`-mfentry -mrecord-mcount`). At boot it is a 5-byte NOP; when traced
//! it is `CALL rel32` (opcode `E8`) to a caller or trampoline, or `JMP rel32`
//! (`E9`) to a direct trampoline whose address carries the "jump" bit
//! (`CONFIG_DYNAMIC_FTRACE_WITH_JMP`, bit 0 of the target).
//!
//! [`plan_update`] and [`plan_init`] turn what the update pass knows about a
//! record into an [`X86Change`]: the bytes the site must hold now and the
//! bytes to write.

use crate::rfcore::{
    flags::DIRECT_EN,
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

pub use crate::rfcore::fault::x86::EncodeError;

/// Length of every call-site instruction.
pub const INSN_SIZE: usize = 5;

/// The 5-byte NOP the kernel uses at call sites (`nopl 0x0(%rax,%rax,1)`).
pub const NOP5: [u8; INSN_SIZE] = [0x0f, 0x1f, 0x44, 0x00, 0x00];

/// Opcode of `CALL rel32`.
pub const CALL_OPCODE: u8 = 0xe8;
/// Opcode of `JMP rel32`.
pub const JMP_OPCODE: u8 = 0xe9;

/// Encodes the instruction that makes the site at `ip` reach `target`.
///
/// When `jmp_bit` is true (the kernel has `CONFIG_DYNAMIC_FTRACE_WITH_JMP`),
/// a target with bit 0 set means "jump to `target & !1`" instead of a call.
pub fn encode_call(ip: u64, target: u64, jmp_bit: bool) -> Result<[u8; INSN_SIZE], EncodeError> {
    let (opcode, dest) = if jmp_bit && target & 1 == 1 {
        (JMP_OPCODE, target & !1)
    } else {
        (CALL_OPCODE, target)
    };
    if dest == 0 {
        return Err(EncodeError::NoTarget { ip });
    }
    // The CPU computes the end of the instruction and the destination
    // modulo 2^64, as `decode` does: an instruction ending exactly at 2^64
    // has its next address at 0. The displacement must fit in an i32.
    let next = ip.wrapping_add(INSN_SIZE as u64);
    let disp = dest.wrapping_sub(next) as i64;
    let rel = i32::try_from(disp).map_err(|_| EncodeError::OutOfRange { ip, target })?;
    let r = rel.to_le_bytes();
    Ok([opcode, r[0], r[1], r[2], r[3]])
}

/// What a 5-byte call-site instruction is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decoded {
    /// The call-site NOP.
    Nop,
    /// `CALL rel32` to the address.
    Call(u64),
    /// `JMP rel32` to the address.
    Jmp(u64),
    /// Anything else (for example an INT3 from a kprobe).
    Other,
}

/// Decodes the instruction at a call site at `ip`.
pub fn decode(ip: u64, insn: &[u8; INSN_SIZE]) -> Decoded {
    if *insn == NOP5 {
        return Decoded::Nop;
    }
    let [op, a, b, c, d] = *insn;
    let rel = i64::from(i32::from_le_bytes([a, b, c, d]));
    let dest = ip.wrapping_add(INSN_SIZE as u64).wrapping_add(rel as u64);
    match op {
        CALL_OPCODE => Decoded::Call(dest),
        JMP_OPCODE => Decoded::Jmp(dest),
        _ => Decoded::Other,
    }
}

/// The text at a site is not what the record says it should be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Mismatch {
    /// The bytes the record's state implies.
    pub expected: [u8; INSN_SIZE],
    /// The bytes found.
    pub actual: [u8; INSN_SIZE],
}

/// Checks the bytes read at a site against the expected ones.
pub fn verify(actual: &[u8; INSN_SIZE], expected: &[u8; INSN_SIZE]) -> Result<(), Mismatch> {
    if actual == expected {
        Ok(())
    } else {
        Err(Mismatch {
            expected: *expected,
            actual: *actual,
        })
    }
}

/// The patch-site address of a call-site list entry
/// (`ftrace_call_adjust()`): on x86 the entry is the address of the
/// 5-byte call itself. A zero entry is no site.
pub const fn call_site(entry: u64) -> Option<u64> {
    if entry == 0 {
        None
    } else {
        Some(entry)
    }
}

/// A planned change of one x86 call site.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct X86Change {
    /// The call site.
    pub ip: u64,
    /// The bytes the site must hold now.
    pub old: [u8; INSN_SIZE],
    /// The bytes to write.
    pub new: [u8; INSN_SIZE],
}

impl X86Change {
    /// Checks the bytes read at the site against [`X86Change::old`].
    pub fn verify(&self, actual: &[u8; INSN_SIZE]) -> Result<(), Failure> {
        // The common case first, without building the failure's values.
        if *actual == self.old {
            return Ok(());
        }
        Failure::verify(Insn::x86(self.old), Insn::x86(*actual))
    }
}

/// The instruction that makes the site at `ip` reach `target`; only a
/// direct-call target (`direct`: the `DIRECT_EN` of the flags that describe
/// it) reads bit 0 as "jump", and only on a `jmp_bit` kernel.
///
/// Callers, trampolines and callbacks are plain functions: with GCC 12 at
/// `-Os` a C function can start at an odd address, and reading that bit as
/// "jump" would write a `JMP` one byte before the function.
fn call_to(ip: u64, target: u64, direct: bool, jmp_bit: bool) -> Result<[u8; INSN_SIZE], Failure> {
    Ok(encode_call(ip, target, direct && jmp_bit)?)
}

/// Plans the change `decision` asks of the site `facts` describe.
///
/// The old bytes come from the record's current state: the NOP for
/// [`Update::MakeCall`], else the call (or jump) to `facts.curr`, direct if
/// the flags before the update have `DIRECT_EN`. The new bytes: the NOP for
/// [`Update::MakeNop`], else the call to `facts.new`, direct if the
/// decision's flags have `DIRECT_EN`. `jmp_bit`: the kernel has
/// `CONFIG_DYNAMIC_FTRACE_WITH_JMP`.
pub fn plan_update(
    facts: &Facts,
    decision: &Decision,
    jmp_bit: bool,
) -> Result<X86Change, Failure> {
    let ip = facts.ip;
    let old = match decision.update {
        Update::Ignore => return Err(Failure::Encode(EncodeFault::Nothing)),
        Update::MakeCall => NOP5,
        Update::ModifyCall | Update::MakeNop => call_to(
            ip,
            facts.curr_target()?,
            facts.flags.any(DIRECT_EN),
            jmp_bit,
        )?,
    };
    let new = match decision.update {
        Update::MakeNop => NOP5,
        _ => call_to(
            ip,
            facts.new_target()?,
            decision.flags.any(DIRECT_EN),
            jmp_bit,
        )?,
    };
    Ok(X86Change { ip, old, new })
}

/// Plans the first conversion of the site at `ip`: the compiler's call to
/// `mcount` (`__fentry__`, never a jump) becomes the NOP.
pub fn plan_init(ip: u64, mcount: u64) -> Result<X86Change, Failure> {
    Ok(X86Change {
        ip,
        old: encode_call(ip, mcount, false)?,
        new: NOP5,
    })
}
