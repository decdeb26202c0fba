/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Driver namespace of the software RDMA device "sw" (kernel/drivers/sw).
 * Object and attribute ids carry UABI_DRIVER_NS.
 */
#ifndef RDMA_UABI_SW_H
#define RDMA_UABI_SW_H

#include <rdma/uabi.h>

enum {
	/* Port control: methods without a handle. */
	UABI_SW_OBJ_PORT = UABI_DRIVER_NS | 1,
};

enum {
	/* CALL: set a port's state; raises IBV_EVENT_PORT_ACTIVE or
	 * IBV_EVENT_PORT_ERR on every context's async event queue. */
	UABI_SW_PORT_SET_STATE = UABI_METHOD_CALL,
	/* QUERY: allocator statistics of the device. */
	UABI_SW_PORT_STATS = UABI_METHOD_QUERY,
};

enum {
	UABI_SW_ATTR_PORT_NUM = UABI_DRIVER_NS | 1,	/* in __u32 */
	UABI_SW_ATTR_PORT_STATE,			/* in __u32: IBV_PORT_ACTIVE (4) or IBV_PORT_DOWN (1) */
	UABI_SW_ATTR_STATS,				/* out struct uabi_sw_stats */
};

struct uabi_sw_stats {
	__u32 qpns_in_use;
	__u32 mr_keys_in_use;
	__u32 cqns_in_use;
	__u32 srqns_in_use;
};

/* Identity of the software device, as reported by QUERY. */
#define UABI_SW_NODE_GUID 0x0275616269000001ull	/* 02:"uabi":00:00:01 */
#define UABI_SW_PORT_LID 1

#endif /* RDMA_UABI_SW_H */
