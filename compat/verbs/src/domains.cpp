// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Thread domains and parent domains (ibv_alloc_td(3),
// ibv_alloc_parent_domain(3)).  A parent domain is its PD (the same handle,
// so every verb that takes a PD takes it) plus a thread domain and the
// application's allocators; a QP created on it gets its send queue from
// them (docs/datapath.md, "Parent domains").
#include "verbs_impl.hpp"

#include <rdma/uabi_sw.h>

#include <cstdlib>
#include <memory>

using namespace uabi;
using namespace uabi::verbs;

namespace {

struct VTd {
	struct ibv_td td;
	std::uint32_t refs;	// parent domains using it
};

VTd *vtd(struct ibv_td *t)
{
	return reinterpret_cast<VTd *>(t);
}

void hold(std::uint32_t *refs)
{
	__atomic_add_fetch(refs, 1, __ATOMIC_ACQ_REL);
}

void release(std::uint32_t *refs)
{
	__atomic_sub_fetch(refs, 1, __ATOMIC_ACQ_REL);
}

bool held(std::uint32_t *refs)
{
	return __atomic_load_n(refs, __ATOMIC_ACQUIRE) != 0;
}

// A thread domain promises that one thread at a time uses what is created
// under it.  The sw data path keeps its locks (uncontended then), so it
// changes no behaviour; it is kept and counted as rdma-core's providers do.
struct ibv_td *alloc_td(struct ibv_context *ctx, struct ibv_td_init_attr *attr)
{
	if (!attr || attr->comp_mask)
		return fail_ptr<struct ibv_td>(EINVAL);
	auto *t = static_cast<VTd *>(std::calloc(1, sizeof(VTd)));
	if (!t)
		return fail_ptr<struct ibv_td>(ENOMEM);
	t->td.context = ctx;
	return &t->td;
}

int dealloc_td(struct ibv_td *td)
{
	if (!td)
		return EINVAL;
	if (held(&vtd(td)->refs))
		return EBUSY;
	std::free(vtd(td));
	return 0;
}

struct ibv_pd *alloc_parent_domain(struct ibv_context *ctx, struct ibv_parent_domain_init_attr *a)
{
	const std::uint32_t known =
		IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	if (!a || !a->pd || is_parent_domain(a->pd) || a->pd->context != ctx ||
	    (a->td && a->td->context != ctx) || (a->comp_mask & ~known))
		return fail_ptr<struct ibv_pd>(EINVAL);
	const bool allocators = a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	if (allocators && (!a->alloc || !a->free))
		return fail_ptr<struct ibv_pd>(EINVAL);
	auto *p = static_cast<VPd *>(std::calloc(1, sizeof(VPd)));
	if (!p)
		return fail_ptr<struct ibv_pd>(ENOMEM);
	p->pd.context = ctx;
	p->pd.handle = a->pd->handle;
	p->protection = a->pd;
	p->td = a->td;
	if (allocators) {
		p->alloc = a->alloc;
		p->free = a->free;
	}
	if (a->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		p->pd_context = a->pd_context;
	hold(&vpd(a->pd)->refs);
	if (a->td)
		hold(&vtd(a->td)->refs);
	return &p->pd;
}

} // namespace

namespace uabi::verbs {

int dealloc_parent_domain(struct ibv_pd *pd)
{
	VPd *p = vpd(pd);
	if (held(&p->refs))
		return EBUSY;
	release(&vpd(p->protection)->refs);
	if (p->td)
		release(&vtd(p->td)->refs);
	std::free(p);
	return 0;
}

void pd_hold(struct ibv_pd *pd)
{
	if (is_parent_domain(pd))
		hold(&vpd(pd)->refs);
}

void pd_release(struct ibv_pd *pd)
{
	if (is_parent_domain(pd))
		release(&vpd(pd)->refs);
}

sw::QueueAllocator queue_allocator(struct ibv_pd *pd)
{
	sw::QueueAllocator qa;
	if (!is_parent_domain(pd) || !vpd(pd)->alloc)
		return qa;
	VPd *p = vpd(pd);
	// What the application declined (IBV_ALLOCATOR_USE_DEFAULT) is the
	// library's own, and freed by it.  The QP holds the parent domain, so
	// p outlives the queue.
	auto own = std::make_shared<void *>(nullptr);
	qa.alloc = [p, own](std::size_t size, std::size_t align) -> void * {
		void *m = p->alloc(&p->pd, p->pd_context, size, align, UABI_SW_RES_TYPE_SQ);
		if (m == IBV_ALLOCATOR_USE_DEFAULT) {
			m = std::aligned_alloc(align, (size + align - 1) / align * align);
			*own = m;
		}
		return m;
	};
	qa.free = [p, own](void *m) {
		if (m == *own)
			std::free(m);
		else
			p->free(&p->pd, p->pd_context, m, UABI_SW_RES_TYPE_SQ);
	};
	return qa;
}

void install_domain_ops(struct verbs_context *vc)
{
	vc->alloc_td = alloc_td;
	vc->dealloc_td = dealloc_td;
	vc->alloc_parent_domain = alloc_parent_domain;
}

} // namespace uabi::verbs
