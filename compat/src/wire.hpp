// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A small writer for the wire format of <rdma/uabi.h> into a fixed buffer,
// for the translator's hot path: no allocation, the same bytes that
// uabi::Message::encode() lays out.  Sizes come from the translator's code,
// never from legacy input, so the buffer cannot overflow (asserted).
#ifndef UABI_COMPAT_WIRE_HPP
#define UABI_COMPAT_WIRE_HPP

#include <rdma/uabi.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uabi::legacy::detail
{

inline constexpr std::uint16_t kMand = UABI_ATTR_F_MANDATORY;
inline constexpr std::size_t kWireBytes = 2048;
inline constexpr std::uint32_t kMaxWireCmds = 4;

class Wire
{
      public:
	explicit Wire(std::byte *buf) : b_(buf) {}

	void begin(std::uint32_t msg_flags = 0)
	{
		off_ = sizeof(uabi_msg_hdr);
		count_ = 0;
		flags_ = msg_flags;
		cur_ = 0;
	}

	// Starts a command; returns its index in the message.
	std::uint32_t cmd(std::uint16_t object, std::uint16_t method, std::uint32_t handle = 0,
			  std::uint32_t cflags = 0)
	{
		close_cmd();
		assert(count_ < kMaxWireCmds && off_ + sizeof(uabi_cmd_hdr) <= kWireBytes);
		cur_ = off_;
		cmd_off_[count_] = off_;
		uabi_cmd_hdr h{};
		h.object = object;
		h.method = method;
		h.handle = handle;
		h.flags = cflags;
		std::memcpy(b_ + off_, &h, sizeof(h));
		off_ += sizeof(h);
		nattrs_ = 0;
		return count_++;
	}

	// An attribute; returns the offset of its payload.
	std::size_t attr(std::uint16_t id, std::uint16_t flags, const void *p, std::uint32_t len)
	{
		std::size_t padded = UABI_ALIGN8(len);
		assert(off_ + sizeof(uabi_attr) + padded <= kWireBytes);
		uabi_attr a{id, flags, len};
		std::memcpy(b_ + off_, &a, sizeof(a));
		off_ += sizeof(a);
		std::size_t payload = off_;
		if (p)
			std::memcpy(b_ + off_, p, len);
		else
			std::memset(b_ + off_, 0, len);
		if (padded != len)
			std::memset(b_ + off_ + len, 0, padded - len);
		off_ += padded;
		nattrs_++;
		return payload;
	}

	template <class T> std::size_t in(std::uint16_t id, const T &v, std::uint16_t flags = kMand)
	{
		return attr(id, flags, &v, sizeof(T));
	}
	std::size_t out(std::uint16_t id, std::uint32_t len, std::uint16_t flags = kMand)
	{
		return attr(id, std::uint16_t(flags | UABI_ATTR_F_OUTPUT), nullptr, len);
	}
	template <class T>
	std::size_t inout(std::uint16_t id, const T &v, std::uint16_t flags = kMand)
	{
		return attr(id, std::uint16_t(flags | UABI_ATTR_F_OUTPUT), &v, sizeof(T));
	}

	// Closes the message; returns its length.
	std::size_t finish()
	{
		close_cmd();
		uabi_msg_hdr h{};
		h.magic = UABI_MSG_MAGIC;
		h.length = std::uint32_t(off_);
		h.abi_version = UABI_ABI_VERSION;
		h.count = std::uint16_t(count_);
		h.flags = flags_;
		std::memcpy(b_, &h, sizeof(h));
		return off_;
	}

	std::byte *data() const { return b_; }
	std::size_t size() const { return off_; }

	// After execution.
	uabi_msg_hdr msg() const
	{
		uabi_msg_hdr h;
		std::memcpy(&h, b_, sizeof(h));
		return h;
	}
	uabi_cmd_hdr result(std::uint32_t i) const
	{
		uabi_cmd_hdr h;
		std::memcpy(&h, b_ + cmd_off_[i], sizeof(h));
		return h;
	}
	// Whether the receiver wrote the output whose payload is at `payload`.
	bool valid(std::size_t payload) const
	{
		uabi_attr a;
		std::memcpy(&a, b_ + payload - sizeof(a), sizeof(a));
		return (a.flags & UABI_ATTR_F_VALID_OUTPUT) != 0;
	}
	template <class T> T get(std::size_t payload) const
	{
		T v;
		std::memcpy(&v, b_ + payload, sizeof(T));
		return v;
	}

      private:
	void close_cmd()
	{
		if (!cur_)
			return;
		std::uint32_t len = std::uint32_t(off_ - cur_);
		std::uint16_t n = nattrs_;
		std::memcpy(b_ + cur_ + offsetof(uabi_cmd_hdr, length), &len, sizeof(len));
		std::memcpy(b_ + cur_ + offsetof(uabi_cmd_hdr, num_attrs), &n, sizeof(n));
		cur_ = 0;
	}

	std::byte *b_;
	std::size_t off_ = 0;
	std::size_t cur_ = 0;
	std::size_t cmd_off_[kMaxWireCmds] = {};
	std::uint32_t count_ = 0;
	std::uint32_t flags_ = 0;
	std::uint16_t nattrs_ = 0;
};

} // namespace uabi::legacy::detail

#endif // UABI_COMPAT_WIRE_HPP
