// SPDX-License-Identifier: GPL-2.0

//! The core's counters (shown in `<debugfs>/rftrace/stats` with the site
//! sets' own, `kside::siteset::stat()`), and the shadow and consistency
//! difference reports.
//!
//! A leaf module: it uses no other module of the crate.

use kernel::sync::atomic::{
    Atomic,
    Relaxed, //
};

/// The core's counters, shown in `<debugfs>/rftrace/stats`.
///
/// Counters only: they are bumped with relaxed atomics and read without a
/// lock, so a reader may see one counter updated before another.
pub(crate) struct Stats {
    pub(crate) init_nops: Atomic<u64>,
    pub(crate) passes: Atomic<u64>,
    pub(crate) walked: Atomic<u64>,
    pub(crate) make_call: Atomic<u64>,
    pub(crate) modify_call: Atomic<u64>,
    pub(crate) make_nop: Atomic<u64>,
    pub(crate) batches: Atomic<u64>,
    pub(crate) failures: Atomic<u64>,
    pub(crate) one_shot: Atomic<u64>,
    pub(crate) checks: Atomic<u64>,
    pub(crate) shadow_checks: Atomic<u64>,
    pub(crate) shadow_diffs: Atomic<u64>,
    pub(crate) accounted: Atomic<u64>,
    pub(crate) survivor_rule: Atomic<u64>,
    pub(crate) records_made: Atomic<u64>,
    pub(crate) records_released: Atomic<u64>,
    pub(crate) selected: Atomic<u64>,
    pub(crate) sites_refused: Atomic<u64>,
    pub(crate) ops_walks: Atomic<u64>,
    pub(crate) gathers: Atomic<u64>,
    pub(crate) changed: Atomic<u64>,
    pub(crate) fallbacks: Atomic<u64>,
    pub(crate) pass_walks: Atomic<u64>,
    pub(crate) pass_shadow: Atomic<u64>,
    pub(crate) manager_hashes: Atomic<u64>,
    pub(crate) manager_nothing: Atomic<u64>,
    pub(crate) consistency_checks: Atomic<u64>,
    pub(crate) consistency_diffs: Atomic<u64>,
    pub(crate) registered: Atomic<u64>,
    pub(crate) unregistered: Atomic<u64>,
    pub(crate) trace_function_updates: Atomic<u64>,
    pub(crate) account_walks: Atomic<u64>,
    pub(crate) started: Atomic<u64>,
    pub(crate) stopped: Atomic<u64>,
    pub(crate) quarantined: Atomic<u64>,
    pub(crate) ipmodify_walks: Atomic<u64>,
    pub(crate) ipmodify_retargets: Atomic<u64>,
    pub(crate) filter_changes: Atomic<u64>,
    pub(crate) modify_passes: Atomic<u64>,
    pub(crate) subops_started: Atomic<u64>,
    pub(crate) subops_stopped: Atomic<u64>,
    pub(crate) subops_changes: Atomic<u64>,
    pub(crate) direct_registered: Atomic<u64>,
    pub(crate) direct_unregistered: Atomic<u64>,
    pub(crate) direct_retargeted: Atomic<u64>,
    pub(crate) nop_at_build: Atomic<u64>,
    pub(crate) listed_passes: Atomic<u64>,
    pub(crate) listed_walks: Atomic<u64>,
    pub(crate) direct_refused_quarantined: Atomic<u64>,
}

pub(crate) static STATS: Stats = Stats {
    init_nops: Atomic::new(0),
    passes: Atomic::new(0),
    walked: Atomic::new(0),
    make_call: Atomic::new(0),
    modify_call: Atomic::new(0),
    make_nop: Atomic::new(0),
    batches: Atomic::new(0),
    failures: Atomic::new(0),
    one_shot: Atomic::new(0),
    checks: Atomic::new(0),
    shadow_checks: Atomic::new(0),
    shadow_diffs: Atomic::new(0),
    accounted: Atomic::new(0),
    survivor_rule: Atomic::new(0),
    records_made: Atomic::new(0),
    records_released: Atomic::new(0),
    selected: Atomic::new(0),
    sites_refused: Atomic::new(0),
    ops_walks: Atomic::new(0),
    gathers: Atomic::new(0),
    changed: Atomic::new(0),
    fallbacks: Atomic::new(0),
    pass_walks: Atomic::new(0),
    pass_shadow: Atomic::new(0),
    manager_hashes: Atomic::new(0),
    manager_nothing: Atomic::new(0),
    consistency_checks: Atomic::new(0),
    consistency_diffs: Atomic::new(0),
    registered: Atomic::new(0),
    unregistered: Atomic::new(0),
    trace_function_updates: Atomic::new(0),
    account_walks: Atomic::new(0),
    started: Atomic::new(0),
    stopped: Atomic::new(0),
    quarantined: Atomic::new(0),
    ipmodify_walks: Atomic::new(0),
    ipmodify_retargets: Atomic::new(0),
    filter_changes: Atomic::new(0),
    modify_passes: Atomic::new(0),
    subops_started: Atomic::new(0),
    subops_stopped: Atomic::new(0),
    subops_changes: Atomic::new(0),
    direct_registered: Atomic::new(0),
    direct_unregistered: Atomic::new(0),
    direct_retargeted: Atomic::new(0),
    nop_at_build: Atomic::new(0),
    listed_passes: Atomic::new(0),
    listed_walks: Atomic::new(0),
    direct_refused_quarantined: Atomic::new(0),
};

pub(crate) fn bump(counter: &Atomic<u64>, by: u64) {
    if by != 0 {
        counter.add(by, Relaxed);
    }
}

impl Stats {
    /// The number of counters [`Stats::get()`] knows.
    pub(crate) const COUNT: u32 = 50;

    /// Counter `idx` as a NUL-terminated name and a value (`None` past
    /// the last, [`Stats::COUNT`]).
    pub(crate) fn get(&self, idx: u32) -> Option<(&'static [u8], u64)> {
        let r = |a: &Atomic<u64>| a.load(Relaxed);
        let patched = r(&self.make_call)
            .saturating_add(r(&self.modify_call))
            .saturating_add(r(&self.make_nop));
        Some(match idx {
            0 => (b"records_initialized\0", r(&self.init_nops)),
            1 => (b"update_passes\0", r(&self.passes)),
            2 => (b"records_walked\0", r(&self.walked)),
            3 => (b"sites_patched\0", patched),
            4 => (b"make_call\0", r(&self.make_call)),
            5 => (b"modify_call\0", r(&self.modify_call)),
            6 => (b"make_nop\0", r(&self.make_nop)),
            7 => (b"batches\0", r(&self.batches)),
            8 => (b"failures\0", r(&self.failures)),
            9 => (b"single_updates\0", r(&self.one_shot)),
            10 => (b"record_checks\0", r(&self.checks)),
            11 => (b"shadow_checks\0", r(&self.shadow_checks)),
            12 => (b"shadow_differences\0", r(&self.shadow_diffs)),
            13 => (b"records_accounted\0", r(&self.accounted)),
            14 => (b"targets_selected\0", r(&self.selected)),
            15 => (b"call_sites_refused\0", r(&self.sites_refused)),
            16 => (b"call_ops_survivor_rule\0", r(&self.survivor_rule)),
            17 => (b"records_made\0", r(&self.records_made)),
            18 => (b"records_released\0", r(&self.records_released)),
            19 => (b"ops_list_walks\0", r(&self.ops_walks)),
            20 => (b"pass_gathers\0", r(&self.gathers)),
            21 => (b"pass_changed_records\0", r(&self.changed)),
            22 => (b"pass_ops_list_walks\0", r(&self.pass_walks)),
            23 => (b"pass_store_fallbacks\0", r(&self.fallbacks)),
            24 => (b"pass_shadow_checks\0", r(&self.pass_shadow)),
            25 => (b"manager_hashes\0", r(&self.manager_hashes)),
            26 => (b"manager_traces_nothing\0", r(&self.manager_nothing)),
            27 => (b"consistency_checks\0", r(&self.consistency_checks)),
            28 => (b"consistency_differences\0", r(&self.consistency_diffs)),
            29 => (b"registry_registered\0", r(&self.registered)),
            30 => (b"registry_unregistered\0", r(&self.unregistered)),
            31 => (
                b"registry_trace_function_updates\0",
                r(&self.trace_function_updates),
            ),
            32 => (b"registry_account_walks\0", r(&self.account_walks)),
            33 => (b"registry_started\0", r(&self.started)),
            34 => (b"registry_stopped\0", r(&self.stopped)),
            35 => (b"sites_quarantined\0", r(&self.quarantined)),
            36 => (b"registry_ipmodify_walks\0", r(&self.ipmodify_walks)),
            37 => (
                b"registry_ipmodify_retargets\0",
                r(&self.ipmodify_retargets),
            ),
            38 => (b"registry_filter_changes\0", r(&self.filter_changes)),
            39 => (b"registry_modify_passes\0", r(&self.modify_passes)),
            40 => (b"registry_subops_started\0", r(&self.subops_started)),
            41 => (b"registry_subops_stopped\0", r(&self.subops_stopped)),
            42 => (b"registry_subops_changes\0", r(&self.subops_changes)),
            43 => (b"registry_direct_registered\0", r(&self.direct_registered)),
            44 => (
                b"registry_direct_unregistered\0",
                r(&self.direct_unregistered),
            ),
            45 => (b"registry_direct_retargeted\0", r(&self.direct_retargeted)),
            46 => (b"records_nop_at_build\0", r(&self.nop_at_build)),
            47 => (b"update_passes_listed\0", r(&self.listed_passes)),
            48 => (b"registry_account_walks_listed\0", r(&self.listed_walks)),
            49 => (
                b"registry_direct_refused_quarantined\0",
                r(&self.direct_refused_quarantined),
            ),
            _ => return None,
        })
    }
}

/// Counts a shadow difference and logs the first few.
pub(crate) fn shadow_diff(args: core::fmt::Arguments<'_>) {
    let seen = STATS.shadow_diffs.fetch_add(1, Relaxed);
    if seen < 8 {
        kernel::pr_warn!("shadow: {}\n", args);
    }
}

/// Counts a difference found by the registry's consistency check and logs
/// the first few.
pub(crate) fn consistency_diff(args: core::fmt::Arguments<'_>) {
    let seen = STATS.consistency_diffs.fetch_add(1, Relaxed);
    if seen < 8 {
        kernel::pr_warn!("consistency: {}\n", args);
    }
}
