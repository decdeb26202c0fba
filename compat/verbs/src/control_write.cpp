// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The write path of the drop-in library's control verbs
// (UABI_VERBS_PATH=write): the bytes rdma-core 44's ibv_cmd_* layer wrote in
// write mode (legacy::Encoder), through the legacy translator, to the same
// backend (control_path.hpp).
#include "control_path.hpp"
#include "verbs_impl.hpp"

#include <uabi/convert/device.hpp>
#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>
#include <uabi/legacy.hpp>
#include <uabi/legacy_encoder.hpp>
#include <uabi/ofed_verbs_abi.h>

#include <unistd.h>

namespace uabi::verbs {

namespace {

template <class T> Result<void> to_void(const Result<T> &r)
{
	if (!r)
		return make_error(r.error());
	return {};
}

// The translator speaks one dialect at a time (commands 37-44 differ):
// OFED's for the OFED XRC verbs, upstream's for everything else.
struct OfedDialect {
	legacy::Translator &t;
	explicit OfedDialect(legacy::Translator &tr) : t(tr)
	{
		t.set_dialect(legacy::Dialect::Ofed);
	}
	~OfedDialect() { t.set_dialect(legacy::Dialect::Upstream); }
};

} // namespace

Result<std::unique_ptr<Control>> WriteControl::open(Context ctx)
{
	std::unique_ptr<WriteControl> c(new WriteControl());
	c->tr_ = std::make_unique<legacy::Translator>(std::move(ctx), legacy::Dialect::Upstream);
	c->ctx_ = &c->tr_->context();
	c->enc_ = std::make_unique<legacy::Encoder>(*c->tr_);
	auto lc = c->enc_->get_context();
	if (!lc)
		return make_error(lc.error());
	c->async_.handle = 0;
	c->async_.fd = lc->async_fd;
	return std::unique_ptr<Control>(std::move(c));
}

Result<std::unique_ptr<Control>> WriteControl::adopt(Context ctx)
{
	std::unique_ptr<WriteControl> c(new WriteControl());
	c->tr_ = std::make_unique<legacy::Translator>(std::move(ctx), legacy::Dialect::Upstream);
	c->ctx_ = &c->tr_->context();
	c->enc_ = std::make_unique<legacy::Encoder>(*c->tr_);
	if (int e = c->tr_->import_context())
		return make_error(-e);
	c->async_.handle = 0;
	c->async_.fd = -1;
	return std::unique_ptr<Control>(std::move(c));
}

WriteControl::~WriteControl()
{
	// The async fd is the translator's dup (as the kernel's was the
	// application's): closed with the context, like libibverbs'
	// ibv_close_device() did.
	if (tr_ && async_.fd >= 0) {
		tr_->release_event_fd(async_.fd);
		::close(async_.fd);
	}
}

std::uint64_t WriteControl::legacy_commands() const noexcept
{
	return tr_->commands_executed();
}

Result<uabi_event> WriteControl::get_async_event()
{
	std::lock_guard<std::mutex> lk(mu_);
	if (async_.fd < 0)
		return make_error(EBADF); // imported: read(2) of fd -1
	ib_uverbs_async_event_desc d{};
	long n = tr_->read_event(async_.fd, &d, sizeof(d), true);
	if (n < 0)
		return make_error(int(-n));
	uabi_event e{};
	e.element = d.element;
	e.event_type = d.event_type;
	return e;
}

Result<DeviceInfo> WriteControl::query_device()
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r = enc_->query_device();
	if (!r)
		return make_error(r.error());
	DeviceInfo d{};
	d.attr = convert::to_uabi(*r);
	return d;
}

Result<uabi_port_attr> WriteControl::query_port(std::uint32_t port)
{
	std::lock_guard<std::mutex> lk(mu_);
	if (port > 0xff)
		return make_error(EINVAL);
	auto r = enc_->query_port(std::uint8_t(port));
	if (!r)
		return make_error(r.error());
	return convert::to_uabi(*r);
}

Result<Handle> WriteControl::alloc_pd()
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->alloc_pd();
}

Result<void> WriteControl::dealloc_pd(Handle pd)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->dealloc_pd(pd);
}

Result<MrInfo> WriteControl::reg_mr(Handle pd, const void *addr, std::uint64_t length,
				    std::uint32_t access, std::uint64_t iova)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->reg_mr(pd, addr, std::size_t(length), iova, int(access));
}

Result<uabi_mr_keys> WriteControl::rereg_mr(Handle mr, int flags, Handle pd, const void *addr,
					     std::uint64_t length, std::uint64_t iova,
					     unsigned access)
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r = enc_->rereg_mr(mr, flags, pd, addr, std::size_t(length), iova, int(access));
	if (!r)
		return make_error(r.error());
	return uabi_mr_keys{r->lkey, r->rkey};
}

Result<void> WriteControl::dereg_mr(Handle mr)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->dereg_mr(mr);
}

Result<MwInfo> WriteControl::alloc_mw(Handle pd, std::uint32_t type)
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r = enc_->alloc_mw(pd, ibv_mw_type(type));
	if (!r)
		return make_error(r.error());
	return MwInfo{r->handle, r->rkey};
}

Result<void> WriteControl::dealloc_mw(Handle mw)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->dealloc_mw(mw);
}

Result<EvqInfo> WriteControl::create_comp_channel()
{
	std::lock_guard<std::mutex> lk(mu_);
	auto fd = enc_->create_comp_channel();
	if (!fd)
		return make_error(fd.error());
	return EvqInfo{0, *fd};
}

Result<void> WriteControl::destroy_comp_channel(const EvqInfo &ch)
{
	std::lock_guard<std::mutex> lk(mu_);
	// libibverbs' ibv_destroy_comp_channel(): close(2) of the fd,
	// which the kernel refuses nothing; the translator keeps the
	// channel while a CQ still uses it.
	int e = tr_->release_event_fd(ch.fd);
	if (e)
		return make_error(e);
	::close(ch.fd);
	return {};
}

Result<uabi_event> WriteControl::get_comp_event(const EvqInfo &ch)
{
	std::lock_guard<std::mutex> lk(mu_);
	ib_uverbs_comp_event_desc d{};
	long n = tr_->read_event(ch.fd, &d, sizeof(d), true);
	if (n < 0)
		return make_error(int(-n));
	uabi_event e{};
	e.element = d.cq_handle;
	return e;
}

Result<CqInfo> WriteControl::create_cq(std::uint32_t cqe, const EvqInfo *channel,
				       std::uint32_t comp_vector, std::uint64_t user_handle)
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r =
	    enc_->create_cq(int(cqe), channel ? channel->fd : -1, int(comp_vector), user_handle);
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
}

Result<uabi_cq_resp> WriteControl::resize_cq(Handle cq, std::uint32_t cqe)
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r = enc_->resize_cq(cq, int(cqe));
	if (!r)
		return make_error(r.error());
	return uabi_cq_resp{*r, 0};
}

Result<void> WriteControl::destroy_cq(Handle cq)
{
	std::lock_guard<std::mutex> lk(mu_);
	return to_void(enc_->destroy_cq(cq));
}

Result<SrqInfo> WriteControl::create_srq(Handle pd, std::uint32_t type, Handle xrcd, Handle cq,
					 const uabi_srq_attr &attr, std::uint64_t user_handle)
{
	std::lock_guard<std::mutex> lk(mu_);
	ibv_srq_attr a = convert::to_ibv(attr);
	if (type == IBV_SRQT_BASIC)
		return enc_->create_srq(pd, a, user_handle);
	return enc_->create_xsrq(pd, ibv_srq_type(type), xrcd, cq, a, user_handle);
}

Result<void> WriteControl::modify_srq(Handle srq, const uabi_srq_attr &attr, std::uint32_t mask)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->modify_srq(srq, convert::to_ibv(attr), int(mask));
}

Result<uabi_srq_attr> WriteControl::query_srq(Handle srq)
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r = enc_->query_srq(srq);
	if (!r)
		return make_error(r.error());
	return convert::to_uabi(*r);
}

Result<void> WriteControl::destroy_srq(Handle srq)
{
	std::lock_guard<std::mutex> lk(mu_);
	return to_void(enc_->destroy_srq(srq));
}

Result<Handle> WriteControl::open_xrcd(int fd, int oflags)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->open_xrcd(fd, oflags);
}

Result<void> WriteControl::close_xrcd(Handle xrcd)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->close_xrcd(xrcd);
}

Result<QpInfo> WriteControl::create_qp(const QpArgs &a)
{
	std::lock_guard<std::mutex> lk(mu_);
	// OFED's XRC QP is written as OFED's libibverbs wrote it: type 5,
	// the domain in srq_handle.
	if (a.xrcd && a.qp_type != IBV_QPT_XRC_RECV) {
		OfedDialect ofed(*tr_);
		legacy::LegacyQpInit in;
		in.pd = a.pd;
		in.send_cq = in.recv_cq = a.send_cq;
		in.srq = a.xrcd;
		in.qp_type = ibv_qp_type(UABI_OFED_QPT_XRC);
		in.cap = convert::to_ibv(a.cap);
		in.sq_sig_all = a.sq_sig_all;
		in.user_handle = a.user_handle;
		return enc_->create_qp(in);
	}
	legacy::LegacyQpInit in;
	in.pd = a.pd;
	in.send_cq = a.send_cq;
	in.recv_cq = a.recv_cq;
	in.srq = a.srq;
	in.qp_type = ibv_qp_type(a.qp_type);
	in.cap = convert::to_ibv(a.cap);
	in.sq_sig_all = a.sq_sig_all;
	in.user_handle = a.user_handle;
	in.create_flags = a.create_flags;
	// As ibv_cmd_create_qp_ex2(): the extended command when it carries
	// something the old one cannot.
	if (a.create_flags)
		return enc_->create_qp_ex(in);
	return enc_->create_qp(in);
}

Result<QpInfo> WriteControl::open_qp(Handle xrcd, std::uint32_t qpn, std::uint64_t user_handle)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->open_qp(xrcd, qpn, IBV_QPT_XRC_RECV, user_handle);
}

Result<void> WriteControl::modify_qp(Handle qp, const struct ibv_qp_attr &attr, std::uint32_t mask)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->modify_qp(qp, attr, int(mask));
}

Result<QpQuery> WriteControl::query_qp(Handle qp, std::uint32_t mask)
{
	std::lock_guard<std::mutex> lk(mu_);
	auto r = enc_->query_qp(qp, int(mask));
	if (!r)
		return make_error(r.error());
	return convert::to_uabi(r->get());
}

Result<void> WriteControl::destroy_qp(Handle qp)
{
	std::lock_guard<std::mutex> lk(mu_);
	return to_void(enc_->destroy_qp(qp));
}

Result<void> WriteControl::attach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->attach_mcast(qp, gid.raw, lid);
}

Result<void> WriteControl::detach_mcast(Handle qp, const union ibv_gid &gid, std::uint16_t lid)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->detach_mcast(qp, gid.raw, lid);
}

Result<Handle> WriteControl::create_ah(Handle pd, const struct ibv_ah_attr &attr)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->create_ah(pd, attr, 0);
}

Result<void> WriteControl::destroy_ah(Handle ah)
{
	std::lock_guard<std::mutex> lk(mu_);
	return enc_->destroy_ah(ah);
}

Result<Handle> WriteControl::ofed_open_xrc_domain(int fd, int oflags)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_open_xrc_domain(fd, oflags);
}

Result<void> WriteControl::ofed_close_xrc_domain(Handle xrcd)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_close_xrc_domain(xrcd);
}

Result<SrqInfo> WriteControl::ofed_create_xrc_srq(Handle pd, Handle xrcd, Handle cq,
						  const uabi_srq_attr &attr,
						  std::uint64_t user_handle)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_create_xrc_srq(pd, xrcd, cq, convert::to_ibv(attr), user_handle);
}

Result<std::uint32_t> WriteControl::ofed_create_xrc_rcv_qp(Handle xrcd, const uabi_qp_cap &cap,
							   bool sq_sig_all)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_create_xrc_rcv_qp(xrcd, convert::to_ibv(cap), sq_sig_all, 0);
}

Result<void> WriteControl::ofed_modify_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
						  const struct ibv_qp_attr &attr,
						  std::uint32_t mask)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_modify_xrc_rcv_qp(xrcd, qpn, attr, int(mask));
}

Result<QpQuery> WriteControl::ofed_query_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn,
						    std::uint32_t mask)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	auto r = enc_->ofed_query_xrc_rcv_qp(xrcd, qpn, int(mask));
	if (!r)
		return make_error(r.error());
	return convert::to_uabi(r->get());
}

Result<void> WriteControl::ofed_reg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	// OFED's REG never created (the translator answers EINVAL too).
	if (qpn == UABI_XRC_QPN_CREATE)
		return make_error(EINVAL);
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_reg_xrc_rcv_qp(xrcd, qpn);
}

Result<void> WriteControl::ofed_unreg_xrc_rcv_qp(Handle xrcd, std::uint32_t qpn)
{
	std::lock_guard<std::mutex> lk(mu_);
	OfedDialect ofed(*tr_);
	return enc_->ofed_unreg_xrc_rcv_qp(xrcd, qpn);
}

} // namespace uabi::verbs
