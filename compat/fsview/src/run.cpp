// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The view `uabi run` gives the program it starts (docs/fsview.md).
#include <uabi/fsview.hpp>
#include <uabi/transport_daemon.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

namespace uabi::fsview {

namespace {

// The interfaces the backend binds its RoCE devices to, by device name:
// uabid's list of links; in-process, UABI_LINKS (NAME:IFNAME,...), which
// the in-process host reads the same way; the module's list of links.
std::map<std::string, std::string> bound_netdevs(Backend b)
{
	std::map<std::string, std::string> out;
	if (b == Backend::Daemon) {
		auto p = daemon::resolve_paths();
		if (!p)
			return out;
		auto c = daemon::connect(*p, daemon::kHelloAdmin);
		if (!c)
			return out;
		auto l = daemon::query_links(*c);
		if (!l)
			return out;
		for (const daemon::LinkEntry &e : *l)
			if (e.roce)
				out[std::string(e.name, ::strnlen(e.name, sizeof(e.name)))] =
					std::string(e.netdev, ::strnlen(e.netdev, sizeof(e.netdev)));
	} else if (b == Backend::Kernel) {
		auto l = KernelTransport::links();
		if (!l)
			return out;
		for (const uabi_link_info &e : *l)
			if (e.roce)
				out[std::string(e.name, ::strnlen(e.name, sizeof(e.name)))] =
					std::string(e.netdev, ::strnlen(e.netdev, sizeof(e.netdev)));
	} else if (b == Backend::Inproc) {
		const char *env = std::getenv("UABI_LINKS");
		std::string v = env ? env : "";
		std::size_t pos = 0;
		while (pos <= v.size() && !v.empty()) {
			std::size_t end = v.find(',', pos);
			if (end == std::string::npos)
				end = v.size();
			std::string tok = v.substr(pos, end - pos);
			if (auto colon = tok.find(':'); colon != std::string::npos && colon > 0)
				out[tok.substr(0, colon)] = tok.substr(colon + 1);
			pos = end + 1;
		}
	}
	return out;
}

} // namespace

Result<std::vector<Snapshot>> query_all(Backend b)
{
	std::vector<Snapshot> out;
	// Device i: its answers, and the user's counters as they stand now,
	// for counters/* (a device without an arena counts nothing: all 0;
	// only an InfiniBand port has counters, a PMA, to show).
	auto ask = [&](unsigned i) -> Result<void> {
		auto t = open_transport(b, i);
		if (!t)
			return make_error(t.error());
		Context ctx(std::move(*t));
		auto s = query(ctx);
		if (!s)
			return make_error(s.error());
		bool ib = false;
		for (const Port &p : s->ports)
			ib = ib || !is_ethernet(p);
		if (ib)
			if (auto tr = Traffic::map(ctx))
				s->traffic = std::move(*tr);
		out.push_back(std::move(*s));
		return {};
	};
	// Device 0 first: on the daemon backend this starts uabid if needed,
	// before its list of devices is asked for.
	if (auto r = ask(0); !r)
		return make_error(r.error());
	{
		auto names = device_names(b);
		if (!names)
			return make_error(names.error());
		for (unsigned i = 1; i < names->size(); i++)
			if (auto r = ask(i); !r && r.error() != ENODEV)
				return make_error(r.error()); // ENODEV: removed meanwhile, not shown
	}
	if (out.size() > 1) {
		auto bound = bound_netdevs(b);
		for (Snapshot &s : out)
			if (auto it = bound.find(s.name); it != bound.end() && !it->second.empty())
				s.netdev = it->second;
	}
	return out;
}

Result<Entered> prepare_for_run(Backend b)
{
	auto mode = mode_from_env();
	if (!mode)
		return make_error(mode.error());
	if (*mode == Mode::Off || already_inside())
		return Entered{};
	// Asked before any namespace is made: a daemon started here runs
	// outside it.  The contexts are closed before the program starts.
	auto snaps = query_all(b);
	if (!snaps)
		return make_error(snaps.error());
	NodeSources src;
	if (b == Backend::Kernel)
		src.uverbs = UABI_DEVICE_PATH;
	// librdmacm's node: `uabi run` preloads the ucma shim, which serves
	// its opens by path (docs/cm.md); the node makes it visible.
	src.rdma_cm = "/dev/null";
	auto tree = make_tree(*snaps, src);
	if (!tree)
		return make_error(tree.error());
	// The fallback's directory: beside the daemon's socket (docs/daemon.md).
	auto fallback = []() -> Result<std::string> {
		auto paths = daemon::resolve_paths();
		if (!paths)
			return make_error(paths.error());
		if (auto d = daemon::ensure_dir(*paths); !d)
			return make_error(d.error());
		return paths->dir + "/fsview";
	};
	return enter(*tree, *mode, fallback);
}

} // namespace uabi::fsview
