// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3)): type 1, bound by the
 * bind verb, and type 2 (2B: bound to a QP), bound by a BIND_MW work
 * request.  Both binds are work requests of a QP's send queue: the data
 * path executes them in order and asks for the bind here when their turn
 * comes.  Invalidations (LOCAL_INV, SEND_WITH_INV) name a key, not a
 * handle, so they are the driver's: it finds the window by its key.
 */
#include <uabi/core.h>

/* The remote access bits a window may give. */
#define MW_ACCESS (UABI_ACCESS_REMOTE_WRITE | UABI_ACCESS_REMOTE_READ | UABI_ACCESS_REMOTE_ATOMIC)

void uabi_mw_set_binding(struct uabi_mw *mw, struct uabi_mr *mr, u32 rkey)
{
	struct uabi_uobject *to = mr ? uabi_uobj_of(mr) : NULL;
	struct uabi_uobject *from;

	if (to)
		atomic_inc(&to->usecnt);
	from = xchg(&mw->bound_mr, to);
	WRITE_ONCE(mw->rkey, rkey);
	if (from)
		atomic_dec(&from->usecnt);
}

/* A device without an alloc_mw op has no windows: discovery leaves them
 * out and they answer -EOPNOTSUPP. */
static bool mw_supported(const struct uabi_device *dev)
{
	return dev->ops->alloc_mw != NULL;
}

/* The type is in range (the table's enum); the framework made the object. */
static int mw_create(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_uobject *uobj = call->created;
	struct uabi_uobject *pd = uabi_attr_uobj(call, UABI_ATTR_MW_PD);
	u32 type = uabi_attr_get_u32(call, UABI_ATTR_MW_TYPE, UABI_MW_TYPE_1);
	struct uabi_mw *mw;
	int ret;

	ret = uabi_uobj_add_dep(uobj, pd);
	if (ret)
		return ret;
	mw = uobj_data(uobj);
	mw->type = type;
	mw->ctx = call->ctx;
	mw->pd = uobj_data(pd);
	ret = dev->ops->alloc_mw(dev, mw);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_MW_RKEY, &mw->rkey, sizeof(mw->rkey));
}

/* The driver forgets the window (its key stops working at once) and drops
 * its hold on the MR. */
static int mw_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_device *dev = uobj->ctx->dev;

	dev->ops->dealloc_mw(dev, uobj_data(uobj));
	return 0;
}

/*
 * Binds the window to [addr, addr + length) of an MR through a QP: the
 * window, the MR and the QP share one PD; the MR allows MW_BIND; a window
 * with remote write or atomic needs the MR's local write; the range lies
 * within the MR; the new key keeps the window's index (the driver checks);
 * a type 2 window must be unbound (invalidate it first).  A type 1 bind of
 * length 0 unbinds (the MR, if any, and the address do not matter).  Zero-based windows are not
 * supported (UABI_ACCESS_ZERO_BASED: -EINVAL).
 */
static int mw_bind_check(const struct uabi_mw *mw, const struct uabi_mr *mr,
			 const struct uabi_mw_bind *b)
{
	u64 end, mr_end;

	if (!b->length)		/* an unbind: its MR and address do not matter */
		return mw->type == UABI_MW_TYPE_2 ? -EINVAL : 0;
	if (!mr || mr->pd != mw->pd)
		return -EINVAL;
	if (!(mr->reg.access & UABI_ACCESS_MW_BIND))
		return -EACCES;
	if ((b->access & (UABI_ACCESS_REMOTE_WRITE | UABI_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->reg.access & UABI_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (mw->type == UABI_MW_TYPE_2 && READ_ONCE(mw->bound_mr))
		return -EINVAL;
	if (check_add_overflow(b->addr, b->length, &end) ||
	    check_add_overflow(mr->reg.iova, mr->reg.length, &mr_end) ||
	    b->addr < mr->reg.iova || end > mr_end)
		return -EINVAL;
	return 0;
}

static int mw_bind(struct uabi_call *call)
{
	struct uabi_device *dev = call->dev;
	struct uabi_mw *mw = uobj_data(call->target);
	struct uabi_qp_handle *qh = uobj_data(uabi_attr_uobj(call, UABI_ATTR_MW_QP));
	struct uabi_uobject *mr_uobj = uabi_attr_uobj(call, UABI_ATTR_MW_MR);
	struct uabi_mr *mr = mr_uobj ? uobj_data(mr_uobj) : NULL;
	struct uabi_qp *qp = qh->qp;
	struct uabi_mw_bind b;
	int ret;

	uabi_attr_get(call, UABI_ATTR_MW_BIND, &b, sizeof(b));
	if (!qp || qp->pd != mw->pd ||
	    (qp->qp_type != UABI_QPT_RC && qp->qp_type != UABI_QPT_UC &&
	     qp->qp_type != UABI_QPT_XRC_SEND))
		return -EINVAL;
	if (b.access & ~MW_ACCESS)
		return -EINVAL;
	ret = mw_bind_check(mw, mr, &b);
	if (!ret)
		ret = dev->ops->bind_mw(dev, mw, b.length ? mr : NULL, qp, &b);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_MW_RKEY, &b.rkey, sizeof(b.rkey));
}

const struct uabi_object_def uabi_type_mw = {
	.id = UABI_OBJ_MW,
	.name = "mw",
	.data_size = sizeof(struct uabi_mw),
	.destroy = mw_destroy,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .supported = mw_supported, .handler = mw_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_MW_PD, UABI_OBJ_PD, UABI_ACCESS_READ, MAND),
			     UABI_IN_ENUM(UABI_ATTR_MW_TYPE, UABI_MW_TYPE_1, UABI_MW_TYPE_2, 0),
			     UABI_OUT(UABI_ATTR_MW_RKEY, u32, 0)) },
		{ .id = UABI_MW_BIND, .handle_access = UABI_ACCESS_WRITE,
		  .supported = mw_supported, .handler = mw_bind,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_MW_MR, UABI_OBJ_MR, UABI_ACCESS_READ, 0),
			     UABI_HANDLE(UABI_ATTR_MW_QP, UABI_OBJ_QP, UABI_ACCESS_READ, MAND),
			     UABI_IN(UABI_ATTR_MW_BIND, struct uabi_mw_bind, MAND),
			     UABI_OUT(UABI_ATTR_MW_RKEY, u32, 0)) },
		{ .id = UABI_METHOD_DESTROY, .handle_access = UABI_ACCESS_DESTROY,
		  .supported = mw_supported, .handler = uabi_destroy_handler },
	),
};
