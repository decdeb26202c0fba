// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 6: the QP state machine, table-driven.  The table below is this
// suite's own copy of the modify-QP rules of the IB specification
// (chapter 10.3, "QP attributes by transition"), as ibv_modify_qp(3) and
// the Linux kernel's ib_modify_qp_is_ok() state them: for each transition
// and transport, the attributes that must and that may accompany
// IBV_QP_STATE.  Transitions into RESET are allowed from every state, into
// ERR from every state but RESET (as in Linux's qp_state_table), with no
// other attribute.
#include "support/uabi_test.hpp"

#include <optional>

using namespace uabi;
using namespace uabi::test;

namespace
{

enum class Kind { RC, UC, UD, XRC_SEND, XRC_RECV };

const char *kind_name(Kind k)
{
	switch (k) {
	case Kind::RC:
		return "RC";
	case Kind::UC:
		return "UC";
	case Kind::UD:
		return "UD";
	case Kind::XRC_SEND:
		return "XRC_SEND";
	case Kind::XRC_RECV:
		return "XRC_RECV";
	}
	return "?";
}

const char *state_name(std::uint32_t s)
{
	static const char *const n[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
	return s < 7 ? n[s] : "BOGUS";
}

enum : std::uint32_t {
	RESET = UABI_QPS_RESET,
	INIT = UABI_QPS_INIT,
	RTR = UABI_QPS_RTR,
	RTS = UABI_QPS_RTS,
	SQD = UABI_QPS_SQD,
	SQE = UABI_QPS_SQE,
	ERR = UABI_QPS_ERR,
};

// Attribute mask bits (enum ibv_qp_attr_mask).
enum : std::uint32_t {
	M_STATE = 1u << 0,
	M_CUR_STATE = 1u << 1,
	M_EN_SQD_ASYNC_NOTIFY = 1u << 2,
	M_ACCESS_FLAGS = 1u << 3,
	M_PKEY_INDEX = 1u << 4,
	M_PORT = 1u << 5,
	M_QKEY = 1u << 6,
	M_AV = 1u << 7,
	M_PATH_MTU = 1u << 8,
	M_TIMEOUT = 1u << 9,
	M_RETRY_CNT = 1u << 10,
	M_RNR_RETRY = 1u << 11,
	M_RQ_PSN = 1u << 12,
	M_MAX_QP_RD_ATOMIC = 1u << 13,
	M_ALT_PATH = 1u << 14,
	M_MIN_RNR_TIMER = 1u << 15,
	M_SQ_PSN = 1u << 16,
	M_MAX_DEST_RD_ATOMIC = 1u << 17,
	M_PATH_MIG_STATE = 1u << 18,
	M_CAP = 1u << 19,
	M_DEST_QPN = 1u << 20,
	M_NUM_BITS = 21,
};

struct Masks {
	std::uint32_t required; // without M_STATE
	std::uint32_t optional;
};

// The spec table.  nullopt: the transition is not allowed.
std::optional<Masks> spec(Kind k, std::uint32_t from, std::uint32_t to)
{
	const bool ud = k == Kind::UD;
	if (from > ERR || to > ERR)
		return std::nullopt;
	if (to == RESET || (to == ERR && from != RESET))
		return Masks{0, 0};

	// RESET -> INIT
	if (from == RESET && to == INIT) {
		if (ud)
			return Masks{M_PKEY_INDEX | M_PORT | M_QKEY, 0};
		return Masks{M_PKEY_INDEX | M_PORT | M_ACCESS_FLAGS, 0};
	}
	// INIT -> INIT
	if (from == INIT && to == INIT) {
		if (ud)
			return Masks{0, M_PKEY_INDEX | M_PORT | M_QKEY};
		return Masks{0, M_PKEY_INDEX | M_PORT | M_ACCESS_FLAGS};
	}
	// INIT -> RTR
	if (from == INIT && to == RTR) {
		const std::uint32_t uc_req = M_AV | M_PATH_MTU | M_DEST_QPN | M_RQ_PSN;
		const std::uint32_t rc_req = uc_req | M_MAX_DEST_RD_ATOMIC | M_MIN_RNR_TIMER;
		const std::uint32_t conn_opt = M_ALT_PATH | M_ACCESS_FLAGS | M_PKEY_INDEX;
		switch (k) {
		case Kind::UD:
			return Masks{0, M_PKEY_INDEX | M_QKEY};
		case Kind::UC:
			return Masks{uc_req, conn_opt};
		case Kind::XRC_SEND:
			return Masks{uc_req, conn_opt};
		case Kind::RC:
			return Masks{rc_req, conn_opt};
		case Kind::XRC_RECV:
			return Masks{rc_req, conn_opt};
		}
	}
	// Optional attributes of every transition into RTS.
	auto rts_opt = [k]() -> std::uint32_t {
		switch (k) {
		case Kind::UD:
			return M_CUR_STATE | M_QKEY;
		case Kind::UC:
		case Kind::XRC_SEND:
			return M_CUR_STATE | M_ALT_PATH | M_ACCESS_FLAGS | M_PATH_MIG_STATE;
		case Kind::RC:
		case Kind::XRC_RECV:
			return M_CUR_STATE | M_ALT_PATH | M_ACCESS_FLAGS | M_PATH_MIG_STATE |
			       M_MIN_RNR_TIMER;
		}
		return 0;
	};
	// RTR -> RTS
	if (from == RTR && to == RTS) {
		const std::uint32_t rc_req =
		    M_TIMEOUT | M_RETRY_CNT | M_RNR_RETRY | M_SQ_PSN | M_MAX_QP_RD_ATOMIC;
		switch (k) {
		case Kind::UD:
		case Kind::UC:
			return Masks{M_SQ_PSN, rts_opt()};
		case Kind::RC:
		case Kind::XRC_SEND:
			return Masks{rc_req, rts_opt()};
		case Kind::XRC_RECV:
			return Masks{M_TIMEOUT | M_SQ_PSN, rts_opt()};
		}
	}
	// RTS -> RTS, SQD -> RTS
	if ((from == RTS || from == SQD) && to == RTS)
		return Masks{0, rts_opt()};
	// RTS -> SQD
	if (from == RTS && to == SQD)
		return Masks{0, M_EN_SQD_ASYNC_NOTIFY};
	// SQD -> SQD
	if (from == SQD && to == SQD) {
		switch (k) {
		case Kind::UD:
			return Masks{0, M_PKEY_INDEX | M_QKEY};
		case Kind::UC:
			return Masks{0, M_AV | M_ALT_PATH | M_ACCESS_FLAGS | M_PKEY_INDEX |
					    M_PATH_MIG_STATE};
		case Kind::RC:
			return Masks{0, M_PORT | M_AV | M_TIMEOUT | M_RETRY_CNT | M_RNR_RETRY |
					    M_MAX_QP_RD_ATOMIC | M_MAX_DEST_RD_ATOMIC | M_ALT_PATH |
					    M_ACCESS_FLAGS | M_PKEY_INDEX | M_MIN_RNR_TIMER |
					    M_PATH_MIG_STATE};
		case Kind::XRC_SEND:
			return Masks{0, M_PORT | M_AV | M_TIMEOUT | M_RETRY_CNT | M_RNR_RETRY |
					    M_MAX_QP_RD_ATOMIC | M_ALT_PATH | M_ACCESS_FLAGS |
					    M_PKEY_INDEX | M_PATH_MIG_STATE};
		case Kind::XRC_RECV:
			return Masks{0, M_PORT | M_AV | M_TIMEOUT | M_MAX_DEST_RD_ATOMIC |
					    M_ALT_PATH | M_ACCESS_FLAGS | M_PKEY_INDEX |
					    M_MIN_RNR_TIMER | M_PATH_MIG_STATE};
		}
	}
	// SQE -> RTS exists in the spec but SQE cannot be entered by a
	// modify; everything else is invalid.
	return std::nullopt;
}

std::uint32_t qp_type_of(Kind k)
{
	switch (k) {
	case Kind::RC:
		return UABI_QPT_RC;
	case Kind::UC:
		return UABI_QPT_UC;
	case Kind::UD:
		return UABI_QPT_UD;
	case Kind::XRC_SEND:
		return UABI_QPT_XRC_SEND;
	case Kind::XRC_RECV:
		return UABI_QPT_XRC_RECV;
	}
	return 0;
}

std::string mask_bits(std::uint32_t m)
{
	static const char *const n[] = {"STATE",
					"CUR_STATE",
					"EN_SQD_ASYNC_NOTIFY",
					"ACCESS_FLAGS",
					"PKEY_INDEX",
					"PORT",
					"QKEY",
					"AV",
					"PATH_MTU",
					"TIMEOUT",
					"RETRY_CNT",
					"RNR_RETRY",
					"RQ_PSN",
					"MAX_QP_RD_ATOMIC",
					"ALT_PATH",
					"MIN_RNR_TIMER",
					"SQ_PSN",
					"MAX_DEST_RD_ATOMIC",
					"PATH_MIG_STATE",
					"CAP",
					"DEST_QPN"};
	std::string s;
	for (unsigned b = 0; b < 32; b++) {
		if (!(m & (1u << b)))
			continue;
		if (!s.empty())
			s += "|";
		s += b < std::size(n) ? n[b] : "bit" + std::to_string(b);
	}
	return s.empty() ? "0" : s;
}

// A QP under test, whatever its type: XRC receive QPs are reached through
// their XRC domain with the qpn, as ibv_modify_xrc_rcv_qp() does.
class TestQp
{
      public:
	TestQp(Context &ctx, Kind k, const QpEnv &env, Handle xrcd)
	    : ctx_(ctx), kind_(k), xrcd_(xrcd)
	{
		if (k == Kind::XRC_RECV) {
			qpn_ = UABI_XRC_QPN_CREATE;
			reg_ =
			    NEED(ctx.register_xrc_rcv_qp(xrcd, qpn_, qp_init(UABI_QPT_XRC_RECV)));
		} else {
			QpInfo qi = make_qp(ctx, env, qp_type_of(k));
			reg_ = qi.handle;
			qpn_ = qi.resp.qpn;
		}
	}
	~TestQp()
	{
		auto r = kind_ == Kind::XRC_RECV ? ctx_.unregister_xrc_rcv_qp(xrcd_, qpn_)
						 : ctx_.destroy_qp(reg_);
		EXPECT_TRUE(r.ok()) << "cleanup failed with " << errno_name(r.error());
	}

	Result<void> modify(const uabi_qp_attr &a, std::uint32_t mask)
	{
		if (kind_ == Kind::XRC_RECV)
			return ctx_.modify_xrc_rcv_qp(xrcd_, qpn_, a, mask);
		return ctx_.modify_qp(reg_, a, mask);
	}
	uabi_qp_attr query()
	{
		if (kind_ == Kind::XRC_RECV)
			return NEED(ctx_.query_xrc_rcv_qp(xrcd_, qpn_));
		return NEED(ctx_.query_qp(reg_)).attr;
	}

	// Moves the QP from RESET to state s along RESET->INIT->RTR->RTS->SQD
	// (ERR: via INIT) with the required attributes only.
	void walk_to(std::uint32_t s)
	{
		static const std::uint32_t path[] = {INIT, RTR, RTS, SQD};
		std::uint32_t cur = RESET;
		if (s == RESET)
			return;
		for (std::uint32_t next : path) {
			step(cur, next);
			cur = next;
			if (cur == s || (s == ERR && cur == INIT))
				break;
		}
		if (s == ERR)
			step(cur, ERR);
		ASSERT_EQ(query().qp_state, s);
	}

	void step(std::uint32_t from, std::uint32_t to)
	{
		auto m = spec(kind_, from, to);
		ASSERT_TRUE(m.has_value());
		auto r = modify(valid_qp_attr(from, to), M_STATE | m->required);
		ASSERT_TRUE(r.ok()) << kind_name(kind_) << " " << state_name(from) << "->"
				    << state_name(to) << " failed with " << errno_name(r.error());
	}

      private:
	Context &ctx_;
	Kind kind_;
	Handle xrcd_;
	Handle reg_ = 0;
	std::uint32_t qpn_ = 0;
};

bool same_attr(const uabi_qp_attr &a, const uabi_qp_attr &b)
{
	return std::memcmp(&a, &b, sizeof(a)) == 0;
}

struct Transition {
	std::uint32_t from, to;
};

const Transition kValid[] = {
    {RESET, INIT}, {INIT, INIT}, {INIT, RTR},  {RTR, RTS},   {RTS, RTS},
    {RTS, SQD},	   {SQD, RTS},	 {SQD, SQD},   {INIT, ERR},
    {RTR, ERR},	   {RTS, ERR},	 {SQD, ERR},   {ERR, ERR},   {RESET, RESET},
    {INIT, RESET}, {RTR, RESET}, {RTS, RESET}, {SQD, RESET}, {ERR, RESET},
};

const Kind kKinds[] = {Kind::RC, Kind::UC, Kind::UD, Kind::XRC_SEND, Kind::XRC_RECV};

class QpStateMachine : public UabiTest, public ::testing::WithParamInterface<Kind>
{
      protected:
	void SetUp() override
	{
		UabiTest::SetUp();
		env_ = make_env(ctx());
		xrcd_ = NEED(ctx().open_xrcd(-1, 0));
	}
	std::unique_ptr<TestQp> fresh_qp()
	{
		return std::make_unique<TestQp>(ctx(), GetParam(), env_, xrcd_);
	}
	// A failed modify must leave state and attributes untouched.
	void expect_refused(TestQp &qp, const uabi_qp_attr &a, std::uint32_t mask,
			    const std::string &what)
	{
		uabi_qp_attr before = qp.query();
		auto r = qp.modify(a, mask);
		EXPECT_EQ(errno_name(r.error()), errno_name(EINVAL))
		    << what << ": mask " << mask_bits(mask);
		uabi_qp_attr after = qp.query();
		EXPECT_TRUE(same_attr(before, after))
		    << what << ": the refused modify changed the QP (state "
		    << state_name(before.qp_state) << " -> " << state_name(after.qp_state) << ")";
	}

	QpEnv env_{};
	Handle xrcd_ = 0;
};

TEST_P(QpStateMachine, ExactRequiredMaskOfEveryValidTransitionSucceeds)
{
	const Kind k = GetParam();
	for (const Transition &t : kValid) {
		std::string what =
		    std::string(kind_name(k)) + " " + state_name(t.from) + "->" + state_name(t.to);
		SCOPED_TRACE(what);
		auto m = spec(k, t.from, t.to);
		ASSERT_TRUE(m.has_value());
		auto qp = fresh_qp();
		qp->walk_to(t.from);
		auto r = qp->modify(valid_qp_attr(t.from, t.to), M_STATE | m->required);
		EXPECT_TRUE(r.ok()) << "failed with " << errno_name(r.error()) << ", mask "
				    << mask_bits(M_STATE | m->required);
		EXPECT_EQ(state_name(qp->query().qp_state), state_name(t.to));
	}
}

TEST_P(QpStateMachine, RequiredPlusEveryOptionalAttributeSucceeds)
{
	const Kind k = GetParam();
	for (const Transition &t : kValid) {
		std::string what =
		    std::string(kind_name(k)) + " " + state_name(t.from) + "->" + state_name(t.to);
		SCOPED_TRACE(what);
		auto m = spec(k, t.from, t.to);
		auto qp = fresh_qp();
		qp->walk_to(t.from);
		std::uint32_t mask = M_STATE | m->required | m->optional;
		auto r = qp->modify(valid_qp_attr(t.from, t.to), mask);
		EXPECT_TRUE(r.ok())
		    << "failed with " << errno_name(r.error()) << ", mask " << mask_bits(mask);
		EXPECT_EQ(state_name(qp->query().qp_state), state_name(t.to));
	}
}

TEST_P(QpStateMachine, DroppingAnyRequiredAttributeIsEINVAL)
{
	const Kind k = GetParam();
	for (const Transition &t : kValid) {
		auto m = spec(k, t.from, t.to);
		if (!m->required)
			continue;
		std::string what =
		    std::string(kind_name(k)) + " " + state_name(t.from) + "->" + state_name(t.to);
		SCOPED_TRACE(what);
		auto qp = fresh_qp();
		qp->walk_to(t.from);
		for (unsigned b = 0; b < M_NUM_BITS; b++) {
			std::uint32_t bit = 1u << b;
			if (!(m->required & bit))
				continue;
			expect_refused(*qp, valid_qp_attr(t.from, t.to),
				       (M_STATE | m->required | m->optional) & ~bit,
				       what + " without " + mask_bits(bit));
		}
		// And the complete mask still works afterwards.
		EXPECT_TRUE(qp->modify(valid_qp_attr(t.from, t.to), M_STATE | m->required).ok());
	}
}

// What Linux's uverbs modify_qp_mask() drops for the halves of XRC: the
// other side's attributes are ignored, not refused.
std::uint32_t xrc_ignored(Kind k)
{
	if (k == Kind::XRC_SEND)
		return M_MAX_DEST_RD_ATOMIC | M_MIN_RNR_TIMER;
	if (k == Kind::XRC_RECV)
		return M_MAX_QP_RD_ATOMIC | M_RETRY_CNT | M_RNR_RETRY;
	return 0;
}

// Instantiated for the two XRC kinds only (the other kinds refuse these
// bits: the next test).
class XrcQpStateMachine : public QpStateMachine
{
};

TEST_P(XrcQpStateMachine, IgnoresTheOtherSidesAttributes)
{
	const Kind k = GetParam();
	const std::uint32_t ignored = xrc_ignored(k);
	ASSERT_NE(ignored, 0u);
	for (const Transition &t : kValid) {
		auto m = spec(k, t.from, t.to);
		std::string what =
		    std::string(kind_name(k)) + " " + state_name(t.from) + "->" + state_name(t.to);
		SCOPED_TRACE(what);
		auto qp = fresh_qp();
		qp->walk_to(t.from);
		uabi_qp_attr a = valid_qp_attr(t.from, t.to);
		a.max_dest_rd_atomic = 7;
		a.min_rnr_timer = 9;
		a.max_rd_atomic = 5;
		a.retry_cnt = 3;
		a.rnr_retry = 2;
		uabi_qp_attr before = qp->query();
		ASSERT_TRUE(qp->modify(a, M_STATE | m->required | ignored).ok())
		    << "with " << mask_bits(ignored);
		uabi_qp_attr after = qp->query();
		// Ignored: none of them took a value.
		if (k == Kind::XRC_SEND && t.to != RESET) {
			EXPECT_EQ(after.max_dest_rd_atomic, before.max_dest_rd_atomic);
			EXPECT_EQ(after.min_rnr_timer, before.min_rnr_timer);
		}
		if (k == Kind::XRC_RECV && t.to != RESET) {
			EXPECT_EQ(after.max_rd_atomic, before.max_rd_atomic);
			EXPECT_EQ(after.retry_cnt, before.retry_cnt);
			EXPECT_EQ(after.rnr_retry, before.rnr_retry);
		}
	}
}

TEST_P(QpStateMachine, AddingAnAttributeThatIsNeitherRequiredNorOptionalIsEINVAL)
{
	const Kind k = GetParam();
	for (const Transition &t : kValid) {
		auto m = spec(k, t.from, t.to);
		std::string what =
		    std::string(kind_name(k)) + " " + state_name(t.from) + "->" + state_name(t.to);
		SCOPED_TRACE(what);
		auto qp = fresh_qp();
		qp->walk_to(t.from);
		for (unsigned b = 1; b < 32; b++) {
			std::uint32_t bit = 1u << b;
			if ((m->required | m->optional | xrc_ignored(k)) & bit)
				continue;
			expect_refused(*qp, valid_qp_attr(t.from, t.to),
				       M_STATE | m->required | bit,
				       what + " with " + mask_bits(bit));
		}
		EXPECT_TRUE(qp->modify(valid_qp_attr(t.from, t.to), M_STATE | m->required).ok());
	}
}

TEST_P(QpStateMachine, InvalidTransitionsAreEINVAL)
{
	const Kind k = GetParam();
	const std::uint32_t froms[] = {RESET, INIT, RTR, RTS, SQD, ERR};
	const std::uint32_t tos[] = {RESET, INIT, RTR, RTS, SQD, SQE, ERR, 7, 0xffffffffu};
	for (std::uint32_t from : froms) {
		auto qp = fresh_qp();
		qp->walk_to(from);
		for (std::uint32_t to : tos) {
			if (spec(k, from, to))
				continue;
			std::string what = std::string(kind_name(k)) + " " + state_name(from) +
					   "->" + state_name(to) + "(" + std::to_string(to) + ")";
			SCOPED_TRACE(what);
			uabi_qp_attr a = valid_qp_attr(from, to);
			expect_refused(*qp, a, M_STATE, what + ", state alone");
			// With whatever the target state would need from INIT on.
			std::uint32_t any = 0;
			for (std::uint32_t f : froms)
				if (auto s = spec(k, f, to < 7 ? to : RTS))
					any |= s->required;
			expect_refused(*qp, a, M_STATE | any, what + ", with attributes");
		}
	}
}

TEST_P(QpStateMachine, ModifyWithoutTheStateBitIsATransitionToTheSameState)
{
	const Kind k = GetParam();
	// RTR -> RTR does not exist: no attribute may change in RTR.
	{
		auto qp = fresh_qp();
		qp->walk_to(RTR);
		expect_refused(*qp, valid_qp_attr(RTR, RTR), 0, "RTR, empty mask");
		expect_refused(*qp, valid_qp_attr(RTR, RTR), M_PKEY_INDEX, "RTR, PKEY_INDEX");
	}
	// RTS -> RTS takes its optional attributes without IBV_QP_STATE.
	{
		auto qp = fresh_qp();
		qp->walk_to(RTS);
		std::uint32_t opt = spec(k, RTS, RTS)->optional & ~M_CUR_STATE;
		uabi_qp_attr a = valid_qp_attr(RTS, RTS);
		a.qp_state = RESET; // ignored without IBV_QP_STATE
		auto r = qp->modify(a, opt);
		EXPECT_TRUE(r.ok()) << errno_name(r.error()) << " mask " << mask_bits(opt);
		EXPECT_EQ(state_name(qp->query().qp_state), "RTS");
	}
}

TEST_P(QpStateMachine, CurStateThatDisagreesIsEINVAL)
{
	const Kind k = GetParam();
	auto qp = fresh_qp();
	qp->walk_to(RTR);
	auto m = spec(k, RTR, RTS);
	ASSERT_TRUE(m->optional & M_CUR_STATE);
	for (std::uint32_t wrong : {RESET, INIT, RTS, SQD, ERR}) {
		uabi_qp_attr a = valid_qp_attr(RTR, RTS);
		a.cur_qp_state = wrong;
		expect_refused(*qp, a, M_STATE | M_CUR_STATE | m->required,
			       std::string("cur_qp_state ") + state_name(wrong));
	}
	uabi_qp_attr a = valid_qp_attr(RTR, RTS);
	a.cur_qp_state = RTR;
	EXPECT_TRUE(qp->modify(a, M_STATE | M_CUR_STATE | m->required).ok())
	    << "a CUR_STATE that agrees is fine";
	EXPECT_EQ(state_name(qp->query().qp_state), "RTS");
}

TEST_P(QpStateMachine, QueryAfterRtsReturnsTheAttributesSet)
{
	const Kind k = GetParam();
	auto qp = fresh_qp();
	uabi_qp_attr a = valid_qp_attr(RESET, INIT);
	// Distinct values, to be recognised.
	a.qkey = 0x0badcafe;
	a.qp_access_flags = kLocalWrite | kRemoteRead;
	a.path_mtu = 4;
	a.dest_qp_num = 0xabcde;
	a.rq_psn = 0x12345;
	a.sq_psn = 0x54321;
	a.max_dest_rd_atomic = 3;
	a.min_rnr_timer = 17;
	a.timeout = 19;
	a.retry_cnt = 5;
	a.rnr_retry = 6;
	a.max_rd_atomic = 2;
	a.ah_attr.sl = 3;
	std::uint32_t from = RESET;
	for (std::uint32_t to : {INIT, RTR, RTS}) {
		a.qp_state = to;
		a.cur_qp_state = from;
		ASSERT_TRUE(qp->modify(a, M_STATE | spec(k, from, to)->required).ok())
		    << state_name(to);
		from = to;
	}
	uabi_qp_attr q = qp->query();
	EXPECT_EQ(q.qp_state, unsigned(RTS));
	EXPECT_EQ(q.port_num, 1u);
	EXPECT_EQ(q.pkey_index, 0u);
	EXPECT_EQ(q.sq_psn, a.sq_psn);
	if (k == Kind::UD) {
		EXPECT_EQ(q.qkey, a.qkey);
		return;
	}
	EXPECT_EQ(q.qp_access_flags, a.qp_access_flags);
	EXPECT_EQ(q.path_mtu, a.path_mtu);
	EXPECT_EQ(q.dest_qp_num, a.dest_qp_num);
	EXPECT_EQ(q.rq_psn, a.rq_psn);
	EXPECT_EQ(q.ah_attr.dlid, a.ah_attr.dlid);
	EXPECT_EQ(q.ah_attr.sl, a.ah_attr.sl);
	EXPECT_EQ(q.ah_attr.port_num, a.ah_attr.port_num);
	if (k == Kind::RC || k == Kind::XRC_RECV) {
		EXPECT_EQ(q.max_dest_rd_atomic, a.max_dest_rd_atomic);
		EXPECT_EQ(q.min_rnr_timer, a.min_rnr_timer);
	}
	if (k == Kind::RC || k == Kind::XRC_SEND || k == Kind::XRC_RECV) {
		EXPECT_EQ(q.timeout, a.timeout);
	}
	if (k == Kind::RC || k == Kind::XRC_SEND) {
		EXPECT_EQ(q.retry_cnt, a.retry_cnt);
		EXPECT_EQ(q.rnr_retry, a.rnr_retry);
		EXPECT_EQ(q.max_rd_atomic, a.max_rd_atomic);
	}
}

INSTANTIATE_TEST_SUITE_P(Rule6, QpStateMachine, ::testing::ValuesIn(kKinds),
			 [](const ::testing::TestParamInfo<Kind> &i) {
				 return std::string(kind_name(i.param));
			 });
INSTANTIATE_TEST_SUITE_P(Rule6, XrcQpStateMachine,
			 ::testing::Values(Kind::XRC_SEND, Kind::XRC_RECV),
			 [](const ::testing::TestParamInfo<Kind> &i) {
				 return std::string(kind_name(i.param));
			 });

// ------------------------------------------------------------ values

class QpValues : public UabiTest
{
      protected:
	void SetUp() override
	{
		UabiTest::SetUp();
		env_ = make_env(ctx());
		qp_ = std::make_unique<TestQp>(ctx(), Kind::RC, env_, Handle(0));
		dev_ = NEED(ctx().query_device()).attr;
	}
	void TearDown() override
	{
		qp_.reset();
		UabiTest::TearDown();
	}
	void expect_bad(std::uint32_t from, std::uint32_t to, const uabi_qp_attr &a,
			const char *what)
	{
		uabi_qp_attr before = qp_->query();
		ASSERT_EQ(before.qp_state, from);
		auto m = spec(Kind::RC, from, to);
		auto r = qp_->modify(a, M_STATE | m->required);
		EXPECT_EQ(errno_name(r.error()), errno_name(EINVAL)) << what;
		EXPECT_TRUE(same_attr(before, qp_->query())) << what << " changed the QP";
	}

	QpEnv env_{};
	std::unique_ptr<TestQp> qp_;
	uabi_device_attr dev_{};
};

TEST_F(QpValues, ResetToInitValues)
{
	auto a = valid_qp_attr(RESET, INIT);
	a.port_num = 2;
	expect_bad(RESET, INIT, a, "port 2");
	a.port_num = 0;
	expect_bad(RESET, INIT, a, "port 0");
	a = valid_qp_attr(RESET, INIT);
	a.pkey_index = 1;
	expect_bad(RESET, INIT, a, "pkey_index 1");
	a = valid_qp_attr(RESET, INIT);
	EXPECT_TRUE(qp_->modify(a, M_STATE | spec(Kind::RC, RESET, INIT)->required).ok());
}

TEST_F(QpValues, InitToRtrValues)
{
	qp_->walk_to(INIT);
	auto a = valid_qp_attr(INIT, RTR);
	a.path_mtu = 6;
	expect_bad(INIT, RTR, a, "path_mtu 6");
	a.path_mtu = 0;
	expect_bad(INIT, RTR, a, "path_mtu 0");
	a = valid_qp_attr(INIT, RTR);
	a.dest_qp_num = 1u << 24;
	expect_bad(INIT, RTR, a, "dest_qp_num 2^24");
	a = valid_qp_attr(INIT, RTR);
	a.rq_psn = 1u << 24;
	expect_bad(INIT, RTR, a, "rq_psn 2^24");
	a = valid_qp_attr(INIT, RTR);
	a.min_rnr_timer = 32;
	expect_bad(INIT, RTR, a, "min_rnr_timer 32");
	a = valid_qp_attr(INIT, RTR);
	a.ah_attr.port_num = 2;
	expect_bad(INIT, RTR, a, "address vector through port 2");
	a = valid_qp_attr(INIT, RTR);
	a.max_dest_rd_atomic = std::uint8_t(dev_.max_qp_rd_atom + 1);
	if (dev_.max_qp_rd_atom < 255)
		expect_bad(INIT, RTR, a, "max_dest_rd_atomic above the device's");
	a = valid_qp_attr(INIT, RTR);
	a.dest_qp_num = (1u << 24) - 1;
	EXPECT_TRUE(qp_->modify(a, M_STATE | spec(Kind::RC, INIT, RTR)->required).ok())
	    << "dest_qp_num 2^24-1 is valid";
}

TEST_F(QpValues, RtrToRtsValues)
{
	qp_->walk_to(RTR);
	auto a = valid_qp_attr(RTR, RTS);
	a.timeout = 32;
	expect_bad(RTR, RTS, a, "timeout 32");
	a = valid_qp_attr(RTR, RTS);
	a.rnr_retry = 8;
	expect_bad(RTR, RTS, a, "rnr_retry 8");
	a = valid_qp_attr(RTR, RTS);
	a.retry_cnt = 8;
	expect_bad(RTR, RTS, a, "retry_cnt 8");
	a = valid_qp_attr(RTR, RTS);
	a.sq_psn = 1u << 24;
	expect_bad(RTR, RTS, a, "sq_psn 2^24");
	a = valid_qp_attr(RTR, RTS);
	a.max_rd_atomic = std::uint8_t(dev_.max_qp_init_rd_atom + 1);
	if (dev_.max_qp_init_rd_atom < 255)
		expect_bad(RTR, RTS, a, "max_rd_atomic above the device's");
	a = valid_qp_attr(RTR, RTS);
	a.timeout = 31;
	a.rnr_retry = 7;
	a.retry_cnt = 7;
	EXPECT_TRUE(qp_->modify(a, M_STATE | spec(Kind::RC, RTR, RTS)->required).ok())
	    << "the largest valid values";
}

// qp_access_flags: Linux's modify_qp passes every bit to the driver, which
// ignores those it does not implement (uDAPL sets MW_BIND on every RC
// endpoint).  One case per bit: RESET->INIT with only that bit, INIT->INIT
// with it beside the remote-access bits, both kept as given.
class QpAccessBit : public QpValues, public ::testing::WithParamInterface<int>
{
};

TEST_P(QpAccessBit, IsAcceptedAndKept)
{
	const std::uint32_t bit = 1u << GetParam();
	auto a = valid_qp_attr(RESET, INIT);
	a.qp_access_flags = bit;
	auto r = qp_->modify(a, M_STATE | spec(Kind::RC, RESET, INIT)->required);
	ASSERT_TRUE(r.ok()) << errno_name(r.error());
	EXPECT_EQ(qp_->query().qp_access_flags, bit);
	a = valid_qp_attr(INIT, INIT);
	a.qp_access_flags = bit | kRemoteWrite | kRemoteRead;
	r = qp_->modify(a, M_STATE | M_ACCESS_FLAGS);
	ASSERT_TRUE(r.ok()) << errno_name(r.error());
	EXPECT_EQ(qp_->query().qp_access_flags, a.qp_access_flags);
}

std::string access_bit_name(const ::testing::TestParamInfo<int> &i)
{
	static const char *const names[] = {"LocalWrite", "RemoteWrite",  "RemoteRead",
					    "RemoteAtomic", "MwBind",     "ZeroBased",
					    "OnDemand",   "HugeTlb",      "FlushGlobal",
					    "FlushPersistent"};
	if (i.param < 10)
		return names[i.param];
	if (i.param == 20)
		return "RelaxedOrdering";
	return "Bit" + std::to_string(i.param);
}

INSTANTIATE_TEST_SUITE_P(EveryBit, QpAccessBit, ::testing::Range(0, 32), access_bit_name);

TEST_F(QpValues, XrcReceiveQpThroughItsRegistrationHandle)
{
	// A registration is a QP handle: modify_qp and query_qp work on it
	// like on the domain's qpn.
	Handle xrcd = NEED(ctx().open_xrcd(-1, 0));
	std::uint32_t qpn = UABI_XRC_QPN_CREATE;
	Handle reg = NEED(ctx().register_xrc_rcv_qp(xrcd, qpn, qp_init(UABI_QPT_XRC_RECV)));
	auto m = spec(Kind::XRC_RECV, RESET, INIT);
	EXPECT_TRUE(ctx().modify_qp(reg, valid_qp_attr(RESET, INIT), M_STATE | m->required).ok());
	EXPECT_EQ(NEED(ctx().query_qp(reg)).attr.qp_state, unsigned(INIT));
	EXPECT_EQ(NEED(ctx().query_xrc_rcv_qp(xrcd, qpn)).qp_state, unsigned(INIT));
	auto bad = valid_qp_attr(INIT, RTR);
	EXPECT_ERRNO(ctx().modify_qp(reg, bad, M_STATE), EINVAL) << "INIT->RTR needs attributes";
	EXPECT_EQ(NEED(ctx().query_qp(reg)).attr.qp_state, unsigned(INIT));
	EXPECT_OK(ctx().destroy_qp(reg));
	EXPECT_OK(ctx().close_xrcd(xrcd));
}

} // namespace
