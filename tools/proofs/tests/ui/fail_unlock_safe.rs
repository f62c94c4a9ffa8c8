// Releasing the C mutex by hand is an `unsafe` call.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::{CMutex, FtraceLocked, FtraceMutex};

fn main() {
    FtraceLocked::with(|_lock| {
        (FtraceMutex::UNLOCK)();
    });
}
