// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The kernel transport: the message's bytes go to rdma_uabi.ko through one
// ioctl on /dev/rdma_uabi, which copies them in, executes them and copies
// the whole message back (see UABI_IOCTL_EXECUTE in <rdma/uabi_ioctl.h>).
//
// Event queue fds: the module installs them in this process and, as any
// kernel, never closes them behind the process's back.  The client's
// contract is that such an fd belongs to its object (EvqInfo::fd: closed
// when the object is destroyed), so this transport remembers the fd each
// successful COMP_CHANNEL / ASYNC_EVENT CREATE returned and closes it when
// a DESTROY of that handle succeeds, or when the context closes.  Messages
// that create or destroy event queues are serialized among themselves so
// that a handle reused by the kernel never meets a stale entry; all other
// messages run concurrently.
#include <uabi/transport.hpp>

#include <rdma/uabi_wire.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace uabi {

namespace {

bool is_evq(std::uint16_t object)
{
	return object == UABI_OBJ_COMP_CHANNEL || object == UABI_OBJ_ASYNC_EVENT;
}

template <class T>
T load(std::span<const std::byte> m, std::size_t off)
{
	T v;
	std::memcpy(&v, m.data() + off, sizeof(T));
	return v;
}

const __u8 *bytes(std::span<const std::byte> m)
{
	return reinterpret_cast<const __u8 *>(m.data());
}

// Offsets of the commands, as far as the framing holds (the bytes may be
// anything: execute_raw() sends corrupted messages on purpose).  The caller
// has checked that the message fits a __u32 length.
std::vector<std::size_t> command_offsets(std::span<const std::byte> m)
{
	std::vector<std::size_t> v;
	uabi_wire_iter c;
	uabi_wire_cmds_init(&c, bytes(m), std::uint32_t(m.size()), UINT32_MAX);
	while (uabi_wire_next_cmd(&c))
		v.push_back(c.off);
	return v;
}

bool touches_evq(std::span<const std::byte> m)
{
	for (std::size_t off : command_offsets(m)) {
		auto c = load<uabi_cmd_hdr>(m, off);
		if (is_evq(c.object) &&
		    (c.method == UABI_METHOD_CREATE || c.method == UABI_METHOD_DESTROY))
			return true;
	}
	return false;
}

// The fd an event queue CREATE at off wrote, or -1.
int created_fd(std::span<const std::byte> m, std::size_t off)
{
	uabi_wire_iter a;
	uabi_wire_attrs_init(&a, bytes(m) + off);
	while (uabi_wire_next_attr(&a)) {
		constexpr unsigned written = UABI_ATTR_F_OUTPUT | UABI_ATTR_F_VALID_OUTPUT;
		if (a.hdr.attr.id == UABI_ATTR_EVQ_FD && (a.hdr.attr.flags & written) == written &&
		    a.hdr.attr.len >= sizeof(std::int32_t))
			return load<std::int32_t>(m, off + uabi_wire_payload(&a));
	}
	return -1;
}

} // namespace

Result<std::unique_ptr<KernelTransport>> KernelTransport::open(const char *path)
{
	int fd = ::open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return make_error(errno);
	auto *t = new (std::nothrow) KernelTransport(fd);
	if (!t) {
		::close(fd);
		return make_error(ENOMEM);
	}
	return std::unique_ptr<KernelTransport>(t);
}

Result<std::unique_ptr<KernelTransport>> KernelTransport::open_device(unsigned device, const char *path)
{
	auto t = open(path);
	if (!t || device == 0)
		return t;
	std::uint32_t pos = device;
	if (::ioctl((*t)->fd_, UABI_IOCTL_OPEN_DEVICE, &pos) < 0)
		return make_error(errno);
	return t;
}

namespace {

// An fd of the module's node for the device ioctls (a context on
// uabi_sw0 comes with it, closed again at once).
Result<int> open_node(const char *path)
{
	int fd = ::open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return make_error(errno);
	return fd;
}

Result<void> link_change(unsigned long req, const std::string &name, const std::string &netdev,
			 const char *path)
{
	uabi_link_req r{};
	if (name.size() >= sizeof(r.name) || netdev.size() >= sizeof(r.netdev))
		return make_error(EINVAL);
	std::memcpy(r.name, name.data(), name.size());
	std::memcpy(r.netdev, netdev.data(), netdev.size());
	auto fd = open_node(path);
	if (!fd)
		return make_error(fd.error());
	int ret = ::ioctl(*fd, req, &r) < 0 ? errno : 0;
	::close(*fd);
	if (ret)
		return make_error(ret);
	return {};
}

} // namespace

namespace {

// Every device's answer to the query @cmd (struct T, @index in), in
// position order, up to the first ENODEV.
template <typename T>
Result<std::vector<T>> query_each(const char *path, unsigned long cmd)
{
	auto fd = open_node(path);
	if (!fd)
		return make_error(fd.error());
	std::vector<T> out;
	for (std::uint32_t pos = 0; pos < 64; pos++) {
		T l{};
		l.index = pos;
		if (::ioctl(*fd, cmd, &l) < 0) {
			int e = errno;
			if (e == ENODEV)
				break;
			::close(*fd);
			return make_error(e);
		}
		out.push_back(l);
	}
	::close(*fd);
	return out;
}

} // namespace

Result<std::vector<uabi_link_info>> KernelTransport::links(const char *path)
{
	return query_each<uabi_link_info>(path, UABI_IOCTL_LINK_QUERY);
}

Result<std::vector<uabi_link_cm_info>> KernelTransport::link_cm_counts(const char *path)
{
	return query_each<uabi_link_cm_info>(path, UABI_IOCTL_LINK_QUERY_CM);
}

Result<void> KernelTransport::link_add(const std::string &name, const std::string &netdev, const char *path)
{
	return link_change(UABI_IOCTL_LINK_ADD, name, netdev, path);
}

Result<void> KernelTransport::link_del(const std::string &name, const char *path)
{
	return link_change(UABI_IOCTL_LINK_DEL, name, "", path);
}

Result<int> KernelTransport::wire_relay(std::uint16_t *port, int *steered)
{
	if (steered)
		*steered = -1; // the module steers in the kernel: its relay is all
	uabi_wire_relay r{};
	if (::ioctl(fd_, UABI_IOCTL_WIRE_RELAY, &r) < 0)
		return make_error(errno);
	*port = r.port;
	relay_fd_ = r.fd;
	return int(r.fd);
}

int KernelTransport::wire_bind(std::uint32_t qpn, bool on)
{
	uabi_wire_bind b{};
	b.qpn = qpn;
	b.on = on ? 1 : 0;
	b.relay_fd = relay_fd_; // -1 before any: the module says EOPNOTSUPP
	return ::ioctl(fd_, UABI_IOCTL_WIRE_BIND, &b) < 0 ? errno : 0;
}

Result<std::unique_ptr<KernelTransport>> KernelTransport::import(int fd)
{
	auto *t = new (std::nothrow) KernelTransport(fd);
	if (!t)
		return make_error(ENOMEM);
	return std::unique_ptr<KernelTransport>(t);
}

KernelTransport::~KernelTransport()
{
	// Closing the device file closes the context (unless a forked child
	// still holds it): its event queues are gone, so are their fds.
	::close(fd_);
	for (auto &[h, fd] : evq_fds_)
		::close(fd);
}

int KernelTransport::execute(std::span<std::byte> msg)
{
	// The module enforces the hard limits itself; only a length that does
	// not fit the ioctl's field is refused here (the core would refuse it
	// as too long in any case).
	if (msg.size() > UINT32_MAX)
		return -EINVAL;
	const bool evq = touches_evq(msg);
	std::unique_lock<std::mutex> lock(evq_mu_, std::defer_lock);
	if (evq)
		lock.lock();

	uabi_ioctl io{};
	io.msg_ptr = reinterpret_cast<std::uintptr_t>(msg.data());
	io.msg_len = static_cast<std::uint32_t>(msg.size());
	if (::ioctl(fd_, UABI_IOCTL_EXECUTE, &io) < 0)
		return -errno; // nothing was installed
	// The ioctl succeeded, so the message is back, header included.
	auto h = load<uabi_msg_hdr>(msg, 0);
	if (evq)
		track_event_fds(msg, h);
	return h.status;
}

// Caller holds evq_mu_.
void KernelTransport::track_event_fds(std::span<const std::byte> m, const uabi_msg_hdr &h)
{
	// A failed all-or-nothing message was rolled back: the module
	// installed none of its fds.
	if ((h.flags & UABI_MSG_F_ALL_OR_NOTHING) && h.status != 0)
		return;
	std::vector<std::size_t> offs = command_offsets(m);
	std::vector<std::uint32_t> fresh; // queues this message created
	for (std::size_t k = 0; k < offs.size(); k++) {
		auto c = load<uabi_cmd_hdr>(m, offs[k]);
		if (!is_evq(c.object) || c.status != 0)
			continue;
		if (c.method == UABI_METHOD_CREATE) {
			int fd = created_fd(m, offs[k]);
			if (fd < 0)
				continue;
			auto [it, inserted] = evq_fds_.try_emplace(c.out_handle, fd);
			if (!inserted && it->second != fd) {
				::close(it->second); // stale: cannot happen
				it->second = fd;
			}
			fresh.push_back(c.out_handle);
		} else if (c.method == UABI_METHOD_DESTROY) {
			std::uint32_t hd = c.handle;
			if (c.flags & UABI_CMD_F_HANDLE_REF) {
				if (hd >= k)
					continue;
				hd = load<uabi_cmd_hdr>(m, offs[hd]).out_handle;
			}
			auto it = evq_fds_.find(hd);
			if (it == evq_fds_.end())
				continue;
			// A queue created and destroyed by this very message
			// never had its fd installed.
			if (std::find(fresh.begin(), fresh.end(), hd) == fresh.end())
				::close(it->second);
			evq_fds_.erase(it);
		}
	}
}

} // namespace uabi
