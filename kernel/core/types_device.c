// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The device object: attributes, ports, GIDs, P_Keys, discovery, counters. */
#include <uabi/core.h>

static int device_query(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_device_attr attr = {};
	int ret;

	ret = dev->ops->query_device(dev, &attr);
	if (ret)
		return ret;
	uabi_attr_put(call, UABI_ATTR_DEVICE_INFO, &attr, sizeof(attr));
	return uabi_attr_put(call, UABI_ATTR_DEVICE_NAME, dev->name,
			     sizeof(dev->name));
}

static int device_query_port(struct uabi_call *call)
{
	struct uabi_port_attr attr = {};
	u32 port = uabi_attr_get_u32(call, UABI_ATTR_DEVICE_PORT_NUM, 0);
	int ret;

	ret = call->dev->ops->query_port(call->dev, port, &attr);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_DEVICE_PORT_INFO, &attr, sizeof(attr));
}

static int device_query_gid(struct uabi_call *call)
{
	u32 port = uabi_attr_get_u32(call, UABI_ATTR_DEVICE_PORT_NUM, 0);
	u32 index = uabi_attr_get_u32(call, UABI_ATTR_DEVICE_INDEX, 0);
	u8 gid[16];
	int ret;

	ret = call->dev->ops->query_gid(call->dev, port, index, gid);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_DEVICE_GID, gid, sizeof(gid));
}

static int device_query_pkey(struct uabi_call *call)
{
	u32 port = uabi_attr_get_u32(call, UABI_ATTR_DEVICE_PORT_NUM, 0);
	u32 index = uabi_attr_get_u32(call, UABI_ATTR_DEVICE_INDEX, 0);
	u16 pkey;
	int ret;

	ret = call->dev->ops->query_pkey(call->dev, port, index, &pkey);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_DEVICE_PKEY, &pkey, sizeof(pkey));
}

static int device_discover(struct uabi_call *call)
{
	u32 len;
	void *buf = uabi_attr_out_buf(call, UABI_ATTR_DEVICE_DISCOVERY, &len);

	return uabi_discover(call->dev, buf, len);
}

static int device_counters(struct uabi_call *call)
{
	struct uabi_counters c = { .num_types = UABI_OBJ_MAX_CORE };
	u32 i;

	c.contexts = atomic_read(&call->dev->num_contexts);
	for (i = 0; i < ARRAY_SIZE(c.device); i++) {
		c.device[i] = atomic_read(&call->dev->counts[i]);
		c.context[i] = atomic_read(&call->ctx->counts[i]);
	}
	return uabi_attr_put(call, UABI_ATTR_DEVICE_COUNTERS, &c, sizeof(c));
}

/* Live objects of the caller's context, or of its user's contexts: not
 * another user's, which are none of its business (docs/security.md). */
static int device_list_objects(struct uabi_call *call)
{
	struct uabi_object_cursor after = {};
	u32 scope = uabi_attr_get_u32(call, UABI_ATTR_DEVICE_LIST_SCOPE,
				      UABI_LIST_CONTEXT);
	struct uabi_object_list *out;
	u32 len;

	uabi_attr_get(call, UABI_ATTR_DEVICE_LIST_AFTER, &after, sizeof(after));
	out = uabi_attr_out_buf(call, UABI_ATTR_DEVICE_OBJECTS, &len);
	return uabi_list_objects(call->ctx, scope, &after, out,
				 (len - sizeof(*out)) / sizeof(out->entries[0]));
}

#define RO UABI_SPEC_F_METHOD_READONLY

const struct uabi_object_def uabi_type_device = {
	.id = UABI_OBJ_DEVICE,
	.name = "device",
	UABI_METHODS(
		{ .id = UABI_METHOD_QUERY, .flags = RO, .handler = device_query,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_DEVICE_INFO, struct uabi_device_attr, 0),
			     UABI_OUT(UABI_ATTR_DEVICE_NAME, char[64], 0)) },
		{ .id = UABI_DEVICE_QUERY_PORT, .flags = RO,
		  .handler = device_query_port,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_DEVICE_PORT_NUM, u32, MAND),
			     UABI_OUT(UABI_ATTR_DEVICE_PORT_INFO, struct uabi_port_attr, MAND)) },
		{ .id = UABI_DEVICE_QUERY_GID, .flags = RO,
		  .handler = device_query_gid,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_DEVICE_PORT_NUM, u32, MAND),
			     UABI_IN(UABI_ATTR_DEVICE_INDEX, u32, MAND),
			     UABI_OUT(UABI_ATTR_DEVICE_GID, u8[16], MAND)) },
		{ .id = UABI_DEVICE_QUERY_PKEY, .flags = RO,
		  .handler = device_query_pkey,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_DEVICE_PORT_NUM, u32, MAND),
			     UABI_IN(UABI_ATTR_DEVICE_INDEX, u32, MAND),
			     UABI_OUT(UABI_ATTR_DEVICE_PKEY, u16, MAND)) },
		{ .id = UABI_DEVICE_DISCOVER, .flags = RO,
		  .handler = device_discover,
		  UABI_ATTRS({ .id = UABI_ATTR_DEVICE_DISCOVERY,
			       .flags = UABI_SPEC_F_OUTPUT | MAND,
			       .min_len = sizeof(struct uabi_discovery),
			       .max_len = UABI_MAX_MSG_BYTES }) },
		{ .id = UABI_DEVICE_COUNTERS, .flags = RO,
		  .handler = device_counters,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_DEVICE_COUNTERS, struct uabi_counters, MAND)) },
		{ .id = UABI_DEVICE_LIST_OBJECTS, .flags = RO,
		  .handler = device_list_objects,
		  UABI_ATTRS(UABI_IN_ENUM(UABI_ATTR_DEVICE_LIST_SCOPE, UABI_LIST_CONTEXT,
					  UABI_LIST_USER, 0),
			     UABI_IN(UABI_ATTR_DEVICE_LIST_AFTER,
				     struct uabi_object_cursor, 0),
			     { .id = UABI_ATTR_DEVICE_OBJECTS,
			       .flags = UABI_SPEC_F_OUTPUT | MAND,
			       .min_len = sizeof(struct uabi_object_list),
			       .max_len = UABI_MAX_MSG_BYTES }) },
	),
};
