// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The control path, verb by verb, three ways on the same backend:
//
//   new        newapi Context, one message per call
//   legacy     the bytes rdma-core 44 wrote in write() mode (Encoder) run by
//              the legacy Translator over the same backend
//   chain:N    newapi Chain: N creates in one message, N destroys in a second
//
// on the in-process core and on uabid (and on the kernel module, in the
// qemu guest of scripts/bench.sh: UABI_BENCH_BACKENDS).  And the cmtime scenario: 1000
// connected RC QP pairs set up (create, INIT, RTR, RTS with each other's
// qpn) and torn down, with single calls and with chains.
//
// Every variant creates a batch of objects and then destroys them; `new` and
// `legacy` do it with kSingleBatch single calls each way, measured side by
// side in one benchmark (`pair`), `chain:N` with one message each way.
// Counters are per object: create_ns (the create message or calls,
// including the modifies to RTS for a QP), destroy_ns and op_ns (both), in
// wall-clock time (the daemon's work is in another process), and the same
// in this thread's CPU time (*_cpu_ns).
// Nothing here asserts a time; scripts/bench.sh turns the JSON into
// docs/bench.md.
//
// Uses $UABI_SOCKET if set, else a daemon of its own in a temporary
// directory, stopped at the end.
#include <uabi/client.hpp>
#include <uabi/legacy.hpp>
#include <uabi/legacy_encoder.hpp>
#include <uabi/legacy_ofed.h>
#include <rdma/uabi_sw.h>

#include "bench_progress.hpp"

#include "bench_daemon.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace
{

using namespace uabi;
using Clock = std::chrono::steady_clock;

// Single calls are timed over a batch of this many objects (so the clock
// reads cost nothing, and the core holds as many objects as a chain's).
constexpr int kSingleBatch = 100;
constexpr int kChainLens[] = {1, 8, 32, 100, 256, 1000};
constexpr int kCmtimePairs = 1000;
// Connections per chain in the cmtime scenario: a chain of creates + INIT
// modifies holds 2 commands per QP (UABI_MAX_CHAIN_CMDS is 1024).
constexpr int kCmtimeBatch = 250;

uabi_bench::PrivateDaemon g_daemon;
bool g_failed = false;

// Any failure makes the exit status non-zero (the ctest smoke run).
void fail(benchmark::State &st, const char *what)
{
	g_failed = true;
	st.SkipWithError(what);
}

enum class Verb { Pd, Mr4k, Mr1m, Cq, Qp, Xrcd, XrcReg };

struct VerbInfo {
	Verb v;
	const char *name;
};
constexpr VerbInfo kVerbs[] = {
    {Verb::Pd, "pd"}, {Verb::Mr4k, "mr_4k"}, {Verb::Mr1m, "mr_1m"},	{Verb::Cq, "cq"},
    {Verb::Qp, "qp"}, {Verb::Xrcd, "xrcd"},  {Verb::XrcReg, "xrc_reg"},
};

// Commands per object in a chain of creates: a QP is created and then
// modified to INIT, RTR and RTS.  A chain of N objects is measured when its
// N × this many commands fit one message (UABI_MAX_CHAIN_CMDS).
int cmds_per_object(Verb v)
{
	return v == Verb::Qp ? 4 : 1;
}

alignas(4096) char g_buf[1 << 20];

std::size_t mr_len(Verb v)
{
	return v == Verb::Mr4k ? 4096 : sizeof(g_buf);
}

// One created object: its handle and, for XRC receive QPs, its number.
struct Obj {
	Handle h = 0;
	std::uint32_t qpn = 0;
};

// ------------------------------------------------------- QP attributes

constexpr std::uint32_t kAccess = 1 | 2 | 4; // LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ
constexpr std::uint32_t kInitMask =
    UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS;
constexpr std::uint32_t kRtrMask = UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU |
				   UABI_QP_DEST_QPN | UABI_QP_RQ_PSN | UABI_QP_MAX_DEST_RD_ATOMIC |
				   UABI_QP_MIN_RNR_TIMER;
constexpr std::uint32_t kRtsMask = UABI_QP_STATE | UABI_QP_SQ_PSN | UABI_QP_TIMEOUT |
				   UABI_QP_RETRY_CNT | UABI_QP_RNR_RETRY | UABI_QP_MAX_QP_RD_ATOMIC;
// The software device does not check that the destination exists: the
// per-verb benchmarks connect every QP to this number.
constexpr std::uint32_t kSomeQpn = 0x42;

uabi_qp_attr init_attr()
{
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = kAccess;
	return a;
}

uabi_qp_attr rtr_attr(std::uint32_t dest)
{
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_RTR;
	a.path_mtu = 3; // 1024
	a.dest_qp_num = dest;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	return a;
}

uabi_qp_attr rts_attr()
{
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_RTS;
	a.sq_psn = 0x321;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return a;
}

// The same three steps in the legacy ABI's terms (struct ibv_qp_attr).
ibv_qp_attr legacy_attr(const uabi_qp_attr &u)
{
	ibv_qp_attr a{};
	a.qp_state = ibv_qp_state(u.qp_state);
	a.path_mtu = ibv_mtu(u.path_mtu);
	a.dest_qp_num = u.dest_qp_num;
	a.rq_psn = u.rq_psn;
	a.sq_psn = u.sq_psn;
	a.qp_access_flags = int(u.qp_access_flags);
	a.max_dest_rd_atomic = u.max_dest_rd_atomic;
	a.max_rd_atomic = u.max_rd_atomic;
	a.min_rnr_timer = u.min_rnr_timer;
	a.port_num = u.port_num;
	a.timeout = u.timeout;
	a.retry_cnt = u.retry_cnt;
	a.rnr_retry = u.rnr_retry;
	a.ah_attr.dlid = u.ah_attr.dlid;
	a.ah_attr.port_num = u.ah_attr.port_num;
	return a;
}

uabi_qp_init rc_init()
{
	uabi_qp_init i{};
	i.qp_type = UABI_QPT_RC;
	i.cap.max_send_wr = i.cap.max_recv_wr = 16;
	i.cap.max_send_sge = i.cap.max_recv_sge = 1;
	return i;
}

// ------------------------------------------------------------ backends

std::unique_ptr<Context> open_ctx(Backend b)
{
	auto r = Context::open(b);
	if (!r)
		return nullptr;
	auto c = std::make_unique<Context>(std::move(*r));
	// As GET_CONTEXT does on the legacy side.
	if (!c->create_async_event_queue())
		return nullptr;
	return c;
}

// The new path: a context and the objects the verbs hang off.
struct NewSide {
	std::unique_ptr<Context> c;
	Handle pd = 0, cq = 0, xrcd = 0;

	bool open(Backend b)
	{
		c = open_ctx(b);
		if (!c)
			return false;
		auto p = c->alloc_pd();
		auto q = c->create_cq(256);
		auto x = c->open_xrcd(-1, UABI_XRCD_O_CREAT);
		if (!p || !q || !x)
			return false;
		pd = *p;
		cq = q->handle;
		xrcd = *x;
		return true;
	}

	QpCreate qp_create() const
	{
		QpCreate qc;
		qc.pd = pd;
		qc.send_cq = qc.recv_cq = cq;
		qc.init = rc_init();
		return qc;
	}

	int create(Verb v, Obj &o)
	{
		switch (v) {
		case Verb::Pd: {
			auto r = c->alloc_pd();
			o.h = r.value_or(0);
			return r.error();
		}
		case Verb::Mr4k:
		case Verb::Mr1m: {
			auto r = c->reg_mr(pd, g_buf, mr_len(v), kAccess);
			if (r)
				o.h = r->handle;
			return r.error();
		}
		case Verb::Cq: {
			auto r = c->create_cq(64);
			if (r)
				o.h = r->handle;
			return r.error();
		}
		case Verb::Qp: {
			auto r = c->create_qp(qp_create());
			if (!r)
				return r.error();
			o.h = r->handle;
			if (auto e = c->modify_qp(o.h, init_attr(), kInitMask); !e)
				return e.error();
			if (auto e = c->modify_qp(o.h, rtr_attr(kSomeQpn), kRtrMask); !e)
				return e.error();
			return c->modify_qp(o.h, rts_attr(), kRtsMask).error();
		}
		case Verb::Xrcd: {
			auto r = c->open_xrcd(-1, UABI_XRCD_O_CREAT);
			o.h = r.value_or(0);
			return r.error();
		}
		case Verb::XrcReg: {
			o.qpn = UABI_XRC_QPN_CREATE;
			uabi_qp_init init{};
			init.qp_type = UABI_QPT_XRC_RECV;
			auto r = c->register_xrc_rcv_qp(xrcd, o.qpn, init);
			o.h = r.value_or(0);
			return r.error();
		}
		}
		return EINVAL;
	}

	int destroy(Verb v, const Obj &o)
	{
		switch (v) {
		case Verb::Pd:
			return c->dealloc_pd(o.h).error();
		case Verb::Mr4k:
		case Verb::Mr1m:
			return c->dereg_mr(o.h).error();
		case Verb::Cq:
			return c->destroy_cq(o.h).error();
		case Verb::Qp:
			return c->destroy_qp(o.h).error();
		case Verb::Xrcd:
			return c->close_xrcd(o.h).error();
		case Verb::XrcReg:
			return c->unregister_xrc_rcv_qp(xrcd, o.qpn).error();
		}
		return EINVAL;
	}

	// One message creating n objects (for a QP: create + INIT + RTR + RTS).
	int chain_create(Verb v, int n, std::vector<Obj> &out)
	{
		Chain ch;
		std::vector<ChainRef> refs;
		std::vector<OutAttr> outs; // XRC: where each QP number comes back
		refs.reserve(std::size_t(n));
		for (int i = 0; i < n; i++) {
			switch (v) {
			case Verb::Pd:
				refs.push_back(ch.alloc_pd());
				break;
			case Verb::Mr4k:
			case Verb::Mr1m: {
				refs.push_back(ch.reg_mr(pd, g_buf, mr_len(v), kAccess));
				break;
			}
			case Verb::Cq:
				refs.push_back(ch.create_cq({.cqe = 64}));
				break;
			case Verb::Qp: {
				auto p = ch.create_qp(qp_create());
				ch.modify_qp(p, init_attr(), kInitMask);
				ch.modify_qp(p, rtr_attr(kSomeQpn), kRtrMask);
				ch.modify_qp(p, rts_attr(), kRtsMask);
				refs.push_back(p);
				break;
			}
			case Verb::Xrcd:
				refs.push_back(ch.open_xrcd(-1, UABI_XRCD_O_CREAT));
				break;
			case Verb::XrcReg: {
				Command c(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP, xrcd);
				outs.push_back(
				    c.add_inout(UABI_ATTR_XRCD_QPN, UABI_XRC_QPN_CREATE));
				uabi_qp_init init{};
				init.qp_type = UABI_QPT_XRC_RECV;
				c.add_in(UABI_ATTR_XRCD_QP_INIT, init);
				refs.push_back(ch.add(std::move(c)));
				break;
			}
			}
		}
		if (auto r = ch.execute(*c); !r)
			return r.error();
		out.resize(std::size_t(n));
		for (int i = 0; i < n; i++) {
			auto h = ch.handle(refs[std::size_t(i)]);
			if (!h)
				return h.error();
			out[std::size_t(i)].h = *h;
			if (v == Verb::XrcReg)
				ch.message().read(refs[std::size_t(i)].index, outs[std::size_t(i)],
						  out[std::size_t(i)].qpn);
		}
		return 0;
	}

	int chain_destroy(Verb v, const std::vector<Obj> &objs)
	{
		static constexpr std::uint16_t kObject[] = {UABI_OBJ_PD,
							    UABI_OBJ_MR,
							    UABI_OBJ_MR,
							    UABI_OBJ_CQ,
							    UABI_OBJ_QP,
							    UABI_OBJ_XRCD,
							    0};
		Chain ch;
		for (const Obj &o : objs) {
			if (v == Verb::XrcReg) {
				Command c(UABI_OBJ_XRCD, UABI_XRCD_UNREG_RCV_QP, xrcd);
				c.add_in(UABI_ATTR_XRCD_QPN, o.qpn);
				ch.add(std::move(c));
			} else {
				ch.destroy(kObject[int(v)], o.h);
			}
		}
		return ch.execute(*c).error();
	}
};

// The legacy path: the write() bytes of rdma-core 44 through the
// translator, on a context of the same backend.  XRC receive QPs are the
// OFED 1.5 verbs (create_xrc_rcv_qp = register a new QP, unreg_xrc_rcv_qp).
struct OldSide {
	std::unique_ptr<legacy::Translator> t;
	std::unique_ptr<legacy::Encoder> e;
	int async_fd = -1;
	Handle pd = 0, cq = 0, xrcd = 0;

	~OldSide()
	{
		if (async_fd >= 0)
			close(async_fd);
	}

	bool open(Backend b, Verb v)
	{
		auto d = v == Verb::XrcReg ? legacy::Dialect::Ofed : legacy::Dialect::Upstream;
		auto r = legacy::Translator::open(b, d);
		if (!r)
			return false;
		t = std::move(*r);
		e = std::make_unique<legacy::Encoder>(*t);
		auto c = e->get_context();
		if (!c)
			return false;
		async_fd = c->async_fd;
		auto p = e->alloc_pd();
		auto q = e->create_cq(256, -1, 0, 0);
		if (!p || !q)
			return false;
		pd = *p;
		cq = q->handle;
		auto x = v == Verb::XrcReg ? e->ofed_open_xrc_domain(-1, O_CREAT)
					   : e->open_xrcd(-1, O_CREAT);
		if (!x)
			return false;
		xrcd = *x;
		return true;
	}

	int create(Verb v, Obj &o)
	{
		switch (v) {
		case Verb::Pd: {
			auto r = e->alloc_pd();
			o.h = r.value_or(0);
			return r.error();
		}
		case Verb::Mr4k:
		case Verb::Mr1m: {
			auto r = e->reg_mr(pd, g_buf, mr_len(v),
					   reinterpret_cast<std::uintptr_t>(g_buf), int(kAccess));
			if (r)
				o.h = r->handle;
			return r.error();
		}
		case Verb::Cq: {
			auto r = e->create_cq(64, -1, 0, 0);
			if (r)
				o.h = r->handle;
			return r.error();
		}
		case Verb::Qp: {
			legacy::LegacyQpInit li;
			li.pd = pd;
			li.send_cq = li.recv_cq = cq;
			li.cap.max_send_wr = li.cap.max_recv_wr = 16;
			li.cap.max_send_sge = li.cap.max_recv_sge = 1;
			auto r = e->create_qp(li);
			if (!r)
				return r.error();
			o.h = r->handle;
			if (auto x = e->modify_qp(o.h, legacy_attr(init_attr()), int(kInitMask));
			    !x)
				return x.error();
			if (auto x =
				e->modify_qp(o.h, legacy_attr(rtr_attr(kSomeQpn)), int(kRtrMask));
			    !x)
				return x.error();
			return e->modify_qp(o.h, legacy_attr(rts_attr()), int(kRtsMask)).error();
		}
		case Verb::Xrcd: {
			auto r = e->open_xrcd(-1, O_CREAT);
			o.h = r.value_or(0);
			return r.error();
		}
		case Verb::XrcReg: {
			ibv_qp_cap cap{};
			auto r = e->ofed_create_xrc_rcv_qp(xrcd, cap, false);
			o.qpn = r.value_or(0);
			return r.error();
		}
		}
		return EINVAL;
	}

	int destroy(Verb v, const Obj &o)
	{
		switch (v) {
		case Verb::Pd:
			return e->dealloc_pd(o.h).error();
		case Verb::Mr4k:
		case Verb::Mr1m:
			return e->dereg_mr(o.h).error();
		case Verb::Cq:
			return e->destroy_cq(o.h).error();
		case Verb::Qp:
			return e->destroy_qp(o.h).error();
		case Verb::Xrcd:
			return e->close_xrcd(o.h).error();
		case Verb::XrcReg:
			return e->ofed_unreg_xrc_rcv_qp(xrcd, o.qpn).error();
		}
		return EINVAL;
	}
};

double secs(Clock::duration d)
{
	return std::chrono::duration<double>(d).count();
}

double thread_cpu()
{
	timespec ts{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

long minor_faults()
{
	rusage u{};
	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt;
}

// Wall-clock time, this thread's CPU time (in-process that is all of the
// work, without the time other tasks of a loaded machine took the CPU
// away) and page faults of create steps and destroy steps, summed.
struct Meter {
	double tc = 0, td = 0, cc = 0, cd = 0;
	long faults = 0;

	// Runs create() then destroy(), each measured; 0 or an errno.  *secs
	// gets the wall-clock time of both.
	template <class Create, class Destroy>
	int run(Create &&create, Destroy &&destroy, double *both)
	{
		long f0 = minor_faults();
		double c0 = thread_cpu();
		auto t0 = Clock::now();
		int e1 = create();
		auto t1 = Clock::now();
		double c1 = thread_cpu();
		faults += minor_faults() - f0;
		int e2 = e1 ? 0 : destroy();
		auto t2 = Clock::now();
		double c2 = thread_cpu();
		tc += secs(t1 - t0);
		td += secs(t2 - t1);
		cc += c1 - c0;
		cd += c2 - c1;
		*both = secs(t2 - t0);
		return e1 ? e1 : e2;
	}

	// Per object (n per step), averaged over the iterations.
	void report(benchmark::State &st, int n, const std::string &prefix) const
	{
		using C = benchmark::Counter;
		auto per = [&](double v) { return C(v * 1e9 / n, C::kAvgIterations); };
		st.counters[prefix + "create_ns"] = per(tc);
		st.counters[prefix + "destroy_ns"] = per(td);
		st.counters[prefix + "op_ns"] = per(tc + td);
		st.counters[prefix + "create_cpu_ns"] = per(cc);
		st.counters[prefix + "op_cpu_ns"] = per(cc + cd);
		// In-process, the core's first touches of fresh arena pages land
		// in this process (uabid's are its own).
		st.counters[prefix + "faults"] = C(double(faults) / n, C::kAvgIterations);
	}
};

// Runs create() then destroy() per iteration, each timed; n objects each.
template <class Create, class Destroy>
void timed(benchmark::State &st, int n, Create &&create, Destroy &&destroy)
{
	Meter m;
	for (auto _ : st) {
		double both = 0;
		if (int e = m.run(create, destroy, &both)) {
			fail(st, std::strerror(e));
			break;
		}
		st.SetIterationTime(both);
	}
	st.counters["n"] = n;
	m.report(st, n, "");
}

// Creates and destroys kSingleBatch objects with single calls.
template <class Side> auto single_batch(Side &s, Verb v, std::vector<Obj> &objs)
{
	auto create = [&s, v, &objs] {
		for (Obj &o : objs)
			if (int e = s.create(v, o))
				return e;
		return 0;
	};
	auto destroy = [&s, v, &objs] {
		for (const Obj &o : objs)
			if (int e = s.destroy(v, o))
				return e;
		return 0;
	};
	return std::pair{create, destroy};
}

std::string verb_name(Verb v)
{
	for (const VerbInfo &vi : kVerbs)
		if (vi.v == v)
			return vi.name;
	return "?";
}

// The backends measured: UABI_BENCH_BACKENDS, a comma-separated list of
// inproc, daemon and kernel (default "inproc,daemon"; the kernel backend
// runs in the qemu guest of scripts/bench.sh).
std::vector<Backend> g_backends;

bool parse_backends()
{
	const char *env = std::getenv("UABI_BENCH_BACKENDS");
	std::string list = env && *env ? env : "inproc,daemon";
	for (std::size_t at = 0; at <= list.size();) {
		std::size_t end = list.find(',', at);
		if (end == std::string::npos)
			end = list.size();
		auto b = parse_backend(std::string_view(list).substr(at, end - at));
		if (!b || *b == Backend::Auto) {
			std::fprintf(stderr, "UABI_BENCH_BACKENDS: '%s' is not inproc, daemon or kernel\n",
				     list.c_str());
			return false;
		}
		g_backends.push_back(*b);
		at = end + 1;
	}
	return true;
}

// The new path and the legacy path, side by side: every iteration runs a
// batch of single calls on each (in alternating order), so that both see
// the same conditions (the machine's load, the daemon's polling state).
// Counters: the new path's as create_ns etc., the legacy path's as
// legacy_create_ns etc.
void BM_Pair(benchmark::State &st, Backend b, Verb v)
{
	uabi_bench::progress(std::string("ctl/") + backend_name(b) + "/" + verb_name(v) + "/pair");
	NewSide ns;
	OldSide os;
	if (!ns.open(b) || !os.open(b, v)) {
		fail(st, "cannot open the backend");
		return;
	}
	std::vector<Obj> nobjs(kSingleBatch), oobjs(kSingleBatch);
	auto [nc, nd] = single_batch(ns, v, nobjs);
	auto [oc, od] = single_batch(os, v, oobjs);
	Meter nm, om;
	bool legacy_first = false;
	for (auto _ : st) {
		double t1 = 0, t2 = 0;
		int e = legacy_first ? om.run(oc, od, &t1) : nm.run(nc, nd, &t1);
		if (!e)
			e = legacy_first ? nm.run(nc, nd, &t2) : om.run(oc, od, &t2);
		if (e) {
			fail(st, std::strerror(e));
			break;
		}
		legacy_first = !legacy_first;
		st.SetIterationTime(t1 + t2);
	}
	st.counters["n"] = kSingleBatch;
	nm.report(st, kSingleBatch, "");
	om.report(st, kSingleBatch, "legacy_");
}

void BM_Chain(benchmark::State &st, Backend b, Verb v, int n)
{
	uabi_bench::progress(std::string("ctl/") + backend_name(b) + "/" + verb_name(v) +
			     "/chain:" + std::to_string(n));
	NewSide s;
	if (!s.open(b)) {
		fail(st, "cannot open the backend");
		return;
	}
	std::vector<Obj> objs;
	timed(
	    st, n, [&] { return s.chain_create(v, n, objs); },
	    [&] { return s.chain_destroy(v, objs); });
}

// ------------------------------------------------------- arena warm-up

// The software device's rings (CQs, receive queues) come from a heap in
// the device's shared memory (first fit, docs/datapath.md).  On a fresh
// arena every new ring lands on pages never touched, which the host must
// fault in (a memfd: zeroed pages, memory cgroup charge) while the core
// zeroes the ring; once freed rings are reused, creates touch pages already
// mapped.  A long-running daemon is past that; a fresh process or daemon is
// not.  main() measures 100 CQ creates on each fresh arena before any
// benchmark runs, so that every benchmark sees the steady state;
// ctl/<backend>/cq_first_touch reports the cold run.

// Measured by warm_arena() before any benchmark runs.
struct FirstTouch {
	int error = 0;
	double create_s = 0, destroy_s = 0;
	long faults = 0;
};
FirstTouch g_first[4]; // by Backend

int warm_arena(Backend b, FirstTouch &ft)
{
	NewSide s;
	if (!s.open(b))
		return ft.error = EIO;
	std::vector<Obj> objs(kSingleBatch);
	long f0 = minor_faults();
	auto t0 = Clock::now();
	for (Obj &o : objs)
		if (int e = s.create(Verb::Cq, o))
			return ft.error = e;
	auto t1 = Clock::now();
	ft.faults = minor_faults() - f0;
	for (const Obj &o : objs)
		if (int e = s.destroy(Verb::Cq, o))
			return ft.error = e;
	auto t2 = Clock::now();
	ft.create_s = secs(t1 - t0);
	ft.destroy_s = secs(t2 - t1);
	return 0;
}

// Reports what warm_arena() measured on the fresh arena.
void BM_ArenaFirstTouch(benchmark::State &st, int bi)
{
	const FirstTouch &ft = g_first[bi]; // bi: a Backend
	if (ft.error) {
		fail(st, std::strerror(ft.error));
		return;
	}
	for (auto _ : st)
		st.SetIterationTime(ft.create_s + ft.destroy_s);
	using C = benchmark::Counter;
	st.counters["n"] = kSingleBatch;
	st.counters["create_ns"] = C(ft.create_s * 1e9 / kSingleBatch, C::kAvgIterations);
	st.counters["destroy_ns"] = C(ft.destroy_s * 1e9 / kSingleBatch, C::kAvgIterations);
	st.counters["op_ns"] =
	    C((ft.create_s + ft.destroy_s) * 1e9 / kSingleBatch, C::kAvgIterations);
	st.counters["faults"] = C(double(ft.faults) / kSingleBatch, C::kAvgIterations);
}

// ---------------------------------------------------------------- cmtime

enum class Cm { Single, Chain, ChainBorn };

// One side of the connections: a context, a PD and a CQ, as one process.
struct CmSide {
	std::unique_ptr<Context> c;
	Handle pd = 0, cq = 0;
	std::vector<Handle> qp;
	std::vector<std::uint32_t> qpn;

	bool open(Backend b)
	{
		c = open_ctx(b);
		if (!c)
			return false;
		auto p = c->alloc_pd();
		auto q = c->create_cq(4096);
		if (!p || !q)
			return false;
		pd = *p;
		cq = q->handle;
		qp.assign(kCmtimePairs, 0);
		qpn.assign(kCmtimePairs, 0);
		return true;
	}

	QpCreate qp_create() const
	{
		QpCreate qc;
		qc.pd = pd;
		qc.send_cq = qc.recv_cq = cq;
		qc.init = rc_init();
		return qc;
	}

	// Creates QPs [from, to) in one chain, each followed by its INIT
	// modify, or born in INIT (create with attributes).
	int create_chain(int from, int to, bool born)
	{
		Chain ch;
		std::vector<PendingQp> p;
		for (int i = from; i < to; i++) {
			QpCreate qc = qp_create();
			if (born) {
				qc.attr = init_attr();
				qc.attr_mask = kInitMask;
			}
			p.push_back(ch.create_qp(qc));
			if (!born)
				ch.modify_qp(p.back(), init_attr(), kInitMask);
		}
		if (auto r = ch.execute(*c); !r)
			return r.error();
		for (int i = from; i < to; i++) {
			auto q = ch.get(p[std::size_t(i - from)]);
			if (!q)
				return q.error();
			qp[std::size_t(i)] = q->handle;
			qpn[std::size_t(i)] = q->resp.qpn;
		}
		return 0;
	}

	// RTR (to the peer's qpn) and RTS of QPs [from, to), in one chain.
	int connect_chain(int from, int to, const CmSide &peer)
	{
		Chain ch;
		for (int i = from; i < to; i++) {
			ch.modify_qp(qp[std::size_t(i)], rtr_attr(peer.qpn[std::size_t(i)]),
				     kRtrMask);
			ch.modify_qp(qp[std::size_t(i)], rts_attr(), kRtsMask);
		}
		return ch.execute(*c).error();
	}

	int destroy_chain(int from, int to)
	{
		Chain ch;
		for (int i = from; i < to; i++)
			ch.destroy(UABI_OBJ_QP, qp[std::size_t(i)]);
		return ch.execute(*c).error();
	}
};

int cm_setup(Cm mode, CmSide &a, CmSide &b)
{
	if (mode == Cm::Single) {
		// What an rdma_cm application does per connection: each side
		// creates its QP and walks it to RTS with the other's number.
		for (int i = 0; i < kCmtimePairs; i++) {
			for (CmSide *s : {&a, &b}) {
				auto q = s->c->create_qp(s->qp_create());
				if (!q)
					return q.error();
				s->qp[std::size_t(i)] = q->handle;
				s->qpn[std::size_t(i)] = q->resp.qpn;
			}
			for (auto [s, peer] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
				Handle h = s->qp[std::size_t(i)];
				if (auto r = s->c->modify_qp(h, init_attr(), kInitMask); !r)
					return r.error();
				if (auto r = s->c->modify_qp(h, rtr_attr(peer->qpn[std::size_t(i)]),
							     kRtrMask);
				    !r)
					return r.error();
				if (auto r = s->c->modify_qp(h, rts_attr(), kRtsMask); !r)
					return r.error();
			}
		}
		return 0;
	}
	// Chains of kCmtimeBatch connections: each side creates its QPs (to
	// INIT) in one message, then connects them (RTR + RTS) in another.
	const bool born = mode == Cm::ChainBorn;
	for (int from = 0; from < kCmtimePairs; from += kCmtimeBatch) {
		int to = std::min(from + kCmtimeBatch, kCmtimePairs);
		if (int e = a.create_chain(from, to, born))
			return e;
		if (int e = b.create_chain(from, to, born))
			return e;
		if (int e = a.connect_chain(from, to, b))
			return e;
		if (int e = b.connect_chain(from, to, a))
			return e;
	}
	return 0;
}

int cm_teardown(Cm mode, CmSide &a, CmSide &b)
{
	for (CmSide *s : {&a, &b}) {
		if (mode == Cm::Single) {
			for (Handle h : s->qp)
				if (auto r = s->c->destroy_qp(h); !r)
					return r.error();
			continue;
		}
		for (int from = 0; from < kCmtimePairs; from += 2 * kCmtimeBatch)
			if (int e = s->destroy_chain(
				from, std::min(from + 2 * kCmtimeBatch, kCmtimePairs)))
				return e;
	}
	return 0;
}

// The three modes side by side: every iteration runs each once (setup and
// teardown of all kCmtimePairs connections), in an order that rotates, so
// that all three see the same conditions (the machine's load, the daemon's
// polling state) and chain ÷ single can be taken per repetition.
// Counters per mode: <mode>_setup_us, <mode>_teardown_us (wall-clock) and
// <mode>_setup_cpu_us, <mode>_teardown_cpu_us (this thread's CPU time:
// in-process, all of the work, without what other tasks of a loaded
// machine took).
constexpr std::pair<Cm, const char *> kCmModes[] = {
    {Cm::Single, "single"}, {Cm::Chain, "chain"}, {Cm::ChainBorn, "chain_born"}};

void BM_Cmtime(benchmark::State &st, Backend b)
{
	uabi_bench::progress(std::string("cmtime/") + backend_name(b));
	CmSide a, c;
	if (!a.open(b) || !c.open(b)) {
		fail(st, "cannot open the backend");
		return;
	}
	constexpr int kModes = int(std::size(kCmModes));
	double ts[kModes] = {}, tt[kModes] = {}, cs[kModes] = {}, ct[kModes] = {};
	int first = 0;
	for (auto _ : st) {
		double iter = 0;
		int err = 0;
		for (int k = 0; k < kModes && !err; k++) {
			const int m = (first + k) % kModes;
			const Cm mode = kCmModes[m].first;
			double c0 = thread_cpu();
			auto t0 = Clock::now();
			int e1 = cm_setup(mode, a, c);
			auto t1 = Clock::now();
			double c1 = thread_cpu();
			int e2 = e1 ? 0 : cm_teardown(mode, a, c);
			auto t2 = Clock::now();
			double c2 = thread_cpu();
			err = e1 ? e1 : e2;
			ts[m] += secs(t1 - t0);
			tt[m] += secs(t2 - t1);
			cs[m] += c1 - c0;
			ct[m] += c2 - c1;
			iter += secs(t2 - t0);
		}
		if (err) {
			fail(st, std::strerror(err));
			break;
		}
		first = (first + 1) % kModes;
		st.SetIterationTime(iter);
	}
	using C = benchmark::Counter;
	auto per = [](double v) { return C(v * 1e6 / kCmtimePairs, C::kAvgIterations); };
	st.counters["n"] = kCmtimePairs;
	for (int m = 0; m < kModes; m++) {
		const std::string name = kCmModes[m].second;
		st.counters[name + "_setup_us"] = per(ts[m]);
		st.counters[name + "_teardown_us"] = per(tt[m]);
		st.counters[name + "_setup_cpu_us"] = per(cs[m]);
		st.counters[name + "_teardown_cpu_us"] = per(ct[m]);
	}
}

// ---------------------------------------------------------------- main

// The ring heap per user of the loaded module, in MiB (its heap_mib
// parameter; 16 when it cannot be read).
unsigned kernel_heap_mib()
{
	unsigned mib = 16;
	if (FILE *f = std::fopen("/sys/module/rdma_uabi/parameters/heap_mib", "r")) {
		if (std::fscanf(f, "%u", &mib) != 1)
			mib = 16;
		std::fclose(f);
	}
	return mib;
}

void register_all()
{
	for (Backend b : g_backends) {
		const char *bname = backend_name(b);
		benchmark::RegisterBenchmark(
		    (std::string("ctl/") + bname + "/cq_first_touch").c_str(), BM_ArenaFirstTouch,
		    int(b))
		    ->UseManualTime()
		    ->Iterations(1)
		    ->Repetitions(1);
		for (const VerbInfo &vi : kVerbs) {
			std::string base = std::string("ctl/") + bname + "/" + vi.name + "/";
			benchmark::RegisterBenchmark((base + "pair").c_str(), BM_Pair, b, vi.v)
			    ->UseManualTime();
			for (int n : kChainLens)
				// The module's arena holds 16 MiB of rings per user
				// unless loaded with more (heap_mib): 1000 CQs of 64
				// entries (24 KiB of rings each) need more than 16
				// (ENOMEM, the limit working as it should).
				if (n * cmds_per_object(vi.v) <= int(UABI_MAX_CHAIN_CMDS) &&
				    !(b == Backend::Kernel && vi.v == Verb::Cq && n > 256 &&
				      kernel_heap_mib() < 32))
					benchmark::RegisterBenchmark(
					    (base + "chain:" + std::to_string(n)).c_str(), BM_Chain,
					    b, vi.v, n)
					    ->UseManualTime();
		}
	}
	for (Backend b : g_backends)
		benchmark::RegisterBenchmark((std::string("cmtime/") + backend_name(b)).c_str(),
					     BM_Cmtime, b)
		    ->UseManualTime()
		    ->Unit(benchmark::kMillisecond);
}

bool list_only(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!std::strncmp(argv[i], "--benchmark_list_tests", 22))
			return true;
	return false;
}

} // namespace

int main(int argc, char **argv)
{
	if (!parse_backends())
		return 2;
	bool daemon = std::find(g_backends.begin(), g_backends.end(), Backend::Daemon) !=
		      g_backends.end();
	if (daemon && !g_daemon.start())
		return 1;
	benchmark::Initialize(&argc, argv);
	// Before any benchmark (they may run in any order): the first 100 CQs
	// on each fresh arena (see warm_arena()).
	// UABI_BENCH_NO_WARMUP=1 skips it.
	if (!std::getenv("UABI_BENCH_NO_WARMUP") && !list_only(argc, argv))
		for (Backend b : g_backends)
			warm_arena(b, g_first[int(b)]);
	register_all();
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	if (daemon)
		g_daemon.stop();
	return g_failed ? 1 : 0;
}
