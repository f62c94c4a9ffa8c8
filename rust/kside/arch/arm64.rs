// SPDX-License-Identifier: GPL-2.0

//! arm64: how a change reaches the text of a patch site with a per-callsite
//! ops literal (CALL_OPS).
//!
//! Each patch site is `MOV X9, LR` followed by the NOP that becomes
//! `BL <caller>`, with an 8-byte literal before the function that holds the
//! `ftrace_ops` the shared caller is to call. What the literal holds, how
//! the `BL` reaches its target and the order of the two stores are
//! [`crate::rfcore::arch::arm64`]'s; the update pass is
//! [`crate::rfcore::update`]'s (through [`crate::kside::update`]). This module
//! implements the pass's [`Arch`] trait: it reads and writes the text and
//! the literal through the C shim (`c/rftrace_shim_arm64.c`).
//!
//! A leaf module with `unsafe` code.

use kernel::bindings;

use crate::{
    kside::abi::{
        c_word,
        word, //
    },
    kside::arch::{
        call_ops,
        common::{
            self,
            KernelArch, //
        }, //
    },
    kside::lock::FtraceLocked,
    kside::module::Module,
    kside::select::shared_caller,
    rfcore::{
        arch::arm64::{
            call_site,
            literal_addr,
            plan_init,
            plan_literal,
            plan_update,
            verify_word,
            Arm64Change,
            Write, //
        },
        flags::RecFlags,
        record::Decision,
        update::{
            Arch,
            Checked,
            Facts,
            Failure, //
        },
    },
};

const _: () = assert!(bindings::MCOUNT_INSN_SIZE == 4);

/// GCC kernels have no BTI in the patch site (`ARM64_BTI_KERNEL` needs
/// clang).
const BTI: bool = cfg!(CONFIG_ARM64_BTI_KERNEL);

/// arm64 as the update pass sees it.
///
pub(crate) struct Arm64<'a> {
    _lock: &'a FtraceLocked,
    module: Module<'a>,
    may_sleep: common::MaySleep,
}

impl Arm64<'_> {
    /// The module ftrace PLT that can reach `ftrace_caller` from `ip`, if
    /// any.
    fn plt(&self, ip: u64) -> Option<u64> {
        // SAFETY: `module` is null or alive (type invariants of `Module`);
        // the shim looks `ip` up under RCU otherwise.
        let p = word(unsafe { bindings::rftrace_shim_plt(c_word(ip), self.module.as_ptr()) });
        (p != 0).then_some(p)
    }
}

impl<'a> KernelArch<'a> for Arm64<'a> {
    fn for_pass(lock: &'a FtraceLocked, may_sleep: common::MaySleep) -> Self {
        // No module: the PLT of a live module's site is looked up by
        // address.
        Arm64 {
            _lock: lock,
            module: Module::core_kernel(),
            may_sleep,
        }
    }

    fn for_site(lock: &'a FtraceLocked, module: Module<'a>, _mcount: u64) -> Self {
        Arm64 {
            _lock: lock,
            module,
            may_sleep: common::MaySleep::NO,
        }
    }
}

impl Arch for Arm64<'_> {
    type Change = Arm64Change;
    /// Every change is live once written (single-copy-atomic stores), so
    /// there is nothing to batch.
    const BATCH_MAX: usize = usize::MAX;
    const CALL_OPS: bool = true;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<Arm64Change, Failure> {
        call_ops::check_unique(facts, decision);
        let caller = shared_caller(false);
        plan_update(facts, decision, BTI, caller, self.plt(facts.ip))
    }

    fn plan_init(&mut self, ip: u64) -> Result<Arm64Change, Failure> {
        plan_init(ip, BTI)
    }

    fn plan_literal(&mut self, facts: &Facts, decision: &Decision) -> Result<Arm64Change, Failure> {
        let caller = shared_caller(false);
        plan_literal(facts, decision, BTI, caller, self.plt(facts.ip))
    }

    fn literal_holds(
        &mut self,
        ip: u64,
        flags: RecFlags,
        unique: Option<u64>,
        set: Option<u64>,
    ) -> Option<(u64, u64)> {
        call_ops::literal_holds(literal_addr(ip), flags, unique, set)
    }

    fn call_site(entry: u64) -> Option<u64> {
        if BTI {
            // Whether the function starts with `BTI C` is in the text:
            // the kernel's own adjustment reads it.
            // SAFETY: a computation on the address and a read of kernel
            // text the call-site list points to.
            let site = word(unsafe { bindings::rftrace_shim_call_adjust(c_word(entry)) });
            return (site != 0).then_some(site);
        }
        call_site(entry, false)
    }

    fn ip(change: &Arm64Change) -> u64 {
        change.ip
    }

    fn check(&mut self, change: &Arm64Change) -> Result<(), Failure> {
        for (ip, old) in change.replaced().into_iter().flatten() {
            let mut actual = 0u32;
            if crate::kside::shim::rftrace_shim_insn_read(c_word(ip), &mut actual) != 0 {
                return Err(Failure::Fault);
            }
            verify_word(old, actual)?;
        }
        Ok(())
    }

    fn write(
        &mut self,
        change: &Checked<Arm64Change>,
        literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure> {
        let (nop, list) = call_ops::stub_ops();
        for w in change.plan.writes {
            match w {
                Write::Literal { addr, ops } => {
                    // SAFETY: `addr` is the 8-byte aligned literal slot
                    // before the function of a checked site (`Site`); the
                    // shim writes it with one 64-bit store.
                    let ret = unsafe {
                        bindings::rftrace_shim_literal_write(
                            c_word(addr),
                            c_word(ops.addr(nop, list)),
                        )
                    };
                    if ret != 0 {
                        return Err(Failure::Write);
                    }
                    literal(ops.set().unwrap_or(0));
                }
                Write::Insn { ip, new, .. } => {
                    // SAFETY: `ip` is the checked, aligned instruction of a
                    // patch site; the shim patches it with one 32-bit
                    // store and the cache maintenance.
                    if unsafe { bindings::rftrace_shim_insn_write(c_word(ip), new) } != 0 {
                        return Err(Failure::Write);
                    }
                }
            }
        }
        Ok(())
    }

    fn flush(&mut self) {}

    fn relax(&mut self) {
        self.may_sleep.relax();
    }
}
