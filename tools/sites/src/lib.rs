// SPDX-License-Identifier: GPL-2.0

//! The post-link call-site tool: reads a linked kernel image (`vmlinux`) or
//! a module (`.ko`), lists the call sites the build recorded
//! (`__mcount_loc` on x86_64, `__patchable_function_entries` on arm64 and
//! riscv64), checks each as the kernel will treat it, finds function
//! entries that carry the pattern but are not recorded, and can write the
//! table of the kept sites.
//!
//! The per-architecture knowledge (where the kernel puts the patch site for
//! an entry, what it expects to find there before its first write) comes
//! from the pure core of the Rust ftrace core (`rftrace::rfcore`), so the
//! tool checks an image against the very rules the kernel runs, riscv64's
//! included ([`riscv`] re-exports them).

#![forbid(unsafe_code)]

pub mod check;
pub mod image;
pub mod riscv;

pub use check::{check, Options, Problem, Report, Severity, Site};
pub use image::{read, Arch, InputError, Kind};

/// Reads and checks an image.
pub fn analyze(data: &[u8], opts: &Options) -> Result<Report, InputError> {
    let image = read(data)?;
    Ok(check(&image, opts))
}
