// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The software RDMA device, control half: what it is (device and port
 * attributes, one LID and one GID that agree), and the numbers it hands
 * out (QPNs, memory keys, CQ and SRQ numbers).  The data path lives in
 * providers/sw.
 */
#include "sw_internal.h"
#include "sw.h"

#define IB_PORT_DOWN 1
#define IB_PORT_ACTIVE 4
#define IB_EVENT_CQ_ERR 0
#define IB_EVENT_QP_FATAL 1
#define IB_EVENT_QP_REQ_ERR 2
#define IB_EVENT_QP_ACCESS_ERR 3
#define IB_EVENT_PORT_ACTIVE 9
#define IB_EVENT_PORT_ERR 10
#define IB_EVENT_SRQ_LIMIT_REACHED 15

static int numbers_init(struct sw_numbers *n, u32 first, u32 size)
{
	n->first = first;
	n->size = size;
	n->next = 0;
	n->in_use = 0;
	n->used = kvzalloc(size, GFP_KERNEL);
	return n->used ? 0 : -ENOMEM;
}

static int numbers_get(struct sw_dev *sw, struct sw_numbers *n, u32 *out)
{
	u32 i;
	int ret = -ENOMEM;

	mutex_lock(&sw->lock);
	for (i = 0; i < n->size; i++) {
		u32 idx = (n->next + i) % n->size;

		if (!n->used[idx]) {
			n->used[idx] = 1;
			n->next = idx + 1;
			n->in_use++;
			*out = n->first + idx;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&sw->lock);
	return ret;
}

static void numbers_put(struct sw_dev *sw, struct sw_numbers *n, u32 v)
{
	mutex_lock(&sw->lock);
	if (!WARN_ON(v < n->first || v - n->first >= n->size ||
		     !n->used[v - n->first])) {
		n->used[v - n->first] = 0;
		n->in_use--;
	}
	mutex_unlock(&sw->lock);
}

/* ----------------------------------------------------------- attributes */
static int sw_query_device(struct uabi_device *dev, struct uabi_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->fw_ver = 1ull << 32;
	a->node_guid = UABI_SW_NODE_GUID;
	a->sys_image_guid = UABI_SW_NODE_GUID;
	a->max_mr_size = 1ull << 40;
	a->page_size_cap = 0xfffff000u;
	a->vendor_id = 0;
	a->vendor_part_id = 0;
	a->hw_ver = 1;
	a->max_qp = SW_MAX_QP;
	a->max_qp_wr = 16384;
	a->device_cap_flags = (1u << 10) | (1u << 11) | (1u << 12) |
			      (1u << 13) | (1u << 20);	/* see uabi_sw.h */
	a->max_sge = 32;
	a->max_sge_rd = 32;
	a->max_cq = SW_MAX_CQ;
	a->max_cqe = 65536;
	a->max_mr = SW_MAX_MR;
	a->max_pd = 16384;
	a->max_qp_rd_atom = 128;
	a->max_qp_init_rd_atom = 128;
	a->max_res_rd_atom = 16384;
	a->atomic_cap = 1;	/* IBV_ATOMIC_HCA */
	a->max_mw = 0;
	a->max_ah = 65536;
	a->max_srq = SW_MAX_SRQ;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 32;
	a->max_xrcd = 1024;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	a->max_inline_data = 512;
	return 0;
}

static int sw_query_port(struct uabi_device *dev, u32 port,
			 struct uabi_port_attr *a)
{
	if (port != 1)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = to_sw(dev)->port_state;
	a->max_mtu = 5;		/* IBV_MTU_4096 */
	a->active_mtu = 5;
	a->gid_tbl_len = 1;
	/* IsSM: the port is its subnet's master SM (sm_lid == lid), and its
	 * management agent answers SMInfo (docs/fsview.md). */
	a->port_cap_flags = 1u << 1;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->lid = UABI_SW_PORT_LID;
	a->sm_lid = UABI_SW_PORT_LID;
	a->max_vl_num = 1;
	a->active_width = 2;	/* 4X */
	a->active_speed = 1;
	a->phys_state = a->state == IB_PORT_ACTIVE ? 5 : 3; /* LinkUp/Disabled */
	a->link_layer = 1;	/* IBV_LINK_LAYER_INFINIBAND */
	return 0;
}

/* GID 0 is the link-local GID of the node GUID, so LID and GID agree. */
static int sw_query_gid(struct uabi_device *dev, u32 port, u32 index, u8 gid[16])
{
	u64 guid = UABI_SW_NODE_GUID;
	int i;

	if (port != 1 || index != 0)
		return -EINVAL;
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	for (i = 0; i < 8; i++)
		gid[8 + i] = (u8)(guid >> (56 - 8 * i));
	return 0;
}

static int sw_query_pkey(struct uabi_device *dev, u32 port, u32 index, u16 *pkey)
{
	if (port != 1 || index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

/* ------------------------------------------------------------- numbers */
u32 sw_pd_number(const struct uabi_pd *pd)
{
	return (u32)(uintptr_t)pd->drv;
}

/* XRC domains have no driver hook; number them on first use.  Numbers are
 * never reused (a 32-bit counter), so the domain can go without telling. */
u32 sw_xrcd_number(struct sw_dev *sw, struct uabi_xrcd_shared *x)
{
	u32 n;

	mutex_lock(&sw->lock);
	if (!x->drv) {
		if (!++sw->xrcd_next)
			++sw->xrcd_next;
		x->drv = (void *)(uintptr_t)sw->xrcd_next;
	}
	n = (u32)(uintptr_t)x->drv;
	mutex_unlock(&sw->lock);
	return n;
}

static int sw_alloc_pd(struct uabi_device *dev, struct uabi_pd *pd)
{
	u32 n;
	int ret = numbers_get(to_sw(dev), &to_sw(dev)->pdns, &n);

	if (!ret)
		pd->drv = (void *)(uintptr_t)n;
	return ret;
}

static void sw_dealloc_pd(struct uabi_device *dev, struct uabi_pd *pd)
{
	numbers_put(to_sw(dev), &to_sw(dev)->pdns, sw_pd_number(pd));
}

static int sw_reg_mr(struct uabi_device *dev, struct uabi_mr *mr)
{
	struct sw_dev *sw = to_sw(dev);
	u32 idx;
	u8 gen;
	int ret = numbers_get(sw, &sw->keys, &idx);

	if (ret)
		return ret;
	/* index << 8 | a generation byte, as hardware keys look: a key
	 * used after deregistration misses even when the index is reused. */
	mutex_lock(&sw->lock);
	gen = ++sw->keygen[idx];
	mutex_unlock(&sw->lock);
	mr->lkey = (idx << 8) | gen;
	mr->rkey = mr->lkey;
	sw_arena_mr_publish(sw, mr, idx);
	return 0;
}

static void sw_dereg_mr(struct uabi_device *dev, struct uabi_mr *mr)
{
	struct sw_dev *sw = to_sw(dev);

	sw_arena_mr_clear(sw, mr->lkey >> 8);
	numbers_put(sw, &sw->keys, mr->lkey >> 8);
}

static u32 cq_entries(u32 cqe)
{
	/* Rings are powers of two; one slot stays empty. */
	u32 n = 1;

	while (n < cqe + 1)
		n <<= 1;
	return n;
}

static int sw_create_cq(struct uabi_device *dev, struct uabi_cq *cq)
{
	struct sw_dev *sw = to_sw(dev);
	u32 n = cq_entries(cq->cqe);
	int ret;

	cq->cqe = n - 1;
	ret = numbers_get(sw, &sw->cqns, &cq->cqn);
	if (ret)
		return ret;
	ret = sw_arena_cq_create(sw, cq, n);
	if (ret) {
		numbers_put(sw, &sw->cqns, cq->cqn);
		return ret;
	}
	mutex_lock(&sw->lock);
	sw->cq_table[cq->cqn - 1] = cq;
	mutex_unlock(&sw->lock);
	return 0;
}

static int sw_resize_cq(struct uabi_device *dev, struct uabi_cq *cq, u32 cqe)
{
	u32 n = cq_entries(cqe);
	int ret = sw_arena_cq_resize(to_sw(dev), cq, n);

	if (!ret)
		cq->cqe = n - 1;
	return ret;
}

static void sw_destroy_cq(struct uabi_device *dev, struct uabi_cq *cq)
{
	struct sw_dev *sw = to_sw(dev);

	mutex_lock(&sw->lock);
	sw->cq_table[cq->cqn - 1] = NULL;
	mutex_unlock(&sw->lock);
	sw_arena_cq_destroy(sw, cq);
	numbers_put(sw, &sw->cqns, cq->cqn);
}

static int sw_create_qp(struct uabi_device *dev, struct uabi_qp *qp)
{
	struct sw_dev *sw = to_sw(dev);
	struct uabi_qp_cap *cap = &qp->init.cap;
	int ret;

	if (cap->max_send_wr && cap->max_send_sge == 0)
		cap->max_send_sge = 1;
	ret = numbers_get(sw, &sw->qpns, &qp->qpn);
	if (ret)
		return ret;
	ret = sw_arena_qp_create(sw, qp);
	if (ret) {
		numbers_put(sw, &sw->qpns, qp->qpn);
		return ret;
	}
	mutex_lock(&sw->lock);
	sw->qp_table[qp->qpn - SW_FIRST_QPN] = qp;
	mutex_unlock(&sw->lock);
	return 0;
}

static int sw_modify_qp(struct uabi_device *dev, struct uabi_qp *qp,
			const struct uabi_qp_attr *attr, u32 mask)
{
	return sw_arena_qp_modify(to_sw(dev), qp, attr, mask);
}

static void sw_destroy_qp(struct uabi_device *dev, struct uabi_qp *qp)
{
	struct sw_dev *sw = to_sw(dev);

	mutex_lock(&sw->lock);
	sw->qp_table[qp->qpn - SW_FIRST_QPN] = NULL;
	mutex_unlock(&sw->lock);
	/* Destroyed by the teardown of its context, not by its owner. */
	if (qp->ctx && qp->ctx->closing)
		sw_arena_qp_orphan_peer(sw, qp);
	sw_arena_qp_destroy(sw, qp);
	numbers_put(sw, &sw->qpns, qp->qpn);
}

/* Every SRQ has a slot (its arena descriptor); an XRC SRQ's number is its
 * slot, so that senders naming the srqn find it. */
static int sw_create_srq(struct uabi_device *dev, struct uabi_srq *srq)
{
	struct sw_dev *sw = to_sw(dev);
	u32 slot;
	int ret = numbers_get(sw, &sw->srqns, &slot);

	if (ret)
		return ret;
	ret = sw_arena_srq_create(sw, srq, slot);
	if (ret) {
		numbers_put(sw, &sw->srqns, slot);
		return ret;
	}
	if (srq->srq_type == UABI_SRQT_XRC)
		srq->srqn = slot;
	mutex_lock(&sw->lock);
	sw->srq_table[slot - 1] = srq;
	mutex_unlock(&sw->lock);
	return 0;
}

static int sw_modify_srq(struct uabi_device *dev, struct uabi_srq *srq,
			 const struct uabi_srq_attr *attr, u32 mask)
{
	return sw_arena_srq_modify(to_sw(dev), srq, attr, mask);
}

static u32 srq_slot(const struct uabi_srq *srq)
{
	return ((const struct sw_ring *)srq->drv)->slot;
}

static void sw_destroy_srq(struct uabi_device *dev, struct uabi_srq *srq)
{
	struct sw_dev *sw = to_sw(dev);
	u32 slot = srq_slot(srq);

	mutex_lock(&sw->lock);
	sw->srq_table[slot - 1] = NULL;
	mutex_unlock(&sw->lock);
	sw_arena_srq_destroy(sw, srq, slot);
	numbers_put(sw, &sw->srqns, slot);
}

/* ----------------------------------------------- driver-namespace object */
static int sw_port_set_state(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	u32 port = uabi_attr_get_u32(call, UABI_SW_ATTR_PORT_NUM, 0);
	u32 state = uabi_attr_get_u32(call, UABI_SW_ATTR_PORT_STATE, 0);
	struct uabi_event ev = { .element = port };

	if (port != 1 || (state != IB_PORT_ACTIVE && state != IB_PORT_DOWN))
		return -EINVAL;
	mutex_lock(&sw->lock);
	if (sw->port_state == state) {
		mutex_unlock(&sw->lock);
		return 0;
	}
	sw->port_state = state;
	mutex_unlock(&sw->lock);
	ev.event_type = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE
						: IB_EVENT_PORT_ERR;
	uabi_raise_async_event(call->dev, NULL, &ev);
	return 0;
}

static int sw_port_stats(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	struct uabi_sw_stats st;

	mutex_lock(&sw->lock);
	st.qpns_in_use = sw->qpns.in_use;
	st.mr_keys_in_use = sw->keys.in_use;
	st.cqns_in_use = sw->cqns.in_use;
	st.srqns_in_use = sw->srqns.in_use;
	mutex_unlock(&sw->lock);
	return uabi_attr_put(call, UABI_SW_ATTR_STATS, &st, sizeof(st));
}

static const struct uabi_object_def sw_port_object = {
	.id = UABI_SW_OBJ_PORT,
	.name = "sw_port",
	UABI_METHODS(
		{ .id = UABI_SW_PORT_SET_STATE, .handler = sw_port_set_state,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_PORT_NUM, u32, MAND),
			     UABI_IN(UABI_SW_ATTR_PORT_STATE, u32, MAND)) },
		{ .id = UABI_SW_PORT_STATS, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_port_stats,
		  UABI_ATTRS(UABI_OUT(UABI_SW_ATTR_STATS, struct uabi_sw_stats, MAND)) },
	),
};

/* The arena: what a client needs to map it, and the two services the data
 * path asks of the control half. */
static int sw_arena_map(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	s32 fd = -1;
	int ret;

	if (!sw_has_arena(sw))
		return -EOPNOTSUPP;
	ret = sw->arena.ops->get_fd(sw->arena.shm, call->ctx, &fd);
	if (ret)
		return ret;
	uabi_attr_put(call, UABI_SW_ATTR_ARENA_INFO, &sw->arena.hdr->info,
		      sizeof(sw->arena.hdr->info));
	return uabi_attr_put(call, UABI_SW_ATTR_ARENA_FD, &fd, sizeof(fd));
}

/* Any context may ask: a spurious completion event is allowed by the verbs
 * semantics, a missed one is not. */
static int sw_arena_notify_cq(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	u32 cqn = uabi_attr_get_u32(call, UABI_SW_ATTR_CQN, 0);
	struct uabi_cq *cq;

	if (cqn < 1 || cqn > SW_MAX_CQ)
		return -EINVAL;
	mutex_lock(&sw->lock);
	cq = sw->cq_table[cqn - 1];
	if (cq)
		uabi_cq_comp_event(cq);
	mutex_unlock(&sw->lock);
	return cq ? 0 : -ENOENT;
}

/* The data path found an SRQ below its limit (and disarmed it): raise
 * IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ's owner. */
static int sw_arena_srq_limit(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	u32 slot = uabi_attr_get_u32(call, UABI_SW_ATTR_SRQ_SLOT, 0);
	struct uabi_uobject *uobj;
	struct uabi_event ev = { .event_type = IB_EVENT_SRQ_LIMIT_REACHED };
	struct uabi_context *owner = NULL;
	struct uabi_srq *srq;

	if (slot < 1 || slot > SW_MAX_SRQ)
		return -EINVAL;
	mutex_lock(&sw->lock);
	srq = sw->srq_table[slot - 1];
	if (srq && sw_has_arena(sw) &&
	    READ_ONCE(sw->arena.srqs[slot - 1].limit_event)) {
		WRITE_ONCE(sw->arena.srqs[slot - 1].limit_event, 0u);
		/* the SRQ is the type data of its uobject */
		uobj = (struct uabi_uobject *)((u8 *)srq -
					       offsetof(struct uabi_uobject, data));
		ev.element = uobj->user_handle;
		ev.object_handle = uobj->handle;
		owner = srq->ctx;
	}
	mutex_unlock(&sw->lock);
	/* Not under sw->lock (dev->lock nests outside it).  The owner is
	 * only compared with the device's live contexts, never followed. */
	if (owner)
		uabi_raise_async_event(call->dev, owner, &ev);
	return srq ? 0 : -ENOENT;
}

/* A CQ overran: IBV_EVENT_CQ_ERR for its owner (once per overrun flag). */
static int sw_arena_cq_error(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	u32 cqn = uabi_attr_get_u32(call, UABI_SW_ATTR_CQN, 0);
	struct uabi_event ev = { .event_type = IB_EVENT_CQ_ERR };
	struct uabi_context *owner = NULL;
	struct uabi_cq *cq;

	if (cqn < 1 || cqn > SW_MAX_CQ)
		return -EINVAL;
	mutex_lock(&sw->lock);
	cq = sw->cq_table[cqn - 1];
	if (cq) {
		ev.element = cq->uobj->user_handle;
		ev.object_handle = cq->uobj->handle;
		owner = cq->uobj->ctx;
	}
	mutex_unlock(&sw->lock);
	if (owner)
		uabi_raise_async_event(call->dev, owner, &ev);
	return cq ? 0 : -ENOENT;
}

/*
 * The data path moved a QP to ERR (a peer's request violated a responder's
 * access or was invalid, or a full CQ lost one of the QP's completions)
 * and left the event in the descriptor: raise it once, for the owner (for
 * an XRC receive QP, every registered context), and let the core's state
 * follow.  Only those event types are accepted: the arena is writable by
 * every client.
 */
static int sw_arena_qp_error(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct sw_dev *sw = to_sw(dev);
	u32 qpn = uabi_attr_get_u32(call, UABI_SW_ATTR_QPN, 0);
	struct uabi_qp *qp;
	u32 ev = 0;

	if (qpn < SW_FIRST_QPN || qpn - SW_FIRST_QPN >= SW_MAX_QP)
		return -EINVAL;
	/* dev->lock outside sw->lock; the QP cannot go while sw->lock is
	 * held (destroy clears its table entry under it first). */
	mutex_lock(&dev->lock);
	mutex_lock(&sw->lock);
	qp = sw->qp_table[qpn - SW_FIRST_QPN];
	if (qp && sw_has_arena(sw)) {
		struct uabi_sw_qp *d = &sw->arena.qps[qpn - SW_FIRST_QPN];

		ev = xchg(&d->err_event, 0u);
		if (READ_ONCE(d->state) != UABI_QPS_ERR)
			ev = 0;
	}
	if (ev == IB_EVENT_QP_FATAL || ev == IB_EVENT_QP_REQ_ERR ||
	    ev == IB_EVENT_QP_ACCESS_ERR) {
		struct uabi_uobject *owner = READ_ONCE(qp->owner);

		WRITE_ONCE(qp->state, (u32)UABI_QPS_ERR);
		WRITE_ONCE(qp->attr.qp_state, (u32)UABI_QPS_ERR);
		WRITE_ONCE(qp->attr.cur_qp_state, (u32)UABI_QPS_ERR);
		if (qp->qp_type == UABI_QPT_XRC_RECV || owner)
			uabi_raise_qp_event_locked(dev, qp, owner, ev);
	}
	mutex_unlock(&sw->lock);
	mutex_unlock(&dev->lock);
	return qp ? 0 : -ENOENT;
}

static int sw_arena_locate_srq(struct uabi_call *call)
{
	struct uabi_srq *srq = uobj_data(uabi_attr_uobj(call, UABI_SW_ATTR_SRQ));
	u32 slot = srq_slot(srq);

	return uabi_attr_put(call, UABI_SW_ATTR_SRQ_SLOT, &slot, sizeof(slot));
}

static const struct uabi_object_def sw_arena_object = {
	.id = UABI_SW_OBJ_ARENA,
	.name = "sw_arena",
	UABI_METHODS(
		{ .id = UABI_SW_ARENA_MAP, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_map,
		  UABI_ATTRS(UABI_FD_OUT(UABI_SW_ATTR_ARENA_FD, MAND),
			     UABI_OUT(UABI_SW_ATTR_ARENA_INFO,
				      struct uabi_sw_arena_info, 0)) },
		{ .id = UABI_SW_ARENA_NOTIFY_CQ, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_notify_cq,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_CQN, u32, MAND)) },
		{ .id = UABI_SW_ARENA_SRQ_LIMIT, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_srq_limit,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_SRQ_SLOT, u32, MAND)) },
		{ .id = UABI_SW_ARENA_CQ_ERROR, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_cq_error,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_CQN, u32, MAND)) },
		{ .id = UABI_SW_ARENA_QP_ERROR, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_qp_error,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_QPN, u32, MAND)) },
		{ .id = UABI_SW_ARENA_LOCATE_SRQ, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_locate_srq,
		  UABI_ATTRS(UABI_HANDLE(UABI_SW_ATTR_SRQ, UABI_OBJ_SRQ,
					 UABI_ACCESS_READ, MAND),
			     UABI_OUT(UABI_SW_ATTR_SRQ_SLOT, u32, MAND)) },
	),
};

static const struct uabi_object_def *const sw_objects[] = {
	&sw_port_object, &sw_arena_object,
};

static const struct uabi_device_ops sw_ops = {
	.driver_name = "sw",
	.query_device = sw_query_device,
	.query_port = sw_query_port,
	.query_gid = sw_query_gid,
	.query_pkey = sw_query_pkey,
	.alloc_pd = sw_alloc_pd,
	.dealloc_pd = sw_dealloc_pd,
	.reg_mr = sw_reg_mr,
	.dereg_mr = sw_dereg_mr,
	.create_cq = sw_create_cq,
	.resize_cq = sw_resize_cq,
	.destroy_cq = sw_destroy_cq,
	.create_qp = sw_create_qp,
	.modify_qp = sw_modify_qp,
	.destroy_qp = sw_destroy_qp,
	.create_srq = sw_create_srq,
	.modify_srq = sw_modify_srq,
	.destroy_srq = sw_destroy_srq,
	.objects = sw_objects,
	.num_objects = ARRAY_SIZE(sw_objects),
};

static void sw_free(struct sw_dev *sw)
{
	sw_arena_fini(sw);
	kvfree(sw->qpns.used);
	kvfree(sw->keys.used);
	kvfree(sw->cqns.used);
	kvfree(sw->srqns.used);
	kvfree(sw->pdns.used);
	kvfree(sw->keygen);
	kvfree(sw->cq_table);
	kvfree(sw->srq_table);
	kvfree(sw->qp_table);
	kfree(sw);
}

struct uabi_device *uabi_sw_create_shared(const struct uabi_shm_ops *shm,
					  size_t heap_bytes)
{
	struct sw_dev *sw = kzalloc(sizeof(*sw), GFP_KERNEL);
	int ret;

	if (!sw)
		return ERR_PTR(-ENOMEM);
	mutex_init(&sw->lock);
	sw->port_state = IB_PORT_ACTIVE;
	ret = numbers_init(&sw->qpns, SW_FIRST_QPN, SW_MAX_QP);
	if (!ret)
		ret = numbers_init(&sw->keys, 1, SW_MAX_MR);
	if (!ret)
		ret = numbers_init(&sw->cqns, 1, SW_MAX_CQ);
	if (!ret)
		ret = numbers_init(&sw->srqns, 1, SW_MAX_SRQ);
	if (!ret)
		ret = numbers_init(&sw->pdns, 1, SW_MAX_PD);
	if (ret)
		goto err;
	ret = -ENOMEM;
	sw->keygen = kvzalloc(SW_MAX_MR + 1, GFP_KERNEL);
	sw->cq_table = kvzalloc(sizeof(*sw->cq_table) * SW_MAX_CQ, GFP_KERNEL);
	sw->srq_table = kvzalloc(sizeof(*sw->srq_table) * SW_MAX_SRQ, GFP_KERNEL);
	sw->qp_table = kvzalloc(sizeof(*sw->qp_table) * SW_MAX_QP, GFP_KERNEL);
	if (!sw->keygen || !sw->cq_table || !sw->srq_table || !sw->qp_table)
		goto err;
	ret = sw_arena_init(sw, shm, heap_bytes);
	if (ret)
		goto err;
	strscpy_pad(sw->dev.name, "uabi_sw0", sizeof(sw->dev.name));
	sw->dev.ops = &sw_ops;
	ret = uabi_device_register(&sw->dev);
	if (ret)
		goto err;
	return &sw->dev;
err:
	sw_free(sw);
	return ERR_PTR(ret);
}

struct uabi_device *uabi_sw_create(void)
{
	return uabi_sw_create_shared(NULL, 0);
}

void uabi_sw_destroy(struct uabi_device *dev)
{
	uabi_device_unregister(dev);
	sw_free(to_sw(dev));
}
