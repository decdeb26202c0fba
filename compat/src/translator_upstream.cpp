// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy translator's upstream dialect: write() commands 0-40 of
// <rdma/ib_user_verbs.h> and their table (translator_impl.hpp).  The
// *_common handlers serve the extended and OFED forms of a command too.
// Over 800 lines on purpose: one dialect's 41 commands and the table that
// names them stay in one file, so that a command's bytes, its handler and
// its table row are read together.
#include "translator_impl.hpp"

#include <uabi/convert/av.hpp>
#include <uabi/convert/device.hpp>
#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>

#include <fcntl.h>
#include <unistd.h>

namespace uabi::legacy
{

using I = Translator::Impl;
using K = I::K;

int Translator::Impl::get_context(const Req &r)
{
	ib_uverbs_get_context cmd;
	if (int e = request(r, cmd))
		return e;
	if (has_ctx)
		return -EINVAL;
	Wire m = w();
	m.begin(UABI_MSG_F_ALL_OR_NOTHING);
	m.cmd(UABI_OBJ_ASYNC_EVENT, UABI_METHOD_CREATE);
	std::size_t fd_off = m.out(UABI_ATTR_EVQ_FD, sizeof(std::int32_t), kMand | UABI_ATTR_F_FD);
	m.cmd(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
	std::size_t dev_off = m.out(UABI_ATTR_DEVICE_INFO, sizeof(uabi_device_attr));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	Handle evq = m.result(0).out_handle;
	int dup = fcntl(m.get<std::int32_t>(fd_off), F_DUPFD_CLOEXEC, 0);
	if (dup < 0) {
		int e = errno;
		destroy(UABI_OBJ_ASYNC_EVENT, evq);
		return -e;
	}
	ib_uverbs_get_context_resp resp{};
	resp.async_fd = std::uint32_t(dup);
	resp.num_comp_vectors = kNumComp;
	if (int e = respond(r, &resp, sizeof(resp))) {
		close(dup);
		destroy(UABI_OBJ_ASYNC_EVENT, evq);
		return e;
	}
	uabi_device_attr dev = m.get<uabi_device_attr>(dev_off);
	mw_supported = m.valid(dev_off) && dev.max_mw > 0;
	async_handle = evq;
	async_fd = dup;
	has_ctx = true;
	return 0;
}

int Translator::Impl::query_device(const Req &r)
{
	if (int e = need_ctx())
		return e;
	ib_uverbs_query_device cmd;
	if (int e = request(r, cmd))
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
	std::size_t off = m.out(UABI_ATTR_DEVICE_INFO, sizeof(uabi_device_attr));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	ib_uverbs_query_device_resp resp;
	resp = convert::to_legacy(m.get<uabi_device_attr>(off));
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::query_port(const Req &r)
{
	if (int e = need_ctx())
		return e;
	ib_uverbs_query_port cmd;
	if (int e = request(r, cmd))
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PORT);
	m.in(UABI_ATTR_DEVICE_PORT_NUM, std::uint32_t(cmd.port_num));
	std::size_t off = m.out(UABI_ATTR_DEVICE_PORT_INFO, sizeof(uabi_port_attr));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	ib_uverbs_query_port_resp resp = convert::to_legacy(m.get<uabi_port_attr>(off));
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::alloc_pd(const Req &r)
{
	ib_uverbs_alloc_pd cmd;
	if (int e = request(r, cmd))
		return e;
	if (int e = need_ctx())
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_PD, UABI_METHOD_CREATE);
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	ib_uverbs_alloc_pd_resp resp{};
	resp.pd_handle = m.result(0).out_handle;
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_PD, resp.pd_handle);
}

// DEALLOC_PD, DEREG_MR, DESTROY_AH, CLOSE_XRCD, DEALLOC_MW: the first
// word is the handle; Linux's uobj_perform_destroy() answers the
// lookup's own errno (ENOENT, EINVAL for another type, EBUSY in use).
int Translator::Impl::destroy_by_word(const Req &r, std::uint16_t object)
{
	std::uint32_t handle;
	struct {
		std::uint32_t h;
	} cmd;
	if (int e = request(r, cmd))
		return e;
	handle = cmd.h;
	Wire m = w();
	m.begin();
	m.cmd(object, UABI_METHOD_DESTROY, handle);
	int st = exec(m);
	if (st == kDry)
		return 0;
	return st;
}

int Translator::Impl::dealloc_pd(const Req &r)
{
	return destroy_by_word(r, UABI_OBJ_PD);
}

int Translator::Impl::dereg_mr(const Req &r)
{
	return destroy_by_word(r, UABI_OBJ_MR);
}

int Translator::Impl::destroy_ah(const Req &r)
{
	return destroy_by_word(r, UABI_OBJ_AH);
}

int Translator::Impl::close_xrcd(const Req &r)
{
	return destroy_by_word(r, UABI_OBJ_XRCD);
}

int Translator::Impl::dealloc_mw(const Req &r)
{
	return destroy_by_word(r, UABI_OBJ_MW);
}

int Translator::Impl::create_ah(const Req &r)
{
	ib_uverbs_create_ah cmd;
	if (int e = request(r, cmd))
		return e;
	if (int e = need_ctx())
		return e;
	uabi_ah_attr a = convert::to_uabi(cmd.attr);
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_AH, UABI_METHOD_CREATE);
	m.in(UABI_ATTR_AH_PD, cmd.pd_handle);
	m.in(UABI_ATTR_AH_ATTR, a);
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	ib_uverbs_create_ah_resp resp{};
	resp.ah_handle = m.result(0).out_handle;
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_AH, resp.ah_handle);
}

int Translator::Impl::reg_mr(const Req &r)
{
	ib_uverbs_reg_mr cmd;
	if (int e = request(r, cmd))
		return e;
	static const std::uint64_t page = std::uint64_t(sysconf(_SC_PAGESIZE));
	if ((cmd.start & (page - 1)) != (cmd.hca_va & (page - 1)))
		return -EINVAL;
	if (int e = need_ctx())
		return e;
	uabi_mr_reg reg{};
	reg.addr = cmd.start;
	reg.length = cmd.length;
	reg.iova = cmd.hca_va;
	reg.access = cmd.access_flags;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_MR, UABI_METHOD_CREATE);
	m.in(UABI_ATTR_MR_PD, cmd.pd_handle);
	m.in(UABI_ATTR_MR_REG, reg);
	std::size_t keys = m.out(UABI_ATTR_MR_KEYS, sizeof(uabi_mr_keys));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_mr_keys k = m.get<uabi_mr_keys>(keys);
	ib_uverbs_reg_mr_resp resp{};
	resp.mr_handle = m.result(0).out_handle;
	resp.lkey = k.lkey;
	resp.rkey = k.rkey;
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_MR, resp.mr_handle);
}

// Re-registration in place (the keys stay); the legacy flags are the
// uAPI's UABI_MR_REREG_* bit for bit.
int Translator::Impl::rereg_mr(const Req &r)
{
	ib_uverbs_rereg_mr cmd;
	if (int e = request(r, cmd))
		return e;
	static const std::uint64_t page = std::uint64_t(sysconf(_SC_PAGESIZE));
	if ((cmd.flags & UABI_MR_REREG_TRANSLATION) &&
	    (cmd.start & (page - 1)) != (cmd.hca_va & (page - 1)))
		return -EINVAL;
	uabi_mr_reg reg{};
	reg.addr = cmd.start;
	reg.length = cmd.length;
	reg.iova = cmd.hca_va;
	reg.access = cmd.access_flags;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_MR, UABI_METHOD_MODIFY, cmd.mr_handle);
	m.in(UABI_ATTR_MR_REREG_FLAGS, cmd.flags);
	if (cmd.flags & UABI_MR_REREG_PD)
		m.in(UABI_ATTR_MR_PD, cmd.pd_handle);
	if (cmd.flags & (UABI_MR_REREG_TRANSLATION | UABI_MR_REREG_ACCESS))
		m.in(UABI_ATTR_MR_REG, reg);
	std::size_t keys = m.out(UABI_ATTR_MR_KEYS, sizeof(uabi_mr_keys));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_mr_keys k = m.get<uabi_mr_keys>(keys);
	ib_uverbs_rereg_mr_resp resp{};
	resp.lkey = k.lkey;
	resp.rkey = k.rkey;
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::alloc_mw(const Req &r)
{
	ib_uverbs_alloc_mw cmd;
	if (int e = request(r, cmd))
		return e;
	if (int e = need_ctx())
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_MW, UABI_METHOD_CREATE);
	m.in(UABI_ATTR_MW_PD, cmd.pd_handle);
	m.in(UABI_ATTR_MW_TYPE, std::uint32_t(cmd.mw_type));
	std::size_t rkey = m.out(UABI_ATTR_MW_RKEY, sizeof(std::uint32_t));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	ib_uverbs_alloc_mw_resp resp{};
	resp.mw_handle = m.result(0).out_handle;
	resp.rkey = m.get<std::uint32_t>(rkey);
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_MW, resp.mw_handle);
}

int Translator::Impl::create_comp_channel(const Req &r)
{
	ib_uverbs_create_comp_channel cmd;
	if (int e = request(r, cmd))
		return e;
	if (int e = need_ctx())
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE);
	std::size_t fd_off = m.out(UABI_ATTR_EVQ_FD, sizeof(std::int32_t), kMand | UABI_ATTR_F_FD);
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	Handle h = m.result(0).out_handle;
	int dup = fcntl(m.get<std::int32_t>(fd_off), F_DUPFD_CLOEXEC, 0);
	if (dup < 0) {
		int e = errno;
		destroy(UABI_OBJ_COMP_CHANNEL, h);
		return -e;
	}
	ib_uverbs_create_comp_channel_resp resp{};
	resp.fd = std::uint32_t(dup);
	if (int e = respond(r, &resp, sizeof(resp))) {
		close(dup);
		destroy(UABI_OBJ_COMP_CHANNEL, h);
		return e;
	}
	channels.push_back({dup, h});
	return 0;
}

// Linux's create_cq(), shared by CREATE_CQ and the extended one.
int Translator::Impl::create_cq_common(const Req &r, const ib_uverbs_ex_create_cq &cmd, bool ex)
{
	if (cmd.comp_vector >= kNumComp)
		return -EINVAL;
	if (int e = need_ctx())
		return e;
	Handle channel = 0;
	if (cmd.comp_channel >= 0)
		if (int e = channel_handle(cmd.comp_channel, &channel))
			return e;
	if (cmd.flags) // no timestamps, no overrun control in sw
		return -EOPNOTSUPP;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_CQ, UABI_METHOD_CREATE);
	m.in(UABI_ATTR_CQ_CQE, cmd.cqe);
	if (channel)
		m.in(UABI_ATTR_CQ_CHANNEL, channel);
	m.in(UABI_ATTR_CQ_COMP_VECTOR, cmd.comp_vector);
	m.in(UABI_ATTR_CQ_USER_HANDLE, std::uint64_t(cmd.user_handle));
	std::size_t off = m.out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_cq_resp cr = m.get<uabi_cq_resp>(off);
	ib_uverbs_ex_create_cq_resp resp{};
	resp.base.cq_handle = m.result(0).out_handle;
	resp.base.cqe = cr.cqe;
	return respond_created_ex(r, resp, ex, UABI_OBJ_CQ, resp.base.cq_handle);
}

int Translator::Impl::create_cq(const Req &r)
{
	ib_uverbs_create_cq cmd;
	if (int e = request(r, cmd))
		return e;
	ib_uverbs_ex_create_cq x{};
	x.user_handle = cmd.user_handle;
	x.cqe = cmd.cqe;
	x.comp_vector = cmd.comp_vector;
	x.comp_channel = cmd.comp_channel;
	return create_cq_common(r, x, false);
}

int Translator::Impl::resize_cq(const Req &r)
{
	ib_uverbs_resize_cq cmd;
	if (int e = request(r, cmd))
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_CQ, UABI_METHOD_MODIFY, cmd.cq_handle);
	m.in(UABI_ATTR_CQ_CQE, cmd.cqe);
	std::size_t off = m.out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	ib_uverbs_resize_cq_resp resp{};
	resp.cqe = m.get<uabi_cq_resp>(off).cqe;
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::destroy_cq(const Req &r)
{
	return destroy_reporting<ib_uverbs_destroy_cq, ib_uverbs_destroy_cq_resp>(
	    r, UABI_OBJ_CQ, &ib_uverbs_destroy_cq::cq_handle, [this](Handle h, auto &resp) {
		    take_events(h, &resp.comp_events_reported, &resp.async_events_reported);
		    if (!doomed.empty())
			    reap_doomed();
	    });
}

// Linux's create_qp(), shared by CREATE_QP, the extended one and the
// OFED dialect's XRC send QP.
// @xrcd: OFED's IBV_QPT_XRC, a send QP that is also its domain's
// target (0: none).
int Translator::Impl::create_qp_common(const Req &r, ib_uverbs_ex_create_qp &cmd, bool ex,
				       Handle xrcd)
{
	std::uint32_t type = cmd.qp_type;
	switch (type) {
	case UABI_QPT_RC:
	case UABI_QPT_UC:
	case UABI_QPT_UD:
	case UABI_QPT_XRC_SEND:
	case UABI_QPT_XRC_RECV:
		break;
	case 8:	   // IB_QPT_RAW_PACKET
	case 0xff: // IB_QPT_DRIVER
		if (int e = need_ctx())
			return e;
		return -EOPNOTSUPP; // neither exists on the sw device
	default:
		return -EINVAL;
	}
	if (int e = need_ctx())
		return e;
	if (cmd.comp_mask) // a receive WQ indirection table: none exist
		return -EINVAL;
	uabi_qp_init init{};
	init.qp_type = type;
	init.sq_sig_all = cmd.sq_sig_all ? 1 : 0;
	init.create_flags = cmd.create_flags;
	convert::copy_caps(init.cap, cmd);

	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_QP, UABI_METHOD_CREATE);
	if (type == UABI_QPT_XRC_RECV) {
		// pd_handle names the XRC domain; this is a
		// registration with 0xFFFFFFFF (a new receive QP).
		m.in(UABI_ATTR_QP_XRCD, cmd.pd_handle);
	} else {
		m.in(UABI_ATTR_QP_PD, cmd.pd_handle);
		m.in(UABI_ATTR_QP_SEND_CQ, cmd.send_cq_handle);
		if (xrcd)
			m.in(UABI_ATTR_QP_XRCD, xrcd);
		if (type == UABI_QPT_XRC_SEND) {
			init.cap.max_recv_wr = 0;
			init.cap.max_recv_sge = 0;
		} else {
			m.in(UABI_ATTR_QP_RECV_CQ, cmd.recv_cq_handle);
			if (cmd.is_srq)
				m.in(UABI_ATTR_QP_SRQ, cmd.srq_handle);
		}
	}
	m.in(UABI_ATTR_QP_INIT, init);
	m.in(UABI_ATTR_QP_USER_HANDLE, std::uint64_t(cmd.user_handle));
	std::size_t off = m.out(UABI_ATTR_QP_RESP, sizeof(uabi_qp_resp));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_qp_resp qr = m.get<uabi_qp_resp>(off);
	ib_uverbs_ex_create_qp_resp resp{};
	resp.base.qp_handle = m.result(0).out_handle;
	resp.base.qpn = qr.qpn;
	convert::copy_caps(resp.base, qr.cap);
	return respond_created_ex(r, resp, ex, UABI_OBJ_QP, resp.base.qp_handle);
}

int Translator::Impl::create_qp(const Req &r)
{
	ib_uverbs_create_qp cmd;
	if (int e = request(r, cmd))
		return e;
	ib_uverbs_ex_create_qp x{};
	x.user_handle = cmd.user_handle;
	x.pd_handle = cmd.pd_handle;
	x.send_cq_handle = cmd.send_cq_handle;
	x.recv_cq_handle = cmd.recv_cq_handle;
	x.srq_handle = cmd.srq_handle;
	convert::copy_caps(x, cmd);
	x.sq_sig_all = cmd.sq_sig_all;
	x.qp_type = cmd.qp_type;
	x.is_srq = cmd.is_srq;
	Handle xrcd = 0;
	if (dialect == Dialect::Ofed && cmd.qp_type == UABI_OFED_QPT_XRC) {
		// OFED's XRC QP: srq_handle carries its XRC domain, whose
		// SRQs receive what its peer sends to it.
		x.qp_type = UABI_QPT_XRC_SEND;
		x.is_srq = 0;
		xrcd = cmd.srq_handle;
	}
	return create_qp_common(r, x, false, xrcd);
}

int Translator::Impl::query_qp_into(Handle qp, std::uint32_t mask, uabi_qp_attr *a,
				    uabi_qp_init *init)
{
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_QP, UABI_METHOD_QUERY, qp);
	m.in(UABI_ATTR_QP_ATTR_MASK, mask);
	std::size_t aoff = m.out(UABI_ATTR_QP_ATTR, sizeof(uabi_qp_attr));
	std::size_t ioff = m.out(UABI_ATTR_QP_INIT_OUT, sizeof(uabi_qp_init));
	int st = exec(m);
	if (st)
		return st;
	*a = m.get<uabi_qp_attr>(aoff);
	*init = m.get<uabi_qp_init>(ioff);
	return 0;
}

int Translator::Impl::query_qp(const Req &r)
{
	ib_uverbs_query_qp cmd;
	if (int e = request(r, cmd))
		return e;
	uabi_qp_attr a;
	uabi_qp_init init;
	int st = query_qp_into(cmd.qp_handle, cmd.attr_mask, &a, &init);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	ib_uverbs_query_qp_resp resp = convert::to_legacy(a, init);
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::modify_qp_run(Handle qp, const uabi_qp_attr &a, std::uint32_t mask)
{
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_QP, UABI_METHOD_MODIFY, qp);
	m.in(UABI_ATTR_QP_ATTR, a);
	m.in(UABI_ATTR_QP_ATTR_MASK, mask);
	return exec(m);
}

// Linux's modify_qp(): the attributes of the mask, then the driver with
// the mask less what modify_qp_mask() ignores for XRC QPs (the core
// ignores those bits the same way).
int Translator::Impl::modify_qp_common(const ib_uverbs_modify_qp &base, std::uint32_t mask)
{
	if (int e = modify_precheck(base, mask))
		return e;
	uabi_qp_attr a = convert::to_uabi_modify(base, mask);
	int st = modify_qp_run(base.qp_handle, a, mask);
	if (st == kDry)
		return 0;
	return lookup_err(st);
}

int Translator::Impl::modify_qp(const Req &r)
{
	ib_uverbs_modify_qp cmd;
	if (int e = request(r, cmd))
		return e;
	if (cmd.attr_mask & ~kQpAttrStandardBits)
		return -EOPNOTSUPP;
	return modify_qp_common(cmd, cmd.attr_mask);
}

int Translator::Impl::destroy_qp(const Req &r)
{
	// A registration on an XRC receive QP is a QP handle: this is
	// the unregister.
	return destroy_reporting<ib_uverbs_destroy_qp, ib_uverbs_destroy_qp_resp>(
	    r, UABI_OBJ_QP, &ib_uverbs_destroy_qp::qp_handle, [this](Handle h, auto &resp) {
		    std::uint32_t comp;
		    take_events(h, &comp, &resp.events_reported);
	    });
}

int Translator::Impl::create_srq_common(const Req &r, const ib_uverbs_create_xsrq &cmd)
{
	if (int e = need_ctx())
		return e;
	uabi_srq_init init{};
	convert::copy_srq_attr(init.attr, cmd);
	switch (cmd.srq_type) {
	case 0: // IB_SRQT_BASIC
		init.srq_type = UABI_SRQT_BASIC;
		break;
	case 1: // IB_SRQT_XRC
		init.srq_type = UABI_SRQT_XRC;
		break;
	case 2: // IB_SRQT_TM: no tag matching in sw
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_SRQ, UABI_METHOD_CREATE);
	m.in(UABI_ATTR_SRQ_PD, cmd.pd_handle);
	if (init.srq_type == UABI_SRQT_XRC) {
		m.in(UABI_ATTR_SRQ_XRCD, cmd.xrcd_handle);
		m.in(UABI_ATTR_SRQ_CQ, cmd.cq_handle);
	}
	m.in(UABI_ATTR_SRQ_INIT, init);
	m.in(UABI_ATTR_SRQ_USER_HANDLE, std::uint64_t(cmd.user_handle));
	std::size_t off = m.out(UABI_ATTR_SRQ_RESP, sizeof(uabi_srq_resp));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_srq_resp sr = m.get<uabi_srq_resp>(off);
	ib_uverbs_create_srq_resp resp{};
	resp.srq_handle = m.result(0).out_handle;
	convert::copy_srq_sizes(resp, sr.attr);
	resp.srqn = init.srq_type == UABI_SRQT_XRC ? sr.srqn : 0;
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_SRQ, resp.srq_handle);
}

int Translator::Impl::create_srq(const Req &r)
{
	ib_uverbs_create_srq cmd;
	if (int e = request(r, cmd))
		return e;
	ib_uverbs_create_xsrq x{};
	x.response = cmd.response;
	x.user_handle = cmd.user_handle;
	x.pd_handle = cmd.pd_handle;
	convert::copy_srq_attr(x, cmd);
	return create_srq_common(r, x);
}

int Translator::Impl::create_xsrq(const Req &r)
{
	ib_uverbs_create_xsrq cmd;
	if (int e = request(r, cmd))
		return e;
	return create_srq_common(r, cmd);
}

int Translator::Impl::modify_srq(const Req &r)
{
	ib_uverbs_modify_srq cmd;
	if (int e = request(r, cmd))
		return e;
	uabi_srq_attr a{};
	convert::copy_srq_modify(a, cmd);
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_SRQ, UABI_METHOD_MODIFY, cmd.srq_handle);
	m.in(UABI_ATTR_SRQ_ATTR, a);
	m.in(UABI_ATTR_SRQ_ATTR_MASK, cmd.attr_mask);
	int st = exec(m);
	if (st == kDry)
		return 0;
	return lookup_err(st);
}

// ATTACH_MCAST, DETACH_MCAST: QP/ATTACH_MCAST and DETACH_MCAST.
int Translator::Impl::mcast(const Req &r, std::uint16_t method)
{
	ib_uverbs_attach_mcast cmd;
	if (int e = request(r, cmd))
		return e;
	uabi_mcast mc{};
	std::memcpy(mc.gid, cmd.gid, sizeof(mc.gid));
	mc.lid = cmd.mlid;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_QP, method, cmd.qp_handle);
	m.in(UABI_ATTR_QP_MCAST, mc);
	int st = exec(m);
	if (st == kDry)
		return 0;
	return lookup_err(st);
}

int Translator::Impl::query_srq(const Req &r)
{
	ib_uverbs_query_srq cmd;
	if (int e = request(r, cmd))
		return e;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_SRQ, UABI_METHOD_QUERY, cmd.srq_handle);
	std::size_t off = m.out(UABI_ATTR_SRQ_ATTR, sizeof(uabi_srq_attr));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_srq_attr a = m.get<uabi_srq_attr>(off);
	ib_uverbs_query_srq_resp resp{};
	convert::copy_srq_attr(resp, a);
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::destroy_srq(const Req &r)
{
	return destroy_reporting<ib_uverbs_destroy_srq, ib_uverbs_destroy_srq_resp>(
	    r, UABI_OBJ_SRQ, &ib_uverbs_destroy_srq::srq_handle, [this](Handle h, auto &resp) {
		    std::uint32_t comp;
		    take_events(h, &comp, &resp.events_reported);
	    });
}

// OPEN_XRCD (upstream) and OPEN_XRC_DOMAIN (OFED): same payload.
int Translator::Impl::open_xrcd(const Req &r)
{
	ib_uverbs_open_xrcd cmd;
	if (int e = request(r, cmd))
		return e;
	if (int e = need_ctx())
		return e;
	std::int32_t fd = std::int32_t(cmd.fd);
	// Linux only looks at O_CREAT and O_EXCL.
	std::uint32_t oflags = cmd.oflags & (kOCreat | kOExcl);
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, UABI_METHOD_CREATE);
	m.in(UABI_ATTR_XRCD_FD, fd, kMand | UABI_ATTR_F_FD);
	m.in(UABI_ATTR_XRCD_OFLAGS, std::uint32_t(oflags & (UABI_XRCD_O_CREAT | UABI_XRCD_O_EXCL)));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	ib_uverbs_open_xrcd_resp resp{};
	resp.xrcd_handle = m.result(0).out_handle;
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_XRCD, resp.xrcd_handle);
}

int Translator::Impl::open_qp(const Req &r)
{
	ib_uverbs_open_qp cmd;
	if (int e = request(r, cmd))
		return e;
	if (int e = need_ctx())
		return e;
	// ib_open_qp(): only XRC target QPs can be opened, and only
	// existing ones (0xFFFFFFFF would create one in our core).
	if (cmd.qp_type != UABI_QPT_XRC_RECV || cmd.qpn == UABI_XRC_QPN_CREATE)
		return -EINVAL;
	std::uint32_t qpn = cmd.qpn;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP, cmd.pd_handle);
	std::size_t qoff = m.inout(UABI_ATTR_XRCD_QPN, qpn);
	m.in(UABI_ATTR_XRCD_USER_HANDLE, std::uint64_t(cmd.user_handle));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	ib_uverbs_create_qp_resp resp{};
	resp.qp_handle = m.result(0).out_handle;
	resp.qpn = m.get<std::uint32_t>(qoff);
	return respond_created(r, &resp, sizeof(resp), UABI_OBJ_QP, resp.qp_handle);
}

#define RQ(s) std::uint16_t(sizeof(s))

// Sizes as Linux declares them (UAPI_DEF_WRITE_* in uverbs_cmd.c).
const I::Spec I::kUpstream[] = {
    /* 0 GET_CONTEXT */ {K::UdataIo, RQ(ib_uverbs_get_context), RQ(ib_uverbs_get_context_resp),
			 &I::get_context},
    /* 1 QUERY_DEVICE */
    {K::Io, RQ(ib_uverbs_query_device), RQ(ib_uverbs_query_device_resp), &I::query_device},
    /* 2 QUERY_PORT */
    {K::Io, RQ(ib_uverbs_query_port), RQ(ib_uverbs_query_port_resp), &I::query_port},
    /* 3 ALLOC_PD */
    {K::UdataIo, RQ(ib_uverbs_alloc_pd), RQ(ib_uverbs_alloc_pd_resp), &I::alloc_pd},
    /* 4 DEALLOC_PD */ {K::I, RQ(ib_uverbs_dealloc_pd), 0, &I::dealloc_pd},
    /* 5 CREATE_AH */
    {K::UdataIo, RQ(ib_uverbs_create_ah), RQ(ib_uverbs_create_ah_resp), &I::create_ah},
    /* 6 MODIFY_AH */ {K::NotSupp, 0, 0, nullptr},
    /* 7 QUERY_AH */ {K::NotSupp, 0, 0, nullptr},
    /* 8 DESTROY_AH */ {K::I, RQ(ib_uverbs_destroy_ah), 0, &I::destroy_ah},
    /* 9 REG_MR */ {K::UdataIo, RQ(ib_uverbs_reg_mr), RQ(ib_uverbs_reg_mr_resp), &I::reg_mr},
    /* 10 REG_SMR */ {K::NotSupp, 0, 0, nullptr},
    /* 11 REREG_MR */
    {K::UdataIo, RQ(ib_uverbs_rereg_mr), RQ(ib_uverbs_rereg_mr_resp), &I::rereg_mr},
    /* 12 QUERY_MR */ {K::NotSupp, 0, 0, nullptr},
    /* 13 DEREG_MR */ {K::I, RQ(ib_uverbs_dereg_mr), 0, &I::dereg_mr},
    /* 14 ALLOC_MW */
    {K::UdataIo, RQ(ib_uverbs_alloc_mw), RQ(ib_uverbs_alloc_mw_resp), &I::alloc_mw},
    /* 15 BIND_MW */ {K::NotSupp, 0, 0, nullptr},
    /* 16 DEALLOC_MW */ {K::I, RQ(ib_uverbs_dealloc_mw), 0, &I::dealloc_mw},
    /* 17 CREATE_COMP_CHANNEL */
    {K::Io, RQ(ib_uverbs_create_comp_channel), RQ(ib_uverbs_create_comp_channel_resp),
     &I::create_comp_channel},
    /* 18 CREATE_CQ */
    {K::UdataIo, RQ(ib_uverbs_create_cq), RQ(ib_uverbs_create_cq_resp), &I::create_cq},
    /* 19 RESIZE_CQ */
    {K::UdataIo, RQ(ib_uverbs_resize_cq), RQ(ib_uverbs_resize_cq_resp), &I::resize_cq},
    /* 20 DESTROY_CQ */
    {K::Io, RQ(ib_uverbs_destroy_cq), RQ(ib_uverbs_destroy_cq_resp), &I::destroy_cq},
    /* 21 POLL_CQ */ {K::NotSupp, 0, 0, nullptr},
    /* 22 PEEK_CQ */ {K::NotSupp, 0, 0, nullptr},
    /* 23 REQ_NOTIFY_CQ */ {K::NotSupp, 0, 0, nullptr},
    /* 24 CREATE_QP */
    {K::UdataIo, RQ(ib_uverbs_create_qp), RQ(ib_uverbs_create_qp_resp), &I::create_qp},
    /* 25 QUERY_QP */ {K::Io, RQ(ib_uverbs_query_qp), RQ(ib_uverbs_query_qp_resp), &I::query_qp},
    /* 26 MODIFY_QP */ {K::I, RQ(ib_uverbs_modify_qp), 0, &I::modify_qp},
    /* 27 DESTROY_QP */
    {K::Io, RQ(ib_uverbs_destroy_qp), RQ(ib_uverbs_destroy_qp_resp), &I::destroy_qp},
    /* 28 POST_SEND */ {K::NotSupp, 0, 0, nullptr},
    /* 29 POST_RECV */ {K::NotSupp, 0, 0, nullptr},
    /* 30 ATTACH_MCAST */ {K::I, RQ(ib_uverbs_attach_mcast), 0, &I::attach_mcast},
    /* 31 DETACH_MCAST */ {K::I, RQ(ib_uverbs_detach_mcast), 0, &I::detach_mcast},
    /* 32 CREATE_SRQ */
    {K::UdataIo, RQ(ib_uverbs_create_srq), RQ(ib_uverbs_create_srq_resp), &I::create_srq},
    /* 33 MODIFY_SRQ */ {K::UdataI, RQ(ib_uverbs_modify_srq), 0, &I::modify_srq},
    /* 34 QUERY_SRQ */
    {K::Io, RQ(ib_uverbs_query_srq), RQ(ib_uverbs_query_srq_resp), &I::query_srq},
    /* 35 DESTROY_SRQ */
    {K::Io, RQ(ib_uverbs_destroy_srq), RQ(ib_uverbs_destroy_srq_resp), &I::destroy_srq},
    /* 36 POST_SRQ_RECV */ {K::NotSupp, 0, 0, nullptr},
    /* 37 OPEN_XRCD */
    {K::UdataIo, RQ(ib_uverbs_open_xrcd), RQ(ib_uverbs_open_xrcd_resp), &I::open_xrcd},
    /* 38 CLOSE_XRCD */ {K::I, RQ(ib_uverbs_close_xrcd), 0, &I::close_xrcd},
    /* 39 CREATE_XSRQ */
    {K::UdataIo, RQ(ib_uverbs_create_xsrq), RQ(ib_uverbs_create_srq_resp), &I::create_xsrq},
    /* 40 OPEN_QP */ {K::UdataIo, RQ(ib_uverbs_open_qp), RQ(ib_uverbs_create_qp_resp), &I::open_qp},
};
const std::size_t I::kNumUpstream = sizeof(kUpstream) / sizeof(kUpstream[0]);
static_assert(sizeof(I::kUpstream) / sizeof(I::Spec) == IB_USER_VERBS_CMD_OPEN_QP + 1);

#undef RQ

} // namespace uabi::legacy
