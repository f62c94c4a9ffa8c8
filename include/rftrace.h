/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface between the kernel's C ftrace code and the Rust dynamic ftrace
 * core (kernel/trace/rftrace).  Included by kernel/trace/ftrace.c, whatever
 * the configuration: with CONFIG_FTRACE_RUST_CORE=n nothing here is called.
 */
#ifndef _KERNEL_TRACE_RFTRACE_H
#define _KERNEL_TRACE_RFTRACE_H

#include <asm/barrier.h>
#include <linux/compiler.h>
#include <linux/ftrace.h>
#include <linux/math.h>
#include <linux/types.h>

struct dyn_ftrace;
struct ftrace_hash;
struct ftrace_ops;
struct ftrace_page;
struct module;
struct mutex;

/*
 * Implemented in Rust (rust/kside/entry.rs); callers hold ftrace_lock
 * unless said otherwise (the core checks the owner and refuses the call
 * with a warning if not).  Every pointer argument a caller passes must be
 * NULL or valid for the length of the call: an ops, hash, module or
 * record group live (a hash unchanged), an out pointer writable and
 * written by nobody else.  The Rust side takes such arguments as typed
 * views whose invariants are exactly these (rust/kside/abi.rs), so the
 * entry points are safe Rust functions; a NULL one is refused with a
 * warning.  A record pointer is looked up in the table before use.
 */

/* ftrace_update_record() / ftrace_test_record(): returns FTRACE_UPDATE_*. */
int rftrace_check_record(struct dyn_ftrace *rec, bool enable, bool update);
/* __ftrace_replace_code(): one record, the generic way; returns 0 or -errno. */
int rftrace_replace_one(struct dyn_ftrace *rec, bool enable);
/*
 * ftrace_replace_code(): every record; every change is checked before
 * the first is written (x86: in INT3 batches).  @may_sleep: the generic
 * code allows cond_resched() between records.
 */
void rftrace_replace_code(bool enable, bool may_sleep);
/*
 * The bits of ftrace_replace_code()'s @mod_flags (FTRACE_MODIFY_ENABLE_FL
 * and FTRACE_MODIFY_MAY_SLEEP_FL, private to kernel/trace/ftrace.c).
 */
#define RFTRACE_MODIFY_ENABLE		(1 << 0)
#define RFTRACE_MODIFY_MAY_SLEEP	(1 << 1)
/*
 * The arch call-site hooks (ftrace_make_call(), ftrace_modify_call(),
 * ftrace_make_nop()), one set for every architecture; 0, -EFAULT, -EINVAL,
 * -ERANGE or -EPERM.  @init: the first conversion of the site at boot or
 * module load (ftrace_init_nop(); on x86 the site still holds the
 * compiler's call to MCOUNT_ADDR); @mod: NULL or the module of @rec.
 */
int rftrace_make_call(struct dyn_ftrace *rec, unsigned long addr);
int rftrace_modify_call(struct dyn_ftrace *rec, unsigned long old_addr,
			unsigned long addr);
int rftrace_make_nop(struct module *mod, struct dyn_ftrace *rec,
		     unsigned long addr, bool init);
/*
 * Re-points the callback call at @ip in a trampoline to the C function
 * @func (never a jump, whatever bit 0 of @func); 0 or -errno.  Declared for
 * arch code in <asm/ftrace.h> too.
 */
int rftrace_update_call(unsigned long ip, unsigned long func);
/*
 * Per-record accounting for @ops (one more user if @inc, one less if not);
 * false on a reference count overflow or underflow.
 */
bool rftrace_account(struct dyn_ftrace *rec, struct ftrace_ops *ops, bool inc);
/*
 * ftrace_get_addr_new() / ftrace_get_addr_curr(): the address the site is
 * to call / calls now; ftrace_find_unique_ops(): the single ops on a site.
 */
unsigned long rftrace_get_addr_new(struct dyn_ftrace *rec);
unsigned long rftrace_get_addr_curr(struct dyn_ftrace *rec);
struct ftrace_ops *rftrace_find_unique_ops(struct dyn_ftrace *rec);
/*
 * The record table.  rftrace_build_table(): for ftrace_process_locs(),
 * checks the call-site list [@start, @end) of @mod (NULL: the core
 * kernel), sorting it if needed and zeroing and reporting the entries that
 * must not become records, then allocates exactly the page groups the kept
 * sites need and fills them (not linked anywhere yet): *@first and *@last,
 * the pages used and the records made; 0 or -ENOMEM.  The others run under
 * ftrace_lock: rftrace_unlink_module() takes the groups of @mod out of the
 * table, rftrace_remove_range() the records in [@start, @end] (@each is
 * called on each before it goes) and the groups left empty.  Both return
 * the first group taken out and store the last in *@last: they are linked,
 * but (*@last)->next still points into the table for lockless readers;
 * after an RCU grace period set it to NULL and free them.  Both subtract
 * the records that went from *@records.  rftrace_lookup_rec(): the first
 * record touching [@start, @end].  Its own RCU read-side section ends when
 * it returns, so the record stays valid only while the caller holds
 * rcu_read_lock() or ftrace_lock: every caller does (ftrace_location_range()
 * holds rcu_read_lock()).
 */
int rftrace_build_table(struct module *mod, unsigned long *start,
			unsigned long *end, struct ftrace_page **first,
			struct ftrace_page **last, unsigned long *pages,
			unsigned long *recs);
struct ftrace_page *rftrace_unlink_module(struct ftrace_page **head,
					  struct ftrace_page **tail,
					  struct module *mod,
					  struct ftrace_page **last,
					  unsigned long *records);
struct ftrace_page *
rftrace_remove_range(struct ftrace_page **head, struct ftrace_page **tail,
		     unsigned long start, unsigned long end,
		     void (*each)(void *data, struct dyn_ftrace *rec),
		     void *data, struct ftrace_page **last,
		     unsigned long *records);
struct dyn_ftrace *rftrace_lookup_rec(unsigned long start, unsigned long end);
/* x86: makes the writes queued by the hooks above live (post-process). */
void rftrace_finish(void);
/*
 * The hashes of the manager ops @ops (function graph's) from its sub-ops:
 * it traces what any of them traces, and a sub-ops whose filter is wholly
 * covered by its notrace hash traces nothing (not every function).  Stores
 * new hashes in *@filter and *@notrace_hash (NULL: empty); "no function"
 * is an empty filter hash flagged FTRACE_HASH_FL_MOD, which
 * ftrace_hash_empty() does not call empty.  0 or -ENOMEM; the caller holds
 * ftrace_lock.
 */
int rftrace_manager_hashes(struct ftrace_ops *ops, struct ftrace_hash **filter,
			   struct ftrace_hash **notrace_hash);
/*
 * The ops registry; callers hold ftrace_lock.  rftrace_register_ops() and
 * rftrace_unregister_ops() are __register_ftrace_function() and
 * __unregister_ftrace_function() (the ops list, the ops' saved and pid
 * functions, its trampoline, then rftrace_update_function()), with
 * upstream's errnos.  rftrace_update_function() is
 * update_ftrace_function(): what the shared callers call and the ops they
 * pass.  rftrace_account_walk() is __ftrace_hash_rec_update(): the
 * accounting of @ops on every record its hashes cover; 1 if a site needs
 * updating, 0 if none, -1 after a reference count overflow or underflow.
 */
int rftrace_register_ops(struct ftrace_ops *ops);
int rftrace_unregister_ops(struct ftrace_ops *ops);
void rftrace_update_function(void);
int rftrace_account_walk(struct ftrace_ops *ops, bool inc);
/*
 * __ftrace_hash_update_ipmodify(): @ops (started, IPMODIFY or direct)
 * moves from the functions of @old_hash to those of @new_hash (NULL:
 * every function); @retarget: only its direct target changes.  Claims
 * and releases FTRACE_FL_IPMODIFY on the records, asks a direct ops'
 * ops_func where it meets a claim; 0 or upstream's errno, nothing written
 * when refused.
 */
/*
 * The start-up counter (upstream's ftrace_start_up), kept by the Rust
 * registry: how many started ops want the call sites live.  Under
 * ftrace_lock.
 */
int rftrace_start_up(void);
int rftrace_ipmodify_update(struct ftrace_ops *ops,
			    struct ftrace_hash *old_hash,
			    struct ftrace_hash *new_hash, bool retarget);
/*
 * ftrace_startup(): @ops joins the list, is enabled and accounted on its
 * records, then the update pass runs with @command (FTRACE_UPDATE_CALLS
 * added if a site changes); 0 or upstream's errno, with the ops back where
 * it was if IPMODIFY refuses it.
 */
int rftrace_startup(struct ftrace_ops *ops, int command);
/*
 * __ftrace_shutdown(): @ops leaves the list, is no longer counted or
 * enabled, releases its IPMODIFY claims and its records, and the update
 * pass runs with @command (plus what the change needs) while @ops is
 * marked as being removed.  A dynamic ops is then released: with @rel the
 * grace-period waits and the trampoline are left to the caller, to do
 * after dropping ftrace_lock; without, they happen here.  0 or upstream's
 * errno.
 */
struct ftrace_release;
int rftrace_shutdown(struct ftrace_ops *ops, int command,
		     struct ftrace_release *rel);
/*
 * __ftrace_hash_move_and_update_ops(): the filter (@enable) or notrace
 * hash of @ops, at @orig_hash, becomes the functions of @hash (left empty
 * for the caller to free); the ops and the ops sharing its hashes are
 * accounted again, and the update pass runs for the ops the sites follow.
 * 0 or upstream's errno, with nothing changed.
 */
int rftrace_hash_move_and_update(struct ftrace_ops *ops,
				 struct ftrace_hash **orig_hash,
				 struct ftrace_hash *hash, int enable);
/*
 * ftrace_run_modify_code(): the update pass with @command, @ops marked
 * FTRACE_OPS_FL_MODIFYING with the hashes it had (@old_filter,
 * @old_notrace) for its duration.
 */
void rftrace_run_modify_code(struct ftrace_ops *ops, int command,
			     struct ftrace_hash *old_filter,
			     struct ftrace_hash *old_notrace);
/*
 * ftrace_startup_subops(), ftrace_shutdown_subops(): @subops joins or
 * leaves the manager @ops, which starts with its first sub-ops, stops
 * with its last, and otherwise follows the union of its sub-ops' hashes.
 * ftrace_hash_move_and_update_subops(): the filter or notrace hash of
 * @subops, at @orig_hash, becomes the functions of @hash, and its manager
 * follows.  0 or upstream's errno, with nothing changed.
 */
int rftrace_startup_subops(struct ftrace_ops *ops, struct ftrace_ops *subops,
			   int command);
int rftrace_shutdown_subops(struct ftrace_ops *ops, struct ftrace_ops *subops,
			    int command);
int rftrace_subops_change(struct ftrace_ops *subops,
			  struct ftrace_hash **orig_hash,
			  struct ftrace_hash *hash);
/*
 * ftrace_update_manager(): the hashes of the manager @ops become the
 * union of its sub-ops' hashes again, after one of them changed in place
 * (a sub-ops sharing the hashes of an enabled ops).  0 or upstream's
 * errno.
 */
int rftrace_update_manager(struct ftrace_ops *ops);
/*
 * register_ftrace_direct(), unregister_ftrace_direct() (@free_filters:
 * ftrace_free_filter() once stopped), modify_ftrace_direct() (@lock: take
 * direct_mutex; else the caller holds it): 0 or upstream's errno.
 */
int rftrace_register_direct(struct ftrace_ops *ops, unsigned long addr);
int rftrace_unregister_direct(struct ftrace_ops *ops, unsigned long addr,
			      bool free_filters);
int rftrace_modify_direct(struct ftrace_ops *ops, unsigned long addr,
			  bool lock);
/*
 * The batch direct interface: update_ftrace_direct_add(), _del() and
 * _mod() (@lock: take direct_mutex; else the caller holds it), each entry
 * of @hash naming its function's target: 0 or upstream's errno.
 */
int rftrace_update_direct_add(struct ftrace_ops *ops, struct ftrace_hash *hash);
int rftrace_update_direct_del(struct ftrace_ops *ops, struct ftrace_hash *hash);
int rftrace_update_direct_mod(struct ftrace_ops *ops, struct ftrace_hash *hash,
			      bool lock);
/* Counter @idx: stores its name in @name and returns true, or false. */
bool rftrace_stat(unsigned int idx, const char **name, u64 *val);

/*
 * ftrace_update_code()'s loop over the new groups from @pgs: every record
 * gets @flags and, if @init, its site's first conversion to a NOP (from a
 * call to @mcount).  Returns the records done, or -1 if ftrace is disabled.
 */
long rftrace_init_nops(struct module *mod, struct ftrace_page *pgs,
		       unsigned long flags, bool init, unsigned long mcount);

/*
 * Per-site ops sets (rust/rfcore/siteset.rs).  rftrace_sites is the table
 * the list function finds a call site's set in: blocks of machine words,
 * word 0 of each reserved for the shim's retirement list.  The table:
 * word RFTRACE_SITES_SHIFT holds 64 less the number of index bits,
 * RFTRACE_SITES_MASK the number of slots less one, and {ip, set} pairs
 * follow from word RFTRACE_SITES_SLOTS; a site's probe starts at
 * (ip * RFTRACE_SITES_HASH) >> shift and ends at an empty slot.  A set:
 * word RFTRACE_SET_LEN holds the number of ops, their addresses follow
 * from word RFTRACE_SET_OPS, in ftrace_ops_list order.  A set is filled
 * before its address is stored and never written again (but for its stale
 * word, below); a slot's set
 * word is 0 while its site's set changes (the caller then walks the list).
 * There is always a table (an empty one while the core has none), and a
 * set is never empty.  Published with rcu_assign_pointer(); read with
 * preemption disabled;
 * retired blocks are freed after synchronize_rcu() (and the rude wait,
 * a no-op where ARCH_WANTS_NO_INSTR keeps the list function out of code
 * where RCU is not watching).
 *
 * With CALL_OPS a set starts, from word RFTRACE_SET_FOPS, with an
 * ftrace_ops of its own (RFTRACE_SET_HEADER words) whose function is
 * rftrace_set_func(): the literal of a site with two or more ops names
 * it, and ftrace_caller() calls the set's ops without a lookup.  It reads
 * the literal with preemption enabled, so there the retired blocks also
 * wait for synchronize_rcu_tasks().
 */
#define RFTRACE_SITES_SHIFT	1
#define RFTRACE_SITES_MASK	2
#define RFTRACE_SITES_SLOTS	3
#define RFTRACE_SET_FOPS	1
/*
 * The header's words follow from the type: struct ftrace_ops grows with
 * lockdep, DEBUG_MUTEXES and KASAN.  Its last word, RFTRACE_SET_STALE, is
 * not 0 while a literal names the set at a site whose ops are changing
 * (the set may hold an ops that left the site): rftrace_set_func() then
 * walks the list.  It is the one word of a set written after publication.
 * Enumerators, not macros, so that bindgen gives the Rust core the same
 * values as the compiler gives C.
 */
enum {
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS
	RFTRACE_SET_HEADER = DIV_ROUND_UP(sizeof(struct ftrace_ops),
					  sizeof(unsigned long)) + 1,
	RFTRACE_SET_STALE = RFTRACE_SET_HEADER,
#else
	RFTRACE_SET_HEADER = 0,
#endif
	RFTRACE_SET_LEN = 1 + RFTRACE_SET_HEADER,
	RFTRACE_SET_OPS = 2 + RFTRACE_SET_HEADER,
};
#define RFTRACE_SITES_HASH	0x61c8864680b583ebULL

extern unsigned long *rftrace_sites;

#ifdef CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS
struct ftrace_ops;
struct ftrace_regs;
/* The function of a set's own ftrace_ops (ftrace.c). */
void rftrace_set_func(unsigned long ip, unsigned long parent_ip,
		      struct ftrace_ops *op, struct ftrace_regs *fregs);
#endif
/* Fills the ftrace_ops at the head of a new set block, if it has one. */
void rftrace_shim_set_init(unsigned long *set);

/* The set of the call site at @ip, or NULL (the caller walks the list). */
static __always_inline unsigned long *rftrace_site_set(unsigned long ip)
{
	unsigned long *t = READ_ONCE(rftrace_sites);
	unsigned long i, n, mask, *slot;

	i = (unsigned long)(((u64)ip * RFTRACE_SITES_HASH) >>
			    t[RFTRACE_SITES_SHIFT]);
	slot = &t[RFTRACE_SITES_SLOTS + 2 * i];
	/*
	 * The ip with acquire: a slot reused for another site (its old site
	 * gone) must not pair the new ip with the old site's set word.
	 */
	if (likely(smp_load_acquire(&slot[0]) == ip))
		return (unsigned long *)READ_ONCE(slot[1]);
	/* A collision: on to the next slots, at most once round the table. */
	mask = t[RFTRACE_SITES_MASK];
	for (n = 0; READ_ONCE(slot[0]) && n < mask; n++) {
		i = (i + 1) & mask;
		slot = &t[RFTRACE_SITES_SLOTS + 2 * i];
		/* Acquire, as above. */
		if (smp_load_acquire(&slot[0]) == ip)
			return (unsigned long *)READ_ONCE(slot[1]);
	}
	return NULL;
}

/* Implemented in C (c/rftrace_shim.c), called by the Rust core. */

/*
 * The locks as the Rust core's lock tokens see them (rust/kside/lock.rs):
 * whether the current task owns @lock (read from the mutex's owner: a
 * question, never a warning), the same for ftrace_lock and text_mutex,
 * and ftrace_lock, text_mutex and direct_mutex taken and released.
 */
bool rftrace_shim_mutex_mine(struct mutex *lock);
bool rftrace_shim_ftrace_lock_mine(void);
bool rftrace_shim_text_lock_mine(void);
void rftrace_shim_ftrace_lock(void);
void rftrace_shim_ftrace_unlock(void);
void rftrace_shim_text_lock(void);
void rftrace_shim_text_unlock(void);
void rftrace_shim_direct_lock(void);
void rftrace_shim_direct_unlock(void);
/* cond_resched(), between the records of a pass that may sleep. */
void rftrace_shim_cond_resched(void);
/* Makes @table (or NULL) the per-site set table (rcu_assign_pointer()). */
void rftrace_shim_sites_publish(unsigned long *table);
/*
 * Frees the kvmalloc()ed @block after the grace periods that end every
 * reader of the set table, and with @literal (a CALL_OPS literal has named
 * the set) every caller that may have loaded the literal (from a worker;
 * never waits itself).  Word 0 of @block becomes the retirement link.
 */
void rftrace_shim_retire(unsigned long *block, bool literal);
/* Blocks retired and not freed yet. */
long rftrace_shim_retire_pending(void);

/*
 * Writes the 5-byte @insn at @ip: queued if the text is live, else directly.
 * Returns true if the write was queued.
 */
bool rftrace_shim_poke(unsigned long ip, const u8 *insn);
/* Whether writes go to the INT3 batch (the text is live), not text_poke_early(). */
bool rftrace_shim_poke_late(void);
/* Writes the 5-byte @insn at @ip now (smp_text_poke_single()). */
void rftrace_shim_poke_single(unsigned long ip, const u8 *insn);
/*
 * Whether @ip may hold a call to an ftrace callback: the ftrace_call or
 * ftrace_regs_call site of the shared callers, or an address in the
 * trampoline of an ops on the list.
 */
bool rftrace_shim_callback_site(unsigned long ip);
/* Makes the queued writes live (smp_text_poke_batch_finish()). */
void rftrace_shim_poke_finish(void);
/* Logs a refused site and remembers @expected for ftrace_bug(). */
void rftrace_shim_refuse(struct dyn_ftrace *rec, const u8 *expected,
			 const u8 *actual);
/* ftrace_bug() for @rec, then forgets the expected bytes. */
void rftrace_shim_bug(int err, struct dyn_ftrace *rec);
/*
 * A site the update pass quarantined (@op failed: @what): logged once and
 * listed in <debugfs>/rftrace/quarantine.  @expected and @actual are
 * MCOUNT_INSN_SIZE bytes, or both NULL when no bytes were compared.
 */
void rftrace_shim_quarantine(struct dyn_ftrace *rec, const char *op,
			     const char *what, const u8 *expected,
			     const u8 *actual);
/*
 * Test-only (shadow builds): true, once, if @ip is the site named in
 * <debugfs>/rftrace/fail_write, whose next write must fail.
 */
bool rftrace_shim_take_fail_write(unsigned long ip);
/* FTRACE_REGS_ADDR if @regs, else FTRACE_ADDR. */
unsigned long rftrace_shim_caller(bool regs);
/* ftrace_find_rec_direct(), 0 without direct-call support. */
unsigned long rftrace_shim_direct(unsigned long ip);

/* CALL_OPS (c/rftrace_shim_call_ops.c): ftrace_list_ops if @list, else ftrace_nop_ops. */
unsigned long rftrace_shim_stub_ops(bool list);
/* CALL_OPS, for the shadow check: the literal at @addr, 0 if unreadable. */
unsigned long rftrace_shim_literal_read(unsigned long addr);
/* arm64: one instruction, the ops literal, PLTs. */
int rftrace_shim_insn_read(unsigned long ip, u32 *insn);
int rftrace_shim_insn_write(unsigned long ip, u32 insn);
int rftrace_shim_literal_write(unsigned long addr, unsigned long val);
unsigned long rftrace_shim_plt(unsigned long ip, struct module *mod);
/* riscv64: the literal, jalr-slot and entry stores. */
int rftrace_shim_rv_literal_write(unsigned long addr, unsigned long val);
int rftrace_shim_rv_insn_write(unsigned long ip, u32 insn);
int rftrace_shim_rv_entry_write(unsigned long pc, u64 pair);

/* Sets of functions on ftrace_hash (rust/kside/filter.rs); NULL is empty. */
enum {
	RFTRACE_SET_UNION,
	RFTRACE_SET_INTERSECTION,
	RFTRACE_SET_DIFFERENCE,
};
bool rftrace_shim_hash_contains(struct ftrace_hash *hash, unsigned long ip);
unsigned long rftrace_shim_hash_count(struct ftrace_hash *hash);
bool rftrace_shim_hash_is_nothing(struct ftrace_hash *hash);
struct ftrace_hash *rftrace_shim_hash_nothing(void);
bool rftrace_shim_hash_meets(struct ftrace_hash *a, struct ftrace_hash *b);
unsigned long rftrace_shim_hash_ips(struct ftrace_hash *hash,
				    unsigned long *ips, unsigned long max);
struct ftrace_hash *rftrace_shim_direct_table_with(struct ftrace_hash *table,
						   struct ftrace_hash *hash,
						   unsigned long addr,
						   unsigned int bits);
void rftrace_shim_direct_retarget(struct ftrace_hash *table,
				  struct ftrace_hash *hash, unsigned long addr);
struct ftrace_hash *rftrace_shim_direct_table_without(struct ftrace_hash *table,
						      struct ftrace_ops *ops,
						      unsigned long addr);
bool rftrace_shim_direct_table_holds(struct ftrace_hash *table,
				     struct ftrace_hash *hash);
int rftrace_shim_hash_combine(struct ftrace_hash *a, struct ftrace_hash *b,
			      unsigned int op, struct ftrace_hash **out);
struct ftrace_ops *rftrace_shim_subops_next(struct ftrace_ops *ops,
					    struct ftrace_ops *prev);
void rftrace_shim_subops_attach(struct ftrace_ops *ops, struct ftrace_ops *subops,
				bool on);
struct ftrace_hash *rftrace_shim_ops_hash(struct ftrace_ops *ops, bool no_trace);
/* Where @ops keeps its filter or notrace hash; NULL if it has no hashes. */
struct ftrace_hash **rftrace_shim_ops_hash_slot(struct ftrace_ops *ops,
						bool no_trace);

/* Text and call-site list checks (rfcore::table). */
/*
 * The text a call-site list may point into, as [start, end) pairs in
 * @ranges[0..3]: text and init text of the core kernel (@mod NULL) or of
 * @mod.
 */
void rftrace_shim_text_ranges(struct module *mod, unsigned long *ranges);
bool rftrace_shim_within_module(struct module *mod, unsigned long addr);
/* The largest order of a page group (MAX_PAGE_ORDER). */
int rftrace_shim_max_order(void);
/* ftrace_call_adjust() (x86 and CALL_OPS shims): arm64 BTI, KUnit. */
unsigned long rftrace_shim_call_adjust(unsigned long addr);
void rftrace_shim_refused_site(struct module *mod, const char *why,
			       unsigned long addr);
/* Indexes of the counts given to rftrace_shim_scan_report(). */
enum {
	RFTRACE_SCAN_TOTAL,
	RFTRACE_SCAN_KEPT,
	RFTRACE_SCAN_PADDING,
	RFTRACE_SCAN_WEAK,
	RFTRACE_SCAN_OUT_OF_TEXT,
	RFTRACE_SCAN_MISALIGNED,
	RFTRACE_SCAN_DUPLICATE,
	RFTRACE_SCAN_REFUSED,
	RFTRACE_SCAN_NR,
};
void rftrace_shim_scan_report(struct module *mod, const u64 *counts,
			      bool unsorted);

/* Problems met while choosing a target (rfcore::select::Problem). */
#define RFTRACE_PROBLEM_NO_DIRECT	1
#define RFTRACE_PROBLEM_NO_TRAMPOLINE	2
void rftrace_shim_select_problem(struct dyn_ftrace *rec, int problem,
				 bool new);

/* is_kernel_core_data(): @addr is in the kernel's core data. */
bool rftrace_shim_core_data(unsigned long addr);

/* Implemented in kernel/trace/ftrace.c: the kernel's C logic and queries. */
int ftrace_c_check_record(struct dyn_ftrace *rec, bool enable, bool update);
bool ftrace_c_rec_account(struct dyn_ftrace *rec, struct ftrace_ops *ops,
			  bool inc);
bool ftrace_c_rec_ops_need_regs(struct dyn_ftrace *rec);
/* hash_contains_ip() of @op's hashes (@old: its old_hash) for @ip. */
bool ftrace_c_ops_covers(struct ftrace_ops *op, unsigned long ip, bool old);
unsigned long ftrace_c_get_addr_new(struct dyn_ftrace *rec);
unsigned long ftrace_c_get_addr_curr(struct dyn_ftrace *rec);
struct ftrace_ops *ftrace_c_find_unique_ops(struct dyn_ftrace *rec);
/*
 * The registry's C parts: the pid filter and trampoline of an ops joining
 * the list; the shared callers' function, set from a choice (@callee:
 * ftrace_stub, the list function, or ftrace_ops_get_func(@op)) and, for
 * the shadow mode, the choice C makes from the list (stores its ops).
 */
enum {
	RFTRACE_CALLEE_STUB,
	RFTRACE_CALLEE_LIST,
	RFTRACE_CALLEE_OPS,
};
bool ftrace_c_pids_enabled(struct ftrace_ops *ops);
void ftrace_c_use_pid_func(struct ftrace_ops *ops);
void ftrace_c_update_trampoline(struct ftrace_ops *ops);
void ftrace_c_set_trace_function(struct ftrace_ops *op, unsigned int callee);
unsigned int ftrace_c_trace_function(struct ftrace_ops **op);
/*
 * The steps of ftrace_startup() that stay C: ftrace_disabled, freeing a
 * refused dynamic ops' trampoline, and the update pass with the
 * trace-function check (ftrace_startup_enable()).
 */
bool ftrace_c_disabled(void);
void ftrace_c_trampoline_free(struct ftrace_ops *ops);
void ftrace_c_startup_enable(int command);
/*
 * The steps of __ftrace_shutdown() that stay C: whether the shared callers'
 * function changed since the last update (and noting that it has been
 * seen), marking @ops as the one being removed (@on) or no longer, the
 * update pass, and releasing a dynamic ops (see rftrace_shutdown()).
 */
bool ftrace_c_trace_func_changed(void);
void ftrace_c_removing(struct ftrace_ops *ops, bool on);
void ftrace_c_run_update_code(int command);
void ftrace_c_release(struct ftrace_ops *ops, struct ftrace_release *rel);
/*
 * The steps of a filter change that stay C: moving a hash's functions
 * into a new hash (__ftrace_hash_move(); EMPTY_HASH for none or a NULL
 * @src, NULL when out of memory),
 * freeing a replaced hash after a grace period, whether @ops uses
 * global_ops' hashes, and marking @ops as modifying (@on) with its old
 * hashes, or no longer.
 */
struct ftrace_hash *ftrace_c_hash_move(struct ftrace_hash *src);
void ftrace_c_free_hash_rcu(struct ftrace_hash *hash);
bool ftrace_c_shares_global_hash(struct ftrace_ops *ops);
void ftrace_c_modifying(struct ftrace_ops *ops, struct ftrace_hash *old_filter,
			struct ftrace_hash *old_notrace, bool on);
/*
 * The steps of the sub-ops code that stay C: initialising a manager and a
 * sub-ops (with the empty hash for a null one), comparing two hashes
 * (ops_equal()), and a stopped manager's hashes freed and set back to the
 * empty hash.
 */
void ftrace_c_subops_prepare(struct ftrace_ops *ops, struct ftrace_ops *subops);
bool ftrace_c_hash_equal(struct ftrace_hash *a, struct ftrace_hash *b);
void ftrace_c_subops_reset(struct ftrace_ops *ops);
/*
 * The steps of the direct-call code that stay C
 * (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS): direct_mutex taken (@on) or
 * released, and whether the current task owns it; the flags a direct ops
 * carries (MULTI_FLAGS); where the direct-functions table is published;
 * freeing a replaced table after an RCU-tasks grace period; @ops made a
 * direct ops calling @addr (@on) or no longer; the table entries of @ops'
 * functions that call @addr taken out; the stub ops that covers @ops'
 * functions while their target changes, initialised, calling @addr.
 */
void ftrace_c_direct_lock(bool on);
bool ftrace_c_direct_lock_mine(void);
unsigned long ftrace_c_direct_multi_flags(void);
struct ftrace_hash **ftrace_c_direct_slot(void);
void ftrace_c_direct_free_table(struct ftrace_hash *hash);
void ftrace_c_direct_ops(struct ftrace_ops *ops, unsigned long addr, bool on);
void ftrace_c_direct_forget(struct ftrace_ops *ops, unsigned long addr);
struct ftrace_ops *ftrace_c_direct_tmp_ops(struct ftrace_ops *ops,
					   unsigned long addr);
/*
 * unregister_ftrace_function() for a caller that holds direct_mutex (the
 * Rust core's unregister_ftrace_direct()): @ops is stopped, its errno in
 * *@err, and its grace-period waits are left in the returned record, for
 * ftrace_c_release_finish() once the caller has dropped direct_mutex;
 * NULL if no record could be had (the waits were then done under the
 * caller's lock, as upstream does).  ftrace_c_release_finish() waits, frees
 * what the ops left (its trampoline) and the record; NULL does nothing.
 */
struct ftrace_release;
struct ftrace_release *ftrace_c_unregister_deferred(struct ftrace_ops *ops,
						    int *err);
void ftrace_c_release_finish(struct ftrace_release *rel);
/*
 * The steps of the batch direct interface that stay C: upstream's
 * hash_add() (a copy of @a with @b's entries, targets included) and
 * hash_sub() (a copy of @a without @b's functions); the empty table
 * (EMPTY_HASH); @ops' filter, NULL before its first
 * registration; @ops made a batch direct ops tracing @filter (@on), or
 * back to @filter with no function after a failed start-up;
 * register_ftrace_function_nolock(); ftrace_update_ops() with an empty
 * notrace hash (under ftrace_lock); @ops ready for another registration
 * after its last function left (its filter freed); the stub ops of a
 * batch target change, covering @hash's functions.
 */
struct ftrace_hash *ftrace_c_direct_hash_add(struct ftrace_hash *a,
					     struct ftrace_hash *b);
struct ftrace_hash *ftrace_c_direct_hash_sub(struct ftrace_hash *a,
					     struct ftrace_hash *b);
struct ftrace_hash *ftrace_c_direct_empty(void);
struct ftrace_hash *ftrace_c_direct_filter(struct ftrace_ops *ops);
void ftrace_c_direct_batch_ops(struct ftrace_ops *ops,
			       struct ftrace_hash *filter, bool on);
int ftrace_c_direct_register(struct ftrace_ops *ops);
int ftrace_c_direct_update_filter(struct ftrace_ops *ops,
				  struct ftrace_hash *filter);
void ftrace_c_direct_batch_reset(struct ftrace_ops *ops);
struct ftrace_ops *ftrace_c_direct_batch_tmp_ops(struct ftrace_hash *hash);
/*
 * KUnit only (CONFIG_FTRACE_RUST_CORE_KUNIT_TEST, c/rftrace_kunit_sites.c):
 * two traced functions nothing calls, and two targets for their sites.
 */
void rftrace_kunit_site_a(void);
void rftrace_kunit_site_b(void);
void rftrace_kunit_target_1(void);
void rftrace_kunit_target_2(void);
/*
 * Test-only (CONFIG_FTRACE_RUST_CORE_TEST_MODULE, c/rftrace_shim_<arch>.c):
 * turns the NOP at the call site of the function at @func into another
 * harmless instruction, so that the site no longer holds what the core
 * expects.  0, -ENOENT (no call site) or -EBUSY (the site is not the NOP).
 */
int rftrace_test_corrupt_site(unsigned long func);
/* Its arch part, under ftrace_lock and text_mutex; @insn as read at @ip. */
int rftrace_shim_corrupt(unsigned long ip, const u8 *insn);
/* The record table: C's lookup, its head, and its page groups. */
struct dyn_ftrace *ftrace_c_lookup_rec(unsigned long start, unsigned long end);
struct ftrace_page *ftrace_c_pages_start(void);
struct ftrace_page *ftrace_c_group_alloc(int order);
void ftrace_c_free_groups(struct ftrace_page *pages);

#endif /* _KERNEL_TRACE_RFTRACE_H */
