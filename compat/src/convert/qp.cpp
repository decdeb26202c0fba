// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// <uabi/convert/qp.hpp>: each struct pair's common fields are listed once
// (X-macros) and copied in whichever direction is asked.
#include <uabi/convert/qp.hpp>

#include <cstddef>
#include <cstring>

namespace uabi::convert
{

namespace
{

// Fields of the same name and meaning in ibv_qp_attr, uabi_qp_attr and
// ib_uverbs_query_qp_resp (the enums, the addresses and the caps apart;
// the kernel's answer has no en_sqd_async_notify).
#define QP_FIELDS(X)                                                                               \
	X(qkey) X(rq_psn) X(sq_psn) X(dest_qp_num) X(qp_access_flags) X(pkey_index)                \
	X(alt_pkey_index) X(sq_draining) X(max_rd_atomic) X(max_dest_rd_atomic) X(min_rnr_timer)   \
	X(port_num) X(timeout) X(retry_cnt) X(rnr_retry) X(alt_port_num) X(alt_timeout)
// The enum-typed ones (libibverbs' enums, our __u32s, the kernel's __u8s).
#define QP_ENUM_FIELDS(X) X(qp_state) X(cur_qp_state) X(path_mtu) X(path_mig_state)

// to.f = from.f, converted to the destination field's type.
#define COPY(f) to.f = static_cast<decltype(to.f)>(from.f);

// The value of an enum field that the application may have left
// uninitialized (fields outside the attribute mask): read as bytes, not as
// the enum, whose invalid values C++ does not allow.
template <class E> std::uint32_t raw_enum(const E &e)
{
	static_assert(sizeof(E) == sizeof(std::uint32_t));
	std::uint32_t v;
	std::memcpy(&v, &e, sizeof(v));
	return v;
}

} // namespace

uabi_qp_attr to_uabi(const ibv_qp_attr &from)
{
	uabi_qp_attr to{};
#define RAW(f) to.f = raw_enum(from.f);
	QP_ENUM_FIELDS(RAW)
#undef RAW
	QP_FIELDS(COPY)
	to.en_sqd_async_notify = from.en_sqd_async_notify;
	to.cap = to_uabi(from.cap);
	to.ah_attr = to_uabi(from.ah_attr);
	to.alt_ah_attr = to_uabi(from.alt_ah_attr);
	return to;
}

void to_ibv(const uabi_qp_attr &from, ibv_qp_attr &to)
{
	std::memset(static_cast<void *>(&to), 0, offsetof(struct ibv_qp_attr, rate_limit));
	to.qp_state = ibv_qp_state(from.qp_state);
	to.cur_qp_state = ibv_qp_state(from.cur_qp_state);
	to.path_mtu = ibv_mtu(from.path_mtu);
	to.path_mig_state = ibv_mig_state(from.path_mig_state);
	QP_FIELDS(COPY)
	to.en_sqd_async_notify = from.en_sqd_async_notify;
	to.cap = to_ibv(from.cap);
	to_ibv(from.ah_attr, to.ah_attr);
	to_ibv(from.alt_ah_attr, to.alt_ah_attr);
}

ib_uverbs_query_qp_resp to_legacy(const uabi_qp_attr &a, const uabi_qp_init &init)
{
	ib_uverbs_query_qp_resp to{};
	{
		const auto &from = a;
		QP_ENUM_FIELDS(COPY)
		QP_FIELDS(COPY)
	}
	copy_caps(to, init.cap);
	to.dest = to_legacy_dest(a.ah_attr);
	to.alt_dest = to_legacy_dest(a.alt_ah_attr);
	to.sq_sig_all = init.sq_sig_all ? 1 : 0;
	return to;
}

QpQuery to_uabi(const ib_uverbs_query_qp_resp &from)
{
	QpQuery q{};
	{
		auto &to = q.attr;
		QP_ENUM_FIELDS(COPY)
		QP_FIELDS(COPY)
	}
	copy_caps(q.init.cap, from);
	q.attr.cap = q.init.cap;
	q.attr.ah_attr = to_uabi(from.dest);
	q.attr.alt_ah_attr = to_uabi(from.alt_dest);
	q.init.sq_sig_all = from.sq_sig_all;
	return q;
}

#undef COPY

} // namespace uabi::convert
