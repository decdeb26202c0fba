// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A peer alive but stuck, on one host (docs/cm.md, "Timeouts inside one
// core"), through Debian's unmodified librdmacm: a client and a server in
// this one process, each on an event channel of its own, 127.0.0.1:PORT.
//
//   listener: the server listens and never takes the request; the client's
//             CONNECT must end in UNREACHABLE (-ETIMEDOUT), and the server,
//             reading at last, finds the request, whose accept then fails
//             with EINVAL (the requester's REJ came first), and no event
//             comes for that ID (Linux's ucma reports nothing on an ID not
//             accepted yet).
//   rtu:      the server accepts; the client takes CONNECT_RESPONSE (no QP:
//             librdmacm leaves the RTU to it) and never sends the RTU; the
//             server's accepted ID must end in UNREACHABLE (-ETIMEDOUT) and
//             the client's in REJECTED (status 1).
//   timewait: a connection made (the client completes it with
//             rdma_establish(), having no QP), then the client disconnects:
//             DISCONNECTED on both sides, then TIMEWAIT_EXIT for the
//             client; the server's rdma_disconnect() after its
//             DISCONNECTED (where Linux's CM sends its DREP) brings its
//             own TIMEWAIT_EXIT.
//   notify:   the server accepts and, before the client's RTU, calls
//             rdma_notify(IBV_EVENT_COMM_EST) (its QP's first message came
//             first): ESTABLISHED for the server at once; again EISCONN;
//             IBV_EVENT_PATH_MIG 0; another event EINVAL; the client's
//             RTU then brings no second ESTABLISHED; a listener's NOTIFY
//             is EINVAL.
//   backlog:  the server listens with a backlog of 1; a second client's
//             request, beyond it, is not refused (Linux's CM drops it
//             unanswered and the requester sends it again): once the
//             server has taken and rejected the first, the second arrives
//             (REJECTED 28 for each client, rejected in turn); then, the
//             server not reading, a request beyond the backlog gets
//             UNREACHABLE (-ETIMEDOUT) after its retries, as does the one
//             in the backlog (MRAs), and the server finds only the latter.
//
// Prints one line per event seen; exits 0 when all came as above.  The
// CM's timeouts are uabid's (UABI_CM_RESPONSE_TIMEOUT, UABI_CM_RETRIES,
// UABI_CM_MRA_TIMEOUT); alarm() bounds the run.
//
//   ucma_timeouts PORT listener|rtu|timewait|backlog|notify
//
// librdmacm's development header is not needed (rdmacm_decl.h, which
// also holds the checks these programs share).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdmacm_decl.h"

// Waits up to @ms for an event on @ch; exits if none comes.
static void within(const char *who, struct rdma_event_channel *ch, int ms)
{
	struct pollfd pf = {.fd = ch->fd, .events = POLLIN};
	if (poll(&pf, 1, ms) != 1) {
		printf("%s: no event within %d ms\n", who, ms);
		exit(1);
	}
}

// A client ID on @ch connecting to @a (its ADDR_ and ROUTE_RESOLVED
// taken), with QP number @qpn (no QP: the CM needs only its number).
static struct rdma_cm_id *connect_to(struct rdma_event_channel *ch, struct sockaddr_in *a, uint32_t qpn)
{
	struct rdma_cm_id *c;
	if (rdma_create_id(ch, &c, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(c, NULL, (struct sockaddr *)a, 2000))
		die("rdma_resolve_addr");
	expect("client", ch, ADDR_RESOLVED, 0);
	if (rdma_resolve_route(c, 2000))
		die("rdma_resolve_route");
	expect("client", ch, ROUTE_RESOLVED, 0);
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.qp_num = qpn;
	if (rdma_connect(c, &p))
		die("rdma_connect");
	return c;
}

// backlog: see the top of the file.  @l listens with a backlog of 1.
static int backlog_case(struct rdma_event_channel *sch, struct rdma_cm_id *l, struct sockaddr_in *a)
{
	struct rdma_event_channel *c1ch = rdma_create_event_channel(), *c2ch = rdma_create_event_channel();
	if (!c1ch || !c2ch)
		die("rdma_create_event_channel");
	struct rdma_cm_id *c1 = connect_to(c1ch, a, 0x201);
	struct rdma_cm_id *c2 = connect_to(c2ch, a, 0x202); // beyond the backlog
	struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
	if (rdma_reject(n, NULL, 0))
		die("rdma_reject");
	expect("client 1", c1ch, REJECTED, 28);
	rdma_destroy_id(n);
	// The second request comes with its next REQ, not refused before.
	within("server (the request beyond the backlog)", sch, 10000);
	n = expect("server", sch, CONNECT_REQUEST, 0);
	if (rdma_reject(n, NULL, 0))
		die("rdma_reject");
	expect("client 2", c2ch, REJECTED, 28);
	rdma_destroy_id(n);
	rdma_destroy_id(c1);
	rdma_destroy_id(c2);

	// The server stops reading: one request in the backlog, one beyond.
	c1 = connect_to(c1ch, a, 0x203);
	c2 = connect_to(c2ch, a, 0x204);
	expect("client 2", c2ch, UNREACHABLE, -110);
	expect("client 1", c1ch, UNREACHABLE, -110);
	n = expect("server", sch, CONNECT_REQUEST, 0);
	struct pollfd pf = {.fd = sch->fd, .events = POLLIN};
	int ready = poll(&pf, 1, 300);
	printf("server: %s\n", ready ? "another request (the one beyond the backlog)" : "no other request");
	if (ready)
		return 1;
	rdma_destroy_id(n);
	rdma_destroy_id(c1);
	rdma_destroy_id(c2);
	rdma_destroy_event_channel(c1ch);
	rdma_destroy_event_channel(c2ch);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[2], "listener") && strcmp(argv[2], "rtu") &&
			  strcmp(argv[2], "timewait") && strcmp(argv[2], "backlog") &&
			  strcmp(argv[2], "notify")))
		return 2;
	const int rtu = !strcmp(argv[2], "rtu"), timewait = !strcmp(argv[2], "timewait"),
		  backlog = !strcmp(argv[2], "backlog"), notify = !strcmp(argv[2], "notify");
	signal(SIGALRM, on_alarm);
	alarm(60);
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)atoi(argv[1]));
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);

	struct rdma_event_channel *sch = rdma_create_event_channel(), *cch = rdma_create_event_channel();
	if (!sch || !cch)
		die("rdma_create_event_channel");
	struct rdma_cm_id *l, *c;
	if (rdma_create_id(sch, &l, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(l, (struct sockaddr *)&a) || rdma_listen(l, backlog ? 1 : 4))
		die("listen");
	if (backlog) {
		if (backlog_case(sch, l, &a))
			return 1;
		rdma_destroy_id(l);
		rdma_destroy_event_channel(cch);
		rdma_destroy_event_channel(sch);
		printf("ok\n");
		return 0;
	}
	c = connect_to(cch, &a, 0x123);
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	if (notify) {
		struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
		p.qp_num = 0x456;
		if (rdma_accept(n, &p))
			die("rdma_accept");
		expect("client", cch, CONNECT_RESPONSE, 0);
		errno = 0;
		int r = rdma_notify(l, 4);
		printf("server: rdma_notify(listener, COMM_EST) %d (%s)\n", r, strerror(errno));
		if (r != -1 || errno != EINVAL)
			return 1;
		if (rdma_notify(n, 4)) // IBV_EVENT_COMM_EST
			die("rdma_notify(COMM_EST)");
		expect("server", sch, ESTABLISHED, 0);
		errno = 0;
		r = rdma_notify(n, 4);
		printf("server: rdma_notify(COMM_EST) again %d (%s)\n", r, strerror(errno));
		if (r != -1 || errno != EISCONN)
			return 1;
		if (rdma_notify(n, 6)) // IBV_EVENT_PATH_MIG
			die("rdma_notify(PATH_MIG)");
		errno = 0;
		r = rdma_notify(n, 99);
		printf("server: rdma_notify(99) %d (%s)\n", r, strerror(errno));
		if (r != -1 || errno != EINVAL)
			return 1;
		if (rdma_establish(c))
			die("rdma_establish");
		struct pollfd pf = {.fd = sch->fd, .events = POLLIN};
		int ready = poll(&pf, 1, 300);
		printf("server: %s\n", ready ? "another event after the RTU" : "no second ESTABLISHED");
		if (ready)
			return 1;
		if (rdma_disconnect(c))
			die("rdma_disconnect");
		expect("client", cch, DISCONNECTED, 0);
		expect("server", sch, DISCONNECTED, 0);
		rdma_destroy_id(n);
	} else if (timewait) {
		struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
		p.qp_num = 0x456;
		if (rdma_accept(n, &p))
			die("rdma_accept");
		expect("client", cch, CONNECT_RESPONSE, 0);
		if (rdma_establish(c))
			die("rdma_establish");
		expect("server", sch, ESTABLISHED, 0);
		if (rdma_disconnect(c))
			die("rdma_disconnect");
		expect("client", cch, DISCONNECTED, 0);
		expect("server", sch, DISCONNECTED, 0);
		expect("client", cch, TIMEWAIT_EXIT, 0);
		if (rdma_disconnect(n))
			die("rdma_disconnect (server)");
		expect("server", sch, TIMEWAIT_EXIT, 0);
		rdma_destroy_id(n);
	} else if (!rtu) {
		// The server never looks: the client's REQ times out.
		expect("client", cch, UNREACHABLE, -110);
		struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
		p.qp_num = 0x456;
		errno = 0;
		int r = rdma_accept(n, &p);
		printf("server: rdma_accept %d (%s)\n", r, strerror(errno));
		if (r == 0 || errno != EINVAL)
			return 1;
		// And nothing is reported for that ID: an event of an ID not
		// accepted yet would carry no context (uid 0), which
		// librdmacm takes for its own pointer.
		struct pollfd pf = {.fd = sch->fd, .events = POLLIN};
		int ready = poll(&pf, 1, 300);
		printf("server: %s\n", ready ? "an event for the ID not accepted" : "no event");
		if (ready)
			return 1;
		rdma_destroy_id(n);
	} else {
		struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
		p.qp_num = 0x456;
		if (rdma_accept(n, &p))
			die("rdma_accept");
		// The client takes the REP and never sends its RTU.
		expect("client", cch, CONNECT_RESPONSE, 0);
		expect("server", sch, UNREACHABLE, -110);
		expect("client", cch, REJECTED, 1);
		rdma_destroy_id(n);
	}
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
	printf("ok\n");
	return 0;
}
