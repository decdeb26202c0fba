// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Context: one call per verb of the new uAPI (client.hpp); the commands are
// built and read in client_build.hpp, chains are client_chain.cpp.
#include "client_build.hpp"

namespace uabi {

using namespace detail;

// -------------------------------------------------------------- Context

Result<Context> Context::open()
{
	auto b = backend_from_env();
	if (!b)
		return make_error(b.error());
	return open(*b);
}

Result<Context> Context::open(Backend b)
{
	auto t = open_transport(b);
	if (!t)
		return make_error(t.error());
	return Context(std::move(*t));
}

Result<Context> Context::open_device(unsigned device)
{
	auto b = backend_from_env();
	if (!b)
		return make_error(b.error());
	auto t = open_transport(*b, device);
	if (!t)
		return make_error(t.error());
	return Context(std::move(*t));
}

Result<Context> Context::import(int fd)
{
	auto t = import_transport(fd);
	if (!t)
		return make_error(t.error());
	return Context(std::move(*t));
}

Result<void> Context::execute(Message &m)
{
	if (!m.encoded())
		if (int e = m.encode())
			return make_error(e);
	int st = t_->execute(m.raw());
	if (st < 0)
		return make_error(-st);
	if (st > 0)
		return make_error(EPROTO);
	return {};
}

Result<Message> Context::call(Command cmd)
{
	// A lone command has no earlier command to refer to.
	if (cmd.uses_chain_refs())
		return make_error(EINVAL);
	Message m;
	m.add(std::move(cmd));
	if (auto r = execute(m); !r)
		return make_error(r.error());
	if (int e = cmd_error(m.result(0)))
		return make_error(e);
	return m;
}

Result<Handle> Context::create(Command cmd)
{
	auto m = call(std::move(cmd));
	if (!m)
		return make_error(m.error());
	return m->result(0).out_handle;
}

Result<void> Context::simple(Command cmd)
{
	auto m = call(std::move(cmd));
	if (!m)
		return make_error(m.error());
	return {};
}

Result<void> Context::destroy(std::uint16_t object, Handle h)
{
	return simple(b_destroy(object, h));
}

// Device.

Result<DeviceInfo> Context::query_device()
{
	Command c(UABI_OBJ_DEVICE, UABI_METHOD_QUERY, kDeviceHandle);
	OutAttr info = c.add_out<uabi_device_attr>(UABI_ATTR_DEVICE_INFO);
	OutAttr name = c.add_out(UABI_ATTR_DEVICE_NAME, 64);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	DeviceInfo d{};
	if (!m->read(0, info, d.attr))
		return make_error(ENODATA);
	bool valid = false;
	auto n = m->out_bytes(0, name, &valid);
	if (valid) {
		auto *p = reinterpret_cast<const char *>(n.data());
		d.name.assign(p, strnlen(p, n.size()));
	}
	return d;
}

Result<uabi_port_attr> Context::query_port(std::uint32_t port)
{
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PORT, kDeviceHandle);
	c.add_in(UABI_ATTR_DEVICE_PORT_NUM, port);
	OutAttr o = c.add_out<uabi_port_attr>(UABI_ATTR_DEVICE_PORT_INFO);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<uabi_port_attr>(*m, o);
}

Result<Gid> Context::query_gid(std::uint32_t port, std::uint32_t index)
{
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_GID, kDeviceHandle);
	c.add_in(UABI_ATTR_DEVICE_PORT_NUM, port).add_in(UABI_ATTR_DEVICE_INDEX, index);
	OutAttr o = c.add_out<Gid>(UABI_ATTR_DEVICE_GID);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<Gid>(*m, o);
}

Result<std::uint16_t> Context::query_pkey(std::uint32_t port, std::uint32_t index)
{
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PKEY, kDeviceHandle);
	c.add_in(UABI_ATTR_DEVICE_PORT_NUM, port).add_in(UABI_ATTR_DEVICE_INDEX, index);
	OutAttr o = c.add_out<std::uint16_t>(UABI_ATTR_DEVICE_PKEY);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<std::uint16_t>(*m, o);
}

Result<std::vector<uabi_discovery_entry>> Context::discover()
{
	constexpr std::size_t kEntry = sizeof(uabi_discovery_entry);
	// What fits in one maximal message with this single attribute.
	constexpr std::size_t kMaxEntries =
		(UABI_MAX_MSG_BYTES - sizeof(uabi_msg_hdr) - sizeof(uabi_cmd_hdr) -
		 sizeof(uabi_attr) - sizeof(uabi_discovery)) / kEntry;
	std::size_t cap = 128;

	// The first answer tells the total; one retry with that size (more
	// only if the device grew in between).
	for (int attempt = 0; attempt < 4; attempt++) {
		Command c(UABI_OBJ_DEVICE, UABI_DEVICE_DISCOVER, kDeviceHandle);
		OutAttr o = c.add_out(UABI_ATTR_DEVICE_DISCOVERY,
				      std::uint32_t(sizeof(uabi_discovery) + cap * kEntry));
		Message m;
		m.add(std::move(c));
		auto r = execute(m);
		int err = r ? cmd_error(m.result(0)) : r.error();

		bool valid = false;
		auto p = m.out_bytes(0, o, &valid);
		uabi_discovery hdr{};
		if (valid && p.size() >= sizeof(hdr))
			std::memcpy(&hdr, p.data(), sizeof(hdr));
		bool too_small = valid && hdr.total > cap;
		if (err && !(too_small && (err == ENOSPC || err == EMSGSIZE ||
					   err == ENOBUFS || err == E2BIG ||
					   err == EOVERFLOW)))
			return make_error(err);
		if (!valid)
			return make_error(ENODATA);
		if (too_small && hdr.total <= kMaxEntries) {
			cap = hdr.total;
			continue;
		}
		if (too_small)
			return make_error(E2BIG);

		std::size_t n = std::min<std::size_t>(
			{hdr.returned, cap, (p.size() - sizeof(hdr)) / kEntry});
		std::vector<uabi_discovery_entry> v(n);
		if (n)
			std::memcpy(v.data(), p.data() + sizeof(hdr), n * kEntry);
		return v;
	}
	return make_error(EAGAIN);
}

Result<std::vector<uabi_object_info>> Context::list_objects(std::uint32_t scope)
{
	constexpr std::uint32_t kPage = 256;
	std::vector<uabi_object_info> v;
	uabi_object_cursor after{};
	for (;;) {
		Command c(UABI_OBJ_DEVICE, UABI_DEVICE_LIST_OBJECTS, kDeviceHandle);
		c.add_in(UABI_ATTR_DEVICE_LIST_SCOPE, scope);
		c.add_in(UABI_ATTR_DEVICE_LIST_AFTER, after);
		OutAttr o = c.add_out(UABI_ATTR_DEVICE_OBJECTS,
				      std::uint32_t(sizeof(uabi_object_list) +
						    kPage * sizeof(uabi_object_info)));
		auto m = call(std::move(c));
		if (!m)
			return make_error(m.error());
		bool valid = false;
		auto p = m->out_bytes(0, o, &valid);
		uabi_object_list hdr{};
		if (!valid || p.size() < sizeof(hdr))
			return make_error(ENODATA);
		std::memcpy(&hdr, p.data(), sizeof(hdr));
		const std::size_t n = std::min<std::size_t>(
			hdr.count, (p.size() - sizeof(hdr)) / sizeof(uabi_object_info));
		const std::size_t at = v.size();
		v.resize(at + n);
		if (n)
			std::memcpy(static_cast<void *>(v.data() + at), p.data() + sizeof(hdr),
				    n * sizeof(uabi_object_info));
		if (!hdr.more || !n)
			return v;
		after = {v.back().context, v.back().handle};
	}
}

Result<uabi_counters> Context::counters()
{
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS, kDeviceHandle);
	OutAttr o = c.add_out<uabi_counters>(UABI_ATTR_DEVICE_COUNTERS);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<uabi_counters>(*m, o);
}

// PD, MR.

Result<Handle> Context::alloc_pd()
{
	return create(Command(UABI_OBJ_PD, UABI_METHOD_CREATE));
}

Result<void> Context::dealloc_pd(Handle pd)
{
	return destroy(UABI_OBJ_PD, pd);
}

Result<void> Context::query_pd(Handle pd)
{
	return simple(Command(UABI_OBJ_PD, UABI_METHOD_QUERY, pd));
}

Result<std::pair<uabi_mr_reg, uabi_mr_keys>> Context::query_mr(Handle mr)
{
	Command c(UABI_OBJ_MR, UABI_METHOD_QUERY, mr);
	OutAttr reg = c.add_out<uabi_mr_reg>(UABI_ATTR_MR_REG);
	OutAttr keys = c.add_out<uabi_mr_keys>(UABI_ATTR_MR_KEYS);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	std::pair<uabi_mr_reg, uabi_mr_keys> r{};
	if (!m->read(0, reg, r.first) || !m->read(0, keys, r.second))
		return make_error(EPROTO);
	return r;
}

Result<MrInfo> Context::reg_mr(Ref pd, const void *addr, std::uint64_t length,
			       std::uint32_t access, std::optional<std::uint64_t> iova)
{
	Built b = b_reg_mr(pd, addr, length, access, iova);
	auto m = call(std::move(b.cmd));
	if (!m)
		return make_error(m.error());
	return read_mr(*m, 0, b.out);
}

Result<uabi_mr_keys> Context::rereg_mr(Handle mr, std::uint32_t flags, std::optional<Ref> pd,
				       const uabi_mr_reg &reg)
{
	Command c(UABI_OBJ_MR, UABI_METHOD_MODIFY, mr);
	c.add_in(UABI_ATTR_MR_REREG_FLAGS, flags);
	if (pd)
		c.add_object(UABI_ATTR_MR_PD, *pd);
	if (flags & (UABI_MR_REREG_TRANSLATION | UABI_MR_REREG_ACCESS))
		c.add_in(UABI_ATTR_MR_REG, reg);
	OutAttr o = c.add_out<uabi_mr_keys>(UABI_ATTR_MR_KEYS);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	uabi_mr_keys k{};
	if (!m->read(0, o, k))
		return make_error(EPROTO);
	return k;
}

Result<void> Context::dereg_mr(Handle mr)
{
	return destroy(UABI_OBJ_MR, mr);
}

// CQ, event queues.

Result<CqInfo> Context::create_cq(std::uint32_t cqe, std::optional<Ref> channel,
				  std::uint32_t comp_vector, std::uint64_t user_handle)
{
	return create_cq(CqCreate{cqe, channel, comp_vector, user_handle});
}

Result<CqInfo> Context::create_cq(const CqCreate &cc)
{
	Built b = b_create_cq(cc);
	auto m = call(std::move(b.cmd));
	if (!m)
		return make_error(m.error());
	return read_cq(*m, 0, b.out);
}

Result<uabi_cq_resp> Context::resize_cq(Handle cq, std::uint32_t cqe)
{
	Command c(UABI_OBJ_CQ, UABI_METHOD_MODIFY, cq);
	c.add_in(UABI_ATTR_CQ_CQE, cqe);
	OutAttr o = c.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<uabi_cq_resp>(*m, o);
}

Result<void> Context::destroy_cq(Handle cq)
{
	return destroy(UABI_OBJ_CQ, cq);
}

Result<EvqInfo> Context::create_comp_channel()
{
	Built b = b_create_evq(UABI_OBJ_COMP_CHANNEL);
	auto m = call(std::move(b.cmd));
	if (!m)
		return make_error(m.error());
	return read_evq(*m, 0, b.out);
}

Result<EvqInfo> Context::create_async_event_queue()
{
	Built b = b_create_evq(UABI_OBJ_ASYNC_EVENT);
	auto m = call(std::move(b.cmd));
	if (!m)
		return make_error(m.error());
	return read_evq(*m, 0, b.out);
}

Result<uabi_event> Context::get_event(std::uint16_t object, Handle evq)
{
	Command c(object, UABI_EVQ_GET_EVENT, evq);
	OutAttr o = c.add_out<uabi_event>(UABI_ATTR_EVQ_EVENT);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<uabi_event>(*m, o);
}

Result<void> Context::destroy_comp_channel(Handle ch)
{
	return destroy(UABI_OBJ_COMP_CHANNEL, ch);
}

Result<void> Context::destroy_async_event_queue(Handle q)
{
	return destroy(UABI_OBJ_ASYNC_EVENT, q);
}

// QP.

Result<QpInfo> Context::create_qp(const QpCreate &qc)
{
	Built b = b_create_qp(qc);
	auto m = call(std::move(b.cmd));
	if (!m)
		return make_error(m.error());
	return read_qp(*m, 0, b.out);
}

Result<void> Context::modify_qp(Handle qp, const uabi_qp_attr &attr, std::uint32_t mask)
{
	return simple(b_modify_qp(qp, attr, mask));
}

Result<QpQuery> Context::query_qp(Handle qp, std::uint32_t mask)
{
	Command c(UABI_OBJ_QP, UABI_METHOD_QUERY, qp);
	c.add_in(UABI_ATTR_QP_ATTR_MASK, mask);
	OutAttr a = c.add_out<uabi_qp_attr>(UABI_ATTR_QP_ATTR);
	OutAttr i = c.add_out<uabi_qp_init>(UABI_ATTR_QP_INIT_OUT);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	QpQuery q{};
	if (!m->read(0, a, q.attr))
		return make_error(ENODATA);
	m->read(0, i, q.init);
	return q;
}

Result<void> Context::destroy_qp(Handle qp)
{
	return destroy(UABI_OBJ_QP, qp);
}

// SRQ, AH.

Result<SrqInfo> Context::create_srq(const SrqCreate &sc)
{
	Built b = b_create_srq(sc);
	auto m = call(std::move(b.cmd));
	if (!m)
		return make_error(m.error());
	return read_srq(*m, 0, b.out);
}

Result<void> Context::modify_srq(Handle srq, const uabi_srq_attr &attr,
				 std::uint32_t mask)
{
	Command c(UABI_OBJ_SRQ, UABI_METHOD_MODIFY, srq);
	c.add_in(UABI_ATTR_SRQ_ATTR, attr).add_in(UABI_ATTR_SRQ_ATTR_MASK, mask);
	return simple(std::move(c));
}

Result<uabi_srq_attr> Context::query_srq(Handle srq)
{
	Command c(UABI_OBJ_SRQ, UABI_METHOD_QUERY, srq);
	OutAttr o = c.add_out<uabi_srq_attr>(UABI_ATTR_SRQ_ATTR);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<uabi_srq_attr>(*m, o);
}

Result<void> Context::destroy_srq(Handle srq)
{
	return destroy(UABI_OBJ_SRQ, srq);
}

Result<Handle> Context::create_ah(Ref pd, const uabi_ah_attr &attr)
{
	return create(b_create_ah(pd, attr));
}

Result<void> Context::destroy_ah(Handle ah)
{
	return destroy(UABI_OBJ_AH, ah);
}

// XRC.

Result<Handle> Context::open_xrcd(int fd, std::uint32_t oflags)
{
	return create(b_open_xrcd(fd, oflags));
}

Result<void> Context::close_xrcd(Handle xrcd)
{
	return destroy(UABI_OBJ_XRCD, xrcd);
}

Result<Handle> Context::register_xrc_rcv_qp(Handle xrcd, std::uint32_t &qpn,
					    std::optional<uabi_qp_init> init,
					    std::optional<std::uint64_t> user_handle)
{
	Command c(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP, xrcd);
	OutAttr q = c.add_inout(UABI_ATTR_XRCD_QPN, qpn);
	if (init)
		c.add_in(UABI_ATTR_XRCD_QP_INIT, *init);
	if (user_handle)
		c.add_in(UABI_ATTR_XRCD_USER_HANDLE, *user_handle);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	std::uint32_t out = 0;
	if (m->read(0, q, out))
		qpn = out;
	return m->result(0).out_handle;
}

Result<void> Context::unregister_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	Command c(UABI_OBJ_XRCD, UABI_XRCD_UNREG_RCV_QP, xrcd);
	c.add_in(UABI_ATTR_XRCD_QPN, qpn);
	return simple(std::move(c));
}

Result<void> Context::modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					const uabi_qp_attr &attr, std::uint32_t mask)
{
	Command c(UABI_OBJ_XRCD, UABI_XRCD_MODIFY_RCV_QP, xrcd);
	c.add_in(UABI_ATTR_XRCD_QPN, qpn)
		.add_in(UABI_ATTR_XRCD_QP_ATTR, attr)
		.add_in(UABI_ATTR_XRCD_QP_ATTR_MASK, mask);
	return simple(std::move(c));
}

Result<uabi_qp_attr> Context::query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	Command c(UABI_OBJ_XRCD, UABI_XRCD_QUERY_RCV_QP, xrcd);
	c.add_in(UABI_ATTR_XRCD_QPN, qpn);
	OutAttr o = c.add_out<uabi_qp_attr>(UABI_ATTR_XRCD_QP_ATTR);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	return read_output<uabi_qp_attr>(*m, o);
}

// MW.

namespace {
Command mcast_cmd(std::uint16_t method, Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid)
{
	uabi_mcast m{};
	std::memcpy(m.gid, gid, sizeof(m.gid));
	m.lid = lid;
	Command c(UABI_OBJ_QP, method, qp);
	c.add_in(UABI_ATTR_QP_MCAST, m);
	return c;
}
} // namespace

Result<void> Context::attach_mcast(Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid)
{
	return simple(mcast_cmd(UABI_QP_ATTACH_MCAST, qp, gid, lid));
}

Result<void> Context::detach_mcast(Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid)
{
	return simple(mcast_cmd(UABI_QP_DETACH_MCAST, qp, gid, lid));
}

Result<MwInfo> Context::alloc_mw(Ref pd, std::uint32_t type)
{
	Command c(UABI_OBJ_MW, UABI_METHOD_CREATE);
	c.add_object(UABI_ATTR_MW_PD, pd).add_in(UABI_ATTR_MW_TYPE, type);
	OutAttr o = c.add_out<std::uint32_t>(UABI_ATTR_MW_RKEY);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	MwInfo w{m->result(0).out_handle, 0};
	if (!m->read(0, o, w.rkey))
		return make_error(EPROTO);
	return w;
}

Result<std::uint32_t> Context::bind_mw(Handle mw, std::optional<Ref> mr, Ref qp,
				       const uabi_mw_bind &bind)
{
	Command c(UABI_OBJ_MW, UABI_MW_BIND, mw);
	if (mr)
		c.add_object(UABI_ATTR_MW_MR, *mr);
	c.add_object(UABI_ATTR_MW_QP, qp).add_in(UABI_ATTR_MW_BIND, bind);
	OutAttr o = c.add_out<std::uint32_t>(UABI_ATTR_MW_RKEY);
	auto m = call(std::move(c));
	if (!m)
		return make_error(m.error());
	std::uint32_t rkey = 0;
	if (!m->read(0, o, rkey))
		return make_error(EPROTO);
	return rkey;
}

Result<void> Context::dealloc_mw(Handle mw)
{
	return destroy(UABI_OBJ_MW, mw);
}

} // namespace uabi
