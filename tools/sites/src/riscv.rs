// SPDX-License-Identifier: GPL-2.0

//! riscv64 patch sites with `CALL_OPS`: the layout and the entry-to-ip
//! rule are the pure core's (`rfcore::arch::riscv64`, which the kernel runs);
//! what only the tool needs, the NOPs of a whole unconverted site, is
//! here.
//!
//! The kernel compiles with `-fpatchable-function-entry=8,4` when it has
//! the C extension (`4,2` without): 8 bytes of NOPs before the function
//! symbol, the per-site ops literal, and 8 bytes at the entry, which the
//! kernel turns into `auipc t0` and the slot that toggles between a NOP and
//! `jalr`. The list entry is the first byte of the literal; the record's ip
//! (`ftrace_call_adjust()` with `CALL_OPS`) is the `jalr` slot, 12 bytes
//! on. `CALL_OPS` needs the literal 8-byte aligned (functions are aligned
//! to 8 under `FUNCTION_ALIGNMENT_8B`).
//!
//! ```text
//!   entry+0    c.nop x4 (or nop x2)   literal
//!   entry+8    c.nop x2 (or nop)      <- func, becomes auipc t0
//!   entry+12   c.nop x2 (or nop)      <- ip, becomes jalr / nop
//! ```

pub use rftrace::rfcore::arch::riscv64::{
    call_site,
    FUNC_OFFSET,
    IP_OFFSET,
    LITERAL_SIZE, //
};

/// Bytes of NOPs the compiler puts at a site (literal and entry).
pub const SITE_SIZE: usize = 16;

/// `c.nop`, little-endian.
pub const C_NOP: [u8; 2] = [0x01, 0x00];

/// `nop` (`addi x0, x0, 0`), little-endian.
pub const NOP: [u8; 4] = [0x13, 0x00, 0x00, 0x00];

/// Whether `bytes` (the [`SITE_SIZE`] bytes from the entry) are all NOPs,
/// `c.nop` or `nop`, with an instruction boundary at the function symbol.
pub fn is_nop_site(bytes: &[u8]) -> bool {
    if bytes.len() != SITE_SIZE {
        return false;
    }
    let mut pos = 0usize;
    let mut at_func = false;
    while pos < SITE_SIZE {
        if pos as u64 == FUNC_OFFSET {
            at_func = true;
        }
        let rest = &bytes[pos..];
        if rest.starts_with(&C_NOP) {
            pos += 2;
        } else if rest.starts_with(&NOP) {
            pos += 4;
        } else {
            return false;
        }
    }
    pos == SITE_SIZE && at_func
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nop_runs() {
        let mut c = [0u8; 16];
        for i in 0..8 {
            c[2 * i..2 * i + 2].copy_from_slice(&C_NOP);
        }
        assert!(is_nop_site(&c));
        let mut n = [0u8; 16];
        for i in 0..4 {
            n[4 * i..4 * i + 4].copy_from_slice(&NOP);
        }
        assert!(is_nop_site(&n));
        // A 4-byte NOP across the function symbol is no site.
        let mut x = c;
        x[6..10].copy_from_slice(&NOP);
        assert!(!is_nop_site(&x));
        // auipc t0 already in place.
        let mut y = c;
        y[8..12].copy_from_slice(&[0x97, 0x02, 0x00, 0x00]);
        assert!(!is_nop_site(&y));
        assert!(!is_nop_site(&c[..15]));
    }

    #[test]
    fn adjust() {
        assert_eq!(call_site(0x1000), Some(0x100c));
        assert_eq!(call_site(0x1004), None);
        assert_eq!(call_site(0), None);
        assert_eq!(call_site(u64::MAX - 7), None);
    }
}
