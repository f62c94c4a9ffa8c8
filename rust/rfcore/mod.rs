// SPDX-License-Identifier: GPL-2.0

//! The architecture- and kernel-independent part of the Rust ftrace core.
//!
//! Everything here is pure: it works on values (flags words, addresses,
//! instruction bytes) and on traits the kernel implements ([`update::Records`],
//! [`update::Arch`], [`update::Store`]), never on raw memory.
//! The kernel crate (`rftrace.rs`) and the host test crate (`lib.rs`) both
//! include this module, so the host tests run the very code the kernel runs.
//! It forbids `unsafe` itself, so that it does in the kernel build too, not
//! only through the host crate's lints.

#![forbid(unsafe_code)]

pub mod account;
pub mod arch;
pub mod consistency;
pub mod direct;
pub mod dirty;
pub mod fault;
pub mod filter;
pub mod flags;
pub mod ipmodify;
pub mod pages;
pub mod record;
pub mod registry;
pub mod select;
pub mod siteset;
pub mod table;
pub mod update;
