// No value releases the lock: the release guard of `with()` is private
// to the lock module, so a closure cannot make or drop one.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::FtraceLocked;

fn main() {
    FtraceLocked::with(|_lock| {
        drop(lock::Release::<lock::FtraceMutex>(core::marker::PhantomData));
    });
}
