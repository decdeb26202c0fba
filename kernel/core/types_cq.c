// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Completion queues. */
#include <uabi/core.h>

static int cq_create(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_uobject *uobj = call->created, *channel;
	struct uabi_cq_resp resp;
	struct uabi_cq *cq;
	u32 cqe = uabi_attr_get_u32(call, UABI_ATTR_CQ_CQE, 0);
	u32 vector = uabi_attr_get_u32(call, UABI_ATTR_CQ_COMP_VECTOR, 0);
	int ret;

	if (cqe < 1 || cqe > dev->attr.max_cqe || vector != 0)
		return -EINVAL;
	uobj->user_handle = uabi_attr_get_u64(call, UABI_ATTR_CQ_USER_HANDLE, 0);
	cq = uobj_data(uobj);
	cq->cqe = cqe;
	cq->comp_vector = vector;
	cq->uobj = uobj;
	cq->pid = call->pid;
	channel = uabi_attr_uobj(call, UABI_ATTR_CQ_CHANNEL);
	if (channel) {
		ret = uabi_uobj_add_dep(uobj, channel);
		if (ret)
			return ret;
		cq->channel = channel;
	}
	if (dev->ops->create_cq) {
		ret = dev->ops->create_cq(dev, cq);
		if (ret)
			return ret;
	}
	resp.cqe = cq->cqe;
	resp.cqn = cq->cqn;
	return uabi_attr_put(call, UABI_ATTR_CQ_RESP, &resp, sizeof(resp));
}

static int cq_resize(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_cq *cq = uobj_data(call->target);
	struct uabi_cq_resp resp;
	u32 cqe = uabi_attr_get_u32(call, UABI_ATTR_CQ_CQE, 0);
	int ret;

	if (cqe < 1 || cqe > dev->attr.max_cqe)
		return -EINVAL;
	if (dev->ops->resize_cq) {
		ret = dev->ops->resize_cq(dev, cq, cqe);
		if (ret)
			return ret;
	} else {
		cq->cqe = cqe;
	}
	resp.cqe = cq->cqe;
	resp.cqn = cq->cqn;
	return uabi_attr_put(call, UABI_ATTR_CQ_RESP, &resp, sizeof(resp));
}

static int cq_query(struct uabi_call *call)
{
	struct uabi_cq *cq = uobj_data(call->target);
	struct uabi_cq_resp resp = { .cqe = cq->cqe, .cqn = cq->cqn };

	return uabi_attr_put(call, UABI_ATTR_CQ_RESP, &resp, sizeof(resp));
}

static int cq_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_device *dev = uobj->ctx->dev;

	if (dev->ops->destroy_cq)
		dev->ops->destroy_cq(dev, uobj_data(uobj));
	return 0;
}

static void cq_fill_info(struct uabi_uobject *uobj, struct uabi_object_info *o)
{
	const struct uabi_cq *cq = uobj_data(uobj);

	o->cqe = cq->cqe;
	o->cqn = cq->cqn;
}

const struct uabi_object_def uabi_type_cq = {
	.id = UABI_OBJ_CQ,
	.name = "cq",
	.data_size = sizeof(struct uabi_cq),
	.destroy = cq_destroy,
	.fill_info = cq_fill_info,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = cq_create,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CQ_CQE, u32, MAND),
			     UABI_HANDLE(UABI_ATTR_CQ_CHANNEL, UABI_OBJ_COMP_CHANNEL,
					 UABI_ACCESS_READ, 0),
			     UABI_IN(UABI_ATTR_CQ_COMP_VECTOR, u32, 0),
			     UABI_IN(UABI_ATTR_CQ_USER_HANDLE, u64, 0),
			     UABI_OUT(UABI_ATTR_CQ_RESP, struct uabi_cq_resp, 0)) },
		{ .id = UABI_METHOD_MODIFY, .handle_access = UABI_ACCESS_WRITE,
		  .handler = cq_resize,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CQ_CQE, u32, MAND),
			     UABI_OUT(UABI_ATTR_CQ_RESP, struct uabi_cq_resp, 0)) },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = cq_query,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_CQ_RESP, struct uabi_cq_resp, MAND)) },
		UABI_DESTROY_METHOD,
	),
};
