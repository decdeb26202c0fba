// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The software RDMA device, control half: what it is (device and port
 * attributes, one LID and one GID that agree), its users' domains, and
 * the numbers each domain hands out (QPNs, memory keys, CQ and SRQ
 * numbers, PD numbers).  The data path lives in providers/sw.
 */
#include "sw_internal.h"
#include "sw.h"

static int numbers_init(struct sw_numbers *n, u32 first, u32 size)
{
	n->first = first;
	n->size = size;
	n->next = 0;
	n->in_use = 0;
	n->used = kvzalloc(size, GFP_KERNEL);
	return n->used ? 0 : -ENOMEM;
}

static int numbers_get(struct sw_domain *dom, struct sw_numbers *n, u32 *out)
{
	u32 i;
	int ret = -ENOMEM;

	mutex_lock(&dom->lock);
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
	mutex_unlock(&dom->lock);
	return ret;
}

static void numbers_put(struct sw_domain *dom, struct sw_numbers *n, u32 v)
{
	mutex_lock(&dom->lock);
	if (!WARN_ON(v < n->first || v - n->first >= n->size ||
		     !n->used[v - n->first])) {
		n->used[v - n->first] = 0;
		n->in_use--;
	}
	mutex_unlock(&dom->lock);
}

/* ----------------------------------------------------------- attributes */
static int sw_query_device(struct uabi_device *dev, struct uabi_device_attr *a)
{
	struct sw_dev *sw = to_sw(dev);
	static const u8 no_mac[6];

	memset(a, 0, sizeof(*a));
	a->fw_ver = 1ull << 32;
	a->node_guid = UABI_SW_NODE_GUID;
	/* A RoCE device: the EUI-64 of its interface's MAC, as rxe does. */
	mutex_lock(&sw->lock);
	if (sw->roce && memcmp(sw->link.mac, no_mac, 6)) {
		const u8 *m = sw->link.mac;

		a->node_guid = ((u64)(m[0] ^ 2) << 56) | ((u64)m[1] << 48) | ((u64)m[2] << 40) |
			       (0xfffeull << 24) | ((u64)m[3] << 16) | ((u64)m[4] << 8) | m[5];
	}
	mutex_unlock(&sw->lock);
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = 1ull << 40;
	a->page_size_cap = 0xfffff000u;
	a->vendor_id = UABI_SW_VENDOR_ID;
	a->vendor_part_id = UABI_SW_VENDOR_PART_ID;
	a->hw_ver = 1;
	/* Limits of one user (its domain): the core refuses past them. */
	a->max_qp = SW_DOM_QP;
	a->max_qp_wr = 16384;
	a->device_cap_flags = UABI_DEVICE_CAP_PORT_ACTIVE_EVENT |
			      UABI_DEVICE_CAP_SYS_IMAGE_GUID |
			      UABI_DEVICE_CAP_RC_RNR_NAK_GEN |
			      UABI_DEVICE_CAP_SRQ_RESIZE | UABI_DEVICE_CAP_XRC |
			      UABI_DEVICE_CAP_MEM_WINDOW | UABI_DEVICE_CAP_MEM_WINDOW_TYPE_2B;
	a->max_sge = 32;
	a->max_sge_rd = 32;
	a->max_cq = SW_DOM_CQ;
	a->max_cqe = 65535;	/* a ring of 65536: one slot stays empty */
	a->max_mr = SW_DOM_MR;
	a->max_pd = SW_DOM_PD;
	a->max_qp_rd_atom = 128;
	a->max_qp_init_rd_atom = 128;
	a->max_res_rd_atom = 16384;
	a->atomic_cap = UABI_ATOMIC_HCA;
	a->max_mw = SW_DOM_MW;
	a->max_mcast_grp = SW_DOM_MCG;
	a->max_mcast_qp_attach = UABI_SW_MCG_QPS;
	a->max_total_mcast_qp_attach = SW_DOM_MCG * UABI_SW_MCG_QPS;
	a->max_ah = 65536;
	a->max_srq = SW_DOM_SRQ;
	a->max_srq_wr = 16384;
	a->max_srq_sge = 32;
	a->max_xrcd = 1024;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	a->max_inline_data = SW_MAX_INLINE;
	return 0;
}

/* The largest IB MTU whose RoCEv2 packets (IPv6, UDP, BTH, the largest
 * extended headers, ICRC: 84 bytes) fit an IP MTU; 0: none. */
static u32 sw_ib_mtu_for(u32 ip_mtu)
{
	u32 m;

	for (m = UABI_MTU_4096; m >= UABI_MTU_256; m--)
		if ((128u << m) + 84 <= ip_mtu)
			return m;
	return 0;
}

static void sw_query_roce_port(struct sw_dev *sw, struct uabi_port_attr *a)
{
	u32 mtu;

	mutex_lock(&sw->lock);
	mtu = sw_ib_mtu_for(sw->link.ip_mtu);
	a->state = sw->link.carrier && mtu && sw->port_state == UABI_PORT_ACTIVE ? UABI_PORT_ACTIVE
										  : UABI_PORT_DOWN;
	mutex_unlock(&sw->lock);
	a->max_mtu = UABI_MTU_4096;
	a->active_mtu = mtu ? mtu : UABI_MTU_256;
	a->gid_tbl_len = UABI_SW_LINK_GIDS;
	a->port_cap_flags = 0;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->max_vl_num = 1;
	a->active_width = UABI_WIDTH_1X;
	a->active_speed = UABI_SPEED_SDR;
	a->phys_state = a->state == UABI_PORT_ACTIVE ? UABI_PORT_PHYS_STATE_LINK_UP
						     : UABI_PORT_PHYS_STATE_DISABLED;
	a->link_layer = UABI_LINK_LAYER_ETHERNET;
}

static int sw_query_port(struct uabi_device *dev, u32 port,
			 struct uabi_port_attr *a)
{
	if (port != 1)
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	if (to_sw(dev)->roce) {
		sw_query_roce_port(to_sw(dev), a);
		return 0;
	}
	a->state = to_sw(dev)->port_state;
	a->max_mtu = UABI_MTU_4096;
	a->active_mtu = UABI_MTU_4096;
	a->gid_tbl_len = 1;
	/* IsSM: the port is its subnet's master SM (sm_lid == lid), and its
	 * management agent answers SMInfo (docs/fsview.md). */
	a->port_cap_flags = 1u << 1;
	a->max_msg_sz = 1u << 31;
	a->pkey_tbl_len = 1;
	a->lid = UABI_SW_PORT_LID;
	a->sm_lid = UABI_SW_PORT_LID;
	a->max_vl_num = 1;
	a->active_width = UABI_WIDTH_4X;
	a->active_speed = UABI_SPEED_SDR;
	a->phys_state = a->state == UABI_PORT_ACTIVE ? UABI_PORT_PHYS_STATE_LINK_UP
						     : UABI_PORT_PHYS_STATE_DISABLED;
	a->link_layer = UABI_LINK_LAYER_INFINIBAND;
	return 0;
}

/* GID 0 is the link-local GID of the node GUID, so LID and GID agree. */
static int sw_query_gid(struct uabi_device *dev, u32 port, u32 index, u8 gid[16])
{
	u64 guid = UABI_SW_NODE_GUID;
	int i;

	struct sw_dev *sw = to_sw(dev);

	if (sw->roce) {
		if (port != 1 || index >= UABI_SW_LINK_GIDS)
			return -EINVAL;
		mutex_lock(&sw->lock);
		if (index < sw->link.num_gids)
			memcpy(gid, sw->link.gids[index], 16);
		else
			memset(gid, 0, 16);	/* an empty entry */
		mutex_unlock(&sw->lock);
		return 0;
	}
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
u32 sw_pd_number(const struct uabi_pd *pd)
{
	return (u32)(uintptr_t)pd->drv;
}

/* XRC domains have no driver hook; number them on first use.  Numbers are
 * never reused (a 32-bit counter), so the domain can go without telling. */
u32 sw_xrcd_number(struct sw_dev *sw, struct uabi_xrcd_shared *x)
{
	u32 n;

	mutex_lock(&sw->lock);
	if (!x->drv) {
		if (!++sw->xrcd_next)
			++sw->xrcd_next;
		x->drv = (void *)(uintptr_t)sw->xrcd_next;
	}
	n = (u32)(uintptr_t)x->drv;
	mutex_unlock(&sw->lock);
	return n;
}

static int sw_alloc_pd(struct uabi_device *dev, struct uabi_pd *pd)
{
	struct sw_domain *dom = sw_dom_of_user(pd->user);
	u32 n;
	int ret = numbers_get(dom, &dom->pdns, &n);

	if (!ret)
		pd->drv = (void *)(uintptr_t)n;
	return ret;
}

static void sw_dealloc_pd(struct uabi_device *dev, struct uabi_pd *pd)
{
	struct sw_domain *dom = sw_dom_of_user(pd->user);

	numbers_put(dom, &dom->pdns, sw_pd_number(pd));
}

static int sw_reg_mr(struct uabi_device *dev, struct uabi_mr *mr)
{
	struct sw_domain *dom = sw_dom_of_ctx(mr->ctx);
	u32 idx;
	u8 gen;
	int ret = numbers_get(dom, &dom->keys, &idx);

	if (ret)
		return ret;
	/* index << 8 | a generation byte, as hardware keys look: a key
	 * used after deregistration misses even when the index is reused. */
	mutex_lock(&dom->lock);
	gen = ++dom->keygen[idx];
	mutex_unlock(&dom->lock);
	mr->lkey = (idx << 8) | gen;
	mr->rkey = mr->lkey;
	sw_arena_mr_publish(dom, mr, idx);
	return 0;
}

/* The same key, the new registration: the entry is republished under its
 * sequence counter, so the next lookup of the data path sees it whole. */
static int sw_rereg_mr(struct uabi_device *dev, struct uabi_mr *mr,
		       const struct uabi_mr_reg *reg, struct uabi_pd *pd)
{
	struct uabi_mr next = *mr;

	next.reg = *reg;
	next.pd = pd;
	sw_arena_mr_publish(sw_dom_of_ctx(mr->ctx), &next, mr->lkey >> 8);
	return 0;
}

static void sw_dereg_mr(struct uabi_device *dev, struct uabi_mr *mr)
{
	struct sw_domain *dom = sw_dom_of_ctx(mr->ctx);

	sw_arena_mr_clear(dom, mr->lkey >> 8);
	numbers_put(dom, &dom->keys, mr->lkey >> 8);
}

/* ------------------------------------------------------------ multicast */
/* A group is (gid, lid) with the QPs of the user attached to it; a UD
 * send to its LID reaches every one of them (the data path reads the
 * arena's copy). */
static int mcg_find(struct sw_domain *dom, const struct uabi_mcast *m)
{
	int i;

	for (i = 0; i < SW_DOM_MCG; i++) {
		const struct uabi_sw_mcg *g = &dom->mcgs[i];

		if (g->num_qp && g->lid == m->lid && !memcmp(g->gid, m->gid, sizeof(g->gid)))
			return i;
	}
	return -1;
}

static int sw_attach_mcast(struct uabi_device *dev, struct uabi_qp *qp,
			   const struct uabi_mcast *m)
{
	struct sw_domain *dom = sw_dom_of_user(qp->user);
	struct uabi_sw_mcg *g;
	int i, ret = 0;

	mutex_lock(&dom->lock);
	i = mcg_find(dom, m);
	if (i < 0) {
		for (i = 0; i < SW_DOM_MCG && dom->mcgs[i].num_qp; i++)
			;
		if (i == SW_DOM_MCG) {
			ret = -ENOMEM;		/* max_mcast_grp */
			goto out;
		}
		memcpy(dom->mcgs[i].gid, m->gid, sizeof(m->gid));
		dom->mcgs[i].lid = m->lid;
	}
	g = &dom->mcgs[i];
	if (g->num_qp == UABI_SW_MCG_QPS) {
		ret = -ENOMEM;			/* max_mcast_qp_attach */
		goto out;
	}
	g->qpn[g->num_qp++] = qp->qpn;
	sw_arena_mcg_publish(dom, i);
out:
	mutex_unlock(&dom->lock);
	return ret;
}

static void sw_detach_mcast(struct uabi_device *dev, struct uabi_qp *qp,
			    const struct uabi_mcast *m)
{
	struct sw_domain *dom = sw_dom_of_user(qp->user);
	struct uabi_sw_mcg *g;
	int i = -1;
	u16 k;

	mutex_lock(&dom->lock);
	i = mcg_find(dom, m);
	if (i >= 0) {
		g = &dom->mcgs[i];
		for (k = 0; k < g->num_qp && g->qpn[k] != qp->qpn; k++)
			;
		if (k < g->num_qp) {
			g->qpn[k] = g->qpn[--g->num_qp];
			g->qpn[g->num_qp] = 0;
			sw_arena_mcg_publish(dom, i);
		}
	}
	mutex_unlock(&dom->lock);
}

/* ------------------------------------------------------- memory windows */
/* A window has a key index of its own (from the MRs' keys); its entry in
 * the arena's key table is there only while it is bound.  Binds and
 * invalidations change it under dom->lock. */
static int sw_alloc_mw(struct uabi_device *dev, struct uabi_mw *mw)
{
	struct sw_domain *dom = sw_dom_of_ctx(mw->ctx);
	u32 idx;
	int ret = numbers_get(dom, &dom->keys, &idx);

	if (ret)
		return ret;
	mutex_lock(&dom->lock);
	mw->rkey = (idx << 8) | ++dom->keygen[idx];
	dom->mw_table[idx] = mw;
	mutex_unlock(&dom->lock);
	return 0;
}

static void sw_dealloc_mw(struct uabi_device *dev, struct uabi_mw *mw)
{
	struct sw_domain *dom = sw_dom_of_ctx(mw->ctx);
	u32 idx = mw->rkey >> 8;

	mutex_lock(&dom->lock);
	dom->mw_table[idx] = NULL;
	sw_arena_mr_clear(dom, idx);
	uabi_mw_set_binding(mw, NULL, mw->rkey);
	mutex_unlock(&dom->lock);
	numbers_put(dom, &dom->keys, idx);
}

static int sw_bind_mw(struct uabi_device *dev, struct uabi_mw *mw, struct uabi_mr *mr,
		      struct uabi_qp *qp, const struct uabi_mw_bind *bind)
{
	struct sw_domain *dom = sw_dom_of_ctx(mw->ctx);
	u32 idx = mw->rkey >> 8;

	if ((bind->rkey >> 8) != idx)
		return -EINVAL;
	mutex_lock(&dom->lock);
	if (mw->type == UABI_MW_TYPE_2 && mw->bound_mr) {
		/* invalidated and bound again meanwhile? the core's check
		 * ran outside this lock */
		mutex_unlock(&dom->lock);
		return -EINVAL;
	}
	if (!mr)
		sw_arena_mr_clear(dom, idx);	/* type 1, length 0: unbound */
	else
		sw_arena_mw_publish(dom, mw, mr, bind, bind->rkey,
				    mw->type == UABI_MW_TYPE_2 ? qp->qpn : 0);
	mw->qpn = mw->type == UABI_MW_TYPE_2 ? qp->qpn : 0;
	uabi_mw_set_binding(mw, mr, bind->rkey);
	mutex_unlock(&dom->lock);
	return 0;
}

static u32 cq_entries(u32 cqe)
{
	/* Rings are powers of two; one slot stays empty. */
	u32 n = 1;

	while (n < cqe + 1)
		n <<= 1;
	return n;
}

static int sw_create_cq(struct uabi_device *dev, struct uabi_cq *cq)
{
	struct sw_domain *dom = sw_dom_of_ctx(cq->uobj->ctx);
	u32 n = cq_entries(cq->cqe);
	int ret;

	cq->cqe = n - 1;
	ret = numbers_get(dom, &dom->cqns, &cq->cqn);
	if (ret)
		return ret;
	ret = sw_arena_cq_create(dom, cq, n);
	if (ret) {
		numbers_put(dom, &dom->cqns, cq->cqn);
		return ret;
	}
	mutex_lock(&dom->lock);
	dom->cq_table[cq->cqn - 1] = cq;
	mutex_unlock(&dom->lock);
	return 0;
}

static int sw_resize_cq(struct uabi_device *dev, struct uabi_cq *cq, u32 cqe)
{
	u32 n = cq_entries(cqe);
	int ret = sw_arena_cq_resize(sw_dom_of_ctx(cq->uobj->ctx), cq, n);

	if (!ret)
		cq->cqe = n - 1;
	return ret;
}

static void sw_destroy_cq(struct uabi_device *dev, struct uabi_cq *cq)
{
	struct sw_domain *dom = sw_dom_of_ctx(cq->uobj->ctx);

	mutex_lock(&dom->lock);
	dom->cq_table[cq->cqn - 1] = NULL;
	mutex_unlock(&dom->lock);
	sw_arena_cq_destroy(dom, cq);
	numbers_put(dom, &dom->cqns, cq->cqn);
}

static int sw_create_qp(struct uabi_device *dev, struct uabi_qp *qp)
{
	struct sw_domain *dom = sw_dom_of_user(qp->user);
	struct uabi_qp_cap *cap = &qp->init.cap;
	int ret;

	if (cap->max_send_wr && cap->max_send_sge == 0)
		cap->max_send_sge = 1;
	/* A send WQE has room for its SGEs or as many bytes inline, as
	 * rxe's and mlx5's do: a QP may send that much inline even if it
	 * asked for less (rdma_xclient asks for 0 and sends 16 bytes). */
	if (cap->max_send_wr && cap->max_inline_data < cap->max_send_sge * 16)
		cap->max_inline_data = min_t(u32, cap->max_send_sge * 16, SW_MAX_INLINE);
	ret = numbers_get(dom, &dom->qpns, &qp->qpn);
	if (ret)
		return ret;
	ret = sw_arena_qp_create(dom, qp);
	if (ret) {
		numbers_put(dom, &dom->qpns, qp->qpn);
		return ret;
	}
	mutex_lock(&dom->lock);
	dom->qp_table[qp->qpn - sw_qp_first(dom)] = qp;
	mutex_unlock(&dom->lock);
	return 0;
}

/* The domain whose QPN range holds @qpn, if another user's: connections
 * never cross users (docs/security.md).  NULL for a QPN of no domain. */
static struct sw_domain *qpn_owner(struct sw_dev *sw, u32 qpn)
{
	struct sw_domain *dom = NULL;
	u32 d;

	if (qpn < SW_FIRST_QPN)
		return NULL;
	d = (qpn - SW_FIRST_QPN) / SW_DOM_QP;
	if (d >= SW_MAX_DOMAINS)
		return NULL;
	mutex_lock(&sw->lock);
	dom = sw->domains[d];
	mutex_unlock(&sw->lock);
	return dom;
}

static int sw_modify_qp(struct uabi_device *dev, struct uabi_qp *qp,
			const struct uabi_qp_attr *attr, u32 mask)
{
	struct sw_domain *dom = sw_dom_of_user(qp->user);

	/* Another user's QP as the destination: refused, clearly, at once
	 * (the data path could never reach it). */
	if (mask & UABI_QP_DEST_QPN) {
		struct sw_domain *owner = qpn_owner(dom->sw, attr->dest_qp_num);

		if (owner && owner != dom)
			return -EPERM;
	}
	return sw_arena_qp_modify(dom, qp, attr, mask);
}

static void sw_destroy_qp(struct uabi_device *dev, struct uabi_qp *qp,
			  enum uabi_destroy_reason why)
{
	struct sw_domain *dom = sw_dom_of_user(qp->user);

	mutex_lock(&dom->lock);
	dom->qp_table[qp->qpn - sw_qp_first(dom)] = NULL;
	mutex_unlock(&dom->lock);
	/* Destroyed by the teardown of its context, not by its owner
	 * (an XRC receive QP has no creator context: its peers keep it). */
	if (why == UABI_DESTROY_CLOSE && qp->ctx)
		sw_arena_qp_orphan_peer(dom, qp);
	sw_arena_qp_destroy(dom, qp);
	numbers_put(dom, &dom->qpns, qp->qpn);
}

/* Every SRQ has a slot (its arena descriptor); an XRC SRQ's number is its
 * slot, so that senders naming the srqn find it. */
static int sw_create_srq(struct uabi_device *dev, struct uabi_srq *srq)
{
	struct sw_domain *dom = sw_dom_of_ctx(srq->ctx);
	u32 slot;
	int ret = numbers_get(dom, &dom->srqns, &slot);

	if (ret)
		return ret;
	ret = sw_arena_srq_create(dom, srq, slot);
	if (ret) {
		numbers_put(dom, &dom->srqns, slot);
		return ret;
	}
	if (srq->srq_type == UABI_SRQT_XRC)
		srq->srqn = slot;
	mutex_lock(&dom->lock);
	dom->srq_table[slot - 1] = srq;
	mutex_unlock(&dom->lock);
	return 0;
}

static int sw_modify_srq(struct uabi_device *dev, struct uabi_srq *srq,
			 const struct uabi_srq_attr *attr, u32 mask)
{
	return sw_arena_srq_modify(sw_dom_of_ctx(srq->ctx), srq, attr, mask);
}

static void sw_destroy_srq(struct uabi_device *dev, struct uabi_srq *srq)
{
	struct sw_domain *dom = sw_dom_of_ctx(srq->ctx);
	u32 slot = sw_srq_slot(srq);

	mutex_lock(&dom->lock);
	dom->srq_table[slot - 1] = NULL;
	mutex_unlock(&dom->lock);
	sw_arena_srq_destroy(dom, srq, slot);
	numbers_put(dom, &dom->srqns, slot);
}

/* ---------------------------------------------------------------- domains */
static void domain_free(struct sw_domain *dom)
{
	sw_arena_fini(dom);
	kvfree(dom->qpns.used);
	kvfree(dom->keys.used);
	kvfree(dom->cqns.used);
	kvfree(dom->srqns.used);
	kvfree(dom->pdns.used);
	kvfree(dom->keygen);
	kvfree(dom->cq_table);
	kvfree(dom->srq_table);
	kvfree(dom->qp_table);
	kvfree(dom->mw_table);
	kvfree(dom->mcgs);
	kfree(dom);
}

/* The user's counters, kept when its arena goes (in the slot it had, else
 * a free one, else the oldest), and put into its next one. */
static void counters_save(struct sw_dev *sw, struct sw_domain *dom)
{
	struct sw_saved_counters *slot = NULL;
	u32 i;

	if (!sw_has_arena(dom))
		return;
	mutex_lock(&sw->lock);
	for (i = 0; i < SW_SAVED_COUNTERS; i++) {
		struct sw_saved_counters *s = &sw->saved[i];

		if (s->used && s->uid == dom->uid) {
			slot = s;
			break;
		}
		if (!slot || (slot->used && (!s->used || s->stamp < slot->stamp)))
			slot = s;
	}
	slot->uid = dom->uid;
	slot->used = 1;
	slot->stamp = ++sw->saved_stamp;
	sw_arena_counters_save(dom, &slot->c);
	mutex_unlock(&sw->lock);
}

static void counters_restore(struct sw_dev *sw, struct sw_domain *dom)
{
	u32 i;

	if (!sw_has_arena(dom))
		return;
	mutex_lock(&sw->lock);
	for (i = 0; i < SW_SAVED_COUNTERS; i++) {
		struct sw_saved_counters *s = &sw->saved[i];

		if (s->used && s->uid == dom->uid) {
			sw_arena_counters_restore(dom, &s->c);
			s->used = 0;
			break;
		}
	}
	mutex_unlock(&sw->lock);
}

/* The slot a user's domain is looked for from (uabi_sw_set_domain_start()). */
static u32 sw_domain_start;

void uabi_sw_set_domain_start(u32 slot)
{
	WRITE_ONCE(sw_domain_start, slot % SW_MAX_DOMAINS);
}

/* A user's first context: its domain, numbers, tables and arena (charged
 * to the memory cgroup of the process that opens it, in the kernel). */
static int sw_user_open(struct uabi_device *dev, struct uabi_user *user)
{
	struct sw_dev *sw = to_sw(dev);
	struct sw_domain *dom = kzalloc(sizeof(*dom), GFP_KERNEL_ACCOUNT);
	u32 start = READ_ONCE(sw_domain_start), i, d = 0;
	int ret;

	if (!dom)
		return -ENOMEM;
	dom->sw = sw;
	dom->uid = user->uid;
	mutex_init(&dom->lock);
	mutex_lock(&sw->lock);
	for (i = 0; i < SW_MAX_DOMAINS; i++) {
		d = (start + i) % SW_MAX_DOMAINS;
		if (!sw->domains[d])
			break;
	}
	if (i == SW_MAX_DOMAINS) {
		mutex_unlock(&sw->lock);
		kfree(dom);
		return -EUSERS;
	}
	dom->index = d;
	sw->domains[d] = dom;	/* reserved; filled in below */
	mutex_unlock(&sw->lock);

	ret = numbers_init(&dom->qpns, sw_qp_first(dom), SW_DOM_QP);
	if (!ret)
		ret = numbers_init(&dom->keys, 1, SW_DOM_KEYS);
	if (!ret)
		ret = numbers_init(&dom->cqns, 1, SW_DOM_CQ);
	if (!ret)
		ret = numbers_init(&dom->srqns, 1, SW_DOM_SRQ);
	if (!ret)
		ret = numbers_init(&dom->pdns, 1, SW_DOM_PD);
	if (ret)
		goto err;
	ret = -ENOMEM;
	dom->keygen = kvzalloc(SW_DOM_KEYS + 1, GFP_KERNEL_ACCOUNT);
	dom->mw_table = kvzalloc(sizeof(*dom->mw_table) * (SW_DOM_KEYS + 1), GFP_KERNEL_ACCOUNT);
	dom->mcgs = kvzalloc(sizeof(*dom->mcgs) * SW_DOM_MCG, GFP_KERNEL_ACCOUNT);
	dom->cq_table = kvzalloc(sizeof(*dom->cq_table) * SW_DOM_CQ, GFP_KERNEL_ACCOUNT);
	dom->srq_table = kvzalloc(sizeof(*dom->srq_table) * SW_DOM_SRQ, GFP_KERNEL_ACCOUNT);
	dom->qp_table = kvzalloc(sizeof(*dom->qp_table) * SW_DOM_QP, GFP_KERNEL_ACCOUNT);
	if (!dom->keygen || !dom->cq_table || !dom->srq_table || !dom->qp_table || !dom->mw_table ||
	    !dom->mcgs)
		goto err;
	ret = sw_arena_init(dom, sw->shm, sw->heap_bytes);
	if (ret)
		goto err;
	counters_restore(sw, dom);
	user->drv = dom;
	return 0;
err:
	mutex_lock(&sw->lock);
	sw->domains[d] = NULL;
	mutex_unlock(&sw->lock);
	domain_free(dom);
	return ret;
}

/* Its last context closed, so every object of the user is gone. */
static void sw_user_close(struct uabi_device *dev, struct uabi_user *user)
{
	struct sw_dev *sw = to_sw(dev);
	struct sw_domain *dom = user->drv;

	if (!dom)
		return;
	WARN_ON(dom->qpns.in_use || dom->cqns.in_use || dom->srqns.in_use ||
		dom->keys.in_use || dom->pdns.in_use);
	counters_save(sw, dom);
	mutex_lock(&sw->lock);
	sw->domains[dom->index] = NULL;
	mutex_unlock(&sw->lock);
	domain_free(dom);
	user->drv = NULL;
}

static const struct uabi_object_def *const sw_objects[] = {
	&sw_port_object, &sw_arena_object,
};

static const struct uabi_device_ops sw_ops = {
	.driver_name = "sw",
	.query_device = sw_query_device,
	.query_port = sw_query_port,
	.query_gid = sw_query_gid,
	.query_pkey = sw_query_pkey,
	.alloc_pd = sw_alloc_pd,
	.dealloc_pd = sw_dealloc_pd,
	.reg_mr = sw_reg_mr,
	.dereg_mr = sw_dereg_mr,
	.attach_mcast = sw_attach_mcast,
	.detach_mcast = sw_detach_mcast,
	.alloc_mw = sw_alloc_mw,
	.dealloc_mw = sw_dealloc_mw,
	.bind_mw = sw_bind_mw,
	.rereg_mr = sw_rereg_mr,
	.create_cq = sw_create_cq,
	.resize_cq = sw_resize_cq,
	.destroy_cq = sw_destroy_cq,
	.create_qp = sw_create_qp,
	.modify_qp = sw_modify_qp,
	.destroy_qp = sw_destroy_qp,
	.create_srq = sw_create_srq,
	.modify_srq = sw_modify_srq,
	.destroy_srq = sw_destroy_srq,
	.user_open = sw_user_open,
	.user_close = sw_user_close,
	.objects = sw_objects,
	.num_objects = ARRAY_SIZE(sw_objects),
};

static void sw_free(struct sw_dev *sw)
{
	kvfree(sw);
}

struct uabi_device *uabi_sw_create_shared(const struct uabi_shm_ops *shm,
					  size_t heap_bytes)
{
	struct sw_dev *sw = kvzalloc(sizeof(*sw), GFP_KERNEL);	/* saved[]: tens of KiB */
	int ret;

	if (!sw)
		return ERR_PTR(-ENOMEM);
	mutex_init(&sw->lock);
	sw->port_state = UABI_PORT_ACTIVE;
	sw->shm = shm;
	sw->heap_bytes = heap_bytes;
	strscpy_pad(sw->dev.name, "uabi_sw0", sizeof(sw->dev.name));
	sw->dev.ops = &sw_ops;
	ret = uabi_device_register(&sw->dev);
	if (ret) {
		sw_free(sw);
		return ERR_PTR(ret);
	}
	return &sw->dev;
}

struct uabi_device *uabi_sw_create_roce(const struct uabi_shm_ops *shm, size_t heap_bytes,
					const char *name, const struct uabi_sw_link *link)
{
	struct uabi_device *dev;
	struct sw_dev *sw;

	dev = uabi_sw_create_shared(shm, heap_bytes);
	if (IS_ERR(dev))
		return dev;
	sw = to_sw(dev);
	mutex_lock(&sw->lock);
	sw->roce = true;
	sw->link = *link;
	if (sw->link.num_gids > UABI_SW_LINK_GIDS)
		sw->link.num_gids = UABI_SW_LINK_GIDS;
	mutex_unlock(&sw->lock);
	strscpy_pad(dev->name, name, sizeof(dev->name));
	/* Registered before it was a RoCE device: its GUID is the link's. */
	sw_query_device(dev, &dev->attr);
	return dev;
}

void uabi_sw_link_update(struct uabi_device *dev, const struct uabi_sw_link *link)
{
	struct sw_dev *sw = to_sw(dev);

	mutex_lock(&sw->lock);
	if (sw->roce) {
		sw->link = *link;
		if (sw->link.num_gids > UABI_SW_LINK_GIDS)
			sw->link.num_gids = UABI_SW_LINK_GIDS;
	}
	mutex_unlock(&sw->lock);
}

int uabi_sw_link_get(struct uabi_device *dev, struct uabi_sw_link *link)
{
	struct sw_dev *sw = to_sw(dev);
	int ret = -ENODEV;

	mutex_lock(&sw->lock);
	if (sw->roce) {
		*link = sw->link;
		ret = 0;
	}
	mutex_unlock(&sw->lock);
	return ret;
}

struct uabi_device *uabi_sw_create(void)
{
	return uabi_sw_create_shared(NULL, 0);
}

void uabi_sw_destroy(struct uabi_device *dev)
{
	uabi_device_unregister(dev);
	sw_free(to_sw(dev));
}
