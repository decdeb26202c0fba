// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 2: the device object of the software device.
#include "support/uabi_test.hpp"

using namespace uabi;
using namespace uabi::test;

namespace
{

class Device : public UabiTest
{
};

TEST_F(Device, QueryDeviceNamesTheSoftwareDeviceWithOnePort)
{
	DeviceInfo d = NEED(ctx().query_device());
	EXPECT_EQ(d.name, "uabi_sw0");
	EXPECT_EQ(d.attr.phys_port_cnt, 1u);
	EXPECT_EQ(d.attr.node_guid, UABI_SW_NODE_GUID);
	EXPECT_GT(d.attr.max_qp, 0u);
	EXPECT_GT(d.attr.max_cqe, 0u);
	EXPECT_GT(d.attr.max_qp_wr, 0u);
	EXPECT_GE(d.attr.max_pkeys, 1u);
}

TEST_F(Device, QueryDeviceWritesItsOutputs)
{
	Command c(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
	// Pre-filled garbage must be overwritten.
	uabi_device_attr junk;
	std::memset(&junk, 0xa5, sizeof(junk));
	OutAttr info = c.add_inout(UABI_ATTR_DEVICE_INFO, junk);
	Message m = NEED(ctx().call(std::move(c)));
	uabi_device_attr a{};
	EXPECT_TRUE(m.read(0, info, a)) << "VALID_OUTPUT set on the written output";
	EXPECT_EQ(a.phys_port_cnt, 1u);
	EXPECT_EQ(a.node_guid, UABI_SW_NODE_GUID);
}

TEST_F(Device, Port1IsActiveWithALid)
{
	uabi_port_attr p = NEED(ctx().query_port(1));
	EXPECT_EQ(p.state, 4u) << "IBV_PORT_ACTIVE";
	EXPECT_NE(p.lid, 0u);
	EXPECT_EQ(p.lid, UABI_SW_PORT_LID);
	EXPECT_GE(p.gid_tbl_len, 1u);
	EXPECT_GE(p.pkey_tbl_len, 1u);
	EXPECT_GE(p.max_mtu, p.active_mtu);
	EXPECT_GE(p.active_mtu, 1u);
	EXPECT_LE(p.active_mtu, 5u);
}

TEST_F(Device, Gid0IsLinkLocalWithTheNodeGuid)
{
	DeviceInfo d = NEED(ctx().query_device());
	Gid g = NEED(ctx().query_gid(1, 0));
	const std::uint8_t prefix[8] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0};
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(g[i], prefix[i]) << "GID byte " << i << " (fe80::/64)";
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(g[8 + i], std::uint8_t(d.attr.node_guid >> (56 - 8 * i)))
		    << "GID byte " << 8 + i << " (node GUID, big-endian)";
}

TEST_F(Device, Pkey0IsTheDefaultFullMemberPkey)
{
	EXPECT_EQ(NEED(ctx().query_pkey(1, 0)), 0xffffu);
}

TEST_F(Device, NonexistentPortsAndIndexesAreEINVAL)
{
	EXPECT_ERRNO(ctx().query_port(2), EINVAL);
	EXPECT_ERRNO(ctx().query_port(0), EINVAL);
	EXPECT_ERRNO(ctx().query_port(0xffffffffu), EINVAL);
	EXPECT_ERRNO(ctx().query_gid(1, 1), EINVAL);
	EXPECT_ERRNO(ctx().query_gid(2, 0), EINVAL);
	EXPECT_ERRNO(ctx().query_pkey(1, 1), EINVAL);
	EXPECT_ERRNO(ctx().query_pkey(2, 0), EINVAL);
}

TEST_F(Device, CountersCountThisContextAndTheDevice)
{
	auto before = counters();
	EXPECT_EQ(before.num_types, unsigned(UABI_OBJ_MAX_CORE));
	EXPECT_GE(before.contexts, 1u);
	for (unsigned t = 0; t < 16; t++)
		EXPECT_EQ(before.context[t], 0u) << "fresh context, " << object_name(t);

	Handle pd = NEED(ctx().alloc_pd());
	auto mid = counters();
	EXPECT_EQ(mid.context[UABI_OBJ_PD], 1u);
	EXPECT_EQ(mid.device[UABI_OBJ_PD], before.device[UABI_OBJ_PD] + 1);

	// Another context sees the device count, not this context's.
	Context &other = open_extra();
	auto o = NEED(other.counters());
	EXPECT_EQ(o.context[UABI_OBJ_PD], 0u);
	EXPECT_EQ(o.device[UABI_OBJ_PD], mid.device[UABI_OBJ_PD]);
	EXPECT_EQ(o.contexts, mid.contexts + 1);

	EXPECT_OK(ctx().dealloc_pd(pd));
	expect_context_counters_eq(before, counters(), "after dealloc");
}

} // namespace
