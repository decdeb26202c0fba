// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The connection manager across hosts: CM MADs on QP1 of a RoCE device
 * (docs/cm.md, "Across hosts").  A CM ID resolved to an address of
 * another host goes through the RoCE device whose GID table holds the
 * source address; CONNECT then sends a REQ to QP1 of the destination, and
 * the peer is the CM of that host (Linux's ib_cm and rdma_cm, or another
 * core):
 *
 *   active                     wire                passive
 *   CONNECT               ---- REQ ---->   CONNECT_REQUEST on the listener
 *   CONNECT_RESPONSE      <--- REP -----   ACCEPT
 *   ACCEPT                ---- RTU ---->   ESTABLISHED
 *   DISCONNECT            ---- DREQ --->   DISCONNECTED
 *   DISCONNECTED          <--- DREP ----
 *
 * REJ carries REJECT and the refusals; an MRA from the peer stretches the
 * wait for its REP.  A REQ, REP or DREQ waits for its answer the CM
 * response timeout (4.096 us * 2^t) and is sent again up to its retries;
 * then the handshake is given up (UNREACHABLE, -ETIMEDOUT; a DREQ:
 * DISCONNECTED).  The host moves the MADs and runs one timer for all
 * (struct uabi_cm_wire_ops).
 *
 * Layouts: the MAD common header (IBTA vol. 1, 13.4), the CM messages
 * (IBTA vol. 1, 12.6), and the private-data header the RDMA CM puts in
 * front of a REQ's private data (the IP addresses and the source port;
 * the IBTA's RDMA IP CM Service annex, as Linux's rdma_cm sends it).  All
 * fields big-endian; offsets below are from the start of the MAD.
 *
 * Every byte that comes in is untrusted: a MAD is taken only when its
 * header, attribute and communication IDs name a state that expects it;
 * anything else is counted (dropped) and changes nothing.
 */
#include "cm.h"

#define MAD_HDR 24			/* the common MAD header */
#define MAD_BASE_VERSION 1
#define MGMT_CLASS_CM 0x07
#define CM_CLASS_VERSION 2
#define MAD_METHOD_SEND 0x03

/* CM attribute IDs (IBTA vol. 1, 12.6) */
#define CM_ATTR_REQ 0x0010
#define CM_ATTR_MRA 0x0011
#define CM_ATTR_REJ 0x0012
#define CM_ATTR_REP 0x0013
#define CM_ATTR_RTU 0x0014
#define CM_ATTR_DREQ 0x0015
#define CM_ATTR_DREP 0x0016
#define CM_ATTR_SIDR_REQ 0x0017
#define CM_ATTR_SIDR_REP 0x0018

/* Byte @x of a CM message body, as an offset into the MAD. */
#define B(x) (MAD_HDR + (x))

/* REQ */
#define REQ_LOCAL_COMM_ID B(0)
#define REQ_SERVICE_ID B(8)
#define REQ_LOCAL_CA_GUID B(16)
#define REQ_LOCAL_QPN B(32)		/* 24 bits; responder resources in B(35) */
#define REQ_RESP_RES B(35)
#define REQ_INIT_DEPTH B(39)		/* after the local EECN */
#define REQ_B43 B(43)			/* remote CM resp. timeout:5, transport:2, e2e FC:1 */
#define REQ_PSN B(44)			/* 24 bits */
#define REQ_B47 B(47)			/* local CM resp. timeout:5, retry count:3 */
#define REQ_PKEY B(48)
#define REQ_B50 B(50)			/* path MTU:4, RDC exists:1, RNR retry count:3 */
#define REQ_B51 B(51)			/* max CM retries:4, SRQ:1, ext. transport:3 */
/* XRC in a REQ: transport service type 3, extended transport type 1
 * (IBTA vol. 1, 12.6.5; as Linux's ib_cm sends it for an XRC initiator). */
#define CM_TRANSPORT_UC 1
#define CM_TRANSPORT_XRC 3
#define CM_EXT_TRANSPORT_XRC 1
#define REQ_LOCAL_LID B(52)
#define REQ_REMOTE_LID B(54)
#define REQ_LOCAL_GID B(56)
#define REQ_REMOTE_GID B(72)
#define REQ_RATE B(91)			/* low 6 bits (flow label:20 before) */
#define REQ_TCLASS B(92)
#define REQ_HOP_LIMIT B(93)
#define REQ_B94 B(94)			/* SL:4, subnet local:1 */
#define REQ_B95 B(95)			/* local ACK timeout:5 */
#define REQ_PRIVATE B(140)
#define REQ_PRIVATE_LEN 92

/* REP */
#define REP_LOCAL_COMM_ID B(0)
#define REP_REMOTE_COMM_ID B(4)
#define REP_LOCAL_QPN B(12)
#define REP_LOCAL_EECN B(16)		/* 24 bits: an XRC target's QPN */
#define REP_PSN B(20)
#define REP_RESP_RES B(24)
#define REP_INIT_DEPTH B(25)
#define REP_B26 B(26)			/* target ACK delay:5, failover:2, e2e FC:1 */
#define REP_B27 B(27)			/* RNR retry count:3, SRQ:1 */
#define REP_LOCAL_CA_GUID B(28)
#define REP_PRIVATE B(36)
#define REP_PRIVATE_LEN 196

/* REJ, MRA, RTU, DREQ, DREP */
#define MSG_LOCAL_COMM_ID B(0)
#define MSG_REMOTE_COMM_ID B(4)
#define REJ_B8 B(8)			/* message rejected:2 */
#define REJ_B9 B(9)			/* reject info length:7 */
#define REJ_REASON B(10)
#define REJ_ARI B(12)
#define REJ_PRIVATE B(84)
#define REJ_PRIVATE_LEN 148
#define MRA_B8 B(8)			/* message MRAed:2 */
#define MRA_B9 B(9)			/* service timeout:5 */
#define DREQ_REMOTE_QPN B(8)

/* SIDR REQ and SIDR REP (UD: service ID resolution) */
#define SIDR_REQ_ID B(0)
#define SIDR_REQ_PKEY B(4)
#define SIDR_REQ_SERVICE_ID B(8)
#define SIDR_REQ_PRIVATE B(16)
#define SIDR_REQ_PRIVATE_LEN 216
#define SIDR_REP_ID B(0)
#define SIDR_REP_STATUS B(4)
#define SIDR_REP_QPN B(8)
#define SIDR_REP_SERVICE_ID B(12)
#define SIDR_REP_QKEY B(20)
#define SIDR_REP_PRIVATE B(96)
#define SIDR_REP_PRIVATE_LEN 136
#define SIDR_OK 0
#define SIDR_UNSUPPORTED 1		/* no such service (no listener) */
#define SIDR_REJECT 2
/* What a UD event carries of private data (struct rdma_ucm_ud_param's). */
#define UD_EVENT_PRIVATE_LEN 136

/* "message rejected" / "message MRAed" */
#define CM_MSG_REQ 0
#define CM_MSG_REP 1
#define CM_MSG_OTHER 2

/* The RDMA CM's private-data header in a REQ: version, IP version in the
 * high nibble, the source port, then the source and destination
 * addresses, 16 bytes each (IPv4: in the last four, zeros before). */
#define CMA_HDR_LEN 36
#define CMA_VERSION 0x00

/* The RDMA CM's service IDs: the IP port-space prefix, the port space,
 * the port (ps << 16 | port, the port space already carrying 0x01). */
#define CMA_SID_MASK 0xffffffffff000000ull
#define CMA_SID_PREFIX 0x0000000001000000ull

#define CM_QP1_HOP_LIMIT 64
#define CM_LOCAL_ACK_TIMEOUT 18		/* the REQ's: 1.07 s, what a TCG guest needs */
#define CM_TARGET_ACK_DELAY 15
#define CM_RATE_10G 3

static const struct uabi_cm_wire_ops *wire_ops;
static struct uabi_cm_wire_stats stats;
static u32 next_comm_id = 0x5a1c0000;
static u8 cm_timeout = 20;		/* Linux's rdma_cm: 4.3 s */
static u8 cm_retries = 15;
static u8 mra_timeout = 24;		/* Linux's rdma_cm (CMA_CM_MRA_SETTING): 68.7 s */
/* The time-wait: Linux's ib_cm waits its path's ACK timeout, converted to
 * ms as 2^(t - 8); for RoCE t is 17 (packet life time 16, plus one),
 * so 512 ms. */
#define CM_TIMEWAIT_NS (512ull * 1000000)

void uabi_cm_wire_register(const struct uabi_cm_wire_ops *ops)
{
	wire_ops = ops;
}

/* The module's writable parameters may change these while connections
 * are made: each is one byte, written and read whole (READ_ONCE); a REQ
 * reads them once for itself and its waits. */
void uabi_cm_wire_set_timeouts(unsigned int timeout, unsigned int retries)
{
	WRITE_ONCE(cm_timeout, timeout > 31 ? 31 : (u8)timeout);
	WRITE_ONCE(cm_retries, retries > 15 ? 15 : (u8)retries);
}

void uabi_cm_wire_set_mra_timeout(unsigned int timeout)
{
	WRITE_ONCE(mra_timeout, timeout > 31 ? 31 : (u8)timeout);
}

/* ------------------------------------------------------------ bytes */
static void put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void put24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)(v >> 16));
	put16(p + 2, (u16)v);
}

static void put64(u8 *p, u64 v)
{
	put32(p, (u32)(v >> 32));
	put32(p + 4, (u32)v);
}

static u16 get16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static u32 get24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static u32 get32(const u8 *p)
{
	return (u32)get16(p) << 16 | get16(p + 2);
}

static u64 get64(const u8 *p)
{
	return (u64)get32(p) << 32 | get32(p + 4);
}

/* 4.096 us * 2^t, in ns */
static u64 cm_time_ns(u8 t)
{
	return 4096ull << (t > 31 ? 31 : t);
}

/* ------------------------------------------------------- addresses */
static struct uabi_device *cm_dev(void)
{
	return uabi_device_get(0);
}

static struct uabi_device *link_of(u32 link_dev)
{
	return link_dev ? uabi_device_get(link_dev - 1) : NULL;
}

struct uabi_device *cm_wire_link(const struct uabi_cm_id *id)
{
	return link_of(id->link_dev);
}

/* The GID of an IP address: IPv6 as it is, IPv4 mapped (::ffff:a.b.c.d). */
static bool addr_gid(const struct uabi_cm_addr *a, u8 *gid)
{
	u32 len, off = cm_addr_ip(a, &len);

	memset(gid, 0, 16);
	if (len == 4) {
		gid[10] = 0xff;
		gid[11] = 0xff;
		memcpy(gid + 12, a->bytes + off, 4);
	} else if (len == 16) {
		memcpy(gid, a->bytes + off, 16);
	} else {
		return false;
	}
	return true;
}

/* An address from the RDMA CM header's 16 bytes and a port. */
static void cma_addr(struct uabi_cm_addr *a, bool v4, const u8 *ip, u16 port)
{
	u16 f = v4 ? UABI_CM_AF_INET : UABI_CM_AF_INET6;

	memset(a, 0, sizeof(*a));
	memcpy(a->bytes, &f, sizeof(f));
	cm_addr_set_port(a, port);
	if (v4)
		memcpy(a->bytes + 4, ip + 12, 4);
	else
		memcpy(a->bytes + 8, ip, 16);
}

/* Which entry of @link's GID table is @gid (-1: none); only RoCE
 * (Ethernet) devices are links. */
static int link_gid_index(struct uabi_device *link, const u8 *gid)
{
	struct uabi_port_attr pa;
	u8 g[16];
	u32 i;

	memset(&pa, 0, sizeof(pa));
	if (!link->ops->query_gid || link->ops->query_port(link, 1, &pa) ||
	    pa.link_layer != UABI_LINK_LAYER_ETHERNET)
		return -1;
	for (i = 0; i < 16; i++)
		if (!link->ops->query_gid(link, 1, i, g) && !memcmp(g, gid, 16))
			return (int)i;
	return -1;
}

static u8 link_mtu(struct uabi_device *link)
{
	struct uabi_port_attr pa;

	memset(&pa, 0, sizeof(pa));
	if (link->ops->query_port(link, 1, &pa) || !pa.active_mtu)
		return UABI_MTU_1024;
	return (u8)pa.active_mtu;
}

/* RESOLVE_ADDR to an address of another host, from @src (an address of
 * this one, the route's source): the RoCE device that has @src.  (A bind
 * has no destination yet: its dgid stays zero.) */
int cm_wire_resolve(struct uabi_cm_id *id, const struct uabi_cm_addr *src)
{
	u8 sgid[16];
	u32 i;

	if (!wire_ops || !addr_gid(src, sgid))
		return -ENODEV;
	memset(id->dgid, 0, sizeof(id->dgid));
	if (cm_addr_family(&id->dst) && !addr_gid(&id->dst, id->dgid))
		return -ENODEV;
	for (i = 0; i < 4; i++) {
		struct uabi_device *link = uabi_device_get(i);
		int idx;

		if (!link)
			continue;
		idx = link_gid_index(link, sgid);
		if (idx < 0)
			continue;
		id->link_dev = i + 1;
		id->gid_index = (u8)idx;
		memcpy(id->sgid, sgid, 16);
		id->mtu = link_mtu(link);
		return 0;
	}
	return -ENODEV;
}

/* ------------------------------------------------------------ sending */
static void mad_init(u8 *m, u16 attr, u64 tid)
{
	memset(m, 0, UABI_CM_MAD_SIZE);
	m[0] = MAD_BASE_VERSION;
	m[1] = MGMT_CLASS_CM;
	m[2] = CM_CLASS_VERSION;
	m[3] = MAD_METHOD_SEND;
	put64(m + 8, tid);
	put16(m + 16, attr);
}

/* @tclass: the traffic class of the datagram, as Linux's CM sends on the
 * path's (the TOS the consumer set, or the REQ's on the passive side). */
static void wire_send(u32 link_dev, const u8 *sgid, const u8 *dgid, u8 tclass, const u8 *m)
{
	if (!wire_ops || !link_dev)
		return;
	stats.sent++;
	wire_ops->send(link_dev - 1, sgid, dgid, tclass, m, UABI_CM_MAD_SIZE);
}

static void id_send(struct uabi_cm_id *id)
{
	wire_send(id->link_dev, id->sgid, id->dgid, id->tos, id->mad);
}

static u32 new_comm_id(void)
{
	next_comm_id = next_comm_id * 1664525u + 1013904223u;
	return next_comm_id ? next_comm_id : 1;
}

/* Asks the host for a timer at the earliest deadline of any ID. */
static void rearm(struct uabi_device *dev)
{
	struct uabi_cm_id *id;
	u64 first = 0, now;

	if (!wire_ops || !dev)
		return;
	list_for_each_entry(id, &dev->cm_ids, dev_node) {
		if (id->deadline && (!first || id->deadline < first))
			first = id->deadline;
		if (id->timewait && (!first || id->timewait < first))
			first = id->timewait;
	}
	if (!first) {
		wire_ops->arm(0);
		return;
	}
	now = ktime_get_ns();
	wire_ops->arm(first > now ? first - now : 1);
}

/* Sends the MAD in id->mad and waits @wait for its answer. */
static void send_and_wait(struct uabi_cm_id *id, u8 wait, u8 t, u8 retries)
{
	id->wait = wait;
	id->retry_ns = cm_time_ns(t);
	id->retries_left = retries;
	id->deadline = ktime_get_ns() + id->retry_ns;
	id_send(id);
	rearm(cm_dev());
}

static void stop_wait(struct uabi_cm_id *id)
{
	id->wait = CM_WAIT_NONE;
	id->deadline = 0;
}

/* A REJ (into a buffer of its own: id->mad may hold what is waited for). */
static void send_rej(u32 link_dev, const u8 *sgid, const u8 *dgid, u8 tclass, u64 tid,
		     u32 local_id, u32 remote_id, u8 msg, u16 reason, const u8 *priv,
		     u32 priv_len)
{
	struct uabi_device *link = link_of(link_dev);
	u8 m[UABI_CM_MAD_SIZE];

	mad_init(m, CM_ATTR_REJ, tid);
	put32(m + MSG_LOCAL_COMM_ID, local_id);
	put32(m + MSG_REMOTE_COMM_ID, remote_id);
	m[REJ_B8] = (u8)(msg << 6);
	if (reason == UABI_CM_REJ_TIMEOUT && link) {
		/* "timeout": the ARI is the rejecting CA's GUID */
		m[REJ_B9] = 8 << 1;
		put64(m + REJ_ARI, link->attr.node_guid);
	}
	put16(m + REJ_REASON, reason);
	if (priv && priv_len)
		memcpy(m + REJ_PRIVATE, priv, min_t(u32, priv_len, REJ_PRIVATE_LEN));
	wire_send(link_dev, sgid, dgid, tclass, m);
}

static void id_send_rej(struct uabi_cm_id *id, u8 msg, u16 reason, const u8 *priv, u32 len)
{
	send_rej(id->link_dev, id->sgid, id->dgid, id->tos, id->tid, id->local_comm_id,
		 id->remote_comm_id, msg, reason, priv, len);
}

/* An MRA: the message @msg (CM_MSG_REQ, _REP) was received and its
 * answer will take up to our MRA timeout, so that the peer waits instead
 * of timing out (as Linux's rdma_cm asks for a request or reply its
 * consumer has not answered yet, when it comes again). */
static void send_mra(u32 link_dev, const u8 *sgid, const u8 *dgid, u8 tclass, u64 tid,
		     u32 local_id, u32 remote_id, u8 msg)
{
	u8 m[UABI_CM_MAD_SIZE];

	mad_init(m, CM_ATTR_MRA, tid);
	put32(m + MSG_LOCAL_COMM_ID, local_id);
	put32(m + MSG_REMOTE_COMM_ID, remote_id);
	m[MRA_B8] = (u8)(msg << 6);
	m[MRA_B9] = (u8)(READ_ONCE(mra_timeout) << 3);
	wire_send(link_dev, sgid, dgid, tclass, m);
}

/* The RDMA CM header of @id's addresses at @h. */
static void put_cma_hdr(const struct uabi_cm_id *id, u8 *h)
{
	u32 len, off;

	h[0] = CMA_VERSION;
	h[1] = cm_addr_family(&id->src) == UABI_CM_AF_INET ? 4 << 4 : 6 << 4;
	put16(h + 2, cm_addr_port(&id->src));
	off = cm_addr_ip(&id->src, &len);
	memcpy(h + 4 + 16 - len, id->src.bytes + off, len);
	off = cm_addr_ip(&id->dst, &len);
	memcpy(h + 20 + 16 - len, id->dst.bytes + off, len);
}

/* The address handle a UD event gives to reach the peer over the link. */
static void set_ud_ah(struct cm_event_node *n, const u8 *dgid, u8 gid_index)
{
	memset(&n->ev.ah, 0, sizeof(n->ev.ah));
	n->ev.ah.is_global = 1;
	memcpy(n->ev.ah.grh.dgid, dgid, 16);
	n->ev.ah.grh.sgid_index = gid_index;
	n->ev.ah.grh.hop_limit = CM_WIRE_HOP_LIMIT;
	n->ev.ah.port_num = 1;
}

/* CONNECT of a UD ID through a link: the SIDR REQ. */
static int sidr_connect(struct uabi_cm_id *id, const struct uabi_cm_conn_param *c)
{
	u8 *m = id->mad;

	if (c->private_data_len > SIDR_REQ_PRIVATE_LEN - CMA_HDR_LEN)
		return -EINVAL;
	id->remote = true;
	id->local_comm_id = new_comm_id();
	id->remote_comm_id = 0;
	id->tid = (u64)id->local_comm_id << 32 | 3;
	mad_init(m, CM_ATTR_SIDR_REQ, id->tid);
	put32(m + SIDR_REQ_ID, id->local_comm_id);
	put16(m + SIDR_REQ_PKEY, 0xffff);
	put64(m + SIDR_REQ_SERVICE_ID, (u64)id->ps << 16 | cm_addr_port(&id->dst));
	put_cma_hdr(id, m + SIDR_REQ_PRIVATE);
	memcpy(m + SIDR_REQ_PRIVATE + CMA_HDR_LEN, c->private_data, c->private_data_len);
	send_and_wait(id, CM_WAIT_SIDR_REP, READ_ONCE(cm_timeout), READ_ONCE(cm_retries));
	return 0;
}

/* A SIDR REP with @status (and, when 0, our QPN and Q_Key). */
static void send_sidr_rep(struct uabi_cm_id *id, u8 status, u32 qpn, u32 qkey,
			  const u8 *priv, u32 priv_len)
{
	u8 m[UABI_CM_MAD_SIZE];

	mad_init(m, CM_ATTR_SIDR_REP, id->tid);
	put32(m + SIDR_REP_ID, id->remote_comm_id);
	m[SIDR_REP_STATUS] = status;
	put24(m + SIDR_REP_QPN, qpn);
	put64(m + SIDR_REP_SERVICE_ID, (u64)id->ps << 16 | cm_addr_port(&id->src));
	put32(m + SIDR_REP_QKEY, qkey);
	if (priv && priv_len)
		memcpy(m + SIDR_REP_PRIVATE, priv, min_t(u32, priv_len, SIDR_REP_PRIVATE_LEN));
	wire_send(id->link_dev, id->sgid, id->dgid, id->tos, m);
}

/* CONNECT through a link: the REQ. */
int cm_wire_connect(struct uabi_cm_id *id, const struct uabi_cm_conn_param *c)
{
	struct uabi_device *link = link_of(id->link_dev);
	u8 *m = id->mad;

	if (!link || !wire_ops)
		return -ENODEV;
	if (id->qp_type == UABI_QPT_UD)
		return sidr_connect(id, c);
	/* RC, UC, and XRC from its initiator (XRC_SEND) to a target */
	if (id->qp_type != UABI_QPT_RC && id->qp_type != UABI_QPT_UC &&
	    id->qp_type != UABI_QPT_XRC_SEND)
		return -EOPNOTSUPP;
	if (c->private_data_len > REQ_PRIVATE_LEN - CMA_HDR_LEN)
		return -EINVAL;
	id->remote = true;
	id->local_comm_id = new_comm_id();
	id->remote_comm_id = 0;
	id->tid = (u64)id->local_comm_id << 32 | 1;
	/* Read once: the REQ and its waits use the same values. */
	id->peer_cm_timeout = READ_ONCE(cm_timeout);
	id->max_cm_retries = READ_ONCE(cm_retries);
	mad_init(m, CM_ATTR_REQ, id->tid);
	put32(m + REQ_LOCAL_COMM_ID, id->local_comm_id);
	put64(m + REQ_SERVICE_ID, (u64)id->ps << 16 | cm_addr_port(&id->dst));
	put64(m + REQ_LOCAL_CA_GUID, link->attr.node_guid);
	put24(m + REQ_LOCAL_QPN, id->qpn);
	m[REQ_RESP_RES] = id->responder_resources;
	m[REQ_INIT_DEPTH] = id->initiator_depth;
	m[REQ_B43] = (u8)(id->peer_cm_timeout << 3 |
			  (id->qp_type == UABI_QPT_UC	      ? CM_TRANSPORT_UC
			   : id->qp_type == UABI_QPT_XRC_SEND ? CM_TRANSPORT_XRC
							      : 0) << 1 |
			  (c->flow_control ? 1 : 0));
	/* The starting PSN a REQ or REP carries is the one its sender
	 * receives at (the peer's first send), as Linux's ib_cm reads it:
	 * we choose the PSN the peer sends with; the REP tells ours. */
	id->peer_psn = cm_psn(id->qpn ^ 0x5a5a5a);
	put24(m + REQ_PSN, id->peer_psn);
	m[REQ_B47] = (u8)(id->peer_cm_timeout << 3 | (id->retry_count & 7));
	put16(m + REQ_PKEY, 0xffff);
	m[REQ_B50] = (u8)(id->mtu << 4 | (id->rnr_retry_count & 7));
	m[REQ_B51] = (u8)(id->max_cm_retries << 4 | (c->srq ? 1 : 0) << 3 |
			  (id->qp_type == UABI_QPT_XRC_SEND ? CM_EXT_TRANSPORT_XRC : 0));
	/* RoCE: no LIDs (the permissive LID, as Linux sends a routed path) */
	put16(m + REQ_LOCAL_LID, 0xffff);
	put16(m + REQ_REMOTE_LID, 0xffff);
	memcpy(m + REQ_LOCAL_GID, id->sgid, 16);
	memcpy(m + REQ_REMOTE_GID, id->dgid, 16);
	m[REQ_RATE] = CM_RATE_10G;
	m[REQ_HOP_LIMIT] = CM_QP1_HOP_LIMIT;
	m[REQ_TCLASS] = id->tos;	/* SET_OPTION's TOS, else 0 (the path's) */
	m[REQ_B95] = CM_LOCAL_ACK_TIMEOUT << 3;
	/* The RDMA CM header, then the caller's private data. */
	put_cma_hdr(id, m + REQ_PRIVATE);
	memcpy(m + REQ_PRIVATE + CMA_HDR_LEN, c->private_data, c->private_data_len);
	send_and_wait(id, CM_WAIT_REP, id->peer_cm_timeout, id->max_cm_retries);
	return 0;
}

/* ACCEPT of a remote ID: the REP (passive) or the RTU (active). */
int cm_wire_accept(struct uabi_cm_id *id, const struct uabi_cm_conn_param *c)
{
	struct uabi_device *link = link_of(id->link_dev);
	u8 *m = id->mad;

	if (!link)
		return -ENODEV;
	if (id->qp_type == UABI_QPT_UD) {
		/* SIDR: the answer, and no connection remains */
		if (id->state != UABI_CM_REQ_RCVD)
			return -EINVAL;
		if (c->private_data_len > SIDR_REP_PRIVATE_LEN)
			return -EINVAL;
		id->qpn = c->qp_num;
		send_sidr_rep(id, SIDR_OK, id->qpn,
			      id->ps == UABI_CM_PS_UDP ? CM_UDP_QKEY : c->qkey, c->private_data,
			      c->private_data_len);
		id->state = UABI_CM_ESTABLISHED;
		id->remote = false;
		return 0;
	}
	if (id->state == UABI_CM_REQ_RCVD) {
		if (c->private_data_len > REP_PRIVATE_LEN)
			return -EINVAL;
		id->qpn = c->qp_num;
		id->responder_resources = c->responder_resources;
		id->initiator_depth = c->initiator_depth;
		mad_init(m, CM_ATTR_REP, id->tid);
		put32(m + REP_LOCAL_COMM_ID, id->local_comm_id);
		put32(m + REP_REMOTE_COMM_ID, id->remote_comm_id);
		put24(m + REP_LOCAL_QPN, id->qpn);
		/* An XRC target's QPN goes in the local EE context's place
		 * too, where an XRC initiator (Linux's too) reads it. */
		if (id->qp_type == UABI_QPT_XRC_RECV || id->qp_type == UABI_QPT_XRC_SEND)
			put24(m + REP_LOCAL_EECN, id->qpn);
		put24(m + REP_PSN, id->peer_psn);	/* what we receive at */
		m[REP_RESP_RES] = c->responder_resources;
		m[REP_INIT_DEPTH] = c->initiator_depth;
		m[REP_B26] = (u8)(CM_TARGET_ACK_DELAY << 3 | (c->flow_control ? 1 : 0));
		m[REP_B27] = (u8)((c->rnr_retry_count & 7) << 5 | (c->srq ? 1 : 0) << 4);
		put64(m + REP_LOCAL_CA_GUID, link->attr.node_guid);
		memcpy(m + REP_PRIVATE, c->private_data, c->private_data_len);
		id->state = UABI_CM_REP_SENT;
		send_and_wait(id, CM_WAIT_RTU, id->peer_cm_timeout, id->max_cm_retries);
		return 0;
	}
	if (id->state == UABI_CM_REP_RCVD) {
		mad_init(m, CM_ATTR_RTU, id->tid);
		put32(m + MSG_LOCAL_COMM_ID, id->local_comm_id);
		put32(m + MSG_REMOTE_COMM_ID, id->remote_comm_id);
		id->state = UABI_CM_ESTABLISHED;
		stop_wait(id);
		id_send(id);	/* kept in id->mad: a repeated REP gets it again */
		return 0;
	}
	return -EINVAL;
}

int cm_wire_reject(struct uabi_cm_id *id, const struct uabi_cm_reject *r)
{
	if (id->state != UABI_CM_REQ_RCVD && id->state != UABI_CM_REP_RCVD)
		return -EINVAL;
	if (id->qp_type == UABI_QPT_UD) {
		send_sidr_rep(id, SIDR_REJECT, 0, 0, r->private_data, r->private_data_len);
		id->state = UABI_CM_DISCONNECTED;
		id->remote = false;
		return 0;
	}
	id_send_rej(id, id->state == UABI_CM_REQ_RCVD ? CM_MSG_REQ : CM_MSG_REP,
		    UABI_CM_REJ_CONSUMER_DEFINED, r->private_data, r->private_data_len);
	id->state = UABI_CM_DISCONNECTED;
	stop_wait(id);
	return 0;
}

static void build_dreq(struct uabi_cm_id *id)
{
	id->tid = (u64)id->local_comm_id << 32 | 2;
	mad_init(id->mad, CM_ATTR_DREQ, id->tid);
	put32(id->mad + MSG_LOCAL_COMM_ID, id->local_comm_id);
	put32(id->mad + MSG_REMOTE_COMM_ID, id->remote_comm_id);
	put24(id->mad + DREQ_REMOTE_QPN, id->peer_qpn);
}

/* DISCONNECT: a DREQ; DISCONNECTED comes with the DREP (or when the DREQ
 * has been sent its retries unanswered), as Linux reports it. */
int cm_wire_disconnect(struct uabi_cm_id *id)
{
	switch (id->state) {
	case UABI_CM_ESTABLISHED:
	case UABI_CM_REP_SENT:
	case UABI_CM_REP_RCVD:
		build_dreq(id);
		id->state = UABI_CM_DISCONNECTED;
		send_and_wait(id, CM_WAIT_DREP, READ_ONCE(cm_timeout), READ_ONCE(cm_retries));
		return 0;
	case UABI_CM_DISCONNECTED:
		/* after the peer's DREQ: where Linux sends its DREP, and
		 * enters time-wait */
		cm_timewait(id);
		return 0;
	}
	return -EINVAL;
}

/* The ID goes: what the IB CM sends then, nothing waited for. */
void cm_wire_destroy(struct uabi_cm_id *id)
{
	if (!id->remote)
		return;
	if (id->qp_type == UABI_QPT_UD) {
		/* a SIDR request not answered: refused (a SIDR REQ of ours
		 * just goes: nothing follows one) */
		if (id->state == UABI_CM_REQ_RCVD)
			send_sidr_rep(id, SIDR_REJECT, 0, 0, NULL, 0);
		stop_wait(id);
		id->remote = false;
		return;
	}
	switch (id->state) {
	case UABI_CM_CONNECT:
		id_send_rej(id, CM_MSG_REQ, UABI_CM_REJ_TIMEOUT, NULL, 0);
		break;
	case UABI_CM_REQ_RCVD:
		id_send_rej(id, CM_MSG_REQ, UABI_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case UABI_CM_REP_SENT:
	case UABI_CM_REP_RCVD:
		id_send_rej(id, id->state == UABI_CM_REP_SENT ? CM_MSG_OTHER : CM_MSG_REP,
			    UABI_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case UABI_CM_ESTABLISHED:
		build_dreq(id);
		id_send(id);
		break;
	}
	stop_wait(id);
	id->remote = false;
}

/* The listener takes a request from the wire: the new ID's side of it. */
void cm_wire_take(struct uabi_cm_id *id, struct cm_event_node *n)
{
	struct cm_wire_req *w = n->wire;

	id->remote = true;
	id->link_dev = w->link_dev;
	memcpy(id->sgid, w->sgid, 16);
	memcpy(id->dgid, w->dgid, 16);
	id->gid_index = w->gid_index;
	id->mtu = w->mtu;
	id->remote_comm_id = w->remote_comm_id;
	id->local_comm_id = w->local_comm_id;
	id->tid = w->tid;
	/* the REQ's starting PSN is what the requester receives at: our
	 * send PSN; the one we receive at is ours to choose (the REP's) */
	id->psn = n->req_psn;
	id->peer_psn = cm_psn(n->req_qpn ^ 0xa5a5a5);
	id->peer_cm_timeout = w->peer_cm_timeout;
	id->max_cm_retries = w->max_cm_retries;
	/* as Linux's passive side: the path the REQ carried */
	id->tos = w->tclass;
}

/* A listener went away with the request not taken: refused. */
void cm_wire_drop_request(struct cm_event_node *n)
{
	struct cm_wire_req *w = n->wire;

	if (w->sidr) {
		u8 m[UABI_CM_MAD_SIZE];

		mad_init(m, CM_ATTR_SIDR_REP, w->tid);
		put32(m + SIDR_REP_ID, w->remote_comm_id);
		m[SIDR_REP_STATUS] = SIDR_REJECT;
		wire_send(w->link_dev, w->sgid, w->dgid, w->tclass, m);
		return;
	}
	if (!n->gone)
		send_rej(w->link_dev, w->sgid, w->dgid, w->tclass, w->tid, 0, w->remote_comm_id,
			 CM_MSG_REQ, UABI_CM_REJ_CONSUMER_DEFINED, NULL, 0);
}

/* ------------------------------------------------------------ receiving */
struct mad_in {
	u32 link_dev;
	const u8 *sgid;			/* the sender's (the packet's source) */
	const u8 *dgid;			/* ours */
	const u8 *m;
};

/* The ID a message names by our communication ID (its remote one). */
static struct uabi_cm_id *find_id(struct uabi_device *dev, const struct mad_in *in)
{
	u32 ours = get32(in->m + MSG_REMOTE_COMM_ID);
	struct uabi_cm_id *id;

	if (!ours)
		return NULL;
	list_for_each_entry(id, &dev->cm_ids, dev_node)
		if (id->remote && id->local_comm_id == ours && id->link_dev == in->link_dev &&
		    !memcmp(id->dgid, in->sgid, 16))
			return id;
	return NULL;
}

/* The ID of a connection by the peer's communication ID (REQ repeats,
 * a REJ of a requester that gave up). */
static struct uabi_cm_id *find_by_peer(struct uabi_device *dev, const struct mad_in *in,
				       u32 theirs)
{
	struct uabi_cm_id *id;

	list_for_each_entry(id, &dev->cm_ids, dev_node)
		if (id->remote && id->remote_comm_id == theirs && id->link_dev == in->link_dev &&
		    !memcmp(id->dgid, in->sgid, 16))
			return id;
	return NULL;
}

/* A REQ not yet taken by its listener, by the peer's communication ID. */
static struct cm_event_node *find_pending(struct uabi_device *dev, const struct mad_in *in,
					  u32 theirs)
{
	struct cm_event_node *n;
	struct uabi_cm_id *l;

	list_for_each_entry(l, &dev->cm_ids, dev_node) {
		if (l->state != UABI_CM_LISTEN)
			continue;
		list_for_each_entry(n, &cm_chan_of(l)->pending, node)
			if (n->wire && n->id == l && n->wire->remote_comm_id == theirs &&
			    n->wire->link_dev == in->link_dev && !memcmp(n->wire->dgid, in->sgid, 16))
				return n;
	}
	return NULL;
}

static bool on_req(struct uabi_device *dev, const struct mad_in *in)
{
	const u8 *m = in->m, *h = m + REQ_PRIVATE;
	u64 sid = get64(m + REQ_SERVICE_ID);
	u32 theirs = get32(m + REQ_LOCAL_COMM_ID);
	u8 transport = (m[REQ_B43] >> 1) & 3, ipver = h[1] >> 4;
	bool xrc = transport == CM_TRANSPORT_XRC && (m[REQ_B51] & 7) == CM_EXT_TRANSPORT_XRC;
	struct uabi_cm_addr src, dst;
	struct uabi_cm_conn_param conn;
	struct uabi_device *link = link_of(in->link_dev);
	struct uabi_cm_id *l, *found = NULL;
	struct cm_event_node *n;
	struct cm_wire_req *w;
	u16 ps = (u16)(sid >> 16), port = (u16)sid;
	int gid_index;
	u8 mtu;

	if ((sid & CMA_SID_MASK) != CMA_SID_PREFIX ||
	    (ps != UABI_CM_PS_TCP && ps != UABI_CM_PS_IB) || (transport > 1 && !xrc) || !theirs ||
	    h[0] != CMA_VERSION || (ipver != 4 && ipver != 6) || !link)
		return false;
	gid_index = link_gid_index(link, in->dgid);
	if (gid_index < 0)
		return false;	/* not for an address of this device */
	/* A repeat of a REQ already here: the REP again if it was sent;
	 * not answered yet (taken by the listener or not), an MRA. */
	l = find_by_peer(dev, in, theirs);
	if (l) {
		if (l->state == UABI_CM_REP_SENT)
			id_send(l);
		else if (l->state == UABI_CM_REQ_RCVD)
			send_mra(l->link_dev, l->sgid, l->dgid, l->tos, l->tid, l->local_comm_id,
				 l->remote_comm_id, CM_MSG_REQ);
		return true;
	}
	n = find_pending(dev, in, theirs);
	if (n) {
		if (!n->wire->sidr)
			send_mra(n->wire->link_dev, n->wire->sgid, n->wire->dgid, n->wire->tclass,
				 n->wire->tid, n->wire->local_comm_id, theirs, CM_MSG_REQ);
		return true;
	}
	cma_addr(&src, ipver == 4, h + 4, get16(h + 2));
	cma_addr(&dst, ipver == 4, h + 20, port);
	list_for_each_entry(l, &dev->cm_ids, dev_node)
		if (l->state == UABI_CM_LISTEN && l->ps == ps && cm_addr_port(&l->src) == port &&
		    cm_listener_takes(l, &dst) &&
		    (transport == CM_TRANSPORT_UC ? l->qp_type == UABI_QPT_UC
		     : xrc ? (l->qp_type == UABI_QPT_XRC_RECV || l->qp_type == UABI_QPT_XRC_SEND)
			   : (l->qp_type == UABI_QPT_RC ||
			      l->qp_type == UABI_QPT_XRC_RECV ||
			      l->qp_type == UABI_QPT_XRC_SEND))) {
			found = l;
			break;
		}
	if (!found) {
		send_rej(in->link_dev, in->dgid, in->sgid, m[REQ_TCLASS], get64(m + 8), 0, theirs,
			 CM_MSG_REQ, UABI_CM_REJ_INVALID_SERVICE_ID, NULL, 0);
		return true;
	}
	/* Beyond the backlog Linux's ucma fails the request with ENOMEM, for
	 * which its CM sends no REJ: the peer sends the REQ again. */
	if (found->num_requests >= found->backlog)
		return false;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return false;
	memset(&conn, 0, sizeof(conn));
	conn.qp_num = get24(m + REQ_LOCAL_QPN);
	conn.responder_resources = m[REQ_RESP_RES];
	conn.initiator_depth = m[REQ_INIT_DEPTH];
	conn.flow_control = m[REQ_B43] & 1;
	conn.retry_count = m[REQ_B47] & 7;
	conn.rnr_retry_count = m[REQ_B50] & 7;
	conn.srq = (m[REQ_B51] >> 3) & 1;
	/* As Linux reports it: all the bytes after the RDMA CM header. */
	memcpy(conn.private_data, h + CMA_HDR_LEN, REQ_PRIVATE_LEN - CMA_HDR_LEN);
	conn.private_data_len = REQ_PRIVATE_LEN - CMA_HDR_LEN;
	n = cm_push(found, UABI_CM_EVENT_CONNECT_REQUEST, 0, &conn);
	if (!n) {
		kfree(w);
		return false;
	}
	mtu = m[REQ_B50] >> 4;
	if (mtu < UABI_MTU_256 || mtu > link_mtu(link))
		mtu = link_mtu(link);
	w->link_dev = in->link_dev;
	memcpy(w->sgid, in->dgid, 16);
	memcpy(w->dgid, in->sgid, 16);
	w->gid_index = (u8)gid_index;
	w->remote_comm_id = theirs;
	w->local_comm_id = new_comm_id();
	w->tid = get64(m + 8);
	w->mtu = mtu;
	w->peer_cm_timeout = m[REQ_B47] >> 3;
	w->max_cm_retries = m[REQ_B51] >> 4;
	w->tclass = m[REQ_TCLASS];
	n->wire = w;
	n->req_qpn = conn.qp_num;
	n->req_psn = get24(m + REQ_PSN);
	n->req_src = src;
	n->req_dst = dst;
	found->num_requests++;
	return true;
}

/* A SIDR REP refusing the SIDR REQ @in (its request ID @theirs, service
 * ID @sid) with @status. */
static void sidr_refuse(const struct mad_in *in, u32 theirs, u64 sid, u8 status)
{
	u8 rep[UABI_CM_MAD_SIZE];

	mad_init(rep, CM_ATTR_SIDR_REP, get64(in->m + 8));
	put32(rep + SIDR_REP_ID, theirs);
	rep[SIDR_REP_STATUS] = status;
	put64(rep + SIDR_REP_SERVICE_ID, sid);
	/* A SIDR REQ carries no traffic class (Linux answers on the received
	 * GRH's, which the hosts do not pass on): the default, 0. */
	wire_send(in->link_dev, in->dgid, in->sgid, 0, rep);
}

/* A SIDR REQ: a UD listener's CONNECT_REQUEST (the requester's QPN comes
 * with its first datagram); no listener: a SIDR REP, "unsupported". */
static bool on_sidr_req(struct uabi_device *dev, const struct mad_in *in)
{
	const u8 *m = in->m, *h = m + SIDR_REQ_PRIVATE;
	u64 sid = get64(m + SIDR_REQ_SERVICE_ID);
	u32 theirs = get32(m + SIDR_REQ_ID);
	u8 ipver = h[1] >> 4;
	struct uabi_device *link = link_of(in->link_dev);
	struct uabi_cm_id *l, *found = NULL;
	struct uabi_cm_conn_param conn;
	struct uabi_cm_addr src, dst;
	struct cm_event_node *n;
	struct cm_wire_req *w;
	u16 ps = (u16)(sid >> 16), port = (u16)sid;
	int gid_index;

	if ((sid & CMA_SID_MASK) != CMA_SID_PREFIX ||
	    (ps != UABI_CM_PS_UDP && ps != UABI_CM_PS_IB) || !theirs ||
	    h[0] != CMA_VERSION || (ipver != 4 && ipver != 6) || !link)
		return false;
	gid_index = link_gid_index(link, in->dgid);
	if (gid_index < 0)
		return false;
	/* a repeat while the listener has not answered: nothing new */
	l = find_by_peer(dev, in, theirs);
	if ((l && l->qp_type == UABI_QPT_UD) || find_pending(dev, in, theirs))
		return true;
	cma_addr(&src, ipver == 4, h + 4, get16(h + 2));
	cma_addr(&dst, ipver == 4, h + 20, port);
	list_for_each_entry(l, &dev->cm_ids, dev_node)
		if (l->state == UABI_CM_LISTEN && l->ps == ps && l->qp_type == UABI_QPT_UD &&
		    cm_addr_port(&l->src) == port && cm_listener_takes(l, &dst)) {
			found = l;
			break;
		}
	if (!found) {
		sidr_refuse(in, theirs, sid, SIDR_UNSUPPORTED);
		return true;
	}
	if (found->num_requests >= found->backlog) {
		/* Linux's ucma fails the request, and its CM rejects it */
		sidr_refuse(in, theirs, sid, SIDR_REJECT);
		return true;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return false;
	memset(&conn, 0, sizeof(conn));
	memcpy(conn.private_data, h + CMA_HDR_LEN, UD_EVENT_PRIVATE_LEN);
	conn.private_data_len = UD_EVENT_PRIVATE_LEN;
	n = cm_push(found, UABI_CM_EVENT_CONNECT_REQUEST, 0, &conn);
	if (!n) {
		kfree(w);
		return false;
	}
	set_ud_ah(n, in->sgid, (u8)gid_index);
	w->sidr = true;
	w->link_dev = in->link_dev;
	memcpy(w->sgid, in->dgid, 16);
	memcpy(w->dgid, in->sgid, 16);
	w->gid_index = (u8)gid_index;
	w->remote_comm_id = theirs;
	w->local_comm_id = new_comm_id();
	w->tid = get64(m + 8);
	w->mtu = link_mtu(link);
	n->wire = w;
	n->req_src = src;
	n->req_dst = dst;
	found->num_requests++;
	return true;
}

/* The SIDR REP: the peer's QPN and Q_Key (ESTABLISHED, no connection
 * remains), or its refusal (UNREACHABLE with the SIDR status, as Linux's
 * rdma_cm reports it). */
static bool on_sidr_rep(struct uabi_device *dev, const struct mad_in *in)
{
	const u8 *m = in->m;
	u32 ours = get32(m + SIDR_REP_ID);
	struct uabi_cm_conn_param conn;
	struct cm_event_node *n;
	struct uabi_cm_id *id;

	list_for_each_entry(id, &dev->cm_ids, dev_node) {
		if (!id->remote || id->wait != CM_WAIT_SIDR_REP || id->local_comm_id != ours ||
		    id->link_dev != in->link_dev || memcmp(id->dgid, in->sgid, 16))
			continue;
		stop_wait(id);
		id->remote = false;
		memset(&conn, 0, sizeof(conn));
		memcpy(conn.private_data, m + SIDR_REP_PRIVATE, SIDR_REP_PRIVATE_LEN);
		conn.private_data_len = SIDR_REP_PRIVATE_LEN;
		if (m[SIDR_REP_STATUS] != SIDR_OK) {
			id->state = UABI_CM_ROUTE_RESOLVED;
			cm_push(id, UABI_CM_EVENT_UNREACHABLE, m[SIDR_REP_STATUS], &conn);
			return true;
		}
		conn.qp_num = get24(m + SIDR_REP_QPN);
		conn.qkey = get32(m + SIDR_REP_QKEY);
		id->state = UABI_CM_ESTABLISHED;
		n = cm_push(id, UABI_CM_EVENT_ESTABLISHED, 0, &conn);
		if (n)
			set_ud_ah(n, id->dgid, id->gid_index);
		return true;
	}
	return false;
}

static bool on_rep(struct uabi_device *dev, const struct mad_in *in)
{
	struct uabi_cm_id *id = find_id(dev, in);
	struct uabi_cm_conn_param conn;
	const u8 *m = in->m;

	if (!id)
		return false;
	if (id->state == UABI_CM_ESTABLISHED && id->remote_comm_id == get32(m + REP_LOCAL_COMM_ID)) {
		id_send(id);	/* our RTU was lost: it again */
		return true;
	}
	if (id->state == UABI_CM_REP_RCVD && id->remote_comm_id == get32(m + REP_LOCAL_COMM_ID)) {
		/* our consumer has not answered (ACCEPT, the RTU) yet */
		send_mra(id->link_dev, id->sgid, id->dgid, id->tos, id->tid, id->local_comm_id,
			 id->remote_comm_id, CM_MSG_REP);
		return true;
	}
	if (id->state != UABI_CM_CONNECT || id->wait != CM_WAIT_REP || !get32(m + REP_LOCAL_COMM_ID))
		return false;
	stop_wait(id);
	id->remote_comm_id = get32(m + REP_LOCAL_COMM_ID);
	id->peer_qpn = get24(m + (id->qp_type == UABI_QPT_XRC_SEND ? REP_LOCAL_EECN : REP_LOCAL_QPN));
	id->psn = get24(m + REP_PSN);	/* the PSN the peer receives at: we send so */
	/* what the peer offers is what this side may use */
	id->responder_resources = m[REP_INIT_DEPTH];
	id->initiator_depth = m[REP_RESP_RES];
	id->state = UABI_CM_REP_RCVD;
	memset(&conn, 0, sizeof(conn));
	conn.qp_num = id->peer_qpn;
	conn.responder_resources = m[REP_RESP_RES];
	conn.initiator_depth = m[REP_INIT_DEPTH];
	conn.flow_control = m[REP_B26] & 1;
	conn.rnr_retry_count = m[REP_B27] >> 5;
	conn.srq = (m[REP_B27] >> 4) & 1;
	memcpy(conn.private_data, m + REP_PRIVATE, REP_PRIVATE_LEN);
	conn.private_data_len = REP_PRIVATE_LEN;
	cm_push(id, UABI_CM_EVENT_CONNECT_RESPONSE, 0, &conn);
	return true;
}

static bool on_rtu(struct uabi_device *dev, const struct mad_in *in)
{
	struct uabi_cm_id *id = find_id(dev, in);
	struct uabi_cm_conn_param conn;

	if (!id || id->state != UABI_CM_REP_SENT ||
	    get32(in->m + MSG_LOCAL_COMM_ID) != id->remote_comm_id)
		return false;
	stop_wait(id);
	id->state = UABI_CM_ESTABLISHED;
	memset(&conn, 0, sizeof(conn));
	conn.qp_num = id->peer_qpn;
	cm_push(id, UABI_CM_EVENT_ESTABLISHED, 0, &conn);
	return true;
}

static bool on_rej(struct uabi_device *dev, const struct mad_in *in)
{
	const u8 *m = in->m;
	u32 theirs = get32(m + MSG_LOCAL_COMM_ID);
	u16 reason = get16(m + REJ_REASON);
	struct uabi_cm_conn_param conn;
	struct uabi_cm_id *id = find_id(dev, in);
	struct cm_event_node *n;

	if (!id && theirs) {
		/* a requester that gave up before our REP reached it */
		n = find_pending(dev, in, theirs);
		if (n) {
			n->gone = true;
			return true;
		}
		id = find_by_peer(dev, in, theirs);
	}
	if (!id)
		return false;
	if (id->remote_comm_id && theirs && theirs != id->remote_comm_id)
		return false;
	memset(&conn, 0, sizeof(conn));
	memcpy(conn.private_data, m + REJ_PRIVATE, REJ_PRIVATE_LEN);
	conn.private_data_len = REJ_PRIVATE_LEN;
	switch (id->state) {
	case UABI_CM_CONNECT:
		id->state = UABI_CM_ROUTE_RESOLVED;
		id->remote = false;
		break;
	case UABI_CM_REQ_RCVD:
	case UABI_CM_REP_SENT:
	case UABI_CM_REP_RCVD:
		id->state = UABI_CM_DISCONNECTED;
		break;
	default:
		return false;
	}
	stop_wait(id);
	cm_push(id, UABI_CM_EVENT_REJECTED, reason, &conn);
	return true;
}

static bool on_mra(struct uabi_device *dev, const struct mad_in *in)
{
	struct uabi_cm_id *id = find_id(dev, in);
	u8 msg = in->m[MRA_B8] >> 6, t = in->m[MRA_B9] >> 3;

	if (!id || !((id->wait == CM_WAIT_REP && msg == CM_MSG_REQ) ||
		     (id->wait == CM_WAIT_RTU && msg == CM_MSG_REP) ||
		     (id->wait == CM_WAIT_DREP && msg == CM_MSG_OTHER)))
		return false;
	/* The peer needs longer: as Linux's ib_cm, each wait (this one and
	 * those of the retries left) is now its service timeout plus the
	 * path's ACK timeout. */
	id->retry_ns = cm_time_ns(t) + cm_time_ns(CM_LOCAL_ACK_TIMEOUT);
	id->deadline = ktime_get_ns() + id->retry_ns;
	return true;
}

static void send_drep(u32 link_dev, const u8 *sgid, const u8 *dgid, u8 tclass, u64 tid,
		      u32 local, u32 remote)
{
	u8 m[UABI_CM_MAD_SIZE];

	mad_init(m, CM_ATTR_DREP, tid);
	put32(m + MSG_LOCAL_COMM_ID, local);
	put32(m + MSG_REMOTE_COMM_ID, remote);
	wire_send(link_dev, sgid, dgid, tclass, m);
}

static bool on_dreq(struct uabi_device *dev, const struct mad_in *in)
{
	const u8 *m = in->m;
	struct uabi_cm_id *id = find_id(dev, in);
	u32 theirs = get32(m + MSG_LOCAL_COMM_ID);
	u64 tid = get64(m + 8);

	if (!id || id->remote_comm_id != theirs) {
		/* a connection gone already (its DREP lost): answered, as
		 * the IB CM does, so that the peer stops asking */
		if (!theirs || !get32(m + MSG_REMOTE_COMM_ID))
			return false;
		send_drep(in->link_dev, in->dgid, in->sgid, 0, tid, get32(m + MSG_REMOTE_COMM_ID),
			  theirs);
		return true;
	}
	send_drep(id->link_dev, id->sgid, id->dgid, id->tos, tid, id->local_comm_id,
		  id->remote_comm_id);
	switch (id->state) {
	case UABI_CM_ESTABLISHED:
	case UABI_CM_REP_SENT:
	case UABI_CM_REP_RCVD:
		id->state = UABI_CM_DISCONNECTED;
		stop_wait(id);
		cm_push(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
		break;
	case UABI_CM_DISCONNECTED:
		if (id->wait == CM_WAIT_DREP) {	/* both sides at once */
			stop_wait(id);
			cm_push(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
			cm_timewait(id);	/* our DREP went */
		}
		break;
	}
	return true;
}

static bool on_drep(struct uabi_device *dev, const struct mad_in *in)
{
	struct uabi_cm_id *id = find_id(dev, in);

	if (!id || id->wait != CM_WAIT_DREP ||
	    get32(in->m + MSG_LOCAL_COMM_ID) != id->remote_comm_id)
		return false;
	stop_wait(id);
	cm_push(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
	cm_timewait(id);	/* the DREP ends it: time-wait */
	return true;
}

void uabi_cm_wire_input(unsigned int link, const unsigned char *sgid, const unsigned char *dgid,
			const void *mad, unsigned int len)
{
	struct uabi_device *dev = cm_dev();
	struct mad_in in;
	const u8 *m = mad;
	bool taken = false;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	if (!wire_ops || len < UABI_CM_MAD_SIZE || link >= 4 || m[0] != MAD_BASE_VERSION ||
	    m[1] != MGMT_CLASS_CM || m[2] != CM_CLASS_VERSION || m[3] != MAD_METHOD_SEND)
		goto out;
	in.link_dev = link + 1;
	in.sgid = sgid;
	in.dgid = dgid;
	in.m = m;
	switch (get16(m + 16)) {
	case CM_ATTR_REQ:
		taken = on_req(dev, &in);
		break;
	case CM_ATTR_REP:
		taken = on_rep(dev, &in);
		break;
	case CM_ATTR_RTU:
		taken = on_rtu(dev, &in);
		break;
	case CM_ATTR_REJ:
		taken = on_rej(dev, &in);
		break;
	case CM_ATTR_MRA:
		taken = on_mra(dev, &in);
		break;
	case CM_ATTR_DREQ:
		taken = on_dreq(dev, &in);
		break;
	case CM_ATTR_DREP:
		taken = on_drep(dev, &in);
		break;
	case CM_ATTR_SIDR_REQ:
		taken = on_sidr_req(dev, &in);
		break;
	case CM_ATTR_SIDR_REP:
		taken = on_sidr_rep(dev, &in);
		break;
	}
out:
	if (taken)
		stats.received++;
	else
		stats.dropped++;
	rearm(dev);
	mutex_unlock(&dev->lock);
}

/* A connection inside this core: its REQ (REP) went unanswered once; the
 * peer would then answer each repeat with an MRA (RC, UC; SIDR has none),
 * so each retry left waits the MRA timeout; none left: given up. */
static void local_expired(struct uabi_cm_id *id, u64 now)
{
	u8 wait = id->wait;

	if (wait == CM_WAIT_LOCAL_REP ? id->state != UABI_CM_CONNECT
				      : id->state != UABI_CM_REP_SENT) {
		stop_wait(id);	/* answered meanwhile */
		return;
	}
	if (id->retries_left) {
		id->retries_left--;
		if (id->qp_type != UABI_QPT_UD)
			id->retry_ns = cm_time_ns(READ_ONCE(mra_timeout));
		id->deadline = now + id->retry_ns;
		return;
	}
	stats.timed_out++;
	stop_wait(id);
	cm_local_timeout(id);
}

void cm_timewait(struct uabi_cm_id *id)
{
	if (!wire_ops || id->timewait_started || !id->disconnected)
		return;
	id->timewait_started = true;
	id->timewait = ktime_get_ns() + CM_TIMEWAIT_NS;
	rearm(cm_dev());
}

void cm_local_wait(struct uabi_cm_id *id, u8 wait)
{
	if (!wire_ops)
		return;
	id->wait = wait;
	id->retry_ns = cm_time_ns(READ_ONCE(cm_timeout));
	id->retries_left = READ_ONCE(cm_retries);
	id->deadline = ktime_get_ns() + id->retry_ns;
	rearm(cm_dev());
}

bool cm_local_hold(struct uabi_cm_id *id)
{
	if (!wire_ops)
		return false;
	id->wait = CM_WAIT_LOCAL_HELD;
	id->retry_ns = cm_time_ns(READ_ONCE(cm_timeout));
	id->retries_left = READ_ONCE(cm_retries);
	id->deadline = ktime_get_ns() + id->retry_ns;
	rearm(cm_dev());
	return true;
}

/* A held request's REQ (cm_local_hold()) "sent again": offered to the
 * listener, which may have room now; none left: given up. */
static void held_expired(struct uabi_device *dev, struct uabi_cm_id *id, u64 now)
{
	if (id->state != UABI_CM_CONNECT || !id->held) {
		stop_wait(id);
		return;
	}
	if (id->retries_left) {
		id->retries_left--;
		stats.resent++;
		if (!cm_local_offer(dev, id))
			id->deadline = now + id->retry_ns;
		else if (id->wait == CM_WAIT_LOCAL_HELD)
			stop_wait(id);	/* refused: no listener any more */
		return;
	}
	stats.timed_out++;
	stop_wait(id);
	cm_local_timeout(id);
}

void uabi_cm_wire_timeout(void)
{
	struct uabi_device *dev = cm_dev();
	struct uabi_cm_id *id;
	u64 now;

	if (!dev)
		return;
	mutex_lock(&dev->lock);
	now = ktime_get_ns();
	list_for_each_entry(id, &dev->cm_ids, dev_node) {
		u8 wait = id->wait;

		if (id->timewait && id->timewait <= now) {
			id->timewait = 0;
			cm_push(id, UABI_CM_EVENT_TIMEWAIT_EXIT, 0, NULL);
		}
		if (!id->deadline || id->deadline > now)
			continue;
		if (wait == CM_WAIT_LOCAL_REP || wait == CM_WAIT_LOCAL_RTU) {
			local_expired(id, now);
			continue;
		}
		if (wait == CM_WAIT_LOCAL_HELD) {
			held_expired(dev, id, now);
			continue;
		}
		if (id->retries_left) {
			id->retries_left--;
			id->deadline = now + id->retry_ns;
			stats.resent++;
			id_send(id);
			continue;
		}
		stats.timed_out++;
		stop_wait(id);
		switch (wait) {
		case CM_WAIT_REP:
			id_send_rej(id, CM_MSG_REQ, UABI_CM_REJ_TIMEOUT, NULL, 0);
			id->state = UABI_CM_ROUTE_RESOLVED;
			id->remote = false;
			cm_push(id, UABI_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
			break;
		case CM_WAIT_RTU:
			id_send_rej(id, CM_MSG_REP, UABI_CM_REJ_TIMEOUT, NULL, 0);
			id->state = UABI_CM_DISCONNECTED;
			cm_push(id, UABI_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
			break;
		case CM_WAIT_DREP:
			cm_push(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
			cm_timewait(id);
			break;
		case CM_WAIT_SIDR_REP:
			id->state = UABI_CM_ROUTE_RESOLVED;
			id->remote = false;
			cm_push(id, UABI_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
			break;
		}
	}
	rearm(dev);
	mutex_unlock(&dev->lock);
}

/*
 * RoCE device @link is being deleted (`uabi link del`; docs/cm.md,
 * "DEVICE_REMOVAL"): every ID through it (resolved, bound (UD) or
 * connected through it, or made from a request that came through it: the
 * IDs whose QUERY names it) hears DEVICE_REMOVAL, once, as Linux's
 * rdma_cm tells the IDs of a device it removes; the program then destroys
 * them and closes its contexts on the device.  @gone: the device goes
 * now, and the IDs are cut from it (no MAD leaves through its index,
 * which a later device may take, and none that arrives there is theirs).
 */
/* The device at @link is gone: requests that came through it and wait in
 * listener @id's queue keep no index of it, which the next device may
 * take (the ID made from one sends nothing; its peer times out).  Caller
 * holds the CM device's lock. */
static void cut_requests(struct uabi_cm_id *id, unsigned int link)
{
	struct uabi_cm_channel *ch = cm_chan_of(id);
	struct cm_event_node *n;

	if (!ch)
		return;
	spin_lock(&ch->lock);
	list_for_each_entry(n, &ch->pending, node)
		if (n->id == id && n->wire && n->wire->link_dev == link + 1)
			n->wire->link_dev = 0;
	spin_unlock(&ch->lock);
}

/* Whether listener @id is bound to one of the @n GIDs in @gids (an address
 * of the device going; a wildcard address is none of them). */
static bool listens_on(const struct uabi_cm_id *id, const u8 (*gids)[16], u32 n)
{
	u8 g[16];
	u32 i;

	if (id->state != UABI_CM_LISTEN || id->link_dev || !addr_gid(&id->src, g))
		return false;
	for (i = 0; i < n; i++)
		if (!memcmp(gids[i], g, 16))
			return true;
	return false;
}

void uabi_cm_link_removal(unsigned int link, int gone)
{
	struct uabi_device *dev = cm_dev(), *l = uabi_device_get(link);
	static const u8 zero[16];
	struct uabi_cm_id *id;
	u8 gids[16][16];
	u32 n = 0, i;

	if (!dev || !l || l == dev)
		return;
	/* Its addresses, for the listeners bound to one of them (they are on
	 * the CM's device, link_dev 0, but Linux tells them too). */
	for (i = 0; i < 16 && l->ops->query_gid; i++)
		if (!l->ops->query_gid(l, 1, i, gids[n]) && memcmp(gids[n], zero, 16))
			n++;
	mutex_lock(&dev->lock);
	list_for_each_entry(id, &dev->cm_ids, dev_node) {
		if (gone && id->state == UABI_CM_LISTEN)
			cut_requests(id, link);
		if (id->link_dev != link + 1) {
			if (!id->removal_told && listens_on(id, (const u8 (*)[16])gids, n)) {
				id->removal_told = true;
				cm_push(id, UABI_CM_EVENT_DEVICE_REMOVAL, 0, NULL);
			}
			continue;
		}
		if (!id->removal_told) {
			id->removal_told = true;
			cm_push(id, UABI_CM_EVENT_DEVICE_REMOVAL, 0, NULL);
		}
		if (gone) {
			id->link_dev = 0;
			id->remote = false;
			id->wait = CM_WAIT_NONE;	/* no MAD goes again */
			id->deadline = 0;
		}
	}
	mutex_unlock(&dev->lock);
}

void uabi_cm_wire_get_stats(struct uabi_cm_wire_stats *out)
{
	struct uabi_device *dev = cm_dev();

	if (dev)
		mutex_lock(&dev->lock);
	*out = stats;
	if (dev)
		mutex_unlock(&dev->lock);
}
