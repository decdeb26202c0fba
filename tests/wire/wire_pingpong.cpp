// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// ibv_rc_pingpong's peer, on the wire engine alone: it speaks that
// program's TCP exchange ("LID:QPN:PSN:GID", then "done") and its RC SEND
// ping-pong over RoCEv2 from a UDP socket at --local:4791.  The peer is an
// unmodified ibv_rc_pingpong on any RoCEv2 device — Linux's rxe in the
// qemu guest of run-rxe.sh.  Byte check: ibv_rc_pingpong sends from the
// buffer it receives into, so every message after the first it sends back
// must be the one this program sent last (each filled with a pattern of
// its own).  Exit status 0 only if every exchange completed, every echo
// matched, and no packet from the peer failed its ICRC or parse.
//
// Usage: wire_pingpong --local IP [--size N] [--iters N] [--port P]
//                      [--connect-timeout S] [SERVER]
#include <uabi/wire/engine.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <netdb.h>
#include <random>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace uabi::wire;

namespace {

class OneRegion : public Memory {
public:
	OneRegion(std::uint8_t *p, std::size_t n, std::uint32_t key) : r_{reinterpret_cast<std::uint64_t>(p), n, p,
									   kAccLocalWrite, 1},
								       key_(key) {}
	bool lookup(std::uint32_t key, Region &out) override
	{
		if (key != key_)
			return false;
		out = r_;
		return true;
	}

private:
	Region r_;
	std::uint32_t key_;
};

struct Cq {
	std::mutex m;
	std::condition_variable cv;
	std::deque<Completion> q;
	CqSink sink()
	{
		return [this](const Completion &c) {
			std::lock_guard<std::mutex> g(m);
			q.push_back(c);
			cv.notify_all();
		};
	}
	bool wait(Completion &c, int seconds)
	{
		std::unique_lock<std::mutex> g(m);
		if (!cv.wait_for(g, std::chrono::seconds(seconds), [&] { return !q.empty(); }))
			return false;
		c = q.front();
		q.pop_front();
		return true;
	}
};

int usage()
{
	std::fprintf(stderr, "usage: wire_pingpong --local IP [--size N] [--iters N] [--port P] "
			     "[--connect-timeout S] [SERVER]\n");
	return 2;
}

bool read_full(int fd, void *p, std::size_t n)
{
	auto *c = static_cast<char *>(p);
	while (n) {
		ssize_t r = read(fd, c, n);
		if (r <= 0)
			return false;
		c += r;
		n -= std::size_t(r);
	}
	return true;
}

struct Dest {
	unsigned lid = 0, qpn = 0, psn = 0;
	std::uint8_t gid[16] = {};
};

// The exchange message, as ibv_rc_pingpong writes it (with its NUL).
constexpr std::size_t kMsg = sizeof "0000:000000:000000:00000000000000000000000000000000";

void format(const Dest &d, char *msg)
{
	char gid[33];
	for (int i = 0; i < 16; i++)
		std::snprintf(gid + 2 * i, 3, "%02x", d.gid[i]);
	std::snprintf(msg, kMsg, "%04x:%06x:%06x:%s", d.lid, d.qpn, d.psn, gid);
}

bool parse_msg(const char *msg, Dest &d)
{
	char gid[33] = {};
	if (std::sscanf(msg, "%x:%x:%x:%32s", &d.lid, &d.qpn, &d.psn, gid) != 4 || std::strlen(gid) != 32)
		return false;
	for (int i = 0; i < 16; i++)
		d.gid[i] = std::uint8_t(std::stoi(std::string(gid + 2 * i, 2), nullptr, 16));
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	const char *local = nullptr, *server = nullptr;
	unsigned size = 4096, iters = 1000, port = 18515, connect_timeout = 120;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
		const char *v = nullptr;
		if (a == "--local" && (v = val()))
			local = v;
		else if (a == "--size" && (v = val()))
			size = unsigned(std::strtoul(v, nullptr, 0));
		else if (a == "--iters" && (v = val()))
			iters = unsigned(std::strtoul(v, nullptr, 0));
		else if (a == "--port" && (v = val()))
			port = unsigned(std::strtoul(v, nullptr, 0));
		else if (a == "--connect-timeout" && (v = val()))
			connect_timeout = unsigned(std::strtoul(v, nullptr, 0));
		else if (a[0] != '-' && !server)
			server = argv[i];
		else
			return usage();
	}
	sockaddr_in me{};
	me.sin_family = AF_INET;
	me.sin_port = htons(kRoceV2Port);
	if (!local || inet_pton(AF_INET, local, &me.sin_addr) != 1 || !size || size > (1u << 24))
		return usage();

	std::vector<std::uint8_t> buf(size), sent(size);
	OneRegion mem(buf.data(), buf.size(), 0x1234);
	Cq cq;
	auto ep = Endpoint::open(PeerAddr::from(reinterpret_cast<sockaddr *>(&me), sizeof(me)));
	if (!ep) {
		std::perror("wire_pingpong: UDP socket at port 4791");
		return 1;
	}
	std::mt19937 rng{std::uint32_t(getpid())};
	Dest my;
	my.qpn = 0x100 + (rng() & 0xff);
	my.psn = rng() & 0xffffff;
	my.gid[10] = my.gid[11] = 0xff;
	std::memcpy(my.gid + 12, &me.sin_addr, 4);
	auto qp = ep->create_qp(my.qpn, kQptRc, mem, cq.sink(), cq.sink(), 4, 600);
	QpAttr init;
	init.state = kInit;
	init.pd = 1;
	qp->modify(init);
	for (int i = 0; i < 500; i++)
		qp->post_recv(1, {{reinterpret_cast<std::uint64_t>(buf.data()), size, 0x1234}});

	// The TCP exchange, as ibv_rc_pingpong's client or server.
	char msg[kMsg];
	Dest peer;
	int fd = -1;
	if (server) {
		addrinfo hints{}, *res = nullptr;
		hints.ai_family = AF_INET;
		hints.ai_socktype = SOCK_STREAM;
		if (getaddrinfo(server, std::to_string(port).c_str(), &hints, &res) || !res)
			return usage();
		auto until = std::chrono::steady_clock::now() + std::chrono::seconds(connect_timeout);
		while (fd < 0) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, res->ai_addr, res->ai_addrlen))
				break;
			close(fd);
			fd = -1;
			if (std::chrono::steady_clock::now() > until) {
				std::fprintf(stderr, "wire_pingpong: cannot connect to %s:%u\n", server, port);
				return 1;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
		}
		freeaddrinfo(res);
		format(my, msg);
		if (write(fd, msg, kMsg) != ssize_t(kMsg) || !read_full(fd, msg, kMsg) || !parse_msg(msg, peer) ||
		    write(fd, "done", 5) != 5) {
			std::fprintf(stderr, "wire_pingpong: exchange failed\n");
			return 1;
		}
	} else {
		int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sockaddr_in sa{};
		sa.sin_family = AF_INET;
		sa.sin_port = htons(std::uint16_t(port));
		if (bind(ls, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) || listen(ls, 1)) {
			std::perror("wire_pingpong: listen");
			return 1;
		}
		fd = accept(ls, nullptr, nullptr);
		close(ls);
		if (fd < 0 || !read_full(fd, msg, kMsg) || !parse_msg(msg, peer)) {
			std::fprintf(stderr, "wire_pingpong: exchange failed\n");
			return 1;
		}
	}
	char text[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, peer.gid, text, sizeof(text));
	std::printf("  remote address: LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", peer.lid, peer.qpn, peer.psn,
		    text);
	if (peer.gid[10] != 0xff || peer.gid[11] != 0xff) {
		std::fprintf(stderr, "wire_pingpong: the peer's GID is not IPv4-mapped\n");
		return 1;
	}
	sockaddr_in to{};
	to.sin_family = AF_INET;
	to.sin_port = htons(kRoceV2Port);
	std::memcpy(&to.sin_addr, peer.gid + 12, 4);
	QpAttr a = init;
	a.dest = PeerAddr::from(reinterpret_cast<sockaddr *>(&to), sizeof(to));
	a.dest_qpn = peer.qpn;
	a.rq_psn = peer.psn;
	a.sq_psn = my.psn;
	a.path_mtu = 3;
	a.min_rnr_timer = 12;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	a.state = kRtr;
	qp->modify(a);
	a.state = kRts;
	qp->modify(a);
	if (!server) {
		format(my, msg);
		if (write(fd, msg, kMsg) != ssize_t(kMsg) || !read_full(fd, msg, 5)) {
			std::fprintf(stderr, "wire_pingpong: exchange failed\n");
			return 1;
		}
	}
	close(fd);

	// The ping-pong: a SEND goes out when the previous one completed and
	// a message came in; the client starts.
	auto post = [&](unsigned i) {
		for (unsigned j = 0; j < size; j++)
			buf[j] = std::uint8_t(i * 131 + j * 7 + 1);
		sent = buf;
		SendWr w;
		w.wr_id = 2;
		w.opcode = kWrSend;
		w.flags = kSendFlagSignaled;
		w.sges = {{reinterpret_cast<std::uint64_t>(buf.data()), size, 0x1234}};
		return qp->post_send(w) == 0;
	};
	auto report = [&] {
		Counters &k = ep->counters();
		std::printf("wire_pingpong: rx %llu, tx %llu, icrc %llu, malformed %llu, out of seq %llu, "
			    "duplicates %llu, no wqe %llu, retransmits %llu, timeouts %llu, rnr naks %llu\n",
			    (unsigned long long)k.rx_packets, (unsigned long long)k.tx_packets,
			    (unsigned long long)k.rx_icrc, (unsigned long long)k.rx_malformed,
			    (unsigned long long)k.rx_out_of_seq, (unsigned long long)k.rx_duplicate,
			    (unsigned long long)k.rx_no_wqe, (unsigned long long)k.retransmits,
			    (unsigned long long)k.timeouts, (unsigned long long)k.rnr_naks);
		return k.rx_icrc || k.rx_malformed;
	};
	unsigned scnt = 0, rcnt = 0, mismatches = 0;
	bool have_sent = false;
	auto t0 = std::chrono::steady_clock::now();
	int pending = 1;	// 1: a message due, 2: our send's completion due
	if (server) {
		if (!post(scnt)) {
			std::fprintf(stderr, "wire_pingpong: post_send failed\n");
			return 1;
		}
		pending |= 2;
	}
	while (rcnt < iters || scnt < iters) {
		Completion c;
		if (!cq.wait(c, 30)) {
			std::fprintf(stderr, "wire_pingpong: no completion in 30 s (sent %u, received %u)\n", scnt,
				     rcnt);
			report();
			return 1;
		}
		if (c.status != kWcOk) {
			std::fprintf(stderr, "wire_pingpong: completion status %u (sent %u, received %u)\n", c.status,
				     scnt, rcnt);
			return 1;
		}
		if (c.wr_id == 1) {
			// The peer sends back what it received: from its
			// second message on (or its first, if we started),
			// what we sent last.
			if (c.byte_len != size || (have_sent && std::memcmp(buf.data(), sent.data(), size)))
				mismatches++;
			rcnt++;
			qp->post_recv(1, {{reinterpret_cast<std::uint64_t>(buf.data()), size, 0x1234}});
		} else {
			scnt++;
			have_sent = true;
		}
		pending &= ~int(c.wr_id);
		if (scnt < iters && !pending) {
			if (!post(scnt)) {
				std::fprintf(stderr, "wire_pingpong: post_send failed\n");
				return 1;
			}
			pending = 3;
		}
	}
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::printf("%llu bytes in %.2f seconds = %.2f Mbit/sec\n", (unsigned long long)size * iters * 2, s,
		    double(size) * iters * 2 * 8 / s / 1e6);
	std::printf("%u iters in %.2f seconds = %.2f usec/iter\n", iters, s, s * 1e6 / iters);
	std::printf("wire_pingpong: echoes mismatched %u\n", mismatches);
	bool bad = report();
	return mismatches || bad ? 1 : 0;
}
