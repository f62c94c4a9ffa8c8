// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the architecture's hooks: a call site that holds other
//! bytes than its record implies is refused before any store, the literal
//! included; and the x86 call encoding (arch-independent code, run on
//! every architecture).

use kernel::prelude::*;

#[kunit_tests(rftrace_arch)]
mod kunit {
    use crate::rfcore::arch::x86::{
        encode_call,
        EncodeError, //
    };

    #[test]
    fn wrong_bytes_are_refused_and_left_alone() {
        // The line of the first check that failed, if any.
        assert_eq!(super::wrong_bytes_are_refused(), None);
    }

    #[test]
    fn x86_call_encoding() {
        // rel32 is the distance from the end of the 5-byte instruction.
        let ip = 0xffff_ffff_8100_0000u64;
        assert_eq!(
            encode_call(ip, 0xffff_ffff_8123_4567, false),
            Ok([0xe8, 0x62, 0x45, 0x23, 0x00])
        );
        // A jump when bit 0 selects it.
        assert_eq!(
            encode_call(ip, 0xffff_ffff_8123_4567, true),
            Ok([0xe9, 0x61, 0x45, 0x23, 0x00])
        );
        // One byte beyond the rel32 range, and no target.
        let far = ip + 5 - (1 << 31) - 1;
        assert_eq!(
            encode_call(ip, far, false),
            Err(EncodeError::OutOfRange { ip, target: far })
        );
        assert_eq!(encode_call(ip, 0, false), Err(EncodeError::NoTarget { ip }));
    }
}

use crate::kside::tests::check;

/// Both hooks refuse the fake site of `rec`: making a call from it
/// (counted as one failure) and making a NOP of it, and `unchanged` says
/// the site holds what it held. The line of the first check that does not
/// hold, or `None`.
#[cfg(any(CONFIG_X86_64, CONFIG_ARM64))]
fn both_hooks_refuse(
    lock: &crate::kside::lock::FtraceLocked,
    rec: &mut kernel::bindings::dyn_ftrace,
    target: u64,
    unchanged: impl Fn() -> bool,
) -> Option<u32> {
    use crate::{
        kside::arch::{
            make_call,
            make_nop, //
        },
        kside::module::Module,
        kside::record::Rec,
        kside::stats::STATS,
    };
    use kernel::{
        error::code::EINVAL,
        sync::atomic::Relaxed, //
    };

    let mut bad = None;
    let failures = STATS.failures.load(Relaxed);
    let ret = make_call(Rec::from_mut(rec, lock), target);
    check!(bad, ret == EINVAL.to_errno());
    check!(bad, unchanged());
    check!(bad, STATS.failures.load(Relaxed) - failures == 1);
    let ret = make_nop(
        Module::core_kernel(),
        Rec::from_mut(rec, lock),
        target,
        false,
    );
    check!(bad, ret == EINVAL.to_errno());
    check!(bad, unchanged());
    bad
}

/// x86: a fake call site that holds an INT3, not the NOP its record says:
/// the hooks refuse it before any write.
#[cfg(CONFIG_X86_64)]
fn wrong_bytes_are_refused() -> Option<u32> {
    use crate::kside::abi::word;
    use kernel::bindings;

    // A fake call site: not the NOP a record in the NOP state implies.
    let mut site = [0xccu8, 0x90, 0x90, 0x90, 0x90];
    let ip = site.as_mut_ptr() as usize;
    let mut rec = bindings::dyn_ftrace {
        ip,
        flags: 0,
        ..Default::default()
    };
    let target = word(ip + 0x1000);
    // The Rust hooks read the site, find no NOP (nor the call a NOP is
    // made of) and refuse, before any write is attempted.
    crate::kside::lock::FtraceLocked::with(|lock| {
        both_hooks_refuse(lock, &mut rec, target, || {
            site == [0xcc, 0x90, 0x90, 0x90, 0x90]
        })
    })
}

/// arm64: a fake patch site (literal, `MOV X9, LR`, then a `BRK` where the
/// record says `NOP`): the hooks refuse it before any store, the literal
/// included.
#[cfg(CONFIG_ARM64)]
fn wrong_bytes_are_refused() -> Option<u32> {
    use crate::{
        kside::abi::word,
        rfcore::arch::arm64::MOV_X9_LR, //
    };
    use kernel::bindings;

    #[repr(C, align(8))]
    struct FakeSite {
        literal: u64,
        mov: u32,
        slot: u32,
    }
    const BRK: u32 = 0xd420_0000;
    let mut site = FakeSite {
        literal: 0x1234,
        mov: MOV_X9_LR,
        slot: BRK,
    };
    let ip = core::ptr::addr_of_mut!(site.slot) as usize;
    let mut rec = bindings::dyn_ftrace {
        ip,
        flags: (bindings::FTRACE_FL_ENABLED | 1) as usize,
        ..Default::default()
    };
    let target = word(ip + 0x1000);
    crate::kside::lock::FtraceLocked::with(|lock| {
        both_hooks_refuse(lock, &mut rec, target, || {
            // SAFETY: reads of our own stack object.
            unsafe {
                core::ptr::read_volatile(&site.literal) == 0x1234
                    && core::ptr::read_volatile(&site.mov) == MOV_X9_LR
                    && core::ptr::read_volatile(&site.slot) == BRK
            }
        })
    })
}

/// riscv64: a fake patch site in kernel data (within the reach of the fixed
/// `auipc`): with an `ebreak` where the record says `nop` or `jalr`, or
/// without its fixed `auipc`, the hooks refuse it before any store, the
/// literal included.
#[cfg(CONFIG_RISCV)]
fn wrong_bytes_are_refused() -> Option<u32> {
    use crate::{
        kside::abi::word,
        kside::arch::{
            make_call,
            make_nop,
            KernelArch,
            Native, //
        },
        kside::module::Module,
        kside::record::Rec,
        rfcore::{
            arch::riscv64::{
                fixed_auipc,
                EBREAK,
                NOP, //
            },
            flags::RecFlags,
            record::{
                Decision,
                Update, //
            },
            update::{
                Arch,
                Facts,
                Failure,
                Insn, //
            },
        },
    };
    use kernel::{
        bindings,
        sync::atomic::{
            Atomic,
            Relaxed, //
        }, //
    };

    #[repr(C, align(8))]
    struct FakeSite {
        literal: Atomic<u64>,
        auipc: Atomic<u32>,
        slot: Atomic<u32>,
    }
    static SITE: FakeSite = FakeSite {
        literal: Atomic::new(0x1234),
        auipc: Atomic::new(0),
        slot: Atomic::new(0),
    };
    let ip = core::ptr::from_ref(&SITE.slot) as usize;
    let caller = crate::kside::select::shared_caller(false);
    // Kernel data is within the reach of ftrace_caller.
    let auipc = fixed_auipc(ip as u64, caller);
    if auipc.is_err() {
        return Some(line!());
    }
    let auipc = auipc.unwrap_or(NOP);
    // Checked after the lock is dropped (`check!`).
    let mut bad = None;
    let failures = crate::kside::stats::STATS.failures.load(Relaxed);
    crate::kside::lock::FtraceLocked::with(|lock| {
        let target = crate::kside::abi::c_word(caller);
        // Updated already, as the kernel updates a record before the hook: one
        // ops, enabled (the literal is to hold the list ops).
        let enabled = (bindings::FTRACE_FL_ENABLED | 1) as usize;
        let mut rec = bindings::dyn_ftrace {
            ip,
            flags: enabled,
            ..Default::default()
        };
        let unchanged = |auipc: u32, slot: u32| {
            SITE.literal.load(Relaxed) == 0x1234
                && SITE.auipc.load(Relaxed) == auipc
                && SITE.slot.load(Relaxed) == slot
        };
        // The slot holds a breakpoint, not the nop a call is made from: the
        // arch's check says so with both words, and the hook refuses.
        SITE.auipc.store(auipc, Relaxed);
        SITE.slot.store(EBREAK, Relaxed);
        let facts = Facts {
            ip: ip as u64,
            flags: RecFlags::from_raw(0),
            curr: None,
            new: Some(caller),
            unique: None,
            set: None,
        };
        let decision = Decision {
            update: Update::MakeCall,
            flags: RecFlags::from_raw(enabled as u64),
        };
        let arch = &mut Native::for_pass(lock, crate::kside::arch::MaySleep::NO);
        let change = arch.plan(&facts, &decision);
        check!(bad, change.is_ok());
        if let Ok(change) = change {
            let want = Err(Failure::Mismatch {
                expected: Insn::word(NOP),
                actual: Insn::word(EBREAK),
            });
            check!(bad, arch.check(&change) == want);
        }
        let ret = make_call(Rec::from_mut(&mut rec, lock), word(target));
        check!(bad, ret == kernel::error::code::EINVAL.to_errno());
        check!(bad, unchanged(auipc, EBREAK));
        check!(
            bad,
            crate::kside::stats::STATS.failures.load(Relaxed) - failures == 1
        );
        // Nor is it the `jalr` an enabled record's call is removed from.
        let ret = make_nop(
            Module::core_kernel(),
            Rec::from_mut(&mut rec, lock),
            word(target),
            false,
        );
        check!(bad, ret == kernel::error::code::EINVAL.to_errno());
        check!(bad, unchanged(auipc, EBREAK));
        // The slot is right but the fixed `auipc` is missing: refused before
        // the literal store too.
        SITE.auipc.store(NOP, Relaxed);
        SITE.slot.store(NOP, Relaxed);
        if let Ok(change) = arch.plan(&facts, &decision) {
            let want = Err(Failure::Mismatch {
                expected: Insn::word(auipc),
                actual: Insn::word(NOP),
            });
            check!(bad, arch.check(&change) == want);
        }
        let ret = make_call(Rec::from_mut(&mut rec, lock), word(target));
        check!(bad, ret == kernel::error::code::EINVAL.to_errno());
        check!(bad, unchanged(NOP, NOP));
    });
    bad
}
