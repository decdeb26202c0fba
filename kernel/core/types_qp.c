// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Queue pairs.  A QP uobject holds a struct uabi_qp_handle; for ordinary
 * QPs the handle owns the QP, for XRC receive QPs the handle is one
 * registration on a QP that belongs to its XRC domain (types_xrcd.c).
 */
#include <uabi/core.h>

static bool qp_shared(const struct uabi_qp *qp)
{
	return qp->qp_type == UABI_QPT_XRC_RECV;
}

static int check_cap(struct uabi_device *dev, const struct uabi_qp_init *init,
		     bool has_srq)
{
	const struct uabi_qp_cap *c = &init->cap;
	const struct uabi_device_attr *d = &dev->attr;

	if (init->reserved || c->reserved)
		return -EINVAL;
	if (init->create_flags & ~UABI_QP_CREATE_BLOCK_SELF_MCAST_LB)
		return -EINVAL;
	/* Loopback of multicast: only UD QPs send multicast. */
	if (init->create_flags && init->qp_type != UABI_QPT_UD)
		return -EINVAL;
	if (c->max_send_wr > d->max_qp_wr || c->max_send_sge > d->max_sge ||
	    c->max_inline_data > d->max_inline_data)
		return -EINVAL;
	if (!has_srq && (c->max_recv_wr > d->max_qp_wr ||
			 c->max_recv_sge > d->max_sge))
		return -EINVAL;
	return 0;
}

static void fill_resp(struct uabi_call *call, const struct uabi_qp *qp)
{
	struct uabi_qp_resp resp = {
		.qpn = qp->qpn,
		.state = qp->state,
		.cap = qp->init.cap,
	};

	uabi_attr_put(call, UABI_ATTR_QP_RESP, &resp, sizeof(resp));
}

/* Optional create-with-attributes: QP_ATTR and QP_ATTR_MASK together. */
static int get_walk_attrs(struct uabi_call *call, struct uabi_qp_attr *attr,
			  u32 *mask)
{
	bool has_attr = uabi_attr_present(call, UABI_ATTR_QP_ATTR);
	bool has_mask = uabi_attr_present(call, UABI_ATTR_QP_ATTR_MASK);

	if (has_attr != has_mask)
		return -EINVAL;
	*mask = uabi_attr_get_u32(call, UABI_ATTR_QP_ATTR_MASK, 0);
	if (has_attr)
		uabi_attr_get(call, UABI_ATTR_QP_ATTR, attr, sizeof(*attr));
	return 0;
}

static int add_deps(struct uabi_uobject *uobj, struct uabi_call *call)
{
	static const u16 ids[] = { UABI_ATTR_QP_PD, UABI_ATTR_QP_SEND_CQ,
				   UABI_ATTR_QP_RECV_CQ, UABI_ATTR_QP_SRQ,
				   UABI_ATTR_QP_XRCD };
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		struct uabi_uobject *dep = uabi_attr_uobj(call, ids[i]);

		if (!dep)
			continue;
		ret = uabi_uobj_add_dep(uobj, dep);
		if (ret)
			return ret;
	}
	return 0;
}

static int qp_create(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_uobject *uobj, *scq, *rcq, *srq_u, *xrcd_u;
	struct uabi_qp_handle *h;
	struct uabi_qp_attr attr = {};
	struct uabi_qp_init init;
	struct uabi_qp *qp;
	u32 mask;
	int ret;

	uabi_attr_get(call, UABI_ATTR_QP_INIT, &init, sizeof(init));
	ret = get_walk_attrs(call, &attr, &mask);
	if (ret)
		return ret;
	scq = uabi_attr_uobj(call, UABI_ATTR_QP_SEND_CQ);
	rcq = uabi_attr_uobj(call, UABI_ATTR_QP_RECV_CQ);
	srq_u = uabi_attr_uobj(call, UABI_ATTR_QP_SRQ);
	xrcd_u = uabi_attr_uobj(call, UABI_ATTR_QP_XRCD);

	if (init.qp_type == UABI_QPT_XRC_RECV) {
		u32 qpn = UABI_XRC_QPN_CREATE;

		/* The receive side of XRC has no PD, CQs or SRQ of its own. */
		if (!xrcd_u || uabi_attr_present(call, UABI_ATTR_QP_PD) || scq ||
		    rcq || srq_u || init.create_flags)
			return -EINVAL;
		ret = uabi_xrc_register(call, xrcd_u, &qpn, &init,
					uabi_attr_get_u64(call, UABI_ATTR_QP_USER_HANDLE, 0),
					mask ? &attr : NULL, mask);
		if (ret)
			return ret;
		fill_resp(call, ((struct uabi_qp_handle *)uobj_data(call->created))->qp);
		return 0;
	}

	switch (init.qp_type) {
	case UABI_QPT_RC:
	case UABI_QPT_UC:
	case UABI_QPT_UD:
		if (!rcq)
			return -EINVAL;
		break;
	case UABI_QPT_XRC_SEND:
		/* No receive queue, no SRQ.  With a domain (OFED 1.5's
		 * IBV_QPT_XRC) it is also the target its peer sends to: its
		 * messages go to the SRQs of that domain. */
		if (rcq || srq_u)
			return -EINVAL;
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
		break;
	default:
		return -EINVAL;
	}
	if (!uabi_attr_present(call, UABI_ATTR_QP_PD) || !scq ||
	    (xrcd_u && init.qp_type != UABI_QPT_XRC_SEND))
		return -EINVAL;
	if (srq_u) {
		struct uabi_srq *srq = uobj_data(srq_u);

		if (srq->srq_type != UABI_SRQT_BASIC)
			return -EINVAL;
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}
	ret = check_cap(dev, &init, srq_u != NULL);
	if (ret)
		return ret;

	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	if (!qp)
		return -ENOMEM;
	qp->qp_type = init.qp_type;
	qp->init = init;
	qp->attr.cap = init.cap;
	qp->state = UABI_QPS_RESET;
	qp->send_cq = uobj_data(scq);
	qp->recv_cq = rcq ? uobj_data(rcq) : NULL;
	qp->srq = srq_u ? uobj_data(srq_u) : NULL;
	qp->ctx = call->ctx;
	qp->pid = call->pid;
	qp->user = call->ctx->user;
	qp->pd = uobj_data(uabi_attr_uobj(call, UABI_ATTR_QP_PD));
	qp->xrcd = xrcd_u ? ((struct uabi_xrcd *)uobj_data(xrcd_u))->shared : NULL;
	INIT_LIST_HEAD(&qp->regs);
	INIT_LIST_HEAD(&qp->dev_node);
	INIT_LIST_HEAD(&qp->mcast);

	uobj = call->created;
	uobj->user_handle = uabi_attr_get_u64(call, UABI_ATTR_QP_USER_HANDLE, 0);
	ret = add_deps(uobj, call);
	if (ret)
		goto err_free;
	if (dev->ops->create_qp) {
		ret = dev->ops->create_qp(dev, qp);
		if (ret)
			goto err_free;
	}
	qp->attr.cap = qp->init.cap;
	if (mask) {
		ret = uabi_qp_walk_to_state(dev, qp, &attr, mask);
		if (ret)
			goto err_destroy;
	}
	h = uobj_data(uobj);
	h->qp = qp;
	h->uobj = uobj;
	WRITE_ONCE(qp->owner, uobj);
	INIT_LIST_HEAD(&h->reg_node);
	fill_resp(call, qp);
	return 0;

err_destroy:
	if (dev->ops->destroy_qp)
		dev->ops->destroy_qp(dev, qp, UABI_DESTROY_ROLLBACK);
err_free:
	kfree(qp);
	return ret;
}

static int qp_modify(struct uabi_call *call)
{
	struct uabi_qp_handle *h = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_qp_attr attr;
	u32 mask = uabi_attr_get_u32(call, UABI_ATTR_QP_ATTR_MASK, 0);
	int ret;

	uabi_attr_get(call, UABI_ATTR_QP_ATTR, &attr, sizeof(attr));
	/* A registration made by this message may name a receive QP that
	 * other contexts share: rolling back cannot undo a change to it. */
	if (call->all_or_nothing && qp_shared(h->qp))
		return -EINVAL;
	if (qp_shared(h->qp))
		mutex_lock(&dev->lock);
	ret = uabi_qp_modify(dev, h->qp, &attr, mask);
	if (!ret)
		fill_resp(call, h->qp);
	if (qp_shared(h->qp))
		mutex_unlock(&dev->lock);
	return ret;
}

void uabi_qp_fill_query(struct uabi_call *call, const struct uabi_qp *qp,
			u16 attr_id)
{
	struct uabi_qp_attr attr = qp->attr;

	attr.qp_state = qp->state;
	attr.cur_qp_state = qp->state;
	attr.cap = qp->init.cap;
	uabi_attr_put(call, attr_id, &attr, sizeof(attr));
}

static int qp_query(struct uabi_call *call)
{
	struct uabi_qp_handle *h = uobj_data(call->target);
	struct uabi_device *dev = call->dev;

	if (qp_shared(h->qp))
		mutex_lock(&dev->lock);
	uabi_qp_fill_query(call, h->qp, UABI_ATTR_QP_ATTR);
	uabi_attr_put(call, UABI_ATTR_QP_INIT_OUT, &h->qp->init,
		      sizeof(h->qp->init));
	fill_resp(call, h->qp);
	if (qp_shared(h->qp))
		mutex_unlock(&dev->lock);
	return 0;
}

/* ------------------------------------------------------------- multicast */
struct mcast_node {
	struct list_head node;
	struct uabi_mcast m;
};

/* ff00::/8, or an IPv4-mapped multicast address (::ffff:224.0.0.0/4), as
 * Linux's rdma_is_multicast_addr(). */
static bool gid_is_multicast(const u8 *gid)
{
	static const u8 v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (gid[0] == 0xff)
		return true;
	return !memcmp(gid, v4_mapped, sizeof(v4_mapped)) && (gid[12] & 0xf0) == 0xe0;
}

static bool mcast_supported(const struct uabi_device *dev)
{
	return dev->ops->attach_mcast != NULL;
}

static struct mcast_node *mcast_find(struct uabi_qp *qp, const struct uabi_mcast *m)
{
	struct mcast_node *n;

	list_for_each_entry(n, &qp->mcast, node)
		if (n->m.lid == m->lid && !memcmp(n->m.gid, m->gid, sizeof(m->gid)))
			return n;
	return NULL;
}

/* Checks as Linux's ib_attach_mcast(): a UD QP, a multicast GID, and (the
 * port is InfiniBand) a multicast LID that is not the permissive one.  On
 * an Ethernet port (a RoCE device) the LID means nothing (the RoCE annex):
 * any is taken, and the group is its GID alone (the LID kept as 0). */
static int mcast_args(struct uabi_call *call, struct uabi_qp **qp, struct uabi_mcast *m)
{
	struct uabi_qp_handle *h = uobj_data(call->target);
	struct uabi_port_attr pa;
	bool eth;

	uabi_attr_get(call, UABI_ATTR_QP_MCAST, m, sizeof(*m));
	*qp = h->qp;
	if (!call->dev->ops->attach_mcast)
		return -EOPNOTSUPP;
	if (m->reserved0 || m->reserved1)
		return -EINVAL;
	memset(&pa, 0, sizeof(pa));
	eth = !call->dev->ops->query_port(call->dev, 1, &pa) &&
	      pa.link_layer == UABI_LINK_LAYER_ETHERNET;
	if ((*qp)->qp_type != UABI_QPT_UD || !gid_is_multicast(m->gid) ||
	    (!eth && (m->lid < 0xc000 || m->lid == 0xffff)))
		return -EINVAL;
	if (eth)
		m->lid = 0;
	return 0;
}

static int qp_attach_mcast(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct mcast_node *n;
	struct uabi_mcast m;
	struct uabi_qp *qp;
	int ret = mcast_args(call, &qp, &m);

	if (ret)
		return ret;
	if (mcast_find(qp, &m))
		return 0;	/* attached already */
	n = kzalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
	if (!n)
		return -ENOMEM;
	n->m = m;
	ret = dev->ops->attach_mcast(dev, qp, &m);
	if (ret) {
		kfree(n);
		return ret;
	}
	list_add_tail(&n->node, &qp->mcast);
	return 0;
}

static void mcast_drop(struct uabi_device *dev, struct uabi_qp *qp, struct mcast_node *n)
{
	dev->ops->detach_mcast(dev, qp, &n->m);
	list_del(&n->node);
	kfree(n);
}

static int qp_detach_mcast(struct uabi_call *call)
{
	struct mcast_node *n;
	struct uabi_mcast m;
	struct uabi_qp *qp;
	int ret = mcast_args(call, &qp, &m);

	if (ret)
		return ret;
	n = mcast_find(qp, &m);
	if (!n)
		return -EINVAL;
	mcast_drop(call->dev, qp, n);
	return 0;
}

int uabi_qp_handle_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_qp_handle *h = uobj_data(uobj);
	struct uabi_device *dev = uobj->ctx->dev;
	struct uabi_qp *qp = h->qp;

	if (qp_shared(qp))
		return uabi_xrc_unregister(dev, h, why);
	while (!list_empty(&qp->mcast))
		mcast_drop(dev, qp, list_first_entry(&qp->mcast, struct mcast_node, node));
	if (dev->ops->destroy_qp)
		dev->ops->destroy_qp(dev, qp, why);
	kfree(qp);
	return 0;
}

/* An XRC registration describes its shared QP (dev->lock is held). */
static void qp_fill_info(struct uabi_uobject *uobj, struct uabi_object_info *o)
{
	const struct uabi_qp *qp = ((struct uabi_qp_handle *)uobj_data(uobj))->qp;

	if (qp) {
		o->qpn = qp->qpn;
		o->qp_type = qp->qp_type;
		o->qp_state = READ_ONCE(qp->state);
	}
}

const struct uabi_object_def uabi_type_qp = {
	.id = UABI_OBJ_QP,
	.name = "qp",
	.data_size = sizeof(struct uabi_qp_handle),
	.destroy = uabi_qp_handle_destroy,
	.fill_info = qp_fill_info,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = qp_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_QP_PD, UABI_OBJ_PD, UABI_ACCESS_READ, 0),
			     UABI_HANDLE(UABI_ATTR_QP_SEND_CQ, UABI_OBJ_CQ, UABI_ACCESS_READ, 0),
			     UABI_HANDLE(UABI_ATTR_QP_RECV_CQ, UABI_OBJ_CQ, UABI_ACCESS_READ, 0),
			     UABI_HANDLE(UABI_ATTR_QP_SRQ, UABI_OBJ_SRQ, UABI_ACCESS_READ, 0),
			     UABI_HANDLE(UABI_ATTR_QP_XRCD, UABI_OBJ_XRCD, UABI_ACCESS_READ, 0),
			     UABI_IN_MIN(UABI_ATTR_QP_INIT, struct uabi_qp_init,
					 UABI_END(struct uabi_qp_init, create_flags), MAND),
			     UABI_IN(UABI_ATTR_QP_USER_HANDLE, u64, 0),
			     UABI_IN_MIN(UABI_ATTR_QP_ATTR, struct uabi_qp_attr,
					 UABI_END(struct uabi_qp_attr, alt_timeout), 0),
			     UABI_IN_FLAGS(UABI_ATTR_QP_ATTR_MASK, UABI_QP_ATTR_MASK_ALL, 0),
			     UABI_OUT(UABI_ATTR_QP_RESP, struct uabi_qp_resp, 0)) },
		{ .id = UABI_METHOD_MODIFY, .handle_access = UABI_ACCESS_WRITE,
		  .handler = qp_modify,
		  UABI_ATTRS(UABI_IN_MIN(UABI_ATTR_QP_ATTR, struct uabi_qp_attr,
					 UABI_END(struct uabi_qp_attr, alt_timeout), MAND),
			     UABI_IN_FLAGS(UABI_ATTR_QP_ATTR_MASK, UABI_QP_ATTR_MASK_ALL,
					   MAND),
			     UABI_OUT(UABI_ATTR_QP_RESP, struct uabi_qp_resp, 0)) },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = qp_query,
		  /* the mask is accepted and, as by most devices, ignored:
		   * every attribute is returned */
		  UABI_ATTRS(UABI_IN(UABI_ATTR_QP_ATTR_MASK, u32, 0),
			     UABI_OUT(UABI_ATTR_QP_ATTR, struct uabi_qp_attr, 0),
			     UABI_OUT(UABI_ATTR_QP_INIT_OUT, struct uabi_qp_init, 0),
			     UABI_OUT(UABI_ATTR_QP_RESP, struct uabi_qp_resp, 0)) },
		{ .id = UABI_QP_ATTACH_MCAST, .handle_access = UABI_ACCESS_WRITE,
		  .supported = mcast_supported, .handler = qp_attach_mcast,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_QP_MCAST, struct uabi_mcast, MAND)) },
		{ .id = UABI_QP_DETACH_MCAST, .handle_access = UABI_ACCESS_WRITE,
		  .supported = mcast_supported, .handler = qp_detach_mcast,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_QP_MCAST, struct uabi_mcast, MAND)) },
		UABI_DESTROY_METHOD,
	),
};
