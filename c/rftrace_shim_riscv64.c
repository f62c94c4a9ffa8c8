// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64 part of the C shim of the Rust dynamic ftrace core.
 *
 * The riscv call-site hooks that kernel/trace/ftrace.c calls, forwarded to
 * Rust, and what the Rust side needs from arch code: the three stores a
 * patch site gets (its per-callsite ops literal, the slot that toggles
 * between nop and jalr, and once the auipc with the nop after it), all
 * through the kernel's text patching, which needs text_mutex.
 *
 * This file is built without the ftrace instrumentation (see Kbuild).
 */

#define pr_fmt(fmt) "rftrace: " fmt

#include <linux/ftrace.h>
#include <linux/memory.h>
#include <linux/mutex.h>
#include <linux/string.h>

#include <asm/barrier.h>
#include <asm/ftrace.h>
#include <asm/insn-def.h>
#include <asm/text-patching.h>

#include "../include/rftrace.h"

/* The Rust side checks the same against its bindings. */
static_assert(MCOUNT_INSN_SIZE == 4);

int ftrace_make_call(struct dyn_ftrace *rec, unsigned long addr)
{
	return rftrace_make_call(rec, addr);
}

int ftrace_modify_call(struct dyn_ftrace *rec, unsigned long old_addr,
		       unsigned long addr)
{
	return rftrace_modify_call(rec, old_addr, addr);
}

int ftrace_make_nop(struct module *mod, struct dyn_ftrace *rec,
		    unsigned long addr)
{
	return rftrace_make_nop(mod, rec, addr, false);
}

/* The Rust core takes text_mutex for the first stores at a site. */
int ftrace_init_nop(struct module *mod, struct dyn_ftrace *rec)
{
	return rftrace_make_nop(mod, rec, 0, true);
}

/* Replaces the generic (weak) one: the Rust update pass over every record. */
void ftrace_replace_code(int mod_flags)
{
	rftrace_replace_code(mod_flags & RFTRACE_MODIFY_ENABLE,
			     mod_flags & RFTRACE_MODIFY_MAY_SLEEP);
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

/*
 * The literal is data that ftrace_caller loads after the jalr ran: it needs
 * no instruction-cache maintenance, only to be visible before the jalr
 * store that follows it (the write barrier).  7.2 writes it with
 * patch_text_nosync(), whose flush_icache_range() makes every hart
 * execute fence.i (an IPI or an SBI remote fence) once per site; the
 * arch update hook flushes once after the whole pass.
 */
int rftrace_shim_rv_literal_write(unsigned long addr, unsigned long val)
{
	int ret = patch_insn_write((void *)addr, &val, sizeof(val));

	/* Pairs with the jalr that leads ftrace_caller to load the literal. */
	smp_wmb();
	return ret;
}

int rftrace_shim_rv_insn_write(unsigned long ip, u32 insn)
{
	return patch_insn_write((void *)ip, &insn, sizeof(insn));
}

int rftrace_shim_rv_entry_write(unsigned long pc, u64 pair)
{
	return patch_insn_write((void *)pc, &pair, sizeof(pair));
}

/*
 * Test-only: the nop at @ip (@insn, as read) becomes "addi x0, x0, 1", a
 * hint that is as harmless to run and which the core does not expect there.
 */
int rftrace_shim_corrupt(unsigned long ip, const u8 *insn)
{
	u32 word, hint = RISCV_INSN_NOP4 | (1U << 20);

	memcpy(&word, insn, sizeof(word));
	if (le32_to_cpu(word) != RISCV_INSN_NOP4)
		return -EBUSY;
	return patch_insn_write((void *)ip, &hint, sizeof(hint));
}

/*
 * The patch-site address (the jalr slot) of a call-site list entry, 0 if it
 * cannot be patched: the entry is the ops literal, which must be 8-byte
 * aligned, where ftrace_caller looks for it.  7.2 does not check.
 */
unsigned long rftrace_shim_call_adjust(unsigned long addr)
{
	if (!IS_ALIGNED(addr, sizeof(unsigned long)))
		return 0;
	return ftrace_call_adjust(addr);
}
