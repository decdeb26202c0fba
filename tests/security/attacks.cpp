// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The attacks of the trust-boundary issue (docs/security.md), as an
// unprivileged user beside a victim of another uid: on `uabid --shared` and
// on rdma_uabi.ko (tests/security/run_security.sh, the qemu guest).  Each
// check prints "ok N - what" or "not ok N - what"; the exit status is the
// number of failures (0: every attack got an errno or nothing).
//
//   attacks attacker [--victim-uid U] [--victim-qpn N] [--xrc-file PATH]
//                    [--open-xrc-file PATH]
//                    [--held-file F --checked-file G]
//           runs every attack of this process's uid (on uabid, while it
//           holds its flood of connections it creates F and waits for G)
//   attacks probe --seconds S
//           the victim's side of the fairness check: round trips of a cheap
//           call for S seconds, then their 99th percentile and maximum
//   attacks flood --seconds S
//           the attacker's side of it: chains of 60 maximal CQ creates, and
//           their destroys, for S seconds
//   attacks hold QPN_FILE STOP_FILE
//           a victim's QP: its number written to QPN_FILE, kept until
//           STOP_FILE exists
//   attacks drop-to UID CMD...
//           runs CMD as UID (setresgid/setresuid), for the scripts
//
// Backend: UABI_BACKEND (daemon: UABI_SOCKET names the shared daemon's
// socket; kernel: /dev/rdma_uabi).
#include <rdma/uabi_sw.h>
#include <uabi/client.hpp>
#include <uabi/transport_daemon.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <thread>
#include <atomic>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace uabi;

namespace {

int g_checks = 0, g_failed = 0;

__attribute__((format(printf, 2, 3))) void check(bool ok, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	++g_checks;
	if (!ok)
		++g_failed;
	std::printf("%sok %d - %s\n", ok ? "" : "not ", g_checks, what);
	std::fflush(stdout);
}

const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EINVAL: return "EINVAL";
	case EUSERS: return "EUSERS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	}
	static char buf[32];
	std::snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

template <class T>
int error_of(const Result<T> &r)
{
	return r ? 0 : r.error();
}

bool on_kernel()
{
	const char *b = std::getenv("UABI_BACKEND");
	return b && !std::strcmp(b, "kernel");
}

Context open_or_die()
{
	auto c = Context::open();
	if (!c) {
		std::printf("Bail out! cannot open a context: %s\n", std::strerror(c.error()));
		std::exit(100);
	}
	return std::move(*c);
}

// The caller's arena: both parts mapped as a client would, and the layout.
struct Arena {
	uabi_sw_arena_info info{};
	int ro_fd = -1, rw_fd = -1;
	const std::uint8_t *ro = nullptr;
	std::uint8_t *rw = nullptr;

	bool map(Context &ctx)
	{
		Command c(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_MAP);
		OutAttr fo = c.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_FD, kMandatory | UABI_ATTR_F_FD);
		OutAttr ro_ =
		    c.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_RW_FD, kMandatory | UABI_ATTR_F_FD);
		OutAttr io = c.add_out<uabi_sw_arena_info>(UABI_SW_ATTR_ARENA_INFO);
		auto m = ctx.call(std::move(c));
		if (!m || !m->read(0, fo, ro_fd) || !m->read(0, ro_, rw_fd) || !m->read(0, io, info))
			return false;
		void *a = mmap(nullptr, info.ro_size, PROT_READ, MAP_SHARED, ro_fd, 0);
		void *b = mmap(nullptr, info.rw_size, PROT_READ | PROT_WRITE, MAP_SHARED, rw_fd, 0);
		if (a == MAP_FAILED || b == MAP_FAILED)
			return false;
		ro = static_cast<const std::uint8_t *>(a);
		rw = static_cast<std::uint8_t *>(b);
		return true;
	}
	uabi_sw_cq_rw *cq_rw(std::uint32_t cqn) const
	{
		return reinterpret_cast<uabi_sw_cq_rw *>(rw + info.cqw_off) + (cqn - 1);
	}
	uabi_sw_srq_rw *srq_rw(std::uint32_t slot) const
	{
		return reinterpret_cast<uabi_sw_srq_rw *>(rw + info.srqw_off) + (slot - 1);
	}
	const uabi_sw_mr *mrs() const { return reinterpret_cast<const uabi_sw_mr *>(ro + info.mr_off); }
};

int driver_call(Context &ctx, std::uint16_t method, std::uint16_t attr, std::uint32_t v)
{
	Command c(UABI_SW_OBJ_ARENA, method);
	c.add_in(attr, v);
	return error_of(ctx.call(std::move(c)));
}

std::uint32_t srq_slot(Context &ctx, Handle srq)
{
	Command c(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_LOCATE_SRQ);
	c.add_in(UABI_SW_ATTR_SRQ, srq);
	OutAttr o = c.add_out<std::uint32_t>(UABI_SW_ATTR_SRQ_SLOT);
	std::uint32_t slot = 0;
	auto m = ctx.call(std::move(c));
	if (m)
		m->read(0, o, slot);
	return slot;
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0)
{
	return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// ------------------------------------------------------------- attack 1
// The control half reads ring geometry back from client-writable memory.
void attack_geometry(Context &ctx, Arena &ar)
{
	std::printf("# 1: ring geometry from client-writable memory\n");
	// The read-only part stays read-only, however asked.
	// (errno is read right after each call: argument order is unspecified.)
	void *w = mmap(nullptr, ar.info.ro_size, PROT_READ | PROT_WRITE, MAP_SHARED, ar.ro_fd, 0);
	int e = w == MAP_FAILED ? errno : 0;
	check(e == EACCES || e == EPERM, "read-only part: a writable mapping is refused (%s)",
	      err_name(e));
	e = mprotect(const_cast<std::uint8_t *>(ar.ro), 4096, PROT_READ | PROT_WRITE) < 0 ? errno : 0;
	check(e == EACCES || e == EPERM, "read-only part: mprotect to PROT_WRITE is refused (%s)",
	      err_name(e));
	e = write(ar.ro_fd, "x", 1) < 0 ? errno : 0;
	check(e == EBADF || e == EPERM, "read-only part: write(2) is refused (%s)", err_name(e));
	if (!on_kernel()) {
		e = ftruncate(ar.rw_fd, 0) < 0 ? errno : 0;
		check(e == EPERM, "writable part: ftruncate to 0 is refused (%s): the daemon keeps "
				  "its mapping", err_name(e));
		e = ftruncate(ar.rw_fd, off_t(ar.info.rw_size) * 2) < 0 ? errno : 0;
		check(e == EPERM, "writable part: growing it is refused (%s)", err_name(e));
	}

	// Indices and lock words of our own CQ and SRQ made absurd: resize
	// and modify answer an errno, quickly, and the host lives on.
	Handle pd = ctx.alloc_pd().value_or(0);
	auto cq = ctx.create_cq(64);
	SrqCreate sc;
	sc.pd = pd;
	sc.init.attr.max_wr = 16;
	sc.init.attr.max_sge = 1;
	auto srq = ctx.create_srq(sc);
	if (!cq || !srq) {
		check(false, "CQ and SRQ for the geometry attacks (%s)",
		      err_name(cq ? srq.error() : cq.error()));
		return;
	}
	const std::uint32_t slot = srq_slot(ctx, srq->handle);
	uabi_sw_cq_rw *cw = ar.cq_rw(cq->cqn);
	uabi_sw_srq_rw *sw = ar.srq_rw(slot);
	cw->prod = cw->cons + (1ull << 40);
	sw->prod = sw->cons + (1ull << 40);
	auto t0 = Clock::now();
	e = error_of(ctx.resize_cq(cq->handle, 4096));
	check(e == EINVAL, "CQ resize with prod = cons + 2^40: %s in %.1f ms", err_name(e),
	      ms_since(t0));
	uabi_srq_attr sa{};
	sa.max_wr = 4096;
	t0 = Clock::now();
	e = error_of(ctx.modify_srq(srq->handle, sa, 1u /* IBV_SRQ_MAX_WR */));
	check(e == EINVAL, "SRQ grow with prod = cons + 2^40: %s in %.1f ms", err_name(e),
	      ms_since(t0));
	cw->prod = cw->cons;
	cw->lock = 1;	// held "forever" by pid 1
	t0 = Clock::now();
	e = error_of(ctx.resize_cq(cq->handle, 4096));
	check(e == EBUSY && ms_since(t0) < 30000,
	      "CQ resize while a client holds the lock word: %s after %.1f ms (bounded)",
	      err_name(e), ms_since(t0));
	cw->lock = 0;
	sw->prod = sw->cons;
	check(ctx.destroy_cq(cq->handle).ok(), "CQ destroy after the lock games");
	check(ctx.destroy_srq(srq->handle).ok(), "SRQ destroy after the index games");
	auto q = ctx.query_device();
	check(q.ok(), "the host still answers after attack 1");
	(void)ctx.dealloc_pd(pd);
}

// ------------------------------------------------------------- attack 2
// The data path trusted the shared MR table and CQ rings of other users.
void attack_data_path(Context &ctx, Arena &ar, uid_t victim_uid)
{
	std::printf("# 2: other users' MR table, rings and payloads\n");
	check(ar.info.uid == getuid(), "the arena MAP hands out is this user's own (uid %u)",
	      ar.info.uid);
	// Nothing of another process shows up: every live MR entry is ours.
	unsigned foreign = 0, live = 0;
	for (std::uint32_t i = 1; i < ar.info.mr_count; i++) {
		const uabi_sw_mr &m = ar.mrs()[i];
		if (!m.key)
			continue;
		live++;
		if (m.pid != getpid())
			foreign++;
	}
	check(foreign == 0, "no MR of another process in this arena (%u live, %u foreign)", live,
	      foreign);
	// Scribble over every byte of our own writable part: rings, indices,
	// locks (the victim's traffic, checked by the script, goes on).
	std::memset(ar.rw, 0x41, ar.info.rw_size);
	auto q = ctx.query_device();
	check(q.ok(), "the host answers after this user filled its writable part with 0x41");
	std::memset(ar.rw, 0, ar.info.rw_size);
	if (!on_kernel()) {
		// The daemon's own fds are out of reach.
		const char *dpid = std::getenv("UABI_DAEMON_PID");
		if (dpid) {
			std::string path = std::string("/proc/") + dpid + "/fd/0";
			int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
			int e = fd < 0 ? errno : 0;
			check(fd < 0, "the daemon's fds (%s) are closed to this user (%s)",
			      path.c_str(), err_name(e));
			if (fd >= 0)
				close(fd);
		}
	}
	(void)victim_uid;
}

// ------------------------------------------------------------- attack 3
// Driver calls took device-wide numbers.
void attack_driver_calls(Context &ctx, Arena &ar, std::uint32_t victim_qpn)
{
	std::printf("# 3: driver calls with other users' numbers\n");
	check(victim_qpn && (victim_qpn < ar.info.qp_first ||
			     victim_qpn - ar.info.qp_first >= ar.info.qp_count),
	      "this user's QPNs are a range of its own (%#x + %u), the victim's QP %#x is not in it",
	      ar.info.qp_first, ar.info.qp_count, victim_qpn);
	int e = driver_call(ctx, UABI_SW_ARENA_QP_ERROR, UABI_SW_ATTR_QPN, victim_qpn);
	check(e == EINVAL, "QP_ERROR on the victim's QPN %#x: %s", victim_qpn, err_name(e));
	unsigned bad = 0;
	for (std::uint32_t n = 1; n <= 64; n++) {
		for (auto [method, attr] : {std::pair{UABI_SW_ARENA_NOTIFY_CQ, UABI_SW_ATTR_CQN},
					    std::pair{UABI_SW_ARENA_CQ_ERROR, UABI_SW_ATTR_CQN},
					    std::pair{UABI_SW_ARENA_SRQ_LIMIT, UABI_SW_ATTR_SRQ_SLOT}}) {
			e = driver_call(ctx, std::uint16_t(method), std::uint16_t(attr), n);
			bad += e != ENOENT;
		}
	}
	check(bad == 0, "NOTIFY_CQ, CQ_ERROR, SRQ_LIMIT on numbers 1..64: all ENOENT (none of "
			"ours), %u otherwise", bad);
	// Port state is every user's.
	Command c(UABI_SW_OBJ_PORT, UABI_SW_PORT_SET_STATE);
	c.add_in(UABI_SW_ATTR_PORT_NUM, std::uint32_t(1));
	c.add_in(UABI_SW_ATTR_PORT_STATE, std::uint32_t(1));	// DOWN
	e = error_of(ctx.call(std::move(c)));
	auto pa = ctx.query_port(1);
	check(e == EPERM && pa && pa->state == 4,
	      "setting port 1 DOWN: %s, the port stays ACTIVE", err_name(e));
	// A QP of ours connected to the victim's QPN: refused at once.
	Handle pd = ctx.alloc_pd().value_or(0);
	auto cq = ctx.create_cq(8);
	QpCreate qc;
	qc.pd = pd;
	qc.send_cq = cq ? cq->handle : 0;
	qc.recv_cq = cq ? cq->handle : 0;
	qc.init.qp_type = UABI_QPT_RC;
	qc.init.cap.max_send_wr = 4;
	qc.init.cap.max_recv_wr = 4;
	qc.init.cap.max_send_sge = 1;
	qc.init.cap.max_recv_sge = 1;
	auto qp = ctx.create_qp(qc);
	if (qp) {
		uabi_qp_attr a{};
		a.qp_state = UABI_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = 7;
		(void)ctx.modify_qp(qp->handle, a,
			      UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS);
		a = {};
		a.qp_state = UABI_QPS_RTR;
		a.path_mtu = 5;
		a.dest_qp_num = victim_qpn;
		a.ah_attr.dlid = 1;
		a.ah_attr.port_num = 1;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		e = error_of(ctx.modify_qp(qp->handle, a,
					   UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU |
						   UABI_QP_DEST_QPN | UABI_QP_RQ_PSN |
						   UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER));
		check(e == EPERM, "connecting a QP to the victim's QPN %#x: %s", victim_qpn,
		      err_name(e));
		(void)ctx.destroy_qp(qp->handle);
	} else {
		check(false, "a QP for the connection attack (%s)", err_name(qp.error()));
	}
	if (cq)
		(void)ctx.destroy_cq(cq->handle);
	(void)ctx.dealloc_pd(pd);
}

// ------------------------------------------------------------- attack 4
// XRC domain identity from fds the caller could not read.
void attack_xrc(Context &ctx, const char *unreadable, const char *readable)
{
	std::printf("# 4: XRC domains by file\n");
	if (unreadable) {
		int fd = open(unreadable, O_PATH | O_CLOEXEC);
		check(fd >= 0, "O_PATH of the victim's 0600 XRC file %s", unreadable);
		int e = error_of(ctx.open_xrcd(fd, 0));
		check(e == EBADF, "open_xrcd through that O_PATH fd: %s", err_name(e));
		e = error_of(ctx.open_xrcd(fd, UABI_XRCD_O_CREAT));
		check(e == EBADF, "open_xrcd(O_CREAT) through it: %s", err_name(e));
		if (fd >= 0)
			close(fd);
	}
	if (readable) {
		// A file it may read names this user's own domain, never the
		// victim's (no domain yet: EAGAIN, as without O_CREAT).
		int fd = open(readable, O_RDONLY | O_CLOEXEC);
		int e = error_of(ctx.open_xrcd(fd, 0));
		check(fd >= 0 && e == EAGAIN,
		      "open_xrcd without O_CREAT of the file the victim's domain uses: %s (another "
		      "user's domain is not joined)",
		      err_name(e));
		if (fd >= 0)
			close(fd);
	}
	int wfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int e = error_of(ctx.open_xrcd(wfd, UABI_XRCD_O_CREAT));
	check(e == EBADF, "open_xrcd through a write-only fd: %s", err_name(e));
	close(wfd);
}

// ------------------------------------------------------------- attack 5
// Limits: every advertised max_* holds per user; unmapped MRs; CQ size.
template <class Make, class Drop>
unsigned fill_to_limit(const char *what, std::uint32_t limit, Make make, Drop drop)
{
	std::vector<Handle> made;
	made.reserve(limit + 1);
	int last = 0;
	for (std::uint32_t i = 0; i <= limit + 1; i++) {
		auto r = make();
		if (!r) {
			last = r.error();
			break;
		}
		made.push_back(*r);
	}
	check(made.size() == limit && last == ENOMEM, "%s: %zu created of max %u, then %s", what,
	      made.size(), limit, err_name(last));
	for (Handle h : made)
		drop(h);
	return unsigned(made.size());
}

void attack_limits(Context &ctx)
{
	std::printf("# 5: quotas and limits\n");
	auto dev = ctx.query_device();
	if (!dev) {
		check(false, "query_device");
		return;
	}
	const uabi_device_attr &a = dev->attr;
	fill_to_limit("PDs", a.max_pd, [&] { return ctx.alloc_pd(); },
		      [&](Handle h) { (void)ctx.dealloc_pd(h); });
	Handle pd = ctx.alloc_pd().value_or(0);
	uabi_ah_attr aa{};
	aa.dlid = 1;
	aa.port_num = 1;
	fill_to_limit("AHs", a.max_ah, [&] { return ctx.create_ah(pd, aa); },
		      [&](Handle h) { (void)ctx.destroy_ah(h); });
	fill_to_limit("XRC domains", a.max_xrcd, [&] { return ctx.open_xrcd(-1, UABI_XRCD_O_CREAT); },
		      [&](Handle h) { (void)ctx.close_xrcd(h); });
	static char buf[4096];
	fill_to_limit("MRs", a.max_mr, [&] {
		auto r = ctx.reg_mr(pd, buf, sizeof(buf), 1);
		return r ? Result<Handle>(r->handle) : Result<Handle>(make_error(r.error()));
	}, [&](Handle h) { (void)ctx.dereg_mr(h); });
	fill_to_limit("CQs", a.max_cq, [&] {
		auto r = ctx.create_cq(1);
		return r ? Result<Handle>(r->handle) : Result<Handle>(make_error(r.error()));
	}, [&](Handle h) { (void)ctx.destroy_cq(h); });
	int e = error_of(ctx.reg_mr(pd, reinterpret_cast<void *>(0x100000000000ull), 1ull << 40, 1));
	check(e == EFAULT, "a 1 TiB MR over unmapped memory: %s", err_name(e));
	auto big = ctx.create_cq(a.max_cqe);
	check(big && big->cqe <= a.max_cqe, "create_cq(max_cqe %u) answers cqe %u", a.max_cqe,
	      big ? big->cqe : 0);
	if (big)
		(void)ctx.destroy_cq(big->handle);
	e = error_of(ctx.create_cq(a.max_cqe + 1));
	check(e == EINVAL, "create_cq(max_cqe + 1): %s", err_name(e));
	(void)ctx.dealloc_pd(pd);
}

// Connections that never say hello (uabid only).
void attack_connections(const char *socket_path, const char *held_file, const char *checked_file)
{
	std::printf("# 5b: connections without a hello\n");
	std::vector<int> fds;
	int refused = 0, first_refused_at = -1;
	for (int i = 0; i < 1100; i++) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		sockaddr_un sa{};
		sa.sun_family = AF_UNIX;
		std::snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", socket_path);
		if (connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) < 0) {
			close(fd);
			refused++;
			continue;
		}
		fds.push_back(fd);
	}
	// The daemon refuses past this uid's share: the refusal (EUSERS)
	// arrives as a message on the connection it then closes.  Wait for
	// the daemon to have accepted them all: it accepts in order, so once
	// a hello on one more connection is answered (or refused), they were.
	if (auto p = daemon::paths_for_socket(socket_path)) {
		auto last = daemon::connect(*p, daemon::kHelloAdmin);
		check(last || last.error() == EUSERS,
		      "one more connection is answered after the 1100: %s",
		      err_name(last ? 0 : last.error()));
	} else {
		check(false, "socket path %s: %s", socket_path, err_name(p.error()));
	}
	std::uint64_t refusals = 0;
	for (std::size_t i = 0; i < fds.size(); i++) {
		daemon::AdmHdr h{};
		ssize_t n = recv(fds[i], &h, sizeof(h), MSG_DONTWAIT);
		if (n >= ssize_t(sizeof(h)) && h.status == -EUSERS) {
			refusals++;
			if (first_refused_at < 0)
				first_refused_at = int(i);
		}
	}
	const std::uint64_t kept = fds.size() - refusals;
	check(refusals > 0 && kept <= 300,
	      "1100 silent connections: %" PRIu64 " kept, %" PRIu64 " refused with EUSERS (the "
	      "first at #%d), %d not connected", kept, refusals, first_refused_at, refused);
	// Meanwhile another user still gets in (the script checks as root).
	if (held_file && checked_file) {
		int fd = open(held_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		bool seen = false;
		for (int i = 0; i < 300 && !(seen = access(checked_file, F_OK) == 0); i++)
			usleep(100000);
		check(seen, "the other user's check ran while these connections were held");
	}
	// Held silent, they are dropped after the idle time.
	sleep(12);
	unsigned dropped = 0;
	for (int fd : fds) {
		char b[64];
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		dropped += n == 0 || (n < 0 && errno == ECONNRESET) || n > 0;
	}
	check(dropped == fds.size(), "after 12 s without a hello: %u of %zu connections dropped",
	      dropped, fds.size());
	for (int fd : fds)
		close(fd);
	(void)refused;
}

// The request slot (uabid only, docs/daemon.md "Request slot"): shared
// memory every byte of which is ours to write.
struct Slot {
	int sock = -1, slot_fd = -1, bell = -1, page_fd = -1;
	daemon::SlotHdr *hdr = nullptr;
	const daemon::DaemonPage *page = nullptr;
	std::uint32_t seq = 0;

	int open(const char *socket_path)
	{
		auto p = daemon::paths_for_socket(socket_path);
		if (!p)
			return p.error();
		auto c = daemon::connect(*p, daemon::kHelloContext);
		if (!c)
			return c.error();
		sock = c->release();
		std::vector<int> fds;
		auto r = daemon::admin_call(sock, daemon::kOpSlot, 0, nullptr, 0, 5000, -1, &fds);
		if (!r)
			return r.error();
		if (fds.size() != 3)
			return EPROTO;
		slot_fd = fds[0], bell = fds[1], page_fd = fds[2];
		void *a = mmap(nullptr, daemon::kSlotBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			       slot_fd, 0);
		void *b = mmap(nullptr, daemon::kDaemonPageBytes, PROT_READ, MAP_SHARED, page_fd, 0);
		if (a == MAP_FAILED || b == MAP_FAILED)
			return errno;
		hdr = static_cast<daemon::SlotHdr *>(a);
		page = static_cast<const daemon::DaemonPage *>(b);
		return 0;
	}
	std::uint8_t *data() { return reinterpret_cast<std::uint8_t *>(hdr) + daemon::kSlotDataOff; }
	void ring()
	{
		std::uint64_t one = 1;
		if (write(bell, &one, sizeof(one)) < 0) {
		}
	}
	// Publishes req_len = len and waits up to 5 s for the reply.
	bool publish(std::uint32_t len)
	{
		hdr->req_len = len;
		__atomic_store_n(&hdr->req_seq, ++seq, __ATOMIC_RELEASE);
		ring();
		auto t0 = Clock::now();
		while (__atomic_load_n(&hdr->rep_seq, __ATOMIC_ACQUIRE) != seq)
			if (ms_since(t0) > 5000)
				return false;
		return true;
	}
	std::int32_t status()
	{
		uabi_msg_hdr h{};
		std::memcpy(&h, data(), sizeof(h));
		return h.status;
	}
};

std::vector<std::uint8_t> counters_msg()
{
	Message m;
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS, kDeviceHandle);
	c.add_out<uabi_counters>(UABI_ATTR_DEVICE_COUNTERS);
	m.add(std::move(c));
	auto &raw = m.raw();
	std::vector<std::uint8_t> v(raw.size());
	std::memcpy(v.data(), raw.data(), raw.size());
	return v;
}

void attack_slot(const char *socket_path)
{
	std::printf("# 5c: the request slot\n");
	Slot s;
	int e = s.open(socket_path);
	check(e == 0, "a request slot of our own: %s", err_name(e));
	if (e)
		return;
	// Each result first, then its errno (argument order is unspecified).
	auto failed_with = [](int r) { return r < 0 ? errno : 0; };
	int r = failed_with(ftruncate(s.slot_fd, 0));
	check(r == EPERM, "shrink the slot under uabid: %s", err_name(r));
	r = failed_with(fcntl(s.slot_fd, F_ADD_SEALS, F_SEAL_WRITE));
	check(r != 0, "seal the slot against uabid's writes: %s", err_name(r));
	void *w = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, s.page_fd, 0);
	r = w == MAP_FAILED ? errno : 0;
	check(r != 0, "map the daemon page writable: %s", err_name(r));
	r = failed_with(mprotect(const_cast<daemon::DaemonPage *>(s.page), 4096,
				 PROT_READ | PROT_WRITE));
	check(r != 0, "make the daemon page writable: %s", err_name(r));
	char b = 0;
	r = failed_with(int(pwrite(s.page_fd, &b, 1, 0)));
	check(r != 0, "write(2) the daemon page: %s", err_name(r));

	// uabid's own fds (root's slots and doorbells among them) stay out of
	// reach: neither /proc/PID/fd nor pidfd_getfd.
	if (const char *dp = std::getenv("UABI_DAEMON_PID")) {
		int opened = 0;
		for (int fd = 0; fd < 256; fd++) {
			char path[64];
			std::snprintf(path, sizeof(path), "/proc/%s/fd/%d", dp, fd);
			int f = ::open(path, O_RDWR | O_CLOEXEC);
			if (f >= 0) {
				opened++;
				close(f);
			}
		}
		check(opened == 0, "open uabid's fds through /proc/%s/fd: %d opened", dp, opened);
		int pfd = int(syscall(SYS_pidfd_open, std::atoi(dp), 0));
		int got = pfd >= 0 ? int(syscall(SYS_pidfd_getfd, pfd, 3, 0)) : -1;
		int ge = got < 0 ? errno : 0;
		// Also what keeps direct completion events (docs/security.md)
		// within a user: a producer takes the waiter's eventfd this way.
		check(got < 0, "pidfd_getfd on uabid (another user's process, as a direct-event "
			       "producer would): %s",
		      err_name(ge));
		if (got >= 0)
			close(got);
		if (pfd >= 0)
			close(pfd);
	}

	// Lengths out of bounds, an fd attribute, garbage: each answered.
	bool all = true;
	for (std::uint32_t len : {0u, 7u, std::uint32_t(daemon::kSlotCap + 1), 0xffffffffu})
		all = all && s.publish(len) && s.status() == -EINVAL;
	check(all, "slot requests of 0, 7, slot + 1 and 2^32 - 1 bytes: EINVAL each");
	auto cm = counters_msg();
	std::memcpy(s.data(), cm.data(), cm.size());
	uabi_attr a;
	const std::size_t aoff = sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr);
	std::memcpy(&a, s.data() + aoff, sizeof(a));
	a.flags |= UABI_ATTR_F_FD;
	std::memcpy(s.data() + aoff, &a, sizeof(a));
	const bool fd_answered = s.publish(std::uint32_t(cm.size()));
	check(fd_answered && s.status() == -EINVAL, "an fd attribute through the slot: %s",
	      err_name(-s.status()));
	unsigned answered = 0;
	std::uint32_t rnd = 12345;
	auto next = [&] { return rnd = rnd * 1103515245u + 12345u; };
	for (int i = 0; i < 2000; i++) {
		std::memcpy(s.data(), cm.data(), cm.size());
		for (int k = 0; k < 4; k++)
			s.data()[next() % cm.size()] = std::uint8_t(next() >> 16);
		answered += s.publish(std::uint32_t(cm.size()));
	}
	check(answered == 2000, "2000 mutated slot requests: %u answered", answered);

	// Words held and scribbled on for 2 s ("waiting" always set, the
	// sequence number and length rewritten, the doorbell rung) while a
	// context of ours keeps calling: uabid never waits on any of it.
	std::atomic<bool> stop{false};
	std::thread scribbler([&] {
		std::uint32_t r = 99;
		s.hdr->waiting = 1;
		while (!stop.load(std::memory_order_relaxed)) {
			r = r * 1103515245u + 12345u;
			s.data()[r % 512] = std::uint8_t(r >> 24);
			s.hdr->req_len = r % 3 ? std::uint32_t(cm.size()) : r;
			__atomic_store_n(&s.hdr->req_seq, r, __ATOMIC_RELEASE);
			if (r % 64 == 0)
				s.ring();
		}
	});
	Context ctx = open_or_die();
	unsigned calls = 0, failed = 0;
	auto t0 = Clock::now();
	while (ms_since(t0) < 2000) {
		calls++;
		failed += !ctx.query_port(1);
	}
	stop = true;
	scribbler.join();
	check(failed == 0 && calls > 0, "our own calls while the slot is scribbled on: %u, %u failed",
	      calls, failed);

	// Clients that die mid-request.
	unsigned dead = 0;
	for (int i = 0; i < 10; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			Slot m;
			if (m.open(socket_path))
				_exit(1);
			std::memcpy(m.data(), cm.data(), cm.size());
			m.hdr->req_len = std::uint32_t(cm.size());
			__atomic_store_n(&m.hdr->req_seq, 1, __ATOMIC_RELEASE);
			m.ring();
			kill(getpid(), SIGKILL);
			_exit(0);
		}
		int st = 0;
		waitpid(pid, &st, 0);
		dead += WIFSIGNALED(st);
	}
	check(dead == 10 && ctx.query_port(1),
	      "10 clients killed mid-request (%u killed): uabid still answers", dead);
}

// ---------------------------------------------------------------- roles
int attacker(int argc, char **argv)
{
	uid_t victim_uid = 0;
	std::uint32_t victim_qpn = 0;
	const char *unreadable = nullptr, *readable = nullptr, *held = nullptr, *checked = nullptr;
	for (int i = 0; i + 1 < argc; i++) {
		if (!std::strcmp(argv[i], "--victim-uid"))
			victim_uid = uid_t(std::atoi(argv[i + 1]));
		else if (!std::strcmp(argv[i], "--victim-qpn"))
			victim_qpn = std::uint32_t(std::strtoul(argv[i + 1], nullptr, 0));
		else if (!std::strcmp(argv[i], "--xrc-file"))
			unreadable = argv[i + 1];
		else if (!std::strcmp(argv[i], "--open-xrc-file"))
			readable = argv[i + 1];
		else if (!std::strcmp(argv[i], "--held-file"))
			held = argv[i + 1];
		else if (!std::strcmp(argv[i], "--checked-file"))
			checked = argv[i + 1];
	}
	std::printf("# attacker uid %u against uid %u, backend %s\n", getuid(), victim_uid,
		    std::getenv("UABI_BACKEND") ? std::getenv("UABI_BACKEND") : "default");
	Context ctx = open_or_die();
	Arena ar;
	if (!ar.map(ctx)) {
		std::printf("Bail out! cannot map the arena\n");
		return 100;
	}
	attack_geometry(ctx, ar);
	attack_data_path(ctx, ar, victim_uid);
	attack_driver_calls(ctx, ar, victim_qpn);
	attack_xrc(ctx, unreadable, readable);
	attack_limits(ctx);
	if (!on_kernel() && std::getenv("UABI_SOCKET"))
		attack_connections(std::getenv("UABI_SOCKET"), held, checked);
	if (!on_kernel() && std::getenv("UABI_SOCKET"))
		attack_slot(std::getenv("UABI_SOCKET"));
	std::printf("# attacker: %d checks, %d failed\n", g_checks, g_failed);
	return g_failed;
}

// Chains of 60 maximal CQ creates, then their destroys, for @seconds.
int flood(double seconds)
{
	Context ctx = open_or_die();
	auto dev = ctx.query_device();
	const std::uint32_t cqe = dev ? dev->attr.max_cqe : 65535;
	auto t0 = Clock::now();
	unsigned chains = 0, made = 0;
	while (ms_since(t0) < seconds * 1000) {
		Chain ch;
		std::vector<PendingCq> cqs;
		CqCreate cc;
		cc.cqe = cqe;
		for (int i = 0; i < 60; i++)
			cqs.push_back(ch.create_cq(cc));
		(void)ch.execute(ctx);
		chains++;
		for (auto &p : cqs)
			if (auto r = ch.get(p)) {
				made++;
				(void)ctx.destroy_cq(r->handle);
			}
	}
	std::printf("# flood: %u chains of 60 CQ creates of %u entries, %u CQs made\n", chains, cqe,
		    made);
	return 0;
}

// Round trips of a cheap call for @seconds: their 99th percentile and max.
int probe(double seconds, double p99_limit_ms, double max_limit_ms)
{
	Context ctx = open_or_die();
	std::vector<double> rt;
	auto t0 = Clock::now();
	while (ms_since(t0) < seconds * 1000) {
		auto t = Clock::now();
		if (!ctx.query_port(1)) {
			check(false, "the probe's call failed");
			return 1;
		}
		rt.push_back(ms_since(t));
		usleep(1000);
	}
	std::sort(rt.begin(), rt.end());
	double p99 = rt[rt.size() * 99 / 100], mx = rt.back();
	check(p99 < p99_limit_ms && mx < max_limit_ms,
	      "victim's round trips during the flood: %zu, p99 %.2f ms, max %.2f ms (bounds %.0f / "
	      "%.0f ms)",
	      rt.size(), p99, mx, p99_limit_ms, max_limit_ms);
	return g_failed;
}

// The victim's QP the attacker aims at: created, its number written to
// @out, kept until @stop exists (at most @seconds).
int hold(const char *out, const char *stop, double seconds)
{
	Context ctx = open_or_die();
	Handle pd = ctx.alloc_pd().value_or(0);
	auto cq = ctx.create_cq(8);
	QpCreate qc;
	qc.pd = pd;
	qc.send_cq = cq ? cq->handle : 0;
	qc.recv_cq = cq ? cq->handle : 0;
	qc.init.qp_type = UABI_QPT_RC;
	qc.init.cap.max_send_wr = 4;
	qc.init.cap.max_recv_wr = 4;
	qc.init.cap.max_send_sge = 1;
	qc.init.cap.max_recv_sge = 1;
	auto qp = ctx.create_qp(qc);
	if (!qp) {
		std::printf("Bail out! hold: create_qp: %s\n", std::strerror(qp.error()));
		return 1;
	}
	std::string tmp = std::string(out) + ".tmp";
	if (FILE *f = std::fopen(tmp.c_str(), "w")) {
		std::fprintf(f, "%#x\n", qp->resp.qpn);
		std::fclose(f);
		std::rename(tmp.c_str(), out);
	}
	auto t0 = Clock::now();
	while (access(stop, F_OK) && ms_since(t0) < seconds * 1000)
		usleep(10000);
	return 0;
}

int drop_to(uid_t uid, char **argv)
{
	if (setgroups(0, nullptr) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
		std::perror("drop-to");
		return 127;
	}
	execvp(argv[0], argv);
	std::perror("exec");
	return 127;
}

} // namespace

int main(int argc, char **argv)
{
	setvbuf(stdout, nullptr, _IOLBF, 0);
	std::string role = argc > 1 ? argv[1] : "";
	auto arg = [&](const char *name, double dflt) {
		for (int i = 2; i + 1 < argc; i++)
			if (!std::strcmp(argv[i], name))
				return std::atof(argv[i + 1]);
		return dflt;
	};
	if (role == "attacker")
		return attacker(argc - 2, argv + 2);
	if (role == "flood")
		return flood(arg("--seconds", 3));
	if (role == "probe")
		return probe(arg("--seconds", 3), arg("--p99-ms", 250), arg("--max-ms", 1000));
	if (role == "hold" && argc > 3)
		return hold(argv[2], argv[3], arg("--seconds", 600));
	if (role == "drop-to" && argc > 3)
		return drop_to(uid_t(std::atoi(argv[2])), argv + 3);
	std::fprintf(stderr, "usage: %s attacker|flood|probe|drop-to ...\n", argv[0]);
	return 2;
}
