// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabi-demo: the main job end to end on whatever transport UABI_BACKEND
// names (default: in-process).  Exits non-zero on the first error, or if
// the device's live-object counters do not return to where they started.
#include <uabi/client.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace uabi;

namespace {

[[noreturn]] void fail(const char *what, int err)
{
	std::fprintf(stderr, "uabi-demo: %s failed: %s (errno %d)\n", what,
		     std::strerror(err), err);
	std::exit(1);
}

template <class T>
T need(Result<T> r, const char *what)
{
	if (!r)
		fail(what, r.error());
	return std::move(r).value();
}

void need(Result<void> r, const char *what)
{
	if (!r)
		fail(what, r.error());
}

const char *port_state(std::uint32_t s)
{
	static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED",
					    "ACTIVE", "ACTIVE_DEFER"};
	return s < std::size(names) ? names[s] : "?";
}

const char *qp_state(std::uint32_t s)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS",
					    "SQD", "SQE", "ERR"};
	return s < std::size(names) ? names[s] : "?";
}

std::string gid_str(const Gid &g)
{
	std::string s;
	char buf[8];
	for (int i = 0; i < 16; i += 2) {
		std::snprintf(buf, sizeof(buf), "%s%02x%02x", i ? ":" : "", g[i], g[i + 1]);
		s += buf;
	}
	return s;
}

void print_counters(const char *when, const uabi_counters &c)
{
	static const char *const names[] = {"", "device", "pd", "mr", "cq",
					    "comp_channel", "async_event", "qp",
					    "srq", "ah", "xrcd", "mw"};
	std::printf("counters %s: contexts=%u", when, c.contexts);
	for (unsigned t = UABI_OBJ_PD; t < std::size(names) && t < 16; t++)
		std::printf(" %s=%u", names[t], c.device[t]);
	std::printf("\n");
}

// IBV_ACCESS_LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ
constexpr std::uint32_t kAccess = 1 | 2 | 4;

constexpr std::uint32_t kInitMask =
	UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS;
constexpr std::uint32_t kRtrMask =
	UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU | UABI_QP_DEST_QPN |
	UABI_QP_RQ_PSN | UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER;
constexpr std::uint32_t kRtsMask =
	UABI_QP_STATE | UABI_QP_TIMEOUT | UABI_QP_RETRY_CNT | UABI_QP_RNR_RETRY |
	UABI_QP_SQ_PSN | UABI_QP_MAX_QP_RD_ATOMIC;

// Every attribute the RESET->INIT->RTR->RTS path needs, connected to
// dest_qpn through port 1.
uabi_qp_attr connect_attr(std::uint32_t dest_qpn, const uabi_port_attr &port,
			  const Gid &gid)
{
	uabi_qp_attr a{};
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = kAccess;
	a.path_mtu = 3; // IBV_MTU_1024
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = port.lid;
	a.ah_attr.port_num = 1;
	if (port.link_layer == 2) { // IBV_LINK_LAYER_ETHERNET needs a GRH
		a.ah_attr.is_global = 1;
		std::memcpy(a.ah_attr.grh.dgid, gid.data(), gid.size());
		a.ah_attr.grh.hop_limit = 1;
	}
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return a;
}

uabi_qp_init rc_init()
{
	uabi_qp_init init{};
	init.qp_type = UABI_QPT_RC;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	return init;
}

} // namespace

int main()
{
	Backend backend = need(backend_from_env(), "reading UABI_BACKEND");
	Context ctx = need(Context::open(backend), "opening the transport");
	std::printf("opened transport %s (UABI_BACKEND=%s)\n", ctx.transport().name(),
		    backend_name(backend));

	DeviceInfo dev = need(ctx.query_device(), "query_device");
	std::printf("device %s: vendor=0x%x ports=%u max_qp=%u\n", dev.name.c_str(),
		    dev.attr.vendor_id, dev.attr.phys_port_cnt, dev.attr.max_qp);
	uabi_port_attr port = need(ctx.query_port(1), "query_port");
	Gid gid = need(ctx.query_gid(1, 0), "query_gid");
	std::printf("port 1: state=%s lid=%u active_mtu=%u gid[0]=%s\n",
		    port_state(port.state), port.lid, port.active_mtu,
		    gid_str(gid).c_str());

	uabi_counters before = need(ctx.counters(), "counters");
	print_counters("before", before);

	Handle pd = need(ctx.alloc_pd(), "alloc_pd");
	std::printf("created PD handle=%u\n", pd);
	std::vector<std::byte> buf(4096);
	MrInfo mr = need(ctx.reg_mr(pd, buf.data(), buf.size(), kAccess), "reg_mr");
	std::printf("registered MR handle=%u len=%zu lkey=0x%x rkey=0x%x\n", mr.handle,
		    buf.size(), mr.lkey, mr.rkey);
	CqInfo cq = need(ctx.create_cq(16), "create_cq");
	std::printf("created CQ handle=%u cqe=%u cqn=%u\n", cq.handle, cq.cqe, cq.cqn);
	QpInfo qp = need(ctx.create_qp({.pd = pd, .send_cq = cq.handle,
					.recv_cq = cq.handle, .init = rc_init()}),
			 "create_qp");
	std::printf("created RC QP handle=%u qpn=%u state=%s\n", qp.handle,
		    qp.resp.qpn, qp_state(qp.resp.state));

	// Loopback: the QP is connected to itself.
	uabi_qp_attr a = connect_attr(qp.resp.qpn, port, gid);
	const struct {
		std::uint32_t state;
		std::uint32_t mask;
	} steps[] = {{UABI_QPS_INIT, kInitMask},
		     {UABI_QPS_RTR, kRtrMask},
		     {UABI_QPS_RTS, kRtsMask}};
	for (const auto &s : steps) {
		a.qp_state = s.state;
		need(ctx.modify_qp(qp.handle, a, s.mask), "modify_qp");
		std::printf("modified QP handle=%u to %s\n", qp.handle, qp_state(s.state));
	}
	QpQuery q = need(ctx.query_qp(qp.handle), "query_qp");
	std::printf("queried QP handle=%u state=%s dest_qpn=%u path_mtu=%u\n",
		    qp.handle, qp_state(q.attr.qp_state), q.attr.dest_qp_num,
		    q.attr.path_mtu);
	if (q.attr.qp_state != UABI_QPS_RTS)
		fail("QP state check", EPROTO);

	// A second QP created straight into RTS, with its PD and CQ, in one
	// message; connected to the first QP.
	Chain chain(UABI_MSG_F_ALL_OR_NOTHING);
	auto pd2 = chain.alloc_pd();
	auto cq2 = chain.create_cq({.cqe = 16});
	uabi_qp_attr a2 = connect_attr(qp.resp.qpn, port, gid);
	a2.qp_state = UABI_QPS_RTS;
	auto qp2 = chain.create_qp({.pd = pd2, .send_cq = cq2, .recv_cq = cq2,
				    .init = rc_init(), .attr = a2,
				    .attr_mask = kInitMask | kRtrMask | kRtsMask});
	need(chain.execute(ctx), "chain PD+CQ+QP(RTS)");
	Handle pd2h = need(chain.handle(pd2), "chain PD");
	CqInfo cq2i = need(chain.get(cq2), "chain CQ");
	QpInfo qp2i = need(chain.get(qp2), "chain QP");
	std::printf("chain created PD handle=%u, CQ handle=%u, QP handle=%u qpn=%u state=%s\n",
		    pd2h, cq2i.handle, qp2i.handle, qp2i.resp.qpn,
		    qp_state(qp2i.resp.state));
	QpQuery q2 = need(ctx.query_qp(qp2i.handle), "query_qp (chain QP)");
	std::printf("queried QP handle=%u state=%s\n", qp2i.handle,
		    qp_state(q2.attr.qp_state));
	if (q2.attr.qp_state != UABI_QPS_RTS)
		fail("chain QP state check", EPROTO);

	uabi_counters during = need(ctx.counters(), "counters");
	print_counters("with objects", during);

	need(ctx.destroy_qp(qp2i.handle), "destroy_qp");
	need(ctx.destroy_cq(cq2i.handle), "destroy_cq");
	need(ctx.dealloc_pd(pd2h), "dealloc_pd");
	std::printf("destroyed chain QP, CQ, PD\n");
	need(ctx.destroy_qp(qp.handle), "destroy_qp");
	need(ctx.destroy_cq(cq.handle), "destroy_cq");
	need(ctx.dereg_mr(mr.handle), "dereg_mr");
	need(ctx.dealloc_pd(pd), "dealloc_pd");
	std::printf("destroyed QP, CQ, MR, PD\n");

	uabi_counters after = need(ctx.counters(), "counters");
	print_counters("after", after);
	if (std::memcmp(before.device, after.device, sizeof(before.device)) != 0) {
		std::fprintf(stderr, "uabi-demo: device object counters did not return "
				     "to their starting values\n");
		return 1;
	}
	std::printf("ok\n");
	return 0;
}
