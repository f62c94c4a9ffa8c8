// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the Rust core, run in the kernel at boot.
//!
//! The reference for the record state machine is the kernel's own C
//! function (`ftrace_check_record()`, reached through
//! `ftrace_c_check_record()`), run on copies of records: every flags state
//! the word can hold is compared, with and without enable.

use kernel::prelude::*;

#[kunit_tests(rftrace)]
mod tests {
    use kernel::{
        bindings,
        ffi::c_int,
        sync::atomic::Relaxed, //
    };

    use crate::{
        kside::lock::FtraceLocked,
        kside::ops::Ops,
        kside::record::Rec,
        kside::shadow::{
            c_account,
            c_decision, //
        },
        rfcore::{
            account::AccountError,
            arch::x86::{
                encode_call,
                EncodeError, //
            }, //
            flags::{
                RecFlags,
                REF_MAX, //
            },
            record::decide,
        }, //
    };

    /// The 13 flag bits above the reference count.
    const FLAG_BITS: u32 = 13;

    /// Runs `f` on the first record of the live table with its flags word
    /// set to `flags`, and puts the word back after: the kernel's entry
    /// points take only records of the table. Under ftrace_lock nobody
    /// else reads or writes the word, and `f` must not touch the site.
    fn with_table_record<R>(
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

    #[test]
    fn records_from_c_are_looked_up_first() {
        use crate::kside::pages::{
            find,
            Cursor, //
        };
        // Counted under the lock, asserted after it (see above).
        let (mut found, mut inside) = (0u32, 0u32);
        let (stray_found, null_found) = FtraceLocked::with(|lock| {
            let mut at = Cursor::first(lock);
            while let Some(c) = at {
                let rec = c.rec().as_ptr();
                // Every record of the table is found, as itself...
                if find(rec, lock).map(|r| r.as_ptr()) == Some(rec) {
                    found += 1;
                }
                // ...and a pointer into the middle of one is not.
                if find(rec.cast::<u8>().wrapping_add(1).cast(), lock).is_some() {
                    inside += 1;
                }
                at = c.next();
            }
            // Nor a record that is not in the table.
            let stray = bindings::dyn_ftrace::default();
            let stray_found = find(&stray, lock).is_some();
            (stray_found, find(core::ptr::null(), lock).is_some())
        });
        // The core kernel has more records than that.
        assert!(found > 10_000);
        assert_eq!(inside, 0);
        assert!(!stray_found);
        assert!(!null_found);
    }

    #[test]
    fn wrong_bytes_are_refused_and_left_alone() {
        // The line of the first check that failed, if any.
        assert_eq!(super::wrong_bytes_are_refused(), None);
    }

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

    #[test]
    fn call_site_lists_are_checked_against_the_kernel_text() {
        use crate::{kside::arch::call_site, kside::module::core_kernel_text, rfcore::table::scan};
        // Two kernel functions (in text), one of them twice, a zero, and
        // an address on our stack (not text), unsorted.
        let f1 = bindings::ftrace_kill as *const () as usize;
        let f2 = bindings::ftrace_get_addr_new as *const () as usize;
        let (lo, hi) = if f1 < f2 { (f1, f2) } else { (f2, f1) };
        let stack = 0u64;
        let stray = core::ptr::addr_of!(stack) as usize;
        let mut list = [hi as u64, 0, lo as u64, hi as u64, stray as u64];
        let text = core_kernel_text();
        // What the architecture moves an entry by to its patch site: the
        // pure function agrees with the kernel's ftrace_call_adjust().
        let (slo, shi) = (
            call_site(lo as u64).unwrap() as usize,
            call_site(hi as u64).unwrap() as usize,
        );
        for (entry, site) in [(lo, slo), (hi, shi)] {
            // SAFETY: a computation on a kernel text address (arm64 with
            // BTI reads the word at the function).
            let c = unsafe { bindings::rftrace_shim_call_adjust(entry as kernel::ffi::c_ulong) };
            assert_eq!(c as usize, site);
        }
        assert!(text.contains(lo as u64) && text.contains(hi as u64));
        assert!(!text.contains(stray as u64));
        let report = scan(&mut list, &text, call_site);
        assert!(report.unsorted);
        assert_eq!(report.total, 5);
        assert_eq!(report.kept, 2);
        assert_eq!(report.duplicate, 1);
        assert_eq!(report.padding, 1);
        // the core kernel's C code skips out-of-text entries too (weak
        // function leftovers)
        assert_eq!(report.weak, 1);
        // sorted, the duplicate and the stray entry zeroed, the kept
        // entries made patch sites
        let (slo, shi) = (slo as u64, shi as u64);
        let mut want = [0, slo, shi, 0, 0];
        if stray < lo {
            want = [0, 0, slo, shi, 0];
        } else if stray < hi {
            want = [0, slo, 0, shi, 0];
        }
        assert_eq!(list, want);
    }

    #[test]
    fn record_lookup_matches_c() {
        use crate::kside::pages::{
            lookup_from,
            table_first,
            INSN_SIZE, //
        };
        let rcu = kernel::sync::rcu::read_lock();
        let head = table_first(&rcu);
        let (mut records, mut checked, mut differ) = (0usize, 0u32, 0u32);
        let mut next = head;
        while let Some(g) = next {
            let len = g.len();
            for i in (0..len).step_by(13) {
                let ip = g.ip_at(len, i);
                let want = g.rec(len, i);
                // One address: the first and last byte of the site, and
                // the bytes around it; then a range over it.
                for (s, e) in [
                    (ip, ip),
                    (ip + INSN_SIZE - 1, ip + INSN_SIZE - 1),
                    (ip - 1, ip - 1),
                    (ip + INSN_SIZE, ip + INSN_SIZE),
                    (ip - 2, ip + 2),
                ] {
                    let rust = lookup_from(head, s, e);
                    let c = crate::kside::shadow::c_lookup_rec(s, e, &rcu);
                    let same = if s == e {
                        rust == c
                    } else {
                        rust.is_null() == c.is_null()
                    };
                    if !same {
                        differ += 1;
                    }
                    checked += 1;
                }
                if lookup_from(head, ip, ip) != want {
                    differ += 1;
                }
            }
            records += len;
            next = g.following();
        }
        drop(rcu);
        // The core kernel has more records than that.
        assert!(records > 10_000);
        assert!(checked > 3_000);
        assert_eq!(differ, 0);
    }

    #[test]
    fn table_build_lookup_remove() {
        use crate::{
            kside::arch::call_site,
            kside::module::core_kernel_text,
            kside::pages::{
                build,
                geometry,
                table_first,
                Built, //
            },
        };
        use kernel::{
            alloc::{
                flags::{
                    GFP_KERNEL,
                    GFP_NOWAIT, //
                },
                KVec, //
            }, //
        };

        /// The addresses of the records of a chain, and its group lengths.
        fn contents(chain: &Built) -> (KVec<u64>, KVec<usize>) {
            let (mut ips, mut lens) = (KVec::new(), KVec::new());
            let mut next = chain.first();
            while let Some(g) = next {
                let len = g.len();
                lens.push(len, GFP_KERNEL).unwrap();
                for i in 0..len {
                    ips.push(g.ip_at(len, i), GFP_KERNEL).unwrap();
                }
                next = g.following();
            }
            (ips, lens)
        }

        // 600 sites of the core kernel, taken from its first group. The
        // vector is allocated first: no sleeping allocation under RCU.
        let mut ips = KVec::with_capacity(600, GFP_KERNEL).unwrap();
        {
            let rcu = kernel::sync::rcu::read_lock();
            let g = table_first(&rcu).unwrap();
            let len = g.len();
            assert!(len >= 600);
            for i in 0..600 {
                // Within the capacity: `push` does not allocate.
                ips.push(g.ip_at(len, i), GFP_NOWAIT).unwrap();
            }
        }
        // The call-site list entry of a site: the architecture moves an
        // entry by a fixed amount (0 on x86).
        let text = core_kernel_text();
        let probe = ips[0] & !7;
        let shift = call_site(probe).unwrap() - probe;
        let mut list: KVec<u64> = KVec::new();
        for (i, &ip) in ips.iter().enumerate() {
            if i % 50 == 7 {
                list.push(0, GFP_KERNEL).unwrap(); // padding
            }
            list.push(ip - shift, GFP_KERNEL).unwrap();
        }
        // Not kernel text: skipped, as the kernel skips weak leftovers.
        let data = core::ptr::addr_of!(crate::kside::stats::STATS) as u64;
        list.push(data, GFP_KERNEL).unwrap();

        // The list check first, as the kernel does it: it zeroes the
        // padding and the non-text entry and counts what it keeps.
        let report = crate::rfcore::table::scan(&mut list[..], &text, call_site);
        let mut built = build(&list[..], report.kept as usize).unwrap();
        assert_eq!(built.records(), 600);
        // 600 records of 16 bytes: a group of 2 pages (512), then one page.
        let geo = geometry();
        let big = geo.first_order(600);
        let first_cap = geo.entries(big).unwrap();
        let (got, lens) = contents(&built);
        // The records are the sites, in order.
        assert_eq!(&got[..], &ips[..]);
        assert_eq!(lens[0], first_cap.min(600));
        assert_eq!(lens.iter().sum::<usize>(), 600);
        assert_eq!(lens.len(), 2);
        // One big group, then order-0 groups.
        assert_eq!(built.pages(), lens.len() - 1 + (1usize << big));

        // Lookups in the private chain.
        for &ip in ips.iter().step_by(7) {
            let rec = built.lookup(ip, ip);
            assert!(!rec.is_null());
            // SAFETY: a record of our chain, which lives until the end.
            assert_eq!(crate::kside::abi::word(unsafe { (*rec).ip }), ip);
        }

        // Take out sites 100..550 (across both groups), then 0..100 (the
        // first group empties), then the rest.
        let mut seen = 0usize;
        let (gone, _) = built.remove_range(ips[100], ips[549], |_| seen += 1);
        assert_eq!((600 - built.records(), seen), (450, 450));
        // No group is empty yet.
        assert!(gone.first().is_none());
        let (left, _) = contents(&built);
        assert_eq!(left.len(), 150);
        assert_eq!(&left[..100], &ips[..100]);
        assert_eq!(&left[100..], &ips[550..]);
        assert!(built.lookup(ips[300], ips[300]).is_null());

        let (first, led_to) = built.remove_range(ips[0], ips[99], |_| ());
        assert_eq!(built.records(), 50);
        // The emptied first group is out of the list, alone, but a reader
        // that was on it would have gone on to the group after it.
        let g = first.first().unwrap();
        assert_eq!(g.len(), 0);
        assert!(g.following().is_none());
        assert!(!built.first_ptr().is_null() && led_to == built.first_ptr());

        let (rest, _) = built.remove_range(0, u64::MAX, |_| ());
        assert_eq!(built.records(), 0);
        // Every group went; each chain is freed when it goes.
        assert!(built.first().is_none() && rest.first().is_some());
    }

    #[test]
    fn the_shadow_comparator_sees_each_difference() {
        use crate::{
            kside::shadow::compare,
            rfcore::{
                record::Update,
                update::Facts, //
            },
        };
        FtraceLocked::with(|lock| {
            // A record in the NOP state with one user: enabling makes a call.
            let mut raw = bindings::dyn_ftrace {
                ip: crate::kside::abi::c_word(0x1000),
                flags: 1,
                ..Default::default()
            };
            let rec = Rec::from_mut(&mut raw, lock);
            let right = decide(rec.flags(), true);
            assert_eq!(right.update, Update::MakeCall);
            let facts = Facts {
                ip: rec.ip(),
                flags: rec.flags(),
                new: Some(crate::kside::shadow::c_select_addr(rec, true)),
                curr: Some(crate::kside::shadow::c_select_addr(rec, false)),
                unique: None,
                set: None,
            };
            // The truth: nothing differs.
            assert!(!compare(rec, true, &right, Some(&facts)).any());
            // A wrong update, wrong flags, a wrong target: each is seen.
            let mut wrong = right;
            wrong.update = Update::Ignore;
            assert!(compare(rec, true, &wrong, Some(&facts)).decision);
            let mut wrong = right;
            wrong.flags = RecFlags::from_raw(right.flags.raw() ^ 1);
            assert!(compare(rec, true, &wrong, None).decision);
            let mut moved = facts;
            moved.new = moved.new.map(|a| a.wrapping_add(4));
            let d = compare(rec, true, &right, Some(&moved));
            assert!(d.targets && !d.decision);
            let mut moved = facts;
            moved.curr = moved.curr.map(|a| a.wrapping_add(4));
            assert!(compare(rec, true, &right, Some(&moved)).targets);
            // A target the plan did not need is not gathered, nor compared.
            let mut unasked = moved;
            unasked.curr = None;
            assert!(!compare(rec, true, &right, Some(&unasked)).any());
        });
    }

    #[test]
    fn the_registry_refuses_as_7_2_and_leaves_the_list_alone() {
        use crate::kside::registry;
        use kernel::error::code::{
            EINVAL,
            EPERM, //
        };
        FtraceLocked::with(|lock| {
            let head = crate::kside::registry::trace_function(lock);
            // A deleted ops may not register again.
            let mut deleted = bindings::ftrace_ops {
                flags: bindings::FTRACE_OPS_FL_DELETED as usize,
                ..Default::default()
            };
            let ops = Ops::from_mut(&mut deleted, lock);
            assert_eq!(
                registry::register(ops, lock).map_err(|e| e.to_errno()),
                Err(EINVAL.to_errno())
            );
            // An enabled ops that is not on the list cannot leave it.
            let mut stray = bindings::ftrace_ops {
                flags: bindings::FTRACE_OPS_FL_ENABLED as usize,
                ..Default::default()
            };
            let ops = Ops::from_mut(&mut stray, lock);
            assert_eq!(
                registry::unregister(ops, lock).map_err(|e| e.to_errno()),
                Err(EPERM.to_errno())
            );
            // Neither touched the list, and the shared callers' choice is the
            // one the kernel's C code makes from it.
            assert_eq!(registry::trace_function(lock), head);
            assert_eq!(crate::kside::shadow::c_trace_function(lock), head);
        });
    }

    #[test]
    fn lock_proofs_need_the_lock() {
        use crate::kside::lock::{
            CMutex,
            FtraceLocked,
            FtraceMutex, //
        };
        let ftrace_lock_mine = FtraceMutex::mine;
        // Nobody holds ftrace_lock for the test, so there is no proof...
        assert!(!ftrace_lock_mine());
        FtraceLocked::with(|_lock| {
            // ...until this task takes it...
            assert!(ftrace_lock_mine());
            assert_eq!(FtraceLocked::held(|_| 7), Some(7));
        });
        // ...and none once it let it go.
        assert!(!ftrace_lock_mine());
    }

    /// Issue 55, review item 4: a call that finds the state lent already
    /// used to be dropped without a word, leaving what it was to change
    /// undone (for the site sets, a stale set). Now the miss is kept and
    /// the owner's reset runs when the lending closure returns.
    #[test]
    fn a_nested_state_call_resets_the_state() {
        use crate::kside::lock::FtraceState;
        fn zero(v: &mut u32) {
            *v = 0;
        }
        static CELL: FtraceState<u32> = FtraceState::new(7, zero);
        FtraceLocked::with(|lock| {
            let outer = CELL.with(lock, |v| {
                *v = 9;
                let nested = CELL.with(lock, |v| *v = 5);
                (nested.is_none(), CELL.missed(lock))
            });
            assert_eq!(outer, Some((true, true)));
            // Reset when the outer closure returned, not left at 9.
            assert_eq!(CELL.with(lock, |v| *v), Some(0));
            assert!(!CELL.missed(lock));
            // A call that nests nothing changes nothing else.
            assert_eq!(CELL.with(lock, |v| core::mem::replace(v, 3)), Some(0));
            assert_eq!(CELL.with(lock, |v| *v), Some(3));
        });
    }

    #[test]
    fn x86_call_encoding() {
        // rel32 is the distance from the end of the 5-byte instruction.
        let ip = 0xffff_ffff_8100_0000u64;
        assert_eq!(
            encode_call(ip, 0xffff_ffff_8123_4567, false),
            Ok([0xe8, 0x62, 0x45, 0x23, 0x00])
        );
        // A jump when bit 0 selects it.
        assert_eq!(
            encode_call(ip, 0xffff_ffff_8123_4567, true),
            Ok([0xe9, 0x61, 0x45, 0x23, 0x00])
        );
        // One byte beyond the rel32 range, and no target.
        let far = ip + 5 - (1 << 31) - 1;
        assert_eq!(
            encode_call(ip, far, false),
            Err(EncodeError::OutOfRange { ip, target: far })
        );
        assert_eq!(encode_call(ip, 0, false), Err(EncodeError::NoTarget { ip }));
    }

    #[test]
    fn batch_direct_interface_keeps_the_table_and_the_ops() {
        // The line of the first check that did not hold.
        #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
        assert_eq!(super::batch_direct_cases(), None);
    }
}

/// Notes the line of the first condition that does not hold, for checks
/// made while a lock is held: a failed KUnit assertion ends the test
/// without unwinding, so the lock would stay taken and the tests after it
/// would hang.
macro_rules! expect {
    ($first:ident, $cond:expr) => {
        if !($cond) && $first.is_none() {
            $first = Some(line!());
        }
    };
}

/// x86: a fake call site that holds an INT3, not the NOP its record says:
/// the hooks refuse it before any write.
#[cfg(CONFIG_X86_64)]
fn wrong_bytes_are_refused() -> Option<u32> {
    use crate::{
        kside::abi::word,
        kside::arch::{
            make_call,
            make_nop, //
        },
        kside::module::Module, //
        kside::record::Rec,
    };
    use kernel::{
        bindings,
        sync::atomic::Relaxed, //
    };

    // A fake call site: not the NOP a record in the NOP state implies.
    let mut site = [0xccu8, 0x90, 0x90, 0x90, 0x90];
    let ip = site.as_mut_ptr() as usize;
    let mut rec = bindings::dyn_ftrace {
        ip,
        flags: 0,
        ..Default::default()
    };
    let target = ip + 0x1000;
    let failures = crate::kside::stats::STATS.failures.load(Relaxed);
    // Checked after the lock is dropped (`expect!`).
    let mut bad = None;
    crate::kside::lock::FtraceLocked::with(|lock| {
        // The Rust hook reads the site, finds no NOP and refuses, before
        // any write is attempted.
        let ret = make_call(Rec::from_mut(&mut rec, lock), word(target));
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, site == [0xcc, 0x90, 0x90, 0x90, 0x90]);
        expect!(
            bad,
            crate::kside::stats::STATS.failures.load(Relaxed) - failures == 1
        );
        // The same for making a NOP out of a call that is not there.
        let ret = make_nop(
            Module::core_kernel(),
            Rec::from_mut(&mut rec, lock),
            word(target),
            false,
        );
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, site == [0xcc, 0x90, 0x90, 0x90, 0x90]);
    });
    bad
}

/// arm64: a fake patch site (literal, `MOV X9, LR`, then a `BRK` where the
/// record says `NOP`): the hooks refuse it before any store, the literal
/// included.
#[cfg(CONFIG_ARM64)]
fn wrong_bytes_are_refused() -> Option<u32> {
    use crate::{
        kside::abi::word,
        kside::arch::{
            make_call,
            make_nop, //
        },
        kside::module::Module,
        kside::record::Rec,
        rfcore::arch::arm64::MOV_X9_LR, //
    };
    use kernel::{
        bindings,
        sync::atomic::Relaxed, //
    };

    #[repr(C, align(8))]
    struct FakeSite {
        literal: u64,
        mov: u32,
        slot: u32,
    }
    const BRK: u32 = 0xd420_0000;
    let mut site = FakeSite {
        literal: 0x1234,
        mov: MOV_X9_LR,
        slot: BRK,
    };
    let ip = core::ptr::addr_of_mut!(site.slot) as usize;
    let mut rec = bindings::dyn_ftrace {
        ip,
        flags: (bindings::FTRACE_FL_ENABLED | 1) as usize,
        ..Default::default()
    };
    let target = ip + 0x1000;
    let failures = crate::kside::stats::STATS.failures.load(Relaxed);
    // Checked after the lock is dropped (`expect!`).
    let mut bad = None;
    crate::kside::lock::FtraceLocked::with(|lock| {
        let unchanged = |s: &FakeSite| {
            // SAFETY: reads of our own stack object.
            unsafe {
                core::ptr::read_volatile(&s.literal) == 0x1234
                    && core::ptr::read_volatile(&s.mov) == MOV_X9_LR
                    && core::ptr::read_volatile(&s.slot) == BRK
            }
        };
        let ret = make_call(Rec::from_mut(&mut rec, lock), word(target));
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, unchanged(&site));
        expect!(
            bad,
            crate::kside::stats::STATS.failures.load(Relaxed) - failures == 1
        );
        let ret = make_nop(
            Module::core_kernel(),
            Rec::from_mut(&mut rec, lock),
            word(target),
            false,
        );
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, unchanged(&site));
    });
    bad
}

/// riscv64: a fake patch site in kernel data (within the reach of the fixed
/// `auipc`): with an `ebreak` where the record says `nop` or `jalr`, or
/// without its fixed `auipc`, the hooks refuse it before any store, the
/// literal included.
#[cfg(CONFIG_RISCV)]
fn wrong_bytes_are_refused() -> Option<u32> {
    use crate::{
        kside::abi::word,
        kside::arch::{
            make_call,
            make_nop,
            KernelArch,
            Native, //
        },
        kside::module::Module,
        kside::record::Rec,
        rfcore::{
            arch::riscv64::{
                fixed_auipc,
                EBREAK,
                NOP, //
            },
            flags::RecFlags,
            record::{
                Decision,
                Update, //
            },
            update::{
                Arch,
                Facts,
                Failure,
                Insn, //
            },
        },
    };
    use kernel::{
        bindings,
        sync::atomic::{
            Atomic,
            Relaxed, //
        }, //
    };

    #[repr(C, align(8))]
    struct FakeSite {
        literal: Atomic<u64>,
        auipc: Atomic<u32>,
        slot: Atomic<u32>,
    }
    static SITE: FakeSite = FakeSite {
        literal: Atomic::new(0x1234),
        auipc: Atomic::new(0),
        slot: Atomic::new(0),
    };
    let ip = core::ptr::from_ref(&SITE.slot) as usize;
    let caller = crate::kside::select::shared_caller(false);
    // Kernel data is within the reach of ftrace_caller.
    let auipc = fixed_auipc(ip as u64, caller);
    if auipc.is_err() {
        return Some(line!());
    }
    let auipc = auipc.unwrap_or(NOP);
    // Checked after the lock is dropped (`expect!`).
    let mut bad = None;
    let failures = crate::kside::stats::STATS.failures.load(Relaxed);
    crate::kside::lock::FtraceLocked::with(|lock| {
        let target = crate::kside::abi::c_word(caller);
        // Updated already, as the kernel updates a record before the hook: one
        // ops, enabled (the literal is to hold the list ops).
        let enabled = (bindings::FTRACE_FL_ENABLED | 1) as usize;
        let mut rec = bindings::dyn_ftrace {
            ip,
            flags: enabled,
            ..Default::default()
        };
        let unchanged = |auipc: u32, slot: u32| {
            SITE.literal.load(Relaxed) == 0x1234
                && SITE.auipc.load(Relaxed) == auipc
                && SITE.slot.load(Relaxed) == slot
        };
        // The slot holds a breakpoint, not the nop a call is made from: the
        // arch's check says so with both words, and the hook refuses.
        SITE.auipc.store(auipc, Relaxed);
        SITE.slot.store(EBREAK, Relaxed);
        let facts = Facts {
            ip: ip as u64,
            flags: RecFlags::from_raw(0),
            curr: None,
            new: Some(caller),
            unique: None,
            set: None,
        };
        let decision = Decision {
            update: Update::MakeCall,
            flags: RecFlags::from_raw(enabled as u64),
        };
        let arch = &mut Native::for_pass(lock, crate::kside::arch::MaySleep::NO);
        let change = arch.plan(&facts, &decision);
        expect!(bad, change.is_ok());
        if let Ok(change) = change {
            let want = Err(Failure::Mismatch {
                expected: Insn::word(NOP),
                actual: Insn::word(EBREAK),
            });
            expect!(bad, arch.check(&change) == want);
        }
        let ret = make_call(Rec::from_mut(&mut rec, lock), word(target));
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, unchanged(auipc, EBREAK));
        expect!(
            bad,
            crate::kside::stats::STATS.failures.load(Relaxed) - failures == 1
        );
        // Nor is it the `jalr` an enabled record's call is removed from.
        let ret = make_nop(
            Module::core_kernel(),
            Rec::from_mut(&mut rec, lock),
            word(target),
            false,
        );
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, unchanged(auipc, EBREAK));
        // The slot is right but the fixed `auipc` is missing: refused before
        // the literal store too.
        SITE.auipc.store(NOP, Relaxed);
        SITE.slot.store(NOP, Relaxed);
        if let Ok(change) = arch.plan(&facts, &decision) {
            let want = Err(Failure::Mismatch {
                expected: Insn::word(auipc),
                actual: Insn::word(NOP),
            });
            expect!(bad, arch.check(&change) == want);
        }
        let ret = make_call(Rec::from_mut(&mut rec, lock), word(target));
        expect!(bad, ret == kernel::error::code::EINVAL.to_errno());
        expect!(bad, unchanged(NOP, NOP));
    });
    bad
}

/// A hash of `(site, target)` entries for the batch direct interface,
/// freed on drop.
///
/// # Invariants
///
/// `.0` is a hash of ours, which the interface only reads.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
struct BatchHash(*mut kernel::bindings::ftrace_hash);

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl BatchHash {
    fn of(entries: &[(usize, usize)]) -> Option<Self> {
        use kernel::bindings;
        // SAFETY: allocates a hash of four buckets, or fails.
        let hash = unsafe { bindings::alloc_ftrace_hash(2) };
        if hash.is_null() {
            return None;
        }
        // INVARIANT: just allocated.
        let hash = BatchHash(hash);
        for &(ip, to) in entries {
            // SAFETY: a hash of ours, published nowhere.
            let e = unsafe {
                bindings::add_ftrace_hash_entry_direct(hash.0, ip as c_ulong, to as c_ulong)
            };
            if e.is_null() {
                return None;
            }
        }
        Some(hash)
    }
}

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl Drop for BatchHash {
    fn drop(&mut self) {
        // SAFETY: ours (type invariants), and no call holds it any more.
        unsafe { kernel::bindings::free_ftrace_hash(self.0) };
    }
}

/// The batch direct interface (`update_ftrace_direct_add()`, `_del()`,
/// `_mod()`, through the kernel's own entry points) on two functions of
/// `c/rftrace_kunit_sites.c` that nothing calls, with two targets: the
/// cases of the single interface (register, refuse a function that has a
/// target, add to a registered ops, retarget, refuse a delete with the
/// wrong target, delete, unregister with the last function, refuse on an
/// ops that is gone, register again), checked on the direct-functions
/// table and the ops' flags. The line of the first check that does not
/// hold, or `None`.
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
fn batch_direct_cases() -> Option<u32> {
    use kernel::{
        alloc::{
            flags::GFP_KERNEL,
            KBox, //
        },
        bindings,
        error::code::EINVAL, //
    };
    let mut first = None;
    // The call sites of two functions of the kernel, looked up in the
    // record table.
    let site = |addr: usize| crate::kside::shim::ftrace_location(addr as c_ulong) as usize;
    let (a, b) = (
        site(bindings::rftrace_kunit_site_a as *const () as usize),
        site(bindings::rftrace_kunit_site_b as *const () as usize),
    );
    let t1 = bindings::rftrace_kunit_target_1 as *const () as usize;
    let t2 = bindings::rftrace_kunit_target_2 as *const () as usize;
    expect!(first, a != 0 && b != 0);
    if first.is_some() {
        return first;
    }
    // The target the direct-functions table gives a function
    // (`ftrace_find_rec_direct()`).
    let direct = |ip: usize| crate::kside::select::rftrace_shim_direct(ip as c_ulong) as usize;
    let (Some(a1), Some(a2), Some(b2), Some(empty)) = (
        BatchHash::of(&[(a, t1)]),
        BatchHash::of(&[(a, t2)]),
        BatchHash::of(&[(b, t2)]),
        BatchHash::of(&[]),
    ) else {
        return Some(line!());
    };
    let Ok(ops) = KBox::new(bindings::ftrace_ops::default(), GFP_KERNEL) else {
        return Some(line!());
    };
    let ops = KBox::into_raw(ops);
    // SAFETY: `ops` is ours and live until the end; the interface owns its
    // flags while it is registered, and this reads them between calls.
    let enabled = || unsafe { (*ops).flags } & bindings::FTRACE_OPS_FL_ENABLED as usize != 0;
    // SAFETY: a live ops and live hashes, neither lock held.
    let add = |h: &BatchHash| unsafe { bindings::update_ftrace_direct_add(ops, h.0) };
    // SAFETY: as above.
    let del = |h: &BatchHash| unsafe { bindings::update_ftrace_direct_del(ops, h.0) };
    // SAFETY: as above; `true`: the call takes direct_mutex.
    let retarget = |h: &BatchHash| unsafe { bindings::update_ftrace_direct_mod(ops, h.0, true) };
    let einval = EINVAL.to_errno();

    expect!(first, add(&empty) == einval && !enabled());
    expect!(first, add(&a1) == 0 && enabled() && direct(a) == t1);
    // A function with a target already.
    expect!(first, add(&a2) == einval && direct(a) == t1);
    // Another function joins the registered ops.
    expect!(first, add(&b2) == 0 && direct(b) == t2 && direct(a) == t1);
    expect!(
        first,
        retarget(&a2) == 0 && direct(a) == t2 && direct(b) == t2
    );
    // A delete must name the target the table has.
    expect!(first, del(&a1) == einval && direct(a) == t2);
    expect!(first, del(&a2) == 0 && direct(a) == 0 && enabled());
    // The last function: the ops is unregistered.
    expect!(first, del(&b2) == 0 && direct(b) == 0 && !enabled());
    expect!(first, del(&b2) == einval && retarget(&b2) == einval);
    // And can be registered again.
    expect!(first, add(&a1) == 0 && enabled() && direct(a) == t1);
    expect!(first, del(&a1) == 0 && direct(a) == 0 && !enabled());
    if !enabled() {
        // SAFETY: from `KBox::into_raw()` above, and unregistered: after
        // the grace periods the last delete waited for, nothing uses it.
        drop(unsafe { KBox::from_raw(ops) });
    }
    first
}
