// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The device as the file system shows it (docs/fsview.md): what the device
// answers (Snapshot), the sysfs files and /dev/infiniband nodes made from
// those answers (Tree), and the private view `uabi run` puts them in.
//
// Every value comes from the device's own answers (DEVICE QUERY, QUERY_PORT,
// QUERY_GID, QUERY_PKEY) at the time the snapshot is taken, formatted as
// Linux's drivers/infiniband/core prints it.  The MAD agent of compat/umad
// answers from the same Snapshot, so sysfs and the management datagrams
// always agree.
#ifndef UABI_FSVIEW_HPP
#define UABI_FSVIEW_HPP

#include <uabi/client.hpp>

#include <rdma/uabi_sw.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace uabi::fsview {

// ------------------------------------------------------------- snapshot
struct Port {
	std::uint32_t num = 0;
	uabi_port_attr attr{};
	std::vector<Gid> gids;		  // index 0 .. gid_tbl_len - 1 (those it answers)
	std::vector<std::uint16_t> pkeys; // index 0 .. pkey_tbl_len - 1
};

// The port counters of the calling user (docs/fsview.md, "Port
// counters"): the block the data path of the user's processes counts in,
// in the writable part of the user's arena, mapped through the driver call
// the drop-in library maps the arena with (UABI_SW_ARENA_MAP).  Only its
// first page is mapped; the mapping outlives the context it came from.
class Traffic {
public:
	// EOPNOTSUPP: a device without an arena (nothing is counted).
	static Result<std::shared_ptr<Traffic>> map(Context &ctx);
	~Traffic();
	Traffic(const Traffic &) = delete;
	Traffic &operator=(const Traffic &) = delete;
	uabi_sw_port_counters *block() const { return block_; }

private:
	Traffic(void *page, uabi_sw_port_counters *b) : page_(page), block_(b) {}
	void *page_;
	uabi_sw_port_counters *block_;
};

struct Snapshot {
	std::string name; // "uabi_sw0", "roce_lo"
	uabi_device_attr attr{};
	// A RoCE device (its ports' link layer is Ethernet): the network
	// interface it is bound to ("lo", "eth0"); empty for InfiniBand.
	std::string netdev;
	std::vector<Port> ports;
	std::string node_desc; // at most 64 bytes
	// The user's counters, read when they are asked for (the device has
	// one port); null: none, every counter reads 0.
	std::shared_ptr<Traffic> traffic;
};

// Asks the device.  node_desc: the view's node_desc file when one is
// readable (the node description is the host's setting, as rdma-ndd
// writes it), else default_node_desc().
Result<Snapshot> query(Context &ctx);
// The devices of backend b, in the order ibv_get_device_list() gives
// them (uverbsN = the Nth), each asked through a context of its own: a
// RoCE device's netdev is the interface uabid or UABI_LINKS binds it to,
// else the interface that holds its first GID's address.
Result<std::vector<Snapshot>> query_all(Backend b);
// The interface holding the address of one of the port's GIDs (IPv4-mapped
// or IPv6; getifaddrs()), empty when none does.
std::string netdev_of_gids(const Port &p);
// True when the port's link layer is Ethernet (a RoCE port).
bool is_ethernet(const Port &p);
// "<hostname> <device>", rdma-ndd's default format.
std::string default_node_desc(const std::string &device);

const Port *find_port(const Snapshot &s, std::uint32_t num);
// The port's GUID: the interface id of GID 0 (0 when it has none).
std::uint64_t port_guid(const Port &p);
std::uint64_t gid_prefix(const Port &p);

// The PortCounters of a port, as its performance management agent answers
// them: the data and packet counters are the calling user's traffic
// (Traffic), 32 bits that stop at their maximum as IB's do; the software
// device has no link to count errors or waits on, so the others are 0.
struct PortCounters {
	std::uint16_t symbol_error = 0;
	std::uint8_t link_error_recovery = 0;
	std::uint8_t link_downed = 0;
	std::uint16_t port_rcv_errors = 0;
	std::uint16_t port_rcv_remote_physical_errors = 0;
	std::uint16_t port_rcv_switch_relay_errors = 0;
	std::uint16_t port_xmit_discards = 0;
	std::uint8_t port_xmit_constraint_errors = 0;
	std::uint8_t port_rcv_constraint_errors = 0;
	std::uint8_t local_link_integrity_errors = 0;	  // 4 bits
	std::uint8_t excessive_buffer_overrun_errors = 0; // 4 bits
	std::uint16_t vl15_dropped = 0;
	std::uint32_t port_xmit_data = 0;
	std::uint32_t port_rcv_data = 0;
	std::uint32_t port_xmit_packets = 0;
	std::uint32_t port_rcv_packets = 0;
	std::uint32_t port_xmit_wait = 0;
};
PortCounters port_counters(const Snapshot &s, const Port &p);
// PortCountersExtended: the same traffic in 64 bits, and by unicast and
// multicast packets.
struct PortCountersExt {
	std::uint64_t port_xmit_data = 0;
	std::uint64_t port_rcv_data = 0;
	std::uint64_t port_xmit_packets = 0;
	std::uint64_t port_rcv_packets = 0;
	std::uint64_t unicast_xmit_packets = 0;
	std::uint64_t unicast_rcv_packets = 0;
	std::uint64_t multicast_xmit_packets = 0;
	std::uint64_t multicast_rcv_packets = 0;
};
PortCountersExt port_counters_ext(const Snapshot &s, const Port &p);
// A PMA Set: clears the counters CounterSelect names (PortCounters: bits
// 12-15 are the data and packet counters, the others are always 0;
// PortCountersExtended: bits 0-7), for the calling user.
void clear_counters(const Snapshot &s, const Port &p, std::uint16_t select);
void clear_counters_ext(const Snapshot &s, const Port &p, std::uint16_t select);

// ----------------------------------------------------------- formatting
// As Linux's sysfs prints them (without the trailing newline).
std::string fmt_guid(std::uint64_t host_order);	 // "0275:6162:6900:0001"
std::string fmt_gid(const Gid &g);		 // 8 groups of 4 hex digits
std::string fmt_fw_ver(std::uint64_t fw_ver);	 // "1.0.0", as ibv_query_device
std::string fmt_node_type(std::uint32_t type);	 // "1: CA"
std::string fmt_port_state(std::uint32_t state); // "4: ACTIVE"
std::string fmt_phys_state(std::uint32_t phys);	 // "5: LinkUp"
std::string fmt_rate(std::uint8_t width, std::uint8_t speed); // "10 Gb/sec (4X SDR)"
std::string fmt_link_layer(std::uint8_t ll);			// "InfiniBand"
int width_to_int(std::uint8_t width);	// IB_WIDTH_* -> lanes (1, 4, 8, 12, 2), 0 unknown

// The ABI versions of the interfaces the view stands for: the legacy
// uverbs write() ABI the translator speaks, and the umad ABI the shim
// serves (compat/umad).
inline constexpr int kVerbsAbiVersion = 6;
inline constexpr int kMadAbiVersion = 5;

// ----------------------------------------------------------------- tree
struct File {
	std::string path; // relative to the sysfs root ("class/infiniband/...")
	std::string data;
	bool writable = false; // node_desc
};

struct Link {
	std::string path;
	std::string target;
};

// A node of /dev/infiniband: a bind mount of an existing character device
// (there is no unprivileged mknod), whose numbers the sysfs `dev` files
// give, so the two agree.
struct DevNode {
	std::string name;   // "uverbs0"
	std::string source; // "/dev/null", "/dev/rdma_uabi"
	unsigned major = 0;
	unsigned minor = 0;
};

struct Tree {
	std::vector<std::string> dirs; // relative to the sysfs root, parents first
	std::vector<File> files;
	std::vector<Link> links;
	std::vector<DevNode> nodes;
	// The top-level entries of <sysfs>/class the view adds.
	std::vector<std::string> class_entries;
};

struct NodeSources {
	std::string uverbs = "/dev/null"; // the kernel backend: /dev/rdma_uabi
	std::string mad = "/dev/null";	  // umadN and issmN
	// The RDMA connection manager's node (/dev/infiniband/rdma_cm and
	// class/misc/rdma_cm) once a backend provides one: the hook for the
	// connection manager.  Empty: none (today: librdmacm reports that no
	// rdma_cm device exists).
	std::string rdma_cm;
};

// The character device behind `source` (stat), for the sysfs dev files.
Result<DevNode> dev_node(const std::string &name, const std::string &source);
// Every device: class/infiniband/<name> each; uverbsN for the Nth device;
// umadN/issmN for each port of each device, numbered in that order.
Result<Tree> make_tree(const std::vector<Snapshot> &devices, const NodeSources &src);
// One device (tests).
Result<Tree> make_tree(const Snapshot &s, const NodeSources &src);

// ----------------------------------------------------------------- view
// How `uabi run` shows the tree (UABI_FSVIEW):
//   auto       a private mount namespace (root) or a user + mount
//              namespace (others); if neither can be made, sysfs-path
//   namespace  the namespace or fail
//   sysfs-path the tree in a directory: SYSFS_PATH names its sys/ (for
//              the libraries that honour it: rdma-core's libibverbs and
//              librdmacm, the drop-in's ibv_get_sysfs_path(), srp_daemon),
//              UABI_FSVIEW_ROOT the directory (the umad shim serves
//              /dev/infiniband and /sys/class/infiniband* of dynamically
//              linked programs from it)
//   off        nothing
enum class Mode { Auto, Namespace, SysfsPath, Off };
Result<Mode> mode_from_env();
const char *mode_name(Mode m);

struct Entered {
	Mode used = Mode::Off;
	std::string root;   // sysfs-path: the directory; namespace: "/sys"
	std::string reason; // why auto fell back to sysfs-path
};

// Namespace: unshares (a user namespace too unless root), makes every
// mount private, and shows the tree over /sys/class and /dev (existing
// entries bound in place, so the rest of /sys/class and /dev is unchanged).
// Only the calling process and the processes it starts see it.
Result<void> enter_namespace(const Tree &t);
// Writes the tree under dir (created 0700 if missing): dir/view/sys/class/...
// with symlinks to the rest of /sys (so that SYSFS_PATH=dir/view/sys still
// finds everything else), and dir/view/dev/infiniband/<node> symlinks to
// the nodes' sources.  A new copy replaces the old one by rename().
Result<void> write_tree(const Tree &t, const std::string &dir);
// Mode::Auto / Namespace / SysfsPath as above; fallback_dir gives (and
// makes) the directory for sysfs-path, asked only when it is needed.
Result<Entered> enter(const Tree &t, Mode m,
		      const std::function<Result<std::string>()> &fallback_dir);

// What `uabi run` does before it starts a program (newapi/tools/uabi.cpp):
// unless UABI_FSVIEW=off or the process already sees a view, asks every
// device of backend b (query_all), makes the tree (on the kernel backend
// the uverbs nodes are /dev/rdma_uabi itself) and enters it.  Entered::used says how.
Result<Entered> prepare_for_run(Backend b);

// The environment variable that marks a process as inside a view: its
// value names the mount namespace ("mnt:[...]") or the sysfs-path root.
inline constexpr const char *kActiveEnv = "UABI_FSVIEW_ACTIVE";
// True when this process already sees a view made by `uabi run`.
bool already_inside();

} // namespace uabi::fsview

#endif // UABI_FSVIEW_HPP
