/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Driver namespace of the software RDMA device "sw" (kernel/drivers/sw).
 * Object and attribute ids carry UABI_DRIVER_NS.
 */
#ifndef RDMA_UABI_SW_H
#define RDMA_UABI_SW_H

#include <rdma/uabi.h>

enum {
	/* Port control: methods without a handle. */
	UABI_SW_OBJ_PORT = UABI_DRIVER_NS | 1,
};

enum {
	/* CALL: set a port's state; raises IBV_EVENT_PORT_ACTIVE or
	 * IBV_EVENT_PORT_ERR on every context's async event queue. */
	UABI_SW_PORT_SET_STATE = UABI_METHOD_CALL,
	/* QUERY: allocator statistics of the device. */
	UABI_SW_PORT_STATS = UABI_METHOD_QUERY,
};

enum {
	UABI_SW_ATTR_PORT_NUM = UABI_DRIVER_NS | 1,	/* in __u32 */
	UABI_SW_ATTR_PORT_STATE,			/* in __u32: IBV_PORT_ACTIVE (4) or IBV_PORT_DOWN (1) */
	UABI_SW_ATTR_STATS,				/* out struct uabi_sw_stats */
};

struct uabi_sw_stats {
	__u32 qpns_in_use;
	__u32 mr_keys_in_use;
	__u32 cqns_in_use;
	__u32 srqns_in_use;
};

/* Identity of the software device, as reported by QUERY. */
#define UABI_SW_NODE_GUID 0x0275616269000001ull	/* 02:"uabi":00:00:01 */
#define UABI_SW_PORT_LID 1

/* ================================================================ arena
 * The device arena: one shared memory region per device that holds what a
 * peer must reach (docs/datapath.md).  The control half (kernel/drivers/sw)
 * lays it out and writes the descriptors; the data half (providers/sw) maps
 * it in every client process.  Every field is little-endian host order;
 * lock words hold the holder's pid (0 = free).
 */
enum {
	/* The arena: methods without a handle. */
	UABI_SW_OBJ_ARENA = UABI_DRIVER_NS | 2,
};

enum {
	/* QUERY: the arena's fd (UABI_SW_ATTR_ARENA_FD) and layout. */
	UABI_SW_ARENA_MAP = UABI_METHOD_QUERY,
	/* A CQE was written to an armed CQ: raise its completion event. */
	UABI_SW_ARENA_NOTIFY_CQ = UABI_METHOD_OBJECT_FIRST,
	/* SRQ handle (this context) -> arena slot. */
	UABI_SW_ARENA_LOCATE_SRQ,
	/* An SRQ fell below its armed limit: raise its owner's
	 * IBV_EVENT_SRQ_LIMIT_REACHED (UABI_SW_ATTR_SRQ_SLOT in). */
	UABI_SW_ARENA_SRQ_LIMIT,
	/* A producer found CQ UABI_SW_ATTR_CQN full (its overrun flag was
	 * clear): raise IBV_EVENT_CQ_ERR for the CQ's owner. */
	UABI_SW_ARENA_CQ_ERROR,
	/* The data path moved responder QP UABI_SW_ATTR_QPN to ERR and left
	 * the affiliated event type in its descriptor's err_event: raise it
	 * for the QP's owner, or every context registered on an XRC receive
	 * QP, and let the core's state follow. */
	UABI_SW_ARENA_QP_ERROR,
};

enum {
	UABI_SW_ATTR_ARENA_FD = UABI_DRIVER_NS | 4,	/* out __s32 (UABI_ATTR_F_FD) */
	UABI_SW_ATTR_ARENA_INFO,			/* out struct uabi_sw_arena_info */
	UABI_SW_ATTR_CQN,				/* in __u32 */
	UABI_SW_ATTR_SRQ,				/* in handle */
	UABI_SW_ATTR_SRQ_SLOT,				/* out __u32 */
	UABI_SW_ATTR_QPN,				/* in __u32 */
};

#define UABI_SW_ARENA_MAGIC 0x41575375u	/* "uSWA" */
#define UABI_SW_ARENA_VERSION 2
#define UABI_SW_HEAP_GRANULE 256u

struct uabi_sw_arena_info {
	__u32 magic;		/* UABI_SW_ARENA_MAGIC */
	__u32 version;		/* UABI_SW_ARENA_VERSION */
	__u64 size;		/* bytes to map */
	__u64 qp_off;		/* struct uabi_sw_qp[qp_count], by qpn - qp_first */
	__u32 qp_first;
	__u32 qp_count;
	__u64 cq_off;		/* struct uabi_sw_cq[cq_count], by cqn - 1 */
	__u32 cq_count;
	__u32 srq_count;
	__u64 srq_off;		/* struct uabi_sw_srq[srq_count], by slot - 1 */
	__u64 mr_off;		/* struct uabi_sw_mr[mr_count], by key >> 8 */
	__u32 mr_count;
	__u32 reserved;
	__u64 heap_off;		/* rings */
	__u64 heap_size;
};

/* Offset 0 of the arena. */
struct uabi_sw_arena_hdr {
	struct uabi_sw_arena_info info;
	__u32 atomic_lock;	/* device-wide: RDMA atomics */
	__u32 reserved0;
	__u64 reserved[7];
};

/* Descriptors written by the control half carry a sequence counter: odd
 * while being written.  Readers retry until they read the same even value
 * before and after. */

/* One per QP, 128 bytes. */
struct uabi_sw_qp {
	__u32 seq;
	__u32 qpn;		/* 0: free slot */
	__u32 state;		/* UABI_QPS_*; the data path may set ERR */
	__u32 type;		/* UABI_QPT_* */
	__s32 pid;		/* owner (0 for XRC receive QPs) */
	__u32 pd;		/* PD number, 0 = none */
	__u32 dest_qpn;
	__u32 qkey;
	__u32 access;		/* qp_access_flags (IBV_ACCESS_REMOTE_*) */
	__u32 send_cqn;
	__u32 recv_cqn;		/* 0: none (XRC) */
	__u32 srq_slot;		/* 0: none */
	__u32 xrcd;		/* XRC domain number, 0 = none */
	__u32 rq_lock;
	__u32 rq_size;		/* receive WQE slots, power of two; 0: no RQ */
	__u32 rq_stride;	/* bytes per slot */
	__u64 rq_off;		/* arena offset of the ring */
	__u64 rq_prod;		/* under rq_lock */
	__u64 rq_cons;		/* under rq_lock */
	__u8 min_rnr_timer;
	__u8 rnr_retry;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 port_num;
	__u8 sl;
	__u8 path_mtu;
	__u8 sq_sig_all;
	__u16 dlid;
	__u8 is_global;
	__u8 reserved0;
	__u32 flush;		/* data path: a peer moved this QP to ERR */
	__u32 max_recv_sge;
	__u32 err_event;	/* data path: IBV_EVENT_QP_* to raise (QP_ERROR) */
	__u32 reserved1[4];
};

/* One per CQ, 128 bytes. */
struct uabi_sw_cq {
	__u32 seq;
	__u32 cqn;		/* 0: free slot */
	__s32 pid;		/* owner */
	__u32 size;		/* entries, power of two */
	__u64 ring_off;		/* struct uabi_sw_cqe[size] */
	__u32 lock;		/* producers */
	__u32 armed;		/* UABI_SW_CQ_ARM_* */
	__u64 prod;		/* under lock */
	__u32 overrun;		/* a producer found the ring full */
	__u32 flush;		/* a peer moved a QP of this CQ to ERR */
	__u64 small_off;	/* struct uabi_sw_small[small_slots] */
	__u32 small_slots;	/* power of two; 0: none */
	__u32 small_prod;	/* under lock */
	__u64 cons;		/* owner only, own cache line */
	__u32 small_cons;	/* owner only */
	__u32 reserved2a;
	__u64 reserved2[6];
};

enum {
	UABI_SW_CQ_ARM_NONE = 0,
	UABI_SW_CQ_ARM_NEXT = 1,
	UABI_SW_CQ_ARM_SOLICITED = 2,
};

/* A completion, 64 bytes; fields as struct ibv_wc. */
struct uabi_sw_cqe {
	__u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;		/* network order */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 solicited;
	__u8 small;		/* the payload waits in small_idx */
	__u64 seq;		/* index + 1 once written */
	__u32 small_idx;	/* its slot in the CQ's small ring (absolute) */
	__u32 reserved;
};

/*
 * A small SEND's payload, carried through the arena instead of copied into
 * the receiver's memory by the sender (docs/datapath.md, "Small messages"):
 * the sender checks the receive WQE as always, writes the bytes and where
 * they go (the receiver's own addresses, by the WQE's SGEs) into the next
 * slot of the receive CQ's small ring and marks the CQE; the CQ's owner,
 * who posted the receive, copies them out when it polls that CQE, then
 * releases the slot (small_cons = small_idx + 1).  256 bytes.
 */
#define UABI_SW_SMALL_MAX 128u		/* SEND payload bytes (UD: + the GRH) */
#define UABI_SW_SMALL_SEGS 4u
#define UABI_SW_SMALL_DATA (UABI_SW_SMALL_MAX + 40u)
#define UABI_SW_SMALL_SLOTS 64u		/* per CQ, at most */

struct uabi_sw_small {
	__u32 length;		/* bytes of data, scattered over seg[] */
	__u32 num_seg;		/* <= UABI_SW_SMALL_SEGS */
	__u64 reserved;
	struct {
		__u64 addr;	/* in the receiver's address space */
		__u32 length;
		__u32 lkey;	/* checked again by the receiver */
	} seg[UABI_SW_SMALL_SEGS];
	__u8 data[UABI_SW_SMALL_DATA];
	__u8 reserved2[8];
};

/* One per SRQ, 128 bytes. */
struct uabi_sw_srq {
	__u32 seq;
	__u32 slot;		/* 0: free */
	__s32 pid;		/* owner */
	__u32 pd;
	__u32 type;		/* UABI_SRQT_* */
	__u32 xrcd;		/* XRC: domain number */
	__u32 cqn;		/* XRC: completion queue */
	__u32 lock;
	__u32 size;		/* slots, power of two */
	__u32 stride;
	__u64 ring_off;
	__u64 prod;		/* under lock */
	__u64 cons;		/* under lock */
	__u32 limit;		/* srq_limit: armed when non-zero */
	__u32 max_sge;
	__u32 limit_event;	/* data path: the limit was reached */
	__u32 reserved[13];
};

/* One per memory key, 64 bytes. */
struct uabi_sw_mr {
	__u32 seq;
	__u32 key;		/* lkey == rkey; 0: free */
	__s32 pid;		/* owner */
	__u32 pd;
	__u32 access;		/* IBV_ACCESS_* */
	__u32 reserved0;
	__u64 iova;		/* first address peers use */
	__u64 length;
	__u64 addr;		/* same byte in the owner's address space */
	__u64 reserved[2];
};

struct uabi_sw_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/* A receive WQE: header, then num_sge (<= max_sge) struct uabi_sw_sge. */
struct uabi_sw_recv_wqe {
	__u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

#endif /* RDMA_UABI_SW_H */
