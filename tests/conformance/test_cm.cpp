// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The connection manager's objects (docs/cm.md): a connection made between
// two contexts inside the core, its events, the attributes it gives QPs,
// what a closing context leaves its peer, and the errors of bad input.
#include "support/uabi_test.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

using namespace uabi;
using namespace uabi::test;

namespace
{

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

bool readable(int fd)
{
	pollfd p{fd, POLLIN, 0};
	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

// One side: a channel and its IDs in one context.
struct Side {
	Context *ctx;
	Handle ch = 0;
	int fd = -1;

	explicit Side(Context &c) : ctx(&c)
	{
		Command k(UABI_OBJ_CM_CHANNEL, UABI_METHOD_CREATE);
		OutAttr o =
		    k.add_out<std::int32_t>(UABI_ATTR_CM_CHANNEL_FD, kMandatory | UABI_ATTR_F_FD);
		Message m = NEED(ctx->call(std::move(k)));
		ch = m.result(0).out_handle;
		m.read(0, o, fd);
	}
	Result<Handle> create(std::uint16_t ps = UABI_CM_PS_TCP, std::uint64_t uid = 0x1234,
			      std::uint8_t qp_type = UABI_QPT_RC)
	{
		uabi_cm_id_create c{};
		c.uid = uid;
		c.ps = ps;
		c.qp_type = qp_type;
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_CREATE);
		k.add_handle(UABI_ATTR_CM_ID_CHANNEL, ch).add_in(UABI_ATTR_CM_ID_CREATE, c);
		auto m = ctx->call(std::move(k));
		if (!m)
			return make_error(m.error());
		return m->result(0).out_handle;
	}
	Result<Message> simple(Handle id, std::uint16_t method)
	{
		return ctx->call(Command(UABI_OBJ_CM_ID, method, id));
	}
	Result<Message> bind(Handle id, const uabi_cm_addr &a)
	{
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_BIND, id);
		k.add_in(UABI_ATTR_CM_ID_ADDR, a);
		return ctx->call(std::move(k));
	}
	Result<Message> option(Handle id, std::uint32_t name, std::uint32_t value)
	{
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_SET_OPTION, id);
		k.add_in(UABI_ATTR_CM_ID_OPTION, uabi_cm_option{name, value});
		return ctx->call(std::move(k));
	}
	Result<Message> listen(Handle id)
	{
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_LISTEN, id);
		k.add_in(UABI_ATTR_CM_ID_BACKLOG, std::uint32_t(8));
		return ctx->call(std::move(k));
	}
	Result<Message> resolve(Handle id, const uabi_cm_addr &dst)
	{
		uabi_cm_resolve r{};
		r.dst = dst;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_RESOLVE_ADDR, id);
		k.add_in(UABI_ATTR_CM_ID_RESOLVE, r);
		return ctx->call(std::move(k));
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
		p.rnr_retry_count = 7;
		p.valid = 1;
		Command k(UABI_OBJ_CM_ID, method, id);
		k.add_in(UABI_ATTR_CM_ID_CONN, p);
		return ctx->call(std::move(k));
	}
	Result<uabi_cm_event> event()
	{
		Command k(UABI_OBJ_CM_CHANNEL, UABI_CM_CHANNEL_GET_EVENT, ch);
		OutAttr o = k.add_out<uabi_cm_event>(UABI_ATTR_CM_CHANNEL_EVENT);
		auto m = ctx->call(std::move(k));
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
		Message m = NEED(ctx->call(std::move(k)));
		uabi_cm_qp_attr r{};
		m.read(0, o, r);
		return r;
	}
	uabi_cm_id_info destroy(Handle id)
	{
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_DESTROY, id);
		OutAttr o = k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
		Message m = NEED(ctx->call(std::move(k)));
		uabi_cm_id_info info{};
		m.read(0, o, info);
		return info;
	}
};

class Cm : public UabiTest
{
      protected:
	// A listener on 127.0.0.1:port in ctx(), a client ID resolved to it in
	// another context: the two sides and their IDs.
	void connect_pair(Side &srv, Side &cli, Handle *listener, Handle *client,
			  std::uint16_t port)
	{
		*listener = NEED(srv.create());
		NEED(srv.bind(*listener, ipv4("127.0.0.1", port)));
		NEED(srv.listen(*listener));
		*client = NEED(cli.create(UABI_CM_PS_TCP, 0x5678));
		NEED(cli.resolve(*client, ipv4("127.0.0.1", port)));
		EXPECT_EQ(NEED(cli.event()).event, UABI_CM_EVENT_ADDR_RESOLVED);
		NEED(cli.simple(*client, UABI_CM_ID_RESOLVE_ROUTE));
		EXPECT_EQ(NEED(cli.event()).event, UABI_CM_EVENT_ROUTE_RESOLVED);
	}
};

} // namespace

TEST_F(Cm, ConnectAcceptEstablishDisconnect)
{
	Side srv(ctx()), cli(open_extra());
	Handle l, c;
	connect_pair(srv, cli, &l, &c, 7000);
	EXPECT_FALSE(readable(srv.fd));
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 0x111, "hello"));
	EXPECT_TRUE(readable(srv.fd)) << "a pending request makes the fd readable";

	uabi_cm_event req = NEED(srv.event());
	EXPECT_EQ(req.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(req.uid, 0x1234u) << "a request carries the listener's uid";
	EXPECT_NE(req.handle, l) << "and the new ID's handle";
	EXPECT_EQ(req.conn.qp_num, 0x111u);
	EXPECT_EQ(
	    std::string(reinterpret_cast<char *>(req.conn.private_data), req.conn.private_data_len),
	    "hello");
	EXPECT_FALSE(readable(srv.fd));
	Handle s = req.handle;

	NEED(srv.conn(s, UABI_CM_ID_ACCEPT, 0x222, "world"));
	uabi_cm_event rep = NEED(cli.event());
	EXPECT_EQ(rep.event, UABI_CM_EVENT_CONNECT_RESPONSE);
	EXPECT_EQ(rep.uid, 0x5678u);
	EXPECT_EQ(rep.conn.qp_num, 0x222u);
	EXPECT_EQ(
	    std::string(reinterpret_cast<char *>(rep.conn.private_data), rep.conn.private_data_len),
	    "world");

	// What each QP is given: the peer's QPN and the peer's send PSN.
	uabi_cm_qp_attr crtr = cli.qp_attr(c, UABI_QPS_RTR), srtr = srv.qp_attr(s, UABI_QPS_RTR);
	uabi_cm_qp_attr crts = cli.qp_attr(c, UABI_QPS_RTS), srts = srv.qp_attr(s, UABI_QPS_RTS);
	EXPECT_EQ(crtr.attr.dest_qp_num, 0x222u);
	EXPECT_EQ(srtr.attr.dest_qp_num, 0x111u);
	EXPECT_EQ(crtr.attr.rq_psn, srts.attr.sq_psn);
	EXPECT_EQ(srtr.attr.rq_psn, crts.attr.sq_psn);
	EXPECT_TRUE(crtr.mask & UABI_QP_AV);
	EXPECT_EQ(crtr.attr.ah_attr.port_num, 1);
	EXPECT_NE(crtr.attr.ah_attr.dlid, 0) << "LID-addressed";
	uabi_cm_qp_attr init = cli.qp_attr(c, UABI_QPS_INIT);
	EXPECT_EQ(init.mask, unsigned(UABI_QP_STATE | UABI_QP_ACCESS_FLAGS | UABI_QP_PKEY_INDEX |
				      UABI_QP_PORT));
	EXPECT_EQ(init.attr.port_num, 1);

	NEED(cli.conn(c, UABI_CM_ID_ACCEPT, 0x111, "")); // the RTU
	EXPECT_EQ(NEED(srv.event()).event, UABI_CM_EVENT_ESTABLISHED);

	NEED(cli.simple(c, UABI_CM_ID_DISCONNECT));
	EXPECT_EQ(NEED(cli.event()).event, UABI_CM_EVENT_DISCONNECTED);
	uabi_cm_event d = NEED(srv.event());
	EXPECT_EQ(d.event, UABI_CM_EVENT_DISCONNECTED);
	EXPECT_EQ(d.handle, s);
	EXPECT_ERRNO(srv.event(), EAGAIN);

	EXPECT_EQ(srv.destroy(s).events_reported, 2u) << "ESTABLISHED, DISCONNECTED";
	EXPECT_EQ(srv.destroy(l).events_reported, 1u) << "the request";
	EXPECT_EQ(cli.destroy(c).events_reported, 4u);
}

TEST_F(Cm, NoListenerIsRejected)
{
	Side cli(ctx());
	Handle c = NEED(cli.create());
	NEED(cli.resolve(c, ipv4("127.0.0.1", 7001)));
	NEED(cli.event());
	NEED(cli.simple(c, UABI_CM_ID_RESOLVE_ROUTE));
	NEED(cli.event());
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 1, ""));
	uabi_cm_event ev = NEED(cli.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_REJECTED);
	EXPECT_EQ(ev.status, UABI_CM_REJ_INVALID_SERVICE_ID);
}

TEST_F(Cm, RejectCarriesPrivateData)
{
	Side srv(ctx()), cli(open_extra());
	Handle l, c;
	connect_pair(srv, cli, &l, &c, 7002);
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 1, ""));
	Handle s = NEED(srv.event()).handle;
	uabi_cm_reject r{};
	std::memcpy(r.private_data, "busy", 4);
	r.private_data_len = 4;
	Command k(UABI_OBJ_CM_ID, UABI_CM_ID_REJECT, s);
	k.add_in(UABI_ATTR_CM_ID_REJECT, r);
	NEED(ctx().call(std::move(k)));
	uabi_cm_event ev = NEED(cli.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_REJECTED);
	EXPECT_EQ(ev.status, UABI_CM_REJ_CONSUMER_DEFINED);
	EXPECT_EQ(std::string(reinterpret_cast<char *>(ev.conn.private_data), 4), "busy");
}

TEST_F(Cm, ClosingContextDisconnectsPeer)
{
	Context &other = open_extra();
	Side srv(ctx()), cli(other);
	Handle l, c;
	connect_pair(srv, cli, &l, &c, 7003);
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 1, ""));
	Handle s = NEED(srv.event()).handle;
	NEED(srv.conn(s, UABI_CM_ID_ACCEPT, 2, ""));
	NEED(cli.event());
	NEED(cli.conn(c, UABI_CM_ID_ACCEPT, 1, ""));
	NEED(srv.event());
	close_extra(other); // the client's process dies
	uabi_cm_event ev = NEED(srv.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_DISCONNECTED);
	EXPECT_EQ(ev.handle, s);
	EXPECT_OK(srv.simple(s, UABI_CM_ID_DISCONNECT)) << "disconnecting after the peer: no error";
}

TEST_F(Cm, ClosingContextWithPendingRequest)
{
	Context &other = open_extra();
	Side srv(ctx()), cli(other);
	Handle l, c;
	connect_pair(srv, cli, &l, &c, 7004);
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 1, ""));
	close_extra(other); // gone before the listener took the request
	// As the IB CM: the request was received, then its REJ ("timeout"),
	// which, as Linux's ucma, is not reported on an ID not accepted yet
	// (it has no context, uid 0): its ACCEPT fails instead.
	uabi_cm_event req = NEED(srv.event());
	EXPECT_EQ(req.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(req.conn.qp_num, 1u);
	EXPECT_ERRNO(srv.event(), EAGAIN) << "no event for an ID not accepted";
	EXPECT_ERRNO(srv.conn(req.handle, UABI_CM_ID_ACCEPT, 2, ""), EINVAL)
	    << "nobody to accept";
	EXPECT_ERRNO(srv.event(), EAGAIN);
	EXPECT_EQ(srv.destroy(req.handle).events_reported, 0u);
}

// A UD (SIDR) request whose requester went before it was taken just goes.
TEST_F(Cm, UdRequestGoesWithItsRequester)
{
	Context &other = open_extra();
	Side srv(ctx()), cli(other);
	Handle l = NEED(srv.create(UABI_CM_PS_UDP));
	NEED(srv.bind(l, ipv4("127.0.0.1", 7011)));
	NEED(srv.listen(l));
	Handle c = NEED(cli.create(UABI_CM_PS_UDP));
	NEED(cli.resolve(c, ipv4("127.0.0.1", 7011)));
	NEED(cli.event());
	NEED(cli.simple(c, UABI_CM_ID_RESOLVE_ROUTE));
	NEED(cli.event());
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 1, ""));
	close_extra(other);
	EXPECT_ERRNO(srv.event(), EAGAIN);
}

TEST_F(Cm, BadInput)
{
	Side a(ctx());
	EXPECT_ERRNO(a.create(0x9999), EINVAL) << "unknown port space";
	Handle id = NEED(a.create());
	uabi_cm_addr bad{};
	bad.bytes[0] = 27; // AF_IB
	EXPECT_ERRNO(a.bind(id, bad), EAFNOSUPPORT);
	EXPECT_ERRNO(a.simple(id, UABI_CM_ID_RESOLVE_ROUTE), EINVAL) << "no address yet";
	EXPECT_ERRNO(a.conn(id, UABI_CM_ID_CONNECT, 1, ""), EINVAL) << "no route yet";
	EXPECT_ERRNO(a.conn(id, UABI_CM_ID_ACCEPT, 1, ""), EINVAL) << "no request";
	EXPECT_ERRNO(a.simple(id, UABI_CM_ID_DISCONNECT), EINVAL);
	NEED(a.bind(id, ipv4("0.0.0.0", 7005)));
	EXPECT_ERRNO(a.bind(id, ipv4("0.0.0.0", 7006)), EINVAL) << "bound already";
	NEED(a.listen(id));
	Handle id2 = NEED(a.create());
	EXPECT_ERRNO(a.bind(id2, ipv4("127.0.0.1", 7005)), EADDRNOTAVAIL)
	    << "a wildcard holds the port (Linux's cma_check_port())";
	EXPECT_ERRNO(a.event(), EAGAIN);
	EXPECT_ERRNO(ctx().destroy(UABI_OBJ_CM_CHANNEL, a.ch), EBUSY) << "its IDs hold it";
	Command k(UABI_OBJ_CM_ID, UABI_CM_ID_INIT_QP_ATTR, id);
	k.add_in(UABI_ATTR_CM_ID_QP_STATE, std::uint32_t(99));
	k.add_out<uabi_cm_qp_attr>(UABI_ATTR_CM_ID_QP_ATTR);
	EXPECT_ERRNO(ctx().call(std::move(k)), EINVAL);
	Side b(open_extra());
	EXPECT_ERRNO(b.simple(id2, UABI_CM_ID_RESOLVE_ROUTE), ENOENT)
	    << "another context's ID is not there";
}

TEST_F(Cm, UdRequestAndAnswer)
{
	Side srv(ctx()), cli(open_extra());
	Handle l = NEED(srv.create(UABI_CM_PS_UDP));
	NEED(srv.bind(l, ipv4("0.0.0.0", 7010)));
	NEED(srv.listen(l));
	Handle c = NEED(cli.create(UABI_CM_PS_UDP));
	NEED(cli.resolve(c, ipv4("127.0.0.1", 7010)));
	NEED(cli.event());
	NEED(cli.simple(c, UABI_CM_ID_RESOLVE_ROUTE));
	NEED(cli.event());
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 0x301, "ud?"));
	uabi_cm_event req = NEED(srv.event());
	EXPECT_EQ(req.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(req.qp_type, UABI_QPT_UD);
	EXPECT_EQ(req.conn.qp_num, 0x301u);
	EXPECT_EQ(req.conn.qkey, 0x01234567u) << "the UDP port space's QKey";
	EXPECT_EQ(req.ah.port_num, 1);
	EXPECT_NE(req.ah.dlid, 0);
	NEED(srv.conn(req.handle, UABI_CM_ID_ACCEPT, 0x302, "ud!"));
	uabi_cm_event est = NEED(cli.event());
	EXPECT_EQ(est.event, UABI_CM_EVENT_ESTABLISHED);
	EXPECT_EQ(est.conn.qp_num, 0x302u);
	EXPECT_EQ(std::string(reinterpret_cast<char *>(est.conn.private_data), 3), "ud!");
	uabi_cm_qp_attr init = cli.qp_attr(c, UABI_QPS_INIT);
	EXPECT_TRUE(init.mask & UABI_QP_QKEY);
	EXPECT_EQ(init.attr.qkey, 0x01234567u);
	// No connection remains: destroying one side tells the other nothing.
	srv.destroy(req.handle);
	EXPECT_ERRNO(cli.event(), EAGAIN);
}

TEST_F(Cm, MigrateMovesTheIdAndItsEvents)
{
	Side a(ctx());
	Side b(ctx());
	Handle id = NEED(a.create());
	NEED(a.resolve(id, ipv4("127.0.0.1", 7011)));
	EXPECT_TRUE(readable(a.fd));
	Command k(UABI_OBJ_CM_ID, UABI_CM_ID_MIGRATE, id);
	k.add_handle(UABI_ATTR_CM_ID_CHANNEL, b.ch);
	k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
	NEED(ctx().call(std::move(k)));
	EXPECT_FALSE(readable(a.fd)) << "the event moved with the ID";
	EXPECT_TRUE(readable(b.fd));
	EXPECT_EQ(NEED(b.event()).event, UABI_CM_EVENT_ADDR_RESOLVED);
	EXPECT_ERRNO(ctx().destroy(UABI_OBJ_CM_CHANNEL, b.ch), EBUSY) << "the ID holds b now";
	EXPECT_OK(ctx().destroy(UABI_OBJ_CM_CHANNEL, a.ch)) << "and no longer a";
	EXPECT_EQ(b.destroy(id).events_reported, 1u);
}

TEST_F(Cm, ListenerGoingAwayRefusesQueuedRequests)
{
	Side srv(ctx()), cli(open_extra());
	Handle l, c;
	connect_pair(srv, cli, &l, &c, 7012);
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 1, ""));
	srv.destroy(l);
	uabi_cm_event ev = NEED(cli.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_REJECTED);
	EXPECT_ERRNO(srv.event(), EAGAIN);
}

TEST_F(Cm, ListenersConflict)
{
	Side a(ctx()), b(open_extra());
	Handle l1 = NEED(a.create());
	NEED(a.bind(l1, ipv4("127.0.0.1", 7013)));
	NEED(a.listen(l1));
	Handle l2 = NEED(b.create());
	EXPECT_ERRNO(b.bind(l2, ipv4("0.0.0.0", 7013)), EADDRNOTAVAIL)
	    << "another context's listener holds the port; a wildcard";
	EXPECT_ERRNO(b.bind(l2, ipv4("127.0.0.1", 7013)), EADDRINUSE) << "the same address";
	Handle l3 = NEED(b.create(UABI_CM_PS_IB));
	EXPECT_OK(b.bind(l3, ipv4("127.0.0.1", 7013))) << "another port space";
}

TEST_F(Cm, NotLocalIsAnAddressError)
{
	Side a(ctx());
	Handle id = NEED(a.create());
	uabi_cm_resolve r{};
	r.dst = ipv4("198.51.100.77", 7014);
	r.flags = UABI_CM_RESOLVE_F_NOT_LOCAL;
	Command k(UABI_OBJ_CM_ID, UABI_CM_ID_RESOLVE_ADDR, id);
	k.add_in(UABI_ATTR_CM_ID_RESOLVE, r);
	NEED(ctx().call(std::move(k)));
	uabi_cm_event ev = NEED(a.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_ADDR_ERROR);
	EXPECT_EQ(ev.status, -ENODEV);
	EXPECT_ERRNO(a.simple(id, UABI_CM_ID_RESOLVE_ROUTE), EINVAL) << "nothing was resolved";
	r.flags = 0x80;
	Command k2(UABI_OBJ_CM_ID, UABI_CM_ID_RESOLVE_ADDR, id);
	k2.add_in(UABI_ATTR_CM_ID_RESOLVE, r);
	EXPECT_ERRNO(ctx().call(std::move(k2)), EINVAL) << "unknown flag";
}

// XRC over the connection manager (PS_IB, as rdma_xserver/rdma_xclient):
// an XRC_SEND ID connects to an XRC_RECV listener, and each half is given
// only the attributes its side of XRC takes, as the IB CM gives them.
TEST_F(Cm, XrcConnectsWithEachHalfsAttributes)
{
	Side srv(ctx()), cli(open_extra());
	Handle l = NEED(srv.create(UABI_CM_PS_IB, 0x1234, UABI_QPT_XRC_RECV));
	NEED(srv.bind(l, ipv4("127.0.0.1", 7020)));
	NEED(srv.listen(l));
	Handle c = NEED(cli.create(UABI_CM_PS_IB, 0x5678, UABI_QPT_XRC_SEND));
	NEED(cli.resolve(c, ipv4("127.0.0.1", 7020)));
	NEED(cli.event());
	NEED(cli.simple(c, UABI_CM_ID_RESOLVE_ROUTE));
	NEED(cli.event());
	NEED(cli.conn(c, UABI_CM_ID_CONNECT, 0x401, ""));
	uabi_cm_event req = NEED(srv.event());
	ASSERT_EQ(req.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(req.qp_type, UABI_QPT_XRC_RECV);
	NEED(srv.conn(req.handle, UABI_CM_ID_ACCEPT, 0x402, "srqn"));
	EXPECT_EQ(NEED(cli.event()).event, UABI_CM_EVENT_CONNECT_RESPONSE);
	const std::uint32_t rtr = UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU |
				  UABI_QP_DEST_QPN | UABI_QP_RQ_PSN;
	EXPECT_EQ(cli.qp_attr(c, UABI_QPS_RTR).mask, rtr) << "an initiator receives nothing";
	EXPECT_EQ(srv.qp_attr(req.handle, UABI_QPS_RTR).mask,
		  rtr | UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER);
	EXPECT_EQ(cli.qp_attr(c, UABI_QPS_RTS).mask,
		  unsigned(UABI_QP_STATE | UABI_QP_TIMEOUT | UABI_QP_SQ_PSN | UABI_QP_RETRY_CNT |
			   UABI_QP_RNR_RETRY | UABI_QP_MAX_QP_RD_ATOMIC));
	EXPECT_EQ(srv.qp_attr(req.handle, UABI_QPS_RTS).mask,
		  unsigned(UABI_QP_STATE | UABI_QP_TIMEOUT | UABI_QP_SQ_PSN))
	    << "a target sends no requests";
	NEED(cli.conn(c, UABI_CM_ID_ACCEPT, 0x401, ""));
	EXPECT_EQ(NEED(srv.event()).event, UABI_CM_EVENT_ESTABLISHED);
}

// Multicast: a UD ID with a device joins a group; the event carries the
// caller's cookie for the group and what reaches it; leaving drops the
// group's queued events and counts those reported.
TEST_F(Cm, MulticastJoinAndLeave)
{
	Side s(ctx());
	Handle id = NEED(s.create(UABI_CM_PS_UDP));
	uabi_cm_mcast m{};
	m.addr = ipv4("239.1.2.3", 0);
	m.uid = 0x77;
	auto join = [&](Handle h) -> Result<std::uint32_t> {
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_JOIN_MCAST, h);
		k.add_in(UABI_ATTR_CM_ID_MCAST, m);
		OutAttr o = k.add_out<std::uint32_t>(UABI_ATTR_CM_ID_MCAST_ID);
		auto r = s.ctx->call(std::move(k));
		if (!r)
			return make_error(r.error());
		std::uint32_t n = 0;
		r->read(0, o, n);
		return n;
	};
	auto leave = [&](std::uint32_t n) -> Result<std::uint32_t> {
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_LEAVE_MCAST, id);
		k.add_in(UABI_ATTR_CM_ID_MCAST_ID, n);
		OutAttr o = k.add_out<std::uint32_t>(UABI_ATTR_CM_ID_EVENTS);
		auto r = s.ctx->call(std::move(k));
		if (!r)
			return make_error(r.error());
		std::uint32_t v = 0;
		r->read(0, o, v);
		return v;
	};
	EXPECT_ERRNO(join(id), EINVAL) << "no device before an address";
	NEED(s.resolve(id, ipv4("239.1.2.3", 0)));
	EXPECT_EQ(NEED(s.event()).event, UABI_CM_EVENT_ADDR_RESOLVED) << "a group is reachable";
	m.join_flags = 7;
	EXPECT_ERRNO(join(id), EINVAL);
	m.join_flags = UABI_CM_MC_FULLMEMBER;
	std::uint32_t g1 = NEED(join(id));
	uabi_cm_event ev = NEED(s.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_MULTICAST_JOIN);
	EXPECT_EQ(ev.uid, 0x77u) << "the group's cookie, not the ID's";
	EXPECT_EQ(ev.handle, id);
	EXPECT_EQ(ev.conn.qp_num, 0xffffffu);
	EXPECT_EQ(ev.conn.qkey, 0x01234567u);
	EXPECT_TRUE(ev.ah.is_global);
	EXPECT_GE(ev.ah.dlid, 0xc000);
	const std::uint8_t mgid[16] = {0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0,
				       0,    0,    0,    0,    0x0f, 0x01, 0x02, 0x03};
	EXPECT_EQ(std::memcmp(ev.ah.grh.dgid, mgid, 16), 0) << "IPoIB's mapping, rdma_cm's signature";
	// An MGID itself (AF_IB's group): taken as it is, in IPv6's form only;
	// no other flag.
	m.flags = UABI_CM_MCAST_F_MGID;
	EXPECT_ERRNO(join(id), EINVAL) << "an IPv4 address is no MGID";
	uabi_cm_addr mg{};
	mg.bytes[0] = 10; // AF_INET6
	const std::uint8_t given[16] = {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
	std::memcpy(mg.bytes + 8, given, 16);
	m.addr = mg;
	std::uint32_t g0 = NEED(join(id));
	ev = NEED(s.event());
	EXPECT_EQ(ev.event, UABI_CM_EVENT_MULTICAST_JOIN);
	EXPECT_EQ(std::memcmp(ev.ah.grh.dgid, given, 16), 0) << "the MGID as given";
	EXPECT_EQ(NEED(leave(g0)), 1u);
	m.flags = 2;
	EXPECT_ERRNO(join(id), EINVAL);
	m.flags = 0;
	m.addr = ipv4("239.1.2.4", 0);
	std::uint32_t g2 = NEED(join(id));
	EXPECT_NE(g1, g2);
	EXPECT_EQ(NEED(leave(g2)), 0u);
	EXPECT_ERRNO(s.event(), EAGAIN) << "the left group's event went with it";
	EXPECT_EQ(NEED(leave(g1)), 1u);
	EXPECT_ERRNO(leave(g1), ENOENT);
	// An RC ID joins nothing.
	Handle rc = NEED(s.create());
	NEED(s.resolve(rc, ipv4("127.0.0.1", 7021)));
	NEED(s.event());
	EXPECT_ERRNO(join(rc), EINVAL);
	// Groups still joined go with their ID.
	NEED(join(id));
	s.destroy(id);
}

// An ID going away half-way through a connection: the peer gets the REJ
// the IB CM sends then ("timeout" from a requester whose request was
// taken, "consumer defined" after the REP), not a lasting wait; an ID not
// accepted yet learns it from its failing ACCEPT instead (no event).
TEST_F(Cm, GoingAwayHalfWayIsRejected)
{
	Side srv(ctx());
	Handle l, c;
	{
		Context &other = open_extra();
		Side cli(other);
		connect_pair(srv, cli, &l, &c, 7022);
		NEED(cli.conn(c, UABI_CM_ID_CONNECT, 0x501, ""));
		uabi_cm_event req = NEED(srv.event());
		ASSERT_EQ(req.event, UABI_CM_EVENT_CONNECT_REQUEST);
		cli.destroy(c); // after the REQ, before the REP
		// The REJ ("timeout") is not reported on the ID not accepted
		// yet (as Linux's ucma); its ACCEPT fails.
		EXPECT_ERRNO(srv.event(), EAGAIN);
		EXPECT_ERRNO(srv.conn(req.handle, UABI_CM_ID_ACCEPT, 0x503, ""), EINVAL);
		srv.destroy(req.handle);

		Handle c2 = NEED(cli.create(UABI_CM_PS_TCP, 0x5678));
		NEED(cli.resolve(c2, ipv4("127.0.0.1", 7022)));
		NEED(cli.event());
		NEED(cli.simple(c2, UABI_CM_ID_RESOLVE_ROUTE));
		NEED(cli.event());
		NEED(cli.conn(c2, UABI_CM_ID_CONNECT, 0x502, ""));
		req = NEED(srv.event());
		NEED(srv.conn(req.handle, UABI_CM_ID_ACCEPT, 0x503, ""));
		EXPECT_EQ(NEED(cli.event()).event, UABI_CM_EVENT_CONNECT_RESPONSE);
		cli.destroy(c2); // after the REP, before the RTU
		uabi_cm_event rej = NEED(srv.event());
		EXPECT_EQ(rej.event, UABI_CM_EVENT_REJECTED);
		EXPECT_EQ(rej.status, UABI_CM_REJ_CONSUMER_DEFINED);
		srv.destroy(req.handle);
	}
	EXPECT_ERRNO(srv.event(), EAGAIN);
}

uabi_cm_addr ipv6(const char *ip, std::uint16_t port)
{
	sockaddr_in6 s{};
	s.sin6_family = AF_INET6;
	s.sin6_port = htons(port);
	inet_pton(AF_INET6, ip, &s.sin6_addr);
	uabi_cm_addr a{};
	std::memcpy(a.bytes, &s, sizeof(s));
	return a;
}

// SET_OPTION as rdma_set_option(): each option's checks and what it does.
TEST_F(Cm, OptionsAsLinuxsCm)
{
	Side a(ctx()), b(open_extra());
	Handle id = NEED(a.create());
	EXPECT_ERRNO(a.option(id, 4, 0), ENOSYS) << "an option Linux's ucma does not know";
	EXPECT_ERRNO(a.option(id, UABI_CM_OPT_TOS, 256), EINVAL);
	EXPECT_ERRNO(a.option(id, UABI_CM_OPT_REUSEADDR, 2), EINVAL);
	EXPECT_ERRNO(a.option(id, UABI_CM_OPT_AFONLY, 2), EINVAL);
	EXPECT_ERRNO(a.option(id, UABI_CM_OPT_ACK_TIMEOUT, 256), EINVAL);
	Handle ud = NEED(a.create(UABI_CM_PS_UDP, 1, UABI_QPT_UD));
	EXPECT_ERRNO(a.option(ud, UABI_CM_OPT_ACK_TIMEOUT, 10), EINVAL) << "RC and XRC only";
	EXPECT_OK(a.option(ud, UABI_CM_OPT_TOS, 32));

	// REUSEADDR: two IDs that both set it share a port; a third that
	// did not cannot have it; a listener keeps it to itself.
	Handle r1 = NEED(a.create()), r2 = NEED(a.create()), r3 = NEED(a.create());
	NEED(a.option(r1, UABI_CM_OPT_REUSEADDR, 1));
	NEED(a.option(r2, UABI_CM_OPT_REUSEADDR, 1));
	NEED(a.bind(r1, ipv4("127.0.0.1", 7040)));
	EXPECT_OK(a.bind(r2, ipv4("127.0.0.1", 7040))) << "both reuse";
	EXPECT_ERRNO(a.bind(r3, ipv4("127.0.0.1", 7040)), EADDRINUSE) << "one does not";
	EXPECT_ERRNO(a.option(r1, UABI_CM_OPT_REUSEADDR, 0), EINVAL) << "off only while IDLE";
	EXPECT_ERRNO(a.listen(r1), EADDRINUSE) << "a listener does not share its port";
	a.destroy(r2);
	NEED(a.listen(r1));
	EXPECT_ERRNO(a.option(r1, UABI_CM_OPT_REUSEADDR, 1), EINVAL) << "not on a listener";
	EXPECT_ERRNO(a.option(r1, UABI_CM_OPT_AFONLY, 1), EINVAL) << "IDLE or BOUND only";

	// AFONLY: an IPv4 wildcard keeps to IPv4 (Linux's default for IPv4),
	// so an IPv6 wildcard that keeps to IPv6 has the same port beside it;
	// an IPv6 wildcard that does not (IPv6's default) takes IPv4 too.
	Handle v4 = NEED(a.create()), v6 = NEED(a.create(UABI_CM_PS_TCP, 0x66));
	NEED(a.bind(v4, ipv4("0.0.0.0", 7041)));
	EXPECT_ERRNO(a.bind(v6, ipv6("::", 7041)), EADDRNOTAVAIL) << "IPv6 takes both families";
	NEED(a.option(v6, UABI_CM_OPT_AFONLY, 1));
	EXPECT_OK(a.bind(v6, ipv6("::", 7041))) << "each keeps to its family";
	NEED(a.listen(v4));
	NEED(a.listen(v6));
	auto request_to = [&](const uabi_cm_addr &dst) {
		Handle c = NEED(b.create(UABI_CM_PS_TCP, 0x77));
		NEED(b.resolve(c, dst));
		EXPECT_EQ(NEED(b.event()).event, UABI_CM_EVENT_ADDR_RESOLVED);
		NEED(b.simple(c, UABI_CM_ID_RESOLVE_ROUTE));
		EXPECT_EQ(NEED(b.event()).event, UABI_CM_EVENT_ROUTE_RESOLVED);
		NEED(b.conn(c, UABI_CM_ID_CONNECT, 1, ""));
		return c;
	};
	request_to(ipv6("::1", 7041));
	uabi_cm_event req = NEED(a.event());
	EXPECT_EQ(req.event, UABI_CM_EVENT_CONNECT_REQUEST);
	EXPECT_EQ(req.uid, 0x66u) << "the IPv6 listener's, not the IPv4 wildcard's";
	Handle only6 = NEED(a.create()), both = NEED(a.create());
	NEED(a.option(only6, UABI_CM_OPT_AFONLY, 1));
	NEED(a.bind(only6, ipv6("::", 7042)));
	NEED(a.listen(only6));
	request_to(ipv4("127.0.0.1", 7042));
	uabi_cm_event rej = NEED(b.event());
	EXPECT_EQ(rej.event, UABI_CM_EVENT_REJECTED) << "an IPv6-only listener takes no IPv4";
	EXPECT_EQ(rej.status, UABI_CM_REJ_INVALID_SERVICE_ID);
	NEED(a.bind(both, ipv6("::", 7043)));
	NEED(a.listen(both));
	request_to(ipv4("127.0.0.1", 7043));
	EXPECT_EQ(NEED(a.event()).event, UABI_CM_EVENT_CONNECT_REQUEST)
	    << "an IPv6 wildcard takes IPv4 by default";
	Handle v4only = NEED(a.create());
	NEED(a.bind(v4only, ipv4("0.0.0.0", 7044)));
	NEED(a.listen(v4only));
	request_to(ipv6("::1", 7044));
	rej = NEED(b.event());
	EXPECT_EQ(rej.event, UABI_CM_EVENT_REJECTED) << "an IPv4 wildcard takes no IPv6";

	// ACK_TIMEOUT: the QP's timeout INIT_QP_ATTR gives at RTS, on the
	// side that set it; TOS: taken (the traffic class of a RoCE path).
	Handle l, c;
	connect_pair(a, b, &l, &c, 7045);
	NEED(b.option(c, UABI_CM_OPT_ACK_TIMEOUT, 19));
	NEED(b.option(c, UABI_CM_OPT_TOS, 96));
	NEED(b.conn(c, UABI_CM_ID_CONNECT, 0x111, ""));
	Handle s = NEED(a.event()).handle;
	NEED(a.conn(s, UABI_CM_ID_ACCEPT, 0x222, ""));
	EXPECT_EQ(NEED(b.event()).event, UABI_CM_EVENT_CONNECT_RESPONSE);
	uabi_cm_qp_attr crts = b.qp_attr(c, UABI_QPS_RTS), srts = a.qp_attr(s, UABI_QPS_RTS);
	EXPECT_TRUE(crts.mask & UABI_QP_TIMEOUT);
	EXPECT_EQ(crts.attr.timeout, 19) << "the option's";
	EXPECT_NE(srts.attr.timeout, 19) << "the other side's own";
}
