/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi: the OFED 1.5 verbs API, for legacy source.
 *
 * Programs written against OFED 1.3-1.5 libibverbs (MVAPICH2, Open MPI's
 * openib BTL, GASNet ...) use XRC through calls that upstream never had:
 * ibv_open_xrc_domain, ibv_create_xrc_srq, ibv_create_xrc_rcv_qp,
 * ibv_reg_xrc_rcv_qp ... and fields upstream's structs lack
 * (ibv_qp_init_attr.xrc_domain, ibv_send_wr.xrc_remote_srq_num,
 * ibv_srq.xrc_srq_num).  Put this directory first on the include path
 * (-I<rdma-uabi>/compat/include/ofed) and such source compiles unchanged
 * with `#include <infiniband/verbs.h>`; link it against rdma-uabi's
 * libibverbs.so.1, which implements these calls on the unified
 * register_xrc_rcv_qp rule (docs/xrc.md).
 *
 * The declarations are ours; the layouts are OFED 1.5's, so a program built
 * here is laid out as one built against OFED (the library serves both the
 * same way).  Where they differ from rdma-core's the offsets are listed in
 * <uabi/ofed_verbs_abi.h>.
 *
 * It is one file of over 800 lines because OFED's was one header: a
 * program includes exactly one <infiniband/verbs.h>.
 *
 * Every type, constant, macro and function OFED 1.5's <infiniband/verbs.h>
 * (libibverbs 1.1.4 with OFED's XRC) declared is declared here, with two
 * deliberate gaps, both places where an OFED program would reach the
 * library through a pointer our library does not provide (docs/xrc.md):
 *  - struct ibv_context has no more_ops member (the word after abi_compat
 *    is the library's own); struct ibv_more_ops is declared, but XRC is
 *    reached through the exported ibv_*_xrc_* functions;
 *  - of struct ibv_context_ops only the slots the library fills with
 *    OFED's signature are typed (query_port, poll_cq, req_notify_cq,
 *    post_srq_recv, post_send, post_recv); the rest are opaque, so code
 *    that called a provider slot directly fails to compile rather than
 *    jump through NULL.
 * Memory windows are types only, as in OFED (it had no window verbs);
 * rdma-core's later additions (ibv_rate_to_mbps, ibv_rereg_mr, ...) are
 * not declared, since OFED-era source cannot use them.
 */
#ifndef INFINIBAND_VERBS_H
#define INFINIBAND_VERBS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* OFED's header left these two defined for its includers; some OFED-era
 * headers use them after including it. */
#ifndef BEGIN_C_DECLS
#ifdef __cplusplus
#define BEGIN_C_DECLS extern "C" {
#define END_C_DECLS }
#else
#define BEGIN_C_DECLS
#define END_C_DECLS
#endif
#endif

#if defined(__GNUC__)
#define UABI_OFED_CONST_FN __attribute__((const))
#else
#define UABI_OFED_CONST_FN
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define UABI_OFED_VERBS_API 0x010500 /* this header speaks OFED 1.5 */

/* -------------------------------------------------------------- devices */

union ibv_gid {
	uint8_t raw[16];
	struct {
		uint64_t subnet_prefix;
		uint64_t interface_id;
	} global;
};

enum ibv_node_type {
	IBV_NODE_UNKNOWN = -1,
	IBV_NODE_CA = 1,
	IBV_NODE_SWITCH,
	IBV_NODE_ROUTER,
	IBV_NODE_RNIC
};

enum ibv_transport_type {
	IBV_TRANSPORT_UNKNOWN = -1,
	IBV_TRANSPORT_IB = 0,
	IBV_TRANSPORT_IWARP
};

enum ibv_device_cap_flags {
	IBV_DEVICE_RESIZE_MAX_WR = 1 << 0,
	IBV_DEVICE_BAD_PKEY_CNTR = 1 << 1,
	IBV_DEVICE_BAD_QKEY_CNTR = 1 << 2,
	IBV_DEVICE_RAW_MULTI = 1 << 3,
	IBV_DEVICE_AUTO_PATH_MIG = 1 << 4,
	IBV_DEVICE_CHANGE_PHY_PORT = 1 << 5,
	IBV_DEVICE_UD_AV_PORT_ENFORCE = 1 << 6,
	IBV_DEVICE_CURR_QP_STATE_MOD = 1 << 7,
	IBV_DEVICE_SHUTDOWN_PORT = 1 << 8,
	IBV_DEVICE_INIT_TYPE = 1 << 9,
	IBV_DEVICE_PORT_ACTIVE_EVENT = 1 << 10,
	IBV_DEVICE_SYS_IMAGE_GUID = 1 << 11,
	IBV_DEVICE_RC_RNR_NAK_GEN = 1 << 12,
	IBV_DEVICE_SRQ_RESIZE = 1 << 13,
	IBV_DEVICE_N_NOTIFY_CQ = 1 << 14,
	IBV_DEVICE_XRC = 1 << 20 /* the device does XRC */
};

enum ibv_atomic_cap { IBV_ATOMIC_NONE, IBV_ATOMIC_HCA, IBV_ATOMIC_GLOB };

struct ibv_device_attr {
	char fw_ver[64];
	uint64_t node_guid; /* network byte order */
	uint64_t sys_image_guid;
	uint64_t max_mr_size;
	uint64_t page_size_cap;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	int max_qp;
	int max_qp_wr;
	int device_cap_flags;
	int max_sge;
	int max_sge_rd;
	int max_cq;
	int max_cqe;
	int max_mr;
	int max_pd;
	int max_qp_rd_atom;
	int max_ee_rd_atom;
	int max_res_rd_atom;
	int max_qp_init_rd_atom;
	int max_ee_init_rd_atom;
	enum ibv_atomic_cap atomic_cap;
	int max_ee;
	int max_rdd;
	int max_mw;
	int max_raw_ipv6_qp;
	int max_raw_ethy_qp;
	int max_mcast_grp;
	int max_mcast_qp_attach;
	int max_total_mcast_qp_attach;
	int max_ah;
	int max_fmr;
	int max_map_per_fmr;
	int max_srq;
	int max_srq_wr;
	int max_srq_sge;
	uint16_t max_pkeys;
	uint8_t local_ca_ack_delay;
	uint8_t phys_port_cnt;
};

enum ibv_mtu { IBV_MTU_256 = 1, IBV_MTU_512, IBV_MTU_1024, IBV_MTU_2048, IBV_MTU_4096 };

enum ibv_port_state {
	IBV_PORT_NOP,
	IBV_PORT_DOWN,
	IBV_PORT_INIT,
	IBV_PORT_ARMED,
	IBV_PORT_ACTIVE,
	IBV_PORT_ACTIVE_DEFER
};

enum { IBV_LINK_LAYER_UNSPECIFIED, IBV_LINK_LAYER_INFINIBAND, IBV_LINK_LAYER_ETHERNET };

struct ibv_port_attr {
	enum ibv_port_state state;
	enum ibv_mtu max_mtu;
	enum ibv_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t pad;
};

/* ---------------------------------------------------------------- events */

enum ibv_event_type {
	IBV_EVENT_CQ_ERR,
	IBV_EVENT_QP_FATAL,
	IBV_EVENT_QP_REQ_ERR,
	IBV_EVENT_QP_ACCESS_ERR,
	IBV_EVENT_COMM_EST,
	IBV_EVENT_SQ_DRAINED,
	IBV_EVENT_PATH_MIG,
	IBV_EVENT_PATH_MIG_ERR,
	IBV_EVENT_DEVICE_FATAL,
	IBV_EVENT_PORT_ACTIVE,
	IBV_EVENT_PORT_ERR,
	IBV_EVENT_LID_CHANGE,
	IBV_EVENT_PKEY_CHANGE,
	IBV_EVENT_SM_CHANGE,
	IBV_EVENT_SRQ_ERR,
	IBV_EVENT_SRQ_LIMIT_REACHED,
	IBV_EVENT_QP_LAST_WQE_REACHED,
	IBV_EVENT_CLIENT_REREGISTER,
	IBV_EVENT_GID_CHANGE
};

/* An event on an XRC receive QP: event_type has this bit set and the
 * element is the QP's number (there is no struct ibv_qp for it). */
enum ibv_event_flags { IBV_XRC_QP_EVENT_FLAG = 0x80000000 };

struct ibv_cq;
struct ibv_qp;
struct ibv_srq;

struct ibv_async_event {
	union {
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_srq *srq;
		int port_num;
		uint32_t xrc_qp_num;
	} element;
	enum ibv_event_type event_type;
};

/* ----------------------------------------------------------- completions */

enum ibv_wc_status {
	IBV_WC_SUCCESS,
	IBV_WC_LOC_LEN_ERR,
	IBV_WC_LOC_QP_OP_ERR,
	IBV_WC_LOC_EEC_OP_ERR,
	IBV_WC_LOC_PROT_ERR,
	IBV_WC_WR_FLUSH_ERR,
	IBV_WC_MW_BIND_ERR,
	IBV_WC_BAD_RESP_ERR,
	IBV_WC_LOC_ACCESS_ERR,
	IBV_WC_REM_INV_REQ_ERR,
	IBV_WC_REM_ACCESS_ERR,
	IBV_WC_REM_OP_ERR,
	IBV_WC_RETRY_EXC_ERR,
	IBV_WC_RNR_RETRY_EXC_ERR,
	IBV_WC_LOC_RDD_VIOL_ERR,
	IBV_WC_REM_INV_RD_REQ_ERR,
	IBV_WC_REM_ABORT_ERR,
	IBV_WC_INV_EECN_ERR,
	IBV_WC_INV_EEC_STATE_ERR,
	IBV_WC_FATAL_ERR,
	IBV_WC_RESP_TIMEOUT_ERR,
	IBV_WC_GENERAL_ERR
};

enum ibv_wc_opcode {
	IBV_WC_SEND,
	IBV_WC_RDMA_WRITE,
	IBV_WC_RDMA_READ,
	IBV_WC_COMP_SWAP,
	IBV_WC_FETCH_ADD,
	IBV_WC_BIND_MW,
	IBV_WC_RECV = 1 << 7, /* (opcode & IBV_WC_RECV): a receive */
	IBV_WC_RECV_RDMA_WITH_IMM
};

enum ibv_wc_flags { IBV_WC_GRH = 1 << 0, IBV_WC_WITH_IMM = 1 << 1 };

struct ibv_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data; /* network byte order */
	uint32_t qp_num;
	uint32_t src_qp;
	int wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

/* ------------------------------------------------------- PD, MR, AH, XRC */

enum ibv_access_flags {
	IBV_ACCESS_LOCAL_WRITE = 1 << 0,
	IBV_ACCESS_REMOTE_WRITE = 1 << 1,
	IBV_ACCESS_REMOTE_READ = 1 << 2,
	IBV_ACCESS_REMOTE_ATOMIC = 1 << 3,
	IBV_ACCESS_MW_BIND = 1 << 4
};

struct ibv_context;

struct ibv_pd {
	struct ibv_context *context;
	uint32_t handle;
};

/* Flags of a provider's rereg_mr slot; OFED exported no ibv_rereg_mr. */
enum ibv_rereg_mr_flags {
	IBV_REREG_MR_CHANGE_TRANSLATION = 1 << 0,
	IBV_REREG_MR_CHANGE_PD = 1 << 1,
	IBV_REREG_MR_CHANGE_ACCESS = 1 << 2,
	IBV_REREG_MR_KEEP_VALID = 1 << 3
};

struct ibv_mr {
	struct ibv_context *context;
	struct ibv_pd *pd;
	void *addr;
	size_t length;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

/* Memory windows: OFED declared the types and provider slots but no verbs
 * to reach them (ibv_alloc_mw came with rdma-core, whose ibv_mw_bind is
 * laid out differently), so these are only names here. */
enum ibv_mw_type { IBV_MW_TYPE_1 = 1, IBV_MW_TYPE_2 = 2 };

struct ibv_mw {
	struct ibv_context *context;
	struct ibv_pd *pd;
	uint32_t rkey;
};

struct ibv_mw_bind {
	uint64_t wr_id;
	struct ibv_mr *mr;
	void *addr;
	size_t length;
	int send_flags;
	int mw_access_flags;
};

struct ibv_global_route {
	union ibv_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
};

struct ibv_grh {
	uint32_t version_tclass_flow;
	uint16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	union ibv_gid sgid;
	union ibv_gid dgid;
};

/* Static rates.  The values are IBA's rate codes, not in speed order
 * (10 Gb/s is 3, 5 Gb/s is 5); IBV_RATE_MAX means "as fast as the port". */
enum ibv_rate {
	IBV_RATE_MAX = 0,
	IBV_RATE_2_5_GBPS = 2,
	IBV_RATE_5_GBPS = 5,
	IBV_RATE_10_GBPS = 3,
	IBV_RATE_20_GBPS = 6,
	IBV_RATE_30_GBPS = 4,
	IBV_RATE_40_GBPS = 7,
	IBV_RATE_60_GBPS = 8,
	IBV_RATE_80_GBPS = 9,
	IBV_RATE_120_GBPS = 10
};

/* A rate as a multiple of 2.5 Gb/s (IBV_RATE_10_GBPS -> 4), -1 for a code
 * that is none; and back, IBV_RATE_MAX for a multiple that is no rate. */
int ibv_rate_to_mult(enum ibv_rate rate) UABI_OFED_CONST_FN;
enum ibv_rate mult_to_ibv_rate(int mult) UABI_OFED_CONST_FN;

struct ibv_ah_attr {
	struct ibv_global_route grh;
	uint16_t dlid;
	uint8_t sl;
	uint8_t src_path_bits;
	uint8_t static_rate;
	uint8_t is_global;
	uint8_t port_num;
};

struct ibv_ah {
	struct ibv_context *context;
	struct ibv_pd *pd;
	uint32_t handle;
};

/* An XRC domain, shared by the processes that open it on the same file. */
struct ibv_xrc_domain {
	struct ibv_context *context;
	uint32_t handle;
};

/* ------------------------------------------------------------ CQ, SRQ, QP */

struct ibv_comp_channel {
	struct ibv_context *context;
	int fd;
	int refcnt;
};

struct ibv_cq {
	struct ibv_context *context;
	struct ibv_comp_channel *channel;
	void *cq_context;
	uint32_t handle;
	int cqe;
	uint32_t comp_events_completed; /* OFED: before the mutex */
	uint32_t async_events_completed;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
};

enum ibv_srq_attr_mask { IBV_SRQ_MAX_WR = 1 << 0, IBV_SRQ_LIMIT = 1 << 1 };

struct ibv_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct ibv_srq_init_attr {
	void *srq_context;
	struct ibv_srq_attr attr;
};

/* OFED's layout: the XRC fields before the mutex. */
struct ibv_srq {
	struct ibv_context *context;
	void *srq_context;
	struct ibv_pd *pd;
	uint32_t handle;
	uint32_t events_completed;
	uint32_t xrc_srq_num; /* what senders put in xrc_remote_srq_num */
	struct ibv_xrc_domain *xrc_domain;
	struct ibv_cq *xrc_cq;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
};

enum ibv_qp_type {
	IBV_QPT_RC = 2,
	IBV_QPT_UC,
	IBV_QPT_UD,
	IBV_QPT_XRC,	    /* 5: the send side of XRC */
	IBV_QPT_RAW_ETH = 8 /* upstream's IBV_QPT_RAW_PACKET */
};

struct ibv_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct ibv_qp_init_attr {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
	struct ibv_xrc_domain *xrc_domain; /* IBV_QPT_XRC, xrc rcv QPs */
};

enum ibv_qp_attr_mask {
	IBV_QP_STATE = 1 << 0,
	IBV_QP_CUR_STATE = 1 << 1,
	IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	IBV_QP_ACCESS_FLAGS = 1 << 3,
	IBV_QP_PKEY_INDEX = 1 << 4,
	IBV_QP_PORT = 1 << 5,
	IBV_QP_QKEY = 1 << 6,
	IBV_QP_AV = 1 << 7,
	IBV_QP_PATH_MTU = 1 << 8,
	IBV_QP_TIMEOUT = 1 << 9,
	IBV_QP_RETRY_CNT = 1 << 10,
	IBV_QP_RNR_RETRY = 1 << 11,
	IBV_QP_RQ_PSN = 1 << 12,
	IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	IBV_QP_ALT_PATH = 1 << 14,
	IBV_QP_MIN_RNR_TIMER = 1 << 15,
	IBV_QP_SQ_PSN = 1 << 16,
	IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	IBV_QP_PATH_MIG_STATE = 1 << 18,
	IBV_QP_CAP = 1 << 19,
	IBV_QP_DEST_QPN = 1 << 20
};

enum ibv_qp_state {
	IBV_QPS_RESET,
	IBV_QPS_INIT,
	IBV_QPS_RTR,
	IBV_QPS_RTS,
	IBV_QPS_SQD,
	IBV_QPS_SQE,
	IBV_QPS_ERR
};

enum ibv_mig_state { IBV_MIG_MIGRATED, IBV_MIG_REARM, IBV_MIG_ARMED };

struct ibv_qp_attr {
	enum ibv_qp_state qp_state;
	enum ibv_qp_state cur_qp_state;
	enum ibv_mtu path_mtu;
	enum ibv_mig_state path_mig_state;
	uint32_t qkey;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	int qp_access_flags;
	struct ibv_qp_cap cap;
	struct ibv_ah_attr ah_attr;
	struct ibv_ah_attr alt_ah_attr;
	uint16_t pkey_index;
	uint16_t alt_pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t sq_draining;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t alt_port_num;
	uint8_t alt_timeout;
};

enum ibv_wr_opcode {
	IBV_WR_RDMA_WRITE,
	IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_SEND,
	IBV_WR_SEND_WITH_IMM,
	IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD
};

enum ibv_send_flags {
	IBV_SEND_FENCE = 1 << 0,
	IBV_SEND_SIGNALED = 1 << 1,
	IBV_SEND_SOLICITED = 1 << 2,
	IBV_SEND_INLINE = 1 << 3
};

struct ibv_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct ibv_send_wr {
	uint64_t wr_id;
	struct ibv_send_wr *next;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	int send_flags;
	uint32_t imm_data; /* network byte order */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct ibv_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
	uint32_t xrc_remote_srq_num; /* IBV_QPT_XRC: the target SRQ */
};

struct ibv_recv_wr {
	uint64_t wr_id;
	struct ibv_recv_wr *next;
	struct ibv_sge *sg_list;
	int num_sge;
};

/* OFED's layout: events_completed and xrc_domain before the mutex. */
struct ibv_qp {
	struct ibv_context *context;
	void *qp_context;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	uint32_t events_completed;
	struct ibv_xrc_domain *xrc_domain;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
};

/* ------------------------------------------------------ device, context */

struct ibv_device;

struct ibv_device_ops {
	struct ibv_context *(*alloc_context)(struct ibv_device *device, int cmd_fd);
	void (*free_context)(struct ibv_context *context);
};

enum { IBV_SYSFS_NAME_MAX = 64, IBV_SYSFS_PATH_MAX = 256 };

struct ibv_device {
	struct ibv_device_ops ops;
	enum ibv_node_type node_type;
	enum ibv_transport_type transport_type;
	char name[IBV_SYSFS_NAME_MAX];
	char dev_name[IBV_SYSFS_NAME_MAX];
	char dev_path[IBV_SYSFS_PATH_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
};

/* OFED's providers served its XRC verbs through this table, hung off
 * ibv_context.more_ops.  The library has no such table (and ibv_context
 * no such member): the type is here for source that names it. */
struct ibv_more_ops {
	struct ibv_srq *(*create_xrc_srq)(struct ibv_pd *pd, struct ibv_xrc_domain *xrc_domain,
					  struct ibv_cq *xrc_cq,
					  struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_xrc_domain *(*open_xrc_domain)(struct ibv_context *context, int fd, int oflag);
	int (*close_xrc_domain)(struct ibv_xrc_domain *d);
	int (*create_xrc_rcv_qp)(struct ibv_qp_init_attr *init_attr, uint32_t *xrc_qp_num);
	int (*modify_xrc_rcv_qp)(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num,
				 struct ibv_qp_attr *attr, int attr_mask);
	int (*query_xrc_rcv_qp)(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num,
				struct ibv_qp_attr *attr, int attr_mask,
				struct ibv_qp_init_attr *init_attr);
	int (*reg_xrc_rcv_qp)(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num);
	int (*unreg_xrc_rcv_qp)(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num);
};

/* The table the inline calls below go through, OFED's 32 slots in OFED's
 * order.  Only those the library fills with OFED's signature are typed;
 * the others are opaque (NULL, or rdma-core's signatures: its bind_mw takes
 * a differently laid out ibv_mw_bind). */
struct ibv_context_ops {
	void *query_device_;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	void *alloc_pd_, *dealloc_pd_, *reg_mr_, *rereg_mr_, *dereg_mr_, *alloc_mw_, *bind_mw_,
	    *dealloc_mw_, *create_cq_;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	void *cq_event_, *resize_cq_, *destroy_cq_, *create_srq_, *modify_srq_, *query_srq_,
	    *destroy_srq_;
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	void *create_qp_, *query_qp_, *modify_qp_, *destroy_qp_;
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	void *create_ah_, *destroy_ah_, *attach_mcast_, *detach_mcast_, *async_event_;
};

struct ibv_context {
	struct ibv_device *device;
	struct ibv_context_ops ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	pthread_mutex_t mutex;
	void *abi_compat;
	/* OFED's more_ops pointer followed here: not provided (see the top of
	 * this file); XRC is reached through the functions below. */
};

/* OFED routed ibv_query_port() through the provider's slot, clearing the
 * fields older providers did not write first; the macro at the end of this
 * file makes calls do the same (the library fills the slot, for binaries
 * built against OFED). */
static inline int ___ibv_query_port(struct ibv_context *context, uint8_t port_num,
				    struct ibv_port_attr *port_attr)
{
	port_attr->link_layer = IBV_LINK_LAYER_UNSPECIFIED;
	port_attr->pad = 0;
	return context->ops.query_port(context, port_num, port_attr);
}

/* -------------------------------------------------------------- the API */

struct ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct ibv_device **list);
const char *ibv_get_device_name(struct ibv_device *device);
uint64_t ibv_get_device_guid(struct ibv_device *device);
struct ibv_context *ibv_open_device(struct ibv_device *device);
int ibv_close_device(struct ibv_context *context);
int ibv_fork_init(void);

int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event);
void ibv_ack_async_event(struct ibv_async_event *event);

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr);
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct ibv_port_attr *port_attr);
int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, uint16_t *pkey);

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);
int ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
int ibv_dereg_mr(struct ibv_mr *mr);

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);
int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);
struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector);
int ibv_resize_cq(struct ibv_cq *cq, int cqe);
int ibv_destroy_cq(struct ibv_cq *cq);
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);
void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);

static inline int ibv_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return cq->context->ops.poll_cq(cq, num_entries, wc);
}

static inline int ibv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return cq->context->ops.req_notify_cq(cq, solicited_only);
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);
int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
int ibv_destroy_srq(struct ibv_srq *srq);

static inline int ibv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
				    struct ibv_recv_wr **bad_recv_wr)
{
	return srq->context->ops.post_srq_recv(srq, recv_wr, bad_recv_wr);
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr);
int ibv_destroy_qp(struct ibv_qp *qp);

static inline int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
				struct ibv_send_wr **bad_wr)
{
	return qp->context->ops.post_send(qp, wr, bad_wr);
}

static inline int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	return qp->context->ops.post_recv(qp, wr, bad_wr);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
			struct ibv_grh *grh, struct ibv_ah_attr *ah_attr);
struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
				     uint8_t port_num);
int ibv_destroy_ah(struct ibv_ah *ah);

/* UD QPs; lid in host byte order. */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);

const char *ibv_node_type_str(enum ibv_node_type node_type);
const char *ibv_port_state_str(enum ibv_port_state port_state);
const char *ibv_event_type_str(enum ibv_event_type event);
const char *ibv_wc_status_str(enum ibv_wc_status status);

/* ------------------------------------------------------------------ XRC
 *
 * One rule (docs/xrc.md): a receive QP lives while any context holds a
 * registration on it.  ibv_create_xrc_rcv_qp creates one and registers the
 * caller; ibv_reg_xrc_rcv_qp registers another context (another process)
 * on an existing one; ibv_unreg_xrc_rcv_qp drops the caller's registration
 * and the QP goes with the last.  Only registered contexts may modify or
 * query it.  Errors are positive errno values.
 */

/* fd: a file naming the domain (processes that open the same file share
 * it), or -1 for a domain private to this context; oflag O_CREAT / O_EXCL
 * as open(2).  NULL and errno on failure. */
struct ibv_xrc_domain *ibv_open_xrc_domain(struct ibv_context *context, int fd, int oflag);
int ibv_close_xrc_domain(struct ibv_xrc_domain *d);

/* An SRQ that receives what XRC senders address to srq->xrc_srq_num; its
 * completions go to xrc_cq. */
struct ibv_srq *ibv_create_xrc_srq(struct ibv_pd *pd, struct ibv_xrc_domain *xrc_domain,
				   struct ibv_cq *xrc_cq, struct ibv_srq_init_attr *srq_init_attr);

/* init_attr->xrc_domain names the domain (cap and sq_sig_all are read);
 * the new QP's number goes to *xrc_rcv_qpn; the caller is registered. */
int ibv_create_xrc_rcv_qp(struct ibv_qp_init_attr *init_attr, uint32_t *xrc_rcv_qpn);
int ibv_modify_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num,
			  struct ibv_qp_attr *attr, int attr_mask);
int ibv_query_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num,
			 struct ibv_qp_attr *attr, int attr_mask,
			 struct ibv_qp_init_attr *init_attr);
int ibv_reg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num);
int ibv_unreg_xrc_rcv_qp(struct ibv_xrc_domain *xrc_domain, uint32_t xrc_qp_num);

#ifdef __cplusplus
}
#endif

#undef UABI_OFED_CONST_FN

/* After the prototype, so &ibv_query_port still names the function. */
#define ibv_query_port(context, port_num, port_attr) ___ibv_query_port(context, port_num, port_attr)

#endif /* INFINIBAND_VERBS_H */
