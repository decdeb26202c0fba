// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// What the librdmacm test programs of this directory (ucma_*.c) call of
// Debian's unmodified librdmacm, declared here so that its development
// header is not needed: the calls, and the leading members of the
// structures they use, as librdmacm's rdma_cma.h and ib.h have them (their
// ABI, unchanged since librdmacm 1).
#ifndef UABI_TESTS_RDMACM_DECL_H
#define UABI_TESTS_RDMACM_DECL_H

#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#ifndef AF_IB
#define AF_IB 27
#endif

struct rdma_event_channel {
	int fd;
};
struct rdma_ib_addr {
	union ibv_gid sgid;
	union ibv_gid dgid;
	uint16_t pkey; // __be16
};
struct rdma_addr {
	union {
		struct sockaddr src_addr;
		struct sockaddr_storage src_storage;
	};
	union {
		struct sockaddr dst_addr;
		struct sockaddr_storage dst_storage;
	};
	union {
		struct rdma_ib_addr ibaddr;
	} addr;
};
struct rdma_route {
	struct rdma_addr addr;
	struct ibv_sa_path_rec *path_rec;
	int num_paths;
};
struct rdma_cm_id {
	struct ibv_context *verbs;
	struct rdma_event_channel *channel;
	void *context;
	struct ibv_qp *qp;
	struct rdma_route route;
	int ps;
	uint8_t port_num;
};
struct rdma_cm_event {
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	int event; // enum rdma_cm_event_type
	int status;
	struct {
		const void *private_data;
		uint8_t private_data_len;
	} conn;
};
struct rdma_conn_param {
	const void *private_data;
	uint8_t private_data_len;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t flow_control;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t srq;
	uint32_t qp_num;
};
struct sockaddr_ib {
	unsigned short sib_family;
	uint16_t sib_pkey;     // __be16
	uint32_t sib_flowinfo; // __be32
	uint8_t sib_addr[16];
	uint64_t sib_sid;	// __be64
	uint64_t sib_sid_mask; // __be64
	uint64_t sib_scope_id;
};
// enum rdma_cm_event_type's values, the port space, rdma_set_option()'s
enum {
	ADDR_RESOLVED = 0,
	ROUTE_RESOLVED = 2,
	CONNECT_REQUEST = 4,
	CONNECT_RESPONSE = 5,
	UNREACHABLE = 7,
	REJECTED = 8,
	ESTABLISHED = 9,
	DISCONNECTED = 10,
	TIMEWAIT_EXIT = 15,
	RDMA_PS_TCP = 0x0106,
	RDMA_OPTION_ID = 0,
	RDMA_OPTION_ID_TOS = 0,
	RDMA_OPTION_ID_REUSEADDR = 1,
	RDMA_OPTION_ID_AFONLY = 2,
	RDMA_OPTION_ID_ACK_TIMEOUT = 3,
	RDMA_OPTION_IB = 1,
	RDMA_OPTION_IB_PATH = 1,
};
#define PS_TCP_SID 0x0000000001060000ull
#define PS_MASK 0xFFFFFFFFFFFF0000ull

struct rdma_event_channel *rdma_create_event_channel(void);
void rdma_destroy_event_channel(struct rdma_event_channel *channel);
int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context, int ps);
int rdma_destroy_id(struct rdma_cm_id *id);
int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr);
int rdma_listen(struct rdma_cm_id *id, int backlog);
int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int timeout_ms);
int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms);
int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param);
int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param);
int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len);
int rdma_establish(struct rdma_cm_id *id);
int rdma_notify(struct rdma_cm_id *id, int event);
int rdma_disconnect(struct rdma_cm_id *id);
int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event);
int rdma_ack_cm_event(struct rdma_cm_event *event);
int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen);
int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask);

// What the programs share beyond the declarations: checks that print one
// line each, and the wait for an event.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define UCMA_UNUSED __attribute__((unused))

static int failed UCMA_UNUSED;

// Prints "ok: WHAT" or "FAILED: WHAT" (and remembers the failure).
static UCMA_UNUSED void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	fflush(stdout);
	if (!ok)
		failed = 1;
}

static UCMA_UNUSED void die(const char *what)
{
	perror(what);
	exit(1);
}

// SIGALRM's handler: the run's bound (alarm()) passed.
static UCMA_UNUSED void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "timed out waiting for an event\n";
	(void)!write(1, m, sizeof(m) - 1);
	_exit(3);
}

// The next event of @ch, printed; exits unless it is @want with @status.
// Copies its private data (up to 8 bytes) to @priv when given.  Returns
// its ID.
static UCMA_UNUSED struct rdma_cm_id *expect_pd(const char *who, struct rdma_event_channel *ch,
						int want, int status, char *priv)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	struct rdma_cm_id *id = ev->id;
	int e = ev->event, s = ev->status;
	if (priv && ev->conn.private_data)
		memcpy(priv, ev->conn.private_data, 8);
	rdma_ack_cm_event(ev);
	printf("%s: event %d, status %d\n", who, e, s);
	fflush(stdout);
	if (e != want || s != status) {
		printf("%s: wanted event %d, status %d\n", who, want, status);
		exit(1);
	}
	return id;
}

static UCMA_UNUSED struct rdma_cm_id *expect(const char *who, struct rdma_event_channel *ch, int want,
					     int status)
{
	return expect_pd(who, ch, want, status, NULL);
}

#endif
