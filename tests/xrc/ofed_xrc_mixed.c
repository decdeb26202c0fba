/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * One receive QP held by an OFED-API process (this program, compiled
 * against compat/include/ofed) and an upstream-API process
 * (upstream_xrc_peer, compiled against rdma-core's header), both on
 * rdma-uabi's libibverbs.so.1 (docs/xrc.md, issue 7):
 *
 *  1. OFED creates (ibv_create_xrc_rcv_qp), upstream opens (ibv_open_qp),
 *     OFED unregisters: the QP still works for upstream, which moves it to
 *     RTR and receives N messages from OFED's IBV_QPT_XRC send QP on its
 *     IBV_SRQT_XRC SRQ; upstream's ibv_destroy_qp drops the last
 *     registration: the QP is gone for both APIs (ibv_open_qp, reg: EINVAL)
 *     and a send to it fails with IBV_WC_RETRY_EXC_ERR.
 *  2. Upstream creates (ibv_create_qp_ex(XRC_RECV)), OFED registers,
 *     upstream destroys its QP: the QP lives on (OFED queries and modifies
 *     it, upstream can still ibv_open_qp it), N messages more arrive; OFED
 *     unregisters: gone (query EINVAL, ibv_open_qp EINVAL).
 *
 * The peer is forked (before any verbs call here) and exec'd; they talk
 * over a socketpair.  One line per checked point, then
 * "ofed_xrc_mixed: PASS" or "FAIL"; exit status 0 only if both passed.
 *
 * Usage: ofed_xrc_mixed PEER [N]   (PEER: path of upstream_xrc_peer)
 */
#define _GNU_SOURCE
#include "ofed_common.h"

static int peer_sock;
static uint32_t n_msgs = 20;

/* Sends a request to the peer and waits for its XM_OK. */
static int ask(uint32_t op, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t *r0)
{
	struct xrc_msg m;

	if (xrc_send(peer_sock, op, v0, v1, v2, 0) || xrc_expect(peer_sock, XM_OK, &m))
		return -1;
	if (r0)
		*r0 = m.v[0];
	return 0;
}

static int send_burst(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr, unsigned char *buf,
		      uint32_t first, uint32_t srq_num)
{
	int posted = 0;

	for (uint32_t i = first; i < first + n_msgs; i++) {
		unsigned char *p = buf + (size_t)(i - first) * XRC_SLOT;
		posted += ofed_post_xrc_send(qp, mr, p, i, xrc_size_of(i), srq_num) == 0;
	}
	struct ibv_wc wc[64];
	int got = 0, ok = 0;
	while (got < posted) {
		int n = ofed_poll_n(cq, wc, posted - got > 64 ? 64 : posted - got);
		if (!n)
			break;
		for (int k = 0; k < n; k++)
			ok += wc[k].status == IBV_WC_SUCCESS;
		got += n;
	}
	return xrc_check(posted == (int)n_msgs && ok == posted,
			 "messages %u..%u sent through the IBV_QPT_XRC QP: %d posted, %d "
			 "completed IBV_WC_SUCCESS",
			 first, first + n_msgs - 1, posted, ok);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PEER [N]\n", argv[0]);
		return 2;
	}
	if (argc > 2)
		n_msgs = (uint32_t)strtoul(argv[2], NULL, 0);
	if (n_msgs < 1 || n_msgs > 200) {
		fprintf(stderr, "N: 1..200\n");
		return 2;
	}
	xrc_role = "O";
	const char *tmp = getenv("TMPDIR");
	char dir[200], file[256], sfd[16], sn[16];
	snprintf(dir, sizeof(dir), "%s/uabi-xrc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(file, sizeof(file), "%s/node.xrc", dir);
	int fd = open(file, O_RDONLY | O_CREAT, 0600);
	printf("ofed_xrc_mixed: %u messages each way, UABI_BACKEND=%s, UABI_VERBS_PATH=%s\n",
	       n_msgs, getenv("UABI_BACKEND") ? getenv("UABI_BACKEND") : "(default)",
	       getenv("UABI_VERBS_PATH") ? getenv("UABI_VERBS_PATH") : "(default)");

	/* The peer, before any verbs call here. */
	int sv[2];
	if (fd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		perror("setup");
		return 2;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(sv[0]);
		close(fd);
		snprintf(sfd, sizeof(sfd), "%d", sv[1]);
		snprintf(sn, sizeof(sn), "%u", n_msgs);
		execl(argv[1], argv[1], sfd, file, sn, (char *)NULL);
		perror("exec peer");
		_exit(127);
	}
	close(sv[1]);
	peer_sock = sv[0];

	int ok = 0;
	do {
		struct ibv_context *ctx = ofed_open_device();
		if (!ctx)
			break;
		uint16_t lid = ofed_port_lid(ctx);
		struct ibv_xrc_domain *dom = ibv_open_xrc_domain(ctx, fd, O_CREAT);
		if (!xrc_check(dom != NULL, "ibv_open_xrc_domain(fd, O_CREAT)"))
			break;
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		struct ibv_cq *cq = ibv_create_cq(ctx, (int)n_msgs + 16, NULL, NULL, 0);
		size_t len = (size_t)n_msgs * XRC_SLOT;
		unsigned char *buf = malloc(len);
		struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!xrc_check(pd && cq && mr, "ibv_alloc_pd, ibv_create_cq, ibv_reg_mr"))
			break;

		/* 1. OFED creates, upstream opens, OFED unregisters. */
		struct ibv_qp *sqp = ofed_create_send_qp(pd, cq, dom, n_msgs + 16);
		struct ibv_qp_init_attr ia;
		memset(&ia, 0, sizeof(ia));
		ia.xrc_domain = dom;
		uint32_t qpn1 = 0, srq_num = 0;
		if (!sqp ||
		    !xrc_expect_ret(ibv_create_xrc_rcv_qp(&ia, &qpn1), 0, "ibv_create_xrc_rcv_qp"))
			break;
		if (ask(XM_OPEN, qpn1, 0, 0, &srq_num))
			break;
		xrc_expect_ret(ibv_unreg_xrc_rcv_qp(dom, qpn1), 0,
			       "ibv_unreg_xrc_rcv_qp(%#x): the upstream process still holds it",
			       qpn1);
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;
		xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn1, &qa, IBV_QP_STATE, &qi), EINVAL,
			       "ibv_query_xrc_rcv_qp after our unreg (not registered)");
		if (ask(XM_CONNECT, sqp->qp_num, lid, 0, NULL))
			break;
		if (!ofed_qp_to_init(ofed_modify_qp_cb, sqp, "ibv_modify_qp(IBV_QPT_XRC)") ||
		    !ofed_qp_to_rtr(ofed_modify_qp_cb, sqp, "ibv_modify_qp(IBV_QPT_XRC)", qpn1,
				    lid) ||
		    !ofed_qp_to_rts(sqp, "ibv_modify_qp(IBV_QPT_XRC)", 14))
			break;
		send_burst(sqp, cq, mr, buf, 0, srq_num);
		if (ask(XM_RECV, 0, n_msgs, qpn1, NULL) || ask(XM_DESTROY1, 0, 0, 0, NULL))
			break;
		xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, qpn1), EINVAL,
			       "ibv_reg_xrc_rcv_qp(%#x) after upstream's ibv_destroy_qp (gone)",
			       qpn1);
		struct ibv_wc wc;
		memset(&wc, 0, sizeof(wc));
		int r = ofed_send_one(sqp, cq, mr, buf, 0, 64, srq_num, &wc);
		xrc_check(r == 0 && wc.status == IBV_WC_RETRY_EXC_ERR,
			  "a send to the destroyed receive QP completes IBV_WC_RETRY_EXC_ERR (%s)",
			  r ? xrc_errname(r) : ibv_wc_status_str(wc.status));
		xrc_expect_ret(ibv_destroy_qp(sqp), 0, "ibv_destroy_qp(send QP)");

		/* 2. Upstream creates, OFED registers, upstream destroys. */
		uint32_t qpn2 = 0;
		if (ask(XM_CREATE2, 0, 0, 0, &qpn2) || !qpn2)
			break;
		xrc_expect_ret(ibv_reg_xrc_rcv_qp(dom, qpn2), 0,
			       "ibv_reg_xrc_rcv_qp(%#x created by ibv_create_qp_ex)", qpn2);
		if (ask(XM_DESTROY2, 0, 0, 0, NULL))
			break;
		memset(&qa, 0, sizeof(qa));
		xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn2, &qa, IBV_QP_STATE, &qi), 0,
			       "ibv_query_xrc_rcv_qp after upstream's ibv_destroy_qp");
		xrc_check(qa.qp_state == IBV_QPS_RESET, "state %s", ofed_state_name(qa.qp_state));
		sqp = ofed_create_send_qp(pd, cq, dom, n_msgs + 16);
		struct ofed_rcv_ref ref = {dom, qpn2};
		if (!sqp || !ofed_qp_to_init(ofed_modify_rcv_cb, &ref, "ibv_modify_xrc_rcv_qp") ||
		    !ofed_qp_to_rtr(ofed_modify_rcv_cb, &ref, "ibv_modify_xrc_rcv_qp", sqp->qp_num,
				    lid) ||
		    !ofed_qp_to_init(ofed_modify_qp_cb, sqp, "ibv_modify_qp(IBV_QPT_XRC)") ||
		    !ofed_qp_to_rtr(ofed_modify_qp_cb, sqp, "ibv_modify_qp(IBV_QPT_XRC)", qpn2,
				    lid) ||
		    !ofed_qp_to_rts(sqp, "ibv_modify_qp(IBV_QPT_XRC)", 14))
			break;
		send_burst(sqp, cq, mr, buf, n_msgs, srq_num);
		if (ask(XM_RECV, n_msgs, n_msgs, qpn2, NULL))
			break;
		/* The target SRQ must be one of the receive QP's domain. */
		int r2 = ofed_send_one(sqp, cq, mr, buf, 0, 64, srq_num + 1000, &wc);
		xrc_check(r2 == 0 && wc.status == IBV_WC_REM_INV_REQ_ERR,
			  "a send to an SRQ number that is no XRC SRQ of the domain completes "
			  "IBV_WC_REM_INV_REQ_ERR (%s)",
			  r2 ? xrc_errname(r2) : ibv_wc_status_str(wc.status));
		xrc_expect_ret(ibv_unreg_xrc_rcv_qp(dom, qpn2), 0,
			       "ibv_unreg_xrc_rcv_qp(%#x): the last registration", qpn2);
		xrc_expect_ret(ibv_query_xrc_rcv_qp(dom, qpn2, &qa, IBV_QP_STATE, &qi), EINVAL,
			       "ibv_query_xrc_rcv_qp after it (gone)");
		if (ask(XM_GONE2, 0, 0, 0, NULL) || ask(XM_FINISH, 0, 0, 0, NULL))
			break;

		xrc_expect_ret(ibv_destroy_qp(sqp), 0, "ibv_destroy_qp(send QP)");
		xrc_expect_ret(ibv_dereg_mr(mr), 0, "ibv_dereg_mr");
		xrc_expect_ret(ibv_destroy_cq(cq), 0, "ibv_destroy_cq");
		xrc_expect_ret(ibv_dealloc_pd(pd), 0, "ibv_dealloc_pd");
		xrc_expect_ret(ibv_close_xrc_domain(dom), 0, "ibv_close_xrc_domain");
		xrc_expect_ret(ibv_close_device(ctx), 0, "ibv_close_device");
		free(buf);
		ok = 1;
	} while (0);

	close(peer_sock);
	int st = 0;
	int w = xrc_wait_pid(pid, ok ? XRC_WAIT_MS : 2000, &st);
	xrc_check_exit("the upstream peer", w, st);
	close(fd);
	unlink(file);
	rmdir(dir);
	printf("ofed_xrc_mixed: %s\n", ok && !xrc_failed ? "PASS" : "FAIL");
	fflush(stdout);
	/* After a failure the objects made so far are left as they are: not
	 * a leak worth a sanitizer report. */
	if (!ok || xrc_failed)
		_exit(1);
	return 0;
}
