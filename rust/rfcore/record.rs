// SPDX-License-Identifier: GPL-2.0

//! The per-record state machine.
//!
//! Given a record's flags word and whether calls are being enabled (an
//! `FTRACE_UPDATE_CALLS` pass) or forced off (`FTRACE_DISABLE_CALLS`), decide
//! what has to happen to the text at the site, and compute the word that
//! describes the text once that has happened. This is the job of
//! `ftrace_check_record()` in the kernel; [`decide`] is pure, so testing a
//! record (`ftrace_test_record()`) and updating it (`ftrace_update_record()`)
//! are the same computation, one of them storing the result.

use super::flags::{
    CallKind,
    RecFlags,
    SiteState,
    DIRECT,
    ENABLED,
    IPMODIFY,
    MODIFIED,
    NOCLEAR,
    TOUCHED, //
};

/// What must be done to the text at a site.
///
/// The discriminants are the kernel's `FTRACE_UPDATE_*` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Update {
    /// The text already does what the record wants.
    Ignore = 0,
    /// Turn the NOP into a call.
    MakeCall = 1,
    /// Re-target an existing call.
    ModifyCall = 2,
    /// Turn the call into a NOP.
    MakeNop = 3,
}

/// The kernel's `enum ftrace_bug_type`, which says in a bug report what the
/// failing update was doing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum BugType {
    /// No update (or not known).
    Unknown = 0,
    /// Initialising the site at boot or module load.
    Init = 1,
    /// Making a NOP.
    Nop = 2,
    /// Making a call.
    Call = 3,
    /// Changing a call.
    Update = 4,
}

impl Update {
    /// What a failure during this update is reported as.
    pub const fn bug_type(self) -> BugType {
        match self {
            Update::Ignore => BugType::Unknown,
            Update::MakeCall => BugType::Call,
            Update::ModifyCall => BugType::Update,
            Update::MakeNop => BugType::Nop,
        }
    }
}

/// The outcome of [`decide`]: what to do and the word to store afterwards.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decision {
    /// What must be done to the text.
    pub update: Update,
    /// The flags word once the update is done. Equal to the input word when
    /// `update` is [`Update::Ignore`].
    pub flags: RecFlags,
}

/// Decides what a record needs.
///
/// `enable` is true for an update pass (sites with users become calls, the
/// others NOPs) and false for a pass that turns every call into a NOP.
#[inline]
pub const fn decide(flags: RecFlags, enable: bool) -> Decision {
    let ignore = Decision {
        update: Update::Ignore,
        flags,
    };

    if flags.skipped() {
        return ignore;
    }

    let current = flags.current();
    if enable && flags.count() > 0 {
        let wanted = flags.wanted_call();
        let update = match current {
            SiteState::Nop => Update::MakeCall,
            SiteState::Call(now) => {
                if now.regs == wanted.regs
                    && now.tramp == wanted.tramp
                    && now.direct == wanted.direct
                    && now.call_ops == wanted.call_ops
                {
                    return ignore;
                }
                Update::ModifyCall
            }
        };
        let mut next = flags.with(ENABLED | TOUCHED).with_call(wanted);
        if flags.any(DIRECT | IPMODIFY) {
            next = next.with(MODIFIED);
        }
        return Decision {
            update,
            flags: next,
        };
    }

    match current {
        SiteState::Nop => ignore,
        SiteState::Call(_) => {
            let next = if flags.count() == 0 {
                RecFlags::from_raw(flags.raw() & NOCLEAR)
            } else {
                // Keep what the ops want; only the text state goes.
                flags.without(ENABLED).with_call(CallKind::NONE)
            };
            Decision {
                update: Update::MakeNop,
                flags: next,
            }
        }
    }
}
