// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Address vectors, every form the compatibility layers see: libibverbs'
// struct ibv_ah_attr, the write ABI's ib_uverbs_ah_attr (CREATE_AH) and
// ib_uverbs_qp_dest (MODIFY_QP / QUERY_QP), and the uAPI's uabi_ah_attr.
// The rule in both directions is the one each side applies: what
// rdma-core sends carries every field, what Linux reads takes the GRH only
// when is_global (copy_ah_attr_from_uverbs()).
#ifndef UABI_CONVERT_AV_HPP
#define UABI_CONVERT_AV_HPP

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uabi_verbs.h>

namespace uabi::convert
{

// libibverbs <-> uAPI: every field.
uabi_ah_attr to_uabi(const ibv_ah_attr &a);
void to_ibv(const uabi_ah_attr &u, ibv_ah_attr &a); // zeroes a first

// What rdma-core's ibv_cmd_* layer writes: every field, GRH included.
ib_uverbs_qp_dest to_legacy_dest(const ibv_ah_attr &a);
ib_uverbs_ah_attr to_legacy_ah(const ibv_ah_attr &a);

// What the write ABI's receiver (Linux, our translator) reads, and what it
// answers with: the GRH only when is_global.
uabi_ah_attr to_uabi(const ib_uverbs_qp_dest &d);
uabi_ah_attr to_uabi(const ib_uverbs_ah_attr &a);
ib_uverbs_qp_dest to_legacy_dest(const uabi_ah_attr &a);

} // namespace uabi::convert

#endif
