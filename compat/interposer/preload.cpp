// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libuabi_legacy_preload.so: serves a process that speaks the legacy uverbs
// write() ABI itself (2005-2015 code with its own libibverbs) from the
// translator, on the default backend (Context::open(): UABI_BACKEND).
//
//   open("/dev/infiniband/uverbsN")  -> a memfd placeholder + a Translator
//                                        (the node need not exist)
//   write(that fd, cmd, len)          -> Translator::execute()
//   close(that fd)                    -> the context is closed
//   read/fcntl/close on the async fd and on completion channel fds
//                                     -> legacy event semantics
// Every other call goes to the next definition (dlsym(RTLD_NEXT)).
//
// uabi_legacy_set_dialect(fd, "ofed"|"upstream") picks the dialect of one
// uverbs fd; UABI_LEGACY_DIALECT sets the default.
#include <uabi/legacy.hpp>

#include <rdma/ib_user_verbs.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using uabi::legacy::Translator;

namespace
{

constexpr int kMaxFd = 65536;
// The largest write a legacy command can be: an extended header plus
// 2 x 0xffff words of 8 bytes; anything longer fails on its header alone.
constexpr std::size_t kMaxCommand = 24 + 2 * 0xffffu * 8;

struct Entry {
	std::unique_ptr<Translator> t;
	std::mutex m;
};

std::atomic<Entry *> g_uverbs[kMaxFd];
std::atomic<Entry *> g_event[kMaxFd];
std::atomic<bool> g_nonblock[kMaxFd];
std::mutex g_table_lock;

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
using read_t = ssize_t (*)(int, void *, size_t);
using close_t = int (*)(int);
using fcntl_t = int (*)(int, int, ...);

bool is_uverbs_path(const char *path)
{
	static const char prefix[] = "/dev/infiniband/uverbs";
	if (!path || std::strncmp(path, prefix, sizeof(prefix) - 1))
		return false;
	const char *p = path + sizeof(prefix) - 1;
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

bool in_range(int fd)
{
	return fd >= 0 && fd < kMaxFd;
}

Entry *uverbs_entry(int fd)
{
	return in_range(fd) ? g_uverbs[fd].load(std::memory_order_acquire) : nullptr;
}

Entry *event_entry(int fd)
{
	return in_range(fd) ? g_event[fd].load(std::memory_order_acquire) : nullptr;
}

int open_uverbs(int flags)
{
	auto t = Translator::open();
	if (!t) {
		errno = t.error();
		return -1;
	}
	int fd = memfd_create("uabi-uverbs", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	if (!in_range(fd)) {
		REAL(close, close_t);
		real_close(fd);
		errno = EMFILE;
		return -1;
	}
	auto *e = new Entry;
	e->t = std::move(*t);
	std::lock_guard<std::mutex> g(g_table_lock);
	g_uverbs[fd].store(e, std::memory_order_release);
	return fd;
}

// Event fds the translator handed out since the last write: register the
// ones we do not know yet.
void adopt_event_fds(Entry *e, long ret, const void *cmd)
{
	if (ret < 0)
		return;
	std::uint32_t command;
	std::memcpy(&command, cmd, sizeof(command));
	if (command != IB_USER_VERBS_CMD_GET_CONTEXT &&
	    command != IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL)
		return;
	std::vector<int> fds(64);
	int n = e->t->event_fds(fds.data(), int(fds.size()));
	if (n > int(fds.size())) {
		fds.resize(std::size_t(n));
		n = e->t->event_fds(fds.data(), n);
	}
	std::lock_guard<std::mutex> g(g_table_lock);
	for (int i = 0; i < n; i++) {
		int fd = fds[i];
		if (in_range(fd) && !g_event[fd].load(std::memory_order_relaxed)) {
			g_nonblock[fd].store(false, std::memory_order_relaxed);
			g_event[fd].store(e, std::memory_order_release);
		}
	}
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int uabi_legacy_set_dialect(int fd, const char *name)
{
	Entry *e = uverbs_entry(fd);
	if (!e || !name)
		return EBADF;
	auto d = uabi::legacy::parse_dialect(name);
	if (!d)
		return d.error();
	std::lock_guard<std::mutex> g(e->m);
	e->t->set_dialect(*d);
	return 0;
}

__attribute__((visibility("default"))) int open(const char *path, int flags, ...)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(open, open_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_open(path, flags, mode);
}

__attribute__((visibility("default"))) int open64(const char *path, int flags, ...)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(open64, open_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_open64(path, flags, mode);
}

__attribute__((visibility("default"))) int openat(int dirfd, const char *path, int flags, ...)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(openat, openat_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_openat(dirfd, path, flags, mode);
}

__attribute__((visibility("default"))) int openat64(int dirfd, const char *path, int flags, ...)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(openat64, openat_t);
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_openat64(dirfd, path, flags, mode);
}

// _FORTIFY_SOURCE entry points.
__attribute__((visibility("default"))) int __open_2(const char *path, int flags)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(__open_2, open2_t);
	return real___open_2(path, flags);
}

__attribute__((visibility("default"))) int __open64_2(const char *path, int flags)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(__open64_2, open2_t);
	return real___open64_2(path, flags);
}

__attribute__((visibility("default"))) int __openat_2(int dirfd, const char *path, int flags)
{
	if (is_uverbs_path(path))
		return open_uverbs(flags);
	REAL(__openat_2, openat2_t);
	return real___openat_2(dirfd, path, flags);
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void *buf, size_t count)
{
	Entry *e = uverbs_entry(fd);
	if (!e) {
		REAL(write, write_t);
		return real_write(fd, buf, count);
	}
	// Copy the caller's bytes in the way copy_from_user() would: an
	// unreadable buffer is EFAULT, not a crash.
	if (count < sizeof(ib_uverbs_cmd_hdr)) {
		errno = EINVAL;
		return -1;
	}
	thread_local std::vector<std::byte> copy;
	std::size_t want = std::min(count, kMaxCommand);
	std::size_t avail = want;
	copy.resize(want + 8);
	if (int err = uabi::legacy::copy_from_user(copy.data(),
						   reinterpret_cast<std::uintptr_t>(buf), want)) {
		errno = err;
		return -1;
	}
	// The kernel reads 8 more bytes of a 16-byte DESTROY_CQ.
	if (count == 16 &&
	    uabi::legacy::copy_from_user(copy.data() + 16,
					 reinterpret_cast<std::uintptr_t>(buf) + 16, 8) == 0)
		avail = 24;
	long ret;
	{
		std::lock_guard<std::mutex> g(e->m);
		// Longer than any command: only the header is looked at.
		ret = e->t->execute(copy.data(), count, avail);
	}
	adopt_event_fds(e, ret, copy.data());
	if (ret < 0) {
		errno = int(-ret);
		return -1;
	}
	return ret;
}

__attribute__((visibility("default"))) ssize_t read(int fd, void *buf, size_t count)
{
	Entry *e = event_entry(fd);
	if (!e) {
		REAL(read, read_t);
		return real_read(fd, buf, count);
	}
	for (;;) {
		long ret;
		{
			std::lock_guard<std::mutex> g(e->m);
			ret = e->t->read_event(fd, buf, count, true);
		}
		if (ret != -EAGAIN || g_nonblock[fd].load(std::memory_order_relaxed)) {
			if (ret < 0) {
				errno = int(-ret);
				return -1;
			}
			return ret;
		}
		pollfd p{fd, POLLIN, 0};
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

__attribute__((visibility("default"))) int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (event_entry(fd)) {
		// The fd shares its open file with the event queue's own (which
		// is non-blocking): keep the caller's O_NONBLOCK to ourselves.
		if (cmd == F_GETFL)
			return O_RDONLY | (g_nonblock[fd].load() ? O_NONBLOCK : 0);
		if (cmd == F_SETFL) {
			g_nonblock[fd].store((reinterpret_cast<std::uintptr_t>(arg) & O_NONBLOCK) !=
					     0);
			return 0;
		}
	}
	REAL(fcntl, fcntl_t);
	return real_fcntl(fd, cmd, arg);
}

__attribute__((visibility("default"))) int close(int fd)
{
	REAL(close, close_t);
	if (Entry *e = uverbs_entry(fd)) {
		{
			std::lock_guard<std::mutex> g(g_table_lock);
			g_uverbs[fd].store(nullptr, std::memory_order_release);
			for (int i = 0; i < kMaxFd; i++)
				if (g_event[i].load(std::memory_order_relaxed) == e)
					g_event[i].store(nullptr, std::memory_order_release);
		}
		delete e; // closes the context: every object it owned goes
		return real_close(fd);
	}
	if (Entry *e = event_entry(fd)) {
		{
			std::lock_guard<std::mutex> g(e->m);
			e->t->release_event_fd(fd);
		}
		g_event[fd].store(nullptr, std::memory_order_release);
	}
	return real_close(fd);
}

} // extern "C"
