// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A user's arena (docs/datapath.md, docs/security.md): laid out here, in
 * two parts.  The read-only part holds what the data path checks against
 * (QP, CQ and SRQ descriptors, the MR table); only this file writes it.
 * The writable part holds what the data path moves (indices, lock words,
 * flags) and the rings.  Nothing read back from the writable part is
 * trusted: ring places and sizes come from struct sw_ring, indices are
 * checked against them, lock waits are bounded.
 *
 * Read-only descriptors are published with a sequence counter (odd while
 * written); the writers of one descriptor are serialized by the core's
 * object locks (or dev->lock for XRC receive QPs).  The heap allocator is
 * under dom->lock.
 */
#include "sw_internal.h"

#define SW_LOCK_CONTROL 0xffffffffu	/* lock holder "the control half" */
/* The longest the control half waits for a lock word a client holds: a
 * data-path holder keeps it for a few stores, so this is a dead or hostile
 * holder, and the call gives up (uabid serves others meanwhile). */
#define SW_LOCK_WAIT_NS 20000000ull

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
 * few stores; give up (-EBUSY) rather than wait on a dead or hostile
 * holder for more than SW_LOCK_WAIT_NS. */
static int arena_lock(u32 *lock)
{
	u64 until = ktime_get_ns() + SW_LOCK_WAIT_NS;

	for (;;) {
		if (cmpxchg(lock, 0u, SW_LOCK_CONTROL) == 0u)
			return 0;
		if (ktime_get_ns() > until)
			return -EBUSY;
		cond_resched();
	}
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
 * rests before reuse (sw_heap_free()).  True if the lock was seen free.
 */
static bool arena_quiesce(u32 *lock)
{
	u64 until = ktime_get_ns() + SW_LOCK_WAIT_NS;

	smp_mb();	/* the cleared number, before the lock word is read */
	while (smp_load_acquire(lock)) {
		if (ktime_get_ns() > until)
			return false;
		cond_resched();
	}
	return true;	/* and what the last holder wrote is visible */
}

/* --------------------------------------------------------------- layout */
int sw_arena_init(struct sw_domain *dom, const struct uabi_shm_ops *ops,
		  size_t heap_bytes)
{
	struct sw_arena *a = &dom->arena;
	struct uabi_sw_arena_info info = {
		.magic = UABI_SW_ARENA_MAGIC,
		.version = UABI_SW_ARENA_VERSION,
		.qp_first = sw_qp_first(dom),
		.qp_count = SW_DOM_QP,
		.cq_count = SW_DOM_CQ,
		.srq_count = SW_DOM_SRQ,
		.mr_count = SW_DOM_KEYS + 1,	/* key index 0 is never used */
		.mcg_count = SW_DOM_MCG,
		.uid = dom->uid,
	};
	void *ro = NULL, *rw = NULL;
	u64 off;
	int ret;

	BUILD_BUG_ON(sizeof(struct uabi_sw_qp) != 128);
	BUILD_BUG_ON(sizeof(struct uabi_sw_qp_rw) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_cq) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_cq_rw) != 128);
	BUILD_BUG_ON(sizeof(struct uabi_sw_srq) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_srq_rw) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_mr) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_mcg) != 256);
	BUILD_BUG_ON(sizeof(struct uabi_sw_cqe) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_small) != 256);
	BUILD_BUG_ON(sizeof(struct uabi_sw_arena_info) > SW_PAGE);
	BUILD_BUG_ON(sizeof(struct uabi_sw_arena_rw_hdr) > SW_PAGE);
	BUILD_BUG_ON(offsetof(struct uabi_sw_arena_rw_hdr, port) != 64);
	BUILD_BUG_ON(sizeof(struct uabi_sw_port_counters) != 128 + 64 * UABI_SW_PC_SLOTS);

	if (!ops)
		return 0;
	/* Read-only: a copy of the layout, then the descriptors. */
	off = SW_PAGE;
	info.qp_off = off;
	off += sw_page_align((u64)info.qp_count * sizeof(struct uabi_sw_qp));
	info.cq_off = off;
	off += sw_page_align((u64)info.cq_count * sizeof(struct uabi_sw_cq));
	info.srq_off = off;
	off += sw_page_align((u64)info.srq_count * sizeof(struct uabi_sw_srq));
	info.mr_off = off;
	off += sw_page_align((u64)info.mr_count * sizeof(struct uabi_sw_mr));
	info.mcg_off = off;
	off += sw_page_align((u64)info.mcg_count * sizeof(struct uabi_sw_mcg));
	info.ro_size = off;
	/* Writable: the lock of atomics and the port counters (the header,
	 * which starts zeroed as all new arena memory does; the control
	 * half never reads the counters: they are the user's own count,
	 * shown to that user alone), the data path's halves, the heap. */
	off = SW_PAGE;
	info.qpw_off = off;
	off += sw_page_align((u64)info.qp_count * sizeof(struct uabi_sw_qp_rw));
	info.cqw_off = off;
	off += sw_page_align((u64)info.cq_count * sizeof(struct uabi_sw_cq_rw));
	info.srqw_off = off;
	off += sw_page_align((u64)info.srq_count * sizeof(struct uabi_sw_srq_rw));
	info.heap_off = off;
	info.heap_size = heap_bytes / SW_PAGE * SW_PAGE;
	info.rw_size = info.heap_off + info.heap_size;

	a->heap_granules = (u32)(info.heap_size / UABI_SW_HEAP_GRANULE);
	a->heap_used = kvzalloc(a->heap_granules ? a->heap_granules : 1, GFP_KERNEL_ACCOUNT);
	if (!a->heap_used)
		return -ENOMEM;
	a->ro_shm = ops->create("uabi_sw0-arena", info.ro_size, false, &ro);
	if (IS_ERR(a->ro_shm)) {
		ret = (int)PTR_ERR(a->ro_shm);
		goto err_ro;
	}
	a->rw_shm = ops->create("uabi_sw0-arena-rw", info.rw_size, true, &rw);
	if (IS_ERR(a->rw_shm)) {
		ret = (int)PTR_ERR(a->rw_shm);
		goto err_rw;
	}
	a->ops = ops;
	a->ro = ro;
	a->rw = rw;
	a->info = info;
	memcpy(a->ro, &info, sizeof(info));
	a->qps = (struct uabi_sw_qp *)(a->ro + info.qp_off);
	a->cqs = (struct uabi_sw_cq *)(a->ro + info.cq_off);
	a->srqs = (struct uabi_sw_srq *)(a->ro + info.srq_off);
	a->mrs = (struct uabi_sw_mr *)(a->ro + info.mr_off);
	a->mcgs = (struct uabi_sw_mcg *)(a->ro + info.mcg_off);
	a->qpws = (struct uabi_sw_qp_rw *)(a->rw + info.qpw_off);
	a->cqws = (struct uabi_sw_cq_rw *)(a->rw + info.cqw_off);
	a->srqws = (struct uabi_sw_srq_rw *)(a->rw + info.srqw_off);
	return 0;
err_rw:
	ops->destroy(a->ro_shm);
err_ro:
	a->ro_shm = NULL;
	a->rw_shm = NULL;
	kvfree(a->heap_used);
	a->heap_used = NULL;
	return ret;
}

void sw_arena_fini(struct sw_domain *dom)
{
	struct sw_arena *a = &dom->arena;

	if (a->ro_shm) {
		a->ops->destroy(a->rw_shm);
		a->ops->destroy(a->ro_shm);
	}
	a->ro_shm = NULL;
	a->rw_shm = NULL;
	kvfree(a->heap_used);
	a->heap_used = NULL;
}

/* ------------------------------------------------------------- counters */
void sw_arena_counters_save(struct sw_domain *dom, struct uabi_sw_port_counters *to)
{
	const struct uabi_sw_arena_rw_hdr *h = (const struct uabi_sw_arena_rw_hdr *)dom->arena.rw;

	memcpy(to, &h->port, sizeof(*to));
}

/* Into an arena no client has mapped yet (the user's first context). */
void sw_arena_counters_restore(struct sw_domain *dom, const struct uabi_sw_port_counters *from)
{
	struct uabi_sw_arena_rw_hdr *h = (struct uabi_sw_arena_rw_hdr *)dom->arena.rw;

	memcpy(&h->port, from, sizeof(*from));
}

/* ------------------------------------------------------------------- MR */
void sw_arena_mr_publish(struct sw_domain *dom, const struct uabi_mr *mr, u32 idx)
{
	struct uabi_sw_mr *e;

	if (!sw_has_arena(dom))
		return;
	e = &dom->arena.mrs[idx];
	seq_begin(&e->seq);
	e->pid = mr->pid;
	e->pd = sw_pd_number(mr->pd);
	e->access = mr->reg.access;
	e->type = UABI_SW_KEY_MR;
	e->qpn = 0;
	e->iova = mr->reg.iova;
	e->length = mr->reg.length;
	e->addr = mr->reg.addr;
	WRITE_ONCE(e->key, mr->lkey);
	seq_end(&e->seq);
}

void sw_arena_mw_publish(struct sw_domain *dom, const struct uabi_mw *mw, const struct uabi_mr *mr,
			 const struct uabi_mw_bind *bind, u32 rkey, u32 qpn)
{
	struct uabi_sw_mr *e;

	if (!sw_has_arena(dom))
		return;
	e = &dom->arena.mrs[rkey >> 8];
	seq_begin(&e->seq);
	e->pid = mr->pid;
	e->pd = sw_pd_number(mw->pd);
	e->access = bind->access;
	e->type = mw->type == UABI_MW_TYPE_2 ? UABI_SW_KEY_MW2 : UABI_SW_KEY_MW1;
	e->qpn = qpn;
	e->iova = bind->addr;
	e->length = bind->length;
	e->addr = mr->reg.addr + (bind->addr - mr->reg.iova);
	WRITE_ONCE(e->key, rkey);
	seq_end(&e->seq);
}

void sw_arena_mcg_publish(struct sw_domain *dom, u32 i)
{
	const struct uabi_sw_mcg *from = &dom->mcgs[i];
	struct uabi_sw_mcg *e;

	if (!sw_has_arena(dom))
		return;
	e = &dom->arena.mcgs[i];
	seq_begin(&e->seq);
	e->lid = from->lid;
	memcpy(e->gid, from->gid, sizeof(e->gid));
	memcpy(e->qpn, from->qpn, sizeof(e->qpn));
	WRITE_ONCE(e->num_qp, from->num_qp);
	seq_end(&e->seq);
}

void sw_arena_mr_clear(struct sw_domain *dom, u32 idx)
{
	struct uabi_sw_mr *e;

	if (!sw_has_arena(dom))
		return;
	e = &dom->arena.mrs[idx];
	seq_begin(&e->seq);
	WRITE_ONCE(e->key, 0u);
	e->pid = 0;
	e->length = 0;
	seq_end(&e->seq);
}

/* ------------------------------------------------------------------- QP */
static u32 qp_slot(const struct sw_domain *dom, u32 qpn)
{
	return qpn - sw_qp_first(dom);
}

static u32 recv_stride(u32 max_sge)
{
	return sizeof(struct uabi_sw_recv_wqe) + max_sge * sizeof(struct uabi_sw_sge);
}

/* The wire's hand-over words of an XRC receive QP (docs/wire.md, "XRC"):
 * nobody serves it yet, and whoever does first expects @psn. */
static void sw_arena_wire_reset(struct uabi_sw_qp_rw *w, u32 psn)
{
	WRITE_ONCE(w->wire_server, 0);
	WRITE_ONCE(w->wire_token, 0u);
	WRITE_ONCE(w->wire_msn, 0u);
	WRITE_ONCE(w->wire_epsn, psn);
}

int sw_arena_qp_create(struct sw_domain *dom, struct uabi_qp *qp)
{
	struct uabi_qp_cap *cap = &qp->init.cap;
	struct sw_ring *r;
	struct uabi_sw_qp *d;
	struct uabi_sw_qp_rw *w;
	u32 entries = 0, sge = 0, slot = qp_slot(dom, qp->qpn);
	bool has_rq;

	has_rq = !qp->srq && (qp->qp_type == UABI_QPT_RC ||
			      qp->qp_type == UABI_QPT_UC ||
			      qp->qp_type == UABI_QPT_UD);
	if (has_rq) {
		entries = pow2_at_least(cap->max_recv_wr ? cap->max_recv_wr : 1);
		sge = cap->max_recv_sge ? cap->max_recv_sge : 1;
	}
	r = sw_ring_new(dom, entries, entries ? recv_stride(sge) : 0);
	if (!r)
		return -ENOMEM;
	if (has_rq) {
		cap->max_recv_wr = entries;
		cap->max_recv_sge = sge;
	}
	qp->drv = r;
	if (!sw_has_arena(dom))
		return 0;

	w = &dom->arena.qpws[slot];
	WRITE_ONCE(w->rq_lock, 0u);
	WRITE_ONCE(w->err, 0u);
	WRITE_ONCE(w->rq_prod, 0ull);
	WRITE_ONCE(w->rq_cons, 0ull);
	WRITE_ONCE(w->flush, 0u);
	WRITE_ONCE(w->err_event, 0u);
	sw_arena_wire_reset(w, 0);
	d = &dom->arena.qps[slot];
	seq_begin(&d->seq);
	WRITE_ONCE(d->state, (u32)UABI_QPS_RESET);
	d->type = qp->qp_type;
	d->pid = qp->pid;
	d->pd = qp->pd ? sw_pd_number(qp->pd) : 0;
	d->dest_qpn = 0;
	d->qkey = 0;
	d->access = 0;
	d->send_cqn = qp->send_cq ? qp->send_cq->cqn : 0;
	d->recv_cqn = qp->recv_cq ? qp->recv_cq->cqn : 0;
	d->srq_slot = qp->srq ? ((struct sw_ring *)qp->srq->drv)->slot : 0;
	d->xrcd = qp->xrcd ? sw_xrcd_number(dom->sw, qp->xrcd) : 0;
	d->rq_size = entries;
	d->rq_stride = entries ? recv_stride(sge) : 0;
	d->rq_off = r->off;
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
	memset(d->dgid, 0, sizeof(d->dgid));
	d->rq_psn = 0;
	d->sgid_index = 0;
	d->traffic_class = 0;
	d->max_recv_sge = sge;
	WRITE_ONCE(d->qpn, qp->qpn);
	seq_end(&d->seq);
	return 0;
}

int sw_arena_qp_modify(struct sw_domain *dom, struct uabi_qp *qp,
		       const struct uabi_qp_attr *a, u32 mask)
{
	struct uabi_sw_qp *d;
	struct uabi_sw_qp_rw *w;
	u32 next, slot = qp_slot(dom, qp->qpn);

	if (!sw_has_arena(dom))
		return 0;
	d = &dom->arena.qps[slot];
	w = &dom->arena.qpws[slot];
	next = (mask & UABI_QP_STATE) ? a->qp_state : qp->state;
	/* The data path moved the QP to ERR: only RESET or ERR make sense. */
	if (READ_ONCE(w->err) && qp->state != UABI_QPS_ERR &&
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
		memset(d->dgid, 0, sizeof(d->dgid));
		d->rq_psn = 0;
		d->sgid_index = 0;
		d->traffic_class = 0;
		WRITE_ONCE(w->flush, 0u);
		WRITE_ONCE(w->err, 0u);
		WRITE_ONCE(w->rq_prod, 0ull);
		WRITE_ONCE(w->rq_cons, 0ull);
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
		memcpy(d->dgid, a->ah_attr.grh.dgid, sizeof(d->dgid));
		d->sgid_index = a->ah_attr.grh.sgid_index;
		d->traffic_class = a->ah_attr.grh.traffic_class;
	}
	if (mask & UABI_QP_RQ_PSN)
		d->rq_psn = a->rq_psn & 0xffffff;
	if (next == UABI_QPS_RTR && qp->state < UABI_QPS_RTR)
		sw_arena_wire_reset(w, d->rq_psn);
	if (next == UABI_QPS_ERR)
		WRITE_ONCE(w->err, 1u);
	WRITE_ONCE(d->state, next);
	seq_end(&d->seq);
	return 0;
}

/*
 * Raises the completion event of CQ @cqn of @dom for a QP the control half
 * moved to ERR (the data path asks with NOTIFY_CQ), armed or not.  An arm
 * that is not set any more may have been fired by a producer of the process
 * that just died, killed between taking the arm and raising its event: its
 * consumer sleeps in ibv_get_cq_event() for an event nobody will raise.  So
 * the event is raised whatever the arm says; a consumer that was awake gets
 * one spare event, polls, and finds its flushed work requests.
 */
static void wake_cq(struct sw_domain *dom, u32 cqn)
{
	struct uabi_sw_cq_rw *w;
	u32 armed;

	if (cqn < 1 || cqn > SW_DOM_CQ)
		return;
	w = &dom->arena.cqws[cqn - 1];
	WRITE_ONCE(w->flush, 1u);
	smp_mb();
	armed = READ_ONCE(w->armed);
	if (armed != UABI_SW_CQ_ARM_NONE && cmpxchg(&w->armed, armed, 0u) != armed)
		return;	/* a live producer fired the arm: its event comes */
	mutex_lock(&dom->lock);
	if (dom->cq_table[cqn - 1])
		uabi_cq_comp_event(dom->cq_table[cqn - 1]);
	mutex_unlock(&dom->lock);
}

/*
 * @qp goes away with its context (its process died or exited without
 * destroying it).  The RC or UC QP connected to it would learn at its next
 * send; a peer that only waits for receives would wait forever.  So it
 * learns now: it moves to ERR, its owner flushes what it has outstanding
 * at its next poll, and an armed CQ of it raises its event.  Peers are in
 * the same domain (connections never cross users); only read-only
 * descriptors decide who the peer is.
 */
void sw_arena_qp_orphan_peer(struct sw_domain *dom, struct uabi_qp *qp)
{
	struct uabi_sw_qp *d, *p;
	struct uabi_sw_qp_rw *pw;
	u32 dest, st, slot;

	if (!sw_has_arena(dom) || (qp->qp_type != UABI_QPT_RC && qp->qp_type != UABI_QPT_UC))
		return;
	d = &dom->arena.qps[qp_slot(dom, qp->qpn)];
	dest = READ_ONCE(d->dest_qpn);
	slot = qp_slot(dom, dest);
	if (dest < sw_qp_first(dom) || slot >= SW_DOM_QP)
		return;
	p = &dom->arena.qps[slot];
	pw = &dom->arena.qpws[slot];
	if (READ_ONCE(p->qpn) != dest || READ_ONCE(p->dest_qpn) != qp->qpn ||
	    READ_ONCE(p->type) != qp->qp_type)
		return;
	st = READ_ONCE(p->state);
	if (st != UABI_QPS_RTR && st != UABI_QPS_RTS && st != UABI_QPS_SQD)
		return;
	if (cmpxchg(&pw->err, 0u, 1u) != 0u)
		return;
	WRITE_ONCE(pw->flush, 1u);
	wake_cq(dom, READ_ONCE(p->recv_cqn));
	if (READ_ONCE(p->send_cqn) != READ_ONCE(p->recv_cqn))
		wake_cq(dom, READ_ONCE(p->send_cqn));
}

void sw_arena_qp_destroy(struct sw_domain *dom, struct uabi_qp *qp)
{
	struct uabi_sw_qp *d;
	u32 slot = qp_slot(dom, qp->qpn);

	if (sw_has_arena(dom)) {
		d = &dom->arena.qps[slot];
		seq_begin(&d->seq);
		WRITE_ONCE(d->qpn, 0u);
		WRITE_ONCE(d->state, (u32)UABI_QPS_RESET);
		d->pid = 0;
		d->rq_size = 0;
		d->rq_off = 0;
		seq_end(&d->seq);
		arena_quiesce(&dom->arena.qpws[slot].rq_lock);
	}
	sw_ring_free(qp->drv);
	qp->drv = NULL;
}

u32 sw_arena_qp_take_error(struct sw_domain *dom, const struct uabi_qp *qp)
{
	struct uabi_sw_qp_rw *w;
	u32 ev;

	if (!sw_has_arena(dom))
		return 0;
	w = &dom->arena.qpws[qp_slot(dom, qp->qpn)];
	ev = xchg(&w->err_event, 0u);
	return READ_ONCE(w->err) ? ev : 0;
}

/* ------------------------------------------------------------------- CQ */
/*
 * A CQ's small ring (struct uabi_sw_small) holds the payload of small
 * SENDs until the CQ's owner polls their completions.  It has its own
 * indices, so it is smaller than the CQE ring (a sender finding it full
 * copies the payload itself) and stays where it is when the CQ is resized.
 */
int sw_arena_cq_create(struct sw_domain *dom, struct uabi_cq *cq, u32 entries)
{
	u32 slots = min_t(u32, entries, UABI_SW_SMALL_SLOTS);
	struct uabi_sw_cq *d;
	struct uabi_sw_cq_rw *w;
	struct sw_ring *r;

	if (!sw_has_arena(dom))
		return 0;
	r = sw_ring_new(dom, entries, sizeof(struct uabi_sw_cqe));
	if (!r)
		return -ENOMEM;
	r->small_bytes = (u64)slots * sizeof(struct uabi_sw_small);
	/* A slot is read only through a CQE that its producer wrote after
	 * filling it. */
	r->small_off = sw_heap_alloc(dom, r->small_bytes);
	if (!r->small_off) {
		sw_ring_free(r);
		return -ENOMEM;
	}
	cq->drv = r;
	w = &dom->arena.cqws[cq->cqn - 1];
	WRITE_ONCE(w->lock, 0u);
	WRITE_ONCE(w->armed, (u32)UABI_SW_CQ_ARM_NONE);
	WRITE_ONCE(w->prod, 0ull);
	WRITE_ONCE(w->overrun, 0u);
	WRITE_ONCE(w->flush, 0u);
	WRITE_ONCE(w->small_prod, 0u);
	WRITE_ONCE(w->cons, 0ull);
	WRITE_ONCE(w->small_cons, 0u);
	/* No direct-event waiter until the new owner names one: a previous
	 * owner's (dead, its pid maybe reused) must not get this CQ's events. */
	WRITE_ONCE(w->notify_pid, 0);
	WRITE_ONCE(w->notify_fd, -1);
	WRITE_ONCE(w->direct_events, 0u);
	WRITE_ONCE(w->written, 0u);
	d = &dom->arena.cqs[cq->cqn - 1];
	seq_begin(&d->seq);
	d->pid = cq->pid;
	d->size = entries;
	d->ring_off = r->off;
	d->small_off = r->small_off;
	d->small_slots = slots;
	WRITE_ONCE(d->cqn, cq->cqn);
	seq_end(&d->seq);
	return 0;
}

int sw_arena_cq_resize(struct sw_domain *dom, struct uabi_cq *cq, u32 entries)
{
	struct sw_ring *old = cq->drv, *r;
	struct uabi_sw_cq *d;
	struct uabi_sw_cq_rw *w;
	int ret;

	if (!sw_has_arena(dom) || entries == old->entries)
		return 0;
	r = sw_ring_new(dom, entries, sizeof(struct uabi_sw_cqe));
	if (!r)
		return -ENOMEM;
	d = &dom->arena.cqs[cq->cqn - 1];
	w = &dom->arena.cqws[cq->cqn - 1];
	ret = arena_lock(&w->lock);
	if (ret)
		goto err;
	/* The completions in it must fit (and the indices make sense). */
	ret = sw_ring_move(dom, old, r, READ_ONCE(w->cons), READ_ONCE(w->prod));
	if (ret) {
		arena_unlock(&w->lock);
		goto err;
	}
	/* The new ring holds what was moved; the old one is zeroed when
	 * freed (r->clean and old->clean are false). */
	WRITE_ONCE(w->written, READ_ONCE(w->written) | UABI_SW_CQ_WRITTEN_RING);
	seq_begin(&d->seq);
	d->ring_off = r->off;
	d->size = entries;
	seq_end(&d->seq);
	arena_unlock(&w->lock);
	r->small_off = old->small_off;
	r->small_bytes = old->small_bytes;
	old->small_off = 0;
	cq->drv = r;
	sw_ring_free(old);
	return 0;
err:
	sw_ring_free(r);
	return ret;
}

/*
 * Producers write a CQ's rings only under its lock, after finding its
 * number live, and mark what they write in `written` first.  Once the
 * number is cleared and the lock seen free, no producer writes them again,
 * and a ring not marked is still as it was handed out (zero): it goes back
 * to the heap without being zeroed.  A lock not seen free: both are zeroed.
 */
void sw_arena_cq_destroy(struct sw_domain *dom, struct uabi_cq *cq)
{
	struct sw_ring *r = cq->drv;
	struct uabi_sw_cq_rw *w;
	struct uabi_sw_cq *d;
	u32 written;

	if (sw_has_arena(dom)) {
		d = &dom->arena.cqs[cq->cqn - 1];
		w = &dom->arena.cqws[cq->cqn - 1];
		seq_begin(&d->seq);
		WRITE_ONCE(d->cqn, 0u);
		d->pid = 0;
		d->size = 0;
		d->ring_off = 0;
		d->small_off = 0;
		d->small_slots = 0;
		seq_end(&d->seq);
		if (arena_quiesce(&w->lock) && r) {
			written = READ_ONCE(w->written);
			r->clean = !(written & UABI_SW_CQ_WRITTEN_RING);
			r->small_clean = !(written & UABI_SW_CQ_WRITTEN_SMALL);
		}
	}
	sw_ring_free(r);
	cq->drv = NULL;
}

/* ------------------------------------------------------------------ SRQ */
int sw_arena_srq_create(struct sw_domain *dom, struct uabi_srq *srq, u32 slot)
{
	u32 entries = pow2_at_least(srq->attr.max_wr);
	u32 stride = recv_stride(srq->attr.max_sge);
	struct uabi_sw_srq *d;
	struct uabi_sw_srq_rw *w;
	struct sw_ring *r;

	r = sw_ring_new(dom, entries, stride);
	if (!r)
		return -ENOMEM;
	r->slot = slot;
	srq->drv = r;
	if (!sw_has_arena(dom))
		return 0;
	srq->attr.max_wr = entries;
	w = &dom->arena.srqws[slot - 1];
	WRITE_ONCE(w->lock, 0u);
	WRITE_ONCE(w->limit, 0u);
	WRITE_ONCE(w->prod, 0ull);
	WRITE_ONCE(w->cons, 0ull);
	WRITE_ONCE(w->limit_event, 0u);
	WRITE_ONCE(w->owner_pid, 0);
	WRITE_ONCE(w->owner_pidns, 0ull);
	d = &dom->arena.srqs[slot - 1];
	seq_begin(&d->seq);
	d->pid = srq->pid;
	d->pd = sw_pd_number(srq->pd);
	d->type = srq->srq_type;
	d->xrcd = srq->xrcd ? sw_xrcd_number(dom->sw, srq->xrcd) : 0;
	d->cqn = srq->cq ? srq->cq->cqn : 0;
	d->size = entries;
	d->stride = stride;
	d->ring_off = r->off;
	d->max_sge = srq->attr.max_sge;
	WRITE_ONCE(d->slot, slot);
	seq_end(&d->seq);
	return 0;
}

int sw_arena_srq_modify(struct sw_domain *dom, struct uabi_srq *srq,
			const struct uabi_srq_attr *attr, u32 mask)
{
	struct sw_ring *old = srq->drv, *r;
	struct uabi_sw_srq *d;
	struct uabi_sw_srq_rw *w;
	u32 entries;
	int ret;

	if (!sw_has_arena(dom))
		return 0;
	d = &dom->arena.srqs[old->slot - 1];
	w = &dom->arena.srqws[old->slot - 1];
	/* Fewer than it holds: -EINVAL, as rxe's queue resize (the indices
	 * are the user's own to lie about; a lie only refuses its modify).
	 * Smaller but enough: the ring stays as it is. */
	if ((mask & UABI_SRQ_MAX_WR) &&
	    READ_ONCE(w->prod) - READ_ONCE(w->cons) > (u64)attr->max_wr)
		return -EINVAL;
	if ((mask & UABI_SRQ_MAX_WR) && attr->max_wr > old->entries) {
		entries = pow2_at_least(attr->max_wr);
		r = sw_ring_new(dom, entries, old->stride);
		if (!r)
			return -ENOMEM;
		r->slot = old->slot;
		ret = arena_lock(&w->lock);
		if (!ret) {
			ret = sw_ring_move(dom, old, r, READ_ONCE(w->cons), READ_ONCE(w->prod));
			if (!ret) {
				seq_begin(&d->seq);
				d->ring_off = r->off;
				d->size = entries;
				seq_end(&d->seq);
			}
			arena_unlock(&w->lock);
		}
		if (ret) {
			sw_ring_free(r);
			return ret;
		}
		srq->drv = r;
		sw_ring_free(old);
	}
	if (mask & UABI_SRQ_LIMIT) {
		WRITE_ONCE(w->limit_event, 0u);
		smp_store_release(&w->limit, attr->srq_limit);
	}
	return 0;
}

void sw_arena_srq_destroy(struct sw_domain *dom, struct uabi_srq *srq, u32 slot)
{
	struct uabi_sw_srq *d;

	if (sw_has_arena(dom)) {
		d = &dom->arena.srqs[slot - 1];
		seq_begin(&d->seq);
		WRITE_ONCE(d->slot, 0u);
		d->pid = 0;
		d->size = 0;
		d->ring_off = 0;
		seq_end(&d->seq);
		arena_quiesce(&dom->arena.srqws[slot - 1].lock);
	}
	sw_ring_free(srq->drv);
	srq->drv = NULL;
}

bool sw_arena_srq_take_limit_event(struct sw_domain *dom, u32 slot)
{
	return sw_has_arena(dom) && xchg(&dom->arena.srqws[slot - 1].limit_event, 0u);
}
