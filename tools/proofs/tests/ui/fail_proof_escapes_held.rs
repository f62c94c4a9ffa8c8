// The same for a proof of a lock a C caller holds: it is good for the
// call only.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::FtraceLocked;

fn keep() -> Option<&'static FtraceLocked> {
    FtraceLocked::held(|lock| lock)
}

fn main() {
    let _ = keep();
}
