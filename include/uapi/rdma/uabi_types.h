/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi uAPI: the types every other header of this directory uses.
 *
 * The headers of include/uapi/rdma are shared byte-for-byte by the kernel
 * module, the userspace daemon, the in-process host and the client library
 * (C and C++).  They include nothing but <linux/...> headers.
 *
 * 64-bit fields are __aligned_u64, so that a layout is the same for a
 * 32-bit process and a 64-bit kernel; every struct is followed by checks of
 * its size and of the offsets that matter, so that no layout has padding
 * the compiler inserted on its own.
 */
#ifndef RDMA_UABI_TYPES_H
#define RDMA_UABI_TYPES_H

#include <linux/types.h>

/* Older userspace copies of <linux/types.h> lack it. */
#ifndef __aligned_u64
#define __aligned_u64 __u64 __attribute__((aligned(8)))
#endif

/* Compile-time layout checks, usable from C (kernel and userspace) and
 * C++ alike. */
#ifdef __cplusplus
#define UABI_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define UABI_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
#define UABI_ASSERT_SIZE(type, size) \
	UABI_STATIC_ASSERT(sizeof(type) == (size), "size of " #type)
#define UABI_ASSERT_OFFSET(type, field, off) \
	UABI_STATIC_ASSERT(__builtin_offsetof(type, field) == (off), \
			   "offset of " #type "." #field)

#endif /* RDMA_UABI_TYPES_H */
