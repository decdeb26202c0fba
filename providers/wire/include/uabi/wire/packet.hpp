// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// RoCEv2 packets (IBTA Annex A17: the InfiniBand transport carried in UDP,
// destination port 4791): the transport headers, their order per opcode,
// the invariant CRC, and a parser that trusts no byte of what it is given
// (docs/wire.md).
//
// Every field is big-endian on the wire; the structs below are the decoded
// values, never overlaid on a buffer.
#ifndef UABI_WIRE_PACKET_HPP
#define UABI_WIRE_PACKET_HPP

#include <cstddef>
#include <cstdint>
#include <span>

namespace uabi::wire {

inline constexpr std::uint16_t kRoceV2Port = 4791;
inline constexpr std::uint16_t kDefaultPkey = 0xffff;
inline constexpr std::uint32_t kPsnMask = 0xffffff;
inline constexpr std::uint32_t kQpnMask = 0xffffff;
inline constexpr std::uint32_t kMcastQpn = 0xffffff;	// UD: to every QP attached to the group
inline constexpr std::size_t kIcrcBytes = 4;

// Header sizes (IBTA 9.2 and 9.3).
inline constexpr std::size_t kBthBytes = 12;
inline constexpr std::size_t kRethBytes = 16;
inline constexpr std::size_t kAethBytes = 4;
inline constexpr std::size_t kAtomicEthBytes = 28;
inline constexpr std::size_t kAtomicAckEthBytes = 8;
inline constexpr std::size_t kImmBytes = 4;
inline constexpr std::size_t kIethBytes = 4;
inline constexpr std::size_t kDethBytes = 8;
inline constexpr std::size_t kXrcEthBytes = 4;

// The transport of an opcode is its top three bits.
enum Transport : std::uint8_t {
	kRc = 0x00,
	kUc = 0x20,
	kRd = 0x40,
	kUd = 0x60,
	kCnp = 0x80,
	kXrc = 0xa0,
};

// The operation is its low five bits.
enum Op : std::uint8_t {
	kSendFirst = 0,
	kSendMiddle = 1,
	kSendLast = 2,
	kSendLastImm = 3,
	kSendOnly = 4,
	kSendOnlyImm = 5,
	kWriteFirst = 6,
	kWriteMiddle = 7,
	kWriteLast = 8,
	kWriteLastImm = 9,
	kWriteOnly = 10,
	kWriteOnlyImm = 11,
	kReadRequest = 12,
	kReadRespFirst = 13,
	kReadRespMiddle = 14,
	kReadRespLast = 15,
	kReadRespOnly = 16,
	kAck = 17,
	kAtomicAck = 18,
	kCmpSwap = 19,
	kFetchAdd = 20,
	kSendLastInv = 22,
	kSendOnlyInv = 23,
};

constexpr std::uint8_t opcode(Transport t, Op o) { return std::uint8_t(unsigned(t) | unsigned(o)); }
constexpr Transport transport_of(std::uint8_t opc) { return Transport(opc & 0xe0); }
constexpr Op op_of(std::uint8_t opc) { return Op(opc & 0x1f); }

// Which extended headers (and whether a payload) an opcode carries; in
// this order after the BTH: XRCETH, DETH, RETH, AtomicETH, AETH,
// AtomicAckETH, ImmDt, IETH.
enum HeaderBit : std::uint32_t {
	kHasXrcEth = 1u << 0,
	kHasDeth = 1u << 1,
	kHasReth = 1u << 2,
	kHasAtomicEth = 1u << 3,
	kHasAeth = 1u << 4,
	kHasAtomicAckEth = 1u << 5,
	kHasImm = 1u << 6,
	kHasIeth = 1u << 7,
	kHasPayload = 1u << 8,
	// Role bits: first/middle/last of a message, or a response.
	kIsFirst = 1u << 9,
	kIsMiddle = 1u << 10,
	kIsLast = 1u << 11,
	kIsRequest = 1u << 12,
	kIsResponse = 1u << 13,
};

// The header set of an opcode, 0 if this implementation does not know it
// (RD, CNP, reserved codes, operations a transport does not have).
std::uint32_t headers_of(std::uint8_t opc);
// Bytes of extended headers an opcode carries (between BTH and payload).
std::size_t ext_bytes(std::uint32_t headers);

// AETH syndromes (IBTA 9.7.5.1.4): the top three bits say which.
enum AckKind : std::uint8_t {
	kAckOk = 0x00,		// low bits: credit count (0x1f: none advertised)
	kAckRnr = 0x20,		// low bits: the RNR timer code
	kAckNak = 0x60,		// low bits: NakCode
};
enum NakCode : std::uint8_t {
	kNakPsnSeq = 0,
	kNakInvalidRequest = 1,
	kNakRemoteAccess = 2,
	kNakRemoteOp = 3,
	kNakInvalidRd = 4,
};
// Nanoseconds of an RNR timer code (IBTA table 45; code 0 = 655.36 ms).
std::uint64_t rnr_timer_ns(std::uint8_t code);

struct Bth {
	std::uint8_t opcode = 0;
	bool solicited = false;
	bool mig_req = false;
	std::uint8_t pad = 0;		// bytes of pad after the payload, 0..3
	std::uint8_t tver = 0;
	std::uint16_t pkey = kDefaultPkey;
	std::uint8_t fecn_becn = 0;	// byte 4 (RoCEv2: F and B bits), masked in the ICRC
	std::uint32_t dest_qp = 0;
	bool ack_req = false;
	std::uint32_t psn = 0;
};

struct Reth {
	std::uint64_t va = 0;
	std::uint32_t rkey = 0;
	std::uint32_t length = 0;
};

struct AtomicEth {
	std::uint64_t va = 0;
	std::uint32_t rkey = 0;
	std::uint64_t swap_add = 0;
	std::uint64_t compare = 0;
};

struct Aeth {
	std::uint8_t syndrome = 0;
	std::uint32_t msn = 0;
};

struct Deth {
	std::uint32_t qkey = 0;
	std::uint32_t src_qp = 0;
};

// A parsed packet: the headers it carries and where its payload is (a view
// into the buffer given to parse()).
struct Packet {
	Bth bth;
	std::uint32_t headers = 0;	// HeaderBit set of bth.opcode
	std::uint32_t xrc_srq = 0;
	Deth deth;
	Reth reth;
	AtomicEth atomic;
	Aeth aeth;
	std::uint64_t atomic_orig = 0;
	std::uint32_t imm = 0;		// as on the wire (network order value kept as read)
	std::uint32_t ieth_rkey = 0;
	std::span<const std::uint8_t> payload;
	bool has(std::uint32_t bit) const { return (headers & bit) != 0; }
};

// Why parse() refused a packet (each counted by the receiver).
enum class ParseError {
	None,
	Short,		// shorter than its headers and ICRC
	Opcode,		// unknown or unsupported opcode
	Version,	// BTH TVer not 0
	Pad,		// pad on an opcode without payload, or beyond the payload
	Icrc,		// the invariant CRC does not match
};

// The IP and UDP header fields the ICRC covers (those not masked).  The
// caller knows them from its socket: addresses, and the lengths follow
// from the UDP payload's.
struct IpInfo {
	bool v6 = false;
	std::uint8_t src[16] = {};	// IPv4: the first four bytes
	std::uint8_t dst[16] = {};
	std::uint16_t ip_id = 0;	// IPv4 identification (0: DF datagrams of an unconnected socket)
	// A UDP socket never sees the IPv4 identification of what it
	// receives: parse() then accepts the ICRC of any ID, found by solving
	// for it (docs/wire.md, "The ICRC and the IPv4 ID").
	bool ip_id_unknown = false;
	std::uint16_t src_port = 0;
	std::uint16_t dst_port = kRoceV2Port;
};

// The ICRC of a RoCEv2 packet: CRC-32 (as Ethernet's) over eight 0xff
// bytes standing for the masked LRH, the IP header with its variant fields
// set to ones (IPv4: TOS, TTL, checksum; IPv6: traffic class, flow label,
// hop limit), the UDP header with its checksum set to ones, the BTH with
// byte 4 set to ones, then the rest of the packet (headers, payload, pad)
// up to the ICRC.  @udp_payload is everything UDP carries except the ICRC.
std::uint32_t icrc(const IpInfo &ip, std::span<const std::uint8_t> udp_payload);

// The control messages of a datagram a UDP socket received (@msg, a
// struct msghdr): the destination address of IP_PKTINFO or IPV6_PKTINFO
// into @dst (IPv4: its first four bytes; untouched without one), and
// UDP_GRO's segment size as the result (0: a single datagram).
std::size_t read_cmsgs(const void *msg, std::uint8_t dst[16]);
// The CRC-32 register (Ethernet's polynomial, reflected; no inversion)
// run over @bytes: the fastest way this CPU has (carry-less multiplication
// where there is one), and the portable one, which tests compare with it.
std::uint32_t crc32_update(std::uint32_t reg, std::span<const std::uint8_t> bytes);
std::uint32_t crc32_update_portable(std::uint32_t reg, std::span<const std::uint8_t> bytes);

// Parses @udp_payload (ICRC included).  @ip is used for the ICRC check;
// nullptr skips it (the caller could not know the header: say why in
// docs/wire.md).
ParseError parse(std::span<const std::uint8_t> udp_payload, const IpInfo *ip, Packet &out);

// Builds packets into a caller's buffer: headers in order, then the
// payload, the pad and (finish) the ICRC.
class Builder {
public:
	Builder(std::uint8_t *buf, std::size_t cap) : buf_(buf), cap_(cap) {}
	// Writes the BTH and the extended headers of p.bth.opcode from @p;
	// false if the opcode is unknown or the buffer too small.  The pad is
	// computed from @payload_bytes.
	bool headers(const Packet &p, std::size_t payload_bytes);
	// Appends payload bytes (any number of calls, up to payload_bytes).
	std::uint8_t *payload_room(std::size_t n);
	// The pad and the ICRC; returns the UDP payload's length (0: overflow).
	std::size_t finish(const IpInfo &ip);
	// The UDP payload's length finish() will return, known once
	// headers() succeeded (0 before).
	std::size_t size() const { return ok_ ? need_ : 0; }

private:
	std::uint8_t *buf_;
	std::size_t cap_;
	std::size_t need_ = 0;
	std::size_t len_ = 0;
	std::size_t payload_left_ = 0;
	std::uint8_t pad_ = 0;
	bool ok_ = true;
};

// QP1's datagrams, the connection manager's MADs (docs/cm.md, "Across
// hosts"): a whole UD SEND_ONLY from and to QP1 with the GSI's well-known
// Q_Key, the default P_Key and one MAD.
inline constexpr std::uint32_t kGsiQkey = 0x80010000;
inline constexpr std::size_t kGsiMadBytes = 256;
// The headers of such a datagram, with PSN @psn (its payload: the MAD).
Packet gsi_headers(std::uint32_t psn);
// Whether @p (parsed, its ICRC checked) is such a datagram; if so, its
// source and destination GIDs — IPv6, or IPv4-mapped — from @ip into
// @sgid and @dgid.  Its MAD is the first kGsiMadBytes of p.payload.
bool gsi_datagram(const Packet &p, const IpInfo &ip, std::uint8_t sgid[16], std::uint8_t dgid[16]);

// 24-bit PSN arithmetic: a - b as a signed distance.
constexpr std::int32_t psn_diff(std::uint32_t a, std::uint32_t b)
{
	return std::int32_t((a - b) << 8) >> 8;
}
constexpr std::uint32_t psn_add(std::uint32_t a, std::uint32_t n) { return (a + n) & kPsnMask; }

// Bytes of an IB MTU enum value (IBV_MTU_256 = 1 .. IBV_MTU_4096 = 5), 0 if invalid.
constexpr std::uint32_t mtu_bytes(std::uint32_t mtu_enum)
{
	return mtu_enum >= 1 && mtu_enum <= 5 ? 128u << mtu_enum : 0;
}
// The largest IB MTU enum whose packets fit an IP MTU (with IPv4 or IPv6,
// UDP, BTH, the largest extended headers and the ICRC); 0 if none fits.
std::uint32_t ib_mtu_for(std::uint32_t ip_mtu, bool v6);

} // namespace uabi::wire

#endif // UABI_WIRE_PACKET_HPP
