// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid's parts (docs/daemon.md): its configuration, the log, a connection,
// and the Daemon, whose methods are in uabid.cpp (setup, the loop, main),
// uabid_conn.cpp (accepting connections, executing their messages) and
// uabid_admin.cpp (the admin requests: status, objects, shutdown).
#ifndef UABID_HPP
#define UABID_HPP

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
#include <set>
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

namespace uabid {


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

// Opens (creating, mode 0600) a file of the daemon's own in its directory,
// which may be shared (uabid.cpp).  -1 and errno.
int open_own_file(const char *path, int flags);

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

extern Log g_log;
#define LOG(...) g_log.msg(Log::Event, __VA_ARGS__)
#define LOG_INPUT(...) g_log.msg(Log::Input, __VA_ARGS__)
#define DEBUG(...) g_log.msg(Log::Debug, __VA_ARGS__)

// ----------------------------------------------------------- connections

// A context of the core and the connections on it: the one that opened it
// and those that imported it (docs/daemon.md, "Imported contexts").  It
// closes with its last connection.  token is the file that names it to
// clients (their cmd_fd): one end of a socketpair whose other end is
// closed at once, made on the first kOpContextFd; uabid keeps it open,
// so its inode (dev, ino) names no other file while the context lives.
struct SharedCtx {
	uabi_context *ctx = nullptr;
	uid_t uid = 0;			 // the opener's; importers must have it
	std::set<std::uint32_t> conns;	 // connection ids; the first lists it
	int token = -1;
	dev_t dev = 0;
	ino_t ino = 0;
};

struct Conn {
	enum Kind { New, Context, Admin };
	int fd = -1;
	std::uint32_t id = 0;
	ucred cred{};
	Kind kind = New;
	uabi_context *ctx = nullptr;
	SharedCtx *shared = nullptr;	 // with ctx
	std::uint64_t connected_ns = 0; // realtime
	std::uint64_t last_mono = 0;	 // the last message (or the accept)
	std::uint64_t requests = 0;
	// The request slot (uabid_slot.cpp), when the client asked for one.
	SlotHdr *slot = nullptr;
	int doorbell = -1;	     // eventfd the client writes; in epoll
	std::uint32_t last_seq = 0; // the req_seq last served (our copy)
	unsigned device = 0;	     // the core's index of the context's device
	int relay = -1;		     // our end of the wire relay (uabid_links.cpp)
	int member = -1;	     // the steered socket it holds: its Link::members index
};

// A socket of a device's reuseport group that uabid made for a context
// (uabid_links.cpp, "steering"); uabid keeps its copy for the group's life.
struct SteerMember {
	int fd = -1;
	Conn *owner = nullptr; // none: free, for a context of the same uid
	uid_t uid = 0;	       // whose contexts it has served
};

// A RoCE device whose port uabid owns (uabid_links.cpp).
struct Link {
	unsigned index = 0;	// the core's device index
	std::string name;
	int fd = -1;		// the UDP socket at addr:port, in epoll
	unsigned char addr[16] = {};
	std::uint16_t port = 0;
	int bind_err = 0;
	std::uint64_t rx_relayed = 0, rx_dropped = 0;
	// Steering: fd heads a SO_REUSEPORT group whose classic BPF program
	// sends each datagram, by its BTH's destination QPN, to the member
	// socket of the context that bound that QP (group index = position in
	// members + 1); anything else comes to fd, to be relayed.
	bool steer = false;
	std::vector<SteerMember> members;
	std::map<std::uint32_t, unsigned> steered; // QPN -> group index
	int steer_err = 0;			   // why steering stopped, if it did
	std::uint64_t qp1_in = 0, qp1_refused = 0; // CM MADs (docs/cm.md)
	std::uint32_t qp1_psn = 0;
	// Sockets at the device's other addresses (every other GID: IPv6 on
	// a device with IPv4, a second address of a family), port @port too:
	// the CM's MADs to and from them, datagrams for QPs relayed as those
	// at fd (never steered).  fd -1: that address could not be bound
	// (tried again at the next address change).
	struct Other {
		int fd = -1;
		unsigned char addr[16] = {};
	};
	std::vector<Other> others;
	unsigned ifindex = 0;	// the interface's (IPv6 link-local peers)
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
	bool handle_admin(Conn &c, std::size_t n, std::vector<int> &fds);
	bool open_context(Conn &c, unsigned device_pos);
	bool import_context(Conn &c, std::vector<int> &fds);
	bool send_context_fd(Conn &c);
	// The request slot (uabid_slot.cpp, docs/daemon.md "Request slot").
	int make_page();
	bool give_slot(Conn &c);
	void release_slot(Conn &c);
	bool serve_slots();
	void serve_slot(Conn &c, std::uint32_t seq);
	void set_polling(bool on);
	// The connection that lists c's context (its first one).
	static bool lists_context(const Conn &c)
	{
		return c.shared && !c.shared->conns.empty() && *c.shared->conns.begin() == c.id;
	}
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
	// RoCE devices (uabid_links.cpp, docs/wire.md "Devices on uabid").
	int device_at(unsigned pos);
	void link_bind(Link &l, const uabi_user_device_info &d);
	void link_bind_others(Link &l, const uabi_user_device_info &d);
	void link_close_others(Link &l);
	void link_forget(unsigned index);
	void links_sync();
	void monitor_open();
	void on_monitor();
	void on_link_readable(int fd);
	// One datagram of a device's port: relayed to its QP's owner, or the CM's.
	// @at: the address its socket is bound to.
	void relay_one(Link &l, const unsigned char *at, const std::uint8_t *b, std::size_t len,
		       const msghdr &mh, const sockaddr_storage &from);
	bool do_links(Conn &c);
	bool do_link_change(Conn &c, std::uint16_t op, std::size_t n);
	bool give_relay(Conn &c);
	bool wire_bind(Conn &c, std::uint16_t op, std::uint32_t qpn);
	bool holds_qp(uabi_context *ctx, std::uint32_t qpn);
	// @key's owner unbound or went: the next standby takes over.
	void wire_promote(std::uint64_t key);
	void release_relay(Conn &c);
	int steer_member(Link &l, Conn &c);
	void steer_release(Link &l, Conn &c);
	void steer_reset(Link &l);
	int steer_program(Link &l);
	void steer_update(Link &l);
	// The CM across hosts (uabid_links.cpp, docs/cm.md "Across hosts"):
	// MADs on QP1 of the RoCE devices, one timer for the core's CM.
public:
	int cm_send(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
		    unsigned char tclass, const void *mad, unsigned len);
	void cm_arm(unsigned long long delay_ns);
private:
	void cm_open();
	void cm_input(Link &l, const std::uint8_t *b, std::size_t len, const RelayHdr &h);

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
	std::unordered_map<uabi_context *, std::unique_ptr<SharedCtx>> shared_;
	std::map<std::uint32_t, Conn *> by_id_;
	std::vector<Conn *> slotted_;			// connections with a slot
	std::unordered_map<int, Conn *> doorbells_;	// by eventfd
	int page_fd_ = -1;				// the daemon page (memfd)
	DaemonPage *page_ = nullptr;
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
	std::map<unsigned, Link> links_;		    // by core index
	std::unordered_map<int, unsigned> link_fds_;	    // UDP fd -> core index
	std::unordered_map<std::uint64_t, Conn *> wire_qps_; // (index, QPN) -> owner
	// An XRC receive QP that several contexts hold and bound: the ones
	// after its owner in wire_qps_, in bind order; the next one takes its
	// datagrams when the owner unbinds or goes (docs/wire.md, "XRC").
	std::unordered_map<std::uint64_t, std::vector<Conn *>> wire_standby_;
	int nl_fd_ = -1;				    // the address monitor
	int cm_timer_fd_ = -1;				    // the CM's timer (timerfd)
	char device_name_[64] = {};
	std::uint64_t node_guid_ = 0;
};

} // namespace uabid

#endif
