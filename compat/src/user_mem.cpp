// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Checked copies to and from addresses a legacy caller handed us (the
// `response` field of a command, the buffer given to write()).  The kernel
// answers EFAULT for an unmapped or read-only address; so do we, without
// touching the memory through a pointer: process_vm_readv/writev on our own
// pid do the copy in the kernel and fail cleanly.  Where those calls are not
// allowed (seccomp, old kernels) a pipe does the same job in two steps.
#include <uabi/legacy.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <csetjmp>
#include <csignal>
#include <sys/uio.h>
#include <unistd.h>

namespace uabi::legacy
{

int copy_to_user_slow(std::uint64_t addr, const void *src, std::size_t len) noexcept;

namespace
{

std::atomic<pid_t> g_pid{0};
std::atomic<int> g_vm_ok{1}; // 0 once process_vm_* answered ENOSYS/EPERM

void reset_pid()
{
	g_pid.store(0, std::memory_order_relaxed);
}

pid_t self_pid()
{
	pid_t p = g_pid.load(std::memory_order_relaxed);
	if (p)
		return p;
	static std::atomic<bool> hooked{false};
	if (!hooked.exchange(true))
		pthread_atfork(nullptr, nullptr, reset_pid);
	p = getpid();
	g_pid.store(p, std::memory_order_relaxed);
	return p;
}

// addr..addr+len must not wrap, and user space ends below 2^47 on the
// machines we run on (the kernel's access_ok()); NULL is never valid.
bool plausible(std::uint64_t addr, std::size_t len)
{
	if (!addr)
		return false;
	std::uint64_t end;
	if (__builtin_add_overflow(addr, std::uint64_t(len), &end))
		return false;
	return end <= (1ull << 56); // loose: the real check is the syscall's
}

// ------------------------------------------------------------ pipe path
struct PipePair {
	int r = -1, w = -1;
	PipePair()
	{
		int p[2];
		if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
			r = p[0];
			w = p[1];
		}
	}
	~PipePair()
	{
		if (r >= 0)
			close(r);
		if (w >= 0)
			close(w);
	}
	void drain()
	{
		char tmp[4096];
		while (read(r, tmp, sizeof(tmp)) > 0) {
		}
	}
};

thread_local PipePair t_pipe;
constexpr std::size_t kPipeChunk = 4096;

// Moves len bytes from src to dst through the pipe: write() reads src, read()
// writes dst; either answers EFAULT for a bad address.
int pipe_copy(void *dst, const void *src, std::size_t len)
{
	PipePair &p = t_pipe;
	if (p.r < 0)
		return EFAULT;
	auto *d = static_cast<char *>(dst);
	auto *s = static_cast<const char *>(src);
	while (len) {
		std::size_t n = std::min(len, kPipeChunk);
		ssize_t w = ::write(p.w, s, n);
		if (w != ssize_t(n)) {
			p.drain();
			return EFAULT;
		}
		ssize_t r = ::read(p.r, d, n);
		if (r != ssize_t(n)) {
			p.drain();
			return EFAULT;
		}
		d += n;
		s += n;
		len -= n;
	}
	return 0;
}

// ------------------------------------------------------- guarded path
// System calls cost more than a whole command on the in-process backend,
// so pages that a checked copy already reached (responses mostly live on
// the caller's stack, the same pages every time) are written directly,
// under a SIGSEGV/SIGBUS handler that turns a fault into EFAULT (the page
// may have been unmapped or protected since).  Faults that are not ours go
// to the handler that was there before.  Addresses not seen yet always take
// the system-call path.
__attribute__((tls_model("initial-exec"))) thread_local sigjmp_buf *t_jmp;
__attribute__((tls_model("initial-exec"))) thread_local std::uintptr_t t_pages[16];
__attribute__((tls_model("initial-exec"))) thread_local unsigned t_next;

struct sigaction g_old_segv, g_old_bus;
bool g_guard = false;
pthread_once_t g_guard_once = PTHREAD_ONCE_INIT;
constexpr std::uintptr_t kPage = 4096;

void on_fault(int sig, siginfo_t *si, void *uc)
{
	if (sigjmp_buf *j = t_jmp) {
		t_jmp = nullptr;
		siglongjmp(*j, 1);
	}
	const struct sigaction &old = sig == SIGSEGV ? g_old_segv : g_old_bus;
	if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
		old.sa_sigaction(sig, si, uc);
		return;
	}
	if (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN) {
		// Return to the faulting instruction with the default action.
		struct sigaction dfl {
		};
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, nullptr);
		return;
	}
	old.sa_handler(sig);
}

void install_guard()
{
	struct sigaction sa {
	};
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	g_guard =
	    sigaction(SIGSEGV, &sa, &g_old_segv) == 0 && sigaction(SIGBUS, &sa, &g_old_bus) == 0;
}

bool guard_ready()
{
	pthread_once(&g_guard_once, install_guard);
	return g_guard;
}

bool cached(std::uint64_t addr, std::size_t len)
{
	std::uintptr_t first = std::uintptr_t(addr) / kPage;
	std::uintptr_t last = std::uintptr_t(addr + len - 1) / kPage;
	if (last - first > 1)
		return false;
	bool f = false, l = false;
	for (std::uintptr_t p : t_pages) {
		f |= p == first + 1;
		l |= p == last + 1;
	}
	return f && l;
}

void remember(std::uint64_t addr, std::size_t len)
{
	std::uintptr_t first = std::uintptr_t(addr) / kPage;
	std::uintptr_t last = std::uintptr_t(addr + len - 1) / kPage;
	if (last - first > 1)
		return;
	for (std::uintptr_t p = first; p <= last; p++)
		if (!cached(p * kPage, 1))
			t_pages[t_next++ % 16] = p + 1; // 0 = empty slot
}

// A write (src != nullptr) or a read-and-write-back (src == nullptr) of
// [addr, addr+len) that answers EFAULT instead of faulting.
__attribute__((noinline, no_sanitize("address", "undefined"))) int
guarded(std::uint64_t addr, const void *src, std::size_t len)
{
	sigjmp_buf jb;
	if (sigsetjmp(jb, 0))
		return EFAULT;
	t_jmp = &jb;
	auto *d = reinterpret_cast<volatile unsigned char *>(addr);
	auto *s = static_cast<const unsigned char *>(src);
	std::size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		auto *d8 = reinterpret_cast<volatile std::uint64_t *>(d + i);
		std::uint64_t v;
		if (s)
			__builtin_memcpy(&v, s + i, 8);
		else
			v = *d8;
		*d8 = v;
	}
	for (; i < len; i++)
		d[i] = s ? s[i] : d[i];
	t_jmp = nullptr;
	return 0;
}

} // namespace

int copy_to_user(std::uint64_t addr, const void *src, std::size_t len) noexcept
{
	if (!len)
		return 0;
	if (!plausible(addr, len))
		return EFAULT;
	if (guard_ready() && cached(addr, len))
		return guarded(addr, src, len);
	int e = copy_to_user_slow(addr, src, len);
	if (!e)
		remember(addr, len);
	return e;
}

int copy_to_user_slow(std::uint64_t addr, const void *src, std::size_t len) noexcept
{
	if (g_vm_ok.load(std::memory_order_relaxed)) {
		iovec local{const_cast<void *>(src), len};
		iovec remote{reinterpret_cast<void *>(addr), len};
		ssize_t n = process_vm_writev(self_pid(), &local, 1, &remote, 1, 0);
		if (n == ssize_t(len))
			return 0;
		if (n >= 0 || errno == EFAULT)
			return EFAULT;
		if (errno != ENOSYS && errno != EPERM)
			return EFAULT;
		g_vm_ok.store(0, std::memory_order_relaxed);
	}
	return pipe_copy(reinterpret_cast<void *>(addr), src, len);
}

int copy_from_user(void *dst, std::uint64_t addr, std::size_t len) noexcept
{
	if (!len)
		return 0;
	if (!plausible(addr, len))
		return EFAULT;
	if (g_vm_ok.load(std::memory_order_relaxed)) {
		iovec local{dst, len};
		iovec remote{reinterpret_cast<void *>(addr), len};
		ssize_t n = process_vm_readv(self_pid(), &local, 1, &remote, 1, 0);
		if (n == ssize_t(len))
			return 0;
		if (n >= 0 || errno == EFAULT)
			return EFAULT;
		if (errno != ENOSYS && errno != EPERM)
			return EFAULT;
		g_vm_ok.store(0, std::memory_order_relaxed);
	}
	return pipe_copy(dst, reinterpret_cast<const void *>(addr), len);
}

int probe_user_writable(std::uint64_t addr, std::size_t len) noexcept
{
	if (!len)
		return 0;
	if (!plausible(addr, len))
		return EFAULT;
	if (guard_ready() && cached(addr, len))
		return guarded(addr, nullptr, len);
	// Read what is there and write the same bytes back: proves both
	// without changing anything.
	char stack[512];
	std::size_t done = 0;
	while (done < len) {
		std::size_t n = std::min(len - done, sizeof(stack));
		if (int e = copy_from_user(stack, addr + done, n))
			return e;
		if (int e = copy_to_user_slow(addr + done, stack, n))
			return e;
		done += n;
	}
	remember(addr, len);
	return 0;
}

} // namespace uabi::legacy
