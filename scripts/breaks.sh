# SPDX-License-Identifier: GPL-2.0
# The deliberate breaks of scripts/break-check.sh: each one a small change
# to the core as copied into the kernel tree (never to the working copy),
# and the test that must catch it.  Source it; do not run it.
#
# break_def NAME sets
#   BREAK_FILE     the file, relative to kernel/trace/rftrace/, or with a
#                  leading "/" a file of the patched kernel tree
#   BREAK_PERL     a perl substitution (perl -0pi -e), which must match once
#   BREAK_VARIANT  the kernel variant it is built as
#   BREAK_EXPECT   kunit:TEST (that KUnit case fails), kunit-warning (the
#                  KUnit boot logs a kernel warning) or selftest:FILE.tc
#                  (that file of selftests/rftrace fails) or
#                  ftracetest:FILE (that upstream ftracetest file does not
#                  pass within BREAK_TIMEOUT seconds, default 600) or
#                  panic-check (scripts/panic-check.py finds a panic call
#                  in the core's compiled code)
#                  literal-bug or null-func (that guest mode of
#                  scripts/guest/init does not pass) or bpftrace
#                  (scripts/bpftrace-test.sh fails on the broken kernel)
#   BREAK_WHAT     one line for the report
#   BREAK_ARCH     the one architecture where it can be seen (unset: all)
BREAKS="compare-blind shadow-skipped decision-modified fgraph-nothing-as-all consistency-skips-head registry-walk-ignores-notrace registry-stop-keeps-records quarantine-kills hash-leak module-groups-kept init-writes-nothing call-ops-7.2-rule x86-callback-jmp-bit ipmodify-double-claim ipmodify-no-filter-oops start-up-count-lost filter-change-not-back subops-change-ignored profiler-left-behind direct-table-unpublished direct-busy-ignored lock-owner-unchecked record-pointer-trusted search-overflow-checked removed-ops-unmarked every-skips-first probe-waits-under-lock filter-writes-share-parser-lock instance-probes-wait-under-locks instance-tracer-waits-under-lock latency-tracer-waits-under-lock perf-close-waits-under-lock probe-part-waits-under-lock direct-waits-under-mutex batch-del-keeps-entries site-set-skips-first site-literal-stale site-set-unsorted set-stale-ignored set-calls-null-func lookup-range-as-point dirty-forgets-records direct-accepts-quarantined ipmodify-share-answer-lost"

break_def() { # NAME
	BREAK_ARCH= BREAK_TIMEOUT=
	case $1 in
	set-stale-ignored)
		BREAK_WHAT="rftrace_set_func() ignores a set's stale mark: a literal naming a set keeps calling its ops after a pass that should have rewritten it failed"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/if \(unlikely\(READ_ONCE\(set\[RFTRACE_SET_STALE\]\)\)\) \{/if (0) {/'
		BREAK_ARCH=arm64
		BREAK_VARIANT=debug
		BREAK_EXPECT=literal-bug ;;
	lookup-range-as-point)
		BREAK_WHAT="the record table's lookup of a range finds only a record at its start: a function named by its symbol, before an ENDBR, has no site (ftrace_set_filter_ip(), direct calls, fentry)"
		BREAK_FILE=rust/rfcore/pages.rs
		BREAK_PERL='s/let r = group_hits\(t, g, start, end, insn_size\);/let r = group_hits(t, g, start, end.min(start), insn_size);/'
		BREAK_ARCH=x86_64
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:endbr-sites.tc ;;
	set-calls-null-func)
		BREAK_WHAT="the walk over a site's ops set calls an ops without a function (7.2's list walk warns and stops ftrace)"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/if \(FTRACE_WARN_ON\(!op->func\)\) \{\n\t\t\tpr_warn\("op=%p %pS\\n", op, op\);\n\t\t\treturn false;/if (0) {\n\t\t\treturn false;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=null-func ;;
	site-set-skips-first)
		BREAK_WHAT="the set loop skips the first ops of a set with an odd number of ops (the one called before the pairs)"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/!rftrace_call_op\(\*p\+\+, skip, ip, parent_ip, fregs\)\)/!++p)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:site-sets.tc ;;
	site-literal-stale)
		BREAK_WHAT="a literal-only change is never written: a site that keeps its call keeps naming its old set when the ops covering it change"
		BREAK_FILE=rust/rfcore/update.rs
		BREAK_PERL='s/if !recs\.literal_due\(rec\) \{/if true || !recs.literal_due(rec) {/'
		BREAK_ARCH=arm64
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:site-sets.tc ;;
	ipmodify-share-answer-lost)
		BREAK_WHAT="a direct ops' answer to \"may you share with an IPMODIFY ops?\" is taken as a refusal whatever it says: a BPF trampoline that asks to be rebuilt (-EAGAIN) can never attach to a claimed function"
		BREAK_FILE=rust/kside/ipmodify.rs
		BREAK_PERL='s/Some\(ret\) => Err\(Error::from_errno\(ret\)\),/Some(ret) => Err(if ret < 0 { EBUSY } else { Error::from_errno(ret) }),/'
		BREAK_ARCH=x86_64
		BREAK_VARIANT=bpf
		BREAK_EXPECT=bpftrace ;;
	direct-accepts-quarantined)
		BREAK_WHAT="a direct call to a quarantined call site is accepted (both interfaces): it is never made, and its owner believes it attached"
		BREAK_FILE=rust/kside/direct.rs
		BREAK_PERL='s/let Some\(ip\) = quarantined_site\(hash, lock\) else \{/let Some(ip) = quarantined_site(hash, lock).filter(|_| false) else {/'
		BREAK_ARCH=x86_64
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:quarantine.tc ;;
	dirty-forgets-records)
		BREAK_WHAT="the accounting walk of a small filter does not list the records it changes: the pass after it visits none of them"
		BREAK_FILE=rust/kside/dirty.rs
		BREAK_PERL='s/            d\.touch\(ip\);/            let _ = (d, ip);/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:attach-cost.tc ;;
	site-set-unsorted)
		BREAK_WHAT="an ops joining a site's set goes last, not in ops-list order"
		BREAK_FILE=rust/rfcore/siteset.rs
		BREAK_PERL='s/if rank\(a\) <= rank\(b\) \{/if rank(a).is_some() || rank(b).is_some() {/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:site-sets.tc ;;
	probe-waits-under-lock)
		BREAK_WHAT="removing a function probe's last function waits for its grace periods with ftrace_lock held (as 7.2): no drop to a worker, no wait after the lock"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/IS_ENABLED\(CONFIG_FTRACE_RUST_CORE\) && probe->ref == 1\)/0)/; s/\trel = kzalloc\(sizeof\(\*rel\), GFP_KERNEL\);/\trel = NULL;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-probe.tc ;;
	batch-del-keeps-entries)
		BREAK_WHAT="the batch interface's delete never publishes the table without the deleted functions"
		BREAK_FILE=rust/kside/direct.rs
		BREAK_PERL='s/table\.install\(new_table\)\.keep\(\)/Retired(new_table.give())/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=kunit:batch_direct_interface_keeps_the_table_and_the_ops ;;
	instance-probes-wait-under-locks)
		BREAK_WHAT="a removed function probe is not dropped to a worker: removing an instance waits for its probes' grace periods with trace_types_lock and event_mutex held (as 7.2)"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/IS_ENABLED\(CONFIG_FTRACE_RUST_CORE\) && probe->ref == 1\)/0)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-instance.tc ;;
	instance-tracer-waits-under-lock)
		BREAK_WHAT="an instance's tracer is stopped with its grace periods waited for under trace_types_lock (as 7.2), as when the record for later cannot be allocated"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/\*pend = kzalloc\(sizeof\(\*pend\), GFP_KERNEL\);/*pend = NULL;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-instance-tracer.tc ;;
	latency-tracer-waits-under-lock)
		BREAK_WHAT="an instance's irqsoff tracer is stopped with its grace periods waited for under trace_types_lock (as 7.2): the same change as instance-tracer-waits-under-lock, caught by the latency tracer's test"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/\*pend = kzalloc\(sizeof\(\*pend\), GFP_KERNEL\);/*pend = NULL;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-latency.tc ;;
	perf-close-waits-under-lock)
		BREAK_WHAT="a perf function event's close waits for its grace periods with event_mutex held (as 7.2, without ftrace_lock)"
		BREAK_FILE=/kernel/trace/trace_event_perf.c
		BREAK_PERL='s/\tmutex_unlock\(&event_mutex\);\n\tperf_ftrace_finish_close\(p_event, function\);/\tperf_ftrace_finish_close(p_event, function);\n\tmutex_unlock(\&event_mutex);/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-perf.tc ;;
	probe-part-waits-under-lock)
		BREAK_WHAT="removing some functions of a function probe waits for RCU with ftrace_lock held (as 7.2)"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/\t\tsynchronize_rcu\(\);\n\t\tmutex_lock\(&ftrace_lock\);\n\t\} else \{/\t\tmutex_lock(\&ftrace_lock);\n\t\tsynchronize_rcu();\n\t} else {/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-probe-part.tc ;;
	filter-writes-share-parser-lock)
		BREAK_WHAT="every filter write takes the one parser_lock again (as 7.2), so a probe's removal that waits (here: none is dropped to a worker, as when its record cannot be allocated) holds up the writes of other files across its grace periods"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/return IS_ENABLED\(CONFIG_FTRACE_RUST_CORE\) \? &iter->parser_lock :/return 0 ? \&iter->parser_lock :/; s/IS_ENABLED\(CONFIG_FTRACE_RUST_CORE\) && probe->ref == 1\)/0)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-probe.tc ;;
	direct-waits-under-mutex)
		BREAK_WHAT="unregistering a direct ops waits for its grace periods with direct_mutex held (as 7.2)"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/\*rel = kzalloc\(sizeof\(\*rel\), GFP_KERNEL\);/*rel = NULL;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-slow-gp-direct.tc ;;
	every-skips-first)
		BREAK_WHAT="the record walks of the registry (accounting, sweep, IPMODIFY) never see the table's first record"
		BREAK_FILE=rust/kside/pages.rs
		BREAK_PERL='s/\|at\| at\.next\(\)\)\.map\(Cursor::rec\)/|at| at.next()).skip(1).map(Cursor::rec)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:rust-core-patches-sites.tc ;;
	removed-ops-unmarked)
		BREAK_WHAT="the target walks never see the ops being removed (its mark is not mirrored)"
		BREAK_FILE=rust/kside/registry.rs
		BREAK_PERL='s/set_removed_ops\(on\.then_some\(ops\), lock\)/set_removed_ops(None, lock)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:rust-core-patches-sites.tc ;;
	search-overflow-checked)
		BREAK_WHAT="the record lookup's binary search adds with an overflow check (a panic path)"
		BREAK_FILE=rust/rfcore/pages.rs
		BREAK_PERL='s/let mid = lo\.saturating_add\(\(hi - lo\) \/ 2\);/let mid = lo + (hi - lo) \/ 2;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=panic-check ;;
	compare-blind)
		BREAK_WHAT="the shadow comparator never sees a difference"
		BREAK_FILE=rust/kside/shadow.rs
		BREAK_PERL='s/\n    d\n\}\n/\n    let _ = d;\n    Differences::default()\n}\n/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=kunit:the_shadow_comparator_sees_each_difference ;;
	shadow-skipped)
		BREAK_WHAT="the update pass goes around the shadow comparator"
		BREAK_FILE=rust/kside/shadow.rs
		BREAK_PERL='s/(pub\(crate\) fn record\(rec: Rec<\x27_>, enable: bool, decision: &Decision, facts: Option<&Facts>\) \{\n    if )!ON/${1}true/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:rust-core-patches-sites.tc ;;
	decision-modified)
		BREAK_WHAT="the Rust decision forgets FTRACE_FL_MODIFIED on direct-call sites"
		BREAK_FILE=rust/rfcore/record.rs
		BREAK_PERL='s/if flags\.any\(DIRECT \| IPMODIFY\) \{/if flags.any(IPMODIFY) {/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-direct-modules.tc ;;
	fgraph-nothing-as-all)
		BREAK_WHAT="a manager ops that traces nothing gets an empty filter (every function), as in 7.2"
		BREAK_FILE=rust/kside/filter.rs
		BREAK_PERL='s/(\n        )Hashes::Nothing => \{/${1}Hashes::Nothing if true => Ok((ptr::null_mut(), ptr::null_mut(), true)),${1}Hashes::Nothing => {/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:fgraph-notrace-covers-filter.tc ;;
	consistency-skips-head)
		BREAK_WHAT="the registry consistency check leaves the first ops of the list out"
		BREAK_FILE=rust/kside/shadow.rs
		BREAK_PERL='s/(let mut users = Users::none\(\);\n\s+let mut op = )list\.head\(\);/${1}list.head().and_then(|h| list.next(h));/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:rust-core-patches-sites.tc ;;
	registry-walk-ignores-notrace)
		BREAK_WHAT="the Rust registry's accounting walk ignores the notrace hash (the consistency check, which reads the hashes through C, logs the records it counts wrongly)"
		BREAK_FILE=rust/kside/registry.rs
		BREAK_PERL='s/walk_matches\(self\.reach, in_filter, in_notrace\)/walk_matches(self.reach, in_filter, in_notrace \&\& false)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:fgraph-notrace-covers-filter.tc ;;
	ipmodify-double-claim)
		BREAK_WHAT="the Rust IPMODIFY check lets a second IPMODIFY ops claim a function"
		BREAK_FILE=rust/rfcore/ipmodify.rs
		BREAK_PERL='s/if site\.in_new && claimed => Step::Conflict,/if site.in_new \&\& claimed => Step::Pass,/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:ipmodify-claims.tc ;;
	ipmodify-no-filter-oops)
		BREAK_WHAT="patch 0008 undone: registering an IPMODIFY ops without a filter dereferences NULL, as in 7.2"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/\thash = ops->func_hash \? ops->func_hash->filter_hash : NULL;\n\tsize = ftrace_hash_empty\(hash\) \? 0 : 1 << hash->size_bits;\n(\tfor \(i = 0; i < size; i\+\+\) \{\n\t\thlist_for_each_entry\(entry, &hash->buckets\[i\], hlist\) \{\n\t\t\tunsigned long ip = entry->ip;\n\t\t\tbool found_op = false;\n\n\t\t\tmutex_lock\(&ftrace_lock\);\n(?:.*\n){10}\t\t\tif \(found_op\) \{)/\thash = ops->func_hash->filter_hash;\n\tsize = 1 << hash->size_bits;\n$1/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:ipmodify-claims.tc ;;
	filter-change-not-back)
		BREAK_WHAT="a filter change takes the ops off the records of its old filter and never accounts it on the new one (the consistency check logs each record the ops should count on)"
		BREAK_FILE=rust/kside/refilter.rs
		BREAK_PERL='s/    walk_all\(ops, true, lock\);\n/    let _ = walk_all;\n/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:filter-change.tc ;;
	subops-change-ignored)
		BREAK_WHAT="a sub-ops' filter change keeps its new hash but never brings its manager in line (function_graph goes on tracing the old filter)"
		BREAK_FILE=rust/kside/subops.rs
		BREAK_PERL='s/    let installed = new\.take_entries\(\)\?\.install\(&slot\);\n    match update_manager\(manager, lock\) \{/    let installed = new.take_entries()?.install(&slot);\n    match Ok::<(), kernel::error::Error>(()) {/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:filter-change.tc ;;
	lock-owner-unchecked)
		BREAK_WHAT="the lock proofs stop asking who owns the mutex (every held() gives a proof)"
		BREAK_FILE=c/rftrace_shim.c
		BREAK_PERL='s/\treturn owner == \(unsigned long\)current;/\t(void)owner;\n\treturn true;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=kunit:lock_proofs_need_the_lock ;;
	profiler-left-behind)
		BREAK_WHAT="a manager whose sub-ops shares the hashes of an enabled ops is not refreshed after they change (the profiler keeps the old filter, as in stock 7.2)"
		BREAK_FILE=rust/kside/subops.rs
		BREAK_PERL='s/    update_manager\(manager, lock\)\?;\n    bump\(&STATS\.subops_changes, 1\);/    let _ = lock;\n    bump(&STATS.subops_changes, 1);/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:profiler-filter.tc ;;
	direct-table-unpublished)
		BREAK_WHAT="a direct registration builds the new direct-functions table but never publishes it (shared sites find no target)"
		BREAK_FILE=rust/kside/direct.rs
		BREAK_PERL='s/        self\.atomic\(\)\.store\(new, Release\);\n/        let _ = Release;\n/; s/    fn keep\(self\) -> Retired \{\n        Retired\(self\.old\)/    fn keep(self) -> Retired {\n        Retired(self.new)/'
		BREAK_VARIANT=shadow
		BREAK_ARCH=x86_64
		BREAK_EXPECT=selftest:registry-direct-modules.tc ;;
	direct-busy-ignored)
		BREAK_WHAT="a direct registration on a function that has a direct target is not refused"
		BREAK_FILE=rust/kside/direct.rs
		BREAK_PERL='s/return Err\(errno\(Refusal::Busy\)\);/let _ = errno(Refusal::Busy);/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:registry-direct-modules.tc ;;
	start-up-count-lost)
		BREAK_WHAT="the Rust registry's start-up counter never counts (the ftrace_enabled sysctl then leaves the sites as they are)"
		BREAK_FILE=rust/kside/registry.rs
		BREAK_PERL='s/let now = START_UP\.get\(lock\)\.saturating_add\(n\);/let now = START_UP.get(lock).saturating_add(n) * 0;/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:ftrace-enabled-sysctl.tc ;;
	registry-stop-keeps-records)
		BREAK_WHAT="the Rust registry stops an ops without taking it off its records (the consistency check logs every record still counting it, and the sweep after the last ops stops ftrace)"
		BREAK_FILE=rust/kside/registry.rs
		BREAK_PERL='s/match account_walk\(self\.ops, false, self\.lock\)/match Ok::<bool, ()>(false)/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:rust-core-patches-sites.tc ;;
	quarantine-kills)
		BREAK_WHAT="a site that cannot be made a call stops tracing everywhere (ftrace_bug(), ftrace_kill()), as in 7.2"
		BREAK_FILE=rust/rfcore/update.rs
		BREAK_PERL='s/Update::MakeCall => Verdict::Quarantine,/Update::MakeCall => Verdict::Stop,/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:quarantine.tc ;;
	hash-leak)
		BREAK_WHAT="the core's filter-set hashes (function graph's manager hashes) are never freed"
		BREAK_FILE=rust/kside/filter.rs
		BREAK_PERL='s/        if self\.owned \{\n/        if self.owned \&\& self.ptr.is_null() {\n/'
		BREAK_VARIANT=debug
		BREAK_EXPECT=selftest:fault-injection.tc ;;
	module-groups-kept)
		BREAK_WHAT="a module's record groups stay in the table when it goes"
		BREAK_FILE=rust/kside/pages.rs
		BREAK_PERL='s/crate::kside::module::rftrace_shim_within_module\(module, c_word\(ip\)\)/crate::kside::module::rftrace_shim_within_module(module, c_word(ip)) \&\& false/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:module-churn.tc ;;
	call-ops-7.2-rule)
		BREAK_WHAT="7.2's CALL_OPS rule is back in C (patch 0004 undone): after a removal the ops removed decides the per-site literal (arm64; stock kernel)"
		BREAK_FILE=/kernel/trace/ftrace.c
		BREAK_PERL='s/call_ops = inc \? ops : ftrace_find_unique_ops_other\(rec, ops\);/call_ops = inc ? ops : (ftrace_find_unique_ops_other(rec, ops), ops);/'
		BREAK_ARCH=arm64
		BREAK_VARIANT=stock
		BREAK_EXPECT=selftest:call-ops-survivor.tc ;;
	x86-callback-jmp-bit)
		BREAK_WHAT="x86 encodes a trampoline's callback with the JMP-bit rule again (patch 0005 undone; -Os stock kernel, where callbacks start at odd addresses)"
		BREAK_FILE=/arch/x86/kernel/ftrace.c
		BREAK_PERL='s/return text_gen_insn\(CALL_INSN_OPCODE, \(void \*\)ip, \(void \*\)func\);/return ftrace_call_replace(ip, func);/'
		BREAK_ARCH=x86_64
		BREAK_VARIANT=stock-os
		BREAK_TIMEOUT=600
		BREAK_EXPECT=ftracetest:direct/ftrace-direct.tc ;;
	init-writes-nothing)
		BREAK_WHAT="the boot and module-load conversion checks each site but never writes the NOP (the compiler's call stays)"
		BREAK_FILE=rust/kside/update.rs
		BREAK_PERL='s/(let change = Checked::check\(arch, change\)\?;\n\s+)(\/\/[^\n]*\n\s+)?arch\.write\(&change, &mut \|_\| \{\}\)\n/${1}let _ = change;\n                    Ok(())\n/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=selftest:rust-core-patches-sites.tc ;;
	record-pointer-trusted)
		BREAK_WHAT="a record pointer from C is taken as a record if it lies in a group, aligned or not"
		BREAK_FILE=rust/kside/pages.rs
		BREAK_PERL='s/            if !offset\.is_multiple_of\(size\) \{\n/            if !offset.is_multiple_of(size) \&\& size == 0 {\n/'
		BREAK_VARIANT=shadow
		BREAK_EXPECT=kunit:records_from_c_are_looked_up_first ;;
	*) return 1 ;;
	esac
}
