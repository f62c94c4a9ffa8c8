// SPDX-License-Identifier: GPL-2.0

//! arm64: the call-site hooks with per-callsite ops literals (CALL_OPS).
//!
//! Each patch site is `MOV X9, LR` followed by the NOP that becomes
//! `BL <caller>`, with an 8-byte literal before the function that holds the
//! `ftrace_ops` the shared caller is to call. The decisions (what the
//! literal holds, how the `BL` reaches its target, the order of the two
//! stores) are [`crate::rfcore::arm64`]'s; this module reads and writes the
//! text and the literal through the C shim (`c/rftrace_shim_arm64.c`), and
//! holds the C entry points of the hooks.
//!
//! A leaf module with `unsafe` code.

use kernel::{
    bindings,
    error::code::{
        EFAULT,
        EINVAL,
        EPERM, //
    },
    ffi::{
        c_int,
        c_ulong, //
    },
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

use crate::{
    kenv::{
        c_word,
        word,
        KernelOpsList,
        Rec, //
    },
    rfcore::{
        arm64::{
            literal_ops,
            plan,
            reach,
            ListReason,
            LiteralOps,
            Reach,
            Site,
            Step,
            Write, //
        },
        record::Update,
        select,
    },
    STATS, //
};

const _: () = assert!(bindings::MCOUNT_INSN_SIZE == 4);

#[allow(improper_ctypes)]
extern "C" {
    fn rftrace_shim_insn_read(ip: c_ulong, insn: *mut u32) -> c_int;
    fn rftrace_shim_insn_write(ip: c_ulong, insn: u32) -> c_int;
    fn rftrace_shim_literal_write(addr: c_ulong, val: c_ulong) -> c_int;
    fn rftrace_shim_plt(ip: c_ulong, module: *mut bindings::module) -> c_ulong;
    fn rftrace_shim_stub_ops(list: bool) -> c_ulong;
    fn rftrace_shim_caller(regs: bool) -> c_ulong;
    fn rftrace_shim_refuse(rec: *mut bindings::dyn_ftrace, expected: *const u8, actual: *const u8);
}

/// Why a hook failed; mapped to the kernel's errno at the C boundary.
#[derive(Clone, Copy, Debug)]
enum Failure {
    /// Reading the site faulted (`-EFAULT`).
    Fault,
    /// The site does not hold the expected word (`-EINVAL`): refused,
    /// nothing written; both words have been logged.
    Mismatch,
    /// The site's layout, the target's reach or an encoding is impossible
    /// (`-EINVAL`).
    Unusable,
    /// The text or literal write failed (`-EPERM`).
    Write,
}

fn errno(f: Failure) -> c_int {
    match f {
        Failure::Fault => EFAULT.to_errno(),
        Failure::Mismatch | Failure::Unusable => EINVAL.to_errno(),
        Failure::Write => EPERM.to_errno(),
    }
}

/// The patch site of `rec`. GCC kernels have no BTI in the patch site
/// (`ARM64_BTI_KERNEL` needs clang).
fn site(rec: Rec) -> Result<Site, Failure> {
    Site::from_ip(rec.ip(), cfg!(CONFIG_ARM64_BTI_KERNEL)).map_err(|e| {
        kernel::pr_err!("unusable patch site at {:#x}: {:?}\n", rec.ip(), e);
        Failure::Unusable
    })
}

/// Checks that the instruction at `ip` is `old`; a wrong word is logged
/// with both words and refused.
fn check_insn(rec: Rec, ip: u64, old: u32) -> Result<(), Failure> {
    let mut actual = 0u32;
    // SAFETY: `actual` is a writable word; the shim reads with a
    // fault-safe accessor.
    if unsafe { rftrace_shim_insn_read(c_word(ip), &mut actual) } != 0 {
        return Err(Failure::Fault);
    }
    if actual != old {
        let (e, a) = (old.to_le_bytes(), actual.to_le_bytes());
        // SAFETY: `rec` is a live record; both buffers hold the 4 bytes
        // (MCOUNT_INSN_SIZE) the shim reads.
        unsafe { rftrace_shim_refuse(rec.as_ptr(), e.as_ptr(), a.as_ptr()) };
        return Err(Failure::Mismatch);
    }
    Ok(())
}

/// Makes the stores of a plan, in order.
///
/// Every instruction the plan replaces is checked first, before any store:
/// a site that does not hold what its record says is refused with nothing
/// written, its literal included. (7.2 stores the literal before it reads
/// the instruction.)
fn execute(rec: Rec, writes: &[Write]) -> Result<(), Failure> {
    for w in writes {
        if let Write::Insn { ip, old, .. } = *w {
            check_insn(rec, ip, old)?;
        }
    }
    // SAFETY: plain address lookups of two static ops.
    let (nop, list) = unsafe { (rftrace_shim_stub_ops(false), rftrace_shim_stub_ops(true)) };
    let (nop, list) = (word(nop), word(list));
    for w in writes {
        match *w {
            Write::Literal { addr, ops } => {
                let val = c_word(ops.addr(nop, list));
                // SAFETY: `addr` is the 8-byte aligned literal slot before
                // the function of a record (checked by `Site`); the shim
                // writes it with one 64-bit store.
                if unsafe { rftrace_shim_literal_write(c_word(addr), val) } != 0 {
                    return Err(Failure::Write);
                }
            }
            Write::Insn { ip, new, .. } => {
                // SAFETY: `ip` is the checked, aligned instruction of a
                // patch site; the shim patches it with one 32-bit store and
                // the cache maintenance (aarch64_insn_patch_text_nosync()).
                if unsafe { rftrace_shim_insn_write(c_word(ip), new) } != 0 {
                    return Err(Failure::Write);
                }
            }
        }
    }
    Ok(())
}

/// `FTRACE_ADDR` (`ftrace_caller`).
fn caller() -> u64 {
    // SAFETY: returns a constant address.
    word(unsafe { rftrace_shim_caller(false) })
}

/// The module ftrace PLT that can reach `ftrace_caller` from `ip`, if any.
fn plt(ip: u64, module: *mut bindings::module) -> Option<u64> {
    // SAFETY: `module` is null or the module being loaded/released, alive
    // during the hook; the shim looks `ip` up under RCU otherwise.
    let p = word(unsafe { rftrace_shim_plt(c_word(ip), module) });
    (p != 0).then_some(p)
}

/// How the site at `ip` reaches `target`.
fn reach_of(ip: u64, target: u64, module: *mut bindings::module) -> Result<Reach, Failure> {
    reach(ip, target, caller(), plt(ip, module)).map_err(|e| {
        kernel::pr_err!("cannot reach {:#x} from {:#x}: {:?}\n", target, ip, e);
        Failure::Unusable
    })
}

/// CALL_OPS sites found without their unique ops (the kernel warns once).
static NO_UNIQUE: Atomic<u32> = Atomic::new(0);

/// What the literal of `rec` must hold, from its (updated) flags.
fn literal_for(rec: Rec) -> LiteralOps {
    let flags = rec.flags();
    let unique = if flags.any(crate::rfcore::flags::CALL_OPS_EN) {
        // SAFETY: the hooks run under ftrace_lock.
        let mut list = unsafe { KernelOpsList::new() };
        select::unique_ops(&mut list, rec.ip()).map(|op| op.as_ptr() as usize as u64)
    } else {
        None
    };
    let ops = literal_ops(flags, unique);
    if let LiteralOps::List(ListReason::NoUnique) = ops {
        if NO_UNIQUE.fetch_add(1, Relaxed) == 0 {
            kernel::pr_warn!("no unique ops for a CALL_OPS site at {:#x}\n", rec.ip());
        }
    }
    ops
}

fn make_call(rec: Rec, addr: u64) -> Result<(), Failure> {
    let site = site(rec)?;
    let to = reach_of(site.ip(), addr, core::ptr::null_mut())?;
    let ops = literal_for(rec);
    let p = plan(site, Step::Enable { to, ops }).map_err(|_| Failure::Unusable)?;
    execute(rec, &p.writes)
}

fn modify_call(rec: Rec, old: u64, new: u64) -> Result<(), Failure> {
    let site = site(rec)?;
    let from = reach_of(site.ip(), old, core::ptr::null_mut())?;
    let to = reach_of(site.ip(), new, core::ptr::null_mut())?;
    let ops = literal_for(rec);
    let p = plan(site, Step::Modify { from, to, ops }).map_err(|_| Failure::Unusable)?;
    execute(rec, &p.writes)
}

fn make_nop(module: *mut bindings::module, rec: Rec, addr: u64) -> Result<(), Failure> {
    let site = site(rec)?;
    let from = reach_of(site.ip(), addr, module)?;
    let p = plan(site, Step::Disable { from }).map_err(|_| Failure::Unusable)?;
    execute(rec, &p.writes)
}

fn init_nop(rec: Rec) -> Result<(), Failure> {
    let site = site(rec)?;
    let p = plan(site, Step::Init).map_err(|_| Failure::Unusable)?;
    execute(rec, &p.writes)
}

/// Runs a hook on a raw record and turns its outcome into an errno.
///
/// # Safety
///
/// `rec` is null or a record of the table, and the caller holds
/// `ftrace_lock` or runs during boot / module load.
unsafe fn hook(
    rec: *mut bindings::dyn_ftrace,
    op: impl FnOnce(Rec) -> Result<(), Failure>,
) -> c_int {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s.
    let Some(rec) = (unsafe { Rec::from_raw(rec) }) else {
        return EINVAL.to_errno();
    };
    match op(rec) {
        Ok(()) => 0,
        Err(f) => {
            STATS.failures.add(1, Relaxed);
            if !matches!(f, Failure::Mismatch) {
                kernel::pr_err!("arm64 hook failed at {:#x}: {:?}\n", rec.ip(), f);
            }
            errno(f)
        }
    }
}

/// `ftrace_make_call()`: the literal, then `NOP` to `BL`.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_arm64_make_call(
    rec: *mut bindings::dyn_ftrace,
    addr: c_ulong,
) -> c_int {
    // SAFETY: the caller's contract is `hook()`'s.
    let r = unsafe { hook(rec, |rec| make_call(rec, word(addr))) };
    if r == 0 {
        STATS.make_call.add(1, Relaxed);
    }
    r
}

/// `ftrace_modify_call()`: the literal, then `BL` to `BL`.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_arm64_modify_call(
    rec: *mut bindings::dyn_ftrace,
    old: c_ulong,
    new: c_ulong,
) -> c_int {
    // SAFETY: the caller's contract is `hook()`'s.
    let r = unsafe { hook(rec, |rec| modify_call(rec, word(old), word(new))) };
    if r == 0 {
        STATS.modify_call.add(1, Relaxed);
    }
    r
}

/// `ftrace_make_nop()`: the literal back to the nop ops, then `BL` to `NOP`.
///
/// # Safety
///
/// `rec` is a record of the table; `module` is null or the module being
/// loaded; the caller holds `ftrace_lock` or runs during module load.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_arm64_make_nop(
    module: *mut bindings::module,
    rec: *mut bindings::dyn_ftrace,
    addr: c_ulong,
) -> c_int {
    // SAFETY: the caller's contract is `hook()`'s.
    let r = unsafe { hook(rec, |rec| make_nop(module, rec, word(addr))) };
    if r == 0 {
        STATS.make_nop.add(1, Relaxed);
    }
    r
}

/// `ftrace_init_nop()`: the literal to the nop ops, then the first
/// compiler NOP to `MOV X9, LR`.
///
/// # Safety
///
/// `rec` is a record of the table being initialised (boot or module load).
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_arm64_init_nop(rec: *mut bindings::dyn_ftrace) -> c_int {
    // SAFETY: the caller's contract is `hook()`'s.
    let r = unsafe { hook(rec, init_nop) };
    if r == 0 {
        STATS.init_nops.add(1, Relaxed);
    }
    r
}

/// `__ftrace_replace_code()` on arm64: the targets from the state before
/// the update, the record updated, then the hook the update calls for.
///
/// # Safety
///
/// `rec` is a record of the table and the caller holds `ftrace_lock`.
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_replace_one(
    rec: *mut bindings::dyn_ftrace,
    enable: bool,
) -> c_int {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s.
    let Some(r) = (unsafe { Rec::from_raw(rec) }) else {
        return 0;
    };
    // SAFETY: under ftrace_lock.
    let new = unsafe { crate::choose_target(r, true) };
    // SAFETY: under ftrace_lock.
    let old = unsafe { crate::choose_target(r, false) };
    let decision = crate::check_record(r, enable, true);
    STATS.walked.add(1, Relaxed);
    STATS.one_shot.add(1, Relaxed);
    let (new, old) = (c_word(new), c_word(old));
    // SAFETY: as above.
    unsafe {
        match decision.update {
            Update::Ignore => 0,
            Update::MakeCall => rftrace_arm64_make_call(rec, new),
            Update::MakeNop => rftrace_arm64_make_nop(core::ptr::null_mut(), rec, old),
            Update::ModifyCall => rftrace_arm64_modify_call(rec, old, new),
        }
    }
}
