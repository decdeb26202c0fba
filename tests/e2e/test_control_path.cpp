// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The drop-in's two control paths give the same results.  ctest runs this
// binary with UABI_VERBS_PATH unset (new uAPI commands) and with
// UABI_VERBS_PATH=write (every control verb as rdma-core 44 write-mode bytes
// through the legacy translator); the expectations below are the same for
// both, and each run also checks that the verbs really took its path: the
// translator counts the commands it executed (uabi_verbs_legacy_commands).
#include "verbs_fixture.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace e2e;

extern "C" std::uint64_t uabi_verbs_legacy_commands(struct ibv_context *ctx);

namespace {

bool write_path()
{
	const char *v = std::getenv("UABI_VERBS_PATH");
	return v && std::string(v) == "write";
}

class ControlPath : public ::testing::Test {
protected:
	ibv_context *ctx = nullptr;

	void SetUp() override
	{
		int n = 0;
		ibv_device **list = ibv_get_device_list(&n);
		ASSERT_NE(list, nullptr);
		ctx = ibv_open_device(list[0]);
		ibv_free_device_list(list);
		ASSERT_NE(ctx, nullptr) << strerror(errno);
	}
	void TearDown() override
	{
		if (ctx) {
			EXPECT_EQ(ibv_close_device(ctx), 0);
		}
	}

	std::uint64_t count() { return uabi_verbs_legacy_commands(ctx); }

	// The verb took the selected path: one write() command on the write
	// path (`cmds` of them), none on the new path.
	void took_path(std::uint64_t before, std::uint64_t cmds = 1)
	{
		EXPECT_EQ(count() - before, write_path() ? cmds : 0);
	}
};

TEST_F(ControlPath, EveryControlVerbTakesTheSelectedPath)
{
	std::uint64_t c = count();
	ibv_device_attr da{};
	ASSERT_EQ(ibv_query_device(ctx, &da), 0);
	took_path(c);
	EXPECT_EQ(da.phys_port_cnt, 1);
	EXPECT_EQ(da.atomic_cap, IBV_ATOMIC_HCA);
	EXPECT_GT(da.max_qp_wr, 0);
	EXPECT_EQ(da.node_guid, ibv_get_device_guid(ctx->device));

	c = count();
	ibv_port_attr pa{};
	ASSERT_EQ(ibv_query_port(ctx, 1, &pa), 0);
	took_path(c);
	EXPECT_EQ(pa.state, IBV_PORT_ACTIVE);
	EXPECT_EQ(pa.lid, 1);

	c = count();
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr);
	took_path(c);

	std::vector<unsigned char> buf(8192);
	c = count();
	ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), kAccessAll);
	ASSERT_NE(mr, nullptr);
	took_path(c);
	EXPECT_NE(mr->lkey, 0u);

	c = count();
	ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	ASSERT_NE(ch, nullptr);
	took_path(c);
	EXPECT_GE(ch->fd, 0);

	c = count();
	ibv_cq *cq = ibv_create_cq(ctx, 100, nullptr, ch, 0);
	ASSERT_NE(cq, nullptr);
	took_path(c);
	EXPECT_GE(cq->cqe, 100);

	c = count();
	ASSERT_EQ(ibv_resize_cq(cq, 300), 0);
	took_path(c);
	EXPECT_GE(cq->cqe, 300);

	ibv_srq_init_attr si{};
	si.attr.max_wr = 64;
	si.attr.max_sge = 2;
	c = count();
	ibv_srq *srq = ibv_create_srq(pd, &si);
	ASSERT_NE(srq, nullptr);
	took_path(c);
	EXPECT_GE(si.attr.max_wr, 64u);

	ibv_srq_attr sa{};
	sa.srq_limit = 10;
	c = count();
	ASSERT_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	took_path(c);
	c = count();
	ASSERT_EQ(ibv_query_srq(srq, &sa), 0);
	took_path(c);
	EXPECT_EQ(sa.srq_limit, 10u);

	ibv_qp_init_attr qi{};
	qi.send_cq = cq;
	qi.recv_cq = cq;
	qi.cap.max_send_wr = 16;
	qi.cap.max_recv_wr = 16;
	qi.cap.max_send_sge = 1;
	qi.cap.max_recv_sge = 1;
	qi.qp_type = IBV_QPT_RC;
	c = count();
	ibv_qp *qp = ibv_create_qp(pd, &qi);
	ASSERT_NE(qp, nullptr);
	took_path(c);
	EXPECT_GE(qi.cap.max_send_wr, 16u);

	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	c = count();
	ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS),
		  0);
	took_path(c);
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 77;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
		  0);

	ibv_qp_attr q{};
	ibv_qp_init_attr qinit{};
	c = count();
	ASSERT_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					      IBV_QP_RQ_PSN | IBV_QP_AV | IBV_QP_CAP,
			       &qinit),
		  0);
	took_path(c);
	EXPECT_EQ(q.qp_state, IBV_QPS_RTR);
	EXPECT_EQ(q.path_mtu, IBV_MTU_1024);
	EXPECT_EQ(q.dest_qp_num, qp->qp_num);
	EXPECT_EQ(q.rq_psn, 77u);
	EXPECT_EQ(q.ah_attr.dlid, 1);
	EXPECT_EQ(qinit.cap.max_send_wr, qi.cap.max_send_wr);
	EXPECT_EQ(qinit.qp_type, IBV_QPT_RC);

	ibv_ah_attr aa{};
	aa.dlid = 1;
	aa.port_num = 1;
	c = count();
	ibv_ah *ah = ibv_create_ah(pd, &aa);
	ASSERT_NE(ah, nullptr);
	took_path(c);
	c = count();
	EXPECT_EQ(ibv_destroy_ah(ah), 0);
	took_path(c);

	ibv_xrcd_init_attr xa{};
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	c = count();
	ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &xa);
	ASSERT_NE(xrcd, nullptr) << strerror(errno);
	took_path(c);
	c = count();
	EXPECT_EQ(ibv_close_xrcd(xrcd), 0);
	took_path(c);

	c = count();
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	took_path(c);
	c = count();
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	took_path(c);
	c = count();
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	took_path(c);
	// A channel is destroyed by close(2) on the write path: no command.
	c = count();
	EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
	took_path(c, 0);
	c = count();
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	took_path(c);
	c = count();
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	took_path(c);
}

// The limits ibv_query_device reports are real: objects at each limit can
// be made, one past it cannot (EINVAL).
TEST_F(ControlPath, DeviceLimitsAreHonoured)
{
	ibv_device_attr da{};
	ASSERT_EQ(ibv_query_device(ctx, &da), 0);
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr);
	ibv_cq *cq = ibv_create_cq(ctx, da.max_cqe, nullptr, nullptr, 0);
	ASSERT_NE(cq, nullptr) << "max_cqe " << da.max_cqe << ": " << strerror(errno);
	EXPECT_GE(cq->cqe, da.max_cqe);

	ibv_qp_init_attr qi{};
	qi.send_cq = cq;
	qi.recv_cq = cq;
	qi.qp_type = IBV_QPT_RC;
	qi.cap.max_send_wr = std::uint32_t(da.max_qp_wr);
	qi.cap.max_recv_wr = std::uint32_t(da.max_qp_wr);
	qi.cap.max_send_sge = std::uint32_t(da.max_sge);
	qi.cap.max_recv_sge = std::uint32_t(da.max_sge);
	ibv_qp *qp = ibv_create_qp(pd, &qi);
	ASSERT_NE(qp, nullptr) << strerror(errno);
	EXPECT_GE(qi.cap.max_send_sge, std::uint32_t(da.max_sge));
	for (int f = 0; f < 2; f++) {
		ibv_qp_init_attr over = qi;
		over.cap.max_send_wr = 4;
		over.cap.max_recv_wr = 4;
		over.cap.max_send_sge = over.cap.max_recv_sge = 1;
		if (f == 0)
			over.cap.max_send_sge = std::uint32_t(da.max_sge) + 1;
		else
			over.cap.max_recv_wr = std::uint32_t(da.max_qp_wr) + 1;
		errno = 0;
		EXPECT_EQ(ibv_create_qp(pd, &over), nullptr) << f;
		EXPECT_EQ(errno, EINVAL) << f;
	}
	ibv_srq_init_attr si{};
	si.attr.max_wr = std::uint32_t(da.max_srq_wr);
	si.attr.max_sge = std::uint32_t(da.max_srq_sge);
	ibv_srq *srq = ibv_create_srq(pd, &si);
	ASSERT_NE(srq, nullptr) << strerror(errno);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// What the man pages promise for misuse: the same errno on both paths, and
// nothing changed (the objects still work afterwards).
TEST_F(ControlPath, ErrorsAreTheSameOnBothPaths)
{
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr);
	std::vector<unsigned char> buf(4096);

	// Remote write without local write (ibv_reg_mr(3)).
	errno = 0;
	EXPECT_EQ(ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_REMOTE_WRITE), nullptr);
	EXPECT_EQ(errno, EINVAL);

	ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), kAccessAll);
	ASSERT_NE(mr, nullptr);
	// A PD with an MR on it.
	EXPECT_EQ(ibv_dealloc_pd(pd), EBUSY);

	ibv_port_attr pa{};
	EXPECT_NE(ibv_query_port(ctx, 2, &pa), 0);

	ibv_device_attr da{};
	ASSERT_EQ(ibv_query_device(ctx, &da), 0);
	errno = 0;
	EXPECT_EQ(ibv_create_cq(ctx, da.max_cqe + 1, nullptr, nullptr, 0), nullptr);
	EXPECT_EQ(errno, EINVAL);

	ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	ASSERT_NE(ch, nullptr);
	ibv_cq *cq = ibv_create_cq(ctx, 16, nullptr, ch, 0);
	ASSERT_NE(cq, nullptr);
	// A channel that a CQ uses.
	errno = 0;
	EXPECT_EQ(ibv_destroy_comp_channel(ch), -1);
	EXPECT_EQ(errno, EBUSY);

	ibv_qp_init_attr qi{};
	qi.send_cq = cq;
	qi.recv_cq = cq;
	qi.cap.max_send_wr = da.max_qp_wr + 1;
	qi.cap.max_recv_wr = 1;
	qi.cap.max_send_sge = 1;
	qi.cap.max_recv_sge = 1;
	qi.qp_type = IBV_QPT_RC;
	errno = 0;
	EXPECT_EQ(ibv_create_qp(pd, &qi), nullptr);
	EXPECT_EQ(errno, EINVAL);
	qi.cap.max_send_wr = 4;
	ibv_qp *qp = ibv_create_qp(pd, &qi);
	ASSERT_NE(qp, nullptr);

	// RESET -> RTR skips INIT (ibv_modify_qp(3): EINVAL).
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTR;
	EXPECT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	// Still in RESET.
	ibv_qp_init_attr init{};
	ASSERT_EQ(ibv_query_qp(qp, &a, IBV_QP_STATE, &init), 0);
	EXPECT_EQ(a.qp_state, IBV_QPS_RESET);

	// A CQ that a QP uses.
	EXPECT_EQ(ibv_destroy_cq(cq), EBUSY);

	ibv_srq_init_attr si{};
	si.attr.max_wr = 8;
	si.attr.max_sge = 1;
	ibv_srq *srq = ibv_create_srq(pd, &si);
	ASSERT_NE(srq, nullptr);
	// A limit above the queue's size.
	ibv_srq_attr sa{};
	sa.srq_limit = si.attr.max_wr + 100;
	EXPECT_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);

	// ibv_open_qp of a QP number no domain holds.
	ibv_xrcd_init_attr xa{};
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = -1;
	xa.oflags = O_CREAT;
	ibv_xrcd *xrcd = ibv_open_xrcd(ctx, &xa);
	ASSERT_NE(xrcd, nullptr);
	ibv_qp_open_attr oa{};
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = 0xabcdef;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	errno = 0;
	EXPECT_EQ(ibv_open_qp(ctx, &oa), nullptr);
	EXPECT_EQ(errno, EINVAL);

	// Everything still works and goes away in order.
	EXPECT_EQ(ibv_close_xrcd(xrcd), 0);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// ibv_get_cq_event(3) / ibv_get_async_event(3) on a channel or async fd the
// application made non-blocking answer EAGAIN at once, as read(2) on a
// uverbs fd did; on a blocking one they wait (the CompletionChannel test of
// e2e_inproc_verbs).
TEST_F(ControlPath, NonBlockingEventFdsAnswerEagain)
{
	ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	ASSERT_NE(ch, nullptr);
	ibv_cq *cq = ibv_create_cq(ctx, 4, nullptr, ch, 0);
	ASSERT_NE(cq, nullptr);
	ASSERT_EQ(ibv_req_notify_cq(cq, 0), 0);
	int fl = fcntl(ch->fd, F_GETFL);
	ASSERT_GE(fl, 0);
	EXPECT_FALSE(fl & O_NONBLOCK) << "a new channel fd must be blocking, as uverbs' was";
	ASSERT_EQ(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	ibv_cq *got = nullptr;
	void *cq_ctx = nullptr;
	errno = 0;
	EXPECT_EQ(ibv_get_cq_event(ch, &got, &cq_ctx), -1);
	EXPECT_EQ(errno, EAGAIN);

	fl = fcntl(ctx->async_fd, F_GETFL);
	ASSERT_GE(fl, 0);
	ASSERT_EQ(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK), 0);
	ibv_async_event ev;
	errno = 0;
	EXPECT_EQ(ibv_get_async_event(ctx, &ev), -1);
	EXPECT_EQ(errno, EAGAIN);

	EXPECT_EQ(ibv_destroy_cq(cq), 0);
	EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
}

// ibv_rereg_mr(3): the same struct afterwards, new keys allowed; bad input
// is IBV_REREG_MR_ERR_INPUT, a refused registration IBV_REREG_MR_ERR_CMD, and
// either leaves the MR as it was.
TEST_F(ControlPath, ReregMr)
{
	ibv_pd *pd = ibv_alloc_pd(ctx);
	ibv_pd *pd2 = ibv_alloc_pd(ctx);
	ASSERT_NE(pd, nullptr);
	ASSERT_NE(pd2, nullptr);
	std::vector<unsigned char> a(4096), b(8192);
	ibv_mr *mr = ibv_reg_mr(pd, a.data(), a.size(), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);

	errno = 0;
	EXPECT_EQ(ibv_rereg_mr(mr, 0, nullptr, nullptr, 0, 0), IBV_REREG_MR_ERR_INPUT);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, nullptr, nullptr, 0, 0),
		  IBV_REREG_MR_ERR_INPUT);
	EXPECT_EQ(errno, EINVAL);
	// Remote write without local write: the registration is refused.
	std::uint32_t lkey = mr->lkey;
	errno = 0;
	EXPECT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
			       IBV_ACCESS_REMOTE_WRITE),
		  IBV_REREG_MR_ERR_CMD);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(mr->lkey, lkey);
	EXPECT_EQ(mr->addr, a.data());

	ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, kAccessAll), 0);
	ASSERT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD, pd2,
			       b.data(), b.size(), 0),
		  0);
	EXPECT_EQ(mr->addr, b.data());
	EXPECT_EQ(mr->length, b.size());
	EXPECT_EQ(mr->pd, pd2);
	// The old registration is gone: its PD is free, the new one is held.
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd2), EBUSY);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd2), 0);
}

// ibv_create_cq_ex(3): the standard fields, read with start/next/end_poll;
// what the device cannot produce (timestamps) is EOPNOTSUPP.
TEST(CqEx, StandardFieldsThroughStartNextEndPoll)
{
	Endpoint a, b;
	ASSERT_NO_FATAL_FAILURE(a.open());
	ASSERT_NO_FATAL_FAILURE(b.open());

	// A field the device does not produce (VLAN): refused.
	ibv_cq_init_attr_ex vl{};
	vl.cqe = 16;
	vl.wc_flags = std::uint64_t(IBV_WC_STANDARD_FLAGS) | IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	EXPECT_EQ(ibv_create_cq_ex(b.ctx, &vl), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);

	ibv_cq_init_attr_ex ca{};
	ca.cqe = 64;
	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	ibv_cq_ex *cqx = ibv_create_cq_ex(b.ctx, &ca);
	ASSERT_NE(cqx, nullptr) << strerror(errno);
	EXPECT_GE(cqx->cqe, 64);
	EXPECT_EQ(cqx->read_completion_ts, nullptr);
	ASSERT_EQ(ibv_destroy_cq(b.rcq), 0);
	b.rcq = ibv_cq_ex_to_cq(cqx);

	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(b.connect(a.qp->qp_num));

	ibv_poll_cq_attr pa{};
	EXPECT_EQ(ibv_start_poll(cqx, &pa), ENOENT);
	ASSERT_EQ(b.post_recv(11, 0, 512), 0);
	ASSERT_EQ(b.post_recv(12, 512, 512), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND_WITH_IMM, 1, 0, 100, IBV_SEND_SIGNALED, 0, 0, 0x1234), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 2, 0, 7), 0);
	ASSERT_EQ(poll_n(a.scq, 2).size(), 2u);

	int ret = ENOENT;
	for (int i = 0; i < 5000 && ret == ENOENT; i++) {
		ret = ibv_start_poll(cqx, &pa);
		if (ret == ENOENT)
			usleep(1000);
	}
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(cqx->status, IBV_WC_SUCCESS);
	EXPECT_EQ(cqx->wr_id, 11u);
	EXPECT_EQ(ibv_wc_read_opcode(cqx), IBV_WC_RECV);
	EXPECT_EQ(ibv_wc_read_byte_len(cqx), 100u);
	EXPECT_EQ(ntohl(ibv_wc_read_imm_data(cqx)), 0x1234u);
	EXPECT_TRUE(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM);
	EXPECT_EQ(ibv_wc_read_qp_num(cqx), b.qp->qp_num);
	EXPECT_EQ(ibv_wc_read_src_qp(cqx), a.qp->qp_num);
	EXPECT_EQ(ibv_wc_read_slid(cqx), 1u);
	for (int i = 0; i < 5000 && (ret = ibv_next_poll(cqx)) == ENOENT; i++)
		usleep(1000);
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(cqx->wr_id, 12u);
	EXPECT_EQ(ibv_wc_read_byte_len(cqx), 7u);
	EXPECT_FALSE(ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM);
	EXPECT_EQ(ibv_next_poll(cqx), ENOENT);
	ibv_end_poll(cqx);
}

TEST_F(ControlPath, UnknownPathIsRefused)
{
	// The variable is read when a device is opened.
	const char *old = std::getenv("UABI_VERBS_PATH");
	std::string saved = old ? old : "";
	setenv("UABI_VERBS_PATH", "telepathy", 1);
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	ASSERT_NE(list, nullptr);
	errno = 0;
	EXPECT_EQ(ibv_open_device(list[0]), nullptr);
	EXPECT_EQ(errno, EINVAL);
	ibv_free_device_list(list);
	if (old)
		setenv("UABI_VERBS_PATH", saved.c_str(), 1);
	else
		unsetenv("UABI_VERBS_PATH");
}

} // namespace
