// The lawful uses: a proof inside the closure that made it, nested
// proofs of a lock held, a cell read and written with the proof, a
// checked change written.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::{FtraceCell, FtraceLocked, TextLocked};

static COUNT: FtraceCell<u32> = FtraceCell::new(0);

fn main() {
    let n = FtraceLocked::with(|lock| {
        COUNT.set(lock, COUNT.get(lock) + 1);
        // A C callee of ours would ask again: the lock is held.
        let again = FtraceLocked::held(|inner| COUNT.get(inner));
        assert_eq!(again, Some(1));
        TextLocked::with(|_text| COUNT.get(lock))
    });
    assert_eq!(n, 1);
    // Released: no proof without the lock.
    assert_eq!(FtraceLocked::held(|_| ()), None);
}
