// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The data half of the software RDMA device (docs/datapath.md): the
// initiator of a work request moves the bytes itself, with
// process_vm_writev/readv, after checking keys, bounds and access in the
// device arena that the control half (kernel/drivers/sw) maintains.
//
// Values (statuses, opcodes, flags) are numbered as <infiniband/verbs.h>;
// this library does not depend on it.  No exceptions cross this API.
#ifndef UABI_SW_PROVIDER_HPP
#define UABI_SW_PROVIDER_HPP

#include <rdma/uabi_sw.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <sys/types.h>
#include <thread>
#include <utility>
#include <vector>

namespace uabi::sw {

// ------------------------------------------------ values of <verbs.h>
enum WcStatus : std::uint32_t {
	kWcSuccess = 0,
	kWcLocLenErr = 1,
	kWcLocQpOpErr = 2,
	kWcLocProtErr = 4,
	kWcWrFlushErr = 5,
	kWcMwBindErr = 6,
	kWcLocAccessErr = 8,
	kWcRemInvReqErr = 9,
	kWcRemAccessErr = 10,
	kWcRemOpErr = 11,
	kWcRetryExcErr = 12,
	kWcRnrRetryExcErr = 13,
	kWcFatalErr = 19,
	kWcGeneralErr = 21,
};

enum WcOpcode : std::uint32_t {
	kWcSend = 0,
	kWcRdmaWrite = 1,
	kWcRdmaRead = 2,
	kWcCompSwap = 3,
	kWcFetchAdd = 4,
	kWcBindMw = 5,
	kWcLocalInv = 6,
	kWcAtomicWrite = 9,
	kWcRecv = 128,
	kWcRecvRdmaWithImm = 129,
};

enum WcFlags : std::uint32_t {
	kWcGrh = 1u << 0,
	kWcWithImm = 1u << 1,
	kWcWithInv = 1u << 3,	// Cqe::imm_data holds the invalidated rkey
};

enum WrOpcode : std::uint32_t {
	kWrRdmaWrite = 0,
	kWrRdmaWriteWithImm = 1,
	kWrSend = 2,
	kWrSendWithImm = 3,
	kWrRdmaRead = 4,
	kWrAtomicCmpAndSwp = 5,
	kWrAtomicFetchAndAdd = 6,
	kWrLocalInv = 7,	// SendWr::invalidate_rkey
	kWrBindMw = 8,		// SendWr::bind
	kWrSendWithInv = 9,	// SendWr::invalidate_rkey, the responder's
	kWrAtomicWrite = 15,	// 8 bytes, in SendWr::compare_add
};

enum SendFlags : std::uint32_t {
	kSendFence = 1u << 0,
	kSendSignaled = 1u << 1,
	kSendSolicited = 1u << 2,
	kSendInline = 1u << 3,
};

enum Access : std::uint32_t {
	kAccessLocalWrite = 1u << 0,
	kAccessRemoteWrite = 1u << 1,
	kAccessRemoteRead = 1u << 2,
	kAccessRemoteAtomic = 1u << 3,
	kAccessMwBind = 1u << 4,
};

inline constexpr std::uint32_t kGrhBytes = 40;	// UD receive buffers start with it
// The most data a small message carries: a SEND's payload, for UD after
// the GRH ("Small messages" in docs/datapath.md).
inline constexpr std::uint32_t kSmallBytes = UABI_SW_SMALL_MAX + kGrhBytes;
inline constexpr std::uint32_t kMtuBytes = 4096;	// IBV_MTU_4096: UD message limit

struct Sge {
	std::uint64_t addr;
	std::uint32_t length;
	std::uint32_t lkey;
};

// What a UD send needs of an address handle.
struct AddressHandle {
	std::uint16_t dlid = 0;
	std::uint8_t sl = 0;
	std::uint8_t is_global = 0;
	std::uint8_t sgid_index = 0;
	std::uint8_t hop_limit = 0;
	std::uint8_t traffic_class = 0;
	std::uint32_t flow_label = 0;
	std::uint8_t dgid[16] = {};
};

// A memory window bind (ibv_mw_bind_info): the window and the MR are the
// verbs layer's objects, which it names to the control half.
struct MwBind {
	const void *mw = nullptr;
	const void *mr = nullptr;
	std::uint64_t addr = 0;
	std::uint64_t length = 0;	// 0: unbind (type 1)
	std::uint32_t access = 0;	// kAccessRemote*
	std::uint32_t rkey = 0;		// the window's key after the bind
};

// What a memory window work request asks of the control half when its
// turn comes (the bind or invalidation happens in order with the QP's
// other work requests).
struct MwRequest {
	enum Kind : std::uint32_t { Bind, LocalInv, RemoteInv } kind = Bind;
	std::uint32_t qpn = 0;		// LocalInv: this QP; RemoteInv: the responder
	std::uint32_t rkey = 0;		// LocalInv, RemoteInv: the key
	const MwBind *bind = nullptr;	// Bind
};

struct SendWr {
	std::uint64_t wr_id = 0;
	std::uint32_t opcode = kWrSend;	// WrOpcode
	std::uint32_t send_flags = 0;	// SendFlags
	std::uint32_t imm_data = 0;	// network order
	const Sge *sg_list = nullptr;
	int num_sge = 0;
	std::uint64_t remote_addr = 0;
	std::uint32_t rkey = 0;
	std::uint64_t compare_add = 0;
	std::uint64_t swap = 0;
	const AddressHandle *ah = nullptr;	// UD
	std::uint32_t remote_qpn = 0;		// UD
	std::uint32_t remote_qkey = 0;		// UD
	std::uint32_t remote_srqn = 0;		// XRC
	std::uint32_t invalidate_rkey = 0;	// LOCAL_INV, SEND_WITH_INV
	MwBind bind;				// BIND_MW
};

using Cqe = uabi_sw_cqe;

class Device;
struct Iov;
class Cq;
class Qp;
class Srq;

// --------------------------------------------------------------- Device
// What the data path asks of the control half.
enum class Notice {
	CqEvent,	// raise the completion event of CQ n (UABI_SW_ARENA_NOTIFY_CQ)
	SrqLimit,	// SRQ slot n fell below its limit (UABI_SW_ARENA_SRQ_LIMIT)
	CqError,	// CQ n overran (UABI_SW_ARENA_CQ_ERROR)
	QpError,	// responder QP n went to ERR (UABI_SW_ARENA_QP_ERROR)
};

// One mapping of a user's arena: its read-only part (descriptors, MR
// table) and its writable part (indices, locks, flags, rings).
class Device {
public:
	using Notifier = std::function<int(Notice, std::uint32_t)>;

	// Maps @ro_fd read-only and @rw_fd writable (sizes from info); does
	// not take ownership of the fds.  Also makes this process's memory
	// reachable by its peers (PR_SET_PTRACER_ANY).  Returns nullptr and
	// sets errno on failure (EPROTO: a layout it does not know).
	static std::unique_ptr<Device> map(int ro_fd, int rw_fd, const uabi_sw_arena_info &info,
					   Notifier notify);
	~Device();
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;

	pid_t pid() const { return pid_; }
	const uabi_sw_arena_info &info() const { return info_; }

	// Runs the deferred work of every QP of this device mapping (RNR and
	// not-ready retries, timers); cheap when there is none.  Besides the
	// application's calls, a progress thread does it while work is
	// deferred (as an HCA retries by itself); it sleeps otherwise.
	void progress();
	bool has_pending() const { return pending_qps_.load(std::memory_order_relaxed) != 0; }
	// How long a blocked waiter may sleep before progress() has work
	// (ms, -1 = forever).
	int next_timeout_ms();

	// Memory of another process of this user, for the wire's XRC receive
	// QPs that fill SRQs of other processes (docs/wire.md, "XRC"): @n
	// bytes to (in placement order) or from address @addr of @pid, and
	// an RDMA atomic on the 8 aligned bytes there, under the lock of
	// atomics as on the shared-memory path.  0 or errno (ESRCH: gone).
	int peer_write(pid_t pid, std::uint64_t addr, const void *src, std::size_t n);
	int peer_read(pid_t pid, std::uint64_t addr, void *dst, std::size_t n);
	int peer_atomic(pid_t pid, std::uint64_t addr, bool cmp_swap, std::uint64_t compare,
			std::uint64_t swap_add, std::uint64_t &orig);

	// ---- internal, for Cq/Qp/Srq and tests
	// Read-only descriptors (nullptr: out of range) and their writable
	// halves.
	const uabi_sw_qp *qp_desc(std::uint32_t qpn) const;
	uabi_sw_qp_rw *qp_rw(std::uint32_t qpn) const;
	const uabi_sw_cq *cq_desc(std::uint32_t cqn) const;
	uabi_sw_cq_rw *cq_rw(std::uint32_t cqn) const;
	const uabi_sw_srq *srq_desc(std::uint32_t slot) const;
	uabi_sw_srq_rw *srq_rw(std::uint32_t slot) const;
	// The writable part: rings and the lock of atomics.
	std::uint8_t *at(std::uint64_t off) const { return rw_ + off; }
	std::uint32_t *atomic_lock() const
	{
		return &reinterpret_cast<uabi_sw_arena_rw_hdr *>(rw_)->atomic_lock;
	}
	// The port's counters in the writable part (uabi_sw_port_counters).
	uabi_sw_port_counters *port_counters() const
	{
		return &reinterpret_cast<uabi_sw_arena_rw_hdr *>(rw_)->port;
	}
	// Counts one message delivered, both ends at once: @bytes of payload
	// in packets of @mtu bytes (at least one), @copies times (a UD
	// multicast: once per QP it reached), as unicast or multicast.
	void count_traffic(std::uint64_t bytes, std::uint32_t mtu, std::uint32_t copies = 1,
			   bool multicast = false);
	void claim_count_slot();
	bool ring_ok(std::uint64_t off, std::uint64_t bytes) const;
	bool mr_lookup(std::uint32_t key, uabi_sw_mr &out) const;
	// A consistent copy of SRQ @slot's descriptor (false: out of range
	// or free) and of QP @qpn's (false: out of range).
	bool srq_lookup(std::uint32_t slot, uabi_sw_srq &out) const;
	bool qp_lookup(std::uint32_t qpn, uabi_sw_qp &out) const;
	// Multicast group i of the user (false: a free entry).
	std::uint32_t mcg_count() const { return info_.mcg_count; }
	bool mcg_snapshot(std::uint32_t i, uabi_sw_mcg &out) const;
	// Appends a completion to CQ @cqn (any process's); false if the CQ is
	// gone or full (overrun: *overran set, if given).  Raises the event if
	// the CQ is armed.
	bool push_cqe(std::uint32_t cqn, const Cqe &e, bool *overran = nullptr);
	// Appends a receive completion whose payload @m rides in the CQ's
	// small ring, for the CQ's owner to copy when it polls.  false, and
	// nothing written, unless the CQ is owned by @owner and has room in
	// both rings: the caller then copies the payload itself.
	// @m: the header (length, segments) of @data, m.length bytes.
	bool push_small(std::uint32_t cqn, const Cqe &e, pid_t owner, const uabi_sw_small &m,
			const std::uint8_t *data);
	// Largest payload sent through the small rings (UABI_SW_SMALL_MAX;
	// UABI_SW_SMALL=N lowers it, 0 turns the path off).
	std::uint32_t small_max() const { return small_max_; }
	void notify(std::uint32_t cqn) { if (notify_) notify_(Notice::CqEvent, cqn); }
	void notify_srq_limit(std::uint32_t slot) { if (notify_) notify_(Notice::SrqLimit, slot); }
	void notify_qp_error(std::uint32_t qpn) { if (notify_) notify_(Notice::QpError, qpn); }
	// QP @qpn went to ERR in a data path of its own (the wire's): the
	// arena says so, its CQs flush at their next poll, and @event (an
	// affiliated error, enum ibv_event_type; 0: none, a requester's error
	// is its completion) is raised once for its owner.
	void qp_failed(std::uint32_t qpn, std::uint32_t event);
	bool force_vm() const { return force_vm_; }
	// UABI_SW_TAIL_FIRST: copies write the tail first (tests only).
	bool tail_first() const { return tail_first_; }
	void add_pending(Qp *qp);
	void remove_pending(Qp *qp);
	// Raises CQ @cqn's event straight at its owner's eventfd if the owner
	// asked for that (Cq::set_direct); false: it did not, or its fd
	// cannot be had (then the control half raises it).
	bool raise_direct(uabi_sw_cq_rw *w, std::uint32_t cqn);

private:
	Device() = default;
	// (pid, fd, gen) -> our duplicate of that eventfd (-1: not to be had)
	struct DirectFd {
		pid_t pid;
		int fd;
		std::uint32_t gen;
		int local;
	};
	int direct_fd(pid_t pid, int fd, std::uint32_t gen);
	std::mutex direct_lock_;
	std::vector<DirectFd> direct_fds_; // most recent last, at most 32
	const std::uint8_t *ro_ = nullptr;
	std::uint8_t *rw_ = nullptr;
	uabi_sw_arena_info info_{};
	pid_t pid_ = 0;
	Notifier notify_;
	bool force_vm_ = false;
	// This process's counter slot (uabi_sw_port_count), or nullptr: the
	// block's own totals.
	uabi_sw_port_count *count_slot_ = nullptr;
	bool tail_first_ = false;
	std::uint32_t small_max_ = UABI_SW_SMALL_MAX;
	void after_push(uabi_sw_cq_rw *w, std::uint32_t cqn, const Cqe &e);
	void progress_thread();
	void progress_locked();
	std::mutex pending_lock_;
	std::vector<Qp *> pending_;
	std::atomic<int> pending_qps_{0};
	std::condition_variable pending_cv_;
	std::thread thread_;
	pid_t thread_pid_ = 0;	// a forked child has no thread to join
	bool stop_ = false;
};

// ------------------------------------------------------------------- CQ
class Cq {
public:
	Cq(Device &dev, std::uint32_t cqn);
	~Cq();
	std::uint32_t cqn() const { return cqn_; }
	Device &device() { return dev_; }

	// Takes up to n completions in order; f(const Cqe &) for each.
	template <class F>
	int poll(int n, F &&f)
	{
		if (dev_.has_pending())
			dev_.progress();
		if (__atomic_load_n(&rw_->flush, __ATOMIC_RELAXED))
			flush_attached();
		std::lock_guard<std::mutex> g(lock_);
		int i = 0;
		for (; ring_ && i < n; i++) {
			const Cqe &e = ring_[cons_ & mask_];
			if (__atomic_load_n(&e.seq, __ATOMIC_ACQUIRE) != cons_ + 1)
				break;
			if (e.small) {
				Cqe c = e;
				land(c);
				f(std::as_const(c));
			} else {
				f(e);
			}
			cons_++;
			__atomic_store_n(&rw_->cons, cons_, __ATOMIC_RELEASE);
		}
		return i;
	}
	// ibv_req_notify_cq: the next (solicited) completion raises the event.
	void arm(bool solicited_only);
	// Events of this CQ go straight to @efd (an eventfd of this process,
	// named @gen among its eventfds) from now on: producers write it and
	// count them (direct_events()).  clear_direct(): through the control
	// half again (before the CQ is destroyed).
	void set_direct(int efd, std::uint32_t gen);
	void clear_direct();
	std::uint32_t direct_events() const
	{
		return __atomic_load_n(&rw_->direct_events, __ATOMIC_ACQUIRE);
	}
	// Completions get their time (Cqe::ts, CLOCK_MONOTONIC ns) from now on.
	void want_timestamps();
	// After the control half resized the ring.
	void refresh();
	void attach(Qp *qp);
	void detach(Qp *qp);

private:
	void flush_attached();
	// Copies a small SEND's payload into the receive buffers (this
	// process's), then frees its slot.
	void land(Cqe &c);
	Device &dev_;
	std::uint32_t cqn_;
	const uabi_sw_cq *desc_;
	uabi_sw_cq_rw *rw_;
	const Cqe *ring_ = nullptr;
	std::uint64_t mask_ = 0;
	const uabi_sw_small *small_ = nullptr;
	std::uint32_t small_mask_ = 0;
	std::uint64_t cons_ = 0;
	std::mutex lock_;
	std::mutex qps_lock_;
	std::vector<Qp *> qps_;
};

// ------------------------------------------------------------------ SRQ
class Srq {
public:
	Srq(Device &dev, std::uint32_t slot);
	std::uint32_t slot() const { return slot_; }
	// 0, EINVAL (too many SGEs) or ENOMEM (full).
	int post_recv(std::uint64_t wr_id, const Sge *sg, int num_sge);
	// The consumer's side, for a provider that keeps WQEs of its own (the
	// wire's): takes the oldest WQE (its SRQ limit event raised).  1 and
	// the WQE, 0 when the SRQ is empty, -1 when it is gone.
	int take(std::uint64_t &wr_id, std::vector<Sge> &sges);

private:
	Device &dev_;
	std::uint32_t slot_;
	const uabi_sw_srq *desc_;
	uabi_sw_srq_rw *rw_;
};

// ------------------------------------------------------------- providers
// What the verbs layer holds of a QP: the shared-memory path (Qp below)
// and the wire (docs/wire.md) are two providers of one device model.
using MwControl = std::function<int(const MwRequest &)>;

// What ibv_modify_qp(3) changed, for a provider that keeps connection
// state of its own (the wire: the peer's address, PSNs, timers); the
// shared-memory path reads what it needs from the arena instead.
struct QpModify {
	std::uint32_t mask = 0;		// IBV_QP_* bits
	std::uint32_t state = 0;	// IBV_QPS_*
	std::uint8_t dgid[16] = {};
	bool is_global = false;
	std::uint8_t sgid_index = 0;	// the AV's source GID (with is_global)
	std::uint8_t traffic_class = 0;	// the AV's GRH
	std::uint32_t dest_qpn = 0;
	std::uint32_t rq_psn = 0;
	std::uint32_t sq_psn = 0;
	std::uint32_t path_mtu = 0;
	std::uint32_t qkey = 0;
	std::uint32_t access = 0;
	std::uint8_t timeout = 0;
	std::uint8_t retry_cnt = 0;
	std::uint8_t rnr_retry = 0;
	std::uint8_t min_rnr_timer = 0;
	std::uint8_t max_rd_atomic = 0;
};

class QpProvider {
public:
	virtual ~QpProvider() = default;
	// false: unusable (no memory for its queues).
	virtual bool ok() const = 0;
	// The data path's view of the state (it may have moved to ERR).
	virtual std::uint32_t state() const = 0;
	// 0 or an errno for the verbs layer's bad_wr (EINVAL, ENOMEM).
	virtual int post_send(const SendWr &wr) = 0;
	virtual int post_recv(std::uint64_t wr_id, const Sge *sg, int num_sge) = 0;
	// After a successful modify (@m: what it changed).
	virtual void modified(const QpModify &m) = 0;
	// Who executes memory window requests.
	virtual void set_mw_control(MwControl c) = 0;
	// After the core attached a UD QP to (or detached it from) a multicast
	// group: a provider that receives on its own (the wire: the group's IP
	// multicast membership) follows.  0 or an errno.
	virtual int attach_mcast(const std::uint8_t *gid, bool attach)
	{
		(void)gid;
		(void)attach;
		return 0;
	}
};

// ------------------------------------------------------------------- QP
// Where a QP's send queue gets its memory: by default the provider's own
// (operator new); the verbs layer passes the allocators of a parent domain
// (ibv_alloc_parent_domain(3)).  alloc answers nullptr when it has none.
struct QueueAllocator {
	std::function<void *(std::size_t size, std::size_t align)> alloc;
	std::function<void(void *p)> free;
};

struct QpCaps {
	std::uint32_t max_send_wr = 0;
	std::uint32_t max_send_sge = 0;
	std::uint32_t max_inline_data = 0;
	bool sq_sig_all = false;
	bool block_self_mcast = false;	// IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
	QueueAllocator allocator;	// empty: the provider's own memory
};

class Qp final : public QpProvider {
public:
	Qp(Device &dev, std::uint32_t qpn, std::uint32_t type, Cq *send_cq,
	   Cq *recv_cq, Srq *srq, const QpCaps &caps);
	~Qp();
	// false: the send queue got no memory (the QP is unusable: ENOMEM).
	bool ok() const override { return pending_.ok(); }
	std::uint32_t qpn() const { return qpn_; }
	std::uint32_t type() const { return type_; }
	// The data path's view of the state (it may have moved to ERR).
	std::uint32_t state() const override;

	// 0 or an errno for the verbs layer's bad_wr (EINVAL, ENOMEM).
	int post_send(const SendWr &wr) override;
	// Who executes memory window requests (0 or an errno); without it
	// BIND_MW, LOCAL_INV and SEND_WITH_INV complete in error.
	void set_mw_control(MwControl c) override { mw_control_ = std::move(c); }
	int post_recv(std::uint64_t wr_id, const Sge *sg, int num_sge) override;
	// After a successful modify: a QP entering ERR flushes what is
	// outstanding.
	void state_changed();
	void modified(const QpModify &) override { state_changed(); }
	// Runs deferred sends unless another thread is in this QP (returns
	// false then); *more tells whether some remain.
	bool try_progress(bool *more);
	// If the QP is in ERR: flushes its receive queue and deferred sends.
	void flush_if_error();
	// The consumer's side of its own receive queue, for a provider that
	// receives for it (the wire's, when the peer is not on this host): as
	// Srq::take.  -1 also for a QP on an SRQ (take from the SRQ).
	int take_recv(std::uint64_t &wr_id, std::vector<Sge> &sges);
	std::uint64_t next_deadline_ns();

private:
	enum class Outcome { Done, Rnr, NotReady };
	struct Result {
		Outcome outcome;
		std::uint32_t status;
		std::uint32_t byte_len;
	};
	// A work request that could not run when posted, kept in its send
	// queue slot with what the caller may reuse once post_send returns
	// (its SGE list and inline data follow it in the slot, SendQueue).
	struct Pending {
		SendWr wr;
		AddressHandle ah;
		std::uint64_t first_ns = 0;	// blocked since
		std::uint64_t last_check_ns = 0;	// dead-peer probe
		std::uint64_t rnr_ns = 0;		// responder's RNR timer
		Outcome why = Outcome::Done;
	};
	// The send queue: max_send_wr slots in one buffer allocated when the
	// QP is created (from the parent domain's allocator if it has one), a
	// FIFO of the deferred work requests.
	class SendQueue {
	public:
		SendQueue(const QpCaps &caps);
		~SendQueue();
		SendQueue(const SendQueue &) = delete;
		SendQueue &operator=(const SendQueue &) = delete;
		bool ok() const { return buf_ != nullptr; }
		bool empty() const { return count_ == 0; }
		std::uint32_t size() const { return count_; }
		bool full() const { return count_ == slots_; }
		Pending &front() { return *slot(head_); }
		// A new slot at the tail (the caller checked full()).
		Pending &push_back();
		void pop_front();
		void clear();
		// The slot's room for max_send_sge SGEs (one at least) and for
		// max_inline_data bytes.
		Sge *sges(Pending &p) { return reinterpret_cast<Sge *>(reinterpret_cast<std::uint8_t *>(&p) + sge_off_); }
		std::uint8_t *inline_data(Pending &p) { return reinterpret_cast<std::uint8_t *>(&p) + inline_off_; }

	private:
		Pending *slot(std::uint32_t i) { return reinterpret_cast<Pending *>(buf_ + std::size_t(i) * stride_); }
		QueueAllocator allocator_;
		std::uint8_t *buf_ = nullptr;
		std::size_t stride_ = 0;
		std::size_t sge_off_ = 0;
		std::size_t inline_off_ = 0;
		std::uint32_t slots_ = 0;
		std::uint32_t head_ = 0;
		std::uint32_t count_ = 0;
	};

	Result execute(const SendWr &wr);
	Result exec_rc_uc(const SendWr &wr);
	Result exec_ud(const SendWr &wr);
	bool deliver_ud(const SendWr &wr, const Iov &local, std::uint64_t total,
			std::uint32_t dest_qpn);
	Result exec_local(const SendWr &wr);
	void complete_send(const SendWr &wr, std::uint32_t status,
			   std::uint32_t byte_len);
	void enter_error();
	void flush_locked();
	bool run_pending_locked();
	int check_local(const Sge *sg, int n, std::uint32_t need, bool inl,
			Iov &out, std::uint64_t *total);
	std::uint64_t deadline(const Pending &p);
	bool peer_dead();

	Device &dev_;
	std::uint32_t qpn_;
	std::uint32_t type_;
	const uabi_sw_qp *desc_;
	uabi_sw_qp_rw *rw_;
	Cq *send_cq_;
	Cq *recv_cq_;
	Srq *srq_;
	QpCaps caps_;
	std::recursive_mutex lock_;
	SendQueue pending_;
	std::uint64_t last_rnr_ns_ = 0;
	MwControl mw_control_;
};

} // namespace uabi::sw

#endif // UABI_SW_PROVIDER_HPP
