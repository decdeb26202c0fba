// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The CM across hosts, byte by byte (docs/cm.md, "Across hosts"): the core
// built into this program (in-process, a RoCE device on lo), the host's
// hooks replaced by the test's, which keeps every MAD the core sends and
// hands it MADs made here at the IBTA's offsets.  Then random MADs at IDs
// in every state: counted, no crash, and a connection works afterwards.
#include <uabi/client.hpp>
#include <uabi/cm_wire.h>
#include <uabi/host_user.h>

#include <rdma/uabi.h>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace uabi;

namespace
{

using Mad = std::array<std::uint8_t, 256>;

struct Sent {
	unsigned link;
	std::array<std::uint8_t, 16> sgid, dgid;
	unsigned tclass; // the datagram's
	Mad mad;
};
std::vector<Sent> g_sent;
unsigned long long g_armed;

int test_send(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
	      unsigned char tclass, const void *mad, unsigned len)
{
	Sent s{};
	s.link = link;
	s.tclass = tclass;
	std::memcpy(s.sgid.data(), sgid, 16);
	std::memcpy(s.dgid.data(), dgid, 16);
	std::memcpy(s.mad.data(), mad, std::min<unsigned>(len, 256));
	g_sent.push_back(s);
	return 0;
}

void test_arm(unsigned long long ns)
{
	g_armed = ns;
}

const uabi_cm_wire_ops kOps = {test_send, test_arm};

// Big-endian fields at absolute MAD offsets (the CM message starts at 24).
void put16(Mad &m, std::size_t o, std::uint16_t v)
{
	m[o] = std::uint8_t(v >> 8);
	m[o + 1] = std::uint8_t(v);
}
void put24(Mad &m, std::size_t o, std::uint32_t v)
{
	m[o] = std::uint8_t(v >> 16);
	m[o + 1] = std::uint8_t(v >> 8);
	m[o + 2] = std::uint8_t(v);
}
void put32(Mad &m, std::size_t o, std::uint32_t v)
{
	put16(m, o, std::uint16_t(v >> 16));
	put16(m, o + 2, std::uint16_t(v));
}
void put64(Mad &m, std::size_t o, std::uint64_t v)
{
	put32(m, o, std::uint32_t(v >> 32));
	put32(m, o + 4, std::uint32_t(v));
}
std::uint32_t get24(const Mad &m, std::size_t o)
{
	return std::uint32_t(m[o]) << 16 | std::uint32_t(m[o + 1]) << 8 | m[o + 2];
}
std::uint16_t get16(const Mad &m, std::size_t o)
{
	return std::uint16_t(m[o] << 8 | m[o + 1]);
}
std::uint32_t get32(const Mad &m, std::size_t o)
{
	return get24(m, o) << 8 | m[o + 3];
}
std::uint64_t get64(const Mad &m, std::size_t o)
{
	return std::uint64_t(get32(m, o)) << 32 | get32(m, o + 4);
}

Mad mad(std::uint16_t attr)
{
	Mad m{};
	m[0] = 1;    // base version
	m[1] = 0x07; // CM
	m[2] = 2;    // class version
	m[3] = 0x03; // Send
	put64(m, 8, 0x1122334455667788ull);
	put16(m, 16, attr);
	return m;
}

std::array<std::uint8_t, 16> gid4(const char *ip)
{
	std::array<std::uint8_t, 16> g{};
	g[10] = g[11] = 0xff;
	inet_pton(AF_INET, ip, g.data() + 12);
	return g;
}

uabi_cm_addr ipv4(const char *ip, std::uint16_t port)
{
	sockaddr_in s{};
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, ip, &s.sin_addr);
	uabi_cm_addr a{};
	std::memcpy(a.bytes, &s, sizeof(s));
	return a;
}

const auto kUs = gid4("127.0.0.1"), kPeer = gid4("127.0.0.2");
constexpr unsigned kLink = 1; // the RoCE device on lo (after uabi_sw0)

void feed(const Mad &m, const std::array<std::uint8_t, 16> &from = kPeer)
{
	uabi_cm_wire_input(kLink, from.data(), kUs.data(), m.data(), 256);
}

template <class T> T need(Result<T> r)
{
	if (!r)
		throw std::runtime_error(std::string("call failed: ") + std::strerror(r.error()));
	return std::move(r).value();
}

struct Side {
	Context ctx;
	Handle ch = 0;

	Side() : ctx(need(Context::open()))
	{
		Command k(UABI_OBJ_CM_CHANNEL, UABI_METHOD_CREATE);
		k.add_out<std::int32_t>(UABI_ATTR_CM_CHANNEL_FD, kMandatory | UABI_ATTR_F_FD);
		ch = need(ctx.call(std::move(k))).result(0).out_handle;
	}
	// @qp_type 0: the port space's (UD for UDP, else RC)
	Handle create(std::uint16_t ps = UABI_CM_PS_TCP, std::uint32_t qp_type = 0)
	{
		uabi_cm_id_create c{};
		c.uid = 7;
		c.ps = ps;
		c.qp_type = qp_type ? qp_type : ps == UABI_CM_PS_UDP ? std::uint32_t(UABI_QPT_UD) : std::uint32_t(UABI_QPT_RC);
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_CREATE);
		k.add_handle(UABI_ATTR_CM_ID_CHANNEL, ch).add_in(UABI_ATTR_CM_ID_CREATE, c);
		return need(ctx.call(std::move(k))).result(0).out_handle;
	}
	Result<Message> resolve_remote(Handle id, std::uint16_t port)
	{
		uabi_cm_resolve r{};
		r.src = ipv4("127.0.0.1", 0);
		r.dst = ipv4("127.0.0.2", port);
		r.flags = UABI_CM_RESOLVE_F_REMOTE;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_RESOLVE_ADDR, id);
		k.add_in(UABI_ATTR_CM_ID_RESOLVE, r);
		return ctx.call(std::move(k));
	}
	Result<Message> simple(Handle id, std::uint16_t method)
	{
		return ctx.call(Command(UABI_OBJ_CM_ID, method, id));
	}
	Result<Message> conn(Handle id, std::uint16_t method, std::uint32_t qpn, const char *pd)
	{
		uabi_cm_conn_param p{};
		p.qp_num = qpn;
		p.private_data_len = std::uint8_t(std::strlen(pd));
		std::memcpy(p.private_data, pd, p.private_data_len);
		p.responder_resources = 1;
		p.initiator_depth = 1;
		p.retry_count = 7;
		p.rnr_retry_count = 6;
		p.flow_control = 1;
		p.valid = 1;
		Command k(UABI_OBJ_CM_ID, method, id);
		k.add_in(UABI_ATTR_CM_ID_CONN, p);
		return ctx.call(std::move(k));
	}
	Result<Message> listen(Handle id, std::uint16_t port, std::uint32_t backlog = 8)
	{
		Command b(UABI_OBJ_CM_ID, UABI_CM_ID_BIND, id);
		b.add_in(UABI_ATTR_CM_ID_ADDR, ipv4("0.0.0.0", port));
		if (auto r = ctx.call(std::move(b)); !r)
			return r;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_LISTEN, id);
		k.add_in(UABI_ATTR_CM_ID_BACKLOG, backlog);
		return ctx.call(std::move(k));
	}
	Result<uabi_cm_event> event()
	{
		Command k(UABI_OBJ_CM_CHANNEL, UABI_CM_CHANNEL_GET_EVENT, ch);
		OutAttr o = k.add_out<uabi_cm_event>(UABI_ATTR_CM_CHANNEL_EVENT);
		auto m = ctx.call(std::move(k));
		if (!m)
			return make_error(m.error());
		uabi_cm_event ev{};
		m->read(0, o, ev);
		return ev;
	}
	uabi_cm_qp_attr qp_attr(Handle id, std::uint32_t state)
	{
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_INIT_QP_ATTR, id);
		k.add_in(UABI_ATTR_CM_ID_QP_STATE, state);
		OutAttr o = k.add_out<uabi_cm_qp_attr>(UABI_ATTR_CM_ID_QP_ATTR);
		Message m = need(ctx.call(std::move(k)));
		uabi_cm_qp_attr r{};
		m.read(0, o, r);
		return r;
	}
	uabi_cm_id_info query(Handle id)
	{
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_QUERY, id);
		OutAttr o = k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
		Message m = need(ctx.call(std::move(k)));
		uabi_cm_id_info info{};
		m.read(0, o, info);
		return info;
	}
	void destroy(Handle id)
	{
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_DESTROY, id);
		k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
		need(ctx.call(std::move(k)));
	}
	// An ID resolved (address and route) to 127.0.0.2:port through the link.
	Handle remote_id(std::uint16_t port, std::uint16_t ps = UABI_CM_PS_TCP, std::uint32_t qp_type = 0)
	{
		Handle id = create(ps, qp_type);
		need(resolve_remote(id, port));
		EXPECT_EQ(need(event()).event, UABI_CM_EVENT_ADDR_RESOLVED);
		need(simple(id, UABI_CM_ID_RESOLVE_ROUTE));
		EXPECT_EQ(need(event()).event, UABI_CM_EVENT_ROUTE_RESOLVED);
		return id;
	}
};

// A REQ from the peer (127.0.0.2:5555) to our port @port: QPN 0x999,
// starting PSN 0x1234 (the PSN the peer receives at).
Mad peer_req(std::uint32_t comm_id, std::uint16_t port)
{
	Mad m = mad(0x10);
	put32(m, 24, comm_id);
	put64(m, 32, 0x0000000001060000ull | port);
	put24(m, 56, 0x999);
	m[59] = 1;		   // responder resources
	m[63] = 1;		   // initiator depth
	m[67] = 20 << 3 | 0 << 1 | 1; // remote CM response timeout, RC, flow control
	put24(m, 68, 0x1234);
	m[71] = 20 << 3 | 7;	   // local CM response timeout, retry count
	put16(m, 72, 0xffff);
	m[74] = 3 << 4 | 7;	   // path MTU 1024, RNR retry 7
	m[75] = 15 << 4;	   // max CM retries
	std::memcpy(m.data() + 80, kPeer.data(), 16);
	std::memcpy(m.data() + 96, kUs.data(), 16);
	std::uint8_t *h = m.data() + 164; // the RDMA CM header
	h[0] = 0;
	h[1] = 0x40;
	h[2] = 5555 >> 8;
	h[3] = 5555 & 0xff;
	std::memcpy(h + 4 + 12, kPeer.data() + 12, 4);
	std::memcpy(h + 20 + 12, kUs.data() + 12, 4);
	std::memcpy(h + 36, "yo", 2);
	return m;
}

// The next event of @s, running the CM's timer until it comes (at most
// 5 s: the time-wait is 512 ms).
uabi_cm_event wait_event(Side &s)
{
	for (int i = 0; i < 5000; i++) {
		if (auto ev = s.event())
			return *ev;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
		uabi_cm_wire_timeout();
	}
	ADD_FAILURE() << "no event";
	return uabi_cm_event{};
}

class CmMad : public ::testing::Test
{
      protected:
	static void SetUpTestSuite()
	{
		setenv("UABI_BACKEND", "inproc", 1);
		setenv("UABI_LINKS", "wire0:lo", 1);
		// The in-process host registers its own hooks when it starts
		// (host_cm.c): ours replace them, once it has.
		ASSERT_EQ(uabi_user_get_api()->init(), 0);
		uabi_cm_wire_register(&kOps);
	}
	void SetUp() override
	{
		g_sent.clear();
		uabi_cm_wire_set_timeouts(20, 15);
		uabi_cm_wire_set_mra_timeout(24);
	}
	uabi_cm_wire_stats stats()
	{
		uabi_cm_wire_stats s{};
		uabi_cm_wire_get_stats(&s);
		return s;
	}
};

} // namespace

TEST_F(CmMad, ActiveSideRequestReplyReadyDisconnect)
{
	Side c;
	Handle id = c.remote_id(7000);
	uabi_cm_id_info info = c.query(id);
	EXPECT_NE(info.node_guid, 0u);
	EXPECT_EQ(0, std::memcmp(info.sgid, kUs.data(), 16));
	EXPECT_EQ(0, std::memcmp(info.dgid, kPeer.data(), 16));
	EXPECT_EQ(info.slid, 0) << "RoCE: no LIDs";

	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x123, "hi"));
	ASSERT_EQ(g_sent.size(), 1u);
	const Sent &s = g_sent[0];
	EXPECT_EQ(s.link, kLink);
	EXPECT_EQ(s.sgid, kUs);
	EXPECT_EQ(s.dgid, kPeer);
	const Mad &req = s.mad;
	EXPECT_EQ(req[0], 1);
	EXPECT_EQ(req[1], 0x07);
	EXPECT_EQ(req[2], 2);
	EXPECT_EQ(req[3], 0x03);
	EXPECT_EQ(req[16] << 8 | req[17], 0x10);
	const std::uint32_t ours = get32(req, 24);
	EXPECT_NE(ours, 0u);
	EXPECT_EQ(get64(req, 32), 0x0000000001060000ull | 7000) << "service ID: TCP port space, port";
	EXPECT_EQ(get24(req, 56), 0x123u) << "local QPN";
	EXPECT_EQ(req[59], 1) << "responder resources";
	EXPECT_EQ(req[63], 1) << "initiator depth";
	EXPECT_EQ(req[67] & 7, 1) << "RC, flow control";
	const std::uint32_t our_rq_psn = get24(req, 68);
	EXPECT_EQ(req[71] & 7, 7) << "retry count";
	EXPECT_EQ(req[74] & 7, 6) << "RNR retry count";
	EXPECT_EQ(req[74] >> 4, info.mtu) << "path MTU: our port's";
	EXPECT_EQ(0, std::memcmp(req.data() + 80, kUs.data(), 16)) << "primary local GID";
	EXPECT_EQ(0, std::memcmp(req.data() + 96, kPeer.data(), 16)) << "primary remote GID";
	EXPECT_EQ(req[164], 0) << "RDMA CM header version";
	EXPECT_EQ(req[165], 0x40) << "IPv4";
	EXPECT_EQ(0, std::memcmp(req.data() + 164 + 16, kUs.data() + 12, 4)) << "source address";
	EXPECT_EQ(0, std::memcmp(req.data() + 164 + 32, kPeer.data() + 12, 4)) << "destination";
	EXPECT_EQ(0, std::memcmp(req.data() + 164 + 36, "hi", 2)) << "private data after the header";

	// The REP: the peer's QPN, and the PSN it receives at (we send so).
	Mad rep = mad(0x13);
	put32(rep, 24, 0xabcd);
	put32(rep, 28, ours);
	put24(rep, 36, 0x456);
	put24(rep, 44, 0x777);
	rep[48] = 1;
	rep[49] = 1;
	rep[51] = 7 << 5;
	std::memcpy(rep.data() + 60, "back", 4);
	feed(rep);
	uabi_cm_event ev = need(c.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_CONNECT_RESPONSE);
	EXPECT_EQ(ev.conn.qp_num, 0x456u);
	EXPECT_EQ(0, std::memcmp(ev.conn.private_data, "back", 4));
	uabi_cm_qp_attr rtr = c.qp_attr(id, UABI_QPS_RTR), rts = c.qp_attr(id, UABI_QPS_RTS);
	EXPECT_EQ(rtr.attr.dest_qp_num, 0x456u);
	EXPECT_EQ(rtr.attr.rq_psn, our_rq_psn) << "the PSN our REQ said we receive at";
	EXPECT_EQ(rts.attr.sq_psn, 0x777u) << "the PSN the REP said the peer receives at";
	EXPECT_EQ(rtr.attr.ah_attr.is_global, 1);
	EXPECT_EQ(rtr.attr.ah_attr.dlid, 0);
	EXPECT_EQ(0, std::memcmp(rtr.attr.ah_attr.grh.dgid, kPeer.data(), 16));

	// Our ACCEPT is the RTU; a repeated REP gets it again.
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_ACCEPT, 0x123, ""));
	ASSERT_EQ(g_sent.size(), 2u);
	EXPECT_EQ(g_sent[1].mad[17], 0x14);
	EXPECT_EQ(get32(g_sent[1].mad, 24), ours);
	EXPECT_EQ(get32(g_sent[1].mad, 28), 0xabcdu);
	feed(rep);
	ASSERT_EQ(g_sent.size(), 3u);
	EXPECT_EQ(g_sent[2].mad[17], 0x14);
	EXPECT_FALSE(c.event()) << "no event for a repeated REP";

	// DISCONNECT: a DREQ; DISCONNECTED comes with the DREP.
	ASSERT_TRUE(c.simple(id, UABI_CM_ID_DISCONNECT));
	ASSERT_EQ(g_sent.size(), 4u);
	const Mad &dreq = g_sent[3].mad;
	EXPECT_EQ(dreq[17], 0x15);
	EXPECT_EQ(get24(dreq, 32), 0x456u) << "the remote QPN";
	EXPECT_FALSE(c.event());
	Mad drep = mad(0x16);
	put32(drep, 24, 0xabcd);
	put32(drep, 28, ours);
	feed(drep);
	EXPECT_EQ(need(c.event()).event, UABI_CM_EVENT_DISCONNECTED);
	// Then the IB CM's time-wait (512 ms): TIMEWAIT_EXIT.
	EXPECT_EQ(wait_event(c).event, UABI_CM_EVENT_TIMEWAIT_EXIT);
	c.destroy(id);
}

TEST_F(CmMad, PassiveSideRequestAcceptReadyDisconnect)
{
	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7001));
	feed(peer_req(0x5151, 7001));
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(ev.conn.qp_num, 0x999u);
	EXPECT_EQ(ev.conn.private_data_len, 56) << "all 56 bytes after the RDMA CM header";
	EXPECT_EQ(0, std::memcmp(ev.conn.private_data, "yo", 2));
	Handle id = ev.handle;
	uabi_cm_id_info info = s.query(id);
	EXPECT_EQ(0, std::memcmp(info.dgid, kPeer.data(), 16));
	EXPECT_EQ(info.dst.bytes[2] << 8 | info.dst.bytes[3], 5555) << "the peer's port";
	EXPECT_EQ(info.src.bytes[2] << 8 | info.src.bytes[3], 7001);
	// A repeated REQ while it is not answered: an MRA (as Linux's
	// rdma_cm answers a repeat its consumer has not answered), so that
	// the requester waits; no second request.
	feed(peer_req(0x5151, 7001));
	EXPECT_FALSE(s.event());
	ASSERT_EQ(g_sent.size(), 1u);
	const Mad mra = g_sent[0].mad;
	EXPECT_EQ(mra[16] << 8 | mra[17], 0x11) << "an MRA";
	EXPECT_EQ(get64(mra, 8), 0x1122334455667788ull) << "the REQ's transaction ID";
	EXPECT_EQ(get32(mra, 28), 0x5151u) << "the requester's communication ID";
	EXPECT_EQ(mra[32] >> 6, 0) << "message MRAed: the REQ";
	EXPECT_EQ(mra[33] >> 3, 24) << "service timeout: Linux's rdma_cm's (68.7 s)";
	g_sent.clear();

	ASSERT_TRUE(s.conn(id, UABI_CM_ID_ACCEPT, 0x321, "ok"));
	ASSERT_EQ(g_sent.size(), 1u);
	const Mad rep = g_sent[0].mad;
	EXPECT_EQ(rep[17], 0x13);
	const std::uint32_t ours = get32(rep, 24);
	EXPECT_EQ(get32(mra, 24), ours) << "the MRA named our side as the REP does";
	EXPECT_EQ(get32(rep, 28), 0x5151u);
	EXPECT_EQ(get24(rep, 36), 0x321u);
	uabi_cm_qp_attr rtr = s.qp_attr(id, UABI_QPS_RTR), rts = s.qp_attr(id, UABI_QPS_RTS);
	EXPECT_EQ(rtr.attr.rq_psn, get24(rep, 44)) << "the REP carries the PSN we receive at";
	EXPECT_EQ(rts.attr.sq_psn, 0x1234u) << "we send at the PSN the REQ said";
	EXPECT_EQ(rtr.attr.dest_qp_num, 0x999u);
	EXPECT_EQ(0, std::memcmp(rep.data() + 60, "ok", 2));
	// The REQ again (our REP lost): the REP again.
	feed(peer_req(0x5151, 7001));
	ASSERT_EQ(g_sent.size(), 2u);
	EXPECT_EQ(g_sent[1].mad, rep);

	Mad rtu = mad(0x14);
	put32(rtu, 24, 0x5151);
	put32(rtu, 28, ours);
	feed(rtu);
	EXPECT_EQ(need(s.event()).event, UABI_CM_EVENT_ESTABLISHED);

	Mad dreq = mad(0x15);
	put32(dreq, 24, 0x5151);
	put32(dreq, 28, ours);
	feed(dreq);
	EXPECT_EQ(need(s.event()).event, UABI_CM_EVENT_DISCONNECTED);
	ASSERT_EQ(g_sent.size(), 3u);
	EXPECT_EQ(g_sent[2].mad[17], 0x16) << "the DREP";
	// Our DISCONNECT after the peer's (where Linux sends its DREP and
	// enters time-wait): TIMEWAIT_EXIT after the time-wait.
	ASSERT_TRUE(s.simple(id, UABI_CM_ID_DISCONNECT));
	EXPECT_EQ(wait_event(s).event, UABI_CM_EVENT_TIMEWAIT_EXIT);
	s.destroy(id);
	s.destroy(l);
}

// A request still in the listener's queue when its device goes (`uabi
// link del`): the ID made from it keeps no index of the device, which the
// next device may take, so nothing of it leaves through that index — not
// the REP of its accept, not the REJ or DREQ of its destroy.  (Made to
// fail: before, the REP went out through the deleted device's index.)
TEST_F(CmMad, RequestPendingWhenItsDeviceGoesSendsNothingThroughIt)
{
	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7011));
	feed(peer_req(0x5252, 7011));
	uabi_cm_link_removal(kLink, 1);
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	g_sent.clear();
	(void)s.conn(ev.handle, UABI_CM_ID_ACCEPT, 0x321, "ok");
	EXPECT_TRUE(g_sent.empty()) << "a MAD through the deleted device's index";
	s.destroy(ev.handle);
	EXPECT_TRUE(g_sent.empty()) << "a MAD through the deleted device's index";
	s.destroy(l);
}

// XRC across hosts: the REQ of an initiator (XRC_SEND) says transport
// service type 3, extended transport type 1; the target's REP carries its
// QPN in the local EE context's place too, where the initiator reads it
// (Linux's ib_cm writes and reads them there).  (Made to fail: before,
// CONNECT of an XRC ID through a RoCE device answered EOPNOTSUPP and an
// XRC REQ was dropped as malformed.)
TEST_F(CmMad, XrcRequestAndReplyCarryTheTransportAndTheTargetQpn)
{
	Side c;
	// (XRC is PS_IB's, as rdma_xclient's: the TCP port space is RC)
	Handle id = c.remote_id(7010, UABI_CM_PS_IB, UABI_QPT_XRC_SEND);
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x123, "hi"));
	ASSERT_EQ(g_sent.size(), 1u);
	const Mad req = g_sent[0].mad;
	EXPECT_EQ(req[17], 0x10);
	EXPECT_EQ((req[67] >> 1) & 3, 3) << "transport service type: XRC";
	EXPECT_EQ(req[75] & 7, 1) << "extended transport type: XRC";
	EXPECT_EQ(get24(req, 56), 0x123u);
	Mad rep = mad(0x13);
	put32(rep, 24, 0xabce);
	put32(rep, 28, get32(req, 24));
	put24(rep, 40, 0x456);	// the local EECN: the target's QPN (LOCAL_QPN 0)
	put24(rep, 44, 0x777);
	feed(rep);
	uabi_cm_event ev = need(c.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_CONNECT_RESPONSE);
	EXPECT_EQ(ev.conn.qp_num, 0x456u);
	EXPECT_EQ(c.qp_attr(id, UABI_QPS_RTR).attr.dest_qp_num, 0x456u);
	c.destroy(id);
	g_sent.clear();

	// The passive side: an XRC REQ reaches an XRC target's listener,
	// not an RC one (which answers REJ, reason 8).
	Side s;
	Handle rc = s.create(UABI_CM_PS_IB, UABI_QPT_RC);
	ASSERT_TRUE(s.listen(rc, 7011));
	Mad xreq = peer_req(0x6161, 7011);
	put64(xreq, 32, 0x00000000013f0000ull | 7011);	// PS_IB's service ID
	xreq[67] = 20 << 3 | 3 << 1 | 1;
	xreq[75] = 15 << 4 | 1;
	feed(xreq);
	EXPECT_FALSE(s.event());
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_EQ(g_sent[0].mad[17], 0x12) << "a REJ";
	g_sent.clear();
	Handle l = s.create(UABI_CM_PS_IB, UABI_QPT_XRC_RECV);
	ASSERT_TRUE(s.listen(l, 7012));
	xreq = peer_req(0x6162, 7012);
	put64(xreq, 32, 0x00000000013f0000ull | 7012);
	xreq[67] = 20 << 3 | 3 << 1 | 1;
	xreq[75] = 15 << 4 | 1;
	feed(xreq);
	ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	ASSERT_TRUE(s.conn(ev.handle, UABI_CM_ID_ACCEPT, 0x321, "ok"));
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_EQ(g_sent[0].mad[17], 0x13);
	EXPECT_EQ(get24(g_sent[0].mad, 40), 0x321u) << "the target's QPN as the local EECN";
	EXPECT_EQ(get24(g_sent[0].mad, 36), 0x321u) << "and as the local QPN";
	s.destroy(ev.handle);
	s.destroy(l);
	s.destroy(rc);
}

TEST_F(CmMad, NoListenerIsRejectedReason8)
{
	feed(peer_req(0x6161, 7002));
	ASSERT_EQ(g_sent.size(), 1u);
	const Mad &rej = g_sent[0].mad;
	EXPECT_EQ(rej[17], 0x12);
	EXPECT_EQ(get32(rej, 28), 0x6161u);
	EXPECT_EQ(rej[32] >> 6, 0) << "the REQ is rejected";
	EXPECT_EQ(rej[34] << 8 | rej[35], 8) << "invalid service ID";
	EXPECT_EQ(g_sent[0].dgid, kPeer);
}

// A REQ repeated before the listener even took it: an MRA too (Linux's
// rdma_cm has handed the request to its consumer by then), and the
// request is reported once.
TEST_F(CmMad, RepeatedRequestNotYetTakenGetsAnMra)
{
	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7010));
	feed(peer_req(0x6161, 7010));
	EXPECT_TRUE(g_sent.empty());
	feed(peer_req(0x6161, 7010));
	ASSERT_EQ(g_sent.size(), 1u);
	const Mad mra = g_sent[0].mad;
	EXPECT_EQ(mra[17], 0x11);
	EXPECT_EQ(get32(mra, 28), 0x6161u);
	EXPECT_NE(get32(mra, 24), 0u);
	EXPECT_EQ(mra[32] >> 6, 0);
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_FALSE(s.event()) << "one request";
	ASSERT_TRUE(s.conn(ev.handle, UABI_CM_ID_ACCEPT, 0x322, ""));
	ASSERT_EQ(g_sent.size(), 2u);
	EXPECT_EQ(g_sent[1].mad[17], 0x13);
	EXPECT_EQ(get32(g_sent[1].mad, 24), get32(mra, 24)) << "the REP names the side the MRA named";
	s.destroy(ev.handle);
	s.destroy(l);
}

// A REP repeated while our consumer has not sent the RTU (ACCEPT): an MRA
// for the REP.
TEST_F(CmMad, RepeatedReplyBeforeOurRtuGetsAnMra)
{
	Side c;
	Handle id = c.remote_id(7011);
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x125, ""));
	const std::uint32_t ours = get32(g_sent[0].mad, 24);
	Mad rep = mad(0x13);
	put32(rep, 24, 0xbeef);
	put32(rep, 28, ours);
	put24(rep, 36, 0x457);
	put24(rep, 44, 0x778);
	feed(rep);
	EXPECT_EQ(need(c.event()).event, UABI_CM_EVENT_CONNECT_RESPONSE);
	feed(rep);
	ASSERT_EQ(g_sent.size(), 2u);
	const Mad mra = g_sent[1].mad;
	EXPECT_EQ(mra[17], 0x11);
	EXPECT_EQ(get32(mra, 24), ours);
	EXPECT_EQ(get32(mra, 28), 0xbeefu);
	EXPECT_EQ(mra[32] >> 6, 1) << "message MRAed: the REP";
	EXPECT_FALSE(c.event()) << "no second CONNECT_RESPONSE";
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_ACCEPT, 0x125, ""));
	ASSERT_EQ(g_sent.size(), 3u);
	EXPECT_EQ(g_sent[2].mad[17], 0x14) << "then the RTU";
	c.destroy(id);
}

// An MRA for our REP: the REP waits the MRA's service timeout instead of
// its own (4 us here), so it is not sent again at once.
TEST_F(CmMad, AnMraForOurReplyStretchesItsWait)
{
	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7012));
	Mad req = peer_req(0x7171, 7012);
	req[71] = 0 << 3 | 7; // the requester's CM response timeout: 4 us
	req[75] = 1 << 4;     // one retry
	feed(req);
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	ASSERT_TRUE(s.conn(ev.handle, UABI_CM_ID_ACCEPT, 0x323, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	const std::uint32_t ours = get32(g_sent[0].mad, 24);
	Mad mra = mad(0x11);
	put32(mra, 24, 0x7171);
	put32(mra, 28, ours);
	mra[32] = 1 << 6; // the REP
	mra[33] = 31 << 3; // 2.4 hours
	feed(mra);
	for (int i = 0; i < 20; i++) {
		std::this_thread::sleep_for(std::chrono::microseconds(100));
		uabi_cm_wire_timeout();
	}
	EXPECT_EQ(g_sent.size(), 1u) << "the REP was not sent again";
	EXPECT_FALSE(s.event()) << "not timed out";
	Mad rtu = mad(0x14);
	put32(rtu, 24, 0x7171);
	put32(rtu, 28, ours);
	feed(rtu);
	EXPECT_EQ(need(s.event()).event, UABI_CM_EVENT_ESTABLISHED);
	s.destroy(ev.handle);
	s.destroy(l);
}

// An MRA for our REQ: as Linux's ib_cm, the wait becomes the MRA's service
// timeout plus the path's ACK timeout (4.096 us * 2^18, 1.07 s), so even an
// MRA of 4 us keeps a REQ whose own wait is 4 us from going again at once.
TEST_F(CmMad, AnMraForOurRequestAddsTheAckTimeout)
{
	uabi_cm_wire_set_timeouts(0, 1); // 4 us, one retry
	Side c;
	Handle id = c.remote_id(7013);
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x126, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	Mad mra = mad(0x11);
	put32(mra, 24, 0x8181);
	put32(mra, 28, get32(g_sent[0].mad, 24));
	mra[32] = 0 << 6; // the REQ
	mra[33] = 0 << 3; // 4 us
	feed(mra);
	for (int i = 0; i < 20; i++) {
		std::this_thread::sleep_for(std::chrono::microseconds(100));
		uabi_cm_wire_timeout();
	}
	EXPECT_EQ(g_sent.size(), 1u) << "the REQ was not sent again";
	EXPECT_FALSE(c.event()) << "not timed out";
	c.destroy(id);
}

TEST_F(CmMad, RequestTimesOutAfterItsRetries)
{
	uabi_cm_wire_set_timeouts(0, 1); // 4 us, one retry
	Side c;
	Handle id = c.remote_id(7003);
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x124, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_GT(g_armed, 0u) << "a timer was asked for";
	const Mad req = g_sent[0].mad;
	// The timer may come early: only a deadline passed counts.
	for (int i = 0; i < 1000 && g_sent.size() < 2; i++) {
		std::this_thread::sleep_for(std::chrono::microseconds(100));
		uabi_cm_wire_timeout();
	}
	ASSERT_EQ(g_sent.size(), 2u);
	EXPECT_EQ(g_sent[1].mad, req) << "the REQ again";
	EXPECT_FALSE(c.event());
	for (int i = 0; i < 1000 && g_sent.size() < 3; i++) {
		std::this_thread::sleep_for(std::chrono::microseconds(100));
		uabi_cm_wire_timeout();
	}
	ASSERT_EQ(g_sent.size(), 3u);
	EXPECT_EQ(g_sent[2].mad[17], 0x12) << "a REJ";
	EXPECT_EQ(g_sent[2].mad[34] << 8 | g_sent[2].mad[35], 1) << "timeout";
	uabi_cm_event ev = need(c.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_UNREACHABLE);
	EXPECT_EQ(ev.status, -ETIMEDOUT);
	EXPECT_EQ(g_armed, 0u) << "no timer left";
	c.destroy(id);
}

TEST_F(CmMad, SidrRequestAndReply)
{
	Side c;
	Handle id = c.remote_id(7004, UABI_CM_PS_UDP);
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x125, "u"));
	ASSERT_EQ(g_sent.size(), 1u);
	const Mad &req = g_sent[0].mad;
	EXPECT_EQ(req[17], 0x17);
	EXPECT_EQ(get64(req, 32), 0x0000000001110000ull | 7004) << "UDP port space";
	EXPECT_EQ(req[40], 0) << "RDMA CM header version";
	EXPECT_EQ(req[41], 0x40);
	EXPECT_EQ(req[40 + 36], 'u');
	Mad rep = mad(0x18);
	put32(rep, 24, get32(req, 24));
	put24(rep, 32, 0x777);
	put32(rep, 44, 0x01234567);
	feed(rep);
	uabi_cm_event ev = need(c.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_ESTABLISHED);
	EXPECT_EQ(ev.conn.qp_num, 0x777u);
	EXPECT_EQ(ev.conn.qkey, 0x01234567u);
	EXPECT_EQ(ev.ah.is_global, 1);
	EXPECT_EQ(0, std::memcmp(ev.ah.grh.dgid, kPeer.data(), 16));
	c.destroy(id);

	// A listener answers a SIDR REQ with its QPN and the UDP Q_Key.
	Side s;
	Handle l = s.create(UABI_CM_PS_UDP);
	ASSERT_TRUE(s.listen(l, 7005));
	Mad sreq = mad(0x17);
	put32(sreq, 24, 0x7171);
	put16(sreq, 28, 0xffff);
	put64(sreq, 32, 0x0000000001110000ull | 7005);
	sreq[41] = 0x40;
	std::memcpy(sreq.data() + 40 + 16, kPeer.data() + 12, 4);
	std::memcpy(sreq.data() + 40 + 32, kUs.data() + 12, 4);
	g_sent.clear();
	feed(sreq);
	ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(ev.ah.is_global, 1);
	EXPECT_EQ(0, std::memcmp(ev.ah.grh.dgid, kPeer.data(), 16));
	ASSERT_TRUE(s.conn(ev.handle, UABI_CM_ID_ACCEPT, 0x888, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_EQ(g_sent[0].mad[17], 0x18);
	EXPECT_EQ(get32(g_sent[0].mad, 24), 0x7171u);
	EXPECT_EQ(g_sent[0].mad[28], 0) << "status: OK";
	EXPECT_EQ(get24(g_sent[0].mad, 32), 0x888u);
	EXPECT_EQ(get32(g_sent[0].mad, 44), 0x01234567u) << "librdmacm's RDMA_UDP_QKEY";
	s.destroy(ev.handle);
	s.destroy(l);
}

// Beyond a listener's backlog, as Linux's CM: a REQ is dropped unanswered
// (ucma's handler fails with ENOMEM, for which the IB CM sends no REJ), so
// that its requester sends it again and gets in once there is room; a
// SIDR REQ is refused with a SIDR REP, status 2 ("rejected").
TEST_F(CmMad, BeyondTheBacklogAReqIsDroppedAndASidrReqRejected)
{
	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7012, 1));
	feed(peer_req(0x6262, 7012));
	feed(peer_req(0x6363, 7012));
	EXPECT_TRUE(g_sent.empty()) << "neither a REJ nor an MRA for the second";
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_FALSE(s.event()) << "the second REQ was not queued";
	// Taken: room again, and the second REQ's repeat gets in.
	feed(peer_req(0x6363, 7012));
	uabi_cm_event ev2 = need(s.event());
	ASSERT_EQ(ev2.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_TRUE(g_sent.empty());
	s.destroy(ev.handle);
	s.destroy(ev2.handle);
	s.destroy(l);
	g_sent.clear();

	Handle u = s.create(UABI_CM_PS_UDP);
	ASSERT_TRUE(s.listen(u, 7013, 1));
	auto sidr_req = [](std::uint32_t req_id) {
		Mad m = mad(0x17);
		put32(m, 24, req_id);
		put16(m, 28, 0xffff);
		put64(m, 32, 0x0000000001110000ull | 7013);
		m[41] = 0x40;
		std::memcpy(m.data() + 40 + 16, kPeer.data() + 12, 4);
		std::memcpy(m.data() + 40 + 32, kUs.data() + 12, 4);
		return m;
	};
	feed(sidr_req(0x7272));
	EXPECT_TRUE(g_sent.empty());
	feed(sidr_req(0x7373));
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_EQ(g_sent[0].mad[17], 0x18) << "a SIDR REP";
	EXPECT_EQ(get32(g_sent[0].mad, 24), 0x7373u);
	EXPECT_EQ(g_sent[0].mad[28], 2) << "status: rejected";
	ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_FALSE(s.event()) << "one request";
	s.destroy(ev.handle);
	s.destroy(u);
}

// NOTIFY (IB_EVENT_COMM_EST: the QP's first message came before the RTU)
// on the passive side across the wire: ESTABLISHED at once, the REP no
// longer waits for its RTU (not sent again), and the RTU arriving later
// changes nothing; again EISCONN.
TEST_F(CmMad, NotifyEstablishesBeforeTheRtu)
{
	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7014));
	feed(peer_req(0x6565, 7014));
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	Handle id = ev.handle;
	ASSERT_TRUE(s.conn(id, UABI_CM_ID_ACCEPT, 0x324, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	const std::uint32_t ours = get32(g_sent[0].mad, 24);
	auto notify = [&](std::uint32_t event) {
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_NOTIFY, id);
		k.add_in(UABI_ATTR_CM_ID_EVENT_TYPE, event);
		return s.ctx.call(std::move(k));
	};
	ASSERT_TRUE(notify(4));
	ev = need(s.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_ESTABLISHED);
	EXPECT_EQ(ev.conn.qp_num, 0x999u) << "the requester's QPN";
	uabi_cm_wire_timeout();
	EXPECT_EQ(g_armed, 0u) << "nothing waited for any more";
	EXPECT_EQ(g_sent.size(), 1u) << "the REP is not sent again";
	EXPECT_EQ(notify(4).error(), EISCONN);
	Mad rtu = mad(0x14);
	put32(rtu, 24, 0x6565);
	put32(rtu, 28, ours);
	feed(rtu);
	EXPECT_FALSE(s.event()) << "no second ESTABLISHED";
	s.destroy(id);
	s.destroy(l);
}

// Random MADs — mutations of valid ones naming live IDs, and noise — at
// IDs in every state: each is taken or counted as dropped, nothing
// crashes, and afterwards a connection is made as before.
TEST_F(CmMad, RandomMadsAreCountedAndChangeNothingElse)
{
	Side c, s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7010));
	std::vector<Handle> act;
	for (int i = 0; i < 4; i++) {
		Handle id = c.remote_id(std::uint16_t(7020 + i));
		ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x200 + i, ""));
		act.push_back(id);
	}
	std::vector<Mad> seeds;
	for (const Sent &x : g_sent)
		seeds.push_back(x.mad);
	// valid-looking answers naming the live IDs, and requests
	for (const Mad &r : std::vector<Mad>(seeds)) {
		for (std::uint16_t attr = 0x10; attr <= 0x19; attr++) {
			Mad m = mad(attr);
			put32(m, 24, 0x9000 + attr);
			put32(m, 28, get32(r, 24));
			seeds.push_back(m);
		}
	}
	seeds.push_back(peer_req(0x4242, 7010));
	std::mt19937 rng(12345);
	const uabi_cm_wire_stats before = stats();
	const unsigned kCount = 20000;
	for (unsigned i = 0; i < kCount; i++) {
		Mad m = seeds[rng() % seeds.size()];
		const unsigned flips = 1 + rng() % 8;
		for (unsigned k = 0; k < flips; k++)
			m[rng() % (i % 3 ? 64 : 256)] = std::uint8_t(rng());
		if (i % 17 == 0)
			for (auto &b : m)
				b = std::uint8_t(rng());
		feed(m, i % 5 ? kPeer : gid4("127.0.0.3"));
		// take what comes, so that IDs move through their states
		while (auto ev = s.event())
			if (ev->event == UABI_CM_EVENT_CONNECT_REQUEST && rng() % 2)
				(void)s.conn(ev->handle, UABI_CM_ID_ACCEPT, 0x300, "");
		while (c.event()) {
		}
		if (i % 1000 == 0)
			uabi_cm_wire_timeout();
	}
	const uabi_cm_wire_stats after = stats();
	EXPECT_EQ(after.received + after.dropped - before.received - before.dropped, kCount)
	    << "every MAD is taken or counted";
	EXPECT_GT(after.dropped - before.dropped, kCount / 2);
	// Everything goes; a fresh connection still works.
	for (Handle id : act)
		c.destroy(id);
	s.destroy(l);
	Side c2, s2;
	Handle l2 = s2.create();
	ASSERT_TRUE(s2.listen(l2, 7030));
	g_sent.clear();
	feed(peer_req(0x3131, 7030));
	uabi_cm_event ev = need(s2.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	ASSERT_TRUE(s2.conn(ev.handle, UABI_CM_ID_ACCEPT, 0x321, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_EQ(g_sent[0].mad[17], 0x13);
	Mad rtu = mad(0x14);
	put32(rtu, 24, 0x3131);
	put32(rtu, 28, get32(g_sent[0].mad, 24));
	feed(rtu);
	EXPECT_EQ(need(s2.event()).event, UABI_CM_EVENT_ESTABLISHED);
}

// SET_OPTION's TOS across the wire, as Linux's rdma_cm sends it on RoCE:
// the requester's REQ carries it as the path's traffic class, and each
// side's QP gets it in its GRH (INIT_QP_ATTR at RTR); the passive side
// takes the REQ's.  (Made to fail: before, the option was ignored and the
// REQ carried 0.)
TEST_F(CmMad, TosIsThePathsTrafficClass)
{
	Side c;
	Handle id = c.remote_id(7020);
	Command k(UABI_OBJ_CM_ID, UABI_CM_ID_SET_OPTION, id);
	k.add_in(UABI_ATTR_CM_ID_OPTION, uabi_cm_option{UABI_CM_OPT_TOS, 0x68});
	need(c.ctx.call(std::move(k)));
	ASSERT_TRUE(c.conn(id, UABI_CM_ID_CONNECT, 0x123, ""));
	ASSERT_EQ(g_sent.size(), 1u);
	EXPECT_EQ(g_sent[0].mad[116], 0x68) << "the REQ's primary traffic class";
	Mad rep = mad(0x13);
	put32(rep, 24, 0xabce);
	put32(rep, 28, get32(g_sent[0].mad, 24));
	put24(rep, 36, 0x456);
	put24(rep, 44, 0x777);
	rep[51] = 7 << 5;
	feed(rep);
	EXPECT_EQ(need(c.event()).event, UABI_CM_EVENT_CONNECT_RESPONSE);
	EXPECT_EQ(c.qp_attr(id, UABI_QPS_RTR).attr.ah_attr.grh.traffic_class, 0x68);
	c.destroy(id);
	// Every MAD of the connection left on the path's class, as Linux's
	// CM sends them (the REQ, then the REJ of the destroy).
	ASSERT_GE(g_sent.size(), 2u);
	for (const Sent &m : g_sent)
		EXPECT_EQ(m.tclass, 0x68u) << "MAD attribute " << get16(m.mad, 16);

	Side s;
	Handle l = s.create();
	ASSERT_TRUE(s.listen(l, 7021));
	Mad req = peer_req(0x5252, 7021);
	req[116] = 0x24; // the primary traffic class
	const std::size_t before = g_sent.size();
	feed(req);
	uabi_cm_event ev = need(s.event());
	ASSERT_EQ(ev.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(s.qp_attr(ev.handle, UABI_QPS_RTR).attr.ah_attr.grh.traffic_class, 0x24)
	    << "the REQ's";
	s.destroy(ev.handle);
	// The passive side answers on the REQ's class: here its REJ.
	ASSERT_GT(g_sent.size(), before);
	EXPECT_EQ(get16(g_sent.back().mad, 16), 0x12) << "a REJ";
	for (std::size_t i = before; i < g_sent.size(); i++)
		EXPECT_EQ(g_sent[i].tclass, 0x24u) << "MAD attribute " << get16(g_sent[i].mad, 16);
	// So does a REQ no listener takes.
	Mad stray = peer_req(0x5253, 7029);
	stray[116] = 0x30;
	const std::size_t n = g_sent.size();
	feed(stray);
	ASSERT_EQ(g_sent.size(), n + 1);
	EXPECT_EQ(get16(g_sent.back().mad, 16), 0x12) << "a REJ";
	EXPECT_EQ(g_sent.back().tclass, 0x30u);
	s.destroy(l);
}
