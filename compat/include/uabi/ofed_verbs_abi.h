/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Where OFED 1.5's verbs structs differ from rdma-core's, as byte offsets on
 * LP64 (docs/xrc.md, "Binary layouts").  One list for both sides: the OFED
 * API header (compat/include/ofed/infiniband/verbs.h) static-asserts its
 * structs against it in the tests, and the drop-in library (which is built
 * against Debian's rdma-core header, so cannot include the OFED one) writes
 * and reads the OFED-only fields at these offsets.
 */
#ifndef UABI_OFED_VERBS_ABI_H
#define UABI_OFED_VERBS_ABI_H

/* enum ibv_qp_type: OFED's send side of XRC (upstream has no 5). */
#define UABI_OFED_QPT_XRC 5

/* enum ibv_event_flags: or-ed into event_type of an event on an XRC
 * receive QP; element.xrc_qp_num then holds its number. */
#define UABI_OFED_XRC_QP_EVENT_FLAG 0x80000000u

/* struct ibv_qp_init_attr: OFED appends the XRC domain (upstream ends at
 * sq_sig_all, 60 bytes + padding). */
#define UABI_OFED_QP_INIT_ATTR_XRC_DOMAIN 64
#define UABI_OFED_QP_INIT_ATTR_SIZE 72

/* struct ibv_send_wr: xrc_remote_srq_num sits where upstream has
 * qp_type.xrc.remote_srqn. */
#define UABI_OFED_SEND_WR_XRC_REMOTE_SRQ_NUM 72

/* struct ibv_srq: OFED puts events_completed right after handle and the
 * XRC fields before its mutex; upstream has the mutex at 32. */
#define UABI_OFED_SRQ_EVENTS_COMPLETED 28
#define UABI_OFED_SRQ_XRC_SRQ_NUM 32
#define UABI_OFED_SRQ_XRC_DOMAIN 40
#define UABI_OFED_SRQ_XRC_CQ 48

/* struct ibv_qp: the same prefix up to qp_type (60); then OFED has
 * events_completed (64) and xrc_domain (72) where upstream's mutex is. */
#define UABI_OFED_QP_EVENTS_COMPLETED 64
#define UABI_OFED_QP_XRC_DOMAIN 72

/* struct ibv_xrc_domain { struct ibv_context *context; uint32_t handle; } */
#define UABI_OFED_XRC_DOMAIN_HANDLE 8

#endif
