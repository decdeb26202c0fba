// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The software device's data path between two processes, through the verbs
// API of our libibverbs.so.1 (linked directly) on uabid, side by side with
// the machine's copy limits measured in the same run:
//
//   lat/<op>/<size>   op = send (ping-pong), write (ping-pong, the peer
//                     polls memory), read; typical (median), min and p99;
//                     ping-pongs report half the round trip, as perftest
//   lat/atomic_fa, lat/atomic_cs           8 bytes
//   lat/send_event/2  the SEND ping-pong with both sides waiting for the
//                     receive by completion events (arm, poll, then
//                     ibv_get_cq_event), as ib_send_lat -e
//   lat/eventfd       the same two processes passing a token through two
//                     eventfds (write one, block in read of the other):
//                     the cost of one cross-process wake-up, for the
//                     event mode to be compared with (docs/datapath.md)
//   bw/<op>/<size>    op = write, read, send (the peer reposts receives),
//                     memcpy, process_vm_writev, process_vm_readv
//   bw/atomic_fa                            8 bytes
//
// The peer is a child process (fork() before any verbs call), connected by
// an RC QP; a socketpair tells it which phase to serve.  Sizes are powers
// of two from 2 bytes to 4 MiB.  Nothing asserts a time; the exit status
// is non-zero only when something failed.
//
// Uses $UABI_SOCKET if set, else a daemon of its own in a temporary
// directory, stopped at the end.
#include <infiniband/verbs.h>

#include "bench_progress.hpp"

#include "bench_daemon.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <sched.h>
#include <csignal>
#include <string>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace
{

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxSize = 4u << 20;
// Buffer layout: [0, kMax) source, [kMax, 2 kMax) target of writes, reads
// and receives, then 64 bytes for atomics.
constexpr std::size_t kTarget = kMaxSize;
constexpr std::size_t kAtomic = 2 * kMaxSize;
constexpr std::size_t kBufSize = 2 * kMaxSize + 4096;
constexpr int kSendDepth = 256; // send queue; the bandwidth window is half
constexpr int kWindow = 128;
constexpr int kSignalEvery = 32;
constexpr int kRecvDepth = 512;
constexpr int kAccessAll = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

bool g_failed = false;
uabi_bench::PrivateDaemon g_daemon;
// lat/eventfd: parent -> peer, peer -> parent (made before the fork).
int g_efd_ping = -1, g_efd_pong = -1;
// The first byte of a SEND that ends the peer's event-mode echo.
constexpr unsigned char kStopByte = 0xEE;

// Waits poll without pause, as perftest's do.  UABI_BENCH_SPINS=N makes
// them yield the CPU after N polls: on a machine with more runnable tasks
// than CPUs a pure spin can hold the CPU its peer needs for a time slice,
// but a yield hands the CPU to any other task, which on a busy machine
// costs tens of microseconds every time (measured: SEND 2 B one-way 46 us
// with N = 2000 against 0.6-4 us without, load average 4-7 on 2 CPUs).
unsigned spins_before_yield()
{
	static const unsigned n = [] {
		const char *e = std::getenv("UABI_BENCH_SPINS");
		return e && *e ? unsigned(std::strtoul(e, nullptr, 10)) : 0u;
	}();
	return n;
}

void relax(unsigned &spins)
{
	static const unsigned limit = spins_before_yield();
	if (limit && ++spins > limit)
		sched_yield();
}

// A wait that never ends is a failure (a peer that died, a lost
// completion), not a hang: every wait gives up after this long.
constexpr auto kWaitLimit = std::chrono::seconds(20);

struct Deadline {
	std::chrono::steady_clock::time_point end = std::chrono::steady_clock::now() + kWaitLimit;
	unsigned n = 0;
	// Reads the clock once every 4096 calls.
	bool passed() { return (++n & 4095) == 0 && std::chrono::steady_clock::now() > end; }
};

// ------------------------------------------------------------ endpoint

struct Info {
	std::uint32_t qpn;
	std::uint32_t rkey;
	std::uint64_t addr;
	pid_t pid;
};

struct Ep {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *scq = nullptr;
	ibv_cq *rcq = nullptr;
	ibv_comp_channel *ch = nullptr; // rcq's
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	unsigned char *buf = nullptr;
	Info peer{};
	int posted_recvs = 0;

	const char *open()
	{
		int n = 0;
		ibv_device **list = ibv_get_device_list(&n);
		if (!list || n < 1)
			return "no device";
		ctx = ibv_open_device(list[0]);
		ibv_free_device_list(list);
		if (!ctx)
			return "ibv_open_device";
		pd = ibv_alloc_pd(ctx);
		ch = ibv_create_comp_channel(ctx);
		scq = ibv_create_cq(ctx, 4096, nullptr, nullptr, 0);
		rcq = ibv_create_cq(ctx, 4096, nullptr, ch, 0);
		if (!pd || !ch || !scq || !rcq)
			return "pd/channel/cq";
		void *m = mmap(nullptr, kBufSize, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (m == MAP_FAILED)
			return "mmap";
		buf = static_cast<unsigned char *>(m);
		std::memset(buf, 0x5a, kBufSize);
		mr = ibv_reg_mr(pd, buf, kBufSize, kAccessAll);
		if (!mr)
			return "ibv_reg_mr";
		ibv_qp_init_attr a{};
		a.send_cq = scq;
		a.recv_cq = rcq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = kSendDepth;
		a.cap.max_recv_wr = kRecvDepth;
		a.cap.max_send_sge = a.cap.max_recv_sge = 1;
		qp = ibv_create_qp(pd, &a);
		return qp ? nullptr : "ibv_create_qp";
	}

	Info info() const
	{
		return {qp->qp_num, mr->rkey, reinterpret_cast<std::uintptr_t>(buf), getpid()};
	}

	const char *connect(const Info &p)
	{
		peer = p;
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = kAccessAll;
		if (ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      IBV_QP_ACCESS_FLAGS))
			return "INIT";
		a = {};
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_4096;
		a.dest_qp_num = p.qpn;
		a.ah_attr.dlid = 1;
		a.ah_attr.port_num = 1;
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 1;
		if (ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_MIN_RNR_TIMER))
			return "RTR";
		a = {};
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		if (ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
			return "RTS";
		return nullptr;
	}

	// Receives are all kMax bytes at the target area: any message fits.
	int post_recvs(int n)
	{
		for (int i = 0; i < n; i++) {
			ibv_sge s{reinterpret_cast<std::uintptr_t>(buf + kTarget), kMaxSize,
				  mr->lkey};
			ibv_recv_wr wr{};
			wr.sg_list = &s;
			wr.num_sge = 1;
			ibv_recv_wr *bad = nullptr;
			if (int e = ibv_post_recv(qp, &wr, &bad))
				return e;
			posted_recvs++;
		}
		return 0;
	}

	int post(ibv_wr_opcode op, std::size_t size, bool signaled)
	{
		ibv_sge s{};
		ibv_send_wr wr{};
		wr.opcode = op;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
		s.lkey = mr->lkey;
		s.length = std::uint32_t(size);
		switch (op) {
		case IBV_WR_SEND:
		case IBV_WR_RDMA_WRITE:
			s.addr = reinterpret_cast<std::uintptr_t>(buf);
			wr.wr.rdma.remote_addr = peer.addr + kTarget;
			wr.wr.rdma.rkey = peer.rkey;
			break;
		case IBV_WR_RDMA_READ:
			s.addr = reinterpret_cast<std::uintptr_t>(buf + kTarget);
			wr.wr.rdma.remote_addr = peer.addr;
			wr.wr.rdma.rkey = peer.rkey;
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			s.addr = reinterpret_cast<std::uintptr_t>(buf + kAtomic + 8);
			s.length = 8;
			wr.wr.atomic.remote_addr = peer.addr + kAtomic;
			wr.wr.atomic.rkey = peer.rkey;
			wr.wr.atomic.compare_add = 1;
			wr.wr.atomic.swap = 2;
			break;
		default:
			return EINVAL;
		}
		ibv_send_wr *bad = nullptr;
		return ibv_post_send(qp, &wr, &bad);
	}

	// Polls until n completions of cq arrived; false on an error
	// completion.  n <= 0 polls once.
	bool poll(ibv_cq *cq, int n, int *got = nullptr)
	{
		ibv_wc wc[32];
		int seen = 0;
		unsigned spins = 0;
		Deadline dl;
		do {
			int k = ibv_poll_cq(cq, 32, wc);
			if (k < 0)
				return false;
			if (k == 0 && n > 0) {
				relax(spins);
				if (dl.passed()) {
					std::fprintf(stderr,
						     "bench_datapath: no completion for %lld s\n",
						     (long long)kWaitLimit.count());
					return false;
				}
			}
			for (int i = 0; i < k; i++)
				if (wc[i].status != IBV_WC_SUCCESS) {
					std::fprintf(stderr,
						     "bench_datapath: completion %s (opcode %d)\n",
						     ibv_wc_status_str(wc[i].status), wc[i].opcode);
					return false;
				}
			seen += k;
		} while (seen < n);
		if (got)
			*got = seen;
		return true;
	}

	// One receive completion, waited for by events as ib_send_lat -e
	// does: poll; if empty, arm, poll again, then ibv_get_cq_event.
	bool wait_recv_event(ibv_wc &wc)
	{
		for (;;) {
			int k = ibv_poll_cq(rcq, 1, &wc);
			if (k == 0) {
				if (ibv_req_notify_cq(rcq, 0))
					return false;
				k = ibv_poll_cq(rcq, 1, &wc);
			}
			if (k < 0)
				return false;
			if (k > 0)
				return wc.status == IBV_WC_SUCCESS;
			ibv_cq *c = nullptr;
			void *cc = nullptr;
			if (ibv_get_cq_event(ch, &c, &cc))
				return false;
			ibv_ack_cq_events(c, 1);
		}
	}

	volatile unsigned char &target_byte(std::size_t size)
	{
		return *reinterpret_cast<volatile unsigned char *>(buf + kTarget + size - 1);
	}
};

// ------------------------------------------------------- the peer

enum class Phase : std::uint32_t {
	Idle,
	SendEcho,
	WriteEcho,
	SendSink,
	Quit,
	SendEventEcho, // the echo waits by events; a SEND starting kStopByte ends it
	EventfdEcho,   // read g_efd_ping, write g_efd_pong; a value of 2 ends it
};

struct Cmd {
	Phase phase;
	std::uint32_t size;
};

bool write_all(int fd, const void *p, std::size_t n)
{
	return ::write(fd, p, n) == ssize_t(n);
}

bool read_all(int fd, void *p, std::size_t n)
{
	auto *c = static_cast<char *>(p);
	while (n) {
		ssize_t k = ::read(fd, c, n);
		if (k <= 0)
			return false;
		c += k;
		n -= std::size_t(k);
	}
	return true;
}

bool readable(int fd)
{
	pollfd p{fd, POLLIN, 0};
	return ::poll(&p, 1, 0) > 0;
}

unsigned char next_seq(unsigned char s)
{
	return s == 255 ? 1 : s + 1;
}

// Serves the phases the parent asks for until Quit.  Every phase: read
// Cmd, answer 'A', serve until the parent writes 'S', drain, answer 'D'.
int peer_main(int ctl)
{
	Ep ep;
	if (const char *e = ep.open()) {
		std::fprintf(stderr, "bench_datapath peer: %s failed\n", e);
		return 1;
	}
	Info mine = ep.info(), theirs{};
	if (!write_all(ctl, &mine, sizeof(mine)) || !read_all(ctl, &theirs, sizeof(theirs)))
		return 1;
	if (const char *e = ep.connect(theirs)) {
		std::fprintf(stderr, "bench_datapath peer: %s failed\n", e);
		return 1;
	}
	if (ep.post_recvs(kRecvDepth))
		return 1;
	char ok = 'R';
	if (!write_all(ctl, &ok, 1))
		return 1;
	Cmd c{};
	while (read_all(ctl, &c, sizeof(c)) && c.phase != Phase::Quit) {
		char a = 'A';
		if (c.phase == Phase::WriteEcho)
			ep.target_byte(c.size) = 0;
		if (!write_all(ctl, &a, 1))
			return 1;
		bool good = true;
		unsigned char expect = 1;
		if (c.phase == Phase::SendEventEcho) {
			for (;;) {
				ibv_wc wc{};
				if (!(good = ep.wait_recv_event(wc)))
					break;
				if (ep.buf[kTarget] == kStopByte)
					break;
				good = ep.post(IBV_WR_SEND, c.size, true) == 0 && ep.poll(ep.scq, 1);
				ep.posted_recvs--;
				good = good && ep.post_recvs(1) == 0;
				if (!good)
					break;
			}
			ep.posted_recvs--;
			good = good && ep.post_recvs(1) == 0;
			c.phase = Phase::Idle;
		} else if (c.phase == Phase::EventfdEcho) {
			std::uint64_t v = 0;
			while (::read(g_efd_ping, &v, sizeof(v)) == sizeof(v) && v < 2) {
				v = 1;
				if (::write(g_efd_pong, &v, sizeof(v)) != sizeof(v)) {
					good = false;
					break;
				}
			}
			c.phase = Phase::Idle;
		}
		for (unsigned spins = 0, idle = 0;; spins++) {
			bool did = false;
			if (c.phase == Phase::SendEcho || c.phase == Phase::SendSink) {
				ibv_wc wc[16];
				int k = ibv_poll_cq(ep.rcq, 16, wc);
				for (int i = 0; i < k; i++)
					good &= wc[i].status == IBV_WC_SUCCESS;
				if (k > 0) {
					did = true;
					// The echo first: reposting the receives is not
					// part of the round trip.
					if (c.phase == Phase::SendEcho)
						for (int i = 0; i < k; i++)
							good &=
							    ep.post(IBV_WR_SEND, c.size, true) == 0;
					ep.posted_recvs -= k;
					good &= ep.post_recvs(k) == 0;
					if (c.phase == Phase::SendEcho)
						good &= ep.poll(ep.scq, k);
				}
			} else if (c.phase == Phase::WriteEcho) {
				if (ep.target_byte(c.size) == expect) {
					did = true;
					ep.buf[c.size - 1] = expect;
					good &= ep.post(IBV_WR_RDMA_WRITE, c.size, true) == 0 &&
						ep.poll(ep.scq, 1);
					expect = next_seq(expect);
				}
			}
			if (!good)
				break;
			if (did)
				idle = 0;
			else
				relax(idle);
			// Idle: block in the stop read, or check it now and then.
			if (c.phase == Phase::Idle ||
			    (!did && (spins & 1023) == 0 && readable(ctl)))
				break;
		}
		char s = 0;
		if (!read_all(ctl, &s, 1) || s != 'S')
			return 1;
		char d = good ? 'D' : 'F';
		if (!write_all(ctl, &d, 1))
			return 1;
	}
	return 0;
}

// ------------------------------------------------------- the parent

Ep g_ep;
int g_ctl = -1;
pid_t g_peer = -1;

void fail(benchmark::State &st, const char *what)
{
	g_failed = true;
	st.SkipWithError(what);
}

// Starts a phase of the peer; false (and the benchmark skipped) on error.
bool begin(benchmark::State &st, Phase p, std::size_t size)
{
	static const char *const kPhase[] = {"one-sided",   "send ping-pong", "write ping-pong",
					     "send stream", "quit",	      "send ping-pong by events",
					     "eventfd ping-pong"};
	uabi_bench::progress(std::string(kPhase[int(p)]) + ", " + std::to_string(size) + " B");
	Cmd c{p, std::uint32_t(size)};
	char a = 0;
	if (!write_all(g_ctl, &c, sizeof(c)) || !read_all(g_ctl, &a, 1) || a != 'A') {
		fail(st, "peer did not start the phase");
		return false;
	}
	return true;
}

bool end(benchmark::State &st)
{
	char s = 'S', d = 0;
	if (!write_all(g_ctl, &s, 1) || !read_all(g_ctl, &d, 1) || d != 'D') {
		fail(st, "peer failed");
		return false;
	}
	return true;
}

double secs(Clock::duration d)
{
	return std::chrono::duration<double>(d).count();
}

// Per-iteration samples -> typical (median), min, 99th percentile, in us.
struct Samples {
	std::vector<float> v;
	Samples() { v.reserve(1 << 20); }
	void add(Clock::duration d)
	{
		if (v.size() < v.capacity())
			v.push_back(float(secs(d) * 1e6));
	}
	void report(benchmark::State &st, double scale, const std::string &prefix = "")
	{
		if (v.empty())
			return;
		std::sort(v.begin(), v.end());
		st.counters[prefix + "typ_us"] = v[v.size() / 2] * scale;
		st.counters[prefix + "min_us"] = v.front() * scale;
		st.counters[prefix + "p99_us"] =
		    v[std::min(v.size() - 1, v.size() * 99 / 100)] * scale;
	}
	double typical() const { return v.empty() ? 0 : v[v.size() / 2]; }
};

// One SEND round trip (the peer echoes it): the time until the echo
// arrived into @s, then the send's completion reaped and the receive
// reposted outside the clock.
bool send_round_trip(std::size_t size, Samples &s)
{
	auto t0 = Clock::now();
	bool good = g_ep.post(IBV_WR_SEND, size, true) == 0 && g_ep.poll(g_ep.rcq, 1);
	auto t1 = Clock::now();
	good = good && g_ep.poll(g_ep.scq, 1) && g_ep.post_recvs(1) == 0;
	s.add(t1 - t0);
	return good;
}

// One RDMA WRITE round trip: the last byte carries the next sequence
// number (@seq), which the peer writes back and this side polls for in
// memory (as ib_write_lat); every write is signaled and its completion is
// reaped after the clock stopped.
bool write_round_trip(std::size_t size, unsigned char &seq, Samples &s)
{
	seq = next_seq(seq);
	auto t0 = Clock::now();
	g_ep.buf[size - 1] = seq;
	bool good = g_ep.post(IBV_WR_RDMA_WRITE, size, true) == 0;
	Deadline dl;
	for (unsigned spins = 0; good && g_ep.target_byte(size) != seq;) {
		relax(spins);
		good = !dl.passed();
	}
	auto t1 = Clock::now();
	good = good && g_ep.poll(g_ep.scq, 1);
	s.add(t1 - t0);
	return good;
}

// Ping-pong SEND: post our receive... it is always posted (kRecvDepth
// outstanding, reposted as consumed), send, wait for the echo.
void BM_LatSend(benchmark::State &st)
{
	std::size_t size = std::size_t(st.range(0));
	if (!begin(st, Phase::SendEcho, size))
		return;
	Samples s;
	bool good = true;
	for (auto _ : st)
		if (!(good = send_round_trip(size, s)))
			break;
	if (!good)
		fail(st, "send ping-pong failed");
	end(st);
	s.report(st, 0.5);
}

// Ping-pong SEND with both sides waiting by completion events.
void BM_LatSendEvent(benchmark::State &st)
{
	std::size_t size = std::size_t(st.range(0));
	if (!begin(st, Phase::SendEventEcho, size))
		return;
	Samples s;
	bool good = true;
	g_ep.buf[0] = 0;
	for (auto _ : st) {
		ibv_wc wc{};
		auto t0 = Clock::now();
		good = g_ep.post(IBV_WR_SEND, size, true) == 0 && g_ep.wait_recv_event(wc);
		auto t1 = Clock::now();
		g_ep.posted_recvs--;
		good = good && g_ep.poll(g_ep.scq, 1) && g_ep.post_recvs(1) == 0;
		s.add(t1 - t0);
		if (!good)
			break;
	}
	// The stop: a SEND the peer does not echo.
	g_ep.buf[0] = kStopByte;
	if (g_ep.post(IBV_WR_SEND, std::max<std::size_t>(size, 1), true) || !g_ep.poll(g_ep.scq, 1))
		good = false;
	g_ep.buf[0] = 0x5a;
	if (!good)
		fail(st, "send ping-pong by events failed");
	end(st);
	s.report(st, 0.5);
}

// The token through two eventfds: one wake-up of a sleeping process each
// way.
void BM_LatEventfd(benchmark::State &st)
{
	if (!begin(st, Phase::EventfdEcho, 0))
		return;
	Samples s;
	bool good = true;
	for (auto _ : st) {
		std::uint64_t v = 1;
		auto t0 = Clock::now();
		good = ::write(g_efd_ping, &v, sizeof(v)) == sizeof(v) &&
		       ::read(g_efd_pong, &v, sizeof(v)) == sizeof(v);
		auto t1 = Clock::now();
		s.add(t1 - t0);
		if (!good)
			break;
	}
	std::uint64_t stop = 2;
	good = ::write(g_efd_ping, &stop, sizeof(stop)) == sizeof(stop) && good;
	if (!good)
		fail(st, "eventfd ping-pong failed");
	end(st);
	s.report(st, 0.5);
}

// Ping-pong RDMA WRITE: the last byte carries a sequence number that the
// other side polls for in memory (as ib_write_lat).
void BM_LatWrite(benchmark::State &st)
{
	std::size_t size = std::size_t(st.range(0));
	g_ep.target_byte(size) = 0;
	if (!begin(st, Phase::WriteEcho, size))
		return;
	Samples s;
	bool good = true;
	unsigned char seq = 0;
	for (auto _ : st)
		if (!(good = write_round_trip(size, seq, s)))
			break;
	if (!good)
		fail(st, "write ping-pong failed");
	end(st);
	s.report(st, 0.5);
}

// SEND and RDMA WRITE ping-pongs of one size in alternating blocks of
// kPairBlock round trips, so that both see the same moments of the host
// (the cost of a cache line between the two vCPUs changes 2-3x for tens of
// seconds at a time on a shared VM, docs/datapath.md, "SENDs up to 2 KiB"):
// send_typ_us, write_typ_us and send_over_write, their ratio.
constexpr int kPairBlock = 64;

void BM_LatSendVsWrite(benchmark::State &st)
{
	std::size_t size = std::size_t(st.range(0));
	Samples ss, ws;
	bool good = true;
	unsigned char seq = 0;
	for (auto _ : st) {
		if (!begin(st, Phase::SendEcho, size))
			return;
		for (int i = 0; good && i < kPairBlock; i++)
			good = send_round_trip(size, ss);
		if (!end(st))
			return;
		g_ep.target_byte(size) = 0;
		seq = 0;
		if (!good || !begin(st, Phase::WriteEcho, size))
			break;
		for (int i = 0; good && i < kPairBlock; i++)
			good = write_round_trip(size, seq, ws);
		if (!end(st) || !good)
			break;
	}
	if (!good) {
		fail(st, "send/write ping-pong failed");
		return;
	}
	ss.report(st, 0.5, "send_");
	ws.report(st, 0.5, "write_");
	if (ws.typical() > 0)
		st.counters["send_over_write"] = ss.typical() / ws.typical();
}

// One-sided: one work request at a time, posted and polled (READ, atomics).
void lat_one_sided(benchmark::State &st, ibv_wr_opcode op, std::size_t size)
{
	if (!begin(st, Phase::Idle, size))
		return;
	Samples s;
	bool good = true;
	for (auto _ : st) {
		auto t0 = Clock::now();
		good = g_ep.post(op, size, true) == 0 && g_ep.poll(g_ep.scq, 1);
		auto t1 = Clock::now();
		s.add(t1 - t0);
		if (!good)
			break;
	}
	if (!good)
		fail(st, "one-sided operation failed");
	end(st);
	s.report(st, 1.0);
}

void BM_LatRead(benchmark::State &st)
{
	lat_one_sided(st, IBV_WR_RDMA_READ, std::size_t(st.range(0)));
}
void BM_LatAtomicFa(benchmark::State &st)
{
	lat_one_sided(st, IBV_WR_ATOMIC_FETCH_AND_ADD, 8);
}
void BM_LatAtomicCs(benchmark::State &st)
{
	lat_one_sided(st, IBV_WR_ATOMIC_CMP_AND_SWP, 8);
}

// Work requests per timed burst: enough that the window's fill and drain
// at either end are noise, few enough at 4 MiB for short runs.
int burst_of(std::size_t size)
{
	return int(std::clamp<std::size_t>((64u << 20) / size, 16, 1024));
}

void set_rate(benchmark::State &st, double bytes, double seconds)
{
	if (seconds > 0)
		st.counters["GBps"] = bytes / seconds / 1e9;
	st.SetBytesProcessed(std::int64_t(bytes));
}

// Streams bursts of work requests, at most kWindow outstanding, every
// kSignalEvery-th signaled; a burst is timed until its last completion.
void bw_stream(benchmark::State &st, ibv_wr_opcode op, std::size_t size, Phase peer)
{
	if (!begin(st, peer, size))
		return;
	const int burst = burst_of(size);
	double total = 0, bytes = 0;
	bool good = true;
	for (auto _ : st) {
		auto t0 = Clock::now();
		int posted = 0, done = 0;
		while (good && done < burst) {
			while (good && posted < burst && posted - done < kWindow) {
				bool sig = (posted + 1) % kSignalEvery == 0 || posted + 1 == burst;
				good = g_ep.post(op, size, sig) == 0;
				posted++;
			}
			int got = 0;
			good = good && g_ep.poll(g_ep.scq, 0, &got);
			for (int i = 0; i < got; i++) {
				int next = (done / kSignalEvery + 1) * kSignalEvery;
				done = std::min(next, burst);
			}
		}
		auto t1 = Clock::now();
		st.SetIterationTime(secs(t1 - t0));
		total += secs(t1 - t0);
		bytes += double(size) * burst;
		if (!good)
			break;
	}
	if (!good)
		fail(st, "bandwidth stream failed");
	end(st);
	set_rate(st, bytes, total);
	st.counters["msgs"] = burst;
}

void BM_BwWrite(benchmark::State &st)
{
	bw_stream(st, IBV_WR_RDMA_WRITE, std::size_t(st.range(0)), Phase::Idle);
}
void BM_BwRead(benchmark::State &st)
{
	bw_stream(st, IBV_WR_RDMA_READ, std::size_t(st.range(0)), Phase::Idle);
}
void BM_BwSend(benchmark::State &st)
{
	bw_stream(st, IBV_WR_SEND, std::size_t(st.range(0)), Phase::SendSink);
}
void BM_BwAtomicFa(benchmark::State &st)
{
	bw_stream(st, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, Phase::Idle);
}

// The machine's limits, the same sizes, the same buffers: a copy within
// this process, and one into / out of the peer's memory, which is what
// the data path does per work request.
template <class Copy> void bw_copy(benchmark::State &st, Copy &&copy)
{
	std::size_t size = std::size_t(st.range(0));
	uabi_bench::progress("copy limits, " + std::to_string(size) + " B");
	const int burst = burst_of(size);
	double total = 0, bytes = 0;
	for (auto _ : st) {
		auto t0 = Clock::now();
		for (int i = 0; i < burst; i++)
			if (!copy(size)) {
				fail(st, std::strerror(errno));
				return;
			}
		benchmark::ClobberMemory();
		auto t1 = Clock::now();
		st.SetIterationTime(secs(t1 - t0));
		total += secs(t1 - t0);
		bytes += double(size) * burst;
	}
	set_rate(st, bytes, total);
	st.counters["msgs"] = burst;
}

void BM_BwMemcpy(benchmark::State &st)
{
	bw_copy(st, [](std::size_t n) {
		std::memcpy(g_ep.buf + kTarget, g_ep.buf, n);
		return true;
	});
}

void BM_BwVmWritev(benchmark::State &st)
{
	bw_copy(st, [](std::size_t n) {
		iovec l{g_ep.buf, n};
		iovec r{reinterpret_cast<void *>(g_ep.peer.addr + kTarget), n};
		return process_vm_writev(g_ep.peer.pid, &l, 1, &r, 1, 0) == ssize_t(n);
	});
}

void BM_BwVmReadv(benchmark::State &st)
{
	bw_copy(st, [](std::size_t n) {
		iovec l{g_ep.buf + kTarget, n};
		iovec r{reinterpret_cast<void *>(g_ep.peer.addr), n};
		return process_vm_readv(g_ep.peer.pid, &l, 1, &r, 1, 0) == ssize_t(n);
	});
}

// Registered size by size, so that the operations and the copy limits of
// one size run next to each other in time (the machine's load drifts).
void register_all()
{
	using R = void (*)(benchmark::State &);
	const std::pair<const char *, R> lat[] = {
	    {"lat/send", BM_LatSend}, {"lat/write", BM_LatWrite}, {"lat/read", BM_LatRead}};
	const std::pair<const char *, R> bw[] = {{"bw/memcpy", BM_BwMemcpy},
						 {"bw/process_vm_writev", BM_BwVmWritev},
						 {"bw/process_vm_readv", BM_BwVmReadv},
						 {"bw/write", BM_BwWrite},
						 {"bw/read", BM_BwRead},
						 {"bw/send", BM_BwSend}};
	for (std::int64_t s = 2; s <= std::int64_t(kMaxSize); s *= 2)
		for (auto [name, fn] : lat)
			benchmark::RegisterBenchmark(name, fn)->Arg(s)->UseRealTime();
	benchmark::RegisterBenchmark("lat/atomic_fa", BM_LatAtomicFa)->Arg(8)->UseRealTime();
	benchmark::RegisterBenchmark("lat/atomic_cs", BM_LatAtomicCs)->Arg(8)->UseRealTime();
	for (std::int64_t s = 128; s <= 2048; s *= 2)
		benchmark::RegisterBenchmark("lat/send_vs_write", BM_LatSendVsWrite)
		    ->Arg(s)
		    ->UseRealTime();
	for (std::int64_t s = 2; s <= std::int64_t(kMaxSize); s *= 2)
		for (auto [name, fn] : bw)
			benchmark::RegisterBenchmark(name, fn)->Arg(s)->UseManualTime();
	benchmark::RegisterBenchmark("bw/atomic_fa", BM_BwAtomicFa)->Arg(8)->UseManualTime();
	// The event mode against polling and a bare wake-up, next to each
	// other.  A CQ left armed raises an event in later polling runs: a
	// direct one costs a write(2), through the control half a round trip.
	benchmark::RegisterBenchmark("lat/eventfd", BM_LatEventfd)->UseRealTime();
	benchmark::RegisterBenchmark("lat/send_poll", BM_LatSend)->Arg(2)->UseRealTime();
	benchmark::RegisterBenchmark("lat/send_event", BM_LatSendEvent)->Arg(2)->UseRealTime();
}

// The two processes on two different CPUs (the first two this process
// may use), as one pins perftest with taskset: left to the scheduler on a
// busy 2-CPU machine, both may share one CPU, and every round trip then
// waits for a scheduler tick (4 ms here).  UABI_BENCH_PIN=0: no pinning.
int g_cpu[2] = {-1, -1};

void choose_cpus()
{
	const char *e = std::getenv("UABI_BENCH_PIN");
	if (e && !std::strcmp(e, "0"))
		return;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	int n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			g_cpu[n++] = c;
	if (n < 2)
		g_cpu[0] = g_cpu[1] = -1;
}

void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		std::perror("bench_datapath: sched_setaffinity");
}

int setup_fail(const char *what)
{
	std::fprintf(stderr, "bench_datapath: %s failed\n", what);
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	if (!g_daemon.start())
		return 1;
	// Two processes need the daemon (or the kernel module), never a
	// process-private core.
	const char *be = std::getenv("UABI_BACKEND");
	if (!be || !*be || !std::strcmp(be, "inproc"))
		setenv("UABI_BACKEND", "daemon", 1);

	// A peer that died must fail the run, not kill it with SIGPIPE.
	signal(SIGPIPE, SIG_IGN);
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return setup_fail("socketpair");
	g_efd_ping = eventfd(0, EFD_CLOEXEC);
	g_efd_pong = eventfd(0, EFD_CLOEXEC);
	if (g_efd_ping < 0 || g_efd_pong < 0)
		return setup_fail("eventfd");
	choose_cpus();
	std::fflush(nullptr);
	g_peer = fork();
	if (g_peer < 0)
		return setup_fail("fork");
	if (g_peer == 0) {
		close(sv[0]);
		pin(g_cpu[1]);
		_exit(peer_main(sv[1]));
	}
	close(sv[1]);
	pin(g_cpu[0]);
	g_ctl = sv[0];

	int rc = 0;
	Info peer{};
	char ready = 0;
	if (const char *e = g_ep.open())
		rc = setup_fail(e);
	else if (!read_all(g_ctl, &peer, sizeof(peer)))
		rc = setup_fail("peer start");
	else if (Info mine = g_ep.info(); !write_all(g_ctl, &mine, sizeof(mine)))
		rc = setup_fail("peer info");
	else if (const char *e = g_ep.connect(peer))
		rc = setup_fail(e);
	else if (g_ep.post_recvs(kRecvDepth))
		rc = setup_fail("ibv_post_recv");
	else if (!read_all(g_ctl, &ready, 1) || ready != 'R')
		rc = setup_fail("peer connect");
	if (rc == 0) {
		benchmark::Initialize(&argc, argv);
		register_all();
		benchmark::RunSpecifiedBenchmarks();
		benchmark::Shutdown();
	}
	Cmd quit{Phase::Quit, 0};
	(void)write_all(g_ctl, &quit, sizeof(quit));
	close(g_ctl);
	int status = 0;
	if (waitpid(g_peer, &status, 0) != g_peer || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		std::fprintf(stderr, "bench_datapath: the peer process failed\n");
		rc = 1;
	}
	if (g_failed)
		rc = 1;
	g_daemon.stop();
	return rc;
}
