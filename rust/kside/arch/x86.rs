// SPDX-License-Identifier: GPL-2.0

//! x86_64: how a change reaches the text (the INT3-batched writes of the
//! kernel's `smp_text_poke_batch_*` engine, or `text_poke_early()` before
//! the text is live), and the trampoline callback calls.
//!
//! The update pass itself is [`crate::rfcore::update`] (through
//! [`crate::kside::update`]); this module only implements its [`Arch`] trait.
//! A leaf module with `unsafe` code: the text reads and the writes through
//! the C shim (`c/rftrace_shim_x86.c`).

use kernel::{
    bindings,
    error::code::{
        EINVAL,
        ERANGE, //
    },
    ffi::{
        c_int,
        c_void, //
    },
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

use crate::{
    kside::abi::c_word,
    kside::arch::common::KernelArch,
    kside::lock::{
        FtraceLocked,
        TextLocked, //
    },
    kside::module::Module,
    kside::stats::{
        STATS, //
    },
    kside::update,
    rfcore::{
        arch::x86::{
            call_site,
            decode,
            encode_call,
            plan_init,
            plan_update,
            Decoded,
            X86Change,
            INSN_SIZE, //
        }, //
        record::Decision,
        update::{
            Arch,
            Checked,
            Facts,
            Failure, //
        },
    },
};

const _: () = assert!(bindings::MCOUNT_INSN_SIZE as usize == INSN_SIZE);

/// Writes handed to the batching engine that are not live yet.
///
/// The single-site hooks queue writes that the arch post-process makes live;
/// this tells [`finish`] whether that is a batch worth counting.
static PENDING: Atomic<u64> = Atomic::new(0);

/// Arch post-process: makes the queued writes live, counting a batch if
/// there were any.
pub(crate) fn finish(_text: &TextLocked) {
    let had = PENDING.xchg(0, Relaxed) != 0;
    crate::kside::under_lock::poke_finish(_text);
    if had {
        STATS.batches.add(1, Relaxed);
    }
}

/// Reads the instruction at `ip`, without faulting.
fn read_text(ip: u64) -> Result<[u8; INSN_SIZE], Failure> {
    let mut buf = [0u8; INSN_SIZE];
    // SAFETY: `buf` is a writable buffer of INSN_SIZE bytes; the kernel
    // function checks the source address and returns an error instead of
    // faulting.
    let ret = unsafe {
        bindings::copy_from_kernel_nofault(
            buf.as_mut_ptr().cast::<c_void>(),
            ip as usize as *const c_void,
            INSN_SIZE,
        )
    };
    if ret == 0 {
        Ok(buf)
    } else {
        Err(Failure::Fault)
    }
}

/// Whether the text is live: the arch prepare hook ran and the post-process
/// hook has not (writes go into the INT3 batch, under `text_mutex`).
fn poke_late(lock: &FtraceLocked) -> bool {
    crate::kside::under_lock::poke_late(lock)
}

/// Whether the current task holds `text_mutex` (a warning if not).
fn text_held() -> bool {
    TextLocked::held(|_text| ()).is_some()
}

/// x86 as the update pass sees it.
///
/// `mcount` is the address the compiler's call sites call before they are
/// first made NOPs (`__fentry__`), for [`Arch::plan_init`].
pub(crate) struct X86<'a> {
    _lock: &'a FtraceLocked,
    mcount: u64,
    /// Writes go straight to `text_poke_early()` (the text is not live:
    /// boot, or a module still being loaded), asked once per hook call.
    early: bool,
    /// The shim queues writes into the live INT3 batch (between the arch
    /// prepare and post-process hooks), which needs `text_mutex`.
    late: bool,
    /// With `late`: `text_mutex` was found held when the handle was made
    /// (asked once, not per write: nothing in the hook call that owns the
    /// handle releases it).
    text_held: bool,
    /// Writes were queued since the last flush: [`finish`] is told when
    /// this handle goes (one store, not one per write).
    queued: bool,
}

impl Drop for X86<'_> {
    fn drop(&mut self) {
        if self.queued {
            PENDING.store(1, Relaxed);
        }
    }
}

impl<'a> KernelArch<'a> for X86<'a> {
    fn for_pass(lock: &'a FtraceLocked, _may_sleep: crate::kside::arch::common::MaySleep) -> Self {
        let late = poke_late(lock);
        // Live INT3 batches under text_mutex: the pass never sleeps.
        X86 {
            _lock: lock,
            mcount: 0,
            early: false,
            late,
            text_held: late && text_held(),
            queued: false,
        }
    }

    fn for_site(lock: &'a FtraceLocked, _module: Module<'a>, mcount: u64) -> Self {
        let late = poke_late(lock);
        X86 {
            _lock: lock,
            mcount,
            early: !late,
            late,
            text_held: late && text_held(),
            queued: false,
        }
    }
}

impl Arch for X86<'_> {
    type Change = X86Change;
    /// The x86 engine holds `PAGE_SIZE / sizeof(struct smp_text_poke_loc)` =
    /// 4096 / 16 = 256 entries; queueing no more than that, in ascending
    /// order, means every flush of the engine is one the pass asked for and
    /// counted.
    const BATCH_MAX: usize = 256;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<X86Change, Failure> {
        plan_update(facts, decision, cfg!(CONFIG_DYNAMIC_FTRACE_WITH_JMP))
    }

    fn plan_init(&mut self, ip: u64) -> Result<X86Change, Failure> {
        plan_init(ip, self.mcount)
    }

    fn call_site(entry: u64) -> Option<u64> {
        call_site(entry)
    }

    fn ip(change: &X86Change) -> u64 {
        change.ip
    }

    fn check(&mut self, change: &X86Change) -> Result<(), Failure> {
        change.verify(&read_text(change.ip)?)
    }

    /// x86 sites have no literal: `_literal` is never called.
    fn write(
        &mut self,
        change: &Checked<X86Change>,
        _literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure> {
        // With modules, text_poke_early() stays after boot (it serves
        // module loading), so it can be called from here; without, it is
        // init code and only the shim's __ref path may reach it.
        #[cfg(CONFIG_MODULES)]
        if self.early {
            // SAFETY: `change` is checked (its type): a 5-byte call site
            // holding `change.old`, in text that is not
            // live yet (`early`: no arch prepare hook ran), which is what
            // text_poke_early() is for.
            unsafe {
                bindings::text_poke_early(
                    change.ip as usize as *mut c_void,
                    change.new.as_ptr().cast::<c_void>(),
                    INSN_SIZE,
                )
            };
            return Ok(());
        }
        let poke = || {
            // SAFETY: `change` is checked (its type): a 5-byte call site
            // holding `change.old`; the shim queues it into the INT3 batch
            // when the text is live (text_mutex held: `text_held`),
            // else writes it with text_poke_early() (boot, or a module
            // still being loaded).
            unsafe { bindings::rftrace_shim_poke(c_word(change.ip), change.new.as_ptr()) }
        };
        if self.late && !self.text_held {
            return Err(Failure::Write);
        }
        let queued = poke();
        self.queued |= queued;
        Ok(())
    }

    fn flush(&mut self) {
        // Writes are queued only in the live batch (`late`), with
        // text_mutex held, which `held()` checks (and warns if not, as
        // the engine's lockdep check would).
        if self.late {
            let _ = TextLocked::held(crate::kside::under_lock::poke_finish);
        }
        self.queued = false;
        PENDING.store(0, Relaxed);
    }
}

/// Re-points the callback call at `ip` in an ftrace trampoline (the
/// `ftrace_call` / `ftrace_regs_call` sites of the shared callers, and the
/// call in an ops' own trampoline) to the C function `func`; 0 or -errno.
///
/// `ip` must be one of the shared callers' sites or lie in the trampoline
/// of an ops on the list, and hold a `CALL rel32`; anything else is
/// refused and left alone. `func` is a plain C function, so bit 0 of its
/// address is part of the address, never the direct-call "jump" bit: with
/// GCC 12 at `-Os` C functions start at odd addresses, and reading that
/// bit as "jump" (as the kernel's `ftrace_call_replace()` does) writes a
/// `JMP` to the byte before the function.
pub(crate) fn update_callback_call(text: &TextLocked, ip: u64, func: u64) -> c_int {
    match callback_call(text, ip, func) {
        Ok(()) => 0,
        Err(e) => {
            STATS.failures.add(1, Relaxed);
            e
        }
    }
}

fn callback_call(_text: &TextLocked, ip: u64, func: u64) -> Result<(), c_int> {
    if !crate::kside::shim::rftrace_shim_callback_site(c_word(ip)) {
        kernel::pr_err!(
            "refusing to re-point the call at {:#x}: not a callback site of an ftrace trampoline\n",
            ip
        );
        return Err(EINVAL.to_errno());
    }
    let old = read_text(ip).map_err(|f| {
        kernel::pr_err!("reading the trampoline call at {:#x} faulted\n", ip);
        update::errno(&f)
    })?;
    if !matches!(decode(ip, &old), Decoded::Call(_)) {
        kernel::pr_err!(
            "refusing to re-point the trampoline call at {:#x}: found {:02x?}, not a call\n",
            ip,
            old
        );
        return Err(EINVAL.to_errno());
    }
    let new = encode_call(ip, func, false).map_err(|e| {
        kernel::pr_err!("cannot encode the trampoline call at {:#x}: {:?}\n", ip, e);
        ERANGE.to_errno()
    })?;
    // SAFETY: `ip` is a call instruction in an ftrace trampoline (both
    // checked above), `new` is a 5-byte call; text_mutex is held
    // (`_text`), which `smp_text_poke_single()` needs.
    unsafe { bindings::rftrace_shim_poke_single(c_word(ip), new.as_ptr()) };
    Ok(())
}
