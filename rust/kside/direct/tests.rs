// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the batch direct interface, through the kernel's own
//! entry points.

use kernel::prelude::*;

#[kunit_tests(rftrace_direct)]
mod kunit {

    #[test]
    fn batch_direct_interface_keeps_the_table_and_the_ops() {
        // The line of the first check that did not hold.
        #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
        assert_eq!(super::batch_direct_cases(), None);
    }
}

use crate::kside::tests::check;

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
    check!(first, a != 0 && b != 0);
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

    check!(first, add(&empty) == einval && !enabled());
    check!(first, add(&a1) == 0 && enabled() && direct(a) == t1);
    // A function with a target already.
    check!(first, add(&a2) == einval && direct(a) == t1);
    // Another function joins the registered ops.
    check!(first, add(&b2) == 0 && direct(b) == t2 && direct(a) == t1);
    check!(
        first,
        retarget(&a2) == 0 && direct(a) == t2 && direct(b) == t2
    );
    // A delete must name the target the table has.
    check!(first, del(&a1) == einval && direct(a) == t2);
    check!(first, del(&a2) == 0 && direct(a) == 0 && enabled());
    // The last function: the ops is unregistered.
    check!(first, del(&b2) == 0 && direct(b) == 0 && !enabled());
    check!(first, del(&b2) == einval && retarget(&b2) == einval);
    // And can be registered again.
    check!(first, add(&a1) == 0 && enabled() && direct(a) == t1);
    check!(first, del(&a1) == 0 && direct(a) == 0 && !enabled());
    if !enabled() {
        // SAFETY: from `KBox::into_raw()` above, and unregistered: after
        // the grace periods the last delete waited for, nothing uses it.
        drop(unsafe { KBox::from_raw(ops) });
    }
    first
}
