// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <uabi/transport.hpp>

#include <uabi/host_user.h>

#include <cerrno>
#include <new>

namespace uabi {

Result<std::unique_ptr<InprocTransport>> InprocTransport::open()
{
	int rc = uabi_user_init();
	if (rc)
		return make_error(rc);
	::uabi_context *ctx = uabi_user_open(nullptr);
	if (!ctx)
		return make_error(errno);
	auto *t = new (std::nothrow) InprocTransport(ctx);
	if (!t) {
		uabi_user_close(ctx);
		return make_error(ENOMEM);
	}
	return std::unique_ptr<InprocTransport>(t);
}

InprocTransport::~InprocTransport()
{
	uabi_user_close(ctx_);
}

int InprocTransport::execute(std::span<std::byte> msg)
{
	return uabi_user_execute(ctx_, msg.data(), msg.size());
}

} // namespace uabi
