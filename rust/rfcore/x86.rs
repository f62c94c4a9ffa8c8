// SPDX-License-Identifier: GPL-2.0

//! x86_64 call-site instructions: encoders and the verifier.
//!
//! A call site is the 5-byte `call __fentry__` that GCC emits at function
//! entry (`-mfentry -mrecord-mcount`). At boot it is a 5-byte NOP; when traced
//! it is `CALL rel32` (opcode `E8`) to a caller or trampoline, or `JMP rel32`
//! (`E9`) to a direct trampoline whose address carries the "jump" bit
//! (`CONFIG_DYNAMIC_FTRACE_WITH_JMP`, bit 0 of the target).

/// Length of every call-site instruction.
pub const INSN_SIZE: usize = 5;

/// The 5-byte NOP the kernel uses at call sites (`nopl 0x0(%rax,%rax,1)`).
pub const NOP5: [u8; INSN_SIZE] = [0x0f, 0x1f, 0x44, 0x00, 0x00];

/// Opcode of `CALL rel32`.
pub const CALL_OPCODE: u8 = 0xe8;
/// Opcode of `JMP rel32`.
pub const JMP_OPCODE: u8 = 0xe9;

/// Why an instruction could not be encoded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EncodeError {
    /// The target is more than +-2 GiB from the end of the instruction.
    OutOfRange {
        /// Address of the call site.
        ip: u64,
        /// Address that was to be called.
        target: u64,
    },
    /// The target is zero (no caller found for the record).
    NoTarget {
        /// Address of the call site.
        ip: u64,
    },
}

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
