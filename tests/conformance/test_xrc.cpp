// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 8: XRC domains and receive-QP registrations.
#include "support/uabi_test.hpp"

#include <fcntl.h>

using namespace uabi;
using namespace uabi::test;

namespace
{

constexpr std::uint32_t O_CREAT_ = UABI_XRCD_O_CREAT, O_EXCL_ = UABI_XRCD_O_EXCL;

class Xrc : public UabiTest
{
      protected:
	// Creates a receive QP in the domain; returns the registration.
	Handle create_rcv_qp(Context &c, Handle xrcd, std::uint32_t &qpn)
	{
		qpn = UABI_XRC_QPN_CREATE;
		Handle reg = NEED(c.register_xrc_rcv_qp(xrcd, qpn, qp_init(UABI_QPT_XRC_RECV)));
		EXPECT_NE(qpn, UABI_XRC_QPN_CREATE) << "the new qpn is written back";
		EXPECT_LT(qpn, 1u << 24);
		return reg;
	}
	static uabi_qp_attr to_init() { return valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT); }
	static constexpr std::uint32_t kInitMask =
	    UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS;
};

TEST_F(Xrc, XrcdLifecycle)
{
	Snapshot before = snapshot(ctx());
	Handle anon = NEED(ctx().open_xrcd(-1, 0));
	TempFile f;
	Handle named = NEED(ctx().open_xrcd(f.fd(), O_CREAT_));
	EXPECT_NE(anon, named);
	EXPECT_EQ(counters().context[UABI_OBJ_XRCD], before.c.context[UABI_OBJ_XRCD] + 2);
	EXPECT_OK(ctx().close_xrcd(anon));
	EXPECT_ERRNO(ctx().close_xrcd(anon), ENOENT);
	EXPECT_OK(ctx().close_xrcd(named));
	EXPECT_ERRNO(ctx().close_xrcd(named), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the domains");
}

TEST_F(Xrc, SameFileFromTwoContextsIsOneDomain)
{
	TempFile f;
	Context &b = open_extra();
	Handle xa = NEED(ctx().open_xrcd(f.fd(), O_CREAT_));
	Handle xb = NEED(b.open_xrcd(f.fd(), O_CREAT_));
	std::uint32_t qpn;
	Handle ra = create_rcv_qp(ctx(), xa, qpn);
	Handle rb = NEED(b.register_xrc_rcv_qp(xb, qpn));
	EXPECT_NE(rb, 0u);
	EXPECT_EQ(NEED(b.query_xrc_rcv_qp(xb, qpn)).qp_state, unsigned(UABI_QPS_RESET));
	// Opening the same file through another fd is the same domain too.
	int fd2 = open(f.path().c_str(), O_RDONLY);
	ASSERT_GE(fd2, 0);
	Handle xb2 = NEED(b.open_xrcd(fd2, 0));
	close(fd2);
	Handle rb2 = NEED(b.register_xrc_rcv_qp(xb2, qpn));
	EXPECT_OK(b.destroy_qp(rb2));
	EXPECT_OK(b.close_xrcd(xb2));
	EXPECT_OK(b.unregister_xrc_rcv_qp(xb, qpn));
	EXPECT_OK(ctx().destroy_qp(ra));
}

TEST_F(Xrc, DifferentFileIsADifferentDomain)
{
	TempFile f, g;
	Context &b = open_extra();
	Handle xa = NEED(ctx().open_xrcd(f.fd(), O_CREAT_));
	Handle xg = NEED(b.open_xrcd(g.fd(), O_CREAT_));
	std::uint32_t qpn;
	create_rcv_qp(ctx(), xa, qpn);
	Snapshot before = snapshot(b);
	EXPECT_ERRNO(b.register_xrc_rcv_qp(xg, qpn), EINVAL);
	EXPECT_ERRNO(b.query_xrc_rcv_qp(xg, qpn), EINVAL);
	expect_snapshot_eq(before, snapshot(b), "after the refused registration");
	// Anonymous domains are private to each open.
	Handle anon1 = NEED(ctx().open_xrcd(-1, 0));
	Handle anon2 = NEED(ctx().open_xrcd(-1, 0));
	std::uint32_t q1;
	create_rcv_qp(ctx(), anon1, q1);
	EXPECT_ERRNO(ctx().register_xrc_rcv_qp(anon2, q1), EINVAL);
	EXPECT_ERRNO(ctx().register_xrc_rcv_qp(xa, q1), EINVAL);
}

TEST_F(Xrc, OpenFlagsBehaveLikeOpen2)
{
	TempFile f;
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().open_xrcd(f.fd(), 0), EAGAIN) << "no domain yet, no O_CREAT (Linux: EAGAIN)";
	EXPECT_ERRNO(ctx().open_xrcd(f.fd(), 01000 /* O_TRUNC */), EINVAL) << "unknown flag";
	expect_snapshot_eq(before, snapshot(ctx()), "after refused opens");

	Handle x = NEED(ctx().open_xrcd(f.fd(), O_CREAT_ | O_EXCL_));
	Context &b = open_extra();
	Snapshot b_before = snapshot(b);
	EXPECT_ERRNO(b.open_xrcd(f.fd(), O_CREAT_ | O_EXCL_), EINVAL) << "exists, O_EXCL";
	expect_snapshot_eq(b_before, snapshot(b), "after O_EXCL");
	Handle xb = NEED(b.open_xrcd(f.fd(), 0)) /* exists: no O_CREAT needed */;
	EXPECT_OK(b.close_xrcd(xb));
	EXPECT_OK(ctx().close_xrcd(x));
	// The domain went with its last user.
	EXPECT_ERRNO(b.open_xrcd(f.fd(), 0), EAGAIN);
}

TEST_F(Xrc, BadFdIsEBADF)
{
	Snapshot before = snapshot(ctx());
	int fd = open("/dev/null", O_RDONLY);
	ASSERT_GE(fd, 0);
	close(fd); // a number that is certainly not open now
	EXPECT_ERRNO(ctx().open_xrcd(fd, O_CREAT_), EBADF);
	EXPECT_ERRNO(ctx().open_xrcd(-5, O_CREAT_), EBADF);
	expect_snapshot_eq(before, snapshot(ctx()), "after bad fds");
}

TEST_F(Xrc, RegistrationOutlivesItsCreator)
{
	TempFile f;
	Context &creator = open_extra();
	Context &b = ctx();
	Handle xc = NEED(creator.open_xrcd(f.fd(), O_CREAT_));
	Handle xb = NEED(b.open_xrcd(f.fd(), O_CREAT_));
	std::uint32_t qpn;
	create_rcv_qp(creator, xc, qpn);
	EXPECT_EQ(NEED(creator.query_xrc_rcv_qp(xc, qpn)).qp_state, unsigned(UABI_QPS_RESET))
	    << "the creator is registered";
	NEED(b.register_xrc_rcv_qp(xb, qpn));
	uabi_sw_stats sw_before = sw_stats(b);

	close_extra(creator);
	EXPECT_EQ(sw_stats(b).qpns_in_use, sw_before.qpns_in_use) << "the QP still exists";
	EXPECT_EQ(NEED(b.query_xrc_rcv_qp(xb, qpn)).qp_state, unsigned(UABI_QPS_RESET));
	EXPECT_OK(b.modify_xrc_rcv_qp(xb, qpn, to_init(), kInitMask));
	EXPECT_EQ(NEED(b.query_xrc_rcv_qp(xb, qpn)).qp_state, unsigned(UABI_QPS_INIT));

	// The last registration goes: so does the QP.
	EXPECT_OK(b.unregister_xrc_rcv_qp(xb, qpn));
	EXPECT_EQ(sw_stats(b).qpns_in_use, sw_before.qpns_in_use - 1) << "the QP is gone";
	EXPECT_ERRNO(b.query_xrc_rcv_qp(xb, qpn), EINVAL);
	Snapshot before = snapshot(b);
	EXPECT_ERRNO(b.register_xrc_rcv_qp(xb, qpn), EINVAL) << "the qpn is gone";
	expect_snapshot_eq(before, snapshot(b), "after registering a gone qpn");
	EXPECT_ERRNO(b.unregister_xrc_rcv_qp(xb, qpn), EINVAL) << "double unregister";
	EXPECT_OK(b.close_xrcd(xb));
}

TEST_F(Xrc, DoubleUnregisterIsEINVAL)
{
	Handle x = NEED(ctx().open_xrcd(-1, 0));
	std::uint32_t qpn;
	create_rcv_qp(ctx(), x, qpn);
	auto before = counters();
	EXPECT_OK(ctx().unregister_xrc_rcv_qp(x, qpn));
	EXPECT_EQ(counters().context[UABI_OBJ_QP], before.context[UABI_OBJ_QP] - 1)
	    << "the registration handle is gone";
	EXPECT_ERRNO(ctx().unregister_xrc_rcv_qp(x, qpn), EINVAL);
	EXPECT_OK(ctx().close_xrcd(x)) << "no registration keeps the domain busy";
}

TEST_F(Xrc, RegisteringAQpnThatNeverExistedIsEINVAL)
{
	Handle x = NEED(ctx().open_xrcd(-1, 0));
	QpEnv env = make_env(ctx());
	QpInfo rc = make_qp(ctx(), env, UABI_QPT_RC);
	Snapshot before = snapshot(ctx());
	for (std::uint32_t qpn : {0u, 1u, 0xfffffeu, 0xfffffffeu})
		EXPECT_ERRNO(ctx().register_xrc_rcv_qp(x, qpn), EINVAL) << "qpn " << qpn;
	EXPECT_ERRNO(ctx().register_xrc_rcv_qp(x, rc.resp.qpn), EINVAL)
	    << "an RC QP's number is not a receive QP of the domain";
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused registrations");
}

TEST_F(Xrc, ModifyAndQueryNeedARegistration)
{
	TempFile f;
	Handle xa = NEED(ctx().open_xrcd(f.fd(), O_CREAT_));
	std::uint32_t qpn;
	create_rcv_qp(ctx(), xa, qpn);
	Context &b = open_extra();
	Handle xb = NEED(b.open_xrcd(f.fd(), 0));
	EXPECT_ERRNO(b.query_xrc_rcv_qp(xb, qpn), EINVAL);
	EXPECT_ERRNO(b.modify_xrc_rcv_qp(xb, qpn, to_init(), kInitMask), EINVAL);
	EXPECT_ERRNO(b.unregister_xrc_rcv_qp(xb, qpn), EINVAL);
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(xa, qpn)).qp_state, unsigned(UABI_QPS_RESET))
	    << "b's refused modify changed nothing";
}

TEST_F(Xrc, DestroyingTheRegistrationHandleIsAnUnregister)
{
	TempFile f;
	Handle xa = NEED(ctx().open_xrcd(f.fd(), O_CREAT_));
	std::uint32_t qpn;
	Handle ra = create_rcv_qp(ctx(), xa, qpn);
	Context &b = open_extra();
	Handle xb = NEED(b.open_xrcd(f.fd(), 0));
	Handle rb = NEED(b.register_xrc_rcv_qp(xb, qpn));
	EXPECT_ERRNO(b.close_xrcd(xb), EBUSY) << "a registration uses the domain handle";

	EXPECT_OK(b.destroy_qp(rb));
	EXPECT_ERRNO(b.destroy_qp(rb), ENOENT);
	EXPECT_ERRNO(b.query_xrc_rcv_qp(xb, qpn), EINVAL) << "b is no longer registered";
	EXPECT_ERRNO(b.unregister_xrc_rcv_qp(xb, qpn), EINVAL);
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(xa, qpn)).qp_state, unsigned(UABI_QPS_RESET))
	    << "a is still registered";
	EXPECT_OK(b.close_xrcd(xb));

	uabi_sw_stats sw = sw_stats(ctx());
	EXPECT_OK(ctx().destroy_qp(ra));
	EXPECT_EQ(sw_stats(ctx()).qpns_in_use, sw.qpns_in_use - 1) << "last registration";
	EXPECT_ERRNO(ctx().query_xrc_rcv_qp(xa, qpn), EINVAL);
	EXPECT_ERRNO(ctx().unregister_xrc_rcv_qp(xa, qpn), EINVAL);
}

TEST_F(Xrc, UpstreamStyleCreateQpOfTypeXrcRecvIsARegistration)
{
	TempFile f;
	Handle xa = NEED(ctx().open_xrcd(f.fd(), O_CREAT_));
	QpCreate qc;
	qc.xrcd = xa;
	qc.init = qp_init(UABI_QPT_XRC_RECV);
	QpInfo qp = NEED(ctx().create_qp(qc));
	std::uint32_t qpn = qp.resp.qpn;
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(xa, qpn)).qp_state, unsigned(UABI_QPS_RESET));
	EXPECT_EQ(NEED(ctx().query_qp(qp.handle)).init.qp_type, unsigned(UABI_QPT_XRC_RECV));
	EXPECT_ERRNO(ctx().close_xrcd(xa), EBUSY);

	Context &b = open_extra();
	Handle xb = NEED(b.open_xrcd(f.fd(), 0));
	Handle rb = NEED(b.register_xrc_rcv_qp(xb, qpn));
	EXPECT_OK(ctx().destroy_qp(qp.handle));
	EXPECT_ERRNO(ctx().query_xrc_rcv_qp(xa, qpn), EINVAL) << "a unregistered";
	EXPECT_EQ(NEED(b.query_xrc_rcv_qp(xb, qpn)).qp_state, unsigned(UABI_QPS_RESET))
	    << "b keeps the QP alive";
	EXPECT_OK(b.destroy_qp(rb));
	EXPECT_ERRNO(b.register_xrc_rcv_qp(xb, qpn), EINVAL) << "gone with the last one";
}

TEST_F(Xrc, UpstreamStyleCreateRejectsPdAndCqs)
{
	Handle x = NEED(ctx().open_xrcd(-1, 0));
	QpEnv env = make_env(ctx());
	Snapshot before = snapshot(ctx());
	QpCreate qc;
	qc.xrcd = x;
	qc.init = qp_init(UABI_QPT_XRC_RECV);
	qc.pd = env.pd;
	EXPECT_ERRNO(ctx().create_qp(qc), EINVAL) << "with a PD";
	qc.pd.reset();
	qc.send_cq = env.cq;
	EXPECT_ERRNO(ctx().create_qp(qc), EINVAL) << "with a CQ";
	qc.send_cq.reset();
	qc.xrcd.reset();
	EXPECT_ERRNO(ctx().create_qp(qc), EINVAL) << "without a domain";
	expect_snapshot_eq(before, snapshot(ctx()), "after refused XRC_RECV creations");
}

TEST_F(Xrc, EachRegistrationIsCountedAndDroppedOnce)
{
	Handle x = NEED(ctx().open_xrcd(-1, 0));
	std::uint32_t qpn;
	Handle r1 = create_rcv_qp(ctx(), x, qpn);
	Handle r2 = NEED(ctx().register_xrc_rcv_qp(x, qpn));
	EXPECT_NE(r1, r2);
	uabi_sw_stats sw = sw_stats(ctx());
	EXPECT_OK(ctx().unregister_xrc_rcv_qp(x, qpn));
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(x, qpn)).qp_state, unsigned(UABI_QPS_RESET))
	    << "one registration is left";
	EXPECT_EQ(sw_stats(ctx()).qpns_in_use, sw.qpns_in_use);
	EXPECT_OK(ctx().unregister_xrc_rcv_qp(x, qpn));
	EXPECT_EQ(sw_stats(ctx()).qpns_in_use, sw.qpns_in_use - 1);
	EXPECT_ERRNO(ctx().destroy_qp(r1), ENOENT);
	EXPECT_ERRNO(ctx().destroy_qp(r2), ENOENT);
}

} // namespace

namespace
{
// OFED 1.5's IBV_QPT_XRC: an XRC send QP bound to a domain (also its
// target), which holds the domain.
TEST_F(Xrc, SendQpBoundToADomainHoldsIt)
{
	Handle x = NEED(ctx().open_xrcd(-1, 0));
	QpEnv env = make_env(ctx());
	QpCreate c;
	c.pd = env.pd;
	c.send_cq = env.cq;
	c.xrcd = Ref(x);
	c.init = qp_init(UABI_QPT_XRC_SEND);
	QpInfo qp = NEED(ctx().create_qp(c));
	EXPECT_ERRNO(ctx().close_xrcd(x), EBUSY) << "the QP depends on its domain";
	// As a target it takes RC's attributes: RTR with MAX_DEST_RD_ATOMIC
	// and MIN_RNR_TIMER is accepted and kept.
	uabi_qp_attr a = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT);
	EXPECT_OK(ctx().modify_qp(qp.handle, a,
				  UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS));
	a = valid_qp_attr(UABI_QPS_INIT, UABI_QPS_RTR);
	a.min_rnr_timer = 12;
	EXPECT_OK(ctx().modify_qp(qp.handle, a,
				  UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU | UABI_QP_DEST_QPN |
				      UABI_QP_RQ_PSN | UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER));
	EXPECT_EQ(NEED(ctx().query_qp(qp.handle)).attr.min_rnr_timer, 12u);
	EXPECT_OK(ctx().destroy_qp(qp.handle));
	EXPECT_OK(ctx().close_xrcd(x));

	// Only XRC send QPs take a domain.
	Handle y = NEED(ctx().open_xrcd(-1, 0));
	Snapshot before = snapshot(ctx());
	QpCreate rc = c;
	rc.xrcd = Ref(y);
	rc.recv_cq = env.cq;
	rc.init = qp_init(UABI_QPT_RC);
	EXPECT_ERRNO(ctx().create_qp(rc), EINVAL);
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused QP");
	EXPECT_OK(ctx().close_xrcd(y));
}
} // namespace
