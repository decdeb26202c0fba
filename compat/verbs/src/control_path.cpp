// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The control path of the drop-in library: which one (UABI_VERBS_PATH) and
// opening it; the two implementations are control_new.cpp and
// control_write.cpp (control_path.hpp).
#include "control_path.hpp"
#include "verbs_impl.hpp"

#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <unistd.h>
#include <string_view>

namespace uabi::verbs {

Result<ControlMode> control_mode_from_env()
{
	const char *v = std::getenv("UABI_VERBS_PATH");
	if (!v || !*v)
		return ControlMode::New;
	std::string_view s(v);
	if (s == "new" || s == "ioctl")
		return ControlMode::New;
	if (s == "write")
		return ControlMode::Write;
	return make_error(EINVAL);
}

Control::~Control() = default;

Result<std::unique_ptr<Control>> Control::open(ControlMode mode, unsigned device)
{
	auto c = Context::open_device(device);
	if (!c)
		return make_error(c.error());
	if (mode == ControlMode::New)
		return NewControl::open(std::move(*c));
	return WriteControl::open(std::move(*c));
}

Result<std::unique_ptr<Control>> Control::import(ControlMode mode, int fd)
{
	// The transport gets a duplicate, so that the caller's fd is
	// untouched by a failure at any step; on success it is ours
	// (ibv_close_device() closes it) and the duplicate stands for it.
	int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0)
		return make_error(errno == EBADF ? EINVAL : errno);
	auto c = Context::import(own);
	if (!c) {
		::close(own);
		return make_error(c.error());
	}
	auto r = mode == ControlMode::New ? NewControl::adopt(std::move(*c))
					  : WriteControl::adopt(std::move(*c));
	if (r)
		::close(fd);
	return r;
}

Result<std::uint32_t> Control::bind_mw(Handle mw, Handle mr, Handle qp, const uabi_mw_bind &b)
{
	std::optional<Ref> m;
	if (mr)
		m = Ref(mr);
	return ctx_->bind_mw(mw, m, Ref(qp), b);
}

} // namespace uabi::verbs

// Commands the context's legacy translator executed: 0 on the new path.
// (UABI_VERBS_1, ours: lets a test see which path a verb took.)
UABI_EXPORT std::uint64_t uabi_verbs_legacy_commands(struct ibv_context *ctx)
{
	return uabi::verbs::impl_of(ctx)->ctl.legacy_commands();
}
