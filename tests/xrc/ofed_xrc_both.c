/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * OFED 1.5's IBV_QPT_XRC QP as both ends of XRC (docs/xrc.md), as OFED-era
 * benchmarks used it on mlx4: two processes, each with
 *
 *   - an XRC domain of its own (a file of its own) and an XRC SRQ in it,
 *   - one IBV_QPT_XRC QP created with that domain, and no receive QP,
 *
 * connect their two XRC QPs to each other and both send N messages at once
 * to the other's SRQ (xrc_remote_srq_num): each message lands in the SRQ
 * its sender named, in the receiving QP's domain.  Then a send naming an
 * SRQ of another domain is refused (IBV_WC_REM_INV_REQ_ERR), and the
 * domain cannot be closed while its XRC QP exists.
 *
 * The two roles are forked before any verbs call and talk over socketpairs.
 * One line per checked point, then "ofed_xrc_both: PASS" or "FAIL".
 *
 * Usage: ofed_xrc_both [N]
 */
#define _GNU_SOURCE
#include "ofed_common.h"

static uint32_t n_msgs = 50;
static char dir[200];

enum {
	M_HELLO = 1, /* v0 qpn, v1 srq num, v2 lid, v3 srq num of a third domain */
	M_GO,	     /* both connected: send */
	M_DONE,	     /* sent and received */
	M_BAD,	     /* v0: the SRQ of another domain to name */
	M_FINISH,
};

static int poll_kind(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	return ofed_poll_n(cq, wc, n);
}

static int role(int s, const char *name)
{
	struct ibv_context *ctx = ofed_open_device();
	if (!ctx)
		return 1;
	char file[260];
	snprintf(file, sizeof(file), "%s/%s.xrc", dir, name);
	int fd = open(file, O_RDONLY | O_CREAT, 0600);
	struct ibv_xrc_domain *dom = ibv_open_xrc_domain(ctx, fd, O_CREAT);
	if (!xrc_check(dom != NULL, "%s: ibv_open_xrc_domain(its own file)", name))
		return 1;
	close(fd);
	/* A third domain, whose SRQ the peer must not reach through us. */
	struct ibv_xrc_domain *other = ibv_open_xrc_domain(ctx, -1, O_CREAT);
	if (!xrc_check(other != NULL, "%s: a private domain", name))
		return 1;

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *scq = ibv_create_cq(ctx, (int)n_msgs + 16, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, (int)n_msgs + 16, NULL, NULL, 0);
	if (!xrc_check(pd && scq && rcq, "ibv_alloc_pd, two CQs"))
		return 1;
	struct ibv_srq_init_attr sa;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = n_msgs + 16;
	sa.attr.max_sge = 1;
	struct ibv_srq *srq = ibv_create_xrc_srq(pd, dom, rcq, &sa);
	struct ibv_srq *osrq = ibv_create_xrc_srq(pd, other, rcq, &sa);
	if (!xrc_check(srq && osrq, "%s: ibv_create_xrc_srq in each domain", name))
		return 1;

	size_t len = (size_t)(n_msgs + 1) * XRC_SLOT;
	unsigned char *rbuf = calloc(1, len), *sbuf = calloc(1, len);
	struct ibv_mr *rmr = ibv_reg_mr(pd, rbuf, len, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, len, 0);
	if (!xrc_check(rbuf && sbuf && rmr && smr, "ibv_reg_mr"))
		return 1;
	int posted = 0;
	for (uint32_t i = 0; i < n_msgs; i++) {
		struct ibv_sge sge = {(uintptr_t)(rbuf + (size_t)i * XRC_SLOT), XRC_SLOT, rmr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
		posted += ibv_post_srq_recv(srq, &wr, &bad) == 0;
	}
	xrc_check(posted == (int)n_msgs, "%s: %d receives posted on the XRC SRQ", name, posted);

	struct ibv_qp *qp = ofed_create_send_qp(pd, scq, dom, n_msgs + 4);
	if (!qp)
		return 1;
	xrc_expect_ret(ibv_close_xrc_domain(dom), EBUSY,
		       "%s: ibv_close_xrc_domain while its XRC QP exists", name);

	uint16_t lid = ofed_port_lid(ctx);
	struct xrc_msg m;
	if (xrc_send(s, M_HELLO, qp->qp_num, srq->xrc_srq_num, lid, osrq->xrc_srq_num) ||
	    xrc_expect(s, M_HELLO, &m))
		return 1;
	uint32_t peer_qpn = m.v[0], peer_srq = m.v[1], peer_other = m.v[3];
	if (!ofed_qp_to_init(ofed_modify_qp_cb, qp, "ibv_modify_qp(IBV_QPT_XRC)") ||
	    !ofed_qp_to_rtr(ofed_modify_qp_cb, qp, "ibv_modify_qp(IBV_QPT_XRC)", peer_qpn,
			    (uint16_t)m.v[2]) ||
	    !ofed_qp_to_rts(qp, "ibv_modify_qp(IBV_QPT_XRC)", 14))
		return 1;
	/* Both sides in RTS before either sends. */
	if (xrc_send(s, M_GO, 0, 0, 0, 0) || xrc_expect(s, M_GO, NULL))
		return 1;

	int sent = 0;
	for (uint32_t i = 0; i < n_msgs; i++)
		sent += ofed_post_xrc_send(qp, smr, sbuf + (size_t)i * XRC_SLOT, i, xrc_size_of(i),
					   peer_srq) == 0;
	xrc_check(sent == (int)n_msgs, "%s: %d sends posted to the peer's SRQ %u", name, sent,
		  peer_srq);
	struct ibv_wc wc[64];
	int sok = 0, got = 0;
	while (got < sent) {
		int n = poll_kind(scq, wc, sent - got > 64 ? 64 : sent - got);
		if (!n)
			break;
		for (int k = 0; k < n; k++)
			sok += wc[k].status == IBV_WC_SUCCESS && wc[k].opcode == IBV_WC_SEND;
		got += n;
	}
	xrc_check(sok == sent, "%s: %d of %d sends completed successfully", name, sok, sent);
	int rok = 0, bad_payload = 0;
	got = 0;
	while (got < (int)n_msgs) {
		int n = poll_kind(rcq, wc, (int)n_msgs - got > 64 ? 64 : (int)n_msgs - got);
		if (!n)
			break;
		for (int k = 0; k < n; k++) {
			uint32_t i = (uint32_t)wc[k].wr_id;
			if (wc[k].status != IBV_WC_SUCCESS || wc[k].opcode != IBV_WC_RECV ||
			    i >= n_msgs || wc[k].byte_len != xrc_size_of(i) ||
			    xrc_verify(rbuf + (size_t)i * XRC_SLOT, i, xrc_size_of(i)) >= 0)
				bad_payload++;
			else
				rok++;
		}
		got += n;
	}
	xrc_check(rok == (int)n_msgs && !bad_payload,
		  "%s: %d of %u messages arrived on its SRQ through its IBV_QPT_XRC QP, intact "
		  "(%d wrong)",
		  name, rok, n_msgs, bad_payload);
	if (xrc_send(s, M_DONE, 0, 0, 0, 0) || xrc_expect(s, M_DONE, NULL))
		return 1;

	/* The peer's QP serves only its own domain's SRQs. */
	if (name[0] == 'A') {
		struct ibv_wc w;
		int r = ofed_send_one(qp, scq, smr, sbuf, 0, 16, peer_other, &w);
		xrc_check(r == 0 && w.status == IBV_WC_REM_INV_REQ_ERR,
			  "A: a send naming an SRQ of another domain (%u): %s (want remote "
			  "invalid request)",
			  peer_other, r ? strerror(r) : ibv_wc_status_str(w.status));
	}
	if (xrc_send(s, M_FINISH, 0, 0, 0, 0) || xrc_expect(s, M_FINISH, NULL))
		return 1;
	xrc_expect_ret(ibv_destroy_qp(qp), 0, "%s: ibv_destroy_qp", name);
	xrc_expect_ret(ibv_destroy_srq(srq), 0, "%s: ibv_destroy_srq", name);
	xrc_expect_ret(ibv_destroy_srq(osrq), 0, "%s: ibv_destroy_srq (other)", name);
	xrc_expect_ret(ibv_close_xrc_domain(dom), 0, "%s: ibv_close_xrc_domain once the QP is gone",
		       name);
	xrc_expect_ret(ibv_close_xrc_domain(other), 0, "%s: ibv_close_xrc_domain (other)", name);
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(smr);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(rbuf);
	free(sbuf);
	return 0;
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
	snprintf(dir, sizeof(dir), "%s/uabi-xrc-both.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	printf("ofed_xrc_both: %u messages each way, UABI_BACKEND=%s, UABI_VERBS_PATH=%s\n", n_msgs,
	       getenv("UABI_BACKEND") ? getenv("UABI_BACKEND") : "(default)",
	       getenv("UABI_VERBS_PATH") ? getenv("UABI_VERBS_PATH") : "(default)");
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		return 2;
	}
	fflush(stdout);
	pid_t pa = fork();
	if (pa == 0) {
		close(sv[0]);
		xrc_child_setup("A");
		_exit(role(sv[1], "A") || xrc_failed ? 1 : 0);
	}
	pid_t pb = fork();
	if (pb == 0) {
		close(sv[1]);
		xrc_child_setup("B");
		_exit(role(sv[0], "B") || xrc_failed ? 1 : 0);
	}
	close(sv[0]);
	close(sv[1]);
	int st, w;
	w = xrc_wait_pid(pa, 4 * XRC_WAIT_MS, &st);
	xrc_check_exit("A", w, st);
	w = xrc_wait_pid(pb, XRC_WAIT_MS, &st);
	xrc_check_exit("B", w, st);
	char path[260];
	snprintf(path, sizeof(path), "%s/A.xrc", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/B.xrc", dir);
	unlink(path);
	rmdir(dir);
	printf("ofed_xrc_both: %s\n", xrc_failed ? "FAIL" : "PASS");
	return xrc_failed ? 1 : 0;
}
