// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include "support/uabi_test.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace uabi::test
{

// The suite runs on the in-process core unless UABI_BACKEND names another
// backend (the client's own default, auto, would pick the kernel module or
// the daemon).
namespace
{
const bool default_backend_set = [] {
	const char *v = std::getenv("UABI_BACKEND");
	if (!v || !*v)
		setenv("UABI_BACKEND", "inproc", 1);
	return true;
}();
} // namespace

// ------------------------------------------------------------- errors

std::string errno_name(int e)
{
	static const struct {
		int v;
		const char *n;
	} names[] = {
	    {0, "OK"},
	    {EPERM, "EPERM"},
	    {ENOENT, "ENOENT"},
	    {EIO, "EIO"},
	    {E2BIG, "E2BIG"},
	    {EBADF, "EBADF"},
	    {EAGAIN, "EAGAIN"},
	    {ENOMEM, "ENOMEM"},
	    {EFAULT, "EFAULT"},
	    {EBUSY, "EBUSY"},
	    {EEXIST, "EEXIST"},
	    {EINVAL, "EINVAL"},
	    {EMFILE, "EMFILE"},
	    {ENOSPC, "ENOSPC"},
	    {ERANGE, "ERANGE"},
	    {ENODATA, "ENODATA"},
	    {EPROTO, "EPROTO"},
	    {EOVERFLOW, "EOVERFLOW"},
	    {EMSGSIZE, "EMSGSIZE"},
	    {EPROTONOSUPPORT, "EPROTONOSUPPORT"},
	    {EOPNOTSUPP, "EOPNOTSUPP"},
	    {ECANCELED, "ECANCELED"},
	    {ENODEV, "ENODEV"},
	    {ENOSYS, "ENOSYS"},
	};
	for (const auto &n : names)
		if (n.v == e)
			return std::string(n.n) + (e ? " (" + std::to_string(e) + ")" : "");
	return "errno " + std::to_string(e);
}

std::string status_name(int st)
{
	if (st == 0)
		return "0";
	if (st == UABI_CMD_STATUS_NOT_RUN)
		return "NOT_RUN";
	if (st < 0)
		return "-" + errno_name(-st);
	return "status " + std::to_string(st);
}

// ----------------------------------------------------------- contexts

std::unique_ptr<Context> open_context()
{
	auto c = Context::open();
	if (!c) {
		ADD_FAILURE() << "Context::open() failed with " << errno_name(c.error())
			      << " (UABI_BACKEND="
			      << (std::getenv("UABI_BACKEND") ? std::getenv("UABI_BACKEND") : "")
			      << ")";
		throw NeedFailed{};
	}
	return std::make_unique<Context>(std::move(*c));
}

// ----------------------------------------------------------- counters

const char *object_name(unsigned type)
{
	static const char *const names[] = {"?",   "device",	   "pd",	  "mr",
					    "cq",  "comp_channel", "async_event", "qp",
					    "srq", "ah",	   "xrcd",	  "mw",
					    "cm_channel", "cm_id"};
	return type < std::size(names) ? names[type] : "?";
}

uabi_sw_stats sw_stats(Context &ctx)
{
	Command c = driver_command(UABI_SW_OBJ_PORT, Handle(0), UABI_SW_PORT_STATS);
	OutAttr o = c.add_out<uabi_sw_stats>(UABI_SW_ATTR_STATS);
	Message m = NEED(ctx.driver_call(std::move(c)));
	uabi_sw_stats st{};
	EXPECT_TRUE(m.read(0, o, st)) << "sw stats output not marked valid";
	return st;
}

Snapshot snapshot(Context &ctx)
{
	Snapshot s{};
	s.c = NEED(ctx.counters());
	s.sw = sw_stats(ctx);
	return s;
}

void expect_context_counters_eq(const uabi_counters &a, const uabi_counters &b, const char *what)
{
	for (unsigned t = 0; t < 16; t++)
		EXPECT_EQ(a.context[t], b.context[t])
		    << what << ": context counter of " << object_name(t);
}

void expect_device_counters_eq(const uabi_counters &a, const uabi_counters &b, const char *what)
{
	for (unsigned t = 0; t < 16; t++)
		EXPECT_EQ(a.device[t], b.device[t])
		    << what << ": device counter of " << object_name(t);
	EXPECT_EQ(a.contexts, b.contexts) << what << ": open contexts";
	EXPECT_EQ(a.num_types, b.num_types) << what;
}

void expect_sw_stats_eq(const uabi_sw_stats &a, const uabi_sw_stats &b, const char *what)
{
	EXPECT_EQ(a.qpns_in_use, b.qpns_in_use) << what << ": sw qpns in use";
	EXPECT_EQ(a.mr_keys_in_use, b.mr_keys_in_use) << what << ": sw mr keys in use";
	EXPECT_EQ(a.cqns_in_use, b.cqns_in_use) << what << ": sw cqns in use";
	EXPECT_EQ(a.srqns_in_use, b.srqns_in_use) << what << ": sw srqns in use";
}

void expect_snapshot_eq(const Snapshot &a, const Snapshot &b, const char *what)
{
	expect_context_counters_eq(a.c, b.c, what);
	expect_device_counters_eq(a.c, b.c, what);
	expect_sw_stats_eq(a.sw, b.sw, what);
}

// -------------------------------------------------------------- fixture

void UabiTest::SetUp()
{
	{
		auto probe = open_context();
		device_baseline_ = snapshot(*probe);
		have_baseline_ = true;
	}
	ctx_ = open_context();
}

void UabiTest::TearDown()
{
	ctx_.reset();
	extra_.clear();
	if (!have_baseline_)
		return;
	try {
		auto probe = open_context();
		Snapshot now = snapshot(*probe);
		// Another probe context is open now as it was then.
		expect_device_counters_eq(now.c, device_baseline_.c,
					  "device after all contexts of the test closed");
		expect_sw_stats_eq(now.sw, device_baseline_.sw,
				   "driver after all contexts of the test closed");
	} catch (const NeedFailed &) {
	}
}

Context &UabiTest::open_extra()
{
	extra_.push_back(open_context());
	return *extra_.back();
}

void UabiTest::close_extra(Context &c)
{
	for (auto it = extra_.begin(); it != extra_.end(); ++it) {
		if (it->get() == &c) {
			extra_.erase(it);
			return;
		}
	}
	ADD_FAILURE() << "close_extra: not an extra context of this test";
}

// ------------------------------------------------------------- objects

uabi_qp_init qp_init(std::uint32_t qp_type)
{
	uabi_qp_init init{};
	init.qp_type = qp_type;
	init.cap.max_send_wr = 8;
	init.cap.max_send_sge = 1;
	if (qp_type != UABI_QPT_XRC_SEND && qp_type != UABI_QPT_XRC_RECV) {
		init.cap.max_recv_wr = 8;
		init.cap.max_recv_sge = 1;
	}
	return init;
}

QpEnv make_env(Context &ctx)
{
	QpEnv e{};
	e.pd = NEED(ctx.alloc_pd());
	e.cq = NEED(ctx.create_cq(16)).handle;
	return e;
}

QpInfo make_qp(Context &ctx, const QpEnv &env, std::uint32_t qp_type)
{
	QpCreate c;
	c.pd = env.pd;
	c.send_cq = env.cq;
	if (qp_type != UABI_QPT_XRC_SEND)
		c.recv_cq = env.cq;
	c.init = qp_init(qp_type);
	return NEED(ctx.create_qp(c));
}

uabi_ah_attr local_av()
{
	uabi_ah_attr av{};
	av.dlid = UABI_SW_PORT_LID;
	av.port_num = 1;
	av.sl = 0;
	return av;
}

uabi_qp_attr valid_qp_attr(std::uint32_t from, std::uint32_t to)
{
	uabi_qp_attr a{};
	a.qp_state = to;
	a.cur_qp_state = from;
	a.path_mtu = 3;	      // IBV_MTU_1024
	a.path_mig_state = 0; // IBV_MIG_MIGRATED
	a.qkey = 0x11111111;
	a.rq_psn = 0x123456;
	a.sq_psn = 0x654321;
	a.dest_qp_num = 0x42;
	a.qp_access_flags = kLocalWrite | kRemoteWrite | kRemoteRead;
	a.pkey_index = 0;
	a.alt_pkey_index = 0;
	a.ah_attr = local_av();
	a.alt_ah_attr = local_av();
	a.en_sqd_async_notify = 1;
	a.max_rd_atomic = 4;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.port_num = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.alt_port_num = 1;
	a.alt_timeout = 14;
	return a;
}

Result<Message> sw_set_port_state(Context &ctx, std::uint32_t port, std::uint32_t state)
{
	Command c = driver_command(UABI_SW_OBJ_PORT, Handle(0), UABI_SW_PORT_SET_STATE);
	c.add_in(UABI_SW_ATTR_PORT_NUM, port).add_in(UABI_SW_ATTR_PORT_STATE, state);
	return ctx.driver_call(std::move(c));
}

PortRestorer::~PortRestorer()
{
	auto c = Context::open();
	if (!c) {
		ADD_FAILURE() << "PortRestorer: cannot open a context";
		return;
	}
	auto r = sw_set_port_state(*c, 1, 4 /* IBV_PORT_ACTIVE */);
	EXPECT_TRUE(r.ok()) << "restoring port 1 ACTIVE failed with " << errno_name(r.error());
}

// --------------------------------------------------------------- files

TempFile::TempFile()
{
	const char *dir = std::getenv("TMPDIR");
	path_ = std::string(dir && *dir ? dir : "/tmp") + "/uabi-conformance-XXXXXX";
	std::vector<char> buf(path_.begin(), path_.end());
	buf.push_back('\0');
	fd_ = mkstemp(buf.data());
	if (fd_ < 0) {
		ADD_FAILURE() << "mkstemp(" << path_ << ") failed: " << std::strerror(errno);
		throw NeedFailed{};
	}
	path_ = buf.data();
}

TempFile::~TempFile()
{
	if (fd_ >= 0) {
		close(fd_);
		unlink(path_.c_str());
	}
}

// ------------------------------------------------------- raw messages

RawMsg::RawMsg(Message &m)
{
	bytes = m.raw();
	if (bytes.size() < sizeof(uabi_msg_hdr)) {
		ADD_FAILURE() << "RawMsg: message did not encode";
		throw NeedFailed{};
	}
	uabi_msg_hdr h = msg();
	std::size_t off = sizeof(uabi_msg_hdr);
	for (unsigned i = 0; i < h.count; i++) {
		uabi_cmd_hdr c = get<uabi_cmd_hdr>(off);
		cmd_off.push_back(off);
		attr_off.emplace_back();
		std::size_t a = off + sizeof(uabi_cmd_hdr);
		for (unsigned j = 0; j < c.num_attrs; j++) {
			attr_off.back().push_back(a);
			a += sizeof(uabi_attr) + UABI_ALIGN8(get<uabi_attr>(a).len);
		}
		off += c.length;
	}
}

Message make_message(std::vector<Command> cmds, std::uint32_t flags)
{
	Message m(flags);
	for (auto &c : cmds)
		m.add(std::move(c));
	if (int e = m.encode()) {
		ADD_FAILURE() << "encode failed: " << errno_name(e);
		throw NeedFailed{};
	}
	return m;
}

Command cmd_alloc_pd()
{
	return Command(UABI_OBJ_PD, UABI_METHOD_CREATE);
}

Command cmd_create_cq(std::uint32_t cqe)
{
	Command c(UABI_OBJ_CQ, UABI_METHOD_CREATE);
	c.add_in(UABI_ATTR_CQ_CQE, cqe);
	return c;
}

Command cmd_counters()
{
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS);
	c.add_out<uabi_counters>(UABI_ATTR_DEVICE_COUNTERS);
	return c;
}

void expect_parse_reject(Context &ctx, RawMsg &m, int err, std::uint32_t failed_index)
{
	Snapshot before = snapshot(ctx);
	int rc = m.exec(ctx);
	Snapshot after = snapshot(ctx);

	EXPECT_STATUS(rc, -err) << "return value of the execution";
	uabi_msg_hdr h = m.msg();
	EXPECT_STATUS(h.status, -err) << "message status";
	EXPECT_EQ(h.executed, 0u) << "executed";
	EXPECT_EQ(h.failed_index, failed_index) << "failed_index";
	for (std::uint32_t j = 0; j < failed_index && j < m.cmd_off.size(); j++)
		EXPECT_STATUS(m.cmd(j).status, UABI_CMD_STATUS_NOT_RUN)
		    << "status of command " << j << " (before the failing one)";
	if (failed_index < m.cmd_off.size()) {
		EXPECT_STATUS(m.cmd(failed_index).status, -err)
		    << "status of the failing command " << failed_index;
	}
	expect_snapshot_eq(before, after, "counters across a rejected message");
}

} // namespace uabi::test
