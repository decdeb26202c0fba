// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The view `uabi run` gives the program it starts (docs/fsview.md).
#include <uabi/fsview.hpp>
#include <uabi/transport_daemon.hpp>

namespace uabi::fsview {

Result<Entered> prepare_for_run(Backend b)
{
	auto mode = mode_from_env();
	if (!mode)
		return make_error(mode.error());
	if (*mode == Mode::Off || already_inside())
		return Entered{};
	Snapshot snap;
	{
		// Asked before any namespace is made: a daemon started here runs
		// outside it.  The context is closed before the program starts.
		auto ctx = Context::open(b);
		if (!ctx)
			return make_error(ctx.error());
		auto s = query(*ctx);
		if (!s)
			return make_error(s.error());
		snap = std::move(*s);
		// The user's counters as they stand now, for counters/*; a
		// device without an arena counts nothing (all 0).
		if (auto t = Traffic::map(*ctx))
			snap.traffic = std::move(*t);
	}
	NodeSources src;
	if (b == Backend::Kernel)
		src.uverbs = UABI_DEVICE_PATH;
	// librdmacm's node: `uabi run` preloads the ucma shim, which serves
	// its opens by path (docs/cm.md); the node makes it visible.
	src.rdma_cm = "/dev/null";
	auto tree = make_tree(snap, src);
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
