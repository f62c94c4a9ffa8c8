// SPDX-License-Identifier: GPL-2.0

//! Host build of the kernel side's lock proofs (`rust/kside/lock.rs`),
//! its C-boundary views (`rust/kside/abi.rs`, over the host stand-in of
//! the few kernel items they use) and the pure
//! core's checked changes, so that `tests/compile_fail.rs` can show that
//! the programs that would break them do not compile.
//!
//! Each file under `tests/ui/` that must not compile includes `lock.rs`
//! itself (its items are `pub(crate)`), and its `.stderr` file is the
//! error it must fail with: a file that compiled, or failed for another
//! reason, fails the test.

#![allow(dead_code, missing_docs)]

use kernel::shim;

#[path = "../../../rust/kside/lock.rs"]
pub(crate) mod lock;

// Its macros are for the kernel crate's other modules.
#[path = "../../../rust/kside/abi.rs"]
#[allow(unused)]
pub(crate) mod abi;
