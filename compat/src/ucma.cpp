// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The ucma write() ABI onto the uAPI's CM objects (docs/cm.md).  Each
// command is checked as Linux's ucma checks it (the errno it answers for
// bad input), then becomes one uAPI command on the CM ID or the channel.
#include <uabi/legacy.hpp>
#include <uabi/ucma.hpp>

#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/uabi.h>

#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace uabi::legacy
{

namespace
{

constexpr std::uint16_t kAfInet = 2, kAfInet6 = 10, kAfIb = 27;
constexpr std::size_t kSockaddrIn = 16, kSockaddrIn6 = 28;

// struct sockaddr_ib (AF_IB, Linux's include/uapi/rdma/ib_user_sa.h
// family; rdma-core's infiniband/ib.h): a GID and a service ID.
struct SockaddrIb {
	std::uint16_t family;
	std::uint16_t pkey;	 // __be16
	std::uint32_t flowinfo; // __be32
	std::uint8_t gid[16];
	std::uint64_t sid;	 // __be64
	std::uint64_t sid_mask; // __be64
	std::uint64_t scope_id;
};
static_assert(sizeof(SockaddrIb) == 48);
// The RDMA IP CM Service's service IDs (IBTA annex A11): the port space
// in bits 16-31, the port in bits 0-15 (Linux's RDMA_IB_IP_PS_*).
constexpr std::uint64_t kIbIpPsMask = 0xFFFFFFFFFFFF0000ull;
constexpr std::uint64_t kIbIpPsTcp = 0x0000000001060000ull, kIbIpPsUdp = 0x0000000001110000ull,
			kIbIpPsIb = 0x00000000013F0000ull;

// The family of the sockaddr at @p.
std::uint16_t family_of(const void *p)
{
	std::uint16_t f;
	std::memcpy(&f, p, sizeof(f));
	return f;
}

// The GID of @a's IP address (IPv4-mapped for IPv4; from_ib()'s inverse);
// @gid is left as it is for an address of no IP family.
void ip_gid(const uabi_cm_addr &a, std::uint8_t (&gid)[16])
{
	if (family_of(a.bytes) == kAfInet) {
		std::memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		std::memcpy(gid + 12, a.bytes + 4, 4);
	} else if (family_of(a.bytes) == kAfInet6) {
		std::memcpy(gid, a.bytes + 8, 16);
	}
}

// The service ID of port @port in port space @ps (rdma_get_service_id()).
std::uint64_t service_id(std::uint16_t ps, std::uint16_t port)
{
	return std::uint64_t(ps) << 16 | port;
}

// The service ID's port space as Linux's cma_select_ib_ps() picks it for
// an ID of port space @ps (0: none it takes: EPROTONOSUPPORT there).
std::uint64_t ib_sid_ps(const SockaddrIb &a, std::uint16_t ps)
{
	const std::uint64_t mask = be64toh(a.sid_mask) & kIbIpPsMask, sid = be64toh(a.sid) & mask;
	if (ps == RDMA_PS_IB && sid == (kIbIpPsIb & mask))
		return kIbIpPsIb;
	if ((ps == RDMA_PS_IB || ps == RDMA_PS_TCP) && sid == (kIbIpPsTcp & mask))
		return kIbIpPsTcp;
	if ((ps == RDMA_PS_IB || ps == RDMA_PS_UDP) && sid == (kIbIpPsUdp & mask))
		return kIbIpPsUdp;
	return 0;
}

// An AF_IB address as the IP address its GID carries (a RoCE GID is one:
// IPv4-mapped, or IPv6; the zero GID is the wildcard) with the port of
// its service ID; the GID of the default device (@local, which is no IP
// address) is the loopback address, which that device has.
uabi_cm_addr from_ib(const SockaddrIb &a, const std::uint8_t *local)
{
	static const std::uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	uabi_cm_addr o{};
	const std::uint16_t port = htons(std::uint16_t(be64toh(a.sid)));
	const bool loopback = local && !std::memcmp(a.gid, local, 16);
	if (loopback || !std::memcmp(a.gid, v4mapped, sizeof(v4mapped))) {
		sockaddr_in in{};
		in.sin_family = AF_INET;
		in.sin_port = port;
		if (loopback)
			in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else
			std::memcpy(&in.sin_addr, a.gid + 12, 4);
		std::memcpy(o.bytes, &in, sizeof(in));
	} else {
		sockaddr_in6 in6{};
		in6.sin6_family = AF_INET6;
		in6.sin6_port = port;
		std::memcpy(&in6.sin6_addr, a.gid, 16);
		std::memcpy(o.bytes, &in6, sizeof(in6));
	}
	return o;
}

// The bytes of the sockaddr at @p that its family says it has (0: a family
// Linux's rdma_addr_size() does not know).
std::size_t addr_size(const void *p)
{
	const std::uint16_t f = family_of(p);
	return f == kAfInet ? kSockaddrIn : f == kAfInet6 ? kSockaddrIn6 : 0;
}

// Is @a a multicast address (224.0.0.0/4, ff00::/8)?
bool is_multicast(const uabi_cm_addr &a)
{
	const std::uint16_t f = family_of(a.bytes);
	if (f == kAfInet)
		return (a.bytes[4] & 0xf0) == 0xe0;
	return f == kAfInet6 && a.bytes[8] == 0xff;
}

// Is the IP address of @a this host's (loopback, or an interface's)?  The
// wildcard counts as local.  Every local address is our one device's.
bool is_local(const uabi_cm_addr &a)
{
	std::uint16_t f;
	std::memcpy(&f, a.bytes, sizeof(f));
	const std::uint8_t *ip = a.bytes + (f == kAfInet ? 4 : 8);
	std::size_t len = f == kAfInet ? 4 : f == kAfInet6 ? 16 : 0;
	if (!len)
		return false;
	static const std::uint8_t zero[16] = {}, loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0,
							     0, 0, 0, 0, 0, 0, 0, 1};
	if (!std::memcmp(ip, zero, len) || (f == kAfInet && ip[0] == 127) ||
	    (f == kAfInet6 && !std::memcmp(ip, loop6, 16)))
		return true;
	ifaddrs *list = nullptr;
	if (::getifaddrs(&list) != 0)
		return true; // cannot tell: take it as ours, as before
	bool found = false;
	for (ifaddrs *i = list; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != f)
			continue;
		const auto *b = reinterpret_cast<const std::uint8_t *>(i->ifa_addr);
		found = !std::memcmp(b + (f == kAfInet ? 4 : 8), ip, len);
	}
	::freeifaddrs(list);
	return found;
}

// The source address the host's routes give for @dst (another host's):
// false when no route reaches it.  A UDP socket's connect() sends nothing.
bool route_source(const uabi_cm_addr &dst, uabi_cm_addr &src)
{
	std::uint16_t f;
	std::memcpy(&f, dst.bytes, sizeof(f));
	const std::size_t len = f == kAfInet ? kSockaddrIn : f == kAfInet6 ? kSockaddrIn6 : 0;
	if (!len)
		return false;
	int fd = ::socket(f, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	sockaddr_storage to{};
	std::memcpy(&to, dst.bytes, len);
	// any port will do for a route lookup
	reinterpret_cast<sockaddr_in *>(&to)->sin_port = htons(4791);
	sockaddr_storage me{};
	socklen_t me_len = sizeof(me);
	bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&to), socklen_t(len)) == 0 &&
		  ::getsockname(fd, reinterpret_cast<sockaddr *>(&me), &me_len) == 0 &&
		  me.ss_family == f;
	::close(fd);
	if (!ok)
		return false;
	src = uabi_cm_addr{};
	std::memcpy(src.bytes, &me, len);
	src.bytes[2] = src.bytes[3] = 0; // the port is the core's to choose
	return true;
}

uabi_cm_addr to_addr(const void *p, std::size_t len)
{
	uabi_cm_addr a{};
	std::memcpy(a.bytes, p, std::min(len, sizeof(a.bytes)));
	return a;
}

// A command struct from the bytes the caller wrote: what is missing reads
// as zero (Linux copies the whole struct; librdmacm always sends it).
template <class T> T in_struct(const std::byte *in, std::size_t in_len)
{
	T v{};
	std::memcpy(&v, in, std::min(in_len, sizeof(T)));
	return v;
}

long put(std::uint64_t to, const void *src, std::size_t len)
{
	return copy_to_user(to, src, len) ? -EFAULT : 0;
}

ib_uverbs_ah_attr legacy_ah(const uabi_ah_attr &a)
{
	ib_uverbs_ah_attr o{};
	std::memcpy(o.grh.dgid, a.grh.dgid, sizeof(o.grh.dgid));
	o.grh.flow_label = a.grh.flow_label;
	o.grh.sgid_index = a.grh.sgid_index;
	o.grh.hop_limit = a.grh.hop_limit;
	o.grh.traffic_class = a.grh.traffic_class;
	o.dlid = a.dlid;
	o.sl = a.sl;
	o.src_path_bits = a.src_path_bits;
	o.static_rate = a.static_rate;
	o.is_global = a.is_global;
	o.port_num = a.port_num;
	return o;
}

ib_uverbs_qp_attr legacy_qp_attr(const uabi_cm_qp_attr &r)
{
	const uabi_qp_attr &a = r.attr;
	ib_uverbs_qp_attr o{};
	o.qp_attr_mask = r.mask;
	o.qp_state = a.qp_state;
	o.cur_qp_state = a.cur_qp_state;
	o.path_mtu = a.path_mtu;
	o.path_mig_state = a.path_mig_state;
	o.qkey = a.qkey;
	o.rq_psn = a.rq_psn;
	o.sq_psn = a.sq_psn;
	o.dest_qp_num = a.dest_qp_num;
	o.qp_access_flags = a.qp_access_flags;
	o.ah_attr = legacy_ah(a.ah_attr);
	o.alt_ah_attr = legacy_ah(a.alt_ah_attr);
	o.pkey_index = a.pkey_index;
	o.alt_pkey_index = a.alt_pkey_index;
	o.max_rd_atomic = a.max_rd_atomic;
	o.max_dest_rd_atomic = a.max_dest_rd_atomic;
	o.min_rnr_timer = a.min_rnr_timer;
	o.port_num = a.port_num;
	o.timeout = a.timeout;
	o.retry_cnt = a.retry_cnt;
	o.rnr_retry = a.rnr_retry;
	return o;
}

// Where the ID sits in each command that names one (SIZE_MAX: none).
std::size_t id_offset(std::uint32_t cmd)
{
	switch (cmd) {
	case RDMA_USER_CM_CMD_DESTROY_ID:
		return offsetof(rdma_ucm_destroy_id, id);
	case RDMA_USER_CM_CMD_BIND_IP:
		return offsetof(rdma_ucm_bind_ip, id);
	case RDMA_USER_CM_CMD_RESOLVE_IP:
		return offsetof(rdma_ucm_resolve_ip, id);
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE:
		return offsetof(rdma_ucm_resolve_route, id);
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
	case RDMA_USER_CM_CMD_QUERY:
		return offsetof(rdma_ucm_query, id);
	case RDMA_USER_CM_CMD_CONNECT:
		return offsetof(rdma_ucm_connect, id);
	case RDMA_USER_CM_CMD_LISTEN:
		return offsetof(rdma_ucm_listen, id);
	case RDMA_USER_CM_CMD_ACCEPT:
		return offsetof(rdma_ucm_accept, id);
	case RDMA_USER_CM_CMD_REJECT:
		return offsetof(rdma_ucm_reject, id);
	case RDMA_USER_CM_CMD_DISCONNECT:
		return offsetof(rdma_ucm_disconnect, id);
	case RDMA_USER_CM_CMD_INIT_QP_ATTR:
		return offsetof(rdma_ucm_init_qp_attr, id);
	case RDMA_USER_CM_CMD_SET_OPTION:
		return offsetof(rdma_ucm_set_option, id);
	case RDMA_USER_CM_CMD_NOTIFY:
		return offsetof(rdma_ucm_notify, id);
	case RDMA_USER_CM_CMD_BIND:
		return offsetof(rdma_ucm_bind, id);
	case RDMA_USER_CM_CMD_RESOLVE_ADDR:
		return offsetof(rdma_ucm_resolve_addr, id);
	}
	return SIZE_MAX;
}

// The answer's least size, checked before the ID as Linux does (0: none).
std::size_t min_out(std::uint32_t cmd)
{
	switch (cmd) {
	case RDMA_USER_CM_CMD_DESTROY_ID:
		return sizeof(rdma_ucm_destroy_id_resp);
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
		return sizeof(rdma_ucm_query_route_resp);
	case RDMA_USER_CM_CMD_INIT_QP_ATTR:
		return sizeof(ib_uverbs_qp_attr);
	}
	return 0;
}

// The uAPI's status of a command as the negative errno write() returns.
template <class T> long status(const Result<T> &r)
{
	return r ? 0 : -long(r.error());
}

// addr_size(), AF_IB included (RESOLVE_ADDR's rdma_addr_size()).
std::size_t addr_size_ib(const void *p)
{
	return family_of(p) == kAfIb ? sizeof(SockaddrIb) : addr_size(p);
}

// QUERY of the core's ID @id.
long query_info(Context &ctx, std::uint32_t id, uabi_cm_id_info &info)
{
	Command k(UABI_OBJ_CM_ID, UABI_METHOD_QUERY, id);
	OutAttr o = k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
	auto m = ctx.call(std::move(k));
	if (!m)
		return -m.error();
	m->read(0, o, info);
	return 0;
}

// RESOLVE_ADDR of @r (IP addresses) on the core's ID @id.  A multicast
// group is reached through the device (mckey).  Another host's address:
// through the RoCE device that has the route's source address (the core
// finds it), when a route reaches it.
long resolve_addr(Context &ctx, std::uint32_t id, uabi_cm_resolve &r)
{
	if (!is_local(r.dst) && !is_multicast(r.dst)) {
		uabi_cm_addr via{};
		if (family_of(r.src.bytes))
			r.flags |= UABI_CM_RESOLVE_F_REMOTE;
		else if (route_source(r.dst, via)) {
			r.src = via;
			r.flags |= UABI_CM_RESOLVE_F_REMOTE;
		} else {
			r.flags |= UABI_CM_RESOLVE_F_NOT_LOCAL;
		}
	}
	Command k(UABI_OBJ_CM_ID, UABI_CM_ID_RESOLVE_ADDR, id);
	k.add_in(UABI_ATTR_CM_ID_RESOLVE, r);
	return status(ctx.call(std::move(k)));
}

} // namespace

// The process's context for its rdma_cm files, and which file each ID is
// on.  `m` serialises every command of the process (the dispatcher's
// try-locks would answer EBUSY to two threads on one ID).
struct Ucma::Shared {
	explicit Shared(Context c) : ctx(std::move(c)) {}
	~Shared()
	{
		for (void *v : roce)
			close_dev(v);
	}
	Context ctx;
	// In-process: a verbs context on each RoCE device (hold_roce()).
	std::vector<void *> roce;
	int (*close_dev)(void *) = nullptr;
	std::mutex m;
	std::map<std::uint32_t, const Ucma *> owner;
	// IDs bound or resolved with AF_IB addresses: the addresses as given
	// (the core has their IP form), for QUERY to answer in their family.
	struct IbAddrs {
		bool has_src = false, has_dst = false;
		std::uint64_t sid_ps = 0; // the source's port space (ib_sid_ps())
		SockaddrIb src{}, dst{};
	};
	std::map<std::uint32_t, IbAddrs> ib_addrs;
	// Each ID's uid (CREATE_ID's), which names a listener in the
	// CONNECT_REQUESTs it gets: a listener's AF_IB addresses pass to the
	// IDs made from its requests, as Linux's cma_save_ib_info() does.
	std::map<std::uint32_t, std::uint64_t> uid_of;
	// The default device's GID (port 1, index 0), asked once; nullptr
	// if it cannot be.
	const std::uint8_t *local_gid()
	{
		if (!gid_asked) {
			gid_asked = true;
			if (auto g = ctx.query_gid(1, 0)) {
				static_assert(sizeof(*g) == sizeof(gid));
				std::memcpy(gid, &*g, sizeof(gid));
				has_gid = true;
			}
		}
		return has_gid ? gid : nullptr;
	}
	bool gid_asked = false, has_gid = false;
	std::uint8_t gid[16] = {};
	void forget(std::uint32_t id)
	{
		ib_addrs.erase(id);
		uid_of.erase(id);
		forget_mcasts(id);
	}
	// Multicast groups joined: the handle JOIN answered (one namespace
	// per process, as ucma's) -> the ID and the core's number of it.
	struct Mcast {
		std::uint32_t id;
		std::uint32_t num;
	};
	std::map<std::uint32_t, Mcast> mcasts;
	std::uint32_t next_mcast = 0;
	void forget_mcasts(std::uint32_t id)
	{
		std::erase_if(mcasts, [id](const auto &e) { return e.second.id == id; });
	}
};

namespace
{
// In-process the process's own core is the CM of its RoCE devices, and
// it hears the wire only through a verbs context's endpoint of the device
// (docs/cm.md, "Across hosts"): the process's rdma_cm files hold one on
// each RoCE device, opened through the libibverbs the process uses (the
// drop-in), so that a listener hears requests before any QP exists, as a
// wildcard one does.  None found (no drop-in loaded): nothing held.
void hold_roce(Ucma::Shared &sh)
{
	if (std::strcmp(sh.ctx.transport().name(), "inproc") != 0)
		return;
	auto get = reinterpret_cast<void **(*)(int *)>(dlsym(RTLD_DEFAULT, "ibv_get_device_list"));
	auto free_list = reinterpret_cast<void (*)(void **)>(dlsym(RTLD_DEFAULT, "ibv_free_device_list"));
	auto name = reinterpret_cast<const char *(*)(void *)>(dlsym(RTLD_DEFAULT, "ibv_get_device_name"));
	auto open = reinterpret_cast<void *(*)(void *)>(dlsym(RTLD_DEFAULT, "ibv_open_device"));
	sh.close_dev = reinterpret_cast<int (*)(void *)>(dlsym(RTLD_DEFAULT, "ibv_close_device"));
	if (!get || !free_list || !name || !open || !sh.close_dev)
		return;
	int n = 0;
	void **list = get(&n);
	for (int i = 0; list && i < n; i++) {
		const char *nm = name(list[i]);
		if (!nm || !std::strcmp(nm, "uabi_sw0"))
			continue;
		if (void *v = open(list[i]))
			sh.roce.push_back(v);
	}
	if (list)
		free_list(list);
}

std::mutex g_shared_lock;
std::weak_ptr<Ucma::Shared> g_shared;
pid_t g_shared_pid;
// The rate a path of ours reports: 10 Gb/s (IB's rate code 3).
constexpr std::uint8_t kPathRate = 3;

// @a, the core's IP form of an address bound or resolved with AF_IB @ib,
// as Linux keeps it once its port is chosen: the service ID of port space
// @sid_ps (the bind's; 0: the ID's own @ps) and @a's port, every bit of it
// significant (cma_bind_port()).
SockaddrIb to_ib(const uabi_cm_addr &a, const SockaddrIb &ib, std::uint64_t sid_ps, std::uint16_t ps)
{
	SockaddrIb o = ib;
	std::uint16_t port;
	std::memcpy(&port, a.bytes + 2, sizeof(port));
	// none given (the wildcard, or a source the resolution chose): the
	// GID of the address the core has, if it has one
	static const std::uint8_t zero[16] = {};
	if (!std::memcmp(o.gid, zero, 16))
		ip_gid(a, o.gid);
	o.sid = htobe64((sid_ps ? sid_ps : service_id(ps, 0)) | ntohs(port));
	o.sid_mask = ~0ull;
	return o;
}

// QUERY, ADDR or GID (@gid): the device's GUID, port and P_Key, and the
// two addresses; ADDR in the family they were given in, GID as AF_IB
// addresses of the two GIDs (their service IDs those of the addresses'
// ports; ucma_query_gid()).  @ia: the ID's AF_IB addresses, if any.
rdma_ucm_query_addr_resp query_addr(const uabi_cm_id_info &info, const Ucma::Shared::IbAddrs *ia, bool gid)
{
	rdma_ucm_query_addr_resp resp{};
	resp.node_guid = htobe64(info.node_guid); // __be64, as ibv_get_device_guid()
	resp.port_num = info.port_num;
	resp.pkey = htobe16(info.pkey); // big-endian in a __u16, as ucma's
	resp.ibdev_index = 0xffffffffu; // match the device by its GUID alone
	const uabi_cm_addr *ip[2] = {&info.src, &info.dst};
	const std::uint8_t *gids[2] = {info.sgid, info.dgid};
	sockaddr_storage *out[2] = {reinterpret_cast<sockaddr_storage *>(&resp.src_addr),
				    reinterpret_cast<sockaddr_storage *>(&resp.dst_addr)};
	std::uint16_t sizes[2];
	for (int i = 0; i < 2; i++) {
		const bool has_ib = ia && (i == 0 ? ia->has_src : ia->has_dst);
		if (has_ib || gid) {
			SockaddrIb s{};
			if (has_ib) {
				s = to_ib(*ip[i], i == 0 ? ia->src : ia->dst, i == 0 ? ia->sid_ps : 0,
					  info.ps);
			} else {
				std::uint16_t port;
				std::memcpy(&port, ip[i]->bytes + 2, sizeof(port));
				s.family = kAfIb;
				s.pkey = resp.pkey;
				s.sid = htobe64(service_id(info.ps, ntohs(port)));
			}
			// GID: the device's GIDs of the ID's addresses, an
			// AF_IB address's own GID being the IP address the
			// core took from it
			if (gid)
				std::memcpy(s.gid, gids[i], sizeof(s.gid));
			std::memcpy(out[i], &s, sizeof(s));
			sizes[i] = sizeof(s);
		} else {
			sizes[i] = std::uint16_t(addr_size(ip[i]->bytes));
			std::memcpy(out[i], ip[i]->bytes, sizes[i]);
		}
	}
	resp.src_size = sizes[0];
	resp.dst_size = sizes[1];
	return resp;
}

// QUERY, PATH: the ID's path record (once its route is resolved), in the
// subnet administrator's PathRecord layout (IBTA 15.2.5.16; rdma-core's
// struct ibv_path_data), the fields QUERY_ROUTE gives, as many as fit in
// @out_len (ucma_query_path()).
long put_paths(std::uint64_t to, std::size_t out_len, const uabi_cm_id_info &info)
{
	struct PathData {
		std::uint32_t flags, reserved;
		std::uint8_t rec[64];
	};
	static_assert(sizeof(PathData) == sizeof(ib_path_rec_data));
	struct {
		std::uint32_t num_paths, reserved; // struct rdma_ucm_query_path_resp
		PathData path;
	} resp{};
	static_assert(sizeof(resp) == sizeof(rdma_ucm_query_path_resp) + sizeof(PathData));
	std::size_t room = out_len - sizeof(rdma_ucm_query_path_resp), n = 0;
	if (info.num_paths && room > sizeof(PathData)) {
		n = 1;
		PathData &p = resp.path;
		// IB_PATH_GMP | IB_PATH_PRIMARY | IB_PATH_BIDIRECTIONAL
		p.flags = 0x01 | 0x02 | 0x08 | 0x20;
		std::uint8_t *r = p.rec;
		std::uint16_t dport;
		std::memcpy(&dport, info.dst.bytes + 2, sizeof(dport));
		const std::uint64_t sid = htobe64(service_id(info.ps, ntohs(dport)));
		const std::uint16_t dlid = htobe16(info.dlid), slid = htobe16(info.slid),
				    pkey = htobe16(info.pkey);
		std::memcpy(r + 0, &sid, 8);
		std::memcpy(r + 8, info.dgid, 16);
		std::memcpy(r + 24, info.sgid, 16);
		std::memcpy(r + 40, &dlid, 2);
		std::memcpy(r + 42, &slid, 2);
		r[49] = 0x80 | 1; // reversible, one path
		std::memcpy(r + 50, &pkey, 2);
		r[54] = 2 << 6 | (info.mtu & 0x3f); // MTU, selector "exactly"
		r[55] = 2 << 6 | kPathRate;
		r[56] = 2 << 6; // packet life time 0, as QUERY_ROUTE's
	}
	resp.num_paths = std::uint32_t(n);
	return put(to, &resp, sizeof(rdma_ucm_query_path_resp) + n * sizeof(PathData));
}

} // namespace

Result<std::unique_ptr<Ucma>> Ucma::open()
{
	std::shared_ptr<Shared> sh;
	{
		std::lock_guard<std::mutex> g(g_shared_lock);
		// A forked child opens a context of its own.
		if (g_shared_pid == ::getpid())
			sh = g_shared.lock();
		if (!sh) {
			auto ctx = Context::open();
			if (!ctx)
				return make_error(ctx.error());
			sh = std::make_shared<Shared>(std::move(*ctx));
			hold_roce(*sh);
			g_shared = sh;
			g_shared_pid = ::getpid();
		}
	}
	std::lock_guard<std::mutex> g(sh->m);
	Command c(UABI_OBJ_CM_CHANNEL, UABI_METHOD_CREATE);
	OutAttr fd = c.add_out<std::int32_t>(UABI_ATTR_CM_CHANNEL_FD, kMandatory | UABI_ATTR_F_FD);
	auto m = sh->ctx.call(std::move(c));
	if (!m)
		return make_error(m.error());
	std::int32_t v = -1;
	if (!m->read(0, fd, v) || v < 0)
		return make_error(EIO);
	Handle ch = m->result(0).out_handle;
	return std::unique_ptr<Ucma>(new Ucma(sh, ch, v));
}

Ucma::~Ucma()
{
	std::lock_guard<std::mutex> g(sh_->m);
	for (auto it = sh_->owner.begin(); it != sh_->owner.end();) {
		if (it->second == this) {
			(void)sh_->ctx.destroy(UABI_OBJ_CM_ID, it->first);
			sh_->forget(it->first);
			it = sh_->owner.erase(it);
		} else {
			++it;
		}
	}
	(void)sh_->ctx.destroy(UABI_OBJ_CM_CHANNEL, channel_);
}

long Ucma::owns(std::uint32_t id) const
{
	auto it = sh_->owner.find(id);
	if (it == sh_->owner.end())
		return -ENOENT;
	return it->second == this ? 0 : -EINVAL;
}

void Ucma::inherit_ib(std::uint32_t id, std::uint64_t uid)
{
	for (const auto &[h, ia] : sh_->ib_addrs) {
		auto u = sh_->uid_of.find(h);
		auto o = sh_->owner.find(h);
		if (!ia.has_src || u == sh_->uid_of.end() || u->second != uid ||
		    o == sh_->owner.end() || o->second != this)
			continue;
		uabi_cm_id_info info{};
		if (query_info(sh_->ctx, id, info))
			return;
		Shared::IbAddrs n;
		n.has_src = n.has_dst = true;
		n.src = ia.src;
		n.sid_ps = ia.sid_ps;
		// the requester: the GID of its IP address (IPv4-mapped)
		n.dst.family = kAfIb;
		n.dst.pkey = htobe16(0xffff);
		ip_gid(info.dst, n.dst.gid);
		sh_->ib_addrs[id] = n;
		return;
	}
}

long Ucma::execute(const std::byte *buf, std::size_t len, Resolver resolve) noexcept
{
	rdma_ucm_cmd_hdr hdr;
	if (len < sizeof(hdr))
		return -EINVAL;
	std::memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.cmd > RDMA_USER_CM_CMD_JOIN_MCAST) // the last one Linux 6.1 knows
		return -EINVAL;
	std::size_t in_len = std::min<std::size_t>(hdr.in, len - sizeof(hdr));
	std::lock_guard<std::mutex> g(sh_->m);
	long r = dispatch(hdr.cmd, buf + sizeof(hdr), in_len, hdr.out, resolve);
	return r < 0 ? r : long(len);
}

long Ucma::dispatch(std::uint32_t cmd, const std::byte *in, std::size_t in_len,
		    std::uint16_t out_len, Resolver resolve)
{
	Context &ctx_ = sh_->ctx;
	// The ID must be one of this file's.
	if (std::size_t off = id_offset(cmd); off != SIZE_MAX) {
		if (out_len < min_out(cmd))
			return -ENOSPC;
		std::uint32_t id = 0;
		if (in_len >= off + sizeof(id))
			std::memcpy(&id, in + off, sizeof(id));
		if (long e = owns(id))
			return e;
	}
	switch (cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: {
		if (out_len < sizeof(rdma_ucm_create_id_resp))
			return -ENOSPC;
		auto c = in_struct<rdma_ucm_create_id>(in, in_len);
		uabi_cm_id_create cr{};
		cr.uid = c.uid;
		cr.ps = c.ps;
		cr.qp_type = c.qp_type;
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_CREATE);
		k.add_handle(UABI_ATTR_CM_ID_CHANNEL, channel_).add_in(UABI_ATTR_CM_ID_CREATE, cr);
		auto m = ctx_.call(std::move(k));
		if (!m)
			return -m.error();
		rdma_ucm_create_id_resp resp{};
		resp.id = m->result(0).out_handle;
		if (long e = put(c.response, &resp, sizeof(resp))) {
			(void)ctx_.destroy(UABI_OBJ_CM_ID, resp.id);
			return e;
		}
		sh_->owner[resp.id] = this;
		sh_->uid_of[resp.id] = c.uid;
		return 0;
	}
	case RDMA_USER_CM_CMD_DESTROY_ID: {
		if (out_len < sizeof(rdma_ucm_destroy_id_resp))
			return -ENOSPC;
		auto c = in_struct<rdma_ucm_destroy_id>(in, in_len);
		Command k(UABI_OBJ_CM_ID, UABI_METHOD_DESTROY, c.id);
		OutAttr o = k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
		auto m = ctx_.call(std::move(k));
		if (!m)
			return -m.error();
		sh_->owner.erase(c.id);
		sh_->forget(c.id);
		uabi_cm_id_info info{};
		m->read(0, o, info);
		rdma_ucm_destroy_id_resp resp{};
		resp.events_reported = info.events_reported;
		return put(c.response, &resp, sizeof(resp));
	}
	case RDMA_USER_CM_CMD_BIND_IP:
	case RDMA_USER_CM_CMD_BIND: {
		std::uint32_t id;
		uabi_cm_addr a;
		if (cmd == RDMA_USER_CM_CMD_BIND_IP) {
			auto c = in_struct<rdma_ucm_bind_ip>(in, in_len);
			if (!addr_size(&c.addr))
				return -EINVAL;
			id = c.id;
			a = to_addr(&c.addr, sizeof(c.addr));
		} else {
			auto c = in_struct<rdma_ucm_bind>(in, in_len);
			if (c.reserved || !c.addr_size)
				return -EINVAL;
			if (family_of(&c.addr) == kAfIb) {
				// AF_IB (librdmacm's probe of it binds the zero
				// GID with a service ID of the TCP port space)
				if (c.addr_size != sizeof(SockaddrIb))
					return -EINVAL;
				SockaddrIb ib;
				std::memcpy(&ib, &c.addr, sizeof(ib));
				uabi_cm_id_info info{};
				if (long e = query_info(ctx_, c.id, info))
					return e;
				const std::uint64_t ps = ib_sid_ps(ib, info.ps);
				if (!ps)
					return -EPROTONOSUPPORT;
				a = from_ib(ib, sh_->local_gid());
				if (!is_local(a))
					return -EADDRNOTAVAIL;
				Command k(UABI_OBJ_CM_ID, UABI_CM_ID_BIND, c.id);
				k.add_in(UABI_ATTR_CM_ID_ADDR, a);
				if (long e = status(ctx_.call(std::move(k))))
					return e;
				auto &ia = sh_->ib_addrs[c.id];
				ia.has_src = true;
				ia.src = ib;
				ia.sid_ps = ps;
				return 0;
			}
			if (c.addr_size != addr_size(&c.addr))
				return -EINVAL;
			id = c.id;
			a = to_addr(&c.addr, c.addr_size);
		}
		// No interface has it: rdma_translate_ip()'s answer.
		if (!is_local(a))
			return -EADDRNOTAVAIL;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_BIND, id);
		k.add_in(UABI_ATTR_CM_ID_ADDR, a);
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_RESOLVE_IP:
	case RDMA_USER_CM_CMD_RESOLVE_ADDR: {
		uabi_cm_resolve r{};
		std::uint32_t id;
		if (cmd == RDMA_USER_CM_CMD_RESOLVE_IP) {
			auto c = in_struct<rdma_ucm_resolve_ip>(in, in_len);
			std::uint16_t sf;
			std::memcpy(&sf, &c.src_addr, sizeof(sf));
			if ((sf && !addr_size(&c.src_addr)) || !addr_size(&c.dst_addr))
				return -EINVAL;
			r.src = to_addr(&c.src_addr, sizeof(c.src_addr));
			r.dst = to_addr(&c.dst_addr, sizeof(c.dst_addr));
			r.timeout_ms = c.timeout_ms;
			id = c.id;
		} else {
			auto c = in_struct<rdma_ucm_resolve_addr>(in, in_len);
			if (c.reserved || (c.src_size && c.src_size != addr_size_ib(&c.src_addr)) ||
			    !c.dst_size || c.dst_size != addr_size_ib(&c.dst_addr))
				return -EINVAL;
			id = c.id;
			// AF_IB: through the IP addresses of the GIDs (below)
			SockaddrIb ib_src{}, ib_dst{};
			const bool src_ib = c.src_size && family_of(&c.src_addr) == kAfIb,
				   dst_ib = family_of(&c.dst_addr) == kAfIb;
			if (src_ib) {
				std::memcpy(&ib_src, &c.src_addr, sizeof(ib_src));
				r.src = from_ib(ib_src, sh_->local_gid());
			} else if (c.src_size) {
				r.src = to_addr(&c.src_addr, c.src_size);
			}
			if (dst_ib) {
				std::memcpy(&ib_dst, &c.dst_addr, sizeof(ib_dst));
				r.dst = from_ib(ib_dst, sh_->local_gid());
			} else {
				r.dst = to_addr(&c.dst_addr, c.dst_size);
			}
			r.timeout_ms = c.timeout_ms;
			if (src_ib || dst_ib) {
				long e = resolve_addr(ctx_, id, r);
				if (e)
					return e;
				auto &ia = sh_->ib_addrs[id];
				if (src_ib) {
					ia.has_src = true;
					ia.src = ib_src;
				} else if (!c.src_size || !family_of(&c.src_addr)) {
					// no source given: one of the destination's
					// family, as Linux's cma_bind_addr() makes it
					ia.has_src = true;
					ia.src = SockaddrIb{};
					ia.src.family = kAfIb;
					ia.src.pkey = ib_dst.pkey;
				}
				if (dst_ib) {
					ia.has_dst = true;
					ia.dst = ib_dst;
				}
				return 0;
			}
		}
		return resolve_addr(ctx_, id, r);
	}
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE: {
		auto c = in_struct<rdma_ucm_resolve_route>(in, in_len);
		return status(ctx_.call(Command(UABI_OBJ_CM_ID, UABI_CM_ID_RESOLVE_ROUTE, c.id)));
	}
	case RDMA_USER_CM_CMD_QUERY_ROUTE:
	case RDMA_USER_CM_CMD_QUERY: {
		auto c = in_struct<rdma_ucm_query>(in, in_len);
		const std::uint32_t option = cmd == RDMA_USER_CM_CMD_QUERY ? c.option : ~0u;
		std::size_t need;
		switch (option) {
		case ~0u:
			need = sizeof(rdma_ucm_query_route_resp);
			break;
		case RDMA_USER_CM_QUERY_ADDR:
		case RDMA_USER_CM_QUERY_GID:
			need = sizeof(rdma_ucm_query_addr_resp);
			break;
		case RDMA_USER_CM_QUERY_PATH:
			need = sizeof(rdma_ucm_query_path_resp);
			break;
		default:
			return -ENOSYS;
		}
		if (out_len < need)
			return -ENOSPC;
		uabi_cm_id_info info{};
		if (long e = query_info(ctx_, c.id, info))
			return e;
		const auto ib = sh_->ib_addrs.find(c.id);
		const Shared::IbAddrs *ia = ib == sh_->ib_addrs.end() ? nullptr : &ib->second;
		switch (option) {
		case RDMA_USER_CM_QUERY_ADDR:
		case RDMA_USER_CM_QUERY_GID: {
			rdma_ucm_query_addr_resp resp = query_addr(info, ia, option == RDMA_USER_CM_QUERY_GID);
			return put(c.response, &resp, sizeof(resp));
		}
		case RDMA_USER_CM_QUERY_PATH:
			return put_paths(c.response, out_len, info);
		default:
			break; // QUERY_ROUTE
		}
		rdma_ucm_query_route_resp resp{};
		resp.node_guid = htobe64(info.node_guid); // __be64, as ibv_get_device_guid()
		resp.port_num = info.port_num;
		resp.num_paths = info.num_paths;
		resp.ibdev_index = 0xffffffffu;
		std::memcpy(&resp.src_addr, info.src.bytes, addr_size(info.src.bytes));
		std::memcpy(&resp.dst_addr, info.dst.bytes, addr_size(info.dst.bytes));
		ib_user_path_rec &p = resp.ib_route[0];
		std::memcpy(p.sgid, info.sgid, sizeof(p.sgid));
		std::memcpy(p.dgid, info.dgid, sizeof(p.dgid));
		p.pkey = htobe16(info.pkey);
		if (info.num_paths) {
			p.slid = htobe16(info.slid);
			p.dlid = htobe16(info.dlid);
			p.mtu = info.mtu;
			p.numb_path = 1;
			p.reversible = 1;
			p.mtu_selector = 2;
			p.rate_selector = 2;
			p.rate = kPathRate;
			p.packet_life_time_selector = 2;
		}
		return put(c.response, &resp, sizeof(resp));
	}
	case RDMA_USER_CM_CMD_CONNECT: {
		auto c = in_struct<rdma_ucm_connect>(in, in_len);
		if (!c.conn_param.valid)
			return -EINVAL;
		uabi_cm_conn_param p;
		static_assert(sizeof(p) == sizeof(c.conn_param));
		std::memcpy(&p, &c.conn_param, sizeof(p));
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_CONNECT, c.id);
		k.add_in(UABI_ATTR_CM_ID_CONN, p);
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_LISTEN: {
		auto c = in_struct<rdma_ucm_listen>(in, in_len);
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_LISTEN, c.id);
		k.add_in(UABI_ATTR_CM_ID_BACKLOG, c.backlog);
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_ACCEPT: {
		auto c = in_struct<rdma_ucm_accept>(in, in_len);
		uabi_cm_conn_param p;
		std::memcpy(&p, &c.conn_param, sizeof(p));
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_ACCEPT, c.id);
		k.add_in(UABI_ATTR_CM_ID_CONN, p);
		if (c.conn_param.valid)
			k.add_in(UABI_ATTR_CM_ID_UID, std::uint64_t(c.uid));
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_REJECT: {
		auto c = in_struct<rdma_ucm_reject>(in, in_len);
		uabi_cm_reject r{};
		std::size_t n = std::min<std::size_t>(c.private_data_len, sizeof(r.private_data));
		std::memcpy(r.private_data, c.private_data, n);
		r.private_data_len = c.private_data_len;
		r.reason = c.reason;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_REJECT, c.id);
		k.add_in(UABI_ATTR_CM_ID_REJECT, r);
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_DISCONNECT: {
		auto c = in_struct<rdma_ucm_disconnect>(in, in_len);
		return status(ctx_.call(Command(UABI_OBJ_CM_ID, UABI_CM_ID_DISCONNECT, c.id)));
	}
	case RDMA_USER_CM_CMD_INIT_QP_ATTR: {
		if (out_len < sizeof(ib_uverbs_qp_attr))
			return -ENOSPC;
		auto c = in_struct<rdma_ucm_init_qp_attr>(in, in_len);
		if (c.qp_state > UABI_QPS_ERR)
			return -EINVAL;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_INIT_QP_ATTR, c.id);
		k.add_in(UABI_ATTR_CM_ID_QP_STATE, c.qp_state);
		OutAttr o = k.add_out<uabi_cm_qp_attr>(UABI_ATTR_CM_ID_QP_ATTR);
		auto m = ctx_.call(std::move(k));
		if (!m)
			return -m.error();
		uabi_cm_qp_attr r{};
		m->read(0, o, r);
		ib_uverbs_qp_attr resp = legacy_qp_attr(r);
		return put(c.response, &resp, sizeof(resp));
	}
	case RDMA_USER_CM_CMD_GET_EVENT: {
		constexpr std::size_t kMin =
		    sizeof(rdma_ucm_event_resp) - sizeof(__u32) - sizeof(rdma_ucm_ece);
		if (out_len < kMin)
			return -ENOSPC;
		auto c = in_struct<rdma_ucm_get_event>(in, in_len);
		// Where the event goes must be writable before one is taken:
		// a taken event cannot be put back.
		std::size_t n = std::min<std::size_t>(out_len, sizeof(rdma_ucm_event_resp));
		if (probe_user_writable(c.response, n))
			return -EFAULT;
		Command k(UABI_OBJ_CM_CHANNEL, UABI_CM_CHANNEL_GET_EVENT, channel_);
		OutAttr o = k.add_out<uabi_cm_event>(UABI_ATTR_CM_CHANNEL_EVENT);
		auto m = ctx_.call(std::move(k));
		if (!m)
			return -m.error();
		uabi_cm_event ev{};
		m->read(0, o, ev);
		if (ev.event == UABI_CM_EVENT_CONNECT_REQUEST) {
			sh_->owner[ev.handle] = this; // the new ID is on this file
			inherit_ib(ev.handle, ev.uid);
		}
		rdma_ucm_event_resp resp{};
		resp.uid = ev.uid;
		resp.id = ev.handle;
		resp.event = ev.event;
		resp.status = std::uint32_t(ev.status);
		static_assert(sizeof(resp.param.conn) == sizeof(ev.conn));
		if (ev.event == UABI_CM_EVENT_MULTICAST_JOIN ||
		    (ev.qp_type == UABI_QPT_UD && (ev.event == UABI_CM_EVENT_CONNECT_REQUEST ||
						   ev.event == UABI_CM_EVENT_ESTABLISHED))) {
			rdma_ucm_ud_param &ud = resp.param.ud;
			ud.qp_num = ev.conn.qp_num;
			ud.qkey = ev.conn.qkey;
			ud.ah_attr = legacy_ah(ev.ah);
			std::memcpy(ud.private_data, ev.conn.private_data, sizeof(ud.private_data));
			ud.private_data_len = ev.conn.private_data_len;
		} else {
			std::memcpy(&resp.param.conn, &ev.conn, sizeof(ev.conn));
		}
		return put(c.response, &resp, n);
	}
	case RDMA_USER_CM_CMD_SET_OPTION: {
		auto c = in_struct<rdma_ucm_set_option>(in, in_len);
		if (c.optlen > 4096)
			return -EINVAL;
		// As Linux's ucma_set_option(): the ID first, then the value
		// (all optlen bytes readable), then the option's own checks
		// (ucma_set_option_id()) and the core's (the CM's).
		Command q(UABI_OBJ_CM_ID, UABI_METHOD_QUERY, c.id);
		q.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
		if (auto m = ctx_.call(std::move(q)); !m)
			return -m.error();
		std::byte val[4096];
		if (c.optlen && copy_from_user(val, c.optval, c.optlen))
			return -EFAULT;
		if (c.level != RDMA_OPTION_ID)
			return -ENOSYS;	// RDMA_OPTION_IB_PATH: not built (docs/cm.md)
		uabi_cm_option o{c.optname, 0};
		switch (c.optname) {
		case RDMA_OPTION_ID_TOS:
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			if (c.optlen != sizeof(std::uint8_t))
				return -EINVAL;
			o.value = std::to_integer<std::uint32_t>(val[0]);
			break;
		case RDMA_OPTION_ID_REUSEADDR:
		case RDMA_OPTION_ID_AFONLY: {
			int v;
			if (c.optlen != sizeof(v))
				return -EINVAL;
			std::memcpy(&v, val, sizeof(v));
			o.value = v ? 1 : 0;
			break;
		}
		default:
			return -ENOSYS;
		}
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_SET_OPTION, c.id);
		k.add_in(UABI_ATTR_CM_ID_OPTION, o);
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_NOTIFY: {
		auto c = in_struct<rdma_ucm_notify>(in, in_len);
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_NOTIFY, c.id);
		k.add_in(UABI_ATTR_CM_ID_EVENT_TYPE, c.event);
		return status(ctx_.call(std::move(k)));
	}
	case RDMA_USER_CM_CMD_MIGRATE_ID: {
		// Written to the destination file; cmd.fd names the source.
		if (out_len < sizeof(rdma_ucm_migrate_resp))
			return -ENOSPC;
		auto c = in_struct<rdma_ucm_migrate_id>(in, in_len);
		int err = 0;
		Ucma *from = resolve ? resolve(int(c.fd), &err) : nullptr;
		if (!from)
			return -(err ? err : EINVAL);
		if (long e = from->owns(c.id))
			return e;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_MIGRATE, c.id);
		k.add_handle(UABI_ATTR_CM_ID_CHANNEL, channel_);
		OutAttr o = k.add_out<uabi_cm_id_info>(UABI_ATTR_CM_ID_INFO);
		auto m = ctx_.call(std::move(k));
		if (!m)
			return -m.error();
		sh_->owner[c.id] = this;
		uabi_cm_id_info info{};
		m->read(0, o, info);
		rdma_ucm_migrate_resp resp{};
		resp.events_reported = info.events_reported;
		return put(c.response, &resp, sizeof(resp));
	}
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST:
	case RDMA_USER_CM_CMD_JOIN_MCAST: {
		if (out_len < sizeof(rdma_ucm_create_id_resp))
			return -ENOSPC;
		uabi_cm_mcast m{};
		std::uint32_t id;
		std::uint64_t response;
		if (cmd == RDMA_USER_CM_CMD_JOIN_IP_MCAST) {
			// Always a full member, as ucma makes it.
			auto c = in_struct<rdma_ucm_join_ip_mcast>(in, in_len);
			if (!addr_size(&c.addr))
				return -EINVAL;
			m.addr = to_addr(&c.addr, addr_size(&c.addr));
			m.uid = c.uid;
			m.join_flags = UABI_CM_MC_FULLMEMBER;
			id = c.id;
			response = c.response;
		} else {
			auto c = in_struct<rdma_ucm_join_mcast>(in, in_len);
			if (!c.addr_size || c.addr_size != addr_size_ib(&c.addr))
				return -EINVAL;
			if (c.join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
			    c.join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
				return -EINVAL;
			if (family_of(&c.addr) == kAfIb) {
				// an MGID itself (cma_set_mgid()): carried as
				// an IPv6 address, taken as it is
				SockaddrIb ib;
				std::memcpy(&ib, &c.addr, sizeof(ib));
				sockaddr_in6 in6{};
				in6.sin6_family = AF_INET6;
				std::memcpy(&in6.sin6_addr, ib.gid, 16);
				m.addr = to_addr(&in6, sizeof(in6));
				m.flags = UABI_CM_MCAST_F_MGID;
			} else {
				m.addr = to_addr(&c.addr, c.addr_size);
			}
			m.uid = c.uid;
			m.join_flags = c.join_flags == RDMA_MC_JOIN_FLAG_FULLMEMBER
					   ? UABI_CM_MC_FULLMEMBER
					   : UABI_CM_MC_SENDONLY_FULLMEMBER;
			id = c.id;
			response = c.response;
		}
		if (long e = owns(id))
			return e;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_JOIN_MCAST, id);
		k.add_in(UABI_ATTR_CM_ID_MCAST, m);
		OutAttr o = k.add_out<std::uint32_t>(UABI_ATTR_CM_ID_MCAST_ID);
		auto r = ctx_.call(std::move(k));
		if (!r)
			return -r.error();
		std::uint32_t num = 0;
		r->read(0, o, num);
		rdma_ucm_create_id_resp resp{};
		do
			resp.id = ++sh_->next_mcast;
		while (!resp.id || sh_->mcasts.count(resp.id));
		if (long e = put(response, &resp, sizeof(resp))) {
			// Not answered: left again, as ucma does.
			Command l(UABI_OBJ_CM_ID, UABI_CM_ID_LEAVE_MCAST, id);
			l.add_in(UABI_ATTR_CM_ID_MCAST_ID, num);
			(void)ctx_.call(std::move(l));
			return e;
		}
		sh_->mcasts[resp.id] = {id, num};
		return 0;
	}
	case RDMA_USER_CM_CMD_LEAVE_MCAST: {
		if (out_len < sizeof(rdma_ucm_destroy_id_resp))
			return -ENOSPC;
		auto c = in_struct<rdma_ucm_destroy_id>(in, in_len);
		auto it = sh_->mcasts.find(c.id);
		if (it == sh_->mcasts.end())
			return -ENOENT;
		if (long e = owns(it->second.id))
			return e == -ENOENT ? e : -EINVAL;
		Command k(UABI_OBJ_CM_ID, UABI_CM_ID_LEAVE_MCAST, it->second.id);
		k.add_in(UABI_ATTR_CM_ID_MCAST_ID, it->second.num);
		OutAttr o = k.add_out<std::uint32_t>(UABI_ATTR_CM_ID_EVENTS);
		auto r = ctx_.call(std::move(k));
		if (!r)
			return -r.error();
		sh_->mcasts.erase(it);
		rdma_ucm_destroy_id_resp resp{};
		r->read(0, o, resp.events_reported);
		return put(c.response, &resp, sizeof(resp));
	}
	default:
		// GET_OPTION (never implemented by Linux), RESOLVE_IB_SERVICE,
		// WRITE_CM_EVENT: not yet (docs/cm.md).
		return -ENOSYS;
	}
}

} // namespace uabi::legacy
