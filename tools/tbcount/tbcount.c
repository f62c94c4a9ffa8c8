// SPDX-License-Identifier: GPL-2.0
/*
 * tbcount: a QEMU TCG plugin that counts the guest instructions executed
 * in each translation block of kernel text, over the whole run and inside
 * windows: a window opens when the block at arm=ADDR runs (a function's
 * entry) and closes when the block at disarm=ADDR runs. Windows alternate
 * between two slots (the 1st, 3rd, ... window in slot 0, the others in
 * slot 1), so that a loop of "off" and "on" steps is split in two.
 *
 * Output (out=FILE, at exit), one line per block that ran:
 *   <start address, hex> <instructions> <runs> <runs in slot 0> <runs in slot 1>
 *
 * Only the plugin entry points QEMU has exported since API version 2 are
 * used (qemu-plugin-api.h); QEMU's own header is not needed to build it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-api.h"

#define EXPORT __attribute__((visibility("default")))

/* The oldest API version with everything used here. */
EXPORT int qemu_plugin_version = 2;

/* QEMU_PLUGIN_CB_NO_REGS */
#define CB_NO_REGS 0

struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t runs;
	uint64_t slot[2];
	struct block *next;
};

static struct block *blocks;
static const char *out = "tbcount.out";
/* Kernel text only (LA57 and 4-level layouts alike). */
static uint64_t min_addr = 0xff00000000000000ull;
static uint64_t arm_at, disarm_at, windows;
static bool open_window;

/* Single-threaded TCG: the callbacks never run concurrently. */
static void on_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	if (arm_at && b->vaddr == arm_at) {
		open_window = true;
		windows++;
	} else if (b->vaddr == disarm_at) {
		open_window = false;
	}
	b->runs++;
	if (open_window)
		b->slot[(windows - 1) & 1]++;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	if (va < min_addr)
		return;
	b = calloc(1, sizeof(*b));
	if (!b)
		return;
	b->vaddr = va;
	b->insns = qemu_plugin_tb_n_insns(tb);
	b->next = blocks;
	blocks = b;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, CB_NO_REGS, b);
}

static void on_exit_cb(qemu_plugin_id_t id, void *udata)
{
	FILE *f = fopen(out, "w");
	struct block *b;

	if (!f) {
		perror(out);
		return;
	}
	for (b = blocks; b; b = b->next)
		if (b->runs)
			fprintf(f, "%llx %llu %llu %llu %llu\n",
				(unsigned long long)b->vaddr,
				(unsigned long long)b->insns,
				(unsigned long long)b->runs,
				(unsigned long long)b->slot[0],
				(unsigned long long)b->slot[1]);
	fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info,
			       int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			out = strdup(argv[i] + 4);
		else if (!strncmp(argv[i], "arm=", 4))
			arm_at = strtoull(argv[i] + 4, NULL, 16);
		else if (!strncmp(argv[i], "disarm=", 7))
			disarm_at = strtoull(argv[i] + 7, NULL, 16);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
