// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A client that dies half-way through connecting: raw ucma commands (no
// librdmacm, which would send the RTU by itself) resolve ADDR:PORT
// (an IPv4 address, 127.0.0.1 if not given),
// send the REQ and SIGKILL themselves, at once (req) or once the REP is
// in (rep; "REP" printed first): the RTU is never sent.  The server must
// learn it (docs/cm.md, "Going away").
//
//   ucma_half_connect PORT req|rep [ADDR]
#define _GNU_SOURCE
#include <rdma/rdma_user_cm.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Event numbers, as librdmacm's enum rdma_cm_event_type (not in the
// kernel's uAPI header).
enum { ADDR_RESOLVED = 0, ROUTE_RESOLVED = 2, CONNECT_RESPONSE = 5 };

static int cmd(int fd, uint32_t op, void *body, uint16_t in, uint16_t out)
{
	unsigned char buf[512];
	struct rdma_ucm_cmd_hdr h = {.cmd = op, .in = in, .out = out};

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, in);
	if (write(fd, buf, sizeof(h) + in) < 0) {
		printf("command %u: %s\n", op, strerror(errno));
		exit(1);
	}
	return 0;
}

// The next event (GET_EVENT blocks); exits unless it is @want.
static void expect(int fd, uint32_t want)
{
	struct rdma_ucm_get_event g;
	struct rdma_ucm_event_resp ev;

	memset(&ev, 0, sizeof(ev));
	g.response = (uintptr_t)&ev;
	cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev));
	if (ev.event != want) {
		printf("event %u (status %d), not %u\n", ev.event, ev.status, want);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	int fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("open /dev/infiniband/rdma_cm: %s\n", strerror(errno));
		return 1;
	}
	struct rdma_ucm_create_id c = {.uid = 1, .ps = RDMA_PS_TCP, .qp_type = 2};
	struct rdma_ucm_create_id_resp r = {0};
	c.response = (uintptr_t)&r;
	cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r));

	struct rdma_ucm_resolve_ip ri = {.id = r.id, .timeout_ms = 2000};
	struct sockaddr_in *dst = (struct sockaddr_in *)&ri.dst_addr;
	dst->sin_family = AF_INET;
	dst->sin_port = htons((uint16_t)atoi(argv[1]));
	dst->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (argc == 4 && inet_pton(AF_INET, argv[3], &dst->sin_addr) != 1)
		return 2;
	cmd(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &ri, sizeof(ri), 0);
	expect(fd, ADDR_RESOLVED);
	struct rdma_ucm_resolve_route rr = {.id = r.id, .timeout_ms = 2000};
	cmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0);
	expect(fd, ROUTE_RESOLVED);

	// A QPN the server's QP is pointed at; nothing will ever be sent.
	struct rdma_ucm_connect cn = {.id = r.id};
	cn.conn_param.qp_num = 0x123;
	cn.conn_param.responder_resources = 1;
	cn.conn_param.initiator_depth = 1;
	cn.conn_param.retry_count = 7;
	cn.conn_param.rnr_retry_count = 7;
	cn.conn_param.valid = 1;
	cmd(fd, RDMA_USER_CM_CMD_CONNECT, &cn, sizeof(cn), 0);
	if (!strcmp(argv[2], "req")) {
		// The core answers a CONNECT with no listener at once
		// (REJECTED 8, queued before the write returns): anything
		// else (nothing yet, or a quick server's REP) means the REQ
		// is with the listener.
		struct rdma_ucm_get_event g;
		struct rdma_ucm_event_resp ev;
		unsigned char buf[64];
		struct rdma_ucm_cmd_hdr h = {.cmd = RDMA_USER_CM_CMD_GET_EVENT,
					     .in = sizeof(g), .out = sizeof(ev)};

		g.response = (uintptr_t)&ev;
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), &g, sizeof(g));
		fcntl(fd, F_SETFL, O_NONBLOCK);
		if (write(fd, buf, sizeof(h) + sizeof(g)) >= 0 && ev.event == 8 && ev.status == 8) {
			printf("event %u (status %d)\n", ev.event, ev.status);
			return 1;
		}
		raise(SIGKILL);
	}
	expect(fd, CONNECT_RESPONSE);
	printf("REP\n");
	fflush(stdout);
	raise(SIGKILL);
	return 1;
}
