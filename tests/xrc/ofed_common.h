/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What the OFED-API test programs share: the layout checks of the OFED
 * header against <uabi/ofed_verbs_abi.h>, opening the device, and moving
 * QPs through their states the way MVAPICH2 and GASNet's ibv conduit did
 * (the RC attribute masks for the IBV_QPT_XRC send QP and, through
 * ibv_modify_xrc_rcv_qp, for the receive QP).
 */
#ifndef UABI_TESTS_XRC_OFED_COMMON_H
#define UABI_TESTS_XRC_OFED_COMMON_H

#include <infiniband/verbs.h>
#include <uabi/ofed_verbs_abi.h>

#include <fcntl.h>
#include <stddef.h>

#include "xrc_harness.h"
#include "xrc_roce.h"

#ifndef UABI_OFED_VERBS_API
#error "compile with -I<rdma-uabi>/compat/include/ofed first: this is OFED 1.5 source"
#endif

/* The header's OFED layouts are the offsets the library serves. */
_Static_assert(IBV_QPT_XRC == UABI_OFED_QPT_XRC, "qp type");
_Static_assert((uint32_t)IBV_XRC_QP_EVENT_FLAG == UABI_OFED_XRC_QP_EVENT_FLAG, "event flag");
_Static_assert(offsetof(struct ibv_qp_init_attr, xrc_domain) == UABI_OFED_QP_INIT_ATTR_XRC_DOMAIN,
	       "init_attr.xrc_domain");
_Static_assert(sizeof(struct ibv_qp_init_attr) == UABI_OFED_QP_INIT_ATTR_SIZE, "init_attr size");
_Static_assert(offsetof(struct ibv_send_wr, xrc_remote_srq_num) ==
		   UABI_OFED_SEND_WR_XRC_REMOTE_SRQ_NUM,
	       "send_wr.xrc_remote_srq_num");
_Static_assert(offsetof(struct ibv_srq, events_completed) == UABI_OFED_SRQ_EVENTS_COMPLETED,
	       "srq.events_completed");
_Static_assert(offsetof(struct ibv_srq, xrc_srq_num) == UABI_OFED_SRQ_XRC_SRQ_NUM,
	       "srq.xrc_srq_num");
_Static_assert(offsetof(struct ibv_srq, xrc_domain) == UABI_OFED_SRQ_XRC_DOMAIN, "srq.xrc_domain");
_Static_assert(offsetof(struct ibv_srq, xrc_cq) == UABI_OFED_SRQ_XRC_CQ, "srq.xrc_cq");
_Static_assert(offsetof(struct ibv_qp, events_completed) == UABI_OFED_QP_EVENTS_COMPLETED,
	       "qp.events_completed");
_Static_assert(offsetof(struct ibv_qp, xrc_domain) == UABI_OFED_QP_XRC_DOMAIN, "qp.xrc_domain");
_Static_assert(offsetof(struct ibv_xrc_domain, handle) == UABI_OFED_XRC_DOMAIN_HANDLE,
	       "xrc_domain.handle");
/* Where OFED and rdma-core agree, and the library relies on it. */
_Static_assert(offsetof(struct ibv_qp, qp_num) == 52, "qp.qp_num");
_Static_assert(offsetof(struct ibv_context, ops) == 8, "context.ops");
_Static_assert(sizeof(struct ibv_wc) == 48, "wc size");

#define OFED_ACCESS_ALL                                                                            \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)

/* The library must not write past OFED's (shorter) structs: each query
 * gets its struct followed by a guard. */
#define OFED_GUARD 0xa5
struct ofed_qp_attr_guarded {
	struct ibv_qp_attr attr;
	unsigned char guard[64];
};
struct ofed_init_attr_guarded {
	struct ibv_qp_init_attr init;
	unsigned char guard[64];
};

static inline int ofed_guard_intact(const unsigned char *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (g[i] != OFED_GUARD)
			return 0;
	return 1;
}

static inline struct ibv_context *ofed_open_device(void)
{
	return xrc_open_device();
}

static inline uint16_t ofed_port_lid(struct ibv_context *ctx)
{
	struct {
		struct ibv_port_attr a;
		unsigned char guard[64];
	} p;

	memset(&p, OFED_GUARD, sizeof(p));
	int r = ibv_query_port(ctx, 1, &p.a);
	xrc_expect_ret(r, 0, "ibv_query_port(1)");
	xrc_check(ofed_guard_intact(p.guard, sizeof(p.guard)),
		  "ibv_query_port wrote nothing past OFED's %zu-byte ibv_port_attr", sizeof(p.a));
	return r ? 0 : p.a.lid;
}

static inline int ofed_qp_to_init(int (*modify)(void *, struct ibv_qp_attr *, int), void *obj,
				  const char *what)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = OFED_ACCESS_ALL & ~IBV_ACCESS_LOCAL_WRITE;
	return xrc_expect_ret(
	    modify(obj, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
	    0, "%s RESET->INIT (STATE|PKEY_INDEX|PORT|ACCESS_FLAGS)", what);
}

/* RTR with the RC mask, as OFED programs did for both XRC QP kinds. */
static inline int ofed_qp_to_rtr(int (*modify)(void *, struct ibv_qp_attr *, int), void *obj,
				 const char *what, uint32_t dest_qpn, uint16_t dlid)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0x1234;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = dlid;
	a.ah_attr.port_num = 1;
	if (!xrc_roce_av(&a.ah_attr))
		return 0;
	return xrc_expect_ret(modify(obj, &a,
				     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER),
			      0,
			      "%s INIT->RTR (dest qpn %#x; RC mask incl. MAX_DEST_RD_ATOMIC|"
			      "MIN_RNR_TIMER)",
			      what, dest_qpn);
}

static inline int ofed_qp_to_rts(struct ibv_qp *qp, const char *what, uint8_t timeout)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x1234;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return xrc_expect_ret(ibv_modify_qp(qp, &a,
					    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
						IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_MAX_QP_RD_ATOMIC),
			      0, "%s RTR->RTS", what);
}

static inline int ofed_modify_qp_cb(void *qp, struct ibv_qp_attr *a, int mask)
{
	return ibv_modify_qp((struct ibv_qp *)qp, a, mask);
}

/* (domain, qpn) for ibv_modify_xrc_rcv_qp. */
struct ofed_rcv_ref {
	struct ibv_xrc_domain *dom;
	uint32_t qpn;
};

static inline int ofed_modify_rcv_cb(void *ref, struct ibv_qp_attr *a, int mask)
{
	struct ofed_rcv_ref *r = (struct ofed_rcv_ref *)ref;

	return ibv_modify_xrc_rcv_qp(r->dom, r->qpn, a, mask);
}

/* An IBV_QPT_XRC send QP (OFED: the domain in init_attr.xrc_domain). */
static inline struct ibv_qp *ofed_create_send_qp(struct ibv_pd *pd, struct ibv_cq *cq,
						 struct ibv_xrc_domain *dom, uint32_t depth)
{
	struct ibv_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.cap.max_send_wr = depth;
	ia.cap.max_send_sge = 1;
	ia.qp_type = IBV_QPT_XRC;
	ia.sq_sig_all = 0;
	ia.xrc_domain = dom;
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	xrc_check(qp != NULL, "ibv_create_qp(IBV_QPT_XRC, xrc_domain) = %s%s",
		  qp ? "qp" : "NULL: ", qp ? "" : strerror(errno));
	if (qp)
		xrc_check(qp->qp_type == IBV_QPT_XRC && qp->qp_num != 0,
			  "send qp: qp_type %d (IBV_QPT_XRC), qp_num %#x", (int)qp->qp_type,
			  qp->qp_num);
	return qp;
}

/* Polls @cq for @n completions into @wc, at most XRC_WAIT_MS. */
static inline int ofed_poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	uint64_t end = xrc_now_ms() + XRC_WAIT_MS;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return got;
		got += r;
		if (r == 0) {
			if (xrc_now_ms() >= end)
				return got;
			usleep(50);
		}
	}
	return got;
}

static inline const char *ofed_state_name(int s)
{
	static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

	return s >= 0 && s <= 6 ? n[s] : "?";
}

/* Posts one signaled SEND of message @i (@len bytes of xrc_fill's pattern,
 * written to @buf first) with xrc_remote_srq_num @srq_num: 0 or an errno. */
static inline int ofed_post_xrc_send(struct ibv_qp *qp, struct ibv_mr *mr, unsigned char *buf,
				     uint32_t i, uint32_t len, uint32_t srq_num)
{
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey};
	struct ibv_send_wr wr, *bad = NULL;

	xrc_fill(buf, i, len);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.xrc_remote_srq_num = srq_num;
	return ibv_post_send(qp, &wr, &bad);
}

/* The same, and waits for its completion. */
static inline int ofed_send_one(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
				unsigned char *buf, uint32_t i, uint32_t len, uint32_t srq_num,
				struct ibv_wc *wc)
{
	int r = ofed_post_xrc_send(qp, mr, buf, i, len, srq_num);

	if (r)
		return r;
	return ofed_poll_n(cq, wc, 1) == 1 ? 0 : ETIMEDOUT;
}

#endif
