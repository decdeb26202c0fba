// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 4: everything a context owns goes with it.  Rule 11: one context
// used by several threads at once.
#include "support/uabi_test.hpp"

#include <atomic>
#include <mutex>
#include <thread>

using namespace uabi;
using namespace uabi::test;

namespace
{

class Lifecycle : public UabiTest
{
};

// Creates one of everything in c, with dependencies between them, a chain,
// and an XRC registration on a receive QP another context created.
void populate(Context &c, const TempFile &f, std::uint32_t shared_qpn)
{
	static char buf[4096];
	Handle pd = NEED(c.alloc_pd());
	MrInfo mr = NEED(c.reg_mr(pd, buf, sizeof(buf), kLocalWrite | kRemoteWrite | 16 /* MW_BIND */));
	EvqInfo ch = NEED(c.create_comp_channel());
	CqInfo cq = NEED(c.create_cq(16, Ref(ch.handle), 0, 7));
	CqInfo cq2 = NEED(c.create_cq(16));
	NEED(c.create_async_event_queue());
	QpEnv env{pd, cq.handle};
	Handle rc = 0;
	for (std::uint32_t t : {UABI_QPT_RC, UABI_QPT_UC, UABI_QPT_UD, UABI_QPT_XRC_SEND}) {
		QpInfo q = make_qp(c, env, t);
		if (t == UABI_QPT_RC)
			rc = q.handle;
	}
	// Windows of both types, bound: each holds the (older) MR, which the
	// close must still free.
	for (std::uint32_t type : {UABI_MW_TYPE_1, UABI_MW_TYPE_2}) {
		MwInfo w = NEED(c.alloc_mw(pd, type));
		uabi_mw_bind b{};
		b.addr = reinterpret_cast<std::uintptr_t>(buf);
		b.length = 64;
		b.access = kRemoteWrite;
		b.rkey = (w.rkey & ~0xffu) | ((w.rkey + 1) & 0xffu);
		NEED(c.bind_mw(w.handle, Ref(mr.handle), Ref(rc), b));
	}

	SrqCreate sc;
	sc.pd = pd;
	sc.init.attr.max_wr = 16;
	sc.init.attr.max_sge = 1;
	SrqInfo srq = NEED(c.create_srq(sc));
	QpCreate qc;
	qc.pd = pd;
	qc.send_cq = cq2.handle;
	qc.recv_cq = cq2.handle;
	qc.srq = srq.handle;
	qc.init = qp_init(UABI_QPT_RC);
	qc.attr = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_RTS);
	qc.attr_mask = UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS |
		       UABI_QP_AV | UABI_QP_PATH_MTU | UABI_QP_DEST_QPN | UABI_QP_RQ_PSN |
		       UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER | UABI_QP_TIMEOUT |
		       UABI_QP_RETRY_CNT | UABI_QP_RNR_RETRY | UABI_QP_SQ_PSN |
		       UABI_QP_MAX_QP_RD_ATOMIC;
	NEED(c.create_qp(qc));
	NEED(c.create_ah(pd, local_av()));

	// The connection manager: a channel and a listening ID on it.
	Command cmch(UABI_OBJ_CM_CHANNEL, UABI_METHOD_CREATE);
	cmch.add_out<std::int32_t>(UABI_ATTR_CM_CHANNEL_FD, kMandatory | UABI_ATTR_F_FD);
	Handle chan = NEED(c.call(std::move(cmch))).result(0).out_handle;
	uabi_cm_id_create cc{};
	cc.ps = UABI_CM_PS_TCP;
	Command id(UABI_OBJ_CM_ID, UABI_METHOD_CREATE);
	id.add_handle(UABI_ATTR_CM_ID_CHANNEL, chan).add_in(UABI_ATTR_CM_ID_CREATE, cc);
	Handle cm = NEED(c.call(std::move(id))).result(0).out_handle;
	NEED(c.call(Command(UABI_OBJ_CM_ID, UABI_CM_ID_LISTEN, cm)));

	// XRC: a private domain with an XRC SRQ and its own receive QP, and
	// the shared domain with a registration on someone else's QP.
	Handle anon = NEED(c.open_xrcd(-1, 0));
	SrqCreate xs;
	xs.pd = pd;
	xs.xrcd = anon;
	xs.cq = cq2.handle;
	xs.init.srq_type = UABI_SRQT_XRC;
	xs.init.attr.max_wr = 16;
	xs.init.attr.max_sge = 1;
	NEED(c.create_srq(xs));
	std::uint32_t own = UABI_XRC_QPN_CREATE;
	NEED(c.register_xrc_rcv_qp(anon, own, qp_init(UABI_QPT_XRC_RECV)));
	Handle shared = NEED(c.open_xrcd(f.fd(), 0));
	std::uint32_t q = shared_qpn;
	NEED(c.register_xrc_rcv_qp(shared, q));
	NEED(c.modify_xrc_rcv_qp(shared, q, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT),
				 UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
				     UABI_QP_ACCESS_FLAGS));

	// A chain of dependent objects.
	Chain chain(UABI_MSG_F_ALL_OR_NOTHING);
	auto cpd = chain.alloc_pd();
	auto ccq = chain.create_cq({.cqe = 4});
	QpCreate cqc;
	cqc.pd = cpd;
	cqc.send_cq = ccq;
	cqc.recv_cq = ccq;
	cqc.init = qp_init(UABI_QPT_RC);
	auto cqp = chain.create_qp(cqc);
	chain.modify_qp(cqp, valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT),
			UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS);
	chain.reg_mr(cpd, buf, 64, kLocalWrite);
	chain.create_ah(cpd, local_av());
	NEED(chain.execute(c));
}

TEST_F(Lifecycle, ClosingAContextDestroysEverythingItOwned)
{
	// This context creates a receive QP the doomed one registers on.
	TempFile f;
	Handle x = NEED(ctx().open_xrcd(f.fd(), UABI_XRCD_O_CREAT));
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	NEED(ctx().register_xrc_rcv_qp(x, qpn, qp_init(UABI_QPT_XRC_RECV)));
	Snapshot base = snapshot(ctx());

	Context &doomed = open_extra();
	populate(doomed, f, qpn);
	Snapshot full = snapshot(ctx());
	EXPECT_EQ(full.c.contexts, base.c.contexts + 1);
	auto own = NEED(doomed.counters());
	for (unsigned t = UABI_OBJ_PD; t < UABI_OBJ_MAX_CORE; t++) {
		EXPECT_EQ(full.c.device[t], base.c.device[t] + own.context[t])
		    << "device counter of " << object_name(t) << " while the context lives";
		EXPECT_GT(own.context[t], 0u) << "the context made a " << object_name(t);
	}

	close_extra(doomed);
	Snapshot after = snapshot(ctx());
	expect_device_counters_eq(after.c, base.c, "after the context closed");
	expect_sw_stats_eq(after.sw, base.sw, "driver after the context closed");
	EXPECT_EQ(after.c.contexts, full.c.contexts - 1);
	// The receive QP the closed context was registered on lives on, in the
	// state it gave it.
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(x, qpn)).qp_state, unsigned(UABI_QPS_INIT));
}

TEST_F(Lifecycle, ManyContextsOpenAndCloseCleanly)
{
	Snapshot base = snapshot(ctx());
	TempFile f;
	Handle x = NEED(ctx().open_xrcd(f.fd(), UABI_XRCD_O_CREAT));
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	Handle reg = NEED(ctx().register_xrc_rcv_qp(x, qpn, qp_init(UABI_QPT_XRC_RECV)));
	for (int i = 0; i < 8; i++) {
		Context &c = open_extra();
		populate(c, f, qpn);
		close_extra(c);
	}
	EXPECT_OK(ctx().destroy_qp(reg));
	EXPECT_OK(ctx().close_xrcd(x));
	expect_snapshot_eq(base, snapshot(ctx()), "after eight populated contexts");
}

// Rule 11.
class Concurrency : public UabiTest
{
};

TEST_F(Concurrency, FourThreadsCreatingAndDestroyingOnOneContext)
{
	Snapshot before = snapshot(ctx());
	Context &c = ctx();
	std::mutex mu;
	std::vector<std::string> errors;
	auto record = [&](const char *what, int e) {
		std::lock_guard<std::mutex> g(mu);
		if (errors.size() < 20)
			errors.push_back(std::string(what) + ": " + errno_name(e));
	};
	auto worker = [&](int id) {
		for (int i = 0; i < 300; i++) {
			auto pd = c.alloc_pd();
			if (!pd) {
				if (pd.error() != EBUSY)
					record("alloc_pd", pd.error());
				continue;
			}
			auto cq = c.create_cq(4 + id);
			if (!cq && cq.error() != EBUSY)
				record("create_cq", cq.error());
			if (cq) {
				Result<void> r = c.destroy_cq(cq->handle);
				for (int t = 0; !r && r.error() == EBUSY && t < 1000; t++)
					r = c.destroy_cq(cq->handle);
				if (!r)
					record("destroy_cq", r.error());
			}
			Result<void> r = c.dealloc_pd(*pd);
			for (int t = 0; !r && r.error() == EBUSY && t < 1000; t++)
				r = c.dealloc_pd(*pd);
			if (!r)
				record("dealloc_pd", r.error());
		}
	};
	std::vector<std::thread> threads;
	for (int i = 0; i < 4; i++)
		threads.emplace_back(worker, i);
	for (auto &t : threads)
		t.join();
	for (const auto &e : errors)
		ADD_FAILURE() << e;
	expect_snapshot_eq(before, snapshot(ctx()), "after the threads");
}

TEST_F(Concurrency, ObjectsInUseByOtherThreadsCannotBeDestroyed)
{
	Snapshot before = snapshot(ctx());
	Context &c = ctx();
	QpEnv env = make_env(c);
	static char buf[64];
	MrInfo anchor_mr = NEED(c.reg_mr(env.pd, buf, sizeof(buf), kLocalWrite));
	QpInfo anchor_qp = make_qp(c, env, UABI_QPT_UD);

	std::atomic<bool> stop{false};
	std::atomic<int> destroyed{0};
	std::mutex mu;
	std::vector<std::string> errors;
	auto record = [&](const char *what, int e) {
		std::lock_guard<std::mutex> g(mu);
		if (errors.size() < 20)
			errors.push_back(std::string(what) + ": " + errno_name(e));
	};
	std::thread destroyer([&] {
		while (!stop.load()) {
			auto a = c.dealloc_pd(env.pd);
			auto b = c.destroy_cq(env.cq);
			if (a.ok() || b.ok())
				destroyed++;
			if (!a.ok() && a.error() != EBUSY)
				record("dealloc_pd(shared)", a.error());
			if (!b.ok() && b.error() != EBUSY)
				record("destroy_cq(shared)", b.error());
		}
	});
	std::vector<std::thread> users;
	for (int id = 0; id < 3; id++) {
		users.emplace_back([&, id] {
			for (int i = 0; i < 200; i++) {
				QpCreate qc;
				qc.pd = env.pd;
				qc.send_cq = env.cq;
				qc.recv_cq = env.cq;
				qc.init = qp_init(id == 0 ? UABI_QPT_RC : UABI_QPT_UC);
				auto qp = c.create_qp(qc);
				if (!qp) {
					if (qp.error() != EBUSY)
						record("create_qp", qp.error());
					continue;
				}
				Result<void> r = c.destroy_qp(qp->handle);
				for (int t = 0; !r && r.error() == EBUSY && t < 1000; t++)
					r = c.destroy_qp(qp->handle);
				if (!r)
					record("destroy_qp", r.error());
			}
		});
	}
	for (auto &t : users)
		t.join();
	stop = true;
	destroyer.join();
	for (const auto &e : errors)
		ADD_FAILURE() << e;
	EXPECT_EQ(destroyed.load(), 0) << "a PD or CQ in use was destroyed";
	EXPECT_OK(c.destroy_qp(anchor_qp.handle));
	EXPECT_OK(c.dereg_mr(anchor_mr.handle));
	EXPECT_OK(c.destroy_cq(env.cq));
	EXPECT_OK(c.dealloc_pd(env.pd));
	expect_snapshot_eq(before, snapshot(ctx()), "after the threads");
}

TEST_F(Concurrency, ThreadsOnSeparateContextsWithChains)
{
	Snapshot before = snapshot(ctx());
	std::vector<std::unique_ptr<Context>> ctxs;
	for (int i = 0; i < 4; i++)
		ctxs.push_back(open_context());
	std::mutex mu;
	std::vector<std::string> errors;
	std::vector<std::thread> threads;
	for (int id = 0; id < 4; id++) {
		threads.emplace_back([&, id] {
			Context &c = *ctxs[id];
			for (int i = 0; i < 100; i++) {
				Chain ch(UABI_MSG_F_ALL_OR_NOTHING);
				auto pd = ch.alloc_pd();
				auto cq = ch.create_cq({.cqe = 4});
				QpCreate qc;
				qc.pd = pd;
				qc.send_cq = cq;
				qc.recv_cq = cq;
				qc.init = qp_init(UABI_QPT_RC);
				auto qp = ch.create_qp(qc);
				ch.destroy(UABI_OBJ_QP, qp);
				ch.destroy(UABI_OBJ_CQ, cq);
				ch.destroy(UABI_OBJ_PD, pd);
				auto r = ch.execute(c);
				if (!r) {
					std::lock_guard<std::mutex> g(mu);
					errors.push_back("chain: " + errno_name(r.error()));
					return;
				}
			}
		});
	}
	for (auto &t : threads)
		t.join();
	for (const auto &e : errors)
		ADD_FAILURE() << e;
	for (auto &c : ctxs)
		expect_context_counters_eq(NEED(c->counters()), uabi_counters{}, "thread context");
	ctxs.clear();
	Snapshot after = snapshot(ctx());
	expect_snapshot_eq(before, after, "after the threads' contexts closed");
}

} // namespace
