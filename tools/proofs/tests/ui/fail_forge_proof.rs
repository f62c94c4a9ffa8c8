// A proof cannot be made but by the lock module.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::FtraceLocked;

fn main() {
    let forged = FtraceLocked {
        _not_send: core::marker::PhantomData,
    };
    let _ = &forged;
}
