// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 1: the parser.  Messages are built with Message/Command, then their
// bytes are corrupted and executed with Context::execute_raw().  Every
// rejection must leave everything as it was.
#include "support/uabi_test.hpp"

#include <functional>
#include <ostream>

using namespace uabi;
using namespace uabi::test;

namespace
{

constexpr std::uint16_t kUnknownAttr = 0x7abc;

// ------------------------------------------------------ message level

class ParserMessage : public UabiTest
{
      protected:
	// A message rejected as a whole: nothing may have run.
	void expect_msg_reject(std::vector<std::byte> &bytes, int err, bool status_written)
	{
		Snapshot before = snapshot(ctx());
		int rc = ctx().execute_raw(bytes);
		Snapshot after = snapshot(ctx());
		EXPECT_STATUS(rc, -err) << "return value of the execution";
		if (status_written) {
			uabi_msg_hdr h{};
			std::memcpy(&h, bytes.data(), sizeof(h));
			EXPECT_STATUS(h.status, -err) << "message status";
			EXPECT_EQ(h.executed, 0u) << "executed";
		}
		expect_snapshot_eq(before, after, "counters across a rejected message");
	}

	// Two PD creations: a message that would change the counters if run.
	Message two_pds() { return make_message({cmd_alloc_pd(), cmd_alloc_pd()}); }
};

TEST_F(ParserMessage, ShorterThanItsHeaderIsEINVAL)
{
	Message m = two_pds();
	std::vector<std::byte> b(m.raw().begin(), m.raw().begin() + 16);
	expect_msg_reject(b, EINVAL, false);
	std::vector<std::byte> b31(m.raw().begin(), m.raw().begin() + 31);
	expect_msg_reject(b31, EINVAL, false);
}

TEST_F(ParserMessage, EmptyMessageIsEINVAL)
{
	std::vector<std::byte> b;
	Snapshot before = snapshot(ctx());
	EXPECT_STATUS(ctx().execute_raw(b), -EINVAL);
	expect_snapshot_eq(before, snapshot(ctx()), "empty message");
}

TEST_F(ParserMessage, WrongMagicIsEINVAL)
{
	Message m = two_pds();
	RawMsg r(m);
	auto h = r.msg();
	h.magic = 0x69626175; // byte-swapped "uabi"
	r.set_msg(h);
	expect_msg_reject(r.bytes, EINVAL, true);
}

TEST_F(ParserMessage, LengthFieldLargerThanBufferIsEINVAL)
{
	Message m = two_pds();
	RawMsg r(m);
	auto h = r.msg();
	h.length += 8;
	r.set_msg(h);
	expect_msg_reject(r.bytes, EINVAL, true);
}

TEST_F(ParserMessage, LengthFieldSmallerThanBufferIsEINVAL)
{
	Message m = two_pds();
	RawMsg r(m);
	auto h = r.msg();
	h.length -= 8;
	r.set_msg(h);
	expect_msg_reject(r.bytes, EINVAL, true);
}

TEST_F(ParserMessage, AbiVersionOtherThanOneIsEPROTONOSUPPORT)
{
	for (std::uint16_t v : {0, 2, 0xffff}) {
		SCOPED_TRACE("abi_version " + std::to_string(v));
		Message m = two_pds();
		RawMsg r(m);
		auto h = r.msg();
		h.abi_version = v;
		r.set_msg(h);
		expect_msg_reject(r.bytes, EPROTONOSUPPORT, true);
	}
}

TEST_F(ParserMessage, NonZeroReservedIsEPROTONOSUPPORT)
{
	Message m = two_pds();
	RawMsg r(m);
	auto h = r.msg();
	h.reserved = 1;
	r.set_msg(h);
	expect_msg_reject(r.bytes, EPROTONOSUPPORT, true);
}

TEST_F(ParserMessage, CountZeroIsEINVAL)
{
	// A header alone, count 0.
	Message m = two_pds();
	std::vector<std::byte> b(m.raw().begin(), m.raw().begin() + sizeof(uabi_msg_hdr));
	uabi_msg_hdr h{};
	std::memcpy(&h, b.data(), sizeof(h));
	h.count = 0;
	h.length = sizeof(h);
	std::memcpy(b.data(), &h, sizeof(h));
	expect_msg_reject(b, EINVAL, true);

	// count 0 in front of real commands.
	RawMsg r(m);
	auto h2 = r.msg();
	h2.count = 0;
	r.set_msg(h2);
	expect_msg_reject(r.bytes, EINVAL, true);
}

TEST_F(ParserMessage, CountAboveMaxChainIsEINVAL)
{
	std::vector<Command> cmds;
	for (unsigned i = 0; i < UABI_MAX_CHAIN_CMDS + 1; i++)
		cmds.push_back(cmd_counters());
	Message m = make_message(std::move(cmds));
	RawMsg r(m);
	ASSERT_EQ(r.msg().count, UABI_MAX_CHAIN_CMDS + 1);
	expect_msg_reject(r.bytes, EINVAL, true);
}

TEST_F(ParserMessage, CountAtMaxChainIsAccepted)
{
	std::vector<Command> cmds;
	for (unsigned i = 0; i < UABI_MAX_CHAIN_CMDS; i++)
		cmds.push_back(cmd_counters());
	Message m = make_message(std::move(cmds));
	RawMsg r(m);
	EXPECT_STATUS(r.exec(ctx()), 0);
	EXPECT_EQ(r.msg().executed, UABI_MAX_CHAIN_CMDS);
	EXPECT_EQ(r.msg().failed_index, UABI_MAX_CHAIN_CMDS);
}

TEST_F(ParserMessage, CountLargerThanTheCommandsPresentIsEINVAL)
{
	Message m = two_pds();
	RawMsg r(m);
	auto h = r.msg();
	h.count = 3;
	r.set_msg(h);
	expect_msg_reject(r.bytes, EINVAL, true);
	EXPECT_STATUS(r.cmd(0).status, UABI_CMD_STATUS_NOT_RUN);
	EXPECT_STATUS(r.cmd(1).status, UABI_CMD_STATUS_NOT_RUN);
}

TEST_F(ParserMessage, BytesAfterTheLastCommandAreEINVAL)
{
	Message m = make_message({cmd_alloc_pd(), cmd_alloc_pd(), cmd_alloc_pd()});
	RawMsg r(m);
	auto h = r.msg();
	h.count = 2; // the third command is now trailing garbage
	r.set_msg(h);
	expect_msg_reject(r.bytes, EINVAL, true);
	EXPECT_STATUS(r.cmd(0).status, UABI_CMD_STATUS_NOT_RUN);
	EXPECT_STATUS(r.cmd(1).status, UABI_CMD_STATUS_NOT_RUN);
}

TEST_F(ParserMessage, UnknownMessageFlagsAreEINVAL)
{
	for (std::uint32_t f : {1u << 1, 1u << 7, 1u << 31}) {
		SCOPED_TRACE("flags " + std::to_string(f));
		Message m = two_pds();
		RawMsg r(m);
		auto h = r.msg();
		h.flags |= f;
		r.set_msg(h);
		expect_msg_reject(r.bytes, EINVAL, true);
	}
}

// A PD creation, then a PD creation carrying an unknown optional attribute
// of payload bytes, so that the message is exactly total bytes long.
Message message_of_size(std::size_t total)
{
	const std::size_t fixed =
	    sizeof(uabi_msg_hdr) + 2 * sizeof(uabi_cmd_hdr) + sizeof(uabi_attr);
	std::vector<std::byte> payload(total - fixed, std::byte{0});
	Command big = cmd_alloc_pd();
	big.add_in(kUnknownAttr, std::span<const std::byte>(payload), 0);
	Message m = make_message({cmd_alloc_pd(), std::move(big)});
	EXPECT_EQ(m.raw().size(), total);
	return m;
}

TEST_F(ParserMessage, MessageAboveMaxBytesIsEINVAL)
{
	Message m = message_of_size(UABI_MAX_MSG_BYTES + 8);
	expect_msg_reject(m.raw(), EINVAL, false);
}

TEST_F(ParserMessage, MessageOfExactlyMaxBytesIsAccepted)
{
	auto before = counters();
	Message m = message_of_size(UABI_MAX_MSG_BYTES);
	EXPECT_STATUS(ctx().execute_raw(m.raw()), 0);
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 2);
}

// ------------------------------------------------------ command level

// A message [PD create, X, PD create] whose command 1 is corrupted.
struct ParseCase {
	const char *name;
	std::function<Command()> make;
	std::function<void(RawMsg &)> mutate;
	int err;
	// The corrupted command's length is still right, so the commands
	// after it can be found.
	bool framing_intact;
};

void PrintTo(const ParseCase &c, std::ostream *os)
{
	*os << c.name;
}

template <class F> std::function<void(RawMsg &)> on_cmd(F f)
{
	return [f](RawMsg &r) {
		uabi_cmd_hdr h = r.cmd(1);
		f(h);
		r.set_cmd(1, h);
	};
}

template <class F> std::function<void(RawMsg &)> on_attr(std::size_t j, F f)
{
	return [j, f](RawMsg &r) {
		uabi_attr a = r.attr(1, j);
		f(a);
		r.set_attr(1, j, a);
	};
}

std::function<void(RawMsg &)> no_change()
{
	return [](RawMsg &) {};
}

Command pd_with_unknown(std::uint16_t flags)
{
	Command c = cmd_alloc_pd();
	c.add_in(kUnknownAttr, std::uint64_t(0x1234), flags);
	return c;
}

// A QP creation that fails parsing only because of what the case does.
Command qp_create_cmd()
{
	Command c(UABI_OBJ_QP, UABI_METHOD_CREATE);
	c.add_handle(UABI_ATTR_QP_PD, 1).add_handle(UABI_ATTR_QP_SEND_CQ, 1);
	c.add_in(UABI_ATTR_QP_INIT, qp_init(UABI_QPT_RC));
	return c;
}

std::vector<ParseCase> parse_cases()
{
	std::vector<ParseCase> v;
	auto cq16 = [] { return cmd_create_cq(16); };

	// Framing.
	v.push_back({"CommandLengthNotMultipleOf8", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.length -= 4; }), EINVAL, false});
	v.push_back({"CommandLengthBeyondTheMessage", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.length = 0x10000; }), EINVAL, false});
	v.push_back({"CommandLengthShorterThanItsHeader", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.length = 24; }), EINVAL, false});
	v.push_back({"AttributesDoNotFillTheCommand", [] { return pd_with_unknown(0); },
		     on_cmd([](uabi_cmd_hdr &h) { h.num_attrs = 0; }), EINVAL, true});
	v.push_back({"MoreAttributesThanTheCommandHolds", [] { return pd_with_unknown(0); },
		     on_cmd([](uabi_cmd_hdr &h) { h.num_attrs = 2; }), EINVAL, true});
	v.push_back({"AttributeLengthRunsPastTheCommand", cq16,
		     on_attr(0, [](uabi_attr &a) { a.len = 9; }), EINVAL, true});
	v.push_back({"AttributeLengthFarPastTheCommand", cq16,
		     on_attr(0, [](uabi_attr &a) { a.len = 0x100000; }), EINVAL, true});
	v.push_back({"AttributeLengthOverflowsWhenPadded", cq16,
		     on_attr(0, [](uabi_attr &a) { a.len = 0xfffffffdu; }), EINVAL, true});
	v.push_back({"NonZeroPaddingByte", cq16,
		     [](RawMsg &r) { r.put(r.payload_off(1, 0) + 4, std::uint8_t(1)); }, EINVAL,
		     true});
	v.push_back({"NonZeroLastPaddingByte", cq16,
		     [](RawMsg &r) { r.put(r.payload_off(1, 0) + 7, std::uint8_t(0x80)); }, EINVAL,
		     true});
	v.push_back({"TooManyAttributes",
		     [] {
			     Command c = cmd_alloc_pd();
			     for (unsigned i = 0; i < UABI_MAX_CMD_ATTRS + 1; i++)
				     c.add_in(std::uint16_t(kUnknownAttr + i), std::uint32_t(i), 0);
			     return c;
		     },
		     no_change(), EINVAL, true});

	// Command header.
	v.push_back({"Reserved0NonZero", cq16, on_cmd([](uabi_cmd_hdr &h) { h.reserved0 = 1; }),
		     EPROTONOSUPPORT, true});
	v.push_back({"Reserved1NonZero", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.reserved1 = 0x80000000u; }), EPROTONOSUPPORT,
		     true});
	v.push_back({"UnknownCommandFlag", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.flags |= 1u << 1; }), EINVAL, true});
	v.push_back({"UnknownHighCommandFlag", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.flags |= 1u << 31; }), EINVAL, true});
	v.push_back({"UnknownObject", cq16, on_cmd([](uabi_cmd_hdr &h) { h.object = 0x7f; }),
		     EPROTONOSUPPORT, true});
	v.push_back({"ObjectZero", cq16, on_cmd([](uabi_cmd_hdr &h) { h.object = 0; }),
		     EPROTONOSUPPORT, true});
	v.push_back({"ObjectMaxCore", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.object = UABI_OBJ_MAX_CORE; }), EPROTONOSUPPORT,
		     true});
	v.push_back({"UnknownDriverObject", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.object = UABI_DRIVER_NS | 0x7f; }),
		     EPROTONOSUPPORT, true});
	v.push_back({"UnknownMethod", cq16, on_cmd([](uabi_cmd_hdr &h) { h.method = 0x7f; }),
		     EPROTONOSUPPORT, true});
	v.push_back({"MethodZero", cq16, on_cmd([](uabi_cmd_hdr &h) { h.method = 0; }),
		     EPROTONOSUPPORT, true});
	v.push_back({"HandleOnAMethodWithoutHandle", cq16,
		     on_cmd([](uabi_cmd_hdr &h) { h.handle = 7; }), EINVAL, true});
	v.push_back({"HandleRefOnAMethodWithoutHandle", cq16, on_cmd([](uabi_cmd_hdr &h) {
			     h.flags |= UABI_CMD_F_HANDLE_REF;
			     h.handle = 0; // command 0 creates a PD
		     }),
		     EINVAL, true});

	// Attributes.
	v.push_back({"UnknownMandatoryAttribute",
		     [] { return pd_with_unknown(UABI_ATTR_F_MANDATORY); }, no_change(),
		     EPROTONOSUPPORT, true});
	v.push_back({"DuplicateAttribute",
		     [] {
			     Command c = cmd_create_cq(16);
			     c.add_in(UABI_ATTR_CQ_CQE, std::uint32_t(16));
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"MissingMandatoryAttribute",
		     [] {
			     Command c(UABI_OBJ_CQ, UABI_METHOD_CREATE);
			     c.add_in(UABI_ATTR_CQ_COMP_VECTOR, std::uint32_t(0));
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"UnknownAttributeFlagBit", cq16,
		     on_attr(0, [](uabi_attr &a) { a.flags |= 0x20; }), EINVAL, true});
	v.push_back({"UnknownHighAttributeFlagBit", cq16,
		     on_attr(0, [](uabi_attr &a) { a.flags |= 0x8000; }), EINVAL, true});
	v.push_back({"UnknownFlagBitOnAnUnknownAttribute", [] { return pd_with_unknown(0); },
		     on_attr(0, [](uabi_attr &a) { a.flags |= 0x40; }), EINVAL, true});
	v.push_back({"AttributeShorterThanItsType",
		     [] {
			     Command c(UABI_OBJ_CQ, UABI_METHOD_CREATE);
			     c.add_in(UABI_ATTR_CQ_CQE, std::uint16_t(16));
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"StructAttributeShorterThanItsDeclaredMinimum", qp_create_cmd,
		     on_attr(2, [](uabi_attr &a) { a.len = sizeof(uabi_qp_init) - 8; }), EINVAL,
		     true});
	v.push_back({"OutputShorterThanItsStruct",
		     [] {
			     Command c = cmd_create_cq(16);
			     c.add_out(UABI_ATTR_CQ_RESP, 4);
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"LongerAttributeWithNonZeroTail",
		     [] {
			     Command c(UABI_OBJ_CQ, UABI_METHOD_CREATE);
			     c.add_in(UABI_ATTR_CQ_CQE, std::uint64_t(16) | (1ull << 32));
			     return c;
		     },
		     no_change(), EOPNOTSUPP, true});
	v.push_back({"LongerStructWithNonZeroTail",
		     [] {
			     Command c(UABI_OBJ_QP, UABI_METHOD_CREATE);
			     c.add_handle(UABI_ATTR_QP_PD, 1).add_handle(UABI_ATTR_QP_SEND_CQ, 1);
			     std::vector<std::byte> init(sizeof(uabi_qp_init) + 8);
			     uabi_qp_init qi = qp_init(UABI_QPT_RC);
			     std::memcpy(init.data(), &qi, sizeof(qi));
			     init.back() = std::byte{1};
			     c.add_in(UABI_ATTR_QP_INIT, std::span<const std::byte>(init));
			     return c;
		     },
		     no_change(), EOPNOTSUPP, true});
	v.push_back({"OutputFlagOnAnInput", cq16,
		     on_attr(0, [](uabi_attr &a) { a.flags |= UABI_ATTR_F_OUTPUT; }), EINVAL,
		     true});
	v.push_back({"OutputWithoutOutputFlag",
		     [] {
			     Command c = cmd_create_cq(16);
			     c.add_in(UABI_ATTR_CQ_RESP, uabi_cq_resp{});
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"FdFlagOnANonFdAttribute", cq16,
		     on_attr(0, [](uabi_attr &a) { a.flags |= UABI_ATTR_F_FD; }), EINVAL, true});
	v.push_back({"FdAttributeWithoutFdFlag",
		     [] {
			     Command c(UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE);
			     c.add_out<std::int32_t>(UABI_ATTR_EVQ_FD);
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"ChainRefOnANonHandleAttribute",
		     [] {
			     Command c(UABI_OBJ_CQ, UABI_METHOD_CREATE);
			     c.add_ref(UABI_ATTR_CQ_CQE, 0); // command 0 creates
			     return c;
		     },
		     no_change(), EINVAL, true});
	v.push_back({"ChainRefOfWrongLength",
		     [] {
			     Command c(UABI_OBJ_MR, UABI_METHOD_CREATE);
			     c.add_in(UABI_ATTR_MR_PD, std::uint64_t(0),
				      UABI_ATTR_F_MANDATORY | UABI_ATTR_F_CHAIN_REF);
			     uabi_mr_reg reg{};
			     reg.addr = 0x1000;
			     reg.iova = 0x1000;
			     reg.length = 4096;
			     reg.access = kLocalWrite;
			     c.add_in(UABI_ATTR_MR_REG, reg);
			     return c;
		     },
		     no_change(), EINVAL, true});
	return v;
}

class ParserCommand : public UabiTest, public ::testing::WithParamInterface<ParseCase>
{
      protected:
	RawMsg corrupted()
	{
		const ParseCase &pc = GetParam();
		Message m = make_message({cmd_alloc_pd(), pc.make(), cmd_alloc_pd()});
		RawMsg r(m);
		pc.mutate(r);
		return r;
	}
};

TEST_P(ParserCommand, RejectedBeforeAnythingRuns)
{
	RawMsg r = corrupted();
	expect_parse_reject(ctx(), r, GetParam().err, 1);
}

// Where the case corrupts a valid command, the uncorrupted message passes
// the parser (command 0 runs): the rejection is due to the corruption.
TEST_F(ParserMessage, UncorruptedTwinsPassTheParser)
{
	for (const ParseCase &pc : parse_cases()) {
		Message m = make_message({cmd_alloc_pd(), pc.make(), cmd_alloc_pd()});
		RawMsg r(m);
		std::vector<std::byte> orig = r.bytes;
		pc.mutate(r);
		if (r.bytes == orig)
			continue; // the command itself is the invalid part
		SCOPED_TRACE(pc.name);
		r.bytes = orig;
		(void)r.exec(ctx());
		EXPECT_GE(r.msg().executed, 1u) << "the uncorrupted message was rejected";
		EXPECT_STATUS(r.cmd(0).status, 0);
	}
}

INSTANTIATE_TEST_SUITE_P(Rule1, ParserCommand, ::testing::ValuesIn(parse_cases()),
			 [](const ::testing::TestParamInfo<ParseCase> &i) {
				 return std::string(i.param.name);
			 });

// A command the parser never reached is "never reached": its status must
// read UABI_CMD_STATUS_NOT_RUN, not whatever the sender left in it.
TEST_F(ParserMessage, CommandsAfterTheFailingOneAreMarkedNotRun)
{
	for (const ParseCase &pc : parse_cases()) {
		if (!pc.framing_intact)
			continue;
		SCOPED_TRACE(pc.name);
		Message m = make_message({cmd_alloc_pd(), pc.make(), cmd_alloc_pd()});
		RawMsg r(m);
		pc.mutate(r);
		// What a careless sender might leave in a status field.
		auto h2 = r.cmd(2);
		h2.status = 0;
		r.set_cmd(2, h2);
		(void)r.exec(ctx());
		EXPECT_EQ(r.msg().failed_index, 1u);
		EXPECT_STATUS(r.cmd(2).status, UABI_CMD_STATUS_NOT_RUN)
		    << "command 2 comes after the rejected command 1";
	}
}

// ------------------------------------------------ accepted variations

class ParserAccepts : public UabiTest
{
};

TEST_F(ParserAccepts, UnknownOptionalAttributeIsIgnored)
{
	auto before = counters();
	Message m = make_message({cmd_alloc_pd(), pd_with_unknown(0), cmd_alloc_pd()});
	RawMsg r(m);
	EXPECT_STATUS(r.exec(ctx()), 0);
	EXPECT_EQ(r.msg().executed, 3u);
	for (int i = 0; i < 3; i++)
		EXPECT_STATUS(r.cmd(i).status, 0);
	EXPECT_NE(r.cmd(1).out_handle, 0u);
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 3);
	EXPECT_OK(ctx().dealloc_pd(r.cmd(1).out_handle));
}

TEST_F(ParserAccepts, LongerAttributeWithZeroTailIsAccepted)
{
	Command c(UABI_OBJ_CQ, UABI_METHOD_CREATE);
	c.add_in(UABI_ATTR_CQ_CQE, std::uint64_t(100));
	OutAttr o = c.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP);
	Message m = NEED(ctx().call(std::move(c)));
	uabi_cq_resp resp{};
	EXPECT_TRUE(m.read(0, o, resp));
	EXPECT_GE(resp.cqe, 100u) << "the low 4 bytes are the value";
	EXPECT_OK(ctx().destroy_cq(m.result(0).out_handle));
}

TEST_F(ParserAccepts, LongerStructWithZeroTailIsAccepted)
{
	QpEnv env = make_env(ctx());
	Command c(UABI_OBJ_QP, UABI_METHOD_CREATE);
	c.add_handle(UABI_ATTR_QP_PD, env.pd)
	    .add_handle(UABI_ATTR_QP_SEND_CQ, env.cq)
	    .add_handle(UABI_ATTR_QP_RECV_CQ, env.cq);
	std::vector<std::byte> init(sizeof(uabi_qp_init) + 16);
	uabi_qp_init qi = qp_init(UABI_QPT_RC);
	std::memcpy(init.data(), &qi, sizeof(qi));
	c.add_in(UABI_ATTR_QP_INIT, std::span<const std::byte>(init));
	Message m = NEED(ctx().call(std::move(c)));
	Handle qp = m.result(0).out_handle;
	QpQuery q = NEED(ctx().query_qp(qp));
	EXPECT_EQ(q.init.qp_type, unsigned(UABI_QPT_RC));
	EXPECT_OK(ctx().destroy_qp(qp));
}

// A client built against an older, shorter version of a struct (here: the
// structs without their reserved tails, the minimum each method declares)
// works: the missing bytes read as zero.
TEST_F(ParserAccepts, AnOlderShorterStructReadsAsZeroExtended)
{
	QpEnv env = make_env(ctx());
	static char buf[64];
	uabi_mr_reg reg{};
	reg.addr = reinterpret_cast<std::uintptr_t>(buf);
	reg.iova = reg.addr;
	reg.length = sizeof(buf);
	reg.access = kLocalWrite | kRemoteRead;
	constexpr std::size_t kOldReg = offsetof(uabi_mr_reg, reserved);
	static_assert(kOldReg == 28);
	Command mc(UABI_OBJ_MR, UABI_METHOD_CREATE);
	mc.add_handle(UABI_ATTR_MR_PD, env.pd);
	mc.add_in(UABI_ATTR_MR_REG,
		  std::span<const std::byte>(reinterpret_cast<const std::byte *>(&reg), kOldReg));
	OutAttr keys = mc.add_out<uabi_mr_keys>(UABI_ATTR_MR_KEYS);
	Message mm = NEED(ctx().call(std::move(mc)));
	uabi_mr_keys k{};
	EXPECT_TRUE(mm.read(0, keys, k));
	EXPECT_NE(k.lkey, 0u);

	constexpr std::size_t kOldInit = offsetof(uabi_qp_init, reserved);
	uabi_qp_init qi = qp_init(UABI_QPT_RC);
	Command qc(UABI_OBJ_QP, UABI_METHOD_CREATE);
	qc.add_handle(UABI_ATTR_QP_PD, env.pd)
	    .add_handle(UABI_ATTR_QP_SEND_CQ, env.cq)
	    .add_handle(UABI_ATTR_QP_RECV_CQ, env.cq);
	qc.add_in(UABI_ATTR_QP_INIT,
		  std::span<const std::byte>(reinterpret_cast<const std::byte *>(&qi), kOldInit));
	Message qm = NEED(ctx().call(std::move(qc)));
	Handle qp = qm.result(0).out_handle;

	constexpr std::size_t kOldAttr = offsetof(uabi_qp_attr, reserved);
	uabi_qp_attr a = valid_qp_attr(UABI_QPS_RESET, UABI_QPS_INIT);
	Command mod(UABI_OBJ_QP, UABI_METHOD_MODIFY, qp);
	mod.add_in(UABI_ATTR_QP_ATTR,
		   std::span<const std::byte>(reinterpret_cast<const std::byte *>(&a), kOldAttr));
	mod.add_in(UABI_ATTR_QP_ATTR_MASK,
		   std::uint32_t(UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT |
				 UABI_QP_ACCESS_FLAGS));
	NEED(ctx().call(std::move(mod)));
	QpQuery q = NEED(ctx().query_qp(qp));
	EXPECT_EQ(q.attr.qp_state, unsigned(UABI_QPS_INIT));
	EXPECT_EQ(q.attr.qp_access_flags, a.qp_access_flags);
	EXPECT_EQ(q.init.qp_type, unsigned(UABI_QPT_RC));

	// One byte short of the declared minimum is still EINVAL.
	Command bad(UABI_OBJ_MR, UABI_METHOD_CREATE);
	bad.add_handle(UABI_ATTR_MR_PD, env.pd);
	bad.add_in(UABI_ATTR_MR_REG,
		   std::span<const std::byte>(reinterpret_cast<const std::byte *>(&reg), kOldReg - 1));
	EXPECT_ERRNO(ctx().call(std::move(bad)), EINVAL);

	EXPECT_OK(ctx().destroy_qp(qp));
	EXPECT_OK(ctx().dereg_mr(mm.result(0).out_handle));
}

TEST_F(ParserAccepts, HandleAttributeWithZeroTailIsAccepted)
{
	Handle pd = NEED(ctx().alloc_pd());
	static char buf[64];
	Command c(UABI_OBJ_MR, UABI_METHOD_CREATE);
	c.add_in(UABI_ATTR_MR_PD, std::uint64_t(pd));
	uabi_mr_reg reg{};
	reg.addr = reinterpret_cast<std::uintptr_t>(buf);
	reg.iova = reg.addr;
	reg.length = sizeof(buf);
	reg.access = kLocalWrite;
	c.add_in(UABI_ATTR_MR_REG, reg);
	Message m = NEED(ctx().call(std::move(c)));
	EXPECT_ERRNO(ctx().dealloc_pd(pd), EBUSY) << "the MR is on that PD";
	EXPECT_OK(ctx().dereg_mr(m.result(0).out_handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(ParserAccepts, LongerOutputIsAcceptedAndFilled)
{
	Command c = cmd_create_cq(16);
	OutAttr o = c.add_out(UABI_ATTR_CQ_RESP, sizeof(uabi_cq_resp) + 16);
	Message m = NEED(ctx().call(std::move(c)));
	bool valid = false;
	auto out = m.out_bytes(0, o, &valid);
	EXPECT_TRUE(valid);
	ASSERT_GE(out.size(), sizeof(uabi_cq_resp));
	uabi_cq_resp resp{};
	std::memcpy(&resp, out.data(), sizeof(resp));
	EXPECT_GE(resp.cqe, 16u);
	EXPECT_OK(ctx().destroy_cq(m.result(0).out_handle));
}

TEST_F(ParserAccepts, ExactlyMaxAttributesAreAccepted)
{
	auto before = counters();
	Command c = cmd_alloc_pd();
	for (unsigned i = 0; i < UABI_MAX_CMD_ATTRS; i++)
		c.add_in(std::uint16_t(kUnknownAttr + i), std::uint32_t(i), 0);
	Message m = NEED(ctx().call(std::move(c)));
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 1);
	EXPECT_OK(ctx().dealloc_pd(m.result(0).out_handle));
}

// --------------------------------------------------- execution time

class ParserHandles : public UabiTest
{
};

TEST_F(ParserHandles, HandleThatDoesNotExistIsENOENT)
{
	Snapshot before = snapshot(ctx());
	EXPECT_ERRNO(ctx().dealloc_pd(0), ENOENT);
	EXPECT_ERRNO(ctx().dealloc_pd(0x00abcdef), ENOENT);
	EXPECT_ERRNO(ctx().dealloc_pd(0xffffffffu), ENOENT);
	EXPECT_ERRNO(ctx().query_qp(12345), ENOENT);
	EXPECT_ERRNO(ctx().reg_mr(Handle(777), "x", 1, kLocalWrite), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after ENOENT");
}

TEST_F(ParserHandles, DestroyedHandleIsENOENT)
{
	Handle pd = NEED(ctx().alloc_pd());
	EXPECT_OK(ctx().dealloc_pd(pd));
	EXPECT_ERRNO(ctx().dealloc_pd(pd), ENOENT);
	EXPECT_ERRNO(ctx().reg_mr(pd, "x", 1, kLocalWrite), ENOENT);
}

TEST_F(ParserHandles, HandleOfTheWrongTypeIsEINVAL)
{
	Handle pd = NEED(ctx().alloc_pd());
	CqInfo cq = NEED(ctx().create_cq(4));
	Snapshot before = snapshot(ctx());
	// As the command's target.
	EXPECT_ERRNO(ctx().destroy_cq(pd), EINVAL);
	EXPECT_ERRNO(ctx().dealloc_pd(cq.handle), EINVAL);
	EXPECT_ERRNO(ctx().query_qp(pd), EINVAL);
	// As an attribute.
	EXPECT_ERRNO(ctx().reg_mr(cq.handle, "x", 1, kLocalWrite), EINVAL);
	EXPECT_ERRNO(ctx().create_cq(4, Ref(pd)), EINVAL);
	expect_snapshot_eq(before, snapshot(ctx()), "after wrong-type handles");
	// Both objects are intact.
	EXPECT_OK(ctx().destroy_cq(cq.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(ParserHandles, HandleOfAnotherContextIsENOENT)
{
	Handle pd = NEED(ctx().alloc_pd());
	CqInfo cq = NEED(ctx().create_cq(4));
	Context &b = open_extra();
	Snapshot a_before = snapshot(ctx());
	Snapshot b_before = snapshot(b);
	EXPECT_EQ(b_before.c.context[UABI_OBJ_PD], 0u);
	EXPECT_ERRNO(b.dealloc_pd(pd), ENOENT);
	EXPECT_ERRNO(b.destroy_cq(cq.handle), ENOENT);
	EXPECT_ERRNO(b.reg_mr(pd, "x", 1, kLocalWrite), ENOENT);
	QpCreate qc;
	qc.pd = pd;
	qc.send_cq = cq.handle;
	qc.recv_cq = cq.handle;
	qc.init = qp_init(UABI_QPT_RC);
	EXPECT_ERRNO(b.create_qp(qc), ENOENT);
	expect_snapshot_eq(a_before, snapshot(ctx()), "context A after B's attempts");
	expect_context_counters_eq(b_before.c, NEED(b.counters()), "context B");
	EXPECT_OK(ctx().destroy_cq(cq.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(ParserHandles, AbsurdCountsAreEINVALAndCreateNothing)
{
	QpEnv env = make_env(ctx());
	Snapshot before = snapshot(ctx());
	for (int which = 0; which < 4; which++) {
		QpCreate qc;
		qc.pd = env.pd;
		qc.send_cq = env.cq;
		qc.recv_cq = env.cq;
		qc.init = qp_init(UABI_QPT_RC);
		switch (which) {
		case 0:
			qc.init.cap.max_send_wr = 1u << 31;
			break;
		case 1:
			qc.init.cap.max_recv_wr = 1u << 31;
			break;
		case 2:
			qc.init.cap.max_send_sge = 1u << 31;
			break;
		case 3:
			qc.init.cap.max_inline_data = 1u << 31;
			break;
		}
		EXPECT_ERRNO(ctx().create_qp(qc), EINVAL) << "cap field " << which;
	}
	// One past what the device reports.
	uabi_device_attr dev = NEED(ctx().query_device()).attr;
	for (int which = 0; which < 4; which++) {
		QpCreate qc;
		qc.pd = env.pd;
		qc.send_cq = env.cq;
		qc.recv_cq = env.cq;
		qc.init = qp_init(UABI_QPT_RC);
		switch (which) {
		case 0:
			qc.init.cap.max_send_wr = dev.max_qp_wr + 1;
			break;
		case 1:
			qc.init.cap.max_recv_wr = dev.max_qp_wr + 1;
			break;
		case 2:
			qc.init.cap.max_send_sge = dev.max_sge + 1;
			break;
		case 3:
			qc.init.cap.max_inline_data = dev.max_inline_data + 1;
			break;
		}
		EXPECT_ERRNO(ctx().create_qp(qc), EINVAL) << "cap field " << which << " max+1";
	}
	EXPECT_ERRNO(ctx().create_cq(dev.max_cqe + 1), EINVAL);
	SrqCreate big;
	big.pd = env.pd;
	big.init.attr.max_wr = dev.max_srq_wr + 1;
	big.init.attr.max_sge = 1;
	EXPECT_ERRNO(ctx().create_srq(big), EINVAL);
	big.init.attr.max_wr = 1;
	big.init.attr.max_sge = dev.max_srq_sge + 1;
	EXPECT_ERRNO(ctx().create_srq(big), EINVAL);
	EXPECT_ERRNO(ctx().create_cq(1u << 31), EINVAL);
	EXPECT_ERRNO(ctx().create_cq(0xffffffffu), EINVAL);
	EXPECT_ERRNO(ctx().create_cq(0), EINVAL);
	SrqCreate sc;
	sc.pd = env.pd;
	sc.init.attr.max_wr = 1u << 31;
	sc.init.attr.max_sge = 1;
	EXPECT_ERRNO(ctx().create_srq(sc), EINVAL);
	expect_snapshot_eq(before, snapshot(ctx()), "after absurd counts");
	// Resizing to an absurd size changes nothing either.
	auto cq_before = NEED(ctx().resize_cq(env.cq, 16));
	EXPECT_ERRNO(ctx().resize_cq(env.cq, 1u << 31), EINVAL);
	EXPECT_ERRNO(ctx().resize_cq(env.cq, dev.max_cqe + 1), EINVAL);
	Command q(UABI_OBJ_CQ, UABI_METHOD_QUERY, env.cq);
	OutAttr o = q.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP);
	Message m = NEED(ctx().call(std::move(q)));
	uabi_cq_resp r{};
	m.read(0, o, r);
	EXPECT_EQ(r.cqe, cq_before.cqe);
}

TEST_F(ParserHandles, ExecutionFailureStopsTheChainAndLaterCommandsDoNotRun)
{
	Handle pd = NEED(ctx().alloc_pd());
	auto before = counters();
	Message m = make_message(
	    {cmd_alloc_pd(), Command(UABI_OBJ_CQ, UABI_METHOD_DESTROY, pd), cmd_alloc_pd()});
	RawMsg r(m);
	EXPECT_STATUS(r.exec(ctx()), -EINVAL);
	EXPECT_STATUS(r.msg().status, -EINVAL);
	EXPECT_EQ(r.msg().executed, 1u);
	EXPECT_EQ(r.msg().failed_index, 1u);
	EXPECT_STATUS(r.cmd(0).status, 0);
	EXPECT_STATUS(r.cmd(1).status, -EINVAL);
	EXPECT_STATUS(r.cmd(2).status, UABI_CMD_STATUS_NOT_RUN);
	EXPECT_EQ(r.cmd(2).out_handle, 0u);
	EXPECT_EQ(counters().context[UABI_OBJ_PD], before.context[UABI_OBJ_PD] + 1)
	    << "only command 0 ran";
	EXPECT_OK(ctx().dealloc_pd(r.cmd(0).out_handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

} // namespace
