/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The one portability header of the object core.
 *
 * Under __KERNEL__ it is a list of kernel includes.  Otherwise it is a
 * compact userspace implementation of the few kernel facilities the core
 * uses, with the kernel's names and semantics (the libzpool pattern).  No
 * other file of kernel/core or kernel/drivers includes a libc or <linux/...>
 * header; where the hosts really differ the core calls struct uabi_host_ops.
 */
#ifndef UABI_PORT_H
#define UABI_PORT_H

#ifdef __KERNEL__

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include <linux/types.h>

#else /* userspace */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

#define GFP_KERNEL 0
#define GFP_KERNEL_ACCOUNT 0
typedef unsigned int gfp_t;

static inline void *kmalloc(size_t n, gfp_t f) { (void)f; return malloc(n ? n : 1); }
static inline void *kzalloc(size_t n, gfp_t f) { (void)f; return calloc(1, n ? n : 1); }
static inline void *kcalloc(size_t n, size_t sz, gfp_t f) { (void)f; return calloc(n ? n : 1, sz ? sz : 1); }
static inline void *krealloc(void *p, size_t n, gfp_t f) { (void)f; return realloc(p, n ? n : 1); }
static inline void kfree(const void *p) { free((void *)p); }
#define kvzalloc kzalloc
static inline void *kvmalloc_array(size_t n, size_t sz, gfp_t f)
{
	(void)f;
	if (sz && n > SIZE_MAX / sz)
		return NULL;
	return malloc((n && sz) ? n * sz : 1);
}
#define kvfree kfree

#define MAX_ERRNO 4095
#define IS_ERR_VALUE(x) ((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE((unsigned long)ptr); }
static inline bool IS_ERR_OR_NULL(const void *ptr) { return !ptr || IS_ERR(ptr); }
static inline void *ERR_CAST(const void *ptr) { return (void *)ptr; }
#ifndef U32_MAX
#define U32_MAX ((u32)~0u)
#endif

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x) __builtin_expect(!!(x), 1)
#define check_add_overflow(a, b, d) __builtin_add_overflow(a, b, d)
#define check_mul_overflow(a, b, d) __builtin_mul_overflow(a, b, d)
#define fallthrough __attribute__((__fallthrough__))
#define __user
#define __must_check __attribute__((warn_unused_result))

#define pr_err(...) fprintf(stderr, "uabi: " __VA_ARGS__)
#define pr_warn(...) fprintf(stderr, "uabi: " __VA_ARGS__)
#define pr_info(...) do { } while (0)
#define pr_debug(...) do { } while (0)
#define WARN_ON(c) ({ \
	bool __w = !!(c); \
	if (unlikely(__w)) \
		fprintf(stderr, "uabi: WARNING at %s:%d: %s\n", \
			__FILE__, __LINE__, #c); \
	__w; \
})
#define WARN_ON_ONCE WARN_ON

static inline ssize_t strscpy_pad(char *dst, const char *src, size_t n)
{
	size_t len = strnlen(src, n);

	if (!n)
		return -E2BIG;
	if (len == n)
		len = n - 1;
	memcpy(dst, src, len);
	memset(dst + len, 0, n - len);
	return src[len] ? -E2BIG : (ssize_t)len;
}

/* Locks.  Userspace has no atomic context, so a spinlock is a mutex. */
struct mutex { pthread_mutex_t m; };
#define mutex_init(x) pthread_mutex_init(&(x)->m, NULL)
#define mutex_destroy(x) pthread_mutex_destroy(&(x)->m)
#define mutex_lock(x) pthread_mutex_lock(&(x)->m)
#define mutex_unlock(x) pthread_mutex_unlock(&(x)->m)
#define DEFINE_MUTEX(name) struct mutex name = { PTHREAD_MUTEX_INITIALIZER }
typedef struct mutex spinlock_t;
#define spin_lock_init(x) mutex_init(x)
#define spin_lock(x) mutex_lock(x)
#define spin_unlock(x) mutex_unlock(x)

typedef struct { int counter; } atomic_t;
#define ATOMIC_INIT(i) { (i) }
static inline int atomic_read(const atomic_t *v) { return __atomic_load_n(&v->counter, __ATOMIC_SEQ_CST); }
static inline void atomic_set(atomic_t *v, int i) { __atomic_store_n(&v->counter, i, __ATOMIC_SEQ_CST); }
static inline void atomic_inc(atomic_t *v) { __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }
static inline void atomic_dec(atomic_t *v) { __atomic_sub_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }
static inline bool atomic_dec_and_test(atomic_t *v) { return __atomic_sub_fetch(&v->counter, 1, __ATOMIC_SEQ_CST) == 0; }
static inline int atomic_inc_return(atomic_t *v) { return __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }
static inline int atomic_cmpxchg(atomic_t *v, int old, int new_)
{
	__atomic_compare_exchange_n(&v->counter, &old, new_, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}
static inline bool atomic_add_unless(atomic_t *v, int a, int u)
{
	int c = atomic_read(v);
	do {
		if (c == u)
			return false;
	} while (!__atomic_compare_exchange_n(&v->counter, &c, c + a, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return true;
}

/* Memory ordering for memory shared with other processes, as
 * <asm/barrier.h> and <linux/compiler.h>. */
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define cmpxchg(p, o, n) __sync_val_compare_and_swap((p), (o), (n))
#define xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST)
#define cond_resched() sched_yield()

static inline u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Doubly linked lists, as <linux/list.h>. */
struct list_head { struct list_head *next, *prev; };
#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)
static inline void INIT_LIST_HEAD(struct list_head *l) { l->next = l; l->prev = l; }
static inline void __list_add(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	next->prev = n; n->next = next; n->prev = prev; prev->next = n;
}
static inline void list_add(struct list_head *n, struct list_head *h) { __list_add(n, h, h->next); }
static inline void list_add_tail(struct list_head *n, struct list_head *h) { __list_add(n, h->prev, h); }
static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev; e->prev->next = e->next; e->next = e->prev = NULL;
}
static inline void list_del_init(struct list_head *e) { list_del(e); INIT_LIST_HEAD(e); }
static inline bool list_empty(const struct list_head *h) { return h->next == h; }
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(ptr, type, member) list_entry((ptr)->next, type, member)
#define list_for_each_entry(pos, head, member) \
	for (pos = list_entry((head)->next, __typeof__(*pos), member); \
	     &pos->member != (head); \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member) \
	for (pos = list_entry((head)->next, __typeof__(*pos), member), \
	     n = list_entry(pos->member.next, __typeof__(*pos), member); \
	     &pos->member != (head); \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif /* __KERNEL__ */

#endif /* UABI_PORT_H */
