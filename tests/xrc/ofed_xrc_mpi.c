/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * XRC as MVAPICH2 and GASNet used it, written against the OFED 1.5 API
 * (compat/include/ofed/infiniband/verbs.h) and run as separate processes
 * on rdma-uabi's libibverbs.so.1 (docs/xrc.md, issue 7):
 *
 *   A  opens the node's XRC domain on a file, creates the receive QP
 *      (ibv_create_xrc_rcv_qp) and an XRC SRQ, and moves the receive QP to
 *      RTR towards C's send QP (ibv_modify_xrc_rcv_qp);
 *   B  opens the same domain, registers on A's receive QP
 *      (ibv_reg_xrc_rcv_qp), creates its own XRC SRQ and CQ, posts
 *      receives;
 *   D  registers on the receive QP too, twice, and exits still registered;
 *      A is killed with SIGKILL (after C's first half): the receive QP
 *      stays, B still sees the state A gave it;
 *   C  (another "node": its own domain on its own file) sends N messages of
 *      various sizes through an IBV_QPT_XRC send QP with
 *      xrc_remote_srq_num = B's srq->xrc_srq_num, the first half before A
 *      is killed, the rest after; B receives every one on its SRQ,
 *      byte-exact and in order;
 *      an RDMA WRITE with a bad rkey through XRC gives B (registered on the
 *      receive QP) IBV_EVENT_QP_ACCESS_ERR | IBV_XRC_QP_EVENT_FLAG with
 *      element.xrc_qp_num;
 *   B  unregisters, and the QP is gone: query, modify, a second unreg and a
 *      new reg answer EINVAL; reg of a qpn of another domain, of a QP that
 *      is not a receive QP, of one that never existed: EINVAL.
 * Also the errnos of domain opens (O_EXCL, no O_CREAT, a closed fd), of
 * closing a domain in use, of creating XRC QPs without a domain, and guard
 * bytes after every struct the library fills (OFED's are shorter).
 *
 * The roles fork before any verbs call and each opens its own device
 * context; the parent only coordinates (socketpairs) and kills A.  One line
 * per checked point, then "ofed_xrc_mpi: PASS" or "FAIL"; exit status 0
 * only if every check passed.  Every wait is bounded.
 *
 * Usage: ofed_xrc_mpi [N]   (N messages, default 100)
 */
#define _GNU_SOURCE
#include "ofed_common.h"

#include <sys/stat.h>

enum {
	M_C_READY = 1, /* C -> P: send qpn, lid, qpn of a rcv QP in C's domain */
	M_A_SETUP,     /* P -> A: C's send qpn and lid */
	M_A_READY,     /* A -> P: rcv qpn, A's srq num, lid */
	M_B_SETUP,     /* P -> B: rcv qpn, C's send qpn, C's other-domain rcv qpn */
	M_B_READY,     /* B -> P: B's srq num */
	M_B_AFTER_KILL,
	M_B_RECV, /* P -> B: receive N */
	M_C_SEND, /* P -> C: rcv qpn, srq num, lid, count: send the next count */
	M_DONE,	  /* role -> P: step done (v0: failures so far) */
	M_B_EVENT,
	M_C_BAD_WRITE, /* P -> C: srq num, B's rkey, address */
	M_B_UNREG,
	M_C_FINISH,
	M_D_SETUP, /* P -> D: rcv qpn: register on it */
	M_D_EXIT,  /* P -> D: exit, still registered */
};

static uint32_t n_msgs = 100;
static char dom_file[256], other_dom_file[256];

/* ------------------------------------------------------------------ A */

static int role_a(int s)
{
	struct xrc_msg m;

	if (xrc_expect(s, M_A_SETUP, &m))
		return 1;
	uint32_t c_qpn = m.v[0];
	uint16_t c_lid = (uint16_t)m.v[1];

	struct ibv_context *ctx = ofed_open_device();
	if (!ctx)
		return 1;
	uint16_t lid = ofed_port_lid(ctx);
	int fd = open(dom_file, O_RDONLY | O_CREAT, 0600);
	struct ibv_xrc_domain *dom = ibv_open_xrc_domain(ctx, fd, O_CREAT);
	if (!xrc_check(dom != NULL, "ibv_open_xrc_domain(fd of %s, O_CREAT)%s%s", dom_file,
		       dom ? "" : ": ", dom ? "" : strerror(errno)))
		return 1;
	close(fd);

	struct ibv_qp_init_attr ia;
	uint32_t qpn = 0;
	memset(&ia, 0, sizeof(ia));
	xrc_expect_ret(ibv_create_xrc_rcv_qp(&ia, &qpn), EINVAL,
		       "ibv_create_xrc_rcv_qp without init_attr->xrc_domain");
	ia.xrc_domain = dom;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	if (!xrc_expect_ret(ibv_create_xrc_rcv_qp(&ia, &qpn), 0, "ibv_create_xrc_rcv_qp"))
		return 1;
	xrc_check(qpn != 0 && qpn <= 0xffffff, "receive qpn %#x is a 24-bit QP number", qpn);

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!xrc_check(pd && cq, "ibv_alloc_pd, ibv_create_cq"))
		return 1;
	struct ibv_srq_init_attr sa;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	struct ibv_srq *srq = ibv_create_xrc_srq(pd, dom, cq, &sa);
	if (!xrc_check(srq != NULL, "ibv_create_xrc_srq%s%s", srq ? "" : ": ",
		       srq ? "" : strerror(errno)))
		return 1;
	xrc_check(srq->xrc_srq_num != 0, "A's srq->xrc_srq_num = %u", srq->xrc_srq_num);

	struct ofed_rcv_ref ref = {dom, qpn};
	if (!ofed_qp_to_init(ofed_modify_rcv_cb, &ref, "ibv_modify_xrc_rcv_qp"))
		return 1;
	if (!ofed_qp_to_rtr(ofed_modify_rcv_cb, &ref, "ibv_modify_xrc_rcv_qp", c_qpn, c_lid))
		return 1;

	struct ofed_qp_attr_guarded q;
	struct ofed_init_attr_guarded qi;
	memset(&q, OFED_GUARD, sizeof(q));
	memset(&qi, OFED_GUARD, sizeof(qi));
	xrc_expect_ret(
	    ibv_query_xrc_rcv_qp(dom, qpn, &q.attr, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi.init), 0,
	    "A: ibv_query_xrc_rcv_qp (creator)");
	xrc_check(q.attr.qp_state == IBV_QPS_RTR && q.attr.dest_qp_num == c_qpn,
		  "A's query: state %s, dest qpn %#x", ofed_state_name(q.attr.qp_state),
		  q.attr.dest_qp_num);
	xrc_check(ofed_guard_intact(q.guard, sizeof(q.guard)) &&
		      ofed_guard_intact(qi.guard, sizeof(qi.guard)),
		  "ibv_query_xrc_rcv_qp wrote nothing past OFED's ibv_qp_attr (%zu bytes) and "
		  "ibv_qp_init_attr (%zu)",
		  sizeof(q.attr), sizeof(qi.init));

	xrc_send(s, M_A_READY, qpn, srq->xrc_srq_num, lid, 0);
	/* Killed here with everything still open. */
	for (;;)
		pause();
}

/* ------------------------------------------------------------------ B */

static int role_b(int s)
{
	struct xrc_msg m;

	if (xrc_expect(s, M_B_SETUP, &m))
		return 1;
	uint32_t qpn = m.v[0], c_qpn = m.v[1], other_qpn = m.v[2];

	struct ibv_context *ctx = ofed_open_device();
	if (!ctx)
		return 1;
	/* Domains as open(2) does files. */
	int fd = open(dom_file, O_RDONLY);
	errno = 0;
	struct ibv_xrc_domain *bad = ibv_open_xrc_domain(ctx, fd, O_CREAT | O_EXCL);
	xrc_check(!bad && errno == EINVAL,
		  "ibv_open_xrc_domain(existing domain, O_CREAT|O_EXCL) = %s (want EINVAL)",
		  bad ? "a domain" : xrc_errname(errno));
	char fresh[300];
	snprintf(fresh, sizeof(fresh), "%s.fresh", dom_file);
	int ffd = open(fresh, O_RDONLY | O_CREAT, 0600);
	/* EAGAIN: OFED's ib_uverbs_open_xrc_domain, kept by Linux's
	 * ib_uverbs_open_xrcd ("no file descriptor. Need CREATE flag"). */
	errno = 0;
	bad = ibv_open_xrc_domain(ctx, ffd, 0);
	xrc_check(!bad && errno == EAGAIN,
		  "ibv_open_xrc_domain(no domain yet, 0) = %s (want EAGAIN)",
		  bad ? "a domain" : xrc_errname(errno));
	close(ffd);
	unlink(fresh);
	errno = 0;
	bad = ibv_open_xrc_domain(ctx, ffd, O_CREAT);
	xrc_check(!bad && errno == EBADF,
		  "ibv_open_xrc_domain(closed fd, O_CREAT) = %s (want EBADF)",
		  bad ? "a domain" : xrc_errname(errno));
	/* The same file: no O_CREAT, the domain exists. */
	struct ibv_xrc_domain *dom = ibv_open_xrc_domain(ctx, fd, 0);
	if (!xrc_check(dom != NULL, "ibv_open_xrc_domain(fd of the same file, 0)%s%s",
		       dom ? "" : ": ", dom ? "" : strerror(errno)))
		return 1;
	close(fd);

	/* Not registered yet: the QP is not ours to query or modify. */
	struct ofed_qp_attr_guarded q;
	struct ibv_qp_init_attr qi;
	memset(&q, OFED_GUARD, sizeof(q));
	xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn, &q.attr, IBV_QP_STATE, &qi), EINVAL,
		       "ibv_query_xrc_rcv_qp before ibv_reg_xrc_rcv_qp");
	memset(&q.attr, 0, sizeof(q.attr));
	q.attr.qp_state = IBV_QPS_ERR;
	xrc_expect_ret(ibv_modify_xrc_rcv_qp(dom, qpn, &q.attr, IBV_QP_STATE), EINVAL,
		       "ibv_modify_xrc_rcv_qp(ERR) before ibv_reg_xrc_rcv_qp");

	/* Registrations that must fail. */
	xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, other_qpn), EINVAL,
		       "ibv_reg_xrc_rcv_qp(qpn %#x of another domain)", other_qpn);
	xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, c_qpn), EINVAL,
		       "ibv_reg_xrc_rcv_qp(qpn %#x of a send QP)", c_qpn);
	xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, 0xfffff0), EINVAL,
		       "ibv_reg_xrc_rcv_qp(qpn 0xfffff0, never existed)");
	xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, 0xffffffff), EINVAL,
		       "ibv_reg_xrc_rcv_qp(0xffffffff): reg never creates");

	if (!xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, qpn), 0, "ibv_reg_xrc_rcv_qp(qpn %#x)", qpn))
		return 1;
	memset(&q, OFED_GUARD, sizeof(q));
	xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn, &q.attr, IBV_QP_STATE, &qi), 0,
		       "ibv_query_xrc_rcv_qp after reg");
	xrc_check(q.attr.qp_state == IBV_QPS_RTR, "B's query: state %s (A moved it to RTR)",
		  ofed_state_name(q.attr.qp_state));

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, (int)n_msgs + 16, NULL, NULL, 0);
	if (!xrc_check(pd && cq, "ibv_alloc_pd, ibv_create_cq"))
		return 1;
	struct ibv_srq_init_attr sa;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = n_msgs + 16;
	sa.attr.max_sge = 1;
	struct ibv_srq *srq = ibv_create_xrc_srq(pd, dom, cq, &sa);
	if (!xrc_check(srq != NULL, "ibv_create_xrc_srq(B's own CQ)%s%s", srq ? "" : ": ",
		       srq ? "" : strerror(errno)))
		return 1;
	xrc_check(srq->xrc_srq_num != 0 && srq->xrc_domain == dom && srq->xrc_cq == cq &&
		      srq->pd == pd && srq->context == ctx,
		  "srq fields at OFED's offsets: xrc_srq_num %u, xrc_domain %s, xrc_cq %s",
		  srq->xrc_srq_num, srq->xrc_domain == dom ? "ok" : "wrong",
		  srq->xrc_cq == cq ? "ok" : "wrong");

	size_t len = (size_t)n_msgs * XRC_SLOT;
	unsigned char *buf = calloc(1, len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	/* For the bad write: an MR without remote access. */
	unsigned char *tbuf = calloc(1, 4096);
	struct ibv_mr *tmr = ibv_reg_mr(pd, tbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!xrc_check(mr && tmr, "ibv_reg_mr"))
		return 1;
	int posted = 0;
	for (uint32_t i = 0; i < n_msgs; i++) {
		struct ibv_sge sge = {(uintptr_t)(buf + (size_t)i * XRC_SLOT), XRC_SLOT, mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
		if (ibv_post_srq_recv(srq, &wr, &bad) == 0)
			posted++;
	}
	xrc_check(posted == (int)n_msgs, "ibv_post_srq_recv: %d of %u receives posted", posted,
		  n_msgs);
	xrc_send(s, M_B_READY, srq->xrc_srq_num, 0, 0, 0);

	/* A is dead now. */
	if (xrc_expect(s, M_B_AFTER_KILL, NULL))
		return 1;
	memset(&q, OFED_GUARD, sizeof(q));
	xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn, &q.attr,
					    IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_PATH_MTU |
						IBV_QP_RQ_PSN | IBV_QP_ACCESS_FLAGS |
						IBV_QP_MIN_RNR_TIMER,
					    &qi),
		       0, "ibv_query_xrc_rcv_qp after A's SIGKILL");
	xrc_check(q.attr.qp_state == IBV_QPS_RTR && q.attr.dest_qp_num == c_qpn &&
		      q.attr.path_mtu == IBV_MTU_2048 && q.attr.rq_psn == 0x1234 &&
		      q.attr.min_rnr_timer == 12,
		  "the QP outlived its creator with the state A set: %s, dest qpn %#x, mtu %d, "
		  "rq_psn %#x, min_rnr_timer %u",
		  ofed_state_name(q.attr.qp_state), q.attr.dest_qp_num, (int)q.attr.path_mtu,
		  q.attr.rq_psn, q.attr.min_rnr_timer);
	xrc_check(ofed_guard_intact(q.guard, sizeof(q.guard)),
		  "ibv_query_xrc_rcv_qp wrote nothing past OFED's ibv_qp_attr");
	xrc_send(s, M_DONE, 0, 0, 0, 0);

	/* Every message, in order, byte-exact. */
	if (xrc_expect(s, M_B_RECV, NULL))
		return 1;
	struct ibv_wc *wc = calloc(n_msgs, sizeof(*wc));
	int got = ofed_poll_n(cq, wc, (int)n_msgs);
	xrc_check(got == (int)n_msgs, "%d of %u completions on B's XRC SRQ's CQ", got, n_msgs);
	int bad_status = 0, bad_order = 0, bad_len = 0, bad_qp = 0, bad_data = 0;
	uint64_t bytes = 0;
	for (int k = 0; k < got; k++) {
		uint32_t i = (uint32_t)k;
		if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV) {
			if (!bad_status++)
				xrc_note("completion %d: status %s, opcode %d", k,
					 ibv_wc_status_str(wc[k].status), (int)wc[k].opcode);
			continue;
		}
		if (wc[k].wr_id != i && !bad_order++)
			xrc_note("completion %d has wr_id %llu", k,
				 (unsigned long long)wc[k].wr_id);
		if (wc[k].byte_len != xrc_size_of(i) && !bad_len++)
			xrc_note("message %u: %u bytes, sent %u", i, wc[k].byte_len,
				 xrc_size_of(i));
		if ((wc[k].qp_num != qpn || wc[k].src_qp != c_qpn) && !bad_qp++)
			xrc_note("message %u: qp_num %#x src_qp %#x", i, wc[k].qp_num,
				 wc[k].src_qp);
		long at = xrc_verify(buf + (size_t)wc[k].wr_id * XRC_SLOT, i, xrc_size_of(i));
		if (at >= 0 && !bad_data++)
			xrc_note("message %u differs at byte %ld", i, at);
		bytes += wc[k].byte_len;
	}
	xrc_check(got > 0 && !bad_status, "every receive completed IBV_WC_SUCCESS, IBV_WC_RECV");
	xrc_check(got > 0 && !bad_order, "in order (wr_id k for the k-th message)");
	xrc_check(got > 0 && !bad_len, "byte_len = the size sent (1 B .. 64 KiB)");
	xrc_check(got > 0 && !bad_qp, "qp_num = the receive QP %#x, src_qp = C's %#x", qpn, c_qpn);
	xrc_check(got > 0 && !bad_data, "payload byte-exact (%llu bytes)",
		  (unsigned long long)bytes);
	xrc_send(s, M_DONE, 0, 0, 0, 0);

	/* The async event of the receive QP reaches the registered B. */
	if (xrc_expect(s, M_B_EVENT, NULL))
		return 1;
	xrc_send(s, M_DONE, tmr->rkey, (uint32_t)((uintptr_t)tbuf >> 32), (uint32_t)(uintptr_t)tbuf,
		 0);
	struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};
	int pr = poll(&pfd, 1, 5000);
	struct ibv_async_event ev;
	memset(&ev, 0, sizeof(ev));
	if (xrc_check(pr == 1, "async fd readable within 5 s of C's bad-rkey RDMA WRITE%s",
		      pr == 1 ? "" : " (no event)") &&
	    xrc_expect_ret(ibv_get_async_event(ctx, &ev), 0, "ibv_get_async_event")) {
		uint32_t t = (uint32_t)ev.event_type;
		xrc_check((t & UABI_OFED_XRC_QP_EVENT_FLAG) &&
			      (t & ~UABI_OFED_XRC_QP_EVENT_FLAG) == IBV_EVENT_QP_ACCESS_ERR &&
			      ev.element.xrc_qp_num == qpn,
			  "event_type %#x = IBV_EVENT_QP_ACCESS_ERR | IBV_XRC_QP_EVENT_FLAG, "
			  "element.xrc_qp_num %#x = %#x",
			  t, ev.element.xrc_qp_num, qpn);
		ibv_ack_async_event(&ev);
	}
	if (xrc_expect(s, M_DONE, NULL)) /* C's side of it is done */
		return 1;
	xrc_send(s, M_DONE, 0, 0, 0, 0);

	/* Unregister: B held the last registration. */
	if (xrc_expect(s, M_B_UNREG, NULL))
		return 1;
	xrc_expect_ret(ibv_close_xrc_domain(dom), EBUSY,
		       "ibv_close_xrc_domain with an XRC SRQ and a registration in it");
	xrc_expect_ret(ibv_unreg_xrc_rcv_qp(dom, qpn), 0, "ibv_unreg_xrc_rcv_qp(qpn %#x)", qpn);
	memset(&q, OFED_GUARD, sizeof(q));
	xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn, &q.attr, IBV_QP_STATE, &qi), EINVAL,
		       "ibv_query_xrc_rcv_qp after the last unreg (QP gone)");
	memset(&q.attr, 0, sizeof(q.attr));
	q.attr.qp_state = IBV_QPS_ERR;
	xrc_expect_ret(ibv_modify_xrc_rcv_qp(dom, qpn, &q.attr, IBV_QP_STATE), EINVAL,
		       "ibv_modify_xrc_rcv_qp after the last unreg");
	xrc_expect_ret(ibv_unreg_xrc_rcv_qp(dom, qpn), EINVAL, "ibv_unreg_xrc_rcv_qp again");
	xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, qpn), EINVAL,
		       "ibv_reg_xrc_rcv_qp of the destroyed QP");

	xrc_expect_ret(ibv_destroy_srq(srq), 0, "ibv_destroy_srq(XRC SRQ)");
	xrc_expect_ret(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
	xrc_expect_ret(ibv_dereg_mr(tmr), 0, "ibv_dereg_mr");
	xrc_expect_ret(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
	xrc_expect_ret(ibv_close_xrc_domain(dom), 0, "ibv_close_xrc_domain");
	xrc_expect_ret(ibv_dealloc_pd(pd), 0, "ibv_dealloc_pd");
	xrc_expect_ret(ibv_close_device(ctx), 0, "ibv_close_device");
	free(wc);
	free(buf);
	free(tbuf);
	xrc_send(s, M_DONE, 0, 0, 0, 0);
	return xrc_failed ? 1 : 0;
}

/* ------------------------------------------------------------------ C */

static int role_c(int s)
{
	struct xrc_msg m;

	struct ibv_context *ctx = ofed_open_device();
	if (!ctx)
		return 1;
	uint16_t lid = ofed_port_lid(ctx);
	int fd = open(other_dom_file, O_RDONLY | O_CREAT, 0600);
	struct ibv_xrc_domain *dom = ibv_open_xrc_domain(ctx, fd, O_CREAT);
	if (!xrc_check(dom != NULL, "C: ibv_open_xrc_domain(its own node's file, O_CREAT)"))
		return 1;
	close(fd);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, (int)n_msgs + 16, NULL, NULL, 0);
	if (!xrc_check(pd && cq, "ibv_alloc_pd, ibv_create_cq"))
		return 1;
	/* OFED's kernel found the send QP's domain through init_attr. */
	struct ibv_qp_init_attr nd;
	memset(&nd, 0, sizeof(nd));
	nd.send_cq = nd.recv_cq = cq;
	nd.cap.max_send_wr = nd.cap.max_send_sge = 1;
	nd.qp_type = IBV_QPT_XRC;
	errno = 0;
	struct ibv_qp *nqp = ibv_create_qp(pd, &nd);
	xrc_check(!nqp && errno == EINVAL,
		  "ibv_create_qp(IBV_QPT_XRC) without xrc_domain = %s (want EINVAL)",
		  nqp ? "a QP" : xrc_errname(errno));
	if (nqp)
		ibv_destroy_qp(nqp);
	/* MVAPICH2 creates its send QP first: the receive side needs its qpn. */
	struct ibv_qp *qp = ofed_create_send_qp(pd, cq, dom, n_msgs + 16);
	if (!qp)
		return 1;
	/* A receive QP of C's domain, for B's "another domain" check. */
	struct ibv_qp_init_attr ia;
	memset(&ia, 0, sizeof(ia));
	ia.xrc_domain = dom;
	uint32_t other_qpn = 0;
	xrc_expect_ret(ibv_create_xrc_rcv_qp(&ia, &other_qpn), 0,
		       "ibv_create_xrc_rcv_qp in C's domain");
	xrc_send(s, M_C_READY, qp->qp_num, lid, other_qpn, 0);

	if (xrc_expect(s, M_C_SEND, &m))
		return 1;
	uint32_t qpn = m.v[0], srq_num = m.v[1];
	uint16_t dlid = (uint16_t)m.v[2];
	uint32_t count = m.v[3];
	if (!ofed_qp_to_init(ofed_modify_qp_cb, qp, "ibv_modify_qp(IBV_QPT_XRC)") ||
	    !ofed_qp_to_rtr(ofed_modify_qp_cb, qp, "ibv_modify_qp(IBV_QPT_XRC)", qpn, dlid) ||
	    !ofed_qp_to_rts(qp, "ibv_modify_qp(IBV_QPT_XRC)", 14))
		return 1;
	struct ofed_qp_attr_guarded q;
	struct ofed_init_attr_guarded qi;
	memset(&q, OFED_GUARD, sizeof(q));
	memset(&qi, OFED_GUARD, sizeof(qi));
	xrc_expect_ret(ibv_query_qp(qp, &q.attr, IBV_QP_STATE | IBV_QP_CAP, &qi.init), 0,
		       "ibv_query_qp(send QP)");
	xrc_check(q.attr.qp_state == IBV_QPS_RTS && qi.init.qp_type == IBV_QPT_XRC,
		  "send QP: state %s, init_attr.qp_type %d", ofed_state_name(q.attr.qp_state),
		  (int)qi.init.qp_type);
	xrc_check(ofed_guard_intact(q.guard, sizeof(q.guard)) &&
		      ofed_guard_intact(qi.guard, sizeof(qi.guard)),
		  "ibv_query_qp wrote nothing past OFED's ibv_qp_attr (%zu bytes) and "
		  "ibv_qp_init_attr (%zu)",
		  sizeof(q.attr), sizeof(qi.init));

	/* N sends posted back to back, as an eager MPI stream. */
	size_t len = (size_t)n_msgs * XRC_SLOT;
	unsigned char *buf = malloc(len);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!xrc_check(mr != NULL, "ibv_reg_mr"))
		return 1;
	/* In the parts the parent asks for (M_C_SEND's v3 messages each). */
	struct ibv_wc *wc = calloc(n_msgs, sizeof(*wc));
	for (uint32_t first = 0; first < n_msgs; first += count) {
		if (first && xrc_expect(s, M_C_SEND, &m))
			return 1;
		count = m.v[3] && m.v[3] <= n_msgs - first ? m.v[3] : n_msgs - first;
		int posted = 0, post_err = 0;
		for (uint32_t i = first; i < first + count; i++) {
			unsigned char *p = buf + (size_t)i * XRC_SLOT;
			int r = ofed_post_xrc_send(qp, mr, p, i, xrc_size_of(i), srq_num);
			if (r && !post_err)
				post_err = r;
			posted += r == 0;
		}
		xrc_check(posted == (int)count, "ibv_post_send: %d of messages %u..%u posted%s%s", posted,
			  first, first + count - 1, post_err ? ": " : "",
			  post_err ? xrc_errname(post_err) : "");
		int got = ofed_poll_n(cq, wc, posted);
		int ok = 0;
		for (int k = 0; k < got; k++)
			ok += wc[k].status == IBV_WC_SUCCESS && wc[k].opcode == IBV_WC_SEND;
		xrc_check(got == posted && ok == got, "%d of %d send completions, %d IBV_WC_SUCCESS%s%s",
			  got, posted, ok, ok < got ? ", first bad: " : "",
			  ok < got ? ibv_wc_status_str(wc[ok].status) : "");
		xrc_send(s, M_DONE, 0, 0, 0, 0);
	}

	/* An RDMA WRITE through XRC with a key that allows no remote write. */
	if (xrc_expect(s, M_C_BAD_WRITE, &m))
		return 1;
	struct ibv_sge sge = {(uintptr_t)buf, 64, mr->lkey};
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xbad;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.rkey = m.v[0];
	wr.wr.rdma.remote_addr = ((uint64_t)m.v[1] << 32) | m.v[2];
	wr.xrc_remote_srq_num = srq_num;
	if (xrc_expect_ret(ibv_post_send(qp, &wr, &bad), 0,
			   "ibv_post_send(RDMA WRITE, bad rkey)")) {
		int n = ofed_poll_n(cq, wc, 1);
		xrc_check(n == 1 && wc[0].status == IBV_WC_REM_ACCESS_ERR,
			  "bad-rkey RDMA WRITE completes IBV_WC_REM_ACCESS_ERR (got %s)",
			  n == 1 ? ibv_wc_status_str(wc[0].status) : "nothing");
	}
	xrc_send(s, M_DONE, 0, 0, 0, 0);

	if (xrc_expect(s, M_C_FINISH, NULL))
		return 1;
	xrc_expect_ret(ibv_close_xrc_domain(dom), EBUSY,
		       "ibv_close_xrc_domain with a registration in it");
	xrc_expect_ret(ibv_unreg_xrc_rcv_qp(dom, other_qpn), 0,
		       "ibv_unreg_xrc_rcv_qp of C's own receive QP");
	xrc_expect_ret(ibv_destroy_qp(qp), 0, "ibv_destroy_qp(send QP)");
	xrc_expect_ret(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
	xrc_expect_ret(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
	xrc_expect_ret(ibv_dealloc_pd(pd), 0, "ibv_dealloc_pd");
	xrc_expect_ret(ibv_close_xrc_domain(dom), 0, "ibv_close_xrc_domain");
	xrc_expect_ret(ibv_close_device(ctx), 0, "ibv_close_device");
	free(wc);
	free(buf);
	xrc_send(s, M_DONE, 0, 0, 0, 0);
	return xrc_failed ? 1 : 0;
}

/* ------------------------------------------------------------- parent */

/* ------------------------------------------------------------------ D */

/* Another process of the node that registers on the receive QP twice (one
 * more holder each time, as OFED counted them) and exits without
 * unregistering, before any message: the QP and whoever serves it (A, on
 * a RoCE device) carry on. */
static int role_d(int s)
{
	struct xrc_msg m;

	if (xrc_expect(s, M_D_SETUP, &m))
		return 1;
	struct ibv_context *ctx = ofed_open_device();
	if (!ctx)
		return 1;
	int fd = open(dom_file, O_RDONLY);
	struct ibv_xrc_domain *dom = ibv_open_xrc_domain(ctx, fd, 0);
	close(fd);
	if (!xrc_check(dom != NULL, "D: ibv_open_xrc_domain(the node's file, 0)"))
		return 1;
	if (!xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, m.v[0]), 0, "D: ibv_reg_xrc_rcv_qp(qpn %#x)", m.v[0]) ||
	    !xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, m.v[0]), 0, "D: ibv_reg_xrc_rcv_qp(qpn %#x) again", m.v[0]))
		return 1;
	xrc_send(s, M_DONE, 0, 0, 0, 0);
	if (xrc_expect(s, M_D_EXIT, NULL))
		return 1;
	/* Gone holding the registrations and all it opened, as a process
	 * that ends without cleaning up: not a leak for the sanitizer. */
	fflush(stdout);
	_exit(xrc_failed ? 1 : 0);
}

static pid_t spawn(const char *role, int (*fn)(int), int *sock)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		exit(2);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		close(sv[0]);
		xrc_child_setup(role);
		int rc = fn(sv[1]);
		/* A failed role stopped where it was, holding what it had
		 * made: not a leak worth a sanitizer report. */
		if (rc || xrc_failed)
			_exit(1);
		exit(0);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n_msgs = (uint32_t)strtoul(argv[1], NULL, 0);
	if (n_msgs < 1 || n_msgs > 1000) {
		fprintf(stderr, "usage: %s [N (1..1000)]\n", argv[0]);
		return 2;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[200];
	snprintf(dir, sizeof(dir), "%s/uabi-xrc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(dom_file, sizeof(dom_file), "%s/node0.xrc", dir);
	snprintf(other_dom_file, sizeof(other_dom_file), "%s/node1.xrc", dir);
	xrc_role = "P";
	printf("ofed_xrc_mpi: %u messages, UABI_BACKEND=%s, UABI_VERBS_PATH=%s\n", n_msgs,
	       getenv("UABI_BACKEND") ? getenv("UABI_BACKEND") : "(default)",
	       getenv("UABI_VERBS_PATH") ? getenv("UABI_VERBS_PATH") : "(default)");

	int sa, sb, sc, sd;
	pid_t pa = spawn("A", role_a, &sa);
	pid_t pb = spawn("B", role_b, &sb);
	pid_t pc = spawn("C", role_c, &sc);
	pid_t pd = spawn("D", role_d, &sd);
	struct xrc_msg m;
	int st, ok = 0;

	do {
		if (xrc_expect(sc, M_C_READY, &m))
			break;
		uint32_t c_qpn = m.v[0], c_lid = m.v[1], other_qpn = m.v[2];
		xrc_send(sa, M_A_SETUP, c_qpn, c_lid, 0, 0);
		if (xrc_expect(sa, M_A_READY, &m))
			break;
		uint32_t qpn = m.v[0], rcv_lid = m.v[2];
		xrc_send(sb, M_B_SETUP, qpn, c_qpn, other_qpn, 0);
		if (xrc_expect(sb, M_B_READY, &m))
			break;
		uint32_t srq_num = m.v[0];

		/* D registers after B and exits still registered. */
		xrc_send(sd, M_D_SETUP, qpn, 0, 0, 0);
		if (xrc_expect(sd, M_DONE, NULL))
			break;
		xrc_send(sd, M_D_EXIT, 0, 0, 0, 0);
		int wd = xrc_wait_pid(pd, XRC_WAIT_MS, &st);
		xrc_check_exit("D", wd, st);
		pd = 0;

		/* The first half while A, the creator, still holds the QP (on
		 * a RoCE device A serves it and fills B's SRQ), the rest once
		 * only B does (B takes over where A left off). */
		const uint32_t half = n_msgs / 2;
		if (half) {
			xrc_send(sc, M_C_SEND, qpn, srq_num, rcv_lid, half);
			if (xrc_expect(sc, M_DONE, NULL))
				break;
		}
		kill(pa, SIGKILL);
		int w = xrc_wait_pid(pa, XRC_WAIT_MS, &st);
		xrc_check(w == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
			  "A (creator of the receive QP) killed with SIGKILL and reaped");
		pa = 0;
		xrc_send(sb, M_B_AFTER_KILL, 0, 0, 0, 0);
		if (xrc_expect(sb, M_DONE, NULL))
			break;

		xrc_send(sb, M_B_RECV, 0, 0, 0, 0);
		xrc_send(sc, M_C_SEND, qpn, srq_num, rcv_lid, n_msgs - half);
		if (xrc_expect(sc, M_DONE, NULL) || xrc_expect(sb, M_DONE, NULL))
			break;

		xrc_send(sb, M_B_EVENT, 0, 0, 0, 0);
		if (xrc_expect(sb, M_DONE, &m))
			break;
		xrc_send(sc, M_C_BAD_WRITE, m.v[0], m.v[1], m.v[2], 0);
		if (xrc_expect(sc, M_DONE, NULL))
			break;
		xrc_send(sb, M_DONE, 0, 0, 0, 0);
		if (xrc_expect(sb, M_DONE, NULL))
			break;

		xrc_send(sb, M_B_UNREG, 0, 0, 0, 0);
		if (xrc_expect(sb, M_DONE, NULL))
			break;
		xrc_send(sc, M_C_FINISH, 0, 0, 0, 0);
		if (xrc_expect(sc, M_DONE, NULL))
			break;
		ok = 1;
	} while (0);

	if (pa)
		kill(pa, SIGKILL), xrc_wait_pid(pa, 1000, &st);
	if (pd)
		kill(pd, SIGKILL), xrc_wait_pid(pd, 1000, &st);
	/* After a failure, the others are stopped where they wait. */
	int w = xrc_wait_pid(pb, ok ? XRC_WAIT_MS : 1000, &st);
	xrc_check_exit("B", w, st);
	w = xrc_wait_pid(pc, ok ? XRC_WAIT_MS : 1000, &st);
	xrc_check_exit("C", w, st);
	unlink(dom_file);
	unlink(other_dom_file);
	rmdir(dir);
	printf("ofed_xrc_mpi: %s\n", ok && !xrc_failed ? "PASS" : "FAIL");
	return ok && !xrc_failed ? 0 : 1;
}
