// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy write() translator: framing of a write() (Linux's
// ib_uverbs_write()/verify_hdr()), the choice of a dialect's table, the
// kernel-format events, and the public Translator.  The handlers and their
// tables are in translator_upstream.cpp, translator_ex.cpp and
// translator_ofed.cpp (translator_impl.hpp); docs/legacy-abi.md lists each
// rule with its source.
#include "translator_impl.hpp"

#include <cstdlib>
#include <poll.h>
#include <unistd.h>

namespace uabi::legacy
{

using I = Translator::Impl;
using K = I::K;

long Translator::Impl::run(const void *vbuf, std::size_t count, std::size_t avail)
{
	auto *buf = static_cast<const std::byte *>(vbuf);
	ib_uverbs_cmd_hdr hdr;
	if (count < sizeof(hdr))
		return -EINVAL;
	std::memcpy(&hdr, buf, sizeof(hdr));

	const std::uint32_t c = hdr.command;
	if (c & ~std::uint32_t(IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_CMD_COMMAND_MASK))
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
		if ((idx == IB_USER_VERBS_CMD_ALLOC_MW || idx == IB_USER_VERBS_CMD_DEALLOC_MW) &&
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
			if (!access_ok(ex.response,
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
			std::memcpy(quirk, buf, std::min<std::size_t>(std::max(avail, count), 24));
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

// ------------------------------------------------------------- events
long Translator::Impl::read_event(int fd, void *buf, std::size_t count, bool nonblock)
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
		m.cmd(async ? UABI_OBJ_ASYNC_EVENT : UABI_OBJ_COMP_CHANNEL, UABI_EVQ_GET_EVENT, h);
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
			e = copy_to_user(reinterpret_cast<std::uintptr_t>(buf), &d, sizeof(d));
			if (ev.object_handle)
				events_of(ev.object_handle).async++;
		} else {
			ib_uverbs_comp_event_desc d{};
			d.cq_handle = ev.element;
			e = copy_to_user(reinterpret_cast<std::uintptr_t>(buf), &d, sizeof(d));
			if (ev.object_handle)
				events_of(ev.object_handle).comp++;
		}
		return e ? -e : long(want);
	}
}

int Translator::Impl::release_event_fd(int fd)
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

const I::Spec I::kNotSupp = {K::NotSupp, 0, 0, nullptr};

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
int Translator::import_context() noexcept
{
	try {
		auto d = p_->ctx.query_device();
		if (!d)
			return -d.error();
		p_->mw_supported = d->attr.max_mw > 0;
		p_->has_ctx = true;
		return 0;
	} catch (...) {
		return -ENOMEM;
	}
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
