// SPDX-License-Identifier: GPL-2.0

//! The kernel side of the one update pass ([`crate::rfcore::update`]),
//! common to the architectures: the record table as the pass walks it,
//! the one ops-list walk per changed record, the plans kept between the
//! check and the write pass, the failure reports and the errno map. The
//! shadow build's checks of a pass are `kside::shadow`'s, called once
//! before it, once per record and once after it.
//!
//! The architectures (`kside/arch/x86.rs`, `kside/arch/arm64.rs`) only implement
//! [`Arch`]: plan, check, write, flush.

use core::ffi::CStr;

use kernel::{
    alloc::{
        flags::{
            __GFP_NOWARN, //
            GFP_KERNEL,
        },
        KVVec, //
    },
    bindings,
    error::code::{
        EFAULT,
        EINVAL,
        EPERM, //
    },
    ffi::c_int,
    sync::atomic::Relaxed,
};

use crate::{
    kside::lock::FtraceLocked,
    kside::ops::KernelOpsList,
    kside::pages::{
        self,
        Group, //
    },
    kside::record::{
        set_bug_type,
        Rec, //
    },
    kside::select::{
        report_problem,
        KernelCallers, //
    },
    kside::stats::{
        bump,
        STATS, //
    },
    rfcore::{
        dirty::{
            Find,
            Scope,
            Scoped, //
        },
        flags::RecFlags,
        record::{
            BugType,
            Decision,
            Update, //
        },
        select::{
            self,
            Need, //
        },
        update::{
            self,
            Arch,
            Checked,
            Counts,
            Errno,
            Facts,
            Failure,
            Records,
            Single,
            Store, //
        },
    },
};

/// The kernel's errno for a failure: the one map of every architecture.
pub(crate) fn errno(failure: &Failure) -> c_int {
    match failure.errno() {
        Errno::Fault => EFAULT.to_errno(),
        Errno::Invalid => EINVAL.to_errno(),
        Errno::Perm => EPERM.to_errno(),
    }
}

/// `ftrace_bug()` on `rec` for `failure`: the kernel's report, and ftrace
/// stops (`ftrace_kill()`).
fn bug(rec: Rec<'_>, failure: &Failure) {
    crate::kside::record::rftrace_shim_bug(errno(failure), rec);
}

/// Logs why a site was refused, and hands the expected bytes to
/// `ftrace_bug()` (through the shim's `ftrace_expected`).
/// The bytes expected and found of a mismatch, each in an INSN_MAX buffer
/// (what the shim reads: MCOUNT_INSN_SIZE <= INSN_MAX bytes of each).
fn mismatch_bytes(failure: &Failure) -> Option<([u8; update::INSN_MAX], [u8; update::INSN_MAX])> {
    let Failure::Mismatch { expected, actual } = failure else {
        return None;
    };
    let (mut e, mut a) = ([0u8; update::INSN_MAX], [0u8; update::INSN_MAX]);
    for (d, s) in e.iter_mut().zip(expected.bytes()) {
        *d = *s;
    }
    for (d, s) in a.iter_mut().zip(actual.bytes()) {
        *d = *s;
    }
    Some((e, a))
}

pub(crate) fn explain(rec: Rec<'_>, failure: &Failure) {
    match failure {
        Failure::Mismatch { .. } => {
            let Some((e, a)) = mismatch_bytes(failure) else {
                return;
            };
            crate::kside::record::rftrace_shim_refuse(rec, &e, &a);
        }
        Failure::Encode(e) => {
            kernel::pr_err!("cannot encode the call at {:#x}: {:?}\n", rec.ip(), e);
        }
        Failure::Fault => {
            kernel::pr_err!("reading the call site at {:#x} faulted\n", rec.ip());
        }
        Failure::Write => {
            kernel::pr_err!("writing the call site at {:#x} failed\n", rec.ip());
        }
    }
}

/// Reports a quarantined record through the shim, which logs it once and
/// lists it in `<debugfs>/rftrace/quarantine`: the failure, the update
/// that was asked, and the bytes expected and found when there are some.
pub(crate) fn quarantine(rec: Rec<'_>, update: Update, failure: &Failure) {
    let what: &CStr = match failure {
        Failure::Mismatch { .. } => c"unexpected bytes",
        Failure::Encode(_) => c"cannot encode the call",
        Failure::Fault => c"reading the site faulted",
        Failure::Write => c"writing the site failed",
    };
    let bytes = mismatch_bytes(failure);
    let op: &CStr = match update {
        Update::MakeCall => c"make_call",
        Update::ModifyCall => c"modify_call",
        Update::MakeNop => c"make_nop",
        Update::Ignore => c"none",
    };
    if let Failure::Encode(e) = failure {
        kernel::pr_err!("cannot encode the call at {:#x}: {:?}\n", rec.ip(), e);
    }
    let (ep, ap) = match &bytes {
        Some((e, a)) => (e.as_ptr(), a.as_ptr()),
        None => (core::ptr::null(), core::ptr::null()),
    };
    // SAFETY: `rec` is a live record (type invariants); `op` and `what`
    // are NUL-terminated static strings; `ep` and `ap` are null or point
    // at INSN_MAX >= MCOUNT_INSN_SIZE bytes, which is what the shim reads,
    // and only during the call.
    unsafe {
        bindings::rftrace_shim_quarantine(
            rec.as_ptr(),
            op.as_ptr().cast::<kernel::ffi::c_char>(),
            what.as_ptr().cast::<kernel::ffi::c_char>(),
            ep,
            ap,
        )
    };
}

/// Adds a pass's counts to the stats.
fn account(c: &Counts) {
    let bump = crate::kside::stats::bump;
    bump(&STATS.walked, c.walked);
    // Every record decided on was shown to the comparator (`shadow::record()`).
    bump(&STATS.checks, c.walked);
    bump(&STATS.make_call, c.make_call);
    bump(&STATS.modify_call, c.modify_call);
    bump(&STATS.make_nop, c.make_nop);
    bump(&STATS.batches, c.batches);
    bump(&STATS.failures, c.failures);
    bump(&STATS.quarantined, c.quarantined);
    bump(&STATS.gathers, c.gathers);
    bump(&STATS.selected, c.targets);
    bump(&STATS.changed, c.patched().saturating_add(c.failures));
    bump(&STATS.fallbacks, c.fallbacks);
}

/// The record table, as the update pass walks it, under `ftrace_lock`:
/// group by group, record by record, as `ftrace_pages_start` chains them.
/// One ops-list handle serves every walk of the pass, so the walks are
/// counted in the stats once, when the pass is over.
pub(crate) struct KernelRecords<'a> {
    lock: &'a FtraceLocked,
    list: KernelOpsList<'a>,
    finder: pages::Finder<'a>,
}

impl<'a> KernelRecords<'a> {
    pub(crate) fn new(lock: &'a FtraceLocked) -> Self {
        KernelRecords {
            lock,
            list: KernelOpsList::new(lock),
            finder: pages::Finder::new(lock),
        }
    }
}

impl<'a> Find for KernelRecords<'a> {
    fn find(&mut self, ip: u64) -> Option<Rec<'a>> {
        self.finder.find(ip)
    }
}

impl<'a> Records for KernelRecords<'a> {
    type Rec = Rec<'a>;
    type Cursor = pages::Cursor<'a>;

    fn first(&mut self) -> Option<Self::Cursor> {
        pages::Cursor::first(self.lock)
    }

    fn next(&mut self, at: Self::Cursor) -> Option<Self::Cursor> {
        at.next()
    }

    fn record(&self, at: Self::Cursor) -> Rec<'a> {
        at.rec()
    }

    fn ip(&self, rec: Rec<'a>) -> u64 {
        rec.ip()
    }

    fn flags(&self, rec: Rec<'a>) -> RecFlags {
        rec.flags()
    }

    fn store_flags(&mut self, rec: Rec<'a>, flags: RecFlags) {
        rec.set_flags(flags)
    }

    #[inline(always)]
    fn gather(&mut self, rec: Rec<'a>, need: Need) -> Facts {
        gather(&mut self.list, rec, need)
    }

    fn unique(&mut self, rec: Rec<'a>) -> Option<u64> {
        select::unique_ops(&mut self.list, rec.ip()).map(|op| op.as_ptr() as usize as u64)
    }

    fn shadow(&mut self, rec: Rec<'a>, enable: bool, decision: &Decision, facts: Option<&Facts>) {
        crate::kside::shadow::record(rec, enable, decision, facts);
    }

    fn report(&mut self, rec: Rec<'a>, update: Update, failure: &Failure) {
        set_bug_type(self.lock, update.bug_type());
        explain(rec, failure);
        bug(rec, failure);
    }

    fn quarantine(&mut self, rec: Rec<'a>, update: Update, failure: &Failure) {
        quarantine(rec, update, failure);
    }

    fn literal_set(&mut self, rec: Rec<'a>) -> Option<u64> {
        crate::kside::siteset::literal_want(rec.ip(), self.lock)
    }

    fn literal_due(&mut self, rec: Rec<'a>) -> bool {
        crate::kside::siteset::literal_due(rec.ip(), self.lock)
    }

    fn literal_written(&mut self, rec: Rec<'a>, set: u64) {
        crate::kside::siteset::literal_written(rec.ip(), set, self.lock);
    }
}

/// The facts `need` asks for about `rec`, from one walk of `list`; the
/// problems met are reported as the C core reports them.
#[inline(always)]
fn gather<'a>(list: &mut KernelOpsList<'a>, rec: Rec<'a>, need: Need) -> Facts {
    let flags = rec.flags();
    let g = select::gather(list, &mut KernelCallers, rec.ip(), flags, need);
    if let Some(p) = g.new.and_then(|c| c.problem) {
        report_problem(rec, p, true);
    }
    if let Some(p) = g.curr.and_then(|c| c.problem) {
        report_problem(rec, p, false);
    }
    Facts::from_gathered(rec.ip(), flags, &g, |op| op.as_ptr() as usize as u64)
}

/// A registry operation is over: its staged per-site sets are published,
/// and the shadow build checks the whole accounting.
pub(crate) fn settled(lock: &FtraceLocked) {
    crate::kside::siteset::publish(lock);
    crate::kside::shadow::consistency(lock);
}

/// The plans kept between the check pass and the write pass.
struct KernelStore<'a, C> {
    plans: KVVec<(Rec<'a>, Checked<C>, Decision)>,
}

impl<'a, C: Copy> Store<Rec<'a>, C> for KernelStore<'a, C> {
    fn push(&mut self, rec: Rec<'a>, change: Checked<C>, decision: Decision) -> bool {
        self.plans
            .push((rec, change, decision), GFP_KERNEL | __GFP_NOWARN)
            .is_ok()
    }

    fn get(&self, i: usize) -> Option<(Rec<'a>, &Checked<C>, Decision)> {
        self.plans
            .get(i)
            .map(|(rec, change, decision)| (*rec, change, *decision))
    }

    fn clear(&mut self) {
        self.plans.clear();
    }
}

/// The arch of a whole-table pass, with the shadow builds' test-only write
/// failure: the write of the site named in `<debugfs>/rftrace/fail_write`
/// fails once, before anything is written, as a failed text write would.
struct FailWrite<'b, A> {
    arch: &'b mut A,
}

impl<A: Arch> Arch for FailWrite<'_, A> {
    type Change = A::Change;
    const BATCH_MAX: usize = A::BATCH_MAX;
    const CALL_OPS: bool = A::CALL_OPS;

    fn plan(&mut self, facts: &Facts, decision: &Decision) -> Result<A::Change, Failure> {
        self.arch.plan(facts, decision)
    }

    fn plan_init(&mut self, ip: u64) -> Result<A::Change, Failure> {
        self.arch.plan_init(ip)
    }

    fn plan_literal(&mut self, facts: &Facts, decision: &Decision) -> Result<A::Change, Failure> {
        self.arch.plan_literal(facts, decision)
    }

    fn literal_holds(
        &mut self,
        ip: u64,
        flags: RecFlags,
        unique: Option<u64>,
        set: Option<u64>,
    ) -> Option<(u64, u64)> {
        self.arch.literal_holds(ip, flags, unique, set)
    }

    fn call_site(entry: u64) -> Option<u64> {
        A::call_site(entry)
    }

    fn ip(change: &A::Change) -> u64 {
        A::ip(change)
    }

    fn check(&mut self, change: &A::Change) -> Result<(), Failure> {
        self.arch.check(change)
    }

    fn write(
        &mut self,
        change: &Checked<A::Change>,
        literal: &mut dyn FnMut(u64),
    ) -> Result<(), Failure> {
        if cfg!(CONFIG_FTRACE_RUST_CORE_SHADOW) {
            let ip = crate::kside::abi::c_word(A::ip(change));
            if crate::kside::shim::rftrace_shim_take_fail_write(ip) {
                return Err(Failure::Write);
            }
        }
        self.arch.write(change, literal)
    }

    fn flush(&mut self) {
        self.arch.flush();
    }

    fn relax(&mut self) {
        self.arch.relax();
    }
}

/// The update pass over every record (`ftrace_replace_code()`): check
/// every change, then write them, in `A`'s batches. A failure has been
/// reported through `ftrace_bug()` when this returns.
pub(crate) fn replace_all<A: Arch>(lock: &FtraceLocked, arch: &mut A, enable: bool) {
    let mut arch = FailWrite { arch };
    let arch = &mut arch;
    let mut recs = KernelRecords::new(lock);
    let mut store = KernelStore {
        plans: KVVec::new(),
    };
    let mut counts = Counts::default();
    settled(lock);
    crate::kside::dirty::pass(enable, lock, |scope| {
        let listed = matches!(scope, Scope::Sites(_));
        let mut scoped = Scoped::new(&mut recs, scope);
        let _ = update::update_all(&mut scoped, arch, &mut store, enable, &mut counts);
        if listed {
            bump(&STATS.listed_passes, 1);
            crate::kside::shadow::left_behind(lock, enable);
        }
    });
    // Every record's literal, whatever the pass visited.
    crate::kside::shadow::literals(lock, &mut recs, arch);
    // The walks of this pass; `ops_list_walks` gets them when `recs` goes.
    crate::kside::stats::bump(&STATS.pass_walks, recs.list.walks());
    STATS.passes.add(1, Relaxed);
    account(&counts);
}

/// `__ftrace_replace_code()`: one record, the generic way; 0 or -errno
/// (the caller reports a failure with `ftrace_bug()`).
pub(crate) fn replace_one<A: Arch>(rec: Rec<'_>, arch: &mut A, enable: bool) -> c_int {
    let mut recs = KernelRecords::new(rec.lock());
    let mut counts = Counts::default();
    // What a failure is reported as, by the caller's ftrace_bug(): the
    // update asked of the record as it is now.
    let update = crate::rfcore::record::decide(rec.flags(), enable).update;
    let result = update::update_one(&mut recs, arch, rec, enable, &mut counts);
    STATS.one_shot.add(1, Relaxed);
    account(&counts);
    match result {
        Ok(_) => 0,
        Err(failure) => {
            set_bug_type(rec.lock(), update.bug_type());
            explain(rec, &failure);
            errno(&failure)
        }
    }
}

/// `ftrace_update_code()`'s loop over the new record groups from `first`
/// (the table at boot, or a module's groups at load): every record gets
/// `flags` and, with `init`, its site's first conversion to a NOP (the
/// compiler's call, as `ftrace_init_nop()` does one site at a time). A
/// failure is reported as `ftrace_nop_initialize()` reports it
/// (`ftrace_bug()`, bug type "init") and ends that group, as in C. Returns
/// the records done, or `None` if ftrace was found disabled (C's early
/// return), which is checked before each group rather than each record.
///
/// One counter update for the whole call, and no call per record beyond
/// the text read and write: this is the boot's hot loop.
pub(crate) fn init_groups<A: Arch>(
    lock: &FtraceLocked,
    arch: &mut A,
    first: Option<Group<'_>>,
    flags: RecFlags,
    init: bool,
) -> Option<u64> {
    let mut done = 0u64;
    let mut failed = false;
    let mut group = first;
    while let Some(g) = group {
        if crate::kside::shim::ftrace_c_disabled() {
            failed = true;
            break;
        }
        let len = g.len();
        // Every record of the group, unless one fails: counted once per
        // group, not per record.
        let mut converted = 0usize;
        if !init {
            converted = set_flags_only(&mut g.handles(len, lock), flags);
        } else {
            // The first conversion of every record (the boot's hot loop:
            // one record's read, check and write, no count, no other call).
            for rec in g.handles(len, lock) {
                rec.set_flags(flags);
                let init = arch.plan_init(rec.ip()).and_then(|change| {
                    let change = Checked::check(arch, change)?;
                    // A first conversion names no set in a literal.
                    arch.write(&change, &mut |_| {})
                });
                if let Err(failure) = init {
                    // The records before this one are done.
                    STATS.failures.add(1, Relaxed);
                    explain(rec, &failure);
                    set_bug_type(lock, BugType::Init);
                    bug(rec, &failure);
                    break;
                }
                converted = converted.saturating_add(1);
            }
        }
        done = done.saturating_add(u64::try_from(converted).unwrap_or(u64::MAX));
        group = g.following();
    }
    // A kernel whose compiler or objtool wrote the NOPs at build time
    // (x86_64 with clang: `CC_USING_NOP_MCOUNT`) has nothing to convert.
    let counter = if init {
        &STATS.init_nops
    } else {
        &STATS.nop_at_build
    };
    crate::kside::stats::bump(counter, done);
    if failed {
        None
    } else {
        Some(done)
    }
}

/// Stores `flags` in every record of `recs` (no first conversion); returns
/// the records done.
#[inline(never)]
fn set_flags_only<'a>(recs: &mut impl Iterator<Item = Rec<'a>>, flags: RecFlags) -> usize {
    let mut done = 0usize;
    for rec in recs {
        rec.set_flags(flags);
        done = done.saturating_add(1);
    }
    done
}

/// One of the arch hooks the generic code calls with explicit addresses
/// (`ftrace_make_call()`, `ftrace_modify_call()`, `ftrace_make_nop()`,
/// the first initialisation); 0 or -errno.
pub(crate) fn single<A: Arch>(rec: Rec<'_>, arch: &mut A, op: Single) -> c_int {
    let mut recs = KernelRecords::new(rec.lock());
    let counter = match op {
        Single::MakeCall { .. } => &STATS.make_call,
        Single::ModifyCall { .. } => &STATS.modify_call,
        Single::MakeNop { .. } => &STATS.make_nop,
        Single::Init => &STATS.init_nops,
    };
    match update::single(&mut recs, arch, rec, op) {
        Ok(()) => {
            counter.add(1, Relaxed);
            0
        }
        Err(failure) => {
            STATS.failures.add(1, Relaxed);
            explain(rec, &failure);
            errno(&failure)
        }
    }
}
