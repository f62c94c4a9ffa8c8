// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: an ftrace_ops whose function becomes NULL while it traces.
 *
 * A caller bug, not an API: the ops list walk of ftrace.c refuses to call
 * an ops without a function, warns once for the call (FTRACE_WARN_ON,
 * which stops ftrace: ftrace_kill()) and returns.  The walk over a call
 * site's ops set must do the same instead of calling address 0.
 *
 * At load, two ops (a, b) trace one function of this module, so that its
 * call site has two ops: the list function's walk on a stock kernel, the
 * site's ops set with the Rust core (named by the CALL_OPS literal on
 * arm64 and riscv64, found by the list function on x86_64).  The module
 * calls the function once (both ops see it), clears b's function, calls
 * it once more, and then checks that ftrace has stopped: a third ops
 * cannot register (-ENODEV).
 *
 * It prints one line per case and "N passed, M failed".  It is meant for
 * a boot of its own (scripts/guest/init, mode null-func): ftrace stays
 * stopped, and the module has no exit function so that its ops, still on
 * the list of a stopped ftrace, are never freed.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/ftrace.h>
#include <linux/module.h>

static unsigned long rftrace_nf_sink;

static noinline void rftrace_nf_target(void)
{
	WRITE_ONCE(rftrace_nf_sink, READ_ONCE(rftrace_nf_sink) + 1);
}

struct nf_ops {
	struct ftrace_ops ops;
	atomic_t calls;
};

static void nf_func(unsigned long ip, unsigned long parent_ip,
		    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	atomic_inc(&container_of(op, struct nf_ops, ops)->calls);
}

static struct nf_ops nf[3] = {
	[0 ... 2] = { .ops = { .func = nf_func } },
};

static unsigned int passed, failed;

static void expect(const char *name, int got, int want)
{
	if (got == want) {
		passed++;
		pr_info("%s: ok (%d)\n", name, got);
	} else {
		failed++;
		pr_err("%s: FAIL: got %d, want %d\n", name, got, want);
	}
}

static int nf_start(struct nf_ops *o)
{
	unsigned long ip = (unsigned long)rftrace_nf_target;
	int ret = ftrace_set_filter_ip(&o->ops, ip, 0, 1);

	return ret ? ret : register_ftrace_function(&o->ops);
}

static int __init rftrace_nf_init(void)
{
	expect("a-registers", nf_start(&nf[0]), 0);
	expect("b-registers", nf_start(&nf[1]), 0);
	rftrace_nf_target();
	expect("a-called", atomic_read(&nf[0].calls), 1);
	expect("b-called", atomic_read(&nf[1].calls), 1);

	pr_info("clearing b's function; the next call warns once\n");
	WRITE_ONCE(nf[1].ops.func, NULL);
	rftrace_nf_target();
	expect("b-not-called", atomic_read(&nf[1].calls), 1);
	expect("ftrace-stopped", nf_start(&nf[2]), -ENODEV);
	pr_info("%u passed, %u failed\n", passed, failed);
	return 0;
}

module_init(rftrace_nf_init);
MODULE_DESCRIPTION("An ops without a function is refused by the walk");
MODULE_LICENSE("GPL");
