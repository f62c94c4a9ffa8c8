// SPDX-License-Identifier: GPL-2.0
/*
 * getids: the fixed workload of the bpftrace test (scripts/bpftrace-test.sh).
 *
 * Waits for a line on standard input (so that every tool is attached
 * before the first call), then makes getpriority(PRIO_PROCESS, 0) A
 * times, getsid(0) B times and getpgid(0) C times, through syscall(2) so
 * that the C library adds no call of its own, then sched_getscheduler(0)
 * once, on which the bpftrace script exits, and prints "getids A B C".
 * Three system calls with arguments, so that each has a wrapper function
 * of its own (__x64_sys_NAME) to trace, and none that another program of
 * the test guest makes while it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static long count(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || n < 0)
		return -1;
	return n;
}

int main(int argc, char **argv)
{
	long a, b, c, i;
	char line[16];

	if (argc != 4) {
		fprintf(stderr, "usage: getids A B C\n");
		return 2;
	}
	a = count(argv[1]);
	b = count(argv[2]);
	c = count(argv[3]);
	if (a < 0 || b < 0 || c < 0) {
		fprintf(stderr, "getids: counts must be numbers >= 0\n");
		return 2;
	}
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < a; i++)
		syscall(SYS_getpriority, PRIO_PROCESS, 0);
	for (i = 0; i < b; i++)
		syscall(SYS_getsid, 0);
	for (i = 0; i < c; i++)
		syscall(SYS_getpgid, 0);
	/* the end: the bpftrace script exits on this call */
	syscall(SYS_sched_getscheduler, 0);
	printf("getids %ld %ld %ld\n", a, b, c);
	return 0;
}
