// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// AF_IB addressing and the path queries through Debian's unmodified
// librdmacm (docs/cm.md, "AF_IB and the path queries"), on one host: a
// server and clients in this one process, 127.0.0.1:PORT.
//
// librdmacm probes AF_IB once (it binds the zero GID in the TCP port
// space); found, it binds and resolves with BIND and RESOLVE_ADDR and
// learns addresses, GIDs and paths with QUERY's ADDR, GID and PATH, as it
// does on Linux.  Checked here, as a program sees it:
//   - an ID binds an AF_IB address (the zero GID, the TCP port space's
//     service ID with port 0): its local address is AF_IB, with a port
//     chosen and every bit of its service ID significant; a service ID of
//     no IP port space is EPROTONOSUPPORT;
//   - an IPv4 client: after ADDR_RESOLVED the GIDs are known (QUERY GID),
//     after ROUTE_RESOLVED one path record with those GIDs, the P_Key
//     0xffff and an MTU (QUERY PATH); the server's ID made from the
//     request has the same path, reversed; connected, disconnected;
//   - an AF_IB client: its destination a GID and a service ID (the
//     IPv4-mapped GID of 127.0.0.1, the TCP port space, PORT) reaches the
//     IPv4 listener; its peer address stays AF_IB; the server rejects it
//     (REJECTED, 28, its private data); and one whose destination is the
//     device's own GID (QUERY GID's, no IP address) reaches it too.
// Prints what it saw; exits 0 when all held.  alarm() bounds the run.
//
//   ucma_af_ib PORT
//
// librdmacm's development header is not needed (rdmacm_decl.h, which
// also holds the checks these programs share).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rdmacm_decl.h"

static int is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void print_gid(const char *what, const uint8_t *g)
{
	char s[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, g, s, sizeof(s));
	printf("%s %s\n", what, s);
}

// A client ID on @ch to @dst, its address and route resolved.
static struct rdma_cm_id *client(struct rdma_event_channel *ch, struct sockaddr *dst)
{
	struct rdma_cm_id *c;
	if (rdma_create_id(ch, &c, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(c, NULL, dst, 2000))
		die("rdma_resolve_addr");
	expect("client", ch, ADDR_RESOLVED, 0);
	if (rdma_resolve_route(c, 2000))
		die("rdma_resolve_route");
	expect("client", ch, ROUTE_RESOLVED, 0);
	return c;
}

// @id's path record: one, with its ID's GIDs (reversed: @rev), the P_Key
// 0xffff and an MTU.
static void check_path(const char *who, struct rdma_cm_id *id, int rev)
{
	char what[160];
	snprintf(what, sizeof(what), "%s: one path record (QUERY PATH): %d", who, id->route.num_paths);
	check(id->route.num_paths == 1 && id->route.path_rec, what);
	if (id->route.num_paths != 1 || !id->route.path_rec)
		return;
	const struct ibv_sa_path_rec *p = id->route.path_rec;
	const struct rdma_ib_addr *a = &id->route.addr.addr.ibaddr;
	snprintf(what, sizeof(what), "%s: the path's GIDs are the ID's", who);
	check(!memcmp(rev ? &p->dgid : &p->sgid, &a->sgid, 16) &&
		      !memcmp(rev ? &p->sgid : &p->dgid, &a->dgid, 16),
	      what);
	snprintf(what, sizeof(what), "%s: P_Key 0x%x, MTU code %u, reversible %d", who, be16toh(p->pkey),
		 p->mtu, p->reversible);
	check(be16toh(p->pkey) == 0xffff && p->mtu >= 1 && p->mtu <= 5 && p->reversible, what);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	signal(SIGALRM, on_alarm);
	alarm(60);
	const uint16_t port = (uint16_t)atoi(argv[1]);
	struct rdma_event_channel *sch = rdma_create_event_channel(), *cch = rdma_create_event_channel();
	if (!sch || !cch)
		die("rdma_create_event_channel");

	// Binding AF_IB addresses.
	struct rdma_cm_id *b;
	if (rdma_create_id(cch, &b, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	struct sockaddr_ib sib;
	memset(&sib, 0, sizeof(sib));
	sib.sib_family = AF_IB;
	sib.sib_sid = htobe64(PS_TCP_SID);
	sib.sib_sid_mask = htobe64(PS_MASK);
	errno = 0;
	int r = rdma_bind_addr(b, (struct sockaddr *)&sib);
	printf("bind AF_IB (zero GID, TCP port space): %d (%s)\n", r, strerror(errno));
	check(r == 0, "an AF_IB address binds");
	if (r == 0) {
		const struct sockaddr_ib *l = (const struct sockaddr_ib *)&b->route.addr.src_addr;
		uint64_t sid = be64toh(l->sib_sid);
		printf("local address: family %d, service ID 0x%016llx, mask 0x%016llx\n", l->sib_family,
		       (unsigned long long)sid, (unsigned long long)be64toh(l->sib_sid_mask));
		check(l->sib_family == AF_IB && (sid & PS_MASK) == PS_TCP_SID && (sid & 0xffff) &&
			      l->sib_sid_mask == ~0ull,
		      "its local address is AF_IB, a port chosen in the TCP port space");
	}
	rdma_destroy_id(b);
	if (rdma_create_id(cch, &b, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	sib.sib_sid = htobe64(0x1234567800000000ull);
	sib.sib_sid_mask = ~0ull;
	errno = 0;
	r = rdma_bind_addr(b, (struct sockaddr *)&sib);
	printf("bind AF_IB (a service ID of no IP port space): %d (%s)\n", r, strerror(errno));
	check(r == -1 && errno == EPROTONOSUPPORT, "a service ID of no IP port space: EPROTONOSUPPORT");
	rdma_destroy_id(b);

	// The listener, on IPv4.
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	struct rdma_cm_id *l;
	if (rdma_create_id(sch, &l, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_bind_addr(l, (struct sockaddr *)&a) || rdma_listen(l, 4))
		die("listen");

	// An IPv4 client: GIDs and a path, connected and disconnected.
	struct rdma_cm_id *c = client(cch, (struct sockaddr *)&a);
	print_gid("client: sgid", c->route.addr.addr.ibaddr.sgid.raw);
	print_gid("client: dgid", c->route.addr.addr.ibaddr.dgid.raw);
	check(!is_zero(c->route.addr.addr.ibaddr.sgid.raw, 16) &&
		      !is_zero(c->route.addr.addr.ibaddr.dgid.raw, 16),
	      "client: GIDs known once the address is resolved (QUERY GID)");
	check(c->route.addr.src_addr.sa_family == AF_INET && c->route.addr.dst_addr.sa_family == AF_INET,
	      "client: its addresses stay IPv4 (QUERY ADDR)");
	check_path("client", c, 0);
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.qp_num = 0x123; // no QP: the CM needs only its number
	if (rdma_connect(c, &p))
		die("rdma_connect");
	struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
	check(n->route.addr.dst_addr.sa_family == AF_INET, "server: the requester's address is IPv4");
	check(!memcmp(&n->route.addr.addr.ibaddr.dgid, &c->route.addr.addr.ibaddr.sgid, 16) &&
		      !memcmp(&n->route.addr.addr.ibaddr.sgid, &c->route.addr.addr.ibaddr.dgid, 16),
	      "server: the GIDs are the client's, reversed");
	check_path("server", n, 0);
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
	uint8_t dev_gid[16];
	memcpy(dev_gid, c->route.addr.addr.ibaddr.sgid.raw, 16);
	rdma_destroy_id(n);
	rdma_destroy_id(c);

	// An AF_IB client: a GID and a service ID for the IPv4 listener.
	memset(&sib, 0, sizeof(sib));
	sib.sib_family = AF_IB;
	sib.sib_addr[10] = sib.sib_addr[11] = 0xff;
	memcpy(sib.sib_addr + 12, &a.sin_addr, 4);
	sib.sib_sid = htobe64(PS_TCP_SID | port);
	sib.sib_sid_mask = ~0ull;
	c = client(cch, (struct sockaddr *)&sib);
	const struct sockaddr_ib *d = (const struct sockaddr_ib *)&c->route.addr.dst_addr;
	check(d->sib_family == AF_IB && be64toh(d->sib_sid) == (PS_TCP_SID | port),
	      "AF_IB client: its peer address stays AF_IB");
	check_path("AF_IB client", c, 0);
	p.qp_num = 0x789;
	if (rdma_connect(c, &p))
		die("rdma_connect");
	n = expect("server", sch, CONNECT_REQUEST, 0);
	if (rdma_reject(n, "no thank", 8))
		die("rdma_reject");
	char priv[8] = {0};
	expect_pd("AF_IB client", cch, REJECTED, 28, priv);
	check(!memcmp(priv, "no thank", 8), "AF_IB client: the server's private data with the REJ");
	rdma_destroy_id(n);
	rdma_destroy_id(c);

	// And to the device's own GID (QUERY GID's above, no IP address):
	// the listener on the loopback address has it.
	memcpy(sib.sib_addr, dev_gid, 16);
	c = client(cch, (struct sockaddr *)&sib);
	if (rdma_connect(c, &p))
		die("rdma_connect");
	n = expect("server", sch, CONNECT_REQUEST, 0);
	check(1, "AF_IB client to the device's GID: its request reached the listener");
	if (rdma_reject(n, NULL, 0))
		die("rdma_reject");
	expect("AF_IB client", cch, REJECTED, 28);
	rdma_destroy_id(n);
	rdma_destroy_id(c);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
	printf(failed ? "FAILED\n" : "ok\n");
	return failed;
}
