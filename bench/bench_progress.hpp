// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A heartbeat on stderr for long runs: with repetitions interleaved at
// random, Google Benchmark prints nothing until every benchmark is done.
// On when stderr is a terminal or UABI_BENCH_PROGRESS is set; at most one
// line every few seconds, naming the benchmark that is running.
#ifndef UABI_BENCH_PROGRESS_HPP
#define UABI_BENCH_PROGRESS_HPP

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace uabi_bench
{

inline void progress(const std::string &what)
{
	using Clock = std::chrono::steady_clock;
	static const bool on = isatty(2) || std::getenv("UABI_BENCH_PROGRESS");
	static const Clock::time_point start = Clock::now();
	static Clock::time_point last = start;
	if (!on)
		return;
	auto now = Clock::now();
	if (now - last < std::chrono::seconds(5))
		return;
	last = now;
	std::fprintf(stderr, "  ... %3.0f s: %s\n",
		     std::chrono::duration<double>(now - start).count(), what.c_str());
}

} // namespace uabi_bench

#endif
