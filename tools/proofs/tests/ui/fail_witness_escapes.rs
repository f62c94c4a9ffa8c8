// A record handle carries a witness of its lock proof in place of the
// reference (so that it passes to C as one pointer): the witness is good
// for the proof's lifetime only, as the proof is.
#![allow(unexpected_cfgs)]

use kernel::shim;

#[path = "../../../../rust/kside/lock.rs"]
#[allow(dead_code)]
mod lock;

use lock::{
    FtraceLocked,
    FtraceMutex,
    Witness, //
};

fn keep() -> Option<Witness<'static, FtraceMutex>> {
    FtraceLocked::held(|lock| lock.witness())
}

fn main() {
    let _ = keep();
}
