// SPDX-License-Identifier: GPL-2.0

//! The kernel side of the core: the entry points C calls (`entry`), the
//! lock proofs (`lock`) and the handles on C's structures that borrow them
//! (`record`, `ops`, `module`, `pages`, `filter`), the registry
//! (`registry`, `refilter`, `subops`, `ipmodify`, `direct`), the per-site ops sets
//! (`siteset`), the call-site list check (`table`), what the core decides
//! for one record (`decide`, `select`), the update pass (`update`) and
//! each architecture's text writes (`arch`). Each implements the
//! `rfcore` module of the same name where there is one. `shadow` holds the
//! shadow build's checks (one call from each place checked) and the
//! kernel's C logic they compare with; `shim`, `under_lock` and `abi` the
//! C functions the core calls and the views that cross the boundary;
//! `stats` the counters. A module's KUnit suite is its child `tests`
//! (`record/tests.rs`, ...); `tests` here holds what the suites share.

pub(crate) mod abi;
pub(crate) mod arch;
pub(crate) mod decide;
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
pub(crate) mod direct;
pub(crate) mod dirty;
pub(crate) mod entry;
pub(crate) mod filter;
pub(crate) mod ipmodify;
pub(crate) mod lock;
pub(crate) mod module;
pub(crate) mod ops;
pub(crate) mod pages;
pub(crate) mod record;
pub(crate) mod refilter;
pub(crate) mod registry;
pub(crate) mod select;
pub(crate) mod shadow;
pub(crate) mod shim;
pub(crate) mod siteset;
pub(crate) mod stats;
pub(crate) mod subops;
pub(crate) mod table;
#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
pub(crate) mod under_lock;
pub(crate) mod update;
