// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// <uabi/convert/device.hpp>: each struct pair's common fields are listed
// once (X-macros) and copied in whichever direction is asked.
#include <uabi/convert/device.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <endian.h>

namespace uabi::convert
{

namespace
{

// Fields of the same name and meaning in ib_uverbs_query_device_resp,
// ibv_device_attr and uabi_device_attr (the GUIDs and fw_ver apart).
#define DEVICE_FIELDS(X)                                                                           \
	X(max_mr_size) X(page_size_cap) X(vendor_id) X(vendor_part_id) X(hw_ver) X(max_qp)         \
	X(max_qp_wr) X(device_cap_flags) X(max_sge) X(max_sge_rd) X(max_cq) X(max_cqe) X(max_mr)   \
	X(max_pd) X(max_qp_rd_atom) X(max_res_rd_atom) X(max_qp_init_rd_atom) X(atomic_cap)        \
	X(max_mw) X(max_ah) X(max_srq) X(max_srq_wr) X(max_srq_sge) X(max_pkeys)                   \
	X(local_ca_ack_delay) X(phys_port_cnt) X(max_mcast_grp) X(max_mcast_qp_attach)            \
	X(max_total_mcast_qp_attach)

#define PORT_FIELDS(X)                                                                             \
	X(port_cap_flags) X(max_msg_sz) X(bad_pkey_cntr) X(qkey_viol_cntr) X(gid_tbl_len)          \
	X(pkey_tbl_len) X(lid) X(sm_lid) X(state) X(max_mtu) X(active_mtu) X(lmc) X(max_vl_num)    \
	X(sm_sl) X(subnet_timeout) X(init_type_reply) X(active_width) X(active_speed)              \
	X(phys_state) X(link_layer) X(flags)

// to.f = from.f, converted to the destination field's type.
#define COPY(f) to.f = static_cast<decltype(to.f)>(from.f);

} // namespace

ib_uverbs_query_device_resp to_legacy(const uabi_device_attr &from)
{
	ib_uverbs_query_device_resp to{};
	DEVICE_FIELDS(COPY)
	to.fw_ver = from.fw_ver;
	to.node_guid = htobe64(from.node_guid);
	to.sys_image_guid = htobe64(from.sys_image_guid);
	return to;
}

uabi_device_attr to_uabi(const ib_uverbs_query_device_resp &from)
{
	uabi_device_attr to{};
	DEVICE_FIELDS(COPY)
	to.fw_ver = from.fw_ver;
	to.node_guid = be64toh(from.node_guid);
	to.sys_image_guid = be64toh(from.sys_image_guid);
	return to;
}

void to_ibv(const uabi_device_attr &from, ibv_device_attr *a)
{
	std::memset(a, 0, sizeof(*a));
	ibv_device_attr &to = *a;
	DEVICE_FIELDS(COPY)
	std::snprintf(to.fw_ver, sizeof(to.fw_ver), "%u.%u.%u", unsigned(from.fw_ver >> 32),
		      unsigned((from.fw_ver >> 16) & 0xffff), unsigned(from.fw_ver & 0xffff));
	to.node_guid = htobe64(from.node_guid);
	to.sys_image_guid = htobe64(from.sys_image_guid);
}

ib_uverbs_query_port_resp to_legacy(const uabi_port_attr &from)
{
	ib_uverbs_query_port_resp to{};
	PORT_FIELDS(COPY)
	return to;
}

uabi_port_attr to_uabi(const ib_uverbs_query_port_resp &from)
{
	uabi_port_attr to{};
	PORT_FIELDS(COPY)
	return to;
}

void to_ibv(const uabi_port_attr &from, ibv_port_attr *a, std::size_t len)
{
	ibv_port_attr to;
	std::memset(&to, 0, sizeof(to));
	PORT_FIELDS(COPY)
	std::memcpy(a, &to, std::min(len, sizeof(to)));
}

#undef COPY

} // namespace uabi::convert
