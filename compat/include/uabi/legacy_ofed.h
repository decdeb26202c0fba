/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The OFED 1.3-1.5 XRC dialect of the legacy uverbs write() ABI.
 *
 * OFED's libibverbs (1.1.x with XRC) numbered eight XRC commands right after
 * IB_USER_VERBS_CMD_POST_SRQ_RECV (36), so they collide with upstream's
 * OPEN_XRCD..OPEN_QP (37-40).  No Debian header carries them; the layouts
 * below are the ones documented in docs/legacy-abi.md (with sources), written
 * here under our own names and checked by the static assertions at the end.
 * Every struct starts with the 8-byte struct ib_uverbs_cmd_hdr, as OFED's
 * kern-abi.h structs did, and may be followed by driver data.
 */
#ifndef UABI_LEGACY_OFED_H
#define UABI_LEGACY_OFED_H

#include <linux/types.h>
#include <rdma/ib_user_verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	UABI_OFED_CMD_CREATE_XRC_SRQ = 37,
	UABI_OFED_CMD_OPEN_XRC_DOMAIN = 38,
	UABI_OFED_CMD_CLOSE_XRC_DOMAIN = 39,
	UABI_OFED_CMD_CREATE_XRC_RCV_QP = 40,
	UABI_OFED_CMD_MODIFY_XRC_RCV_QP = 41,
	UABI_OFED_CMD_QUERY_XRC_RCV_QP = 42,
	UABI_OFED_CMD_REG_XRC_RCV_QP = 43,
	UABI_OFED_CMD_UNREG_XRC_RCV_QP = 44,
	UABI_OFED_CMD_LAST = UABI_OFED_CMD_UNREG_XRC_RCV_QP,
};

/* OFED's enum ibv_qp_type had IBV_QPT_XRC (the send side) right after UD. */
#define UABI_OFED_QPT_XRC 5

/* Response: struct ib_uverbs_create_srq_resp (srq_handle, max_wr, max_sge,
 * then a word OFED called reserved; we put the SRQ number there, as upstream
 * later did). */
struct uabi_ofed_create_xrc_srq {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 pd_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 xrcd_handle;
	__u32 xrc_cq;
};

struct uabi_ofed_open_xrc_domain {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 fd;
	__u32 oflags;
};

struct uabi_ofed_open_xrc_domain_resp {
	__u32 xrcd_handle;
};

/* Sent with out_words 0: the response field is not used. */
struct uabi_ofed_close_xrc_domain {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 xrcd_handle;
	__u32 reserved;
};

struct uabi_ofed_create_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 xrc_domain_handle;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u8 sq_sig_all;
	__u8 qp_type;
	__u8 reserved[6];
};

struct uabi_ofed_create_xrc_rcv_qp_resp {
	__u32 qpn;
	__u32 reserved;
};

/* No response. */
struct uabi_ofed_modify_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__u32 xrc_domain_handle;
	__u32 qp_num;
	struct ib_uverbs_qp_dest dest;
	struct ib_uverbs_qp_dest alt_dest;
	__u32 attr_mask;
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;
	__u16 pkey_index;
	__u16 alt_pkey_index;
	__u8 qp_state;
	__u8 cur_qp_state;
	__u8 path_mtu;
	__u8 path_mig_state;
	__u8 en_sqd_async_notify;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 alt_port_num;
	__u8 alt_timeout;
	__u8 reserved[6];
};

/* Response: struct ib_uverbs_query_qp_resp. */
struct uabi_ofed_query_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 xrc_domain_handle;
	__u32 qp_num;
	__u32 attr_mask;
	__u32 reserved;
};

/* REG and UNREG: no response. */
struct uabi_ofed_reg_xrc_rcv_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__u32 xrc_domain_handle;
	__u32 qp_num;
};

#define UABI_OFED_CHECK(cond, msg) _Static_assert(cond, msg)
#ifdef __cplusplus
#undef UABI_OFED_CHECK
#define UABI_OFED_CHECK(cond, msg) static_assert(cond, msg)
#endif
#define UABI_OFED_OFF(s, f, v) UABI_OFED_CHECK(__builtin_offsetof(struct s, f) == (v), #s "." #f)

UABI_OFED_CHECK(sizeof(struct uabi_ofed_create_xrc_srq) == 48, "create_xrc_srq");
UABI_OFED_OFF(uabi_ofed_create_xrc_srq, response, 8);
UABI_OFED_OFF(uabi_ofed_create_xrc_srq, user_handle, 16);
UABI_OFED_OFF(uabi_ofed_create_xrc_srq, pd_handle, 24);
UABI_OFED_OFF(uabi_ofed_create_xrc_srq, srq_limit, 36);
UABI_OFED_OFF(uabi_ofed_create_xrc_srq, xrcd_handle, 40);
UABI_OFED_OFF(uabi_ofed_create_xrc_srq, xrc_cq, 44);
UABI_OFED_CHECK(sizeof(struct uabi_ofed_open_xrc_domain) == 24, "open_xrc_domain");
UABI_OFED_OFF(uabi_ofed_open_xrc_domain, fd, 16);
UABI_OFED_OFF(uabi_ofed_open_xrc_domain, oflags, 20);
UABI_OFED_CHECK(sizeof(struct uabi_ofed_open_xrc_domain_resp) == 4, "open_xrc_domain_resp");
UABI_OFED_CHECK(sizeof(struct uabi_ofed_close_xrc_domain) == 24, "close_xrc_domain");
UABI_OFED_OFF(uabi_ofed_close_xrc_domain, xrcd_handle, 16);
UABI_OFED_CHECK(sizeof(struct uabi_ofed_create_xrc_rcv_qp) == 56, "create_xrc_rcv_qp");
UABI_OFED_OFF(uabi_ofed_create_xrc_rcv_qp, user_handle, 16);
UABI_OFED_OFF(uabi_ofed_create_xrc_rcv_qp, xrc_domain_handle, 24);
UABI_OFED_OFF(uabi_ofed_create_xrc_rcv_qp, max_inline_data, 44);
UABI_OFED_OFF(uabi_ofed_create_xrc_rcv_qp, sq_sig_all, 48);
UABI_OFED_OFF(uabi_ofed_create_xrc_rcv_qp, qp_type, 49);
UABI_OFED_CHECK(sizeof(struct uabi_ofed_create_xrc_rcv_qp_resp) == 8, "create_xrc_rcv_qp_resp");
UABI_OFED_CHECK(sizeof(struct uabi_ofed_modify_xrc_rcv_qp) == 128, "modify_xrc_rcv_qp");
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, qp_num, 12);
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, dest, 16);
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, alt_dest, 48);
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, attr_mask, 80);
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, pkey_index, 104);
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, qp_state, 108);
UABI_OFED_OFF(uabi_ofed_modify_xrc_rcv_qp, alt_timeout, 121);
UABI_OFED_CHECK(sizeof(struct uabi_ofed_query_xrc_rcv_qp) == 32, "query_xrc_rcv_qp");
UABI_OFED_OFF(uabi_ofed_query_xrc_rcv_qp, xrc_domain_handle, 16);
UABI_OFED_OFF(uabi_ofed_query_xrc_rcv_qp, attr_mask, 24);
UABI_OFED_CHECK(sizeof(struct uabi_ofed_reg_xrc_rcv_qp) == 16, "reg_xrc_rcv_qp");
UABI_OFED_OFF(uabi_ofed_reg_xrc_rcv_qp, qp_num, 12);
UABI_OFED_CHECK(sizeof(struct ib_uverbs_qp_dest) == 32, "qp_dest");

#undef UABI_OFED_OFF

#ifdef __cplusplus
}
#endif

#endif /* UABI_LEGACY_OFED_H */
