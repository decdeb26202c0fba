// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The two control paths of the drop-in libibverbs (docs/datapath.md,
// "Control paths").  Every control verb of compat/verbs calls one method of
// Control; the method either builds the new-uAPI command (uabi::Context,
// the default) or, with UABI_VERBS_PATH=write, writes the bytes rdma-core
// 44's ibv_cmd_* layer wrote in write mode (legacy::Encoder) through the
// legacy translator (legacy::Translator) to the same backend — the path an
// unmodified old stack would take.  Both return the new path's result types,
// so the verbs above them are one code.
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
	static Result<std::unique_ptr<Control>> open(ControlMode mode);
	~Control();
	Control(const Control &) = delete;
	Control &operator=(const Control &) = delete;

	ControlMode mode() const noexcept { return tr_ ? ControlMode::Write : ControlMode::New; }
	// The new-path context: driver calls and what has no legacy command.
	Context &raw() noexcept { return *ctx_; }

	// Commands the legacy translator executed (0 on the new path).
	std::uint64_t legacy_commands() const noexcept;

	// The async event queue of this context (created by open()).
	const EvqInfo &async_queue() const noexcept { return async_; }
	// EAGAIN when empty.
	Result<uabi_event> get_async_event();

	Result<DeviceInfo> query_device();
	Result<uabi_port_attr> query_port(std::uint32_t port);

	Result<Handle> alloc_pd();
	Result<void> dealloc_pd(Handle pd);

	Result<MrInfo> reg_mr(Handle pd, const void *addr, std::uint64_t length,
			      std::uint32_t access, std::uint64_t iova);
	// In place, the keys stay (IBV_REREG_MR_* flags).
	Result<uabi_mr_keys> rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
				      std::uint64_t length, std::uint64_t iova, unsigned access);
	Result<void> dereg_mr(Handle mr);

	Result<EvqInfo> create_comp_channel();
	Result<void> destroy_comp_channel(const EvqInfo &ch);
	// EAGAIN when empty; element is the CQ's user handle.
	Result<uabi_event> get_comp_event(const EvqInfo &ch);

	Result<CqInfo> create_cq(std::uint32_t cqe, const EvqInfo *channel,
				 std::uint32_t comp_vector, std::uint64_t user_handle);
	Result<uabi_cq_resp> resize_cq(Handle cq, std::uint32_t cqe);
	Result<void> destroy_cq(Handle cq);

	// type IBV_SRQT_BASIC (xrcd, cq unused) or IBV_SRQT_XRC.
	Result<SrqInfo> create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
				   const uabi_srq_attr &attr, std::uint64_t user_handle);
	Result<void> modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask);
	Result<uabi_srq_attr> query_srq(Handle srq);
	Result<void> destroy_srq(Handle srq);

	// oflags: O_CREAT / O_EXCL as open(2).
	Result<Handle> open_xrcd(int fd, int oflags);
	Result<void> close_xrcd(Handle xrcd);

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
	};
	Result<QpInfo> create_qp(const QpArgs &a);
	// ibv_open_qp: one more registration of an XRC receive QP.
	Result<QpInfo> open_qp(Handle xrcd, std::uint32_t qpn, std::uint64_t user_handle);
	Result<void> modify_qp(Handle qp, const struct ibv_qp_attr &attr, std::uint32_t mask);
	Result<QpQuery> query_qp(Handle qp, std::uint32_t mask);
	Result<void> destroy_qp(Handle qp);

	Result<Handle> create_ah(Handle pd, const struct ibv_ah_attr &attr);
	Result<void> destroy_ah(Handle ah);

	// The OFED 1.5 XRC verbs (ofed_xrc.cpp): on the write path, OFED's
	// XRC commands (37-44 of its dialect).  Receive QPs are named by
	// (domain, qpn); the context's registrations carry no user handle, so
	// their events come back OFED-style (IBV_XRC_QP_EVENT_FLAG, qpn).
	Result<Handle> ofed_open_xrc_domain(int fd, int oflags);
	Result<void> ofed_close_xrc_domain(Handle xrcd);
	Result<SrqInfo> ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
					    const uabi_srq_attr &attr, std::uint64_t user_handle);
	Result<std::uint32_t> ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
						     bool sq_sig_all);
	Result<void> ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					    const struct ibv_qp_attr &attr, std::uint32_t mask);
	Result<QpQuery> ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn, std::uint32_t mask);
	Result<void> ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn);
	Result<void> ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn);

      private:
	Control() = default;
	// The new path's context; on the write path, the translator's.
	Context *ctx_ = nullptr;
	std::unique_ptr<Context> own_;
	std::unique_ptr<legacy::Translator> tr_;
	std::unique_ptr<legacy::Encoder> enc_;
	// The translator serves one command at a time (like one uverbs
	// file's write()); verbs may come from several threads.
	std::mutex mu_;
	EvqInfo async_{};
};

} // namespace uabi::verbs

#endif
