/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi: the generic object uAPI, all of it.
 *
 * docs/uapi.md is the prose specification; every rule enforced by
 * kernel/core/dispatch.c is listed there.  The uAPI is split by what it
 * describes, each header usable on its own:
 *
 *   <rdma/uabi_types.h>  __aligned_u64 and the layout checks
 *   <rdma/uabi_msg.h>    framing: message, command and attribute headers,
 *                        their flags and the hard limits
 *   <rdma/uabi_cmds.h>   object, method and per-method attribute ids
 *   <rdma/uabi_verbs.h>  the structs attributes carry and their values
 *   <rdma/uabi_ioctl.h>  the kernel transport (/dev/rdma_uabi)
 *   <rdma/uabi_sw.h>     driver namespace of the software device
 *
 * <rdma/uabi_wire.h> walks the framing (bounds-checked iteration over
 * commands and attributes); it is not included here.
 */
#ifndef RDMA_UABI_H
#define RDMA_UABI_H

#include <rdma/uabi_types.h>
#include <rdma/uabi_msg.h>
#include <rdma/uabi_cmds.h>
#include <rdma/uabi_verbs.h>
#include <rdma/uabi_cm.h>
#include <rdma/uabi_ioctl.h>

#endif /* RDMA_UABI_H */
