// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the target choice against the kernel's C choice, and of
//! the kernel's entry point reaching it.

use kernel::prelude::*;

#[kunit_tests(rftrace_select)]
mod kunit {
    use kernel::{
        bindings,
        sync::atomic::Relaxed, //
    };

    use crate::{
        kside::lock::FtraceLocked,
        kside::record::Rec,
        kside::tests::with_table_record,
        rfcore::flags::REF_MAX, //
    };

    #[test]
    fn rust_and_c_choose_targets_alike() {
        // Every state of the bits the choice reads, except the trampoline
        // and direct requests: without a registered ops with a trampoline
        // (or a direct entry) those are broken states, and the kernel's
        // answer to them is a warning that stops ftrace. They are covered
        // on the host and by the shadow mode over ftracetest.
        use crate::rfcore::flags::{
            REGS,
            REGS_EN, //
        };
        let selected = crate::kside::stats::STATS.selected.load(Relaxed);
        let mut checked = 0u32;
        let mut differ = 0u32;
        let mut via_c_differ = 0u32;
        FtraceLocked::with(|lock| {
            for bits in [0, REGS, REGS_EN, REGS | REGS_EN] {
                for count in [0u64, 1, 2, REF_MAX] {
                    for enabled in [0, u64::from(bindings::FTRACE_FL_ENABLED)] {
                        let mut rec = bindings::dyn_ftrace {
                            ip: crate::kside::abi::c_word(0x1000),
                            flags: crate::kside::abi::c_word(bits | count | enabled),
                            ..Default::default()
                        };
                        let rec = Rec::from_mut(&mut rec, lock);
                        for new in [false, true] {
                            let rust = crate::kside::select::select_addr(rec, new);
                            checked += 1;
                            if rust != crate::kside::shadow::c_select_addr(rec, new) {
                                differ += 1;
                            }
                        }
                        // The kernel's entry point reaches Rust (for a record
                        // of the table in the same state).
                        let same = with_table_record(lock, rec.flags().raw(), |rec| {
                            let via_c = crate::kside::record::ftrace_get_addr_new(rec);
                            crate::kside::abi::word(via_c)
                                == crate::kside::select::select_addr(rec, true)
                        });
                        if same != Some(true) {
                            via_c_differ += 1;
                        }
                    }
                }
            }
        });
        assert_eq!(checked, 4 * 4 * 2 * 2);
        assert_eq!(differ, 0);
        assert_eq!(via_c_differ, 0);
        assert!(crate::kside::stats::STATS.selected.load(Relaxed) - selected >= 4 * 4 * 2);
    }
}
