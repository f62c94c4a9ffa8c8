// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: holds up RCU-tasks grace periods for a while.
 *
 * A kthread stays runnable for hold_ms milliseconds: it spins, and gives
 * the CPU up only when it is preempted (the kernel is preemptible), never
 * by sleeping or calling schedule() or yield().  RCU Tasks counts a task
 * as quiescent once it switches voluntarily (which includes schedule() and
 * yield() from a running task), sleeps or runs in user mode, so every
 * synchronize_rcu_tasks() that starts meanwhile lasts until the kthread
 * stops holding.  This is the kind of holdout seen in stalls
 * under emulation (a task preempted and not run again for a long time),
 * made on purpose and for a bounded time.
 *
 * With rcu=1 it holds normal RCU grace periods instead: the kthread spins
 * inside rcu_read_lock(), at most 15 s (RCU reports a CPU stall after 21 s
 * by default, the soft-lockup detector after 20 s), so that
 * synchronize_rcu() lasts until it stops.  On a kernel whose RCU is not
 * preemptible this keeps one CPU busy, as a long read-side section does.
 *
 * Built out of tree for every kernel variant, stock included, and used by
 * selftests/rftrace/registry-slow-grace-period.tc and its kin.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/processor.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

static unsigned int hold_ms = 30000;
module_param(hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "how long to hold RCU-tasks grace periods (ms)");

static bool rcu;
module_param(rcu, bool, 0444);
MODULE_PARM_DESC(rcu, "hold normal RCU grace periods instead (at most 15000 ms)");

#define RFTRACE_HOLD_RCU_MAX_MS 15000

static struct task_struct *holder;

static int rftrace_hold(void *unused)
{
	unsigned long end = jiffies + msecs_to_jiffies(hold_ms);

	if (rcu)
		rcu_read_lock();
	while (time_before(jiffies, end) && !kthread_should_stop())
		cpu_relax();
	if (rcu)
		rcu_read_unlock();
	pr_info("released after %u ms\n", hold_ms);

	/* Sleep until the module goes. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int __init rftrace_hold_init(void)
{
	/* Spinning without preemption would stop a CPU, not a grace period. */
	if (!IS_ENABLED(CONFIG_PREEMPTION)) {
		pr_info("needs a preemptible kernel\n");
		return -EOPNOTSUPP;
	}
	if (rcu && hold_ms > RFTRACE_HOLD_RCU_MAX_MS) {
		pr_info("rcu=1 holds at most %u ms\n", RFTRACE_HOLD_RCU_MAX_MS);
		return -EINVAL;
	}
	holder = kthread_run(rftrace_hold, NULL, "rftrace_hold_gp");
	if (IS_ERR(holder))
		return PTR_ERR(holder);
	pr_info("holding %s grace periods for %u ms\n",
		rcu ? "RCU" : "RCU-tasks", hold_ms);
	return 0;
}

static void __exit rftrace_hold_exit(void)
{
	kthread_stop(holder);
}

module_init(rftrace_hold_init);
module_exit(rftrace_hold_exit);
MODULE_DESCRIPTION("Holds up RCU-tasks grace periods (rftrace selftests)");
MODULE_LICENSE("GPL");
