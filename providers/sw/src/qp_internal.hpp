// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Private to the work-request files of the sw data path: what the requester
// (qp_requester.cpp), the responder (qp_responder.cpp), the retries
// (qp_retry.cpp) and the QP itself (qp.cpp) share — the arena's view of a
// QP, where a message lands, and the responder's services.
#ifndef UABI_SW_QP_INTERNAL_HPP
#define UABI_SW_QP_INTERNAL_HPP

#include "internal.hpp"

#include <algorithm>
#include <cstdint>

namespace uabi::sw::detail {

inline constexpr std::uint32_t kReset = UABI_QPS_RESET;
inline constexpr std::uint32_t kRtr = UABI_QPS_RTR;
inline constexpr std::uint32_t kRts = UABI_QPS_RTS;
inline constexpr std::uint32_t kSqd = UABI_QPS_SQD;
inline constexpr std::uint32_t kErr = UABI_QPS_ERR;
inline constexpr std::uint64_t kPeerCheckNs = 10'000'000;	// dead-peer probe interval

// IB RNR NAK timer values (ns), indexed by min_rnr_timer.
inline constexpr std::uint64_t kRnrNs[32] = {
	655360000, 10000, 20000, 30000, 40000, 60000, 80000, 120000,
	160000, 240000, 320000, 480000, 640000, 960000, 1280000, 1920000,
	2560000, 3840000, 5120000, 7680000, 10240000, 15360000, 20480000, 30720000,
	40960000, 61440000, 81920000, 122880000, 163840000, 245760000, 327680000, 491520000,
};

// Bytes of a path MTU (IBV_MTU_256 = 1 .. IBV_MTU_4096 = 5); the port's
// largest for a QP that was given none.
inline std::uint32_t mtu_bytes(std::uint8_t mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128u << mtu : kMtuBytes;
}

inline bool receiving(std::uint32_t st)
{
	return st == kRtr || st == kRts || st == kSqd;
}

// A QP of the arena: its read-only descriptor and its writable half.
struct QpRef {
	const uabi_sw_qp *d = nullptr;
	uabi_sw_qp_rw *w = nullptr;
	explicit operator bool() const { return d && w; }
};

inline QpRef qp_ref(const Device &dev, std::uint32_t qpn)
{
	return {dev.qp_desc(qpn), dev.qp_rw(qpn)};
}

// The state as the data path sees it: the control half's, or ERR once the
// data path (or a peer) moved the QP there.
inline std::uint32_t state_of(const QpRef &q)
{
	if (__atomic_load_n(&q.w->err, __ATOMIC_ACQUIRE))
		return kErr;
	return __atomic_load_n(&q.d->state, __ATOMIC_ACQUIRE);
}

inline std::uint32_t wc_opcode(std::uint32_t wr_opcode)
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
	case kWrBindMw:
		return kWcBindMw;
	case kWrLocalInv:
		return kWcLocalInv;
	default:
		return kWcSend;
	}
}

inline bool consumes_recv(std::uint32_t op)
{
	return op == kWrSend || op == kWrSendWithImm || op == kWrSendWithInv ||
	       op == kWrRdmaWriteWithImm;
}

inline bool is_send(std::uint32_t op)
{
	return op == kWrSend || op == kWrSendWithImm || op == kWrSendWithInv;
}

inline bool is_atomic(std::uint32_t op)
{
	return op == kWrAtomicCmpAndSwp || op == kWrAtomicFetchAndAdd;
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

inline constexpr std::uint32_t kWqeMax = sizeof(uabi_sw_recv_wqe) + 64 * sizeof(uabi_sw_sge);

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

// Affiliated asynchronous errors of a QP (enum ibv_event_type).
inline constexpr std::uint32_t kEventQpFatal = 1;	// a completion was lost (CQ overrun)
inline constexpr std::uint32_t kEventQpReqErr = 2;	// invalid request
inline constexpr std::uint32_t kEventQpAccessErr = 3;	// local access violation

// --------------------------------------------- the responder (qp_responder.cpp)

// Translates [addr, addr+len) of key in the MR table; pd 0 = any.  @via:
// 0 for a local access (an lkey: MRs only), else the responder QP a remote
// access comes through (an rkey: an MR, a window, or a type 2 window bound
// to that QP).
bool mr_check(const Device &dev, std::uint32_t key, std::uint64_t addr, std::uint64_t len,
	      pid_t owner, std::uint32_t pd, std::uint32_t need, std::uint64_t *va,
	      std::uint32_t via, pid_t *mr_owner = nullptr);

// The receive queue a message to the responder QP @dd (@dest: a copy of its
// descriptor, @dest_qpn its number) takes a WQE from: its SRQ if it has
// one, else its own receive queue; the completion goes to its receive CQ.
// false: its SRQ is gone.
bool recv_target(Device &dev, const QpRef &dd, const uabi_sw_qp &dest, std::uint32_t dest_qpn,
		 Target &t);
// The XRC SRQ @srqn that a message to the XRC receive QP @dd names; false
// unless it is an XRC SRQ of the receive QP's domain.
bool xrc_recv_target(Device &dev, const QpRef &dd, const uabi_sw_qp &dest,
		     std::uint32_t dest_qpn, std::uint32_t srqn, Target &t);

// Takes a receive WQE of @t: 1 taken, 0 the queue is empty, -1 the
// responder is not receiving (or the queue is gone); raises the SRQ limit
// event it may owe.
int take(Device &dev, Target &t, Wqe &w);

// The receive WQE's buffers for bytes [from, from + len); validates the
// keys of the SGEs it touches.  0, kWcLocLenErr or kWcLocProtErr.
std::uint32_t recv_iov(const Device &dev, const Wqe &w, std::uint32_t stride,
		       std::uint64_t from, std::uint64_t len, const Target &t, Iov &out);

// Sends through the receive CQ's small ring when it can (docs/datapath.md,
// "Small messages"); false: the caller copies directly.
bool send_small(Device &dev, const Target &t, const Cqe &rc, const Iov &dst, const Iov *dst2,
		const std::uint8_t *head, std::uint32_t hlen, const Iov &src, std::uint64_t len);

// The responder hit an error: its QP goes to ERR with the affiliated
// event @event.
void mark_error(Device &dev, const QpRef &q, std::uint32_t event);

// A completion for QP @q on CQ @cqn; a full CQ loses it and the QP goes
// to ERR (IBV_EVENT_QP_FATAL).
void push_or_fail(Device &dev, std::uint32_t cqn, const Cqe &e, const QpRef &q);

// The 40-byte GRH a UD receiver finds before the payload.
void make_grh(std::uint8_t *g, const AddressHandle &ah, std::uint32_t paylen);

} // namespace uabi::sw::detail

#endif
