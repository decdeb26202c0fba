// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 10: discovery lists exactly what the dispatcher accepts.
#include "support/uabi_test.hpp"

#include <map>
#include <set>
#include <utility>

using namespace uabi;
using namespace uabi::test;

namespace
{

using Key = std::pair<std::uint16_t, std::uint16_t>; // object, method

constexpr std::uint16_t kUnknownAttr = 0x7abd;

struct MethodInfo {
	uabi_discovery_entry method;
	std::vector<uabi_discovery_entry> attrs;
};

class Discovery : public UabiTest
{
      protected:
	void SetUp() override
	{
		UabiTest::SetUp();
		entries_ = NEED(ctx().discover());
		const uabi_discovery_entry *cur = nullptr;
		for (const auto &e : entries_) {
			if (e.attr_id == 0) {
				Key k{e.object, e.method};
				EXPECT_EQ(methods_.count(k), 0u)
				    << "method " << e.object << "/" << e.method << " listed twice";
				methods_[k].method = e;
				order_.push_back(k);
				cur = &e;
				continue;
			}
			if (!cur || cur->object != e.object || cur->method != e.method) {
				ADD_FAILURE() << "attribute " << e.attr_id << " of " << e.object
					      << "/" << e.method << " not after its method";
				continue;
			}
			methods_[{e.object, e.method}].attrs.push_back(e);
		}
	}

	// Sends (object, method) with handle 0 and the given attributes.
	int send(std::uint16_t object, std::uint16_t method,
		 const std::vector<Command::Attr> &attrs)
	{
		Command c(object, method);
		for (const auto &a : attrs)
			c.add_in(a);
		Message m = make_message({std::move(c)});
		RawMsg r(m);
		return r.exec(ctx());
	}

	static Command::Attr attr(std::uint16_t id, std::uint16_t flags, std::uint32_t len,
				  std::uint8_t fill = 0)
	{
		Command::Attr a{id, flags, std::vector<std::byte>(len, std::byte{fill})};
		return a;
	}
	static Command::Attr unknown_mandatory()
	{
		return attr(kUnknownAttr, UABI_ATTR_F_MANDATORY, 4);
	}

	// The attribute as a sender that follows discovery would send it.
	static Command::Attr conforming(const uabi_discovery_entry &e, std::uint32_t len)
	{
		std::uint16_t f = 0;
		if (e.attr_flags & UABI_SPEC_F_OUTPUT)
			f |= UABI_ATTR_F_OUTPUT;
		if (e.attr_flags & UABI_SPEC_F_FD)
			f |= UABI_ATTR_F_FD;
		// An fd input of -1 is never translated by a transport.
		Command::Attr a = attr(
		    e.attr_id, f, len,
		    (e.attr_flags & UABI_SPEC_F_FD) && !(e.attr_flags & UABI_SPEC_F_OUTPUT) ? 0xff
											    : 0);
		return a;
	}

	const uabi_discovery_entry *find_attr(Key k, std::uint16_t id)
	{
		auto it = methods_.find(k);
		if (it == methods_.end())
			return nullptr;
		for (const auto &a : it->second.attrs)
			if (a.attr_id == id)
				return &a;
		return nullptr;
	}

	std::vector<uabi_discovery_entry> entries_;
	std::map<Key, MethodInfo> methods_;
	std::vector<Key> order_;
};

TEST_F(Discovery, ListsEveryMethodTheSuiteUses)
{
	const Key used[] = {
	    {UABI_OBJ_DEVICE, UABI_METHOD_QUERY},
	    {UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PORT},
	    {UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_GID},
	    {UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PKEY},
	    {UABI_OBJ_DEVICE, UABI_DEVICE_DISCOVER},
	    {UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS},
	    {UABI_OBJ_PD, UABI_METHOD_CREATE},
	    {UABI_OBJ_PD, UABI_METHOD_QUERY},
	    {UABI_OBJ_PD, UABI_METHOD_DESTROY},
	    {UABI_OBJ_MR, UABI_METHOD_CREATE},
	    {UABI_OBJ_MR, UABI_METHOD_QUERY},
	    {UABI_OBJ_MR, UABI_METHOD_DESTROY},
	    {UABI_OBJ_CQ, UABI_METHOD_CREATE},
	    {UABI_OBJ_CQ, UABI_METHOD_MODIFY},
	    {UABI_OBJ_CQ, UABI_METHOD_QUERY},
	    {UABI_OBJ_CQ, UABI_METHOD_DESTROY},
	    {UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE},
	    {UABI_OBJ_COMP_CHANNEL, UABI_EVQ_GET_EVENT},
	    {UABI_OBJ_COMP_CHANNEL, UABI_METHOD_DESTROY},
	    {UABI_OBJ_ASYNC_EVENT, UABI_METHOD_CREATE},
	    {UABI_OBJ_ASYNC_EVENT, UABI_EVQ_GET_EVENT},
	    {UABI_OBJ_ASYNC_EVENT, UABI_METHOD_DESTROY},
	    {UABI_OBJ_QP, UABI_METHOD_CREATE},
	    {UABI_OBJ_QP, UABI_METHOD_MODIFY},
	    {UABI_OBJ_QP, UABI_METHOD_QUERY},
	    {UABI_OBJ_QP, UABI_METHOD_DESTROY},
	    {UABI_OBJ_SRQ, UABI_METHOD_CREATE},
	    {UABI_OBJ_SRQ, UABI_METHOD_MODIFY},
	    {UABI_OBJ_SRQ, UABI_METHOD_QUERY},
	    {UABI_OBJ_SRQ, UABI_METHOD_DESTROY},
	    {UABI_OBJ_AH, UABI_METHOD_CREATE},
	    {UABI_OBJ_AH, UABI_METHOD_QUERY},
	    {UABI_OBJ_AH, UABI_METHOD_DESTROY},
	    {UABI_OBJ_XRCD, UABI_METHOD_CREATE},
	    {UABI_OBJ_XRCD, UABI_METHOD_DESTROY},
	    {UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP},
	    {UABI_OBJ_XRCD, UABI_XRCD_UNREG_RCV_QP},
	    {UABI_OBJ_XRCD, UABI_XRCD_MODIFY_RCV_QP},
	    {UABI_OBJ_XRCD, UABI_XRCD_QUERY_RCV_QP},
	    {UABI_OBJ_MW, UABI_METHOD_CREATE},
	    {UABI_OBJ_MW, UABI_METHOD_DESTROY},
	    {UABI_OBJ_MW, UABI_MW_BIND},
	    {UABI_OBJ_QP, UABI_QP_ATTACH_MCAST},
	    {UABI_OBJ_QP, UABI_QP_DETACH_MCAST},
	    {UABI_SW_OBJ_ARENA, UABI_SW_ARENA_INVALIDATE},
	    {UABI_SW_OBJ_PORT, UABI_SW_PORT_SET_STATE},
	    {UABI_SW_OBJ_PORT, UABI_SW_PORT_STATS},
	};
	for (const Key &k : used)
		EXPECT_EQ(methods_.count(k), 1u) << "object " << k.first << " method " << k.second;
}

TEST_F(Discovery, MethodFlagsSayWhatCreatesAndWhatOnlyReads)
{
	auto flags = [&](std::uint16_t o, std::uint16_t m) -> std::uint16_t {
		auto it = methods_.find({o, m});
		return it == methods_.end() ? 0xffff : it->second.method.attr_flags;
	};
	for (std::uint16_t o = UABI_OBJ_PD; o < UABI_OBJ_MAX_CORE; o++) {
		SCOPED_TRACE(object_name(o));
		if (!methods_.count({o, UABI_METHOD_CREATE}))
			continue; // the device has none (MWTheDeviceLacks...)
		EXPECT_TRUE(flags(o, UABI_METHOD_CREATE) & UABI_SPEC_F_METHOD_CREATES);
		EXPECT_FALSE(flags(o, UABI_METHOD_DESTROY) & UABI_SPEC_F_METHOD_CREATES);
		EXPECT_FALSE(flags(o, UABI_METHOD_DESTROY) & UABI_SPEC_F_METHOD_READONLY);
	}
	EXPECT_TRUE(flags(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP) & UABI_SPEC_F_METHOD_CREATES);
	EXPECT_TRUE(flags(UABI_OBJ_QP, UABI_METHOD_QUERY) & UABI_SPEC_F_METHOD_READONLY);
	EXPECT_FALSE(flags(UABI_OBJ_QP, UABI_METHOD_MODIFY) & UABI_SPEC_F_METHOD_READONLY);
	EXPECT_TRUE(flags(UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS) & UABI_SPEC_F_METHOD_READONLY);
	EXPECT_FALSE(flags(UABI_SW_OBJ_PORT, UABI_SW_PORT_SET_STATE) & UABI_SPEC_F_METHOD_READONLY);
	EXPECT_TRUE(flags(UABI_SW_OBJ_PORT, UABI_SW_PORT_STATS) & UABI_SPEC_F_METHOD_READONLY);
}

TEST_F(Discovery, QpCreateAttributesAreExactlyTheHeaders)
{
	struct Want {
		std::uint16_t id;
		bool mandatory, output, handle;
		std::uint32_t len;
		std::uint32_t min_len = len; // an input struct's older, shorter form
	};
	const Want want[] = {
	    {UABI_ATTR_QP_PD, false, false, true, 4},
	    {UABI_ATTR_QP_SEND_CQ, false, false, true, 4},
	    {UABI_ATTR_QP_RECV_CQ, false, false, true, 4},
	    {UABI_ATTR_QP_SRQ, false, false, true, 4},
	    {UABI_ATTR_QP_XRCD, false, false, true, 4},
	    // Up to create_flags: the reserved tail may be left out.
	    {UABI_ATTR_QP_INIT, true, false, false, sizeof(uabi_qp_init), 36},
	    {UABI_ATTR_QP_USER_HANDLE, false, false, false, 8},
	    // Up to alt_timeout.
	    {UABI_ATTR_QP_ATTR, false, false, false, sizeof(uabi_qp_attr), 139},
	    {UABI_ATTR_QP_ATTR_MASK, false, false, false, 4},
	    {UABI_ATTR_QP_RESP, false, true, false, sizeof(uabi_qp_resp)},
	};
	Key k{UABI_OBJ_QP, UABI_METHOD_CREATE};
	ASSERT_EQ(methods_.count(k), 1u);
	std::set<std::uint16_t> listed;
	for (const auto &a : methods_[k].attrs)
		EXPECT_TRUE(listed.insert(a.attr_id).second)
		    << "attribute " << a.attr_id << " twice";
	std::set<std::uint16_t> wanted;
	for (const Want &w : want) {
		wanted.insert(w.id);
		SCOPED_TRACE("QP CREATE attribute " + std::to_string(w.id));
		const uabi_discovery_entry *e = find_attr(k, w.id);
		ASSERT_NE(e, nullptr) << "not listed";
		EXPECT_EQ(bool(e->attr_flags & UABI_SPEC_F_MANDATORY), w.mandatory);
		EXPECT_EQ(bool(e->attr_flags & UABI_SPEC_F_OUTPUT), w.output);
		EXPECT_EQ(bool(e->attr_flags & UABI_SPEC_F_HANDLE), w.handle);
		EXPECT_FALSE(e->attr_flags & UABI_SPEC_F_FD);
		EXPECT_EQ(e->attr_min_len, w.min_len);
		EXPECT_EQ(e->attr_max_len, w.len);
	}
	EXPECT_EQ(listed, wanted) << "QP CREATE lists exactly the attributes of the header";
}

TEST_F(Discovery, DriverPortObjectIsListed)
{
	Key set{UABI_SW_OBJ_PORT, UABI_SW_PORT_SET_STATE};
	Key stats{UABI_SW_OBJ_PORT, UABI_SW_PORT_STATS};
	ASSERT_EQ(methods_.count(set), 1u);
	ASSERT_EQ(methods_.count(stats), 1u);
	const auto *num = find_attr(set, UABI_SW_ATTR_PORT_NUM);
	const auto *state = find_attr(set, UABI_SW_ATTR_PORT_STATE);
	const auto *st = find_attr(stats, UABI_SW_ATTR_STATS);
	ASSERT_NE(num, nullptr);
	ASSERT_NE(state, nullptr);
	ASSERT_NE(st, nullptr);
	EXPECT_TRUE(num->attr_flags & UABI_SPEC_F_MANDATORY);
	EXPECT_TRUE(state->attr_flags & UABI_SPEC_F_MANDATORY);
	EXPECT_EQ(num->attr_min_len, 4u);
	EXPECT_EQ(state->attr_min_len, 4u);
	EXPECT_TRUE(st->attr_flags & UABI_SPEC_F_OUTPUT);
	EXPECT_EQ(st->attr_min_len, sizeof(uabi_sw_stats));
}

TEST_F(Discovery, EntriesAreWellFormed)
{
	ASSERT_FALSE(entries_.empty());
	for (const auto &e : entries_) {
		if (e.attr_id == 0) {
			EXPECT_EQ(e.attr_flags &
				      ~(UABI_SPEC_F_METHOD_CREATES | UABI_SPEC_F_METHOD_READONLY),
				  0)
			    << "method " << e.object << "/" << e.method;
			continue;
		}
		EXPECT_LE(e.attr_min_len, e.attr_max_len)
		    << "attribute " << e.attr_id << " of " << e.object << "/" << e.method;
		if (e.attr_flags & UABI_SPEC_F_HANDLE) {
			EXPECT_EQ(e.attr_min_len, 4u);
		}
		if (e.attr_flags & UABI_SPEC_F_INOUT) {
			EXPECT_TRUE(e.attr_flags & UABI_SPEC_F_OUTPUT);
		}
	}
}

// For every listed method: the dispatcher knows it (an attribute with an
// unknown flag bit is EINVAL, not EPROTONOSUPPORT) and rejects an unknown
// mandatory attribute with EPROTONOSUPPORT.
TEST_F(Discovery, EveryListedMethodIsKnownToTheDispatcher)
{
	ASSERT_FALSE(order_.empty());
	Snapshot before = snapshot(ctx());
	for (const Key &k : order_) {
		SCOPED_TRACE("object " + std::to_string(k.first) + " method " +
			     std::to_string(k.second));
		EXPECT_STATUS(send(k.first, k.second, {unknown_mandatory()}), -EPROTONOSUPPORT);
		EXPECT_STATUS(send(k.first, k.second, {attr(kUnknownAttr, 0x8000, 4)}), -EINVAL)
		    << "an unknown method would answer EPROTONOSUPPORT here";
	}
	expect_snapshot_eq(before, snapshot(ctx()), "after probing every method");
}

// For every listed attribute: sent as discovery describes it, the
// dispatcher accepts it (and then stops at a following unknown mandatory
// attribute); with the OUTPUT flag flipped, or one byte short, it is EINVAL.
TEST_F(Discovery, EveryListedAttributeIsParsedAsListed)
{
	Snapshot before = snapshot(ctx());
	for (const Key &k : order_) {
		for (const auto &e : methods_[k].attrs) {
			SCOPED_TRACE("object " + std::to_string(k.first) + " method " +
				     std::to_string(k.second) + " attribute " +
				     std::to_string(e.attr_id));
			Command::Attr ok = conforming(e, e.attr_min_len);
			EXPECT_STATUS(send(k.first, k.second, {ok, unknown_mandatory()}),
				      -EPROTONOSUPPORT)
			    << "the conforming attribute was refused";
			Command::Attr flipped = ok;
			flipped.flags ^= UABI_ATTR_F_OUTPUT;
			EXPECT_STATUS(send(k.first, k.second, {flipped, unknown_mandatory()}),
				      -EINVAL)
			    << "OUTPUT flag disagreeing with discovery";
			if (e.attr_min_len > 0) {
				Command::Attr shorter = conforming(e, e.attr_min_len - 1);
				EXPECT_STATUS(
				    send(k.first, k.second, {shorter, unknown_mandatory()}),
				    -EINVAL)
				    << "shorter than the listed minimum";
			}
			EXPECT_STATUS(send(k.first, k.second, {ok, ok, unknown_mandatory()}),
				      -EINVAL)
			    << "a listed attribute twice";
		}
	}
	expect_snapshot_eq(before, snapshot(ctx()), "after probing every attribute");
}

TEST_F(Discovery, EveryListedMandatoryAttributeIsRequired)
{
	Snapshot before = snapshot(ctx());
	for (const Key &k : order_) {
		for (const auto &e : methods_[k].attrs) {
			if (!(e.attr_flags & UABI_SPEC_F_MANDATORY))
				continue;
			SCOPED_TRACE("object " + std::to_string(k.first) + " method " +
				     std::to_string(k.second) + " attribute " +
				     std::to_string(e.attr_id));
			// Everything else listed, conforming; this one left out.
			std::vector<Command::Attr> attrs;
			for (const auto &o : methods_[k].attrs)
				if (o.attr_id != e.attr_id)
					attrs.push_back(conforming(o, o.attr_max_len > 4096
									  ? o.attr_min_len
									  : o.attr_max_len));
			EXPECT_STATUS(send(k.first, k.second, attrs), -EINVAL);
		}
	}
	expect_snapshot_eq(before, snapshot(ctx()), "after leaving out mandatory attributes");
}

// Memory windows are in the uAPI; a device without them (max_mw 0: the
// software device) does not list them, and they answer EOPNOTSUPP.
TEST_F(Discovery, MemoryWindowsAreListedExactlyWhenTheDeviceHasThem)
{
	DeviceInfo d = NEED(ctx().query_device());
	const bool has = d.attr.max_mw > 0;
	EXPECT_EQ(methods_.count({UABI_OBJ_MW, UABI_METHOD_CREATE}), has ? 1u : 0u);
	EXPECT_EQ(methods_.count({UABI_OBJ_MW, UABI_METHOD_DESTROY}), has ? 1u : 0u);
	Handle pd = NEED(ctx().alloc_pd());
	auto mw = ctx().alloc_mw(pd, UABI_MW_TYPE_1);
	if (has) {
		EXPECT_OK(mw);
		if (mw) {
			EXPECT_OK(ctx().dealloc_mw(mw->handle));
		}
	} else {
		EXPECT_ERRNO(mw, EOPNOTSUPP);
	}
	EXPECT_OK(ctx().dealloc_pd(pd));
}

// And what is not listed does not exist (or, for the methods the uAPI has
// but the device lacks, answers EOPNOTSUPP: the test above).
TEST_F(Discovery, UnlistedMethodsAndObjectsAreEPROTONOSUPPORT)
{
	std::set<std::uint16_t> objects;
	for (const Key &k : order_)
		objects.insert(k.first);
	// Known to the uAPI, listed or not.
	objects.insert(UABI_OBJ_MW);
	const std::set<Key> known = {{UABI_OBJ_MW, UABI_METHOD_CREATE},
				     {UABI_OBJ_MW, UABI_METHOD_DESTROY}};
	Snapshot before = snapshot(ctx());
	for (std::uint16_t o : objects) {
		for (std::uint32_t m = 0; m < 64; m++) {
			if (methods_.count({o, std::uint16_t(m)}) || known.count({o, std::uint16_t(m)}))
				continue;
			EXPECT_STATUS(send(o, std::uint16_t(m), {}), -EPROTONOSUPPORT)
			    << "object " << o << " unlisted method " << m;
		}
		EXPECT_STATUS(send(o, 0xffff, {}), -EPROTONOSUPPORT) << "object " << o;
	}
	for (std::uint32_t o = 0; o < 64; o++) {
		if (objects.count(std::uint16_t(o)))
			continue;
		EXPECT_STATUS(send(std::uint16_t(o), UABI_METHOD_CREATE, {}), -EPROTONOSUPPORT)
		    << "unlisted object " << o;
	}
	for (std::uint32_t o = UABI_DRIVER_NS; o < UABI_DRIVER_NS + 16; o++) {
		if (objects.count(std::uint16_t(o)))
			continue;
		EXPECT_STATUS(send(std::uint16_t(o), UABI_METHOD_CALL, {}), -EPROTONOSUPPORT)
		    << "unlisted driver object " << o;
	}
	expect_snapshot_eq(before, snapshot(ctx()), "after probing unlisted ids");
}

} // namespace
