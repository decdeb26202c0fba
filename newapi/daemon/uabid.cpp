// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid: hosts the userspace build of the object core for the processes of
// a user (docs/daemon.md).  One unix SOCK_SEQPACKET socket, one context per
// connection, one thread: every command runs to completion without waiting
// (the core never sleeps), so a single epoll loop serves everyone in turn.
#include <uabi/host_user.h>
#include <uabi/transport_daemon.hpp>

#include "wire.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <signal.h>
#include <string>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

using namespace uabi::daemon;
namespace wire = uabi::daemon::wire;

constexpr unsigned kDefaultIdleExit = 60;
constexpr unsigned kDefaultMaxContexts = 1024;
// Most the daemon polls for the next request before sleeping (docs/daemon.md).
constexpr unsigned kDefaultSpinUs = 50;
// Connections that hold no context (admin, not yet greeted) on top.
constexpr unsigned kExtraConnections = 64;
// ... of which one uid may hold, beyond its contexts.
constexpr unsigned kExtraPerUid = 8;
// A connection without a context (not greeted yet, or admin) is dropped
// after this long without a message.
constexpr std::uint64_t kIdleNoContextNs = 10'000'000'000ull;
// Messages handled from one connection before looking at the others, and
// the time it may take (a message started is finished first).
constexpr int kBatch = 16;
constexpr std::uint64_t kTurnNs = 1'000'000;
constexpr off_t kLogRotateBytes = 4 << 20;

struct Config {
	bool foreground = false;
	bool shared = false;
	bool verbose = false;
	unsigned idle_exit_s = kDefaultIdleExit;
	unsigned max_contexts = kDefaultMaxContexts;
	// Contexts one uid may hold at once; 0: a quarter of max_contexts on a
	// --shared daemon (so that one user cannot take them all), else all.
	unsigned max_contexts_per_uid = 0;
	SpinGovernor spin;
	std::string socket;
};

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

// ------------------------------------------------------------------- log

// Appends lines to the log file (and stderr in the foreground).  Bursts
// are rate limited so that a hostile client cannot fill the disk.
class Log {
public:
	void open(const std::string &path, bool to_stderr)
	{
		path_ = path;
		stderr_ = to_stderr;
		reopen();
	}
	void reopen()
	{
		if (fd_ >= 0)
			::close(fd_);
		fd_ = -1;
		struct stat st;
		if (::lstat(path_.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size > kLogRotateBytes)
			::rename(path_.c_str(), (path_ + ".1").c_str());
		// Never through a symlink someone planted, never into a file that
		// is not our own regular file (docs/daemon.md, "Files").
		fd_ = open_own_file(path_.c_str(), O_WRONLY | O_APPEND);
	}
	int fd() const { return fd_; }

	// Two budgets: what clients send (hostile input can be endless) and
	// what happens to connections; each allows 50 lines at once, then 10
	// per second.
	enum Kind { Event, Input, Debug };
	__attribute__((format(printf, 3, 4))) void msg(Kind kind, const char *fmt, ...)
	{
		if (kind == Debug && !verbose)
			return;
		Bucket &b = buckets_[kind == Input];
		std::uint64_t now = wire::now_ns();
		b.tokens += double(now - b.last_ns) * 10e-9;
		b.last_ns = now;
		if (b.tokens > 50)
			b.tokens = 50;
		if (b.tokens < 1) {
			suppressed_++;
			return;
		}
		b.tokens -= 1;
		char line[1024];
		timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		struct tm tm;
		gmtime_r(&ts.tv_sec, &tm);
		int n = std::snprintf(line, sizeof(line),
				      "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ uabid[%d]: ",
				      tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				      tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, int(::getpid()));
		if (suppressed_) {
			n += std::snprintf(line + n, sizeof(line) - n,
					   "(%" PRIu64 " lines suppressed) ", suppressed_);
			suppressed_ = 0;
		}
		va_list ap;
		va_start(ap, fmt);
		int m = std::vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
		va_end(ap);
		n = std::min<int>(n + std::max(m, 0), int(sizeof(line)) - 2);
		line[n++] = '\n';
		if (fd_ >= 0 && ::write(fd_, line, n) < 0) {
			// nowhere else to report it
		}
		if (stderr_ && ::write(2, line, n) < 0) {
		}
	}

	bool verbose = false;

private:
	std::string path_;
	int fd_ = -1;
	bool stderr_ = false;
	struct Bucket {
		double tokens = 50;
		std::uint64_t last_ns = 0;
	} buckets_[2];
	std::uint64_t suppressed_ = 0;
};

Log g_log;
#define LOG(...) g_log.msg(Log::Event, __VA_ARGS__)
#define LOG_INPUT(...) g_log.msg(Log::Input, __VA_ARGS__)
#define DEBUG(...) g_log.msg(Log::Debug, __VA_ARGS__)

// ----------------------------------------------------------- connections

struct Conn {
	enum Kind { New, Context, Admin };
	int fd = -1;
	std::uint32_t id = 0;
	ucred cred{};
	Kind kind = New;
	uabi_context *ctx = nullptr;
	std::uint64_t connected_ns = 0; // realtime
	std::uint64_t last_mono = 0;	 // the last message (or the accept)
	std::uint64_t requests = 0;
};

// One fd attribute of the message being executed.
struct FdSlot {
	std::size_t attr_off;
	bool output;
	std::int32_t orig; // the client's payload
};

class Daemon {
public:
	explicit Daemon(Config cfg) : cfg_(std::move(cfg)) {}
	int setup(); // before daemonizing: lock, socket
	int run();   // the loop
	void teardown();

private:
	int take_lock();
	int bind_socket();
	void query_device();
	void accept_some();
	void reject(int fd, int err, const ucred &cr, const char *why);
	void on_readable(Conn &c);
	bool handle(Conn &c, std::size_t n, std::vector<int> &fds, int mflags);
	bool exec_uabi(Conn &c, std::size_t n, std::vector<int> &fds);
	bool handle_admin(Conn &c, std::size_t n);
	bool open_context(Conn &c);
	void close_context(Conn &c);
	unsigned per_uid_limit() const;
	bool send_reply(Conn &c, const void *buf, std::size_t len, const int *fds = nullptr,
			std::size_t nfds = 0);
	bool error_reply(Conn &c, std::uint32_t magic, int err);
	bool admin_reply(Conn &c, std::uint16_t op, int status, const void *payload,
			 std::size_t len);
	// Closes a connection (and its context); refusal: answer a HELLO first.
	void drop(Conn &c, const char *why, int refusal = 0);
	bool visible(const Conn &viewer, const Conn &c) const;
	// Drops connections without a context idle for kIdleNoContextNs;
	// returns the time until the next one is due (UINT64_MAX: none).
	std::uint64_t expire_idle(std::uint64_t now);
	void counters_of(uabi_context *ctx, std::uint32_t out[16]);
	std::vector<uabi_object_info> objects_of(uabi_context *ctx);
	bool do_status(Conn &c);
	bool do_objects(Conn &c, std::size_t n);

	Config cfg_;
	Paths paths_;
	int lock_fd_ = -1;
	int listen_fd_ = -1;
	int epoll_fd_ = -1;
	int signal_fd_ = -1;
	int spare_fd_ = -1;
	dev_t sock_dev_ = 0;
	ino_t sock_ino_ = 0;
	std::unordered_map<int, std::unique_ptr<Conn>> conns_; // by fd
	std::map<std::uint32_t, Conn *> by_id_;
	std::uint32_t next_id_ = 1;
	unsigned contexts_ = 0;
	std::unordered_map<uid_t, unsigned> uid_contexts_; // live contexts per uid
	std::unordered_map<uid_t, unsigned> uid_conns_;	   // connections per uid
	std::uint64_t next_scan_ = UINT64_MAX;		   // expire_idle() due
	std::vector<std::byte> buf_;
	std::vector<FdSlot> slots_;
	std::vector<int> out_fds_;
	std::uint64_t started_ns_ = 0; // realtime
	std::uint64_t started_mono_ = 0;
	std::uint64_t idle_since_ = 0; // monotonic, when the last client left
	std::uint64_t requests_ = 0;
	bool stop_ = false;
	char device_name_[64] = {};
	std::uint64_t node_guid_ = 0;
};

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

// ------------------------------------------------------------ accepting

bool allowed(const Config &cfg, const ucred &cr)
{
	return cfg.shared || cr.uid == ::geteuid() || cr.uid == 0;
}

// Sends a refusal as the answer to the client's HELLO and closes.  A unix
// socket closed with unread data resets its peer (ECONNRESET, reported
// before anything queued), so stop the peer from sending first, then drop
// what it sent: the refusal stays readable.
void refuse(int fd, int err)
{
	AdmHdr h{kAdmMagic, sizeof(AdmHdr), kProtoVersion, kOpHello, err, 0, 0};
	(void)wire::send_fds(fd, &h, sizeof(h), nullptr, 0, MSG_DONTWAIT);
	::shutdown(fd, SHUT_RDWR);
	std::vector<int> fds;
	char b[64];
	for (int i = 0; i < 64; i++) {
		ssize_t n = wire::recv_fds(fd, b, sizeof(b), fds, MSG_DONTWAIT, nullptr);
		wire::close_all(fds);
		if (n <= 0)
			break;
	}
	::close(fd);
}

void Daemon::reject(int fd, int err, const ucred &cr, const char *why)
{
	LOG("refused pid %d uid %u: %s", int(cr.pid), unsigned(cr.uid), why);
	refuse(fd, err);
}

void Daemon::accept_some()
{
	const std::size_t max_conns = std::size_t(cfg_.max_contexts) + kExtraConnections;
	for (int k = 0; k < 64; k++) {
		int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				// Out of fds: use the spare one to tell the client.
				if (spare_fd_ >= 0)
					::close(spare_fd_);
				spare_fd_ = -1;
				fd = ::accept4(listen_fd_, nullptr, nullptr,
					       SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd >= 0)
					reject(fd, -EMFILE, ucred{},
					       "daemon out of file descriptors");
				spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
				return;
			}
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return; // EAGAIN or worse: back to epoll
		}
		ucred cr{};
		socklen_t len = sizeof(cr);
		if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			reject(fd, -EACCES, cr, "no peer credentials");
			continue;
		}
		if (!allowed(cfg_, cr)) {
			reject(fd, -EACCES, cr, "uid not allowed on this daemon");
			continue;
		}
		if (conns_.size() >= max_conns) {
			reject(fd, -EUSERS, cr, "too many connections");
			continue;
		}
		// Counted from the accept, greeted or not: connections that
		// never say hello cannot lock other users out.
		if (uid_conns_[cr.uid] >= per_uid_limit() + kExtraPerUid) {
			reject(fd, -EUSERS, cr, "too many connections of this uid");
			continue;
		}
		// Room for one maximal reply, unread (the default is smaller).
		int sz = 2 * int(UABI_MAX_MSG_BYTES);
		if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
			::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		auto c = std::make_unique<Conn>();
		c->fd = fd;
		c->id = next_id_++;
		if (!next_id_)
			next_id_ = 1;
		c->cred = cr;
		c->connected_ns = wire::now_ns(CLOCK_REALTIME);
		c->last_mono = wire::now_ns();
		epoll_event ev{};
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
			reject(fd, -ENOMEM, cr, "epoll_ctl failed");
			continue;
		}
		DEBUG("connection %u: pid %d uid %u", c->id, int(cr.pid), unsigned(cr.uid));
		uid_conns_[cr.uid]++;
		next_scan_ = std::min(next_scan_, c->last_mono + kIdleNoContextNs);
		by_id_[c->id] = c.get();
		conns_[fd] = std::move(c);
	}
}

void Daemon::drop(Conn &c, const char *why, int refusal)
{
	if (why)
		LOG("connection %u (pid %d uid %u) dropped: %s", c.id, int(c.cred.pid),
		    unsigned(c.cred.uid), why);
	else
		DEBUG("connection %u closed", c.id);
	::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
	if (refusal)
		refuse(c.fd, refusal);
	else
		::close(c.fd);
	close_context(c);
	by_id_.erase(c.id);
	if (auto it = uid_conns_.find(c.cred.uid); it != uid_conns_.end() && --it->second == 0)
		uid_conns_.erase(it);
	int fd = c.fd;
	conns_.erase(fd); // frees c
	if (conns_.empty())
		idle_since_ = wire::now_ns();
}

std::uint64_t Daemon::expire_idle(std::uint64_t now)
{
	// At most one scan a second (the loop may spin): a connection goes
	// within a second of its time.
	if (now < next_scan_)
		return next_scan_ == UINT64_MAX ? UINT64_MAX : next_scan_ - now;
	std::uint64_t next = UINT64_MAX;
	std::vector<Conn *> late;
	for (auto &[fd, c] : conns_) {
		if (c->kind == Conn::Context)
			continue;
		std::uint64_t due = c->last_mono + kIdleNoContextNs;
		if (now >= due)
			late.push_back(c.get());
		else
			next = std::min(next, due - now);
	}
	for (Conn *c : late)
		drop(*c, c->kind == Conn::New ? "no hello in time" : "idle admin connection");
	if (next != UINT64_MAX)
		next = std::max<std::uint64_t>(next, 1'000'000'000ull);
	next_scan_ = next == UINT64_MAX ? UINT64_MAX : now + next;
	return next;
}

// ------------------------------------------------------------- requests

bool Daemon::send_reply(Conn &c, const void *buf, std::size_t len, const int *fds, std::size_t nfds)
{
	ssize_t r = wire::send_fds(c.fd, buf, len, fds, nfds, MSG_DONTWAIT);
	if (r == ssize_t(len))
		return true;
	// A client that does not read its replies is not waited for.
	drop(c, r == -EAGAIN			  ? "reply not sent: client is not reading"
		: r == -EPIPE || r == -ECONNRESET ? nullptr
						  : "reply not sent");
	return false;
}

bool Daemon::error_reply(Conn &c, std::uint32_t magic, int err)
{
	if (magic == kAdmMagic) {
		AdmHdr h{kAdmMagic, sizeof(AdmHdr), kProtoVersion, 0, err, 0, 0};
		return send_reply(c, &h, sizeof(h));
	}
	uabi_msg_hdr h{};
	h.magic = UABI_MSG_MAGIC;
	h.length = sizeof(h);
	h.abi_version = UABI_ABI_VERSION;
	h.status = err;
	return send_reply(c, &h, sizeof(h));
}

bool Daemon::admin_reply(Conn &c, std::uint16_t op, int status, const void *payload,
			 std::size_t len)
{
	AdmHdr h{kAdmMagic, std::uint32_t(sizeof(AdmHdr) + len), kProtoVersion, op, status, 0, 0};
	std::memcpy(buf_.data(), &h, sizeof(h));
	if (len && payload != buf_.data() + sizeof(h))
		std::memmove(buf_.data() + sizeof(h), payload, len);
	return send_reply(c, buf_.data(), sizeof(h) + len);
}

void Daemon::on_readable(Conn &c)
{
	std::vector<int> fds;
	const std::uint64_t start = wire::now_ns();
	c.last_mono = start;
	for (int i = 0; i < kBatch && (i == 0 || wire::now_ns() - start < kTurnNs); i++) {
		int mflags = 0;
		fds.clear();
		ssize_t n =
			wire::recv_fds(c.fd, buf_.data(), buf_.size(), fds, MSG_DONTWAIT, &mflags);
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			wire::close_all(fds);
			drop(c, n == 0 || n == -ECONNRESET ? nullptr : "receive failed");
			return;
		}
		if (!handle(c, std::size_t(n), fds, mflags))
			return; // dropped
	}
}

// Returns false when c was dropped.
bool Daemon::handle(Conn &c, std::size_t n, std::vector<int> &fds, int mflags)
{
	std::uint32_t magic = 0;
	if (n >= sizeof(magic))
		std::memcpy(&magic, buf_.data(), sizeof(magic));
	if (mflags & MSG_CTRUNC) {
		wire::close_all(fds);
		LOG_INPUT("connection %u: more than %u fds in one message", c.id, kMaxFds);
		return error_reply(c, magic, -ETOOMANYREFS);
	}
	if (mflags & MSG_TRUNC) {
		wire::close_all(fds);
		LOG_INPUT("connection %u: message larger than %u bytes", c.id, UABI_MAX_MSG_BYTES);
		return error_reply(c, magic, -EINVAL);
	}
	if (magic == kAdmMagic) {
		wire::close_all(fds);
		return handle_admin(c, n);
	}
	if (n < sizeof(uabi_msg_hdr)) {
		wire::close_all(fds);
		DEBUG("connection %u: %zu-byte message", c.id, n);
		return error_reply(c, UABI_MSG_MAGIC, -EINVAL);
	}
	if (c.kind == Conn::New && !open_context(c)) {
		wire::close_all(fds);
		return false;
	}
	if (c.kind != Conn::Context) {
		wire::close_all(fds);
		return error_reply(c, UABI_MSG_MAGIC, -EINVAL);
	}
	return exec_uabi(c, n, fds);
}

unsigned Daemon::per_uid_limit() const
{
	if (cfg_.max_contexts_per_uid)
		return cfg_.max_contexts_per_uid;
	return cfg_.shared ? std::max(1u, cfg_.max_contexts / 4) : cfg_.max_contexts;
}

bool Daemon::open_context(Conn &c)
{
	int err = 0;
	auto it = uid_contexts_.find(c.cred.uid);
	unsigned mine = it == uid_contexts_.end() ? 0 : it->second;
	if (contexts_ >= cfg_.max_contexts) {
		LOG("connection %u (pid %d uid %u): context limit %u reached", c.id,
		    int(c.cred.pid), unsigned(c.cred.uid), cfg_.max_contexts);
		err = -EUSERS;
	} else if (mine >= per_uid_limit()) {
		LOG("connection %u (pid %d uid %u): per-uid context limit %u reached", c.id,
		    int(c.cred.pid), unsigned(c.cred.uid), per_uid_limit());
		err = -EUSERS;
	} else {
		uabi_user_peer peer{c.cred.pid, c.cred.uid, c.cred.gid};
		c.ctx = uabi_user_open(&peer);
		if (!c.ctx)
			err = -errno;
	}
	if (err) {
		drop(c, nullptr, err);
		return false;
	}
	c.kind = Conn::Context;
	contexts_++;
	uid_contexts_[c.cred.uid]++;
	return true;
}

// Exactly what a kernel release() does: everything the context owns is
// destroyed, its XRC registrations dropped.
void Daemon::close_context(Conn &c)
{
	if (!c.ctx)
		return;
	uabi_user_close(c.ctx);
	c.ctx = nullptr;
	contexts_--;
	auto it = uid_contexts_.find(c.cred.uid);
	if (it != uid_contexts_.end() && --it->second == 0)
		uid_contexts_.erase(it);
}

bool Daemon::exec_uabi(Conn &c, std::size_t n, std::vector<int> &fds)
{
	std::byte *p = buf_.data();
	slots_.clear();
	wire::walk(
		p, n, [](std::size_t, std::size_t) {},
		[&](std::size_t, std::size_t aoff, std::uint16_t flags) {
			std::int32_t v = wire::get_s32(p, wire::payload_of(aoff));
			slots_.push_back({aoff, (flags & UABI_ATTR_F_OUTPUT) != 0, v});
		});

	// Inputs: each non-negative fd value stands for the next fd received.
	std::size_t want = 0;
	for (const FdSlot &s : slots_)
		want += !s.output && s.orig >= 0;
	if (want != fds.size()) {
		LOG_INPUT("connection %u: %zu fds for %zu fd attributes", c.id, fds.size(), want);
		wire::close_all(fds);
		uabi_msg_hdr h;
		std::memcpy(&h, p, sizeof(h));
		h.status = -EBADF;
		h.executed = 0;
		h.failed_index = 0;
		std::memcpy(p, &h, sizeof(h));
		return send_reply(c, p, n);
	}
	std::size_t k = 0;
	for (const FdSlot &s : slots_) {
		if (s.output) {
			// Only the core may put an fd here: start from -1, which it
			// never writes, so a value a client planted is never sent.
			wire::put_s32(p, wire::payload_of(s.attr_off), -1);
		} else if (s.orig >= 0) {
			wire::put_s32(p, wire::payload_of(s.attr_off), fds[k++]);
		}
	}

	uabi_user_execute(c.ctx, p, n);
	c.requests++;
	requests_++;
	wire::close_all(fds);

	uabi_msg_hdr h;
	std::memcpy(&h, p, sizeof(h));
	const bool rolled_back = (h.flags & UABI_MSG_F_ALL_OR_NOTHING) && h.status != 0;
	out_fds_.clear();
	for (const FdSlot &s : slots_) {
		std::size_t off = wire::payload_of(s.attr_off);
		if (!s.output) {
			wire::put_s32(p, off, s.orig); // our fd numbers are not the client's
			continue;
		}
		std::int32_t v = wire::get_s32(p, off);
		if (v == -1) {
			wire::put_s32(p, off, s.orig); // untouched by the core
			continue;
		}
		// Written by the core: an event queue fd of this context, unless
		// the object is already gone again (rolled back, destroyed later
		// in the same chain).
		if (rolled_back || v < 0 || ::fcntl(v, F_GETFD) < 0 || out_fds_.size() >= kMaxFds) {
			wire::put_s32(p, off, -1);
			continue;
		}
		out_fds_.push_back(v); // the client receives its own copy
	}
	return send_reply(c, p, n, out_fds_.data(), out_fds_.size());
}

// ------------------------------------------------------------------ admin

bool Daemon::visible(const Conn &viewer, const Conn &c) const
{
	return viewer.cred.uid == 0 || viewer.cred.uid == c.cred.uid;
}

void Daemon::counters_of(uabi_context *ctx, std::uint32_t out[16])
{
	// The core's public counters, asked like any client would.
	struct {
		uabi_msg_hdr mh;
		uabi_cmd_hdr ch;
		uabi_attr a;
		uabi_counters c;
	} m{};
	static_assert(sizeof(m) == sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr) + sizeof(uabi_attr) +
					   sizeof(uabi_counters));
	m.mh.magic = UABI_MSG_MAGIC;
	m.mh.length = sizeof(m);
	m.mh.abi_version = UABI_ABI_VERSION;
	m.mh.count = 1;
	m.ch.length = sizeof(m) - sizeof(m.mh);
	m.ch.object = UABI_OBJ_DEVICE;
	m.ch.method = UABI_DEVICE_COUNTERS;
	m.ch.num_attrs = 1;
	m.a.id = UABI_ATTR_DEVICE_COUNTERS;
	m.a.flags = UABI_ATTR_F_MANDATORY | UABI_ATTR_F_OUTPUT;
	m.a.len = sizeof(uabi_counters);
	std::memset(out, 0, 16 * sizeof(std::uint32_t));
	if (uabi_user_execute(ctx, &m, sizeof(m)) == 0)
		std::memcpy(out, m.c.context, 16 * sizeof(std::uint32_t));
}

// The core's listing of one context (DEVICE / LIST_OBJECTS), asked like
// any client would, a page at a time.
std::vector<uabi_object_info> Daemon::objects_of(uabi_context *ctx)
{
	constexpr std::uint32_t kPage = 64;
	struct Msg {
		uabi_msg_hdr mh;
		uabi_cmd_hdr ch;
		uabi_attr aa;
		uabi_object_cursor after;
		uabi_attr ao;
		struct {
			std::uint32_t count, more;
		} list; // struct uabi_object_list, whose entries follow
		uabi_object_info entries[kPage];
	};
	static_assert(sizeof(Msg::list) == sizeof(uabi_object_list));
	static_assert(sizeof(Msg) == sizeof(uabi_msg_hdr) + sizeof(uabi_cmd_hdr) + 2 * sizeof(uabi_attr) +
					     sizeof(uabi_object_cursor) + sizeof(uabi_object_list) +
					     kPage * sizeof(uabi_object_info));
	auto m = std::make_unique<Msg>();
	std::vector<uabi_object_info> v;
	uabi_object_cursor after{};
	for (;;) {
		std::memset(static_cast<void *>(m.get()), 0, sizeof(Msg));
		m->mh.magic = UABI_MSG_MAGIC;
		m->mh.length = sizeof(Msg);
		m->mh.abi_version = UABI_ABI_VERSION;
		m->mh.count = 1;
		m->ch.length = sizeof(Msg) - sizeof(m->mh);
		m->ch.object = UABI_OBJ_DEVICE;
		m->ch.method = UABI_DEVICE_LIST_OBJECTS;
		m->ch.num_attrs = 2;
		m->aa.id = UABI_ATTR_DEVICE_LIST_AFTER;
		m->aa.flags = UABI_ATTR_F_MANDATORY;
		m->aa.len = sizeof(after);
		m->after = after;
		m->ao.id = UABI_ATTR_DEVICE_OBJECTS;
		m->ao.flags = UABI_ATTR_F_MANDATORY | UABI_ATTR_F_OUTPUT;
		m->ao.len = sizeof(Msg) - offsetof(Msg, list);
		if (uabi_user_execute(ctx, m.get(), sizeof(Msg)) != 0)
			break;
		const std::uint32_t n = std::min(m->list.count, kPage);
		v.insert(v.end(), m->entries, m->entries + n);
		if (!m->list.more || !n)
			break;
		after = {m->entries[n - 1].context, m->entries[n - 1].handle};
	}
	return v;
}

bool Daemon::do_status(Conn &c)
{
	StatusReply s{};
	std::vector<CtxEntry> entries;
	s.daemon_pid = std::uint32_t(::getpid());
	s.daemon_uid = ::geteuid();
	s.started_ns = started_ns_;
	s.uptime_ns = wire::now_ns() - started_mono_;
	s.flags = (cfg_.shared ? kDaemonShared : 0) | (c.cred.uid != 0 ? kCallerFiltered : 0);
	s.idle_exit_s = cfg_.idle_exit_s;
	s.max_contexts = cfg_.max_contexts;
	s.num_types = UABI_OBJ_MAX_CORE;
	s.requests = requests_;
	s.node_guid = node_guid_;
	std::memcpy(s.device_name, device_name_, sizeof(s.device_name));
	std::snprintf(s.socket_path, sizeof(s.socket_path), "%s", paths_.socket.c_str());
	std::snprintf(s.log_path, sizeof(s.log_path), "%s", paths_.log.c_str());
	const std::size_t cap = (buf_.size() - sizeof(AdmHdr) - sizeof(s)) / sizeof(CtxEntry);
	for (auto &[id, o] : by_id_) {
		if (!visible(c, *o))
			continue;
		s.connections++;
		if (o->kind != Conn::Context)
			continue;
		s.contexts++;
		CtxEntry e{};
		e.conn_id = id;
		e.pid = o->cred.pid;
		e.uid = o->cred.uid;
		e.gid = o->cred.gid;
		e.connected_ns = o->connected_ns;
		e.requests = o->requests;
		counters_of(o->ctx, e.objects);
		for (int t = 0; t < 16; t++)
			s.objects[t] += e.objects[t];
		if (entries.size() < cap)
			entries.push_back(e);
	}
	s.num_entries = std::uint32_t(entries.size());
	std::byte *out = buf_.data() + sizeof(AdmHdr);
	std::memcpy(out, &s, sizeof(s));
	if (!entries.empty())
		std::memcpy(out + sizeof(s), entries.data(), entries.size() * sizeof(CtxEntry));
	return admin_reply(c, kOpStatus, 0, out, sizeof(s) + entries.size() * sizeof(CtxEntry));
}

bool Daemon::do_objects(Conn &c, std::size_t n)
{
	ObjectsRequest req{};
	if (n >= sizeof(AdmHdr) + sizeof(req))
		std::memcpy(&req, buf_.data() + sizeof(AdmHdr), sizeof(req));
	const std::size_t cap =
		(buf_.size() - sizeof(AdmHdr) - sizeof(ObjectsReply)) / sizeof(ObjEntry);
	std::vector<ObjEntry> out;
	bool more = false;
	for (auto it = by_id_.lower_bound(req.after_conn); it != by_id_.end() && !more; ++it) {
		const Conn &o = *it->second;
		if (!visible(c, o) || o.kind != Conn::Context)
			continue;
		// In handle order, as the core lists them.
		for (const uabi_object_info &obj : objects_of(o.ctx)) {
			ObjEntry e{};
			e.conn_id = o.id;
			e.pid = o.cred.pid;
			e.uid = o.cred.uid;
			e.type = obj.type;
			e.handle = obj.handle;
			e.qpn = obj.qpn;
			e.qp_type = obj.qp_type;
			e.qp_state = obj.qp_state;
			e.lkey = obj.lkey;
			e.rkey = obj.rkey;
			e.cqe = obj.cqe;
			e.cqn = obj.cqn;
			e.srqn = obj.srqn;
			e.srq_type = obj.srq_type;
			e.user_handle = obj.user_handle;
			e.addr = obj.addr;
			e.length = obj.length;
			if (e.conn_id == req.after_conn && e.handle <= req.after_handle)
				continue;
			if (out.size() == cap) {
				more = true;
				break;
			}
			out.push_back(e);
		}
	}
	ObjectsReply h{std::uint32_t(out.size()), more ? 1u : 0u};
	std::byte *dst = buf_.data() + sizeof(AdmHdr);
	std::memcpy(dst, &h, sizeof(h));
	if (!out.empty())
		std::memcpy(dst + sizeof(h), out.data(), out.size() * sizeof(ObjEntry));
	return admin_reply(c, kOpObjects, 0, dst, sizeof(h) + out.size() * sizeof(ObjEntry));
}

bool Daemon::handle_admin(Conn &c, std::size_t n)
{
	AdmHdr h{};
	if (n < sizeof(h))
		return error_reply(c, kAdmMagic, -EINVAL);
	std::memcpy(&h, buf_.data(), sizeof(h));
	if (h.length != n || h.reserved || h.status)
		return error_reply(c, kAdmMagic, -EINVAL);
	if (h.version != kProtoVersion)
		return error_reply(c, kAdmMagic, -EPROTONOSUPPORT);
	switch (h.op) {
	case kOpHello: {
		if (c.kind != Conn::New || (h.arg != kHelloContext && h.arg != kHelloAdmin))
			return admin_reply(c, kOpHello, -EINVAL, nullptr, 0);
		if (h.arg == kHelloContext) {
			if (!open_context(c))
				return false;
		} else {
			c.kind = Conn::Admin;
		}
		HelloReply r{};
		r.daemon_pid = std::uint32_t(::getpid());
		r.daemon_uid = ::geteuid();
		r.conn_id = c.id;
		r.flags = cfg_.shared ? kDaemonShared : 0;
		r.started_ns = started_ns_;
		r.max_contexts = cfg_.max_contexts;
		r.max_msg_bytes = UABI_MAX_MSG_BYTES;
		return admin_reply(c, kOpHello, 0, &r, sizeof(r));
	}
	case kOpStatus:
		return do_status(c);
	case kOpObjects:
		return do_objects(c, n);
	case kOpShutdown:
		if (c.cred.uid != ::geteuid() && c.cred.uid != 0)
			return admin_reply(c, kOpShutdown, -EPERM, nullptr, 0);
		LOG("shutdown requested by pid %d uid %u", int(c.cred.pid), unsigned(c.cred.uid));
		stop_ = true;
		return admin_reply(c, kOpShutdown, 0, nullptr, 0);
	case kOpClose:
		close_context(c);
		if (admin_reply(c, kOpClose, 0, nullptr, 0))
			drop(c, nullptr);
		return false;
	}
	return admin_reply(c, h.op, -EOPNOTSUPP, nullptr, 0);
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

	epoll_event events[64];
	// After a request, poll a moment for the next one (the client that
	// got its reply often sends again at once) rather than sleep.
	std::uint64_t spin_until = 0;
	bool spinning = false;
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
		} else if (conns_.empty() && cfg_.idle_exit_s) {
			std::uint64_t deadline = idle_since_ + cfg_.idle_exit_s * 1000000000ull;
			if (now >= deadline) {
				LOG("no clients for %us: exiting", cfg_.idle_exit_s);
				break;
			}
			timeout = int((deadline - now) / 1000000) + 1;
		}
		int n = ::epoll_wait(epoll_fd_, events, 64, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			LOG("epoll_wait: %s", std::strerror(errno));
			return 1;
		}
		if (spinning && n > 0) {
			cfg_.spin.result(true);
			spinning = false;
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
			}
		}
		if (n > 0 && !spinning && !conns_.empty() && cfg_.spin.should_spin()) {
			spinning = true;
			spin_until = wire::now_ns() + cfg_.spin.budget_us() * 1000ull;
		} else if (spinning) {
			wire::cpu_relax();
		}
	}
	return 0;
}

// ------------------------------------------------------------------- main

void usage(FILE *f)
{
	std::fprintf(
		f,
		"usage: uabid [--foreground] [--socket PATH] [--idle-exit SECONDS]\n"
		"             [--max-contexts N] [--max-contexts-per-uid N] [--shared]\n"
		"             [--verbose]\n"
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

} // namespace

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
		} else {
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
