/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RFTRACE_MANY_H
#define RFTRACE_MANY_H

/* What every generated function of rftrace_many_gen.h stores into. */
extern unsigned long rftrace_many_sink;

#endif
