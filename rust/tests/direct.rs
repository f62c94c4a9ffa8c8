// SPDX-License-Identifier: GPL-2.0

//! The direct-call decisions (`rfcore::direct`) against the rules written
//! in the kernel-doc of `register_ftrace_direct()`,
//! `unregister_ftrace_direct()` and `modify_ftrace_direct()`: every
//! combination of the facts that matter, with the other flag bits set at
//! random.

use crate::rfcore::direct::{
    admit,
    admit_change,
    same_target,
    table_bits,
    Asking,
    Refusal,
    DIRECT,
    HASH_MAX_BITS,
    INITIALIZED, //
};
use crate::rfcore::registry::ops_fl;
use crate::tests::util::Rng;

/// The kernel's `MULTI_FLAGS` where the arch saves registers.
const MULTI: u64 = DIRECT | ops_fl::SAVE_REGS;

/// Bits that play no part in the decisions.
fn noise(rng: &mut Rng) -> u64 {
    rng.next_u64() & !(INITIALIZED | ops_fl::ENABLED | MULTI)
}

#[test]
fn register_asks_for_an_initialised_idle_ops_with_functions_and_nothing_of_its_own() {
    let mut rng = Rng::new(0xd1ec7);
    for bits in 0u32..32 {
        let (func, tramp, init, enabled, empty) = (
            bits & 1 != 0,
            bits & 2 != 0,
            bits & 4 != 0,
            bits & 8 != 0,
            bits & 16 != 0,
        );
        for _ in 0..64 {
            let mut flags = noise(&mut rng);
            if init {
                flags |= INITIALIZED;
            }
            if enabled {
                flags |= ops_fl::ENABLED;
            }
            let a = Asking {
                flags,
                has_func: func,
                has_trampoline: tramp,
                filter_empty: empty,
            };
            // The kernel-doc: -EINVAL when the ops was already registered
            // (it has a function, a trampoline, or is started), or has no
            // functions; and it must have been initialised.
            let ok = !func && !tramp && init && !enabled && !empty;
            let want = if ok { Ok(()) } else { Err(Refusal::Invalid) };
            assert_eq!(admit(&a), want, "{a:?}");
        }
    }
}

#[test]
fn only_a_started_direct_ops_may_be_stopped_or_retargeted() {
    let mut rng = Rng::new(0x5709);
    for multi in [MULTI, DIRECT | ops_fl::SAVE_REGS_IF_SUPPORTED] {
        for bits in 0u32..16 {
            let (init, enabled, direct, regs) =
                (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            for _ in 0..64 {
                let mut flags = noise(&mut rng) & !multi;
                if init {
                    flags |= INITIALIZED;
                }
                if enabled {
                    flags |= ops_fl::ENABLED;
                }
                if direct {
                    flags |= DIRECT;
                }
                if regs {
                    flags |= multi & !DIRECT;
                }
                let ok = init && enabled && direct && regs;
                let want = if ok { Ok(()) } else { Err(Refusal::Invalid) };
                assert_eq!(admit_change(flags, multi), want, "{flags:#x} {multi:#x}");
            }
        }
    }
}

#[test]
fn the_new_table_is_as_wide_as_its_entries_need_up_to_the_limit() {
    // fls(): the position of the highest set bit, 0 for 0.
    let fls = |n: u64| (0..64).rev().find(|b| n >> b & 1 == 1).map_or(0, |b| b + 1);
    let mut rng = Rng::new(0xb175);
    let mut cases: std::vec::Vec<(u64, u64)> = std::vec![
        (0, 0),
        (1, 0),
        (0, 1),
        (1, 1),
        (2, 2),
        (4095, 0),
        (4096, 0),
        (u64::MAX, 5)
    ];
    for _ in 0..2000 {
        cases.push((rng.next_u64() % 10_000, rng.next_u64() % 10_000));
    }
    for (a, t) in cases {
        let want = fls(a.saturating_add(t)).min(HASH_MAX_BITS);
        assert_eq!(table_bits(a, t), want, "{a} + {t}");
    }
}

#[test]
fn a_target_is_the_same_whether_it_jumps_or_calls_only_where_bit_0_marks_a_jump() {
    let mut rng = Rng::new(0x7a26);
    for _ in 0..2000 {
        let t = rng.next_u64() & !1;
        assert!(same_target(t, t | 1, true));
        assert!(!same_target(t, t | 1, false));
        assert!(same_target(t, t, false));
        let other = t ^ (1 << (1 + rng.next_u64() % 62));
        assert!(!same_target(t, other, true));
        assert!(!same_target(t, other, false));
    }
}
