// SPDX-License-Identifier: GPL-2.0
/*
 * The part of the C shim shared by the architectures with per-callsite ops
 * literals (DYNAMIC_FTRACE_WITH_CALL_OPS: arm64, riscv64).
 *
 * Their call-site hooks that kernel/trace/ftrace.c calls, forwarded to
 * Rust (the arch's own version is compiled out by its hook patch), the
 * patch-site address of a call-site list entry, and the two static ops a
 * literal holds besides a unique one.  What differs per architecture (the
 * stores, the module PLT) is in c/rftrace_shim_<arch>.c.
 *
 * This file is built without the ftrace instrumentation (see Kbuild).
 */

#include <linux/align.h>
#include <linux/ftrace.h>
#include <linux/uaccess.h>

#include <asm/ftrace.h>

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

/*
 * The first stores at a site; riscv64's take text_mutex themselves in the
 * Rust core, as its upstream hook does.
 */
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

/*
 * The patch-site address of a call-site list entry, 0 if it cannot be
 * patched: the entry, the start of the ops literal, must be 8-byte aligned
 * (where ftrace_caller loads it, and for one single-copy-atomic store).
 * Checked here so that the Rust core reports such a site itself: arm64's
 * ftrace_call_adjust() would warn once per site, riscv's does not check.
 */
unsigned long rftrace_shim_call_adjust(unsigned long addr)
{
	if (!IS_ALIGNED(addr, sizeof(unsigned long)))
		return 0;
	return ftrace_call_adjust(addr);
}

unsigned long rftrace_shim_stub_ops(bool list)
{
	return list ? (unsigned long)&ftrace_list_ops :
		      (unsigned long)&ftrace_nop_ops;
}

unsigned long rftrace_shim_literal_read(unsigned long addr)
{
	unsigned long val;

	if (copy_from_kernel_nofault(&val, (void *)addr, sizeof(val)))
		return 0;
	return val;
}
