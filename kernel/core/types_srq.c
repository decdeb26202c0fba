// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Shared receive queues, basic and XRC. */
#include <uabi/core.h>

static int srq_create(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_uobject *uobj, *xrcd_u, *cq_u;
	struct uabi_srq_resp resp = {};
	struct uabi_srq_init init;
	struct uabi_srq *srq;
	int ret;

	uabi_attr_get(call, UABI_ATTR_SRQ_INIT, &init, sizeof(init));
	xrcd_u = uabi_attr_uobj(call, UABI_ATTR_SRQ_XRCD);
	cq_u = uabi_attr_uobj(call, UABI_ATTR_SRQ_CQ);
	if (init.reserved || init.attr.reserved)
		return -EINVAL;
	if (init.attr.max_wr < 1 || init.attr.max_wr > dev->attr.max_srq_wr ||
	    init.attr.max_sge < 1 || init.attr.max_sge > dev->attr.max_srq_sge)
		return -EINVAL;
	/* srq_type is BASIC or XRC (declared in the table). */
	if (init.srq_type == UABI_SRQT_XRC ? !xrcd_u || !cq_u : xrcd_u || cq_u)
		return -EINVAL;

	uobj = call->created;
	uobj->user_handle = uabi_attr_get_u64(call, UABI_ATTR_SRQ_USER_HANDLE, 0);
	srq = uobj_data(uobj);
	srq->attr = init.attr;
	srq->attr.srq_limit = 0;	/* armed later by MODIFY */
	srq->srq_type = init.srq_type;
	srq->ctx = call->ctx;
	srq->pid = call->pid;
	srq->pd = uobj_data(uabi_attr_uobj(call, UABI_ATTR_SRQ_PD));
	srq->cq = cq_u ? uobj_data(cq_u) : NULL;
	ret = uabi_uobj_add_dep(uobj, uabi_attr_uobj(call, UABI_ATTR_SRQ_PD));
	if (!ret && xrcd_u) {
		srq->xrcd = ((struct uabi_xrcd *)uobj_data(xrcd_u))->shared;
		ret = uabi_uobj_add_dep(uobj, xrcd_u);
		if (!ret)
			ret = uabi_uobj_add_dep(uobj, cq_u);
	}
	if (ret)
		return ret;
	if (dev->ops->create_srq) {
		ret = dev->ops->create_srq(dev, srq);
		if (ret)
			return ret;
	}
	resp.srqn = srq->srqn;
	resp.attr = srq->attr;
	return uabi_attr_put(call, UABI_ATTR_SRQ_RESP, &resp, sizeof(resp));
}

static int srq_modify(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_srq *srq = uobj_data(call->target);
	struct uabi_srq_attr attr;
	u32 mask = uabi_attr_get_u32(call, UABI_ATTR_SRQ_ATTR_MASK, 0);
	int ret;

	uabi_attr_get(call, UABI_ATTR_SRQ_ATTR, &attr, sizeof(attr));
	if (!mask)
		return -EINVAL;
	if ((mask & UABI_SRQ_MAX_WR) &&
	    (attr.max_wr < 1 || attr.max_wr > dev->attr.max_srq_wr))
		return -EINVAL;
	if ((mask & UABI_SRQ_LIMIT) &&
	    attr.srq_limit > ((mask & UABI_SRQ_MAX_WR) ? attr.max_wr : srq->attr.max_wr))
		return -EINVAL;
	if (dev->ops->modify_srq) {
		ret = dev->ops->modify_srq(dev, srq, &attr, mask);
		if (ret)
			return ret;
	}
	if (mask & UABI_SRQ_MAX_WR)
		srq->attr.max_wr = attr.max_wr;
	if (mask & UABI_SRQ_LIMIT)
		srq->attr.srq_limit = attr.srq_limit;
	return 0;
}

static int srq_query(struct uabi_call *call)
{
	struct uabi_srq *srq = uobj_data(call->target);
	struct uabi_srq_resp resp = { .srqn = srq->srqn, .attr = srq->attr };

	uabi_attr_put(call, UABI_ATTR_SRQ_ATTR, &srq->attr, sizeof(srq->attr));
	return uabi_attr_put(call, UABI_ATTR_SRQ_RESP, &resp, sizeof(resp));
}

static int srq_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_device *dev = uobj->ctx->dev;

	if (dev->ops->destroy_srq)
		dev->ops->destroy_srq(dev, uobj_data(uobj));
	return 0;
}

static void srq_fill_info(struct uabi_uobject *uobj, struct uabi_object_info *o)
{
	const struct uabi_srq *srq = uobj_data(uobj);

	o->srqn = srq->srqn;
	o->srq_type = srq->srq_type;
}

const struct uabi_object_def uabi_type_srq = {
	.id = UABI_OBJ_SRQ,
	.name = "srq",
	.data_size = sizeof(struct uabi_srq),
	.destroy = srq_destroy,
	.fill_info = srq_fill_info,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = srq_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_SRQ_PD, UABI_OBJ_PD, UABI_ACCESS_READ, MAND),
			     UABI_HANDLE(UABI_ATTR_SRQ_XRCD, UABI_OBJ_XRCD, UABI_ACCESS_READ, 0),
			     UABI_HANDLE(UABI_ATTR_SRQ_CQ, UABI_OBJ_CQ, UABI_ACCESS_READ, 0),
			     UABI_IN_FIELD_ENUM(UABI_ATTR_SRQ_INIT, struct uabi_srq_init,
						UABI_END(struct uabi_srq_init, srq_type), srq_type,
						UABI_SRQT_BASIC, UABI_SRQT_XRC, MAND),
			     UABI_IN(UABI_ATTR_SRQ_USER_HANDLE, u64, 0),
			     UABI_OUT(UABI_ATTR_SRQ_RESP, struct uabi_srq_resp, 0)) },
		{ .id = UABI_METHOD_MODIFY, .handle_access = UABI_ACCESS_WRITE,
		  .handler = srq_modify,
		  UABI_ATTRS(UABI_IN_MIN(UABI_ATTR_SRQ_ATTR, struct uabi_srq_attr,
					 UABI_END(struct uabi_srq_attr, srq_limit), MAND),
			     UABI_IN_FLAGS(UABI_ATTR_SRQ_ATTR_MASK,
					   UABI_SRQ_MAX_WR | UABI_SRQ_LIMIT, MAND)) },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = srq_query,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_SRQ_ATTR, struct uabi_srq_attr, 0),
			     UABI_OUT(UABI_ATTR_SRQ_RESP, struct uabi_srq_resp, 0)) },
		UABI_DESTROY_METHOD,
	),
};
