// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Bad legacy input: each case gets the errno Linux's ib_uverbs_write()
// gives and changes nothing.
#include "legacy_test.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace uabi::legacy::test
{
namespace
{

template <class T> struct Cmd {
	ib_uverbs_cmd_hdr hdr;
	T core;
};

template <class T> struct ExCmd {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_ex_cmd_hdr ex;
	T core;
};

template <class T> Cmd<T> cmd(std::uint32_t command, std::size_t resp_size)
{
	Cmd<T> c{};
	c.hdr.command = command;
	c.hdr.in_words = std::uint16_t(sizeof(c) / 4);
	c.hdr.out_words = std::uint16_t(resp_size / 4);
	return c;
}

class BadInput : public LegacyTest
{
      protected:
	void SetUp() override
	{
		LegacyTest::SetUp();
		both_contexts();
		page = sysconf(_SC_PAGESIZE);
		none =
		    mmap(nullptr, std::size_t(page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ro =
		    mmap(nullptr, std::size_t(page), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(none, MAP_FAILED);
		ASSERT_NE(ro, MAP_FAILED);
	}
	void TearDown() override
	{
		munmap(none, std::size_t(page));
		munmap(ro, std::size_t(page));
		LegacyTest::TearDown();
	}
	std::uint32_t count(std::uint16_t obj) { return old_counts().context[obj]; }

	long page = 0;
	void *none = nullptr, *ro = nullptr;
};

TEST_F(BadInput, ShortWrites)
{
	std::uint32_t hdr[2] = {IB_USER_VERBS_CMD_ALLOC_PD, 0x00010004};
	EXPECT_EQ(raw(hdr, 0), -EINVAL);
	EXPECT_EQ(raw(hdr, 7), -EINVAL);
	// Shorter than the command struct, in_words consistent: ENOSPC.
	auto c = cmd<ib_uverbs_alloc_pd>(IB_USER_VERBS_CMD_ALLOC_PD, 4);
	c.hdr.in_words = 2;
	EXPECT_EQ(raw(&c, 8), -ENOSPC);
	EXPECT_EQ(count(UABI_OBJ_PD), 0u);
	// Extended command shorter than both headers.
	std::uint32_t ex[4] = {IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_CQ};
	EXPECT_EQ(raw(ex, sizeof(ex)), -EINVAL);
}

TEST_F(BadInput, InWordsThatLie)
{
	ib_uverbs_alloc_pd_resp resp{};
	auto c = cmd<ib_uverbs_alloc_pd>(IB_USER_VERBS_CMD_ALLOC_PD, sizeof(resp));
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	for (std::uint16_t w : {0, 3, 5, 100, 0xffff}) {
		c.hdr.in_words = w;
		EXPECT_EQ(raw(&c, sizeof(c)), -EINVAL) << w;
	}
	// Too few out words for the response.
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = 0;
	EXPECT_EQ(raw(&c, sizeof(c)), -ENOSPC);
	EXPECT_EQ(count(UABI_OBJ_PD), 0u);
	// Driver data after the struct (udata command): accepted, ignored.
	alignas(8) std::byte big[sizeof(c) + 16] = {};
	std::uint32_t out[5];
	std::memset(out, 0xa5, sizeof(out));
	c.hdr.in_words = sizeof(big) / 4;
	c.hdr.out_words = 1 + 4; // and room for driver output
	c.core.response = reinterpret_cast<std::uintptr_t>(out);
	std::memcpy(big, &c, sizeof(c));
	std::uint64_t drv = 0xdeadbeef;
	std::memcpy(big + sizeof(c), &drv, sizeof(drv));
	EXPECT_EQ(raw(big, sizeof(big)), long(sizeof(big)));
	EXPECT_NE(out[0], 0u);		// pd handle
	EXPECT_EQ(out[1], 0xa5a5a5a5u); // driver's part untouched
	EXPECT_EQ(count(UABI_OBJ_PD), 1u);
}

TEST_F(BadInput, TrailingBytesOfCommandsWithoutDriverData)
{
	// QUERY_DEVICE has no driver data: extra words must be zero.
	ib_uverbs_query_device_resp resp{};
	auto c = cmd<ib_uverbs_query_device>(IB_USER_VERBS_CMD_QUERY_DEVICE, sizeof(resp));
	c.hdr.in_words = (sizeof(c) + 8) / 4;
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	alignas(8) std::byte q[sizeof(c) + 8] = {};
	std::memcpy(q, &c, sizeof(c));
	EXPECT_EQ(raw(q, sizeof(q)), long(sizeof(q)));
	q[sizeof(c)] = std::byte{1};
	EXPECT_EQ(raw(q, sizeof(q)), -EOPNOTSUPP);
	// A bigger response buffer is zero-filled past the struct.
	struct {
		ib_uverbs_query_device_resp r;
		std::uint32_t more[4];
	} big;
	std::memset(&big, 0xa5, sizeof(big));
	q[sizeof(c)] = std::byte{0};
	c.hdr.out_words = sizeof(big) / 4;
	c.core.response = reinterpret_cast<std::uintptr_t>(&big);
	std::memcpy(q, &c, sizeof(c));
	EXPECT_EQ(raw(q, sizeof(q)), long(sizeof(q)));
	EXPECT_EQ(big.more[3], 0u);
	EXPECT_NE(big.r.max_qp, 0u);
}

TEST_F(BadInput, ResponsePointerNullUnmappedReadOnly)
{
	ib_uverbs_alloc_pd_resp resp{};
	auto c = cmd<ib_uverbs_alloc_pd>(IB_USER_VERBS_CMD_ALLOC_PD, sizeof(resp));
	for (std::uint64_t p :
	     {std::uint64_t(0), std::uint64_t(8), reinterpret_cast<std::uint64_t>(none),
	      reinterpret_cast<std::uint64_t>(ro), ~std::uint64_t(0), std::uint64_t(1) << 60}) {
		c.core.response = p;
		EXPECT_EQ(raw(&c, sizeof(c)), -EFAULT) << std::hex << p;
	}
	EXPECT_EQ(count(UABI_OBJ_PD), 0u);

	// Every kind of create rolls back.
	auto cq = cmd<ib_uverbs_create_cq>(IB_USER_VERBS_CMD_CREATE_CQ, 8);
	cq.core.cqe = 4;
	cq.core.comp_channel = -1;
	cq.core.response = reinterpret_cast<std::uint64_t>(none);
	EXPECT_EQ(raw(&cq, sizeof(cq)), -EFAULT);
	EXPECT_EQ(count(UABI_OBJ_CQ), 0u);
	auto ch = cmd<ib_uverbs_create_comp_channel>(IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, 4);
	ch.core.response = reinterpret_cast<std::uint64_t>(ro);
	EXPECT_EQ(raw(&ch, sizeof(ch)), -EFAULT);
	EXPECT_EQ(count(UABI_OBJ_COMP_CHANNEL), 0u);
	auto x = cmd<ib_uverbs_open_xrcd>(IB_USER_VERBS_CMD_OPEN_XRCD, 4);
	x.core.fd = ~0u;
	x.core.response = 0;
	EXPECT_EQ(raw(&x, sizeof(x)), -EFAULT);
	EXPECT_EQ(count(UABI_OBJ_XRCD), 0u);

	// A destroy with an unwritable response destroys nothing.
	CqInfo real = *enc->create_cq(4, -1, 0, 0);
	auto d = cmd<ib_uverbs_destroy_cq>(IB_USER_VERBS_CMD_DESTROY_CQ, 8);
	d.core.cq_handle = real.handle;
	d.core.response = reinterpret_cast<std::uint64_t>(none);
	EXPECT_EQ(raw(&d, sizeof(d)), -EFAULT);
	EXPECT_EQ(count(UABI_OBJ_CQ), 1u);
	ib_uverbs_destroy_cq_resp dr{};
	d.core.response = reinterpret_cast<std::uint64_t>(&dr);
	EXPECT_EQ(raw(&d, sizeof(d)), long(sizeof(d)));
	EXPECT_EQ(count(UABI_OBJ_CQ), 0u);

	// Extended: a response beyond user space is EFAULT before anything.
	ExCmd<ib_uverbs_ex_create_cq> e{};
	e.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_CQ;
	e.hdr.in_words = sizeof(e.core) / 8;
	e.hdr.out_words = 2;
	e.ex.response = ~std::uint64_t(0) - 8;
	e.core.cqe = 4;
	e.core.comp_channel = -1;
	EXPECT_EQ(raw(&e, sizeof(e)), -EFAULT);
	e.ex.response = reinterpret_cast<std::uint64_t>(none);
	EXPECT_EQ(raw(&e, sizeof(e)), -EFAULT);
	EXPECT_EQ(count(UABI_OBJ_CQ), 0u);
}

TEST_F(BadInput, UnknownCommandsAndFlags)
{
	std::uint32_t c[2];
	for (std::uint32_t cmdno : {41u, 44u, 45u, 200u, 255u}) {
		c[0] = cmdno;
		c[1] = 2; // in_words 2, out_words 0
		EXPECT_EQ(raw(c, 8), -EOPNOTSUPP) << cmdno;
	}
	// Bits outside the command mask and the extended flag: EINVAL.
	for (std::uint32_t bad : {0x100u, 0x40000000u, 0x80000100u, 0x10000003u}) {
		c[0] = bad;
		c[1] = 2;
		EXPECT_EQ(raw(c, 8), -EINVAL) << std::hex << bad;
	}
	// Extended commands past the last one: EOPNOTSUPP.
	std::uint32_t ex[6] = {IB_USER_VERBS_CMD_FLAG_EXTENDED | 58};
	EXPECT_EQ(raw(ex, sizeof(ex)), -EOPNOTSUPP);
	// Holes are checked as non-extended commands, then EOPNOTSUPP.
	std::uint32_t hole[2] = {IB_USER_VERBS_CMD_FLAG_EXTENDED | 2, 2};
	EXPECT_EQ(raw(hole, 8), -EOPNOTSUPP);
	hole[1] = 3;
	EXPECT_EQ(raw(hole, 8), -EINVAL);
}

TEST_F(BadInput, UnsupportedByTheSoftwareDevice)
{
	// Well-formed commands the sw device cannot do: EOPNOTSUPP.
	struct {
		std::uint32_t cmd;
		std::size_t len;
	} cases[] = {
	    {IB_USER_VERBS_CMD_MODIFY_AH, 16},	   {IB_USER_VERBS_CMD_QUERY_AH, 16},
	    {IB_USER_VERBS_CMD_REG_SMR, 64},
	    {IB_USER_VERBS_CMD_QUERY_MR, 16},	   {IB_USER_VERBS_CMD_ALLOC_MW, 24},
	    {IB_USER_VERBS_CMD_BIND_MW, 32},	   {IB_USER_VERBS_CMD_DEALLOC_MW, 12},
	    {IB_USER_VERBS_CMD_POLL_CQ, 24},	   {IB_USER_VERBS_CMD_PEEK_CQ, 16},
	    {IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, 16}, {IB_USER_VERBS_CMD_POST_SEND, 32},
	    {IB_USER_VERBS_CMD_POST_RECV, 32},	   {IB_USER_VERBS_CMD_ATTACH_MCAST, 32},
	    {IB_USER_VERBS_CMD_DETACH_MCAST, 32},  {IB_USER_VERBS_CMD_POST_SRQ_RECV, 32},
	};
	std::uint64_t buf[16] = {};
	for (auto &k : cases) {
		auto *h = reinterpret_cast<ib_uverbs_cmd_hdr *>(buf);
		h->command = k.cmd;
		h->in_words = std::uint16_t(k.len / 4);
		h->out_words = 8;
		EXPECT_EQ(raw(buf, k.len), -EOPNOTSUPP) << k.cmd;
	}
	// Flows and WQs (extended): framing checked, then EOPNOTSUPP.
	for (std::uint32_t x : {50u, 51u, 52u, 53u, 54u, 55u, 56u}) {
		std::uint64_t e[12] = {};
		auto *h = reinterpret_cast<ib_uverbs_cmd_hdr *>(e);
		h->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | x;
		h->in_words = 5;
		auto *eh = reinterpret_cast<ib_uverbs_ex_cmd_hdr *>(e + 1);
		std::uint64_t out[8];
		eh->response = reinterpret_cast<std::uintptr_t>(out);
		h->out_words = 4;
		EXPECT_EQ(raw(e, 24 + 5 * 8), -EOPNOTSUPP) << x;
	}
	auto mw = enc->alloc_mw(1, IBV_MW_TYPE_1);
	EXPECT_EQ(mw.error(), EOPNOTSUPP);
}

TEST_F(BadInput, ExtendedHeaderRules)
{
	ib_uverbs_ex_create_cq_resp resp{};
	ExCmd<ib_uverbs_ex_create_cq> e{};
	e.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_CREATE_CQ;
	e.hdr.in_words = sizeof(e.core) / 8;
	e.hdr.out_words = sizeof(resp) / 8;
	e.ex.response = reinterpret_cast<std::uintptr_t>(&resp);
	e.core.cqe = 4;
	e.core.comp_channel = -1;
	auto bad = e;
	bad.hdr.in_words += 1;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL);
	bad = e;
	bad.ex.provider_in_words = 1;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL);
	bad = e;
	bad.ex.cmd_hdr_reserved = 1;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL);
	bad = e;
	bad.hdr.out_words = 0;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL); // response but no words
	bad = e;
	bad.hdr.out_words = 1;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -ENOSPC); // shorter than response_length
	bad = e;
	bad.ex.response = 0;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL); // words but no response
	bad = e;
	bad.core.comp_mask = 1;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL);
	bad = e;
	bad.core.reserved = 1;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EINVAL);
	bad = e;
	bad.core.flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	EXPECT_EQ(raw(&bad, sizeof(bad)), -EOPNOTSUPP);
	// In words below the last member Linux requires: ENOSPC.
	struct {
		ib_uverbs_cmd_hdr hdr;
		ib_uverbs_ex_cmd_hdr ex;
		std::uint64_t w[3];
	} shortx{};
	shortx.hdr = e.hdr;
	shortx.hdr.in_words = 3;
	shortx.ex = e.ex;
	EXPECT_EQ(raw(&shortx, sizeof(shortx)), -ENOSPC);
	EXPECT_EQ(count(UABI_OBJ_CQ), 0u);
	// A longer extended request with zeros past the struct is accepted.
	struct {
		ExCmd<ib_uverbs_ex_create_cq> c;
		std::uint64_t extra;
	} longer{};
	longer.c = e;
	longer.c.hdr.in_words += 1;
	EXPECT_EQ(raw(&longer, sizeof(longer)), long(sizeof(longer)));
	EXPECT_EQ(resp.response_length, sizeof(resp));
	longer.extra = 5;
	EXPECT_EQ(raw(&longer, sizeof(longer)), -EOPNOTSUPP);
	EXPECT_EQ(count(UABI_OBJ_CQ), 1u);
}

TEST_F(BadInput, HandlesOfTheWrongType)
{
	Handle pd = *enc->alloc_pd();
	CqInfo cq = *enc->create_cq(4, -1, 0, 0);
	// Destroys answer what the lookup says: another type EINVAL, none ENOENT.
	EXPECT_EQ(enc->dealloc_pd(cq.handle).error(), EINVAL);
	EXPECT_EQ(enc->destroy_cq(pd).error(), EINVAL);
	EXPECT_EQ(enc->destroy_qp(999).error(), ENOENT);
	EXPECT_EQ(enc->dereg_mr(0).error(), ENOENT);
	// Uses of a handle: every lookup failure is EINVAL (Linux < 6.15).
	static char buf[64];
	EXPECT_EQ(enc->reg_mr(cq.handle, buf, 64, reinterpret_cast<std::uintptr_t>(buf),
			      IBV_ACCESS_LOCAL_WRITE)
		      .error(),
		  EINVAL);
	EXPECT_EQ(
	    enc->reg_mr(999, buf, 64, reinterpret_cast<std::uintptr_t>(buf), IBV_ACCESS_LOCAL_WRITE)
		.error(),
	    EINVAL);
	EXPECT_EQ(enc->resize_cq(pd, 8).error(), EINVAL);
	EXPECT_EQ(enc->query_qp(cq.handle, 0).error(), EINVAL);
	ibv_qp_attr a{};
	EXPECT_EQ(enc->modify_qp(77, a, IBV_QP_STATE).error(), EINVAL);
	LegacyQpInit li;
	li.pd = cq.handle;
	li.send_cq = li.recv_cq = cq.handle;
	li.cap = small_cap();
	EXPECT_EQ(enc->create_qp(li).error(), EINVAL);
	li.pd = pd;
	li.send_cq = pd;
	EXPECT_EQ(enc->create_qp(li).error(), EINVAL);
	li.send_cq = cq.handle;
	li.srq = cq.handle;
	EXPECT_EQ(enc->create_qp(li).error(), EINVAL);
	EXPECT_EQ(count(UABI_OBJ_QP), 0u);
	EXPECT_EQ(count(UABI_OBJ_PD), 1u);
	EXPECT_EQ(count(UABI_OBJ_CQ), 1u);
}

TEST_F(BadInput, QpChecksBeforeTheDriver)
{
	Handle pd = *enc->alloc_pd();
	CqInfo cq = *enc->create_cq(4, -1, 0, 0);
	LegacyQpInit li;
	li.pd = pd;
	li.send_cq = li.recv_cq = cq.handle;
	li.cap = small_cap();
	li.qp_type = ibv_qp_type(7); // no such type
	EXPECT_EQ(enc->create_qp(li).error(), EINVAL);
	li.qp_type = IBV_QPT_RC;
	li.cap.max_send_wr = 1u << 31;
	EXPECT_EQ(enc->create_qp(li).error(), EINVAL);
	li.cap = small_cap();
	QpInfo qp = *enc->create_qp(li);
	// Mask bits past the standard ones: EOPNOTSUPP (before the lookup).
	auto m = cmd<ib_uverbs_modify_qp>(IB_USER_VERBS_CMD_MODIFY_QP, 0);
	m.core.qp_handle = qp.handle;
	m.core.attr_mask = 1u << 21;
	EXPECT_EQ(raw(&m, sizeof(m)), -EOPNOTSUPP);
	m.core.attr_mask = IBV_QP_STATE;
	m.core.qp_state = 7;
	EXPECT_EQ(raw(&m, sizeof(m)), -EINVAL);
	m.core.qp_state = IBV_QPS_RTS; // RESET -> RTS
	EXPECT_EQ(raw(&m, sizeof(m)), -EINVAL);
	EXPECT_EQ(LEGACY_OK(enc->query_qp(qp.handle, 0))->get().qp_state, IBV_QPS_RESET);
}

TEST_F(BadInput, CqChecks)
{
	EXPECT_EQ(enc->create_cq(4, -1, 1, 0).error(), EINVAL);	  // comp_vector
	EXPECT_EQ(enc->create_cq(4, 12345, 0, 0).error(), EBADF); // not a channel
	EXPECT_EQ(enc->create_cq(4, async_fd, 0, 0).error(), EBADF);
	EXPECT_EQ(enc->create_cq(0, -1, 0, 0).error(), EINVAL);
	EXPECT_EQ(count(UABI_OBJ_CQ), 0u);
}

TEST_F(BadInput, Rdmacore18DestroyCqQuirk)
{
	CqInfo cq = *enc->create_cq(4, -1, 0, 0);
	ib_uverbs_destroy_cq_resp resp{};
	auto d = cmd<ib_uverbs_destroy_cq>(IB_USER_VERBS_CMD_DESTROY_CQ, sizeof(resp));
	d.hdr.in_words = 4; // says 16 bytes, written 16: Linux reads 24
	d.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	d.core.cq_handle = cq.handle;
	EXPECT_EQ(tr->execute(&d, 16, sizeof(d)), 16);
	EXPECT_EQ(count(UABI_OBJ_CQ), 0u);
	// Other short commands are not excused.
	auto q = cmd<ib_uverbs_destroy_qp>(IB_USER_VERBS_CMD_DESTROY_QP, 4);
	q.hdr.in_words = 4;
	EXPECT_EQ(tr->execute(&q, 16, sizeof(q)), -ENOSPC);
}

TEST_F(BadInput, WrongDialect)
{
	// OFED commands sent to an upstream context.
	uabi_ofed_reg_xrc_rcv_qp reg{};
	reg.hdr.command = UABI_OFED_CMD_UNREG_XRC_RCV_QP;
	reg.hdr.in_words = sizeof(reg) / 4;
	EXPECT_EQ(raw(&reg, sizeof(reg)), -EOPNOTSUPP); // 44 > OPEN_QP
	reg.hdr.command = UABI_OFED_CMD_REG_XRC_RCV_QP;
	EXPECT_EQ(raw(&reg, sizeof(reg)), -EOPNOTSUPP);
	// OFED CLOSE_XRC_DOMAIN (39) is upstream CREATE_XSRQ (48 bytes).
	uabi_ofed_close_xrc_domain close_cmd{};
	close_cmd.hdr.command = UABI_OFED_CMD_CLOSE_XRC_DOMAIN;
	close_cmd.hdr.in_words = sizeof(close_cmd) / 4;
	EXPECT_EQ(raw(&close_cmd, sizeof(close_cmd)), -ENOSPC);
	// Upstream OPEN_QP (40, 40 bytes) to an OFED context is
	// CREATE_XRC_RCV_QP (56 bytes).
	tr->set_dialect(Dialect::Ofed);
	auto oq =
	    cmd<ib_uverbs_open_qp>(IB_USER_VERBS_CMD_OPEN_QP, sizeof(ib_uverbs_create_qp_resp));
	EXPECT_EQ(raw(&oq, sizeof(oq)), -ENOSPC);
	EXPECT_EQ(count(UABI_OBJ_QP), 0u);
	EXPECT_EQ(count(UABI_OBJ_XRCD), 0u);
}

TEST(LegacyBeforeContext, OnlyGetContextWorks)
{
	auto t = Translator::open(Backend::Inproc, Dialect::Upstream);
	ASSERT_TRUE(t.ok());
	Encoder e(**t);
	EXPECT_EQ(e.alloc_pd().error(), EINVAL);
	EXPECT_EQ(e.query_device().error(), EINVAL);
	EXPECT_EQ(e.query_port(1).error(), EINVAL);
	EXPECT_EQ(e.create_comp_channel().error(), EINVAL);
	EXPECT_EQ(e.dealloc_pd(1).error(), ENOENT);
	EXPECT_EQ(e.query_qp(1, 0).error(), EINVAL);
	auto c = e.get_context();
	ASSERT_TRUE(c.ok());
	close(c->async_fd);
	EXPECT_TRUE(e.alloc_pd().ok());
}

TEST(LegacyUserMemory, ProbeChangesNothing)
{
	std::uint64_t v = 0x1122334455667788ull;
	EXPECT_EQ(probe_user_writable(reinterpret_cast<std::uintptr_t>(&v), sizeof(v)), 0);
	EXPECT_EQ(v, 0x1122334455667788ull);
	EXPECT_EQ(probe_user_writable(0, 8), EFAULT);
	EXPECT_EQ(copy_to_user(0, &v, 0), 0);
	std::uint64_t w = 0;
	EXPECT_EQ(copy_to_user(reinterpret_cast<std::uintptr_t>(&w), &v, 8), 0);
	EXPECT_EQ(w, v);
	EXPECT_EQ(copy_from_user(&w, 16, 8), EFAULT);
}

} // namespace
} // namespace uabi::legacy::test
