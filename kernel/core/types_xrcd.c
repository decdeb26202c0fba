// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * XRC domains and the one rule for XRC receive QPs:
 *
 *   register(xrcd, &qpn): qpn 0xFFFFFFFF creates a receive QP in the domain
 *                         and registers the caller; a valid qpn adds a
 *                         registration of the caller to that QP.
 *   unregister(xrcd, qpn): drops one registration of the caller.
 *
 * The QP lives while any registration does, whoever created it; closing a
 * context drops its registrations like any other object it owns.  A
 * registration is a QP uobject of the registering context, so the old
 * OFED calls, upstream's create/open/destroy and context teardown are all
 * the same two operations.
 *
 * Domains are keyed by the identity of a file (the host proves it) and
 * shared by every context that opens the same file; dev->lock protects
 * the domain list, the receive QP list and each receive QP's state.
 */
#include <uabi/core.h>

static void xrcd_put_locked(struct uabi_device *dev, struct uabi_xrcd_shared *x)
{
	if (--x->refcnt)
		return;
	list_del(&x->dev_node);
	kfree(x);
}

static int xrcd_open(struct uabi_call *call)
{
	struct uabi_context *ctx = call->ctx;
	struct uabi_device *dev = call->dev;
	struct uabi_xrcd_shared *x = NULL, *it;
	struct uabi_file_id id = {};
	struct uabi_uobject *uobj = call->created;
	s32 fd = (s32)uabi_attr_get_u32(call, UABI_ATTR_XRCD_FD, (u32)-1);
	u32 oflags = uabi_attr_get_u32(call, UABI_ATTR_XRCD_OFLAGS, 0);
	int ret = 0;

	if (fd != -1) {
		ret = ctx->host->file_identity(ctx, fd, &id);
		if (ret)
			return ret;
	}

	mutex_lock(&dev->lock);
	if (fd != -1) {
		list_for_each_entry(it, &dev->xrcds, dev_node) {
			/* A domain is a user's: the same file opened by
			 * another uid names another domain, so no path
			 * leads from one user's XRC QPs to another's. */
			if (!it->anonymous && it->id.dev == id.dev &&
			    it->id.ino == id.ino && it->uid == ctx->peer.uid) {
				x = it;
				break;
			}
		}
		/* open(2)-like, with Linux's ib_uverbs_open_xrcd() errnos:
		 * no domain yet and no O_CREAT is -EAGAIN (one may appear),
		 * an existing one with O_EXCL -EINVAL. */
		if (!x && !(oflags & UABI_XRCD_O_CREAT))
			ret = -EAGAIN;
		else if (x && (oflags & UABI_XRCD_O_EXCL))
			ret = -EINVAL;
	}
	if (!ret && x) {
		x->refcnt++;
	} else if (!ret) {
		x = kzalloc(sizeof(*x), GFP_KERNEL);
		if (!x) {
			ret = -ENOMEM;
		} else {
			x->id = id;
			x->uid = ctx->peer.uid;
			x->anonymous = fd == -1;
			x->refcnt = 1;
			list_add_tail(&x->dev_node, &dev->xrcds);
		}
	}
	mutex_unlock(&dev->lock);
	if (ret)
		return ret;
	((struct uabi_xrcd *)uobj_data(uobj))->shared = x;
	return 0;
}

static int xrcd_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_xrcd *xrcd = uobj_data(uobj);
	struct uabi_device *dev = uobj->ctx->dev;

	mutex_lock(&dev->lock);
	xrcd_put_locked(dev, xrcd->shared);
	mutex_unlock(&dev->lock);
	return 0;
}

static struct uabi_qp *find_rcv_qp_locked(struct uabi_device *dev,
					  struct uabi_xrcd_shared *x, u32 qpn)
{
	struct uabi_qp *qp;

	list_for_each_entry(qp, &dev->rcv_qps, dev_node)
		if (qp->qpn == qpn && qp->xrcd == x)
			return qp;
	return NULL;
}

static struct uabi_qp *new_rcv_qp(struct uabi_device *dev, struct uabi_user *user,
				  struct uabi_xrcd_shared *x,
				  const struct uabi_qp_init *init,
				  const struct uabi_qp_attr *attr, u32 mask)
{
	struct uabi_qp *qp;
	int ret;

	if (init && (init->create_flags || init->reserved))
		return ERR_PTR(-EINVAL);
	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	if (!qp)
		return ERR_PTR(-ENOMEM);
	qp->qp_type = UABI_QPT_XRC_RECV;
	qp->init.qp_type = UABI_QPT_XRC_RECV;	/* no queues of its own */
	qp->state = UABI_QPS_RESET;
	qp->xrcd = x;
	qp->user = user;	/* the domain's user: every registration is */
	INIT_LIST_HEAD(&qp->regs);
	INIT_LIST_HEAD(&qp->mcast);
	if (dev->ops->create_qp) {
		ret = dev->ops->create_qp(dev, qp);
		if (ret)
			goto err_free;
	}
	if (attr) {
		ret = uabi_qp_walk_to_state(dev, qp, attr, mask);
		if (ret)
			goto err_destroy;
	}
	return qp;

err_destroy:
	if (dev->ops->destroy_qp)
		dev->ops->destroy_qp(dev, qp, UABI_DESTROY_ROLLBACK);
err_free:
	kfree(qp);
	return ERR_PTR(ret);
}

static void free_rcv_qp_locked(struct uabi_device *dev, struct uabi_qp *qp,
			       enum uabi_destroy_reason why)
{
	list_del(&qp->dev_node);
	if (dev->ops->destroy_qp)
		dev->ops->destroy_qp(dev, qp, why);
	xrcd_put_locked(dev, qp->xrcd);
	kfree(qp);
}

int uabi_xrc_register(struct uabi_call *call, struct uabi_uobject *xrcd_uobj,
		      u32 *qpn, const struct uabi_qp_init *init,
		      u64 user_handle, const struct uabi_qp_attr *attr,
		      u32 mask)
{
	struct uabi_xrcd_shared *x = ((struct uabi_xrcd *)uobj_data(xrcd_uobj))->shared;
	struct uabi_device *dev = call->dev;
	struct uabi_qp_handle *reg;
	struct uabi_uobject *uobj = call->created;
	struct uabi_qp *qp;
	bool fresh = *qpn == UABI_XRC_QPN_CREATE;
	int ret;

	mutex_lock(&dev->lock);
	if (fresh) {
		qp = new_rcv_qp(dev, call->ctx->user, x, init, attr, mask);
		if (IS_ERR(qp)) {
			ret = PTR_ERR(qp);
			goto out_unlock;
		}
		x->refcnt++;	/* the QP holds its domain */
		list_add_tail(&qp->dev_node, &dev->rcv_qps);
	} else {
		qp = find_rcv_qp_locked(dev, x, *qpn);
		if (!qp) {
			ret = -EINVAL;
			goto out_unlock;
		}
	}

	ret = uabi_uobj_add_dep(uobj, xrcd_uobj);
	if (ret)
		goto err_fresh;
	uobj->user_handle = user_handle;
	reg = uobj_data(uobj);
	reg->qp = qp;
	reg->uobj = uobj;
	list_add_tail(&reg->reg_node, &qp->regs);
	qp->num_regs++;
	*qpn = qp->qpn;
	mutex_unlock(&dev->lock);
	return 0;

err_fresh:
	if (fresh)
		free_rcv_qp_locked(dev, qp, UABI_DESTROY_ROLLBACK);
out_unlock:
	mutex_unlock(&dev->lock);
	return ret;
}

int uabi_xrc_unregister(struct uabi_device *dev, struct uabi_qp_handle *reg,
			enum uabi_destroy_reason why)
{
	struct uabi_qp *qp = reg->qp;

	mutex_lock(&dev->lock);
	list_del(&reg->reg_node);
	if (!--qp->num_regs)
		free_rcv_qp_locked(dev, qp, why);
	mutex_unlock(&dev->lock);
	return 0;
}

struct uabi_qp_handle *uabi_xrc_find_reg(struct uabi_context *ctx,
					 struct uabi_xrcd_shared *x, u32 qpn)
{
	struct uabi_qp_handle *reg, *found = NULL;
	struct uabi_qp *qp = find_rcv_qp_locked(ctx->dev, x, qpn);

	if (!qp)
		return NULL;
	list_for_each_entry(reg, &qp->regs, reg_node)
		if (reg->uobj->ctx == ctx)
			found = reg;	/* the newest one */
	return found;
}

/* ------------------------------------------------------------- methods */
static struct uabi_xrcd_shared *target_domain(struct uabi_call *call)
{
	return ((struct uabi_xrcd *)uobj_data(call->target))->shared;
}

static int xrcd_reg_rcv_qp(struct uabi_call *call)
{
	struct uabi_qp_init init = { .qp_type = UABI_QPT_XRC_RECV };
	u32 qpn = uabi_attr_get_u32(call, UABI_ATTR_XRCD_QPN, 0);
	int ret;

	uabi_attr_get(call, UABI_ATTR_XRCD_QP_INIT, &init, sizeof(init));
	if (init.qp_type != UABI_QPT_XRC_RECV)
		return -EINVAL;
	ret = uabi_xrc_register(call, call->target, &qpn, &init,
				uabi_attr_get_u64(call, UABI_ATTR_XRCD_USER_HANDLE, 0),
				NULL, 0);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_XRCD_QPN, &qpn, sizeof(qpn));
}

static int xrcd_unreg_rcv_qp(struct uabi_call *call)
{
	struct uabi_context *ctx = call->ctx;
	struct uabi_qp_handle *reg;
	struct uabi_uobject *uobj, *expected;
	u32 qpn = uabi_attr_get_u32(call, UABI_ATTR_XRCD_QPN, 0);
	u32 handle;
	int ret;

	mutex_lock(&ctx->dev->lock);
	reg = uabi_xrc_find_reg(ctx, target_domain(call), qpn);
	expected = reg ? reg->uobj : NULL;
	handle = reg ? reg->uobj->handle : 0;
	mutex_unlock(&ctx->dev->lock);
	if (!expected)
		return -EINVAL;

	/* Destroy it through the table, so that a concurrent user of the
	 * same registration sees -EBUSY rather than a freed object. */
	uobj = uabi_uobj_lookup(ctx, handle, UABI_OBJ_QP, UABI_ACCESS_DESTROY);
	if (IS_ERR(uobj))
		return PTR_ERR(uobj) == -ENOENT ? -EINVAL : PTR_ERR(uobj);
	if (uobj != expected) {
		uabi_uobj_unlock(uobj, UABI_ACCESS_DESTROY);
		return -EINVAL;
	}
	ret = uabi_uobj_destroy(uobj, UABI_DESTROY_USER);
	if (ret)
		uabi_uobj_unlock(uobj, UABI_ACCESS_DESTROY);
	return ret;
}

static int xrcd_modify_rcv_qp(struct uabi_call *call)
{
	struct uabi_qp_handle *reg;
	struct uabi_qp_attr attr;
	u32 qpn = uabi_attr_get_u32(call, UABI_ATTR_XRCD_QPN, 0);
	u32 mask = uabi_attr_get_u32(call, UABI_ATTR_XRCD_QP_ATTR_MASK, 0);
	int ret = -EINVAL;

	uabi_attr_get(call, UABI_ATTR_XRCD_QP_ATTR, &attr, sizeof(attr));
	mutex_lock(&call->dev->lock);
	reg = uabi_xrc_find_reg(call->ctx, target_domain(call), qpn);
	if (reg)
		ret = uabi_qp_modify(call->dev, reg->qp, &attr, mask);
	mutex_unlock(&call->dev->lock);
	return ret;
}

static int xrcd_query_rcv_qp(struct uabi_call *call)
{
	struct uabi_qp_handle *reg;
	u32 qpn = uabi_attr_get_u32(call, UABI_ATTR_XRCD_QPN, 0);
	int ret = -EINVAL;

	mutex_lock(&call->dev->lock);
	reg = uabi_xrc_find_reg(call->ctx, target_domain(call), qpn);
	if (reg) {
		uabi_qp_fill_query(call, reg->qp, UABI_ATTR_XRCD_QP_ATTR);
		ret = 0;
	}
	mutex_unlock(&call->dev->lock);
	return ret;
}

const struct uabi_object_def uabi_type_xrcd = {
	.id = UABI_OBJ_XRCD,
	.name = "xrcd",
	.data_size = sizeof(struct uabi_xrcd),
	.destroy = xrcd_destroy,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = xrcd_open,
		  UABI_ATTRS(UABI_FD_IN(UABI_ATTR_XRCD_FD, 0),
			     UABI_IN_FLAGS(UABI_ATTR_XRCD_OFLAGS,
					   UABI_XRCD_O_CREAT | UABI_XRCD_O_EXCL, 0)) },
		UABI_DESTROY_METHOD,
		{ .id = UABI_XRCD_REG_RCV_QP, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .creates = UABI_OBJ_QP,	/* the registration */
		  .handle_access = UABI_ACCESS_READ, .handler = xrcd_reg_rcv_qp,
		  UABI_ATTRS({ .id = UABI_ATTR_XRCD_QPN,
			       .flags = MAND | UABI_SPEC_F_OUTPUT | UABI_SPEC_F_INOUT,
			       .min_len = sizeof(u32), .max_len = sizeof(u32) },
			     UABI_IN_MIN(UABI_ATTR_XRCD_QP_INIT, struct uabi_qp_init,
					 UABI_END(struct uabi_qp_init, create_flags), 0),
			     UABI_IN(UABI_ATTR_XRCD_USER_HANDLE, u64, 0)) },
		{ .id = UABI_XRCD_UNREG_RCV_QP, .handle_access = UABI_ACCESS_READ,
		  .reaches_beyond_handle = true,
		  .handler = xrcd_unreg_rcv_qp,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_XRCD_QPN, u32, MAND)) },
		{ .id = UABI_XRCD_MODIFY_RCV_QP, .handle_access = UABI_ACCESS_READ,
		  .reaches_beyond_handle = true,
		  .handler = xrcd_modify_rcv_qp,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_XRCD_QPN, u32, MAND),
			     UABI_IN_MIN(UABI_ATTR_XRCD_QP_ATTR, struct uabi_qp_attr,
					 UABI_END(struct uabi_qp_attr, alt_timeout), MAND),
			     UABI_IN_FLAGS(UABI_ATTR_XRCD_QP_ATTR_MASK,
					   UABI_QP_ATTR_MASK_ALL, MAND)) },
		{ .id = UABI_XRCD_QUERY_RCV_QP, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = xrcd_query_rcv_qp,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_XRCD_QPN, u32, MAND),
			     UABI_OUT(UABI_ATTR_XRCD_QP_ATTR, struct uabi_qp_attr, MAND)) },
	),
};
