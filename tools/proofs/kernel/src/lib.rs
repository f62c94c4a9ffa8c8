// SPDX-License-Identifier: GPL-2.0

//! What `rust/kside/lock.rs` and `rust/kside/abi.rs` need of the kernel
//! crate, on the host: the shim's lock functions and owner questions (one
//! flag per mutex, owned by whoever set it: the tests are
//! single-threaded), `warn_on!`, the C types and the few C structs the
//! views point to (opaque: the views only carry pointers).

/// The shim's lock functions, as bindgen declares them (`unsafe extern
/// "C"`), over a flag per mutex.
#[allow(missing_docs, clippy::missing_safety_doc)]
pub mod bindings {
    use core::sync::atomic::{
        AtomicBool,
        Ordering::SeqCst, //
    };

    /// A call-site record.
    #[allow(non_camel_case_types)]
    #[repr(C)]
    pub struct dyn_ftrace {
        pub ip: crate::ffi::c_ulong,
        pub flags: crate::ffi::c_ulong,
    }

    /// Opaque C structs.
    macro_rules! opaque {
        ($($name:ident),*) => {
            $(#[allow(non_camel_case_types)] #[repr(C)] pub struct $name { _p: [u8; 0] })*
        };
    }
    opaque!(ftrace_ops, ftrace_hash, ftrace_page);

    /// An ops' function.
    #[allow(non_camel_case_types)]
    pub type ftrace_func_t = Option<
        unsafe extern "C" fn(
            crate::ffi::c_ulong,
            crate::ffi::c_ulong,
            *mut ftrace_ops,
            *mut core::ffi::c_void,
        ),
    >;

    pub(crate) static FTRACE: AtomicBool = AtomicBool::new(false);
    pub(crate) static TEXT: AtomicBool = AtomicBool::new(false);

    pub unsafe extern "C" fn rftrace_shim_ftrace_lock() {
        assert!(!FTRACE.swap(true, SeqCst), "ftrace_lock taken twice");
    }
    pub unsafe extern "C" fn rftrace_shim_ftrace_unlock() {
        assert!(FTRACE.swap(false, SeqCst), "ftrace_lock released unheld");
    }
    pub unsafe extern "C" fn rftrace_shim_text_lock() {
        assert!(!TEXT.swap(true, SeqCst), "text_mutex taken twice");
    }
    pub unsafe extern "C" fn rftrace_shim_text_unlock() {
        assert!(TEXT.swap(false, SeqCst), "text_mutex released unheld");
    }
}

/// The shim's functions `rust/kside/shim.rs` declares safe (the owner
/// questions), as `rust/kside/lock.rs` reaches them (`super::shim`: a test
/// file that includes `lock.rs` says `use kernel::shim;`).
pub mod shim {
    use crate::bindings::{
        FTRACE,
        TEXT, //
    };
    use core::sync::atomic::Ordering::SeqCst;

    pub extern "C" fn rftrace_shim_ftrace_lock_mine() -> bool {
        FTRACE.load(SeqCst)
    }
    pub extern "C" fn rftrace_shim_text_lock_mine() -> bool {
        TEXT.load(SeqCst)
    }
}

/// The C types, as the kernel crate defines them (`long` is `isize`).
#[allow(non_camel_case_types)]
pub mod ffi {
    pub use core::ffi::{
        c_char,
        c_int,
        c_uint,
        c_void, //
    };
    pub type c_long = isize;
    pub type c_ulong = usize;
}

/// The kernel's `warn_on!`: the condition, printed when true.
#[macro_export]
macro_rules! warn_on {
    ($cond:expr) => {{
        let cond = $cond;
        if cond {
            eprintln!("WARNING: {}", stringify!($cond));
        }
        cond
    }};
}

/// The kernel's `pr_err!`: printed to standard error.
#[macro_export]
macro_rules! pr_err {
    ($($arg:tt)*) => {
        eprint!($($arg)*)
    };
}
