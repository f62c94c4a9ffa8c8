// A value kept under ftrace_lock is written only with the proof.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::FtraceCell;

static COUNT: FtraceCell<u32> = FtraceCell::new(0);

fn main() {
    COUNT.set(1);
}
