// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Rule 3 for CQs, completion channels and the async event queue, and
// rule 9: events through the async event queue's pollable fd.
#include "support/uabi_test.hpp"

#include <fcntl.h>
#include <poll.h>

using namespace uabi;
using namespace uabi::test;

namespace
{

constexpr std::uint32_t kPortDown = 1, kPortActive = 4;
constexpr std::uint32_t kEventPortActive = 9, kEventPortErr = 10;

bool readable(int fd)
{
	pollfd p{fd, POLLIN, 0};
	int n = poll(&p, 1, 0);
	EXPECT_GE(n, 0) << "poll: " << std::strerror(errno);
	EXPECT_EQ(p.revents & (POLLERR | POLLNVAL), 0) << "fd " << fd << " not pollable";
	return n > 0 && (p.revents & POLLIN);
}

bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

class CqEvq : public UabiTest
{
      protected:
	uabi_cq_resp query_cq(Handle cq)
	{
		Command c(UABI_OBJ_CQ, UABI_METHOD_QUERY, cq);
		OutAttr o = c.add_out<uabi_cq_resp>(UABI_ATTR_CQ_RESP);
		Message m = NEED(ctx().call(std::move(c)));
		uabi_cq_resp r{};
		EXPECT_TRUE(m.read(0, o, r));
		return r;
	}
};

TEST_F(CqEvq, CqLifecycleQueryAndResize)
{
	Snapshot before = snapshot(ctx());
	CqInfo cq = NEED(ctx().create_cq(16));
	EXPECT_GE(cq.cqe, 16u);
	EXPECT_EQ(counters().context[UABI_OBJ_CQ], before.c.context[UABI_OBJ_CQ] + 1);
	uabi_cq_resp q = query_cq(cq.handle);
	EXPECT_EQ(q.cqe, cq.cqe);
	EXPECT_EQ(q.cqn, cq.cqn);

	uabi_cq_resp r = NEED(ctx().resize_cq(cq.handle, 100));
	EXPECT_GE(r.cqe, 100u);
	EXPECT_EQ(r.cqn, cq.cqn) << "resizing keeps the CQ number";
	EXPECT_EQ(query_cq(cq.handle).cqe, r.cqe);
	EXPECT_ERRNO(ctx().resize_cq(cq.handle, 0), EINVAL);
	EXPECT_EQ(query_cq(cq.handle).cqe, r.cqe) << "a failed resize changes nothing";

	CqInfo cq2 = NEED(ctx().create_cq(1));
	EXPECT_NE(cq2.cqn, cq.cqn);
	EXPECT_OK(ctx().destroy_cq(cq.handle));
	EXPECT_ERRNO(ctx().destroy_cq(cq.handle), ENOENT);
	EXPECT_ERRNO(ctx().resize_cq(cq.handle, 16), ENOENT);
	EXPECT_OK(ctx().destroy_cq(cq2.handle));
	EXPECT_ERRNO(ctx().destroy_cq(cq2.handle), ENOENT);
	expect_snapshot_eq(before, snapshot(ctx()), "after the CQs");
}

// The software device's rings come from a heap of fixed size (256 MiB in
// userspace, 32 MiB in the kernel): the largest CQs fill it, the next one is
// ENOMEM and changes nothing, and a destroyed CQ's memory comes back (freed
// rings rest before reuse, but not when the heap would otherwise be full).
TEST_F(CqEvq, FullRingHeapIsENOMEMAndDestroyedRingsComeBack)
{
	Snapshot before = snapshot(ctx());
	DeviceInfo dev = NEED(ctx().query_device());
	auto fill = [&](std::vector<Handle> &cqs) {
		for (int i = 0; i < 1024; i++) {
			auto cq = ctx().create_cq(dev.attr.max_cqe);
			if (!cq)
				return cq.error();
			cqs.push_back(cq->handle);
		}
		return 0;
	};
	std::vector<Handle> cqs;
	ASSERT_EQ(fill(cqs), ENOMEM) << "after " << cqs.size() << " CQs of " << dev.attr.max_cqe;
	ASSERT_GT(cqs.size(), 2u);
	const std::size_t full = cqs.size();
	EXPECT_EQ(counters().context[UABI_OBJ_CQ], before.c.context[UABI_OBJ_CQ] + full)
	    << "the refused create left nothing behind";
	// One out, one back in, twice: nothing else was freed, so each create
	// needs the memory of the CQ just destroyed.
	for (int round = 0; round < 2; round++) {
		EXPECT_OK(ctx().destroy_cq(cqs.back()));
		cqs.pop_back();
		auto cq = ctx().create_cq(dev.attr.max_cqe);
		ASSERT_TRUE(cq) << "round " << round << ": " << std::strerror(cq.error());
		cqs.push_back(cq->handle);
		EXPECT_ERRNO(ctx().create_cq(dev.attr.max_cqe), ENOMEM);
	}
	for (Handle h : cqs)
		EXPECT_OK(ctx().destroy_cq(h));
	expect_snapshot_eq(before, snapshot(ctx()), "after the CQs");
	// All of it came back: the heap holds as many again.
	cqs.clear();
	EXPECT_EQ(fill(cqs), ENOMEM);
	EXPECT_EQ(cqs.size(), full);
	for (Handle h : cqs)
		EXPECT_OK(ctx().destroy_cq(h));
	expect_snapshot_eq(before, snapshot(ctx()), "after the second fill");
}

TEST_F(CqEvq, CqUsedByAQpIsBusy)
{
	Handle pd = NEED(ctx().alloc_pd());
	CqInfo scq = NEED(ctx().create_cq(4));
	CqInfo rcq = NEED(ctx().create_cq(4));
	QpCreate qc;
	qc.pd = pd;
	qc.send_cq = scq.handle;
	qc.recv_cq = rcq.handle;
	qc.init = qp_init(UABI_QPT_RC);
	QpInfo qp = NEED(ctx().create_qp(qc));
	EXPECT_ERRNO(ctx().destroy_cq(scq.handle), EBUSY) << "send CQ";
	EXPECT_ERRNO(ctx().destroy_cq(rcq.handle), EBUSY) << "receive CQ";
	EXPECT_OK(ctx().destroy_qp(qp.handle));
	EXPECT_OK(ctx().destroy_cq(scq.handle));
	EXPECT_OK(ctx().destroy_cq(rcq.handle));
	EXPECT_OK(ctx().dealloc_pd(pd));
}

TEST_F(CqEvq, CompChannelLifecycle)
{
	auto before = counters();
	EvqInfo ch = NEED(ctx().create_comp_channel());
	ASSERT_GE(ch.fd, 0) << "a pollable fd is returned";
	EXPECT_TRUE(fd_is_open(ch.fd));
	EXPECT_FALSE(readable(ch.fd)) << "no completion yet";
	EXPECT_ERRNO(ctx().get_comp_event(ch.handle), EAGAIN);
	EXPECT_EQ(counters().context[UABI_OBJ_COMP_CHANNEL],
		  before.context[UABI_OBJ_COMP_CHANNEL] + 1);
	// Two channels are two objects with two fds.
	EvqInfo ch2 = NEED(ctx().create_comp_channel());
	EXPECT_NE(ch2.handle, ch.handle);
	EXPECT_NE(ch2.fd, ch.fd);
	EXPECT_OK(ctx().destroy_comp_channel(ch2.handle));
	EXPECT_OK(ctx().destroy_comp_channel(ch.handle));
	EXPECT_FALSE(fd_is_open(ch.fd)) << "the fd is closed with its channel";
	EXPECT_ERRNO(ctx().destroy_comp_channel(ch.handle), ENOENT);
	EXPECT_ERRNO(ctx().get_comp_event(ch.handle), ENOENT);
	expect_context_counters_eq(before, counters(), "after the channels");
}

TEST_F(CqEvq, CompChannelUsedByACqIsBusy)
{
	EvqInfo ch = NEED(ctx().create_comp_channel());
	CqInfo cq = NEED(ctx().create_cq(8, Ref(ch.handle)));
	EXPECT_ERRNO(ctx().destroy_comp_channel(ch.handle), EBUSY);
	EXPECT_TRUE(fd_is_open(ch.fd)) << "a busy channel keeps its fd";
	EXPECT_OK(ctx().destroy_cq(cq.handle));
	EXPECT_OK(ctx().destroy_comp_channel(ch.handle));
}

TEST_F(CqEvq, AsyncEventQueueLifecycleAndOnlyOnePerContext)
{
	auto before = counters();
	EvqInfo q = NEED(ctx().create_async_event_queue());
	ASSERT_GE(q.fd, 0);
	EXPECT_FALSE(readable(q.fd));
	EXPECT_ERRNO(ctx().get_async_event(q.handle), EAGAIN);
	EXPECT_ERRNO(ctx().create_async_event_queue(), EINVAL) << "a second queue";
	EXPECT_EQ(counters().context[UABI_OBJ_ASYNC_EVENT],
		  before.context[UABI_OBJ_ASYNC_EVENT] + 1)
	    << "the refused second queue was not created";
	// Another context has its own.
	Context &other = open_extra();
	EvqInfo oq = NEED(other.create_async_event_queue());
	EXPECT_OK(other.destroy_async_event_queue(oq.handle));

	// Reading the queue through the wrong object type is refused.
	EXPECT_ERRNO(ctx().get_comp_event(q.handle), EINVAL);
	EXPECT_OK(ctx().destroy_async_event_queue(q.handle));
	EXPECT_FALSE(fd_is_open(q.fd)) << "the fd is closed with its queue";
	EXPECT_ERRNO(ctx().destroy_async_event_queue(q.handle), ENOENT);
	// After the first is gone, a new one may be created.
	EvqInfo q2 = NEED(ctx().create_async_event_queue());
	EXPECT_OK(ctx().destroy_async_event_queue(q2.handle));
	expect_context_counters_eq(before, counters(), "after the queues");
}

// Rule 9.
class Events : public UabiTest
{
};

TEST_F(Events, PortStateChangesReachTheAsyncQueueThroughItsFd)
{
	PortRestorer restore;
	EvqInfo q = NEED(ctx().create_async_event_queue());
	ASSERT_GE(q.fd, 0);
	ASSERT_FALSE(readable(q.fd));

	NEED(sw_set_port_state(ctx(), 1, kPortDown));
	EXPECT_TRUE(readable(q.fd)) << "readable after the port went down";
	EXPECT_EQ(NEED(ctx().query_port(1)).state, kPortDown);
	NEED(sw_set_port_state(ctx(), 1, kPortActive));
	EXPECT_EQ(NEED(ctx().query_port(1)).state, kPortActive);

	uabi_event e1 = NEED(ctx().get_async_event(q.handle));
	EXPECT_EQ(e1.event_type, kEventPortErr);
	EXPECT_EQ(e1.element, 1u) << "the port number";
	EXPECT_TRUE(readable(q.fd)) << "one event still pending";
	uabi_event e2 = NEED(ctx().get_async_event(q.handle));
	EXPECT_EQ(e2.event_type, kEventPortActive);
	EXPECT_EQ(e2.element, 1u);
	EXPECT_ERRNO(ctx().get_async_event(q.handle), EAGAIN);
	EXPECT_FALSE(readable(q.fd)) << "drained";
}

TEST_F(Events, EveryContextWithAQueueGetsTheEvent)
{
	PortRestorer restore;
	Context &b = open_extra();
	Context &no_queue = open_extra();
	EvqInfo qa = NEED(ctx().create_async_event_queue());
	EvqInfo qb = NEED(b.create_async_event_queue());

	// The port is changed by a context that has no queue.
	NEED(sw_set_port_state(no_queue, 1, kPortDown));
	NEED(sw_set_port_state(no_queue, 1, kPortActive));

	for (auto [c, q] : {std::pair<Context *, EvqInfo>{&ctx(), qa}, {&b, qb}}) {
		EXPECT_TRUE(readable(q.fd));
		EXPECT_EQ(NEED(c->get_async_event(q.handle)).event_type, kEventPortErr);
		EXPECT_EQ(NEED(c->get_async_event(q.handle)).event_type, kEventPortActive);
		EXPECT_ERRNO(c->get_async_event(q.handle), EAGAIN);
		EXPECT_FALSE(readable(q.fd));
	}
}

TEST_F(Events, SettingTheSameStateRaisesNothing)
{
	PortRestorer restore;
	EvqInfo q = NEED(ctx().create_async_event_queue());
	NEED(sw_set_port_state(ctx(), 1, kPortActive)); // already active
	EXPECT_FALSE(readable(q.fd));
	EXPECT_ERRNO(ctx().get_async_event(q.handle), EAGAIN);
}

TEST_F(Events, InvalidPortOrStateIsEINVALAndChangesNothing)
{
	PortRestorer restore;
	EvqInfo q = NEED(ctx().create_async_event_queue());
	EXPECT_ERRNO(sw_set_port_state(ctx(), 2, kPortDown), EINVAL);
	EXPECT_ERRNO(sw_set_port_state(ctx(), 0, kPortDown), EINVAL);
	EXPECT_ERRNO(sw_set_port_state(ctx(), 1, 2 /* INIT */), EINVAL);
	EXPECT_EQ(NEED(ctx().query_port(1)).state, kPortActive);
	EXPECT_FALSE(readable(q.fd));
}

TEST_F(Events, DestroyingAQueueWithPendingEventsDropsThem)
{
	PortRestorer restore;
	EvqInfo q = NEED(ctx().create_async_event_queue());
	NEED(sw_set_port_state(ctx(), 1, kPortDown));
	NEED(sw_set_port_state(ctx(), 1, kPortActive));
	EXPECT_OK(ctx().destroy_async_event_queue(q.handle));
	EvqInfo q2 = NEED(ctx().create_async_event_queue());
	EXPECT_FALSE(readable(q2.fd)) << "a new queue starts empty";
	EXPECT_ERRNO(ctx().get_async_event(q2.handle), EAGAIN);
}

} // namespace
