// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy RDMA CM ABI (ucma: write() commands to /dev/infiniband/rdma_cm,
// the kernel's include/uapi/rdma/rdma_user_cm.h) on top of the uAPI's CM
// objects (docs/cm.md).  One Ucma is one open rdma_cm file: a context of
// its own and one CM channel; the ucma IDs are the channel's CM ID handles.
#ifndef UABI_UCMA_HPP
#define UABI_UCMA_HPP

#include <uabi/client.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace uabi::legacy
{

class Ucma {
public:
	static Result<std::unique_ptr<Ucma>> open();
	~Ucma();
	Ucma(const Ucma &) = delete;
	Ucma &operator=(const Ucma &) = delete;

	// The channel's pollable fd (readable while events are pending);
	// owned by the Ucma.
	int event_fd() const { return fd_; }
	// One write(): @len bytes at @buf, already copied from the caller.
	// Returns @len or -errno; GET_EVENT answers -EAGAIN when no event is
	// pending (the caller waits on event_fd() unless it is non-blocking).
	// Responses go to the caller's pointers with copy_to_user().
	long execute(const std::byte *buf, std::size_t len) noexcept;

private:
	Ucma(Context ctx, Handle channel, int fd) : ctx_(std::move(ctx)), channel_(channel), fd_(fd) {}
	long dispatch(std::uint32_t cmd, const std::byte *in, std::size_t in_len,
		      std::uint16_t out_len);

	Context ctx_;
	Handle channel_;
	int fd_;
};

} // namespace uabi::legacy

#endif
