// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Private to the client library: how each command is built and how its
// answer is read, shared by Context (client.cpp) and Chain
// (client_chain.cpp), so that a command's attributes are chosen in one place.
#ifndef UABI_CLIENT_BUILD_HPP
#define UABI_CLIENT_BUILD_HPP

#include <uabi/client.hpp>

#include <algorithm>
#include <cstring>

namespace uabi::detail {


// A built command and the output attributes its caller reads back.
struct Built {
	Command cmd;
	OutAttr out{};
	OutAttr out2{};
};

// Status of one command as a positive errno (0 = success).
inline int cmd_error(const CommandResult &r)
{
	if (r.status == 0)
		return 0;
	if (r.status < 0)
		return -r.status;
	return r.status == UABI_CMD_STATUS_NOT_RUN ? ECANCELED : EPROTO;
}

// ------------------------------------------------------------ builders
// The one place each command's attributes are chosen; Context and Chain
// both use these.

inline Command b_destroy(std::uint16_t object, Ref target)
{
	Command c(object, UABI_METHOD_DESTROY);
	c.set_target(target);
	return c;
}

inline Built b_reg_mr(Ref pd, const void *addr, std::uint64_t length,
	       std::uint32_t access, std::optional<std::uint64_t> iova)
{
	uabi_mr_reg reg{};
	reg.addr = reinterpret_cast<std::uintptr_t>(addr);
	reg.length = length;
	reg.iova = iova.value_or(reg.addr);
	reg.access = access;
	Built b{Command(UABI_OBJ_MR, UABI_METHOD_CREATE)};
	b.cmd.add_object(UABI_ATTR_MR_PD, pd).add_in(UABI_ATTR_MR_REG, reg);
	b.out = b.cmd.add_out<uabi_mr_keys>(UABI_ATTR_MR_KEYS);
	return b;
}

inline Built b_create_cq(const CqCreate &c)
{
	Built b{Command(UABI_OBJ_CQ, UABI_METHOD_CREATE)};
	b.cmd.add_in(UABI_ATTR_CQ_CQE, std::uint32_t(c.cqe));
	if (c.channel)
		b.cmd.add_object(UABI_ATTR_CQ_CHANNEL, *c.channel);
	b.cmd.add_in(UABI_ATTR_CQ_COMP_VECTOR, std::uint32_t(c.comp_vector))
		.add_in(UABI_ATTR_CQ_USER_HANDLE, std::uint64_t(c.user_handle));
	b.out = b.cmd.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP);
	return b;
}

inline Built b_create_evq(std::uint16_t object)
{
	Built b{Command(object, UABI_METHOD_CREATE)};
	b.out = b.cmd.add_out<std::int32_t>(UABI_ATTR_EVQ_FD,
					    kMandatory | UABI_ATTR_F_FD);
	return b;
}

inline Built b_create_qp(const QpCreate &c)
{
	Built b{Command(UABI_OBJ_QP, UABI_METHOD_CREATE)};
	Command &cmd = b.cmd;
	if (c.pd)
		cmd.add_object(UABI_ATTR_QP_PD, *c.pd);
	if (c.send_cq)
		cmd.add_object(UABI_ATTR_QP_SEND_CQ, *c.send_cq);
	if (c.recv_cq)
		cmd.add_object(UABI_ATTR_QP_RECV_CQ, *c.recv_cq);
	if (c.srq)
		cmd.add_object(UABI_ATTR_QP_SRQ, *c.srq);
	if (c.xrcd)
		cmd.add_object(UABI_ATTR_QP_XRCD, *c.xrcd);
	cmd.add_in(UABI_ATTR_QP_INIT, c.init)
		.add_in(UABI_ATTR_QP_USER_HANDLE, std::uint64_t(c.user_handle));
	if (c.attr)
		cmd.add_in(UABI_ATTR_QP_ATTR, *c.attr)
			.add_in(UABI_ATTR_QP_ATTR_MASK, std::uint32_t(c.attr_mask));
	b.out = cmd.add_out<uabi_qp_resp>(UABI_ATTR_QP_RESP);
	return b;
}

inline Command b_modify_qp(Ref qp, const uabi_qp_attr &attr, std::uint32_t mask)
{
	Command c(UABI_OBJ_QP, UABI_METHOD_MODIFY);
	c.set_target(qp);
	c.add_in(UABI_ATTR_QP_ATTR, attr).add_in(UABI_ATTR_QP_ATTR_MASK, mask);
	return c;
}

inline Built b_create_srq(const SrqCreate &c)
{
	Built b{Command(UABI_OBJ_SRQ, UABI_METHOD_CREATE)};
	Command &cmd = b.cmd;
	if (c.pd)
		cmd.add_object(UABI_ATTR_SRQ_PD, *c.pd);
	if (c.xrcd)
		cmd.add_object(UABI_ATTR_SRQ_XRCD, *c.xrcd);
	if (c.cq)
		cmd.add_object(UABI_ATTR_SRQ_CQ, *c.cq);
	cmd.add_in(UABI_ATTR_SRQ_INIT, c.init)
		.add_in(UABI_ATTR_SRQ_USER_HANDLE, std::uint64_t(c.user_handle));
	b.out = cmd.add_out<uabi_srq_resp>(UABI_ATTR_SRQ_RESP);
	return b;
}

inline Command b_create_ah(Ref pd, const uabi_ah_attr &attr)
{
	Command c(UABI_OBJ_AH, UABI_METHOD_CREATE);
	c.add_object(UABI_ATTR_AH_PD, pd).add_in(UABI_ATTR_AH_ATTR, attr);
	return c;
}

inline Command b_open_xrcd(int fd, std::uint32_t oflags)
{
	Command c(UABI_OBJ_XRCD, UABI_METHOD_CREATE);
	c.add_fd(UABI_ATTR_XRCD_FD, fd).add_in(UABI_ATTR_XRCD_OFLAGS, oflags);
	return c;
}

// -------------------------------------------------------------- readers

inline Result<Handle> read_handle(const Message &m, std::uint32_t i)
{
	CommandResult r = m.result(i);
	if (int e = cmd_error(r))
		return make_error(e);
	return r.out_handle;
}

// Outputs a creating command did not mark valid read as zero: the object
// exists, so its handle is still returned.
template <class T>
T read_or_zero(const Message &m, std::uint32_t i, OutAttr a)
{
	T v{};
	m.read(i, a, v);
	return v;
}

inline Result<MrInfo> read_mr(const Message &m, std::uint32_t i, OutAttr keys)
{
	auto h = read_handle(m, i);
	if (!h)
		return make_error(h.error());
	auto k = read_or_zero<uabi_mr_keys>(m, i, keys);
	return MrInfo{*h, k.lkey, k.rkey};
}

inline Result<CqInfo> read_cq(const Message &m, std::uint32_t i, OutAttr resp)
{
	auto h = read_handle(m, i);
	if (!h)
		return make_error(h.error());
	auto r = read_or_zero<uabi_cq_resp>(m, i, resp);
	return CqInfo{*h, r.cqe, r.cqn};
}

inline Result<EvqInfo> read_evq(const Message &m, std::uint32_t i, OutAttr fd)
{
	auto h = read_handle(m, i);
	if (!h)
		return make_error(h.error());
	std::int32_t v = -1;
	if (!m.read(i, fd, v))
		v = -1;
	return EvqInfo{*h, v};
}

inline Result<QpInfo> read_qp(const Message &m, std::uint32_t i, OutAttr resp)
{
	auto h = read_handle(m, i);
	if (!h)
		return make_error(h.error());
	return QpInfo{*h, read_or_zero<uabi_qp_resp>(m, i, resp)};
}

inline Result<SrqInfo> read_srq(const Message &m, std::uint32_t i, OutAttr resp)
{
	auto h = read_handle(m, i);
	if (!h)
		return make_error(h.error());
	return SrqInfo{*h, read_or_zero<uabi_srq_resp>(m, i, resp)};
}

// A query's output: ENODATA when the core did not write it.
template <class T>
Result<T> read_output(const Message &m, OutAttr a)
{
	T v{};
	if (!m.read(0, a, v))
		return make_error(ENODATA);
	return v;
}


} // namespace uabi::detail

#endif
