// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid: the admin requests (HELLO, STATUS, OBJECTS, SHUTDOWN, CLOSE), answered
// by the daemon itself from its connections and the core's public methods
// (uabid.hpp).
#include "uabid.hpp"

namespace uabid {

// ------------------------------------------------------------------ admin

bool Daemon::visible(const Conn &viewer, const Conn &c) const
{
	return viewer.cred.uid == 0 || viewer.cred.uid == c.cred.uid;
}

void Daemon::counters_of(uabi_context *ctx, std::uint32_t out[16])
{
	// The core's public counters, asked like any client would.
	struct {
		uabi_msg_hdr mh;
		uabi_cmd_hdr ch;
		uabi_attr a;
		uabi_counters c;
	} m{};
	static_assert(sizeof(m) == sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr) + sizeof(uabi_attr) +
					   sizeof(uabi_counters));
	m.mh.magic = UABI_MSG_MAGIC;
	m.mh.length = sizeof(m);
	m.mh.abi_version = UABI_ABI_VERSION;
	m.mh.count = 1;
	m.ch.length = sizeof(m) - sizeof(m.mh);
	m.ch.object = UABI_OBJ_DEVICE;
	m.ch.method = UABI_DEVICE_COUNTERS;
	m.ch.num_attrs = 1;
	m.a.id = UABI_ATTR_DEVICE_COUNTERS;
	m.a.flags = UABI_ATTR_F_MANDATORY | UABI_ATTR_F_OUTPUT;
	m.a.len = sizeof(uabi_counters);
	std::memset(out, 0, 16 * sizeof(std::uint32_t));
	if (uabi_user_execute(ctx, &m, sizeof(m)) == 0)
		std::memcpy(out, m.c.context, 16 * sizeof(std::uint32_t));
}

// The core's listing of one context (DEVICE / LIST_OBJECTS), asked like
// any client would, a page at a time.
std::vector<uabi_object_info> Daemon::objects_of(uabi_context *ctx)
{
	constexpr std::uint32_t kPage = 64;
	struct Msg {
		uabi_msg_hdr mh;
		uabi_cmd_hdr ch;
		uabi_attr aa;
		uabi_object_cursor after;
		uabi_attr ao;
		struct {
			std::uint32_t count, more;
		} list; // struct uabi_object_list, whose entries follow
		uabi_object_info entries[kPage];
	};
	static_assert(sizeof(Msg::list) == sizeof(uabi_object_list));
	static_assert(sizeof(Msg) == sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr) + 2 * sizeof(uabi_attr) +
					     sizeof(uabi_object_cursor) + sizeof(uabi_object_list) +
					     kPage * sizeof(uabi_object_info));
	auto m = std::make_unique<Msg>();
	std::vector<uabi_object_info> v;
	uabi_object_cursor after{};
	for (;;) {
		std::memset(static_cast<void *>(m.get()), 0, sizeof(Msg));
		m->mh.magic = UABI_MSG_MAGIC;
		m->mh.length = sizeof(Msg);
		m->mh.abi_version = UABI_ABI_VERSION;
		m->mh.count = 1;
		m->ch.length = sizeof(Msg) - sizeof(m->mh);
		m->ch.object = UABI_OBJ_DEVICE;
		m->ch.method = UABI_DEVICE_LIST_OBJECTS;
		m->ch.num_attrs = 2;
		m->aa.id = UABI_ATTR_DEVICE_LIST_AFTER;
		m->aa.flags = UABI_ATTR_F_MANDATORY;
		m->aa.len = sizeof(after);
		m->after = after;
		m->ao.id = UABI_ATTR_DEVICE_OBJECTS;
		m->ao.flags = UABI_ATTR_F_MANDATORY | UABI_ATTR_F_OUTPUT;
		m->ao.len = sizeof(Msg) - offsetof(Msg, list);
		if (uabi_user_execute(ctx, m.get(), sizeof(Msg)) != 0)
			break;
		const std::uint32_t n = std::min(m->list.count, kPage);
		v.insert(v.end(), m->entries, m->entries + n);
		if (!m->list.more || !n)
			break;
		after = {m->entries[n - 1].context, m->entries[n - 1].handle};
	}
	return v;
}

bool Daemon::do_status(Conn &c)
{
	StatusReply s{};
	std::vector<CtxEntry> entries;
	s.daemon_pid = std::uint32_t(::getpid());
	s.daemon_uid = ::geteuid();
	s.started_ns = started_ns_;
	s.uptime_ns = wire::now_ns() - started_mono_;
	s.flags = (cfg_.shared ? kDaemonShared : 0) | (c.cred.uid != 0 ? kCallerFiltered : 0);
	s.idle_exit_s = cfg_.idle_exit_s;
	s.max_contexts = cfg_.max_contexts;
	s.num_types = UABI_OBJ_MAX_CORE;
	s.requests = requests_;
	s.node_guid = node_guid_;
	std::memcpy(s.device_name, device_name_, sizeof(s.device_name));
	std::snprintf(s.socket_path, sizeof(s.socket_path), "%s", paths_.socket.c_str());
	std::snprintf(s.log_path, sizeof(s.log_path), "%s", paths_.log.c_str());
	const std::size_t cap = (buf_.size() - sizeof(AdmHdr) - sizeof(s)) / sizeof(CtxEntry);
	for (auto &[id, o] : by_id_) {
		if (!visible(c, *o))
			continue;
		s.connections++;
		if (o->kind != Conn::Context)
			continue;
		// A context imported by other connections counts once.
		const bool first = lists_context(*o);
		s.contexts += first;
		CtxEntry e{};
		e.conn_id = id;
		e.pid = o->cred.pid;
		e.uid = o->cred.uid;
		e.gid = o->cred.gid;
		e.connected_ns = o->connected_ns;
		e.requests = o->requests;
		counters_of(o->ctx, e.objects);
		for (int t = 0; t < 16 && first; t++)
			s.objects[t] += e.objects[t];
		if (entries.size() < cap)
			entries.push_back(e);
	}
	s.num_entries = std::uint32_t(entries.size());
	std::byte *out = buf_.data() + sizeof(AdmHdr);
	std::memcpy(out, &s, sizeof(s));
	if (!entries.empty())
		std::memcpy(out + sizeof(s), entries.data(), entries.size() * sizeof(CtxEntry));
	return admin_reply(c, kOpStatus, 0, out, sizeof(s) + entries.size() * sizeof(CtxEntry));
}

bool Daemon::do_objects(Conn &c, std::size_t n)
{
	ObjectsRequest req{};
	if (n >= sizeof(AdmHdr) + sizeof(req))
		std::memcpy(&req, buf_.data() + sizeof(AdmHdr), sizeof(req));
	const std::size_t cap =
		(buf_.size() - sizeof(AdmHdr) - sizeof(ObjectsReply)) / sizeof(ObjEntry);
	std::vector<ObjEntry> out;
	bool more = false;
	for (auto it = by_id_.lower_bound(req.after_conn); it != by_id_.end() && !more; ++it) {
		const Conn &o = *it->second;
		if (!visible(c, o) || o.kind != Conn::Context || !lists_context(o))
			continue;
		// In handle order, as the core lists them.
		for (const uabi_object_info &obj : objects_of(o.ctx)) {
			ObjEntry e{};
			e.conn_id = o.id;
			e.pid = o.cred.pid;
			e.uid = o.cred.uid;
			e.type = obj.type;
			e.handle = obj.handle;
			e.qpn = obj.qpn;
			e.qp_type = obj.qp_type;
			e.qp_state = obj.qp_state;
			e.lkey = obj.lkey;
			e.rkey = obj.rkey;
			e.cqe = obj.cqe;
			e.cqn = obj.cqn;
			e.srqn = obj.srqn;
			e.srq_type = obj.srq_type;
			e.user_handle = obj.user_handle;
			e.addr = obj.addr;
			e.length = obj.length;
			if (e.conn_id == req.after_conn && e.handle <= req.after_handle)
				continue;
			if (out.size() == cap) {
				more = true;
				break;
			}
			out.push_back(e);
		}
	}
	ObjectsReply h{std::uint32_t(out.size()), more ? 1u : 0u};
	std::byte *dst = buf_.data() + sizeof(AdmHdr);
	std::memcpy(dst, &h, sizeof(h));
	if (!out.empty())
		std::memcpy(dst + sizeof(h), out.data(), out.size() * sizeof(ObjEntry));
	return admin_reply(c, kOpObjects, 0, dst, sizeof(h) + out.size() * sizeof(ObjEntry));
}

bool Daemon::handle_admin(Conn &c, std::size_t n, std::vector<int> &fds)
{
	AdmHdr h{};
	// Only an import's hello carries an fd.
	if (n >= sizeof(h))
		std::memcpy(&h, buf_.data(), sizeof(h));
	if (n < sizeof(h) || h.op != kOpHello || h.arg != kHelloImport)
		wire::close_all(fds);
	if (n < sizeof(h))
		return error_reply(c, kAdmMagic, -EINVAL);
	if (h.length != n || h.reserved || h.status) {
		wire::close_all(fds);
		return error_reply(c, kAdmMagic, -EINVAL);
	}
	if (h.version != kProtoVersion) {
		wire::close_all(fds);
		return error_reply(c, kAdmMagic, -EPROTONOSUPPORT);
	}
	switch (h.op) {
	case kOpHello: {
		if (c.kind != Conn::New ||
		    (h.arg != kHelloContext && h.arg != kHelloAdmin && h.arg != kHelloImport)) {
			wire::close_all(fds);
			return admin_reply(c, kOpHello, -EINVAL, nullptr, 0);
		}
		if (h.arg == kHelloImport) {
			if (!import_context(c, fds)) // closes fds
				return false;
		} else if (h.arg == kHelloContext) {
			// An optional HelloRequest names the device.
			HelloRequest req{};
			if (n == sizeof(h) + sizeof(req))
				std::memcpy(&req, buf_.data() + sizeof(h), sizeof(req));
			else if (n != sizeof(h))
				return admin_reply(c, kOpHello, -EINVAL, nullptr, 0);
			if (req.reserved)
				return admin_reply(c, kOpHello, -EINVAL, nullptr, 0);
			if (!open_context(c, req.device))
				return false;
		} else {
			c.kind = Conn::Admin;
		}
		HelloReply r{};
		r.daemon_pid = std::uint32_t(::getpid());
		r.daemon_uid = ::geteuid();
		r.conn_id = c.id;
		r.flags = cfg_.shared ? kDaemonShared : 0;
		r.started_ns = started_ns_;
		r.max_contexts = cfg_.max_contexts;
		r.max_msg_bytes = UABI_MAX_MSG_BYTES;
		return admin_reply(c, kOpHello, 0, &r, sizeof(r));
	}
	case kOpStatus:
		return do_status(c);
	case kOpObjects:
		return do_objects(c, n);
	case kOpShutdown:
		if (c.cred.uid != ::geteuid() && c.cred.uid != 0)
			return admin_reply(c, kOpShutdown, -EPERM, nullptr, 0);
		LOG("shutdown requested by pid %d uid %u", int(c.cred.pid), unsigned(c.cred.uid));
		stop_ = true;
		return admin_reply(c, kOpShutdown, 0, nullptr, 0);
	case kOpContextFd:
		return send_context_fd(c);
	case kOpSlot:
		return give_slot(c);
	case kOpLinks:
		return do_links(c);
	case kOpLinkAdd:
	case kOpLinkDel:
		return do_link_change(c, h.op, n);
	case kOpWireRelay:
		return give_relay(c);
	case kOpWireBind:
	case kOpWireUnbind:
		return wire_bind(c, h.op, h.arg);
	case kOpClose:
		close_context(c);
		if (admin_reply(c, kOpClose, 0, nullptr, 0))
			drop(c, nullptr);
		return false;
	}
	return admin_reply(c, h.op, -EOPNOTSUPP, nullptr, 0);
}

} // namespace uabid
