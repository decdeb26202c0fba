// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The requester's side of a work request: the checks of the posting QP,
// then its execution against the arena, moving the bytes with
// process_vm_writev/readv (docs/datapath.md, "Semantics"); the responder's
// side it needs is in qp_responder.cpp, retries in qp_retry.cpp.
#include "qp_internal.hpp"

#include <cerrno>
#include <cstring>
#include <sys/uio.h>
#include <vector>

namespace uabi::sw {

using namespace detail;

namespace {

// Reads or writes the 8 aligned bytes at @va of process @owner as one
// access: a single load or store in this process, a single 8-byte copy
// between processes (not vm_copy(), whose in-order placement would make it
// two), so that a CPU reading the word never sees half of a value.
int word_access(Device &dev, pid_t owner, std::uint64_t va, std::uint64_t *v, bool write)
{
	auto *w = reinterpret_cast<std::uint64_t *>(va);
	if (owner == dev.pid() && !dev.force_vm()) {
		if (write)
			__atomic_store_n(w, *v, __ATOMIC_RELEASE);
		else
			*v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		return 0;
	}
	iovec mine{v, 8}, theirs{w, 8};
	ssize_t n = write ? process_vm_writev(owner, &mine, 1, &theirs, 1, 0)
			  : process_vm_readv(owner, &mine, 1, &theirs, 1, 0);
	if (n == 8)
		return 0;
	return n < 0 ? errno : EFAULT;
}

} // namespace

int Device::peer_write(pid_t pid, std::uint64_t addr, const void *src, std::size_t n)
{
	iovec from{const_cast<void *>(src), n}, to{reinterpret_cast<void *>(addr), n};
	return vm_copy(*this, pid, &to, 1, pid_, &from, 1, n);
}

int Device::peer_read(pid_t pid, std::uint64_t addr, void *dst, std::size_t n)
{
	iovec from{reinterpret_cast<void *>(addr), n}, to{dst, n};
	return vm_copy(*this, pid_, &to, 1, pid, &from, 1, n);
}

int Device::peer_atomic(pid_t pid, std::uint64_t addr, bool cmp_swap, std::uint64_t compare,
			std::uint64_t swap_add, std::uint64_t &orig)
{
	if (addr & 7)
		return EINVAL;
	ArenaLock lk(atomic_lock(), pid_);
	int err = word_access(*this, pid, addr, &orig, false);
	if (err || (cmp_swap && orig != compare))
		return err;
	std::uint64_t v = cmp_swap ? swap_add : orig + swap_add;
	return word_access(*this, pid, addr, &v, true);
}

void Qp::complete_send(const SendWr &wr, std::uint32_t status, std::uint32_t byte_len)
{
	if (!(wr.send_flags & kSendSignaled) && !caps_.sq_sig_all && status == kWcSuccess)
		return;
	if (!send_cq_)
		return;
	Cqe e{};
	e.wr_id = wr.wr_id;
	e.status = status;
	e.opcode = wc_opcode(wr.opcode);
	e.byte_len = byte_len;
	e.qp_num = qpn_;
	push_or_fail(dev_, send_cq_->cqn(), e, QpRef{desc_, rw_});
}

int Qp::check_local(const Sge *sg, int n, std::uint32_t need, bool inl, Iov &iov,
		    std::uint64_t *total)
{
	Iov *out = &iov;
	const std::uint32_t pd = desc_->pd;
	for (int i = 0; i < n; i++) {
		if (!sg[i].length)
			continue;
		std::uint64_t va = sg[i].addr;
		if (!inl && !mr_check(dev_, sg[i].lkey, sg[i].addr, sg[i].length, dev_.pid(), pd,
				      need, &va, 0))
			return kWcLocProtErr;
		if (!out->add(va, sg[i].length))
			return kWcLocLenErr;
	}
	*total = out->total;
	return 0;
}

// BIND_MW and LOCAL_INV: no responder, no data; the control half does them
// now that their turn has come.
Qp::Result Qp::exec_local(const SendWr &wr)
{
	MwRequest r;
	r.qpn = qpn_;
	if (wr.opcode == kWrBindMw) {
		r.kind = MwRequest::Bind;
		r.bind = &wr.bind;
		r.rkey = wr.bind.rkey;
	} else {
		r.kind = MwRequest::LocalInv;
		r.rkey = wr.invalidate_rkey;
	}
	const int err = mw_control_ ? mw_control_(r) : EOPNOTSUPP;
	if (!err)
		return {Outcome::Done, kWcSuccess, 0};
	return {Outcome::Done, wr.opcode == kWrBindMw ? kWcMwBindErr : kWcLocQpOpErr, 0};
}

Qp::Result Qp::exec_rc_uc(const SendWr &wr)
{
	const std::uint32_t op = wr.opcode;
	if (op == kWrBindMw || op == kWrLocalInv)
		return exec_local(wr);
	const bool reliable = type_ != UABI_QPT_UC;
	const Result dropped{Outcome::Done, kWcSuccess, 0};

	// Our side first: local keys.
	Iov local;
	const bool reads = op == kWrRdmaRead || is_atomic(op);
	const bool inl = (wr.send_flags & kSendInline) && !reads;
	// An atomic write carries its 8 bytes in the work request itself.
	const bool awrite = op == kWrAtomicWrite;
	std::uint64_t total = awrite ? 8 : 0;
	if (!awrite)
		if (std::uint32_t st = check_local(wr.sg_list, wr.num_sge,
						   reads ? std::uint32_t(kAccessLocalWrite) : 0u, inl,
						   local, &total))
			return {Outcome::Done, st, 0};
	if (is_atomic(op) && total < 8)
		return {Outcome::Done, kWcLocLenErr, 0};

	// The responder.
	const std::uint32_t dest_qpn = __atomic_load_n(&desc_->dest_qpn, __ATOMIC_RELAXED);
	const QpRef dd = qp_ref(dev_, dest_qpn);
	uabi_sw_qp dest{};
	if (dd)
		snapshot(dd.d, dest);
	// An XRC initiator reaches a receive QP, or a send QP with a domain
	// (OFED's IBV_QPT_XRC, initiator and target at once).
	const bool xrc_target = dest.type == UABI_QPT_XRC_RECV ||
				(dest.type == UABI_QPT_XRC_SEND && dest.xrcd);
	bool ready = dd && dest.qpn == dest_qpn && receiving(state_of(dd)) &&
		     (type_ == UABI_QPT_XRC_SEND ? xrc_target : dest.type == type_);
	if (!ready)
		return reliable ? Result{Outcome::NotReady, 0, 0} : dropped;
	last_rnr_ns_ = kRnrNs[dest.min_rnr_timer & 31];
	const bool xrc = type_ == UABI_QPT_XRC_SEND;

	// Remote memory (RDMA and atomics): rkey in the responder's PD (any
	// owner's for XRC, whose target QP has no PD).  The bytes are copied
	// to or from the MR's own process (rowner), which need not be the
	// responder QP's: in one PD, so one context, but an imported context
	// (ibv_import_device(3)) has QPs and MRs of several processes.
	pid_t rowner = dest.pid;
	std::uint64_t rva = 0;
	// A zero-length RDMA READ or WRITE needs no valid rkey or address
	// (IBTA C9-88): only the responder QP's access flags are checked.
	const bool zero_rdma = !is_atomic(op) && !total;
	if (zero_rdma && !is_send(op)) {
		std::uint32_t need = op == kWrRdmaRead ? kAccessRemoteRead : kAccessRemoteWrite;
		if (!(dest.access & need)) {
			if (!reliable)
				return dropped;
			mark_error(dev_, dd, kEventQpAccessErr);
			return {Outcome::Done, kWcRemAccessErr, 0};
		}
	} else if (!consumes_recv(op) || op == kWrRdmaWriteWithImm) {
		std::uint32_t need = op == kWrRdmaRead ? kAccessRemoteRead
				     : is_atomic(op) ? kAccessRemoteAtomic
						     : kAccessRemoteWrite;
		std::uint64_t len = is_atomic(op) ? 8u : total;
		if ((is_atomic(op) || awrite) && (wr.remote_addr & 7))
			return reliable ? Result{Outcome::Done, kWcRemInvReqErr, 0} : dropped;
		if (!(dest.access & need) ||
		    !mr_check(dev_, wr.rkey, wr.remote_addr, len, 0, xrc ? 0 : dest.pd, need,
			      &rva, dest_qpn, &rowner)) {
			if (!reliable)
				return dropped;
			// IB: the responder NAKs and its QP goes to ERR with a
			// local access violation (for XRC, the receive QP).
			mark_error(dev_, dd, kEventQpAccessErr);
			return {Outcome::Done, kWcRemAccessErr, 0};
		}
	}

	// A receive WQE, for SEND and WRITE_WITH_IMM.
	Target t;
	Wqe w;
	if (consumes_recv(op)) {
		if (xrc) {
			if (!xrc_recv_target(dev_, dd, dest, dest_qpn, wr.remote_srqn, t))
				return {Outcome::Done, kWcRemInvReqErr, 0};
		} else if (!recv_target(dev_, dd, dest, dest_qpn, t)) {
			return reliable ? Result{Outcome::NotReady, 0, 0} : dropped;
		}
		int got = take(dev_, t, w);
		if (got < 0)
			return reliable ? Result{Outcome::NotReady, 0, 0} : dropped;
		if (got == 0)
			return reliable ? Result{Outcome::Rnr, 0, 0} : dropped;
	}

	Cqe rc{};
	if (consumes_recv(op)) {
		rc.wr_id = w.hdr().wr_id;
		rc.qp_num = t.qpn;
		rc.src_qp = qpn_;
		rc.slid = UABI_SW_PORT_LID;
		rc.sl = desc_->sl;
		rc.solicited = (wr.send_flags & kSendSolicited) ? 1 : 0;
		if (op == kWrSendWithInv) {
			rc.wc_flags = kWcWithInv;
			rc.imm_data = wr.invalidate_rkey;	// ibv_wc's invalidated_rkey
		} else if (op != kWrSend) {
			rc.wc_flags = kWcWithImm;
			rc.imm_data = wr.imm_data;
		}
	}
	// A message delivered crossed the port (both ends are this port): its
	// data in packets of the path MTU (Device::count_traffic).  Only
	// messages count: not acknowledgements, nor a READ's request.
	auto carried = [&](std::uint64_t bytes) {
		dev_.count_traffic(bytes, mtu_bytes(desc_->path_mtu));
	};
	// Responder-side failure: its WQE completes in error, its QP goes to
	// ERR, and the requester learns the matching remote status.
	auto responder_error = [&](std::uint32_t local_status, std::uint32_t remote_status) {
		rc.status = local_status;
		rc.opcode = op == kWrRdmaWriteWithImm ? kWcRecvRdmaWithImm : kWcRecv;
		push_or_fail(dev_, t.cqn, rc, t.qp);
		if (reliable)
			mark_error(dev_, t.qp,
				   local_status == kWcLocLenErr || local_status == kWcRemInvReqErr
					   ? kEventQpReqErr
					   : kEventQpAccessErr);
		return reliable ? Result{Outcome::Done, remote_status, 0} : dropped;
	};

	switch (op) {
	case kWrSend:
	case kWrSendWithImm:
	case kWrSendWithInv: {
		Iov remote;
		if (std::uint32_t st = recv_iov(dev_, w, t.stride ? t.stride : kWqeMax, 0, total, t, remote))
			return responder_error(st, st == kWcLocLenErr ? kWcRemInvReqErr : kWcRemOpErr);
		// The window is invalid before the receiver sees the completion
		// (and before the payload lands: IB invalidates at the first
		// packet).
		if (op == kWrSendWithInv) {
			MwRequest inv;
			inv.kind = MwRequest::RemoteInv;
			inv.qpn = t.qpn;
			inv.rkey = wr.invalidate_rkey;
			if (!mw_control_ || mw_control_(inv))
				return responder_error(kWcRemInvReqErr, kWcRemInvReqErr);
		}
		rc.opcode = kWcRecv;
		rc.byte_len = std::uint32_t(total);
		if (send_small(dev_, t, rc, remote, nullptr, nullptr, 0, local, total)) {
			carried(total);
			return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
		}
		int err = vm_copy(dev_, t.owner, remote.v, remote.n, dev_.pid(), local.v, local.n, total);
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return responder_error(kWcLocProtErr, kWcRemOpErr);
		push_or_fail(dev_, t.cqn, rc, t.qp);
		carried(total);
		return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
	}
	case kWrRdmaWrite:
	case kWrRdmaWriteWithImm: {
		iovec r{reinterpret_cast<void *>(rva), total};
		int err = vm_copy(dev_, rowner, &r, 1, dev_.pid(), local.v, local.n, total);
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err) {
			if (op == kWrRdmaWriteWithImm)
				return responder_error(kWcLocAccessErr, kWcRemAccessErr);
			return reliable ? Result{Outcome::Done, kWcRemAccessErr, 0} : dropped;
		}
		if (op == kWrRdmaWriteWithImm) {
			rc.opcode = kWcRecvRdmaWithImm;
			rc.byte_len = std::uint32_t(total);
			push_or_fail(dev_, t.cqn, rc, t.qp);
		}
		carried(total);
		return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
	}
	case kWrRdmaRead: {
		iovec r{reinterpret_cast<void *>(rva), total};
		int err = vm_copy(dev_, dev_.pid(), local.v, local.n, rowner, &r, 1, total);
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return {Outcome::Done, kWcRemAccessErr, 0};
		carried(total); // the responses
		return {Outcome::Done, kWcSuccess, std::uint32_t(total)};
	}
	case kWrAtomicWrite: {
		// Atomic with respect to every RDMA atomic of the user (the
		// lock of atomics), and one store of 8 aligned bytes.
		std::uint64_t v = wr.compare_add;
		int err;
		{
			ArenaLock lk(dev_.atomic_lock(), dev_.pid());
			err = word_access(dev_, rowner, rva, &v, true);
		}
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return {Outcome::Done, kWcRemAccessErr, 0};
		carried(8);
		return {Outcome::Done, kWcSuccess, 8};
	}
	case kWrAtomicCmpAndSwp:
	case kWrAtomicFetchAndAdd: {
		std::uint64_t old = 0, nv;
		int err;
		{
			ArenaLock lk(dev_.atomic_lock(), dev_.pid());
			err = word_access(dev_, rowner, rva, &old, false);
			if (!err) {
				bool write = true;
				if (op == kWrAtomicFetchAndAdd) {
					nv = old + wr.compare_add;
				} else {
					nv = wr.swap;
					write = old == wr.compare_add;
				}
				if (write)
					err = word_access(dev_, rowner, rva, &nv, true);
			}
		}
		if (err == ESRCH)
			return {Outcome::Done, kWcRetryExcErr, 0};
		if (err)
			return {Outcome::Done, kWcRemAccessErr, 0};
		iovec o{&old, 8};
		local_copy(local.v, local.n, &o, 1, 8);
		carried(8); // the value the response carries back
		return {Outcome::Done, kWcSuccess, 8};
	}
	}
	return {Outcome::Done, kWcLocQpOpErr, 0};
}

Qp::Result Qp::exec_ud(const SendWr &wr)
{
	Iov local;
	std::uint64_t total = 0;
	if (std::uint32_t st = check_local(wr.sg_list, wr.num_sge, 0,
					   wr.send_flags & kSendInline, local, &total))
		return {Outcome::Done, st, 0};
	if (total > kMtuBytes)
		return {Outcome::Done, kWcLocLenErr, 0};
	if (!wr.ah)
		return {Outcome::Done, kWcLocQpOpErr, 0};
	const Result sent{Outcome::Done, kWcSuccess, std::uint32_t(total)};
	// UD is one packet; what is dropped (no such QP, no buffer) is not
	// counted, as only what is delivered is.
	if (wr.ah->dlid < 0xc000) {
		if (deliver_ud(wr, local, total, wr.remote_qpn))
			dev_.count_traffic(total, kMtuBytes);
		return sent;
	}
	// Multicast: one copy to each QP of the user attached to a group of
	// that LID (and, with a GRH, that GID); to this QP too unless it
	// blocks its own multicasts.
	std::vector<std::uint32_t> to;
	uabi_sw_mcg g;
	for (std::uint32_t i = 0; i < dev_.mcg_count(); i++) {
		if (!dev_.mcg_snapshot(i, g) || g.lid != wr.ah->dlid)
			continue;
		if (wr.ah->is_global && std::memcmp(g.gid, wr.ah->dgid, sizeof(g.gid)))
			continue;
		for (std::uint32_t k = 0; k < std::min<std::uint32_t>(g.num_qp, UABI_SW_MCG_QPS); k++) {
			const std::uint32_t qpn = g.qpn[k];
			if ((qpn == qpn_ && caps_.block_self_mcast) ||
			    std::find(to.begin(), to.end(), qpn) != to.end())
				continue;
			to.push_back(qpn);
		}
	}
	// One packet out and one in for each copy delivered.
	std::uint32_t copies = 0;
	for (std::uint32_t qpn : to)
		copies += deliver_ud(wr, local, total, qpn) ? 1 : 0;
	dev_.count_traffic(total, kMtuBytes, copies, true);
	return sent;
}

// One UD message to QP @dest_qpn: dropped (silently, as UD does) unless
// it is a receiving UD QP of that qkey with a receive WQE.  true: delivered
// (its receive completed successfully).
bool Qp::deliver_ud(const SendWr &wr, const Iov &local, std::uint64_t total,
		    std::uint32_t dest_qpn)
{
	const QpRef dd = qp_ref(dev_, dest_qpn);
	uabi_sw_qp dest{};
	if (dd)
		snapshot(dd.d, dest);
	if (!dd || dest.qpn != dest_qpn || dest.type != UABI_QPT_UD ||
	    !receiving(state_of(dd)))
		return false;
	std::uint32_t qkey = (wr.remote_qkey & 0x80000000u) ? desc_->qkey : wr.remote_qkey;
	if (qkey != dest.qkey)
		return false;

	Target t;
	if (!recv_target(dev_, dd, dest, dest_qpn, t))
		return false;
	Wqe w;
	if (take(dev_, t, w) <= 0)
		return false;	// UD drops what finds no buffer

	Cqe rc{};
	rc.wr_id = w.hdr().wr_id;
	rc.opcode = kWcRecv;
	rc.qp_num = t.qpn;
	rc.src_qp = qpn_;
	rc.slid = UABI_SW_PORT_LID;
	rc.sl = wr.ah->sl;
	rc.solicited = (wr.send_flags & kSendSolicited) ? 1 : 0;
	if (wr.opcode == kWrSendWithImm) {
		rc.wc_flags |= kWcWithImm;
		rc.imm_data = wr.imm_data;
	}
	std::uint32_t stride = t.stride ? t.stride : kWqeMax;
	Iov remote, grh;
	std::uint32_t st = recv_iov(dev_, w, stride, kGrhBytes, total, t, remote);
	if (!st && wr.ah->is_global)
		st = recv_iov(dev_, w, stride, 0, kGrhBytes, t, grh);
	if (st) {
		rc.status = st;
		push_or_fail(dev_, t.cqn, rc, t.qp);
		return false;
	}
	std::uint8_t g[kGrhBytes];
	const bool global = wr.ah->is_global;
	if (global) {
		make_grh(g, *wr.ah, std::uint32_t(total));
		rc.wc_flags |= kWcGrh;
	}
	rc.byte_len = std::uint32_t(total + kGrhBytes);
	if (global ? send_small(dev_, t, rc, grh, &remote, g, kGrhBytes, local, total)
		   : send_small(dev_, t, rc, remote, nullptr, nullptr, 0, local, total))
		return true;
	int err = vm_copy(dev_, t.owner, remote.v, remote.n, dev_.pid(), local.v, local.n, total);
	if (!err && global) {
		iovec gi{g, kGrhBytes};
		err = vm_copy(dev_, t.owner, grh.v, grh.n, dev_.pid(), &gi, 1, kGrhBytes);
	}
	if (err) {
		rc.status = kWcLocProtErr;
		rc.byte_len = 0;
		push_or_fail(dev_, t.cqn, rc, t.qp);
		return false;
	}
	push_or_fail(dev_, t.cqn, rc, t.qp);
	return true;
}

Qp::Result Qp::execute(const SendWr &wr)
{
	if (type_ == UABI_QPT_UD)
		return exec_ud(wr);
	return exec_rc_uc(wr);
}

int Qp::post_send(const SendWr &wr)
{
	std::lock_guard<std::recursive_mutex> g(lock_);
	const std::uint32_t op = wr.opcode;
	bool ok;
	switch (type_) {
	case UABI_QPT_UD:
		ok = op == kWrSend || op == kWrSendWithImm;
		break;
	case UABI_QPT_UC:
		ok = op == kWrSend || op == kWrSendWithImm || op == kWrRdmaWrite ||
		     op == kWrRdmaWriteWithImm || op == kWrLocalInv || op == kWrBindMw ||
		     op == kWrSendWithInv;
		break;
	case UABI_QPT_RC:
	case UABI_QPT_XRC_SEND:
		ok = op <= kWrSendWithInv || op == kWrAtomicWrite;
		break;
	default:
		ok = false;
	}
	if (!ok || wr.num_sge < 0 || std::uint32_t(wr.num_sge) > caps_.max_send_sge ||
	    wr.num_sge > kMaxIov)
		return EINVAL;
	// IBV_SEND_INLINE means something for SENDs and RDMA WRITEs only
	// (the others ignore it, as exec_rc_uc does).
	const bool inl = (wr.send_flags & kSendInline) && op != kWrRdmaRead && !is_atomic(op) &&
			 op != kWrAtomicWrite && op != kWrBindMw && op != kWrLocalInv;
	if (inl) {
		std::uint64_t len = 0;
		for (int i = 0; i < wr.num_sge; i++)
			len += wr.sg_list[i].length;
		if (len > caps_.max_inline_data)
			return EINVAL;
	}
	if (type_ == UABI_QPT_UD && !wr.ah)
		return EINVAL;
	std::uint32_t st = state();
	if (st == kErr) {
		complete_send(wr, kWcWrFlushErr, 0);
		return 0;
	}
	if (st != kRts && st != kSqd)
		return EINVAL;
	if (pending_.full())
		return ENOMEM;

	if (pending_.empty()) {
		Result r = execute(wr);
		if (r.outcome == Outcome::Done) {
			complete_send(wr, r.status, r.byte_len);
			if (r.status != kWcSuccess)
				enter_error();
			return 0;
		}
	}
	// Defer: keep what the caller may reuse once we return (inline data,
	// the SGE list, the AH).
	Pending &p = pending_.push_back();
	p.wr = wr;
	Sge *sges = pending_.sges(p);
	if (inl) {
		// Checked above: the bytes fit max_inline_data.
		std::uint8_t *data = pending_.inline_data(p);
		std::uint32_t len = 0;
		for (int i = 0; i < wr.num_sge; i++) {
			std::memcpy(data + len, reinterpret_cast<const void *>(wr.sg_list[i].addr),
				    wr.sg_list[i].length);
			len += wr.sg_list[i].length;
		}
		sges[0] = {reinterpret_cast<std::uint64_t>(data), len, 0};
		p.wr.num_sge = 1;
	} else {
		// At most max_send_sge (checked above).
		std::copy(wr.sg_list, wr.sg_list + wr.num_sge, sges);
	}
	p.wr.sg_list = sges;
	if (wr.ah) {
		p.ah = *wr.ah;
		p.wr.ah = &p.ah;
	}
	p.first_ns = now_ns();
	p.last_check_ns = p.first_ns;
	p.why = Outcome::NotReady;
	// Runs what can run now, in order (the head may have become ready).
	run_pending_locked();
	if (!pending_.empty())
		dev_.add_pending(this);
	return 0;
}

} // namespace uabi::sw
