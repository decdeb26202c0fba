// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Arena mapping, arena locks, descriptor snapshots, completion rings.
#include "internal.hpp"
#include "qp_internal.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace uabi::sw {

std::uint64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

bool process_dead(pid_t pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

// ------------------------------------------------------------ arena lock
void ArenaLock::acquire()
{
	const std::uint32_t me = std::uint32_t(self_);
	std::uint32_t seen = 0;
	std::uint64_t since = 0;
	for (unsigned spins = 0;; spins++) {
		std::uint32_t cur = 0;
		if (__atomic_compare_exchange_n(word_, &cur, me, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		if (spins < 128) {
			__builtin_ia32_pause();
			continue;
		}
		sched_yield();
		if ((spins & 1023) != 1023)
			continue;
		// A holder that died keeps the word forever: take it over.  And
		// the word is writable by every process of the user: a value
		// that stays a whole second is no holder at all (the control
		// half, whose values lie above the largest pid, holds a lock
		// for at most 20 ms; a process for one ring operation), whether
		// it names no process, a dead one, or a live one that never
		// took it (init, say).
		const std::uint64_t now = now_ns();
		if (cur != seen || !since) {
			seen = cur;
			since = now;
		}
		const bool stale = (cur != me && cur <= kMaxPid && process_dead(pid_t(cur))) ||
				   now - since > 1'000'000'000ull;
		if (stale)
			__atomic_compare_exchange_n(word_, &cur, 0u, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
}

// ---------------------------------------------------------------- Device
// The layout must describe tables that lie inside their parts (whatever
// the host sent, this process indexes them).
static bool layout_ok(const uabi_sw_arena_info &i)
{
	auto inside = [](std::uint64_t off, std::uint64_t count, std::uint64_t size,
			 std::uint64_t part) {
		return off >= 4096 && count <= (1u << 24) && off <= part && count * size <= part - off;
	};
	return i.magic == UABI_SW_ARENA_MAGIC && i.version == UABI_SW_ARENA_VERSION &&
	       inside(i.qp_off, i.qp_count, sizeof(uabi_sw_qp), i.ro_size) &&
	       inside(i.cq_off, i.cq_count, sizeof(uabi_sw_cq), i.ro_size) &&
	       inside(i.srq_off, i.srq_count, sizeof(uabi_sw_srq), i.ro_size) &&
	       inside(i.mr_off, i.mr_count, sizeof(uabi_sw_mr), i.ro_size) &&
	       inside(i.mcg_off, i.mcg_count, sizeof(uabi_sw_mcg), i.ro_size) &&
	       inside(i.qpw_off, i.qp_count, sizeof(uabi_sw_qp_rw), i.rw_size) &&
	       inside(i.cqw_off, i.cq_count, sizeof(uabi_sw_cq_rw), i.rw_size) &&
	       inside(i.srqw_off, i.srq_count, sizeof(uabi_sw_srq_rw), i.rw_size) &&
	       i.heap_off >= 4096 && i.heap_off <= i.rw_size && i.heap_size <= i.rw_size - i.heap_off;
}

std::unique_ptr<Device> Device::map(int ro_fd, int rw_fd, const uabi_sw_arena_info &info,
				    Notifier notify)
{
	if (!layout_ok(info)) {
		errno = EPROTO;
		return nullptr;
	}
	void *ro = mmap(nullptr, info.ro_size, PROT_READ, MAP_SHARED | MAP_NORESERVE, ro_fd, 0);
	if (ro == MAP_FAILED)
		return nullptr;
	void *rw = mmap(nullptr, info.rw_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			rw_fd, 0);
	if (rw == MAP_FAILED) {
		munmap(ro, info.ro_size);
		return nullptr;
	}
	// The read-only part starts with the same layout.
	if (std::memcmp(ro, &info, sizeof(info))) {
		munmap(ro, info.ro_size);
		munmap(rw, info.rw_size);
		errno = EPROTO;
		return nullptr;
	}
	// Peers copy into and out of this process with process_vm_*.
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);

	std::unique_ptr<Device> d(new (std::nothrow) Device());
	if (!d) {
		munmap(ro, info.ro_size);
		munmap(rw, info.rw_size);
		errno = ENOMEM;
		return nullptr;
	}
	d->ro_ = static_cast<const std::uint8_t *>(ro);
	d->rw_ = static_cast<std::uint8_t *>(rw);
	d->info_ = info;
	d->pid_ = getpid();
	d->notify_ = std::move(notify);
	const char *f = std::getenv("UABI_SW_FORCE_VM");
	d->force_vm_ = f && *f && *f != '0';
	const char *t = std::getenv("UABI_SW_TAIL_FIRST");
	d->tail_first_ = t && *t && *t != '0';
	if (const char *m = std::getenv("UABI_SW_SMALL"); m && *m)
		d->small_max_ = std::uint32_t(
		    std::min<unsigned long>(std::strtoul(m, nullptr, 10), UABI_SW_SMALL_MAX));
	d->claim_count_slot();
	return d;
}

// A counter slot of this process's own: a free one, one this process holds
// already (another context of it), or one whose process has exited (its
// counts stay in the slot: totals are sums).  None left: the block's own.
void Device::claim_count_slot()
{
	uabi_sw_port_counters *c = port_counters();
	const std::int32_t me = std::int32_t(pid_);
	for (auto &s : c->slot) {
		std::int32_t owner = __atomic_load_n(&s.owner, __ATOMIC_ACQUIRE);
		if (owner == me) {
			count_slot_ = &s;
			return;
		}
	}
	for (auto &s : c->slot) {
		std::int32_t owner = __atomic_load_n(&s.owner, __ATOMIC_ACQUIRE);
		if (owner != 0 && (owner < 0 || !process_dead(owner)))
			continue;
		if (__atomic_compare_exchange_n(&s.owner, &owner, me, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			count_slot_ = &s;
			return;
		}
	}
}

void Device::count_traffic(std::uint64_t bytes, std::uint32_t mtu, std::uint32_t copies,
			   bool multicast)
{
	if (!copies || !mtu)
		return;
	// Every packet is padded to 4 bytes and all but the last are full
	// (an MTU is a multiple of 4), so the words are the message's.
	const std::uint64_t words = (bytes + 3) / 4;
	const std::uint64_t pkts = bytes ? (bytes + mtu - 1) / mtu : 1;
	// Relaxed: a reader wants each total, not an order between them.
	if (uabi_sw_port_count *s = count_slot_) {
		__atomic_fetch_add(&s->data_words, words * copies, __ATOMIC_RELAXED);
		__atomic_fetch_add(multicast ? &s->mcast_pkts : &s->ucast_pkts, pkts * copies,
				   __ATOMIC_RELAXED);
		return;
	}
	uabi_sw_port_counters *c = port_counters();
	__atomic_fetch_add(&c->data_words, words * copies, __ATOMIC_RELAXED);
	__atomic_fetch_add(multicast ? &c->mcast_pkts : &c->ucast_pkts, pkts * copies,
			   __ATOMIC_RELAXED);
}

Device::~Device()
{
	{
		std::lock_guard<std::mutex> g(pending_lock_);
		stop_ = true;
	}
	pending_cv_.notify_all();
	if (thread_.joinable()) {
		if (thread_pid_ == getpid())
			thread_.join();
		else
			thread_.detach();
	}
	for (const DirectFd &f : direct_fds_)
		if (f.local >= 0)
			::close(f.local);
	if (ro_)
		munmap(const_cast<std::uint8_t *>(ro_), info_.ro_size);
	if (rw_)
		munmap(rw_, info_.rw_size);
}

// Deferred work is retried every kProgressNs while there is any.
static constexpr long kProgressNs = 100'000;

void Device::progress_thread()
{
	std::unique_lock<std::mutex> g(pending_lock_);
	for (;;) {
		pending_cv_.wait(g, [&] { return stop_ || !pending_.empty(); });
		if (stop_)
			return;
		progress_locked();
		g.unlock();
		timespec ts{0, kProgressNs};
		nanosleep(&ts, nullptr);
		g.lock();
	}
}

const uabi_sw_qp *Device::qp_desc(std::uint32_t qpn) const
{
	if (qpn < info_.qp_first || qpn - info_.qp_first >= info_.qp_count)
		return nullptr;
	return reinterpret_cast<const uabi_sw_qp *>(ro_ + info_.qp_off) + (qpn - info_.qp_first);
}

uabi_sw_qp_rw *Device::qp_rw(std::uint32_t qpn) const
{
	if (qpn < info_.qp_first || qpn - info_.qp_first >= info_.qp_count)
		return nullptr;
	return reinterpret_cast<uabi_sw_qp_rw *>(rw_ + info_.qpw_off) + (qpn - info_.qp_first);
}

const uabi_sw_cq *Device::cq_desc(std::uint32_t cqn) const
{
	if (cqn < 1 || cqn > info_.cq_count)
		return nullptr;
	return reinterpret_cast<const uabi_sw_cq *>(ro_ + info_.cq_off) + (cqn - 1);
}

uabi_sw_cq_rw *Device::cq_rw(std::uint32_t cqn) const
{
	if (cqn < 1 || cqn > info_.cq_count)
		return nullptr;
	return reinterpret_cast<uabi_sw_cq_rw *>(rw_ + info_.cqw_off) + (cqn - 1);
}

const uabi_sw_srq *Device::srq_desc(std::uint32_t slot) const
{
	if (slot < 1 || slot > info_.srq_count)
		return nullptr;
	return reinterpret_cast<const uabi_sw_srq *>(ro_ + info_.srq_off) + (slot - 1);
}

uabi_sw_srq_rw *Device::srq_rw(std::uint32_t slot) const
{
	if (slot < 1 || slot > info_.srq_count)
		return nullptr;
	return reinterpret_cast<uabi_sw_srq_rw *>(rw_ + info_.srqw_off) + (slot - 1);
}

// A ring's place comes from a read-only descriptor; it must still lie in
// the heap of the writable part.
bool Device::ring_ok(std::uint64_t off, std::uint64_t bytes) const
{
	return off >= info_.heap_off && bytes <= info_.rw_size && off <= info_.rw_size - bytes;
}

bool Device::mr_lookup(std::uint32_t key, uabi_sw_mr &out) const
{
	std::uint32_t idx = key >> 8;
	if (idx == 0 || idx >= info_.mr_count)
		return false;
	const auto *e = reinterpret_cast<const uabi_sw_mr *>(ro_ + info_.mr_off) + idx;
	snapshot(e, out);
	return out.key == key && key != 0;
}

void Device::qp_failed(std::uint32_t qpn, std::uint32_t event)
{
	const detail::QpRef q{qp_desc(qpn), qp_rw(qpn)};
	if (!q || __atomic_load_n(&q.d->qpn, __ATOMIC_RELAXED) != qpn)
		return;
	if (event) {
		detail::mark_error(*this, q, event);
		return;
	}
	if (__atomic_load_n(&q.d->state, __ATOMIC_ACQUIRE) == detail::kReset)
		return;
	__atomic_store_n(&q.w->err, 1u, __ATOMIC_RELEASE);
	__atomic_store_n(&q.w->flush, 1u, __ATOMIC_RELEASE);
}

bool Device::srq_lookup(std::uint32_t slot, uabi_sw_srq &out) const
{
	const uabi_sw_srq *d = srq_desc(slot);
	if (!d)
		return false;
	snapshot(d, out);
	return out.slot == slot && slot != 0;
}

bool Device::qp_lookup(std::uint32_t qpn, uabi_sw_qp &out) const
{
	const uabi_sw_qp *d = qp_desc(qpn);
	if (!d)
		return false;
	snapshot(d, out);
	return true;
}

bool Device::mcg_snapshot(std::uint32_t i, uabi_sw_mcg &out) const
{
	if (i >= info_.mcg_count)
		return false;
	snapshot(reinterpret_cast<const uabi_sw_mcg *>(ro_ + info_.mcg_off) + i, out);
	return out.num_qp != 0;
}

namespace {

// Before the first byte a producer writes into one of a CQ's rings (under
// its lock): the control half zeroes a destroyed CQ's rings only if they
// were written (uabi_sw_cq_rw.written).
void mark_written(uabi_sw_cq_rw *w, std::uint32_t what)
{
	if ((__atomic_load_n(&w->written, __ATOMIC_RELAXED) & what) != what)
		__atomic_fetch_or(&w->written, what, __ATOMIC_RELAXED);
}

} // namespace

bool Device::push_cqe(std::uint32_t cqn, const Cqe &e, bool *overran)
{
	const uabi_sw_cq *d = cq_desc(cqn);
	uabi_sw_cq_rw *w = cq_rw(cqn);
	if (!d)
		return false;
	bool pushed = false, first_overrun = false;
	{
		// The control half moves the ring only under this lock.
		ArenaLock lk(&w->lock, pid_);
		if (__atomic_load_n(&d->cqn, __ATOMIC_RELAXED) != cqn)
			return false;
		std::uint32_t size = __atomic_load_n(&d->size, __ATOMIC_RELAXED);
		std::uint64_t off = __atomic_load_n(&d->ring_off, __ATOMIC_RELAXED);
		if (!size || (size & (size - 1)) || !ring_ok(off, std::uint64_t(size) * sizeof(Cqe)))
			return false;
		std::uint64_t prod = w->prod;
		std::uint64_t cons = __atomic_load_n(&w->cons, __ATOMIC_ACQUIRE);
		if (prod - cons >= size) {
			first_overrun = __atomic_exchange_n(&w->overrun, 1u, __ATOMIC_RELAXED) == 0;
			if (overran)
				*overran = true;
		} else {
			Cqe *slot = reinterpret_cast<Cqe *>(rw_ + off) + (prod & (size - 1));
			mark_written(w, UABI_SW_CQ_WRITTEN_RING);
			std::memcpy(static_cast<void *>(slot), &e, offsetof(Cqe, seq));
			slot->small = 0;
			slot->small_idx = 0;
			slot->ts = __atomic_load_n(&w->timestamps, __ATOMIC_RELAXED) ? now_ns() : 0;
			__atomic_store_n(&slot->seq, prod + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&w->prod, prod + 1, __ATOMIC_RELAXED);
			pushed = true;
		}
	}
	// A full CQ loses the completion; the first loss raises
	// IBV_EVENT_CQ_ERR for the owner (the flag stays: the CQ is broken).
	if (first_overrun && notify_)
		notify_(Notice::CqError, cqn);
	if (!pushed)
		return false;
	after_push(w, cqn, e);
	return true;
}

bool Device::push_small(std::uint32_t cqn, const Cqe &e, pid_t owner, const uabi_sw_small &m,
			const std::uint8_t *data)
{
	const uabi_sw_cq *d = cq_desc(cqn);
	uabi_sw_cq_rw *w = cq_rw(cqn);
	const std::uint32_t len = m.length, need = UABI_SW_SMALL_NSLOTS(len);
	if (!d || len > kSmallBytes)
		return false;
	{
		ArenaLock lk(&w->lock, pid_);
		// Only the process that posted the receive may copy the
		// payload into its buffers: the poller of this CQ.
		if (__atomic_load_n(&d->cqn, __ATOMIC_RELAXED) != cqn || d->pid != owner)
			return false;
		std::uint32_t size = d->size, slots = d->small_slots;
		std::uint64_t off = d->ring_off, small_off = d->small_off;
		if (!size || (size & (size - 1)) ||
		    !ring_ok(off, std::uint64_t(size) * sizeof(Cqe)) || !slots ||
		    (slots & (slots - 1)) ||
		    !ring_ok(small_off, std::uint64_t(slots) * sizeof(uabi_sw_small)))
			return false;
		std::uint64_t prod = w->prod;
		std::uint32_t sp = w->small_prod;
		// Full rings: the caller copies as before (and a full CQE ring
		// overruns there).
		const std::uint32_t used = sp - __atomic_load_n(&w->small_cons, __ATOMIC_ACQUIRE);
		if (prod - __atomic_load_n(&w->cons, __ATOMIC_ACQUIRE) >= size || used > slots ||
		    need > slots - used)
			return false;
		auto *ring = rw_ + small_off;
		auto *ms = reinterpret_cast<uabi_sw_small *>(ring) + (sp & (slots - 1));
		mark_written(w, UABI_SW_CQ_WRITTEN_RING | UABI_SW_CQ_WRITTEN_SMALL);
		// The header and the first bytes in this slot, the rest in the
		// next ones (the ring's first follows its last).
		const std::uint32_t first = std::min(len, std::uint32_t(UABI_SW_SMALL_DATA));
		std::memcpy(static_cast<void *>(ms), &m, offsetof(uabi_sw_small, data));
		std::memcpy(ms->data, data, first);
		for (std::uint32_t i = 1, at = first; at < len; i++, at += UABI_SW_SMALL_SLOT)
			std::memcpy(ring + ((sp + i) & (slots - 1)) * UABI_SW_SMALL_SLOT, data + at,
				    std::min(len - at, std::uint32_t(UABI_SW_SMALL_SLOT)));
		__atomic_store_n(&w->small_prod, sp + need, __ATOMIC_RELAXED);
		Cqe *slot = reinterpret_cast<Cqe *>(rw_ + off) + (prod & (size - 1));
		std::memcpy(static_cast<void *>(slot), &e, offsetof(Cqe, seq));
		slot->small = 1;
		slot->small_idx = sp;
		slot->ts = __atomic_load_n(&w->timestamps, __ATOMIC_RELAXED) ? now_ns() : 0;
		__atomic_store_n(&slot->seq, prod + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&w->prod, prod + 1, __ATOMIC_RELAXED);
	}
	after_push(w, cqn, e);
	return true;
}

// UABI_TEST_KILL_AFTER_ARM=N (tests only, docs/datapath.md): the N-th arm
// this process takes, it dies (SIGKILL) before raising the event, as a
// producer killed in that window would.  Read once.
static void test_kill_after_arm()
{
	static const unsigned long at = [] {
		const char *v = std::getenv("UABI_TEST_KILL_AFTER_ARM");
		return v ? std::strtoul(v, nullptr, 10) : 0ul;
	}();
	static std::atomic<unsigned long> taken{0};
	if (at && taken.fetch_add(1, std::memory_order_relaxed) + 1 == at)
		::kill(::getpid(), SIGKILL);
}

void Device::after_push(uabi_sw_cq_rw *w, std::uint32_t cqn, const Cqe &e)
{
	// Pairs with the fence of Cq::arm(): either the consumer sees this
	// entry when it polls after arming, or this producer sees the arm.
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	std::uint32_t armed = __atomic_load_n(&w->armed, __ATOMIC_RELAXED);
	if (armed == UABI_SW_CQ_ARM_NEXT ||
	    (armed == UABI_SW_CQ_ARM_SOLICITED && (e.solicited || e.status != kWcSuccess))) {
		if (__atomic_compare_exchange_n(&w->armed, &armed, std::uint32_t(UABI_SW_CQ_ARM_NONE),
						false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			test_kill_after_arm();
			if (!raise_direct(w, cqn))
				notify(cqn);
		}
	}
}

// The owner's eventfd, fetched once with pidfd_getfd (which needs what
// process_vm_writev needs: same user, and PR_SET_PTRACER_ANY, which every
// mapping of the arena sets) and kept, keyed by what the owner wrote.  The
// words come from the user's own arena, which no other user can write;
// a process of the same user can point us at any eventfd of its user's
// (docs/security.md): we only ever add 1 to it, and only if it is an
// eventfd.
int Device::direct_fd(pid_t pid, int fd, std::uint32_t gen)
{
	for (std::size_t i = direct_fds_.size(); i-- > 0;)
		if (direct_fds_[i].pid == pid && direct_fds_[i].fd == fd && direct_fds_[i].gen == gen)
			return direct_fds_[i].local;
	int local = -1;
	int pfd = int(::syscall(SYS_pidfd_open, pid, 0));
	if (pfd >= 0) {
		local = int(::syscall(SYS_pidfd_getfd, pfd, fd, 0));
		::close(pfd);
	}
	if (local >= 0) {
		char path[64], link[64] = {};
		std::snprintf(path, sizeof(path), "/proc/self/fd/%d", local);
		ssize_t n = ::readlink(path, link, sizeof(link) - 1);
		if (n <= 0 || std::strcmp(link, "anon_inode:[eventfd]") != 0) {
			::close(local);
			local = -1;
		}
	}
	if (direct_fds_.size() >= 32) {
		if (direct_fds_.front().local >= 0)
			::close(direct_fds_.front().local);
		direct_fds_.erase(direct_fds_.begin());
	}
	direct_fds_.push_back({pid, fd, gen, local});
	return local;
}

bool Device::raise_direct(uabi_sw_cq_rw *w, std::uint32_t cqn)
{
	const std::int32_t pid = __atomic_load_n(&w->notify_pid, __ATOMIC_ACQUIRE);
	if (pid <= 0)
		return false;
	const uabi_sw_cq *d = cq_desc(cqn);
	if (!d || __atomic_load_n(&d->pid, __ATOMIC_RELAXED) != pid)
		return false; // a stale request: not the CQ's owner
	const int fd = __atomic_load_n(&w->notify_fd, __ATOMIC_RELAXED);
	const std::uint32_t gen = __atomic_load_n(&w->notify_gen, __ATOMIC_RELAXED);
	if (fd < 0)
		return false;
	int efd;
	{
		std::lock_guard<std::mutex> g(direct_lock_);
		efd = direct_fd(pid_t(pid), fd, gen);
	}
	if (efd < 0)
		return false;
	// Counted first: the owner looks at the count after it woke.
	__atomic_fetch_add(&w->direct_events, 1u, __ATOMIC_SEQ_CST);
	// Never blocks: a counter that cannot take 1 more is readable anyway.
	pollfd p{efd, POLLOUT, 0};
	std::uint64_t one = 1;
	if (::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) && ::write(efd, &one, sizeof(one)) < 0) {
	}
	return true;
}

void Device::add_pending(Qp *qp)
{
	std::lock_guard<std::mutex> g(pending_lock_);
	for (Qp *q : pending_)
		if (q == qp)
			return;
	pending_.push_back(qp);
	pending_qps_.store(int(pending_.size()), std::memory_order_relaxed);
	if (!thread_.joinable() && !stop_) {
		try {
			thread_ = std::thread([this] { progress_thread(); });
			thread_pid_ = getpid();
		} catch (...) {
			// No thread: the application's own calls still progress.
		}
	}
	pending_cv_.notify_one();
}

void Device::remove_pending(Qp *qp)
{
	std::lock_guard<std::mutex> g(pending_lock_);
	for (std::size_t i = 0; i < pending_.size(); i++) {
		if (pending_[i] == qp) {
			pending_.erase(pending_.begin() + long(i));
			break;
		}
	}
	pending_qps_.store(int(pending_.size()), std::memory_order_relaxed);
}

void Device::progress()
{
	std::lock_guard<std::mutex> g(pending_lock_);
	progress_locked();
}

void Device::progress_locked()
{
	for (std::size_t i = 0; i < pending_.size();) {
		Qp *qp = pending_[i];
		bool more = true;
		if (qp->try_progress(&more) && !more) {
			pending_.erase(pending_.begin() + long(i));
			continue;
		}
		i++;
	}
	pending_qps_.store(int(pending_.size()), std::memory_order_relaxed);
}

int Device::next_timeout_ms()
{
	std::lock_guard<std::mutex> g(pending_lock_);
	if (pending_.empty())
		return -1;
	// Deferred work is retried often enough that a receiver posting a
	// buffer is noticed quickly; deadlines are checked at each retry.
	return 1;
}

// -------------------------------------------------------------------- CQ
Cq::Cq(Device &dev, std::uint32_t cqn)
	: dev_(dev), cqn_(cqn), desc_(dev.cq_desc(cqn)), rw_(dev.cq_rw(cqn))
{
	cons_ = __atomic_load_n(&rw_->cons, __ATOMIC_ACQUIRE);
	refresh();
}

Cq::~Cq() = default;

void Cq::refresh()
{
	uabi_sw_cq snap;
	snapshot(desc_, snap);
	if (snap.size && dev_.ring_ok(snap.ring_off, std::uint64_t(snap.size) * sizeof(Cqe))) {
		ring_ = reinterpret_cast<const Cqe *>(dev_.at(snap.ring_off));
		mask_ = snap.size - 1;
	}
	if (snap.small_slots && !(snap.small_slots & (snap.small_slots - 1)) &&
	    dev_.ring_ok(snap.small_off, std::uint64_t(snap.small_slots) * sizeof(uabi_sw_small))) {
		small_ = reinterpret_cast<const uabi_sw_small *>(dev_.at(snap.small_off));
		small_mask_ = snap.small_slots - 1;
	}
}

void Cq::land(Cqe &c)
{
	const std::uint32_t idx = c.small_idx;
	std::uint32_t slots = 1;
	bool ok = small_ != nullptr;
	if (ok) {
		const uabi_sw_small &m = small_[idx & small_mask_];
		// What is checked is what is used: a copy of the header.
		decltype(m.seg) seg;
		const std::uint32_t n = m.num_seg, len = m.length;
		ok = n <= UABI_SW_SMALL_SEGS && len <= kSmallBytes &&
		     UABI_SW_SMALL_NSLOTS(len) <= small_mask_ + 1;
		if (ok)
			slots = UABI_SW_SMALL_NSLOTS(len);
		if (ok)
			std::memcpy(seg, m.seg, n * sizeof(seg[0]));
		// The sender checked the receive WQE's keys; check again that
		// every byte lands in memory this process registered writable
		// (it may have deregistered it since).
		std::uint64_t sum = 0;
		for (std::uint32_t i = 0; ok && i < n; i++) {
			uabi_sw_mr mr;
			ok = dev_.mr_lookup(seg[i].lkey, mr) && mr.pid == dev_.pid() &&
			     (mr.access & kAccessLocalWrite) && seg[i].addr >= mr.addr &&
			     seg[i].length <= mr.length &&
			     seg[i].addr - mr.addr <= mr.length - seg[i].length;
			sum += seg[i].length;
		}
		ok = ok && sum == len;
		if (ok) {
			iovec to[UABI_SW_SMALL_SEGS], from[3];
			for (std::uint32_t i = 0; i < n; i++)
				to[i] = {reinterpret_cast<void *>(seg[i].addr), seg[i].length};
			// The first slot's bytes, then the next slots' (in at most
			// two runs: up to the ring's end, then from its start).
			const std::uint32_t first = std::min(len, std::uint32_t(UABI_SW_SMALL_DATA));
			int nf = 0;
			from[nf++] = {const_cast<std::uint8_t *>(m.data), first};
			auto *ring = reinterpret_cast<std::uint8_t *>(const_cast<uabi_sw_small *>(small_));
			for (std::uint32_t at = first, s = idx + 1; at < len;) {
				const std::uint32_t k = s & small_mask_;
				const std::uint32_t run = std::min(
				    len - at, (small_mask_ + 1 - k) * std::uint32_t(UABI_SW_SMALL_SLOT));
				from[nf++] = {ring + std::size_t(k) * UABI_SW_SMALL_SLOT, run};
				at += run;
				s += (run + UABI_SW_SMALL_SLOT - 1) / UABI_SW_SMALL_SLOT;
			}
			local_copy(to, int(n), from, nf, len, dev_.tail_first());
		}
	}
	if (!ok) {
		c.status = kWcLocProtErr;
		c.byte_len = 0;
	}
	c.small = 0;
	__atomic_store_n(&rw_->small_cons, idx + slots, __ATOMIC_RELEASE);
}

void Cq::want_timestamps()
{
	__atomic_store_n(&rw_->timestamps, 1u, __ATOMIC_RELEASE);
}

void Cq::arm(bool solicited_only)
{
	__atomic_store_n(&rw_->armed,
			 std::uint32_t(solicited_only ? UABI_SW_CQ_ARM_SOLICITED : UABI_SW_CQ_ARM_NEXT),
			 __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void Cq::set_direct(int efd, std::uint32_t gen)
{
	__atomic_store_n(&rw_->notify_pid, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&rw_->notify_fd, efd, __ATOMIC_RELAXED);
	__atomic_store_n(&rw_->notify_gen, gen, __ATOMIC_RELAXED);
	__atomic_store_n(&rw_->notify_pid, std::int32_t(dev_.pid()), __ATOMIC_RELEASE);
}

void Cq::clear_direct()
{
	__atomic_store_n(&rw_->notify_pid, 0, __ATOMIC_SEQ_CST);
}

void Cq::attach(Qp *qp)
{
	std::lock_guard<std::mutex> g(qps_lock_);
	qps_.push_back(qp);
}

void Cq::detach(Qp *qp)
{
	std::lock_guard<std::mutex> g(qps_lock_);
	for (std::size_t i = 0; i < qps_.size(); i++) {
		if (qps_[i] == qp) {
			qps_.erase(qps_.begin() + long(i));
			return;
		}
	}
}

void Cq::flush_attached()
{
	if (!__atomic_exchange_n(&rw_->flush, 0u, __ATOMIC_ACQ_REL))
		return;
	std::lock_guard<std::mutex> g(qps_lock_);
	for (Qp *qp : qps_)
		qp->flush_if_error();
}

} // namespace uabi::sw
