// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Memory windows: a device without an alloc_mw op (the software device)
 * has none: discovery leaves them out and they answer -EOPNOTSUPP. */
#include <uabi/core.h>

static bool mw_supported(const struct uabi_device *dev)
{
	return dev->ops->alloc_mw != NULL;
}

static int mw_create(struct uabi_call *call)
{
	u32 type = uabi_attr_get_u32(call, UABI_ATTR_MW_TYPE, UABI_MW_TYPE_1);

	return call->dev->ops->alloc_mw(call->dev, type);
}

const struct uabi_object_def uabi_type_mw = {
	.id = UABI_OBJ_MW,
	.name = "mw",
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .supported = mw_supported, .handler = mw_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_MW_PD, UABI_OBJ_PD, UABI_ACCESS_READ, MAND),
			     UABI_IN_ENUM(UABI_ATTR_MW_TYPE, UABI_MW_TYPE_1,
					  UABI_MW_TYPE_2, 0)) },
		{ .id = UABI_METHOD_DESTROY, .handle_access = UABI_ACCESS_DESTROY,
		  .supported = mw_supported, .handler = uabi_destroy_handler },
	),
};
