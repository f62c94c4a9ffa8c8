// SPDX-License-Identifier: GPL-2.0

//! The kernel's ops (`struct ftrace_ops`) as the core sees them: the
//! handles on an ops, made under a C call ([`CallOps`]), under
//! `ftrace_lock` ([`Ops`], [`ListOps`]) or under `direct_mutex`
//! ([`DirectOps`]); the links of the ops list and its walk
//! ([`KernelOpsList`]); the accounting's questions about the other ops on
//! a record ([`KernelOthers`]); and whether the architecture has per-site
//! ops literals ([`call_ops_mode()`]). One module, because these types
//! make one another from their private fields.
//!
//! A leaf module with `unsafe` code: the ops' and the list's accesses, and
//! the foreign declarations.

use core::{
    marker::PhantomData,
    ptr::{
        self,
        NonNull, //
    }, //
};

use kernel::{
    bindings,
    ffi::{
        c_int,
        c_ulong, //
    },
    sync::atomic::{
        Atomic,
        Relaxed,
        Release, //
    }, //
};

use crate::{
    kside::abi::{
        c_word,
        word, //
    },
    kside::lock::{
        FtraceCell,
        FtraceLocked, //
    },
    kside::record::Rec,
    rfcore::{
        account::{
            CallOps as CallOpsMode,
            OpsProps,
            Others, //
        },
        select::{
            self,
            OpsList, //
        },
    }, //
};

// Why they are `safe`: each function is defined by the C shim
// (`c/rftrace_shim*.c`) or by the patched `kernel/trace/ftrace.c` with exactly
// this prototype (checked against bindgen's below), and asks nothing but what
// its arguments' types prove: it reads the ops an `Ops` or `ListOps` proves
// live (and, under the `ftrace_lock` the handle proves held, the ops list and
// the ops' hashes), and the record a `Rec` proves live.
//
// The lint looks through the views' pointers into the C structs, some of
// which hold an empty arch placeholder (`dyn_arch_ftrace` on x86_64, as in
// C); only pointers cross, as in bindgen's declarations of the same
// functions.
#[allow(improper_ctypes)]
unsafe extern "C" {
    /// The function the shared callers call for `ops` (its own or an
    /// assist function).
    pub(crate) safe fn ftrace_ops_get_func(ops: Ops<'_>) -> bindings::ftrace_func_t;
    /// Whether the hashes of `op` (`old`: those it had before the change
    /// in progress) cover `ip`.
    pub(crate) safe fn ftrace_c_ops_covers(op: ListOps<'_>, ip: c_ulong, old: bool) -> bool;
    /// Whether an ops on `rec` other than the one being removed wants
    /// its registers saved.
    pub(crate) safe fn ftrace_c_rec_ops_need_regs(rec: Rec<'_>) -> bool;
    /// Whether `ops` shares `global_ops`' hashes (a pointer comparison).
    pub(crate) safe fn ftrace_c_shares_global_hash(ops: Ops<'_>) -> bool;
    /// Initialises `ops` and `subops` if they are not yet, and gives a
    /// null hash of either the empty one.
    pub(crate) safe fn ftrace_c_subops_prepare(ops: Ops<'_>, subops: Ops<'_>);
}

crate::kside::abi::same_prototype!(
    bindings::ftrace_ops_get_func,
    ftrace_ops_get_func,
    fn(Ops<'static>) -> bindings::ftrace_func_t
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_ops_covers,
    ftrace_c_ops_covers,
    fn(ListOps<'static>, c_ulong, bool) -> bool
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_rec_ops_need_regs,
    ftrace_c_rec_ops_need_regs,
    fn(Rec<'static>) -> bool
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_shares_global_hash,
    ftrace_c_shares_global_hash,
    fn(Ops<'static>) -> bool
);
crate::kside::abi::same_prototype!(
    bindings::ftrace_c_subops_prepare,
    ftrace_c_subops_prepare,
    fn(Ops<'static>, Ops<'static>) -> ()
);

/// An ops the C caller keeps live for the length of its call into the
/// core (`'c`), whatever locks are held: the entry points validate the
/// pointer once into this handle, and [`CallOps::locked()`] turns it into
/// an [`Ops`] under `ftrace_lock`.
///
/// # Invariants
///
/// `ptr` is a live, initialised ops for `'c`.
///
/// Made only by C: an entry point takes an `Option<CallOps>` where its
/// prototype has a `struct ftrace_ops *` (`kside::abi`), and the header
/// asks the caller for exactly these invariants.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct CallOps<'c> {
    ptr: NonNull<bindings::ftrace_ops>,
    _call: PhantomData<&'c bindings::ftrace_ops>,
}

crate::kside::abi::lowered_as!(
    Option<CallOps<'static>> => *mut bindings::ftrace_ops,
    CallOps<'static> => *mut bindings::ftrace_ops,
    Ops<'static> => *mut bindings::ftrace_ops,
    ListOps<'static> => *mut bindings::ftrace_ops,
);

impl<'c> CallOps<'c> {
    /// The ops under `ftrace_lock`.
    pub(crate) fn locked<'a>(self, _lock: &'a FtraceLocked) -> Ops<'a>
    where
        'c: 'a,
    {
        // INVARIANT: live for `'c`, which outlives `'a`, and `_lock`
        // proves ftrace_lock for `'a`.
        Ops {
            ptr: self.ptr,
            _lock: PhantomData,
        }
    }

    /// The ops under `direct_mutex`.
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) fn direct<'d>(self, _direct: &'d crate::kside::lock::DirectLocked) -> DirectOps<'d>
    where
        'c: 'd,
    {
        // INVARIANT: live for `'c`, which outlives `'d`, and `_direct`
        // proves direct_mutex for `'d`.
        DirectOps {
            ptr: self.ptr,
            _lock: PhantomData,
        }
    }

    /// The raw pointer, for C calls.
    pub(crate) fn as_ptr(self) -> *mut bindings::ftrace_ops {
        self.ptr.as_ptr()
    }
}

/// An `ftrace_ops` that is being added to or removed from records.
///
/// # Invariants
///
/// The pointer is to a live, registered ops, and `ftrace_lock` is held for
/// `'a`, which keeps its flags, trampoline and hashes as they are.
///
/// `#[repr(transparent)]`: the C functions that only read an ops under
/// `ftrace_lock` are declared safe on it (`kside::shim`).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Ops<'a> {
    ptr: NonNull<bindings::ftrace_ops>,
    _lock: PhantomData<&'a FtraceLocked>,
}

impl<'a> Ops<'a> {
    /// Wraps an ops pointer received from C.
    ///
    /// # Safety
    ///
    /// `ptr` is null or a live ops, valid for `'a`.
    pub(crate) unsafe fn from_raw(
        ptr: *mut bindings::ftrace_ops,
        _lock: &'a FtraceLocked,
    ) -> Option<Self> {
        // INVARIANT: the caller's contract, and `_lock` proves ftrace_lock.
        NonNull::new(ptr).map(|ptr| Ops {
            ptr,
            _lock: PhantomData,
        })
    }

    /// A handle on an ops the caller owns (a test ops, not registered).
    #[cfg_attr(not(CONFIG_FTRACE_RUST_CORE_KUNIT_TEST), allow(dead_code))]
    pub(crate) fn from_mut(ops: &'a mut bindings::ftrace_ops, _lock: &'a FtraceLocked) -> Self {
        // INVARIANT: the exclusive borrow keeps the ops valid for `'a`.
        Ops {
            ptr: NonNull::from(ops),
            _lock: PhantomData,
        }
    }

    /// What the accounting needs to know about the ops.
    pub(crate) fn props(self) -> OpsProps {
        let fixed = self.fixed();
        let flags = self.flags();
        let get_func = ftrace_ops_get_func(self);
        let addr = |f: bindings::ftrace_func_t| f.map_or(0usize, |f| f as usize);
        let flag = |bit: u32| flags & u64::from(bit) != 0;
        OpsProps {
            direct: flag(bindings::FTRACE_OPS_FL_DIRECT),
            save_regs: flag(bindings::FTRACE_OPS_FL_SAVE_REGS),
            trampoline: fixed.trampoline != 0,
            call_ops_ok: addr(get_func) == addr(fixed.func),
        }
    }

    /// The ops' fields that only `ftrace_lock`'s holder writes.
    fn fixed(self) -> Fixed {
        Fixed::of(Settled {
            ptr: self.ptr,
            _life: PhantomData,
        })
    }

    /// The raw pointer, for C calls.
    pub(crate) fn as_ptr(self) -> *mut bindings::ftrace_ops {
        self.ptr.as_ptr()
    }

    /// The flags word, which lockless readers (the list function) read
    /// too: written only under ftrace_lock, each store whole.
    pub(crate) fn flags_word(self) -> &'a Atomic<u64> {
        // SAFETY: the ops is live for `'a` (type invariants); its flags
        // word is an aligned `unsigned long`, a `u64` on the 64-bit arches
        // this core builds for, accessed atomically by every Rust reader.
        unsafe { Atomic::from_ptr(ptr::addr_of_mut!((*self.ptr.as_ptr()).flags).cast::<u64>()) }
    }

    /// The flags word.
    pub(crate) fn flags(self) -> u64 {
        self.flags_word().load(Relaxed)
    }

    /// Sets the flags word.
    pub(crate) fn set_flags(self, flags: u64) {
        self.flags_word().store(flags, Relaxed);
    }

    /// The manager of a sub-ops (`ops->managed`), if it has one.
    pub(crate) fn managed(self, lock: &'a FtraceLocked) -> Option<Ops<'a>> {
        // SAFETY: a sub-ops' manager is live while the sub-ops is attached
        // to it, which ftrace_lock (held, `lock`) keeps.
        unsafe { Ops::from_raw(self.fixed().managed, lock) }
    }

    /// Whether the ops has a function of its own (`ops->func` set).
    #[cfg_attr(not(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS), allow(dead_code))]
    pub(crate) fn has_func(self) -> bool {
        self.fixed().func.is_some()
    }

    /// The ops' trampoline, 0 for none.
    pub(crate) fn trampoline(self) -> u64 {
        word(self.fixed().trampoline)
    }

    /// Points a direct ops at a new target (`ops->direct_call`, read
    /// without a lock by the list function: one word, stored whole).
    #[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
    pub(crate) fn set_direct_call(self, addr: u64) {
        // SAFETY: a live ops (type invariants); the field is written only
        // under ftrace_lock and read whole by its lockless readers.
        let at = unsafe {
            kernel::sync::atomic::Atomic::from_ptr(core::ptr::addr_of_mut!(
                (*self.ptr.as_ptr()).direct_call
            ))
        };
        at.store(c_word(addr), Relaxed);
    }

    /// Asks a direct ops whether it may share the function at `ip` with
    /// an IPMODIFY ops (its `ops_func`, `FTRACE_OPS_CMD_ENABLE_SHARE_IPMODIFY_SELF`):
    /// 0 or an errno, or `None` if it has no `ops_func`.
    pub(crate) fn share_ipmodify_self(self, ip: u64) -> Option<c_int> {
        Settled {
            ptr: self.ptr,
            _life: PhantomData,
        }
        .share_ipmodify_self(ip)
    }
}

/// A live ops whose fields other than its flags word nobody else writes
/// for `'a`: an [`Ops`] (`ftrace_lock` held) or a [`DirectOps`]
/// (`direct_mutex` held, which keeps a direct ops' fields).
///
/// # Invariants
///
/// `ptr` is a live ops for `'a`; its flags word is accessed atomically,
/// and its other fields are written, if at all, only by the holder of the
/// lock that makes the handle this comes from.
#[derive(Clone, Copy)]
struct Settled<'a> {
    ptr: NonNull<bindings::ftrace_ops>,
    _life: PhantomData<&'a bindings::ftrace_ops>,
}

/// The fields of an ops that [`Settled`] keeps, read once.
struct Fixed {
    trampoline: c_ulong,
    func: bindings::ftrace_func_t,
    managed: *mut bindings::ftrace_ops,
    ops_func: bindings::ftrace_ops_func_t,
}

impl Fixed {
    fn of(ops: Settled<'_>) -> Self {
        let p = ops.ptr.as_ptr();
        // SAFETY: a live ops whose fields read here nobody writes
        // meanwhile (type invariants of `Settled`); each is read as a
        // plain value, without a reference to the struct.
        unsafe {
            Fixed {
                trampoline: ptr::addr_of!((*p).trampoline).read(),
                func: ptr::addr_of!((*p).func).read(),
                managed: ptr::addr_of!((*p).managed).read(),
                ops_func: ptr::addr_of!((*p).ops_func).read(),
            }
        }
    }
}

impl Settled<'_> {
    /// [`Ops::share_ipmodify_self()`].
    fn share_ipmodify_self(self, ip: u64) -> Option<c_int> {
        let ask = Fixed::of(self).ops_func?;
        // SAFETY: an ops' own callback, called on that live ops as the
        // kernel calls it, with the lock held that keeps it.
        Some(unsafe {
            ask(
                self.ptr.as_ptr(),
                c_word(ip),
                bindings::ftrace_ops_cmd_FTRACE_OPS_CMD_ENABLE_SHARE_IPMODIFY_SELF,
            )
        })
    }
}

/// A live ops whose direct-call fields and filter `direct_mutex`, held
/// for `'d`, keeps: only the holder writes them (`kside::direct`).
///
/// # Invariants
///
/// `ptr` is a live ops for `'d`, and `direct_mutex` is held for `'d`.
///
/// `#[repr(transparent)]`: the C functions that read or write a direct
/// ops' fields under `direct_mutex` are declared safe on it
/// (`kside::direct`).
#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
#[repr(transparent)]
#[derive(Clone, Copy)]
pub(crate) struct DirectOps<'d> {
    ptr: NonNull<bindings::ftrace_ops>,
    _lock: PhantomData<&'d crate::kside::lock::DirectLocked>,
}

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
crate::kside::abi::lowered_as!(DirectOps<'static> => *mut bindings::ftrace_ops);

#[cfg(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)]
impl DirectOps<'_> {
    /// [`Ops::share_ipmodify_self()`], asked under `direct_mutex` as the C
    /// code asks a direct ops.
    pub(crate) fn share_ipmodify_self(self, ip: u64) -> Option<c_int> {
        Settled {
            ptr: self.ptr,
            _life: PhantomData,
        }
        .share_ipmodify_self(ip)
    }
}

/// The questions the accounting asks about the other ops on a record,
/// answered by the kernel's ops-list walks.
pub(crate) struct KernelOthers<'a> {
    pub(crate) rec: Rec<'a>,
    pub(crate) ops: Ops<'a>,
    /// The answer `survivor_call_ops_ok()` gave, if it was asked (for the
    /// shadow comparison).
    pub(crate) survivor_ok: Option<bool>,
}

impl<'a> KernelOthers<'a> {
    pub(crate) fn new(rec: Rec<'a>, ops: Ops<'a>) -> Self {
        KernelOthers {
            rec,
            ops,
            survivor_ok: None,
        }
    }

    fn exclude(&self) -> ListOps<'a> {
        ListOps {
            ptr: self.ops.ptr,
            _lock: PhantomData,
        }
    }
}

impl Others for KernelOthers<'_> {
    fn need_regs(&mut self) -> bool {
        ftrace_c_rec_ops_need_regs(self.rec)
    }

    fn other_has_trampoline(&mut self) -> bool {
        let mut list = KernelOpsList::new(self.rec.lock());
        select::tramp_ops_other(&mut list, self.rec.ip(), self.exclude()).is_some()
    }

    fn survivor_call_ops_ok(&mut self) -> bool {
        let mut list = KernelOpsList::new(self.rec.lock());
        let ok = select::unique_ops_other(&mut list, self.rec.ip(), self.exclude())
            .is_some_and(|op| op.call_ops_ok());
        self.survivor_ok = Some(ok);
        ok
    }
}

/// `ftrace_list_end`, the list's end marker.
pub(crate) fn list_end() -> *mut bindings::ftrace_ops {
    ptr::addr_of_mut!(bindings::ftrace_list_end)
}

/// The head of the ops list, `ftrace_ops_list`, as its writers read it.
///
/// A plain read: every write of the head is made under ftrace_lock, which
/// `_lock` proves held, so none overlaps this read (the lockless readers
/// of the tracing path use `rcu_dereference()`; the writes they see are
/// [`set_head()`]'s release stores).
pub(crate) fn read_head(_lock: &FtraceLocked) -> *mut bindings::ftrace_ops {
    // SAFETY: a static that lives forever, written only under ftrace_lock
    // (held, `_lock`): no write overlaps this read.
    unsafe { ptr::addr_of!(bindings::ftrace_ops_list).read() }
}

/// The first ops of the list, if it has one.
pub(crate) fn first_ops(lock: &FtraceLocked) -> Option<Ops<'_>> {
    listed(read_head(lock), lock)
}

/// The ops after `ops` on the list, if there is one.
pub(crate) fn next_ops<'a>(ops: Ops<'a>, lock: &'a FtraceLocked) -> Option<Ops<'a>> {
    listed(read_next(ops), lock)
}

/// The ops a link of the list (its head or an ops' `next`) points to:
/// `None` for `ftrace_list_end`. The one conversion of a list link into a
/// handle.
fn listed(link: *mut bindings::ftrace_ops, lock: &FtraceLocked) -> Option<Ops<'_>> {
    if link == list_end() {
        return None;
    }
    // SAFETY: `link` was read from the list under ftrace_lock (held,
    // `lock`): an ops on the list, live while the lock is held.
    unsafe { Ops::from_raw(link, lock) }
}

/// The `next` link of `ops`, as the list's writers read it: a plain read,
/// as in [`read_head()`].
pub(crate) fn read_next(ops: Ops<'_>) -> *mut bindings::ftrace_ops {
    // SAFETY: `ops` is live while the borrow lasts, and its `next` is
    // written only under ftrace_lock, which `ops` proves held (type
    // invariants of `Ops`): no write overlaps this read.
    unsafe { ptr::addr_of!((*ops.as_ptr()).next).read() }
}

/// Publishes `to` as the head of the ops list (`rcu_assign_pointer()`:
/// a release store, for the lockless readers).
pub(crate) fn set_head(lock: &FtraceLocked, to: *mut bindings::ftrace_ops) {
    head(lock).store(to, Release);
}

/// Publishes `to` as the `next` link of `ops`, as [`set_head()`].
pub(crate) fn set_next(ops: Ops<'_>, to: *mut bindings::ftrace_ops) {
    next(ops).store(to, Release);
}

/// The head of the ops list, `ftrace_ops_list`, for the release store.
fn head(_lock: &FtraceLocked) -> &Atomic<*mut bindings::ftrace_ops> {
    // SAFETY: a static, aligned pointer that lives forever; its readers
    // use `rcu_dereference()` or hold ftrace_lock, and its writers hold
    // ftrace_lock (`_lock`), so every access is atomic or excluded by the
    // lock.
    unsafe { Atomic::from_ptr(ptr::addr_of_mut!(bindings::ftrace_ops_list)) }
}

/// The `next` link of `ops`, for the release store.
fn next(ops: Ops<'_>) -> &Atomic<*mut bindings::ftrace_ops> {
    // SAFETY: `ops` is live while the borrow lasts (type invariants of
    // `Ops`), and its `next` is read with `rcu_dereference()` or under
    // ftrace_lock and written only under ftrace_lock, which `ops` proves
    // held.
    unsafe { Atomic::from_ptr(ptr::addr_of_mut!((*ops.as_ptr()).next)) }
}

/// The ops being removed (the C `removed_ops`), as the registry marks it
/// ([`set_removed_ops()`]): its address, 0 when no ops is being removed.
/// The target walks read it here, without a call into C.
static REMOVED_OPS: FtraceCell<usize> = FtraceCell::new(0);

/// Marks `ops` as the ops being removed (`None`: none is). The registry
/// calls it where it sets the C side's `removed_ops`, which C's own
/// target walks (the shadow comparator's) read.
pub(crate) fn set_removed_ops(ops: Option<Ops<'_>>, lock: &FtraceLocked) {
    REMOVED_OPS.set(lock, ops.map_or(0, |op| op.as_ptr() as usize));
}

/// An entry of the kernel's ops list, or the list's end marker.
///
/// # Invariants
///
/// The pointer is to an ops reached by walking `ftrace_ops_list` (or to
/// `ftrace_list_end`), and `ftrace_lock` is held for `'a`, which keeps the
/// list and every ops on it alive and unchanged.
///
/// `#[repr(transparent)]`, as [`Ops`].
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct ListOps<'a> {
    ptr: NonNull<bindings::ftrace_ops>,
    _lock: PhantomData<&'a FtraceLocked>,
}

impl<'a> ListOps<'a> {
    /// Whether the ops' hashes (`old`: the hashes it had before the change
    /// in progress) cover `ip`.
    fn covers(self, ip: u64, old: bool) -> bool {
        ftrace_c_ops_covers(self, c_word(ip), old)
    }

    /// The raw pointer, for C calls.
    pub(crate) fn as_ptr(self) -> *mut bindings::ftrace_ops {
        self.ptr.as_ptr()
    }

    fn flags(self) -> u64 {
        // SAFETY: a live ops whose flags are written only under
        // ftrace_lock, which the handle proves held (type invariants): a
        // plain read overlaps no write. Not `Ops::flags()`: the walks read
        // this once per ops per record, and the kernel's atomic load is an
        // out-of-line call.
        word(unsafe { ptr::addr_of!((*self.ptr.as_ptr()).flags).read() })
    }

    /// The same ops as an [`Ops`] handle.
    fn as_ops(self) -> Ops<'a> {
        // INVARIANT: an ops on the list is live while ftrace_lock is held
        // for `'a`, which the list handle proves.
        Ops {
            ptr: self.ptr,
            _lock: PhantomData,
        }
    }

    /// The ops' function may be called directly from a site's literal
    /// (`ftrace_ops_get_func(op) == op->func`: no assist function).
    fn call_ops_ok(self) -> bool {
        self.as_ops().props().call_ops_ok
    }

    /// The ops is enabled (`FTRACE_OPS_FL_ENABLED`): the records it covers
    /// count it.
    pub(crate) fn enabled(self) -> bool {
        self.flags() & u64::from(bindings::FTRACE_OPS_FL_ENABLED) != 0
    }

    /// What the accounting knows about the ops, and whether it is an
    /// IPMODIFY ops.
    pub(crate) fn props(self) -> (OpsProps, bool) {
        let ipmodify = self.flags() & u64::from(bindings::FTRACE_OPS_FL_IPMODIFY) != 0;
        (self.as_ops().props(), ipmodify)
    }
}

/// The kernel's ops list, walked as `do_for_each_ftrace_op()` walks it.
///
/// Walks are counted, and added to `ops_list_walks` in the stats when the
/// list handle goes (one update of the stats per pass, not per walk).
pub(crate) struct KernelOpsList<'a> {
    lock: &'a FtraceLocked,
    walks: u64,
}

impl<'a> KernelOpsList<'a> {
    /// The list, readable while `ftrace_lock` is held.
    pub(crate) fn new(lock: &'a FtraceLocked) -> Self {
        KernelOpsList { lock, walks: 0 }
    }

    /// The walks begun through this handle.
    pub(crate) fn walks(&self) -> u64 {
        self.walks
    }

    fn wrap(ptr: *mut bindings::ftrace_ops) -> Option<ListOps<'a>> {
        // INVARIANT: an ops of the list, under ftrace_lock for `'a`.
        NonNull::new(ptr).map(|ptr| ListOps {
            ptr,
            _lock: PhantomData,
        })
    }
}

impl Drop for KernelOpsList<'_> {
    fn drop(&mut self) {
        crate::kside::stats::bump(&crate::kside::stats::STATS.ops_walks, self.walks);
    }
}

impl<'a> OpsList for KernelOpsList<'a> {
    type Ops = ListOps<'a>;

    fn head(&mut self) -> Option<ListOps<'a>> {
        self.walks = self.walks.saturating_add(1);
        // As `do_for_each_ftrace_op()`, the head is visited even when it
        // is `ftrace_list_end` (an empty list).
        Self::wrap(read_head(self.lock))
    }

    fn next(&mut self, op: ListOps<'a>) -> Option<ListOps<'a>> {
        let to = read_next(op.as_ops());
        if to == list_end() {
            return None;
        }
        Self::wrap(to)
    }

    fn trampoline(&mut self, op: ListOps<'a>) -> u64 {
        op.as_ops().trampoline()
    }

    fn adding(&mut self, op: ListOps<'a>) -> bool {
        op.flags() & u64::from(bindings::FTRACE_OPS_FL_ADDING) != 0
    }

    fn modifying(&mut self, op: ListOps<'a>) -> bool {
        op.flags() & u64::from(bindings::FTRACE_OPS_FL_MODIFYING) != 0
    }

    fn covers(&mut self, op: ListOps<'a>, ip: u64) -> bool {
        op.covers(ip, false)
    }

    fn covered(&mut self, op: ListOps<'a>, ip: u64) -> bool {
        op.covers(ip, true)
    }

    fn removed(&mut self) -> Option<ListOps<'a>> {
        // INVARIANT (of the `ListOps` made): the address of the ops being
        // removed, live until the registry clears the mark, under
        // ftrace_lock.
        Self::wrap(REMOVED_OPS.get(self.lock) as *mut bindings::ftrace_ops)
    }
}

/// Whether this architecture has per-site ops literals.
pub(crate) fn call_ops_mode() -> CallOpsMode {
    if cfg!(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS) {
        CallOpsMode::Supported
    } else {
        CallOpsMode::Unsupported
    }
}
