// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The endpoint: one UDP socket, its receive thread, and the QPs it serves
// (docs/wire.md, "Who receives").
#include <uabi/wire/engine.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace uabi::wire {

std::uint64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

PeerAddr PeerAddr::from(const sockaddr *sa, socklen_t len)
{
	PeerAddr a;
	if (len > sizeof(a.ss))
		len = sizeof(a.ss);
	std::memcpy(&a.ss, sa, len);
	a.len = len;
	return a;
}

PeerAddr PeerAddr::from_gid(const std::uint8_t *gid, std::uint16_t port, unsigned scope)
{
	static const std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	PeerAddr a;
	if (!std::memcmp(gid, mapped, sizeof(mapped))) {
		auto *s = reinterpret_cast<sockaddr_in *>(&a.ss);
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		std::memcpy(&s->sin_addr, gid + 12, 4);
		a.len = sizeof(*s);
		return a;
	}
	auto *s = reinterpret_cast<sockaddr_in6 *>(&a.ss);
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	std::memcpy(&s->sin6_addr, gid, 16);
	if (IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr))
		s->sin6_scope_id = scope;
	a.len = sizeof(*s);
	return a;
}

bool PeerAddr::same_ip(const PeerAddr &o) const
{
	if (ss.ss_family != o.ss.ss_family)
		return false;
	if (v6())
		return !std::memcmp(&reinterpret_cast<const sockaddr_in6 *>(&ss)->sin6_addr,
				    &reinterpret_cast<const sockaddr_in6 *>(&o.ss)->sin6_addr, 16);
	return reinterpret_cast<const sockaddr_in *>(&ss)->sin_addr.s_addr ==
	       reinterpret_cast<const sockaddr_in *>(&o.ss)->sin_addr.s_addr;
}

namespace {

void addr_bytes(const PeerAddr &a, std::uint8_t out[16], std::uint16_t *port)
{
	std::memset(out, 0, 16);
	if (a.v6()) {
		auto *s6 = reinterpret_cast<const sockaddr_in6 *>(&a.ss);
		std::memcpy(out, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	} else {
		auto *s4 = reinterpret_cast<const sockaddr_in *>(&a.ss);
		std::memcpy(out, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	}
}

constexpr int kBatch = 32;
constexpr std::size_t kMaxPacket = 4096 + 256;
// One UDP_SEGMENT send: the segments' bytes fit one IP datagram's length
// field, and the kernel takes at most 64 segments (UDP_MAX_SEGMENTS on
// older kernels; newer ones allow more).
constexpr std::size_t kGsoBytes = 65000;
constexpr unsigned kGsoSegments = 64;
// Receiving with UDP_GRO: one buffer holds what the kernel coalesced.
constexpr int kGroBatch = 8;
constexpr std::size_t kGroBytes = 65536;

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

bool same_peer(const PeerAddr &a, const PeerAddr &b)
{
	if (a.v6() != b.v6())
		return false;
	if (a.v6()) {
		auto *x = reinterpret_cast<const sockaddr_in6 *>(&a.ss);
		auto *y = reinterpret_cast<const sockaddr_in6 *>(&b.ss);
		return x->sin6_port == y->sin6_port && !std::memcmp(&x->sin6_addr, &y->sin6_addr, 16) &&
		       x->sin6_scope_id == y->sin6_scope_id && a.tclass == b.tclass;
	}
	auto *x = reinterpret_cast<const sockaddr_in *>(&a.ss);
	auto *y = reinterpret_cast<const sockaddr_in *>(&b.ss);
	return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr &&
	       a.tclass == b.tclass;
}

bool env_off(const char *name)
{
	const char *v = getenv(name);
	return v && !std::strcmp(v, "0");
}

// Every open endpoint, for the ACKs pollers hold when the process exits
// without closing its device (exit() runs send_held_acks() on each).
// Never destroyed: atexit handlers and other threads may run after
// static destructors.
std::mutex &live_lock()
{
	static auto *m = new std::mutex;
	return *m;
}
std::vector<Endpoint *> &live_endpoints()
{
	static auto *v = new std::vector<Endpoint *>;
	return *v;
}
void send_all_held_acks()
{
	// A forked child exits with copies of its parent's endpoints, whose
	// locks another thread may have held at the fork: it sends nothing,
	// and never waits for the list.
	if (!live_lock().try_lock())
		return;
	for (Endpoint *ep : live_endpoints())
		if (ep->owner() == getpid())
			ep->send_held_acks();
	live_lock().unlock();
}

} // namespace

ssize_t send_datagram(int fd, const void *buf, std::size_t len, const PeerAddr &to,
		      std::uint16_t gso_seg)
{
	if (!gso_seg && !to.tclass)
		return sendto(fd, buf, len, MSG_DONTWAIT, reinterpret_cast<const sockaddr *>(&to.ss),
			      to.len);
	iovec iov{const_cast<void *>(buf), len};
	alignas(cmsghdr) std::uint8_t ctl[CMSG_SPACE(sizeof(std::uint16_t)) + CMSG_SPACE(sizeof(int))] = {};
	msghdr m{};
	m.msg_name = const_cast<sockaddr_storage *>(&to.ss);
	m.msg_namelen = to.len;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl;
	m.msg_controllen = sizeof(ctl);
	std::size_t used = 0;
	cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (gso_seg) {
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(gso_seg));
		std::memcpy(CMSG_DATA(c), &gso_seg, sizeof(gso_seg));
		used += CMSG_SPACE(sizeof(gso_seg));
		c = CMSG_NXTHDR(&m, c);
	}
	if (to.tclass) {
		int tc = to.tclass;
		c->cmsg_level = to.v6() ? IPPROTO_IPV6 : IPPROTO_IP;
		c->cmsg_type = to.v6() ? IPV6_TCLASS : IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(tc));
		std::memcpy(CMSG_DATA(c), &tc, sizeof(tc));
		used += CMSG_SPACE(sizeof(tc));
	}
	m.msg_controllen = used;
	return sendmsg(fd, &m, MSG_DONTWAIT);
}

// A poller that called progress() within this time receives for the
// receive thread, which then sleeps on the wake-up and the timers only.
constexpr std::uint64_t kHandoffNs = 1000000;

// The packets a thread holds while a Batch lives (one per thread).
struct Endpoint::TxRun {
	Endpoint *ep = nullptr;	// whose packets are held
	int depth = 0;		// Batch nesting
	std::size_t off = 0;	// bytes held
	std::size_t seg = 0;	// the first packet's size: every one's but the last
	unsigned n = 0;		// packets held
	bool closed = false;	// the last one held is shorter: nothing may follow
	PeerAddr to;
	int src = -1;		// the socket it leaves from (Endpoint::source_of())
	alignas(8) std::uint8_t buf[kGsoBytes + kMaxPacket];
};

namespace {
thread_local std::unique_ptr<Endpoint::TxRun> t_run;
}

Endpoint::Batch::Batch(Endpoint &ep)
{
	if (!t_run)
		t_run.reset(new TxRun());
	if (!t_run->depth++)
		t_run->ep = &ep;
}

Endpoint::Batch::~Batch()
{
	TxRun &r = *t_run;
	if (!--r.depth) {
		if (r.n)
			r.ep->flush_run(r);
		r.ep = nullptr;
	}
}

std::unique_ptr<Endpoint> Endpoint::open(const PeerAddr &local)
{
	return open_impl(local, -1, -1);
}

std::unique_ptr<Endpoint> Endpoint::open_impl(const PeerAddr &local, int relay_fd, int steered_fd,
					       bool relay_reads)
{
	std::unique_ptr<Endpoint> ep(new Endpoint());
	ep->relay_fd_ = relay_fd;
	ep->receive_fd_ = relay_fd < 0 || steered_fd >= 0;
	ep->relay_reads_ = relay_reads;
	int fam = local.v6() ? AF_INET6 : AF_INET;
	if (steered_fd >= 0) {
		// Bound already, and of the family of the address it is bound to.
		ep->fd_ = steered_fd;
		sockaddr_storage ss{};
		socklen_t len = sizeof(ss);
		if (getsockname(steered_fd, reinterpret_cast<sockaddr *>(&ss), &len) < 0)
			return nullptr;
		fam = ss.ss_family;
		// Blocking, as a socket of our own: sends wait for room.
		int fl = fcntl(steered_fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(steered_fd, F_SETFL, fl & ~O_NONBLOCK);
	} else {
		ep->fd_ = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	}
	if (ep->fd_ < 0)
		return nullptr;
	int one = 1;
	// Don't fragment: an unconnected socket then sends IPv4 ID 0, which
	// the ICRC covers (docs/wire.md, "The ICRC and the IPv4 ID").
	int pmtu = IP_PMTUDISC_DO;
	if (fam == AF_INET) {
		setsockopt(ep->fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
		setsockopt(ep->fd_, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	} else {
		setsockopt(ep->fd_, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
		setsockopt(ep->fd_, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		setsockopt(ep->fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	// UDP_SEGMENT: a batch of packets in one send (a probe: a default
	// segment size of 0 sets nothing).  UDP_GRO: what the kernel
	// coalesced comes as one buffer, cut up again in receive_socket().
	int zero = 0;
	ep->gso_ = !env_off("UABI_WIRE_GSO") && setsockopt(ep->fd_, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) == 0;
	ep->gro_ = ep->receive_fd_ && !env_off("UABI_WIRE_GRO") &&
		   setsockopt(ep->fd_, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	int buf = 4 << 20;
	setsockopt(ep->fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(ep->fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (steered_fd < 0 && bind(ep->fd_, reinterpret_cast<const sockaddr *>(&local.ss), local.len) < 0) {
		int e = errno;
		close(ep->fd_);
		ep->fd_ = -1;
		errno = e;
		return nullptr;
	}
	ep->local_.len = sizeof(ep->local_.ss);
	getsockname(ep->fd_, reinterpret_cast<sockaddr *>(&ep->local_.ss), &ep->local_.len);
	if (const char *t = getenv("UABI_WIRE_TRACE"))
		ep->trace_ = std::fopen(t, "a");
	if (const char *n = getenv("UABI_WIRE_NETEM"))
		ep->impair(n);
	ep->mcast_send_setup(ep->fd_, ep->local_);
	ep->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ep->wake_fd_ < 0)
		return nullptr;
	ep->hold_acks_ = !env_off("UABI_WIRE_HOLD_ACKS");
	{
		static std::once_flag once;
		std::call_once(once, [] { std::atexit(send_all_held_acks); });
		std::lock_guard<std::mutex> g(live_lock());
		live_endpoints().push_back(ep.get());
		ep->live_ = true;
		ep->owner_ = getpid();
	}
	ep->thread_ = std::thread([p = ep.get()] { p->run(); });
	return ep;
}

std::unique_ptr<Endpoint> Endpoint::open_relayed(const PeerAddr &local, int relay_fd, int steered_fd)
{
	if (relay_fd < 0) {
		if (steered_fd >= 0)
			close(steered_fd);
		errno = EBADF;
		return nullptr;
	}
	// Closed with the endpoint, also when open_impl() fails.
	struct stat st;
	const bool reads = fstat(relay_fd, &st) == 0 && !S_ISSOCK(st.st_mode);
	return open_impl(local, relay_fd, steered_fd, reads);
}

Endpoint::~Endpoint()
{
	if (live_) {
		std::lock_guard<std::mutex> g(live_lock());
		auto &v = live_endpoints();
		v.erase(std::remove(v.begin(), v.end(), this), v.end());
	}
	send_held_acks();
	stop_ = true;
	wake();
	if (thread_.joinable())
		thread_.join();
	if (fd_ >= 0)
		close(fd_);
	for (unsigned i = 0; i < nsrc_.load(); i++)
		close(srcs_[i].fd);
	if (relay_fd_ >= 0)
		close(relay_fd_);
	if (wake_fd_ >= 0)
		close(wake_fd_);
	for (Group &g : groups_)
		close(g.fd);
	for (int fd : dead_fds_)
		close(fd);
	if (trace_)
		std::fclose(trace_);
}

void Endpoint::trace(const char *dir, const Packet &p, std::size_t payload)
{
	std::fprintf(trace_, "%llu %s op %02x qp %06x psn %06x%s aeth %02x/%06x len %zu pid %d\n",
		     (unsigned long long)(now_ns() / 1000), dir, p.bth.opcode, p.bth.dest_qp, p.bth.psn,
		     p.bth.ack_req ? " A" : "", p.aeth.syndrome, p.aeth.msn, payload, int(getpid()));
}

void Endpoint::wake()
{
	std::uint64_t one = 1;
	if (wake_fd_ >= 0)
		(void)!write(wake_fd_, &one, sizeof(one));
}

// UABI_WIRE_NETEM="loss=P,reorder=P,duplicate=P" (percent of the
// datagrams sent): what `tc netem` does on a link, for kernels without
// it (tests only; docs/wire.md).  A reordered datagram is held back
// behind the next one.
void Endpoint::impair(const char *spec)
{
	struct Netem {
		std::mutex m;
		unsigned loss = 0, reorder = 0, dup = 0;
		std::uint64_t rng = 0x9e3779b97f4a7c15ull;
		std::vector<std::uint8_t> held;
		bool have = false;
		unsigned next()
		{
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			return unsigned(rng % 1000);
		}
	};
	auto n = std::make_shared<Netem>();
	n->rng ^= std::uint64_t(getpid()) << 20;
	std::string s = spec;
	std::size_t pos = 0;
	while (pos < s.size()) {
		std::size_t end = s.find(',', pos);
		std::string kv = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
		pos = end == std::string::npos ? s.size() : end + 1;
		std::size_t eq = kv.find('=');
		if (eq == std::string::npos)
			continue;
		unsigned v = unsigned(std::strtod(kv.c_str() + eq + 1, nullptr) * 10);
		std::string k = kv.substr(0, eq);
		if (k == "loss")
			n->loss = v;
		else if (k == "reorder")
			n->reorder = v;
		else if (k == "duplicate")
			n->dup = v;
	}
	set_tx_hook([n](const std::uint8_t *buf, std::size_t len, const PeerAddr &,
			const std::function<void(const std::uint8_t *, std::size_t)> &send) {
		std::lock_guard<std::mutex> g(n->m);
		if (n->next() < n->loss)
			return;
		if (n->next() < n->reorder && !n->have) {
			n->held.assign(buf, buf + len);
			n->have = true;
			return;
		}
		send(buf, len);
		if (n->next() < n->dup)
			send(buf, len);
		if (n->have) {
			send(n->held.data(), n->held.size());
			n->have = false;
		}
	});
}

void Endpoint::set_tx_hook(TxHook h)
{
	std::lock_guard<std::mutex> g(tx_lock_);
	tx_hook_ = std::move(h);
	hooked_ = bool(tx_hook_);
}

std::unique_ptr<Qp> Endpoint::create_qp(std::uint32_t qpn, std::uint32_t type, Memory &mem, CqSink scq,
					CqSink rcq, std::uint32_t max_send_wr, std::uint32_t max_recv_wr)
{
	if (type != kQptRc && type != kQptUc && type != kQptUd && type != kQptXrcSend && type != kQptXrcRecv) {
		errno = EINVAL;
		return nullptr;
	}
	{
		std::lock_guard<std::mutex> g(qps_lock_);
		if (qps_.count(qpn & kQpnMask)) {
			errno = EEXIST;
			return nullptr;
		}
	}
	std::unique_ptr<Qp> qp(new Qp(*this, qpn & kQpnMask, type, mem, std::move(scq), std::move(rcq),
				      max_send_wr, max_recv_wr));
	register_qp(qp.get());
	return qp;
}

void Endpoint::register_qp(Qp *qp)
{
	std::lock_guard<std::mutex> g(qps_lock_);
	qps_[qp->qpn()] = qp;
}

void Endpoint::unregister_qp(Qp *qp)
{
	// The receive thread holds qps_lock_ while it is inside a QP, so once
	// this returns no packet reaches @qp.
	std::lock_guard<std::mutex> g(qps_lock_);
	qps_.erase(qp->qpn());
	// Its multicast attachments go with it.
	detach_all_mcast(qp->qpn());
}

int Endpoint::add_source(const PeerAddr &local, bool polled)
{
	if (local.ss.ss_family != AF_INET && local.ss.ss_family != AF_INET6)
		return EINVAL;
	std::lock_guard<std::mutex> g(src_lock_);
	const unsigned n = nsrc_.load(std::memory_order_relaxed);
	if (local.same_ip(local_))
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (local.same_ip(srcs_[i].local)) {
			if (polled)
				srcs_[i].polled.store(true, std::memory_order_relaxed);
			return 0;
		}
	if (n == kMaxSources)
		return ENOSPC;
	const bool receives = relay_fd_ < 0;	// the in-process host: ours alone
	const int fam = local.v6() ? AF_INET6 : AF_INET;
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int one = 1, pmtu = IP_PMTUDISC_DO, buf = 4 << 20;
	if (fam == AF_INET) {
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (receives) {
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
		if (gro_)
			setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
	}
	PeerAddr at = local;
	if (!receives) {
		// Port 0: any (answers go to port 4791 of the address, uabid's
		// or the module's, which relays them).
		if (at.v6())
			reinterpret_cast<sockaddr_in6 *>(&at.ss)->sin6_port = 0;
		else
			reinterpret_cast<sockaddr_in *>(&at.ss)->sin_port = 0;
	}
	if (bind(fd, reinterpret_cast<const sockaddr *>(&at.ss), at.len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	Source &s = srcs_[n];
	s.local.len = sizeof(s.local.ss);
	getsockname(fd, reinterpret_cast<sockaddr *>(&s.local.ss), &s.local.len);
	mcast_send_setup(fd, local);
	s.fd = fd;
	s.polled.store(polled || !receives, std::memory_order_relaxed);
	nsrc_.store(n + 1, std::memory_order_release);
	if (receives)
		wake();	// the receive thread polls it from now on
	return 0;
}

std::vector<PeerAddr> Endpoint::sources() const
{
	std::vector<PeerAddr> v;
	for (unsigned i = 0, n = nsrc_.load(std::memory_order_acquire); i < n; i++)
		v.push_back(srcs_[i].local);
	return v;
}

int Endpoint::source_of(const PeerAddr *from, const PeerAddr &to) const
{
	const unsigned n = nsrc_.load(std::memory_order_acquire);
	// Multicast leaves from the socket set up for it (mcast.cpp), the
	// first address of its family.
	const bool mc = to.v6() ? reinterpret_cast<const sockaddr_in6 *>(&to.ss)->sin6_addr.s6_addr[0] == 0xff
				: (ntohl(reinterpret_cast<const sockaddr_in *>(&to.ss)->sin_addr.s_addr) >> 28) == 0xe;
	if (from && from->len && from->v6() == to.v6() && !mc) {
		if (from->same_ip(local_))
			return -1;
		for (unsigned i = 0; i < n; i++)
			if (from->same_ip(srcs_[i].local))
				return int(i);
	}
	// None chosen (or none of ours): the first address of @to's family.
	if (to.v6() == local_.v6())
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (srcs_[i].local.v6() == to.v6())
			return int(i);
	return -1;
}

IpInfo Endpoint::ip_to(const PeerAddr &to, int src) const
{
	IpInfo ip;
	const PeerAddr &from = src < 0 ? local_ : srcs_[src].local;
	ip.v6 = from.v6();
	addr_bytes(from, ip.src, &ip.src_port);
	addr_bytes(to, ip.dst, &ip.dst_port);
	return ip;
}

// A packet joins the run this thread holds, if it may: same peer, not
// larger than the first, nothing shorter before it, within one send's
// limits.  Otherwise the run goes first and the packet starts the next.
// Segment i of a UDP_SEGMENT send leaves with IPv4 ID i (the kernel
// numbers the segments from the ID of a DF datagram of an unconnected
// socket, 0), which the ICRC covers: it is computed for that ID.
bool Endpoint::transmit_batched(const Packet &hdr, const std::vector<std::span<const std::uint8_t>> &parts,
				std::size_t bytes, const PeerAddr &to, int src)
{
	TxRun *r = t_run.get();
	if (!r || !r->depth || r->ep != this || !gso_.load(std::memory_order_relaxed) ||
	    hooked_.load(std::memory_order_relaxed))
		return false;
	for (;;) {
		Builder b(r->buf + r->off, kMaxPacket);
		if (!b.headers(hdr, bytes))
			return true;
		std::size_t len = b.size();
		bool joins = !r->n || (same_peer(r->to, to) && r->src == src && !r->closed && len <= r->seg &&
				       r->n < kGsoSegments && r->off + len <= kGsoBytes);
		if (!joins) {
			flush_run(*r);
			continue;
		}
		for (auto &p : parts)
			if (std::uint8_t *room = b.payload_room(p.size()))
				std::memcpy(room, p.data(), p.size());
		IpInfo ip = ip_to(to, src);
		ip.ip_id = std::uint16_t(r->n);
		len = b.finish(ip);
		if (!len)
			return true;
		counters_.tx_packets.fetch_add(1, std::memory_order_relaxed);
		if (!r->n) {
			r->to = to;
			r->src = src;
			r->seg = len;
		} else if (len < r->seg) {
			r->closed = true;
		}
		r->n++;
		r->off += len;
		return true;
	}
}

void Endpoint::flush_run(TxRun &r)
{
	const int fd = fd_of(r.src);
	if (r.n == 1) {
		(void)send_datagram(fd, r.buf, r.off, r.to);
	} else if (send_datagram(fd, r.buf, r.off, r.to, std::uint16_t(r.seg)) < 0 &&
		   errno != EAGAIN && errno != ENOBUFS && errno != EMSGSIZE) {
		// The route's device cannot segment (EIO), or the kernel
		// refuses these segments: one send each from now on, each
		// ICRC made again for the ID 0 it gets.
		gso_ = false;
		IpInfo ip = ip_to(r.to, r.src);
		for (std::size_t off = 0; off < r.off; off += r.seg) {
			std::size_t len = std::min(r.seg, r.off - off);
			std::uint8_t *pkt = r.buf + off;
			std::uint32_t crc = icrc(ip, {pkt, len - kIcrcBytes});
			for (int i = 0; i < 4; i++)
				pkt[len - kIcrcBytes + i] = std::uint8_t(crc >> (8 * i));
			(void)send_datagram(fd, pkt, len, r.to);
		}
	}
	r.n = 0;
	r.off = 0;
	r.closed = false;
}

void Endpoint::transmit_gather(const Packet &hdr, const std::vector<std::span<const std::uint8_t>> &parts,
			       std::size_t bytes, const PeerAddr &to, const PeerAddr *from)
{
	if (trace_)
		trace("tx", hdr, bytes);
	const int src = source_of(from, to);
	if (transmit_batched(hdr, parts, bytes, to, src))
		return;
	alignas(8) std::uint8_t buf[kMaxPacket];
	Builder b(buf, sizeof(buf));
	if (!b.headers(hdr, bytes))
		return;
	for (auto &p : parts)
		if (std::uint8_t *room = b.payload_room(p.size()))
			std::memcpy(room, p.data(), p.size());
	std::size_t len = b.finish(ip_to(to, src));
	if (!len)
		return;
	counters_.tx_packets.fetch_add(1, std::memory_order_relaxed);
	auto send = [&](const std::uint8_t *d, std::size_t n) {
		// A full socket buffer drops the datagram as the wire would;
		// retransmission recovers it.
		(void)send_datagram(fd_of(src), d, n, to);
	};
	std::unique_lock<std::mutex> g(tx_lock_);
	if (tx_hook_) {
		auto h = tx_hook_;
		g.unlock();
		h(buf, len, to, send);
		return;
	}
	g.unlock();
	send(buf, len);
}

void Endpoint::transmit(const Packet &hdr, std::span<const std::uint8_t> payload, const PeerAddr &to,
			const PeerAddr *from)
{
	std::vector<std::span<const std::uint8_t>> parts;
	if (!payload.empty())
		parts.push_back(payload);
	transmit_gather(hdr, parts, payload.size(), to, from);
}

bool Endpoint::progress()
{
	// Relayed only (no socket of our own to read): what comes for us
	// passes uabid first, and a poller spinning on every CPU kept it
	// waiting — on a loaded 2-CPU machine past RC's timeouts (seen:
	// ib_send_lat through the relay failing 1 run in 5 at load 5; none
	// with the receive thread).  The receive thread keeps the relay.
	if (!receive_fd_ && !relay_reads_)
		return false;	// (the module's relay is the kernel's queue: no third party)
	polled_ns_.store(now_ns(), std::memory_order_relaxed);
	// What the last turn held and no send took along goes now.
	send_held_acks();
	std::unique_lock<std::mutex> g(rx_lock_, std::try_to_lock);
	if (!g.owns_lock())
		return false;
	int n = 0;
	if (receive_fd_)
		n += receive_socket(true);
	// Steered, uabid's relay brings only what steering could not place
	// (QPs past its limits): looked at every 16th turn, not a second
	// system call on every one.  The module's relay is all there is.
	if (relay_fd_ >= 0 && (relay_reads_ || !(relay_turn_++ & 15)))
		n += receive_relayed(true);
	return n > 0;
}

void Endpoint::consumer_sleeps()
{
	send_held_acks();
	if (polled_ns_.exchange(0, std::memory_order_relaxed))
		wake();
}

void Endpoint::timer_armed(std::uint64_t deadline)
{
	std::uint64_t by = wake_by_ns_.load();
	if (!by || deadline < by)
		wake();
}

void Endpoint::run()
{
	std::vector<int> groups;
	std::vector<pollfd> p;
	while (!stop_) {
		// ACKs a poller held: they go at the latest when this thread
		// wakes, which it does within kHandoffNs of the last poll.
		send_held_acks();
		int timeout = -1;
		wake_by_ns_.store(0);	// deciding: a timer armed now wakes us (timer_armed())
		{
			std::lock_guard<std::mutex> g(qps_lock_);
			std::uint64_t next = 0;
			for (auto &[n, qp] : qps_) {
				std::lock_guard<std::mutex> q(qp->lock_);
				std::uint64_t t = qp->next_timer_locked();
				if (t && (!next || t < next))
					next = t;
			}
			if (next) {
				std::uint64_t now = now_ns();
				timeout = next <= now ? 0 : int((next - now + 999999) / 1000000);
			}
		}
		// A poller receives for us: until it stops, only the timers
		// and the wake-up.
		bool handed = false;
		if (std::uint64_t polled = polled_ns_.load(std::memory_order_relaxed)) {
			std::uint64_t now = now_ns();
			if (now - polled < kHandoffNs) {
				handed = true;
				int left = int((polled + kHandoffNs - now + 999999) / 1000000);
				if (timeout < 0 || left < timeout)
					timeout = left;
			}
		}
		// Relayed: the relay, and the socket only when it is steered
		// (else it only sends).
		// And the sockets of the multicast groups joined (after these;
		// the receive thread always takes those).
		groups.clear();
		group_fds(groups);
		// Not relayed, the sockets at the other addresses too.
		const unsigned nsrc = relay_fd_ < 0 ? nsrc_.load(std::memory_order_acquire) : 0;
		p.assign({{wake_fd_, POLLIN, 0},
			  {receive_fd_ && !handed ? fd_ : -1, POLLIN, 0},
			  {handed ? -1 : relay_fd_, POLLIN, 0}});
		// (A socket pollers leave alone, add_source(), always.)
		for (unsigned i = 0; i < nsrc; i++)
			p.push_back({handed && srcs_[i].polled.load(std::memory_order_relaxed) ? -1 : srcs_[i].fd,
				     POLLIN, 0});
		for (int g : groups)
			p.push_back({g, POLLIN, 0});
		wake_by_ns_.store(timeout < 0 ? ~0ull : now_ns() + std::uint64_t(timeout) * 1000000);
		int n = poll(p.data(), p.size(), timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			std::uint64_t v;
			(void)!read(wake_fd_, &v, sizeof(v));
		}
		bool more = false;
		for (unsigned i = 0; i < nsrc; i++)
			more = more || (p[3 + i].revents & POLLIN);
		if (p[1].revents & POLLIN || p[2].revents & POLLIN || more) {
			std::lock_guard<std::mutex> g(rx_lock_);
			if (p[1].revents & POLLIN || more)
				receive_socket();
			if (p[2].revents & POLLIN)
				receive_relayed();
		}
		for (std::size_t i = 3 + nsrc; i < p.size(); i++)
			if (p[i].revents & POLLIN)
				receive_group(p[i].fd);
		timers();
	}
}

void Endpoint::timers()
{
	std::lock_guard<std::mutex> g(qps_lock_);
	std::uint64_t now = now_ns();
	for (auto &[n, qp] : qps_) {
		std::lock_guard<std::mutex> q(qp->lock_);
		qp->timers_locked(now);
	}
}

void Endpoint::inject(std::span<std::uint8_t> pkt, const PeerAddr &from, bool fix_icrc)
{
	IpInfo ip;
	ip.v6 = from.v6();
	addr_bytes(from, ip.src, &ip.src_port);
	addr_bytes(local_, ip.dst, &ip.dst_port);
	if (fix_icrc && pkt.size() >= kBthBytes + kIcrcBytes) {
		std::size_t body = pkt.size() - kIcrcBytes;
		std::uint32_t c = icrc(ip, pkt.first(body));
		for (int i = 0; i < 4; i++)
			pkt[body + i] = std::uint8_t(c >> (8 * i));
	}
	std::lock_guard<std::mutex> g(qps_lock_);
	counters_.rx_packets.fetch_add(1, std::memory_order_relaxed);
	deliver(pkt, from, ip);
	flush_acks();
}

void Endpoint::flush_acks(bool hold)
{
	// ACK coalescing: one ACK per QP for everything received since the
	// last flush (the caller holds qps_lock_).  A poller holds them: the
	// QP's next send takes its ACK along in the same system call
	// (Qp::pump_locked()), else the next turn sends it.
	hold = hold && hold_acks_;
	bool held = false;
	// A QP that processes take turns to serve (Qp::Share: an XRC receive
	// QP): its completions before its ACK, and its state saved once they
	// are in, so a server that dies after ACKing has lost nothing
	// (docs/wire.md, "XRC").
	for (auto &[qpn, qp] : qps_) {
		if (!shared_qps_.load(std::memory_order_relaxed))
			break;
		if (!qp->share_.save)
			continue;
		std::lock_guard<std::mutex> q(qp->lock_);
		if (qp->rx_done_.empty())
			continue;
		for (const Completion &c : qp->rx_done_)
			if (qp->rcq_)
				qp->rcq_(c);
		qp->rx_done_.clear();
		if (!qp->in_.active)
			qp->share_.save(qp->epsn_, qp->msn_);
	}
	{
		Batch batch(*this);
		for (auto &[qpn, qp] : qps_) {
			std::lock_guard<std::mutex> q(qp->lock_);
			if (!qp->ack_due_)
				continue;
			if (hold)
				held = true;
			else
				qp->send_ack_locked(kAckOk | 0x1f, psn_add(qp->epsn_, kPsnMask), qp->ack_to_);
		}
	}
	// The receive thread sends them if nothing else did by the end of
	// the hand-over (it wakes within 1 to 2 ms of the last poll: its
	// timeout is in whole ms).  Woken now only if it sleeps longer
	// than that, as it does until it first sees a poll (a datagram a
	// poller took first does not wake it); woken always, it would send
	// them at once and no send would take one along.
	if (held && !acks_held_.exchange(true)) {
		std::uint64_t by = wake_by_ns_.load();
		if (by && by > now_ns() + 3 * kHandoffNs)
			wake();
	}
	for (auto &[qpn, qp] : qps_) {
		std::lock_guard<std::mutex> q(qp->lock_);
		for (const Completion &c : qp->rx_done_)
			if (qp->rcq_)
				qp->rcq_(c);
		qp->rx_done_.clear();
	}
}

void Endpoint::send_held_acks()
{
	if (!acks_held_.load(std::memory_order_relaxed) || !acks_held_.exchange(false))
		return;
	std::lock_guard<std::mutex> g(qps_lock_);
	Batch batch(*this);
	for (auto &[qpn, qp] : qps_) {
		std::lock_guard<std::mutex> q(qp->lock_);
		if (qp->ack_due_)
			qp->send_ack_locked(kAckOk | 0x1f, psn_add(qp->epsn_, kPsnMask), qp->ack_to_);
	}
}

int Endpoint::receive_socket(bool poller)
{
	int n = receive_socket(fd_, local_, poller);
	// Not relayed: the sockets at the device's other addresses are ours
	// to read too (docs/wire.md, "Every address").
	// (Pollers: those add_source() gave them only.)
	if (relay_fd_ < 0)
		for (unsigned i = 0, k = nsrc_.load(std::memory_order_acquire); i < k; i++)
			if (!poller || srcs_[i].polled.load(std::memory_order_relaxed))
				n += receive_socket(srcs_[i].fd, srcs_[i].local, poller);
	return n;
}

int Endpoint::receive_socket(int fd, const PeerAddr &local, bool poller)
{
	// Without UDP_GRO a datagram per buffer; with it, a buffer may hold
	// several of one size (the last one shorter), as the UDP_GRO control
	// message says.
	static thread_local std::unique_ptr<std::uint8_t[]> mem;
	constexpr std::size_t kSmall = kMaxPacket + 64;
	if (!mem)
		mem.reset(new std::uint8_t[std::max(kBatch * kSmall, kGroBatch * kGroBytes)]);
	const int batch = gro_ ? kGroBatch : kBatch;
	const std::size_t size = gro_ ? kGroBytes : kSmall;
	sockaddr_storage from[kBatch];
	alignas(cmsghdr) std::uint8_t ctl[kBatch][128];
	iovec iov[kBatch];
	mmsghdr msgs[kBatch];
	for (int i = 0; i < batch; i++) {
		iov[i] = {mem.get() + i * size, size};
		msgs[i] = {};
		msgs[i].msg_hdr.msg_name = &from[i];
		msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_control = ctl[i];
		msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
	}
	int n = recvmmsg(fd, msgs, batch, MSG_DONTWAIT, nullptr);
	if (n <= 0)
		return 0;
	std::lock_guard<std::mutex> g(qps_lock_);
	for (int i = 0; i < n; i++) {
		if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
			counters_.rx_packets.fetch_add(1, std::memory_order_relaxed);
			counters_.rx_malformed.fetch_add(1, std::memory_order_relaxed);
			continue;
		}
		PeerAddr src = PeerAddr::from(reinterpret_cast<sockaddr *>(&from[i]), msgs[i].msg_hdr.msg_namelen);
		IpInfo ip;
		ip.v6 = src.v6();
		ip.ip_id_unknown = !ip.v6;
		addr_bytes(src, ip.src, &ip.src_port);
		addr_bytes(local, ip.dst, &ip.dst_port);
		std::size_t seg = read_cmsgs(&msgs[i].msg_hdr, ip.dst);
		std::size_t len = msgs[i].msg_len;
		if (!seg || seg > len)
			seg = len;
		for (std::size_t off = 0; off < len || !len; off += seg) {
			counters_.rx_packets.fetch_add(1, std::memory_order_relaxed);
			deliver({static_cast<std::uint8_t *>(iov[i].iov_base) + off, std::min(seg, len - off)}, src,
				ip);
			if (!len)
				break;
		}
	}
	flush_acks(poller);
	return n;
}

// Datagrams from the relay: each behind the RelayHdr its owner of the port
// received it with.  The relay is the daemon's; what it says is believed
// as a socket's msg_name and IP_PKTINFO would be.
int Endpoint::receive_relayed(bool poller)
{
	static thread_local std::uint8_t bufs[kBatch][kMaxPacket + 64];
	RelayHdr hdr[kBatch];
	iovec iov[kBatch][2];
	mmsghdr msgs[kBatch];
	for (int i = 0; i < kBatch; i++) {
		iov[i][0] = {&hdr[i], sizeof(hdr[i])};
		iov[i][1] = {bufs[i], sizeof(bufs[i])};
		msgs[i] = {};
		msgs[i].msg_hdr.msg_iov = iov[i];
		msgs[i].msg_hdr.msg_iovlen = 2;
	}
	int n = 0;
	if (relay_reads_) {
		// The module's relay: one datagram per read(), never blocking
		// (the fd is O_NONBLOCK).
		for (; n < kBatch; n++) {
			ssize_t got = readv(relay_fd_, iov[n], 2);
			if (got <= 0)
				break;
			msgs[n].msg_len = unsigned(got);
		}
	} else {
		n = recvmmsg(relay_fd_, msgs, kBatch, MSG_DONTWAIT, nullptr);
	}
	if (n <= 0)
		return 0;
	std::lock_guard<std::mutex> g(qps_lock_);
	for (int i = 0; i < n; i++) {
		counters_.rx_packets.fetch_add(1, std::memory_order_relaxed);
		if ((msgs[i].msg_hdr.msg_flags & MSG_TRUNC) || msgs[i].msg_len < sizeof(RelayHdr)) {
			counters_.rx_malformed.fetch_add(1, std::memory_order_relaxed);
			continue;
		}
		const RelayHdr &h = hdr[i];
		IpInfo ip;
		ip.v6 = h.v6 != 0;
		ip.ip_id_unknown = !ip.v6;
		std::memcpy(ip.src, h.src, ip.v6 ? 16 : 4);
		std::memcpy(ip.dst, h.dst, ip.v6 ? 16 : 4);
		ip.src_port = h.src_port;
		ip.dst_port = h.dst_port;
		sockaddr_storage ss{};
		socklen_t len;
		if (ip.v6) {
			auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);
			a->sin6_family = AF_INET6;
			a->sin6_port = htons(h.src_port);
			std::memcpy(&a->sin6_addr, h.src, 16);
			len = sizeof(*a);
		} else {
			auto *a = reinterpret_cast<sockaddr_in *>(&ss);
			a->sin_family = AF_INET;
			a->sin_port = htons(h.src_port);
			std::memcpy(&a->sin_addr, h.src, 4);
			len = sizeof(*a);
		}
		PeerAddr src = PeerAddr::from(reinterpret_cast<sockaddr *>(&ss), len);
		deliver({bufs[i], msgs[i].msg_len - sizeof(RelayHdr)}, src, ip);
	}
	flush_acks(poller);
	return n;
}

void Endpoint::deliver(std::span<const std::uint8_t> pkt, const PeerAddr &from, const IpInfo &ip)
{
	Packet p;
	ParseError e = parse(pkt, &ip, p);
	if (e == ParseError::Icrc) {
		counters_.rx_icrc.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	if (e != ParseError::None) {
		counters_.rx_malformed.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	if (trace_)
		trace("rx", p, p.payload.size());
	if ((p.bth.pkey & 0x7fff) != (kDefaultPkey & 0x7fff)) {
		counters_.rx_bad_pkey.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	if (p.bth.dest_qp == kMcastQpn) {
		deliver_mcast(p, from, ip);
		return;
	}
	if (p.bth.dest_qp == 1 && gsi_sink_) {
		deliver_gsi(p, ip);
		return;
	}
	auto it = qps_.find(p.bth.dest_qp);
	if (it == qps_.end()) {
		counters_.rx_no_qp.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	Qp *qp = it->second;
	std::lock_guard<std::mutex> q(qp->lock_);
	Transport t = transport_of(p.bth.opcode);
	// XRC: requests to a receive QP, responses to a send QP (which takes
	// RC's response codes too).
	bool type_ok = (t == kRc && qp->type_ == kQptRc) || (t == kUc && qp->type_ == kQptUc) ||
		       (t == kUd && qp->type_ == kQptUd) ||
		       (t == kXrc && qp->type_ == (p.has(kIsResponse) ? kQptXrcSend : kQptXrcRecv)) ||
		       // OFED's XRC QP, both ends of XRC at once
		       (t == kXrc && qp->type_ == kQptXrcSend && !p.has(kIsResponse) && qp->xrc_src_) ||
		       (t == kRc && qp->type_ == kQptXrcSend && p.has(kIsResponse));
	if (!type_ok) {
		counters_.rx_malformed.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	if (t == kUd) {
		qp->on_ud_locked(p, from, ip);
		return;
	}
	if (p.has(kIsResponse))
		qp->on_response_locked(p, now_ns());
	else
		qp->on_request_locked(p, from);
}

void Endpoint::set_gsi_sink(GsiSink sink)
{
	std::lock_guard<std::mutex> g(qps_lock_);
	gsi_sink_ = std::move(sink);
}

// A datagram for QP1 (parsed: its ICRC and P_Key are right), under
// qps_lock_: the CM's if it is a whole UD SEND to the GSI.  The MAD itself
// is the CM's to judge.
void Endpoint::deliver_gsi(const Packet &p, const IpInfo &ip)
{
	std::uint8_t sgid[16], dgid[16];
	if (!gsi_datagram(p, ip, sgid, dgid)) {
		counters_.rx_gsi_refused.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	counters_.rx_gsi.fetch_add(1, std::memory_order_relaxed);
	gsi_sink_(sgid, dgid, p.payload.first(kMadBytes));
}

int Endpoint::send_gsi(const PeerAddr &from, const PeerAddr &to, std::span<const std::uint8_t> mad)
{
	if (mad.size() != kMadBytes || !from.len || from.v6() != to.v6())
		return EINVAL;
	if (int e = add_source(from, false))
		return e;
	transmit(gsi_headers(gsi_psn_.fetch_add(1, std::memory_order_relaxed)), mad, to, &from);
	return 0;
}

} // namespace uabi::wire
