// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Device registry and event delivery. */
#include <uabi/core.h>

#define UABI_MAX_DEVICES 4
#define UABI_MAX_PENDING_EVENTS 4096

static struct uabi_device *devices[UABI_MAX_DEVICES];
static DEFINE_MUTEX(devices_lock);

int uabi_device_register(struct uabi_device *dev)
{
	int i, ret;

	ret = dev->ops->query_device(dev, &dev->attr);
	if (ret)
		return ret;
	ret = -ENOSPC;
	mutex_init(&dev->lock);
	INIT_LIST_HEAD(&dev->xrcds);
	INIT_LIST_HEAD(&dev->rcv_qps);
	INIT_LIST_HEAD(&dev->contexts);
	INIT_LIST_HEAD(&dev->users);
	INIT_LIST_HEAD(&dev->cm_ids);
	mutex_lock(&devices_lock);
	for (i = 0; i < UABI_MAX_DEVICES; i++) {
		if (!devices[i]) {
			devices[i] = dev;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&devices_lock);
	return ret;
}

void uabi_device_unregister(struct uabi_device *dev)
{
	int i;

	mutex_lock(&devices_lock);
	for (i = 0; i < UABI_MAX_DEVICES; i++)
		if (devices[i] == dev)
			devices[i] = NULL;
	mutex_unlock(&devices_lock);
	WARN_ON(atomic_read(&dev->num_contexts));
}

struct uabi_device *uabi_device_get(u32 index)
{
	struct uabi_device *dev = NULL;

	mutex_lock(&devices_lock);
	if (index < UABI_MAX_DEVICES)
		dev = devices[index];
	mutex_unlock(&devices_lock);
	return dev;
}

/* --------------------------------------------------------------- events */
struct uabi_event_node {
	struct list_head node;
	struct uabi_event ev;
};

void uabi_evq_push(struct uabi_uobject *evq_uobj, const struct uabi_event *ev)
{
	struct uabi_evq *evq = uobj_data(evq_uobj);
	struct uabi_event_node *n;

	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return;
	n->ev = *ev;
	spin_lock(&evq->lock);
	if (evq->num_pending >= UABI_MAX_PENDING_EVENTS) {
		/* A consumer that never reads must not exhaust memory. */
		spin_unlock(&evq->lock);
		kfree(n);
		return;
	}
	list_add_tail(&n->node, &evq->pending);
	evq->num_pending++;
	/* Under evq->lock so that signal and drain follow the list's own
	 * order: a drain may not overtake the signal of a newer event. */
	if (evq->wait)
		evq_uobj->ctx->host->evq_signal(evq->wait);
	spin_unlock(&evq->lock);
}

int uabi_evq_pop(struct uabi_uobject *evq_uobj, struct uabi_event *ev)
{
	struct uabi_evq *evq = uobj_data(evq_uobj);
	struct uabi_event_node *n = NULL;
	bool empty;

	spin_lock(&evq->lock);
	if (!list_empty(&evq->pending)) {
		n = list_first_entry(&evq->pending, struct uabi_event_node, node);
		list_del(&n->node);
		evq->num_pending--;
	}
	empty = list_empty(&evq->pending);
	if (empty && evq->wait)
		evq_uobj->ctx->host->evq_drain(evq->wait);
	spin_unlock(&evq->lock);
	if (!n)
		return -EAGAIN;
	*ev = n->ev;
	kfree(n);
	return 0;
}

void uabi_evq_flush(struct uabi_evq *evq)
{
	struct uabi_event_node *n, *next;

	list_for_each_entry_safe(n, next, &evq->pending, node) {
		list_del(&n->node);
		kfree(n);
	}
	evq->num_pending = 0;
}

/* Caller holds dev->lock, which keeps every ctx->async_evq alive. */
static void raise_locked(struct uabi_device *dev, struct uabi_context *only,
			 const struct uabi_event *ev)
{
	struct uabi_context *ctx;

	list_for_each_entry(ctx, &dev->contexts, dev_node) {
		if (only && ctx != only)
			continue;
		if (ctx->async_evq)
			uabi_evq_push(ctx->async_evq, ev);
	}
}

void uabi_raise_async_event(struct uabi_device *dev, struct uabi_context *only,
			    const struct uabi_event *ev)
{
	mutex_lock(&dev->lock);
	raise_locked(dev, only, ev);
	mutex_unlock(&dev->lock);
}

void uabi_device_fatal(struct uabi_device *dev)
{
	struct uabi_event ev = { .event_type = UABI_EVENT_DEVICE_FATAL };
	struct uabi_context *ctx;

	mutex_lock(&dev->lock);
	list_for_each_entry(ctx, &dev->contexts, dev_node) {
		if (ctx->fatal_told || !ctx->async_evq)
			continue;
		ctx->fatal_told = true;
		uabi_evq_push(ctx->async_evq, &ev);
	}
	mutex_unlock(&dev->lock);
}

/*
 * QP events go to the owner of the QP; for an XRC receive QP, to every
 * context registered on it, flagged as OFED did so that the receiver can
 * tell the qpn from a QP pointer.  Caller holds dev->lock.
 */
void uabi_raise_qp_event_locked(struct uabi_device *dev, struct uabi_qp *qp,
				struct uabi_uobject *owner, u32 event_type)
{
	struct uabi_event ev = { .event_type = event_type };
	struct uabi_qp_handle *reg;

	if (qp->qp_type != UABI_QPT_XRC_RECV) {
		ev.element = owner->user_handle;
		ev.object_handle = owner->handle;
		raise_locked(dev, owner->ctx, &ev);
		return;
	}
	list_for_each_entry(reg, &qp->regs, reg_node) {
		ev.element = reg->uobj->user_handle;
		ev.object_handle = reg->uobj->handle;
		ev.xrc_qpn = qp->qpn;
		raise_locked(dev, reg->uobj->ctx, &ev);
	}
}

void uabi_cq_comp_event(struct uabi_cq *cq)
{
	struct uabi_event ev = {
		.element = cq->uobj->user_handle,
		.object_handle = cq->uobj->handle,
	};

	if (cq->channel)
		uabi_evq_push(cq->channel, &ev);
}
