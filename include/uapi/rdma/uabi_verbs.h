/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi uAPI: the structs that attributes carry and the values their
 * fields take.
 *
 * Where a value has a counterpart in libibverbs (<infiniband/verbs.h>) and
 * in Linux's uverbs uAPI, it is defined here as a constant of our own with
 * the same number, so that neither the kernel nor the client needs those
 * headers to speak this uAPI, and so that a translator between the two can
 * pass a value through unchanged (tests/uapi checks every one of them
 * against <infiniband/verbs.h>).
 */
#ifndef RDMA_UABI_VERBS_H
#define RDMA_UABI_VERBS_H

#include <rdma/uabi_types.h>

/* ------------------------------------------------------------ device */

/* struct uabi_device_attr.device_cap_flags, as enum ibv_device_cap_flags. */
enum {
	UABI_DEVICE_CAP_RESIZE_MAX_WR = 1u << 0,
	UABI_DEVICE_CAP_BAD_PKEY_CNTR = 1u << 1,
	UABI_DEVICE_CAP_BAD_QKEY_CNTR = 1u << 2,
	UABI_DEVICE_CAP_RAW_MULTI = 1u << 3,
	UABI_DEVICE_CAP_AUTO_PATH_MIG = 1u << 4,
	UABI_DEVICE_CAP_CHANGE_PHY_PORT = 1u << 5,
	UABI_DEVICE_CAP_UD_AV_PORT_ENFORCE = 1u << 6,
	UABI_DEVICE_CAP_CURR_QP_STATE_MOD = 1u << 7,
	UABI_DEVICE_CAP_SHUTDOWN_PORT = 1u << 8,
	UABI_DEVICE_CAP_INIT_TYPE = 1u << 9,
	UABI_DEVICE_CAP_PORT_ACTIVE_EVENT = 1u << 10,
	UABI_DEVICE_CAP_SYS_IMAGE_GUID = 1u << 11,
	UABI_DEVICE_CAP_RC_RNR_NAK_GEN = 1u << 12,
	UABI_DEVICE_CAP_SRQ_RESIZE = 1u << 13,
	UABI_DEVICE_CAP_N_NOTIFY_CQ = 1u << 14,
	UABI_DEVICE_CAP_MEM_WINDOW = 1u << 17,
	UABI_DEVICE_CAP_UD_IP_CSUM = 1u << 18,
	UABI_DEVICE_CAP_XRC = 1u << 20,
	UABI_DEVICE_CAP_MEM_MGT_EXTENSIONS = 1u << 21,
	UABI_DEVICE_CAP_MEM_WINDOW_TYPE_2A = 1u << 23,
	UABI_DEVICE_CAP_MEM_WINDOW_TYPE_2B = 1u << 24,
	UABI_DEVICE_CAP_RC_IP_CSUM = 1u << 25,
	UABI_DEVICE_CAP_RAW_IP_CSUM = 1u << 26,
	UABI_DEVICE_CAP_MANAGED_FLOW_STEERING = 1u << 29,
};

/* struct uabi_device_attr.atomic_cap, as enum ibv_atomic_cap. */
enum {
	UABI_ATOMIC_NONE = 0,
	UABI_ATOMIC_HCA = 1,
	UABI_ATOMIC_GLOB = 2,
};

struct uabi_device_attr {
	__aligned_u64 fw_ver;
	__aligned_u64 node_guid;
	__aligned_u64 sys_image_guid;
	__aligned_u64 max_mr_size;
	__aligned_u64 page_size_cap;
	__u32 vendor_id;
	__u32 vendor_part_id;
	__u32 hw_ver;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 device_cap_flags;	/* UABI_DEVICE_CAP_* */
	__u32 max_sge;
	__u32 max_sge_rd;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_mr;
	__u32 max_pd;
	__u32 max_qp_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 max_res_rd_atom;
	__u32 atomic_cap;	/* UABI_ATOMIC_* */
	__u32 max_mw;
	__u32 max_ah;
	__u32 max_srq;
	__u32 max_srq_wr;
	__u32 max_srq_sge;
	__u32 max_xrcd;
	__u16 max_pkeys;
	__u8 local_ca_ack_delay;
	__u8 phys_port_cnt;
	__u32 max_inline_data;
	__u32 max_mcast_grp;		/* multicast groups (of a user) */
	__u32 max_mcast_qp_attach;	/* QPs attached to one group */
	__u32 max_total_mcast_qp_attach;
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_device_attr, 152);
UABI_ASSERT_OFFSET(struct uabi_device_attr, vendor_id, 40);
UABI_ASSERT_OFFSET(struct uabi_device_attr, max_xrcd, 124);
UABI_ASSERT_OFFSET(struct uabi_device_attr, max_pkeys, 128);
UABI_ASSERT_OFFSET(struct uabi_device_attr, max_inline_data, 132);
UABI_ASSERT_OFFSET(struct uabi_device_attr, max_mcast_grp, 136);

/* -------------------------------------------------------------- port */

/* struct uabi_port_attr.state, as enum ibv_port_state. */
enum {
	UABI_PORT_NOP = 0,
	UABI_PORT_DOWN = 1,
	UABI_PORT_INIT = 2,
	UABI_PORT_ARMED = 3,
	UABI_PORT_ACTIVE = 4,
	UABI_PORT_ACTIVE_DEFER = 5,
};

/* Path MTUs (port max_mtu/active_mtu, QP path_mtu), as enum ibv_mtu. */
enum {
	UABI_MTU_256 = 1,
	UABI_MTU_512 = 2,
	UABI_MTU_1024 = 3,
	UABI_MTU_2048 = 4,
	UABI_MTU_4096 = 5,
};

/* struct uabi_port_attr.phys_state: the InfiniBand PortPhysicalState, as
 * ibv_devinfo prints it and Linux's enum ib_port_phys_state numbers it. */
enum {
	UABI_PORT_PHYS_STATE_SLEEP = 1,
	UABI_PORT_PHYS_STATE_POLLING = 2,
	UABI_PORT_PHYS_STATE_DISABLED = 3,
	UABI_PORT_PHYS_STATE_PORT_CONFIGURATION_TRAINING = 4,
	UABI_PORT_PHYS_STATE_LINK_UP = 5,
	UABI_PORT_PHYS_STATE_LINK_ERROR_RECOVERY = 6,
	UABI_PORT_PHYS_STATE_PHY_TEST = 7,
};

/* struct uabi_port_attr.active_width, InfiniBand encoding. */
enum {
	UABI_WIDTH_1X = 1,
	UABI_WIDTH_4X = 2,
	UABI_WIDTH_8X = 4,
	UABI_WIDTH_12X = 8,
	UABI_WIDTH_2X = 16,
};

/* struct uabi_port_attr.active_speed, InfiniBand encoding. */
enum {
	UABI_SPEED_SDR = 1,
	UABI_SPEED_DDR = 2,
	UABI_SPEED_QDR = 4,
	UABI_SPEED_FDR10 = 8,
	UABI_SPEED_FDR = 16,
	UABI_SPEED_EDR = 32,
	UABI_SPEED_HDR = 64,
	UABI_SPEED_NDR = 128,
};

/* struct uabi_port_attr.link_layer, as IBV_LINK_LAYER_*. */
enum {
	UABI_LINK_LAYER_UNSPECIFIED = 0,
	UABI_LINK_LAYER_INFINIBAND = 1,
	UABI_LINK_LAYER_ETHERNET = 2,
};

struct uabi_port_attr {
	__u32 state;		/* UABI_PORT_* */
	__u32 max_mtu;		/* UABI_MTU_* */
	__u32 active_mtu;	/* UABI_MTU_* */
	__u32 gid_tbl_len;
	__u32 port_cap_flags;
	__u32 max_msg_sz;
	__u32 bad_pkey_cntr;
	__u32 qkey_viol_cntr;
	__u16 pkey_tbl_len;
	__u16 lid;
	__u16 sm_lid;
	__u8 lmc;
	__u8 max_vl_num;
	__u8 sm_sl;
	__u8 subnet_timeout;
	__u8 init_type_reply;
	__u8 active_width;	/* UABI_WIDTH_* */
	__u8 active_speed;	/* UABI_SPEED_* */
	__u8 phys_state;	/* UABI_PORT_PHYS_STATE_* */
	__u8 link_layer;	/* UABI_LINK_LAYER_* */
	__u8 flags;
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_port_attr, 52);
UABI_ASSERT_OFFSET(struct uabi_port_attr, pkey_tbl_len, 32);
UABI_ASSERT_OFFSET(struct uabi_port_attr, lmc, 38);
UABI_ASSERT_OFFSET(struct uabi_port_attr, flags, 47);
UABI_ASSERT_OFFSET(struct uabi_port_attr, reserved, 48);

/* --------------------------------------------------------- discovery */

/* One entry per (object, method, attribute).  An entry with attr_id 0
 * announces the method itself. */
struct uabi_discovery_entry {
	__u16 object;
	__u16 method;
	__u16 attr_id;
	__u16 attr_flags;	/* UABI_SPEC_F_* */
	__u32 attr_min_len;
	__u32 attr_max_len;
};
UABI_ASSERT_SIZE(struct uabi_discovery_entry, 16);
UABI_ASSERT_OFFSET(struct uabi_discovery_entry, attr_min_len, 8);

enum {
	UABI_SPEC_F_MANDATORY = 1u << 0,	/* must be present */
	UABI_SPEC_F_OUTPUT = 1u << 1,
	UABI_SPEC_F_HANDLE = 1u << 2,		/* payload is a __u32 handle */
	UABI_SPEC_F_FD = 1u << 3,
	/* In/out: sent with UABI_ATTR_F_OUTPUT, its payload carrying the
	 * input value, which the receiver overwrites. */
	UABI_SPEC_F_INOUT = 1u << 4,
	UABI_SPEC_F_METHOD_CREATES = 1u << 8,	/* on the attr_id 0 entry */
	UABI_SPEC_F_METHOD_READONLY = 1u << 9,
};

struct uabi_discovery {
	__u32 total;		/* entries the device has */
	__u32 returned;		/* entries written below */
	struct uabi_discovery_entry entries[];
};
UABI_ASSERT_SIZE(struct uabi_discovery, 8);

/* Live objects, device-wide and for the calling context. */
struct uabi_counters {
	__u32 num_types;	/* UABI_OBJ_MAX_CORE */
	__u32 contexts;		/* open contexts on the device */
	__u32 device[16];	/* indexed by enum uabi_object */
	__u32 context[16];
};
UABI_ASSERT_SIZE(struct uabi_counters, 136);
UABI_ASSERT_OFFSET(struct uabi_counters, context, 72);

/* DEVICE / LIST_OBJECTS: whose objects (UABI_ATTR_DEVICE_LIST_SCOPE). */
enum {
	UABI_LIST_CONTEXT = 0,	/* the calling context's (the default) */
	UABI_LIST_USER = 1,	/* every context of the calling user (uid) */
};

/* A place in a listing: entries are ordered by context, then handle, and
 * a listing resumes after the given pair ({0, 0}: from the start). */
struct uabi_object_cursor {
	__u32 context;
	__u32 handle;
};
UABI_ASSERT_SIZE(struct uabi_object_cursor, 8);

/* struct uabi_object_info.flags */
enum {
	/* Another command held the object while it was listed: the type
	 * details below are zero. */
	UABI_OBJECT_INFO_F_BUSY = 1u << 0,
};

/* One live object.  Fields that do not apply to its type are zero. */
struct uabi_object_info {
	__u32 context;		/* the owning context's number on the device */
	__s32 pid;		/* the context's process, as the host saw it */
	__u32 uid;
	__u16 type;		/* enum uabi_object */
	__u16 flags;		/* UABI_OBJECT_INFO_F_* */
	__u32 handle;
	__u32 reserved;
	__aligned_u64 user_handle;
	__u32 qpn;		/* QP (an XRC registration: its shared QP) */
	__u32 qp_type;		/* QP: UABI_QPT_* */
	__u32 qp_state;		/* QP: UABI_QPS_* */
	__u32 lkey;		/* MR */
	__u32 rkey;		/* MR */
	__u32 cqe;		/* CQ */
	__u32 cqn;		/* CQ */
	__u32 srqn;		/* SRQ (XRC; 0 for a basic SRQ) */
	__u32 srq_type;		/* SRQ: UABI_SRQT_* */
	__u32 reserved2;
	__aligned_u64 addr;	/* MR */
	__aligned_u64 length;	/* MR */
};
UABI_ASSERT_SIZE(struct uabi_object_info, 88);
UABI_ASSERT_OFFSET(struct uabi_object_info, user_handle, 24);
UABI_ASSERT_OFFSET(struct uabi_object_info, qpn, 32);
UABI_ASSERT_OFFSET(struct uabi_object_info, addr, 72);

struct uabi_object_list {
	__u32 count;		/* entries written below */
	__u32 more;		/* 1: the buffer was full; ask again after the
				 * last entry */
	struct uabi_object_info entries[];
};
UABI_ASSERT_SIZE(struct uabi_object_list, 8);

/* ---------------------------------------------------------------- MR */

/* struct uabi_mr_reg.access (and QP qp_access_flags), as enum
 * ibv_access_flags.  Bits UABI_ACCESS_OPTIONAL_FIRST to _LAST are hints a
 * device may ignore. */
enum {
	UABI_ACCESS_LOCAL_WRITE = 1u << 0,
	UABI_ACCESS_REMOTE_WRITE = 1u << 1,
	UABI_ACCESS_REMOTE_READ = 1u << 2,
	UABI_ACCESS_REMOTE_ATOMIC = 1u << 3,
	UABI_ACCESS_MW_BIND = 1u << 4,
	UABI_ACCESS_ZERO_BASED = 1u << 5,
	UABI_ACCESS_ON_DEMAND = 1u << 6,
	UABI_ACCESS_HUGETLB = 1u << 7,
	UABI_ACCESS_OPTIONAL_FIRST = 1u << 20,
	UABI_ACCESS_OPTIONAL_LAST = 1u << 29,
	UABI_ACCESS_RELAXED_ORDERING = UABI_ACCESS_OPTIONAL_FIRST,
};
#define UABI_ACCESS_OPTIONAL_RANGE \
	(((UABI_ACCESS_OPTIONAL_LAST << 1) - 1u) & ~(UABI_ACCESS_OPTIONAL_FIRST - 1u))

struct uabi_mr_reg {
	__aligned_u64 addr;	/* start in the owner's address space */
	__aligned_u64 length;
	__aligned_u64 iova;	/* address the peers use (== addr for ibv_reg_mr) */
	__u32 access;		/* UABI_ACCESS_* */
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_mr_reg, 32);
UABI_ASSERT_OFFSET(struct uabi_mr_reg, access, 24);

struct uabi_mr_keys {
	__u32 lkey;
	__u32 rkey;
};
UABI_ASSERT_SIZE(struct uabi_mr_keys, 8);

/* ---------------------------------------------------------------- CQ */
struct uabi_cq_resp {
	__u32 cqe;
	__u32 cqn;
};
UABI_ASSERT_SIZE(struct uabi_cq_resp, 8);

/* ----------------------------------------------------------- events */

/* struct uabi_event.event_type of an async event, as enum ibv_event_type
 * (a completion event carries 0). */
enum {
	UABI_EVENT_CQ_ERR = 0,
	UABI_EVENT_QP_FATAL = 1,
	UABI_EVENT_QP_REQ_ERR = 2,
	UABI_EVENT_QP_ACCESS_ERR = 3,
	UABI_EVENT_COMM_EST = 4,
	UABI_EVENT_SQ_DRAINED = 5,
	UABI_EVENT_PATH_MIG = 6,
	UABI_EVENT_PATH_MIG_ERR = 7,
	UABI_EVENT_DEVICE_FATAL = 8,
	UABI_EVENT_PORT_ACTIVE = 9,
	UABI_EVENT_PORT_ERR = 10,
	UABI_EVENT_LID_CHANGE = 11,
	UABI_EVENT_PKEY_CHANGE = 12,
	UABI_EVENT_SM_CHANGE = 13,
	UABI_EVENT_SRQ_ERR = 14,
	UABI_EVENT_SRQ_LIMIT_REACHED = 15,
	UABI_EVENT_QP_LAST_WQE_REACHED = 16,
	UABI_EVENT_CLIENT_REREGISTER = 17,
	UABI_EVENT_GID_CHANGE = 18,
	UABI_EVENT_WQ_FATAL = 19,
};

struct uabi_event {
	__aligned_u64 element;	/* user handle of the CQ/QP/SRQ, or port number */
	__u32 event_type;	/* UABI_EVENT_* (async) or 0 (completion) */
	__u32 object_handle;	/* handle of the CQ/QP/SRQ in this context */
	__u32 xrc_qpn;		/* qpn of an XRC receive QP, else 0 */
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_event, 24);
UABI_ASSERT_OFFSET(struct uabi_event, event_type, 8);
UABI_ASSERT_OFFSET(struct uabi_event, reserved, 20);

/* ---------------------------------------------------------------- QP */

/* QP types, as enum ibv_qp_type. */
enum {
	UABI_QPT_RC = 2,
	UABI_QPT_UC = 3,
	UABI_QPT_UD = 4,
	UABI_QPT_XRC_SEND = 9,
	UABI_QPT_XRC_RECV = 10,
};

/* QP states, as enum ibv_qp_state. */
enum {
	UABI_QPS_RESET, UABI_QPS_INIT, UABI_QPS_RTR, UABI_QPS_RTS,
	UABI_QPS_SQD, UABI_QPS_SQE, UABI_QPS_ERR, UABI_QPS_NUM
};

/* struct uabi_qp_attr.path_mig_state, as enum ibv_mig_state. */
enum {
	UABI_MIG_MIGRATED = 0,
	UABI_MIG_REARM = 1,
	UABI_MIG_ARMED = 2,
};

/* Attribute mask bits, as enum ibv_qp_attr_mask. */
enum {
	UABI_QP_STATE = 1u << 0,
	UABI_QP_CUR_STATE = 1u << 1,
	UABI_QP_EN_SQD_ASYNC_NOTIFY = 1u << 2,
	UABI_QP_ACCESS_FLAGS = 1u << 3,
	UABI_QP_PKEY_INDEX = 1u << 4,
	UABI_QP_PORT = 1u << 5,
	UABI_QP_QKEY = 1u << 6,
	UABI_QP_AV = 1u << 7,
	UABI_QP_PATH_MTU = 1u << 8,
	UABI_QP_TIMEOUT = 1u << 9,
	UABI_QP_RETRY_CNT = 1u << 10,
	UABI_QP_RNR_RETRY = 1u << 11,
	UABI_QP_RQ_PSN = 1u << 12,
	UABI_QP_MAX_QP_RD_ATOMIC = 1u << 13,
	UABI_QP_ALT_PATH = 1u << 14,
	UABI_QP_MIN_RNR_TIMER = 1u << 15,
	UABI_QP_SQ_PSN = 1u << 16,
	UABI_QP_MAX_DEST_RD_ATOMIC = 1u << 17,
	UABI_QP_PATH_MIG_STATE = 1u << 18,
	UABI_QP_CAP = 1u << 19,
	UABI_QP_DEST_QPN = 1u << 20,
	UABI_QP_ATTR_MASK_ALL = (1u << 21) - 1,
};

struct uabi_qp_cap {
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_qp_cap, 24);

struct uabi_qp_init {
	struct uabi_qp_cap cap;
	__u32 qp_type;		/* UABI_QPT_* */
	__u32 sq_sig_all;
	__u32 create_flags;	/* UABI_QP_CREATE_* */
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_qp_init, 40);

/* uabi_qp_init.create_flags, as enum ibv_qp_create_flags. */
enum {
	/* UD: the QP does not receive the multicasts it sends itself. */
	UABI_QP_CREATE_BLOCK_SELF_MCAST_LB = 1u << 1,
};

/* A multicast group a UD QP attaches to (ibv_attach_mcast(3)): a multicast
 * GID (ff00::/8, or IPv4-mapped 224.0.0.0/4) and a multicast LID
 * (0xc000-0xfffe). */
struct uabi_mcast {
	__u8 gid[16];
	__u16 lid;
	__u16 reserved0;
	__u32 reserved1;
};
UABI_ASSERT_SIZE(struct uabi_mcast, 24);
UABI_ASSERT_OFFSET(struct uabi_qp_init, qp_type, 24);

struct uabi_global_route {
	__u8 dgid[16];
	__u32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 reserved;
};
UABI_ASSERT_SIZE(struct uabi_global_route, 24);
UABI_ASSERT_OFFSET(struct uabi_global_route, flow_label, 16);

struct uabi_ah_attr {
	struct uabi_global_route grh;
	__u16 dlid;
	__u8 sl;
	__u8 src_path_bits;
	__u8 static_rate;
	__u8 is_global;
	__u8 port_num;
	__u8 reserved;
};
UABI_ASSERT_SIZE(struct uabi_ah_attr, 32);
UABI_ASSERT_OFFSET(struct uabi_ah_attr, dlid, 24);
UABI_ASSERT_OFFSET(struct uabi_ah_attr, reserved, 31);

struct uabi_qp_attr {
	__u32 qp_state;		/* UABI_QPS_* */
	__u32 cur_qp_state;	/* UABI_QPS_* */
	__u32 path_mtu;		/* UABI_MTU_* */
	__u32 path_mig_state;	/* UABI_MIG_* */
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;	/* UABI_ACCESS_* */
	__u16 pkey_index;
	__u16 alt_pkey_index;
	struct uabi_qp_cap cap;
	struct uabi_ah_attr ah_attr;
	struct uabi_ah_attr alt_ah_attr;
	__u8 en_sqd_async_notify;
	__u8 sq_draining;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 alt_port_num;
	__u8 alt_timeout;
	__u8 reserved[5];
};
UABI_ASSERT_SIZE(struct uabi_qp_attr, 144);
UABI_ASSERT_OFFSET(struct uabi_qp_attr, pkey_index, 36);
UABI_ASSERT_OFFSET(struct uabi_qp_attr, cap, 40);
UABI_ASSERT_OFFSET(struct uabi_qp_attr, ah_attr, 64);
UABI_ASSERT_OFFSET(struct uabi_qp_attr, alt_ah_attr, 96);
UABI_ASSERT_OFFSET(struct uabi_qp_attr, en_sqd_async_notify, 128);
UABI_ASSERT_OFFSET(struct uabi_qp_attr, reserved, 139);

struct uabi_qp_resp {
	__u32 qpn;
	__u32 state;		/* state after the command */
	struct uabi_qp_cap cap;	/* capabilities actually granted */
};
UABI_ASSERT_SIZE(struct uabi_qp_resp, 32);

/* --------------------------------------------------------------- SRQ */

/* UABI_ATTR_SRQ_ATTR_MASK bits, as enum ibv_srq_attr_mask. */
enum {
	UABI_SRQ_MAX_WR = 1u << 0,
	UABI_SRQ_LIMIT = 1u << 1,
};

enum { UABI_SRQT_BASIC = 0, UABI_SRQT_XRC = 1 };

struct uabi_srq_attr {
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_srq_attr, 16);

struct uabi_srq_init {
	struct uabi_srq_attr attr;
	__u32 srq_type;		/* UABI_SRQT_* */
	__u32 reserved;
};
UABI_ASSERT_SIZE(struct uabi_srq_init, 24);

struct uabi_srq_resp {
	__u32 srqn;		/* XRC SRQ number, 0 for basic */
	__u32 reserved;
	struct uabi_srq_attr attr;
};
UABI_ASSERT_SIZE(struct uabi_srq_resp, 24);
UABI_ASSERT_OFFSET(struct uabi_srq_resp, attr, 8);

/* -------------------------------------------------------------- XRCD */

/* UABI_ATTR_XRCD_OFLAGS: the same values as the kernel's O_CREAT / O_EXCL
 * on x86 and arm64. */
#define UABI_XRCD_O_CREAT 0100
#define UABI_XRCD_O_EXCL 0200

/* UABI_ATTR_XRCD_QPN of REG_RCV_QP: create a receive QP. */
#define UABI_XRC_QPN_CREATE 0xFFFFFFFFu

/* ---------------------------------------------------------------- MW */

/* UABI_ATTR_MW_TYPE, as enum ibv_mw_type. */
enum {
	UABI_MW_TYPE_1 = 1,
	UABI_MW_TYPE_2 = 2,
};

/* A bind (struct ibv_mw_bind_info): [addr, addr + length) of the MR, with
 * UABI_ACCESS_REMOTE_*; length 0 unbinds a type 1 window.  @rkey: the key
 * the window has after the bind: its index the window's, its low byte
 * chosen by the caller (libibverbs' ibv_inc_rkey() for type 1, the
 * application's for type 2). */
struct uabi_mw_bind {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 access;
	__u32 rkey;
};
UABI_ASSERT_SIZE(struct uabi_mw_bind, 24);

#endif /* RDMA_UABI_VERBS_H */
