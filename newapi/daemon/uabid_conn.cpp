// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid: accepting connections and executing their messages (uabid.hpp).
#include "uabid.hpp"

namespace uabid {

// ------------------------------------------------------------ accepting

static bool allowed(const Config &cfg, const ucred &cr)
{
	return cfg.shared || cr.uid == ::geteuid() || cr.uid == 0;
}

// Sends a refusal as the answer to the client's HELLO and closes.  A unix
// socket closed with unread data resets its peer (ECONNRESET, reported
// before anything queued), so stop the peer from sending first, then drop
// what it sent: the refusal stays readable.
static void refuse(int fd, int err)
{
	AdmHdr h{kAdmMagic, sizeof(AdmHdr), kProtoVersion, kOpHello, err, 0, 0};
	(void)wire::send_fds(fd, &h, sizeof(h), nullptr, 0, MSG_DONTWAIT);
	::shutdown(fd, SHUT_RDWR);
	std::vector<int> fds;
	char b[64];
	for (int i = 0; i < 64; i++) {
		ssize_t n = wire::recv_fds(fd, b, sizeof(b), fds, MSG_DONTWAIT, nullptr);
		wire::close_all(fds);
		if (n <= 0)
			break;
	}
	::close(fd);
}

void Daemon::reject(int fd, int err, const ucred &cr, const char *why)
{
	LOG("refused pid %d uid %u: %s", int(cr.pid), unsigned(cr.uid), why);
	refuse(fd, err);
}

void Daemon::accept_some()
{
	const std::size_t max_conns = std::size_t(cfg_.max_contexts) + kExtraConnections;
	for (int k = 0; k < 64; k++) {
		int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				// Out of fds: use the spare one to tell the client.
				if (spare_fd_ >= 0)
					::close(spare_fd_);
				spare_fd_ = -1;
				fd = ::accept4(listen_fd_, nullptr, nullptr,
					       SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd >= 0)
					reject(fd, -EMFILE, ucred{},
					       "daemon out of file descriptors");
				spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
				return;
			}
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; // EAGAIN or worse: back to epoll
		}
		ucred cr{};
		socklen_t len = sizeof(cr);
		if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			reject(fd, -EACCES, cr, "no peer credentials");
			continue;
		}
		if (!allowed(cfg_, cr)) {
			reject(fd, -EACCES, cr, "uid not allowed on this daemon");
			continue;
		}
		if (conns_.size() >= max_conns) {
			reject(fd, -EUSERS, cr, "too many connections");
			continue;
		}
		// Counted from the accept, greeted or not: connections that
		// never say hello cannot lock other users out.
		if (uid_conns_[cr.uid] >= per_uid_limit() + kExtraPerUid) {
			reject(fd, -EUSERS, cr, "too many connections of this uid");
			continue;
		}
		// Room for one maximal reply, unread (the default is smaller).
		int sz = 2 * int(UABI_MAX_MSG_BYTES);
		if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
			::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		auto c = std::make_unique<Conn>();
		c->fd = fd;
		c->id = next_id_++;
		if (!next_id_)
			next_id_ = 1;
		c->cred = cr;
		c->connected_ns = wire::now_ns(CLOCK_REALTIME);
		c->last_mono = wire::now_ns();
		epoll_event ev{};
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
			reject(fd, -ENOMEM, cr, "epoll_ctl failed");
			continue;
		}
		DEBUG("connection %u: pid %d uid %u", c->id, int(cr.pid), unsigned(cr.uid));
		uid_conns_[cr.uid]++;
		next_scan_ = std::min(next_scan_, c->last_mono + kIdleNoContextNs);
		by_id_[c->id] = c.get();
		conns_[fd] = std::move(c);
	}
}

void Daemon::drop(Conn &c, const char *why, int refusal)
{
	if (why)
		LOG("connection %u (pid %d uid %u) dropped: %s", c.id, int(c.cred.pid),
		    unsigned(c.cred.uid), why);
	else
		DEBUG("connection %u closed", c.id);
	::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
	release_slot(c);
	release_relay(c);
	if (refusal)
		refuse(c.fd, refusal);
	else
		::close(c.fd);
	close_context(c);
	by_id_.erase(c.id);
	if (auto it = uid_conns_.find(c.cred.uid); it != uid_conns_.end() && --it->second == 0)
		uid_conns_.erase(it);
	int fd = c.fd;
	conns_.erase(fd); // frees c
	if (conns_.empty())
		idle_since_ = wire::now_ns();
}

std::uint64_t Daemon::expire_idle(std::uint64_t now)
{
	// At most one scan a second (the loop may spin): a connection goes
	// within a second of its time.
	if (now < next_scan_)
		return next_scan_ == UINT64_MAX ? UINT64_MAX : next_scan_ - now;
	std::uint64_t next = UINT64_MAX;
	std::vector<Conn *> late;
	for (auto &[fd, c] : conns_) {
		if (c->kind == Conn::Context)
			continue;
		std::uint64_t due = c->last_mono + kIdleNoContextNs;
		if (now >= due)
			late.push_back(c.get());
		else
			next = std::min(next, due - now);
	}
	for (Conn *c : late)
		drop(*c, c->kind == Conn::New ? "no hello in time" : "idle admin connection");
	if (next != UINT64_MAX)
		next = std::max<std::uint64_t>(next, 1'000'000'000ull);
	next_scan_ = next == UINT64_MAX ? UINT64_MAX : now + next;
	return next;
}

// ------------------------------------------------------------- requests

bool Daemon::send_reply(Conn &c, const void *buf, std::size_t len, const int *fds, std::size_t nfds)
{
	ssize_t r = wire::send_fds(c.fd, buf, len, fds, nfds, MSG_DONTWAIT);
	if (r == ssize_t(len))
		return true;
	// A client that does not read its replies is not waited for.
	drop(c, r == -EAGAIN			  ? "reply not sent: client is not reading"
		: r == -EPIPE || r == -ECONNRESET ? nullptr
						  : "reply not sent");
	return false;
}

bool Daemon::error_reply(Conn &c, std::uint32_t magic, int err)
{
	if (magic == kAdmMagic) {
		AdmHdr h{kAdmMagic, sizeof(AdmHdr), kProtoVersion, 0, err, 0, 0};
		return send_reply(c, &h, sizeof(h));
	}
	uabi_msg_hdr h{};
	h.magic = UABI_MSG_MAGIC;
	h.length = sizeof(h);
	h.abi_version = UABI_ABI_VERSION;
	h.status = err;
	return send_reply(c, &h, sizeof(h));
}

bool Daemon::admin_reply(Conn &c, std::uint16_t op, int status, const void *payload,
			 std::size_t len)
{
	AdmHdr h{kAdmMagic, std::uint32_t(sizeof(AdmHdr) + len), kProtoVersion, op, status, 0, 0};
	std::memcpy(buf_.data(), &h, sizeof(h));
	if (len && payload != buf_.data() + sizeof(h))
		std::memmove(buf_.data() + sizeof(h), payload, len);
	return send_reply(c, buf_.data(), sizeof(h) + len);
}

void Daemon::on_readable(Conn &c)
{
	std::vector<int> fds;
	const std::uint64_t start = wire::now_ns();
	c.last_mono = start;
	for (int i = 0; i < kBatch && (i == 0 || wire::now_ns() - start < kTurnNs); i++) {
		int mflags = 0;
		fds.clear();
		ssize_t n =
			wire::recv_fds(c.fd, buf_.data(), buf_.size(), fds, MSG_DONTWAIT, &mflags);
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			wire::close_all(fds);
			drop(c, n == 0 || n == -ECONNRESET ? nullptr : "receive failed");
			return;
		}
		if (!handle(c, std::size_t(n), fds, mflags))
			return; // dropped
	}
}

// Returns false when c was dropped.
bool Daemon::handle(Conn &c, std::size_t n, std::vector<int> &fds, int mflags)
{
	std::uint32_t magic = 0;
	if (n >= sizeof(magic))
		std::memcpy(&magic, buf_.data(), sizeof(magic));
	if (mflags & MSG_CTRUNC) {
		wire::close_all(fds);
		LOG_INPUT("connection %u: more than %u fds in one message", c.id, kMaxFds);
		return error_reply(c, magic, -ETOOMANYREFS);
	}
	if (mflags & MSG_TRUNC) {
		wire::close_all(fds);
		LOG_INPUT("connection %u: message larger than %u bytes", c.id, UABI_MAX_MSG_BYTES);
		return error_reply(c, magic, -EINVAL);
	}
	if (magic == kAdmMagic)
		return handle_admin(c, n, fds); // closes fds
	if (n < sizeof(uabi_msg_hdr)) {
		wire::close_all(fds);
		DEBUG("connection %u: %zu-byte message", c.id, n);
		return error_reply(c, UABI_MSG_MAGIC, -EINVAL);
	}
	if (c.kind == Conn::New && !open_context(c, 0)) {
		wire::close_all(fds);
		return false;
	}
	if (c.kind != Conn::Context) {
		wire::close_all(fds);
		return error_reply(c, UABI_MSG_MAGIC, -EINVAL);
	}
	return exec_uabi(c, n, fds);
}

unsigned Daemon::per_uid_limit() const
{
	if (cfg_.max_contexts_per_uid)
		return cfg_.max_contexts_per_uid;
	return cfg_.shared ? std::max(1u, cfg_.max_contexts / 4) : cfg_.max_contexts;
}

bool Daemon::open_context(Conn &c, unsigned device_pos)
{
	int err = 0;
	const int device = device_at(device_pos);
	auto it = uid_contexts_.find(c.cred.uid);
	unsigned mine = it == uid_contexts_.end() ? 0 : it->second;
	if (contexts_ >= cfg_.max_contexts) {
		LOG("connection %u (pid %d uid %u): context limit %u reached", c.id,
		    int(c.cred.pid), unsigned(c.cred.uid), cfg_.max_contexts);
		err = -EUSERS;
	} else if (mine >= per_uid_limit()) {
		LOG("connection %u (pid %d uid %u): per-uid context limit %u reached", c.id,
		    int(c.cred.pid), unsigned(c.cred.uid), per_uid_limit());
		err = -EUSERS;
	} else if (device < 0) {
		err = -ENODEV;
	} else {
		uabi_user_peer peer{c.cred.pid, c.cred.uid, c.cred.gid};
		c.ctx = uabi_user_open_device(unsigned(device), &peer);
		if (!c.ctx)
			err = -errno;
		c.device = unsigned(device);
	}
	if (!err) {
		try {
			auto s = std::make_unique<SharedCtx>();
			s->ctx = c.ctx;
			s->uid = c.cred.uid;
			s->conns.insert(c.id);
			c.shared = s.get();
			shared_[c.ctx] = std::move(s);
		} catch (...) {
			uabi_user_close(c.ctx);
			c.ctx = nullptr;
			err = -ENOMEM;
		}
	}
	if (err) {
		drop(c, nullptr, err);
		return false;
	}
	c.kind = Conn::Context;
	contexts_++;
	uid_contexts_[c.cred.uid]++;
	return true;
}

// kHelloImport: the connection joins the context whose token the client
// sent with its hello.  Holding the token is the proof: a process can only
// send an fd it holds (SCM_RIGHTS), and we compare the file itself (the
// inode of the socket we keep open), never a number the client chose.  A
// holder of another uid is refused as every other cross-user access is
// (EACCES).  The connection was counted against its uid at the accept;
// the context is not counted again.
bool Daemon::import_context(Conn &c, std::vector<int> &fds)
{
	struct stat st{};
	const bool ok = fds.size() == 1 && ::fstat(fds[0], &st) == 0 && S_ISSOCK(st.st_mode);
	wire::close_all(fds);
	SharedCtx *s = nullptr;
	if (ok)
		for (auto &[ctx, sc] : shared_)
			if (sc->token >= 0 && sc->dev == st.st_dev && sc->ino == st.st_ino)
				s = sc.get();
	if (!s) {
		LOG_INPUT("connection %u (pid %d uid %u): import of no context", c.id,
			  int(c.cred.pid), unsigned(c.cred.uid));
		drop(c, nullptr, -EINVAL);
		return false;
	}
	if (s->uid != c.cred.uid) {
		LOG("connection %u (pid %d uid %u): refused import of a context of uid %u", c.id,
		    int(c.cred.pid), unsigned(c.cred.uid), unsigned(s->uid));
		drop(c, nullptr, -EACCES);
		return false;
	}
	try {
		s->conns.insert(c.id);
	} catch (...) {
		drop(c, nullptr, -ENOMEM);
		return false;
	}
	c.ctx = s->ctx;
	c.shared = s;
	c.kind = Conn::Context;
	DEBUG("connection %u (pid %d) imported the context of connection %u", c.id,
	      int(c.cred.pid), *s->conns.begin());
	return true;
}

// kOpContextFd: the token of the connection's context, made on first use.
bool Daemon::send_context_fd(Conn &c)
{
	if (c.kind != Conn::Context)
		return admin_reply(c, kOpContextFd, -EINVAL, nullptr, 0);
	SharedCtx &s = *c.shared;
	if (s.token < 0) {
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
			return admin_reply(c, kOpContextFd, -errno, nullptr, 0);
		// Nothing is ever read from or written to it: it is a name.
		::close(sv[1]);
		struct stat st{};
		if (::fstat(sv[0], &st) < 0) {
			int e = errno;
			::close(sv[0]);
			return admin_reply(c, kOpContextFd, -e, nullptr, 0);
		}
		s.token = sv[0];
		s.dev = st.st_dev;
		s.ino = st.st_ino;
	}
	AdmHdr h{kAdmMagic, sizeof(AdmHdr), kProtoVersion, kOpContextFd, 0, 0, 0};
	return send_reply(c, &h, sizeof(h), &s.token, 1);
}

// The connection leaves its context; the last one closes it, exactly as a
// kernel release() does: everything the context owns is destroyed, its
// XRC registrations dropped.
void Daemon::close_context(Conn &c)
{
	if (!c.ctx)
		return;
	SharedCtx *s = c.shared;
	c.ctx = nullptr;
	c.shared = nullptr;
	s->conns.erase(c.id);
	if (!s->conns.empty())
		return;
	uabi_user_close(s->ctx);
	if (s->token >= 0)
		::close(s->token);
	const uid_t uid = s->uid;
	shared_.erase(s->ctx); // frees s
	contexts_--;
	auto it = uid_contexts_.find(uid);
	if (it != uid_contexts_.end() && --it->second == 0)
		uid_contexts_.erase(it);
}

bool Daemon::exec_uabi(Conn &c, std::size_t n, std::vector<int> &fds)
{
	std::byte *p = buf_.data();
	slots_.clear();
	wire::walk(
		p, n, [](std::size_t, std::size_t) {},
		[&](std::size_t, std::size_t aoff, std::uint16_t flags) {
			std::int32_t v = wire::get_s32(p, wire::payload_of(aoff));
			slots_.push_back({aoff, (flags & UABI_ATTR_F_OUTPUT) != 0, v});
		});

	// Inputs: each non-negative fd value stands for the next fd received.
	std::size_t want = 0;
	for (const FdSlot &s : slots_)
		want += !s.output && s.orig >= 0;
	if (want != fds.size()) {
		LOG_INPUT("connection %u: %zu fds for %zu fd attributes", c.id, fds.size(), want);
		wire::close_all(fds);
		uabi_msg_hdr h;
		std::memcpy(&h, p, sizeof(h));
		h.status = -EBADF;
		h.executed = 0;
		h.failed_index = 0;
		std::memcpy(p, &h, sizeof(h));
		return send_reply(c, p, n);
	}
	std::size_t k = 0;
	for (const FdSlot &s : slots_) {
		if (s.output) {
			// Only the core may put an fd here: start from -1, which it
			// never writes, so a value a client planted is never sent.
			wire::put_s32(p, wire::payload_of(s.attr_off), -1);
		} else if (s.orig >= 0) {
			wire::put_s32(p, wire::payload_of(s.attr_off), fds[k++]);
		}
	}

	// The connection's process is the caller, whichever opened the
	// context: what it creates is reached in its memory.
	uabi_user_execute_as(c.ctx, p, n, c.cred.pid);
	c.requests++;
	requests_++;
	wire::close_all(fds);

	uabi_msg_hdr h;
	std::memcpy(&h, p, sizeof(h));
	const bool rolled_back = (h.flags & UABI_MSG_F_ALL_OR_NOTHING) && h.status != 0;
	out_fds_.clear();
	for (const FdSlot &s : slots_) {
		std::size_t off = wire::payload_of(s.attr_off);
		if (!s.output) {
			wire::put_s32(p, off, s.orig); // our fd numbers are not the client's
			continue;
		}
		std::int32_t v = wire::get_s32(p, off);
		if (v == -1) {
			wire::put_s32(p, off, s.orig); // untouched by the core
			continue;
		}
		// Written by the core: an event queue fd of this context, unless
		// the object is already gone again (rolled back, destroyed later
		// in the same chain).
		if (rolled_back || v < 0 || ::fcntl(v, F_GETFD) < 0 || out_fds_.size() >= kMaxFds) {
			wire::put_s32(p, off, -1);
			continue;
		}
		out_fds_.push_back(v); // the client receives its own copy
	}
	return send_reply(c, p, n, out_fds_.data(), out_fds_.size());
}

} // namespace uabid
