// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The RoCEv2 transport of the software device (docs/wire.md): queue pairs
// whose peer is reached over UDP instead of shared memory.  An Endpoint is
// one UDP socket (the device's address, port 4791) and the QPs it serves;
// a QP speaks RC (PSNs, ACKs, NAKs, RNR, retransmission, READ and atomic
// responses), UC and UD as the InfiniBand transport does.
//
// The engine owns no memory of the application: it asks a Memory for keys
// (the MR table of the device) and hands completions to the QP's CQ sinks.
// Values (statuses, opcodes, flags, access bits) are numbered as
// <infiniband/verbs.h>, as in uabi/sw/provider.hpp.
#ifndef UABI_WIRE_ENGINE_HPP
#define UABI_WIRE_ENGINE_HPP

#include <uabi/wire/packet.hpp>

#include <atomic>
#include <cstdio>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <thread>
#include <vector>

namespace uabi::wire {

// ------------------------------------------------ values of <verbs.h>
enum QpType : std::uint32_t { kQptRc = 2, kQptUc = 3, kQptUd = 4, kQptXrcSend = 9, kQptXrcRecv = 10 };
enum QpState : std::uint32_t { kReset = 0, kInit = 1, kRtr = 2, kRts = 3, kErr = 6 };
enum WrOp : std::uint32_t {
	kWrWrite = 0,
	kWrWriteImm = 1,
	kWrSend = 2,
	kWrSendImm = 3,
	kWrRead = 4,
	kWrCmpSwap = 5,
	kWrFetchAdd = 6,
	kWrLocalInv = 7,	// SendWr::invalidate_rkey, executed by SendWr::local
	kWrBindMw = 8,		// executed by SendWr::local
	kWrSendInv = 9,		// SendWr::invalidate_rkey, the responder's window
};
enum WcStatus : std::uint32_t {
	kWcOk = 0,
	kWcLocLenErr = 1,
	kWcLocQpOpErr = 2,
	kWcLocProtErr = 4,
	kWcFlushErr = 5,
	kWcMwBindErr = 6,
	kWcRemInvReqErr = 9,
	kWcRemAccessErr = 10,
	kWcRemOpErr = 11,
	kWcRetryExcErr = 12,
	kWcRnrRetryExcErr = 13,
};
enum WcOp : std::uint32_t {
	kWcSend = 0,
	kWcWrite = 1,
	kWcRead = 2,
	kWcCmpSwap = 3,
	kWcFetchAdd = 4,
	kWcBindMw = 5,
	kWcLocalInv = 6,
	kWcRecv = 128,
	kWcRecvWriteImm = 129,
};
enum : std::uint32_t {
	kAccLocalWrite = 1u << 0,
	kAccRemoteWrite = 1u << 1,
	kAccRemoteRead = 1u << 2,
	kAccRemoteAtomic = 1u << 3,
	kWcFlagGrh = 1u << 0,
	kWcFlagImm = 1u << 1,
	kWcFlagInv = 1u << 3,	// Completion::imm holds the invalidated rkey (host order)
	kSendFlagFence = 1u << 0,
	kSendFlagSignaled = 1u << 1,
	kSendFlagSolicited = 1u << 2,
};

struct Sge {
	std::uint64_t addr = 0;
	std::uint32_t length = 0;
	std::uint32_t lkey = 0;
};

// A registered region as the engine needs it: keys name it, iova is what
// peers address, base is where iova lives in this process.  A region of
// another process (an XRC SRQ's owner, docs/wire.md "XRC") has no base:
// iova lives at @addr of process @owner, reached through Memory's
// write(), read() and atomic().
struct Region {
	std::uint64_t iova = 0;
	std::uint64_t length = 0;
	std::uint8_t *base = nullptr;
	std::uint32_t access = 0;
	std::uint32_t pd = 0;
	// A memory window bound to an MR (1 or 2: its type; 0: an MR).  A
	// window is remote access only; a type 2 one through @qpn only.
	std::uint32_t window = 0;
	std::uint32_t qpn = 0;
	std::int32_t owner = 0;		// base nullptr: whose memory
	std::uint64_t addr = 0;		// base nullptr: iova's address there
};

class Memory {
public:
	virtual ~Memory() = default;
	// false: no such key.
	virtual bool lookup(std::uint32_t key, Region &out) = 0;
	// Another process's region (Region::base nullptr): @n bytes at its
	// address @at.  false: not reachable (the process is gone).
	virtual bool write(const Region &, std::uint64_t at, const std::uint8_t *src, std::size_t n)
	{
		(void)at, (void)src, (void)n;
		return false;
	}
	virtual bool read(const Region &, std::uint64_t at, std::uint8_t *dst, std::size_t n)
	{
		(void)at, (void)dst, (void)n;
		return false;
	}
	// The 8 aligned bytes at @at: compare-and-swap (@cmp_swap) or
	// fetch-and-add, @orig the value before.
	virtual bool atomic(const Region &, std::uint64_t at, bool cmp_swap, std::uint64_t compare,
			    std::uint64_t swap_add, std::uint64_t &orig)
	{
		(void)at, (void)cmp_swap, (void)compare, (void)swap_add, (void)orig;
		return false;
	}
};

struct Completion {
	std::uint64_t wr_id = 0;
	std::uint32_t status = kWcOk;
	std::uint32_t opcode = kWcSend;
	std::uint32_t byte_len = 0;
	std::uint32_t imm = 0;		// network order, as ibv_wc
	std::uint32_t flags = 0;	// kWcFlag*
	std::uint32_t qpn = 0;
	std::uint32_t src_qp = 0;
	std::uint32_t srqn = 0;		// XRC receive: the SRQ whose WQE it was
};
using CqSink = std::function<void(const Completion &)>;

// Where a peer is: its address and UDP port (4791 on a real network).
struct PeerAddr {
	sockaddr_storage ss{};
	socklen_t len = 0;
	// The GRH's traffic class its datagrams leave with: the IPv4 TOS or
	// IPv6 traffic class of their IP header, as rxe sends the AV's.
	std::uint8_t tclass = 0;
	static PeerAddr from(const sockaddr *sa, socklen_t len);
	// Where GID @gid (IPv6, or IPv4-mapped) is at UDP port @port; a
	// link-local IPv6 address on interface @scope.
	static PeerAddr from_gid(const std::uint8_t *gid, std::uint16_t port, unsigned scope);
	bool v6() const { return ss.ss_family == AF_INET6; }
	// The same IP address (family and address; ports are not compared).
	bool same_ip(const PeerAddr &o) const;
};

// One datagram from @fd to @to (@gso_seg: segments of that size,
// UDP_SEGMENT), with @to's traffic class in its IP header when it has one
// (IP_TOS or IPV6_TCLASS for this datagram alone: the socket carries
// every QP's); MSG_DONTWAIT.  sendto()'s result.
ssize_t send_datagram(int fd, const void *buf, std::size_t len, const PeerAddr &to,
		      std::uint16_t gso_seg = 0);

struct SendWr {
	std::uint64_t wr_id = 0;
	std::uint32_t opcode = kWrSend;
	std::uint32_t flags = 0;
	std::uint32_t imm = 0;			// network order
	std::vector<Sge> sges;
	// IBV_SEND_INLINE: the bytes themselves (sges then unused, no key
	// checked); the caller may reuse its buffers once post_send returns.
	std::vector<std::uint8_t> inline_data;
	bool is_inline = false;
	std::uint64_t remote_addr = 0;
	std::uint32_t rkey = 0;
	std::uint64_t compare_add = 0;
	std::uint64_t swap = 0;
	// UD
	PeerAddr ud_dest;
	// The address it leaves from (the AH's source GID; len 0: as
	// QpAttr::src).
	PeerAddr ud_src;
	std::uint32_t ud_qpn = 0;
	std::uint32_t ud_qkey = 0;
	// XRC send: the SRQ at the target (the XRCETH)
	std::uint32_t xrc_srqn = 0;
	// SEND_WITH_INV: the key the responder invalidates (the IETH);
	// LOCAL_INV: the key (for the caller's @local).
	std::uint32_t invalidate_rkey = 0;
	// BIND_MW and LOCAL_INV: no packet; what executing them means (the
	// window's owner does it), run once every earlier work request of
	// the QP has completed.  Returns the completion's status.
	std::function<std::uint32_t()> local;
};

// What ibv_modify_qp gives the transport.
struct QpAttr {
	std::uint32_t state = kReset;
	std::uint32_t pd = 0;
	std::uint32_t access = 0;		// qp_access_flags
	std::uint32_t qkey = 0;			// UD
	PeerAddr dest;				// RC/UC: from the AV's GID
	// The address this QP sends from: the AV's source GID (its port is
	// not used).  One of the endpoint's (Endpoint::add_source()); len 0,
	// or an address the endpoint has no socket at: the endpoint's first
	// address of the destination's family.
	PeerAddr src;
	std::uint32_t dest_qpn = 0;
	std::uint32_t rq_psn = 0;
	std::uint32_t sq_psn = 0;
	std::uint32_t path_mtu = 3;		// IBV_MTU_1024
	std::uint8_t timeout = 14;		// 4.096 us << timeout; 0: none
	std::uint8_t retry_cnt = 7;
	std::uint8_t rnr_retry = 7;		// 7: forever
	std::uint8_t min_rnr_timer = 12;
	std::uint8_t max_rd_atomic = 16;	// outstanding READ/atomic requests
};

// Packets the receiver dropped, by reason (docs/wire.md, "Counters").
struct Counters {
	std::atomic<std::uint64_t> rx_packets{0};
	std::atomic<std::uint64_t> tx_packets{0};
	std::atomic<std::uint64_t> rx_malformed{0};	// parse() refused
	std::atomic<std::uint64_t> rx_icrc{0};
	std::atomic<std::uint64_t> rx_no_qp{0};		// unknown destination QP
	std::atomic<std::uint64_t> rx_bad_state{0};	// QP not ready to receive
	std::atomic<std::uint64_t> rx_bad_qkey{0};
	std::atomic<std::uint64_t> rx_bad_pkey{0};
	std::atomic<std::uint64_t> rx_out_of_seq{0};	// NAKed or dropped (UC)
	std::atomic<std::uint64_t> rx_duplicate{0};
	std::atomic<std::uint64_t> rx_no_wqe{0};	// RNR NAKs sent, UD drops
	std::atomic<std::uint64_t> rx_access{0};	// key, bounds or access refused
	std::atomic<std::uint64_t> retransmits{0};
	std::atomic<std::uint64_t> timeouts{0};
	std::atomic<std::uint64_t> rnr_naks{0};		// received
	// QP1 with a GSI sink (Endpoint::set_gsi_sink()): MADs handed on,
	// and datagrams for QP1 that were no whole UD SEND to the GSI.
	std::atomic<std::uint64_t> rx_gsi{0};
	std::atomic<std::uint64_t> rx_gsi_refused{0};
};

class Endpoint;

class Qp {
public:
	~Qp();
	std::uint32_t qpn() const { return qpn_; }
	std::uint32_t type() const { return type_; }
	std::uint32_t state() const;
	// The state and connection attributes of @a (all of them; the verbs
	// layer keeps the rest).  0 or EINVAL.
	int modify(const QpAttr &a);
	// 0, EINVAL (bad request for the type/state), ENOMEM (queue full).
	int post_send(const SendWr &wr);
	int post_recv(std::uint64_t wr_id, const std::vector<Sge> &sges);
	// ibv_qp_init_attr.sq_sig_all.
	void set_sq_sig_all(bool on) { sq_sig_all_ = on; }
	// A QP on a shared receive queue: WQEs come from @src when the QP
	// has none of its own (1: one was taken, 0: none there, -1: gone);
	// post_recv() is then refused.  Set before the QP is used.
	// With @own (the QP's own receive queue kept elsewhere, not an SRQ)
	// its WQEs are flushed when the QP enters ERR.
	using RecvSource = std::function<int(std::uint64_t &wr_id, std::vector<Sge> &sges)>;
	void set_recv_source(RecvSource src, bool own = false)
	{
		src_ = std::move(src);
		src_own_ = own;
	}
	// An XRC receive QP (or OFED's XRC QP, which is an XRC send QP that
	// also receives): the SRQ an XRCETH names, if it is one this QP
	// may fill (of its XRC domain): its PD in @pd and, with @take, its
	// oldest WQE.  1: found (and a WQE taken, with @take), 0: found and
	// empty, -1: no such SRQ for this QP.  Set before the QP is used.
	using XrcSource = std::function<int(std::uint32_t srqn, bool take, std::uint32_t &pd, std::uint64_t &wr_id,
					    std::vector<Sge> &sges)>;
	void set_xrc_source(XrcSource src) { xrc_src_ = std::move(src); }
	// Told when the QP enters ERR by itself, with the affiliated event it
	// owes (enum ibv_event_type: 2 invalid request, 3 access violation at
	// the responder; 0 none: the requester's error is its completion).
	// Called with the QP's lock held.  Set before the QP is used.
	using ErrorHook = std::function<void(std::uint32_t event)>;
	void set_error_hook(ErrorHook h) { err_hook_ = std::move(h); }
	// A SEND with invalidate arrived: invalidate @rkey, a type 2 window
	// bound to this QP (false: no such window; the request is then an
	// invalid request).  Called with the QP's lock held.  Set before the
	// QP is used; without it every SEND with invalidate is refused.
	using Invalidate = std::function<bool(std::uint32_t rkey)>;
	void set_invalidate(Invalidate f) { inv_ = std::move(f); }
	// IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: this QP, attached to a group,
	// gets no copy of what it sent to the group itself.
	void set_block_self_mcast(bool on) { block_self_mc_ = on; }
	// An XRC receive QP that processes of its domain take turns to serve
	// (docs/wire.md, "XRC"), keeping its responder state where all of
	// them see it.  Before each request @adopt may give the QP what
	// another process set or left: new attributes (returns 1 or 3, @a
	// filled) and, when this process takes over, the expected PSN and
	// MSN at the last message boundary (returns 2 or 3, @epsn and @msn
	// filled); 0: nothing changed.  After a request that ended at a
	// message boundary, @save records the expected PSN and MSN.  Both
	// run with the QP's lock held.  Set before the QP is used.
	struct Share {
		std::function<int(QpAttr &a, std::uint32_t &epsn, std::uint32_t &msn)> adopt;
		std::function<void(std::uint32_t epsn, std::uint32_t msn)> save;
	};
	void set_share(Share s);

private:
	friend class Endpoint;
	struct SendQe;
	struct RecvQe {
		std::uint64_t wr_id;
		std::vector<Sge> sges;
	};
	Qp(Endpoint &ep, std::uint32_t qpn, std::uint32_t type, Memory &mem, CqSink scq, CqSink rcq,
	   std::uint32_t max_send_wr, std::uint32_t max_recv_wr);

	// Requester (requester.cpp)
	bool local_sges_ok_locked(const std::vector<Sge> &sges, std::uint32_t need_access, std::uint64_t *total);
	void pump_locked(std::uint64_t now);
	void send_packet_locked(SendQe &q, std::uint64_t now);
	void send_rd_request_locked(SendQe &q);
	std::uint64_t arm_timer(std::uint64_t now) const;
	void on_response_locked(const Packet &p, std::uint64_t now);
	void ack_upto_locked(std::uint32_t psn);
	void rewind_locked(std::uint32_t psn);
	void complete_ready_locked();
	void deliver_send_locked(const SendQe &q, std::uint32_t status);
	void fail_front_locked(std::uint32_t status);
	void timers_locked(std::uint64_t now);
	std::uint64_t next_timer_locked() const;
	// Responder (responder.cpp)
	void on_request_locked(const Packet &p, const PeerAddr &from);
	void on_ud_locked(const Packet &p, const PeerAddr &from, const IpInfo &ip);
	// Scatters @data at offset @off of the SGE list; false: it does not fit.
	bool place_locked(const std::vector<Sge> &sges, std::uint64_t off, std::span<const std::uint8_t> data);
	// Where @len bytes at @va of @rkey are, checked: in this process
	// (@t.p), or in another one (@t.p nullptr, @t.r and @t.at set).
	struct Target {
		std::uint8_t *p = nullptr;
		Region r;
		std::uint64_t at = 0;
	};
	bool remote_locked(std::uint32_t rkey, std::uint64_t va, std::uint64_t len, std::uint32_t access,
			   Target &t);
	int modify_locked(const QpAttr &a);
	void share_adopt_locked();
	bool respond_read_locked(const Packet &p);
	bool respond_atomic_locked(const Packet &p, bool duplicate);
	void send_ack_locked(std::uint8_t syndrome, std::uint32_t psn, const PeerAddr &to);
	void nak_locked(std::uint8_t code, std::uint32_t psn);
	void enter_error_locked(std::uint32_t event = 0);
	void flush_locked();


	Endpoint &ep_;
	std::uint32_t qpn_;
	std::uint32_t type_;
	Memory &mem_;
	CqSink scq_, rcq_;
	std::uint32_t max_send_wr_, max_recv_wr_;
	mutable std::mutex lock_;
	QpAttr attr_;
	// requester
	std::deque<std::unique_ptr<SendQe>> sq_;
	std::uint32_t next_psn_ = 0;		// next PSN to assign
	std::uint32_t una_psn_ = 0;		// oldest unacknowledged
	std::uint32_t sent_psn_ = 0;		// one past the highest PSN sent
	bool sq_sig_all_ = false;
	std::size_t send_idx_ = 0;		// first sq_ entry with packets to (re)send
	std::uint64_t timer_ns_ = 0;		// retransmission deadline, 0: none
	std::uint64_t rnr_wait_ns_ = 0;		// sending held until then
	std::uint32_t retries_left_ = 0;
	std::uint32_t rnr_left_ = 0;
	// responder
	std::deque<RecvQe> rq_;
	RecvSource src_;
	bool src_own_ = false;
	// Whether a receive WQE is at rq_'s front (one taken from src_, or
	// from the XRC SRQ of the request at hand, if need be).
	bool have_wqe_locked();
	// RC and both XRC types: PSNs, ACKs, retransmission.
	bool reliable() const { return type_ == kQptRc || type_ == kQptXrcSend || type_ == kQptXrcRecv; }
	Transport transport() const
	{
		return type_ == kQptUc ? kUc : type_ == kQptUd ? kUd : type_ == kQptRc ? kRc : kXrc;
	}
	// The PD that keys must belong to: the QP's (its own requests), or
	// for a request it serves as an XRC target (a receive QP, or OFED's
	// XRC QP that is both ends) the PD of the SRQ the request names.
	std::uint32_t pd_locked() const { return type_ == kQptXrcRecv ? xrc_pd_ : attr_.pd; }
	std::uint32_t responder_pd_locked() const { return xrc_src_ ? xrc_pd_ : attr_.pd; }
	XrcSource xrc_src_;
	ErrorHook err_hook_;
	Invalidate inv_;
	bool block_self_mc_ = false;
	std::uint32_t xrc_srqn_ = 0, xrc_pd_ = 0;	// of the request at hand
	std::uint32_t epsn_ = 0;
	std::uint32_t msn_ = 0;
	bool nak_sent_ = false;
	bool ack_due_ = false;
	PeerAddr ack_to_;
	// Receive completions of this batch: delivered after its ACKs went
	// out, so a peer's requester is not kept waiting for an ACK behind
	// the burst an application answers a message with.
	std::vector<Completion> rx_done_;
	struct InMsg {
		bool active = false;
		bool is_send = false;
		RecvQe wqe;
		std::uint64_t off = 0;
		Target dst;			// WRITE: where the next byte lands
		std::uint64_t left = 0;		// WRITE: bytes the RETH announced still to come
		std::uint64_t total = 0;	// WRITE: the RETH's length
		bool drop = false;		// UC: the rest of this message is dropped
	} in_;
	struct SavedAtomic {
		std::uint32_t psn;
		std::uint64_t orig;
		bool valid;
	};
	SavedAtomic atomics_[16] = {};
	std::uint32_t atomic_next_ = 0;
	Share share_;
};

// What precedes each datagram on a relay socket: the addresses and UDP
// ports it was received with (the ICRC covers them).
struct RelayHdr {
	std::uint8_t v6;	// 0: IPv4, in the first 4 bytes of src/dst
	std::uint8_t reserved[3];
	std::uint16_t src_port; // host order
	std::uint16_t dst_port;
	std::uint8_t src[16];
	std::uint8_t dst[16];
};
static_assert(sizeof(RelayHdr) == 40);

class Endpoint {
public:
	// Binds a UDP socket to @local (its port: 4791 on a real network, any
	// for tests).  nullptr and errno on failure.
	static std::unique_ptr<Endpoint> open(const PeerAddr &local);
	// Receiving through another owner of the port (uabid, or the kernel
	// module: docs/wire.md "Who receives"): datagrams come from
	// @relay_fd, each behind a RelayHdr — a datagram socket (uabid's),
	// or a file that gives one per read() (the module's); this endpoint
	// sends from a socket bound to @local (port 0: any).  With @steered_fd
	// (>= 0), a UDP socket uabid made in the port's reuseport group,
	// datagrams of the steered QPs come on it directly and it is the one
	// sent from; the relay brings the rest.  Takes both fds over, also on
	// failure.
	static std::unique_ptr<Endpoint> open_relayed(const PeerAddr &local, int relay_fd, int steered_fd = -1);
	~Endpoint();
	// Another address of the device to send from (docs/wire.md, "Every
	// address"): a socket bound to @local, from which go the datagrams of
	// QPs whose QpAttr::src (or SendWr::ud_src) is that address, and
	// those to peers of its family when no address of that family was
	// added before (nor is the endpoint's own).  Each packet's ICRC covers
	// the address it leaves from.  Relayed, the socket only sends (port
	// 0: any) and what comes back arrives through the relay; not relayed
	// (the in-process host), it is bound to @local's port and received
	// from as the endpoint's own socket is.  Any time, from any thread;
	// an address the endpoint already has is 0 at once.  0 or errno
	// (ENOSPC: kMaxSources already).
	// @polled false (not relayed only): pollers leave the socket to the
	// receive thread, which always reads it — an address only the CM
	// answers at costs a poll nothing; a later add_source() of it with
	// @polled makes it a QP's like any other.
	int add_source(const PeerAddr &local, bool polled = true);
	static constexpr unsigned kMaxSources = 16;
	// The GSI (QP1) of the in-process host's device (docs/cm.md, "Across
	// hosts"): a datagram for QP1 that is a whole UD SEND to the GSI (its
	// ICRC right, the GSI's Q_Key, a MAD's worth of payload) goes to
	// @sink with its source and destination GIDs (IPv6, or IPv4-mapped)
	// and the MAD's kMadBytes; anything else for QP1 is counted
	// (rx_gsi_refused) and dropped.  Without a sink QP1 is no QP of ours.
	// The sink runs in the receiving thread with the endpoint's QP lock
	// held: it must not reach this endpoint's QPs (sending through
	// send_gsi() is fine).  Setting it (nullptr: none) waits for a call
	// in flight.
	using GsiSink = std::function<void(const std::uint8_t *sgid, const std::uint8_t *dgid,
					   std::span<const std::uint8_t> mad)>;
	void set_gsi_sink(GsiSink sink);
	// One MAD from QP1 at @from (an address of the device, at the
	// endpoint's port: its socket is made, for the receive thread only,
	// if it has none yet) to QP1 at @to, as a UD SEND with the GSI's
	// Q_Key.  0, or EINVAL (not kMadBytes, families differ) or
	// add_source()'s errno; a datagram the socket refuses is lost, as on
	// a wire.
	int send_gsi(const PeerAddr &from, const PeerAddr &to, std::span<const std::uint8_t> mad);
	static constexpr std::size_t kMadBytes = kGsiMadBytes;
	// The addresses add_source() bound, in order (with their ports).
	std::vector<PeerAddr> sources() const;
	const PeerAddr &local() const { return local_; }
	Counters &counters() { return counters_; }

	std::unique_ptr<Qp> create_qp(std::uint32_t qpn, std::uint32_t type, Memory &mem, CqSink scq,
				      CqSink rcq, std::uint32_t max_send_wr = 256,
				      std::uint32_t max_recv_wr = 256);
	// Tests: every datagram this endpoint sends passes @f first, which
	// sends it (the default) or drops, repeats or holds it.
	using TxHook = std::function<void(const std::uint8_t *buf, std::size_t len, const PeerAddr &to,
					  const std::function<void(const std::uint8_t *, std::size_t)> &send)>;
	void set_tx_hook(TxHook h);
	// Loss, reordering and duplicates as `tc netem` makes them (the
	// UABI_WIRE_NETEM variable's syntax, docs/wire.md).
	void impair(const char *spec);
	// UD multicast (docs/wire.md, "UD multicast"): QP @qpn receives the
	// datagrams sent to the IP group @mgid names (::ffff:224.0.0.0/100:
	// that IPv4 group; ff00::/8: that IPv6 group; of the endpoint's
	// family) at UDP port @port, each attached QP its own copy.  The
	// first QP of a group joins it (a socket bound to the group and port
	// that joined it on the endpoint's interface), the last one to leave
	// leaves it.  0, EINVAL (no multicast GID of the endpoint's family),
	// or the errno of the join; attaching twice is one attachment.
	int attach_mcast(const std::uint8_t mgid[16], std::uint16_t port, std::uint32_t qpn);
	// 0, or ENOENT: @qpn was not attached to @mgid.
	int detach_mcast(const std::uint8_t mgid[16], std::uint32_t qpn);
	// Tests and the fuzzer: handles @pkt as if the socket had received
	// it from @from (with the ICRC made right first when @fix_icrc), in
	// the caller's thread, ACKs included.
	void inject(std::span<std::uint8_t> pkt, const PeerAddr &from, bool fix_icrc);

	// The caller's thread receives what the socket (and the relay) hold,
	// if no other thread is receiving: a process that polls its CQ does
	// the receive thread's work itself, and the receive thread leaves the
	// socket to it while it keeps polling (docs/wire.md, "Who does the
	// work").  True if anything came.
	bool progress();
	// A consumer is about to sleep (ibv_req_notify_cq): the receive
	// thread watches the socket again now.
	void consumer_sleeps();

	// While a Batch lives, the packets this thread sends through the
	// endpoint are held and go out when the outermost Batch ends: a run
	// of packets to one peer, all of one size but the last, is one
	// sendmsg() with UDP_SEGMENT (docs/wire.md, "Sending in batches").
	class Batch {
	public:
		explicit Batch(Endpoint &ep);
		~Batch();
		Batch(const Batch &) = delete;
		Batch &operator=(const Batch &) = delete;
	};
	struct TxRun;	// what a thread holds (endpoint.cpp)

private:
	friend class Qp;
	void flush_run(TxRun &r);
	bool transmit_batched(const Packet &hdr, const std::vector<std::span<const std::uint8_t>> &parts,
			      std::size_t bytes, const PeerAddr &to, int src);
	Endpoint() = default;
	static std::unique_ptr<Endpoint> open_impl(const PeerAddr &local, int relay_fd, int steered_fd,
						   bool relay_reads = false);
	void run();
	// The caller holds rx_lock_; datagrams taken.  @poller: an
	// application thread receives (progress()): ACKs are held.
	int receive_socket(bool poller = false);
	int receive_socket(int fd, const PeerAddr &local, bool poller);
	int receive_relayed(bool poller = false);
	void deliver(std::span<const std::uint8_t> pkt, const PeerAddr &from, const IpInfo &ip);
	void deliver_gsi(const Packet &p, const IpInfo &ip);
	// UD multicast (mcast.cpp).
	void deliver_mcast(const Packet &p, const PeerAddr &from, const IpInfo &ip);
	void receive_group(int fd);
	void mcast_send_setup(int fd, const PeerAddr &local);
	// @from is one of this endpoint's sockets (address and port).
	bool sent_by_us(const PeerAddr &from) const;
	void detach_all_mcast(std::uint32_t qpn);
	// The groups' sockets to poll (closing those no longer used first).
	void group_fds(std::vector<int> &out);
	struct Group {
		std::uint8_t ip[16] = {};	// IPv4: the first four bytes
		int fd = -1;
		std::vector<std::uint32_t> qpns;
	};
	std::mutex mc_lock_;		// after qps_lock_
	std::vector<Group> groups_;
	std::vector<int> dead_fds_;	// left groups: closed by the receive thread
	void timers();
	// ACK coalescing: one ACK per QP for what a batch brought, then the
	// batch's receive completions.  @hold (a poller): the ACKs stay due
	// and leave with the QP's next send, or at the next turn of whoever
	// receives (send_held_acks()) — docs/wire.md, "Held ACKs".
	void flush_acks(bool hold = false);
public:
	// Sends the ACKs pollers held (also at exit, for every endpoint).
	void send_held_acks();
	pid_t owner() const { return owner_; }
private:
	// Builds and sends one packet of @qp to @to, from @from (a QP's
	// source address: source_of()).
	void transmit(const Packet &hdr, std::span<const std::uint8_t> payload, const PeerAddr &to,
		      const PeerAddr *from = nullptr);
	void transmit_gather(const Packet &hdr, const std::vector<std::span<const std::uint8_t>> &parts,
			     std::size_t bytes, const PeerAddr &to, const PeerAddr *from = nullptr);
	// Which socket a datagram to @to leaves from: -1 the endpoint's own,
	// else the index of an add_source() one.  @from: the QP's source
	// (nullptr or len 0: none chosen).
	int source_of(const PeerAddr *from, const PeerAddr &to) const;
	IpInfo ip_to(const PeerAddr &to, int src) const;
	int fd_of(int src) const { return src < 0 ? fd_ : srcs_[src].fd; }
	void register_qp(Qp *qp);
	void unregister_qp(Qp *qp);
	void wake();
	// A QP armed a timer for @deadline: the receive thread is woken if it
	// would sleep past it (not on every send, docs/wire.md).
	void timer_armed(std::uint64_t deadline);

	int fd_ = -1;
	// add_source()'s sockets: filled in order, published by nsrc_
	// (written under src_lock_ only, read without it).
	struct Source {
		PeerAddr local;
		int fd = -1;
		std::atomic<bool> polled{true};	// pollers read it too (add_source())
	};
	Source srcs_[kMaxSources];
	std::atomic<unsigned> nsrc_{0};
	std::mutex src_lock_;
	int relay_fd_ = -1; // open_relayed(): where datagrams come from
	bool receive_fd_ = true; // datagrams come on fd_ too (not relayed, or steered)
	bool relay_reads_ = false; // relay_fd_ is no socket: read() it
	int wake_fd_ = -1;
	PeerAddr local_;
	Counters counters_;
	std::mutex qps_lock_;
	std::map<std::uint32_t, Qp *> qps_;
	GsiSink gsi_sink_;			// under qps_lock_
	std::atomic<std::uint32_t> gsi_psn_{0};	// of QP1's sends
	std::mutex tx_lock_;
	TxHook tx_hook_;
	std::atomic<bool> hooked_{false};	// tx_hook_ is set: no batches
	std::atomic<bool> gso_{false};		// UDP_SEGMENT works on fd_
	std::mutex rx_lock_;			// one thread receives at a time, in order
	std::atomic<std::uint64_t> polled_ns_{0};	// last progress() by a poller; 0: none
	unsigned relay_turn_ = 0;			// progress(), under rx_lock_
	std::atomic<std::uint64_t> wake_by_ns_{0};	// the receive thread wakes by then; 0: deciding
	bool gro_ = false;			// UDP_GRO is on for fd_
	bool hold_acks_ = true;			// pollers hold ACKs (UABI_WIRE_HOLD_ACKS=0: not)
	std::atomic<bool> acks_held_{false};	// a poller left ACKs due
	std::atomic<int> shared_qps_{0};	// QPs with a Qp::Share
	bool live_ = false;			// in the list send_all_held_acks() walks at exit
	pid_t owner_ = 0;			// the process that opened it
	std::thread thread_;
	std::atomic<bool> stop_{false};
	// UABI_WIRE_TRACE=FILE: one line per packet in and out (debugging).
	std::FILE *trace_ = nullptr;
	void trace(const char *dir, const Packet &p, std::size_t payload);
};

std::uint64_t now_ns();

} // namespace uabi::wire

#endif // UABI_WIRE_ENGINE_HPP
