// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// rdma-core's private ABI (IBVERBS_PRIVATE_34), for the provider libraries
// that programs link directly (perftest links libmlx5 and libefa): they
// resolve their imports against this library at load time (BIND_NOW), so
// every symbol must exist.  No provider ever registers here, so none of
// these is reached in practice; if one is, it fails cleanly.
#include "verbs_impl.hpp"

#include <cerrno>

#define STUB_INT(name) UABI_EXPORT int name(void) { return EOPNOTSUPP; }

STUB_INT(ibv_cmd_advise_mr)
STUB_INT(ibv_cmd_alloc_dm)
STUB_INT(ibv_cmd_alloc_mw)
STUB_INT(ibv_cmd_alloc_pd)
STUB_INT(ibv_cmd_attach_mcast)
STUB_INT(ibv_cmd_close_xrcd)
STUB_INT(ibv_cmd_create_ah)
STUB_INT(ibv_cmd_create_counters)
STUB_INT(ibv_cmd_create_cq)
STUB_INT(ibv_cmd_create_cq_ex)
STUB_INT(ibv_cmd_create_flow)
STUB_INT(ibv_cmd_create_flow_action_esp)
STUB_INT(ibv_cmd_create_qp)
STUB_INT(ibv_cmd_create_qp_ex)
STUB_INT(ibv_cmd_create_qp_ex2)
STUB_INT(ibv_cmd_create_rwq_ind_table)
STUB_INT(ibv_cmd_create_srq)
STUB_INT(ibv_cmd_create_srq_ex)
STUB_INT(ibv_cmd_create_wq)
STUB_INT(ibv_cmd_dealloc_mw)
STUB_INT(ibv_cmd_dealloc_pd)
STUB_INT(ibv_cmd_dereg_mr)
STUB_INT(ibv_cmd_destroy_ah)
STUB_INT(ibv_cmd_destroy_counters)
STUB_INT(ibv_cmd_destroy_cq)
STUB_INT(ibv_cmd_destroy_flow)
STUB_INT(ibv_cmd_destroy_flow_action)
STUB_INT(ibv_cmd_destroy_qp)
STUB_INT(ibv_cmd_destroy_rwq_ind_table)
STUB_INT(ibv_cmd_destroy_srq)
STUB_INT(ibv_cmd_destroy_wq)
STUB_INT(ibv_cmd_detach_mcast)
STUB_INT(ibv_cmd_free_dm)
STUB_INT(ibv_cmd_get_context)
STUB_INT(ibv_cmd_modify_cq)
STUB_INT(ibv_cmd_modify_flow_action_esp)
STUB_INT(ibv_cmd_modify_qp)
STUB_INT(ibv_cmd_modify_qp_ex)
STUB_INT(ibv_cmd_modify_srq)
STUB_INT(ibv_cmd_modify_wq)
STUB_INT(ibv_cmd_open_qp)
STUB_INT(ibv_cmd_open_xrcd)
STUB_INT(ibv_cmd_poll_cq)
STUB_INT(ibv_cmd_post_recv)
STUB_INT(ibv_cmd_post_send)
STUB_INT(ibv_cmd_post_srq_recv)
STUB_INT(ibv_cmd_query_context)
STUB_INT(ibv_cmd_query_device_any)
STUB_INT(ibv_cmd_query_mr)
STUB_INT(ibv_cmd_query_port)
STUB_INT(ibv_cmd_query_qp)
STUB_INT(ibv_cmd_query_srq)
STUB_INT(ibv_cmd_read_counters)
STUB_INT(ibv_cmd_reg_dm_mr)
STUB_INT(ibv_cmd_reg_dmabuf_mr)
STUB_INT(ibv_cmd_reg_mr)
STUB_INT(ibv_cmd_req_notify_cq)
STUB_INT(ibv_cmd_rereg_mr)
STUB_INT(ibv_cmd_resize_cq)
STUB_INT(execute_ioctl)

UABI_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num, void *) { return num; }
UABI_EXPORT void *_verbs_init_and_alloc_context(void) { errno = EOPNOTSUPP; return nullptr; }
UABI_EXPORT void *verbs_open_device(void) { errno = EOPNOTSUPP; return nullptr; }
UABI_EXPORT void verbs_register_driver_34(void) {}
UABI_EXPORT void verbs_set_ops(void) {}
UABI_EXPORT void verbs_uninit_context(void) {}
UABI_EXPORT void verbs_init_cq(void) {}
UABI_EXPORT void __verbs_log(void) {}
extern "C" __attribute__((visibility("default"))) bool verbs_allow_disassociate_destroy;
bool verbs_allow_disassociate_destroy = false;

// Helpers of the old kernel ABI's structs: nothing here speaks it.
UABI_EXPORT void ibv_copy_qp_attr_from_kern(void *, void *) {}
UABI_EXPORT void ibv_copy_ah_attr_from_kern(void *, void *) {}
UABI_EXPORT void ibv_copy_path_rec_from_kern(void *, void *) {}
UABI_EXPORT void ibv_copy_path_rec_to_kern(void *, void *) {}

// The device has no device memory to import.
UABI_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *, uint32_t) { errno = EOPNOTSUPP; return nullptr; }
UABI_EXPORT void ibv_unimport_dm(struct ibv_dm *) {}

