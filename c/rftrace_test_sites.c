// SPDX-License-Identifier: GPL-2.0
/*
 * Test module for the Rust dynamic ftrace core's call-site list check.
 *
 * Kbuild compiles this file with -falign-functions=4, below the 8 bytes
 * arm64 needs with per-callsite ops literals (the way GCC leaves cold or
 * -Os functions), so some of the functions below start at an address that
 * is 4 mod 8: the 8-byte literal before them cannot be stored atomically,
 * and their patch sites must be refused when the module is loaded, with a
 * report, while the aligned ones stay traceable.  The
 * functions are called once at load and again on every write to the
 * "run" parameter, so a test can make them run while they are traced.
 *
 * Writing a function's name (rftrace_test_f1 ...) to the "corrupt"
 * parameter turns the NOP at its call site into another harmless
 * instruction (rftrace_test_corrupt_site(), in the core's shim): the Rust
 * core must then quarantine that one site when it is to be traced, and
 * trace every other function.  A function of the kernel's own is named
 * by its address instead ("0x..." from /proc/kallsyms).
 *
 * On x86_64, writing a function's name to the "direct" parameter
 * registers a direct call at its site to a trampoline that only returns
 * (register_ftrace_direct()), and writing "-" unregisters it: the core
 * must refuse a direct call to a quarantined site, which would never be
 * made.  Elsewhere the parameter answers -EOPNOTSUPP.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compiler.h>
#include <asm/rwonce.h>
#include <linux/ftrace.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "../include/rftrace.h"

static unsigned long rftrace_test_sink;

#define SINK(expr) WRITE_ONCE(rftrace_test_sink, (expr))
#define SUNK READ_ONCE(rftrace_test_sink)

static noinline void rftrace_test_f1(void)
{
	SINK(SUNK + 1);
}

static noinline void rftrace_test_f2(void)
{
	SINK(SUNK + 2);
	SINK(SUNK ^ 3);
}

static noinline void rftrace_test_f3(void)
{
	SINK(SUNK * 5 + 1);
}

static noinline void rftrace_test_f4(void)
{
	SINK(SUNK - 7);
	SINK(SUNK | 8);
	SINK(SUNK + 9);
}

static noinline void rftrace_test_g1(void)
{
	SINK(SUNK + 11);
}

static noinline void rftrace_test_g2(void)
{
	SINK(SUNK ^ 13);
}

static noinline void rftrace_test_h1(void)
{
	SINK(SUNK + 17);
}

static noinline void rftrace_test_h2(void)
{
	SINK(SUNK ^ 19);
	SINK(SUNK + 23);
}

static noinline void rftrace_test_h3(void)
{
	SINK(SUNK * 3 + 29);
}

static noinline void rftrace_test_h4(void)
{
	SINK(SUNK - 31);
	SINK(SUNK | 37);
}

static void rftrace_test_run_all(void)
{
	rftrace_test_f1();
	rftrace_test_f2();
	rftrace_test_f3();
	rftrace_test_f4();
	rftrace_test_g1();
	rftrace_test_g2();
	rftrace_test_h1();
	rftrace_test_h2();
	rftrace_test_h3();
	rftrace_test_h4();
}

static const struct {
	const char *name;
	void (*fn)(void);
} rftrace_test_funcs[] = {
	{ "rftrace_test_f1", rftrace_test_f1 },
	{ "rftrace_test_f2", rftrace_test_f2 },
	{ "rftrace_test_f3", rftrace_test_f3 },
	{ "rftrace_test_f4", rftrace_test_f4 },
	{ "rftrace_test_g1", rftrace_test_g1 },
	{ "rftrace_test_g2", rftrace_test_g2 },
	{ "rftrace_test_h1", rftrace_test_h1 },
	{ "rftrace_test_h2", rftrace_test_h2 },
	{ "rftrace_test_h3", rftrace_test_h3 },
	{ "rftrace_test_h4", rftrace_test_h4 },
};

static int rftrace_test_set_corrupt(const char *val,
				    const struct kernel_param *kp)
{
	int i, ret;

	unsigned long addr;

	for (i = 0; i < ARRAY_SIZE(rftrace_test_funcs); i++) {
		if (!sysfs_streq(val, rftrace_test_funcs[i].name))
			continue;
		ret = rftrace_test_corrupt_site((unsigned long)rftrace_test_funcs[i].fn);
		if (ret)
			pr_err("cannot corrupt the call site of %s: %d\n",
			       rftrace_test_funcs[i].name, ret);
		return ret;
	}
	/* Any other function, by its address (from /proc/kallsyms). */
	if (strncmp(val, "0x", 2) || kstrtoul(val, 16, &addr))
		return -EINVAL;
	ret = rftrace_test_corrupt_site(addr);
	if (ret)
		pr_err("cannot corrupt the call site at %#lx: %d\n", addr, ret);
	return ret;
}

#if defined(CONFIG_X86_64) && defined(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)
#include <asm/ibt.h>
#include <asm/nospec-branch.h>

/*
 * The direct call's target: called at the traced function's entry, with
 * the function's return address and arguments untouched, it returns into
 * the function at once.
 */
void rftrace_test_tramp(void);
asm(
"	.pushsection .text, \"ax\", @progbits\n"
"	.type rftrace_test_tramp, @function\n"
"	.globl rftrace_test_tramp\n"
"rftrace_test_tramp:\n"
	ASM_ENDBR
	CALL_DEPTH_ACCOUNT
	ASM_RET
"	.size rftrace_test_tramp, .-rftrace_test_tramp\n"
"	.popsection\n"
);

static struct ftrace_ops rftrace_test_direct_ops;
static bool rftrace_test_direct_on;

static void rftrace_test_direct_off(void)
{
	if (!rftrace_test_direct_on)
		return;
	unregister_ftrace_direct(&rftrace_test_direct_ops,
				 (unsigned long)rftrace_test_tramp, true);
	rftrace_test_direct_on = false;
}

static int rftrace_test_set_direct(const char *val,
				   const struct kernel_param *kp)
{
	struct ftrace_ops *ops = &rftrace_test_direct_ops;
	int i, ret;

	if (sysfs_streq(val, "-")) {
		rftrace_test_direct_off();
		return 0;
	}
	if (rftrace_test_direct_on)
		return -EBUSY;
	for (i = 0; i < ARRAY_SIZE(rftrace_test_funcs); i++) {
		if (!sysfs_streq(val, rftrace_test_funcs[i].name))
			continue;
		ret = ftrace_set_filter_ip(ops, (unsigned long)rftrace_test_funcs[i].fn,
					   0, 1);
		if (!ret)
			ret = register_ftrace_direct(ops, (unsigned long)rftrace_test_tramp);
		if (ret) {
			ftrace_free_filter(ops);
			return ret;
		}
		rftrace_test_direct_on = true;
		return 0;
	}
	return -EINVAL;
}
#else
static void rftrace_test_direct_off(void)
{
}

static int rftrace_test_set_direct(const char *val,
				   const struct kernel_param *kp)
{
	return -EOPNOTSUPP;
}
#endif

static const struct kernel_param_ops rftrace_test_direct_param_ops = {
	.set = rftrace_test_set_direct,
};
module_param_cb(direct, &rftrace_test_direct_param_ops, NULL, 0200);
MODULE_PARM_DESC(direct, "a function name: a direct call at its site (x86_64); - : none");

static const struct kernel_param_ops rftrace_test_corrupt_ops = {
	.set = rftrace_test_set_corrupt,
};
module_param_cb(corrupt, &rftrace_test_corrupt_ops, NULL, 0200);
MODULE_PARM_DESC(corrupt, "a function name or 0xADDRESS: make its call site unexpected");

static int rftrace_test_set_run(const char *val, const struct kernel_param *kp)
{
	rftrace_test_run_all();
	return 0;
}

static const struct kernel_param_ops rftrace_test_run_ops = {
	.set = rftrace_test_set_run,
};
module_param_cb(run, &rftrace_test_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write anything: call every test function once");

static int __init rftrace_test_init(void)
{
	rftrace_test_run_all();
	return 0;
}

static void __exit rftrace_test_exit(void)
{
	rftrace_test_direct_off();
}

module_init(rftrace_test_init);
module_exit(rftrace_test_exit);
MODULE_DESCRIPTION("Call sites for the Rust ftrace core's list check");
MODULE_LICENSE("GPL");
