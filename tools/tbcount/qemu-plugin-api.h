/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few entry points of QEMU's TCG plugin API (version 2 and later)
 * that tbcount uses, declared from QEMU's documented interface, so that
 * the plugin builds without QEMU's development files.
 */
#ifndef TBCOUNT_QEMU_PLUGIN_API_H
#define TBCOUNT_QEMU_PLUGIN_API_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_info_t;
struct qemu_plugin_tb;

typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb_t cb,
					  int flags, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *udata);

#endif /* TBCOUNT_QEMU_PLUGIN_API_H */
