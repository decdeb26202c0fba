// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Memory regions. */
#include <uabi/core.h>

/* The access bits a memory region understands; bits in
 * UABI_ACCESS_OPTIONAL_RANGE are hints that a device may ignore. */
#define MR_ACCESS_KNOWN \
	(UABI_ACCESS_LOCAL_WRITE | UABI_ACCESS_REMOTE_WRITE | \
	 UABI_ACCESS_REMOTE_READ | UABI_ACCESS_REMOTE_ATOMIC | \
	 UABI_ACCESS_MW_BIND | UABI_ACCESS_ZERO_BASED)

static bool mr_supported(const struct uabi_device *dev)
{
	return dev->ops->reg_mr != NULL;
}

/* The access bits are checked against the table's declaration. */
static int mr_check(const struct uabi_device *dev, const struct uabi_mr_reg *reg)
{
	u64 end;
	u32 access = reg->access;

	if (reg->reserved)
		return -EINVAL;
	/* Remote write or atomic needs local write (ibv_reg_mr(3)). */
	if ((access & (UABI_ACCESS_REMOTE_WRITE | UABI_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & UABI_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (!reg->length || reg->length > dev->attr.max_mr_size)
		return -EINVAL;
	if (check_add_overflow(reg->addr, reg->length, &end) ||
	    check_add_overflow(reg->iova, reg->length, &end))
		return -EINVAL;
	return 0;
}

static int mr_create(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_uobject *uobj = call->created;
	struct uabi_mr *mr;
	struct uabi_mr_keys keys;
	struct uabi_mr_reg reg;
	int ret;

	uabi_attr_get(call, UABI_ATTR_MR_REG, &reg, sizeof(reg));
	ret = mr_check(dev, &reg);
	if (ret)
		return ret;
	if (call->ctx->host->check_range) {
		ret = call->ctx->host->check_range(call, reg.addr, reg.length);
		if (ret)
			return ret;
	}
	mr = uobj_data(uobj);
	mr->reg = reg;
	mr->ctx = call->ctx;
	mr->pid = call->pid;
	mr->pd = uobj_data(uabi_attr_uobj(call, UABI_ATTR_MR_PD));
	ret = uabi_uobj_add_dep(uobj, uabi_attr_uobj(call, UABI_ATTR_MR_PD));
	if (ret)
		return ret;
	ret = dev->ops->reg_mr(dev, mr);
	if (ret)
		return ret;
	keys.lkey = mr->lkey;
	keys.rkey = mr->rkey;
	return uabi_attr_put(call, UABI_ATTR_MR_KEYS, &keys, sizeof(keys));
}

static int mr_query(struct uabi_call *call)
{
	struct uabi_mr *mr = uobj_data(call->target);
	struct uabi_mr_keys keys = { .lkey = mr->lkey, .rkey = mr->rkey };

	uabi_attr_put(call, UABI_ATTR_MR_REG, &mr->reg, sizeof(mr->reg));
	return uabi_attr_put(call, UABI_ATTR_MR_KEYS, &keys, sizeof(keys));
}

/*
 * ibv_rereg_mr(3), in place: the keys stay the same, so a peer holding the
 * rkey and the next work request of this process both see the new
 * registration.  Everything is checked before anything changes.
 */
static int mr_rereg(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_mr *mr = uobj_data(call->target);
	u32 flags = uabi_attr_get_u32(call, UABI_ATTR_MR_REREG_FLAGS, 0);
	struct uabi_uobject *new_pd = uabi_attr_uobj(call, UABI_ATTR_MR_PD);
	struct uabi_uobject *old_pd = NULL;
	struct uabi_mr_reg want, reg = mr->reg;
	struct uabi_mr_keys keys;
	s32 old_pid;
	u8 i;
	int ret;

	if (!flags || (flags & ~(UABI_MR_REREG_TRANSLATION | UABI_MR_REREG_PD |
				 UABI_MR_REREG_ACCESS)))
		return -EINVAL;
	if (!(flags & UABI_MR_REREG_PD) != !new_pd)
		return -EINVAL;
	/* Memory windows are bound to it (nothing else depends on an MR). */
	if (atomic_read(&call->target->usecnt))
		return -EBUSY;
	if (flags & (UABI_MR_REREG_TRANSLATION | UABI_MR_REREG_ACCESS)) {
		if (uabi_attr_get(call, UABI_ATTR_MR_REG, &want, sizeof(want)))
			return -EINVAL;
		if (flags & UABI_MR_REREG_TRANSLATION) {
			reg.addr = want.addr;
			reg.length = want.length;
			reg.iova = want.iova;
		}
		if (flags & UABI_MR_REREG_ACCESS)
			reg.access = want.access;
		reg.reserved = want.reserved;
	}
	ret = mr_check(dev, &reg);
	if (ret)
		return ret;
	if ((flags & UABI_MR_REREG_TRANSLATION) && call->ctx->host->check_range) {
		ret = call->ctx->host->check_range(call, reg.addr, reg.length);
		if (ret)
			return ret;
	}
	if (!dev->ops->rereg_mr)
		return -EOPNOTSUPP;
	/* The PD the MR depends on now. */
	for (i = 0; i < call->target->num_deps; i++)
		if (call->target->deps[i]->def->id == UABI_OBJ_PD)
			old_pd = call->target->deps[i];
	if (new_pd && !old_pd)
		return -EINVAL;
	/* New addresses are the caller's: with an imported context (several
	 * processes on one context) that may be another process than the
	 * one that registered the MR first. */
	old_pid = mr->pid;
	if (flags & UABI_MR_REREG_TRANSLATION)
		mr->pid = call->pid;
	ret = dev->ops->rereg_mr(dev, mr, &reg, new_pd ? uobj_data(new_pd) : mr->pd);
	if (ret) {
		mr->pid = old_pid;
		return ret;
	}
	mr->reg = reg;
	if (new_pd && new_pd != old_pd) {
		uabi_uobj_replace_dep(call->target, old_pd, new_pd);
		mr->pd = uobj_data(new_pd);
	}
	keys.lkey = mr->lkey;
	keys.rkey = mr->rkey;
	return uabi_attr_put(call, UABI_ATTR_MR_KEYS, &keys, sizeof(keys));
}

static int mr_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_device *dev = uobj->ctx->dev;

	dev->ops->dereg_mr(dev, uobj_data(uobj));
	return 0;
}

static void mr_fill_info(struct uabi_uobject *uobj, struct uabi_object_info *o)
{
	const struct uabi_mr *mr = uobj_data(uobj);

	o->lkey = mr->lkey;
	o->rkey = mr->rkey;
	o->addr = mr->reg.addr;
	o->length = mr->reg.length;
}

const struct uabi_object_def uabi_type_mr = {
	.id = UABI_OBJ_MR,
	.name = "mr",
	.data_size = sizeof(struct uabi_mr),
	.destroy = mr_destroy,
	.fill_info = mr_fill_info,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .supported = mr_supported, .handler = mr_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_MR_PD, UABI_OBJ_PD, UABI_ACCESS_READ, MAND),
			     UABI_IN_FIELD_FLAGS(UABI_ATTR_MR_REG, struct uabi_mr_reg,
						 UABI_END(struct uabi_mr_reg, access), access,
						 MR_ACCESS_KNOWN | UABI_ACCESS_OPTIONAL_RANGE,
						 MAND),
			     UABI_OUT(UABI_ATTR_MR_KEYS, struct uabi_mr_keys, 0)) },
		{ .id = UABI_METHOD_MODIFY, .handle_access = UABI_ACCESS_WRITE,
		  .handler = mr_rereg,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_MR_REREG_FLAGS, u32, MAND),
			     UABI_HANDLE(UABI_ATTR_MR_PD, UABI_OBJ_PD, UABI_ACCESS_READ, 0),
			     UABI_IN_FIELD_FLAGS(UABI_ATTR_MR_REG, struct uabi_mr_reg,
						 UABI_END(struct uabi_mr_reg, access), access,
						 MR_ACCESS_KNOWN | UABI_ACCESS_OPTIONAL_RANGE, 0),
			     UABI_OUT(UABI_ATTR_MR_KEYS, struct uabi_mr_keys, 0)) },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = mr_query,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_MR_REG, struct uabi_mr_reg, 0),
			     UABI_OUT(UABI_ATTR_MR_KEYS, struct uabi_mr_keys, 0)) },
		UABI_DESTROY_METHOD,
	),
};
