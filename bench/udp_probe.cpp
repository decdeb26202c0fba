// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// What plain UDP sockets do on a link, as the yardstick of the RoCEv2
// numbers (scripts/bench_wire.sh, docs/bench.md "RoCEv2 between two
// namespaces"):
//
//   udp_probe sink PORT SECONDS              counts what arrives; prints MB/s
//   udp_probe stream ADDR PORT SIZE SECONDS  sends SIZE-byte datagrams
//   udp_probe echo PORT COUNT                answers COUNT datagrams
//   udp_probe ping ADDR PORT SIZE COUNT      prints the median half round trip (us)
//
// UDP_PROBE_SPIN=1: echo and ping wait by polling the socket without
// sleeping (MSG_DONTWAIT in a loop, still bounded in time), as perftest
// waits for its completions: a side that sleeps is woken by the
// scheduler, and on a virtual machine whose CPUs halt when idle that
// wake-up can cost tens of microseconds.
//
// The sink measures from its first datagram to its last, so a sender that
// outruns the link is measured at what got through.  Every wait is
// bounded (SECONDS, or 5 s without a datagram).
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int udp_socket(unsigned port)
{
	int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int buf = 4 << 20;
	::setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	::setsockopt(s, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(std::uint16_t(port));
	if (port && ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0) {
		std::perror("bind");
		std::exit(1);
	}
	return s;
}

sockaddr_in peer(const char *addr, unsigned port)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(std::uint16_t(port));
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		std::fprintf(stderr, "udp_probe: bad address %s\n", addr);
		std::exit(2);
	}
	return a;
}

bool g_spin = false;

bool wait_in(int s, int ms)
{
	if (g_spin) {
		const auto until = Clock::now() + std::chrono::milliseconds(ms);
		char b;
		while (Clock::now() < until)
			if (::recv(s, &b, 1, MSG_DONTWAIT | MSG_PEEK) >= 0)
				return true;
		return false;
	}
	pollfd p{s, POLLIN, 0};
	return ::poll(&p, 1, ms) == 1;
}

double seconds(Clock::time_point a, Clock::time_point b)
{
	return std::chrono::duration<double>(b - a).count();
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: udp_probe sink|stream|echo|ping ...\n");
		return 2;
	}
	const std::string mode = argv[1];
	const char *spin = std::getenv("UDP_PROBE_SPIN");
	g_spin = spin && !std::strcmp(spin, "1");
	std::vector<char> buf(65536);
	if (mode == "sink" && argc == 4) {
		int s = udp_socket(unsigned(std::atoi(argv[2])));
		const double limit = std::atof(argv[3]) + 5;
		std::uint64_t bytes = 0, n = 0;
		Clock::time_point first{}, last{};
		const auto start = Clock::now();
		while (seconds(start, Clock::now()) < limit && wait_in(s, n ? 500 : 5000)) {
			ssize_t r = ::recv(s, buf.data(), buf.size(), 0);
			if (r <= 0)
				continue;
			if (!n++)
				first = Clock::now();
			else
				bytes += std::uint64_t(r); // the first one starts the clock
			last = Clock::now();
		}
		double t = n > 1 ? seconds(first, last) : 0;
		std::printf("udp_probe sink: %llu datagrams, %.1f MB/s\n", (unsigned long long)n,
			    t > 0 ? double(bytes) / t / 1e6 : 0.0);
		return n > 1 ? 0 : 1;
	}
	if (mode == "stream" && argc == 6) {
		int s = udp_socket(0);
		sockaddr_in to = peer(argv[2], unsigned(std::atoi(argv[3])));
		const std::size_t size = std::min<std::size_t>(std::size_t(std::atoi(argv[4])), buf.size());
		const double secs = std::atof(argv[5]);
		const auto start = Clock::now();
		std::uint64_t sent = 0;
		while (seconds(start, Clock::now()) < secs) {
			for (int i = 0; i < 64; i++)
				if (::sendto(s, buf.data(), size, 0, reinterpret_cast<sockaddr *>(&to), sizeof(to)) > 0)
					sent++;
		}
		std::printf("udp_probe stream: %llu datagrams of %zu bytes sent\n", (unsigned long long)sent,
			    size);
		return 0;
	}
	if (mode == "echo" && argc == 4) {
		int s = udp_socket(unsigned(std::atoi(argv[2])));
		long count = std::atol(argv[3]);
		for (long i = 0; i < count && wait_in(s, 5000); i++) {
			sockaddr_in from{};
			socklen_t fl = sizeof(from);
			ssize_t r = ::recvfrom(s, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr *>(&from), &fl);
			if (r > 0)
				::sendto(s, buf.data(), std::size_t(r), 0, reinterpret_cast<sockaddr *>(&from), fl);
		}
		return 0;
	}
	if (mode == "ping" && argc == 6) {
		int s = udp_socket(0);
		sockaddr_in to = peer(argv[2], unsigned(std::atoi(argv[3])));
		const std::size_t size = std::min<std::size_t>(std::size_t(std::atoi(argv[4])), buf.size());
		long count = std::atol(argv[5]);
		std::vector<double> half;
		for (long i = 0; i < count; i++) {
			const auto t0 = Clock::now();
			::sendto(s, buf.data(), size, 0, reinterpret_cast<sockaddr *>(&to), sizeof(to));
			if (!wait_in(s, 1000))
				continue; // lost: not counted
			if (::recv(s, buf.data(), buf.size(), 0) <= 0)
				continue;
			half.push_back(seconds(t0, Clock::now()) * 1e6 / 2);
		}
		if (half.empty()) {
			std::printf("udp_probe ping: no answer\n");
			return 1;
		}
		std::sort(half.begin(), half.end());
		std::printf("udp_probe ping: %zu answers, half round trip median %.2f us\n", half.size(),
			    half[half.size() / 2]);
		return 0;
	}
	std::fprintf(stderr, "udp_probe: bad arguments\n");
	return 2;
}
