// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Control round trip: the in-process core against uabid over its socket,
// for a trivial command (DEVICE COUNTERS) and for PD alloc + dealloc (two
// round trips).  The daemon variants differ in how long the client polls
// for the reply before sleeping (default: adaptive; spin:N always N us,
// spin:0 never); the daemon's own polling is set by UABI_DAEMON_SPIN_US in
// the environment of the daemon this starts (unset: adaptive).  Messages
// without fds take the request slot (shared memory, docs/daemon.md) unless
// the variant says "socket".
// Numbers and the machine they came from: docs/daemon.md.
//
// Uses $UABI_SOCKET if set, else a daemon of its own in a temporary
// directory, stopped at the end.
#include <uabi/client.hpp>
#include <uabi/transport_daemon.hpp>

#include "bench_daemon.hpp"

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace uabi;

uabi_bench::PrivateDaemon g_daemon;
bool g_failed = false;

// Any failure makes the exit status non-zero (the ctest smoke run).
void fail(benchmark::State &st, const char *what)
{
	g_failed = true;
	st.SkipWithError(what);
}

std::unique_ptr<Context> open_ctx(Backend b, int spin_us, bool slot)
{
	std::unique_ptr<Transport> t;
	if (b == Backend::Daemon) {
		auto d = DaemonTransport::open();
		if (!d)
			return nullptr;
		if (spin_us >= 0)
			(*d)->set_spin_us(unsigned(spin_us));
		if (slot && !(*d)->has_slot())
			return nullptr;
		(*d)->use_slot(slot);
		t = std::move(*d);
	} else {
		auto i = open_transport(b);
		if (!i)
			return nullptr;
		t = std::move(*i);
	}
	return std::make_unique<Context>(std::move(t));
}

void BM_Counters(benchmark::State &st, Backend b, int spin_us, bool slot)
{
	auto ctx = open_ctx(b, spin_us, slot);
	if (!ctx) {
		fail(st, "cannot open the backend");
		return;
	}
	// One encoded message, executed again and again: the transport's cost,
	// not the encoder's.
	Message m;
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS, kDeviceHandle);
	c.add_out<uabi_counters>(UABI_ATTR_DEVICE_COUNTERS);
	m.add(std::move(c));
	auto &raw = m.raw();
	for (auto _ : st) {
		int r = ctx->execute_raw(raw);
		if (r) {
			fail(st, "COUNTERS failed");
			break;
		}
	}
}

void BM_PdAllocDealloc(benchmark::State &st, Backend b, int spin_us, bool slot)
{
	auto ctx = open_ctx(b, spin_us, slot);
	if (!ctx) {
		fail(st, "cannot open the backend");
		return;
	}
	for (auto _ : st) {
		auto pd = ctx->alloc_pd();
		if (!pd || !ctx->dealloc_pd(*pd)) {
			fail(st, "PD alloc/dealloc failed");
			break;
		}
	}
}

void relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

// The floor of any call into another process that both ends poll for:
// one cache line to it and one back.  A child process echoes a counter
// through a shared page (each end writes its own line); per iteration, one
// round trip.  The child gives up after 5 s without a new value.
void BM_LineRoundTrip(benchmark::State &st)
{
	void *p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fail(st, "mmap failed");
		return;
	}
	auto *ping = static_cast<std::atomic<std::uint32_t> *>(p);
	auto *pong = ping + 16; // the next cache line
	const pid_t child = ::fork();
	if (child < 0) {
		::munmap(p, 4096);
		fail(st, "fork failed");
		return;
	}
	if (child == 0) {
		std::uint32_t last = 0;
		auto idle_since = std::chrono::steady_clock::now();
		for (unsigned k = 0;; k++) {
			std::uint32_t v = ping->load(std::memory_order_acquire);
			if (v == UINT32_MAX)
				_exit(0);
			if (v != last) {
				last = v;
				pong->store(v, std::memory_order_release);
				idle_since = std::chrono::steady_clock::now();
			} else if ((k & 1023) == 0 &&
				   std::chrono::steady_clock::now() - idle_since > std::chrono::seconds(5)) {
				_exit(1);
			}
			relax();
		}
	}
	std::uint32_t seq = 0;
	bool good = true;
	for (auto _ : st) {
		ping->store(++seq, std::memory_order_release);
		auto t0 = std::chrono::steady_clock::now();
		for (unsigned k = 0; pong->load(std::memory_order_acquire) != seq; k++) {
			relax();
			if ((k & 1023) == 1023 &&
			    std::chrono::steady_clock::now() - t0 > std::chrono::seconds(2)) {
				good = false;
				break;
			}
		}
		if (!good)
			break;
	}
	ping->store(UINT32_MAX, std::memory_order_release);
	int status = 0;
	::waitpid(child, &status, 0);
	::munmap(p, 4096);
	if (!good)
		fail(st, "the echoing process stopped answering");
}

void register_all()
{
	struct Variant {
		const char *name;
		Backend b;
		int spin;
		bool slot;
	};
	// spin: -1 the transport's default (adaptive up to 50 us unless
	// UABI_SPIN_US says otherwise), N >= 0 always poll N us.
	const Variant vs[] = {
		{"inproc", Backend::Inproc, -1, false},
		{"daemon/default", Backend::Daemon, -1, true},
		{"daemon/spin:0", Backend::Daemon, 0, true},
		{"daemon/spin:50", Backend::Daemon, 50, true},
		{"daemon/socket", Backend::Daemon, -1, false},
		{"daemon/socket/spin:0", Backend::Daemon, 0, false},
		{"daemon/socket/spin:50", Backend::Daemon, 50, false},
	};
	for (const Variant &v : vs)
		benchmark::RegisterBenchmark((std::string("BM_Counters/") + v.name).c_str(),
					     BM_Counters, v.b, v.spin, v.slot)
			->UseRealTime();
	for (const Variant &v : vs)
		benchmark::RegisterBenchmark((std::string("BM_PdAllocDealloc/") + v.name).c_str(),
					     BM_PdAllocDealloc, v.b, v.spin, v.slot)
			->UseRealTime();
	benchmark::RegisterBenchmark("BM_LineRoundTrip", BM_LineRoundTrip)->UseRealTime();
}

} // namespace

int main(int argc, char **argv)
{
	if (!g_daemon.start())
		return 1;
	benchmark::Initialize(&argc, argv);
	register_all();
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	g_daemon.stop();
	return g_failed ? 1 : 0;
}
