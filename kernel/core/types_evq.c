// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Event queues: completion channels and the context's async event queue.
 * Each hands out a pollable fd that is readable while events are pending.
 */
#include <uabi/core.h>

static int evq_create(struct uabi_call *call, bool is_async)
{
	struct uabi_context *ctx = call->ctx;
	struct uabi_uobject *uobj = call->created;
	struct uabi_evq *evq = uobj_data(uobj);
	int ret;

	spin_lock_init(&evq->lock);
	INIT_LIST_HEAD(&evq->pending);
	evq->is_async = is_async;
	evq->fd = -1;

	if (is_async) {
		mutex_lock(&ctx->dev->lock);
		ret = ctx->async_evq ? -EINVAL : 0;	/* one per context */
		if (!ret)
			ctx->async_evq = uobj;
		mutex_unlock(&ctx->dev->lock);
		if (ret)
			return ret;
	}
	ret = ctx->host->evq_open(call, &evq->wait, &evq->fd);
	if (ret) {
		if (is_async) {
			mutex_lock(&ctx->dev->lock);
			ctx->async_evq = NULL;
			mutex_unlock(&ctx->dev->lock);
		}
		return ret;
	}
	return uabi_attr_put(call, UABI_ATTR_EVQ_FD, &evq->fd, sizeof(evq->fd));
}

static int comp_channel_create(struct uabi_call *call)
{
	return evq_create(call, false);
}

static int async_event_create(struct uabi_call *call)
{
	return evq_create(call, true);
}

static int evq_get_event(struct uabi_call *call)
{
	struct uabi_event ev;
	int ret = uabi_evq_pop(call->target, &ev);

	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_EVQ_EVENT, &ev, sizeof(ev));
}

static int evq_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_evq *evq = uobj_data(uobj);
	struct uabi_context *ctx = uobj->ctx;

	if (evq->is_async) {
		mutex_lock(&ctx->dev->lock);
		ctx->async_evq = NULL;
		mutex_unlock(&ctx->dev->lock);
	}
	uabi_evq_flush(evq);
	if (evq->wait)
		ctx->host->evq_release(evq->wait);
	return 0;
}

#define EVQ_METHODS(create_fn) \
	{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES, \
	  .handler = create_fn, \
	  UABI_ATTRS(UABI_FD_OUT(UABI_ATTR_EVQ_FD, 0)) }, \
	{ .id = UABI_EVQ_GET_EVENT, .handle_access = UABI_ACCESS_READ, \
	  .handler = evq_get_event, \
	  UABI_ATTRS(UABI_OUT(UABI_ATTR_EVQ_EVENT, struct uabi_event, MAND)) }, \
	UABI_DESTROY_METHOD

const struct uabi_object_def uabi_type_comp_channel = {
	.id = UABI_OBJ_COMP_CHANNEL,
	.name = "comp_channel",
	.data_size = sizeof(struct uabi_evq),
	.destroy = evq_destroy,
	UABI_METHODS(EVQ_METHODS(comp_channel_create)),
};

const struct uabi_object_def uabi_type_async_event = {
	.id = UABI_OBJ_ASYNC_EVENT,
	.name = "async_event",
	.data_size = sizeof(struct uabi_evq),
	.destroy = evq_destroy,
	UABI_METHODS(EVQ_METHODS(async_event_create)),
};
