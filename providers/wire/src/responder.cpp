// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The responder side of a wire QP (docs/wire.md, "Reliable connection"):
// the expected PSN, NAKs for sequence errors and bad requests, RNR NAKs,
// duplicates (READ executed again, atomics answered from the saved
// result), placement of SENDs and WRITEs, READ responses, atomics; UC's
// drop-the-message rule; UD's Q_Key check and GRH.
#include "qp_internal.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace uabi::wire {

namespace {

// Affiliated errors a responder owes (enum ibv_event_type).
constexpr std::uint32_t kEventReqErr = 2;
constexpr std::uint32_t kEventAccessErr = 3;

std::uint8_t g_zero_length;	// where a zero-length RDMA "lands"

} // namespace

bool Qp::have_wqe_locked()
{
	if (rq_.empty() && xrc_src_) {
		RecvQe q;
		std::uint32_t pd;
		if (xrc_src_(xrc_srqn_, true, pd, q.wr_id, q.sges) == 1)
			rq_.push_back(std::move(q));
	}
	if (rq_.empty() && src_) {
		RecvQe q;
		if (src_(q.wr_id, q.sges) == 1)
			rq_.push_back(std::move(q));
	}
	return !rq_.empty();
}

int Qp::post_recv(std::uint64_t wr_id, const std::vector<Sge> &sges)
{
	std::lock_guard<std::mutex> g(lock_);
	if (attr_.state == kReset || src_)
		return EINVAL;
	if (rq_.size() >= max_recv_wr_)
		return ENOMEM;
	if (attr_.state == kErr) {
		Completion c;
		c.wr_id = wr_id;
		c.status = kWcFlushErr;
		c.opcode = kWcRecv;
		c.qpn = qpn_;
		if (rcq_)
			rcq_(c);
		return 0;
	}
	rq_.push_back({wr_id, sges});
	return 0;
}

bool Qp::place_locked(const std::vector<Sge> &sges, std::uint64_t off, std::span<const std::uint8_t> data)
{
	std::size_t done = 0;
	for (const Sge &s : sges) {
		if (done == data.size())
			break;
		if (off >= s.length) {
			off -= s.length;
			continue;
		}
		Region r;
		if (!mem_.lookup(s.lkey, r) || r.window || r.pd != responder_pd_locked() ||
		    !(r.access & kAccLocalWrite) ||
		    s.addr < r.iova || s.addr - r.iova > r.length || s.length > r.length - (s.addr - r.iova))
			return false;
		std::size_t n = std::min<std::size_t>(s.length - off, data.size() - done);
		const std::uint64_t at = s.addr - r.iova + off;
		if (r.base)
			std::memcpy(r.base + at, data.data() + done, n);
		else if (n && !mem_.write(r, r.addr + at, data.data() + done, n))
			return false;
		done += n;
		off = 0;
	}
	return done == data.size();
}

bool Qp::remote_locked(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, std::uint32_t access,
			Target &t)
{
	t = {};
	if (!len) {
		// No key is checked for zero bytes; the QP's own access is.
		if (attr_.access & access) {
			t.p = &g_zero_length;
			return true;
		}
		ep_.counters().rx_access.fetch_add(1, std::memory_order_relaxed);
		return false;
	}
	Region &r = t.r;
	// A window: its own range and access; a type 2 one through the QP
	// it is bound to only (an invalidated window has no key at all).
	if (!mem_.lookup(rkey, r) || r.pd != responder_pd_locked() || !(attr_.access & access) ||
	    !(r.access & access) ||
	    (r.window == 2 && r.qpn != qpn_) || va < r.iova || va - r.iova > r.length || len > r.length - (va - r.iova)) {
		ep_.counters().rx_access.fetch_add(1, std::memory_order_relaxed);
		return false;
	}
	if (r.base)
		t.p = r.base + (va - r.iova);
	else
		t.at = r.addr + (va - r.iova);
	return true;
}

void Qp::send_ack_locked(std::uint8_t syndrome, std::uint32_t psn, const PeerAddr &to)
{
	// Every ACK or NAK names the expected PSN or the one before it, so
	// it covers what a coalesced ACK was due for.
	ack_due_ = false;
	Packet p;
	p.bth.opcode = opcode(transport(), kAck);
	p.bth.dest_qp = attr_.dest_qpn;
	p.bth.psn = psn;
	p.aeth.syndrome = syndrome;
	p.aeth.msn = msn_;
	ep_.transmit(p, {}, to, &attr_.src);
}

void Qp::nak_locked(std::uint8_t code, std::uint32_t psn)
{
	send_ack_locked(std::uint8_t(kAckNak | code), psn, attr_.dest);
}

bool Qp::respond_read_locked(const Packet &p)
{
	std::uint32_t len = p.reth.length;
	Target src;
	if (!remote_locked(p.reth.rkey, p.reth.va, len, kAccRemoteRead, src)) {
		nak_locked(kNakRemoteAccess, p.bth.psn);
		return false;
	}
	std::vector<std::uint8_t> far;	// another process's bytes, packet by packet
	std::uint32_t mtu = mtu_bytes(attr_.path_mtu);
	std::uint32_t n = std::max<std::uint32_t>(1, (len + mtu - 1) / mtu);
	Endpoint::Batch batch(ep_);
	for (std::uint32_t i = 0; i < n; i++) {
		Packet r;
		bool first = i == 0, last = i + 1 == n;
		r.bth.opcode = opcode(transport(), first && last ? kReadRespOnly
					   : first       ? kReadRespFirst
					   : last        ? kReadRespLast
							 : kReadRespMiddle);
		r.bth.dest_qp = attr_.dest_qpn;
		r.bth.psn = psn_add(p.bth.psn, i);
		r.aeth.syndrome = kAckOk | 0x1f;
		r.aeth.msn = msn_;
		std::uint32_t off = i * mtu;
		std::uint32_t sz = std::min(mtu, len - std::min(len, off));
		if (!src.p) {
			// Read now, sent now: a process gone halfway ends the
			// response there, and the requester times out.
			far.resize(sz);
			if (!mem_.read(src.r, src.at + off, far.data(), sz))
				return true;
			ep_.transmit(r, {far.data(), sz}, attr_.dest, &attr_.src);
			continue;
		}
		ep_.transmit(r, {src.p + (len ? off : 0), sz}, attr_.dest, &attr_.src);
	}
	return true;
}

bool Qp::respond_atomic_locked(const Packet &p, bool duplicate)
{
	Packet r;
	r.bth.opcode = opcode(transport(), kAtomicAck);
	r.bth.dest_qp = attr_.dest_qpn;
	r.bth.psn = p.bth.psn;
	r.aeth.syndrome = kAckOk | 0x1f;
	if (duplicate) {
		for (const SavedAtomic &s : atomics_)
			if (s.valid && s.psn == p.bth.psn) {
				r.aeth.msn = msn_;
				r.atomic_orig = s.orig;
				ep_.transmit(r, {}, attr_.dest, &attr_.src);
				return true;
			}
		return false;	// too old to answer: the requester times out
	}
	if (p.atomic.va & 7) {
		nak_locked(kNakInvalidRequest, p.bth.psn);
		return false;
	}
	Target t;
	if (!remote_locked(p.atomic.rkey, p.atomic.va, 8, kAccRemoteAtomic, t)) {
		nak_locked(kNakRemoteAccess, p.bth.psn);
		return false;
	}
	auto *w = reinterpret_cast<std::uint64_t *>(t.p);
	std::uint64_t orig;
	if (!w) {
		if (!mem_.atomic(t.r, t.at, op_of(p.bth.opcode) == kCmpSwap, p.atomic.compare, p.atomic.swap_add,
				 orig)) {
			nak_locked(kNakRemoteAccess, p.bth.psn);
			return false;
		}
	} else if (op_of(p.bth.opcode) == kCmpSwap) {
		orig = p.atomic.compare;
		__atomic_compare_exchange_n(w, &orig, p.atomic.swap_add, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(w, p.atomic.swap_add, __ATOMIC_SEQ_CST);
	}
	atomics_[atomic_next_++ % std::size(atomics_)] = {p.bth.psn, orig, true};
	msn_ = (msn_ + 1) & 0xffffff;
	r.aeth.msn = msn_;
	r.atomic_orig = orig;
	ep_.transmit(r, {}, attr_.dest, &attr_.src);
	return true;
}

void Qp::share_adopt_locked()
{
	QpAttr a = attr_;
	std::uint32_t e = epsn_, m = msn_;
	const int got = share_.adopt(a, e, m);
	if (got & 1)
		(void)modify_locked(a);
	if (got & 2) {
		// Taking over from another process: its state at its last
		// message boundary.  A message it was halfway through starts
		// again (the requester's packets after it are out of sequence
		// here: NAK, and it resends from this PSN).
		epsn_ = e & kPsnMask;
		msn_ = m & 0xffffff;
		in_ = {};
		nak_sent_ = false;
	}
}

void Qp::on_request_locked(const Packet &p, const PeerAddr &from)
{
	Counters &k = ep_.counters();
	// A shared XRC receive QP: what others changed first, and what this
	// request leaves at its end, at a message boundary only, and only
	// once its completions are in (else Endpoint::flush_acks() saves).
	struct Save {
		Qp &q;
		~Save()
		{
			if (q.share_.save && !q.in_.active && q.rx_done_.empty())
				q.share_.save(q.epsn_, q.msn_);
		}
	} save{*this};
	if (share_.adopt)
		share_adopt_locked();
	if (attr_.state < kRtr || attr_.state == kErr || !from.same_ip(attr_.dest)) {
		k.rx_bad_state.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	const bool rc = reliable();
	const Op op = op_of(p.bth.opcode);
	const std::uint32_t psn = p.bth.psn;
	const std::int32_t d = psn_diff(psn, epsn_);
	// XRC: every request names the SRQ it is for; keys are checked against
	// that SRQ's PD.  A name that is no SRQ of this QP's domain is an
	// invalid request (below, in sequence) or dropped (out of it).
	bool bad_srq = false;
	if (type_ == kQptXrcRecv || xrc_src_) {
		std::uint64_t wr_id;
		std::vector<Sge> none;
		bad_srq = !xrc_src_ || xrc_src_(p.xrc_srq, false, xrc_pd_, wr_id, none) < 0;
		xrc_srqn_ = p.xrc_srq;
		if (bad_srq && d != 0) {
			k.rx_access.fetch_add(1, std::memory_order_relaxed);
			return;
		}
	}
	if (!rc && d != 0) {
		// UC: a lost packet loses its message; a first packet starts
		// the next one.
		k.rx_out_of_seq.fetch_add(1, std::memory_order_relaxed);
		if (in_.active && in_.is_send)
			rq_.push_front(in_.wqe);	// the WQE waits for a whole message
		in_ = {};
		epsn_ = psn;
		if (!p.has(kIsFirst)) {
			epsn_ = psn_add(psn, 1);
			in_.drop = true;
			return;
		}
	}
	if (rc && d > 0) {
		k.rx_out_of_seq.fetch_add(1, std::memory_order_relaxed);
		if (!nak_sent_) {
			nak_sent_ = true;
			nak_locked(kNakPsnSeq, epsn_);
		}
		return;
	}
	if (rc && d < 0) {
		k.rx_duplicate.fetch_add(1, std::memory_order_relaxed);
		if (op == kReadRequest)
			respond_read_locked(p);
		else if (op == kCmpSwap || op == kFetchAdd)
			respond_atomic_locked(p, true);
		else {
			// A SEND or WRITE again: acknowledged again, once for
			// all of a batch (flush_acks()), not once per packet — a
			// peer resending a whole message would otherwise take an
			// ACK for each of its packets, all saying the same.
			ack_due_ = true;
			ack_to_ = attr_.dest;
		}
		return;
	}
	nak_sent_ = false;
	// From here on d == 0.
	auto invalid = [&](std::uint32_t status = kWcLocLenErr) {
		if (rc)
			nak_locked(kNakInvalidRequest, psn);
		if (in_.active && in_.is_send) {
			Completion c;
			c.wr_id = in_.wqe.wr_id;
			c.status = status;
			c.opcode = kWcRecv;
			c.qpn = qpn_;
			c.src_qp = attr_.dest_qpn;	// as the shared-memory path says
			c.srqn = xrc_srqn_;
			rx_done_.push_back(c);
		}
		in_ = {};
		if (rc)
			enter_error_locked(kEventReqErr);
		else
			in_.drop = true, epsn_ = psn_add(psn, 1);
	};
	if (!rc && in_.drop && !p.has(kIsFirst)) {
		epsn_ = psn_add(psn, 1);
		return;
	}
	if (p.has(kIsFirst))
		in_.drop = false;
	if (bad_srq)
		return invalid();
	switch (op) {
	case kSendFirst:
	case kSendMiddle:
	case kSendLast:
	case kSendLastImm:
	case kSendOnly:
	case kSendOnlyImm:
	case kSendLastInv:
	case kSendOnlyInv:
		if (p.has(kIsFirst)) {
			if (in_.active)
				return invalid();
			if (!have_wqe_locked()) {
				k.rx_no_wqe.fetch_add(1, std::memory_order_relaxed);
				if (rc)
					send_ack_locked(std::uint8_t(kAckRnr | (attr_.min_rnr_timer & 0x1f)), psn,
							attr_.dest);
				else
					in_.drop = true, epsn_ = psn_add(psn, 1);
				return;
			}
			in_ = {};
			in_.active = true;
			in_.is_send = true;
			in_.wqe = std::move(rq_.front());
			rq_.pop_front();
		} else if (!in_.active || !in_.is_send) {
			return invalid();
		}
		// The IETH's window is invalid before the last packet's bytes
		// land and before the receiver sees the completion.  A key that
		// is no type 2 window of this QP's PD bound to this QP is an
		// invalid request (the WQE completes with REM_INV_REQ_ERR, as
		// on the shared-memory path).
		if (p.has(kHasIeth) && (!inv_ || !inv_(p.ieth_rkey))) {
			k.rx_access.fetch_add(1, std::memory_order_relaxed);
			return invalid(kWcRemInvReqErr);
		}
		if (!place_locked(in_.wqe.sges, in_.off, p.payload))
			return invalid();
		in_.off += p.payload.size();
		if (p.has(kIsLast)) {
			Completion c;
			c.wr_id = in_.wqe.wr_id;
			c.opcode = kWcRecv;
			c.byte_len = std::uint32_t(in_.off);
			c.qpn = qpn_;
			c.src_qp = attr_.dest_qpn;	// as the shared-memory path says
			c.srqn = xrc_srqn_;
			if (p.has(kHasImm)) {
				c.imm = p.imm;
				c.flags |= kWcFlagImm;
			}
			if (p.has(kHasIeth)) {
				c.imm = p.ieth_rkey;	// ibv_wc's invalidated_rkey
				c.flags |= kWcFlagInv;
			}
			in_ = {};
			msn_ = (msn_ + 1) & 0xffffff;
			rx_done_.push_back(c);
		}
		break;
	case kWriteFirst:
	case kWriteMiddle:
	case kWriteLast:
	case kWriteLastImm:
	case kWriteOnly:
	case kWriteOnlyImm:
		if (p.has(kIsFirst)) {
			if (in_.active)
				return invalid();
			Target dst;
			if (!remote_locked(p.reth.rkey, p.reth.va, p.reth.length, kAccRemoteWrite, dst)) {
				if (rc) {
					nak_locked(kNakRemoteAccess, psn);
					enter_error_locked(kEventAccessErr);
				} else {
					in_.drop = true, epsn_ = psn_add(psn, 1);
				}
				return;
			}
			in_ = {};
			in_.active = true;
			in_.dst = dst;
			in_.left = p.reth.length;
			in_.total = p.reth.length;
		} else if (!in_.active || in_.is_send) {
			return invalid();
		}
		if (p.payload.size() > in_.left || (p.has(kIsLast) && p.payload.size() != in_.left))
			return invalid();
		if (p.has(kHasImm) && !have_wqe_locked()) {
			// The immediate needs a receive WQE: nothing of this
			// packet is placed until one is there.
			k.rx_no_wqe.fetch_add(1, std::memory_order_relaxed);
			if (rc) {
				if (p.has(kIsFirst))
					in_ = {};
				send_ack_locked(std::uint8_t(kAckRnr | (attr_.min_rnr_timer & 0x1f)), psn,
						attr_.dest);
			} else {
				in_ = {};
				in_.drop = true, epsn_ = psn_add(psn, 1);
			}
			return;
		}
		if (in_.dst.p && !p.payload.empty()) {
			std::memcpy(in_.dst.p, p.payload.data(), p.payload.size());
			in_.dst.p += p.payload.size();
		} else if (!in_.dst.p && !p.payload.empty()) {
			// Another process's memory (docs/wire.md, "XRC").
			if (!mem_.write(in_.dst.r, in_.dst.at, p.payload.data(), p.payload.size()))
				return invalid(kWcRemAccessErr);
			in_.dst.at += p.payload.size();
		}
		in_.left -= p.payload.size();
		if (p.has(kIsLast)) {
			std::uint64_t total = in_.total;
			in_ = {};
			msn_ = (msn_ + 1) & 0xffffff;
			if (p.has(kHasImm)) {
				Completion c;
				c.wr_id = rq_.front().wr_id;
				rq_.pop_front();
				c.opcode = kWcRecvWriteImm;
				c.byte_len = std::uint32_t(total);
				c.imm = p.imm;
				c.flags = kWcFlagImm;
				c.qpn = qpn_;
				c.src_qp = attr_.dest_qpn;
				c.srqn = xrc_srqn_;
				rx_done_.push_back(c);
			}
		}
		break;
	case kReadRequest:
		if (in_.active)
			return invalid();
		msn_ = (msn_ + 1) & 0xffffff;
		if (!respond_read_locked(p)) {
			msn_ = (msn_ - 1) & 0xffffff;
			enter_error_locked(kEventAccessErr);
			return;
		}
		epsn_ = psn_add(epsn_, std::max<std::uint32_t>(1, (p.reth.length + mtu_bytes(attr_.path_mtu) - 1) /
								       mtu_bytes(attr_.path_mtu)));
		return;
	case kCmpSwap:
	case kFetchAdd:
		if (in_.active)
			return invalid();
		if (respond_atomic_locked(p, false))
			epsn_ = psn_add(epsn_, 1);
		else
			enter_error_locked(kEventAccessErr);
		return;
	default:
		return invalid();
	}
	epsn_ = psn_add(psn, 1);
	if (rc && p.bth.ack_req) {
		ack_due_ = true;
		ack_to_ = attr_.dest;
	}
}

void Qp::on_ud_locked(const Packet &p, const PeerAddr &from, const IpInfo &ip)
{
	Counters &k = ep_.counters();
	(void)from;
	if (attr_.state < kRtr || attr_.state == kErr) {
		k.rx_bad_state.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	if (p.deth.qkey != attr_.qkey) {
		k.rx_bad_qkey.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	if (!have_wqe_locked()) {
		k.rx_no_wqe.fetch_add(1, std::memory_order_relaxed);
		return;
	}
	RecvQe w = std::move(rq_.front());
	rq_.pop_front();
	// The GRH: for IPv4 its last 20 bytes are the IPv4 header (RoCEv2).
	std::uint8_t grh[40] = {};
	std::uint32_t total = std::uint32_t(p.payload.size());
	if (ip.v6) {
		grh[0] = 0x60;
		std::uint16_t plen = std::uint16_t(8 + kBthBytes + kDethBytes + total + kIcrcBytes);
		grh[4] = std::uint8_t(plen >> 8);
		grh[5] = std::uint8_t(plen);
		grh[6] = 17;
		grh[7] = 64;
		std::memcpy(grh + 8, ip.src, 16);
		std::memcpy(grh + 24, ip.dst, 16);
	} else {
		std::uint8_t *h = grh + 20;
		std::uint16_t tlen = std::uint16_t(20 + 8 + kBthBytes + kDethBytes + total + kIcrcBytes);
		h[0] = 0x45;
		h[2] = std::uint8_t(tlen >> 8);
		h[3] = std::uint8_t(tlen);
		h[6] = 0x40;
		h[8] = 64;
		h[9] = 17;
		std::memcpy(h + 12, ip.src, 4);
		std::memcpy(h + 16, ip.dst, 4);
		std::uint32_t sum = 0;
		for (int i = 0; i < 20; i += 2)
			sum += std::uint32_t(h[i] << 8 | h[i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		h[10] = std::uint8_t(~sum >> 8);
		h[11] = std::uint8_t(~sum);
	}
	Completion c;
	c.wr_id = w.wr_id;
	c.opcode = kWcRecv;
	c.qpn = qpn_;
	c.src_qp = p.deth.src_qp;
	c.flags = kWcFlagGrh;
	if (p.has(kHasImm)) {
		c.imm = p.imm;
		c.flags |= kWcFlagImm;
	}
	if (!place_locked(w.sges, 0, {grh, sizeof(grh)}) || !place_locked(w.sges, sizeof(grh), p.payload))
		c.status = kWcLocLenErr;
	else
		c.byte_len = sizeof(grh) + total;
	rx_done_.push_back(c);
}

} // namespace uabi::wire
