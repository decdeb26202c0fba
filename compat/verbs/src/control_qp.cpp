// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Control verbs of QPs and address handles: each is one call of the control
// path (control_path.hpp), and a QP gets its providers/sw counterpart.
#include "verbs_impl.hpp"

#include <uabi/convert/qp.hpp>

#include <rdma/uabi_sw.h>
#include <uabi/ofed_verbs_abi.h>

#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <unistd.h>

using namespace uabi;
using namespace uabi::verbs;

// --------------------------------------------------------------------- QP
static VQp *new_vqp(struct ibv_context *ctx, void *qp_context)
{
	auto *q = static_cast<VQp *>(std::calloc(1, sizeof(VQp)));
	if (!q)
		return nullptr;
	q->qpx.qp_base.context = ctx;
	q->qpx.qp_base.qp_context = qp_context;
	pthread_mutex_init(&q->qpx.qp_base.mutex, nullptr);
	pthread_cond_init(&q->qpx.qp_base.cond, nullptr);
	return q;
}

static void free_vqp(VQp *q)
{
	delete q->dp;	// its send queue first: the parent domain's memory
	delete q->wb;
	if (q->pdom)
		pd_release(q->pdom);
	pthread_cond_destroy(&q->qpx.qp_base.cond);
	pthread_mutex_destroy(&q->qpx.qp_base.mutex);
	std::free(q);
}

// @ofed_xrcd: the XRC domain of OFED's IBV_QPT_XRC (a send QP that is
// also the domain's target), 0 otherwise.
static struct ibv_qp *create_qp_with(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a,
				     Handle ofed_xrcd)
{
	return guard_ptr([&]() -> struct ibv_qp * {
		ContextImpl *impl = impl_of(ctx);
		if (!impl->dp)
			return fail_ptr<struct ibv_qp>(EOPNOTSUPP);
		const std::uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
					    IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		if (a->comp_mask & ~known)
			return fail_ptr<struct ibv_qp>(EOPNOTSUPP);
		// Of the create flags, the sw device has multicast loopback
		// blocking (UD).
		const std::uint32_t cflags =
			(a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ? a->create_flags : 0;
		if (cflags & ~std::uint32_t(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB))
			return fail_ptr<struct ibv_qp>(EOPNOTSUPP);
		VQp *q = new_vqp(ctx, a->qp_context);
		if (!q)
			return fail_ptr<struct ibv_qp>(ENOMEM);
		struct ibv_qp *qp = &q->qpx.qp_base;
		const bool xrc_recv = a->qp_type == IBV_QPT_XRC_RECV;
		const bool xrc_send = a->qp_type == IBV_QPT_XRC_SEND;
		struct ibv_pd *pd = (a->comp_mask & IBV_QP_INIT_ATTR_PD) ? a->pd : nullptr;

		Control::QpArgs qc;
		if (xrc_recv) {
			if (!(a->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !a->xrcd) {
				free_vqp(q);
				return fail_ptr<struct ibv_qp>(EINVAL);
			}
			qc.pd = vxrcd(a->xrcd)->handle;
		} else {
			if (!pd || !a->send_cq) {
				free_vqp(q);
				return fail_ptr<struct ibv_qp>(EINVAL);
			}
			qc.pd = pd->handle;
			qc.send_cq = a->send_cq->handle;
			// An XRC initiator has no receive side: what the caller
			// put there is ignored, as by every device.
			if (!xrc_send && a->recv_cq)
				qc.recv_cq = a->recv_cq->handle;
			if (!xrc_send && a->srq)
				qc.srq = a->srq->handle;
		}
		qc.cap = xrc_recv ? uabi_qp_cap{} : convert::to_uabi(a->cap);
		qc.qp_type = a->qp_type;
		qc.sq_sig_all = a->sq_sig_all != 0;
		qc.create_flags = cflags;
		qc.xrcd = ofed_xrcd;
		qc.user_handle = reinterpret_cast<std::uintptr_t>(q);
		auto r = impl->ctl.create_qp(qc);
		if (!r) {
			free_vqp(q);
			return fail_ptr<struct ibv_qp>(r.error());
		}
		if (!xrc_recv) {
			sw::QpCaps caps;
			caps.max_send_wr = r->resp.cap.max_send_wr;
			caps.max_send_sge = r->resp.cap.max_send_sge;
			caps.max_inline_data = r->resp.cap.max_inline_data;
			caps.sq_sig_all = a->sq_sig_all != 0;
			caps.block_self_mcast = cflags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
			caps.allocator = queue_allocator(pd);
			if (impl->roce) {
				// A RoCE device's QP: the wire provider.
				int err = create_wire_qp(ctx, r->resp.qpn, a->qp_type, vcq(a->send_cq)->dp,
							 a->recv_cq ? vcq(a->recv_cq)->dp : nullptr,
							 a->srq ? vsrq(a->srq)->dp : nullptr, caps, &q->dp);
				if (err) {
					(void)impl->ctl.destroy_qp(r->handle);
					free_vqp(q);
					return fail_ptr<struct ibv_qp>(err);
				}
			} else {
				q->dp = new (std::nothrow) sw::Qp(
					*impl->dp, r->resp.qpn, a->qp_type, vcq(a->send_cq)->dp,
					(!xrc_send && a->recv_cq) ? vcq(a->recv_cq)->dp : nullptr,
					(!xrc_send && a->srq) ? vsrq(a->srq)->dp : nullptr, caps);
			}
			// No memory for the send queue (a parent domain's allocator
			// may have none).
			if (!q->dp || !q->dp->ok()) {
				(void)impl->ctl.destroy_qp(r->handle);
				free_vqp(q);
				return fail_ptr<struct ibv_qp>(ENOMEM);
			}
			if (is_parent_domain(pd)) {
				pd_hold(pd);
				q->pdom = pd;
			}
		}
		// An XRC receive QP of a RoCE device: served by this process's
		// wire endpoint (on uabi_sw0 the sender fills the SRQ itself).
		if (xrc_recv && impl->roce) {
			sw::QpCaps caps;
			if (int err = create_wire_qp(ctx, r->resp.qpn, a->qp_type, nullptr, nullptr, nullptr, caps,
						     &q->dp)) {
				(void)impl->ctl.destroy_qp(r->handle);
				free_vqp(q);
				return fail_ptr<struct ibv_qp>(err);
			}
		}
		qp->pd = pd;
		qp->send_cq = xrc_recv ? nullptr : a->send_cq;
		qp->recv_cq = (xrc_recv || xrc_send) ? nullptr : a->recv_cq;
		qp->srq = (xrc_recv || xrc_send) ? nullptr : a->srq;
		qp->handle = r->handle;
		qp->qp_num = r->resp.qpn;
		qp->state = IBV_QPS_RESET;
		qp->qp_type = a->qp_type;
		if (q->dp)
			install_mw_control(q, impl);
		if (!xrc_recv) {
			struct ibv_qp_cap cap;
			cap = convert::to_ibv(r->resp.cap);
			if (a->srq)
				cap.max_recv_wr = cap.max_recv_sge = 0;
			a->cap = cap;
		}
		install_qp_ex_ops(q);
		return qp;
	});
}

static struct ibv_qp *create_qp(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	return create_qp_with(ctx, a, 0);
}

UABI_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	std::memset(&ex, 0, sizeof(ex));
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	// OFED's XRC QP (IBV_QPT_XRC, 5): its ibv_qp_init_attr is 8 bytes
	// longer and ends with the XRC domain, which the caller must give;
	// the QP is an XRC_SEND one bound to that domain, so that it is also
	// the target of its peer (whose messages go to the domain's SRQs).
	const bool ofed_xrc = std::uint32_t(attr->qp_type) == UABI_OFED_QPT_XRC;
	std::uint32_t ofed_xrcd = 0;
	if (ofed_xrc) {
		void *dom = nullptr;
		std::memcpy(&dom,
			    reinterpret_cast<const unsigned char *>(attr) +
				UABI_OFED_QP_INIT_ATTR_XRC_DOMAIN,
			    sizeof(dom));
		if (!dom)
			return fail_ptr<struct ibv_qp>(EINVAL);
		ex.qp_type = IBV_QPT_XRC_SEND;
		std::memcpy(&ofed_xrcd, static_cast<const unsigned char *>(dom) + UABI_OFED_XRC_DOMAIN_HANDLE,
			    sizeof(std::uint32_t));
	}
	struct ibv_qp *qp = create_qp_with(pd->context, &ex, ofed_xrcd);
	if (qp)
		attr->cap = ex.cap;
	if (qp && ofed_xrc) {
		qp->qp_type = attr->qp_type;
		// OFED programs have no receive side to read back either.
		attr->cap.max_recv_wr = attr->cap.max_recv_sge = 0;
	}
	return qp;
}

static struct ibv_qp *open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *a)
{
	return guard_ptr([&]() -> struct ibv_qp * {
		const std::uint32_t need = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
		if ((a->comp_mask & need) != need || a->qp_type != IBV_QPT_XRC_RECV || !a->xrcd)
			return fail_ptr<struct ibv_qp>(EINVAL);
		VQp *q = new_vqp(ctx, (a->comp_mask & IBV_QP_OPEN_ATTR_CONTEXT) ? a->qp_context : nullptr);
		if (!q)
			return fail_ptr<struct ibv_qp>(ENOMEM);
		auto r = impl_of(ctx)->ctl.open_qp(vxrcd(a->xrcd)->handle, a->qp_num,
						   reinterpret_cast<std::uintptr_t>(q));
		if (!r) {
			free_vqp(q);
			return fail_ptr<struct ibv_qp>(r.error());
		}
		// A RoCE device: this context serves the QP too, while it
		// holds it (docs/wire.md, "XRC").
		if (impl_of(ctx)->roce) {
			if (int err = create_wire_qp(ctx, a->qp_num, IBV_QPT_XRC_RECV, nullptr, nullptr, nullptr,
						     sw::QpCaps{}, &q->dp)) {
				(void)impl_of(ctx)->ctl.destroy_qp(r->handle);
				free_vqp(q);
				return fail_ptr<struct ibv_qp>(err);
			}
		}
		struct ibv_qp *qp = &q->qpx.qp_base;
		qp->handle = r->handle;
		qp->qp_num = a->qp_num;
		qp->qp_type = IBV_QPT_XRC_RECV;
		auto st = impl_of(ctx)->ctl.query_qp(r->handle, IBV_QP_STATE);
		qp->state = st ? ibv_qp_state(st->attr.qp_state) : IBV_QPS_RESET;
		install_qp_ex_ops(q);
		return qp;
	});
}

UABI_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	return guard_int([&] {
		std::uint32_t m = std::uint32_t(mask) & ~std::uint32_t(IBV_QP_RATE_LIMIT);
		auto r = impl_of(qp->context)->ctl.modify_qp(qp->handle, *attr, m);
		if (!r)
			return r.error();
		if (mask & IBV_QP_STATE)
			qp->state = attr->qp_state;
		if (VQp *q = vqp(qp); q->dp)
			q->dp->modified(to_modify(*attr, mask, qp->state));
		return 0;
	});
}

UABI_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
			     struct ibv_qp_init_attr *init)
{
	return guard_int([&] {
		auto r = impl_of(qp->context)->ctl.query_qp(qp->handle, std::uint32_t(mask));
		if (!r)
			return r.error();
		convert::to_ibv(r->attr, *attr);
		// The data path may have moved the QP to ERR.
		if (VQp *q = vqp(qp); q->dp && q->dp->state() == IBV_QPS_ERR) {
			attr->qp_state = IBV_QPS_ERR;
			attr->cur_qp_state = IBV_QPS_ERR;
		}
		qp->state = attr->qp_state;
		if (init) {
			std::memset(init, 0, sizeof(*init));
			init->qp_context = qp->qp_context;
			init->send_cq = qp->send_cq;
			init->recv_cq = qp->recv_cq;
			init->srq = qp->srq;
			init->cap = convert::to_ibv(r->init.cap);
			if (qp->srq)
				init->cap.max_recv_wr = init->cap.max_recv_sge = 0;
			init->qp_type = qp->qp_type;
			init->sq_sig_all = r->init.sq_sig_all ? 1 : 0;
		}
		return 0;
	});
}

UABI_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	return guard_int([&] {
		auto r = impl_of(qp->context)->ctl.destroy_qp(qp->handle);
		if (!r)
			return r.error();
		free_vqp(vqp(qp));
		return 0;
	});
}

UABI_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	return &vqp(qp)->qpx;
}

UABI_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *, enum ibv_wr_opcode, uint32_t)
{
	return 0;
}

UABI_EXPORT int ibv_set_ece(struct ibv_qp *, struct ibv_ece *)
{
	return EOPNOTSUPP;
}

UABI_EXPORT int ibv_query_ece(struct ibv_qp *, struct ibv_ece *)
{
	return EOPNOTSUPP;
}

UABI_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return guard_int([&] {
		if (!qp || !gid)
			return EINVAL;
		auto r = impl_of(qp->context)->ctl.attach_mcast(qp->handle, *gid, lid);
		if (!r)
			return r.error();
		// On a RoCE device the wire joins the group's IP multicast
		// group too; if it cannot, the attachment is undone.
		if (VQp *v = vqp(qp); v->dp)
			if (int e = v->dp->attach_mcast(gid->raw, true)) {
				(void)impl_of(qp->context)->ctl.detach_mcast(qp->handle, *gid, lid);
				return e;
			}
		return 0;
	});
}

UABI_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return guard_int([&] {
		if (!qp || !gid)
			return EINVAL;
		auto r = impl_of(qp->context)->ctl.detach_mcast(qp->handle, *gid, lid);
		if (!r)
			return r.error();
		if (VQp *v = vqp(qp); v->dp)
			(void)v->dp->attach_mcast(gid->raw, false);
		return 0;
	});
}

// --------------------------------------------------------------------- AH
UABI_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	return guard_ptr([&]() -> struct ibv_ah * {
		auto r = impl_of(pd->context)->ctl.create_ah(pd->handle, *attr);
		if (!r)
			return fail_ptr<struct ibv_ah>(r.error());
		auto *a = static_cast<VAh *>(std::calloc(1, sizeof(VAh)));
		if (!a) {
			(void)impl_of(pd->context)->ctl.destroy_ah(*r);
			return fail_ptr<struct ibv_ah>(ENOMEM);
		}
		a->ah.context = pd->context;
		a->ah.pd = pd;
		a->ah.handle = *r;
		a->av = to_sw(*attr);
		return &a->ah;
	});
}

UABI_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	return guard_int([&] {
		auto r = impl_of(ah->context)->ctl.destroy_ah(ah->handle);
		if (!r)
			return r.error();
		std::free(vah(ah));
		return 0;
	});
}

UABI_EXPORT int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num, struct ibv_wc *wc,
				    struct ibv_grh *grh, struct ibv_ah_attr *ah)
{
	std::memset(ah, 0, sizeof(*ah));
	ah->dlid = wc->slid;
	ah->sl = wc->sl;
	ah->src_path_bits = wc->dlid_path_bits;
	ah->port_num = port_num;
	if (wc->wc_flags & IBV_WC_GRH) {
		// RoCEv2 over IPv4 puts the IPv4 header in the GRH's last 20
		// bytes (its first 20 unused): the GIDs are the addresses,
		// IPv4-mapped.  Otherwise a GRH (or an IPv6 header) as it is.
		const auto *g = reinterpret_cast<const std::uint8_t *>(grh);
		union ibv_gid sgid = grh->sgid, dgid = grh->dgid;
		const bool v4 = (g[20] >> 4) == 4 && (g[0] >> 4) != 6;
		if (v4) {
			std::memset(&sgid, 0, sizeof(sgid));
			std::memset(&dgid, 0, sizeof(dgid));
			sgid.raw[10] = sgid.raw[11] = dgid.raw[10] = dgid.raw[11] = 0xff;
			std::memcpy(sgid.raw + 12, g + 20 + 12, 4);
			std::memcpy(dgid.raw + 12, g + 20 + 16, 4);
		}
		// Our GID the datagram was sent to: its index is the reply's
		// source.
		struct ibv_port_attr pa;
		int index = -1;
		if (ibv_query_port(ctx, port_num, &pa))
			return -1;
		for (int i = 0; i < pa.gid_tbl_len && i < 256 && index < 0; i++) {
			union ibv_gid own;
			if (!ibv_query_gid(ctx, port_num, i, &own) && !std::memcmp(own.raw, dgid.raw, 16))
				index = i;
		}
		if (index < 0) {
			errno = ENOENT;
			return -1;
		}
		std::uint32_t flow = v4 ? 0 : be32toh(grh->version_tclass_flow);
		ah->is_global = 1;
		ah->grh.dgid = sgid;
		ah->grh.sgid_index = std::uint8_t(index);
		ah->grh.flow_label = flow & 0xfffff;
		ah->grh.hop_limit = 0xff;
		ah->grh.traffic_class = std::uint8_t((flow >> 20) & 0xff);
	}
	return 0;
}

UABI_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
						 struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return nullptr;
	return ibv_create_ah(pd, &attr);
}

UABI_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *, struct ibv_ah_attr *, uint8_t *, uint16_t *)
{
	return EOPNOTSUPP;
}


// ------------------------------------------------------- extended verbs
namespace uabi::verbs {

void install_qp_context_ops(struct verbs_context *vc)
{
	vc->create_qp_ex = create_qp;
	vc->open_qp = open_qp;
}

} // namespace uabi::verbs
