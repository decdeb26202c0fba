// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The responder's side of a work request, done by the initiator against
// the arena (docs/datapath.md, "Semantics"): memory keys, where a message
// lands (a QP's receive queue, its SRQ, an XRC SRQ), the receive WQE and
// its buffers, the small-message ring, the responder's completions and
// errors (qp_internal.hpp).
#include "qp_internal.hpp"

namespace uabi::sw::detail {

bool mr_check(const Device &dev, std::uint32_t key, std::uint64_t addr, std::uint64_t len,
	      pid_t owner, std::uint32_t pd, std::uint32_t need, std::uint64_t *va,
	      std::uint32_t via, pid_t *mr_owner)
{
	uabi_sw_mr m;
	if (!dev.mr_lookup(key, m))
		return false;
	if (owner && m.pid != owner)
		return false;
	if (pd && m.pd != pd)
		return false;
	if (m.type != UABI_SW_KEY_MR && (!via || (m.type == UABI_SW_KEY_MW2 && m.qpn != via)))
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

// The responder QP's own receive queue or its SRQ (exec_rc_uc and exec_ud
// both land messages there).
bool recv_target(Device &dev, const QpRef &dd, const uabi_sw_qp &dest, std::uint32_t dest_qpn,
		 Target &t)
{
	t.state = dd;
	t.qpn = dest_qpn;
	t.qp = dd;
	t.cqn = dest.recv_cqn;
	if (dest.srq_slot) {
		const uabi_sw_srq *sd = dev.srq_desc(dest.srq_slot);
		if (!sd)
			return false;
		uabi_sw_srq s{};
		snapshot(sd, s);
		uabi_sw_srq_rw *sw = dev.srq_rw(dest.srq_slot);
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
	return true;
}

bool xrc_recv_target(Device &dev, const QpRef &dd, const uabi_sw_qp &dest,
		     std::uint32_t dest_qpn, std::uint32_t srqn, Target &t)
{
	t.state = dd;
	t.qpn = dest_qpn;
	const uabi_sw_srq *sd = dev.srq_desc(srqn);
	uabi_sw_srq s{};
	if (sd)
		snapshot(sd, s);
	if (!sd || s.slot != srqn || s.type != UABI_SRQT_XRC || s.xrcd != dest.xrcd)
		return false;
	uabi_sw_srq_rw *sw = dev.srq_rw(srqn);
	t.lock = &sw->lock;
	t.prod = &sw->prod;
	t.cons = &sw->cons;
	t.srq = sd;
	t.srq_rw = sw;
	t.owner = s.pid;
	t.pd = s.pd;
	t.cqn = s.cqn;
	t.qp = QpRef{};		// the target QP has nothing to flush
	return true;
}

// 1: a WQE was taken, 0: the queue is empty, -1: the responder is not
// receiving (or the queue is gone).
static int pop(Device &dev, Target &t, Wqe &w)
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
			      kAccessLocalWrite, &va, 0))
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
	if (hlen > kGrhBytes)
		return false;
	uabi_sw_small m;
	std::uint8_t data[kSmallBytes];
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
		std::memcpy(data, head, hlen);
	iovec to{data + hlen, len};
	local_copy(&to, 1, src.v, src.n, len);
	return dev.push_small(t.cqn, rc, t.owner, m, data);
}

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

} // namespace uabi::sw::detail
