// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// RoCEv2 headers, the ICRC and the parser (docs/wire.md, "Packets").
#include <uabi/wire/packet.hpp>

#include <array>
#include <cstring>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace uabi::wire {

namespace {

// ------------------------------------------------------------ byte order
inline void put16(std::uint8_t *p, std::uint16_t v)
{
	p[0] = std::uint8_t(v >> 8);
	p[1] = std::uint8_t(v);
}
inline void put24(std::uint8_t *p, std::uint32_t v)
{
	p[0] = std::uint8_t(v >> 16);
	p[1] = std::uint8_t(v >> 8);
	p[2] = std::uint8_t(v);
}
inline void put32(std::uint8_t *p, std::uint32_t v)
{
	put16(p, std::uint16_t(v >> 16));
	put16(p + 2, std::uint16_t(v));
}
inline void put64(std::uint8_t *p, std::uint64_t v)
{
	put32(p, std::uint32_t(v >> 32));
	put32(p + 4, std::uint32_t(v));
}
inline std::uint16_t get16(const std::uint8_t *p) { return std::uint16_t(p[0] << 8 | p[1]); }
inline std::uint32_t get24(const std::uint8_t *p) { return std::uint32_t(p[0]) << 16 | p[1] << 8 | p[2]; }
inline std::uint32_t get32(const std::uint8_t *p) { return std::uint32_t(get16(p)) << 16 | get16(p + 2); }
inline std::uint64_t get64(const std::uint8_t *p) { return std::uint64_t(get32(p)) << 32 | get32(p + 4); }

// --------------------------------------------------------------- CRC-32
// The reflected CRC-32 of Ethernet (polynomial 0xedb88320), eight bytes a
// step ("slicing by 8"): tables computed once at compile time.
using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr CrcTables make_tables()
{
	CrcTables t{};
	for (std::uint32_t i = 0; i < 256; i++) {
		std::uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
		t[0][i] = c;
	}
	for (std::uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < 8; s++)
			t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
	return t;
}

constexpr CrcTables kCrc = make_tables();

// Runs the register over @n bytes (no initial or final inversion), eight
// bytes a step.
std::uint32_t crc_update_tables(std::uint32_t c, const std::uint8_t *p, std::size_t n)
{
	while (n >= 8) {
		std::uint32_t lo, hi;
		std::memcpy(&lo, p, 4);
		std::memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = kCrc[7][lo & 0xff] ^ kCrc[6][(lo >> 8) & 0xff] ^ kCrc[5][(lo >> 16) & 0xff] ^
		    kCrc[4][lo >> 24] ^ kCrc[3][hi & 0xff] ^ kCrc[2][(hi >> 8) & 0xff] ^
		    kCrc[1][(hi >> 16) & 0xff] ^ kCrc[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ kCrc[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
// The same CRC by folding with carry-less multiplication (Intel's "Fast
// CRC Computation for Generic Polynomials Using PCLMULQDQ", the
// bit-reflected form): four 128-bit lanes are folded forward 512 bits at a
// time, then into one lane, 128 bits at a time, then reduced to 64 and 32
// bits and finished by Barrett reduction.  The constants are powers of x
// modulo the polynomial (reflected, x^(4*128±32), x^(128±32), x^64), the
// Barrett quotient and the polynomial itself.  @n >= 64, a multiple of 16.
__attribute__((target("pclmul,sse4.1"))) inline __m128i load(const std::uint8_t *q)
{
	return _mm_loadu_si128(reinterpret_cast<const __m128i *>(q));
}

// x.lo·k.lo ^ x.hi·k.hi ^ next: the lane moved forward by k's distance.
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

__attribute__((target("pclmul,sse4.1"))) std::uint32_t crc_fold(std::uint32_t c, const std::uint8_t *p,
								 std::size_t n)
{
	const __m128i k512 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
	const __m128i k128 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
	const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124);
	const __m128i barrett = _mm_set_epi64x(0x1f7011641, 0x1db710641);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i a = _mm_xor_si128(load(p), _mm_cvtsi32_si128(int(c)));
	__m128i b = load(p + 16), d = load(p + 32), e = load(p + 48);
	p += 64;
	n -= 64;
	for (; n >= 64; p += 64, n -= 64) {
		a = fold(a, k512, load(p));
		b = fold(b, k512, load(p + 16));
		d = fold(d, k512, load(p + 32));
		e = fold(e, k512, load(p + 48));
	}
	a = fold(a, k128, b);
	a = fold(a, k128, d);
	a = fold(a, k128, e);
	for (; n >= 16; p += 16, n -= 16)
		a = fold(a, k128, load(p));
	// 128 -> 64 bits (the low half times x^64's constant, into the high).
	a = _mm_xor_si128(_mm_srli_si128(a, 8), _mm_clmulepi64_si128(k128, a, 0x01));
	// 64 -> 32 bits.
	a = _mm_xor_si128(_mm_srli_si128(a, 4), _mm_clmulepi64_si128(_mm_and_si128(a, low32), k64, 0x00));
	// Barrett: q = (a.lo32 · mu).lo32; crc = a ^ q · P, in bits 32..63.
	__m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), barrett, 0x10), low32);
	a = _mm_xor_si128(a, _mm_clmulepi64_si128(q, barrett, 0x00));
	return std::uint32_t(_mm_extract_epi32(a, 1));
}

const bool kHaveClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif

std::uint32_t crc_update(std::uint32_t c, const std::uint8_t *p, std::size_t n)
{
#if defined(__x86_64__)
	if (n >= 64 && kHaveClmul) {
		const std::size_t m = n & ~std::size_t(15);
		c = crc_fold(c, p, m);
		p += m;
		n -= m;
	}
#endif
	return crc_update_tables(c, p, n);
}

// The register after ~0 and the eight 0xff bytes of the masked LRH.
constexpr std::uint32_t kCrcAfterLrh = 0xdebb20e3u;

// --------------------------------------------------------- header table
constexpr std::uint32_t kPay = kHasPayload;
constexpr std::uint32_t kFirstLast = kIsFirst | kIsLast;

// The headers of each operation, before the transport's own (DETH, XRCETH).
constexpr std::uint32_t op_headers(Op o)
{
	switch (o) {
	case kSendFirst: return kPay | kIsFirst | kIsRequest;
	case kSendMiddle: return kPay | kIsMiddle | kIsRequest;
	case kSendLast: return kPay | kIsLast | kIsRequest;
	case kSendLastImm: return kHasImm | kPay | kIsLast | kIsRequest;
	case kSendOnly: return kPay | kFirstLast | kIsRequest;
	case kSendOnlyImm: return kHasImm | kPay | kFirstLast | kIsRequest;
	case kWriteFirst: return kHasReth | kPay | kIsFirst | kIsRequest;
	case kWriteMiddle: return kPay | kIsMiddle | kIsRequest;
	case kWriteLast: return kPay | kIsLast | kIsRequest;
	case kWriteLastImm: return kHasImm | kPay | kIsLast | kIsRequest;
	case kWriteOnly: return kHasReth | kPay | kFirstLast | kIsRequest;
	case kWriteOnlyImm: return kHasReth | kHasImm | kPay | kFirstLast | kIsRequest;
	case kReadRequest: return kHasReth | kFirstLast | kIsRequest;
	case kReadRespFirst: return kHasAeth | kPay | kIsFirst | kIsResponse;
	case kReadRespMiddle: return kPay | kIsMiddle | kIsResponse;
	case kReadRespLast: return kHasAeth | kPay | kIsLast | kIsResponse;
	case kReadRespOnly: return kHasAeth | kPay | kFirstLast | kIsResponse;
	case kAck: return kHasAeth | kFirstLast | kIsResponse;
	case kAtomicAck: return kHasAeth | kHasAtomicAckEth | kFirstLast | kIsResponse;
	case kCmpSwap: return kHasAtomicEth | kFirstLast | kIsRequest;
	case kFetchAdd: return kHasAtomicEth | kFirstLast | kIsRequest;
	case kSendLastInv: return kHasIeth | kPay | kIsLast | kIsRequest;
	case kSendOnlyInv: return kHasIeth | kPay | kFirstLast | kIsRequest;
	}
	return 0;
}

constexpr std::array<std::uint32_t, 256> make_opcode_table()
{
	std::array<std::uint32_t, 256> t{};
	for (unsigned o = 0; o < 32; o++) {
		std::uint32_t h = op_headers(Op(o));
		if (!h)
			continue;
		t[unsigned(kRc) | o] = h;
		// XRC requests name the SRQ; its responses are RC's.
		t[unsigned(kXrc) | o] = h & kIsRequest ? h | kHasXrcEth : h;
		// UC: sends and writes only.
		if (o <= kWriteOnlyImm)
			t[unsigned(kUc) | o] = h;
	}
	t[opcode(kUd, kSendOnly)] = op_headers(kSendOnly) | kHasDeth;
	t[opcode(kUd, kSendOnlyImm)] = op_headers(kSendOnlyImm) | kHasDeth;
	return t;
}

constexpr std::array<std::uint32_t, 256> kOpcodes = make_opcode_table();

// The pseudo header of the ICRC: masked IP and UDP headers and the BTH.
// Returns its length.
std::size_t pseudo_header(const IpInfo &ip, std::size_t udp_payload_bytes, const std::uint8_t *bth,
			  std::uint8_t *out)
{
	std::size_t n = 0;
	std::size_t udp_len = 8 + udp_payload_bytes + kIcrcBytes;
	if (ip.v6) {
		put32(out, 0x6fffffffu);	// version, traffic class and flow label masked
		put16(out + 4, std::uint16_t(udp_len));
		out[6] = 17;			// UDP
		out[7] = 0xff;			// hop limit masked
		std::memcpy(out + 8, ip.src, 16);
		std::memcpy(out + 24, ip.dst, 16);
		n = 40;
	} else {
		out[0] = 0x45;
		out[1] = 0xff;			// TOS masked
		put16(out + 2, std::uint16_t(20 + udp_len));
		put16(out + 4, ip.ip_id);
		put16(out + 6, 0x4000);		// DF, no fragment
		out[8] = 0xff;			// TTL masked
		out[9] = 17;
		put16(out + 10, 0xffff);	// checksum masked
		std::memcpy(out + 12, ip.src, 4);
		std::memcpy(out + 16, ip.dst, 4);
		n = 20;
	}
	put16(out + n, ip.src_port);
	put16(out + n + 2, ip.dst_port);
	put16(out + n + 4, std::uint16_t(udp_len));
	put16(out + n + 6, 0xffff);		// checksum masked
	n += 8;
	std::memcpy(out + n, bth, kBthBytes);
	out[n + 4] = 0xff;			// F, B and reserved bits masked
	return n + kBthBytes;
}

// --------------------------------------- the ICRC of an unknown IPv4 ID
// The CRC register is linear over GF(2): two packets that differ only in
// the IPv4 ID have ICRCs differing by L(id), where L runs the two ID bytes
// through the CRC (from a zero register) and then through as many zero
// bytes as follow them.  So the ID a sender used is the solution of
// L(id) = got ^ icrc(ID 0), if there is one (a 16-bit check instead of 32).
// The CRC is linear: two packets that differ only in the IPv4 ID differ
// in their ICRC by the image of the ID's bits, carried through the bytes
// that follow it.  For a given number of following bytes, the images of
// the 16 ID bits are reduced to echelon form once and kept (packets of a
// stream have few lengths); solving is then 16 steps.
class IdSolver {
public:
	// The ID whose ICRC difference is @d after @tail bytes, if any.
	bool solve(std::uint32_t d, std::size_t tail, std::uint16_t *id) const
	{
		const Images &im = images(tail);
		std::uint16_t m = 0;
		for (int i = 0; i < 16; i++)
			if (d & im.pivot[i]) {
				d ^= im.basis[i];
				m ^= im.combo[i];
			}
		*id = m;
		return d == 0;
	}

private:
	struct Images {
		std::size_t tail = ~std::size_t(0);
		std::uint32_t basis[16];	// reduced images of the ID bits
		std::uint16_t combo[16];	// which ID bits make each
		std::uint32_t pivot[16];
	};

	static const Images &images(std::size_t tail)
	{
		static thread_local Images cache[4];
		static thread_local unsigned next;
		for (const Images &c : cache)
			if (c.tail == tail)
				return c;
		Images &c = cache[next++ % 4];
		static const std::uint8_t zeros[1024] = {};
		for (int i = 0; i < 16; i++) {
			std::uint8_t b[2] = {std::uint8_t((1u << i) >> 8), std::uint8_t(1u << i)};
			std::uint32_t v = crc_update(0, b, 2);
			for (std::size_t left = tail; left;) {
				std::size_t n = std::min(left, sizeof(zeros));
				v = crc_update(v, zeros, n);
				left -= n;
			}
			std::uint16_t m = std::uint16_t(1u << i);
			for (int j = 0; j < i; j++)
				if (v & c.pivot[j]) {
					v ^= c.basis[j];
					m ^= c.combo[j];
				}
			c.basis[i] = v;
			c.combo[i] = m;
			c.pivot[i] = v & -v;	// the ID bits' images are independent
		}
		c.tail = tail;
		return c;
	}
};

} // namespace

std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::uint8_t> bytes)
{
	return crc_update(reg, bytes.data(), bytes.size());
}

std::uint32_t crc32_update_portable(std::uint32_t reg, std::span<const std::uint8_t> bytes)
{
	return crc_update_tables(reg, bytes.data(), bytes.size());
}

std::uint32_t headers_of(std::uint8_t opc) { return kOpcodes[opc]; }

std::size_t ext_bytes(std::uint32_t h)
{
	std::size_t n = 0;
	if (h & kHasXrcEth) n += kXrcEthBytes;
	if (h & kHasDeth) n += kDethBytes;
	if (h & kHasReth) n += kRethBytes;
	if (h & kHasAtomicEth) n += kAtomicEthBytes;
	if (h & kHasAeth) n += kAethBytes;
	if (h & kHasAtomicAckEth) n += kAtomicAckEthBytes;
	if (h & kHasImm) n += kImmBytes;
	if (h & kHasIeth) n += kIethBytes;
	return n;
}

std::uint64_t rnr_timer_ns(std::uint8_t code)
{
	// Microseconds of codes 1..31; code 0 is the longest, 655.36 ms.
	static constexpr std::uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920,
		122880, 163840, 245760, 327680, 491520,
	};
	return std::uint64_t(us[code & 31]) * 1000;
}

Packet gsi_headers(std::uint32_t psn)
{
	Packet p;
	p.bth.opcode = opcode(kUd, kSendOnly);
	p.bth.pkey = kDefaultPkey;
	p.bth.dest_qp = 1;
	p.bth.psn = psn & kPsnMask;
	p.deth.qkey = kGsiQkey;
	p.deth.src_qp = 1;
	return p;
}

bool gsi_datagram(const Packet &p, const IpInfo &ip, std::uint8_t sgid[16], std::uint8_t dgid[16])
{
	if (p.bth.opcode != opcode(kUd, kSendOnly) || p.deth.qkey != kGsiQkey || (p.bth.pkey & 0x7fff) != 0x7fff ||
	    p.payload.size() < kGsiMadBytes)
		return false;
	std::memset(sgid, 0, 16);
	std::memset(dgid, 0, 16);
	if (ip.v6) {
		std::memcpy(sgid, ip.src, 16);
		std::memcpy(dgid, ip.dst, 16);
	} else {
		sgid[10] = sgid[11] = dgid[10] = dgid[11] = 0xff;
		std::memcpy(sgid + 12, ip.src, 4);
		std::memcpy(dgid + 12, ip.dst, 4);
	}
	return true;
}

std::uint32_t ib_mtu_for(std::uint32_t ip_mtu, bool v6)
{
	const std::uint32_t over = (v6 ? 40 : 20) + 8 + kBthBytes + kXrcEthBytes + kRethBytes +
				   kImmBytes + kIcrcBytes;
	for (std::uint32_t m = 5; m >= 1; m--)
		if (mtu_bytes(m) + over <= ip_mtu)
			return m;
	return 0;
}

std::uint32_t icrc(const IpInfo &ip, std::span<const std::uint8_t> pkt)
{
	std::uint8_t ph[40 + 8 + kBthBytes];
	if (pkt.size() < kBthBytes)
		return 0;
	std::size_t n = pseudo_header(ip, pkt.size(), pkt.data(), ph);
	std::uint32_t c = crc_update(kCrcAfterLrh, ph, n);
	c = crc_update(c, pkt.data() + kBthBytes, pkt.size() - kBthBytes);
	return ~c;
}

ParseError parse(std::span<const std::uint8_t> buf, const IpInfo *ip, Packet &out)
{
	if (buf.size() < kBthBytes + kIcrcBytes)
		return ParseError::Short;
	const std::uint8_t *p = buf.data();
	Bth &b = out.bth;
	b.opcode = p[0];
	b.solicited = p[1] & 0x80;
	b.mig_req = p[1] & 0x40;
	b.pad = (p[1] >> 4) & 3;
	b.tver = p[1] & 0xf;
	b.pkey = get16(p + 2);
	b.fecn_becn = p[4];
	b.dest_qp = get24(p + 5);
	b.ack_req = p[8] & 0x80;
	b.psn = get24(p + 9);
	if (b.tver != 0)
		return ParseError::Version;
	std::uint32_t h = kOpcodes[b.opcode];
	if (!h)
		return ParseError::Opcode;
	out.headers = h;
	std::size_t hdr = kBthBytes + ext_bytes(h);
	std::size_t body = buf.size() - kIcrcBytes;
	if (body < hdr)
		return ParseError::Short;
	if (!(h & kHasPayload) && (body != hdr || b.pad))
		return body != hdr ? ParseError::Short : ParseError::Pad;
	if (body - hdr < b.pad)
		return ParseError::Pad;
	if (ip) {
		std::uint32_t want = icrc(*ip, buf.first(body));
		std::uint32_t got = std::uint32_t(p[body]) | std::uint32_t(p[body + 1]) << 8 |
				    std::uint32_t(p[body + 2]) << 16 | std::uint32_t(p[body + 3]) << 24;
		if (want != got) {
			static const IdSolver solver;
			std::uint16_t id;
			// The ID sits 12 bytes into the stream (after the LRH's
			// eight and four of the IPv4 header); tail: what follows it.
			// (With an ID of 0, @want is that CRC already: a segment of
			// a GSO send has its index for ID, docs/wire.md.)
			IpInfo as_zero = *ip;
			as_zero.ip_id = 0;
			std::size_t tail = 8 + 20 + 8 + body - 14;
			if (ip->v6 || !ip->ip_id_unknown ||
			    !solver.solve(got ^ (ip->ip_id ? icrc(as_zero, buf.first(body)) : want), tail, &id))
				return ParseError::Icrc;
		}
	}
	const std::uint8_t *q = p + kBthBytes;
	if (h & kHasXrcEth) {
		out.xrc_srq = get24(q + 1);
		q += kXrcEthBytes;
	}
	if (h & kHasDeth) {
		out.deth.qkey = get32(q);
		out.deth.src_qp = get24(q + 5);
		q += kDethBytes;
	}
	if (h & kHasReth) {
		out.reth.va = get64(q);
		out.reth.rkey = get32(q + 8);
		out.reth.length = get32(q + 12);
		q += kRethBytes;
	}
	if (h & kHasAtomicEth) {
		out.atomic.va = get64(q);
		out.atomic.rkey = get32(q + 8);
		out.atomic.swap_add = get64(q + 12);
		out.atomic.compare = get64(q + 20);
		q += kAtomicEthBytes;
	}
	if (h & kHasAeth) {
		out.aeth.syndrome = q[0];
		out.aeth.msn = get24(q + 1);
		q += kAethBytes;
	}
	if (h & kHasAtomicAckEth) {
		out.atomic_orig = get64(q);
		q += kAtomicAckEthBytes;
	}
	if (h & kHasImm) {
		std::memcpy(&out.imm, q, 4);
		q += kImmBytes;
	}
	if (h & kHasIeth) {
		out.ieth_rkey = get32(q);
		q += kIethBytes;
	}
	out.payload = buf.subspan(hdr, body - hdr - b.pad);
	return ParseError::None;
}

// ---------------------------------------------------------------- Builder
bool Builder::headers(const Packet &p, std::size_t payload_bytes)
{
	std::uint32_t h = kOpcodes[p.bth.opcode];
	if (!h || (!(h & kHasPayload) && payload_bytes)) {
		ok_ = false;
		return false;
	}
	pad_ = std::uint8_t((4 - payload_bytes % 4) % 4);
	std::size_t need = kBthBytes + ext_bytes(h) + payload_bytes + pad_ + kIcrcBytes;
	if (need > cap_) {
		ok_ = false;
		return false;
	}
	need_ = need;
	std::uint8_t *q = buf_;
	const Bth &b = p.bth;
	q[0] = b.opcode;
	q[1] = std::uint8_t((b.solicited ? 0x80 : 0) | (b.mig_req ? 0x40 : 0) | pad_ << 4 | (b.tver & 0xf));
	put16(q + 2, b.pkey);
	q[4] = b.fecn_becn;
	put24(q + 5, b.dest_qp & kQpnMask);
	q[8] = b.ack_req ? 0x80 : 0;
	put24(q + 9, b.psn & kPsnMask);
	q += kBthBytes;
	if (h & kHasXrcEth) {
		q[0] = 0;
		put24(q + 1, p.xrc_srq & kQpnMask);
		q += kXrcEthBytes;
	}
	if (h & kHasDeth) {
		put32(q, p.deth.qkey);
		q[4] = 0;
		put24(q + 5, p.deth.src_qp & kQpnMask);
		q += kDethBytes;
	}
	if (h & kHasReth) {
		put64(q, p.reth.va);
		put32(q + 8, p.reth.rkey);
		put32(q + 12, p.reth.length);
		q += kRethBytes;
	}
	if (h & kHasAtomicEth) {
		put64(q, p.atomic.va);
		put32(q + 8, p.atomic.rkey);
		put64(q + 12, p.atomic.swap_add);
		put64(q + 20, p.atomic.compare);
		q += kAtomicEthBytes;
	}
	if (h & kHasAeth) {
		q[0] = p.aeth.syndrome;
		put24(q + 1, p.aeth.msn & 0xffffff);
		q += kAethBytes;
	}
	if (h & kHasAtomicAckEth) {
		put64(q, p.atomic_orig);
		q += kAtomicAckEthBytes;
	}
	if (h & kHasImm) {
		std::memcpy(q, &p.imm, 4);
		q += kImmBytes;
	}
	if (h & kHasIeth) {
		put32(q, p.ieth_rkey);
		q += kIethBytes;
	}
	len_ = std::size_t(q - buf_);
	payload_left_ = payload_bytes;
	return true;
}

std::uint8_t *Builder::payload_room(std::size_t n)
{
	if (!ok_ || n > payload_left_) {
		ok_ = false;
		return nullptr;
	}
	std::uint8_t *r = buf_ + len_;
	len_ += n;
	payload_left_ -= n;
	return r;
}

std::size_t Builder::finish(const IpInfo &ip)
{
	if (!ok_ || payload_left_)
		return 0;
	std::memset(buf_ + len_, 0, pad_);
	len_ += pad_;
	std::uint32_t c = icrc(ip, {buf_, len_});
	buf_[len_] = std::uint8_t(c);
	buf_[len_ + 1] = std::uint8_t(c >> 8);
	buf_[len_ + 2] = std::uint8_t(c >> 16);
	buf_[len_ + 3] = std::uint8_t(c >> 24);
	return len_ + kIcrcBytes;
}

std::size_t read_cmsgs(const void *msg, std::uint8_t dst[16])
{
	auto *m = static_cast<msghdr *>(const_cast<void *>(msg));
	std::size_t seg = 0;
	for (cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int g;
			std::memcpy(&g, CMSG_DATA(c), sizeof(g));
			seg = g > 0 ? std::size_t(g) : 0;
		} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			in_pktinfo pi;
			std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			std::memcpy(dst, &pi.ipi_addr, 4);
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			in6_pktinfo pi;
			std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			std::memcpy(dst, &pi.ipi6_addr, 16);
		}
	}
	return seg;
}

} // namespace uabi::wire
