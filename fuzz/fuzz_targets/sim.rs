// SPDX-License-Identifier: GPL-2.0

//! Fuzz target: the whole-kernel simulation of `rust/tests/sim.rs`, its
//! random choices decoded from the input bytes, checked against the
//! reference model after every step. A difference panics.

#![no_main]

// The simulation and the model are the host test modules, compiled here as
// they are in the test build; they reach the core as `crate::rfcore`.
use rftrace::rfcore;

#[allow(dead_code)]
#[path = "../../rust/tests/util.rs"]
mod util;

#[allow(dead_code)]
#[path = "../../rust/tests/sim_model.rs"]
mod sim_model;

#[allow(dead_code)]
#[path = "../../rust/tests/sim.rs"]
mod sim;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    sim::fuzz_one(data);
});
