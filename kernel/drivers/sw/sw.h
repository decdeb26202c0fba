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
/*
 * The first slot the software devices try for a user's domain (its QPNs:
 * docs/datapath.md), every device created from then on.  0 (the default:
 * uabid, the module) gives the first user QPNs from 0x100.  The
 * in-process host, whose process is the device's only user, starts at a
 * slot of its own, so that two processes' devices, which are apart,
 * rarely share QPNs and a QP given another process's QP number finds
 * nothing (as a fabric would) rather than a QP of its own process.
 */
void uabi_sw_set_domain_start(u32 slot);

/*
 * A RoCE device: the same device bound to a network interface (docs/wire.md,
 * "The device"): link layer Ethernet, the GID table of the interface's
 * addresses (RoCE v2, IPv4-mapped for IPv4), port state from its carrier,
 * active MTU from its MTU.  The host reads the interface and keeps the
 * link current with uabi_sw_link_update().
 */
#define UABI_SW_LINK_GIDS 16

struct uabi_sw_link {
	char netdev[16];		/* interface name */
	u32 ip_mtu;
	u32 carrier;			/* 1: up */
	u32 num_gids;
	u8 mac[6];
	u8 gids[UABI_SW_LINK_GIDS][16];
};

struct uabi_device *uabi_sw_create_roce(const struct uabi_shm_ops *shm, size_t heap_bytes,
					const char *name, const struct uabi_sw_link *link);
void uabi_sw_link_update(struct uabi_device *dev, const struct uabi_sw_link *link);
/* 0 and the link, or -ENODEV for a device that is not a RoCE one. */
int uabi_sw_link_get(struct uabi_device *dev, struct uabi_sw_link *link);

/* Heap sizes per user the hosts use: sparse memfd in userspace, real
 * pages (charged to the user's memory cgroup) in the kernel. */
#define UABI_SW_HEAP_USER (256ul << 20)
#define UABI_SW_HEAP_KERNEL (16ul << 20)

#endif
