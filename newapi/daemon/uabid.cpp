// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid: hosts the userspace build of the object core for the processes of
// a user (docs/daemon.md).  One unix SOCK_SEQPACKET socket, one context per
// connection, one thread: every command runs to completion without waiting
// (the core never sleeps), so a single epoll loop serves everyone in turn.
#include "uabid.hpp"

#include <uabi/cm_wire.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace uabid {

// ----------------------------------------------------------------- files

// Opens (creating, mode 0600) a file of the daemon's own in its directory,
// which may be shared: O_NOFOLLOW, so a planted symlink is refused (ELOOP),
// and what was opened must be a regular file owned by this uid with one
// link (a hard link to someone else's file is refused too).  -1 and errno.
int open_own_file(const char *path, int flags)
{
	int fd = ::open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return -1;
	struct stat st;
	if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
	    st.st_nlink != 1) {
		::close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

Log g_log;

// ------------------------------------------------------------------ setup

int Daemon::take_lock()
{
	lock_fd_ = open_own_file(paths_.lock.c_str(), O_RDWR);
	if (lock_fd_ < 0) {
		LOG("cannot open %s: %s", paths_.lock.c_str(), std::strerror(errno));
		return 1;
	}
	// A daemon that is exiting holds it a moment longer.
	for (int waited = 0;; waited += 10) {
		if (::flock(lock_fd_, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			LOG("cannot lock %s: %s", paths_.lock.c_str(), std::strerror(errno));
			return 1;
		}
		if (waited >= 5000) {
			LOG("another uabid serves %s", paths_.socket.c_str());
			return 2;
		}
		timespec ts{0, 10000000};
		nanosleep(&ts, nullptr);
	}
	return 0;
}

int Daemon::bind_socket()
{
	listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd_ < 0) {
		LOG("socket: %s", std::strerror(errno));
		return 1;
	}
	// We hold the lock, so a socket file already there is a dead daemon's.
	// Bind under a temporary name and rename it over: a client sees either
	// the old socket or a listening new one, never a half-made one.
	std::string tmp = paths_.socket + "." + std::to_string(::getpid()) + ".tmp";
	bool via_tmp = tmp.size() < sizeof(sockaddr_un{}.sun_path);
	const std::string &where = via_tmp ? tmp : paths_.socket;
	::unlink(where.c_str());
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	std::memcpy(sa.sun_path, where.c_str(), where.size() + 1);
	// The socket is born with its mode (0666 shared, 0600 private): no
	// chmod by name afterwards, which would follow a symlink put there.
	mode_t old = ::umask(cfg_.shared ? 0111 : 0177);
	int r = ::bind(listen_fd_, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
	::umask(old);
	if (r < 0) {
		LOG("bind %s: %s", where.c_str(), std::strerror(errno));
		return 1;
	}
	if (::listen(listen_fd_, SOMAXCONN) < 0) {
		LOG("listen: %s", std::strerror(errno));
		::unlink(where.c_str());
		return 1;
	}
	if (via_tmp && ::rename(tmp.c_str(), paths_.socket.c_str()) < 0) {
		LOG("rename %s: %s", tmp.c_str(), std::strerror(errno));
		::unlink(tmp.c_str());
		return 1;
	}
	struct stat st;
	if (::stat(paths_.socket.c_str(), &st) == 0) {
		sock_dev_ = st.st_dev;
		sock_ino_ = st.st_ino;
	}
	return 0;
}

void Daemon::query_device()
{
	// A short-lived context of our own: DEVICE QUERY for name and GUID.
	uabi_context *ctx = uabi_user_open(nullptr);
	if (!ctx)
		return;
	uabi::Message m;
	uabi::Command c(UABI_OBJ_DEVICE, UABI_METHOD_QUERY, 0);
	uabi::OutAttr info = c.add_out<uabi_device_attr>(UABI_ATTR_DEVICE_INFO);
	uabi::OutAttr name = c.add_out(UABI_ATTR_DEVICE_NAME, 64);
	m.add(std::move(c));
	auto &raw = m.raw();
	if (uabi_user_execute(ctx, raw.data(), raw.size()) == 0) {
		uabi_device_attr a{};
		if (m.read(0, info, a))
			node_guid_ = a.node_guid;
		auto nb = m.out_bytes(0, name);
		std::memcpy(device_name_, nb.data(), std::min(nb.size(), sizeof(device_name_) - 1));
	}
	uabi_user_close(ctx);
}

int Daemon::setup()
{
	auto p = cfg_.socket.empty() ? resolve_paths() : paths_for_socket(cfg_.socket);
	if (!p) {
		std::fprintf(stderr, "uabid: bad socket path: %s\n", std::strerror(p.error()));
		return 1;
	}
	paths_ = *p;
	if (cfg_.socket.empty() || cfg_.socket == paths_.socket) {
		// the default directory is checked like the clients check it
		auto dflt = resolve_paths();
		if (dflt && dflt->socket == paths_.socket)
			paths_.private_dir = dflt->private_dir;
	}
	if (auto d = ensure_dir(paths_); !d) {
		std::fprintf(stderr, "uabid: directory %s: %s\n", paths_.dir.c_str(),
			     std::strerror(d.error()));
		return 1;
	}
	g_log.verbose = cfg_.verbose;
	g_log.open(paths_.log, cfg_.foreground);

	// Every connection and every event queue is an fd.
	rlimit rl;
	if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		::setrlimit(RLIMIT_NOFILE, &rl);
	}

	if (int r = take_lock()) {
		if (r == 2) {
			// Somebody serves the socket: that is what our caller wants.
			if (!cfg_.foreground)
				return -1;
			std::fprintf(stderr, "uabid: already running for %s\n",
				     paths_.socket.c_str());
		}
		return 1;
	}
	if (int rc = uabi_user_init()) {
		LOG("cannot initialise the core: %s", std::strerror(-rc));
		return 1;
	}
	query_device();
	if (bind_socket())
		return 1;

	buf_.resize(UABI_MAX_MSG_BYTES);
	spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
	started_ns_ = wire::now_ns(CLOCK_REALTIME);
	started_mono_ = wire::now_ns();
	idle_since_ = started_mono_;
	return 0;
}

void Daemon::teardown()
{
	// Give the socket path up first (if it is still ours), then the lock.
	struct stat st;
	if (listen_fd_ >= 0 && ::stat(paths_.socket.c_str(), &st) == 0 && st.st_dev == sock_dev_ &&
	    st.st_ino == sock_ino_)
		::unlink(paths_.socket.c_str());
	if (listen_fd_ >= 0)
		::close(listen_fd_);
	listen_fd_ = -1;
	std::vector<Conn *> all;
	for (auto &[fd, c] : conns_)
		all.push_back(c.get());
	for (Conn *c : all)
		drop(*c, nullptr);
	if (lock_fd_ >= 0)
		::close(lock_fd_);
	lock_fd_ = -1;
}

// ------------------------------------------------------------------- loop

int Daemon::run()
{
	// After daemonizing: this is the pid that serves.
	char pid[32];
	int len = std::snprintf(pid, sizeof(pid), "%d\n", int(::getpid()));
	if (::ftruncate(lock_fd_, 0) < 0 || ::pwrite(lock_fd_, pid, len, 0) < 0) {
		// the pid in the lock file is informative only
	}
	LOG("started: socket %s, %s, idle exit %us, max contexts %u, device %s",
	    paths_.socket.c_str(), cfg_.shared ? "shared (any uid)" : "private (own uid and root)",
	    cfg_.idle_exit_s, cfg_.max_contexts, device_name_[0] ? device_name_ : "?");
	epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	::sigprocmask(SIG_BLOCK, &set, nullptr);
	::signal(SIGPIPE, SIG_IGN);
	signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (epoll_fd_ < 0 || signal_fd_ < 0) {
		LOG("epoll/signalfd: %s", std::strerror(errno));
		return 1;
	}
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = listen_fd_;
	::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
	ev.data.fd = signal_fd_;
	::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, signal_fd_, &ev);
	// RoCE devices (UABI_LINKS) and the address monitor.
	monitor_open();
	links_sync();
	cm_open();

	epoll_event events[64];
	// After a request, poll a moment for the next one (the client that
	// got its reply often sends again at once) rather than sleep.  While
	// polling, the request slots are looked at between epoll_wait(0)s for
	// a few microseconds at a time: a slot request is served without any
	// system call on either side.
	std::uint64_t spin_until = 0;
	std::uint64_t last_epoll = 0;
	bool spinning = false;
	set_polling(true);
	while (!stop_) {
		int timeout = -1;
		std::uint64_t now = wire::now_ns();
		if (spinning && now >= spin_until) {
			cfg_.spin.result(false);
			spinning = false;
		}
		const std::uint64_t idle_wait = expire_idle(now);
		if (spinning) {
			timeout = 0;
		} else if (idle_wait != UINT64_MAX) {
			timeout = int(idle_wait / 1000000) + 1;
		} else if (conns_.empty() && links_.empty() && cfg_.idle_exit_s) {
			std::uint64_t deadline = idle_since_ + cfg_.idle_exit_s * 1000000000ull;
			if (now >= deadline) {
				LOG("no clients for %us: exiting", cfg_.idle_exit_s);
				break;
			}
			timeout = int((deadline - now) / 1000000) + 1;
		}
		bool served = false;
		if (timeout != 0) {
			// About to sleep: from now on a client rings the doorbell.
			// Look at every slot once more after saying so, or a request
			// published just before would wait for the next wake-up.
			set_polling(false);
			wire::full_fence();
			if (serve_slots()) {
				set_polling(true);
				served = true;
				timeout = 0;
			}
		}
		// Polling with slots: epoll_wait(0) every 4 us at most, so that
		// a slot request right after the last one finds us at the slots,
		// not in a system call.
		int n = 0;
		if (timeout != 0 || slotted_.empty() || now - last_epoll >= 4000) {
			n = ::epoll_wait(epoll_fd_, events, 64, timeout);
			last_epoll = wire::now_ns();
		}
		if (timeout != 0)
			set_polling(true);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			LOG("epoll_wait: %s", std::strerror(errno));
			return 1;
		}
		for (int i = 0; i < n && !stop_; i++) {
			int fd = events[i].data.fd;
			if (fd == listen_fd_) {
				accept_some();
			} else if (fd == signal_fd_) {
				signalfd_siginfo si;
				while (::read(signal_fd_, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGHUP) {
						g_log.reopen();
						LOG("log reopened");
						continue;
					}
					LOG("signal %u: exiting", si.ssi_signo);
					stop_ = true;
				}
			} else if (auto it = conns_.find(fd); it != conns_.end()) {
				on_readable(*it->second);
			} else if (link_fds_.count(fd)) {
				on_link_readable(fd);
			} else if (fd == nl_fd_) {
				on_monitor();
			} else if (fd == cm_timer_fd_) {
				std::uint64_t v;
				if (::read(fd, &v, sizeof(v)) == sizeof(v))
					uabi_cm_wire_timeout();
			} else if (auto b = doorbells_.find(fd); b != doorbells_.end()) {
				std::uint64_t v;
				if (::read(fd, &v, sizeof(v)) < 0) {
					// EAGAIN: already read
				}
			}
		}
		// Slots after sockets: each pass serves at most one request of
		// each slot and at most a turn of each socket (on_readable).
		if (!stop_ && serve_slots())
			served = true;
		if (spinning && !served && n == 0) {
			// Poll the slots alone a few microseconds before the next
			// epoll_wait(0).
			const std::uint64_t until = wire::now_ns() + 4000;
			for (unsigned k = 0; !slotted_.empty(); k++) {
				if (serve_slots()) {
					served = true;
					break;
				}
				if ((k & 15) == 15 && wire::now_ns() >= until)
					break;
				wire::cpu_relax();
			}
		}
		const bool caught = n > 0 || served;
		if (spinning && caught) {
			cfg_.spin.result(true);
			spinning = false;
		}
		if (caught && !spinning && !conns_.empty() && cfg_.spin.should_spin()) {
			spinning = true;
			spin_until = wire::now_ns() + cfg_.spin.budget_us() * 1000ull;
		} else if (spinning) {
			wire::cpu_relax();
		}
	}
	set_polling(false);
	return 0;
}

// ------------------------------------------------------------------- main

void usage(FILE *f)
{
	std::fprintf(
		f,
		"usage: uabid [--foreground] [--socket PATH] [--idle-exit SECONDS]\n"
		"             [--max-contexts N] [--max-contexts-per-uid N] [--shared]\n"
		"             [--verbose] | --version\n"
		"Serves the rdma-uabi object core on a unix socket (docs/daemon.md).\n"
		"  --foreground     stay attached, log to stderr as well as the log file\n"
		"  --socket PATH    default: $UABI_SOCKET, $XDG_RUNTIME_DIR/uabi/uabid.sock,\n"
		"                   /tmp/uabi-<uid>/uabid.sock\n"
		"  --idle-exit S    exit after S seconds without clients, 0 = never\n"
		"                   (default $UABI_IDLE_EXIT or %u)\n"
		"  --max-contexts N contexts served at once (default $UABI_MAX_CONTEXTS or %u)\n"
		"  --max-contexts-per-uid N\n"
		"                   contexts one uid may hold (default\n"
		"                   $UABI_MAX_CONTEXTS_PER_UID, else a quarter of\n"
		"                   --max-contexts with --shared, all of them without)\n"
		"  --shared         accept every uid (socket 0666); listings stay per uid\n"
		"  --verbose        log every connection\n",
		kDefaultIdleExit, kDefaultMaxContexts);
}

bool parse_uint(const char *s, unsigned max, unsigned *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	unsigned long v = std::strtoul(s, &end, 10);
	if (*end || errno || v > max)
		return false;
	*out = unsigned(v);
	return true;
}

} // namespace uabid

using namespace uabid;


int main(int argc, char **argv)
{
	// Whatever our starter left open is not ours to keep.
	::close_range(3, ~0u, 0);

	Config cfg;
	const char *e;
	if ((e = std::getenv("UABI_IDLE_EXIT")) && *e &&
	    !parse_uint(e, 86400 * 365, &cfg.idle_exit_s))
		std::fprintf(stderr, "uabid: ignoring UABI_IDLE_EXIT=%s\n", e);
	if ((e = std::getenv("UABI_MAX_CONTEXTS")) && *e &&
	    (!parse_uint(e, 1u << 20, &cfg.max_contexts) || !cfg.max_contexts)) {
		std::fprintf(stderr, "uabid: ignoring UABI_MAX_CONTEXTS=%s\n", e);
		cfg.max_contexts = kDefaultMaxContexts;
	}
	if ((e = std::getenv("UABI_MAX_CONTEXTS_PER_UID")) && *e &&
	    (!parse_uint(e, 1u << 20, &cfg.max_contexts_per_uid) || !cfg.max_contexts_per_uid)) {
		std::fprintf(stderr, "uabid: ignoring UABI_MAX_CONTEXTS_PER_UID=%s\n", e);
		cfg.max_contexts_per_uid = 0;
	}
	wire::spin_from_env(cfg.spin, "UABI_DAEMON_SPIN_US", kDefaultSpinUs);
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
		if (a == "--foreground" || a == "-f") {
			cfg.foreground = true;
		} else if (a == "--shared") {
			cfg.shared = true;
		} else if (a == "--verbose" || a == "-v") {
			cfg.verbose = true;
		} else if (a == "--socket") {
			const char *v = value();
			if (!v) {
				usage(stderr);
				return 2;
			}
			cfg.socket = v;
		} else if (a == "--idle-exit") {
			if (!parse_uint(value(), 86400 * 365, &cfg.idle_exit_s)) {
				usage(stderr);
				return 2;
			}
		} else if (a == "--max-contexts") {
			if (!parse_uint(value(), 1u << 20, &cfg.max_contexts) ||
			    !cfg.max_contexts) {
				usage(stderr);
				return 2;
			}
		} else if (a == "--max-contexts-per-uid") {
			if (!parse_uint(value(), 1u << 20, &cfg.max_contexts_per_uid) ||
			    !cfg.max_contexts_per_uid) {
				usage(stderr);
				return 2;
			}
		} else if (a == "--help" || a == "-h") {
			usage(stdout);
			return 0;
		} else if (a == "--version" || a == "-V") {
			std::printf("uabid (rdma-uabi) %s\n", UABI_VERSION);
			return 0;
		} else {
			std::fprintf(stderr, "uabid: unknown option '%s'\n", a.c_str());
			usage(stderr);
			return 2;
		}
	}

	Daemon d(cfg);
	int r = d.setup();
	if (r < 0)
		return 0; // a daemon already serves this socket
	if (r) {
		std::fprintf(stderr, "uabid: failed to start (see the log)\n");
		return 1;
	}
	if (!cfg.foreground) {
		// Our caller waits for us to exit: the socket already listens, so
		// the child carries on alone (the lock and the socket are shared
		// with it across fork).
		pid_t pid = ::fork();
		if (pid < 0) {
			std::fprintf(stderr, "uabid: fork: %s\n", std::strerror(errno));
			d.teardown();
			return 1;
		}
		if (pid > 0)
			_exit(0);
		::setsid();
		if (::chdir("/") < 0) {
		}
		int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			::dup2(null, 0);
			::dup2(null, 1);
			::dup2(null, 2);
			::close(null);
		}
	}
	r = d.run();
	d.teardown();
	LOG("exited");
	return r;
}
