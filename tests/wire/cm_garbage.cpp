// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Garbage at QP1 of a RoCE device (tests/cm/run-cm-two-hosts.sh): datagrams
// to UDP port PORT of DST from SRC (an address of this host, any port):
// random bytes aimed at QP1, UD packets with a wrong Q_Key or a bad ICRC,
// short MADs, random MADs, CM MADs of every attribute with random bodies
// (random communication IDs, random REQs with the RDMA CM's service-ID
// prefix).  The receiver must drop and count them all and change nothing.
//
//   cm_garbage SRC DST PORT COUNT SEED
#include <uabi/wire/packet.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace w = uabi::wire;

int main(int argc, char **argv)
{
	if (argc != 6) {
		std::fprintf(stderr, "usage: cm_garbage SRC DST PORT COUNT SEED\n");
		return 2;
	}
	in_addr src{}, dst{};
	if (inet_pton(AF_INET, argv[1], &src) != 1 || inet_pton(AF_INET, argv[2], &dst) != 1) {
		std::fprintf(stderr, "cm_garbage: IPv4 addresses only\n");
		return 2;
	}
	const int port = std::atoi(argv[3]);
	const long count = std::atol(argv[4]);
	std::mt19937 rng(unsigned(std::atoi(argv[5])));
	int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sockaddr_in me{};
	me.sin_family = AF_INET;
	me.sin_addr = src;
	int pmtu = IP_PMTUDISC_DO;
	::setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&me), sizeof(me)) < 0) {
		std::perror("cm_garbage: socket");
		return 1;
	}
	socklen_t ml = sizeof(me);
	::getsockname(fd, reinterpret_cast<sockaddr *>(&me), &ml);
	sockaddr_in to{};
	to.sin_family = AF_INET;
	to.sin_addr = dst;
	to.sin_port = htons(std::uint16_t(port));
	w::IpInfo ip;
	std::memcpy(ip.src, &src, 4);
	std::memcpy(ip.dst, &dst, 4);
	ip.src_port = ntohs(me.sin_port);
	ip.dst_port = std::uint16_t(port);
	long sent = 0;
	for (long i = 0; i < count; i++) {
		std::uint8_t buf[600], mad[256];
		std::size_t n = 0;
		const int kind = int(i % 7);
		for (auto &b : mad)
			b = std::uint8_t(rng());
		if (kind >= 4) {
			// a CM MAD header: base version 1, class 7, version 2, Send
			mad[0] = 1;
			mad[1] = 7;
			mad[2] = 2;
			mad[3] = 3;
			mad[16] = 0;
			mad[17] = std::uint8_t(0x10 + rng() % 10);
			if (kind == 5) {
				// a REQ to the RDMA CM's TCP port space, random port
				mad[17] = 0x10;
				const std::uint8_t sid[8] = {0, 0, 0, 0, 1, 6, std::uint8_t(rng()),
							     std::uint8_t(rng())};
				std::memcpy(mad + 24 + 8, sid, 8);
				mad[24 + 140] = 0;
				mad[24 + 141] = rng() % 2 ? 0x40 : 0x60;
			}
		}
		if (kind == 0) {
			// random bytes, aimed at QP1 when long enough
			n = rng() % 400;
			for (std::size_t k = 0; k < n; k++)
				buf[k] = std::uint8_t(rng());
			if (n >= 8) {
				buf[5] = 0;
				buf[6] = 0;
				buf[7] = 1;
			}
		} else {
			w::Packet p;
			p.bth.opcode = w::opcode(w::kUd, w::kSendOnly);
			p.bth.dest_qp = 1;
			p.bth.psn = std::uint32_t(i) & w::kPsnMask;
			p.deth.qkey = kind == 1 ? std::uint32_t(rng()) | 1 : 0x80010000u;
			p.deth.src_qp = 1;
			const std::size_t len = kind == 2 ? rng() % 256 : 256;
			w::Builder b(buf, sizeof(buf));
			if (!b.headers(p, len))
				return 1;
			std::memcpy(b.payload_room(len), mad, len);
			n = b.finish(ip);
			if (kind == 6)
				buf[n - 1 - rng() % 4] ^= std::uint8_t(1u << (rng() % 8)); // bad ICRC
		}
		if (::sendto(fd, buf, n, 0, reinterpret_cast<sockaddr *>(&to), sizeof(to)) >= 0)
			sent++;
		if (i % 64 == 63)
			::usleep(1000); // not a flood: the receiver's socket keeps up
	}
	std::printf("sent %ld datagrams\n", sent);
	return sent == count ? 0 : 1;
}
