// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// QPs of a RoCE device (docs/wire.md): the wire provider.  The verbs layer
// holds it as it holds the shared-memory one (sw::QpProvider); it posts to
// the RoCEv2 engine of providers/wire, which finds keys in the device
// arena's MR table (this process's own MRs only) and writes completions
// into the arena's CQ rings, so polling, events and CQ sharing with other
// QPs work as on uabi_sw0.
#include "verbs_impl.hpp"

#include <uabi/host_user.h>
#include <uabi/transport_daemon.hpp>
#include <uabi/wire/engine.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

namespace uabi::verbs {

// One UDP endpoint per context, opened with the context's first QP: bound
// to the device's first address at port 4791 (UABI_WIRE_PORT: another
// port, for tests); or, when a process of the host owns that port (uabid,
// docs/wire.md "Devices on uabid"), sending from a port of its own and
// receiving what uabid relays for this context's QPs.
struct WireEndpoint {
	std::unique_ptr<wire::Endpoint> ep;
	unsigned ifindex = 0;
	std::uint16_t port = wire::kRoceV2Port;
	Transport *relayed = nullptr; // whose wire_bind() routes our QPs
};

static_assert(sizeof(wire::RelayHdr) == sizeof(daemon::RelayHdr));
static_assert(offsetof(wire::RelayHdr, src_port) == offsetof(daemon::RelayHdr, src_port));
static_assert(offsetof(wire::RelayHdr, dst_port) == offsetof(daemon::RelayHdr, dst_port));
static_assert(offsetof(wire::RelayHdr, src) == offsetof(daemon::RelayHdr, src));
static_assert(offsetof(wire::RelayHdr, dst) == offsetof(daemon::RelayHdr, dst));

namespace {

bool v4_mapped(const std::uint8_t *g)
{
	static const std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return !std::memcmp(g, prefix, sizeof(prefix));
}

std::uint16_t wire_port()
{
	const char *p = std::getenv("UABI_WIRE_PORT");
	long v = p && *p ? std::strtol(p, nullptr, 10) : 0;
	return v > 0 && v < 65536 ? std::uint16_t(v) : wire::kRoceV2Port;
}

// Where a GID is: its address at the RoCEv2 port.
wire::PeerAddr addr_of(const std::uint8_t *gid, std::uint16_t port, unsigned scope)
{
	return wire::PeerAddr::from_gid(gid, port, scope);
}

// The interface that holds @gid's address (0: none).
unsigned ifindex_of(const std::uint8_t *gid)
{
	struct ifaddrs *ifa;
	unsigned idx = 0;
	if (getifaddrs(&ifa))
		return 0;
	for (struct ifaddrs *a = ifa; a && !idx; a = a->ifa_next) {
		if (!a->ifa_addr)
			continue;
		if (a->ifa_addr->sa_family == AF_INET && v4_mapped(gid) &&
		    !std::memcmp(&reinterpret_cast<sockaddr_in *>(a->ifa_addr)->sin_addr, gid + 12, 4))
			idx = if_nametoindex(a->ifa_name);
		else if (a->ifa_addr->sa_family == AF_INET6 &&
			 !std::memcmp(&reinterpret_cast<sockaddr_in6 *>(a->ifa_addr)->sin6_addr, gid, 16))
			idx = if_nametoindex(a->ifa_name);
	}
	freeifaddrs(ifa);
	return idx;
}

// Our pid namespace: the inode of /proc/self/ns/pid (0: unknown).
std::uint64_t pid_ns();

// Keys of this process's MRs in the arena's MR table.  "This process" is
// the pid the core knows us by, which is not getpid() when we live in a
// pid namespace of our own and the core does not (uabid): the owner the
// core wrote into our own QP's descriptor.
class ArenaMemory final : public wire::Memory {
public:
	ArenaMemory(sw::Device &dev, std::uint32_t qpn) : dev_(dev)
	{
		const uabi_sw_qp *d = dev.qp_desc(qpn);
		pid_ = d && d->pid ? d->pid : ::getpid();
	}
	// An XRC receive QP has no owner in its descriptor: the keys it
	// takes are those of the owner of the SRQ the request at hand names
	// (@pid, as the core knows it), this process or another one of its
	// domain (@there: its pid here), whose memory is reached with
	// process_vm_writev/readv (docs/wire.md, "XRC").
	void set_owner(std::int32_t pid, std::int32_t there = 0)
	{
		pid_ = pid;
		here_ = !there;
		there_ = there;
	}
	std::int32_t owner() const { return pid_; }
	bool lookup(std::uint32_t key, wire::Region &out) override
	{
		uabi_sw_mr mr;
		if (!dev_.mr_lookup(key, mr) || mr.pid != pid_ ||
		    (mr.type != UABI_SW_KEY_MR && mr.type != UABI_SW_KEY_MW1 && mr.type != UABI_SW_KEY_MW2))
			return false;
		out.iova = mr.iova;
		out.length = mr.length;
		out.base = here_ ? reinterpret_cast<std::uint8_t *>(std::uintptr_t(mr.addr)) : nullptr;
		out.owner = here_ ? 0 : there_;
		out.addr = mr.addr;
		out.access = mr.access;
		out.pd = mr.pd;
		// A bound window (its owner is the MR's): the engine allows it
		// remote access only, a type 2 one through its QP only.
		out.window = mr.type == UABI_SW_KEY_MW1 ? 1 : mr.type == UABI_SW_KEY_MW2 ? 2 : 0;
		out.qpn = mr.qpn;
		return true;
	}
	bool write(const wire::Region &r, std::uint64_t at, const std::uint8_t *src, std::size_t n) override
	{
		return !dev_.peer_write(r.owner, at, src, n);
	}
	bool read(const wire::Region &r, std::uint64_t at, std::uint8_t *dst, std::size_t n) override
	{
		return !dev_.peer_read(r.owner, at, dst, n);
	}
	bool atomic(const wire::Region &r, std::uint64_t at, bool cmp_swap, std::uint64_t compare,
		    std::uint64_t swap_add, std::uint64_t &orig) override
	{
		return !dev_.peer_atomic(r.owner, at, cmp_swap, compare, swap_add, orig);
	}

private:
	sw::Device &dev_;
	std::int32_t pid_;
	bool here_ = true;
	std::int32_t there_ = 0;
};

sw::Cqe to_cqe(const wire::Completion &c)
{
	sw::Cqe e{};
	e.wr_id = c.wr_id;
	e.status = c.status;
	e.opcode = c.opcode;
	e.byte_len = c.byte_len;
	e.imm_data = c.imm;
	e.qp_num = c.qpn;
	e.src_qp = c.src_qp;
	e.wc_flags = c.flags;
	return e;
}

class WireQp final : public sw::QpProvider {
public:
	WireQp(struct ibv_context *ctx, ContextImpl &impl, std::shared_ptr<WireEndpoint> ep, std::uint32_t qpn,
	       std::uint32_t type, sw::Cq *scq, sw::Cq *rcq, sw::Srq *srq, const sw::QpCaps &caps)
	    : ctx_(ctx), impl_(impl), ep_(std::move(ep)), mem_(*impl.dp, qpn), qpn_(qpn), type_(type),
	      sq_sig_all_(caps.sq_sig_all)
	{
		sw::Device &dev = *impl.dp;
		auto sink = [&dev](sw::Cq *cq) -> wire::CqSink {
			if (!cq)
				return {};
			std::uint32_t cqn = cq->cqn();
			return [&dev, cqn](const wire::Completion &c) {
				sw::Cqe e = to_cqe(c);
				// A full CQ loses the completion (the CQ raises
				// IBV_EVENT_CQ_ERR) and the QP goes to ERR with
				// IBV_EVENT_QP_FATAL, as on uabi_sw0.
				bool overran = false;
				if (!dev.push_cqe(cqn, e, &overran) && overran)
					dev.qp_failed(c.qpn, 1 /* IBV_EVENT_QP_FATAL */);
			};
		};
		// OFED's XRC QP (an XRC send QP made in a domain) is both ends of
		// XRC: it also receives into its domain's SRQs, as on uabi_sw0.
		uabi_sw_qp d{};
		const bool xrc_target = type == IBV_QPT_XRC_RECV ||
					(type == IBV_QPT_XRC_SEND && dev.qp_lookup(qpn, d) && d.xrcd);
		qp_ = ep_->ep->create_qp(qpn, type, mem_, sink(scq), xrc_target ? xrc_sink(dev) : sink(rcq),
					 std::max<std::uint32_t>(caps.max_send_wr, 1), 16384);
		if (qp_) {
			qp_->set_sq_sig_all(caps.sq_sig_all);
			qp_->set_block_self_mcast(caps.block_self_mcast);
			// The arena and the core learn that the QP failed, and its
			// owner gets the affiliated event, as on uabi_sw0.
			qp_->set_error_hook([&dev, qpn](std::uint32_t event) { dev.qp_failed(qpn, event); });
			// A SEND with invalidate that arrived: the core invalidates
			// the type 2 window if it is bound to this QP.
			qp_->set_invalidate([this](std::uint32_t rkey) {
				sw::MwRequest r;
				r.kind = sw::MwRequest::RemoteInv;
				r.qpn = qpn_;
				r.rkey = rkey;
				return mw_control_ && mw_control_(r) == 0;
			});
		}
		if (qp_ && xrc_target)
			set_xrc_source(impl, dev, qpn);
		if (qp_ && type == IBV_QPT_XRC_RECV)
			set_share(impl, qpn);
		// RC and UC also have the shared-memory provider, for a peer on
		// this host (docs/wire.md, "Peers on this host"); their receive
		// queue is then the arena's ring, which both fill from.
		if (qp_)
			set_on_wire(true);
		if (qp_ && (type == IBV_QPT_RC || type == IBV_QPT_UC) && !impl.inproc) {
			shm_ = std::make_unique<sw::Qp>(dev, qpn, type, scq, rcq, srq, caps);
			if (!shm_->ok())
				shm_.reset();
		}
		if (qp_ && shm_ && !srq)
			qp_->set_recv_source(
				[q = shm_.get()](std::uint64_t &wr_id, std::vector<wire::Sge> &out) {
					std::vector<sw::Sge> v;
					int got = q->take_recv(wr_id, v);
					out.clear();
					for (const sw::Sge &g : v)
						out.push_back({g.addr, g.length, g.lkey});
					return got;
				},
				true);
		// On an SRQ: its WQEs, taken from the arena's ring as the
		// shared-memory responder takes them (the SRQ outlives its QPs).
		if (qp_ && srq)
			qp_->set_recv_source([srq](std::uint64_t &wr_id, std::vector<wire::Sge> &out) {
				std::vector<sw::Sge> v;
				int got = srq->take(wr_id, v);
				out.clear();
				for (const sw::Sge &g : v)
					out.push_back({g.addr, g.length, g.lkey});
				return got;
			});
		// Relayed: uabid hands this QP's datagrams to us from now on.
		if (qp_ && ep_->relayed) {
			if (int e = ep_->relayed->wire_bind(qpn_, true)) {
				qp_.reset();
				errno = e;
			} else {
				bound_ = true;
			}
		}
	}

	// An XRC receive QP's completions go to the CQ of the SRQ whose WQE
	// they consumed.
	static wire::CqSink xrc_sink(sw::Device &dev)
	{
		return [&dev](const wire::Completion &c) {
			uabi_sw_srq s;
			if (!dev.srq_lookup(c.srqn, s) || !s.cqn)
				return;
			dev.push_cqe(s.cqn, to_cqe(c));
		};
	}

	// The SRQs an XRCETH may name: XRC SRQs of this QP's domain, this
	// context's own or another process's of this user (the arena is the
	// user's), whose buffers are then reached with process_vm_writev.
	// Another process's only while the core knows us by our own pid
	// (not from a pid namespace of our own), where its pid is that
	// process.
	void set_xrc_source(ContextImpl &impl, sw::Device &dev, std::uint32_t qpn)
	{
		uabi_sw_qp d{};
		const std::uint32_t xrcd = dev.qp_lookup(qpn, d) ? d.xrcd : 0;
		ArenaMemory *mem = &mem_;
		qp_->set_xrc_source([&impl, &dev, xrcd, mem](std::uint32_t srqn, bool take, std::uint32_t &pd,
							     std::uint64_t &wr_id, std::vector<wire::Sge> &out) {
			uabi_sw_srq s;
			if (!xrcd || !dev.srq_lookup(srqn, s) || s.type != UABI_SRQT_XRC || s.xrcd != xrcd)
				return -1;
			bool here;
			{
				std::lock_guard<std::mutex> g(impl.srq_lock);
				here = impl.own_srqs.count(srqn) != 0;
			}
			std::int32_t there = 0;
			if (!here && !(there = owner_here(dev, srqn)))
				return -1;
			pd = s.pd;
			mem->set_owner(s.pid, there);
			if (!take)
				return 1;
			sw::Srq srq(dev, srqn);
			std::vector<sw::Sge> v;
			int got = srq.take(wr_id, v);
			out.clear();
			for (const sw::Sge &g : v)
				out.push_back({g.addr, g.length, g.lkey});
			return got;
		});
	}

	// The pid, here, of SRQ @slot's owner, another process in our pid
	// namespace (as it published, publish_srq_owner()); 0: none such.
	static std::int32_t owner_here(sw::Device &dev, std::uint32_t slot)
	{
		const uabi_sw_srq_rw *w = dev.srq_rw(slot);
		if (!w)
			return 0;
		const std::int32_t pid = __atomic_load_n(&w->owner_pid, __ATOMIC_ACQUIRE);
		const std::uint64_t ns = __atomic_load_n(&w->owner_pidns, __ATOMIC_RELAXED);
		return pid > 0 && pid != ::getpid() && ns && ns == pid_ns() ? pid : 0;
	}

	// An XRC receive QP is served by one process of its domain at a time
	// (uabid or the module hands its packets to the first context that
	// bound it and still holds it; docs/wire.md, "XRC").  Its attributes
	// come from the arena's descriptor, which every modify updates
	// whoever makes it, and its expected PSN and MSN from the words the
	// server keeps there, taken over when the server changes.
	void set_share(ContextImpl &impl, std::uint32_t qpn)
	{
		static std::atomic<std::uint32_t> serial{0};
		token_ = (++serial * 2654435761u) ^ std::uint32_t(wire::now_ns()) ^ 1u;
		wire::Qp::Share sh;
		sh.adopt = [this, &impl, qpn](wire::QpAttr &a, std::uint32_t &epsn, std::uint32_t &msn) {
			uabi_sw_qp d{};
			uabi_sw_qp_rw *w = impl.dp->qp_rw(qpn);
			if (!w || !impl.dp->qp_lookup(qpn, d) || (d.qpn & 0xffffff) != qpn)
				return 0;
			int got = 0;
			if (d.seq != seen_seq_) {
				seen_seq_ = d.seq;
				a.state = d.state;
				a.access = d.access;
				a.dest = addr_of(d.dgid, ep_->port, ep_->ifindex);
				a.dest.tclass = d.traffic_class;
				a.src = d.is_global ? source_of(d.sgid_index) : wire::PeerAddr{};
				a.dest_qpn = d.dest_qpn;
				a.rq_psn = d.rq_psn;
				a.path_mtu = d.path_mtu ? d.path_mtu : a.path_mtu;
				a.timeout = d.timeout;
				a.retry_cnt = d.retry_cnt;
				a.rnr_retry = d.rnr_retry;
				a.min_rnr_timer = d.min_rnr_timer;
				attr_ = a;
				got |= 1;
			}
			const std::int32_t me = ::getpid();
			if (__atomic_load_n(&w->wire_server, __ATOMIC_ACQUIRE) != me ||
			    __atomic_load_n(&w->wire_token, __ATOMIC_ACQUIRE) != token_) {
				epsn = __atomic_load_n(&w->wire_epsn, __ATOMIC_ACQUIRE);
				msn = __atomic_load_n(&w->wire_msn, __ATOMIC_ACQUIRE);
				__atomic_store_n(&w->wire_token, token_, __ATOMIC_RELEASE);
				__atomic_store_n(&w->wire_server, me, __ATOMIC_RELEASE);
				got |= 2;
			}
			return got;
		};
		sh.save = [this, &impl, qpn](std::uint32_t epsn, std::uint32_t msn) {
			uabi_sw_qp_rw *w = impl.dp->qp_rw(qpn);
			if (!w || __atomic_load_n(&w->wire_token, __ATOMIC_RELAXED) != token_)
				return;
			__atomic_store_n(&w->wire_msn, msn, __ATOMIC_RELAXED);
			__atomic_store_n(&w->wire_epsn, epsn, __ATOMIC_RELEASE);
		};
		qp_->set_share(std::move(sh));
	}

	~WireQp() override
	{
		set_on_wire(false);
		if (bound_)
			(void)ep_->relayed->wire_bind(qpn_, false);
		// The engine's QP first: its receive thread may be taking from
		// shm_'s ring until it is gone.
		qp_.reset();
	}

	bool ok() const override { return qp_ != nullptr; }
	std::uint32_t state() const override
	{
		if (local_)
			return shm_->state();
		sync_error();
		return qp_->state();
	}

	int post_send(const sw::SendWr &wr) override
	{
		if (local_)
			return shm_->post_send(wr);
		sync_error();
		wire::SendWr w;
		w.wr_id = wr.wr_id;
		w.opcode = wr.opcode;
		if (wr.opcode > sw::kWrSendWithInv)
			return EINVAL;	// atomic write: not on the wire yet
		w.invalidate_rkey = wr.invalidate_rkey;
		if (wr.opcode == sw::kWrBindMw || wr.opcode == sw::kWrLocalInv) {
			// Executed by the core in the QP's order (the engine runs
			// it once everything before it has completed).
			sw::MwRequest r;
			r.qpn = qpn_;
			r.kind = wr.opcode == sw::kWrBindMw ? sw::MwRequest::Bind : sw::MwRequest::LocalInv;
			r.rkey = wr.opcode == sw::kWrBindMw ? wr.bind.rkey : wr.invalidate_rkey;
			const std::uint32_t fail = wr.opcode == sw::kWrBindMw ? wire::kWcMwBindErr : wire::kWcLocQpOpErr;
			w.local = [this, r, b = wr.bind, fail]() mutable -> std::uint32_t {
				r.bind = &b;
				return mw_control_ && mw_control_(r) == 0 ? wire::kWcOk : fail;
			};
		}
		w.xrc_srqn = wr.remote_srqn;
		w.flags = wr.send_flags;
		if (sq_sig_all_)
			w.flags |= wire::kSendFlagSignaled;
		w.imm = wr.imm_data;
		w.remote_addr = wr.remote_addr;
		w.rkey = wr.rkey;
		w.compare_add = wr.compare_add;
		w.swap = wr.swap;
		if ((wr.send_flags & sw::kSendInline) && wr.opcode != sw::kWrRdmaRead &&
		    wr.opcode != sw::kWrAtomicCmpAndSwp && wr.opcode != sw::kWrAtomicFetchAndAdd && !w.local) {
			w.is_inline = true;
			for (int i = 0; i < wr.num_sge; i++) {
				const auto *p = reinterpret_cast<const std::uint8_t *>(std::uintptr_t(wr.sg_list[i].addr));
				w.inline_data.insert(w.inline_data.end(), p, p + wr.sg_list[i].length);
			}
		} else {
			for (int i = 0; i < wr.num_sge; i++)
				w.sges.push_back({wr.sg_list[i].addr, wr.sg_list[i].length, wr.sg_list[i].lkey});
		}
		if (wr.ah) {
			w.ud_dest = addr_of(wr.ah->dgid, ep_->port, ep_->ifindex);
			w.ud_dest.tclass = wr.ah->traffic_class;
			if (wr.ah->is_global)
				w.ud_src = ud_source_of(wr.ah->sgid_index);
			w.ud_qpn = wr.remote_qpn;
			w.ud_qkey = wr.remote_qkey;
		}
		return qp_->post_send(w);
	}

	int post_recv(std::uint64_t wr_id, const sw::Sge *sg, int num_sge) override
	{
		if (shm_)
			return shm_->post_recv(wr_id, sg, num_sge);
		std::vector<wire::Sge> v;
		for (int i = 0; i < num_sge; i++)
			v.push_back({sg[i].addr, sg[i].length, sg[i].lkey});
		return qp_->post_recv(wr_id, v);
	}

	void modified(const sw::QpModify &m) override
	{
		// What the control half keeps (and checked): PD, access, Q_Key.
		if (const uabi_sw_qp *d = impl_.dp->qp_desc(qpn_)) {
			attr_.pd = d->pd;
			attr_.access = d->access;
			attr_.qkey = d->qkey;
		}
		attr_.state = m.state;
		if (shm_) {
			shm_->modified(m);
			if ((m.mask & IBV_QP_STATE) && m.state == IBV_QPS_RTR)
				local_ = !wire_forced() && peer_here(m);
			else if ((m.mask & IBV_QP_STATE) && m.state == IBV_QPS_RESET)
				local_ = false;
			set_on_wire(!local_);
		}
		if (m.mask & IBV_QP_AV) {
			attr_.dest = addr_of(m.dgid, ep_->port, ep_->ifindex);
			attr_.dest.tclass = m.traffic_class;
			attr_.src = m.is_global ? source_of(m.sgid_index) : wire::PeerAddr{};
		}
		if (m.mask & IBV_QP_DEST_QPN)
			attr_.dest_qpn = m.dest_qpn;
		if (m.mask & IBV_QP_RQ_PSN)
			attr_.rq_psn = m.rq_psn;
		if (m.mask & IBV_QP_SQ_PSN)
			attr_.sq_psn = m.sq_psn;
		if (m.mask & IBV_QP_PATH_MTU)
			attr_.path_mtu = m.path_mtu;
		// UD has no path: its messages may be as long as the port's MTU.
		if (type_ == IBV_QPT_UD) {
			ibv_port_attr pa{};
			if (!ibv_query_port(ctx_, 1, &pa))
				attr_.path_mtu = pa.active_mtu;
		}
		if (m.mask & IBV_QP_TIMEOUT)
			attr_.timeout = m.timeout;
		if (m.mask & IBV_QP_RETRY_CNT)
			attr_.retry_cnt = m.retry_cnt;
		if (m.mask & IBV_QP_RNR_RETRY)
			attr_.rnr_retry = m.rnr_retry;
		if (m.mask & IBV_QP_MIN_RNR_TIMER)
			attr_.min_rnr_timer = m.min_rnr_timer;
		if (m.mask & IBV_QP_MAX_QP_RD_ATOMIC)
			attr_.max_rd_atomic = m.max_rd_atomic;
		qp_->modify(attr_);
	}

	// UD multicast: the group's IP multicast membership (docs/wire.md).
	int attach_mcast(const std::uint8_t *gid, bool attach) override
	{
		if (attach)
			return ep_->ep->attach_mcast(gid, ep_->port, qpn_);
		(void)ep_->ep->detach_mcast(gid, qpn_);
		return 0;
	}

	void set_mw_control(sw::MwControl c) override
	{
		if (shm_)
			shm_->set_mw_control(c);
		mw_control_ = std::move(c);
	}

private:
	// The address of GID @index of the device, made a source of the
	// endpoint if it is not one yet (an address added after the
	// endpoint opened); len 0 if there is no such GID.
	wire::PeerAddr source_of(unsigned index)
	{
		union ibv_gid g;
		static const union ibv_gid zero{};
		if (index >= 16 || ibv_query_gid(ctx_, 1, int(index), &g) || !std::memcmp(&g, &zero, sizeof(g)))
			return {};
		wire::PeerAddr a = addr_of(g.raw, ep_->port, ifindex_of(g.raw));
		if (ep_->ep->add_source(a))
			return {};
		return a;
	}
	// The same for a UD send's address handle, remembered per index (a
	// query per post would cost a round trip to the core).
	const wire::PeerAddr &ud_source_of(unsigned index)
	{
		static const wire::PeerAddr none{};
		if (index >= 16)
			return none;
		std::lock_guard<std::mutex> g(ud_src_lock_);
		if (!(ud_src_known_ & (1u << index))) {
			ud_src_[index] = source_of(index);
			ud_src_known_ |= 1u << index;
		}
		return ud_src_[index];
	}
	std::mutex ud_src_lock_;
	std::uint32_t ud_src_known_ = 0;
	wire::PeerAddr ud_src_[16];

	// Counted in the context's wire_active while its packets may come
	// on the wire: not a peer by shared memory.  (A peer that decided
	// for the wire alone still reaches it: the receive thread watches
	// the socket whenever no poller does.)
	void set_on_wire(bool on)
	{
		if (on != on_wire_)
			impl_.wire_active.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
		on_wire_ = on;
	}

	// The arena says the QP failed (a CQ it completes to overran, under
	// the engine's lock): the engine follows, flushing what it holds.
	void sync_error() const
	{
		const uabi_sw_qp_rw *w = impl_.dp->qp_rw(qpn_);
		if (!w || !__atomic_load_n(&w->err, __ATOMIC_ACQUIRE) || qp_->state() == wire::kErr)
			return;
		wire::QpAttr a = attr_;
		a.state = wire::kErr;
		qp_->modify(a);
	}

	static bool wire_forced()
	{
		const char *e = std::getenv("UABI_WIRE_FORCE");
		return e && *e && std::strcmp(e, "0") != 0;
	}

	static bool same_ns(std::int32_t pid, const char *kind)
	{
		char path[64];
		std::snprintf(path, sizeof(path), "/proc/%d/ns/%s", int(pid), kind);
		struct stat a, b;
		std::string self = std::string("/proc/self/ns/") + kind;
		return !::stat(path, &a) && !::stat(self.c_str(), &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	}

	// Whether the peer this QP connects to is on this host, where shared
	// memory reaches it: its GID is one of this device's, its QP is one of
	// this user's on this device (so in the arena) of the same type, and
	// it lives in our pid and network namespaces, which are the core's.
	// Each side decides for its own sends only; the receive queue is the
	// arena's either way, so sides that decide differently still work.
	bool peer_here(const sw::QpModify &m)
	{
		if (!(m.mask & IBV_QP_AV) || !(m.mask & IBV_QP_DEST_QPN))
			return false;
		bool ours = false;
		union ibv_gid g;
		for (int i = 0; i < 16 && !ours; i++)
			ours = !ibv_query_gid(ctx_, 1, i, &g) && !std::memcmp(g.raw, m.dgid, 16);
		uabi_sw_qp d{};
		if (!ours || !impl_.dp->qp_lookup(m.dest_qpn, d) || (d.qpn & 0xffffff) != (m.dest_qpn & 0xffffff) ||
		    d.type != type_ || d.pid <= 0)
			return false;
		if (mem_.owner() != ::getpid())
			return false;	// we are in a pid namespace the core is not in
		return same_ns(d.pid, "pid") && same_ns(d.pid, "net");
	}

	struct ibv_context *ctx_;
	ContextImpl &impl_;
	std::shared_ptr<WireEndpoint> ep_;
	ArenaMemory mem_;
	std::uint32_t qpn_;
	std::uint32_t type_;
	bool sq_sig_all_;
	wire::QpAttr attr_;
	std::unique_ptr<wire::Qp> qp_;
	std::unique_ptr<sw::Qp> shm_;	// RC, UC: for a peer on this host
	bool local_ = false;		// sends go through shm_
	bool on_wire_ = false;		// counted in impl_.wire_active
	bool bound_ = false;
	// An XRC receive QP (set_share()): who this provider is among the
	// QP's servers, and the descriptor it last took attributes from.
	std::uint32_t token_ = 0;
	std::uint32_t seen_seq_ = ~0u;
	sw::MwControl mw_control_;	// windows: the core binds and invalidates
};

std::uint64_t pid_ns()
{
	// Looked up again in a forked child (whose namespace may differ).
	static std::atomic<pid_t> for_pid{0};
	static std::atomic<std::uint64_t> ino{0};
	if (for_pid.load(std::memory_order_acquire) != ::getpid()) {
		struct stat st;
		ino.store(::stat("/proc/self/ns/pid", &st) ? 0 : std::uint64_t(st.st_ino), std::memory_order_relaxed);
		for_pid.store(::getpid(), std::memory_order_release);
	}
	return ino.load(std::memory_order_relaxed);
}

} // namespace

void publish_srq_owner(sw::Device &dev, std::uint32_t slot)
{
	uabi_sw_srq_rw *w = dev.srq_rw(slot);
	if (!w || !pid_ns())
		return;
	__atomic_store_n(&w->owner_pidns, pid_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&w->owner_pid, std::int32_t(::getpid()), __ATOMIC_RELEASE);
}

namespace {

// The context's endpoint, opened on first use: ENODATA if the device has
// no address, the bind's errno (EADDRINUSE: another process of this host
// holds the device's port, docs/wire.md).
int endpoint_of(struct ibv_context *ctx, std::shared_ptr<WireEndpoint> &out)
{
	ContextImpl *impl = impl_of(ctx);
	std::lock_guard<std::mutex> g(impl->wire_lock);
	if (impl->wire) {
		out = impl->wire;
		return 0;
	}
	union ibv_gid gid;
	int found = -1;
	for (int i = 0; i < 16 && found < 0; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && v4_mapped(gid.raw))
			found = i;
	for (int i = 0; i < 16 && found < 0; i++) {
		static const union ibv_gid zero{};
		if (!ibv_query_gid(ctx, 1, i, &gid) && std::memcmp(&gid, &zero, sizeof(gid)))
			found = i;
	}
	if (found < 0)
		return ENODATA;
	auto w = std::make_shared<WireEndpoint>();
	w->port = wire_port();
	w->ifindex = ifindex_of(gid.raw);
	Transport &t = impl->ctl.raw().transport();
	std::uint16_t port = 0;
	int steered = -1;
	if (auto relay = t.wire_relay(&port, &steered)) {
		w->port = port;
		w->relayed = &t;
		w->ep = wire::Endpoint::open_relayed(addr_of(gid.raw, 0, w->ifindex), *relay, steered);
	} else if (relay.error() == EOPNOTSUPP) {
		// The port is one per address and process: the process's
		// contexts on the device share its endpoint (QP numbers are the
		// device's, so they never meet in it).
		static std::mutex own_lock;
		static auto *own = new std::map<std::string, std::weak_ptr<WireEndpoint>>;
		std::lock_guard<std::mutex> og(own_lock);
		auto &slot = (*own)[std::string(reinterpret_cast<const char *>(gid.raw), 16) + std::to_string(w->port)];
		if (auto have = slot.lock(); have && have->ep && have->ep->owner() == ::getpid()) {
			impl->wire = have;
			impl->wire_ep.store(have->ep.get(), std::memory_order_release);
			out = have;
			return 0;
		}
		w->ep = wire::Endpoint::open(addr_of(gid.raw, w->port, w->ifindex));
		if (w->ep)
			slot = w;
	} else {
		return relay.error();
	}
	if (!w->ep)
		return errno ? errno : EIO;
	// Every other address of the device is a source too: a QP sends
	// from its AV's source GID, and one that names none from the first
	// address of its peer's family (docs/wire.md, "Every address").
	// Relayed, what peers send back to them comes through the relay
	// (uabid or the module receives at each), and the sockets are made
	// now.  In-process the endpoint receives at each itself: a socket
	// is made when a QP names its address (WireQp::source_of()), so that
	// pollers read no socket nobody uses.  (Relayed too, an address
	// added to the device later is added so.)
	for (int i = 0; w->relayed && i < 16; i++) {
		union ibv_gid other;
		static const union ibv_gid zero{};
		if (i != found && !ibv_query_gid(ctx, 1, i, &other) && std::memcmp(&other, &zero, sizeof(other)))
			(void)w->ep->add_source(addr_of(other.raw, w->port, ifindex_of(other.raw)));
	}
	impl->wire = w;
	impl->wire_ep.store(w->ep.get(), std::memory_order_release);
	out = w;
	return 0;
}

int cm_port_send(void *arg, const unsigned char *sgid, const unsigned char *dgid,
		 unsigned char tclass, const void *mad, unsigned len);

} // namespace

// The in-process host's CM across hosts (docs/cm.md, "Across hosts"): the
// context's endpoint hands what comes for QP1 to the core's CM, and sends
// the CM's MADs from its socket at their source address.  Goes before
// the context's transport (~ContextImpl()).
struct WireCm {
	WireCm(Transport &t, std::shared_ptr<WireEndpoint> w) : t(t), w(std::move(w)) {}
	~WireCm()
	{
		// In this order: a send holds the host's lock, the sink the
		// endpoint's, and the CM takes the host's inside the sink.
		if (!attached)
			return;
		t.cm_detach(&port);
		w->ep->set_gsi_sink(nullptr);
	}
	Transport &t;
	std::shared_ptr<WireEndpoint> w;
	uabi_user_cm_port port{};
	bool attached = false;
};

ContextImpl::~ContextImpl()
{
	delete cm;
}

namespace {

int cm_port_send(void *arg, const unsigned char *sgid, const unsigned char *dgid,
		 unsigned char tclass, const void *mad, unsigned len)
{
	auto *c = static_cast<WireCm *>(arg);
	const unsigned scope = c->w->ifindex;
	wire::PeerAddr to = addr_of(dgid, c->w->port, scope);
	to.tclass = tclass;
	return -c->w->ep->send_gsi(addr_of(sgid, c->w->port, scope), to,
				   {static_cast<const std::uint8_t *>(mad), len});
}

} // namespace

void wire_cm_open(struct ibv_context *ctx)
{
	ContextImpl *impl = impl_of(ctx);
	Transport &t = impl->ctl.raw().transport();
	std::shared_ptr<WireEndpoint> w;
	// No endpoint (no address; the port is another process's): none
	// now; the context's first QP says why.
	if (endpoint_of(ctx, w) || w->relayed)
		return;
	// The CM answers at every address of the device: a socket at each,
	// read by the receive thread (pollers read those a QP names).
	for (int i = 0; i < 16; i++) {
		union ibv_gid g;
		static const union ibv_gid zero{};
		if (!ibv_query_gid(ctx, 1, i, &g) && std::memcmp(&g, &zero, sizeof(g)))
			(void)w->ep->add_source(addr_of(g.raw, w->port, ifindex_of(g.raw)), false);
	}
	auto c = std::make_unique<WireCm>(t, w);
	c->port.arg = c.get();
	c->port.send = cm_port_send;
	if (t.cm_attach(&c->port))
		return; // another context of the process carries them
	c->attached = true;
	w->ep->set_gsi_sink([tp = &t](const std::uint8_t *sgid, const std::uint8_t *dgid,
				      std::span<const std::uint8_t> mad) {
		tp->cm_input(sgid, dgid, mad.data(), unsigned(mad.size()));
	});
	impl->cm = c.release();
}

// UABI_WIRE_POLLER=0: pollers leave receiving to the receive thread
// (for comparison; docs/wire.md).
static const bool kPollerReceives = [] {
	const char *e = std::getenv("UABI_WIRE_POLLER");
	return !e || std::strcmp(e, "0") != 0;
}();

bool wire_progress(ContextImpl *impl)
{
	if (!kPollerReceives)
		return false;
	wire::Endpoint *ep = impl->wire_ep.load(std::memory_order_acquire);
	return ep && ep->progress();
}

void wire_consumer_sleeps(ContextImpl *impl)
{
	if (wire::Endpoint *ep = impl->wire_ep.load(std::memory_order_acquire))
		ep->consumer_sleeps();
}

namespace {

// One hold of an XRC receive QP by this context (created, opened or
// registered, in any number and by either API): the context serves the QP
// through one wire QP however many holds it has, which goes with the last.
class XrcHold final : public sw::QpProvider {
public:
	explicit XrcHold(std::shared_ptr<sw::QpProvider> qp) : qp_(std::move(qp)) {}
	bool ok() const override { return qp_->ok(); }
	std::uint32_t state() const override { return qp_->state(); }
	int post_send(const sw::SendWr &wr) override { return qp_->post_send(wr); }
	int post_recv(std::uint64_t wr_id, const sw::Sge *sg, int num_sge) override
	{
		return qp_->post_recv(wr_id, sg, num_sge);
	}
	void modified(const sw::QpModify &m) override { qp_->modified(m); }
	void set_mw_control(sw::MwControl c) override { qp_->set_mw_control(std::move(c)); }
	int attach_mcast(const std::uint8_t *gid, bool attach) override { return qp_->attach_mcast(gid, attach); }

private:
	std::shared_ptr<sw::QpProvider> qp_;
};

} // namespace

int create_wire_qp(struct ibv_context *ctx, std::uint32_t qpn, std::uint32_t type, sw::Cq *scq, sw::Cq *rcq,
		   sw::Srq *srq, const sw::QpCaps &caps, sw::QpProvider **out)
{
	if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD && type != IBV_QPT_XRC_SEND &&
	    type != IBV_QPT_XRC_RECV)
		return EOPNOTSUPP;
	std::shared_ptr<WireEndpoint> ep;
	if (int err = endpoint_of(ctx, ep))
		return err;
	ContextImpl *impl = impl_of(ctx);
	if (type == IBV_QPT_XRC_RECV) {
		std::lock_guard<std::mutex> g(impl->xrc_lock);
		std::erase_if(impl->xrc_served, [qpn](const auto &e) { return e.first != qpn && e.second.expired(); });
		std::shared_ptr<sw::QpProvider> q = impl->xrc_served[qpn].lock();
		if (!q) {
			auto w = std::make_shared<WireQp>(ctx, *impl, std::move(ep), qpn, type, scq, rcq, srq, caps);
			if (!w->ok())
				return errno ? errno : ENOMEM;
			q = w;
			impl->xrc_served[qpn] = q;
		}
		*out = new XrcHold(std::move(q));
		return 0;
	}
	auto q = std::make_unique<WireQp>(ctx, *impl, std::move(ep), qpn, type, scq, rcq, srq, caps);
	if (!q->ok())
		return errno ? errno : ENOMEM;
	*out = q.release();
	return 0;
}

sw::QpModify to_modify(const struct ibv_qp_attr &a, int mask, std::uint32_t state)
{
	// Only the fields @mask names: the others may hold anything (an
	// application need not initialise them; an enum among them read
	// uninitialised is undefined behaviour).
	sw::QpModify m;
	m.mask = std::uint32_t(mask);
	m.state = state;
	if (mask & IBV_QP_AV) {
		std::memcpy(m.dgid, a.ah_attr.grh.dgid.raw, 16);
		m.is_global = a.ah_attr.is_global;
		m.sgid_index = a.ah_attr.grh.sgid_index;
		m.traffic_class = a.ah_attr.grh.traffic_class;
	}
	if (mask & IBV_QP_DEST_QPN)
		m.dest_qpn = a.dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		m.rq_psn = a.rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		m.sq_psn = a.sq_psn;
	if (mask & IBV_QP_PATH_MTU)
		m.path_mtu = a.path_mtu;
	if (mask & IBV_QP_QKEY)
		m.qkey = a.qkey;
	if (mask & IBV_QP_ACCESS_FLAGS)
		m.access = a.qp_access_flags;
	if (mask & IBV_QP_TIMEOUT)
		m.timeout = a.timeout;
	if (mask & IBV_QP_RETRY_CNT)
		m.retry_cnt = a.retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		m.rnr_retry = a.rnr_retry;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		m.min_rnr_timer = a.min_rnr_timer;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		m.max_rd_atomic = a.max_rd_atomic;
	return m;
}

bool context_is_roce(ContextImpl *impl, unsigned *ifindex)
{
	auto p = impl->ctl.query_port(1);
	if (!p || p->link_layer != UABI_LINK_LAYER_ETHERNET)
		return false;
	*ifindex = 0;
	for (std::uint32_t i = 0; i < 16 && !*ifindex; i++)
		if (auto g = impl->ctl.raw().query_gid(1, i))
			*ifindex = ifindex_of(reinterpret_cast<const std::uint8_t *>(g->data()));
	return true;
}

} // namespace uabi::verbs
