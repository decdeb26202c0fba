/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
#ifndef UABI_SW_H
#define UABI_SW_H

#include <uabi/core.h>

/*
 * Creates and registers the software device; ERR_PTR on failure.
 * uabi_sw_create() gives a device without a data path (no arena);
 * uabi_sw_create_shared() gives each user an arena of its own, with
 * @heap_bytes of rings, in memory from @shm (docs/datapath.md).
 */
struct uabi_device *uabi_sw_create(void);
struct uabi_device *uabi_sw_create_shared(const struct uabi_shm_ops *shm,
					  size_t heap_bytes);
void uabi_sw_destroy(struct uabi_device *dev);

/* Heap sizes per user the hosts use: sparse memfd in userspace, real
 * pages (charged to the user's memory cgroup) in the kernel. */
#define UABI_SW_HEAP_USER (256ul << 20)
#define UABI_SW_HEAP_KERNEL (16ul << 20)

#endif
