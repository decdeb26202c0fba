// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The port's management agents (compat/umad/src/agent.cpp) MAD by MAD, on
// the in-process device: each attribute equals the device's answers, each
// request the agents cannot serve gets the status an IB agent gives, and
// what leaves the one-port subnet is lost.
#include "agent.hpp"
#include "umad_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_user_ioctl.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace {

using namespace uabi;
using namespace uabi::umad;
using uabi::umad::File;

class Agent : public ::testing::Test {
protected:
	void SetUp() override
	{
		auto c = Context::open(Backend::Inproc);
		ASSERT_TRUE(c) << std::strerror(c.error());
		auto s = fsview::query(*c);
		ASSERT_TRUE(s) << std::strerror(s.error());
		snap = *s;
		ASSERT_FALSE(snap.ports.empty());
		port = snap.ports[0];
	}

	// A request of class cls, method, attribute; TID 0x1234.
	std::array<std::uint8_t, kMadSize> req(std::uint8_t cls, std::uint8_t method, std::uint16_t attr,
					       std::uint32_t mod = 0, std::uint8_t version = 1)
	{
		std::array<std::uint8_t, kMadSize> m{};
		m[0] = 1;
		m[1] = cls;
		m[2] = version;
		m[3] = method;
		put64(m.data() + 8, 0x1234);
		put16(m.data() + 16, attr);
		put32(m.data() + 20, mod);
		if (cls == kClassSubnDr) {
			put16(m.data() + 32, kPermissiveLid);
			put16(m.data() + 34, kPermissiveLid);
		}
		return m;
	}

	Fate lid(const std::array<std::uint8_t, kMadSize> &m, std::uint32_t qpn = 0)
	{
		return send(snap, port.num, m.data(), Address{port.attr.lid, qpn}, out);
	}

	std::uint16_t status() const { return get16(out.mad.data() + 4); }
	const std::uint8_t *data() const { return out.mad.data() + 64; }

	fsview::Snapshot snap;
	fsview::Port port;
	Answer out;
};

TEST_F(Agent, NodeInfoIsTheDevices)
{
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrNodeInfo)), Fate::Answered);
	EXPECT_EQ(out.mad[3], kMethodGetResp);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(get64(out.mad.data() + 8), 0x1234u);
	EXPECT_EQ(data()[2], 1); // CA
	EXPECT_EQ(data()[3], snap.attr.phys_port_cnt);
	EXPECT_EQ(get64(data() + 4), snap.attr.sys_image_guid);
	EXPECT_EQ(get64(data() + 12), snap.attr.node_guid);
	EXPECT_EQ(get64(data() + 20), fsview::port_guid(port));
	EXPECT_EQ(get16(data() + 28), snap.attr.max_pkeys);
	EXPECT_EQ(get32(data() + 32), snap.attr.hw_ver);
	EXPECT_EQ(data()[36], port.num);
	EXPECT_EQ(out.slid, port.attr.lid);
	EXPECT_EQ(out.sqpn, 0u);
}

TEST_F(Agent, PortInfoIsTheDevices)
{
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrPortInfo, port.num)), Fate::Answered);
	ASSERT_EQ(status(), 0);
	EXPECT_EQ(get64(data() + 8), fsview::gid_prefix(port));
	EXPECT_EQ(get16(data() + 16), port.attr.lid);
	EXPECT_EQ(get16(data() + 18), port.attr.sm_lid);
	EXPECT_EQ(get32(data() + 20), port.attr.port_cap_flags);
	EXPECT_EQ(data()[31], port.attr.active_width);
	EXPECT_EQ(data()[32] & 0xf, port.attr.state);
	EXPECT_EQ(data()[33] >> 4, port.attr.phys_state);
	EXPECT_EQ(data()[34] & 7, port.attr.lmc);
	EXPECT_EQ(data()[36] >> 4, port.attr.active_mtu);
	EXPECT_EQ(data()[41] & 0xf, port.attr.max_mtu);
	EXPECT_EQ(data()[50], port.attr.gid_tbl_len);
	// Port 0 of a CA: the port the SMP came in through.
	auto first = out.mad;
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrPortInfo, 0)), Fate::Answered);
	EXPECT_EQ(std::memcmp(first.data() + 64, data(), 64), 0);
	// A port the node has not.
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrPortInfo, 9)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadField);
}

TEST_F(Agent, TablesGuidsSmInfoAndDescription)
{
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrGuidInfo, 0)), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(get64(data()), fsview::port_guid(port));
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrGuidInfo, 1)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadField); // one block of eight holds the table
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrPkeyTable, 0)), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(get16(data()), port.pkeys.at(0));
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrPkeyTable, 1)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadField);
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrSmInfo)), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(get64(data()), fsview::port_guid(port));
	EXPECT_EQ(data()[20] & 0xf, 3); // MASTER
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrNodeDesc)), Fate::Answered);
	EXPECT_EQ(std::string(reinterpret_cast<const char *>(data()),
			      strnlen(reinterpret_cast<const char *>(data()), 64)),
		  snap.node_desc);
}

TEST_F(Agent, WhatTheSmaDoesNotServe)
{
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodSet, kAttrPortInfo, 1)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadMethodAttr); // the device's attributes are not set by MADs
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, 0x0012 /* SwitchInfo */)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadMethodAttr);
	ASSERT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrNodeInfo, 0, 2)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadVersion);
	ASSERT_EQ(lid(req(kClassSubnLid, 0x05 /* Trap */, kAttrNodeInfo)), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadMethod);
	// Responses and SMPs on QP 1 reach nobody.
	EXPECT_EQ(lid(req(kClassSubnLid, kMethodGetResp, kAttrNodeInfo)), Fate::Lost);
	EXPECT_EQ(lid(req(kClassSubnLid, kMethodGet, kAttrNodeInfo), 1), Fate::Lost);
}

TEST_F(Agent, RoutesOnlyToThePort)
{
	auto m = req(kClassSubnLid, kMethodGet, kAttrNodeInfo);
	EXPECT_EQ(send(snap, port.num, m.data(), Address{std::uint16_t(port.attr.lid + 5), 0}, out),
		  Fate::Lost);
	EXPECT_EQ(send(snap, port.num, m.data(), Address{kPermissiveLid, 0}, out), Fate::Answered);
	EXPECT_EQ(send(snap, port.num + 7, m.data(), Address{port.attr.lid, 0}, out), Fate::Lost);
	// Directed route: hop count 0 is the port itself; any hop beyond is lost.
	auto dr = req(kClassSubnDr, kMethodGet, kAttrNodeInfo);
	ASSERT_EQ(send(snap, port.num, dr.data(), Address{kPermissiveLid, 0}, out), Fate::Answered);
	EXPECT_EQ(get16(out.mad.data() + 4), 0x8000); // direction: returning, status 0
	EXPECT_EQ(out.mad[6], 0);		       // hop pointer back at 0
	EXPECT_EQ(out.slid, kPermissiveLid);
	dr[7] = 1;
	dr[128 + 1] = std::uint8_t(port.num);
	EXPECT_EQ(send(snap, port.num, dr.data(), Address{kPermissiveLid, 0}, out), Fate::Lost);
}

TEST_F(Agent, PerformanceManagement)
{
	ASSERT_EQ(lid(req(kClassPerf, kMethodGet, kAttrClassPortInfo), 1), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(out.sqpn, 1u);
	EXPECT_EQ(get16(data() + 2), kPmaCapXmitWait | kPmaCapExtWidth);
	auto pc = req(kClassPerf, kMethodGet, kAttrPortCounters);
	pc[64 + 1] = std::uint8_t(port.num);
	ASSERT_EQ(lid(pc, 1), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(data()[1], port.num);
	const fsview::PortCounters c = fsview::port_counters(snap, port);
	EXPECT_EQ(get32(data() + 24), c.port_xmit_data);
	EXPECT_EQ(get32(data() + 36), c.port_rcv_packets);
	pc[64 + 1] = 9;
	ASSERT_EQ(lid(pc, 1), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadField);
	// Performance MADs go to QP 1.
	EXPECT_EQ(lid(req(kClassPerf, kMethodGet, kAttrClassPortInfo), 0), Fate::Lost);
}

// The PMA's traffic counters are the user's block in its arena: what the
// data path adds there (Device::count_traffic, done by hand here), 32-bit
// counters stopping at their maximum, Sets clearing what CounterSelect
// names of one attribute only.
TEST_F(Agent, PortCountersAreTheUsersTraffic)
{
	auto c = Context::open(Backend::Inproc);
	ASSERT_TRUE(c) << std::strerror(c.error());
	auto t = fsview::Traffic::map(*c);
	ASSERT_TRUE(t) << std::strerror(t.error());
	snap.traffic = *t;
	uabi_sw_port_counters *b = snap.traffic->block();
	auto pma = [&](std::uint8_t method, std::uint16_t attr, std::uint16_t select) {
		auto m = req(kClassPerf, method, attr);
		m[64 + 1] = std::uint8_t(port.num);
		put16(m.data() + 64 + 2, select);
		ASSERT_EQ(lid(m, 1), Fate::Answered);
		ASSERT_EQ(status(), 0);
	};
	// From zero: both attributes cleared.
	ASSERT_NO_FATAL_FAILURE(pma(kMethodSet, kAttrPortCounters, 0xffff));
	EXPECT_EQ(get32(data() + 24), 0u);
	ASSERT_NO_FATAL_FAILURE(pma(kMethodSet, kAttrPortCountersExt, 0xff));
	EXPECT_EQ(get64(data() + 8), 0u);

	b->data_words += 1000;
	b->ucast_pkts += 7;
	b->mcast_pkts += 2;
	ASSERT_NO_FATAL_FAILURE(pma(kMethodGet, kAttrPortCounters, 0));
	EXPECT_EQ(get32(data() + 24), 1000u); // PortXmitData
	EXPECT_EQ(get32(data() + 28), 1000u); // PortRcvData
	EXPECT_EQ(get32(data() + 32), 9u);    // PortXmitPkts
	EXPECT_EQ(get32(data() + 36), 9u);    // PortRcvPkts
	ASSERT_NO_FATAL_FAILURE(pma(kMethodGet, kAttrPortCountersExt, 0));
	EXPECT_EQ(get64(data() + 8), 1000u);
	EXPECT_EQ(get64(data() + 16), 1000u);
	EXPECT_EQ(get64(data() + 24), 9u);
	EXPECT_EQ(get64(data() + 32), 9u);
	EXPECT_EQ(get64(data() + 40), 7u); // unicast
	EXPECT_EQ(get64(data() + 48), 7u);
	EXPECT_EQ(get64(data() + 56), 2u); // multicast
	EXPECT_EQ(get64(data() + 64), 2u);

	// PortXmitData alone, of PortCounters alone.
	ASSERT_NO_FATAL_FAILURE(pma(kMethodSet, kAttrPortCounters, 1u << 12));
	EXPECT_EQ(get32(data() + 24), 0u);
	EXPECT_EQ(get32(data() + 28), 1000u);
	ASSERT_NO_FATAL_FAILURE(pma(kMethodGet, kAttrPortCountersExt, 0));
	EXPECT_EQ(get64(data() + 8), 1000u);

	// Past 32 bits: PortCounters stops at the maximum, the extended
	// counter goes on.
	b->data_words += 1ull << 32;
	ASSERT_NO_FATAL_FAILURE(pma(kMethodGet, kAttrPortCounters, 0));
	EXPECT_EQ(get32(data() + 24), 0xffffffffu);
	EXPECT_EQ(get32(data() + 28), 0xffffffffu);
	ASSERT_NO_FATAL_FAILURE(pma(kMethodGet, kAttrPortCountersExt, 0));
	EXPECT_EQ(get64(data() + 16), 1000u + (1ull << 32));

	// A base above its total (the block is the user's to write) reads 0.
	b->base[UABI_SW_PCX_MCAST_RCV_PKTS] = ~0ull;
	ASSERT_NO_FATAL_FAILURE(pma(kMethodGet, kAttrPortCountersExt, 0));
	EXPECT_EQ(get64(data() + 64), 0u);

	// sysfs' files, made from the same counters (the extended ones, as
	// Linux shows them for a PMA that has them).
	auto tree = fsview::make_tree(snap, fsview::NodeSources{});
	ASSERT_TRUE(tree) << std::strerror(tree.error());
	auto file = [&](const std::string &name) {
		for (const auto &f : tree->files)
			if (f.path.size() > name.size() &&
			    f.path.compare(f.path.size() - name.size(), name.size(), name) == 0)
				return f.data;
		return std::string("(none)");
	};
	EXPECT_EQ(file("/counters/port_rcv_data"), std::to_string(1000u + (1ull << 32)) + "\n");
	EXPECT_EQ(file("/counters/unicast_xmit_packets"), "7\n");
	EXPECT_EQ(file("/counters/multicast_xmit_packets"), "2\n");
	ASSERT_NO_FATAL_FAILURE(pma(kMethodSet, kAttrPortCountersExt, 0xff));
	ASSERT_NO_FATAL_FAILURE(pma(kMethodSet, kAttrPortCounters, 0xffff));
}

// The counters outlive the user's arena: the control half keeps them when
// the user's last context closes and puts them into its next arena.
TEST_F(Agent, PortCountersOutliveTheUsersLastContext)
{
	std::uint64_t words = 0;
	{
		auto c = Context::open(Backend::Inproc);
		ASSERT_TRUE(c) << std::strerror(c.error());
		auto t = fsview::Traffic::map(*c);
		ASSERT_TRUE(t) << std::strerror(t.error());
		(*t)->block()->data_words += 123;
		words = (*t)->block()->data_words;
	}
	auto c = Context::open(Backend::Inproc);
	ASSERT_TRUE(c) << std::strerror(c.error());
	auto t = fsview::Traffic::map(*c);
	ASSERT_TRUE(t) << std::strerror(t.error());
	EXPECT_EQ((*t)->block()->data_words, words);
}

TEST_F(Agent, SubnetAdministrator)
{
	// NodeRecord by LID: the one record.
	auto nr = req(kClassSubnAdm, kMethodGet, kAttrNodeRecord, 0, 2);
	put64(nr.data() + 48, 1); // component: LID
	put16(nr.data() + 56, port.attr.lid);
	ASSERT_EQ(lid(nr, 1), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(get64(out.mad.data() + 56 + 4 + 12), snap.attr.node_guid);
	// Another LID: no record (ERR_NO_RECORDS).
	put16(nr.data() + 56, std::uint16_t(port.attr.lid + 1));
	ASSERT_EQ(lid(nr, 1), Fate::Answered);
	EXPECT_EQ(status(), kSaStatusNoRecords);
	// GetTable of PortInfoRecords having IsDM (srp_daemon's question): none,
	// as one RMPP segment carrying only the SA header.
	auto pir = req(kClassSubnAdm, kMethodGetTable, kAttrPortInfoRecord, 1u << 31, 2);
	put64(pir.data() + 48, 1u << 7);
	put32(pir.data() + 56 + 4 + 20, kPortCapIsDm);
	ASSERT_EQ(lid(pir, 1), Fate::Answered);
	EXPECT_EQ(status(), 0);
	EXPECT_EQ(out.mad[3], kMethodGetTableResp);
	EXPECT_TRUE(out.rmpp);
	EXPECT_EQ(out.length, 56u);
	EXPECT_EQ(out.mad[26] & 7, 7); // RMPP active, first, last
	EXPECT_EQ(get32(out.mad.data() + 32), 20u);
	// The same with IsSM: this port.
	put32(pir.data() + 56 + 4 + 20, kPortCapIsSm);
	ASSERT_EQ(lid(pir, 1), Fate::Answered);
	EXPECT_EQ(out.length, 56u + 72u);
	EXPECT_EQ(get16(out.mad.data() + 44) * 8u, 72u);
	EXPECT_EQ(get16(out.mad.data() + 56), port.attr.lid);
	// A component this SA does not filter on: refused, not ignored.
	put64(pir.data() + 48, 1ull << 30);
	ASSERT_EQ(lid(pir, 1), Fate::Answered);
	EXPECT_EQ(status(), kSaStatusReqInvalid);
	// Path records are not served.
	ASSERT_EQ(lid(req(kClassSubnAdm, kMethodGet, 0x0035, 0, 2), 1), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadMethodAttr);
}

TEST_F(Agent, ClassesWithoutAnAgent)
{
	// A Get of a class nobody serves: "unsupported", as Linux's MAD layer.
	ASSERT_EQ(lid(req(0x06 /* DevMgt */, kMethodGet, 0x0010), 1), Fate::Answered);
	EXPECT_EQ(status(), kStatusBadMethodAttr);
	// Anything else is dropped.
	EXPECT_EQ(lid(req(0x06, 0x06 /* Send */, 0x0010), 1), Fate::Lost);
}

// One umad file without the interposer (its lifetime and the timer's,
// under the sanitizers' leak check): an answer, a timeout, the file gone
// with a timeout still due.
TEST_F(Agent, UmadFileLifetime)
{
	auto snapfn = [this]() -> Result<fsview::Snapshot> { return snap; };
	for (int round = 0; round < 3; round++) {
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ASSERT_GE(efd, 0);
		int own = dup(efd);
		auto f = std::make_shared<File>(own, port.num, O_RDWR, snapfn);
		ASSERT_EQ(f->ioctl(IB_USER_MAD_ENABLE_PKEY, nullptr), 0);
		ib_user_mad_reg_req r{};
		r.qpn = 0;
		r.mgmt_class = kClassSubnLid;
		r.mgmt_class_version = 1;
		ASSERT_EQ(f->ioctl(IB_USER_MAD_REGISTER_AGENT, &r), 0);
		struct {
			ib_user_mad_hdr hdr;
			std::uint8_t mad[kMadSize];
		} u{};
		auto m = req(kClassSubnLid, kMethodGet, kAttrNodeInfo);
		std::memcpy(u.mad, m.data(), kMadSize);
		u.hdr.id = r.id;
		u.hdr.timeout_ms = 50;
		u.hdr.lid = htons(port.attr.lid);
		ASSERT_EQ(f->write(&u, sizeof(u)), long(sizeof(u)));
		std::uint8_t buf[1024];
		ASSERT_EQ(f->read(efd, buf, sizeof(buf), true), long(sizeof(u)));
		// To a LID nobody has: back with ETIMEDOUT after 50 ms.
		u.hdr.lid = htons(std::uint16_t(port.attr.lid + 3));
		put64(u.mad + 8, 0x77);
		ASSERT_EQ(f->write(&u, sizeof(u)), long(sizeof(u)));
		pollfd p{efd, POLLIN, 0};
		ASSERT_EQ(poll(&p, 1, 5000), 1);
		ASSERT_EQ(f->read(efd, buf, sizeof(buf), true), long(sizeof(ib_user_mad_hdr) + 24));
		EXPECT_EQ(reinterpret_cast<ib_user_mad_hdr *>(buf)->status, std::uint32_t(ETIMEDOUT));
		// One more left waiting: the file goes first, the timer after.
		put64(u.mad + 8, 0x78);
		ASSERT_EQ(f->write(&u, sizeof(u)), long(sizeof(u)));
		f.reset();
		::close(efd);
	}
	::usleep(100 * 1000); // the timers of the files gone fire on nothing
}

// Every device in one tree: uabi_sw0 (the in-process device's answers) and
// a RoCE device made by hand — its GID types and ndevs, an unused entry,
// no counters, parent and device/net, uverbsN and umadN in device order.
TEST_F(Agent, TreeOfEveryDevice)
{
	fsview::Snapshot roce = snap;
	roce.name = "roce_t";
	roce.netdev = "veth9";
	roce.traffic = nullptr;
	ASSERT_EQ(roce.ports.size(), 1u);
	fsview::Port &rp = roce.ports[0];
	rp.attr.link_layer = UABI_LINK_LAYER_ETHERNET;
	rp.gids.assign(2, Gid{});
	rp.gids[0][10] = 0xff;
	rp.gids[0][11] = 0xff;
	rp.gids[0][12] = 10;
	rp.gids[0][15] = 1; // ::ffff:10.0.0.1; entry 1 unused (zeros)
	auto tree = fsview::make_tree(std::vector<fsview::Snapshot>{snap, roce}, fsview::NodeSources{});
	ASSERT_TRUE(tree) << std::strerror(tree.error());
	auto file = [&](const std::string &path) {
		for (const auto &f : tree->files)
			if (f.path == path)
				return f.data;
		return std::string("(none)");
	};
	const std::string sw = "class/infiniband/" + snap.name + "/ports/1/";
	const std::string ro = "class/infiniband/roce_t/ports/1/";
	EXPECT_EQ(file(sw + "link_layer"), "InfiniBand\n");
	EXPECT_EQ(file(sw + "gid_attrs/types/0"), "IB/RoCE v1\n");
	EXPECT_EQ(file(sw + "gid_attrs/ndevs/0"), "");
	EXPECT_NE(file(sw + "counters/port_xmit_data"), "(none)");
	EXPECT_EQ(file(ro + "link_layer"), "Ethernet\n");
	EXPECT_EQ(file(ro + "gids/0"), "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
	EXPECT_EQ(file(ro + "gid_attrs/types/0"), "RoCE v2\n");
	EXPECT_EQ(file(ro + "gid_attrs/ndevs/0"), "veth9\n");
	EXPECT_EQ(file(ro + "gids/1"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
	EXPECT_EQ(file(ro + "gid_attrs/types/1"), "");
	EXPECT_EQ(file(ro + "gid_attrs/ndevs/1"), "");
	for (const auto &f : tree->files)
		EXPECT_EQ(f.path.rfind(ro + "counters", 0), std::string::npos) << f.path;
	EXPECT_EQ(file("class/infiniband/roce_t/parent"), "veth9\n");
	EXPECT_EQ(file("class/infiniband/" + snap.name + "/parent"), "(none)");
	bool net = false;
	for (const auto &l : tree->links)
		if (l.path == "class/infiniband/roce_t/device/net/veth9")
			net = l.target == "../../../../net/veth9";
	EXPECT_TRUE(net);
	EXPECT_EQ(file("class/infiniband_verbs/uverbs0/ibdev"), snap.name + "\n");
	EXPECT_EQ(file("class/infiniband_verbs/uverbs1/ibdev"), "roce_t\n");
	EXPECT_EQ(file("class/infiniband_mad/umad0/ibdev"), snap.name + "\n");
	EXPECT_EQ(file("class/infiniband_mad/umad1/ibdev"), "roce_t\n");
	EXPECT_EQ(file("class/infiniband_mad/issm1/port"), "1\n");
	std::vector<std::string> nodes;
	for (const auto &n : tree->nodes)
		nodes.push_back(n.name);
	EXPECT_EQ(nodes, (std::vector<std::string>{"uverbs0", "uverbs1", "umad0", "issm0", "umad1",
						   "issm1"}));
}

// A RoCE port's umad file: no QP0 (EPROTONOSUPPORT, as Linux), QP1 agents
// register, and nothing answers what is sent: the PMA Get that the
// InfiniBand port answers at once comes back as a timeout.
TEST_F(Agent, UmadFileOfARoCEPort)
{
	auto snapfn = [this]() -> Result<fsview::Snapshot> { return snap; };
	for (bool ib : {true, false}) {
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		ASSERT_GE(efd, 0);
		auto f = std::make_shared<File>(dup(efd), port.num, O_RDWR, snapfn, ib);
		ib_user_mad_reg_req r{};
		r.qpn = 0;
		r.mgmt_class = kClassSubnLid;
		r.mgmt_class_version = 1;
		EXPECT_EQ(f->ioctl(IB_USER_MAD_REGISTER_AGENT, &r), ib ? 0 : -EPROTONOSUPPORT);
		r = ib_user_mad_reg_req{};
		r.qpn = 1;
		r.mgmt_class = kClassPerf;
		r.mgmt_class_version = 1;
		ASSERT_EQ(f->ioctl(IB_USER_MAD_REGISTER_AGENT, &r), 0);
		struct {
			ib_user_mad_hdr_old hdr;
			std::uint8_t mad[kMadSize];
		} u{};
		auto m = req(kClassPerf, kMethodGet, kAttrPortCounters);
		std::memcpy(u.mad, m.data(), kMadSize);
		u.hdr.id = r.id;
		u.hdr.qpn = htonl(1);
		u.hdr.timeout_ms = 20;
		u.hdr.lid = htons(port.attr.lid);
		ASSERT_EQ(f->write(&u, sizeof(u)), long(sizeof(u)));
		std::uint8_t buf[1024];
		if (ib) {
			// Answered before write() returns.
			ASSERT_EQ(f->read(efd, buf, sizeof(buf), true), long(sizeof(u)));
			EXPECT_EQ(reinterpret_cast<ib_user_mad_hdr_old *>(buf)->status, 0u);
		} else {
			EXPECT_EQ(f->read(efd, buf, sizeof(buf), true), -EAGAIN);
			pollfd p{efd, POLLIN, 0};
			ASSERT_EQ(poll(&p, 1, 5000), 1);
			ASSERT_EQ(f->read(efd, buf, sizeof(buf), true),
				  long(sizeof(ib_user_mad_hdr_old) + 24));
			EXPECT_EQ(reinterpret_cast<ib_user_mad_hdr_old *>(buf)->status,
				  std::uint32_t(ETIMEDOUT));
		}
		f.reset();
		::close(efd);
	}
}

} // namespace
