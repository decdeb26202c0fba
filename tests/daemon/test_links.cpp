// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// RoCE devices on uabid (docs/wire.md, "Devices on uabid"): `uabi link`'s
// admin requests and their errors, contexts on a RoCE device, and the
// relay of the device's port — which hands a process the datagrams of its
// own QPs and of no one else's, also when the other is another uid.
#include "daemon_harness.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace uabi::dtest {
namespace {

constexpr uid_t kNobody = 65534;

// A port of its own per test run, so that no other uabid (or test) holds it.
std::string test_port()
{
	std::random_device rd;
	return std::to_string(20000 + rd() % 20000);
}

Child as_nobody(std::function<int()> fn)
{
	return Child([fn](int, int) {
		if (setgroups(0, nullptr) < 0 || setgid(kNobody) < 0 || setuid(kNobody) < 0)
			return 90;
		return fn();
	});
}

// A datagram to 127.0.0.1:port whose BTH names @qpn (the rest is not
// uabid's to check), or @len bytes of anything.
void send_datagram(std::uint16_t port, std::uint32_t qpn, std::size_t len, std::uint8_t fill)
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
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(::sendto(s, b.data(), b.size(), 0, reinterpret_cast<sockaddr *>(&a), sizeof(a)),
		  ssize_t(b.size()));
	::close(s);
}

// One datagram from a relay within @ms: its header and bytes (false: none).
bool relay_recv(int fd, daemon::RelayHdr &h, std::vector<std::uint8_t> &out, int ms = 2000)
{
	pollfd p{fd, POLLIN, 0};
	if (::poll(&p, 1, ms) != 1)
		return false;
	std::uint8_t buf[5000];
	iovec iov[2] = {{&h, sizeof(h)}, {buf, sizeof(buf)}};
	msghdr mh{};
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	ssize_t n = ::recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < ssize_t(sizeof(h)))
		return false;
	out.assign(buf, buf + (n - sizeof(h)));
	return true;
}

class LinkTest : public DaemonTest {
protected:
	void start(const std::vector<std::string> &args = {})
	{
		port_ = test_port();
		start_daemon(args, {"UABI_WIRE_PORT=" + port_});
	}
	std::vector<daemon::LinkEntry> links()
	{
		auto l = daemon::query_links(*admin());
		EXPECT_TRUE(l);
		return l ? *l : std::vector<daemon::LinkEntry>{};
	}
	Context open_on(unsigned device)
	{
		auto t = DaemonTransport::open(paths(), false, device);
		if (!t) {
			ADD_FAILURE() << "open device " << device << ": " << std::strerror(t.error());
			std::abort();
		}
		return Context(std::move(*t));
	}
	std::string port_;
};

TEST_F(LinkTest, AddListDeleteAndTheirErrors)
{
	start();
	auto a = admin();
	ASSERT_TRUE(a);
	// A fresh uabid has uabi_sw0 alone.
	auto l = links();
	ASSERT_EQ(l.size(), 1u);
	EXPECT_STREQ(l[0].name, "uabi_sw0");
	EXPECT_EQ(l[0].roce, 0u);

	ASSERT_TRUE(daemon::link_add(*a, "roce_lo", "lo"));
	l = links();
	ASSERT_EQ(l.size(), 2u);
	EXPECT_STREQ(l[1].name, "roce_lo");
	EXPECT_STREQ(l[1].netdev, "lo");
	EXPECT_EQ(l[1].roce, 1u);
	EXPECT_EQ(l[1].carrier, 1u);
	EXPECT_GE(l[1].num_gids, 1u); // 127.0.0.1 (and ::1)
	EXPECT_EQ(l[1].relay_error, 0);
	EXPECT_EQ(std::to_string(l[1].port), port_);
	const std::uint8_t lo4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
	EXPECT_EQ(std::memcmp(l[1].addr, lo4, 16), 0) << "receives at 127.0.0.1";

	EXPECT_EQ(daemon::link_add(*a, "roce_lo", "lo").error(), EEXIST);
	EXPECT_EQ(daemon::link_add(*a, "uabi_sw0", "lo").error(), EEXIST);
	EXPECT_EQ(daemon::link_add(*a, "r1", "no-such-if0").error(), ENODEV);
	EXPECT_EQ(daemon::link_add(*a, "a/b", "lo").error(), EINVAL);
	EXPECT_EQ(daemon::link_add(*a, "..", "lo").error(), EINVAL);
	EXPECT_EQ(daemon::link_add(*a, "r1", "../lo").error(), EINVAL);
	EXPECT_EQ(daemon::link_del(*a, "uabi_sw0").error(), EOPNOTSUPP);
	EXPECT_EQ(daemon::link_del(*a, "nosuch").error(), ENODEV);
	// Room for three beside uabi_sw0.  (The port of the second and third
	// is held by the first: they say so and still exist.)
	ASSERT_TRUE(daemon::link_add(*a, "r2", "lo"));
	ASSERT_TRUE(daemon::link_add(*a, "r3", "lo"));
	EXPECT_EQ(daemon::link_add(*a, "r4", "lo").error(), ENOSPC);
	l = links();
	ASSERT_EQ(l.size(), 4u);
	EXPECT_EQ(l[2].relay_error, -EADDRINUSE);
	ASSERT_TRUE(daemon::link_del(*a, "r2"));
	ASSERT_TRUE(daemon::link_del(*a, "r3"));

	// A context on the device: Ethernet, busy while open.
	{
		Context c = open_on(1);
		auto port = c.query_port(1);
		ASSERT_TRUE(port);
		EXPECT_EQ(port->link_layer, UABI_LINK_LAYER_ETHERNET);
		EXPECT_EQ(links()[1].contexts, 1u);
		EXPECT_EQ(daemon::link_del(*a, "roce_lo").error(), EBUSY);
	}
	EXPECT_TRUE(eventually([&] { return links()[1].contexts == 0; }));
	ASSERT_TRUE(daemon::link_del(*a, "roce_lo"));
	EXPECT_EQ(links().size(), 1u);
	// No such device: the hello says so.
	auto t = DaemonTransport::open(paths(), false, 5);
	EXPECT_FALSE(t);
	EXPECT_EQ(t.error(), ENODEV);
	// uabid serves on.
	EXPECT_TRUE(open_on(0).alloc_pd());
}

TEST_F(LinkTest, TheRelayCarriesOwnQpsOnly)
{
	ASSERT_EQ(geteuid(), 0u) << "needs root to switch to uid 65534";
	start({"--shared"});
	ASSERT_TRUE(daemon::link_add(*admin(), "roce_lo", "lo"));
	ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);

	Context c = open_on(1);
	auto pd = c.alloc_pd();
	auto cq = c.create_cq(4);
	ASSERT_TRUE(pd && cq);
	auto qp = c.create_qp(rc_qp(*pd, cq->handle));
	ASSERT_TRUE(qp);
	const std::uint32_t qpn = qp->resp.qpn;

	// Binding needs a relay first, and only a context connection has one.
	EXPECT_EQ(c.transport().wire_bind(qpn, true), EOPNOTSUPP);
	std::uint16_t port = 0;
	int steered = 0;
	auto relay = c.transport().wire_relay(&port, &steered);
	ASSERT_TRUE(relay);
	EXPECT_EQ(std::to_string(port), port_);
	// A shared uabid steers nothing: its clients are several users, and any
	// member of a reuseport group may replace the group's program.
	EXPECT_EQ(steered, -1);
	EXPECT_EQ(c.transport().wire_bind(qpn + 1000, true), ENOENT) << "a QP that is not ours";
	EXPECT_EQ(c.transport().wire_bind(1u << 24, true), EINVAL);
	ASSERT_EQ(c.transport().wire_bind(qpn, true), 0);

	// A datagram for our QP arrives with its addresses; one for a QP no
	// one bound, and a runt, are dropped and counted.
	send_datagram(port, qpn, 100, 0x5a);
	daemon::RelayHdr h{};
	std::vector<std::uint8_t> got;
	ASSERT_TRUE(relay_recv(*relay, h, got));
	ASSERT_EQ(got.size(), 100u);
	EXPECT_EQ(got[99], 0x5a);
	EXPECT_EQ(h.v6, 0);
	EXPECT_EQ(h.dst_port, port);
	EXPECT_EQ(h.src[0], 127);
	EXPECT_EQ(h.dst[0], 127);
	const auto before = links()[1].rx_dropped;
	send_datagram(port, qpn + 1, 100, 0);
	send_datagram(port, qpn, 8, 0);
	EXPECT_FALSE(relay_recv(*relay, h, got, 300));
	EXPECT_TRUE(eventually([&] { return links()[1].rx_dropped >= before + 2; }));
	// The client cannot write into uabid through its end.
	char x = 0;
	EXPECT_LT(::send(*relay, &x, 1, MSG_DONTWAIT | MSG_NOSIGNAL), 0);

	// Another uid on the same shared uabid: its own QP binds, ours does
	// not, and it cannot change the devices.
	auto p = paths();
	Child other = as_nobody([p, qpn] {
		auto t = DaemonTransport::open(p, false, 1);
		if (!t)
			return 1;
		Context o(std::move(*t));
		std::uint16_t port = 0;
		int steered = 0;
		auto r = o.transport().wire_relay(&port, &steered);
		if (!r || steered != -1)
			return 2;
		if (o.transport().wire_bind(qpn, true) != ENOENT)
			return 3;
		if (o.transport().wire_bind(qpn, false) != ENOENT)
			return 4;
		auto a = daemon::connect(p, daemon::kHelloAdmin);
		if (!a || daemon::link_add(*a, "x", "lo").error() != EPERM ||
		    daemon::link_del(*a, "roce_lo").error() != EPERM)
			return 5;
		// An admin connection has no context: no relay.
		auto ad = daemon::admin_call(a->fd(), daemon::kOpWireRelay, 0, nullptr, 0);
		if (ad || ad.error() != EOPNOTSUPP)
			return 6;
		::close(*r);
		return 0;
	});
	EXPECT_TRUE(other.exited_ok());
	// Still ours.
	send_datagram(port, qpn, 64, 0x33);
	ASSERT_TRUE(relay_recv(*relay, h, got));
	EXPECT_EQ(got.size(), 64u);
	// Unbound: no longer delivered.
	ASSERT_EQ(c.transport().wire_bind(qpn, false), 0);
	send_datagram(port, qpn, 64, 0x44);
	EXPECT_FALSE(relay_recv(*relay, h, got, 300));
	::close(*relay);
}

// An XRC receive QP held by two contexts: the first to bind serves it, the
// other waits its turn (docs/wire.md, "XRC").  The server binding the
// number again changes nothing: once it unbinds, the other serves.
TEST_F(LinkTest, ARepeatedBindKeepsTheNextServer)
{
	start({"--shared"});
	ASSERT_TRUE(daemon::link_add(*admin(), "roce_lo", "lo"));
	Context a = open_on(1), b = open_on(1);
	const std::string f = dir_ + "/xrcd";
	int fd = ::open(f.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_GE(fd, 0);
	auto xa = a.open_xrcd(fd, UABI_XRCD_O_CREAT);
	auto xb = b.open_xrcd(fd, 0);
	::close(fd);
	ASSERT_TRUE(xa && xb);
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	uabi_qp_init init{};
	init.qp_type = UABI_QPT_XRC_RECV;
	ASSERT_TRUE(a.register_xrc_rcv_qp(*xa, qpn, init));
	std::uint32_t q = qpn;
	ASSERT_TRUE(b.register_xrc_rcv_qp(*xb, q));
	std::uint16_t port = 0;
	int steered = 0;
	auto ra = a.transport().wire_relay(&port, &steered);
	auto rb = b.transport().wire_relay(&port, &steered);
	ASSERT_TRUE(ra && rb);
	ASSERT_EQ(a.transport().wire_bind(qpn, true), 0);
	ASSERT_EQ(b.transport().wire_bind(qpn, true), 0);
	daemon::RelayHdr h{};
	std::vector<std::uint8_t> got;
	send_datagram(port, qpn, 64, 0x11);
	ASSERT_TRUE(relay_recv(*ra, h, got)) << "the first to bind serves";
	EXPECT_FALSE(relay_recv(*rb, h, got, 300));
	ASSERT_EQ(a.transport().wire_bind(qpn, true), 0) << "the server binds again";
	ASSERT_EQ(a.transport().wire_bind(qpn, false), 0);
	send_datagram(port, qpn, 64, 0x22);
	ASSERT_TRUE(relay_recv(*rb, h, got)) << "the other one serves next";
	EXPECT_EQ(got[63], 0x22);
	::close(*ra);
	::close(*rb);
}

// One datagram on a plain UDP socket within @ms (false: none).
bool udp_recv(int fd, std::vector<std::uint8_t> &out, int ms = 2000)
{
	pollfd p{fd, POLLIN, 0};
	if (::poll(&p, 1, ms) != 1)
		return false;
	std::uint8_t buf[5000];
	ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		return false;
	out.assign(buf, buf + n);
	return true;
}

// Steering, on a private uabid: the port's reuseport group sends a bound
// QP's datagrams straight to the socket its context was given, not through
// uabid; another context's QPs to its own socket; what no one bound to
// uabid (dropped); a context's socket serves the next context once the
// first is gone, without what it left unread, and the closed context's
// QPNs no longer reach it.
TEST_F(LinkTest, TheSteeredSocketTakesItsOwnQps)
{
	start();
	ASSERT_TRUE(daemon::link_add(*admin(), "roce_lo", "lo"));
	struct Side {
		Context c;
		std::uint32_t qpn = 0;
		int relay = -1, steered = -1;
	};
	auto side = [&] {
		Side s{open_on(1)};
		auto pd = s.c.alloc_pd();
		auto cq = s.c.create_cq(4);
		EXPECT_TRUE(pd && cq);
		auto qp = s.c.create_qp(rc_qp(*pd, cq->handle));
		EXPECT_TRUE(qp);
		s.qpn = qp->resp.qpn;
		std::uint16_t port = 0;
		auto r = s.c.transport().wire_relay(&port, &s.steered);
		EXPECT_TRUE(r);
		s.relay = r ? *r : -1;
		EXPECT_GE(s.steered, 0) << "a private uabid gives a steered socket";
		EXPECT_EQ(s.c.transport().wire_bind(s.qpn, true), 0);
		return s;
	};
	const auto port = std::uint16_t(std::stoi(port_));
	std::vector<std::uint8_t> got;
	daemon::RelayHdr h{};
	auto a = std::make_unique<Side>(side());
	auto b = std::make_unique<Side>(side());
	ASSERT_GE(a->steered, 0);
	ASSERT_GE(b->steered, 0);
	const auto relayed0 = links()[1].rx_relayed;
	for (int i = 0; i < 20; i++) {
		send_datagram(port, a->qpn, 100 + i, 0xa0);
		send_datagram(port, b->qpn, 200 + i, 0xb0);
	}
	for (int i = 0; i < 20; i++) {
		ASSERT_TRUE(udp_recv(a->steered, got)) << i;
		EXPECT_EQ(got.size(), 100u + i);
		EXPECT_EQ(got.back(), 0xa0);
		ASSERT_TRUE(udp_recv(b->steered, got)) << i;
		EXPECT_EQ(got.size(), 200u + i);
		EXPECT_EQ(got.back(), 0xb0);
	}
	EXPECT_FALSE(udp_recv(a->steered, got, 100));
	EXPECT_FALSE(relay_recv(a->relay, h, got, 100)) << "steered datagrams do not pass through uabid";
	EXPECT_EQ(links()[1].rx_relayed, relayed0);
	// No one's QP: uabid's, dropped and counted.
	const auto dropped0 = links()[1].rx_dropped;
	send_datagram(port, a->qpn + 4000, 64, 0);
	EXPECT_TRUE(eventually([&] { return links()[1].rx_dropped == dropped0 + 1; }));
	EXPECT_FALSE(udp_recv(a->steered, got, 100));
	EXPECT_FALSE(udp_recv(b->steered, got, 100));
	// a leaves with a datagram unread; its QPN then goes to uabid.
	const std::uint32_t old_qpn = a->qpn;
	send_datagram(port, a->qpn, 77, 0xee);
	::close(a->steered);
	::close(a->relay);
	a.reset();
	EXPECT_TRUE(eventually([&] { return links()[1].contexts == 1; }));
	send_datagram(port, old_qpn, 64, 0);
	EXPECT_TRUE(eventually([&] { return links()[1].rx_dropped == dropped0 + 2; }));
	// c takes a's socket: nothing of a's is in it, and its own QP works.
	auto c = std::make_unique<Side>(side());
	ASSERT_GE(c->steered, 0);
	EXPECT_FALSE(udp_recv(c->steered, got, 100)) << "what a left behind";
	send_datagram(port, c->qpn, 55, 0xcc);
	ASSERT_TRUE(udp_recv(c->steered, got));
	EXPECT_EQ(got.size(), 55u);
	send_datagram(port, b->qpn, 66, 0xbb);
	ASSERT_TRUE(udp_recv(b->steered, got));
	EXPECT_EQ(got.size(), 66u);
	// Unbound: uabid's again.
	ASSERT_EQ(c->c.transport().wire_bind(c->qpn, false), 0);
	send_datagram(port, c->qpn, 64, 0);
	EXPECT_FALSE(udp_recv(c->steered, got, 200));
	for (auto *s : {b.get(), c.get()}) {
		::close(s->steered);
		::close(s->relay);
	}
}

// The address monitor: in a network namespace of its own, one end of a
// veth pair with one address; a context already open on its RoCE device
// sees a second address appear in its GID table, then the port go down
// when the interface loses its carrier (the other end goes down) and up
// again, without opening anything again.
TEST_F(LinkTest, GidsAndPortStateFollowTheInterface)
{
	ASSERT_EQ(geteuid(), 0u) << "needs root for a network namespace";
	const std::string dir = dir_;
	Child c([dir](int, int) {
		if (::unshare(CLONE_NEWNET) < 0)
			return 1;
		if (std::system("ip link set lo up && ip link add d0 type veth peer name d1 && "
				"ip addr add 10.9.0.1/24 dev d0 && ip link set d0 up && ip link set d1 up"))
			return 2;
		std::string sock = dir + "/mon.sock";
		const char *argv[] = {UABID_PATH, "--foreground", "--socket", sock.c_str(), "--idle-exit", "0",
				      nullptr};
		pid_t d;
		if (posix_spawn(&d, UABID_PATH, nullptr, nullptr, const_cast<char **>(argv), environ))
			return 3;
		auto p = daemon::paths_for_socket(sock);
		int rc = 0;
		auto wait_for = [](const std::function<bool()> &f) {
			for (int i = 0; i < 500; i++) {
				if (f())
					return true;
				usleep(10000);
			}
			return false;
		};
		[&] {
			if (!p || !wait_for([&] { return bool(daemon::connect(*p, daemon::kHelloAdmin)); })) {
				rc = 4;
				return;
			}
			auto a = daemon::connect(*p, daemon::kHelloAdmin);
			if (!daemon::link_add(*a, "r0", "d0")) {
				rc = 5;
				return;
			}
			auto t = DaemonTransport::open(*p, false, 1);
			if (!t) {
				rc = 6;
				return;
			}
			Context ctx(std::move(*t));
			auto gid_is = [&](unsigned i, std::uint8_t last) {
				auto g = ctx.query_gid(1, i);
				return g && (*g)[10] == 0xff && (*g)[12] == 10 && (*g)[13] == 9 && (*g)[15] == last;
			};
			auto port_state = [&] {
				auto pa = ctx.query_port(1);
				return pa ? int(pa->state) : -1;
			};
			if (!gid_is(0, 1) || gid_is(1, 2) || port_state() != UABI_PORT_ACTIVE) {
				rc = 7;
				return;
			}
			if (std::system("ip addr add 10.9.0.2/24 dev d0")) {
				rc = 8;
				return;
			}
			if (!wait_for([&] { return gid_is(1, 2); })) {
				rc = 9;
				return;
			}
			// The peer's end down: d0 loses its carrier.
			if (std::system("ip link set d1 down")) {
				rc = 10;
				return;
			}
			if (!wait_for([&] { return port_state() == UABI_PORT_DOWN; })) {
				rc = 11;
				return;
			}
			if (std::system("ip link set d1 up") ||
			    !wait_for([&] { return port_state() == UABI_PORT_ACTIVE; }))
				rc = 12;
		}();
		::kill(d, SIGTERM);
		int st;
		waitpid(d, &st, 0);
		return rc;
	});
	EXPECT_TRUE(c.exited_ok(30000));
}

} // namespace
} // namespace uabi::dtest
