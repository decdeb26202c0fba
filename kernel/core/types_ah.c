// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Address handles. */
#include <uabi/core.h>

int uabi_check_ah_attr(struct uabi_device *dev, const struct uabi_ah_attr *ah)
{
	struct uabi_port_attr port;
	int ret;

	if (ah->port_num < 1 || ah->port_num > dev->attr.phys_port_cnt)
		return -EINVAL;
	if (ah->sl > 15 || ah->reserved || ah->grh.reserved)
		return -EINVAL;
	ret = dev->ops->query_port(dev, ah->port_num, &port);
	if (ret)
		return ret;
	/* RoCE addresses by GID only: an address without a GRH names no one
	 * (Linux refuses it so too). */
	if (!ah->is_global)
		return port.link_layer == UABI_LINK_LAYER_ETHERNET ? -EINVAL : 0;
	if (ah->grh.sgid_index >= port.gid_tbl_len || ah->grh.flow_label >= (1u << 20))
		return -EINVAL;
	return 0;
}

static int ah_create(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_uobject *uobj = call->created;
	struct uabi_ah *ah;
	struct uabi_ah_attr attr;
	int ret;

	uabi_attr_get(call, UABI_ATTR_AH_ATTR, &attr, sizeof(attr));
	ret = uabi_check_ah_attr(dev, &attr);
	if (ret)
		return ret;
	ah = uobj_data(uobj);
	ah->attr = attr;
	ret = uabi_uobj_add_dep(uobj, uabi_attr_uobj(call, UABI_ATTR_AH_PD));
	if (ret)
		return ret;
	return dev->ops->create_ah ? dev->ops->create_ah(dev, ah) : 0;
}

static int ah_query(struct uabi_call *call)
{
	struct uabi_ah *ah = uobj_data(call->target);

	return uabi_attr_put(call, UABI_ATTR_AH_ATTR, &ah->attr, sizeof(ah->attr));
}

static int ah_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_device *dev = uobj->ctx->dev;

	if (dev->ops->destroy_ah)
		dev->ops->destroy_ah(dev, uobj_data(uobj));
	return 0;
}

const struct uabi_object_def uabi_type_ah = {
	.id = UABI_OBJ_AH,
	.name = "ah",
	.data_size = sizeof(struct uabi_ah),
	.destroy = ah_destroy,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = ah_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_AH_PD, UABI_OBJ_PD, UABI_ACCESS_READ, MAND),
			     UABI_IN_MIN(UABI_ATTR_AH_ATTR, struct uabi_ah_attr,
					 UABI_END(struct uabi_ah_attr, port_num), MAND)) },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = ah_query,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_AH_ATTR, struct uabi_ah_attr, MAND)) },
		UABI_DESTROY_METHOD,
	),
};
