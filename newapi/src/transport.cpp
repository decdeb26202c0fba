// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <uabi/transport.hpp>
#include <uabi/transport_daemon.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace uabi {

Transport::~Transport() = default;

const char *Transport::name() const
{
	return "unknown";
}

int Transport::context_fd()
{
	errno = EOPNOTSUPP;
	return -1;
}

Result<int> Transport::wire_relay(std::uint16_t *, int *steered)
{
	if (steered)
		*steered = -1;
	return make_error(EOPNOTSUPP);
}

int Transport::wire_bind(std::uint32_t, bool)
{
	return EOPNOTSUPP;
}

int Transport::cm_attach(const uabi_user_cm_port *)
{
	return EOPNOTSUPP;
}

void Transport::cm_detach(const uabi_user_cm_port *) {}

void Transport::cm_input(const unsigned char *, const unsigned char *, const void *, unsigned) {}

// The kind of file says the backend: the module's device node (the open
// file is the context, as libibverbs' cmd_fd), a socket (uabid's name for
// a context), a memfd (the in-process table's).  rdma-core's import
// answers EINVAL for an fd it cannot fstat() or that is no character
// device, ENODEV for a character device of no RDMA device.
Result<std::unique_ptr<Transport>> import_transport(int fd)
{
	struct stat st;
	if (fd < 0 || ::fstat(fd, &st) < 0)
		return make_error(EINVAL);
	if (S_ISCHR(st.st_mode)) {
		struct stat dev;
		if (::stat(UABI_DEVICE_PATH, &dev) < 0 || !S_ISCHR(dev.st_mode) ||
		    dev.st_rdev != st.st_rdev)
			return make_error(ENODEV);
		auto t = KernelTransport::import(fd);
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	if (S_ISSOCK(st.st_mode)) {
		auto t = DaemonTransport::import(fd);
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	if (S_ISREG(st.st_mode)) {
		auto t = InprocTransport::import(fd);
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	return make_error(EINVAL);
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
	case Backend::Inproc:
		return open_transport(b, 0);
	case Backend::Daemon: {
		auto t = DaemonTransport::open(0);
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

Result<std::unique_ptr<Transport>> open_transport(Backend b, unsigned device)
{
	if (b == Backend::Inproc) {
		auto t = InprocTransport::open(device);
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	if (b == Backend::Daemon ||
	    (b == Backend::Auto && device != 0 && ::access(UABI_DEVICE_PATH, F_OK) != 0)) {
		auto t = DaemonTransport::open(device);
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	if (b == Backend::Kernel || b == Backend::Auto) {
		if (device == 0)
			return open_transport(b);
		auto t = KernelTransport::open_device(device);
		if (!t)
			return make_error(t.error());
		return std::unique_ptr<Transport>(std::move(*t));
	}
	return make_error(EINVAL);
}

Result<std::vector<std::string>> device_names(Backend b)
{
	if (b == Backend::Inproc)
		return InprocTransport::device_names();
	if (b == Backend::Daemon || (b == Backend::Auto && ::access(UABI_DEVICE_PATH, F_OK) != 0))
		return DaemonTransport::device_names();
	auto l = KernelTransport::links();
	if (!l)
		return make_error(l.error());
	std::vector<std::string> out;
	for (const uabi_link_info &e : *l)
		out.emplace_back(e.name, ::strnlen(e.name, sizeof(e.name)));
	return out;
}

} // namespace uabi
