// SPDX-License-Identifier: GPL-2.0

//! Reference model for the whole-kernel simulation ([`super::sim`]).
//!
//! The model knows only what the users of ftrace asked for (which tracers,
//! probes, direct calls and live patches are on, with which filters, and
//! which modules are loaded) and the documented meaning of those requests.
//! From that alone it computes, for every function, the set of ftrace ops
//! that want it, and from that set the reference count, the request bits and
//! the instruction the call site must hold (a site wanted by one direct ops
//! alone calls or jumps to its current target); which requests are refused
//! and with which errno; and the direct-functions table (every function of
//! a registered direct ops -> its current target, with the entries an
//! unregistration naming another trampoline leaves) and its width. It never
//! looks at the record
//! flags to decide what they should be, shares no code with `rfcore`, and
//! names functions by number, not by address, so a record table that loses
//! or duplicates a site cannot agree with it by accident.
//!
//! Kernel facts it relies on are listed in `sim.rs`.

use std::collections::{
    BTreeMap,
    BTreeSet, //
};
use std::format;
use std::string::String;
use std::vec::Vec;

/// The function a cleared hash entry stands for: the kernel zeroes the
/// address of an unloaded module's function in the trace arrays' hashes, so
/// all such entries become one and the same "address 0" entry.
pub const DEAD: usize = 0;

/// `ftrace_caller`.
pub const CALLER: u64 = 0xffff_ffff_81e0_0000;
/// `ftrace_regs_caller` (`FTRACE_REGS_ADDR`).
pub const REGS_CALLER: u64 = 0xffff_ffff_81e0_0100;

/// Flag bits of a record, numbered here from the kernel header.
pub mod bit {
    /// The site has been a call.
    pub const TOUCHED: u64 = 1 << 20;
    /// An IPMODIFY or direct ops made the site a call.
    pub const MODIFIED: u64 = 1 << 19;
    /// Per-site ops literal requested / in use.
    pub const CALL_OPS: u64 = 1 << 22;
    /// See [`CALL_OPS`].
    pub const CALL_OPS_EN: u64 = 1 << 21;
    /// A direct ops is on the site / the site jumps to it.
    pub const DIRECT: u64 = 1 << 24;
    /// See [`DIRECT`].
    pub const DIRECT_EN: u64 = 1 << 23;
    /// The record must not be patched.
    pub const DISABLED: u64 = 1 << 25;
    /// An IPMODIFY ops is on the site.
    pub const IPMODIFY: u64 = 1 << 26;
    /// The single ops' trampoline is wanted / called.
    pub const TRAMP: u64 = 1 << 28;
    /// See [`TRAMP`].
    pub const TRAMP_EN: u64 = 1 << 27;
    /// Registers must be saved / the regs caller is called.
    pub const REGS: u64 = 1 << 30;
    /// See [`REGS`].
    pub const REGS_EN: u64 = 1 << 29;
    /// The site is a call.
    pub const ENABLED: u64 = 1 << 31;
    /// The reference count field.
    pub const COUNT: u64 = (1 << 19) - 1;
}

/// A filter and a notrace set, by function number.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Hash {
    /// Functions traced; empty means every function.
    pub filter: BTreeSet<usize>,
    /// Functions never traced.
    pub notrace: BTreeSet<usize>,
}

impl Hash {
    /// The documented matching rule: in the filter (or the filter is
    /// empty), and not in the notrace set.
    pub fn wants(&self, f: usize) -> bool {
        (self.filter.is_empty() || self.filter.contains(&f)) && !self.notrace.contains(&f)
    }

    /// The hash after `gone` functions were unloaded, for a hash the kernel
    /// clears (a trace array's): their entries become [`DEAD`].
    fn cleared(&self, gone: &BTreeSet<usize>) -> Hash {
        let map = |s: &BTreeSet<usize>| -> BTreeSet<usize> {
            s.iter()
                .map(|f| if gone.contains(f) { DEAD } else { *f })
                .collect()
        };
        Hash {
            filter: map(&self.filter),
            notrace: map(&self.notrace),
        }
    }
}

/// What the model knows about a function.
#[derive(Clone, Copy, Debug)]
pub struct Func {
    /// Address of its call site.
    pub ip: u64,
    /// The module it belongs to, if any.
    pub module: Option<usize>,
    /// False for a site that is not inside a known function (weak
    /// functions): the kernel keeps its record disabled forever.
    pub valid: bool,
}

/// Where a module is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ModState {
    /// Records created and converted to NOPs, not yet enabled.
    Coming,
    /// Records enabled.
    Live,
    /// Unloaded.
    Gone,
}

/// Fixed facts of one simulated kernel: addresses of trampolines and
/// direct trampolines, and which kinds of ops have a trampoline.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Trampoline of each function tracer instance (index 0: the global one).
    pub tracer_tramp: Vec<Option<u64>>,
    /// Trampoline of the function-graph manager ops.
    pub graph_tramp: Option<u64>,
    /// Trampoline of the kprobe ops, without and with IPMODIFY.
    pub kprobe_tramp: [Option<u64>; 2],
    /// Trampoline of the fprobe ops.
    pub fprobe_tramp: Option<u64>,
    /// The direct trampolines the users of the direct-call interface may
    /// ask for, by number (bit 0: jump, on a jmp-bit kernel).
    pub direct_targets: Vec<u64>,
    /// Per direct ops: it has an `ops_func` that agrees to share a
    /// function with an IPMODIFY ops (`FTRACE_OPS_CMD_ENABLE_SHARE_IPMODIFY_SELF`
    /// answers 0); without one, such a function is refused with `-EBUSY`.
    pub direct_share: Vec<bool>,
    /// Base of the livepatch ops' trampolines, if they get one.
    pub lp_tramp_base: Option<u64>,
    /// Per custom ops: trampoline, SAVE_REGS, no recursion/RCU assist.
    pub custom: Vec<(Option<u64>, bool, bool)>,
    /// Bit 0 of a direct target selects a jump.
    pub jmp_bit: bool,
    /// The arch has per-site ops literals (accounting of CALL_OPS).
    pub call_ops: bool,
}

impl Layout {
    /// Trampoline of the livepatch ops of function `f`.
    pub fn lp_tramp(&self, f: usize) -> Option<u64> {
        self.lp_tramp_base.map(|b| b + (f as u64) * 0x100)
    }
}

/// A user-level request, applied to the model and to the simulation.
#[derive(Clone, Debug)]
pub enum Action {
    /// Function tracer instance `t` on (`Some(true)`), off, or a new hash.
    Tracer(usize, Req),
    /// Function-graph instance `g` (a sub-ops of the manager).
    Graph(usize, Req),
    /// Arm (`true`) or disarm a kprobe on a function; `post` = has a post
    /// handler, so it may change the IP.
    Kprobe {
        /// The function.
        f: usize,
        /// Has a post handler.
        post: bool,
        /// Arm or disarm.
        arm: bool,
    },
    /// Add (`true`) or remove an entry-only fprobe on a function.
    Fprobe(usize, bool),
    /// A call of the direct-call interface for direct ops `d`.
    Direct(usize, DirectReq),
    /// The same calls for custom ops `c`, which is not a direct ops (it has
    /// a function of its own): `funcs` is not applied, addresses are
    /// whatever the request names.
    NotDirect(usize, DirectReq),
    /// Enable (`true`) or disable the live patch of a function.
    Livepatch(usize, bool),
    /// Custom dynamic ops `c`.
    Custom(usize, Req),
    /// Load a module: its functions get the given numbers.
    ModInit(usize, Vec<usize>),
    /// Enable a coming module's records.
    ModEnable(usize),
    /// Unload a module.
    ModUnload(usize),
}

/// What to do to a tracer-like ops.
#[derive(Clone, Debug)]
pub enum Req {
    /// Register it.
    On,
    /// Unregister it.
    Off,
    /// Replace its filter.
    Filter(BTreeSet<usize>),
    /// Replace its notrace set.
    Notrace(BTreeSet<usize>),
}

/// A call of the direct-call interface (`register_ftrace_direct()`,
/// `modify_ftrace_direct()`, `unregister_ftrace_direct()`).
#[derive(Clone, Debug)]
pub enum DirectReq {
    /// `register_ftrace_direct()` with target number `target` of the
    /// layout; first, if `funcs` is given and the ops is not registered,
    /// its filter is replaced by them (`ftrace_set_filter_ips()`, which
    /// also initialises the ops). A registered ops keeps its filter.
    Register {
        /// The new filter.
        funcs: Option<BTreeSet<usize>>,
        /// The target's number.
        target: usize,
    },
    /// `modify_ftrace_direct()` to target number `.0`.
    Modify(usize),
    /// `unregister_ftrace_direct()`.
    Unregister {
        /// The address the caller passes.
        addr: AddrArg,
        /// `free_filters`: the ops' filter is emptied afterwards.
        free_filters: bool,
    },
}

/// The address a user passes to `unregister_ftrace_direct()`.
#[derive(Clone, Copy, Debug)]
pub enum AddrArg {
    /// What its ops calls now, as the kernel-doc asks.
    Current,
    /// What its ops calls now with bit 0 flipped: the same trampoline on a
    /// kernel where bit 0 marks a jump, another address elsewhere.
    Marked,
    /// Target number `.0` of the layout, whatever the ops calls.
    Target(usize),
}

/// Whether a request is carried out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// Done.
    Done,
    /// Refused (`-EBUSY`): an IPMODIFY or direct conflict, or a module in use.
    Refused,
    /// Refused (`-EINVAL`): the ops may not make that call of the
    /// direct-call interface.
    Invalid,
}

/// A direct ops, as its user set it up.
#[derive(Clone, Debug, Default)]
pub struct DirectUse {
    /// Its filter: the functions last given, kept by an unregistration
    /// without `free_filters` (a module's function stays in it after the
    /// module is gone: the kernel clears only the trace arrays' hashes).
    pub filter: BTreeSet<usize>,
    /// A filter was set once (`ftrace_ops_init()` ran).
    pub initialized: bool,
    /// Registered: the trampoline its functions call now.
    pub target: Option<u64>,
}

/// One ftrace ops, as far as the model is concerned.
#[derive(Clone, Debug)]
pub struct User {
    /// Stable name, for messages.
    pub name: String,
    /// What it traces.
    pub hash: Hash,
    /// Wants the registers.
    pub save_regs: bool,
    /// May modify the IP.
    pub ipmodify: bool,
    /// Direct ops: its target.
    pub direct: Option<u64>,
    /// Its trampoline.
    pub tramp: Option<u64>,
    /// Callable through a per-site literal.
    pub call_ops_ok: bool,
}

/// The user-level state.
pub struct Model {
    /// The kernel's fixed facts.
    pub layout: Layout,
    /// Every function ever known, by number (0 is [`DEAD`]).
    pub funcs: Vec<Func>,
    /// Module states, by module number.
    pub modules: Vec<ModState>,
    /// Function tracer instances: on, hash.
    pub tracers: Vec<(bool, Hash)>,
    /// Function-graph instances: on, hash.
    pub graphs: Vec<(bool, Hash)>,
    /// Enabled graph instances, newest first (the sub-ops list).
    graph_list: Vec<usize>,
    /// The manager's hash, as the kernel builds it from its sub-ops.
    graph_hash: Hash,
    /// Armed kprobes: function -> has a post handler.
    pub kprobes: BTreeMap<usize, bool>,
    /// Functions with an fprobe.
    pub fprobes: BTreeSet<usize>,
    /// Direct ops.
    pub directs: Vec<DirectUse>,
    /// Entries an unregistration left in the direct-functions table: it
    /// named another trampoline than the one its functions call, and only
    /// entries calling the named one are taken out (function address ->
    /// target).
    pub stale: BTreeMap<u64, u64>,
    /// The width (`size_bits`) of the direct-functions table: 0 for the
    /// kernel's empty table, else that of the last one a registration
    /// built and kept.
    pub direct_bits: u32,
    /// Live-patched functions.
    pub livepatches: BTreeSet<usize>,
    /// Custom ops: on, hash.
    pub customs: Vec<(bool, Hash)>,
    /// Functions whose site may keep the regs caller without a user that
    /// needs it (see [`Model::check`]).
    linger: BTreeSet<usize>,
    /// Functions that have been wanted by a direct or IPMODIFY ops.
    modified: BTreeSet<usize>,
}

/// What the simulated kernel shows the model: its record table and text,
/// and its direct-functions table.
pub struct View<'a> {
    /// `(function number, ip, flags)` in table order.
    pub recs: Vec<(usize, u64, u64)>,
    /// The text of every call site.
    pub text: &'a BTreeMap<u64, [u8; 5]>,
    /// `direct_functions`: function address -> direct trampoline.
    pub direct: &'a BTreeMap<u64, u64>,
    /// Its width (`size_bits`).
    pub direct_bits: u32,
    /// Per direct ops: its target (`ops->direct_call`) if it is started.
    pub direct_calls: Vec<Option<u64>>,
}

/// `CALL rel32` (or `JMP rel32`) at `ip` to `dest`, encoded here.
pub fn insn(ip: u64, dest: u64, jmp: bool) -> [u8; 5] {
    let rel = dest.wrapping_sub(ip.wrapping_add(5)) as i64;
    assert!(
        i32::try_from(rel).is_ok(),
        "layout: {dest:#x} far from {ip:#x}"
    );
    let r = (rel as i32).to_le_bytes();
    [if jmp { 0xe9 } else { 0xe8 }, r[0], r[1], r[2], r[3]]
}

/// The call-site NOP.
pub const NOP: [u8; 5] = [0x0f, 0x1f, 0x44, 0x00, 0x00];

fn hash_first(s: &Hash) -> Hash {
    if s.filter.is_empty() {
        Hash {
            filter: BTreeSet::new(),
            notrace: s.notrace.clone(),
        }
    } else {
        Hash {
            filter: s.filter.difference(&s.notrace).copied().collect(),
            notrace: BTreeSet::new(),
        }
    }
}

fn hash_next(main: &Hash, s: &Hash) -> Hash {
    let filter: BTreeSet<usize> = if main.filter.is_empty() || s.filter.is_empty() {
        BTreeSet::new()
    } else {
        let mut f: BTreeSet<usize> = s.filter.difference(&s.notrace).copied().collect();
        f.extend(main.filter.iter().copied());
        f
    };
    let notrace = if filter.is_empty() {
        main.notrace.intersection(&s.notrace).copied().collect()
    } else {
        BTreeSet::new()
    };
    Hash { filter, notrace }
}

impl Model {
    /// A model of a kernel with the given layout and core functions.
    pub fn new(layout: Layout, funcs: Vec<Func>, tracers: usize, graphs: usize) -> Self {
        let directs = layout.direct_share.len();
        let customs = layout.custom.len();
        Model {
            layout,
            funcs,
            modules: Vec::new(),
            tracers: vec_of(tracers),
            graphs: vec_of(graphs),
            graph_list: Vec::new(),
            graph_hash: Hash::default(),
            kprobes: BTreeMap::new(),
            fprobes: BTreeSet::new(),
            directs: std::vec![DirectUse::default(); directs],
            stale: BTreeMap::new(),
            direct_bits: 0,
            livepatches: BTreeSet::new(),
            customs: vec_of(customs),
            linger: BTreeSet::new(),
            modified: BTreeSet::new(),
        }
    }

    /// The functions that exist now (core and loaded modules, coming or
    /// live).
    pub fn present(&self, f: usize) -> bool {
        f != DEAD
            && match self.funcs[f].module {
                None => true,
                Some(m) => self.modules[m] != ModState::Gone,
            }
    }

    /// A function a user can name: present, valid, and not in a coming
    /// module.
    pub fn nameable(&self, f: usize) -> bool {
        self.present(f)
            && self.funcs[f].valid
            && self.funcs[f]
                .module
                .is_none_or(|m| self.modules[m] == ModState::Live)
    }

    /// The ftrace ops that are registered, derived from the requests.
    pub fn users(&self) -> Vec<User> {
        let l = &self.layout;
        let mut out = Vec::new();
        let plain = |name: String, hash: Hash, tramp: Option<u64>| User {
            name,
            hash,
            save_regs: false,
            ipmodify: false,
            direct: None,
            tramp,
            call_ops_ok: true,
        };
        for (t, (on, h)) in self.tracers.iter().enumerate() {
            if *on {
                out.push(plain(format!("tracer{t}"), h.clone(), l.tracer_tramp[t]));
            }
        }
        if !self.graph_list.is_empty() {
            out.push(plain(
                "graph".into(),
                self.graph_hash.clone(),
                l.graph_tramp,
            ));
        }
        for (post, name) in [(false, "kprobe"), (true, "kprobe-ipmodify")] {
            let fs: BTreeSet<usize> = self
                .kprobes
                .iter()
                .filter(|(_, p)| **p == post)
                .map(|(f, _)| *f)
                .collect();
            if !fs.is_empty() {
                out.push(User {
                    save_regs: true,
                    ipmodify: post,
                    ..plain(name.into(), only(fs), l.kprobe_tramp[usize::from(post)])
                });
            }
        }
        if !self.fprobes.is_empty() {
            out.push(plain(
                "fprobe".into(),
                only(self.fprobes.clone()),
                l.fprobe_tramp,
            ));
        }
        for (d, u) in self.directs.iter().enumerate() {
            if let Some(target) = u.target {
                out.push(User {
                    save_regs: true,
                    direct: Some(target),
                    // register_ftrace_direct() presets the trampoline.
                    ..plain(
                        format!("direct{d}"),
                        only(u.filter.clone()),
                        Some(REGS_CALLER),
                    )
                });
            }
        }
        for &f in &self.livepatches {
            out.push(User {
                ipmodify: true,
                ..plain(format!("livepatch:{f}"), only([f].into()), l.lp_tramp(f))
            });
        }
        for (c, (on, h)) in self.customs.iter().enumerate() {
            if *on {
                let (tramp, regs, ok) = l.custom[c];
                out.push(User {
                    save_regs: regs,
                    call_ops_ok: ok,
                    ..plain(format!("custom{c}"), h.clone(), tramp)
                });
            }
        }
        out
    }

    /// The users that want function `f`.
    fn wanting<'u>(&self, users: &'u [User], f: usize) -> Vec<&'u User> {
        users.iter().filter(|u| u.hash.wants(f)).collect()
    }

    /// Predicts whether a request is refused, then records it.
    pub fn apply(&mut self, a: &Action) -> Outcome {
        let before = self.users();
        let out = self.apply_inner(a, &before);
        if out == Outcome::Done {
            self.note_regs_left(&before);
        }
        out
    }

    /// An ops that saves registers and leaves a site by a filter change
    /// (it stays registered) is still on the ops list with its old filter
    /// while the site's count drops, so the kernel's "does anyone else need
    /// regs" question finds the ops itself and REGS stays set.
    fn note_regs_left(&mut self, before: &[User]) {
        let after = self.users();
        let names: BTreeSet<&str> = after.iter().map(|u| u.name.as_str()).collect();
        for f in 1..self.funcs.len() {
            if !self.present(f) {
                continue;
            }
            let now = self.wanting(&after, f);
            if now.is_empty() {
                self.linger.remove(&f);
                continue;
            }
            let left = before.iter().any(|u| {
                u.save_regs
                    && u.hash.wants(f)
                    && names.contains(u.name.as_str())
                    && !now.iter().any(|n| n.name == u.name)
            });
            if left {
                self.linger.insert(f);
            }
        }
    }

    /// Functions an IPMODIFY ops is on.
    fn ipmodified(&self, users: &[User], f: usize) -> bool {
        users.iter().any(|u| u.ipmodify && u.hash.wants(f))
    }

    fn apply_inner(&mut self, a: &Action, users: &[User]) -> Outcome {
        match a {
            Action::Tracer(t, r) => {
                let (on, h) = &mut self.tracers[*t];
                req(on, h, r);
            }
            Action::Custom(c, r) => {
                let (on, h) = &mut self.customs[*c];
                req(on, h, r);
            }
            Action::Graph(g, r) => {
                let was_on = self.graphs[*g].0;
                let (on, h) = &mut self.graphs[*g];
                req(on, h, r);
                match r {
                    Req::On if !was_on => {
                        self.graph_hash = if self.graph_list.is_empty() {
                            hash_first(&self.graphs[*g].1)
                        } else {
                            hash_next(&self.graph_hash, &self.graphs[*g].1)
                        };
                        self.graph_list.insert(0, *g);
                    }
                    Req::Off if was_on => {
                        self.graph_list.retain(|x| x != g);
                        self.rebuild_graph();
                    }
                    Req::Filter(_) | Req::Notrace(_) if was_on => self.rebuild_graph(),
                    _ => {}
                }
            }
            Action::Kprobe { f, post, arm } => {
                if *arm {
                    if *post && self.ipmodified(users, *f) {
                        return Outcome::Refused;
                    }
                    self.kprobes.insert(*f, *post);
                } else {
                    self.kprobes.remove(f);
                }
            }
            Action::Fprobe(f, add) => {
                if *add {
                    self.fprobes.insert(*f);
                } else {
                    self.fprobes.remove(f);
                }
            }
            Action::Direct(d, r) => return self.direct(*d, r, users),
            // Not a direct ops: it has a function of its own, so it may not
            // be registered as one, and it is not one to be changed or
            // stopped as one.
            Action::NotDirect(..) => return Outcome::Invalid,
            Action::Livepatch(f, on) => {
                if *on {
                    if self.ipmodified(users, *f) {
                        return Outcome::Refused;
                    }
                    self.livepatches.insert(*f);
                } else {
                    self.livepatches.remove(f);
                }
            }
            Action::ModInit(m, _) => {
                assert_eq!(*m, self.modules.len());
                self.modules.push(ModState::Coming);
            }
            Action::ModEnable(m) => self.modules[*m] = ModState::Live,
            Action::ModUnload(m) => {
                let gone: BTreeSet<usize> = (1..self.funcs.len())
                    .filter(|&f| self.funcs[f].module == Some(*m))
                    .collect();
                // A module with a direct call attached is in use.
                let attached = self
                    .directs
                    .iter()
                    .any(|u| u.target.is_some() && !u.filter.is_disjoint(&gone));
                if attached {
                    return Outcome::Refused;
                }
                // Going notifiers: kprobes, fprobes and live patches of the
                // module's functions are removed.
                self.kprobes.retain(|f, _| !gone.contains(f));
                self.fprobes.retain(|f| !gone.contains(f));
                self.livepatches.retain(|f| !gone.contains(f));
                self.modules[*m] = ModState::Gone;
                // Trace arrays' hashes are cleared: function and graph
                // instances. The manager's copy and custom ops keep theirs.
                for (_, h) in self.tracers.iter_mut().chain(self.graphs.iter_mut()) {
                    *h = h.cleared(&gone);
                }
            }
        }
        Outcome::Done
    }

    /// The direct-call interface, from its kernel-doc: `-EINVAL` for an
    /// ops that is registered already or names no function (register), or
    /// is not registered (modify, unregister); `-EBUSY` for a function
    /// that has a direct call already (the table has an entry for it:
    /// nothing changes), and for a function an IPMODIFY ops is on when the
    /// ops has no `ops_func` to agree to share it (register: the start-up
    /// fails and the table is as before; modify: the target stays).
    fn direct(&mut self, d: usize, r: &DirectReq, users: &[User]) -> Outcome {
        let addr = |t: usize| self.layout.direct_targets[t];
        let share = self.layout.direct_share[d];
        match r {
            DirectReq::Register { funcs, target } => {
                let registered = self.directs[d].target.is_some();
                if let (Some(fs), false) = (funcs, registered) {
                    self.directs[d].filter = fs.clone();
                    self.directs[d].initialized = true;
                }
                let u = &self.directs[d];
                if registered || !u.initialized || u.filter.is_empty() {
                    return Outcome::Invalid;
                }
                let table = self.direct_table();
                if u.filter
                    .iter()
                    .any(|&f| table.contains_key(&self.funcs[f].ip))
                {
                    return Outcome::Refused;
                }
                if !share && self.ipmodify_on(users, &u.filter) {
                    return Outcome::Refused;
                }
                self.direct_bits = fls_capped(u.filter.len() + table.len());
                self.directs[d].target = Some(addr(*target));
            }
            DirectReq::Modify(t) => {
                let u = &self.directs[d];
                if u.target.is_none() {
                    return Outcome::Invalid;
                }
                if !share && self.ipmodify_on(users, &u.filter) {
                    return Outcome::Refused;
                }
                self.directs[d].target = Some(addr(*t));
            }
            DirectReq::Unregister {
                addr: a,
                free_filters,
            } => {
                let Some(now) = self.directs[d].target else {
                    return Outcome::Invalid;
                };
                let given = match a {
                    AddrArg::Current => now,
                    AddrArg::Marked => now ^ 1,
                    AddrArg::Target(t) => addr(*t),
                };
                // One trampoline whether it is jumped to or called, where
                // bit 0 says which.
                let same = given == now || (self.layout.jmp_bit && given | 1 == now | 1);
                if !same {
                    for &f in &self.directs[d].filter {
                        self.stale.insert(self.funcs[f].ip, now);
                    }
                }
                let u = &mut self.directs[d];
                u.target = None;
                if *free_filters {
                    u.filter.clear();
                }
            }
        }
        Outcome::Done
    }

    /// An IPMODIFY ops is on one of `fs` (a present function).
    fn ipmodify_on(&self, users: &[User], fs: &BTreeSet<usize>) -> bool {
        fs.iter()
            .any(|&f| self.present(f) && self.ipmodified(users, f))
    }

    /// The direct-functions table the requests call for: every function of
    /// a registered direct ops calls its current target; and the entries
    /// unregistrations left.
    pub fn direct_table(&self) -> BTreeMap<u64, u64> {
        let mut t = self.stale.clone();
        for u in &self.directs {
            if let Some(target) = u.target {
                for &f in &u.filter {
                    t.insert(self.funcs[f].ip, target);
                }
            }
        }
        t
    }

    fn rebuild_graph(&mut self) {
        let mut acc: Option<Hash> = None;
        for &g in &self.graph_list {
            let s = &self.graphs[g].1;
            acc = Some(match acc {
                None => hash_first(s),
                Some(a) => hash_next(&a, s),
            });
        }
        self.graph_hash = acc.unwrap_or_default();
    }

    /// Checks the simulated kernel against the model. Returns the number of
    /// records checked.
    pub fn check(&mut self, v: &View<'_>) -> Result<usize, String> {
        let users = self.users();
        let table = self.direct_table();
        if *v.direct != table {
            return Err(format!("direct table {:x?}, want {table:x?}", v.direct));
        }
        if v.direct_bits != self.direct_bits {
            return Err(format!(
                "direct table {} bits wide, want {}",
                v.direct_bits, self.direct_bits
            ));
        }
        let calls: Vec<Option<u64>> = self.directs.iter().map(|u| u.target).collect();
        if v.direct_calls != calls {
            return Err(format!(
                "direct ops' targets {:x?}, want {calls:x?}",
                v.direct_calls
            ));
        }
        // Every present function has exactly one record, at its address.
        let mut seen = BTreeSet::new();
        for &(f, ip, _) in &v.recs {
            if f == DEAD || f >= self.funcs.len() || !self.present(f) {
                return Err(format!("record {ip:#x} for absent function {f}"));
            }
            if self.funcs[f].ip != ip || !seen.insert(f) {
                return Err(format!("record {ip:#x}: function {f} misplaced or twice"));
            }
        }
        let want_n = (1..self.funcs.len()).filter(|&f| self.present(f)).count();
        if seen.len() != want_n || v.text.len() != want_n {
            return Err(format!(
                "{} records and {} sites for {want_n} functions",
                seen.len(),
                v.text.len()
            ));
        }
        for &(f, ip, w) in &v.recs {
            let text = v.text.get(&ip).copied();
            self.check_one(&users, f, ip, w, text)
                .map_err(|e| format!("function {f} at {ip:#x} flags {w:#010x}: {e}"))?;
        }
        Ok(v.recs.len())
    }

    fn check_one(
        &mut self,
        users: &[User],
        f: usize,
        ip: u64,
        w: u64,
        text: Option<[u8; 5]>,
    ) -> Result<(), String> {
        let text = text.ok_or("no text")?;
        let func = self.funcs[f];
        let coming = func
            .module
            .is_some_and(|m| self.modules[m] == ModState::Coming);
        if !func.valid || coming {
            let stray = w & !(bit::DISABLED | bit::TOUCHED | bit::MODIFIED);
            if w & bit::DISABLED == 0 || stray != 0 || text != NOP {
                return Err(format!(
                    "disabled record must be an idle NOP, text {text:02x?}"
                ));
            }
            return Ok(());
        }
        let on = self.wanting(users, f);
        let names: Vec<&str> = on.iter().map(|u| u.name.as_str()).collect();
        let n = on.len() as u64;
        let has = |b: u64| w & b != 0;
        let fail = |what: &str| Err(format!("{what} (wanted by {names:?})"));
        if w & bit::COUNT != n {
            return fail("reference count is not the number of ops that want the site");
        }
        if has(bit::DISABLED) {
            return fail("DISABLED on a live record");
        }
        if n == 0 {
            self.linger.remove(&f);
            if w & !(bit::TOUCHED | bit::MODIFIED) != 0 || text != NOP {
                return Err(format!("unused site not idle: text {text:02x?}"));
            }
            return Ok(());
        }
        if on.iter().any(|u| u.direct.is_some() || u.ipmodify) {
            self.modified.insert(f);
        }
        let single = if n == 1 { Some(on[0]) } else { None };
        let need_regs = on.iter().any(|u| u.save_regs);
        let direct = on.iter().any(|u| u.direct.is_some());
        let ipmodify = on.iter().any(|u| u.ipmodify);
        let tramp = single.is_some_and(|u| u.tramp.is_some());
        if has(bit::DIRECT) != direct {
            return fail("DIRECT is not 'a direct ops wants the site'");
        }
        if has(bit::IPMODIFY) != ipmodify {
            return fail("IPMODIFY is not 'an IPMODIFY ops wants the site'");
        }
        if has(bit::TRAMP) != tramp {
            return fail("TRAMP is not 'a single ops with a trampoline'");
        }
        if need_regs && !has(bit::REGS) {
            return fail("REGS missing");
        }
        if !need_regs && has(bit::REGS) && !self.linger.contains(&f) {
            return fail("REGS set, no ops needs regs");
        }
        let call_ops = single.is_some_and(|u| u.call_ops_ok) && self.layout.call_ops;
        if has(bit::CALL_OPS) && !call_ops {
            return fail("CALL_OPS set without a single eligible ops");
        }
        if !has(bit::ENABLED) || !has(bit::TOUCHED) {
            return fail("a wanted site must be an enabled, touched call");
        }
        if has(bit::MODIFIED) && !self.modified.contains(&f) {
            return fail("MODIFIED without a direct or IPMODIFY ops ever");
        }
        // What the site must call.
        let (dest, jmp, direct_en, tramp_en) = match single {
            Some(u) if u.direct.is_some() => {
                let a = u.direct.unwrap_or_default();
                let jmp = self.layout.jmp_bit && a & 1 == 1;
                (if jmp { a & !1 } else { a }, jmp, true, tramp)
            }
            Some(u) if u.tramp.is_some() => (u.tramp.unwrap_or_default(), false, false, true),
            _ if has(bit::REGS) => (REGS_CALLER, false, false, false),
            _ => (CALLER, false, false, false),
        };
        let regs_en = has(bit::REGS);
        let en = [
            (bit::DIRECT_EN, direct_en, "DIRECT_EN"),
            (bit::TRAMP_EN, tramp_en, "TRAMP_EN"),
            (bit::REGS_EN, regs_en, "REGS_EN"),
            (bit::CALL_OPS_EN, has(bit::CALL_OPS), "CALL_OPS_EN"),
        ];
        for (b, want, name) in en {
            if has(b) != want {
                return Err(format!("{name} should be {want} (wanted by {names:?})"));
            }
        }
        let want = insn(ip, dest, jmp);
        if text != want {
            return Err(format!(
                "text {text:02x?}, want {want:02x?} ({} {dest:#x}, wanted by {names:?})",
                if jmp { "jmp" } else { "call" }
            ));
        }
        Ok(())
    }
}

/// The width the C `register_ftrace_direct()` gives the new table for `n`
/// entries: the number of bits that hold `n` (`fls()`), at most
/// `FTRACE_HASH_MAX_BITS` (12).
fn fls_capped(n: usize) -> u32 {
    let mut bits = 0;
    while bits < 12 && n >> bits != 0 {
        bits += 1;
    }
    bits
}

fn vec_of(n: usize) -> Vec<(bool, Hash)> {
    (0..n).map(|_| (false, Hash::default())).collect()
}

fn only(filter: BTreeSet<usize>) -> Hash {
    Hash {
        filter,
        notrace: BTreeSet::new(),
    }
}

fn req(on: &mut bool, h: &mut Hash, r: &Req) {
    match r {
        Req::On => *on = true,
        Req::Off => *on = false,
        Req::Filter(s) => h.filter = s.clone(),
        Req::Notrace(s) => h.notrace = s.clone(),
    }
}
