// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The two control paths of the drop-in libibverbs (docs/datapath.md,
// "Control paths").  Every control verb of compat/verbs calls one method of
// the interface Control; its implementation either builds the new-uAPI
// command (NewControl: uabi::Context, the default) or, with
// UABI_VERBS_PATH=write, writes the bytes rdma-core 44's ibv_cmd_* layer
// wrote in write mode (legacy::Encoder) through the legacy translator
// (legacy::Translator) to the same backend — the path an unmodified old
// stack would take (WriteControl).  Both return the new path's result
// types, so the verbs above them are one code.  A new control verb is one
// pure virtual here and one method in each implementation.
//
// What the write() ABI never carried stays on the new path in both modes,
// as it did in libibverbs (which read it from sysfs or a provider's private
// channel): GIDs, P_Keys, and the sw driver's own calls (arena map, CQ
// number lookup, notifications).
#ifndef UABI_VERBS_CONTROL_PATH_HPP
#define UABI_VERBS_CONTROL_PATH_HPP

#include <infiniband/verbs.h>

#include <uabi/client.hpp>

#include <cstdint>
#include <memory>
#include <mutex>

namespace uabi::legacy {
class Translator;
class Encoder;
} // namespace uabi::legacy

namespace uabi::verbs {

enum class ControlMode : std::uint8_t { New, Write };

// UABI_VERBS_PATH: unset, "" or "ioctl"/"new" → New; "write" → Write;
// anything else EINVAL.
Result<ControlMode> control_mode_from_env();

class Control
{
      public:
	// Opens the backend (UABI_BACKEND) and, on the write path, the legacy
	// context over it (GET_CONTEXT, which creates the async event queue).
	static Result<std::unique_ptr<Control>> open(ControlMode mode, unsigned device = 0);
	// On the context @fd names (ibv_import_device(3), Context::import):
	// no async event queue of its own (the context has one, its
	// opener's: async_queue().fd is -1).  Takes @fd over on success (and
	// closes it: the transport holds a duplicate); on failure it is left
	// alone.
	static Result<std::unique_ptr<Control>> import(ControlMode mode, int fd);
	virtual ~Control();
	Control(const Control &) = delete;
	Control &operator=(const Control &) = delete;

	virtual ControlMode mode() const noexcept = 0;
	// The new-path context: driver calls and what has no legacy command.
	Context &raw() noexcept { return *ctx_; }

	// Commands the legacy translator executed (0 on the new path).
	virtual std::uint64_t legacy_commands() const noexcept { return 0; }

	// The async event queue of this context (created by open()).
	const EvqInfo &async_queue() const noexcept { return async_; }
	// EAGAIN when empty.
	virtual Result<uabi_event> get_async_event() = 0;

	virtual Result<DeviceInfo> query_device() = 0;
	virtual Result<uabi_port_attr> query_port(std::uint32_t port) = 0;

	virtual Result<Handle> alloc_pd() = 0;
	virtual Result<void> dealloc_pd(Handle pd) = 0;

	virtual Result<MrInfo> reg_mr(Handle pd, const void *addr, std::uint64_t length,
				      std::uint32_t access, std::uint64_t iova) = 0;
	// In place, the keys stay (IBV_REREG_MR_* flags).
	virtual Result<uabi_mr_keys> rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
					      std::uint64_t length, std::uint64_t iova,
					      unsigned access) = 0;
	virtual Result<void> dereg_mr(Handle mr) = 0;

	virtual Result<MwInfo> alloc_mw(Handle pd, std::uint32_t type) = 0;
	virtual Result<void> dealloc_mw(Handle mw) = 0;
	// The write ABI never carried a bind (libibverbs' providers posted it
	// as a work request): the new path in both modes.  @mr 0: none (an
	// unbind).  Answers the window's key.
	Result<std::uint32_t> bind_mw(Handle mw, Handle mr, Handle qp, const uabi_mw_bind &b);

	virtual Result<EvqInfo> create_comp_channel() = 0;
	virtual Result<void> destroy_comp_channel(const EvqInfo &ch) = 0;
	// EAGAIN when empty; element is the CQ's user handle.
	virtual Result<uabi_event> get_comp_event(const EvqInfo &ch) = 0;

	virtual Result<CqInfo> create_cq(std::uint32_t cqe, const EvqInfo *channel,
					 std::uint32_t comp_vector, std::uint64_t user_handle) = 0;
	virtual Result<uabi_cq_resp> resize_cq(Handle cq, std::uint32_t cqe) = 0;
	virtual Result<void> destroy_cq(Handle cq) = 0;

	// type IBV_SRQT_BASIC (xrcd, cq unused) or IBV_SRQT_XRC.
	virtual Result<SrqInfo> create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
					   const uabi_srq_attr &attr,
					   std::uint64_t user_handle) = 0;
	virtual Result<void> modify_srq(Handle srq, const uabi_srq_attr &attr,
					std::uint32_t mask) = 0;
	virtual Result<uabi_srq_attr> query_srq(Handle srq) = 0;
	virtual Result<void> destroy_srq(Handle srq) = 0;

	// oflags: O_CREAT / O_EXCL as open(2).
	virtual Result<Handle> open_xrcd(int fd, int oflags) = 0;
	virtual Result<void> close_xrcd(Handle xrcd) = 0;

	// pd is the XRC domain's handle for an XRC_RECV QP (as in the write
	// ABI's pd_handle); send_cq/recv_cq/srq 0 = none.
	struct QpArgs {
		Handle pd = 0;
		Handle send_cq = 0;
		Handle recv_cq = 0;
		Handle srq = 0;
		std::uint32_t qp_type = IBV_QPT_RC;
		uabi_qp_cap cap{};
		bool sq_sig_all = false;
		std::uint64_t user_handle = 0;
		std::uint32_t create_flags = 0; // IBV_QP_CREATE_* (the _ex command)
		Handle xrcd = 0; // OFED's IBV_QPT_XRC (qp_type XRC_SEND): its domain
	};
	virtual Result<QpInfo> create_qp(const QpArgs &a) = 0;
	// ibv_open_qp: one more registration of an XRC receive QP.
	virtual Result<QpInfo> open_qp(Handle xrcd, std::uint32_t qpn,
				       std::uint64_t user_handle) = 0;
	virtual Result<void> modify_qp(Handle qp, const struct ibv_qp_attr &attr,
				       std::uint32_t mask) = 0;
	virtual Result<QpQuery> query_qp(Handle qp, std::uint32_t mask) = 0;
	virtual Result<void> destroy_qp(Handle qp) = 0;
	virtual Result<void> attach_mcast(Handle qp, const union ibv_gid &gid,
					  std::uint16_t lid) = 0;
	virtual Result<void> detach_mcast(Handle qp, const union ibv_gid &gid,
					  std::uint16_t lid) = 0;

	virtual Result<Handle> create_ah(Handle pd, const struct ibv_ah_attr &attr) = 0;
	virtual Result<void> destroy_ah(Handle ah) = 0;

	// The OFED 1.5 XRC verbs (ofed_xrc.cpp): on the write path, OFED's
	// XRC commands (37-44 of its dialect).  Receive QPs are named by
	// (domain, qpn); the context's registrations carry no user handle, so
	// their events come back OFED-style (IBV_XRC_QP_EVENT_FLAG, qpn).
	virtual Result<Handle> ofed_open_xrc_domain(int fd, int oflags) = 0;
	virtual Result<void> ofed_close_xrc_domain(Handle xrcd) = 0;
	virtual Result<SrqInfo> ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
						    const uabi_srq_attr &attr,
						    std::uint64_t user_handle) = 0;
	virtual Result<std::uint32_t> ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
							     bool sq_sig_all) = 0;
	virtual Result<void> ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
						    const struct ibv_qp_attr &attr,
						    std::uint32_t mask) = 0;
	virtual Result<QpQuery> ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
						      std::uint32_t mask) = 0;
	virtual Result<void> ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn) = 0;
	virtual Result<void> ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn) = 0;

      protected:
	Control() = default;
	// The new path's context; on the write path, the translator's.
	Context *ctx_ = nullptr;
	EvqInfo async_{};
};

// The new uAPI: one uabi::Context call per verb (control_new.cpp).
class NewControl final : public Control
{
      public:
	// Creates the context's async event queue.
	static Result<std::unique_ptr<Control>> open(Context ctx);
	// An imported context: none.
	static Result<std::unique_ptr<Control>> adopt(Context ctx);
	ControlMode mode() const noexcept override { return ControlMode::New; }

	Result<uabi_event> get_async_event() override;
	Result<DeviceInfo> query_device() override;
	Result<uabi_port_attr> query_port(std::uint32_t port) override;
	Result<Handle> alloc_pd() override;
	Result<void> dealloc_pd(Handle pd) override;
	Result<MrInfo> reg_mr(Handle pd, const void *addr, std::uint64_t length,
			      std::uint32_t access, std::uint64_t iova) override;
	Result<uabi_mr_keys> rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
				      std::uint64_t length, std::uint64_t iova,
				      unsigned access) override;
	Result<void> dereg_mr(Handle mr) override;
	Result<MwInfo> alloc_mw(Handle pd, std::uint32_t type) override;
	Result<void> dealloc_mw(Handle mw) override;
	Result<EvqInfo> create_comp_channel() override;
	Result<void> destroy_comp_channel(const EvqInfo &ch) override;
	Result<uabi_event> get_comp_event(const EvqInfo &ch) override;
	Result<CqInfo> create_cq(std::uint32_t cqe, const EvqInfo *channel,
				 std::uint32_t comp_vector, std::uint64_t user_handle) override;
	Result<uabi_cq_resp> resize_cq(Handle cq, std::uint32_t cqe) override;
	Result<void> destroy_cq(Handle cq) override;
	Result<SrqInfo> create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
				   const uabi_srq_attr &attr, std::uint64_t user_handle) override;
	Result<void> modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask) override;
	Result<uabi_srq_attr> query_srq(Handle srq) override;
	Result<void> destroy_srq(Handle srq) override;
	Result<Handle> open_xrcd(int fd, int oflags) override;
	Result<void> close_xrcd(Handle xrcd) override;
	Result<QpInfo> create_qp(const QpArgs &a) override;
	Result<QpInfo> open_qp(Handle xrcd, std::uint32_t qpn, std::uint64_t user_handle) override;
	Result<void> modify_qp(Handle qp, const struct ibv_qp_attr &attr,
			       std::uint32_t mask) override;
	Result<QpQuery> query_qp(Handle qp, std::uint32_t mask) override;
	Result<void> destroy_qp(Handle qp) override;
	Result<void> attach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid) override;
	Result<void> detach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid) override;
	Result<Handle> create_ah(Handle pd, const struct ibv_ah_attr &attr) override;
	Result<void> destroy_ah(Handle ah) override;
	Result<Handle> ofed_open_xrc_domain(int fd, int oflags) override;
	Result<void> ofed_close_xrc_domain(Handle xrcd) override;
	Result<SrqInfo> ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
					    const uabi_srq_attr &attr,
					    std::uint64_t user_handle) override;
	Result<std::uint32_t> ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
						     bool sq_sig_all) override;
	Result<void> ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					    const struct ibv_qp_attr &attr,
					    std::uint32_t mask) override;
	Result<QpQuery> ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					      std::uint32_t mask) override;
	Result<void> ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn) override;
	Result<void> ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn) override;

      private:
	explicit NewControl(Context ctx);
	Context own_;
};

// The write ABI: rdma-core 44's write-mode bytes through the legacy
// translator (control_write.cpp).  OFED's XRC verbs switch the
// translator to OFED's dialect for their command.
class WriteControl final : public Control
{
      public:
	// GET_CONTEXT, which creates the async event queue.
	static Result<std::unique_ptr<Control>> open(Context ctx);
	// An imported context: no GET_CONTEXT (Translator::import_context).
	static Result<std::unique_ptr<Control>> adopt(Context ctx);
	~WriteControl() override;
	ControlMode mode() const noexcept override { return ControlMode::Write; }
	std::uint64_t legacy_commands() const noexcept override;

	Result<uabi_event> get_async_event() override;
	Result<DeviceInfo> query_device() override;
	Result<uabi_port_attr> query_port(std::uint32_t port) override;
	Result<Handle> alloc_pd() override;
	Result<void> dealloc_pd(Handle pd) override;
	Result<MrInfo> reg_mr(Handle pd, const void *addr, std::uint64_t length,
			      std::uint32_t access, std::uint64_t iova) override;
	Result<uabi_mr_keys> rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
				      std::uint64_t length, std::uint64_t iova,
				      unsigned access) override;
	Result<void> dereg_mr(Handle mr) override;
	Result<MwInfo> alloc_mw(Handle pd, std::uint32_t type) override;
	Result<void> dealloc_mw(Handle mw) override;
	Result<EvqInfo> create_comp_channel() override;
	Result<void> destroy_comp_channel(const EvqInfo &ch) override;
	Result<uabi_event> get_comp_event(const EvqInfo &ch) override;
	Result<CqInfo> create_cq(std::uint32_t cqe, const EvqInfo *channel,
				 std::uint32_t comp_vector, std::uint64_t user_handle) override;
	Result<uabi_cq_resp> resize_cq(Handle cq, std::uint32_t cqe) override;
	Result<void> destroy_cq(Handle cq) override;
	Result<SrqInfo> create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
				   const uabi_srq_attr &attr, std::uint64_t user_handle) override;
	Result<void> modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask) override;
	Result<uabi_srq_attr> query_srq(Handle srq) override;
	Result<void> destroy_srq(Handle srq) override;
	Result<Handle> open_xrcd(int fd, int oflags) override;
	Result<void> close_xrcd(Handle xrcd) override;
	Result<QpInfo> create_qp(const QpArgs &a) override;
	Result<QpInfo> open_qp(Handle xrcd, std::uint32_t qpn, std::uint64_t user_handle) override;
	Result<void> modify_qp(Handle qp, const struct ibv_qp_attr &attr,
			       std::uint32_t mask) override;
	Result<QpQuery> query_qp(Handle qp, std::uint32_t mask) override;
	Result<void> destroy_qp(Handle qp) override;
	Result<void> attach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid) override;
	Result<void> detach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid) override;
	Result<Handle> create_ah(Handle pd, const struct ibv_ah_attr &attr) override;
	Result<void> destroy_ah(Handle ah) override;
	Result<Handle> ofed_open_xrc_domain(int fd, int oflags) override;
	Result<void> ofed_close_xrc_domain(Handle xrcd) override;
	Result<SrqInfo> ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
					    const uabi_srq_attr &attr,
					    std::uint64_t user_handle) override;
	Result<std::uint32_t> ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
						     bool sq_sig_all) override;
	Result<void> ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					    const struct ibv_qp_attr &attr,
					    std::uint32_t mask) override;
	Result<QpQuery> ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					      std::uint32_t mask) override;
	Result<void> ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn) override;
	Result<void> ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn) override;

      private:
	WriteControl() = default;
	std::unique_ptr<legacy::Translator> tr_;
	std::unique_ptr<legacy::Encoder> enc_;
	// The translator serves one command at a time (like one uverbs
	// file's write()); verbs may come from several threads.
	std::mutex mu_;
};

} // namespace uabi::verbs

#endif
