// Nor can a change be dressed up as checked.
use rftrace::rfcore::update::Checked;
use rftrace::rfcore::arch::x86::X86Change;

fn dress(change: X86Change) -> Checked<X86Change> {
    Checked { change }
}

fn main() {
    let _ = dress;
}
