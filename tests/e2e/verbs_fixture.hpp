// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Helpers of the end-to-end tests: two endpoints on the software device,
// driven only through the verbs API of our libibverbs.so.1.
#ifndef UABI_E2E_VERBS_FIXTURE_HPP
#define UABI_E2E_VERBS_FIXTURE_HPP

#include <infiniband/verbs.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace e2e {

inline pid_t this_tid()
{
	return pid_t(syscall(SYS_gettid));
}

// Waits (at most 10 s) until thread `tid` of this process sleeps in
// poll(2) or ppoll(2): /proc/self/task/TID/syscall names the system call
// a blocked thread is in ("running" while it runs).  For a test whose
// other thread must act while this one waits in ibv_get_cq_event() or
// poll(): it observes the wait itself instead of sleeping and hoping.
inline bool wait_blocked_in_poll(pid_t tid)
{
	char path[64];
	std::snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", int(tid));
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
	while (std::chrono::steady_clock::now() < deadline) {
		long nr = -1;
		if (FILE *f = std::fopen(path, "re")) {
			if (std::fscanf(f, "%ld", &nr) != 1)
				nr = -1;
			std::fclose(f);
		}
		if (nr == SYS_poll || nr == SYS_ppoll)
			return true;
		std::this_thread::yield();
	}
	return false;
}

inline constexpr int kAccessAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// One side: its own context (so the two sides are two uAPI contexts, as
// two processes would be), PD, CQs, a QP and a registered buffer.
struct Endpoint {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_comp_channel *channel = nullptr;
	ibv_cq *scq = nullptr;
	ibv_cq *rcq = nullptr;
	ibv_srq *srq = nullptr;
	ibv_qp *qp = nullptr;
	std::vector<unsigned char> buf;
	ibv_mr *mr = nullptr;

	~Endpoint() { close(); }

	void open(std::size_t bytes = 1 << 16, bool with_channel = false)
	{
		int n = 0;
		ibv_device **list = ibv_get_device_list(&n);
		ASSERT_NE(list, nullptr);
		// UABI_TEST_DEVICE: the suite on that device (a RoCE device: over
		// the wire, with UABI_WIRE_FORCE=1); else the only one.
		int pick = 0;
		if (const char *want = std::getenv("UABI_TEST_DEVICE")) {
			pick = -1;
			for (int i = 0; i < n && pick < 0; i++)
				if (!std::strcmp(ibv_get_device_name(list[i]), want))
					pick = i;
			ASSERT_GE(pick, 0) << "no device " << want;
		} else {
			ASSERT_EQ(n, 1);
		}
		ctx = ibv_open_device(list[pick]);
		ibv_free_device_list(list);
		ASSERT_NE(ctx, nullptr) << strerror(errno);
		pd = ibv_alloc_pd(ctx);
		ASSERT_NE(pd, nullptr);
		if (with_channel) {
			channel = ibv_create_comp_channel(ctx);
			ASSERT_NE(channel, nullptr);
		}
		scq = ibv_create_cq(ctx, 256, this, channel, 0);
		rcq = ibv_create_cq(ctx, 256, this, channel, 0);
		ASSERT_NE(scq, nullptr);
		ASSERT_NE(rcq, nullptr);
		buf.assign(bytes, 0);
		mr = ibv_reg_mr(pd, buf.data(), buf.size(), kAccessAll);
		ASSERT_NE(mr, nullptr) << strerror(errno);
	}

	void make_srq(uint32_t max_wr = 64)
	{
		ibv_srq_init_attr a{};
		a.attr.max_wr = max_wr;
		a.attr.max_sge = 4;
		srq = ibv_create_srq(pd, &a);
		ASSERT_NE(srq, nullptr) << strerror(errno);
	}

	void make_qp(ibv_qp_type type, uint32_t max_inline = 64, int sq_sig_all = 0)
	{
		ibv_qp_init_attr a{};
		a.send_cq = scq;
		a.recv_cq = rcq;
		a.srq = srq;
		a.qp_type = type;
		a.sq_sig_all = sq_sig_all;
		a.cap.max_send_wr = 64;
		a.cap.max_recv_wr = 64;
		a.cap.max_send_sge = 4;
		a.cap.max_recv_sge = 4;
		a.cap.max_inline_data = max_inline;
		qp = ibv_create_qp(pd, &a);
		ASSERT_NE(qp, nullptr) << strerror(errno);
	}

	void to_init(int access = kAccessAll) { init_qp(qp, access); }

	static void init_qp(ibv_qp *q, int access = kAccessAll)
	{
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.pkey_index = 0;
		a.port_num = 1;
		int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (q->qp_type == IBV_QPT_UD) {
			a.qkey = 0x11111111;
			mask |= IBV_QP_QKEY;
		} else {
			a.qp_access_flags = unsigned(access);
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		ASSERT_EQ(ibv_modify_qp(q, &a, mask), 0);
	}

	// RESET -> INIT -> RTR -> RTS, connected to remote_qpn (RC/UC/XRC).
	void connect(uint32_t remote_qpn, int access = kAccessAll, uint8_t rnr_retry = 7,
		     uint8_t min_rnr_timer = 1, uint8_t timeout = 14, uint8_t retry_cnt = 7)
	{
		connect_qp(qp, remote_qpn, access, rnr_retry, min_rnr_timer, timeout, retry_cnt);
	}

	// The address of this host's port 1: LID 1 on an InfiniBand port, the
	// first GID on a RoCE one (whose path MTU the interface may bound).
	static void fill_av(ibv_context *c, ibv_ah_attr &a, ibv_mtu *mtu = nullptr)
	{
		ibv_port_attr pa{};
		a.port_num = 1;
		if (ibv_query_port(c, 1, &pa) || pa.link_layer != IBV_LINK_LAYER_ETHERNET) {
			a.dlid = 1;
			return;
		}
		a.is_global = 1;
		a.grh.sgid_index = 0;
		a.grh.hop_limit = 64;
		ibv_query_gid(c, 1, 0, &a.grh.dgid);
		if (mtu && pa.active_mtu < *mtu)
			*mtu = pa.active_mtu;
	}

	static void connect_qp(ibv_qp *q, uint32_t remote_qpn, int access = kAccessAll,
			       uint8_t rnr_retry = 7, uint8_t min_rnr_timer = 1,
			       uint8_t timeout = 14, uint8_t retry_cnt = 7)
	{
		ASSERT_NO_FATAL_FAILURE(init_qp(q, access));
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_RTR;
		int mask = IBV_QP_STATE;
		if (q->qp_type != IBV_QPT_UD) {
			a.path_mtu = IBV_MTU_4096;
			a.dest_qp_num = remote_qpn;
			a.rq_psn = 0;
			fill_av(q->context, a.ah_attr, &a.path_mtu);
			mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
			if (q->qp_type == IBV_QPT_RC || q->qp_type == IBV_QPT_XRC_RECV) {
				a.max_dest_rd_atomic = 16;
				a.min_rnr_timer = min_rnr_timer;
				mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
			}
		}
		ASSERT_EQ(ibv_modify_qp(q, &a, mask), 0);
		if (q->qp_type == IBV_QPT_XRC_RECV)
			return;
		a = {};
		a.qp_state = IBV_QPS_RTS;
		mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (q->qp_type == IBV_QPT_RC || q->qp_type == IBV_QPT_XRC_SEND) {
			a.timeout = timeout;
			a.retry_cnt = retry_cnt;
			a.rnr_retry = rnr_retry;
			a.max_rd_atomic = 16;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		}
		ASSERT_EQ(ibv_modify_qp(q, &a, mask), 0);
	}

	// A second RC QP on this endpoint's PD and CQs (and SRQ, if any).
	ibv_qp *extra_qp()
	{
		ibv_qp_init_attr a{};
		a.send_cq = scq;
		a.recv_cq = rcq;
		a.srq = srq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = 64;
		a.cap.max_recv_wr = srq ? 0 : 64;
		a.cap.max_send_sge = 4;
		a.cap.max_recv_sge = srq ? 0 : 4;
		return ibv_create_qp(pd, &a);
	}

	void close()
	{
		if (qp) {
			EXPECT_EQ(ibv_destroy_qp(qp), 0);
		}
		if (srq) {
			EXPECT_EQ(ibv_destroy_srq(srq), 0);
		}
		if (mr) {
			EXPECT_EQ(ibv_dereg_mr(mr), 0);
		}
		if (scq) {
			EXPECT_EQ(ibv_destroy_cq(scq), 0);
		}
		if (rcq) {
			EXPECT_EQ(ibv_destroy_cq(rcq), 0);
		}
		if (channel) {
			EXPECT_EQ(ibv_destroy_comp_channel(channel), 0);
		}
		if (pd) {
			EXPECT_EQ(ibv_dealloc_pd(pd), 0);
		}
		if (ctx) {
			EXPECT_EQ(ibv_close_device(ctx), 0);
		}
		qp = nullptr;
		srq = nullptr;
		mr = nullptr;
		scq = rcq = nullptr;
		channel = nullptr;
		pd = nullptr;
		ctx = nullptr;
	}

	uint64_t addr(std::size_t off = 0) { return reinterpret_cast<uintptr_t>(buf.data() + off); }

	int post_recv(uint64_t wr_id, std::size_t off, uint32_t len)
	{
		ibv_sge s{addr(off), len, mr->lkey};
		ibv_recv_wr wr{};
		wr.wr_id = wr_id;
		wr.sg_list = &s;
		wr.num_sge = 1;
		ibv_recv_wr *bad = nullptr;
		if (srq)
			return ibv_post_srq_recv(srq, &wr, &bad);
		return ibv_post_recv(qp, &wr, &bad);
	}

	int post_send(ibv_wr_opcode op, uint64_t wr_id, std::size_t off, uint32_t len,
		      unsigned flags = IBV_SEND_SIGNALED, uint64_t raddr = 0, uint32_t rkey = 0,
		      uint32_t imm = 0)
	{
		ibv_sge s{addr(off), len, mr->lkey};
		ibv_send_wr wr{};
		wr.wr_id = wr_id;
		wr.sg_list = &s;
		wr.num_sge = len ? 1 : 0;
		wr.opcode = op;
		wr.send_flags = flags;
		wr.imm_data = htonl(imm);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		ibv_send_wr *bad = nullptr;
		return ibv_post_send(qp, &wr, &bad);
	}

	// A signaled UD SEND of @len bytes from @off to (ah, remote_qpn, qkey).
	int post_ud_send(uint64_t wr_id, std::size_t off, uint32_t len, ibv_ah *ah,
			 uint32_t remote_qpn, uint32_t qkey = 0x11111111)
	{
		ibv_sge s{addr(off), len, mr->lkey};
		ibv_send_wr wr{};
		wr.wr_id = wr_id;
		wr.sg_list = &s;
		wr.num_sge = len ? 1 : 0;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = remote_qpn;
		wr.wr.ud.remote_qkey = qkey;
		ibv_send_wr *bad = nullptr;
		return ibv_post_send(qp, &wr, &bad);
	}
};

// Polls until n completions arrived or the deadline passed.
// Whether @n bytes at @a and @b are equal within @timeout_ms: a UC
// requester's completion says its message left, not that it arrived (on
// the wire it is still on its way).
inline bool same_bytes_soon(const void *a, const void *b, std::size_t n, int timeout_ms = 5000)
{
	for (int waited = 0;; waited++) {
		if (!std::memcmp(a, b, n))
			return true;
		if (waited >= timeout_ms)
			return false;
		usleep(1000);
	}
}

// Whether the port is RoCE (what a test may expect of addresses).
inline bool roce_port(ibv_context *c)
{
	ibv_port_attr pa{};
	return !ibv_query_port(c, 1, &pa) && pa.link_layer == IBV_LINK_LAYER_ETHERNET;
}

inline std::vector<ibv_wc> poll_n(ibv_cq *cq, int n, int timeout_ms = 5000)
{
	std::vector<ibv_wc> out;
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (int(out.size()) < n && std::chrono::steady_clock::now() < end) {
		ibv_wc wc[16];
		int got = ibv_poll_cq(cq, 16, wc);
		if (got < 0)
			break;
		out.insert(out.end(), wc, wc + got);
	}
	return out;
}

// Nothing more arrives for a little while.
inline int poll_quiet(ibv_cq *cq, int ms = 50)
{
	return int(poll_n(cq, 1 << 20, ms).size());
}

} // namespace e2e

#endif
