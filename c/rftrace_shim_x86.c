// SPDX-License-Identifier: GPL-2.0
/*
 * x86 part of the C shim of the Rust dynamic ftrace core.
 *
 * It provides the x86 arch hooks that kernel/trace/ftrace.c calls and
 * forwards them to Rust, and it holds the few things Rust cannot express
 * directly: the text_mutex bracket and the choice between early and batched
 * text poking (text_poke_early() is __init).
 *
 * This file is built without the ftrace instrumentation (see Kbuild).
 */

#define pr_fmt(fmt) "rftrace: " fmt

#include <linux/ftrace.h>
#include <linux/init.h>
#include <linux/memory.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include <asm/ftrace.h>
#include <asm/nops.h>
#include <asm/text-patching.h>

#include "../include/rftrace.h"

/* The Rust side checks the same against its bindings. */
static_assert(MCOUNT_INSN_SIZE == 5);

/* Set between prepare and post-process: the text is live, poke in batches. */
static bool rftrace_poke_late;

void ftrace_arch_code_modify_prepare(void)
	__acquires(&text_mutex)
{
	/* Keep module loading and live patching off the text meanwhile. */
	mutex_lock(&text_mutex);
	rftrace_poke_late = true;
}

void ftrace_arch_code_modify_post_process(void)
	__releases(&text_mutex)
{
	rftrace_finish();
	rftrace_poke_late = false;
	mutex_unlock(&text_mutex);
}

int ftrace_make_nop(struct module *mod, struct dyn_ftrace *rec,
		    unsigned long addr)
{
	return rftrace_make_nop(mod, rec, addr, addr == MCOUNT_ADDR);
}

int ftrace_make_call(struct dyn_ftrace *rec, unsigned long addr)
{
	return rftrace_make_call(rec, addr);
}

int ftrace_modify_call(struct dyn_ftrace *rec, unsigned long old_addr,
		       unsigned long addr)
{
	return rftrace_modify_call(rec, old_addr, addr);
}

void ftrace_replace_code(int mod_flags)
{
	/* Live INT3 batches under text_mutex: the pass does not sleep. */
	rftrace_replace_code(mod_flags & RFTRACE_MODIFY_ENABLE, false);
}

int ftrace_update_ftrace_func(ftrace_func_t func)
{
	int ret;

	ret = rftrace_update_call((unsigned long)&ftrace_call, (unsigned long)func);
	if (!ret)
		ret = rftrace_update_call((unsigned long)&ftrace_regs_call,
					  (unsigned long)func);
	return ret;
}

void arch_ftrace_update_code(int command)
{
	/* INT3 batching makes live patching safe: no stop_machine(). */
	ftrace_modify_all_code(command);
}

/*
 * Marked __ref: text_poke_early() is __init, and it is only reached before
 * the text is live (boot, or a module that is still being loaded).
 */
bool __ref rftrace_shim_poke(unsigned long ip, const u8 *insn)
{
	if (rftrace_poke_late) {
		smp_text_poke_batch_add((void *)ip, insn, MCOUNT_INSN_SIZE, NULL);
		return true;
	}
	text_poke_early((void *)ip, insn, MCOUNT_INSN_SIZE);
	return false;
}

bool rftrace_shim_poke_late(void)
{
	return rftrace_poke_late;
}

bool rftrace_shim_callback_site(unsigned long ip)
{
	return ip == (unsigned long)&ftrace_call ||
	       ip == (unsigned long)&ftrace_regs_call ||
	       is_ftrace_trampoline(ip);
}

void rftrace_shim_poke_single(unsigned long ip, const u8 *insn)
{
	lockdep_assert_held(&text_mutex);
	smp_text_poke_single((void *)ip, insn, MCOUNT_INSN_SIZE, NULL);
}

void rftrace_shim_poke_finish(void)
{
	lockdep_assert_held(&text_mutex);
	smp_text_poke_batch_finish();
}

/*
 * Test-only: the 5-byte NOP at @ip (@insn, as read) becomes another 5-byte
 * NOP (a displacement of 8), which the core does not expect there.  One
 * byte changes, with text_poke(): the INT3 protocol only takes the
 * instructions ftrace writes.
 */
int rftrace_shim_corrupt(unsigned long ip, const u8 *insn)
{
	static const u8 disp = 0x08;

	lockdep_assert_held(&text_mutex);
	if (memcmp(insn, x86_nops[MCOUNT_INSN_SIZE], MCOUNT_INSN_SIZE))
		return -EBUSY;
	text_poke((void *)(ip + MCOUNT_INSN_SIZE - 1), &disp, 1);
	smp_text_poke_sync_each_cpu();
	return 0;
}

/* The patch-site address of a call-site list entry. */
unsigned long rftrace_shim_call_adjust(unsigned long addr)
{
	return ftrace_call_adjust(addr);
}
