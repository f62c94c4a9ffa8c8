// SPDX-License-Identifier: GPL-2.0

//! The module a call-site list, a record group or a site belongs to, or
//! the core kernel ([`Module`], the view C passes as a `struct module *`),
//! and the text its call sites may point into.
//!
//! A leaf module with `unsafe` code: the foreign declarations of the C
//! functions that read a module's layout.

use core::marker::PhantomData;

use kernel::{
    bindings,
    ffi::c_ulong, //
};

use crate::{
    kside::abi::word,
    rfcore::table::{
        Span,
        Text, //
    },
};

/// The module a call-site list, a record group or a site belongs to, or
/// the core kernel.
///
/// # Invariants
///
/// `ptr` is null (the core kernel) or a module that stays alive for `'a`.
///
/// An entry point takes one where its prototype has a `struct module *`
/// (`kside::abi`): the header asks the caller for these invariants.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct Module<'a> {
    ptr: *mut bindings::module,
    _alive: PhantomData<&'a bindings::module>,
}

crate::kside::abi::lowered_as!(Module<'static> => *mut bindings::module);

impl<'a> Module<'a> {
    /// The core kernel.
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) const fn core_kernel() -> Self {
        // INVARIANT: null.
        Module {
            ptr: core::ptr::null_mut(),
            _alive: PhantomData,
        }
    }

    /// The raw pointer (null for the core kernel), for C calls.
    pub(crate) fn as_ptr(self) -> *mut bindings::module {
        self.ptr
    }

    /// The text the module's call-site list may point into: the core
    /// kernel's text and init text, or the module's `MOD_TEXT` and
    /// `MOD_INIT_TEXT` (as `is_kernel_text()`, `is_kernel_inittext()` and
    /// `within_module_mem_type()` see them; the vsyscall page, which
    /// `is_kernel_text()` also counts, holds no call site). Fetched once
    /// per list.
    pub(crate) fn text(self) -> Text {
        let mut r: [c_ulong; 4] = [0; 4];
        rftrace_shim_text_ranges(self, &mut r);
        Text {
            module: !self.ptr.is_null(),
            spans: [
                Span::new(word(r[0]), word(r[1])),
                Span::new(word(r[2]), word(r[3])),
            ],
        }
    }
}

/// The text the core kernel's call-site list may point into.
#[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
pub(crate) fn core_kernel_text() -> Text {
    Module::core_kernel().text()
}

// Why they are `safe`: each function is defined by the C shim
// (`c/rftrace_shim*.c`) with exactly this prototype (checked against
// bindgen's below), and asks nothing but what its arguments' types prove:
// each reads the module a `Module` proves alive (or nothing, for the core
// kernel), and writes only what its `&mut` argument lends.
//
// The lint looks through the view's pointer into the C struct, which
// holds empty placeholders (as in C); only a pointer crosses, as in
// bindgen's declaration of the same function.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// The text the call sites of `module` may point into: four addresses
    /// (text start, end, init text start, end) stored in `ranges`.
    pub(crate) safe fn rftrace_shim_text_ranges(module: Module<'_>, ranges: &mut [c_ulong; 4]);
    /// Whether `addr` is in the text or data of `module` (never, for the
    /// core kernel).
    pub(crate) safe fn rftrace_shim_within_module(module: Module<'_>, addr: c_ulong) -> bool;
}

crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_text_ranges,
    rftrace_shim_text_ranges,
    fn(Module<'static>, &'static mut [c_ulong; 4]) -> ()
);
crate::kside::abi::same_prototype!(
    bindings::rftrace_shim_within_module,
    rftrace_shim_within_module,
    fn(Module<'static>, c_ulong) -> bool
);
