// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libuabi_umad.so: the umad shim `uabi run` preloads (docs/fsview.md).
//
//   open("/dev/infiniband/umadN")  -> an eventfd standing for the file,
//                                      served by umad::File (umad_file.hpp)
//   read/write/ioctl on it          -> the umad ABI
//   close/dup/dup2/dup3/fcntl dup   -> the file's lifetime follows its fds
//
// With UABI_FSVIEW_ROOT (the sysfs-path view, no mount namespace) the
// paths of /sys/class/infiniband{,_verbs,_mad} and /dev/infiniband are
// looked up in that directory by the calls that take a path (open, stat,
// access, opendir, scandir, readlink, realpath, chdir ...).
//
// Every other call goes straight to the next definition (dlsym(RTLD_NEXT))
// after one atomic load while no umad file is open.
#include "umad_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <type_traits>
#include <mutex>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
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
// One context per device and process on the backend of UABI_BACKEND,
// opened at the first umad open of one of its ports; a child after fork()
// opens its own.  Device 0 is uabi_sw0; the others are the backend's
// further devices (RoCE), in the order of uabi::device_names(), which is
// the order of ibv_get_device_list() and of the view's umadN.
constexpr unsigned kMaxDevices = 8;

struct Device {
	std::mutex mu;
	uabi::Context *ctx = nullptr;
	// The user's port counters, mapped once per context (its arena's
	// writable part, as the drop-in maps it): the PMA's traffic.
	std::shared_ptr<uabi::fsview::Traffic> traffic;
	pid_t pid = 0;
};

Device &device(unsigned index)
{
	static auto *d = new Device[kMaxDevices];
	return d[index];
}

uabi::Result<uabi::Context> open_context(unsigned index)
{
	if (index == 0)
		return uabi::Context::open();
	auto b = uabi::backend_from_env();
	if (!b)
		return uabi::make_error(b.error());
	auto t = uabi::open_transport(*b, index);
	if (!t)
		return uabi::make_error(t.error());
	return uabi::Context(std::move(*t));
}

uabi::Result<uabi::fsview::Snapshot> snapshot(unsigned index = 0)
{
	if (index >= kMaxDevices)
		return uabi::make_error(ENODEV);
	Device &d = device(index);
	std::lock_guard<std::mutex> g(d.mu);
	for (int attempt = 0; attempt < 2; attempt++) {
		if (d.ctx && d.pid != ::getpid())
			d.ctx = nullptr; // the parent's: not ours to use or close
		if (!d.ctx) {
			auto c = open_context(index);
			if (!c)
				return uabi::make_error(c.error());
			d.ctx = new uabi::Context(std::move(*c));
			d.pid = ::getpid();
			// A device without an arena counts nothing: the
			// counters read 0.  (The parent's mapping, inherited
			// by a child, shows the same user's block.)
			auto t = uabi::fsview::Traffic::map(*d.ctx);
			d.traffic = t ? std::move(*t) : nullptr;
		}
		auto s = uabi::fsview::query(*d.ctx);
		if (s) {
			s->traffic = d.traffic;
			return s;
		}
		// A backend that went away (uabid idle exit races, a restart):
		// one new context, then the error.
		delete d.ctx;
		d.ctx = nullptr;
		d.traffic = nullptr;
		if (attempt)
			return uabi::make_error(s.error());
	}
	return uabi::make_error(EIO);
}

// umadN: the Nth port counting every port of device 0, then of device 1
// ... (as the view numbers them, compat/fsview).  ENOENT: no such port.
struct UmadPort {
	unsigned device = 0;
	std::uint32_t port = 0;
	bool ib = true;
};

uabi::Result<UmadPort> umad_port(int index)
{
	auto snap = snapshot(0);
	if (!snap)
		return uabi::make_error(ENXIO); // no device behind the node
	std::size_t n = std::size_t(index);
	if (n < snap->ports.size()) // uabi_sw0's, as it always was
		return UmadPort{0, snap->ports[n].num, !uabi::fsview::is_ethernet(snap->ports[n])};
	n -= snap->ports.size();
	auto b = uabi::backend_from_env();
	if (!b)
		return uabi::make_error(ENOENT);
	auto names = uabi::device_names(*b);
	if (!names)
		return uabi::make_error(ENOENT);
	for (unsigned dev = 1; dev < names->size() && dev < kMaxDevices; dev++) {
		auto s = snapshot(dev);
		if (!s)
			continue; // gone meanwhile
		if (n < s->ports.size())
			return UmadPort{dev, s->ports[n].num, !uabi::fsview::is_ethernet(s->ports[n])};
		n -= s->ports.size();
	}
	return uabi::make_error(ENOENT); // umadN exists for each port, no more
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
	auto where = umad_port(index);
	if (!where) {
		errno = where.error();
		return -1;
	}
	const UmadPort at = *where;
	int efd = eventfd(0, ((flags & O_NONBLOCK) ? EFD_NONBLOCK : 0) |
				     ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
	if (efd < 0)
		return -1;
	// The File's own copy, out of the way of low descriptor numbers.
	REAL(fcntl, fcntl_t);
	int own = real_fcntl(efd, F_DUPFD_CLOEXEC, 512);
	if (own < 0)
		own = real_fcntl(efd, F_DUPFD_CLOEXEC, 3);
	if (own < 0) {
		int e = errno;
		REAL(close, close_t);
		real_close(efd);
		errno = e;
		return -1;
	}
	auto f = std::make_shared<File>(own, at.port, flags & O_ACCMODE,
					[dev = at.device] { return snapshot(dev); }, at.ib);
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

// ------------------------------------------------------ sysfs-path view
// Without a mount namespace (UABI_FSVIEW=sysfs-path, docs/fsview.md) the
// tree lives in UABI_FSVIEW_ROOT: the paths of the infiniband classes and
// of /dev/infiniband are looked up there.  Nothing changes otherwise.
const std::string &view_root()
{
	static const std::string *root = [] {
		const char *r = std::getenv("UABI_FSVIEW_ROOT");
		return new std::string(r && *r == '/' ? r : "");
	}();
	return *root;
}

// `path` itself, or its place in the view (written to buf).
const char *redirect(const char *path, char *buf, std::size_t size)
{
	const std::string &root = view_root();
	if (root.empty() || !path || path[0] != '/')
		return path;
	auto under = [&](const char *prefix) {
		std::size_t n = std::strlen(prefix);
		return !std::strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
	};
	if (!under("/sys/class/infiniband") && !under("/sys/class/infiniband_verbs") &&
	    !under("/sys/class/infiniband_mad") && !under("/dev/infiniband"))
		return path;
	if (root.size() + std::strlen(path) + 1 > size)
		return path;
	std::memcpy(buf, root.data(), root.size());
	std::strcpy(buf + root.size(), path);
	return buf;
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
	char b[4096];
	return real_open(redirect(path, b, sizeof(b)), flags, mode);
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
	char b[4096];
	return real_open64(redirect(path, b, sizeof(b)), flags, mode);
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
	char b[4096];
	return real_openat(dirfd, redirect(path, b, sizeof(b)), flags, mode);
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
	char b[4096];
	return real_openat64(dirfd, redirect(path, b, sizeof(b)), flags, mode);
}

// The fortified entry points (_FORTIFY_SOURCE) take no mode.
UABI_EXPORT int __open_2(const char *path, int flags)
{
	using t = int (*)(const char *, int);
	static const auto real = next<t>("__open_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	char b[4096];
	return real(redirect(path, b, sizeof(b)), flags);
}

UABI_EXPORT int __open64_2(const char *path, int flags)
{
	using t = int (*)(const char *, int);
	static const auto real = next<t>("__open64_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	char b[4096];
	return real(redirect(path, b, sizeof(b)), flags);
}

UABI_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	using t = int (*)(int, const char *, int);
	static const auto real = next<t>("__openat_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	char b[4096];
	return real(dirfd, redirect(path, b, sizeof(b)), flags);
}

UABI_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	using t = int (*)(int, const char *, int);
	static const auto real = next<t>("__openat64_2");
	if (int n = umad_index(path); n >= 0)
		return open_umad(n, flags);
	char b[4096];
	return real(dirfd, redirect(path, b, sizeof(b)), flags);
}

// ------------------------------------------------------------------ I/O
UABI_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	REAL(read, read_t);
	if (auto f = lookup(fd))
		return finish(f->read(fd, buf, count, nonblocking(fd)));
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

// ------------------------------------------- paths of the sysfs-path view
// A libc without `name` (an old or a new one): the call fails, ENOSYS.
template <class R> R missing()
{
	errno = ENOSYS;
	if constexpr (std::is_pointer_v<R>)
		return nullptr;
	else
		return R(-1);
}

#define UABI_PATH_FN(ret, name, params, ...)                                                      \
	UABI_EXPORT ret name params                                                                \
	{                                                                                          \
		using fn_t = ret(*) params;                                                        \
		static const auto real = next<fn_t>(#name);                                        \
		if (!real)                                                                         \
			return missing<ret>();                                                     \
		char b[4096];                                                                      \
		const char *p = redirect(path, b, sizeof(b));                                      \
		return real(__VA_ARGS__);                                                          \
	}

UABI_PATH_FN(FILE *, fopen, (const char *path, const char *mode), p, mode)
UABI_PATH_FN(FILE *, fopen64, (const char *path, const char *mode), p, mode)
UABI_PATH_FN(DIR *, opendir, (const char *path), p)
UABI_PATH_FN(int, scandir,
	     (const char *path, struct dirent ***list, int (*sel)(const struct dirent *),
	      int (*cmp)(const struct dirent **, const struct dirent **)),
	     p, list, sel, cmp)
UABI_PATH_FN(int, scandir64,
	     (const char *path, struct dirent64 ***list, int (*sel)(const struct dirent64 *),
	      int (*cmp)(const struct dirent64 **, const struct dirent64 **)),
	     p, list, sel, cmp)
UABI_PATH_FN(int, stat, (const char *path, struct stat *st), p, st)
UABI_PATH_FN(int, stat64, (const char *path, struct stat64 *st), p, st)
UABI_PATH_FN(int, lstat, (const char *path, struct stat *st), p, st)
UABI_PATH_FN(int, lstat64, (const char *path, struct stat64 *st), p, st)
UABI_PATH_FN(int, fstatat, (int dirfd, const char *path, struct stat *st, int flags), dirfd, p, st, flags)
UABI_PATH_FN(int, fstatat64, (int dirfd, const char *path, struct stat64 *st, int flags), dirfd, p, st,
	     flags)
UABI_PATH_FN(int, statx,
	     (int dirfd, const char *path, int flags, unsigned int mask, struct statx *st), dirfd, p,
	     flags, mask, st)
UABI_PATH_FN(int, __xstat, (int ver, const char *path, struct stat *st), ver, p, st)
UABI_PATH_FN(int, __xstat64, (int ver, const char *path, struct stat64 *st), ver, p, st)
UABI_PATH_FN(int, __lxstat, (int ver, const char *path, struct stat *st), ver, p, st)
UABI_PATH_FN(int, __lxstat64, (int ver, const char *path, struct stat64 *st), ver, p, st)
UABI_PATH_FN(int, __fxstatat, (int ver, int dirfd, const char *path, struct stat *st, int flags), ver,
	     dirfd, p, st, flags)
UABI_PATH_FN(int, __fxstatat64, (int ver, int dirfd, const char *path, struct stat64 *st, int flags),
	     ver, dirfd, p, st, flags)
UABI_PATH_FN(int, access, (const char *path, int mode), p, mode)
UABI_PATH_FN(int, eaccess, (const char *path, int mode), p, mode)
UABI_PATH_FN(int, euidaccess, (const char *path, int mode), p, mode)
UABI_PATH_FN(int, faccessat, (int dirfd, const char *path, int mode, int flags), dirfd, p, mode, flags)
UABI_PATH_FN(ssize_t, readlink, (const char *path, char *out, size_t size), p, out, size)
UABI_PATH_FN(ssize_t, readlinkat, (int dirfd, const char *path, char *out, size_t size), dirfd, p, out,
	     size)
UABI_PATH_FN(char *, realpath, (const char *path, char *out), p, out)
UABI_PATH_FN(int, chdir, (const char *path), p)
