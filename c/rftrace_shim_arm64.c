// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 part of the C shim of the Rust dynamic ftrace core.
 *
 * The arm64 call-site hooks that kernel/trace/ftrace.c calls, forwarded to
 * Rust, and what the Rust side needs from arch code: reading and patching
 * one instruction, storing a per-callsite ops literal and the module
 * ftrace PLT of an address.
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

/*
 * The patch-site address of a call-site list entry, 0 if it cannot be
 * patched: the entry (the first of the NOPs that hold the ops literal) must
 * be 8-byte aligned.  Checked here so that the Rust core reports such a
 * site itself; ftrace_call_adjust() would warn once per site.
 */
unsigned long rftrace_shim_call_adjust(unsigned long addr)
{
	if (IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS) &&
	    !IS_ALIGNED(addr, sizeof(unsigned long)))
		return 0;
	return ftrace_call_adjust(addr);
}
