// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Raw ucma write()s to /dev/infiniband/rdma_cm, as a program without
// librdmacm would send them, under `uabi run`: each bad command answers the
// errno Linux's ucma gives (docs/cm.md), and nothing is lost or left.
#define _GNU_SOURCE
#include <rdma/rdma_user_cm.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL line %d: ", __LINE__);                                        \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

// write() of header + body; returns 0 or errno.
static int cmd(int fd, uint32_t op, void *body, uint16_t in, uint16_t out)
{
	unsigned char buf[512];
	struct rdma_ucm_cmd_hdr h = {.cmd = op, .in = in, .out = out};

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), body, in);
	ssize_t n = write(fd, buf, sizeof(h) + in);
	if (n < 0)
		return errno;
	return n == (ssize_t)(sizeof(h) + in) ? 0 : EIO;
}

static int create_id(int fd, uint32_t *id)
{
	struct rdma_ucm_create_id c = {.uid = 1, .ps = RDMA_PS_TCP, .qp_type = 2};
	struct rdma_ucm_create_id_resp r = {0};

	c.response = (uintptr_t)&r;
	int e = cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r));
	*id = r.id;
	return e;
}

static int readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int main(void)
{
	int fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("FAIL: open /dev/infiniband/rdma_cm: %s\n", strerror(errno));
		return 1;
	}
	struct stat st;
	CHECK(fstat(fd, &st) == 0 && S_ISCHR(st.st_mode), "not a character device");

	char tiny[4] = {0};
	CHECK(write(fd, tiny, sizeof(tiny)) < 0 && errno == EINVAL, "short write: %m");
	char none[1];
	CHECK(cmd(fd, 99, none, 0, 0) == EINVAL, "unknown command");
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_OPTION, none, 0, 0) == ENOSYS, "GET_OPTION");

	// CREATE_ID: no room for the answer, an unwritable answer.
	struct rdma_ucm_create_id c = {.uid = 1, .ps = RDMA_PS_TCP, .qp_type = 2};
	struct rdma_ucm_create_id_resp r;
	c.response = (uintptr_t)&r;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), 0) == ENOSPC, "out 0");
	c.response = 0;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r)) == EFAULT, "NULL");
	c.ps = 0x4242;
	c.response = (uintptr_t)&r;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r)) == EINVAL, "bad ps");

	uint32_t id;
	CHECK(create_id(fd, &id) == 0, "create");

	struct rdma_ucm_bind_ip b = {.id = id};
	b.addr.sin6_family = 12345;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_BIND_IP, &b, sizeof(b), 0) == EINVAL, "bad family");

	struct rdma_ucm_destroy_id d = {.id = id + 1000};
	struct rdma_ucm_destroy_id_resp dr;
	d.response = (uintptr_t)&dr;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), sizeof(dr)) == ENOENT,
	      "no such ID");
	d.id = id;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &d, sizeof(d), 0) == ENOSPC, "destroy out 0");

	struct rdma_ucm_init_qp_attr q = {.id = id, .qp_state = 7};
	struct ib_uverbs_qp_attr qa;
	q.response = (uintptr_t)&qa;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &q, sizeof(q), sizeof(qa)) == EINVAL,
	      "state 7");
	q.qp_state = 2; // RTR before any connection
	CHECK(cmd(fd, RDMA_USER_CM_CMD_INIT_QP_ATTR, &q, sizeof(q), sizeof(qa)) == EINVAL,
	      "RTR without a peer");

	struct rdma_ucm_connect cn = {.id = id};
	CHECK(cmd(fd, RDMA_USER_CM_CMD_CONNECT, &cn, sizeof(cn), 0) == EINVAL, "valid 0");
	cn.conn_param.valid = 1;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_CONNECT, &cn, sizeof(cn), 0) == EINVAL, "no route");

	// No event yet: a non-blocking GET_EVENT is EAGAIN, the fd not readable.
	struct rdma_ucm_get_event g;
	struct rdma_ucm_event_resp ev;
	g.response = (uintptr_t)&ev;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)) == EAGAIN, "EAGAIN");
	CHECK(!readable(fd), "readable with nothing pending");
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), 8) == ENOSPC, "event out 8");

	struct rdma_ucm_resolve_ip ri = {.id = id, .timeout_ms = 1000};
	struct sockaddr_in *dst = (struct sockaddr_in *)&ri.dst_addr;
	dst->sin_family = AF_INET;
	dst->sin_port = htons(7000);
	dst->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(cmd(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &ri, sizeof(ri), 0) == 0, "resolve");
	CHECK(readable(fd), "an event pending, the fd not readable");

	// An unwritable answer does not lose the event.
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g.response = (uintptr_t)ro;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)) == EFAULT, "EFAULT");
	g.response = (uintptr_t)&ev;
	memset(&ev, 0, sizeof(ev));
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)) == 0, "get event");
	CHECK(ev.event == 0 /* ADDR_RESOLVED */ && ev.id == id && ev.uid == 1,
	      "event %u id %u uid %llu", ev.event, ev.id, (unsigned long long)ev.uid);
	CHECK(!readable(fd), "readable after the last event");

	// Another rdma_cm file: this file's ID is not its to use.
	int fd2 = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	CHECK(fd2 >= 0, "second open");
	struct rdma_ucm_resolve_route rr = {.id = id, .timeout_ms = 1000};
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0) == EINVAL,
	      "another file's ID");
	struct rdma_ucm_migrate_id m = {.id = id, .fd = 9999};
	struct rdma_ucm_migrate_resp mr;
	m.response = (uintptr_t)&mr;
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(mr)) == ENOENT,
	      "migrate from no fd");
	m.fd = 0;
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(mr)) == EINVAL,
	      "migrate from a file that is not rdma_cm");
	m.fd = fd;
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_MIGRATE_ID, &m, sizeof(m), sizeof(mr)) == 0, "migrate");
	CHECK(mr.events_reported == 1, "events reported %u", mr.events_reported);
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0) == 0,
	      "the ID is the second file's now");
	CHECK(cmd(fd, RDMA_USER_CM_CMD_RESOLVE_ROUTE, &rr, sizeof(rr), 0) == EINVAL,
	      "and no longer the first's");

	// Multicast: a UD ID joins 239.1.2.3 once it has a device.
	struct rdma_ucm_create_id cu = {.uid = 5, .ps = RDMA_PS_UDP, .qp_type = 4};
	struct rdma_ucm_create_id_resp ur = {0};
	cu.response = (uintptr_t)&ur;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &cu, sizeof(cu), sizeof(ur)) == 0, "UD ID");
	uint32_t ud = ur.id;
	struct rdma_ucm_destroy_id lv = {.id = 777};
	struct rdma_ucm_destroy_id_resp lr;
	lv.response = (uintptr_t)&lr;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_LEAVE_MCAST, &lv, sizeof(lv), sizeof(lr)) == ENOENT,
	      "leave a group never joined");
	CHECK(cmd(fd, RDMA_USER_CM_CMD_LEAVE_MCAST, &lv, sizeof(lv), 0) == ENOSPC, "leave out 0");
	struct rdma_ucm_join_ip_mcast j = {.id = ud, .uid = 77};
	struct rdma_ucm_create_id_resp jr = {0};
	struct sockaddr_in *grp = (struct sockaddr_in *)&j.addr;
	grp->sin_family = AF_INET;
	inet_pton(AF_INET, "239.1.2.3", &grp->sin_addr);
	j.response = (uintptr_t)&jr;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), 0) == ENOSPC, "join out 0");
	CHECK(cmd(fd, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), sizeof(jr)) == EINVAL,
	      "join before the ID has a device");
	struct rdma_ucm_join_mcast jm = {.id = ud, .uid = 77, .addr_size = 16, .join_flags = 2};
	memcpy(&jm.addr, grp, sizeof(*grp));
	jm.response = (uintptr_t)&jr;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_JOIN_MCAST, &jm, sizeof(jm), sizeof(jr)) == EINVAL,
	      "join flags 2");
	jm.join_flags = 0;
	jm.addr_size = 28;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_JOIN_MCAST, &jm, sizeof(jm), sizeof(jr)) == EINVAL,
	      "an address size of another family");
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), sizeof(jr)) == EINVAL,
	      "join with another file's ID");
	j.id = id; // fd2's TCP ID, route resolved
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), sizeof(jr)) == EINVAL,
	      "join on a connected-mode ID");
	j.id = ud;
	struct rdma_ucm_resolve_ip ru = {.id = ud, .timeout_ms = 1000};
	memcpy(&ru.dst_addr, grp, sizeof(*grp));
	CHECK(cmd(fd, RDMA_USER_CM_CMD_RESOLVE_IP, &ru, sizeof(ru), 0) == 0, "resolve a group");
	memset(&ev, 0, sizeof(ev));
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)) == 0 &&
		  ev.event == 0 && ev.id == ud,
	      "ADDR_RESOLVED for a group: event %u status %d", ev.event, ev.status);
	CHECK(cmd(fd, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), sizeof(jr)) == 0, "join");
	uint32_t mc1 = jr.id;
	memset(&ev, 0, sizeof(ev));
	CHECK(cmd(fd, RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(ev)) == 0, "join event");
	static const unsigned char mgid[16] = {0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0,
					       0,    0,    0,    0,    0x0f, 0x01, 0x02, 0x03};
	CHECK(ev.event == 12 /* MULTICAST_JOIN */ && ev.uid == 77 && ev.id == ud &&
		  ev.param.ud.qp_num == 0xffffff && ev.param.ud.ah_attr.is_global &&
		  ev.param.ud.ah_attr.dlid >= 0xc000 &&
		  !memcmp(ev.param.ud.ah_attr.grh.dgid, mgid, 16),
	      "MULTICAST_JOIN: event %u uid %llu qpn %x dlid %x", ev.event,
	      (unsigned long long)ev.uid, ev.param.ud.qp_num, ev.param.ud.ah_attr.dlid);
	// A second group left before its event is read: the event goes too.
	inet_pton(AF_INET, "239.1.2.4", &grp->sin_addr);
	CHECK(cmd(fd, RDMA_USER_CM_CMD_JOIN_IP_MCAST, &j, sizeof(j), sizeof(jr)) == 0, "join 2");
	CHECK(readable(fd), "the second join's event");
	lv.id = jr.id;
	CHECK(cmd(fd, RDMA_USER_CM_CMD_LEAVE_MCAST, &lv, sizeof(lv), sizeof(lr)) == 0 &&
		  lr.events_reported == 0,
	      "leave 2: %u reported", lr.events_reported);
	CHECK(!readable(fd), "the left group's event is still queued");
	lv.id = mc1;
	CHECK(cmd(fd2, RDMA_USER_CM_CMD_LEAVE_MCAST, &lv, sizeof(lv), sizeof(lr)) == EINVAL,
	      "leave another file's group");
	CHECK(cmd(fd, RDMA_USER_CM_CMD_LEAVE_MCAST, &lv, sizeof(lv), sizeof(lr)) == 0 &&
		  lr.events_reported == 1,
	      "leave 1: %u reported", lr.events_reported);
	CHECK(cmd(fd, RDMA_USER_CM_CMD_LEAVE_MCAST, &lv, sizeof(lv), sizeof(lr)) == ENOENT,
	      "leave twice");
	CHECK(close(fd) == 0 && close(fd2) == 0, "close");
	if (failures)
		return 1;
	printf("PASS\n");
	return 0;
}
