// SPDX-License-Identifier: GPL-2.0

//! riscv64: how a change reaches the text of a patch site with a
//! per-callsite ops literal (CALL_OPS).
//!
//! Each patch site is an 8-byte ops literal before the function, a fixed
//! `auipc t0` towards `ftrace_caller` at the function's entry and the
//! record's slot after it, which toggles between `nop` and `jalr t0`. The
//! layout, the encodings, the reach of the fixed `auipc` and the order of
//! the stores are [`crate::rfcore::arch::riscv64`]'s; the update pass is
//! [`crate::rfcore::update`]'s (through [`crate::kside::update`]). This
//! module implements the pass's [`Arch`] trait: it reads the text without
//! faulting and writes through the kernel's text patching, in the C shim
//! (`c/rftrace_shim_riscv64.c`).
//!
//! The kernel's text patching on riscv needs `text_mutex`. Every update
//! of a live site comes with it held (between the arch prepare and
//! post-process hooks, as in C); the first initialisation of a site
//! (boot, module load) does not, and takes it for its two stores, as
//! the C `ftrace_init_nop()` does.
//!
//! A leaf module with `unsafe` code.

use kernel::{
    bindings,
    error::code::EINVAL,
    ffi::{
        c_int,
        c_void, //
    },
};

use crate::{
    kside::abi::c_word,
    kside::arch::{
        call_ops,
        common::{
            self,
            KernelArch, //
        }, //
    },
    kside::lock::{
        FtraceLocked,
        TextLocked, //
    },
    kside::module::Module,
    kside::select::shared_caller,
    rfcore::{
        arch::riscv64::{
            call_site,
            literal_addr,
            plan_init,
            plan_literal,
            plan_update,
            Check,
            Riscv64Change,
            Write, //
        },
        flags::RecFlags,
        record::Decision,
        update::{
            Arch,
            Checked,
            Facts,
            Failure,
            Insn,
            INSN_MAX, //
        },
    },
};

const _: () = assert!(bindings::MCOUNT_INSN_SIZE == 4);

/// The compiler's NOPs are `c.nop` (the C extension).
const RVC: bool = cfg!(CONFIG_RISCV_ISA_C);

/// riscv64 as the update pass sees it.
pub(crate) struct Riscv64<'a> {
    _lock: &'a FtraceLocked,
    may_sleep: common::MaySleep,
}

impl<'a> KernelArch<'a> for Riscv64<'a> {
    fn for_pass(lock: &'a FtraceLocked, may_sleep: common::MaySleep) -> Self {
        Riscv64 {
            _lock: lock,
            may_sleep,
        }
    }

    fn for_site(lock: &'a FtraceLocked, _module: Module<'a>, _mcount: u64) -> Self {
        // Modules need no PLT: they are linked within the reach of the
        // fixed `auipc` (a site out of it is refused by the plan).
        Riscv64 {
            _lock: lock,
            may_sleep: common::MaySleep::NO,
        }
    }
}

/// Reads what `check` is about, without faulting.
fn read(check: &Check) -> Result<Insn, Failure> {
    let len = check.expected.len();
    let mut buf = [0u8; INSN_MAX];
    let dst = buf.get_mut(..len).ok_or(Failure::Fault)?;
    // SAFETY: `dst` is a writable buffer of `len` bytes; the kernel
    // function checks the source address and returns an error instead of
    // faulting.
    let ret = unsafe {
        bindings::copy_from_kernel_nofault(
            dst.as_mut_ptr().cast::<c_void>(),
            check.addr as usize as *const c_void,
            len,
        )
    };
    if ret != 0 {
        return Err(Failure::Fault);
    }
    Insn::new(dst).ok_or(Failure::Fault)
}

/// Writes the stores of `change` in order, under `text_mutex`; 0 or the
/// first store's -errno. `literal` hears of each literal store that
/// landed ([`Arch::write`]).
fn write_plan(
    change: &Checked<Riscv64Change>,
    literal: &mut dyn FnMut(u64),
    _text: &TextLocked,
) -> c_int {
    let (nop, list) = call_ops::stub_ops();
    for w in change.plan.writes {
        let ret = match w {
            Write::Literal { addr, ops } => {
                // SAFETY: `addr` is the 8-byte aligned literal of a checked
                // site (`Site`); the shim stores it with one 64-bit store,
                // under `text_mutex` (`_text`).
                let ret = unsafe {
                    bindings::rftrace_shim_rv_literal_write(
                        c_word(addr),
                        c_word(ops.addr(nop, list)),
                    )
                };
                if ret == 0 {
                    literal(ops.set().unwrap_or(0));
                }
                ret
            }
            // SAFETY: `ip` is the checked, 4-byte aligned slot of a patch
            // site; one 32-bit store under `text_mutex`.
            Write::Jalr { ip, new, .. } => unsafe {
                bindings::rftrace_shim_rv_insn_write(c_word(ip), new)
            },
            // SAFETY: `pc` is the checked, 8-byte aligned entry of a patch
            // site (its literal is aligned and 8 bytes before); one 64-bit
            // store under `text_mutex`.
            Write::Entry { pc, new, .. } => unsafe {
                bindings::rftrace_shim_rv_entry_write(c_word(pc), u64::from_le_bytes(new))
            },
        };
        if ret != 0 {
            return ret;
        }
    }
    0
}

impl Arch for Riscv64<'_> {
    type Change = Riscv64Change;
    /// Every change is live once written (single-copy-atomic stores, the
    /// instruction caches made coherent by the arch post-process), so
    /// there is nothing to batch.
    const BATCH_MAX: usize = usize::MAX;
    const CALL_OPS: bool = true;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<Riscv64Change, Failure> {
        call_ops::check_unique(facts, decision);
        Ok(plan_update(facts, decision, shared_caller(false))?)
    }

    fn plan_init(&mut self, ip: u64) -> Result<Riscv64Change, Failure> {
        Ok(plan_init(ip, shared_caller(false), RVC)?)
    }

    fn plan_literal(
        &mut self,
        facts: &Facts,
        decision: &Decision,
    ) -> Result<Riscv64Change, Failure> {
        Ok(plan_literal(facts, decision, shared_caller(false))?)
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
        call_site(entry)
    }

    fn ip(change: &Riscv64Change) -> u64 {
        change.ip
    }

    fn check(&mut self, change: &Riscv64Change) -> Result<(), Failure> {
        for check in change.checks().iter().flatten() {
            check.verify(read(check)?)?;
        }
        Ok(())
    }

    fn write(
        &mut self,
        change: &Checked<Riscv64Change>,
        literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure> {
        // The first initialisation is the only change made without
        // `text_mutex` held (see the module documentation): it takes the
        // lock; every other change checks that its caller holds it.
        let ret = if change.plan.auipc.is_none() {
            TextLocked::with(|text| write_plan(change, literal, text))
        } else {
            TextLocked::held(|text| write_plan(change, literal, text))
                .unwrap_or_else(|| EINVAL.to_errno())
        };
        if ret != 0 {
            return Err(Failure::Write);
        }
        Ok(())
    }

    fn flush(&mut self) {}

    fn relax(&mut self) {
        self.may_sleep.relax();
    }
}
