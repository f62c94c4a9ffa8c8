// SPDX-License-Identifier: GPL-2.0

//! Fuzz target: the ops registry's list, admission and shared-caller
//! choice (`rfcore::registry`) through a sequence of joins and leaves
//! decoded from the input bytes, checked against the model of
//! `rust/tests/registry.rs` after every step. A difference panics.

#![no_main]

// The model and the decoder are the host test modules, compiled here as
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

#[allow(dead_code)]
#[path = "../../rust/tests/registry.rs"]
mod registry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    registry::lifecycle(&mut sim::Bytes::new(data), u32::MAX);
});
