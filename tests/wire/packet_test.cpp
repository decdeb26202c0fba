// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// RoCEv2 packets: the ICRC against packets whose ICRC a NIC or another
// implementation computed, header layouts, and the parser on bad input.
#include <uabi/wire/packet.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstring>
#include <random>
#include <vector>

using namespace uabi::wire;

namespace {

IpInfo v4(const char *src, const char *dst, std::uint16_t id, std::uint16_t sport)
{
	IpInfo ip;
	inet_pton(AF_INET, src, ip.src);
	inet_pton(AF_INET, dst, ip.dst);
	ip.ip_id = id;
	ip.src_port = sport;
	ip.dst_port = kRoceV2Port;
	return ip;
}

std::vector<std::uint8_t> hex(const char *s)
{
	std::vector<std::uint8_t> v;
	for (; s[0] && s[1]; s += 2) {
		if (s[0] == ' ') {
			s--;
			continue;
		}
		v.push_back(std::uint8_t(std::stoi(std::string(s, 2), nullptr, 16)));
	}
	return v;
}

std::uint32_t wire_le(const std::uint8_t *p)
{
	return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
	       std::uint32_t(p[3]) << 24;
}

} // namespace

// A congestion notification packet captured on a ConnectX-4 Lx (IPv4 ID
// 0x718c, BECN set in byte 4, which the ICRC masks): the NIC's ICRC bytes
// are 82 fd 00 2a.
// The CRC both ways: the check value every CRC-32 catalogue gives for
// "123456789", and the folding one against the table one on random bytes of
// every length up to 4 KiB + 100, from every alignment, from random
// registers (the folding path starts at 64 bytes).
TEST(Icrc, TheFastCrcIsTheCrc)
{
	const char *cv = "123456789";
	std::span<const std::uint8_t> s(reinterpret_cast<const std::uint8_t *>(cv), 9);
	EXPECT_EQ(~crc32_update(~0u, s), 0xcbf43926u);
	EXPECT_EQ(~crc32_update_portable(~0u, s), 0xcbf43926u);
	std::mt19937 r(7);
	std::vector<std::uint8_t> buf(4096 + 100 + 16);
	for (auto &b : buf)
		b = std::uint8_t(r());
	for (std::size_t len = 0; len <= 4096 + 100; len += (len < 300 ? 1 : 37))
		for (std::size_t off = 0; off < 16; off += (len < 300 ? 5 : 1)) {
			std::uint32_t reg = std::uint32_t(r());
			std::span<const std::uint8_t> b(buf.data() + off, len);
			ASSERT_EQ(crc32_update(reg, b), crc32_update_portable(reg, b)) << len << " at " << off;
		}
}

TEST(Icrc, MatchesANicsCapture)
{
	IpInfo ip = v4("10.0.17.1", "10.0.18.1", 0x718c, 0);
	auto pkt = hex("8100ffff4000011800000000" "00000000000000000000000000000000");
	ASSERT_EQ(pkt.size(), 28u);
	std::uint8_t want[4] = {0x82, 0xfd, 0x00, 0x2a};
	EXPECT_EQ(icrc(ip, pkt), wire_le(want));
	// Every masked field may change without changing it; the ID may not.
	pkt[4] = 0x00;
	EXPECT_EQ(icrc(ip, pkt), wire_le(want));
	ip.ip_id = 0;
	EXPECT_NE(icrc(ip, pkt), wire_le(want));
}

// A UC SEND_ONLY with a 2-byte pad and MigReq set, as a packet library's
// regression test builds it, with its ICRC 78 f3 53 f3.
TEST(Icrc, MatchesAUcSendOnly)
{
	IpInfo ip = v4("192.168.0.7", "192.168.0.7", 1144, 49152);
	auto pkt = hex("2460ffff000000d300cf1710"
		       "4630818be28935d90e9a95505401be885e500000");
	ASSERT_EQ(pkt.size(), 32u);
	std::uint8_t want[4] = {0x78, 0xf3, 0x53, 0xf3};
	EXPECT_EQ(icrc(ip, pkt), wire_le(want));

	// The parser agrees: it accepts the packet with this ICRC and finds
	// the header fields and the 18 payload bytes before the pad.
	pkt.insert(pkt.end(), want, want + 4);
	Packet p;
	ASSERT_EQ(parse(pkt, &ip, p), ParseError::None);
	EXPECT_EQ(p.bth.opcode, opcode(kUc, kSendOnly));
	EXPECT_TRUE(p.bth.mig_req);
	EXPECT_EQ(p.bth.pad, 2);
	EXPECT_EQ(p.bth.pkey, 0xffff);
	EXPECT_EQ(p.bth.dest_qp, 211u);
	EXPECT_EQ(p.bth.psn, 13571856u);
	EXPECT_EQ(p.payload.size(), 18u);
	pkt[20] ^= 1;
	EXPECT_EQ(parse(pkt, &ip, p), ParseError::Icrc);
}

// A receiver on a UDP socket does not see the IPv4 ID; it finds the one
// that makes the ICRC right, and refuses a packet for which none does.
TEST(Icrc, AnUnknownIpv4IdIsSolvedFor)
{
	IpInfo ip = v4("192.168.0.7", "192.168.0.7", 0, 49152);
	ip.ip_id_unknown = true;
	auto pkt = hex("2460ffff000000d300cf1710"
		       "4630818be28935d90e9a95505401be885e500000" "78f353f3");	// ID 1144
	Packet p;
	EXPECT_EQ(parse(pkt, &ip, p), ParseError::None);
	ip.ip_id_unknown = false;
	EXPECT_EQ(parse(pkt, &ip, p), ParseError::Icrc);
	ip.ip_id_unknown = true;
	std::mt19937 rng(1);
	int refused = 0;
	for (int i = 0; i < 2000; i++) {
		// Packets of many lengths built with random IDs all pass.
		IpInfo tx = v4("10.0.0.1", "10.0.0.2", std::uint16_t(rng()), 4791);
		Packet in;
		in.bth.opcode = opcode(kRc, kSendOnly);
		std::uint8_t buf[1200];
		Builder b(buf, sizeof(buf));
		std::size_t n = rng() % 1100;
		ASSERT_TRUE(b.headers(in, n));
		std::uint8_t *room = b.payload_room(n);
		for (std::size_t j = 0; j < n; j++)
			room[j] = std::uint8_t(rng());
		std::size_t len = b.finish(tx);
		IpInfo rx = tx;
		rx.ip_id = 0;
		rx.ip_id_unknown = true;
		ASSERT_EQ(parse({buf, len}, &rx, p), ParseError::None) << i;
		// One flipped bit anywhere but the masked byte 4 of the BTH:
		// refused (a 2^-16 chance to pass).
		std::size_t at = rng() % (len - 1);
		buf[at + (at >= 4)] ^= std::uint8_t(1u << (rng() % 8));
		refused += parse({buf, len}, &rx, p) != ParseError::None;
	}
	EXPECT_GE(refused, 1999);
}

TEST(Packet, EveryOpcodeRoundTrips)
{
	IpInfo ip = v4("10.1.0.1", "10.1.0.2", 0, 4791);
	int known = 0;
	for (unsigned opc = 0; opc < 256; opc++) {
		std::uint32_t h = headers_of(std::uint8_t(opc));
		if (!h)
			continue;
		known++;
		Packet in;
		in.bth.opcode = std::uint8_t(opc);
		in.bth.solicited = true;
		in.bth.dest_qp = 0xabcdef;
		in.bth.ack_req = true;
		in.bth.psn = 0x123456;
		in.xrc_srq = 0x345678;
		in.deth = {0x11223344, 0x00beef};
		in.reth = {0x0102030405060708ull, 0xcafe0001, 77};
		in.atomic = {0x1000, 0x99, 0xaaaaaaaabbbbbbbbull, 0xccccccccddddddddull};
		in.aeth = {0x1f, 0x00abcd};
		in.atomic_orig = 0x5555666677778888ull;
		in.imm = htonl(0xdeadbeef);
		in.ieth_rkey = 0x4242;
		std::uint8_t buf[256];
		Builder b(buf, sizeof(buf));
		std::size_t pay = h & kHasPayload ? 5 : 0;
		ASSERT_TRUE(b.headers(in, pay)) << opc;
		if (pay)
			std::memcpy(b.payload_room(pay), "hello", pay);
		std::size_t len = b.finish(ip);
		ASSERT_EQ(len, kBthBytes + ext_bytes(h) + (pay ? 8 : 0) + kIcrcBytes) << opc;
		Packet out;
		ASSERT_EQ(parse({buf, len}, &ip, out), ParseError::None) << opc;
		EXPECT_EQ(out.bth.psn, in.bth.psn);
		EXPECT_EQ(out.bth.dest_qp, in.bth.dest_qp);
		EXPECT_EQ(out.bth.pad, pay ? 3 : 0);
		EXPECT_EQ(out.payload.size(), pay);
		if (h & kHasReth) {
			EXPECT_EQ(out.reth.va, in.reth.va);
			EXPECT_EQ(out.reth.rkey, in.reth.rkey);
			EXPECT_EQ(out.reth.length, in.reth.length);
		}
		if (h & kHasAtomicEth) {
			EXPECT_EQ(out.atomic.swap_add, in.atomic.swap_add);
			EXPECT_EQ(out.atomic.compare, in.atomic.compare);
		}
		if (h & kHasDeth) {
			EXPECT_EQ(out.deth.qkey, in.deth.qkey);
			EXPECT_EQ(out.deth.src_qp, in.deth.src_qp);
		}
		if (h & kHasXrcEth) {
			EXPECT_EQ(out.xrc_srq, in.xrc_srq);
		}
		if (h & kHasAeth) {
			EXPECT_EQ(out.aeth.msn, in.aeth.msn);
		}
		if (h & kHasAtomicAckEth) {
			EXPECT_EQ(out.atomic_orig, in.atomic_orig);
		}
		if (h & kHasImm) {
			EXPECT_EQ(out.imm, in.imm);
		}
		if (h & kHasIeth) {
			EXPECT_EQ(out.ieth_rkey, in.ieth_rkey);
		}
	}
	// RC 23 (0..20, 22, 23; 21 is reserved), XRC 23, UC 12, UD 2.
	EXPECT_EQ(known, 23 + 23 + 12 + 2);
}

TEST(Packet, HeaderLayoutAsTheSpecDrawsIt)
{
	IpInfo ip = v4("10.1.0.1", "10.1.0.2", 0, 4791);
	Packet in;
	in.bth.opcode = opcode(kRc, kWriteOnlyImm);
	in.bth.dest_qp = 0x000102;
	in.bth.psn = 0x0a0b0c;
	in.bth.ack_req = true;
	in.reth = {0x1122334455667788ull, 0x99aabbcc, 0x10};
	in.imm = htonl(0x01020304);
	std::uint8_t buf[128];
	Builder b(buf, sizeof(buf));
	ASSERT_TRUE(b.headers(in, 0));
	ASSERT_EQ(b.finish(ip), 12u + 16 + 4 + 4);
	auto want = hex("0b00ffff00000102800a0b0c" "112233445566778899aabbcc00000010" "01020304");
	EXPECT_EQ(std::vector<std::uint8_t>(buf, buf + want.size()), want);
}

TEST(Packet, ParserRefusesWhatIsNotAPacket)
{
	IpInfo ip = v4("10.1.0.1", "10.1.0.2", 0, 4791);
	Packet p;
	std::uint8_t small[8] = {};
	EXPECT_EQ(parse({small, sizeof(small)}, &ip, p), ParseError::Short);
	// RETH cut short
	auto w = hex("0a00ffff0000010200000001" "1122");
	w.resize(w.size() + 4);
	EXPECT_EQ(parse(w, nullptr, p), ParseError::Short);
	// reserved opcode, RD, version 1
	auto r = hex("1500ffff0000010200000001" "00000000");
	EXPECT_EQ(parse(r, nullptr, p), ParseError::Opcode);
	r[0] = 0x44;
	EXPECT_EQ(parse(r, nullptr, p), ParseError::Opcode);
	r[0] = 0x04;
	r[1] = 0x01;
	EXPECT_EQ(parse(r, nullptr, p), ParseError::Version);
	// pad on an ACK, pad larger than the payload
	auto a = hex("1130ffff0000010200000001" "1f000001" "00000000");
	EXPECT_EQ(parse(a, nullptr, p), ParseError::Pad);
	auto s = hex("0430ffff0000010200000001" "aa" "00000000");
	EXPECT_EQ(parse(s, nullptr, p), ParseError::Pad);
	// an ACK with bytes after its AETH
	auto l = hex("1100ffff0000010200000001" "1f000001" "abcd" "00000000");
	EXPECT_EQ(parse(l, nullptr, p), ParseError::Short);

	// Random bytes: never a crash, never a payload outside the buffer.
	std::mt19937 rng(7);
	for (int i = 0; i < 200000; i++) {
		std::vector<std::uint8_t> v(rng() % 80);
		for (auto &c : v)
			c = std::uint8_t(rng());
		if (parse(v, nullptr, p) == ParseError::None) {
			ASSERT_GE(p.payload.data(), v.data());
			ASSERT_LE(p.payload.data() + p.payload.size(), v.data() + v.size());
		}
	}
}

TEST(Packet, PsnArithmeticWraps)
{
	EXPECT_EQ(psn_add(0xffffff, 1), 0u);
	EXPECT_EQ(psn_diff(0, 0xffffff), 1);
	EXPECT_EQ(psn_diff(0xffffff, 0), -1);
	EXPECT_EQ(psn_diff(5, 3), 2);
	EXPECT_EQ(rnr_timer_ns(0), 655360000u);
	EXPECT_EQ(rnr_timer_ns(12), 640000u);
	EXPECT_EQ(ib_mtu_for(1500, false), 3u);	// 1024
	EXPECT_EQ(ib_mtu_for(9000, false), 5u);	// 4096
	EXPECT_EQ(ib_mtu_for(4096 + 20 + 8 + 12 + 4 + 16 + 4 + 4, false), 5u);
	EXPECT_EQ(ib_mtu_for(200, true), 0u);
}

// QP1's datagrams: what gsi_headers() builds with a MAD is what
// gsi_datagram() takes, with the IPv4-mapped GIDs of its addresses; a
// wrong Q_Key, P_Key, opcode or a short MAD is refused.
TEST(Packet, GsiDatagramsAreTheCmsAndNothingElse)
{
	IpInfo ip = v4("10.1.0.1", "10.1.0.2", 0, 4791);
	auto build = [&](Packet p, std::size_t mad, std::uint8_t *buf, Packet &out) {
		Builder b(buf, 512);
		ASSERT_TRUE(b.headers(p, mad));
		std::memset(b.payload_room(mad), 0x5a, mad);
		std::size_t len = b.finish(ip);
		ASSERT_EQ(parse({buf, len}, &ip, out), ParseError::None);
	};
	std::uint8_t buf[512], sgid[16], dgid[16];
	Packet out;
	build(gsi_headers(0x1000001), kGsiMadBytes, buf, out);
	EXPECT_EQ(out.bth.psn, 1u);
	EXPECT_EQ(out.bth.dest_qp, 1u);
	EXPECT_EQ(out.deth.src_qp, 1u);
	ASSERT_TRUE(gsi_datagram(out, ip, sgid, dgid));
	const std::uint8_t s4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 0, 1};
	const std::uint8_t d4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 0, 2};
	EXPECT_EQ(0, std::memcmp(sgid, s4, 16));
	EXPECT_EQ(0, std::memcmp(dgid, d4, 16));

	Packet p = gsi_headers(7);
	p.deth.qkey = 0x80010001;
	build(p, kGsiMadBytes, buf, out);
	EXPECT_FALSE(gsi_datagram(out, ip, sgid, dgid));
	p = gsi_headers(7);
	p.bth.pkey = 0x8001;
	build(p, kGsiMadBytes, buf, out);
	EXPECT_FALSE(gsi_datagram(out, ip, sgid, dgid));
	p = gsi_headers(7);
	p.bth.opcode = opcode(kUd, kSendOnlyImm);
	build(p, kGsiMadBytes, buf, out);
	EXPECT_FALSE(gsi_datagram(out, ip, sgid, dgid));
	build(gsi_headers(7), kGsiMadBytes - 1, buf, out);
	EXPECT_FALSE(gsi_datagram(out, ip, sgid, dgid));
}
