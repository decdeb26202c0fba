// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The snapshot of the device's answers and the sysfs tree made from it
// (docs/fsview.md, "The tree").
#include <uabi/fsview.hpp>

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace uabi::fsview {

namespace {

std::string printf_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string printf_str(const char *fmt, ...)
{
	char b[256];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	return b;
}

// The first line of a small file, without its newline; empty when absent.
std::string read_line(const std::string &path, std::size_t max)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return {};
	std::string s(max, '\0');
	ssize_t n = ::read(fd, s.data(), max);
	::close(fd);
	if (n <= 0)
		return {};
	s.resize(std::size_t(n));
	if (auto nl = s.find('\n'); nl != std::string::npos)
		s.resize(nl);
	return s;
}

} // namespace

// ------------------------------------------------------------- snapshot
std::string default_node_desc(const std::string &device)
{
	char host[256] = "";
	if (::gethostname(host, sizeof(host) - 1) != 0 || !host[0])
		std::snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	// rdma-ndd's default: the short host name, then the device.
	if (char *dot = std::strchr(host, '.'))
		*dot = '\0';
	std::string d = std::string(host) + " " + device;
	if (d.size() > 64)
		d.resize(64);
	return d;
}

Result<Snapshot> query(Context &ctx)
{
	auto dev = ctx.query_device();
	if (!dev)
		return make_error(dev.error());
	Snapshot s;
	s.name = dev->name;
	s.attr = dev->attr;
	for (std::uint32_t n = 1; n <= s.attr.phys_port_cnt; n++) {
		auto pa = ctx.query_port(n);
		if (!pa)
			return make_error(pa.error());
		Port p;
		p.num = n;
		p.attr = *pa;
		// Bounded by the tables' sizes the port reports (u32 and u16).
		for (std::uint32_t i = 0; i < p.attr.gid_tbl_len && i < 256; i++) {
			auto g = ctx.query_gid(n, i);
			if (!g)
				break;
			p.gids.push_back(*g);
		}
		for (std::uint32_t i = 0; i < p.attr.pkey_tbl_len; i++) {
			auto k = ctx.query_pkey(n, i);
			if (!k)
				break;
			p.pkeys.push_back(*k);
		}
		s.ports.push_back(std::move(p));
	}
	// A RoCE device's interface, as far as its addresses tell (query_all
	// names it from the backend's own record where it has one).
	for (const Port &p : s.ports)
		if (s.netdev.empty() && is_ethernet(p))
			s.netdev = netdev_of_gids(p);
	s.node_desc = read_line("/sys/class/infiniband/" + s.name + "/node_desc", 64);
	if (s.node_desc.empty())
		s.node_desc = default_node_desc(s.name);
	return s;
}

bool is_ethernet(const Port &p)
{
	return p.attr.link_layer == UABI_LINK_LAYER_ETHERNET;
}

std::string netdev_of_gids(const Port &p)
{
	struct ifaddrs *ifa = nullptr;
	if (::getifaddrs(&ifa) != 0)
		return {};
	static const std::uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	std::string found;
	for (const Gid &g : p.gids) {
		const std::uint8_t *b = g.data();
		for (struct ifaddrs *a = ifa; a && found.empty(); a = a->ifa_next) {
			if (!a->ifa_addr || !a->ifa_name)
				continue;
			if (a->ifa_addr->sa_family == AF_INET && !std::memcmp(b, v4_prefix, 12) &&
			    !std::memcmp(&reinterpret_cast<const sockaddr_in *>(a->ifa_addr)->sin_addr,
					 b + 12, 4))
				found = a->ifa_name;
			else if (a->ifa_addr->sa_family == AF_INET6 &&
				 !std::memcmp(&reinterpret_cast<const sockaddr_in6 *>(a->ifa_addr)->sin6_addr,
					      b, 16))
				found = a->ifa_name;
		}
		if (!found.empty())
			break;
	}
	::freeifaddrs(ifa);
	return found;
}

const Port *find_port(const Snapshot &s, std::uint32_t num)
{
	for (const Port &p : s.ports)
		if (p.num == num)
			return &p;
	return nullptr;
}

static std::uint64_t be64_at(const std::uint8_t *b)
{
	std::uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

std::uint64_t port_guid(const Port &p)
{
	return p.gids.empty() ? 0 : be64_at(p.gids[0].data() + 8);
}

std::uint64_t gid_prefix(const Port &p)
{
	return p.gids.empty() ? 0 : be64_at(p.gids[0].data());
}

// ------------------------------------------------------------- counters
Result<std::shared_ptr<Traffic>> Traffic::map(Context &ctx)
{
	Command cmd(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_MAP);
	OutAttr ro_out = cmd.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_FD, kMandatory | UABI_ATTR_F_FD);
	OutAttr rw_out =
	    cmd.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_RW_FD, kMandatory | UABI_ATTR_F_FD);
	OutAttr info_out = cmd.add_out<uabi_sw_arena_info>(UABI_SW_ATTR_ARENA_INFO);
	auto m = ctx.call(std::move(cmd));
	if (!m)
		return make_error(m.error());
	std::int32_t ro_fd = -1, rw_fd = -1;
	uabi_sw_arena_info info{};
	const bool got = m->read(0, ro_out, ro_fd) && m->read(0, rw_out, rw_fd) &&
			 m->read(0, info_out, info);
	// In-process the fds are the host's own; otherwise they are our copies.
	const bool own = std::strcmp(ctx.transport().name(), "inproc") != 0;
	auto close_fds = [&] {
		if (own)
			for (std::int32_t f : {ro_fd, rw_fd})
				if (f >= 0)
					::close(f);
	};
	// The counters sit in the writable part's header: a layout of another
	// version may have them elsewhere, or not at all.
	if (!got || rw_fd < 0 || info.magic != UABI_SW_ARENA_MAGIC ||
	    info.version != UABI_SW_ARENA_VERSION || info.rw_size < sizeof(uabi_sw_arena_rw_hdr)) {
		close_fds();
		return make_error(EPROTO);
	}
	const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
	void *p = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, rw_fd, 0);
	const int err = errno;
	close_fds();
	if (p == MAP_FAILED)
		return make_error(err);
	auto *hdr = static_cast<uabi_sw_arena_rw_hdr *>(p);
	std::shared_ptr<Traffic> t(new (std::nothrow) Traffic(p, &hdr->port));
	if (!t) {
		::munmap(p, page);
		return make_error(ENOMEM);
	}
	return t;
}

Traffic::~Traffic()
{
	::munmap(page_, std::size_t(::sysconf(_SC_PAGESIZE)));
}

namespace {

// The user's totals at one moment: the data path adds to them, nobody
// resets them (uabi_sw.h).
struct Totals {
	std::uint64_t words = 0, ucast = 0, mcast = 0;
};

Totals totals(const uabi_sw_port_counters *c)
{
	Totals t;
	t.words = __atomic_load_n(&c->data_words, __ATOMIC_RELAXED);
	t.ucast = __atomic_load_n(&c->ucast_pkts, __ATOMIC_RELAXED);
	t.mcast = __atomic_load_n(&c->mcast_pkts, __ATOMIC_RELAXED);
	// And every process's slot (uabi_sw.h).
	for (const auto &s : c->slot) {
		t.words += __atomic_load_n(&s.data_words, __ATOMIC_RELAXED);
		t.ucast += __atomic_load_n(&s.ucast_pkts, __ATOMIC_RELAXED);
		t.mcast += __atomic_load_n(&s.mcast_pkts, __ATOMIC_RELAXED);
	}
	return t;
}

// The total a counter of base[] follows.
std::uint64_t total_of(const Totals &t, int i)
{
	switch (i) {
	case UABI_SW_PC_XMIT_DATA:
	case UABI_SW_PC_RCV_DATA:
	case UABI_SW_PCX_XMIT_DATA:
	case UABI_SW_PCX_RCV_DATA:
		return t.words;
	case UABI_SW_PCX_UCAST_XMIT_PKTS:
	case UABI_SW_PCX_UCAST_RCV_PKTS:
		return t.ucast;
	case UABI_SW_PCX_MCAST_XMIT_PKTS:
	case UABI_SW_PCX_MCAST_RCV_PKTS:
		return t.mcast;
	default:
		return t.ucast + t.mcast;
	}
}

// What counter i reports: its total since it was last cleared.  A base
// above the total (the block is the user's to write) reads as cleared.
std::uint64_t since_clear(const uabi_sw_port_counters *c, const Totals &t, int i)
{
	const std::uint64_t total = total_of(t, i);
	const std::uint64_t base = __atomic_load_n(&c->base[i], __ATOMIC_RELAXED);
	return total > base ? total - base : 0;
}

// IB's 32-bit counters stop at their maximum.
std::uint32_t saturate32(std::uint64_t v)
{
	return v > 0xffffffffull ? 0xffffffffu : std::uint32_t(v);
}

void clear(const Snapshot &s, const int *which, int n)
{
	if (!s.traffic)
		return;
	uabi_sw_port_counters *c = s.traffic->block();
	const Totals t = totals(c);
	for (int k = 0; k < n; k++)
		__atomic_store_n(&c->base[which[k]], total_of(t, which[k]), __ATOMIC_RELAXED);
}

} // namespace

PortCounters port_counters(const Snapshot &s, const Port &)
{
	PortCounters pc;
	if (!s.traffic)
		return pc;
	const uabi_sw_port_counters *c = s.traffic->block();
	const Totals t = totals(c);
	pc.port_xmit_data = saturate32(since_clear(c, t, UABI_SW_PC_XMIT_DATA));
	pc.port_rcv_data = saturate32(since_clear(c, t, UABI_SW_PC_RCV_DATA));
	pc.port_xmit_packets = saturate32(since_clear(c, t, UABI_SW_PC_XMIT_PKTS));
	pc.port_rcv_packets = saturate32(since_clear(c, t, UABI_SW_PC_RCV_PKTS));
	return pc;
}

PortCountersExt port_counters_ext(const Snapshot &s, const Port &)
{
	PortCountersExt x;
	if (!s.traffic)
		return x;
	const uabi_sw_port_counters *c = s.traffic->block();
	const Totals t = totals(c);
	x.port_xmit_data = since_clear(c, t, UABI_SW_PCX_XMIT_DATA);
	x.port_rcv_data = since_clear(c, t, UABI_SW_PCX_RCV_DATA);
	x.port_xmit_packets = since_clear(c, t, UABI_SW_PCX_XMIT_PKTS);
	x.port_rcv_packets = since_clear(c, t, UABI_SW_PCX_RCV_PKTS);
	x.unicast_xmit_packets = since_clear(c, t, UABI_SW_PCX_UCAST_XMIT_PKTS);
	x.unicast_rcv_packets = since_clear(c, t, UABI_SW_PCX_UCAST_RCV_PKTS);
	x.multicast_xmit_packets = since_clear(c, t, UABI_SW_PCX_MCAST_XMIT_PKTS);
	x.multicast_rcv_packets = since_clear(c, t, UABI_SW_PCX_MCAST_RCV_PKTS);
	return x;
}

void clear_counters(const Snapshot &s, const Port &, std::uint16_t select)
{
	int which[4], n = 0;
	for (int b = 0; b < 4; b++)
		if (select & (1u << (12 + b)))
			which[n++] = UABI_SW_PC_XMIT_DATA + b;
	clear(s, which, n);
}

void clear_counters_ext(const Snapshot &s, const Port &, std::uint16_t select)
{
	int which[8], n = 0;
	for (int b = 0; b < 8; b++)
		if (select & (1u << b))
			which[n++] = UABI_SW_PCX_XMIT_DATA + b;
	clear(s, which, n);
}

// ----------------------------------------------------------- formatting
std::string fmt_guid(std::uint64_t g)
{
	return printf_str("%04x:%04x:%04x:%04x", unsigned(g >> 48) & 0xffff,
			  unsigned(g >> 32) & 0xffff, unsigned(g >> 16) & 0xffff,
			  unsigned(g) & 0xffff);
}

std::string fmt_gid(const Gid &g)
{
	std::string s;
	for (int i = 0; i < 16; i += 2)
		s += printf_str("%s%02x%02x", i ? ":" : "", g[i], g[i + 1]);
	return s;
}

std::string fmt_fw_ver(std::uint64_t v)
{
	return printf_str("%u.%u.%u", unsigned(v >> 32), unsigned((v >> 16) & 0xffff),
			  unsigned(v & 0xffff));
}

std::string fmt_node_type(std::uint32_t t)
{
	static const char *const n[] = {"<unknown>", "CA", "switch", "router", "RNIC",
					"usNIC", "usNIC UDP", "unspecified"};
	return printf_str("%u: %s", t, t < sizeof(n) / sizeof(n[0]) ? n[t] : "<unknown>");
}

std::string fmt_port_state(std::uint32_t s)
{
	static const char *const n[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
	return printf_str("%u: %s", s, s < sizeof(n) / sizeof(n[0]) ? n[s] : "UNKNOWN");
}

std::string fmt_phys_state(std::uint32_t p)
{
	static const char *const n[] = {"<unknown>", "Sleep", "Polling", "Disabled",
					"PortConfigurationTraining", "LinkUp",
					"LinkErrorRecovery", "Phy Test"};
	return printf_str("%u: %s", p, p < sizeof(n) / sizeof(n[0]) ? n[p] : "<unknown>");
}

int width_to_int(std::uint8_t w)
{
	switch (w) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	}
	return 0;
}

std::string fmt_rate(std::uint8_t width, std::uint8_t speed)
{
	const char *name = " SDR";
	int rate = 25; // deci-Gb/s per lane; unknown speeds count as SDR, as Linux does
	switch (speed) {
	case 2: name = " DDR"; rate = 50; break;
	case 4: name = " QDR"; rate = 100; break;
	case 8: name = " FDR10"; rate = 100; break;
	case 16: name = " FDR"; rate = 140; break;
	case 32: name = " EDR"; rate = 250; break;
	case 64: name = " HDR"; rate = 500; break;
	case 128: name = " NDR"; rate = 1000; break;
	default: break;
	}
	int lanes = width_to_int(width);
	rate *= lanes;
	return printf_str("%d%s Gb/sec (%dX%s)", rate / 10, rate % 10 ? ".5" : "", lanes, name);
}

std::string fmt_link_layer(std::uint8_t ll)
{
	// IBV_LINK_LAYER_UNSPECIFIED (0) is InfiniBand, as for libibverbs.
	switch (ll) {
	case 0:
	case 1: return "InfiniBand";
	case 2: return "Ethernet";
	}
	return "Unknown";
}

// ----------------------------------------------------------------- tree
Result<DevNode> dev_node(const std::string &name, const std::string &source)
{
	struct stat st;
	if (::stat(source.c_str(), &st) != 0)
		return make_error(errno);
	if (!S_ISCHR(st.st_mode))
		return make_error(ENOTTY);
	return DevNode{name, source, major(st.st_rdev), minor(st.st_rdev)};
}

namespace {

// The files of one device: class/infiniband/<name>/...
class TreeBuilder {
public:
	explicit TreeBuilder(Tree &t) : t_(t) {}
	void dir(const std::string &d) { t_.dirs.push_back(d); }
	void file(const std::string &p, const std::string &v, bool w = false)
	{
		t_.files.push_back({p, v + "\n", w});
	}
	void empty(const std::string &p) { t_.files.push_back({p, "", false}); }
	void link(const std::string &p, const std::string &target) { t_.links.push_back({p, target}); }
	static std::string dec(std::uint64_t v) { return std::to_string(v); }
	static std::string hex(const char *fmt, unsigned v) { return printf_str(fmt, v); }

	void device(const Snapshot &s);

private:
	void port(const Snapshot &s, const Port &p, const std::string &pd);
	void counters(const Snapshot &s, const Port &p, const std::string &pd);
	Tree &t_;
};

// A name that is one path component: not empty, ".", ".." or holding a
// '/' (device names and interface names come from the backend).
bool plain_name(const std::string &n)
{
	return !n.empty() && n != "." && n != ".." && n.find('/') == std::string::npos &&
	       n.find('\0') == std::string::npos;
}

bool empty_gid(const Gid &g)
{
	for (std::uint8_t b : g)
		if (b)
			return false;
	return true;
}

void TreeBuilder::device(const Snapshot &s)
{
	const std::string ib = "class/infiniband/" + s.name;
	dir(ib);
	file(ib + "/node_type", fmt_node_type(1)); // the software device is a CA
	file(ib + "/node_guid", fmt_guid(s.attr.node_guid));
	file(ib + "/sys_image_guid", fmt_guid(s.attr.sys_image_guid));
	file(ib + "/fw_ver", fmt_fw_ver(s.attr.fw_ver));
	file(ib + "/hw_rev", hex("%x", s.attr.hw_ver));
	// No board, no model number: the driver's name stands for both.
	file(ib + "/hca_type", "uabi_sw");
	file(ib + "/board_id", "uabi_sw");
	file(ib + "/node_desc", s.node_desc, true);
	// A RoCE device names its interface in `parent`, as rxe does.
	if (!s.netdev.empty())
		file(ib + "/parent", s.netdev);
	// device/: the parent device's locality, which frameworks read to
	// place buffers and threads.  The software device is no PCI function:
	// no vendor or device file (its vendor id is an OUI, not a PCI id).
	dir(ib + "/device");
	file(ib + "/device/numa_node", "-1");
	long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
	if (cpus < 1)
		cpus = 1;
	file(ib + "/device/local_cpulist", cpus == 1 ? "0" : "0-" + dec(std::uint64_t(cpus - 1)));
	{
		// The cpumask, 32-bit words from the highest, as Linux prints it.
		std::string mask;
		long words = (cpus + 31) / 32;
		for (long w = words - 1; w >= 0; w--) {
			long bits = cpus - w * 32;
			std::uint32_t v = bits >= 32 ? 0xffffffffu : ((1u << bits) - 1);
			mask += printf_str("%s%08x", mask.empty() ? "" : ",", v);
		}
		file(ib + "/device/local_cpus", mask);
	}
	// A RoCE device's interface under device/net/, where Linux shows the
	// net devices of an RDMA device's parent (rxe's parent is its
	// netdev's parent).  Our device has no parent of its own, so the
	// entry is a symlink to the interface in class/net (the host's, in
	// both kinds of view): reading its operstate, address or ifindex
	// reads the real interface's.
	if (!s.netdev.empty()) {
		dir(ib + "/device/net");
		link(ib + "/device/net/" + s.netdev, "../../../../net/" + s.netdev);
	}
	dir(ib + "/ports");
	for (const Port &p : s.ports)
		port(s, p, ib + "/ports/" + dec(p.num));
}

void TreeBuilder::port(const Snapshot &s, const Port &p, const std::string &pd)
{
	const uabi_port_attr &a = p.attr;
	const bool eth = is_ethernet(p);
	dir(pd);
	file(pd + "/state", fmt_port_state(a.state));
	file(pd + "/phys_state", fmt_phys_state(a.phys_state));
	file(pd + "/lid", hex("0x%x", a.lid));
	file(pd + "/sm_lid", hex("0x%x", a.sm_lid));
	file(pd + "/lid_mask_count", dec(a.lmc));
	file(pd + "/sm_sl", dec(a.sm_sl));
	file(pd + "/cap_mask", hex("0x%08x", a.port_cap_flags));
	file(pd + "/rate", fmt_rate(a.active_width, a.active_speed));
	file(pd + "/link_layer", fmt_link_layer(a.link_layer));
	dir(pd + "/gids");
	dir(pd + "/gid_attrs");
	dir(pd + "/gid_attrs/types");
	dir(pd + "/gid_attrs/ndevs");
	for (std::size_t i = 0; i < p.gids.size(); i++) {
		file(pd + "/gids/" + dec(i), fmt_gid(p.gids[i]));
		if (!eth) {
			// ibv_query_gid_type(): IB GIDs are type 0.
			file(pd + "/gid_attrs/types/" + dec(i), "IB/RoCE v1");
			// An InfiniBand GID has no net device: Linux answers
			// EINVAL to a read; a file can only be empty.
			empty(pd + "/gid_attrs/ndevs/" + dec(i));
		} else if (empty_gid(p.gids[i])) {
			// An unused entry of a RoCE table (ibv_query_gid_ex():
			// ENODATA): Linux answers EINVAL to reads of both.
			empty(pd + "/gid_attrs/types/" + dec(i));
			empty(pd + "/gid_attrs/ndevs/" + dec(i));
		} else {
			// A RoCE device's GIDs are RoCE v2 (ibv_query_gid_ex()),
			// each an address of the device's interface.
			file(pd + "/gid_attrs/types/" + dec(i), "RoCE v2");
			if (s.netdev.empty())
				empty(pd + "/gid_attrs/ndevs/" + dec(i));
			else
				file(pd + "/gid_attrs/ndevs/" + dec(i), s.netdev);
		}
	}
	dir(pd + "/pkeys");
	for (std::size_t i = 0; i < p.pkeys.size(); i++)
		file(pd + "/pkeys/" + dec(i), hex("0x%04x", p.pkeys[i]));
	// A RoCE port has no performance management agent (nor has rxe's, so
	// Linux shows no counters/ there either).
	if (!eth)
		counters(s, p, pd);
}

void TreeBuilder::counters(const Snapshot &s, const Port &p, const std::string &pd)
{
	dir(pd + "/counters");
	// The counters of the moment the tree is made (the files do not
	// follow the traffic, docs/fsview.md).  As Linux does for a PMA
	// with extended counters, the data and packet files are the
	// 64-bit ones, and the unicast and multicast files exist.
	const PortCounters c = port_counters(s, p);
	const PortCountersExt x = port_counters_ext(s, p);
	const std::pair<const char *, std::uint64_t> counters[] = {
		{"symbol_error", c.symbol_error},
		{"link_error_recovery", c.link_error_recovery},
		{"link_downed", c.link_downed},
		{"port_rcv_errors", c.port_rcv_errors},
		{"port_rcv_remote_physical_errors", c.port_rcv_remote_physical_errors},
		{"port_rcv_switch_relay_errors", c.port_rcv_switch_relay_errors},
		{"port_xmit_discards", c.port_xmit_discards},
		{"port_xmit_constraint_errors", c.port_xmit_constraint_errors},
		{"port_rcv_constraint_errors", c.port_rcv_constraint_errors},
		{"local_link_integrity_errors", c.local_link_integrity_errors},
		{"excessive_buffer_overrun_errors", c.excessive_buffer_overrun_errors},
		{"VL15_dropped", c.vl15_dropped},
		{"port_xmit_data", x.port_xmit_data},
		{"port_rcv_data", x.port_rcv_data},
		{"port_xmit_packets", x.port_xmit_packets},
		{"port_rcv_packets", x.port_rcv_packets},
		{"port_xmit_wait", c.port_xmit_wait},
		{"unicast_xmit_packets", x.unicast_xmit_packets},
		{"unicast_rcv_packets", x.unicast_rcv_packets},
		{"multicast_xmit_packets", x.multicast_xmit_packets},
		{"multicast_rcv_packets", x.multicast_rcv_packets},
	};
	for (const auto &[name, v] : counters)
		file(pd + "/counters/" + name, dec(v));
}

} // namespace

Result<Tree> make_tree(const Snapshot &s, const NodeSources &src)
{
	return make_tree(std::vector<Snapshot>{s}, src);
}

Result<Tree> make_tree(const std::vector<Snapshot> &devices, const NodeSources &src)
{
	for (const Snapshot &s : devices)
		if (!plain_name(s.name) || (!s.netdev.empty() && !plain_name(s.netdev)))
			return make_error(EINVAL);
	Tree t;
	TreeBuilder b(t);
	using D = TreeBuilder;

	t.class_entries = {"infiniband", "infiniband_verbs", "infiniband_mad"};
	b.dir("class");
	b.dir("class/infiniband");
	for (const Snapshot &s : devices)
		b.device(s);

	// The uverbs devices, uverbsN for the Nth device: the drop-in names
	// the Nth device of ibv_get_device_list() so (dev_path).  Every node
	// is a bind of the same source, so every dev file gives its numbers.
	b.dir("class/infiniband_verbs");
	b.file("class/infiniband_verbs/abi_version", D::dec(kVerbsAbiVersion));
	for (std::size_t i = 0; i < devices.size(); i++) {
		const Snapshot &s = devices[i];
		const std::string name = "uverbs" + D::dec(i);
		auto uverbs = dev_node(name, src.uverbs);
		if (!uverbs)
			return make_error(uverbs.error());
		t.nodes.push_back(*uverbs);
		const std::string uv = "class/infiniband_verbs/" + name;
		b.dir(uv);
		b.file(uv + "/ibdev", s.name);
		b.file(uv + "/abi_version", D::dec(kVerbsAbiVersion));
		b.file(uv + "/dev", printf_str("%u:%u", uverbs->major, uverbs->minor));
		b.link(uv + "/device", "../../infiniband/" + s.name + "/device");
	}

	// One umad and one issm device per port, numbered in device order,
	// then port order: uabi_sw0's port 1 is umad0 (the umad shim counts
	// the same way, compat/umad).  A RoCE port has them too, as on Linux.
	b.dir("class/infiniband_mad");
	b.file("class/infiniband_mad/abi_version", D::dec(kMadAbiVersion));
	unsigned n = 0;
	for (const Snapshot &s : devices) {
		for (const Port &p : s.ports) {
			for (const char *kind : {"umad", "issm"}) {
				std::string name = kind + D::dec(n);
				auto node = dev_node(name, src.mad);
				if (!node)
					return make_error(node.error());
				t.nodes.push_back(*node);
				const std::string d = "class/infiniband_mad/" + name;
				b.dir(d);
				b.file(d + "/ibdev", s.name);
				b.file(d + "/port", D::dec(p.num));
				b.file(d + "/dev", printf_str("%u:%u", node->major, node->minor));
			}
			n++;
		}
	}

	// The connection manager's hook: its node and class/misc/rdma_cm,
	// once a backend has one (NodeSources::rdma_cm).
	if (!src.rdma_cm.empty()) {
		auto cm = dev_node("rdma_cm", src.rdma_cm);
		if (!cm)
			return make_error(cm.error());
		t.nodes.push_back(*cm);
		t.class_entries.push_back("misc");
		b.dir("class/misc");
		b.dir("class/misc/rdma_cm");
		b.file("class/misc/rdma_cm/abi_version", "4");
		b.file("class/misc/rdma_cm/dev", printf_str("%u:%u", cm->major, cm->minor));
	}
	return t;
}

} // namespace uabi::fsview
