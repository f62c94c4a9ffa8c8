// SPDX-License-Identifier: GPL-2.0

//! The kernel side of the core, common to the architectures: the entry
//! points C calls, the lock proofs and the handles that borrow them, the
//! record table, and the kernel side of the update pass with its shadow
//! comparator.

pub(crate) mod abi;
pub(crate) mod arch;
pub(crate) mod decide;
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
pub(crate) mod direct;
pub(crate) mod entry;
pub(crate) mod filter;
pub(crate) mod ipmodify;
#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod kunit;
pub(crate) mod lock;
pub(crate) mod module;
pub(crate) mod ops;
pub(crate) mod pages;
pub(crate) mod record;
pub(crate) mod registry;
pub(crate) mod select;
pub(crate) mod shadow;
pub(crate) mod shim;
pub(crate) mod siteset;
pub(crate) mod stats;
pub(crate) mod subops;
pub(crate) mod table;
pub(crate) mod under_lock;
pub(crate) mod update;
