// SPDX-License-Identifier: GPL-2.0

//! The call-site instructions of each architecture: encoders, decoders and
//! verifiers, the patch-site layout and the order of the writes that take a
//! site from one state to the next.
//!
//! Each child turns the [`Decision`](super::record::Decision) the state
//! machine made for a record into that architecture's change: the bytes the
//! site must hold now and the bytes to write, in an order that is safe for
//! a CPU running through the site. [`x86`] writes one 5-byte instruction;
//! [`arm64`] and [`riscv64`] (with `DYNAMIC_FTRACE_WITH_CALL_OPS`) write
//! one aligned instruction and the per-site ops literal before the function,
//! whose contents [`call_ops`] decides for both.
//! The kernel side implements [`Arch`](super::update::Arch) over them
//! (`kside`'s per-architecture modules); the host tests run them against
//! encodings made by the GNU assembler.

pub mod arm64;
pub mod call_ops;
pub mod riscv64;
pub mod x86;
