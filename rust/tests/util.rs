// SPDX-License-Identifier: GPL-2.0

//! Small helpers shared by the tests: a seeded PRNG and uncaptured notes.

use std::io::Write;

/// Writes one line to stderr, past libtest's output capture, so that a plain
/// `cargo test` shows how many cases a test checked.
pub fn note(msg: &str) {
    let mut err = std::io::stderr().lock();
    // A note that cannot be written is not a test failure.
    let _ = writeln!(err, "    note: {msg}");
}

/// The seed of the randomised tests: `RFTRACE_SEED` (decimal or 0x-hex) if
/// set, else `default`, so that a failing run can be replayed.
pub fn seed(default: u64) -> u64 {
    match std::env::var("RFTRACE_SEED") {
        Ok(s) => {
            let s = s.trim();
            let parsed = match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("RFTRACE_SEED={s:?} is not a number"))
        }
        Err(_) => default,
    }
}

/// SplitMix64: tiny, fast, and reproducible from its seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the tiny modulo bias does not matter here.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        self.next_u64() % n
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    pub fn bool(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}
