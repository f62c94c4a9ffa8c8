// A value kept under ftrace_lock and lent by FtraceState::with() cannot
// leave the closure: the &mut would outlive the lock.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::{
    FtraceLocked,
    FtraceState, //
};

static SETS: FtraceState<u32> = FtraceState::new(0, |v| *v = 0);

fn main() {
    let kept = FtraceLocked::with(|lock| SETS.with(lock, |v| v));
    let _ = kept;
}
