// A proof belongs to the task that holds the lock: it cannot be handed
// to another thread.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::FtraceLocked;

fn main() {
    FtraceLocked::with(|lock| {
        std::thread::scope(|s| {
            s.spawn(move || {
                let _held = lock;
            });
        });
    });
}
