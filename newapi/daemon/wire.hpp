// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// What uabid and the daemon transport must agree on besides the structs of
// <uabi/transport_daemon.hpp>: which attributes carry fds, and how a
// datagram with fds is sent and received.  Internal to the project.
#ifndef UABI_DAEMON_WIRE_HPP
#define UABI_DAEMON_WIRE_HPP

#include <rdma/uabi.h>
#include <rdma/uabi_wire.h>
#include <uabi/transport_daemon.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <climits>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

namespace uabi::daemon::wire {

// Offset of the payload of an attribute whose header is at attr_off.
inline std::size_t payload_of(std::size_t attr_off)
{
	return attr_off + sizeof(uabi_attr);
}

inline std::int32_t get_s32(const std::byte *p, std::size_t off)
{
	std::int32_t v;
	std::memcpy(&v, p + off, sizeof(v));
	return v;
}

inline void put_s32(std::byte *p, std::size_t off, std::int32_t v)
{
	std::memcpy(p + off, &v, sizeof(v));
}

inline std::uint16_t attr_flags(const std::byte *p, std::size_t attr_off)
{
	uabi_attr a;
	std::memcpy(&a, p + attr_off, sizeof(a));
	return a.flags;
}

// Walks a uabi message as far as it is well formed, with the framing rules
// of <rdma/uabi_wire.h> (those of the dispatcher: command lengths tile the
// message, attributes fit in their command; at most UABI_MAX_CHAIN_CMDS
// commands of at most UABI_MAX_CMD_ATTRS attributes), calling
//   on_cmd(index, cmd_offset)        for every command, and
//   on_fd(index, attr_offset, flags) for every attribute flagged
//                                    UABI_ATTR_F_FD with a payload >= 4 bytes
// (offsets from the start of the message).  Both ends walk the same bytes,
// so they find the same fd attributes; where the walk stops, the dispatcher
// rejects the message anyway.
template <class OnCmd, class OnFd>
void walk(const std::byte *p, std::size_t n, OnCmd &&on_cmd, OnFd &&on_fd)
{
	const auto *msg = reinterpret_cast<const __u8 *>(p);
	uabi_wire_iter c;
	uabi_wire_cmds_init(&c, msg, n < UINT32_MAX ? std::uint32_t(n) : UINT32_MAX,
			    UABI_MAX_CHAIN_CMDS);
	for (std::size_t i = 0; uabi_wire_next_cmd(&c); i++) {
		if (c.hdr.cmd.num_attrs > UABI_MAX_CMD_ATTRS)
			return;
		on_cmd(i, std::size_t(c.off));
		uabi_wire_iter a;
		uabi_wire_attrs_init(&a, msg + c.off);
		while (uabi_wire_next_attr(&a)) {
			if ((a.hdr.attr.flags & UABI_ATTR_F_FD) &&
			    a.hdr.attr.len >= sizeof(std::int32_t))
				on_fd(i, std::size_t(c.off) + a.off, a.hdr.attr.flags);
		}
		if (a.left)
			return; // an attribute broke the framing: stop here
	}
}

// A control buffer for kMaxFds descriptors.
union FdControl {
	char buf[CMSG_SPACE(sizeof(int) * kMaxFds)];
	cmsghdr align;
};

// sendmsg() of one datagram with fds; returns bytes sent or -errno.
inline ssize_t send_fds(int sock, const void *buf, std::size_t len, const int *fds,
			std::size_t nfds, int flags)
{
	iovec iov{const_cast<void *>(buf), len};
	msghdr mh{};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	FdControl ctl;
	if (nfds) {
		if (nfds > kMaxFds)
			return -EINVAL;
		std::memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	for (;;) {
		ssize_t r = ::sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return -errno;
	}
}

// recvmsg() of one datagram; appends every fd received (close-on-exec) to
// fds and stores the msg_flags (MSG_TRUNC, MSG_CTRUNC).  Returns bytes
// received (0 = end of stream) or -errno.
inline ssize_t recv_fds(int sock, void *buf, std::size_t cap, std::vector<int> &fds, int flags,
			int *msg_flags)
{
	iovec iov{buf, cap};
	msghdr mh{};
	FdControl ctl;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	ssize_t r;
	do
		r = ::recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (std::size_t i = 0; i < n; i++) {
			int fd;
			std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			fds.push_back(fd);
		}
	}
	if (msg_flags)
		*msg_flags = mh.msg_flags;
	return r;
}

inline void close_all(std::vector<int> &fds)
{
	for (int fd : fds)
		if (fd >= 0)
			::close(fd);
	fds.clear();
}

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	asm volatile("yield");
#endif
}

// Asks for the cache lines of [p, p + n) (at most @max_lines of them)
// without waiting for them: a poller that reads the word another process
// publishes a message with also asks for the message's lines on every turn,
// so that they travel between the CPUs together with that word rather than
// one after it (docs/daemon.md, "Round trip cost and polling").
inline void prefetch_lines(const void *p, std::size_t n, std::size_t max_lines)
{
	const char *c = static_cast<const char *>(p);
	for (std::size_t off = 0, i = 0; off < n && i < max_lines; off += 64, i++)
		__builtin_prefetch(c + off, 0, 3);
}

// Budget of a governor from the environment: unset = adaptive up to
// dflt_us; N = always N microseconds (0 = never poll).
inline void spin_from_env(daemon::SpinGovernor &g, const char *var, unsigned dflt_us)
{
	const char *v = std::getenv(var);
	if (!v || !*v) {
		g.set_adaptive(dflt_us);
		return;
	}
	char *end;
	unsigned long n = std::strtoul(v, &end, 10);
	if (*end || n > 100000)
		g.set_adaptive(dflt_us);
	else
		g.set_fixed(unsigned(n));
}

// Words of shared memory that the other process writes (the request slot,
// docs/daemon.md): only ever touched with these.
inline std::uint32_t load_acquire(const std::uint32_t *w)
{
	return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

inline void store_release(std::uint32_t *w, std::uint32_t v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

// Orders a store before a later load of another word (the two sides of a
// "set my flag, then look at yours" handshake).
inline void full_fence()
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

// Shared (not FUTEX_PRIVATE): the word lies in a memfd both processes map.
inline void futex_wake(std::uint32_t *w)
{
	::syscall(SYS_futex, w, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Sleeps while *w == val, at most timeout_ms.
inline void futex_wait(std::uint32_t *w, std::uint32_t val, int timeout_ms)
{
	timespec ts{timeout_ms / 1000, long(timeout_ms % 1000) * 1000000L};
	::syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, nullptr, 0);
}

inline std::uint64_t now_ns(clockid_t clk = CLOCK_MONOTONIC)
{
	timespec ts;
	clock_gettime(clk, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

} // namespace uabi::daemon::wire

#endif // UABI_DAEMON_WIRE_HPP
