// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// One open /dev/infiniband/umadN as Linux's user_mad serves it (the umad
// ABI 5, <rdma/ib_user_mad.h>): agents registered with ioctl(), MADs sent
// with write() and received with read(), readiness through poll() on the
// file descriptor.  Here the descriptor is an eventfd that is readable
// while received MADs wait, so poll/select/epoll work unchanged; read,
// write and ioctl come through the interposer (preload.cpp).  The MADs go
// to the port's agents (agent.hpp).
#ifndef UABI_UMAD_FILE_HPP
#define UABI_UMAD_FILE_HPP

#include "agent.hpp"

#include <rdma/ib_user_mad.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace uabi::umad {

inline constexpr int kMaxAgents = 32;	       // IB_UMAD_MAX_AGENTS
inline constexpr std::size_t kMaxQueued = 4096; // received MADs waiting; more are dropped
inline constexpr std::size_t kMaxPending = 4096; // sends waiting for their timeout

// The device behind the files: a snapshot of its answers, taken for each
// MAD (the agents answer with the port's state of the moment).
using SnapshotFn = std::function<Result<fsview::Snapshot>()>;

class File : public std::enable_shared_from_this<File> {
public:
	// efd: a descriptor of the eventfd the program's descriptors stand
	// for, owned by the File (its own copy: the program may close the one
	// it opened and keep a dup).  accmode: the open's O_RDONLY / O_WRONLY /
	// O_RDWR (read and write check it, as the VFS does: EBADF).
	// ib_port false: a RoCE port (link layer Ethernet), which has no QP0
	// (agents for it: EPROTONOSUPPORT, as Linux answers) and no agents
	// behind it: every MAD sent is lost.
	File(int efd, std::uint32_t port, int accmode, SnapshotFn snap, bool ib_port = true)
		: efd_(efd), port_(port), accmode_(accmode), ib_port_(ib_port), snap_(std::move(snap))
	{
	}
	~File();
	File(const File &) = delete;
	File &operator=(const File &) = delete;

	// Each returns what the system call returns: >= 0, or -errno.
	long ioctl(unsigned long request, void *arg);
	long write(const void *buf, std::size_t count);
	// fd: the program's descriptor; nonblock: its O_NONBLOCK.  A blocking
	// read waits for a MAD (interrupted by a signal: -EINTR).
	long read(int fd, void *buf, std::size_t count, bool nonblock);

	std::uint32_t port() const { return port_; }

	// The timer (pending_timeouts()) hands back a send whose time ran out.
	void expire(std::uint64_t seq);

private:
	struct Agent {
		bool used = false;
		std::uint32_t hi_tid = 0;
		std::uint8_t qpn = 0;
		std::uint8_t mgmt_class = 0;
		std::uint8_t class_version = 0;
		std::uint8_t rmpp_version = 0;
		std::array<std::uint64_t, 2> methods{};
		std::uint32_t oui = 0;
	};
	struct Packet {
		ib_user_mad_hdr hdr{};
		std::vector<std::uint8_t> data; // the MAD (or, for a send, its first 24 bytes)
		bool send = false;		// a send that timed out (status ETIMEDOUT)
	};
	struct Pending {
		std::uint64_t seq;
		std::uint32_t agent;
		std::uint64_t tid;
		std::uint8_t mgmt_class;
		Packet pkt;
	};

	std::size_t hdr_size() const
	{
		return use_pkey_index_ ? sizeof(ib_user_mad_hdr) : sizeof(ib_user_mad_hdr_old);
	}
	long register_agent(void *arg, bool v2);
	long unregister_agent(void *arg);
	int add_agent(std::uint32_t qpn, std::uint8_t cls, std::uint8_t version,
		      std::uint32_t oui, std::uint8_t rmpp, const std::uint64_t methods[2]);
	void queue(Packet p); // mu_ held
	void signal_locked();

	std::mutex mu_;
	const int efd_;
	const std::uint32_t port_;
	const int accmode_;
	const bool ib_port_;
	SnapshotFn snap_;
	bool use_pkey_index_ = false;
	bool already_used_ = false;
	bool signaled_ = false;
	Agent agents_[kMaxAgents];
	std::deque<Packet> recv_;
	std::vector<Pending> pending_;
};

// Schedules f->expire(seq) at `when` on the process's timer thread.
void schedule_timeout(const std::shared_ptr<File> &f, std::uint64_t seq,
		      std::chrono::steady_clock::time_point when);

} // namespace uabi::umad

#endif // UABI_UMAD_FILE_HPP
