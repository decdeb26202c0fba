// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Control: the new path (one uabi::Context call per verb) and the write
// path (rdma-core 44 write-mode bytes → legacy translator → same backend).
#include "control_path.hpp"
#include "verbs_impl.hpp"

#include <uabi/legacy.hpp>
#include <uabi/convert/device.hpp>
#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>
#include <uabi/legacy_encoder.hpp>
#include <uabi/ofed_verbs_abi.h>

#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <string_view>
#include <unistd.h>

namespace uabi::verbs {

namespace {

template <class T> Result<void> to_void(const Result<T> &r)
{
	if (!r)
		return make_error(r.error());
	return {};
}

} // namespace

Result<ControlMode> control_mode_from_env()
{
	const char *v = std::getenv("UABI_VERBS_PATH");
	if (!v || !*v)
		return ControlMode::New;
	std::string_view s(v);
	if (s == "new" || s == "ioctl")
		return ControlMode::New;
	if (s == "write")
		return ControlMode::Write;
	return make_error(EINVAL);
}

Result<std::unique_ptr<Control>> Control::open(ControlMode mode)
{
	auto c = Context::open();
	if (!c)
		return make_error(c.error());
	std::unique_ptr<Control> ctl(new Control());
	if (mode == ControlMode::New) {
		ctl->own_ = std::make_unique<Context>(std::move(*c));
		ctl->ctx_ = ctl->own_.get();
		auto q = ctl->ctx_->create_async_event_queue();
		if (!q)
			return make_error(q.error());
		ctl->async_ = *q;
		return ctl;
	}
	ctl->tr_ = std::make_unique<legacy::Translator>(std::move(*c), legacy::Dialect::Upstream);
	ctl->ctx_ = &ctl->tr_->context();
	ctl->enc_ = std::make_unique<legacy::Encoder>(*ctl->tr_);
	auto lc = ctl->enc_->get_context();
	if (!lc)
		return make_error(lc.error());
	ctl->async_.handle = 0;
	ctl->async_.fd = lc->async_fd;
	return ctl;
}

std::uint64_t Control::legacy_commands() const noexcept
{
	return tr_ ? tr_->commands_executed() : 0;
}

Control::~Control()
{
	// The write path's async fd is the translator's dup (as the kernel's
	// was the application's): closed with the context, like libibverbs'
	// ibv_close_device() did.
	if (tr_ && async_.fd >= 0) {
		tr_->release_event_fd(async_.fd);
		::close(async_.fd);
	}
}

// Every write-path method: one encoder call under the translator's lock.
#define WRITE_PATH(...)                                                                            \
	do {                                                                                       \
		if (tr_) {                                                                         \
			std::lock_guard<std::mutex> lk(mu_);                                       \
			__VA_ARGS__;                                                                    \
		}                                                                                  \
	} while (0)

Result<uabi_event> Control::get_async_event()
{
	WRITE_PATH({
		ib_uverbs_async_event_desc d{};
		long n = tr_->read_event(async_.fd, &d, sizeof(d), true);
		if (n < 0)
			return make_error(int(-n));
		uabi_event e{};
		e.element = d.element;
		e.event_type = d.event_type;
		return e;
	});
	auto r = ctx_->get_async_event(async_.handle);
	// A registration without a user handle (the OFED calls') hears of
	// its receive QP as OFED told it: flag, and the QP number.
	if (r && r->xrc_qpn && !r->element) {
		r->element = r->xrc_qpn;
		r->event_type |= UABI_OFED_XRC_QP_EVENT_FLAG;
	}
	return r;
}

Result<DeviceInfo> Control::query_device()
{
	WRITE_PATH({
		auto r = enc_->query_device();
		if (!r)
			return make_error(r.error());
		DeviceInfo d{};
		d.attr = convert::to_uabi(*r);
		return d;
	});
	return ctx_->query_device();
}

Result<uabi_port_attr> Control::query_port(std::uint32_t port)
{
	WRITE_PATH({
		if (port > 0xff)
			return make_error(EINVAL);
		auto r = enc_->query_port(std::uint8_t(port));
		if (!r)
			return make_error(r.error());
		return convert::to_uabi(*r);
	});
	return ctx_->query_port(port);
}

Result<Handle> Control::alloc_pd()
{
	WRITE_PATH(return enc_->alloc_pd());
	return ctx_->alloc_pd();
}

Result<void> Control::dealloc_pd(Handle pd)
{
	WRITE_PATH(return enc_->dealloc_pd(pd));
	return ctx_->dealloc_pd(pd);
}

Result<MrInfo> Control::reg_mr(Handle pd, const void *addr, std::uint64_t length,
			       std::uint32_t access, std::uint64_t iova)
{
	WRITE_PATH(return enc_->reg_mr(pd, addr, std::size_t(length), iova, int(access)));
	return ctx_->reg_mr(Ref(pd), addr, length, access, iova);
}

Result<void> Control::dereg_mr(Handle mr)
{
	WRITE_PATH(return enc_->dereg_mr(mr));
	return ctx_->dereg_mr(mr);
}

Result<EvqInfo> Control::create_comp_channel()
{
	WRITE_PATH({
		auto fd = enc_->create_comp_channel();
		if (!fd)
			return make_error(fd.error());
		return EvqInfo{0, *fd};
	});
	return ctx_->create_comp_channel();
}

Result<void> Control::destroy_comp_channel(const EvqInfo &ch)
{
	WRITE_PATH({
		// libibverbs' ibv_destroy_comp_channel(): close(2) of the fd,
		// which the kernel refuses nothing; the translator keeps the
		// channel while a CQ still uses it.
		int e = tr_->release_event_fd(ch.fd);
		if (e)
			return make_error(e);
		::close(ch.fd);
		return {};
	});
	return ctx_->destroy_comp_channel(ch.handle);
}

Result<uabi_event> Control::get_comp_event(const EvqInfo &ch)
{
	WRITE_PATH({
		ib_uverbs_comp_event_desc d{};
		long n = tr_->read_event(ch.fd, &d, sizeof(d), true);
		if (n < 0)
			return make_error(int(-n));
		uabi_event e{};
		e.element = d.cq_handle;
		return e;
	});
	return ctx_->get_comp_event(ch.handle);
}

Result<CqInfo> Control::create_cq(std::uint32_t cqe, const EvqInfo *channel,
				  std::uint32_t comp_vector, std::uint64_t user_handle)
{
	WRITE_PATH({
		auto r = enc_->create_cq(int(cqe), channel ? channel->fd : -1, int(comp_vector),
					 user_handle);
		if (!r)
			return r;
		// The write ABI's response has no CQ number; a provider got
		// it in its private response words.  Ours asks the object.
		Command q(UABI_OBJ_CQ, UABI_METHOD_QUERY, r->handle);
		OutAttr o = q.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP, kMandatory);
		auto m = ctx_->call(std::move(q));
		uabi_cq_resp resp{};
		if (!m || !m->read(0, o, resp)) {
			(void)enc_->destroy_cq(r->handle);
			return make_error(m ? EPROTO : m.error());
		}
		CqInfo info = *r;
		info.cqn = resp.cqn;
		return info;
	});
	CqCreate cc;
	cc.cqe = cqe;
	if (channel)
		cc.channel = Ref(channel->handle);
	cc.comp_vector = comp_vector;
	cc.user_handle = user_handle;
	return ctx_->create_cq(cc);
}

Result<uabi_cq_resp> Control::resize_cq(Handle cq, std::uint32_t cqe)
{
	WRITE_PATH({
		auto r = enc_->resize_cq(cq, int(cqe));
		if (!r)
			return make_error(r.error());
		return uabi_cq_resp{*r, 0};
	});
	return ctx_->resize_cq(cq, cqe);
}

Result<void> Control::destroy_cq(Handle cq)
{
	WRITE_PATH(return to_void(enc_->destroy_cq(cq)));
	return ctx_->destroy_cq(cq);
}

Result<SrqInfo> Control::create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
				    const uabi_srq_attr &attr, std::uint64_t user_handle)
{
	WRITE_PATH({
		ibv_srq_attr a = convert::to_ibv(attr);
		if (type == IBV_SRQT_BASIC)
			return enc_->create_srq(pd, a, user_handle);
		return enc_->create_xsrq(pd, ibv_srq_type(type), xrcd, cq, a, user_handle);
	});
	SrqCreate sc;
	sc.pd = Ref(pd);
	if (type == IBV_SRQT_XRC) {
		sc.xrcd = Ref(xrcd);
		sc.cq = Ref(cq);
	}
	sc.init.attr = attr;
	sc.init.srq_type = type;
	sc.user_handle = user_handle;
	return ctx_->create_srq(sc);
}

Result<void> Control::modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask)
{
	WRITE_PATH(return enc_->modify_srq(srq, convert::to_ibv(attr), int(mask)));
	return ctx_->modify_srq(srq, attr, mask);
}

Result<uabi_srq_attr> Control::query_srq(Handle srq)
{
	WRITE_PATH({
		auto r = enc_->query_srq(srq);
		if (!r)
			return make_error(r.error());
		return convert::to_uabi(*r);
	});
	return ctx_->query_srq(srq);
}

Result<void> Control::destroy_srq(Handle srq)
{
	WRITE_PATH(return to_void(enc_->destroy_srq(srq)));
	return ctx_->destroy_srq(srq);
}

Result<Handle> Control::open_xrcd(int fd, int oflags)
{
	WRITE_PATH(return enc_->open_xrcd(fd, oflags));
	std::uint32_t of = 0;
	if (oflags & O_CREAT)
		of |= UABI_XRCD_O_CREAT;
	if (oflags & O_EXCL)
		of |= UABI_XRCD_O_EXCL;
	return ctx_->open_xrcd(fd, of);
}

Result<void> Control::close_xrcd(Handle xrcd)
{
	WRITE_PATH(return enc_->close_xrcd(xrcd));
	return ctx_->close_xrcd(xrcd);
}

Result<QpInfo> Control::create_qp(const QpArgs &a)
{
	const bool xrc_recv = a.qp_type == IBV_QPT_XRC_RECV;
	WRITE_PATH({
		legacy::LegacyQpInit in;
		in.pd = a.pd;
		in.send_cq = a.send_cq;
		in.recv_cq = a.recv_cq;
		in.srq = a.srq;
		in.qp_type = ibv_qp_type(a.qp_type);
		in.cap = convert::to_ibv(a.cap);
		in.sq_sig_all = a.sq_sig_all;
		in.user_handle = a.user_handle;
		return enc_->create_qp(in);
	});
	QpCreate qc;
	if (xrc_recv) {
		qc.xrcd = Ref(a.pd);
	} else {
		qc.pd = Ref(a.pd);
		qc.send_cq = Ref(a.send_cq);
		if (a.recv_cq)
			qc.recv_cq = Ref(a.recv_cq);
		if (a.srq)
			qc.srq = Ref(a.srq);
	}
	qc.init.cap = a.cap;
	qc.init.qp_type = a.qp_type;
	qc.init.sq_sig_all = a.sq_sig_all ? 1 : 0;
	qc.user_handle = a.user_handle;
	return ctx_->create_qp(qc);
}

Result<QpInfo> Control::open_qp(Handle xrcd, std::uint32_t qpn, std::uint64_t user_handle)
{
	WRITE_PATH(return enc_->open_qp(xrcd, qpn, IBV_QPT_XRC_RECV, user_handle));
	auto r = ctx_->register_xrc_rcv_qp(xrcd, qpn, {}, user_handle);
	if (!r)
		return make_error(r.error());
	QpInfo q{};
	q.handle = *r;
	q.resp.qpn = qpn;
	return q;
}

Result<void> Control::modify_qp(Handle qp, const struct ibv_qp_attr &attr, std::uint32_t mask)
{
	WRITE_PATH(return enc_->modify_qp(qp, attr, int(mask)));
	return ctx_->modify_qp(qp, convert::to_uabi(attr), mask);
}

Result<QpQuery> Control::query_qp(Handle qp, std::uint32_t mask)
{
	WRITE_PATH({
		auto r = enc_->query_qp(qp, int(mask));
		if (!r)
			return make_error(r.error());
		return convert::to_uabi(r->get());
	});
	return ctx_->query_qp(qp, mask);
}

Result<void> Control::destroy_qp(Handle qp)
{
	WRITE_PATH(return to_void(enc_->destroy_qp(qp)));
	return ctx_->destroy_qp(qp);
}

Result<Handle> Control::create_ah(Handle pd, const struct ibv_ah_attr &attr)
{
	WRITE_PATH(return enc_->create_ah(pd, attr, 0));
	return ctx_->create_ah(Ref(pd), convert::to_uabi(attr));
}

Result<void> Control::destroy_ah(Handle ah)
{
	WRITE_PATH(return enc_->destroy_ah(ah));
	return ctx_->destroy_ah(ah);
}

// ------------------------------------------------------------ OFED XRC
// The translator speaks one dialect at a time (commands 37-44 differ):
// OFED's for these, upstream's for everything else.
namespace {
struct OfedDialect {
	legacy::Translator &t;
	explicit OfedDialect(legacy::Translator &tr) : t(tr) { t.set_dialect(legacy::Dialect::Ofed); }
	~OfedDialect() { t.set_dialect(legacy::Dialect::Upstream); }
};
} // namespace

#define OFED_PATH(...)                                                                             \
	WRITE_PATH({                                                                               \
		OfedDialect ofed_(*tr_);                                                           \
		__VA_ARGS__;                                                                       \
	})

Result<Handle> Control::ofed_open_xrc_domain(int fd, int oflags)
{
	OFED_PATH(return enc_->ofed_open_xrc_domain(fd, oflags));
	return open_xrcd(fd, oflags); // the same XRCD on the new path
}

Result<void> Control::ofed_close_xrc_domain(Handle xrcd)
{
	OFED_PATH(return enc_->ofed_close_xrc_domain(xrcd));
	return ctx_->close_xrcd(xrcd);
}

Result<SrqInfo> Control::ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
					     const uabi_srq_attr &attr, std::uint64_t user_handle)
{
	OFED_PATH(return enc_->ofed_create_xrc_srq(pd, xrcd, cq, convert::to_ibv(attr), user_handle));
	return create_srq(pd, IBV_SRQT_XRC, xrcd, cq, attr, user_handle);
}

Result<std::uint32_t> Control::ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
						      bool sq_sig_all)
{
	OFED_PATH(return enc_->ofed_create_xrc_rcv_qp(xrcd, convert::to_ibv(cap), sq_sig_all, 0));
	uabi_qp_init init{};
	init.cap = cap;
	init.qp_type = UABI_QPT_XRC_RECV;
	init.sq_sig_all = sq_sig_all ? 1 : 0;
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	auto r = ctx_->register_xrc_rcv_qp(xrcd, qpn, init, std::uint64_t(0));
	if (!r)
		return make_error(r.error());
	return qpn;
}

Result<void> Control::ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
					     const struct ibv_qp_attr &attr, std::uint32_t mask)
{
	OFED_PATH(return enc_->ofed_modify_xrc_rcv_qp(xrcd, qpn, attr, int(mask)));
	return ctx_->modify_xrc_rcv_qp(xrcd, qpn, convert::to_uabi(attr), mask);
}

Result<QpQuery> Control::ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn, std::uint32_t mask)
{
	OFED_PATH({
		auto r = enc_->ofed_query_xrc_rcv_qp(xrcd, qpn, int(mask));
		if (!r)
			return make_error(r.error());
		return convert::to_uabi(r->get());
	});
	auto r = ctx_->query_xrc_rcv_qp(xrcd, qpn);
	if (!r)
		return make_error(r.error());
	QpQuery q{};
	q.attr = *r;
	q.init.cap = r->cap;
	q.init.qp_type = UABI_QPT_XRC_RECV;
	return q;
}

Result<void> Control::ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	// OFED's REG never created (the translator answers EINVAL too).
	if (qpn == UABI_XRC_QPN_CREATE)
		return make_error(EINVAL);
	OFED_PATH(return enc_->ofed_reg_xrc_rcv_qp(xrcd, qpn));
	auto r = ctx_->register_xrc_rcv_qp(xrcd, qpn, {}, std::uint64_t(0));
	if (!r)
		return make_error(r.error());
	return {};
}

Result<void> Control::ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	OFED_PATH(return enc_->ofed_unreg_xrc_rcv_qp(xrcd, qpn));
	return ctx_->unregister_xrc_rcv_qp(xrcd, qpn);
}

#undef OFED_PATH
#undef WRITE_PATH

} // namespace uabi::verbs

// Commands the context's legacy translator executed: 0 on the new path.
// (UABI_VERBS_1, ours: lets a test see which path a verb took.)
UABI_EXPORT std::uint64_t uabi_verbs_legacy_commands(struct ibv_context *ctx)
{
	return uabi::verbs::impl_of(ctx)->ctl.legacy_commands();
}
