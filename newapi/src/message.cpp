// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include <uabi/message.hpp>

#include <algorithm>

namespace uabi {

namespace {

template <class T>
void put(std::vector<std::byte> &buf, std::size_t off, const T &v)
{
	std::memcpy(buf.data() + off, &v, sizeof(T));
}

std::vector<std::byte> to_vec(std::span<const std::byte> s)
{
	return std::vector<std::byte>(s.begin(), s.end());
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

Command &Command::add_in(std::uint16_t id, std::span<const std::byte> payload,
			 std::uint16_t flags)
{
	attrs_.push_back(Attr{id, flags, to_vec(payload)});
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
	attrs_.push_back(Attr{id, std::uint16_t(flags | UABI_ATTR_F_OUTPUT),
			      std::vector<std::byte>(size)});
	return OutAttr{std::uint16_t(attrs_.size() - 1)};
}

OutAttr Command::add_inout(std::uint16_t id, std::span<const std::byte> payload,
			   std::uint16_t flags)
{
	attrs_.push_back(Attr{id, std::uint16_t(flags | UABI_ATTR_F_OUTPUT),
			      to_vec(payload)});
	return OutAttr{std::uint16_t(attrs_.size() - 1)};
}

bool Command::uses_chain_refs() const
{
	if (flags_ & UABI_CMD_F_HANDLE_REF)
		return true;
	return std::any_of(attrs_.begin(), attrs_.end(), [](const Attr &a) {
		return (a.flags & UABI_ATTR_F_CHAIN_REF) != 0;
	});
}

std::size_t Command::encoded_size() const
{
	std::size_t n = sizeof(uabi_cmd_hdr);
	for (const auto &a : attrs_)
		n += sizeof(uabi_attr) + UABI_ALIGN8(a.payload.size());
	return n;
}

std::uint32_t Message::add(Command cmd)
{
	cmds_.push_back(std::move(cmd));
	dirty_ = true;
	return std::uint32_t(cmds_.size() - 1);
}

Command &Message::command(std::uint32_t i)
{
	dirty_ = true;
	return cmds_.at(i);
}

int Message::encode()
{
	if (cmds_.size() > UINT16_MAX)
		return E2BIG;
	std::size_t total = sizeof(uabi_msg_hdr);
	for (const auto &c : cmds_) {
		if (c.attrs().size() > UINT16_MAX)
			return E2BIG;
		for (const auto &a : c.attrs())
			if (a.payload.size() > UINT32_MAX - 8)
				return E2BIG;
		total += c.encoded_size();
	}
	if (total > UINT32_MAX)
		return E2BIG;

	// assign() zeroes everything: reserved fields, outputs, padding.
	buf_.assign(total, std::byte{0});
	cmd_off_.clear();
	attr_off_.assign(cmds_.size(), {});

	uabi_msg_hdr mh{};
	mh.magic = UABI_MSG_MAGIC;
	mh.length = std::uint32_t(total);
	mh.abi_version = UABI_ABI_VERSION;
	mh.count = std::uint16_t(cmds_.size());
	mh.flags = flags_;
	put(buf_, 0, mh);

	std::size_t off = sizeof(uabi_msg_hdr);
	for (std::size_t i = 0; i < cmds_.size(); i++) {
		const Command &c = cmds_[i];
		uabi_cmd_hdr ch{};
		ch.length = std::uint32_t(c.encoded_size());
		ch.object = c.object();
		ch.method = c.method();
		ch.handle = c.handle();
		ch.flags = c.flags();
		ch.num_attrs = std::uint16_t(c.attrs().size());
		cmd_off_.push_back(off);
		put(buf_, off, ch);
		off += sizeof(ch);
		for (const auto &a : c.attrs()) {
			uabi_attr ah{};
			ah.id = a.id;
			ah.flags = a.flags;
			ah.len = std::uint32_t(a.payload.size());
			attr_off_[i].push_back(off);
			put(buf_, off, ah);
			off += sizeof(ah);
			if (!a.payload.empty())
				std::memcpy(buf_.data() + off, a.payload.data(),
					    a.payload.size());
			off += UABI_ALIGN8(a.payload.size());
		}
	}
	dirty_ = false;
	return 0;
}

std::vector<std::byte> &Message::raw()
{
	if (dirty_ && encode() != 0)
		buf_.clear();
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
	if (cmd >= cmd_off_.size() || cmd_off_[cmd] + sizeof(h) > buf_.size())
		return {UABI_CMD_STATUS_NOT_RUN, 0};
	std::memcpy(&h, buf_.data() + cmd_off_[cmd], sizeof(h));
	return {h.status, h.out_handle};
}

std::span<const std::byte> Message::out_bytes(std::uint32_t cmd, OutAttr a,
					      bool *valid) const
{
	if (valid)
		*valid = false;
	if (cmd >= attr_off_.size() || a.index >= attr_off_[cmd].size() ||
	    a.index >= cmds_[cmd].attrs().size())
		return {};
	std::size_t off = attr_off_[cmd][a.index];
	if (off + sizeof(uabi_attr) > buf_.size())
		return {};
	uabi_attr ah{};
	std::memcpy(&ah, buf_.data() + off, sizeof(ah));
	// The receiver may shrink len to what it wrote; never read past the
	// buffer we laid out.
	std::size_t cap = cmds_[cmd].attrs()[a.index].payload.size();
	std::size_t len = std::min<std::size_t>(ah.len, cap);
	off += sizeof(ah);
	len = std::min(len, buf_.size() - off);
	if (valid)
		*valid = (ah.flags & UABI_ATTR_F_VALID_OUTPUT) != 0;
	return {buf_.data() + off, len};
}

} // namespace uabi
