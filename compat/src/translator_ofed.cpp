// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy translator's OFED dialect: OFED 1.5's XRC commands 37-44 and
// their table (translator_impl.hpp).  Below 37 the dialect is upstream's.
#include "translator_impl.hpp"

#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>

namespace uabi::legacy
{

using I = Translator::Impl;
using K = I::K;

// ------------------------------------------------------- OFED dialect
int Translator::Impl::ofed_create_xrc_srq(const Req &r)
{
	uabi_ofed_create_xrc_srq full;
	struct Payload {
		std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
	} p;
	if (int e = request(r, p))
		return e;
	std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
		    sizeof(p.b));
	ib_uverbs_create_xsrq x{};
	x.response = full.response;
	x.user_handle = full.user_handle;
	x.srq_type = 1; // IB_SRQT_XRC
	x.pd_handle = full.pd_handle;
	convert::copy_srq_attr(x, full);
	x.xrcd_handle = full.xrcd_handle;
	x.cq_handle = full.xrc_cq;
	return create_srq_common(r, x);
}

int Translator::Impl::ofed_close_xrc_domain(const Req &r)
{
	uabi_ofed_close_xrc_domain full;
	struct Payload {
		std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
	} p;
	if (int e = request(r, p))
		return e;
	std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
		    sizeof(p.b));
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, UABI_METHOD_DESTROY, full.xrcd_handle);
	int st = exec(m);
	if (st == kDry)
		return 0;
	return st;
}

// create -> register(xrcd, 0xFFFFFFFF)
int Translator::Impl::ofed_create_xrc_rcv_qp(const Req &r)
{
	uabi_ofed_create_xrc_rcv_qp full;
	struct Payload {
		std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
	} p;
	if (int e = request(r, p))
		return e;
	std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
		    sizeof(p.b));
	if (int e = need_ctx())
		return e;
	uabi_qp_init init{};
	init.qp_type = UABI_QPT_XRC_RECV;
	init.sq_sig_all = full.sq_sig_all ? 1 : 0;
	convert::copy_caps(init.cap, full);
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP, full.xrc_domain_handle);
	std::size_t qoff = m.inout(UABI_ATTR_XRCD_QPN, qpn);
	m.in(UABI_ATTR_XRCD_QP_INIT, init);
	m.in(UABI_ATTR_XRCD_USER_HANDLE, std::uint64_t(full.user_handle));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_ofed_create_xrc_rcv_qp_resp resp{};
	resp.qpn = m.get<std::uint32_t>(qoff);
	if (int e = respond(r, &resp, sizeof(resp))) {
		destroy(UABI_OBJ_QP, m.result(0).out_handle);
		return e;
	}
	return 0;
}

int Translator::Impl::ofed_modify_xrc_rcv_qp(const Req &r)
{
	uabi_ofed_modify_xrc_rcv_qp full;
	struct Payload {
		std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
	} p;
	if (int e = request(r, p))
		return e;
	std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
		    sizeof(p.b));
	std::uint32_t mask = full.attr_mask;
	if (mask & ~kQpAttrStandardBits)
		return -EOPNOTSUPP;
	if (int e = modify_precheck(full, mask))
		return e;
	// What Linux ignores for XRC_TGT the core ignores too.
	uabi_qp_attr a = convert::to_uabi_modify(full, mask);
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, UABI_XRCD_MODIFY_RCV_QP, full.xrc_domain_handle);
	m.in(UABI_ATTR_XRCD_QPN, full.qp_num);
	m.in(UABI_ATTR_XRCD_QP_ATTR, a);
	m.in(UABI_ATTR_XRCD_QP_ATTR_MASK, mask);
	int st = exec(m);
	if (st == kDry)
		return 0;
	return lookup_err(st);
}

int Translator::Impl::ofed_query_xrc_rcv_qp(const Req &r)
{
	uabi_ofed_query_xrc_rcv_qp full;
	struct Payload {
		std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
	} p;
	if (int e = request(r, p))
		return e;
	std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
		    sizeof(p.b));
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, UABI_XRCD_QUERY_RCV_QP, full.xrc_domain_handle);
	m.in(UABI_ATTR_XRCD_QPN, full.qp_num);
	std::size_t off = m.out(UABI_ATTR_XRCD_QP_ATTR, sizeof(uabi_qp_attr));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	uabi_qp_attr a = m.get<uabi_qp_attr>(off);
	uabi_qp_init init{};
	init.cap = a.cap;
	ib_uverbs_query_qp_resp resp = convert::to_legacy(a, init);
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::ofed_reg_common(const Req &r, std::uint16_t method)
{
	uabi_ofed_reg_xrc_rcv_qp full;
	struct Payload {
		std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
	} p;
	if (int e = request(r, p))
		return e;
	std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
		    sizeof(p.b));
	if (method == UABI_XRCD_REG_RCV_QP && full.qp_num == UABI_XRC_QPN_CREATE)
		return -EINVAL; // registers on an existing QP only
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_XRCD, method, full.xrc_domain_handle);
	if (method == UABI_XRCD_REG_RCV_QP)
		m.inout(UABI_ATTR_XRCD_QPN, full.qp_num);
	else
		m.in(UABI_ATTR_XRCD_QPN, full.qp_num);
	int st = exec(m);
	if (st == kDry)
		return 0;
	return lookup_err(st);
}

int Translator::Impl::ofed_reg_xrc_rcv_qp(const Req &r)
{
	return ofed_reg_common(r, UABI_XRCD_REG_RCV_QP);
}

int Translator::Impl::ofed_unreg_xrc_rcv_qp(const Req &r)
{
	return ofed_reg_common(r, UABI_XRCD_UNREG_RCV_QP);
}

#define RQ(s) std::uint16_t(sizeof(s))

#define OFED_RQ(s) std::uint16_t(sizeof(s) - sizeof(ib_uverbs_cmd_hdr))
const I::Spec I::kOfed[] = {
    /* 37 CREATE_XRC_SRQ */ {K::UdataIo, OFED_RQ(uabi_ofed_create_xrc_srq),
			     RQ(ib_uverbs_create_srq_resp), &I::ofed_create_xrc_srq},
    /* 38 OPEN_XRC_DOMAIN */
    {K::UdataIo, OFED_RQ(uabi_ofed_open_xrc_domain), RQ(uabi_ofed_open_xrc_domain_resp),
     &I::open_xrcd},
    /* 39 CLOSE_XRC_DOMAIN */
    {K::UdataI, OFED_RQ(uabi_ofed_close_xrc_domain), 0, &I::ofed_close_xrc_domain},
    /* 40 CREATE_XRC_RCV_QP */
    {K::UdataIo, OFED_RQ(uabi_ofed_create_xrc_rcv_qp), RQ(uabi_ofed_create_xrc_rcv_qp_resp),
     &I::ofed_create_xrc_rcv_qp},
    /* 41 MODIFY_XRC_RCV_QP */
    {K::UdataI, OFED_RQ(uabi_ofed_modify_xrc_rcv_qp), 0, &I::ofed_modify_xrc_rcv_qp},
    /* 42 QUERY_XRC_RCV_QP */
    {K::UdataIo, OFED_RQ(uabi_ofed_query_xrc_rcv_qp), RQ(ib_uverbs_query_qp_resp),
     &I::ofed_query_xrc_rcv_qp},
    /* 43 REG_XRC_RCV_QP */
    {K::UdataI, OFED_RQ(uabi_ofed_reg_xrc_rcv_qp), 0, &I::ofed_reg_xrc_rcv_qp},
    /* 44 UNREG_XRC_RCV_QP */
    {K::UdataI, OFED_RQ(uabi_ofed_reg_xrc_rcv_qp), 0, &I::ofed_unreg_xrc_rcv_qp},
};
static_assert(sizeof(I::kOfed) / sizeof(I::Spec) ==
	      UABI_OFED_CMD_LAST - UABI_OFED_CMD_CREATE_XRC_SRQ + 1);

#undef RQ
#undef OFED_RQ

} // namespace uabi::legacy
