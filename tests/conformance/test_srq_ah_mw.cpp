// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 3 for SRQs (basic and XRC), address handles and memory windows.
#include "support/uabi_test.hpp"

using namespace uabi;
using namespace uabi::test;

namespace
{

constexpr std::uint32_t kSrqMaxWr = 1, kSrqLimit = 2; // IBV_SRQ_*

class SrqAhMw : public UabiTest
{
      protected:
	void SetUp() override
	{
		UabiTest::SetUp();
		pd_ = NEED(ctx().alloc_pd());
	}
	SrqCreate basic(std::uint32_t max_wr = 16)
	{
		SrqCreate s;
		s.pd = pd_;
		s.init.srq_type = UABI_SRQT_BASIC;
		s.init.attr.max_wr = max_wr;
		s.init.attr.max_sge = 2;
		return s;
	}
	uabi_ah_attr query_ah(Handle ah)
	{
		Command c(UABI_OBJ_AH, UABI_METHOD_QUERY, ah);
		OutAttr o = c.add_out<uabi_ah_attr>(UABI_ATTR_AH_ATTR);
		Message m = NEED(ctx().call(std::move(c)));
		uabi_ah_attr a{};
		EXPECT_TRUE(m.read(0, o, a));
		return a;
	}

	Handle pd_ = 0;
};

TEST_F(SrqAhMw, BasicSrqLifecycleQueryAndModify)
{
	Snapshot before = snapshot(ctx());
	SrqCreate sc = basic(16);
	sc.init.attr.srq_limit = 0;
	SrqInfo srq = NEED(ctx().create_srq(sc));
	EXPECT_GE(srq.resp.attr.max_wr, 16u);
	EXPECT_GE(srq.resp.attr.max_sge, 2u);
	EXPECT_EQ(counters().context[UABI_OBJ_SRQ], before.c.context[UABI_OBJ_SRQ] + 1);

	uabi_srq_attr q = NEED(ctx().query_srq(srq.handle));
	EXPECT_EQ(q.max_wr, srq.resp.attr.max_wr);
	EXPECT_EQ(q.srq_limit, 0u);

	uabi_srq_attr m{};
	m.srq_limit = 4;
	EXPECT_OK(ctx().modify_srq(srq.handle, m, kSrqLimit));
	EXPECT_EQ(NEED(ctx().query_srq(srq.handle)).srq_limit, 4u);
	m.max_wr = 64;
	EXPECT_OK(ctx().modify_srq(srq.handle, m, kSrqMaxWr));
	EXPECT_GE(NEED(ctx().query_srq(srq.handle)).max_wr, 64u);

	// Refused modifications change nothing.
	uabi_srq_attr cur = NEED(ctx().query_srq(srq.handle));
	m.srq_limit = cur.max_wr + 1;
	EXPECT_ERRNO(ctx().modify_srq(srq.handle, m, kSrqLimit), EINVAL) << "limit above max_wr";
	EXPECT_ERRNO(ctx().modify_srq(srq.handle, m, 0), EINVAL) << "empty mask";
	EXPECT_ERRNO(ctx().modify_srq(srq.handle, m, 4), EINVAL) << "unknown mask bit";
	m.max_wr = 0;
	EXPECT_ERRNO(ctx().modify_srq(srq.handle, m, kSrqMaxWr), EINVAL) << "max_wr 0";
	uabi_srq_attr after = NEED(ctx().query_srq(srq.handle));
	EXPECT_EQ(after.max_wr, cur.max_wr);
	EXPECT_EQ(after.srq_limit, cur.srq_limit);

	EXPECT_OK(ctx().destroy_srq(srq.handle));
	EXPECT_ERRNO(ctx().destroy_srq(srq.handle), ENOENT);
	EXPECT_ERRNO(ctx().query_srq(srq.handle), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the SRQ");
}

TEST_F(SrqAhMw, InvalidSrqsAreEINVALAndCreateNothing)
{
	Handle xrcd = NEED(ctx().open_xrcd(-1, 0));
	CqInfo cq = NEED(ctx().create_cq(4));
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().create_srq(basic(0)), EINVAL) << "max_wr 0";
	SrqCreate s = basic();
	s.init.attr.max_sge = 0;
	EXPECT_ERRNO(ctx().create_srq(s), EINVAL) << "max_sge 0";
	s = basic();
	s.init.srq_type = 7;
	EXPECT_ERRNO(ctx().create_srq(s), EINVAL) << "unknown srq_type";
	s = basic();
	s.xrcd = xrcd;
	s.cq = cq.handle;
	EXPECT_ERRNO(ctx().create_srq(s), EINVAL) << "basic SRQ with an XRC domain";
	s = basic();
	s.init.srq_type = UABI_SRQT_XRC;
	s.xrcd = xrcd;
	EXPECT_ERRNO(ctx().create_srq(s), EINVAL) << "XRC SRQ without a CQ";
	s = basic();
	s.init.srq_type = UABI_SRQT_XRC;
	s.cq = cq.handle;
	EXPECT_ERRNO(ctx().create_srq(s), EINVAL) << "XRC SRQ without a domain";
	s = basic();
	s.pd.reset();
	EXPECT_ERRNO(ctx().create_srq(s), EINVAL) << "SRQ without a PD";
	expect_snapshot_eq(before, snapshot(ctx()), "after the invalid SRQs");
}

TEST_F(SrqAhMw, XrcSrqLifecycleAndDependencies)
{
	Handle xrcd = NEED(ctx().open_xrcd(-1, 0));
	CqInfo cq = NEED(ctx().create_cq(4));
	Snapshot before = snapshot(ctx());
	SrqCreate s = basic();
	s.init.srq_type = UABI_SRQT_XRC;
	s.xrcd = xrcd;
	s.cq = cq.handle;
	SrqInfo a = NEED(ctx().create_srq(s));
	SrqInfo b = NEED(ctx().create_srq(s));
	EXPECT_NE(a.resp.srqn, 0u) << "an XRC SRQ has a number";
	EXPECT_NE(a.resp.srqn, b.resp.srqn);
	EXPECT_EQ(sw_stats(ctx()).srqns_in_use, before.sw.srqns_in_use + 2);
	EXPECT_GE(NEED(ctx().query_srq(a.handle)).max_wr, 16u);

	EXPECT_ERRNO(ctx().close_xrcd(xrcd), EBUSY) << "the XRC SRQs use the domain";
	EXPECT_ERRNO(ctx().destroy_cq(cq.handle), EBUSY) << "the XRC SRQs use the CQ";
	EXPECT_ERRNO(ctx().dealloc_pd(pd_), EBUSY) << "the XRC SRQs use the PD";

	// An ordinary QP cannot take an XRC SRQ.
	QpCreate qc;
	qc.pd = pd_;
	qc.send_cq = cq.handle;
	qc.recv_cq = cq.handle;
	qc.srq = a.handle;
	qc.init = qp_init(UABI_QPT_RC);
	EXPECT_ERRNO(ctx().create_qp(qc), EINVAL);

	EXPECT_OK(ctx().destroy_srq(a.handle));
	EXPECT_ERRNO(ctx().destroy_srq(a.handle), ENOENT);
	EXPECT_ERRNO(ctx().close_xrcd(xrcd), EBUSY) << "b still uses the domain";
	EXPECT_OK(ctx().destroy_srq(b.handle));
	expect_snapshot_eq(before, snapshot(ctx()), "after the XRC SRQs");
	EXPECT_OK(ctx().close_xrcd(xrcd));
	EXPECT_OK(ctx().destroy_cq(cq.handle));
}

TEST_F(SrqAhMw, AhLifecycleAndQuery)
{
	Snapshot before = snapshot(ctx());
	uabi_ah_attr av = local_av();
	av.sl = 5;
	av.static_rate = 3;
	Handle ah = NEED(ctx().create_ah(pd_, av));
	EXPECT_EQ(counters().context[UABI_OBJ_AH], before.c.context[UABI_OBJ_AH] + 1);
	uabi_ah_attr q = query_ah(ah);
	EXPECT_EQ(q.dlid, av.dlid);
	EXPECT_EQ(q.sl, av.sl);
	EXPECT_EQ(q.port_num, av.port_num);
	EXPECT_EQ(q.static_rate, av.static_rate);

	uabi_ah_attr g = local_av();
	g.is_global = 1;
	g.grh.sgid_index = 0;
	g.grh.hop_limit = 1;
	Gid gid = NEED(ctx().query_gid(1, 0));
	std::memcpy(g.grh.dgid, gid.data(), 16);
	Handle ah2 = NEED(ctx().create_ah(pd_, g));
	EXPECT_EQ(std::memcmp(query_ah(ah2).grh.dgid, gid.data(), 16), 0);

	EXPECT_OK(ctx().destroy_ah(ah));
	EXPECT_ERRNO(ctx().destroy_ah(ah), ENOENT);
	EXPECT_OK(ctx().destroy_ah(ah2));
	EXPECT_ERRNO(ctx().destroy_ah(ah2), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the AHs");
}

TEST_F(SrqAhMw, InvalidAhsAreEINVALAndCreateNothing)
{
	Snapshot before = snapshot(ctx());
	uabi_ah_attr a = local_av();
	a.port_num = 2;
	EXPECT_ERRNO(ctx().create_ah(pd_, a), EINVAL) << "port 2";
	a.port_num = 0;
	EXPECT_ERRNO(ctx().create_ah(pd_, a), EINVAL) << "port 0";
	a = local_av();
	a.sl = 16;
	EXPECT_ERRNO(ctx().create_ah(pd_, a), EINVAL) << "sl 16";
	a = local_av();
	a.is_global = 1;
	a.grh.sgid_index = 1;
	EXPECT_ERRNO(ctx().create_ah(pd_, a), EINVAL) << "sgid_index past the GID table";
	a = local_av();
	a.is_global = 1;
	a.grh.flow_label = 1u << 20;
	EXPECT_ERRNO(ctx().create_ah(pd_, a), EINVAL) << "flow label of 21 bits";
	EXPECT_ERRNO(ctx().create_ah(Handle(9999), local_av()), ENOENT) << "no such PD";
	expect_snapshot_eq(before, snapshot(ctx()), "after the invalid AHs");
}

TEST_F(SrqAhMw, MemoryWindowsAreEOPNOTSUPPAndCreateNothing)
{
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().alloc_mw(pd_, 1), EOPNOTSUPP);
	EXPECT_ERRNO(ctx().alloc_mw(pd_, 2), EOPNOTSUPP);
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused MWs");
	EXPECT_EQ(counters().context[UABI_OBJ_MW], 0u);
	EXPECT_ERRNO(ctx().dealloc_mw(0x7777), ENOENT);
	// No dependency was left on the PD.
	EXPECT_OK(ctx().dealloc_pd(pd_));
}

} // namespace
