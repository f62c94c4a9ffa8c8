// SPDX-License-Identifier: GPL-2.0

//! Host tests of the Rust ftrace core.
//!
//! - [`model`]: an independent reference model of `ftrace_check_record()`,
//!   written from the documented rules, not from `rfcore::record`.
//! - [`record`]: `rfcore::record::decide` against the model, exhaustively.
//! - [`x86`]: the encoder and decoder against GNU as/ld/objdump output.
//! - [`arm64`]: encoders and layouts against GNU as/ld and GCC, and the CALL_OPS rules.
//! - [`golden`]: reading the golden files of those two, and checking they are current.
//! - [`update`]: the update pass (gather / plan / check / write) on a
//!   simulated kernel, for a simulated x86 and a simulated arm64.
//! - [`consistency`]: the registry's consistency check against every order
//!   of adding and removing ops of every kind, and each damage reported.
//! - [`direct`]: the direct-call interface's refusals and table width
//!   against its kernel-doc.
//! - [`filter`]: the filter algebra of the ops registry against a set model,
//!   exhaustively for one ops and two sub-ops, randomly for three.
//! - [`registry`]: the registry's admission, shared-caller choice and
//!   accounting walk against a model of the documented rules.
//! - [`ipmodify`]: the IPMODIFY claims against a model of the C walk.
//! - [`pages`]: the record table's group sizes, bisection and removal.
//! - [`sim`]: accounting, decisions and patching driven through a simulated
//!   kernel (ops of every kind, filters, modules, the direct-call
//!   interface through `rfcore::direct`), against [`sim_model`].

mod account;
mod arm64;
mod consistency;
mod direct;
mod filter;
mod golden;
mod ipmodify;
mod model;
mod pages;
mod record;
mod registry;
mod riscv64;
mod select;
mod sim;
mod sim_model;
mod siteset;
mod table;
mod update;
mod util;
mod x86;
