/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The connection manager's objects and the helpers its two halves share:
 * types_cm.c (the objects, connections inside the core) and cm_mad.c
 * (connections with the CM of another host: CM MADs on QP1 over RoCEv2).
 * Private to kernel/core.
 */
#ifndef UABI_CORE_CM_H
#define UABI_CORE_CM_H

#include <uabi/core.h>
#include <uabi/cm_wire.h>

#define CM_MAX_PENDING 1024		/* per channel; older events are kept */
#define CM_PORT_FIRST 32768		/* ephemeral ports, as Linux's default */
#define CM_PORT_LAST 60999
#define CM_UDP_QKEY 0x01234567		/* librdmacm's RDMA_UDP_QKEY */
#define CM_RNR_TIMER 12			/* 0.64 ms */
#define CM_TIMEOUT 14			/* 67 ms: one host, no fabric */
#define CM_WIRE_QP_TIMEOUT 18		/* 1.07 s: across hosts (a TCG guest's rxe too) */
#define CM_WIRE_HOP_LIMIT 64
#define CM_MAX_MCAST 64			/* groups one ID may join */
#define CM_MCAST_QPN 0xffffff		/* a multicast group's QPN */

struct uabi_cm_channel {
	spinlock_t lock;
	struct list_head pending;	/* struct cm_event_node, oldest first */
	u32 num_pending;
	void *wait;
	s32 fd;
};

struct uabi_cm_id {
	struct uabi_uobject *uobj;
	struct uabi_uobject *channel;
	struct list_head dev_node;	/* dev->cm_ids */
	u64 uid;
	bool from_request;		/* made by take_request(), not accepted yet */
	u16 ps;
	u8 qp_type;
	u32 state;			/* UABI_CM_* */
	struct uabi_cm_addr src;
	struct uabi_cm_addr dst;
	bool has_port;			/* src carries a port of the device's */
	bool on_device;			/* bound or resolved to a device address */
	u32 backlog;
	u32 num_requests;		/* LISTEN: requests not yet taken */
	struct uabi_cm_id *peer;
	struct cm_event_node *request;	/* CONNECT: ours, not yet taken */
	/* CONNECT: a request the listener's full backlog did not take, offered
	 * again at each CM response timeout (cm_local_hold()); NULL if none. */
	struct uabi_cm_conn_param *held;
	u32 qpn, psn;
	u32 peer_qpn, peer_psn;
	u8 responder_resources;
	u8 initiator_depth;
	u8 retry_count;
	u8 rnr_retry_count;
	u32 events_reported;
	/* SET_OPTION (rdma_set_option()'s, as Linux's cma keeps them) */
	u8 tos;				/* the traffic class (0 unless set) */
	u8 ack_timeout;			/* the QP's, when ack_timeout_set */
	bool ack_timeout_set;
	bool reuseaddr;
	bool afonly_set, afonly;	/* unset: IPv4 only its family, IPv6 both */
	struct list_head mcasts;	/* struct cm_mcast: groups joined */
	u32 num_mcasts;
	u32 next_mcast;
	/* Across the wire (cm_mad.c): resolved through a RoCE device
	 * (link_dev, an index of uabi_device_get(), +1: 0 is none); remote
	 * once the peer is a CM of another host, which @peer never is. */
	u32 link_dev;
	bool remote;
	bool removal_told;		/* DEVICE_REMOVAL queued (uabi_cm_link_removal()) */
	u8 wait;			/* CM_WAIT_*: what a MAD sent waits for */
	u8 retries_left;
	u8 mtu;				/* the connection's path MTU (UABI_MTU_*) */
	u8 peer_cm_timeout;		/* the peer's CM response timeout (4.096 us * 2^t) */
	u8 max_cm_retries;
	u8 gid_index;			/* of sgid in the link's table */
	u8 sgid[16], dgid[16];		/* ours and the peer's (IPv4-mapped) */
	u32 local_comm_id, remote_comm_id;
	u64 tid;
	u64 deadline;			/* ns (ktime_get_ns()); 0: no timer */
	u64 retry_ns;
	u8 mad[256];			/* the MAD to send again on timeout */
	/* The IB CM's time-wait after a disconnect (cm_timewait()): */
	bool disconnected;		/* DISCONNECTED was queued for it */
	bool timewait_started;
	u64 timewait;			/* ns: TIMEWAIT_EXIT then; 0: none due */
};

enum {
	CM_WAIT_NONE,
	CM_WAIT_REP,			/* REQ sent */
	CM_WAIT_RTU,			/* REP sent */
	CM_WAIT_DREP,			/* DREQ sent */
	CM_WAIT_SIDR_REP,		/* SIDR REQ sent (UD) */
	/* A connection inside this core (types_cm.c), timed as the IB CM
	 * would time it: nothing is lost, but a peer may never answer. */
	CM_WAIT_LOCAL_REP,		/* CONNECT: the listener's ACCEPT */
	CM_WAIT_LOCAL_RTU,		/* ACCEPT: the requester's */
	CM_WAIT_LOCAL_HELD,		/* CONNECT: the listener's backlog was full */
};

/* A multicast group a UD ID joined (JOIN_MCAST). */
struct cm_mcast {
	struct list_head node;		/* id->mcasts */
	u32 num;			/* JOIN_MCAST's answer, unique on the ID */
	u32 events_reported;
	u64 uid;
};

struct cm_event_node {
	struct list_head node;
	struct uabi_cm_id *id;		/* whose event (a request: the listener) */
	struct uabi_cm_id *requester;	/* CONNECT_REQUEST; NULL once it is gone */
	struct cm_mcast *mc;		/* a multicast event: the group's */
	struct uabi_cm_event ev;
	/* CONNECT_REQUEST: the requester's side, kept for the new ID even
	 * if the requester goes before the request is taken (@gone). */
	bool gone;
	u32 req_qpn, req_psn;
	struct uabi_cm_addr req_src, req_dst;
	/* A REQ from the wire (cm_mad.c): no requester of this core. */
	struct cm_wire_req *wire;
};

/* A REQ that came over the wire, until the listener takes it. */
struct cm_wire_req {
	u32 link_dev;			/* +1, as uabi_cm_id.link_dev */
	u8 sgid[16], dgid[16];		/* ours, the requester's */
	u32 remote_comm_id;
	u32 local_comm_id;		/* ours, chosen at the REQ (an MRA names it) */
	u64 tid;
	u8 mtu, peer_cm_timeout, max_cm_retries, gid_index;
	u8 tclass;			/* the REQ's traffic class */
	bool sidr;			/* a SIDR REQ (UD) */
};

/* types_cm.c */
struct cm_event_node *cm_push(struct uabi_cm_id *id, u32 event, s32 status,
			      const struct uabi_cm_conn_param *conn);
void cm_unlink(struct uabi_cm_channel *ch, struct cm_event_node *n);
struct uabi_cm_channel *cm_chan_of(struct uabi_cm_id *id);
u16 cm_addr_family(const struct uabi_cm_addr *a);
u16 cm_addr_port(const struct uabi_cm_addr *a);
void cm_addr_set_port(struct uabi_cm_addr *a, u16 port);
u32 cm_addr_ip(const struct uabi_cm_addr *a, u32 *len);
bool cm_addr_covers(const struct uabi_cm_addr *bound, const struct uabi_cm_addr *to);
bool cm_listener_takes(const struct uabi_cm_id *l, const struct uabi_cm_addr *to);
u32 cm_psn(u32 qpn);
/* A wait of a connection inside this core ran out (cm_mad.c's timer). */
void cm_local_timeout(struct uabi_cm_id *id);

/* cm_mad.c: all under the CM device's lock */
int cm_wire_resolve(struct uabi_cm_id *id, const struct uabi_cm_addr *src);
int cm_wire_connect(struct uabi_cm_id *id, const struct uabi_cm_conn_param *c);
int cm_wire_accept(struct uabi_cm_id *id, const struct uabi_cm_conn_param *c);
int cm_wire_reject(struct uabi_cm_id *id, const struct uabi_cm_reject *r);
int cm_wire_disconnect(struct uabi_cm_id *id);
void cm_wire_destroy(struct uabi_cm_id *id);
void cm_wire_take(struct uabi_cm_id *id, struct cm_event_node *n);
void cm_wire_drop_request(struct cm_event_node *n);
/* A connection inside this core waits @wait (CM_WAIT_LOCAL_*) as the IB
 * CM would: a REQ (REP) unanswered for the CM response timeout is sent
 * again up to the retries, and since the peer is there but has not
 * answered it answers each repeat with an MRA (Linux's rdma_cm does, with
 * its MRA timeout): then cm_local_timeout().  A host without a timer
 * (none registered) waits forever. */
void cm_local_wait(struct uabi_cm_id *id, u8 wait);
/* A CONNECT inside this core found its listener's backlog full.  Linux's
 * ucma fails such a request (ENOMEM), for which the IB CM sends no REJ, so
 * the requester sends its REQ again at each CM response timeout, up to the
 * retries, then reports UNREACHABLE (-ETIMEDOUT): the same here, the
 * request (@id->held) offered again through cm_local_offer().  False
 * without a timer (the caller then refuses the request). */
bool cm_local_hold(struct uabi_cm_id *id);
/* types_cm.c: offers @id's held request to its listener again; false if
 * the backlog is still full (the request stays held).  dev->lock held. */
bool cm_local_offer(struct uabi_device *dev, struct uabi_cm_id *id);
/* The IB CM enters time-wait for a connection @id has reported
 * DISCONNECTED for (its DREQ answered or timed out, or its own DREP
 * sent): TIMEWAIT_EXIT follows the time-wait later, as Linux's rdma_cm
 * reports it.  Once per ID; nothing without a timer. */
void cm_timewait(struct uabi_cm_id *id);
/* The link device of @id's connection (a RoCE device), NULL if none. */
struct uabi_device *cm_wire_link(const struct uabi_cm_id *id);

#endif
