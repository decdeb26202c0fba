// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The module's own RoCE device, checked from the inside (run-kroce.sh, in
// the qemu guest, as root): `uabi link`'s ioctls and their errnos; the
// in-kernel receive queue (the relay) handing a context the datagrams of
// its own bound QPs and of no one else's — not another context of the
// same user's, not uid 65534's, who can change no device either; runts
// and unbound QPNs dropped and counted; the device busy while a context
// is open on it.
//
// Usage: kroce_relay DEVICE IFNAME ADDRESS   (ADDRESS: the IPv4 address of
// IFNAME, where the module receives; DEVICE exists already)
//        kroce_relay --v6 DEVICE IFNAME ADDRESS6   (the device receives at
// ADDRESS6, an IPv6 address of IFNAME: one datagram's delivery)
// Prints one line per failed check; exit status 0 when none failed.
#include <uabi/client.hpp>
#include <uabi/transport.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace uabi;

namespace {

int failures = 0;

void check(bool ok, const std::string &what)
{
	if (!ok) {
		std::printf("kroce_relay: FAIL: %s\n", what.c_str());
		failures++;
	}
}

std::string errname(int e)
{
	return std::to_string(e) + " (" + std::strerror(e) + ")";
}

void check_err(int got, int want, const std::string &what)
{
	check(got == want, what + ": got " + errname(got) + ", want " + errname(want));
}

template <class R>
int err_of(const R &r)
{
	return r ? 0 : r.error();
}

// A datagram to ADDRESS:4791 whose BTH names @qpn, or @len bytes.
void send_datagram(in_addr to, std::uint32_t qpn, std::size_t len, std::uint8_t fill)
{
	std::vector<std::uint8_t> b(len, fill);
	if (len >= 8) {
		b[0] = 0x04; // RC SEND_ONLY
		b[5] = std::uint8_t(qpn >> 16);
		b[6] = std::uint8_t(qpn >> 8);
		b[7] = std::uint8_t(qpn);
	}
	int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(4791);
	a.sin_addr = to;
	check(::sendto(s, b.data(), b.size(), 0, reinterpret_cast<sockaddr *>(&a), sizeof(a)) ==
		      ssize_t(b.size()),
	      "sendto");
	::close(s);
}

// One datagram from a relay within @ms (false: none).
bool relay_recv(int fd, uabi_relay_hdr &h, std::vector<std::uint8_t> &out, int ms = 2000)
{
	pollfd p{fd, POLLIN, 0};
	if (::poll(&p, 1, ms) != 1)
		return false;
	std::uint8_t buf[5000];
	iovec iov[2] = {{&h, sizeof(h)}, {buf, sizeof(buf)}};
	ssize_t n = ::readv(fd, iov, 2);
	if (n < ssize_t(sizeof(h)))
		return false;
	out.assign(buf, buf + (n - sizeof(h)));
	return true;
}

QpCreate rc_qp(Ref pd, Ref cq)
{
	QpCreate q;
	q.pd = pd;
	q.send_cq = cq;
	q.recv_cq = cq;
	q.init.qp_type = UABI_QPT_RC;
	q.init.cap.max_send_wr = 4;
	q.init.cap.max_recv_wr = 4;
	q.init.cap.max_send_sge = 1;
	q.init.cap.max_recv_sge = 1;
	return q;
}

// The device's position and its entry.
bool find(const std::string &name, unsigned &pos, uabi_link_info &out)
{
	auto l = KernelTransport::links();
	if (!l)
		return false;
	for (const uabi_link_info &e : *l)
		if (name == e.name) {
			pos = e.index;
			out = e;
			return true;
		}
	return false;
}

// In a child as uid 65534: its own context on the device may not bind or
// unbind @qpn, nor change any device.  0: all as expected.
int as_nobody(unsigned pos, std::uint32_t qpn, const std::string &dev, const std::string &ifname)
{
	if (setgroups(0, nullptr) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return 90;
	auto t = KernelTransport::open_device(pos);
	if (!t)
		return 1;
	std::uint16_t port = 0;
	auto r = (*t)->wire_relay(&port);
	if (!r)
		return 2;
	if ((*t)->wire_bind(qpn, true) != ENOENT)
		return 3;
	if ((*t)->wire_bind(qpn, false) != ENOENT)
		return 4;
	if (err_of(KernelTransport::link_add("x", ifname)) != EPERM)
		return 5;
	if (err_of(KernelTransport::link_del(dev)) != EPERM)
		return 6;
	// Nothing of root's reaches this relay.
	uabi_relay_hdr h{};
	std::vector<std::uint8_t> got;
	if (relay_recv(*r, h, got, 300))
		return 7;
	::close(*r);
	return 0;
}

// IPv6: the device receives at @a6 (its link-local address on @ifname,
// having no IPv4 one): a datagram to our bound QP arrives with IPv6
// addresses in its header.  0: as expected.
int v6_delivery(const std::string &dev, const in6_addr &a6, const std::string &ifname)
{
	unsigned pos = 0;
	uabi_link_info info{};
	if (!find(dev, pos, info))
		return 1;
	auto t = KernelTransport::open_device(pos);
	if (!t)
		return 2;
	KernelTransport *kt = t->get();
	Context c(std::move(*t));
	auto pd = c.alloc_pd();
	auto cq = c.create_cq(4);
	if (!pd || !cq)
		return 3;
	auto qp = c.create_qp(rc_qp(*pd, cq->handle));
	if (!qp)
		return 4;
	std::uint16_t port = 0;
	auto relay = kt->wire_relay(&port);
	if (!relay || kt->wire_bind(qp->resp.qpn, true))
		return 5;
	std::vector<std::uint8_t> b(80, 0x61);
	b[0] = 0x04;
	b[5] = std::uint8_t(qp->resp.qpn >> 16);
	b[6] = std::uint8_t(qp->resp.qpn >> 8);
	b[7] = std::uint8_t(qp->resp.qpn);
	int s = ::socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sockaddr_in6 a{};
	a.sin6_family = AF_INET6;
	a.sin6_port = htons(4791);
	a.sin6_addr = a6;
	a.sin6_scope_id = if_nametoindex(ifname.c_str());
	if (::sendto(s, b.data(), b.size(), 0, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 80)
		return 6;
	::close(s);
	uabi_relay_hdr h{};
	std::vector<std::uint8_t> got;
	if (!relay_recv(*relay, h, got))
		return 7;
	if (got.size() != 80 || got[79] != 0x61 || h.v6 != 1 || h.dst_port != 4791 ||
	    std::memcmp(h.dst, &a6, 16) || std::memcmp(h.src, &a6, 16))
		return 8;
	::close(*relay);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc == 5 && std::string(argv[1]) == "--v6") {
		in6_addr a6{};
		if (inet_pton(AF_INET6, argv[4], &a6) != 1)
			return 2;
		int r = v6_delivery(argv[2], a6, argv[3]);
		std::printf("kroce_relay: IPv6 delivery %s (%d)\n", r ? "FAIL" : "PASS", r);
		return r ? 1 : 0;
	}
	if (argc != 4) {
		std::fprintf(stderr, "usage: kroce_relay DEVICE IFNAME ADDRESS\n");
		return 2;
	}
	const std::string dev = argv[1], ifname = argv[2];
	in_addr addr{};
	if (inet_pton(AF_INET, argv[3], &addr) != 1) {
		std::fprintf(stderr, "kroce_relay: bad address %s\n", argv[3]);
		return 2;
	}
	unsigned pos = 0;
	uabi_link_info info{};
	if (!find(dev, pos, info)) {
		std::printf("kroce_relay: FAIL: no device %s in the module's list\n", dev.c_str());
		return 1;
	}
	check(info.roce == 1 && ifname == info.netdev, "the device is a RoCE one on " + ifname);
	check(info.relay_error == 0 && info.port == 4791 && !std::memcmp(info.addr + 12, &addr, 4),
	      "the device receives at " + std::string(argv[3]) + ":4791 (error " +
		      std::to_string(info.relay_error) + ")");

	// `uabi link` errors (the device exists already).
	check_err(err_of(KernelTransport::link_add(dev, ifname)), EEXIST, "add an existing name");
	check_err(err_of(KernelTransport::link_add("kr_none", "nosuchif0")), ENODEV, "add on no interface");
	check_err(err_of(KernelTransport::link_add("bad/name", ifname)), EINVAL, "add a bad name");
	check_err(err_of(KernelTransport::link_add("..", ifname)), EINVAL, "add \"..\"");
	check_err(err_of(KernelTransport::link_del("uabi_sw0")), EOPNOTSUPP, "delete uabi_sw0");
	check_err(err_of(KernelTransport::link_del("kr_none")), ENODEV, "delete no device");
	{
		// The registry has four slots: uabi_sw0, DEVICE and two more.
		std::vector<std::string> made;
		int e = 0;
		for (int i = 0; i < 4 && !e; i++) {
			std::string n = "kr_fill" + std::to_string(i);
			e = err_of(KernelTransport::link_add(n, "lo"));
			if (!e)
				made.push_back(n);
		}
		check_err(e, ENOSPC, "add past the registry's slots");
		for (const std::string &n : made)
			check_err(err_of(KernelTransport::link_del(n)), 0, "delete " + n);
	}
	check_err(err_of(KernelTransport::open_device(99)), ENODEV, "open device 99");

	auto t = KernelTransport::open_device(pos);
	if (!t) {
		std::printf("kroce_relay: FAIL: open %s: %s\n", dev.c_str(), std::strerror(t.error()));
		return 1;
	}
	KernelTransport *kt = t->get();
	Context c(std::move(*t));
	auto q = c.query_port(1);
	check(q && q->link_layer == UABI_LINK_LAYER_ETHERNET, "link layer Ethernet");
	auto pd = c.alloc_pd();
	auto cq = c.create_cq(4);
	if (!pd || !cq) {
		std::printf("kroce_relay: FAIL: pd/cq\n");
		return 1;
	}
	auto qp = c.create_qp(rc_qp(*pd, cq->handle));
	if (!qp) {
		std::printf("kroce_relay: FAIL: qp: %s\n", std::strerror(qp.error()));
		return 1;
	}
	const std::uint32_t qpn = qp->resp.qpn;
	{
		std::uint32_t p0 = 0;
		check(::ioctl(kt->fd(), UABI_IOCTL_OPEN_DEVICE, &p0) < 0 && errno == EBUSY,
		      "OPEN_DEVICE after a command: EBUSY");
	}
	check_err(kt->wire_bind(qpn, true), EOPNOTSUPP, "bind before the relay");
	std::uint16_t port = 0;
	auto relay = kt->wire_relay(&port);
	if (!relay) {
		std::printf("kroce_relay: FAIL: relay: %s\n", std::strerror(relay.error()));
		return 1;
	}
	check(port == 4791, "the relay's port is 4791");
	check_err(kt->wire_bind(qpn + 1000, true), ENOENT, "bind a QP that is not ours");
	check_err(kt->wire_bind(1u << 24, true), EINVAL, "bind a QPN above 24 bits");
	check_err(kt->wire_bind(qpn, true), 0, "bind our QP");

	// Ours arrives with its addresses; an unbound QPN and a runt are
	// dropped and counted.
	send_datagram(addr, qpn, 100, 0x5a);
	uabi_relay_hdr h{};
	std::vector<std::uint8_t> got;
	bool ok = relay_recv(*relay, h, got);
	check(ok && got.size() == 100 && got[99] == 0x5a, "our datagram arrives whole");
	check(ok && h.v6 == 0 && h.dst_port == 4791 && !std::memcmp(h.dst, &addr, 4) &&
		      !std::memcmp(h.src, &addr, 4) && h.src_port != 0,
	      "its relay header");
	find(dev, pos, info);
	const auto before = info.rx_dropped;
	send_datagram(addr, qpn + 1, 100, 0);
	send_datagram(addr, qpn, 8, 0);
	check(!relay_recv(*relay, h, got, 300), "nothing else arrives");
	find(dev, pos, info);
	check(info.rx_dropped == before + 2,
	      "the two drops are counted (" + std::to_string(info.rx_dropped - before) + ")");
	// The relay is read-only.
	char x = 0;
	check(::write(*relay, &x, 1) < 0, "the relay refuses writes");

	// Another context of the same user, and uid 65534: neither binds ours.
	{
		auto o = KernelTransport::open_device(pos);
		check(bool(o), "a second context");
		if (o) {
			std::uint16_t p2;
			auto r2 = (*o)->wire_relay(&p2);
			check(bool(r2), "its relay");
			check_err((*o)->wire_bind(qpn, true), ENOENT, "another context binds our QP");
			check_err((*o)->wire_bind(qpn, false), ENOENT, "another context unbinds our QP");
			// Nor may we bind to its relay, or to a file that is none.
			if (r2) {
				uabi_wire_bind b{qpn, 1, *r2, 0};
				check(::ioctl(kt->fd(), UABI_IOCTL_WIRE_BIND, &b) < 0 && errno == EBADF,
				      "bind to another context's relay: EBADF");
				b.relay_fd = 0;
				check(::ioctl(kt->fd(), UABI_IOCTL_WIRE_BIND, &b) < 0 && errno == EBADF,
				      "bind to a file that is no relay: EBADF");
				b.relay_fd = *relay;
				b.reserved = 1;
				check(::ioctl(kt->fd(), UABI_IOCTL_WIRE_BIND, &b) < 0 && errno == EINVAL,
				      "bind with reserved bits: EINVAL");
				::close(*r2);
			}
		}
	}
	pid_t child = ::fork();
	if (child == 0)
		::_exit(as_nobody(pos, qpn, dev, ifname));
	int st = 0;
	::waitpid(child, &st, 0);
	check(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "uid 65534 cannot bind our QP nor change devices (step " +
		      std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ")");
	// Still ours; the device is busy while we are open.
	send_datagram(addr, qpn, 64, 0x33);
	check(relay_recv(*relay, h, got) && got.size() == 64, "still delivered to us");
	check_err(err_of(KernelTransport::link_del(dev)), EBUSY, "delete while a context is open");
	check_err(kt->wire_bind(qpn, false), 0, "unbind");
	check_err(kt->wire_bind(qpn, false), ENOENT, "unbind again");
	send_datagram(addr, qpn, 64, 0x44);
	check(!relay_recv(*relay, h, got, 300), "unbound: no longer delivered");
	// A second relay of the context (as a process that imported it makes):
	// a queue of its own, which the QP moves to when bound there.
	std::uint16_t port2 = 0;
	auto relay2 = kt->wire_relay(&port2);
	check(bool(relay2), "a second relay");
	check_err(kt->wire_bind(qpn, true), 0, "bind to the second relay");
	send_datagram(addr, qpn, 64, 0x66);
	check(relay2 && relay_recv(*relay2, h, got) && got.size() == 64 && got[0] == 0x04,
	      "the second relay gets it");
	check(!relay_recv(*relay, h, got, 300), "the first does not");
	if (relay2)
		::close(*relay2);
	// Bound again, then the context closes with the relay still open:
	// nothing more arrives, and the device is free again.
	{
		uabi_wire_bind b{qpn, 1, *relay, 0};
		check(::ioctl(kt->fd(), UABI_IOCTL_WIRE_BIND, &b) == 0, "bind to the first again");
	}
	int keep = *relay;
	{
		Context gone(std::move(c));
	}
	send_datagram(addr, qpn, 64, 0x55);
	check(!relay_recv(keep, h, got, 300), "closed context: no longer delivered");
	::close(keep);
	std::printf("kroce_relay: %s (%d failed)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
