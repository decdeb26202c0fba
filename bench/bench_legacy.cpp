// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The old path (rdma-core 44 write-mode bytes -> translator -> in-process
// core) against the new path (newapi Context -> in-process core), verb by
// verb, and the translation step alone (legacy bytes -> new-uAPI message,
// not executed).  Targets (docs/legacy-abi.md): old <= 1.05 x new,
// translation <= 100 ns per command.
#include <uabi/legacy.hpp>
#include <uabi/legacy_encoder.hpp>
#include <uabi/legacy_ofed.h>

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>

using namespace uabi;
using namespace uabi::legacy;

namespace
{

struct Old {
	std::unique_ptr<Translator> t;
	std::unique_ptr<Encoder> e;
	int async_fd = -1;
	explicit Old(Dialect d = Dialect::Upstream)
	{
		auto r = Translator::open(Backend::Inproc, d);
		if (!r)
			std::abort();
		t = std::move(*r);
		e = std::make_unique<Encoder>(*t);
		auto c = e->get_context();
		if (!c)
			std::abort();
		async_fd = c->async_fd;
	}
	~Old() { close(async_fd); }
};

struct New {
	std::unique_ptr<Context> c;
	New()
	{
		auto r = Context::open(Backend::Inproc);
		if (!r)
			std::abort();
		c = std::make_unique<Context>(std::move(*r));
		if (!c->create_async_event_queue())
			std::abort();
	}
};

template <class R> void must(const R &r, benchmark::State &s)
{
	if (!r.ok())
		s.SkipWithError(std::strerror(r.error()));
}

char g_buf[1 << 16];

ibv_qp_cap cap()
{
	ibv_qp_cap c{};
	c.max_send_wr = c.max_recv_wr = 16;
	c.max_send_sge = c.max_recv_sge = 1;
	return c;
}

uabi_qp_init new_init()
{
	uabi_qp_init i{};
	i.qp_type = UABI_QPT_RC;
	i.cap.max_send_wr = i.cap.max_recv_wr = 16;
	i.cap.max_send_sge = i.cap.max_recv_sge = 1;
	return i;
}

// ---------------------------------------------------------------- PD

void BM_Old_PdAllocDealloc(benchmark::State &s)
{
	Old o;
	for (auto _ : s) {
		auto pd = o.e->alloc_pd();
		must(o.e->dealloc_pd(*pd), s);
	}
}
BENCHMARK(BM_Old_PdAllocDealloc);

void BM_New_PdAllocDealloc(benchmark::State &s)
{
	New n;
	for (auto _ : s) {
		auto pd = n.c->alloc_pd();
		must(n.c->dealloc_pd(*pd), s);
	}
}
BENCHMARK(BM_New_PdAllocDealloc);

// ---------------------------------------------------------------- MR

void BM_Old_MrRegDereg(benchmark::State &s)
{
	Old o;
	Handle pd = *o.e->alloc_pd();
	for (auto _ : s) {
		auto mr =
		    o.e->reg_mr(pd, g_buf, sizeof(g_buf), reinterpret_cast<std::uintptr_t>(g_buf),
				IBV_ACCESS_LOCAL_WRITE);
		must(o.e->dereg_mr(mr->handle), s);
	}
}
BENCHMARK(BM_Old_MrRegDereg);

void BM_New_MrRegDereg(benchmark::State &s)
{
	New n;
	Handle pd = *n.c->alloc_pd();
	for (auto _ : s) {
		auto mr = n.c->reg_mr(pd, g_buf, sizeof(g_buf), IBV_ACCESS_LOCAL_WRITE);
		must(n.c->dereg_mr(mr->handle), s);
	}
}
BENCHMARK(BM_New_MrRegDereg);

// ---------------------------------------------------------------- CQ

void BM_Old_CqCreateDestroy(benchmark::State &s)
{
	Old o;
	for (auto _ : s) {
		auto cq = o.e->create_cq(64, -1, 0, 0);
		must(o.e->destroy_cq(cq->handle), s);
	}
}
BENCHMARK(BM_Old_CqCreateDestroy);

void BM_New_CqCreateDestroy(benchmark::State &s)
{
	New n;
	for (auto _ : s) {
		auto cq = n.c->create_cq(64);
		must(n.c->destroy_cq(cq->handle), s);
	}
}
BENCHMARK(BM_New_CqCreateDestroy);

// ---------------------------------------------------------------- QP

void BM_Old_QpCreateModifyDestroy(benchmark::State &s)
{
	Old o;
	Handle pd = *o.e->alloc_pd();
	Handle cq = o.e->create_cq(64, -1, 0, 0)->handle;
	LegacyQpInit li;
	li.pd = pd;
	li.send_cq = li.recv_cq = cq;
	li.cap = cap();
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	for (auto _ : s) {
		auto qp = o.e->create_qp(li);
		must(o.e->modify_qp(qp->handle, a, mask), s);
		must(o.e->destroy_qp(qp->handle), s);
	}
}
BENCHMARK(BM_Old_QpCreateModifyDestroy);

void BM_New_QpCreateModifyDestroy(benchmark::State &s)
{
	New n;
	Handle pd = *n.c->alloc_pd();
	Handle cq = n.c->create_cq(64)->handle;
	QpCreate qc;
	qc.pd = pd;
	qc.send_cq = qc.recv_cq = cq;
	qc.init = new_init();
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_INIT;
	a.port_num = 1;
	const std::uint32_t mask =
	    UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS;
	for (auto _ : s) {
		auto qp = n.c->create_qp(qc);
		must(n.c->modify_qp(qp->handle, a, mask), s);
		must(n.c->destroy_qp(qp->handle), s);
	}
}
BENCHMARK(BM_New_QpCreateModifyDestroy);

// -------------------------------------------------------------- XRCD

void BM_Old_XrcdOpenClose(benchmark::State &s)
{
	Old o;
	for (auto _ : s) {
		auto x = o.e->open_xrcd(-1, O_CREAT);
		must(o.e->close_xrcd(*x), s);
	}
}
BENCHMARK(BM_Old_XrcdOpenClose);

void BM_New_XrcdOpenClose(benchmark::State &s)
{
	New n;
	for (auto _ : s) {
		auto x = n.c->open_xrcd(-1, UABI_XRCD_O_CREAT);
		must(n.c->close_xrcd(*x), s);
	}
}
BENCHMARK(BM_New_XrcdOpenClose);

// OFED create_xrc_rcv_qp + unreg_xrc_rcv_qp against register(0xFFFFFFFF) +
// unregister on the new path.
void BM_Old_XrcRegisterUnregister(benchmark::State &s)
{
	Old o(Dialect::Ofed);
	Handle x = *o.e->ofed_open_xrc_domain(-1, O_CREAT);
	ibv_qp_cap c{};
	for (auto _ : s) {
		auto qpn = o.e->ofed_create_xrc_rcv_qp(x, c, false);
		must(o.e->ofed_unreg_xrc_rcv_qp(x, *qpn), s);
	}
}
BENCHMARK(BM_Old_XrcRegisterUnregister);

void BM_New_XrcRegisterUnregister(benchmark::State &s)
{
	New n;
	Handle x = *n.c->open_xrcd(-1, UABI_XRCD_O_CREAT);
	uabi_qp_init init{};
	init.qp_type = UABI_QPT_XRC_RECV;
	for (auto _ : s) {
		std::uint32_t qpn = UABI_XRC_QPN_CREATE;
		must(n.c->register_xrc_rcv_qp(x, qpn, init), s);
		must(n.c->unregister_xrc_rcv_qp(x, qpn), s);
	}
}
BENCHMARK(BM_New_XrcRegisterUnregister);

// ---------------------------------------------------- translation only

template <class T> struct Cmd {
	ib_uverbs_cmd_hdr hdr;
	T core;
};

template <class T> Cmd<T> cmd(std::uint32_t command, std::size_t resp_size, void *resp)
{
	Cmd<T> c{};
	c.hdr.command = command;
	c.hdr.in_words = std::uint16_t(sizeof(c) / 4);
	c.hdr.out_words = std::uint16_t(resp_size / 4);
	(void)resp;
	return c;
}

void BM_Translate_AllocPd(benchmark::State &s)
{
	Old o;
	ib_uverbs_alloc_pd_resp resp;
	auto c = cmd<ib_uverbs_alloc_pd>(IB_USER_VERBS_CMD_ALLOC_PD, sizeof(resp), &resp);
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_AllocPd);

void BM_Translate_RegMr(benchmark::State &s)
{
	Old o;
	ib_uverbs_reg_mr_resp resp;
	auto c = cmd<ib_uverbs_reg_mr>(IB_USER_VERBS_CMD_REG_MR, sizeof(resp), &resp);
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	c.core.start = c.core.hca_va = reinterpret_cast<std::uintptr_t>(g_buf);
	c.core.length = sizeof(g_buf);
	c.core.pd_handle = 2;
	c.core.access_flags = IBV_ACCESS_LOCAL_WRITE;
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_RegMr);

void BM_Translate_CreateCq(benchmark::State &s)
{
	Old o;
	ib_uverbs_create_cq_resp resp;
	auto c = cmd<ib_uverbs_create_cq>(IB_USER_VERBS_CMD_CREATE_CQ, sizeof(resp), &resp);
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	c.core.cqe = 64;
	c.core.comp_channel = -1;
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_CreateCq);

void BM_Translate_CreateQp(benchmark::State &s)
{
	Old o;
	ib_uverbs_create_qp_resp resp;
	auto c = cmd<ib_uverbs_create_qp>(IB_USER_VERBS_CMD_CREATE_QP, sizeof(resp), &resp);
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	c.core.pd_handle = 2;
	c.core.send_cq_handle = c.core.recv_cq_handle = 3;
	c.core.max_send_wr = c.core.max_recv_wr = 16;
	c.core.max_send_sge = c.core.max_recv_sge = 1;
	c.core.qp_type = IBV_QPT_RC;
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_CreateQp);

void BM_Translate_ModifyQp(benchmark::State &s)
{
	Old o;
	auto c = cmd<ib_uverbs_modify_qp>(IB_USER_VERBS_CMD_MODIFY_QP, 0, nullptr);
	c.core.qp_handle = 4;
	c.core.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	c.core.qp_state = IBV_QPS_RTR;
	c.core.dest.port_num = 1;
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_ModifyQp);

void BM_Translate_DestroyQp(benchmark::State &s)
{
	Old o;
	ib_uverbs_destroy_qp_resp resp;
	auto c = cmd<ib_uverbs_destroy_qp>(IB_USER_VERBS_CMD_DESTROY_QP, sizeof(resp), &resp);
	c.core.response = reinterpret_cast<std::uintptr_t>(&resp);
	c.core.qp_handle = 4;
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_DestroyQp);

void BM_Translate_OfedCreateXrcRcvQp(benchmark::State &s)
{
	Old o(Dialect::Ofed);
	uabi_ofed_create_xrc_rcv_qp c{};
	uabi_ofed_create_xrc_rcv_qp_resp resp;
	c.hdr.command = UABI_OFED_CMD_CREATE_XRC_RCV_QP;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.response = reinterpret_cast<std::uintptr_t>(&resp);
	c.xrc_domain_handle = 2;
	for (auto _ : s)
		benchmark::DoNotOptimize(o.t->translate_only(&c, sizeof(c)));
}
BENCHMARK(BM_Translate_OfedCreateXrcRcvQp);

} // namespace

BENCHMARK_MAIN();
