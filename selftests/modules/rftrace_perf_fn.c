// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: a perf function event whose close the test controls.
 *
 * Loading it opens a kernel perf counter on the ftrace:function event
 * (event id in the "id" parameter, read from tracefs' events/ftrace/
 * function/id) on CPU 0 and narrows the event's ftrace_ops to one
 * function ("func").  The ops is embedded in the allocated perf event, so
 * it is dynamic: closing the event waits for the RCU-tasks grace periods.
 * Unloading the module closes it (perf_event_release_kernel() ->
 * perf_trace_destroy()), so a test knows when the close starts, which the
 * perf tool's exit does not tell it.
 *
 * Built out of tree for every kernel variant, stock included, and used by
 * selftests/rftrace/registry-slow-gp-perf.tc.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/string.h>

static unsigned int id;
module_param(id, uint, 0444);
MODULE_PARM_DESC(id, "event id of ftrace:function");

static char func[KSYM_NAME_LEN] = "vfs_read";
module_param_string(func, func, sizeof(func), 0444);
MODULE_PARM_DESC(func, "the one function the event traces");

static struct perf_event *event;

static int __init rftrace_perf_fn_init(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = id,
	};
	int ret;

	if (!id) {
		pr_err("no event id given (id=)\n");
		return -EINVAL;
	}
	event = perf_event_create_kernel_counter(&attr, 0, NULL, NULL, NULL);
	if (IS_ERR(event)) {
		ret = PTR_ERR(event);
		pr_err("perf_event_create_kernel_counter: %d\n", ret);
		return ret;
	}
	ret = ftrace_set_filter(&event->ftrace_ops, func, strlen(func), 1);
	if (ret) {
		pr_err("ftrace_set_filter(%s): %d\n", func, ret);
		perf_event_release_kernel(event);
		return ret;
	}
	pr_info("counting calls of %s on CPU 0\n", func);
	return 0;
}

static void __exit rftrace_perf_fn_exit(void)
{
	perf_event_release_kernel(event);
	pr_info("event closed\n");
}

module_init(rftrace_perf_fn_init);
module_exit(rftrace_perf_fn_exit);
MODULE_DESCRIPTION("rftrace test: a perf function event closed at unload");
MODULE_LICENSE("GPL");
