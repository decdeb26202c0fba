// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy translator's extended commands (IB_USER_VERBS_CMD_FLAG_EXTENDED)
// and their table (translator_impl.hpp).
#include "translator_impl.hpp"

#include <uabi/convert/device.hpp>
#include <uabi/convert/qp.hpp>

#include <cstddef>

namespace uabi::legacy
{

using I = Translator::Impl;
using K = I::K;

int Translator::Impl::ex_query_device(const Req &r)
{
	if (int e = need_ctx())
		return e;
	ib_uverbs_ex_query_device cmd;
	if (int e = request(r, cmd))
		return e;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_DEVICE, UABI_METHOD_QUERY);
	std::size_t off = m.out(UABI_ATTR_DEVICE_INFO, sizeof(uabi_device_attr));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return st;
	ib_uverbs_ex_query_device_resp resp{};
	uabi_device_attr d = m.get<uabi_device_attr>(off);
	resp.base = convert::to_legacy(d);
	resp.device_cap_flags_ex = d.device_cap_flags;
	resp.response_length = std::uint32_t(std::min(r.outlen, sizeof(resp)));
	return respond(r, &resp, sizeof(resp));
}

int Translator::Impl::ex_create_cq(const Req &r)
{
	ib_uverbs_ex_create_cq cmd;
	if (int e = request(r, cmd))
		return e;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	return create_cq_common(r, cmd, true);
}

// Linux's ib_uverbs_ex_modify_cq(): validated, the CQ looked up, then
// rdma_set_cq_moderation() answers EOPNOTSUPP (no moderation in sw).
int Translator::Impl::ex_modify_cq(const Req &r)
{
	ib_uverbs_ex_modify_cq cmd;
	if (int e = request(r, cmd))
		return e;
	if (!cmd.attr_mask || cmd.reserved)
		return -EINVAL;
	if (cmd.attr_mask > kCqModerate)
		return -EOPNOTSUPP;
	Wire m = w();
	m.begin();
	m.cmd(UABI_OBJ_CQ, UABI_METHOD_QUERY, cmd.cq_handle);
	m.out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp));
	int st = exec(m);
	if (st == kDry)
		return 0;
	if (st)
		return lookup_err(st);
	return -EOPNOTSUPP;
}

int Translator::Impl::ex_create_qp(const Req &r)
{
	ib_uverbs_ex_create_qp cmd;
	if (int e = request(r, cmd))
		return e;
	if (cmd.comp_mask & ~std::uint32_t(IB_UVERBS_CREATE_QP_SUP_COMP_MASK))
		return -EINVAL;
	if (cmd.reserved)
		return -EINVAL;
	return create_qp_common(r, cmd, true);
}

int Translator::Impl::ex_modify_qp(const Req &r)
{
	ib_uverbs_ex_modify_qp cmd;
	if (int e = request(r, cmd))
		return e;
	std::uint32_t mask = cmd.base.attr_mask;
	if (mask & ~(kQpAttrStandardBits | kQpRateLimit))
		return -EOPNOTSUPP;
	if (mask & kQpRateLimit) // no rate limiting in sw
		return -EOPNOTSUPP;
	if (int e = modify_qp_common(cmd.base, mask))
		return e;
	if (dry)
		return 0;
	ib_uverbs_ex_modify_qp_resp resp{};
	resp.response_length = std::uint32_t(std::min(r.outlen, sizeof(resp)));
	return respond(r, &resp, sizeof(resp));
}

// Extended commands the sw device has no use for (flows, WQs,
// indirection tables): framing checked as for any extended command.
int Translator::Impl::ex_unsupported(const Req &)
{
	return -EOPNOTSUPP;
}

#define RQ(s) std::uint16_t(sizeof(s))
#define END(s, m) std::uint16_t(offsetof(s, m) + sizeof(((s *)nullptr)->m))

// Extended commands: req/resp are the minimum sizes Linux demands
// (UAPI_DEF_WRITE_IO_EX: up to and including the named member).
const I::Spec I::kEx[] = {
    /* 0 */ {K::NotSupp, 0, 0, nullptr},
    /* 1 QUERY_DEVICE */
    {K::Ex, END(ib_uverbs_ex_query_device, reserved),
     END(ib_uverbs_ex_query_device_resp, response_length), &I::ex_query_device},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 2-4
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 5-7
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 8-10
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 11-13
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 14-16
    {K::NotSupp, 0, 0, nullptr}, // 17
				 /* 18 CREATE_CQ */
    {K::Ex, END(ib_uverbs_ex_create_cq, reserved),
     END(ib_uverbs_ex_create_cq_resp, response_length), &I::ex_create_cq},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 19-21
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 22-23
				 /* 24 CREATE_QP */
    {K::Ex, END(ib_uverbs_ex_create_qp, comp_mask),
     END(ib_uverbs_ex_create_qp_resp, response_length), &I::ex_create_qp},
    {K::NotSupp, 0, 0, nullptr}, // 25
				 /* 26 MODIFY_QP */
    {K::Ex, END(ib_uverbs_ex_modify_qp, base), END(ib_uverbs_ex_modify_qp_resp, response_length),
     &I::ex_modify_qp},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 27-29
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 30-32
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 33-35
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 36-38
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 39-41
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 42-44
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 45-47
    {K::NotSupp, 0, 0, nullptr},
    {K::NotSupp, 0, 0, nullptr}, // 48-49
				 /* 50 CREATE_FLOW */
    {K::Ex, END(ib_uverbs_create_flow, flow_attr), END(ib_uverbs_create_flow_resp, flow_handle),
     &I::ex_unsupported},
    /* 51 DESTROY_FLOW */ {K::Ex, RQ(ib_uverbs_destroy_flow), 0, &I::ex_unsupported},
    /* 52 CREATE_WQ */
    {K::Ex, END(ib_uverbs_ex_create_wq, max_sge), END(ib_uverbs_ex_create_wq_resp, wqn),
     &I::ex_unsupported},
    /* 53 MODIFY_WQ */ {K::Ex, END(ib_uverbs_ex_modify_wq, curr_wq_state), 0, &I::ex_unsupported},
    /* 54 DESTROY_WQ */
    {K::Ex, END(ib_uverbs_ex_destroy_wq, wq_handle), END(ib_uverbs_ex_destroy_wq_resp, reserved),
     &I::ex_unsupported},
    /* 55 CREATE_RWQ_IND_TBL */
    {K::Ex, END(ib_uverbs_ex_create_rwq_ind_table, log_ind_tbl_size),
     END(ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_num), &I::ex_unsupported},
    /* 56 DESTROY_RWQ_IND_TBL */
    {K::Ex, RQ(ib_uverbs_ex_destroy_rwq_ind_table), 0, &I::ex_unsupported},
    /* 57 MODIFY_CQ */ {K::Ex, RQ(ib_uverbs_ex_modify_cq), 0, &I::ex_modify_cq},
};
const std::size_t I::kNumEx = sizeof(kEx) / sizeof(kEx[0]);
static_assert(sizeof(I::kEx) / sizeof(I::Spec) == IB_USER_VERBS_EX_CMD_MODIFY_CQ + 1);
#undef RQ
#undef END

} // namespace uabi::legacy
