// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// rdma_set_option() through Debian's unmodified librdmacm (docs/cm.md,
// "Options"), on one host: a server and clients in this one process,
// ports PORT to PORT+4 of the loopback addresses.  Checked here, as a
// program sees it:
//   - the errnos of Linux's ucma: a wrong optlen EINVAL, an unknown option
//     or level ENOSYS, an unreadable value EFAULT;
//   - REUSEADDR: two IDs that both set it bind one address and port, a
//     third that did not gets EADDRINUSE, a listener keeps its port to
//     itself (EADDRINUSE while another holds it) and cannot set it;
//   - AFONLY: an IPv6 wildcard listener that keeps to IPv6 refuses an
//     IPv4 client (REJECTED, 8) and takes an IPv6 one; without the option
//     it takes IPv4 too (Linux's bindv6only default), and an IPv4 wildcard
//     takes no IPv6 client; set on a listener: EINVAL;
//   - ACK_TIMEOUT: the timeout rdma_init_qp_attr() gives the QP at RTS on
//     the side that set it, the other side keeping its own; a UD ID's:
//     EINVAL; TOS: taken.
// Prints what it saw; exits 0 when all held.  alarm() bounds the run.
//
//   ucma_options PORT
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmacm_decl.h"

enum { RDMA_PS_UDP = 0x0111 };

// rdma_set_option()'s answer: 0 or the errno.
static int opt(struct rdma_cm_id *id, int level, int name, void *val, size_t len)
{
	errno = 0;
	return rdma_set_option(id, level, name, val, len) ? errno : 0;
}

static int set_int(struct rdma_cm_id *id, int name, int v)
{
	return opt(id, RDMA_OPTION_ID, name, &v, sizeof(v));
}

static struct rdma_cm_id *new_id(struct rdma_event_channel *ch, int ps)
{
	struct rdma_cm_id *id;
	if (rdma_create_id(ch, &id, NULL, ps))
		die("rdma_create_id");
	return id;
}

static struct sockaddr_storage addr(const char *ip, uint16_t port)
{
	struct sockaddr_storage s;
	memset(&s, 0, sizeof(s));
	if (strchr(ip, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&s;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&s;
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		inet_pton(AF_INET, ip, &a->sin_addr);
	}
	return s;
}

static int bind_to(struct rdma_cm_id *id, const char *ip, uint16_t port)
{
	struct sockaddr_storage s = addr(ip, port);
	errno = 0;
	return rdma_bind_addr(id, (struct sockaddr *)&s) ? errno : 0;
}

static struct rdma_cm_id *listener(struct rdma_event_channel *ch, const char *ip, uint16_t port,
				   int afonly)
{
	struct rdma_cm_id *l = new_id(ch, RDMA_PS_TCP);
	if (afonly >= 0 && set_int(l, RDMA_OPTION_ID_AFONLY, afonly))
		die("AFONLY");
	if (bind_to(l, ip, port) || rdma_listen(l, 4))
		die("listen");
	return l;
}

// A client of @ch that connects to @ip:@port (no QP: the CM needs only its
// number), with an ACK timeout when @ack_timeout is not negative.
static struct rdma_cm_id *connect_to(struct rdma_event_channel *ch, const char *ip, uint16_t port,
				     int ack_timeout)
{
	struct rdma_cm_id *c = new_id(ch, RDMA_PS_TCP);
	struct sockaddr_storage d = addr(ip, port);
	if (rdma_resolve_addr(c, NULL, (struct sockaddr *)&d, 2000))
		die("rdma_resolve_addr");
	expect("client", ch, ADDR_RESOLVED, 0);
	if (rdma_resolve_route(c, 2000))
		die("rdma_resolve_route");
	expect("client", ch, ROUTE_RESOLVED, 0);
	if (ack_timeout >= 0) {
		uint8_t t = (uint8_t)ack_timeout, tos = 0x60;
		if (opt(c, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, 1) ||
		    opt(c, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, 1))
			die("ACK_TIMEOUT, TOS");
	}
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.qp_num = 0x321;
	if (rdma_connect(c, &p))
		die("rdma_connect");
	return c;
}

// The timeout rdma_init_qp_attr() gives @id's QP at RTS (-1: none).
static int rts_timeout(struct rdma_cm_id *id)
{
	struct ibv_qp_attr a;
	int mask = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(id, &a, &mask))
		die("rdma_init_qp_attr");
	return (mask & IBV_QP_TIMEOUT) ? a.timeout : -1;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	signal(SIGALRM, on_alarm);
	alarm(20);
	const uint16_t port = (uint16_t)atoi(argv[1]);
	struct rdma_event_channel *sch = rdma_create_event_channel(), *cch = rdma_create_event_channel();
	if (!sch || !cch)
		die("rdma_create_event_channel");
	char what[160];

	// The errnos of bad input.
	struct rdma_cm_id *id = new_id(cch, RDMA_PS_TCP);
	uint8_t u8 = 3;
	int i = 1, e;
	e = opt(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &i, sizeof(i));
	snprintf(what, sizeof(what), "TOS of 4 bytes: %s", strerror(e));
	check(e == EINVAL, what);
	e = opt(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &i, sizeof(i));
	snprintf(what, sizeof(what), "ACK_TIMEOUT of 4 bytes: %s", strerror(e));
	check(e == EINVAL, what);
	e = opt(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &u8, 1);
	snprintf(what, sizeof(what), "REUSEADDR of 1 byte: %s", strerror(e));
	check(e == EINVAL, what);
	e = opt(id, RDMA_OPTION_ID, 42, &i, sizeof(i));
	snprintf(what, sizeof(what), "an unknown option: %s", strerror(e));
	check(e == ENOSYS, what);
	e = opt(id, 99, RDMA_OPTION_ID_TOS, &u8, 1);
	snprintf(what, sizeof(what), "an unknown level: %s", strerror(e));
	check(e == ENOSYS, what);
	e = opt(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, NULL, 1);
	snprintf(what, sizeof(what), "a value at NULL: %s", strerror(e));
	check(e == EFAULT, what);
	e = opt(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &u8, 1);
	snprintf(what, sizeof(what), "TOS: %s", strerror(e));
	check(e == 0, what);
	rdma_destroy_id(id);
	id = new_id(cch, RDMA_PS_UDP);
	e = opt(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &u8, 1);
	snprintf(what, sizeof(what), "ACK_TIMEOUT of a UD ID: %s", strerror(e));
	check(e == EINVAL, what);
	rdma_destroy_id(id);

	// REUSEADDR.
	struct rdma_cm_id *r1 = new_id(sch, RDMA_PS_TCP), *r2 = new_id(sch, RDMA_PS_TCP),
			  *r3 = new_id(sch, RDMA_PS_TCP);
	if (set_int(r1, RDMA_OPTION_ID_REUSEADDR, 1) || set_int(r2, RDMA_OPTION_ID_REUSEADDR, 1))
		die("REUSEADDR");
	if (bind_to(r1, "127.0.0.1", port))
		die("bind");
	e = bind_to(r2, "127.0.0.1", port);
	snprintf(what, sizeof(what), "REUSEADDR: a second ID that set it binds the port: %s", strerror(e));
	check(e == 0, what);
	e = bind_to(r3, "127.0.0.1", port);
	snprintf(what, sizeof(what), "REUSEADDR: a third that did not: %s", strerror(e));
	check(e == EADDRINUSE, what);
	errno = 0;
	e = rdma_listen(r1, 4) ? errno : 0;
	snprintf(what, sizeof(what), "REUSEADDR: listening while another holds the port: %s",
		 strerror(e));
	check(e == EADDRINUSE, what);
	rdma_destroy_id(r2);
	errno = 0;
	e = rdma_listen(r1, 4) ? errno : 0;
	snprintf(what, sizeof(what), "REUSEADDR: listening once it is alone: %s", strerror(e));
	check(e == 0, what);
	e = set_int(r1, RDMA_OPTION_ID_REUSEADDR, 1);
	snprintf(what, sizeof(what), "REUSEADDR on a listener: %s", strerror(e));
	check(e == EINVAL, what);
	e = set_int(r1, RDMA_OPTION_ID_AFONLY, 1);
	snprintf(what, sizeof(what), "AFONLY on a listener: %s", strerror(e));
	check(e == EINVAL, what);
	rdma_destroy_id(r1);
	rdma_destroy_id(r3);

	// AFONLY.
	struct rdma_cm_id *l6 = listener(sch, "::", port + 1, 1);
	struct rdma_cm_id *c = connect_to(cch, "127.0.0.1", port + 1, -1);
	expect("IPv4 client of an IPv6-only listener", cch, REJECTED, 8);
	check(1, "AFONLY: an IPv6-only wildcard refuses an IPv4 client (REJECTED 8)");
	rdma_destroy_id(c);
	c = connect_to(cch, "::1", port + 1, -1);
	struct rdma_cm_id *n = expect("server", sch, CONNECT_REQUEST, 0);
	check(1, "AFONLY: an IPv6-only wildcard takes an IPv6 client");
	if (rdma_reject(n, NULL, 0))
		die("rdma_reject");
	expect("IPv6 client", cch, REJECTED, 28);
	rdma_destroy_id(n);
	rdma_destroy_id(c);
	rdma_destroy_id(l6);
	struct rdma_cm_id *l4 = listener(sch, "0.0.0.0", port + 2, -1);
	c = connect_to(cch, "::1", port + 2, -1);
	expect("IPv6 client of an IPv4 wildcard", cch, REJECTED, 8);
	check(1, "an IPv4 wildcard refuses an IPv6 client (REJECTED 8)");
	rdma_destroy_id(c);
	rdma_destroy_id(l4);

	// An IPv6 wildcard as it comes takes an IPv4 client; that client's
	// ACK timeout (and TOS) set before it connects.
	struct rdma_cm_id *lb = listener(sch, "::", port + 3, -1);
	c = connect_to(cch, "127.0.0.1", port + 3, 17);
	n = expect("server", sch, CONNECT_REQUEST, 0);
	check(1, "an IPv6 wildcard takes an IPv4 client by default");
	struct rdma_conn_param p;
	memset(&p, 0, sizeof(p));
	p.qp_num = 0x654;
	if (rdma_accept(n, &p))
		die("rdma_accept");
	expect("client", cch, CONNECT_RESPONSE, 0);
	int ct = rts_timeout(c), st = rts_timeout(n);
	snprintf(what, sizeof(what), "ACK_TIMEOUT: the client's QP is given %d at RTS (it set 17)", ct);
	check(ct == 17, what);
	snprintf(what, sizeof(what), "ACK_TIMEOUT: the server's QP keeps its own, %d", st);
	check(st >= 0 && st != 17, what);
	if (rdma_establish(c))
		die("rdma_establish");
	expect("server", sch, ESTABLISHED, 0);
	if (rdma_disconnect(c))
		die("rdma_disconnect");
	expect("client", cch, DISCONNECTED, 0);
	expect("server", sch, DISCONNECTED, 0);
	rdma_destroy_id(n);
	rdma_destroy_id(c);
	rdma_destroy_id(lb);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
	printf(failed ? "FAILED\n" : "ok\n");
	return failed;
}
