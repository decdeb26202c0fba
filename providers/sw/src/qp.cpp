// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A QP of the sw data path and SRQs: creation, the receive queues, errors
// and flushes.  Its work requests: qp_requester.cpp (posting and
// executing), qp_responder.cpp (the responder's side), qp_retry.cpp
// (deferred ones) (docs/datapath.md).
#include "qp_internal.hpp"

#include <cerrno>
#include <new>
#include <type_traits>
#include <vector>

namespace uabi::sw {

using namespace detail;

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

namespace {
// The oldest WQE of @t's queue, for a provider that keeps WQEs of its own:
// 1 and its id and SGE list, 0 when the queue is empty, -1 when it is gone.
int take_wqe(Device &dev, Target &t, std::uint64_t &wr_id, std::vector<Sge> &sges)
{
	Wqe w;
	int got = detail::take(dev, t, w);
	if (got != 1)
		return got;
	wr_id = w.hdr().wr_id;
	sges.clear();
	const uabi_sw_sge *sg = w.sge();
	for (std::uint32_t i = 0, n = w.num_sge(t.stride); i < n; i++)
		sges.push_back({sg[i].addr, sg[i].length, sg[i].lkey});
	return 1;
}
} // namespace

int Srq::take(std::uint64_t &wr_id, std::vector<Sge> &sges)
{
	if (!desc_)
		return -1;
	Target t;
	t.lock = &rw_->lock;
	t.prod = &rw_->prod;
	t.cons = &rw_->cons;
	t.srq = desc_;
	t.srq_rw = rw_;
	return take_wqe(dev_, t, wr_id, sges);
}

int Qp::take_recv(std::uint64_t &wr_id, std::vector<Sge> &sges)
{
	if (!desc_ || !rw_)
		return -1;
	uabi_sw_qp d{};
	snapshot(desc_, d);
	Target t;
	if (d.srq_slot || !recv_target(dev_, QpRef{desc_, rw_}, d, qpn_, t))
		return -1;
	return take_wqe(dev_, t, wr_id, sges);
}

// ------------------------------------------------------------ send queue
namespace {
constexpr std::size_t round8(std::size_t n)
{
	return (n + 7) & ~std::size_t(7);
}
constexpr std::size_t kSlotAlign = 64;
} // namespace

Qp::SendQueue::SendQueue(const QpCaps &caps) : allocator_(caps.allocator)
{
	static_assert(std::is_trivially_destructible_v<Pending>);
	slots_ = std::max<std::uint32_t>(caps.max_send_wr, 1);
	sge_off_ = round8(sizeof(Pending));
	inline_off_ = sge_off_ + std::max<std::uint32_t>(caps.max_send_sge, 1) * sizeof(Sge);
	stride_ = (inline_off_ + round8(caps.max_inline_data) + kSlotAlign - 1) & ~(kSlotAlign - 1);
	const std::size_t bytes = stride_ * slots_;
	if (allocator_.alloc)
		buf_ = static_cast<std::uint8_t *>(allocator_.alloc(bytes, kSlotAlign));
	else
		buf_ = static_cast<std::uint8_t *>(
			::operator new(bytes, std::align_val_t(kSlotAlign), std::nothrow));
}

Qp::SendQueue::~SendQueue()
{
	if (!buf_)
		return;
	if (allocator_.alloc)
		allocator_.free(buf_);
	else
		::operator delete(buf_, std::align_val_t(kSlotAlign));
}

Qp::Pending &Qp::SendQueue::push_back()
{
	std::uint32_t i = head_ + count_;
	if (i >= slots_)
		i -= slots_;
	count_++;
	return *new (slot(i)) Pending{};
}

void Qp::SendQueue::pop_front()
{
	if (++head_ == slots_)
		head_ = 0;
	count_--;
}

void Qp::SendQueue::clear()
{
	head_ = count_ = 0;
}

// --------------------------------------------------------------------- QP
Qp::Qp(Device &dev, std::uint32_t qpn, std::uint32_t type, Cq *send_cq, Cq *recv_cq,
       Srq *srq, const QpCaps &caps)
	: dev_(dev), qpn_(qpn), type_(type), desc_(dev.qp_desc(qpn)), rw_(dev.qp_rw(qpn)),
	  send_cq_(send_cq),
	  recv_cq_(recv_cq), srq_(srq), caps_(caps), pending_(caps)
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

} // namespace uabi::sw
