// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The drop-in libibverbs.so.1: objects behind the verbs structs.  Control
// verbs become new-uAPI messages (uabi::Context); data verbs call the sw
// data path (providers/sw).  The structs the application sees are
// Debian's <infiniband/verbs.h> ones, each the first member of ours.
#ifndef UABI_VERBS_IMPL_HPP
#define UABI_VERBS_IMPL_HPP

#include <infiniband/verbs.h>

#include "control_path.hpp"

#include <uabi/client.hpp>
#include <uabi/sw/provider.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <map>
#include <set>
#include <new>
#include <vector>

#define UABI_EXPORT extern "C" __attribute__((visibility("default")))

namespace uabi::wire {
class Endpoint;
}

namespace uabi::verbs {

inline constexpr const char *kDeviceName = "uabi_sw0";

struct ContextImpl {
	explicit ContextImpl(std::unique_ptr<Control> c) : owner(std::move(c)), ctl(*owner) {}
	~ContextImpl(); // wire.cpp (WireCm)
	std::unique_ptr<Control> owner;
	Control &ctl; // the control path (new or write), control_path.hpp
	std::unique_ptr<sw::Device> dp;
	int async_fd = -1;
	bool inproc = false;
	// A RoCE device (docs/wire.md): its QPs use the wire provider.
	bool roce = false;
	unsigned ifindex = 0;	// its interface
	std::mutex wire_lock;
	std::shared_ptr<struct WireEndpoint> wire;	// wire.cpp, on first QP
	// Its engine (set once, lives with the context), and how many QPs of
	// this context may have packets on the wire (not peers by shared
	// memory): poll_cq then receives (wire_progress(), docs/wire.md).
	std::atomic<wire::Endpoint *> wire_ep{nullptr};
	std::atomic<int> wire_active{0};
	// The SRQs this context made (their slots): the only ones an XRC
	// receive QP of a RoCE device fills (wire.cpp).
	std::mutex srq_lock;
	std::set<std::uint32_t> own_srqs;
	// In-process, a RoCE device's endpoint carries the CM's MADs
	// (wire.cpp, wire_cm_open()); owned, and deleted first (~ContextImpl).
	struct WireCm *cm = nullptr;
	// On a RoCE device, the wire provider of each OFED registration of
	// an XRC receive QP (ibv_create/reg_xrc_rcv_qp; ofed_xrc.cpp), by
	// QPN: the context serves the QP while it holds one (docs/wire.md,
	// "XRC").  Last member: they go before the device and the control.
	std::mutex xrc_lock;
	// The wire QP serving each XRC receive QP this context holds, shared
	// by its holds (the OFED ones below, and VQp::dp of the upstream ones).
	std::map<std::uint32_t, std::weak_ptr<sw::QpProvider>> xrc_served;
	std::multimap<std::uint32_t, std::unique_ptr<sw::QpProvider>> xrc_regs;
};

// verbs_context must end with the ibv_context the application holds.
struct VContext {
	struct verbs_context vctx;
	ContextImpl *impl;
};

struct VCq {
	// Every CQ can be used as an extended one (ibv_create_cq_ex): its
	// struct starts with the same fields.
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;
	};
	struct ibv_wc cur;	// the completion start/next_poll stand on
	std::uint64_t cur_ts;	// and its time (read_completion_ts)
	sw::Cq *dp;
	std::uint32_t cqn;
	Handle channel;	// 0: none
	struct ibv_pd *pdom;	// the parent domain it was created on, if any
	// On a channel with direct events: the next CQ of the channel, and
	// the direct events of this CQ already returned (under its lock).
	VCq *next_direct;
	std::uint32_t direct_seen;
};

// A completion channel.  With direct events (docs/datapath.md,
// "Completion events") ch.fd is an epoll fd over the core's channel fd and
// an eventfd of our own that the peers' producers write; without, ch.fd is
// the core's fd.
struct VChannel {
	struct ibv_comp_channel ch;
	Handle handle; // 0 on the write path, which names a channel by its fd
	int core_fd;   // the core's channel fd
	int direct_fd; // -1: no direct events
	std::uint32_t gen;
	pthread_mutex_t lock; // the list and the CQs' direct_seen
	VCq *cqs;	       // CQs with direct events
};

struct VSrq {
	struct ibv_srq srq;
	sw::Srq *dp;
	std::uint32_t slot;
	std::uint32_t srq_num;	// XRC
	std::uint32_t type;
	Handle cq_handle;	// XRC
	bool ofed_layout;	// ibv_create_xrc_srq: OFED's XRC fields written
};

// A PD, or a parent domain (ibv_alloc_parent_domain(3), domains.cpp): the
// same PD (its handle) with a thread domain and the application's
// allocators, which a QP created on it uses for its send queue.
struct VPd {
	struct ibv_pd pd;
	struct ibv_pd *protection;	// a parent domain's PD; nullptr: a PD
	struct ibv_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
	void *pd_context;
	// A PD: its parent domains; a parent domain: its QPs and CQs
	// (__atomic builtins).
	std::uint32_t refs;
};

inline VPd *vpd(struct ibv_pd *p)
{
	return reinterpret_cast<VPd *>(p);
}

inline bool is_parent_domain(struct ibv_pd *p)
{
	return p && vpd(p)->protection;
}

// A QP or CQ created on @pd holds it (a parent domain cannot go first).
void pd_hold(struct ibv_pd *pd);
void pd_release(struct ibv_pd *pd);
// The send queue allocator of a QP created on @pd: the parent domain's
// (resource type UABI_SW_RES_TYPE_SQ), or empty (the provider's own).
sw::QueueAllocator queue_allocator(struct ibv_pd *pd);
// ibv_dealloc_pd(3) of a parent domain.
int dealloc_parent_domain(struct ibv_pd *pd);

struct VMr {
	struct ibv_mr mr;
	unsigned access;	// what ibv_mr does not keep (ibv_rereg_mr)
	std::uint64_t iova;
};

struct VAh {
	struct ibv_ah ah;
	sw::AddressHandle av;
};

struct VXrcd {
	struct ibv_xrcd xrcd;
	Handle handle;
};

// The new post-send API (ibv_wr_*): work requests built between
// wr_start() and wr_complete().
struct WrBuilder {
	std::vector<sw::SendWr> wrs;
	std::vector<std::vector<sw::Sge>> sges;	// per WR
	std::vector<std::vector<std::uint8_t>> inl;	// per WR
	std::vector<sw::AddressHandle> ahs;		// per WR
	std::size_t n = 0;
	int error = 0;
};

struct VQp {
	struct ibv_qp_ex qpx;	// starts with struct ibv_qp
	sw::QpProvider *dp;	// nullptr: XRC receive QP
	WrBuilder *wb;
	struct ibv_pd *pdom;	// the parent domain it was created on, if any
};

inline VContext *vctx_of(struct ibv_context *c)
{
	return reinterpret_cast<VContext *>(reinterpret_cast<char *>(c) -
					    offsetof(VContext, vctx.context));
}
inline ContextImpl *impl_of(struct ibv_context *c)
{
	return vctx_of(c)->impl;
}
inline VCq *vcq(struct ibv_cq *c) { return reinterpret_cast<VCq *>(c); }
inline VCq *vcq(struct ibv_cq_ex *c) { return reinterpret_cast<VCq *>(c); }
inline VQp *vqp(struct ibv_qp *q) { return reinterpret_cast<VQp *>(q); }
inline VQp *vqp(struct ibv_qp_ex *q) { return reinterpret_cast<VQp *>(q); }
inline VSrq *vsrq(struct ibv_srq *s) { return reinterpret_cast<VSrq *>(s); }
inline VAh *vah(struct ibv_ah *a) { return reinterpret_cast<VAh *>(a); }
inline VMr *vmr(struct ibv_mr *m) { return reinterpret_cast<VMr *>(m); }
inline VChannel *vch(struct ibv_comp_channel *c) { return reinterpret_cast<VChannel *>(c); }
inline VXrcd *vxrcd(struct ibv_xrcd *x) { return reinterpret_cast<VXrcd *>(x); }

// errno for pointer verbs: sets errno, returns nullptr.
template <class T = void>
T *fail_ptr(int err)
{
	errno = err ? err : EIO;
	return nullptr;
}

// Entry points must not let an exception out (allocation failure).
template <class F>
auto guard_int(F &&f) noexcept -> int
{
	try {
		return f();
	} catch (...) {
		return ENOMEM;
	}
}

template <class F>
auto guard_ptr(F &&f) noexcept -> decltype(f())
{
	try {
		return f();
	} catch (...) {
		errno = ENOMEM;
		return nullptr;
	}
}

// The provider's address handle of a verbs one (the verbs <-> uAPI
// conversions are compat/src/convert's).
sw::AddressHandle to_sw(const struct ibv_ah_attr &a);

// The ibv_cq_ex polling functions of a CQ made by ibv_create_cq_ex
// (data.cpp).
void install_cq_ex_ops(VCq *c, std::uint64_t wc_flags);

// Data-path ops installed in every context (data.cpp).
void install_data_ops(struct ibv_context *ctx);
void install_qp_ex_ops(VQp *q);
// Memory window work requests of @q call the control path (after its
// handle is set).
void install_mw_control(VQp *q, ContextImpl *impl);
// Blocks until fd is readable or timeout_ms passes, running the data
// path's deferred work meanwhile.
int wait_readable(ContextImpl *impl, int fd);

// ibv_create_srq / _ex and (ofed) OFED's ibv_create_xrc_srq (control.cpp).
struct ibv_srq *create_srq(struct ibv_context *ctx, struct ibv_pd *pd,
			   struct ibv_srq_init_attr_ex *a, bool ofed);

// The application set O_NONBLOCK on an event fd: ibv_get_cq_event(3) and
// ibv_get_async_event(3) then answer EAGAIN instead of waiting.
bool fd_nonblocking(int fd);

// Extended verbs of verbs_context (control.cpp).
void install_ex_ops(struct verbs_context *vctx);
// Its QP entries (control_qp.cpp).
void install_qp_context_ops(struct verbs_context *vctx);
// Thread and parent domains (domains.cpp).
void install_domain_ops(struct verbs_context *vctx);

// RoCE devices (wire.cpp, docs/wire.md): whether @impl's device is one
// (and its interface); a QP of one, on the wire provider (0 or an errno:
// EOPNOTSUPP for XRC, SRQs; EADDRINUSE: another process holds the port);
// what ibv_modify_qp changed, for the provider.
bool context_is_roce(ContextImpl *impl, unsigned *ifindex);
// In-process, a RoCE device's context: its endpoint, opened now, carries
// the in-process host's CM MADs (docs/cm.md, "Across hosts").
void wire_cm_open(struct ibv_context *ctx);
// poll_cq found nothing: receive what the context's wire endpoint holds
// (true if anything came); req_notify_cq: the receive thread takes the
// socket back.
bool wire_progress(ContextImpl *impl);
void wire_consumer_sleeps(ContextImpl *impl);
// Who owns SRQ @slot, as this process sees itself (getpid() and its pid
// namespace), in the SRQ's writable half: a process serving an XRC receive
// QP on the wire reaches the SRQ's buffers by it (wire.cpp).
void publish_srq_owner(sw::Device &dev, std::uint32_t slot);
int create_wire_qp(struct ibv_context *ctx, std::uint32_t qpn, std::uint32_t type, sw::Cq *scq,
		   sw::Cq *rcq, sw::Srq *srq, const sw::QpCaps &caps, sw::QpProvider **out);
sw::QpModify to_modify(const struct ibv_qp_attr &a, int mask, std::uint32_t state);

} // namespace uabi::verbs

#endif
