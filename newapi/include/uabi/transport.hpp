// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// How messages reach the object core.  Callers only see Transport, so the
// daemon and kernel backends slot in without changing them.
#ifndef UABI_TRANSPORT_HPP
#define UABI_TRANSPORT_HPP

#include <uabi/message.hpp>

#include <rdma/uabi_ioctl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <mutex>
#include <span>
#include <string_view>

struct uabi_context;
struct uabi_user_api;
struct uabi_user_cm_port;

namespace uabi {

class Transport {
public:
	virtual ~Transport();
	// Executes one encoded message in place; returns its status as the
	// core does (0 or -errno).
	virtual int execute(std::span<std::byte> msg) = 0;
	virtual const char *name() const;
	// An fd that names this transport's context (libibverbs' cmd_fd):
	// import_transport() of a duplicate of it, in this process or in one
	// it was passed to, reaches the same context (ibv_import_device(3)).
	// Owned by the transport; -1 and errno if the backend has none.
	virtual int context_fd();
	// RoCE devices whose port a host process owns (uabid): a socket that
	// delivers the datagrams of this context's QPs (each behind a
	// daemon::RelayHdr) and the device's UDP port; and the QPs whose
	// datagrams go there (docs/wire.md, "Devices on uabid").  EOPNOTSUPP:
	// the context receives on a socket of its own.
	// With it, in *steered (-1: none), a UDP socket that receives the
	// bound QPs' datagrams directly, as they come to the port (kOpWireRelay's
	// kRelaySteered); the caller owns both.
	virtual Result<int> wire_relay(std::uint16_t *port, int *steered = nullptr);
	virtual int wire_bind(std::uint32_t qpn, bool on);
	// The in-process host's CM across hosts (docs/cm.md, "Across hosts"):
	// the process's wire endpoint of this context's RoCE device carries
	// the core's CM MADs (uabi_user_cm_attach() and the rest, host_user.h).
	// EOPNOTSUPP: another process carries them (uabid, the module).
	virtual int cm_attach(const uabi_user_cm_port *port);
	virtual void cm_detach(const uabi_user_cm_port *port);
	virtual void cm_input(const unsigned char *sgid, const unsigned char *dgid, const void *mad,
			      unsigned len);
};

// A transport on the context @fd names (a duplicate of some transport's
// context_fd()), of whichever backend it belongs to, whatever
// UABI_BACKEND says.  Takes @fd over on success; on failure it stays the
// caller's.  EINVAL: @fd is not open, or names no context; ENODEV: a
// character device other than the module's; EOPNOTSUPP: an in-process
// context of another process (the core lives in that process's memory);
// EACCES: a daemon context of another user.  docs/daemon.md, "Imported
// contexts".
Result<std::unique_ptr<Transport>> import_transport(int fd);

// The core in this process, one context per instance: libuabi_inproc.so,
// loaded on the first open (UABI_INPROC_LIB, next to this library, this
// build tree's, the loader's path), or the core a program linked in
// (uabi_inproc_builtin).  ENOENT when there is neither.
//
// Its context_fd() is a sealed, empty memfd found through a table of this
// process; import() of a duplicate of it shares the context, which closes
// with its last transport.
class InprocTransport final : public Transport {
public:
	// @device: 0 is uabi_sw0; RoCE devices of UABI_LINKS follow.
	static Result<std::unique_ptr<InprocTransport>> open(unsigned device = 0);
	// The in-process host's device names, in index order.
	static Result<std::vector<std::string>> device_names();
	// EOPNOTSUPP: a context of another process; EINVAL: no context.
	static Result<std::unique_ptr<InprocTransport>> import(int fd);
	~InprocTransport() override;
	InprocTransport(const InprocTransport &) = delete;
	InprocTransport &operator=(const InprocTransport &) = delete;

	int execute(std::span<std::byte> msg) override;
	const char *name() const override { return "inproc"; }
	int context_fd() override { return fd_; }
	int cm_attach(const uabi_user_cm_port *port) override;
	void cm_detach(const uabi_user_cm_port *port) override;
	void cm_input(const unsigned char *sgid, const unsigned char *dgid, const void *mad,
		      unsigned len) override;

	struct Shared; // the context and its transports (transport_inproc.cpp)

private:
	InprocTransport(Shared *s, int fd) : sh_(s), fd_(fd) {}
	Shared *sh_;
	int fd_;
};

// The kernel module (rdma_uabi.ko): one open of /dev/rdma_uabi, so one
// context, per instance; one UABI_IOCTL_EXECUTE per message.  Event queue
// fds are closed when their object is destroyed, as in-process.
class KernelTransport final : public Transport {
public:
	static Result<std::unique_ptr<KernelTransport>>
	open(const char *path = UABI_DEVICE_PATH);
	// A context on the module's device at position @device (0:
	// uabi_sw0; RoCE devices follow: links()).  ENODEV: none there.
	static Result<std::unique_ptr<KernelTransport>> open_device(unsigned device,
								     const char *path = UABI_DEVICE_PATH);
	// The module's devices, in position order (UABI_IOCTL_LINK_QUERY).
	static Result<std::vector<uabi_link_info>> links(const char *path = UABI_DEVICE_PATH);
	// The CM's counts of each of them (UABI_IOCTL_LINK_QUERY_CM), in the
	// same order; ENOTTY from a module that has no such call.
	static Result<std::vector<uabi_link_cm_info>> link_cm_counts(const char *path = UABI_DEVICE_PATH);
	// `uabi link add/del` on the module (CAP_NET_ADMIN: EPERM otherwise).
	static Result<void> link_add(const std::string &name, const std::string &netdev,
				     const char *path = UABI_DEVICE_PATH);
	static Result<void> link_del(const std::string &name, const char *path = UABI_DEVICE_PATH);
	// Another transport on the open file @fd (a duplicate of a
	// KernelTransport's fd(), the context itself); takes it over.
	static Result<std::unique_ptr<KernelTransport>> import(int fd);
	~KernelTransport() override;
	KernelTransport(const KernelTransport &) = delete;
	KernelTransport &operator=(const KernelTransport &) = delete;

	int execute(std::span<std::byte> msg) override;
	const char *name() const override { return "kernel"; }
	int fd() const { return fd_; }
	int context_fd() override { return fd_; }
	// A RoCE device's context: a new queue of the module's, of the
	// datagrams it receives for the QPs bound to it (docs/wire.md);
	// wire_bind() binds to the last queue wire_relay() gave (whose fd
	// the caller keeps open meanwhile).
	Result<int> wire_relay(std::uint16_t *port, int *steered = nullptr) override;
	int wire_bind(std::uint32_t qpn, bool on) override;

private:
	explicit KernelTransport(int fd) : fd_(fd) {}
	void track_event_fds(std::span<const std::byte> msg, const uabi_msg_hdr &h);
	int fd_;
	std::mutex evq_mu_; // held by messages that create/destroy event queues
	std::map<std::uint32_t, int> evq_fds_; // event queue handle -> its fd
	std::atomic<int> relay_fd_{-1}; // the last wire_relay() (not owned)
};

enum class Backend { Auto, Inproc, Daemon, Kernel };

const char *backend_name(Backend b);
// "auto", "inproc", "daemon", "kernel"; anything else is EINVAL.
Result<Backend> parse_backend(std::string_view s);
// UABI_BACKEND; unset or empty means Auto.
Result<Backend> backend_from_env();
Result<std::unique_ptr<Transport>> open_transport(Backend b = Backend::Auto);
// A context on device @device of backend @b (0: uabi_sw0; ENODEV: none).
// Devices beyond 0 are RoCE devices (docs/wire.md): UABI_LINKS in-process,
// `uabi link add` on uabid and on the module.
Result<std::unique_ptr<Transport>> open_transport(Backend b, unsigned device);
// The devices of backend @b, in index order (Auto: the backend
// open_transport would choose).
Result<std::vector<std::string>> device_names(Backend b = Backend::Auto);

} // namespace uabi

#endif // UABI_TRANSPORT_HPP
