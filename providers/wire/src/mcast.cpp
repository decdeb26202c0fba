// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// UD multicast on the wire (docs/wire.md, "UD multicast"): a multicast GID
// names an IP multicast group (RoCEv2: ::ffff:224.0.0.0/100 an IPv4 group,
// ff00::/8 an IPv6 one).  An endpoint joins the group of every GID one of
// its QPs is attached to with a socket of its own, bound to the group's
// address and the RoCEv2 port (so it receives that group's datagrams and
// nothing else), and hands each datagram to destination QP 0xFFFFFF to
// every QP attached to the group it came to, each its own copy.
#include <uabi/wire/engine.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

namespace uabi::wire {

namespace {

// The group @mgid names: false if none.  @v6 says which family it is
// (an IPv4 group's address is the first four bytes of @out).
bool group_of(const std::uint8_t mgid[16], bool &v6, std::uint8_t out[16])
{
	static const std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	std::memset(out, 0, 16);
	if (!std::memcmp(mgid, mapped, sizeof(mapped))) {
		if ((mgid[12] & 0xf0) != 0xe0)
			return false;
		v6 = false;
		std::memcpy(out, mgid + 12, 4);
		return true;
	}
	if (mgid[0] != 0xff)
		return false;
	v6 = true;
	std::memcpy(out, mgid, 16);
	return true;
}

// The index of the interface that holds @local's address (0: none known).
unsigned ifindex_of(const PeerAddr &local)
{
	if (local.v6()) {
		auto *a6 = reinterpret_cast<const sockaddr_in6 *>(&local.ss);
		if (a6->sin6_scope_id)
			return a6->sin6_scope_id;
	}
	ifaddrs *ifa = nullptr;
	unsigned idx = 0;
	if (getifaddrs(&ifa))
		return 0;
	for (ifaddrs *a = ifa; a && !idx; a = a->ifa_next) {
		if (!a->ifa_addr || a->ifa_addr->sa_family != local.ss.ss_family)
			continue;
		bool same = local.v6() ? !std::memcmp(&reinterpret_cast<sockaddr_in6 *>(a->ifa_addr)->sin6_addr,
						      &reinterpret_cast<const sockaddr_in6 *>(&local.ss)->sin6_addr, 16)
				       : reinterpret_cast<sockaddr_in *>(a->ifa_addr)->sin_addr.s_addr ==
						 reinterpret_cast<const sockaddr_in *>(&local.ss)->sin_addr.s_addr;
		if (same)
			idx = if_nametoindex(a->ifa_name);
	}
	freeifaddrs(ifa);
	return idx;
}

// A socket bound to group @ip (of family @v6) at @port that joined it on
// interface @ifindex, whichever family the device's own address is.
int join(const std::uint8_t ip[16], bool v6, std::uint16_t port, unsigned ifindex)
{
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1, err = 0;
	// Every endpoint of the host that joined the group gets a copy.
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	int buf = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (!v6) {
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		sockaddr_in a{};
		a.sin_family = AF_INET;
		a.sin_port = htons(port);
		std::memcpy(&a.sin_addr, ip, 4);
		ip_mreqn m{};
		std::memcpy(&m.imr_multiaddr, ip, 4);
		m.imr_ifindex = int(ifindex);
		if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)) < 0)
			err = errno;
	} else {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
		sockaddr_in6 a{};
		a.sin6_family = AF_INET6;
		a.sin6_port = htons(port);
		std::memcpy(&a.sin6_addr, ip, 16);
		a.sin6_scope_id = ifindex;
		ipv6_mreq m{};
		std::memcpy(&m.ipv6mr_multiaddr, ip, 16);
		m.ipv6mr_interface = ifindex;
		if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0 ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m)) < 0)
			err = errno;
	}
	if (err) {
		close(fd);
		return -err;
	}
	return fd;
}

} // namespace

// Multicast sends leave through the device's interface (not wherever the
// routing table sends a group) and come back to this host's members too:
// set on every socket the endpoint sends from (@fd, bound to @local), so
// that a group of either family can be sent to from the device's first
// address of that family.
void Endpoint::mcast_send_setup(int fd, const PeerAddr &local)
{
	if (local.v6()) {
		int idx = int(ifindex_of(local));
		if (idx)
			setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &idx, sizeof(idx));
	} else {
		in_addr a = reinterpret_cast<const sockaddr_in *>(&local.ss)->sin_addr;
		setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &a, sizeof(a));
	}
}

int Endpoint::attach_mcast(const std::uint8_t mgid[16], std::uint16_t port, std::uint32_t qpn)
{
	std::uint8_t ip[16];
	bool v6 = false;
	if (!group_of(mgid, v6, ip))
		return EINVAL;
	qpn &= kQpnMask;
	std::lock_guard<std::mutex> g(mc_lock_);
	for (Group &gr : groups_)
		if (!std::memcmp(gr.ip, ip, 16)) {
			if (std::find(gr.qpns.begin(), gr.qpns.end(), qpn) == gr.qpns.end())
				gr.qpns.push_back(qpn);
			return 0;
		}
	int fd = join(ip, v6, port, ifindex_of(local_));	// 0: the route's
	if (fd < 0)
		return -fd;
	Group gr;
	std::memcpy(gr.ip, ip, 16);
	gr.fd = fd;
	gr.qpns.push_back(qpn);
	groups_.push_back(std::move(gr));
	wake();	// the receive thread polls the new socket from now on
	return 0;
}

int Endpoint::detach_mcast(const std::uint8_t mgid[16], std::uint32_t qpn)
{
	std::uint8_t ip[16];
	bool v6 = false;
	if (!group_of(mgid, v6, ip))
		return ENOENT;
	qpn &= kQpnMask;
	std::lock_guard<std::mutex> g(mc_lock_);
	for (auto it = groups_.begin(); it != groups_.end(); ++it) {
		if (std::memcmp(it->ip, ip, 16))
			continue;
		auto q = std::find(it->qpns.begin(), it->qpns.end(), qpn);
		if (q == it->qpns.end())
			return ENOENT;
		it->qpns.erase(q);
		if (it->qpns.empty()) {
			// Closing the socket leaves the group; the receive thread
			// may be polling it, so it closes it.
			dead_fds_.push_back(it->fd);
			groups_.erase(it);
			wake();
		}
		return 0;
	}
	return ENOENT;
}

void Endpoint::detach_all_mcast(std::uint32_t qpn)
{
	std::lock_guard<std::mutex> g(mc_lock_);
	for (auto it = groups_.begin(); it != groups_.end();) {
		it->qpns.erase(std::remove(it->qpns.begin(), it->qpns.end(), qpn), it->qpns.end());
		if (it->qpns.empty()) {
			dead_fds_.push_back(it->fd);
			it = groups_.erase(it);
			wake();
		} else {
			++it;
		}
	}
}

void Endpoint::group_fds(std::vector<int> &out)
{
	std::lock_guard<std::mutex> g(mc_lock_);
	for (int fd : dead_fds_)
		close(fd);
	dead_fds_.clear();
	for (const Group &gr : groups_)
		out.push_back(gr.fd);
}

void Endpoint::receive_group(int fd)
{
	{
		// Left since the poll began (its last QP detached): what it
		// holds is no longer this endpoint's; the socket closes on the
		// next turn of the receive thread.
		std::lock_guard<std::mutex> g(mc_lock_);
		if (std::find(dead_fds_.begin(), dead_fds_.end(), fd) != dead_fds_.end())
			return;
	}
	alignas(8) static thread_local std::uint8_t buf[4096 + 256 + 64];
	for (int n = 0; n < 32; n++) {
		sockaddr_storage from{};
		alignas(cmsghdr) std::uint8_t ctl[64];
		iovec iov = {buf, sizeof(buf)};
		msghdr m{};
		m.msg_name = &from;
		m.msg_namelen = sizeof(from);
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = ctl;
		m.msg_controllen = sizeof(ctl);
		ssize_t got = recvmsg(fd, &m, MSG_DONTWAIT);
		if (got < 0)
			break;
		std::lock_guard<std::mutex> g(qps_lock_);
		{
			// Left while this loop ran (its last QP detached, the
			// socket not closed yet): what it reads now is no longer
			// this endpoint's, as if the socket were closed already.
			// (Seen: a datagram sent right after the detach counted
			// here, under load.)  qps_lock_, then mc_lock_: the
			// order detach_all_mcast() takes them in.
			std::lock_guard<std::mutex> mg(mc_lock_);
			if (std::find(dead_fds_.begin(), dead_fds_.end(), fd) != dead_fds_.end())
				return;
		}
		counters_.rx_packets.fetch_add(1, std::memory_order_relaxed);
		if (m.msg_flags & MSG_TRUNC) {
			counters_.rx_malformed.fetch_add(1, std::memory_order_relaxed);
			continue;
		}
		PeerAddr src = PeerAddr::from(reinterpret_cast<sockaddr *>(&from), m.msg_namelen);
		IpInfo ip;
		ip.v6 = src.v6();
		ip.ip_id_unknown = !ip.v6;
		if (ip.v6) {
			auto *a = reinterpret_cast<sockaddr_in6 *>(&from);
			std::memcpy(ip.src, &a->sin6_addr, 16);
			ip.src_port = ntohs(a->sin6_port);
		} else {
			auto *a = reinterpret_cast<sockaddr_in *>(&from);
			std::memcpy(ip.src, &a->sin_addr, 4);
			ip.src_port = ntohs(a->sin_port);
		}
		// The group's address and port, as the ICRC covers them.
		sockaddr_storage me{};
		socklen_t mlen = sizeof(me);
		getsockname(fd, reinterpret_cast<sockaddr *>(&me), &mlen);
		ip.dst_port = ntohs(me.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 *>(&me)->sin6_port
							     : reinterpret_cast<sockaddr_in *>(&me)->sin_port);
		(void)read_cmsgs(&m, ip.dst);
		deliver({buf, std::size_t(got)}, src, ip);
		flush_acks();
	}
}

// A datagram to QP 0xFFFFFF: a copy for every QP attached to the group it
// was sent to (each checks its Q_Key and needs a receive WQE, as for any
// UD datagram).  Called with qps_lock_ held.
void Endpoint::deliver_mcast(const Packet &p, const PeerAddr &from, const IpInfo &ip)
{
	if (transport_of(p.bth.opcode) != kUd) {
		counters_.rx_malformed.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	std::vector<std::uint32_t> qpns;
	{
		std::lock_guard<std::mutex> g(mc_lock_);
		for (const Group &gr : groups_)
			if (!std::memcmp(gr.ip, ip.dst, ip.v6 ? 16 : 4))
				qpns = gr.qpns;
	}
	// From one of this endpoint's own sockets: the sender is one of its QPs.
	const bool ours = sent_by_us(from);
	bool any = false;
	for (std::uint32_t n : qpns) {
		auto it = qps_.find(n);
		if (it == qps_.end() || it->second->type() != kQptUd)
			continue;
		any = true;
		if (ours && n == p.deth.src_qp && it->second->block_self_mc_)
			continue;	// IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
		std::lock_guard<std::mutex> q(it->second->lock_);
		it->second->on_ud_locked(p, from, ip);
	}
	if (!any)
		counters_.rx_no_qp.fetch_add(1, std::memory_order_relaxed);
}

bool Endpoint::sent_by_us(const PeerAddr &from) const
{
	auto same = [&from](const PeerAddr &l) {
		if (!from.same_ip(l))
			return false;
		return from.v6() ? reinterpret_cast<const sockaddr_in6 *>(&from.ss)->sin6_port ==
					   reinterpret_cast<const sockaddr_in6 *>(&l.ss)->sin6_port
				 : reinterpret_cast<const sockaddr_in *>(&from.ss)->sin_port ==
					   reinterpret_cast<const sockaddr_in *>(&l.ss)->sin_port;
	};
	if (same(local_))
		return true;
	for (unsigned i = 0, n = nsrc_.load(std::memory_order_acquire); i < n; i++)
		if (same(srcs_[i].local))
			return true;
	return false;
}

} // namespace uabi::wire
