// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Shared fixture of the legacy suite: an old path (encoder -> translator)
// and a new path (newapi Context), each on its own in-process context.
#ifndef UABI_TESTS_LEGACY_TEST_HPP
#define UABI_TESTS_LEGACY_TEST_HPP

#include <uabi/legacy.hpp>
#include <uabi/legacy_encoder.hpp>
#include <uabi/legacy_ofed.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace uabi::legacy::test
{

// A Result the test has checked: failures are reported with their errno
// where they happen; the value is still there to use (not [[nodiscard]]).
template <class T> struct Checked {
	Result<T> r;
	auto operator->() { return r.operator->(); }
	decltype(auto) operator*() { return *r; }
	bool ok() const { return r.ok(); }
	int error() const { return r.error(); }
};

template <class T> Checked<T> checked(Result<T> r, const char *what)
{
	EXPECT_TRUE(r.ok()) << what << ": " << std::strerror(r.error());
	return Checked<T>{std::move(r)};
}

// Runs `expr` (a Result) and fails the test with its errno if it failed.
#define LEGACY_OK(expr) ::uabi::legacy::test::checked((expr), #expr)

class LegacyTest : public ::testing::Test
{
      protected:
	void SetUp() override { open_paths(Dialect::Upstream); }

	void open_paths(Dialect d)
	{
		auto t = Translator::open(Backend::Inproc, d);
		ASSERT_TRUE(t.ok()) << std::strerror(t.error());
		tr = std::move(*t);
		enc = std::make_unique<Encoder>(*tr);
		auto c = Context::open(Backend::Inproc);
		ASSERT_TRUE(c.ok()) << std::strerror(c.error());
		ctx = std::make_unique<Context>(std::move(*c));
	}

	// GET_CONTEXT on the old path, the async event queue on the new one:
	// both contexts then hold the same objects.
	void both_contexts()
	{
		auto lc = enc->get_context();
		ASSERT_TRUE(lc.ok()) << std::strerror(lc.error());
		async_fd = lc->async_fd;
		auto q = ctx->create_async_event_queue();
		ASSERT_TRUE(q.ok()) << std::strerror(q.error());
	}

	void TearDown() override
	{
		if (async_fd >= 0)
			close(async_fd);
	}

	uabi_counters old_counts() { return *tr->context().counters(); }
	uabi_counters new_counts() { return *ctx->counters(); }

	// The write() a legacy program would do; returns count or -errno.
	long raw(const void *buf, std::size_t len) { return tr->execute(buf, len); }

	std::unique_ptr<Translator> tr;
	std::unique_ptr<Encoder> enc;
	std::unique_ptr<Context> ctx;
	int async_fd = -1;
};

inline ibv_qp_cap small_cap()
{
	ibv_qp_cap c{};
	c.max_send_wr = 8;
	c.max_recv_wr = 8;
	c.max_send_sge = 1;
	c.max_recv_sge = 1;
	c.max_inline_data = 16;
	return c;
}

inline uabi_qp_init new_init(std::uint32_t type)
{
	uabi_qp_init i{};
	i.qp_type = type;
	i.cap.max_send_wr = 8;
	i.cap.max_recv_wr = 8;
	i.cap.max_send_sge = 1;
	i.cap.max_recv_sge = 1;
	i.cap.max_inline_data = 16;
	return i;
}

} // namespace uabi::legacy::test

#endif
