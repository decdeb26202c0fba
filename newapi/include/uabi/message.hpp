// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Builders for the wire format of <rdma/uabi.h>, and the Result type the
// whole client library reports errors with.
#ifndef UABI_MESSAGE_HPP
#define UABI_MESSAGE_HPP

#include <rdma/uabi.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace uabi {

// ------------------------------------------------------------------ Result

// The error side of a Result: a positive errno value.
struct Error {
	int code;
};

// Accepts errno or -errno; 0 is not an error, so it becomes EIO.
constexpr Error make_error(int e) noexcept
{
	return Error{e < 0 ? -e : (e == 0 ? EIO : e)};
}

// A value or a positive errno.  Reading the value of a failed Result is a
// programming error and aborts (no exceptions in this library).
template <class T>
class [[nodiscard]] Result {
public:
	template <class U = T>
		requires(std::is_constructible_v<T, U &&> &&
			 !std::is_same_v<std::remove_cvref_t<U>, Error> &&
			 !std::is_same_v<std::remove_cvref_t<U>, Result>)
	Result(U &&v) : val_(std::forward<U>(v))
	{
	}
	Result(Error e) noexcept : err_(e.code) {}

	bool ok() const noexcept { return err_ == 0; }
	explicit operator bool() const noexcept { return ok(); }
	int error() const noexcept { return err_; } // 0 when ok

	T &value() & { check(); return *val_; }
	const T &value() const & { check(); return *val_; }
	T &&value() && { check(); return std::move(*val_); }
	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }
	T &&operator*() && { return std::move(*this).value(); }
	T *operator->() { return &value(); }
	const T *operator->() const { return &value(); }
	template <class U>
	T value_or(U &&dflt) const &
	{
		return ok() ? *val_ : static_cast<T>(std::forward<U>(dflt));
	}

private:
	void check() const
	{
		if (!val_)
			std::abort();
	}
	std::optional<T> val_;
	int err_ = 0;
};

template <>
class [[nodiscard]] Result<void> {
public:
	Result() noexcept = default;
	Result(Error e) noexcept : err_(e.code) {}
	bool ok() const noexcept { return err_ == 0; }
	explicit operator bool() const noexcept { return ok(); }
	int error() const noexcept { return err_; }

private:
	int err_ = 0;
};

// -------------------------------------------------------- handles, refs

using Handle = std::uint32_t;

// The index of an earlier command of the same message, standing for the
// handle that command creates.
struct ChainRef {
	std::uint32_t index = 0;
};

// Either a handle or a chain reference, so every call taking an object can
// take both.
class Ref {
public:
	constexpr Ref(Handle h) noexcept : v_(h), chain_(false) {}
	constexpr Ref(ChainRef r) noexcept : v_(r.index), chain_(true) {}
	constexpr bool is_chain() const noexcept { return chain_; }
	constexpr std::uint32_t value() const noexcept { return v_; }

private:
	std::uint32_t v_;
	bool chain_;
};

// ------------------------------------------------------------- Command

// Names an output attribute of a command: its position in the command.
struct OutAttr {
	std::uint16_t index = UINT16_MAX;
};

namespace detail {
template <class T>
struct is_span : std::false_type {};
template <class T, std::size_t N>
struct is_span<std::span<T, N>> : std::true_type {};
} // namespace detail

// Plain structs and integers that may be copied into a payload as bytes.
template <class T>
concept Payload = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> &&
		  !detail::is_span<T>::value;

inline constexpr std::uint16_t kMandatory = UABI_ATTR_F_MANDATORY;

namespace detail {

// A command's attribute bytes: in the object up to kInline bytes (what a
// verb's command takes: a QP modify is about 200), on the heap past that,
// so that building a command allocates nothing.
class AttrBytes {
public:
	static constexpr std::size_t kInline = 256;

	AttrBytes() noexcept = default;
	AttrBytes(const AttrBytes &o) { append_copy(o.data(), o.size()); }
	AttrBytes(AttrBytes &&o) noexcept { take(o); }
	AttrBytes &operator=(const AttrBytes &o)
	{
		if (this != &o) {
			size_ = 0;
			append_copy(o.data(), o.size());
		}
		return *this;
	}
	AttrBytes &operator=(AttrBytes &&o) noexcept
	{
		if (this != &o) {
			release();
			take(o);
		}
		return *this;
	}
	~AttrBytes() { release(); }

	std::byte *data() noexcept { return heap_ ? heap_ : inline_; }
	const std::byte *data() const noexcept { return heap_ ? heap_ : inline_; }
	std::size_t size() const noexcept { return size_; }
	bool empty() const noexcept { return size_ == 0; }
	operator std::span<const std::byte>() const noexcept { return {data(), size_}; }

	// Appends n zero bytes; returns where they start.
	std::byte *grow(std::size_t n)
	{
		reserve(size_ + n);
		std::byte *p = data() + size_;
		std::memset(p, 0, n);
		size_ += n;
		return p;
	}

private:
	void reserve(std::size_t want)
	{
		if (want <= cap_)
			return;
		std::size_t cap = cap_ * 2 > want ? cap_ * 2 : want;
		auto *p = static_cast<std::byte *>(std::malloc(cap));
		if (!p)
			throw std::bad_alloc();
		std::memcpy(p, data(), size_);
		release();
		heap_ = p;
		cap_ = cap;
	}
	void append_copy(const std::byte *p, std::size_t n)
	{
		if (n)
			std::memcpy(grow(n), p, n);
	}
	void release() noexcept
	{
		std::free(heap_);
		heap_ = nullptr;
		cap_ = kInline;
	}
	void take(AttrBytes &o) noexcept
	{
		size_ = o.size_;
		if (o.heap_) {
			heap_ = o.heap_;
			cap_ = o.cap_;
			o.heap_ = nullptr;
			o.cap_ = kInline;
		} else if (size_) {
			std::memcpy(inline_, o.inline_, size_);
		}
		o.size_ = 0;
	}

	std::size_t size_ = 0;
	std::size_t cap_ = kInline;
	std::byte *heap_ = nullptr;
	std::byte inline_[kInline];
};

} // namespace detail

class Command {
public:
	// One attribute as a value (tests build these; add_in() adds one).
	struct Attr {
		std::uint16_t id;
		std::uint16_t flags;
		std::vector<std::byte> payload; // len = payload.size()
	};

	Command() = default;
	Command(std::uint16_t object, std::uint16_t method, Handle handle = 0,
		std::uint32_t flags = 0)
		: object_(object), method_(method), handle_(handle), flags_(flags)
	{
	}

	std::uint16_t object() const { return object_; }
	std::uint16_t method() const { return method_; }
	Handle handle() const { return handle_; }
	std::uint32_t flags() const { return flags_; }

	Command &set_object(std::uint16_t o) { object_ = o; return *this; }
	Command &set_method(std::uint16_t m) { method_ = m; return *this; }
	Command &set_flags(std::uint32_t f) { flags_ = f; return *this; }
	Command &set_handle(Handle h);		   // clears UABI_CMD_F_HANDLE_REF
	Command &set_handle_ref(std::uint32_t idx); // sets UABI_CMD_F_HANDLE_REF
	Command &set_target(Ref r);

	// The flags are sent as given.
	Command &add_in(std::uint16_t id, std::span<const std::byte> payload,
			std::uint16_t flags = kMandatory);
	template <Payload T>
	Command &add_in(std::uint16_t id, const T &v, std::uint16_t flags = kMandatory)
	{
		return add_in(id, std::as_bytes(std::span<const T, 1>(&v, 1)), flags);
	}
	Command &add_in(const Attr &a) { return add_in(a.id, a.payload, a.flags); }
	Command &add_handle(std::uint16_t id, Handle h, std::uint16_t flags = kMandatory);
	// Payload = cmd_index, flag UABI_ATTR_F_CHAIN_REF.
	Command &add_ref(std::uint16_t id, std::uint32_t cmd_index,
			 std::uint16_t flags = kMandatory);
	Command &add_object(std::uint16_t id, Ref r, std::uint16_t flags = kMandatory);
	Command &add_fd(std::uint16_t id, int fd, std::uint16_t flags = kMandatory);

	// A zeroed buffer of size bytes the receiver fills (UABI_ATTR_F_OUTPUT).
	OutAttr add_out(std::uint16_t id, std::uint32_t size,
			std::uint16_t flags = kMandatory);
	template <Payload T>
	OutAttr add_out(std::uint16_t id, std::uint16_t flags = kMandatory)
	{
		return add_out(id, sizeof(T), flags);
	}
	// An output buffer that carries an input value (in/out attributes).
	OutAttr add_inout(std::uint16_t id, std::span<const std::byte> payload,
			  std::uint16_t flags = kMandatory);
	template <Payload T>
	OutAttr add_inout(std::uint16_t id, const T &v, std::uint16_t flags = kMandatory)
	{
		return add_inout(id, std::as_bytes(std::span<const T, 1>(&v, 1)), flags);
	}

	std::size_t num_attrs() const { return num_attrs_; }
	// An attribute was longer than a uabi_attr can say (encode() is E2BIG).
	bool too_big() const { return too_big_; }
	bool uses_chain_refs() const;
	std::size_t encoded_size() const { return sizeof(uabi_cmd_hdr) + attrs_.size(); }
	// The attributes as they go on the wire (struct uabi_attr, payload,
	// padding to 8 bytes, and so on).
	std::span<const std::byte> attr_bytes() const { return attrs_; }
	// Where attribute i starts in attr_bytes(), or SIZE_MAX.
	std::size_t attr_offset(std::size_t i) const;

private:
	// Appends an attribute header and room for len bytes (zeroed up to
	// the next multiple of 8); returns where the payload goes.
	std::byte *append(std::uint16_t id, std::uint16_t flags, std::size_t len);

	std::uint16_t object_ = 0;
	std::uint16_t method_ = 0;
	Handle handle_ = 0;
	std::uint32_t flags_ = 0;
	std::size_t num_attrs_ = 0;
	bool too_big_ = false; // an attribute longer than a uabi_attr can say
	detail::AttrBytes attrs_;
};

// ------------------------------------------------------------- Message

struct CommandResult {
	int status;		// 0, -errno or UABI_CMD_STATUS_NOT_RUN
	Handle out_handle;
};

// A chain of commands.  add() lays out each command's wire bytes as it
// comes, encode() the message header; after a transport executed them in
// place, the accessors read the outputs from those bytes.
//
// A message that grew large (a chain of hundreds of commands) leaves its
// buffers to the next message its thread builds, one set per thread
// (docs/uapi.md, "Chains"): rebuilding a chain of 1000 commands
// then reuses memory already mapped, where a fresh allocation would have
// the system map (fault in and zero) it again each time.
class Message {
public:
	explicit Message(std::uint32_t msg_flags = 0) : flags_(msg_flags) {}
	Message(const Message &) = default;
	Message(Message &&) noexcept = default;
	Message &operator=(const Message &) = default;
	Message &operator=(Message &&) noexcept = default;
	~Message();

	std::uint32_t add(Command cmd); // returns the command's index
	std::size_t count() const { return cmds_.size(); }
	std::uint32_t flags() const { return flags_; }
	void set_flags(std::uint32_t f) { flags_ = f; dirty_ = true; }

	// Writes the header; 0 or E2BIG when the message cannot be represented
	// (the UABI_MAX_* limits are left to the receiver to enforce).
	int encode();
	bool encoded() const { return !dirty_; }
	// The encoded bytes (encoding first if needed; empty if it cannot be).
	// Tests may alter or resize them; the edits stay (an add() or
	// set_flags() rewrites the header only).
	std::vector<std::byte> &raw();
	std::span<std::byte> bytes() { return raw(); }

	// After execution.
	uabi_msg_hdr header() const;
	int status() const { return header().status; }
	CommandResult result(std::uint32_t cmd) const;
	// Payload of an output attribute, clamped to the buffer; *valid tells
	// whether the receiver set UABI_ATTR_F_VALID_OUTPUT.
	std::span<const std::byte> out_bytes(std::uint32_t cmd, OutAttr a,
					     bool *valid = nullptr) const;
	// Copies the output into out (zero-filling what the payload lacks);
	// returns whether UABI_ATTR_F_VALID_OUTPUT was set.
	template <Payload T>
	bool read(std::uint32_t cmd, OutAttr a, T &out) const
	{
		bool valid = false;
		auto p = out_bytes(cmd, a, &valid);
		std::memset(static_cast<void *>(&out), 0, sizeof(T));
		std::memcpy(static_cast<void *>(&out), p.data(),
			    p.size() < sizeof(T) ? p.size() : sizeof(T));
		return valid;
	}

private:
	// An attribute as it was sent: where its header is in buf_ and its
	// length (the receiver may shrink the length it finds there).
	struct SentAttr {
		std::size_t off;
		std::uint32_t len;
	};

	struct SentCmd {
		std::size_t off;	// in buf_
		std::size_t first_attr; // in attrs_
	};

	// The large buffers a finished message left to its thread.
	struct Spare;
	static Spare *spare();
	template <class V>
	static void grow(V &v, std::size_t want, V Spare::*from);

	std::uint32_t flags_;
	std::vector<std::byte> buf_;  // the header, then the commands
	std::vector<SentCmd> cmds_;
	std::vector<SentAttr> attrs_; // every command's attributes
	bool too_big_ = false;	      // a command cannot be represented
	bool dirty_ = true;
};

} // namespace uabi

#endif // UABI_MESSAGE_HPP
