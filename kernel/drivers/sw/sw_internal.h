/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Private to kernel/drivers/sw: the device and its arena. */
#ifndef UABI_SW_INTERNAL_H
#define UABI_SW_INTERNAL_H

#include <uabi/core.h>
#include <rdma/uabi_sw.h>

#define SW_MAX_QP 16384
#define SW_MAX_MR 65536
#define SW_MAX_CQ 16384
#define SW_MAX_SRQ 16384
#define SW_MAX_PD 16384
#define SW_FIRST_QPN 0x11	/* QP0/QP1 and a few more stay reserved */
#define SW_HEAP_REST 256	/* freed rings that rest before reuse */

/* A number allocator that hands numbers out round-robin, so that a number
 * just freed is not reused at once (stale peers then miss cleanly). */
struct sw_numbers {
	u32 first;
	u32 size;
	u32 next;
	u32 in_use;
	u8 *used;
};

/* What the control half remembers of a ring it handed out (the drv of a
 * QP, CQ or SRQ). */
struct sw_ring {
	u64 off;
	u64 bytes;
	u32 slot;			/* SRQ: arena slot */
	u64 small_off;			/* CQ: its small-message ring */
	u64 small_bytes;
};

/* The device arena (docs/datapath.md): the layout lives in its header;
 * the heap's allocation map stays here, out of the clients' reach. */
struct sw_arena {
	const struct uabi_shm_ops *ops;
	void *shm;			/* host object, NULL: no arena */
	u8 *base;
	u64 size;
	struct uabi_sw_arena_hdr *hdr;
	struct uabi_sw_qp *qps;
	struct uabi_sw_cq *cqs;
	struct uabi_sw_srq *srqs;
	struct uabi_sw_mr *mrs;
	u8 *heap_used;			/* one byte per granule */
	u32 heap_granules;
	u32 heap_hint;			/* no free granule below it */
	/* Freed rings rest here (oldest first) before they can be handed
	 * out again; the heap is otherwise first-fit, so that the rings in
	 * use stay in few, recently touched pages. */
	struct sw_heap_run {
		u32 first, n;
	} rest[SW_HEAP_REST];
	u32 rest_head, rest_count;
};

struct sw_dev {
	struct uabi_device dev;
	struct mutex lock;		/* numbers, heap, cq_table */
	struct sw_numbers qpns, keys, cqns, srqns, pdns;
	u32 port_state;
	u32 xrcd_next;
	u8 *keygen;			/* generation byte of each key index */
	struct uabi_cq **cq_table;	/* cqn - 1 -> CQ, for NOTIFY_CQ */
	struct uabi_srq **srq_table;	/* slot - 1 -> SRQ, for its limit event */
	struct uabi_qp **qp_table;	/* qpn - SW_FIRST_QPN -> QP, for QP_ERROR */
	struct sw_arena arena;
};

static inline struct sw_dev *to_sw(struct uabi_device *dev)
{
	return container_of(dev, struct sw_dev, dev);
}

static inline bool sw_has_arena(const struct sw_dev *sw)
{
	return sw->arena.shm != NULL;
}

/* sw_arena.c; callers hold no lock unless said. */
int sw_arena_init(struct sw_dev *sw, const struct uabi_shm_ops *ops,
		  size_t heap_bytes);
void sw_arena_fini(struct sw_dev *sw);
void sw_arena_mr_publish(struct sw_dev *sw, const struct uabi_mr *mr, u32 idx);
void sw_arena_mr_clear(struct sw_dev *sw, u32 idx);
int sw_arena_qp_create(struct sw_dev *sw, struct uabi_qp *qp);
int sw_arena_qp_modify(struct sw_dev *sw, struct uabi_qp *qp,
		       const struct uabi_qp_attr *attr, u32 mask);
void sw_arena_qp_destroy(struct sw_dev *sw, struct uabi_qp *qp);
void sw_arena_qp_orphan_peer(struct sw_dev *sw, struct uabi_qp *qp);
int sw_arena_cq_create(struct sw_dev *sw, struct uabi_cq *cq, u32 entries);
int sw_arena_cq_resize(struct sw_dev *sw, struct uabi_cq *cq, u32 entries);
void sw_arena_cq_destroy(struct sw_dev *sw, struct uabi_cq *cq);
int sw_arena_srq_create(struct sw_dev *sw, struct uabi_srq *srq, u32 slot);
int sw_arena_srq_modify(struct sw_dev *sw, struct uabi_srq *srq,
			const struct uabi_srq_attr *attr, u32 mask);
void sw_arena_srq_destroy(struct sw_dev *sw, struct uabi_srq *srq, u32 slot);
u32 sw_xrcd_number(struct sw_dev *sw, struct uabi_xrcd_shared *x);
u32 sw_pd_number(const struct uabi_pd *pd);

#endif
