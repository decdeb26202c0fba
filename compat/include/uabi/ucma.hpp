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

class Ucma
{
      public:
	// A new rdma_cm file of this process: a CM channel in the process's
	// one context (shared by its rdma_cm files, so that an ID keeps its
	// number when it moves between them, as ucma's IDs do).
	static Result<std::unique_ptr<Ucma>> open();
	// The file is closed: its IDs are destroyed (their peers are told),
	// then its channel; the context goes with the last file.
	~Ucma();
	Ucma(const Ucma &) = delete;
	Ucma &operator=(const Ucma &) = delete;

	// The channel's pollable fd (readable while events are pending);
	// owned by the Ucma.
	int event_fd() const { return fd_; }
	// The Ucma of another fd of the process (MIGRATE_ID names its source
	// file by fd): nullptr and *err = ENOENT (no such fd) or EINVAL.
	using Resolver = Ucma *(*)(int fd, int *err);
	// One write(): @len bytes at @buf, already copied from the caller.
	// Returns @len or -errno; GET_EVENT answers -EAGAIN when no event is
	// pending (the caller waits on event_fd() unless it is non-blocking).
	// Responses go to the caller's pointers with copy_to_user().
	long execute(const std::byte *buf, std::size_t len, Resolver resolve) noexcept;

	struct Shared;

      private:
	Ucma(std::shared_ptr<Shared> sh, Handle channel, int fd)
	    : sh_(std::move(sh)), channel_(channel), fd_(fd)
	{
	}
	long dispatch(std::uint32_t cmd, const std::byte *in, std::size_t in_len,
		      std::uint16_t out_len, Resolver resolve);
	// 0 when @id is one of this file's IDs; -ENOENT (no such ID) or
	// -EINVAL (another file's), as ucma_get_ctx() answers.
	long owns(std::uint32_t id) const;
	// @id, made from a request on this file's listener of uid @uid: that
	// listener's AF_IB addressing, if it has one.
	void inherit_ib(std::uint32_t id, std::uint64_t uid);

	std::shared_ptr<Shared> sh_;
	Handle channel_;
	int fd_;
};

} // namespace uabi::legacy

#endif
