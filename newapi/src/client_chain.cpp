// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Chains: several commands in one message, later ones naming objects the
// earlier ones create (client.hpp).
#include "client_build.hpp"

namespace uabi {

using namespace detail;

// ---------------------------------------------------------------- Chain

PendingPd Chain::alloc_pd()
{
	return {{msg_.add(Command(UABI_OBJ_PD, UABI_METHOD_CREATE))}};
}

PendingMr Chain::reg_mr(Ref pd, const void *addr, std::uint64_t length,
			std::uint32_t access, std::optional<std::uint64_t> iova)
{
	Built b = b_reg_mr(pd, addr, length, access, iova);
	return {{msg_.add(std::move(b.cmd))}, b.out};
}

PendingCq Chain::create_cq(const CqCreate &c)
{
	Built b = b_create_cq(c);
	return {{msg_.add(std::move(b.cmd))}, b.out};
}

PendingEvq Chain::create_comp_channel()
{
	Built b = b_create_evq(UABI_OBJ_COMP_CHANNEL);
	return {{msg_.add(std::move(b.cmd))}, b.out};
}

PendingEvq Chain::create_async_event_queue()
{
	Built b = b_create_evq(UABI_OBJ_ASYNC_EVENT);
	return {{msg_.add(std::move(b.cmd))}, b.out};
}

PendingQp Chain::create_qp(const QpCreate &c)
{
	Built b = b_create_qp(c);
	return {{msg_.add(std::move(b.cmd))}, b.out};
}

PendingSrq Chain::create_srq(const SrqCreate &c)
{
	Built b = b_create_srq(c);
	return {{msg_.add(std::move(b.cmd))}, b.out};
}

ChainRef Chain::create_ah(Ref pd, const uabi_ah_attr &attr)
{
	return {msg_.add(b_create_ah(pd, attr))};
}

ChainRef Chain::open_xrcd(int fd, std::uint32_t oflags)
{
	return {msg_.add(b_open_xrcd(fd, oflags))};
}

ChainRef Chain::modify_qp(Ref qp, const uabi_qp_attr &attr, std::uint32_t mask)
{
	return {msg_.add(b_modify_qp(qp, attr, mask))};
}

ChainRef Chain::destroy(std::uint16_t object, Ref target)
{
	return {msg_.add(b_destroy(object, target))};
}

ChainRef Chain::add(Command cmd)
{
	return {msg_.add(std::move(cmd))};
}

Result<void> Chain::execute(Context &ctx)
{
	return ctx.execute(msg_);
}

int Chain::error_of(ChainRef r) const
{
	if (int e = cmd_error(msg_.result(r.index)))
		return e;
	// Succeeded, then destroyed again when a later command failed.
	if ((msg_.flags() & UABI_MSG_F_ALL_OR_NOTHING) && msg_.status() != 0)
		return ECANCELED;
	return 0;
}

Result<Handle> Chain::handle(ChainRef r) const
{
	if (int e = error_of(r))
		return make_error(e);
	return read_handle(msg_, r.index);
}

Result<MrInfo> Chain::get(const PendingMr &p) const
{
	if (int e = error_of(p))
		return make_error(e);
	return read_mr(msg_, p.index, p.keys);
}

Result<CqInfo> Chain::get(const PendingCq &p) const
{
	if (int e = error_of(p))
		return make_error(e);
	return read_cq(msg_, p.index, p.resp);
}

Result<EvqInfo> Chain::get(const PendingEvq &p) const
{
	if (int e = error_of(p))
		return make_error(e);
	return read_evq(msg_, p.index, p.fd);
}

Result<QpInfo> Chain::get(const PendingQp &p) const
{
	if (int e = error_of(p))
		return make_error(e);
	return read_qp(msg_, p.index, p.resp);
}

Result<SrqInfo> Chain::get(const PendingSrq &p) const
{
	if (int e = error_of(p))
		return make_error(e);
	return read_srq(msg_, p.index, p.resp);
}

} // namespace uabi
