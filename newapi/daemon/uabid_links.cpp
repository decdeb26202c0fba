// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid: RoCE devices and their port (docs/wire.md, "Devices on uabid").
//
// `uabi link add NAME netdev IFNAME` makes a RoCE device of the core bound
// to an interface of uabid's network namespace.  uabid owns the device's
// UDP port (4791 at the interface's first address) for every process it
// serves: it reads each datagram's destination QP from its BTH and hands
// the datagram to the connection whose context owns that QP, over a
// socket that connection asked for (kOpWireRelay).  Processes send from
// sockets of their own; only receiving goes through uabid.  A netlink
// socket tells uabid when addresses or carrier change; the GID tables and
// the bound address follow.
#include "uabid.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#include <sys/timerfd.h>

#include <uabi/cm_wire.h>
#include <uabi/wire/engine.hpp>
#include <uabi/wire/packet.hpp>

namespace uabid {

namespace {

constexpr std::uint16_t kRoceV2Port = 4791;
constexpr int kRelayBatch = 32;
// The largest RoCEv2 datagram: headers, a 4096-byte MTU payload, ICRC.
// A buffer of the port's socket: with UDP_GRO, what the kernel coalesced
// (at most one IP datagram's length).
constexpr std::size_t kRelayBuf = 65536;

std::uint16_t wire_port()
{
	const char *p = std::getenv("UABI_WIRE_PORT");
	long v = p && *p ? std::strtol(p, nullptr, 10) : 0;
	return v > 0 && v < 65536 ? std::uint16_t(v) : kRoceV2Port;
}

bool v4_mapped(const unsigned char *g)
{
	static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return !std::memcmp(g, prefix, sizeof(prefix));
}

// The address a device receives at: its first IPv4 GID, else its first
// IPv6 one (the order uabi_user_link_read() gives: link-local last).
bool receive_addr(const uabi_user_device_info &d, unsigned char out[16])
{
	static const unsigned char zero[16] = {};
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < d.num_gids && i < 16; i++) {
			if ((pass == 0) != v4_mapped(d.gids[i]) || !std::memcmp(d.gids[i], zero, 16))
				continue;
			std::memcpy(out, d.gids[i], 16);
			return true;
		}
	return false;
}

std::uint64_t qp_key(unsigned device, std::uint32_t qpn)
{
	return (std::uint64_t(device) << 32) | (qpn & 0xffffff);
}

} // namespace

// The device at position @pos of the kOpLinks list: its core index, -1.
int Daemon::device_at(unsigned pos)
{
	// By name only: every hello comes here, and a device's full query
	// reads its interface.
	char name[64];
	for (unsigned i = 0, k = 0; i < UABI_USER_MAX_DEVICES; i++) {
		if (uabi_user_device_name(i, name, sizeof(name)))
			continue;
		if (k++ == pos)
			return int(i);
	}
	return -1;
}

namespace {

// A UDP socket bound to @addr (a GID) and @port, non-blocking, with
// IP_PKTINFO; in a reuseport group when @reuseport.  -errno.
int udp_socket_at(const unsigned char addr[16], std::uint16_t port, const char *netdev, bool reuseport)
{
	const bool v6 = !v4_mapped(addr);
	int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1, buf = 4 << 20;
	if (v6) {
		::setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	} else {
		::setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		// The CM's MADs go out from uabid's socket, a member's owner
		// sends from its own: DF with IPv4 ID 0, the header their ICRC
		// is computed over (docs/wire.md).
		int pmtu = IP_PMTUDISC_DO;
		::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	}
	if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
		::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (reuseport && ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		int e = errno;
		::close(fd);
		return -e;
	}
	const uabi::wire::PeerAddr at =
	    uabi::wire::PeerAddr::from_gid(addr, port, v6 ? if_nametoindex(netdev) : 0);
	if (::bind(fd, reinterpret_cast<const sockaddr *>(&at.ss), at.len) < 0) {
		int e = errno;
		::close(fd);
		return -e;
	}
	return fd;
}

bool steering_wanted()
{
	const char *e = std::getenv("UABI_WIRE_STEER");
	return !e || std::strcmp(e, "0") != 0;
}

} // namespace

// Binds (again) the UDP socket of device @index to its receive address,
// when that changed; a device without an address has none.
void Daemon::link_bind(Link &l, const uabi_user_device_info &d)
{
	unsigned char addr[16] = {};
	bool have = receive_addr(d, addr);
	l.ifindex = if_nametoindex(d.netdev);
	if (l.fd >= 0 && have && !std::memcmp(addr, l.addr, 16)) {
		link_bind_others(l, d);
		return;
	}
	link_close_others(l);
	steer_reset(l);
	if (l.fd >= 0) {
		::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, l.fd, nullptr);
		link_fds_.erase(l.fd);
		::close(l.fd);
		l.fd = -1;
	}
	std::memcpy(l.addr, addr, 16);
	if (!have) {
		l.bind_err = -EADDRNOTAVAIL;
		return;
	}
	// Steered, the port's socket heads a reuseport group.  A group takes
	// in any socket of our uid that asks, so first make sure nobody holds
	// the port (another uabid of ours would otherwise join it silently):
	// a plain socket binds only where nobody does.
	int fd = udp_socket_at(addr, l.port, d.netdev, false);
	if (fd >= 0 && !cfg_.shared && steering_wanted()) {
		::close(fd);
		fd = udp_socket_at(addr, l.port, d.netdev, true);
		l.steer = fd >= 0;
	}
	if (fd < 0) {
		l.bind_err = fd;
		LOG("device %s: cannot receive at port %u of %s: %s", l.name.c_str(), l.port, d.netdev,
		    std::strerror(-l.bind_err));
		return;
	}
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
		l.bind_err = -errno;
		::close(fd);
		l.steer = false;
		return;
	}
	// A sender's UDP_SEGMENT batch comes whole (docs/wire.md, "Sending in
	// batches"), cut up in on_link_readable(): segmented by the kernel
	// instead, a batch of 64 datagrams overflowed the socket's buffer.
	int one = 1;
	::setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
	l.fd = fd;
	l.bind_err = 0;
	l.steer_err = 0;
	link_fds_[fd] = l.index;
	// Everything to us until a context binds a QP.
	steer_update(l);
	link_bind_others(l, d);
}

// Sockets at every other address of the device (its other GIDs), so that
// the CM answers at, and QPs receive at, any of them (docs/cm.md, "Every
// address of a device").  Those that stay are kept; an address that went
// is closed; one that could not be bound (an IPv6 address still
// tentative) is tried again.
void Daemon::link_bind_others(Link &l, const uabi_user_device_info &d)
{
	static const unsigned char zero[16] = {};
	std::vector<Link::Other> next;
	for (unsigned i = 0; i < d.num_gids && i < 16; i++) {
		const unsigned char *g = d.gids[i];
		if (!std::memcmp(g, zero, 16) || !std::memcmp(g, l.addr, 16))
			continue;
		bool dup = false;
		for (auto &o : next)
			dup = dup || !std::memcmp(o.addr, g, 16);
		if (dup)
			continue;
		Link::Other o;
		std::memcpy(o.addr, g, 16);
		for (auto &old : l.others)
			if (old.fd >= 0 && !std::memcmp(old.addr, g, 16)) {
				o.fd = old.fd;
				old.fd = -1; // kept
			}
		next.push_back(o);
	}
	link_close_others(l);
	for (auto &o : next) {
		if (o.fd < 0 && l.fd >= 0) {
			int fd = udp_socket_at(o.addr, l.port, d.netdev, false);
			epoll_event ev{};
			ev.events = EPOLLIN;
			ev.data.fd = fd;
			if (fd >= 0 && ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
				::close(fd);
				fd = -1;
			}
			if (fd >= 0) {
				o.fd = fd;
				link_fds_[fd] = l.index;
			}
		}
	}
	l.others = std::move(next);
}

void Daemon::link_close_others(Link &l)
{
	for (auto &o : l.others) {
		if (o.fd < 0)
			continue;
		::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, o.fd, nullptr);
		link_fds_.erase(o.fd);
		::close(o.fd);
	}
	l.others.clear();
}

void Daemon::link_forget(unsigned index)
{
	auto it = links_.find(index);
	if (it == links_.end())
		return;
	steer_reset(it->second);
	link_close_others(it->second);
	if (it->second.fd >= 0) {
		::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
		link_fds_.erase(it->second.fd);
		::close(it->second.fd);
	}
	for (auto q = wire_qps_.begin(); q != wire_qps_.end();)
		q = (q->first >> 32) == index ? wire_qps_.erase(q) : std::next(q);
	for (auto q = wire_standby_.begin(); q != wire_standby_.end();)
		q = (q->first >> 32) == index ? wire_standby_.erase(q) : std::next(q);
	links_.erase(it);
}

// Brings links_ in line with the core's RoCE devices (those of UABI_LINKS
// included) and their interfaces: GIDs, carrier, the bound address.
void Daemon::links_sync()
{
	for (unsigned i = 0; i < UABI_USER_MAX_DEVICES; i++) {
		uabi_user_device_info d;
		if (uabi_user_device_query(i, &d) || !d.roce) {
			link_forget(i);
			continue;
		}
		auto it = links_.find(i);
		if (it == links_.end()) {
			Link l;
			l.index = i;
			l.name = d.name;
			l.port = wire_port();
			it = links_.emplace(i, std::move(l)).first;
		}
		link_bind(it->second, d);
	}
}

// The address monitor: any change of a link or an address of this
// network namespace makes every device read its interface again.
void Daemon::monitor_open()
{
	nl_fd_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd_ < 0)
		return;
	sockaddr_nl sa{};
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = nl_fd_;
	if (::bind(nl_fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0 ||
	    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, nl_fd_, &ev) < 0) {
		LOG("address monitor: %s (GIDs are read again per context only)", std::strerror(errno));
		::close(nl_fd_);
		nl_fd_ = -1;
	}
}

void Daemon::on_monitor()
{
	// What changed does not matter: read everything again.  Only the
	// kernel (nl_pid 0) is listened to.
	alignas(nlmsghdr) char buf[8192];
	bool any = false;
	for (int i = 0; i < 64; i++) {
		sockaddr_nl from{};
		iovec iov{buf, sizeof(buf)};
		msghdr mh{};
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		ssize_t n = ::recvmsg(nl_fd_, &mh, MSG_DONTWAIT);
		if (n < 0 && errno == ENOBUFS) {
			any = true; // overrun: something changed
			continue;
		}
		if (n <= 0)
			break;
		if (from.nl_pid == 0)
			any = true;
	}
	if (any && !links_.empty())
		links_sync();
}

// Datagrams at a device's port, to the connections that own their QPs.
void Daemon::on_link_readable(int fd)
{
	auto li = link_fds_.find(fd);
	if (li == link_fds_.end())
		return;
	Link &l = links_.at(li->second);
	// The address this socket is bound to (the device's receive address,
	// or another of its addresses).
	const unsigned char *at = l.addr;
	for (auto &o : l.others)
		if (o.fd == fd)
			at = o.addr;
	static std::uint8_t bufs[kRelayBatch][kRelayBuf];
	sockaddr_storage from[kRelayBatch];
	alignas(cmsghdr) std::uint8_t ctl[kRelayBatch][128];
	iovec iov[kRelayBatch];
	mmsghdr msgs[kRelayBatch];
	for (int i = 0; i < kRelayBatch; i++) {
		iov[i] = {bufs[i], sizeof(bufs[i])};
		msgs[i] = {};
		msgs[i].msg_hdr.msg_name = &from[i];
		msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_control = ctl[i];
		msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
	}
	// A turn of at most four batches: the sockets of the other clients
	// wait meanwhile.
	for (int turn = 0; turn < 4; turn++) {
		int n = ::recvmmsg(fd, msgs, kRelayBatch, MSG_DONTWAIT, nullptr);
		if (n <= 0)
			return;
		for (int i = 0; i < n; i++) {
			if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				l.rx_dropped++;
				continue;
			}
			std::uint8_t unused[16];
			std::size_t seg = uabi::wire::read_cmsgs(&msgs[i].msg_hdr, unused);
			const std::size_t total = msgs[i].msg_len;
			if (!seg || seg > total)
				seg = total ? total : 1;
			for (std::size_t off = 0; off < total || (!total && !off); off += seg)
				relay_one(l, at, bufs[i] + off, std::min(seg, total - off), msgs[i].msg_hdr,
					  from[i]);
		}
		if (n < kRelayBatch)
			return;
	}
}

// One datagram of the port's socket (@mh: its control messages, @s: its
// source), to the connection that owns its QP, or to the CM (QP1).
void Daemon::relay_one(Link &l, const unsigned char *at, const std::uint8_t *b, std::size_t len,
		       const msghdr &mh0, const sockaddr_storage &s)
{
	// The BTH (12 bytes) and the ICRC at least; the rest is
	// the receiving process's to check.
	if (len < 16) {
		l.rx_dropped++;
		return;
	}
	std::uint32_t qpn = (std::uint32_t(b[5]) << 16) | (std::uint32_t(b[6]) << 8) | b[7];
	auto q = wire_qps_.find(qp_key(l.index, qpn));
	if (qpn != 1 && (q == wire_qps_.end() || q->second->relay < 0)) {
		l.rx_dropped++;
		return;
	}
	RelayHdr h{};
	if (s.ss_family == AF_INET6) {
		const auto *a = reinterpret_cast<const sockaddr_in6 *>(&s);
		h.v6 = 1;
		h.src_port = ntohs(a->sin6_port);
		std::memcpy(h.src, &a->sin6_addr, 16);
	} else {
		const auto *a = reinterpret_cast<const sockaddr_in *>(&s);
		h.src_port = ntohs(a->sin_port);
		std::memcpy(h.src, &a->sin_addr, 4);
	}
	h.dst_port = l.port;
	std::memcpy(h.dst, h.v6 ? at : at + 12, h.v6 ? 16 : 4);
	(void)uabi::wire::read_cmsgs(&mh0, h.dst);
	if (qpn == 1) {
		cm_input(l, b, len, h); // QP1: the CM's
		return;
	}
	iovec out[2] = {{&h, sizeof(h)}, {const_cast<std::uint8_t *>(b), len}};
	msghdr mh{};
	mh.msg_iov = out;
	mh.msg_iovlen = 2;
	// A process that does not read loses datagrams, as a
	// full receive queue on a NIC would: never waited for.
	if (::sendmsg(q->second->relay, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		l.rx_dropped++;
	else
		l.rx_relayed++;
}

bool Daemon::do_links(Conn &c)
{
	std::vector<LinkEntry> out;
	for (unsigned i = 0, pos = 0; i < UABI_USER_MAX_DEVICES; i++) {
		uabi_user_device_info d;
		if (uabi_user_device_query(i, &d))
			continue;
		LinkEntry e{};
		e.index = pos++;
		e.roce = d.roce ? 1 : 0;
		std::snprintf(e.name, sizeof(e.name), "%s", d.name);
		std::snprintf(e.netdev, sizeof(e.netdev), "%s", d.netdev);
		e.carrier = d.carrier;
		e.ip_mtu = d.ip_mtu;
		e.num_gids = d.num_gids;
		e.contexts = d.contexts;
		if (auto it = links_.find(i); it != links_.end()) {
			std::memcpy(e.addr, it->second.addr, 16);
			e.port = it->second.port;
			e.relay_error = it->second.bind_err;
			e.rx_relayed = it->second.rx_relayed;
			e.rx_dropped = it->second.rx_dropped;
			e.steering = it->second.steer ? 1 : 0;
			e.steered_qps = std::uint32_t(it->second.steered.size());
			e.steer_error = it->second.steer_err;
			e.qp1_in = it->second.qp1_in;
			e.qp1_refused = it->second.qp1_refused;
			uabi_cm_wire_stats st{};
			uabi_cm_wire_get_stats(&st);
			e.cm_taken = st.received;
			e.cm_dropped = st.dropped;
			e.cm_sent = st.sent;
			e.cm_resent = st.resent;
			e.cm_timed_out = st.timed_out;
		}
		out.push_back(e);
	}
	return admin_reply(c, kOpLinks, 0, out.data(), out.size() * sizeof(LinkEntry));
}

bool Daemon::do_link_change(Conn &c, std::uint16_t op, std::size_t n)
{
	// Devices are the daemon's: its owner and root change them.
	if (c.cred.uid != ::geteuid() && c.cred.uid != 0)
		return admin_reply(c, op, -EPERM, nullptr, 0);
	LinkRequest r{};
	if (n != sizeof(AdmHdr) + sizeof(r))
		return admin_reply(c, op, -EINVAL, nullptr, 0);
	std::memcpy(&r, buf_.data() + sizeof(AdmHdr), sizeof(r));
	if (!std::memchr(r.name, 0, sizeof(r.name)) || !std::memchr(r.netdev, 0, sizeof(r.netdev)))
		return admin_reply(c, op, -EINVAL, nullptr, 0);
	int ret;
	if (op == kOpLinkAdd) {
		ret = uabi_user_link_add(r.name, r.netdev);
		if (ret >= 0) {
			links_sync();
			auto it = links_.find(unsigned(ret));
			LOG("device %s added on %s by pid %d uid %u%s%s", r.name, r.netdev, int(c.cred.pid),
			    unsigned(c.cred.uid), it != links_.end() && it->second.bind_err ? ": " : "",
			    it != links_.end() && it->second.bind_err ? std::strerror(-it->second.bind_err)
								       : "");
			ret = 0;
		}
	} else {
		int index = -1;
		for (unsigned i = 0; i < UABI_USER_MAX_DEVICES && index < 0; i++) {
			uabi_user_device_info d;
			if (!uabi_user_device_query(i, &d) && !std::strcmp(d.name, r.name))
				index = int(i);
		}
		ret = uabi_user_link_del(r.name);
		if (!ret) {
			link_forget(unsigned(index));
			LOG("device %s deleted by pid %d uid %u", r.name, int(c.cred.pid), unsigned(c.cred.uid));
		}
	}
	return admin_reply(c, op, ret, nullptr, 0);
}

// Steering (docs/wire.md, "Devices on uabid: who receives"), on a private
// uabid only: whoever holds a member socket can replace the group's
// program, so all of them must belong to one user.  The group's members
// are uabid's sockets: it makes each one, passes a copy to one context at
// a time and never closes its own before the group ends, so that no
// member ever leaves and the kernel never renumbers the group behind the
// program.  A member serves contexts of the uid it first served only (root
// may be a private uabid's client too).
namespace {
constexpr std::size_t kMaxMembers = 32;	 // per device; then relayed only
constexpr std::size_t kMaxSteered = 128; // QPs per device in the program
} // namespace

// The program: the destination QPN (BTH bytes 5..7 of the UDP payload),
// compared with each steered QPN; no match (or a runt: a load past the end
// ends a classic program with 0) is index 0, uabid's socket.
int Daemon::steer_program(Link &l)
{
	std::vector<sock_filter> f;
	f.reserve(3 + 2 * l.steered.size());
	f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 5));
	f.push_back(BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 8));
	for (const auto &[qpn, index] : l.steered) {
		f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, qpn, 0, 1));
		f.push_back(BPF_STMT(BPF_RET | BPF_K, index));
	}
	f.push_back(BPF_STMT(BPF_RET | BPF_K, 0));
	sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
	if (::setsockopt(l.fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

// Installs the program for l.steered.  If that fails, steering stops and
// everything is relayed (members keep their places; nothing goes to them).
void Daemon::steer_update(Link &l)
{
	if (!l.steer || (l.steer_err = steer_program(l)) == 0)
		return;
	LOG("device %s: steering stopped (%s): every datagram is relayed", l.name.c_str(),
	    std::strerror(-l.steer_err));
	l.steered.clear();
	if (int e = steer_program(l))
		LOG("device %s: cannot reset the steering program: %s", l.name.c_str(), std::strerror(-e));
	l.steer = false;
}

// A member socket for @c: a free one of its uid, else a new one.  -errno
// when there is none to give (the context is then relayed only).
int Daemon::steer_member(Link &l, Conn &c)
{
	if (!l.steer)
		return -EOPNOTSUPP;
	std::size_t k = 0;
	while (k < l.members.size() && (l.members[k].owner || l.members[k].uid != c.cred.uid))
		k++;
	if (k == l.members.size()) {
		if (l.members.size() >= kMaxMembers)
			return -ENOSPC;
		uabi_user_device_info d;
		if (uabi_user_device_query(l.index, &d))
			return -ENODEV;
		int fd = udp_socket_at(l.addr, l.port, d.netdev, true);
		if (fd < 0)
			return fd;
		l.members.push_back({fd, nullptr, c.cred.uid});
	} else {
		// What its last context left unread is not this one's.
		std::uint8_t junk[64];
		for (int i = 0; i < 100000; i++)
			if (::recv(l.members[k].fd, junk, sizeof(junk), MSG_DONTWAIT | MSG_TRUNC) < 0)
				break;
	}
	l.members[k].owner = &c;
	c.member = int(k);
	return l.members[k].fd;
}

void Daemon::steer_release(Link &l, Conn &c)
{
	if (c.member < 0)
		return;
	const unsigned index = unsigned(c.member) + 1;
	bool changed = false;
	for (auto q = l.steered.begin(); q != l.steered.end();)
		if (q->second == index) {
			q = l.steered.erase(q);
			changed = true;
		} else {
			++q;
		}
	if (changed)
		steer_update(l);
	if (std::size_t(c.member) < l.members.size() && l.members[c.member].owner == &c)
		l.members[c.member].owner = nullptr;
	c.member = -1;
}

// The group ends (the address changed, the device goes): our copies are
// closed; contexts keep theirs, which no longer receive, and are relayed.
void Daemon::steer_reset(Link &l)
{
	for (SteerMember &m : l.members) {
		if (m.owner)
			m.owner->member = -1;
		::close(m.fd);
	}
	l.members.clear();
	l.steered.clear();
	l.steer = false;
}

bool Daemon::give_relay(Conn &c)
{
	auto it = links_.find(c.device);
	if (c.kind != Conn::Context || it == links_.end())
		return admin_reply(c, kOpWireRelay, -EOPNOTSUPP, nullptr, 0);
	if (it->second.fd < 0)
		return admin_reply(c, kOpWireRelay, it->second.bind_err ? it->second.bind_err : -EADDRNOTAVAIL,
				   nullptr, 0);
	// A new socket each time (an earlier one of this connection is
	// closed: its QPs' datagrams come here now).
	int sv[2];
	if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return admin_reply(c, kOpWireRelay, -errno, nullptr, 0);
	// Ours only sends: what the client writes into it is refused
	// (EPIPE), never queued here.
	::shutdown(sv[0], SHUT_RD);
	int buf = 4 << 20;
	if (::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0)
		::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (c.relay >= 0)
		::close(c.relay);
	c.relay = sv[0];
	steer_release(it->second, c);
	RelayReply r{};
	r.port = it->second.port;
	int fds[2] = {sv[1], steer_member(it->second, c)};
	if (fds[1] >= 0)
		r.flags |= kRelaySteered;
	AdmHdr h{kAdmMagic, std::uint32_t(sizeof(AdmHdr) + sizeof(r)), kProtoVersion, kOpWireRelay, 0, 0, 0};
	std::memcpy(buf_.data(), &h, sizeof(h));
	std::memcpy(buf_.data() + sizeof(h), &r, sizeof(r));
	bool ok = send_reply(c, buf_.data(), sizeof(h) + sizeof(r), fds, fds[1] >= 0 ? 2 : 1);
	::close(sv[1]);
	return ok;
}

bool Daemon::wire_bind(Conn &c, std::uint16_t op, std::uint32_t qpn)
{
	if (c.kind != Conn::Context || !links_.count(c.device) || c.relay < 0)
		return admin_reply(c, op, -EOPNOTSUPP, nullptr, 0);
	if (qpn > 0xffffff)
		return admin_reply(c, op, -EINVAL, nullptr, 0);
	const std::uint64_t key = qp_key(c.device, qpn);
	if (op == kOpWireUnbind) {
		auto it = wire_qps_.find(key);
		if (it != wire_qps_.end() && it->second == &c) {
			wire_promote(key);
			return admin_reply(c, op, 0, nullptr, 0);
		}
		auto sb = wire_standby_.find(key);
		auto at = sb == wire_standby_.end() ? decltype(sb->second)::iterator{}
						    : std::find(sb->second.begin(), sb->second.end(), &c);
		if (sb == wire_standby_.end() || at == sb->second.end())
			return admin_reply(c, op, -ENOENT, nullptr, 0);
		sb->second.erase(at);
		if (sb->second.empty())
			wire_standby_.erase(sb);
		return admin_reply(c, op, 0, nullptr, 0);
	}
	// Only a QP of this connection's own context: found among its
	// objects, never by the number alone.
	if (!holds_qp(c.ctx, qpn))
		return admin_reply(c, op, -ENOENT, nullptr, 0);
	auto it = wire_qps_.find(key);
	// Ours already: bound again, nothing changes (the holders waiting
	// their turn keep it).
	if (it != wire_qps_.end() && it->second == &c)
		return admin_reply(c, op, 0, nullptr, 0);
	// An XRC receive QP the owner still holds too: served by the owner,
	// this context next (standby).
	if (it != wire_qps_.end() && holds_qp(it->second->ctx, qpn)) {
		std::vector<Conn *> &sb = wire_standby_[key];
		if (std::find(sb.begin(), sb.end(), &c) == sb.end())
			sb.push_back(&c);
		return admin_reply(c, op, 0, nullptr, 0);
	}
	// A QPN another connection had bound (its QP is gone, the number
	// reused): ours now, in the program too.
	wire_standby_.erase(key);
	wire_qps_[key] = &c;
	Link &l = links_.at(c.device);
	if (l.steer) {
		l.steered.erase(qpn);
		if (c.member >= 0 && l.steered.size() < kMaxSteered)
			l.steered[qpn] = unsigned(c.member) + 1;
		steer_update(l);
	}
	return admin_reply(c, op, 0, nullptr, 0);
}

bool Daemon::holds_qp(uabi_context *ctx, std::uint32_t qpn)
{
	for (const uabi_object_info &o : objects_of(ctx))
		if (o.type == UABI_OBJ_QP && (o.qpn & 0xffffff) == qpn)
			return true;
	return false;
}

void Daemon::wire_promote(std::uint64_t key)
{
	const unsigned index = unsigned(key >> 32);
	const std::uint32_t qpn = std::uint32_t(key & 0xffffff);
	Conn *next = nullptr;
	if (auto sb = wire_standby_.find(key); sb != wire_standby_.end()) {
		// Bound but no longer holding it (a registration dropped
		// without an unbind): skipped.
		while (!sb->second.empty() && !next) {
			Conn *n = sb->second.front();
			sb->second.erase(sb->second.begin());
			if (n->relay >= 0 && holds_qp(n->ctx, qpn))
				next = n;
		}
		if (sb->second.empty())
			wire_standby_.erase(sb);
	}
	auto l = links_.find(index);
	if (!next) {
		wire_qps_.erase(key);
		if (l != links_.end() && l->second.steered.erase(qpn))
			steer_update(l->second);
		return;
	}
	wire_qps_[key] = next;
	if (l != links_.end() && l->second.steer) {
		l->second.steered.erase(qpn);
		if (next->member >= 0 && l->second.steered.size() < kMaxSteered)
			l->second.steered[qpn] = unsigned(next->member) + 1;
		steer_update(l->second);
	}
}

void Daemon::release_relay(Conn &c)
{
	for (auto sb = wire_standby_.begin(); sb != wire_standby_.end();) {
		std::erase(sb->second, &c);
		sb = sb->second.empty() ? wire_standby_.erase(sb) : std::next(sb);
	}
	std::vector<std::uint64_t> owned;
	for (const auto &q : wire_qps_)
		if (q.second == &c)
			owned.push_back(q.first);
	for (std::uint64_t key : owned)
		wire_promote(key);
	if (auto it = links_.find(c.device); it != links_.end())
		steer_release(it->second, c);
	c.member = -1;
	if (c.relay >= 0)
		::close(c.relay);
	c.relay = -1;
}

// ------------------------------------------------- the CM on QP1 (GSI)

namespace {

Daemon *g_cm_daemon;

int cm_send_hook(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
		 unsigned char tclass, const void *mad, unsigned len)
{
	return g_cm_daemon ? g_cm_daemon->cm_send(link, sgid, dgid, tclass, mad, len) : -ENODEV;
}

void cm_arm_hook(unsigned long long delay_ns)
{
	if (g_cm_daemon)
		g_cm_daemon->cm_arm(delay_ns);
}

const uabi_cm_wire_ops kCmOps = {cm_send_hook, cm_arm_hook};

unsigned env_uint(const char *name, unsigned dflt, unsigned max)
{
	const char *v = std::getenv(name);
	if (!v || !*v)
		return dflt;
	char *end = nullptr;
	unsigned long n = std::strtoul(v, &end, 10);
	return end && !*end && n <= max ? unsigned(n) : dflt;
}

} // namespace

// The core's CM gets uabid's links for QP1 and one timer.  Test knobs:
// UABI_CM_RESPONSE_TIMEOUT (0..31, 4.096 us * 2^t; 20 as Linux's
// rdma_cm), UABI_CM_RETRIES (0..15; 15) and UABI_CM_MRA_TIMEOUT (0..31;
// 24, the MRA's service timeout, as Linux's rdma_cm).
void Daemon::cm_open()
{
	cm_timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (cm_timer_fd_ < 0) {
		LOG("CM timer: %s (no CM across hosts)", std::strerror(errno));
		return;
	}
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = cm_timer_fd_;
	::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, cm_timer_fd_, &ev);
	uabi_cm_wire_set_timeouts(env_uint("UABI_CM_RESPONSE_TIMEOUT", 20, 31),
				  env_uint("UABI_CM_RETRIES", 15, 15));
	uabi_cm_wire_set_mra_timeout(env_uint("UABI_CM_MRA_TIMEOUT", 24, 31));
	g_cm_daemon = this;
	uabi_cm_wire_register(&kCmOps);
}

void Daemon::cm_arm(unsigned long long delay_ns)
{
	if (cm_timer_fd_ < 0)
		return;
	itimerspec t{};
	t.it_value.tv_sec = time_t(delay_ns / 1000000000ull);
	t.it_value.tv_nsec = long(delay_ns % 1000000000ull);
	::timerfd_settime(cm_timer_fd_, 0, &t, nullptr); // 0: disarmed
}

// A MAD of the core's CM, as RoCEv2 UD packet from QP1 to QP1 of @dgid:
// BTH, DETH (the GSI's Q_Key), the MAD, the ICRC; sent from the device's
// own socket (its address, port 4791), so the source is the address the
// peer answers to, with traffic class @tclass.
int Daemon::cm_send(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
		    unsigned char tclass, const void *mad, unsigned len)
{
	auto it = links_.find(link);
	if (it == links_.end() || it->second.fd < 0)
		return -ENETDOWN;
	Link &l = it->second;
	const bool v6 = !v4_mapped(dgid);
	// From the socket bound to @sgid: the device's receive address or
	// another of its addresses; none (gone, or not bound): lost.
	int fd = -1;
	if (!std::memcmp(sgid, l.addr, 16))
		fd = l.fd;
	for (auto &o : l.others)
		if (!std::memcmp(sgid, o.addr, 16))
			fd = o.fd;
	if (fd < 0 || v6 == v4_mapped(sgid))
		return -EADDRNOTAVAIL;
	namespace w = uabi::wire;
	l.qp1_psn = (l.qp1_psn + 1) & w::kPsnMask;
	w::Packet p = w::gsi_headers(l.qp1_psn);
	std::uint8_t buf[UABI_CM_MAD_SIZE + 64];
	w::Builder b(buf, sizeof(buf));
	if (len > UABI_CM_MAD_SIZE || !b.headers(p, len))
		return -EINVAL;
	std::memcpy(b.payload_room(len), mad, len);
	w::IpInfo ip;
	ip.v6 = v6;
	std::memcpy(ip.src, v6 ? sgid : sgid + 12, v6 ? 16 : 4);
	std::memcpy(ip.dst, v6 ? dgid : dgid + 12, v6 ? 16 : 4);
	ip.src_port = l.port;
	ip.dst_port = l.port;
	const std::size_t n = b.finish(ip);
	if (!n)
		return -EINVAL;
	w::PeerAddr to = w::PeerAddr::from_gid(dgid, l.port, l.ifindex);
	to.tclass = tclass;
	if (w::send_datagram(fd, buf, n, to) < 0)
		return -errno;
	return 0;
}

static_assert(UABI_CM_MAD_SIZE == uabi::wire::kGsiMadBytes);

// A datagram for QP1: the CM's if it is a whole UD SEND to the GSI (its
// ICRC right, the GSI's Q_Key, a MAD's worth of payload); otherwise
// refused and counted.  The MAD itself is the core's to judge.
void Daemon::cm_input(Link &l, const std::uint8_t *b, std::size_t len, const RelayHdr &h)
{
	namespace w = uabi::wire;
	w::IpInfo ip;
	ip.v6 = h.v6 != 0;
	std::memcpy(ip.src, h.src, ip.v6 ? 16 : 4);
	std::memcpy(ip.dst, h.dst, ip.v6 ? 16 : 4);
	ip.ip_id_unknown = !ip.v6;
	ip.src_port = h.src_port;
	ip.dst_port = h.dst_port;
	w::Packet p;
	unsigned char sgid[16], dgid[16];
	if (w::parse({b, len}, &ip, p) != w::ParseError::None || !w::gsi_datagram(p, ip, sgid, dgid)) {
		l.qp1_refused++;
		return;
	}
	l.qp1_in++;
	uabi_cm_wire_input(l.index, sgid, dgid, p.payload.data(), UABI_CM_MAD_SIZE);
}

} // namespace uabid
