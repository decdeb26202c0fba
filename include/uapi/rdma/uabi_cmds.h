/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi uAPI: what a command names — objects, methods, and the
 * attributes of each method (docs/uapi.md, "Objects and methods").  The
 * structs and values the attributes carry are in <rdma/uabi_verbs.h>; the
 * software device's driver namespace is in <rdma/uabi_sw.h>.
 *
 * Every id here is append-only: a new one goes at the end of its list and
 * an id is never reused.
 */
#ifndef RDMA_UABI_CMDS_H
#define RDMA_UABI_CMDS_H

#include <rdma/uabi_msg.h>

enum uabi_object {
	UABI_OBJ_DEVICE = 1,
	UABI_OBJ_PD = 2,
	UABI_OBJ_MR = 3,
	UABI_OBJ_CQ = 4,
	UABI_OBJ_COMP_CHANNEL = 5,
	UABI_OBJ_ASYNC_EVENT = 6,
	UABI_OBJ_QP = 7,
	UABI_OBJ_SRQ = 8,
	UABI_OBJ_AH = 9,
	UABI_OBJ_XRCD = 10,
	UABI_OBJ_MW = 11,
	UABI_OBJ_CM_CHANNEL = 12,
	UABI_OBJ_CM_ID = 13,
	UABI_OBJ_MAX_CORE,
};

enum uabi_method {
	UABI_METHOD_CREATE = 1,
	UABI_METHOD_QUERY = 2,
	UABI_METHOD_MODIFY = 3,
	UABI_METHOD_DESTROY = 4,
	UABI_METHOD_CALL = 5,		/* driver method; attrs say which */
	UABI_METHOD_OBJECT_FIRST = 16,	/* object-specific methods from here */
};

/* ---------------------------------------------------------------- device */
enum {
	UABI_DEVICE_QUERY_PORT = UABI_METHOD_OBJECT_FIRST,
	UABI_DEVICE_QUERY_GID,
	UABI_DEVICE_QUERY_PKEY,
	UABI_DEVICE_DISCOVER,
	UABI_DEVICE_COUNTERS,
	UABI_DEVICE_LIST_OBJECTS,	/* live objects, like `rdma res show` */
};

enum {
	UABI_ATTR_DEVICE_INFO = 1,	/* out struct uabi_device_attr (QUERY) */
	UABI_ATTR_DEVICE_PORT_NUM,	/* in __u32 */
	UABI_ATTR_DEVICE_PORT_INFO,	/* out struct uabi_port_attr */
	UABI_ATTR_DEVICE_INDEX,		/* in __u32: gid or pkey index */
	UABI_ATTR_DEVICE_GID,		/* out __u8[16] */
	UABI_ATTR_DEVICE_PKEY,		/* out __u16 */
	UABI_ATTR_DEVICE_DISCOVERY,	/* out struct uabi_discovery + entries */
	UABI_ATTR_DEVICE_COUNTERS,	/* out struct uabi_counters */
	UABI_ATTR_DEVICE_NAME,		/* out char[64] (QUERY) */
	UABI_ATTR_DEVICE_LIST_SCOPE,	/* in __u32 UABI_LIST_* (LIST_OBJECTS) */
	UABI_ATTR_DEVICE_LIST_AFTER,	/* in struct uabi_object_cursor */
	UABI_ATTR_DEVICE_OBJECTS,	/* out struct uabi_object_list + entries */
};

/* -------------------------------------------------------------------- PD */
/* CREATE, QUERY, DESTROY: no attributes.  QUERY only finds the PD (the
 * handle of an imported PD is checked with it, ibv_import_pd(3)). */

/* -------------------------------------------------------------------- MR */
/* MODIFY re-registers in place (ibv_rereg_mr(3)): the keys stay, and the
 * very next work request sees the new registration. */
enum {
	UABI_ATTR_MR_PD = 1,		/* in handle; MODIFY: the new PD */
	UABI_ATTR_MR_REG,		/* in struct uabi_mr_reg; MODIFY: the new
					 * translation and/or access */
	UABI_ATTR_MR_KEYS,		/* out struct uabi_mr_keys */
	UABI_ATTR_MR_REREG_FLAGS,	/* MODIFY: in __u32 UABI_MR_REREG_* */
};

/* What a MODIFY of an MR changes (enum ibv_rereg_mr_flags). */
enum {
	UABI_MR_REREG_TRANSLATION = 1u << 0,	/* addr, length, iova */
	UABI_MR_REREG_PD = 1u << 1,
	UABI_MR_REREG_ACCESS = 1u << 2,
};

/* -------------------------------------------------------------------- CQ */
enum {
	UABI_ATTR_CQ_CQE = 1,		/* in __u32: minimum entries */
	UABI_ATTR_CQ_CHANNEL,		/* in handle (optional) */
	UABI_ATTR_CQ_COMP_VECTOR,	/* in __u32 (optional) */
	UABI_ATTR_CQ_USER_HANDLE,	/* in __u64, echoed in events */
	UABI_ATTR_CQ_RESP,		/* out struct uabi_cq_resp */
};
/* MODIFY = resize: UABI_ATTR_CQ_CQE in, UABI_ATTR_CQ_RESP out. */

/* ----------------------------------------------- completion channel, async */
enum {
	UABI_ATTR_EVQ_FD = 1,		/* out __s32: pollable fd (UABI_ATTR_F_FD) */
	UABI_ATTR_EVQ_EVENT,		/* out struct uabi_event */
};

enum {
	UABI_EVQ_GET_EVENT = UABI_METHOD_OBJECT_FIRST, /* -EAGAIN when empty */
};

/* -------------------------------------------------------------------- QP */
enum {
	UABI_ATTR_QP_PD = 1,		/* in handle */
	UABI_ATTR_QP_SEND_CQ,		/* in handle */
	UABI_ATTR_QP_RECV_CQ,		/* in handle */
	UABI_ATTR_QP_SRQ,		/* in handle (optional) */
	UABI_ATTR_QP_XRCD,		/* in handle (XRC_RECV only) */
	UABI_ATTR_QP_INIT,		/* in struct uabi_qp_init */
	UABI_ATTR_QP_USER_HANDLE,	/* in __u64 */
	UABI_ATTR_QP_ATTR,		/* in (CREATE, MODIFY) / out (QUERY) struct uabi_qp_attr */
	UABI_ATTR_QP_ATTR_MASK,		/* in __u32 UABI_QP_* mask */
	UABI_ATTR_QP_RESP,		/* out struct uabi_qp_resp */
	UABI_ATTR_QP_INIT_OUT,		/* out struct uabi_qp_init (QUERY) */
	UABI_ATTR_QP_MCAST,		/* in struct uabi_mcast (ATTACH/DETACH_MCAST) */
};

/* ibv_attach_mcast(3), ibv_detach_mcast(3): UD QPs only; attaching again
 * to a group the QP is in does nothing, detaching from one it is not in is
 * -EINVAL; destroying the QP detaches it from every group. */
enum {
	UABI_QP_ATTACH_MCAST = UABI_METHOD_OBJECT_FIRST,
	UABI_QP_DETACH_MCAST,
};

/* ------------------------------------------------------------------- SRQ */
enum {
	UABI_ATTR_SRQ_PD = 1,		/* in handle */
	UABI_ATTR_SRQ_XRCD,		/* in handle (XRC) */
	UABI_ATTR_SRQ_CQ,		/* in handle (XRC) */
	UABI_ATTR_SRQ_INIT,		/* in struct uabi_srq_init */
	UABI_ATTR_SRQ_USER_HANDLE,	/* in __u64 */
	UABI_ATTR_SRQ_RESP,		/* out struct uabi_srq_resp */
	UABI_ATTR_SRQ_ATTR,		/* in (MODIFY) / out (QUERY) struct uabi_srq_attr */
	UABI_ATTR_SRQ_ATTR_MASK,	/* in __u32: UABI_SRQ_MAX_WR | UABI_SRQ_LIMIT */
};

/* -------------------------------------------------------------------- AH */
enum {
	UABI_ATTR_AH_PD = 1,		/* in handle */
	UABI_ATTR_AH_ATTR,		/* in struct uabi_ah_attr */
};

/* ------------------------------------------------------------------ XRCD */
enum {
	UABI_ATTR_XRCD_FD = 1,		/* in __s32 fd (UABI_ATTR_F_FD) or -1 */
	UABI_ATTR_XRCD_OFLAGS,		/* in __u32: UABI_XRCD_O_* */
	UABI_ATTR_XRCD_QPN,		/* in/out __u32 */
	UABI_ATTR_XRCD_QP_ATTR,		/* in/out struct uabi_qp_attr */
	UABI_ATTR_XRCD_QP_ATTR_MASK,	/* in __u32 */
	UABI_ATTR_XRCD_QP_INIT,		/* in struct uabi_qp_init (create) */
	UABI_ATTR_XRCD_USER_HANDLE,	/* in __u64: element of async events */
};

enum {
	/* handle = xrcd; QPN in/out (UABI_XRC_QPN_CREATE creates);
	 * out_handle is the registration, a QP handle of type XRC_RECV in
	 * this context. */
	UABI_XRCD_REG_RCV_QP = UABI_METHOD_OBJECT_FIRST,
	/* handle = xrcd; QPN in: drops one registration of this context. */
	UABI_XRCD_UNREG_RCV_QP,
	/* handle = xrcd; QPN, QP_ATTR, QP_ATTR_MASK in. */
	UABI_XRCD_MODIFY_RCV_QP,
	/* handle = xrcd; QPN in, QP_ATTR out. */
	UABI_XRCD_QUERY_RCV_QP,
};

/* -------------------------------------------------------------------- MW */
/* CREATE allocates an unbound window (its first rkey out); BIND binds it to
 * a range of an MR through a QP (ibv_bind_mw(3) for type 1, a BIND_MW work
 * request for type 2: the data path asks when it executes that request).
 * Invalidations name a key and are the driver's (LOCAL_INV, SEND_WITH_INV:
 * UABI_SW_ARENA_INVALIDATE on the software device).  CREATE answers
 * -EOPNOTSUPP on a device without windows (max_mw 0). */
enum {
	UABI_MW_BIND = UABI_METHOD_OBJECT_FIRST,
};

enum {
	UABI_ATTR_MW_PD = 1,		/* CREATE: in handle */
	UABI_ATTR_MW_TYPE,		/* CREATE: in __u32 UABI_MW_TYPE_* */
	UABI_ATTR_MW_RKEY,		/* CREATE, BIND: out __u32 */
	UABI_ATTR_MW_MR,		/* BIND: in handle */
	UABI_ATTR_MW_QP,		/* BIND: in handle */
	UABI_ATTR_MW_BIND,		/* BIND: in struct uabi_mw_bind */
};

/* ------------------------------------------------------------ CM channel */
/* CREATE hands out a pollable fd, readable while events are pending
 * (<rdma/uabi_cm.h>, docs/cm.md).  GET_EVENT takes the oldest event:
 * -EAGAIN when there is none; a connect request creates the new CM ID in
 * the caller's context (its handle is in the event). */
enum {
	UABI_CM_CHANNEL_GET_EVENT = UABI_METHOD_OBJECT_FIRST,
};

enum {
	UABI_ATTR_CM_CHANNEL_FD = 1,	/* CREATE: out __s32 (UABI_ATTR_F_FD) */
	UABI_ATTR_CM_CHANNEL_EVENT,	/* GET_EVENT: out struct uabi_cm_event */
};

/* ----------------------------------------------------------------- CM ID */
/* CREATE (CHANNEL, ID_CREATE in), QUERY (ID_INFO out), DESTROY (ID_INFO
 * out: events_reported is final, the ID's pending events are dropped). */
enum {
	UABI_CM_ID_BIND = UABI_METHOD_OBJECT_FIRST, /* ADDR in */
	UABI_CM_ID_RESOLVE_ADDR,	/* RESOLVE in */
	UABI_CM_ID_RESOLVE_ROUTE,	/* no attributes */
	UABI_CM_ID_LISTEN,		/* BACKLOG in */
	UABI_CM_ID_CONNECT,		/* CONN in */
	UABI_CM_ID_ACCEPT,		/* CONN in, UID in (optional) */
	UABI_CM_ID_REJECT,		/* REJECT in */
	UABI_CM_ID_DISCONNECT,		/* no attributes */
	UABI_CM_ID_INIT_QP_ATTR,	/* QP_STATE in, QP_ATTR out */
	UABI_CM_ID_NOTIFY,		/* EVENT_TYPE in */
	UABI_CM_ID_MIGRATE,		/* CHANNEL in (of the same context), ID_INFO out */
	UABI_CM_ID_JOIN_MCAST,		/* MCAST in, MCAST_ID out */
	UABI_CM_ID_LEAVE_MCAST,		/* MCAST_ID in, EVENTS out */
	UABI_CM_ID_SET_OPTION,		/* OPTION in */
};

enum {
	UABI_ATTR_CM_ID_CHANNEL = 1,	/* CREATE: in handle */
	UABI_ATTR_CM_ID_CREATE,		/* CREATE: in struct uabi_cm_id_create */
	UABI_ATTR_CM_ID_INFO,		/* out struct uabi_cm_id_info */
	UABI_ATTR_CM_ID_ADDR,		/* in struct uabi_cm_addr */
	UABI_ATTR_CM_ID_RESOLVE,	/* in struct uabi_cm_resolve */
	UABI_ATTR_CM_ID_BACKLOG,	/* in __u32 */
	UABI_ATTR_CM_ID_CONN,		/* in struct uabi_cm_conn_param */
	UABI_ATTR_CM_ID_UID,		/* in __u64 */
	UABI_ATTR_CM_ID_REJECT,		/* in struct uabi_cm_reject */
	UABI_ATTR_CM_ID_QP_STATE,	/* in __u32 UABI_QPS_* */
	UABI_ATTR_CM_ID_QP_ATTR,	/* out struct uabi_cm_qp_attr */
	UABI_ATTR_CM_ID_EVENT_TYPE,	/* in __u32 */
	UABI_ATTR_CM_ID_MCAST,		/* in struct uabi_cm_mcast */
	UABI_ATTR_CM_ID_MCAST_ID,	/* __u32: a group the ID joined */
	UABI_ATTR_CM_ID_EVENTS,		/* out __u32: events reported */
	UABI_ATTR_CM_ID_OPTION,		/* in struct uabi_cm_option */
};

#endif /* RDMA_UABI_CMDS_H */
