// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The software RDMA device, control half: what it is (device and port
 * attributes, one LID and one GID that agree), and the numbers it hands
 * out (QPNs, memory keys, CQ and SRQ numbers).  The data path lives in
 * providers/sw.
 */
#include <uabi/core.h>
#include <rdma/uabi_sw.h>
#include "sw.h"

#define SW_MAX_QP 16384
#define SW_MAX_MR 65536
#define SW_MAX_CQ 16384
#define SW_MAX_SRQ 16384
#define SW_FIRST_QPN 0x11	/* QP0/QP1 and a few more stay reserved */

#define IB_PORT_DOWN 1
#define IB_PORT_ACTIVE 4
#define IB_EVENT_PORT_ACTIVE 9
#define IB_EVENT_PORT_ERR 10

/* A number allocator that hands numbers out round-robin, so that a number
 * just freed is not reused at once (stale peers then miss cleanly). */
struct sw_numbers {
	u32 first;
	u32 size;
	u32 next;
	u32 in_use;
	u8 *used;
};

struct sw_dev {
	struct uabi_device dev;
	struct mutex lock;
	struct sw_numbers qpns, keys, cqns, srqns;
	u32 port_state;
};

static struct sw_dev *to_sw(struct uabi_device *dev)
{
	return container_of(dev, struct sw_dev, dev);
}

static int numbers_init(struct sw_numbers *n, u32 first, u32 size)
{
	n->first = first;
	n->size = size;
	n->next = 0;
	n->in_use = 0;
	n->used = kvzalloc(size, GFP_KERNEL);
	return n->used ? 0 : -ENOMEM;
}

static int numbers_get(struct sw_dev *sw, struct sw_numbers *n, u32 *out)
{
	u32 i;
	int ret = -ENOMEM;

	mutex_lock(&sw->lock);
	for (i = 0; i < n->size; i++) {
		u32 idx = (n->next + i) % n->size;

		if (!n->used[idx]) {
			n->used[idx] = 1;
			n->next = idx + 1;
			n->in_use++;
			*out = n->first + idx;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&sw->lock);
	return ret;
}

static void numbers_put(struct sw_dev *sw, struct sw_numbers *n, u32 v)
{
	mutex_lock(&sw->lock);
	if (!WARN_ON(v < n->first || v - n->first >= n->size ||
		     !n->used[v - n->first])) {
		n->used[v - n->first] = 0;
		n->in_use--;
	}
	mutex_unlock(&sw->lock);
}

/* ----------------------------------------------------------- attributes */
static int sw_query_device(struct uabi_device *dev, struct uabi_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->fw_ver = 1ull << 32;
	a->node_guid = UABI_SW_NODE_GUID;
	a->sys_image_guid = UABI_SW_NODE_GUID;
	a->max_mr_size = 1ull << 40;
	a->page_size_cap = 0xfffff000u;
	a->vendor_id = 0;
	a->vendor_part_id = 0;
	a->hw_ver = 1;
	a->max_qp = SW_MAX_QP;
	a->max_qp_wr = 16384;
	a->device_cap_flags = (1u << 10) | (1u << 11) | (1u << 12) |
			      (1u << 13) | (1u << 20);	/* see uabi_sw.h */
	a->max_sge = 32;
	a->max_sge_rd = 32;
	a->max_cq = SW_MAX_CQ;
	a->max_cqe = 65536;
	a->max_mr = SW_MAX_MR;
	a->max_pd = 16384;
	a->max_qp_rd_atom = 128;
	a->max_qp_init_rd_atom = 128;
	a->max_res_rd_atom = 16384;
	a->atomic_cap = 1;	/* IBV_ATOMIC_HCA */
	a->max_mw = 0;
	a->max_ah = 65536;
	a->max_srq = SW_MAX_SRQ;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 32;
	a->max_xrcd = 1024;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	a->max_inline_data = 512;
	return 0;
}

static int sw_query_port(struct uabi_device *dev, u32 port,
			 struct uabi_port_attr *a)
{
	if (port != 1)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->state = to_sw(dev)->port_state;
	a->max_mtu = 5;		/* IBV_MTU_4096 */
	a->active_mtu = 5;
	a->gid_tbl_len = 1;
	a->port_cap_flags = 0;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->lid = UABI_SW_PORT_LID;
	a->sm_lid = UABI_SW_PORT_LID;
	a->max_vl_num = 1;
	a->active_width = 2;	/* 4X */
	a->active_speed = 1;
	a->phys_state = a->state == IB_PORT_ACTIVE ? 5 : 3; /* LinkUp/Disabled */
	a->link_layer = 1;	/* IBV_LINK_LAYER_INFINIBAND */
	return 0;
}

/* GID 0 is the link-local GID of the node GUID, so LID and GID agree. */
static int sw_query_gid(struct uabi_device *dev, u32 port, u32 index, u8 gid[16])
{
	u64 guid = UABI_SW_NODE_GUID;
	int i;

	if (port != 1 || index != 0)
		return -EINVAL;
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	for (i = 0; i < 8; i++)
		gid[8 + i] = (u8)(guid >> (56 - 8 * i));
	return 0;
}

static int sw_query_pkey(struct uabi_device *dev, u32 port, u32 index, u16 *pkey)
{
	if (port != 1 || index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

/* ------------------------------------------------------------- numbers */
static int sw_reg_mr(struct uabi_device *dev, struct uabi_mr *mr)
{
	u32 idx;
	int ret = numbers_get(to_sw(dev), &to_sw(dev)->keys, &idx);

	if (ret)
		return ret;
	/* index << 8 | a byte of tag, as hardware keys look */
	mr->lkey = (idx << 8) | 0x5a;
	mr->rkey = mr->lkey;
	return 0;
}

static void sw_dereg_mr(struct uabi_device *dev, struct uabi_mr *mr)
{
	numbers_put(to_sw(dev), &to_sw(dev)->keys, mr->lkey >> 8);
}

static int sw_create_cq(struct uabi_device *dev, struct uabi_cq *cq)
{
	/* Rings are powers of two; one slot stays empty. */
	u32 n = 1;

	while (n < cq->cqe + 1)
		n <<= 1;
	cq->cqe = n - 1;
	return numbers_get(to_sw(dev), &to_sw(dev)->cqns, &cq->cqn);
}

static int sw_resize_cq(struct uabi_device *dev, struct uabi_cq *cq, u32 cqe)
{
	u32 n = 1;

	while (n < cqe + 1)
		n <<= 1;
	cq->cqe = n - 1;
	return 0;
}

static void sw_destroy_cq(struct uabi_device *dev, struct uabi_cq *cq)
{
	numbers_put(to_sw(dev), &to_sw(dev)->cqns, cq->cqn);
}

static int sw_create_qp(struct uabi_device *dev, struct uabi_qp *qp)
{
	struct uabi_qp_cap *cap = &qp->init.cap;

	if (cap->max_send_wr && cap->max_send_sge == 0)
		cap->max_send_sge = 1;
	return numbers_get(to_sw(dev), &to_sw(dev)->qpns, &qp->qpn);
}

static void sw_destroy_qp(struct uabi_device *dev, struct uabi_qp *qp)
{
	numbers_put(to_sw(dev), &to_sw(dev)->qpns, qp->qpn);
}

static int sw_create_srq(struct uabi_device *dev, struct uabi_srq *srq)
{
	if (srq->srq_type != UABI_SRQT_XRC)
		return 0;
	return numbers_get(to_sw(dev), &to_sw(dev)->srqns, &srq->srqn);
}

static void sw_destroy_srq(struct uabi_device *dev, struct uabi_srq *srq)
{
	if (srq->srq_type == UABI_SRQT_XRC)
		numbers_put(to_sw(dev), &to_sw(dev)->srqns, srq->srqn);
}

/* ----------------------------------------------- driver-namespace object */
static int sw_port_set_state(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	u32 port = uabi_attr_get_u32(call, UABI_SW_ATTR_PORT_NUM, 0);
	u32 state = uabi_attr_get_u32(call, UABI_SW_ATTR_PORT_STATE, 0);
	struct uabi_event ev = { .element = port };

	if (port != 1 || (state != IB_PORT_ACTIVE && state != IB_PORT_DOWN))
		return -EINVAL;
	mutex_lock(&sw->lock);
	if (sw->port_state == state) {
		mutex_unlock(&sw->lock);
		return 0;
	}
	sw->port_state = state;
	mutex_unlock(&sw->lock);
	ev.event_type = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE
						: IB_EVENT_PORT_ERR;
	uabi_raise_async_event(call->dev, NULL, &ev);
	return 0;
}

static int sw_port_stats(struct uabi_call *call)
{
	struct sw_dev *sw = to_sw(call->dev);
	struct uabi_sw_stats st;

	mutex_lock(&sw->lock);
	st.qpns_in_use = sw->qpns.in_use;
	st.mr_keys_in_use = sw->keys.in_use;
	st.cqns_in_use = sw->cqns.in_use;
	st.srqns_in_use = sw->srqns.in_use;
	mutex_unlock(&sw->lock);
	return uabi_attr_put(call, UABI_SW_ATTR_STATS, &st, sizeof(st));
}

static const struct uabi_object_def sw_port_object = {
	.id = UABI_SW_OBJ_PORT,
	.name = "sw_port",
	UABI_METHODS(
		{ .id = UABI_SW_PORT_SET_STATE, .handler = sw_port_set_state,
		  UABI_ATTRS(UABI_IN(UABI_SW_ATTR_PORT_NUM, u32, MAND),
			     UABI_IN(UABI_SW_ATTR_PORT_STATE, u32, MAND)) },
		{ .id = UABI_SW_PORT_STATS, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handler = sw_port_stats,
		  UABI_ATTRS(UABI_OUT(UABI_SW_ATTR_STATS, struct uabi_sw_stats, MAND)) },
	),
};

static const struct uabi_object_def *const sw_objects[] = { &sw_port_object };

static const struct uabi_device_ops sw_ops = {
	.driver_name = "sw",
	.query_device = sw_query_device,
	.query_port = sw_query_port,
	.query_gid = sw_query_gid,
	.query_pkey = sw_query_pkey,
	.reg_mr = sw_reg_mr,
	.dereg_mr = sw_dereg_mr,
	.create_cq = sw_create_cq,
	.resize_cq = sw_resize_cq,
	.destroy_cq = sw_destroy_cq,
	.create_qp = sw_create_qp,
	.destroy_qp = sw_destroy_qp,
	.create_srq = sw_create_srq,
	.destroy_srq = sw_destroy_srq,
	.objects = sw_objects,
	.num_objects = ARRAY_SIZE(sw_objects),
};

static void sw_free(struct sw_dev *sw)
{
	kvfree(sw->qpns.used);
	kvfree(sw->keys.used);
	kvfree(sw->cqns.used);
	kvfree(sw->srqns.used);
	kfree(sw);
}

struct uabi_device *uabi_sw_create(void)
{
	struct sw_dev *sw = kzalloc(sizeof(*sw), GFP_KERNEL);
	int ret;

	if (!sw)
		return ERR_PTR(-ENOMEM);
	mutex_init(&sw->lock);
	sw->port_state = IB_PORT_ACTIVE;
	ret = numbers_init(&sw->qpns, SW_FIRST_QPN, SW_MAX_QP);
	if (!ret)
		ret = numbers_init(&sw->keys, 1, SW_MAX_MR);
	if (!ret)
		ret = numbers_init(&sw->cqns, 1, SW_MAX_CQ);
	if (!ret)
		ret = numbers_init(&sw->srqns, 1, SW_MAX_SRQ);
	if (ret)
		goto err;
	strscpy_pad(sw->dev.name, "uabi_sw0", sizeof(sw->dev.name));
	sw->dev.ops = &sw_ops;
	ret = uabi_device_register(&sw->dev);
	if (ret)
		goto err;
	return &sw->dev;
err:
	sw_free(sw);
	return ERR_PTR(ret);
}

void uabi_sw_destroy(struct uabi_device *dev)
{
	uabi_device_unregister(dev);
	sw_free(to_sw(dev));
}
