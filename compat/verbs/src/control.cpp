// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Control verbs: each is one call of the control path (control_path.hpp);
// the objects that have a data path get their providers/sw counterpart.
// PDs, MRs, completion channels, CQs, SRQs and XRC domains here; QPs and
// AHs in control_qp.cpp.
#include "verbs_impl.hpp"

#include <uabi/convert/qp.hpp>
#include <uabi/convert/srq.hpp>

#include <rdma/uabi_sw.h>
#include <uabi/ofed_verbs_abi.h>

#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

using namespace uabi;
using namespace uabi::verbs;

namespace uabi::verbs {

bool fd_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_NONBLOCK);
}

sw::AddressHandle to_sw(const struct ibv_ah_attr &a)
{
	sw::AddressHandle h;
	h.dlid = a.dlid;
	h.sl = a.sl;
	h.is_global = a.is_global;
	h.sgid_index = a.grh.sgid_index;
	h.hop_limit = a.grh.hop_limit;
	h.traffic_class = a.grh.traffic_class;
	h.flow_label = a.grh.flow_label;
	std::memcpy(h.dgid, a.grh.dgid.raw, 16);
	return h;
}

} // namespace uabi::verbs

// --------------------------------------------------------------------- PD
UABI_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	return guard_ptr([&]() -> struct ibv_pd * {
		auto h = impl_of(ctx)->ctl.alloc_pd();
		if (!h)
			return fail_ptr<struct ibv_pd>(h.error());
		auto *v = static_cast<VPd *>(std::calloc(1, sizeof(VPd)));
		struct ibv_pd *pd = v ? &v->pd : nullptr;
		if (!pd) {
			(void)impl_of(ctx)->ctl.dealloc_pd(*h);
			return fail_ptr<struct ibv_pd>(ENOMEM);
		}
		pd->context = ctx;
		pd->handle = *h;
		return pd;
	});
}

UABI_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return guard_int([&] {
		if (is_parent_domain(pd))
			return dealloc_parent_domain(pd);
		// Parent domains stand on it (as rdma-core's providers refuse).
		if (__atomic_load_n(&vpd(pd)->refs, __ATOMIC_ACQUIRE))
			return EBUSY;
		auto r = impl_of(pd->context)->ctl.dealloc_pd(pd->handle);
		if (!r)
			return r.error();
		std::free(pd);
		return 0;
	});
}

// ibv_import_pd(3): a verbs PD for a PD of the (imported) context, found by
// its handle: ENOENT when there is none, EINVAL when the handle is another
// object's, as Linux's uobject lookup answers.  The write ABI has no such
// command: the new path in both modes (as GIDs).
UABI_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *ctx, uint32_t pd_handle)
{
	return guard_ptr([&]() -> struct ibv_pd * {
		if (!ctx)
			return fail_ptr<struct ibv_pd>(EINVAL);
		auto r = impl_of(ctx)->ctl.raw().query_pd(pd_handle);
		if (!r)
			return fail_ptr<struct ibv_pd>(r.error());
		auto *v = static_cast<VPd *>(std::calloc(1, sizeof(VPd)));
		if (!v)
			return fail_ptr<struct ibv_pd>(ENOMEM);
		v->pd.context = ctx;
		v->pd.handle = pd_handle;
		return &v->pd;
	});
}

// Only this struct goes: the PD stays in the context (ibv_unimport_pd(3)).
UABI_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	std::free(vpd(pd));
}

// --------------------------------------------------------------------- MR
static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			     unsigned int access)
{
	return guard_ptr([&]() -> struct ibv_mr * {
		auto r = impl_of(pd->context)->ctl.reg_mr(pd->handle, addr, length, access, iova);
		if (!r)
			return fail_ptr<struct ibv_mr>(r.error());
		auto *v = static_cast<VMr *>(std::calloc(1, sizeof(VMr)));
		if (!v) {
			(void)impl_of(pd->context)->ctl.dereg_mr(r->handle);
			return fail_ptr<struct ibv_mr>(ENOMEM);
		}
		v->access = access;
		v->iova = iova;
		struct ibv_mr *mr = &v->mr;
		mr->context = pd->context;
		mr->pd = pd;
		mr->addr = addr;
		mr->length = length;
		mr->handle = r->handle;
		mr->lkey = r->lkey;
		mr->rkey = r->rkey;
		return mr;
	});
}

// ibv_import_mr(3): a verbs MR for an MR of the context, with the address,
// length and keys of its registration (MR/QUERY); errnos as
// ibv_import_pd().  As rdma-core, the MR's PD is not compared with @pd.
UABI_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	return guard_ptr([&]() -> struct ibv_mr * {
		if (!pd)
			return fail_ptr<struct ibv_mr>(EINVAL);
		auto r = impl_of(pd->context)->ctl.raw().query_mr(mr_handle);
		if (!r)
			return fail_ptr<struct ibv_mr>(r.error());
		const auto &[reg, keys] = *r;
		auto *v = static_cast<VMr *>(std::calloc(1, sizeof(VMr)));
		if (!v)
			return fail_ptr<struct ibv_mr>(ENOMEM);
		v->access = reg.access;
		v->iova = reg.iova;
		struct ibv_mr *mr = &v->mr;
		mr->context = pd->context;
		mr->pd = pd;
		mr->addr = reinterpret_cast<void *>(static_cast<std::uintptr_t>(reg.addr));
		mr->length = reg.length;
		mr->handle = mr_handle;
		mr->lkey = keys.lkey;
		mr->rkey = keys.rkey;
		return mr;
	});
}

// Only this struct goes: the MR stays registered (ibv_unimport_mr(3)).
UABI_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	std::free(vmr(mr));
}

#undef ibv_reg_mr
UABI_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, reinterpret_cast<std::uintptr_t>(addr), unsigned(access));
}

#undef ibv_reg_mr_iova
UABI_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					   uint64_t iova, int access)
{
	return reg_mr(pd, addr, length, iova, unsigned(access));
}

UABI_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					    uint64_t iova, unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

UABI_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int)
{
	return fail_ptr<struct ibv_mr>(EOPNOTSUPP);
}

UABI_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	return guard_int([&] {
		auto r = impl_of(mr->context)->ctl.dereg_mr(mr->handle);
		if (!r)
			return r.error();
		std::free(vmr(mr));
		return 0;
	});
}

// ibv_rereg_mr(3): in place, on the same keys, so that a peer's rkey and
// the very next work request see the new registration; a failure leaves the
// MR as it was.
UABI_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			     size_t length, int access)
{
	if (!mr || flags <= 0 || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && !pd) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	int err = guard_int([&] {
		Control &ctl = impl_of(mr->context)->ctl;
		struct ibv_pd *npd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd : mr->pd;
		void *naddr = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? addr : mr->addr;
		size_t nlen = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? length : mr->length;
		unsigned nacc = (flags & IBV_REREG_MR_CHANGE_ACCESS) ? unsigned(access)
								     : vmr(mr)->access;
		std::uint64_t niova = (flags & IBV_REREG_MR_CHANGE_TRANSLATION)
					  ? reinterpret_cast<std::uintptr_t>(addr)
					  : vmr(mr)->iova;
		auto r = ctl.rereg_mr(mr->handle, flags, npd->handle, naddr, nlen, niova, nacc);
		if (!r)
			return r.error();
		vmr(mr)->access = nacc;
		vmr(mr)->iova = niova;
		mr->pd = npd;
		mr->addr = naddr;
		mr->length = nlen;
		mr->lkey = r->lkey;
		mr->rkey = r->rkey;
		return 0;
	});
	if (err) {
		errno = err;
		return IBV_REREG_MR_ERR_CMD;
	}
	return 0;
}

// ----------------------------------------------------- completion channel
// Direct events (docs/datapath.md, "Completion events"): a producer that
// fires the arm of one of our CQs writes an eventfd of ours instead of
// asking the control half, which would then signal the core's channel fd
// and answer our GET_EVENT: one wake-up instead of three, and no round
// trip.  Off with UABI_DIRECT_EVENTS=0, and on the write path (which names
// a channel by its fd).
static bool direct_events_wanted()
{
	static const bool on = [] {
		const char *e = std::getenv("UABI_DIRECT_EVENTS");
		return !(e && std::strcmp(e, "0") == 0);
	}();
	return on;
}

// Names our eventfds for the producers' caches: an fd number comes back.
static std::uint32_t next_direct_gen()
{
	static std::uint32_t gen = std::uint32_t(::getpid()) * 2654435761u;
	return __atomic_add_fetch(&gen, 1, __ATOMIC_RELAXED);
}

// ch.fd becomes an epoll fd over the core's fd and our eventfd (readable
// when either is).  Without either: the core's fd, as before.
static void make_direct(VChannel *c)
{
	c->direct_fd = -1;
	c->ch.fd = c->core_fd;
	if (!c->handle || !direct_events_wanted())
		return;
	int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int ep = ::epoll_create1(EPOLL_CLOEXEC);
	epoll_event ev{};
	ev.events = EPOLLIN;
	bool ok = efd >= 0 && ep >= 0;
	ev.data.fd = c->core_fd;
	ok = ok && ::epoll_ctl(ep, EPOLL_CTL_ADD, c->core_fd, &ev) == 0;
	ev.data.fd = efd;
	ok = ok && ::epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) == 0;
	if (!ok) {
		if (efd >= 0)
			::close(efd);
		if (ep >= 0)
			::close(ep);
		return;
	}
	c->direct_fd = efd;
	c->gen = next_direct_gen();
	c->ch.fd = ep;
}

UABI_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	return guard_ptr([&]() -> struct ibv_comp_channel * {
		auto r = impl_of(ctx)->ctl.create_comp_channel();
		if (!r)
			return fail_ptr<struct ibv_comp_channel>(r.error());
		auto *c = static_cast<VChannel *>(std::calloc(1, sizeof(VChannel)));
		if (!c) {
			(void)impl_of(ctx)->ctl.destroy_comp_channel(*r);
			return fail_ptr<struct ibv_comp_channel>(ENOMEM);
		}
		c->ch.context = ctx;
		c->ch.refcnt = 0;
		c->handle = r->handle;
		c->core_fd = r->fd;
		pthread_mutex_init(&c->lock, nullptr);
		make_direct(c);
		return &c->ch;
	});
}

UABI_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	int ret = guard_int([&] {
		// Like libibverbs: a channel that CQs still use stays.
		if (__atomic_load_n(&ch->refcnt, __ATOMIC_RELAXED))
			return EBUSY;
		VChannel *v = vch(ch);
		auto r = impl_of(ch->context)->ctl.destroy_comp_channel(EvqInfo{v->handle, v->core_fd});
		if (!r)
			return r.error();
		if (v->direct_fd >= 0) {
			::close(v->direct_fd);
			::close(ch->fd);
		}
		pthread_mutex_destroy(&v->lock);
		std::free(v);
		return 0;
	});
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

static void direct_attach(VCq *c)
{
	VChannel *v = c->cq.channel ? vch(c->cq.channel) : nullptr;
	if (!v || v->direct_fd < 0)
		return;
	pthread_mutex_lock(&v->lock);
	c->direct_seen = c->dp->direct_events();
	c->next_direct = v->cqs;
	v->cqs = c;
	c->dp->set_direct(v->direct_fd, v->gen);
	pthread_mutex_unlock(&v->lock);
}

// Before the CQ goes: its number may name another CQ right after.
static void direct_detach(VCq *c)
{
	VChannel *v = c->cq.channel ? vch(c->cq.channel) : nullptr;
	if (!v || v->direct_fd < 0)
		return;
	pthread_mutex_lock(&v->lock);
	c->dp->clear_direct();
	for (VCq **p = &v->cqs; *p; p = &(*p)->next_direct) {
		if (*p == c) {
			*p = c->next_direct;
			break;
		}
	}
	pthread_mutex_unlock(&v->lock);
}

// The next direct event of the channel's CQs, or nullptr.  Our eventfd is
// read first, then the counts: a producer counts before it writes, so an
// event counted after we looked is followed by a write that we see.  If
// more remain than the one returned, the eventfd is made readable again.
static VCq *take_direct(VChannel *v)
{
	std::uint64_t n;
	pthread_mutex_lock(&v->lock);
	if (::read(v->direct_fd, &n, sizeof(n)) < 0) {
		// EAGAIN: nothing written since we last read
	}
	VCq *hit = nullptr;
	bool more = false;
	for (VCq *c = v->cqs; c; c = c->next_direct) {
		std::uint32_t e = c->dp->direct_events();
		if (e == c->direct_seen)
			continue;
		if (!hit) {
			hit = c;
			c->direct_seen++;
			more = more || e != c->direct_seen;
		} else {
			more = true;
		}
		if (more)
			break;
	}
	if (more) {
		n = 1;
		if (::write(v->direct_fd, &n, sizeof(n)) < 0) {
		}
	}
	pthread_mutex_unlock(&v->lock);
	return hit;
}

// --------------------------------------------------------------------- CQ
static struct ibv_cq *create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				struct ibv_comp_channel *channel, int comp_vector)
{
	return guard_ptr([&]() -> struct ibv_cq * {
		ContextImpl *impl = impl_of(ctx);
		if (!impl->dp)
			return fail_ptr<struct ibv_cq>(EOPNOTSUPP);
		if (cqe < 1)
			return fail_ptr<struct ibv_cq>(EINVAL);
		auto *c = static_cast<VCq *>(std::calloc(1, sizeof(VCq)));
		if (!c)
			return fail_ptr<struct ibv_cq>(ENOMEM);
		EvqInfo ch{};
		if (channel)
			ch = EvqInfo{vch(channel)->handle, vch(channel)->core_fd};
		auto r = impl->ctl.create_cq(std::uint32_t(cqe), channel ? &ch : nullptr,
					     std::uint32_t(comp_vector),
					     reinterpret_cast<std::uintptr_t>(c));
		if (!r) {
			std::free(c);
			return fail_ptr<struct ibv_cq>(r.error());
		}
		c->dp = new (std::nothrow) sw::Cq(*impl->dp, r->cqn);
		if (!c->dp) {
			(void)impl->ctl.destroy_cq(r->handle);
			std::free(c);
			return fail_ptr<struct ibv_cq>(ENOMEM);
		}
		c->cqn = r->cqn;
		c->channel = channel ? vch(channel)->handle : 0;
		c->cq.context = ctx;
		c->cq.channel = channel;
		c->cq.cq_context = cq_context;
		c->cq.handle = r->handle;
		c->cq.cqe = int(r->cqe);
		pthread_mutex_init(&c->cq.mutex, nullptr);
		pthread_cond_init(&c->cq.cond, nullptr);
		if (channel)
			__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_RELAXED);
		direct_attach(c);
		return &c->cq;
	});
}

UABI_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
					 struct ibv_comp_channel *channel, int comp_vector)
{
	return create_cq(ctx, cqe, cq_context, channel, comp_vector);
}

// ibv_create_cq_ex(3): the standard completion fields (IBV_WC_STANDARD_FLAGS)
// and completion timestamps (device clock and wall clock); VLAN, flow tags
// and tag matching are not produced here.
static struct ibv_cq_ex *create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	const std::uint32_t known = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	const std::uint64_t produced = std::uint64_t(IBV_WC_STANDARD_FLAGS) |
				       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	if (!a || (a->comp_mask & ~known))
		return fail_ptr<struct ibv_cq_ex>(EINVAL);
	if (a->wc_flags & ~produced)
		return fail_ptr<struct ibv_cq_ex>(EOPNOTSUPP);
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (a->flags & ~std::uint32_t(IBV_CREATE_CQ_ATTR_SINGLE_THREADED)))
		return fail_ptr<struct ibv_cq_ex>(EOPNOTSUPP);
	if (a->cqe > std::uint32_t(INT32_MAX))
		return fail_ptr<struct ibv_cq_ex>(EINVAL);
	// A CQ's parent domain: one of this context (its allocators are not
	// called: a CQ's ring is the device's, in the arena).
	struct ibv_pd *pdom = (a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ? a->parent_domain : nullptr;
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!is_parent_domain(pdom) || pdom->context != ctx))
		return fail_ptr<struct ibv_cq_ex>(EINVAL);
	struct ibv_cq *cq = create_cq(ctx, int(a->cqe), a->cq_context, a->channel,
				      int(a->comp_vector));
	if (!cq)
		return nullptr;
	if (pdom) {
		pd_hold(pdom);
		vcq(cq)->pdom = pdom;
	}
	install_cq_ex_ops(vcq(cq), a->wc_flags);
	return &vcq(cq)->cqx;
}

UABI_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	return guard_int([&] {
		if (cqe < 1)
			return EINVAL;
		auto r = impl_of(cq->context)->ctl.resize_cq(cq->handle, std::uint32_t(cqe));
		if (!r)
			return r.error();
		cq->cqe = int(r->cqe);
		vcq(cq)->dp->refresh();
		return 0;
	});
}

UABI_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	return guard_int([&] {
		direct_detach(vcq(cq));
		auto r = impl_of(cq->context)->ctl.destroy_cq(cq->handle);
		if (!r) {
			direct_attach(vcq(cq));
			return r.error();
		}
		if (cq->channel)
			__atomic_sub_fetch(&cq->channel->refcnt, 1, __ATOMIC_RELAXED);
		delete vcq(cq)->dp;
		if (vcq(cq)->pdom)
			pd_release(vcq(cq)->pdom);
		pthread_cond_destroy(&cq->cond);
		pthread_mutex_destroy(&cq->mutex);
		std::free(vcq(cq));
		return 0;
	});
}

UABI_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	ContextImpl *impl = impl_of(ch->context);
	VChannel *v = vch(ch);
	for (;;) {
		int ret = EAGAIN;
		bool ask_core = true;
		if (v->direct_fd >= 0) {
			if (VCq *c = take_direct(v)) {
				*cq = &c->cq;
				*cq_context = c->cq.cq_context;
				return 0;
			}
			// The core's channel fd is readable while it holds an
			// event (it is signalled as one is queued and drained
			// when the last is taken): only then is GET_EVENT worth
			// a call to the core.  Producers that take the direct way
			// raise none there, so in the common case the wait below
			// follows at once, and its wake-up is the producer's.
			struct pollfd p = {v->core_fd, POLLIN, 0};
			ask_core = ::poll(&p, 1, 0) != 0;
		}
		if (ask_core)
			ret = guard_int([&] {
				auto r = impl->ctl.get_comp_event(EvqInfo{v->handle, v->core_fd});
				if (!r)
					return r.error();
				auto *c = reinterpret_cast<VCq *>(r->element);
				*cq = &c->cq;
				*cq_context = c->cq.cq_context;
				return 0;
			});
		if (!ret)
			return 0;
		// A non-blocking fd answers EAGAIN, as read(2) on it did.
		if (ret != EAGAIN || fd_nonblocking(ch->fd)) {
			errno = ret;
			return -1;
		}
		ret = wait_readable(impl, ch->fd);
		if (ret) {
			errno = ret;
			return -1;
		}
	}
}

UABI_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

// -------------------------------------------------------------------- SRQ
namespace uabi::verbs {

struct ibv_srq *create_srq(struct ibv_context *ctx, struct ibv_pd *pd,
			   struct ibv_srq_init_attr_ex *a, bool ofed)
{
	return guard_ptr([&]() -> struct ibv_srq * {
		ContextImpl *impl = impl_of(ctx);
		if (!impl->dp)
			return fail_ptr<struct ibv_srq>(EOPNOTSUPP);
		std::uint32_t type = (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? a->srq_type : IBV_SRQT_BASIC;
		if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)
			return fail_ptr<struct ibv_srq>(EOPNOTSUPP);
		auto *s = static_cast<VSrq *>(std::calloc(1, sizeof(VSrq)));
		if (!s)
			return fail_ptr<struct ibv_srq>(ENOMEM);
		Handle xrcd = 0, cq = 0;
		if (type == IBV_SRQT_XRC) {
			if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !a->xrcd ||
			    !(a->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !a->cq) {
				std::free(s);
				return fail_ptr<struct ibv_srq>(EINVAL);
			}
			xrcd = vxrcd(a->xrcd)->handle;
			cq = a->cq->handle;
		}
		uabi_srq_attr sa{};
		convert::copy_srq_sizes(sa, a->attr);
		auto r = ofed ? impl->ctl.ofed_create_xrc_srq(pd->handle, xrcd, cq, sa,
							      reinterpret_cast<std::uintptr_t>(s))
			      : impl->ctl.create_srq(pd->handle, type, xrcd, cq, sa,
						     reinterpret_cast<std::uintptr_t>(s));
		if (!r) {
			std::free(s);
			return fail_ptr<struct ibv_srq>(r.error());
		}
		Command loc(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_LOCATE_SRQ);
		loc.add_handle(UABI_SW_ATTR_SRQ, r->handle);
		OutAttr slot_out = loc.add_out<std::uint32_t>(UABI_SW_ATTR_SRQ_SLOT);
		auto m = impl->ctl.raw().call(std::move(loc));
		std::uint32_t slot = 0;
		if (!m || !m->read(0, slot_out, slot) ||
		    !(s->dp = new (std::nothrow) sw::Srq(*impl->dp, slot))) {
			(void)impl->ctl.destroy_srq(r->handle);
			std::free(s);
			return fail_ptr<struct ibv_srq>(m ? ENOMEM : m.error());
		}
		s->slot = slot;
		publish_srq_owner(*impl->dp, slot);
		{
			std::lock_guard<std::mutex> g(impl->srq_lock);
			impl->own_srqs.insert(slot);
		}
		s->srq_num = r->resp.srqn;
		s->type = type;
		s->srq.context = ctx;
		s->srq.srq_context = a->srq_context;
		s->srq.pd = pd;
		s->srq.handle = r->handle;
		s->ofed_layout = ofed;
		if (ofed) {
			// OFED's struct ibv_srq has the XRC fields where ours
			// has the mutex (which we then leave unused): a legacy
			// program reads srq->xrc_srq_num there.
			auto *raw = reinterpret_cast<unsigned char *>(&s->srq);
			std::uint32_t num = s->srq_num;
			std::memcpy(raw + UABI_OFED_SRQ_XRC_SRQ_NUM, &num, sizeof(num));
			std::memcpy(raw + UABI_OFED_SRQ_XRC_DOMAIN, &a->xrcd, sizeof(void *));
			std::memcpy(raw + UABI_OFED_SRQ_XRC_CQ, &a->cq, sizeof(void *));
		} else {
			pthread_mutex_init(&s->srq.mutex, nullptr);
			pthread_cond_init(&s->srq.cond, nullptr);
		}
		convert::copy_srq_sizes(a->attr, r->resp.attr);
		return &s->srq;
	});
}

} // namespace uabi::verbs

UABI_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex;
	std::memset(&ex, 0, sizeof(ex));
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	ex.pd = pd;
	struct ibv_srq *s = create_srq(pd->context, pd, &ex, false);
	if (s)
		attr->attr = ex.attr;
	return s;
}

static struct ibv_srq *create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *a)
{
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a->pd ||
	    (a->comp_mask & ~uint32_t(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				      IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)))
		return fail_ptr<struct ibv_srq>(a->comp_mask & IBV_SRQ_INIT_ATTR_TM ? EOPNOTSUPP : EINVAL);
	return create_srq(ctx, a->pd, a, false);
}

UABI_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	return guard_int([&] {
		uabi_srq_attr u = convert::to_uabi(*attr);
		auto r = impl_of(srq->context)->ctl.modify_srq(srq->handle, u, std::uint32_t(mask));
		return r ? 0 : r.error();
	});
}

UABI_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	return guard_int([&] {
		auto r = impl_of(srq->context)->ctl.query_srq(srq->handle);
		if (!r)
			return r.error();
		*attr = convert::to_ibv(*r);
		return 0;
	});
}

UABI_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	return guard_int([&] {
		ContextImpl *impl = impl_of(srq->context);
		auto r = impl->ctl.destroy_srq(srq->handle);
		if (!r)
			return r.error();
		{
			std::lock_guard<std::mutex> g(impl->srq_lock);
			impl->own_srqs.erase(vsrq(srq)->slot);
		}
		delete vsrq(srq)->dp;
		if (!vsrq(srq)->ofed_layout) {
			pthread_cond_destroy(&srq->cond);
			pthread_mutex_destroy(&srq->mutex);
		}
		std::free(vsrq(srq));
		return 0;
	});
}

static int get_srq_num(struct ibv_srq *srq, uint32_t *num)
{
	if (vsrq(srq)->type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*num = vsrq(srq)->srq_num;
	return 0;
}

// ------------------------------------------------------------------- XRCD
static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, struct ibv_xrcd_init_attr *a)
{
	return guard_ptr([&]() -> struct ibv_xrcd * {
		if (!(a->comp_mask & IBV_XRCD_INIT_ATTR_FD) || !(a->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS))
			return fail_ptr<struct ibv_xrcd>(EINVAL);
		auto r = impl_of(ctx)->ctl.open_xrcd(a->fd, a->oflags);
		if (!r)
			return fail_ptr<struct ibv_xrcd>(r.error());
		auto *x = static_cast<VXrcd *>(std::calloc(1, sizeof(VXrcd)));
		if (!x) {
			(void)impl_of(ctx)->ctl.close_xrcd(*r);
			return fail_ptr<struct ibv_xrcd>(ENOMEM);
		}
		x->xrcd.context = ctx;
		x->handle = *r;
		return &x->xrcd;
	});
}

static int close_xrcd(struct ibv_xrcd *xrcd)
{
	return guard_int([&] {
		auto r = impl_of(xrcd->context)->ctl.close_xrcd(vxrcd(xrcd)->handle);
		if (!r)
			return r.error();
		std::free(vxrcd(xrcd));
		return 0;
	});
}

// ------------------------------------------------------- extended verbs
namespace uabi::verbs {

void install_ex_ops(struct verbs_context *vc)
{
	vc->create_cq_ex = create_cq_ex;
	vc->open_xrcd = open_xrcd;
	vc->close_xrcd = close_xrcd;
	vc->create_srq_ex = create_srq_ex;
	vc->get_srq_num = get_srq_num;
	install_qp_context_ops(vc);
	install_domain_ops(vc);
}

} // namespace uabi::verbs
