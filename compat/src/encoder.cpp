// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy command bytes of rdma-core 44 (IOCTL_MODE=write) and of OFED's
// libibverbs; docs/legacy-abi.md ("The old path") has the layout of each.
#include <uabi/legacy_encoder.hpp>
#include <uabi/legacy_ofed.h>
#include <uabi/convert/av.hpp>
#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace uabi::legacy
{

namespace
{

// rdma-core's DECLARE_CMD: the header, then the kernel's struct.
template <class T> struct Cmd {
	ib_uverbs_cmd_hdr hdr;
	T core;
};

// rdma-core's DECLARE_CMD_EX: struct ex_hdr, then the kernel's struct.
template <class T> struct ExCmd {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_ex_cmd_hdr ex;
	T core;
};

static_assert(sizeof(Cmd<ib_uverbs_dealloc_pd>) == 12);
static_assert(sizeof(Cmd<ib_uverbs_create_qp>) == 64);
static_assert(sizeof(ExCmd<ib_uverbs_ex_create_qp>) == 88);

std::uint64_t ptr(const void *p)
{
	return reinterpret_cast<std::uintptr_t>(p);
}

// _execute_cmd_write(): command, in_words = request bytes / 4, out_words =
// response bytes / 4 (the response pointer is set by the caller when the
// struct has one).
template <class T> void frame(Cmd<T> &c, std::uint32_t command, std::size_t resp_size)
{
	c.hdr.command = command;
	c.hdr.in_words = std::uint16_t(sizeof(c) / 4);
	c.hdr.out_words = std::uint16_t(resp_size / 4);
}

// _execute_cmd_write_ex(): in/out words count 8-byte words of the core
// structs only; the response buffer is zeroed first.
template <class T>
void frame_ex(ExCmd<T> &c, std::uint32_t command, void *resp, std::size_t resp_size)
{
	c.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command;
	c.hdr.in_words = std::uint16_t(sizeof(T) / 8);
	c.hdr.out_words = std::uint16_t(resp_size / 8);
	c.ex.provider_in_words = 0;
	c.ex.provider_out_words = 0;
	c.ex.response = ptr(resp);
	c.ex.cmd_hdr_reserved = 0;
	if (resp)
		std::memset(resp, 0, resp_size);
}

QpInfo qp_info(const ib_uverbs_create_qp_resp &r)
{
	QpInfo q{};
	q.handle = r.qp_handle;
	q.resp.qpn = r.qpn;
	convert::copy_caps(q.resp.cap, r);
	return q;
}

SrqInfo srq_info(const ib_uverbs_create_srq_resp &r)
{
	SrqInfo s{};
	s.handle = r.srq_handle;
	s.resp.srqn = r.srqn;
	convert::copy_srq_sizes(s.resp.attr, r);
	return s;
}

} // namespace

Result<void> Encoder::send(const void *buf, std::size_t len)
{
	last_len_ = std::min(len, last_.size());
	std::memcpy(last_.data(), buf, last_len_);
	ssize_t n = t_ ? t_->write(buf, len) : ::write(fd_, buf, len);
	if (n != ssize_t(len))
		return make_error(n < 0 ? errno : EIO);
	return {};
}

Result<void> Encoder::write_raw(const void *buf, std::size_t len)
{
	return send(buf, len);
}

#define SEND(c)                                                                                    \
	do {                                                                                       \
		if (auto r_ = send(&(c), sizeof(c)); !r_)                                          \
			return make_error(r_.error());                                             \
	} while (0)

// ---------------------------------------------------------------- device

Result<LegacyContext> Encoder::get_context()
{
	Cmd<ib_uverbs_get_context> c{};
	ib_uverbs_get_context_resp resp{};
	frame(c, IB_USER_VERBS_CMD_GET_CONTEXT, sizeof(resp));
	c.core.response = ptr(&resp);
	SEND(c);
	return LegacyContext{int(resp.async_fd), resp.num_comp_vectors};
}

Result<ib_uverbs_query_device_resp> Encoder::query_device()
{
	Cmd<ib_uverbs_query_device> c{};
	ib_uverbs_query_device_resp resp{};
	frame(c, IB_USER_VERBS_CMD_QUERY_DEVICE, sizeof(resp));
	c.core.response = ptr(&resp);
	SEND(c);
	return resp;
}

Result<ib_uverbs_ex_query_device_resp> Encoder::query_device_ex()
{
	ExCmd<ib_uverbs_ex_query_device> c{};
	ib_uverbs_ex_query_device_resp resp;
	frame_ex(c, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, &resp, sizeof(resp));
	SEND(c);
	return resp;
}

Result<ib_uverbs_query_port_resp> Encoder::query_port(std::uint8_t port)
{
	Cmd<ib_uverbs_query_port> c{};
	ib_uverbs_query_port_resp resp{};
	frame(c, IB_USER_VERBS_CMD_QUERY_PORT, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.port_num = port;
	SEND(c);
	return resp;
}

// ---------------------------------------------------------------- PD, MR

Result<Handle> Encoder::alloc_pd()
{
	Cmd<ib_uverbs_alloc_pd> c{};
	ib_uverbs_alloc_pd_resp resp{};
	frame(c, IB_USER_VERBS_CMD_ALLOC_PD, sizeof(resp));
	c.core.response = ptr(&resp);
	SEND(c);
	return Handle(resp.pd_handle);
}

Result<void> Encoder::dealloc_pd(Handle pd)
{
	Cmd<ib_uverbs_dealloc_pd> c{};
	frame(c, IB_USER_VERBS_CMD_DEALLOC_PD, 0);
	c.core.pd_handle = pd;
	return send(&c, sizeof(c));
}

Result<MrInfo> Encoder::reg_mr(Handle pd, const void *addr, std::size_t length,
			       std::uint64_t hca_va, int access)
{
	Cmd<ib_uverbs_reg_mr> c{};
	ib_uverbs_reg_mr_resp resp{};
	frame(c, IB_USER_VERBS_CMD_REG_MR, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.start = ptr(addr);
	c.core.length = length;
	if ((access & IBV_ACCESS_ON_DEMAND) && length == SIZE_MAX)
		c.core.length = UINT64_MAX;
	c.core.hca_va = hca_va;
	c.core.pd_handle = pd;
	c.core.access_flags = std::uint32_t(access);
	SEND(c);
	return MrInfo{resp.mr_handle, resp.lkey, resp.rkey};
}

Result<MrInfo> Encoder::rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
				 std::size_t length, std::uint64_t hca_va, int access)
{
	Cmd<ib_uverbs_rereg_mr> c{};
	ib_uverbs_rereg_mr_resp resp{};
	frame(c, IB_USER_VERBS_CMD_REREG_MR, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.mr_handle = mr;
	c.core.flags = std::uint32_t(flags);
	c.core.start = ptr(addr);
	c.core.length = length;
	c.core.hca_va = hca_va;
	c.core.pd_handle = pd;
	c.core.access_flags = std::uint32_t(access);
	SEND(c);
	return MrInfo{mr, resp.lkey, resp.rkey};
}

Result<void> Encoder::dereg_mr(Handle mr)
{
	Cmd<ib_uverbs_dereg_mr> c{};
	frame(c, IB_USER_VERBS_CMD_DEREG_MR, 0);
	c.core.mr_handle = mr;
	return send(&c, sizeof(c));
}

Result<LegacyMw> Encoder::alloc_mw(Handle pd, ibv_mw_type type)
{
	Cmd<ib_uverbs_alloc_mw> c{};
	ib_uverbs_alloc_mw_resp resp{};
	frame(c, IB_USER_VERBS_CMD_ALLOC_MW, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.pd_handle = pd;
	c.core.mw_type = std::uint8_t(type);
	SEND(c);
	return LegacyMw{resp.mw_handle, resp.rkey};
}

Result<void> Encoder::dealloc_mw(Handle mw)
{
	Cmd<ib_uverbs_dealloc_mw> c{};
	frame(c, IB_USER_VERBS_CMD_DEALLOC_MW, 0);
	c.core.mw_handle = mw;
	return send(&c, sizeof(c));
}

Result<void> Encoder::attach_mcast(Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid)
{
	Cmd<ib_uverbs_attach_mcast> c{};
	frame(c, IB_USER_VERBS_CMD_ATTACH_MCAST, 0);
	std::memcpy(c.core.gid, gid, 16);
	c.core.qp_handle = qp;
	c.core.mlid = lid;
	return send(&c, sizeof(c));
}

Result<void> Encoder::detach_mcast(Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid)
{
	Cmd<ib_uverbs_detach_mcast> c{};
	frame(c, IB_USER_VERBS_CMD_DETACH_MCAST, 0);
	std::memcpy(c.core.gid, gid, 16);
	c.core.qp_handle = qp;
	c.core.mlid = lid;
	return send(&c, sizeof(c));
}

// ------------------------------------------------------------------- CQ

Result<int> Encoder::create_comp_channel()
{
	Cmd<ib_uverbs_create_comp_channel> c{};
	ib_uverbs_create_comp_channel_resp resp{};
	frame(c, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, sizeof(resp));
	c.core.response = ptr(&resp);
	SEND(c);
	return int(resp.fd);
}

Result<CqInfo> Encoder::create_cq(int cqe, int channel_fd, int comp_vector,
				  std::uint64_t user_handle)
{
	Cmd<ib_uverbs_create_cq> c{};
	ib_uverbs_create_cq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_CREATE_CQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.user_handle = user_handle;
	c.core.cqe = std::uint32_t(cqe);
	c.core.comp_vector = std::uint32_t(comp_vector);
	c.core.comp_channel = channel_fd;
	SEND(c);
	return CqInfo{resp.cq_handle, resp.cqe, 0};
}

Result<CqInfo> Encoder::create_cq_ex(int cqe, int channel_fd, int comp_vector,
				     std::uint64_t user_handle, std::uint32_t flags)
{
	ExCmd<ib_uverbs_ex_create_cq> c{};
	ib_uverbs_ex_create_cq_resp resp;
	frame_ex(c, IB_USER_VERBS_EX_CMD_CREATE_CQ, &resp, sizeof(resp));
	c.core.user_handle = user_handle;
	c.core.cqe = std::uint32_t(cqe);
	c.core.comp_vector = std::uint32_t(comp_vector);
	c.core.comp_channel = channel_fd;
	c.core.flags = flags;
	SEND(c);
	return CqInfo{resp.base.cq_handle, resp.base.cqe, 0};
}

Result<std::uint32_t> Encoder::resize_cq(Handle cq, int cqe)
{
	Cmd<ib_uverbs_resize_cq> c{};
	ib_uverbs_resize_cq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_RESIZE_CQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.cq_handle = cq;
	c.core.cqe = std::uint32_t(cqe);
	SEND(c);
	return resp.cqe;
}

Result<ib_uverbs_destroy_cq_resp> Encoder::destroy_cq(Handle cq)
{
	Cmd<ib_uverbs_destroy_cq> c{};
	ib_uverbs_destroy_cq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_DESTROY_CQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.cq_handle = cq;
	SEND(c);
	return resp;
}

Result<void> Encoder::modify_cq(Handle cq, std::uint32_t attr_mask, std::uint16_t cq_count,
				std::uint16_t cq_period)
{
	ExCmd<ib_uverbs_ex_modify_cq> c{};
	frame_ex(c, IB_USER_VERBS_EX_CMD_MODIFY_CQ, nullptr, 0);
	c.core.cq_handle = cq;
	c.core.attr_mask = attr_mask;
	c.core.attr.cq_count = cq_count;
	c.core.attr.cq_period = cq_period;
	return send(&c, sizeof(c));
}

// ------------------------------------------------------------------- QP

namespace
{
// ibv_icmd_create_qp()'s request: handles by type, recv caps of an XRC send
// QP zeroed ("compatible with kernel code from the 'write' mode").
template <class T> void qp_request(T &q, const LegacyQpInit &in)
{
	q.user_handle = in.user_handle;
	q.pd_handle = in.pd;
	convert::copy_caps(q, in.cap);
	q.sq_sig_all = in.sq_sig_all ? 1 : 0;
	q.qp_type = std::uint8_t(in.qp_type);
	q.srq_handle = in.srq;
	q.is_srq = in.srq ? 1 : 0;
	if (in.qp_type != IBV_QPT_XRC_RECV) {
		q.send_cq_handle = in.send_cq;
		if (in.qp_type != IBV_QPT_XRC_SEND)
			q.recv_cq_handle = in.recv_cq;
	}
	if (in.qp_type == IBV_QPT_XRC_SEND) {
		q.max_recv_wr = 0;
		q.max_recv_sge = 0;
	}
}
} // namespace

Result<QpInfo> Encoder::create_qp(const LegacyQpInit &init)
{
	Cmd<ib_uverbs_create_qp> c{};
	ib_uverbs_create_qp_resp resp{};
	frame(c, IB_USER_VERBS_CMD_CREATE_QP, sizeof(resp));
	qp_request(c.core, init);
	c.core.response = ptr(&resp);
	SEND(c);
	return qp_info(resp);
}

Result<QpInfo> Encoder::create_qp_ex(const LegacyQpInit &init)
{
	ExCmd<ib_uverbs_ex_create_qp> c{};
	ib_uverbs_ex_create_qp_resp resp;
	frame_ex(c, IB_USER_VERBS_EX_CMD_CREATE_QP, &resp, sizeof(resp));
	qp_request(c.core, init);
	c.core.create_flags = init.create_flags;
	SEND(c);
	return qp_info(resp.base);
}

Result<QpInfo> Encoder::open_qp(Handle xrcd, std::uint32_t qpn, ibv_qp_type type,
				std::uint64_t user_handle)
{
	Cmd<ib_uverbs_open_qp> c{};
	ib_uverbs_create_qp_resp resp{};
	frame(c, IB_USER_VERBS_CMD_OPEN_QP, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.user_handle = user_handle;
	c.core.pd_handle = xrcd;
	c.core.qpn = qpn;
	c.core.qp_type = std::uint8_t(type);
	SEND(c);
	return qp_info(resp);
}

Result<QueryQpResp> Encoder::query_qp(Handle qp, int attr_mask)
{
	// ibv_cmd_query_qp(): from IBV_QP_RATE_LIMIT on, only the _ex path.
	if (attr_mask & ~(IBV_QP_RATE_LIMIT - 1))
		return make_error(EOPNOTSUPP);
	Cmd<ib_uverbs_query_qp> c{};
	ib_uverbs_query_qp_resp resp{};
	frame(c, IB_USER_VERBS_CMD_QUERY_QP, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.qp_handle = qp;
	c.core.attr_mask = std::uint32_t(attr_mask);
	SEND(c);
	QueryQpResp q;
	std::memcpy(q.raw, &resp, sizeof(resp));
	return q;
}

Result<void> Encoder::modify_qp(Handle qp, const ibv_qp_attr &attr, int attr_mask)
{
	if (attr_mask & ~(IBV_QP_RATE_LIMIT - 1))
		return make_error(EOPNOTSUPP);
	Cmd<ib_uverbs_modify_qp> c{};
	frame(c, IB_USER_VERBS_CMD_MODIFY_QP, 0);
	c.core.qp_handle = qp;
	c.core.attr_mask = std::uint32_t(attr_mask);
	convert::to_legacy_modify(c.core, attr, attr_mask);
	return send(&c, sizeof(c));
}

Result<void> Encoder::modify_qp_ex(Handle qp, const ibv_qp_attr &attr, int attr_mask)
{
	ExCmd<ib_uverbs_ex_modify_qp> c{};
	ib_uverbs_ex_modify_qp_resp resp;
	frame_ex(c, IB_USER_VERBS_EX_CMD_MODIFY_QP, &resp, sizeof(resp));
	c.core.base.qp_handle = qp;
	c.core.base.attr_mask = std::uint32_t(attr_mask);
	convert::to_legacy_modify(c.core.base, attr, attr_mask);
	if (attr_mask & IBV_QP_RATE_LIMIT)
		c.core.rate_limit = attr.rate_limit;
	return send(&c, sizeof(c));
}

Result<std::uint32_t> Encoder::destroy_qp(Handle qp)
{
	Cmd<ib_uverbs_destroy_qp> c{};
	ib_uverbs_destroy_qp_resp resp{};
	frame(c, IB_USER_VERBS_CMD_DESTROY_QP, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.qp_handle = qp;
	SEND(c);
	return resp.events_reported;
}

// ------------------------------------------------------------------ SRQ

Result<SrqInfo> Encoder::create_srq(Handle pd, const ibv_srq_attr &attr, std::uint64_t user_handle)
{
	Cmd<ib_uverbs_create_srq> c{};
	ib_uverbs_create_srq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.user_handle = user_handle;
	c.core.pd_handle = pd;
	convert::copy_srq_attr(c.core, attr);
	SEND(c);
	return srq_info(resp);
}

Result<SrqInfo> Encoder::create_xsrq(Handle pd, ibv_srq_type type, Handle xrcd, Handle cq,
				     const ibv_srq_attr &attr, std::uint64_t user_handle)
{
	Cmd<ib_uverbs_create_xsrq> c{};
	ib_uverbs_create_srq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_CREATE_XSRQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.user_handle = user_handle;
	c.core.srq_type = std::uint32_t(type);
	c.core.pd_handle = pd;
	convert::copy_srq_attr(c.core, attr);
	c.core.xrcd_handle = xrcd;
	c.core.cq_handle = cq;
	SEND(c);
	return srq_info(resp);
}

Result<void> Encoder::modify_srq(Handle srq, const ibv_srq_attr &attr, int attr_mask)
{
	Cmd<ib_uverbs_modify_srq> c{};
	frame(c, IB_USER_VERBS_CMD_MODIFY_SRQ, 0);
	c.core.srq_handle = srq;
	c.core.attr_mask = std::uint32_t(attr_mask);
	convert::copy_srq_modify(c.core, attr);
	return send(&c, sizeof(c));
}

Result<ibv_srq_attr> Encoder::query_srq(Handle srq)
{
	Cmd<ib_uverbs_query_srq> c{};
	ib_uverbs_query_srq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_QUERY_SRQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.srq_handle = srq;
	SEND(c);
	ibv_srq_attr a{};
	convert::copy_srq_attr(a, resp);
	return a;
}

Result<std::uint32_t> Encoder::destroy_srq(Handle srq)
{
	Cmd<ib_uverbs_destroy_srq> c{};
	ib_uverbs_destroy_srq_resp resp{};
	frame(c, IB_USER_VERBS_CMD_DESTROY_SRQ, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.srq_handle = srq;
	SEND(c);
	return resp.events_reported;
}

// ------------------------------------------------------------- AH, XRCD

Result<Handle> Encoder::create_ah(Handle pd, const ibv_ah_attr &attr, std::uint64_t user_handle)
{
	Cmd<ib_uverbs_create_ah> c{};
	ib_uverbs_create_ah_resp resp{};
	frame(c, IB_USER_VERBS_CMD_CREATE_AH, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.user_handle = user_handle;
	c.core.pd_handle = pd;
	c.core.attr = convert::to_legacy_ah(attr);
	SEND(c);
	return Handle(resp.ah_handle);
}

Result<void> Encoder::destroy_ah(Handle ah)
{
	Cmd<ib_uverbs_destroy_ah> c{};
	frame(c, IB_USER_VERBS_CMD_DESTROY_AH, 0);
	c.core.ah_handle = ah;
	return send(&c, sizeof(c));
}

Result<Handle> Encoder::open_xrcd(int fd, int oflags)
{
	Cmd<ib_uverbs_open_xrcd> c{};
	ib_uverbs_open_xrcd_resp resp{};
	frame(c, IB_USER_VERBS_CMD_OPEN_XRCD, sizeof(resp));
	c.core.response = ptr(&resp);
	c.core.fd = std::uint32_t(fd);
	c.core.oflags = std::uint32_t(oflags);
	SEND(c);
	return Handle(resp.xrcd_handle);
}

Result<void> Encoder::close_xrcd(Handle xrcd)
{
	Cmd<ib_uverbs_close_xrcd> c{};
	frame(c, IB_USER_VERBS_CMD_CLOSE_XRCD, 0);
	c.core.xrcd_handle = xrcd;
	return send(&c, sizeof(c));
}

// ------------------------------------------------------------------ OFED
// OFED's IBV_INIT_CMD(_RESP): in_words = sizeof(cmd)/4, out_words =
// sizeof(resp)/4 (0 without a response), response = the response buffer.

namespace
{
template <class T> void ofed_frame(T &c, std::uint32_t command, std::size_t resp_size)
{
	c.hdr.command = command;
	c.hdr.in_words = std::uint16_t(sizeof(T) / 4);
	c.hdr.out_words = std::uint16_t(resp_size / 4);
}
} // namespace

Result<SrqInfo> Encoder::ofed_create_xrc_srq(Handle pd, Handle xrc_domain, Handle xrc_cq,
					     const ibv_srq_attr &attr, std::uint64_t user_handle)
{
	uabi_ofed_create_xrc_srq c{};
	ib_uverbs_create_srq_resp resp{};
	ofed_frame(c, UABI_OFED_CMD_CREATE_XRC_SRQ, sizeof(resp));
	c.response = ptr(&resp);
	c.user_handle = user_handle;
	c.pd_handle = pd;
	convert::copy_srq_attr(c, attr);
	c.xrcd_handle = xrc_domain;
	c.xrc_cq = xrc_cq;
	SEND(c);
	return srq_info(resp);
}

Result<Handle> Encoder::ofed_open_xrc_domain(int fd, int oflags)
{
	uabi_ofed_open_xrc_domain c{};
	uabi_ofed_open_xrc_domain_resp resp{};
	ofed_frame(c, UABI_OFED_CMD_OPEN_XRC_DOMAIN, sizeof(resp));
	c.response = ptr(&resp);
	c.fd = std::uint32_t(fd);
	c.oflags = std::uint32_t(oflags);
	SEND(c);
	return Handle(resp.xrcd_handle);
}

Result<void> Encoder::ofed_close_xrc_domain(Handle xrc_domain)
{
	uabi_ofed_close_xrc_domain c{};
	ofed_frame(c, UABI_OFED_CMD_CLOSE_XRC_DOMAIN, 0);
	c.xrcd_handle = xrc_domain;
	return send(&c, sizeof(c));
}

Result<std::uint32_t> Encoder::ofed_create_xrc_rcv_qp(Handle xrc_domain, const ibv_qp_cap &cap,
						      bool sq_sig_all, std::uint64_t user_handle)
{
	uabi_ofed_create_xrc_rcv_qp c{};
	uabi_ofed_create_xrc_rcv_qp_resp resp{};
	ofed_frame(c, UABI_OFED_CMD_CREATE_XRC_RCV_QP, sizeof(resp));
	c.response = ptr(&resp);
	c.user_handle = user_handle;
	c.xrc_domain_handle = xrc_domain;
	convert::copy_caps(c, cap);
	c.sq_sig_all = sq_sig_all ? 1 : 0;
	c.qp_type = UABI_OFED_QPT_XRC;
	SEND(c);
	return resp.qpn;
}

Result<void> Encoder::ofed_modify_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn,
					     const ibv_qp_attr &attr, int attr_mask)
{
	// OFED's ibv_cmd_modify_xrc_rcv_qp copies every field whatever the
	// mask; with a zeroed attr that is the same as copying the masked ones.
	uabi_ofed_modify_xrc_rcv_qp c{};
	ofed_frame(c, UABI_OFED_CMD_MODIFY_XRC_RCV_QP, 0);
	c.xrc_domain_handle = xrc_domain;
	c.qp_num = qpn;
	c.attr_mask = std::uint32_t(attr_mask);
	convert::to_legacy_modify_all(c, attr);
	return send(&c, sizeof(c));
}

Result<QueryQpResp> Encoder::ofed_query_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn,
						   int attr_mask)
{
	uabi_ofed_query_xrc_rcv_qp c{};
	ib_uverbs_query_qp_resp resp{};
	ofed_frame(c, UABI_OFED_CMD_QUERY_XRC_RCV_QP, sizeof(resp));
	c.response = ptr(&resp);
	c.xrc_domain_handle = xrc_domain;
	c.qp_num = qpn;
	c.attr_mask = std::uint32_t(attr_mask);
	SEND(c);
	QueryQpResp q;
	std::memcpy(q.raw, &resp, sizeof(resp));
	return q;
}

Result<void> Encoder::ofed_reg_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn)
{
	uabi_ofed_reg_xrc_rcv_qp c{};
	ofed_frame(c, UABI_OFED_CMD_REG_XRC_RCV_QP, 0);
	c.xrc_domain_handle = xrc_domain;
	c.qp_num = qpn;
	return send(&c, sizeof(c));
}

Result<void> Encoder::ofed_unreg_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn)
{
	uabi_ofed_reg_xrc_rcv_qp c{};
	ofed_frame(c, UABI_OFED_CMD_UNREG_XRC_RCV_QP, 0);
	c.xrc_domain_handle = xrc_domain;
	c.qp_num = qpn;
	return send(&c, sizeof(c));
}

} // namespace uabi::legacy
