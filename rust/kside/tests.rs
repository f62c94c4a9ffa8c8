// SPDX-License-Identifier: GPL-2.0

//! What the KUnit tests of the core share. Each suite sits beside the code
//! it tests, as the child `tests` of its module (`record/tests.rs`,
//! `pages/tests.rs`, ...), and is named `rftrace_` and that module's name;
//! its cases are in a module `kunit` (the name `scripts/panic-check.py`
//! leaves out of the core's panics).

use crate::{
    kside::lock::FtraceLocked,
    kside::record::Rec,
    rfcore::flags::RecFlags, //
};

/// The 13 flag bits above the reference count.
pub(crate) const FLAG_BITS: u32 = 13;

/// Runs `f` on the first record of the live table with its flags word
/// set to `flags`, and puts the word back after: the kernel's entry
/// points take only records of the table. Under ftrace_lock nobody
/// else reads or writes the word, and `f` must not touch the site.
pub(crate) fn with_table_record<R>(
    lock: &FtraceLocked,
    flags: u64,
    f: impl FnOnce(Rec<'_>) -> R,
) -> Option<R> {
    let rec = crate::kside::pages::Cursor::first(lock)?.rec();
    let saved = rec.flags();
    rec.set_flags(RecFlags::from_raw(flags));
    let answer = f(rec);
    rec.set_flags(saved);
    Some(answer)
}

/// Notes the line of the first condition that does not hold, for checks
/// made while a lock is held: a failed KUnit assertion ends the test
/// without unwinding, so the lock would stay taken and the tests after it
/// would hang.
macro_rules! check {
    ($first:ident, $cond:expr) => {
        if !($cond) && $first.is_none() {
            $first = Some(line!());
        }
    };
}
pub(crate) use check;
