// SPDX-License-Identifier: GPL-2.0
/*
 * Patch sites for the Rust core's KUnit tests of the batch direct
 * interface (rust/kside/direct/tests.rs): two traced functions and two
 * targets.
 * Nothing calls any of them: the tests make the sites of the first two
 * call the targets directly, add, retarget and remove them, and look at
 * the registry's state, never at the calls.  Built with the ftrace flags,
 * unlike the rest of the core.
 */

#include <linux/compiler.h>
#include <linux/ftrace.h>
#include <asm/rwonce.h>

#include "../include/rftrace.h"

static unsigned long rftrace_kunit_sink;

noinline void rftrace_kunit_site_a(void)
{
	WRITE_ONCE(rftrace_kunit_sink, READ_ONCE(rftrace_kunit_sink) + 1);
}

noinline void rftrace_kunit_site_b(void)
{
	WRITE_ONCE(rftrace_kunit_sink, READ_ONCE(rftrace_kunit_sink) + 2);
}

notrace noinline void rftrace_kunit_target_1(void)
{
	WRITE_ONCE(rftrace_kunit_sink, 0);
}

notrace noinline void rftrace_kunit_target_2(void)
{
	WRITE_ONCE(rftrace_kunit_sink, 1);
}
