// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The port's management agents (agent.hpp, docs/fsview.md).  Attribute
// layouts: IBA vol. 1 chapters 14 (SMA), 15 (SA) and 16 (PMA).
#include "agent.hpp"

#include <algorithm>
#include <cstring>

namespace uabi::umad {

namespace {

using fsview::Port;
using fsview::Snapshot;

// MAD header fields (bytes).
constexpr std::size_t kOffBaseVersion = 0;
constexpr std::size_t kOffClass = 1;
constexpr std::size_t kOffClassVersion = 2;
constexpr std::size_t kOffMethod = 3;
constexpr std::size_t kOffStatus = 4;
constexpr std::size_t kOffHopPtr = 6;
constexpr std::size_t kOffHopCnt = 7;
constexpr std::size_t kOffAttrId = 16;
constexpr std::size_t kOffAttrMod = 20;
// SMPs: the attribute at 64; directed route: DrSLID 32, DrDLID 34,
// InitialPath 128, ReturnPath 192 (unused: no path leaves the port).
constexpr std::size_t kOffSmpData = 64;
constexpr std::size_t kOffDrSlid = 32;
constexpr std::size_t kOffDrDlid = 34;
constexpr std::uint16_t kDrDirection = 0x8000;
// GMPs: PerfMgt data at 64; SA: RMPP header 24..35, SM_Key 36, attribute
// offset 44, component mask 48, records from 56.
constexpr std::size_t kOffPmaData = 64;
constexpr std::size_t kOffRmpp = 24;
constexpr std::size_t kOffSaAttrOffset = 44;
constexpr std::size_t kOffSaCompMask = 48;
constexpr std::size_t kOffSaData = 56;
constexpr std::size_t kSaDataMax = kMadSize - kOffSaData;

// The port's base LID and the LIDs its LMC adds.
bool port_has_lid(const Port &p, std::uint16_t lid)
{
	if (!p.attr.lid)
		return false;
	std::uint32_t n = 1u << (p.attr.lmc & 7);
	return lid >= p.attr.lid && std::uint32_t(lid) < std::uint32_t(p.attr.lid) + n;
}

bool is_sm(const Port &p)
{
	return (p.attr.port_cap_flags & kPortCapIsSm) && p.attr.sm_lid == p.attr.lid && p.attr.lid;
}

// ------------------------------------------------------- the attributes
// NodeInfo (40 bytes) as seen through `arrival`.
void node_info(const Snapshot &s, const Port &arrival, std::uint8_t *d)
{
	d[0] = 1; // BaseVersion
	d[1] = 1; // ClassVersion
	d[2] = 1; // NodeType: channel adapter
	d[3] = std::uint8_t(s.ports.size());
	put64(d + 4, s.attr.sys_image_guid);
	put64(d + 12, s.attr.node_guid);
	put64(d + 20, fsview::port_guid(arrival));
	put16(d + 28, s.attr.max_pkeys);
	put16(d + 30, std::uint16_t(s.attr.vendor_part_id));
	put32(d + 32, s.attr.hw_ver);
	d[36] = std::uint8_t(arrival.num);
	d[37] = std::uint8_t(s.attr.vendor_id >> 16);
	d[38] = std::uint8_t(s.attr.vendor_id >> 8);
	d[39] = std::uint8_t(s.attr.vendor_id);
}

void node_desc(const Snapshot &s, std::uint8_t *d)
{
	std::memset(d, 0, 64);
	std::memcpy(d, s.node_desc.data(), std::min<std::size_t>(s.node_desc.size(), 64));
}

// PortInfo (64 bytes) of port p, the SMP having arrived through `arrival`.
void port_info(const Port &p, const Port &arrival, std::uint8_t *d)
{
	const uabi_port_attr &a = p.attr;
	std::memset(d, 0, 64);
	put64(d + 0, 0);				// M_Key: none
	put64(d + 8, fsview::gid_prefix(p));		// GidPrefix
	put16(d + 16, a.lid);
	put16(d + 18, a.sm_lid);			// MasterSMLID
	put32(d + 20, a.port_cap_flags);		// CapabilityMask
	d[28] = std::uint8_t(arrival.num);		// LocalPortNum
	// 1X and SDR are every port's (IBA: mandatory); the active width and
	// speed are the device's.  Enabled is all that is supported.
	const std::uint8_t widths = std::uint8_t(a.active_width | 1);
	d[29] = widths;					// LinkWidthEnabled
	d[30] = widths;					// LinkWidthSupported
	d[31] = a.active_width;				// LinkWidthActive
	// Speeds up to QDR live in the 4-bit fields; FDR and above in the
	// extended ones (LinkSpeedExt: FDR 1, EDR 2, HDR 4, NDR 8).
	std::uint8_t speed = a.active_speed <= 4 ? a.active_speed : 0;
	const std::uint8_t speeds = std::uint8_t((speed | 1) & 0xf);
	std::uint8_t ext = 0;
	switch (a.active_speed) {
	case 16: ext = 1; break;
	case 32: ext = 2; break;
	case 64: ext = 4; break;
	case 128: ext = 8; break;
	}
	d[32] = std::uint8_t(speeds << 4 | (a.state & 0xf));	 // LinkSpeedSupported, PortState
	d[33] = std::uint8_t((a.phys_state & 0xf) << 4 | 2); // PortPhysicalState, LinkDownDefault: Polling
	d[34] = std::uint8_t(a.lmc & 7);			 // M_KeyProtectBits 0, LMC
	d[35] = std::uint8_t(speed << 4 | speeds);		 // LinkSpeedActive, LinkSpeedEnabled
	d[36] = std::uint8_t((a.active_mtu & 0xf) << 4 | (a.sm_sl & 0xf)); // NeighborMTU, MasterSMSL
	d[37] = std::uint8_t((a.max_vl_num & 0xf) << 4);	 // VLCap, InitType 0
	d[41] = std::uint8_t((a.init_type_reply & 0xf) << 4 | (a.max_mtu & 0xf)); // InitTypeReply, MTUCap
	d[43] = std::uint8_t((a.max_vl_num & 0xf) << 4);	 // OperationalVLs
	put16(d + 46, std::uint16_t(a.bad_pkey_cntr));		 // P_KeyViolations
	put16(d + 48, std::uint16_t(a.qkey_viol_cntr));		 // Q_KeyViolations
	d[50] = std::uint8_t(std::min<std::uint32_t>(a.gid_tbl_len, 255)); // GUIDCap
	d[51] = std::uint8_t(a.subnet_timeout & 0x1f);		 // SubnetTimeOut
	d[62] = std::uint8_t(ext << 4 | ext);			 // LinkSpeedExtActive, Supported
	d[63] = ext;						 // LinkSpeedExtEnabled
}

// ------------------------------------------------------------- replies
struct Reply {
	std::uint8_t *mad;
	void status(std::uint16_t st) { put16(mad + kOffStatus, std::uint16_t(get16(mad + kOffStatus) | st)); }
};

// The SMA (LID-routed or directed route): the attribute into data.
void sma(const Snapshot &s, const Port &arrival, std::uint8_t *m)
{
	const std::uint8_t method = m[kOffMethod];
	const std::uint16_t attr = get16(m + kOffAttrId);
	const std::uint32_t mod = get32(m + kOffAttrMod);
	std::uint8_t *d = m + kOffSmpData;
	Reply r{m};
	m[kOffMethod] = kMethodGetResp;
	put16(m + kOffStatus, 0);
	if (m[kOffBaseVersion] != 1 || m[kOffClassVersion] != 1) {
		r.status(kStatusBadVersion);
		return;
	}
	if (method != kMethodGet) {
		// Set: this agent does not change the device (the port's
		// attributes are the device's own); other methods are not an
		// SMA's to answer.
		r.status(method == kMethodSet ? kStatusBadMethodAttr : kStatusBadMethod);
		return;
	}
	std::memset(d, 0, 64);
	switch (attr) {
	case kAttrNodeInfo:
		node_info(s, arrival, d);
		return;
	case kAttrNodeDesc:
		node_desc(s, d);
		return;
	case kAttrPortInfo: {
		// A channel adapter's attribute modifier is the port number; 0
		// means the port the SMP came in through.
		const Port *p = mod == 0 ? &arrival : fsview::find_port(s, mod);
		if (!p) {
			r.status(kStatusBadField);
			return;
		}
		port_info(*p, arrival, d);
		return;
	}
	case kAttrGuidInfo: {
		// Eight GUIDs a block: the port's GUIDs are its GIDs' interface ids.
		std::size_t blocks = (arrival.gids.size() + 7) / 8;
		if (mod >= blocks) {
			r.status(kStatusBadField);
			return;
		}
		for (std::size_t i = 0; i < 8 && mod * 8 + i < arrival.gids.size(); i++)
			std::memcpy(d + 8 * i, arrival.gids[mod * 8 + i].data() + 8, 8);
		return;
	}
	case kAttrPkeyTable: {
		// 32 P_Keys a block (the upper half of the modifier is a
		// switch's port number, unused on a channel adapter).
		std::uint32_t block = mod & 0xffff;
		std::size_t blocks = (arrival.pkeys.size() + 31) / 32;
		if (block >= blocks) {
			r.status(kStatusBadField);
			return;
		}
		for (std::size_t i = 0; i < 32 && block * 32 + i < arrival.pkeys.size(); i++)
			put16(d + 2 * i, arrival.pkeys[block * 32 + i]);
		return;
	}
	case kAttrSmInfo:
		// Only a port that is the subnet manager answers SMInfo.
		if (!is_sm(arrival)) {
			r.status(kStatusBadMethodAttr);
			return;
		}
		put64(d + 0, fsview::port_guid(arrival)); // GUID
		put64(d + 8, 0);			   // SM_Key: not disclosed
		put32(d + 16, 0);			   // ActCount: no sweeps
		d[20] = 3;				   // Priority 0, SMState MASTER
		return;
	default:
		r.status(kStatusBadMethodAttr);
		return;
	}
}
// PortCounters and PortCountersExtended: Get or Set only; the answer
// echoes PortSelect and CounterSelect over zeroed data.  nullptr: the
// status is set (a bad method, or no such port).
const Port *counters_request(const Snapshot &s, Reply &r, std::uint8_t method, std::uint8_t *d,
			     std::uint16_t *counter_select)
{
	if (method != kMethodGet && method != kMethodSet) {
		r.status(kStatusBadMethod);
		return nullptr;
	}
	const std::uint8_t port_select = d[1];
	*counter_select = get16(d + 2);
	const Port *p = fsview::find_port(s, port_select);
	std::memset(d, 0, kMadSize - kOffPmaData);
	d[1] = port_select;
	put16(d + 2, *counter_select);
	if (!p)
		r.status(kStatusBadField);
	return p;
}


// The PMA: ClassPortInfo, PortCounters and PortCountersExtended, whose
// traffic counters are the calling user's (fsview::Traffic).
void pma(const Snapshot &s, std::uint8_t *m)
{
	const std::uint8_t method = m[kOffMethod];
	const std::uint16_t attr = get16(m + kOffAttrId);
	std::uint8_t *d = m + kOffPmaData;
	Reply r{m};
	m[kOffMethod] = kMethodGetResp;
	put16(m + kOffStatus, 0);
	if (m[kOffBaseVersion] != 1 || m[kOffClassVersion] != 1) {
		r.status(kStatusBadVersion);
		return;
	}
	if (attr == kAttrClassPortInfo) {
		if (method != kMethodGet) {
			r.status(kStatusBadMethodAttr);
			return;
		}
		std::memset(d, 0, kMadSize - kOffPmaData);
		d[0] = 1; // BaseVersion
		d[1] = 1; // ClassVersion
		put16(d + 2, kPmaCapXmitWait | kPmaCapExtWidth);
		put32(d + 4, 18); // CapabilityMask2 0, RespTimeValue 18
		return;
	}
	if (attr == kAttrPortCounters) {
		// Set clears the counters CounterSelect names (for the calling
		// user: the counts are its own), and answers them as they are
		// then.
		std::uint16_t counter_select;
		const Port *p = counters_request(s, r, method, d, &counter_select);
		if (!p)
			return;
		if (method == kMethodSet)
			fsview::clear_counters(s, *p, counter_select);
		const fsview::PortCounters c = fsview::port_counters(s, *p);
		put16(d + 4, c.symbol_error);
		d[6] = c.link_error_recovery;
		d[7] = c.link_downed;
		put16(d + 8, c.port_rcv_errors);
		put16(d + 10, c.port_rcv_remote_physical_errors);
		put16(d + 12, c.port_rcv_switch_relay_errors);
		put16(d + 14, c.port_xmit_discards);
		d[16] = c.port_xmit_constraint_errors;
		d[17] = c.port_rcv_constraint_errors;
		d[19] = std::uint8_t((c.local_link_integrity_errors & 0xf) << 4 |
				     (c.excessive_buffer_overrun_errors & 0xf));
		put16(d + 22, c.vl15_dropped);
		put32(d + 24, c.port_xmit_data);
		put32(d + 28, c.port_rcv_data);
		put32(d + 32, c.port_xmit_packets);
		put32(d + 36, c.port_rcv_packets);
		put32(d + 40, c.port_xmit_wait);
		return;
	}
	if (attr == kAttrPortCountersExt) {
		std::uint16_t counter_select;
		const Port *p = counters_request(s, r, method, d, &counter_select);
		if (!p)
			return;
		if (method == kMethodSet)
			fsview::clear_counters_ext(s, *p, counter_select);
		const fsview::PortCountersExt x = fsview::port_counters_ext(s, *p);
		put64(d + 8, x.port_xmit_data);
		put64(d + 16, x.port_rcv_data);
		put64(d + 24, x.port_xmit_packets);
		put64(d + 32, x.port_rcv_packets);
		put64(d + 40, x.unicast_xmit_packets);
		put64(d + 48, x.unicast_rcv_packets);
		put64(d + 56, x.multicast_xmit_packets);
		put64(d + 64, x.multicast_rcv_packets);
		return;
	}
	r.status(kStatusBadMethodAttr);
}

// ------------------------------------------------------------------- SA
// A record and the comparison the component mask asks for.
struct Component {
	std::size_t off;  // byte offset in the record
	std::size_t len;  // bytes
	std::uint8_t mask; // for a field in part of one byte; 0xff otherwise
};

// NodeRecord: LID, reserved, NodeInfo (40), NodeDescription (64).
constexpr std::size_t kNodeRecordSize = 108;
const Component kNodeRecordComps[] = {
	{0, 2, 0xff},	 // 0 LID
	{2, 2, 0xff},	 // 1 reserved
	{4, 1, 0xff},	 // 2 BaseVersion
	{5, 1, 0xff},	 // 3 ClassVersion
	{6, 1, 0xff},	 // 4 NodeType
	{7, 1, 0xff},	 // 5 NumPorts
	{8, 8, 0xff},	 // 6 SystemImageGUID
	{16, 8, 0xff},	 // 7 NodeGUID
	{24, 8, 0xff},	 // 8 PortGUID
	{32, 2, 0xff},	 // 9 PartitionCap
	{34, 2, 0xff},	 // 10 DeviceID
	{36, 4, 0xff},	 // 11 Revision
	{40, 1, 0xff},	 // 12 LocalPortNum
	{41, 3, 0xff},	 // 13 VendorID
	{44, 64, 0xff},	 // 14 NodeDescription
};

// PortInfoRecord: EndportLID, PortNum, Options, PortInfo (64).  The
// components this SA filters on (the ones whose position in the record is
// unambiguous); a mask naming any other is refused (ERR_REQ_INVALID).
constexpr std::size_t kPortInfoRecordSize = 68;
struct PirComponent {
	int bit;
	Component c;
};
const PirComponent kPortInfoRecordComps[] = {
	{0, {0, 2, 0xff}},    // EndportLID
	{1, {2, 1, 0xff}},    // PortNum
	{2, {3, 1, 0xff}},    // Options
	{3, {4, 8, 0xff}},    // M_Key
	{4, {12, 8, 0xff}},   // GidPrefix
	{5, {20, 2, 0xff}},   // LID
	{6, {22, 2, 0xff}},   // MasterSMLID
	{7, {24, 4, 0xff}},   // CapabilityMask
	{8, {28, 2, 0xff}},   // DiagCode
	{9, {30, 2, 0xff}},   // M_KeyLeasePeriod
	{10, {32, 1, 0xff}},  // LocalPortNum
	{11, {33, 1, 0xff}},  // LinkWidthEnabled
	{12, {34, 1, 0xff}},  // LinkWidthSupported
	{13, {35, 1, 0xff}},  // LinkWidthActive
	{15, {36, 1, 0x0f}},  // PortState
	{16, {37, 1, 0xf0}},  // PortPhysicalState
	{20, {38, 1, 0x07}},  // LMC
};
constexpr int kPirCapMaskBit = 7;
// SRP's and OpenSM's convention: attribute modifier bit 31 makes the
// CapabilityMask component match records having at least the asked bits.
constexpr std::uint32_t kSaCapMaskMatchMod = 1u << 31;

bool field_equal(const std::uint8_t *a, const std::uint8_t *b, const Component &c)
{
	if (c.mask != 0xff)
		return (a[c.off] & c.mask) == (b[c.off] & c.mask);
	return std::memcmp(a + c.off, b + c.off, c.len) == 0;
}

// The SA: answers for the subnet, which is this node.
void sa(const Snapshot &s, std::uint8_t *m, Answer &out)
{
	const std::uint8_t method = m[kOffMethod];
	const std::uint16_t attr = get16(m + kOffAttrId);
	const std::uint32_t mod = get32(m + kOffAttrMod);
	const std::uint64_t comp = get64(m + kOffSaCompMask);
	Reply r{m};
	m[kOffMethod] = std::uint8_t(method | kMethodRespBit);
	put16(m + kOffStatus, 0);
	std::memset(m + kOffRmpp, 0, 12); // no RMPP unless a table follows
	if (m[kOffBaseVersion] != 1 || m[kOffClassVersion] != 2) {
		r.status(kStatusBadVersion);
		return;
	}
	if (attr == kAttrClassPortInfo) {
		if (method != kMethodGet) {
			r.status(kStatusBadMethodAttr);
			return;
		}
		std::uint8_t *d = m + kOffSaData;
		std::memset(d, 0, kSaDataMax);
		d[0] = 1; // BaseVersion
		d[1] = 2; // ClassVersion
		put16(d + 2, kSaCapPortInfoCapMaskMatch);
		put32(d + 4, 18); // RespTimeValue
		return;
	}
	if (attr != kAttrNodeRecord && attr != kAttrPortInfoRecord) {
		r.status(kStatusBadMethodAttr);
		return;
	}
	if (method != kMethodGet && method != kMethodGetTable) {
		r.status(kStatusBadMethodAttr);
		return;
	}
	// Every record of the subnet: one per port (its end port LID).
	const bool node = attr == kAttrNodeRecord;
	const std::size_t size = node ? kNodeRecordSize : kPortInfoRecordSize;
	const std::size_t stride = (size + 7) / 8 * 8;
	std::uint8_t want[kSaDataMax];
	std::memcpy(want, m + kOffSaData, kSaDataMax);
	if (!node) {
		std::uint64_t known = 0;
		for (const auto &pc : kPortInfoRecordComps)
			known |= 1ull << pc.bit;
		if (comp & ~known) {
			r.status(kSaStatusReqInvalid);
			return;
		}
	} else if (comp >> 15) {
		r.status(kSaStatusReqInvalid);
		return;
	}
	std::uint8_t records[kSaDataMax];
	std::size_t n = 0;
	for (const Port &p : s.ports) {
		std::uint8_t rec[kSaDataMax] = {};
		if (node) {
			put16(rec, p.attr.lid);
			node_info(s, p, rec + 4);
			node_desc(s, rec + 44);
		} else {
			put16(rec, p.attr.lid);
			rec[2] = std::uint8_t(p.num);
			port_info(p, p, rec + 4);
		}
		bool match = true;
		if (node) {
			for (int b = 0; b < 15 && match; b++)
				if (comp & (1ull << b))
					match = field_equal(rec, want, kNodeRecordComps[b]);
		} else {
			for (const auto &pc : kPortInfoRecordComps) {
				if (!(comp & (1ull << pc.bit)) || !match)
					continue;
				if (pc.bit == kPirCapMaskBit && (mod & kSaCapMaskMatchMod)) {
					std::uint32_t asked = get32(want + 24);
					match = (get32(rec + 24) & asked) == asked;
				} else {
					match = field_equal(rec, want, pc.c);
				}
			}
		}
		if (!match)
			continue;
		if ((n + 1) * stride > sizeof(records)) {
			// More than one MAD of records: not a case of this subnet.
			r.status(kSaStatusTooMany);
			return;
		}
		std::memcpy(records + n * stride, rec, stride);
		n++;
	}
	std::uint8_t *d = m + kOffSaData;
	std::memset(d, 0, kSaDataMax);
	put16(m + kOffSaAttrOffset, std::uint16_t(stride / 8));
	if (method == kMethodGet) {
		if (n != 1) {
			r.status(n ? kSaStatusTooMany : kSaStatusNoRecords);
			return;
		}
		std::memcpy(d, records, stride);
		return;
	}
	// GetTableResp: one RMPP DATA segment, first and last, active; its
	// payload the 20 bytes of SA header after the RMPP header and the
	// records.
	std::memcpy(d, records, n * stride);
	std::uint8_t *rmpp = m + kOffRmpp;
	rmpp[0] = 1;	// RMPPVersion
	rmpp[1] = 1;	// RMPPType DATA
	rmpp[2] = 0xff; // RRespTime none (0x1f), flags ACTIVE | FIRST | LAST
	rmpp[3] = 0;	// RMPPStatus
	put32(rmpp + 4, 1);			      // SegmentNumber
	put32(rmpp + 8, std::uint32_t(20 + n * stride)); // PayloadLength
	out.rmpp = true;
	out.length = kOffSaData + n * stride;
}

// The GSI of the port, for classes without an agent here: a Get or Set
// is answered "unsupported" (Linux's MAD layer does so), anything else
// dropped.
bool unmatched(std::uint8_t *m)
{
	const std::uint8_t method = m[kOffMethod];
	if (method != kMethodGet && method != kMethodSet)
		return false;
	m[kOffMethod] = kMethodGetResp;
	put16(m + kOffStatus, kStatusBadMethodAttr);
	return true;
}

// The directed-route walk of an outgoing SMP (IBA 14.2.2): returns the
// port it is delivered to, or nullptr when it is lost.  An empty path
// (hop count 0) ends at the sending port's own SMA; a path out of the port
// finds nobody at the other end of the link.
const Port *walk_dr(const Port &out_port, std::uint8_t *m)
{
	if (m[kOffStatus] & (kDrDirection >> 8))
		return nullptr; // a returning SMP sent by a user: nobody waits
	if (m[kOffHopPtr] != 0 || m[kOffHopCnt] != 0)
		return nullptr;
	// The end of the directed part: the permissive DLID means "here",
	// a LID continues LID-routed, which reaches only our own LIDs.
	const std::uint16_t dr_dlid = get16(m + kOffDrDlid);
	if (dr_dlid != kPermissiveLid && !port_has_lid(out_port, dr_dlid))
		return nullptr;
	return &out_port;
}

} // namespace

std::size_t data_offset(std::uint8_t c)
{
	if (c == kClassSubnAdm)
		return 56;
	if (c == 0x06 || c == 0x10 || c == 0x12) // DevMgt, DevAdm, BIS
		return 64;
	if (c >= 0x30 && c <= 0x4f)
		return 40;
	return 24;
}

bool rmpp_class(std::uint8_t c)
{
	return c == kClassSubnAdm || c == 0x06 || c == 0x10 || c == 0x12 || (c >= 0x30 && c <= 0x4f);
}

bool is_response(const std::uint8_t *m)
{
	return (m[kOffMethod] & kMethodRespBit) || m[kOffMethod] == 0x07 /* TrapRepress */ ||
	       (m[kOffClass] == 0x05 /* BM */ && (get32(m + kOffAttrMod) & (1u << 31)));
}

Fate send(const Snapshot &s, std::uint32_t port, const std::uint8_t *mad, const Address &to,
	  Answer &out)
{
	const Port *self = fsview::find_port(s, port);
	if (!self)
		return Fate::Lost;
	// A response or a trap repress expects nothing back, and the agents
	// here send no requests: nobody receives it.
	if (is_response(mad))
		return Fate::Lost;
	std::memcpy(out.mad.data(), mad, kMadSize);
	std::uint8_t *m = out.mad.data();
	out.length = kMadSize;
	out.rmpp = false;
	const std::uint8_t cls = m[kOffClass];
	if (cls == kClassSubnDr) {
		if (to.dqpn != 0)
			return Fate::Lost;
		const Port *at = walk_dr(*self, m);
		if (!at)
			return Fate::Lost;
		sma(s, *at, m);
		// The response walks back along the return path to the sender
		// (hop pointer 0, direction bit set).
		m[kOffHopPtr] = 0;
		m[kOffStatus] |= kDrDirection >> 8;
		out.slid = get16(m + kOffDrSlid);
		out.sqpn = 0;
		return Fate::Answered;
	}
	// LID routed: the port's own LIDs (or the permissive LID, for an SMP)
	// are the whole subnet.
	const bool to_self = port_has_lid(*self, to.dlid) ||
			     (cls == kClassSubnLid && to.dlid == kPermissiveLid);
	if (!to_self)
		return Fate::Lost;
	out.slid = self->attr.lid;
	if (cls == kClassSubnLid) {
		if (to.dqpn != 0)
			return Fate::Lost;
		sma(s, *self, m);
		out.sqpn = 0;
		return Fate::Answered;
	}
	// General services: QP1.
	if (to.dqpn != 1)
		return Fate::Lost;
	out.sqpn = 1;
	if (cls == kClassPerf) {
		pma(s, m);
		return Fate::Answered;
	}
	if (cls == kClassSubnAdm && is_sm(*self)) {
		sa(s, m, out);
		return Fate::Answered;
	}
	return unmatched(m) ? Fate::Answered : Fate::Lost;
}

} // namespace uabi::umad
