// SPDX-License-Identifier: GPL-2.0

//! The flags word of a call-site record (`struct dyn_ftrace::flags`).
//!
//! The layout is the kernel's (Linux 7.2, `include/linux/ftrace.h`): the low
//! [`REF_BITS`] bits count the `ftrace_ops` that want the site, the high bits
//! say what those ops need (`REGS`, `TRAMP`, `DIRECT`, `CALL_OPS`, ...) and
//! what the text at the site currently does (the `*_EN` bits). The C code,
//! tracefs (`enabled_functions`) and the arch code read the same word, so the
//! Rust core keeps it bit for bit and only gives it typed accessors.

/// The site is a call (not a NOP).
pub const ENABLED: u64 = 1 << 31;
/// Some ops on the site wants the register-saving caller.
pub const REGS: u64 = 1 << 30;
/// The site calls the register-saving caller.
pub const REGS_EN: u64 = 1 << 29;
/// The single ops on the site has its own trampoline.
pub const TRAMP: u64 = 1 << 28;
/// The site calls an ops' own trampoline.
pub const TRAMP_EN: u64 = 1 << 27;
/// An ops that modifies the instruction pointer is attached.
pub const IPMODIFY: u64 = 1 << 26;
/// The record must not be patched (module still loading, invalid site).
pub const DISABLED: u64 = 1 << 25;
/// A direct-call ops is attached.
pub const DIRECT: u64 = 1 << 24;
/// The site calls the direct trampoline itself.
pub const DIRECT_EN: u64 = 1 << 23;
/// The single ops on the site may be called through the per-site literal.
pub const CALL_OPS: u64 = 1 << 22;
/// The per-site literal holds that ops.
pub const CALL_OPS_EN: u64 = 1 << 21;
/// The site has been traced at least once since boot.
pub const TOUCHED: u64 = 1 << 20;
/// An IPMODIFY or direct ops has been attached at least once.
pub const MODIFIED: u64 = 1 << 19;

/// Number of low bits that hold the reference count.
pub const REF_BITS: u32 = 19;
/// Largest reference count the word can hold.
pub const REF_MAX: u64 = (1 << REF_BITS) - 1;
/// Bits that survive when the last ops leaves a site.
pub const NOCLEAR: u64 = DISABLED | TOUCHED | MODIFIED;
/// Every bit the kernel defines; the others must stay zero.
pub const KNOWN: u64 = ENABLED
    | REGS
    | REGS_EN
    | TRAMP
    | TRAMP_EN
    | IPMODIFY
    | DISABLED
    | DIRECT
    | DIRECT_EN
    | CALL_OPS
    | CALL_OPS_EN
    | TOUCHED
    | MODIFIED
    | REF_MAX;

/// A record's flags word.
///
/// # Invariants
///
/// None beyond the word itself: any value read from the kernel is accepted,
/// and the accessors never fail. Decisions are made in [`super::record`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct RecFlags(u64);

impl RecFlags {
    /// Wraps a raw flags word.
    pub const fn from_raw(raw: u64) -> Self {
        RecFlags(raw)
    }

    /// The raw flags word.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// True if every bit of `mask` is set.
    pub const fn all(self, mask: u64) -> bool {
        self.0 & mask == mask
    }

    /// True if any bit of `mask` is set.
    pub const fn any(self, mask: u64) -> bool {
        self.0 & mask != 0
    }

    /// Number of ops that want this site.
    pub const fn count(self) -> u64 {
        self.0 & REF_MAX
    }

    /// Returns the word with the bits of `mask` set.
    #[must_use]
    pub const fn with(self, mask: u64) -> Self {
        RecFlags(self.0 | mask)
    }

    /// Returns the word with the bits of `mask` cleared.
    #[must_use]
    pub const fn without(self, mask: u64) -> Self {
        RecFlags(self.0 & !mask)
    }

    /// Returns the word with the bits of `mask` set to `on`.
    #[must_use]
    pub const fn set(self, mask: u64, on: bool) -> Self {
        if on {
            self.with(mask)
        } else {
            self.without(mask)
        }
    }

    /// The record is skipped by every update: disabled and not enabled.
    ///
    /// A disabled record that is still a call must be processed so that it
    /// can be turned back into a NOP and its accounting stays right.
    pub const fn skipped(self) -> bool {
        self.any(DISABLED) && !self.any(ENABLED)
    }

    /// The word of a record taken out of service (quarantined) because
    /// its site could not be made a call: `DISABLED` with no count and no
    /// request, so that every update skips it ([`RecFlags::skipped`]) and
    /// no accounting walk counts it again; `TOUCHED` (an ops wanted the
    /// site) and `MODIFIED` kept as history, `TOUCHED` set if it was not
    /// yet, which tells the word apart ([`RecFlags::is_quarantined`]).
    #[must_use]
    pub const fn quarantined(self) -> Self {
        RecFlags(self.0 & MODIFIED | DISABLED | TOUCHED)
    }

    /// Whether this is the word of a quarantined record
    /// ([`RecFlags::quarantined`]): disabled and touched, and nothing else
    /// but `MODIFIED` (no count, no request, not enabled). A record of a
    /// module being loaded is disabled too, until the module is enabled,
    /// but no ops has touched it; nor one of a weak function, which no
    /// walk accounts.
    pub const fn is_quarantined(self) -> bool {
        self.0 & !MODIFIED == DISABLED | TOUCHED
    }

    /// What the text at the site does now, according to the `*_EN` bits.
    pub const fn current(self) -> SiteState {
        if !self.any(ENABLED) {
            return SiteState::Nop;
        }
        SiteState::Call(CallKind {
            regs: self.any(REGS_EN),
            tramp: self.any(TRAMP_EN),
            direct: self.any(DIRECT_EN),
            call_ops: self.any(CALL_OPS_EN),
        })
    }

    /// The call the attached ops need, from the request bits and the count.
    ///
    /// A direct call and the per-site ops literal are only usable when a
    /// single ops is attached; with more, the site goes through the shared
    /// caller and the list function.
    pub const fn wanted_call(self) -> CallKind {
        let single = self.count() == 1;
        CallKind {
            regs: self.any(REGS),
            tramp: self.any(TRAMP),
            direct: single && self.any(DIRECT),
            call_ops: single && self.any(CALL_OPS),
        }
    }

    /// Returns the word with the `*_EN` bits describing `call`.
    #[must_use]
    pub const fn with_call(self, call: CallKind) -> Self {
        self.set(REGS_EN, call.regs)
            .set(TRAMP_EN, call.tramp)
            .set(DIRECT_EN, call.direct)
            .set(CALL_OPS_EN, call.call_ops)
    }
}

/// Which caller a patched site calls, as far as the record knows it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct CallKind {
    /// The register-saving caller.
    pub regs: bool,
    /// The single ops' own trampoline.
    pub tramp: bool,
    /// The direct trampoline itself.
    pub direct: bool,
    /// The per-site ops literal holds the single ops.
    pub call_ops: bool,
}

impl CallKind {
    /// The plain shared caller (`ftrace_caller`), and no `*_EN` bit.
    pub const NONE: CallKind = CallKind {
        regs: false,
        tramp: false,
        direct: false,
        call_ops: false,
    };
}

/// What the text at a site does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SiteState {
    /// The 5-byte (x86) or 4-byte NOP.
    Nop,
    /// A call to the caller described by the [`CallKind`].
    Call(CallKind),
}
