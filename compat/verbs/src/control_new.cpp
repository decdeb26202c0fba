// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The new path of the drop-in library's control verbs (the default): one
// uabi::Context call per verb (control_path.hpp).
#include "control_path.hpp"
#include "verbs_impl.hpp"

#include <uabi/convert/qp.hpp>
#include <uabi/ofed_verbs_abi.h>

#include <fcntl.h>

namespace uabi::verbs {

NewControl::NewControl(Context ctx) : own_(std::move(ctx))
{
	ctx_ = &own_;
}

Result<std::unique_ptr<Control>> NewControl::open(Context ctx)
{
	std::unique_ptr<NewControl> c(new NewControl(std::move(ctx)));
	auto q = c->own_.create_async_event_queue();
	if (!q)
		return make_error(q.error());
	c->async_ = *q;
	return std::unique_ptr<Control>(std::move(c));
}

Result<std::unique_ptr<Control>> NewControl::adopt(Context ctx)
{
	std::unique_ptr<NewControl> c(new NewControl(std::move(ctx)));
	c->async_.handle = 0;
	c->async_.fd = -1;
	return std::unique_ptr<Control>(std::move(c));
}

Result<uabi_event> NewControl::get_async_event()
{
	if (!async_.handle)
		return make_error(EBADF); // imported: read(2) of fd -1

	auto r = ctx_->get_async_event(async_.handle);
	// A registration without a user handle (the OFED calls') hears of
	// its receive QP as OFED told it: flag, and the QP number.
	if (r && r->xrc_qpn && !r->element) {
		r->element = r->xrc_qpn;
		r->event_type |= UABI_OFED_XRC_QP_EVENT_FLAG;
	}
	return r;
}

Result<DeviceInfo> NewControl::query_device()
{
	return ctx_->query_device();
}

Result<uabi_port_attr> NewControl::query_port(std::uint32_t port)
{
	return ctx_->query_port(port);
}

Result<Handle> NewControl::alloc_pd()
{
	return ctx_->alloc_pd();
}

Result<void> NewControl::dealloc_pd(Handle pd)
{
	return ctx_->dealloc_pd(pd);
}

Result<MrInfo> NewControl::reg_mr(Handle pd, const void *addr, std::uint64_t length,
				  std::uint32_t access, std::uint64_t iova)
{
	return ctx_->reg_mr(Ref(pd), addr, length, access, iova);
}

Result<uabi_mr_keys> NewControl::rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
					   std::uint64_t length, std::uint64_t iova,
					   unsigned access)
{
	uabi_mr_reg reg{};
	reg.addr = reinterpret_cast<std::uintptr_t>(addr);
	reg.length = length;
	reg.iova = iova;
	reg.access = access;
	std::optional<Ref> p;
	if (flags & IBV_REREG_MR_CHANGE_PD)
		p = Ref(pd);
	return ctx_->rereg_mr(mr, std::uint32_t(flags), p, reg);
}

Result<void> NewControl::dereg_mr(Handle mr)
{
	return ctx_->dereg_mr(mr);
}

Result<MwInfo> NewControl::alloc_mw(Handle pd, std::uint32_t type)
{
	return ctx_->alloc_mw(Ref(pd), type);
}

Result<void> NewControl::dealloc_mw(Handle mw)
{
	return ctx_->dealloc_mw(mw);
}

Result<EvqInfo> NewControl::create_comp_channel()
{
	return ctx_->create_comp_channel();
}

Result<void> NewControl::destroy_comp_channel(const EvqInfo &ch)
{
	return ctx_->destroy_comp_channel(ch.handle);
}

Result<uabi_event> NewControl::get_comp_event(const EvqInfo &ch)
{
	return ctx_->get_comp_event(ch.handle);
}

Result<CqInfo> NewControl::create_cq(std::uint32_t cqe, const EvqInfo *channel,
				     std::uint32_t comp_vector, std::uint64_t user_handle)
{
	CqCreate cc;
	cc.cqe = cqe;
	if (channel)
		cc.channel = Ref(channel->handle);
	cc.comp_vector = comp_vector;
	cc.user_handle = user_handle;
	return ctx_->create_cq(cc);
}

Result<uabi_cq_resp> NewControl::resize_cq(Handle cq, std::uint32_t cqe)
{
	return ctx_->resize_cq(cq, cqe);
}

Result<void> NewControl::destroy_cq(Handle cq)
{
	return ctx_->destroy_cq(cq);
}

Result<SrqInfo> NewControl::create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
				       const uabi_srq_attr &attr, std::uint64_t user_handle)
{
	SrqCreate sc;
	sc.pd = Ref(pd);
	if (type == IBV_SRQT_XRC) {
		sc.xrcd = Ref(xrcd);
		sc.cq = Ref(cq);
	}
	sc.init.attr = attr;
	sc.init.srq_type = type;
	sc.user_handle = user_handle;
	return ctx_->create_srq(sc);
}

Result<void> NewControl::modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask)
{
	return ctx_->modify_srq(srq, attr, mask);
}

Result<uabi_srq_attr> NewControl::query_srq(Handle srq)
{
	return ctx_->query_srq(srq);
}

Result<void> NewControl::destroy_srq(Handle srq)
{
	return ctx_->destroy_srq(srq);
}

Result<Handle> NewControl::open_xrcd(int fd, int oflags)
{
	std::uint32_t of = 0;
	if (oflags & O_CREAT)
		of |= UABI_XRCD_O_CREAT;
	if (oflags & O_EXCL)
		of |= UABI_XRCD_O_EXCL;
	return ctx_->open_xrcd(fd, of);
}

Result<void> NewControl::close_xrcd(Handle xrcd)
{
	return ctx_->close_xrcd(xrcd);
}

Result<QpInfo> NewControl::create_qp(const QpArgs &a)
{
	const bool xrc_recv = a.qp_type == IBV_QPT_XRC_RECV;
	QpCreate qc;
	if (xrc_recv) {
		qc.xrcd = Ref(a.pd);
	} else {
		qc.pd = Ref(a.pd);
		qc.send_cq = Ref(a.send_cq);
		if (a.recv_cq)
			qc.recv_cq = Ref(a.recv_cq);
		if (a.srq)
			qc.srq = Ref(a.srq);
	}
	qc.init.cap = a.cap;
	qc.init.qp_type = a.qp_type;
	qc.init.sq_sig_all = a.sq_sig_all ? 1 : 0;
	qc.init.create_flags = a.create_flags;
	qc.user_handle = a.user_handle;
	if (a.xrcd && !xrc_recv)
		qc.xrcd = Ref(a.xrcd);
	return ctx_->create_qp(qc);
}

Result<QpInfo> NewControl::open_qp(Handle xrcd, std::uint32_t qpn, std::uint64_t user_handle)
{
	auto r = ctx_->register_xrc_rcv_qp(xrcd, qpn, {}, user_handle);
	if (!r)
		return make_error(r.error());
	QpInfo q{};
	q.handle = *r;
	q.resp.qpn = qpn;
	return q;
}

Result<void> NewControl::modify_qp(Handle qp, const struct ibv_qp_attr &attr, std::uint32_t mask)
{
	return ctx_->modify_qp(qp, convert::to_uabi(attr), mask);
}

Result<QpQuery> NewControl::query_qp(Handle qp, std::uint32_t mask)
{
	return ctx_->query_qp(qp, mask);
}

Result<void> NewControl::destroy_qp(Handle qp)
{
	return ctx_->destroy_qp(qp);
}

Result<void> NewControl::attach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid)
{
	return ctx_->attach_mcast(qp, gid.raw, lid);
}

Result<void> NewControl::detach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid)
{
	return ctx_->detach_mcast(qp, gid.raw, lid);
}

Result<Handle> NewControl::create_ah(Handle pd, const struct ibv_ah_attr &attr)
{
	return ctx_->create_ah(Ref(pd), convert::to_uabi(attr));
}

Result<void> NewControl::destroy_ah(Handle ah)
{
	return ctx_->destroy_ah(ah);
}

Result<Handle> NewControl::ofed_open_xrc_domain(int fd, int oflags)
{
	return open_xrcd(fd, oflags); // the same XRCD on the new path
}

Result<void> NewControl::ofed_close_xrc_domain(Handle xrcd)
{
	return ctx_->close_xrcd(xrcd);
}

Result<SrqInfo> NewControl::ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
						const uabi_srq_attr &attr,
						std::uint64_t user_handle)
{
	return create_srq(pd, IBV_SRQT_XRC, xrcd, cq, attr, user_handle);
}

Result<std::uint32_t> NewControl::ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
							 bool sq_sig_all)
{
	uabi_qp_init init{};
	init.cap = cap;
	init.qp_type = UABI_QPT_XRC_RECV;
	init.sq_sig_all = sq_sig_all ? 1 : 0;
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	auto r = ctx_->register_xrc_rcv_qp(xrcd, qpn, init, std::uint64_t(0));
	if (!r)
		return make_error(r.error());
	return qpn;
}

Result<void> NewControl::ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
						const struct ibv_qp_attr &attr, std::uint32_t mask)
{
	return ctx_->modify_xrc_rcv_qp(xrcd, qpn, convert::to_uabi(attr), mask);
}

Result<QpQuery>
NewControl::ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
				  std::uint32_t /* mask: every attribute is returned */)
{
	auto r = ctx_->query_xrc_rcv_qp(xrcd, qpn);
	if (!r)
		return make_error(r.error());
	QpQuery q{};
	q.attr = *r;
	q.init.cap = r->cap;
	q.init.qp_type = UABI_QPT_XRC_RECV;
	return q;
}

Result<void> NewControl::ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	// OFED's REG never created (the translator answers EINVAL too).
	if (qpn == UABI_XRC_QPN_CREATE)
		return make_error(EINVAL);
	auto r = ctx_->register_xrc_rcv_qp(xrcd, qpn, {}, std::uint64_t(0));
	if (!r)
		return make_error(r.error());
	return {};
}

Result<void> NewControl::ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	return ctx_->unregister_xrc_rcv_qp(xrcd, qpn);
}

} // namespace uabi::verbs
