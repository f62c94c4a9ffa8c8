// SPDX-License-Identifier: GPL-2.0

//! Host build of the Rust ftrace core, for `cargo test`.
//!
//! The kernel builds `rftrace.rs` instead; both include [`rfcore`].

#![no_std]

#[cfg(test)]
extern crate std;

pub mod rfcore;

#[cfg(test)]
mod tests;
