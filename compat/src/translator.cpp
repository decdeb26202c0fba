// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy write() translator.  The framing rules follow Linux's
// ib_uverbs_write()/verify_hdr() and the per-command rules its handlers in
// uverbs_cmd.c apply before they reach a driver; docs/legacy-abi.md lists
// each rule with its source.
#include <uabi/legacy.hpp>
#include <uabi/convert/av.hpp>
#include <uabi/convert/device.hpp>
#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>
#include <uabi/legacy_ofed.h>
#include <uabi/ofed_verbs_abi.h>

#include "wire.hpp"

#include <rdma/ib_user_verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <vector>

namespace uabi::legacy
{

using detail::kMand;
using detail::Wire;

namespace
{

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

bool access_ok(std::uint64_t addr, std::uint64_t len)
{
	std::uint64_t end;
	return !__builtin_add_overflow(addr, len, &end) && end <= kTaskSizeMax;
}

bool all_zero(const std::byte *p, std::size_t n)
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
int respond(const Req &r, const void *resp, std::size_t len)
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
int lookup_err(int st)
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



} // namespace

// ------------------------------------------------------------------- Impl

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
	int respond_created(const Req &r, const void *resp, std::size_t len,
			    std::uint16_t object, Handle h)
	{
		int e = respond(r, resp, len);
		if (e)
			destroy(object, h);
		return e;
	}
	// A create with an extended form: the whole _ex response (with its
	// response_length) or only its base.
	template <class ExResp>
	int respond_created_ex(const Req &r, ExResp &resp, bool ex, std::uint16_t object,
			       Handle h)
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

	long run(const void *vbuf, std::size_t count, std::size_t avail)
	{
		auto *buf = static_cast<const std::byte *>(vbuf);
		ib_uverbs_cmd_hdr hdr;
		if (count < sizeof(hdr))
			return -EINVAL;
		std::memcpy(&hdr, buf, sizeof(hdr));

		const std::uint32_t c = hdr.command;
		if (c & ~std::uint32_t(IB_USER_VERBS_CMD_FLAG_EXTENDED |
				       IB_USER_VERBS_CMD_COMMAND_MASK))
			return -EINVAL;
		const std::uint32_t idx = c & IB_USER_VERBS_CMD_COMMAND_MASK;
		const Spec *s;
		if (c & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
			if (idx >= kNumEx)
				return -EOPNOTSUPP;
			s = &kEx[idx];
		} else if (dialect == Dialect::Ofed && idx >= UABI_OFED_CMD_CREATE_XRC_SRQ) {
			if (idx > UABI_OFED_CMD_LAST)
				return -EOPNOTSUPP;
			s = &kOfed[idx - UABI_OFED_CMD_CREATE_XRC_SRQ];
		} else {
			if (idx >= kNumUpstream)
				return -EOPNOTSUPP;
			s = &kUpstream[idx];
			if ((idx == IB_USER_VERBS_CMD_ALLOC_MW ||
			     idx == IB_USER_VERBS_CMD_DEALLOC_MW) &&
			    !mw_supported)
				s = &kNotSupp;
		}

		Req r{};
		alignas(8) std::byte quirk[24]; // see the DESTROY_CQ case below
		if (s->kind == K::Ex) {
			ib_uverbs_ex_cmd_hdr ex;
			if (count < sizeof(hdr) + sizeof(ex))
				return -EINVAL;
			std::memcpy(&ex, buf + sizeof(hdr), sizeof(ex));
			std::size_t body = count - sizeof(hdr) - sizeof(ex);
			if ((std::size_t(hdr.in_words) + ex.provider_in_words) * 8 != body)
				return -EINVAL;
			if (std::size_t(hdr.in_words) * 8 < s->req)
				return -ENOSPC;
			if (ex.cmd_hdr_reserved)
				return -EINVAL;
			if (ex.response) {
				if (!hdr.out_words && !ex.provider_out_words)
					return -EINVAL;
				if (std::size_t(hdr.out_words) * 8 < s->resp)
					return -ENOSPC;
				if (!access_ok(
					ex.response,
					(std::uint64_t(hdr.out_words) + ex.provider_out_words) * 8))
					return -EFAULT;
			} else if (hdr.out_words || ex.provider_out_words) {
				return -EINVAL;
			}
			r.in = buf + sizeof(hdr) + sizeof(ex);
			r.inlen = std::size_t(hdr.in_words) * 8;
			r.resp = ex.response;
			r.outlen = ex.response ? std::size_t(hdr.out_words) * 8 : 0;
			r.ex = true;
		} else {
			std::size_t words = hdr.in_words;
			if (words * 4 != count)
				return -EINVAL;
			std::size_t req = s->kind == K::NotSupp ? 0 : s->req;
			if (count < req + sizeof(hdr)) {
				// Linux accepts rdma-core v18/v19's 16-byte
				// DESTROY_CQ and reads 24 bytes.
				if (c != IB_USER_VERBS_CMD_DESTROY_CQ || count != 16)
					return -ENOSPC;
				std::memset(quirk, 0, sizeof(quirk));
				std::memcpy(quirk, buf,
					    std::min<std::size_t>(std::max(avail, count), 24));
				buf = quirk;
				words = 6;
			}
			std::size_t resp = s->kind == K::NotSupp ? 0 : s->resp;
			if (std::size_t(hdr.out_words) * 4 < resp)
				return -ENOSPC;
			if (s->kind == K::NotSupp)
				return -EOPNOTSUPP;
			r.in = buf + sizeof(hdr);
			r.inlen = words * 4 - sizeof(hdr);
			r.outlen = std::size_t(hdr.out_words) * 4;
			const bool udata = s->kind == K::UdataIo || s->kind == K::UdataI;
			const bool has_resp = s->kind == K::UdataIo || s->kind == K::Io;
			if (udata)
				r.inlen = req; // the rest is driver data: none for us
			if (has_resp) {
				std::memcpy(&r.resp, r.in, sizeof(r.resp));
				if (udata)
					r.outlen = resp;
			} else {
				r.outlen = 0;
			}
		}
		int ret = (this->*(s->fn))(r);
		if (ret < 0)
			return ret;
		return long(count);
	}

	// ----------------------------------------------------------- handlers
	int need_ctx() const { return has_ctx ? 0 : -EINVAL; }

	int get_context(const Req &r)
	{
		ib_uverbs_get_context cmd;
		if (int e = request(r, cmd))
			return e;
		if (has_ctx)
			return -EINVAL;
		Wire m = w();
		m.begin(UABI_MSG_F_ALL_OR_NOTHING);
		m.cmd(UABI_OBJ_ASYNC_EVENT, UABI_METHOD_CREATE);
		std::size_t fd_off =
		    m.out(UABI_ATTR_EVQ_FD, sizeof(std::int32_t), kMand | UABI_ATTR_F_FD);
		m.cmd(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
		std::size_t dev_off = m.out(UABI_ATTR_DEVICE_INFO, sizeof(uabi_device_attr));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		Handle evq = m.result(0).out_handle;
		int dup = fcntl(m.get<std::int32_t>(fd_off), F_DUPFD_CLOEXEC, 0);
		if (dup < 0) {
			int e = errno;
			destroy(UABI_OBJ_ASYNC_EVENT, evq);
			return -e;
		}
		ib_uverbs_get_context_resp resp{};
		resp.async_fd = std::uint32_t(dup);
		resp.num_comp_vectors = kNumComp;
		if (int e = respond(r, &resp, sizeof(resp))) {
			close(dup);
			destroy(UABI_OBJ_ASYNC_EVENT, evq);
			return e;
		}
		uabi_device_attr dev = m.get<uabi_device_attr>(dev_off);
		mw_supported = m.valid(dev_off) && dev.max_mw > 0;
		async_handle = evq;
		async_fd = dup;
		has_ctx = true;
		return 0;
	}

	int query_device(const Req &r)
	{
		if (int e = need_ctx())
			return e;
		ib_uverbs_query_device cmd;
		if (int e = request(r, cmd))
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
		std::size_t off = m.out(UABI_ATTR_DEVICE_INFO, sizeof(uabi_device_attr));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		ib_uverbs_query_device_resp resp;
		resp = convert::to_legacy(m.get<uabi_device_attr>(off));
		return respond(r, &resp, sizeof(resp));
	}

	int ex_query_device(const Req &r)
	{
		if (int e = need_ctx())
			return e;
		ib_uverbs_ex_query_device cmd;
		if (int e = request(r, cmd))
			return e;
		if (cmd.comp_mask || cmd.reserved)
			return -EINVAL;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
		std::size_t off = m.out(UABI_ATTR_DEVICE_INFO, sizeof(uabi_device_attr));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		ib_uverbs_ex_query_device_resp resp{};
		uabi_device_attr d = m.get<uabi_device_attr>(off);
		resp.base = convert::to_legacy(d);
		resp.device_cap_flags_ex = d.device_cap_flags;
		resp.response_length = std::uint32_t(std::min(r.outlen, sizeof(resp)));
		return respond(r, &resp, sizeof(resp));
	}

	int query_port(const Req &r)
	{
		if (int e = need_ctx())
			return e;
		ib_uverbs_query_port cmd;
		if (int e = request(r, cmd))
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PORT);
		m.in(UABI_ATTR_DEVICE_PORT_NUM, std::uint32_t(cmd.port_num));
		std::size_t off = m.out(UABI_ATTR_DEVICE_PORT_INFO, sizeof(uabi_port_attr));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		ib_uverbs_query_port_resp resp = convert::to_legacy(m.get<uabi_port_attr>(off));
		return respond(r, &resp, sizeof(resp));
	}

	int alloc_pd(const Req &r)
	{
		ib_uverbs_alloc_pd cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = need_ctx())
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_PD, UABI_METHOD_CREATE);
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		ib_uverbs_alloc_pd_resp resp{};
		resp.pd_handle = m.result(0).out_handle;
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_PD, resp.pd_handle);
	}

	// DEALLOC_PD, DEREG_MR, DESTROY_AH, CLOSE_XRCD, DEALLOC_MW: the first
	// word is the handle; Linux's uobj_perform_destroy() answers the
	// lookup's own errno (ENOENT, EINVAL for another type, EBUSY in use).
	int destroy_by_word(const Req &r, std::uint16_t object)
	{
		std::uint32_t handle;
		struct {
			std::uint32_t h;
		} cmd;
		if (int e = request(r, cmd))
			return e;
		handle = cmd.h;
		Wire m = w();
		m.begin();
		m.cmd(object, UABI_METHOD_DESTROY, handle);
		int st = exec(m);
		if (st == kDry)
			return 0;
		return st;
	}
	int dealloc_pd(const Req &r) { return destroy_by_word(r, UABI_OBJ_PD); }
	int dereg_mr(const Req &r) { return destroy_by_word(r, UABI_OBJ_MR); }
	int destroy_ah(const Req &r) { return destroy_by_word(r, UABI_OBJ_AH); }
	int close_xrcd(const Req &r) { return destroy_by_word(r, UABI_OBJ_XRCD); }
	int dealloc_mw(const Req &r) { return destroy_by_word(r, UABI_OBJ_MW); }

	int create_ah(const Req &r)
	{
		ib_uverbs_create_ah cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = need_ctx())
			return e;
		uabi_ah_attr a = convert::to_uabi(cmd.attr);
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_AH, UABI_METHOD_CREATE);
		m.in(UABI_ATTR_AH_PD, cmd.pd_handle);
		m.in(UABI_ATTR_AH_ATTR, a);
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		ib_uverbs_create_ah_resp resp{};
		resp.ah_handle = m.result(0).out_handle;
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_AH, resp.ah_handle);
	}

	int reg_mr(const Req &r)
	{
		ib_uverbs_reg_mr cmd;
		if (int e = request(r, cmd))
			return e;
		static const std::uint64_t page = std::uint64_t(sysconf(_SC_PAGESIZE));
		if ((cmd.start & (page - 1)) != (cmd.hca_va & (page - 1)))
			return -EINVAL;
		if (int e = need_ctx())
			return e;
		uabi_mr_reg reg{};
		reg.addr = cmd.start;
		reg.length = cmd.length;
		reg.iova = cmd.hca_va;
		reg.access = cmd.access_flags;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_MR, UABI_METHOD_CREATE);
		m.in(UABI_ATTR_MR_PD, cmd.pd_handle);
		m.in(UABI_ATTR_MR_REG, reg);
		std::size_t keys = m.out(UABI_ATTR_MR_KEYS, sizeof(uabi_mr_keys));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_mr_keys k = m.get<uabi_mr_keys>(keys);
		ib_uverbs_reg_mr_resp resp{};
		resp.mr_handle = m.result(0).out_handle;
		resp.lkey = k.lkey;
		resp.rkey = k.rkey;
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_MR, resp.mr_handle);
	}

	int alloc_mw(const Req &r)
	{
		ib_uverbs_alloc_mw cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = need_ctx())
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_MW, UABI_METHOD_CREATE);
		m.in(UABI_ATTR_MW_PD, cmd.pd_handle);
		m.in(UABI_ATTR_MW_TYPE, std::uint32_t(cmd.mw_type));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		ib_uverbs_alloc_mw_resp resp{};
		resp.mw_handle = m.result(0).out_handle;
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_MW, resp.mw_handle);
	}

	int create_comp_channel(const Req &r)
	{
		ib_uverbs_create_comp_channel cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = need_ctx())
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE);
		std::size_t fd_off =
		    m.out(UABI_ATTR_EVQ_FD, sizeof(std::int32_t), kMand | UABI_ATTR_F_FD);
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		Handle h = m.result(0).out_handle;
		int dup = fcntl(m.get<std::int32_t>(fd_off), F_DUPFD_CLOEXEC, 0);
		if (dup < 0) {
			int e = errno;
			destroy(UABI_OBJ_COMP_CHANNEL, h);
			return -e;
		}
		ib_uverbs_create_comp_channel_resp resp{};
		resp.fd = std::uint32_t(dup);
		if (int e = respond(r, &resp, sizeof(resp))) {
			close(dup);
			destroy(UABI_OBJ_COMP_CHANNEL, h);
			return e;
		}
		channels.push_back({dup, h});
		return 0;
	}

	// Linux's create_cq(), shared by CREATE_CQ and the extended one.
	int create_cq_common(const Req &r, const ib_uverbs_ex_create_cq &cmd, bool ex)
	{
		if (cmd.comp_vector >= kNumComp)
			return -EINVAL;
		if (int e = need_ctx())
			return e;
		Handle channel = 0;
		if (cmd.comp_channel >= 0)
			if (int e = channel_handle(cmd.comp_channel, &channel))
				return e;
		if (cmd.flags) // no timestamps, no overrun control in sw
			return -EOPNOTSUPP;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_CQ, UABI_METHOD_CREATE);
		m.in(UABI_ATTR_CQ_CQE, cmd.cqe);
		if (channel)
			m.in(UABI_ATTR_CQ_CHANNEL, channel);
		m.in(UABI_ATTR_CQ_COMP_VECTOR, cmd.comp_vector);
		m.in(UABI_ATTR_CQ_USER_HANDLE, std::uint64_t(cmd.user_handle));
		std::size_t off = m.out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_cq_resp cr = m.get<uabi_cq_resp>(off);
		ib_uverbs_ex_create_cq_resp resp{};
		resp.base.cq_handle = m.result(0).out_handle;
		resp.base.cqe = cr.cqe;
		return respond_created_ex(r, resp, ex, UABI_OBJ_CQ, resp.base.cq_handle);
	}

	int create_cq(const Req &r)
	{
		ib_uverbs_create_cq cmd;
		if (int e = request(r, cmd))
			return e;
		ib_uverbs_ex_create_cq x{};
		x.user_handle = cmd.user_handle;
		x.cqe = cmd.cqe;
		x.comp_vector = cmd.comp_vector;
		x.comp_channel = cmd.comp_channel;
		return create_cq_common(r, x, false);
	}

	int ex_create_cq(const Req &r)
	{
		ib_uverbs_ex_create_cq cmd;
		if (int e = request(r, cmd))
			return e;
		if (cmd.comp_mask || cmd.reserved)
			return -EINVAL;
		return create_cq_common(r, cmd, true);
	}

	int resize_cq(const Req &r)
	{
		ib_uverbs_resize_cq cmd;
		if (int e = request(r, cmd))
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_CQ, UABI_METHOD_MODIFY, cmd.cq_handle);
		m.in(UABI_ATTR_CQ_CQE, cmd.cqe);
		std::size_t off = m.out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		ib_uverbs_resize_cq_resp resp{};
		resp.cqe = m.get<uabi_cq_resp>(off).cqe;
		return respond(r, &resp, sizeof(resp));
	}

	// The destroys whose response reports event counts: request, probe,
	// one DESTROY, then @fill writes the counts into the response.
	template <class Cmd, class Resp, class Fill>
	int destroy_reporting(const Req &r, std::uint16_t object,
			      std::uint32_t Cmd::*handle, Fill fill)
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

	int destroy_cq(const Req &r)
	{
		return destroy_reporting<ib_uverbs_destroy_cq, ib_uverbs_destroy_cq_resp>(
			r, UABI_OBJ_CQ, &ib_uverbs_destroy_cq::cq_handle, [this](Handle h, auto &resp) {
				take_events(h, &resp.comp_events_reported,
					    &resp.async_events_reported);
				if (!doomed.empty())
					reap_doomed();
			});
	}

	// Linux's ib_uverbs_ex_modify_cq(): validated, the CQ looked up, then
	// rdma_set_cq_moderation() answers EOPNOTSUPP (no moderation in sw).
	int ex_modify_cq(const Req &r)
	{
		ib_uverbs_ex_modify_cq cmd;
		if (int e = request(r, cmd))
			return e;
		if (!cmd.attr_mask || cmd.reserved)
			return -EINVAL;
		if (cmd.attr_mask > kCqModerate)
			return -EOPNOTSUPP;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_CQ, UABI_METHOD_QUERY, cmd.cq_handle);
		m.out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		return -EOPNOTSUPP;
	}

	// Linux's create_qp(), shared by CREATE_QP, the extended one and the
	// OFED dialect's XRC send QP.
	int create_qp_common(const Req &r, ib_uverbs_ex_create_qp &cmd, bool ex)
	{
		std::uint32_t type = cmd.qp_type;
		switch (type) {
		case UABI_QPT_RC:
		case UABI_QPT_UC:
		case UABI_QPT_UD:
		case UABI_QPT_XRC_SEND:
		case UABI_QPT_XRC_RECV:
			break;
		case 8:	   // IB_QPT_RAW_PACKET
		case 0xff: // IB_QPT_DRIVER
			if (int e = need_ctx())
				return e;
			return -EOPNOTSUPP; // neither exists on the sw device
		default:
			return -EINVAL;
		}
		if (int e = need_ctx())
			return e;
		if (cmd.comp_mask) // a receive WQ indirection table: none exist
			return -EINVAL;
		uabi_qp_init init{};
		init.qp_type = type;
		init.sq_sig_all = cmd.sq_sig_all ? 1 : 0;
		init.create_flags = cmd.create_flags;
		convert::copy_caps(init.cap, cmd);

		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_QP, UABI_METHOD_CREATE);
		if (type == UABI_QPT_XRC_RECV) {
			// pd_handle names the XRC domain; this is a
			// registration with 0xFFFFFFFF (a new receive QP).
			m.in(UABI_ATTR_QP_XRCD, cmd.pd_handle);
		} else {
			m.in(UABI_ATTR_QP_PD, cmd.pd_handle);
			m.in(UABI_ATTR_QP_SEND_CQ, cmd.send_cq_handle);
			if (type == UABI_QPT_XRC_SEND) {
				init.cap.max_recv_wr = 0;
				init.cap.max_recv_sge = 0;
			} else {
				m.in(UABI_ATTR_QP_RECV_CQ, cmd.recv_cq_handle);
				if (cmd.is_srq)
					m.in(UABI_ATTR_QP_SRQ, cmd.srq_handle);
			}
		}
		m.in(UABI_ATTR_QP_INIT, init);
		m.in(UABI_ATTR_QP_USER_HANDLE, std::uint64_t(cmd.user_handle));
		std::size_t off = m.out(UABI_ATTR_QP_RESP, sizeof(uabi_qp_resp));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_qp_resp qr = m.get<uabi_qp_resp>(off);
		ib_uverbs_ex_create_qp_resp resp{};
		resp.base.qp_handle = m.result(0).out_handle;
		resp.base.qpn = qr.qpn;
		convert::copy_caps(resp.base, qr.cap);
		return respond_created_ex(r, resp, ex, UABI_OBJ_QP, resp.base.qp_handle);
	}

	int create_qp(const Req &r)
	{
		ib_uverbs_create_qp cmd;
		if (int e = request(r, cmd))
			return e;
		ib_uverbs_ex_create_qp x{};
		x.user_handle = cmd.user_handle;
		x.pd_handle = cmd.pd_handle;
		x.send_cq_handle = cmd.send_cq_handle;
		x.recv_cq_handle = cmd.recv_cq_handle;
		x.srq_handle = cmd.srq_handle;
		convert::copy_caps(x, cmd);
		x.sq_sig_all = cmd.sq_sig_all;
		x.qp_type = cmd.qp_type;
		x.is_srq = cmd.is_srq;
		if (dialect == Dialect::Ofed && cmd.qp_type == UABI_OFED_QPT_XRC) {
			// OFED's XRC QP is the send side; srq_handle carried
			// the XRC domain, which the send side does not need.
			x.qp_type = UABI_QPT_XRC_SEND;
			x.is_srq = 0;
		}
		return create_qp_common(r, x, false);
	}

	int ex_create_qp(const Req &r)
	{
		ib_uverbs_ex_create_qp cmd;
		if (int e = request(r, cmd))
			return e;
		if (cmd.comp_mask & ~std::uint32_t(IB_UVERBS_CREATE_QP_SUP_COMP_MASK))
			return -EINVAL;
		if (cmd.reserved)
			return -EINVAL;
		return create_qp_common(r, cmd, true);
	}

	int query_qp_into(Handle qp, std::uint32_t mask, uabi_qp_attr *a, uabi_qp_init *init)
	{
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_QP, UABI_METHOD_QUERY, qp);
		m.in(UABI_ATTR_QP_ATTR_MASK, mask);
		std::size_t aoff = m.out(UABI_ATTR_QP_ATTR, sizeof(uabi_qp_attr));
		std::size_t ioff = m.out(UABI_ATTR_QP_INIT_OUT, sizeof(uabi_qp_init));
		int st = exec(m);
		if (st)
			return st;
		*a = m.get<uabi_qp_attr>(aoff);
		*init = m.get<uabi_qp_init>(ioff);
		return 0;
	}

	int query_qp(const Req &r)
	{
		ib_uverbs_query_qp cmd;
		if (int e = request(r, cmd))
			return e;
		uabi_qp_attr a;
		uabi_qp_init init;
		int st = query_qp_into(cmd.qp_handle, cmd.attr_mask, &a, &init);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		ib_uverbs_query_qp_resp resp = convert::to_legacy(a, init);
		return respond(r, &resp, sizeof(resp));
	}

	int modify_qp_run(Handle qp, const uabi_qp_attr &a, std::uint32_t mask)
	{
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_QP, UABI_METHOD_MODIFY, qp);
		m.in(UABI_ATTR_QP_ATTR, a);
		m.in(UABI_ATTR_QP_ATTR_MASK, mask);
		return exec(m);
	}

	// Linux's modify_qp(): the attributes of the mask, then the driver with
	// the mask less what modify_qp_mask() ignores for XRC QPs (the core
	// ignores those bits the same way).
	int modify_qp_common(const ib_uverbs_modify_qp &base, std::uint32_t mask)
	{
		if (int e = modify_precheck(base, mask))
			return e;
		uabi_qp_attr a = convert::to_uabi_modify(base, mask);
		int st = modify_qp_run(base.qp_handle, a, mask);
		if (st == kDry)
			return 0;
		return lookup_err(st);
	}

	int modify_qp(const Req &r)
	{
		ib_uverbs_modify_qp cmd;
		if (int e = request(r, cmd))
			return e;
		if (cmd.attr_mask & ~kQpAttrStandardBits)
			return -EOPNOTSUPP;
		return modify_qp_common(cmd, cmd.attr_mask);
	}

	int ex_modify_qp(const Req &r)
	{
		ib_uverbs_ex_modify_qp cmd;
		if (int e = request(r, cmd))
			return e;
		std::uint32_t mask = cmd.base.attr_mask;
		if (mask & ~(kQpAttrStandardBits | kQpRateLimit))
			return -EOPNOTSUPP;
		if (mask & kQpRateLimit) // no rate limiting in sw
			return -EOPNOTSUPP;
		if (int e = modify_qp_common(cmd.base, mask))
			return e;
		if (dry)
			return 0;
		ib_uverbs_ex_modify_qp_resp resp{};
		resp.response_length = std::uint32_t(std::min(r.outlen, sizeof(resp)));
		return respond(r, &resp, sizeof(resp));
	}

	int destroy_qp(const Req &r)
	{
		// A registration on an XRC receive QP is a QP handle: this is
		// the unregister.
		return destroy_reporting<ib_uverbs_destroy_qp, ib_uverbs_destroy_qp_resp>(
			r, UABI_OBJ_QP, &ib_uverbs_destroy_qp::qp_handle, [this](Handle h, auto &resp) {
				std::uint32_t comp;
				take_events(h, &comp, &resp.events_reported);
			});
	}

	int create_srq_common(const Req &r, const ib_uverbs_create_xsrq &cmd)
	{
		if (int e = need_ctx())
			return e;
		uabi_srq_init init{};
		convert::copy_srq_attr(init.attr, cmd);
		switch (cmd.srq_type) {
		case 0: // IB_SRQT_BASIC
			init.srq_type = UABI_SRQT_BASIC;
			break;
		case 1: // IB_SRQT_XRC
			init.srq_type = UABI_SRQT_XRC;
			break;
		case 2: // IB_SRQT_TM: no tag matching in sw
			return -EOPNOTSUPP;
		default:
			return -EINVAL;
		}
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_SRQ, UABI_METHOD_CREATE);
		m.in(UABI_ATTR_SRQ_PD, cmd.pd_handle);
		if (init.srq_type == UABI_SRQT_XRC) {
			m.in(UABI_ATTR_SRQ_XRCD, cmd.xrcd_handle);
			m.in(UABI_ATTR_SRQ_CQ, cmd.cq_handle);
		}
		m.in(UABI_ATTR_SRQ_INIT, init);
		m.in(UABI_ATTR_SRQ_USER_HANDLE, std::uint64_t(cmd.user_handle));
		std::size_t off = m.out(UABI_ATTR_SRQ_RESP, sizeof(uabi_srq_resp));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_srq_resp sr = m.get<uabi_srq_resp>(off);
		ib_uverbs_create_srq_resp resp{};
		resp.srq_handle = m.result(0).out_handle;
		convert::copy_srq_sizes(resp, sr.attr);
		resp.srqn = init.srq_type == UABI_SRQT_XRC ? sr.srqn : 0;
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_SRQ, resp.srq_handle);
	}

	int create_srq(const Req &r)
	{
		ib_uverbs_create_srq cmd;
		if (int e = request(r, cmd))
			return e;
		ib_uverbs_create_xsrq x{};
		x.response = cmd.response;
		x.user_handle = cmd.user_handle;
		x.pd_handle = cmd.pd_handle;
		convert::copy_srq_attr(x, cmd);
		return create_srq_common(r, x);
	}

	int create_xsrq(const Req &r)
	{
		ib_uverbs_create_xsrq cmd;
		if (int e = request(r, cmd))
			return e;
		return create_srq_common(r, cmd);
	}

	int modify_srq(const Req &r)
	{
		ib_uverbs_modify_srq cmd;
		if (int e = request(r, cmd))
			return e;
		uabi_srq_attr a{};
		convert::copy_srq_modify(a, cmd);
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_SRQ, UABI_METHOD_MODIFY, cmd.srq_handle);
		m.in(UABI_ATTR_SRQ_ATTR, a);
		m.in(UABI_ATTR_SRQ_ATTR_MASK, cmd.attr_mask);
		int st = exec(m);
		if (st == kDry)
			return 0;
		return lookup_err(st);
	}

	int query_srq(const Req &r)
	{
		ib_uverbs_query_srq cmd;
		if (int e = request(r, cmd))
			return e;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_SRQ, UABI_METHOD_QUERY, cmd.srq_handle);
		std::size_t off = m.out(UABI_ATTR_SRQ_ATTR, sizeof(uabi_srq_attr));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_srq_attr a = m.get<uabi_srq_attr>(off);
		ib_uverbs_query_srq_resp resp{};
		convert::copy_srq_attr(resp, a);
		return respond(r, &resp, sizeof(resp));
	}

	int destroy_srq(const Req &r)
	{
		return destroy_reporting<ib_uverbs_destroy_srq, ib_uverbs_destroy_srq_resp>(
			r, UABI_OBJ_SRQ, &ib_uverbs_destroy_srq::srq_handle, [this](Handle h, auto &resp) {
				std::uint32_t comp;
				take_events(h, &comp, &resp.events_reported);
			});
	}

	// OPEN_XRCD (upstream) and OPEN_XRC_DOMAIN (OFED): same payload.
	int open_xrcd(const Req &r)
	{
		ib_uverbs_open_xrcd cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = need_ctx())
			return e;
		std::int32_t fd = std::int32_t(cmd.fd);
		// Linux only looks at O_CREAT and O_EXCL.
		std::uint32_t oflags = cmd.oflags & (kOCreat | kOExcl);
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, UABI_METHOD_CREATE);
		m.in(UABI_ATTR_XRCD_FD, fd, kMand | UABI_ATTR_F_FD);
		m.in(UABI_ATTR_XRCD_OFLAGS,
		     std::uint32_t(oflags & (UABI_XRCD_O_CREAT | UABI_XRCD_O_EXCL)));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return st;
		ib_uverbs_open_xrcd_resp resp{};
		resp.xrcd_handle = m.result(0).out_handle;
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_XRCD, resp.xrcd_handle);
	}

	int open_qp(const Req &r)
	{
		ib_uverbs_open_qp cmd;
		if (int e = request(r, cmd))
			return e;
		if (int e = need_ctx())
			return e;
		// ib_open_qp(): only XRC target QPs can be opened, and only
		// existing ones (0xFFFFFFFF would create one in our core).
		if (cmd.qp_type != UABI_QPT_XRC_RECV || cmd.qpn == UABI_XRC_QPN_CREATE)
			return -EINVAL;
		std::uint32_t qpn = cmd.qpn;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP, cmd.pd_handle);
		std::size_t qoff = m.inout(UABI_ATTR_XRCD_QPN, qpn);
		m.in(UABI_ATTR_XRCD_USER_HANDLE, std::uint64_t(cmd.user_handle));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		ib_uverbs_create_qp_resp resp{};
		resp.qp_handle = m.result(0).out_handle;
		resp.qpn = m.get<std::uint32_t>(qoff);
		return respond_created(r, &resp, sizeof(resp), UABI_OBJ_QP, resp.qp_handle);
	}

	// Extended commands the sw device has no use for (flows, WQs,
	// indirection tables): framing checked as for any extended command.
	int ex_unsupported(const Req &) { return -EOPNOTSUPP; }

	// ------------------------------------------------------- OFED dialect
	int ofed_create_xrc_srq(const Req &r)
	{
		uabi_ofed_create_xrc_srq full;
		struct Payload {
			std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
		} p;
		if (int e = request(r, p))
			return e;
		std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
			    sizeof(p.b));
		ib_uverbs_create_xsrq x{};
		x.response = full.response;
		x.user_handle = full.user_handle;
		x.srq_type = 1; // IB_SRQT_XRC
		x.pd_handle = full.pd_handle;
		convert::copy_srq_attr(x, full);
		x.xrcd_handle = full.xrcd_handle;
		x.cq_handle = full.xrc_cq;
		return create_srq_common(r, x);
	}

	int ofed_close_xrc_domain(const Req &r)
	{
		uabi_ofed_close_xrc_domain full;
		struct Payload {
			std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
		} p;
		if (int e = request(r, p))
			return e;
		std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
			    sizeof(p.b));
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, UABI_METHOD_DESTROY, full.xrcd_handle);
		int st = exec(m);
		if (st == kDry)
			return 0;
		return st;
	}

	// create -> register(xrcd, 0xFFFFFFFF)
	int ofed_create_xrc_rcv_qp(const Req &r)
	{
		uabi_ofed_create_xrc_rcv_qp full;
		struct Payload {
			std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
		} p;
		if (int e = request(r, p))
			return e;
		std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
			    sizeof(p.b));
		if (int e = need_ctx())
			return e;
		uabi_qp_init init{};
		init.qp_type = UABI_QPT_XRC_RECV;
		init.sq_sig_all = full.sq_sig_all ? 1 : 0;
		convert::copy_caps(init.cap, full);
		std::uint32_t qpn = UABI_XRC_QPN_CREATE;
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, UABI_XRCD_REG_RCV_QP, full.xrc_domain_handle);
		std::size_t qoff = m.inout(UABI_ATTR_XRCD_QPN, qpn);
		m.in(UABI_ATTR_XRCD_QP_INIT, init);
		m.in(UABI_ATTR_XRCD_USER_HANDLE, std::uint64_t(full.user_handle));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_ofed_create_xrc_rcv_qp_resp resp{};
		resp.qpn = m.get<std::uint32_t>(qoff);
		if (int e = respond(r, &resp, sizeof(resp))) {
			destroy(UABI_OBJ_QP, m.result(0).out_handle);
			return e;
		}
		return 0;
	}

	int ofed_modify_xrc_rcv_qp(const Req &r)
	{
		uabi_ofed_modify_xrc_rcv_qp full;
		struct Payload {
			std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
		} p;
		if (int e = request(r, p))
			return e;
		std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
			    sizeof(p.b));
		std::uint32_t mask = full.attr_mask;
		if (mask & ~kQpAttrStandardBits)
			return -EOPNOTSUPP;
		if (int e = modify_precheck(full, mask))
			return e;
		// What Linux ignores for XRC_TGT the core ignores too.
		uabi_qp_attr a = convert::to_uabi_modify(full, mask);
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, UABI_XRCD_MODIFY_RCV_QP, full.xrc_domain_handle);
		m.in(UABI_ATTR_XRCD_QPN, full.qp_num);
		m.in(UABI_ATTR_XRCD_QP_ATTR, a);
		m.in(UABI_ATTR_XRCD_QP_ATTR_MASK, mask);
		int st = exec(m);
		if (st == kDry)
			return 0;
		return lookup_err(st);
	}

	int ofed_query_xrc_rcv_qp(const Req &r)
	{
		uabi_ofed_query_xrc_rcv_qp full;
		struct Payload {
			std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
		} p;
		if (int e = request(r, p))
			return e;
		std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
			    sizeof(p.b));
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, UABI_XRCD_QUERY_RCV_QP, full.xrc_domain_handle);
		m.in(UABI_ATTR_XRCD_QPN, full.qp_num);
		std::size_t off = m.out(UABI_ATTR_XRCD_QP_ATTR, sizeof(uabi_qp_attr));
		int st = exec(m);
		if (st == kDry)
			return 0;
		if (st)
			return lookup_err(st);
		uabi_qp_attr a = m.get<uabi_qp_attr>(off);
		uabi_qp_init init{};
		init.cap = a.cap;
		ib_uverbs_query_qp_resp resp = convert::to_legacy(a, init);
		return respond(r, &resp, sizeof(resp));
	}

	int ofed_reg_common(const Req &r, std::uint16_t method)
	{
		uabi_ofed_reg_xrc_rcv_qp full;
		struct Payload {
			std::uint8_t b[sizeof(full) - sizeof(ib_uverbs_cmd_hdr)];
		} p;
		if (int e = request(r, p))
			return e;
		std::memcpy(reinterpret_cast<std::byte *>(&full) + sizeof(ib_uverbs_cmd_hdr), p.b,
			    sizeof(p.b));
		if (method == UABI_XRCD_REG_RCV_QP && full.qp_num == UABI_XRC_QPN_CREATE)
			return -EINVAL; // registers on an existing QP only
		Wire m = w();
		m.begin();
		m.cmd(UABI_OBJ_XRCD, method, full.xrc_domain_handle);
		if (method == UABI_XRCD_REG_RCV_QP)
			m.inout(UABI_ATTR_XRCD_QPN, full.qp_num);
		else
			m.in(UABI_ATTR_XRCD_QPN, full.qp_num);
		int st = exec(m);
		if (st == kDry)
			return 0;
		return lookup_err(st);
	}
	int ofed_reg_xrc_rcv_qp(const Req &r) { return ofed_reg_common(r, UABI_XRCD_REG_RCV_QP); }
	int ofed_unreg_xrc_rcv_qp(const Req &r)
	{
		return ofed_reg_common(r, UABI_XRCD_UNREG_RCV_QP);
	}

	// ------------------------------------------------------------- events
	long read_event(int fd, void *buf, std::size_t count, bool nonblock)
	{
		bool async = fd == async_fd && async_fd >= 0;
		Handle h = async ? async_handle : 0;
		if (!async && channel_handle(fd, &h))
			return -EBADF;
		std::size_t want =
		    async ? sizeof(ib_uverbs_async_event_desc) : sizeof(ib_uverbs_comp_event_desc);
		if (count < want)
			return -EINVAL;
		for (;;) {
			Wire m = w();
			m.begin();
			m.cmd(async ? UABI_OBJ_ASYNC_EVENT : UABI_OBJ_COMP_CHANNEL,
			      UABI_EVQ_GET_EVENT, h);
			std::size_t off = m.out(UABI_ATTR_EVQ_EVENT, sizeof(uabi_event));
			int st = exec(m);
			if (st == -EAGAIN && !nonblock) {
				pollfd p{fd, POLLIN, 0};
				if (poll(&p, 1, -1) < 0 && errno != EINTR)
					return -errno;
				continue;
			}
			if (st)
				return st;
			uabi_event ev = m.get<uabi_event>(off);
			int e;
			if (async) {
				ib_uverbs_async_event_desc d{};
				d.element = ev.element;
				d.event_type = ev.event_type;
				// An XRC receive QP registered without a user
				// handle (OFED's CREATE/REG_XRC_RCV_QP): as the
				// OFED kernel reported it, the QP number, flagged.
				if (ev.xrc_qpn && !ev.element) {
					d.element = ev.xrc_qpn;
					d.event_type |= UABI_OFED_XRC_QP_EVENT_FLAG;
				}
				e = copy_to_user(reinterpret_cast<std::uintptr_t>(buf), &d,
						 sizeof(d));
				if (ev.object_handle)
					events_of(ev.object_handle).async++;
			} else {
				ib_uverbs_comp_event_desc d{};
				d.cq_handle = ev.element;
				e = copy_to_user(reinterpret_cast<std::uintptr_t>(buf), &d,
						 sizeof(d));
				if (ev.object_handle)
					events_of(ev.object_handle).comp++;
			}
			return e ? -e : long(want);
		}
	}

	int release_event_fd(int fd)
	{
		if (fd == async_fd && fd >= 0) {
			// libibverbs closes the async fd when it closes the
			// device; the queue goes with the context.
			async_fd = -1;
			return 0;
		}
		for (std::size_t i = 0; i < channels.size(); i++) {
			if (channels[i].fd != fd)
				continue;
			Handle h = channels[i].handle;
			channels.erase(channels.begin() + long(i));
			Wire m = w();
			m.begin();
			m.cmd(UABI_OBJ_COMP_CHANNEL, UABI_METHOD_DESTROY, h);
			if (exec(m) == -EBUSY)
				doomed.push_back(h); // a CQ still uses it
			return 0;
		}
		return ENOENT;
	}
};

using I = Translator::Impl;
using K = I::K;

#define RQ(s) std::uint16_t(sizeof(s))
#define END(s, m) std::uint16_t(offsetof(s, m) + sizeof(((s *)nullptr)->m))

// Sizes as Linux declares them (UAPI_DEF_WRITE_* in uverbs_cmd.c).
const I::Spec I::kUpstream[] = {
    /* 0 GET_CONTEXT */ {K::UdataIo, RQ(ib_uverbs_get_context), RQ(ib_uverbs_get_context_resp),
			 &I::get_context},
    /* 1 QUERY_DEVICE */
    {K::Io, RQ(ib_uverbs_query_device), RQ(ib_uverbs_query_device_resp), &I::query_device},
    /* 2 QUERY_PORT */
    {K::Io, RQ(ib_uverbs_query_port), RQ(ib_uverbs_query_port_resp), &I::query_port},
    /* 3 ALLOC_PD */
    {K::UdataIo, RQ(ib_uverbs_alloc_pd), RQ(ib_uverbs_alloc_pd_resp), &I::alloc_pd},
    /* 4 DEALLOC_PD */ {K::I, RQ(ib_uverbs_dealloc_pd), 0, &I::dealloc_pd},
    /* 5 CREATE_AH */
    {K::UdataIo, RQ(ib_uverbs_create_ah), RQ(ib_uverbs_create_ah_resp), &I::create_ah},
    /* 6 MODIFY_AH */ {K::NotSupp, 0, 0, nullptr},
    /* 7 QUERY_AH */ {K::NotSupp, 0, 0, nullptr},
    /* 8 DESTROY_AH */ {K::I, RQ(ib_uverbs_destroy_ah), 0, &I::destroy_ah},
    /* 9 REG_MR */ {K::UdataIo, RQ(ib_uverbs_reg_mr), RQ(ib_uverbs_reg_mr_resp), &I::reg_mr},
    /* 10 REG_SMR */ {K::NotSupp, 0, 0, nullptr},
    /* 11 REREG_MR */ {K::NotSupp, 0, 0, nullptr},
    /* 12 QUERY_MR */ {K::NotSupp, 0, 0, nullptr},
    /* 13 DEREG_MR */ {K::I, RQ(ib_uverbs_dereg_mr), 0, &I::dereg_mr},
    /* 14 ALLOC_MW */
    {K::UdataIo, RQ(ib_uverbs_alloc_mw), RQ(ib_uverbs_alloc_mw_resp), &I::alloc_mw},
    /* 15 BIND_MW */ {K::NotSupp, 0, 0, nullptr},
    /* 16 DEALLOC_MW */ {K::I, RQ(ib_uverbs_dealloc_mw), 0, &I::dealloc_mw},
    /* 17 CREATE_COMP_CHANNEL */
    {K::Io, RQ(ib_uverbs_create_comp_channel), RQ(ib_uverbs_create_comp_channel_resp),
     &I::create_comp_channel},
    /* 18 CREATE_CQ */
    {K::UdataIo, RQ(ib_uverbs_create_cq), RQ(ib_uverbs_create_cq_resp), &I::create_cq},
    /* 19 RESIZE_CQ */
    {K::UdataIo, RQ(ib_uverbs_resize_cq), RQ(ib_uverbs_resize_cq_resp), &I::resize_cq},
    /* 20 DESTROY_CQ */
    {K::Io, RQ(ib_uverbs_destroy_cq), RQ(ib_uverbs_destroy_cq_resp), &I::destroy_cq},
    /* 21 POLL_CQ */ {K::NotSupp, 0, 0, nullptr},
    /* 22 PEEK_CQ */ {K::NotSupp, 0, 0, nullptr},
    /* 23 REQ_NOTIFY_CQ */ {K::NotSupp, 0, 0, nullptr},
    /* 24 CREATE_QP */
    {K::UdataIo, RQ(ib_uverbs_create_qp), RQ(ib_uverbs_create_qp_resp), &I::create_qp},
    /* 25 QUERY_QP */ {K::Io, RQ(ib_uverbs_query_qp), RQ(ib_uverbs_query_qp_resp), &I::query_qp},
    /* 26 MODIFY_QP */ {K::I, RQ(ib_uverbs_modify_qp), 0, &I::modify_qp},
    /* 27 DESTROY_QP */
    {K::Io, RQ(ib_uverbs_destroy_qp), RQ(ib_uverbs_destroy_qp_resp), &I::destroy_qp},
    /* 28 POST_SEND */ {K::NotSupp, 0, 0, nullptr},
    /* 29 POST_RECV */ {K::NotSupp, 0, 0, nullptr},
    /* 30 ATTACH_MCAST */ {K::NotSupp, 0, 0, nullptr},
    /* 31 DETACH_MCAST */ {K::NotSupp, 0, 0, nullptr},
    /* 32 CREATE_SRQ */
    {K::UdataIo, RQ(ib_uverbs_create_srq), RQ(ib_uverbs_create_srq_resp), &I::create_srq},
    /* 33 MODIFY_SRQ */ {K::UdataI, RQ(ib_uverbs_modify_srq), 0, &I::modify_srq},
    /* 34 QUERY_SRQ */
    {K::Io, RQ(ib_uverbs_query_srq), RQ(ib_uverbs_query_srq_resp), &I::query_srq},
    /* 35 DESTROY_SRQ */
    {K::Io, RQ(ib_uverbs_destroy_srq), RQ(ib_uverbs_destroy_srq_resp), &I::destroy_srq},
    /* 36 POST_SRQ_RECV */ {K::NotSupp, 0, 0, nullptr},
    /* 37 OPEN_XRCD */
    {K::UdataIo, RQ(ib_uverbs_open_xrcd), RQ(ib_uverbs_open_xrcd_resp), &I::open_xrcd},
    /* 38 CLOSE_XRCD */ {K::I, RQ(ib_uverbs_close_xrcd), 0, &I::close_xrcd},
    /* 39 CREATE_XSRQ */
    {K::UdataIo, RQ(ib_uverbs_create_xsrq), RQ(ib_uverbs_create_srq_resp), &I::create_xsrq},
    /* 40 OPEN_QP */ {K::UdataIo, RQ(ib_uverbs_open_qp), RQ(ib_uverbs_create_qp_resp), &I::open_qp},
};
const std::size_t I::kNumUpstream = sizeof(kUpstream) / sizeof(kUpstream[0]);
static_assert(sizeof(I::kUpstream) / sizeof(I::Spec) == IB_USER_VERBS_CMD_OPEN_QP + 1);

#define OFED_RQ(s) std::uint16_t(sizeof(s) - sizeof(ib_uverbs_cmd_hdr))
const I::Spec I::kOfed[] = {
    /* 37 CREATE_XRC_SRQ */ {K::UdataIo, OFED_RQ(uabi_ofed_create_xrc_srq),
			     RQ(ib_uverbs_create_srq_resp), &I::ofed_create_xrc_srq},
    /* 38 OPEN_XRC_DOMAIN */
    {K::UdataIo, OFED_RQ(uabi_ofed_open_xrc_domain), RQ(uabi_ofed_open_xrc_domain_resp),
     &I::open_xrcd},
    /* 39 CLOSE_XRC_DOMAIN */
    {K::UdataI, OFED_RQ(uabi_ofed_close_xrc_domain), 0, &I::ofed_close_xrc_domain},
    /* 40 CREATE_XRC_RCV_QP */
    {K::UdataIo, OFED_RQ(uabi_ofed_create_xrc_rcv_qp), RQ(uabi_ofed_create_xrc_rcv_qp_resp),
     &I::ofed_create_xrc_rcv_qp},
    /* 41 MODIFY_XRC_RCV_QP */
    {K::UdataI, OFED_RQ(uabi_ofed_modify_xrc_rcv_qp), 0, &I::ofed_modify_xrc_rcv_qp},
    /* 42 QUERY_XRC_RCV_QP */
    {K::UdataIo, OFED_RQ(uabi_ofed_query_xrc_rcv_qp), RQ(ib_uverbs_query_qp_resp),
     &I::ofed_query_xrc_rcv_qp},
    /* 43 REG_XRC_RCV_QP */
    {K::UdataI, OFED_RQ(uabi_ofed_reg_xrc_rcv_qp), 0, &I::ofed_reg_xrc_rcv_qp},
    /* 44 UNREG_XRC_RCV_QP */
    {K::UdataI, OFED_RQ(uabi_ofed_reg_xrc_rcv_qp), 0, &I::ofed_unreg_xrc_rcv_qp},
};
static_assert(sizeof(I::kOfed) / sizeof(I::Spec) ==
	      UABI_OFED_CMD_LAST - UABI_OFED_CMD_CREATE_XRC_SRQ + 1);

// Extended commands: req/resp are the minimum sizes Linux demands
// (UAPI_DEF_WRITE_IO_EX: up to and including the named member).
const I::Spec I::kEx[] = {
    /* 0 */ {K::NotSupp, 0, 0, nullptr},
    /* 1 QUERY_DEVICE */
    {K::Ex, END(ib_uverbs_ex_query_device, reserved),
     END(ib_uverbs_ex_query_device_resp, response_length), &I::ex_query_device},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 2-4
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 5-7
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 8-10
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 11-13
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 14-16
    {K::NotSupp, 0, 0, nullptr}, // 17
				 /* 18 CREATE_CQ */
    {K::Ex, END(ib_uverbs_ex_create_cq, reserved),
     END(ib_uverbs_ex_create_cq_resp, response_length), &I::ex_create_cq},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 19-21
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 22-23
				 /* 24 CREATE_QP */
    {K::Ex, END(ib_uverbs_ex_create_qp, comp_mask),
     END(ib_uverbs_ex_create_qp_resp, response_length), &I::ex_create_qp},
    {K::NotSupp, 0, 0, nullptr}, // 25
				 /* 26 MODIFY_QP */
    {K::Ex, END(ib_uverbs_ex_modify_qp, base), END(ib_uverbs_ex_modify_qp_resp, response_length),
     &I::ex_modify_qp},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 27-29
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 30-32
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 33-35
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 36-38
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 39-41
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 42-44
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 45-47
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 48-49
				 /* 50 CREATE_FLOW */
    {K::Ex, END(ib_uverbs_create_flow, flow_attr), END(ib_uverbs_create_flow_resp, flow_handle),
     &I::ex_unsupported},
    /* 51 DESTROY_FLOW */ {K::Ex, RQ(ib_uverbs_destroy_flow), 0, &I::ex_unsupported},
    /* 52 CREATE_WQ */
    {K::Ex, END(ib_uverbs_ex_create_wq, max_sge), END(ib_uverbs_ex_create_wq_resp, wqn),
     &I::ex_unsupported},
    /* 53 MODIFY_WQ */ {K::Ex, END(ib_uverbs_ex_modify_wq, curr_wq_state), 0, &I::ex_unsupported},
    /* 54 DESTROY_WQ */
    {K::Ex, END(ib_uverbs_ex_destroy_wq, wq_handle), END(ib_uverbs_ex_destroy_wq_resp, reserved),
     &I::ex_unsupported},
    /* 55 CREATE_RWQ_IND_TBL */
    {K::Ex, END(ib_uverbs_ex_create_rwq_ind_table, log_ind_tbl_size),
     END(ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_num), &I::ex_unsupported},
    /* 56 DESTROY_RWQ_IND_TBL */
    {K::Ex, RQ(ib_uverbs_ex_destroy_rwq_ind_table), 0, &I::ex_unsupported},
    /* 57 MODIFY_CQ */ {K::Ex, RQ(ib_uverbs_ex_modify_cq), 0, &I::ex_modify_cq},
};
const std::size_t I::kNumEx = sizeof(kEx) / sizeof(kEx[0]);
static_assert(sizeof(I::kEx) / sizeof(I::Spec) == IB_USER_VERBS_EX_CMD_MODIFY_CQ + 1);
const I::Spec I::kNotSupp = {K::NotSupp, 0, 0, nullptr};

#undef RQ
#undef END
#undef OFED_RQ

// ------------------------------------------------------------- Translator

const char *dialect_name(Dialect d)
{
	return d == Dialect::Ofed ? "ofed" : "upstream";
}

Result<Dialect> parse_dialect(std::string_view s)
{
	if (s == "upstream")
		return Dialect::Upstream;
	if (s == "ofed")
		return Dialect::Ofed;
	return make_error(EINVAL);
}

Result<Dialect> dialect_from_env()
{
	const char *v = std::getenv("UABI_LEGACY_DIALECT");
	if (!v || !*v)
		return Dialect::Upstream;
	return parse_dialect(v);
}

Translator::Translator(Context ctx, Dialect dialect)
    : p_(std::make_unique<Impl>(std::move(ctx), dialect))
{
}

Translator::~Translator() = default;

Result<std::unique_ptr<Translator>> Translator::open()
{
	auto d = dialect_from_env();
	if (!d)
		return make_error(d.error());
	auto c = Context::open();
	if (!c)
		return make_error(c.error());
	return std::make_unique<Translator>(std::move(*c), *d);
}

Result<std::unique_ptr<Translator>> Translator::open(Backend b, Dialect d)
{
	auto c = Context::open(b);
	if (!c)
		return make_error(c.error());
	return std::make_unique<Translator>(std::move(*c), d);
}

long Translator::execute(const void *buf, std::size_t count, std::size_t avail) noexcept
{
	p_->dry = false;
	executed_++;
	return p_->run(buf, count, avail);
}

ssize_t Translator::write(const void *buf, std::size_t count) noexcept
{
	long r = execute(buf, count, count);
	if (r < 0) {
		errno = int(-r);
		return -1;
	}
	return ssize_t(r);
}

int Translator::translate_only(const void *buf, std::size_t count) noexcept
{
	p_->dry = true;
	long r = p_->run(buf, count, count);
	p_->dry = false;
	return r < 0 ? int(r) : 0;
}

Dialect Translator::dialect() const noexcept
{
	return p_->dialect;
}
void Translator::set_dialect(Dialect d) noexcept
{
	p_->dialect = d;
}
bool Translator::has_context() const noexcept
{
	return p_->has_ctx;
}
Context &Translator::context() noexcept
{
	return p_->ctx;
}

bool Translator::is_event_fd(int fd) const noexcept
{
	if (fd < 0)
		return false;
	if (fd == p_->async_fd)
		return true;
	Handle h;
	return p_->channel_handle(fd, &h) == 0;
}

int Translator::event_fds(int *out, int max) const noexcept
{
	int n = 0;
	auto put = [&](int fd) {
		if (n < max)
			out[n] = fd;
		n++;
	};
	if (p_->async_fd >= 0)
		put(p_->async_fd);
	for (const auto &c : p_->channels)
		put(c.fd);
	return n;
}

int Translator::release_event_fd(int fd) noexcept
{
	return p_->release_event_fd(fd);
}

long Translator::read_event(int fd, void *buf, std::size_t count, bool nonblock) noexcept
{
	return p_->read_event(fd, buf, count, nonblock);
}

} // namespace uabi::legacy
