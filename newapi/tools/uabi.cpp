// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabi: look at and drive the rdma-uabi backends (docs/daemon.md, uabi(1)).
//
//   uabi status [--json] [--socket PATH] [--backend NAME]
//   uabi objects [--json] [--socket PATH]
//   uabi run [--socket PATH] [--backend NAME] [--] CMD [ARGS...]
//   uabi daemon start|stop [--socket PATH]
//   uabi link [add NAME netdev IFNAME | del NAME]   (uabi_link.cpp)
//   uabi --version | --help
// The options may come before or after the command (before CMD for run).
#include "paths.hpp"
#include "uabi_tool.hpp"

#include <uabi/client.hpp>
#include <uabi/fsview.hpp>
#include <uabi/transport_daemon.hpp>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <string>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

namespace uabi::tool {

std::string json_str(const std::string &s)
{
	std::string o = "\"";
	for (unsigned char ch : s) {
		if (ch == '"' || ch == '\\') {
			o += '\\';
			o += char(ch);
		} else if (ch < 0x20) {
			char b[8];
			std::snprintf(b, sizeof(b), "\\u%04x", ch);
			o += b;
		} else {
			o += char(ch);
		}
	}
	return o + "\"";
}

// "uabi: <message>" and a hint, on stderr; the usage exit status.
int usage_error(const std::string &msg)
{
	std::fprintf(stderr, "uabi: %s\nTry 'uabi --help'.\n", msg.c_str());
	return kExitUsage;
}

} // namespace uabi::tool

namespace {

using namespace uabi;
using namespace uabi::tool;

bool g_json = false;

const char *const kTypeNames[16] = {
	"?",   "device", "pd",	 "mr", "cq",	 "comp_channel", "async_event", "qp",
	"srq", "ah",	 "xrcd", "mw", "cm_channel", "cm_id",	 "type14",	"type15"};

const char *qp_type_name(std::uint32_t t)
{
	switch (t) {
	case UABI_QPT_RC:
		return "RC";
	case UABI_QPT_UC:
		return "UC";
	case UABI_QPT_UD:
		return "UD";
	case UABI_QPT_XRC_SEND:
		return "XRC_SEND";
	case UABI_QPT_XRC_RECV:
		return "XRC_RECV";
	}
	return "?";
}

const char *qp_state_name(std::uint32_t s)
{
	static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	return s < UABI_QPS_NUM ? n[s] : "?";
}

std::string duration(std::uint64_t ns)
{
	std::uint64_t s = ns / 1000000000ull;
	char b[64];
	if (s < 60)
		std::snprintf(b, sizeof(b), "%" PRIu64 "s", s);
	else if (s < 3600)
		std::snprintf(b, sizeof(b), "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		std::snprintf(b, sizeof(b), "%" PRIu64 "h%02" PRIu64 "m", s / 3600, (s / 60) % 60);
	return b;
}

std::string guid(std::uint64_t g)
{
	char b[32];
	std::snprintf(b, sizeof(b), "%04x:%04x:%04x:%04x", unsigned(g >> 48) & 0xffff,
		      unsigned(g >> 32) & 0xffff, unsigned(g >> 16) & 0xffff, unsigned(g) & 0xffff);
	return b;
}

std::string json_counts(const std::uint32_t c[16])
{
	std::string o = "{";
	bool first = true;
	for (int t = UABI_OBJ_PD; t < UABI_OBJ_MAX_CORE; t++) {
		o += (first ? "" : ",") + json_str(kTypeNames[t]) + ":" + std::to_string(c[t]);
		first = false;
	}
	return o + "}";
}

std::string human_counts(const std::uint32_t c[16])
{
	std::string o;
	for (int t = UABI_OBJ_PD; t < UABI_OBJ_MAX_CORE; t++) {
		if (!c[t])
			continue;
		o += (o.empty() ? "" : "  ") + std::string(kTypeNames[t]) + " " +
		     std::to_string(c[t]);
	}
	return o.empty() ? "none" : o;
}

// The backend a program started now would use, and why.
struct Resolved {
	Backend backend;
	std::string why;
};

Result<Resolved> resolve_backend()
{
	auto b = backend_from_env();
	if (!b) {
		std::fprintf(stderr,
			     "uabi: UABI_BACKEND=%s: unknown backend "
			     "(auto, inproc, daemon or kernel)\n",
			     std::getenv("UABI_BACKEND"));
		return make_error(b.error());
	}
	if (*b != Backend::Auto)
		return Resolved{*b, "UABI_BACKEND=" + std::string(backend_name(*b))};
	if (::access(UABI_DEVICE_PATH, F_OK) == 0)
		return Resolved{Backend::Kernel, "auto: " UABI_DEVICE_PATH " present"};
	return Resolved{Backend::Daemon, "auto: " UABI_DEVICE_PATH " not present"};
}

// The pid uabid wrote into its lock file, if a process of that pid named
// uabid holds the lock; 0: none.
pid_t locked_daemon_pid(const daemon::Paths &p)
{
	int fd = ::open(p.lock.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[32] = {};
	pid_t pid = 0;
	// Whoever holds it: our shared lock would be granted otherwise.
	if (::pread(fd, buf, sizeof(buf) - 1, 0) > 0 && ::flock(fd, LOCK_SH | LOCK_NB) < 0 &&
	    errno == EWOULDBLOCK)
		pid = pid_t(std::strtol(buf, nullptr, 10));
	::close(fd);
	char comm[32] = {};
	std::string path = "/proc/" + std::to_string(pid) + "/comm";
	int cf = pid > 0 ? ::open(path.c_str(), O_RDONLY | O_CLOEXEC) : -1;
	bool is_uabid = cf >= 0 && ::read(cf, comm, sizeof(comm) - 1) > 0 && !std::strncmp(comm, "uabid", 5);
	if (cf >= 0)
		::close(cf);
	return is_uabid ? pid : 0;
}

int stop_other_version(const daemon::Paths &p)
{
	pid_t pid = locked_daemon_pid(p);
	if (pid <= 0 || ::kill(pid, SIGTERM) < 0) {
		std::fprintf(stderr, "uabi: uabid at %s is of another version and cannot be stopped: %s\n",
			     p.socket.c_str(), std::strerror(pid <= 0 ? ESRCH : errno));
		return kExitFail;
	}
	for (int i = 0; i < 500 && ::kill(pid, 0) == 0; i++)
		::usleep(10000);
	std::printf("uabid stopped (pid %d, of another version)\n", int(pid));
	return 0;
}

void not_running(const daemon::Paths &p, int err)
{
	if (g_json) {
		std::printf(
			"{\"backend\":\"daemon\",\"running\":false,\"socket\":%s,\"error\":%s}\n",
			json_str(p.socket.c_str()).c_str(), json_str(std::strerror(err)).c_str());
		return;
	}
	if (err == ENOENT || err == ECONNREFUSED || err == ECONNRESET)
		std::fprintf(stderr,
			     "uabi: uabid is not running (socket %s).\n"
			     "It starts by itself when a program opens a context; "
			     "`uabi daemon start` starts it now.\n",
			     p.socket.c_str());
	else if (err == EPROTONOSUPPORT)
		std::fprintf(stderr,
			     "uabi: uabid at %s is of another version (its protocol is not this uabi's);\n"
			     "`uabi daemon stop` stops it, and the next program starts this one.\n",
			     p.socket.c_str());
	else
		std::fprintf(stderr, "uabi: cannot reach uabid at %s: %s\n", p.socket.c_str(),
			     std::strerror(err));
}

// Connects to a running daemon for admin requests (never starts one).
Result<daemon::Connection> admin_connect(const daemon::Paths &p)
{
	auto c = daemon::connect(p, daemon::kHelloAdmin);
	if (!c)
		not_running(p, c.error());
	return c;
}

int status_kernel(const Resolved &r)
{
	auto ctx = Context::open(Backend::Kernel);
	if (!ctx) {
		if (g_json)
			std::printf("{\"backend\":\"kernel\",\"running\":false,\"error\":%s}\n",
				    json_str(std::strerror(ctx.error())).c_str());
		else
			std::fprintf(stderr, "uabi: kernel backend (%s) unreachable: %s\n",
				     UABI_DEVICE_PATH, std::strerror(ctx.error()));
		return kExitNotRunning;
	}
	auto dev = ctx->query_device();
	auto cnt = ctx->counters();
	if (!dev || !cnt) {
		std::fprintf(stderr, "uabi: kernel backend: query failed: %s\n",
			     std::strerror(dev ? cnt.error() : dev.error()));
		return kExitFail;
	}
	if (g_json) {
		std::printf("{\"backend\":\"kernel\",\"running\":true,\"device\":%s,"
			    "\"node_guid\":%s,\"contexts\":%u,\"objects\":%s}\n",
			    json_str(dev->name.c_str()).c_str(),
			    json_str(guid(dev->attr.node_guid).c_str()).c_str(), cnt->contexts,
			    json_counts(cnt->device).c_str());
		return 0;
	}
	std::printf("backend   kernel (%s)\n", r.why.c_str());
	std::printf("device    %s  node guid %s\n", dev->name.c_str(),
		    guid(dev->attr.node_guid).c_str());
	// Our own context is one of them.
	std::printf("contexts  %u (this one included)\n", cnt->contexts);
	std::printf("objects   %s\n", human_counts(cnt->device).c_str());
	std::printf("(`uabi objects` lists this user's)\n");
	return 0;
}

int cmd_status()
{
	auto r = resolve_backend();
	if (!r)
		return kExitUsage;
	if (r->backend == Backend::Inproc) {
		if (g_json)
			std::printf("{\"backend\":\"inproc\",\"running\":true}\n");
		else
			std::printf("backend   inproc (%s): every process has a core of its own;\n"
				    "          there is nothing shared to show.\n",
				    r->why.c_str());
		return 0;
	}
	if (r->backend == Backend::Kernel)
		return status_kernel(*r);

	auto p = daemon::resolve_paths();
	if (!p) {
		std::fprintf(stderr, "uabi: socket path: %s\n", std::strerror(p.error()));
		return kExitFail;
	}
	auto c = admin_connect(*p);
	if (!c)
		return kExitNotRunning;
	auto st = daemon::query_status(*c);
	if (!st) {
		std::fprintf(stderr, "uabi: status: %s\n", std::strerror(st.error()));
		return kExitFail;
	}
	const daemon::StatusReply &d = st->daemon;
	const bool filtered = d.flags & daemon::kCallerFiltered;
	if (g_json) {
		std::string o = "{\"backend\":\"daemon\",\"running\":true";
		o += ",\"socket\":" + json_str(d.socket_path);
		o += ",\"log\":" + json_str(d.log_path);
		o += ",\"pid\":" + std::to_string(d.daemon_pid);
		o += ",\"uid\":" + std::to_string(d.daemon_uid);
		o += ",\"uptime_s\":" + std::to_string(d.uptime_ns / 1000000000ull);
		o += ",\"shared\":" +
		     std::string(d.flags & daemon::kDaemonShared ? "true" : "false");
		o += ",\"filtered\":" + std::string(filtered ? "true" : "false");
		o += ",\"idle_exit_s\":" + std::to_string(d.idle_exit_s);
		o += ",\"max_contexts\":" + std::to_string(d.max_contexts);
		o += ",\"requests\":" + std::to_string(d.requests);
		o += ",\"devices\":[{\"name\":" + json_str(d.device_name) +
		     ",\"node_guid\":" + json_str(guid(d.node_guid).c_str()) + "}]";
		o += ",\"connections\":" + std::to_string(d.connections);
		o += ",\"contexts\":" + std::to_string(d.contexts);
		o += ",\"objects\":" + json_counts(d.objects);
		o += ",\"context_list\":[";
		for (std::size_t i = 0; i < st->contexts.size(); i++) {
			const daemon::CtxEntry &e = st->contexts[i];
			o += (i ? "," : "") + std::string("{\"id\":") + std::to_string(e.conn_id) +
			     ",\"pid\":" + std::to_string(e.pid) +
			     ",\"uid\":" + std::to_string(e.uid) +
			     ",\"gid\":" + std::to_string(e.gid) +
			     ",\"requests\":" + std::to_string(e.requests) +
			     ",\"objects\":" + json_counts(e.objects) + "}";
		}
		o += "]}";
		std::printf("%s\n", o.c_str());
		return 0;
	}
	std::printf("backend   daemon (%s)\n", r->why.c_str());
	std::printf("socket    %s\n", d.socket_path);
	std::printf("daemon    pid %u, uid %u, up %s, %s, idle exit %s\n", d.daemon_pid,
		    d.daemon_uid, duration(d.uptime_ns).c_str(),
		    d.flags & daemon::kDaemonShared ? "shared" : "private",
		    d.idle_exit_s ? (std::to_string(d.idle_exit_s) + "s").c_str() : "never");
	std::printf("log       %s\n", d.log_path);
	std::printf("requests  %" PRIu64 "\n", d.requests);
	std::printf("device    %s  node guid %s\n", d.device_name[0] ? d.device_name : "?",
		    guid(d.node_guid).c_str());
	std::printf("contexts  %u of at most %u%s\n", d.contexts, d.max_contexts,
		    filtered ? " (your uid only)" : "");
	std::printf("objects   %s\n", human_counts(d.objects).c_str());
	if (!st->contexts.empty()) {
		std::printf("\n%-6s %-8s %-6s %-8s %-8s %s\n", "CTX", "PID", "UID", "REQS", "AGE",
			    "OBJECTS");
		std::uint64_t now = [] {
			timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
		}();
		for (const daemon::CtxEntry &e : st->contexts)
			std::printf(
				"%-6u %-8d %-6u %-8" PRIu64 " %-8s %s\n", e.conn_id, e.pid, e.uid,
				e.requests,
				duration(now > e.connected_ns ? now - e.connected_ns : 0).c_str(),
				human_counts(e.objects).c_str());
	}
	return 0;
}

std::string details(const daemon::ObjEntry &e)
{
	char b[160] = "";
	switch (e.type) {
	case UABI_OBJ_QP:
		std::snprintf(b, sizeof(b), "qpn 0x%x %s %s", e.qpn, qp_type_name(e.qp_type),
			      qp_state_name(e.qp_state));
		break;
	case UABI_OBJ_MR:
		std::snprintf(b, sizeof(b), "lkey 0x%x rkey 0x%x addr 0x%" PRIx64 " len %" PRIu64,
			      e.lkey, e.rkey, e.addr, e.length);
		break;
	case UABI_OBJ_CQ:
		std::snprintf(b, sizeof(b), "cqn %u cqe %u", e.cqn, e.cqe);
		break;
	case UABI_OBJ_SRQ:
		if (e.srq_type == UABI_SRQT_XRC)
			std::snprintf(b, sizeof(b), "xrc srqn %u", e.srqn);
		else
			std::snprintf(b, sizeof(b), "basic");
		break;
	}
	return b;
}

// The kernel module lists what a client may see, the objects of every
// context of its user (DEVICE / LIST_OBJECTS, scope USER), in the rows the
// daemon's listing has: the context column is the module's context number.
Result<std::vector<daemon::ObjEntry>> kernel_objects()
{
	auto ctx = Context::open(Backend::Kernel);
	if (!ctx) {
		std::fprintf(stderr, "uabi: kernel backend (%s) unreachable: %s\n",
			     UABI_DEVICE_PATH, std::strerror(ctx.error()));
		return make_error(ctx.error());
	}
	auto objs = ctx->list_objects(UABI_LIST_USER);
	if (!objs) {
		std::fprintf(stderr, "uabi: objects: %s\n", std::strerror(objs.error()));
		return make_error(objs.error());
	}
	std::vector<daemon::ObjEntry> v;
	for (const uabi_object_info &o : *objs) {
		daemon::ObjEntry e{};
		e.conn_id = o.context;
		e.pid = o.pid;
		e.uid = o.uid;
		e.type = o.type;
		e.handle = o.handle;
		e.qpn = o.qpn;
		e.qp_type = o.qp_type;
		e.qp_state = o.qp_state;
		e.lkey = o.lkey;
		e.rkey = o.rkey;
		e.cqe = o.cqe;
		e.cqn = o.cqn;
		e.srqn = o.srqn;
		e.srq_type = o.srq_type;
		e.user_handle = o.user_handle;
		e.addr = o.addr;
		e.length = o.length;
		v.push_back(e);
	}
	return v;
}

int cmd_objects()
{
	auto r = resolve_backend();
	if (!r)
		return kExitUsage;
	if (r->backend == Backend::Inproc) {
		std::fprintf(stderr, "uabi: objects: every process has an in-process core of "
				     "its own; there is nothing shared to list\n");
		return kExitFail;
	}
	Result<std::vector<daemon::ObjEntry>> objs = make_error(EINVAL);
	if (r && r->backend == Backend::Kernel) {
		objs = kernel_objects();
		if (!objs)
			return objs.error() == ENOENT || objs.error() == ENODEV ? kExitNotRunning
										: kExitFail;
	} else {
		auto p = daemon::resolve_paths();
		if (!p) {
			std::fprintf(stderr, "uabi: socket path: %s\n", std::strerror(p.error()));
			return kExitFail;
		}
		auto c = admin_connect(*p);
		if (!c)
			return kExitNotRunning;
		objs = daemon::query_objects(*c);
		if (!objs) {
			std::fprintf(stderr, "uabi: objects: %s\n", std::strerror(objs.error()));
			return kExitFail;
		}
	}
	if (g_json) {
		std::string o = "[";
		for (std::size_t i = 0; i < objs->size(); i++) {
			const daemon::ObjEntry &e = (*objs)[i];
			o += i ? "," : "";
			o += "{\"context\":" + std::to_string(e.conn_id) +
			     ",\"pid\":" + std::to_string(e.pid) +
			     ",\"uid\":" + std::to_string(e.uid) +
			     ",\"type\":" + json_str(kTypeNames[e.type & 15]) +
			     ",\"handle\":" + std::to_string(e.handle);
			if (e.type == UABI_OBJ_QP)
				o += ",\"qpn\":" + std::to_string(e.qpn) +
				     ",\"qp_type\":" + json_str(qp_type_name(e.qp_type)) +
				     ",\"state\":" + json_str(qp_state_name(e.qp_state));
			if (e.type == UABI_OBJ_MR)
				o += ",\"lkey\":" + std::to_string(e.lkey) +
				     ",\"rkey\":" + std::to_string(e.rkey) +
				     ",\"addr\":" + std::to_string(e.addr) +
				     ",\"length\":" + std::to_string(e.length);
			if (e.type == UABI_OBJ_CQ)
				o += ",\"cqn\":" + std::to_string(e.cqn) +
				     ",\"cqe\":" + std::to_string(e.cqe);
			if (e.type == UABI_OBJ_SRQ)
				o += ",\"srqn\":" + std::to_string(e.srqn) + ",\"srq_type\":" +
				     json_str(e.srq_type == UABI_SRQT_XRC ? "xrc" : "basic");
			o += "}";
		}
		std::printf("%s]\n", o.c_str());
		return 0;
	}
	if (objs->empty()) {
		std::printf("no live objects\n");
		return 0;
	}
	std::printf("%-6s %-8s %-6s %-13s %-7s %s\n", "CTX", "PID", "UID", "TYPE", "HANDLE",
		    "DETAILS");
	for (const daemon::ObjEntry &e : *objs) {
		std::string d = details(e);
		if (d.empty())
			std::printf("%-6u %-8d %-6u %-13s %u\n", e.conn_id, e.pid, e.uid,
				    kTypeNames[e.type & 15], e.handle);
		else
			std::printf("%-6u %-8d %-6u %-13s %-7u %s\n", e.conn_id, e.pid, e.uid,
				    kTypeNames[e.type & 15], e.handle, d.c_str());
	}
	return 0;
}

int cmd_daemon(const std::string &what)
{
	auto p = daemon::resolve_paths();
	if (!p) {
		std::fprintf(stderr, "uabi: socket path: %s\n", std::strerror(p.error()));
		return kExitFail;
	}
	if (what == "start") {
		if (auto c = daemon::connect(*p, daemon::kHelloAdmin)) {
			std::printf("uabid already running: pid %u, socket %s\n",
				    c->hello().daemon_pid, p->socket.c_str());
			return 0;
		}
		auto c = daemon::connect_or_start(*p, daemon::kHelloAdmin);
		if (!c) {
			std::fprintf(stderr, "uabi: cannot start uabid: %s (log: %s)\n",
				     std::strerror(c.error()), p->log.c_str());
			return kExitFail;
		}
		std::printf("uabid started: pid %u, socket %s, log %s\n", c->hello().daemon_pid,
			    p->socket.c_str(), p->log.c_str());
		return 0;
	}
	if (what == "stop") {
		auto c = daemon::connect(*p, daemon::kHelloAdmin);
		if (!c) {
			if (c.error() == ENOENT || c.error() == ECONNREFUSED) {
				std::printf("uabid is not running (socket %s)\n",
					    p->socket.c_str());
				return 0;
			}
			// A uabid of another build (protocol version) still stops:
			// the socket's peer credentials name it, and it ends on
			// SIGTERM as on a shutdown request.
			if (c.error() == EPROTONOSUPPORT)
				return stop_other_version(*p);
			not_running(*p, c.error());
			return kExitFail;
		}
		unsigned pid = c->hello().daemon_pid;
		if (auto s = daemon::shutdown(std::move(*c)); !s) {
			std::fprintf(stderr, "uabi: stopping uabid (pid %u): %s\n", pid,
				     std::strerror(s.error()));
			return kExitFail;
		}
		std::printf("uabid stopped (pid %u)\n", pid);
		return 0;
	}
	std::fprintf(stderr, "uabi: daemon: unknown action '%s' (start or stop)\n", what.c_str());
	return kExitUsage;
}

// The drop-in libibverbs.so.1 `uabi run` preloads: UABI_VERBS_LIB (set but
// empty: none), else the build tree's when this uabi runs from there, else
// the one of the prefix this uabi is installed in.  False, with a message
// on stderr, when there is none.
bool verbs_library(std::string *out)
{
	if (const char *lib = std::getenv("UABI_VERBS_LIB")) {
		*out = lib;
		return true;
	}
	if (*UABI_VERBS_LIB && paths::in_build_tree()) {
		*out = UABI_VERBS_LIB;
		return true;
	}
	std::string where;
	std::string prefix = paths::install_prefix(&where);
	if (prefix.empty()) {
		std::fprintf(stderr,
			     "uabi: run: cannot tell where rdma-uabi is installed (%s is in\n"
			     "no bin/ of an installation); set UABI_VERBS_LIB to the drop-in\n"
			     "libibverbs.so.1\n",
			     where.c_str());
		return false;
	}
	std::string lib = paths::verbs_library_under(prefix);
	if (::access(lib.c_str(), R_OK) != 0) {
		std::fprintf(stderr, "uabi: run: the drop-in library %s: %s\n", lib.c_str(),
			     std::strerror(errno));
		return false;
	}
	// ld.so splits LD_PRELOAD at spaces and colons.
	if (lib.find_first_of(" :") != std::string::npos) {
		std::fprintf(stderr,
			     "uabi: run: %s contains a space or a colon, which LD_PRELOAD\n"
			     "cannot carry; install rdma-uabi under another path\n",
			     lib.c_str());
		return false;
	}
	*out = lib;
	return true;
}

// The umad shim `uabi run` preloads after the drop-in library: the same
// rules as verbs_library(), UABI_UMAD_LIB overriding (empty: none).
bool umad_library(std::string *out)
{
	if (const char *lib = std::getenv("UABI_UMAD_LIB")) {
		*out = lib;
		return true;
	}
	if (*UABI_UMAD_LIB && paths::in_build_tree()) {
		*out = UABI_UMAD_LIB;
		return true;
	}
	std::string prefix = paths::install_prefix();
	if (prefix.empty()) {
		out->clear();	// verbs_library() already said why
		return true;
	}
	std::string lib = paths::umad_library_under(prefix);
	if (::access(lib.c_str(), R_OK) != 0) {
		std::fprintf(stderr, "uabi: run: the umad shim %s: %s\n", lib.c_str(),
			     std::strerror(errno));
		return false;
	}
	*out = lib;
	return true;
}

// The ucma shim `uabi run` preloads for librdmacm (docs/cm.md): the same
// rules, UABI_RDMACM_LIB overriding (empty: none).
bool rdmacm_library(std::string *out)
{
	if (const char *lib = std::getenv("UABI_RDMACM_LIB")) {
		*out = lib;
		return true;
	}
	if (*UABI_RDMACM_LIB && paths::in_build_tree()) {
		*out = UABI_RDMACM_LIB;
		return true;
	}
	std::string prefix = paths::install_prefix();
	if (prefix.empty()) {
		out->clear();
		return true;
	}
	std::string lib = paths::rdmacm_library_under(prefix);
	if (::access(lib.c_str(), R_OK) != 0) {
		std::fprintf(stderr, "uabi: run: the ucma shim %s: %s\n", lib.c_str(),
			     std::strerror(errno));
		return false;
	}
	*out = lib;
	return true;
}

int cmd_run(char **argv)
{
	if (!argv || !argv[0]) {
		std::fprintf(stderr, "uabi: run: no command given (uabi run [--] CMD [ARGS...])\n");
		return kExitUsage;
	}
	std::string preload;
	if (!verbs_library(&preload))
		return kExitFail;
	auto r = resolve_backend();
	if (!r)
		return kExitUsage;
	if (auto m = fsview::mode_from_env(); !m) {
		std::fprintf(stderr, "uabi: UABI_FSVIEW: auto|namespace|sysfs-path|off\n");
		return kExitUsage;
	}
	// Pin what "auto" resolved to now, so CMD and everything it starts
	// agree on one backend (and one daemon).
	::setenv("UABI_BACKEND", backend_name(r->backend), 1);
	if (r->backend == Backend::Daemon) {
		auto p = daemon::resolve_paths();
		if (!p) {
			std::fprintf(stderr, "uabi: socket path: %s\n", std::strerror(p.error()));
			return kExitFail;
		}
		::setenv("UABI_SOCKET", p->socket.c_str(), 1);
	}
	// Unmodified libibverbs programs get the drop-in library first, so
	// that their ibv_* calls reach the backend chosen above, then the umad
	// shim (docs/fsview.md).
	std::string umad_lib;
	if (!umad_library(&umad_lib))
		return kExitFail;
	if (!umad_lib.empty())
		preload += (preload.empty() ? "" : ":") + umad_lib;
	std::string rdmacm_lib;
	if (!rdmacm_library(&rdmacm_lib))
		return kExitFail;
	if (!rdmacm_lib.empty())
		preload += (preload.empty() ? "" : ":") + rdmacm_lib;
	if (const char *old = std::getenv("LD_PRELOAD"); old && *old)
		preload += (preload.empty() ? "" : ":") + std::string(old);
	if (!preload.empty())
		::setenv("LD_PRELOAD", preload.c_str(), 1);
	// The device as the file system shows it: /dev/infiniband and the
	// sysfs tree, made from the device's answers, seen by CMD and all it
	// starts (UABI_FSVIEW=off: nothing).
	if (auto v = fsview::prepare_for_run(r->backend); !v)
		std::fprintf(stderr, "uabi: run: no view of the device in /sys and /dev: %s\n",
			     std::strerror(v.error()));
	else if (!v->reason.empty())
		std::fprintf(stderr, "uabi: run: %s; the device's sysfs tree is in SYSFS_PATH=%s\n",
			     v->reason.c_str(), v->root.c_str());
	::execvp(argv[0], argv);
	std::fprintf(stderr, "uabi: run: %s: %s\n", argv[0], std::strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

void usage(FILE *f)
{
	std::fprintf(f, "usage: uabi COMMAND [OPTIONS]\n"
			"  status             backend in use, daemon, devices, contexts, objects\n"
			"  objects            table of live objects (daemon: all you may see;\n"
			"                     kernel: your user's)\n"
			"  run [--] CMD ARGS  run CMD on the drop-in libibverbs (LD_PRELOAD)\n"
			"                     with UABI_BACKEND / UABI_SOCKET set, seeing the\n"
			"                     device in /dev/infiniband and /sys (UABI_FSVIEW)\n"
			"  daemon start|stop  start or stop uabid\n"
			"  link [add NAME netdev IFNAME | del NAME]\n"
			"                     RoCE devices on a network interface (uabid)\n"
			"options (before or after the command; for run, before CMD):\n"
			"  --json             machine-readable output (status, objects)\n"
			"  --socket PATH      the daemon's socket (sets UABI_SOCKET)\n"
			"  --backend NAME     auto|inproc|daemon|kernel (sets UABI_BACKEND)\n"
			"  --version          print the version\n"
			"  -h, --help         print this help\n"
			"exit status: 0 ok, 1 failed, 2 usage, 3 backend not running\n"
			"See uabi(1).\n");
}

// The option at argv[*i] (and its value): 0 taken, -1 not an option of
// ours, else the exit status of a usage error.
int parse_option(int argc, char **argv, int *i, bool *help, bool *version)
{
	const std::string a = argv[*i];
	std::string name = a, value;
	bool has_value = false;
	if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
		name = a.substr(0, eq);
		value = a.substr(eq + 1);
		has_value = true;
	}
	if (name == "--socket" || name == "--backend") {
		if (!has_value) {
			if (*i + 1 >= argc)
				return usage_error("option '" + name + "' needs a value");
			value = argv[++*i];
		}
		if (value.empty())
			return usage_error("option '" + name + "' needs a non-empty value");
		if (name == "--backend" && value != "auto" && value != "inproc" &&
		    value != "daemon" && value != "kernel")
			return usage_error("--backend: unknown backend '" + value +
					   "' (auto, inproc, daemon or kernel)");
		::setenv(name == "--socket" ? "UABI_SOCKET" : "UABI_BACKEND", value.c_str(), 1);
		return 0;
	}
	if (has_value)
		return usage_error("option '" + name + "' takes no value");
	if (a == "--json")
		g_json = true;
	else if (a == "-h" || a == "--help")
		*help = true;
	else if (a == "--version" || a == "-V")
		*version = true;
	else
		return -1;
	return 0;
}

int print_version()
{
	std::printf("uabi (rdma-uabi) %s\n", UABI_VERSION);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	// Words are the command and its arguments; options may sit anywhere
	// among them.  `run`'s command starts at its first word or after "--"
	// and keeps everything that follows.
	std::vector<std::string> words;
	char **run_argv = nullptr;
	bool help = false, version = false, options_done = false;
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		const bool is_option = !options_done && a.size() > 1 && a[0] == '-';
		if (!words.empty() && words[0] == "run" && (!is_option || a == "--")) {
			run_argv = argv + i + (a == "--" && !options_done ? 1 : 0);
			break;
		}
		if (!is_option) {
			words.push_back(a);
			continue;
		}
		if (a == "--") {
			options_done = true;
			continue;
		}
		int r = parse_option(argc, argv, &i, &help, &version);
		if (r > 0)
			return r;
		if (r < 0)
			return usage_error("unknown option '" + a + "'");
	}
	if (help) {
		usage(stdout);
		return 0;
	}
	if (version)
		return print_version();
	if (words.empty()) {
		std::fprintf(stderr, "uabi: no command given\n");
		usage(stderr);
		return kExitUsage;
	}
	const std::string &cmd = words[0];
	auto extra = [&](std::size_t allowed) {
		return words.size() > allowed
			       ? usage_error(cmd + ": unexpected argument '" + words[allowed] + "'")
			       : 0;
	};
	if (cmd == "status" || cmd == "objects") {
		if (int e = extra(1))
			return e;
		return cmd == "status" ? cmd_status() : cmd_objects();
	}
	if (cmd == "daemon") {
		if (words.size() < 2)
			return usage_error("daemon: start or stop?");
		if (int e = extra(2))
			return e;
		return cmd_daemon(words[1]);
	}
	if (cmd == "run")
		return cmd_run(run_argv);
	if (cmd == "link") {
		auto r = resolve_backend();
		if (!r)
			return kExitUsage;
		return cmd_link(words, r->backend, g_json);
	}
	if (cmd == "help") {
		usage(stdout);
		return 0;
	}
	if (cmd == "version")
		return print_version();
	return usage_error("unknown command '" + cmd + "'");
}
