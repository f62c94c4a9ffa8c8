// Text is written only from a change the architecture checked: a plain
// planned change is not accepted by `Arch::write`.
use rftrace::rfcore::update::{Arch, Failure};

fn poke<A: Arch>(arch: &mut A, change: A::Change) -> Result<(), Failure> {
    arch.write(&change, &mut |_| {})
}

fn main() {}
