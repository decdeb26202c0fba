// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Memory windows: declared so that discovery shows them; a device without
 * an alloc_mw op answers -EOPNOTSUPP, as the software device does. */
#include <uabi/core.h>

static int mw_create(struct uabi_call *call)
{
	u32 type = uabi_attr_get_u32(call, UABI_ATTR_MW_TYPE, 1);

	if (type != 1 && type != 2)
		return -EINVAL;
	struct uabi_uobject *uobj;

	if (!call->dev->ops->alloc_mw)
		return -EOPNOTSUPP;
	uobj = uabi_call_create(call, UABI_OBJ_MW);
	if (IS_ERR(uobj))
		return PTR_ERR(uobj);
	return call->dev->ops->alloc_mw(call->dev, type);
}

const struct uabi_object_def uabi_type_mw = {
	.id = UABI_OBJ_MW,
	.name = "mw",
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = mw_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_MW_PD, UABI_OBJ_PD, UABI_ACCESS_READ, MAND),
			     UABI_IN(UABI_ATTR_MW_TYPE, u32, 0)) },
		UABI_DESTROY_METHOD,
	),
};
