// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 3 for QPs (lifecycle per type, creation checks) and rule 7:
// creating a QP directly in INIT, RTR or RTS.
#include "support/uabi_test.hpp"

#include <array>

using namespace uabi;
using namespace uabi::test;

namespace
{

// Required attributes of ibv_modify_qp(3), per transition (IBV_QP_STATE
// aside), for RC and UD.
constexpr std::uint32_t kRcToInit = UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS;
constexpr std::uint32_t kRcToRtr = UABI_QP_AV | UABI_QP_PATH_MTU | UABI_QP_DEST_QPN |
				   UABI_QP_RQ_PSN | UABI_QP_MAX_DEST_RD_ATOMIC |
				   UABI_QP_MIN_RNR_TIMER;
constexpr std::uint32_t kRcToRts = UABI_QP_TIMEOUT | UABI_QP_RETRY_CNT | UABI_QP_RNR_RETRY |
				   UABI_QP_SQ_PSN | UABI_QP_MAX_QP_RD_ATOMIC;
constexpr std::uint32_t kUdToInit = UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_QKEY;
constexpr std::uint32_t kUdToRts = UABI_QP_SQ_PSN;

const char *state_name(std::uint32_t s)
{
	static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	return s < 7 ? n[s] : "?";
}

class Qp : public UabiTest
{
      protected:
	void SetUp() override
	{
		UabiTest::SetUp();
		env_ = make_env(ctx());
	}

	QpCreate create_args(std::uint32_t type)
	{
		QpCreate c;
		c.pd = env_.pd;
		c.send_cq = env_.cq;
		if (type != UABI_QPT_XRC_SEND)
			c.recv_cq = env_.cq;
		c.init = qp_init(type);
		return c;
	}

	// Union of the required masks up to target, for RC.
	static std::uint32_t rc_union(std::uint32_t target)
	{
		std::uint32_t m = UABI_QP_STATE | kRcToInit;
		if (target >= UABI_QPS_RTR)
			m |= kRcToRtr;
		if (target >= UABI_QPS_RTS)
			m |= kRcToRts;
		return m;
	}

	QpEnv env_{};
};

TEST_F(Qp, LifecyclePerType)
{
	for (std::uint32_t type : {UABI_QPT_RC, UABI_QPT_UC, UABI_QPT_UD, UABI_QPT_XRC_SEND}) {
		SCOPED_TRACE("qp_type " + std::to_string(type));
		Snapshot before = snapshot(ctx());
		QpCreate args = create_args(type);
		args.user_handle = 0xabcdef;
		QpInfo qp = NEED(ctx().create_qp(args));
		EXPECT_NE(qp.handle, 0u);
		EXPECT_EQ(qp.resp.state, unsigned(UABI_QPS_RESET));
		EXPECT_GE(qp.resp.qpn, 2u) << "QP0 and QP1 are reserved";
		EXPECT_LT(qp.resp.qpn, 1u << 24);
		EXPECT_GE(qp.resp.cap.max_send_wr, args.init.cap.max_send_wr);
		EXPECT_EQ(counters().context[UABI_OBJ_QP], before.c.context[UABI_OBJ_QP] + 1);
		EXPECT_EQ(sw_stats(ctx()).qpns_in_use, before.sw.qpns_in_use + 1);

		QpQuery q = NEED(ctx().query_qp(qp.handle));
		EXPECT_EQ(q.attr.qp_state, unsigned(UABI_QPS_RESET));
		EXPECT_EQ(q.init.qp_type, type);
		EXPECT_EQ(q.attr.cap.max_send_wr, qp.resp.cap.max_send_wr);
		if (type == UABI_QPT_XRC_SEND) {
			EXPECT_EQ(q.init.cap.max_recv_wr, 0u) << "XRC send QPs do not receive";
		}

		EXPECT_OK(ctx().destroy_qp(qp.handle));
		EXPECT_ERRNO(ctx().destroy_qp(qp.handle), ENOENT);
		EXPECT_ERRNO(ctx().query_qp(qp.handle), ENOENT);
		expect_snapshot_eq(before, snapshot(ctx()), "after the QP");
	}
}

TEST_F(Qp, QpnsAreDistinct)
{
	QpInfo a = make_qp(ctx(), env_, UABI_QPT_RC);
	QpInfo b = make_qp(ctx(), env_, UABI_QPT_UD);
	Context &other = open_extra();
	QpEnv oe = make_env(other);
	QpInfo c = make_qp(other, oe, UABI_QPT_UC);
	EXPECT_NE(a.resp.qpn, b.resp.qpn);
	EXPECT_NE(a.resp.qpn, c.resp.qpn);
	EXPECT_NE(b.resp.qpn, c.resp.qpn);
}

TEST_F(Qp, InvalidCreationsAreEINVALAndCreateNothing)
{
	SrqCreate sc;
	sc.pd = env_.pd;
	sc.init.attr.max_wr = 8;
	sc.init.attr.max_sge = 1;
	Snapshot before = snapshot(ctx());

	QpCreate c = create_args(UABI_QPT_XRC_SEND);
	c.recv_cq = env_.cq;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "XRC send QP with a receive CQ";

	c = create_args(UABI_QPT_RC);
	c.recv_cq.reset();
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "RC QP without a receive CQ";

	c = create_args(UABI_QPT_RC);
	c.pd.reset();
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "RC QP without a PD";

	c = create_args(UABI_QPT_RC);
	c.send_cq.reset();
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "RC QP without a send CQ";

	for (std::uint32_t bad : {0u, 1u, 5u, 8u, 11u, 0xffffffffu}) {
		c = create_args(UABI_QPT_RC);
		c.init.qp_type = bad;
		EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "qp_type " << bad;
	}

	c = create_args(UABI_QPT_RC);
	c.init.create_flags = 1;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "unknown create_flags";

	c = create_args(UABI_QPT_RC);
	c.init.reserved = 1;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "reserved field of uabi_qp_init";

	c = create_args(UABI_QPT_RC);
	Handle xrcd = NEED(ctx().open_xrcd(-1, 0));
	c.xrcd = xrcd;
	Snapshot with_xrcd = snapshot(ctx());
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "RC QP with an XRC domain";
	expect_snapshot_eq(with_xrcd, snapshot(ctx()), "after the RC QP with an xrcd");
	EXPECT_OK(ctx().close_xrcd(xrcd));

	expect_snapshot_eq(before, snapshot(ctx()), "after the invalid QPs");
}

TEST_F(Qp, QpOnAnSrqKeepsItBusy)
{
	SrqCreate sc;
	sc.pd = env_.pd;
	sc.init.attr.max_wr = 8;
	sc.init.attr.max_sge = 1;
	SrqInfo srq = NEED(ctx().create_srq(sc));
	QpCreate c = create_args(UABI_QPT_RC);
	c.srq = srq.handle;
	QpInfo qp = NEED(ctx().create_qp(c));
	QpQuery q = NEED(ctx().query_qp(qp.handle));
	EXPECT_EQ(q.init.cap.max_recv_wr, 0u) << "receives go to the SRQ";
	EXPECT_ERRNO(ctx().destroy_srq(srq.handle), EBUSY);
	EXPECT_OK(ctx().destroy_qp(qp.handle));
	EXPECT_OK(ctx().destroy_srq(srq.handle));
}

// ------------------------------------------------------------- rule 7

TEST_F(Qp, RcCreatedDirectlyInInitRtrAndRts)
{
	for (std::uint32_t target : {UABI_QPS_INIT, UABI_QPS_RTR, UABI_QPS_RTS}) {
		SCOPED_TRACE(state_name(target));
		QpCreate c = create_args(UABI_QPT_RC);
		c.attr = valid_qp_attr(UABI_QPS_RESET, target);
		c.attr->cur_qp_state = 0;
		c.attr_mask = rc_union(target);
		QpInfo qp = NEED(ctx().create_qp(c));
		EXPECT_EQ(qp.resp.state, target);
		QpQuery q = NEED(ctx().query_qp(qp.handle));
		const uabi_qp_attr &a = *c.attr;
		EXPECT_EQ(q.attr.qp_state, target);
		EXPECT_EQ(q.attr.port_num, a.port_num);
		EXPECT_EQ(q.attr.pkey_index, a.pkey_index);
		EXPECT_EQ(q.attr.qp_access_flags, a.qp_access_flags);
		if (target >= UABI_QPS_RTR) {
			EXPECT_EQ(q.attr.path_mtu, a.path_mtu);
			EXPECT_EQ(q.attr.dest_qp_num, a.dest_qp_num);
			EXPECT_EQ(q.attr.rq_psn, a.rq_psn);
			EXPECT_EQ(q.attr.max_dest_rd_atomic, a.max_dest_rd_atomic);
			EXPECT_EQ(q.attr.min_rnr_timer, a.min_rnr_timer);
			EXPECT_EQ(q.attr.ah_attr.dlid, a.ah_attr.dlid);
			EXPECT_EQ(q.attr.ah_attr.port_num, a.ah_attr.port_num);
		}
		if (target == UABI_QPS_RTS) {
			EXPECT_EQ(q.attr.sq_psn, a.sq_psn);
			EXPECT_EQ(q.attr.timeout, a.timeout);
			EXPECT_EQ(q.attr.retry_cnt, a.retry_cnt);
			EXPECT_EQ(q.attr.rnr_retry, a.rnr_retry);
			EXPECT_EQ(q.attr.max_rd_atomic, a.max_rd_atomic);
		}
		// It goes on like any QP in that state.
		uabi_qp_attr err = valid_qp_attr(target, UABI_QPS_ERR);
		EXPECT_OK(ctx().modify_qp(qp.handle, err, UABI_QP_STATE));
		EXPECT_OK(ctx().destroy_qp(qp.handle));
	}
}

TEST_F(Qp, OptionalAttributesOfTheStepsAreAcceptedOnCreate)
{
	QpCreate c = create_args(UABI_QPT_RC);
	c.attr = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_RTS);
	c.attr_mask = rc_union(UABI_QPS_RTS) | UABI_QP_ALT_PATH | UABI_QP_PATH_MIG_STATE;
	QpInfo qp = NEED(ctx().create_qp(c));
	EXPECT_EQ(qp.resp.state, unsigned(UABI_QPS_RTS));
	QpQuery q = NEED(ctx().query_qp(qp.handle));
	EXPECT_EQ(q.attr.alt_port_num, c.attr->alt_port_num);
	EXPECT_EQ(q.attr.alt_timeout, c.attr->alt_timeout);
	EXPECT_OK(ctx().destroy_qp(qp.handle));
}

TEST_F(Qp, UdCreatedDirectlyInRts)
{
	QpCreate c = create_args(UABI_QPT_UD);
	c.attr = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_RTS);
	c.attr_mask = UABI_QP_STATE | kUdToInit | kUdToRts;
	QpInfo qp = NEED(ctx().create_qp(c));
	EXPECT_EQ(qp.resp.state, unsigned(UABI_QPS_RTS));
	QpQuery q = NEED(ctx().query_qp(qp.handle));
	EXPECT_EQ(q.attr.qkey, c.attr->qkey);
	EXPECT_EQ(q.attr.sq_psn, c.attr->sq_psn);
	EXPECT_OK(ctx().destroy_qp(qp.handle));
}

TEST_F(Qp, CreateMissingARequiredAttributeOfAStepIsEINVALAndCreatesNothing)
{
	for (std::uint32_t target : {UABI_QPS_INIT, UABI_QPS_RTR, UABI_QPS_RTS}) {
		std::uint32_t full = rc_union(target);
		for (unsigned bit = 0; bit < 21; bit++) {
			std::uint32_t b = 1u << bit;
			if (!(full & b))
				continue;
			SCOPED_TRACE(std::string(state_name(target)) + " without mask bit " +
				     std::to_string(bit));
			QpCreate c = create_args(UABI_QPT_RC);
			c.attr = valid_qp_attr(UABI_QPS_RESET, target);
			c.attr_mask = full & ~b;
			Snapshot before = snapshot(ctx());
			EXPECT_ERRNO(ctx().create_qp(c), EINVAL);
			expect_snapshot_eq(before, snapshot(ctx()), "after the refused QP");
		}
	}
}

TEST_F(Qp, CreateWithABitNoStepTakesIsEINVALAndCreatesNothing)
{
	for (std::uint32_t target : {UABI_QPS_INIT, UABI_QPS_RTR, UABI_QPS_RTS}) {
		// Bits that no transition RESET->...->target of an RC QP takes.
		std::uint32_t accepted = rc_union(target);
		if (target >= UABI_QPS_RTR)
			accepted |= UABI_QP_ALT_PATH; // optional INIT->RTR
		if (target >= UABI_QPS_RTS)
			accepted |= UABI_QP_PATH_MIG_STATE; // optional RTR->RTS
		for (unsigned bit = 0; bit < 32; bit++) {
			std::uint32_t b = 1u << bit;
			if (accepted & b)
				continue;
			SCOPED_TRACE(std::string(state_name(target)) + " with extra mask bit " +
				     std::to_string(bit));
			QpCreate c = create_args(UABI_QPT_RC);
			c.attr = valid_qp_attr(UABI_QPS_RESET, target);
			c.attr->cur_qp_state = UABI_QPS_RESET;
			c.attr_mask = rc_union(target) | b;
			Snapshot before = snapshot(ctx());
			EXPECT_ERRNO(ctx().create_qp(c), EINVAL);
			expect_snapshot_eq(before, snapshot(ctx()), "after the refused QP");
		}
	}
}

TEST_F(Qp, CreateWithAnInvalidValueOrTargetIsEINVALAndCreatesNothing)
{
	Snapshot before = snapshot(ctx());
	QpCreate c = create_args(UABI_QPT_RC);
	c.attr = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_RTS);
	c.attr->timeout = 32;
	c.attr_mask = rc_union(UABI_QPS_RTS);
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "timeout 32";

	c.attr = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_RTS);
	c.attr->port_num = 2;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "port 2";

	for (std::uint32_t target : {std::uint32_t(UABI_QPS_RESET), std::uint32_t(UABI_QPS_SQD),
				     std::uint32_t(UABI_QPS_ERR), 99u}) {
		c.attr = valid_qp_attr(UABI_QPS_RESET, target);
		c.attr_mask = rc_union(UABI_QPS_RTS);
		EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "target state " << target;
	}

	c.attr = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_RTS);
	c.attr_mask = rc_union(UABI_QPS_RTS) & ~UABI_QP_STATE;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "mask without IBV_QP_STATE";
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused QPs");
}

} // namespace

// ------------------------------------------------------------- multicast
namespace
{
constexpr std::uint8_t kGroupGid[16] = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

std::array<std::uint8_t, 16> group_gid(std::uint32_t n)
{
	std::array<std::uint8_t, 16> g{};
	std::memcpy(g.data(), kGroupGid, 16);
	g[12] = std::uint8_t(n >> 24);
	g[13] = std::uint8_t(n >> 16);
	g[14] = std::uint8_t(n >> 8);
	g[15] = std::uint8_t(n);
	return g;
}

Result<void> attach(Context &c, Handle qp, const std::array<std::uint8_t, 16> &g, std::uint16_t lid,
		    bool on = true)
{
	std::uint8_t gid[16];
	std::memcpy(gid, g.data(), 16);
	return on ? c.attach_mcast(qp, gid, lid) : c.detach_mcast(qp, gid, lid);
}
} // namespace

TEST_F(Qp, DeviceReportsItsMulticastLimits)
{
	DeviceInfo d = NEED(ctx().query_device());
	EXPECT_GT(d.attr.max_mcast_grp, 0u);
	EXPECT_GT(d.attr.max_mcast_qp_attach, 0u);
	EXPECT_EQ(d.attr.max_total_mcast_qp_attach, d.attr.max_mcast_grp * d.attr.max_mcast_qp_attach);
}

TEST_F(Qp, MulticastAttachChecksAsLinuxDoes)
{
	QpInfo ud = make_qp(ctx(), env_, UABI_QPT_UD);
	QpInfo rc = make_qp(ctx(), env_, UABI_QPT_RC);
	const auto g = group_gid(1);
	EXPECT_ERRNO(attach(ctx(), rc.handle, g, 0xc001), EINVAL) << "UD QPs only";
	auto unicast = g;
	unicast[0] = 0xfe;
	EXPECT_ERRNO(attach(ctx(), ud.handle, unicast, 0xc001), EINVAL) << "not a multicast GID";
	EXPECT_ERRNO(attach(ctx(), ud.handle, g, 0xbfff), EINVAL) << "a unicast LID";
	EXPECT_ERRNO(attach(ctx(), ud.handle, g, 0xffff), EINVAL) << "the permissive LID";
	EXPECT_ERRNO(attach(ctx(), Handle(9999), g, 0xc001), ENOENT);
	// IPv4-mapped multicast (224.0.0.0/4) is a multicast GID too.
	std::array<std::uint8_t, 16> v4{};
	v4[10] = v4[11] = 0xff;
	v4[12] = 239;
	v4[15] = 1;
	EXPECT_OK(attach(ctx(), ud.handle, v4, 0xc002));
	v4[12] = 192;
	EXPECT_ERRNO(attach(ctx(), ud.handle, v4, 0xc002), EINVAL) << "IPv4-mapped unicast";

	EXPECT_OK(attach(ctx(), ud.handle, g, 0xc001));
	EXPECT_OK(attach(ctx(), ud.handle, g, 0xc001)) << "attached already: nothing to do";
	EXPECT_OK(attach(ctx(), ud.handle, g, 0xc001, false));
	EXPECT_ERRNO(attach(ctx(), ud.handle, g, 0xc001, false), EINVAL) << "not attached";
	EXPECT_ERRNO(attach(ctx(), ud.handle, g, 0xc003, false), EINVAL) << "another LID";
	// A QP attached to groups is destroyed as any other.
	EXPECT_OK(attach(ctx(), ud.handle, g, 0xc001));
	EXPECT_OK(ctx().destroy_qp(ud.handle));
	EXPECT_OK(ctx().destroy_qp(rc.handle));
}

TEST_F(Qp, MulticastLimitsAreEnforcedAndFreedWithTheQps)
{
	DeviceInfo d = NEED(ctx().query_device());
	const std::uint32_t per_group = d.attr.max_mcast_qp_attach;
	const std::uint32_t groups = d.attr.max_mcast_grp;
	ASSERT_LE(per_group, 1024u);
	ASSERT_LE(groups, 4096u);
	std::vector<Handle> qps;
	for (std::uint32_t i = 0; i <= per_group; i++)
		qps.push_back(make_qp(ctx(), env_, UABI_QPT_UD).handle);
	const auto g = group_gid(7);
	for (std::uint32_t i = 0; i < per_group; i++)
		ASSERT_OK(attach(ctx(), qps[i], g, 0xc007)) << i;
	EXPECT_ERRNO(attach(ctx(), qps[per_group], g, 0xc007), ENOMEM) << "max_mcast_qp_attach";
	// One QP in every other group the user may have.
	for (std::uint32_t n = 1; n < groups; n++)
		ASSERT_OK(attach(ctx(), qps[per_group], group_gid(1000 + n), 0xc100)) << n;
	EXPECT_ERRNO(attach(ctx(), qps[per_group], group_gid(99999), 0xc100), ENOMEM) << "max_mcast_grp";
	// Destroying the QPs detaches them: every group is free again.
	for (Handle q : qps)
		EXPECT_OK(ctx().destroy_qp(q));
	QpInfo ud = make_qp(ctx(), env_, UABI_QPT_UD);
	for (std::uint32_t n = 0; n < groups; n++)
		ASSERT_OK(attach(ctx(), ud.handle, group_gid(5000 + n), 0xc200)) << n;
	EXPECT_OK(ctx().destroy_qp(ud.handle));
}

TEST_F(Qp, BlockingMulticastLoopbackIsForUdQps)
{
	QpCreate c = create_args(UABI_QPT_UD);
	c.init.create_flags = UABI_QP_CREATE_BLOCK_SELF_MCAST_LB;
	QpInfo ud = NEED(ctx().create_qp(c));
	QpQuery q = NEED(ctx().query_qp(ud.handle));
	EXPECT_EQ(q.init.create_flags, unsigned(UABI_QP_CREATE_BLOCK_SELF_MCAST_LB));
	EXPECT_OK(ctx().destroy_qp(ud.handle));
	Snapshot before = snapshot(ctx());
	c = create_args(UABI_QPT_RC);
	c.init.create_flags = UABI_QP_CREATE_BLOCK_SELF_MCAST_LB;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL);
	c = create_args(UABI_QPT_UD);
	c.init.create_flags = 1u << 0;
	EXPECT_ERRNO(ctx().create_qp(c), EINVAL) << "a flag the device does not have";
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused QPs");
}
