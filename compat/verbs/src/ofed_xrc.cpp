// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// OFED 1.5's XRC verbs (docs/xrc.md), exported at IBVERBS_1.1 as OFED's
// libibverbs did, on the one registration rule of the core:
//   ibv_create_xrc_rcv_qp  = register(domain, 0xFFFFFFFF): creates, and the
//                            caller holds the first registration
//   ibv_reg_xrc_rcv_qp     = register(domain, qpn): one more holder
//   ibv_unreg_xrc_rcv_qp   = unregister: the QP goes with its last holder
//   ibv_modify/query_xrc_rcv_qp: by (domain, qpn), registered contexts only.
// The structs come from Debian's (upstream) header; where OFED's differ
// (<uabi/ofed_verbs_abi.h>) the bytes are read and written at OFED's
// offsets.  Errors: positive errno (pointer calls: NULL and errno), as the
// int verbs of OFED.
#include "verbs_impl.hpp"

#include <uabi/convert/qp.hpp>
#include <uabi/ofed_verbs_abi.h>

#include <cstdlib>
#include <cstring>

using namespace uabi;
using namespace uabi::verbs;

namespace {

// OFED's struct ibv_xrc_domain: { context, handle } (upstream's ibv_xrcd
// has only the context); ours carries the core's XRCD handle there too.
struct OfedXrcDomain {
	struct ibv_context *context;
	std::uint32_t handle;
};
static_assert(offsetof(OfedXrcDomain, handle) == UABI_OFED_XRC_DOMAIN_HANDLE);

OfedXrcDomain *dom(void *d)
{
	return static_cast<OfedXrcDomain *>(d);
}

// The XRC domain at the end of OFED's ibv_qp_init_attr.
OfedXrcDomain *init_domain(const struct ibv_qp_init_attr *a)
{
	void *d = nullptr;
	std::memcpy(&d, reinterpret_cast<const unsigned char *>(a) + UABI_OFED_QP_INIT_ATTR_XRC_DOMAIN,
		    sizeof(d));
	return dom(d);
}

void set_init_domain(struct ibv_qp_init_attr *a, OfedXrcDomain *d)
{
	std::memcpy(reinterpret_cast<unsigned char *>(a) + UABI_OFED_QP_INIT_ATTR_XRC_DOMAIN, &d,
		    sizeof(d));
}

// A RoCE device: the registration's context serves the receive QP while
// it holds one (docs/wire.md, "XRC"); its wire provider lives as long as
// the registration.  0 or errno.
int serve(struct ibv_context *ctx, std::uint32_t qpn)
{
	ContextImpl *impl = impl_of(ctx);
	if (!impl->roce)
		return 0;
	sw::QpProvider *dp = nullptr;
	if (int err = create_wire_qp(ctx, qpn, IBV_QPT_XRC_RECV, nullptr, nullptr, nullptr, sw::QpCaps{}, &dp))
		return err;
	std::lock_guard<std::mutex> g(impl->xrc_lock);
	impl->xrc_regs.emplace(qpn, std::unique_ptr<sw::QpProvider>(dp));
	return 0;
}

void unserve(struct ibv_context *ctx, std::uint32_t qpn)
{
	ContextImpl *impl = impl_of(ctx);
	std::unique_ptr<sw::QpProvider> gone;
	std::lock_guard<std::mutex> g(impl->xrc_lock);
	if (auto it = impl->xrc_regs.find(qpn); it != impl->xrc_regs.end()) {
		gone = std::move(it->second);
		impl->xrc_regs.erase(it);
	}
}

} // namespace

UABI_EXPORT void *ibv_open_xrc_domain(struct ibv_context *ctx, int fd, int oflag)
{
	return guard_ptr([&]() -> void * {
		if (!ctx)
			return fail_ptr(EINVAL);
		auto r = impl_of(ctx)->ctl.ofed_open_xrc_domain(fd, oflag);
		if (!r)
			return fail_ptr(r.error());
		auto *d = static_cast<OfedXrcDomain *>(std::calloc(1, sizeof(OfedXrcDomain)));
		if (!d) {
			(void)impl_of(ctx)->ctl.ofed_close_xrc_domain(*r);
			return fail_ptr(ENOMEM);
		}
		d->context = ctx;
		d->handle = *r;
		return d;
	});
}

UABI_EXPORT int ibv_close_xrc_domain(void *d)
{
	return guard_int([&] {
		if (!d)
			return EINVAL;
		auto r = impl_of(dom(d)->context)->ctl.ofed_close_xrc_domain(dom(d)->handle);
		if (!r)
			return r.error();
		std::free(d);
		return 0;
	});
}

UABI_EXPORT struct ibv_srq *ibv_create_xrc_srq(struct ibv_pd *pd, void *xrc_domain,
					       struct ibv_cq *xrc_cq,
					       struct ibv_srq_init_attr *attr)
{
	if (!pd || !xrc_domain || !xrc_cq || !attr)
		return fail_ptr<struct ibv_srq>(EINVAL);
	// The domain handle travels in an upstream ibv_xrcd-shaped object.
	VXrcd x{};
	x.xrcd.context = pd->context;
	x.handle = dom(xrc_domain)->handle;
	struct ibv_srq_init_attr_ex ex;
	std::memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ;
	ex.srq_type = IBV_SRQT_XRC;
	ex.pd = pd;
	ex.xrcd = &x.xrcd;
	ex.cq = xrc_cq;
	struct ibv_srq *s = create_srq(pd->context, pd, &ex, true);
	if (!s)
		return nullptr;
	// OFED's srq->xrc_domain is the caller's domain object.
	std::memcpy(reinterpret_cast<unsigned char *>(s) + UABI_OFED_SRQ_XRC_DOMAIN, &xrc_domain,
		    sizeof(void *));
	attr->attr = ex.attr;
	return s;
}

UABI_EXPORT int ibv_create_xrc_rcv_qp(struct ibv_qp_init_attr *init_attr, uint32_t *xrc_rcv_qpn)
{
	return guard_int([&] {
		if (!init_attr || !xrc_rcv_qpn)
			return EINVAL;
		OfedXrcDomain *d = init_domain(init_attr);
		if (!d)
			return EINVAL;
		uabi_qp_cap cap = convert::to_uabi(init_attr->cap);
		auto r = impl_of(d->context)->ctl.ofed_create_xrc_rcv_qp(d->handle, cap,
									  init_attr->sq_sig_all != 0);
		if (!r)
			return r.error();
		if (int err = serve(d->context, *r)) {
			(void)impl_of(d->context)->ctl.ofed_unreg_xrc_rcv_qp(d->handle, *r);
			return err;
		}
		*xrc_rcv_qpn = *r;
		return 0;
	});
}

UABI_EXPORT int ibv_modify_xrc_rcv_qp(void *xrc_domain, uint32_t xrc_qp_num,
				      struct ibv_qp_attr *attr, int attr_mask)
{
	return guard_int([&] {
		if (!xrc_domain || !attr)
			return EINVAL;
		OfedXrcDomain *d = dom(xrc_domain);
		auto r = impl_of(d->context)->ctl.ofed_modify_xrc_rcv_qp(d->handle, xrc_qp_num, *attr,
									  std::uint32_t(attr_mask));
		return r ? 0 : r.error();
	});
}

UABI_EXPORT int ibv_query_xrc_rcv_qp(void *xrc_domain, uint32_t xrc_qp_num,
				     struct ibv_qp_attr *attr, int attr_mask,
				     struct ibv_qp_init_attr *init_attr)
{
	return guard_int([&] {
		if (!xrc_domain || !attr)
			return EINVAL;
		OfedXrcDomain *d = dom(xrc_domain);
		auto r = impl_of(d->context)->ctl.ofed_query_xrc_rcv_qp(d->handle, xrc_qp_num,
									 std::uint32_t(attr_mask));
		if (!r)
			return r.error();
		convert::to_ibv(r->attr, *attr);
		if (init_attr) {
			// OFED's struct, 8 bytes longer than upstream's.
			std::memset(init_attr, 0, UABI_OFED_QP_INIT_ATTR_SIZE);
			init_attr->cap = convert::to_ibv(r->init.cap);
			init_attr->qp_type = static_cast<ibv_qp_type>(UABI_OFED_QPT_XRC);
			init_attr->sq_sig_all = r->init.sq_sig_all ? 1 : 0;
			set_init_domain(init_attr, d);
		}
		return 0;
	});
}

UABI_EXPORT int ibv_reg_xrc_rcv_qp(void *xrc_domain, uint32_t xrc_qp_num)
{
	return guard_int([&] {
		if (!xrc_domain)
			return EINVAL;
		OfedXrcDomain *d = dom(xrc_domain);
		auto r = impl_of(d->context)->ctl.ofed_reg_xrc_rcv_qp(d->handle, xrc_qp_num);
		if (!r)
			return r.error();
		if (int err = serve(d->context, xrc_qp_num)) {
			(void)impl_of(d->context)->ctl.ofed_unreg_xrc_rcv_qp(d->handle, xrc_qp_num);
			return err;
		}
		return 0;
	});
}

UABI_EXPORT int ibv_unreg_xrc_rcv_qp(void *xrc_domain, uint32_t xrc_qp_num)
{
	return guard_int([&] {
		if (!xrc_domain)
			return EINVAL;
		OfedXrcDomain *d = dom(xrc_domain);
		auto r = impl_of(d->context)->ctl.ofed_unreg_xrc_rcv_qp(d->handle, xrc_qp_num);
		if (!r)
			return r.error();
		unserve(d->context, xrc_qp_num);
		return 0;
	});
}
