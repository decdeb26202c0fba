// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The old path writes exactly the bytes rdma-core 44 (IOCTL_MODE=write, a
// provider without driver data) and OFED's libibverbs wrote: command,
// in_words and out_words of every verb, and the fields at their offsets.
#include "legacy_test.hpp"

#include <fcntl.h>

namespace uabi::legacy::test
{
namespace
{

struct Hdr {
	std::uint32_t command;
	std::uint16_t in_words, out_words;
};

Hdr hdr_of(std::span<const std::byte> b)
{
	Hdr h{};
	std::memcpy(&h, b.data(), sizeof(h));
	return h;
}

template <class T> T at(std::span<const std::byte> b, std::size_t off)
{
	T v;
	std::memcpy(&v, b.data() + off, sizeof(T));
	return v;
}

class EncoderBytes : public LegacyTest
{
      protected:
	void expect(std::uint32_t command, std::size_t len, std::uint16_t out_words)
	{
		auto b = enc->last_command();
		Hdr h = hdr_of(b);
		EXPECT_EQ(h.command, command);
		EXPECT_EQ(b.size(), len);
		EXPECT_EQ(h.in_words, len / 4) << "command " << command;
		EXPECT_EQ(h.out_words, out_words) << "command " << command;
		if (out_words) {
			EXPECT_NE(at<std::uint64_t>(b, 8), 0u); // the response pointer
		}
	}
	void expect_ex(std::uint32_t command, std::size_t core, std::uint16_t out_words)
	{
		auto b = enc->last_command();
		Hdr h = hdr_of(b);
		EXPECT_EQ(h.command, IB_USER_VERBS_CMD_FLAG_EXTENDED | command);
		EXPECT_EQ(b.size(), 24 + core);
		EXPECT_EQ(h.in_words, core / 8);
		EXPECT_EQ(h.out_words, out_words);
		auto ex = at<ib_uverbs_ex_cmd_hdr>(b, 8);
		EXPECT_EQ(ex.provider_in_words, 0);
		EXPECT_EQ(ex.provider_out_words, 0);
		EXPECT_EQ(ex.cmd_hdr_reserved, 0u);
		EXPECT_EQ(ex.response != 0, out_words != 0);
	}
};

TEST_F(EncoderBytes, EveryUpstreamVerb)
{
	auto lc = enc->get_context();
	ASSERT_TRUE(lc.ok());
	async_fd = lc->async_fd;
	expect(IB_USER_VERBS_CMD_GET_CONTEXT, 16, 2);
	ASSERT_TRUE(enc->query_device().ok());
	expect(IB_USER_VERBS_CMD_QUERY_DEVICE, 16, 44);
	ASSERT_TRUE(enc->query_device_ex().ok());
	expect_ex(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, 8, sizeof(ib_uverbs_ex_query_device_resp) / 8);
	ASSERT_TRUE(enc->query_port(1).ok());
	expect(IB_USER_VERBS_CMD_QUERY_PORT, 24, 10);
	EXPECT_EQ(at<std::uint8_t>(enc->last_command(), 16), 1);

	Handle pd = *enc->alloc_pd();
	expect(IB_USER_VERBS_CMD_ALLOC_PD, 16, 1);
	static char buf[4096];
	const std::uint64_t va = 0x5000 + (reinterpret_cast<std::uintptr_t>(buf) & 0xfff);
	MrInfo mr = *enc->reg_mr(pd, buf, sizeof(buf), va, IBV_ACCESS_LOCAL_WRITE);
	(void)mr;
	expect(IB_USER_VERBS_CMD_REG_MR, 48, 3);
	auto b = enc->last_command();
	EXPECT_EQ(at<std::uint64_t>(b, 16), reinterpret_cast<std::uintptr_t>(buf));
	EXPECT_EQ(at<std::uint64_t>(b, 24), sizeof(buf));
	EXPECT_EQ(at<std::uint64_t>(b, 32), va);
	EXPECT_EQ(at<std::uint32_t>(b, 40), pd);
	EXPECT_EQ(at<std::uint32_t>(b, 44), std::uint32_t(IBV_ACCESS_LOCAL_WRITE));
	(void)enc->dereg_mr(mr.handle);
	expect(IB_USER_VERBS_CMD_DEREG_MR, 12, 0);
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 8), mr.handle);

	(void)enc->alloc_mw(pd, IBV_MW_TYPE_1);
	expect(IB_USER_VERBS_CMD_ALLOC_MW, 24, 2);
	(void)enc->dealloc_mw(1);
	expect(IB_USER_VERBS_CMD_DEALLOC_MW, 12, 0);
	const std::uint8_t g[16] = {0xff, 0x0e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
	(void)enc->attach_mcast(7, g, 0xc00d);
	expect(IB_USER_VERBS_CMD_ATTACH_MCAST, 32, 0);
	EXPECT_EQ(0, std::memcmp(enc->last_command().data() + 8, g, 16));
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 24), 7u);
	EXPECT_EQ(at<std::uint16_t>(enc->last_command(), 28), 0xc00du);
	(void)enc->detach_mcast(7, g, 0xc00d);
	expect(IB_USER_VERBS_CMD_DETACH_MCAST, 32, 0);

	int ch = *enc->create_comp_channel();
	expect(IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, 16, 1);
	CqInfo cq = *enc->create_cq(16, ch, 0, 0x77);
	expect(IB_USER_VERBS_CMD_CREATE_CQ, 40, 2);
	b = enc->last_command();
	EXPECT_EQ(at<std::uint64_t>(b, 16), 0x77u);
	EXPECT_EQ(at<std::uint32_t>(b, 24), 16u);
	EXPECT_EQ(at<std::int32_t>(b, 32), ch);
	(void)enc->create_cq(16, -1, 0, 0);
	EXPECT_EQ(at<std::int32_t>(enc->last_command(), 32), -1);
	(void)enc->resize_cq(cq.handle, 32);
	expect(IB_USER_VERBS_CMD_RESIZE_CQ, 24, 2);
	CqInfo cqx = *enc->create_cq_ex(4, -1, 0, 0, 0);
	expect_ex(IB_USER_VERBS_EX_CMD_CREATE_CQ, 32, 2);
	(void)enc->modify_cq(cqx.handle, IBV_CQ_ATTR_MODERATE, 1, 2);
	expect_ex(IB_USER_VERBS_EX_CMD_MODIFY_CQ, 16, 0);

	LegacyQpInit li;
	li.pd = pd;
	li.send_cq = li.recv_cq = cq.handle;
	li.cap = small_cap();
	li.user_handle = 0x1000;
	QpInfo qp = *enc->create_qp(li);
	expect(IB_USER_VERBS_CMD_CREATE_QP, 64, 8);
	b = enc->last_command();
	EXPECT_EQ(at<std::uint64_t>(b, 16), 0x1000u);
	EXPECT_EQ(at<std::uint32_t>(b, 24), pd);
	EXPECT_EQ(at<std::uint32_t>(b, 28), cq.handle);
	EXPECT_EQ(at<std::uint32_t>(b, 32), cq.handle);
	EXPECT_EQ(at<std::uint8_t>(b, 61), IBV_QPT_RC);
	(void)enc->create_qp_ex(li);
	expect_ex(IB_USER_VERBS_EX_CMD_CREATE_QP, 64, 5);
	(void)enc->query_qp(qp.handle, IBV_QP_STATE);
	expect(IB_USER_VERBS_CMD_QUERY_QP, 24, 32);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0xdead; // not in the mask: must not be sent
	(void)enc->modify_qp(qp.handle, a, IBV_QP_STATE | IBV_QP_PORT);
	expect(IB_USER_VERBS_CMD_MODIFY_QP, 120, 0);
	b = enc->last_command();
	auto mq = at<ib_uverbs_modify_qp>(b, 8);
	EXPECT_EQ(mq.qp_handle, qp.handle);
	EXPECT_EQ(mq.attr_mask, std::uint32_t(IBV_QP_STATE | IBV_QP_PORT));
	EXPECT_EQ(mq.qkey, 0u);
	EXPECT_EQ(mq.port_num, 1);
	(void)enc->modify_qp_ex(qp.handle, a, IBV_QP_STATE);
	expect_ex(IB_USER_VERBS_EX_CMD_MODIFY_QP, 120, 1);
	// rdma-core refuses IBV_QP_RATE_LIMIT on the non-extended path.
	EXPECT_EQ(enc->modify_qp(qp.handle, a, IBV_QP_RATE_LIMIT).error(), EOPNOTSUPP);

	ibv_srq_attr sa{8, 1, 0};
	SrqInfo srq = *enc->create_srq(pd, sa, 0);
	expect(IB_USER_VERBS_CMD_CREATE_SRQ, 40, 4);
	(void)enc->modify_srq(srq.handle, sa, IBV_SRQ_MAX_WR);
	expect(IB_USER_VERBS_CMD_MODIFY_SRQ, 24, 0);
	(void)enc->query_srq(srq.handle);
	expect(IB_USER_VERBS_CMD_QUERY_SRQ, 24, 4);

	ibv_ah_attr ah{};
	ah.port_num = 1;
	Handle h = *enc->create_ah(pd, ah, 0);
	expect(IB_USER_VERBS_CMD_CREATE_AH, 64, 1);
	(void)enc->destroy_ah(h);
	expect(IB_USER_VERBS_CMD_DESTROY_AH, 12, 0);

	Handle x = *enc->open_xrcd(-1, O_CREAT);
	expect(IB_USER_VERBS_CMD_OPEN_XRCD, 24, 1);
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 16), 0xffffffffu);
	(void)enc->create_xsrq(pd, IBV_SRQT_XRC, x, cq.handle, sa, 0);
	expect(IB_USER_VERBS_CMD_CREATE_XSRQ, 56, 4);
	(void)enc->open_qp(x, 0x99, IBV_QPT_XRC_RECV, 0);
	expect(IB_USER_VERBS_CMD_OPEN_QP, 40, 8);
	(void)enc->close_xrcd(x);
	expect(IB_USER_VERBS_CMD_CLOSE_XRCD, 12, 0);

	(void)enc->destroy_srq(srq.handle);
	expect(IB_USER_VERBS_CMD_DESTROY_SRQ, 24, 1);
	(void)enc->destroy_qp(qp.handle);
	expect(IB_USER_VERBS_CMD_DESTROY_QP, 24, 1);
	(void)enc->destroy_cq(cq.handle);
	expect(IB_USER_VERBS_CMD_DESTROY_CQ, 24, 2);
	(void)enc->dealloc_pd(pd);
	expect(IB_USER_VERBS_CMD_DEALLOC_PD, 12, 0);
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 8), pd);
	close(ch);
}

TEST_F(EncoderBytes, EveryOfedXrcCommand)
{
	tr->set_dialect(Dialect::Ofed);
	both_contexts();
	Handle pd = *enc->alloc_pd();
	CqInfo cq = *enc->create_cq(4, -1, 0, 0);
	Handle d = *enc->ofed_open_xrc_domain(-1, O_CREAT);
	expect(UABI_OFED_CMD_OPEN_XRC_DOMAIN, 24, 1);
	ibv_srq_attr sa{8, 1, 0};
	(void)enc->ofed_create_xrc_srq(pd, d, cq.handle, sa, 0);
	expect(UABI_OFED_CMD_CREATE_XRC_SRQ, 48, 4);
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 40), d);
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 44), cq.handle);
	std::uint32_t qpn = *enc->ofed_create_xrc_rcv_qp(d, small_cap(), false);
	expect(UABI_OFED_CMD_CREATE_XRC_RCV_QP, 56, 2);
	EXPECT_EQ(at<std::uint8_t>(enc->last_command(), 49), UABI_OFED_QPT_XRC);
	ibv_qp_attr a{};
	(void)enc->ofed_modify_xrc_rcv_qp(d, qpn, a, 0);
	expect(UABI_OFED_CMD_MODIFY_XRC_RCV_QP, 128, 0);
	EXPECT_EQ(at<std::uint32_t>(enc->last_command(), 12), qpn);
	(void)enc->ofed_query_xrc_rcv_qp(d, qpn, 0);
	expect(UABI_OFED_CMD_QUERY_XRC_RCV_QP, 32, 32);
	(void)enc->ofed_reg_xrc_rcv_qp(d, qpn);
	expect(UABI_OFED_CMD_REG_XRC_RCV_QP, 16, 0);
	(void)enc->ofed_unreg_xrc_rcv_qp(d, qpn);
	expect(UABI_OFED_CMD_UNREG_XRC_RCV_QP, 16, 0);
	(void)enc->ofed_close_xrc_domain(d);
	auto b = enc->last_command();
	EXPECT_EQ(hdr_of(b).command, std::uint32_t(UABI_OFED_CMD_CLOSE_XRC_DOMAIN));
	EXPECT_EQ(hdr_of(b).in_words, 6);
	EXPECT_EQ(hdr_of(b).out_words, 0);
}

// Through a file descriptor, the same bytes reach the other end.
TEST(EncoderFd, WritesTheBytesToTheFd)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	Encoder e(p[1]);
	ASSERT_TRUE(e.dealloc_pd(7).ok());
	std::uint32_t got[3];
	ASSERT_EQ(read(p[0], got, sizeof(got)), 12);
	EXPECT_EQ(got[0], std::uint32_t(IB_USER_VERBS_CMD_DEALLOC_PD));
	EXPECT_EQ(got[1], 3u);
	EXPECT_EQ(got[2], 7u);
	close(p[0]);
	close(p[1]);
}

} // namespace
} // namespace uabi::legacy::test
