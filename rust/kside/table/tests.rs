// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the check of a call-site list against the kernel text.

use kernel::prelude::*;

#[kunit_tests(rftrace_table)]
mod kunit {
    use kernel::bindings;

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
}
