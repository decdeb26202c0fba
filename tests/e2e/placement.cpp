// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// In-order data placement (docs/datapath.md, "Placement order").
//
// A reader that sees a byte of a message must see every byte before it, and
// a completion only after its data: the last byte, and the aligned 8 bytes
// that hold it, land after all the others.  Programs rely on that when they
// poll the last byte of an RDMA WRITE's target (perftest's write latency
// test, MPI eager-RDMA protocols).
//
// Two peers on one RC connection, as two processes (default) or as two
// threads of one process with a context each (--threads: same-process
// copies).  The "source" side keeps two regions filled with two patterns
// that differ in every byte; each operation moves one of them, alternately,
// so every byte of the destination changes with every operation.  The
// checker spins on the last byte of the destination until it shows the new
// pattern, then compares every byte: a byte still holding the previous
// pattern is a torn message.  Then it acknowledges, and the next operation
// starts.
//   write      RDMA WRITE; the target polls the last byte
//   write_imm  RDMA WRITE WITH IMM; the target alternates: last byte first,
//              or the completion first (the data must be complete then)
//   send       SEND into a posted receive; one target thread polls the CQ and
//              checks at the completion, another polls the last byte
//   read       RDMA READ; the initiator's own buffer: one thread polls its
//              last byte, the poster checks at the completion
// Sizes 1 B to 4 MiB around every power of two up to 8 KiB, at a page-aligned
// offset, an unaligned one and one that crosses a page boundary.
//
// Usage: placement [--mode write|write_imm|send|read] [--total N]
//                  [--threads] [--seconds S] [--expect-torn]
// Exit status 0 only if at least N operations ran (default 1000000), none
// was torn and none was lost.  --expect-torn turns the verdict on torn
// messages around: the self-check that the test sees disorder, run with
// UABI_SW_TAIL_FIRST=1 (the provider then writes every tail first).
#include <infiniband/verbs.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

enum class Mode { Write, WriteImm, Send, Read };

constexpr std::size_t kMaxMsg = 4u << 20;
constexpr std::size_t kRegion = kMaxMsg + 8192;	// room for the offsets
constexpr int kRecvDepth = 32;
constexpr std::uint8_t kNeutral = 2;		// a third pattern: "not yet written"

std::uint8_t pattern(unsigned j, std::size_t p)
{
	return std::uint8_t(p * 131u + (p >> 8) * 7u + j * 0x5bu + 0x11u);
}

struct Case {
	std::size_t size;
	std::size_t off;
	std::uint64_t n;
};

// What the two sides share: the connection's numbers, the progress of the
// run and its verdict.  In shared memory for two processes.
struct Shared {
	std::atomic<std::uint32_t> qpn[2];
	std::atomic<std::uint64_t> addr[2];
	std::atomic<std::uint32_t> rkey[2];
	std::atomic<std::uint32_t> connected[2];
	std::atomic<std::uint64_t> ready;	// cases prepared by the destination side
	std::atomic<std::uint64_t> ack;		// last operation checked by the target
	std::atomic<std::uint64_t> ops;		// operations completed and checked
	std::atomic<std::uint64_t> torn;
	std::atomic<std::uint32_t> failed;
	std::atomic<std::uint32_t> finished;
	char why[512];
};

Shared *g;
std::chrono::steady_clock::time_point g_deadline;

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char *fmt, ...)
{
	std::uint32_t expected = 0;
	if (g->failed.compare_exchange_strong(expected, 1)) {
		va_list ap;
		va_start(ap, fmt);
		std::vsnprintf(g->why, sizeof(g->why), fmt, ap);
		va_end(ap);
	}
}

bool stopped()
{
	return g->failed.load(std::memory_order_relaxed) != 0;
}

// Waits until pred() holds; false (and the run fails) after 10 s, at the
// run's deadline, or when the other side failed.
template <class Pred>
bool wait_for(Pred pred, const char *what)
{
	auto limit = std::min(std::chrono::steady_clock::now() + std::chrono::seconds(10), g_deadline);
	for (unsigned spins = 0;; spins++) {
		if (pred())
			return true;
		if ((spins & 1023) == 1023) {
			if (stopped())
				return false;
			if (std::chrono::steady_clock::now() > limit) {
				fail("timed out waiting for %s", what);
				return false;
			}
			sched_yield();
		}
	}
}

std::vector<Case> make_cases(std::uint64_t total)
{
	std::vector<std::size_t> sizes;
	for (std::size_t p = 1; p <= 8192; p *= 2)
		for (std::size_t s : {p - 1, p, p + 1})
			if (s && (sizes.empty() || sizes.back() < s))
				sizes.push_back(s);
	for (std::size_t s : {16384ul, 65535ul, 65536ul, 65537ul, 262144ul, 1048576ul, kMaxMsg})
		sizes.push_back(s);
	// Per size: page-aligned, unaligned (3), and across a page boundary.
	std::vector<Case> cases;
	double weight = 0;
	for (std::size_t s : sizes)
		weight += 3.0 * (s <= 8193 ? 1.0 : 8192.0 / double(s));
	const double base = double(total) / weight;
	std::uint64_t sum = 0;
	for (std::size_t s : sizes) {
		const double w = s <= 8193 ? 1.0 : 8192.0 / double(s);
		const std::uint64_t n = std::max<std::uint64_t>(4, std::uint64_t(base * w + 1));
		for (std::size_t off : {std::size_t(0), std::size_t(3), 4096 - std::clamp<std::size_t>(s / 2, 1, 4000)}) {
			cases.push_back({s, off, n});
			sum += n;
		}
	}
	// Round up to at least @total (the first, smallest cases absorb it).
	for (std::size_t i = 0; sum < total; i = (i + 1) % cases.size(), sum++)
		cases[i].n++;
	return cases;
}

// Where each byte of a destination should stand: pattern j at every
// position.  Counts the message torn (and says where) if any byte differs.
bool check(const std::uint8_t *dst, const std::vector<std::uint8_t> &ref, const Case &c,
	   std::uint64_t op, const char *how)
{
	const std::uint8_t *want = ref.data() + c.off, *got = dst + c.off;
	if (!std::memcmp(got, want, c.size))
		return true;
	// Where, as it stood when first seen (it may have landed since).
	std::size_t first = 0;
	std::uint8_t seen = 0;
	for (; first < c.size; first++)
		if ((seen = __atomic_load_n(got + first, __ATOMIC_RELAXED)) != want[first])
			break;
	std::uint64_t n = g->torn.fetch_add(1) + 1;
	if (n <= 10)
		std::printf("TORN (%s): %zu B at offset %zu, operation %llu: byte +%zu was 0x%02x, "
			    "not 0x%02x\n",
			    how, c.size, c.off, (unsigned long long)op, first, seen, want[first]);
	return false;
}

struct Side {
	int role;		// 0: target (written to, or read from), 1: initiator
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	std::uint8_t *buf = nullptr;
	std::size_t len = 0;
	ibv_mr *mr = nullptr;

	bool open(bool source)
	{
		int n = 0;
		ibv_device **list = ibv_get_device_list(&n);
		if (!list || n < 1) {
			fail("role %d: no device", role);
			return false;
		}
		ctx = ibv_open_device(list[0]);
		ibv_free_device_list(list);
		if (!ctx) {
			fail("role %d: ibv_open_device: %s", role, std::strerror(errno));
			return false;
		}
		pd = ibv_alloc_pd(ctx);
		cq = pd ? ibv_create_cq(ctx, 256, nullptr, nullptr, 0) : nullptr;
		// A source holds both patterns, a destination one region.
		len = source ? 2 * kRegion : kRegion;
		buf = static_cast<std::uint8_t *>(mmap(nullptr, len, PROT_READ | PROT_WRITE,
						       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		if (!cq || buf == MAP_FAILED) {
			fail("role %d: setup: %s", role, std::strerror(errno));
			return false;
		}
		for (unsigned j = 0; j < (source ? 2u : 1u); j++)
			for (std::size_t p = 0; p < kRegion; p++)
				buf[j * kRegion + p] = pattern(source ? j : kNeutral, p);
		mr = ibv_reg_mr(pd, buf, len,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		ibv_qp_init_attr a{};
		a.send_cq = cq;
		a.recv_cq = cq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = 64;
		a.cap.max_recv_wr = kRecvDepth + 8;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		qp = mr ? ibv_create_qp(pd, &a) : nullptr;
		if (!qp) {
			fail("role %d: reg_mr/create_qp: %s", role, std::strerror(errno));
			return false;
		}
		g->qpn[role] = qp->qp_num;
		g->addr[role] = reinterpret_cast<std::uint64_t>(buf);
		g->rkey[role] = mr->rkey;
		return true;
	}

	bool connect()
	{
		const int peer = 1 - role;
		if (!wait_for([&] { return g->qpn[peer].load() != 0; }, "the peer's QP"))
			return false;
		ibv_port_attr port{};
		if (ibv_query_port(ctx, 1, &port)) {
			fail("role %d: query_port", role);
			return false;
		}
		ibv_qp_attr a{};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
		int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							IBV_QP_ACCESS_FLAGS);
		if (!ret) {
			a = {};
			a.qp_state = IBV_QPS_RTR;
			a.path_mtu = IBV_MTU_4096;
			a.dest_qp_num = g->qpn[peer];
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			a.ah_attr.dlid = port.lid;
			a.ah_attr.port_num = 1;
			ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
							    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
		}
		if (!ret) {
			a = {};
			a.qp_state = IBV_QPS_RTS;
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 16;
			ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
							    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
							    IBV_QP_MAX_QP_RD_ATOMIC);
		}
		if (ret) {
			fail("role %d: modify_qp: %s", role, std::strerror(ret));
			return false;
		}
		g->connected[role] = 1;
		return wait_for([&] { return g->connected[peer].load() != 0; }, "the peer to connect");
	}

	// One completion, which must be a success of @opcode.
	bool poll_one(ibv_wc_opcode opcode, std::uint32_t imm = 0, bool with_imm = false)
	{
		ibv_wc wc{};
		int n = 0;
		if (!wait_for([&] { return (n = ibv_poll_cq(cq, 1, &wc)) != 0; }, "a completion"))
			return false;
		if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.opcode != opcode ||
		    (with_imm && (!(wc.wc_flags & IBV_WC_WITH_IMM) || ntohl(wc.imm_data) != imm))) {
			fail("role %d: completion: status %s, opcode %d (want %d)", role,
			     ibv_wc_status_str(wc.status), wc.opcode, opcode);
			return false;
		}
		return true;
	}

	bool post_recv(const Case &c)
	{
		ibv_sge s{reinterpret_cast<std::uint64_t>(buf + c.off), std::uint32_t(c.size), mr->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.sg_list = &s;
		wr.num_sge = 1;
		int ret = ibv_post_recv(qp, &wr, &bad);
		if (ret)
			fail("post_recv: %s", std::strerror(ret));
		return !ret;
	}

	~Side()
	{
		if (qp)
			ibv_destroy_qp(qp);
		if (mr)
			ibv_dereg_mr(mr);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
		if (buf && buf != MAP_FAILED)
			munmap(buf, len);
	}
};

std::vector<std::uint8_t> reference(unsigned j)
{
	std::vector<std::uint8_t> r(kRegion);
	for (std::size_t p = 0; p < kRegion; p++)
		r[p] = pattern(j, p);
	return r;
}

// A thread joined when it goes out of scope (the run may end early).
struct Joined : std::thread {
	using std::thread::operator=;
	~Joined()
	{
		if (joinable())
			join();
	}
};

// The destination side's watcher: the last byte first, then every byte.
// @seen_ops counts the operations it checked.
void watch_last_byte(const std::uint8_t *dst, const std::vector<Case> &cases,
		     const std::vector<std::uint8_t> *ref, std::atomic<std::uint64_t> &done,
		     std::atomic<std::uint64_t> &prepared)
{
	std::uint64_t op = 0;
	for (std::size_t ci = 0; ci < cases.size() && !stopped(); ci++) {
		const Case &c = cases[ci];
		if (!wait_for([&] { return prepared.load(std::memory_order_acquire) > ci; }, "the case"))
			return;
		const std::uint8_t *last = dst + c.off + c.size - 1;
		for (std::uint64_t k = 0; k < c.n; k++, op++) {
			const std::vector<std::uint8_t> &want = ref[k & 1];
			if (!wait_for([&] { return __atomic_load_n(last, __ATOMIC_ACQUIRE) == want[c.off + c.size - 1]; },
				      "the last byte"))
				return;
			check(dst, want, c, op, "last byte seen");
			done.store(op + 1, std::memory_order_release);
		}
	}
}

// The target's buffer stays mapped until the initiator is done: with
// UABI_SW_TAIL_FIRST the initiator may still be copying a message's body
// after the target saw its last byte.
struct StayUntilFinished {
	~StayUntilFinished()
	{
		while (!g->finished.load() && !stopped() && std::chrono::steady_clock::now() < g_deadline)
			usleep(1000);
	}
};

void run_target(Mode mode, const std::vector<Case> &cases)
{
	Side s{0};
	StayUntilFinished stay;
	const bool source = mode == Mode::Read;
	if (!s.open(source) || !s.connect())
		return;
	if (source) {
		// Read from: nothing to do but stay until the initiator is done.
		return;
	}
	const std::vector<std::uint8_t> ref[2] = {reference(0), reference(1)};
	std::atomic<std::uint64_t> watched{0}, prepared{0};
	Joined watcher;
	if (mode == Mode::Send)
		watcher = std::thread(watch_last_byte, s.buf, std::cref(cases), ref, std::ref(watched),
				      std::ref(prepared));
	std::uint64_t op = 0;
	for (std::size_t ci = 0; ci < cases.size() && !stopped(); ci++) {
		const Case &c = cases[ci];
		for (std::size_t p = c.off; p < c.off + c.size; p++)
			s.buf[p] = pattern(kNeutral, p);
		std::uint64_t posted = 0;
		if (mode != Mode::Write)
			for (; posted < std::min<std::uint64_t>(c.n, kRecvDepth); posted++)
				if (!s.post_recv(c))
					break;
		prepared.store(ci + 1, std::memory_order_release);
		g->ready.store(ci + 1, std::memory_order_release);
		const std::uint8_t *last = s.buf + c.off + c.size - 1;
		for (std::uint64_t k = 0; k < c.n && !stopped(); k++, op++) {
			const std::vector<std::uint8_t> &want = ref[k & 1];
			const std::uint8_t final_byte = want[c.off + c.size - 1];
			auto last_landed = [&] { return __atomic_load_n(last, __ATOMIC_ACQUIRE) == final_byte; };
			switch (mode) {
			case Mode::Write:
				if (!wait_for(last_landed, "the last byte"))
					return;
				check(s.buf, want, c, op, "last byte seen");
				break;
			case Mode::WriteImm:
				// Even: the completion first; odd: the last byte first.
				if (k & 1) {
					if (!wait_for(last_landed, "the last byte"))
						return;
					check(s.buf, want, c, op, "last byte seen");
				}
				if (!s.poll_one(IBV_WC_RECV_RDMA_WITH_IMM, std::uint32_t(op), true))
					return;
				check(s.buf, want, c, op, "completion seen");
				break;
			case Mode::Send:
				if (!s.poll_one(IBV_WC_RECV))
					return;
				check(s.buf, want, c, op, "completion seen");
				if (!wait_for([&] { return watched.load(std::memory_order_acquire) > op; },
					      "the watcher"))
					return;
				break;
			case Mode::Read:
				break;
			}
			if (mode != Mode::Write && posted < c.n) {
				if (!s.post_recv(c))
					break;
				posted++;
			}
			g->ack.store(op + 1, std::memory_order_release);
		}
	}
}

void run_initiator(Mode mode, const std::vector<Case> &cases, std::uint64_t total)
{
	Side s{1};
	const bool source = mode != Mode::Read;
	if (!s.open(source) || !s.connect())
		return;
	const std::uint64_t raddr = g->addr[0];
	const std::uint32_t rkey = g->rkey[0];
	const std::vector<std::uint8_t> ref[2] = {reference(0), reference(1)};
	std::atomic<std::uint64_t> watched{0}, prepared{0};
	Joined watcher;
	if (mode == Mode::Read)
		watcher = std::thread(watch_last_byte, s.buf, std::cref(cases), ref, std::ref(watched),
				      std::ref(prepared));
	auto last_report = std::chrono::steady_clock::now();
	std::uint64_t op = 0;
	for (std::size_t ci = 0; ci < cases.size() && !stopped(); ci++) {
		const Case &c = cases[ci];
		if (mode == Mode::Read) {
			for (std::size_t p = c.off; p < c.off + c.size; p++)
				s.buf[p] = pattern(kNeutral, p);
			prepared.store(ci + 1, std::memory_order_release);
		} else if (!wait_for([&] { return g->ready.load(std::memory_order_acquire) > ci; },
				     "the target's buffers")) {
			break;
		}
		for (std::uint64_t k = 0; k < c.n && !stopped(); k++, op++) {
			const unsigned j = unsigned(k & 1);
			ibv_sge sge{};
			ibv_send_wr wr{}, *bad = nullptr;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr_id = op;
			sge.lkey = s.mr->lkey;
			sge.length = std::uint32_t(c.size);
			ibv_wc_opcode want;
			if (mode == Mode::Read) {
				sge.addr = reinterpret_cast<std::uint64_t>(s.buf + c.off);
				wr.opcode = IBV_WR_RDMA_READ;
				wr.wr.rdma.remote_addr = raddr + j * kRegion + c.off;
				want = IBV_WC_RDMA_READ;
			} else {
				sge.addr = reinterpret_cast<std::uint64_t>(s.buf + j * kRegion + c.off);
				wr.wr.rdma.remote_addr = raddr + c.off;
				want = IBV_WC_RDMA_WRITE;
				if (mode == Mode::Write) {
					wr.opcode = IBV_WR_RDMA_WRITE;
				} else if (mode == Mode::WriteImm) {
					wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
					wr.imm_data = htonl(std::uint32_t(op));
				} else {
					wr.opcode = IBV_WR_SEND;
					want = IBV_WC_SEND;
				}
			}
			wr.wr.rdma.rkey = rkey;
			if (int ret = ibv_post_send(s.qp, &wr, &bad)) {
				fail("post_send: %s", std::strerror(ret));
				break;
			}
			if (!s.poll_one(want))
				break;
			if (mode == Mode::Read) {
				check(s.buf, ref[j], c, op, "completion seen");
				if (!wait_for([&] { return watched.load(std::memory_order_acquire) > op; },
					      "the watcher"))
					break;
			} else if (!wait_for([&] { return g->ack.load(std::memory_order_acquire) > op; },
					     "the target's check")) {
				break;
			}
			g->ops.store(op + 1, std::memory_order_relaxed);
			auto now = std::chrono::steady_clock::now();
			if (now - last_report > std::chrono::seconds(5)) {
				last_report = now;
				std::printf("  %llu/%llu operations (%zu B messages now), %llu torn\n",
					    (unsigned long long)(op + 1), (unsigned long long)total,
					    c.size, (unsigned long long)g->torn.load());
				std::fflush(stdout);
			}
		}
	}
	g->finished = 1;
}

const char *mode_name(Mode m)
{
	switch (m) {
	case Mode::Write: return "write";
	case Mode::WriteImm: return "write_imm";
	case Mode::Send: return "send";
	case Mode::Read: return "read";
	}
	return "?";
}

} // namespace

int main(int argc, char **argv)
{
	Mode mode = Mode::Write;
	std::uint64_t total = 1000000;
	bool threads = false, expect_torn = false;
	int seconds = 600;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--mode" && i + 1 < argc) {
			std::string m = argv[++i];
			if (m == "write") mode = Mode::Write;
			else if (m == "write_imm") mode = Mode::WriteImm;
			else if (m == "send") mode = Mode::Send;
			else if (m == "read") mode = Mode::Read;
			else { std::fprintf(stderr, "unknown mode %s\n", m.c_str()); return 2; }
		} else if (a == "--total" && i + 1 < argc) {
			total = std::strtoull(argv[++i], nullptr, 0);
		} else if (a == "--seconds" && i + 1 < argc) {
			seconds = std::atoi(argv[++i]);
		} else if (a == "--threads") {
			threads = true;
		} else if (a == "--expect-torn") {
			expect_torn = true;
		} else {
			std::fprintf(stderr, "usage: %s [--mode write|write_imm|send|read] [--total N] "
					     "[--threads] [--seconds S] [--expect-torn]\n", argv[0]);
			return 2;
		}
	}
	void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	g = new (mem) Shared{};
	g_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	const std::vector<Case> cases = make_cases(total);
	std::uint64_t planned = 0;
	for (const Case &c : cases)
		planned += c.n;
	std::printf("placement %s (%s): %llu operations, %zu cases of 1 B to 4 MiB\n", mode_name(mode),
		    threads ? "two threads, one process" : "two processes", (unsigned long long)planned,
		    cases.size());
	std::fflush(stdout);
	auto t0 = std::chrono::steady_clock::now();
	if (threads) {
		std::thread t([&] { run_target(mode, cases); });
		run_initiator(mode, cases, planned);
		t.join();
	} else {
		pid_t kids[2];
		for (int role = 0; role < 2; role++) {
			kids[role] = fork();
			if (kids[role] < 0)
				return 1;
			if (kids[role] == 0) {
				if (role == 0)
					run_target(mode, cases);
				else
					run_initiator(mode, cases, planned);
				std::fflush(stdout);
				_exit(0);
			}
		}
		for (int role = 0; role < 2; role++) {
			int st = 0;
			waitpid(kids[role], &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				fail("%s process ended with status 0x%x", role ? "initiator" : "target", st);
		}
	}
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	const std::uint64_t ops = g->ops.load(), torn = g->torn.load();
	const bool ok = !g->failed.load() && ops == planned && ops >= total &&
			(expect_torn ? torn > 0 : torn == 0);
	std::printf("placement %s: %llu operations in %.1f s, %llu torn%s%s\n", mode_name(mode),
		    (unsigned long long)ops, secs, (unsigned long long)torn,
		    g->failed.load() ? ", failed: " : "", g->failed.load() ? g->why : "");
	std::printf("%s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
