// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Private to the legacy write() translator (compat/src/translator*.cpp):
// the translation state (struct Translator::Impl), the helpers every
// handler uses, and the handlers of each dialect, declared here and
// defined beside their command table: translator_upstream.cpp (commands
// 0-40), translator_ex.cpp (the extended commands), translator_ofed.cpp
// (OFED 1.5's XRC commands); translator.cpp frames a write() and picks the
// table.  The framing rules follow Linux's ib_uverbs_write()/verify_hdr()
// and the per-command rules its handlers in uverbs_cmd.c apply before they
// reach a driver; docs/legacy-abi.md lists each rule with its source.
#ifndef UABI_COMPAT_TRANSLATOR_IMPL_HPP
#define UABI_COMPAT_TRANSLATOR_IMPL_HPP

#include <uabi/legacy.hpp>
#include <uabi/legacy_ofed.h>
#include <uabi/ofed_verbs_abi.h>

#include "wire.hpp"

#include <rdma/ib_user_verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace uabi::legacy
{

namespace tr
{

using detail::kMand;
using detail::Wire;

// Linux's include/rdma/ib_verbs.h values the handlers test.
constexpr std::uint32_t kQpAttrStandardBits = (1u << 21) - 1; // IB_QP_ATTR_STANDARD_BITS
constexpr std::uint32_t kQpRateLimit = 1u << 25;	      // IB_QP_RATE_LIMIT
constexpr std::uint32_t kCqModerate = 1;		      // IB_CQ_MODERATE
constexpr std::uint32_t kOCreat = 0100, kOExcl = 0200;	      // O_CREAT, O_EXCL (x86, arm64)
// access_ok(): user addresses end at TASK_SIZE_MAX on x86-64.
constexpr std::uint64_t kTaskSizeMax = 0x00007ffffffff000ull;
constexpr std::uint32_t kNumComp = 1; // num_comp_vectors of the device
constexpr int kDry = 1;		      // exec() in translate-only mode

// Translation of one command's payload: what ib_uverbs_write() hands a
// handler (bundle.ucore).
struct Req {
	const std::byte *in; // the command struct (after the header(s))
	std::size_t inlen;   // ucore.inlen
	std::uint64_t resp;  // ucore.outbuf
	std::size_t outlen;  // ucore.outlen
	bool ex;
};

inline bool access_ok(std::uint64_t addr, std::uint64_t len)
{
	std::uint64_t end;
	return !__builtin_add_overflow(addr, len, &end) && end <= kTaskSizeMax;
}

inline bool all_zero(const std::byte *p, std::size_t n)
{
	for (std::size_t i = 0; i < n; i++)
		if (p[i] != std::byte{0})
			return false;
	return true;
}

// uverbs_request(): zero-extend a short request; a longer one must carry
// only zeros past what we know (-EOPNOTSUPP).
template <class T> int request(const Req &r, T &out)
{
	std::size_t n = std::min(r.inlen, sizeof(T));
	std::memset(static_cast<void *>(&out), 0, sizeof(T));
	std::memcpy(static_cast<void *>(&out), r.in, n);
	if (r.inlen > sizeof(T) && !all_zero(r.in + sizeof(T), r.inlen - sizeof(T)))
		return -EOPNOTSUPP;
	return 0;
}

// uverbs_response(): copy what fits, zero the rest of the user's buffer.
inline int respond(const Req &r, const void *resp, std::size_t len)
{
	static const std::byte zeros[4096] = {};
	std::size_t n = std::min(r.outlen, len);
	if (r.outlen <= 1024) {
		alignas(8) std::byte tmp[1024];
		std::memcpy(tmp, resp, n);
		std::memset(tmp + n, 0, r.outlen - n);
		return -copy_to_user(r.resp, tmp, r.outlen);
	}
	if (int e = copy_to_user(r.resp, resp, n))
		return -e;
	for (std::size_t off = n; off < r.outlen; off += sizeof(zeros))
		if (int e =
			copy_to_user(r.resp + off, zeros, std::min(sizeof(zeros), r.outlen - off)))
			return -e;
	return 0;
}

// Lookups of a handle that the command uses (not destroys): Linux up to
// 6.14 turns every failure of uobj_get_obj_read() into -EINVAL.
inline int lookup_err(int st)
{
	return st == -ENOENT ? -EINVAL : st;
}

// The checks of Linux's modify_qp() that come before the driver.
template <class M> int modify_precheck(const M &m, std::uint32_t mask)
{
	if ((mask & UABI_QP_ALT_PATH) && m.alt_port_num != m.alt_dest.port_num)
		return -EINVAL;
	if (((mask & UABI_QP_CUR_STATE) && m.cur_qp_state > UABI_QPS_ERR) ||
	    ((mask & UABI_QP_STATE) && m.qp_state > UABI_QPS_ERR))
		return -EINVAL;
	return 0;
}

} // namespace tr

// The translator's own files (this header is theirs alone) use the helpers
// unqualified.
using namespace tr;

struct Translator::Impl {
	using Fn = int (Impl::*)(const Req &);
	enum class K : std::uint8_t { NotSupp, Io, UdataIo, I, UdataI, Ex };
	struct Spec {
		K kind;
		std::uint16_t req;  // kernel req_size (payload, no header)
		std::uint16_t resp; // kernel resp_size
		Fn fn;
	};

	Impl(Context c, Dialect d) : ctx(std::move(c)), dialect(d) {}

	Context ctx;
	Dialect dialect;
	bool has_ctx = false;
	bool mw_supported = false;
	bool dry = false;
	Handle async_handle = 0;
	int async_fd = -1;
	struct Channel {
		int fd;
		Handle handle;
	};
	std::vector<Channel> channels;
	std::vector<Handle> doomed; // channels closed by the caller, still used
	struct Events {
		Handle handle;
		std::uint32_t comp, async;
	};
	std::vector<Events> events;
	alignas(8) std::byte wire[detail::kWireBytes];

	~Impl()
	{
		// The context's objects (and the fds they own) go with ctx; the
		// dups we handed out belong to the caller, as the kernel's do.
	}

	// ------------------------------------------------------------ running
	Wire w() { return Wire(wire); }

	int exec(Wire &m)
	{
		std::size_t n = m.finish();
		if (dry)
			return kDry;
		return ctx.execute_raw(std::span<std::byte>(wire, n));
	}

	void destroy(std::uint16_t object, Handle h)
	{
		if (dry || !h)
			return;
		Wire m = w();
		m.begin();
		m.cmd(object, UABI_METHOD_DESTROY, h);
		exec(m);
	}

	// The response of a create: on a failed copy-out, what was created
	// is destroyed again, as Linux's handlers do.
	int respond_created(const Req &r, const void *resp, std::size_t len, std::uint16_t object,
			    Handle h)
	{
		int e = respond(r, resp, len);
		if (e)
			destroy(object, h);
		return e;
	}
	// A create with an extended form: the whole _ex response (with its
	// response_length) or only its base.
	template <class ExResp>
	int respond_created_ex(const Req &r, ExResp &resp, bool ex, std::uint16_t object, Handle h)
	{
		if (!ex)
			return respond_created(r, &resp.base, sizeof(resp.base), object, h);
		resp.response_length = std::uint32_t(std::min(r.outlen, sizeof(resp)));
		return respond_created(r, &resp, sizeof(resp), object, h);
	}

	int channel_handle(int fd, Handle *h) const
	{
		for (const auto &c : channels)
			if (c.fd == fd) {
				*h = c.handle;
				return 0;
			}
		return -EBADF;
	}

	void take_events(Handle h, std::uint32_t *comp, std::uint32_t *async)
	{
		*comp = *async = 0;
		for (std::size_t i = 0; i < events.size(); i++)
			if (events[i].handle == h) {
				*comp = events[i].comp;
				*async = events[i].async;
				events[i] = events.back();
				events.pop_back();
				return;
			}
	}

	Events &events_of(Handle h)
	{
		for (auto &e : events)
			if (e.handle == h)
				return e;
		events.push_back({h, 0, 0});
		return events.back();
	}

	// Completion channels the caller closed while a CQ still used them.
	void reap_doomed()
	{
		for (std::size_t i = 0; i < doomed.size();) {
			Wire m = w();
			m.begin();
			m.cmd(UABI_OBJ_COMP_CHANNEL, UABI_METHOD_DESTROY, doomed[i]);
			int st = exec(m);
			if (st == 0 || st == -ENOENT) {
				doomed[i] = doomed.back();
				doomed.pop_back();
			} else {
				i++;
			}
		}
	}

	// A destroy whose response the caller reads: make sure it can be
	// written before anything is destroyed.
	int probe(const Req &r)
	{
		if (dry)
			return 0;
		return -probe_user_writable(r.resp, r.outlen);
	}

	// ----------------------------------------------------------- dispatch
	static const Spec kUpstream[];
	static const std::size_t kNumUpstream;
	static const Spec kOfed[];
	static const Spec kEx[];
	static const std::size_t kNumEx;
	static const Spec kNotSupp;

	// Frames one write() and calls the command's handler (translator.cpp).
	long run(const void *vbuf, std::size_t count, std::size_t avail);

	// -------------------------------------------------- shared by handlers
	int need_ctx() const { return has_ctx ? 0 : -EINVAL; }

	// The destroys whose response reports event counts: request, probe,
	// one DESTROY, then @fill writes the counts into the response.
	template <class Cmd, class Resp, class Fill>
	int destroy_reporting(const Req &r, std::uint16_t object, std::uint32_t Cmd::*handle,
			      Fill fill)
	{
		Cmd cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = probe(r))
			return e;
		Wire m = w();
		m.begin();
		m.cmd(object, UABI_METHOD_DESTROY, cmd.*handle);
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		Resp resp{};
		fill(cmd.*handle, resp);
		return respond(r, &resp, sizeof(resp));
	}

	// ------------------------------------------------ the upstream dialect
	// Commands 0-40 of <rdma/ib_user_verbs.h> (translator_upstream.cpp).
	int get_context(const Req &r);
	int query_device(const Req &r);
	int query_port(const Req &r);
	int alloc_pd(const Req &r);
	int destroy_by_word(const Req &r, std::uint16_t object);
	int dealloc_pd(const Req &r);
	int dereg_mr(const Req &r);
	int destroy_ah(const Req &r);
	int close_xrcd(const Req &r);
	int dealloc_mw(const Req &r);
	int create_ah(const Req &r);
	int reg_mr(const Req &r);
	int rereg_mr(const Req &r);
	int alloc_mw(const Req &r);
	int create_comp_channel(const Req &r);
	int create_cq_common(const Req &r, const ib_uverbs_ex_create_cq &cmd, bool ex);
	int create_cq(const Req &r);
	int resize_cq(const Req &r);
	int destroy_cq(const Req &r);
	int create_qp_common(const Req &r, ib_uverbs_ex_create_qp &cmd, bool ex, Handle xrcd = 0);
	int create_qp(const Req &r);
	int query_qp_into(Handle qp, std::uint32_t mask, uabi_qp_attr *a, uabi_qp_init *init);
	int query_qp(const Req &r);
	int modify_qp_run(Handle qp, const uabi_qp_attr &a, std::uint32_t mask);
	int modify_qp_common(const ib_uverbs_modify_qp &base, std::uint32_t mask);
	int modify_qp(const Req &r);
	int destroy_qp(const Req &r);
	int create_srq_common(const Req &r, const ib_uverbs_create_xsrq &cmd);
	int create_srq(const Req &r);
	int create_xsrq(const Req &r);
	int modify_srq(const Req &r);
	int mcast(const Req &r, std::uint16_t method);
	int attach_mcast(const Req &r) { return mcast(r, UABI_QP_ATTACH_MCAST); }
	int detach_mcast(const Req &r) { return mcast(r, UABI_QP_DETACH_MCAST); }
	int query_srq(const Req &r);
	int destroy_srq(const Req &r);
	int open_xrcd(const Req &r);
	int open_qp(const Req &r);

	// --------------------------------------------- the extended commands
	// IB_USER_VERBS_CMD_FLAG_EXTENDED (translator_ex.cpp).
	int ex_query_device(const Req &r);
	int ex_create_cq(const Req &r);
	int ex_modify_cq(const Req &r);
	int ex_create_qp(const Req &r);
	int ex_modify_qp(const Req &r);
	int ex_unsupported(const Req &);

	// ---------------------------------------------------- the OFED dialect
	// OFED 1.5's XRC commands 37-44 (translator_ofed.cpp).
	int ofed_create_xrc_srq(const Req &r);
	int ofed_close_xrc_domain(const Req &r);
	int ofed_create_xrc_rcv_qp(const Req &r);
	int ofed_modify_xrc_rcv_qp(const Req &r);
	int ofed_query_xrc_rcv_qp(const Req &r);
	int ofed_reg_common(const Req &r, std::uint16_t method);
	int ofed_reg_xrc_rcv_qp(const Req &r);
	int ofed_unreg_xrc_rcv_qp(const Req &r);

	// ------------------------------------------------------------- events
	// The completion channels' and the async queue's kernel-format
	// events (translator.cpp).
	long read_event(int fd, void *buf, std::size_t count, bool nonblock);
	int release_event_fd(int fd);
};

} // namespace uabi::legacy

#endif
