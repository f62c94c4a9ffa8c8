// SPDX-License-Identifier: GPL-2.0

//! What `rust/kside/lock.rs` needs of the kernel crate, on the host: the
//! shim's lock functions and owner questions (one flag per mutex, owned by whoever set it:
//! the tests are single-threaded) and `warn_on!`.

/// The shim's lock functions, as bindgen declares them (`unsafe extern
/// "C"`), over a flag per mutex.
#[allow(missing_docs, clippy::missing_safety_doc)]
pub mod bindings {
    use core::sync::atomic::{
        AtomicBool,
        Ordering::SeqCst, //
    };

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
