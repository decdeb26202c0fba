// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The requester side of a wire QP (docs/wire.md, "Reliable connection"):
// PSNs, segmentation at the path MTU, the retransmission timer, ACK, NAK
// and RNR NAK handling, READ and atomic responses, completions in order.
#include "qp_internal.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace uabi::wire {

namespace {

// Packets in flight before the requester waits for ACKs: at most ~70 KiB
// (MTU 1024) to ~260 KiB (MTU 4096), within a receive buffer an
// unprivileged socket gets (the endpoint asks for 4 MiB; net.core.rmem_max
// may cap it, at 208 KiB by default), as there is no congestion control.
constexpr std::uint32_t kWindow = 64;
// Within a long message every kAckEvery-th packet asks for an ACK, so the
// window moves before the message ends.
constexpr std::uint32_t kAckEvery = 16;

std::uint64_t timeout_ns(std::uint8_t t)
{
	// 4.096 us * 2^timeout (IBTA 9.7.6.1.3); 0 is "infinite".
	if (!t)
		return 0;
	return 4096ull << std::min<std::uint8_t>(t, 31);
}

} // namespace

Qp::Qp(Endpoint &ep, std::uint32_t qpn, std::uint32_t type, Memory &mem, CqSink scq, CqSink rcq,
       std::uint32_t max_send_wr, std::uint32_t max_recv_wr)
	: ep_(ep), qpn_(qpn), type_(type), mem_(mem), scq_(std::move(scq)), rcq_(std::move(rcq)),
	  max_send_wr_(max_send_wr), max_recv_wr_(max_recv_wr)
{
}

Qp::~Qp()
{
	{
		// An ACK a poller held goes before the QP does.
		std::lock_guard<std::mutex> g(lock_);
		if (ack_due_)
			send_ack_locked(kAckOk | 0x1f, psn_add(epsn_, kPsnMask), ack_to_);
	}
	ep_.unregister_qp(this);
	if (share_.save)
		ep_.shared_qps_.fetch_sub(1, std::memory_order_relaxed);
}

void Qp::set_share(Share s)
{
	if (!share_.save && s.save)
		ep_.shared_qps_.fetch_add(1, std::memory_order_relaxed);
	share_ = std::move(s);
}

std::uint32_t Qp::state() const
{
	std::lock_guard<std::mutex> g(lock_);
	return attr_.state;
}

int Qp::modify(const QpAttr &a)
{
	std::lock_guard<std::mutex> g(lock_);
	return modify_locked(a);
}

int Qp::modify_locked(const QpAttr &a)
{
	if (a.state > kErr || (a.state >= kRtr && a.state != kErr && type_ != kQptUd && !a.dest.len) ||
	    (a.state >= kRtr && a.state != kErr && !mtu_bytes(a.path_mtu)))
		return EINVAL;
	std::uint32_t old = attr_.state;
	attr_ = a;
	if (a.state == kRtr && old < kRtr) {
		epsn_ = a.rq_psn & kPsnMask;
		msn_ = 0;
		nak_sent_ = false;
	}
	if (a.state == kRts && old < kRts) {
		next_psn_ = una_psn_ = sent_psn_ = a.sq_psn & kPsnMask;
		retries_left_ = a.retry_cnt;
		rnr_left_ = a.rnr_retry;
	}
	if (a.state == kErr)
		flush_locked();
	if (a.state == kReset) {
		sq_.clear();
		rq_.clear();
		rx_done_.clear();
		in_ = {};
		send_idx_ = 0;
		timer_ns_ = rnr_wait_ns_ = 0;
	}
	return 0;
}

bool Qp::local_sges_ok_locked(const std::vector<Sge> &sges, std::uint32_t need_access, std::uint64_t *total)
{
	std::uint64_t t = 0;
	for (const Sge &s : sges) {
		if (!s.length)
			continue;
		Region r;
		if (!mem_.lookup(s.lkey, r) || r.window || r.pd != pd_locked() || s.addr < r.iova ||
		    s.addr - r.iova > r.length || s.length > r.length - (s.addr - r.iova) ||
		    (need_access & ~r.access))
			return false;
		t += s.length;
	}
	*total = t;
	return true;
}

int Qp::post_send(const SendWr &wr)
{
	std::lock_guard<std::mutex> g(lock_);
	if (attr_.state != kRts && attr_.state != kErr)
		return EINVAL;
	if (sq_.size() >= max_send_wr_)
		return ENOMEM;
	bool rd = wr.opcode == kWrRead || wr.opcode == kWrCmpSwap || wr.opcode == kWrFetchAdd;
	bool local = wr.opcode == kWrLocalInv || wr.opcode == kWrBindMw;
	// UC has no SEND with invalidate (IBTA's UC opcodes have no IETH).
	if ((type_ == kQptUd && wr.opcode != kWrSend && wr.opcode != kWrSendImm) ||
	    (type_ == kQptUc && (rd || wr.opcode == kWrSendInv)) || wr.opcode > kWrSendInv ||
	    (local && !wr.local))
		return EINVAL;
	auto q = std::make_unique<SendQe>();
	q->wr = wr;
	q->rd = rd;
	q->local = local;
	if (local) {
		// No packet and no PSN: executed in pump_locked() in its turn.
		q->npkts = 0;
		q->first_psn = next_psn_;
		if (attr_.state == kErr) {
			q->status = kWcFlushErr;
			q->failed = true;
		}
		sq_.push_back(std::move(q));
		pump_locked(now_ns());
		complete_ready_locked();
		return 0;
	}
	std::uint32_t mtu = mtu_bytes(attr_.path_mtu);
	std::uint32_t need = rd ? std::uint32_t(kAccLocalWrite) : 0u;
	bool ok = true;
	if (wr.is_inline && !rd)
		q->total = wr.inline_data.size();
	else
		ok = local_sges_ok_locked(wr.sges, need, &q->total);
	if (ok && (wr.opcode == kWrCmpSwap || wr.opcode == kWrFetchAdd) &&
	    (q->total != 8 || wr.sges.size() != 1 || (wr.remote_addr & 7)))
		ok = false;
	if (ok && type_ == kQptUd && q->total > mtu)
		ok = false;
	if (ok && q->total > 0x80000000ull)
		ok = false;
	if (type_ == kQptUd) {
		q->npkts = 1;
	} else if (q->rd && wr.opcode != kWrRead) {
		q->npkts = 1;
	} else {
		q->npkts = std::uint32_t(std::max<std::uint64_t>(1, (q->total + mtu - 1) / mtu));
	}
	q->first_psn = next_psn_;
	if (attr_.state == kErr) {
		q->status = kWcFlushErr;
		q->failed = true;
	} else if (!ok) {
		q->status = wr.opcode == kWrCmpSwap || wr.opcode == kWrFetchAdd || type_ == kQptUd ? kWcLocLenErr
												  : kWcLocProtErr;
		q->failed = true;
	} else {
		next_psn_ = psn_add(next_psn_, q->npkts);
	}
	sq_.push_back(std::move(q));
	bool was_idle = !timer_ns_;
	std::uint64_t now = now_ns();
	pump_locked(now);
	complete_ready_locked();
	if (was_idle && timer_ns_)
		ep_.timer_armed(timer_ns_);
	return 0;
}

// Sends what the window allows, from send_idx_ on.
void Qp::pump_locked(std::uint64_t now)
{
	if (attr_.state != kRts || (rnr_wait_ns_ && now < rnr_wait_ns_))
		return;
	rnr_wait_ns_ = 0;
	Endpoint::Batch batch(ep_);	// what the window allows, in as few sends as may be
	std::uint32_t rd_out = 0;
	for (std::size_t i = 0; i < send_idx_ && i < sq_.size(); i++)
		if (sq_[i]->rd && !sq_[i]->done)
			rd_out++;
	bool ran_local = false, sent = false;
	while (send_idx_ < sq_.size()) {
		SendQe &q = *sq_[send_idx_];
		if (q.failed)
			break;	// completes in order once everything before it did
		if (q.local) {
			if (!q.done) {
				// A window is bound or invalidated once everything
				// posted before it has completed (acknowledged),
				// so no earlier request still uses the old state.
				bool pending = false;
				for (std::size_t i = 0; i < send_idx_ && !pending; i++)
					pending = !sq_[i]->done;
				if (pending)
					break;
				std::uint32_t st = q.wr.local();
				ran_local = true;
				if (st != kWcOk) {
					q.failed = true;
					q.status = st;
					break;
				}
				q.done = true;
			}
			send_idx_++;
			continue;
		}
		if (q.rd) {
			if (rd_out >= std::max<std::uint32_t>(1, attr_.max_rd_atomic))
				break;
			if (psn_diff(q.first_psn, una_psn_) >= std::int32_t(kWindow))
				break;
			send_rd_request_locked(q);
			sent = true;
			rd_out++;
			send_idx_++;
			continue;
		}
		bool full = false;
		while (q.sent < q.npkts && !full) {
			if (reliable() && psn_diff(psn_add(q.first_psn, q.sent), una_psn_) >= std::int32_t(kWindow))
				full = true;
			else {
				send_packet_locked(q, now);
				sent = true;
			}
		}
		if (full)
			break;
		send_idx_++;
		if (!reliable())
			q.done = true;	// UC and UD complete when sent
	}
	if (ran_local)
		complete_ready_locked();
	// An ACK a poller held (Endpoint::flush_acks()) leaves with the
	// packets sent here: after them, so that it joins their run as its
	// shorter (or equal) last packet — one system call for both.  (Not
	// when nothing was sent: an ACK received in the same batch runs this
	// too, and the held ACK would leave alone, before the next post.)
	if (sent && ack_due_)
		send_ack_locked(kAckOk | 0x1f, psn_add(epsn_, kPsnMask), ack_to_);
}

void Qp::send_packet_locked(SendQe &q, std::uint64_t now)
{
	const SendWr &wr = q.wr;
	std::uint32_t mtu = mtu_bytes(attr_.path_mtu);
	std::uint64_t off = std::uint64_t(q.sent) * mtu;
	std::uint32_t len = std::uint32_t(std::min<std::uint64_t>(mtu, q.total - std::min(q.total, off)));
	bool first = q.sent == 0, last = q.sent + 1 == q.npkts;
	bool imm = wr.opcode == kWrSendImm || wr.opcode == kWrWriteImm;
	bool inv = wr.opcode == kWrSendInv;
	bool write = wr.opcode == kWrWrite || wr.opcode == kWrWriteImm;
	Op op;
	if (write)
		op = first && last ? (imm ? kWriteOnlyImm : kWriteOnly)
		     : first      ? kWriteFirst
		     : last       ? (imm ? kWriteLastImm : kWriteLast)
				  : kWriteMiddle;
	else
		op = first && last ? (imm ? kSendOnlyImm : inv ? kSendOnlyInv : kSendOnly)
		     : first      ? kSendFirst
		     : last       ? (imm ? kSendLastImm : inv ? kSendLastInv : kSendLast)
				  : kSendMiddle;
	Packet p;
	p.ieth_rkey = wr.invalidate_rkey;	// sent with the last packet only (the IETH)
	p.bth.opcode = opcode(transport(), op);
	p.xrc_srq = wr.xrc_srqn;
	p.bth.solicited = last && (wr.flags & kSendFlagSolicited);
	p.bth.psn = psn_add(q.first_psn, q.sent);
	p.bth.ack_req = reliable() && (last || (q.sent + 1) % kAckEvery == 0);
	p.imm = wr.imm;
	PeerAddr to = attr_.dest;
	const PeerAddr *from = &attr_.src;
	if (type_ == kQptUd) {
		p.bth.dest_qp = wr.ud_qpn;
		p.deth.qkey = wr.ud_qkey & 0x80000000u ? attr_.qkey : wr.ud_qkey;
		p.deth.src_qp = qpn_;
		to = wr.ud_dest;
		if (wr.ud_src.len)
			from = &wr.ud_src;
	} else {
		p.bth.dest_qp = attr_.dest_qpn;
	}
	if (write) {
		p.reth.va = wr.remote_addr;
		p.reth.rkey = wr.rkey;
		p.reth.length = std::uint32_t(q.total);
	}
	// Gather this packet's bytes from the SGE list.
	std::vector<std::span<const std::uint8_t>> parts;
	std::uint64_t skip = off, want = len;
	if (wr.is_inline && len)
		parts.emplace_back(wr.inline_data.data() + off, len);
	static const std::vector<Sge> kNoSges;
	// A reference, not the ternary's copy of the list for every packet.
	const std::vector<Sge> &sges = wr.is_inline ? kNoSges : wr.sges;
	for (const Sge &s : sges) {
		if (!want)
			break;
		if (skip >= s.length) {
			skip -= s.length;
			continue;
		}
		std::uint64_t n = std::min<std::uint64_t>(s.length - skip, want);
		parts.emplace_back(reinterpret_cast<const std::uint8_t *>(s.addr + skip), n);
		want -= n;
		skip = 0;
	}
	ep_.transmit_gather(p, parts, len, to, from);
	q.sent++;
	if (reliable()) {
		if (psn_diff(psn_add(p.bth.psn, 1), sent_psn_) > 0)
			sent_psn_ = psn_add(p.bth.psn, 1);
		if (!timer_ns_)
			timer_ns_ = arm_timer(now);
	}
}

std::uint64_t Qp::arm_timer(std::uint64_t now) const
{
	std::uint64_t t = timeout_ns(attr_.timeout);
	return t ? now + t : 0;
}

void Qp::send_rd_request_locked(SendQe &q)
{
	const SendWr &wr = q.wr;
	std::uint32_t mtu = mtu_bytes(attr_.path_mtu);
	Packet p;
	p.bth.dest_qp = attr_.dest_qpn;
	p.bth.ack_req = true;
	p.xrc_srq = wr.xrc_srqn;
	if (wr.opcode == kWrRead) {
		// A retry asks only for what has not arrived (its PSN is the
		// first missing response's).
		std::uint64_t got = q.resp_off;
		p.bth.opcode = opcode(transport(), kReadRequest);
		p.bth.psn = psn_add(q.first_psn, std::uint32_t(got / mtu));
		p.reth.va = wr.remote_addr + got;
		p.reth.rkey = wr.rkey;
		p.reth.length = std::uint32_t(q.total - got);
	} else {
		p.bth.opcode = opcode(transport(), wr.opcode == kWrCmpSwap ? kCmpSwap : kFetchAdd);
		p.bth.psn = q.first_psn;
		p.atomic.va = wr.remote_addr;
		p.atomic.rkey = wr.rkey;
		p.atomic.swap_add = wr.opcode == kWrCmpSwap ? wr.swap : wr.compare_add;
		p.atomic.compare = wr.opcode == kWrCmpSwap ? wr.compare_add : 0;
	}
	ep_.transmit(p, {}, attr_.dest, &attr_.src);
	q.sent = 1;
	std::uint32_t end = psn_add(q.first_psn, q.npkts);
	if (psn_diff(end, sent_psn_) > 0)
		sent_psn_ = end;
	if (!timer_ns_)
		timer_ns_ = arm_timer(now_ns());
}

// Go back to @psn: everything from there on is sent again.
void Qp::rewind_locked(std::uint32_t psn)
{
	for (std::size_t i = 0; i < sq_.size(); i++) {
		SendQe &q = *sq_[i];
		if (q.failed || q.done || q.local)
			continue;
		std::int32_t d = psn_diff(psn, q.first_psn);
		if (d >= std::int32_t(q.npkts))
			continue;
		if (send_idx_ > i || (send_idx_ == i && !q.rd))
			ep_.counters().retransmits.fetch_add(1, std::memory_order_relaxed);
		send_idx_ = i;
		q.sent = q.rd ? 0 : std::uint32_t(std::max(d, 0));
		for (std::size_t j = i + 1; j < sq_.size(); j++)
			if (!sq_[j]->failed)
				sq_[j]->sent = 0;
		return;
	}
}

// Everything up to and including @psn was executed by the responder.
void Qp::ack_upto_locked(std::uint32_t psn)
{
	if (psn_diff(psn, una_psn_) < 0 || psn_diff(psn, sent_psn_) >= 0)
		return;	// old or beyond anything sent: ignore
	std::uint32_t upto = psn_add(psn, 1);
	for (auto &qp : sq_) {
		SendQe &q = *qp;
		if (q.failed)
			break;
		if (q.local) {
			if (!q.done)
				break;	// not executed yet: nothing after it was sent
			continue;
		}
		std::uint32_t last = psn_add(q.first_psn, q.npkts - 1);
		if (psn_diff(last, psn) > 0)
			break;
		if (q.rd && !q.done) {
			// The responder went past a READ or atomic whose
			// response has not come (lost, or still on its way):
			// ask again from the first missing response.
			upto = psn_add(q.first_psn, q.wr.opcode == kWrRead
							 ? std::uint32_t(q.resp_off / mtu_bytes(attr_.path_mtu))
							 : 0);
			rewind_locked(upto);
			break;
		}
		q.done = true;
	}
	if (psn_diff(upto, una_psn_) > 0)
		una_psn_ = upto;
	retries_left_ = attr_.retry_cnt;
	rnr_left_ = attr_.rnr_retry;
	timer_ns_ = psn_diff(sent_psn_, una_psn_) > 0 ? arm_timer(now_ns()) : 0;
}

void Qp::complete_ready_locked()
{
	while (!sq_.empty() && (sq_.front()->done || sq_.front()->failed)) {
		std::unique_ptr<SendQe> q = std::move(sq_.front());
		sq_.pop_front();
		if (send_idx_)
			send_idx_--;
		if (q->failed) {
			deliver_send_locked(*q, q->status);
			if (q->status != kWcFlushErr)
				enter_error_locked();
			continue;
		}
		deliver_send_locked(*q, kWcOk);
	}
}

void Qp::deliver_send_locked(const SendQe &q, std::uint32_t status)
{
	if (status == kWcOk && !(q.wr.flags & kSendFlagSignaled) && !sq_sig_all_)
		return;
	Completion c;
	c.wr_id = q.wr.wr_id;
	c.status = status;
	c.qpn = qpn_;
	switch (q.wr.opcode) {
	case kWrWrite:
	case kWrWriteImm: c.opcode = kWcWrite; break;
	case kWrRead: c.opcode = kWcRead; break;
	case kWrCmpSwap: c.opcode = kWcCmpSwap; break;
	case kWrFetchAdd: c.opcode = kWcFetchAdd; break;
	case kWrBindMw: c.opcode = kWcBindMw; break;
	case kWrLocalInv: c.opcode = kWcLocalInv; break;
	default: c.opcode = kWcSend; break;
	}
	c.byte_len = status == kWcOk && q.wr.opcode == kWrRead ? std::uint32_t(q.total) : 0;
	if (scq_)
		scq_(c);
}

void Qp::fail_front_locked(std::uint32_t status)
{
	for (auto &q : sq_)
		if (!q->done && !q->failed) {
			q->failed = true;
			q->status = status;
			break;
		}
	complete_ready_locked();
}

void Qp::on_response_locked(const Packet &p, std::uint64_t now)
{
	if ((type_ != kQptRc && type_ != kQptXrcSend) || attr_.state != kRts)
		return;
	std::uint32_t psn = p.bth.psn;
	Op op = op_of(p.bth.opcode);
	if (op == kAck || (p.has(kHasAeth) && op != kReadRespFirst && op != kReadRespLast &&
			   op != kReadRespOnly && op != kAtomicAck)) {
		std::uint8_t kind = p.aeth.syndrome & 0xe0;
		if (kind == kAckOk) {
			ack_upto_locked(psn);
		} else if (kind == kAckRnr) {
			ep_.counters().rnr_naks.fetch_add(1, std::memory_order_relaxed);
			ack_upto_locked(psn_add(psn, kPsnMask));
			if (attr_.rnr_retry != 7 && rnr_left_-- == 0) {
				fail_front_locked(kWcRnrRetryExcErr);
				return;
			}
			rnr_wait_ns_ = now + rnr_timer_ns(p.aeth.syndrome & 0x1f);
			rewind_locked(psn);
			timer_ns_ = 0;
		} else if (kind == kAckNak) {
			ack_upto_locked(psn_add(psn, kPsnMask));
			std::uint8_t code = p.aeth.syndrome & 0x1f;
			if (code == kNakPsnSeq) {
				rewind_locked(psn);
			} else {
				fail_front_locked(code == kNakRemoteAccess ? kWcRemAccessErr
						  : code == kNakRemoteOp ? kWcRemOpErr
									 : kWcRemInvReqErr);
				return;
			}
		}
		complete_ready_locked();
		pump_locked(now);
		return;
	}
	// A READ response or an atomic acknowledgement: for the oldest
	// READ/atomic still waiting.
	SendQe *q = nullptr;
	for (auto &e : sq_)
		if (e->rd && !e->done && !e->failed && e->sent) {
			q = e.get();
			break;
		}
	if (!q)
		return;
	std::uint32_t mtu = mtu_bytes(attr_.path_mtu);
	if (op == kAtomicAck) {
		if (psn != q->first_psn || q->wr.opcode == kWrRead)
			return;
		if ((p.aeth.syndrome & 0xe0) != kAckOk)
			return;
		ack_upto_locked(psn_add(psn, kPsnMask));
		std::uint64_t v = p.atomic_orig;
		const Sge &s = q->wr.sges[0];
		std::memcpy(reinterpret_cast<void *>(s.addr), &v, 8);
		q->done = true;
		ack_upto_locked(psn);
	} else {
		if (q->wr.opcode != kWrRead)
			return;
		std::uint32_t want = psn_add(q->first_psn, std::uint32_t(q->resp_off / mtu));
		if (psn != want)
			return;	// out of order: the request is asked again on timeout
		if (op == kReadRespFirst || op == kReadRespOnly)
			ack_upto_locked(psn_add(q->first_psn, kPsnMask));
		std::uint64_t left = q->total - q->resp_off;
		bool last = op == kReadRespLast || op == kReadRespOnly;
		if (p.payload.size() > left || (!last && p.payload.size() != mtu) ||
		    (last && p.payload.size() != left)) {
			fail_front_locked(kWcRemOpErr);
			return;
		}
		// Scatter into the local SGEs (checked at post time).
		std::uint64_t skip = q->resp_off;
		std::size_t done = 0;
		for (const Sge &s : q->wr.sges) {
			if (done == p.payload.size())
				break;
			if (skip >= s.length) {
				skip -= s.length;
				continue;
			}
			std::size_t n = std::min<std::size_t>(s.length - skip, p.payload.size() - done);
			std::memcpy(reinterpret_cast<void *>(s.addr + skip), p.payload.data() + done, n);
			done += n;
			skip = 0;
		}
		q->resp_off += p.payload.size();
		retries_left_ = attr_.retry_cnt;	// forward progress
		if (last) {
			q->done = true;
			ack_upto_locked(psn_add(q->first_psn, q->npkts - 1));
		} else {
			timer_ns_ = arm_timer(now);
		}
	}
	complete_ready_locked();
	pump_locked(now);
}

std::uint64_t Qp::next_timer_locked() const
{
	std::uint64_t t = timer_ns_;
	if (rnr_wait_ns_ && (!t || rnr_wait_ns_ < t))
		t = rnr_wait_ns_;
	return t;
}

void Qp::timers_locked(std::uint64_t now)
{
	if (attr_.state != kRts)
		return;
	if (rnr_wait_ns_ && now >= rnr_wait_ns_) {
		pump_locked(now);
		complete_ready_locked();
	}
	if (timer_ns_ && now >= timer_ns_) {
		ep_.counters().timeouts.fetch_add(1, std::memory_order_relaxed);
		if (retries_left_ == 0) {
			timer_ns_ = 0;
			fail_front_locked(kWcRetryExcErr);
			return;
		}
		retries_left_--;
		rewind_locked(una_psn_);
		timer_ns_ = arm_timer(now);
		pump_locked(now);
	}
}

void Qp::enter_error_locked(std::uint32_t event)
{
	const bool was = attr_.state == kErr;
	attr_.state = kErr;
	flush_locked();
	if (!was && err_hook_)
		err_hook_(event);
}

void Qp::flush_locked()
{
	timer_ns_ = rnr_wait_ns_ = 0;
	while (!sq_.empty()) {
		std::unique_ptr<SendQe> q = std::move(sq_.front());
		sq_.pop_front();
		if (q->failed && q->status != kWcFlushErr)
			deliver_send_locked(*q, q->status);
		else
			deliver_send_locked(*q, kWcFlushErr);
	}
	send_idx_ = 0;
	for (const Completion &c : rx_done_)	// what arrived before the error first
		if (rcq_)
			rcq_(c);
	rx_done_.clear();
	// The message being received, then every WQE waiting: its own, and
	// those of a receive queue it takes from that is its alone (not an
	// SRQ's, whose WQEs stay for other QPs).
	if (in_.active && in_.is_send)
		rq_.push_front(std::move(in_.wqe));
	in_ = {};
	for (unsigned i = 0; src_ && src_own_ && i < (1u << 20); i++) {
		RecvQe q;
		if (src_(q.wr_id, q.sges) != 1)
			break;
		rq_.push_back(std::move(q));
	}
	while (!rq_.empty()) {
		Completion c;
		c.wr_id = rq_.front().wr_id;
		c.status = kWcFlushErr;
		c.opcode = kWcRecv;
		c.qpn = qpn_;
		rq_.pop_front();
		if (rcq_)
			rcq_(c);
	}
}

} // namespace uabi::wire
