/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi: the generic object uAPI.
 *
 * This header is shared byte-for-byte by the kernel module, the userspace
 * daemon, the in-process host and the client library.  docs/uapi.md is the
 * prose specification; every rule enforced by kernel/core/dispatch.c is
 * listed there.
 *
 * A message is one struct uabi_msg_hdr followed by msg_hdr.count commands.
 * A command is one struct uabi_cmd_hdr followed by cmd_hdr.num_attrs
 * attributes.  An attribute is one struct uabi_attr followed by its payload,
 * padded with zero bytes to a multiple of 8.  Everything is fixed width, in
 * host byte order, and contains no pointer: the host copies the whole message
 * in, the core executes it and writes outputs in place, and the host copies
 * the whole message back.
 *
 * ABI rules: ids are append-only; reserved fields must be zero; structs grow
 * only at their end, and bytes a receiver does not know must be zero.
 */
#ifndef RDMA_UABI_H
#define RDMA_UABI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define UABI_ABI_VERSION 1
#define UABI_MSG_MAGIC 0x75616269u /* "uabi" */

/* Hard limits, also enforced by every host before copying in. */
#define UABI_MAX_MSG_BYTES (256u * 1024u)
#define UABI_MAX_CHAIN_CMDS 1024u
#define UABI_MAX_CMD_ATTRS 64u

/* struct uabi_msg_hdr.flags */
enum {
	/* Destroy again everything the message created if any command fails. */
	UABI_MSG_F_ALL_OR_NOTHING = 1u << 0,
};

struct uabi_msg_hdr {
	__u32 magic;		/* UABI_MSG_MAGIC */
	__u32 length;		/* bytes of the whole message, this header included */
	__u16 abi_version;	/* UABI_ABI_VERSION */
	__u16 count;		/* number of commands that follow, >= 1 */
	__u32 flags;		/* UABI_MSG_F_* */
	__s32 status;		/* out: 0, or the first failing command's -errno */
	__u32 executed;		/* out: commands that ran to success */
	__u32 failed_index;	/* out: index of the failing command, or count */
	__u32 reserved;		/* must be zero */
};

/* struct uabi_cmd_hdr.flags */
enum {
	/* cmd_hdr.handle is the index of an earlier command of this message;
	 * the handle that command created is used. */
	UABI_CMD_F_HANDLE_REF = 1u << 0,
};

#define UABI_CMD_STATUS_NOT_RUN 1 /* status of a command never reached */

struct uabi_cmd_hdr {
	__u32 length;		/* bytes of this command, header and attributes */
	__u16 object;		/* enum uabi_object, bit 15 = driver namespace */
	__u16 method;		/* enum uabi_method or object-specific method */
	__u32 handle;		/* in: object the method acts on */
	__u32 flags;		/* UABI_CMD_F_* */
	__u32 out_handle;	/* out: handle created by this command */
	__s32 status;		/* out: 0, -errno, or UABI_CMD_STATUS_NOT_RUN */
	__u16 num_attrs;
	__u16 reserved0;	/* must be zero */
	__u32 reserved1;	/* must be zero */
};

/* struct uabi_attr.flags */
enum {
	/* The receiver must understand this attribute (-EPROTONOSUPPORT). */
	UABI_ATTR_F_MANDATORY = 1u << 0,
	/* Payload is a buffer the receiver fills. */
	UABI_ATTR_F_OUTPUT = 1u << 1,
	/* Set by the receiver on an output it wrote. */
	UABI_ATTR_F_VALID_OUTPUT = 1u << 2,
	/* Payload is a __u32 index of an earlier command of this message;
	 * the handle it created is used. */
	UABI_ATTR_F_CHAIN_REF = 1u << 3,
	/* Payload is a __s32 file descriptor: transports that cross a process
	 * boundary translate it (SCM_RIGHTS). */
	UABI_ATTR_F_FD = 1u << 4,
};
#define UABI_ATTR_F_ALL 0x1fu

struct uabi_attr {
	__u16 id;		/* object-specific; bit 15 = driver namespace */
	__u16 flags;		/* UABI_ATTR_F_* */
	__u32 len;		/* payload bytes, padding excluded */
	/* __u8 payload[len], then zero padding to 8 bytes */
};

#define UABI_ALIGN8(x) (((x) + 7u) & ~7u)
#define UABI_DRIVER_NS 0x8000u

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
};

struct uabi_device_attr {
	__u64 fw_ver;
	__u64 node_guid;
	__u64 sys_image_guid;
	__u64 max_mr_size;
	__u64 page_size_cap;
	__u32 vendor_id;
	__u32 vendor_part_id;
	__u32 hw_ver;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 device_cap_flags;	/* IBV_DEVICE_* */
	__u32 max_sge;
	__u32 max_sge_rd;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_mr;
	__u32 max_pd;
	__u32 max_qp_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 max_res_rd_atom;
	__u32 atomic_cap;	/* enum ibv_atomic_cap */
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
};

struct uabi_port_attr {
	__u32 state;		/* enum ibv_port_state */
	__u32 max_mtu;		/* enum ibv_mtu */
	__u32 active_mtu;
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
	__u8 active_width;
	__u8 active_speed;
	__u8 phys_state;
	__u8 link_layer;	/* IBV_LINK_LAYER_* */
	__u8 flags;
	__u32 reserved;
};

/* Discovery: one entry per (object, method, attribute).  An entry with
 * attr_id 0 announces the method itself. */
struct uabi_discovery_entry {
	__u16 object;
	__u16 method;
	__u16 attr_id;
	__u16 attr_flags;	/* UABI_SPEC_F_* */
	__u32 attr_min_len;
	__u32 attr_max_len;
};

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

/* Live objects, device-wide and for the calling context. */
struct uabi_counters {
	__u32 num_types;	/* UABI_OBJ_MAX_CORE */
	__u32 contexts;		/* open contexts on the device */
	__u32 device[16];	/* indexed by enum uabi_object */
	__u32 context[16];
};

/* -------------------------------------------------------------------- PD */
/* CREATE, DESTROY: no attributes. */

/* -------------------------------------------------------------------- MR */
enum {
	UABI_ATTR_MR_PD = 1,		/* in handle */
	UABI_ATTR_MR_REG,		/* in struct uabi_mr_reg */
	UABI_ATTR_MR_KEYS,		/* out struct uabi_mr_keys */
};

struct uabi_mr_reg {
	__u64 addr;		/* start in the owner's address space */
	__u64 length;
	__u64 iova;		/* address the peers use (== addr for ibv_reg_mr) */
	__u32 access;		/* IBV_ACCESS_* */
	__u32 reserved;
};

struct uabi_mr_keys {
	__u32 lkey;
	__u32 rkey;
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

struct uabi_cq_resp {
	__u32 cqe;
	__u32 cqn;
};

/* ----------------------------------------------- completion channel, async */
enum {
	UABI_ATTR_EVQ_FD = 1,		/* out __s32: pollable fd (UABI_ATTR_F_FD) */
	UABI_ATTR_EVQ_EVENT,		/* out struct uabi_event */
};

enum {
	UABI_EVQ_GET_EVENT = UABI_METHOD_OBJECT_FIRST, /* -EAGAIN when empty */
};

struct uabi_event {
	__u64 element;		/* user handle of the CQ/QP/SRQ, or port number */
	__u32 event_type;	/* enum ibv_event_type (async) or 0 (completion) */
	__u32 object_handle;	/* handle of the CQ/QP/SRQ in this context */
	__u32 xrc_qpn;		/* qpn of an XRC receive QP, else 0 */
	__u32 reserved;
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
	UABI_ATTR_QP_ATTR_MASK,		/* in __u32 IBV_QP_* mask */
	UABI_ATTR_QP_RESP,		/* out struct uabi_qp_resp */
	UABI_ATTR_QP_INIT_OUT,		/* out struct uabi_qp_init (QUERY) */
};

/* QP types, numbered as enum ibv_qp_type. */
enum {
	UABI_QPT_RC = 2,
	UABI_QPT_UC = 3,
	UABI_QPT_UD = 4,
	UABI_QPT_XRC_SEND = 9,
	UABI_QPT_XRC_RECV = 10,
};

/* QP states, numbered as enum ibv_qp_state. */
enum {
	UABI_QPS_RESET, UABI_QPS_INIT, UABI_QPS_RTR, UABI_QPS_RTS,
	UABI_QPS_SQD, UABI_QPS_SQE, UABI_QPS_ERR, UABI_QPS_NUM
};

/* Attribute mask bits, identical to enum ibv_qp_attr_mask. */
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

struct uabi_qp_init {
	struct uabi_qp_cap cap;
	__u32 qp_type;		/* UABI_QPT_* */
	__u32 sq_sig_all;
	__u32 create_flags;	/* must be zero today */
	__u32 reserved;
};

struct uabi_global_route {
	__u8 dgid[16];
	__u32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 reserved;
};

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

struct uabi_qp_attr {
	__u32 qp_state;
	__u32 cur_qp_state;
	__u32 path_mtu;
	__u32 path_mig_state;
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;
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

struct uabi_qp_resp {
	__u32 qpn;
	__u32 state;		/* state after the command */
	struct uabi_qp_cap cap;	/* capabilities actually granted */
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
	UABI_ATTR_SRQ_ATTR_MASK,	/* in __u32: IBV_SRQ_MAX_WR=1, IBV_SRQ_LIMIT=2 */
};

enum { UABI_SRQT_BASIC = 0, UABI_SRQT_XRC = 1 };

struct uabi_srq_attr {
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 reserved;
};

struct uabi_srq_init {
	struct uabi_srq_attr attr;
	__u32 srq_type;		/* UABI_SRQT_* */
	__u32 reserved;
};

struct uabi_srq_resp {
	__u32 srqn;		/* XRC SRQ number, 0 for basic */
	__u32 reserved;
	struct uabi_srq_attr attr;
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

/* Same values as the kernel's O_CREAT / O_EXCL on x86 and arm64. */
#define UABI_XRCD_O_CREAT 0100
#define UABI_XRCD_O_EXCL 0200

#define UABI_XRC_QPN_CREATE 0xFFFFFFFFu

enum {
	/* handle = xrcd; QPN in/out (0xFFFFFFFF creates); out_handle is the
	 * registration, a QP handle of type XRC_RECV in this context. */
	UABI_XRCD_REG_RCV_QP = UABI_METHOD_OBJECT_FIRST,
	/* handle = xrcd; QPN in: drops one registration of this context. */
	UABI_XRCD_UNREG_RCV_QP,
	/* handle = xrcd; QPN, QP_ATTR, QP_ATTR_MASK in. */
	UABI_XRCD_MODIFY_RCV_QP,
	/* handle = xrcd; QPN in, QP_ATTR out. */
	UABI_XRCD_QUERY_RCV_QP,
};

/* -------------------------------------------------------------------- MW */
/* CREATE answers -EOPNOTSUPP on the software device. */
enum {
	UABI_ATTR_MW_PD = 1,
	UABI_ATTR_MW_TYPE,
};


/* ------------------------------------------------------ kernel transport */
/*
 * The kernel module's character device, /dev/rdma_uabi.  Each open file is
 * one context; closing it destroys every object the context owns.
 * UABI_IOCTL_EXECUTE carries one message, the same bytes as every other
 * transport: the module copies msg_len bytes in (at most UABI_MAX_MSG_BYTES),
 * executes them and copies the whole message back.  The ioctl returns 0 once
 * the message is back in user memory, whatever its status (read
 * msg_hdr.status); it fails only when the message could not be carried:
 * EFAULT (msg_ptr or the argument unreadable/unwritable), EINVAL (msg_len
 * below sizeof(struct uabi_msg_hdr) or above UABI_MAX_MSG_BYTES, reserved
 * not zero), ENOMEM, ENOTTY (another request code).  Fd attributes name
 * fds of the calling process; event queue fds are installed in it when the
 * ioctl succeeds and belong to the caller (close them after DESTROY).
 */
#define UABI_DEVICE_PATH "/dev/rdma_uabi"

struct uabi_ioctl {
	__u64 msg_ptr;		/* user address of the message */
	__u32 msg_len;		/* bytes of the message, == msg_hdr.length */
	__u32 reserved;		/* must be zero */
};

#define UABI_IOCTL_EXECUTE _IOWR(0x1b, 1, struct uabi_ioctl)

#endif /* RDMA_UABI_H */
