// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libuabi_rdmacm.so: serves librdmacm (and anything else that speaks the
// ucma write() ABI) from the uAPI's CM objects, on the default backend
// (docs/cm.md).  `uabi run` preloads it.
//
//   open("/dev/infiniband/rdma_cm")  -> a Ucma (a context and a CM channel);
//                                       the fd is a duplicate of the
//                                       channel's pollable fd (the node need
//                                       not exist)
//   write(that fd, cmd, len)          -> Ucma::execute(); GET_EVENT waits on
//                                       the fd unless O_NONBLOCK
//   fstat(that fd)                    -> a character device, as open_cdev()
//                                       checks
//   fcntl(F_GETFL / F_SETFL)          -> O_NONBLOCK kept per fd
//   close(that fd)                    -> the context is closed: every ID goes,
//                                       and its peers see it
// Every other call goes to the next definition (dlsym(RTLD_NEXT)).
#include <uabi/legacy.hpp>
#include <uabi/ucma.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using uabi::legacy::Ucma;

namespace
{

constexpr int kMaxFd = 65536;
// Longer than any ucma command (the largest, RESOLVE_ADDR, is 8 + 280
// bytes): only that much is read.
constexpr std::size_t kMaxCommand = 4096;

// A file stays alive while a call on it runs (a thread waiting in
// GET_EVENT when another closes the fd keeps waiting, as on Linux, where
// the call holds the file), so calls hold a reference.
struct Entry {
	std::unique_ptr<Ucma> u; // serialises its own commands
	std::atomic<bool> nonblock{false};
};

// The table is never destroyed: while the process exits, after this
// library's static objects went, its threads (rsockets' service threads)
// and librdmacm's own clean-up still call in, and close() would release a
// destroyed shared_ptr's pointer again (seen on the kernel module under
// TCG: rstream and riostream crashing in ~Ucma at exit).
template <class T> union Immortal {
	constexpr Immortal() : v() {}
	~Immortal() {}
	T v;
};
std::atomic<bool> g_is_cm[kMaxFd]; // fast path: most fds are not ours
Immortal<std::shared_ptr<Entry>[kMaxFd]> g_cm_store;
auto &g_cm = g_cm_store.v;
std::mutex g_table_lock;
// Set once the process exits (an atexit handler registered after the
// first file opened, so it runs before the static objects of the
// libraries beneath go): a file closed then keeps its Ucma (the context
// closes with the process, and the core tells the peers then).
std::atomic<bool> g_exiting{false};
std::once_flag g_exit_once;

template <class F> F next(const char *name)
{
	return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

#define REAL(name, type)                                                                           \
	static type real_##name = nullptr;                                                         \
	if (!real_##name)                                                                          \
	real_##name = next<type>(#name)

using open_t = int (*)(const char *, int, ...);
using openat_t = int (*)(int, const char *, int, ...);
using open2_t = int (*)(const char *, int);
using openat2_t = int (*)(int, const char *, int);
using write_t = ssize_t (*)(int, const void *, size_t);
using close_t = int (*)(int);
using fcntl_t = int (*)(int, int, ...);
using fstat_t = int (*)(int, struct stat *);
using fstat64_t = int (*)(int, struct stat64 *);
using fxstat_t = int (*)(int, int, struct stat *);
using fxstat64_t = int (*)(int, int, struct stat64 *);

bool is_cm_path(const char *path)
{
	return path && !std::strcmp(path, "/dev/infiniband/rdma_cm");
}

std::shared_ptr<Entry> entry(int fd)
{
	if (fd < 0 || fd >= kMaxFd || !g_is_cm[fd].load(std::memory_order_acquire))
		return nullptr;
	std::lock_guard<std::mutex> g(g_table_lock);
	return g_cm[fd];
}

int open_cm(int flags)
{
	auto u = Ucma::open();
	if (!u) {
		errno = u.error();
		return -1;
	}
	int fd = ::fcntl((*u)->event_fd(), (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	if (fd < 0)
		return -1;
	if (fd >= kMaxFd) {
		REAL(close, close_t);
		real_close(fd);
		errno = EMFILE;
		return -1;
	}
	std::call_once(g_exit_once, [] { std::atexit([] { g_exiting.store(true); }); });
	auto e = std::make_shared<Entry>();
	e->u = std::move(*u);
	e->nonblock = (flags & O_NONBLOCK) != 0;
	std::lock_guard<std::mutex> g(g_table_lock);
	g_cm[fd] = std::move(e);
	g_is_cm[fd].store(true, std::memory_order_release);
	return fd;
}

Ucma *resolve(int fd, int *err)
{
	// The caller (a write on another of our fds) holds that file; this
	// one stays in the table while the program does not close it.
	if (auto e = entry(fd))
		return e->u.get();
	*err = ::fcntl(fd, F_GETFD) < 0 ? ENOENT : EINVAL;
	return nullptr;
}

template <class St> void as_chardev(St *st)
{
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = 0;
}

} // namespace

extern "C" {

#define OPEN_VARIANT(fn, ...)                                                                      \
	{                                                                                          \
		mode_t mode = 0;                                                                   \
		if (flags & (O_CREAT | O_TMPFILE)) {                                               \
			va_list ap;                                                                \
			va_start(ap, flags);                                                       \
			mode = va_arg(ap, mode_t);                                                 \
			va_end(ap);                                                                \
		}                                                                                  \
		REAL(fn, open_t);                                                                  \
		return real_##fn(__VA_ARGS__, mode);                                               \
	}

__attribute__((visibility("default"))) int open(const char *path, int flags, ...)
{
	if (is_cm_path(path))
		return open_cm(flags);
	OPEN_VARIANT(open, path, flags)
}

__attribute__((visibility("default"))) int open64(const char *path, int flags, ...)
{
	if (is_cm_path(path))
		return open_cm(flags);
	OPEN_VARIANT(open64, path, flags)
}

__attribute__((visibility("default"))) int openat(int dirfd, const char *path, int flags, ...)
{
	if (is_cm_path(path))
		return open_cm(flags);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	REAL(openat, openat_t);
	return real_openat(dirfd, path, flags, mode);
}

__attribute__((visibility("default"))) int openat64(int dirfd, const char *path, int flags, ...)
{
	if (is_cm_path(path))
		return open_cm(flags);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	REAL(openat64, openat_t);
	return real_openat64(dirfd, path, flags, mode);
}

__attribute__((visibility("default"))) int __open_2(const char *path, int flags)
{
	if (is_cm_path(path))
		return open_cm(flags);
	REAL(__open_2, open2_t);
	return real___open_2(path, flags);
}

__attribute__((visibility("default"))) int __open64_2(const char *path, int flags)
{
	if (is_cm_path(path))
		return open_cm(flags);
	REAL(__open64_2, open2_t);
	return real___open64_2(path, flags);
}

__attribute__((visibility("default"))) int __openat_2(int dirfd, const char *path, int flags)
{
	if (is_cm_path(path))
		return open_cm(flags);
	REAL(__openat_2, openat2_t);
	return real___openat_2(dirfd, path, flags);
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void *buf, size_t count)
{
	std::shared_ptr<Entry> e = entry(fd);
	if (!e) {
		REAL(write, write_t);
		return real_write(fd, buf, count);
	}
	// The caller's bytes, copied the way copy_from_user() would: an
	// unreadable buffer is EFAULT, not a crash.
	std::byte copy[kMaxCommand];
	std::size_t want = std::min(count, kMaxCommand);
	if (int err =
		uabi::legacy::copy_from_user(copy, reinterpret_cast<std::uintptr_t>(buf), want)) {
		errno = err;
		return -1;
	}
	for (;;) {
		long ret;
		ret = e->u->execute(copy, want, resolve);
		if (ret == -EAGAIN && !e->nonblock.load(std::memory_order_relaxed)) {
			// GET_EVENT on a blocking fd: wait for the channel.
			pollfd p{e->u->event_fd(), POLLIN, 0};
			if (::poll(&p, 1, -1) < 0 && errno != EINTR)
				return -1;
			continue;
		}
		if (std::getenv("UABI_CM_TRACE")) {
			std::uint32_t c;
			std::memcpy(&c, copy, sizeof(c));
			std::fprintf(stderr, "ucma: cmd %u -> %ld\n", c, ret);
		}
		if (ret < 0) {
			errno = int(-ret);
			return -1;
		}
		// A write longer than we read is still the whole write.
		return ssize_t(count);
	}
}

__attribute__((visibility("default"))) int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (auto e = entry(fd)) {
		// The fd shares its open file with the channel's own (which the
		// host may keep non-blocking): O_NONBLOCK is kept to ourselves.
		if (cmd == F_GETFL)
			return O_RDWR | (e->nonblock.load() ? O_NONBLOCK : 0);
		if (cmd == F_SETFL) {
			e->nonblock.store((reinterpret_cast<std::uintptr_t>(arg) & O_NONBLOCK) !=
					  0);
			return 0;
		}
	}
	REAL(fcntl, fcntl_t);
	return real_fcntl(fd, cmd, arg);
}

__attribute__((visibility("default"))) int fstat(int fd, struct stat *st)
{
	REAL(fstat, fstat_t);
	int r = real_fstat(fd, st);
	if (!r && fd >= 0 && fd < kMaxFd && g_is_cm[fd].load(std::memory_order_acquire))
		as_chardev(st);
	return r;
}

__attribute__((visibility("default"))) int fstat64(int fd, struct stat64 *st)
{
	REAL(fstat64, fstat64_t);
	int r = real_fstat64(fd, st);
	if (!r && fd >= 0 && fd < kMaxFd && g_is_cm[fd].load(std::memory_order_acquire))
		as_chardev(st);
	return r;
}

__attribute__((visibility("default"))) int __fxstat(int ver, int fd, struct stat *st)
{
	REAL(__fxstat, fxstat_t);
	int r = real___fxstat(ver, fd, st);
	if (!r && fd >= 0 && fd < kMaxFd && g_is_cm[fd].load(std::memory_order_acquire))
		as_chardev(st);
	return r;
}

__attribute__((visibility("default"))) int __fxstat64(int ver, int fd, struct stat64 *st)
{
	REAL(__fxstat64, fxstat64_t);
	int r = real___fxstat64(ver, fd, st);
	if (!r && fd >= 0 && fd < kMaxFd && g_is_cm[fd].load(std::memory_order_acquire))
		as_chardev(st);
	return r;
}

__attribute__((visibility("default"))) int close(int fd)
{
	REAL(close, close_t);
	if (fd >= 0 && fd < kMaxFd && g_is_cm[fd].load(std::memory_order_acquire)) {
		std::shared_ptr<Entry> e;
		{
			std::lock_guard<std::mutex> g(g_table_lock);
			g_is_cm[fd].store(false, std::memory_order_release);
			if (g_exiting.load())
				return real_close(fd); // the entry stays
			e = std::move(g_cm[fd]);
		}
		// The last reference closes the file: its IDs go, their peers
		// are told (now, unless a call on it is still running).
		e.reset();
	}
	return real_close(fd);
}

} // extern "C"
