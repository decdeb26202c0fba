// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <uabi/message.hpp>

#include <rdma/uabi_wire.h>

#include <algorithm>
#include <type_traits>

namespace uabi {

namespace {

template <class T>
void put(std::vector<std::byte> &buf, std::size_t off, const T &v)
{
	std::memcpy(buf.data() + off, &v, sizeof(T));
}

// What a command's append() laid out: whole attributes, n of them (its size
// is bounded like a message's by encode()).
uabi_wire_iter walk_attrs(std::span<const std::byte> attrs, std::size_t n)
{
	uabi_wire_iter it{};
	uabi_wire_attrs_init_range(&it, attrs.data(), 0,
				   std::uint32_t(std::min<std::size_t>(attrs.size(), UINT32_MAX)),
				   std::uint32_t(std::min<std::size_t>(n, UINT32_MAX)));
	return it;
}

} // namespace

Command &Command::set_handle(Handle h)
{
	handle_ = h;
	flags_ &= ~std::uint32_t(UABI_CMD_F_HANDLE_REF);
	return *this;
}

Command &Command::set_handle_ref(std::uint32_t idx)
{
	handle_ = idx;
	flags_ |= UABI_CMD_F_HANDLE_REF;
	return *this;
}

Command &Command::set_target(Ref r)
{
	return r.is_chain() ? set_handle_ref(r.value()) : set_handle(r.value());
}

std::byte *Command::append(std::uint16_t id, std::uint16_t flags, std::size_t len)
{
	if (len > UINT32_MAX - 8) {
		too_big_ = true;
		len = 0;
	}
	// grow() zeroes the new bytes: reserved fields, outputs, padding.
	std::byte *at = attrs_.grow(sizeof(uabi_attr) + UABI_ALIGN8(len));
	uabi_attr ah{};
	ah.id = id;
	ah.flags = flags;
	ah.len = std::uint32_t(len);
	std::memcpy(at, &ah, sizeof(ah));
	num_attrs_++;
	return at + sizeof(ah);
}

Command &Command::add_in(std::uint16_t id, std::span<const std::byte> payload,
			 std::uint16_t flags)
{
	std::byte *p = append(id, flags, payload.size());
	if (!too_big_ && !payload.empty())
		std::memcpy(p, payload.data(), payload.size());
	return *this;
}

Command &Command::add_handle(std::uint16_t id, Handle h, std::uint16_t flags)
{
	return add_in(id, h, flags);
}

Command &Command::add_ref(std::uint16_t id, std::uint32_t cmd_index,
			  std::uint16_t flags)
{
	return add_in(id, cmd_index, std::uint16_t(flags | UABI_ATTR_F_CHAIN_REF));
}

Command &Command::add_object(std::uint16_t id, Ref r, std::uint16_t flags)
{
	return r.is_chain() ? add_ref(id, r.value(), flags)
			    : add_handle(id, r.value(), flags);
}

Command &Command::add_fd(std::uint16_t id, int fd, std::uint16_t flags)
{
	std::int32_t v = fd;
	return add_in(id, v, std::uint16_t(flags | UABI_ATTR_F_FD));
}

OutAttr Command::add_out(std::uint16_t id, std::uint32_t size, std::uint16_t flags)
{
	append(id, std::uint16_t(flags | UABI_ATTR_F_OUTPUT), size);
	return OutAttr{std::uint16_t(num_attrs_ - 1)};
}

OutAttr Command::add_inout(std::uint16_t id, std::span<const std::byte> payload,
			   std::uint16_t flags)
{
	add_in(id, payload, std::uint16_t(flags | UABI_ATTR_F_OUTPUT));
	return OutAttr{std::uint16_t(num_attrs_ - 1)};
}

std::size_t Command::attr_offset(std::size_t i) const
{
	uabi_wire_iter it = walk_attrs(attrs_, num_attrs_);
	for (std::size_t k = 0; uabi_wire_next_attr(&it); k++)
		if (k == i)
			return it.off;
	return SIZE_MAX;
}

bool Command::uses_chain_refs() const
{
	if (flags_ & UABI_CMD_F_HANDLE_REF)
		return true;
	uabi_wire_iter it = walk_attrs(attrs_, num_attrs_);
	while (uabi_wire_next_attr(&it))
		if (it.hdr.attr.flags & UABI_ATTR_F_CHAIN_REF)
			return true;
	return false;
}

namespace {

void append(std::vector<std::byte> &buf, const void *p, std::size_t n)
{
	const auto *b = static_cast<const std::byte *>(p);
	buf.insert(buf.end(), b, b + n);
}

} // namespace

// ------------------------------------------------------ spare buffers

namespace {

// Buffers smaller than this come and go through malloc's free lists
// cheaply; larger ones are what malloc gives back to the system when freed
// (a trimmed heap, an unmapped chunk) and maps again, a page fault per
// page, for the next message of the same size.
constexpr std::size_t kSpareMin = 16 << 10;
// Never kept: more than a message can hold (UABI_MAX_MSG_BYTES; the
// commands' and attributes' tables of a message of 1024 commands stay far
// below).
constexpr std::size_t kSpareMax = 1 << 20;

// Set once the thread's spare buffers are destroyed (thread exit): a
// message destroyed later frees its buffers.
thread_local bool t_spare_gone = false;

} // namespace

struct Message::Spare {
	std::vector<std::byte> buf;
	std::vector<SentCmd> cmds;
	std::vector<SentAttr> attrs;
	~Spare() { t_spare_gone = true; }
};

Message::Spare *Message::spare()
{
	if (t_spare_gone)
		return nullptr;
	thread_local Spare s;
	return &s;
}

// Makes room for want elements in v, doubling; a capacity of kSpareMin
// bytes or more comes from the thread's spare buffer when it is large
// enough.
template <class V>
void Message::grow(V &v, std::size_t want, V Spare::*from)
{
	if (v.capacity() >= want)
		return;
	const std::size_t cap = std::max(2 * v.capacity(), want);
	const std::size_t esz = sizeof(typename V::value_type);
	if (cap * esz >= kSpareMin) {
		if (Spare *sp = spare(); sp && (sp->*from).capacity() >= want) {
			V b = std::move(sp->*from);
			b.assign(v.begin(), v.end());
			v.swap(b); // b, the smaller buffer, is freed here
			return;
		}
	}
	v.reserve(cap);
}

Message::~Message()
{
	Spare *sp = spare();
	if (!sp)
		return;
	auto keep = [](auto &mine, auto &spare) {
		const std::size_t esz = sizeof(typename std::remove_reference_t<decltype(mine)>::value_type);
		const std::size_t bytes = mine.capacity() * esz;
		if (bytes >= kSpareMin && bytes <= kSpareMax && mine.capacity() > spare.capacity()) {
			mine.clear();
			spare.swap(mine); // the smaller one is freed with this message
		}
	};
	keep(buf_, sp->buf);
	keep(cmds_, sp->cmds);
	keep(attrs_, sp->attrs);
}

std::uint32_t Message::add(Command cmd)
{
	if (buf_.empty())
		buf_.resize(sizeof(uabi_msg_hdr)); // written by encode()
	if (cmd.num_attrs() > UINT16_MAX || cmd.too_big() || cmd.encoded_size() > UINT32_MAX)
		too_big_ = true;
	const std::size_t off = buf_.size();
	uabi_cmd_hdr ch{};
	ch.length = std::uint32_t(cmd.encoded_size());
	ch.object = cmd.object();
	ch.method = cmd.method();
	ch.handle = cmd.handle();
	ch.flags = cmd.flags();
	ch.num_attrs = std::uint16_t(cmd.num_attrs());
	// The command's attributes are already in wire form, zeroed where the
	// sender writes nothing.
	auto a = cmd.attr_bytes();
	grow(buf_, buf_.size() + sizeof(ch) + a.size(), &Spare::buf);
	append(buf_, &ch, sizeof(ch));
	append(buf_, a.data(), a.size());
	grow(cmds_, cmds_.size() + 1, &Spare::cmds);
	cmds_.push_back({off, attrs_.size()});
	grow(attrs_, attrs_.size() + cmd.num_attrs(), &Spare::attrs);
	uabi_wire_iter it = walk_attrs(a, cmd.num_attrs());
	while (uabi_wire_next_attr(&it))
		attrs_.push_back({off + sizeof(ch) + it.off, it.hdr.attr.len});
	dirty_ = true;
	return std::uint32_t(cmds_.size() - 1);
}

int Message::encode()
{
	if (too_big_ || cmds_.size() > UINT16_MAX)
		return E2BIG;
	if (buf_.empty())
		buf_.resize(sizeof(uabi_msg_hdr));
	if (buf_.size() > UINT32_MAX)
		return E2BIG;
	uabi_msg_hdr mh{};
	mh.magic = UABI_MSG_MAGIC;
	mh.length = std::uint32_t(buf_.size());
	mh.abi_version = UABI_ABI_VERSION;
	mh.count = std::uint16_t(cmds_.size());
	mh.flags = flags_;
	put(buf_, 0, mh);
	dirty_ = false;
	return 0;
}

std::vector<std::byte> &Message::raw()
{
	if (dirty_ && encode() != 0) {
		// Nothing that can be sent; the commands' bytes go with it.
		buf_.clear();
		cmds_.clear();
		attrs_.clear();
	}
	return buf_;
}

uabi_msg_hdr Message::header() const
{
	uabi_msg_hdr h{};
	std::memcpy(&h, buf_.data(), std::min(sizeof(h), buf_.size()));
	return h;
}

CommandResult Message::result(std::uint32_t cmd) const
{
	uabi_cmd_hdr h{};
	if (cmd >= cmds_.size() || cmds_[cmd].off + sizeof(h) > buf_.size())
		return {UABI_CMD_STATUS_NOT_RUN, 0};
	std::memcpy(&h, buf_.data() + cmds_[cmd].off, sizeof(h));
	return {h.status, h.out_handle};
}

std::span<const std::byte> Message::out_bytes(std::uint32_t cmd, OutAttr a,
					      bool *valid) const
{
	if (valid)
		*valid = false;
	if (cmd >= cmds_.size())
		return {};
	const std::size_t first = cmds_[cmd].first_attr;
	const std::size_t end = cmd + 1 < cmds_.size() ? cmds_[cmd + 1].first_attr : attrs_.size();
	if (a.index >= end - first)
		return {};
	// What we laid out: the receiver may shrink len to what it wrote, but
	// we never read past the buffer of the request.
	const SentAttr &sent = attrs_[first + a.index];
	std::size_t off = sent.off;
	if (off + sizeof(uabi_attr) > buf_.size())
		return {};
	uabi_attr ah{};
	std::memcpy(&ah, buf_.data() + off, sizeof(ah));
	std::size_t len = std::min<std::size_t>(ah.len, sent.len);
	off += sizeof(ah);
	len = std::min(len, buf_.size() - off);
	if (valid)
		*valid = (ah.flags & UABI_ATTR_F_VALID_OUTPUT) != 0;
	return {buf_.data() + off, len};
}

} // namespace uabi
