// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The software device's arena (docs/datapath.md): one shared memory region
 * per device, laid out here, that holds what a peer process must reach —
 * the QP, CQ, SRQ and MR descriptors and the rings.  This file writes the
 * descriptors when objects are created, modified and destroyed; the data
 * half (providers/sw) reads them and moves the ring indices.
 *
 * Descriptors are published with a sequence counter (odd while written);
 * the writers of one descriptor are serialized by the core's object locks
 * (or dev->lock for XRC receive QPs).  The heap allocator is under sw->lock.
 */
#include "sw_internal.h"

#define SW_PAGE 4096ull
#define SW_LOCK_CONTROL 0xffffffffu	/* lock holder "the control half" */
#define SW_LOCK_SPINS 1000000ul

static u64 page_align(u64 x)
{
	return (x + SW_PAGE - 1) & ~(SW_PAGE - 1);
}

static u32 pow2_at_least(u32 n)
{
	u32 p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static void seq_begin(u32 *seq)
{
	WRITE_ONCE(*seq, READ_ONCE(*seq) + 1);
	smp_wmb();
}

static void seq_end(u32 *seq)
{
	smp_wmb();
	WRITE_ONCE(*seq, READ_ONCE(*seq) + 1);
}

/* Arena locks are shared with client processes, which hold them only for a
 * few stores; give up rather than spin forever on a dead holder. */
static int arena_lock(u32 *lock)
{
	unsigned long spins;

	for (spins = 0; spins < SW_LOCK_SPINS; spins++) {
		if (cmpxchg(lock, 0u, SW_LOCK_CONTROL) == 0u)
			return 0;
		cond_resched();
	}
	return -EBUSY;
}

static void arena_unlock(u32 *lock)
{
	smp_store_release(lock, 0u);
}

/*
 * Called after a descriptor's number was cleared: waits until no data-path
 * writer that found it still live is inside its critical section, so that
 * the ring can be freed.  Writers take the lock with a full barrier and
 * then re-check the number, so once the lock word has been seen free any
 * later writer sees the number gone.  A holder that died (or stays
 * descheduled) is given up on after a bounded wait: the freed ring still
 * rests before reuse (heap_free()).
 */
#define SW_QUIESCE_SPINS 100000ul
static void arena_quiesce(u32 *lock)
{
	unsigned long spins;

	smp_mb();	/* the cleared number, before the lock word is read */
	for (spins = 0; spins < SW_QUIESCE_SPINS && READ_ONCE(*lock); spins++)
		cond_resched();
}

/* ------------------------------------------------------------------ heap */
/* The first free granule in [i, to), or to.  The map holds only 0 and 1:
 * whole words of used granules are skipped eight at a time, so the scan
 * past the rings in use costs little even when a small hole keeps the
 * first-fit hint low. */
static u32 next_free(const u8 *used, u32 i, u32 to)
{
	const u64 all_used = 0x0101010101010101ull;
	u64 w;

	for (; i < to && (i & 7); i++)
		if (!used[i])
			return i;
	for (; i + 8 <= to; i += 8) {
		memcpy(&w, used + i, sizeof(w));
		if (w != all_used)
			break;
	}
	for (; i < to; i++)
		if (!used[i])
			return i;
	return to;
}

/* The first run of n free granules in [from, to), or -1. */
static int find_run(const struct sw_arena *a, u32 from, u32 to, u32 n)
{
	u32 i = from, run;

	while ((i = next_free(a->heap_used, i, to)) + n <= to) {
		for (run = 1; run < n && !a->heap_used[i + run]; run++)
			;
		if (run == n)
			return (int)i;
		i += run;	/* heap_used[i] is in use now */
	}
	return -1;
}

/* Makes a run allocatable again; called with sw->lock held. */
static void heap_release(struct sw_arena *a, u32 first, u32 n)
{
	memset(a->heap_used + first, 0, n);
	if (first < a->heap_hint)
		a->heap_hint = first;
}

/* Returns the run that rested longest to the heap. */
static void heap_release_oldest(struct sw_arena *a)
{
	struct sw_heap_run *r = &a->rest[a->rest_head];

	heap_release(a, r->first, r->n);
	a->rest_head = (a->rest_head + 1) % SW_HEAP_REST;
	a->rest_count--;
}

/* Returns every resting run to the heap; false if none rested. */
static bool heap_release_resting(struct sw_arena *a)
{
	if (!a->rest_count)
		return false;
	while (a->rest_count)
		heap_release_oldest(a);
	return true;
}

/*
 * Ring memory (zeroed if @zero), or 0 (never a heap offset).  First fit
 * from the lowest free granule: a program that creates and destroys rings
 * keeps reusing the same pages, which stay cached and mapped, instead of
 * walking the whole (sparse) heap.  A freed ring is not reused at once: it
 * rests among the last SW_HEAP_REST freed runs first, unless the heap
 * would otherwise be full.
 */
static u64 heap_alloc(struct sw_dev *sw, u64 bytes, bool zero)
{
	struct sw_arena *a = &sw->arena;
	u64 n64 = (bytes + UABI_SW_HEAP_GRANULE - 1) / UABI_SW_HEAP_GRANULE;
	u32 n;
	int at;
	u64 off;

	if (!n64 || n64 > a->heap_granules)
		return 0;
	n = (u32)n64;
	mutex_lock(&sw->lock);
	at = find_run(a, a->heap_hint, a->heap_granules, n);
	if (at < 0 && heap_release_resting(a))
		at = find_run(a, a->heap_hint, a->heap_granules, n);
	if (at >= 0) {
		memset(a->heap_used + at, 1, n);
		while (a->heap_hint < a->heap_granules && a->heap_used[a->heap_hint])
			a->heap_hint++;
	}
	mutex_unlock(&sw->lock);
	if (at < 0)
		return 0;
	off = a->hdr->info.heap_off + (u64)at * UABI_SW_HEAP_GRANULE;
	if (zero)
		memset(a->base + off, 0, n64 * UABI_SW_HEAP_GRANULE);
	return off;
}

static void heap_free(struct sw_dev *sw, u64 off, u64 bytes)
{
	struct sw_arena *a = &sw->arena;
	u64 first = (off - a->hdr->info.heap_off) / UABI_SW_HEAP_GRANULE;
	u64 n = (bytes + UABI_SW_HEAP_GRANULE - 1) / UABI_SW_HEAP_GRANULE;
	struct sw_heap_run *r;

	if (WARN_ON(off < a->hdr->info.heap_off || first + n > a->heap_granules))
		return;
	mutex_lock(&sw->lock);
	if (a->rest_count == SW_HEAP_REST)
		heap_release_oldest(a);
	r = &a->rest[(a->rest_head + a->rest_count) % SW_HEAP_REST];
	r->first = (u32)first;
	r->n = (u32)n;
	a->rest_count++;
	mutex_unlock(&sw->lock);
}

static struct sw_ring *ring_new(struct sw_dev *sw, u64 bytes)
{
	struct sw_ring *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	r->bytes = bytes;
	r->off = bytes ? heap_alloc(sw, bytes, true) : 0;
	if (bytes && !r->off) {
		kfree(r);
		return NULL;
	}
	return r;
}

static void ring_free(struct sw_dev *sw, struct sw_ring *r)
{
	if (!r)
		return;
	if (r->off)
		heap_free(sw, r->off, r->bytes);
	if (r->small_off)
		heap_free(sw, r->small_off, r->small_bytes);
	kfree(r);
}

/* Moves the live entries [cons, prod) of a ring to a new one of @new_size
 * slots (same absolute indices); called with the ring's lock held. */
static void ring_move(struct sw_dev *sw, u64 old_off, u32 old_size,
		      u64 new_off, u32 new_size, u32 stride, u64 cons, u64 prod)
{
	u8 *base = sw->arena.base;
	u64 i;

	for (i = cons; i != prod; i++)
		memcpy(base + new_off + (i & (new_size - 1)) * stride,
		       base + old_off + (i & (old_size - 1)) * stride, stride);
}

/* --------------------------------------------------------------- layout */
int sw_arena_init(struct sw_dev *sw, const struct uabi_shm_ops *ops,
		  size_t heap_bytes)
{
	struct sw_arena *a = &sw->arena;
	struct uabi_sw_arena_info info = {
		.magic = UABI_SW_ARENA_MAGIC,
		.version = UABI_SW_ARENA_VERSION,
		.qp_first = SW_FIRST_QPN,
		.qp_count = SW_MAX_QP,
		.cq_count = SW_MAX_CQ,
		.srq_count = SW_MAX_SRQ,
		.mr_count = SW_MAX_MR + 1,	/* key index 0 is never used */
	};
	void *kaddr = NULL;
	u64 off;

	BUILD_BUG_ON(sizeof(struct uabi_sw_qp) != 128);
	BUILD_BUG_ON(sizeof(struct uabi_sw_cq) != 128);
	BUILD_BUG_ON(sizeof(struct uabi_sw_srq) != 128);
	BUILD_BUG_ON(sizeof(struct uabi_sw_mr) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_cqe) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_small) != 256);
	BUILD_BUG_ON(sizeof(struct uabi_sw_arena_hdr) > SW_PAGE);

	if (!ops)
		return 0;
	off = SW_PAGE;
	info.qp_off = off;
	off += page_align((u64)info.qp_count * sizeof(struct uabi_sw_qp));
	info.cq_off = off;
	off += page_align((u64)info.cq_count * sizeof(struct uabi_sw_cq));
	info.srq_off = off;
	off += page_align((u64)info.srq_count * sizeof(struct uabi_sw_srq));
	info.mr_off = off;
	off += page_align((u64)info.mr_count * sizeof(struct uabi_sw_mr));
	info.heap_off = off;
	info.heap_size = heap_bytes / UABI_SW_HEAP_GRANULE * UABI_SW_HEAP_GRANULE;
	info.size = info.heap_off + info.heap_size;

	a->heap_granules = (u32)(info.heap_size / UABI_SW_HEAP_GRANULE);
	a->heap_used = kvzalloc(a->heap_granules ? a->heap_granules : 1, GFP_KERNEL);
	if (!a->heap_used)
		return -ENOMEM;
	a->shm = ops->create("uabi_sw0-arena", info.size, &kaddr);
	if (IS_ERR(a->shm)) {
		int ret = (int)PTR_ERR(a->shm);

		a->shm = NULL;
		kvfree(a->heap_used);
		a->heap_used = NULL;
		return ret;
	}
	a->ops = ops;
	a->base = kaddr;
	a->size = info.size;
	a->hdr = kaddr;
	a->hdr->info = info;
	a->qps = (struct uabi_sw_qp *)(a->base + info.qp_off);
	a->cqs = (struct uabi_sw_cq *)(a->base + info.cq_off);
	a->srqs = (struct uabi_sw_srq *)(a->base + info.srq_off);
	a->mrs = (struct uabi_sw_mr *)(a->base + info.mr_off);
	return 0;
}

void sw_arena_fini(struct sw_dev *sw)
{
	struct sw_arena *a = &sw->arena;

	if (a->shm)
		a->ops->destroy(a->shm);
	a->shm = NULL;
	kvfree(a->heap_used);
	a->heap_used = NULL;
}

/* ------------------------------------------------------------------- MR */
void sw_arena_mr_publish(struct sw_dev *sw, const struct uabi_mr *mr, u32 idx)
{
	struct uabi_sw_mr *e;

	if (!sw_has_arena(sw))
		return;
	e = &sw->arena.mrs[idx];
	seq_begin(&e->seq);
	e->pid = mr->ctx->peer.pid;
	e->pd = sw_pd_number(mr->pd);
	e->access = mr->reg.access;
	e->iova = mr->reg.iova;
	e->length = mr->reg.length;
	e->addr = mr->reg.addr;
	WRITE_ONCE(e->key, mr->lkey);
	seq_end(&e->seq);
}

void sw_arena_mr_clear(struct sw_dev *sw, u32 idx)
{
	struct uabi_sw_mr *e;

	if (!sw_has_arena(sw))
		return;
	e = &sw->arena.mrs[idx];
	seq_begin(&e->seq);
	WRITE_ONCE(e->key, 0u);
	e->pid = 0;
	e->length = 0;
	seq_end(&e->seq);
}

/* ------------------------------------------------------------------- QP */
static struct uabi_sw_qp *qp_desc(struct sw_dev *sw, const struct uabi_qp *qp)
{
	return &sw->arena.qps[qp->qpn - SW_FIRST_QPN];
}

static u32 recv_stride(u32 max_sge)
{
	return sizeof(struct uabi_sw_recv_wqe) + max_sge * sizeof(struct uabi_sw_sge);
}

int sw_arena_qp_create(struct sw_dev *sw, struct uabi_qp *qp)
{
	struct uabi_qp_cap *cap = &qp->init.cap;
	struct sw_ring *r;
	struct uabi_sw_qp *d;
	u32 entries = 0, sge = 0;
	bool has_rq;

	if (!sw_has_arena(sw))
		return 0;
	has_rq = !qp->srq && (qp->qp_type == UABI_QPT_RC ||
			      qp->qp_type == UABI_QPT_UC ||
			      qp->qp_type == UABI_QPT_UD);
	if (has_rq) {
		entries = pow2_at_least(cap->max_recv_wr ? cap->max_recv_wr : 1);
		sge = cap->max_recv_sge ? cap->max_recv_sge : 1;
	}
	r = ring_new(sw, (u64)entries * (entries ? recv_stride(sge) : 0));
	if (!r)
		return -ENOMEM;
	if (has_rq) {
		cap->max_recv_wr = entries;
		cap->max_recv_sge = sge;
	}
	qp->drv = r;

	d = qp_desc(sw, qp);
	seq_begin(&d->seq);
	WRITE_ONCE(d->state, (u32)UABI_QPS_RESET);
	d->type = qp->qp_type;
	d->pid = qp->ctx ? qp->ctx->peer.pid : 0;
	d->pd = qp->pd ? sw_pd_number(qp->pd) : 0;
	d->dest_qpn = 0;
	d->qkey = 0;
	d->access = 0;
	d->send_cqn = qp->send_cq ? qp->send_cq->cqn : 0;
	d->recv_cqn = qp->recv_cq ? qp->recv_cq->cqn : 0;
	d->srq_slot = qp->srq ? ((struct sw_ring *)qp->srq->drv)->slot : 0;
	d->xrcd = qp->xrcd ? sw_xrcd_number(sw, qp->xrcd) : 0;
	d->rq_lock = 0;
	d->rq_size = entries;
	d->rq_stride = entries ? recv_stride(sge) : 0;
	d->rq_off = r->off;
	d->rq_prod = 0;
	d->rq_cons = 0;
	d->min_rnr_timer = 0;
	d->rnr_retry = 0;
	d->timeout = 0;
	d->retry_cnt = 0;
	d->port_num = 1;
	d->sl = 0;
	d->path_mtu = 0;
	d->sq_sig_all = qp->init.sq_sig_all ? 1 : 0;
	d->dlid = 0;
	d->is_global = 0;
	d->flush = 0;
	d->max_recv_sge = sge;
	WRITE_ONCE(d->qpn, qp->qpn);
	seq_end(&d->seq);
	return 0;
}

int sw_arena_qp_modify(struct sw_dev *sw, struct uabi_qp *qp,
		       const struct uabi_qp_attr *a, u32 mask)
{
	struct uabi_sw_qp *d;
	u32 next, hw;

	if (!sw_has_arena(sw))
		return 0;
	d = qp_desc(sw, qp);
	next = (mask & UABI_QP_STATE) ? a->qp_state : qp->state;
	hw = READ_ONCE(d->state);
	/* The data path moved the QP to ERR: only RESET or ERR make sense. */
	if (hw == UABI_QPS_ERR && qp->state != UABI_QPS_ERR &&
	    next != UABI_QPS_RESET && next != UABI_QPS_ERR)
		return -EINVAL;

	seq_begin(&d->seq);
	if (next == UABI_QPS_RESET) {
		d->dest_qpn = 0;
		d->qkey = 0;
		d->access = 0;
		d->min_rnr_timer = 0;
		d->rnr_retry = 0;
		d->timeout = 0;
		d->retry_cnt = 0;
		d->dlid = 0;
		d->sl = 0;
		d->is_global = 0;
		d->flush = 0;
		WRITE_ONCE(d->rq_prod, 0ull);
		WRITE_ONCE(d->rq_cons, 0ull);
	}
	if (mask & UABI_QP_DEST_QPN)
		d->dest_qpn = a->dest_qp_num;
	if (mask & UABI_QP_QKEY)
		d->qkey = a->qkey;
	if (mask & UABI_QP_ACCESS_FLAGS)
		d->access = a->qp_access_flags;
	if (mask & UABI_QP_MIN_RNR_TIMER)
		d->min_rnr_timer = a->min_rnr_timer;
	if (mask & UABI_QP_RNR_RETRY)
		d->rnr_retry = a->rnr_retry;
	if (mask & UABI_QP_TIMEOUT)
		d->timeout = a->timeout;
	if (mask & UABI_QP_RETRY_CNT)
		d->retry_cnt = a->retry_cnt;
	if (mask & UABI_QP_PORT)
		d->port_num = a->port_num;
	if (mask & UABI_QP_PATH_MTU)
		d->path_mtu = (u8)a->path_mtu;
	if (mask & UABI_QP_AV) {
		d->dlid = a->ah_attr.dlid;
		d->sl = a->ah_attr.sl;
		d->is_global = a->ah_attr.is_global;
	}
	WRITE_ONCE(d->state, next);
	seq_end(&d->seq);
	return 0;
}

/* Raises the completion event of CQ @cqn if it is armed (called by the
 * control half; the data path asks with UABI_SW_ARENA_NOTIFY_CQ). */
static void wake_cq(struct sw_dev *sw, u32 cqn)
{
	struct uabi_sw_cq *c;
	u32 armed;

	if (cqn < 1 || cqn > SW_MAX_CQ)
		return;
	c = &sw->arena.cqs[cqn - 1];
	WRITE_ONCE(c->flush, 1u);
	smp_mb();
	armed = READ_ONCE(c->armed);
	if (armed == UABI_SW_CQ_ARM_NONE || cmpxchg(&c->armed, armed, 0u) != armed)
		return;
	mutex_lock(&sw->lock);
	if (sw->cq_table[cqn - 1])
		uabi_cq_comp_event(sw->cq_table[cqn - 1]);
	mutex_unlock(&sw->lock);
}

/*
 * @qp goes away with its context (its process died or exited without
 * destroying it).  The RC or UC QP connected to it would learn at its next
 * send; a peer that only waits for receives would wait forever.  So it
 * learns now: it moves to ERR, its owner flushes what it has outstanding
 * at its next poll, and an armed CQ of it raises its event.
 */
void sw_arena_qp_orphan_peer(struct sw_dev *sw, struct uabi_qp *qp)
{
	struct uabi_sw_qp *d, *p;
	u32 dest, st;

	if (!sw_has_arena(sw) || (qp->qp_type != UABI_QPT_RC && qp->qp_type != UABI_QPT_UC))
		return;
	d = qp_desc(sw, qp);
	dest = READ_ONCE(d->dest_qpn);
	if (dest < SW_FIRST_QPN || dest - SW_FIRST_QPN >= SW_MAX_QP)
		return;
	p = &sw->arena.qps[dest - SW_FIRST_QPN];
	if (READ_ONCE(p->qpn) != dest || READ_ONCE(p->dest_qpn) != qp->qpn ||
	    READ_ONCE(p->type) != qp->qp_type)
		return;
	for (;;) {
		st = READ_ONCE(p->state);
		if (st != UABI_QPS_RTR && st != UABI_QPS_RTS && st != UABI_QPS_SQD)
			return;
		if (cmpxchg(&p->state, st, (u32)UABI_QPS_ERR) == st)
			break;
	}
	WRITE_ONCE(p->flush, 1u);
	wake_cq(sw, READ_ONCE(p->recv_cqn));
	if (READ_ONCE(p->send_cqn) != READ_ONCE(p->recv_cqn))
		wake_cq(sw, READ_ONCE(p->send_cqn));
}

void sw_arena_qp_destroy(struct sw_dev *sw, struct uabi_qp *qp)
{
	struct uabi_sw_qp *d;

	if (!sw_has_arena(sw))
		return;
	d = qp_desc(sw, qp);
	seq_begin(&d->seq);
	WRITE_ONCE(d->qpn, 0u);
	WRITE_ONCE(d->state, (u32)UABI_QPS_RESET);
	d->pid = 0;
	d->rq_size = 0;
	d->rq_off = 0;
	seq_end(&d->seq);
	arena_quiesce(&d->rq_lock);
	ring_free(sw, qp->drv);
	qp->drv = NULL;
}

/* ------------------------------------------------------------------- CQ */
/*
 * A CQ's small ring (struct uabi_sw_small) holds the payload of small
 * SENDs until the CQ's owner polls their completions.  It has its own
 * indices, so it is smaller than the CQE ring (a sender finding it full
 * copies the payload itself) and stays where it is when the CQ is resized.
 */
int sw_arena_cq_create(struct sw_dev *sw, struct uabi_cq *cq, u32 entries)
{
	u32 slots = min_t(u32, entries, UABI_SW_SMALL_SLOTS);
	struct uabi_sw_cq *d;
	struct sw_ring *r;

	if (!sw_has_arena(sw))
		return 0;
	r = ring_new(sw, (u64)entries * sizeof(struct uabi_sw_cqe));
	if (!r)
		return -ENOMEM;
	r->small_bytes = (u64)slots * sizeof(struct uabi_sw_small);
	/* Not zeroed: a slot is read only through a CQE that its
	 * producer wrote after filling it (the CQE ring is zeroed). */
	r->small_off = heap_alloc(sw, r->small_bytes, false);
	if (!r->small_off) {
		ring_free(sw, r);
		return -ENOMEM;
	}
	cq->drv = r;
	d = &sw->arena.cqs[cq->cqn - 1];
	seq_begin(&d->seq);
	d->pid = cq->uobj->ctx->peer.pid;
	d->size = entries;
	d->ring_off = r->off;
	d->lock = 0;
	d->armed = UABI_SW_CQ_ARM_NONE;
	d->prod = 0;
	d->overrun = 0;
	d->flush = 0;
	d->small_off = r->small_off;
	d->small_slots = slots;
	d->small_prod = 0;
	d->cons = 0;
	d->small_cons = 0;
	WRITE_ONCE(d->cqn, cq->cqn);
	seq_end(&d->seq);
	return 0;
}

int sw_arena_cq_resize(struct sw_dev *sw, struct uabi_cq *cq, u32 entries)
{
	struct sw_ring *old = cq->drv, *r;
	struct uabi_sw_cq *d;
	u64 prod, cons;
	int ret;

	if (!sw_has_arena(sw))
		return 0;
	d = &sw->arena.cqs[cq->cqn - 1];
	if (entries == d->size)
		return 0;
	r = ring_new(sw, (u64)entries * sizeof(struct uabi_sw_cqe));
	if (!r)
		return -ENOMEM;
	ret = arena_lock(&d->lock);
	if (ret)
		goto err;
	prod = READ_ONCE(d->prod);
	cons = READ_ONCE(d->cons);
	if (prod - cons > entries - 1) {
		arena_unlock(&d->lock);
		ret = -EINVAL;	/* the completions in it would not fit */
		goto err;
	}
	ring_move(sw, d->ring_off, d->size, r->off, entries,
		  sizeof(struct uabi_sw_cqe), cons, prod);
	seq_begin(&d->seq);
	d->ring_off = r->off;
	d->size = entries;
	seq_end(&d->seq);
	arena_unlock(&d->lock);
	r->small_off = old->small_off;
	r->small_bytes = old->small_bytes;
	old->small_off = 0;
	cq->drv = r;
	ring_free(sw, old);
	return 0;
err:
	ring_free(sw, r);
	return ret;
}

void sw_arena_cq_destroy(struct sw_dev *sw, struct uabi_cq *cq)
{
	struct uabi_sw_cq *d;

	if (!sw_has_arena(sw))
		return;
	d = &sw->arena.cqs[cq->cqn - 1];
	seq_begin(&d->seq);
	WRITE_ONCE(d->cqn, 0u);
	d->pid = 0;
	d->size = 0;
	d->ring_off = 0;
	d->small_off = 0;
	d->small_slots = 0;
	seq_end(&d->seq);
	arena_quiesce(&d->lock);
	ring_free(sw, cq->drv);
	cq->drv = NULL;
}

/* ------------------------------------------------------------------ SRQ */
int sw_arena_srq_create(struct sw_dev *sw, struct uabi_srq *srq, u32 slot)
{
	u32 entries = pow2_at_least(srq->attr.max_wr);
	u32 stride = recv_stride(srq->attr.max_sge);
	struct uabi_sw_srq *d;
	struct sw_ring *r;

	r = ring_new(sw, sw_has_arena(sw) ? (u64)entries * stride : 0);
	if (!r)
		return -ENOMEM;
	r->slot = slot;
	srq->drv = r;
	if (!sw_has_arena(sw))
		return 0;
	srq->attr.max_wr = entries;
	d = &sw->arena.srqs[slot - 1];
	seq_begin(&d->seq);
	d->pid = srq->ctx->peer.pid;
	d->pd = sw_pd_number(srq->pd);
	d->type = srq->srq_type;
	d->xrcd = srq->xrcd ? sw_xrcd_number(sw, srq->xrcd) : 0;
	d->cqn = srq->cq ? srq->cq->cqn : 0;
	d->lock = 0;
	d->size = entries;
	d->stride = stride;
	d->ring_off = r->off;
	d->prod = 0;
	d->cons = 0;
	d->limit = 0;
	d->max_sge = srq->attr.max_sge;
	d->limit_event = 0;
	WRITE_ONCE(d->slot, slot);
	seq_end(&d->seq);
	return 0;
}

int sw_arena_srq_modify(struct sw_dev *sw, struct uabi_srq *srq,
			const struct uabi_srq_attr *attr, u32 mask)
{
	struct sw_ring *old = srq->drv, *r;
	struct uabi_sw_srq *d;
	u32 entries;
	u64 prod, cons;
	int ret;

	if (!sw_has_arena(sw))
		return 0;
	d = &sw->arena.srqs[old->slot - 1];
	if ((mask & 1u) && attr->max_wr > d->size) {	/* IBV_SRQ_MAX_WR */
		entries = pow2_at_least(attr->max_wr);
		r = ring_new(sw, (u64)entries * d->stride);
		if (!r)
			return -ENOMEM;
		r->slot = old->slot;
		ret = arena_lock(&d->lock);
		if (ret) {
			ring_free(sw, r);
			return ret;
		}
		prod = READ_ONCE(d->prod);
		cons = READ_ONCE(d->cons);
		ring_move(sw, d->ring_off, d->size, r->off, entries, d->stride,
			  cons, prod);
		seq_begin(&d->seq);
		d->ring_off = r->off;
		d->size = entries;
		seq_end(&d->seq);
		arena_unlock(&d->lock);
		srq->drv = r;
		ring_free(sw, old);
	}
	if (mask & 2u) {				/* IBV_SRQ_LIMIT */
		WRITE_ONCE(d->limit_event, 0u);
		smp_store_release(&d->limit, attr->srq_limit);
	}
	return 0;
}

void sw_arena_srq_destroy(struct sw_dev *sw, struct uabi_srq *srq, u32 slot)
{
	struct uabi_sw_srq *d;

	if (sw_has_arena(sw)) {
		d = &sw->arena.srqs[slot - 1];
		seq_begin(&d->seq);
		WRITE_ONCE(d->slot, 0u);
		d->pid = 0;
		d->size = 0;
		d->ring_off = 0;
		seq_end(&d->seq);
		arena_quiesce(&d->lock);
	}
	ring_free(sw, srq->drv);
	srq->drv = NULL;
}
