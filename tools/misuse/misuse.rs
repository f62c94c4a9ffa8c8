// SPDX-License-Identifier: GPL-2.0

//! Programs that must not compile, against the kernel side as the kernel
//! builds it (the real `kernel` crate and bindings): each `misuse:`
//! block below is one hole of issue 37 that the types close, and
//! `scripts/misuse-check.sh` compiles this file into a copy of the crate
//! and requires, for every block, an error of the kind its marker names
//! at a line of that block, and no error anywhere else.
//!
//! A marker is a line `// misuse: NAME: TEXT`; the block runs to the next
//! marker. TEXT is what rustc's message for the block must contain.
//! rustc checks field privacy only once the crate has no type error, so
//! the blocks that forge a view are built in a second run of their own
//! (`--cfg misuse_late`), the others in the first.

#![allow(dead_code, unused_imports, unused_variables, unreachable_code)]

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::bindings;

use crate::{
    kside::arch::{
        common::MaySleep,
        Native, //
    },
    kside::{
        abi::{
            HashRef,
            Lent, //
        },
        filter::{
            Fresh,
            HashSlot,
            Installed, //
        },
        lock::{
            FtraceLocked,
            FtraceMutex,
            Witness, //
        },
        ops::{
            self,
            CallOps,
            Ops, //
        },
        pages::Group,
        shadow, //
    },
    rfcore::{
        flags::RecFlags,
        update::Arch, //
    },
};

// misuse: write-unchecked: mismatched types
// Hole 1: text is written only from a change the architecture checked.
#[cfg(not(misuse_late))]
fn write_unchecked(arch: &mut Native<'_>, change: <Native<'static> as Arch>::Change) {
    let _ = arch.write(&change, &mut |_| {});
}

// misuse: proof-escapes: lifetime may not live long enough
// Hole 2: a lock proof is good for the closure only.
#[cfg(not(misuse_late))]
fn proof_escapes() -> Option<&'static FtraceLocked> {
    FtraceLocked::held(|lock| lock)
}

// misuse: witness-escapes: lifetime may not live long enough
// Hole 2: nor is the witness a record handle carries.
#[cfg(not(misuse_late))]
fn witness_escapes() -> Option<Witness<'static, FtraceMutex>> {
    FtraceLocked::held(|lock| lock.witness())
}

// misuse: installed-escapes: lifetime may not live long enough
// Hole 3: a hash installed in an ops' slot borrows the slot's lock proof,
// so its undo() cannot run after the lock is gone.
#[cfg(not(misuse_late))]
fn installed_escapes<'s>(new: Fresh<'_>, slot: &HashSlot<'s>) -> Installed<'static> {
    new.install(slot)
}

// misuse: decision-unlocked: E0061
// Hole 4: the C decision writes ftrace_bug_type, which needs ftrace_lock.
#[cfg(not(misuse_late))]
fn decision_unlocked() {
    let _ = shadow::c_decision(0, RecFlags::from_raw(0), true);
}

// misuse: group-writes: E0624
// Hole 5: a group handle outside the table's writer cannot write.
#[cfg(not(misuse_late))]
fn group_writes(g: Group<'_>) {
    g.set_len(0);
}

// misuse: group-from-raw: E0133
// Hole 5: a handle made of a raw pointer, with a lifetime the caller picks,
// is a promise only unsafe code makes.
#[cfg(not(misuse_late))]
fn group_from_raw(p: *mut crate::kside::pages::FtracePage) -> Option<Group<'static>> {
    Group::from_raw(p)
}

// misuse: ops-from-raw: E0133
// Hole 5: the same for an ops.
#[cfg(not(misuse_late))]
fn ops_from_raw<'a>(p: *mut bindings::ftrace_ops, lock: &'a FtraceLocked) -> Option<Ops<'a>> {
    Ops::from_raw(p, lock)
}

// misuse: may-sleep: E0133
// Hole 5: cond_resched() between records only where C said the pass may
// sleep.
#[cfg(not(misuse_late))]
fn may_sleep() -> MaySleep {
    MaySleep::allowed()
}

// misuse: view-forged: E0451
// A view an entry point trusts cannot be made of any pointer.
#[cfg(misuse_late)]
fn view_forged() -> CallOps<'static> {
    CallOps {
        ptr: NonNull::dangling(),
        _call: PhantomData,
    }
}

// misuse: lent-forged: E0451
#[cfg(misuse_late)]
fn lent_forged() -> Lent<'static, u64> {
    Lent {
        ptr: NonNull::dangling(),
        _call: PhantomData,
    }
}

// misuse: hash-from-raw: E0133
#[cfg(not(misuse_late))]
fn hash_from_raw() -> Option<HashRef<'static>> {
    HashRef::from_raw(core::ptr::null_mut())
}

// misuse: lock-only-c-unguarded: E0603
// A C function whose one duty is a held lock is reachable only through
// its wrapper, which takes the proof.
#[cfg(not(misuse_late))]
fn lock_only_c_unguarded() {
    crate::kside::under_lock::ftrace_c_run_update_code(0);
}

// misuse: direct-ops-forged: E0451
// A direct ops under direct_mutex is a view only `CallOps::direct()`
// makes, with the proof.
#[cfg(misuse_late)]
fn direct_ops_forged() -> ops::DirectOps<'static> {
    ops::DirectOps {
        ptr: NonNull::dangling(),
        _lock: PhantomData,
    }
}

// misuse: stub-outside-scope: E0603
// The direct-call stub is registered only inside `with_stub()`, which
// stops it before the hash it reads can go.
#[cfg(not(misuse_late))]
fn stub_outside_scope(ops: ops::DirectOps<'static>) {
    crate::kside::direct::stub::of_direct(ops, 0);
}
