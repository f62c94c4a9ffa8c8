// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 part of the C shim of the Rust dynamic ftrace core.
 *
 * What the Rust side needs from arm64 arch code (the call-site hooks are
 * in c/rftrace_shim_call_ops.c): reading and patching one instruction,
 * storing a per-callsite ops literal and the module ftrace PLT of an
 * address.
 *
 * This file is built without the ftrace instrumentation (see Kbuild).
 */

#define pr_fmt(fmt) "rftrace: " fmt

#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include <asm/ftrace.h>
#include <asm/insn.h>
#include <asm/module.h>
#include <asm/text-patching.h>

#include "../include/rftrace.h"

int rftrace_shim_insn_read(unsigned long ip, u32 *insn)
{
	return aarch64_insn_read((void *)ip, insn);
}

int rftrace_shim_insn_write(unsigned long ip, u32 insn)
{
	return aarch64_insn_patch_text_nosync((void *)ip, insn);
}

/*
 * Test-only: the NOP at @ip (@insn, as read) becomes a YIELD hint, which is
 * as harmless to run and which the core does not expect there.
 */
int rftrace_shim_corrupt(unsigned long ip, const u8 *insn)
{
	u32 word;

	memcpy(&word, insn, sizeof(word));
	if (le32_to_cpu(word) != aarch64_insn_gen_nop())
		return -EBUSY;
	return aarch64_insn_patch_text_nosync((void *)ip,
					      aarch64_insn_gen_hint(AARCH64_INSN_HINT_YIELD));
}

int rftrace_shim_literal_write(unsigned long addr, unsigned long val)
{
	/*
	 * A set block the literal is to name is written before it; readers
	 * reach the block through the literal (an address dependency).
	 */
	smp_wmb();
	return aarch64_insn_write_literal_u64((void *)addr, val);
}

/*
 * The ftrace PLT of the module text holding @ip (@mod, or looked up), 0 if
 * there is none.  The module stays alive: the callers hold ftrace_lock or
 * are loading it.
 */
unsigned long rftrace_shim_plt(unsigned long ip, struct module *mod)
{
#ifdef CONFIG_MODULES
	struct plt_entry *plt;

	if (!mod) {
		rcu_read_lock();
		mod = __module_text_address(ip);
		rcu_read_unlock();
	}
	if (!mod)
		return 0;
	if (within_module_mem_type(ip, mod, MOD_INIT_TEXT))
		plt = mod->arch.init_ftrace_trampolines;
	else if (within_module_mem_type(ip, mod, MOD_TEXT))
		plt = mod->arch.ftrace_trampolines;
	else
		return 0;
	return plt ? (unsigned long)&plt[FTRACE_PLT_IDX] : 0;
#else
	return 0;
#endif
}
