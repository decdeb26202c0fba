// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// End to end, in one process: two endpoints (two uAPI contexts on the
// in-process backend) connected through the software device, exchanging
// real bytes through our libibverbs.so.1.  ctest runs this binary twice:
// once with same-process copies (memcpy) and once with UABI_SW_FORCE_VM=1,
// where every copy goes through process_vm_writev/readv as between two
// processes.
#include "verbs_fixture.hpp"

#include <atomic>
#include <csignal>
#include <condition_variable>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <poll.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

using namespace e2e;

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace {

// Allocations made in its scope are not reported as leaks.
struct LeakOnPurpose {
#if defined(__SANITIZE_ADDRESS__)
	LeakOnPurpose() { __lsan_disable(); }
	~LeakOnPurpose() { __lsan_enable(); }
#endif
};

class Verbs : public ::testing::Test {
protected:
	Endpoint a, b;

	void SetUp() override
	{
		ASSERT_NO_FATAL_FAILURE(a.open());
		ASSERT_NO_FATAL_FAILURE(b.open());
	}

	void pair(ibv_qp_type t, uint8_t rnr_retry = 7)
	{
		ASSERT_NO_FATAL_FAILURE(a.make_qp(t));
		ASSERT_NO_FATAL_FAILURE(b.make_qp(t));
		ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num, kAccessAll, rnr_retry));
		ASSERT_NO_FATAL_FAILURE(b.connect(a.qp->qp_num, kAccessAll, rnr_retry));
	}

	// Both events of an overrun, in either order (the CQ's and the QP's are
	// raised by different calls), then @qp in ERR.
	void expect_overrun_events(ibv_context *ctx, ibv_cq *cq, ibv_qp *qp)
	{
		bool cq_err = false, qp_fatal = false;
		for (int i = 0; i < 2; i++) {
			pollfd p{ctx->async_fd, POLLIN, 0};
			ASSERT_EQ(poll(&p, 1, 2000), 1) << "event " << i;
			ibv_async_event ev;
			ASSERT_EQ(ibv_get_async_event(ctx, &ev), 0);
			if (ev.event_type == IBV_EVENT_CQ_ERR) {
				EXPECT_EQ(ev.element.cq, cq);
				cq_err = true;
			} else {
				EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
				EXPECT_EQ(ev.element.qp, qp);
				qp_fatal = true;
			}
			ibv_ack_async_event(&ev);
		}
		EXPECT_TRUE(cq_err && qp_fatal);
		pollfd p{ctx->async_fd, POLLIN, 0};
		EXPECT_EQ(poll(&p, 1, 20), 0) << "one event of each kind";
		ibv_qp_attr qa;
		ibv_qp_init_attr qi;
		ASSERT_EQ(ibv_query_qp(qp, &qa, IBV_QP_STATE, &qi), 0);
		EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
	}

	// Replaces @cq, one of @e's CQs, by one of 2 entries, connects a and b
	// and has a send 3 signaled messages that b receives: the third
	// completion overruns that CQ.
	void overrun(Endpoint &e, ibv_cq *&cq)
	{
		ASSERT_EQ(ibv_destroy_cq(cq), 0);
		cq = ibv_create_cq(e.ctx, 1, nullptr, nullptr, 0);
		ASSERT_NE(cq, nullptr);
		pair(IBV_QPT_RC);
		for (int i = 0; i < 4; i++)
			ASSERT_EQ(b.post_recv(i, i * 64, 64), 0);
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(a.post_send(IBV_WR_SEND, i, 0, 8, IBV_SEND_SIGNALED), 0);
		ASSERT_NO_FATAL_FAILURE(expect_overrun_events(e.ctx, cq, e.qp));
		EXPECT_EQ(poll_n(cq, 3, 50).size(), 2u);
	}

	void fill(Endpoint &e, std::size_t off, std::size_t len, unsigned char seed)
	{
		for (std::size_t i = 0; i < len; i++)
			e.buf[off + i] = static_cast<unsigned char>(seed + i * 7);
	}
};

TEST(Device, ListOpenQuery)
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	ASSERT_NE(list, nullptr);
	ASSERT_EQ(n, 1);
	EXPECT_STREQ(ibv_get_device_name(list[0]), "uabi_sw0");
	ibv_context *ctx = ibv_open_device(list[0]);
	ASSERT_NE(ctx, nullptr);
	ibv_port_attr pa{};
	ASSERT_EQ(ibv_query_port(ctx, 1, &pa), 0);
	EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
	EXPECT_EQ(pa.lid, 1);
	EXPECT_EQ(pa.link_layer, IBV_LINK_LAYER_INFINIBAND);
	ibv_device_attr da{};
	ASSERT_EQ(ibv_query_device(ctx, &da), 0);
	EXPECT_EQ(da.phys_port_cnt, 1);
	EXPECT_EQ(da.atomic_cap, IBV_ATOMIC_HCA);
	union ibv_gid gid;
	ASSERT_EQ(ibv_query_gid(ctx, 1, 0, &gid), 0);
	EXPECT_EQ(gid.raw[0], 0xfe);
	EXPECT_EQ(ibv_query_gid(ctx, 1, 5, &gid), -1);
	ibv_free_device_list(list);
	EXPECT_EQ(ibv_close_device(ctx), 0);
}

TEST_F(Verbs, RcSendRecvMultiSgeAndInline)
{
	pair(IBV_QPT_RC);
	// Receiver: two SGEs, 100 + 200 bytes at separate places.
	ibv_sge rs[2] = {{b.addr(1000), 100, b.mr->lkey}, {b.addr(5000), 200, b.mr->lkey}};
	ibv_recv_wr rwr{};
	rwr.wr_id = 0xabc;
	rwr.sg_list = rs;
	rwr.num_sge = 2;
	ibv_recv_wr *rbad;
	ASSERT_EQ(ibv_post_recv(b.qp, &rwr, &rbad), 0);
	// Sender: three SGEs, 250 bytes in all.
	fill(a, 0, 100, 1);
	fill(a, 300, 50, 2);
	fill(a, 600, 100, 3);
	ibv_sge ss[3] = {{a.addr(0), 100, a.mr->lkey}, {a.addr(300), 50, a.mr->lkey},
			 {a.addr(600), 100, a.mr->lkey}};
	ibv_send_wr swr{};
	swr.wr_id = 0x123;
	swr.sg_list = ss;
	swr.num_sge = 3;
	swr.opcode = IBV_WR_SEND_WITH_IMM;
	swr.imm_data = htonl(0xdeadbeef);
	swr.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr *sbad;
	ASSERT_EQ(ibv_post_send(a.qp, &swr, &sbad), 0);

	auto sc = poll_n(a.scq, 1);
	ASSERT_EQ(sc.size(), 1u);
	EXPECT_EQ(sc[0].wr_id, 0x123u);
	EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(sc[0].opcode, IBV_WC_SEND);
	EXPECT_EQ(sc[0].qp_num, a.qp->qp_num);

	auto rc = poll_n(b.rcq, 1);
	ASSERT_EQ(rc.size(), 1u);
	EXPECT_EQ(rc[0].wr_id, 0xabcu);
	EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(rc[0].opcode, IBV_WC_RECV);
	EXPECT_EQ(rc[0].byte_len, 250u);
	EXPECT_EQ(rc[0].qp_num, b.qp->qp_num);
	EXPECT_EQ(rc[0].src_qp, a.qp->qp_num);
	EXPECT_TRUE(rc[0].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(ntohl(rc[0].imm_data), 0xdeadbeefu);
	// The 250 bytes, in order, across the two receive SGEs.
	std::vector<unsigned char> sent;
	sent.insert(sent.end(), a.buf.begin(), a.buf.begin() + 100);
	sent.insert(sent.end(), a.buf.begin() + 300, a.buf.begin() + 350);
	sent.insert(sent.end(), a.buf.begin() + 600, a.buf.begin() + 700);
	std::vector<unsigned char> got;
	got.insert(got.end(), b.buf.begin() + 1000, b.buf.begin() + 1100);
	got.insert(got.end(), b.buf.begin() + 5000, b.buf.begin() + 5150);
	EXPECT_EQ(sent, got);
	EXPECT_EQ(b.buf[5150], 0);	// nothing past byte_len

	// Inline: the buffer is not registered and may be reused at once.
	char msg[32] = "inline hello";
	ASSERT_EQ(b.post_recv(7, 0, 64), 0);
	ibv_sge is{reinterpret_cast<uintptr_t>(msg), 13, 0};
	swr = {};
	swr.wr_id = 8;
	swr.sg_list = &is;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	ASSERT_EQ(ibv_post_send(a.qp, &swr, &sbad), 0);
	std::memset(msg, 'x', sizeof(msg));
	rc = poll_n(b.rcq, 1);
	ASSERT_EQ(rc.size(), 1u);
	EXPECT_EQ(rc[0].byte_len, 13u);
	EXPECT_FALSE(rc[0].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_STREQ(reinterpret_cast<char *>(b.buf.data()), "inline hello");
	EXPECT_EQ(poll_n(a.scq, 1).size(), 1u);
}

TEST_F(Verbs, RcUnsignaledSendsCompleteOnlyOnReceiver)
{
	pair(IBV_QPT_RC);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(b.post_recv(i, i * 16, 16), 0);
	for (int i = 0; i < 10; i++)
		ASSERT_EQ(a.post_send(IBV_WR_SEND, 100 + i, 0, 16, 0), 0);
	auto rc = poll_n(b.rcq, 10);
	ASSERT_EQ(rc.size(), 10u);
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(rc[i].wr_id, uint64_t(i));	// in order
	EXPECT_EQ(poll_quiet(a.scq), 0);
}

TEST_F(Verbs, RdmaWriteWriteImmRead)
{
	pair(IBV_QPT_RC);
	fill(a, 0, 4096, 9);
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 1, 0, 4096, IBV_SEND_SIGNALED, b.addr(8192),
			      b.mr->rkey),
		  0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(c[0].opcode, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data() + 8192, 4096));
	EXPECT_EQ(poll_quiet(b.rcq), 0);	// plain write: nothing for the receiver

	// WRITE_WITH_IMM consumes a receive WQE and reports the length.
	ASSERT_EQ(b.post_recv(55, 0, 0), 0);
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE_WITH_IMM, 2, 100, 300, IBV_SEND_SIGNALED,
			      b.addr(20000), b.mr->rkey, 77),
		  0);
	auto r = poll_n(b.rcq, 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].wr_id, 55u);
	EXPECT_EQ(r[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(r[0].byte_len, 300u);
	EXPECT_EQ(ntohl(r[0].imm_data), 77u);
	EXPECT_EQ(0, std::memcmp(a.buf.data() + 100, b.buf.data() + 20000, 300));
	EXPECT_EQ(poll_n(a.scq, 1).size(), 1u);

	// READ pulls the peer's bytes.
	fill(b, 30000, 1000, 42);
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_READ, 3, 40000, 1000, IBV_SEND_SIGNALED, b.addr(30000),
			      b.mr->rkey),
		  0);
	c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(c[0].opcode, IBV_WC_RDMA_READ);
	EXPECT_EQ(c[0].byte_len, 1000u);
	EXPECT_EQ(0, std::memcmp(a.buf.data() + 40000, b.buf.data() + 30000, 1000));
}

TEST_F(Verbs, Atomics)
{
	pair(IBV_QPT_RC);
	uint64_t init = 1000;
	std::memcpy(b.buf.data() + 64, &init, 8);
	ibv_sge s{a.addr(0), 8, a.mr->lkey};
	ibv_send_wr wr{};
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = b.addr(64);
	wr.wr.atomic.rkey = b.mr->rkey;
	wr.wr.atomic.compare_add = 5;
	ibv_send_wr *bad;
	ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(c[0].opcode, IBV_WC_FETCH_ADD);
	uint64_t v;
	std::memcpy(&v, a.buf.data(), 8);
	EXPECT_EQ(v, 1000u);
	std::memcpy(&v, b.buf.data() + 64, 8);
	EXPECT_EQ(v, 1005u);

	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 1005;
	wr.wr.atomic.swap = 77;
	ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].opcode, IBV_WC_COMP_SWAP);
	std::memcpy(&v, b.buf.data() + 64, 8);
	EXPECT_EQ(v, 77u);
	// A failed compare leaves the target and returns the old value.
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.swap = 99;
	ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	ASSERT_EQ(poll_n(a.scq, 1).size(), 1u);
	std::memcpy(&v, b.buf.data() + 64, 8);
	EXPECT_EQ(v, 77u);
	std::memcpy(&v, a.buf.data(), 8);
	EXPECT_EQ(v, 77u);
}

TEST_F(Verbs, AtomicsAreAtomicAcrossInitiators)
{
	pair(IBV_QPT_RC);
	// A second initiator c, on its own context, into the same counter of b.
	Endpoint c;
	ASSERT_NO_FATAL_FAILURE(c.open());
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ibv_qp *b2 = b.extra_qp();
	ASSERT_NE(b2, nullptr);
	ASSERT_NO_FATAL_FAILURE(c.connect(b2->qp_num));
	ASSERT_NO_FATAL_FAILURE(Endpoint::connect_qp(b2, c.qp->qp_num));
	constexpr int kIters = 2000;
	auto hammer = [&](Endpoint &e) {
		for (int i = 0; i < kIters; i++) {
			ibv_sge s{e.addr(0), 8, e.mr->lkey};
			ibv_send_wr wr{};
			wr.sg_list = &s;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.remote_addr = b.addr(128);
			wr.wr.atomic.rkey = b.mr->rkey;
			wr.wr.atomic.compare_add = 1;
			ibv_send_wr *bad;
			ASSERT_EQ(ibv_post_send(e.qp, &wr, &bad), 0);
			auto w = poll_n(e.scq, 1);
			ASSERT_EQ(w.size(), 1u);
			ASSERT_EQ(w[0].status, IBV_WC_SUCCESS);
		}
	};
	std::thread t1([&] { hammer(a); });
	std::thread t2([&] { hammer(c); });
	t1.join();
	t2.join();
	uint64_t v;
	std::memcpy(&v, b.buf.data() + 128, 8);
	EXPECT_EQ(v, uint64_t(2 * kIters));
	EXPECT_EQ(ibv_destroy_qp(b2), 0);
}

TEST_F(Verbs, RemoteAccessViolationErrorsAndFlushes)
{
	pair(IBV_QPT_RC);
	ASSERT_EQ(b.post_recv(1, 0, 64), 0);
	// Out of bounds of b's MR.
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 10, 0, 64, IBV_SEND_SIGNALED,
			      b.addr(b.buf.size() - 8), b.mr->rkey),
		  0);
	// Queued behind it, unsignaled: flushed all the same.
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 11, 0, 8, 0), 0);
	auto c = poll_n(a.scq, 2);
	ASSERT_EQ(c.size(), 2u);
	EXPECT_EQ(c[0].wr_id, 10u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(c[1].wr_id, 11u);
	EXPECT_EQ(c[1].status, IBV_WC_WR_FLUSH_ERR);
	ibv_qp_attr qa;
	ibv_qp_init_attr qi;
	ASSERT_EQ(ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi), 0);
	EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
	// The responder NAKed: its QP went to ERR too (IB: a local access
	// violation), its posted receive is flushed, and its owner gets the
	// affiliated event.
	auto f = poll_n(b.rcq, 1);
	ASSERT_EQ(f.size(), 1u);
	EXPECT_EQ(f[0].wr_id, 1u);
	EXPECT_EQ(f[0].status, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &qi), 0);
	EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
	ibv_async_event ev;
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
	EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
	EXPECT_EQ(ev.element.qp, b.qp);
	ibv_ack_async_event(&ev);
	// Wrong rkey, from a fresh pair.
	Endpoint x, y;
	ASSERT_NO_FATAL_FAILURE(x.open());
	ASSERT_NO_FATAL_FAILURE(y.open());
	ASSERT_NO_FATAL_FAILURE(x.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(y.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(x.connect(y.qp->qp_num));
	// y's QP forbids remote writes.
	ASSERT_NO_FATAL_FAILURE(y.connect(x.qp->qp_num, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(x.post_send(IBV_WR_RDMA_WRITE, 1, 0, 8, IBV_SEND_SIGNALED, y.addr(0), y.mr->rkey), 0);
	c = poll_n(x.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR);
	// Posting to a QP in ERR completes with a flush.
	ASSERT_EQ(x.post_send(IBV_WR_SEND, 2, 0, 8, 0), 0);
	ASSERT_EQ(x.post_recv(3, 0, 8), 0);
	c = poll_n(x.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_WR_FLUSH_ERR);
	c = poll_n(x.rcq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].wr_id, 3u);
	EXPECT_EQ(c[0].status, IBV_WC_WR_FLUSH_ERR);
}

// IBTA C9-88: a zero-length RDMA WRITE, READ or WRITE WITH IMM carries no
// valid rkey or address; the responder checks neither (a framework posts
// exactly that, rkey 0 at address 0, to flush an endpoint).  RC and UC, with
// no SGE, with one SGE of length 0, and inline.
class ZeroLengthRdma : public Verbs, public ::testing::WithParamInterface<ibv_qp_type>
{
};

TEST_P(ZeroLengthRdma, NeedsNoKeyOrAddress)
{
	const ibv_qp_type t = GetParam();
	pair(t);
	std::vector<ibv_wr_opcode> ops = {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM};
	if (t == IBV_QPT_RC)
		ops.push_back(IBV_WR_RDMA_READ);
	uint64_t id = 0;
	int receives = 0;
	for (ibv_wr_opcode op : ops) {
		for (int form = 0; form < 3; form++) {	// no SGE, an empty SGE, inline
			if (form == 2 && op == IBV_WR_RDMA_READ)
				continue;
			if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
				ASSERT_EQ(b.post_recv(900 + id, 0, 64), 0);
				receives++;
			}
			ibv_sge s{a.addr(0), 0, a.mr->lkey};
			ibv_send_wr wr{}, *bad = nullptr;
			wr.wr_id = ++id;
			wr.opcode = op;
			wr.sg_list = &s;
			wr.num_sge = form == 0 ? 0 : 1;
			wr.send_flags = IBV_SEND_SIGNALED | (form == 2 ? IBV_SEND_INLINE : 0);
			wr.imm_data = htonl(7);
			wr.wr.rdma.remote_addr = 0;
			wr.wr.rdma.rkey = 0;
			ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0) << "op " << op << " form " << form;
			auto c = poll_n(a.scq, 1);
			ASSERT_EQ(c.size(), 1u);
			EXPECT_EQ(c[0].status, IBV_WC_SUCCESS)
			    << "op " << op << " form " << form << ": " << ibv_wc_status_str(c[0].status);
			EXPECT_EQ(c[0].byte_len, 0u);
		}
	}
	auto r = poll_n(b.rcq, receives);
	ASSERT_EQ(int(r.size()), receives);
	for (const ibv_wc &w : r) {
		EXPECT_EQ(w.status, IBV_WC_SUCCESS);
		EXPECT_EQ(w.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		EXPECT_EQ(w.byte_len, 0u);
		EXPECT_EQ(ntohl(w.imm_data), 7u);
	}
	// Both QPs still work: nothing moved to ERR, no event.
	for (ibv_qp *q : {a.qp, b.qp}) {
		ibv_qp_attr qa;
		ibv_qp_init_attr qi;
		ASSERT_EQ(ibv_query_qp(q, &qa, IBV_QP_STATE, &qi), 0);
		EXPECT_EQ(qa.qp_state, IBV_QPS_RTS);
	}
	pollfd p{b.ctx->async_fd, POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 0), 0);
	fill(a, 0, 64, 5);
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 99, 0, 64, IBV_SEND_SIGNALED, b.addr(4096),
			      b.mr->rkey),
		  0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_TRUE(same_bytes_soon(a.buf.data(), b.buf.data() + 4096, 64));
}

INSTANTIATE_TEST_SUITE_P(RcUc, ZeroLengthRdma, ::testing::Values(IBV_QPT_RC, IBV_QPT_UC),
			 [](const ::testing::TestParamInfo<ibv_qp_type> &i) {
				 return std::string(i.param == IBV_QPT_RC ? "RC" : "UC");
			 });

// A zero-length RDMA still needs the responder QP's permission for it, as
// on rxe (the access flags are not a key check).
TEST_F(Verbs, ZeroLengthRdmaWriteToAQpWithoutRemoteWriteIsAnAccessError)
{
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(b.connect(a.qp->qp_num, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 1, 0, 0, IBV_SEND_SIGNALED, 0, 0), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR);
}

// uDAPL connects every RC endpoint with qp_access_flags 0x1f (MW_BIND
// among them); other bits Linux passes through are ignored too: the QP
// connects and RDMA works by its remote-access bits alone.
TEST_F(Verbs, AccessBitsTheDeviceDoesNotImplementAreIgnored)
{
	for (int extra : {int(IBV_ACCESS_MW_BIND), int(IBV_ACCESS_RELAXED_ORDERING),
			  IBV_ACCESS_ZERO_BASED | IBV_ACCESS_HUGETLB}) {
		Endpoint x, y;
		ASSERT_NO_FATAL_FAILURE(x.open());
		ASSERT_NO_FATAL_FAILURE(y.open());
		ASSERT_NO_FATAL_FAILURE(x.make_qp(IBV_QPT_RC));
		ASSERT_NO_FATAL_FAILURE(y.make_qp(IBV_QPT_RC));
		ASSERT_NO_FATAL_FAILURE(x.connect(y.qp->qp_num, kAccessAll | extra));
		ASSERT_NO_FATAL_FAILURE(y.connect(x.qp->qp_num, kAccessAll | extra));
		ibv_qp_attr qa;
		ibv_qp_init_attr qi;
		ASSERT_EQ(ibv_query_qp(y.qp, &qa, IBV_QP_ACCESS_FLAGS, &qi), 0);
		EXPECT_EQ(qa.qp_access_flags, unsigned(kAccessAll | extra));
		fill(x, 0, 256, 11);
		ASSERT_EQ(x.post_send(IBV_WR_RDMA_WRITE, 1, 0, 256, IBV_SEND_SIGNALED, y.addr(512),
				      y.mr->rkey),
			  0);
		ASSERT_EQ(x.post_send(IBV_WR_RDMA_READ, 2, 1024, 256, IBV_SEND_SIGNALED, y.addr(512),
				      y.mr->rkey),
			  0);
		auto c = poll_n(x.scq, 2);
		ASSERT_EQ(c.size(), 2u);
		EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
		EXPECT_EQ(c[1].status, IBV_WC_SUCCESS);
		EXPECT_EQ(0, std::memcmp(x.buf.data(), y.buf.data() + 512, 256));
		EXPECT_EQ(0, std::memcmp(x.buf.data(), x.buf.data() + 1024, 256));
	}
}

TEST_F(Verbs, LocalProtectionError)
{
	pair(IBV_QPT_RC);
	ASSERT_EQ(b.post_recv(1, 0, 64), 0);
	ibv_sge s{a.addr(0), 64, a.mr->lkey + 1};	// no such key
	ibv_send_wr wr{};
	wr.wr_id = 5;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	ibv_send_wr *bad;
	ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_LOC_PROT_ERR);
}

TEST_F(Verbs, ReceiveTooSmallIsLengthError)
{
	pair(IBV_QPT_RC);
	ASSERT_EQ(b.post_recv(1, 0, 16), 0);
	ASSERT_EQ(b.post_recv(2, 16, 16), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 9, 0, 64), 0);
	auto r = poll_n(b.rcq, 2);
	ASSERT_EQ(r.size(), 2u);
	EXPECT_EQ(r[0].wr_id, 1u);
	EXPECT_EQ(r[0].status, IBV_WC_LOC_LEN_ERR);
	EXPECT_EQ(r[1].wr_id, 2u);
	EXPECT_EQ(r[1].status, IBV_WC_WR_FLUSH_ERR);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(Verbs, RnrWaitsForReceiveThenSucceeds)
{
	pair(IBV_QPT_RC, 7);
	fill(a, 0, 32, 5);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 1, 0, 32), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 2, 32, 32), 0);	// queued behind
	EXPECT_EQ(poll_quiet(a.scq, 30), 0);
	ASSERT_EQ(b.post_recv(10, 0, 64), 0);
	ASSERT_EQ(b.post_recv(11, 64, 64), 0);
	auto c = poll_n(a.scq, 2);	// the sender's progress retries
	ASSERT_EQ(c.size(), 2u);
	EXPECT_EQ(c[0].wr_id, 1u);
	EXPECT_EQ(c[1].wr_id, 2u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	auto r = poll_n(b.rcq, 2);
	ASSERT_EQ(r.size(), 2u);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data(), 32));
}

// The sender sleeps in its own poll() on the channel fd, never calling the
// library, while its send waits for a receive buffer: the device retries
// on its own and the completion wakes it.
TEST_F(Verbs, DeferredSendProgressesWhileTheSenderSleeps)
{
	Endpoint c, d;
	ASSERT_NO_FATAL_FAILURE(c.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(d.open());
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	ASSERT_EQ(ibv_req_notify_cq(c.scq, 0), 0);
	ASSERT_EQ(c.post_send(IBV_WR_SEND, 1, 0, 16), 0);	// RNR: deferred
	const pid_t sender = this_tid();
	std::thread receiver([&] {
		// Only once the sender sleeps in its poll().
		EXPECT_TRUE(wait_blocked_in_poll(sender));
		EXPECT_EQ(d.post_recv(2, 0, 64), 0);
	});
	pollfd p{c.channel->fd, POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 5000), 1);
	receiver.join();
	ibv_cq *ev_cq;
	void *ev_ctx;
	ASSERT_EQ(ibv_get_cq_event(c.channel, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(ev_cq, 1);
	auto w = poll_n(c.scq, 1);
	ASSERT_EQ(w.size(), 1u);
	EXPECT_EQ(w[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(poll_n(d.rcq, 1).size(), 1u);
}

TEST_F(Verbs, RnrRetryExceeded)
{
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_RC));
	// rnr_retry 2, responder's timer 0.01 ms: fails after ~0.02 ms.
	ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num, kAccessAll, 2, 1));
	ASSERT_NO_FATAL_FAILURE(b.connect(a.qp->qp_num, kAccessAll, 2, 1));
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 1, 0, 8), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_RNR_RETRY_EXC_ERR);
}

TEST_F(Verbs, PeerNotReadyRetryExceeded)
{
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_RC));
	// b stays in RESET; timeout 4 (65 us) x (retry_cnt 1 + 1).
	ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num, kAccessAll, 7, 1, 4, 1));
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 1, 0, 8), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_RETRY_EXC_ERR);
}

TEST_F(Verbs, ModifyToErrorFlushesEverything)
{
	pair(IBV_QPT_RC);
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(a.post_recv(i, 0, 8), 0);
	ibv_qp_attr at{};
	at.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
	auto r = poll_n(a.rcq, 5);
	ASSERT_EQ(r.size(), 5u);
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(r[i].wr_id, uint64_t(i));
		EXPECT_EQ(r[i].status, IBV_WC_WR_FLUSH_ERR);
	}
	EXPECT_EQ(poll_quiet(a.rcq), 0);	// exactly once
}

TEST_F(Verbs, Uc)
{
	pair(IBV_QPT_UC);
	fill(a, 0, 512, 3);
	// No receive WQE: UC drops, the sender still completes.
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 1, 0, 512), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	ASSERT_EQ(b.post_recv(2, 1024, 512), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 3, 0, 512), 0);
	auto r = poll_n(b.rcq, 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].wr_id, 2u);
	EXPECT_EQ(r[0].byte_len, 512u);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data() + 1024, 512));
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 4, 0, 512, IBV_SEND_SIGNALED, b.addr(4096), b.mr->rkey), 0);
	EXPECT_EQ(poll_n(a.scq, 2).size(), 2u);
	EXPECT_TRUE(same_bytes_soon(a.buf.data(), b.buf.data() + 4096, 512));
	// READ is not a UC operation.
	EXPECT_EQ(a.post_send(IBV_WR_RDMA_READ, 5, 0, 8, IBV_SEND_SIGNALED, b.addr(0), b.mr->rkey), EINVAL);
}

TEST_F(Verbs, UdWithGrh)
{
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_UD));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_UD));
	ASSERT_NO_FATAL_FAILURE(a.connect(0));
	ASSERT_NO_FATAL_FAILURE(b.connect(0));
	ibv_ah_attr aa{};
	aa.dlid = 1;
	aa.port_num = 1;
	aa.sl = 3;
	aa.is_global = 1;
	ASSERT_EQ(ibv_query_gid(a.ctx, 1, 0, &aa.grh.dgid), 0);
	aa.grh.hop_limit = 1;
	ibv_ah *ah = ibv_create_ah(a.pd, &aa);
	ASSERT_NE(ah, nullptr);
	ASSERT_EQ(b.post_recv(1, 0, 40 + 100), 0);
	fill(a, 0, 100, 11);
	ASSERT_EQ(a.post_ud_send(2, 0, 100, ah, b.qp->qp_num), 0);
	auto r = poll_n(b.rcq, 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(r[0].byte_len, 140u);
	EXPECT_EQ(r[0].src_qp, a.qp->qp_num);
	// RoCEv2 carries no SL (no LRH): 0 there.
	EXPECT_EQ(r[0].sl, roce_port(b.ctx) ? 0 : 3);
	EXPECT_TRUE(r[0].wc_flags & IBV_WC_GRH);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data() + 40, 100));
	// The GRH names the sender: an AH back to it can be made from it.
	ibv_ah *back = ibv_create_ah_from_wc(b.pd, &r[0], reinterpret_cast<ibv_grh *>(b.buf.data()), 1);
	ASSERT_NE(back, nullptr) << strerror(errno);
	EXPECT_EQ(ibv_destroy_ah(back), 0);
	EXPECT_EQ(poll_n(a.scq, 1).size(), 1u);
	// A wrong qkey is dropped silently.
	ASSERT_EQ(b.post_recv(3, 0, 140), 0);
	ASSERT_EQ(a.post_ud_send(2, 0, 100, ah, b.qp->qp_num, 5), 0);
	EXPECT_EQ(poll_n(a.scq, 1).size(), 1u);
	EXPECT_EQ(poll_quiet(b.rcq), 0);
	EXPECT_EQ(ibv_destroy_ah(ah), 0);
}

TEST_F(Verbs, SharedReceiveQueue)
{
	ASSERT_NO_FATAL_FAILURE(b.make_srq());
	// Two senders into one SRQ.
	Endpoint c;
	ASSERT_NO_FATAL_FAILURE(c.open());
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_RC));
	ibv_qp *b2 = b.extra_qp();
	ASSERT_NE(b2, nullptr);
	ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(c.connect(b2->qp_num));
	ASSERT_NO_FATAL_FAILURE(b.connect(a.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(Endpoint::connect_qp(b2, c.qp->qp_num));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(b.post_recv(i, i * 100, 100), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 1, 0, 10), 0);
	ASSERT_EQ(c.post_send(IBV_WR_SEND, 2, 0, 20), 0);
	auto r = poll_n(b.rcq, 2);
	ASSERT_EQ(r.size(), 2u);
	EXPECT_EQ(r[0].qp_num, b.qp->qp_num);
	EXPECT_EQ(r[0].byte_len, 10u);
	EXPECT_EQ(r[1].qp_num, b2->qp_num);
	EXPECT_EQ(r[1].byte_len, 20u);
	EXPECT_EQ(r[0].wr_id, 0u);
	EXPECT_EQ(r[1].wr_id, 1u);
	// Posting directly to a QP with an SRQ is an error.
	ibv_sge s{b.addr(0), 8, b.mr->lkey};
	ibv_recv_wr rw{};
	rw.sg_list = &s;
	rw.num_sge = 1;
	ibv_recv_wr *bad;
	EXPECT_EQ(ibv_post_recv(b.qp, &rw, &bad), EINVAL);
	EXPECT_EQ(ibv_destroy_qp(b2), 0);
}

TEST_F(Verbs, Xrc)
{
	// b: the receiving node with an XRC domain, an XRC SRQ and a target QP.
	int fd = -1;
	ibv_xrcd_init_attr xa{};
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = fd;
	xa.oflags = O_CREAT;
	ibv_xrcd *xrcd = ibv_open_xrcd(b.ctx, &xa);
	ASSERT_NE(xrcd, nullptr) << strerror(errno);
	ibv_srq_init_attr_ex sa{};
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = b.pd;
	sa.xrcd = xrcd;
	sa.cq = b.rcq;
	ibv_srq *srq = ibv_create_srq_ex(b.ctx, &sa);
	ASSERT_NE(srq, nullptr) << strerror(errno);
	uint32_t srqn = 0;
	ASSERT_EQ(ibv_get_srq_num(srq, &srqn), 0);
	ibv_qp_init_attr_ex ta{};
	ta.qp_type = IBV_QPT_XRC_RECV;
	ta.comp_mask = IBV_QP_INIT_ATTR_XRCD;
	ta.xrcd = xrcd;
	ibv_qp *tgt = ibv_create_qp_ex(b.ctx, &ta);
	ASSERT_NE(tgt, nullptr) << strerror(errno);
	// a: the initiator.
	ibv_qp_init_attr_ex ia{};
	ia.qp_type = IBV_QPT_XRC_SEND;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = a.pd;
	ia.send_cq = a.scq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_send_sge = 1;
	a.qp = ibv_create_qp_ex(a.ctx, &ia);
	ASSERT_NE(a.qp, nullptr) << strerror(errno);
	ASSERT_NO_FATAL_FAILURE(Endpoint::connect_qp(tgt, a.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(a.connect(tgt->qp_num));

	ibv_sge rs{b.addr(0), 64, b.mr->lkey};
	ibv_recv_wr rw{};
	rw.wr_id = 31;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	ibv_recv_wr *rbad;
	ASSERT_EQ(ibv_post_srq_recv(srq, &rw, &rbad), 0);
	fill(a, 0, 48, 8);
	ibv_sge s{a.addr(0), 48, a.mr->lkey};
	ibv_send_wr wr{};
	wr.wr_id = 32;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.qp_type.xrc.remote_srqn = srqn;
	ibv_send_wr *bad;
	ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	auto r = poll_n(b.rcq, 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].wr_id, 31u);
	EXPECT_EQ(r[0].byte_len, 48u);
	EXPECT_EQ(r[0].qp_num, tgt->qp_num);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data(), 48));

	EXPECT_EQ(ibv_destroy_qp(tgt), 0);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(ibv_close_xrcd(xrcd), 0);
}

TEST_F(Verbs, CompletionChannel)
{
	Endpoint c, d;
	ASSERT_NO_FATAL_FAILURE(c.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(d.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	ASSERT_EQ(ibv_req_notify_cq(d.rcq, 0), 0);
	pollfd p{d.channel->fd, POLLIN, 0};
	EXPECT_EQ(poll(&p, 1, 0), 0);	// nothing yet
	ASSERT_EQ(d.post_recv(1, 0, 64), 0);
	const pid_t waiter = this_tid();
	std::thread sender([&] {
		// Once the receiver is blocked in ibv_get_cq_event().
		EXPECT_TRUE(wait_blocked_in_poll(waiter));
		EXPECT_EQ(c.post_send(IBV_WR_SEND, 2, 0, 16), 0);
	});
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	ASSERT_EQ(ibv_get_cq_event(d.channel, &ev_cq, &ev_ctx), 0);	// blocks
	sender.join();
	EXPECT_EQ(ev_cq, d.rcq);
	EXPECT_EQ(ev_ctx, &d);
	ibv_ack_cq_events(ev_cq, 1);
	EXPECT_EQ(poll_n(d.rcq, 1).size(), 1u);
	// Armed again, a completion makes the fd readable for poll().
	ASSERT_EQ(ibv_req_notify_cq(d.rcq, 0), 0);
	ASSERT_EQ(d.post_recv(3, 0, 64), 0);
	ASSERT_EQ(c.post_send(IBV_WR_SEND, 4, 0, 16), 0);
	EXPECT_EQ(poll(&p, 1, 2000), 1);
	ASSERT_EQ(ibv_get_cq_event(d.channel, &ev_cq, &ev_ctx), 0);
	ibv_ack_cq_events(ev_cq, 1);
	EXPECT_EQ(poll_n(d.rcq, 1).size(), 1u);
	// Not armed: no event.
	ASSERT_EQ(d.post_recv(5, 0, 64), 0);
	ASSERT_EQ(c.post_send(IBV_WR_SEND, 6, 0, 16), 0);
	EXPECT_EQ(poll_n(d.rcq, 1).size(), 1u);
	EXPECT_EQ(poll(&p, 1, 20), 0);
	EXPECT_EQ(poll_n(c.scq, 3).size(), 3u);
}

// Two CQs of one channel armed and both fired: one event each, in any
// order, the channel fd readable until both were taken, then not (events
// come straight from the producer here, docs/datapath.md "Completion
// events", or through the core with UABI_DIRECT_EVENTS=0: the same).
TEST_F(Verbs, OneEventPerArmForEachCqOfAChannel)
{
	Endpoint c, d;
	ASSERT_NO_FATAL_FAILURE(c.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(d.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(ibv_req_notify_cq(d.rcq, 0), 0);
		ASSERT_EQ(ibv_req_notify_cq(d.scq, 0), 0);
		ASSERT_EQ(d.post_recv(1, 0, 64), 0);
		ASSERT_EQ(c.post_send(IBV_WR_SEND, 2, 0, 16), 0);	// fires d.rcq
		ASSERT_EQ(c.post_recv(3, 0, 64), 0);
		ASSERT_EQ(d.post_send(IBV_WR_SEND, 4, 0, 16), 0);	// fires d.scq
		ASSERT_EQ(poll_n(d.rcq, 1).size(), 1u);
		ASSERT_EQ(poll_n(d.scq, 1).size(), 1u);
		ASSERT_EQ(poll_n(c.rcq, 1).size(), 1u);
		ASSERT_EQ(poll_n(c.scq, 1).size(), 1u);
		pollfd p{d.channel->fd, POLLIN, 0};
		ibv_cq *got[2] = {};
		for (auto &g : got) {
			EXPECT_EQ(poll(&p, 1, 2000), 1);
			void *ctx = nullptr;
			ASSERT_EQ(ibv_get_cq_event(d.channel, &g, &ctx), 0);
			EXPECT_EQ(ctx, &d);
		}
		EXPECT_NE(got[0], got[1]);
		EXPECT_TRUE(got[0] == d.rcq || got[0] == d.scq);
		EXPECT_TRUE(got[1] == d.rcq || got[1] == d.scq);
		ibv_ack_cq_events(d.rcq, 1);
		ibv_ack_cq_events(d.scq, 1);
		EXPECT_EQ(poll(&p, 1, 20), 0) << "round " << round;
		// Non-blocking: EAGAIN, as read(2) of an empty channel.
		int fl = fcntl(d.channel->fd, F_GETFL);
		ASSERT_EQ(fcntl(d.channel->fd, F_SETFL, fl | O_NONBLOCK), 0);
		ibv_cq *none = nullptr;
		void *nctx = nullptr;
		EXPECT_EQ(ibv_get_cq_event(d.channel, &none, &nctx), -1);
		EXPECT_EQ(errno, EAGAIN);
		ASSERT_EQ(fcntl(d.channel->fd, F_SETFL, fl), 0);
	}
}

namespace {

std::atomic<int> g_alarms{0};
std::atomic<pid_t> g_alarm_tid{0};

void on_alarm(int)
{
	g_alarm_tid = pid_t(syscall(SYS_gettid));
	g_alarms++;
}

// Installs on_alarm for SIGALRM with @flags; restores the old one when done.
struct AlarmHandler {
	struct sigaction old{};
	explicit AlarmHandler(int flags)
	{
		struct sigaction sa{};
		sa.sa_handler = on_alarm;
		sa.sa_flags = flags;
		sigemptyset(&sa.sa_mask);
		g_alarms = 0;
		sigaction(SIGALRM, &sa, &old);
	}
	~AlarmHandler()
	{
		alarm(0);
		sigaction(SIGALRM, &old, nullptr);
	}
};

} // namespace

// libibverbs reads the channel's fd: a signal whose handler was installed
// without SA_RESTART ends the wait with EINTR (programs use alarm() for
// timeouts); with SA_RESTART the wait goes on until the event comes.
// Should the wait not end, @wake ends it after 10 s (so a regression fails
// instead of hanging); done() says the wait is over.
class Watchdog
{
public:
	explicit Watchdog(std::function<void()> wake)
	    : t_([this, wake] {
		      std::unique_lock<std::mutex> l(m_);
		      if (!cv_.wait_for(l, std::chrono::seconds(10), [this] { return done_; }))
			      wake();
	      })
	{
	}
	~Watchdog() { done(); }
	void done()
	{
		{
			std::lock_guard<std::mutex> l(m_);
			done_ = true;
		}
		cv_.notify_all();
		if (t_.joinable())
			t_.join();
	}

private:
	std::mutex m_;
	std::condition_variable cv_;
	bool done_ = false;
	std::thread t_;
};

TEST_F(Verbs, GetCqEventReturnsEintrWhenANonRestartingHandlerRan)
{
	Endpoint d;
	ASSERT_NO_FATAL_FAILURE(d.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(a.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(a.qp->qp_num));
	ASSERT_EQ(ibv_req_notify_cq(d.rcq, 0), 0);
	ASSERT_EQ(d.post_recv(1, 0, 64), 0);
	AlarmHandler h(0);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	Watchdog w([&] { EXPECT_EQ(a.post_send(IBV_WR_SEND, 2, 0, 16), 0); });
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	alarm(1);
	ibv_cq *cq = nullptr;
	void *cq_ctx = nullptr;
	errno = 0;
	EXPECT_EQ(ibv_get_cq_event(d.channel, &cq, &cq_ctx), -1);
	EXPECT_EQ(errno, EINTR);
	w.done();
	EXPECT_EQ(g_alarms.load(), 1);
	EXPECT_EQ(g_alarm_tid.load(), pid_t(syscall(SYS_gettid))) << "the alarm hit another thread";
}

TEST_F(Verbs, GetAsyncEventReturnsEintrWhenANonRestartingHandlerRan)
{
	pair(IBV_QPT_RC);
	AlarmHandler h(0);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	// The wake-up: an access violation on a's QP raises its event.
	Watchdog w([&] {
		EXPECT_EQ(b.post_send(IBV_WR_RDMA_WRITE, 1, 0, 8, IBV_SEND_SIGNALED, 0, 0x12345), 0);
	});
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	alarm(1);
	ibv_async_event ev;
	errno = 0;
	EXPECT_EQ(ibv_get_async_event(a.ctx, &ev), -1);
	EXPECT_EQ(errno, EINTR);
	w.done();
	EXPECT_EQ(g_alarms.load(), 1);
}

TEST_F(Verbs, GetCqEventWaitsOnAfterARestartingHandler)
{
	Endpoint c, d;
	ASSERT_NO_FATAL_FAILURE(c.open(1 << 16));
	ASSERT_NO_FATAL_FAILURE(d.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	ASSERT_EQ(ibv_req_notify_cq(d.rcq, 0), 0);
	ASSERT_EQ(d.post_recv(1, 0, 64), 0);
	AlarmHandler h(SA_RESTART);
	// The sender, with SIGALRM blocked, sends once the handler has run
	// (the waiter is interrupted by then and must have gone back to wait).
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	std::thread sender([&] {
		auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
		while (g_alarms.load() == 0 && std::chrono::steady_clock::now() < end)
			std::this_thread::yield();
		EXPECT_EQ(c.post_send(IBV_WR_SEND, 2, 0, 16), 0);
	});
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	alarm(1);
	ibv_cq *cq = nullptr;
	void *cq_ctx = nullptr;
	EXPECT_EQ(ibv_get_cq_event(d.channel, &cq, &cq_ctx), 0) << strerror(errno);
	sender.join();
	EXPECT_EQ(g_alarms.load(), 1);
	EXPECT_EQ(cq, d.rcq);
	ibv_ack_cq_events(d.rcq, 1);
	EXPECT_EQ(poll_n(d.rcq, 1).size(), 1u);
	EXPECT_EQ(poll_n(c.scq, 1).size(), 1u);
}

// A peer whose context goes away with its QP (a process that dies) turns
// into error completions on the survivor, also one blocked in
// ibv_get_cq_event: never a hang.
TEST_F(Verbs, PeerTeardownFlushesTheSurvivor)
{
	Endpoint c, d;
	{
		// c's objects are never destroyed, as by a process that dies.
		[[maybe_unused]] LeakOnPurpose leak;
		ASSERT_NO_FATAL_FAILURE(c.open());
		ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	}
	ASSERT_NO_FATAL_FAILURE(d.open(1 << 16, true));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(d.post_recv(i, 0, 64), 0);
	ASSERT_EQ(ibv_req_notify_cq(d.rcq, 0), 0);
	const pid_t survivor = this_tid();
	std::thread killer([&] {
		// Once the survivor is blocked in ibv_get_cq_event().
		EXPECT_TRUE(wait_blocked_in_poll(survivor));
		// Close without destroying anything: the teardown of a process.
		EXPECT_EQ(ibv_close_device(c.ctx), 0);
		c.ctx = nullptr;
		c.qp = nullptr;
		c.mr = nullptr;
		c.scq = c.rcq = nullptr;
		c.pd = nullptr;
	});
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	ASSERT_EQ(ibv_get_cq_event(d.channel, &ev_cq, &ev_ctx), 0);
	killer.join();
	ibv_ack_cq_events(ev_cq, 1);
	auto r = poll_n(d.rcq, 3);
	ASSERT_EQ(r.size(), 3u);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(r[i].wr_id, uint64_t(i));
		EXPECT_EQ(r[i].status, IBV_WC_WR_FLUSH_ERR);
	}
	ibv_qp_attr qa;
	ibv_qp_init_attr qi;
	ASSERT_EQ(ibv_query_qp(d.qp, &qa, IBV_QP_STATE, &qi), 0);
	EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
	// A send now completes in error at once.
	ASSERT_EQ(d.post_send(IBV_WR_SEND, 9, 0, 8), 0);
	auto s = poll_n(d.scq, 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(Verbs, SrqLimitEvent)
{
	ASSERT_NO_FATAL_FAILURE(b.make_srq(16));
	pair(IBV_QPT_RC);
	ibv_srq_attr sa{};
	sa.srq_limit = 2;
	ASSERT_EQ(ibv_modify_srq(b.srq, &sa, IBV_SRQ_LIMIT), 0);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(b.post_recv(i, i * 64, 64), 0);
	for (int i = 0; i < 3; i++)	// leaves 1 < 2
		ASSERT_EQ(a.post_send(IBV_WR_SEND, i, 0, 8), 0);
	EXPECT_EQ(poll_n(b.rcq, 3).size(), 3u);
	pollfd p{b.ctx->async_fd, POLLIN, 0};
	ASSERT_EQ(poll(&p, 1, 2000), 1);
	ibv_async_event ev;
	ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
	EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	EXPECT_EQ(ev.element.srq, b.srq);
	ibv_ack_async_event(&ev);
	// Disarmed: no second event.
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 9, 0, 8), 0);
	EXPECT_EQ(poll_n(b.rcq, 1).size(), 1u);
	EXPECT_EQ(poll(&p, 1, 20), 0);
}

// IB: a full CQ loses the completion and raises IBV_EVENT_CQ_ERR; the QP
// that could not report its completion goes to ERR with IBV_EVENT_QP_FATAL.
TEST_F(Verbs, CqOverrunRaisesCqErrorAndTheQpGoesToErr)
{
	ASSERT_NO_FATAL_FAILURE(overrun(b, b.rcq));
	// The requester's own QP is not affected by its peer's CQ.
	ibv_qp_attr qa;
	ibv_qp_init_attr qi;
	ASSERT_EQ(ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi), 0);
	EXPECT_EQ(qa.qp_state, IBV_QPS_RTS);
}

// The same for a send completion: the requester's QP goes to ERR.
TEST_F(Verbs, SendCqOverrunMovesTheRequesterToErr)
{
	ASSERT_NO_FATAL_FAILURE(overrun(a, a.scq));
}

TEST_F(Verbs, NewPostSendApi)
{
	pair(IBV_QPT_RC);
	ibv_qp_ex *qx = ibv_qp_to_qp_ex(a.qp);
	ASSERT_NE(qx, nullptr);
	ASSERT_EQ(b.post_recv(1, 0, 64), 0);
	fill(a, 0, 64, 4);
	ibv_wr_start(qx);
	qx->wr_id = 10;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, a.mr->lkey, a.addr(0), 32);
	qx->wr_id = 11;
	ibv_wr_rdma_write(qx, b.mr->rkey, b.addr(1000));
	ibv_wr_set_sge(qx, a.mr->lkey, a.addr(32), 32);
	ASSERT_EQ(ibv_wr_complete(qx), 0);
	auto c = poll_n(a.scq, 2);
	ASSERT_EQ(c.size(), 2u);
	EXPECT_EQ(c[0].wr_id, 10u);
	EXPECT_EQ(c[1].wr_id, 11u);
	EXPECT_EQ(c[1].opcode, IBV_WC_RDMA_WRITE);
	// A receive buffer holds the message once its completion is polled.
	EXPECT_EQ(poll_n(b.rcq, 1).size(), 1u);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data(), 32));
	EXPECT_EQ(0, std::memcmp(a.buf.data() + 32, b.buf.data() + 1000, 32));
}

// ---------------------------------------------------------- small messages
// Between processes, a SEND of at most UABI_SW_SMALL_MAX bytes rides in the
// receive CQ's small ring and lands in the receive buffer when the receiver
// polls its completion (docs/datapath.md, "Small messages"); here
// UABI_SW_FORCE_VM=1 takes that path, and the direct copy otherwise.  The
// results must be the same either way.
constexpr uint32_t kSmallMax = 2048; // UABI_SW_SMALL_MAX
// Data bytes in a small message's first slot (UABI_SW_SMALL_DATA); more go on
// in the next slots, 256 bytes each.
constexpr uint32_t kFirstSlot = 168;

bool small_path()
{
	const char *f = std::getenv("UABI_SW_FORCE_VM");
	return f && *f && *f != '0';
}

TEST_F(Verbs, SmallSendSizesAroundTheThreshold)
{
	pair(IBV_QPT_RC);
	const uint32_t sizes[] = {1,
				  2,
				  63,
				  64,
				  128,
				  129,
				  kFirstSlot,
				  kFirstSlot + 1,
				  kFirstSlot + 256,
				  kFirstSlot + 257,
				  1024,
				  kSmallMax - 1,
				  kSmallMax,
				  kSmallMax + 1,
				  4096};
	std::memset(b.buf.data(), 0xee, b.buf.size());
	std::size_t off = 0;
	for (uint32_t len : sizes) {
		SCOPED_TRACE(len);
		fill(a, 0, len, static_cast<unsigned char>(len));
		ASSERT_EQ(b.post_recv(len, off, len + 16), 0);
		ASSERT_EQ(a.post_send(len % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, len, 0, len,
				      IBV_SEND_SIGNALED, 0, 0, len * 3),
			  0);
		auto c = poll_n(a.scq, 1);
		ASSERT_EQ(c.size(), 1u);
		EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
		auto r = poll_n(b.rcq, 1);
		ASSERT_EQ(r.size(), 1u);
		EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
		EXPECT_EQ(r[0].wr_id, len);
		EXPECT_EQ(r[0].opcode, IBV_WC_RECV);
		EXPECT_EQ(r[0].byte_len, len);
		EXPECT_EQ(r[0].qp_num, b.qp->qp_num);
		EXPECT_EQ(r[0].src_qp, a.qp->qp_num);
		if (len % 2) {
			EXPECT_TRUE(r[0].wc_flags & IBV_WC_WITH_IMM);
			EXPECT_EQ(ntohl(r[0].imm_data), len * 3);
		} else {
			EXPECT_FALSE(r[0].wc_flags & IBV_WC_WITH_IMM);
		}
		EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data() + off, len));
		EXPECT_EQ(b.buf[off + len], 0xee); // not a byte more
		off += len + 16;
	}
}

TEST_F(Verbs, SmallSendGathersAndScatters)
{
	pair(IBV_QPT_RC);
	std::memset(b.buf.data(), 0xee, 1024);
	fill(a, 0, 512, 3);
	// Receive SGEs of 10, 0, 50 and 100 bytes; the message fills the
	// first 128 of their 160.
	ibv_sge rs[4] = {{b.addr(0), 10, b.mr->lkey},
			 {b.addr(100), 0, b.mr->lkey},
			 {b.addr(200), 50, b.mr->lkey},
			 {b.addr(300), 100, b.mr->lkey}};
	ibv_recv_wr rw{};
	rw.wr_id = 1;
	rw.sg_list = rs;
	rw.num_sge = 4;
	ibv_recv_wr *rbad;
	ASSERT_EQ(ibv_post_recv(b.qp, &rw, &rbad), 0);
	// Sent from three SGEs of 40 + 8 + 80 bytes, inline.
	ibv_sge ss[3] = {{a.addr(0), 40, a.mr->lkey},
			 {a.addr(100), 8, a.mr->lkey},
			 {a.addr(200), 80, a.mr->lkey}};
	ibv_send_wr wr{};
	wr.wr_id = 2;
	wr.sg_list = ss;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr *bad;
	ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
	auto r = poll_n(b.rcq, 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(r[0].byte_len, 128u);
	std::vector<unsigned char> sent, got;
	for (const ibv_sge &g : ss)
		sent.insert(sent.end(), a.buf.begin() + long(g.addr - a.addr(0)),
			    a.buf.begin() + long(g.addr - a.addr(0) + g.length));
	got.insert(got.end(), b.buf.begin(), b.buf.begin() + 10);
	got.insert(got.end(), b.buf.begin() + 200, b.buf.begin() + 250);
	got.insert(got.end(), b.buf.begin() + 300, b.buf.begin() + 368);
	EXPECT_EQ(sent, got);
	EXPECT_EQ(b.buf[368], 0xee);
	EXPECT_EQ(b.buf[100], 0xee);
	EXPECT_EQ(poll_n(a.scq, 1).size(), 1u);
}

TEST_F(Verbs, SmallSendLengthErrorAtTheThreshold)
{
	pair(IBV_QPT_RC);
	// Exactly fits, then one byte too many for the same buffer size.
	ASSERT_EQ(b.post_recv(1, 0, kSmallMax), 0);
	ASSERT_EQ(b.post_recv(2, kSmallMax, kSmallMax - 1), 0);
	ASSERT_EQ(b.post_recv(3, 2 * kSmallMax, kSmallMax), 0);
	fill(a, 0, kSmallMax, 5);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 11, 0, kSmallMax), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 12, 0, kSmallMax), 0);
	auto r = poll_n(b.rcq, 3);
	ASSERT_EQ(r.size(), 3u);
	EXPECT_EQ(r[0].wr_id, 1u);
	EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data(), kSmallMax));
	EXPECT_EQ(r[1].wr_id, 2u);
	EXPECT_EQ(r[1].status, IBV_WC_LOC_LEN_ERR);
	EXPECT_EQ(r[2].wr_id, 3u);
	EXPECT_EQ(r[2].status, IBV_WC_WR_FLUSH_ERR);
	auto c = poll_n(a.scq, 2);
	ASSERT_EQ(c.size(), 2u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(c[1].status, IBV_WC_REM_INV_REQ_ERR);
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	ASSERT_EQ(ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi), 0);
	EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
}

TEST_F(Verbs, SmallAndLargeSendsStayInOrder)
{
	pair(IBV_QPT_RC);
	// Messages of several slots each fill the small ring quickly: the
	// others are copied directly, in order with them.
	const uint32_t sizes[] = {2, 1024, kSmallMax, kSmallMax + 1, 0, 64, 512, 1};
	constexpr int kMsgs = 24;
	constexpr std::size_t kStride = 2304;
	for (int i = 0; i < kMsgs; i++)
		ASSERT_EQ(b.post_recv(uint64_t(i), std::size_t(i) * kStride, kStride), 0);
	for (int i = 0; i < kMsgs; i++) {
		uint32_t len = sizes[i % 8];
		fill(a, std::size_t(i) * kStride, len, static_cast<unsigned char>(i));
		ASSERT_EQ(a.post_send(IBV_WR_SEND, uint64_t(i), std::size_t(i) * kStride, len), 0);
	}
	auto r = poll_n(b.rcq, kMsgs);
	ASSERT_EQ(r.size(), std::size_t(kMsgs));
	for (int i = 0; i < kMsgs; i++) {
		SCOPED_TRACE(i);
		uint32_t len = sizes[i % 8];
		EXPECT_EQ(r[i].status, IBV_WC_SUCCESS);
		EXPECT_EQ(r[i].wr_id, uint64_t(i));
		EXPECT_EQ(r[i].byte_len, len);
		EXPECT_EQ(0, std::memcmp(a.buf.data() + i * kStride, b.buf.data() + i * kStride, len));
	}
	EXPECT_EQ(poll_n(a.scq, kMsgs).size(), std::size_t(kMsgs));
}

// Messages of several slots each, polled one by one, go round the small
// ring (64 slots) several times; some start near its end and go on at its
// start.
TEST_F(Verbs, SmallSendsOfSeveralSlotsGoRoundTheRing)
{
	pair(IBV_QPT_RC);
	std::memset(b.buf.data(), 0xee, b.buf.size());
	for (int i = 0; i < 60; i++) {
		SCOPED_TRACE(i);
		const uint32_t len = i % 3 ? 1000 : 700 + uint32_t(i); // 5 slots, or 4
		const std::size_t off = std::size_t(i % 8) * 1100;
		fill(a, 0, len, static_cast<unsigned char>(i * 5 + 1));
		ASSERT_EQ(b.post_recv(uint64_t(i), off, len), 0);
		ASSERT_EQ(a.post_send(IBV_WR_SEND, uint64_t(i), 0, len), 0);
		auto r = poll_n(b.rcq, 1);
		ASSERT_EQ(r.size(), 1u);
		EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
		EXPECT_EQ(r[0].byte_len, len);
		EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data() + off, len));
		ASSERT_EQ(poll_n(a.scq, 1).size(), 1u);
	}
}

TEST_F(Verbs, SmallSendsBeyondTheSmallRingIntoAnSrq)
{
	// More small messages outstanding than the receive CQ's small ring
	// holds (UABI_SW_SMALL_SLOTS): the rest are copied directly, and all
	// complete in order with their bytes.
	ASSERT_NO_FATAL_FAILURE(b.make_srq(256));
	pair(IBV_QPT_RC);
	constexpr int kMsgs = 200;
	for (int i = 0; i < kMsgs; i++)
		ASSERT_EQ(b.post_recv(uint64_t(i), std::size_t(i) * 64, 64), 0);
	for (int i = 0; i < kMsgs; i++) {
		fill(a, std::size_t(i) * 64, 48, static_cast<unsigned char>(i));
		ASSERT_EQ(a.post_send(IBV_WR_SEND, uint64_t(i), std::size_t(i) * 64, 48,
				      i % 16 ? 0u : unsigned(IBV_SEND_SIGNALED)),
			  0);
	}
	auto r = poll_n(b.rcq, kMsgs);
	ASSERT_EQ(r.size(), std::size_t(kMsgs));
	for (int i = 0; i < kMsgs; i++) {
		SCOPED_TRACE(i);
		EXPECT_EQ(r[i].status, IBV_WC_SUCCESS);
		EXPECT_EQ(r[i].wr_id, uint64_t(i));
		EXPECT_EQ(r[i].byte_len, 48u);
	}
	EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data(), kMsgs * 64));
	EXPECT_EQ(poll_n(a.scq, kMsgs / 16 + 1).size(), std::size_t(kMsgs / 16 + 1));
}

TEST_F(Verbs, UdSmallSendsWithAndWithoutGrh)
{
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_UD));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_UD));
	ASSERT_NO_FATAL_FAILURE(a.connect(0));
	ASSERT_NO_FATAL_FAILURE(b.connect(0));
	std::memset(b.buf.data(), 0xee, b.buf.size());
	std::size_t off = 0;
	for (int global = 0; global < 2; global++) {
		ibv_ah_attr aa{};
		aa.dlid = 1;
		aa.port_num = 1;
		aa.is_global = uint8_t(global);
		ASSERT_EQ(ibv_query_gid(a.ctx, 1, 0, &aa.grh.dgid), 0);
		aa.grh.hop_limit = 1;
		ibv_ah *ah = ibv_create_ah(a.pd, &aa);
		if (!global && roce_port(a.ctx)) {
			// RoCE addresses by GID only.
			EXPECT_EQ(ah, nullptr);
			EXPECT_EQ(errno, EINVAL);
			continue;
		}
		ASSERT_NE(ah, nullptr);
		for (uint32_t len : {kSmallMax, kSmallMax + 1, 0u}) {
			SCOPED_TRACE(testing::Message() << "global " << global << " len " << len);
			fill(a, 0, len, static_cast<unsigned char>(len + global));
			ASSERT_EQ(b.post_recv(7, off, 40 + len), 0);
			ASSERT_EQ(a.post_ud_send(8, 0, len, ah, b.qp->qp_num), 0);
			auto r = poll_n(b.rcq, 1);
			ASSERT_EQ(r.size(), 1u);
			EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
			EXPECT_EQ(r[0].byte_len, 40 + len);
			EXPECT_EQ(bool(r[0].wc_flags & IBV_WC_GRH), bool(global));
			if (global && roce_port(b.ctx))
				EXPECT_EQ(b.buf[off + 20] >> 4, 4); // RoCEv2: the IPv4 header last
			else if (global)
				EXPECT_EQ(b.buf[off] >> 4, 6); // IPv6 version
			else
				EXPECT_EQ(b.buf[off], 0xee); // GRH area untouched
			EXPECT_EQ(0, std::memcmp(a.buf.data(), b.buf.data() + off + 40, len));
			EXPECT_EQ(b.buf[off + 40 + len], 0xee);
			EXPECT_EQ(poll_n(a.scq, 1).size(), 1u);
			off += 40 + len + 8;
		}
		// A receive buffer one byte short: the receiver's length error,
		// the sender's success (UD).
		ASSERT_EQ(b.post_recv(9, off, 40 + 15), 0);
		ASSERT_EQ(a.post_ud_send(10, 0, 16, ah, b.qp->qp_num), 0);
		auto r = poll_n(b.rcq, 1);
		ASSERT_EQ(r.size(), 1u);
		EXPECT_EQ(r[0].wr_id, 9u);
		EXPECT_EQ(r[0].status, IBV_WC_LOC_LEN_ERR);
		auto c = poll_n(a.scq, 1);
		ASSERT_EQ(c.size(), 1u);
		EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
		EXPECT_EQ(ibv_destroy_ah(ah), 0);
	}
}

TEST_F(Verbs, SmallSendToABufferDeregisteredBeforeThePoll)
{
	// The receiver checks its keys again when the bytes land: a buffer
	// deregistered in between is not written (LOC_PROT_ERR).  That is the
	// small path (between processes, UABI_SW_FORCE_VM=1); one byte more,
	// or within one process, the sender copies at once and the receive
	// succeeds.
	const bool small = small_path();
	pair(IBV_QPT_RC);
	std::vector<unsigned char> rbuf(4096, 0xee);
	for (uint32_t len : {kSmallMax, kSmallMax + 1}) {
		SCOPED_TRACE(len);
		ibv_mr *mr = ibv_reg_mr(b.pd, rbuf.data(), rbuf.size(), IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(mr, nullptr);
		ibv_sge rs{reinterpret_cast<uintptr_t>(rbuf.data()), 4096, mr->lkey};
		ibv_recv_wr rw{};
		rw.wr_id = len;
		rw.sg_list = &rs;
		rw.num_sge = 1;
		ibv_recv_wr *rbad;
		ASSERT_EQ(ibv_post_recv(b.qp, &rw, &rbad), 0);
		fill(a, 0, len, 9);
		ASSERT_EQ(a.post_send(IBV_WR_SEND, len, 0, len), 0);
		auto c = poll_n(a.scq, 1);
		ASSERT_EQ(c.size(), 1u);
		EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
		ASSERT_EQ(ibv_dereg_mr(mr), 0);
		auto r = poll_n(b.rcq, 1);
		ASSERT_EQ(r.size(), 1u);
		if (small && len <= kSmallMax) {
			EXPECT_EQ(r[0].status, IBV_WC_LOC_PROT_ERR);
			EXPECT_EQ(rbuf[0], 0xee);
		} else {
			EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
			EXPECT_EQ(0, std::memcmp(a.buf.data(), rbuf.data(), len));
		}
	}
}

TEST_F(Verbs, LargeTransfer)
{
	Endpoint c, d;
	ASSERT_NO_FATAL_FAILURE(c.open(4 << 20));
	ASSERT_NO_FATAL_FAILURE(d.open(4 << 20));
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	for (std::size_t i = 0; i < c.buf.size(); i++)
		c.buf[i] = static_cast<unsigned char>(i * 31 + 7);
	ASSERT_EQ(d.post_recv(1, 0, 1 << 20), 0);
	ASSERT_EQ(c.post_send(IBV_WR_SEND, 2, 0, 1 << 20), 0);
	ASSERT_EQ(poll_n(d.rcq, 1).size(), 1u);
	EXPECT_EQ(0, std::memcmp(c.buf.data(), d.buf.data(), 1 << 20));
	ASSERT_EQ(c.post_send(IBV_WR_RDMA_WRITE, 3, 1 << 20, 3 << 20, IBV_SEND_SIGNALED, d.addr(1 << 20), d.mr->rkey), 0);
	ASSERT_EQ(poll_n(c.scq, 2).size(), 2u);
	EXPECT_EQ(0, std::memcmp(c.buf.data() + (1 << 20), d.buf.data() + (1 << 20), 3 << 20));
}

} // namespace
