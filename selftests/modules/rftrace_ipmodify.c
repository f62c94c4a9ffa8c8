// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: IPMODIFY claims.
 *
 * At most one started ftrace_ops with FTRACE_OPS_FL_IPMODIFY may cover a
 * function (a kprobe with a post handler and a live patch both change
 * where a traced function resumes).  At load this module registers ops
 * of its own on three functions of its own (f_a < f_b < f_c in the
 * record table) and checks what the kernel answers, in this order:
 *
 *   first       IPMODIFY ops on f_b                      registers (0)
 *   second      another IPMODIFY ops on f_b              -EBUSY
 *   second-c    the second ops on f_c instead            registers (0)
 *   move        the second ops adds f_a and f_b          -EBUSY (f_a is
 *               free, f_b is the first ops')
 *   kept        calling f_a, f_b, f_c reaches the first ops at f_b and
 *               the second at f_c only: the refused change left both
 *   all         IPMODIFY ops of every function           -EINVAL
 *   notrace     a notrace filter on an IPMODIFY ops      -EINVAL
 *
 * With the stage parameter 1 it then unregisters the first ops, the
 * second adds f_a and f_b (0) and sees all three, and then sets its
 * filter to f_a alone (0: releases f_b and f_c, keeps f_a).
 *
 * It prints one line per case ("ok" or "FAIL" with the answer and the
 * one expected) and "N passed, M failed", and keeps its ops registered
 * until it is removed, so that a test can read their claims (" I") in
 * enabled_functions: after stage 0, f_b and f_c are claimed and f_a is
 * not traced (Linux 7.2 claims f_a during the refused move and undoes
 * it; the Rust core checks before it writes); after stage 1, only f_a.
 *
 * With the hold parameter (a kernel function's name) it runs none of the
 * cases: it keeps the first ops on that function from its load until it
 * is removed, and a name written to the hold_late parameter afterwards
 * starts the second ops on that function then.  Each counts the calls it
 * sees and the count is printed at removal ("held NAME: N calls").  For
 * scripts/bpftrace-test.sh: a BPF trampoline that calls the original
 * function (fexit) shares its site with an IPMODIFY ops, whether the
 * claim is there before the trampoline (the trampoline's own ops_func is
 * asked, and its register_ftrace_direct() is answered -EAGAIN until it is
 * built to share) or comes after it (the trampoline is asked to share and
 * rebuilds itself).
 *
 * Built out of tree for every kernel variant, stock included, and used by
 * selftests/rftrace/ipmodify-claims.tc: the answers are Linux 7.2's.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/sysfs.h>

static unsigned int stage;
module_param(stage, uint, 0444);
MODULE_PARM_DESC(stage, "1: also free f_a and let the second ops take it");

static char *hold;
module_param(hold, charp, 0444);
MODULE_PARM_DESC(hold, "a kernel function: keep an IPMODIFY ops on it, run no case");

static unsigned long rftrace_ipm_sink;

static noinline void rftrace_ipm_f_a(void)
{
	WRITE_ONCE(rftrace_ipm_sink, READ_ONCE(rftrace_ipm_sink) + 1);
}

static noinline void rftrace_ipm_f_b(void)
{
	WRITE_ONCE(rftrace_ipm_sink, READ_ONCE(rftrace_ipm_sink) ^ 2);
}

static noinline void rftrace_ipm_f_c(void)
{
	WRITE_ONCE(rftrace_ipm_sink, READ_ONCE(rftrace_ipm_sink) * 3);
}

enum { FA = 1, FB = 2, FC = 4 };

struct ipm_ops {
	struct ftrace_ops ops;
	atomic_t seen;
	atomic_long_t calls;
	bool registered;
	char name[KSYM_NAME_LEN];
};

/* The record of @fn sits within its first bytes on every arch. */
static bool ipm_in(unsigned long ip, void (*fn)(void))
{
	return ip - (unsigned long)fn < 16;
}

static void ipm_func(unsigned long ip, unsigned long parent_ip,
		     struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct ipm_ops *o = container_of(op, struct ipm_ops, ops);

	atomic_long_inc(&o->calls);
	if (ipm_in(ip, rftrace_ipm_f_a))
		atomic_or(FA, &o->seen);
	else if (ipm_in(ip, rftrace_ipm_f_b))
		atomic_or(FB, &o->seen);
	else if (ipm_in(ip, rftrace_ipm_f_c))
		atomic_or(FC, &o->seen);
}

static struct ipm_ops ipm[3] = {
	[0 ... 2] = {
		.ops = {
			.func = ipm_func,
			.flags = FTRACE_OPS_FL_IPMODIFY,
		},
	},
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

/*
 * Sets (reset) or extends the filter of @o with the functions in @fns
 * (the kernel finds each one's record).
 */
static int filter(struct ipm_ops *o, int fns, bool reset)
{
	unsigned long ips[3];
	unsigned int n = 0;

	if (fns & FA)
		ips[n++] = (unsigned long)rftrace_ipm_f_a;
	if (fns & FB)
		ips[n++] = (unsigned long)rftrace_ipm_f_b;
	if (fns & FC)
		ips[n++] = (unsigned long)rftrace_ipm_f_c;
	return ftrace_set_filter_ips(&o->ops, ips, n, 0, reset);
}

static int start(struct ipm_ops *o)
{
	int ret = register_ftrace_function(&o->ops);

	if (!ret)
		o->registered = true;
	return ret;
}

static void stop(struct ipm_ops *o)
{
	if (o->registered && !unregister_ftrace_function(&o->ops))
		o->registered = false;
}

/* Starts @o on the kernel function @name alone (hold mode). */
static int hold_on(struct ipm_ops *o, const char *name)
{
	char *n;
	int ret;

	strscpy(o->name, name, sizeof(o->name));
	n = strim(o->name);
	if (n != o->name)
		memmove(o->name, n, strlen(n) + 1);
	ret = ftrace_set_filter(&o->ops, (unsigned char *)o->name,
				strlen(o->name), 1);
	if (!ret)
		ret = start(o);
	if (ret) {
		pr_err("hold %s: %d\n", o->name, ret);
		ftrace_free_filter(&o->ops);
		o->name[0] = '\0';
		return ret;
	}
	pr_info("holding %s\n", o->name);
	return 0;
}

static int hold_late_set(const char *val, const struct kernel_param *kp)
{
	if (!hold)
		return -EINVAL;
	if (ipm[1].registered)
		return -EBUSY;
	return hold_on(&ipm[1], val);
}

static int hold_late_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", ipm[1].name);
}

static const struct kernel_param_ops hold_late_ops = {
	.set = hold_late_set,
	.get = hold_late_get,
};
module_param_cb(hold_late, &hold_late_ops, NULL, 0644);
MODULE_PARM_DESC(hold_late, "with hold: a kernel function for a second IPMODIFY ops, started when written");

/* Calls the three functions; each ops must see exactly what is given. */
static void calls(const char *name, int seen0, int seen1)
{
	int i;

	for (i = 0; i < 3; i++)
		atomic_set(&ipm[i].seen, 0);
	rftrace_ipm_f_a();
	rftrace_ipm_f_b();
	rftrace_ipm_f_c();
	expect(name, atomic_read(&ipm[0].seen) << 4 | atomic_read(&ipm[1].seen),
	       seen0 << 4 | seen1);
}

static int __init rftrace_ipm_init(void)
{
	unsigned char notrace_a[] = "rftrace_ipm_f_a";

	if (hold)
		return hold_on(&ipm[0], hold);
	expect("first-filter", filter(&ipm[0], FB, true), 0);
	expect("first", start(&ipm[0]), 0);
	expect("second-filter", filter(&ipm[1], FB, true), 0);
	expect("second", start(&ipm[1]), -EBUSY);
	expect("second-c-filter", filter(&ipm[1], FC, true), 0);
	expect("second-c", start(&ipm[1]), 0);
	expect("move", filter(&ipm[1], FA | FB, false), -EBUSY);
	calls("kept", FB, FC);
	expect("all", start(&ipm[2]), -EINVAL);
	expect("notrace", ftrace_set_notrace(&ipm[1].ops, notrace_a,
					     sizeof(notrace_a) - 1, 0), -EINVAL);
	calls("kept-notrace", FB, FC);
	if (stage >= 1) {
		stop(&ipm[0]);
		expect("first-gone", ipm[0].registered, false);
		expect("move-freed", filter(&ipm[1], FA | FB, false), 0);
		calls("taken", 0, FA | FB | FC);
		expect("swap", filter(&ipm[1], FA, true), 0);
		calls("swapped", 0, FA);
	}
	pr_info("%u passed, %u failed\n", passed, failed);
	return 0;
}

static void __exit rftrace_ipm_exit(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		stop(&ipm[i]);
		ftrace_free_filter(&ipm[i].ops);
		if (ipm[i].name[0])
			pr_info("held %s: %ld calls\n", ipm[i].name,
				atomic_long_read(&ipm[i].calls));
	}
}

module_init(rftrace_ipm_init);
module_exit(rftrace_ipm_exit);
MODULE_DESCRIPTION("IPMODIFY claims: what the kernel answers");
MODULE_LICENSE("GPL");
