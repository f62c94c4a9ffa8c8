// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the registry: what it refuses, and that a refusal leaves
//! the ops list and the shared callers' choice alone.

use kernel::prelude::*;

#[kunit_tests(rftrace_registry)]
mod kunit {
    use kernel::bindings;

    use crate::{
        kside::lock::FtraceLocked,
        kside::ops::Ops, //
    };

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
}
