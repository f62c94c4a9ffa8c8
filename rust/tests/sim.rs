// SPDX-License-Identifier: GPL-2.0

//! The core driven through a simulated kernel, against a reference model.
//!
//! [`Sim`] plays the C side of ftrace: the ops list, filter and notrace
//! hashes, the record table of core text and modules, 5-byte x86 call sites,
//! the trampoline and direct-call lookups, module load and unload. It
//! drives `rfcore` as the kernel does: per-record accounting through
//! `rfcore::account`, decisions through `rfcore::record::decide`, patching
//! through `rfcore::update` over the simulated x86 of `util` (`SimX86`):
//! `update_all` for updates, `update_one` when a module's records are
//! enabled, `single` (`Init`) for the conversion of the compiler's
//! `call __fentry__`; the direct-call interface (register, change of
//! target, unregister) through `rfcore::direct`'s decisions and
//! `rfcore::ipmodify`'s retarget question, as `rust/kside/direct.rs` does.
//! Random user requests (tracers, function-graph instances, kprobes,
//! fprobes, direct calls, live patches, custom ops, modules) are applied to
//! it and to [`sim_model::Model`], which recomputes from the requests alone
//! what every site must be, what each request returns, and what the
//! direct-functions table must hold (and how wide it is); the two are
//! compared after every step.
//!
//! `cargo test` runs [`DEFAULT_CASES`] cases; `RFT_SIM_CASES=N` runs N, and
//! `RFT_SEED=S` starts at seed S (case i uses seed S+i). A failure prints
//! the seed of the failing case and the step. The test
//! `direct_table_mistakes_are_caught` runs cases with a deliberate mistake
//! ([`Fault`]) in the direct-call code and requires the comparison to see
//! each.
//!
//! # Kernel facts relied on (Linux 7.2)
//!
//! `kernel/trace/ftrace.c` unless named otherwise:
//!
//! - Matching (1574 `hash_contains_ip`, 1898 `__ftrace_hash_rec_update`): a
//!   site is in an ops if its filter is empty or holds it, and its notrace
//!   set does not. Records that are disabled and not a call are skipped
//!   (1778 `skip_record`). The walk stops once as many records as the
//!   filter has entries were matched.
//! - Registration (3179 `ftrace_startup`): the ops goes to the head of the
//!   list (`add_ftrace_ops`), gets ENABLED and ADDING, IPMODIFY is claimed
//!   (refused with -EBUSY on a site another IPMODIFY ops holds, 2076), the
//!   records are accounted up, and an update pass runs if a record needs
//!   one. Unregistration (3233 `ftrace_shutdown`) takes it off the list
//!   first, releases IPMODIFY, accounts down, and runs the update with the
//!   ops as `removed_ops`, its old hash being its hash.
//! - A filter or notrace change of a registered ops (1537 `ftrace_hash_move`,
//!   5108 `ftrace_ops_update_code`): IPMODIFY re-claimed for the new filter,
//!   accounted down over the old hash while the ops is still on the list,
//!   hash replaced, accounted up over the new one, then an update always
//!   runs with the ops MODIFYING and its old hash kept. Because the ops is
//!   still listed during the down pass, the regs question (1752
//!   `test_rec_ops_needs_regs`) finds the ops itself: a site left by a
//!   SAVE_REGS ops through a filter change keeps REGS while other ops
//!   remain. The model allows exactly that (`linger`).
//! - Targets: `ftrace_get_addr_new` (2743) is the direct address of the
//!   site (`direct_functions`) if DIRECT and count 1, else the trampoline of
//!   the first listed ops that contains the site if TRAMP, else the regs or
//!   plain caller from REGS; `ftrace_get_addr_curr` (2784) uses the `_EN`
//!   bits and, for a trampoline, `ftrace_find_tramp_ops_curr` (2592):
//!   `removed_ops` by its old hash first, then listed ops with a trampoline
//!   that are not ADDING, by their old hash if MODIFYING.
//! - Trampolines: x86 gives every ops without one its own
//!   (`arch/x86/kernel/ftrace.c` 485 `arch_ftrace_update_trampoline`).
//! - Direct calls, as `rust/kside/direct.rs` carries them out (the C
//!   `register_ftrace_direct`, `unregister_ftrace_direct` and
//!   `__modify_ftrace_direct` in the same order), with the decisions of
//!   `rfcore::direct`: registering refuses with `-EINVAL` what
//!   [`direct::admit`] refuses (an ops with a function or trampoline of its
//!   own, not initialised, started, or naming no function), then with
//!   `-EBUSY` an ops one of whose functions has an entry in the
//!   direct-functions table, changing nothing; else it builds a new table
//!   ([`direct::table_bits`] wide) of the old entries and one per function
//!   of the ops calling the target, installs it, makes the ops a direct
//!   one (DIRECT | SAVE_REGS, the kernel's `MULTI_FLAGS` on x86; the regs
//!   caller as trampoline; the target as `direct_call`) and starts it; if
//!   the start-up fails the old table goes back and the ops keeps no
//!   function or trampoline. Changing the target ([`direct::admit_change`])
//!   starts a stub ops over the same functions, asks the IPMODIFY
//!   question again for every function (`rfcore::ipmodify`, retarget: a
//!   function an IPMODIFY ops is on is refused with `-EBUSY` unless the
//!   direct ops has an `ops_func` that agrees to share), points the
//!   table's entries and the ops at the new target, and stops the stub.
//!   Unregistering ([`direct::admit_change`]) stops the ops, then takes
//!   out the table entries of its functions that call the address passed
//!   ([`direct::same_target`]: bit 0, the jump marker, is not compared
//!   where it is one), in place. A direct ops may not join a site held by
//!   an IPMODIFY ops without `ops_func` (2127); an IPMODIFY ops may join a
//!   direct site.
//! - Kinds (flags): function tracer instances `FTRACE_OPS_FL_PID` only
//!   (`trace_functions.c` 70); the function-graph manager and its sub-ops
//!   (`fgraph.c` 1015, 3629 `ftrace_startup_subops`, 3767
//!   `ftrace_shutdown_subops`, 3716 `rebuild_hashes`: the manager's filter is
//!   the union of the sub-ops' filters minus their notrace sets, empty if a
//!   sub-ops traces everything, with the intersection of notrace sets;
//!   built newest sub-ops first, or incrementally on add); kprobes
//!   (`kprobes.c` 1133-1179): one SAVE_REGS ops for all kprobes and one
//!   SAVE_REGS | IPMODIFY ops for those with a post handler, filter = the
//!   probed sites, registered with the first probe, filter set before
//!   registering and cleared after unregistering; fprobe's entry ops
//!   (`fprobe.c` 362, SAVE_ARGS is 0 with ftrace args on x86) treated the
//!   same way; live patches (`livepatch/patch.c` 187) one IPMODIFY ops per
//!   patched function; custom dynamic ops as in `samples/ftrace/ftrace-ops.c`
//!   (SAVE_REGS, RECURSION/RCU assist optional). An ops is callable through
//!   a per-site literal unless it needs the RECURSION/RCU assist (8707).
//! - Modules (7877 `ftrace_update_code`, 8147 `ftrace_module_init`, 8067
//!   `ftrace_module_enable`, 7993 `ftrace_release_mod`): records are created
//!   DISABLED and each `call __fentry__` is made a NOP; at enable, an
//!   invalid site becomes DISABLED for good, the others lose DISABLED and,
//!   if any ops is started, gain one user per listed ops that references
//!   them (7913 `referenced_filters`, which sets REGS and TRAMP itself and
//!   skips direct and IPMODIFY ops), and a site with users is patched
//!   through `__ftrace_replace_code`. On unload (`kernel/module/main.c`
//!   865-867) the going notifiers run first (kprobes and fprobes of the
//!   module are removed, live patches of it reverted), then the records go
//!   without any accounting and the trace arrays' hashes have the module's
//!   entries set to address 0 (7961 `clear_mod_from_hashes`); other hashes
//!   (the graph manager's copy, custom ops) keep them. A module a direct
//!   call is attached to cannot be unloaded (its user holds a reference).
//!   Module addresses are never reused within a case, so stale entries
//!   never match a new site.
//! - Weak functions (4426 `test_for_valid_rec`): a site outside a known
//!   function is DISABLED after the boot conversion and never traced.
//!
//! Not simulated: the `ftrace_enabled` sysctl, the shared global_ops hash
//! (every tracer here has its own), `:mod:` cached filters, the batch
//! direct interface (`update_ftrace_direct_*`), allocation failures,
//! failures of the text-poke engine (the update pass tests,
//! `tests::update`, cover those).

use std::collections::{
    BTreeMap,
    BTreeSet, //
};
use std::format;
use std::string::String;
use std::vec::Vec;

use super::sim_model::{
    bit,
    insn,
    Action,
    AddrArg,
    DirectReq,
    Func,
    Layout,
    ModState,
    Model,
    Outcome,
    Req,
    View,
    CALLER,
    NOP,
    REGS_CALLER, //
};
use super::util::{
    Rng,
    SimX86,
    VecRecords,
    VecStore,
    Walk,
    FENTRY, //
};
use crate::rfcore::{
    account::{
        self,
        CallOps,
        OpsProps,
        Others, //
    },
    consistency::{
        self,
        Users, //
    },
    direct::{
        self,
        Asking,
        Refusal, //
    },
    flags::RecFlags,
    ipmodify::{
        self,
        Plan,
        Site,
        Skip,
        Step, //
    },
    record::{
        decide,
        Update, //
    },
    registry::{
        ops_fl,
        walk_matches,
        walk_takes,
        Reach, //
    },
    select::Need,
    update::{
        self,
        Arch,
        Counts,
        Facts,
        Failure,
        Single, //
    }, //
};

/// The most writes the text-poke engine queues before a flush.
const BATCH_MAX: usize = <SimX86 as Arch>::BATCH_MAX;

/// Cases run by a plain `cargo test`.
pub const DEFAULT_CASES: u64 = 5000;
/// Steps of one case (before the teardown).
pub const STEPS: usize = 60;

const CORE_BASE: u64 = 0xffff_ffff_8100_0000;
const MOD_BASE: u64 = 0xffff_ffff_a000_0000;
const DIRECT_BASE: u64 = 0xffff_ffff_b000_0000;
const TRAMP_BASE: u64 = 0xffff_ffff_c000_0000;
/// The trampoline x86 gives the stub ops of a direct target change.
const STUB_TRAMP: u64 = TRAMP_BASE + 0x3f00_0000;
/// Function tracer instances (0 is the top-level one) and graph instances.
const TRACERS: usize = 3;
const GRAPHS: usize = 2;
const DIRECTS: usize = 3;
/// Direct trampolines the direct ops may call.
const DIRECT_TARGETS: usize = 3;
/// The flags a direct ops carries (`MULTI_FLAGS`, x86: registers saved).
const MULTI: u64 = direct::DIRECT | ops_fl::SAVE_REGS;
const CUSTOMS: usize = 2;

/// Where the random choices come from: a seeded PRNG or fuzzer bytes.
pub trait Source {
    /// A number in `0..n`, or `None` once the input is used up.
    fn below(&mut self, n: u64) -> Option<u64>;

    /// True with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> Option<bool> {
        Some(self.below(den)? < num)
    }
}

impl Source for Rng {
    fn below(&mut self, n: u64) -> Option<u64> {
        Some(Rng::below(self, n))
    }
}

/// Choices decoded from a byte string, one byte each (two above 256).
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// Decodes choices from `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }
}

impl Source for Bytes<'_> {
    fn below(&mut self, n: u64) -> Option<u64> {
        let width = if n > 256 { 2 } else { 1 };
        if self.data.len() < width {
            return None;
        }
        let (head, rest) = self.data.split_at(width);
        self.data = rest;
        let v = head.iter().fold(0u64, |a, &b| a << 8 | u64::from(b));
        Some(v % n)
    }
}

/// A filter and notrace set by address, as the kernel's hashes hold them.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
struct IpHash {
    filter: BTreeSet<u64>,
    notrace: BTreeSet<u64>,
}

impl IpHash {
    fn contains(&self, ip: u64) -> bool {
        (self.filter.is_empty() || self.filter.contains(&ip)) && !self.notrace.contains(&ip)
    }

    /// `add_first_hash()`: the manager's hash from its first sub-ops.
    fn first(s: &IpHash) -> IpHash {
        if s.filter.is_empty() {
            IpHash {
                filter: BTreeSet::new(),
                notrace: s.notrace.clone(),
            }
        } else {
            let mut filter = s.filter.clone();
            filter.retain(|ip| !s.notrace.contains(ip));
            IpHash {
                filter,
                notrace: BTreeSet::new(),
            }
        }
    }

    /// `add_next_hash()`: one more sub-ops folded into the manager's hash.
    fn next(&self, s: &IpHash) -> IpHash {
        let mut out = IpHash::default();
        if !self.filter.is_empty() && !s.filter.is_empty() {
            out.filter = s.filter.clone();
            out.filter.retain(|ip| !s.notrace.contains(ip));
            out.filter.extend(self.filter.iter().copied());
        }
        if out.filter.is_empty() {
            out.notrace = self
                .notrace
                .iter()
                .filter(|ip| s.notrace.contains(ip))
                .copied()
                .collect();
        }
        out
    }
}

/// A `struct ftrace_ops`, with what the C code keeps about it.
#[derive(Clone, Debug)]
struct KOps {
    name: String,
    direct: bool,
    save_regs: bool,
    ipmodify: bool,
    call_ops_ok: bool,
    tramp: Option<u64>,
    hash: IpHash,
    enabled: bool,
    adding: bool,
    /// MODIFYING, with the hash before the change.
    old: Option<IpHash>,
    /// `FTRACE_OPS_FL_INITIALIZED`.
    initialized: bool,
    /// `ops->func` is set.
    func: bool,
    /// `ops->direct_call`.
    direct_call: u64,
    /// A direct ops' `ops_func` agrees to share a function with an
    /// IPMODIFY ops (false: it has none).
    share: bool,
}

impl KOps {
    fn new(name: String, tramp: Option<u64>) -> Self {
        KOps {
            name,
            direct: false,
            save_regs: false,
            ipmodify: false,
            call_ops_ok: true,
            tramp,
            hash: IpHash::default(),
            enabled: false,
            adding: false,
            old: None,
            initialized: true,
            func: true,
            direct_call: 0,
            share: false,
        }
    }

    /// The flags word, as far as the direct and IPMODIFY decisions read it.
    fn flags(&self) -> u64 {
        let bits = [
            (self.initialized, direct::INITIALIZED),
            (self.enabled, ops_fl::ENABLED),
            (self.direct, direct::DIRECT),
            (self.save_regs, ops_fl::SAVE_REGS),
            (self.ipmodify, ipmodify::ops_bits::IPMODIFY),
        ];
        bits.iter().filter(|(on, _)| *on).fold(0, |w, (_, b)| w | b)
    }

    fn props(&self) -> OpsProps {
        OpsProps {
            direct: self.direct,
            save_regs: self.save_regs,
            trampoline: self.tramp.is_some(),
            call_ops_ok: self.call_ops_ok,
        }
    }
}

/// A `struct dyn_ftrace`.
#[derive(Clone, Copy, Debug)]
struct SRec {
    ip: u64,
    flags: u64,
    func: usize,
}

/// The other ops on a record, as the kernel's list walks see them.
struct KOthers<'a> {
    ops: &'a [KOps],
    list: &'a [usize],
    me: usize,
    ip: u64,
}

impl Others for KOthers<'_> {
    fn need_regs(&mut self) -> bool {
        // Not excluding `me`: while its filter changes it is still listed.
        self.list
            .iter()
            .any(|&o| self.ops[o].save_regs && self.ops[o].hash.contains(self.ip))
    }

    fn other_has_trampoline(&mut self) -> bool {
        self.list.iter().any(|&o| {
            o != self.me && self.ops[o].tramp.is_some() && self.ops[o].hash.contains(self.ip)
        })
    }

    fn survivor_call_ops_ok(&mut self) -> bool {
        let mut on = self
            .list
            .iter()
            .filter(|&&o| o != self.me && self.ops[o].hash.contains(self.ip));
        match (on.next(), on.next()) {
            (Some(&o), None) => self.ops[o].call_ops_ok,
            _ => false,
        }
    }
}

/// `direct_functions`: an `ftrace_hash` of site -> direct trampoline.
#[derive(Clone, Default, Debug)]
struct DirectTable {
    /// `size_bits`: 0 for the kernel's `EMPTY_HASH`.
    bits: u32,
    map: BTreeMap<u64, u64>,
}

/// What the direct-call requests came to, counted by the simulated kernel.
#[derive(Clone, Copy, Default, Debug)]
pub struct DirectCounts {
    /// Registrations done.
    pub registered: u64,
    /// Registrations refused with `-EBUSY` by the table (a function has a
    /// direct call already).
    pub busy: u64,
    /// Registrations whose start-up failed (`-EBUSY`, an IPMODIFY ops on a
    /// function), with the old table put back.
    pub startup_failed: u64,
    /// Registrations that shared a function with an IPMODIFY ops through
    /// their `ops_func`.
    pub shared: u64,
    /// Requests refused with `-EINVAL` (register, modify, unregister; by a
    /// direct ops or by an ops that is not one).
    pub invalid: u64,
    /// Target changes done.
    pub retargeted: u64,
    /// Target changes refused (`-EBUSY`, an IPMODIFY ops on a function).
    pub retarget_busy: u64,
    /// Unregistrations done.
    pub unregistered: u64,
    /// Unregistrations that named another trampoline and so left their
    /// entries in the table.
    pub left_entries: u64,
    /// The widest table built, in bits.
    pub max_bits: u32,
}

impl DirectCounts {
    fn add(&mut self, o: &DirectCounts) {
        self.registered += o.registered;
        self.busy += o.busy;
        self.startup_failed += o.startup_failed;
        self.shared += o.shared;
        self.invalid += o.invalid;
        self.retargeted += o.retargeted;
        self.retarget_busy += o.retarget_busy;
        self.unregistered += o.unregistered;
        self.left_entries += o.left_entries;
        self.max_bits = self.max_bits.max(o.max_bits);
    }
}

/// A deliberate mistake in the simulated kernel's direct-call code, to
/// show that the comparison with the model sees it
/// (`direct_table_mistakes_are_caught`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fault {
    /// A registration whose start-up fails keeps the new table.
    KeepTableOnFailedStartup,
    /// A registration refused by the table (`-EBUSY`) has added the
    /// entries of its free functions.
    EntriesOnRefusal,
    /// A target change points the ops at the new target but leaves the
    /// table's entries calling the old one.
    TableNotRetargeted,
    /// An unregistration leaves its entries in the table.
    EntriesOnUnregister,
    /// The new table is as wide as the ops' functions alone need.
    NarrowTable,
}

impl Fault {
    /// Every kind.
    pub const ALL: [Fault; 5] = [
        Fault::KeepTableOnFailedStartup,
        Fault::EntriesOnRefusal,
        Fault::TableNotRetargeted,
        Fault::EntriesOnUnregister,
        Fault::NarrowTable,
    ];
}

/// The errno `rust/kside/direct.rs` gives a refusal, as an outcome.
fn errno(r: Refusal) -> Outcome {
    match r {
        Refusal::Invalid => Outcome::Invalid,
        Refusal::Busy => Outcome::Refused,
    }
}

/// The simulated kernel.
pub struct Sim {
    layout: Layout,
    funcs: Vec<Func>,
    recs: Vec<SRec>,
    /// The text and the text-poke queue.
    arch: SimX86,
    ops: Vec<KOps>,
    /// `ftrace_ops_list`, head first.
    list: Vec<usize>,
    removed: Option<usize>,
    /// `direct_functions`.
    direct_fns: DirectTable,
    /// The stub ops of a direct target change (`tmp_ops`).
    direct_stub: usize,
    tracer_ops: Vec<usize>,
    graph_mgr: usize,
    graph_subs: Vec<(bool, IpHash)>,
    graph_list: Vec<usize>,
    kprobe_ops: [usize; 2],
    kprobes: BTreeMap<usize, bool>,
    fprobe_ops: usize,
    direct_ops: Vec<usize>,
    lp_ops: BTreeMap<usize, usize>,
    custom_ops: Vec<usize>,
    modules: Vec<ModState>,
    /// Problems met inside the update pass or the C-side lookups.
    errs: Vec<String>,
    /// Update pass counters (`update::Counts`), summed.
    pub counts: Counts,
    /// Direct-call outcomes, summed.
    pub direct: DirectCounts,
    /// A deliberate mistake, for the test that shows it is caught.
    pub fault: Option<Fault>,
}

fn is(w: u64, b: u64) -> bool {
    w & b != 0
}

impl Sim {
    /// Boots a kernel: core records, their `call __fentry__` made NOPs,
    /// then the weak-function check.
    pub fn boot(layout: Layout, funcs: Vec<Func>) -> Self {
        let mut sim = Sim {
            layout: layout.clone(),
            funcs: Vec::new(),
            recs: Vec::new(),
            arch: SimX86 {
                errs: Some(Vec::new()),
                ..SimX86::new(BTreeMap::new(), layout.jmp_bit)
            },
            ops: Vec::new(),
            list: Vec::new(),
            removed: None,
            direct_fns: DirectTable::default(),
            direct_stub: 0,
            tracer_ops: Vec::new(),
            graph_mgr: 0,
            graph_subs: (0..GRAPHS).map(|_| (false, IpHash::default())).collect(),
            graph_list: Vec::new(),
            kprobe_ops: [0; 2],
            kprobes: BTreeMap::new(),
            fprobe_ops: 0,
            direct_ops: Vec::new(),
            lp_ops: BTreeMap::new(),
            custom_ops: Vec::new(),
            modules: Vec::new(),
            errs: Vec::new(),
            counts: Counts::default(),
            direct: DirectCounts::default(),
            fault: None,
        };
        for t in 0..TRACERS {
            let o = sim.new_ops(format!("tracer{t}"), layout.tracer_tramp[t]);
            sim.tracer_ops.push(o);
        }
        sim.graph_mgr = sim.new_ops("graph".into(), layout.graph_tramp);
        for k in 0..2 {
            let o = sim.new_ops(format!("kprobe{k}"), layout.kprobe_tramp[k]);
            sim.ops[o].save_regs = true;
            sim.ops[o].ipmodify = k == 1;
            sim.kprobe_ops[k] = o;
        }
        sim.fprobe_ops = sim.new_ops("fprobe".into(), layout.fprobe_tramp);
        for d in 0..DIRECTS {
            let o = sim.new_ops(format!("direct{d}"), None);
            // Not initialised until a filter is set; a function only once
            // registered.
            sim.ops[o].initialized = false;
            sim.ops[o].func = false;
            sim.ops[o].share = layout.direct_share[d];
            sim.direct_ops.push(o);
        }
        // The stub (FTRACE_OPS_FL_STUB): not direct, no registers; x86
        // gives it a trampoline of its own, as every ops without one.
        sim.direct_stub = sim.new_ops("direct-stub".into(), Some(STUB_TRAMP));
        for c in 0..CUSTOMS {
            let (tramp, regs, ok) = layout.custom[c];
            let o = sim.new_ops(format!("custom{c}"), tramp);
            sim.ops[o].save_regs = regs;
            sim.ops[o].call_ops_ok = ok;
            sim.custom_ops.push(o);
        }
        let core: Vec<usize> = (1..funcs.len()).collect();
        sim.funcs = funcs;
        sim.add_records(&core, 0);
        for r in &mut sim.recs {
            if !sim.funcs[r.func].valid {
                r.flags |= bit::DISABLED;
            }
        }
        sim
    }

    fn new_ops(&mut self, name: String, tramp: Option<u64>) -> usize {
        self.ops.push(KOps::new(name, tramp));
        self.ops.len() - 1
    }

    /// New records whose sites hold `call __fentry__`, then the conversion
    /// of each to a NOP (`ftrace_update_code()`).
    fn add_records(&mut self, fids: &[usize], flags: u64) {
        let first = self.recs.len();
        for &f in fids {
            let ip = self.funcs[f].ip;
            self.recs.push(SRec { ip, flags, func: f });
            self.arch.text.insert(ip, insn(ip, FENTRY, false));
        }
        for i in first..self.recs.len() {
            if self.arch.queue.len() == BATCH_MAX {
                self.arch.flush();
            }
            let mut arch = self.take_arch();
            let r = update::single(&mut Walk(self), &mut arch, i, Single::Init);
            self.put_arch(arch);
            if let Err(e) = r {
                self.errs
                    .push(format!("init NOP of {:#x}: {e:?}", self.recs[i].ip));
            }
        }
        self.arch.flush();
    }

    /// The record table and text, for the model.
    pub fn view(&self) -> View<'_> {
        View {
            recs: self.recs.iter().map(|r| (r.func, r.ip, r.flags)).collect(),
            text: &self.arch.text,
            direct: &self.direct_fns.map,
            direct_bits: self.direct_fns.bits,
            direct_calls: self
                .direct_ops
                .iter()
                .map(|&o| self.ops[o].enabled.then_some(self.ops[o].direct_call))
                .collect(),
        }
    }

    fn call_ops_mode(&self) -> CallOps {
        if self.layout.call_ops {
            CallOps::Supported
        } else {
            CallOps::Unsupported
        }
    }

    /// `__ftrace_hash_rec_update()`: returns whether an update is needed.
    fn hash_rec_update(&mut self, o: usize, inc: bool) -> bool {
        if !self.ops[o].enabled {
            return false;
        }
        let mode = self.call_ops_mode();
        let (ops, list, recs) = (&self.ops, &self.list, &mut self.recs);
        let op = &ops[o];
        let props = op.props();
        // The kernel's walk reads the hashes with the registry's rules
        // (`rfcore::registry`), the code the kernel runs.
        let reach = if op.hash.filter.is_empty() {
            Reach::All
        } else {
            Reach::Filter {
                count: op.hash.filter.len() as u64,
            }
        };
        let all = reach == Reach::All;
        let (mut count, mut update) = (0usize, false);
        for r in recs.iter_mut() {
            if !walk_takes(RecFlags::from_raw(r.flags)) {
                continue;
            }
            let matched = walk_matches(
                reach,
                op.hash.filter.contains(&r.ip),
                op.hash.notrace.contains(&r.ip),
            );
            if !matched {
                continue;
            }
            let flags = RecFlags::from_raw(r.flags);
            let mut others = KOthers {
                ops,
                list,
                me: o,
                ip: r.ip,
            };
            let res = if inc {
                account::add(flags, props, mode)
            } else {
                account::remove(flags, props, mode, &mut others)
            };
            match res {
                Ok(next) => r.flags = next.raw(),
                Err(e) => {
                    self.errs.push(format!(
                        "accounting {} {} at {:#x} flags {:#x}: {e:?}",
                        if inc { "add" } else { "remove" },
                        op.name,
                        r.ip,
                        r.flags
                    ));
                    return false;
                }
            }
            count += 1;
            update |= decide(RecFlags::from_raw(r.flags), true).update != Update::Ignore;
            if !all && count == op.hash.filter.len() {
                break;
            }
        }
        update
    }

    /// The registry's consistency check (`rfcore::consistency`) on every
    /// record: its accounting against the enabled ops that cover it now.
    fn consistency(&mut self) {
        let mode = self.call_ops_mode();
        for r in &self.recs {
            if is(r.flags, bit::DISABLED) && !is(r.flags, bit::ENABLED) {
                continue;
            }
            let mut users = Users::none();
            let mut names = Vec::new();
            for &o in &self.list {
                let op = &self.ops[o];
                if op.enabled && op.hash.contains(r.ip) {
                    users.add(op.props(), op.ipmodify);
                    names.push(op.name.as_str());
                }
            }
            let m = consistency::check(RecFlags::from_raw(r.flags), &users, mode);
            if m.any() {
                self.errs.push(format!(
                    "consistency: {:#x} flags {:#x}, users {names:?}: {m:?}",
                    r.ip, r.flags
                ));
            }
        }
    }

    /// An update pass (`ftrace_replace_code()` on x86), after the
    /// consistency check the shadow kernel runs there.
    fn update(&mut self) {
        self.consistency();
        let mut c = Counts::default();
        let mut arch = self.take_arch();
        let mut store = VecStore::default();
        let r = update::update_all(&mut Walk(self), &mut arch, &mut store, true, &mut c);
        self.put_arch(arch);
        if let Err(f) = r {
            self.errs.push(format!("update pass failed: {f:?}"));
        }
        if c.gathers != c.patched() || c.fallbacks != 0 {
            self.errs
                .push(format!("update pass: {c:?}, not one gather per change"));
        }
        add_counts(&mut self.counts, &c);
    }

    /// `__ftrace_hash_update_ipmodify()`; `None` is "every function".
    fn ipmodify_update(&mut self, o: usize, old: Option<&IpHash>, new: Option<&IpHash>) -> bool {
        let op = &self.ops[o];
        if !op.enabled || (!op.ipmodify && !op.direct) {
            return true;
        }
        let (Some(old), Some(new)) = (old, new) else {
            self.errs
                .push(format!("{}: IPMODIFY/direct on every function", op.name));
            return false;
        };
        let ipmodify = op.ipmodify;
        let share = op.share;
        let mut end = None;
        for (i, r) in self.recs.iter_mut().enumerate() {
            if is(r.flags, bit::DISABLED) {
                continue;
            }
            let (was, now) = (old.filter.contains(&r.ip), new.filter.contains(&r.ip));
            if was == now {
                continue;
            }
            if now {
                if is(r.flags, bit::IPMODIFY) {
                    if !ipmodify {
                        // A direct ops: its ops_func agrees to share, or
                        // it has none (nothing changed yet).
                        if share {
                            continue;
                        }
                        return false;
                    }
                    end = Some(i);
                    break;
                }
                if ipmodify {
                    r.flags |= bit::IPMODIFY;
                }
            } else if ipmodify {
                r.flags &= !bit::IPMODIFY;
            }
        }
        let Some(end) = end else {
            return true;
        };
        for r in self.recs[..end].iter_mut() {
            if is(r.flags, bit::DISABLED) {
                continue;
            }
            let (was, now) = (old.filter.contains(&r.ip), new.filter.contains(&r.ip));
            if was != now {
                r.flags ^= bit::IPMODIFY;
            }
        }
        false
    }

    /// `ftrace_startup()`.
    fn startup(&mut self, o: usize) -> Outcome {
        self.list.insert(0, o);
        self.ops[o].enabled = true;
        self.ops[o].adding = true;
        let hash = self.ops[o].hash.clone();
        let new = (!hash.filter.is_empty()).then_some(&hash);
        if !self.ipmodify_update(o, Some(&IpHash::default()), new) {
            self.list.retain(|&x| x != o);
            self.ops[o].enabled = false;
            self.ops[o].adding = false;
            return Outcome::Refused;
        }
        if self.hash_rec_update(o, true) {
            self.update();
        }
        self.ops[o].adding = false;
        Outcome::Done
    }

    /// `ftrace_shutdown()`.
    fn shutdown(&mut self, o: usize) {
        if !self.ops[o].enabled {
            self.errs
                .push(format!("{} shut down twice", self.ops[o].name));
            return;
        }
        self.list.retain(|&x| x != o);
        let hash = self.ops[o].hash.clone();
        let old = (!hash.filter.is_empty()).then_some(&hash);
        self.ipmodify_update(o, old, Some(&IpHash::default()));
        let update = self.hash_rec_update(o, false);
        self.ops[o].enabled = false;
        if update {
            self.removed = Some(o);
            self.update();
            self.removed = None;
        }
    }

    /// `ftrace_hash_move()` and `ftrace_ops_update_code()` for a new
    /// filter (`filter`) or notrace set.
    fn set_hash(&mut self, o: usize, set: BTreeSet<u64>, filter: bool) -> Outcome {
        let old = self.ops[o].hash.clone();
        let mut new = old.clone();
        if filter {
            new.filter = set;
        } else {
            new.notrace = set;
        }
        if !self.ops[o].enabled {
            self.ops[o].hash = new;
            return Outcome::Done;
        }
        if !filter && self.ops[o].ipmodify {
            self.errs
                .push(format!("{}: notrace on an IPMODIFY ops", self.ops[o].name));
            return Outcome::Refused;
        }
        if filter {
            let o_h = (!old.filter.is_empty()).then_some(&old);
            let n_h = (!new.filter.is_empty()).then_some(&new);
            if !self.ipmodify_update(o, o_h, n_h) {
                return Outcome::Refused;
            }
        }
        self.hash_rec_update(o, false);
        self.ops[o].hash = new;
        self.hash_rec_update(o, true);
        self.ops[o].old = Some(old);
        self.update();
        self.ops[o].old = None;
        Outcome::Done
    }

    /// `ftrace_update_ops()`: the manager gets a new hash, filter first.
    fn update_ops(&mut self, o: usize, new: IpHash) {
        if new.filter != self.ops[o].hash.filter {
            self.set_hash(o, new.filter.clone(), true);
        }
        if new.notrace != self.ops[o].hash.notrace {
            self.set_hash(o, new.notrace, false);
        }
    }

    fn rebuild_graph(&self) -> IpHash {
        let mut acc: Option<IpHash> = None;
        for &g in &self.graph_list {
            let s = &self.graph_subs[g].1;
            acc = Some(match acc {
                None => IpHash::first(s),
                Some(a) => a.next(s),
            });
        }
        acc.unwrap_or_default()
    }

    fn ips(&self, fs: &BTreeSet<usize>) -> BTreeSet<u64> {
        fs.iter().map(|&f| self.funcs[f].ip).collect()
    }

    fn tracer_req(&mut self, o: usize, r: &Req) -> Outcome {
        match r {
            Req::On if !self.ops[o].enabled => self.startup(o),
            Req::Off if self.ops[o].enabled => {
                self.shutdown(o);
                Outcome::Done
            }
            Req::Filter(s) => self.set_hash(o, self.ips(s), true),
            Req::Notrace(s) => self.set_hash(o, self.ips(s), false),
            _ => Outcome::Done,
        }
    }

    fn graph_req(&mut self, g: usize, r: &Req) {
        let mgr = self.graph_mgr;
        let on = self.graph_subs[g].0;
        match r {
            Req::On if !on => {
                self.graph_subs[g].0 = true;
                let sub = self.graph_subs[g].1.clone();
                if self.graph_list.is_empty() {
                    self.ops[mgr].hash = IpHash::first(&sub);
                    self.graph_list.insert(0, g);
                    self.startup(mgr);
                } else {
                    let new = self.ops[mgr].hash.next(&sub);
                    self.graph_list.insert(0, g);
                    self.update_ops(mgr, new);
                }
            }
            Req::Off if on => {
                self.graph_subs[g].0 = false;
                self.graph_list.retain(|&x| x != g);
                if self.graph_list.is_empty() {
                    self.shutdown(mgr);
                    self.ops[mgr].hash = IpHash::default();
                } else {
                    let new = self.rebuild_graph();
                    self.update_ops(mgr, new);
                }
            }
            Req::Filter(s) | Req::Notrace(s) => {
                let ips = self.ips(s);
                if matches!(r, Req::Filter(_)) {
                    self.graph_subs[g].1.filter = ips;
                } else {
                    self.graph_subs[g].1.notrace = ips;
                }
                if on {
                    let new = self.rebuild_graph();
                    self.update_ops(mgr, new);
                }
            }
            _ => {}
        }
    }

    /// A kprobe-like shared ops gains (`arm`) or loses the site of `f`.
    fn probe(&mut self, o: usize, f: usize, arm: bool) -> Outcome {
        let ip = self.funcs[f].ip;
        let mut set = self.ops[o].hash.filter.clone();
        if arm {
            set.insert(ip);
            if self.ops[o].enabled {
                return self.set_hash(o, set, true);
            }
            self.ops[o].hash.filter = set;
            let out = self.startup(o);
            if out == Outcome::Refused {
                self.ops[o].hash.filter.remove(&ip);
            }
            out
        } else {
            set.remove(&ip);
            if set.is_empty() {
                self.shutdown(o);
            }
            self.set_hash(o, set, true)
        }
    }

    /// A request of the direct-call interface for ops `o`: direct ops
    /// `d`'s user's filter is applied first (`ftrace_set_filter_ips()`, an
    /// ops that is not started only).
    fn direct(&mut self, o: usize, d: Option<usize>, r: &DirectReq) -> Outcome {
        let target = |t: usize| self.layout.direct_targets[t];
        let out = match r {
            DirectReq::Register { funcs, target: t } => {
                if let (Some(fs), Some(_)) = (funcs, d) {
                    if !self.ops[o].enabled {
                        self.ops[o].hash.filter = self.ips(fs);
                        self.ops[o].initialized = true;
                    }
                }
                self.register_direct(o, target(*t))
            }
            DirectReq::Modify(t) => self.modify_direct(o, target(*t)),
            DirectReq::Unregister { addr, free_filters } => {
                let now = self.ops[o].direct_call;
                let addr = match addr {
                    AddrArg::Current => now,
                    AddrArg::Marked => now ^ 1,
                    AddrArg::Target(t) => target(*t),
                };
                self.unregister_direct(o, addr, *free_filters)
            }
        };
        if out == Outcome::Invalid {
            self.direct.invalid += 1;
        }
        out
    }

    /// `ops` becomes a direct ops calling `addr`, or (`on` false) keeps no
    /// function or trampoline (`ftrace_c_direct_ops()`).
    fn make_direct(&mut self, o: usize, addr: u64, on: bool) {
        let op = &mut self.ops[o];
        if on {
            op.func = true;
            op.direct = true;
            op.save_regs = true;
            op.tramp = Some(REGS_CALLER);
            op.direct_call = addr;
        } else {
            op.func = false;
            op.tramp = None;
        }
    }

    /// `register_ftrace_direct()` as `kside::direct::register()` does it.
    fn register_direct(&mut self, o: usize, addr: u64) -> Outcome {
        let op = &self.ops[o];
        let asking = Asking {
            flags: op.flags(),
            has_func: op.func,
            has_trampoline: op.tramp.is_some(),
            filter_empty: op.hash.filter.is_empty(),
        };
        if let Err(r) = direct::admit(&asking) {
            return errno(r);
        }
        let ips = op.hash.filter.clone();
        let now = &self.direct_fns.map;
        if ips.iter().any(|ip| now.contains_key(ip)) {
            self.direct.busy += 1;
            if self.fault == Some(Fault::EntriesOnRefusal) {
                for &ip in &ips {
                    self.direct_fns.map.entry(ip).or_insert(addr);
                }
            }
            return errno(Refusal::Busy);
        }
        let bits = if self.fault == Some(Fault::NarrowTable) {
            direct::table_bits(ips.len() as u64, 0)
        } else {
            direct::table_bits(ips.len() as u64, now.len() as u64)
        };
        let mut new = DirectTable {
            bits,
            map: now.clone(),
        };
        for &ip in &ips {
            new.map.insert(ip, addr);
        }
        self.direct.max_bits = self.direct.max_bits.max(bits);
        let old = std::mem::replace(&mut self.direct_fns, new);
        self.make_direct(o, addr, true);
        let shared = self.ops[o].share
            && self
                .recs
                .iter()
                .any(|r| is(r.flags, bit::IPMODIFY) && ips.contains(&r.ip));
        match self.startup(o) {
            Outcome::Done => {
                self.direct.registered += 1;
                self.direct.shared += u64::from(shared);
                Outcome::Done
            }
            out => {
                self.direct.startup_failed += 1;
                self.make_direct(o, addr, false);
                if self.fault != Some(Fault::KeepTableOnFailedStartup) {
                    self.direct_fns = old;
                }
                out
            }
        }
    }

    /// `__ftrace_hash_update_ipmodify(ops, hash, hash, true)` as the Rust
    /// core asks it (`rfcore::ipmodify`): every function of the direct ops
    /// an IPMODIFY ops is on asks its `ops_func`.
    fn retarget_ipmodify(&mut self, o: usize) -> Outcome {
        let op = &self.ops[o];
        let all = op.hash.filter.is_empty();
        let who = match ipmodify::claimant(op.flags(), all, all, true) {
            Ok(who) => who,
            Err(Skip::Nothing) => return Outcome::Done,
            Err(e) => {
                self.errs
                    .push(format!("{}: retarget claimant {e:?}", op.name));
                return Outcome::Invalid;
            }
        };
        for r in &self.recs {
            let inside = op.hash.filter.contains(&r.ip);
            let site = Site {
                flags: RecFlags::from_raw(r.flags),
                in_old: inside,
                in_new: inside,
            };
            match ipmodify::step(who, Plan::Check, site) {
                Step::Pass => {}
                Step::AskShare { warn } => {
                    if warn {
                        self.errs
                            .push(format!("{:#x}: direct site asked again", r.ip));
                    }
                    if !op.share {
                        return Outcome::Refused;
                    }
                }
                s => {
                    self.errs.push(format!("{:#x}: retarget step {s:?}", r.ip));
                    return Outcome::Refused;
                }
            }
        }
        Outcome::Done
    }

    /// `modify_ftrace_direct()` as `kside::direct::modify()` does it.
    fn modify_direct(&mut self, o: usize, addr: u64) -> Outcome {
        if let Err(r) = direct::admit_change(self.ops[o].flags(), MULTI) {
            return errno(r);
        }
        let stub = self.direct_stub;
        self.ops[stub].hash = self.ops[o].hash.clone();
        self.ops[stub].direct_call = addr;
        if self.startup(stub) != Outcome::Done {
            self.errs.push("the stub ops did not start".into());
            return Outcome::Refused;
        }
        let out = self.retarget_ipmodify(o);
        if out == Outcome::Done {
            if self.fault != Some(Fault::TableNotRetargeted) {
                for ip in &self.ops[o].hash.filter {
                    if let Some(t) = self.direct_fns.map.get_mut(ip) {
                        *t = addr;
                    }
                }
            }
            self.ops[o].direct_call = addr;
            self.direct.retargeted += 1;
        } else {
            self.direct.retarget_busy += 1;
        }
        self.shutdown(stub);
        self.ops[stub].hash = IpHash::default();
        out
    }

    /// `unregister_ftrace_direct()` as `kside::direct::unregister()` does
    /// it.
    fn unregister_direct(&mut self, o: usize, addr: u64, free_filters: bool) -> Outcome {
        if let Err(r) = direct::admit_change(self.ops[o].flags(), MULTI) {
            return errno(r);
        }
        self.shutdown(o);
        // `ftrace_c_direct_forget()`: the entries of the ops' functions
        // that call `addr`.
        let jmp = self.layout.jmp_bit;
        let mut left = false;
        for ip in &self.ops[o].hash.filter {
            if let Some(&t) = self.direct_fns.map.get(ip) {
                if direct::same_target(t, addr, jmp)
                    && self.fault != Some(Fault::EntriesOnUnregister)
                {
                    self.direct_fns.map.remove(ip);
                } else {
                    left = true;
                }
            }
        }
        self.make_direct(o, addr, false);
        if free_filters {
            self.ops[o].hash = IpHash::default();
        }
        self.direct.unregistered += 1;
        self.direct.left_entries += u64::from(left);
        Outcome::Done
    }

    fn livepatch(&mut self, f: usize, on: bool) -> Outcome {
        if on {
            let o = self.new_ops(format!("livepatch:{f}"), self.layout.lp_tramp(f));
            self.ops[o].ipmodify = true;
            self.ops[o].hash.filter.insert(self.funcs[f].ip);
            let out = self.startup(o);
            if out == Outcome::Done {
                self.lp_ops.insert(f, o);
            }
            out
        } else {
            if let Some(o) = self.lp_ops.remove(&f) {
                self.shutdown(o);
            }
            Outcome::Done
        }
    }

    /// `ftrace_module_enable()`.
    fn module_enable(&mut self, m: usize) {
        let started = !self.list.is_empty();
        for i in 0..self.recs.len() {
            let r = self.recs[i];
            if self.funcs[r.func].module != Some(m) {
                continue;
            }
            if !self.funcs[r.func].valid {
                self.recs[i].flags = bit::DISABLED;
                continue;
            }
            let mut flags = r.flags;
            let mut cnt = 0u64;
            if started {
                for &o in &self.list {
                    let op = &self.ops[o];
                    let h = &op.hash;
                    let refs = op.enabled
                        && ((h.filter.is_empty() && h.notrace.is_empty())
                            || ((h.filter.is_empty() || h.filter.contains(&r.ip))
                                && !h.notrace.contains(&r.ip)));
                    if !refs {
                        continue;
                    }
                    if op.direct || op.ipmodify {
                        self.errs
                            .push(format!("{} references a new module site", op.name));
                        continue;
                    }
                    cnt += 1;
                    if op.save_regs {
                        flags |= bit::REGS;
                    }
                    if cnt == 1 && op.tramp.is_some() {
                        flags |= bit::TRAMP;
                    } else {
                        flags &= !bit::TRAMP;
                    }
                }
            }
            self.recs[i].flags = (flags & !bit::DISABLED) + cnt;
            if started && cnt > 0 {
                if self.arch.queue.len() == BATCH_MAX {
                    self.arch.flush();
                }
                let mut c = Counts::default();
                let mut arch = self.take_arch();
                let res = update::update_one(&mut Walk(self), &mut arch, i, true, &mut c);
                self.put_arch(arch);
                if let Err(e) = res {
                    self.errs
                        .push(format!("module enable at {:#x}: {e:?}", r.ip));
                }
                add_counts(&mut self.counts, &c);
            }
        }
        self.arch.flush();
        self.modules[m] = ModState::Live;
    }

    /// Module unload: going notifiers, `ftrace_release_mod()`.
    fn module_unload(&mut self, m: usize) -> Outcome {
        let fids: BTreeSet<usize> = (1..self.funcs.len())
            .filter(|&f| self.funcs[f].module == Some(m))
            .collect();
        let ips = self.ips(&fids);
        let busy = self.direct_ops.iter().any(|&o| {
            self.ops[o].enabled && self.ops[o].hash.filter.iter().any(|ip| ips.contains(ip))
        });
        if busy {
            return Outcome::Refused;
        }
        let probes: Vec<(usize, bool)> = self
            .kprobes
            .iter()
            .filter(|(f, _)| fids.contains(f))
            .map(|(f, p)| (*f, *p))
            .collect();
        for (f, post) in probes {
            self.kprobes.remove(&f);
            self.probe(self.kprobe_ops[usize::from(post)], f, false);
        }
        let fp: Vec<usize> = self.ops[self.fprobe_ops]
            .hash
            .filter
            .iter()
            .filter_map(|ip| fids.iter().find(|&&f| self.funcs[f].ip == *ip).copied())
            .collect();
        for f in fp {
            self.probe(self.fprobe_ops, f, false);
        }
        let lps: Vec<usize> = self
            .lp_ops
            .keys()
            .filter(|f| fids.contains(f))
            .copied()
            .collect();
        for f in lps {
            self.livepatch(f, false);
        }
        self.recs.retain(|r| !fids.contains(&r.func));
        for ip in &ips {
            self.arch.text.remove(ip);
        }
        let clear = |s: &mut BTreeSet<u64>| {
            if s.iter().any(|ip| ips.contains(ip)) {
                *s = s
                    .iter()
                    .map(|ip| if ips.contains(ip) { 0 } else { *ip })
                    .collect();
            }
        };
        for &o in &self.tracer_ops {
            clear(&mut self.ops[o].hash.filter);
            clear(&mut self.ops[o].hash.notrace);
        }
        for (_, h) in &mut self.graph_subs {
            clear(&mut h.filter);
            clear(&mut h.notrace);
        }
        self.modules[m] = ModState::Gone;
        Outcome::Done
    }

    /// Carries out one user request.
    pub fn apply(&mut self, a: &Action) -> Outcome {
        match a {
            Action::Tracer(t, r) => self.tracer_req(self.tracer_ops[*t], r),
            Action::Custom(c, r) => self.tracer_req(self.custom_ops[*c], r),
            Action::Graph(g, r) => {
                self.graph_req(*g, r);
                Outcome::Done
            }
            Action::Kprobe { f, post, arm } => {
                let o = self.kprobe_ops[usize::from(*post)];
                let out = self.probe(o, *f, *arm);
                if out == Outcome::Done {
                    if *arm {
                        self.kprobes.insert(*f, *post);
                    } else {
                        self.kprobes.remove(f);
                    }
                }
                out
            }
            Action::Fprobe(f, add) => self.probe(self.fprobe_ops, *f, *add),
            Action::Direct(d, r) => self.direct(self.direct_ops[*d], Some(*d), r),
            Action::NotDirect(c, r) => self.direct(self.custom_ops[*c], None, r),
            Action::Livepatch(f, on) => self.livepatch(*f, *on),
            Action::ModInit(m, fids) => {
                assert_eq!(*m, self.modules.len());
                self.modules.push(ModState::Coming);
                self.add_records(fids, bit::DISABLED);
                Outcome::Done
            }
            Action::ModEnable(m) => {
                self.module_enable(*m);
                Outcome::Done
            }
            Action::ModUnload(m) => self.module_unload(*m),
        }
    }

    /// Trampoline of the first listed ops containing the site
    /// (`ftrace_find_tramp_ops_new()`).
    fn tramp_new(&self, ip: u64) -> Option<u64> {
        let o = self.list.iter().find(|&&o| self.ops[o].hash.contains(ip))?;
        self.ops[*o].tramp
    }

    /// `ftrace_find_tramp_ops_curr()`.
    fn tramp_curr(&self, ip: u64) -> Option<u64> {
        if let Some(r) = self.removed {
            if self.ops[r].hash.contains(ip) {
                return Some(self.ops[r].tramp.unwrap_or(0));
            }
        }
        for &o in &self.list {
            let op = &self.ops[o];
            if op.tramp.is_none() || op.adding {
                continue;
            }
            let hit = match &op.old {
                Some(old) => old.contains(ip),
                None => op.hash.contains(ip),
            };
            if hit {
                return op.tramp;
            }
        }
        None
    }
}

fn add_counts(sum: &mut Counts, c: &Counts) {
    sum.walked += c.walked;
    sum.make_call += c.make_call;
    sum.modify_call += c.modify_call;
    sum.make_nop += c.make_nop;
    sum.batches += c.batches;
    sum.failures += c.failures;
    sum.gathers += c.gathers;
    sum.fallbacks += c.fallbacks;
}

impl Sim {
    /// Moves the text and the write queue out, for the update pass to work
    /// on beside the records.
    fn take_arch(&mut self) -> SimX86 {
        std::mem::take(&mut self.arch)
    }

    /// Takes the text and the write queue back, with the contract breaches
    /// met.
    fn put_arch(&mut self, mut arch: SimX86) {
        if let Some(errs) = &mut arch.errs {
            self.errs.append(errs);
        }
        self.arch = arch;
    }

    /// `ftrace_get_addr_new()`, from the request bits.
    fn addr_new(&mut self, rec: usize) -> u64 {
        let r = self.recs[rec];
        if is(r.flags, bit::DIRECT) && r.flags & bit::COUNT == 1 {
            match self.direct_fns.map.get(&r.ip) {
                Some(&a) => return a,
                None => self
                    .errs
                    .push(format!("{:#x}: DIRECT without a direct call", r.ip)),
            }
        }
        if is(r.flags, bit::TRAMP) {
            return self.tramp_new(r.ip).unwrap_or_else(|| {
                self.errs
                    .push(format!("bad trampoline accounting (new) at {:#x}", r.ip));
                CALLER
            });
        }
        if is(r.flags, bit::REGS) {
            REGS_CALLER
        } else {
            CALLER
        }
    }

    /// `ftrace_get_addr_curr()`, from the `_EN` bits.
    fn addr_curr(&mut self, rec: usize) -> u64 {
        let r = self.recs[rec];
        if is(r.flags, bit::DIRECT_EN) {
            match self.direct_fns.map.get(&r.ip) {
                Some(&a) => return a,
                None => self
                    .errs
                    .push(format!("{:#x}: DIRECT_EN without a direct call", r.ip)),
            }
        }
        if is(r.flags, bit::TRAMP_EN) {
            return self.tramp_curr(r.ip).unwrap_or_else(|| {
                self.errs
                    .push(format!("bad trampoline accounting (curr) at {:#x}", r.ip));
                CALLER
            });
        }
        if is(r.flags, bit::REGS_EN) {
            REGS_CALLER
        } else {
            CALLER
        }
    }
}

impl VecRecords for Sim {
    fn count(&self) -> usize {
        self.recs.len()
    }

    fn site(&self, rec: usize) -> (u64, u64) {
        (self.recs[rec].ip, self.recs[rec].flags)
    }

    fn set_flags(&mut self, rec: usize, flags: u64) {
        self.recs[rec].flags = flags;
    }

    fn facts(&mut self, rec: usize, need: Need) -> Facts {
        Facts {
            ip: self.recs[rec].ip,
            flags: RecFlags::from_raw(self.recs[rec].flags),
            new: need.new.then(|| self.addr_new(rec)),
            curr: need.curr.then(|| self.addr_curr(rec)),
            unique: None,
            set: None,
        }
    }

    fn unique(&mut self, rec: usize) -> Option<u64> {
        self.errs.push(format!(
            "unique ops asked for at {:#x} on x86",
            self.recs[rec].ip
        ));
        None
    }

    fn report(&mut self, rec: usize, update: Update, failure: &Failure) {
        let ip = self.recs[rec].ip;
        self.errs
            .push(format!("ftrace_bug at {ip:#x} ({update:?}): {failure:?}"));
    }

    fn quarantine(&mut self, rec: usize, update: Update, failure: &Failure) {
        let ip = self.recs[rec].ip;
        self.errs
            .push(format!("quarantined {ip:#x} ({update:?}): {failure:?}"));
    }
}

/// Draws the fixed facts of one kernel.
fn gen_layout<S: Source>(src: &mut S) -> Option<Layout> {
    let jmp_bit = src.chance(1, 2)?;
    let call_ops = src.chance(1, 4)?;
    let mut next = 0u64;
    let mut tramp = |src: &mut S| -> Option<Option<u64>> {
        next += 1;
        let odd = u64::from(src.chance(1, 4)?);
        Some((!src.chance(1, 6)?).then_some(TRAMP_BASE + next * 0x1_0000 + odd))
    };
    let mut tracer_tramp = Vec::new();
    for _ in 0..TRACERS {
        tracer_tramp.push(tramp(src)?);
    }
    let graph_tramp = tramp(src)?;
    let kprobe_tramp = [tramp(src)?, tramp(src)?];
    let fprobe_tramp = tramp(src)?;
    let lp_tramp_base = tramp(src)?.map(|a| a + 0x8000_0000 / 4);
    let mut custom = Vec::new();
    for _ in 0..CUSTOMS {
        custom.push((tramp(src)?, src.chance(1, 2)?, src.chance(1, 2)?));
    }
    let mut direct_targets = Vec::new();
    for t in 0..DIRECT_TARGETS as u64 {
        let jmp = jmp_bit && src.chance(3, 4)?;
        direct_targets.push(DIRECT_BASE + t * 0x1000 + u64::from(jmp));
    }
    let mut direct_share = Vec::new();
    for _ in 0..DIRECTS {
        direct_share.push(src.chance(1, 3)?);
    }
    Some(Layout {
        tracer_tramp,
        graph_tramp,
        kprobe_tramp,
        fprobe_tramp,
        direct_targets,
        direct_share,
        lp_tramp_base,
        custom,
        jmp_bit,
        call_ops,
    })
}

/// Up to `max` distinct nameable functions.
fn gen_set<S: Source>(src: &mut S, pool: &[usize], max: u64) -> Option<BTreeSet<usize>> {
    let n = 1 + src.below(max)?;
    let mut s = BTreeSet::new();
    for _ in 0..n {
        s.insert(pool[src.below(pool.len() as u64)? as usize]);
    }
    Some(s)
}

fn gen_req<S: Source>(src: &mut S, on: bool, pool: &[usize]) -> Option<Req> {
    Some(match src.below(10)? {
        0..=2 => {
            if on {
                Req::Off
            } else {
                Req::On
            }
        }
        3..=6 => {
            if src.chance(1, 4)? {
                Req::Filter(BTreeSet::new())
            } else {
                Req::Filter(gen_set(src, pool, 5)?)
            }
        }
        _ => {
            if src.chance(1, 3)? {
                Req::Notrace(BTreeSet::new())
            } else {
                Req::Notrace(gen_set(src, pool, 4)?)
            }
        }
    })
}

/// The address an unregistration passes: mostly the right one.
fn gen_addr<S: Source>(src: &mut S) -> Option<AddrArg> {
    Some(match src.below(12)? {
        0..=9 => AddrArg::Current,
        10 => AddrArg::Marked,
        _ => AddrArg::Target(src.below(DIRECT_TARGETS as u64)? as usize),
    })
}

/// The functions of a new direct registration: at times one another
/// direct ops has (`-EBUSY`) or one an IPMODIFY ops is on (the start-up
/// fails unless the ops may share), and some of the pool.
fn gen_direct_set<S: Source>(src: &mut S, m: &Model, pool: &[usize]) -> Option<BTreeSet<usize>> {
    let mut s = gen_set(src, pool, 3)?;
    let taken: Vec<usize> = m
        .directs
        .iter()
        .filter(|u| u.target.is_some())
        .flat_map(|u| u.filter.iter().copied())
        .filter(|&f| m.nameable(f))
        .collect();
    if !taken.is_empty() && src.chance(1, 3)? {
        s.insert(taken[src.below(taken.len() as u64)? as usize]);
    }
    let claimed: Vec<usize> = m
        .kprobes
        .iter()
        .filter(|(_, post)| **post)
        .map(|(f, _)| *f)
        .chain(m.livepatches.iter().copied())
        .collect();
    if !claimed.is_empty() && src.chance(1, 3)? {
        s.insert(claimed[src.below(claimed.len() as u64)? as usize]);
    }
    Some(s)
}

/// A call of the direct-call interface: by a direct ops, mostly what its
/// state allows (register when it is not registered, modify or
/// unregister when it is), at times what it does not (`-EINVAL`); or by
/// a custom ops, which is not a direct ops.
fn gen_direct<S: Source>(src: &mut S, m: &Model, pool: &[usize]) -> Option<Action> {
    let targets = DIRECT_TARGETS as u64;
    if src.chance(1, 12)? {
        let c = src.below(CUSTOMS as u64)? as usize;
        let t = src.below(targets)? as usize;
        let r = match src.below(3)? {
            0 => DirectReq::Register {
                funcs: None,
                target: t,
            },
            1 => DirectReq::Modify(t),
            _ => DirectReq::Unregister {
                addr: AddrArg::Current,
                free_filters: false,
            },
        };
        return Some(Action::NotDirect(c, r));
    }
    let d = src.below(DIRECTS as u64)? as usize;
    let t = src.below(targets)? as usize;
    let r = if m.directs[d].target.is_some() {
        match src.below(10)? {
            0..=3 => DirectReq::Modify(t),
            4..=8 => DirectReq::Unregister {
                addr: gen_addr(src)?,
                free_filters: !src.chance(1, 3)?,
            },
            _ => DirectReq::Register {
                funcs: None,
                target: t,
            },
        }
    } else {
        match src.below(10)? {
            0..=6 => DirectReq::Register {
                funcs: Some(gen_direct_set(src, m, pool)?),
                target: t,
            },
            7 => DirectReq::Register {
                funcs: None,
                target: t,
            },
            8 => DirectReq::Modify(t),
            _ => DirectReq::Unregister {
                addr: AddrArg::Current,
                free_filters: true,
            },
        }
    };
    Some(Action::Direct(d, r))
}

/// Draws the next request. `funcs` is appended to when a module is made.
fn gen_action<S: Source>(src: &mut S, m: &Model, funcs: &mut Vec<Func>) -> Option<Action> {
    let pool: Vec<usize> = (1..m.funcs.len()).filter(|&f| m.nameable(f)).collect();
    let mods = |st: ModState| -> Vec<usize> {
        (0..m.modules.len())
            .filter(|&i| m.modules[i] == st)
            .collect()
    };
    Some(match src.below(22)? {
        0..=3 => {
            let t = src.below(TRACERS as u64)? as usize;
            Action::Tracer(t, gen_req(src, m.tracers[t].0, &pool)?)
        }
        4..=5 => {
            let g = src.below(GRAPHS as u64)? as usize;
            Action::Graph(g, gen_req(src, m.graphs[g].0, &pool)?)
        }
        6..=7 => {
            let c = src.below(CUSTOMS as u64)? as usize;
            Action::Custom(c, gen_req(src, m.customs[c].0, &pool)?)
        }
        8..=9 => {
            if !m.kprobes.is_empty() && src.chance(1, 2)? {
                let ks: Vec<(usize, bool)> = m.kprobes.iter().map(|(f, p)| (*f, *p)).collect();
                let (f, post) = ks[src.below(ks.len() as u64)? as usize];
                Action::Kprobe {
                    f,
                    post,
                    arm: false,
                }
            } else {
                let f = pool[src.below(pool.len() as u64)? as usize];
                if m.kprobes.contains_key(&f) {
                    return gen_action(src, m, funcs);
                }
                Action::Kprobe {
                    f,
                    post: src.chance(1, 3)?,
                    arm: true,
                }
            }
        }
        10 => {
            let f = pool[src.below(pool.len() as u64)? as usize];
            Action::Fprobe(f, !m.fprobes.contains(&f))
        }
        11 | 20 | 21 => gen_direct(src, m, &pool)?,
        12..=13 => {
            let f = if !m.livepatches.is_empty() && src.chance(1, 2)? {
                let l: Vec<usize> = m.livepatches.iter().copied().collect();
                l[src.below(l.len() as u64)? as usize]
            } else {
                pool[src.below(pool.len() as u64)? as usize]
            };
            Action::Livepatch(f, !m.livepatches.contains(&f))
        }
        14..=16 => {
            let present = mods(ModState::Coming).len() + mods(ModState::Live).len();
            if present >= 4 {
                return gen_action(src, m, funcs);
            }
            let id = m.modules.len();
            // Distinct slots for the first 4096 modules of a case.
            let slot = (id as u64).wrapping_mul(2_654_435_761) % 4096;
            let base = MOD_BASE + slot * 0x4000;
            let n = 1 + src.below(10)?;
            let mut fids = Vec::new();
            for j in 0..n {
                let valid = !src.chance(1, 10)?;
                funcs.push(Func {
                    ip: base + j * 0x30 + j % 5,
                    module: Some(id),
                    valid,
                });
                fids.push(funcs.len() - 1);
            }
            Action::ModInit(id, fids)
        }
        17 => {
            let c = mods(ModState::Coming);
            if c.is_empty() {
                return gen_action(src, m, funcs);
            }
            Action::ModEnable(c[src.below(c.len() as u64)? as usize])
        }
        _ => {
            let mut c = mods(ModState::Live);
            c.extend(mods(ModState::Coming));
            if c.is_empty() {
                return gen_action(src, m, funcs);
            }
            Action::ModUnload(c[src.below(c.len() as u64)? as usize])
        }
    })
}

/// Requests that turn everything off again.
fn teardown(m: &Model) -> Vec<Action> {
    let mut out = Vec::new();
    for (t, (on, _)) in m.tracers.iter().enumerate() {
        if *on {
            out.push(Action::Tracer(t, Req::Off));
        }
    }
    for (g, (on, _)) in m.graphs.iter().enumerate() {
        if *on {
            out.push(Action::Graph(g, Req::Off));
        }
    }
    for (c, (on, _)) in m.customs.iter().enumerate() {
        if *on {
            out.push(Action::Custom(c, Req::Off));
        }
    }
    for (&f, &post) in &m.kprobes {
        out.push(Action::Kprobe {
            f,
            post,
            arm: false,
        });
    }
    for &f in &m.fprobes {
        out.push(Action::Fprobe(f, false));
    }
    for (d, u) in m.directs.iter().enumerate() {
        if u.target.is_some() {
            out.push(Action::Direct(
                d,
                DirectReq::Unregister {
                    addr: AddrArg::Current,
                    free_filters: true,
                },
            ));
        }
    }
    for &f in &m.livepatches {
        out.push(Action::Livepatch(f, false));
    }
    for (i, s) in m.modules.iter().enumerate() {
        if *s != ModState::Gone {
            out.push(Action::ModUnload(i));
        }
    }
    out
}

/// What one case did.
#[derive(Default, Debug, Clone)]
pub struct CaseStats {
    /// Requests applied.
    pub steps: u64,
    /// Requests refused (predicted by the model too).
    pub refused: u64,
    /// Direct-call outcomes.
    pub direct: DirectCounts,
    /// Record checks against the model.
    pub checked: u64,
    /// Update pass counters (`update::Counts`).
    pub counts: Counts,
}

/// A failing case: the step and request, and what went wrong.
#[derive(Debug)]
pub struct CaseFail {
    /// Step number (0 is the boot check).
    pub step: u64,
    /// The request of that step.
    pub action: String,
    /// What differed.
    pub msg: String,
}

fn compare(sim: &mut Sim, m: &mut Model, step: u64, action: String) -> Result<u64, CaseFail> {
    let fail = |msg: String| CaseFail {
        step,
        action: action.clone(),
        msg,
    };
    if !sim.errs.is_empty() {
        return Err(fail(sim.errs.join("; ")));
    }
    if !sim.arch.queue.is_empty() {
        return Err(fail("writes left queued".into()));
    }
    m.check(&sim.view()).map(|n| n as u64).map_err(fail)
}

/// Runs one case from `src`: boot, up to `steps` random requests, then
/// everything off again; the model checks every step.
pub fn run_case<S: Source>(src: &mut S, steps: usize) -> Result<CaseStats, CaseFail> {
    run_case_with(src, steps, None)
}

/// [`run_case`] with a deliberate mistake in the simulated kernel.
pub fn run_case_with<S: Source>(
    src: &mut S,
    steps: usize,
    fault: Option<Fault>,
) -> Result<CaseStats, CaseFail> {
    let mut stats = CaseStats::default();
    let Some(layout) = gen_layout(src) else {
        return Ok(stats);
    };
    let ncore = 24 + src.below(40).unwrap_or(0);
    let mut funcs = std::vec![Func {
        ip: 0,
        module: None,
        valid: false,
    }];
    for i in 0..ncore {
        funcs.push(Func {
            ip: CORE_BASE + i * 0x40 + i % 7,
            module: None,
            valid: i % 13 != 5,
        });
    }
    let mut sim = Sim::boot(layout.clone(), funcs.clone());
    sim.fault = fault;
    let mut model = Model::new(layout, funcs.clone(), TRACERS, GRAPHS);
    stats.checked += compare(&mut sim, &mut model, 0, "boot".into())?;
    let mut step = 0u64;
    let mut run = |a: Action, sim: &mut Sim, model: &mut Model, funcs: &[Func]| {
        step += 1;
        if let Action::ModInit(_, fids) = &a {
            for &f in fids {
                sim.funcs.push(funcs[f]);
                model.funcs.push(funcs[f]);
            }
        }
        let want = model.apply(&a);
        let got = sim.apply(&a);
        let desc = format!("{a:?}");
        if want != got {
            return Err(CaseFail {
                step,
                action: desc,
                msg: format!("model says {want:?}, kernel says {got:?}"),
            });
        }
        let n = compare(sim, model, step, desc)?;
        Ok((n, got != Outcome::Done))
    };
    for _ in 0..steps {
        let Some(a) = gen_action(src, &model, &mut funcs) else {
            break;
        };
        let (n, refused) = run(a, &mut sim, &mut model, &funcs)?;
        stats.checked += n;
        stats.refused += u64::from(refused);
    }
    for a in teardown(&model) {
        let (n, _) = run(a, &mut sim, &mut model, &funcs)?;
        stats.checked += n;
    }
    stats.steps = step;
    stats.counts = sim.counts;
    stats.direct = sim.direct;
    let dirty = sim
        .recs
        .iter()
        .any(|r| r.flags & !(bit::DISABLED | bit::TOUCHED | bit::MODIFIED) != 0);
    // The kernel's sweep after the last ops (`rfcore::registry::left_behind`)
    // must see the same.
    let swept = sim
        .recs
        .iter()
        .any(|r| crate::rfcore::registry::left_behind(RecFlags::from_raw(r.flags)));
    if swept != dirty {
        return Err(CaseFail {
            step,
            action: "teardown".into(),
            msg: format!("the sweep says left behind: {swept}, the records: {dirty}"),
        });
    }
    if dirty || sim.arch.text.values().any(|t| *t != NOP) || !sim.list.is_empty() {
        return Err(CaseFail {
            step,
            action: "teardown".into(),
            msg: "records, text or ops list not clean with every ops off".into(),
        });
    }
    Ok(stats)
}

/// Runs the decoded bytes of one fuzzer input; panics on a failure.
pub fn fuzz_one(data: &[u8]) -> CaseStats {
    match run_case(&mut Bytes::new(data), 200) {
        Ok(s) => s,
        Err(e) => panic!("sim: step {} ({}): {}", e.step, e.action, e.msg),
    }
}

/// A source that takes its choices from another and keeps them as the
/// bytes [`Bytes`] decodes to the same choices: a seeded case becomes a
/// fuzzer input.
pub struct Recording<S> {
    inner: S,
    /// The bytes so far.
    pub bytes: Vec<u8>,
}

impl<S: Source> Recording<S> {
    /// Records the choices of `inner`.
    pub fn new(inner: S) -> Self {
        Recording {
            inner,
            bytes: Vec::new(),
        }
    }
}

impl<S: Source> Source for Recording<S> {
    fn below(&mut self, n: u64) -> Option<u64> {
        let v = self.inner.below(n)?;
        if n > 256 {
            self.bytes.extend_from_slice(&(v as u16).to_be_bytes());
        } else {
            self.bytes.push(v as u8);
        }
        Some(v)
    }
}

/// Reads a decimal or 0x-hex number from the environment.
#[cfg(test)]
fn env_num(name: &str) -> Option<u64> {
    let s = std::env::var(name).ok()?;
    let s = s.trim();
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    Some(v.unwrap_or_else(|_| panic!("{name}={s:?} is not a number")))
}

#[cfg(test)]
fn sum(total: &mut CaseStats, s: &CaseStats) {
    total.steps += s.steps;
    total.refused += s.refused;
    total.checked += s.checked;
    total.direct.add(&s.direct);
    add_counts(&mut total.counts, &s.counts);
}

#[test]
fn random_cases_match_the_model() {
    let base = env_num("RFT_SEED").unwrap_or(0x51_2026);
    let cases = env_num("RFT_SIM_CASES").unwrap_or(DEFAULT_CASES);
    let start = std::time::Instant::now();
    let mut total = CaseStats::default();
    for i in 0..cases {
        let seed = base.wrapping_add(i);
        let mut rng = Rng::new(seed);
        match run_case(&mut rng, STEPS) {
            Ok(s) => sum(&mut total, &s),
            Err(e) => panic!(
                "sim: case seed {seed:#x} failed at step {} ({}): {}\n\
                 replay: RFT_SEED={seed:#x} RFT_SIM_CASES=1 cargo test sim::",
                e.step, e.action, e.msg
            ),
        }
    }
    let c = &total.counts;
    assert!(c.make_call > 0 && c.modify_call > 0 && c.make_nop > 0 && total.refused > 0);
    let d = &total.direct;
    if cases >= 100 {
        // Every path of the direct-call interface was taken.
        let paths = [
            d.registered,
            d.busy,
            d.startup_failed,
            d.shared,
            d.invalid,
            d.retargeted,
            d.retarget_busy,
            d.unregistered,
            d.left_entries,
        ];
        assert!(paths.iter().all(|&n| n > 0), "{d:?}");
    }
    super::util::note(&format!(
        "sim: seed {base:#x} (RFT_SEED), {cases} cases (RFT_SIM_CASES), {} steps, {} refused, \
         {} record checks, {} make_call, {} modify_call, {} make_nop, {} batches in {:.1?}",
        total.steps,
        total.refused,
        total.checked,
        c.make_call,
        c.modify_call,
        c.make_nop,
        c.batches,
        start.elapsed()
    ));
    let requests = d.registered
        + d.busy
        + d.startup_failed
        + d.invalid
        + d.retargeted
        + d.retarget_busy
        + d.unregistered;
    super::util::note(&format!(
        "sim: {requests} direct-call requests: {} registered ({} sharing a function with an \
         IPMODIFY ops), \
         {} refused by the table (-EBUSY), {} start-ups failed (table restored), \
         {} -EINVAL, {} retargeted, {} retargets refused (-EBUSY), {} unregistered \
         ({} leaving entries: another address named), tables up to {} bits",
        d.registered,
        d.shared,
        d.busy,
        d.startup_failed,
        d.invalid,
        d.retargeted,
        d.retarget_busy,
        d.unregistered,
        d.left_entries,
        d.max_bits
    ));
}

/// Cases tried per deliberate mistake before giving up on seeing it.
#[cfg(test)]
const FAULT_CASES: u64 = 2000;

/// Each deliberate mistake in the direct-call code of the simulated kernel
/// (a table kept after a failed start-up, entries left by a refused
/// registration or an unregistration, entries not retargeted, a table too
/// narrow) makes the comparison with the model fail, on the direct table,
/// within a few random cases.
#[test]
fn direct_table_mistakes_are_caught() {
    let base = env_num("RFT_SEED").unwrap_or(0x51_2026);
    for fault in Fault::ALL {
        let mut caught = None;
        for i in 0..FAULT_CASES {
            let mut rng = Rng::new(base.wrapping_add(i));
            if let Err(e) = run_case_with(&mut rng, STEPS, Some(fault)) {
                caught = Some((i + 1, e));
                break;
            }
        }
        let Some((n, e)) = caught else {
            panic!("{fault:?}: not seen in {FAULT_CASES} cases");
        };
        assert!(
            e.msg.contains("direct table"),
            "{fault:?}: seen, but not as a direct table difference: {}",
            e.msg
        );
        super::util::note(&format!(
            "sim: {fault:?} caught in case {n} at step {} ({}): {}",
            e.step, e.action, e.msg
        ));
    }
}

/// A recorded seeded case replays through the byte decoder of the fuzz
/// target to the same outcome.
#[test]
fn recorded_case_replays_as_fuzz_input() {
    let mut rec = Recording::new(Rng::new(0x51_2026));
    let want = run_case(&mut rec, STEPS).expect("seeded case");
    let got = run_case(&mut Bytes::new(&rec.bytes), STEPS).expect("replay");
    assert_eq!((got.steps, got.checked), (want.steps, want.checked));
}

/// The committed fuzz seed corpus, replayed so the fuzz target cannot rot.
#[test]
fn fuzz_corpus_replays() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/sim");
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .collect();
    entries.sort();
    let mut d = DirectCounts::default();
    for p in entries {
        let data = std::fs::read(&p).expect("corpus file");
        super::util::note(&format!(
            "sim: replaying {}",
            p.file_name().unwrap_or_default().to_string_lossy()
        ));
        d.add(&fuzz_one(&data).direct);
        n += 1;
    }
    assert!(n > 0, "empty corpus");
    // The seeds reach the direct-call interface's main paths.
    let paths = [
        d.registered,
        d.busy,
        d.retargeted,
        d.unregistered,
        d.invalid,
    ];
    assert!(paths.iter().all(|&n| n > 0), "{d:?}");
    super::util::note(&format!(
        "sim: {n} fuzz corpus inputs replayed; direct calls: {d:?}"
    ));
}

/// A fixed scenario whose outcome is known by hand, so that the model and
/// the simulation cannot both be wrong in the same way unnoticed.
#[test]
fn hand_checked_scenario() {
    let layout = Layout {
        tracer_tramp: std::vec![Some(TRAMP_BASE), Some(TRAMP_BASE + 0x1000), None],
        graph_tramp: None,
        kprobe_tramp: [Some(TRAMP_BASE + 0x2000), None],
        fprobe_tramp: None,
        direct_targets: std::vec![DIRECT_BASE + 1, DIRECT_BASE + 0x1000, DIRECT_BASE + 0x2001],
        direct_share: std::vec![false, false, true],
        lp_tramp_base: None,
        custom: std::vec![(None, false, true), (None, true, true)],
        jmp_bit: true,
        call_ops: false,
    };
    let mut funcs = std::vec![Func {
        ip: 0,
        module: None,
        valid: false,
    }];
    for i in 0..4u64 {
        funcs.push(Func {
            ip: CORE_BASE + i * 0x40,
            module: None,
            valid: true,
        });
    }
    let ip = |f: usize| funcs[f].ip;
    let mut sim = Sim::boot(layout.clone(), funcs.clone());
    let mut model = Model::new(layout, funcs.clone(), TRACERS, GRAPHS);
    let text = |sim: &Sim, f: usize| sim.arch.text[&funcs[f].ip];
    let step = |a: Action, sim: &mut Sim, model: &mut Model| {
        let out = model.apply(&a);
        assert_eq!(out, sim.apply(&a), "{a:?}");
        assert!(sim.errs.is_empty(), "{:?}", sim.errs);
        model.check(&sim.view()).expect("model");
        out
    };
    assert!(sim.arch.text.values().all(|t| *t == NOP));
    // Tracer 0 on function 1 only: its own trampoline.
    step(
        Action::Tracer(0, Req::Filter([1].into())),
        &mut sim,
        &mut model,
    );
    step(Action::Tracer(0, Req::On), &mut sim, &mut model);
    assert_eq!(text(&sim, 1), insn(ip(1), TRAMP_BASE, false));
    assert_eq!(text(&sim, 2), NOP);
    // A kprobe on 1 as well: two users, registers saved.
    step(
        Action::Kprobe {
            f: 1,
            post: false,
            arm: true,
        },
        &mut sim,
        &mut model,
    );
    assert_eq!(text(&sim, 1), insn(ip(1), REGS_CALLER, false));
    // Direct call on 2, a jump on this kernel; a second direct there is
    // refused, and the table keeps one entry.
    let register = |d: usize, fs: &[usize], target: usize| {
        Action::Direct(
            d,
            DirectReq::Register {
                funcs: Some(fs.iter().copied().collect()),
                target,
            },
        )
    };
    let table = |sim: &Sim| sim.direct_fns.map.clone();
    step(register(0, &[2], 0), &mut sim, &mut model);
    assert_eq!(text(&sim, 2), insn(ip(2), DIRECT_BASE, true));
    assert_eq!(table(&sim), [(ip(2), DIRECT_BASE + 1)].into());
    assert_eq!(sim.direct_fns.bits, 1);
    let a = register(1, &[2, 3], 1);
    assert_eq!(step(a, &mut sim, &mut model), Outcome::Refused);
    assert_eq!(table(&sim), [(ip(2), DIRECT_BASE + 1)].into());
    assert_eq!(text(&sim, 3), NOP);
    // Registered already, or not a direct ops: -EINVAL.
    let again = Action::Direct(
        0,
        DirectReq::Register {
            funcs: None,
            target: 1,
        },
    );
    assert_eq!(step(again, &mut sim, &mut model), Outcome::Invalid);
    let custom = Action::NotDirect(0, DirectReq::Modify(1));
    assert_eq!(step(custom, &mut sim, &mut model), Outcome::Invalid);
    // Another target: a call now, through the stub and back.
    step(
        Action::Direct(0, DirectReq::Modify(1)),
        &mut sim,
        &mut model,
    );
    assert_eq!(text(&sim, 2), insn(ip(2), DIRECT_BASE + 0x1000, false));
    assert_eq!(table(&sim), [(ip(2), DIRECT_BASE + 0x1000)].into());
    // A live patch on 3: direct ops 1 may not join it without an ops_func
    // (its start-up fails, the old table comes back); ops 2 agrees to share.
    step(Action::Livepatch(3, true), &mut sim, &mut model);
    assert_eq!(
        step(register(1, &[3], 0), &mut sim, &mut model),
        Outcome::Refused
    );
    assert_eq!(table(&sim), [(ip(2), DIRECT_BASE + 0x1000)].into());
    assert_eq!(sim.direct_fns.bits, 1);
    step(register(2, &[3, 4], 2), &mut sim, &mut model);
    assert_eq!(
        table(&sim),
        [
            (ip(2), DIRECT_BASE + 0x1000),
            (ip(3), DIRECT_BASE + 0x2001),
            (ip(4), DIRECT_BASE + 0x2001)
        ]
        .into()
    );
    assert_eq!(sim.direct_fns.bits, 2);
    assert_eq!(text(&sim, 3), insn(ip(3), REGS_CALLER, false));
    assert_eq!(text(&sim, 4), insn(ip(4), DIRECT_BASE + 0x2000, true));
    // Ops 2 unregistered with its target's call address: the same
    // trampoline on this kernel, so its entries go; the table keeps its
    // width.
    step(
        Action::Direct(
            2,
            DirectReq::Unregister {
                addr: AddrArg::Marked,
                free_filters: true,
            },
        ),
        &mut sim,
        &mut model,
    );
    assert_eq!(table(&sim), [(ip(2), DIRECT_BASE + 0x1000)].into());
    assert_eq!(sim.direct_fns.bits, 2);
    assert_eq!(text(&sim, 4), NOP);
    step(Action::Livepatch(3, false), &mut sim, &mut model);
    // Everything off: all NOPs again.
    step(
        Action::Kprobe {
            f: 1,
            post: false,
            arm: false,
        },
        &mut sim,
        &mut model,
    );
    assert_eq!(text(&sim, 1), insn(ip(1), TRAMP_BASE, false));
    step(
        Action::Direct(
            0,
            DirectReq::Unregister {
                addr: AddrArg::Current,
                free_filters: true,
            },
        ),
        &mut sim,
        &mut model,
    );
    assert!(table(&sim).is_empty());
    step(Action::Tracer(0, Req::Off), &mut sim, &mut model);
    assert!(sim.arch.text.values().all(|t| *t == NOP));
}
