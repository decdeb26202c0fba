/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The port counters follow the traffic (docs/fsview.md, "Port counters"):
 * run under `uabi run`, this program reads the counters with the unmodified
 * perfquery (PortCounters) and perfquery -x (PortCountersExtended), moves
 * known traffic through the device, and reads them again.  It holds its
 * context the whole time, so perfquery's own context (the umad shim's)
 * finds the user's arena as the traffic left it.
 *
 *   RC: N SENDs of S bytes at path MTU 1024, M RDMA WRITEs of W bytes
 *   UD: one multicast SEND of U bytes to a group two QPs joined
 *
 * Expected growth: words = N*ceil(S/4) + M*ceil(W/4) + 2*ceil(U/4);
 * unicast packets = N*ceil(S/1024) + M*ceil(W/1024); multicast packets 2
 * (one per copy delivered); transmit and receive alike.  Then perfquery -R
 * clears PortCounters (and not the extended ones) and perfquery -x -R the
 * extended ones.
 *
 *   port_traffic [--expect-fresh] [--keep] [--then CMD]
 *     --expect-fresh  every counter must read 0 before the traffic (a user
 *                     whose arena is new: nobody else's traffic shows)
 *     --keep          do not reset at the end
 *     --then CMD      after the checks, run CMD (sh -c) and require that
 *                     it exits 0 and leaves this user's counters unchanged
 *                     (CMD moves another user's traffic)
 * Exit status: the number of failures (0: PASS).
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N_SEND = 10, S_SEND = 3001, M_WRITE = 4, W_WRITE = 5000, U_MCAST = 100 };
enum { MTU = 1024, BUF = 1 << 16, RECV_OFF = 32768 };

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

/* ----------------------------------------------------------- perfquery */
enum { XD, RD, XP, RP, N_PC };
static const char *const pc_names[N_PC] = {"PortXmitData", "PortRcvData", "PortXmitPkts",
					   "PortRcvPkts"};
enum { EXD, ERD, EXP, ERP, EUX, EUR, EMX, EMR, N_PCX };
static const char *const pcx_names[N_PCX] = {
	"PortXmitData",	       "PortRcvData",	     "PortXmitPkts",	      "PortRcvPkts",
	"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"};

/* Runs perfquery ARGS and fills v[i] with the value of names[i]
 * ("Name:.....value"); 0 on success. */
static int perfquery(const char *args, const char *const *names, int n, uint64_t *v)
{
	char cmd[256], line[512];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "perfquery %s", args);
	FILE *p = popen(cmd, "r");
	if (!p) {
		fail("popen %s: %s", cmd, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), p)) {
		for (int i = 0; i < n; i++) {
			size_t l = strlen(names[i]);
			if (strncmp(line, names[i], l) || line[l] != ':')
				continue;
			const char *q = line + l + 1;
			while (*q == '.')
				q++;
			v[i] = strtoull(q, NULL, 10);
			found |= 1 << i;
		}
	}
	int st = pclose(p);
	if (st != 0) {
		fail("'%s' exited with status %d", cmd, st);
		return -1;
	}
	if (found != (1 << n) - 1) {
		fail("'%s' printed not every counter (found mask 0x%x)", cmd, found);
		return -1;
	}
	return 0;
}

static void reset(const char *args)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "perfquery %s >/dev/null", args);
	int st = system(cmd);
	if (st != 0)
		fail("'%s' exited with status %d", cmd, st);
}

struct counters {
	uint64_t pc[N_PC], pcx[N_PCX];
};

static int read_counters(struct counters *c)
{
	if (perfquery("", pc_names, N_PC, c->pc) || perfquery("-x", pcx_names, N_PCX, c->pcx))
		return -1;
	return 0;
}

static void print_counters(const char *what, const struct counters *c)
{
	printf("%-8s PC:", what);
	for (int i = 0; i < N_PC; i++)
		printf(" %s=%" PRIu64, pc_names[i], c->pc[i]);
	printf("\n%-8s PCX:", what);
	for (int i = 0; i < N_PCX; i++)
		printf(" %s=%" PRIu64, pcx_names[i], c->pcx[i]);
	printf("\n");
}

/* --------------------------------------------------------------- verbs */
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static unsigned char *buf;

static struct ibv_qp *make_qp(enum ibv_qp_type t)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = t,
		.cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	if (!qp) {
		fail("ibv_create_qp: %s", strerror(errno));
		exit(100);
	}
	return qp;
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	if (ibv_modify_qp(qp, a, mask)) {
		fail("modify to %s: %s", what, strerror(errno));
		exit(100);
	}
}

/* RC: RESET -> INIT -> RTR (path MTU 1024) -> RTS, to @dest. */
static void connect_rc(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE};
	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
	       "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	modify(qp, &a,
	       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	       "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	modify(qp, &a,
	       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC,
	       "RTS");
}

static void ready_ud(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
	modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	modify(qp, &a, IBV_QP_STATE, "RTR");
	a.qp_state = IBV_QPS_RTS;
	modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS");
}

static void post_recv(struct ibv_qp *qp, uint32_t off, uint32_t len)
{
	struct ibv_sge s = {(uintptr_t)(buf + off), len, mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &s, .num_sge = 1}, *bad;
	if (ibv_post_recv(qp, &wr, &bad)) {
		fail("ibv_post_recv: %s", strerror(errno));
		exit(100);
	}
}

/* Waits for @n completions, each a success. */
static void wait_completions(int n)
{
	struct ibv_wc wc[16];
	while (n > 0) {
		int got = ibv_poll_cq(cq, 16, wc);
		if (got < 0) {
			fail("ibv_poll_cq: %d", got);
			exit(100);
		}
		for (int i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				fail("completion status %d (%s)", wc[i].status,
				     ibv_wc_status_str(wc[i].status));
		n -= got;
	}
}

static void send_wr(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	if (ibv_post_send(qp, wr, &bad)) {
		fail("ibv_post_send: %s", strerror(errno));
		exit(100);
	}
}

static uint64_t words(uint64_t bytes) { return (bytes + 3) / 4; }
static uint64_t packets(uint64_t bytes) { return bytes ? (bytes + MTU - 1) / MTU : 1; }

static void move_traffic(void)
{
	struct ibv_qp *a = make_qp(IBV_QPT_RC), *b = make_qp(IBV_QPT_RC);
	connect_rc(a, b->qp_num);
	connect_rc(b, a->qp_num);
	for (int i = 0; i < N_SEND; i++) {
		post_recv(b, RECV_OFF, S_SEND);
		struct ibv_sge s = {(uintptr_t)buf, S_SEND, mr->lkey};
		struct ibv_send_wr wr = {.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED};
		send_wr(a, &wr);
		wait_completions(2);
	}
	for (int i = 0; i < M_WRITE; i++) {
		struct ibv_sge s = {(uintptr_t)buf, W_WRITE, mr->lkey};
		struct ibv_send_wr wr = {.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED};
		wr.wr.rdma.remote_addr = (uintptr_t)(buf + RECV_OFF);
		wr.wr.rdma.rkey = mr->rkey;
		send_wr(b, &wr);
		wait_completions(1);
	}

	/* UD multicast: two members, one sender that is not one. */
	struct ibv_qp *snd = make_qp(IBV_QPT_UD), *m1 = make_qp(IBV_QPT_UD),
		      *m2 = make_qp(IBV_QPT_UD);
	ready_ud(snd);
	ready_ud(m1);
	ready_ud(m2);
	union ibv_gid g;
	memset(&g, 0, sizeof(g));
	g.raw[0] = 0xff;
	g.raw[1] = 0x0e;
	g.raw[15] = 0x16;
	const uint16_t mlid = 0xc016;
	if (ibv_attach_mcast(m1, &g, mlid) || ibv_attach_mcast(m2, &g, mlid)) {
		fail("ibv_attach_mcast: %s", strerror(errno));
		exit(100);
	}
	post_recv(m1, RECV_OFF, 40 + U_MCAST);
	post_recv(m2, RECV_OFF + 4096, 40 + U_MCAST);
	struct ibv_ah_attr aa = {.dlid = mlid, .port_num = 1, .is_global = 1};
	aa.grh.dgid = g;
	aa.grh.hop_limit = 1;
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	if (!ah) {
		fail("ibv_create_ah: %s", strerror(errno));
		exit(100);
	}
	struct ibv_sge s = {(uintptr_t)buf, U_MCAST, mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED};
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = 0x11111111;
	send_wr(snd, &wr);
	wait_completions(3);

	ibv_detach_mcast(m1, &g, mlid);
	ibv_detach_mcast(m2, &g, mlid);
	ibv_destroy_ah(ah);
	for (struct ibv_qp **q = (struct ibv_qp *[]){a, b, snd, m1, m2, NULL}; *q; q++)
		ibv_destroy_qp(*q);
}

static void expect_growth(const char *what, const uint64_t *before, const uint64_t *after,
			  const char *const *names, const uint64_t *want, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t got = after[i] - before[i];
		if (after[i] < before[i] || got != want[i])
			fail("%s %s grew by %" PRIu64 " (%" PRIu64 " -> %" PRIu64 "), expected %" PRIu64,
			     what, names[i], got, before[i], after[i], want[i]);
	}
}

static void expect_values(const char *what, const uint64_t *v, const char *const *names,
			  const uint64_t *want, int n)
{
	for (int i = 0; i < n; i++)
		if (v[i] != want[i])
			fail("%s %s is %" PRIu64 ", expected %" PRIu64, what, names[i], v[i], want[i]);
}

int main(int argc, char **argv)
{
	int expect_fresh = 0, keep = 0;
	const char *then = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--expect-fresh"))
			expect_fresh = 1;
		else if (!strcmp(argv[i], "--keep"))
			keep = 1;
		else if (!strcmp(argv[i], "--then") && i + 1 < argc)
			then = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--expect-fresh] [--keep] [--then CMD]\n", argv[0]);
			return 2;
		}
	}

	/* The context held across every perfquery below. */
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n < 1) {
		fail("no device");
		return 100;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!ctx) {
		fail("ibv_open_device: %s", strerror(errno));
		return 100;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	buf = calloc(1, BUF);
	mr = pd && buf ? ibv_reg_mr(pd, buf, BUF,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
		       : NULL;
	if (!pd || !cq || !mr) {
		fail("PD, CQ or MR: %s", strerror(errno));
		return 100;
	}

	struct counters before, after, now;
	if (read_counters(&before))
		return failures;
	print_counters("before", &before);
	if (expect_fresh) {
		const uint64_t zero[N_PCX] = {0};
		expect_values("fresh", before.pc, pc_names, zero, N_PC);
		expect_values("fresh", before.pcx, pcx_names, zero, N_PCX);
	}

	move_traffic();
	if (read_counters(&after))
		return failures;
	print_counters("after", &after);
	const uint64_t w = N_SEND * words(S_SEND) + M_WRITE * words(W_WRITE) + 2 * words(U_MCAST);
	const uint64_t up = N_SEND * packets(S_SEND) + M_WRITE * packets(W_WRITE);
	const uint64_t mp = 2;
	const uint64_t want_pc[N_PC] = {w, w, up + mp, up + mp};
	const uint64_t want_pcx[N_PCX] = {w, w, up + mp, up + mp, up, up, mp, mp};
	printf("expected growth: %" PRIu64 " words, %" PRIu64 " unicast and %" PRIu64
	       " multicast packets\n",
	       w, up, mp);
	expect_growth("PortCounters", before.pc, after.pc, pc_names, want_pc, N_PC);
	expect_growth("PortCountersExtended", before.pcx, after.pcx, pcx_names, want_pcx, N_PCX);

	if (then) {
		printf("running: %s\n", then);
		int st = system(then);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail("'%s' failed (status %d)", then, st);
		if (read_counters(&now))
			return failures;
		print_counters("then", &now);
		expect_values("after another user's traffic: PortCounters", now.pc, pc_names,
			      after.pc, N_PC);
		expect_values("after another user's traffic: PortCountersExtended", now.pcx,
			      pcx_names, after.pcx, N_PCX);
	}

	if (!keep) {
		/* perfquery -R: PortCounters only; -x -R: the extended ones. */
		const uint64_t zero[N_PCX] = {0};
		reset("-R");
		if (read_counters(&now))
			return failures;
		print_counters("reset", &now);
		expect_values("after perfquery -R: PortCounters", now.pc, pc_names, zero, N_PC);
		expect_values("after perfquery -R: PortCountersExtended (not cleared)", now.pcx,
			      pcx_names, after.pcx, N_PCX);
		reset("-x -R");
		if (read_counters(&now))
			return failures;
		print_counters("reset -x", &now);
		expect_values("after perfquery -x -R: PortCountersExtended", now.pcx, pcx_names,
			      zero, N_PCX);
	}

	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	if (failures) {
		printf("FAIL: port counters, %d failures\n", failures);
		return failures > 99 ? 99 : failures;
	}
	printf("PASS: port counters follow the traffic\n");
	return 0;
}
