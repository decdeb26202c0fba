/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The driver interface.  A driver fills a struct uabi_device_ops and
 * registers a struct uabi_device.  An op left NULL answers -EOPNOTSUPP.
 * Drivers may add objects in the driver namespace (UABI_DRIVER_NS) with
 * their own methods and attributes; discovery reports them with the core's.
 */
#ifndef UABI_DRIVER_H
#define UABI_DRIVER_H

struct uabi_device_ops {
	const char *driver_name;

	int (*query_device)(struct uabi_device *dev, struct uabi_device_attr *attr);
	int (*query_port)(struct uabi_device *dev, u32 port,
			  struct uabi_port_attr *attr);
	int (*query_gid)(struct uabi_device *dev, u32 port, u32 index, u8 gid[16]);
	int (*query_pkey)(struct uabi_device *dev, u32 port, u32 index, u16 *pkey);

	int (*alloc_pd)(struct uabi_device *dev, struct uabi_pd *pd);
	void (*dealloc_pd)(struct uabi_device *dev, struct uabi_pd *pd);
	/* Fills mr->lkey / mr->rkey. */
	int (*reg_mr)(struct uabi_device *dev, struct uabi_mr *mr);
	void (*dereg_mr)(struct uabi_device *dev, struct uabi_mr *mr);
	/* In place, keys unchanged: @mr still holds the old registration,
	 * @reg and @pd are the new one (the core stores them on success). */
	int (*rereg_mr)(struct uabi_device *dev, struct uabi_mr *mr,
			const struct uabi_mr_reg *reg, struct uabi_pd *pd);
	/* May round cq->cqe up. */
	int (*create_cq)(struct uabi_device *dev, struct uabi_cq *cq);
	int (*resize_cq)(struct uabi_device *dev, struct uabi_cq *cq, u32 cqe);
	void (*destroy_cq)(struct uabi_device *dev, struct uabi_cq *cq);
	/* Fills qp->qpn and may round qp->init.cap up. */
	int (*create_qp)(struct uabi_device *dev, struct uabi_qp *qp);
	/* Called after the core validated a transition, before it applies. */
	int (*modify_qp)(struct uabi_device *dev, struct uabi_qp *qp,
			 const struct uabi_qp_attr *attr, u32 mask);
	/* @why: a QP whose context closes under it (UABI_DESTROY_CLOSE) was
	 * not destroyed by its owner, whose peers may still wait on it. */
	void (*destroy_qp)(struct uabi_device *dev, struct uabi_qp *qp,
			   enum uabi_destroy_reason why);
	int (*create_srq)(struct uabi_device *dev, struct uabi_srq *srq);
	int (*modify_srq)(struct uabi_device *dev, struct uabi_srq *srq,
			  const struct uabi_srq_attr *attr, u32 mask);
	void (*destroy_srq)(struct uabi_device *dev, struct uabi_srq *srq);
	int (*create_ah)(struct uabi_device *dev, struct uabi_ah *ah);
	void (*destroy_ah)(struct uabi_device *dev, struct uabi_ah *ah);
	/* Memory windows: alloc_mw fills mw->rkey; dealloc_mw forgets the
	 * window (and unbinds it).  bind_mw gets a bind the core checked
	 * (PDs, access, the range within @mr; @mr NULL: unbind a type 1
	 * window), checks that bind->rkey keeps the window's index, and
	 * publishes it with uabi_mw_set_binding().  Invalidations are the
	 * driver's own (they name a key). */
	/* A UD QP joins / leaves a multicast group (checked: a multicast GID
	 * and LID, not attached already / attached).  attach_mcast answers
	 * -ENOMEM past max_mcast_grp or max_mcast_qp_attach. */
	int (*attach_mcast)(struct uabi_device *dev, struct uabi_qp *qp,
			    const struct uabi_mcast *m);
	void (*detach_mcast)(struct uabi_device *dev, struct uabi_qp *qp,
			     const struct uabi_mcast *m);
	int (*alloc_mw)(struct uabi_device *dev, struct uabi_mw *mw);
	void (*dealloc_mw)(struct uabi_device *dev, struct uabi_mw *mw);
	int (*bind_mw)(struct uabi_device *dev, struct uabi_mw *mw, struct uabi_mr *mr,
		       struct uabi_qp *qp, const struct uabi_mw_bind *bind);

	/* A user's first context opens, its last one closed: per-user
	 * state in user->drv (called with dev->lock held). */
	int (*user_open)(struct uabi_device *dev, struct uabi_user *user);
	void (*user_close)(struct uabi_device *dev, struct uabi_user *user);

	/* Driver-namespace objects. */
	const struct uabi_object_def *const *objects;
	u16 num_objects;
};

#endif /* UABI_DRIVER_H */
