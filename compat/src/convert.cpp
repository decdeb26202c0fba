// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// <uabi/legacy_convert.hpp>: each struct pair's common fields are listed
// once (X-macros) and copied in whichever direction is asked.
#include <uabi/legacy_convert.hpp>

#include <cstring>
#include <endian.h>

namespace uabi::legacy
{

namespace
{

// Fields of the same name and meaning in ib_uverbs_query_device_resp and
// uabi_device_attr (the GUIDs apart).
#define DEVICE_FIELDS(X)                                                                           \
	X(fw_ver) X(max_mr_size) X(page_size_cap) X(vendor_id) X(vendor_part_id) X(hw_ver)         \
	X(max_qp) X(max_qp_wr) X(device_cap_flags) X(max_sge) X(max_sge_rd) X(max_cq)              \
	X(max_cqe) X(max_mr) X(max_pd) X(max_qp_rd_atom) X(max_res_rd_atom)                        \
	X(max_qp_init_rd_atom) X(atomic_cap) X(max_mw) X(max_ah) X(max_srq) X(max_srq_wr)          \
	X(max_srq_sge) X(max_pkeys) X(local_ca_ack_delay) X(phys_port_cnt) X(max_mcast_grp)        \
	X(max_mcast_qp_attach) X(max_total_mcast_qp_attach)

#define PORT_FIELDS(X)                                                                             \
	X(port_cap_flags) X(max_msg_sz) X(bad_pkey_cntr) X(qkey_viol_cntr) X(gid_tbl_len)          \
	X(pkey_tbl_len) X(lid) X(sm_lid) X(state) X(max_mtu) X(active_mtu) X(lmc) X(max_vl_num)    \
	X(sm_sl) X(subnet_timeout) X(init_type_reply) X(active_width) X(active_speed)              \
	X(phys_state) X(link_layer) X(flags)

// ib_uverbs_qp_dest and uabi_ah_attr: the address, then the GRH.
#define DEST_FIELDS(X) X(dlid) X(sl) X(src_path_bits) X(static_rate) X(port_num)
#define GRH_FIELDS(X) X(flow_label) X(sgid_index) X(hop_limit) X(traffic_class)

// ib_uverbs_query_qp_resp and uabi_qp_attr.
#define QP_FIELDS(X)                                                                               \
	X(qkey) X(rq_psn) X(sq_psn) X(dest_qp_num) X(qp_access_flags) X(pkey_index)                \
	X(alt_pkey_index) X(qp_state) X(cur_qp_state) X(path_mtu) X(path_mig_state)                \
	X(sq_draining) X(max_rd_atomic) X(max_dest_rd_atomic) X(min_rnr_timer) X(port_num)         \
	X(timeout) X(retry_cnt) X(rnr_retry) X(alt_port_num) X(alt_timeout)
// ib_uverbs_query_qp_resp's caps and uabi_qp_cap.
#define CAP_FIELDS(X)                                                                              \
	X(max_send_wr) X(max_recv_wr) X(max_send_sge) X(max_recv_sge) X(max_inline_data)

// to.f = from.f, converted to the destination field's type.
#define COPY(f) to.f = static_cast<decltype(to.f)>(from.f);

} // namespace

ib_uverbs_query_device_resp device_resp(const uabi_device_attr &from)
{
	ib_uverbs_query_device_resp to{};
	DEVICE_FIELDS(COPY)
	to.node_guid = htobe64(from.node_guid);
	to.sys_image_guid = htobe64(from.sys_image_guid);
	return to;
}

uabi_device_attr device_attr(const ib_uverbs_query_device_resp &from)
{
	uabi_device_attr to{};
	DEVICE_FIELDS(COPY)
	to.node_guid = be64toh(from.node_guid);
	to.sys_image_guid = be64toh(from.sys_image_guid);
	return to;
}

ib_uverbs_query_port_resp port_resp(const uabi_port_attr &from)
{
	ib_uverbs_query_port_resp to{};
	PORT_FIELDS(COPY)
	return to;
}

uabi_port_attr port_attr(const ib_uverbs_query_port_resp &from)
{
	uabi_port_attr to{};
	PORT_FIELDS(COPY)
	return to;
}

ib_uverbs_qp_dest dest_from_ah(const uabi_ah_attr &from)
{
	ib_uverbs_qp_dest to{};
	DEST_FIELDS(COPY)
	to.is_global = from.is_global ? 1 : 0;
	if (to.is_global) {
		const auto &g = from.grh;
		std::memcpy(to.dgid, g.dgid, 16);
		{
			const auto &from = g;
			GRH_FIELDS(COPY)
		}
	}
	return to;
}

uabi_ah_attr ah_from_dest(const ib_uverbs_qp_dest &from)
{
	uabi_ah_attr to{};
	DEST_FIELDS(COPY)
	to.is_global = from.is_global ? 1 : 0;
	if (to.is_global) {
		auto &g = to.grh;
		std::memcpy(g.dgid, from.dgid, 16);
		{
			auto &to = g;
			GRH_FIELDS(COPY)
		}
	}
	return to;
}

ib_uverbs_query_qp_resp query_qp_resp(const uabi_qp_attr &a, const uabi_qp_init &init)
{
	ib_uverbs_query_qp_resp to{};
	{
		const auto &from = a;
		QP_FIELDS(COPY)
	}
	{
		const auto &from = init.cap;
		CAP_FIELDS(COPY)
	}
	to.dest = dest_from_ah(a.ah_attr);
	to.alt_dest = dest_from_ah(a.alt_ah_attr);
	to.sq_sig_all = init.sq_sig_all ? 1 : 0;
	return to;
}

QpQuery query_qp_from(const ib_uverbs_query_qp_resp &from)
{
	QpQuery q{};
	{
		auto &to = q.attr;
		QP_FIELDS(COPY)
	}
	{
		auto &to = q.init.cap;
		CAP_FIELDS(COPY)
	}
	q.attr.cap = q.init.cap;
	q.attr.ah_attr = ah_from_dest(from.dest);
	q.attr.alt_ah_attr = ah_from_dest(from.alt_dest);
	q.init.sq_sig_all = from.sq_sig_all;
	return q;
}

#undef COPY

} // namespace uabi::legacy
