// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// <uabi/convert/av.hpp>: the address fields and the GRH's are listed once.
#include <uabi/convert/av.hpp>

#include <cstring>

namespace uabi::convert
{

namespace
{

// The address, then the GRH (ib_uverbs_ah_attr and uabi_ah_attr nest it;
// ibv_ah_attr too, with the GID in a union; ib_uverbs_qp_dest flattens it).
#define ADDR_FIELDS(X) X(dlid) X(sl) X(src_path_bits) X(static_rate) X(port_num)
#define GRH_FIELDS(X) X(flow_label) X(sgid_index) X(hop_limit) X(traffic_class)

// to.f = from.f, converted to the destination field's type.
#define COPY(f) to.f = static_cast<decltype(to.f)>(from.f);

template <class To, class From> void copy_grh(To &to, const From &from)
{
	GRH_FIELDS(COPY)
}

} // namespace

uabi_ah_attr to_uabi(const ibv_ah_attr &from)
{
	uabi_ah_attr to{};
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global;
	std::memcpy(to.grh.dgid, from.grh.dgid.raw, 16);
	copy_grh(to.grh, from.grh);
	return to;
}

void to_ibv(const uabi_ah_attr &from, ibv_ah_attr &to)
{
	std::memset(&to, 0, sizeof(to));
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global;
	std::memcpy(to.grh.dgid.raw, from.grh.dgid, 16);
	copy_grh(to.grh, from.grh);
}

ib_uverbs_qp_dest to_legacy_dest(const ibv_ah_attr &from)
{
	ib_uverbs_qp_dest to{};
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global;
	std::memcpy(to.dgid, from.grh.dgid.raw, 16);
	copy_grh(to, from.grh);
	return to;
}

ib_uverbs_ah_attr to_legacy_ah(const ibv_ah_attr &from)
{
	ib_uverbs_ah_attr to{};
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global;
	std::memcpy(to.grh.dgid, from.grh.dgid.raw, 16);
	copy_grh(to.grh, from.grh);
	return to;
}

uabi_ah_attr to_uabi(const ib_uverbs_qp_dest &from)
{
	uabi_ah_attr to{};
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global ? 1 : 0;
	if (to.is_global) {
		std::memcpy(to.grh.dgid, from.dgid, 16);
		copy_grh(to.grh, from);
	}
	return to;
}

uabi_ah_attr to_uabi(const ib_uverbs_ah_attr &from)
{
	uabi_ah_attr to{};
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global ? 1 : 0;
	if (to.is_global) {
		std::memcpy(to.grh.dgid, from.grh.dgid, 16);
		copy_grh(to.grh, from.grh);
	}
	return to;
}

ib_uverbs_qp_dest to_legacy_dest(const uabi_ah_attr &from)
{
	ib_uverbs_qp_dest to{};
	ADDR_FIELDS(COPY)
	to.is_global = from.is_global ? 1 : 0;
	if (to.is_global) {
		std::memcpy(to.dgid, from.grh.dgid, 16);
		copy_grh(to, from.grh);
	}
	return to;
}

#undef COPY

} // namespace uabi::convert
