/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The upstream half of the mixed XRC test (tests/xrc/ofed_xrc_mixed.c):
 * compiled against rdma-core's <infiniband/verbs.h>, it holds the same
 * receive QP as an OFED-API process through upstream XRC: ibv_open_xrcd on
 * the same file, ibv_open_qp of the OFED process's receive QP,
 * ibv_create_srq_ex(IBV_SRQT_XRC), ibv_create_qp_ex(IBV_QPT_XRC_RECV), and
 * ibv_destroy_qp of a receive QP as the unregister.  It does what the OFED
 * process asks over the socket (XM_* in xrc_harness.h).
 *
 * Usage: upstream_xrc_peer SOCKET_FD DOMAIN_FILE N
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>

#include <fcntl.h>

#include "xrc_harness.h"
#include "xrc_roce.h"

#ifdef UABI_OFED_VERBS_API
#error "the upstream peer must see rdma-core's verbs.h, not the OFED one"
#endif

static struct ibv_context *ctx;
static struct ibv_xrcd *xrcd;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_srq *srq;
static struct ibv_mr *mr;
static unsigned char *buf;
static uint32_t n_msgs;

static struct ibv_qp *open_qp(uint32_t qpn)
{
	struct ibv_qp_open_attr oa;

	memset(&oa, 0, sizeof(oa));
	oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
	oa.qp_num = qpn;
	oa.xrcd = xrcd;
	oa.qp_type = IBV_QPT_XRC_RECV;
	return ibv_open_qp(ctx, &oa);
}

static int setup(const char *file)
{
	ctx = xrc_open_device();
	if (!ctx)
		return -1;
	int fd = open(file, O_RDONLY);
	struct ibv_xrcd_init_attr xa;
	memset(&xa, 0, sizeof(xa));
	xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	xa.fd = fd;
	xa.oflags = 0;
	xrcd = ibv_open_xrcd(ctx, &xa);
	close(fd);
	if (!xrc_check(xrcd != NULL, "ibv_open_xrcd(fd of the OFED process's domain file, 0)%s%s",
		       xrcd ? "" : ": ", xrcd ? "" : strerror(errno)))
		return -1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, (int)(2 * n_msgs + 16), NULL, NULL, 0);
	if (!xrc_check(pd && cq, "ibv_alloc_pd, ibv_create_cq"))
		return -1;
	struct ibv_srq_init_attr_ex sa;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = 2 * n_msgs + 16;
	sa.attr.max_sge = 1;
	sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
		       IBV_SRQ_INIT_ATTR_CQ;
	sa.srq_type = IBV_SRQT_XRC;
	sa.pd = pd;
	sa.xrcd = xrcd;
	sa.cq = cq;
	srq = ibv_create_srq_ex(ctx, &sa);
	if (!xrc_check(srq != NULL, "ibv_create_srq_ex(IBV_SRQT_XRC)%s%s", srq ? "" : ": ",
		       srq ? "" : strerror(errno)))
		return -1;
	/* Receives for both halves of the test, consumed in order. */
	size_t len = (size_t)2 * n_msgs * XRC_SLOT;
	buf = calloc(1, len);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!xrc_check(mr != NULL, "ibv_reg_mr"))
		return -1;
	int posted = 0;
	for (uint32_t i = 0; i < 2 * n_msgs; i++) {
		struct ibv_sge sge = {(uintptr_t)(buf + (size_t)i * XRC_SLOT), XRC_SLOT, mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
		posted += ibv_post_srq_recv(srq, &wr, &bad) == 0;
	}
	xrc_check(posted == (int)(2 * n_msgs), "ibv_post_srq_recv: %d receives posted", posted);
	return 0;
}

static void connect_rcv(struct ibv_qp *qp, uint32_t dest_qpn, uint16_t lid)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	xrc_expect_ret(
	    ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
	    0, "ibv_modify_qp(opened XRC_RECV QP, INIT)");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0x1234;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = lid;
	a.ah_attr.port_num = 1;
	if (!xrc_roce_av(&a.ah_attr))
		return;
	xrc_expect_ret(ibv_modify_qp(qp, &a,
				     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER),
		       0, "ibv_modify_qp(opened XRC_RECV QP, RTR, dest qpn %#x)", dest_qpn);
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;
	memset(&q, 0, sizeof(q));
	xrc_expect_ret(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi), 0,
		       "ibv_query_qp(opened QP)");
	xrc_check(q.qp_state == IBV_QPS_RTR && q.dest_qp_num == dest_qpn,
		  "opened QP: state %d (RTR = 2), dest qpn %#x", (int)q.qp_state, q.dest_qp_num);
}

static int recv_check(uint32_t first, uint32_t count, uint32_t qpn)
{
	struct ibv_wc *wc = calloc(count, sizeof(*wc));
	uint64_t end = xrc_now_ms() + XRC_WAIT_MS;
	int got = 0;

	while (got < (int)count && xrc_now_ms() < end) {
		int r = ibv_poll_cq(cq, (int)count - got, wc + got);
		if (r < 0)
			break;
		got += r;
		if (!r)
			usleep(50);
	}
	xrc_check(got == (int)count, "%d of %u completions on the upstream XRC SRQ", got, count);
	int bad = 0;
	for (int k = 0; k < got; k++) {
		uint32_t i = first + (uint32_t)k;
		long at = -1;
		if (wc[k].status == IBV_WC_SUCCESS && wc[k].wr_id == i)
			at = xrc_verify(buf + (size_t)i * XRC_SLOT, i, xrc_size_of(i));
		if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV ||
		    wc[k].wr_id != i || wc[k].byte_len != xrc_size_of(i) || wc[k].qp_num != qpn ||
		    at >= 0) {
			if (!bad++)
				xrc_note("message %u: status %s, wr_id %llu, %u bytes (sent %u), "
					 "qp_num %#x, first bad byte %ld",
					 i, ibv_wc_status_str(wc[k].status),
					 (unsigned long long)wc[k].wr_id, wc[k].byte_len,
					 xrc_size_of(i), wc[k].qp_num, at);
		}
	}
	xrc_check(got > 0 && !bad,
		  "messages %u..%u: in order, byte-exact, qp_num = the receive QP %#x", first,
		  first + count - 1, qpn);
	free(wc);
	return 0;
}

static int serve(int s, const char *file)
{

	struct ibv_qp *qp1 = NULL, *qp2 = NULL;
	uint32_t qpn1 = 0, qpn2 = 0;
	struct xrc_msg m;
	int done = 0;

	while (!done) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		int pr = poll(&p, 1, XRC_WAIT_MS);
		ssize_t n = pr == 1 ? recv(s, &m, sizeof(m), 0) : -1;
		if (n != (ssize_t)sizeof(m)) {
			/* EOF: the OFED process failed and said why. */
			if (pr != 1)
				xrc_check(0, "no request from the OFED process within %d ms",
					  XRC_WAIT_MS);
			return 1;
		}
		/* The domain exists once the OFED process asks something. */
		if (!ctx && setup(file))
			return 1;
		uint32_t r0 = 0;
		switch (m.op) {
		case XM_OPEN:
			qpn1 = m.v[0];
			qp1 = open_qp(qpn1);
			xrc_check(qp1 != NULL,
				  "ibv_open_qp(qpn %#x created by ibv_create_xrc_rcv_qp)%s%s", qpn1,
				  qp1 ? "" : ": ", qp1 ? "" : strerror(errno));
			if (qp1)
				xrc_check(qp1->qp_num == qpn1 && qp1->qp_type == IBV_QPT_XRC_RECV,
					  "opened QP: qp_num %#x, qp_type %d (IBV_QPT_XRC_RECV)",
					  qp1->qp_num, (int)qp1->qp_type);
			if (ibv_get_srq_num(srq, &r0))
				xrc_check(0, "ibv_get_srq_num");
			break;
		case XM_CONNECT:
			if (qp1)
				connect_rcv(qp1, m.v[0], (uint16_t)m.v[1]);
			break;
		case XM_RECV:
			recv_check(m.v[0], m.v[1], m.v[2]);
			break;
		case XM_DESTROY1:
			if (qp1)
				xrc_expect_ret(ibv_destroy_qp(qp1), 0,
					       "ibv_destroy_qp(opened QP): the last registration");
			qp1 = open_qp(qpn1);
			xrc_check(!qp1 && errno == EINVAL,
				  "ibv_open_qp(%#x) after that = %s (want EINVAL)", qpn1,
				  qp1 ? "a QP" : xrc_errname(errno));
			if (qp1)
				ibv_destroy_qp(qp1);
			qp1 = NULL;
			break;
		case XM_CREATE2: {
			struct ibv_qp_init_attr_ex ia;
			memset(&ia, 0, sizeof(ia));
			ia.qp_type = IBV_QPT_XRC_RECV;
			ia.comp_mask = IBV_QP_INIT_ATTR_XRCD;
			ia.xrcd = xrcd;
			qp2 = ibv_create_qp_ex(ctx, &ia);
			xrc_check(qp2 != NULL, "ibv_create_qp_ex(IBV_QPT_XRC_RECV)%s%s",
				  qp2 ? "" : ": ", qp2 ? "" : strerror(errno));
			qpn2 = r0 = qp2 ? qp2->qp_num : 0;
			break;
		}
		case XM_DESTROY2: {
			if (qp2)
				xrc_expect_ret(ibv_destroy_qp(qp2), 0,
					       "ibv_destroy_qp(the XRC_RECV QP it created)");
			/* The OFED process is still registered: the QP lives. */
			struct ibv_qp *again = open_qp(qpn2);
			xrc_check(again != NULL,
				  "ibv_open_qp(%#x) while the OFED process is registered%s%s", qpn2,
				  again ? "" : ": ", again ? "" : strerror(errno));
			if (again)
				xrc_expect_ret(ibv_destroy_qp(again), 0,
					       "ibv_destroy_qp(reopened)");
			qp2 = NULL;
			break;
		}
		case XM_GONE2: {
			struct ibv_qp *again = open_qp(qpn2);
			xrc_check(
			    !again && errno == EINVAL,
			    "ibv_open_qp(%#x) after the OFED process's unreg = %s (want EINVAL)",
			    qpn2, again ? "a QP" : xrc_errname(errno));
			if (again)
				ibv_destroy_qp(again);
			break;
		}
		case XM_FINISH:
			xrc_expect_ret(ibv_destroy_srq(srq), 0, "ibv_destroy_srq");
			xrc_expect_ret(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
			xrc_expect_ret(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
			xrc_expect_ret(ibv_close_xrcd(xrcd), 0, "ibv_close_xrcd");
			xrc_expect_ret(ibv_dealloc_pd(pd), 0, "ibv_dealloc_pd");
			xrc_expect_ret(ibv_close_device(ctx), 0, "ibv_close_device");
			free(buf);
			done = 1;
			break;
		default:
			xrc_check(0, "unknown request %u", m.op);
			return 1;
		}
		xrc_send(s, XM_OK, r0, (uint32_t)xrc_failed, 0, 0);
	}
	return xrc_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s SOCKET_FD DOMAIN_FILE N\n", argv[0]);
		return 2;
	}
	n_msgs = (uint32_t)strtoul(argv[3], NULL, 0);
	xrc_child_setup("U");
	/* After a failure the objects made so far are left as they are: not
	 * a leak worth a sanitizer report. */
	if (serve(atoi(argv[1]), argv[2]))
		_exit(1);
	return 0;
}
