// SPDX-License-Identifier: GPL-2.0

//! Dynamic ftrace core in Rust.
//!
//! Built into the kernel as `kernel/trace/rftrace/` when
//! `CONFIG_FTRACE_RUST_CORE=y`. The kernel's `kernel/trace/ftrace.c` keeps the
//! ops registry, hashes and tracefs; it asks this crate what each call-site
//! record needs (`ftrace_update_record()`, `ftrace_test_record()`) and has it
//! drive the text changes (`__ftrace_replace_code()` and the x86 hooks, via
//! the C shim in `c/rftrace_shim.c`).
//!
//! The decisions and encoders are in [`rfcore`], which is pure and shared
//! with the host test crate. The kernel side is [`kside`]: `entry` holds
//! every function C calls (the only `#[no_mangle]` items, checked against
//! the bindgen'd `include/rftrace.h`); `lock` the lock proofs that every
//! record and ops handle borrows; `record`, `ops` and `module` the handles
//! (`ops` with the ops-list walk); `table` the call-site list; `shadow` the
//! kernel's C logic the shadow mode compares with; `records` the record
//! table; `pass` the kernel side of the one update pass and its shadow
//! comparator; `decide` what the core decides about one record; `stats`
//! the counters. [`karch`] holds what differs per architecture (`x86`,
//! `arm64`, `riscv64`).

pub mod rfcore;

mod kside;

/// Prefix of this crate's kernel log lines.
const __LOG_PREFIX: &[u8] = b"rftrace\0";
