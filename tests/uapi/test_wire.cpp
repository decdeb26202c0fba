// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The wire walker of <rdma/uabi_wire.h> on hand-made bytes: where it finds
// commands and attributes, and exactly where it stops.  The dispatcher's
// errnos for the same inputs are the conformance suite's business
// (tests/conformance/test_parser.cpp); this checks the walk itself.
#include <rdma/uabi.h>
#include <rdma/uabi_wire.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

// Lays out a message by hand, without the client library.
class Bytes {
public:
	Bytes() : b_(sizeof(uabi_msg_hdr)) {}

	// Starts a command; its length and num_attrs are filled by end_cmd().
	void cmd(std::uint16_t object = UABI_OBJ_DEVICE, std::uint16_t method = UABI_METHOD_QUERY)
	{
		cur_ = b_.size();
		uabi_cmd_hdr h{};
		h.object = object;
		h.method = method;
		put(h);
		nattrs_ = 0;
		count_++;
	}
	void attr(std::uint16_t id, std::uint32_t len, std::uint8_t fill = 0xab,
		  std::uint16_t flags = 0)
	{
		uabi_attr a{};
		a.id = id;
		a.flags = flags;
		a.len = len;
		put(a);
		b_.insert(b_.end(), len, fill);
		b_.resize(b_.size() + (UABI_ALIGN8(len) - len), 0);
		nattrs_++;
	}
	void end_cmd()
	{
		set<std::uint32_t>(cur_ + offsetof(uabi_cmd_hdr, length),
				   std::uint32_t(b_.size() - cur_));
		set<std::uint16_t>(cur_ + offsetof(uabi_cmd_hdr, num_attrs), nattrs_);
	}
	// Writes the message header for what was laid out.
	std::vector<std::uint8_t> &done()
	{
		uabi_msg_hdr h{};
		h.magic = UABI_MSG_MAGIC;
		h.length = std::uint32_t(b_.size());
		h.abi_version = UABI_ABI_VERSION;
		h.count = count_;
		std::memcpy(b_.data(), &h, sizeof(h));
		return b_;
	}
	template <class T> void set(std::size_t off, T v) { std::memcpy(b_.data() + off, &v, sizeof(v)); }

private:
	template <class T> void put(const T &v)
	{
		const auto *p = reinterpret_cast<const std::uint8_t *>(&v);
		b_.insert(b_.end(), p, p + sizeof(T));
	}
	std::vector<std::uint8_t> b_;
	std::size_t cur_ = 0;
	std::uint16_t nattrs_ = 0;
	std::uint16_t count_ = 0;
};

struct Walk {
	std::vector<std::uint32_t> cmds;
	std::vector<std::vector<std::uint32_t>> attrs; // offsets from the message
	bool cmds_complete = false;
	std::vector<bool> attrs_complete;
};

Walk walk(const std::vector<std::uint8_t> &m, std::uint32_t max = UABI_MAX_CHAIN_CMDS)
{
	Walk w;
	uabi_wire_iter c{};
	uabi_wire_cmds_init(&c, m.data(), std::uint32_t(m.size()), max);
	while (uabi_wire_next_cmd(&c)) {
		w.cmds.push_back(c.off);
		w.attrs.emplace_back();
		uabi_wire_iter a{};
		uabi_wire_attrs_init(&a, m.data() + c.off);
		while (uabi_wire_next_attr(&a))
			w.attrs.back().push_back(c.off + a.off);
		w.attrs_complete.push_back(uabi_wire_complete(&a));
	}
	w.cmds_complete = uabi_wire_complete(&c);
	return w;
}

constexpr std::uint32_t H = sizeof(uabi_msg_hdr);   // 32
constexpr std::uint32_t C = sizeof(uabi_cmd_hdr);   // 32
constexpr std::uint32_t A = sizeof(uabi_attr);      // 8

TEST(Wire, WellFormedMessage)
{
	Bytes b;
	b.cmd();
	b.attr(1, 4);
	b.attr(2, 0);
	b.attr(3, 13);
	b.end_cmd();
	b.cmd();
	b.end_cmd();
	auto &m = b.done();
	ASSERT_TRUE(uabi_wire_msg_size_ok(m.size()));
	ASSERT_TRUE(uabi_wire_msg_framed(m.data(), m.size()));

	Walk w = walk(m);
	ASSERT_EQ(w.cmds, (std::vector<std::uint32_t>{H, H + C + (A + 8) + A + (A + 16)}));
	EXPECT_EQ(w.attrs[0], (std::vector<std::uint32_t>{H + C, H + C + A + 8, H + C + A + 8 + A}));
	EXPECT_TRUE(w.attrs[1].empty());
	EXPECT_TRUE(w.cmds_complete);
	EXPECT_TRUE(w.attrs_complete[0] && w.attrs_complete[1]);
	EXPECT_TRUE(uabi_wire_cmd_tiled(m.data() + w.cmds[0]));
	EXPECT_TRUE(uabi_wire_cmd_tiled(m.data() + w.cmds[1]));
}

TEST(Wire, HeaderCopiesAndPayload)
{
	Bytes b;
	b.cmd(UABI_OBJ_QP, UABI_METHOD_MODIFY);
	b.attr(7, 3, 0x5a, UABI_ATTR_F_MANDATORY);
	b.end_cmd();
	auto &m = b.done();
	uabi_wire_iter c{}, a{};
	uabi_wire_cmds_init(&c, m.data(), std::uint32_t(m.size()), UABI_MAX_CHAIN_CMDS);
	ASSERT_TRUE(uabi_wire_next_cmd(&c));
	EXPECT_EQ(c.hdr.cmd.object, UABI_OBJ_QP);
	EXPECT_EQ(c.hdr.cmd.method, UABI_METHOD_MODIFY);
	EXPECT_EQ(c.hdr.cmd.num_attrs, 1);
	uabi_wire_attrs_init(&a, m.data() + c.off);
	ASSERT_TRUE(uabi_wire_next_attr(&a));
	EXPECT_EQ(a.hdr.attr.id, 7);
	EXPECT_EQ(a.hdr.attr.flags, UABI_ATTR_F_MANDATORY);
	EXPECT_EQ(a.hdr.attr.len, 3u);
	EXPECT_EQ(uabi_wire_payload(&a), C + A);
	EXPECT_EQ(m[c.off + uabi_wire_payload(&a)], 0x5a);
	EXPECT_TRUE(uabi_wire_padding_zero(&a));
	EXPECT_FALSE(uabi_wire_next_attr(&a));
	EXPECT_FALSE(uabi_wire_next_cmd(&c));
}

TEST(Wire, MessageSizeAndHeader)
{
	EXPECT_FALSE(uabi_wire_msg_size_ok(H - 1));
	EXPECT_TRUE(uabi_wire_msg_size_ok(H));
	EXPECT_TRUE(uabi_wire_msg_size_ok(UABI_MAX_MSG_BYTES));
	EXPECT_FALSE(uabi_wire_msg_size_ok(UABI_MAX_MSG_BYTES + 1ull));
	EXPECT_FALSE(uabi_wire_msg_size_ok(1ull << 32));

	Bytes b;
	b.cmd();
	b.end_cmd();
	auto &m = b.done();
	EXPECT_FALSE(uabi_wire_msg_framed(m.data(), m.size() + 8)); // length != bytes
	b.set<std::uint32_t>(0, 0x69626175);                        // byte-swapped magic
	EXPECT_FALSE(uabi_wire_msg_framed(m.data(), m.size()));
}

TEST(Wire, NoHeaderNoCommands)
{
	std::vector<std::uint8_t> m(H - 1, 0xff);
	uabi_wire_iter c{};
	uabi_wire_cmds_init(&c, m.data(), std::uint32_t(m.size()), UABI_MAX_CHAIN_CMDS);
	EXPECT_FALSE(uabi_wire_next_cmd(&c));
	EXPECT_EQ(uabi_wire_rest(&c), 0u);
}

TEST(Wire, CountIsCappedByMax)
{
	Bytes b;
	for (int i = 0; i < 3; i++) {
		b.cmd();
		b.end_cmd();
	}
	auto &m = b.done();
	Walk w = walk(m, 2);
	EXPECT_EQ(w.cmds.size(), 2u);
	EXPECT_FALSE(w.cmds_complete); // a command's bytes are left over
}

TEST(Wire, CommandLengthRules)
{
	for (std::uint32_t bad : {0u, C - 8, C + 4, 4096u}) {
		Bytes b;
		b.cmd();
		b.attr(1, 8);
		b.end_cmd();
		b.cmd();
		b.end_cmd();
		auto &m = b.done();
		b.set<std::uint32_t>(H, bad);
		Walk w = walk(m);
		EXPECT_TRUE(w.cmds.empty()) << "length " << bad;
		EXPECT_FALSE(w.cmds_complete);
	}
	// The second command's header does not fit in what is left.
	Bytes b;
	b.cmd();
	b.end_cmd();
	auto &m = b.done();
	m.resize(m.size() + C - 8, 0);
	b.set<std::uint16_t>(offsetof(uabi_msg_hdr, count), 2);
	b.set<std::uint32_t>(offsetof(uabi_msg_hdr, length), std::uint32_t(m.size()));
	Walk w = walk(m);
	EXPECT_EQ(w.cmds.size(), 1u);
	EXPECT_FALSE(w.cmds_complete);
}

TEST(Wire, MissingCommandsAndTrailingBytes)
{
	Bytes b;
	b.cmd();
	b.end_cmd();
	auto &m = b.done();
	b.set<std::uint16_t>(offsetof(uabi_msg_hdr, count), 2); // one more than there is
	EXPECT_FALSE(walk(m).cmds_complete);

	b.set<std::uint16_t>(offsetof(uabi_msg_hdr, count), 1);
	m.resize(m.size() + 8, 0); // bytes after the last command
	uabi_wire_iter c{};
	uabi_wire_cmds_init(&c, m.data(), std::uint32_t(m.size()), UABI_MAX_CHAIN_CMDS);
	ASSERT_TRUE(uabi_wire_next_cmd(&c));
	EXPECT_FALSE(uabi_wire_next_cmd(&c));
	EXPECT_EQ(uabi_wire_rest(&c), 8u);
	EXPECT_FALSE(uabi_wire_complete(&c));
}

TEST(Wire, AttributeMustFitItsCommand)
{
	// A payload length that would wrap a 32-bit sum, or reach past the
	// command, stops the walk at that attribute.
	for (std::uint32_t len : {0xffffffffu, 0xfffffff9u, 0x7fffffffu, 17u}) {
		Bytes b;
		b.cmd();
		b.attr(1, 4);
		b.attr(2, 16);
		b.end_cmd();
		b.cmd();
		b.end_cmd();
		auto &m = b.done();
		b.set<std::uint32_t>(H + C + A + 8 + offsetof(uabi_attr, len), len);
		Walk w = walk(m);
		ASSERT_EQ(w.cmds.size(), 2u) << "len " << len; // commands frame on their own
		EXPECT_EQ(w.attrs[0].size(), 1u) << "len " << len;
		EXPECT_FALSE(w.attrs_complete[0]);
		EXPECT_FALSE(uabi_wire_cmd_tiled(m.data() + H));
	}
	// The attribute header itself does not fit.
	Bytes b;
	b.cmd();
	b.end_cmd();
	auto &m = b.done();
	b.set<std::uint16_t>(H + offsetof(uabi_cmd_hdr, num_attrs), 1);
	Walk w = walk(m);
	EXPECT_TRUE(w.attrs[0].empty());
	EXPECT_FALSE(w.attrs_complete[0]);
}

TEST(Wire, TilingNeedsZeroPaddingAndExactEnd)
{
	Bytes b;
	b.cmd();
	b.attr(1, 5);
	b.end_cmd();
	auto &m = b.done();
	ASSERT_TRUE(uabi_wire_cmd_tiled(m.data() + H));
	m[H + C + A + 5] = 1; // a padding byte
	EXPECT_FALSE(uabi_wire_cmd_tiled(m.data() + H));
	EXPECT_EQ(walk(m).attrs[0].size(), 1u); // the walk itself does not look
	m[H + C + A + 5] = 0;

	// num_attrs says fewer attributes than the command holds.
	b.set<std::uint16_t>(H + offsetof(uabi_cmd_hdr, num_attrs), 0);
	EXPECT_FALSE(uabi_wire_cmd_tiled(m.data() + H));
	EXPECT_TRUE(walk(m).attrs_complete[0] == false);
}

TEST(Wire, AtMostMaxCmdAttrs)
{
	for (std::uint32_t n : {UABI_MAX_CMD_ATTRS, UABI_MAX_CMD_ATTRS + 1}) {
		Bytes b;
		b.cmd();
		for (std::uint32_t i = 0; i < n; i++)
			b.attr(std::uint16_t(i + 1), 0);
		b.end_cmd();
		auto &m = b.done();
		EXPECT_EQ(uabi_wire_cmd_tiled(m.data() + H), n <= UABI_MAX_CMD_ATTRS) << n;
		EXPECT_EQ(walk(m).attrs[0].size(), n); // the walk has no cap of its own
	}
}

TEST(Wire, NeedsNoAlignment)
{
	Bytes b;
	b.cmd();
	b.attr(1, 3);
	b.end_cmd();
	auto &m = b.done();
	std::vector<std::uint8_t> shifted(m.size() + 1);
	std::memcpy(shifted.data() + 1, m.data(), m.size());
	const std::uint8_t *p = shifted.data() + 1;
	uabi_wire_iter c{}, a{};
	uabi_wire_cmds_init(&c, p, std::uint32_t(m.size()), UABI_MAX_CHAIN_CMDS);
	ASSERT_TRUE(uabi_wire_next_cmd(&c));
	uabi_wire_attrs_init(&a, p + c.off);
	ASSERT_TRUE(uabi_wire_next_attr(&a));
	EXPECT_EQ(a.hdr.attr.len, 3u);
	EXPECT_TRUE(uabi_wire_cmd_tiled(p + c.off));
	EXPECT_FALSE(uabi_wire_next_cmd(&c));
	EXPECT_TRUE(uabi_wire_complete(&c));
}

TEST(Wire, AttributesWithoutTheirCommandHeader)
{
	Bytes b;
	b.cmd();
	b.attr(1, 1);
	b.attr(2, 9);
	b.end_cmd();
	auto &m = b.done();
	const std::uint8_t *attrs = m.data() + H + C;
	const std::uint32_t size = std::uint32_t(m.size() - H - C);
	uabi_wire_iter a{};
	uabi_wire_attrs_init_range(&a, attrs, 0, size, 2);
	ASSERT_TRUE(uabi_wire_next_attr(&a));
	EXPECT_EQ(a.off, 0u);
	ASSERT_TRUE(uabi_wire_next_attr(&a));
	EXPECT_EQ(a.off, A + 8);
	EXPECT_FALSE(uabi_wire_next_attr(&a));
	EXPECT_TRUE(uabi_wire_complete(&a));

	uabi_wire_attrs_init_range(&a, attrs, 0, size, 1); // fewer than there are
	ASSERT_TRUE(uabi_wire_next_attr(&a));
	EXPECT_FALSE(uabi_wire_next_attr(&a));
	EXPECT_FALSE(uabi_wire_complete(&a));

	uabi_wire_attrs_init_range(&a, nullptr, 0, 0, 4); // nothing at all
	EXPECT_FALSE(uabi_wire_next_attr(&a));
}

} // namespace
