// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabi: look at and drive the rdma-uabi backends (docs/daemon.md).
//
//   uabi [--json] [--socket PATH] [--backend NAME] status
//   uabi [--json] [--socket PATH] objects
//   uabi [--socket PATH] [--backend NAME] run -- CMD [ARGS...]
//   uabi [--socket PATH] daemon start|stop
#include <uabi/client.hpp>
#include <uabi/transport_daemon.hpp>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace uabi;

// Exit codes: 0 fine, 1 failed, 2 usage, 3 the backend is not running.
constexpr int kExitFail = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNotRunning = 3;

bool g_json = false;

const char *const kTypeNames[16] = {
	"?",   "device", "pd",	 "mr", "cq",	 "comp_channel", "async_event", "qp",
	"srq", "ah",	 "xrcd", "mw", "type12", "type13",	 "type14",	"type15"};

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

std::string json_str(const char *s)
{
	std::string o = "\"";
	for (; *s; s++) {
		unsigned char c = static_cast<unsigned char>(*s);
		if (c == '"' || c == '\\') {
			o += '\\';
			o += char(c);
		} else if (c < 0x20) {
			char b[8];
			std::snprintf(b, sizeof(b), "\\u%04x", c);
			o += b;
		} else {
			o += char(c);
		}
	}
	return o + "\"";
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
	if (!b)
		return make_error(b.error());
	if (*b != Backend::Auto)
		return Resolved{*b, "UABI_BACKEND=" + std::string(backend_name(*b))};
	if (::access(UABI_DEVICE_PATH, F_OK) == 0)
		return Resolved{Backend::Kernel, "auto: " UABI_DEVICE_PATH " present"};
	return Resolved{Backend::Daemon, "auto: " UABI_DEVICE_PATH " not present"};
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
	if (!r) {
		std::fprintf(stderr, "uabi: UABI_BACKEND: %s\n", std::strerror(r.error()));
		return kExitUsage;
	}
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
	if (r && r->backend == Backend::Inproc) {
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
	std::fprintf(stderr, "uabi: daemon start|stop\n");
	return kExitUsage;
}

int cmd_run(char **argv)
{
	if (!argv[0]) {
		std::fprintf(stderr, "uabi: run -- CMD [ARGS...]\n");
		return kExitUsage;
	}
	auto r = resolve_backend();
	if (!r) {
		std::fprintf(stderr, "uabi: UABI_BACKEND: %s\n", std::strerror(r.error()));
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
	// that their ibv_* calls reach the backend chosen above.
	// UABI_VERBS_LIB names another copy; set but empty, it preloads nothing.
	const char *lib = std::getenv("UABI_VERBS_LIB");
	std::string preload = lib ? lib : UABI_VERBS_LIB;
	if (const char *old = std::getenv("LD_PRELOAD"); old && *old)
		preload += (preload.empty() ? "" : ":") + std::string(old);
	if (!preload.empty())
		::setenv("LD_PRELOAD", preload.c_str(), 1);
	::execvp(argv[0], argv);
	std::fprintf(stderr, "uabi: run: %s: %s\n", argv[0], std::strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

void usage(FILE *f)
{
	std::fprintf(f, "usage: uabi [--json] [--socket PATH] [--backend NAME] COMMAND\n"
			"  status             backend in use, daemon, devices, contexts, objects\n"
			"  objects            table of live objects (daemon: all you may see;\n"
			"                     kernel: your user's)\n"
			"  run -- CMD ARGS    run CMD on the drop-in libibverbs (LD_PRELOAD)\n"
			"                     with UABI_BACKEND / UABI_SOCKET set\n"
			"  daemon start|stop  start or stop uabid\n"
			"options:\n"
			"  --json             machine-readable output (status, objects)\n"
			"  --socket PATH      the daemon's socket (sets UABI_SOCKET)\n"
			"  --backend NAME     auto|inproc|daemon|kernel (sets UABI_BACKEND)\n"
			"exit status: 0 ok, 1 failed, 2 usage, 3 backend not running\n");
}

} // namespace

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		std::string a = argv[i];
		if (a == "--json") {
			g_json = true;
		} else if ((a == "--socket" || a == "--backend") && i + 1 < argc) {
			::setenv(a == "--socket" ? "UABI_SOCKET" : "UABI_BACKEND", argv[++i], 1);
		} else if (a == "-h" || a == "--help") {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return kExitUsage;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return kExitUsage;
	}
	std::string cmd = argv[i++];
	if (cmd == "status" && i == argc)
		return cmd_status();
	if (cmd == "objects" && i == argc)
		return cmd_objects();
	if (cmd == "daemon" && i + 1 == argc)
		return cmd_daemon(argv[i]);
	if (cmd == "run") {
		if (i < argc && std::strcmp(argv[i], "--") == 0)
			i++;
		return cmd_run(argv + i);
	}
	if (cmd == "help") {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return kExitUsage;
}
