// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Shared receive queues: ibv_srq_attr, uabi_srq_attr and the fields the
// write ABI's SRQ commands and responses spell out.
#ifndef UABI_CONVERT_SRQ_HPP
#define UABI_CONVERT_SRQ_HPP

#include <infiniband/verbs.h>
#include <rdma/uabi_verbs.h>

namespace uabi::convert
{

// The attributes by name, between any two structs that have them
// (ibv_srq_attr, uabi_srq_attr, ib_uverbs_create_srq / _xsrq and their
// response, ib_uverbs_query_srq_resp, OFED's create_xrc_srq), converted to
// the destination's types.
template <class To, class From> void copy_srq_attr(To &to, const From &from)
{
	to.max_wr = static_cast<decltype(to.max_wr)>(from.max_wr);
	to.max_sge = static_cast<decltype(to.max_sge)>(from.max_sge);
	to.srq_limit = static_cast<decltype(to.srq_limit)>(from.srq_limit);
}

// What a create answers with (the sizes granted).
template <class To, class From> void copy_srq_sizes(To &to, const From &from)
{
	to.max_wr = static_cast<decltype(to.max_wr)>(from.max_wr);
	to.max_sge = static_cast<decltype(to.max_sge)>(from.max_sge);
}

// What MODIFY_SRQ carries (no max_sge: it cannot change).
template <class To, class From> void copy_srq_modify(To &to, const From &from)
{
	to.max_wr = static_cast<decltype(to.max_wr)>(from.max_wr);
	to.srq_limit = static_cast<decltype(to.srq_limit)>(from.srq_limit);
}

inline ibv_srq_attr to_ibv(const uabi_srq_attr &u)
{
	ibv_srq_attr a{};
	copy_srq_attr(a, u);
	return a;
}

inline uabi_srq_attr to_uabi(const ibv_srq_attr &a)
{
	uabi_srq_attr u{};
	copy_srq_attr(u, a);
	return u;
}

} // namespace uabi::convert

#endif
