// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy command bytes of rdma-core 44 (IOCTL_MODE=write) and of OFED's
// libibverbs; docs/legacy-abi.md ("The old path") has the layout of each.
#include <uabi/legacy_encoder.hpp>
#include <uabi/legacy_ofed.h>

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

void dest_from(ib_uverbs_qp_dest &d, const ibv_ah_attr &a)
{
	std::memcpy(d.dgid, a.grh.dgid.raw, 16);
	d.flow_label = a.grh.flow_label;
	d.dlid = a.dlid;
	d.reserved = 0;
	d.sgid_index = a.grh.sgid_index;
	d.hop_limit = a.grh.hop_limit;
	d.traffic_class = a.grh.traffic_class;
	d.sl = a.sl;
	d.src_path_bits = a.src_path_bits;
	d.static_rate = a.static_rate;
	d.is_global = a.is_global;
	d.port_num = a.port_num;
}

// rdma-core's copy_modify_qp_fields(): only the fields of the mask.
template <class M> void modify_fields(M &c, const ibv_qp_attr &a, int mask)
{
	if (mask & IBV_QP_STATE)
		c.qp_state = a.qp_state;
	if (mask & IBV_QP_CUR_STATE)
		c.cur_qp_state = a.cur_qp_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		c.en_sqd_async_notify = a.en_sqd_async_notify;
	if (mask & IBV_QP_ACCESS_FLAGS)
		c.qp_access_flags = a.qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		c.pkey_index = a.pkey_index;
	if (mask & IBV_QP_PORT)
		c.port_num = a.port_num;
	if (mask & IBV_QP_QKEY)
		c.qkey = a.qkey;
	if (mask & IBV_QP_AV)
		dest_from(c.dest, a.ah_attr);
	if (mask & IBV_QP_PATH_MTU)
		c.path_mtu = a.path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		c.timeout = a.timeout;
	if (mask & IBV_QP_RETRY_CNT)
		c.retry_cnt = a.retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		c.rnr_retry = a.rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		c.rq_psn = a.rq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		c.max_rd_atomic = a.max_rd_atomic;
	if (mask & IBV_QP_ALT_PATH) {
		c.alt_pkey_index = a.alt_pkey_index;
		c.alt_port_num = a.alt_port_num;
		c.alt_timeout = a.alt_timeout;
		dest_from(c.alt_dest, a.alt_ah_attr);
	}
	if (mask & IBV_QP_MIN_RNR_TIMER)
		c.min_rnr_timer = a.min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		c.sq_psn = a.sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		c.max_dest_rd_atomic = a.max_dest_rd_atomic;
	if (mask & IBV_QP_PATH_MIG_STATE)
		c.path_mig_state = a.path_mig_state;
	if (mask & IBV_QP_DEST_QPN)
		c.dest_qp_num = a.dest_qp_num;
}

QpInfo qp_info(const ib_uverbs_create_qp_resp &r)
{
	QpInfo q{};
	q.handle = r.qp_handle;
	q.resp.qpn = r.qpn;
	q.resp.cap.max_send_wr = r.max_send_wr;
	q.resp.cap.max_recv_wr = r.max_recv_wr;
	q.resp.cap.max_send_sge = r.max_send_sge;
	q.resp.cap.max_recv_sge = r.max_recv_sge;
	q.resp.cap.max_inline_data = r.max_inline_data;
	return q;
}

SrqInfo srq_info(const ib_uverbs_create_srq_resp &r)
{
	SrqInfo s{};
	s.handle = r.srq_handle;
	s.resp.srqn = r.srqn;
	s.resp.attr.max_wr = r.max_wr;
	s.resp.attr.max_sge = r.max_sge;
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
	q.max_send_wr = in.cap.max_send_wr;
	q.max_recv_wr = in.cap.max_recv_wr;
	q.max_send_sge = in.cap.max_send_sge;
	q.max_recv_sge = in.cap.max_recv_sge;
	q.max_inline_data = in.cap.max_inline_data;
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
	modify_fields(c.core, attr, attr_mask);
	return send(&c, sizeof(c));
}

Result<void> Encoder::modify_qp_ex(Handle qp, const ibv_qp_attr &attr, int attr_mask)
{
	ExCmd<ib_uverbs_ex_modify_qp> c{};
	ib_uverbs_ex_modify_qp_resp resp;
	frame_ex(c, IB_USER_VERBS_EX_CMD_MODIFY_QP, &resp, sizeof(resp));
	c.core.base.qp_handle = qp;
	c.core.base.attr_mask = std::uint32_t(attr_mask);
	modify_fields(c.core.base, attr, attr_mask);
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
	c.core.max_wr = attr.max_wr;
	c.core.max_sge = attr.max_sge;
	c.core.srq_limit = attr.srq_limit;
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
	c.core.max_wr = attr.max_wr;
	c.core.max_sge = attr.max_sge;
	c.core.srq_limit = attr.srq_limit;
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
	c.core.max_wr = attr.max_wr;
	c.core.srq_limit = attr.srq_limit;
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
	return ibv_srq_attr{resp.max_wr, resp.max_sge, resp.srq_limit};
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
	c.core.attr.dlid = attr.dlid;
	c.core.attr.sl = attr.sl;
	c.core.attr.src_path_bits = attr.src_path_bits;
	c.core.attr.static_rate = attr.static_rate;
	c.core.attr.is_global = attr.is_global;
	c.core.attr.port_num = attr.port_num;
	c.core.attr.grh.flow_label = attr.grh.flow_label;
	c.core.attr.grh.sgid_index = attr.grh.sgid_index;
	c.core.attr.grh.hop_limit = attr.grh.hop_limit;
	c.core.attr.grh.traffic_class = attr.grh.traffic_class;
	std::memcpy(c.core.attr.grh.dgid, attr.grh.dgid.raw, 16);
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
	c.max_wr = attr.max_wr;
	c.max_sge = attr.max_sge;
	c.srq_limit = attr.srq_limit;
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
	c.max_send_wr = cap.max_send_wr;
	c.max_recv_wr = cap.max_recv_wr;
	c.max_send_sge = cap.max_send_sge;
	c.max_recv_sge = cap.max_recv_sge;
	c.max_inline_data = cap.max_inline_data;
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
	c.qkey = attr.qkey;
	c.rq_psn = attr.rq_psn;
	c.sq_psn = attr.sq_psn;
	c.dest_qp_num = attr.dest_qp_num;
	c.qp_access_flags = attr.qp_access_flags;
	c.pkey_index = attr.pkey_index;
	c.alt_pkey_index = attr.alt_pkey_index;
	c.qp_state = std::uint8_t(attr.qp_state);
	c.cur_qp_state = std::uint8_t(attr.cur_qp_state);
	c.path_mtu = std::uint8_t(attr.path_mtu);
	c.path_mig_state = std::uint8_t(attr.path_mig_state);
	c.en_sqd_async_notify = attr.en_sqd_async_notify;
	c.max_rd_atomic = attr.max_rd_atomic;
	c.max_dest_rd_atomic = attr.max_dest_rd_atomic;
	c.min_rnr_timer = attr.min_rnr_timer;
	c.port_num = attr.port_num;
	c.timeout = attr.timeout;
	c.retry_cnt = attr.retry_cnt;
	c.rnr_retry = attr.rnr_retry;
	c.alt_port_num = attr.alt_port_num;
	c.alt_timeout = attr.alt_timeout;
	dest_from(c.dest, attr.ah_attr);
	dest_from(c.alt_dest, attr.alt_ah_attr);
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
