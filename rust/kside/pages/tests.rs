// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the record table: the lookup of a record from C's
//! pointer and from its ip, the lookup by address against C's, and a private chain built,
//! looked up and taken apart.

use kernel::prelude::*;

#[kunit_tests(rftrace_pages)]
mod kunit {
    use kernel::bindings;

    use crate::kside::lock::FtraceLocked;

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
    fn every_record_is_found_from_its_ip() {
        use crate::kside::pages::{
            Cursor,
            Finder, //
        };
        // Counted under the lock, asserted after it (see above).
        let (mut found, mut wrong, mut between) = (0u32, 0u32, 0u32);
        FtraceLocked::with(|lock| {
            // In table order (the hint moves on), and each one alone.
            let mut finder = Finder::new(lock);
            let mut at = Cursor::first(lock);
            while let Some(c) = at {
                let rec = c.rec();
                let alone = Finder::new(lock).find(rec.ip()).map(|r| r.as_ptr());
                match finder.find(rec.ip()) {
                    Some(r) if r.as_ptr() == rec.as_ptr() && alone == Some(r.as_ptr()) => {
                        found += 1
                    }
                    _ => wrong += 1,
                }
                // An address inside a site is not a record's ip.
                if finder.find(rec.ip() + 1).is_some() {
                    between += 1;
                }
                at = c.next();
            }
        });
        assert!(found > 10_000);
        assert_eq!(wrong, 0);
        assert_eq!(between, 0);
    }

    #[test]
    fn a_finder_finds_ips_below_its_last_group() {
        use crate::kside::pages::{
            Cursor,
            Finder, //
        };
        let ok = FtraceLocked::with(|lock| {
            let first = Cursor::first(lock).map(|c| c.rec());
            let mut last = None;
            let mut at = Cursor::first(lock);
            while let Some(c) = at {
                last = Some(c.rec());
                at = c.next();
            }
            let (Some(first), Some(last)) = (first, last) else {
                return false;
            };
            // The last record, then the first: the second search starts in
            // the last group and must start again from the first.
            let mut finder = Finder::new(lock);
            let a = finder.find(last.ip()).map(|r| r.as_ptr());
            let b = finder.find(first.ip()).map(|r| r.as_ptr());
            a == Some(last.as_ptr()) && b == Some(first.as_ptr())
        });
        assert!(ok);
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
}
