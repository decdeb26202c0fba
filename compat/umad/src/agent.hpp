// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The management agents of the software device's ports (docs/fsview.md,
// "The management agent"): what happens to a MAD a umad user sends out of
// a port.  The subnet management agent (SubnGet of NodeInfo, NodeDescription,
// PortInfo, GUIDInfo, P_KeyTable, SMInfo), the performance management agent
// (ClassPortInfo, PortCounters, PortCountersExtended) and, because the port is the subnet's master
// SM, a subnet administrator (ClassPortInfo, NodeRecord, PortInfoRecord),
// all answering from the device's Snapshot.
//
// The fabric is the one port: LID routing reaches only the port's own LIDs
// (and the permissive LID), a directed route only the port itself (hop
// count 0).  Anything else is lost, as on a link with nobody at the other
// end: the sender sees its request time out.
#ifndef UABI_UMAD_AGENT_HPP
#define UABI_UMAD_AGENT_HPP

#include <uabi/fsview.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace uabi::umad {

inline constexpr std::size_t kMadSize = 256;

// Management classes, methods and attributes (IBA vol. 1, chapters 13-16).
enum : std::uint8_t {
	kClassSubnLid = 0x01,
	kClassSubnAdm = 0x03,
	kClassPerf = 0x04,
	kClassSubnDr = 0x81,
};
enum : std::uint8_t {
	kMethodGet = 0x01,
	kMethodSet = 0x02,
	kMethodGetResp = 0x81,
	kMethodGetTable = 0x12,
	kMethodGetTableResp = 0x92,
	kMethodRespBit = 0x80,
};
enum : std::uint16_t {
	kAttrClassPortInfo = 0x0001,
	kAttrNodeDesc = 0x0010,
	kAttrNodeInfo = 0x0011,
	kAttrGuidInfo = 0x0014,
	kAttrPortInfo = 0x0015,
	kAttrPkeyTable = 0x0016,
	kAttrSmInfo = 0x0020,
	kAttrPortCounters = 0x0012, // PerfMgt
	kAttrPortCountersExt = 0x001d, // PerfMgt
	kAttrNodeRecord = 0x0011,   // SA
	kAttrPortInfoRecord = 0x0012, // SA
};
// MAD status (the common bits) and the SA's class-specific codes.
enum : std::uint16_t {
	kStatusBadVersion = 0x0004,
	kStatusBadMethod = 0x0008,
	kStatusBadMethodAttr = 0x000c,
	kStatusBadField = 0x001c,
	kSaStatusReqInvalid = 0x0200,
	kSaStatusNoRecords = 0x0300,
	kSaStatusTooMany = 0x0400,
};
inline constexpr std::uint16_t kPermissiveLid = 0xffff;
inline constexpr std::uint32_t kPortCapIsSm = 1u << 1;
inline constexpr std::uint32_t kPortCapIsDm = 1u << 19;
inline constexpr std::uint16_t kSaCapPortInfoCapMaskMatch = 1u << 13;
inline constexpr std::uint16_t kPmaCapXmitWait = 1u << 12;
inline constexpr std::uint16_t kPmaCapExtWidth = 1u << 9; // PortCountersExtended, all of it

// Where a MAD goes: the address of the umad header.
struct Address {
	std::uint16_t dlid = 0; // host order
	std::uint32_t dqpn = 0;
};

// A MAD arriving at the sender's port: an answer of its agents.
struct Answer {
	std::array<std::uint8_t, kMadSize> mad{};
	// Bytes of the message: kMadSize, or for an RMPP transfer (SA
	// GetTable) the reassembled length the kernel's RMPP would deliver.
	std::size_t length = kMadSize;
	bool rmpp = false;
	std::uint16_t slid = 0;	 // host order
	std::uint32_t sqpn = 0;
};

enum class Fate {
	Answered, // out holds the response
	Lost,	  // nobody answers (no such LID, a path beyond the loop, a
		  // response nobody waits for): the sender times out
};

// Processes one MAD (mad: kMadSize bytes, as sent, the TID already the
// kernel's) sent out of port `port` of the device described by `s`.
Fate send(const fsview::Snapshot &s, std::uint32_t port, const std::uint8_t *mad,
	  const Address &to, Answer &out);

// Byte access in network order.
inline std::uint16_t get16(const std::uint8_t *p) { return std::uint16_t(p[0] << 8 | p[1]); }
inline std::uint32_t get32(const std::uint8_t *p)
{
	return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}
inline std::uint64_t get64(const std::uint8_t *p)
{
	return std::uint64_t(get32(p)) << 32 | get32(p + 4);
}
inline void put16(std::uint8_t *p, std::uint16_t v) { p[0] = std::uint8_t(v >> 8); p[1] = std::uint8_t(v); }
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

// The data offset of a class's MADs (ib_get_mad_data_offset in Linux): the
// SA's header is 56 bytes, vendor range 2's 40, device management's 64.
std::size_t data_offset(std::uint8_t mgmt_class);
// Classes whose transfers may use RMPP.
bool rmpp_class(std::uint8_t mgmt_class);
// A response, or a method that expects none (Trap Repress).
bool is_response(const std::uint8_t *mad);

} // namespace uabi::umad

#endif // UABI_UMAD_AGENT_HPP
