// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The private uabid of a benchmark binary: unless UABI_SOCKET is already
// set, its socket goes in a fresh temporary directory (the daemon starts on
// demand at the first connection); stop() asks that daemon to exit, with
// the uabi tool (UABI_TOOL_PATH), and removes the directory.
#ifndef UABI_BENCH_DAEMON_HPP
#define UABI_BENCH_DAEMON_HPP

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace uabi_bench
{

class PrivateDaemon
{
      public:
	// false (and a message) if the directory cannot be made.
	bool start()
	{
		if (std::getenv("UABI_SOCKET"))
			return true;
		char tmpl[] = "/tmp/uabi-bench-XXXXXX";
		if (!mkdtemp(tmpl)) {
			std::perror("mkdtemp");
			return false;
		}
		dir_ = tmpl;
		setenv("UABI_SOCKET", (dir_ + "/uabid.sock").c_str(), 1);
		return true;
	}

	void stop()
	{
		if (dir_.empty())
			return;
		std::string cmd = std::string("'") + UABI_TOOL_PATH + "' --socket '" + dir_ +
				  "/uabid.sock' daemon stop >/dev/null 2>&1";
		if (std::system(cmd.c_str()) != 0) {
			// not running (never started, or already gone)
		}
		std::error_code ec;
		std::filesystem::remove_all(dir_, ec);
		dir_.clear();
	}

      private:
	std::string dir_;
};

} // namespace uabi_bench

#endif
