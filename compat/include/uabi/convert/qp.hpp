// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Queue pairs, every form the compatibility layers see: capabilities
// (ibv_qp_cap, uabi_qp_cap, and the five fields the write ABI's create
// commands and responses spell out) and attributes (ibv_qp_attr,
// ib_uverbs_modify_qp and OFED's MODIFY_XRC_RCV_QP, ib_uverbs_query_qp_resp,
// uabi_qp_attr).
#ifndef UABI_CONVERT_QP_HPP
#define UABI_CONVERT_QP_HPP

#include <uabi/client.hpp>
#include <uabi/convert/av.hpp>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <cstdint>

namespace uabi::convert
{

// ----------------------------------------------------------- capabilities

// The five capability fields, between any two structs that have them
// (ibv_qp_cap, uabi_qp_cap, ib_uverbs_create_qp and its _ex and _resp,
// OFED's create_xrc_rcv_qp), converted to the destination's types.
template <class To, class From> void copy_caps(To &to, const From &from)
{
	to.max_send_wr = static_cast<decltype(to.max_send_wr)>(from.max_send_wr);
	to.max_recv_wr = static_cast<decltype(to.max_recv_wr)>(from.max_recv_wr);
	to.max_send_sge = static_cast<decltype(to.max_send_sge)>(from.max_send_sge);
	to.max_recv_sge = static_cast<decltype(to.max_recv_sge)>(from.max_recv_sge);
	to.max_inline_data = static_cast<decltype(to.max_inline_data)>(from.max_inline_data);
}

inline uabi_qp_cap to_uabi(const ibv_qp_cap &c)
{
	uabi_qp_cap u{};
	copy_caps(u, c);
	return u;
}

inline ibv_qp_cap to_ibv(const uabi_qp_cap &u)
{
	ibv_qp_cap c{};
	copy_caps(c, u);
	return c;
}

// ------------------------------------------------------------- attributes

// libibverbs <-> uAPI: every field.  Enum fields the application may have
// left uninitialized (outside the attribute mask) are read as bytes.
uabi_qp_attr to_uabi(const ibv_qp_attr &a);
// Every field up to rate_limit, which older programs' struct lacks (OFED's,
// rdma-core's before v15) and which is never queried here.
void to_ibv(const uabi_qp_attr &u, ibv_qp_attr &a);

// The write ABI's QUERY_QP answer, and back.
ib_uverbs_query_qp_resp to_legacy(const uabi_qp_attr &a, const uabi_qp_init &init);
QpQuery to_uabi(const ib_uverbs_query_qp_resp &r);

// rdma-core's copy_modify_qp_fields(): into ib_uverbs_modify_qp (or its
// _ex base), only the fields of the mask.
template <class M> void to_legacy_modify(M &c, const ibv_qp_attr &a, int mask)
{
	if (mask & IBV_QP_STATE)
		c.qp_state = a.qp_state;
	if (mask & IBV_QP_CUR_STATE)
		c.cur_qp_state = a.cur_qp_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		c.en_sqd_async_notify = a.en_sqd_async_notify;
	if (mask & IBV_QP_ACCESS_FLAGS)
		c.qp_access_flags = a.qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		c.pkey_index = a.pkey_index;
	if (mask & IBV_QP_PORT)
		c.port_num = a.port_num;
	if (mask & IBV_QP_QKEY)
		c.qkey = a.qkey;
	if (mask & IBV_QP_AV)
		c.dest = to_legacy_dest(a.ah_attr);
	if (mask & IBV_QP_PATH_MTU)
		c.path_mtu = a.path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		c.timeout = a.timeout;
	if (mask & IBV_QP_RETRY_CNT)
		c.retry_cnt = a.retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		c.rnr_retry = a.rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		c.rq_psn = a.rq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		c.max_rd_atomic = a.max_rd_atomic;
	if (mask & IBV_QP_ALT_PATH) {
		c.alt_pkey_index = a.alt_pkey_index;
		c.alt_port_num = a.alt_port_num;
		c.alt_timeout = a.alt_timeout;
		c.alt_dest = to_legacy_dest(a.alt_ah_attr);
	}
	if (mask & IBV_QP_MIN_RNR_TIMER)
		c.min_rnr_timer = a.min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		c.sq_psn = a.sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		c.max_dest_rd_atomic = a.max_dest_rd_atomic;
	if (mask & IBV_QP_PATH_MIG_STATE)
		c.path_mig_state = a.path_mig_state;
	if (mask & IBV_QP_DEST_QPN)
		c.dest_qp_num = a.dest_qp_num;
}

// OFED's ibv_cmd_modify_xrc_rcv_qp(): every field, whatever the mask.
template <class M> void to_legacy_modify_all(M &c, const ibv_qp_attr &a)
{
	c.qkey = a.qkey;
	c.rq_psn = a.rq_psn;
	c.sq_psn = a.sq_psn;
	c.dest_qp_num = a.dest_qp_num;
	c.qp_access_flags = a.qp_access_flags;
	c.pkey_index = a.pkey_index;
	c.alt_pkey_index = a.alt_pkey_index;
	c.qp_state = std::uint8_t(a.qp_state);
	c.cur_qp_state = std::uint8_t(a.cur_qp_state);
	c.path_mtu = std::uint8_t(a.path_mtu);
	c.path_mig_state = std::uint8_t(a.path_mig_state);
	c.en_sqd_async_notify = a.en_sqd_async_notify;
	c.max_rd_atomic = a.max_rd_atomic;
	c.max_dest_rd_atomic = a.max_dest_rd_atomic;
	c.min_rnr_timer = a.min_rnr_timer;
	c.port_num = a.port_num;
	c.timeout = a.timeout;
	c.retry_cnt = a.retry_cnt;
	c.rnr_retry = a.rnr_retry;
	c.alt_port_num = a.alt_port_num;
	c.alt_timeout = a.alt_timeout;
	c.dest = to_legacy_dest(a.ah_attr);
	c.alt_dest = to_legacy_dest(a.alt_ah_attr);
}

// Linux's modify_qp(): from ib_uverbs_modify_qp (or OFED's
// MODIFY_XRC_RCV_QP, whose fields after `dest, alt_dest` are the same),
// only the attributes of the mask.
template <class M> uabi_qp_attr to_uabi_modify(const M &m, std::uint32_t mask)
{
	uabi_qp_attr a{};
#define UABI_CONVERT_F(bit, dst, src)                                                              \
	do {                                                                                       \
		if (mask & UABI_QP_##bit)                                                          \
			a.dst = m.src;                                                             \
	} while (0)
	UABI_CONVERT_F(STATE, qp_state, qp_state);
	UABI_CONVERT_F(CUR_STATE, cur_qp_state, cur_qp_state);
	UABI_CONVERT_F(EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify, en_sqd_async_notify);
	UABI_CONVERT_F(ACCESS_FLAGS, qp_access_flags, qp_access_flags);
	UABI_CONVERT_F(PKEY_INDEX, pkey_index, pkey_index);
	UABI_CONVERT_F(PORT, port_num, port_num);
	UABI_CONVERT_F(QKEY, qkey, qkey);
	UABI_CONVERT_F(PATH_MTU, path_mtu, path_mtu);
	UABI_CONVERT_F(TIMEOUT, timeout, timeout);
	UABI_CONVERT_F(RETRY_CNT, retry_cnt, retry_cnt);
	UABI_CONVERT_F(RNR_RETRY, rnr_retry, rnr_retry);
	UABI_CONVERT_F(RQ_PSN, rq_psn, rq_psn);
	UABI_CONVERT_F(MAX_QP_RD_ATOMIC, max_rd_atomic, max_rd_atomic);
	UABI_CONVERT_F(MIN_RNR_TIMER, min_rnr_timer, min_rnr_timer);
	UABI_CONVERT_F(SQ_PSN, sq_psn, sq_psn);
	UABI_CONVERT_F(MAX_DEST_RD_ATOMIC, max_dest_rd_atomic, max_dest_rd_atomic);
	UABI_CONVERT_F(PATH_MIG_STATE, path_mig_state, path_mig_state);
	UABI_CONVERT_F(DEST_QPN, dest_qp_num, dest_qp_num);
#undef UABI_CONVERT_F
	if (mask & UABI_QP_AV)
		a.ah_attr = to_uabi(m.dest);
	if (mask & UABI_QP_ALT_PATH) {
		a.alt_ah_attr = to_uabi(m.alt_dest);
		a.alt_port_num = m.alt_port_num;
		a.alt_timeout = m.alt_timeout;
		a.alt_pkey_index = m.alt_pkey_index;
	}
	return a;
}

} // namespace uabi::convert

#endif
