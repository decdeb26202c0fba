// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 3 for protection domains and memory regions: lifecycle, the
// dependencies that keep a PD alive, and the checks of ibv_reg_mr(3).
#include "support/uabi_test.hpp"

#include <set>
#include <sys/mman.h>
#include <unistd.h>

using namespace uabi;
using namespace uabi::test;

namespace
{

class PdMr : public UabiTest
{
      protected:
	struct MrQuery {
		uabi_mr_reg reg;
		uabi_mr_keys keys;
	};
	MrQuery query_mr(Handle mr)
	{
		Command c(UABI_OBJ_MR, UABI_METHOD_QUERY, mr);
		OutAttr reg = c.add_out<uabi_mr_reg>(UABI_ATTR_MR_REG);
		OutAttr keys = c.add_out<uabi_mr_keys>(UABI_ATTR_MR_KEYS);
		Message m = NEED(ctx().call(std::move(c)));
		MrQuery q{};
		EXPECT_TRUE(m.read(0, reg, q.reg));
		EXPECT_TRUE(m.read(0, keys, q.keys));
		return q;
	}

	char buf_[8192]{};
};

TEST_F(PdMr, PdLifecycle)
{
	auto before = counters();
	Handle a = NEED(ctx().alloc_pd());
	Handle b = NEED(ctx().alloc_pd());
	EXPECT_NE(a, 0u);
	EXPECT_NE(b, 0u);
	EXPECT_NE(a, b);
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 2);
	EXPECT_OK(ctx().dealloc_pd(a));
	EXPECT_ERRNO(ctx().dealloc_pd(a), ENOENT);
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 1);
	EXPECT_OK(ctx().dealloc_pd(b));
	EXPECT_ERRNO(ctx().dealloc_pd(b), ENOENT);
	expect_context_counters_eq(before, counters(), "after both PDs");
}

// PD QUERY finds a PD by its handle (ibv_import_pd): nothing there is
// ENOENT, another type's handle EINVAL, as Linux's uobject lookup; the
// client's query_mr reads what MR QUERY answers.
TEST_F(PdMr, PdQueryFindsOnlyPds)
{
	Handle pd = NEED(ctx().alloc_pd());
	EXPECT_OK(ctx().query_pd(pd));
	MrInfo mr = NEED(ctx().reg_mr(pd, buf_, 128, kLocalWrite));
	EXPECT_ERRNO(ctx().query_pd(mr.handle), EINVAL);
	EXPECT_ERRNO(ctx().query_pd(0xfffff), ENOENT);
	auto q = NEED(ctx().query_mr(mr.handle));
	EXPECT_EQ(q.first.addr, reinterpret_cast<std::uintptr_t>(buf_));
	EXPECT_EQ(q.first.length, 128u);
	EXPECT_EQ(q.second.lkey, mr.lkey);
	EXPECT_EQ(q.second.rkey, mr.rkey);
	EXPECT_ERRNO(ctx().query_mr(pd), EINVAL);
	EXPECT_OK(ctx().dereg_mr(mr.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
	EXPECT_ERRNO(ctx().query_pd(pd), ENOENT);
}

TEST_F(PdMr, MrLifecycleAndQuery)
{
	Snapshot before = snapshot(ctx());
	Handle pd = NEED(ctx().alloc_pd());
	std::uint32_t access = kLocalWrite | kRemoteWrite | kRemoteRead;
	MrInfo mr = NEED(ctx().reg_mr(pd, buf_, sizeof(buf_), access));
	MrInfo mr2 = NEED(ctx().reg_mr(pd, buf_, 64, kLocalWrite, 0x10000));
	EXPECT_NE(mr.handle, mr2.handle);
	EXPECT_NE(mr.lkey, mr2.lkey) << "each MR has its own key";
	EXPECT_EQ(sw_stats(ctx()).mr_keys_in_use, before.sw.mr_keys_in_use + 2);

	MrQuery q = query_mr(mr.handle);
	EXPECT_EQ(q.reg.addr, reinterpret_cast<std::uintptr_t>(buf_));
	EXPECT_EQ(q.reg.length, sizeof(buf_));
	EXPECT_EQ(q.reg.iova, q.reg.addr) << "iova defaults to addr";
	EXPECT_EQ(q.reg.access, access);
	EXPECT_EQ(q.keys.lkey, mr.lkey);
	EXPECT_EQ(q.keys.rkey, mr.rkey);
	MrQuery q2 = query_mr(mr2.handle);
	EXPECT_EQ(q2.reg.iova, 0x10000u);
	EXPECT_EQ(q2.reg.length, 64u);

	EXPECT_OK(ctx().dereg_mr(mr.handle));
	EXPECT_ERRNO(ctx().dereg_mr(mr.handle), ENOENT);
	EXPECT_OK(ctx().dereg_mr(mr2.handle));
	EXPECT_ERRNO(ctx().dereg_mr(mr2.handle), ENOENT);
	EXPECT_OK(ctx().dealloc_pd(pd));
	expect_snapshot_eq(before, snapshot(ctx()), "after the MRs and the PD");
}

TEST_F(PdMr, PdWithAnMrIsBusyUntilTheMrIsGone)
{
	Handle pd = NEED(ctx().alloc_pd());
	MrInfo mr = NEED(ctx().reg_mr(pd, buf_, 64, kLocalWrite));
	auto before = counters();
	EXPECT_ERRNO(ctx().dealloc_pd(pd), EBUSY);
	expect_context_counters_eq(before, counters(), "after EBUSY");
	// The PD still works.
	MrInfo mr2 = NEED(ctx().reg_mr(pd, buf_, 64, kLocalWrite));
	EXPECT_OK(ctx().dereg_mr(mr2.handle));
	EXPECT_ERRNO(ctx().dealloc_pd(pd), EBUSY);
	EXPECT_OK(ctx().dereg_mr(mr.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(PdMr, PdWithAQpIsBusyUntilTheQpIsGone)
{
	QpEnv env = make_env(ctx());
	QpInfo qp = make_qp(ctx(), env, UABI_QPT_RC);
	EXPECT_ERRNO(ctx().dealloc_pd(env.pd), EBUSY);
	EXPECT_OK(ctx().destroy_qp(qp.handle));
	EXPECT_OK(ctx().dealloc_pd(env.pd));
	EXPECT_OK(ctx().destroy_cq(env.cq));
}

TEST_F(PdMr, PdWithAnAhIsBusyUntilTheAhIsGone)
{
	Handle pd = NEED(ctx().alloc_pd());
	Handle ah = NEED(ctx().create_ah(pd, local_av()));
	EXPECT_ERRNO(ctx().dealloc_pd(pd), EBUSY);
	EXPECT_OK(ctx().destroy_ah(ah));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(PdMr, PdWithAnSrqIsBusyUntilTheSrqIsGone)
{
	Handle pd = NEED(ctx().alloc_pd());
	SrqCreate sc;
	sc.pd = pd;
	sc.init.attr.max_wr = 16;
	sc.init.attr.max_sge = 1;
	SrqInfo srq = NEED(ctx().create_srq(sc));
	EXPECT_ERRNO(ctx().dealloc_pd(pd), EBUSY);
	EXPECT_OK(ctx().destroy_srq(srq.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(PdMr, RemoteWriteOrAtomicWithoutLocalWriteIsEINVAL)
{
	Handle pd = NEED(ctx().alloc_pd());
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().reg_mr(pd, buf_, 64, kRemoteWrite), EINVAL);
	EXPECT_ERRNO(ctx().reg_mr(pd, buf_, 64, kRemoteWrite | kRemoteRead), EINVAL);
	EXPECT_ERRNO(ctx().reg_mr(pd, buf_, 64, kRemoteAtomic), EINVAL);
	expect_snapshot_eq(before, snapshot(ctx()), "after rejected MRs");
	// With local write, or remote read alone, they are fine.
	MrInfo a = NEED(ctx().reg_mr(pd, buf_, 64, kLocalWrite | kRemoteWrite));
	MrInfo b = NEED(ctx().reg_mr(pd, buf_, 64, kRemoteRead));
	MrInfo c = NEED(ctx().reg_mr(pd, buf_, 64, kLocalWrite | kRemoteAtomic));
	for (Handle h : {a.handle, b.handle, c.handle})
		EXPECT_OK(ctx().dereg_mr(h));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(PdMr, ZeroLengthIsEINVAL)
{
	Handle pd = NEED(ctx().alloc_pd());
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().reg_mr(pd, buf_, 0, kLocalWrite), EINVAL);
	expect_snapshot_eq(before, snapshot(ctx()), "after a zero-length MR");
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(PdMr, AddressPlusLengthOverflowIsEINVAL)
{
	Handle pd = NEED(ctx().alloc_pd());
	Snapshot before = snapshot(ctx());
	auto *top = reinterpret_cast<const void *>(std::uintptr_t(0xfffffffffffff000ull));
	EXPECT_ERRNO(ctx().reg_mr(pd, top, 0x2000, kLocalWrite), EINVAL);
	EXPECT_ERRNO(ctx().reg_mr(pd, buf_, 64, kLocalWrite, 0xffffffffffffffc1ull), EINVAL)
	    << "iova + length overflows";
	expect_snapshot_eq(before, snapshot(ctx()), "after overflowing MRs");
	// Ending just below the top of the address space is no overflow.
	MrInfo edge = NEED(ctx().reg_mr(pd, buf_, 64, kLocalWrite, 0xffffffffffffff80ull));
	EXPECT_OK(ctx().dereg_mr(edge.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(PdMr, MrOnAMissingPdIsENOENTAndCreatesNothing)
{
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().reg_mr(Handle(4242), buf_, 64, kLocalWrite), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after an MR on no PD");
}

TEST_F(PdMr, ManyPdsGetDistinctHandles)
{
	std::set<Handle> seen;
	std::vector<Handle> v;
	for (int i = 0; i < 100; i++) {
		Handle h = NEED(ctx().alloc_pd());
		EXPECT_TRUE(seen.insert(h).second) << "handle " << h << " handed out twice";
		v.push_back(h);
	}
	for (Handle h : v)
		EXPECT_OK(ctx().dealloc_pd(h));
	EXPECT_EQ(counters().context[UABI_OBJ_PD], 0u);
}

} // namespace

namespace
{

// Registered memory must be mapped, as ib_umem_get() needs it pinnable:
// EFAULT over a hole, also one in the middle of the range, or a range that
// wraps; nothing is created.  (A 1 TiB MR at an unmapped address was once
// accepted.)
TEST_F(PdMr, UnmappedMemoryIsEFAULT)
{
	const long page = sysconf(_SC_PAGESIZE);
	auto *area = static_cast<char *>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	ASSERT_NE(area, MAP_FAILED);
	ASSERT_EQ(munmap(area + page, page), 0);	// a hole in the middle
	Handle pd = NEED(ctx().alloc_pd());
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().reg_mr(pd, area, 3 * page, kLocalWrite), EFAULT);
	EXPECT_ERRNO(ctx().reg_mr(pd, area + page, page, kLocalWrite), EFAULT);
	EXPECT_ERRNO(ctx().reg_mr(pd, area, std::size_t(1) << 40, kLocalWrite), EFAULT);
	EXPECT_ERRNO(ctx().reg_mr(pd, reinterpret_cast<void *>(0x10000), 4096, kLocalWrite), EFAULT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the refused registrations");
	// Either side of the hole is fine.
	MrInfo a = NEED(ctx().reg_mr(pd, area, page, kLocalWrite));
	MrInfo b = NEED(ctx().reg_mr(pd, area + 2 * page, page, kLocalWrite));
	EXPECT_OK(ctx().dereg_mr(a.handle));
	EXPECT_OK(ctx().dereg_mr(b.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
	munmap(area, page);
	munmap(area + 2 * page, page);
}

} // namespace

namespace
{

// MODIFY re-registers in place (ibv_rereg_mr(3)): the keys stay; QUERY shows
// the new registration; the MR depends on its new PD; a refused MODIFY
// changes nothing.
TEST_F(PdMr, ReregisterInPlaceKeepsTheKeys)
{
	Handle pd = NEED(ctx().alloc_pd());
	Handle pd2 = NEED(ctx().alloc_pd());
	MrInfo mr = NEED(ctx().reg_mr(pd, buf_, 4096, kLocalWrite));
	uabi_mr_reg reg{};
	reg.addr = reinterpret_cast<std::uintptr_t>(buf_) + 4096;
	reg.length = 4096;
	reg.iova = 0x200000;
	reg.access = kLocalWrite | kRemoteWrite;
	uabi_mr_keys k = NEED(ctx().rereg_mr(mr.handle, UABI_MR_REREG_TRANSLATION | UABI_MR_REREG_ACCESS,
					     std::nullopt, reg));
	EXPECT_EQ(k.lkey, mr.lkey);
	EXPECT_EQ(k.rkey, mr.rkey);
	MrQuery q = query_mr(mr.handle);
	EXPECT_EQ(q.reg.addr, reg.addr);
	EXPECT_EQ(q.reg.iova, 0x200000u);
	EXPECT_EQ(q.reg.access, reg.access);
	k = NEED(ctx().rereg_mr(mr.handle, UABI_MR_REREG_PD, Ref(pd2), uabi_mr_reg{}));
	EXPECT_EQ(k.lkey, mr.lkey);
	EXPECT_ERRNO(ctx().dealloc_pd(pd2), EBUSY);
	EXPECT_OK(ctx().dealloc_pd(pd)) << "the MR no longer needs its first PD";

	// Refusals, each leaving the registration as it was.
	uabi_mr_reg bad = reg;
	bad.access = kRemoteWrite;	// without local write
	EXPECT_ERRNO(ctx().rereg_mr(mr.handle, UABI_MR_REREG_ACCESS, std::nullopt, bad), EINVAL);
	EXPECT_ERRNO(ctx().rereg_mr(mr.handle, 0, std::nullopt, reg), EINVAL);
	EXPECT_ERRNO(ctx().rereg_mr(mr.handle, 1u << 3, std::nullopt, reg), EINVAL);
	EXPECT_ERRNO(ctx().rereg_mr(mr.handle, UABI_MR_REREG_PD, std::nullopt, reg), EINVAL)
	    << "CHANGE_PD without a PD";
	bad = reg;
	bad.addr = 0x10000;
	EXPECT_ERRNO(ctx().rereg_mr(mr.handle, UABI_MR_REREG_TRANSLATION, std::nullopt, bad), EFAULT);
	q = query_mr(mr.handle);
	EXPECT_EQ(q.reg.addr, reg.addr);
	EXPECT_EQ(q.reg.access, reg.access);
	EXPECT_OK(ctx().dereg_mr(mr.handle));
	EXPECT_OK(ctx().dealloc_pd(pd2));
}

} // namespace
