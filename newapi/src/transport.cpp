// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <uabi/transport.hpp>
#include <uabi/transport_daemon.hpp>

#include <cerrno>
#include <cstdlib>
#include <unistd.h>

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
		// The kernel module when its device node exists, else uabid.  A
		// node that cannot be used for another reason than a missing
		// module (EACCES...) is reported, not silently replaced: two
		// processes on different backends could not share XRC domains.
		if (::access(UABI_DEVICE_PATH, F_OK) == 0) {
			auto t = open_transport(Backend::Kernel);
			if (t || (t.error() != ENOENT && t.error() != ENODEV && t.error() != ENXIO))
				return t;
		}
		return open_transport(Backend::Daemon);
	case Backend::Inproc: {
		auto t = InprocTransport::open();
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	case Backend::Daemon: {
		auto t = DaemonTransport::open();
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	case Backend::Kernel: {
		auto t = KernelTransport::open();
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	}
	return make_error(EINVAL);
}

} // namespace uabi
