// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// DEVICE / LIST_OBJECTS: every host lists live objects (`uabi objects`),
// each type describing itself; a context sees its own objects, or its
// user's, never another user's.
#include "support/uabi_test.hpp"

#include <algorithm>
#include <unistd.h>

using namespace uabi;
using namespace uabi::test;

namespace
{

class Objects : public UabiTest
{
      protected:
	// The entry of handle h in v, or nullptr.
	static const uabi_object_info *find(const std::vector<uabi_object_info> &v, Handle h)
	{
		for (const auto &o : v)
			if (o.handle == h)
				return &o;
		return nullptr;
	}

	// One page of a raw listing with room for `room` entries.
	struct Page {
		int status;
		struct {
			std::uint32_t count, more;
		} hdr; // struct uabi_object_list without its entries
		std::vector<uabi_object_info> entries;
	};
	Page page(Context &c, std::uint32_t scope, uabi_object_cursor after, std::uint32_t room)
	{
		Command cmd(UABI_OBJ_DEVICE, UABI_DEVICE_LIST_OBJECTS, kDeviceHandle);
		cmd.add_in(UABI_ATTR_DEVICE_LIST_SCOPE, scope);
		cmd.add_in(UABI_ATTR_DEVICE_LIST_AFTER, after);
		OutAttr o = cmd.add_out(UABI_ATTR_DEVICE_OBJECTS,
					std::uint32_t(sizeof(uabi_object_list) +
						      room * sizeof(uabi_object_info)));
		Message m;
		m.add(std::move(cmd));
		Page p{};
		auto r = c.execute(m);
		p.status = r ? 0 : r.error();
		bool valid = false;
		auto bytes = m.out_bytes(0, o, &valid);
		if (!valid || bytes.size() < sizeof(p.hdr))
			return p;
		std::memcpy(&p.hdr, bytes.data(), sizeof(p.hdr));
		p.entries.resize(std::min<std::size_t>(p.hdr.count, room));
		if (!p.entries.empty())
			std::memcpy(static_cast<void *>(p.entries.data()), bytes.data() + sizeof(p.hdr),
				    p.entries.size() * sizeof(uabi_object_info));
		return p;
	}
};

TEST_F(Objects, EachObjectOfTheContextIsListedWithItsOwnDetails)
{
	std::vector<std::byte> buf(8192);
	QpEnv env = make_env(ctx());
	MrInfo mr = NEED(ctx().reg_mr(env.pd, buf.data(), buf.size(), kLocalWrite));
	CqInfo cq = NEED(ctx().create_cq(CqCreate{.cqe = 100, .user_handle = 0x5150}));
	QpInfo qp = make_qp(ctx(), env, UABI_QPT_RC);
	uabi_qp_attr init = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT);
	NEED(ctx().modify_qp(qp.handle, init,
			     UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
				 UABI_QP_ACCESS_FLAGS));
	SrqCreate sc{.pd = Ref(env.pd)};
	sc.init.attr.max_wr = 16;
	sc.init.attr.max_sge = 1;
	SrqInfo srq = NEED(ctx().create_srq(sc));
	Handle ah = NEED(ctx().create_ah(Ref(env.pd), local_av()));

	auto v = NEED(ctx().list_objects());
	ASSERT_EQ(v.size(), 7u) << "PD, CQ (env), MR, CQ, QP, SRQ, AH";
	for (std::size_t i = 0; i < v.size(); i++) {
		SCOPED_TRACE(object_name(v[i].type));
		EXPECT_EQ(v[i].context, v[0].context) << "one context";
		EXPECT_EQ(v[i].pid, ::getpid());
		EXPECT_EQ(v[i].uid, ::getuid());
		EXPECT_EQ(v[i].flags, 0u) << "no command held it";
		if (i) {
			EXPECT_LT(v[i - 1].handle, v[i].handle) << "in handle order";
		}
	}
	EXPECT_NE(v[0].context, 0u) << "contexts are numbered from 1";

	const uabi_object_info *o = find(v, env.pd);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_PD);

	o = find(v, mr.handle);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_MR);
	EXPECT_EQ(o->lkey, mr.lkey);
	EXPECT_EQ(o->rkey, mr.rkey);
	EXPECT_EQ(o->addr, reinterpret_cast<std::uintptr_t>(buf.data()));
	EXPECT_EQ(o->length, buf.size());

	o = find(v, cq.handle);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_CQ);
	EXPECT_EQ(o->cqn, cq.cqn);
	EXPECT_EQ(o->cqe, cq.cqe);
	EXPECT_EQ(o->user_handle, 0x5150u);
	EXPECT_EQ(o->qpn, 0u) << "fields of other types are zero";

	o = find(v, qp.handle);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_QP);
	EXPECT_EQ(o->qpn, qp.resp.qpn);
	EXPECT_EQ(o->qp_type, UABI_QPT_RC);
	EXPECT_EQ(o->qp_state, UABI_QPS_INIT) << "the state it is in now";

	o = find(v, srq.handle);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_SRQ);
	EXPECT_EQ(o->srq_type, UABI_SRQT_BASIC);

	o = find(v, ah);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_AH);
}

TEST_F(Objects, AnEmptyContextListsNothing)
{
	EXPECT_TRUE(NEED(ctx().list_objects()).empty());
}

TEST_F(Objects, ADestroyedObjectLeavesTheListing)
{
	Handle a = NEED(ctx().alloc_pd());
	Handle b = NEED(ctx().alloc_pd());
	NEED(ctx().dealloc_pd(a));
	auto v = NEED(ctx().list_objects());
	ASSERT_EQ(v.size(), 1u);
	EXPECT_EQ(v[0].handle, b);
}

TEST_F(Objects, AnXrcRegistrationShowsItsSharedQp)
{
	TempFile f;
	Handle x = NEED(ctx().open_xrcd(f.fd(), UABI_XRCD_O_CREAT));
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	Handle reg = NEED(ctx().register_xrc_rcv_qp(x, qpn, qp_init(UABI_QPT_XRC_RECV)));
	auto v = NEED(ctx().list_objects());
	const uabi_object_info *o = find(v, reg);
	ASSERT_NE(o, nullptr);
	EXPECT_EQ(o->type, UABI_OBJ_QP);
	EXPECT_EQ(o->qpn, qpn);
	EXPECT_EQ(o->qp_type, UABI_QPT_XRC_RECV);
	EXPECT_EQ(o->qp_state, UABI_QPS_RESET);
	ASSERT_NE(find(v, x), nullptr);
	EXPECT_EQ(find(v, x)->type, UABI_OBJ_XRCD);
}

TEST_F(Objects, AContextListsOnlyItsOwnObjectsAndItsUserListsAllOfThem)
{
	Context &other = open_extra();
	Handle mine = NEED(ctx().alloc_pd());
	Handle theirs = NEED(other.alloc_pd());
	NEED(other.create_cq(4));

	auto own = NEED(ctx().list_objects(UABI_LIST_CONTEXT));
	ASSERT_EQ(own.size(), 1u);
	EXPECT_EQ(own[0].handle, mine);
	auto their_own = NEED(other.list_objects(UABI_LIST_CONTEXT));
	ASSERT_EQ(their_own.size(), 2u);
	EXPECT_NE(their_own[0].context, own[0].context);
	EXPECT_EQ(their_own[0].handle, theirs);

	// The user's listing holds both contexts (and maybe other contexts
	// of this user on a shared backend), ordered by context and handle.
	auto all = NEED(ctx().list_objects(UABI_LIST_USER));
	std::size_t seen_mine = 0, seen_theirs = 0;
	for (std::size_t i = 0; i < all.size(); i++) {
		EXPECT_EQ(all[i].uid, ::getuid()) << "no other user's object";
		if (i) {
			EXPECT_TRUE(all[i - 1].context < all[i].context ||
				    (all[i - 1].context == all[i].context &&
				     all[i - 1].handle < all[i].handle))
			    << "entry " << i << " out of order";
		}
		if (all[i].context == own[0].context)
			seen_mine++;
		if (all[i].context == their_own[0].context)
			seen_theirs++;
	}
	EXPECT_EQ(seen_mine, 1u);
	EXPECT_EQ(seen_theirs, 2u);
}

TEST_F(Objects, AListingLongerThanTheBufferComesInPagesResumedAfterTheCursor)
{
	std::vector<Handle> pds;
	for (int i = 0; i < 5; i++)
		pds.push_back(NEED(ctx().alloc_pd()));

	Page p1 = page(ctx(), UABI_LIST_CONTEXT, {}, 2);
	ASSERT_EQ(p1.status, 0);
	EXPECT_EQ(p1.hdr.count, 2u);
	EXPECT_EQ(p1.hdr.more, 1u) << "three were left";
	std::vector<Handle> got;
	uabi_object_cursor at{};
	Page p = p1;
	for (int round = 0; round < 5; round++) {
		for (const auto &e : p.entries)
			got.push_back(e.handle);
		if (!p.hdr.more)
			break;
		at = {p.entries.back().context, p.entries.back().handle};
		p = page(ctx(), UABI_LIST_CONTEXT, at, 2);
		ASSERT_EQ(p.status, 0);
	}
	EXPECT_EQ(got, pds) << "every PD once, in order";

	Page none = page(ctx(), UABI_LIST_CONTEXT, {}, 0);
	EXPECT_EQ(none.status, 0);
	EXPECT_EQ(none.hdr.count, 0u);
	EXPECT_EQ(none.hdr.more, 1u) << "a buffer with room for no entry";
}

TEST_F(Objects, AnUnknownScopeIsEINVAL)
{
	NEED(ctx().alloc_pd());
	EXPECT_ERRNO(ctx().list_objects(2), EINVAL);
	EXPECT_ERRNO(ctx().list_objects(0xffffffffu), EINVAL);
}

TEST_F(Objects, AnOutputShorterThanTheListHeaderIsEINVAL)
{
	Command cmd(UABI_OBJ_DEVICE, UABI_DEVICE_LIST_OBJECTS, kDeviceHandle);
	cmd.add_out(UABI_ATTR_DEVICE_OBJECTS, std::uint32_t(sizeof(uabi_object_list) - 4));
	EXPECT_ERRNO(ctx().call(std::move(cmd)), EINVAL);
}

} // namespace
