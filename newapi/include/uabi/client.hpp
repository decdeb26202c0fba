// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Typed access to every object and method of <rdma/uabi.h>.  Each call
// builds exactly one command; Chain puts several into one message.
#ifndef UABI_CLIENT_HPP
#define UABI_CLIENT_HPP

#include <uabi/message.hpp>
#include <uabi/transport.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace uabi {

// Device methods act on the context's device; the header handle is unused.
inline constexpr Handle kDeviceHandle = 0;

using Gid = std::array<std::uint8_t, 16>;

struct DeviceInfo {
	uabi_device_attr attr;
	std::string name;
};

struct MrInfo {
	Handle handle;
	std::uint32_t lkey;
	std::uint32_t rkey;
};

struct MwInfo {
	Handle handle;
	std::uint32_t rkey;
};

struct CqInfo {
	Handle handle;
	std::uint32_t cqe;
	std::uint32_t cqn;
};

struct EvqInfo {
	Handle handle;
	int fd; // pollable; owned by the object, closed when it is destroyed
};

struct QpInfo {
	Handle handle;
	uabi_qp_resp resp;
};

struct QpQuery {
	uabi_qp_attr attr;
	uabi_qp_init init;
};

struct SrqInfo {
	Handle handle;
	uabi_srq_resp resp;
};

struct CqCreate {
	std::uint32_t cqe = 1;
	std::optional<Ref> channel{};
	std::uint32_t comp_vector = 0;
	std::uint64_t user_handle = 0;
};

// Absent members send no attribute (an XRC_RECV QP has no PD or CQs).
struct QpCreate {
	std::optional<Ref> pd{};
	std::optional<Ref> send_cq{};
	std::optional<Ref> recv_cq{};
	std::optional<Ref> srq{};
	std::optional<Ref> xrcd{};
	uabi_qp_init init{};
	std::uint64_t user_handle = 0;
	// Create-with-attributes: the QP is brought to attr->qp_state.
	std::optional<uabi_qp_attr> attr{};
	std::uint32_t attr_mask = 0;
};

struct SrqCreate {
	std::optional<Ref> pd{};
	std::optional<Ref> xrcd{}; // XRC SRQ
	std::optional<Ref> cq{};	 // XRC SRQ
	uabi_srq_init init{};
	std::uint64_t user_handle = 0;
};

class Context;

// UABI_METHOD_CALL on a core object (the driver's attributes say which
// method), or any method of a driver-namespace object (UABI_DRIVER_NS).
inline Command driver_command(std::uint16_t object, Ref target,
			      std::uint16_t method = UABI_METHOD_CALL)
{
	Command c(object, method);
	c.set_target(target);
	return c;
}

// Chain results: each is the chain reference of its command (usable as a
// Ref in later commands of the same chain) plus its output attributes.
struct PendingPd : ChainRef {};
struct PendingMr : ChainRef { OutAttr keys; };
struct PendingCq : ChainRef { OutAttr resp; };
struct PendingEvq : ChainRef { OutAttr fd; };
struct PendingQp : ChainRef { OutAttr resp; };
struct PendingSrq : ChainRef { OutAttr resp; };

// Several commands in one message, e.g.
//   Chain c(UABI_MSG_F_ALL_OR_NOTHING);
//   auto pd = c.alloc_pd();
//   auto cq = c.create_cq({.cqe = 16});
//   auto qp = c.create_qp({.pd = pd, .send_cq = cq, .recv_cq = cq, ...});
//   if (auto r = c.execute(ctx); !r) ...
//   Result<QpInfo> q = c.get(qp);
class Chain {
public:
	explicit Chain(std::uint32_t msg_flags = 0) : msg_(msg_flags) {}

	PendingPd alloc_pd();
	PendingMr reg_mr(Ref pd, const void *addr, std::uint64_t length,
			 std::uint32_t access, std::optional<std::uint64_t> iova = {});
	PendingCq create_cq(const CqCreate &c);
	PendingEvq create_comp_channel();
	PendingEvq create_async_event_queue();
	PendingQp create_qp(const QpCreate &c);
	PendingSrq create_srq(const SrqCreate &c);
	ChainRef create_ah(Ref pd, const uabi_ah_attr &attr);
	ChainRef open_xrcd(int fd, std::uint32_t oflags);
	ChainRef modify_qp(Ref qp, const uabi_qp_attr &attr, std::uint32_t mask);
	ChainRef destroy(std::uint16_t object, Ref target);
	ChainRef add(Command cmd); // anything else, e.g. a driver call

	Message &message() { return msg_; }
	const Message &message() const { return msg_; }
	Result<void> execute(Context &ctx);

	// After execute().  status() is the raw per-command result; handle()
	// and get() answer ECANCELED for a command that succeeded in an
	// ALL_OR_NOTHING chain that failed later (it was rolled back).
	CommandResult status(ChainRef r) const { return msg_.result(r.index); }
	Result<Handle> handle(ChainRef r) const;
	Result<MrInfo> get(const PendingMr &p) const;
	Result<CqInfo> get(const PendingCq &p) const;
	Result<EvqInfo> get(const PendingEvq &p) const;
	Result<QpInfo> get(const PendingQp &p) const;
	Result<SrqInfo> get(const PendingSrq &p) const;

private:
	int error_of(ChainRef r) const;
	Message msg_;
};

class Context {
public:
	explicit Context(std::unique_ptr<Transport> t) : t_(std::move(t)) {}
	// Backend from UABI_BACKEND (default auto).
	static Result<Context> open();
	static Result<Context> open(Backend b);
	// On device @device (0: uabi_sw0) of the backend UABI_BACKEND names.
	static Result<Context> open_device(unsigned device);
	// Another Context on the context @fd names (a duplicate of some
	// Context's context_fd(), maybe received from another process):
	// import_transport() (transport.hpp); takes @fd over on success.
	static Result<Context> import(int fd);
	// The fd that names this context (libibverbs' cmd_fd); owned by the
	// transport.  -1 and errno if the backend has none.
	int context_fd() { return t_->context_fd(); }

	Transport &transport() { return *t_; }

	// Chains and raw access.  execute() encodes m if needed, runs it and
	// returns its status; per-command results stay readable in m.
	Result<void> execute(Message &m);
	int execute_raw(std::span<std::byte> msg) { return t_->execute(msg); }
	// One command (no chain references); the message holds its outputs.
	Result<Message> call(Command cmd);
	// A driver method (see driver_command()); same as call().
	Result<Message> driver_call(Command cmd) { return call(std::move(cmd)); }

	// Device.
	Result<DeviceInfo> query_device();
	Result<uabi_port_attr> query_port(std::uint32_t port);
	Result<Gid> query_gid(std::uint32_t port, std::uint32_t index);
	Result<std::uint16_t> query_pkey(std::uint32_t port, std::uint32_t index);
	Result<std::vector<uabi_discovery_entry>> discover();
	Result<uabi_counters> counters();
	// Live objects (DEVICE / LIST_OBJECTS), by context and handle: this
	// context's, or with UABI_LIST_USER every context of this user's.
	Result<std::vector<uabi_object_info>> list_objects(std::uint32_t scope = UABI_LIST_CONTEXT);

	Result<Handle> alloc_pd();
	Result<void> dealloc_pd(Handle pd);
	// That @pd is a PD of this context (ENOENT: no such handle, EINVAL:
	// another type), for ibv_import_pd(3).
	Result<void> query_pd(Handle pd);

	// iova defaults to addr, as ibv_reg_mr.
	Result<MrInfo> reg_mr(Ref pd, const void *addr, std::uint64_t length,
			      std::uint32_t access,
			      std::optional<std::uint64_t> iova = {});
	// ibv_rereg_mr(3) in place (the keys stay): @flags UABI_MR_REREG_*;
	// @pd for _PD, @reg's translation and/or access for the others.
	Result<uabi_mr_keys> rereg_mr(Handle mr, std::uint32_t flags, std::optional<Ref> pd,
				      const uabi_mr_reg &reg);
	Result<void> dereg_mr(Handle mr);
	// The registration and keys of @mr (ibv_import_mr(3)).
	Result<std::pair<uabi_mr_reg, uabi_mr_keys>> query_mr(Handle mr);

	Result<CqInfo> create_cq(std::uint32_t cqe, std::optional<Ref> channel = {},
				 std::uint32_t comp_vector = 0,
				 std::uint64_t user_handle = 0);
	Result<CqInfo> create_cq(const CqCreate &c);
	Result<uabi_cq_resp> resize_cq(Handle cq, std::uint32_t cqe);
	Result<void> destroy_cq(Handle cq);

	Result<EvqInfo> create_comp_channel();
	Result<EvqInfo> create_async_event_queue();
	// EAGAIN when the queue is empty.
	Result<uabi_event> get_event(std::uint16_t object, Handle evq);
	Result<uabi_event> get_comp_event(Handle ch) { return get_event(UABI_OBJ_COMP_CHANNEL, ch); }
	Result<uabi_event> get_async_event(Handle q) { return get_event(UABI_OBJ_ASYNC_EVENT, q); }
	Result<void> destroy_comp_channel(Handle ch);
	Result<void> destroy_async_event_queue(Handle q);

	Result<QpInfo> create_qp(const QpCreate &c);
	Result<void> modify_qp(Handle qp, const uabi_qp_attr &attr, std::uint32_t mask);
	Result<QpQuery> query_qp(Handle qp, std::uint32_t mask = UABI_QP_ATTR_MASK_ALL);
	Result<void> destroy_qp(Handle qp);
	// ibv_attach_mcast(3) / ibv_detach_mcast(3) of a UD QP.
	Result<void> attach_mcast(Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid);
	Result<void> detach_mcast(Handle qp, const std::uint8_t (&gid)[16], std::uint16_t lid);

	Result<SrqInfo> create_srq(const SrqCreate &c);
	// mask: 1 = max_wr, 2 = srq_limit (IBV_SRQ_MAX_WR, IBV_SRQ_LIMIT).
	Result<void> modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask);
	Result<uabi_srq_attr> query_srq(Handle srq);
	Result<void> destroy_srq(Handle srq);

	Result<Handle> create_ah(Ref pd, const uabi_ah_attr &attr);
	Result<void> destroy_ah(Handle ah);

	// fd -1 opens a domain private to this context; oflags UABI_XRCD_O_*.
	Result<Handle> open_xrcd(int fd, std::uint32_t oflags);
	Result<void> close_xrcd(Handle xrcd);
	// qpn UABI_XRC_QPN_CREATE creates a receive QP (init required) and
	// is overwritten with its number.  Returns the registration handle.
	Result<Handle> register_xrc_rcv_qp(Handle xrcd, std::uint32_t &qpn,
					   std::optional<uabi_qp_init> init = {},
					   std::optional<std::uint64_t> user_handle = {});
	Result<void> unregister_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn);
	Result<void> modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
				       const uabi_qp_attr &attr, std::uint32_t mask);
	Result<uabi_qp_attr> query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn);

	// Memory windows (type UABI_MW_TYPE_1 or _2): an unbound window and
	// its first key.  bind_mw binds it through @qp to @mr's range (length
	// 0: unbinds a type 1 window; @mr may be absent then) and answers the
	// key, bind.rkey.  Work requests (BIND_MW) call it in their turn.
	Result<MwInfo> alloc_mw(Ref pd, std::uint32_t type);
	Result<std::uint32_t> bind_mw(Handle mw, std::optional<Ref> mr, Ref qp,
				      const uabi_mw_bind &bind);
	Result<void> dealloc_mw(Handle mw);

	Result<void> destroy(std::uint16_t object, Handle h);

private:
	Result<Handle> create(Command cmd);
	Result<void> simple(Command cmd);
	std::unique_ptr<Transport> t_;
};

} // namespace uabi

#endif // UABI_CLIENT_HPP
