// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The heap of a user's arena (docs/datapath.md): the rings of QPs, CQs and
 * SRQs come from it, in 256-byte granules, first fit, with the last
 * SW_HEAP_REST freed runs resting before reuse.  Its allocation map stays
 * here, out of the clients' reach; a run that leaves the rest is
 * zeroed (a long one discarded), so free granules read zero.  Under dom->lock.
 */
#include "sw_internal.h"

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

/*
 * Runs shorter than this are zeroed in place when they leave the rest;
 * longer ones give their whole pages back to the host.  Giving pages back
 * (a hole punched in the user host's memfd) is a system call that also
 * unmaps them from every process that maps the arena, and the next ring
 * there faults them in again: 2.9 us per CQ destroyed (its two rings) on
 * the development VM, against 0.6 us to zero them while in the cache.
 * The heap being first fit, the pages zeroed in place are those that the
 * rings of the user keep reusing; its memory stays at the high-water mark
 * of its short runs.
 */
#define SW_HEAP_DISCARD_MIN (64u << 10)

/* Zeroes [off, off + len) of the writable part; the whole pages of a long
 * run are given back to the host (their memory returns to the system where
 * it can). */
static void rw_zero(struct sw_arena *a, u64 off, u64 len)
{
	u64 lo = sw_page_align(off), hi = (off + len) & ~(SW_PAGE - 1);

	if (len < SW_HEAP_DISCARD_MIN || hi <= lo) {
		memset(a->rw + off, 0, len);
		return;
	}
	memset(a->rw + off, 0, lo - off);
	memset(a->rw + hi, 0, off + len - hi);
	a->ops->discard(a->rw_shm, lo, hi - lo);
}

/* Makes a run allocatable again, zeroed (a clean one still is); called
 * with dom->lock held. */
static void heap_release(struct sw_arena *a, u32 first, u32 n, bool clean)
{
	if (!clean)
		rw_zero(a, a->info.heap_off + (u64)first * UABI_SW_HEAP_GRANULE,
			(u64)n * UABI_SW_HEAP_GRANULE);
	memset(a->heap_used + first, 0, n);
	if (first < a->heap_hint)
		a->heap_hint = first;
}

/* Returns the run that rested longest to the heap. */
static void heap_release_oldest(struct sw_arena *a)
{
	struct sw_heap_run *r = &a->rest[a->rest_head];

	heap_release(a, r->first, r->n, r->clean);
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
 * Ring memory, zeroed (free granules always read zero: released runs are
 * zeroed when they leave the rest), or 0 (never a heap offset).  First fit
 * from the lowest free granule: a program that creates and destroys rings
 * keeps reusing the same pages, which stay cached and mapped, instead of
 * walking the whole (sparse) heap.  A freed ring is not reused at once: it
 * rests among the last SW_HEAP_REST freed runs first, unless the heap
 * would otherwise be full.  No memset here: a create costs the same
 * whatever the ring's size.
 */
u64 sw_heap_alloc(struct sw_domain *dom, u64 bytes)
{
	struct sw_arena *a = &dom->arena;
	u64 n64 = (bytes + UABI_SW_HEAP_GRANULE - 1) / UABI_SW_HEAP_GRANULE;
	u32 n;
	int at;

	if (!n64 || n64 > a->heap_granules)
		return 0;
	n = (u32)n64;
	mutex_lock(&dom->lock);
	at = find_run(a, a->heap_hint, a->heap_granules, n);
	if (at < 0 && heap_release_resting(a))
		at = find_run(a, a->heap_hint, a->heap_granules, n);
	if (at >= 0) {
		memset(a->heap_used + at, 1, n);
		while (a->heap_hint < a->heap_granules && a->heap_used[a->heap_hint])
			a->heap_hint++;
	}
	mutex_unlock(&dom->lock);
	if (at < 0)
		return 0;
	return a->info.heap_off + (u64)at * UABI_SW_HEAP_GRANULE;
}

/* @clean: nothing wrote the run since sw_heap_alloc() handed it out. */
void sw_heap_free(struct sw_domain *dom, u64 off, u64 bytes, bool clean)
{
	struct sw_arena *a = &dom->arena;
	u64 first = (off - a->info.heap_off) / UABI_SW_HEAP_GRANULE;
	u64 n = (bytes + UABI_SW_HEAP_GRANULE - 1) / UABI_SW_HEAP_GRANULE;
	struct sw_heap_run *r;

	if (WARN_ON(off < a->info.heap_off || first + n > a->heap_granules))
		return;
	mutex_lock(&dom->lock);
	if (a->rest_count == SW_HEAP_REST)
		heap_release_oldest(a);
	r = &a->rest[(a->rest_head + a->rest_count) % SW_HEAP_REST];
	r->first = (u32)first;
	r->n = (u32)n;
	r->clean = clean;
	a->rest_count++;
	mutex_unlock(&dom->lock);
}

struct sw_ring *sw_ring_new(struct sw_domain *dom, u32 entries, u32 stride)
{
	struct sw_ring *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	u64 bytes = (u64)entries * stride;

	if (!r)
		return NULL;
	r->dom = dom;
	r->bytes = bytes;
	r->entries = entries;
	r->stride = stride;
	r->off = bytes && sw_has_arena(dom) ? sw_heap_alloc(dom, bytes) : 0;
	if (bytes && sw_has_arena(dom) && !r->off) {
		kfree(r);
		return NULL;
	}
	return r;
}

void sw_ring_free(struct sw_ring *r)
{
	if (!r)
		return;
	if (r->off)
		sw_heap_free(r->dom, r->off, r->bytes, r->clean);
	if (r->small_off)
		sw_heap_free(r->dom, r->small_off, r->small_bytes, r->small_clean);
	kfree(r);
}

/*
 * Moves the live entries [cons, prod) of ring @from to @to (same absolute
 * indices).  The indices come from the writable part: -EINVAL unless they
 * describe at most what either ring holds, so that a client's values can
 * make this copy neither long nor leave the rings.
 */
int sw_ring_move(struct sw_domain *dom, const struct sw_ring *from,
		     const struct sw_ring *to, u64 cons, u64 prod)
{
	u8 *rw = dom->arena.rw;
	u64 n = prod - cons, i;

	if (n > from->entries || n > to->entries - 1)
		return -EINVAL;
	for (i = cons; i != prod; i++)
		memcpy(rw + to->off + (i & (to->entries - 1)) * to->stride,
		       rw + from->off + (i & (from->entries - 1)) * from->stride,
		       from->stride);
	return 0;
}
