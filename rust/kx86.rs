// SPDX-License-Identifier: GPL-2.0

//! x86_64: the call-site hooks, the batched replace-code driver's kernel
//! side, and the trampoline callback calls.
//!
//! A leaf module with `unsafe` code: the text reads, the INT3-batched
//! writes through the C shim (`c/rftrace_shim_x86.c`) and the C entry
//! points of the x86 hooks.

use core::ptr::NonNull;

use kernel::{
    bindings,
    error::code::{
        EFAULT,
        EINVAL,
        ERANGE, //
    },
    ffi::{
        c_int,
        c_ulong,
        c_void, //
    },
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

use crate::{
    kenv::{
        c_word,
        set_bug_type,
        word,
        Rec, //
    },
    rfcore::{
        driver::{
            self,
            Counts,
            Env,
            Failure,
            Target, //
        },
        flags::RecFlags,
        record::{
            decide,
            Update, //
        },
        x86::{
            decode,
            encode_call,
            Decoded,
            INSN_SIZE, //
        }, //
    },
    STATS, //
};

const _: () = assert!(bindings::MCOUNT_INSN_SIZE as usize == INSN_SIZE);

// `struct dyn_arch_ftrace` is empty on x86 (zero-sized in GNU C, and in the
// bindings), so `struct dyn_ftrace` is two words: pointers to it are fine.
#[allow(improper_ctypes)]
extern "C" {
    fn rftrace_shim_poke(ip: c_ulong, insn: *const u8) -> bool;
    fn rftrace_shim_poke_finish();
    fn rftrace_shim_poke_single(ip: c_ulong, insn: *const u8);
    fn rftrace_shim_refuse(rec: *mut bindings::dyn_ftrace, expected: *const u8, actual: *const u8);
    fn rftrace_shim_bug(err: c_int, rec: *mut bindings::dyn_ftrace);
}

/// The errno the kernel's hooks return for a failure.
pub(crate) fn errno(failure: &Failure) -> c_int {
    match failure {
        Failure::Fault => EFAULT.to_errno(),
        Failure::Mismatch(_) => EINVAL.to_errno(),
        Failure::Encode(_) => ERANGE.to_errno(),
    }
}

/// Logs why a site was refused, and hands the expected bytes to
/// `ftrace_bug()`.
pub(crate) fn explain(rec: Rec, failure: &Failure) {
    match failure {
        Failure::Mismatch(m) => {
            // SAFETY: `rec` is a live record; both buffers are `INSN_SIZE`
            // bytes, which is what the shim reads.
            unsafe { rftrace_shim_refuse(rec.as_ptr(), m.expected.as_ptr(), m.actual.as_ptr()) };
        }
        Failure::Encode(e) => {
            kernel::pr_err!("cannot encode the call at {:#x}: {:?}\n", rec.ip(), e);
        }
        Failure::Fault => {
            kernel::pr_err!("reading the call site at {:#x} faulted\n", rec.ip());
        }
    }
}

/// The kernel as the drivers see it.
///
/// # Invariants
///
/// Only created by the C entry points, which run under `ftrace_lock` (or in
/// early boot or module load), so the single record iterator of the kernel
/// and the records are ours while it lives.
pub(crate) struct KernelEnv {
    _private: (),
}

/// Writes handed to the batching engine that are not live yet.
///
/// The single-site hooks queue writes that the arch post-process makes live;
/// this tells [`finish_pending`] whether that is a batch worth counting.
static PENDING: Atomic<u64> = Atomic::new(0);

/// Makes the queued writes live; returns true if there were any.
pub(crate) fn finish_pending() -> bool {
    let had = PENDING.xchg(0, Relaxed) != 0;
    // SAFETY: called from the arch post-process hook, with text_mutex held.
    unsafe { rftrace_shim_poke_finish() };
    had
}

impl KernelEnv {
    /// Creates the environment.
    ///
    /// # Safety
    ///
    /// The caller holds `ftrace_lock` or is in early boot / module load.
    pub(crate) unsafe fn new() -> Self {
        KernelEnv { _private: () }
    }
}

impl KernelEnv {
    fn cursor(
        iter: *mut bindings::ftrace_rec_iter,
    ) -> Option<(NonNull<bindings::ftrace_rec_iter>, Rec)> {
        let iter = NonNull::new(iter)?;
        // SAFETY: `iter` is a valid position of the kernel's iterator, used
        // under ftrace_lock (type invariants).
        let ptr = unsafe { bindings::ftrace_rec_iter_record(iter.as_ptr()) };
        // SAFETY: the record of a valid position is a live record of the
        // table, serialised by the same lock.
        let rec = unsafe { Rec::from_raw(ptr) }?;
        Some((iter, rec))
    }
}

impl Env for KernelEnv {
    type Rec = Rec;
    /// The kernel's iterator and the record it points at.
    type Cursor = (NonNull<bindings::ftrace_rec_iter>, Rec);

    fn first(&mut self) -> Option<Self::Cursor> {
        // SAFETY: we hold ftrace_lock (type invariants), which protects the
        // kernel's single static iterator.
        let iter = unsafe { bindings::ftrace_rec_iter_start() };
        Self::cursor(iter)
    }

    fn next(&mut self, at: Self::Cursor) -> Option<Self::Cursor> {
        // SAFETY: `at.0` came from `first()`/`next()` under the same lock.
        let iter = unsafe { bindings::ftrace_rec_iter_next(at.0.as_ptr()) };
        Self::cursor(iter)
    }

    fn record(&self, at: Self::Cursor) -> Rec {
        at.1
    }

    fn ip(&self, rec: Rec) -> u64 {
        rec.ip()
    }

    fn flags(&self, rec: Rec) -> RecFlags {
        rec.flags()
    }

    fn store_flags(&mut self, rec: Rec, flags: RecFlags) {
        rec.set_flags(flags)
    }

    fn addr_new(&mut self, rec: Rec) -> u64 {
        // SAFETY: we hold ftrace_lock (type invariants).
        unsafe { crate::choose_target(rec, true) }
    }

    fn addr_curr(&mut self, rec: Rec) -> u64 {
        // SAFETY: we hold ftrace_lock (type invariants).
        unsafe { crate::choose_target(rec, false) }
    }

    fn jmp_bit(&self) -> bool {
        cfg!(CONFIG_DYNAMIC_FTRACE_WITH_JMP)
    }

    fn read(&mut self, ip: u64) -> Result<[u8; INSN_SIZE], Failure> {
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

    fn queue(&mut self, ip: u64, insn: &[u8; INSN_SIZE]) {
        // SAFETY: the drivers only queue a write at a call site whose
        // current bytes they have just verified, with a 5-byte instruction;
        // text_mutex is held whenever the text is live (prepare/post).
        let queued = unsafe { rftrace_shim_poke(c_word(ip), insn.as_ptr()) };
        if queued {
            PENDING.add(1, Relaxed);
        }
    }

    fn flush(&mut self) {
        // SAFETY: called between prepare and post-process, with text_mutex
        // held, as the batching engine requires.
        unsafe { rftrace_shim_poke_finish() };
        PENDING.store(0, Relaxed);
    }

    fn report(&mut self, rec: Rec, update: Update, failure: Failure) {
        set_bug_type(update.bug_type());
        explain(rec, &failure);
        // SAFETY: `rec` is a live record; ftrace_bug() prints it and stops
        // ftrace (ftrace_kill()), it does not free anything.
        unsafe { rftrace_shim_bug(errno(&failure), rec.as_ptr()) };
    }
}

/// Re-points a callback call in a trampoline; see `rftrace_update_call()`.
///
/// Returns the errno to give back to C on failure.
pub(crate) fn update_callback_call(ip: u64, func: u64) -> Result<(), c_int> {
    let mut env = KernelEnv { _private: () };
    let old = env.read(ip).map_err(|f| {
        kernel::pr_err!("reading the trampoline call at {:#x} faulted\n", ip);
        errno(&f)
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
    // SAFETY: `ip` is a call instruction in an ftrace trampoline (checked
    // above), `new` is a 5-byte call; the callers hold text_mutex, which
    // `smp_text_poke_single()` needs.
    unsafe { rftrace_shim_poke_single(c_word(ip), new.as_ptr()) };
    Ok(())
}

/// `__ftrace_replace_code()`: update one record and its text.
///
/// # Safety
///
/// As for [`rftrace_check_record`].
#[no_mangle]
pub(crate) unsafe extern "C" fn rftrace_replace_one(
    rec: *mut bindings::dyn_ftrace,
    enable: bool,
) -> c_int {
    // SAFETY: the caller's contract is `Rec::from_raw()`'s.
    let Some(rec) = (unsafe { Rec::from_raw(rec) }) else {
        return 0;
    };
    // SAFETY: the caller holds ftrace_lock.
    let mut env = unsafe { KernelEnv::new() };
    let mut counts = Counts::default();
    let update = decide(rec.flags(), enable).update;
    let result = driver::replace_one(&mut env, rec, enable, &mut counts);
    STATS.one_shot.add(1, Relaxed);
    STATS.add(&counts);
    // What a failure is reported as, by the caller's ftrace_bug().
    set_bug_type(update.bug_type());
    match result {
        Ok(_) => 0,
        Err(failure) => {
            explain(rec, &failure);
            errno(&failure)
        }
    }
}

/// The x86 `ftrace_replace_code()`: verify every change, then patch in batches.
#[no_mangle]
pub(crate) extern "C" fn rftrace_replace_code(enable: bool) {
    // SAFETY: only called from ftrace_modify_all_code(), under ftrace_lock
    // and text_mutex (arch prepare).
    let mut env = unsafe { KernelEnv::new() };
    let mut counts = Counts::default();
    // A failure has been reported (ftrace_bug() disables ftrace) already.
    let _ = driver::replace_batched(&mut env, enable, &mut counts);
    STATS.passes.add(1, Relaxed);
    STATS.add(&counts);
}

/// Runs one of the single-site hooks and turns its outcome into an errno.
fn single(
    rec: *mut bindings::dyn_ftrace,
    op: impl FnOnce(&mut KernelEnv, Rec) -> Result<(), driver::Failure>,
) -> c_int {
    // SAFETY: the arch hooks are called by ftrace.c on records of the table,
    // under ftrace_lock or during boot / module load.
    let Some(rec) = (unsafe { Rec::from_raw(rec) }) else {
        return kernel::error::code::EINVAL.to_errno();
    };
    // SAFETY: as above.
    let mut env = unsafe { KernelEnv::new() };
    match op(&mut env, rec) {
        Ok(()) => 0,
        Err(failure) => {
            STATS.failures.add(1, Relaxed);
            explain(rec, &failure);
            errno(&failure)
        }
    }
}

/// `ftrace_make_call()`.
///
/// As in the kernel, the record has been updated already: its `DIRECT_EN`
/// says whether `addr` is a direct-call trampoline.
#[no_mangle]
pub(crate) extern "C" fn rftrace_make_call(rec: *mut bindings::dyn_ftrace, addr: c_ulong) -> c_int {
    single(rec, |env, rec| {
        driver::make_call(env, rec, Target::of(word(addr), rec.flags()))
    })
}

/// `ftrace_make_nop()`; `init` for the boot / module-load conversion of the
/// compiler's call to `__fentry__`.
#[no_mangle]
pub(crate) extern "C" fn rftrace_make_nop(
    rec: *mut bindings::dyn_ftrace,
    addr: c_ulong,
    init: bool,
) -> c_int {
    // Only reached for the compiler's `call __fentry__` (`init`): the
    // generic updates come through `rftrace_replace_one()`.
    let old = Target {
        addr: word(addr),
        direct: false,
    };
    let ret = single(rec, |env, rec| driver::make_nop(env, rec, old));
    if ret == 0 && init {
        STATS.init_nops.add(1, Relaxed);
    }
    ret
}

/// `ftrace_modify_call()`.
///
/// Not reached on x86 (the generic updates come through
/// `rftrace_replace_one()`); the record is updated already, so only the new
/// target's kind is known, and the old one is taken as the same kind.
#[no_mangle]
pub(crate) extern "C" fn rftrace_modify_call(
    rec: *mut bindings::dyn_ftrace,
    old: c_ulong,
    new: c_ulong,
) -> c_int {
    single(rec, |env, rec| {
        let new = Target::of(word(new), rec.flags());
        let old = Target {
            addr: word(old),
            direct: new.direct,
        };
        driver::modify_call(env, rec, old, new)
    })
}

/// Re-points the callback call at `ip` in an ftrace trampoline (the
/// `ftrace_call` / `ftrace_regs_call` sites of the shared callers, and the
/// call in an ops' own trampoline) to the C function `func`.
///
/// The site must hold a `CALL rel32`; anything else is refused and left
/// alone. `func` is a plain C function, so bit 0 of its address is part of
/// the address, never the direct-call "jump" bit: with GCC 12 at `-Os` C
/// functions start at odd addresses, and reading that bit as "jump" (as
/// the kernel's `ftrace_call_replace()` does) writes a `JMP` to the byte
/// before the function.
#[no_mangle]
pub(crate) extern "C" fn rftrace_update_call(ip: c_ulong, func: c_ulong) -> c_int {
    match update_callback_call(word(ip), word(func)) {
        Ok(()) => 0,
        Err(e) => {
            STATS.failures.add(1, Relaxed);
            e
        }
    }
}

/// Arch post-process: make the writes queued by the single-site hooks live.
#[no_mangle]
pub(crate) extern "C" fn rftrace_finish() {
    if finish_pending() {
        STATS.batches.add(1, Relaxed);
    }
}
