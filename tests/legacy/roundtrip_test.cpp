// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// For every covered verb: the old path (rdma-core 44 write-mode bytes ->
// translator) and the new path (newapi Context) make the same objects and
// give the same answers, on the in-process backend.  The two paths run on
// two fresh contexts doing the same things in the same order, so handles
// match; device-wide numbers (QPN, keys, CQN) differ and are compared by
// querying the object the old path made through the new API instead.
#include "legacy_test.hpp"

#include <rdma/uabi_sw.h>

#include <endian.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace uabi::legacy::test
{
namespace
{

TEST_F(LegacyTest, GetContextGivesAsyncFdAndOneVector)
{
	auto lc = LEGACY_OK(enc->get_context());
	async_fd = lc->async_fd;
	EXPECT_GE(lc->async_fd, 0);
	EXPECT_EQ(lc->num_comp_vectors, 1u);
	EXPECT_NE(fcntl(lc->async_fd, F_GETFD), -1);
	EXPECT_TRUE(fcntl(lc->async_fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_TRUE(tr->has_context());
	EXPECT_TRUE(tr->is_event_fd(lc->async_fd));
	// The context's async event queue is an object of the new uAPI.
	ASSERT_TRUE(ctx->create_async_event_queue().ok());
	EXPECT_EQ(old_counts().context[UABI_OBJ_ASYNC_EVENT], 1u);
	EXPECT_EQ(new_counts().context[UABI_OBJ_ASYNC_EVENT], 1u);
	// A second GET_CONTEXT: EINVAL, as ib_init_ucontext() answers.
	auto again = enc->get_context();
	EXPECT_EQ(again.error(), EINVAL);
	EXPECT_EQ(old_counts().context[UABI_OBJ_ASYNC_EVENT], 1u);
}

TEST_F(LegacyTest, QueryDeviceMatchesNewPath)
{
	both_contexts();
	auto o = LEGACY_OK(enc->query_device());
	auto n = LEGACY_OK(ctx->query_device());
	const uabi_device_attr &d = n->attr;
	EXPECT_EQ(o->fw_ver, d.fw_ver);
	EXPECT_EQ(be64toh(o->node_guid), d.node_guid);
	EXPECT_EQ(be64toh(o->sys_image_guid), d.sys_image_guid);
	EXPECT_EQ(o->max_mr_size, d.max_mr_size);
	EXPECT_EQ(o->page_size_cap, d.page_size_cap);
	EXPECT_EQ(o->vendor_id, d.vendor_id);
	EXPECT_EQ(o->hw_ver, d.hw_ver);
	EXPECT_EQ(o->max_qp, d.max_qp);
	EXPECT_EQ(o->max_qp_wr, d.max_qp_wr);
	EXPECT_EQ(o->device_cap_flags, d.device_cap_flags);
	EXPECT_EQ(o->max_sge, d.max_sge);
	EXPECT_EQ(o->max_cq, d.max_cq);
	EXPECT_EQ(o->max_cqe, d.max_cqe);
	EXPECT_EQ(o->max_mr, d.max_mr);
	EXPECT_EQ(o->max_pd, d.max_pd);
	EXPECT_EQ(o->max_qp_rd_atom, d.max_qp_rd_atom);
	EXPECT_EQ(o->max_qp_init_rd_atom, d.max_qp_init_rd_atom);
	EXPECT_EQ(o->atomic_cap, d.atomic_cap);
	EXPECT_EQ(o->max_srq, d.max_srq);
	EXPECT_EQ(o->max_srq_wr, d.max_srq_wr);
	EXPECT_EQ(o->max_srq_sge, d.max_srq_sge);
	EXPECT_EQ(o->max_pkeys, d.max_pkeys);
	EXPECT_EQ(o->local_ca_ack_delay, d.local_ca_ack_delay);
	EXPECT_EQ(o->phys_port_cnt, d.phys_port_cnt);

	auto x = LEGACY_OK(enc->query_device_ex());
	EXPECT_EQ(std::memcmp(&x->base, &*o, sizeof(*o)), 0);
	EXPECT_EQ(x->response_length, sizeof(ib_uverbs_ex_query_device_resp));
	EXPECT_EQ(x->device_cap_flags_ex, d.device_cap_flags);
}

TEST_F(LegacyTest, QueryPortMatchesNewPath)
{
	both_contexts();
	auto o = LEGACY_OK(enc->query_port(1));
	auto n = LEGACY_OK(ctx->query_port(1));
	EXPECT_EQ(o->state, n->state);
	EXPECT_EQ(o->max_mtu, n->max_mtu);
	EXPECT_EQ(o->active_mtu, n->active_mtu);
	EXPECT_EQ(o->gid_tbl_len, n->gid_tbl_len);
	EXPECT_EQ(o->port_cap_flags, n->port_cap_flags);
	EXPECT_EQ(o->max_msg_sz, n->max_msg_sz);
	EXPECT_EQ(o->pkey_tbl_len, n->pkey_tbl_len);
	EXPECT_EQ(o->lid, n->lid);
	EXPECT_EQ(o->sm_lid, n->sm_lid);
	EXPECT_EQ(o->link_layer, n->link_layer);
	EXPECT_EQ(enc->query_port(2).error(), ctx->query_port(2).error());
}

TEST_F(LegacyTest, PdAllocDealloc)
{
	both_contexts();
	auto o = LEGACY_OK(enc->alloc_pd());
	auto n = LEGACY_OK(ctx->alloc_pd());
	EXPECT_EQ(*o, *n);
	EXPECT_EQ(old_counts().context[UABI_OBJ_PD], 1u);
	LEGACY_OK(enc->dealloc_pd(*o));
	LEGACY_OK(ctx->dealloc_pd(*n));
	EXPECT_EQ(old_counts().context[UABI_OBJ_PD], 0u);
	EXPECT_EQ(enc->dealloc_pd(*o).error(), ENOENT);
	EXPECT_EQ(ctx->dealloc_pd(*n).error(), ENOENT);
}

TEST_F(LegacyTest, MrRegDereg)
{
	both_contexts();
	static char buf[8192];
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	Handle opd = *enc->alloc_pd(), npd = *ctx->alloc_pd();
	auto o = LEGACY_OK(
	    enc->reg_mr(opd, buf, sizeof(buf), reinterpret_cast<std::uintptr_t>(buf), access));
	auto n = LEGACY_OK(ctx->reg_mr(npd, buf, sizeof(buf), std::uint32_t(access)));
	EXPECT_EQ(o->handle, n->handle);
	// The old path's MR, seen through the new API.
	Command q(UABI_OBJ_MR, UABI_METHOD_QUERY, o->handle);
	OutAttr reg = q.add_out<uabi_mr_reg>(UABI_ATTR_MR_REG, 0);
	OutAttr keys = q.add_out<uabi_mr_keys>(UABI_ATTR_MR_KEYS, 0);
	auto m = LEGACY_OK(tr->context().call(std::move(q)));
	uabi_mr_reg r{};
	uabi_mr_keys k{};
	m->read(0, reg, r);
	m->read(0, keys, k);
	EXPECT_EQ(r.addr, reinterpret_cast<std::uintptr_t>(buf));
	EXPECT_EQ(r.length, sizeof(buf));
	EXPECT_EQ(r.access, std::uint32_t(access));
	EXPECT_EQ(k.lkey, o->lkey);
	EXPECT_EQ(k.rkey, o->rkey);
	// A PD in use: EBUSY on both paths.
	EXPECT_EQ(enc->dealloc_pd(opd).error(), EBUSY);
	EXPECT_EQ(ctx->dealloc_pd(npd).error(), EBUSY);
	LEGACY_OK(enc->dereg_mr(o->handle));
	LEGACY_OK(ctx->dereg_mr(n->handle));
	// Remote write without local write: EINVAL on both.
	EXPECT_EQ(enc->reg_mr(opd, buf, sizeof(buf), reinterpret_cast<std::uintptr_t>(buf),
			      IBV_ACCESS_REMOTE_WRITE)
		      .error(),
		  EINVAL);
	EXPECT_EQ(ctx->reg_mr(npd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE).error(), EINVAL);
	EXPECT_EQ(old_counts().context[UABI_OBJ_MR], 0u);
}

TEST_F(LegacyTest, MwAllocDealloc)
{
	both_contexts();
	Handle opd = *enc->alloc_pd(), npd = *ctx->alloc_pd();
	auto o = LEGACY_OK(enc->alloc_mw(opd, IBV_MW_TYPE_2));
	auto n = LEGACY_OK(ctx->alloc_mw(npd, UABI_MW_TYPE_2));
	EXPECT_EQ(o->handle, n->handle);
	EXPECT_NE(o->rkey >> 8, n->rkey >> 8) << "two windows of one user: two key indices";
	EXPECT_NE(o->rkey, 0u);
	EXPECT_EQ(old_counts().context[UABI_OBJ_MW], 1u);
	EXPECT_EQ(enc->dealloc_pd(opd).error(), EBUSY);
	EXPECT_EQ(enc->alloc_mw(opd, ibv_mw_type(3)).error(), EINVAL);
	LEGACY_OK(enc->dealloc_mw(o->handle));
	LEGACY_OK(ctx->dealloc_mw(n->handle));
	EXPECT_EQ(enc->dealloc_mw(o->handle).error(), ENOENT);
	EXPECT_EQ(old_counts().context[UABI_OBJ_MW], 0u);
	LEGACY_OK(enc->dealloc_pd(opd));
	LEGACY_OK(ctx->dealloc_pd(npd));
}

TEST_F(LegacyTest, CompChannelAndCqLifecycle)
{
	both_contexts();
	auto ch = LEGACY_OK(enc->create_comp_channel());
	auto nch = LEGACY_OK(ctx->create_comp_channel());
	EXPECT_GE(*ch, 0);
	EXPECT_TRUE(tr->is_event_fd(*ch));
	EXPECT_EQ(old_counts().context[UABI_OBJ_COMP_CHANNEL], 1u);

	auto o = LEGACY_OK(enc->create_cq(16, *ch, 0, 0x1234));
	auto n = LEGACY_OK(ctx->create_cq(16, nch->handle, 0, 0x1234));
	EXPECT_EQ(o->handle, n->handle);
	EXPECT_EQ(o->cqe, n->cqe);
	auto nq = LEGACY_OK(tr->context().call([&] {
		Command c(UABI_OBJ_CQ, UABI_METHOD_QUERY, o->handle);
		c.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP);
		return c;
	}()));

	auto ro = LEGACY_OK(enc->resize_cq(o->handle, 64));
	auto rn = LEGACY_OK(ctx->resize_cq(n->handle, 64));
	EXPECT_EQ(*ro, rn->cqe);

	// Closing the channel while a CQ uses it: destroyed once the CQ is.
	EXPECT_EQ(tr->release_event_fd(*ch), 0);
	close(*ch);
	EXPECT_EQ(old_counts().context[UABI_OBJ_COMP_CHANNEL], 1u);
	auto d = LEGACY_OK(enc->destroy_cq(o->handle));
	EXPECT_EQ(d->comp_events_reported, 0u);
	EXPECT_EQ(d->async_events_reported, 0u);
	EXPECT_EQ(old_counts().context[UABI_OBJ_COMP_CHANNEL], 0u);
	EXPECT_EQ(old_counts().context[UABI_OBJ_CQ], 0u);
	LEGACY_OK(ctx->destroy_cq(n->handle));
	LEGACY_OK(ctx->destroy_comp_channel(nch->handle));

	// The extended command.
	auto x = LEGACY_OK(enc->create_cq_ex(8, -1, 0, 7, 0));
	auto y = LEGACY_OK(ctx->create_cq(8));
	EXPECT_EQ(x->handle, y->handle);
	EXPECT_EQ(x->cqe, y->cqe);
	// Moderation is validated, then not supported by the sw device.
	EXPECT_EQ(enc->modify_cq(x->handle, IBV_CQ_ATTR_MODERATE, 4, 10).error(), EOPNOTSUPP);
	EXPECT_EQ(enc->modify_cq(x->handle, 0, 4, 10).error(), EINVAL);
	EXPECT_EQ(enc->modify_cq(x->handle, 2, 4, 10).error(), EOPNOTSUPP);
	EXPECT_EQ(enc->modify_cq(999, IBV_CQ_ATTR_MODERATE, 4, 10).error(), EINVAL);
	LEGACY_OK(enc->destroy_cq(x->handle));
}

struct QpSetup {
	Handle pd, cq;
};

// RESET -> INIT -> RTR -> RTS with the attributes ibv_modify_qp(3) asks.
void to_rts_old(Encoder &e, Handle qp, std::uint32_t dest_qpn)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	LEGACY_OK(e.modify_qp(
	    qp, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 17;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.sl = 2;
	LEGACY_OK(e.modify_qp(qp, a,
			      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER));
	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 33;
	a.max_rd_atomic = 1;
	LEGACY_OK(e.modify_qp(qp, a,
			      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
}

void to_rts_new(Context &c, Handle qp, std::uint32_t dest_qpn)
{
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	LEGACY_OK(c.modify_qp(
	    qp, a, UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT | UABI_QP_ACCESS_FLAGS));
	a = uabi_qp_attr{};
	a.qp_state = UABI_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 17;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.sl = 2;
	LEGACY_OK(c.modify_qp(qp, a,
			      UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU | UABI_QP_DEST_QPN |
				  UABI_QP_RQ_PSN | UABI_QP_MAX_DEST_RD_ATOMIC |
				  UABI_QP_MIN_RNR_TIMER));
	a = uabi_qp_attr{};
	a.qp_state = UABI_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 33;
	a.max_rd_atomic = 1;
	LEGACY_OK(c.modify_qp(qp, a,
			      UABI_QP_STATE | UABI_QP_TIMEOUT | UABI_QP_RETRY_CNT |
				  UABI_QP_RNR_RETRY | UABI_QP_SQ_PSN | UABI_QP_MAX_QP_RD_ATOMIC));
}

// The legacy QUERY_QP answer and the new query of the same state agree.
void expect_same_query(const ib_uverbs_query_qp_resp &o, const QpQuery &n)
{
	EXPECT_EQ(o.qp_state, n.attr.qp_state);
	EXPECT_EQ(o.cur_qp_state, n.attr.cur_qp_state);
	EXPECT_EQ(o.path_mtu, n.attr.path_mtu);
	EXPECT_EQ(o.rq_psn, n.attr.rq_psn);
	EXPECT_EQ(o.sq_psn, n.attr.sq_psn);
	EXPECT_EQ(o.qp_access_flags, n.attr.qp_access_flags);
	EXPECT_EQ(o.pkey_index, n.attr.pkey_index);
	EXPECT_EQ(o.max_rd_atomic, n.attr.max_rd_atomic);
	EXPECT_EQ(o.max_dest_rd_atomic, n.attr.max_dest_rd_atomic);
	EXPECT_EQ(o.min_rnr_timer, n.attr.min_rnr_timer);
	EXPECT_EQ(o.port_num, n.attr.port_num);
	EXPECT_EQ(o.timeout, n.attr.timeout);
	EXPECT_EQ(o.retry_cnt, n.attr.retry_cnt);
	EXPECT_EQ(o.rnr_retry, n.attr.rnr_retry);
	EXPECT_EQ(o.dest.dlid, n.attr.ah_attr.dlid);
	EXPECT_EQ(o.dest.sl, n.attr.ah_attr.sl);
	EXPECT_EQ(o.dest.port_num, n.attr.ah_attr.port_num);
	EXPECT_EQ(o.max_send_wr, n.init.cap.max_send_wr);
	EXPECT_EQ(o.max_recv_wr, n.init.cap.max_recv_wr);
	EXPECT_EQ(o.max_send_sge, n.init.cap.max_send_sge);
	EXPECT_EQ(o.max_inline_data, n.init.cap.max_inline_data);
	EXPECT_EQ(o.sq_sig_all, n.init.sq_sig_all);
}

TEST_F(LegacyTest, RcQpCreateModifyToRtsQueryDestroy)
{
	both_contexts();
	Handle opd = *enc->alloc_pd(), npd = *ctx->alloc_pd();
	CqInfo ocq = *enc->create_cq(16, -1, 0, 0), ncq = *ctx->create_cq(16);

	LegacyQpInit li;
	li.pd = opd;
	li.send_cq = li.recv_cq = ocq.handle;
	li.cap = small_cap();
	li.sq_sig_all = true;
	li.user_handle = 0xabc;
	auto o = LEGACY_OK(enc->create_qp(li));
	QpCreate qc;
	qc.pd = npd;
	qc.send_cq = qc.recv_cq = ncq.handle;
	qc.init = new_init(UABI_QPT_RC);
	qc.init.sq_sig_all = 1;
	qc.user_handle = 0xabc;
	auto n = LEGACY_OK(ctx->create_qp(qc));
	EXPECT_EQ(o->handle, n->handle);
	EXPECT_NE(o->resp.qpn, 0u);
	EXPECT_EQ(std::memcmp(&o->resp.cap, &n->resp.cap, sizeof(uabi_qp_cap)), 0);

	to_rts_old(*enc, o->handle, n->resp.qpn);
	to_rts_new(*ctx, n->handle, o->resp.qpn);

	auto oq = LEGACY_OK(enc->query_qp(o->handle, IBV_QP_STATE));
	auto nq = LEGACY_OK(ctx->query_qp(n->handle));
	expect_same_query(oq->get(), *nq);
	EXPECT_EQ(oq->get().qp_state, IBV_QPS_RTS);
	EXPECT_EQ(oq->get().dest_qp_num, n->resp.qpn);
	// The old path's QP through the new API: same state.
	auto cross = LEGACY_OK(tr->context().query_qp(o->handle));
	expect_same_query(oq->get(), *cross);

	// Objects in use.
	EXPECT_EQ(enc->destroy_cq(ocq.handle).error(), EBUSY);
	EXPECT_EQ(ctx->destroy_cq(ncq.handle).error(), EBUSY);

	auto ev = LEGACY_OK(enc->destroy_qp(o->handle));
	EXPECT_EQ(*ev, 0u);
	LEGACY_OK(ctx->destroy_qp(n->handle));
	EXPECT_EQ(old_counts().context[UABI_OBJ_QP], 0u);
	LEGACY_OK(enc->destroy_cq(ocq.handle));
	LEGACY_OK(enc->dealloc_pd(opd));
}

TEST_F(LegacyTest, UdUcAndSrqQps)
{
	both_contexts();
	Handle opd = *enc->alloc_pd(), npd = *ctx->alloc_pd();
	CqInfo ocq = *enc->create_cq(16, -1, 0, 0), ncq = *ctx->create_cq(16);
	ibv_srq_attr sa{16, 1, 0};
	auto osrq = LEGACY_OK(enc->create_srq(opd, sa, 5));
	SrqCreate sc;
	sc.pd = npd;
	sc.init.attr.max_wr = 16;
	sc.init.attr.max_sge = 1;
	auto nsrq = LEGACY_OK(ctx->create_srq(sc));
	EXPECT_EQ(osrq->handle, nsrq->handle);
	EXPECT_EQ(osrq->resp.attr.max_wr, nsrq->resp.attr.max_wr);
	EXPECT_EQ(osrq->resp.attr.max_sge, nsrq->resp.attr.max_sge);
	EXPECT_EQ(osrq->resp.srqn, 0u); // basic SRQs have no number

	for (ibv_qp_type t : {IBV_QPT_UD, IBV_QPT_UC, IBV_QPT_RC}) {
		LegacyQpInit li;
		li.pd = opd;
		li.send_cq = li.recv_cq = ocq.handle;
		li.cap = small_cap();
		li.qp_type = t;
		if (t == IBV_QPT_RC)
			li.srq = osrq->handle;
		auto o = LEGACY_OK(enc->create_qp(li));
		QpCreate qc;
		qc.pd = npd;
		qc.send_cq = qc.recv_cq = ncq.handle;
		qc.init = new_init(std::uint32_t(t));
		if (t == IBV_QPT_RC)
			qc.srq = nsrq->handle;
		auto n = LEGACY_OK(ctx->create_qp(qc));
		EXPECT_EQ(o->handle, n->handle);
		EXPECT_EQ(std::memcmp(&o->resp.cap, &n->resp.cap, sizeof(uabi_qp_cap)), 0)
		    << "type " << t;
		auto oq = LEGACY_OK(enc->query_qp(o->handle, 0));
		auto nq = LEGACY_OK(ctx->query_qp(n->handle));
		expect_same_query(oq->get(), *nq);
		// ATTACH_MCAST / DETACH_MCAST: UD only, the same answers.
		const std::uint8_t g[16] = {0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
		if (t == IBV_QPT_UD) {
			LEGACY_OK(enc->attach_mcast(o->handle, g, 0xc009));
			LEGACY_OK(ctx->attach_mcast(n->handle, g, 0xc009));
			LEGACY_OK(enc->detach_mcast(o->handle, g, 0xc009));
			EXPECT_EQ(enc->detach_mcast(o->handle, g, 0xc009).error(), EINVAL);
			LEGACY_OK(enc->attach_mcast(o->handle, g, 0xc009)); // destroyed attached
		} else {
			EXPECT_EQ(enc->attach_mcast(o->handle, g, 0xc009).error(), EINVAL) << t;
			EXPECT_EQ(ctx->attach_mcast(n->handle, g, 0xc009).error(), EINVAL) << t;
		}
	}
	EXPECT_EQ(enc->destroy_srq(osrq->handle).error(), EBUSY);

	// SRQ modify and query.
	ibv_srq_attr m{32, 0, 4};
	LEGACY_OK(enc->modify_srq(osrq->handle, m, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT));
	uabi_srq_attr nm{32, 0, 4, 0};
	LEGACY_OK(ctx->modify_srq(nsrq->handle, nm, 3));
	auto oa = LEGACY_OK(enc->query_srq(osrq->handle));
	auto na = LEGACY_OK(ctx->query_srq(nsrq->handle));
	EXPECT_EQ(oa->max_wr, na->max_wr);
	EXPECT_EQ(oa->max_sge, na->max_sge);
	EXPECT_EQ(oa->srq_limit, na->srq_limit);
	EXPECT_EQ(enc->modify_srq(osrq->handle, m, 0).error(),
		  ctx->modify_srq(nsrq->handle, nm, 0).error());
}

TEST_F(LegacyTest, ExtendedQpCommands)
{
	both_contexts();
	Handle opd = *enc->alloc_pd(), npd = *ctx->alloc_pd();
	CqInfo ocq = *enc->create_cq(16, -1, 0, 0), ncq = *ctx->create_cq(16);
	LegacyQpInit li;
	li.pd = opd;
	li.send_cq = li.recv_cq = ocq.handle;
	li.cap = small_cap();
	auto o = LEGACY_OK(enc->create_qp_ex(li));
	QpCreate qc;
	qc.pd = npd;
	qc.send_cq = qc.recv_cq = ncq.handle;
	qc.init = new_init(UABI_QPT_RC);
	auto n = LEGACY_OK(ctx->create_qp(qc));
	EXPECT_EQ(o->handle, n->handle);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	LEGACY_OK(enc->modify_qp_ex(
	    o->handle, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	EXPECT_EQ(LEGACY_OK(enc->query_qp(o->handle, 0))->get().qp_state, IBV_QPS_INIT);
	EXPECT_EQ(enc->modify_qp_ex(o->handle, a, IBV_QP_RATE_LIMIT).error(), EOPNOTSUPP);
	// Unknown create flags: EINVAL, as from the core.
	li.create_flags = 1u << 30;
	EXPECT_EQ(enc->create_qp_ex(li).error(), EINVAL);
}

TEST_F(LegacyTest, AddressHandles)
{
	both_contexts();
	Handle opd = *enc->alloc_pd(), npd = *ctx->alloc_pd();
	ibv_ah_attr a{};
	a.dlid = 1;
	a.sl = 3;
	a.port_num = 1;
	a.is_global = 1;
	a.grh.hop_limit = 64;
	a.grh.dgid.raw[15] = 1;
	auto o = LEGACY_OK(enc->create_ah(opd, a, 9));
	uabi_ah_attr na{};
	na.dlid = 1;
	na.sl = 3;
	na.port_num = 1;
	na.is_global = 1;
	na.grh.hop_limit = 64;
	na.grh.dgid[15] = 1;
	auto n = LEGACY_OK(ctx->create_ah(npd, na));
	EXPECT_EQ(*o, *n);
	Command q(UABI_OBJ_AH, UABI_METHOD_QUERY, *o);
	OutAttr out = q.add_out<uabi_ah_attr>(UABI_ATTR_AH_ATTR);
	auto m = LEGACY_OK(tr->context().call(std::move(q)));
	uabi_ah_attr got{};
	m->read(0, out, got);
	EXPECT_EQ(std::memcmp(&got, &na, sizeof(na)), 0);
	a.port_num = 2;
	EXPECT_EQ(enc->create_ah(opd, a, 0).error(), EINVAL);
	LEGACY_OK(enc->destroy_ah(*o));
	EXPECT_EQ(enc->destroy_ah(*o).error(), ENOENT);
}

TEST_F(LegacyTest, UpstreamXrc)
{
	both_contexts();
	char path[] = "/tmp/uabi-legacy-xrc-XXXXXX";
	int file = mkstemp(path);
	ASSERT_GE(file, 0);
	unlink(path);
	// No domain for this file yet: EAGAIN without O_CREAT (Linux).
	EXPECT_EQ(enc->open_xrcd(file, 0).error(), EAGAIN);
	auto ox = LEGACY_OK(enc->open_xrcd(file, O_CREAT));
	auto nx = LEGACY_OK(ctx->open_xrcd(file, UABI_XRCD_O_CREAT));
	EXPECT_EQ(*ox, *nx);
	EXPECT_EQ(enc->open_xrcd(file, O_CREAT | O_EXCL).error(), EINVAL);
	Handle opd = *enc->alloc_pd();
	CqInfo ocq = *enc->create_cq(16, -1, 0, 0);

	// XRC SRQ.
	ibv_srq_attr sa{16, 1, 0};
	auto srq = LEGACY_OK(enc->create_xsrq(opd, IBV_SRQT_XRC, *ox, ocq.handle, sa, 0));
	EXPECT_NE(srq->resp.srqn, 0u);

	// The receive side: create_qp(XRC_RECV) is a register with 0xFFFFFFFF.
	LegacyQpInit li;
	li.pd = *ox;
	li.qp_type = IBV_QPT_XRC_RECV;
	auto tgt = LEGACY_OK(enc->create_qp(li));
	EXPECT_NE(tgt->resp.qpn, 0u);
	// Opened (a second registration) by the new path's context.
	std::uint32_t qpn = tgt->resp.qpn;
	auto reg = LEGACY_OK(ctx->register_xrc_rcv_qp(*nx, qpn));
	// And by the old path again, with OPEN_QP.
	auto opened = LEGACY_OK(enc->open_qp(*ox, qpn, IBV_QPT_XRC_RECV, 77));
	EXPECT_EQ(opened->resp.qpn, qpn);
	EXPECT_EQ(enc->open_qp(*ox, qpn, IBV_QPT_RC, 0).error(), EINVAL);
	EXPECT_EQ(enc->open_qp(*ox, 0xFFFFFFFFu, IBV_QPT_XRC_RECV, 0).error(), EINVAL);

	// Modify the receive QP through INIT and RTR (XRC_TGT ignores the
	// send-side attributes the kernel drops for it).
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	LEGACY_OK(enc->modify_qp(
	    tgt->handle, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x22;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	LEGACY_OK(enc->modify_qp(tgt->handle, a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER | IBV_QP_RETRY_CNT));
	auto q = LEGACY_OK(ctx->query_xrc_rcv_qp(*nx, qpn));
	EXPECT_EQ(q->qp_state, UABI_QPS_RTR);
	EXPECT_EQ(q->dest_qp_num, 0x22u);

	// XRC send QP.
	li = LegacyQpInit{};
	li.pd = opd;
	li.send_cq = ocq.handle;
	li.qp_type = IBV_QPT_XRC_SEND;
	li.cap = small_cap();
	auto ini = LEGACY_OK(enc->create_qp(li));
	EXPECT_EQ(ini->resp.cap.max_recv_wr, 0u);
	// INIT -> RTR with the attributes the kernel ignores for XRC_INI.
	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	LEGACY_OK(enc->modify_qp(
	    ini->handle, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	LEGACY_OK(enc->modify_qp(ini->handle, a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER));

	// Destroying a registration is an unregister: the QP lives on.
	auto before = old_counts().device[UABI_OBJ_QP];
	LEGACY_OK(enc->destroy_qp(tgt->handle));
	EXPECT_EQ(old_counts().device[UABI_OBJ_QP], before - 1);
	EXPECT_TRUE(ctx->query_xrc_rcv_qp(*nx, qpn).ok());
	LEGACY_OK(enc->destroy_qp(opened->handle));
	LEGACY_OK(ctx->destroy_qp(*reg));
	EXPECT_FALSE(ctx->query_xrc_rcv_qp(*nx, qpn).ok());

	LEGACY_OK(enc->destroy_qp(ini->handle));
	LEGACY_OK(enc->destroy_srq(srq->handle));
	LEGACY_OK(enc->close_xrcd(*ox));
	EXPECT_EQ(enc->close_xrcd(*ox).error(), ENOENT);
	close(file);
}

class LegacyOfedTest : public LegacyTest
{
      protected:
	void SetUp() override { open_paths(Dialect::Ofed); }
};

TEST_F(LegacyOfedTest, XrcDialect)
{
	both_contexts();
	EXPECT_EQ(tr->dialect(), Dialect::Ofed);
	auto d = LEGACY_OK(enc->ofed_open_xrc_domain(-1, O_CREAT));
	auto nd = LEGACY_OK(ctx->open_xrcd(-1, UABI_XRCD_O_CREAT));
	EXPECT_EQ(*d, *nd);

	// create -> register(xrcd, 0xFFFFFFFF)
	auto qpn = LEGACY_OK(enc->ofed_create_xrc_rcv_qp(*d, small_cap(), false, 0x55));
	EXPECT_NE(*qpn, 0u);
	std::uint32_t nqpn = UABI_XRC_QPN_CREATE;
	auto nreg = LEGACY_OK(ctx->register_xrc_rcv_qp(*nd, nqpn, new_init(UABI_QPT_XRC_RECV)));
	EXPECT_NE(nqpn, *qpn);
	// The registration is a QP handle of the context, as on the new path.
	EXPECT_EQ(old_counts().context[UABI_OBJ_QP], new_counts().context[UABI_OBJ_QP]);

	// modify through INIT -> RTR, query.
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	LEGACY_OK(enc->ofed_modify_xrc_rcv_qp(
	    *d, *qpn, a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	uabi_qp_attr na{};
	na.qp_state = UABI_QPS_INIT;
	na.port_num = 1;
	LEGACY_OK(ctx->modify_xrc_rcv_qp(*nd, nqpn, na,
					 UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
					     UABI_QP_ACCESS_FLAGS));
	auto oq = LEGACY_OK(enc->ofed_query_xrc_rcv_qp(*d, *qpn, 0));
	auto nq = LEGACY_OK(ctx->query_xrc_rcv_qp(*nd, nqpn));
	EXPECT_EQ(oq->get().qp_state, nq->qp_state);
	EXPECT_EQ(oq->get().port_num, nq->port_num);
	EXPECT_EQ(oq->get().qp_state, IBV_QPS_INIT);

	// reg -> register(xrcd, qpn); unreg -> unregister.
	LEGACY_OK(enc->ofed_reg_xrc_rcv_qp(*d, *qpn));
	EXPECT_EQ(old_counts().context[UABI_OBJ_QP], 2u);
	LEGACY_OK(enc->ofed_unreg_xrc_rcv_qp(*d, *qpn));
	EXPECT_EQ(old_counts().context[UABI_OBJ_QP], 1u);
	EXPECT_EQ(enc->ofed_reg_xrc_rcv_qp(*d, 0x7777).error(), EINVAL);
	LEGACY_OK(enc->ofed_unreg_xrc_rcv_qp(*d, *qpn));
	EXPECT_EQ(old_counts().context[UABI_OBJ_QP], 0u);
	EXPECT_EQ(enc->ofed_query_xrc_rcv_qp(*d, *qpn, 0).error(), EINVAL);
	EXPECT_EQ(enc->ofed_unreg_xrc_rcv_qp(*d, *qpn).error(), EINVAL);

	// XRC SRQ and the OFED XRC (send) QP type.
	Handle pd = *enc->alloc_pd();
	CqInfo cq = *enc->create_cq(8, -1, 0, 0);
	ibv_srq_attr sa{16, 1, 0};
	auto srq = LEGACY_OK(enc->ofed_create_xrc_srq(pd, *d, cq.handle, sa, 1));
	EXPECT_NE(srq->resp.srqn, 0u);
	LegacyQpInit li;
	li.pd = pd;
	li.send_cq = li.recv_cq = cq.handle;
	li.srq = *d; // OFED put the XRC domain in srq_handle
	li.qp_type = ibv_qp_type(UABI_OFED_QPT_XRC);
	li.cap = small_cap();
	auto ini = LEGACY_OK(enc->create_qp(li));
	auto q = LEGACY_OK(tr->context().query_qp(ini->handle));
	EXPECT_EQ(q->init.qp_type, UABI_QPT_XRC_SEND);
	LEGACY_OK(enc->destroy_qp(ini->handle));
	LEGACY_OK(enc->destroy_srq(srq->handle));
	EXPECT_EQ(enc->ofed_close_xrc_domain(*d).error(), 0);
	LEGACY_OK(ctx->destroy_qp(*nreg));
}

TEST_F(LegacyTest, DialectFromEnvironment)
{
	EXPECT_EQ(*parse_dialect("ofed"), Dialect::Ofed);
	EXPECT_EQ(*parse_dialect("upstream"), Dialect::Upstream);
	EXPECT_EQ(parse_dialect("mlnx").error(), EINVAL);
	setenv("UABI_LEGACY_DIALECT", "ofed", 1);
	EXPECT_EQ(*dialect_from_env(), Dialect::Ofed);
	setenv("UABI_BACKEND", "inproc", 1);
	auto t = Translator::open();
	ASSERT_TRUE(t.ok());
	EXPECT_EQ((*t)->dialect(), Dialect::Ofed);
	unsetenv("UABI_BACKEND");
	setenv("UABI_LEGACY_DIALECT", "bogus", 1);
	EXPECT_EQ(dialect_from_env().error(), EINVAL);
	unsetenv("UABI_LEGACY_DIALECT");
	EXPECT_EQ(*dialect_from_env(), Dialect::Upstream);
	tr->set_dialect(Dialect::Ofed);
	EXPECT_EQ(tr->dialect(), Dialect::Ofed);
}

// Closing the legacy context (a uverbs file's release) destroys every
// object it held, whatever its type and dependencies: the device then
// counts, type by type, exactly what the context held fewer, and the new
// path's context keeps its own.
TEST_F(LegacyTest, ClosingTheContextDropsEverything)
{
	both_contexts();
	char path[] = "/tmp/uabi-legacy-close-XXXXXX";
	int file = mkstemp(path);
	ASSERT_GE(file, 0);
	unlink(path);
	static char buf[4096];
	Handle pd = *LEGACY_OK(enc->alloc_pd());
	LEGACY_OK(enc->reg_mr(pd, buf, sizeof(buf), reinterpret_cast<std::uintptr_t>(buf),
			      IBV_ACCESS_LOCAL_WRITE));
	int ch = *LEGACY_OK(enc->create_comp_channel());
	CqInfo cq = *LEGACY_OK(enc->create_cq(16, ch, 0, 0));
	ibv_srq_attr sa{16, 1, 0};
	auto srq = LEGACY_OK(enc->create_srq(pd, sa, 5));
	LegacyQpInit li;
	li.pd = pd;
	li.send_cq = li.recv_cq = cq.handle;
	li.srq = srq->handle;
	li.cap = small_cap();
	LEGACY_OK(enc->create_qp(li));
	ibv_ah_attr aa{};
	aa.dlid = 1;
	aa.port_num = 1;
	LEGACY_OK(enc->create_ah(pd, aa, 0));
	Handle x = *LEGACY_OK(enc->open_xrcd(file, O_CREAT));
	LEGACY_OK(enc->create_xsrq(pd, IBV_SRQT_XRC, x, cq.handle, sa, 0));
	li = LegacyQpInit{};
	li.pd = x;
	li.qp_type = IBV_QPT_XRC_RECV;
	LEGACY_OK(enc->create_qp(li));
	Handle npd = *LEGACY_OK(ctx->alloc_pd());

	const uabi_counters held = old_counts();
	const uabi_counters before = new_counts();
	for (unsigned t : {UABI_OBJ_PD, UABI_OBJ_MR, UABI_OBJ_CQ, UABI_OBJ_COMP_CHANNEL,
			   UABI_OBJ_ASYNC_EVENT, UABI_OBJ_QP, UABI_OBJ_SRQ, UABI_OBJ_AH,
			   UABI_OBJ_XRCD})
		EXPECT_GT(held.context[t], 0u) << "the old path holds a " << t;
	EXPECT_EQ(held.context[UABI_OBJ_QP], 2u) << "an RC QP and an XRC registration";
	EXPECT_EQ(held.context[UABI_OBJ_SRQ], 2u) << "a basic and an XRC SRQ";

	tr.reset();
	enc.reset();
	const uabi_counters after = new_counts();
	for (unsigned t = 1; t < UABI_OBJ_MAX_CORE; t++)
		EXPECT_EQ(after.device[t], before.device[t] - held.context[t])
		    << "type " << t << ": the closed context's are gone";
	EXPECT_EQ(after.contexts, before.contexts - 1);
	EXPECT_EQ(std::memcmp(after.context, before.context, sizeof(after.context)), 0)
	    << "the new path's context lost nothing";
	LEGACY_OK(ctx->dealloc_pd(npd));
	close(ch);
	close(file);
}

} // namespace
} // namespace uabi::legacy::test

namespace uabi::legacy::test
{
namespace
{

// Sets the sw device's port state (raises a port event on every context).
void set_port_state(Context &c, std::uint32_t state)
{
	Command cmd = driver_command(UABI_SW_OBJ_PORT, Handle(0));
	cmd.add_in(UABI_SW_ATTR_PORT_NUM, std::uint32_t(1));
	cmd.add_in(UABI_SW_ATTR_PORT_STATE, state);
	ASSERT_TRUE(c.call(std::move(cmd)).ok());
}

TEST_F(LegacyTest, AsyncEventsReadInTheKernelFormat)
{
	both_contexts();
	char buf[64];
	EXPECT_EQ(tr->read_event(async_fd, buf, sizeof(buf), true), -EAGAIN);
	set_port_state(*ctx, 1); // IBV_PORT_DOWN
	ib_uverbs_async_event_desc d{};
	EXPECT_EQ(tr->read_event(async_fd, &d, 8, true), -EINVAL); // short buffer
	ASSERT_EQ(tr->read_event(async_fd, &d, sizeof(d), true), long(sizeof(d)));
	EXPECT_EQ(d.event_type, std::uint32_t(IBV_EVENT_PORT_ERR));
	EXPECT_EQ(d.element, 1u);
	set_port_state(*ctx, 4); // IBV_PORT_ACTIVE
	ASSERT_EQ(tr->read_event(async_fd, &d, sizeof(d), false), long(sizeof(d)));
	EXPECT_EQ(d.event_type, std::uint32_t(IBV_EVENT_PORT_ACTIVE));
	EXPECT_EQ(tr->read_event(async_fd, &d, sizeof(d), true), -EAGAIN);
	// A completion channel with nothing pending.
	int ch = *enc->create_comp_channel();
	ib_uverbs_comp_event_desc c{};
	EXPECT_EQ(tr->read_event(ch, &c, sizeof(c), true), -EAGAIN);
	EXPECT_EQ(tr->read_event(12345, &c, sizeof(c), true), -EBADF);
	int fds[4];
	EXPECT_EQ(tr->event_fds(fds, 4), 2);
	close(ch);
}

} // namespace
} // namespace uabi::legacy::test
