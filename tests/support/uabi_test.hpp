// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Support code of the conformance suite.  Everything here goes through the
// client API and a Transport (Context::open() picks it from UABI_BACKEND),
// never through the object core itself, so that the suite runs unchanged on
// every backend.
#ifndef UABI_TEST_SUPPORT_HPP
#define UABI_TEST_SUPPORT_HPP

#include <uabi/client.hpp>
#include <rdma/uabi_sw.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace uabi::test
{

// ------------------------------------------------------------- errors

// "EINVAL (22)" for messages.
std::string errno_name(int e);

// Thrown by NEED() after recording a failure: gtest reports it and ends the
// test body, the fixture's TearDown still runs.
struct NeedFailed {
};

template <class T> T need(Result<T> r, const char *expr, const char *file, int line)
{
	if (!r) {
		ADD_FAILURE_AT(file, line) << expr << " failed with " << errno_name(r.error());
		throw NeedFailed{};
	}
	return std::move(r).value();
}

inline void need(Result<void> r, const char *expr, const char *file, int line)
{
	if (!r) {
		ADD_FAILURE_AT(file, line) << expr << " failed with " << errno_name(r.error());
		throw NeedFailed{};
	}
}

// The value of a Result that must succeed; ends the test otherwise.
#define NEED(expr) ::uabi::test::need((expr), #expr, __FILE__, __LINE__)

// A Result that must fail with exactly errno E (positive); 0 = success.
#define EXPECT_ERRNO(expr, E)                                                                      \
	EXPECT_EQ(::uabi::test::errno_name((expr).error()), ::uabi::test::errno_name(E)) << #expr
#define ASSERT_ERRNO(expr, E)                                                                      \
	ASSERT_EQ(::uabi::test::errno_name((expr).error()), ::uabi::test::errno_name(E)) << #expr
#define EXPECT_OK(expr) EXPECT_ERRNO(expr, 0)
#define ASSERT_OK(expr) ASSERT_ERRNO(expr, 0)

// A raw return value or status (0 or -errno) compared by name.
#define EXPECT_STATUS(actual, expected)                                                            \
	EXPECT_EQ(::uabi::test::status_name(actual), ::uabi::test::status_name(expected))
std::string status_name(int st);

// ----------------------------------------------------------- contexts

// Opens a context on the transport UABI_BACKEND names.
std::unique_ptr<Context> open_context();

// ----------------------------------------------------------- counters

// What the device says is alive: object counters and the software
// device's allocator statistics.
struct Snapshot {
	uabi_counters c;
	uabi_sw_stats sw;
};

Snapshot snapshot(Context &ctx);
uabi_sw_stats sw_stats(Context &ctx);

// Per-field comparisons with readable messages.
void expect_context_counters_eq(const uabi_counters &a, const uabi_counters &b, const char *what);
void expect_device_counters_eq(const uabi_counters &a, const uabi_counters &b, const char *what);
void expect_sw_stats_eq(const uabi_sw_stats &a, const uabi_sw_stats &b, const char *what);
// Everything equal (context counters, device counters, contexts, driver).
void expect_snapshot_eq(const Snapshot &a, const Snapshot &b, const char *what);

const char *object_name(unsigned type);

// -------------------------------------------------------------- fixture

// One context per test, plus as many extra ones as the test opens.  At the
// fixture boundaries the device must be exactly as the test found it once
// all of the test's contexts are closed.
class UabiTest : public ::testing::Test
{
      protected:
	void SetUp() override;
	void TearDown() override;

	Context &ctx() { return *ctx_; }
	// Another context, closed at TearDown unless closed earlier.
	Context &open_extra();
	// Closes an extra context now (as if its process exited).
	void close_extra(Context &c);
	// Closes the main context now; ctx() must not be used afterwards.
	void close_main() { ctx_.reset(); }

	uabi_counters counters() { return NEED(ctx().counters()); }

      private:
	std::unique_ptr<Context> ctx_;
	std::vector<std::unique_ptr<Context>> extra_;
	Snapshot device_baseline_{};
	bool have_baseline_ = false;
};

// ------------------------------------------------------------- objects

// IBV_ACCESS_*.
inline constexpr std::uint32_t kLocalWrite = 1, kRemoteWrite = 2, kRemoteRead = 4,
			       kRemoteAtomic = 8;

uabi_qp_init qp_init(std::uint32_t qp_type);
// A PD and one CQ to hang QPs on.
struct QpEnv {
	Handle pd;
	Handle cq;
};
QpEnv make_env(Context &ctx);
// RC, UC, UD or XRC_SEND QP in RESET (XRC_SEND gets no receive CQ).
QpInfo make_qp(Context &ctx, const QpEnv &env, std::uint32_t qp_type);

// Address vector through port 1 to the port's own LID.
uabi_ah_attr local_av();
// Every attribute of uabi_qp_attr set to a value that is valid on the
// software device, with qp_state = to and cur_qp_state = from.
uabi_qp_attr valid_qp_attr(std::uint32_t from, std::uint32_t to);

// The software device's port control (driver namespace).
Result<Message> sw_set_port_state(Context &ctx, std::uint32_t port, std::uint32_t state);

// Sets port 1 ACTIVE again on scope exit, whatever the test did.
class PortRestorer
{
      public:
	~PortRestorer();
};

// --------------------------------------------------------------- files

// A fresh file for XRC domains, removed on destruction.
class TempFile
{
      public:
	TempFile();
	~TempFile();
	TempFile(const TempFile &) = delete;
	TempFile &operator=(const TempFile &) = delete;
	int fd() const { return fd_; }
	const std::string &path() const { return path_; }

      private:
	int fd_ = -1;
	std::string path_;
};

// ------------------------------------------------------- raw messages

// An encoded message to take apart and corrupt.  Offsets are computed
// once from the valid encoding, so they stay usable after the bytes were
// altered.
class RawMsg
{
      public:
	explicit RawMsg(Message &m);

	std::vector<std::byte> bytes;
	std::vector<std::size_t> cmd_off;
	std::vector<std::vector<std::size_t>> attr_off;

	template <class T> T get(std::size_t off) const
	{
		T v{};
		std::memcpy(&v, bytes.data() + off, sizeof(T));
		return v;
	}
	template <class T> void put(std::size_t off, const T &v)
	{
		std::memcpy(bytes.data() + off, &v, sizeof(T));
	}

	uabi_msg_hdr msg() const { return get<uabi_msg_hdr>(0); }
	void set_msg(const uabi_msg_hdr &h) { put(0, h); }
	uabi_cmd_hdr cmd(std::size_t i) const { return get<uabi_cmd_hdr>(cmd_off.at(i)); }
	void set_cmd(std::size_t i, const uabi_cmd_hdr &h) { put(cmd_off.at(i), h); }
	uabi_attr attr(std::size_t i, std::size_t j) const
	{
		return get<uabi_attr>(attr_off.at(i).at(j));
	}
	void set_attr(std::size_t i, std::size_t j, const uabi_attr &a)
	{
		put(attr_off.at(i).at(j), a);
	}
	std::size_t payload_off(std::size_t i, std::size_t j) const
	{
		return attr_off.at(i).at(j) + sizeof(uabi_attr);
	}

	// Executes the bytes as they are; returns 0 or -errno.
	int exec(Context &ctx) { return ctx.execute_raw(bytes); }
};

// A message of the given commands, encoded.
Message make_message(std::vector<Command> cmds, std::uint32_t flags = 0);

// Small command builders for raw tests.
Command cmd_alloc_pd();
Command cmd_create_cq(std::uint32_t cqe);
Command cmd_counters();

// Executes a corrupted message that must be rejected before anything ran
// (a parse-time rejection): return value and message status -err,
// executed 0, failed_index as given, commands before it NOT_RUN, the
// failing one's status -err, and the context's and device's counters and
// the driver's allocators unchanged.
void expect_parse_reject(Context &ctx, RawMsg &m, int err, std::uint32_t failed_index);

} // namespace uabi::test

#endif // UABI_TEST_SUPPORT_HPP
