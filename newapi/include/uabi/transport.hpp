// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// How messages reach the object core.  Callers only see Transport, so the
// daemon and kernel backends slot in without changing them.
#ifndef UABI_TRANSPORT_HPP
#define UABI_TRANSPORT_HPP

#include <uabi/message.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>

struct uabi_context;
struct uabi_user_api;

namespace uabi {

class Transport {
public:
	virtual ~Transport();
	// Executes one encoded message in place; returns its status as the
	// core does (0 or -errno).
	virtual int execute(std::span<std::byte> msg) = 0;
	virtual const char *name() const;
};

// The core in this process, one context per instance: libuabi_inproc.so,
// loaded on the first open (UABI_INPROC_LIB, next to this library, this
// build tree's, the loader's path), or the core a program linked in
// (uabi_inproc_builtin).  ENOENT when there is neither.
class InprocTransport final : public Transport {
public:
	static Result<std::unique_ptr<InprocTransport>> open();
	~InprocTransport() override;
	InprocTransport(const InprocTransport &) = delete;
	InprocTransport &operator=(const InprocTransport &) = delete;

	int execute(std::span<std::byte> msg) override;
	const char *name() const override { return "inproc"; }

private:
	InprocTransport(const ::uabi_user_api *api, ::uabi_context *ctx) : api_(api), ctx_(ctx) {}
	const ::uabi_user_api *api_;
	::uabi_context *ctx_;
};

// The kernel module (rdma_uabi.ko): one open of /dev/rdma_uabi, so one
// context, per instance; one UABI_IOCTL_EXECUTE per message.  Event queue
// fds are closed when their object is destroyed, as in-process.
class KernelTransport final : public Transport {
public:
	static Result<std::unique_ptr<KernelTransport>>
	open(const char *path = UABI_DEVICE_PATH);
	~KernelTransport() override;
	KernelTransport(const KernelTransport &) = delete;
	KernelTransport &operator=(const KernelTransport &) = delete;

	int execute(std::span<std::byte> msg) override;
	const char *name() const override { return "kernel"; }
	int fd() const { return fd_; }

private:
	explicit KernelTransport(int fd) : fd_(fd) {}
	void track_event_fds(std::span<const std::byte> msg, const uabi_msg_hdr &h);
	int fd_;
	std::mutex evq_mu_; // held by messages that create/destroy event queues
	std::map<std::uint32_t, int> evq_fds_; // event queue handle -> its fd
};

enum class Backend { Auto, Inproc, Daemon, Kernel };

const char *backend_name(Backend b);
// "auto", "inproc", "daemon", "kernel"; anything else is EINVAL.
Result<Backend> parse_backend(std::string_view s);
// UABI_BACKEND; unset or empty means Auto.
Result<Backend> backend_from_env();
Result<std::unique_ptr<Transport>> open_transport(Backend b = Backend::Auto);

} // namespace uabi

#endif // UABI_TRANSPORT_HPP
