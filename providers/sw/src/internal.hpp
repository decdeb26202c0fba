// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Private helpers of the sw data path.
#ifndef UABI_SW_INTERNAL_HPP
#define UABI_SW_INTERNAL_HPP

#include <uabi/sw/provider.hpp>

#include <sched.h>
#include <sys/uio.h>

namespace uabi::sw {

// Largest pid Linux hands out (PID_MAX_LIMIT); larger lock values belong
// to the control half.
inline constexpr std::uint32_t kMaxPid = 4u << 20;

inline constexpr int kMaxIov = 64;

// A gather/scatter list of one side of a copy.
struct Iov {
	iovec v[kMaxIov];
	std::uint32_t key[kMaxIov]; // the memory key each entry was checked with
	int n = 0;
	std::uint64_t total = 0;

	bool add(std::uint64_t addr, std::uint64_t len, std::uint32_t lkey = 0)
	{
		if (!len)
			return true;
		if (n == kMaxIov)
			return false;
		v[n].iov_base = reinterpret_cast<void *>(addr);
		v[n].iov_len = len;
		key[n] = lkey;
		n++;
		total += len;
		return true;
	}
};

class Device;

// Copies @total bytes between two lists in this process, the aligned 8
// bytes holding the last destination byte after all the others, the last
// byte last (docs/datapath.md, "Placement order").  @tail_first reverses
// that, for the placement test only (UABI_SW_TAIL_FIRST).
void local_copy(const iovec *dst, int ndst, const iovec *src, int nsrc, std::uint64_t total,
		bool tail_first = false);
// The same between this process and @dst_pid or @src_pid (the other is this
// process), with process_vm_writev/readv; in one process, local_copy() unless
// UABI_SW_FORCE_VM.  0 or an errno (ESRCH: the peer is gone).
int vm_copy(Device &dev, pid_t dst_pid, const iovec *dst, int ndst, pid_t src_pid,
	    const iovec *src, int nsrc, std::uint64_t total);

std::uint64_t now_ns();
bool process_dead(pid_t pid);

// A lock word of the arena: the holder's pid, 0 when free.
class ArenaLock {
public:
	ArenaLock(std::uint32_t *word, pid_t self) : word_(word), self_(self) { acquire(); }
	~ArenaLock() { __atomic_store_n(word_, 0u, __ATOMIC_RELEASE); }
	ArenaLock(const ArenaLock &) = delete;
	ArenaLock &operator=(const ArenaLock &) = delete;

private:
	void acquire();
	std::uint32_t *word_;
	pid_t self_;
};

// A consistent copy of a descriptor the control half publishes with a
// sequence counter (odd while it writes).
template <class T>
void snapshot(const T *d, T &out)
{
	for (unsigned spins = 0;; spins++) {
		std::uint32_t s1 = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);
		if (!(s1 & 1)) {
			std::memcpy(static_cast<void *>(&out), static_cast<const void *>(d), sizeof(T));
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&d->seq, __ATOMIC_RELAXED) == s1)
				return;
		}
		if (spins > 1000000) {	// a writer that never finishes
			std::memcpy(static_cast<void *>(&out), static_cast<const void *>(d), sizeof(T));
			return;
		}
		if (spins > 64)
			sched_yield();
	}
}

} // namespace uabi::sw

#endif
