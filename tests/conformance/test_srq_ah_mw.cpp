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

// ------------------------------------------------------ memory windows
constexpr std::uint32_t kMwBindAccess = 16; // IBV_ACCESS_MW_BIND

// A window's new key: its index, another low byte.
std::uint32_t next_key(std::uint32_t k)
{
	return (k & ~0xffu) | ((k + 1) & 0xffu);
}

uabi_mw_bind window(const void *base, std::uint64_t off, std::uint64_t len, std::uint32_t access,
		    std::uint32_t rkey)
{
	uabi_mw_bind b{};
	b.addr = reinterpret_cast<std::uintptr_t>(base) + off;
	b.length = len;
	b.access = access;
	b.rkey = rkey;
	return b;
}

// LOCAL_INV (or SEND_WITH_INV's, remote) through the sw driver's arena.
Result<Message> invalidate(Context &c, std::uint32_t qpn, std::uint32_t rkey, bool remote)
{
	Command cmd(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_INVALIDATE);
	cmd.add_in(UABI_SW_ATTR_QPN, qpn).add_in(UABI_SW_ATTR_RKEY, rkey);
	if (remote)
		cmd.add_in(UABI_SW_ATTR_INV_FLAGS, std::uint32_t(UABI_SW_INV_REMOTE));
	return c.call(std::move(cmd));
}

TEST_F(SrqAhMw, MemoryWindowsAllocateAKeyOfTheirOwnAndFreeIt)
{
	Snapshot before = snapshot(ctx());
	MwInfo w1 = NEED(ctx().alloc_mw(pd_, UABI_MW_TYPE_1));
	MwInfo w2 = NEED(ctx().alloc_mw(pd_, UABI_MW_TYPE_2));
	EXPECT_NE(w1.rkey, 0u);
	EXPECT_NE(w1.rkey >> 8, w2.rkey >> 8) << "each window has its own key index";
	EXPECT_EQ(counters().context[UABI_OBJ_MW], before.c.context[UABI_OBJ_MW] + 2);
	EXPECT_EQ(sw_stats(ctx()).mr_keys_in_use, before.sw.mr_keys_in_use + 2);
	EXPECT_ERRNO(ctx().dealloc_pd(pd_), EBUSY) << "windows depend on their PD";

	Snapshot mid = snapshot(ctx());
	EXPECT_ERRNO(ctx().alloc_mw(pd_, 3), EINVAL) << "no type 3";
	EXPECT_ERRNO(ctx().alloc_mw(pd_, 0), EINVAL);
	EXPECT_ERRNO(ctx().alloc_mw(Handle(9999), 1), ENOENT);
	expect_snapshot_eq(mid, snapshot(ctx()), "after the refused windows");

	EXPECT_OK(ctx().dealloc_mw(w1.handle));
	EXPECT_OK(ctx().dealloc_mw(w2.handle));
	EXPECT_ERRNO(ctx().dealloc_mw(w1.handle), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the windows");
	EXPECT_OK(ctx().dealloc_pd(pd_));
}

TEST_F(SrqAhMw, MemoryWindowBindChecksEverythingFirst)
{
	static char buf[8192];
	static char ro[4096];
	CqInfo cq = NEED(ctx().create_cq(4));
	QpInfo qp = make_qp(ctx(), QpEnv{pd_, cq.handle}, UABI_QPT_RC);
	QpInfo ud = make_qp(ctx(), QpEnv{pd_, cq.handle}, UABI_QPT_UD);
	MrInfo mr = NEED(ctx().reg_mr(pd_, buf, sizeof(buf), kLocalWrite | kMwBindAccess));
	MrInfo plain = NEED(ctx().reg_mr(pd_, buf, sizeof(buf), kLocalWrite));
	MrInfo rdonly = NEED(ctx().reg_mr(pd_, ro, sizeof(ro), kMwBindAccess));
	Handle pd2 = NEED(ctx().alloc_pd());
	MrInfo other = NEED(ctx().reg_mr(pd2, buf, sizeof(buf), kLocalWrite | kMwBindAccess));
	QpInfo qp2 = make_qp(ctx(), QpEnv{pd2, cq.handle}, UABI_QPT_RC);
	MwInfo w = NEED(ctx().alloc_mw(pd_, UABI_MW_TYPE_1));
	const std::uint32_t k = next_key(w.rkey);

	Snapshot before = snapshot(ctx());
	auto refused = [&](std::optional<Ref> m, Handle q, uabi_mw_bind b, int err, const char *why) {
		EXPECT_ERRNO(ctx().bind_mw(w.handle, m, Ref(q), b), err) << why;
	};
	refused(Ref(plain.handle), qp.handle, window(buf, 0, 64, kRemoteRead, k), EACCES,
		"the MR does not allow MW_BIND");
	refused(Ref(rdonly.handle), qp.handle, window(ro, 0, 64, kRemoteWrite, k), EACCES,
		"remote write over an MR without local write");
	refused(Ref(rdonly.handle), qp.handle, window(ro, 0, 64, kRemoteAtomic, k), EACCES,
		"remote atomic over an MR without local write");
	refused(Ref(mr.handle), qp.handle, window(buf, 8000, 193, kRemoteRead, k), EINVAL,
		"past the MR's end");
	refused(Ref(mr.handle), qp.handle, window(buf, 0, ~0ull, kRemoteRead, k), EINVAL,
		"a length that wraps");
	refused(Ref(mr.handle), qp.handle, window(buf, 0, 64, kRemoteRead, k + 0x100), EINVAL,
		"a key of another index");
	refused(Ref(mr.handle), qp.handle, window(buf, 0, 64, kLocalWrite, k), EINVAL,
		"local access is not a window's to give");
	refused(Ref(mr.handle), qp.handle, window(buf, 0, 64, 32 /* ZERO_BASED */, k), EINVAL,
		"zero-based windows");
	refused(Ref(other.handle), qp.handle, window(buf, 0, 64, kRemoteRead, k), EINVAL,
		"an MR of another PD");
	refused(Ref(mr.handle), qp2.handle, window(buf, 0, 64, kRemoteRead, k), EINVAL,
		"a QP of another PD");
	refused(Ref(mr.handle), ud.handle, window(buf, 0, 64, kRemoteRead, k), EINVAL,
		"a UD QP binds nothing");
	refused(std::nullopt, qp.handle, window(buf, 0, 64, kRemoteRead, k), EINVAL,
		"a bind without an MR");
	EXPECT_ERRNO(ctx().bind_mw(w.handle, Ref(mr.handle), Ref(Handle(9999)),
				   window(buf, 0, 64, kRemoteRead, k)),
		     ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused binds");

	EXPECT_OK(ctx().dealloc_mw(w.handle));
	for (Handle q : {qp.handle, ud.handle, qp2.handle})
		EXPECT_OK(ctx().destroy_qp(q));
	for (Handle m : {mr.handle, plain.handle, rdonly.handle, other.handle})
		EXPECT_OK(ctx().dereg_mr(m));
	EXPECT_OK(ctx().destroy_cq(cq.handle));
	EXPECT_OK(ctx().dealloc_pd(pd2));
}

TEST_F(SrqAhMw, ABoundWindowHoldsItsMrUntilUnboundOrInvalidated)
{
	static char buf[4096];
	CqInfo cq = NEED(ctx().create_cq(4));
	QpInfo qp = make_qp(ctx(), QpEnv{pd_, cq.handle}, UABI_QPT_RC);
	QpInfo qp_b = make_qp(ctx(), QpEnv{pd_, cq.handle}, UABI_QPT_RC);
	MrInfo mr = NEED(ctx().reg_mr(pd_, buf, sizeof(buf), kLocalWrite | kMwBindAccess));
	MwInfo w1 = NEED(ctx().alloc_mw(pd_, UABI_MW_TYPE_1));
	MwInfo w2 = NEED(ctx().alloc_mw(pd_, UABI_MW_TYPE_2));

	// Type 1: bound, rebound under a newer key, unbound by length 0.
	std::uint32_t k1 = next_key(w1.rkey);
	EXPECT_EQ(NEED(ctx().bind_mw(w1.handle, Ref(mr.handle), Ref(qp.handle),
				     window(buf, 64, 128, kRemoteRead | kRemoteWrite, k1))),
		  k1);
	EXPECT_ERRNO(ctx().dereg_mr(mr.handle), EBUSY) << "a window is bound to it";
	uabi_mr_reg reg{};
	reg.access = kLocalWrite | kMwBindAccess | kRemoteRead;
	EXPECT_ERRNO(ctx().rereg_mr(mr.handle, UABI_MR_REREG_ACCESS, std::nullopt, reg), EBUSY);
	EXPECT_ERRNO(invalidate(ctx(), qp.resp.qpn, k1, false), EINVAL)
	    << "a type 1 window is not invalidated, it is unbound";
	k1 = next_key(k1);
	EXPECT_EQ(NEED(ctx().bind_mw(w1.handle, Ref(mr.handle), Ref(qp.handle),
				     window(buf, 0, 8, kRemoteRead, k1))),
		  k1);
	k1 = next_key(k1);
	EXPECT_EQ(NEED(ctx().bind_mw(w1.handle, std::nullopt, Ref(qp.handle), window(buf, 0, 0, 0, k1))),
		  k1);
	EXPECT_OK(ctx().rereg_mr(mr.handle, UABI_MR_REREG_ACCESS, std::nullopt, reg))
	    << "unbound: the MR is free again";

	// Type 2: bound to a QP, once; invalidated locally or by that QP's peer.
	std::uint32_t k2 = next_key(w2.rkey);
	EXPECT_ERRNO(ctx().bind_mw(w2.handle, Ref(mr.handle), Ref(qp.handle),
				   window(buf, 0, 0, kRemoteRead, k2)),
		     EINVAL)
	    << "type 2 has no unbind";
	EXPECT_EQ(NEED(ctx().bind_mw(w2.handle, Ref(mr.handle), Ref(qp.handle),
				     window(buf, 0, 64, kRemoteRead, k2))),
		  k2);
	EXPECT_ERRNO(ctx().bind_mw(w2.handle, Ref(mr.handle), Ref(qp.handle),
				   window(buf, 0, 64, kRemoteRead, next_key(k2))),
		     EINVAL)
	    << "a bound type 2 window must be invalidated first";
	EXPECT_ERRNO(ctx().dereg_mr(mr.handle), EBUSY);
	EXPECT_ERRNO(invalidate(ctx(), qp.resp.qpn, next_key(k2), false), EINVAL) << "a stale key";
	EXPECT_ERRNO(invalidate(ctx(), qp_b.resp.qpn, k2, true), EINVAL)
	    << "remotely, only through the QP it is bound to";
	EXPECT_ERRNO(invalidate(ctx(), 0x7fffff, k2, false), EINVAL) << "no such QP number";
	EXPECT_ERRNO(invalidate(ctx(), qp.resp.qpn, k2 & 0xff, false), EINVAL) << "index 0";
	EXPECT_OK(invalidate(ctx(), qp.resp.qpn, k2, true));
	EXPECT_ERRNO(invalidate(ctx(), qp.resp.qpn, k2, false), EINVAL) << "already invalid";
	EXPECT_OK(ctx().dereg_mr(mr.handle)) << "nothing holds the MR any more";

	// Bound again (through the other QP), then freed with the window.
	mr = NEED(ctx().reg_mr(pd_, buf, sizeof(buf), kLocalWrite | kMwBindAccess));
	k2 = next_key(k2);
	NEED(ctx().bind_mw(w2.handle, Ref(mr.handle), Ref(qp_b.handle), window(buf, 0, 64, kRemoteRead, k2)));
	EXPECT_OK(invalidate(ctx(), qp_b.resp.qpn, k2, false)) << "a local invalidation, same PD";
	k2 = next_key(k2);
	NEED(ctx().bind_mw(w2.handle, Ref(mr.handle), Ref(qp_b.handle), window(buf, 0, 64, kRemoteRead, k2)));
	EXPECT_OK(ctx().dealloc_mw(w2.handle));
	EXPECT_OK(ctx().dealloc_mw(w1.handle));
	EXPECT_OK(ctx().dereg_mr(mr.handle)) << "the window's destroy let go of the MR";
	for (Handle q : {qp.handle, qp_b.handle})
		EXPECT_OK(ctx().destroy_qp(q));
	EXPECT_OK(ctx().destroy_cq(cq.handle));
}

} // namespace
