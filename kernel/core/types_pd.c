// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Protection domains. */
#include <uabi/core.h>

static int pd_create(struct uabi_call *call)
{
	struct uabi_uobject *uobj = call->created;

	((struct uabi_pd *)uobj_data(uobj))->user = call->ctx->user;
	if (!call->dev->ops->alloc_pd)
		return 0;
	return call->dev->ops->alloc_pd(call->dev, uobj_data(uobj));
}

/* ibv_import_pd(3): that the handle names a PD of this context is all
 * there is to answer; the dispatcher's lookup found it (-ENOENT: no such
 * handle, -EINVAL: another type, as Linux's uobject lookup). */
static int pd_query(struct uabi_call *call)
{
	return 0;
}

static int pd_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_device *dev = uobj->ctx->dev;

	if (dev->ops->dealloc_pd)
		dev->ops->dealloc_pd(dev, uobj_data(uobj));
	return 0;
}

const struct uabi_object_def uabi_type_pd = {
	.id = UABI_OBJ_PD,
	.name = "pd",
	.data_size = sizeof(struct uabi_pd),
	.destroy = pd_destroy,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = pd_create },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = pd_query },
		UABI_DESTROY_METHOD,
	),
};
