// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The old path: for every control verb, the exact bytes that rdma-core 44's
// ibv_cmd_* layer writes to the uverbs fd when built with IOCTL_MODE=write,
// for a provider without driver data (cmd_size and resp_size are the core
// structs: no driver words in or out), plus the OFED 1.3-1.5 XRC commands
// as OFED's libibverbs wrote them.  The bytes go to a Translator (in
// process) or to a file descriptor with write(2), as libibverbs did.
//
// The drop-in libibverbs (UABI_VERBS_PATH=write) calls these with the
// arguments of the ibv_* verbs; results come back like the new path's
// (handles, keys, granted capabilities), or as the kernel's response
// structs where libibverbs itself unpacks them (queries).
#ifndef UABI_LEGACY_ENCODER_HPP
#define UABI_LEGACY_ENCODER_HPP

#include <uabi/legacy.hpp>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace uabi::legacy
{

struct LegacyContext {
	int async_fd;
	std::uint32_t num_comp_vectors;
};

// struct ib_uverbs_query_qp_resp ends in a flexible array, which
// std::optional (inside Result) cannot hold: its bytes, and a copy out.
struct QueryQpResp {
	alignas(8) unsigned char raw[sizeof(ib_uverbs_query_qp_resp)];
	ib_uverbs_query_qp_resp get() const
	{
		ib_uverbs_query_qp_resp r;
		std::memcpy(&r, raw, sizeof(r));
		return r;
	}
};

struct LegacyMw {
	Handle handle;
	std::uint32_t rkey;
};

// ibv_qp_init_attr with handles instead of object pointers.
struct LegacyQpInit {
	Handle pd = 0;	    // the XRC domain for IBV_QPT_XRC_RECV
	Handle send_cq = 0; // 0: none (XRC_RECV)
	Handle recv_cq = 0;
	Handle srq = 0; // 0: no SRQ
	ibv_qp_type qp_type = IBV_QPT_RC;
	ibv_qp_cap cap{};
	bool sq_sig_all = false;
	std::uint64_t user_handle = 0; // libibverbs passes the ibv_qp pointer
	// _ex only (IBV_QP_INIT_ATTR_CREATE_FLAGS)
	std::uint32_t create_flags = 0;
};

class Encoder
{
      public:
	explicit Encoder(Translator &t) : t_(&t) {}
	explicit Encoder(int fd) : fd_(fd) {} // a real (or interposed) uverbs fd

	// ---------------------------------------------------------- upstream
	Result<LegacyContext> get_context();
	Result<ib_uverbs_query_device_resp> query_device();
	Result<ib_uverbs_ex_query_device_resp> query_device_ex();
	Result<ib_uverbs_query_port_resp> query_port(std::uint8_t port);

	Result<Handle> alloc_pd();
	Result<void> dealloc_pd(Handle pd);

	Result<MrInfo> reg_mr(Handle pd, const void *addr, std::size_t length, std::uint64_t hca_va,
			      int access);
	// IBV_REREG_MR_* flags; the fields a flag does not name are ignored.
	Result<MrInfo> rereg_mr(Handle mr, int flags, Handle pd, const void *addr, std::size_t length,
				std::uint64_t hca_va, int access);
	Result<void> dereg_mr(Handle mr);
	Result<LegacyMw> alloc_mw(Handle pd, ibv_mw_type type);
	Result<void> dealloc_mw(Handle mw);

	Result<int> create_comp_channel(); // the channel's fd
	// channel_fd -1: none.  cqe/cqn of CqInfo: cqe granted, cqn 0 (the
	// legacy ABI has no CQ number).
	Result<CqInfo> create_cq(int cqe, int channel_fd, int comp_vector,
				 std::uint64_t user_handle);
	Result<CqInfo> create_cq_ex(int cqe, int channel_fd, int comp_vector,
				    std::uint64_t user_handle, std::uint32_t flags);
	Result<std::uint32_t> resize_cq(Handle cq, int cqe);
	Result<ib_uverbs_destroy_cq_resp> destroy_cq(Handle cq);
	// ibv_modify_cq(): attr_mask IBV_CQ_ATTR_MODERATE.
	Result<void> modify_cq(Handle cq, std::uint32_t attr_mask, std::uint16_t cq_count,
			       std::uint16_t cq_period);

	// QpInfo.resp: qpn, state 0 (the legacy ABI does not say), granted caps.
	Result<QpInfo> create_qp(const LegacyQpInit &init);
	Result<QpInfo> create_qp_ex(const LegacyQpInit &init);
	Result<QpInfo> open_qp(Handle xrcd, std::uint32_t qpn, ibv_qp_type type,
			       std::uint64_t user_handle);
	Result<QueryQpResp> query_qp(Handle qp, int attr_mask);
	Result<void> modify_qp(Handle qp, const ibv_qp_attr &attr, int attr_mask);
	Result<void> modify_qp_ex(Handle qp, const ibv_qp_attr &attr, int attr_mask);
	Result<std::uint32_t> destroy_qp(Handle qp); // events_reported

	// SrqInfo.resp: srqn, and the granted max_wr/max_sge.
	Result<SrqInfo> create_srq(Handle pd, const ibv_srq_attr &attr, std::uint64_t user_handle);
	Result<SrqInfo> create_xsrq(Handle pd, ibv_srq_type type, Handle xrcd, Handle cq,
				    const ibv_srq_attr &attr, std::uint64_t user_handle);
	Result<void> modify_srq(Handle srq, const ibv_srq_attr &attr, int attr_mask);
	Result<ibv_srq_attr> query_srq(Handle srq);
	Result<std::uint32_t> destroy_srq(Handle srq); // events_reported

	Result<Handle> create_ah(Handle pd, const ibv_ah_attr &attr, std::uint64_t user_handle);
	Result<void> destroy_ah(Handle ah);

	Result<Handle> open_xrcd(int fd, int oflags);
	Result<void> close_xrcd(Handle xrcd);

	// ------------------------------------------------- OFED 1.3-1.5 XRC
	Result<SrqInfo> ofed_create_xrc_srq(Handle pd, Handle xrc_domain, Handle xrc_cq,
					    const ibv_srq_attr &attr, std::uint64_t user_handle);
	Result<Handle> ofed_open_xrc_domain(int fd, int oflags);
	Result<void> ofed_close_xrc_domain(Handle xrc_domain);
	Result<std::uint32_t> ofed_create_xrc_rcv_qp(Handle xrc_domain, const ibv_qp_cap &cap,
						     bool sq_sig_all,
						     std::uint64_t user_handle = 0);
	Result<void> ofed_modify_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn,
					    const ibv_qp_attr &attr, int attr_mask);
	Result<QueryQpResp> ofed_query_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn,
						  int attr_mask);
	Result<void> ofed_reg_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn);
	Result<void> ofed_unreg_xrc_rcv_qp(Handle xrc_domain, std::uint32_t qpn);

	// The bytes of the last command written (the exact legacy request).
	std::span<const std::byte> last_command() const { return {last_.data(), last_len_}; }
	// Any bytes: write them as a command.
	Result<void> write_raw(const void *buf, std::size_t len);

      private:
	Result<void> send(const void *buf, std::size_t len);
	Translator *t_ = nullptr;
	int fd_ = -1;
	std::array<std::byte, 256> last_{};
	std::size_t last_len_ = 0;
};

} // namespace uabi::legacy

#endif // UABI_LEGACY_ENCODER_HPP
