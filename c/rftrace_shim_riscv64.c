// SPDX-License-Identifier: GPL-2.0
/*
 * riscv64 part of the C shim of the Rust dynamic ftrace core.
 *
 * What the Rust side needs from riscv arch code (the call-site hooks are
 * in c/rftrace_shim_call_ops.c): the three stores a patch site gets (its per-callsite ops literal, the slot that toggles
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

/*
 * The literal is data that ftrace_caller loads after the jalr ran: it needs
 * no instruction-cache maintenance, only to be visible before the jalr
 * store that follows it (the write barrier).  Upstream writes it with
 * patch_text_nosync(), whose flush_icache_range() makes every hart
 * execute fence.i (an IPI or an SBI remote fence) once per site; the
 * arch update hook flushes once after the whole pass.
 */
int rftrace_shim_rv_literal_write(unsigned long addr, unsigned long val)
{
	int ret;

	/* A set block the literal is to name is written before it. */
	smp_wmb();
	ret = patch_insn_write((void *)addr, &val, sizeof(val));

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
