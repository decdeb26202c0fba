// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Verbs of rdma-core 44 beyond the basics, through our libibverbs.so.1, two
// contexts in one process (as e2e_inproc_verbs; ctest runs it with
// same-process copies and with UABI_SW_FORCE_VM=1, and on the write control
// path): the device's identity and clock, completion timestamps, 8-byte
// atomic writes.
#include "verbs_fixture.hpp"

#include <atomic>
#include <ctime>
#include <thread>

using namespace e2e;

namespace {

class Extras : public ::testing::Test {
protected:
	Endpoint a, b;

	void SetUp() override
	{
		ASSERT_NO_FATAL_FAILURE(a.open());
		ASSERT_NO_FATAL_FAILURE(b.open());
	}
	void fill_a(std::size_t off, std::size_t len, unsigned char seed)
	{
		for (std::size_t i = 0; i < len; i++)
			a.buf[off + i] = static_cast<unsigned char>(seed + i * 7);
	}
	void pair(ibv_qp_type t = IBV_QPT_RC, int b_access = kAccessAll)
	{
		ASSERT_NO_FATAL_FAILURE(a.make_qp(t));
		ASSERT_NO_FATAL_FAILURE(b.make_qp(t));
		ASSERT_NO_FATAL_FAILURE(a.connect(b.qp->qp_num));
		ASSERT_NO_FATAL_FAILURE(b.connect(a.qp->qp_num, b_access));
	}
};

std::uint64_t mono_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

// ---------------------------------------------------------------- identity
TEST_F(Extras, DeviceHasAVendorIdAndConsistentPortCounts)
{
	ibv_device_attr_ex ex{};
	ASSERT_EQ(ibv_query_device_ex(a.ctx, nullptr, &ex), 0);
	EXPECT_EQ(ex.orig_attr.vendor_id, 0x027561u) << "02:75:61, the node GUID's company part";
	EXPECT_EQ(ex.orig_attr.vendor_id, unsigned(be64toh(ex.orig_attr.node_guid) >> 40));
	EXPECT_EQ(ex.orig_attr.vendor_part_id, 1u);
	EXPECT_EQ(ex.orig_attr.phys_port_cnt, 1);
	EXPECT_EQ(ex.phys_port_cnt_ex, 1u);
	EXPECT_EQ(ex.device_cap_flags_ex & 0xffffffffull, std::uint64_t(unsigned(ex.orig_attr.device_cap_flags)));
	EXPECT_EQ(ex.hca_core_clock, 1000000u) << "kHz: a nanosecond clock";
	ibv_device_attr d{};
	ASSERT_EQ(ibv_query_device(a.ctx, &d), 0);
	EXPECT_EQ(d.vendor_id, ex.orig_attr.vendor_id);
}

// -------------------------------------------------------------- timestamps
// One device clock: ibv_query_rt_values_ex reads it, hca_core_clock says its
// rate, completions carry it (and the wall clock on request).
TEST_F(Extras, CompletionTimestampsComeFromTheDeviceClock)
{
	ibv_cq_init_attr_ex ca{};
	ca.cqe = 16;
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK |
		      IBV_WC_EX_WITH_BYTE_LEN;
	ibv_cq_ex *cqx = ibv_create_cq_ex(b.ctx, &ca);
	ASSERT_NE(cqx, nullptr) << strerror(errno);
	ASSERT_NE(cqx->read_completion_ts, nullptr);
	ASSERT_NE(cqx->read_completion_wallclock_ns, nullptr);
	// b receives on the timestamped CQ.
	ASSERT_EQ(ibv_destroy_cq(b.rcq), 0);
	b.rcq = ibv_cq_ex_to_cq(cqx);
	pair();
	ibv_values_ex before{};
	before.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	ASSERT_EQ(ibv_query_rt_values_ex(a.ctx, &before), 0);
	timespec wall0;
	clock_gettime(CLOCK_REALTIME, &wall0);
	ASSERT_EQ(b.post_recv(1, 0, 64), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 2, 0, 16), 0);
	ibv_poll_cq_attr pa{};
	int ret = ENOENT;
	for (int i = 0; i < 100000 && ret == ENOENT; i++)
		ret = ibv_start_poll(cqx, &pa);
	ASSERT_EQ(ret, 0);
	const std::uint64_t ts = ibv_wc_read_completion_ts(cqx);
	const std::uint64_t wall = ibv_wc_read_completion_wallclock_ns(cqx);
	EXPECT_EQ(cqx->status, IBV_WC_SUCCESS);
	EXPECT_EQ(ibv_wc_read_byte_len(cqx), 16u);
	ibv_end_poll(cqx);
	ibv_values_ex after{};
	after.comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
	ASSERT_EQ(ibv_query_rt_values_ex(a.ctx, &after), 0);
	auto ns = [](const timespec &t) {
		return std::uint64_t(t.tv_sec) * 1000000000ull + std::uint64_t(t.tv_nsec);
	};
	EXPECT_LE(ns(before.raw_clock), ts);
	EXPECT_LE(ts, ns(after.raw_clock));
	EXPECT_LE(ns(after.raw_clock), mono_ns());
	// The wall clock reading is the same instant on CLOCK_REALTIME
	// (within the time the test took, give or take clock steps: 1 s).
	EXPECT_NEAR(double(wall), double(ns(wall0)), 1e9);
	ibv_values_ex bad{};
	bad.comp_mask = 1u << 5;
	EXPECT_EQ(ibv_query_rt_values_ex(a.ctx, &bad), EINVAL);
}

TEST_F(Extras, CqWithoutTimestampsHasNoTimestampReaders)
{
	ibv_cq_init_attr_ex ca{};
	ca.cqe = 4;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	ibv_cq_ex *cqx = ibv_create_cq_ex(a.ctx, &ca);
	ASSERT_NE(cqx, nullptr);
	EXPECT_EQ(cqx->read_completion_ts, nullptr);
	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	ca.wc_flags = IBV_WC_EX_WITH_CVLAN;	// not produced: refused
	errno = 0;
	EXPECT_EQ(ibv_create_cq_ex(a.ctx, &ca), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
}

// ------------------------------------------------------------ atomic write
void atomic_write(ibv_qp *qp, uint64_t id, uint32_t rkey, uint64_t addr, uint64_t value)
{
	ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qx);
	qx->wr_id = id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, rkey, addr, &value);
	ASSERT_EQ(ibv_wr_complete(qx), 0);
}

TEST_F(Extras, AtomicWriteStoresEightBytes)
{
	pair();
	const uint64_t v = 0x0123456789abcdefull;
	ASSERT_NO_FATAL_FAILURE(atomic_write(a.qp, 1, b.mr->rkey, b.addr(64), v));
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(c[0].opcode, IBV_WC_ATOMIC_WRITE);
	uint64_t got;
	std::memcpy(&got, b.buf.data() + 64, 8);
	EXPECT_EQ(got, v);
	EXPECT_EQ(b.buf[63], 0);
	EXPECT_EQ(b.buf[72], 0);
	EXPECT_EQ(poll_quiet(b.rcq), 0) << "nothing for the responder";
}

TEST_F(Extras, MisalignedAtomicWriteIsAnInvalidRequest)
{
	pair();
	ASSERT_NO_FATAL_FAILURE(atomic_write(a.qp, 1, b.mr->rkey, b.addr(65), 1));
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(Extras, AtomicWriteNeedsRemoteWrite)
{
	// The responder QP without REMOTE_WRITE (atomics allowed): refused.
	pair(IBV_QPT_RC, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	ASSERT_NO_FATAL_FAILURE(atomic_write(a.qp, 1, b.mr->rkey, b.addr(64), 1));
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(Extras, AtomicWriteIsNotAUcOperation)
{
	pair(IBV_QPT_UC);
	ibv_qp_ex *qx = ibv_qp_to_qp_ex(a.qp);
	uint64_t v = 1;
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, b.mr->rkey, b.addr(64), &v);
	EXPECT_EQ(ibv_wr_complete(qx), EINVAL);
}

// A reader of the target never sees half of one value and half of another.
TEST_F(Extras, AtomicWriteIsNeverSeenTorn)
{
	pair();
	auto *word = reinterpret_cast<volatile uint64_t *>(b.buf.data() + 128);
	const uint64_t A = 0x1111111111111111ull, B = 0xeeeeeeeeeeeeeeeeull;
	*word = A;
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> torn{0}, reads{0};
	std::thread reader([&] {
		while (!stop.load(std::memory_order_relaxed)) {
			uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
			if (v != A && v != B)
				torn++;
			reads++;
		}
	});
	for (int i = 0; i < 20000; i++) {
		ASSERT_NO_FATAL_FAILURE(atomic_write(a.qp, uint64_t(i), b.mr->rkey, b.addr(128), i & 1 ? A : B));
		if (poll_n(a.scq, 1).size() != 1u)
			break;
	}
	stop = true;
	reader.join();
	EXPECT_EQ(torn.load(), 0u) << "of " << reads.load() << " reads";
}

// ------------------------------------------------------------------- rereg
// ibv_rereg_mr(3) in place: the keys stay, and the very next work request
// (of either side) sees the new registration.
TEST_F(Extras, ReregAccessIsSeenByTheNextRdma)
{
	pair();
	const uint32_t rkey = b.mr->rkey;
	fill_a(0, 64, 3);
	ASSERT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
		  0);
	EXPECT_EQ(b.mr->rkey, rkey) << "the keys stay";
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 1, 0, 64, IBV_SEND_SIGNALED, b.addr(0), rkey), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR) << "remote write was taken away";
	// A fresh pair, the access given back: the same rkey works again.
	Endpoint x, y;
	ASSERT_NO_FATAL_FAILURE(x.open());
	ASSERT_NO_FATAL_FAILURE(y.open());
	ASSERT_NO_FATAL_FAILURE(x.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(y.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(x.connect(y.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(y.connect(x.qp->qp_num));
	const uint32_t yk = y.mr->rkey;
	ASSERT_EQ(ibv_rereg_mr(y.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
			       IBV_ACCESS_LOCAL_WRITE),
		  0);
	ASSERT_EQ(ibv_rereg_mr(y.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, kAccessAll),
		  0);
	for (int i = 0; i < 64; i++)
		x.buf[i] = static_cast<unsigned char>(i + 1);
	ASSERT_EQ(x.post_send(IBV_WR_RDMA_WRITE, 2, 0, 64, IBV_SEND_SIGNALED, y.addr(0), yk), 0);
	c = poll_n(x.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(0, std::memcmp(x.buf.data(), y.buf.data(), 64));
}

TEST_F(Extras, ReregTranslationMovesWhereTheSameKeyLands)
{
	pair();
	std::vector<unsigned char> other(8192, 0);
	const uint32_t rkey = b.mr->rkey, lkey = b.mr->lkey;
	ASSERT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, other.data(),
			       other.size(), 0),
		  0);
	EXPECT_EQ(b.mr->rkey, rkey);
	EXPECT_EQ(b.mr->lkey, lkey);
	EXPECT_EQ(b.mr->addr, other.data());
	fill_a(0, 100, 9);
	auto raddr = reinterpret_cast<uint64_t>(other.data()) + 500;
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 1, 0, 100, IBV_SEND_SIGNALED, raddr, rkey), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), other.data() + 500, 100));
	// Receives through the re-registered MR land in the new buffer, with
	// the same lkey (no flush: the registration is the one in effect).
	ibv_sge s{reinterpret_cast<uint64_t>(other.data()) + 2000, 64, lkey};
	ibv_recv_wr rw{}, *bad = nullptr;
	rw.wr_id = 7;
	rw.sg_list = &s;
	rw.num_sge = 1;
	ASSERT_EQ(ibv_post_recv(b.qp, &rw, &bad), 0);
	ASSERT_EQ(a.post_send(IBV_WR_SEND, 2, 0, 64), 0);
	auto r = poll_n(b.rcq, 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(0, std::memcmp(a.buf.data(), other.data() + 2000, 64));
	ASSERT_EQ(poll_n(a.scq, 1).size(), 1u);
	// The old buffer is no longer registered: the old range is refused.
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 3, 0, 8, IBV_SEND_SIGNALED, b.addr(0), rkey), 0);
	c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(Extras, ReregPdDecidesWhichQpMayUseTheMr)
{
	pair();
	ibv_pd *pd2 = ibv_alloc_pd(b.ctx);
	ASSERT_NE(pd2, nullptr);
	ASSERT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, pd2, nullptr, 0, 0), 0);
	EXPECT_EQ(b.mr->pd, pd2);
	EXPECT_EQ(ibv_dealloc_pd(pd2), EBUSY) << "the MR depends on its new PD now";
	// b's QP is on the old PD: the rkey is not good for it any more.
	fill_a(0, 16, 1);
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 1, 0, 16, IBV_SEND_SIGNALED, b.addr(0), b.mr->rkey),
		  0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_REM_ACCESS_ERR);
	ASSERT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_PD, b.pd, nullptr, 0, 0), 0);
	EXPECT_EQ(ibv_dealloc_pd(pd2), 0) << "and no longer";
}

TEST_F(Extras, ReregMisuseChangesNothing)
{
	void *addr = b.mr->addr;
	const uint32_t rkey = b.mr->rkey;
	errno = 0;
	EXPECT_EQ(ibv_rereg_mr(b.mr, 0, nullptr, nullptr, 0, 0), IBV_REREG_MR_ERR_INPUT);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ibv_rereg_mr(b.mr, 1 << 5, nullptr, nullptr, 0, 0), IBV_REREG_MR_ERR_INPUT);
	// Remote write without local write: EINVAL from the device.
	errno = 0;
	EXPECT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
			       IBV_ACCESS_REMOTE_WRITE),
		  IBV_REREG_MR_ERR_CMD);
	EXPECT_EQ(errno, EINVAL);
	// Memory that is not mapped: EFAULT.
	errno = 0;
	EXPECT_EQ(ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr,
			       reinterpret_cast<void *>(0x10000), 4096, 0),
		  IBV_REREG_MR_ERR_CMD);
	EXPECT_EQ(errno, EFAULT);
	EXPECT_EQ(b.mr->addr, addr);
	EXPECT_EQ(b.mr->rkey, rkey);
	// Still registered as before.
	pair();
	fill_a(0, 16, 2);
	ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 1, 0, 16, IBV_SEND_SIGNALED, b.addr(0), rkey), 0);
	auto c = poll_n(a.scq, 1);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].status, IBV_WC_SUCCESS);
}

} // namespace
