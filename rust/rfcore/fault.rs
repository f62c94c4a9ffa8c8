// SPDX-License-Identifier: GPL-2.0

//! Why a site could not be updated, for every architecture: the bytes of
//! an instruction ([`Insn`]), the one [`Failure`] every plan, check and
//! write returns, its error class ([`Errno`]), and each architecture's
//! reasons an instruction, a layout or a reach could not be worked out
//! ([`x86`], [`arm64`], [`riscv64`]).
//!
//! A leaf of the pure core: the update pass and the encoders both use it,
//! and it uses neither, so the update pass names no architecture and the
//! encoders name no orchestrator detail beyond it.

/// The most bytes an [`Insn`] holds.
pub const INSN_MAX: usize = 8;

/// The bytes of one instruction, as read from or meant for a call site: up
/// to [`INSN_MAX`] bytes (x86 uses 5, arm64 4).
///
/// # Invariants
///
/// - `len <= INSN_MAX`;
/// - the bytes past `len` are zero, so two values are equal exactly when
///   their instructions are.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Insn {
    bytes: [u8; INSN_MAX],
    len: u8,
}

impl Insn {
    /// The instruction made of `bytes`, or `None` if there are more than
    /// [`INSN_MAX`].
    pub fn new(bytes: &[u8]) -> Option<Insn> {
        if bytes.len() > INSN_MAX {
            return None;
        }
        let mut insn = Insn {
            bytes: [0; INSN_MAX],
            len: u8::try_from(bytes.len()).ok()?,
        };
        for (to, from) in insn.bytes.iter_mut().zip(bytes) {
            *to = *from;
        }
        Some(insn)
    }

    /// The 5 bytes of an x86 call-site instruction.
    pub const fn x86(b: [u8; 5]) -> Insn {
        let [b0, b1, b2, b3, b4] = b;
        Insn {
            bytes: [b0, b1, b2, b3, b4, 0, 0, 0],
            len: 5,
        }
    }

    /// An A64 instruction word, in its (little-endian) memory order.
    pub const fn word(w: u32) -> Insn {
        let [b0, b1, b2, b3] = w.to_le_bytes();
        Insn {
            bytes: [b0, b1, b2, b3, 0, 0, 0, 0],
            len: 4,
        }
    }

    /// The instruction's bytes.
    pub fn bytes(&self) -> &[u8] {
        // Cannot fail: `len <= INSN_MAX` (type invariants).
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// How many bytes the instruction has.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True for the instruction of no bytes.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Why an instruction (or a site's layout, or the way it reaches its
/// target) could not be worked out, for any architecture.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EncodeFault {
    /// An x86 `CALL`/`JMP` could not be encoded.
    X86(x86::EncodeError),
    /// An arm64 `BL` could not be encoded.
    Arm64(arm64::EncodeError),
    /// The arm64 patch site is unusable.
    Layout(arm64::LayoutError),
    /// The arm64 site cannot reach its target.
    Reach(arm64::ReachError),
    /// The arm64 stores could not be planned.
    Plan(arm64::PlanError),
    /// The riscv64 site is unusable, cannot reach its target, or its
    /// stores could not be planned.
    Riscv64(riscv64::PlanError),
    /// A plan was asked for an update that changes nothing
    /// ([`Update::Ignore`](super::record::Update::Ignore)); the orchestrator never does that.
    Nothing,
    /// A plan needed a target its facts were gathered without (see
    /// [`need`](super::update::need)); the orchestrator never does that.
    Unknown,
}

/// Why a site could not be updated; the same for every architecture.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Failure {
    /// Reading the site faulted.
    Fault,
    /// The site does not hold what its record says; nothing was written.
    Mismatch {
        /// What the record's state says the site holds.
        expected: Insn,
        /// What it holds.
        actual: Insn,
    },
    /// The change cannot be planned (encoding, layout, reach).
    Encode(EncodeFault),
    /// Writing the text (or an arm64 literal) failed.
    Write,
}

/// The error class of a [`Failure`], which the kernel maps to its error
/// codes in one place.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Errno {
    /// `EFAULT`.
    Fault,
    /// `EINVAL`.
    Invalid,
    /// `EPERM`.
    Perm,
}

impl Failure {
    /// The error class the kernel returns for this failure.
    pub const fn errno(&self) -> Errno {
        match self {
            Failure::Fault => Errno::Fault,
            Failure::Mismatch { .. } | Failure::Encode(_) => Errno::Invalid,
            Failure::Write => Errno::Perm,
        }
    }

    /// `Ok` if `actual` is `expected`, else the mismatch.
    pub fn verify(expected: Insn, actual: Insn) -> Result<(), Failure> {
        if expected == actual {
            Ok(())
        } else {
            Err(Failure::Mismatch { expected, actual })
        }
    }
}

impl From<EncodeFault> for Failure {
    fn from(e: EncodeFault) -> Self {
        Failure::Encode(e)
    }
}

/// `From<$error> for Failure`: an encoding failure of that kind.
macro_rules! encode_fault_from {
    ($($error:ty => $variant:ident),* $(,)?) => {
        $(
            impl From<$error> for Failure {
                fn from(e: $error) -> Self {
                    Failure::Encode(EncodeFault::$variant(e))
                }
            }
        )*
    };
}

encode_fault_from!(
    x86::EncodeError => X86,
    arm64::EncodeError => Arm64,
    arm64::LayoutError => Layout,
    arm64::ReachError => Reach,
    arm64::PlanError => Plan,
);

impl From<riscv64::PlanError> for Failure {
    fn from(e: riscv64::PlanError) -> Self {
        match e {
            riscv64::PlanError::Nothing => Failure::Encode(EncodeFault::Nothing),
            riscv64::PlanError::Unknown => Failure::Encode(EncodeFault::Unknown),
            e => Failure::Encode(EncodeFault::Riscv64(e)),
        }
    }
}

/// x86_64's failures.
pub mod x86 {

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
}

/// arm64's failures.
pub mod arm64 {

    /// Why a `BL` could not be encoded.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum EncodeError {
        /// The target is not in `[ip - 128 MiB, ip + 128 MiB)`.
        OutOfRange {
            /// Address of the call site.
            ip: u64,
            /// Address that was to be called.
            target: u64,
        },
        /// The site or the target is not 4-byte aligned. (The kernel's encoder
        /// returns a `BRK` instruction here, which must never be written.)
        Misaligned {
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

    /// Why a patch site is refused.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum LayoutError {
        /// The literal slot (the first NOP the compiler put before the function)
        /// is not 8-byte aligned: a 64-bit store to it would not be
        /// single-copy atomic, and `ftrace_caller` would load the literal from
        /// the wrong place. GCC does this to cold and `-Os` functions.
        MisalignedLiteral {
            /// Where the literal would be.
            literal: u64,
        },
        /// The `BL` slot is not 4-byte aligned.
        MisalignedInsn {
            /// The record's ip.
            ip: u64,
        },
        /// With BTI, the word at the function symbol is neither a `BTI` nor a
        /// `NOP`. (The C code warns and carries on as if it were a NOP; its
        /// `ftrace_init_nop()` then finds that word where it expects the NOP
        /// to turn into `MOV X9, LR`, and fails with `ftrace_bug()`.)
        UnexpectedEntry {
            /// The function symbol.
            func: u64,
            /// The word found there.
            insn: u32,
        },
        /// The site would run past the end of the address space.
        Wraps {
            /// The address given.
            addr: u64,
        },
    }

    /// Why a site cannot reach the place it must call.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum ReachError {
        /// Neither the target nor `ftrace_caller` is in range and there is no
        /// PLT (the site is not in a module's text, or modules are off).
        NoPlt {
            /// Address of the call site.
            ip: u64,
            /// Address that was to be called.
            target: u64,
        },
        /// The PLT itself cannot be reached. (The C code does not check
        /// this; its encoder would produce a `BRK`.)
        Plt(EncodeError),
    }

    /// Why a step could not be planned.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum PlanError {
        /// A `BL` could not be encoded (a [`Reach`](super::super::arch::arm64::Reach) from another site).
        Encode(EncodeError),
        /// A call was asked for with [`LiteralOps::Nop`](super::super::arch::arm64::LiteralOps::Nop) in the literal: the
        /// site would call a function that does nothing.
        NopOpsOnCall,
    }

    impl From<EncodeError> for PlanError {
        fn from(e: EncodeError) -> Self {
            PlanError::Encode(e)
        }
    }
}

/// riscv64's failures.
pub mod riscv64 {

    /// Why a call could not be encoded.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum EncodeError {
        /// The target is more than about 2 GiB from `pc`
        /// (outside `[pc + CALL_MIN, pc + CALL_MAX]`).
        OutOfRange {
            /// Address of the `auipc`.
            pc: u64,
            /// Address that was to be called.
            target: u64,
        },
        /// The site or the target is not 4-byte aligned. (The kernel's
        /// encoder does not check: a site would call the wrong address.)
        Misaligned {
            /// Address of the `auipc`.
            pc: u64,
            /// Address that was to be called.
            target: u64,
        },
        /// The target is zero (no caller found for the record).
        NoTarget {
            /// Address of the `auipc`.
            pc: u64,
        },
    }

    /// Why a patch site is refused.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum LayoutError {
        /// The literal (the call-site list entry) is not 8-byte aligned: the
        /// kernel would write the ops 4 or more bytes before where
        /// `ftrace_caller` loads them, into the function before, and a 64-bit
        /// store to it would not be single-copy atomic.
        MisalignedLiteral {
            /// Where the literal would be.
            literal: u64,
        },
        /// The record's ip is not 4-byte aligned.
        MisalignedInsn {
            /// The record's ip.
            ip: u64,
        },
        /// The site would run past either end of the address space.
        Wraps {
            /// The address given.
            addr: u64,
        },
    }

    /// Why a site cannot reach the place it must call.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum ReachError {
        /// The `auipc` to `ftrace_caller` cannot be encoded at the site (a
        /// site more than 2 GiB from it, or misaligned). The C code does not
        /// check: it truncates the offset to 32 bits.
        Caller(EncodeError),
        /// A `jalr` to `target` at `ip` needs another `auipc` than the site's,
        /// which was made for `ftrace_caller` (a [`Reach`](super::super::arch::riscv64::Reach) from another site).
        Window {
            /// The record's ip.
            ip: u64,
            /// Address that was to be called.
            target: u64,
        },
    }

    /// Why a change could not be planned.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub enum PlanError {
        /// The site's layout is refused.
        Layout(LayoutError),
        /// The `auipc` to `ftrace_caller` or a `jalr` cannot be made.
        Reach(ReachError),
        /// A call was asked for with [`LiteralOps::Nop`](super::super::arch::arm64::LiteralOps::Nop) in the literal: the
        /// site would call a function that does nothing.
        NopOpsOnCall,
        /// A plan was asked for an update that changes nothing
        /// ([`Update::Ignore`](super::super::record::Update::Ignore)).
        Nothing,
        /// A plan needed a target its facts were gathered without.
        Unknown,
    }

    impl From<LayoutError> for PlanError {
        fn from(e: LayoutError) -> Self {
            PlanError::Layout(e)
        }
    }

    impl From<ReachError> for PlanError {
        fn from(e: ReachError) -> Self {
            PlanError::Reach(e)
        }
    }
}
