// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid with real processes: lifetime on SIGKILL, XRC across processes,
// many clients, other uids, hostile clients, limits, start on demand, the
// `uabi` tool.
#include "daemon_harness.hpp"

#include "../../newapi/daemon/wire.hpp"

#include <rdma/uabi_sw.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <random>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <grp.h>
#include <thread>
#include <unistd.h>

namespace uabi::dtest {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

Context open_ctx()
{
	auto c = Context::open(Backend::Daemon);
	if (!c) {
		ADD_FAILURE() << "Context::open(daemon): " << std::strerror(c.error());
		std::abort();
	}
	return std::move(*c);
}

// A raw connection that has said hello (kind) or not (kind 0).
int raw_connect(const std::string &sock, std::uint32_t kind = daemon::kHelloContext)
{
	int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	std::strcpy(sa.sun_path, sock.c_str());
	if (::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0) {
		int e = errno;
		::close(fd);
		return -e;
	}
	if (kind) {
		auto r = daemon::admin_call(fd, daemon::kOpHello, kind, nullptr, 0);
		if (!r) {
			::close(fd);
			return -r.error();
		}
	}
	return fd;
}

std::vector<std::byte> counters_msg()
{
	Message m;
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS, kDeviceHandle);
	c.add_out<uabi_counters>(UABI_ATTR_DEVICE_COUNTERS);
	m.add(std::move(c));
	return m.raw();
}

// Sends buf on a raw socket and waits for one reply; returns its length or
// -errno (0 = connection closed).
ssize_t raw_roundtrip(int fd, const void *buf, std::size_t len, std::vector<std::byte> &reply,
		      const int *fds = nullptr, std::size_t nfds = 0)
{
	ssize_t s = daemon::wire::send_fds(fd, buf, len, fds, nfds, 0);
	if (s < 0)
		return s;
	pollfd p{fd, POLLIN, 0};
	if (::poll(&p, 1, 5000) <= 0)
		return -ETIMEDOUT;
	reply.assign(UABI_MAX_MSG_BYTES + 16, std::byte{0});
	std::vector<int> rfds;
	ssize_t n = daemon::wire::recv_fds(fd, reply.data(), reply.size(), rfds, 0, nullptr);
	daemon::wire::close_all(rfds);
	if (n >= 0)
		reply.resize(std::size_t(n));
	return n;
}

std::int32_t reply_status(const std::vector<std::byte> &r)
{
	uabi_msg_hdr h{};
	std::memcpy(&h, r.data(), std::min(r.size(), sizeof(h)));
	return h.status;
}

// Proof that the daemon and the other clients are fine.
void expect_serving(Context &ctx)
{
	auto pd = ctx.alloc_pd();
	ASSERT_TRUE(pd) << std::strerror(pd.error());
	EXPECT_TRUE(ctx.dealloc_pd(*pd));
	Context fresh = open_ctx();
	auto c = fresh.counters();
	ASSERT_TRUE(c) << std::strerror(c.error());
}

uabi_sw_stats sw_stats(Context &ctx)
{
	Command c(UABI_SW_OBJ_PORT, UABI_SW_PORT_STATS);
	OutAttr o = c.add_out<uabi_sw_stats>(UABI_SW_ATTR_STATS);
	auto m = ctx.call(std::move(c));
	uabi_sw_stats s{};
	if (m)
		m->read(0, o, s);
	return s;
}

bool set_port_state(Context &ctx, std::uint32_t state)
{
	Command c(UABI_SW_OBJ_PORT, UABI_SW_PORT_SET_STATE);
	c.add_in(UABI_SW_ATTR_PORT_NUM, std::uint32_t(1)).add_in(UABI_SW_ATTR_PORT_STATE, state);
	return bool(ctx.call(std::move(c)));
}

std::string temp_file(const std::string &dir, const char *name)
{
	std::string p = dir + "/" + name;
	int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	::close(fd);
	return p;
}

// ---------------------------------------------------------------- basics

TEST_F(DaemonTest, ContextRoundTripAndCloseIsSynchronous)
{
	start_daemon();
	{
		Context ctx = open_ctx();
		EXPECT_STREQ(ctx.transport().name(), "daemon");
		auto pd = ctx.alloc_pd();
		ASSERT_TRUE(pd);
		auto cq = ctx.create_cq(8);
		ASSERT_TRUE(cq);
		auto c = ctx.counters();
		ASSERT_TRUE(c);
		EXPECT_EQ(c->contexts, 1u);
		EXPECT_EQ(c->context[UABI_OBJ_PD], 1u);
		EXPECT_EQ(live_objects(), 2u);
		EXPECT_EQ(contexts(), 1u);
	}
	// The Context is gone: so is its context in the daemon, already.
	EXPECT_EQ(contexts(), 0u);
	EXPECT_EQ(live_objects(), 0u);
}

TEST_F(DaemonTest, HostRulesMatchInproc)
{
	start_daemon();
	Context ctx = open_ctx();
	// Too short / too long: EINVAL before anything is sent.
	std::vector<std::byte> tiny(8);
	EXPECT_EQ(ctx.execute_raw(tiny), -EINVAL);
	std::vector<std::byte> huge(UABI_MAX_MSG_BYTES + 8);
	EXPECT_EQ(ctx.execute_raw(huge), -EINVAL);
	// Bad magic: the core's answer, status written back.
	auto m = counters_msg();
	m[0] = std::byte{0};
	EXPECT_EQ(ctx.execute_raw(m), -EINVAL);
	// A maximal message goes through (and is answered by the core).
	auto big = counters_msg();
	big.resize(UABI_MAX_MSG_BYTES);
	uabi_msg_hdr h;
	std::memcpy(&h, big.data(), sizeof(h));
	h.length = UABI_MAX_MSG_BYTES;
	std::memcpy(big.data(), &h, sizeof(h));
	EXPECT_EQ(ctx.execute_raw(big), -EINVAL); // bytes after the last command
	expect_serving(ctx);
}

TEST_F(DaemonTest, EventQueueFdsCrossTheSocket)
{
	start_daemon();
	Context ctx = open_ctx();
	int before = fd_count(getpid());
	auto ch = ctx.create_comp_channel();
	ASSERT_TRUE(ch);
	ASSERT_GE(ch->fd, 0);
	EXPECT_GE(::fcntl(ch->fd, F_GETFD), 0);
	char link[256] = {};
	std::string fdpath = "/proc/self/fd/" + std::to_string(ch->fd);
	ASSERT_GT(::readlink(fdpath.c_str(), link, sizeof(link) - 1), 0);
	EXPECT_NE(std::string(link).find("eventfd"), std::string::npos) << link;

	auto aq = ctx.create_async_event_queue();
	ASSERT_TRUE(aq);
	// An event raised in the daemon wakes our copy of the fd.
	ASSERT_TRUE(set_port_state(ctx, 1)); // DOWN
	pollfd p{aq->fd, POLLIN, 0};
	EXPECT_EQ(::poll(&p, 1, 2000), 1);
	auto ev = ctx.get_async_event(aq->handle);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->element, 1u);
	ASSERT_TRUE(set_port_state(ctx, 4)); // ACTIVE again
	while (ctx.get_async_event(aq->handle)) {
	}

	// Destroying the object closes our copy, as the core closes its own.
	int chfd = ch->fd;
	ASSERT_TRUE(ctx.destroy_comp_channel(ch->handle));
	EXPECT_LT(::fcntl(chfd, F_GETFD), 0);
	ASSERT_TRUE(ctx.destroy_async_event_queue(aq->handle));

	// A rolled-back chain hands out no fd.
	Chain c(UABI_MSG_F_ALL_OR_NOTHING);
	auto pch = c.create_comp_channel();
	c.create_cq({.cqe = 0}); // fails: cqe 0
	EXPECT_FALSE(c.execute(ctx));
	EXPECT_EQ(c.get(pch).error(), ECANCELED);
	EXPECT_EQ(fd_count(getpid()), before);

	// Create and destroy in one chain: nothing left behind either.
	Chain c2;
	auto pch2 = c2.create_comp_channel();
	c2.destroy(UABI_OBJ_COMP_CHANNEL, pch2);
	EXPECT_TRUE(c2.execute(ctx));
	EXPECT_EQ(fd_count(getpid()), before);
	EXPECT_EQ(live_objects(), 0u);
}

TEST_F(DaemonTest, XrcdFdRules)
{
	start_daemon();
	Context ctx = open_ctx();
	// -1: a private domain; a closed fd: EBADF, as fstat() says in-process.
	auto anon = ctx.open_xrcd(-1, 0);
	ASSERT_TRUE(anon);
	EXPECT_EQ(ctx.open_xrcd(987, UABI_XRCD_O_CREAT).error(), EBADF);
	std::string f = temp_file(dir_, "x");
	int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	// The payload the caller wrote is what it reads back.
	Message m;
	Command c(UABI_OBJ_XRCD, UABI_METHOD_CREATE);
	c.add_fd(UABI_ATTR_XRCD_FD, fd)
		.add_in(UABI_ATTR_XRCD_OFLAGS, std::uint32_t(UABI_XRCD_O_CREAT));
	m.add(std::move(c));
	ASSERT_TRUE(ctx.execute(m));
	std::int32_t v;
	std::memcpy(&v,
		    m.raw().data() + sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr) +
			    sizeof(uabi_attr),
		    sizeof(v));
	EXPECT_EQ(v, fd);
	// Without O_CREAT it opens the existing domain; another file has none.
	EXPECT_TRUE(ctx.open_xrcd(fd, 0));
	std::string g = temp_file(dir_, "y");
	int gfd = ::open(g.c_str(), O_RDONLY | O_CLOEXEC);
	EXPECT_EQ(ctx.open_xrcd(gfd, 0).error(), EAGAIN);
	::close(fd);
	::close(gfd);
	// The daemon closed the fds it received.
	EXPECT_LE(fd_count(daemon_pid_), 16);
}

// -------------------------------------------------- SIGKILL at random points

TEST_F(DaemonTest, SigkillAtRandomPointReleasesEverything)
{
	start_daemon();
	Context watcher = open_ctx();
	const std::uint32_t base = live_objects();
	const uabi_sw_stats base_sw = sw_stats(watcher);
	std::mt19937 rng(unsigned(std::chrono::system_clock::now().time_since_epoch().count()));
	for (int round = 0; round < 12; round++) {
		Child child([](int, int out) {
			Context ctx = open_ctx();
			static char buf[1 << 16];
			put(out, 1);
			for (unsigned i = 0;; i++) {
				auto pd = ctx.alloc_pd();
				auto mr = ctx.reg_mr(*pd, buf, sizeof(buf), 1);
				auto cq = ctx.create_cq(16);
				auto ch = ctx.create_comp_channel();
				auto qp = ctx.create_qp(rc_qp(*pd, cq->handle));
				if (!pd || !mr || !cq || !qp || !ch)
					return 1;
				if (i % 3 == 0) { // keep some, drop some
					if (!ctx.destroy_qp(qp->handle) ||
					    !ctx.destroy_cq(cq->handle) ||
					    !ctx.dereg_mr(mr->handle) ||
					    !ctx.destroy_comp_channel(ch->handle))
						return 2;
				}
			}
		});
		std::uint64_t ready;
		ASSERT_TRUE(child.recv(ready));
		std::this_thread::sleep_for(milliseconds(1 + rng() % 40));
		child.kill(SIGKILL);
		child.wait();
		ASSERT_TRUE(eventually([&] { return contexts() == 1 && live_objects() == base; }))
			<< "round " << round << ": " << live_objects() << " objects, " << contexts()
			<< " contexts";
	}
	uabi_sw_stats sw = sw_stats(watcher);
	EXPECT_EQ(sw.qpns_in_use, base_sw.qpns_in_use);
	EXPECT_EQ(sw.mr_keys_in_use, base_sw.mr_keys_in_use);
	EXPECT_EQ(sw.cqns_in_use, base_sw.cqns_in_use);
	EXPECT_FALSE(process_gone(daemon_pid_));
	// The daemon holds no fd of the dead (eventfds of their channels).
	EXPECT_LE(fd_count(daemon_pid_), 16);
}

// ------------------------------------------------------------------- XRC

TEST_F(DaemonTest, TwoProcessesShareAnXrcdThroughTheSameFile)
{
	start_daemon();
	std::string f1 = temp_file(dir_, "xrc1"), f2 = temp_file(dir_, "xrc2");
	// A creates the domain of f1 and a receive QP in it.
	Child a([f1](int in, int out) {
		Context ctx = open_ctx();
		int fd = ::open(f1.c_str(), O_RDONLY | O_CLOEXEC);
		auto x = ctx.open_xrcd(fd, UABI_XRCD_O_CREAT);
		if (!x)
			return 1;
		std::uint32_t qpn = UABI_XRC_QPN_CREATE;
		uabi_qp_init init{};
		init.qp_type = UABI_QPT_XRC_RECV;
		if (!ctx.register_xrc_rcv_qp(*x, qpn, init))
			return 2;
		put(out, qpn);
		std::uint64_t done;
		get(in, done, 20000);
		return 0;
	});
	std::uint64_t qpn;
	ASSERT_TRUE(a.recv(qpn));
	// B opens the same file: the same domain (it exists: no O_CREAT
	// needed) holds A's QP.
	Child b([f1, qpn](int, int) {
		Context ctx = open_ctx();
		int fd = ::open(f1.c_str(), O_RDONLY | O_CLOEXEC);
		auto x = ctx.open_xrcd(fd, 0);
		if (!x)
			return 1;
		std::uint32_t q = std::uint32_t(qpn);
		if (!ctx.register_xrc_rcv_qp(*x, q))
			return 2;
		return q == qpn ? 0 : 3;
	});
	EXPECT_TRUE(b.exited_ok());
	// C opens a third file: a different domain, without A's QP.
	Child c([f2, qpn](int, int) {
		Context ctx = open_ctx();
		int fd = ::open(f2.c_str(), O_RDONLY | O_CLOEXEC);
		if (ctx.open_xrcd(fd, 0).error() != EAGAIN) // no such domain yet
			return 1;
		auto x = ctx.open_xrcd(fd, UABI_XRCD_O_CREAT);
		if (!x)
			return 2;
		std::uint32_t q = std::uint32_t(qpn);
		return ctx.register_xrc_rcv_qp(*x, q).error() == EINVAL ? 0 : 3;
	});
	EXPECT_TRUE(c.exited_ok());
	a.send(1);
	EXPECT_TRUE(a.exited_ok());
}

TEST_F(DaemonTest, XrcReceiveQpOutlivesItsCreator)
{
	start_daemon();
	std::string f = temp_file(dir_, "xrc");
	Child a([f](int in, int out) {
		Context ctx = open_ctx();
		int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
		auto x = ctx.open_xrcd(fd, UABI_XRCD_O_CREAT);
		std::uint32_t qpn = UABI_XRC_QPN_CREATE;
		uabi_qp_init init{};
		init.qp_type = UABI_QPT_XRC_RECV;
		if (!x || !ctx.register_xrc_rcv_qp(*x, qpn, init))
			return 1;
		put(out, qpn);
		std::uint64_t never;
		get(in, never, 60000);
		return 0;
	});
	std::uint64_t q64;
	ASSERT_TRUE(a.recv(q64));
	std::uint32_t qpn = std::uint32_t(q64);

	Context b = open_ctx();
	int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
	auto x = b.open_xrcd(fd, 0);
	ASSERT_TRUE(x);
	std::uint32_t q = qpn;
	ASSERT_TRUE(b.register_xrc_rcv_qp(*x, q));

	a.kill(SIGKILL);
	a.wait();
	ASSERT_TRUE(eventually([&] { return contexts() == 1; }));

	// The QP is still there, and B drives it.
	auto attr = b.query_xrc_rcv_qp(*x, qpn);
	ASSERT_TRUE(attr) << std::strerror(attr.error());
	EXPECT_EQ(attr->qp_state, unsigned(UABI_QPS_RESET));
	uabi_qp_attr init{};
	init.qp_state = UABI_QPS_INIT;
	init.port_num = 1;
	ASSERT_TRUE(b.modify_xrc_rcv_qp(*x, qpn, init,
					UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
						UABI_QP_ACCESS_FLAGS));
	attr = b.query_xrc_rcv_qp(*x, qpn);
	ASSERT_TRUE(attr);
	EXPECT_EQ(attr->qp_state, unsigned(UABI_QPS_INIT));

	// The last registration takes the QP with it.
	ASSERT_TRUE(b.unregister_xrc_rcv_qp(*x, qpn));
	EXPECT_EQ(b.query_xrc_rcv_qp(*x, qpn).error(), EINVAL);
	EXPECT_EQ(b.unregister_xrc_rcv_qp(*x, qpn).error(), EINVAL);
	Context fresh = open_ctx();
	EXPECT_EQ(sw_stats(fresh).qpns_in_use, 0u);
	::close(fd);
}

// ------------------------------------------------------------ many clients

TEST_F(DaemonTest, TwoHundredConcurrentClients)
{
	start_daemon();
	constexpr int kProcs = 50, kThreads = 4; // 200 clients
	auto workload = [](int ms) {
		return [ms](int in, int out) {
			std::uint64_t go;
			if (!get(in, go, 20000))
				return 9;
			std::atomic<int> errors{0};
			std::atomic<long> ops{0};
			std::vector<std::thread> ts;
			for (int t = 0; t < kThreads; t++)
				ts.emplace_back([&] {
					auto c = Context::open(Backend::Daemon);
					if (!c) {
						errors++;
						return;
					}
					static char buf[4096];
					auto end = steady_clock::now() + milliseconds(ms);
					while (steady_clock::now() < end) {
						auto pd = c->alloc_pd();
						auto mr = c->reg_mr(*pd, buf, sizeof(buf), 1);
						auto cq = c->create_cq(8);
						auto qp = c->create_qp(rc_qp(*pd, cq->handle));
						if (!pd || !mr || !cq || !qp ||
						    !c->destroy_qp(qp->handle) ||
						    !c->destroy_cq(cq->handle) ||
						    !c->dereg_mr(mr->handle) || !c->dealloc_pd(*pd))
							errors++;
						ops++;
					}
				});
			for (auto &t : ts)
				t.join();
			put(out, std::uint64_t(ops.load()));
			return errors.load() ? 1 : 0;
		};
	};
	auto round = [&](int procs, int ms) {
		std::vector<Child> kids;
		for (int i = 0; i < procs; i++)
			kids.emplace_back(workload(ms));
		for (auto &k : kids)
			k.send(1);
		std::uint64_t total = 0;
		for (auto &k : kids) {
			std::uint64_t ops = 0;
			EXPECT_TRUE(k.recv(ops, 30000));
			total += ops;
			EXPECT_TRUE(k.exited_ok());
		}
		return total;
	};
	round(kProcs, 300); // warm up: the allocator reaches its working set
	ASSERT_TRUE(eventually([&] { return contexts() == 0; }));
	long rss0 = rss_kb(daemon_pid_), shm0 = rss_kb(daemon_pid_, "RssShmem");
	std::uint64_t ops = round(kProcs, 2500);
	EXPECT_GT(ops, 1000u);
	ASSERT_TRUE(eventually([&] { return contexts() == 0; }));
	EXPECT_EQ(live_objects(), 0u);
	long rss1 = rss_kb(daemon_pid_), shm1 = rss_kb(daemon_pid_, "RssShmem");
	// VmRSS also counts the pages of the device's shared arena the daemon
	// has touched, which grows as round-robin numbers reach new slots up to
	// the arena's size: that is device memory, not a leak.  What is left
	// must stay small (sanitizer builds keep freed memory in quarantine).
	const long bound = UABI_TEST_SANITIZED ? 256 * 1024 : 4 * 1024;
	long growth = (rss1 - rss0) - (shm1 - shm0);
	EXPECT_LT(growth, bound) << "VmRSS " << rss0 << " kB -> " << rss1 << " kB, RssShmem "
				 << shm0 << " kB -> " << shm1 << " kB";
	RecordProperty("ops", std::to_string(ops));
	RecordProperty("vmrss_kb", std::to_string(rss0) + " -> " + std::to_string(rss1));
	RecordProperty("rssshmem_kb", std::to_string(shm0) + " -> " + std::to_string(shm1));
	std::printf("200 clients: %llu create/destroy rounds (PD, MR, CQ, QP) in 2.5 s; daemon "
		    "VmRSS %ld -> %ld kB, of which shared arena %ld -> %ld kB\n",
		    (unsigned long long)ops, rss0, rss1, shm0, shm1);
}

// ---------------------------------------------------------------- other uid

constexpr uid_t kNobody = 65534;

// Runs fn as nobody in a child; its return value is the exit status.
Child as_nobody(std::function<int()> fn)
{
	return Child([fn](int, int) {
		if (setgroups(0, nullptr) < 0 || setgid(kNobody) < 0 || setuid(kNobody) < 0)
			return 90;
		return fn();
	});
}

TEST_F(DaemonTest, AnotherUidCannotConnectOrSeeOurObjects)
{
	// make test runs as root; a skip here would hide an untested rule.
	ASSERT_EQ(geteuid(), 0u) << "needs root to switch to uid 65534";
	start_daemon();
	Context mine = open_ctx();
	auto pd = mine.alloc_pd();
	auto cq = mine.create_cq(4);
	ASSERT_TRUE(pd && cq);
	auto p = paths();

	// 1. The socket's directory is 0700: not even reachable.
	Child c1 = as_nobody([p] {
		auto c = daemon::connect(p, daemon::kHelloContext);
		return !c && c.error() == EACCES ? 0 : 1;
	});
	EXPECT_TRUE(c1.exited_ok());

	// 2. Lax permissions do not help: the daemon checks SO_PEERCRED.
	ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
	ASSERT_EQ(::chmod(socket_.c_str(), 0666), 0);
	Child c2 = as_nobody([p] {
		auto c = daemon::connect(p, daemon::kHelloContext);
		if (c || c.error() != EACCES)
			return 1;
		auto a = daemon::connect(p, daemon::kHelloAdmin);
		return !a && a.error() == EACCES ? 0 : 2;
	});
	EXPECT_TRUE(c2.exited_ok());
	EXPECT_EQ(live_objects(), 2u);

	// 3. A --shared daemon takes every uid, and each sees its own only.
	stop_daemon();
	start_daemon({"--shared"});
	Context root_ctx = open_ctx();
	ASSERT_TRUE(root_ctx.alloc_pd());
	ASSERT_TRUE(root_ctx.create_cq(4));
	Child c3 = as_nobody([p] {
		auto ctx = Context::open(Backend::Daemon);
		if (!ctx)
			return 1;
		// Handles are per context: root's 1 and 2 are not ours.
		if (ctx->dealloc_pd(1).error() != ENOENT || ctx->destroy_cq(2).error() != ENOENT)
			return 2;
		auto own = ctx->alloc_pd();
		if (!own)
			return 3;
		auto a = daemon::connect(p, daemon::kHelloAdmin);
		if (!a)
			return 4;
		auto st = daemon::query_status(*a);
		auto objs = daemon::query_objects(*a);
		if (!st || !objs)
			return 5;
		if (!(st->daemon.flags & daemon::kCallerFiltered) || st->daemon.contexts != 1)
			return 6;
		for (const auto &e : *objs)
			if (e.uid != kNobody)
				return 7;
		if (objs->size() != 1)
			return 8;
		// Nor may it stop the daemon.
		auto sd = daemon::shutdown(std::move(*a), 200);
		return !sd && sd.error() == EPERM ? 0 : 10;
	});
	EXPECT_TRUE(c3.exited_ok());
	// Root sees everything, its objects untouched.
	auto objs = daemon::query_objects(*admin());
	ASSERT_TRUE(objs);
	int roots = 0;
	for (const auto &e : *objs)
		roots += e.uid == 0;
	EXPECT_EQ(roots, 2);
}

// One uid cannot take every context of a --shared daemon: it gets EUSERS
// at its own limit while other uids still get theirs.
TEST_F(DaemonTest, PerUidContextLimitOnASharedDaemon)
{
	ASSERT_EQ(geteuid(), 0u) << "needs root to switch to uid 65534";
	start_daemon({"--shared", "--max-contexts", "8", "--max-contexts-per-uid", "3"});
	ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0); // the test's directory, for nobody
	std::vector<Context> ctxs;
	for (int i = 0; i < 3; i++)
		ctxs.push_back(open_ctx());
	auto fourth = Context::open(Backend::Daemon);
	ASSERT_FALSE(fourth);
	EXPECT_EQ(fourth.error(), EUSERS);
	EXPECT_NE(read_file(paths().log).find("per-uid context limit 3 reached"),
		  std::string::npos);
	// Another uid is not affected by root's three, and has three of its own.
	Child other = as_nobody([] {
		std::vector<Context> mine;
		for (int i = 0; i < 3; i++) {
			auto c = Context::open(Backend::Daemon);
			if (!c)
				return 1 + i;
			mine.push_back(std::move(*c));
		}
		auto c = Context::open(Backend::Daemon);
		return !c && c.error() == EUSERS ? 0 : 10;
	});
	EXPECT_TRUE(other.exited_ok());
	// A context that closes gives its uid's place back.
	ctxs.pop_back();
	EXPECT_TRUE(eventually([&] { return bool(Context::open(Backend::Daemon)); }));

	// Without --shared one uid may hold every context (the private daemon
	// serves only its owner).
	ctxs.clear();
	stop_daemon();
	start_daemon({"--max-contexts", "6"});
	for (int i = 0; i < 6; i++)
		ctxs.push_back(open_ctx());
	auto seventh = Context::open(Backend::Daemon);
	ASSERT_FALSE(seventh);
	EXPECT_EQ(seventh.error(), EUSERS);
}

// ---------------------------------------------------------------- imports

// A connection that imports a context (ibv_import_device: the fd of a
// context, passed with the hello) shares its objects; the context is
// counted once and closes with its last connection.
TEST_F(DaemonTest, AnImportedContextIsSharedAndClosesWithItsLastConnection)
{
	start_daemon();
	auto a = std::make_unique<Context>(open_ctx());
	auto pd = a->alloc_pd();
	ASSERT_TRUE(pd);
	int fd = a->context_fd();
	ASSERT_GE(fd, 0) << std::strerror(errno);
	EXPECT_EQ(a->context_fd(), fd) << "asked once, then kept";
	int copy = ::dup(fd);
	ASSERT_GE(copy, 0);
	auto b = Context::import(copy);
	ASSERT_TRUE(b) << std::strerror(b.error());
	EXPECT_EQ(b->context_fd(), copy);
	// One context, two connections: handles are the same.
	EXPECT_TRUE(b->query_pd(*pd));
	auto cq = b->create_cq(4);
	ASSERT_TRUE(cq);
	EXPECT_EQ(contexts(), 1u);
	EXPECT_EQ(live_objects(), 2u) << "PD and CQ, counted once";
	auto objs = daemon::query_objects(*admin());
	ASSERT_TRUE(objs);
	EXPECT_EQ(objs->size(), 2u) << "listed once";
	// The opener leaves: the context stays with the importer.
	a.reset();
	EXPECT_EQ(contexts(), 1u);
	EXPECT_TRUE(b->query_pd(*pd));
	EXPECT_TRUE(b->destroy_cq(cq->handle));
	// The importer leaves: it closes, its objects go.
	b = make_error(EIO);
	EXPECT_EQ(contexts(), 0u);
	EXPECT_EQ(live_objects(), 0u);
	// Its fd names nothing any more.
	auto late = daemon::connect(paths(), daemon::kHelloImport, fd);
	EXPECT_FALSE(late);
}

// Holding a context's fd is not enough for another uid: it is refused
// (EACCES) as every other cross-user access, on a --shared daemon that
// lets it connect at all; an fd that is no context's is EINVAL.  The
// victim's objects are untouched.
TEST_F(DaemonTest, AnotherUidCannotImportAContextItHoldsTheFdOf)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root to switch to uid 65534";
	start_daemon({"--shared"});
	ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0); // the test's directory, for nobody
	Context mine = open_ctx();
	auto pd = mine.alloc_pd();
	ASSERT_TRUE(pd);
	const int fd = mine.context_fd(); // inherited by the child below
	ASSERT_GE(fd, 0);
	const std::uint32_t before = live_objects();
	auto p = paths();
	Child thief = as_nobody([p, fd] {
		auto c = daemon::connect(p, daemon::kHelloImport, fd);
		if (c || c.error() != EACCES)
			return 1;
		auto ctx = Context::import(::dup(fd));
		if (ctx || ctx.error() != EACCES)
			return 2;
		// A socket of its own names no context.
		int sv[2];
		if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
			return 3;
		auto fake = daemon::connect(p, daemon::kHelloImport, sv[0]);
		if (fake || fake.error() != EINVAL)
			return 4;
		// Nor does a hello that claims an import without an fd.
		auto none = daemon::connect(p, daemon::kHelloImport, -1);
		if (none || none.error() != EINVAL)
			return 5;
		// Its own context it may import.
		auto own = Context::open(Backend::Daemon);
		if (!own)
			return 6;
		auto again = Context::import(::dup(own->context_fd()));
		return again && again->alloc_pd() ? 0 : 7;
	});
	EXPECT_TRUE(thief.exited_ok());
	EXPECT_TRUE(mine.query_pd(*pd));
	EXPECT_EQ(live_objects(), before);
	EXPECT_NE(read_file(paths().log).find("refused import of a context of uid 0"),
		  std::string::npos);
}

// ------------------------------------------------------------------ hostile

TEST_F(DaemonTest, HostileInputsLeaveTheDaemonServing)
{
	start_daemon();
	Context good = open_ctx();
	std::vector<std::byte> reply;

	// Truncated: shorter than a message header.
	int fd = raw_connect(socket_);
	ASSERT_GE(fd, 0);
	std::byte tiny[7] = {};
	ASSERT_EQ(raw_roundtrip(fd, tiny, sizeof(tiny), reply), ssize_t(sizeof(uabi_msg_hdr)));
	EXPECT_EQ(reply_status(reply), -EINVAL);

	// Oversize: the record is cut at 256 KiB, the rest dropped.
	int sz = 1 << 20;
	::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz));
	std::vector<std::byte> over(UABI_MAX_MSG_BYTES + 4096);
	auto cm = counters_msg();
	std::memcpy(over.data(), cm.data(), cm.size());
	ssize_t n = raw_roundtrip(fd, over.data(), over.size(), reply);
	ASSERT_EQ(n, ssize_t(sizeof(uabi_msg_hdr)));
	EXPECT_EQ(reply_status(reply), -EINVAL);

	// Garbage and mutated messages: each gets an answer (or the end).
	std::mt19937 rng(42);
	for (int i = 0; i < 3000 && fd >= 0; i++) {
		std::vector<std::byte> g;
		if (i % 3 == 0) {
			g.resize(1 + rng() % 2000);
			for (auto &b : g)
				b = std::byte(rng());
		} else {
			g = counters_msg();
			for (int k = 0; k < 1 + int(rng() % 6); k++)
				g[rng() % g.size()] = std::byte(rng());
			if (rng() % 4 == 0)
				g.resize(rng() % (g.size() + 64));
			if (g.empty())
				g.resize(1);
		}
		n = raw_roundtrip(fd, g.data(), g.size(), reply);
		if (n <= 0) {
			::close(fd);
			fd = raw_connect(socket_);
		}
	}
	if (fd >= 0)
		::close(fd);
	expect_serving(good);

	// An fd flood: 253 fds on messages that have no fd attribute, and on
	// admin requests.
	fd = raw_connect(socket_);
	std::vector<int> many;
	for (unsigned i = 0; i < daemon::kMaxFds; i++)
		many.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
	for (int i = 0; i < 50; i++) {
		n = raw_roundtrip(fd, cm.data(), cm.size(), reply, many.data(), many.size());
		ASSERT_EQ(n, ssize_t(cm.size()));
		EXPECT_EQ(reply_status(reply), -EBADF);
	}
	daemon::wire::close_all(many);
	::close(fd);
	// The daemon closes its end of the connection when it sees ours go
	// (asynchronously: on a loaded machine, after a while).
	for (int i = 0; i < 200 && fd_count(daemon_pid_) > 16; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	EXPECT_LE(fd_count(daemon_pid_), 16);
	expect_serving(good);

	// A client that sends and never reads is disconnected.
	fd = raw_connect(socket_);
	int sent = 0;
	ssize_t last = 0;
	auto until = steady_clock::now() + milliseconds(10000);
	while (steady_clock::now() < until) {
		last = daemon::wire::send_fds(fd, cm.data(), cm.size(), nullptr, 0, MSG_DONTWAIT);
		if (last == -EAGAIN) {
			std::this_thread::sleep_for(milliseconds(1));
			continue;
		}
		if (last < 0)
			break;
		sent++;
	}
	EXPECT_TRUE(last == -EPIPE || last == -ECONNRESET) << "sent " << sent << ": " << last;
	::close(fd);
	expect_serving(good);

	// 1000 connections at once, some greeted, then dropped.
	std::vector<int> conns;
	for (int i = 0; i < 1000; i++) {
		int c = raw_connect(socket_,
				    i % 4 == 0 ? std::uint32_t(daemon::kHelloContext) : 0u);
		if (c >= 0)
			conns.push_back(c);
	}
	EXPECT_EQ(conns.size(), 1000u);
	expect_serving(good);
	for (int c : conns)
		::close(c);
	EXPECT_TRUE(eventually([&] { return contexts() == 1; }));
	expect_serving(good);
	EXPECT_FALSE(process_gone(daemon_pid_));
	std::string log = read_file(paths().log);
	EXPECT_NE(log.find("client is not reading"), std::string::npos);
}

// A request slot asked for on a raw connection, used as a hostile client
// would: any word, any time.
struct RawSlot {
	int sock = -1;
	int slot_fd = -1;
	int bell = -1;
	int page_fd = -1;
	daemon::SlotHdr *slot = nullptr;
	const daemon::DaemonPage *page = nullptr;
	std::uint32_t seq = 0;

	bool open(const std::string &path)
	{
		sock = raw_connect(path);
		if (sock < 0)
			return false;
		std::vector<int> fds;
		auto r = daemon::admin_call(sock, daemon::kOpSlot, 0, nullptr, 0, 5000, -1, &fds);
		if (!r || fds.size() != 3)
			return false;
		slot_fd = fds[0];
		bell = fds[1];
		page_fd = fds[2];
		void *p = ::mmap(nullptr, daemon::kSlotBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
				 slot_fd, 0);
		void *q = ::mmap(nullptr, daemon::kDaemonPageBytes, PROT_READ, MAP_SHARED, page_fd,
				 0);
		if (p == MAP_FAILED || q == MAP_FAILED)
			return false;
		slot = static_cast<daemon::SlotHdr *>(p);
		page = static_cast<const daemon::DaemonPage *>(q);
		return true;
	}
	std::byte *data() { return reinterpret_cast<std::byte *>(slot) + daemon::kSlotDataOff; }
	// Publishes whatever is in the slot with req_len = len, rings, waits
	// for the reply (false: none within timeout_ms).
	bool publish(std::uint32_t len, int timeout_ms = 5000)
	{
		slot->req_len = len;
		daemon::wire::store_release(&slot->req_seq, ++seq);
		std::uint64_t one = 1;
		(void)!::write(bell, &one, sizeof(one));
		auto until = steady_clock::now() + milliseconds(timeout_ms);
		while (daemon::wire::load_acquire(&slot->rep_seq) != seq)
			if (steady_clock::now() > until)
				return false;
		return true;
	}
	std::int32_t status()
	{
		uabi_msg_hdr h{};
		std::memcpy(&h, data(), sizeof(h));
		return h.status;
	}
	~RawSlot()
	{
		if (slot)
			::munmap(slot, daemon::kSlotBytes);
		if (page)
			::munmap(const_cast<daemon::DaemonPage *>(page), daemon::kDaemonPageBytes);
		for (int fd : {sock, slot_fd, bell, page_fd})
			if (fd >= 0)
				::close(fd);
	}
};

TEST_F(DaemonTest, RequestSlotCarriesCallsWithoutFds)
{
	start_daemon();
	auto t = DaemonTransport::open();
	ASSERT_TRUE(t) << std::strerror(t.error());
	ASSERT_TRUE((*t)->has_slot());
	Context ctx(std::move(*t));
	auto before = status().daemon.requests;
	for (int i = 0; i < 100; i++) {
		auto pd = ctx.alloc_pd();
		ASSERT_TRUE(pd) << std::strerror(pd.error());
		ASSERT_TRUE(ctx.dealloc_pd(*pd));
	}
	EXPECT_GE(status().daemon.requests, before + 200);
	// A message with fds still takes the socket and works.
	auto ch = ctx.create_comp_channel();
	ASSERT_TRUE(ch) << std::strerror(ch.error());
	EXPECT_GE(ch->fd, 0);
	// UABI_DAEMON_SLOT=0: the socket only.
	::setenv("UABI_DAEMON_SLOT", "0", 1);
	auto s = DaemonTransport::open();
	::unsetenv("UABI_DAEMON_SLOT");
	ASSERT_TRUE(s);
	EXPECT_FALSE((*s)->has_slot());
}

TEST_F(DaemonTest, HostileSlotLeavesTheDaemonServing)
{
	start_daemon();
	Context good = open_ctx();
	RawSlot rs;
	ASSERT_TRUE(rs.open(socket_));

	// The client cannot resize or seal the slot under uabid's mapping,
	// nor write the daemon page.
	EXPECT_EQ(::ftruncate(rs.slot_fd, 0), -1);
	EXPECT_EQ(errno, EPERM);
	EXPECT_EQ(::fcntl(rs.slot_fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	EXPECT_EQ(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rs.page_fd, 0),
		  MAP_FAILED);
	EXPECT_EQ(::mprotect(const_cast<daemon::DaemonPage *>(rs.page), 4096,
			     PROT_READ | PROT_WRITE),
		  -1);
	char b = 1;
	EXPECT_EQ(::pwrite(rs.page_fd, &b, 1, 0), -1);
	EXPECT_EQ(::ftruncate(rs.page_fd, 0), -1);
	// One slot per connection.
	std::vector<int> fds;
	auto again = daemon::admin_call(rs.sock, daemon::kOpSlot, 0, nullptr, 0, 5000, -1, &fds);
	EXPECT_FALSE(again);
	EXPECT_EQ(again ? 0 : again.error(), EBUSY);
	daemon::wire::close_all(fds);

	// A good request through the raw slot.
	auto cm = counters_msg();
	std::memcpy(rs.data(), cm.data(), cm.size());
	ASSERT_TRUE(rs.publish(std::uint32_t(cm.size())));
	EXPECT_EQ(rs.status(), 0);
	EXPECT_EQ(rs.slot->rep_len, cm.size());

	// Lengths out of bounds: an error, nothing read past the slot.
	// (kSlotCap + 1 up to the slot's end: longer than the longest
	// message, which uabid copied into a buffer of that size until a
	// client rewriting req_len found it.)
	for (std::uint32_t len : {0u, 7u, std::uint32_t(daemon::kSlotCap + 1),
				  std::uint32_t(daemon::kSlotBytes - daemon::kSlotDataOff), 0xffffffffu}) {
		ASSERT_TRUE(rs.publish(len)) << len;
		EXPECT_EQ(rs.status(), -EINVAL) << len;
		EXPECT_EQ(rs.slot->rep_len, sizeof(uabi_msg_hdr));
	}
	// An fd attribute: fds travel with the socket only.
	{
		auto m = counters_msg();
		uabi_attr a;
		const std::size_t aoff = sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr);
		std::memcpy(&a, m.data() + aoff, sizeof(a));
		a.flags |= UABI_ATTR_F_FD;
		std::memcpy(m.data() + aoff, &a, sizeof(a));
		std::memcpy(rs.data(), m.data(), m.size());
		ASSERT_TRUE(rs.publish(std::uint32_t(m.size())));
		EXPECT_EQ(rs.status(), -EINVAL);
	}
	// An input fd attribute that names no fd (XRCD OPEN's -1) is
	// executed as on the socket; one that names an fd is refused.
	for (int fd : {-1, 0}) {
		Message xm;
		Command c(UABI_OBJ_XRCD, UABI_METHOD_CREATE);
		c.add_fd(UABI_ATTR_XRCD_FD, fd).add_in(UABI_ATTR_XRCD_OFLAGS, std::uint32_t(0));
		xm.add(std::move(c));
		const auto &raw = xm.raw();
		std::memcpy(rs.data(), raw.data(), raw.size());
		ASSERT_TRUE(rs.publish(std::uint32_t(raw.size()))) << fd;
		EXPECT_EQ(rs.status(), fd < 0 ? 0 : -EINVAL) << fd;
	}
	// Garbage and mutated messages: each is answered.
	std::mt19937 rng(7);
	for (int i = 0; i < 2000; i++) {
		std::vector<std::byte> g = counters_msg();
		if (i % 3 == 0) {
			g.resize(sizeof(uabi_msg_hdr) + rng() % 2000);
			for (auto &x : g)
				x = std::byte(rng());
		} else {
			for (int k = 0; k < 1 + int(rng() % 6); k++)
				g[rng() % g.size()] = std::byte(rng());
		}
		std::memcpy(rs.data(), g.data(), g.size());
		ASSERT_TRUE(rs.publish(std::uint32_t(g.size()))) << i;
	}
	expect_serving(good);

	// Words held or scribbled on while uabid works: a thread rewrites the
	// message, its length and the sequence number as fast as it can, with
	// "waiting" set and the doorbell rung, for a second.
	std::atomic<bool> stop{false};
	std::thread scribbler([&] {
		std::mt19937 r(3);
		rs.slot->waiting = 1;
		while (!stop.load()) {
			rs.data()[r() % 256] = std::byte(r());
			rs.slot->req_len = r() % 3 ? std::uint32_t(cm.size()) : r();
			daemon::wire::store_release(&rs.slot->req_seq, r());
			std::uint64_t one = 1;
			if (r() % 64 == 0)
				(void)!::write(rs.bell, &one, sizeof(one));
		}
	});
	auto until = steady_clock::now() + milliseconds(1000);
	while (steady_clock::now() < until)
		expect_serving(good);
	stop = true;
	scribbler.join();

	// A doorbell counter at its maximum.
	std::uint64_t most = 0xfffffffffffffffeull;
	(void)!::write(rs.bell, &most, sizeof(most));
	expect_serving(good);

	// Clients that die mid-request: the request published, the process
	// gone before (or while) the reply is written.
	for (int i = 0; i < 20; i++) {
		Child c([&](int, int) {
			RawSlot mine;
			if (!mine.open(socket_))
				return 1;
			auto m = counters_msg();
			std::memcpy(mine.data(), m.data(), m.size());
			mine.slot->req_len = std::uint32_t(m.size());
			daemon::wire::store_release(&mine.slot->req_seq, 1);
			std::uint64_t one = 1;
			(void)!::write(mine.bell, &one, sizeof(one));
			if (i % 2)
				::kill(::getpid(), SIGKILL);
			return 0;
		});
		c.wait();
	}
	expect_serving(good);
	EXPECT_TRUE(eventually([&] { return contexts() == 2; })) << contexts();
	EXPECT_FALSE(process_gone(daemon_pid_));
}

TEST_F(DaemonTest, DaemonKilledWhileACallWaitsOnTheSlot)
{
	start_daemon();
	Context ctx = open_ctx();
	ASSERT_TRUE(ctx.alloc_pd());
	// A stopped daemon: the call waits (spin, then the futex) ...
	ASSERT_EQ(::kill(daemon_pid_, SIGSTOP), 0);
	std::atomic<int> err{-1};
	std::thread t([&] {
		auto pd = ctx.alloc_pd();
		err = pd ? 0 : pd.error();
	});
	std::this_thread::sleep_for(milliseconds(300));
	EXPECT_EQ(err.load(), -1);
	// ... and ends with ENOTCONN when the daemon is gone.
	::kill(daemon_pid_, SIGKILL);
	t.join();
	EXPECT_EQ(err.load(), ENOTCONN);
	int st;
	::waitpid(daemon_pid_, &st, 0);
	daemon_pid_ = -1;
}

TEST_F(DaemonTest, ContextLimitGivesAClearError)
{
	start_daemon({"--max-contexts", "4"});
	std::vector<Context> ctxs;
	for (int i = 0; i < 4; i++)
		ctxs.push_back(open_ctx());
	auto fifth = Context::open(Backend::Daemon);
	ASSERT_FALSE(fifth);
	EXPECT_EQ(fifth.error(), EUSERS);
	// Admin connections still work at the limit.
	EXPECT_EQ(contexts(), 4u);
	ctxs.pop_back();
	EXPECT_TRUE(Context::open(Backend::Daemon));
	EXPECT_NE(read_file(paths().log).find("context limit 4 reached"), std::string::npos);

	// Connections without a context are capped too (contexts + 64).
	std::vector<int> raw;
	for (int i = 0; i < 64 + 1; i++) {
		int fd = raw_connect(socket_, 0);
		ASSERT_GE(fd, 0);
		raw.push_back(fd);
	}
	// 3 contexts + 65 silent connections = 68: the next one is refused.
	auto over = daemon::connect(paths(), daemon::kHelloAdmin);
	ASSERT_FALSE(over);
	EXPECT_EQ(over.error(), EUSERS);
	for (int fd : raw)
		::close(fd);
	EXPECT_TRUE(eventually([&] { return bool(admin()); }));
}

TEST_F(DaemonTest, DaemonGoneMeansNotConnected)
{
	start_daemon();
	Context ctx = open_ctx();
	ASSERT_TRUE(ctx.alloc_pd());
	stop_daemon();
	EXPECT_EQ(ctx.alloc_pd().error(), ENOTCONN);
	EXPECT_EQ(ctx.counters().error(), ENOTCONN);
	auto again = Context::open(Backend::Daemon); // autostart is off here
	ASSERT_FALSE(again);
	EXPECT_TRUE(again.error() == ENOENT || again.error() == ECONNREFUSED);
}

// ------------------------------------------------------- start on demand

TEST_F(DaemonTest, StartedOnDemandOnceThenExitsWhenIdle)
{
	setenv("UABI_AUTOSTART", "1", 1);
	setenv("UABI_IDLE_EXIT", "1", 1);
	constexpr int kKids = 8;
	std::vector<Child> kids;
	for (int i = 0; i < kKids; i++)
		kids.emplace_back([](int in, int out) {
			std::uint64_t go;
			get(in, go);
			auto t = DaemonTransport::open();
			if (!t)
				return 1;
			put(out, std::uint64_t((*t)->daemon_pid()));
			get(in, go);
			return 0;
		});
	for (auto &k : kids) // all at once
		k.send(1);
	std::vector<std::uint64_t> pids;
	for (auto &k : kids) {
		std::uint64_t pid = 0;
		EXPECT_TRUE(k.recv(pid, 20000));
		pids.push_back(pid);
	}
	for (auto pid : pids)
		EXPECT_EQ(pid, pids[0]);
	pid_t daemon = pid_t(pids[0]);
	ASSERT_GT(daemon, 0);
	EXPECT_NE(read_file(paths().lock).find(std::to_string(daemon)), std::string::npos);
	for (auto &k : kids) {
		k.send(2);
		EXPECT_TRUE(k.exited_ok());
	}
	// No clients for 1 s: it exits and takes its socket away.
	EXPECT_TRUE(eventually([&] { return process_gone(daemon); }, 10000));
	struct stat st;
	EXPECT_NE(::stat(socket_.c_str(), &st), 0);
	// And the next client starts a new one.
	auto t = DaemonTransport::open();
	ASSERT_TRUE(t) << std::strerror(t.error());
	pid_t second = (*t)->daemon_pid();
	EXPECT_NE(second, daemon);
	t->reset();
	EXPECT_TRUE(eventually([&] { return process_gone(second); }, 10000));
}

TEST_F(DaemonTest, DefaultDirectoryMustBeOurs)
{
	// A /tmp/uabi-<uid> that someone else could write into is refused.
	unsetenv("UABI_SOCKET");
	unsetenv("XDG_RUNTIME_DIR");
	auto p = daemon::resolve_paths();
	ASSERT_TRUE(p);
	EXPECT_EQ(p->socket, "/tmp/uabi-" + std::to_string(geteuid()) + "/uabid.sock");
	EXPECT_TRUE(p->private_dir);
	daemon::Paths q = *p;
	q.dir = dir_ + "/lax";
	ASSERT_EQ(::mkdir(q.dir.c_str(), 0777), 0);
	ASSERT_EQ(::chmod(q.dir.c_str(), 0777), 0);
	EXPECT_EQ(daemon::ensure_dir(q).error(), EPERM);
	q.dir = dir_ + "/fresh";
	ASSERT_TRUE(daemon::ensure_dir(q));
	struct stat st;
	ASSERT_EQ(::stat(q.dir.c_str(), &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0700u);
	setenv("XDG_RUNTIME_DIR", dir_.c_str(), 1);
	p = daemon::resolve_paths();
	ASSERT_TRUE(p);
	EXPECT_EQ(p->socket, dir_ + "/uabi/uabid.sock");
	EXPECT_EQ(p->log, dir_ + "/uabi/uabid.log");
}

// -------------------------------------------------------------- the tool

TEST_F(DaemonTest, UabiTool)
{
	std::string out;
	// Not running: a clear message, exit status 3.
	EXPECT_EQ(run({UABI_CLI_PATH, "status"}, &out), 3);
	EXPECT_EQ(run({UABI_CLI_PATH, "--json", "status"}, &out), 3);
	EXPECT_NE(out.find("\"running\":false"), std::string::npos) << out;

	EXPECT_EQ(run({UABI_CLI_PATH, "daemon", "start"}, &out), 0) << out;
	EXPECT_NE(out.find("uabid started"), std::string::npos) << out;
	EXPECT_EQ(run({UABI_CLI_PATH, "daemon", "start"}, &out), 0) << out;
	EXPECT_NE(out.find("already running"), std::string::npos) << out;
	{
		Context ctx = open_ctx();
		auto pd = ctx.alloc_pd();
		static char buf[4096];
		auto mr = ctx.reg_mr(*pd, buf, sizeof(buf), 1);
		auto cq = ctx.create_cq(8);
		auto qp = ctx.create_qp(rc_qp(*pd, cq->handle));
		ASSERT_TRUE(pd && mr && cq && qp);
		EXPECT_EQ(run({UABI_CLI_PATH, "status"}, &out), 0);
		EXPECT_NE(out.find("contexts  1"), std::string::npos) << out;
		EXPECT_NE(out.find("qp 1"), std::string::npos) << out;
		EXPECT_EQ(run({UABI_CLI_PATH, "--json", "status"}, &out), 0);
		EXPECT_NE(out.find("\"contexts\":1"), std::string::npos) << out;
		EXPECT_EQ(run({UABI_CLI_PATH, "objects"}, &out), 0);
		char qpn[32];
		std::snprintf(qpn, sizeof(qpn), "qpn 0x%x RC RESET", qp->resp.qpn);
		EXPECT_NE(out.find(qpn), std::string::npos) << out;
		char lkey[32];
		std::snprintf(lkey, sizeof(lkey), "lkey 0x%x", mr->lkey);
		EXPECT_NE(out.find(lkey), std::string::npos) << out;
		EXPECT_EQ(run({UABI_CLI_PATH, "--json", "objects"}, &out), 0);
		EXPECT_NE(out.find("\"type\":\"qp\""), std::string::npos) << out;
		EXPECT_NE(out.find("\"state\":\"RESET\""), std::string::npos) << out;
	}
	// run: the environment a program gets.
	EXPECT_EQ(run({UABI_CLI_PATH, "run", "--", "/bin/sh", "-c",
		       "echo $UABI_BACKEND $UABI_SOCKET"},
		      &out, {"UABI_BACKEND=auto"}),
		  0);
	EXPECT_EQ(out, "daemon " + socket_ + "\n");
	EXPECT_EQ(run({UABI_CLI_PATH, "run", "--", "/nonexistent/cmd"}, &out), 127);

	EXPECT_EQ(run({UABI_CLI_PATH, "daemon", "stop"}, &out), 0) << out;
	EXPECT_NE(out.find("uabid stopped"), std::string::npos) << out;
	EXPECT_EQ(run({UABI_CLI_PATH, "daemon", "stop"}, &out), 0) << out;
	EXPECT_NE(out.find("not running"), std::string::npos) << out;
	EXPECT_EQ(run({UABI_CLI_PATH, "bogus"}, &out), 2);
}

} // namespace
} // namespace uabi::dtest
