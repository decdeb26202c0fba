/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi uAPI: the connection manager's objects (docs/cm.md).
 *
 * A CM channel (UABI_OBJ_CM_CHANNEL) is a queue of connection events with a
 * pollable fd; a CM ID (UABI_OBJ_CM_ID) is one endpoint: bound to an
 * address, listening, or one side of a connection.  Connection management
 * happens inside the core: a listener is found by (port space, port,
 * address), a connect request is an event on the listener's channel, and
 * ACCEPT, REJECT, DISCONNECT and a closing context are events on the peer's.
 *
 * The event numbers, port spaces and the connection parameters' layout are
 * the ones of the legacy ucma ABI (the kernel's include/uapi/rdma/
 * rdma_user_cm.h), so that a translator copies them unchanged.
 */
#ifndef RDMA_UABI_CM_H
#define RDMA_UABI_CM_H

#include <rdma/uabi_types.h>
#include <rdma/uabi_verbs.h>

#define UABI_CM_PRIVATE_DATA_MAX 256
#define UABI_CM_ADDR_SIZE 128		/* a sockaddr_storage */

/* Address families the core understands (Linux's AF_INET, AF_INET6). */
enum {
	UABI_CM_AF_INET = 2,
	UABI_CM_AF_INET6 = 10,
};

/* Port spaces, as enum rdma_ucm_port_space. */
enum {
	UABI_CM_PS_IPOIB = 0x0002,
	UABI_CM_PS_IB = 0x013F,
	UABI_CM_PS_TCP = 0x0106,
	UABI_CM_PS_UDP = 0x0111,
};

/* Events, as enum rdma_cm_event_type. */
enum {
	UABI_CM_EVENT_ADDR_RESOLVED = 0,
	UABI_CM_EVENT_ADDR_ERROR = 1,
	UABI_CM_EVENT_ROUTE_RESOLVED = 2,
	UABI_CM_EVENT_ROUTE_ERROR = 3,
	UABI_CM_EVENT_CONNECT_REQUEST = 4,
	UABI_CM_EVENT_CONNECT_RESPONSE = 5,
	UABI_CM_EVENT_CONNECT_ERROR = 6,
	UABI_CM_EVENT_UNREACHABLE = 7,
	UABI_CM_EVENT_REJECTED = 8,
	UABI_CM_EVENT_ESTABLISHED = 9,
	UABI_CM_EVENT_DISCONNECTED = 10,
	UABI_CM_EVENT_DEVICE_REMOVAL = 11,
	UABI_CM_EVENT_MULTICAST_JOIN = 12,
	UABI_CM_EVENT_MULTICAST_ERROR = 13,
	UABI_CM_EVENT_TIMEWAIT_EXIT = 15,
};

/* A REJECTED event's status when no listener matched (the IB CM's
 * "invalid service ID" reason), when the peer rejected or went away
 * answering or answered (consumer defined), and when the requester went
 * away before the answer (timeout, as the IB CM rejects then). */
enum {
	UABI_CM_REJ_TIMEOUT = 1,
	UABI_CM_REJ_INVALID_SERVICE_ID = 8,
	UABI_CM_REJ_CONSUMER_DEFINED = 28,
};

/* The states a CM ID goes through (QUERY's state). */
enum {
	UABI_CM_IDLE,
	UABI_CM_BOUND,
	UABI_CM_ADDR_RESOLVED,
	UABI_CM_ROUTE_RESOLVED,
	UABI_CM_LISTEN,
	UABI_CM_CONNECT,		/* active: request sent */
	UABI_CM_REQ_RCVD,		/* passive: request not yet accepted */
	UABI_CM_REP_SENT,		/* passive: accepted, waiting for RTU */
	UABI_CM_REP_RCVD,		/* active: accepted, RTU not yet sent */
	UABI_CM_ESTABLISHED,
	UABI_CM_DISCONNECTED,
};

/* An address: a sockaddr_in or sockaddr_in6 (port in network order). */
struct uabi_cm_addr {
	__u8 bytes[UABI_CM_ADDR_SIZE];
};
UABI_ASSERT_SIZE(struct uabi_cm_addr, 128);

struct uabi_cm_id_create {
	__u64 uid;			/* the caller's cookie, in its events */
	__u16 ps;			/* UABI_CM_PS_* */
	__u8 qp_type;			/* UABI_QPT_RC, _UC or _UD */
	__u8 reserved[5];
};
UABI_ASSERT_SIZE(struct uabi_cm_id_create, 16);

/* The layout of struct rdma_ucm_conn_param. */
struct uabi_cm_conn_param {
	__u32 qp_num;
	__u32 qkey;
	__u8 private_data[UABI_CM_PRIVATE_DATA_MAX];
	__u8 private_data_len;
	__u8 srq;
	__u8 responder_resources;
	__u8 initiator_depth;
	__u8 flow_control;
	__u8 retry_count;
	__u8 rnr_retry_count;
	__u8 valid;
};
UABI_ASSERT_SIZE(struct uabi_cm_conn_param, 272);
UABI_ASSERT_OFFSET(struct uabi_cm_conn_param, private_data_len, 264);

/* uabi_cm_resolve.flags: the caller found @dst on no interface of this
 * host (the core cannot look): ADDR_ERROR (-ENODEV) instead; or found it
 * is another host's, reached from @src (the route's source address): it
 * resolves through the RoCE device that has @src (CM MADs over the wire,
 * docs/cm.md), ADDR_ERROR (-ENODEV) if none has. */
enum {
	UABI_CM_RESOLVE_F_NOT_LOCAL = 1u << 0,
	UABI_CM_RESOLVE_F_REMOTE = 1u << 1,
};

struct uabi_cm_resolve {
	struct uabi_cm_addr src;	/* family 0: any */
	struct uabi_cm_addr dst;
	__u32 timeout_ms;
	__u32 flags;			/* UABI_CM_RESOLVE_F_* */
};
UABI_ASSERT_SIZE(struct uabi_cm_resolve, 264);

struct uabi_cm_reject {
	__u8 private_data[UABI_CM_PRIVATE_DATA_MAX];
	__u8 private_data_len;
	__u8 reason;
	__u8 reserved[6];
};
UABI_ASSERT_SIZE(struct uabi_cm_reject, 264);

/* What the ID knows of its addresses and path (QUERY). */
struct uabi_cm_id_info {
	__u64 node_guid;		/* 0 until bound to the device */
	__u32 state;			/* UABI_CM_* */
	__u32 events_reported;		/* events of this ID taken from its channel */
	__u16 pkey;
	__u8 port_num;			/* 0 until bound to the device */
	__u8 qp_type;
	__u16 ps;
	__u16 slid;
	__u16 dlid;
	__u8 mtu;			/* UABI_MTU_* */
	__u8 num_paths;			/* 1 once the route is resolved */
	__u8 sgid[16];
	__u8 dgid[16];
	__u32 reserved;
	struct uabi_cm_addr src;
	struct uabi_cm_addr dst;
};
UABI_ASSERT_SIZE(struct uabi_cm_id_info, 320);
UABI_ASSERT_OFFSET(struct uabi_cm_id_info, src, 64);

/* One event (the channel's GET_EVENT).  For a UD ID's CONNECT_REQUEST and
 * ESTABLISHED (the IB CM's SIDR), conn.qp_num and conn.qkey are the
 * peer's and ah reaches it. */
struct uabi_cm_event {
	__u64 uid;			/* the ID's cookie (a request: the listener's) */
	__u32 handle;			/* the ID (a request: the new ID) */
	__u32 event;			/* UABI_CM_EVENT_* */
	__s32 status;
	__u8 qp_type;			/* the ID's */
	__u8 reserved[3];
	struct uabi_cm_conn_param conn;
	struct uabi_ah_attr ah;
};
UABI_ASSERT_SIZE(struct uabi_cm_event, 328);

/* How JOIN_MCAST joins, as RDMA_MC_JOIN_FLAG_*. */
enum {
	UABI_CM_MC_FULLMEMBER = 0,
	UABI_CM_MC_SENDONLY_FULLMEMBER = 1,
};

/* JOIN_MCAST: a UD ID joins the multicast group of an IP address.  The
 * MULTICAST_JOIN event that follows carries @uid (not the ID's), the
 * group's QPN (0xffffff) and QKey in conn, and in ah its MGID (the IPoIB
 * mapping of the address) and MLID, for ibv_attach_mcast() and for
 * sending to the group.  LEAVE_MCAST drops the group's queued events and
 * answers how many of them were reported. */
/* uabi_cm_mcast.flags: @addr is an IPv6 address carrying the group's MGID
 * itself (an AF_IB group of librdmacm, e.g. `mckey -M`), taken as it is
 * rather than mapped as an IP group's. */
#define UABI_CM_MCAST_F_MGID 0x1u

struct uabi_cm_mcast {
	struct uabi_cm_addr addr;
	__u64 uid;
	__u32 join_flags;		/* UABI_CM_MC_* */
	__u32 flags;			/* UABI_CM_MCAST_F_* */
};
UABI_ASSERT_SIZE(struct uabi_cm_mcast, 144);

/* SET_OPTION: one option of an ID, as rdma_set_option()'s at level
 * RDMA_OPTION_ID (the same numbers), its value widened to 32 bits. */
enum {
	UABI_CM_OPT_TOS = 0,		/* the traffic class (u8), any state */
	UABI_CM_OPT_REUSEADDR = 1,	/* 0/1; IDLE, or set while not LISTEN */
	UABI_CM_OPT_AFONLY = 2,		/* 0/1; IDLE or BOUND */
	UABI_CM_OPT_ACK_TIMEOUT = 3,	/* the QP's (u8, 4.096 us * 2^t); RC, XRC_SEND */
};

struct uabi_cm_option {
	__u32 name;			/* UABI_CM_OPT_* */
	__u32 value;
};
UABI_ASSERT_SIZE(struct uabi_cm_option, 8);

/* What INIT_QP_ATTR answers: the attributes to give the QP for one state
 * and which of them count (UABI_QP_* mask bits). */
struct uabi_cm_qp_attr {
	struct uabi_qp_attr attr;
	__u32 mask;
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_cm_qp_attr, 152);

#endif /* RDMA_UABI_CM_H */
