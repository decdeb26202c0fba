// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabi link: RoCE devices on a network interface (docs/wire.md, uabi(1)).
//
//   uabi link                              list the devices
//   uabi link add NAME netdev IFNAME       a RoCE device on IFNAME
//   uabi link del NAME
// As `rdma link add NAME type rxe netdev IFNAME` does for Linux's rxe.  On
// uabid (started if needed for add), by its owner or root; on the kernel
// module, by CAP_NET_ADMIN (an interface of the initial network namespace);
// the in-process backend takes UABI_LINKS=NAME:IFNAME instead.  Deleting
// a device that programs still use tells their CM IDs DEVICE_REMOVAL and
// their contexts IBV_EVENT_DEVICE_FATAL, and waits (UABI_LINK_DEL_WAIT seconds, 10 if unset) for them to close it.
#include "uabi_tool.hpp"

#include <uabi/transport_daemon.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace uabi::tool {

namespace {

std::string addr_text(const std::uint8_t *a, std::uint16_t port)
{
	static const std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const std::uint8_t zero[16] = {};
	if (!std::memcmp(a, zero, 16))
		return "-";
	char b[INET6_ADDRSTRLEN + 16];
	if (!std::memcmp(a, prefix, 12)) {
		inet_ntop(AF_INET, a + 12, b, sizeof(b));
		return std::string(b) + ":" + std::to_string(port);
	}
	inet_ntop(AF_INET6, a, b, sizeof(b));
	return "[" + std::string(b) + "]:" + std::to_string(port);
}

// The module's list has the head of uabid's layout, field for field (uabid
// adds its steering and CM counts after it).
static_assert(sizeof(uabi_link_info) <= sizeof(daemon::LinkEntry));
static_assert(offsetof(uabi_link_info, netdev) == offsetof(daemon::LinkEntry, netdev));
static_assert(offsetof(uabi_link_info, addr) == offsetof(daemon::LinkEntry, addr));
static_assert(offsetof(uabi_link_info, relay_error) == offsetof(daemon::LinkEntry, relay_error));
static_assert(offsetof(uabi_link_info, rx_dropped) == offsetof(daemon::LinkEntry, rx_dropped));

int list(const Result<std::vector<daemon::LinkEntry>> &l, bool json)
{
	if (!l) {
		std::fprintf(stderr, "uabi: link: %s\n", std::strerror(l.error()));
		return kExitFail;
	}
	std::string o = "[";
	for (const daemon::LinkEntry &e : *l) {
		const std::string name(e.name, strnlen(e.name, sizeof(e.name)));
		const std::string netdev(e.netdev, strnlen(e.netdev, sizeof(e.netdev)));
		const char *state = !e.roce || e.carrier ? "ACTIVE" : "DOWN";
		const char *phys = !e.roce || e.carrier ? "LINK_UP" : "DISABLED";
		if (json) {
			o += o.size() > 1 ? "," : "";
			o += "{\"ifindex\":" + std::to_string(e.index) + ",\"ifname\":" + json_str(name) +
			     ",\"port\":1,\"state\":" + json_str(state) +
			     ",\"physical_state\":" + json_str(phys);
			if (e.roce)
				o += ",\"netdev\":" + json_str(netdev) + ",\"mtu\":" + std::to_string(e.ip_mtu) +
				     ",\"gids\":" + std::to_string(e.num_gids) +
				     ",\"receives_at\":" + json_str(addr_text(e.addr, e.port)) +
				     ",\"receive_error\":" +
				     json_str(e.relay_error ? std::strerror(-e.relay_error) : "") +
				     ",\"steering\":" + std::string(e.steering ? "true" : "false") +
				     ",\"steered_qps\":" + std::to_string(e.steered_qps) +
				     ",\"relayed\":" + std::to_string(e.rx_relayed) +
				     ",\"dropped\":" + std::to_string(e.rx_dropped) +
				     ",\"qp1_in\":" + std::to_string(e.qp1_in) +
				     ",\"qp1_refused\":" + std::to_string(e.qp1_refused) +
				     ",\"cm_taken\":" + std::to_string(e.cm_taken) +
				     ",\"cm_dropped\":" + std::to_string(e.cm_dropped) +
				     ",\"cm_sent\":" + std::to_string(e.cm_sent) +
				     ",\"cm_resent\":" + std::to_string(e.cm_resent) +
				     ",\"cm_timed_out\":" + std::to_string(e.cm_timed_out);
			o += ",\"contexts\":" + std::to_string(e.contexts) + "}";
			continue;
		}
		std::printf("link %s/1 state %s physical_state %s", name.c_str(), state, phys);
		if (e.roce) {
			std::printf(" netdev %s mtu %u gids %u receives %s", netdev.c_str(), e.ip_mtu,
				    e.num_gids, addr_text(e.addr, e.port).c_str());
			if (e.relay_error)
				std::printf(" (cannot: %s)", std::strerror(-e.relay_error));
			if (e.steering)
				std::printf(" steered %u", e.steered_qps);
			else if (e.steer_error)
				std::printf(" (steering stopped: %s)", std::strerror(-e.steer_error));
			std::printf(" relayed %llu dropped %llu", (unsigned long long)e.rx_relayed,
				    (unsigned long long)e.rx_dropped);
			std::printf(" qp1 in %llu refused %llu cm taken %llu dropped %llu sent %llu"
				    " resent %llu timed_out %llu",
				    (unsigned long long)e.qp1_in, (unsigned long long)e.qp1_refused,
				    (unsigned long long)e.cm_taken, (unsigned long long)e.cm_dropped,
				    (unsigned long long)e.cm_sent, (unsigned long long)e.cm_resent,
				    (unsigned long long)e.cm_timed_out);
		}
		std::printf(" contexts %u\n", e.contexts);
	}
	if (json)
		std::printf("%s]\n", o.c_str());
	return 0;
}

Result<std::vector<daemon::LinkEntry>> kernel_links()
{
	auto k = KernelTransport::links();
	if (!k)
		return make_error(k.error());
	std::vector<daemon::LinkEntry> out(k->size());
	for (std::size_t i = 0; i < k->size(); i++)
		std::memcpy(&out[i], &(*k)[i], sizeof((*k)[i]));
	// The CM's counts (a module without the call: zeros, as before); a
	// device that came or went between the two calls keeps zeros.
	if (auto c = KernelTransport::link_cm_counts())
		for (std::size_t i = 0; i < out.size() && i < c->size(); i++) {
			const uabi_link_cm_info &m = (*c)[i];
			if (std::strncmp(m.name, out[i].name, sizeof(m.name)))
				continue;
			out[i].qp1_in = m.qp1_in;
			out[i].qp1_refused = m.qp1_refused;
			out[i].cm_taken = m.cm_taken;
			out[i].cm_dropped = m.cm_dropped;
			out[i].cm_sent = m.cm_sent;
			out[i].cm_resent = m.cm_resent;
			out[i].cm_timed_out = m.cm_timed_out;
		}
	return out;
}

int explain(const char *what, const std::string &name, int err, bool kernel = false)
{
	const char *why = std::strerror(err);
	switch (err) {
	case EEXIST:
		why = "a device of that name exists";
		break;
	case ENODEV:
		why = what[0] == 'a' ? (kernel ? "no such network interface in the initial network namespace"
					       : "no such network interface in uabid's network namespace")
				     : "no such device";
		break;
	case ENOSPC:
		why = "no room for another device (uabi_sw0 and three links at most)";
		break;
	case EBUSY:
		why = "contexts are still open on it";
		break;
	case EOPNOTSUPP:
		why = "not a RoCE device";
		break;
	case EPERM:
		why = kernel ? "only CAP_NET_ADMIN may change the module's devices"
			     : "only uabid's owner or root may change its devices";
		break;
	case EINVAL:
		why = "invalid name (letters, digits, '_', '-', '.'; at most 63) or interface";
		break;
	}
	std::fprintf(stderr, "uabi: link %s %s: %s\n", what, name.c_str(), why);
	return kExitFail;
}

// Deletes a device with @del (a call of the backend), as Linux removes
// one: the first call tells the CM IDs through it DEVICE_REMOVAL and the
// contexts on it IBV_EVENT_DEVICE_FATAL, and while programs still have
// contexts on it (EBUSY) it asks again, every
// 50 ms, until they have closed them or UABI_LINK_DEL_WAIT seconds (10)
// have gone.  0 or the last errno.
template <typename Del>
int del_waiting(const std::string &name, Del del)
{
	double wait_s = 10;
	if (const char *w = std::getenv("UABI_LINK_DEL_WAIT")) {
		char *end = nullptr;
		double v = std::strtod(w, &end);
		if (end != w && !*end && v >= 0 && v <= 3600)
			wait_s = v;
	}
	const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
	bool told = false;
	for (;;) {
		int err = del();
		if (err != EBUSY || std::chrono::steady_clock::now() >= until)
			return err;
		if (!told) {
			std::fprintf(stderr,
				     "uabi: link del %s: in use; its CM IDs were told DEVICE_REMOVAL and "
				     "its contexts IBV_EVENT_DEVICE_FATAL, waiting up to %g s for them "
				     "to close\n",
				     name.c_str(), wait_s);
			told = true;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	}
}

} // namespace

int cmd_link(const std::vector<std::string> &words, Backend backend, bool json)
{
	// words[0] == "link"
	const std::string what = words.size() > 1 ? words[1] : "show";
	if (what == "add" && !(words.size() == 5 && words[3] == "netdev"))
		return usage_error("usage: uabi link add NAME netdev IFNAME");
	if (what == "del" && words.size() != 3)
		return usage_error("usage: uabi link del NAME");
	if ((what == "show" || what == "list") && words.size() > 2)
		return usage_error("link: unexpected argument '" + words[2] + "'");
	if (what != "add" && what != "del" && what != "show" && what != "list")
		return usage_error("link: unknown action '" + what + "' (add, del or show)");
	if (backend == Backend::Inproc) {
		if (what == "add" || what == "del") {
			std::fprintf(stderr, "uabi: link: the in-process backend has no devices to "
					     "change: each process makes its own from "
					     "UABI_LINKS=NAME:IFNAME[,...]\n");
			return kExitFail;
		}
		auto names = InprocTransport::device_names();
		if (!names) {
			std::fprintf(stderr, "uabi: link: %s\n", std::strerror(names.error()));
			return kExitFail;
		}
		for (const std::string &n : *names)
			std::printf("link %s/1 (in-process: UABI_LINKS)\n", n.c_str());
		return 0;
	}
	if (backend == Backend::Kernel) {
		if (what == "add") {
			if (auto r = KernelTransport::link_add(words[2], words[4]); !r)
				return explain("add", words[2], r.error(), true);
		} else if (what == "del") {
			if (int e = del_waiting(words[2], [&] {
				    auto r = KernelTransport::link_del(words[2]);
				    return r ? 0 : r.error();
			    }))
				return explain("del", words[2], e, true);
			return 0;
		}
		return list(kernel_links(), json);
	}
	auto p = daemon::resolve_paths();
	if (!p) {
		std::fprintf(stderr, "uabi: socket path: %s\n", std::strerror(p.error()));
		return kExitFail;
	}
	// Adding starts uabid: the device lives in it.
	auto c = what == "add" ? daemon::connect_or_start(*p, daemon::kHelloAdmin)
			       : daemon::connect(*p, daemon::kHelloAdmin);
	if (!c) {
		if ((what == "show" || what == "list") && c.error() != EPROTONOSUPPORT) {
			// No daemon: only what a new one would have.
			std::printf("link uabi_sw0/1 state ACTIVE physical_state LINK_UP "
				    "(uabid is not running)\n");
			return 0;
		}
		if (c.error() == EPROTONOSUPPORT)
			std::fprintf(stderr,
				     "uabi: link: uabid at %s is of another version (its protocol is not this "
				     "uabi's); `uabi daemon stop` stops it\n",
				     p->socket.c_str());
		else
			std::fprintf(stderr, "uabi: link: cannot reach uabid at %s: %s\n", p->socket.c_str(),
				     std::strerror(c.error()));
		return kExitNotRunning;
	}
	if (what == "add") {
		if (auto r = daemon::link_add(*c, words[2], words[4]); !r)
			return explain("add", words[2], r.error());
		return list(daemon::query_links(*c), json);
	}
	if (what == "del") {
		if (int e = del_waiting(words[2], [&] {
			    auto r = daemon::link_del(*c, words[2]);
			    return r ? 0 : r.error();
		    }))
			return explain("del", words[2], e);
		return 0;
	}
	return list(daemon::query_links(*c), json);
}

} // namespace uabi::tool
