// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The legacy uverbs write() translator: takes exactly the bytes an old
// libibverbs wrote to /dev/infiniband/uverbsN, turns them into commands of
// the new uAPI (<rdma/uabi.h>), executes them on the context's transport and
// writes the response struct to the command's `response` address, as the
// kernel's ib_uverbs_write() would.  docs/legacy-abi.md has every rule and
// where it comes from.
//
// Handles seen by the legacy caller are the new uAPI's handles; the
// translator keeps no object table.  Per context it keeps the dialect, the
// async event queue and completion channel fds it handed out (legacy names a
// channel by fd), and per-object counts of events it delivered (for the
// events_reported fields of the destroy responses).
#ifndef UABI_LEGACY_HPP
#define UABI_LEGACY_HPP

#include <uabi/client.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <sys/types.h>

namespace uabi::legacy
{

// Commands 37-44 mean OPEN_XRCD..OPEN_QP upstream, and the OFED 1.3-1.5
// XRC commands (<uabi/legacy_ofed.h>) in the OFED dialect.
enum class Dialect : std::uint8_t { Upstream, Ofed };

const char *dialect_name(Dialect d);
// "upstream" or "ofed"; anything else is EINVAL.
Result<Dialect> parse_dialect(std::string_view s);
// UABI_LEGACY_DIALECT; unset or empty means Upstream.
Result<Dialect> dialect_from_env();

// Where the response of a command goes: a checked copy that answers EFAULT
// for an unmapped or read-only address instead of crashing.
// (Exposed for the interposer and the tests.)
int copy_to_user(std::uint64_t addr, const void *src, std::size_t len) noexcept;
int copy_from_user(void *dst, std::uint64_t addr, std::size_t len) noexcept;
// 0 when [addr, addr+len) can be written, else EFAULT; changes nothing.
int probe_user_writable(std::uint64_t addr, std::size_t len) noexcept;

// One legacy uverbs file (one open of /dev/infiniband/uverbsN): one new-uAPI
// context.  Not thread-safe across concurrent writes to the same instance
// (libibverbs serialises nothing either, but the kernel does per command;
// callers that share one instance across threads must serialise).
class Translator
{
      public:
	Translator(Context ctx, Dialect dialect);
	~Translator();
	Translator(const Translator &) = delete;
	Translator &operator=(const Translator &) = delete;

	// Context::open() (UABI_BACKEND) and the dialect from the environment.
	static Result<std::unique_ptr<Translator>> open();
	static Result<std::unique_ptr<Translator>> open(Backend b, Dialect d);

	// What write(2) on the uverbs fd returns: count, or -1 with errno set.
	// buf must be readable for count bytes (the interposer copies the
	// caller's bytes in with copy_from_user first).
	ssize_t write(const void *buf, std::size_t count) noexcept;
	// The same, returning count or -errno and leaving errno alone.
	// `avail` (>= count) is how many bytes at buf may be read: the kernel
	// reads 8 bytes past a 16-byte DESTROY_CQ (rdma-core v18/v19 bug).
	long execute(const void *buf, std::size_t count, std::size_t avail = 0) noexcept;
	// Translation only, for measuring: every check of execute() and the
	// encoding of the new-uAPI message, without running it.  0 or -errno.
	int translate_only(const void *buf, std::size_t count) noexcept;

	// How many commands execute() (or write()) was given, whatever their
	// outcome: proof for tests that a caller really took this path.
	std::uint64_t commands_executed() const noexcept { return executed_; }

	Dialect dialect() const noexcept;
	void set_dialect(Dialect d) noexcept;
	bool has_context() const noexcept; // GET_CONTEXT succeeded
	// The context was imported (ibv_import_device(3)): some other
	// translator's GET_CONTEXT made it, so commands that need one are
	// served, and GET_CONTEXT itself is refused (EINVAL), as on Linux's
	// shared ucontext.  No async event fd of its own.  0 or -errno.
	int import_context() noexcept;
	Context &context() noexcept;

	// The fds handed out by GET_CONTEXT (async) and CREATE_COMP_CHANNEL.
	bool is_event_fd(int fd) const noexcept;
	// Those fds, at most max of them into out; returns how many there are.
	int event_fds(int *out, int max) const noexcept;
	// The caller is about to close(fd): a completion channel is destroyed
	// (once no CQ uses it any more).  Returns 0, or ENOENT if fd is not ours.
	int release_event_fd(int fd) noexcept;
	// read(2) on one of those fds, kernel format (struct
	// ib_uverbs_comp_event_desc / ib_uverbs_async_event_desc): count or
	// -errno (EAGAIN when empty and nonblock, EINVAL when count is short).
	long read_event(int fd, void *buf, std::size_t count, bool nonblock) noexcept;

	struct Impl;

      private:
	std::unique_ptr<Impl> p_;
	std::uint64_t executed_ = 0;
};

} // namespace uabi::legacy

#endif // UABI_LEGACY_HPP
