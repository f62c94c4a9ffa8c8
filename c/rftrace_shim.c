// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C shim of the Rust dynamic ftrace core.
 *
 * The part common to the architectures: what the Rust core asks of C (the
 * shared callers, the direct-call table, text ranges, reports in the
 * kernel's own words, the ftrace_expected buffer for ftrace_bug()) and the
 * debugfs file with the core's counters.  The arch hooks are in
 * rftrace_shim_<arch>.c.
 *
 * This file is built without the ftrace instrumentation (see Kbuild).
 */

#define pr_fmt(fmt) "rftrace: " fmt

#include <linux/debugfs.h>
#include <linux/ftrace.h>
#include <linux/init.h>
#include <linux/kallsyms.h>
#include <linux/llist.h>
#include <linux/memory.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <asm/ftrace.h>
#include <asm/sections.h>

#include "../include/rftrace.h"
#include "../../ftrace_internal.h"
#include "../../trace.h"

/* The Rust side checks the same layout against its bindings. */
static_assert(sizeof(struct dyn_ftrace) == 2 * sizeof(unsigned long));
static_assert(offsetof(struct dyn_ftrace, flags) == sizeof(unsigned long));
/* rust/kside/table.rs (scan_counts()) fills the counts in this order. */
static_assert(RFTRACE_SCAN_NR == 8);
/* The call-site size the Rust record table uses (rust/kside/pages.rs). */
static_assert(MCOUNT_INSN_SIZE == (IS_ENABLED(CONFIG_X86_64) ? 5 : 4));

bool rftrace_shim_mutex_mine(struct mutex *lock)
{
	unsigned long owner;

#ifdef CONFIG_PREEMPT_RT
	/* The owner word of the rtmutex, its waiters bit cleared. */
	owner = (unsigned long)data_race(READ_ONCE(lock->rtmutex.owner)) & ~1UL;
#else
	owner = mutex_get_owner(lock);
#endif
	return owner == (unsigned long)current;
}

bool rftrace_shim_ftrace_lock_mine(void)
{
	return rftrace_shim_mutex_mine(&ftrace_lock);
}

bool rftrace_shim_text_lock_mine(void)
{
	return rftrace_shim_mutex_mine(&text_mutex);
}

void rftrace_shim_ftrace_lock(void)
	__acquires(&ftrace_lock)
{
	mutex_lock(&ftrace_lock);
}

void rftrace_shim_ftrace_unlock(void)
	__releases(&ftrace_lock)
{
	mutex_unlock(&ftrace_lock);
}

void rftrace_shim_text_lock(void)
	__acquires(&text_mutex)
{
	mutex_lock(&text_mutex);
}

void rftrace_shim_text_unlock(void)
	__releases(&text_mutex)
{
	mutex_unlock(&text_mutex);
}

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS
void rftrace_shim_direct_lock(void)
{
	ftrace_c_direct_lock(true);
}

void rftrace_shim_direct_unlock(void)
{
	ftrace_c_direct_lock(false);
}
#endif

void rftrace_shim_cond_resched(void)
{
	cond_resched();
}

/* What ftrace_bug() prints as "expected" for the last refused site. */
static u8 rftrace_expected[MCOUNT_INSN_SIZE];

/*
 * The per-site set table the list function reads (rftrace_site_set()):
 * while the core publishes none, a table of two empty slots.
 */
static unsigned long rftrace_no_sites[RFTRACE_SITES_SLOTS + 4] = {
	[RFTRACE_SITES_SHIFT] = 63,
	[RFTRACE_SITES_MASK] = 1,
};
unsigned long *rftrace_sites __read_mostly = rftrace_no_sites;

/*
 * List calls served by a site's set and by the walk, and set calls through
 * a literal that walked because the set was stale (shadow builds count).
 */
DEFINE_PER_CPU(unsigned long, rftrace_set_calls);
DEFINE_PER_CPU(unsigned long, rftrace_walk_calls);
DEFINE_PER_CPU(unsigned long, rftrace_stale_calls);

static unsigned long rftrace_sum(unsigned long __percpu *counter)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(*counter, cpu);
	return sum;
}

void rftrace_shim_sites_publish(unsigned long *table)
{
	/* The table's words are written before readers can find it. */
	smp_store_release(&rftrace_sites, table ? table : rftrace_no_sites);
}

/*
 * Retired set-table blocks, each linked through its word 0, and the worker
 * that frees them.  The list function reads them with preemption disabled:
 * synchronize_rcu() ends every such reader where RCU is watching.  Where
 * it is not, the code is noinstr and has no call site on the architectures
 * with ARCH_WANTS_NO_INSTR, where synchronize_rcu_tasks_rude() does
 * nothing; it is called, as ftrace_shutdown() calls it, for the others.
 */
static LLIST_HEAD(rftrace_retired);
/*
 * Sets a CALL_OPS literal has named: ftrace_caller() loads the literal
 * with preemption on, so these also wait for synchronize_rcu_tasks().
 */
static LLIST_HEAD(rftrace_retired_named);

/* Blocks retired and not freed yet (the core makes no new set past a cap). */
static atomic_long_t rftrace_retire_pending = ATOMIC_LONG_INIT(0);

static void rftrace_retire_fn(struct work_struct *work)
{
	struct llist_node *list, *named, *pos, *next;
	long freed = 0;

	list = llist_del_all(&rftrace_retired);
	named = llist_del_all(&rftrace_retired_named);
	if (!list && !named)
		return;
	synchronize_rcu_tasks_rude();
	if (named)
		synchronize_rcu_tasks();
	synchronize_rcu();
	llist_for_each_safe(pos, next, list) {
		kvfree(pos);
		freed++;
	}
	llist_for_each_safe(pos, next, named) {
		kvfree(pos);
		freed++;
	}
	atomic_long_sub(freed, &rftrace_retire_pending);
}
static DECLARE_WORK(rftrace_retire_work, rftrace_retire_fn);

long rftrace_shim_retire_pending(void)
{
	return atomic_long_read(&rftrace_retire_pending);
}

void rftrace_shim_retire(unsigned long *block, bool literal)
{
	static_assert(sizeof(struct llist_node) == sizeof(unsigned long));

	/*
	 * Before the scheduler starts (a boot-time tracer, ftrace=, registers
	 * before the workqueues exist) only this CPU runs, and no reader can
	 * be inside the list function while this task is here: free at once.
	 * rcu_scheduler_active is 0 (RCU_SCHEDULER_INACTIVE) until then.
	 */
	if (!READ_ONCE(rcu_scheduler_active)) {
		kvfree(block);
		return;
	}
	atomic_long_inc(&rftrace_retire_pending);
	llist_add((struct llist_node *)block,
		  literal ? &rftrace_retired_named : &rftrace_retired);
	/*
	 * The worker sleeps for whole grace periods (an RCU-tasks one can take
	 * seconds): the long-running queue, not system_wq.
	 */
	queue_work(system_long_wq, &rftrace_retire_work);
}

void rftrace_shim_set_init(unsigned long *set)
{
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS
	struct ftrace_ops *ops = (struct ftrace_ops *)&set[RFTRACE_SET_FOPS];

	/* The block is zeroed: no direct call, no hashes, no trampoline. */
	ops->func = rftrace_set_func;
	ops->flags = FTRACE_OPS_FL_STUB | FTRACE_OPS_FL_INITIALIZED;
#endif
}

void rftrace_shim_refuse(struct dyn_ftrace *rec, const u8 *expected,
			 const u8 *actual)
{
	pr_err("refusing to patch %pS: expected %*phC, found %*phC\n",
	       (void *)rec->ip, MCOUNT_INSN_SIZE, expected,
	       MCOUNT_INSN_SIZE, actual);
	memcpy(rftrace_expected, expected, MCOUNT_INSN_SIZE);
	ftrace_expected = rftrace_expected;
}

void rftrace_shim_bug(int err, struct dyn_ftrace *rec)
{
	ftrace_bug(err, rec);
	ftrace_expected = NULL;
}

/*
 * Sets of functions for the Rust core's filter algebra (rust/kside/filter.rs),
 * on the kernel's ftrace_hash.  NULL is the empty set.  The callers hold
 * ftrace_lock, which keeps the hashes of registered ops as they are.
 */
bool rftrace_shim_hash_contains(struct ftrace_hash *hash, unsigned long ip)
{
	return ftrace_lookup_ip(hash, ip);
}

unsigned long rftrace_shim_hash_count(struct ftrace_hash *hash)
{
	return hash ? hash->count : 0;
}

/* An empty hash that ftrace_hash_empty() does not call empty: no function. */
bool rftrace_shim_hash_is_nothing(struct ftrace_hash *hash)
{
	return hash && !hash->count && (hash->flags & FTRACE_HASH_FL_MOD);
}

struct ftrace_hash *rftrace_shim_hash_nothing(void)
{
	struct ftrace_hash *hash = alloc_ftrace_hash(0);

	if (hash)
		hash->flags |= FTRACE_HASH_FL_MOD;
	return hash;
}

static bool rftrace_hash_keep(struct ftrace_hash *b, unsigned long ip,
			      unsigned int op)
{
	bool in_b = ftrace_lookup_ip(b, ip);

	return op == RFTRACE_SET_INTERSECTION ? in_b : !in_b;
}

/* Adds the entries of @from that @op keeps against @b to @to. */
static int rftrace_hash_add(struct ftrace_hash *to, struct ftrace_hash *from,
			    struct ftrace_hash *b, unsigned int op)
{
	struct ftrace_func_entry *entry;
	unsigned long i;

	if (ftrace_hash_empty(from))
		return 0;
	for (i = 0; i < (1UL << from->size_bits); i++) {
		hlist_for_each_entry(entry, &from->buckets[i], hlist) {
			if (!rftrace_hash_keep(b, entry->ip, op))
				continue;
			if (!add_ftrace_hash_entry_direct(to, entry->ip, 0))
				return -ENOMEM;
		}
	}
	return 0;
}

/*
 * *@out: a new hash of the functions in @a or @b, in both, or in @a and not
 * in @b (@op); NULL when there are none.  0 or -ENOMEM (*@out NULL).
 */
int rftrace_shim_hash_combine(struct ftrace_hash *a, struct ftrace_hash *b,
			      unsigned int op, struct ftrace_hash **out)
{
	unsigned long n = rftrace_shim_hash_count(a);
	struct ftrace_hash *hash;
	int ret;

	*out = NULL;
	if (op == RFTRACE_SET_UNION)
		n += rftrace_shim_hash_count(b);
	hash = alloc_ftrace_hash(clamp(fls_long(n), 1, 12));
	if (!hash)
		return -ENOMEM;
	/* The union: all of @a, then what of @b is not in @a yet. */
	if (op == RFTRACE_SET_UNION)
		ret = rftrace_hash_add(hash, a, NULL, op) ?:
		      rftrace_hash_add(hash, b, a, op);
	else
		ret = rftrace_hash_add(hash, a, b, op);
	if (ret || !hash->count) {
		free_ftrace_hash(hash);
		return ret;
	}
	*out = hash;
	return 0;
}

/* Whether @a and @b have a function in common. */
bool rftrace_shim_hash_meets(struct ftrace_hash *a, struct ftrace_hash *b)
{
	struct ftrace_func_entry *entry;
	unsigned long i;

	if (ftrace_hash_empty(a) || ftrace_hash_empty(b))
		return false;
	for (i = 0; i < (1UL << a->size_bits); i++) {
		hlist_for_each_entry(entry, &a->buckets[i], hlist) {
			if (ftrace_lookup_ip(b, entry->ip))
				return true;
		}
	}
	return false;
}

/*
 * Copies the functions of @hash into @ips, at most @max of them, and
 * returns how many it copied: the accounting walk of a small filter visits
 * those records only (rust/kside/registry.rs).
 */
unsigned long rftrace_shim_hash_ips(struct ftrace_hash *hash,
				    unsigned long *ips, unsigned long max)
{
	struct ftrace_func_entry *entry;
	unsigned long i, n = 0;

	if (ftrace_hash_empty(hash))
		return 0;
	for (i = 0; i < (1UL << hash->size_bits); i++) {
		hlist_for_each_entry(entry, &hash->buckets[i], hlist) {
			if (n == max)
				return n;
			ips[n++] = entry->ip;
		}
	}
	return n;
}

/*
 * The direct-functions table (rust/kside/direct.rs), under direct_mutex:
 * a new table @bits wide holding the entries of @table (NULL: none) and
 * one for each function of @hash, calling @addr; NULL when out of memory.
 */
struct ftrace_hash *rftrace_shim_direct_table_with(struct ftrace_hash *table,
						   struct ftrace_hash *hash,
						   unsigned long addr,
						   unsigned int bits)
{
	struct ftrace_func_entry *entry;
	struct ftrace_hash *new;
	unsigned long i;

	new = alloc_ftrace_hash(bits);
	if (!new)
		return NULL;
	for (i = 0; table && i < (1UL << table->size_bits); i++) {
		hlist_for_each_entry(entry, &table->buckets[i], hlist) {
			if (!add_ftrace_hash_entry_direct(new, entry->ip,
							  entry->direct))
				goto nomem;
		}
	}
	for (i = 0; i < (1UL << hash->size_bits); i++) {
		hlist_for_each_entry(entry, &hash->buckets[i], hlist) {
			if (!add_ftrace_hash_entry_direct(new, entry->ip, addr))
				goto nomem;
		}
	}
	return new;
nomem:
	free_ftrace_hash(new);
	return NULL;
}

/*
 * The direct-functions table (rust/kside/direct.rs), under direct_mutex: a
 * new table as wide as @table with its entries but those of @ops'
 * functions that call @addr (upstream's unregister_ftrace_direct() unlinks
 * and frees those in place, under readers of the table); NULL when out of
 * memory.
 */
struct ftrace_hash *rftrace_shim_direct_table_without(struct ftrace_hash *table,
						      struct ftrace_ops *ops,
						      unsigned long addr)
{
	struct ftrace_hash *filter = ops->func_hash->filter_hash;
	struct ftrace_func_entry *entry;
	struct ftrace_hash *new;
	unsigned long i;

	new = alloc_ftrace_hash(table->size_bits);
	if (!new)
		return NULL;
	for (i = 0; i < (1UL << table->size_bits); i++) {
		hlist_for_each_entry(entry, &table->buckets[i], hlist) {
			if (ftrace_jmp_get(entry->direct) == ftrace_jmp_get(addr) &&
			    ftrace_lookup_ip(filter, entry->ip))
				continue;
			if (!add_ftrace_hash_entry_direct(new, entry->ip,
							  entry->direct)) {
				free_ftrace_hash(new);
				return NULL;
			}
		}
	}
	return new;
}

/*
 * The batch direct interface (rust/kside/direct.rs), under direct_mutex:
 * whether every function of @hash is in @table with @hash's target for
 * it; and each entry of @table for a function of @hash gets @hash's
 * target (one word each: readers see the old target or the new).
 */
bool rftrace_shim_direct_table_holds(struct ftrace_hash *table,
				     struct ftrace_hash *hash)
{
	struct ftrace_func_entry *entry, *in_table;
	unsigned long i;

	for (i = 0; i < (1UL << hash->size_bits); i++) {
		hlist_for_each_entry(entry, &hash->buckets[i], hlist) {
			in_table = ftrace_lookup_ip(table, entry->ip);
			if (!in_table || in_table->direct != entry->direct)
				return false;
		}
	}
	return true;
}

/*
 * Every function of @hash records its direct target: @addr, or with @addr
 * 0 the target its entry of @hash names; with @table, the entries of
 * @table for those functions get it instead (under ftrace_lock, which the
 * list function's readers of the table do not take: each entry's target
 * is one word).
 */
void rftrace_shim_direct_retarget(struct ftrace_hash *table,
				  struct ftrace_hash *hash, unsigned long addr)
{
	struct ftrace_func_entry *entry, *in_table;
	unsigned long i;

	for (i = 0; i < (1UL << hash->size_bits); i++) {
		hlist_for_each_entry(entry, &hash->buckets[i], hlist) {
			unsigned long target = addr ?: entry->direct;

			if (!table) {
				entry->direct = target;
				continue;
			}
			in_table = ftrace_lookup_ip(table, entry->ip);
			if (in_table)
				WRITE_ONCE(in_table->direct, target);
		}
	}
}

/* Puts @subops on @ops's list of sub-ops (@on) or takes it off. */
void rftrace_shim_subops_attach(struct ftrace_ops *ops, struct ftrace_ops *subops,
				bool on)
{
	if (on)
		list_add(&subops->list, &ops->subop_list);
	else
		list_del(&subops->list);
}

/* The sub-ops of the manager @ops after @prev (NULL: the first), or NULL. */
struct ftrace_ops *rftrace_shim_subops_next(struct ftrace_ops *ops,
					    struct ftrace_ops *prev)
{
	struct list_head *next;

	lockdep_assert_held(&ftrace_lock);
	next = prev ? prev->list.next : ops->subop_list.next;
	if (next == &ops->subop_list)
		return NULL;
	return list_entry(next, struct ftrace_ops, list);
}

/* The filter (or, if @no_trace, the notrace) hash of @ops. */
struct ftrace_hash *rftrace_shim_ops_hash(struct ftrace_ops *ops, bool no_trace)
{
	struct ftrace_ops_hash *h = ops->func_hash;

	if (!h)
		return NULL;
	return no_trace ?
	       rcu_dereference_protected(h->notrace_hash,
					 lockdep_is_held(&ftrace_lock)) :
	       rcu_dereference_protected(h->filter_hash,
					 lockdep_is_held(&ftrace_lock));
}

struct ftrace_hash **rftrace_shim_ops_hash_slot(struct ftrace_ops *ops,
						bool no_trace)
{
	struct ftrace_ops_hash *h = ops->func_hash;

	if (!h)
		return NULL;
	return no_trace ? &h->notrace_hash : &h->filter_hash;
}

/* The shared callers: FTRACE_REGS_ADDR if @regs, else FTRACE_ADDR. */
unsigned long rftrace_shim_caller(bool regs)
{
	return regs ? (unsigned long)FTRACE_REGS_ADDR : (unsigned long)FTRACE_ADDR;
}

/* The direct trampoline registered for @ip, 0 if none (or no support). */
unsigned long rftrace_shim_direct(unsigned long ip)
{
	return ftrace_find_rec_direct(ip);
}

/*
 * Report a broken invariant met while choosing a target, as the C core
 * does: a missing direct entry warns once; a missing trampoline warns,
 * stops ftrace and names the site.
 */
void rftrace_shim_select_problem(struct dyn_ftrace *rec, int problem,
				 bool new)
{
	switch (problem) {
	case RFTRACE_PROBLEM_NO_DIRECT:
		WARN_ON_ONCE(1);
		break;
	case RFTRACE_PROBLEM_NO_TRAMPOLINE:
		if (WARN_ON(1))
			ftrace_kill();
		if (new)
			pr_warn("Bad trampoline accounting at: %p (%pS) (%lx)\n",
				(void *)rec->ip, (void *)rec->ip, rec->flags);
		else
			pr_warn("Bad trampoline accounting at: %p (%pS)\n",
				(void *)rec->ip, (void *)rec->ip);
		break;
	}
}

bool rftrace_shim_core_data(unsigned long addr)
{
	return is_kernel_core_data(addr);
}

/*
 * The text of the core kernel (@mod NULL: is_kernel_text() without the
 * vsyscall page, and is_kernel_inittext()) or of @mod (MOD_TEXT and
 * MOD_INIT_TEXT), as [start, end) pairs, for the call-site list check.
 */
void rftrace_shim_text_ranges(struct module *mod, unsigned long *ranges)
{
	if (!mod) {
		ranges[0] = (unsigned long)_stext;
		ranges[1] = (unsigned long)_etext;
		ranges[2] = (unsigned long)_sinittext;
		ranges[3] = (unsigned long)_einittext;
		return;
	}
	memset(ranges, 0, 4 * sizeof(*ranges));
#ifdef CONFIG_MODULES
	ranges[0] = (unsigned long)mod->mem[MOD_TEXT].base;
	ranges[1] = ranges[0] + mod->mem[MOD_TEXT].size;
	ranges[2] = (unsigned long)mod->mem[MOD_INIT_TEXT].base;
	ranges[3] = ranges[2] + mod->mem[MOD_INIT_TEXT].size;
#endif
}

bool rftrace_shim_within_module(struct module *mod, unsigned long addr)
{
	return mod && within_module(addr, mod);
}

int rftrace_shim_max_order(void)
{
	return MAX_PAGE_ORDER;
}

static const char *rftrace_owner(struct module *mod)
{
#ifdef CONFIG_MODULES
	if (mod)
		return mod->name;
#endif
	return "vmlinux";
}

/* One call-site list entry refused by the Rust core (first few only). */
/*
 * One call-site list entry refused by the Rust core (first few only).  A
 * module being loaded is not yet in kallsyms' reach, so its sites are
 * named by section and offset (objdump or nm of the .ko gives the
 * function); core kernel sites by symbol.
 */
void rftrace_shim_refused_site(struct module *mod, const char *why,
			       unsigned long addr)
{
#ifdef CONFIG_MODULES
	static const enum mod_mem_type types[] = { MOD_TEXT, MOD_INIT_TEXT };
	static const char * const names[] = { ".text", ".init.text" };
	int i;

	for (i = 0; mod && i < ARRAY_SIZE(types); i++) {
		if (!within_module_mem_type(addr, mod, types[i]))
			continue;
		pr_warn("%s: call site %s+%#lx (%lx) refused: %s\n",
			mod->name, names[i],
			addr - (unsigned long)mod->mem[types[i]].base, addr,
			why);
		return;
	}
#endif
	pr_warn("%s: call site %pS (%lx) refused: %s\n", rftrace_owner(mod),
		(void *)addr, addr, why);
}

/* The summary of a call-site list check. */
void rftrace_shim_scan_report(struct module *mod, const u64 *counts,
			      bool unsorted)
{
	const char *owner = rftrace_owner(mod);

	if (unsorted)
		pr_warn("%s: call-site list was not sorted; sorted it\n", owner);
	if (counts[RFTRACE_SCAN_REFUSED])
		pr_warn("%s: %llu of %llu call sites refused (%llu duplicate, %llu misaligned, %llu outside the text): never patched\n",
			owner, counts[RFTRACE_SCAN_REFUSED],
			counts[RFTRACE_SCAN_TOTAL],
			counts[RFTRACE_SCAN_DUPLICATE],
			counts[RFTRACE_SCAN_MISALIGNED],
			counts[RFTRACE_SCAN_OUT_OF_TEXT]);
	if (!mod)
		pr_info("%s: %llu call sites, %llu kept, %llu padding, %llu weak-function leftovers skipped\n",
			owner, counts[RFTRACE_SCAN_TOTAL],
			counts[RFTRACE_SCAN_KEPT], counts[RFTRACE_SCAN_PADDING],
			counts[RFTRACE_SCAN_WEAK]);
}

/*
 * The sites the update pass quarantined, for <debugfs>/rftrace/quarantine:
 * the first RFTRACE_QUARANTINE_MAX of them (the count says how many there
 * were).  The name is taken when the site is quarantined, so that it stays
 * right after its module is gone.
 */
#define RFTRACE_QUARANTINE_MAX 32

struct rftrace_quarantined {
	char name[KSYM_NAME_LEN + 64];
	const char *op;
	const char *what;
	bool bytes;
	u8 expected[MCOUNT_INSN_SIZE];
	u8 actual[MCOUNT_INSN_SIZE];
};

static DEFINE_MUTEX(rftrace_quarantine_lock);
static struct rftrace_quarantined rftrace_quarantine[RFTRACE_QUARANTINE_MAX];
static unsigned int rftrace_quarantine_nr;

void rftrace_shim_quarantine(struct dyn_ftrace *rec, const char *op,
			     const char *what, const u8 *expected,
			     const u8 *actual)
{
	struct rftrace_quarantined *q = NULL;
	bool bytes = expected && actual;

	if (bytes)
		pr_err("quarantined %pS (%s): %s, expected %*phC, found %*phC; this site is never patched again, tracing goes on without it\n",
		       (void *)rec->ip, op, what, MCOUNT_INSN_SIZE, expected,
		       MCOUNT_INSN_SIZE, actual);
	else
		pr_err("quarantined %pS (%s): %s; this site is never patched again, tracing goes on without it\n",
		       (void *)rec->ip, op, what);

	mutex_lock(&rftrace_quarantine_lock);
	if (rftrace_quarantine_nr < RFTRACE_QUARANTINE_MAX)
		q = &rftrace_quarantine[rftrace_quarantine_nr];
	rftrace_quarantine_nr++;
	if (q) {
		snprintf(q->name, sizeof(q->name), "%pS", (void *)rec->ip);
		q->op = op;
		q->what = what;
		q->bytes = bytes;
		if (bytes) {
			memcpy(q->expected, expected, MCOUNT_INSN_SIZE);
			memcpy(q->actual, actual, MCOUNT_INSN_SIZE);
		}
	}
	mutex_unlock(&rftrace_quarantine_lock);
}

static int rftrace_quarantine_show(struct seq_file *m, void *v)
{
	struct rftrace_quarantined *q;
	unsigned int i;

	mutex_lock(&rftrace_quarantine_lock);
	for (i = 0; i < min(rftrace_quarantine_nr, RFTRACE_QUARANTINE_MAX); i++) {
		q = &rftrace_quarantine[i];
		seq_printf(m, "%s %s: %s", q->name, q->op, q->what);
		if (q->bytes)
			seq_printf(m, ", expected %*phN found %*phN",
				   MCOUNT_INSN_SIZE, q->expected,
				   MCOUNT_INSN_SIZE, q->actual);
		seq_putc(m, '\n');
	}
	if (rftrace_quarantine_nr > RFTRACE_QUARANTINE_MAX)
		seq_printf(m, "... %u more\n",
			   rftrace_quarantine_nr - RFTRACE_QUARANTINE_MAX);
	mutex_unlock(&rftrace_quarantine_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rftrace_quarantine);

/*
 * Test-only, shadow builds: <debugfs>/rftrace/fail_write takes the address
 * of a function (as /proc/kallsyms gives it); the next write of its call
 * site by the update pass fails, before anything is written.  0 clears it.
 */
static unsigned long rftrace_fail_write_ip;

bool rftrace_shim_take_fail_write(unsigned long ip)
{
	return ip && cmpxchg(&rftrace_fail_write_ip, ip, 0) == ip;
}

static int rftrace_fail_write_set(void *data, u64 val)
{
	unsigned long ip = 0;

	if (val) {
		ip = ftrace_location((unsigned long)val);
		if (!ip)
			return -ENOENT;
	}
	WRITE_ONCE(rftrace_fail_write_ip, ip);
	return 0;
}

static int rftrace_fail_write_get(void *data, u64 *val)
{
	*val = READ_ONCE(rftrace_fail_write_ip);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(rftrace_fail_write_fops, rftrace_fail_write_get,
			 rftrace_fail_write_set, "0x%llx\n");

#if IS_ENABLED(CONFIG_FTRACE_RUST_CORE_TEST_MODULE)
int rftrace_test_corrupt_site(unsigned long func)
{
	unsigned long ip = ftrace_location(func);
	u8 insn[MCOUNT_INSN_SIZE];
	int ret;

	if (!ip)
		return -ENOENT;
	mutex_lock(&ftrace_lock);
	mutex_lock(&text_mutex);
	if (copy_from_kernel_nofault(insn, (void *)ip, MCOUNT_INSN_SIZE))
		ret = -EFAULT;
	else
		ret = rftrace_shim_corrupt(ip, insn);
	mutex_unlock(&text_mutex);
	mutex_unlock(&ftrace_lock);
	if (!ret)
		pr_info("test: corrupted the call site %pS on purpose\n",
			(void *)ip);
	return ret;
}
EXPORT_SYMBOL_GPL(rftrace_test_corrupt_site);
#endif

static int rftrace_stats_show(struct seq_file *m, void *v)
{
	const char *name;
	unsigned int i;
	u64 val;

	for (i = 0; rftrace_stat(i, &name, &val); i++)
		seq_printf(m, "%s %llu\n", name, val);
	seq_printf(m, "site_set_retire_pending %ld\n",
		   atomic_long_read(&rftrace_retire_pending));
	if (IS_ENABLED(CONFIG_FTRACE_RUST_CORE_SHADOW)) {
		seq_printf(m, "list_calls_with_set %lu\n",
			   rftrace_sum(&rftrace_set_calls));
		seq_printf(m, "list_calls_walked %lu\n",
			   rftrace_sum(&rftrace_walk_calls));
		seq_printf(m, "set_calls_stale %lu\n",
			   rftrace_sum(&rftrace_stale_calls));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rftrace_stats);

static int __init rftrace_init(void)
{
	struct dentry *dir;
	const char *name;
	u64 val = 0;

	dir = debugfs_create_dir("rftrace", NULL);
	debugfs_create_file("stats", 0444, dir, NULL, &rftrace_stats_fops);
	debugfs_create_file("quarantine", 0444, dir, NULL,
			    &rftrace_quarantine_fops);
	if (IS_ENABLED(CONFIG_FTRACE_RUST_CORE_SHADOW))
		debugfs_create_file_unsafe("fail_write", 0600, dir, NULL,
					   &rftrace_fail_write_fops);

	/* Counter 0 is the number of records the core has initialised. */
	rftrace_stat(0, &name, &val);
	pr_info("Rust dynamic ftrace core active%s: %llu %s\n",
		IS_ENABLED(CONFIG_FTRACE_RUST_CORE_SHADOW) ?
		" (shadow checks against C on)" : "", val, name);
	return 0;
}
late_initcall(rftrace_init);
