// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: how long unregistering many dynamic ftrace_ops takes, one
 * after another or all at once from their own threads.
 *
 * At load it allocates nr_ops ops, each filtering on the module's own
 * rftrace_detach_target(), registers them, and has a kthread call that
 * function every few hundred microseconds so that every ops is being
 * called.  Then it unregisters them:
 *
 *   concurrent=0  one after another, from the loading task;
 *   concurrent=1  each from its own kthread, all released at once.
 *
 * An unregistration of a dynamic ops returns only after the grace periods
 * that make sure no CPU is still in the ops' callback.  The module checks
 * that promise: each thread reads its ops' call count when
 * unregister_ftrace_function() returns, the caller goes on calling the
 * target for another settle_ms, and every count must be unchanged.  It
 * prints one line:
 *
 *   rftrace_detach: ops=N concurrent=C attach_us=A detach_us=D calls=K late=L
 *
 * where late counts the ops called after their unregistration returned
 * (0 or the load fails with -EFAULT), and calls is the callbacks seen in
 * all.  The load fails with the errno of the first registration or
 * unregistration that failed.  The module then stays loaded, doing
 * nothing, until it is removed.
 *
 * Built out of tree for every kernel variant, stock included, and run by
 * scripts/detach-bench.sh.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/ftrace.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static unsigned int nr_ops = 16;
module_param(nr_ops, uint, 0444);
MODULE_PARM_DESC(nr_ops, "how many ops to register and unregister (1..1024)");

static bool concurrent;
module_param(concurrent, bool, 0444);
MODULE_PARM_DESC(concurrent, "unregister each ops from its own thread, all at once");

static unsigned int settle_ms = 50;
module_param(settle_ms, uint, 0444);
MODULE_PARM_DESC(settle_ms, "how long to go on calling the target after the last unregistration");

#define RFTRACE_DETACH_MAX_OPS 1024

struct rftrace_detach_op {
	struct ftrace_ops	ops;
	atomic_long_t		calls;
	long			at_return;
	int			err;
	struct task_struct	*thread;
};

static struct rftrace_detach_op *ops_all;
static DECLARE_COMPLETION(go);
static DECLARE_COMPLETION(all_done);
static atomic_t pending;

noinline void rftrace_detach_target(void)
{
	/* Keeps the call from being folded away. */
	asm volatile ("" ::: "memory");
}

static void rftrace_detach_func(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct rftrace_detach_op *d = container_of(op, struct rftrace_detach_op, ops);

	atomic_long_inc(&d->calls);
}

static int rftrace_detach_caller(void *unused)
{
	while (!kthread_should_stop()) {
		rftrace_detach_target();
		usleep_range(200, 400);
	}
	return 0;
}

static void rftrace_detach_one(struct rftrace_detach_op *d)
{
	d->err = unregister_ftrace_function(&d->ops);
	d->at_return = atomic_long_read(&d->calls);
}

static int rftrace_detach_thread(void *data)
{
	struct rftrace_detach_op *d = data;

	wait_for_completion(&go);
	rftrace_detach_one(d);
	if (atomic_dec_and_test(&pending))
		complete(&all_done);
	/* Stay until the loader has read the result and stops the thread. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int rftrace_detach_register(unsigned int n)
{
	static const char target[] = "rftrace_detach_target";
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		struct rftrace_detach_op *d = &ops_all[i];

		d->ops.func = rftrace_detach_func;
		err = ftrace_set_filter(&d->ops, (unsigned char *)target,
					strlen(target), 1);
		if (!err)
			err = register_ftrace_function(&d->ops);
		if (err) {
			pr_err("ops %u: registration failed: %d\n", i, err);
			ftrace_free_filter(&d->ops);
			/* The ones before are unregistered by the caller. */
			return err;
		}
	}
	return 0;
}

/* Makes the threads; they start when go is completed. */
static int rftrace_detach_threads(unsigned int n)
{
	unsigned int i;

	atomic_set(&pending, n);
	for (i = 0; i < n; i++) {
		struct task_struct *t;

		t = kthread_create(rftrace_detach_thread, &ops_all[i],
				   "rftrace_detach/%u", i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		ops_all[i].thread = t;
	}
	for (i = 0; i < n; i++)
		wake_up_process(ops_all[i].thread);
	return 0;
}

/* Unregisters what is still registered and frees what the load made. */
static void rftrace_detach_cleanup(void)
{
	unsigned int i;

	if (!ops_all)
		return;
	for (i = 0; i < nr_ops; i++) {
		struct rftrace_detach_op *d = &ops_all[i];

		if (d->thread)
			kthread_stop(d->thread);
		if (d->ops.flags & FTRACE_OPS_FL_ENABLED &&
		    unregister_ftrace_function(&d->ops)) {
			/* Still callable: keep it, and the module's text. */
			pr_err("ops %u: unregistration failed\n", i);
			__module_get(THIS_MODULE);
			return;
		}
		ftrace_free_filter(&d->ops);
	}
	kfree(ops_all);
	ops_all = NULL;
}

static int __init rftrace_detach_init(void)
{
	struct task_struct *caller;
	ktime_t t0, t1, t2, t3;
	long calls = 0;
	unsigned int i, late = 0;
	int err;

	if (!nr_ops || nr_ops > RFTRACE_DETACH_MAX_OPS) {
		pr_err("nr_ops must be 1..%u\n", RFTRACE_DETACH_MAX_OPS);
		return -EINVAL;
	}
	ops_all = kcalloc(nr_ops, sizeof(*ops_all), GFP_KERNEL);
	if (!ops_all)
		return -ENOMEM;

	t0 = ktime_get();
	err = rftrace_detach_register(nr_ops);
	t1 = ktime_get();
	if (err)
		goto out;

	caller = kthread_run(rftrace_detach_caller, NULL, "rftrace_detach_call");
	if (IS_ERR(caller)) {
		err = PTR_ERR(caller);
		goto out;
	}
	/* Let every ops be called a few times. */
	msleep(20);

	if (concurrent) {
		/*
		 * A thread that was never woken does not run its function:
		 * the cleanup's kthread_stop() only reaps it.
		 */
		err = rftrace_detach_threads(nr_ops);
		if (err) {
			kthread_stop(caller);
			goto out;
		}
		t2 = ktime_get();
		complete_all(&go);
		wait_for_completion(&all_done);
	} else {
		t2 = ktime_get();
		for (i = 0; i < nr_ops; i++)
			rftrace_detach_one(&ops_all[i]);
	}
	t3 = ktime_get();

	msleep(settle_ms);
	kthread_stop(caller);

	for (i = 0; i < nr_ops; i++) {
		struct rftrace_detach_op *d = &ops_all[i];
		long now = atomic_long_read(&d->calls);

		if (d->err && !err)
			err = d->err;
		if (now != d->at_return)
			late++;
		calls += now;
	}
	pr_info("ops=%u concurrent=%d attach_us=%lld detach_us=%lld calls=%ld late=%u err=%d\n",
		nr_ops, concurrent, ktime_us_delta(t1, t0),
		ktime_us_delta(t3, t2), calls, late, err);
	if (late && !err)
		err = -EFAULT;
	if (!calls && !err) {
		pr_err("no ops was called: the target is not traced\n");
		err = -ENODATA;
	}
out:
	rftrace_detach_cleanup();
	/* An ops that could not be unregistered keeps the module loaded. */
	return ops_all ? 0 : err;
}

static void __exit rftrace_detach_exit(void)
{
	rftrace_detach_cleanup();
}

module_init(rftrace_detach_init);
module_exit(rftrace_detach_exit);
MODULE_DESCRIPTION("Times the unregistration of many ftrace_ops (rftrace benchmarks)");
MODULE_LICENSE("GPL");
