// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The device list, contexts, device and port queries, and the helpers of
// libibverbs that need no device (strings, rates, sysfs).
#include "verbs_impl.hpp"

#include <uabi/convert/device.hpp>
#include <uabi/ofed_verbs_abi.h>

#include <rdma/uabi_sw.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

using namespace uabi;
using namespace uabi::verbs;

// The layout the inline functions of <infiniband/verbs.h> read.
static_assert(offsetof(struct ibv_context, ops) == 8);
static_assert(offsetof(struct ibv_context_ops, poll_cq) == 11 * sizeof(void *));
static_assert(offsetof(struct ibv_context_ops, req_notify_cq) == 12 * sizeof(void *));
static_assert(offsetof(struct ibv_context_ops, post_srq_recv) == 20 * sizeof(void *));
static_assert(offsetof(struct ibv_context_ops, post_send) == 25 * sizeof(void *));
static_assert(offsetof(struct ibv_context_ops, post_recv) == 26 * sizeof(void *));
static_assert(offsetof(struct verbs_context, context) + sizeof(struct ibv_context) ==
	      sizeof(struct verbs_context));
static_assert(offsetof(struct verbs_context, sz) + sizeof(size_t) ==
	      offsetof(struct verbs_context, context));
static_assert(offsetof(struct verbs_context, close_xrcd) == offsetof(struct verbs_context, sz) - 16);
static_assert(offsetof(struct verbs_context, open_xrcd) == offsetof(struct verbs_context, sz) - 24);
static_assert(offsetof(struct verbs_context, create_srq_ex) == offsetof(struct verbs_context, sz) - 32);
static_assert(offsetof(struct verbs_context, get_srq_num) == offsetof(struct verbs_context, sz) - 40);
static_assert(offsetof(struct verbs_context, create_qp_ex) == offsetof(struct verbs_context, sz) - 48);
static_assert(offsetof(struct verbs_context, open_qp) == offsetof(struct verbs_context, sz) - 56);
static_assert(offsetof(struct verbs_context, query_device_ex) ==
	      offsetof(struct verbs_context, sz) - 96);
static_assert(offsetof(struct verbs_context, query_port) == 0);
static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0);
static_assert(offsetof(VContext, vctx) == 0);
static_assert(sizeof(struct ibv_sge) == sizeof(sw::Sge) &&
	      offsetof(struct ibv_sge, addr) == offsetof(sw::Sge, addr) &&
	      offsetof(struct ibv_sge, length) == offsetof(sw::Sge, length) &&
	      offsetof(struct ibv_sge, lkey) == offsetof(sw::Sge, lkey));
static_assert(int(IBV_WC_RNR_RETRY_EXC_ERR) == sw::kWcRnrRetryExcErr &&
	      int(IBV_WC_REM_ACCESS_ERR) == sw::kWcRemAccessErr &&
	      int(IBV_WC_WR_FLUSH_ERR) == sw::kWcWrFlushErr && int(IBV_WC_RECV) == sw::kWcRecv &&
	      int(IBV_WC_RECV_RDMA_WITH_IMM) == sw::kWcRecvRdmaWithImm &&
	      int(IBV_WR_ATOMIC_FETCH_AND_ADD) == sw::kWrAtomicFetchAndAdd &&
	      int(IBV_SEND_INLINE) == sw::kSendInline && int(IBV_WC_GRH) == sw::kWcGrh);
static_assert(int(IBV_QPT_XRC_RECV) == UABI_QPT_XRC_RECV && int(IBV_QPT_XRC_SEND) == UABI_QPT_XRC_SEND &&
	      int(IBV_QPT_UD) == UABI_QPT_UD && int(IBV_QPS_ERR) == UABI_QPS_ERR);

namespace {

// The devices of the backend: uabi_sw0 first, then the RoCE devices the
// backend has (docs/wire.md); filled once, by the first
// ibv_get_device_list().  A device's index in this table is the backend's.
constexpr int kMaxDevices = 8;
struct ibv_device g_devices[kMaxDevices];
int g_num_devices;

void init_device(struct ibv_device &d, const char *name, int index)
{
	std::memset(&d, 0, sizeof(d));
	d.node_type = IBV_NODE_CA;
	d.transport_type = IBV_TRANSPORT_IB;
	std::snprintf(d.name, sizeof(d.name), "%s", name);
	std::snprintf(d.dev_name, sizeof(d.dev_name), "uverbs%d", index);
	// dev_path and ibdev_path under ibv_get_sysfs_path(), as libibverbs
	// sets them.
}

int device_index(const struct ibv_device *d)
{
	for (int i = 0; i < g_num_devices; i++)
		if (d == &g_devices[i])
			return i;
	return -1;
}

int query_port_ex(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
		  size_t len)
{
	return guard_int([&] {
		auto r = impl_of(ctx)->ctl.query_port(port);
		if (!r)
			return r.error();
		convert::to_ibv(*r, attr, len);
		return 0;
	});
}

int query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *,
		    struct ibv_device_attr_ex *attr, size_t len)
{
	return guard_int([&] {
		auto r = impl_of(ctx)->ctl.query_device();
		if (!r)
			return r.error();
		struct ibv_device_attr_ex ex;
		std::memset(&ex, 0, sizeof(ex));
		convert::to_ibv(r->attr, &ex.orig_attr);
		ex.device_cap_flags_ex = std::uint32_t(ex.orig_attr.device_cap_flags);
		ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
		// Completion timestamps: the sw device's clock (uabi_sw.h).
		ex.completion_timestamp_mask = ~0ull;
		ex.hca_core_clock = UABI_SW_CORE_CLOCK_KHZ;
		std::memcpy(attr, &ex, std::min(len, sizeof(ex)));
		return 0;
	});
}

// ibv_query_rt_values_ex(3): the device clock now (CLOCK_MONOTONIC, the
// clock of completion timestamps).
int query_rt_values(struct ibv_context *, struct ibv_values_ex *values)
{
	if (!values || (values->comp_mask & ~std::uint32_t(IBV_VALUES_MASK_RAW_CLOCK)))
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)
		clock_gettime(CLOCK_MONOTONIC, &values->raw_clock);
	return 0;
}

// Opens the backend, its async event queue, and maps the device arena;
// with @import_fd, joins the context it names instead (no async queue of
// its own, ibv_import_device(3)).
ContextImpl *open_impl(int import_fd = -1, unsigned device = 0)
{
	auto mode = control_mode_from_env();
	if (!mode)
		return fail_ptr<ContextImpl>(mode.error());
	auto c = import_fd >= 0 ? Control::import(*mode, import_fd) : Control::open(*mode, device);
	if (!c)
		return fail_ptr<ContextImpl>(c.error());
	auto impl = std::make_unique<ContextImpl>(std::move(*c));
	impl->inproc = std::strcmp(impl->ctl.raw().transport().name(), "inproc") == 0;
	impl->async_fd = impl->ctl.async_queue().fd;

	Command cmd(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_MAP);
	OutAttr fd_out = cmd.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_FD, kMandatory | UABI_ATTR_F_FD);
	OutAttr rw_out =
	    cmd.add_out<std::int32_t>(UABI_SW_ATTR_ARENA_RW_FD, kMandatory | UABI_ATTR_F_FD);
	OutAttr info_out = cmd.add_out<uabi_sw_arena_info>(UABI_SW_ATTR_ARENA_INFO);
	auto m = impl->ctl.raw().call(std::move(cmd));
	// A host without the arena hooks (uabi_sw_create()): control verbs
	// work, objects of the data path answer EOPNOTSUPP.
	if (!m && m.error() == EOPNOTSUPP)
		return impl.release();
	if (!m)
		return fail_ptr<ContextImpl>(m.error());
	std::int32_t fd = -1, rw_fd = -1;
	uabi_sw_arena_info info{};
	// In-process the fds are the host's own; otherwise they are our copies.
	auto close_fds = [&] {
		if (impl->inproc)
			return;
		for (std::int32_t f : {fd, rw_fd})
			if (f >= 0)
				::close(f);
	};
	const bool got = m->read(0, fd_out, fd) && m->read(0, rw_out, rw_fd) &&
			 m->read(0, info_out, info);
	if (!got || fd < 0 || rw_fd < 0) {
		close_fds();
		return fail_ptr<ContextImpl>(EPROTO);
	}
	ContextImpl *raw = impl.get();
	impl->dp = sw::Device::map(fd, rw_fd, info, [raw](sw::Notice what, std::uint32_t n) {
		try {
			// Each notice: the arena method and what names its object.
			std::uint16_t method = UABI_SW_ARENA_NOTIFY_CQ;
			std::uint16_t attr = UABI_SW_ATTR_CQN;
			switch (what) {
			case sw::Notice::CqEvent:
				break;
			case sw::Notice::CqError:
				method = UABI_SW_ARENA_CQ_ERROR;
				break;
			case sw::Notice::SrqLimit:
				method = UABI_SW_ARENA_SRQ_LIMIT;
				attr = UABI_SW_ATTR_SRQ_SLOT;
				break;
			case sw::Notice::QpError:
				method = UABI_SW_ARENA_QP_ERROR;
				attr = UABI_SW_ATTR_QPN;
				break;
			}
			Command c(UABI_SW_OBJ_ARENA, method);
			c.add_in(attr, n);
			auto r = raw->ctl.raw().call(std::move(c));
			return r ? 0 : r.error();
		} catch (...) {
			return ENOMEM;
		}
	});
	int err = errno;
	close_fds();
	if (!impl->dp)
		return fail_ptr<ContextImpl>(err);
	return impl.release();
}

} // namespace

// ------------------------------------------------------------ device list
UABI_EXPORT const char *ibv_get_sysfs_path(void);

UABI_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	static std::once_flag once;
	std::call_once(once, [] {
		// The device's sysfs directories (under `uabi run` they exist,
		// docs/fsview.md): where ibv_devinfo reads board_id.
		const char *sys = ibv_get_sysfs_path();
		std::vector<std::string> names{kDeviceName};
		if (auto b = backend_from_env()) {
			if (auto n = device_names(*b); n && !n->empty())
				names = *n;
		}
		for (const std::string &name : names) {
			if (g_num_devices == kMaxDevices)
				break;
			struct ibv_device &d = g_devices[g_num_devices];
			init_device(d, name.c_str(), g_num_devices);
			std::string verbs = std::string(sys) + "/class/infiniband_verbs/uverbs" +
					    std::to_string(g_num_devices);
			std::string ib = std::string(sys) + "/class/infiniband/" + name;
			std::snprintf(d.dev_path, sizeof(d.dev_path), "%s", verbs.c_str());
			std::snprintf(d.ibdev_path, sizeof(d.ibdev_path), "%s", ib.c_str());
			g_num_devices++;
		}
	});
	auto **list = static_cast<struct ibv_device **>(
		std::calloc(std::size_t(g_num_devices) + 1, sizeof(struct ibv_device *)));
	if (!list) {
		errno = ENOMEM;
		return nullptr;
	}
	for (int i = 0; i < g_num_devices; i++)
		list[i] = &g_devices[i];
	if (num_devices)
		*num_devices = g_num_devices;
	return list;
}

UABI_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	std::free(list);
}

UABI_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device ? device->name : nullptr;
}

UABI_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return device_index(device);
}

UABI_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	// uabi_sw0's is fixed; a RoCE device's comes from its interface
	// (libibverbs reads sysfs' node_guid: the device's answer).
	int index = device_index(device);
	if (index <= 0)
		return htobe64(UABI_SW_NODE_GUID);
	std::uint64_t guid = UABI_SW_NODE_GUID;
	(void)guard_int([&] {
		if (auto c = Context::open_device(unsigned(index)))
			if (auto a = c->query_device())
				guid = a->attr.node_guid;
		return 0;
	});
	return htobe64(guid);
}

#undef ibv_query_port
extern "C" int ibv_query_port(struct ibv_context *ctx, uint8_t port,
			      struct _compat_ibv_port_attr *attr);

namespace {

// The verbs context of @impl (taken over, also on failure).
struct ibv_context *make_context(ContextImpl *impl, struct ibv_device *device)
{
	auto *v = static_cast<VContext *>(std::calloc(1, sizeof(VContext)));
	if (!v) {
		delete impl;
		return fail_ptr<struct ibv_context>(ENOMEM);
	}
	{
		v->impl = impl;
		struct verbs_context *vc = &v->vctx;
		struct ibv_context *ctx = &vc->context;
		vc->sz = sizeof(*vc);
		ctx->device = device;
		// The backend's name for the context (the module's open file,
		// uabid's token, the in-process table's memfd): dup() it and
		// ibv_import_device() reaches this context, here or in a
		// process it is passed to.  The transport owns it.
		ctx->cmd_fd = impl->ctl.raw().context_fd();
		ctx->async_fd = impl->async_fd;
		ctx->num_comp_vectors = 1;
		pthread_mutex_init(&ctx->mutex, nullptr);
		ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
		vc->query_port = query_port_ex;
		vc->query_device_ex = query_device_ex;
		vc->query_rt_values = query_rt_values;
		install_ex_ops(vc);
		install_data_ops(ctx);
		// Programs built against OFED 1.x's <verbs.h> query ports
		// through this slot of the table (an inline function there).
		ctx->ops._compat_query_port = ibv_query_port;
		return ctx;
	}
}

} // namespace

UABI_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	return guard_ptr([&]() -> struct ibv_context * {
		int index = device_index(device);
		if (index < 0)
			return fail_ptr<struct ibv_context>(ENODEV);
		ContextImpl *impl = open_impl(-1, unsigned(index));
		if (!impl)
			return nullptr;
		impl->roce = context_is_roce(impl, &impl->ifindex);
		struct ibv_context *c = make_context(impl, device);
		if (c && impl->inproc && impl->roce)
			wire_cm_open(c);
		return c;
	});
}

UABI_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	VContext *v = vctx_of(ctx);
	// Closing the backend context destroys what the application left.
	delete v->impl;
	pthread_mutex_destroy(&ctx->mutex);
	std::free(v);
	return 0;
}

// ibv_import_device(3): another verbs context on the context @cmd_fd names
// (a dup of some context's cmd_fd, here or from another process), with
// its objects; @cmd_fd is the new context's on success (closed by
// ibv_close_device()).  EINVAL for an fd that is not open or names no
// context, as rdma-core (ENODEV for a character device other than ours);
// see docs/daemon.md, "Imported contexts", for each backend.
UABI_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	return guard_ptr([&]() -> struct ibv_context * {
		if (cmd_fd < 0)
			return fail_ptr<struct ibv_context>(EINVAL);
		ContextImpl *impl = open_impl(cmd_fd);
		if (!impl)
			return nullptr;
		// The device the context is on, by the name it answers (a
		// RoCE device's context imports as that device, its QPs on
		// the wire).
		ibv_free_device_list(ibv_get_device_list(nullptr));
		struct ibv_device *dev = &g_devices[0];
		if (auto d = impl->ctl.raw().query_device())
			for (int i = 0; i < g_num_devices; i++)
				if (d->name == g_devices[i].name)
					dev = &g_devices[i];
		impl->roce = context_is_roce(impl, &impl->ifindex);
		return make_context(impl, dev);
	});
}

// ----------------------------------------------------------------- queries
UABI_EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	return guard_int([&] {
		auto r = impl_of(ctx)->ctl.query_device();
		if (!r)
			return r.error();
		convert::to_ibv(r->attr, attr);
		return 0;
	});
}

// The exported symbol takes the old, shorter struct; the inline
// ibv_query_port() of <verbs.h> calls verbs_context.query_port instead.
#undef ibv_query_port
UABI_EXPORT int ibv_query_port(struct ibv_context *ctx, uint8_t port,
			       struct _compat_ibv_port_attr *attr)
{
	// rdma-core's _compat_ibv_port_attr ends with link_layer.
	return query_port_ex(ctx, port, reinterpret_cast<struct ibv_port_attr *>(attr),
			     offsetof(struct ibv_port_attr, flags));
}

UABI_EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	int ret = guard_int([&] {
		auto r = impl_of(ctx)->ctl.raw().query_gid(port, std::uint32_t(index));
		if (!r)
			return r.error();
		std::memcpy(gid->raw, r->data(), 16);
		return 0;
	});
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

UABI_EXPORT int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
	int ret = guard_int([&] {
		auto r = impl_of(ctx)->ctl.raw().query_pkey(port, std::uint32_t(index));
		if (!r)
			return r.error();
		*pkey = htobe16(*r);
		return 0;
	});
	if (ret) {
		errno = ret;
		return -1;
	}
	return 0;
}

UABI_EXPORT int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
	__be16 p;
	if (ibv_query_pkey(ctx, port, 0, &p) == 0 && p == pkey)
		return 0;
	return -1;
}

// Private to rdma-core (driver.h): the type is enum ibv_gid_type_sysfs,
// whose value 0 is "IB/RoCE v1".
// RoCE devices (docs/wire.md) have RoCE v2 GIDs only: 1.
UABI_EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t, unsigned int, int *type)
{
	*type = impl_of(ctx)->roce ? 1 : 0;
	return 0;
}

UABI_EXPORT int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
				  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	if (flags || entry_size < sizeof(*entry))
		return EINVAL;
	union ibv_gid gid;
	if (ibv_query_gid(ctx, uint8_t(port), int(index), &gid))
		return errno == EINVAL ? ENODATA : errno;
	const bool roce = impl_of(ctx)->roce;
	static const union ibv_gid zero{};
	if (roce && !std::memcmp(&gid, &zero, sizeof(gid)))
		return ENODATA;	// an empty entry of the table
	std::memset(entry, 0, entry_size);
	entry->gid = gid;
	entry->gid_index = index;
	entry->port_num = port;
	entry->gid_type = roce ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_IB;
	if (roce)
		entry->ndev_ifindex = impl_of(ctx)->ifindex;
	return 0;
}

UABI_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries,
					 size_t max_entries, uint32_t flags, size_t entry_size)
{
	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	if (max_entries < 1)
		return -EINVAL;
	// Every valid entry of port 1's table.
	ssize_t n = 0;
	int len = impl_of(ctx)->roce ? 16 : 1;
	for (int i = 0; i < len && std::size_t(n) < max_entries; i++) {
		auto *e = reinterpret_cast<struct ibv_gid_entry *>(reinterpret_cast<char *>(entries) +
								    std::size_t(n) * entry_size);
		int ret = _ibv_query_gid_ex(ctx, 1, std::uint32_t(i), e, 0, entry_size);
		if (ret == ENODATA)
			continue;
		if (ret)
			return -ret;
		n++;
	}
	return n;
}

// ------------------------------------------------------------- events
UABI_EXPORT int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	ContextImpl *impl = impl_of(ctx);
	for (;;) {
		int ret = guard_int([&] {
			auto r = impl->ctl.get_async_event();
			if (!r)
				return r.error();
			const uabi_event &e = *r;
			// As raw bytes: OFED's flagged types are outside the
			// enum's range, which C++ does not allow as a value.
			static_assert(sizeof(event->event_type) == sizeof(e.event_type));
			std::memcpy(&event->event_type, &e.event_type, sizeof(e.event_type));
			if (e.event_type & UABI_OFED_XRC_QP_EVENT_FLAG) {
				// OFED's XRC receive QP event: element.xrc_qp_num.
				std::uint32_t qpn = std::uint32_t(e.element);
				std::memset(&event->element, 0, sizeof(event->element));
				std::memcpy(&event->element, &qpn, sizeof(qpn));
				return 0;
			}
			switch (e.event_type) {
			case IBV_EVENT_CQ_ERR:
				event->element.cq = reinterpret_cast<struct ibv_cq *>(e.element);
				break;
			case IBV_EVENT_SRQ_ERR:
			case IBV_EVENT_SRQ_LIMIT_REACHED:
				event->element.srq = reinterpret_cast<struct ibv_srq *>(e.element);
				break;
			case IBV_EVENT_PORT_ACTIVE:
			case IBV_EVENT_PORT_ERR:
			case IBV_EVENT_LID_CHANGE:
			case IBV_EVENT_PKEY_CHANGE:
			case IBV_EVENT_SM_CHANGE:
			case IBV_EVENT_CLIENT_REREGISTER:
			case IBV_EVENT_GID_CHANGE:
			case IBV_EVENT_DEVICE_FATAL:
				event->element.port_num = int(e.element);
				break;
			default:
				event->element.qp = reinterpret_cast<struct ibv_qp *>(e.element);
				break;
			}
			return 0;
		});
		if (!ret)
			return 0;
		// A non-blocking fd answers EAGAIN, as read(2) on it did.
		if (ret != EAGAIN || fd_nonblocking(impl->async_fd)) {
			errno = ret;
			return -1;
		}
		ret = wait_readable(impl, impl->async_fd);
		if (ret) {
			errno = ret;
			return -1;
		}
	}
}

UABI_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	// Nothing waits for acknowledgements here; keep the counters honest.
	std::uint32_t type;
	std::memcpy(&type, &event->event_type, sizeof(type));	// may carry OFED's flag
	switch (type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;
		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_signal(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	default:
		break;
	}
}

// ------------------------------------------------------------- strings
UABI_EXPORT const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {"InfiniBand channel adapter", "InfiniBand switch",
					"InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP",
					"unspecified"};
	if (t == IBV_NODE_UNKNOWN)
		return "unknown";
	if (t < IBV_NODE_CA || int(t) > int(sizeof(s) / sizeof(s[0])))
		return "unknown";
	return s[t - 1];
}

UABI_EXPORT const char *ibv_port_state_str(enum ibv_port_state s)
{
	// libibverbs' words since 1.1 (ibv_devinfo prints its own PORT_* names).
	static const char *const n[] = {"no state change (NOP)", "down", "init", "armed",
					"active", "active defer"};
	if (unsigned(s) < sizeof(n) / sizeof(n[0]))
		return n[s];
	return "unknown";
}

UABI_EXPORT const char *ibv_event_type_str(enum ibv_event_type e)
{
	static const char *const n[] = {
		"CQ error", "local work queue catastrophic error", "invalid request local work queue error",
		"local access violation work queue error", "communication established",
		"send queue drained", "path migrated", "path migration request error",
		"local catastrophic error", "port active", "port error", "LID change",
		"P_Key change", "SM change", "SRQ catastrophic error", "SRQ limit reached",
		"last WQE reached", "client reregistration", "GID table change", "WQ fatal"};
	// Raw, and without OFED's XRC flag (out of the enum's range).
	std::uint32_t v;
	std::memcpy(&v, &e, sizeof(v));
	v &= ~UABI_OFED_XRC_QP_EVENT_FLAG;
	if (v < sizeof(n) / sizeof(n[0]))
		return n[v];
	return "unknown";
}

UABI_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status s)
{
	static const char *const n[] = {
		"success", "local length error", "local QP operation error",
		"local EE context operation error", "local protection error", "Work Request Flushed Error",
		"memory management operation error", "bad response error", "local access error",
		"remote invalid request error", "remote access error", "remote operation error",
		"transport retry counter exceeded", "RNR retry counter exceeded",
		"local RDD violation error", "remote invalid RD request", "aborted error",
		"invalid EE context number", "invalid EE context state", "fatal error",
		"response timeout error", "general error", "TM error", "TM software rendezvous"};
	if (unsigned(s) < sizeof(n) / sizeof(n[0]))
		return n[s];
	return "unknown";
}

// --------------------------------------------------------------- rates
namespace {
struct RateRow {
	enum ibv_rate rate;
	int mult;
	int mbps;
};
// rdma-core 44 gives the FDR and EDR rates (14 ... 300 Gb/s) no multiple
// of 2.5 Gb/s (mult -1), so a multiple such as 5 or 10 is no rate
// (IBV_RATE_MAX), as it was in OFED.
const RateRow kRates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500},	  {IBV_RATE_5_GBPS, 2, 5000},
	{IBV_RATE_10_GBPS, 4, 10000},	  {IBV_RATE_20_GBPS, 8, 20000},
	{IBV_RATE_30_GBPS, 12, 30000},	  {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000},	  {IBV_RATE_80_GBPS, 32, 80000},
	{IBV_RATE_120_GBPS, 48, 120000},  {IBV_RATE_14_GBPS, -1, 14062},
	{IBV_RATE_56_GBPS, -1, 56250},	  {IBV_RATE_112_GBPS, -1, 112500},
	{IBV_RATE_168_GBPS, -1, 168750},  {IBV_RATE_25_GBPS, -1, 25781},
	{IBV_RATE_100_GBPS, -1, 103125},  {IBV_RATE_200_GBPS, -1, 206250},
	{IBV_RATE_300_GBPS, -1, 309375},  {IBV_RATE_28_GBPS, 11, 28125},
	{IBV_RATE_50_GBPS, 20, 53125},	  {IBV_RATE_400_GBPS, 160, 425000},
	{IBV_RATE_600_GBPS, 240, 637500}, {IBV_RATE_800_GBPS, 320, 850000},
	{IBV_RATE_1200_GBPS, 480, 1275000},
};
} // namespace

UABI_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (const auto &r : kRates)
		if (r.rate == rate)
			return r.mult;
	return -1;
}

UABI_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (const auto &r : kRates)
		if (r.mult == mult && mult > 0)
			return r.rate;
	return IBV_RATE_MAX;
}

UABI_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (const auto &r : kRates)
		if (r.rate == rate)
			return r.mbps;
	return -1;
}

UABI_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (const auto &r : kRates)
		if (r.mbps == mbps)
			return r.rate;
	return IBV_RATE_MAX;
}

// ---------------------------------------------------------------- sysfs
// Paths are read for real.  Under `uabi run` the software device's sysfs
// directory exists, made from its answers (docs/fsview.md); without it,
// reads of its paths fail as for an absent attribute.

// Where sysfs is mounted, for librdmacm and providers that read it
// themselves: $SYSFS_PATH (trailing slashes dropped) unless the process
// runs set-uid, else /sys.  (Takes no arguments: libibverbs exports it as
// `const char *ibv_get_sysfs_path(void)`.)
UABI_EXPORT const char *ibv_get_sysfs_path(void)
{
	static const std::string path = [] {
		const char *env = getuid() == geteuid() ? std::getenv("SYSFS_PATH") : nullptr;
		std::string p = env && *env ? env : "/sys";
		while (p.size() > 1 && p.back() == '/')
			p.pop_back();
		return p;
	}();
	return path.c_str();
}

UABI_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[512];
	std::snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = ::open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = ::read(fd, buf, size);
	::close(fd);
	if (n <= 0)
		return -1;
	if (std::size_t(n) == size)
		n--;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return int(n);
}

UABI_EXPORT int ibv_read_ibdev_sysfs_file(char *, size_t, const char *, const char *, ...)
{
	errno = ENOENT;
	return -1;
}

// ----------------------------------------------------------------- fork
UABI_EXPORT int ibv_fork_init(void)
{
	return 0;
}

UABI_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	// Memory is never pinned: fork() is always safe.
	return IBV_FORK_UNNEEDED;
}

UABI_EXPORT int ibv_dontfork_range(void *, size_t)
{
	return 0;
}

UABI_EXPORT int ibv_dofork_range(void *, size_t)
{
	return 0;
}
