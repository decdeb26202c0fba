// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Work requests: the initiator executes them against the arena, moving the
// bytes with process_vm_writev/readv (docs/datapath.md, "Semantics").
#include "internal.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <sys/uio.h>

namespace uabi::sw {

namespace {

constexpr std::uint32_t kReset = UABI_QPS_RESET;
constexpr std::uint32_t kRtr = UABI_QPS_RTR;
constexpr std::uint32_t kRts = UABI_QPS_RTS;
constexpr std::uint32_t kSqd = UABI_QPS_SQD;
constexpr std::uint32_t kErr = UABI_QPS_ERR;
constexpr std::uint64_t kPeerCheckNs = 10'000'000;	// dead-peer probe interval

// IB RNR NAK timer values (ns), indexed by min_rnr_timer.
constexpr std::uint64_t kRnrNs[32] = {
	655360000, 10000, 20000, 30000, 40000, 60000, 80000, 120000,
	160000, 240000, 320000, 480000, 640000, 960000, 1280000, 1920000,
	2560000, 3840000, 5120000, 7680000, 10240000, 15360000, 20480000, 30720000,
	40960000, 61440000, 81920000, 122880000, 163840000, 245760000, 327680000, 491520000,
};

bool receiving(std::uint32_t st)
{
	return st == kRtr || st == kRts || st == kSqd;
}

// A QP of the arena: its read-only descriptor and its writable half.
struct QpRef {
	const uabi_sw_qp *d = nullptr;
	uabi_sw_qp_rw *w = nullptr;
	explicit operator bool() const { return d && w; }
};

QpRef qp_ref(const Device &dev, std::uint32_t qpn)
{
	return {dev.qp_desc(qpn), dev.qp_rw(qpn)};
}

// The state as the data path sees it: the control half's, or ERR once the
// data path (or a peer) moved the QP there.
std::uint32_t state_of(const QpRef &q)
{
	if (__atomic_load_n(&q.w->err, __ATOMIC_ACQUIRE))
		return kErr;
	return __atomic_load_n(&q.d->state, __ATOMIC_ACQUIRE);
}

// Translates [addr, addr+len) of key in the MR table; pd 0 = any.
bool mr_check(const Device &dev, std::uint32_t key, std::uint64_t addr, std::uint64_t len,
	      pid_t owner, std::uint32_t pd, std::uint32_t need, std::uint64_t *va,
	      pid_t *mr_owner = nullptr)
{
	uabi_sw_mr m;
	if (!dev.mr_lookup(key, m))
		return false;
	if (owner && m.pid != owner)
		return false;
	if (pd && m.pd != pd)
		return false;
	if ((m.access & need) != need)
		return false;
	if (addr < m.iova || len > m.length || addr - m.iova > m.length - len)
		return false;
	*va = m.addr + (addr - m.iova);
	if (mr_owner)
		*mr_owner = m.pid;
	return true;
}

// Where a message that consumes a receive WQE lands.
struct Target {
	std::uint32_t *lock = nullptr;
	__u64 *prod = nullptr;
	__u64 *cons = nullptr;
	QpRef state;				// the responder QP, for its state
	const uabi_sw_srq *srq = nullptr;	// ring params read under lock
	uabi_sw_srq_rw *srq_rw = nullptr;
	std::uint64_t ring_off = 0;
	std::uint32_t size = 0;
	std::uint32_t stride = 0;
	pid_t owner = 0;
	std::uint32_t pd = 0;
	std::uint32_t cqn = 0;
	std::uint32_t qpn = 0;			// qp_num of the receive CQE
	QpRef qp;				// responder QP (none for XRC)
	std::uint32_t srq_slot = 0;		// SRQ whose limit was reached
};

constexpr std::uint32_t kWqeMax = sizeof(uabi_sw_recv_wqe) + 64 * sizeof(uabi_sw_sge);

struct Wqe {
	alignas(8) std::uint8_t bytes[kWqeMax];
	const uabi_sw_recv_wqe &hdr() const { return *reinterpret_cast<const uabi_sw_recv_wqe *>(bytes); }
	const uabi_sw_sge *sge() const { return reinterpret_cast<const uabi_sw_sge *>(bytes + sizeof(uabi_sw_recv_wqe)); }
	std::uint32_t num_sge(std::uint32_t stride) const
	{
		std::uint32_t room = (std::min(stride, kWqeMax) - sizeof(uabi_sw_recv_wqe)) / sizeof(uabi_sw_sge);
		return std::min(hdr().num_sge, room);
	}
};

// 1: a WQE was taken, 0: the queue is empty, -1: the responder is not
// receiving (or the queue is gone).
int pop(Device &dev, Target &t, Wqe &w)
{
	ArenaLock lk(t.lock, dev.pid());
	if (t.state && !receiving(state_of(t.state)))
		return -1;
	if (t.srq) {
		if (!__atomic_load_n(&t.srq->slot, __ATOMIC_RELAXED))
			return -1;
		t.ring_off = t.srq->ring_off;
		t.size = t.srq->size;
		t.stride = t.srq->stride;
	}
	if (!t.size || (t.size & (t.size - 1)) ||
	    !dev.ring_ok(t.ring_off, std::uint64_t(t.size) * t.stride))
		return -1;
	__u64 prod = __atomic_load_n(t.prod, __ATOMIC_ACQUIRE);
	__u64 cons = *t.cons;
	if (prod == cons)
		return 0;
	const std::uint8_t *slot = dev.at(t.ring_off) + (cons & (t.size - 1)) * t.stride;
	std::memcpy(w.bytes, slot, std::min(t.stride, kWqeMax));
	__atomic_store_n(t.cons, cons + 1ull, __ATOMIC_RELEASE);
	if (t.srq && t.srq_rw->limit && prod - (cons + 1) < t.srq_rw->limit) {
		// Limit reached: disarmed, and the caller raises the event.
		__atomic_store_n(&t.srq_rw->limit, 0u, __ATOMIC_RELAXED);
		__atomic_store_n(&t.srq_rw->limit_event, 1u, __ATOMIC_RELEASE);
		t.srq_slot = t.srq->slot;
	}
	return 1;
}

// pop() and, outside the queue's lock, the SRQ limit event it may owe.
int take(Device &dev, Target &t, Wqe &w)
{
	int got = pop(dev, t, w);
	if (t.srq_slot)
		dev.notify_srq_limit(t.srq_slot);
	return got;
}

// The receive WQE's buffers for bytes [from, from + len); validates the
// keys of the SGEs it touches.  0, kWcLocLenErr or kWcLocProtErr.
std::uint32_t recv_iov(const Device &dev, const Wqe &w, std::uint32_t stride,
		       std::uint64_t from, std::uint64_t len, const Target &t, Iov &out)
{
	const uabi_sw_sge *sg = w.sge();
	std::uint32_t n = w.num_sge(stride);
	std::uint64_t cap = 0;
	for (std::uint32_t i = 0; i < n; i++)
		cap += sg[i].length;
	if (cap < from + len)
		return kWcLocLenErr;
	std::uint64_t pos = 0;
	for (std::uint32_t i = 0; i < n && pos < from + len; i++) {
		std::uint64_t a = pos, b = pos + sg[i].length;
		pos = b;
		if (!sg[i].length)
			continue;
		std::uint64_t lo = std::max(a, from), hi = std::min(b, from + len);
		std::uint64_t va;
		if (!mr_check(dev, sg[i].lkey, sg[i].addr, sg[i].length, t.owner, t.pd,
			      kAccessLocalWrite, &va))
			return kWcLocProtErr;
		if (lo < hi && !out.add(va + (lo - a), hi - lo, sg[i].lkey))
			return kWcLocLenErr;
	}
	return 0;
}

// Sends @len bytes of @src (after @hlen bytes of @head) to the receive
// buffers @dst (then @dst2) through the receive CQ's small ring, with the
// completion @rc (docs/datapath.md, "Small messages"): no system call, the
// receiver copies when it polls.  Only between processes (in one process a
// direct copy is cheaper) and when the bytes fit; false: copy directly.
bool send_small(Device &dev, const Target &t, const Cqe &rc, const Iov &dst, const Iov *dst2,
		const std::uint8_t *head, std::uint32_t hlen, const Iov &src, std::uint64_t len)
{
	if (len > dev.small_max() || (t.owner == dev.pid() && !dev.force_vm()))
		return false;
	const int nseg = dst.n + (dst2 ? dst2->n : 0);
	if (nseg > int(UABI_SW_SMALL_SEGS) || hlen + len == 0)
		return false;
	uabi_sw_small m;
	m.length = std::uint32_t(hlen + len);
	m.num_seg = std::uint32_t(nseg);
	m.reserved = 0;
	int k = 0;
	for (const Iov *d : {&dst, dst2}) {
		for (int i = 0; d && i < d->n; i++, k++) {
			m.seg[k].addr = reinterpret_cast<std::uint64_t>(d->v[i].iov_base);
			m.seg[k].length = std::uint32_t(d->v[i].iov_len);
			m.seg[k].lkey = d->key[i];
		}
	}
	if (hlen)
		std::memcpy(m.data, head, hlen);
	iovec to{m.data + hlen, len};
	local_copy(&to, 1, src.v, src.n, len);
	return dev.push_small(t.cqn, rc, t.owner, m);
}

// Affiliated asynchronous errors of a QP (enum ibv_event_type).
constexpr std::uint32_t kEventQpFatal = 1;	// a completion was lost (CQ overrun)
constexpr std::uint32_t kEventQpReqErr = 2;	// invalid request
constexpr std::uint32_t kEventQpAccessErr = 3;	// local access violation

// The responder hit an error: its QP goes to ERR, its owner flushes what
// is outstanding at its next poll, and (once, by whoever moved it) the
// affiliated event @event is raised for the QP's owner or, for an XRC
// receive QP, for every context registered on it.
void mark_error(Device &dev, const QpRef &q, std::uint32_t event)
{
	if (!q || __atomic_load_n(&q.d->state, __ATOMIC_ACQUIRE) == kReset)
		return;
	std::uint32_t zero = 0;
	const bool moved = __atomic_compare_exchange_n(&q.w->err, &zero, 1u, false,
						       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	__atomic_store_n(&q.w->flush, 1u, __ATOMIC_RELEASE);
	for (std::uint32_t cqn : {q.d->recv_cqn, q.d->send_cqn})
		if (uabi_sw_cq_rw *c = dev.cq_rw(cqn))
			__atomic_store_n(&c->flush, 1u, __ATOMIC_RELEASE);
	if (moved) {
		__atomic_store_n(&q.w->err_event, event, __ATOMIC_RELEASE);
		dev.notify_qp_error(__atomic_load_n(&q.d->qpn, __ATOMIC_RELAXED));
	}
}

// A completion for QP @qd on CQ @cqn.  If the CQ is full the completion is
// lost (the CQ raises IBV_EVENT_CQ_ERR) and, as in IB, the QP that could
// not report it goes to ERR with IBV_EVENT_QP_FATAL.
void push_or_fail(Device &dev, std::uint32_t cqn, const Cqe &e, const QpRef &q)
{
	bool overran = false;
	if (!dev.push_cqe(cqn, e, &overran) && overran)
		mark_error(dev, q, kEventQpFatal);
}

std::uint32_t wc_opcode(std::uint32_t wr_opcode)
{
	switch (wr_opcode) {
	case kWrRdmaWrite:
	case kWrRdmaWriteWithImm:
		return kWcRdmaWrite;
	case kWrRdmaRead:
		return kWcRdmaRead;
	case kWrAtomicCmpAndSwp:
		return kWcCompSwap;
	case kWrAtomicFetchAndAdd:
		return kWcFetchAdd;
	case kWrAtomicWrite:
		return kWcAtomicWrite;
	default:
		return kWcSend;
	}
}

bool consumes_recv(std::uint32_t op)
{
	return op == kWrSend || op == kWrSendWithImm || op == kWrRdmaWriteWithImm;
}

bool is_atomic(std::uint32_t op)
{
	return op == kWrAtomicCmpAndSwp || op == kWrAtomicFetchAndAdd;
}

// Reads or writes the 8 aligned bytes at @va of process @owner as one
// access: a single load or store in this process, a single 8-byte copy
// between processes (not vm_copy(), whose in-order placement would make it
// two), so that a CPU reading the word never sees half of a value.
int word_access(Device &dev, pid_t owner, std::uint64_t va, std::uint64_t *v, bool write)
{
	auto *w = reinterpret_cast<std::uint64_t *>(va);
	if (owner == dev.pid() && !dev.force_vm()) {
		if (write)
			__atomic_store_n(w, *v, __ATOMIC_RELEASE);
		else
			*v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		return 0;
	}
	iovec mine{v, 8}, theirs{w, 8};
	ssize_t n = write ? process_vm_writev(owner, &mine, 1, &theirs, 1, 0)
			  : process_vm_readv(owner, &mine, 1, &theirs, 1, 0);
	if (n == 8)
		return 0;
	return n < 0 ? errno : EFAULT;
}

// The 40-byte GRH a UD receiver finds before the payload.
void make_grh(std::uint8_t *g, const AddressHandle &ah, std::uint32_t paylen)
{
	std::memset(g, 0, kGrhBytes);
	g[0] = std::uint8_t(0x60 | (ah.traffic_class >> 4));
	g[1] = std::uint8_t((ah.traffic_class << 4) | ((ah.flow_label >> 16) & 0xf));
	g[2] = std::uint8_t(ah.flow_label >> 8);
	g[3] = std::uint8_t(ah.flow_label);
	g[4] = std::uint8_t(paylen >> 8);
	g[5] = std::uint8_t(paylen);
	g[6] = 0x1b;		// next header: IBA transport
	g[7] = ah.hop_limit;
	// sgid: GID 0 of the device, fe80::<node guid>
	g[8] = 0xfe;
	g[9] = 0x80;
	for (int i = 0; i < 8; i++)
		g[16 + i] = std::uint8_t(UABI_SW_NODE_GUID >> (56 - 8 * i));
	std::memcpy(g + 24, ah.dgid, 16);
}

} // namespace

// ------------------------------------------------------------ receive rings
static int ring_post(Device &dev, std::uint32_t *lock, __u64 *prod,
		     __u64 *cons, const uabi_sw_srq *srq, std::uint64_t ring_off,
		     std::uint32_t size, std::uint32_t stride, std::uint64_t wr_id,
		     const Sge *sg, int num_sge)
{
	ArenaLock lk(lock, dev.pid());
	if (srq) {
		ring_off = srq->ring_off;
		size = srq->size;
		stride = srq->stride;
	}
	if (!size || std::uint64_t(sizeof(uabi_sw_recv_wqe)) + std::uint64_t(num_sge) * sizeof(uabi_sw_sge) > stride ||
	    !dev.ring_ok(ring_off, std::uint64_t(size) * stride))
		return EINVAL;
	__u64 p = *prod;
	if (p - __atomic_load_n(cons, __ATOMIC_RELAXED) >= size)
		return ENOMEM;
	std::uint8_t *slot = dev.at(ring_off) + (p & (size - 1)) * stride;
	auto *h = reinterpret_cast<uabi_sw_recv_wqe *>(slot);
	h->wr_id = wr_id;
	h->num_sge = std::uint32_t(num_sge);
	h->reserved = 0;
	auto *s = reinterpret_cast<uabi_sw_sge *>(slot + sizeof(*h));
	for (int i = 0; i < num_sge; i++) {
		s[i].addr = sg[i].addr;
		s[i].length = sg[i].length;
		s[i].lkey = sg[i].lkey;
	}
	__atomic_store_n(prod, p + 1ull, __ATOMIC_RELEASE);
	return 0;
}

Srq::Srq(Device &dev, std::uint32_t slot)
	: dev_(dev), slot_(slot), desc_(dev.srq_desc(slot)), rw_(dev.srq_rw(slot))
{
}

int Srq::post_recv(std::uint64_t wr_id, const Sge *sg, int num_sge)
{
	if (!desc_ || num_sge < 0 || std::uint32_t(num_sge) > desc_->max_sge)
		return EINVAL;
	return ring_post(dev_, &rw_->lock, &rw_->prod, &rw_->cons, desc_, 0, 0, 0,
			 wr_id, sg, num_sge);
}

// --------------------------------------------------------------------- QP
Qp::Qp(Device &dev, std::uint32_t qpn, std::uint32_t type, Cq *send_cq, Cq *recv_cq,
       Srq *srq, const QpCaps &caps)
	: dev_(dev), qpn_(qpn), type_(type), desc_(dev.qp_desc(qpn)), rw_(dev.qp_rw(qpn)),
	  send_cq_(send_cq),
	  recv_cq_(recv_cq), srq_(srq), caps_(caps)
{
	if (send_cq_)
		send_cq_->attach(this);
	if (recv_cq_ && recv_cq_ != send_cq_)
		recv_cq_->attach(this);
}

Qp::~Qp()
{
	dev_.remove_pending(this);
	if (send_cq_)
		send_cq_->detach(this);
	if (recv_cq_ && recv_cq_ != send_cq_)
		recv_cq_->detach(this);
}

std::uint32_t Qp::state() const
{
	return state_of(QpRef{desc_, rw_});
}

void Qp::complete_send(const SendWr &wr, std::uint32_t status, std::uint32_t byte_len)
{
	if (!(wr.send_flags & kSendSignaled) && !caps_.sq_sig_all && status == kWcSuccess)
		return;
	if (!send_cq_)
		return;
	Cqe e{};
	e.wr_id = wr.wr_id;
	e.status = status;
	e.opcode = wc_opcode(wr.opcode);
	e.byte_len = byte_len;
	e.qp_num = qpn_;
	push_or_fail(dev_, send_cq_->cqn(), e, QpRef{desc_, rw_});
}

void Qp::enter_error()
{
	__atomic_store_n(&rw_->err, 1u, __ATOMIC_RELEASE);
	flush_locked();
}

void Qp::flush_locked()
{
	while (!pending_.empty()) {
		complete_send(pending_.front().wr, kWcWrFlushErr, 0);
		pending_.pop_front();
	}
	__atomic_store_n(&rw_->flush, 0u, __ATOMIC_RELAXED);
	if (srq_ || !desc_->rq_size || !recv_cq_)
		return;
	std::vector<std::uint64_t> ids;
	{
		ArenaLock lk(&rw_->rq_lock, dev_.pid());
		std::uint64_t prod = rw_->rq_prod, cons = rw_->rq_cons;
		std::uint32_t size = desc_->rq_size, stride = desc_->rq_stride;
		if (!size || (size & (size - 1)) ||
		    !dev_.ring_ok(desc_->rq_off, std::uint64_t(size) * stride))
			return;
		// At most one ring's worth, whatever the indices say.
		if (prod - cons > size)
			cons = prod - size;
		for (std::uint64_t i = cons; i != prod; i++) {
			const auto *h = reinterpret_cast<const uabi_sw_recv_wqe *>(
				dev_.at(desc_->rq_off) + (i & (size - 1)) * stride);
			ids.push_back(h->wr_id);
		}
		__atomic_store_n(&rw_->rq_cons, prod, __ATOMIC_RELEASE);
	}
	for (std::uint64_t id : ids) {
		Cqe e{};
		e.wr_id = id;
		e.status = kWcWrFlushErr;
		e.opcode = kWcRecv;
		e.qp_num = qpn_;
		dev_.push_cqe(recv_cq_->cqn(), e);
	}
}

void Qp::flush_if_error()
{
	std::lock_guard<std::recursive_mutex> g(lock_);
	if (state() == kErr)
		flush_locked();
}

void Qp::state_changed()
{
	std::lock_guard<std::recursive_mutex> g(lock_);
	std::uint32_t st = state();
	if (st == kErr)
		flush_locked();
	else if (st == kReset)
		pending_.clear();	// RESET discards work requests silently
}

int Qp::post_recv(std::uint64_t wr_id, const Sge *sg, int num_sge)
{
	if (srq_ || !desc_->rq_size)
		return EINVAL;
	std::uint32_t st = state();
	if (st == kReset)
		return EINVAL;
	if (num_sge < 0 || std::uint32_t(num_sge) > desc_->max_recv_sge)
		return EINVAL;
	if (st == kErr) {
		Cqe e{};
		e.wr_id = wr_id;
		e.status = kWcWrFlushErr;
		e.opcode = kWcRecv;
		e.qp_num = qpn_;
		if (recv_cq_)
			dev_.push_cqe(recv_cq_->cqn(), e);
		return 0;
	}
	int ret = ring_post(dev_, &rw_->rq_lock, &rw_->rq_prod, &rw_->rq_cons, nullptr,
			    desc_->rq_off, desc_->rq_size, desc_->rq_stride, wr_id, sg, num_sge);
	// A peer may have moved the QP to ERR meanwhile: then this WQE is
	// flushed too, so it still completes exactly once.
	if (!ret && state() == kErr)
		flush_if_error();
	return ret;
}

int Qp::check_local(const Sge *sg, int n, std::uint32_t need, bool inl, Iov &iov,
		    std::uint64_t *total)
{
	Iov *out = &iov;
	const std::uint32_t pd = desc_->pd;
	for (int i = 0; i < n; i++) {
		if (!sg[i].length)
			continue;
		std::uint64_t va = sg[i].addr;
		if (!inl && !mr_check(dev_, sg[i].lkey, sg[i].addr, sg[i].length, dev_.pid(), pd,
				      need, &va))
			return kWcLocProtErr;
		if (!out->add(va, sg[i].length))
			return kWcLocLenErr;
	}
	*total = out->total;
	return 0;
}

Qp::Result Qp::exec_rc_uc(const SendWr &wr)
{
	const std::uint32_t op = wr.opcode;
	const bool reliable = type_ != UABI_QPT_UC;
	const Result dropped{Outcome::Done, kWcSuccess, 0};

	// Our side first: local keys.
	Iov local;
	const bool reads = op == kWrRdmaRead || is_atomic(op);
	const bool inl = (wr.send_flags & kSendInline) && !reads;
	// An atomic write carries its 8 bytes in the work request itself.
	const bool awrite = op == kWrAtomicWrite;
	std::uint64_t total = awrite ? 8 : 0;
	if (!awrite)
		if (std::uint32_t st = check_local(wr.sg_list, wr.num_sge,
						   reads ? std::uint32_t(kAccessLocalWrite) : 0u, inl,
						   local, &total))
			return {Outcome::Done, st, 0};
	if (is_atomic(op) && total < 8)
		return {Outcome::Done, kWcLocLenErr, 0};

	// The responder.
	const std::uint32_t dest_qpn = __atomic_load_n(&desc_->dest_qpn, __ATOMIC_RELAXED);
	const QpRef dd = qp_ref(dev_, dest_qpn);
	uabi_sw_qp dest{};
	if (dd)
		snapshot(dd.d, dest);
	bool ready = dd && dest.qpn == dest_qpn && receiving(state_of(dd)) &&
		     (type_ == UABI_QPT_XRC_SEND ? dest.type == UABI_QPT_XRC_RECV : dest.type == type_);
	if (!ready)
		return reliable ? Result{Outcome::NotReady, 0, 0} : dropped;
	last_rnr_ns_ = kRnrNs[dest.min_rnr_timer & 31];
	const bool xrc = type_ == UABI_QPT_XRC_SEND;

	// Remote memory (RDMA and atomics): rkey in the responder's PD (any
	// owner's for XRC, whose target QP has no PD).
	pid_t rowner = dest.pid;
	std::uint64_t rva = 0;
	// A zero-length RDMA READ or WRITE needs no valid rkey or address
	// (IBTA C9-88): only the responder QP's access flags are checked.
	const bool zero_rdma = !is_atomic(op) && !total;
	if (zero_rdma && op != kWrSend && op != kWrSendWithImm) {
		std::uint32_t need = op == kWrRdmaRead ? kAccessRemoteRead : kAccessRemoteWrite;
		if (!(dest.access & need)) {
			if (!reliable)
				return dropped;
			mark_error(dev_, dd, kEventQpAccessErr);
			return {Outcome::Done, kWcRemAccessErr, 0};
		}
	} else if (!consumes_recv(op) || op == kWrRdmaWriteWithImm) {
		std::uint32_t need = op == kWrRdmaRead ? kAccessRemoteRead
				     : is_atomic(op) ? kAccessRemoteAtomic
						     : kAccessRemoteWrite;
		std::uint64_t len = is_atomic(op) ? 8u : total;
		if ((is_atomic(op) || awrite) && (wr.remote_addr & 7))
			return reliable ? Result{Outcome::Done, kWcRemInvReqErr, 0} : dropped;
		if (!(dest.access & need) ||
		    !mr_check(dev_, wr.rkey, wr.remote_addr, len, xrc ? 0 : dest.pid,
			      xrc ? 0 : dest.pd, need, &rva, &rowner)) {
			if (!reliable)
				return dropped;
			// IB: the responder NAKs and its QP goes to ERR with a
			// local access violation (for XRC, the receive QP).
			mark_error(dev_, dd, kEventQpAccessErr);
			return {Outcome::Done, kWcRemAccessErr, 0};
		}
	}

	// A receive WQE, for SEND and WRITE_WITH_IMM.
	Target t;
	Wqe w;
	if (consumes_recv(op)) {
		t.state = dd;
		t.qpn = dest_qpn;
		t.qp = dd;
		if (xrc) {
			const uabi_sw_srq *sd = dev_.srq_desc(wr.remote_srqn);
			uabi_sw_srq s{};
			if (sd)
				snapshot(sd, s);
			if (!sd || s.slot != wr.remote_srqn || s.type != UABI_SRQT_XRC ||
			    s.xrcd != dest.xrcd)
				return {Outcome::Done, kWcRemInvReqErr, 0};
			uabi_sw_srq_rw *sw = dev_.srq_rw(wr.remote_srqn);
			t.lock = &sw->lock;
			t.prod = &sw->prod;
			t.cons = &sw->cons;
			t.srq = sd;
			t.srq_rw = sw;
			t.owner = s.pid;
			t.pd = s.pd;
			t.cqn = s.cqn;
			t.qp = QpRef{};		// the target QP has nothing to flush
		} else if (dest.srq_slot) {
			const uabi_sw_srq *sd = dev_.srq_desc(dest.srq_slot);
			if (!sd)
				return reliable ? Result{Outcome::NotReady, 0, 0} : dropped;
			uabi_sw_srq s{};
			snapshot(sd, s);
			uabi_sw_srq_rw *sw = dev_.srq_rw(dest.srq_slot);
			t.lock = &sw->lock;
			t.prod = &sw->prod;
			t.cons = &sw->cons;
			t.srq = sd;
			t.srq_rw = sw;
			t.owner = s.pid;
			t.pd = s.pd;
			t.cqn = dest.recv_cqn;
		} else {
			t.lock = &dd.w->rq_lock;
			t.prod = &dd.w->rq_prod;
			t.cons = &dd.w->rq_cons;
			t.ring_off = dest.rq_off;
			t.size = dest.rq_size;
			t.stride = dest.rq_stride;
			t.owner = dest.pid;
			t.pd = dest.pd;
			t.cqn = dest.recv_cqn;
		}
		int got = take(dev_, t, w);
		if (got < 0)
			return reliable ? Result{Outcome::NotReady, 0, 0} : dropped;
		if (got == 0)
			return reliable ? Result{Outcome::Rnr, 0, 0} : dropped;
	}

	Cqe rc{};
	if (consumes_recv(op)) {
		rc.wr_id = w.hdr().wr_id;
		rc.qp_num = t.qpn;
		rc.src_qp = qpn_;
		rc.slid = UABI_SW_PORT_LID;
		rc.sl = desc_->sl;
		rc.solicited = (wr.send_flags & kSendSolicited) ? 1 : 0;
		if (op != kWrSend) {
			rc.wc_flags = kWcWithImm;
			rc.imm_data = wr.imm_data;
		}
	}
	// Responder-side failure: its WQE completes in error, its QP goes to
	// ERR, and the requester learns the matching remote status.
	auto responder_error = [&](std::uint32_t local_status, std::uint32_t remote_status) {
		rc.status = local_status;
		rc.opcode = op == kWrRdmaWriteWithImm ? kWcRecvRdmaWithImm : kWcRecv;
		push_or_fail(dev_, t.cqn, rc, t.qp);
		if (reliable)
			mark_error(dev_, t.qp,
				   local_status == kWcLocLenErr ? kEventQpReqErr : kEventQpAccessErr);
		return reliable ? Result{Outcome::Done, remote_status, 0} : dropped;
	};

	switch (op) {
	case kWrSend:
	case kWrSendWithImm: {
		Iov remote;
		if (std::uint32_t st = recv_iov(dev_, w, t.stride ? t.stride : kWqeMax, 0, total, t, remote))
			return responder_error(st, st == kWcLocLenErr ? kWcRemInvReqErr : kWcRemOpErr);
		rc.opcode = kWcRecv;
		rc.byte_len = std::uint32_t(total);
		if (send_small(dev_, t, rc, remote, nullptr, nullptr, 0, local, total))
			return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
		int err = vm_copy(dev_, t.owner, remote.v, remote.n, dev_.pid(), local.v, local.n, total);
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return responder_error(kWcLocProtErr, kWcRemOpErr);
		push_or_fail(dev_, t.cqn, rc, t.qp);
		return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
	}
	case kWrRdmaWrite:
	case kWrRdmaWriteWithImm: {
		iovec r{reinterpret_cast<void *>(rva), total};
		int err = vm_copy(dev_, rowner, &r, 1, dev_.pid(), local.v, local.n, total);
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err) {
			if (op == kWrRdmaWriteWithImm)
				return responder_error(kWcLocAccessErr, kWcRemAccessErr);
			return reliable ? Result{Outcome::Done, kWcRemAccessErr, 0} : dropped;
		}
		if (op == kWrRdmaWriteWithImm) {
			rc.opcode = kWcRecvRdmaWithImm;
			rc.byte_len = std::uint32_t(total);
			push_or_fail(dev_, t.cqn, rc, t.qp);
		}
		return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
	}
	case kWrRdmaRead: {
		iovec r{reinterpret_cast<void *>(rva), total};
		int err = vm_copy(dev_, dev_.pid(), local.v, local.n, rowner, &r, 1, total);
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return {Outcome::Done, kWcRemAccessErr, 0};
		return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
	}
	case kWrAtomicWrite: {
		// Atomic with respect to every RDMA atomic of the user (the
		// lock of atomics), and one store of 8 aligned bytes.
		std::uint64_t v = wr.compare_add;
		int err;
		{
			ArenaLock lk(dev_.atomic_lock(), dev_.pid());
			err = word_access(dev_, rowner, rva, &v, true);
		}
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return {Outcome::Done, kWcRemAccessErr, 0};
		return {Outcome::Done, kWcSuccess, 8};
	}
	case kWrAtomicCmpAndSwp:
	case kWrAtomicFetchAndAdd: {
		std::uint64_t old = 0, nv;
		int err;
		{
			ArenaLock lk(dev_.atomic_lock(), dev_.pid());
			err = word_access(dev_, rowner, rva, &old, false);
			if (!err) {
				bool write = true;
				if (op == kWrAtomicFetchAndAdd) {
					nv = old + wr.compare_add;
				} else {
					nv = wr.swap;
					write = old == wr.compare_add;
				}
				if (write)
					err = word_access(dev_, rowner, rva, &nv, true);
			}
		}
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return {Outcome::Done, kWcRemAccessErr, 0};
		iovec o{&old, 8};
		local_copy(local.v, local.n, &o, 1, 8);
		return {Outcome::Done, kWcSuccess, 8};
	}
	}
	return {Outcome::Done, kWcLocQpOpErr, 0};
}

Qp::Result Qp::exec_ud(const SendWr &wr)
{
	Iov local;
	std::uint64_t total = 0;
	if (std::uint32_t st = check_local(wr.sg_list, wr.num_sge, 0,
					   wr.send_flags & kSendInline, local, &total))
		return {Outcome::Done, st, 0};
	if (total > kMtuBytes)
		return {Outcome::Done, kWcLocLenErr, 0};
	if (!wr.ah)
		return {Outcome::Done, kWcLocQpOpErr, 0};
	const Result sent{Outcome::Done, kWcSuccess, std::uint32_t(total)};
	if (wr.ah->dlid >= 0xc000)
		return sent;	// multicast: no group ever has members here

	const QpRef dd = qp_ref(dev_, wr.remote_qpn);
	uabi_sw_qp dest{};
	if (dd)
		snapshot(dd.d, dest);
	if (!dd || dest.qpn != wr.remote_qpn || dest.type != UABI_QPT_UD ||
	    !receiving(state_of(dd)))
		return sent;
	std::uint32_t qkey = (wr.remote_qkey & 0x80000000u) ? desc_->qkey : wr.remote_qkey;
	if (qkey != dest.qkey)
		return sent;

	Target t;
	t.state = dd;
	t.qpn = wr.remote_qpn;
	t.qp = dd;
	t.cqn = dest.recv_cqn;
	if (dest.srq_slot) {
		const uabi_sw_srq *sd = dev_.srq_desc(dest.srq_slot);
		if (!sd)
			return sent;
		uabi_sw_srq s{};
		snapshot(sd, s);
		uabi_sw_srq_rw *sw = dev_.srq_rw(dest.srq_slot);
		t.lock = &sw->lock;
		t.prod = &sw->prod;
		t.cons = &sw->cons;
		t.srq = sd;
		t.srq_rw = sw;
		t.owner = s.pid;
		t.pd = s.pd;
	} else {
		t.lock = &dd.w->rq_lock;
		t.prod = &dd.w->rq_prod;
		t.cons = &dd.w->rq_cons;
		t.ring_off = dest.rq_off;
		t.size = dest.rq_size;
		t.stride = dest.rq_stride;
		t.owner = dest.pid;
		t.pd = dest.pd;
	}
	Wqe w;
	if (take(dev_, t, w) <= 0)
		return sent;	// UD drops what finds no buffer

	Cqe rc{};
	rc.wr_id = w.hdr().wr_id;
	rc.opcode = kWcRecv;
	rc.qp_num = t.qpn;
	rc.src_qp = qpn_;
	rc.slid = UABI_SW_PORT_LID;
	rc.sl = wr.ah->sl;
	rc.solicited = (wr.send_flags & kSendSolicited) ? 1 : 0;
	if (wr.opcode == kWrSendWithImm) {
		rc.wc_flags |= kWcWithImm;
		rc.imm_data = wr.imm_data;
	}
	std::uint32_t stride = t.stride ? t.stride : kWqeMax;
	Iov remote, grh;
	std::uint32_t st = recv_iov(dev_, w, stride, kGrhBytes, total, t, remote);
	if (!st && wr.ah->is_global)
		st = recv_iov(dev_, w, stride, 0, kGrhBytes, t, grh);
	if (st) {
		rc.status = st;
		push_or_fail(dev_, t.cqn, rc, t.qp);
		return sent;
	}
	std::uint8_t g[kGrhBytes];
	const bool global = wr.ah->is_global;
	if (global) {
		make_grh(g, *wr.ah, std::uint32_t(total));
		rc.wc_flags |= kWcGrh;
	}
	rc.byte_len = std::uint32_t(total + kGrhBytes);
	if (global ? send_small(dev_, t, rc, grh, &remote, g, kGrhBytes, local, total)
		   : send_small(dev_, t, rc, remote, nullptr, nullptr, 0, local, total))
		return sent;
	int err = vm_copy(dev_, t.owner, remote.v, remote.n, dev_.pid(), local.v, local.n, total);
	if (!err && global) {
		iovec gi{g, kGrhBytes};
		err = vm_copy(dev_, t.owner, grh.v, grh.n, dev_.pid(), &gi, 1, kGrhBytes);
	}
	if (err) {
		rc.status = kWcLocProtErr;
		rc.byte_len = 0;
		push_or_fail(dev_, t.cqn, rc, t.qp);
		return sent;
	}
	push_or_fail(dev_, t.cqn, rc, t.qp);
	return sent;
}

Qp::Result Qp::execute(const SendWr &wr)
{
	if (type_ == UABI_QPT_UD)
		return exec_ud(wr);
	return exec_rc_uc(wr);
}

std::uint64_t Qp::deadline(const Pending &p)
{
	if (p.why == Outcome::Rnr) {
		std::uint8_t r = desc_->rnr_retry;
		if (r >= 7)
			return UINT64_MAX;
		return p.first_ns + std::uint64_t(r) * p.rnr_ns;
	}
	std::uint8_t t = desc_->timeout;
	if (!t)
		return UINT64_MAX;
	return p.first_ns + std::uint64_t(desc_->retry_cnt + 1) * (4096ull << std::min<int>(t, 31));
}

bool Qp::peer_dead()
{
	const uabi_sw_qp *dd = dev_.qp_desc(__atomic_load_n(&desc_->dest_qpn, __ATOMIC_RELAXED));
	if (!dd)
		return false;
	return process_dead(__atomic_load_n(&dd->pid, __ATOMIC_RELAXED));
}

bool Qp::run_pending_locked()
{
	while (!pending_.empty()) {
		if (state() == kErr) {
			flush_locked();
			return false;
		}
		Pending &p = pending_.front();
		Result r = execute(p.wr);
		if (r.outcome == Outcome::Done) {
			SendWr wr = p.wr;
			complete_send(wr, r.status, r.byte_len);
			pending_.pop_front();
			if (r.status != kWcSuccess) {
				enter_error();
				return false;
			}
			continue;
		}
		std::uint64_t now = now_ns();
		if (r.outcome != p.why) {
			p.why = r.outcome;
			p.first_ns = now;
		}
		if (r.outcome == Outcome::Rnr)
			p.rnr_ns = last_rnr_ns_;
		bool dead = false;
		if (now - p.last_check_ns >= kPeerCheckNs) {
			p.last_check_ns = now;
			dead = peer_dead();
		}
		if (dead || now >= deadline(p)) {
			std::uint32_t st = (p.why == Outcome::Rnr && !dead) ? kWcRnrRetryExcErr
									    : kWcRetryExcErr;
			SendWr wr = p.wr;
			complete_send(wr, st, 0);
			pending_.pop_front();
			enter_error();
			return false;
		}
		return true;
	}
	return false;
}

bool Qp::try_progress(bool *more)
{
	std::unique_lock<std::recursive_mutex> g(lock_, std::try_to_lock);
	if (!g.owns_lock()) {
		*more = true;
		return false;
	}
	run_pending_locked();
	*more = !pending_.empty();
	return true;
}

int Qp::post_send(const SendWr &wr)
{
	std::lock_guard<std::recursive_mutex> g(lock_);
	const std::uint32_t op = wr.opcode;
	bool ok;
	switch (type_) {
	case UABI_QPT_UD:
		ok = op == kWrSend || op == kWrSendWithImm;
		break;
	case UABI_QPT_UC:
		ok = op == kWrSend || op == kWrSendWithImm || op == kWrRdmaWrite ||
		     op == kWrRdmaWriteWithImm;
		break;
	case UABI_QPT_RC:
	case UABI_QPT_XRC_SEND:
		ok = op <= kWrAtomicFetchAndAdd || op == kWrAtomicWrite;
		break;
	default:
		ok = false;
	}
	if (!ok || wr.num_sge < 0 || std::uint32_t(wr.num_sge) > caps_.max_send_sge ||
	    wr.num_sge > kMaxIov)
		return EINVAL;
	if (wr.send_flags & kSendInline) {
		std::uint64_t len = 0;
		for (int i = 0; i < wr.num_sge; i++)
			len += wr.sg_list[i].length;
		if (len > caps_.max_inline_data)
			return EINVAL;
	}
	if (type_ == UABI_QPT_UD && !wr.ah)
		return EINVAL;
	std::uint32_t st = state();
	if (st == kErr) {
		complete_send(wr, kWcWrFlushErr, 0);
		return 0;
	}
	if (st != kRts && st != kSqd)
		return EINVAL;
	if (pending_.size() >= std::max<std::uint32_t>(caps_.max_send_wr, 1))
		return ENOMEM;

	if (pending_.empty()) {
		Result r = execute(wr);
		if (r.outcome == Outcome::Done) {
			complete_send(wr, r.status, r.byte_len);
			if (r.status != kWcSuccess)
				enter_error();
			return 0;
		}
	}
	// Defer: keep what the caller may reuse once we return (inline data,
	// the SGE list, the AH).
	Pending &p = pending_.emplace_back();
	p.wr = wr;
	if (wr.send_flags & kSendInline) {
		for (int i = 0; i < wr.num_sge; i++) {
			const auto *b = reinterpret_cast<const std::uint8_t *>(wr.sg_list[i].addr);
			p.inline_data.insert(p.inline_data.end(), b, b + wr.sg_list[i].length);
		}
		p.sges.push_back({reinterpret_cast<std::uint64_t>(p.inline_data.data()),
				  std::uint32_t(p.inline_data.size()), 0});
	} else {
		p.sges.assign(wr.sg_list, wr.sg_list + wr.num_sge);
	}
	p.wr.sg_list = p.sges.data();
	p.wr.num_sge = int(p.sges.size());
	if (wr.ah) {
		p.ah = *wr.ah;
		p.wr.ah = &p.ah;
	}
	p.first_ns = now_ns();
	p.last_check_ns = p.first_ns;
	p.why = Outcome::NotReady;
	// Runs what can run now, in order (the head may have become ready).
	run_pending_locked();
	if (!pending_.empty())
		dev_.add_pending(this);
	return 0;
}

std::uint64_t Qp::next_deadline_ns()
{
	std::lock_guard<std::recursive_mutex> g(lock_);
	if (pending_.empty())
		return UINT64_MAX;
	return deadline(pending_.front());
}

} // namespace uabi::sw
