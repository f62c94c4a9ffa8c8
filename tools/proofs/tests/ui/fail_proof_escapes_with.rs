// A proof kept past the closure that took the lock would open records
// after the lock is released.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::FtraceLocked;

fn main() {
    let mut kept = None;
    FtraceLocked::with(|lock| kept = Some(lock));
    let _ = kept;
}
