// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 5: chains, chain references and ALL_OR_NOTHING.
#include "support/uabi_test.hpp"

#include <memory>
#include <set>
#include <thread>
#include <sys/wait.h>

using namespace uabi;
using namespace uabi::test;

namespace
{

constexpr std::uint32_t kAon = UABI_MSG_F_ALL_OR_NOTHING;

class Chains : public UabiTest
{
      protected:
	// A QP creation on chain-created PD and CQ.
	static QpCreate qp_on(Ref pd, Ref cq)
	{
		QpCreate c;
		c.pd = pd;
		c.send_cq = cq;
		c.recv_cq = cq;
		c.init = qp_init(UABI_QPT_RC);
		return c;
	}
	// Checks a message rejected before anything ran.
	void expect_rejected_up_front(Chain &ch, const Snapshot &before, std::uint32_t failed)
	{
		auto h = ch.message().header();
		EXPECT_STATUS(h.status, -EINVAL);
		EXPECT_EQ(h.executed, 0u);
		EXPECT_EQ(h.failed_index, failed);
		for (std::uint32_t i = 0; i < ch.message().count(); i++) {
			if (i == failed) {
				EXPECT_STATUS(ch.status({i}).status, -EINVAL) << "command " << i;
			} else {
				EXPECT_STATUS(ch.status({i}).status, UABI_CMD_STATUS_NOT_RUN)
				    << "command " << i;
			}
		}
		expect_snapshot_eq(before, snapshot(ctx()), "after a chain rejected up front");
	}
};

TEST_F(Chains, CommandsRunInOrderAndUseEarlierHandles)
{
	Snapshot before = snapshot(ctx());
	static char buf[256];
	Chain ch;
	auto pd = ch.alloc_pd();
	auto cq = ch.create_cq({.cqe = 8});
	auto mr = ch.reg_mr(pd, buf, sizeof(buf), kLocalWrite);
	auto qp = ch.create_qp(qp_on(pd, cq));
	auto init =
	    ch.modify_qp(qp, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT),
			 UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS);
	Command q(UABI_OBJ_QP, UABI_METHOD_QUERY);
	q.set_handle_ref(qp.index);
	OutAttr qattr = q.add_out<uabi_qp_attr>(UABI_ATTR_QP_ATTR);
	auto query = ch.add(std::move(q));
	ASSERT_OK(ch.execute(ctx()));

	auto h = ch.message().header();
	EXPECT_STATUS(h.status, 0);
	EXPECT_EQ(h.executed, 6u);
	EXPECT_EQ(h.failed_index, 6u);
	for (std::uint32_t i = 0; i < 6; i++)
		EXPECT_STATUS(ch.status({i}).status, 0) << "command " << i;
	EXPECT_EQ(ch.status(init).out_handle, 0u) << "a modify creates nothing";
	EXPECT_EQ(ch.status(query).out_handle, 0u);

	uabi_qp_attr a{};
	EXPECT_TRUE(ch.message().read(query.index, qattr, a));
	EXPECT_EQ(a.qp_state, unsigned(UABI_QPS_INIT)) << "the query ran after the modify";

	Handle hpd = NEED(ch.handle(pd));
	Handle hcq = NEED(ch.handle(cq));
	MrInfo m = NEED(ch.get(mr));
	QpInfo hq = NEED(ch.get(qp));
	std::set<Handle> distinct{hpd, hcq, m.handle, hq.handle};
	EXPECT_EQ(distinct.size(), 4u);
	EXPECT_EQ(NEED(ctx().query_qp(hq.handle)).attr.qp_state, unsigned(UABI_QPS_INIT));
	// The references named the chain's own objects: they depend on them.
	EXPECT_ERRNO(ctx().dealloc_pd(hpd), EBUSY);
	EXPECT_ERRNO(ctx().destroy_cq(hcq), EBUSY);
	EXPECT_OK(ctx().destroy_qp(hq.handle));
	EXPECT_OK(ctx().dereg_mr(m.handle));
	EXPECT_OK(ctx().destroy_cq(hcq));
	EXPECT_OK(ctx().dealloc_pd(hpd));
	expect_snapshot_eq(before, snapshot(ctx()), "after the chain's objects");
}

TEST_F(Chains, ReferenceToItselfOrALaterCommandIsEINVALUpFront)
{
	Snapshot before = snapshot(ctx());
	{
		SCOPED_TRACE("attribute reference to the command itself");
		Chain ch;
		ch.alloc_pd();
		ch.create_cq({.cqe = 4});
		ch.create_qp(qp_on(ChainRef{2}, ChainRef{1}));
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 2);
	}
	{
		SCOPED_TRACE("attribute reference to a later command");
		Chain ch;
		ch.alloc_pd();
		ch.create_cq({.cqe = 4});
		ch.create_qp(qp_on(ChainRef{3}, ChainRef{1}));
		ch.alloc_pd();
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 2);
	}
	{
		SCOPED_TRACE("header reference to the command itself");
		Chain ch;
		ch.alloc_pd();
		ch.destroy(UABI_OBJ_PD, ChainRef{1});
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
	}
	{
		SCOPED_TRACE("header reference to a later command");
		Chain ch;
		ch.alloc_pd();
		ch.destroy(UABI_OBJ_PD, ChainRef{2});
		ch.alloc_pd();
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
	}
	{
		SCOPED_TRACE("reference far past the end");
		Chain ch;
		ch.alloc_pd();
		ch.destroy(UABI_OBJ_PD, ChainRef{0xffffffffu});
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
	}
}

TEST_F(Chains, ReferenceToACommandThatCreatesNothingIsEINVAL)
{
	Snapshot before = snapshot(ctx());
	{
		SCOPED_TRACE("attribute reference");
		Chain ch;
		ch.alloc_pd();
		ch.add(cmd_counters());
		static char buf[64];
		ch.reg_mr(ChainRef{1}, buf, sizeof(buf), kLocalWrite);
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 2);
	}
	{
		SCOPED_TRACE("header reference");
		Handle pd = NEED(ctx().alloc_pd());
		Snapshot with_pd = snapshot(ctx());
		Chain ch;
		ch.alloc_pd();
		ch.destroy(UABI_OBJ_PD, pd); // creates nothing
		ch.destroy(UABI_OBJ_PD, ChainRef{1});
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, with_pd, 2);
		EXPECT_OK(ctx().dealloc_pd(pd)) << "the PD was not destroyed";
	}
}

TEST_F(Chains, StopsAtTheFirstFailureAndKeepsEarlierObjects)
{
	auto before = counters();
	Chain ch;
	auto pd = ch.alloc_pd();
	auto bad = ch.create_cq({.cqe = 0}); // EINVAL when it runs
	auto pd2 = ch.alloc_pd();
	EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
	auto h = ch.message().header();
	EXPECT_STATUS(h.status, -EINVAL);
	EXPECT_EQ(h.executed, 1u);
	EXPECT_EQ(h.failed_index, 1u);
	EXPECT_STATUS(ch.status(pd).status, 0);
	EXPECT_STATUS(ch.status(bad).status, -EINVAL);
	EXPECT_STATUS(ch.status(pd2).status, UABI_CMD_STATUS_NOT_RUN);
	EXPECT_EQ(ch.status(pd2).out_handle, 0u);
	Handle kept = NEED(ch.handle(pd));
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 1);
	EXPECT_EQ(counters().context[UABI_OBJ_CQ], before.context[UABI_OBJ_CQ]);
	EXPECT_OK(ctx().dealloc_pd(kept)) << "the PD of command 0 exists";
}

TEST_F(Chains, AllOrNothingDestroysWhatTheChainCreated)
{
	Snapshot before = snapshot(ctx());
	static char buf[64];
	Chain ch(kAon);
	auto pd = ch.alloc_pd();
	auto cq = ch.create_cq({.cqe = 8});
	auto mr = ch.reg_mr(pd, buf, sizeof(buf), kLocalWrite);
	auto qp = ch.create_qp(qp_on(pd, cq));
	auto ch_ = ch.create_comp_channel();
	auto bad = ch.create_cq({.cqe = 0});
	auto never = ch.alloc_pd();
	EXPECT_ERRNO(ch.execute(ctx()), EINVAL);

	auto h = ch.message().header();
	EXPECT_STATUS(h.status, -EINVAL);
	EXPECT_EQ(h.failed_index, 5u);
	EXPECT_EQ(h.executed, 5u) << "five commands ran to success before the failure";
	EXPECT_STATUS(ch.status(bad).status, -EINVAL);
	EXPECT_STATUS(ch.status(never).status, UABI_CMD_STATUS_NOT_RUN);
	// The client reports the rolled-back objects as cancelled.
	EXPECT_ERRNO(ch.handle(pd), ECANCELED);
	EXPECT_ERRNO(ch.get(qp), ECANCELED);
	EXPECT_ERRNO(ch.get(ch_), ECANCELED);
	// They are really gone.
	expect_snapshot_eq(before, snapshot(ctx()), "after the rolled-back chain");
	EXPECT_ERRNO(ctx().dealloc_pd(ch.status(pd).out_handle), ENOENT);
	EXPECT_ERRNO(ctx().query_qp(ch.status(qp).out_handle), ENOENT);
	EXPECT_ERRNO(ctx().dereg_mr(ch.status(mr).out_handle), ENOENT);
	EXPECT_ERRNO(ctx().destroy_cq(ch.status(cq).out_handle), ENOENT);
}

TEST_F(Chains, AllOrNothingThatSucceedsKeepsEverything)
{
	auto before = counters();
	Chain ch(kAon);
	auto pd = ch.alloc_pd();
	auto cq = ch.create_cq({.cqe = 8});
	auto qp = ch.create_qp(qp_on(pd, cq));
	ch.modify_qp(qp, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT),
		     UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS);
	ASSERT_OK(ch.execute(ctx()));
	EXPECT_EQ(ch.message().header().executed, 4u);
	QpInfo q = NEED(ch.get(qp));
	EXPECT_EQ(NEED(ctx().query_qp(q.handle)).attr.qp_state, unsigned(UABI_QPS_INIT));
	EXPECT_EQ(counters().context[UABI_OBJ_QP], before.context[UABI_OBJ_QP] + 1);
}

TEST_F(Chains, AllOrNothingMayNotChangePreExistingObjects)
{
	QpEnv env = make_env(ctx());
	QpInfo qp = make_qp(ctx(), env, UABI_QPT_RC);
	Handle spare_pd = NEED(ctx().alloc_pd());
	Snapshot before = snapshot(ctx());
	{
		SCOPED_TRACE("destroy a pre-existing PD");
		Chain ch(kAon);
		ch.alloc_pd();
		ch.destroy(UABI_OBJ_PD, spare_pd);
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
	}
	{
		SCOPED_TRACE("modify a pre-existing QP");
		Chain ch(kAon);
		ch.alloc_pd();
		ch.modify_qp(qp.handle, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT),
			     UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
				 UABI_QP_ACCESS_FLAGS);
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
		EXPECT_EQ(NEED(ctx().query_qp(qp.handle)).attr.qp_state, unsigned(UABI_QPS_RESET));
	}
	{
		SCOPED_TRACE("resize a pre-existing CQ");
		Chain ch(kAon);
		ch.alloc_pd();
		Command c(UABI_OBJ_CQ, UABI_METHOD_MODIFY, env.cq);
		c.add_in(UABI_ATTR_CQ_CQE, std::uint32_t(64));
		ch.add(std::move(c));
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
	}
	{
		SCOPED_TRACE("a driver call that changes the device");
		PortRestorer restore;
		Chain ch(kAon);
		ch.alloc_pd();
		Command c = driver_command(UABI_SW_OBJ_PORT, Handle(0), UABI_SW_PORT_SET_STATE);
		c.add_in(UABI_SW_ATTR_PORT_NUM, std::uint32_t(1))
		    .add_in(UABI_SW_ATTR_PORT_STATE, std::uint32_t(1));
		ch.add(std::move(c));
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		expect_rejected_up_front(ch, before, 1);
		EXPECT_EQ(NEED(ctx().query_port(1)).state, 4u) << "the port was not touched";
	}
	// Reading pre-existing objects is fine.
	Chain ok(kAon);
	ok.alloc_pd();
	Command q(UABI_OBJ_QP, UABI_METHOD_QUERY, qp.handle);
	q.add_out<uabi_qp_attr>(UABI_ATTR_QP_ATTR);
	ok.add(std::move(q));
	EXPECT_OK(ok.execute(ctx()));
	// And changing what the chain itself created is fine.
	Chain own(kAon);
	auto pd = own.alloc_pd();
	own.destroy(UABI_OBJ_PD, pd);
	EXPECT_OK(own.execute(ctx()));
}

// An ALL_OR_NOTHING chain may reach a pre-existing XRC receive QP through a
// domain handle it opened itself: the QP (and the registration) existed
// before the message, so changing them is just as undoable as changing any
// other pre-existing object.
TEST_F(Chains, AllOrNothingMayNotChangeAPreExistingXrcQpThroughANewDomainHandle)
{
	TempFile f;
	Handle x = NEED(ctx().open_xrcd(f.fd(), UABI_XRCD_O_CREAT));
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	NEED(ctx().register_xrc_rcv_qp(x, qpn, qp_init(UABI_QPT_XRC_RECV)));
	Snapshot before = snapshot(ctx());
	{
		SCOPED_TRACE("modify the receive QP");
		Chain ch(kAon);
		auto x2 = ch.open_xrcd(f.fd(), 0);
		Command c(UABI_OBJ_XRCD, UABI_XRCD_MODIFY_RCV_QP);
		c.set_target(x2);
		c.add_in(UABI_ATTR_XRCD_QPN, qpn)
		    .add_in(UABI_ATTR_XRCD_QP_ATTR, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT))
		    .add_in(UABI_ATTR_XRCD_QP_ATTR_MASK,
			    std::uint32_t(UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
					  UABI_QP_ACCESS_FLAGS));
		ch.add(std::move(c));
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(x, qpn)).qp_state, unsigned(UABI_QPS_RESET))
		    << "the pre-existing receive QP was changed by an ALL_OR_NOTHING chain";
		expect_snapshot_eq(before, snapshot(ctx()), "after the chain");
	}
	{
		SCOPED_TRACE("unregister the pre-existing registration");
		Chain ch(kAon);
		auto x2 = ch.open_xrcd(f.fd(), 0);
		Command c(UABI_OBJ_XRCD, UABI_XRCD_UNREG_RCV_QP);
		c.set_target(x2);
		c.add_in(UABI_ATTR_XRCD_QPN, qpn);
		ch.add(std::move(c));
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		EXPECT_TRUE(ctx().query_xrc_rcv_qp(x, qpn).ok())
		    << "the pre-existing registration was destroyed by an ALL_OR_NOTHING chain";
		expect_snapshot_eq(before, snapshot(ctx()), "after the chain");
	}
	{
		SCOPED_TRACE("modify the shared QP through a registration the chain made");
		Chain ch(kAon);
		auto x2 = ch.open_xrcd(f.fd(), 0);
		Command reg(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP);
		reg.set_target(x2);
		reg.add_inout(UABI_ATTR_XRCD_QPN, qpn);
		auto r = ch.add(std::move(reg));
		ch.modify_qp(r, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT),
			     UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
				 UABI_QP_ACCESS_FLAGS);
		EXPECT_ERRNO(ch.execute(ctx()), EINVAL);
		EXPECT_EQ(ch.message().header().failed_index, 2u);
		EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(x, qpn)).qp_state, unsigned(UABI_QPS_RESET))
		    << "the shared receive QP was changed by an ALL_OR_NOTHING chain";
		expect_snapshot_eq(before, snapshot(ctx()), "after the rolled-back chain");
	}
	// The same chain without ALL_OR_NOTHING may do it.
	Chain plain;
	auto x2 = plain.open_xrcd(f.fd(), 0);
	Command c(UABI_OBJ_XRCD, UABI_XRCD_MODIFY_RCV_QP);
	c.set_target(x2);
	c.add_in(UABI_ATTR_XRCD_QPN, qpn)
	    .add_in(UABI_ATTR_XRCD_QP_ATTR, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT))
	    .add_in(UABI_ATTR_XRCD_QP_ATTR_MASK,
		    std::uint32_t(UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
				  UABI_QP_ACCESS_FLAGS));
	plain.add(std::move(c));
	EXPECT_OK(plain.execute(ctx()));
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(x, qpn)).qp_state, unsigned(UABI_QPS_INIT));
}

// The chain destroys an object it created, then fails: the rollback must
// not touch the destroyed object again.  Run in a child process so that a
// crash in the core shows as a failure of this test only.
TEST_F(Chains, AllOrNothingRollbackAfterTheChainDestroyedItsOwnObject)
{
	auto run = [] {
		auto c = open_context();
		auto before = NEED(c->counters());
		for (int round = 0; round < 50; round++) {
			Chain ch(kAon);
			auto pd = ch.alloc_pd();
			auto cq = ch.create_cq({.cqe = 4});
			ch.destroy(UABI_OBJ_PD, pd);
			ch.destroy(UABI_OBJ_CQ, cq);
			ch.create_cq({.cqe = 0}); // fails
			if (ch.execute(*c).error() != EINVAL)
				std::_Exit(2);
			if (ch.message().header().failed_index != 4)
				std::_Exit(3);
		}
		auto after = NEED(c->counters());
		for (unsigned t = 0; t < 16; t++)
			if (after.context[t] != before.context[t])
				std::_Exit(4);
		std::_Exit(0);
	};
	EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "")
	    << "the child crashed or miscounted: the rollback touched an object "
	       "the chain had already destroyed";
}

TEST_F(Chains, AChainOf256CreatesWorksAndEveryStatusIsWritten)
{
	auto before = counters();
	Chain ch;
	std::vector<PendingPd> pds;
	for (int i = 0; i < 256; i++)
		pds.push_back(ch.alloc_pd());
	ASSERT_OK(ch.execute(ctx()));
	auto h = ch.message().header();
	EXPECT_EQ(h.executed, 256u);
	EXPECT_EQ(h.failed_index, 256u);
	std::set<Handle> seen;
	for (auto &p : pds) {
		EXPECT_STATUS(ch.status(p).status, 0);
		Handle hd = NEED(ch.handle(p));
		EXPECT_TRUE(seen.insert(hd).second) << "handle " << hd << " twice";
	}
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 256);

	// And 256 destroys in one chain.
	Chain d;
	for (Handle hd : seen)
		d.destroy(UABI_OBJ_PD, hd);
	ASSERT_OK(d.execute(ctx()));
	EXPECT_EQ(d.message().header().executed, 256u);
	for (std::uint32_t i = 0; i < 256; i++)
		EXPECT_STATUS(d.status({i}).status, 0);
	expect_context_counters_eq(before, counters(), "after destroying the 256 PDs");
}

// A large message leaves its buffers to the next one its thread builds
// (message.hpp): chains built one after another, smaller and larger than
// the one before, each with its own outputs, and a large one destroyed on
// another thread.
TEST_F(Chains, LargeChainsBuiltOneAfterAnotherKeepTheirOwnBytes)
{
	auto before = counters();
	std::vector<Handle> all;
	for (int n : {1000, 300, 1024, 700}) {
		Chain ch;
		std::vector<PendingCq> cqs;
		for (int i = 0; i < n; i++)
			cqs.push_back(ch.create_cq({.cqe = std::uint32_t(1 + i % 5)}));
		ASSERT_OK(ch.execute(ctx()));
		EXPECT_EQ(ch.message().header().executed, std::uint32_t(n));
		EXPECT_EQ(ch.message().count(), std::size_t(n));
		for (int i = 0; i < n; i++) {
			CqInfo info = NEED(ch.get(cqs[std::size_t(i)]));
			EXPECT_GE(info.cqe, std::uint32_t(1 + i % 5)) << "chain of " << n << ", CQ " << i;
			all.push_back(info.handle);
		}
		// Destroyed at once, each chain of creates.
		Chain d;
		for (int i = 0; i < n; i++)
			d.destroy(UABI_OBJ_CQ, all[all.size() - std::size_t(n) + std::size_t(i)]);
		ASSERT_OK(d.execute(ctx()));
		EXPECT_EQ(d.message().header().executed, std::uint32_t(n));
	}
	// Built here, destroyed on another thread (whose spare it becomes).
	auto big = std::make_unique<Chain>();
	for (int i = 0; i < 900; i++)
		big->alloc_pd();
	ASSERT_OK(big->execute(ctx()));
	Chain d;
	for (std::uint32_t i = 0; i < 900; i++)
		d.destroy(UABI_OBJ_PD, NEED(big->handle(ChainRef{i})));
	std::thread([&] { big.reset(); }).join();
	ASSERT_OK(d.execute(ctx()));
	EXPECT_EQ(d.message().header().executed, 900u);
	expect_context_counters_eq(before, counters(), "after the large chains");
}

TEST_F(Chains, StatusesAreWrittenOverWhateverTheSenderLeft)
{
	Message m = make_message({cmd_alloc_pd(), cmd_create_cq(0), cmd_alloc_pd()});
	RawMsg r(m);
	for (std::size_t i = 0; i < 3; i++) {
		auto h = r.cmd(i);
		h.status = -1234;
		h.out_handle = 0xdeadbeef;
		r.set_cmd(i, h);
	}
	auto mh = r.msg();
	mh.status = 77;
	mh.executed = 99;
	mh.failed_index = 99;
	r.set_msg(mh);
	EXPECT_STATUS(r.exec(ctx()), -EINVAL);
	EXPECT_STATUS(r.msg().status, -EINVAL);
	EXPECT_EQ(r.msg().executed, 1u);
	EXPECT_EQ(r.msg().failed_index, 1u);
	EXPECT_STATUS(r.cmd(0).status, 0);
	EXPECT_NE(r.cmd(0).out_handle, 0xdeadbeefu);
	EXPECT_STATUS(r.cmd(1).status, -EINVAL);
	EXPECT_EQ(r.cmd(1).out_handle, 0u);
	EXPECT_STATUS(r.cmd(2).status, UABI_CMD_STATUS_NOT_RUN);
	EXPECT_EQ(r.cmd(2).out_handle, 0u);
	EXPECT_OK(ctx().dealloc_pd(r.cmd(0).out_handle));
}

} // namespace
