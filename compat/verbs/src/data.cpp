// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Data verbs: the ops of struct ibv_context that the inline ibv_post_send,
// ibv_post_recv, ibv_poll_cq... of <verbs.h> call, and the new post-send
// API of struct ibv_qp_ex.  No system call here except the data path's
// process_vm_* copies (and a blocked waiter's poll()).
#include "verbs_impl.hpp"

#include <uabi/ofed_verbs_abi.h>

#include <cstring>
#include <csignal>
#include <ctime>
#include <poll.h>

using namespace uabi;
using namespace uabi::verbs;

namespace {

sw::MwBind to_sw_bind(struct ibv_mw *mw, std::uint32_t rkey, const struct ibv_mw_bind_info &b)
{
	sw::MwBind m;
	m.mw = mw;
	m.mr = b.mr;
	m.addr = b.addr;
	m.length = b.length;
	m.access = b.mw_access_flags;
	m.rkey = rkey;
	return m;
}

// Fills the data path's view of a work request; @ah stays owned by the
// caller.
int to_sw_wr(const VQp *q, const struct ibv_send_wr *wr, sw::SendWr &s)
{
	s.wr_id = wr->wr_id;
	s.opcode = wr->opcode;
	s.send_flags = wr->send_flags;
	s.imm_data = wr->imm_data;
	s.sg_list = reinterpret_cast<const sw::Sge *>(wr->sg_list);
	s.num_sge = wr->num_sge;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		s.remote_addr = wr->wr.rdma.remote_addr;
		s.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		s.remote_addr = wr->wr.atomic.remote_addr;
		s.rkey = wr->wr.atomic.rkey;
		s.compare_add = wr->wr.atomic.compare_add;
		s.swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		s.invalidate_rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		// ibv_post_send(3): type 2 windows; the key is the caller's.
		if (!wr->bind_mw.mw)
			return EINVAL;
		s.bind = to_sw_bind(wr->bind_mw.mw, wr->bind_mw.rkey, wr->bind_mw.bind_info);
		break;
	default:
		break;
	}
	// OFED's IBV_QPT_XRC (5) is not in the upstream enum.
	switch (std::uint32_t(q->qpx.qp_base.qp_type)) {
	case IBV_QPT_UD:
		if (!wr->wr.ud.ah)
			return EINVAL;
		s.ah = &vah(wr->wr.ud.ah)->av;
		s.remote_qpn = wr->wr.ud.remote_qpn;
		s.remote_qkey = wr->wr.ud.remote_qkey;
		break;
	case IBV_QPT_XRC_SEND:
	case UABI_OFED_QPT_XRC: // OFED's xrc_remote_srq_num, same offset
		s.remote_srqn = wr->qp_type.xrc.remote_srqn;
		break;
	default:
		break;
	}
	return 0;
}

int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	VQp *q = vqp(qp);
	for (; wr; wr = wr->next) {
		sw::SendWr s;
		int err = q->dp ? to_sw_wr(q, wr, s) : EINVAL;
		if (!err)
			err = q->dp->post_send(s);
		if (err) {
			*bad = wr;
			return err;
		}
	}
	return 0;
}

int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	VQp *q = vqp(qp);
	for (; wr; wr = wr->next) {
		int err = q->dp ? q->dp->post_recv(wr->wr_id, reinterpret_cast<const sw::Sge *>(wr->sg_list),
						   wr->num_sge)
				: EINVAL;
		if (err) {
			*bad = wr;
			return err;
		}
	}
	return 0;
}

int post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	VSrq *s = vsrq(srq);
	for (; wr; wr = wr->next) {
		int err = s->dp->post_recv(wr->wr_id, reinterpret_cast<const sw::Sge *>(wr->sg_list),
					   wr->num_sge);
		if (err) {
			*bad = wr;
			return err;
		}
	}
	return 0;
}

void to_wc(const sw::Cqe &e, struct ibv_wc &w)
{
	w.wr_id = e.wr_id;
	w.status = ibv_wc_status(e.status);
	w.opcode = ibv_wc_opcode(e.opcode);
	w.vendor_err = 0;
	w.byte_len = e.byte_len;
	w.imm_data = e.imm_data;
	w.qp_num = e.qp_num;
	w.src_qp = e.src_qp;
	w.wc_flags = e.wc_flags;
	w.pkey_index = e.pkey_index;
	w.slid = e.slid;
	w.sl = e.sl;
	w.dlid_path_bits = e.dlid_path_bits;
}

// Nothing completed: on a RoCE device, receive what the socket holds in
// this thread (docs/wire.md, "Who does the work") and look again.
static bool progressed(struct ibv_cq *cq)
{
	ContextImpl *impl = impl_of(cq->context);
	return impl->wire_active.load(std::memory_order_relaxed) > 0 && wire_progress(impl);
}

int poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	if (n <= 0)
		return 0;
	int i = 0;
	int got = vcq(cq)->dp->poll(n, [&](const sw::Cqe &e) { to_wc(e, wc[i++]); });
	if (got == 0 && progressed(cq))
		got = vcq(cq)->dp->poll(n, [&](const sw::Cqe &e) { to_wc(e, wc[i++]); });
	return got;
}

// ibv_cq_ex polling: one completion at a time into VCq::cur.
int cqx_next(struct ibv_cq_ex *cq)
{
	VCq *c = vcq(cq);
	auto take = [&](const sw::Cqe &e) {
		to_wc(e, c->cur);
		c->cur_ts = e.ts;
	};
	int n = c->dp->poll(1, take);
	if (n == 0 && progressed(ibv_cq_ex_to_cq(cq)))
		n = c->dp->poll(1, take);
	if (n < 0)
		return EINVAL;
	if (n == 0)
		return ENOENT;
	cq->status = c->cur.status;
	cq->wr_id = c->cur.wr_id;
	return 0;
}

int cqx_start(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	if (attr && attr->comp_mask)
		return EINVAL;
	return cqx_next(cq);
}

void cqx_end(struct ibv_cq_ex *) {}

enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *cq) { return vcq(cq)->cur.opcode; }
uint32_t cqx_vendor_err(struct ibv_cq_ex *cq) { return vcq(cq)->cur.vendor_err; }
uint32_t cqx_byte_len(struct ibv_cq_ex *cq) { return vcq(cq)->cur.byte_len; }
__be32 cqx_imm_data(struct ibv_cq_ex *cq) { return vcq(cq)->cur.imm_data; }
uint32_t cqx_qp_num(struct ibv_cq_ex *cq) { return vcq(cq)->cur.qp_num; }
uint32_t cqx_src_qp(struct ibv_cq_ex *cq) { return vcq(cq)->cur.src_qp; }
unsigned int cqx_wc_flags(struct ibv_cq_ex *cq) { return unsigned(vcq(cq)->cur.wc_flags); }
uint32_t cqx_slid(struct ibv_cq_ex *cq) { return vcq(cq)->cur.slid; }
uint8_t cqx_sl(struct ibv_cq_ex *cq) { return vcq(cq)->cur.sl; }
uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *cq) { return vcq(cq)->cur.dlid_path_bits; }
// The device clock is CLOCK_MONOTONIC in ns (UABI_SW_CORE_CLOCK_KHZ); the
// wall clock reading adds REALTIME - MONOTONIC as it stands now.
uint64_t cqx_completion_ts(struct ibv_cq_ex *cq) { return vcq(cq)->cur_ts; }
uint64_t cqx_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	const std::int64_t offset = (std::int64_t(real.tv_sec) - mono.tv_sec) * 1000000000ll +
				    (std::int64_t(real.tv_nsec) - mono.tv_nsec);
	return std::uint64_t(std::int64_t(vcq(cq)->cur_ts) + offset);
}

int req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	vcq(cq)->dp->arm(solicited_only != 0);
	ContextImpl *impl = impl_of(cq->context);
	if (impl->wire_active.load(std::memory_order_relaxed) > 0)
		wire_consumer_sleeps(impl);
	return 0;
}

struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return guard_ptr([&]() -> struct ibv_mw * {
		if (!pd || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2))
			return fail_ptr<struct ibv_mw>(EINVAL);
		auto *mw = new (std::nothrow) ibv_mw{};
		if (!mw)
			return fail_ptr<struct ibv_mw>(ENOMEM);
		auto r = impl_of(pd->context)->ctl.alloc_mw(pd->handle, type);
		if (!r) {
			delete mw;
			return fail_ptr<struct ibv_mw>(r.error());
		}
		mw->context = pd->context;
		mw->pd = pd;
		mw->rkey = r->rkey;
		mw->handle = r->handle;
		mw->type = type;
		return mw;
	});
}

int dealloc_mw(struct ibv_mw *mw)
{
	return guard_int([&] {
		auto r = impl_of(mw->context)->ctl.dealloc_mw(mw->handle);
		if (!r)
			return r.error();
		delete mw;
		return 0;
	});
}

// ibv_bind_mw(3), type 1: a BIND_MW work request whose key is the next one
// of the window (ibv_inc_rkey()); the window shows it at once, as
// libibverbs' providers do.
int bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	VQp *q = vqp(qp);
	if (!q->dp || !b || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	if (b->bind_info.mr && b->bind_info.mr->pd != mw->pd)
		return EPERM;
	sw::SendWr s;
	s.wr_id = b->wr_id;
	s.opcode = IBV_WR_BIND_MW;
	s.send_flags = b->send_flags;
	s.bind = to_sw_bind(mw, ibv_inc_rkey(mw->rkey), b->bind_info);
	int err = q->dp->post_send(s);
	if (!err)
		mw->rkey = s.bind.rkey;
	return err;
}

// ----------------------------------------------- new post-send API
WrBuilder *builder(struct ibv_qp_ex *q)
{
	VQp *v = vqp(q);
	if (!v->wb)
		v->wb = new (std::nothrow) WrBuilder;
	return v->wb;
}

void wr_start(struct ibv_qp_ex *q)
{
	if (WrBuilder *b = builder(q)) {
		b->n = 0;
		b->error = 0;
	}
}

// Starts the next work request of the batch; nullptr on failure (the
// batch then fails at wr_complete).
sw::SendWr *begin(struct ibv_qp_ex *q, std::uint32_t opcode)
{
	WrBuilder *b = builder(q);
	if (!b)
		return nullptr;
	try {
		if (b->n == b->wrs.size()) {
			b->wrs.emplace_back();
			b->sges.emplace_back();
			b->inl.emplace_back();
			b->ahs.emplace_back();
		}
	} catch (...) {
		b->error = ENOMEM;
		return nullptr;
	}
	sw::SendWr &w = b->wrs[b->n];
	w = sw::SendWr{};
	w.wr_id = q->wr_id;
	w.send_flags = q->wr_flags;
	w.opcode = opcode;
	b->sges[b->n].clear();
	b->inl[b->n].clear();
	b->n++;
	return &w;
}

sw::SendWr *current(struct ibv_qp_ex *q, std::size_t *idx)
{
	WrBuilder *b = vqp(q)->wb;
	if (!b || !b->n)
		return nullptr;
	*idx = b->n - 1;
	return &b->wrs[b->n - 1];
}

void wr_send(struct ibv_qp_ex *q)
{
	begin(q, IBV_WR_SEND);
}

void wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	if (sw::SendWr *w = begin(q, IBV_WR_SEND_WITH_IMM))
		w->imm_data = imm;
}

void wr_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	if (sw::SendWr *w = begin(q, IBV_WR_RDMA_WRITE)) {
		w->rkey = rkey;
		w->remote_addr = addr;
	}
}

void wr_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, __be32 imm)
{
	if (sw::SendWr *w = begin(q, IBV_WR_RDMA_WRITE_WITH_IMM)) {
		w->rkey = rkey;
		w->remote_addr = addr;
		w->imm_data = imm;
	}
}

void wr_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr)
{
	if (sw::SendWr *w = begin(q, IBV_WR_RDMA_READ)) {
		w->rkey = rkey;
		w->remote_addr = addr;
	}
}

void wr_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, uint64_t compare,
		       uint64_t swap)
{
	if (sw::SendWr *w = begin(q, IBV_WR_ATOMIC_CMP_AND_SWP)) {
		w->rkey = rkey;
		w->remote_addr = addr;
		w->compare_add = compare;
		w->swap = swap;
	}
}

void wr_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, uint64_t add)
{
	if (sw::SendWr *w = begin(q, IBV_WR_ATOMIC_FETCH_AND_ADD)) {
		w->rkey = rkey;
		w->remote_addr = addr;
		w->compare_add = add;
	}
}

void unsupported(struct ibv_qp_ex *q)
{
	if (WrBuilder *b = builder(q))
		b->error = EOPNOTSUPP;
}

void wr_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey,
		const struct ibv_mw_bind_info *info)
{
	if (!mw || !info) {
		if (WrBuilder *b = builder(q))
			b->error = EINVAL;
		return;
	}
	if (sw::SendWr *w = begin(q, IBV_WR_BIND_MW))
		w->bind = to_sw_bind(mw, rkey, *info);
}

void wr_local_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	if (sw::SendWr *w = begin(q, IBV_WR_LOCAL_INV))
		w->invalidate_rkey = rkey;
}

void wr_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	if (sw::SendWr *w = begin(q, IBV_WR_SEND_WITH_INV))
		w->invalidate_rkey = rkey;
}

void wr_send_tso(struct ibv_qp_ex *q, void *, uint16_t, uint16_t)
{
	unsupported(q);
}

void wr_atomic_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t addr, const void *data)
{
	if (sw::SendWr *w = begin(q, IBV_WR_ATOMIC_WRITE)) {
		w->rkey = rkey;
		w->remote_addr = addr;
		std::memcpy(&w->compare_add, data, 8);
	}
}

void wr_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	std::size_t i;
	if (sw::SendWr *w = current(q, &i)) {
		vqp(q)->wb->ahs[i] = vah(ah)->av;
		w->ah = &vqp(q)->wb->ahs[i];
		w->remote_qpn = qpn;
		w->remote_qkey = qkey;
	}
}

void wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t srqn)
{
	std::size_t i;
	if (sw::SendWr *w = current(q, &i))
		w->remote_srqn = srqn;
}

void wr_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t length)
{
	std::size_t i;
	if (!current(q, &i))
		return;
	try {
		auto &v = vqp(q)->wb->sges[i];
		v.assign(1, sw::Sge{addr, length, lkey});
	} catch (...) {
		vqp(q)->wb->error = ENOMEM;
	}
}

void wr_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *list)
{
	std::size_t i;
	if (!current(q, &i))
		return;
	try {
		auto &v = vqp(q)->wb->sges[i];
		const auto *s = reinterpret_cast<const sw::Sge *>(list);
		v.assign(s, s + n);
	} catch (...) {
		vqp(q)->wb->error = ENOMEM;
	}
}

// Inline data is copied now: the caller may reuse its buffer at once.
void wr_set_inline_data_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *list)
{
	std::size_t i;
	sw::SendWr *w = current(q, &i);
	if (!w)
		return;
	try {
		auto &d = vqp(q)->wb->inl[i];
		d.clear();
		for (size_t k = 0; k < n; k++) {
			const auto *p = static_cast<const std::uint8_t *>(list[k].addr);
			d.insert(d.end(), p, p + list[k].length);
		}
		vqp(q)->wb->sges[i].clear();
		w->send_flags |= IBV_SEND_INLINE;
	} catch (...) {
		vqp(q)->wb->error = ENOMEM;
	}
}

void wr_set_inline_data(struct ibv_qp_ex *q, void *addr, size_t length)
{
	struct ibv_data_buf b = {addr, length};
	wr_set_inline_data_list(q, 1, &b);
}

int wr_complete(struct ibv_qp_ex *q)
{
	WrBuilder *b = vqp(q)->wb;
	if (!b)
		return ENOMEM;
	int err = b->error;
	for (std::size_t i = 0; i < b->n && !err; i++) {
		sw::SendWr &w = b->wrs[i];
		sw::Sge inl_sge;
		if (w.send_flags & IBV_SEND_INLINE && !b->inl[i].empty()) {
			inl_sge = {reinterpret_cast<std::uint64_t>(b->inl[i].data()),
				   std::uint32_t(b->inl[i].size()), 0};
			w.sg_list = &inl_sge;
			w.num_sge = 1;
		} else {
			w.sg_list = b->sges[i].data();
			w.num_sge = int(b->sges[i].size());
		}
		if (q->qp_base.qp_type == IBV_QPT_UD && !w.ah)
			err = EINVAL;
		else
			err = vqp(q)->dp ? vqp(q)->dp->post_send(w) : EINVAL;
	}
	b->n = 0;
	b->error = 0;
	return err;
}

void wr_abort(struct ibv_qp_ex *q)
{
	if (WrBuilder *b = vqp(q)->wb) {
		b->n = 0;
		b->error = 0;
	}
}

} // namespace

namespace uabi::verbs {

void install_cq_ex_ops(VCq *c, std::uint64_t wc_flags)
{
	struct ibv_cq_ex &x = c->cqx;
	x.comp_mask = 0;
	x.start_poll = cqx_start;
	x.next_poll = cqx_next;
	x.end_poll = cqx_end;
	x.read_opcode = cqx_opcode;
	x.read_vendor_err = cqx_vendor_err;
	// Only what was asked for (ibv_create_cq_ex(3)); the others stay NULL.
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x.read_byte_len = cqx_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		x.read_imm_data = cqx_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x.read_qp_num = cqx_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x.read_src_qp = cqx_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		x.read_slid = cqx_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		x.read_sl = cqx_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x.read_dlid_path_bits = cqx_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		x.read_completion_ts = cqx_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		x.read_completion_wallclock_ns = cqx_completion_wallclock_ns;
	if (wc_flags & (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK))
		c->dp->want_timestamps();
	x.read_wc_flags = cqx_wc_flags;
}

void install_mw_control(VQp *q, ContextImpl *impl)
{
	const Handle qp = q->qpx.qp_base.handle;
	q->dp->set_mw_control([impl, qp](const sw::MwRequest &r) -> int {
		try {
			if (r.kind == sw::MwRequest::Bind) {
				const auto *mw = static_cast<const struct ibv_mw *>(r.bind->mw);
				const auto *mr = static_cast<const struct ibv_mr *>(r.bind->mr);
				uabi_mw_bind b{};
				b.addr = r.bind->addr;
				b.length = r.bind->length;
				b.access = r.bind->access;
				b.rkey = r.bind->rkey;
				auto res = impl->ctl.bind_mw(mw->handle, mr ? mr->handle : 0, qp, b);
				return res ? 0 : res.error();
			}
			Command c(UABI_SW_OBJ_ARENA, UABI_SW_ARENA_INVALIDATE);
			c.add_in(UABI_SW_ATTR_QPN, r.qpn).add_in(UABI_SW_ATTR_RKEY, r.rkey);
			if (r.kind == sw::MwRequest::RemoteInv)
				c.add_in(UABI_SW_ATTR_INV_FLAGS, std::uint32_t(UABI_SW_INV_REMOTE));
			auto res = impl->ctl.raw().call(std::move(c));
			return res ? 0 : res.error();
		} catch (...) {
			return ENOMEM;
		}
	});
}

void install_data_ops(struct ibv_context *ctx)
{
	ctx->ops.post_send = post_send;
	ctx->ops.post_recv = post_recv;
	ctx->ops.post_srq_recv = post_srq_recv;
	ctx->ops.poll_cq = poll_cq;
	ctx->ops.req_notify_cq = req_notify_cq;
	ctx->ops.alloc_mw = alloc_mw;
	ctx->ops.bind_mw = bind_mw;
	ctx->ops.dealloc_mw = dealloc_mw;
}

void install_qp_ex_ops(VQp *v)
{
	struct ibv_qp_ex *q = &v->qpx;
	q->wr_start = wr_start;
	q->wr_complete = wr_complete;
	q->wr_abort = wr_abort;
	q->wr_send = wr_send;
	q->wr_send_imm = wr_send_imm;
	q->wr_rdma_write = wr_rdma_write;
	q->wr_rdma_write_imm = wr_rdma_write_imm;
	q->wr_rdma_read = wr_rdma_read;
	q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	q->wr_atomic_fetch_add = wr_atomic_fetch_add;
	q->wr_bind_mw = wr_bind_mw;
	q->wr_local_inv = wr_local_inv;
	q->wr_send_inv = wr_send_inv;
	q->wr_send_tso = wr_send_tso;
	q->wr_atomic_write = wr_atomic_write;
	q->wr_set_ud_addr = wr_set_ud_addr;
	q->wr_set_xrc_srqn = wr_set_xrc_srqn;
	q->wr_set_inline_data = wr_set_inline_data;
	q->wr_set_inline_data_list = wr_set_inline_data_list;
	q->wr_set_sge = wr_set_sge;
	q->wr_set_sge_list = wr_set_sge_list;
}

namespace {

// Whether a signal that interrupted a wait would have interrupted libibverbs'
// read() of the event fd too: read(2) is restarted after a handler installed
// with SA_RESTART and fails with EINTR after one without, but poll(2), which
// stands in for it here, never restarts and does not say which signal ran.
// So: EINTR if any caught signal has a handler without SA_RESTART (a program
// that uses EINTR for timeouts installs one; signal(3) sets SA_RESTART).
// The signals of a faulting instruction are left out: they do not arrive
// while a thread sleeps (this library's own SIGSEGV guard is one of them).
bool a_handler_interrupts()
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS ||
		    sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sigaction(sig, nullptr, &sa))
			continue;
		const bool caught = (sa.sa_flags & SA_SIGINFO) ||
				    (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
		if (caught && !(sa.sa_flags & SA_RESTART))
			return true;
	}
	return false;
}

} // namespace

int wait_readable(ContextImpl *impl, int fd)
{
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		sw::Device *dp = impl->dp.get();
		int r = ::poll(&p, 1, dp ? dp->next_timeout_ms() : -1);
		const int err = errno;
		if (dp && dp->has_pending())
			dp->progress();
		if (r > 0)
			return (p.revents & (POLLERR | POLLNVAL)) ? EIO : 0;
		if (r < 0 && (err != EINTR || a_handler_interrupts()))
			return err;
		if (r == 0)
			return 0;	// the caller retries its read
	}
}

} // namespace uabi::verbs
