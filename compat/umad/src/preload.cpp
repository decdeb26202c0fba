// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libuabi_umad.so: the umad shim `uabi run` preloads (docs/fsview.md).
//
//   open("/dev/infiniband/umadN")  -> an eventfd standing for the file,
//                                      served by umad::File (umad_file.hpp)
//   read/write/ioctl on it          -> the umad ABI
//   close/dup/dup2/dup3/fcntl dup   -> the file's lifetime follows its fds
//
// Every other call goes straight to the next definition (dlsym(RTLD_NEXT))
// after one atomic load while no umad file is open.
#include "umad_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <unordered_map>

#define UABI_EXPORT extern "C" __attribute__((visibility("default")))

using uabi::umad::File;

namespace {

template <class F> F next(const char *name)
{
	return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

#define REAL(name, type)                                                                           \
	static const auto real_##name = next<type>(#name)

using open_t = int (*)(const char *, int, ...);
using openat_t = int (*)(int, const char *, int, ...);
using read_t = ssize_t (*)(int, void *, size_t);
using write_t = ssize_t (*)(int, const void *, size_t);
using ioctl_t = int (*)(int, unsigned long, ...);
using close_t = int (*)(int);
using dup_t = int (*)(int);
using dup2_t = int (*)(int, int);
using dup3_t = int (*)(int, int, int);
using fcntl_t = int (*)(int, int, ...);

// --------------------------------------------------------------- files
std::atomic<int> g_open{0}; // fds standing for umad files
std::mutex g_mu;
std::unordered_map<int, std::shared_ptr<File>> &files()
{
	static auto *m = new std::unordered_map<int, std::shared_ptr<File>>;
	return *m;
}

std::shared_ptr<File> lookup(int fd)
{
	if (fd < 0 || g_open.load(std::memory_order_acquire) == 0)
		return nullptr;
	std::lock_guard<std::mutex> g(g_mu);
	auto it = files().find(fd);
	return it == files().end() ? nullptr : it->second;
}

void track(int fd, std::shared_ptr<File> f)
{
	std::lock_guard<std::mutex> g(g_mu);
	if (files().insert_or_assign(fd, std::move(f)).second)
		g_open.fetch_add(1, std::memory_order_release);
}

void untrack(int fd)
{
	if (g_open.load(std::memory_order_acquire) == 0)
		return;
	std::shared_ptr<File> gone; // released outside the lock
	std::lock_guard<std::mutex> g(g_mu);
	auto it = files().find(fd);
	if (it == files().end())
		return;
	gone = std::move(it->second);
	files().erase(it);
	g_open.fetch_sub(1, std::memory_order_release);
}

// -------------------------------------------------------------- device
// One context per process on the backend of UABI_BACKEND, opened at the
// first umad open; a child after fork() opens its own.
struct Device {
	std::mutex mu;
	uabi::Context *ctx = nullptr;
	pid_t pid = 0;
};

Device &device()
{
	static auto *d = new Device;
	return *d;
}

uabi::Result<uabi::fsview::Snapshot> snapshot()
{
	Device &d = device();
	std::lock_guard<std::mutex> g(d.mu);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (d.ctx && d.pid != ::getpid())
			d.ctx = nullptr; // the parent's: not ours to use or close
		if (!d.ctx) {
			auto c = uabi::Context::open();
			if (!c)
				return uabi::make_error(c.error());
			d.ctx = new uabi::Context(std::move(*c));
			d.pid = ::getpid();
		}
		auto s = uabi::fsview::query(*d.ctx);
		if (s)
			return s;
		// A backend that went away (uabid idle exit races, a restart):
		// one new context, then the error.
		delete d.ctx;
		d.ctx = nullptr;
		if (attempt)
			return uabi::make_error(s.error());
	}
	return uabi::make_error(EIO);
}

// "/dev/infiniband/umadN": N, else -1.
int umad_index(const char *path)
{
	static const char prefix[] = "/dev/infiniband/umad";
	if (!path || std::strncmp(path, prefix, sizeof(prefix) - 1))
		return -1;
	const char *p = path + sizeof(prefix) - 1;
	if (!*p || (p[0] == '0' && p[1]))
		return -1;
	int n = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > 1000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n;
}

int open_umad(int index, int flags)
{
	if (flags & (O_DIRECTORY | O_PATH | O_TMPFILE)) {
		errno = flags & O_DIRECTORY ? ENOTDIR : EINVAL;
		return -1;
	}
	auto snap = snapshot();
	if (!snap) {
		errno = ENXIO; // no device behind the node
		return -1;
	}
	if (std::size_t(index) >= snap->ports.size()) {
		errno = ENOENT; // umadN exists for each port, no more
		return -1;
	}
	const std::uint32_t port = snap->ports[std::size_t(index)].num;
	int efd = eventfd(0, ((flags & O_NONBLOCK) ? EFD_NONBLOCK : 0) |
				     ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
	if (efd < 0)
		return -1;
	auto f = std::make_shared<File>(efd, port, [] { return snapshot(); });
	track(efd, std::move(f));
	return efd;
}

bool nonblocking(int fd)
{
	REAL(fcntl, fcntl_t);
	int fl = real_fcntl(fd, F_GETFL);
	return fl >= 0 && (fl & O_NONBLOCK);
}

long finish(long r)
{
	if (r < 0) {
		errno = int(-r);
		return -1;
	}
	return r;
}

} // namespace

// ------------------------------------------------------------- opening
UABI_EXPORT int open(const char *path, int flags, ...)
{
	REAL(open, open_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = mode_t(va_arg(ap, int));
		va_end(ap);
	}
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real_open(path, flags, mode);
}

UABI_EXPORT int open64(const char *path, int flags, ...)
{
	REAL(open64, open_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = mode_t(va_arg(ap, int));
		va_end(ap);
	}
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real_open64(path, flags, mode);
}

UABI_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat, openat_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = mode_t(va_arg(ap, int));
		va_end(ap);
	}
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real_openat(dirfd, path, flags, mode);
}

UABI_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat64, openat_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = mode_t(va_arg(ap, int));
		va_end(ap);
	}
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real_openat64(dirfd, path, flags, mode);
}

// The fortified entry points (_FORTIFY_SOURCE) take no mode.
UABI_EXPORT int __open_2(const char *path, int flags)
{
	using t = int (*)(const char *, int);
	static const auto real = next<t>("__open_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real(path, flags);
}

UABI_EXPORT int __open64_2(const char *path, int flags)
{
	using t = int (*)(const char *, int);
	static const auto real = next<t>("__open64_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real(path, flags);
}

UABI_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	using t = int (*)(int, const char *, int);
	static const auto real = next<t>("__openat_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real(dirfd, path, flags);
}

UABI_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	using t = int (*)(int, const char *, int);
	static const auto real = next<t>("__openat64_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	return real(dirfd, path, flags);
}

// ------------------------------------------------------------------ I/O
UABI_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	REAL(read, read_t);
	if (auto f = lookup(fd))
		return finish(f->read(buf, count, nonblocking(fd)));
	return real_read(fd, buf, count);
}

UABI_EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	if (count > buflen) {
		using t = void (*)(void);
		static const auto chk_fail = next<t>("__chk_fail");
		if (chk_fail)
			chk_fail();
		std::abort();
	}
	return read(fd, buf, count);
}

UABI_EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	REAL(write, write_t);
	if (auto f = lookup(fd))
		return finish(f->write(buf, count));
	return real_write(fd, buf, count);
}

UABI_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	REAL(ioctl, ioctl_t);
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (auto f = lookup(fd))
		return int(finish(f->ioctl(request, arg)));
	return real_ioctl(fd, request, arg);
}

// ------------------------------------------------------------ lifetime
UABI_EXPORT int close(int fd)
{
	REAL(close, close_t);
	untrack(fd);
	return real_close(fd);
}

UABI_EXPORT int dup(int fd)
{
	REAL(dup, dup_t);
	int r = real_dup(fd);
	if (r >= 0)
		if (auto f = lookup(fd))
			track(r, std::move(f));
	return r;
}

UABI_EXPORT int dup2(int fd, int to)
{
	REAL(dup2, dup2_t);
	auto f = lookup(fd);
	int r = real_dup2(fd, to);
	if (r >= 0 && fd != to) {
		untrack(to);
		if (f)
			track(to, std::move(f));
	}
	return r;
}

UABI_EXPORT int dup3(int fd, int to, int flags)
{
	REAL(dup3, dup3_t);
	auto f = lookup(fd);
	int r = real_dup3(fd, to, flags);
	if (r >= 0) {
		untrack(to);
		if (f)
			track(to, std::move(f));
	}
	return r;
}

static int fcntl_common(fcntl_t real, int fd, int cmd, void *arg)
{
	int r = real(fd, cmd, arg);
	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		if (auto f = lookup(fd))
			track(r, std::move(f));
	return r;
}

UABI_EXPORT int fcntl(int fd, int cmd, ...)
{
	REAL(fcntl, fcntl_t);
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(real_fcntl, fd, cmd, arg);
}

UABI_EXPORT int fcntl64(int fd, int cmd, ...)
{
	REAL(fcntl64, fcntl_t);
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(real_fcntl64, fd, cmd, arg);
}
