// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the accounting against the kernel's C accounting, on
//! copies of records: every flags state, with ops of every property the
//! accounting reads.

use kernel::prelude::*;

#[kunit_tests(rftrace_decide)]
mod kunit {
    use kernel::bindings;

    use crate::{
        kside::lock::FtraceLocked,
        kside::ops::Ops,
        kside::record::Rec,
        kside::shadow::c_account,
        kside::tests::FLAG_BITS,
        rfcore::{
            account::AccountError,
            flags::REF_MAX, //
        }, //
    };

    #[test]
    fn rust_and_c_account_alike() {
        // Unregistered ops on the stack, with every combination of the
        // properties the accounting reads. Counts that would make the C
        // code warn (and stop ftrace) are only given to Rust.
        let counts = [0u64, 1, 2, 3, REF_MAX - 1];
        let ops_flags = [
            0u32,
            bindings::FTRACE_OPS_FL_DIRECT,
            bindings::FTRACE_OPS_FL_SAVE_REGS,
            bindings::FTRACE_OPS_FL_DIRECT | bindings::FTRACE_OPS_FL_SAVE_REGS,
            bindings::FTRACE_OPS_FL_RECURSION,
        ];
        // The kernel's rule for the per-site ops request, as configured.
        let mode = if cfg!(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS) {
            crate::rfcore::account::CallOps::Supported
        } else {
            crate::rfcore::account::CallOps::Unsupported
        };
        let mut checked = 0u32;
        let mut differ = 0u32;
        let mut survivor_rule = 0u32;
        // The C accounting and the survivor rule walk the ops list.
        FtraceLocked::with(|lock| {
            for &of in &ops_flags {
                for tramp in [0usize, 0x1000] {
                    let mut ops = bindings::ftrace_ops {
                        flags: of as usize,
                        trampoline: tramp,
                        ..Default::default()
                    };
                    let ops = Ops::from_mut(&mut ops, lock);
                    for bits in 0u64..(1 << FLAG_BITS) {
                        for &count in &counts {
                            for inc in [false, true] {
                                let flags = (bits << 19) | count;
                                let mut rec = bindings::dyn_ftrace {
                                    ip: 0,
                                    flags: crate::kside::abi::c_word(flags),
                                    ..Default::default()
                                };
                                let rec = Rec::from_mut(&mut rec, lock);
                                let before = rec.flags();
                                let mut others = crate::kside::ops::KernelOthers::new(rec, ops);
                                let rust = if inc {
                                    crate::rfcore::account::add(before, ops.props(), mode)
                                } else {
                                    crate::rfcore::account::remove(
                                        before,
                                        ops.props(),
                                        mode,
                                        &mut others,
                                    )
                                };
                                if (inc && count == REF_MAX - 1) || (!inc && count == 0) {
                                    let want = if inc {
                                        AccountError::Overflow
                                    } else {
                                        AccountError::Underflow
                                    };
                                    if rust != Err(want) {
                                        differ += 1;
                                    }
                                    continue;
                                }
                                let (c_ok, c_flags) = c_account(rec, ops, inc);
                                checked += 1;
                                if !c_ok || rust != Ok(c_flags) {
                                    differ += 1;
                                }
                                // The removals where the ops left on the site
                                // and the ops removed disagree on the literal:
                                // the case 7.2 decided from the ops removed.
                                if others
                                    .survivor_ok
                                    .is_some_and(|left| left != ops.props().call_ops_ok)
                                {
                                    survivor_rule += 1;
                                }
                            }
                        }
                    }
                }
            }
        });
        assert_eq!(checked, 10 * (1 << FLAG_BITS) * 8);
        assert_eq!(differ, 0);
        // With per-site literals some removals down to one user must take
        // the survivor rule: whatever the kernel's list holds at address 0
        // (no ops, one ops, several), the ops on the stack include one
        // that may use the literal and one (RECURSION) that may not, and
        // the survivor's answer is the same for both.
        if mode == crate::rfcore::account::CallOps::Supported {
            assert!(survivor_rule > 0);
        } else {
            assert_eq!(survivor_rule, 0);
        }
    }
}
