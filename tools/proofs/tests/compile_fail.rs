// SPDX-License-Identifier: GPL-2.0

//! The holes the kernel side's types close: each program under `ui/` must
//! fail to compile with exactly the error in its `.stderr` file; `ok.rs`
//! is the lawful use of the same types and must build and run.

#[test]
fn proofs_and_checked_changes() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/ok.rs");
    t.compile_fail("tests/ui/fail_*.rs");
}
