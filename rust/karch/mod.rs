// SPDX-License-Identifier: GPL-2.0

//! What differs per architecture: each implements the update pass's
//! `rfcore::update::Arch` (plan, check, write, flush) over its own text
//! patching, and the few arch-only hooks.

#[cfg(CONFIG_ARM64)]
pub(crate) mod arm64;
#[cfg(CONFIG_X86_64)]
pub(crate) mod x86;
