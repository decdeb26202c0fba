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
	UABI_SW_ATTR_PORT_STATE,			/* in __u32: UABI_PORT_ACTIVE or UABI_PORT_DOWN */
	UABI_SW_ATTR_STATS,				/* out struct uabi_sw_stats */
};

struct uabi_sw_stats {
	__u32 qpns_in_use;
	__u32 mr_keys_in_use;
	__u32 cqns_in_use;
	__u32 srqns_in_use;
};

/* Identity of the software device, as reported by QUERY.  The vendor id
 * is the node GUID's company part (02:75:61, "\x02ua": a locally
 * administered prefix, so no assigned OUI is claimed). */
#define UABI_SW_NODE_GUID 0x0275616269000001ull	/* 02:"uabi":00:00:01 */
#define UABI_SW_VENDOR_ID 0x027561u
#define UABI_SW_VENDOR_PART_ID 1u
/* The device clock of completion timestamps: CLOCK_MONOTONIC in
 * nanoseconds, the same clock in every process of the host (kHz, as
 * ibv_device_attr_ex.hca_core_clock). */
#define UABI_SW_CORE_CLOCK_KHZ 1000000ull
/* The resource_type a parent domain's allocator is called with
 * (ibv_alloc_parent_domain(3)): a QP's send queue, the memory of the
 * drop-in library's that holds work requests posted and not yet executed.
 * The other queues (CQs, receive queues, SRQs) are rings of the arena,
 * which the device owns, and never come from an allocator. */
#define UABI_SW_RES_TYPE_SQ 1ull
#define UABI_SW_PORT_LID 1

/* ================================================================ arena
 * A user's arena: the shared memory that holds what a peer of the same
 * user must reach (docs/datapath.md, docs/security.md).  Each user (uid)
 * of a device has its own, mapped by that user's contexts only, in two
 * parts:
 *   read-only  written by the control half alone (the clients map it
 *              PROT_READ and cannot make it writable): the layout, the
 *              QP, CQ and SRQ descriptors and the MR table — everything
 *              the data path checks against;
 *   writable   what the data path moves: ring indices, lock words, arm
 *              and error flags, and the rings themselves (the heap).
 * The control half never relies on a value of the writable part: it keeps
 * its own copy of every offset and size and clamps what it reads there
 * (indices to the ring's size; lock waits are bounded).  Every field is
 * little-endian host order; lock words hold the holder's pid (0 = free).
 */
enum {
	/* The arena: methods without a handle. */
	UABI_SW_OBJ_ARENA = UABI_DRIVER_NS | 2,
};

enum {
	/* QUERY: the caller's arena, both parts (UABI_SW_ATTR_ARENA_FD,
	 * UABI_SW_ATTR_ARENA_RW_FD), and its layout. */
	UABI_SW_ARENA_MAP = UABI_METHOD_QUERY,
	/* A CQE was written to an armed CQ of the caller's arena: raise its
	 * completion event. */
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
	 * the affiliated event type in its writable descriptor's err_event:
	 * raise it for the QP's owner, or every context registered on an XRC
	 * receive QP, and let the core's state follow. */
	UABI_SW_ARENA_QP_ERROR,
	/* Invalidates the memory window whose key is UABI_SW_ATTR_RKEY
	 * through QP UABI_SW_ATTR_QPN: a LOCAL_INV work request of that QP,
	 * or (UABI_SW_INV_REMOTE) a SEND_WITH_INV that QP received.  The
	 * window must be bound under that key, in the QP's PD, and of type 2
	 * (bound to that QP, for a remote invalidation): else -EINVAL. */
	UABI_SW_ARENA_INVALIDATE,
};

enum {
	UABI_SW_INV_REMOTE = 1 << 0,
};

enum {
	UABI_SW_ATTR_ARENA_FD = UABI_DRIVER_NS | 4,	/* out __s32 (UABI_ATTR_F_FD): read-only part */
	UABI_SW_ATTR_ARENA_INFO,			/* out struct uabi_sw_arena_info */
	UABI_SW_ATTR_CQN,				/* in __u32 */
	UABI_SW_ATTR_SRQ,				/* in handle */
	UABI_SW_ATTR_SRQ_SLOT,				/* out __u32 */
	UABI_SW_ATTR_QPN,				/* in __u32 */
	UABI_SW_ATTR_ARENA_RW_FD,			/* out __s32 (UABI_ATTR_F_FD): writable part */
	UABI_SW_ATTR_RKEY,				/* in __u32 */
	UABI_SW_ATTR_INV_FLAGS,				/* in __u32 UABI_SW_INV_* */
};

#define UABI_SW_ARENA_MAGIC 0x41575375u	/* "uSWA" */
#define UABI_SW_ARENA_VERSION 7
#define UABI_SW_HEAP_GRANULE 256u

/*
 * The layout.  Numbers are the user's: QPNs run from qp_first (each user
 * has its own range, so a QPN says whose QP it is), CQ numbers and SRQ
 * slots from 1, memory key indices (key >> 8) from 1.  Offsets of the
 * writable tables and of the rings are into the writable part.
 */
struct uabi_sw_arena_info {
	__u32 magic;		/* UABI_SW_ARENA_MAGIC */
	__u32 version;		/* UABI_SW_ARENA_VERSION */
	__aligned_u64 ro_size;		/* bytes of the read-only part */
	__aligned_u64 rw_size;		/* bytes of the writable part */
	__u32 qp_first;		/* first QPN of this arena */
	__u32 qp_count;
	__u32 cq_count;
	__u32 srq_count;
	__u32 mr_count;		/* key indices 1 .. mr_count - 1 */
	__u32 uid;		/* whose arena */
	/* read-only part */
	__aligned_u64 qp_off;		/* struct uabi_sw_qp[qp_count], by qpn - qp_first */
	__aligned_u64 cq_off;		/* struct uabi_sw_cq[cq_count], by cqn - 1 */
	__aligned_u64 srq_off;		/* struct uabi_sw_srq[srq_count], by slot - 1 */
	__aligned_u64 mr_off;		/* struct uabi_sw_mr[mr_count], by key >> 8 */
	/* writable part */
	__aligned_u64 qpw_off;		/* struct uabi_sw_qp_rw[qp_count] */
	__aligned_u64 cqw_off;		/* struct uabi_sw_cq_rw[cq_count] */
	__aligned_u64 srqw_off;		/* struct uabi_sw_srq_rw[srq_count] */
	__aligned_u64 heap_off;		/* rings */
	__aligned_u64 heap_size;
	/* read-only part */
	__aligned_u64 mcg_off;		/* struct uabi_sw_mcg[mcg_count] */
	__u32 mcg_count;
	__u32 reserved;
};

/*
 * The port's traffic as the user's data path counts it (docs/fsview.md,
 * "Port counters"), in the writable part.  The process that
 * executes a work request does both ends' work on this one-port device,
 * so for each message it delivers it adds what the port transmitted and
 * received at once (atomic adds): the payload in 4-byte words, and its
 * packets, one per path MTU of payload (a message without payload: one).
 * Transmit and receive are therefore the same totals.  The totals are
 * never reset: the performance management agent (compat/umad) keeps in
 * base[] what each counter it reports stood at when a Set cleared it, and
 * reports the total minus that.  The control half never reads this block:
 * it holds numbers the user's processes count for themselves, shown to
 * that user alone.
 */
enum {
	/* base[]: PortCounters' 32-bit data and packet counters ... */
	UABI_SW_PC_XMIT_DATA = 0,
	UABI_SW_PC_RCV_DATA,
	UABI_SW_PC_XMIT_PKTS,
	UABI_SW_PC_RCV_PKTS,
	/* ... and PortCountersExtended's, in CounterSelect's order. */
	UABI_SW_PCX_XMIT_DATA,
	UABI_SW_PCX_RCV_DATA,
	UABI_SW_PCX_XMIT_PKTS,
	UABI_SW_PCX_RCV_PKTS,
	UABI_SW_PCX_UCAST_XMIT_PKTS,
	UABI_SW_PCX_UCAST_RCV_PKTS,
	UABI_SW_PCX_MCAST_XMIT_PKTS,
	UABI_SW_PCX_MCAST_RCV_PKTS,
	UABI_SW_PC_BASES
};

/* One process's adds, a cache line of its own: a process claims a slot
 * (owner: its pid, taken over from a process that has exited) when it maps
 * the arena, so that processes exchanging messages do not bounce one line
 * between their CPUs on every message; one that finds none adds to the
 * block's own totals.  A total is the block's plus every slot's. */
#define UABI_SW_PC_SLOTS 16

struct uabi_sw_port_count {
	__s32 owner;			/* the pid adding here; 0: free */
	__u32 reserved;
	__aligned_u64 data_words;
	__aligned_u64 ucast_pkts;
	__aligned_u64 mcast_pkts;
	__aligned_u64 pad[4];
};

struct uabi_sw_port_counters {
	__aligned_u64 data_words;	/* payload, 4-byte words (each packet padded) */
	__aligned_u64 ucast_pkts;	/* packets of unicast messages */
	__aligned_u64 mcast_pkts;	/* UD multicast: one per copy delivered */
	__aligned_u64 reserved;
	__aligned_u64 base[UABI_SW_PC_BASES];	/* the agent's: value at the last clear */
	struct uabi_sw_port_count slot[UABI_SW_PC_SLOTS];
};

/* Offset 0 of the writable part. */
struct uabi_sw_arena_rw_hdr {
	__u32 atomic_lock;	/* the user's RDMA atomics */
	__u32 reserved0;
	__aligned_u64 reserved[7];
	/* Offset 64, a cache line of its own for the data path's adds. */
	struct uabi_sw_port_counters port;	/* the device's one port */
};

/* Descriptors of the read-only part carry a sequence counter: odd while
 * the control half writes.  Readers retry until they read the same even
 * value before and after. */

/* One per QP, 128 bytes, read-only. */
struct uabi_sw_qp {
	__u32 seq;
	__u32 qpn;		/* 0: free slot */
	__u32 state;		/* UABI_QPS_*, as the control half set it */
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
	__u32 rq_size;		/* receive WQE slots, power of two; 0: no RQ */
	__u32 rq_stride;	/* bytes per slot */
	__u32 max_recv_sge;
	__aligned_u64 rq_off;		/* writable part: the ring */
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
	__u8 traffic_class;	/* the AV's GRH's */
	/* The AV's GRH and the receive PSN: what a process serving an XRC
	 * receive QP it did not modify itself needs on a RoCE device. */
	__u8 dgid[16];
	__u32 rq_psn;
	__u8 sgid_index;
	__u8 reserved2[3];
	__u32 reserved1[5];
};

/* The data path's half of a QP, 64 bytes, writable. */
struct uabi_sw_qp_rw {
	__u32 rq_lock;
	__u32 err;		/* data path: the QP went to ERR */
	__aligned_u64 rq_prod;		/* under rq_lock */
	__aligned_u64 rq_cons;		/* under rq_lock */
	__u32 flush;		/* a peer moved this QP to ERR */
	__u32 err_event;	/* IBV_EVENT_QP_* to raise (QP_ERROR) */
	/* An XRC receive QP on a RoCE device, served by one process of its
	 * domain at a time (docs/wire.md, "XRC"): the server's expected PSN
	 * and MSN at its last message boundary, and who it is (pid and a
	 * token of that process; 0: nobody yet).  The control half sets
	 * them when the QP enters RTR (wire_epsn = rq_psn, the rest 0). */
	__u32 wire_epsn;
	__u32 wire_msn;
	__s32 wire_server;
	__u32 wire_token;
	__aligned_u64 reserved[2];
};

/* One per CQ, 64 bytes, read-only. */
struct uabi_sw_cq {
	__u32 seq;
	__u32 cqn;		/* 0: free slot */
	__s32 pid;		/* owner */
	__u32 size;		/* entries, power of two */
	__aligned_u64 ring_off;		/* writable part: struct uabi_sw_cqe[size] */
	__aligned_u64 small_off;	/* writable part: struct uabi_sw_small[small_slots] */
	__u32 small_slots;	/* power of two; 0: none */
	__u32 reserved0;
	__aligned_u64 reserved[3];
};

/* The data path's half of a CQ, 128 bytes, writable. */
struct uabi_sw_cq_rw {
	__u32 lock;		/* producers */
	__u32 armed;		/* UABI_SW_CQ_ARM_* */
	__aligned_u64 prod;		/* under lock */
	__u32 overrun;		/* a producer found the ring full */
	__u32 flush;		/* a peer moved a QP of this CQ to ERR */
	__u32 small_prod;	/* under lock */
	__u32 timestamps;	/* the owner wants completion timestamps */
	/* Direct completion events (docs/datapath.md, "Completion events"),
	 * set by the owner: a producer that fires the arm writes the eventfd
	 * notify_fd of process notify_pid (the CQ's owner, else ignored)
	 * and counts it in direct_events, instead of asking the control half
	 * (NOTIFY_CQ).  notify_pid 0: the control half raises the event. */
	__s32 notify_pid;
	__s32 notify_fd;
	__u32 notify_gen;	/* names the waiter's eventfd: fds are reused */
	__u32 direct_events;	/* producers: events raised directly */
	/* UABI_SW_CQ_WRITTEN_*: which of the CQ's rings a producer wrote,
	 * set under lock before the first byte.  The control half zeroes a
	 * destroyed CQ's ring only if it was written (the rings are handed
	 * out zeroed). */
	__u32 written;
	__u32 reserved0;
	__aligned_u64 reserved1;
	__aligned_u64 cons;		/* owner only, own cache line */
	__u32 small_cons;	/* owner only */
	__u32 reserved2;
	__aligned_u64 reserved3[6];
};

enum {
	UABI_SW_CQ_WRITTEN_RING = 1,	/* the CQE ring */
	UABI_SW_CQ_WRITTEN_SMALL = 2,	/* the small ring */
};

enum {
	UABI_SW_CQ_ARM_NONE = 0,
	UABI_SW_CQ_ARM_NEXT = 1,
	UABI_SW_CQ_ARM_SOLICITED = 2,
};

/* A completion, 64 bytes; fields as struct ibv_wc (vendor_err is 0). */
struct uabi_sw_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
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
	__u32 small_idx;	/* its slot in the CQ's small ring (absolute) */
	__aligned_u64 ts;	/* completion time, UABI_SW_CORE_CLOCK_KHZ units,
				 * when the CQ asked for it */
	__aligned_u64 seq;	/* index + 1 once written */
};

/*
 * A small SEND's payload, carried through the arena instead of copied into
 * the receiver's memory by the sender (docs/datapath.md, "Small messages"):
 * the sender checks the receive WQE as always, writes the bytes and where
 * they go (the receiver's own addresses, by the WQE's SGEs) into the next
 * slot of the receive CQ's small ring and marks the CQE; the CQ's owner,
 * who posted the receive, copies them out when it polls that CQE, then
 * releases the slots (small_cons = small_idx + UABI_SW_SMALL_NSLOTS(length)).
 * A slot is 256 bytes: this header with the first UABI_SW_SMALL_DATA bytes
 * of the data; longer data goes on in the slots after it, 256 bytes each
 * (the ring's first slot follows its last).
 */
#define UABI_SW_SMALL_MAX 2048u		/* SEND payload bytes (UD: + the GRH) */
#define UABI_SW_SMALL_SEGS 4u
#define UABI_SW_SMALL_DATA 168u		/* data bytes in the first slot */
#define UABI_SW_SMALL_SLOT 256u
#define UABI_SW_SMALL_SLOTS 64u		/* per CQ, at most */
/* Slots that a small message of @len data bytes takes. */
#define UABI_SW_SMALL_NSLOTS(len) \
	(1u + ((len) > UABI_SW_SMALL_DATA ? \
	       ((len) - UABI_SW_SMALL_DATA + UABI_SW_SMALL_SLOT - 1) / UABI_SW_SMALL_SLOT : 0u))

struct uabi_sw_small {
	__u32 length;		/* bytes of data, scattered over seg[] */
	__u32 num_seg;		/* <= UABI_SW_SMALL_SEGS */
	__aligned_u64 reserved;
	struct {
		__aligned_u64 addr;	/* in the receiver's address space */
		__u32 length;
		__u32 lkey;	/* checked again by the receiver */
	} seg[UABI_SW_SMALL_SEGS];
	__u8 data[UABI_SW_SMALL_DATA];
	__u8 reserved2[8];
};

/* One per SRQ, 64 bytes, read-only. */
struct uabi_sw_srq {
	__u32 seq;
	__u32 slot;		/* 0: free */
	__s32 pid;		/* owner */
	__u32 pd;
	__u32 type;		/* UABI_SRQT_* */
	__u32 xrcd;		/* XRC: domain number */
	__u32 cqn;		/* XRC: completion queue */
	__u32 size;		/* slots, power of two */
	__u32 stride;
	__u32 max_sge;
	__aligned_u64 ring_off;		/* writable part */
	__aligned_u64 reserved[2];
};

/* The data path's half of an SRQ, 64 bytes, writable. */
struct uabi_sw_srq_rw {
	__u32 lock;
	__u32 limit;		/* srq_limit: armed when non-zero */
	__aligned_u64 prod;		/* under lock */
	__aligned_u64 cons;		/* under lock */
	__u32 limit_event;	/* data path: the limit was reached */
	/* Written by the owner once it has the SRQ: its pid as it sees
	 * itself and its pid namespace (the inode of /proc/self/ns/pid),
	 * so that another process serving an XRC receive QP on the wire
	 * can reach its buffers (docs/wire.md, "XRC"); 0 until then. */
	__s32 owner_pid;
	__aligned_u64 owner_pidns;
	__aligned_u64 reserved[3];
};

/* One per memory key, 64 bytes, read-only: an MR, or a bound memory
 * window (then the range and access are the window's, the address its
 * place in the MR's memory). */
struct uabi_sw_mr {
	__u32 seq;
	__u32 key;		/* lkey == rkey; 0: free (or an unbound window) */
	__s32 pid;		/* owner */
	__u32 pd;
	__u32 access;		/* IBV_ACCESS_* */
	__u32 type;		/* UABI_SW_KEY_* */
	__aligned_u64 iova;	/* first address peers use */
	__aligned_u64 length;
	__aligned_u64 addr;	/* same byte in the owner's address space */
	__u32 qpn;		/* type 2 window: the QP it is bound to */
	__u32 reserved0;
	__aligned_u64 reserved;
};

enum {
	UABI_SW_KEY_MR = 0,	/* local and remote access */
	UABI_SW_KEY_MW1 = 1,	/* a type 1 window: remote access only */
	UABI_SW_KEY_MW2 = 2,	/* a type 2 window: remote, through its QP only */
};

/* A multicast group of the user, 256 bytes, read-only: the QPs attached to
 * (gid, lid).  num_qp 0: a free entry. */
#define UABI_SW_MCG_QPS 56
struct uabi_sw_mcg {
	__u32 seq;
	__u16 lid;
	__u16 num_qp;
	__u8 gid[16];
	__u32 qpn[UABI_SW_MCG_QPS];
	__u32 reserved[2];
};

struct uabi_sw_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* A receive WQE: header, then num_sge (<= max_sge) struct uabi_sw_sge. */
struct uabi_sw_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* The layouts the control half and every data path share. */
UABI_ASSERT_SIZE(struct uabi_sw_stats, 16);
UABI_ASSERT_SIZE(struct uabi_sw_arena_info, 136);
UABI_ASSERT_OFFSET(struct uabi_sw_arena_info, mcg_off, 120);
UABI_ASSERT_SIZE(struct uabi_sw_mcg, 256);
UABI_ASSERT_OFFSET(struct uabi_sw_cq_rw, written, 48);
UABI_ASSERT_OFFSET(struct uabi_sw_cq_rw, cons, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_arena_info, qp_off, 48);
UABI_ASSERT_OFFSET(struct uabi_sw_arena_info, heap_size, 112);
UABI_ASSERT_SIZE(struct uabi_sw_port_count, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_port_counters, slot, 128);
UABI_ASSERT_SIZE(struct uabi_sw_port_counters, 128 + 64 * UABI_SW_PC_SLOTS);
UABI_ASSERT_SIZE(struct uabi_sw_arena_rw_hdr, 192 + 64 * UABI_SW_PC_SLOTS);
UABI_ASSERT_OFFSET(struct uabi_sw_arena_rw_hdr, port, 64);
UABI_ASSERT_SIZE(struct uabi_sw_qp, 128);
UABI_ASSERT_OFFSET(struct uabi_sw_qp, rq_off, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_qp, dlid, 80);
UABI_ASSERT_SIZE(struct uabi_sw_qp_rw, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_qp_rw, rq_prod, 8);
UABI_ASSERT_SIZE(struct uabi_sw_cq, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_cq, ring_off, 16);
UABI_ASSERT_SIZE(struct uabi_sw_cq_rw, 128);
UABI_ASSERT_OFFSET(struct uabi_sw_cq_rw, cons, 64);
UABI_ASSERT_SIZE(struct uabi_sw_cqe, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_cqe, ts, 48);
UABI_ASSERT_OFFSET(struct uabi_sw_cqe, seq, 56);
UABI_ASSERT_SIZE(struct uabi_sw_small, UABI_SW_SMALL_SLOT);
UABI_ASSERT_OFFSET(struct uabi_sw_small, data, 80);
UABI_ASSERT_SIZE(struct uabi_sw_srq, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_srq, ring_off, 40);
UABI_ASSERT_SIZE(struct uabi_sw_srq_rw, 64);
UABI_ASSERT_SIZE(struct uabi_sw_mr, 64);
UABI_ASSERT_OFFSET(struct uabi_sw_mr, type, 20);
UABI_ASSERT_OFFSET(struct uabi_sw_mr, qpn, 48);
UABI_ASSERT_OFFSET(struct uabi_sw_mr, iova, 24);
UABI_ASSERT_SIZE(struct uabi_sw_sge, 16);
UABI_ASSERT_SIZE(struct uabi_sw_recv_wqe, 16);

#endif /* RDMA_UABI_SW_H */
