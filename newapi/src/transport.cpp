// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <uabi/transport.hpp>

#include <cerrno>
#include <cstdlib>

namespace uabi {

Transport::~Transport() = default;

const char *Transport::name() const
{
	return "unknown";
}

const char *backend_name(Backend b)
{
	switch (b) {
	case Backend::Auto: return "auto";
	case Backend::Inproc: return "inproc";
	case Backend::Daemon: return "daemon";
	case Backend::Kernel: return "kernel";
	}
	return "?";
}

Result<Backend> parse_backend(std::string_view s)
{
	for (Backend b : {Backend::Auto, Backend::Inproc, Backend::Daemon,
			  Backend::Kernel})
		if (s == backend_name(b))
			return b;
	return make_error(EINVAL);
}

Result<Backend> backend_from_env()
{
	const char *v = std::getenv("UABI_BACKEND");
	if (!v || !*v)
		return Backend::Auto;
	return parse_backend(v);
}

Result<std::unique_ptr<Transport>> open_transport(Backend b)
{
	switch (b) {
	case Backend::Auto:
		// Auto resolves to Inproc ONLY until the daemon and kernel
		// transports exist; then it should prefer kernel, then daemon.
	case Backend::Inproc: {
		auto t = InprocTransport::open();
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	case Backend::Daemon:
		// Added by the daemon (unix socket) transport issue.
		return make_error(ENOTSUP);
	case Backend::Kernel:
		// Added by the kernel (ioctl) transport issue.
		return make_error(ENOTSUP);
	}
	return make_error(EINVAL);
}

} // namespace uabi
