// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The software device's own objects (its driver namespace, <rdma/uabi_sw.h>):
 * PORT, the administrator's port state and a user's counts, and ARENA, what
 * a client needs to map its domain's arena and the services the data path
 * asks of the control half (sw_main.c is the device itself).
 */
#include "sw_internal.h"
#include "sw.h"

/*
 * LOCAL_INV and SEND_WITH_INV: the window bound under @rkey, found by its
 * index in the caller's domain, is unbound if the key is its current one,
 * it is in @qp's PD, and (remote) it is a type 2 window bound to @qp.
 * Type 1 windows are unbound by a bind of length 0 only.
 */
static int sw_invalidate(struct sw_domain *dom, struct uabi_qp *qp, u32 rkey, bool remote)
{
	u32 idx = rkey >> 8;
	struct uabi_mw *mw;
	int ret = -EINVAL;

	if (idx < 1 || idx > SW_DOM_KEYS)
		return -EINVAL;
	mw = dom->mw_table[idx];
	if (!mw || !mw->bound_mr || mw->rkey != rkey || mw->type != UABI_MW_TYPE_2 ||
	    mw->pd != qp->pd)
		return ret;
	if (remote && mw->qpn != qp->qpn)
		return ret;
	sw_arena_mr_clear(dom, idx);
	uabi_mw_set_binding(mw, NULL, rkey);
	return 0;
}

/* ----------------------------------------------- driver-namespace object */
static int sw_port_set_state(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	u32 port = uabi_attr_get_u32(call, UABI_SW_ATTR_PORT_NUM, 0);
	u32 state = uabi_attr_get_u32(call, UABI_SW_ATTR_PORT_STATE, 0);
	struct uabi_event ev = { .element = port };

	if (port != 1 || (state != UABI_PORT_ACTIVE && state != UABI_PORT_DOWN))
		return -EINVAL;
	/* Every user's port: the host's administrator only. */
	if (!call->ctx->host->device_admin || !call->ctx->host->device_admin(call->ctx))
		return -EPERM;
	mutex_lock(&sw->lock);
	if (sw->port_state == state) {
		mutex_unlock(&sw->lock);
		return 0;
	}
	sw->port_state = state;
	mutex_unlock(&sw->lock);
	ev.event_type = state == UABI_PORT_ACTIVE ? UABI_EVENT_PORT_ACTIVE
						  : UABI_EVENT_PORT_ERR;
	uabi_raise_async_event(call->dev, NULL, &ev);
	return 0;
}

/* The caller's domain: what it holds (another user's is none of its
 * business). */
static int sw_port_stats(struct uabi_call *call)
{
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	struct uabi_sw_stats st;

	mutex_lock(&dom->lock);
	st.qpns_in_use = dom->qpns.in_use;
	st.mr_keys_in_use = dom->keys.in_use;
	st.cqns_in_use = dom->cqns.in_use;
	st.srqns_in_use = dom->srqns.in_use;
	mutex_unlock(&dom->lock);
	return uabi_attr_put(call, UABI_SW_ATTR_STATS, &st, sizeof(st));
}

const struct uabi_object_def sw_port_object = {
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

/*
 * The arena: what a client needs to map it, and the services the data path
 * asks of the control half.  Every number a call names is looked up in the
 * caller's own domain, so a call can reach only its own user's objects;
 * the control half trusts nothing of the arena's writable part beyond a
 * flag it then acts on for that user alone.
 */
static int sw_arena_map(struct uabi_call *call)
{
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	struct sw_arena *a = &dom->arena;
	s32 ro = -1, rw = -1;
	int ret;

	if (!sw_has_arena(dom))
		return -EOPNOTSUPP;
	ret = a->ops->get_fd(a->ro_shm, call, &ro);
	if (!ret)
		ret = a->ops->get_fd(a->rw_shm, call, &rw);
	if (ret)
		return ret;
	uabi_attr_put(call, UABI_SW_ATTR_ARENA_INFO, &a->info, sizeof(a->info));
	ret = uabi_attr_put(call, UABI_SW_ATTR_ARENA_FD, &ro, sizeof(ro));
	if (!ret)
		ret = uabi_attr_put(call, UABI_SW_ATTR_ARENA_RW_FD, &rw, sizeof(rw));
	return ret;
}

/* A spurious completion event is allowed by the verbs semantics, a missed
 * one is not: any context of the user may ask. */
static int sw_arena_notify_cq(struct uabi_call *call)
{
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	u32 cqn = uabi_attr_get_u32(call, UABI_SW_ATTR_CQN, 0);
	struct uabi_cq *cq;

	mutex_lock(&dom->lock);
	cq = dom->cq_table[cqn - 1];
	if (cq)
		uabi_cq_comp_event(cq);
	mutex_unlock(&dom->lock);
	return cq ? 0 : -ENOENT;
}

/* The data path found an SRQ below its limit (and disarmed it): raise
 * IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ's owner, once per flag. */
static int sw_arena_srq_limit(struct uabi_call *call)
{
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	u32 slot = uabi_attr_get_u32(call, UABI_SW_ATTR_SRQ_SLOT, 0);
	struct uabi_uobject *uobj;
	struct uabi_event ev = { .event_type = UABI_EVENT_SRQ_LIMIT_REACHED };
	struct uabi_context *owner = NULL;
	struct uabi_srq *srq;

	mutex_lock(&dom->lock);
	srq = dom->srq_table[slot - 1];
	if (srq && sw_arena_srq_take_limit_event(dom, slot)) {
		uobj = uabi_uobj_of(srq);
		ev.element = uobj->user_handle;
		ev.object_handle = uobj->handle;
		owner = srq->ctx;
	}
	mutex_unlock(&dom->lock);
	/* Not under dom->lock (dev->lock nests outside it).  The owner is
	 * only compared with the device's live contexts, never followed. */
	if (owner)
		uabi_raise_async_event(call->dev, owner, &ev);
	return srq ? 0 : -ENOENT;
}

/* A CQ overran: IBV_EVENT_CQ_ERR for its owner. */
static int sw_arena_cq_error(struct uabi_call *call)
{
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	u32 cqn = uabi_attr_get_u32(call, UABI_SW_ATTR_CQN, 0);
	struct uabi_event ev = { .event_type = UABI_EVENT_CQ_ERR };
	struct uabi_context *owner = NULL;
	struct uabi_cq *cq;

	mutex_lock(&dom->lock);
	cq = dom->cq_table[cqn - 1];
	if (cq) {
		ev.element = cq->uobj->user_handle;
		ev.object_handle = cq->uobj->handle;
		owner = cq->uobj->ctx;
	}
	mutex_unlock(&dom->lock);
	if (owner)
		uabi_raise_async_event(call->dev, owner, &ev);
	return cq ? 0 : -ENOENT;
}

/*
 * The data path moved a QP to ERR (a peer's request violated a responder's
 * access or was invalid, or a full CQ lost one of the QP's completions)
 * and left the event in the writable descriptor: raise it once, for the
 * owner (for an XRC receive QP, every registered context), and let the
 * core's state follow.  Only those event types are accepted.
 */
static int sw_arena_qp_error(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	u32 qpn = uabi_attr_get_u32(call, UABI_SW_ATTR_QPN, 0);
	struct uabi_qp *qp;
	u32 ev = 0;

	if (qpn < sw_qp_first(dom) || qpn - sw_qp_first(dom) >= SW_DOM_QP)
		return -EINVAL;
	/* dev->lock outside dom->lock; the QP cannot go while dom->lock is
	 * held (destroy clears its table entry under it first). */
	mutex_lock(&dev->lock);
	mutex_lock(&dom->lock);
	qp = dom->qp_table[qpn - sw_qp_first(dom)];
	if (qp)
		ev = sw_arena_qp_take_error(dom, qp);
	if (ev == UABI_EVENT_QP_FATAL || ev == UABI_EVENT_QP_REQ_ERR ||
	    ev == UABI_EVENT_QP_ACCESS_ERR) {
		struct uabi_uobject *owner = READ_ONCE(qp->owner);

		WRITE_ONCE(qp->state, (u32)UABI_QPS_ERR);
		WRITE_ONCE(qp->attr.qp_state, (u32)UABI_QPS_ERR);
		WRITE_ONCE(qp->attr.cur_qp_state, (u32)UABI_QPS_ERR);
		if (qp->qp_type == UABI_QPT_XRC_RECV || owner)
			uabi_raise_qp_event_locked(dev, qp, owner, ev);
	}
	mutex_unlock(&dom->lock);
	mutex_unlock(&dev->lock);
	return qp ? 0 : -ENOENT;
}

/* A LOCAL_INV work request of QP UABI_SW_ATTR_QPN, or a SEND_WITH_INV
 * that it received (UABI_SW_INV_REMOTE): both QPs are the caller's user's. */
static int sw_arena_invalidate(struct uabi_call *call)
{
	struct sw_domain *dom = sw_dom_of_ctx(call->ctx);
	u32 qpn = uabi_attr_get_u32(call, UABI_SW_ATTR_QPN, 0);
	u32 rkey = uabi_attr_get_u32(call, UABI_SW_ATTR_RKEY, 0);
	u32 flags = uabi_attr_get_u32(call, UABI_SW_ATTR_INV_FLAGS, 0);
	struct uabi_qp *qp;
	int ret = -ENOENT;

	if (flags & ~UABI_SW_INV_REMOTE)
		return -EINVAL;
	if (qpn < sw_qp_first(dom) || qpn - sw_qp_first(dom) >= SW_DOM_QP)
		return -EINVAL;
	mutex_lock(&dom->lock);
	qp = dom->qp_table[qpn - sw_qp_first(dom)];
	if (qp)
		ret = sw_invalidate(dom, qp, rkey, flags & UABI_SW_INV_REMOTE);
	mutex_unlock(&dom->lock);
	return ret;
}

static int sw_arena_locate_srq(struct uabi_call *call)
{
	struct uabi_srq *srq = uobj_data(uabi_attr_uobj(call, UABI_SW_ATTR_SRQ));
	u32 slot = sw_srq_slot(srq);

	return uabi_attr_put(call, UABI_SW_ATTR_SRQ_SLOT, &slot, sizeof(slot));
}

const struct uabi_object_def sw_arena_object = {
	.id = UABI_SW_OBJ_ARENA,
	.name = "sw_arena",
	UABI_METHODS(
		{ .id = UABI_SW_ARENA_MAP, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_map,
		  UABI_ATTRS(UABI_FD_OUT(UABI_SW_ATTR_ARENA_FD, MAND),
			     UABI_FD_OUT(UABI_SW_ATTR_ARENA_RW_FD, MAND),
			     UABI_OUT(UABI_SW_ATTR_ARENA_INFO,
				      struct uabi_sw_arena_info, 0)) },
		{ .id = UABI_SW_ARENA_NOTIFY_CQ, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_notify_cq,
		  UABI_ATTRS(UABI_IN_ENUM(UABI_SW_ATTR_CQN, 1, SW_DOM_CQ, MAND)) },
		{ .id = UABI_SW_ARENA_SRQ_LIMIT, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_srq_limit,
		  UABI_ATTRS(UABI_IN_ENUM(UABI_SW_ATTR_SRQ_SLOT, 1, SW_DOM_SRQ, MAND)) },
		{ .id = UABI_SW_ARENA_CQ_ERROR, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_cq_error,
		  UABI_ATTRS(UABI_IN_ENUM(UABI_SW_ATTR_CQN, 1, SW_DOM_CQ, MAND)) },
		{ .id = UABI_SW_ARENA_QP_ERROR, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_qp_error,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_QPN, u32, MAND)) },
		{ .id = UABI_SW_ARENA_INVALIDATE, .handler = sw_arena_invalidate,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_QPN, u32, MAND),
			     UABI_IN(UABI_SW_ATTR_RKEY, u32, MAND),
			     UABI_IN(UABI_SW_ATTR_INV_FLAGS, u32, 0)) },
		{ .id = UABI_SW_ARENA_LOCATE_SRQ, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_arena_locate_srq,
		  UABI_ATTRS(UABI_HANDLE(UABI_SW_ATTR_SRQ, UABI_OBJ_SRQ,
					 UABI_ACCESS_READ, MAND),
			     UABI_OUT(UABI_SW_ATTR_SRQ_SLOT, u32, MAND)) },
	),
};
