// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The daemon backend: locating, starting and talking to uabid.
#include <uabi/transport_daemon.hpp>

#include "../daemon/wire.hpp"
#include "paths.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string_view>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace uabi {

namespace daemon {

namespace {

const char *env(const char *name)
{
	const char *v = std::getenv(name);
	return v && *v ? v : nullptr;
}

std::string dirname_of(const std::string &path)
{
	auto slash = path.rfind('/');
	if (slash == std::string::npos)
		return ".";
	if (slash == 0)
		return "/";
	return path.substr(0, slash);
}

bool executable(const std::string &path)
{
	struct stat st;
	return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
	       ::access(path.c_str(), X_OK) == 0;
}

void sleep_ms(int ms)
{
	timespec ts{ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

// Whether an error from connect() means "nobody is serving this socket".
bool no_daemon(int e)
{
	return e == ENOENT || e == ECONNREFUSED || e == ECONNRESET || e == EPIPE;
}

// Receives one reply with a deadline; returns its length or -errno.
ssize_t recv_reply(int fd, void *buf, std::size_t cap, int timeout_ms, std::vector<int> *fds)
{
	pollfd p{fd, POLLIN, 0};
	for (;;) {
		int r = ::poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		break;
	}
	std::vector<int> local;
	std::vector<int> &v = fds ? *fds : local;
	int mflags = 0;
	ssize_t n = wire::recv_fds(fd, buf, cap, v, MSG_DONTWAIT, &mflags);
	if (!fds)
		wire::close_all(local);
	if (n >= 0 && (mflags & MSG_TRUNC))
		return -EPROTO;
	return n;
}

} // namespace

// ------------------------------------------------------------------ paths

Result<Paths> paths_for_socket(const std::string &socket_in)
{
	std::string socket = socket_in;
	if (socket.empty())
		return make_error(EINVAL);
	if (socket[0] != '/') {
		char cwd[PATH_MAX];
		if (!::getcwd(cwd, sizeof(cwd)))
			return make_error(errno);
		socket = std::string(cwd) + "/" + socket;
	}
	if (socket.size() >= sizeof(sockaddr_un{}.sun_path))
		return make_error(ENAMETOOLONG);
	Paths p;
	p.socket = socket;
	p.dir = dirname_of(socket);
	p.lock = socket + ".lock";
	p.start_lock = socket + ".start";
	const char *log = env("UABI_DAEMON_LOG");
	p.log = log ? log : p.dir + "/uabid.log";
	return p;
}

Result<Paths> resolve_paths()
{
	if (const char *s = env("UABI_SOCKET"))
		return paths_for_socket(s);
	std::string dir;
	if (const char *x = env("XDG_RUNTIME_DIR"); x && x[0] == '/')
		dir = std::string(x) + "/uabi";
	else
		dir = "/tmp/uabi-" + std::to_string(::geteuid());
	auto p = paths_for_socket(dir + "/uabid.sock");
	if (p)
		p->private_dir = true;
	return p;
}

Result<void> ensure_dir(const Paths &p)
{
	if (::mkdir(p.dir.c_str(), 0700) == 0)
		return {};
	if (errno != EEXIST)
		return make_error(errno);
	struct stat st;
	if (::lstat(p.dir.c_str(), &st) < 0)
		return make_error(errno);
	if (!S_ISDIR(st.st_mode))
		return make_error(ENOTDIR);
	// A directory we picked in a shared place (/tmp) must be ours alone:
	// anyone else could have planted a socket or a symlink there.
	if (p.private_dir && (st.st_uid != ::geteuid() || (st.st_mode & 077)))
		return make_error(EPERM);
	return {};
}

Result<std::string> find_daemon_binary()
{
	if (const char *p = env("UABI_DAEMON_PATH")) {
		if (executable(p))
			return std::string(p);
		return make_error(ENOENT); // set, but wrong: say so, do not guess
	}
#ifdef UABI_DAEMON_BUILD_PATH
	// Only a copy running from its build tree uses the build tree's uabid:
	// an installed one never starts a binary from where it was built.
	if (paths::in_build_tree() && executable(UABI_DAEMON_BUILD_PATH))
		return std::string(UABI_DAEMON_BUILD_PATH);
#endif
	// The prefix this copy is installed in (found from where the library
	// or the executable lies, so a moved prefix works too).
	if (std::string prefix = paths::install_prefix(); !prefix.empty()) {
		std::string cand = paths::daemon_under(prefix);
		if (executable(cand))
			return cand;
	}
	// Next to the object this code is linked into (a shared library or the
	// executable), then next to the executable.
	Dl_info info{};
	if (::dladdr(reinterpret_cast<void *>(&find_daemon_binary), &info) && info.dli_fname) {
		std::string cand = dirname_of(info.dli_fname) + "/uabid";
		if (info.dli_fname[0] == '/' && executable(cand))
			return cand;
	}
	char exe[PATH_MAX];
	ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		std::string cand = dirname_of(exe) + "/uabid";
		if (executable(cand))
			return cand;
	}
	if (const char *path = std::getenv("PATH")) {
		std::string_view rest(path);
		while (!rest.empty()) {
			auto colon = rest.find(':');
			std::string_view d = rest.substr(0, colon);
			std::string cand = std::string(d.empty() ? "." : d) + "/uabid";
			if (executable(cand))
				return cand;
			if (colon == std::string_view::npos)
				break;
			rest.remove_prefix(colon + 1);
		}
	}
	return make_error(ENOENT);
}

// ------------------------------------------------------------- connecting

Connection::Connection(Connection &&o) noexcept : fd_(o.fd_), hello_(o.hello_)
{
	o.fd_ = -1;
}

Connection &Connection::operator=(Connection &&o) noexcept
{
	if (this != &o) {
		if (fd_ >= 0)
			::close(fd_);
		fd_ = o.fd_;
		hello_ = o.hello_;
		o.fd_ = -1;
	}
	return *this;
}

Connection::~Connection()
{
	if (fd_ >= 0)
		::close(fd_);
}

int Connection::release()
{
	int fd = fd_;
	fd_ = -1;
	return fd;
}

Result<std::vector<std::byte>> admin_call(int fd, AdmOp op, std::uint32_t arg, const void *payload,
					  std::size_t len, int timeout_ms, int send_fd,
					  std::vector<int> *fds)
{
	std::vector<std::byte> req(sizeof(AdmHdr) + len);
	AdmHdr h{kAdmMagic, std::uint32_t(req.size()), kProtoVersion, op, 0, arg, 0};
	std::memcpy(req.data(), &h, sizeof(h));
	if (len)
		std::memcpy(req.data() + sizeof(h), payload, len);
	ssize_t s = wire::send_fds(fd, req.data(), req.size(), send_fd >= 0 ? &send_fd : nullptr,
				   send_fd >= 0 ? 1 : 0, 0);
	// A daemon that refused us may have closed already; its refusal can
	// still be waiting in our receive queue.
	if (s < 0 && s != -EPIPE && s != -ECONNRESET)
		return make_error(int(-s));
	std::vector<std::byte> rep(UABI_MAX_MSG_BYTES);
	std::vector<int> got;
	ssize_t n = recv_reply(fd, rep.data(), rep.size(), s < 0 ? 0 : timeout_ms, &got);
	// The reply's fds are the caller's only when it succeeds.
	struct Closer {
		std::vector<int> &v;
		bool keep = false;
		~Closer()
		{
			if (!keep)
				wire::close_all(v);
		}
	} closer{got};
	if (n < 0)
		return make_error(n == -ETIMEDOUT && s < 0 ? int(-s) : int(-n));
	if (n == 0)
		return make_error(ECONNRESET);
	AdmHdr rh;
	if (std::size_t(n) < sizeof(rh))
		return make_error(EPROTO);
	std::memcpy(&rh, rep.data(), sizeof(rh));
	if (rh.magic != kAdmMagic || rh.length != std::size_t(n))
		return make_error(EPROTO);
	if (rh.status < 0)
		return make_error(rh.status);
	if (rh.op != op)
		return make_error(EPROTO);
	rep.resize(std::size_t(n));
	rep.erase(rep.begin(), rep.begin() + sizeof(rh));
	if (fds) {
		*fds = std::move(got);
		got.clear();
	}
	return rep;
}

Result<Connection> connect(const Paths &p, HelloKind kind, int import_fd, unsigned device)
{
	int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return make_error(errno);
	// Room for one maximal message (the default is below 256 KiB).
	int sz = 2 * int(UABI_MAX_MSG_BYTES);
	::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	sockaddr_un sa{};
	sa.sun_family = AF_UNIX;
	std::memcpy(sa.sun_path, p.socket.c_str(), p.socket.size() + 1);
	int r;
	do
		r = ::connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa));
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int e = errno;
		::close(fd);
		return make_error(e);
	}
	// Only a device other than uabi_sw0 is named (an older uabid takes
	// a hello without payload).
	HelloRequest req{device, 0};
	const bool named = kind == kHelloContext && device != 0;
	auto rep = admin_call(fd, kOpHello, kind, named ? &req : nullptr, named ? sizeof(req) : 0, 5000,
			      kind == kHelloImport ? import_fd : -1);
	if (!rep) {
		::close(fd);
		return make_error(rep.error());
	}
	HelloReply h{};
	if (rep->size() < sizeof(h)) {
		::close(fd);
		return make_error(EPROTO);
	}
	std::memcpy(&h, rep->data(), sizeof(h));
	return Connection(fd, h);
}

namespace {

// Holds an flock on a file for its lifetime.
class FileLock {
public:
	~FileLock()
	{
		if (fd_ >= 0)
			::close(fd_); // drops the lock
	}
	int lock(const std::string &path, int timeout_ms)
	{
		fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd_ < 0)
			return errno;
		for (int waited = 0;; waited += 5) {
			if (::flock(fd_, LOCK_EX | LOCK_NB) == 0)
				return 0;
			if (errno != EWOULDBLOCK && errno != EINTR)
				return errno;
			if (waited >= timeout_ms)
				return ETIMEDOUT;
			sleep_ms(5);
		}
	}

private:
	int fd_ = -1;
};

// Runs `uabid --socket S`, which returns once its socket listens (or a
// daemon already serves it).  0 or a positive errno.
int spawn_daemon(const Paths &p)
{
	auto bin = find_daemon_binary();
	if (!bin) {
		std::fprintf(stderr, "uabi: cannot start the daemon: uabid not found "
				     "(set UABI_DAEMON_PATH or put uabid on PATH)\n");
		return bin.error();
	}
	// The daemon must not inherit a preload meant for applications.
	std::vector<char *> envp;
	for (char **e = environ; e && *e; e++)
		if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
			envp.push_back(*e);
	envp.push_back(nullptr);
	std::string sock = p.socket;
	char arg0[] = "uabid";
	char arg1[] = "--socket";
	char *argv[] = {arg0, arg1, sock.data(), nullptr};

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&at);
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2})
		sigaddset(&dflt, s);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pid_t pid;
	int e = posix_spawn(&pid, bin->c_str(), &fa, &at, argv, envp.data());
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e) {
		std::fprintf(stderr, "uabi: cannot start %s: %s\n", bin->c_str(), std::strerror(e));
		return e;
	}
	int st = 0;
	pid_t w;
	do
		w = ::waitpid(pid, &st, 0);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return 0; // reaped elsewhere (SIGCHLD ignored): just try to connect
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		std::fprintf(stderr, "uabi: %s failed to start (see %s)\n", bin->c_str(),
			     p.log.c_str());
		return EIO;
	}
	return 0;
}

} // namespace

Result<Connection> connect_or_start(const Paths &p, HelloKind kind, unsigned device)
{
	int last = ECONNREFUSED;
	for (int attempt = 0; attempt < 5; attempt++) {
		auto c = connect(p, kind, -1, device);
		if (c || !no_daemon(c.error()))
			return c;
		last = c.error();
		if (attempt)
			sleep_ms(20 * attempt); // a daemon was exiting as we came
		if (auto d = ensure_dir(p); !d)
			return make_error(d.error());
		FileLock lk;
		if (int e = lk.lock(p.start_lock, 15000))
			return make_error(e);
		c = connect(p, kind, -1, device);
		if (c || !no_daemon(c.error()))
			return c;
		if (int e = spawn_daemon(p))
			return make_error(e);
	}
	return make_error(last);
}

// -------------------------------------------------------------- admin ops

Result<Status> query_status(const Connection &c)
{
	auto rep = admin_call(c.fd(), kOpStatus, 0, nullptr, 0);
	if (!rep)
		return make_error(rep.error());
	Status s{};
	if (rep->size() < sizeof(s.daemon))
		return make_error(EPROTO);
	std::memcpy(&s.daemon, rep->data(), sizeof(s.daemon));
	std::size_t n = (rep->size() - sizeof(s.daemon)) / sizeof(CtxEntry);
	n = std::min<std::size_t>(n, s.daemon.num_entries);
	s.contexts.resize(n);
	if (n)
		std::memcpy(s.contexts.data(), rep->data() + sizeof(s.daemon),
			    n * sizeof(CtxEntry));
	return s;
}

Result<std::vector<ObjEntry>> query_objects(const Connection &c)
{
	std::vector<ObjEntry> all;
	ObjectsRequest req{0, 0};
	for (int page = 0; page < 100000; page++) {
		auto rep = admin_call(c.fd(), kOpObjects, 0, &req, sizeof(req));
		if (!rep)
			return make_error(rep.error());
		ObjectsReply h{};
		if (rep->size() < sizeof(h))
			return make_error(EPROTO);
		std::memcpy(&h, rep->data(), sizeof(h));
		std::size_t n = std::min<std::size_t>(h.count,
						      (rep->size() - sizeof(h)) / sizeof(ObjEntry));
		std::size_t base = all.size();
		all.resize(base + n);
		if (n)
			std::memcpy(&all[base], rep->data() + sizeof(h), n * sizeof(ObjEntry));
		if (!h.more || !n)
			break;
		req.after_conn = all.back().conn_id;
		req.after_handle = all.back().handle;
	}
	return all;
}

Result<std::vector<LinkEntry>> query_links(const Connection &c)
{
	auto rep = admin_call(c.fd(), kOpLinks, 0, nullptr, 0);
	if (!rep)
		return make_error(rep.error());
	std::vector<LinkEntry> out(rep->size() / sizeof(LinkEntry));
	if (!out.empty())
		std::memcpy(out.data(), rep->data(), out.size() * sizeof(LinkEntry));
	return out;
}

namespace {

Result<void> link_op(const Connection &c, AdmOp op, const std::string &name, const std::string &netdev)
{
	LinkRequest r{};
	if (name.empty() || name.size() >= sizeof(r.name) || netdev.size() >= sizeof(r.netdev))
		return make_error(EINVAL);
	std::memcpy(r.name, name.data(), name.size());
	std::memcpy(r.netdev, netdev.data(), netdev.size());
	auto rep = admin_call(c.fd(), op, 0, &r, sizeof(r));
	if (!rep)
		return make_error(rep.error());
	return {};
}

} // namespace

Result<void> link_add(const Connection &c, const std::string &name, const std::string &netdev)
{
	if (netdev.empty())
		return make_error(EINVAL);
	return link_op(c, kOpLinkAdd, name, netdev);
}

Result<void> link_del(const Connection &c, const std::string &name)
{
	return link_op(c, kOpLinkDel, name, "");
}

Result<void> shutdown(Connection c, int timeout_ms)
{
	pid_t pid = pid_t(c.hello().daemon_pid);
	auto rep = admin_call(c.fd(), kOpShutdown, 0, nullptr, 0);
	if (!rep)
		return make_error(rep.error());
	for (int waited = 0; waited <= timeout_ms; waited += 10) {
		if (::kill(pid, 0) < 0 && errno == ESRCH)
			return {};
		// Our connection ends when the daemon has closed everything.
		std::byte b[64];
		std::vector<int> fds;
		ssize_t n = wire::recv_fds(c.fd(), b, sizeof(b), fds, MSG_DONTWAIT, nullptr);
		wire::close_all(fds);
		if (n == 0 || (n < 0 && n != -EAGAIN)) {
			// Socket closed: the pid may linger a moment as a zombie of
			// whoever started it; that is good enough.
			return {};
		}
		sleep_ms(10);
	}
	return make_error(ETIMEDOUT);
}

} // namespace daemon

// ------------------------------------------------------------ transport

namespace {

// Most a client polls for a reply before sleeping, in microseconds (the
// measurements behind it: docs/daemon.md).
constexpr unsigned kDefaultSpinUs = 50;
// How long an adaptive client polls in all for a request uabid has taken
// (execute_slot).
constexpr unsigned kTakenSpinUs = 1000;

// The fd the client put in an input fd attribute that is not open here: it
// travels as this value, which no host accepts (-EBADF, as fstat() or
// fget() of a closed fd answers); -1 keeps its meaning ("no file").
constexpr std::int32_t kBadFd = -EBADF;

} // namespace

Result<std::unique_ptr<DaemonTransport>> DaemonTransport::open(unsigned device)
{
	auto p = daemon::resolve_paths();
	if (!p)
		return make_error(p.error());
	const char *a = std::getenv("UABI_AUTOSTART");
	bool autostart = !(a && std::strcmp(a, "0") == 0);
	return open(*p, autostart, device);
}

Result<std::unique_ptr<DaemonTransport>> DaemonTransport::open(const daemon::Paths &p,
							       bool autostart, unsigned device)
{
	auto c = autostart ? daemon::connect_or_start(p, daemon::kHelloContext, device)
			   : daemon::connect(p, daemon::kHelloContext, -1, device);
	if (!c)
		return make_error(c.error());
	return std::unique_ptr<DaemonTransport>(new DaemonTransport(std::move(*c)));
}

Result<std::unique_ptr<DaemonTransport>> DaemonTransport::import(int fd)
{
	auto p = daemon::resolve_paths();
	if (!p)
		return make_error(p.error());
	// A context's fd is useless without its daemon: none is started.
	auto c = daemon::connect(*p, daemon::kHelloImport, fd);
	if (!c)
		return make_error(daemon::no_daemon(c.error()) ? EINVAL : c.error());
	auto t = std::unique_ptr<DaemonTransport>(new DaemonTransport(std::move(*c)));
	t->ctx_fd_ = fd; // the same file uabid answers kOpContextFd with
	return t;
}

Result<std::vector<std::string>> DaemonTransport::device_names()
{
	std::vector<std::string> names{"uabi_sw0"};
	auto p = daemon::resolve_paths();
	if (!p)
		return names;
	auto c = daemon::connect(*p, daemon::kHelloAdmin);
	if (!c)
		return names;
	auto l = daemon::query_links(*c);
	if (!l || l->empty())
		return names;
	names.clear();
	for (const daemon::LinkEntry &e : *l)
		names.emplace_back(e.name, strnlen(e.name, sizeof(e.name)));
	return names;
}

Result<int> DaemonTransport::wire_relay(std::uint16_t *port, int *steered)
{
	if (steered)
		*steered = -1;
	std::lock_guard<std::mutex> g(mu_);
	if (dead_)
		return make_error(ENOTCONN);
	std::vector<int> fds;
	auto r = daemon::admin_call(fd_, daemon::kOpWireRelay, 0, nullptr, 0, 5000, -1, &fds);
	daemon::RelayReply rep{};
	if (r && r->size() >= sizeof(rep))
		std::memcpy(&rep, r->data(), sizeof(rep));
	const std::size_t want = (rep.flags & daemon::kRelaySteered) ? 2 : 1;
	if (!r || fds.size() != want || r->size() < sizeof(rep)) {
		daemon::wire::close_all(fds);
		return make_error(r ? EPROTO : r.error());
	}
	*port = rep.port;
	if (want == 2 && steered)
		*steered = fds[1];
	else if (want == 2)
		::close(fds[1]);
	return fds[0];
}

int DaemonTransport::wire_bind(std::uint32_t qpn, bool on)
{
	std::lock_guard<std::mutex> g(mu_);
	if (dead_)
		return ENOTCONN;
	auto r = daemon::admin_call(fd_, on ? daemon::kOpWireBind : daemon::kOpWireUnbind, qpn, nullptr,
				    0);
	return r ? 0 : r.error();
}

int DaemonTransport::context_fd()
{
	std::lock_guard<std::mutex> g(mu_);
	if (ctx_fd_ >= 0)
		return ctx_fd_;
	if (dead_) {
		errno = ENOTCONN;
		return -1;
	}
	std::vector<int> fds;
	auto r = daemon::admin_call(fd_, daemon::kOpContextFd, 0, nullptr, 0, 5000, -1, &fds);
	if (!r || fds.size() != 1) {
		daemon::wire::close_all(fds);
		errno = r ? EPROTO : r.error();
		return -1;
	}
	ctx_fd_ = fds[0];
	return ctx_fd_;
}

DaemonTransport::DaemonTransport(daemon::Connection c)
    : hello_(c.hello()), owner_(::getpid())
{
	daemon::wire::spin_from_env(spin_, "UABI_SPIN_US", kDefaultSpinUs);
	fd_ = c.release();
	const char *e = std::getenv("UABI_DAEMON_SLOT");
	if (!(e && std::strcmp(e, "0") == 0))
		map_slot();
}

// Asks uabid for a request slot (docs/daemon.md, "Request slot").  Without
// one (an older uabid, no memory) every message takes the socket.
void DaemonTransport::map_slot()
{
	namespace w = daemon::wire;
	std::vector<int> fds;
	auto r = daemon::admin_call(fd_, daemon::kOpSlot, 0, nullptr, 0, 5000, -1, &fds);
	daemon::SlotReply sr{};
	if (r && r->size() >= sizeof(sr))
		std::memcpy(&sr, r->data(), sizeof(sr));
	struct stat st[2]{};
	if (!r || fds.size() != 3 || sr.slot_bytes != daemon::kSlotBytes ||
	    sr.data_off != daemon::kSlotDataOff || sr.page_bytes != daemon::kDaemonPageBytes ||
	    ::fstat(fds[0], &st[0]) < 0 || ::fstat(fds[2], &st[1]) < 0 ||
	    std::size_t(st[0].st_size) < daemon::kSlotBytes ||
	    std::size_t(st[1].st_size) < daemon::kDaemonPageBytes) {
		w::close_all(fds);
		return;
	}
	void *slot = ::mmap(nullptr, daemon::kSlotBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fds[0], 0);
	void *page = ::mmap(nullptr, daemon::kDaemonPageBytes, PROT_READ, MAP_SHARED, fds[2], 0);
	::close(fds[0]);
	::close(fds[2]);
	if (slot == MAP_FAILED || page == MAP_FAILED) {
		if (slot != MAP_FAILED)
			::munmap(slot, daemon::kSlotBytes);
		if (page != MAP_FAILED)
			::munmap(page, daemon::kDaemonPageBytes);
		::close(fds[1]);
		return;
	}
	slot_ = static_cast<daemon::SlotHdr *>(slot);
	page_ = static_cast<const daemon::DaemonPage *>(page);
	doorbell_ = fds[1];
	seq_ = w::load_acquire(&slot_->rep_seq);
}

void DaemonTransport::use_slot(bool on)
{
	std::lock_guard<std::mutex> g(mu_);
	slot_on_ = on;
}

DaemonTransport::~DaemonTransport()
{
	// Closing the context synchronously makes the end of a Context look
	// like close() of a kernel fd: when we return, its objects are gone.
	// A forked child holding a copy of the parent's socket must not close
	// the parent's context.
	if (fd_ >= 0 && !dead_ && ::getpid() == owner_)
		(void)daemon::admin_call(fd_, daemon::kOpClose, 0, nullptr, 0);
	if (fd_ >= 0)
		::close(fd_);
	if (ctx_fd_ >= 0)
		::close(ctx_fd_);
	for (auto &[h, fd] : evq_fds_)
		::close(fd);
	if (slot_)
		::munmap(slot_, daemon::kSlotBytes);
	if (page_)
		::munmap(const_cast<daemon::DaemonPage *>(page_), daemon::kDaemonPageBytes);
	if (doorbell_ >= 0)
		::close(doorbell_);
}

void DaemonTransport::set_spin_us(unsigned us)
{
	std::lock_guard<std::mutex> g(mu_);
	spin_.set_fixed(us);
}

void DaemonTransport::set_spin_adaptive(unsigned max_us)
{
	std::lock_guard<std::mutex> g(mu_);
	spin_.set_adaptive(max_us);
}

int DaemonTransport::fail(std::span<std::byte> msg, int err)
{
	uabi_msg_hdr h;
	std::memcpy(&h, msg.data(), sizeof(h));
	h.status = err;
	h.executed = 0;
	h.failed_index = 0;
	std::memcpy(msg.data(), &h, sizeof(h));
	return err;
}

int DaemonTransport::execute(std::span<std::byte> msg)
{
	// The host rules every transport applies before copying in.
	if (msg.size() < sizeof(uabi_msg_hdr) || msg.size() > UABI_MAX_MSG_BYTES)
		return -EINVAL;
	std::lock_guard<std::mutex> g(mu_);
	return execute_locked(msg);
}

int DaemonTransport::execute_locked(std::span<std::byte> msg)
{
	std::byte *p = msg.data();
	const std::size_t n = msg.size();
	if (dead_)
		return fail(msg, -ENOTCONN);

	cmd_off_.clear();
	fd_off_.clear();
	// The slot carries no fds: a message takes it when none of its fd
	// attributes passes one (an input naming no fd, as XRCD OPEN's -1,
	// goes through the slot as it is; uabid checks the same).
	bool slot_ok = true;
	daemon::wire::walk(
		p, n, [&](std::size_t, std::size_t off) { cmd_off_.push_back(off); },
		[&](std::size_t, std::size_t aoff, std::uint16_t fl) {
			fd_off_.push_back(aoff);
			if ((fl & UABI_ATTR_F_OUTPUT) ||
			    daemon::wire::get_s32(p, daemon::wire::payload_of(aoff)) >= 0)
				slot_ok = false;
		});
	if (slot_ && slot_on_ && slot_ok && n <= daemon::kSlotCap)
		return execute_slot(msg);

	// Inputs: send every open fd; a closed one travels as kBadFd.
	struct Saved {
		std::size_t off;
		std::int32_t v;
	};
	Saved saved_small[8];
	std::vector<Saved> saved_big;
	std::size_t nsaved = 0;
	auto save = [&](std::size_t off, std::int32_t v) {
		if (nsaved < 8)
			saved_small[nsaved] = {off, v};
		else
			saved_big.push_back({off, v});
		nsaved++;
	};
	auto restore = [&]() {
		for (std::size_t i = 0; i < nsaved; i++) {
			const Saved &s = i < 8 ? saved_small[i] : saved_big[i - 8];
			daemon::wire::put_s32(p, s.off, s.v);
		}
	};
	fds_.clear();
	for (std::size_t aoff : fd_off_) {
		if (daemon::wire::attr_flags(p, aoff) & UABI_ATTR_F_OUTPUT)
			continue;
		std::size_t off = daemon::wire::payload_of(aoff);
		std::int32_t v = daemon::wire::get_s32(p, off);
		if (v < 0)
			continue;
		if (::fcntl(v, F_GETFD) < 0) {
			save(off, v);
			daemon::wire::put_s32(p, off, kBadFd);
			continue;
		}
		fds_.push_back(v);
	}
	if (fds_.size() > daemon::kMaxFds) {
		restore();
		return fail(msg, -EINVAL);
	}

	uabi_msg_hdr orig;
	std::memcpy(&orig, p, sizeof(orig));
	ssize_t s = daemon::wire::send_fds(fd_, p, n, fds_.data(), fds_.size(), 0);
	if (s < 0) {
		restore();
		if (s == -EPIPE || s == -ECONNRESET || s == -ENOTCONN) {
			dead_ = true;
			return fail(msg, -ENOTCONN);
		}
		return fail(msg, int(s));
	}

	// The reply: poll for it a little while before sleeping (the cost of
	// a cross-process wake-up is most of a round trip on small VMs).
	std::vector<int> rfds;
	int mflags = 0;
	ssize_t r = -EAGAIN;
	if (spin_.should_spin()) {
		const std::uint64_t deadline = daemon::wire::now_ns() + spin_.budget_us() * 1000ull;
		for (unsigned i = 0;; i++) {
			r = daemon::wire::recv_fds(fd_, p, n, rfds, MSG_DONTWAIT, &mflags);
			if (r != -EAGAIN)
				break;
			if ((i & 7) == 7 && daemon::wire::now_ns() >= deadline)
				break;
			daemon::wire::cpu_relax();
		}
		spin_.result(r != -EAGAIN);
	}
	if (r == -EAGAIN)
		r = daemon::wire::recv_fds(fd_, p, n, rfds, 0, &mflags);
	restore();
	if (r <= 0) {
		daemon::wire::close_all(rfds);
		std::memcpy(p, &orig, sizeof(orig));
		dead_ = true;
		return fail(msg, -ENOTCONN);
	}
	if (std::size_t(r) != n || (mflags & MSG_TRUNC)) {
		// An error reply is a bare message header carrying the status.
		daemon::wire::close_all(rfds);
		uabi_msg_hdr eh;
		std::memcpy(&eh, p, sizeof(eh));
		int st = std::size_t(r) >= sizeof(eh) && !(mflags & MSG_TRUNC) && eh.status < 0
				 ? eh.status
				 : -EPROTO;
		std::memcpy(p, &orig, sizeof(orig));
		return fail(msg, st);
	}

	// Outputs: the daemon sent one fd per valid output fd attribute that
	// holds a non-negative value, in message order (none when nothing ran:
	// then the payloads stay as they are).
	std::size_t next = 0;
	for (std::size_t aoff : fd_off_) {
		if (next == rfds.size())
			break;
		std::uint16_t fl = daemon::wire::attr_flags(p, aoff);
		if (!(fl & UABI_ATTR_F_OUTPUT) || !(fl & UABI_ATTR_F_VALID_OUTPUT))
			continue;
		std::size_t off = daemon::wire::payload_of(aoff);
		if (daemon::wire::get_s32(p, off) < 0)
			continue;
		daemon::wire::put_s32(p, off, rfds[next]);
		rfds[next++] = -1; // now in the message
	}
	daemon::wire::close_all(rfds); // extras (never sent by a sane daemon)
	track_event_fds(msg);

	uabi_msg_hdr h;
	std::memcpy(&h, p, sizeof(h));
	return h.status;
}

// uabid's end of the socket closed (it exited or dropped us).
bool DaemonTransport::daemon_gone()
{
	pollfd p{fd_, POLLIN, 0};
	return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

// A message without fds through the request slot: copy it in, publish its
// sequence number, ring the doorbell unless uabid is polling, then poll for
// the reply a moment and sleep on the reply's futex word (waking now and
// then to see whether uabid is still there).  The same bytes come back as
// over the socket.
int DaemonTransport::execute_slot(std::span<std::byte> msg)
{
	namespace w = daemon::wire;
	std::byte *data = reinterpret_cast<std::byte *>(slot_) + daemon::kSlotDataOff;
	const std::size_t n = msg.size();
	std::memcpy(data, msg.data(), n);
	slot_->req_len = std::uint32_t(n);
	const std::uint32_t seq = ++seq_;
	w::store_release(&slot_->req_seq, seq);
	w::full_fence();
	if (!w::load_acquire(&page_->polling)) {
		std::uint64_t one = 1;
		if (::write(doorbell_, &one, sizeof(one)) < 0) {
			// EAGAIN: the counter is full, so uabid has a wake-up due
		}
	}

	bool done = false;
	if (spin_.should_spin()) {
		// Past the budget, an adaptive client keeps polling while uabid
		// executes this request (it has taken it: a long chain), up to
		// kTakenSpinUs: the reply is on its way, and sleeping would
		// only add a wake-up to it.  Nor is that a miss for the governor
		// (which would stop polling for the next calls): only a request
		// uabid has not taken within the budget is.
		const std::uint64_t t0 = w::now_ns();
		const std::uint64_t deadline = t0 + spin_.budget_us() * 1000ull;
		const std::uint64_t taken_deadline =
		    spin_.adaptive()
			? std::max<std::uint64_t>(deadline, t0 + kTakenSpinUs * 1000ull)
			: deadline;
		bool taken = false;
		for (unsigned i = 0;; i++) {
			// The reply (as long as the request) comes in the lines
			// asked for here together with rep_seq's.
			w::prefetch_lines(data, n, 4);
			if (w::load_acquire(&slot_->rep_seq) == seq) {
				done = true;
				break;
			}
			if ((i & 63) == 63) {
				const std::uint64_t now = w::now_ns();
				if (now >= deadline) {
					taken = taken || w::load_acquire(&slot_->taken_seq) == seq;
					if (!taken || now >= taken_deadline)
						break;
				}
			}
			w::cpu_relax();
		}
		spin_.result(done || taken);
	}
	if (!done) {
		w::store_release(&slot_->waiting, 1);
		w::full_fence();
		for (;;) {
			std::uint32_t r = w::load_acquire(&slot_->rep_seq);
			if (r == seq)
				break;
			w::futex_wait(&slot_->rep_seq, r, 100);
			if (w::load_acquire(&slot_->rep_seq) != seq && daemon_gone()) {
				w::store_release(&slot_->waiting, 0);
				dead_ = true;
				return fail(msg, -ENOTCONN);
			}
		}
		w::store_release(&slot_->waiting, 0);
	}

	const std::uint32_t rlen = slot_->rep_len;
	if (rlen != n) {
		// An error reply is a bare message header carrying the status.
		uabi_msg_hdr eh{};
		if (rlen >= sizeof(eh) && rlen <= daemon::kSlotCap)
			std::memcpy(&eh, data, sizeof(eh));
		return fail(msg, eh.status < 0 ? eh.status : -EPROTO);
	}
	std::memcpy(msg.data(), data, n);
	track_event_fds(msg); // a DESTROY closes our copy of the queue's fd
	uabi_msg_hdr h;
	std::memcpy(&h, msg.data(), sizeof(h));
	return h.status;
}

// Our copies of event queue fds live as long as their objects: remember
// the fd a COMP_CHANNEL / ASYNC_EVENT / CM_CHANNEL CREATE returned, close it when a
// DESTROY of that handle succeeds.
void DaemonTransport::track_event_fds(std::span<std::byte> msg)
{
	const std::byte *p = msg.data();
	auto is_evq = [](std::uint16_t o) {
		return o == UABI_OBJ_COMP_CHANNEL || o == UABI_OBJ_ASYNC_EVENT ||
		       o == UABI_OBJ_CM_CHANNEL;
	};
	std::size_t fdi = 0;
	for (std::size_t k = 0; k < cmd_off_.size(); k++) {
		uabi_cmd_hdr ch;
		std::memcpy(&ch, p + cmd_off_[k], sizeof(ch));
		if (!is_evq(ch.object) || ch.status != 0)
			continue;
		if (ch.method == UABI_METHOD_CREATE) {
			// The fd attribute(s) inside this command.
			std::size_t end = cmd_off_[k] + ch.length;
			for (; fdi < fd_off_.size() && fd_off_[fdi] < cmd_off_[k]; fdi++) {
			}
			for (std::size_t j = fdi; j < fd_off_.size() && fd_off_[j] < end; j++) {
				std::uint16_t fl = daemon::wire::attr_flags(p, fd_off_[j]);
				if (!(fl & UABI_ATTR_F_OUTPUT) || !(fl & UABI_ATTR_F_VALID_OUTPUT))
					continue;
				std::int32_t fd = daemon::wire::get_s32(
					p, daemon::wire::payload_of(fd_off_[j]));
				if (fd < 0)
					continue;
				auto [it, fresh] = evq_fds_.try_emplace(ch.out_handle, fd);
				if (!fresh && it->second != fd) {
					::close(it->second); // stale entry
					it->second = fd;
				}
			}
		} else if (ch.method == UABI_METHOD_DESTROY) {
			std::uint32_t h = ch.handle;
			if (ch.flags & UABI_CMD_F_HANDLE_REF) {
				if (h >= k)
					continue;
				uabi_cmd_hdr ref;
				std::memcpy(&ref, p + cmd_off_[h], sizeof(ref));
				h = ref.out_handle;
			}
			if (auto it = evq_fds_.find(h); it != evq_fds_.end()) {
				::close(it->second);
				evq_fds_.erase(it);
			}
		}
	}
}

} // namespace uabi
