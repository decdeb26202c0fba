// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The structs the write() ABI answers with (<rdma/ib_user_verbs.h>) and the
// new uAPI's, in both directions: the translator fills the kernel's
// responses from the new path's results, and the drop-in library's write
// path (UABI_VERBS_PATH=write) turns those responses back into the new
// path's types.  One field list per struct (compat/src/convert.cpp), so the
// two directions cannot drift apart.
#ifndef UABI_LEGACY_CONVERT_HPP
#define UABI_LEGACY_CONVERT_HPP

#include <uabi/client.hpp>

#include <rdma/ib_user_verbs.h>

namespace uabi::legacy
{

// Node and system image GUIDs travel big-endian in the write ABI.
ib_uverbs_query_device_resp device_resp(const uabi_device_attr &d);
uabi_device_attr device_attr(const ib_uverbs_query_device_resp &r);

ib_uverbs_query_port_resp port_resp(const uabi_port_attr &p);
uabi_port_attr port_attr(const ib_uverbs_query_port_resp &r);

// The GRH fields only when is_global, as Linux's copy_ah_attr_from_uverbs.
ib_uverbs_qp_dest dest_from_ah(const uabi_ah_attr &a);
uabi_ah_attr ah_from_dest(const ib_uverbs_qp_dest &d);

ib_uverbs_query_qp_resp query_qp_resp(const uabi_qp_attr &a, const uabi_qp_init &init);
QpQuery query_qp_from(const ib_uverbs_query_qp_resp &r);

} // namespace uabi::legacy

#endif
