/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A program that talks to /dev/infiniband/uverbs0 the way 2005-2015 code
 * with its own libibverbs did: raw write() of command structs, responses
 * read from the buffer each command points to.  No rdma-core library, only
 * the kernel's uapi header.  Run under libuabi_legacy_preload.so; the
 * dialect (UABI_LEGACY_DIALECT=ofed|upstream) decides which XRC commands
 * it speaks.  Prints "raw_legacy: N passed, 0 failed" and exits 0 when every
 * response checks out.
 */
#define _GNU_SOURCE
#include <rdma/ib_user_verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "%s:%d: check failed: %s (errno %d: %s)\n", __FILE__,      \
				__LINE__, #cond, errno, strerror(errno));                          \
		}                                                                                  \
	} while (0)

/* The OFED 1.3-1.5 XRC commands, as OFED's kern-abi.h laid them out. */
enum {
	OFED_CREATE_XRC_SRQ = 37,
	OFED_OPEN_XRC_DOMAIN,
	OFED_CLOSE_XRC_DOMAIN,
	OFED_CREATE_XRC_RCV_QP,
	OFED_MODIFY_XRC_RCV_QP,
	OFED_QUERY_XRC_RCV_QP,
	OFED_REG_XRC_RCV_QP,
	OFED_UNREG_XRC_RCV_QP,
};

struct ofed_create_xrc_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__u64 response, user_handle;
	__u32 pd_handle, max_wr, max_sge, srq_limit, xrcd_handle, xrc_cq;
};

struct ofed_open_xrc_domain {
	struct ib_uverbs_cmd_hdr hdr;
	__u64 response;
	__u32 fd, oflags;
};

struct ofed_close_xrc_domain {
	struct ib_uverbs_cmd_hdr hdr;
	__u64 response;
	__u32 xrcd_handle, reserved;
};

struct ofed_create_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__u64 response, user_handle;
	__u32 xrc_domain_handle, max_send_wr, max_recv_wr, max_send_sge, max_recv_sge,
	    max_inline_data;
	__u8 sq_sig_all, qp_type, reserved[6];
};

struct ofed_modify_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__u32 xrc_domain_handle, qp_num;
	struct ib_uverbs_qp_dest dest, alt_dest;
	__u32 attr_mask, qkey, rq_psn, sq_psn, dest_qp_num, qp_access_flags;
	__u16 pkey_index, alt_pkey_index;
	__u8 qp_state, cur_qp_state, path_mtu, path_mig_state, en_sqd_async_notify, max_rd_atomic,
	    max_dest_rd_atomic, min_rnr_timer, port_num, timeout, retry_cnt, rnr_retry,
	    alt_port_num, alt_timeout, reserved[6];
};

struct ofed_query_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__u64 response;
	__u32 xrc_domain_handle, qp_num, attr_mask, reserved;
};

struct ofed_reg_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__u32 xrc_domain_handle, qp_num;
};

_Static_assert(sizeof(struct ofed_create_xrc_rcv_qp) == 56, "ofed layout");
_Static_assert(sizeof(struct ofed_modify_xrc_rcv_qp) == 128, "ofed layout");

/* IB enums this program needs (values of the IB spec / ib_verbs.h). */
enum { QPT_RC = 2, QPT_XRC_OFED = 5, QPT_XRC_TGT = 10 };
enum { QPS_INIT = 1, QPS_RTR = 2, QPS_RTS = 3 };
enum {
	M_STATE = 1 << 0,
	M_ACCESS = 1 << 3,
	M_PKEY = 1 << 4,
	M_PORT = 1 << 5,
	M_AV = 1 << 7,
	M_MTU = 1 << 8,
	M_TIMEOUT = 1 << 9,
	M_RETRY = 1 << 10,
	M_RNR_RETRY = 1 << 11,
	M_RQ_PSN = 1 << 12,
	M_RD_ATOMIC = 1 << 13,
	M_MIN_RNR = 1 << 15,
	M_SQ_PSN = 1 << 16,
	M_DEST_RD_ATOMIC = 1 << 17,
	M_DEST_QPN = 1 << 20,
};

static int uverbs;

/* Fills the header the way IBV_INIT_CMD_RESP did and writes the command;
 * returns 0 or the errno. */
static int cmd(void *c, size_t len, __u32 command, size_t resp_words)
{
	struct ib_uverbs_cmd_hdr *h = c;

	h->command = command;
	h->in_words = (__u16)(len / 4);
	h->out_words = (__u16)resp_words;
	errno = 0;
	if (write(uverbs, c, len) != (ssize_t)len)
		return errno;
	return 0;
}

#define RESP(c, r) ((c).response = (uintptr_t) & (r))

static void destroy_qp(__u32 handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_qp c;
	} d = {0};
	struct ib_uverbs_destroy_qp_resp r = {77};

	d.c.qp_handle = handle;
	RESP(d.c, r);
	CHECK(cmd(&d, sizeof(d), IB_USER_VERBS_CMD_DESTROY_QP, sizeof(r) / 4) == 0);
	CHECK(r.events_reported == 0);
}

static void destroy_srq(__u32 handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_srq c;
	} d = {0};
	struct ib_uverbs_destroy_srq_resp r = {77};

	d.c.srq_handle = handle;
	RESP(d.c, r);
	CHECK(cmd(&d, sizeof(d), IB_USER_VERBS_CMD_DESTROY_SRQ, sizeof(r) / 4) == 0);
	CHECK(r.events_reported == 0);
}

/* RESET -> INIT -> RTR -> RTS of an RC QP connected to itself. */
static void connect_rc(__u32 qp, __u32 qpn)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_modify_qp c;
	} m;

	memset(&m, 0, sizeof(m));
	m.c.qp_handle = qp;
	m.c.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	m.c.qp_state = QPS_INIT;
	m.c.port_num = 1;
	m.c.qp_access_flags = 2 | 4; /* remote write, remote read */
	CHECK(cmd(&m, sizeof(m), IB_USER_VERBS_CMD_MODIFY_QP, 0) == 0);

	memset(&m, 0, sizeof(m));
	m.c.qp_handle = qp;
	m.c.attr_mask =
	    M_STATE | M_AV | M_MTU | M_DEST_QPN | M_RQ_PSN | M_DEST_RD_ATOMIC | M_MIN_RNR;
	m.c.qp_state = QPS_RTR;
	m.c.path_mtu = 3; /* 1024 */
	m.c.dest_qp_num = qpn;
	m.c.rq_psn = 100;
	m.c.max_dest_rd_atomic = 1;
	m.c.min_rnr_timer = 12;
	m.c.dest.dlid = 1;
	m.c.dest.port_num = 1;
	CHECK(cmd(&m, sizeof(m), IB_USER_VERBS_CMD_MODIFY_QP, 0) == 0);

	memset(&m, 0, sizeof(m));
	m.c.qp_handle = qp;
	m.c.attr_mask = M_STATE | M_TIMEOUT | M_RETRY | M_RNR_RETRY | M_SQ_PSN | M_RD_ATOMIC;
	m.c.qp_state = QPS_RTS;
	m.c.timeout = 14;
	m.c.retry_cnt = 7;
	m.c.rnr_retry = 7;
	m.c.sq_psn = 200;
	m.c.max_rd_atomic = 1;
	CHECK(cmd(&m, sizeof(m), IB_USER_VERBS_CMD_MODIFY_QP, 0) == 0);
}

static void ofed_xrc(__u32 pd, __u32 cq)
{
	char path[] = "/tmp/raw-legacy-xrc-XXXXXX";
	int file = mkstemp(path);
	struct ofed_open_xrc_domain o = {0};
	__u32 xrcd = 0;
	struct ofed_create_xrc_rcv_qp c = {0};
	struct {
		__u32 qpn, reserved;
	} cr = {0, 0};
	struct ofed_modify_xrc_rcv_qp m;
	struct ofed_query_xrc_rcv_qp q = {0};
	struct ib_uverbs_query_qp_resp qr;
	struct ofed_reg_xrc_rcv_qp reg = {0};
	struct ofed_create_xrc_srq s = {0};
	struct ib_uverbs_create_srq_resp sr = {0};
	struct ofed_close_xrc_domain cl = {0};

	CHECK(file >= 0);
	unlink(path);
	o.fd = (__u32)file;
	o.oflags = O_CREAT;
	RESP(o, xrcd);
	CHECK(cmd(&o, sizeof(o), OFED_OPEN_XRC_DOMAIN, 1) == 0);
	/* The same file again, O_EXCL: EINVAL. */
	o.oflags = O_CREAT | O_EXCL;
	CHECK(cmd(&o, sizeof(o), OFED_OPEN_XRC_DOMAIN, 1) == EINVAL);

	c.xrc_domain_handle = xrcd;
	c.qp_type = QPT_XRC_OFED;
	RESP(c, cr);
	CHECK(cmd(&c, sizeof(c), OFED_CREATE_XRC_RCV_QP, 2) == 0);
	CHECK(cr.qpn != 0);

	memset(&m, 0, sizeof(m));
	m.xrc_domain_handle = xrcd;
	m.qp_num = cr.qpn;
	m.attr_mask = M_STATE | M_PKEY | M_PORT | M_ACCESS;
	m.qp_state = QPS_INIT;
	m.port_num = 1;
	CHECK(cmd(&m, sizeof(m), OFED_MODIFY_XRC_RCV_QP, 0) == 0);

	q.xrc_domain_handle = xrcd;
	q.qp_num = cr.qpn;
	memset(&qr, 0xff, sizeof(qr));
	RESP(q, qr);
	CHECK(cmd(&q, sizeof(q), OFED_QUERY_XRC_RCV_QP, sizeof(qr) / 4) == 0);
	CHECK(qr.qp_state == QPS_INIT && qr.port_num == 1);

	reg.xrc_domain_handle = xrcd;
	reg.qp_num = cr.qpn;
	CHECK(cmd(&reg, sizeof(reg), OFED_REG_XRC_RCV_QP, 0) == 0);
	CHECK(cmd(&reg, sizeof(reg), OFED_UNREG_XRC_RCV_QP, 0) == 0);
	CHECK(cmd(&reg, sizeof(reg), OFED_UNREG_XRC_RCV_QP, 0) == 0);
	/* The last registration is gone, so is the QP. */
	CHECK(cmd(&q, sizeof(q), OFED_QUERY_XRC_RCV_QP, sizeof(qr) / 4) == EINVAL);
	CHECK(cmd(&reg, sizeof(reg), OFED_UNREG_XRC_RCV_QP, 0) == EINVAL);

	s.pd_handle = pd;
	s.max_wr = 16;
	s.max_sge = 1;
	s.xrcd_handle = xrcd;
	s.xrc_cq = cq;
	RESP(s, sr);
	CHECK(cmd(&s, sizeof(s), OFED_CREATE_XRC_SRQ, sizeof(sr) / 4) == 0);
	CHECK(sr.max_wr >= 16 && sr.srqn != 0);
	destroy_srq(sr.srq_handle);

	cl.xrcd_handle = xrcd;
	CHECK(cmd(&cl, sizeof(cl), OFED_CLOSE_XRC_DOMAIN, 0) == 0);
	CHECK(cmd(&cl, sizeof(cl), OFED_CLOSE_XRC_DOMAIN, 0) == ENOENT);
	close(file);
}

static void upstream_xrc(__u32 pd, __u32 cq)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_open_xrcd c;
	} o = {0};
	struct ib_uverbs_open_xrcd_resp or_ = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp c;
	} t = {0};
	struct ib_uverbs_create_qp_resp tr = {0}, opr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_open_qp c;
	} op = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_xsrq c;
	} s = {0};
	struct ib_uverbs_create_srq_resp sr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_close_xrcd c;
	} cl = {0};

	o.c.fd = (__u32)-1;
	o.c.oflags = O_CREAT;
	RESP(o.c, or_);
	CHECK(cmd(&o, sizeof(o), IB_USER_VERBS_CMD_OPEN_XRCD, 1) == 0);

	t.c.pd_handle = or_.xrcd_handle;
	t.c.qp_type = QPT_XRC_TGT;
	RESP(t.c, tr);
	CHECK(cmd(&t, sizeof(t), IB_USER_VERBS_CMD_CREATE_QP, sizeof(tr) / 4) == 0);
	CHECK(tr.qpn != 0);

	op.c.pd_handle = or_.xrcd_handle;
	op.c.qpn = tr.qpn;
	op.c.qp_type = QPT_XRC_TGT;
	RESP(op.c, opr);
	CHECK(cmd(&op, sizeof(op), IB_USER_VERBS_CMD_OPEN_QP, sizeof(opr) / 4) == 0);
	CHECK(opr.qpn == tr.qpn && opr.qp_handle != tr.qp_handle);

	s.c.srq_type = 1; /* XRC */
	s.c.pd_handle = pd;
	s.c.max_wr = 16;
	s.c.max_sge = 1;
	s.c.xrcd_handle = or_.xrcd_handle;
	s.c.cq_handle = cq;
	RESP(s.c, sr);
	CHECK(cmd(&s, sizeof(s), IB_USER_VERBS_CMD_CREATE_XSRQ, sizeof(sr) / 4) == 0);
	CHECK(sr.srqn != 0);

	/* The domain is in use: EBUSY until its users are gone. */
	cl.c.xrcd_handle = or_.xrcd_handle;
	CHECK(cmd(&cl, sizeof(cl), IB_USER_VERBS_CMD_CLOSE_XRCD, 0) == EBUSY);
	destroy_srq(sr.srq_handle);
	destroy_qp(opr.qp_handle); /* an unregister: the QP lives on */
	destroy_qp(tr.qp_handle);  /* the last registration */
	CHECK(cmd(&cl, sizeof(cl), IB_USER_VERBS_CMD_CLOSE_XRCD, 0) == 0);
}

int main(void)
{
	const char *d = getenv("UABI_LEGACY_DIALECT");
	int ofed = d && !strcmp(d, "ofed");
	static char buf[65536];
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context c;
	} gc = {0};
	struct ib_uverbs_get_context_resp gcr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_device c;
	} qd = {0};
	struct ib_uverbs_query_device_resp qdr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_port c;
	} qpt = {0};
	struct ib_uverbs_query_port_resp qpr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd c;
	} ap = {0};
	struct ib_uverbs_alloc_pd_resp apr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_reg_mr c;
	} rm = {0};
	struct ib_uverbs_reg_mr_resp rmr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_comp_channel c;
	} cc = {0};
	struct ib_uverbs_create_comp_channel_resp ccr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq c;
	} cq = {0};
	struct ib_uverbs_create_cq_resp cqr = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp c;
	} qp = {0};
	struct ib_uverbs_create_qp_resp qpr2 = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_query_qp c;
	} qq = {0};
	struct ib_uverbs_query_qp_resp qqr;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq c;
	} dcq = {0};
	struct ib_uverbs_destroy_cq_resp dcqr = {7, 7};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dereg_mr c;
	} dm = {0};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dealloc_pd c;
	} dp = {0};
	char ev[16];

	uverbs = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);
	CHECK(uverbs >= 0);
	if (uverbs < 0)
		return 1;

	/* Before GET_CONTEXT nothing but GET_CONTEXT works. */
	RESP(ap.c, apr);
	CHECK(cmd(&ap, sizeof(ap), IB_USER_VERBS_CMD_ALLOC_PD, 1) == EINVAL);

	RESP(gc.c, gcr);
	CHECK(cmd(&gc, sizeof(gc), IB_USER_VERBS_CMD_GET_CONTEXT, 2) == 0);
	CHECK(gcr.num_comp_vectors == 1);
	CHECK(fcntl((int)gcr.async_fd, F_GETFD) >= 0);
	/* No async event pending: a non-blocking read says EAGAIN. */
	CHECK(fcntl((int)gcr.async_fd, F_SETFL, O_NONBLOCK) == 0);
	CHECK(read((int)gcr.async_fd, ev, sizeof(ev)) == -1 && errno == EAGAIN);

	memset(&qdr, 0, sizeof(qdr));
	RESP(qd.c, qdr);
	CHECK(cmd(&qd, sizeof(qd), IB_USER_VERBS_CMD_QUERY_DEVICE, sizeof(qdr) / 4) == 0);
	CHECK(qdr.phys_port_cnt == 1 && qdr.max_qp > 0 && qdr.node_guid != 0);

	memset(&qpr, 0, sizeof(qpr));
	qpt.c.port_num = 1;
	RESP(qpt.c, qpr);
	CHECK(cmd(&qpt, sizeof(qpt), IB_USER_VERBS_CMD_QUERY_PORT, sizeof(qpr) / 4) == 0);
	CHECK(qpr.state == 4 && qpr.lid == 1 && qpr.active_mtu > 0);

	CHECK(cmd(&ap, sizeof(ap), IB_USER_VERBS_CMD_ALLOC_PD, 1) == 0);
	CHECK(apr.pd_handle != 0);

	rm.c.start = rm.c.hca_va = (uintptr_t)buf;
	rm.c.length = sizeof(buf);
	rm.c.pd_handle = apr.pd_handle;
	rm.c.access_flags = 1 | 2 | 4; /* local write, remote write, remote read */
	RESP(rm.c, rmr);
	CHECK(cmd(&rm, sizeof(rm), IB_USER_VERBS_CMD_REG_MR, 3) == 0);
	CHECK(rmr.lkey != 0 && rmr.rkey != 0);

	RESP(cc.c, ccr);
	CHECK(cmd(&cc, sizeof(cc), IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, 1) == 0);
	CHECK(fcntl((int)ccr.fd, F_GETFD) >= 0);

	cq.c.cqe = 16;
	cq.c.comp_channel = (__s32)ccr.fd;
	cq.c.user_handle = 0x1234;
	RESP(cq.c, cqr);
	CHECK(cmd(&cq, sizeof(cq), IB_USER_VERBS_CMD_CREATE_CQ, 2) == 0);
	CHECK(cqr.cqe >= 16);

	qp.c.pd_handle = apr.pd_handle;
	qp.c.send_cq_handle = qp.c.recv_cq_handle = cqr.cq_handle;
	qp.c.max_send_wr = qp.c.max_recv_wr = 16;
	qp.c.max_send_sge = qp.c.max_recv_sge = 1;
	qp.c.qp_type = QPT_RC;
	RESP(qp.c, qpr2);
	CHECK(cmd(&qp, sizeof(qp), IB_USER_VERBS_CMD_CREATE_QP, sizeof(qpr2) / 4) == 0);
	CHECK(qpr2.qpn != 0 && qpr2.max_send_wr >= 16);

	connect_rc(qpr2.qp_handle, qpr2.qpn);

	memset(&qqr, 0, sizeof(qqr));
	qq.c.qp_handle = qpr2.qp_handle;
	qq.c.attr_mask = M_STATE;
	RESP(qq.c, qqr);
	CHECK(cmd(&qq, sizeof(qq), IB_USER_VERBS_CMD_QUERY_QP, sizeof(qqr) / 4) == 0);
	CHECK(qqr.qp_state == QPS_RTS && qqr.dest_qp_num == qpr2.qpn);
	CHECK(qqr.sq_psn == 200 && qqr.rq_psn == 100 && qqr.timeout == 14);
	CHECK(qqr.dest.dlid == 1 && qqr.max_send_wr >= 16);

	if (ofed)
		ofed_xrc(apr.pd_handle, cqr.cq_handle);
	else
		upstream_xrc(apr.pd_handle, cqr.cq_handle);

	/* Bad input: the kernel's errno, nothing changed. */
	ap.hdr.in_words = 3;
	errno = 0;
	CHECK(write(uverbs, &ap, sizeof(ap)) == -1 && errno == EINVAL);
	ap.c.response = 0;
	CHECK(cmd(&ap, sizeof(ap), IB_USER_VERBS_CMD_ALLOC_PD, 1) == EFAULT);
	CHECK(cmd(&ap, sizeof(ap), 99, 1) == EOPNOTSUPP);
	{
		void *volatile unmapped = NULL; /* as a buggy caller would pass */

		errno = 0;
		CHECK(write(uverbs, unmapped, 16) == -1 && errno == EFAULT);
	}
	/* The CQ is in use by the QP. */
	dcq.c.cq_handle = cqr.cq_handle;
	RESP(dcq.c, dcqr);
	CHECK(cmd(&dcq, sizeof(dcq), IB_USER_VERBS_CMD_DESTROY_CQ, 2) == EBUSY);

	destroy_qp(qpr2.qp_handle);
	CHECK(cmd(&dcq, sizeof(dcq), IB_USER_VERBS_CMD_DESTROY_CQ, 2) == 0);
	CHECK(dcqr.comp_events_reported == 0 && dcqr.async_events_reported == 0);
	dm.c.mr_handle = rmr.mr_handle;
	CHECK(cmd(&dm, sizeof(dm), IB_USER_VERBS_CMD_DEREG_MR, 0) == 0);
	dp.c.pd_handle = apr.pd_handle;
	CHECK(cmd(&dp, sizeof(dp), IB_USER_VERBS_CMD_DEALLOC_PD, 0) == 0);
	CHECK(cmd(&dp, sizeof(dp), IB_USER_VERBS_CMD_DEALLOC_PD, 0) == ENOENT);

	CHECK(close((int)ccr.fd) == 0);
	CHECK(close((int)gcr.async_fd) == 0);
	CHECK(close(uverbs) == 0);
	/* Other files are untouched by the interposer. */
	CHECK(write(1, "", 0) == 0);

	printf("raw_legacy (%s dialect): %d passed, %d failed\n", ofed ? "ofed" : "upstream",
	       passed, failed);
	return failed ? 1 : 0;
}
