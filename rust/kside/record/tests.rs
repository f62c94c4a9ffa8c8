// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the record state machine against the kernel's own C
//! function (`ftrace_check_record()`, reached through
//! `ftrace_c_check_record()`), run on copies of records: every flags state
//! the word can hold, with and without enable; and the kernel's entry
//! points reaching it.

use kernel::prelude::*;

#[kunit_tests(rftrace_record)]
mod kunit {
    use kernel::{
        bindings,
        ffi::c_int,
        sync::atomic::Relaxed, //
    };

    use crate::{
        kside::lock::FtraceLocked,
        kside::shadow::c_decision,
        kside::tests::{
            with_table_record,
            FLAG_BITS, //
        },
        rfcore::{
            flags::{
                RecFlags,
                REF_MAX, //
            },
            record::decide,
        }, //
    };

    #[test]
    fn rust_and_c_decide_alike_for_every_state() {
        let counts = [0u64, 1, 2, 3, REF_MAX - 1, REF_MAX];
        let mut checked = 0u32;
        let mut differ = 0u32;
        // C's decision writes `ftrace_bug_type`: under ftrace_lock.
        FtraceLocked::with(|lock| {
            for bits in 0u64..(1 << FLAG_BITS) {
                for &count in &counts {
                    for enable in [false, true] {
                        let flags = RecFlags::from_raw((bits << 19) | count);
                        let rust = decide(flags, enable);
                        let (c_verdict, c_flags) = c_decision(lock, 0, flags, enable);
                        checked += 1;
                        if c_verdict != rust.update as c_int || c_flags != rust.flags {
                            differ += 1;
                        }
                    }
                }
            }
        });
        assert_eq!(checked, (1 << FLAG_BITS) * 6 * 2);
        assert_eq!(differ, 0);
    }

    #[test]
    fn update_and_test_record_go_through_rust() {
        let before = crate::kside::stats::STATS.checks.load(Relaxed);
        // The kernel calls these under ftrace_lock (and the Rust entry
        // checks it).
        // Nothing is asserted while the lock is held: a failed assertion
        // ends the test without unwinding, and the lock would stay taken.
        let seen = FtraceLocked::with(|lock| {
            with_table_record(lock, 1, |rec| {
                let tested = crate::kside::record::ftrace_test_record(rec, true);
                let untouched = rec.flags().raw();
                let updated = crate::kside::record::ftrace_update_record(rec, true);
                (tested, untouched, updated, rec.flags().raw())
            })
        });
        let make_call = bindings::FTRACE_UPDATE_MAKE_CALL as c_int;
        let want =
            u64::from(bindings::FTRACE_FL_ENABLED) | u64::from(bindings::FTRACE_FL_TOUCHED) | 1;
        assert_eq!(seen, Some((make_call, 1, make_call, want)));
        // At least ours (nothing else should be updating records at boot).
        assert!(crate::kside::stats::STATS.checks.load(Relaxed) - before >= 2);
    }
}
