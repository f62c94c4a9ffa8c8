// SPDX-License-Identifier: GPL-2.0
/*
 * Test module: 40,000 traceable functions that nothing calls.
 *
 * Loaded and left untraced, it grows the record table from the test
 * kernel's ~22,000 records to ~62,000, so that the benchmarks of one
 * function's tracer (scripts/profile.sh --module rftrace_many) show how
 * an attach grows with the number of records: in 7.2 every attach walks
 * every record.  The functions (rftrace_many_0 ... rftrace_many_39999)
 * are written by its Makefile into rftrace_many_gen.h: each one a call
 * site of its own, not inlined, not static, and with a body the compiler
 * cannot fold into another's.
 */

#include <linux/compiler.h>
#include <linux/module.h>

#include "rftrace_many.h"

unsigned long rftrace_many_sink;

#include "rftrace_many_gen.h"

MODULE_DESCRIPTION("40,000 traceable functions that nothing calls");
MODULE_LICENSE("GPL");
