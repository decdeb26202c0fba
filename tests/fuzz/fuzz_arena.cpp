// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libFuzzer target: the writable part of a user's arena is hostile input
// (docs/security.md).  Each input runs on a fresh in-process context with a
// connected RC pair, a CQ, an SRQ and an MR, the arena mapped as a client
// maps it; the input is a program of steps: write bytes anywhere in the
// writable part, run control calls that read it back (CQ resize, SRQ
// growth and limit, QP state changes, destroys, the driver's arena calls
// with any number), and data-path operations (sends, RDMA, receives, polls)
// that read it too.  Under ASan and UBSan nothing may crash, read or write
// out of bounds, leak, or hang; the context's close frees everything.
//
// One thing is left out of the writable part's hostility: a lock word equal
// to this process's pid is cleared before a data-path step.  The data path
// trusts the processes of its own user (docs/security.md) and waits for a
// live holder, which here could only be itself.
#include <rdma/uabi_sw.h>
#include <uabi/client.hpp>
#include <uabi/sw/provider.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unistd.h>

using namespace uabi;

namespace {

struct Reader {
	const std::uint8_t *p;
	std::size_t n;
	bool empty() const { return n == 0; }
	std::uint8_t u8()
	{
		if (!n)
			return 0;
		n--;
		return *p++;
	}
	std::uint32_t u32()
	{
		std::uint32_t v = 0;
		for (int i = 0; i < 4; i++)
			v |= std::uint32_t(u8()) << (8 * i);
		return v;
	}
	std::uint64_t u64() { return std::uint64_t(u32()) | std::uint64_t(u32()) << 32; }
};

struct Setup {
	explicit Setup(Context c) : ctx(std::move(c)) {}
	Context ctx;
	Handle pd = 0;
	CqInfo cq{};
	SrqInfo srq{};
	QpInfo qa{}, qb{};
	MrInfo mr{};
	std::uint32_t srq_slot = 0;
	std::unique_ptr<sw::Device> dev;
	std::unique_ptr<sw::Cq> dcq;
	std::unique_ptr<sw::Srq> dsrq;
	std::unique_ptr<sw::Qp> da, db;
	alignas(64) std::uint8_t buf[1 << 16]{};
};

bool connect(Context &ctx, Handle qp, std::uint32_t dest)
{
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = 0xf;
	bool ok = ctx.modify_qp(qp, a, UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
					       UABI_QP_ACCESS_FLAGS)
			  .ok();
	a = {};
	a.qp_state = UABI_QPS_RTR;
	a.path_mtu = 5;
	a.dest_qp_num = dest;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	ok = ok && ctx.modify_qp(qp, a, UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU |
					       UABI_QP_DEST_QPN | UABI_QP_RQ_PSN |
					       UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER)
			     .ok();
	a = {};
	a.qp_state = UABI_QPS_RTS;
	a.timeout = 1;	/* a short retry budget: a peer gone is learnt fast */
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 4;
	return ok && ctx.modify_qp(qp, a, UABI_QP_STATE | UABI_QP_TIMEOUT | UABI_QP_RETRY_CNT |
						  UABI_QP_RNR_RETRY | UABI_QP_SQ_PSN |
						  UABI_QP_MAX_QP_RD_ATOMIC)
			     .ok();
}

int driver_call(Context &ctx, std::uint16_t method, std::uint16_t attr, std::uint32_t v)
{
	Command c(UABI_SW_OBJ_ARENA, method);
	c.add_in(attr, v);
	auto r = ctx.call(std::move(c));
	return r ? 0 : r.error();
}

std::unique_ptr<Setup> make_setup()
{
	auto c = Context::open(Backend::Inproc);
	if (!c)
		abort();
	auto s = std::make_unique<Setup>(std::move(*c));
	Context &ctx = s->ctx;
	s->pd = ctx.alloc_pd().value();
	s->cq = ctx.create_cq(15).value();
	SrqCreate sc;
	sc.pd = s->pd;
	sc.init.attr.max_wr = 8;
	sc.init.attr.max_sge = 2;
	s->srq = ctx.create_srq(sc).value();
	QpCreate qc;
	qc.pd = s->pd;
	qc.send_cq = s->cq.handle;
	qc.recv_cq = s->cq.handle;
	qc.init.qp_type = UABI_QPT_RC;
	qc.init.cap.max_send_wr = 8;
	qc.init.cap.max_recv_wr = 8;
	qc.init.cap.max_send_sge = 2;
	qc.init.cap.max_recv_sge = 2;
	s->qa = ctx.create_qp(qc).value();
	qc.srq = s->srq.handle;
	qc.init.cap.max_recv_wr = 0;
	s->qb = ctx.create_qp(qc).value();
	if (!connect(ctx, s->qa.handle, s->qb.resp.qpn) || !connect(ctx, s->qb.handle, s->qa.resp.qpn))
		abort();
	s->mr = ctx.reg_mr(s->pd, s->buf, sizeof(s->buf), 0xf).value();

	Command m(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_MAP);
	OutAttr fo = m.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_FD, kMandatory | UABI_ATTR_F_FD);
	OutAttr ro = m.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_RW_FD, kMandatory | UABI_ATTR_F_FD);
	OutAttr io = m.add_out<uabi_sw_arena_info>(UABI_SW_ATTR_ARENA_INFO);
	auto r = ctx.call(std::move(m));
	std::int32_t fd = -1, rw = -1;
	uabi_sw_arena_info info{};
	if (!r || !r->read(0, fo, fd) || !r->read(0, ro, rw) || !r->read(0, io, info))
		abort();
	Setup *raw = s.get();
	// In-process the fds are the host's: not ours to close.
	s->dev = sw::Device::map(fd, rw, info, [raw](sw::Notice what, std::uint32_t n) {
		static const std::pair<std::uint16_t, std::uint16_t> calls[] = {
			{UABI_SW_ARENA_NOTIFY_CQ, UABI_SW_ATTR_CQN},
			{UABI_SW_ARENA_SRQ_LIMIT, UABI_SW_ATTR_SRQ_SLOT},
			{UABI_SW_ARENA_CQ_ERROR, UABI_SW_ATTR_CQN},
			{UABI_SW_ARENA_QP_ERROR, UABI_SW_ATTR_QPN}};
		auto [method, attr] = calls[int(what)];
		return driver_call(raw->ctx, method, attr, n);
	});
	if (!s->dev)
		abort();
	Command l(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_LOCATE_SRQ);
	l.add_in(UABI_SW_ATTR_SRQ, s->srq.handle);
	OutAttr lo = l.add_out<std::uint32_t>(UABI_SW_ATTR_SRQ_SLOT);
	auto lr = ctx.call(std::move(l));
	if (!lr || !lr->read(0, lo, s->srq_slot))
		abort();
	s->dcq = std::make_unique<sw::Cq>(*s->dev, s->cq.cqn);
	s->dsrq = std::make_unique<sw::Srq>(*s->dev, s->srq_slot);
	sw::QpCaps caps;
	caps.max_send_wr = 8;
	caps.max_send_sge = 2;
	caps.max_inline_data = 64;
	s->da = std::make_unique<sw::Qp>(*s->dev, s->qa.resp.qpn, UABI_QPT_RC, s->dcq.get(),
					 s->dcq.get(), nullptr, caps);
	s->db = std::make_unique<sw::Qp>(*s->dev, s->qb.resp.qpn, UABI_QPT_RC, s->dcq.get(),
					 s->dcq.get(), s->dsrq.get(), caps);
	return s;
}

// Lock words holding this process's pid: see the header.  (Only those of
// the objects the data path uses here.)
void clear_own_locks(Setup &s)
{
	const std::uint32_t me = std::uint32_t(getpid());
	auto fix = [me](std::uint32_t *w) {
		if (w && __atomic_load_n(w, __ATOMIC_RELAXED) == me)
			__atomic_store_n(w, 0u, __ATOMIC_RELAXED);
	};
	fix(s.dev->atomic_lock());
	fix(&s.dev->qp_rw(s.qa.resp.qpn)->rq_lock);
	fix(&s.dev->qp_rw(s.qb.resp.qpn)->rq_lock);
	fix(&s.dev->cq_rw(s.cq.cqn)->lock);
	fix(&s.dev->srq_rw(s.srq_slot)->lock);
}

void step(Setup &s, Reader &r)
{
	Context &ctx = s.ctx;
	const uabi_sw_arena_info &info = s.dev->info();
	switch (r.u8() % 12) {
	case 0:
	case 1: { // bytes anywhere in the writable part, often in the tables
		std::uint64_t off = r.u8() & 1 ? r.u32() % info.heap_off : r.u64() % info.rw_size;
		std::uint32_t len = r.u8() % 17;
		for (std::uint32_t k = 0; k < len && off + k < info.rw_size; k++)
			s.dev->at(off + k)[0] = r.u8();
		break;
	}
	case 2:
		(void)ctx.resize_cq(s.cq.handle, 1 + r.u8() % 64);
		break;
	case 3: {
		uabi_srq_attr a{};
		a.max_wr = 1 + r.u8() % 64;
		a.srq_limit = r.u8() % 8;
		(void)ctx.modify_srq(s.srq.handle, a, 1 + r.u8() % 3);
		break;
	}
	case 4: {
		uabi_qp_attr a{};
		a.qp_state = r.u8() % 7;
		(void)ctx.modify_qp(r.u8() & 1 ? s.qa.handle : s.qb.handle, a, UABI_QP_STATE);
		break;
	}
	case 5: { // the arena's driver calls, with any number
		static const std::pair<std::uint16_t, std::uint16_t> calls[] = {
			{UABI_SW_ARENA_NOTIFY_CQ, UABI_SW_ATTR_CQN},
			{UABI_SW_ARENA_SRQ_LIMIT, UABI_SW_ATTR_SRQ_SLOT},
			{UABI_SW_ARENA_CQ_ERROR, UABI_SW_ATTR_CQN},
			{UABI_SW_ARENA_QP_ERROR, UABI_SW_ATTR_QPN}};
		auto [method, attr] = calls[r.u8() % 4];
		std::uint32_t n = r.u8() & 1 ? r.u32() : (attr == UABI_SW_ATTR_QPN ? s.qb.resp.qpn : r.u8() % 4);
		(void)driver_call(ctx, method, attr, n);
		break;
	}
	case 6:
	case 7: { // a send, RDMA or atomic from qa
		clear_own_locks(s);
		sw::Sge sg{reinterpret_cast<std::uint64_t>(s.buf) + r.u8() * 64u, r.u8(), s.mr.lkey};
		sw::SendWr wr;
		wr.opcode = r.u8() % 7;
		wr.send_flags = sw::kSendSignaled | (r.u8() & sw::kSendInline);
		wr.sg_list = &sg;
		wr.num_sge = r.u8() % 2;
		wr.remote_addr = reinterpret_cast<std::uint64_t>(s.buf) + r.u8() * 64u;
		wr.rkey = r.u8() & 1 ? s.mr.rkey : r.u32();
		wr.compare_add = r.u64();
		(void)s.da->post_send(wr);
		break;
	}
	case 8: { // receives
		clear_own_locks(s);
		sw::Sge sg{reinterpret_cast<std::uint64_t>(s.buf) + r.u8() * 128u, r.u8(), s.mr.lkey};
		(void)s.dsrq->post_recv(r.u8(), &sg, 1);
		(void)s.da->post_recv(r.u8(), &sg, 1);
		break;
	}
	case 9: { // polls
		clear_own_locks(s);
		s.dcq->refresh();
		(void)s.dcq->poll(16, [](const sw::Cqe &) {});
		s.dev->progress();
		break;
	}
	case 10:
		clear_own_locks(s);
		s.da->state_changed();
		s.db->flush_if_error();
		break;
	case 11: { // the QP pair back to RTS
		for (Handle h : {s.qa.handle, s.qb.handle}) {
			uabi_qp_attr a{};
			a.qp_state = UABI_QPS_RESET;
			(void)ctx.modify_qp(h, a, UABI_QP_STATE);
		}
		clear_own_locks(s);
		s.da->state_changed();
		s.db->state_changed();
		(void)connect(ctx, s.qa.handle, s.qb.resp.qpn);
		(void)connect(ctx, s.qb.handle, s.qa.resp.qpn);
		break;
	}
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	auto s = make_setup();
	Reader r{data, size};
	for (int i = 0; i < 256 && !r.empty(); i++)
		step(*s, r);
	// Tear down as a process would: data path objects, the mapping, then
	// the context (which destroys every object, whatever the arena says).
	s->da.reset();
	s->db.reset();
	s->dsrq.reset();
	s->dcq.reset();
	s->dev.reset();
	return 0;
}
