// SPDX-License-Identifier: GPL-2.0

//! Dynamic ftrace core in Rust.
//!
//! Built into the kernel as `kernel/trace/rftrace/` when
//! `CONFIG_FTRACE_RUST_CORE=y`, it owns what the C functions of
//! `kernel/trace/ftrace.c` own otherwise: the `ftrace_ops` registry
//! (registering, the ops list, start-up and shut-down, filter changes,
//! sub-ops, IPMODIFY claims, direct calls), the call-site records and
//! their table, trampoline selection, the per-site ops sets and the
//! update pass with each architecture's encoders and verifiers. C keeps
//! tracefs, the hash tables' parsing and allocation, the trampolines and
//! the hot path, and reaches the crate through the entry points of
//! `include/rftrace.h` and the C shim in `c/`.
//!
//! Two trees: [`rfcore`] decides on values, forbids `unsafe` and is
//! shared with the host test crate; `kside` is the kernel side, where each
//! file implements the `rfcore` file of the same name on the kernel's
//! structures (`kside::arch` for each architecture). `docs/architecture.md`
//! maps both.

pub mod rfcore;

mod kside;

/// Prefix of this crate's kernel log lines.
const __LOG_PREFIX: &[u8] = b"rftrace\0";
