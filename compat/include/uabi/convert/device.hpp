// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Device and port attributes, every form the compatibility layers see:
// the write ABI's QUERY_DEVICE / QUERY_PORT answers
// (<rdma/ib_user_verbs.h>), libibverbs' ibv_device_attr and ibv_port_attr,
// and the uAPI's.  The translator fills the kernel's answers from the new
// path's results; the drop-in library's write path (UABI_VERBS_PATH=write)
// reads them back; its ibv_query_device/port fill libibverbs' structs.
#ifndef UABI_CONVERT_DEVICE_HPP
#define UABI_CONVERT_DEVICE_HPP

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uabi_verbs.h>

#include <cstddef>

namespace uabi::convert
{

// Node and system image GUIDs travel big-endian in the write ABI.
ib_uverbs_query_device_resp to_legacy(const uabi_device_attr &d);
uabi_device_attr to_uabi(const ib_uverbs_query_device_resp &r);

ib_uverbs_query_port_resp to_legacy(const uabi_port_attr &p);
uabi_port_attr to_uabi(const ib_uverbs_query_port_resp &r);

// ibv_query_device(): GUIDs big-endian, fw_ver as libibverbs prints it.
void to_ibv(const uabi_device_attr &u, ibv_device_attr *a);
// ibv_query_port(): the first len bytes of a struct ibv_port_attr (older
// programs' struct is shorter).
void to_ibv(const uabi_port_attr &u, ibv_port_attr *a, std::size_t len);

} // namespace uabi::convert

#endif
