/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Private to kernel/drivers/sw: the device, its users' domains and their
 * arenas (docs/datapath.md, docs/security.md).
 *
 * Every user (uid) of the device gets a domain: its own numbers (QPNs from
 * a range of its own, CQ numbers, SRQ slots, memory keys, PD numbers), its
 * own tables and its own arena.  Objects are reachable only within their
 * domain, so nothing one user does can name, map or reach another user's
 * objects.  Within a domain, processes of one user trust each other as
 * they may ptrace each other; the control half trusts no client at all.
 *
 * Locking, outermost first: dev->lock (the core's), sw->lock (domain
 * index allocation, port state, XRC domain numbers), dom->lock (a
 * domain's numbers, heap and tables).
 */
#ifndef UABI_SW_INTERNAL_H
#define UABI_SW_INTERNAL_H

#include <uabi/core.h>
#include <rdma/uabi_sw.h>
#include "sw.h"

/* What one user may hold (the device's max_* report these). */
#define SW_DOM_QP 4096
#define SW_DOM_CQ 4096
#define SW_DOM_SRQ 4096
#define SW_MAX_INLINE 512		/* bytes a send WQE carries inline */
#define SW_DOM_MR 16384
#define SW_DOM_MW 4096
#define SW_DOM_KEYS (SW_DOM_MR + SW_DOM_MW)	/* MRs and windows share keys */
#define SW_DOM_PD 16384
#define SW_DOM_MCG 256		/* multicast groups; UABI_SW_MCG_QPS QPs each */
/* QPNs: domain d has [SW_FIRST_QPN + d * SW_DOM_QP, + SW_DOM_QP); QP0,
 * QP1 and a few more stay reserved below. */
#define SW_FIRST_QPN 0x100
#define SW_MAX_DOMAINS 1024
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
 * QP, CQ or SRQ): the only copy of a ring's place and size it trusts. */
struct sw_ring {
	u64 off;			/* writable part */
	u64 bytes;
	u32 entries;			/* slots (a power of two) */
	u32 stride;			/* bytes per slot */
	u32 slot;			/* SRQ: arena slot */
	u64 small_off;			/* CQ: its small-message ring */
	u64 small_bytes;
	/* Not written since they were handed out (zeroed): freed without
	 * zeroing.  Only a CQ's rings, whose producers say what they wrote
	 * (uabi_sw_cq_rw.written), are ever known to be. */
	bool clean, small_clean;
	struct sw_domain *dom;
};

/* A domain's arena: the read-only part (descriptors, MR table) and the
 * writable part (the data path's halves of the descriptors, the rings).
 * @info is the control half's own copy of the layout; the heap's
 * allocation map is here too, out of the clients' reach. */
struct sw_arena {
	const struct uabi_shm_ops *ops;
	void *ro_shm, *rw_shm;		/* host objects, NULL: no arena */
	u8 *ro, *rw;
	struct uabi_sw_arena_info info;
	struct uabi_sw_qp *qps;
	struct uabi_sw_qp_rw *qpws;
	struct uabi_sw_cq *cqs;
	struct uabi_sw_cq_rw *cqws;
	struct uabi_sw_srq *srqs;
	struct uabi_sw_srq_rw *srqws;
	struct uabi_sw_mr *mrs;
	struct uabi_sw_mcg *mcgs;
	u8 *heap_used;			/* one byte per granule */
	u32 heap_granules;
	u32 heap_hint;			/* no free granule below it */
	/* Freed rings rest here (oldest first) before they can be handed
	 * out again; the heap is otherwise first-fit, so that the rings in
	 * use stay in few, recently touched pages.  A run leaving the rest
	 * is zeroed (a long one discarded: its memory back to the system),
	 * so free granules always read zero. */
	struct sw_heap_run {
		u32 first, n;
		bool clean;		/* still zero: nothing to zero */
	} rest[SW_HEAP_REST];
	u32 rest_head, rest_count;
};

struct sw_dev;

struct sw_domain {
	struct sw_dev *sw;
	u32 index;
	u32 uid;
	struct mutex lock;		/* numbers, heap, tables */
	struct sw_numbers qpns, keys, cqns, srqns, pdns;
	u8 *keygen;			/* generation byte of each key index */
	struct uabi_cq **cq_table;	/* cqn - 1 -> CQ */
	struct uabi_srq **srq_table;	/* slot - 1 -> SRQ */
	struct uabi_qp **qp_table;	/* qpn - first -> QP */
	struct uabi_mw **mw_table;	/* key index -> window */
	struct uabi_sw_mcg *mcgs;	/* [SW_DOM_MCG], the groups (num_qp 0: free) */
	struct sw_arena arena;
};

/*
 * The port counters of a user whose arena went with its last context,
 * put into its next arena (docs/fsview.md, "Port counters"), so that a
 * user's count spans its programs as a port's does.  The newest
 * SW_SAVED_COUNTERS users are kept.  The control half copies these bytes
 * from one arena of the user to the next and never reads them.
 */
#define SW_SAVED_COUNTERS 64

struct sw_saved_counters {
	u32 uid;
	u32 used;
	u64 stamp;			/* newer is larger */
	struct uabi_sw_port_counters c;
};

struct sw_dev {
	struct uabi_device dev;
	struct mutex lock;		/* domains[], port_state, xrcd_next, saved[] */
	u32 port_state;
	u32 xrcd_next;
	const struct uabi_shm_ops *shm;	/* NULL: no data path */
	size_t heap_bytes;
	struct sw_domain *domains[SW_MAX_DOMAINS];
	struct sw_saved_counters saved[SW_SAVED_COUNTERS];
	u64 saved_stamp;
	bool roce;			/* bound to a network interface */
	struct uabi_sw_link link;	/* under lock */
};

static inline struct sw_dev *to_sw(struct uabi_device *dev)
{
	return container_of(dev, struct sw_dev, dev);
}

static inline bool sw_has_arena(const struct sw_domain *dom)
{
	return dom->arena.ro_shm != NULL;
}

static inline struct sw_domain *sw_dom_of_user(struct uabi_user *user)
{
	return user->drv;
}

static inline struct sw_domain *sw_dom_of_ctx(struct uabi_context *ctx)
{
	return ctx->user->drv;
}

static inline u32 sw_qp_first(const struct sw_domain *dom)
{
	return SW_FIRST_QPN + dom->index * SW_DOM_QP;
}

#define SW_PAGE 4096ull

static inline u64 sw_page_align(u64 x)
{
	return (x + SW_PAGE - 1) & ~(SW_PAGE - 1);
}

/* sw_heap.c: the arena's heap and the rings cut from it (take dom->lock
 * themselves). */
u64 sw_heap_alloc(struct sw_domain *dom, u64 bytes);
void sw_heap_free(struct sw_domain *dom, u64 off, u64 bytes, bool clean);
struct sw_ring *sw_ring_new(struct sw_domain *dom, u32 entries, u32 stride);
void sw_ring_free(struct sw_ring *r);
/* Moves the live entries [cons, prod) of @from to @to; -EINVAL unless they
 * describe at most what either ring holds. */
int sw_ring_move(struct sw_domain *dom, const struct sw_ring *from,
		 const struct sw_ring *to, u64 cons, u64 prod);

/* sw_arena.c; callers hold no lock unless said. */
int sw_arena_init(struct sw_domain *dom, const struct uabi_shm_ops *ops,
		  size_t heap_bytes);
void sw_arena_fini(struct sw_domain *dom);
/* The port counters of the arena's writable part, copied out and back in
 * as opaque bytes (struct sw_saved_counters). */
void sw_arena_counters_save(struct sw_domain *dom, struct uabi_sw_port_counters *to);
void sw_arena_counters_restore(struct sw_domain *dom, const struct uabi_sw_port_counters *from);
void sw_arena_mr_publish(struct sw_domain *dom, const struct uabi_mr *mr, u32 idx);
void sw_arena_mr_clear(struct sw_domain *dom, u32 idx);
/* Copies the domain's group @i (dom->mcgs[i]) into the arena. */
void sw_arena_mcg_publish(struct sw_domain *dom, u32 i);
/* A bound window's entry: @mr's memory [bind->addr, + length). */
void sw_arena_mw_publish(struct sw_domain *dom, const struct uabi_mw *mw, const struct uabi_mr *mr,
			 const struct uabi_mw_bind *bind, u32 rkey, u32 qpn);
int sw_arena_qp_create(struct sw_domain *dom, struct uabi_qp *qp);
int sw_arena_qp_modify(struct sw_domain *dom, struct uabi_qp *qp,
		       const struct uabi_qp_attr *attr, u32 mask);
void sw_arena_qp_destroy(struct sw_domain *dom, struct uabi_qp *qp);
void sw_arena_qp_orphan_peer(struct sw_domain *dom, struct uabi_qp *qp);
int sw_arena_cq_create(struct sw_domain *dom, struct uabi_cq *cq, u32 entries);
int sw_arena_cq_resize(struct sw_domain *dom, struct uabi_cq *cq, u32 entries);
void sw_arena_cq_destroy(struct sw_domain *dom, struct uabi_cq *cq);
int sw_arena_srq_create(struct sw_domain *dom, struct uabi_srq *srq, u32 slot);
int sw_arena_srq_modify(struct sw_domain *dom, struct uabi_srq *srq,
			const struct uabi_srq_attr *attr, u32 mask);
void sw_arena_srq_destroy(struct sw_domain *dom, struct uabi_srq *srq, u32 slot);
/* The limit event the data path flagged: clears and returns the flag. */
bool sw_arena_srq_take_limit_event(struct sw_domain *dom, u32 slot);
/* The event the data path left for QP_ERROR, if the QP is in ERR there:
 * one of @allowed, else 0. */
u32 sw_arena_qp_take_error(struct sw_domain *dom, const struct uabi_qp *qp);
u32 sw_xrcd_number(struct sw_dev *sw, struct uabi_xrcd_shared *x);
u32 sw_pd_number(const struct uabi_pd *pd);

/* An SRQ's slot in the arena. */
static inline u32 sw_srq_slot(const struct uabi_srq *srq)
{
	return ((const struct sw_ring *)srq->drv)->slot;
}

/* sw_calls.c: the driver's own objects. */
extern const struct uabi_object_def sw_port_object;
extern const struct uabi_object_def sw_arena_object;

#endif
