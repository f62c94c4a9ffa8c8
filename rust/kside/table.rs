// SPDX-License-Identifier: GPL-2.0

//! The kernel side of `rfcore::table`: the check of a call-site list
//! before records are made of it ([`scan_call_sites()`]), with what it
//! refused reported to C and the shadow check.
//!
//! A leaf module with `unsafe` code: the C call that reports a refused
//! site, and the foreign declaration of the one that reports the counts.

use kernel::{
    bindings,
    ffi::c_char, //
};

use crate::{
    kside::abi::c_word,
    kside::module::Module,
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::table::{
        self,
        Report,
        Skip, //
    },
};

// Why it is `safe`: the function is defined by the C shim
// (`c/rftrace_shim*.c`) with exactly this prototype (checked against
// bindgen's below), and asks nothing but what its arguments' types prove:
// it reads the module a `Module` proves alive (or nothing, for the core
// kernel) and the counts its `&` argument lends.
//
// The lint looks through the view's pointer into the C struct, which
// holds empty placeholders (as in C); only a pointer crosses, as in
// bindgen's declaration of the same function.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// Reports what the check of `module`'s call-site list refused
    /// (`counts` in the order of `RFTRACE_SCAN_*`).
    pub(crate) safe fn rftrace_shim_scan_report(
        module: Module<'_>,
        counts: &[u64; 8],
        unsorted: bool,
    );
}

crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_scan_report,
    rftrace_shim_scan_report,
    fn(Module<'static>, &'static [u64; 8], bool) -> ()
);

/// The order of the counts handed to `rftrace_shim_scan_report()` (the
/// C enum `RFTRACE_SCAN_*`; the shim asserts there are 8).
fn scan_counts(r: &Report) -> [u64; 8] {
    [
        r.total,
        r.kept,
        r.padding,
        r.weak,
        r.out_of_text,
        r.misaligned,
        r.duplicate,
        r.refused(),
    ]
}

/// Checks the call-site list `list` of `module` (the core kernel, or the
/// module being loaded) in place and reports what it refused;
/// `call_site`: the patch site of an entry, as the architecture computes
/// it (`kside::arch::call_site()`).
pub(crate) fn scan_locs(
    module: Module<'_>,
    list: &mut [u64],
    call_site: fn(u64) -> Option<u64>,
) -> Report {
    if list.is_empty() {
        return Report::default();
    }
    let text = module.text();
    let report = table::scan(list, &text, call_site);
    for (addr, skip) in report.first.iter() {
        let why: &core::ffi::CStr = match skip {
            Some(Skip::Duplicate) => c"duplicate of the entry before it",
            Some(Skip::Misaligned) => c"misaligned patch site",
            Some(Skip::OutOfText) => c"outside the module's text",
            Some(Skip::Padding | Skip::WeakLeftover) | None => continue,
        };
        // SAFETY: `why` is a NUL-terminated static string; the module (if
        // any) is alive (type invariants of `Module`).
        unsafe {
            bindings::rftrace_shim_refused_site(
                module.as_ptr(),
                why.as_ptr().cast::<c_char>(),
                c_word(*addr),
            )
        };
    }
    rftrace_shim_scan_report(module, &scan_counts(&report), report.unsorted);
    report
}

/// Checks the call-site list of the core kernel (`module` null) or of a
/// module before records are made of it: sorts it if needed and zeroes
/// the entries that must not become records (duplicates, misaligned
/// sites, addresses outside the text), reporting them. `list` is the
/// call-site list of `module` (or of the core kernel); `call_site`: the
/// patch site of an entry, as the architecture being built computes it.
pub(crate) fn scan_call_sites(
    module: Module<'_>,
    list: &mut [u64],
    call_site: fn(u64) -> Option<u64>,
) -> Report {
    let report = scan_locs(module, list, call_site);
    let refused = report.refused();
    bump(&STATS.sites_refused, refused);
    crate::kside::shadow::call_site_list(&report);
    report
}

#[cfg(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST)]
mod tests;
