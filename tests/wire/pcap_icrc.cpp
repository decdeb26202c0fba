// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Checks every RoCEv2 packet of a capture (pcap, Ethernet) as a receiver
// on the wire would: its headers parse and its ICRC is right over the real
// IP header — the IPv4 identification included, which a UDP socket never
// sees (docs/wire.md, "The ICRC and the IPv4 ID"), so this is the full
// 32-bit check.  tshark decodes the same capture for the fields; it does
// not check the ICRC.
//
// Usage: pcap_icrc FILE [PORT]   (PORT: 4791)
// Prints the count per opcode; exit 0 when every packet passed and there
// was at least one, 1 otherwise.
#include <uabi/wire/packet.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace uabi::wire;

namespace {

std::uint16_t be16(const std::uint8_t *p)
{
	return std::uint16_t((p[0] << 8) | p[1]);
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2) {
		std::fprintf(stderr, "usage: pcap_icrc FILE [PORT]\n");
		return 2;
	}
	const unsigned port = argc > 2 ? unsigned(std::atoi(argv[2])) : kRoceV2Port;
	std::FILE *f = std::fopen(argv[1], "rb");
	if (!f) {
		std::perror(argv[1]);
		return 1;
	}
	std::uint8_t gh[24];
	if (std::fread(gh, 1, sizeof(gh), f) != sizeof(gh)) {
		std::fprintf(stderr, "pcap_icrc: %s: no pcap header\n", argv[1]);
		return 1;
	}
	std::uint32_t magic;
	std::memcpy(&magic, gh, 4);
	if (magic != 0xa1b2c3d4u && magic != 0xa1b23c4du) {
		std::fprintf(stderr, "pcap_icrc: %s: not a little-endian pcap file\n", argv[1]);
		return 1;
	}
	std::uint32_t linktype;
	std::memcpy(&linktype, gh + 20, 4);
	if (linktype != 1) {
		std::fprintf(stderr, "pcap_icrc: link type %u, not Ethernet\n", linktype);
		return 1;
	}
	std::map<unsigned, unsigned> per_opcode;
	unsigned good = 0, bad = 0, truncated = 0;
	std::vector<std::uint8_t> buf;
	for (;;) {
		std::uint8_t rh[16];
		if (std::fread(rh, 1, sizeof(rh), f) != sizeof(rh))
			break;
		std::uint32_t incl, orig;
		std::memcpy(&incl, rh + 8, 4);
		std::memcpy(&orig, rh + 12, 4);
		if (incl > 262144)
			break;
		buf.resize(incl);
		if (std::fread(buf.data(), 1, incl, f) != incl)
			break;
		const std::uint8_t *p = buf.data();
		std::size_t n = incl;
		if (n < 14)
			continue;
		std::uint16_t et = be16(p + 12);
		p += 14;
		n -= 14;
		IpInfo ip;
		std::size_t udp_off;
		if (et == 0x0800 && n >= 20 && (p[0] >> 4) == 4 && p[9] == 17) {
			const std::size_t ihl = std::size_t(p[0] & 15) * 4;
			if (ihl < 20 || n < ihl + 8)
				continue;
			ip.v6 = false;
			ip.ip_id = be16(p + 4);
			std::memcpy(ip.src, p + 12, 4);
			std::memcpy(ip.dst, p + 16, 4);
			udp_off = ihl;
		} else if (et == 0x86dd && n >= 48 && p[6] == 17) {
			ip.v6 = true;
			std::memcpy(ip.src, p + 8, 16);
			std::memcpy(ip.dst, p + 24, 16);
			udp_off = 40;
		} else {
			continue;
		}
		const std::uint8_t *u = p + udp_off;
		if (be16(u + 2) != port)
			continue;
		if (incl != orig) {
			truncated++;
			continue;
		}
		ip.src_port = be16(u);
		ip.dst_port = be16(u + 2);
		const std::size_t ulen = be16(u + 4);
		if (ulen < 8 || udp_off + ulen > n) {
			bad++;
			continue;
		}
		Packet pk;
		ParseError e = parse({u + 8, ulen - 8}, &ip, pk);
		if (e != ParseError::None) {
			bad++;
			std::fprintf(stderr, "pcap_icrc: packet %u: %s\n", good + bad + truncated,
				     e == ParseError::Icrc ? "bad ICRC" : "does not parse");
			continue;
		}
		good++;
		per_opcode[pk.bth.opcode]++;
	}
	std::fclose(f);
	std::printf("pcap_icrc: %u RoCEv2 packets, ICRC and headers right; %u wrong; %u truncated\n", good,
		    bad, truncated);
	for (auto &[op, c] : per_opcode)
		std::printf("  opcode 0x%02x: %u\n", op, c);
	return bad == 0 && truncated == 0 && good > 0 ? 0 : 1;
}
