// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The daemon backend: the object core runs in uabid, reached over a unix
// SOCK_SEQPACKET socket (docs/daemon.md).  This header has the transport,
// where the socket lives, how uabid is started, and the small admin
// protocol that `uabi status` / `uabi objects` use.
#ifndef UABI_TRANSPORT_DAEMON_HPP
#define UABI_TRANSPORT_DAEMON_HPP

#include <rdma/uabi_msg.h>
#include <uabi/transport.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace uabi {

namespace daemon {


// ------------------------------------------------------------ wire format
// A datagram on the socket is either a uabi message (<rdma/uabi.h>, magic
// UABI_MSG_MAGIC), executed by the core exactly as an ioctl would, or an
// admin request: an AdmHdr (magic kAdmMagic) and an op-specific payload,
// answered by uabid itself.
inline constexpr std::uint32_t kAdmMagic = 0x7561646du; // "uadm"
// Changes with any layout below (a uabid and its clients must come from
// one build: a mismatch is refused with EPROTONOSUPPORT, never misread).
// 2: LinkEntry's steering and CM counters, RelayReply's flags.
inline constexpr std::uint16_t kProtoVersion = 2;
// Most fds one datagram may carry (the kernel's SCM_MAX_FD).
inline constexpr unsigned kMaxFds = 253;

enum AdmOp : std::uint16_t {
	kOpHello = 1,	 // arg = HelloKind; reply payload HelloReply
	kOpStatus = 2,	 // reply payload StatusReply + CtxEntry[]
	kOpObjects = 3,	 // payload ObjectsRequest; reply ObjectsReply + ObjEntry[]
	kOpShutdown = 4, // uabid exits (caller: its uid or root)
	kOpClose = 5,	 // detaches this connection from its context (closed with
			 // its last connection), replies, disconnects
	kOpContextFd = 6, // reply carries (SCM_RIGHTS) the fd naming this
			  // connection's context (docs/daemon.md, "Imported contexts")
	kOpSlot = 7,	  // reply SlotReply + three fds (SCM_RIGHTS): the request
			  // slot, its doorbell, the daemon page ("Request slot")
	// RoCE devices (docs/wire.md, "Devices on uabid").
	kOpLinks = 8,	  // reply LinkEntry[]: every device, uabi_sw0 first
	kOpLinkAdd = 9,	  // payload LinkRequest (caller: uabid's uid or root)
	kOpLinkDel = 10,  // payload LinkRequest (name only; same callers)
	kOpWireRelay = 11, // context connection of a RoCE device: reply
			   // RelayReply + one fd (SCM_RIGHTS): the datagrams
			   // uabid receives at the device's port for this
			   // connection's QPs, each behind a RelayHdr; and a
			   // second one with kRelaySteered
	kOpWireBind = 12,  // arg = QPN of a QP of this connection's context:
			   // its datagrams go to this connection's relay
	kOpWireUnbind = 13, // arg = QPN
};

enum HelloKind : std::uint32_t {
	kHelloContext = 1, // opens a context for this connection
	kHelloAdmin = 2,   // no context: status, objects, shutdown only
	kHelloImport = 3,  // carries a context's fd (SCM_RIGHTS): joins that
			   // context (same uid only: EACCES)
};

struct AdmHdr {
	std::uint32_t magic;	// kAdmMagic
	std::uint32_t length;	// bytes, this header included
	std::uint16_t version;	// kProtoVersion
	std::uint16_t op;	// AdmOp
	std::int32_t status;	// reply: 0 or -errno
	std::uint32_t arg;	// op-specific
	std::uint32_t reserved; // zero
};

inline constexpr std::uint32_t kDaemonShared = 1u << 0;	  // --shared: every uid may connect
inline constexpr std::uint32_t kCallerFiltered = 1u << 1; // listings: the caller's uid only

// kHelloContext may carry one: the device to open (its position in the
// kOpLinks list; 0, uabi_sw0, without it).
struct HelloRequest {
	std::uint32_t device;
	std::uint32_t reserved; // zero
};

// A device of uabid: uabi_sw0, and RoCE devices made with kOpLinkAdd.
struct LinkEntry {
	std::uint32_t index;	// position (what HelloRequest::device names)
	std::uint32_t roce;	// 1: bound to netdev
	char name[64];
	char netdev[16];
	std::uint32_t carrier;	// RoCE: the interface's carrier
	std::uint32_t ip_mtu;	// RoCE: the interface's MTU
	std::uint32_t num_gids;
	std::uint32_t contexts; // open on it
	std::uint8_t addr[16];	// RoCE: where uabid receives (IPv4-mapped or
				// IPv6), zero when it cannot (no address)
	std::uint16_t port;	// ... at this UDP port (4791)
	std::uint16_t steering; // 1: bound QPs' datagrams go straight to their
				// contexts' sockets (docs/wire.md)
	std::int32_t relay_error; // -errno of the last bind, 0: bound
	std::uint64_t rx_relayed; // datagrams handed to a process
	std::uint64_t rx_dropped; // no such QP, malformed, relay full
	std::uint32_t steered_qps; // QPs the port steers now
	std::int32_t steer_error;  // -errno: why steering stopped
	// The CM on QP1 (docs/cm.md, "Across hosts"): datagrams for QP1 that
	// were a UD packet with the GSI's Q_Key (handed to the CM) and that
	// were not (refused here); then the CM's own counts, for all links.
	std::uint64_t qp1_in;
	std::uint64_t qp1_refused;
	std::uint64_t cm_taken;	  // MADs that moved a connection
	std::uint64_t cm_dropped; // MADs malformed, unknown, for no connection
	std::uint64_t cm_sent;
	std::uint64_t cm_resent;
	std::uint64_t cm_timed_out;
};

struct LinkRequest {
	char name[64];	 // NUL-terminated
	char netdev[16]; // kOpLinkAdd: the interface (IFNAMSIZ)
};

struct RelayReply {
	std::uint16_t port;	// the device's UDP port
	std::uint16_t flags;	// kRelaySteered
	std::uint32_t reserved;
};
// A second fd follows the relay: a UDP socket of the port's reuseport
// group, to which the port steers the datagrams of this connection's bound
// QPs (docs/wire.md, "Devices on uabid: who receives").
constexpr std::uint16_t kRelaySteered = 1;

// What precedes each datagram on a relay socket: its IP addresses and
// UDP ports as uabid received it (the ICRC covers them).
struct RelayHdr {
	std::uint8_t v6;	// 0: IPv4 (addresses in the first 4 bytes)
	std::uint8_t reserved[3];
	std::uint16_t src_port; // host order
	std::uint16_t dst_port;
	std::uint8_t src[16];
	std::uint8_t dst[16];
};
static_assert(sizeof(RelayHdr) == 40);

struct HelloReply {
	std::uint32_t daemon_pid;
	std::uint32_t daemon_uid;
	std::uint32_t conn_id;
	std::uint32_t flags;	  // kDaemonShared
	std::uint64_t started_ns; // CLOCK_REALTIME
	std::uint32_t max_contexts;
	std::uint32_t max_msg_bytes;
};

struct CtxEntry {
	std::uint32_t conn_id;
	std::int32_t pid;
	std::uint32_t uid;
	std::uint32_t gid;
	std::uint64_t connected_ns; // CLOCK_REALTIME
	std::uint64_t requests;
	std::uint32_t objects[16]; // live objects, indexed by enum uabi_object
};

struct StatusReply {
	std::uint32_t daemon_pid;
	std::uint32_t daemon_uid;
	std::uint64_t started_ns; // CLOCK_REALTIME
	std::uint64_t uptime_ns;
	std::uint32_t flags;	   // kDaemonShared, kCallerFiltered
	std::uint32_t idle_exit_s; // 0 = never
	std::uint32_t max_contexts;
	std::uint32_t connections; // visible to the caller
	std::uint32_t contexts;	   // visible to the caller
	std::uint32_t num_types;   // UABI_OBJ_MAX_CORE
	std::uint32_t objects[16]; // visible live objects per type
	std::uint64_t requests;	   // messages executed since start
	std::uint64_t node_guid;
	char device_name[64];
	char socket_path[108];
	char log_path[256];
	std::uint32_t num_entries; // CtxEntry records that follow
	std::uint32_t reserved;
};

struct ObjectsRequest {
	// Listing resumes after (conn_id, handle); {0, 0} starts it.
	std::uint32_t after_conn;
	std::uint32_t after_handle;
};

struct ObjEntry {
	std::uint32_t conn_id;
	std::int32_t pid;
	std::uint32_t uid;
	std::uint16_t type; // enum uabi_object
	std::uint16_t reserved;
	std::uint32_t handle;
	std::uint32_t qpn;
	std::uint32_t qp_type;
	std::uint32_t qp_state;
	std::uint32_t lkey;
	std::uint32_t rkey;
	std::uint32_t cqe;
	std::uint32_t cqn;
	std::uint32_t srqn;
	std::uint32_t srq_type;
	std::uint64_t user_handle;
	std::uint64_t addr;
	std::uint64_t length;
};

// ------------------------------------------------------------ request slot
// A context connection may ask (kOpSlot) for a request slot: shared memory
// that carries uabi messages without fds instead of the socket
// (docs/daemon.md, "Request slot").  uabid makes it (a sealed memfd the
// client cannot resize) and reads nothing from it that it has not copied
// out and checked: every byte of it is the client's to write.
struct alignas(64) SlotHdr {
	// The first cache line: the words of every call, which travel
	// between the two CPUs once each way per call.
	std::uint32_t req_seq;	  // client: bumped (release) after a request
	std::uint32_t req_len;	  // client: bytes of the request at kSlotDataOff
	std::uint32_t rep_seq;	  // uabid: req_seq of the reply there (release);
				  // the client's futex word
	std::uint32_t rep_len;	  // uabid: bytes of the reply
	std::uint32_t waiting;	  // client: 1 while it sleeps on rep_seq
	std::uint32_t reserved0[11];
	// A line of its own: uabid stores it while the client polls the
	// first line, which would otherwise go back and forth once more per
	// call; the client reads it only after its polling budget.
	std::uint32_t taken_seq;  // uabid: req_seq it copied out and is
				  // executing (release), before rep_seq
	std::uint32_t reserved1[15];
};
static_assert(sizeof(SlotHdr) == 128);
inline constexpr std::size_t kSlotDataOff = sizeof(SlotHdr);
// The memfd: room for the largest message (sparse: only the pages a
// message touched take memory).
inline constexpr std::size_t kSlotBytes = UABI_MAX_MSG_BYTES + 4096;
// The longest request or reply: the longest message, which is also all
// uabid's own buffer holds (the slot's last bytes stay unused).
inline constexpr std::size_t kSlotCap = UABI_MAX_MSG_BYTES;
static_assert(kSlotDataOff + kSlotCap <= kSlotBytes);

// One page for all connections, read-only for clients (F_SEAL_FUTURE_WRITE).
struct DaemonPage {
	// Nonzero while uabid will look at every slot before it next sleeps:
	// a client that sees it set skips the doorbell.
	std::uint32_t polling;
};
inline constexpr std::size_t kDaemonPageBytes = 4096;

struct SlotReply {
	std::uint32_t slot_bytes; // kSlotBytes
	std::uint32_t data_off;	  // kSlotDataOff
	std::uint32_t page_bytes; // kDaemonPageBytes
	std::uint32_t reserved;
};

struct ObjectsReply {
	std::uint32_t count; // ObjEntry records that follow
	std::uint32_t more;  // 1: ask again after the last entry
};

// How long to poll for the next datagram before sleeping in the kernel.
// A cross-process wake-up of a sleeping task costs tens of microseconds on
// small VMs, so polling pays when the answer is due within the budget, and
// costs when it is not (the poller holds a CPU the peer may need).  Fixed:
// always poll up to the budget.  Adaptive: poll; after a poll that caught
// nothing, skip polling for a number of waits that doubles with each such
// miss (4 .. 1024) and falls back to 4 after a catch.
class SpinGovernor {
public:
	void set_fixed(unsigned us)
	{
		budget_us_ = us;
		adaptive_ = false;
	}
	void set_adaptive(unsigned max_us)
	{
		budget_us_ = max_us;
		adaptive_ = true;
		skip_ = 0;
		penalty_ = kMinPenalty;
	}
	unsigned budget_us() const { return budget_us_; }
	bool adaptive() const { return adaptive_; }
	// Whether to poll before this wait.
	bool should_spin()
	{
		if (!budget_us_)
			return false;
		if (adaptive_ && skip_) {
			skip_--;
			return false;
		}
		return true;
	}
	// After a wait that polled: did the poll catch the datagram?
	void result(bool caught)
	{
		if (!adaptive_)
			return;
		if (caught) {
			penalty_ = kMinPenalty;
		} else {
			skip_ = penalty_;
			penalty_ = penalty_ * 2 > kMaxPenalty ? kMaxPenalty : penalty_ * 2;
		}
	}

private:
	static constexpr unsigned kMinPenalty = 4;
	static constexpr unsigned kMaxPenalty = 1024;
	unsigned budget_us_ = 0;
	bool adaptive_ = false;
	unsigned skip_ = 0;
	unsigned penalty_ = kMinPenalty;
};

// ------------------------------------------------------- where and how

// The files of one daemon instance, all derived from the socket path:
// UABI_SOCKET, else $XDG_RUNTIME_DIR/uabi/uabid.sock, else
// /tmp/uabi-<uid>/uabid.sock.
struct Paths {
	std::string dir; // directory of the socket
	std::string socket;
	std::string lock;	  // held by the running daemon (contains its pid)
	std::string start_lock;	  // serialises clients starting a daemon
	std::string log;	  // UABI_DAEMON_LOG, else $dir/uabid.log
	bool private_dir = false; // dir chosen by us: must be ours and 0700
};

Result<Paths> resolve_paths();
Result<Paths> paths_for_socket(const std::string &socket);
// Creates the directory (0700) if missing; a default directory must be a
// real directory owned by us without group/other access (EPERM).
Result<void> ensure_dir(const Paths &p);
// UABI_DAEMON_PATH, else the build tree's uabid (only when running from the
// build tree), else the uabid of the prefix this copy is installed in, else
// next to the running library or executable, else "uabid" on PATH.  ENOENT
// when none is executable.
Result<std::string> find_daemon_binary();

// A connected, greeted socket (owned; closed by the destructor).
class Connection {
public:
	Connection() = default;
	Connection(int fd, const HelloReply &h) : fd_(fd), hello_(h) {}
	Connection(Connection &&o) noexcept;
	Connection &operator=(Connection &&o) noexcept;
	~Connection();
	int fd() const { return fd_; }
	const HelloReply &hello() const { return hello_; }
	int release();

private:
	int fd_ = -1;
	HelloReply hello_{};
};

// Connects and says hello.  ENOENT / ECONNREFUSED: no daemon; EACCES: the
// socket or the daemon refused us; EUSERS: the daemon's context limit.
// kHelloImport sends @import_fd with the hello.
// kHelloContext opens device @device (a position in query_links()).
Result<Connection> connect(const Paths &p, HelloKind kind, int import_fd = -1, unsigned device = 0);
// connect(), starting uabid first when no daemon answers (an flock on
// p.start_lock keeps two processes from starting two).  Also used by
// `uabi daemon start`.
Result<Connection> connect_or_start(const Paths &p, HelloKind kind, unsigned device = 0);

// One admin request/reply on a connection (any kind).
// @send_fd (if >= 0) travels with the request; fds of the reply land in
// @fds (closed when it is null).
Result<std::vector<std::byte>> admin_call(int fd, AdmOp op, std::uint32_t arg, const void *payload,
					  std::size_t len, int timeout_ms = 5000, int send_fd = -1,
					  std::vector<int> *fds = nullptr);

struct Status {
	StatusReply daemon;
	std::vector<CtxEntry> contexts;
};
Result<Status> query_status(const Connection &c);
Result<std::vector<ObjEntry>> query_objects(const Connection &c);
// The daemon's devices (kOpLinks), and `uabi link add/del`.
Result<std::vector<LinkEntry>> query_links(const Connection &c);
Result<void> link_add(const Connection &c, const std::string &name, const std::string &netdev);
Result<void> link_del(const Connection &c, const std::string &name);
// Asks uabid to exit and waits until its pid is gone (ETIMEDOUT).
Result<void> shutdown(Connection c, int timeout_ms = 5000);

} // namespace daemon

// The daemon backend, one context (one connection) per instance.
//
// Fds: the fds of input attributes flagged UABI_ATTR_F_FD travel to uabid
// with the message (SCM_RIGHTS); fds of output fd attributes (event queue
// fds) come back with the reply and the payload is rewritten to this
// process's fd.  The transport owns those copies: it closes one when the
// object that created it (COMP_CHANNEL / ASYNC_EVENT) is destroyed through
// it, and all of them when it is destroyed.
class DaemonTransport final : public Transport {
public:
	// UABI_SOCKET etc. from the environment; starts uabid if needed
	// (unless UABI_AUTOSTART=0).
	static Result<std::unique_ptr<DaemonTransport>> open(unsigned device = 0);
	static Result<std::unique_ptr<DaemonTransport>> open(const daemon::Paths &p,
							     bool autostart, unsigned device = 0);
	// The names of uabid's devices (UABI_SOCKET etc.), in position order;
	// uabi_sw0 alone when no daemon runs (one is not started for this).
	static Result<std::vector<std::string>> device_names();
	// A connection of our own to the context @fd names (a duplicate of
	// some DaemonTransport's context_fd()), on the daemon of UABI_SOCKET
	// etc.; never starts one.  Takes @fd over on success.
	static Result<std::unique_ptr<DaemonTransport>> import(int fd);
	~DaemonTransport() override;
	DaemonTransport(const DaemonTransport &) = delete;
	DaemonTransport &operator=(const DaemonTransport &) = delete;

	int execute(std::span<std::byte> msg) override;
	const char *name() const override { return "daemon"; }
	// Asked of uabid once (kOpContextFd), then kept.
	int context_fd() override;
	Result<int> wire_relay(std::uint16_t *port, int *steered = nullptr) override;
	int wire_bind(std::uint32_t qpn, bool on) override;

	pid_t daemon_pid() const { return pid_t(hello_.daemon_pid); }
	std::uint32_t connection_id() const { return hello_.conn_id; }
	// Polling for the reply before sleeping in recvmsg(): by default
	// adaptive up to 50 us, or UABI_SPIN_US=N for always N us (0 = never);
	// see docs/daemon.md.
	void set_spin_us(unsigned us);			 // always poll up to us
	void set_spin_adaptive(unsigned max_us);	 // poll while it pays
	// Whether messages without fds go through the request slot (default:
	// when uabid gave one, unless UABI_DAEMON_SLOT=0); off: the socket.
	bool has_slot() const { return slot_ != nullptr; }
	void use_slot(bool on);

private:
	DaemonTransport(daemon::Connection c);
	int execute_locked(std::span<std::byte> msg);
	void track_event_fds(std::span<std::byte> msg);
	int fail(std::span<std::byte> msg, int err);
	void map_slot();
	int execute_slot(std::span<std::byte> msg);
	bool daemon_gone();

	std::mutex mu_;
	int fd_;
	daemon::HelloReply hello_;
	daemon::SpinGovernor spin_;
	pid_t owner_; // the process that opened the connection
	bool dead_ = false;
	int ctx_fd_ = -1; // context_fd()
	// The request slot (docs/daemon.md), when uabid gave one.
	daemon::SlotHdr *slot_ = nullptr;
	const daemon::DaemonPage *page_ = nullptr;
	int doorbell_ = -1; // eventfd uabid watches
	bool slot_on_ = true;
	std::uint32_t seq_ = 0;
	// handle -> this process's copy of an event queue fd
	std::unordered_map<std::uint32_t, int> evq_fds_;
	// scratch, reused under mu_
	std::vector<std::size_t> cmd_off_;
	std::vector<std::size_t> fd_off_;
	std::vector<int> fds_;
};

} // namespace uabi

#endif // UABI_TRANSPORT_DAEMON_HPP
