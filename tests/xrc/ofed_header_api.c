/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The OFED 1.5 header (compat/include/ofed/infiniband/verbs.h) against
 * everything OFED 1.5's <infiniband/verbs.h> declared (issue 17): built
 * with only that directory added to the include path, as C and, through
 * ofed_header_api.cpp, as C++, and linked against our libibverbs.so.1.
 *
 * At compile time: every enum constant has OFED's value, every struct
 * OFED's LP64 size and field offsets, every function OFED's prototype (each
 * is assigned to a pointer of the exact type OFED gave it), the macros
 * exist.  At run time (UABI_BACKEND=inproc): the pure functions answer as
 * OFED's did (rates, the four string functions), every function the header
 * declares resolves in the library, and one device is driven through the
 * OFED names: ibv_query_port through OFED's macro and provider slot, CQ
 * with channel and resize, SRQ, a UD message to itself with a GRH read back
 * through struct ibv_grh, ibv_init_ah_from_wc / ibv_create_ah_from_wc,
 * multicast attach and detach.
 *
 * One line per failed check, then "ofed_header_api: PASS" or "FAIL"; exit
 * status 0 only if every check passed.
 */
#include <infiniband/verbs.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef UABI_OFED_VERBS_API
#error "this is OFED 1.5 source: compile with -I<rdma-uabi>/compat/include/ofed first"
#endif

#ifdef __cplusplus
#define SA(e) static_assert(e, #e)
#define LANG "C++"
#else
#define SA(e) _Static_assert(e, #e)
#define LANG "C"
#endif

/* The macros OFED's header left defined. */
#ifndef BEGIN_C_DECLS
#error "BEGIN_C_DECLS"
#endif
#ifndef END_C_DECLS
#error "END_C_DECLS"
#endif
#ifndef ibv_query_port
#error "ibv_query_port is a macro in OFED 1.5"
#endif

/* ------------------------------------------------ constants: OFED's values */

SA(IBV_NODE_UNKNOWN == -1 && IBV_NODE_CA == 1 && IBV_NODE_SWITCH == 2 && IBV_NODE_ROUTER == 3 &&
   IBV_NODE_RNIC == 4);
SA(IBV_TRANSPORT_UNKNOWN == -1 && IBV_TRANSPORT_IB == 0 && IBV_TRANSPORT_IWARP == 1);
SA(IBV_DEVICE_RESIZE_MAX_WR == 0x1 && IBV_DEVICE_BAD_PKEY_CNTR == 0x2 &&
   IBV_DEVICE_BAD_QKEY_CNTR == 0x4 && IBV_DEVICE_RAW_MULTI == 0x8 &&
   IBV_DEVICE_AUTO_PATH_MIG == 0x10 && IBV_DEVICE_CHANGE_PHY_PORT == 0x20 &&
   IBV_DEVICE_UD_AV_PORT_ENFORCE == 0x40 && IBV_DEVICE_CURR_QP_STATE_MOD == 0x80 &&
   IBV_DEVICE_SHUTDOWN_PORT == 0x100 && IBV_DEVICE_INIT_TYPE == 0x200 &&
   IBV_DEVICE_PORT_ACTIVE_EVENT == 0x400 && IBV_DEVICE_SYS_IMAGE_GUID == 0x800 &&
   IBV_DEVICE_RC_RNR_NAK_GEN == 0x1000 && IBV_DEVICE_SRQ_RESIZE == 0x2000 &&
   IBV_DEVICE_N_NOTIFY_CQ == 0x4000 && IBV_DEVICE_XRC == 0x100000);
SA(IBV_ATOMIC_NONE == 0 && IBV_ATOMIC_HCA == 1 && IBV_ATOMIC_GLOB == 2);
SA(IBV_MTU_256 == 1 && IBV_MTU_512 == 2 && IBV_MTU_1024 == 3 && IBV_MTU_2048 == 4 &&
   IBV_MTU_4096 == 5);
SA(IBV_PORT_NOP == 0 && IBV_PORT_DOWN == 1 && IBV_PORT_INIT == 2 && IBV_PORT_ARMED == 3 &&
   IBV_PORT_ACTIVE == 4 && IBV_PORT_ACTIVE_DEFER == 5);
SA(IBV_LINK_LAYER_UNSPECIFIED == 0 && IBV_LINK_LAYER_INFINIBAND == 1 &&
   IBV_LINK_LAYER_ETHERNET == 2);
SA(IBV_EVENT_CQ_ERR == 0 && IBV_EVENT_QP_FATAL == 1 && IBV_EVENT_QP_REQ_ERR == 2 &&
   IBV_EVENT_QP_ACCESS_ERR == 3 && IBV_EVENT_COMM_EST == 4 && IBV_EVENT_SQ_DRAINED == 5 &&
   IBV_EVENT_PATH_MIG == 6 && IBV_EVENT_PATH_MIG_ERR == 7 && IBV_EVENT_DEVICE_FATAL == 8 &&
   IBV_EVENT_PORT_ACTIVE == 9 && IBV_EVENT_PORT_ERR == 10 && IBV_EVENT_LID_CHANGE == 11 &&
   IBV_EVENT_PKEY_CHANGE == 12 && IBV_EVENT_SM_CHANGE == 13 && IBV_EVENT_SRQ_ERR == 14 &&
   IBV_EVENT_SRQ_LIMIT_REACHED == 15 && IBV_EVENT_QP_LAST_WQE_REACHED == 16 &&
   IBV_EVENT_CLIENT_REREGISTER == 17 && IBV_EVENT_GID_CHANGE == 18);
SA((unsigned long)IBV_XRC_QP_EVENT_FLAG == 0x80000000ul);
SA(IBV_WC_SUCCESS == 0 && IBV_WC_LOC_LEN_ERR == 1 && IBV_WC_LOC_QP_OP_ERR == 2 &&
   IBV_WC_LOC_EEC_OP_ERR == 3 && IBV_WC_LOC_PROT_ERR == 4 && IBV_WC_WR_FLUSH_ERR == 5 &&
   IBV_WC_MW_BIND_ERR == 6 && IBV_WC_BAD_RESP_ERR == 7 && IBV_WC_LOC_ACCESS_ERR == 8 &&
   IBV_WC_REM_INV_REQ_ERR == 9 && IBV_WC_REM_ACCESS_ERR == 10 && IBV_WC_REM_OP_ERR == 11 &&
   IBV_WC_RETRY_EXC_ERR == 12 && IBV_WC_RNR_RETRY_EXC_ERR == 13 && IBV_WC_LOC_RDD_VIOL_ERR == 14 &&
   IBV_WC_REM_INV_RD_REQ_ERR == 15 && IBV_WC_REM_ABORT_ERR == 16 && IBV_WC_INV_EECN_ERR == 17 &&
   IBV_WC_INV_EEC_STATE_ERR == 18 && IBV_WC_FATAL_ERR == 19 && IBV_WC_RESP_TIMEOUT_ERR == 20 &&
   IBV_WC_GENERAL_ERR == 21);
SA(IBV_WC_SEND == 0 && IBV_WC_RDMA_WRITE == 1 && IBV_WC_RDMA_READ == 2 && IBV_WC_COMP_SWAP == 3 &&
   IBV_WC_FETCH_ADD == 4 && IBV_WC_BIND_MW == 5 && IBV_WC_RECV == 128 &&
   IBV_WC_RECV_RDMA_WITH_IMM == 129);
SA(IBV_WC_GRH == 1 && IBV_WC_WITH_IMM == 2);
SA(IBV_ACCESS_LOCAL_WRITE == 1 && IBV_ACCESS_REMOTE_WRITE == 2 && IBV_ACCESS_REMOTE_READ == 4 &&
   IBV_ACCESS_REMOTE_ATOMIC == 8 && IBV_ACCESS_MW_BIND == 16);
SA(IBV_REREG_MR_CHANGE_TRANSLATION == 1 && IBV_REREG_MR_CHANGE_PD == 2 &&
   IBV_REREG_MR_CHANGE_ACCESS == 4 && IBV_REREG_MR_KEEP_VALID == 8);
SA(IBV_MW_TYPE_1 == 1 && IBV_MW_TYPE_2 == 2);
SA(IBV_RATE_MAX == 0 && IBV_RATE_2_5_GBPS == 2 && IBV_RATE_5_GBPS == 5 && IBV_RATE_10_GBPS == 3 &&
   IBV_RATE_20_GBPS == 6 && IBV_RATE_30_GBPS == 4 && IBV_RATE_40_GBPS == 7 &&
   IBV_RATE_60_GBPS == 8 && IBV_RATE_80_GBPS == 9 && IBV_RATE_120_GBPS == 10);
SA(IBV_SRQ_MAX_WR == 1 && IBV_SRQ_LIMIT == 2);
SA(IBV_QPT_RC == 2 && IBV_QPT_UC == 3 && IBV_QPT_UD == 4 && IBV_QPT_XRC == 5 &&
   IBV_QPT_RAW_ETH == 8);
SA(IBV_QP_STATE == 1 << 0 && IBV_QP_CUR_STATE == 1 << 1 && IBV_QP_EN_SQD_ASYNC_NOTIFY == 1 << 2 &&
   IBV_QP_ACCESS_FLAGS == 1 << 3 && IBV_QP_PKEY_INDEX == 1 << 4 && IBV_QP_PORT == 1 << 5 &&
   IBV_QP_QKEY == 1 << 6 && IBV_QP_AV == 1 << 7 && IBV_QP_PATH_MTU == 1 << 8 &&
   IBV_QP_TIMEOUT == 1 << 9 && IBV_QP_RETRY_CNT == 1 << 10 && IBV_QP_RNR_RETRY == 1 << 11 &&
   IBV_QP_RQ_PSN == 1 << 12 && IBV_QP_MAX_QP_RD_ATOMIC == 1 << 13 && IBV_QP_ALT_PATH == 1 << 14 &&
   IBV_QP_MIN_RNR_TIMER == 1 << 15 && IBV_QP_SQ_PSN == 1 << 16 &&
   IBV_QP_MAX_DEST_RD_ATOMIC == 1 << 17 && IBV_QP_PATH_MIG_STATE == 1 << 18 &&
   IBV_QP_CAP == 1 << 19 && IBV_QP_DEST_QPN == 1 << 20);
SA(IBV_QPS_RESET == 0 && IBV_QPS_INIT == 1 && IBV_QPS_RTR == 2 && IBV_QPS_RTS == 3 &&
   IBV_QPS_SQD == 4 && IBV_QPS_SQE == 5 && IBV_QPS_ERR == 6);
SA(IBV_MIG_MIGRATED == 0 && IBV_MIG_REARM == 1 && IBV_MIG_ARMED == 2);
SA(IBV_WR_RDMA_WRITE == 0 && IBV_WR_RDMA_WRITE_WITH_IMM == 1 && IBV_WR_SEND == 2 &&
   IBV_WR_SEND_WITH_IMM == 3 && IBV_WR_RDMA_READ == 4 && IBV_WR_ATOMIC_CMP_AND_SWP == 5 &&
   IBV_WR_ATOMIC_FETCH_AND_ADD == 6);
SA(IBV_SEND_FENCE == 1 && IBV_SEND_SIGNALED == 2 && IBV_SEND_SOLICITED == 4 &&
   IBV_SEND_INLINE == 8);
SA(IBV_SYSFS_NAME_MAX == 64 && IBV_SYSFS_PATH_MAX == 256);

/* ------------------------------------------ structs: OFED's LP64 layouts */

SA(sizeof(void *) == 8); /* the offsets below are LP64's */
#define AT(type, field, off) SA(offsetof(struct type, field) == (off))

SA(sizeof(union ibv_gid) == 16);
SA(offsetof(union ibv_gid, global.interface_id) == 8);

SA(sizeof(struct ibv_device_attr) == 232);
AT(ibv_device_attr, node_guid, 64);
AT(ibv_device_attr, sys_image_guid, 72);
AT(ibv_device_attr, max_mr_size, 80);
AT(ibv_device_attr, page_size_cap, 88);
AT(ibv_device_attr, vendor_id, 96);
AT(ibv_device_attr, vendor_part_id, 100);
AT(ibv_device_attr, hw_ver, 104);
AT(ibv_device_attr, max_qp, 108);
AT(ibv_device_attr, max_qp_wr, 112);
AT(ibv_device_attr, device_cap_flags, 116);
AT(ibv_device_attr, max_sge, 120);
AT(ibv_device_attr, max_sge_rd, 124);
AT(ibv_device_attr, max_cq, 128);
AT(ibv_device_attr, max_cqe, 132);
AT(ibv_device_attr, max_mr, 136);
AT(ibv_device_attr, max_pd, 140);
AT(ibv_device_attr, max_qp_rd_atom, 144);
AT(ibv_device_attr, max_ee_rd_atom, 148);
AT(ibv_device_attr, max_res_rd_atom, 152);
AT(ibv_device_attr, max_qp_init_rd_atom, 156);
AT(ibv_device_attr, max_ee_init_rd_atom, 160);
AT(ibv_device_attr, atomic_cap, 164);
AT(ibv_device_attr, max_ee, 168);
AT(ibv_device_attr, max_rdd, 172);
AT(ibv_device_attr, max_mw, 176);
AT(ibv_device_attr, max_raw_ipv6_qp, 180);
AT(ibv_device_attr, max_raw_ethy_qp, 184);
AT(ibv_device_attr, max_mcast_grp, 188);
AT(ibv_device_attr, max_mcast_qp_attach, 192);
AT(ibv_device_attr, max_total_mcast_qp_attach, 196);
AT(ibv_device_attr, max_ah, 200);
AT(ibv_device_attr, max_fmr, 204);
AT(ibv_device_attr, max_map_per_fmr, 208);
AT(ibv_device_attr, max_srq, 212);
AT(ibv_device_attr, max_srq_wr, 216);
AT(ibv_device_attr, max_srq_sge, 220);
AT(ibv_device_attr, max_pkeys, 224);
AT(ibv_device_attr, local_ca_ack_delay, 226);
AT(ibv_device_attr, phys_port_cnt, 227);

SA(sizeof(struct ibv_port_attr) == 48);
AT(ibv_port_attr, max_mtu, 4);
AT(ibv_port_attr, active_mtu, 8);
AT(ibv_port_attr, gid_tbl_len, 12);
AT(ibv_port_attr, port_cap_flags, 16);
AT(ibv_port_attr, max_msg_sz, 20);
AT(ibv_port_attr, bad_pkey_cntr, 24);
AT(ibv_port_attr, qkey_viol_cntr, 28);
AT(ibv_port_attr, pkey_tbl_len, 32);
AT(ibv_port_attr, lid, 34);
AT(ibv_port_attr, sm_lid, 36);
AT(ibv_port_attr, lmc, 38);
AT(ibv_port_attr, max_vl_num, 39);
AT(ibv_port_attr, sm_sl, 40);
AT(ibv_port_attr, subnet_timeout, 41);
AT(ibv_port_attr, init_type_reply, 42);
AT(ibv_port_attr, active_width, 43);
AT(ibv_port_attr, active_speed, 44);
AT(ibv_port_attr, phys_state, 45);
AT(ibv_port_attr, link_layer, 46);
AT(ibv_port_attr, pad, 47);

SA(sizeof(struct ibv_async_event) == 16);
AT(ibv_async_event, element.xrc_qp_num, 0);
AT(ibv_async_event, event_type, 8);

SA(sizeof(struct ibv_wc) == 48);
AT(ibv_wc, status, 8);
AT(ibv_wc, opcode, 12);
AT(ibv_wc, vendor_err, 16);
AT(ibv_wc, byte_len, 20);
AT(ibv_wc, imm_data, 24);
AT(ibv_wc, qp_num, 28);
AT(ibv_wc, src_qp, 32);
AT(ibv_wc, wc_flags, 36);
AT(ibv_wc, pkey_index, 40);
AT(ibv_wc, slid, 42);
AT(ibv_wc, sl, 44);
AT(ibv_wc, dlid_path_bits, 45);

SA(sizeof(struct ibv_pd) == 16);
AT(ibv_pd, handle, 8);
SA(sizeof(struct ibv_mr) == 48);
AT(ibv_mr, pd, 8);
AT(ibv_mr, addr, 16);
AT(ibv_mr, length, 24);
AT(ibv_mr, handle, 32);
AT(ibv_mr, lkey, 36);
AT(ibv_mr, rkey, 40);
SA(sizeof(struct ibv_mw) == 24);
AT(ibv_mw, pd, 8);
AT(ibv_mw, rkey, 16);
SA(sizeof(struct ibv_mw_bind) == 40);
AT(ibv_mw_bind, mr, 8);
AT(ibv_mw_bind, addr, 16);
AT(ibv_mw_bind, length, 24);
AT(ibv_mw_bind, send_flags, 32);
AT(ibv_mw_bind, mw_access_flags, 36);

SA(sizeof(struct ibv_global_route) == 24);
AT(ibv_global_route, flow_label, 16);
AT(ibv_global_route, sgid_index, 20);
AT(ibv_global_route, hop_limit, 21);
AT(ibv_global_route, traffic_class, 22);
SA(sizeof(struct ibv_grh) == 40);
AT(ibv_grh, paylen, 4);
AT(ibv_grh, next_hdr, 6);
AT(ibv_grh, hop_limit, 7);
AT(ibv_grh, sgid, 8);
AT(ibv_grh, dgid, 24);
SA(sizeof(struct ibv_ah_attr) == 32);
AT(ibv_ah_attr, dlid, 24);
AT(ibv_ah_attr, sl, 26);
AT(ibv_ah_attr, src_path_bits, 27);
AT(ibv_ah_attr, static_rate, 28);
AT(ibv_ah_attr, is_global, 29);
AT(ibv_ah_attr, port_num, 30);
SA(sizeof(struct ibv_ah) == 24);
AT(ibv_ah, pd, 8);
AT(ibv_ah, handle, 16);
SA(sizeof(struct ibv_xrc_domain) == 16);
AT(ibv_xrc_domain, handle, 8);

SA(sizeof(struct ibv_srq_attr) == 12);
AT(ibv_srq_attr, max_sge, 4);
AT(ibv_srq_attr, srq_limit, 8);
SA(sizeof(struct ibv_srq_init_attr) == 24);
AT(ibv_srq_init_attr, attr, 8);
SA(sizeof(struct ibv_qp_cap) == 20);
AT(ibv_qp_cap, max_inline_data, 16);
SA(sizeof(struct ibv_qp_init_attr) == 72);
AT(ibv_qp_init_attr, send_cq, 8);
AT(ibv_qp_init_attr, recv_cq, 16);
AT(ibv_qp_init_attr, srq, 24);
AT(ibv_qp_init_attr, cap, 32);
AT(ibv_qp_init_attr, qp_type, 52);
AT(ibv_qp_init_attr, sq_sig_all, 56);
AT(ibv_qp_init_attr, xrc_domain, 64);

SA(sizeof(struct ibv_qp_attr) == 136);
AT(ibv_qp_attr, cur_qp_state, 4);
AT(ibv_qp_attr, path_mtu, 8);
AT(ibv_qp_attr, path_mig_state, 12);
AT(ibv_qp_attr, qkey, 16);
AT(ibv_qp_attr, rq_psn, 20);
AT(ibv_qp_attr, sq_psn, 24);
AT(ibv_qp_attr, dest_qp_num, 28);
AT(ibv_qp_attr, qp_access_flags, 32);
AT(ibv_qp_attr, cap, 36);
AT(ibv_qp_attr, ah_attr, 56);
AT(ibv_qp_attr, alt_ah_attr, 88);
AT(ibv_qp_attr, pkey_index, 120);
AT(ibv_qp_attr, alt_pkey_index, 122);
AT(ibv_qp_attr, en_sqd_async_notify, 124);
AT(ibv_qp_attr, sq_draining, 125);
AT(ibv_qp_attr, max_rd_atomic, 126);
AT(ibv_qp_attr, max_dest_rd_atomic, 127);
AT(ibv_qp_attr, min_rnr_timer, 128);
AT(ibv_qp_attr, port_num, 129);
AT(ibv_qp_attr, timeout, 130);
AT(ibv_qp_attr, retry_cnt, 131);
AT(ibv_qp_attr, rnr_retry, 132);
AT(ibv_qp_attr, alt_port_num, 133);
AT(ibv_qp_attr, alt_timeout, 134);

SA(sizeof(struct ibv_sge) == 16);
AT(ibv_sge, length, 8);
AT(ibv_sge, lkey, 12);
SA(sizeof(struct ibv_send_wr) == 80);
AT(ibv_send_wr, next, 8);
AT(ibv_send_wr, sg_list, 16);
AT(ibv_send_wr, num_sge, 24);
AT(ibv_send_wr, opcode, 28);
AT(ibv_send_wr, send_flags, 32);
AT(ibv_send_wr, imm_data, 36);
AT(ibv_send_wr, wr.rdma.remote_addr, 40);
AT(ibv_send_wr, wr.rdma.rkey, 48);
AT(ibv_send_wr, wr.atomic.compare_add, 48);
AT(ibv_send_wr, wr.atomic.swap, 56);
AT(ibv_send_wr, wr.atomic.rkey, 64);
AT(ibv_send_wr, wr.ud.ah, 40);
AT(ibv_send_wr, wr.ud.remote_qpn, 48);
AT(ibv_send_wr, wr.ud.remote_qkey, 52);
AT(ibv_send_wr, xrc_remote_srq_num, 72);
SA(sizeof(struct ibv_recv_wr) == 32);
AT(ibv_recv_wr, num_sge, 24);

SA(sizeof(struct ibv_srq) == 144);
AT(ibv_srq, srq_context, 8);
AT(ibv_srq, pd, 16);
AT(ibv_srq, handle, 24);
AT(ibv_srq, events_completed, 28);
AT(ibv_srq, xrc_srq_num, 32);
AT(ibv_srq, xrc_domain, 40);
AT(ibv_srq, xrc_cq, 48);
AT(ibv_srq, mutex, 56);
AT(ibv_srq, cond, 96);
SA(sizeof(struct ibv_qp) == 168);
AT(ibv_qp, qp_context, 8);
AT(ibv_qp, pd, 16);
AT(ibv_qp, send_cq, 24);
AT(ibv_qp, recv_cq, 32);
AT(ibv_qp, srq, 40);
AT(ibv_qp, handle, 48);
AT(ibv_qp, qp_num, 52);
AT(ibv_qp, state, 56);
AT(ibv_qp, qp_type, 60);
AT(ibv_qp, events_completed, 64);
AT(ibv_qp, xrc_domain, 72);
AT(ibv_qp, mutex, 80);
AT(ibv_qp, cond, 120);
SA(sizeof(struct ibv_comp_channel) == 16);
AT(ibv_comp_channel, fd, 8);
AT(ibv_comp_channel, refcnt, 12);
SA(sizeof(struct ibv_cq) == 128);
AT(ibv_cq, channel, 8);
AT(ibv_cq, cq_context, 16);
AT(ibv_cq, handle, 24);
AT(ibv_cq, cqe, 28);
AT(ibv_cq, comp_events_completed, 32);
AT(ibv_cq, async_events_completed, 36);
AT(ibv_cq, mutex, 40);
AT(ibv_cq, cond, 80);

SA(sizeof(struct ibv_device_ops) == 16);
AT(ibv_device_ops, free_context, 8);
SA(sizeof(struct ibv_device) == 664);
AT(ibv_device, node_type, 16);
AT(ibv_device, transport_type, 20);
AT(ibv_device, name, 24);
AT(ibv_device, dev_name, 88);
AT(ibv_device, dev_path, 152);
AT(ibv_device, ibdev_path, 408);

SA(sizeof(struct ibv_more_ops) == 64);
AT(ibv_more_ops, create_xrc_srq, 0);
AT(ibv_more_ops, open_xrc_domain, 8);
AT(ibv_more_ops, close_xrc_domain, 16);
AT(ibv_more_ops, create_xrc_rcv_qp, 24);
AT(ibv_more_ops, modify_xrc_rcv_qp, 32);
AT(ibv_more_ops, query_xrc_rcv_qp, 40);
AT(ibv_more_ops, reg_xrc_rcv_qp, 48);
AT(ibv_more_ops, unreg_xrc_rcv_qp, 56);

/* OFED's 32 provider slots; those the library fills, at OFED's places. */
SA(sizeof(struct ibv_context_ops) == 32 * 8);
AT(ibv_context_ops, query_port, 1 * 8);
AT(ibv_context_ops, poll_cq, 11 * 8);
AT(ibv_context_ops, req_notify_cq, 12 * 8);
AT(ibv_context_ops, post_srq_recv, 20 * 8);
AT(ibv_context_ops, post_send, 25 * 8);
AT(ibv_context_ops, post_recv, 26 * 8);
/* OFED's context is these fields and then more_ops (at 328), which is
 * left out (the header says why). */
AT(ibv_context, ops, 8);
AT(ibv_context, cmd_fd, 264);
AT(ibv_context, async_fd, 268);
AT(ibv_context, num_comp_vectors, 272);
AT(ibv_context, mutex, 280);
AT(ibv_context, abi_compat, 320);
SA(sizeof(struct ibv_context) == 328);

/* ---------------------------------------- functions: OFED's prototypes */

/* Each initialisation converts implicitly, so a prototype that differs from
 * OFED's (return or parameter types) fails to compile, in C and C++. */
#define FN(ret, name, params) static ret(*const p_##name) params = name;
FN(struct ibv_device **, ibv_get_device_list, (int *))
FN(void, ibv_free_device_list, (struct ibv_device **))
FN(const char *, ibv_get_device_name, (struct ibv_device *))
FN(uint64_t, ibv_get_device_guid, (struct ibv_device *))
FN(struct ibv_context *, ibv_open_device, (struct ibv_device *))
FN(int, ibv_close_device, (struct ibv_context *))
FN(int, ibv_get_async_event, (struct ibv_context *, struct ibv_async_event *))
FN(void, ibv_ack_async_event, (struct ibv_async_event *))
FN(int, ibv_query_device, (struct ibv_context *, struct ibv_device_attr *))
FN(int, ibv_query_port, (struct ibv_context *, uint8_t, struct ibv_port_attr *))
FN(int, ___ibv_query_port, (struct ibv_context *, uint8_t, struct ibv_port_attr *))
FN(int, ibv_query_gid, (struct ibv_context *, uint8_t, int, union ibv_gid *))
FN(int, ibv_query_pkey, (struct ibv_context *, uint8_t, int, uint16_t *))
FN(struct ibv_pd *, ibv_alloc_pd, (struct ibv_context *))
FN(int, ibv_dealloc_pd, (struct ibv_pd *))
FN(struct ibv_mr *, ibv_reg_mr, (struct ibv_pd *, void *, size_t, int))
FN(int, ibv_dereg_mr, (struct ibv_mr *))
FN(struct ibv_comp_channel *, ibv_create_comp_channel, (struct ibv_context *))
FN(int, ibv_destroy_comp_channel, (struct ibv_comp_channel *))
FN(struct ibv_cq *, ibv_create_cq,
   (struct ibv_context *, int, void *, struct ibv_comp_channel *, int))
FN(int, ibv_resize_cq, (struct ibv_cq *, int))
FN(int, ibv_destroy_cq, (struct ibv_cq *))
FN(int, ibv_get_cq_event, (struct ibv_comp_channel *, struct ibv_cq **, void **))
FN(void, ibv_ack_cq_events, (struct ibv_cq *, unsigned int))
FN(int, ibv_poll_cq, (struct ibv_cq *, int, struct ibv_wc *))
FN(int, ibv_req_notify_cq, (struct ibv_cq *, int))
FN(struct ibv_srq *, ibv_create_srq, (struct ibv_pd *, struct ibv_srq_init_attr *))
FN(struct ibv_srq *, ibv_create_xrc_srq,
   (struct ibv_pd *, struct ibv_xrc_domain *, struct ibv_cq *, struct ibv_srq_init_attr *))
FN(int, ibv_modify_srq, (struct ibv_srq *, struct ibv_srq_attr *, int))
FN(int, ibv_query_srq, (struct ibv_srq *, struct ibv_srq_attr *))
FN(int, ibv_destroy_srq, (struct ibv_srq *))
FN(int, ibv_post_srq_recv, (struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **))
FN(struct ibv_qp *, ibv_create_qp, (struct ibv_pd *, struct ibv_qp_init_attr *))
FN(int, ibv_modify_qp, (struct ibv_qp *, struct ibv_qp_attr *, int))
FN(int, ibv_query_qp, (struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *))
FN(int, ibv_destroy_qp, (struct ibv_qp *))
FN(int, ibv_post_send, (struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **))
FN(int, ibv_post_recv, (struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **))
FN(struct ibv_ah *, ibv_create_ah, (struct ibv_pd *, struct ibv_ah_attr *))
FN(int, ibv_init_ah_from_wc,
   (struct ibv_context *, uint8_t, struct ibv_wc *, struct ibv_grh *, struct ibv_ah_attr *))
FN(struct ibv_ah *, ibv_create_ah_from_wc,
   (struct ibv_pd *, struct ibv_wc *, struct ibv_grh *, uint8_t))
FN(int, ibv_destroy_ah, (struct ibv_ah *))
FN(int, ibv_attach_mcast, (struct ibv_qp *, const union ibv_gid *, uint16_t))
FN(int, ibv_detach_mcast, (struct ibv_qp *, const union ibv_gid *, uint16_t))
FN(int, ibv_fork_init, (void))
FN(const char *, ibv_node_type_str, (enum ibv_node_type))
FN(const char *, ibv_port_state_str, (enum ibv_port_state))
FN(const char *, ibv_event_type_str, (enum ibv_event_type))
FN(const char *, ibv_wc_status_str, (enum ibv_wc_status))
FN(int, ibv_rate_to_mult, (enum ibv_rate))
FN(enum ibv_rate, mult_to_ibv_rate, (int))
FN(struct ibv_xrc_domain *, ibv_open_xrc_domain, (struct ibv_context *, int, int))
FN(int, ibv_close_xrc_domain, (struct ibv_xrc_domain *))
FN(int, ibv_create_xrc_rcv_qp, (struct ibv_qp_init_attr *, uint32_t *))
FN(int, ibv_modify_xrc_rcv_qp, (struct ibv_xrc_domain *, uint32_t, struct ibv_qp_attr *, int))
FN(int, ibv_query_xrc_rcv_qp,
   (struct ibv_xrc_domain *, uint32_t, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *))
FN(int, ibv_reg_xrc_rcv_qp, (struct ibv_xrc_domain *, uint32_t))
FN(int, ibv_unreg_xrc_rcv_qp, (struct ibv_xrc_domain *, uint32_t))

/* ------------------------------------------------------------- run time */

static int failed, checks;

static int check(int ok, const char *what, long got)
{
	checks++;
	if (!ok) {
		failed++;
		printf("FAIL: %s (got %ld)\n", what, got);
	}
	return ok;
}
#define CHECK(expr, got) check((expr) ? 1 : 0, #expr, (long)(got))

static void check_str(const char *got, const char *want, const char *call)
{
	checks++;
	if (!got || strcmp(got, want) != 0) {
		failed++;
		printf("FAIL: %s = \"%s\", OFED's is \"%s\"\n", call, got ? got : "(null)", want);
	}
}

static void check_rates(void)
{
	/* OFED's table, and that every other small multiple is no rate. */
	static const struct {
		enum ibv_rate rate;
		int mult;
	} t[] = {{IBV_RATE_2_5_GBPS, 1}, {IBV_RATE_5_GBPS, 2},	 {IBV_RATE_10_GBPS, 4},
		 {IBV_RATE_20_GBPS, 8},	 {IBV_RATE_30_GBPS, 12}, {IBV_RATE_40_GBPS, 16},
		 {IBV_RATE_60_GBPS, 24}, {IBV_RATE_80_GBPS, 32}, {IBV_RATE_120_GBPS, 48}};
	char what[96];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(what, sizeof(what), "ibv_rate_to_mult(%d) == %d", (int)t[i].rate,
			 t[i].mult);
		check(ibv_rate_to_mult(t[i].rate) == t[i].mult, what, ibv_rate_to_mult(t[i].rate));
		snprintf(what, sizeof(what), "mult_to_ibv_rate(%d) == %d", t[i].mult,
			 (int)t[i].rate);
		check(mult_to_ibv_rate(t[i].mult) == t[i].rate, what, mult_to_ibv_rate(t[i].mult));
	}
	CHECK(ibv_rate_to_mult(IBV_RATE_10_GBPS) == 4, ibv_rate_to_mult(IBV_RATE_10_GBPS));
	CHECK(ibv_rate_to_mult(IBV_RATE_MAX) == -1, ibv_rate_to_mult(IBV_RATE_MAX));
	/* Up to 10: rdma-core gives 11 and 20 codes of its own (28 and 50
	 * Gb/s), which OFED programs do not produce from port widths. */
	static const int none[] = {-4, -1, 0, 3, 5, 6, 7, 9, 10};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		snprintf(what, sizeof(what), "mult_to_ibv_rate(%d) == IBV_RATE_MAX", none[i]);
		check(mult_to_ibv_rate(none[i]) == IBV_RATE_MAX, what, mult_to_ibv_rate(none[i]));
	}
}

static void check_strings(void)
{
	check_str(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter", "node CA");
	check_str(ibv_node_type_str(IBV_NODE_SWITCH), "InfiniBand switch", "node SWITCH");
	check_str(ibv_node_type_str(IBV_NODE_ROUTER), "InfiniBand router", "node ROUTER");
	check_str(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC", "node RNIC");
	check_str(ibv_node_type_str(IBV_NODE_UNKNOWN), "unknown", "node UNKNOWN");

	static const char *const port[] = {
	    "no state change (NOP)", "down", "init", "armed", "active", "active defer"};
	for (int i = IBV_PORT_NOP; i <= IBV_PORT_ACTIVE_DEFER; i++)
		check_str(ibv_port_state_str((enum ibv_port_state)i), port[i],
			  "ibv_port_state_str");
	check_str(ibv_port_state_str((enum ibv_port_state)6), "unknown", "ibv_port_state_str(6)");

	static const char *const ev[] = {"CQ error",
					 "local work queue catastrophic error",
					 "invalid request local work queue error",
					 "local access violation work queue error",
					 "communication established",
					 "send queue drained",
					 "path migrated",
					 "path migration request error",
					 "local catastrophic error",
					 "port active",
					 "port error",
					 "LID change",
					 "P_Key change",
					 "SM change",
					 "SRQ catastrophic error",
					 "SRQ limit reached",
					 "last WQE reached",
					 "client reregistration",
					 "GID table change"};
	for (int i = IBV_EVENT_CQ_ERR; i <= IBV_EVENT_GID_CHANGE; i++)
		check_str(ibv_event_type_str((enum ibv_event_type)i), ev[i], "ibv_event_type_str");

	static const char *const wc[] = {"success",
					 "local length error",
					 "local QP operation error",
					 "local EE context operation error",
					 "local protection error",
					 "Work Request Flushed Error",
					 "memory management operation error",
					 "bad response error",
					 "local access error",
					 "remote invalid request error",
					 "remote access error",
					 "remote operation error",
					 "transport retry counter exceeded",
					 "RNR retry counter exceeded",
					 "local RDD violation error",
					 "remote invalid RD request",
					 "aborted error",
					 "invalid EE context number",
					 "invalid EE context state",
					 "fatal error",
					 "response timeout error",
					 "general error"};
	for (int i = IBV_WC_SUCCESS; i <= IBV_WC_GENERAL_ERR; i++)
		check_str(ibv_wc_status_str((enum ibv_wc_status)i), wc[i], "ibv_wc_status_str");
	check_str(ibv_wc_status_str((enum ibv_wc_status)100), "unknown", "ibv_wc_status_str(100)");
}

static void check_functions_resolve(void)
{
	/* Addresses of every declared function: a declaration the library
	 * does not export fails to link; none may be NULL. */
	const struct {
		const char *name;
		void (*fn)(void);
	} f[] = {
#define ADDR(name) {#name, (void (*)(void))p_##name},
	    ADDR(ibv_get_device_list) ADDR(ibv_free_device_list) ADDR(ibv_get_device_name) ADDR(
		ibv_get_device_guid) ADDR(ibv_open_device) ADDR(ibv_close_device)
		ADDR(ibv_get_async_event) ADDR(ibv_ack_async_event) ADDR(ibv_query_device) ADDR(
		    ibv_query_port) ADDR(___ibv_query_port) ADDR(ibv_query_gid) ADDR(ibv_query_pkey)
		    ADDR(ibv_alloc_pd) ADDR(ibv_dealloc_pd) ADDR(ibv_reg_mr) ADDR(ibv_dereg_mr)
			ADDR(ibv_create_comp_channel) ADDR(ibv_destroy_comp_channel) ADDR(
			    ibv_create_cq) ADDR(ibv_resize_cq) ADDR(ibv_destroy_cq)
			    ADDR(ibv_get_cq_event) ADDR(ibv_ack_cq_events) ADDR(ibv_poll_cq) ADDR(
				ibv_req_notify_cq) ADDR(ibv_create_srq) ADDR(ibv_create_xrc_srq)
				ADDR(ibv_modify_srq) ADDR(ibv_query_srq) ADDR(ibv_destroy_srq) ADDR(
				    ibv_post_srq_recv) ADDR(ibv_create_qp) ADDR(ibv_modify_qp)
				    ADDR(ibv_query_qp) ADDR(ibv_destroy_qp) ADDR(
					ibv_post_send) ADDR(ibv_post_recv) ADDR(ibv_create_ah)
					ADDR(ibv_init_ah_from_wc) ADDR(ibv_create_ah_from_wc) ADDR(
					    ibv_destroy_ah) ADDR(ibv_attach_mcast)
					    ADDR(ibv_detach_mcast) ADDR(ibv_fork_init) ADDR(
						ibv_node_type_str) ADDR(ibv_port_state_str)
						ADDR(ibv_event_type_str) ADDR(ibv_wc_status_str)
						    ADDR(ibv_rate_to_mult) ADDR(mult_to_ibv_rate)
							ADDR(ibv_open_xrc_domain)
							    ADDR(ibv_close_xrc_domain)
								ADDR(ibv_create_xrc_rcv_qp) ADDR(
								    ibv_modify_xrc_rcv_qp)
								    ADDR(ibv_query_xrc_rcv_qp) ADDR(
									ibv_reg_xrc_rcv_qp)
									ADDR(ibv_unreg_xrc_rcv_qp)
#undef ADDR
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		check(f[i].fn != NULL, f[i].name, 0);
	CHECK(sizeof(f) / sizeof(f[0]) == 58, sizeof(f) / sizeof(f[0]));
}

enum { BUF_LEN = 4096, MSG = 100, GRH = 40, SEND_AT = 1024, QKEY = 0x11111111 };

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return 0;
}

static void to_state(struct ibv_qp *qp, enum ibv_qp_state s, int mask)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	a.port_num = 1;
	a.qkey = QKEY;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | mask) == 0, s);
	CHECK(qp->state == s, qp->state);
}

/* What one run holds; released in teardown() whatever step failed. */
struct res {
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	union ibv_gid gid;
	struct ibv_pd *pd;
	char *buf;
	struct ibv_mr *mr;
	struct ibv_comp_channel *ch;
	int cq_tag;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
};

static int open_and_query(struct res *r)
{
	CHECK(ibv_fork_init() == 0, 0);
	int n = -1;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!CHECK(list && n >= 1, n))
		return 0;
	struct ibv_device *dev = list[0];
	CHECK(ibv_get_device_name(dev) && strcmp(ibv_get_device_name(dev), dev->name) == 0, 0);
	CHECK(ibv_get_device_guid(dev) != 0, 0);
	CHECK(dev->node_type == IBV_NODE_CA, dev->node_type);
	CHECK(dev->transport_type == IBV_TRANSPORT_IB, dev->transport_type);
	r->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!CHECK(r->ctx != NULL, errno))
		return 0;

	struct ibv_device_attr da;
	memset(&da, 0, sizeof(da));
	CHECK(ibv_query_device(r->ctx, &da) == 0, errno);
	CHECK(da.phys_port_cnt == 1, da.phys_port_cnt);
	CHECK(da.device_cap_flags & IBV_DEVICE_XRC, da.device_cap_flags);
	CHECK(da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE, da.device_cap_flags);
	CHECK(da.atomic_cap == IBV_ATOMIC_HCA, da.atomic_cap);

	/* OFED's macro goes through the provider slot, link_layer and pad
	 * cleared first; the function itself gives the same answer. */
	struct ibv_port_attr pf;
	memset(&r->port, 0xee, sizeof(r->port));
	memset(&pf, 0xee, sizeof(pf));
	CHECK(r->ctx->ops.query_port != NULL, 0);
	CHECK(ibv_query_port(r->ctx, 1, &r->port) == 0, errno);
	CHECK((ibv_query_port)(r->ctx, 1, &pf) == 0, errno);
	CHECK(r->port.state == IBV_PORT_ACTIVE, r->port.state);
	check_str(ibv_port_state_str(r->port.state), "active", "ibv_port_state_str(port 1)");
	CHECK(r->port.active_mtu == IBV_MTU_4096, r->port.active_mtu);
	CHECK(r->port.pad == 0, r->port.pad);
	CHECK(r->port.link_layer == IBV_LINK_LAYER_INFINIBAND, r->port.link_layer);
	CHECK(r->port.lid == pf.lid && r->port.lid != 0, r->port.lid);
	CHECK(r->port.gid_tbl_len == pf.gid_tbl_len, r->port.gid_tbl_len);
	uint16_t pkey = 0;
	CHECK(ibv_query_gid(r->ctx, 1, 0, &r->gid) == 0, errno);
	CHECK(ibv_query_pkey(r->ctx, 1, 0, &pkey) == 0, errno);
	CHECK(pkey == 0xffff, pkey); /* the default P_Key, either byte order */
	return 1;
}

static int make_objects(struct res *r)
{
	r->pd = ibv_alloc_pd(r->ctx);
	if (!CHECK(r->pd != NULL, errno))
		return 0;
	r->buf = (char *)calloc(1, BUF_LEN);
	r->mr =
	    ibv_reg_mr(r->pd, r->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!CHECK(r->mr != NULL, errno))
		return 0;
	CHECK(r->mr->pd == r->pd && r->mr->addr == r->buf && r->mr->length == BUF_LEN, 0);

	r->ch = ibv_create_comp_channel(r->ctx);
	if (!CHECK(r->ch != NULL && r->ch->context == r->ctx, errno))
		return 0;
	r->cq = ibv_create_cq(r->ctx, 16, &r->cq_tag, r->ch, 0);
	if (!CHECK(r->cq != NULL, errno))
		return 0;
	CHECK(r->cq->channel == r->ch && r->cq->cq_context == &r->cq_tag && r->cq->cqe >= 16,
	      r->cq->cqe);
	CHECK(ibv_resize_cq(r->cq, 64) == 0 && r->cq->cqe >= 64, r->cq->cqe);

	struct ibv_srq_init_attr sia;
	memset(&sia, 0, sizeof(sia));
	sia.attr.max_wr = 8;
	sia.attr.max_sge = 1;
	struct ibv_srq *srq = ibv_create_srq(r->pd, &sia);
	if (CHECK(srq != NULL, errno)) {
		struct ibv_srq_attr sa;
		memset(&sa, 0, sizeof(sa));
		sa.srq_limit = 2;
		CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0, 0);
		memset(&sa, 0, sizeof(sa));
		CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 2 && sa.max_wr >= 8,
		      sa.srq_limit);
		struct ibv_sge sge = {(uintptr_t)r->buf, 8, r->mr->lkey};
		struct ibv_recv_wr rw, *bad = NULL;
		memset(&rw, 0, sizeof(rw));
		rw.wr_id = 7;
		rw.sg_list = &sge;
		rw.num_sge = 1;
		CHECK(ibv_post_srq_recv(srq, &rw, &bad) == 0, 0);
		CHECK(ibv_destroy_srq(srq) == 0, 0);
	}

	struct ibv_qp_init_attr ia;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = r->cq;
	ia.recv_cq = r->cq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_UD;
	r->qp = ibv_create_qp(r->pd, &ia);
	if (!CHECK(r->qp != NULL, errno))
		return 0;
	CHECK(r->qp->qp_type == IBV_QPT_UD && r->qp->send_cq == r->cq && r->qp->pd == r->pd,
	      r->qp->qp_type);
	to_state(r->qp, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	to_state(r->qp, IBV_QPS_RTR, 0);
	to_state(r->qp, IBV_QPS_RTS, IBV_QP_SQ_PSN);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	memset(&qa, 0, sizeof(qa));
	memset(&qi, 0, sizeof(qi));
	CHECK(ibv_query_qp(r->qp, &qa, IBV_QP_STATE | IBV_QP_QKEY, &qi) == 0, 0);
	CHECK(qa.qp_state == IBV_QPS_RTS && qa.qkey == QKEY, qa.qp_state);
	CHECK(qi.qp_type == IBV_QPT_UD, qi.qp_type);

	/* A global AH to ourselves: the receive buffer then starts with a
	 * GRH, read through OFED's struct ibv_grh. */
	struct ibv_ah_attr aa;
	memset(&aa, 0, sizeof(aa));
	aa.dlid = r->port.lid;
	aa.sl = 2;
	aa.port_num = 1;
	aa.static_rate = IBV_RATE_MAX;
	aa.is_global = 1;
	aa.grh.dgid = r->gid;
	aa.grh.hop_limit = 1;
	r->ah = ibv_create_ah(r->pd, &aa);
	return CHECK(r->ah != NULL && r->ah->pd == r->pd, errno);
}

static void ud_to_self(struct res *r)
{
	struct ibv_sge rs = {(uintptr_t)r->buf, GRH + MSG, r->mr->lkey};
	struct ibv_recv_wr rw, *rbad = NULL;
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = 1;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	CHECK(ibv_post_recv(r->qp, &rw, &rbad) == 0, 0);
	CHECK(ibv_req_notify_cq(r->cq, 0) == 0, 0);
	memset(r->buf + SEND_AT, 'o', MSG);
	struct ibv_sge ss = {(uintptr_t)r->buf + SEND_AT, MSG, r->mr->lkey};
	struct ibv_send_wr sw, *sbad = NULL;
	memset(&sw, 0, sizeof(sw));
	sw.wr_id = 2;
	sw.sg_list = &ss;
	sw.num_sge = 1;
	sw.opcode = IBV_WR_SEND;
	sw.send_flags = IBV_SEND_SIGNALED;
	sw.wr.ud.ah = r->ah;
	sw.wr.ud.remote_qpn = r->qp->qp_num;
	sw.wr.ud.remote_qkey = QKEY;
	CHECK(ibv_post_send(r->qp, &sw, &sbad) == 0, 0);

	/* The completion event, then both completions. */
	struct pollfd pfd = {r->ch->fd, POLLIN, 0};
	if (CHECK(poll(&pfd, 1, 5000) == 1, 0)) {
		struct ibv_cq *ev_cq = NULL;
		void *ev_ctx = NULL;
		CHECK(ibv_get_cq_event(r->ch, &ev_cq, &ev_ctx) == 0, errno);
		CHECK(ev_cq == r->cq && ev_ctx == &r->cq_tag, 0);
		ibv_ack_cq_events(r->cq, 1);
	}
	struct ibv_wc wc[2], *recv = NULL;
	for (int i = 0; i < 2; i++) {
		if (!CHECK(poll_one(r->cq, &wc[i]) == 1, i))
			return;
		CHECK(wc[i].status == IBV_WC_SUCCESS, wc[i].status);
		if (wc[i].opcode & IBV_WC_RECV)
			recv = &wc[i];
		else
			CHECK(wc[i].opcode == IBV_WC_SEND && wc[i].wr_id == 2, wc[i].opcode);
	}
	if (!CHECK(recv != NULL, 0))
		return;
	struct ibv_grh *grh = (struct ibv_grh *)r->buf;
	CHECK(recv->opcode == IBV_WC_RECV && recv->wr_id == 1, recv->opcode);
	CHECK(recv->byte_len == GRH + MSG, recv->byte_len);
	CHECK(recv->src_qp == r->qp->qp_num && recv->qp_num == r->qp->qp_num, recv->src_qp);
	CHECK(recv->sl == 2 && recv->slid == r->port.lid, recv->sl);
	CHECK(recv->wc_flags & IBV_WC_GRH, recv->wc_flags);
	CHECK(memcmp(grh->dgid.raw, r->gid.raw, 16) == 0, 0);
	CHECK(memcmp(grh->sgid.raw, r->gid.raw, 16) == 0, 0);
	CHECK(memcmp(r->buf + GRH, r->buf + SEND_AT, MSG) == 0, 0);

	struct ibv_ah_attr back;
	memset(&back, 0xee, sizeof(back));
	CHECK(ibv_init_ah_from_wc(r->ctx, 1, recv, grh, &back) == 0, errno);
	CHECK(back.dlid == r->port.lid && back.sl == 2 && back.port_num == 1, back.dlid);
	CHECK(back.is_global == 1 && back.grh.sgid_index == 0, back.is_global);
	CHECK(memcmp(back.grh.dgid.raw, r->gid.raw, 16) == 0, 0);
	struct ibv_ah *ah2 = ibv_create_ah_from_wc(r->pd, recv, grh, 1);
	CHECK(ah2 != NULL && ah2->pd == r->pd, errno);
	if (ah2)
		CHECK(ibv_destroy_ah(ah2) == 0, 0);
}

static void multicast(struct res *r)
{
	union ibv_gid mgid;
	memset(&mgid, 0, sizeof(mgid));
	mgid.raw[0] = 0xff;
	mgid.raw[1] = 0x12;
	mgid.raw[15] = 0x17;
	CHECK(ibv_attach_mcast(r->qp, &mgid, 0xc017) == 0, 0);
	CHECK(ibv_detach_mcast(r->qp, &mgid, 0xc017) == 0, 0);
	int again = ibv_detach_mcast(r->qp, &mgid, 0xc017);
	CHECK(again == EINVAL, again);
}

static void teardown(struct res *r)
{
	if (r->ah)
		CHECK(ibv_destroy_ah(r->ah) == 0, 0);
	if (r->qp)
		CHECK(ibv_destroy_qp(r->qp) == 0, 0);
	if (r->cq)
		CHECK(ibv_destroy_cq(r->cq) == 0, 0);
	if (r->ch)
		CHECK(ibv_destroy_comp_channel(r->ch) == 0, 0);
	if (r->mr)
		CHECK(ibv_dereg_mr(r->mr) == 0, 0);
	if (r->pd)
		CHECK(ibv_dealloc_pd(r->pd) == 0, 0);
	free(r->buf);
	if (r->ctx)
		CHECK(ibv_close_device(r->ctx) == 0, 0);
}

/* One device driven through the OFED names. */
static void check_device(void)
{
	struct res r;
	memset(&r, 0, sizeof(r));
	if (open_and_query(&r) && make_objects(&r)) {
		ud_to_self(&r);
		multicast(&r);
	}
	teardown(&r);
}

int main(void)
{
	check_rates();
	check_strings();
	check_functions_resolve();
	check_device();
	printf("ofed_header_api (%s): %d checks, %d failed: %s\n", LANG, checks, failed,
	       failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
