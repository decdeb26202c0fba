// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Imported objects (ibv_import_device(3), ibv_import_pd(3), ibv_import_mr(3)),
// through our libibverbs.so.1: a second verbs context on the same context,
// in this process and in a forked child that gets cmd_fd over a unix
// socket, and the errnos of misuse.  ctest runs it as e2e_verbs_extras is
// run (e2e_verbs_import_*): in-process (same-process copies,
// UABI_SW_FORCE_VM=1, the write control path) and on uabid.  In-process, another process cannot import (the core
// lives in this process): the child expects EOPNOTSUPP there.
#include "verbs_fixture.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace e2e;

namespace {

// A struct the test gives up on purpose (ASan builds only).
void ignore_leak(const void *p)
{
#if defined(__SANITIZE_ADDRESS__)
	__lsan_ignore_object(p);
#else
	(void)p;
#endif
}


bool inproc_backend()
{
	const char *b = std::getenv("UABI_BACKEND");
	return b && std::string(b) == "inproc";
}

unsigned char pattern(unsigned seed, std::size_t i)
{
	return static_cast<unsigned char>(seed + i * 13);
}

bool has_pattern(const unsigned char *p, std::size_t len, unsigned seed)
{
	for (std::size_t i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return false;
	return true;
}

// An RC QP of @pd on @cq, in RESET.
ibv_qp *rc_qp(ibv_pd *pd, ibv_cq *cq)
{
	ibv_qp_init_attr a{};
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 2;
	return ibv_create_qp(pd, &a);
}

int post(ibv_qp *qp, ibv_wr_opcode op, std::uint64_t laddr, std::uint32_t len,
	 std::uint32_t lkey, std::uint64_t raddr = 0, std::uint32_t rkey = 0)
{
	ibv_sge s{laddr, len, lkey};
	ibv_send_wr wr{};
	wr.wr_id = 7;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ibv_send_wr *bad = nullptr;
	return ibv_post_send(qp, &wr, &bad);
}

int post_recv(ibv_qp *qp, std::uint64_t addr, std::uint32_t len, std::uint32_t lkey)
{
	ibv_sge s{addr, len, lkey};
	ibv_recv_wr wr{};
	wr.wr_id = 9;
	wr.sg_list = &s;
	wr.num_sge = 1;
	ibv_recv_wr *bad = nullptr;
	return ibv_post_recv(qp, &wr, &bad);
}

// The status of the one completion @cq gets (-1: none in time).
int one_status(ibv_cq *cq)
{
	auto w = poll_n(cq, 1);
	return w.size() == 1 ? int(w[0].status) : -1;
}

// Two contexts in one process: the imported one reaches the PD and MR of
// the first by their handles, and its own QP on the imported PD serves an
// RDMA WRITE into the imported MR, whose bytes land in the first context's
// buffer.
class Import : public ::testing::Test {
protected:
	Endpoint a, b;		// a: the context to import; b: a peer
	ibv_context *ic = nullptr;
	ibv_pd *ipd = nullptr;
	ibv_mr *imr = nullptr;
	ibv_cq *icq = nullptr;
	ibv_qp *iqp = nullptr;

	void SetUp() override
	{
		ASSERT_NO_FATAL_FAILURE(a.open());
		ASSERT_NO_FATAL_FAILURE(b.open());
		ASSERT_GE(a.ctx->cmd_fd, 0) << "cmd_fd must be a real fd";
		int fd = dup(a.ctx->cmd_fd);
		ASSERT_GE(fd, 0) << strerror(errno);
		ic = ibv_import_device(fd);
		ASSERT_NE(ic, nullptr) << strerror(errno);
		EXPECT_GE(ic->cmd_fd, 0);
		ipd = ibv_import_pd(ic, a.pd->handle);
		ASSERT_NE(ipd, nullptr) << strerror(errno);
		EXPECT_EQ(ipd->handle, a.pd->handle);
		EXPECT_EQ(ipd->context, ic);
		imr = ibv_import_mr(ipd, a.mr->handle);
		ASSERT_NE(imr, nullptr) << strerror(errno);
		EXPECT_EQ(imr->addr, a.mr->addr);
		EXPECT_EQ(imr->length, a.mr->length);
		EXPECT_EQ(imr->lkey, a.mr->lkey);
		EXPECT_EQ(imr->rkey, a.mr->rkey);
		EXPECT_EQ(imr->handle, a.mr->handle);
		EXPECT_EQ(imr->pd, ipd);
		icq = ibv_create_cq(ic, 16, nullptr, nullptr, 0);
		ASSERT_NE(icq, nullptr) << strerror(errno);
		iqp = rc_qp(ipd, icq);
		ASSERT_NE(iqp, nullptr) << strerror(errno);
		ASSERT_NO_FATAL_FAILURE(b.make_qp(IBV_QPT_RC));
		ASSERT_NO_FATAL_FAILURE(Endpoint::connect_qp(iqp, b.qp->qp_num));
		ASSERT_NO_FATAL_FAILURE(b.connect(iqp->qp_num));
	}
	void TearDown() override
	{
		if (iqp) {
			EXPECT_EQ(ibv_destroy_qp(iqp), 0);
		}
		if (icq) {
			EXPECT_EQ(ibv_destroy_cq(icq), 0);
		}
		if (imr)
			ibv_unimport_mr(imr);
		if (ipd)
			ibv_unimport_pd(ipd);
		if (ic) {
			EXPECT_EQ(ibv_close_device(ic), 0);
		}
	}
	// b writes @len bytes of pattern @seed into the imported MR at @off
	// (through the imported context's QP) and answers the completion.
	int b_writes(std::size_t off, std::uint32_t len, unsigned seed, std::uint32_t rkey)
	{
		for (std::size_t i = 0; i < len; i++)
			b.buf[i] = pattern(seed, i);
		if (post(b.qp, IBV_WR_RDMA_WRITE, b.addr(0), len, b.mr->lkey,
			 reinterpret_cast<std::uintptr_t>(imr->addr) + off, rkey))
			return -2;
		return one_status(b.scq);
	}
};

TEST_F(Import, RdmaWriteIntoTheImportedMrLandsInTheOriginalBuffer)
{
	ASSERT_EQ(b_writes(100, 3000, 5, imr->rkey), IBV_WC_SUCCESS);
	EXPECT_TRUE(has_pattern(a.buf.data() + 100, 3000, 5));
	EXPECT_EQ(a.buf[99], 0);
	EXPECT_EQ(a.buf[3100], 0);
}

TEST_F(Import, TheImportedQpSendsFromAndReceivesIntoTheImportedMr)
{
	// Same process: the imported MR is ours to use as local memory too.
	ASSERT_EQ(post_recv(iqp, reinterpret_cast<std::uintptr_t>(imr->addr) + 8192, 512,
			    imr->lkey),
		  0);
	for (std::size_t i = 0; i < 300; i++)
		b.buf[i] = pattern(9, i);
	ASSERT_EQ(b.post_send(IBV_WR_SEND, 1, 0, 300), 0);
	EXPECT_EQ(one_status(b.scq), IBV_WC_SUCCESS);
	EXPECT_EQ(one_status(icq), IBV_WC_SUCCESS);
	EXPECT_TRUE(has_pattern(a.buf.data() + 8192, 300, 9));

	for (std::size_t i = 0; i < 200; i++)
		a.buf[20000 + i] = pattern(11, i);
	ASSERT_EQ(b.post_recv(2, 1000, 512), 0);
	ASSERT_EQ(post(iqp, IBV_WR_SEND, reinterpret_cast<std::uintptr_t>(imr->addr) + 20000, 200,
		       imr->lkey),
		  0);
	EXPECT_EQ(one_status(icq), IBV_WC_SUCCESS);
	EXPECT_EQ(one_status(b.rcq), IBV_WC_SUCCESS);
	EXPECT_TRUE(has_pattern(b.buf.data() + 1000, 200, 11));
}

TEST_F(Import, UnimportFreesOnlyTheStructs)
{
	ibv_unimport_mr(imr);
	imr = nullptr;
	ibv_unimport_pd(ipd);
	ipd = nullptr;
	// The MR and PD live on in the context: importable again, and the
	// rkey still works.
	ipd = ibv_import_pd(ic, a.pd->handle);
	ASSERT_NE(ipd, nullptr) << strerror(errno);
	imr = ibv_import_mr(ipd, a.mr->handle);
	ASSERT_NE(imr, nullptr) << strerror(errno);
	ASSERT_EQ(b_writes(0, 64, 3, a.mr->rkey), IBV_WC_SUCCESS);
	EXPECT_TRUE(has_pattern(a.buf.data(), 64, 3));
}

TEST_F(Import, ObjectsCreatedThroughEitherContextAreOneContexts)
{
	// An MR registered through the imported context is importable, by its
	// handle, through the first one.
	std::vector<unsigned char> mem(4096);
	ibv_mr *m = ibv_reg_mr(ipd, mem.data(), mem.size(), kAccessAll);
	ASSERT_NE(m, nullptr) << strerror(errno);
	ibv_mr *back = ibv_import_mr(a.pd, m->handle);
	ASSERT_NE(back, nullptr) << strerror(errno);
	EXPECT_EQ(back->rkey, m->rkey);
	EXPECT_EQ(back->addr, mem.data());
	ibv_unimport_mr(back);
	// Destroyed through one, gone for both.
	std::uint32_t h = m->handle;
	ASSERT_EQ(ibv_dereg_mr(m), 0);
	errno = 0;
	EXPECT_EQ(ibv_import_mr(a.pd, h), nullptr);
	EXPECT_EQ(errno, ENOENT);
}

TEST_F(Import, TheImportedContextOutlivesTheOriginal)
{
	// Closing the first verbs context (without destroying its objects)
	// leaves the context to the imported one: the MR is still there.
	// The structs of a's objects are lost to the program then (as with
	// libibverbs: nothing can free them once their context is closed),
	// which LeakSanitizer is told.
	ignore_leak(a.pd);
	ignore_leak(a.mr);
	ignore_leak(a.scq);
	ignore_leak(a.rcq);
	ASSERT_EQ(ibv_close_device(a.ctx), 0);
	a.ctx = nullptr;
	a.pd = nullptr;	// the structs went with their context's objects'
	a.mr = nullptr;	// owner, who keeps them: not ours to free
	a.scq = a.rcq = nullptr;
	ASSERT_EQ(b_writes(40, 500, 21, imr->rkey), IBV_WC_SUCCESS);
	EXPECT_TRUE(has_pattern(a.buf.data() + 40, 500, 21));
	// A fresh pair, made now so that no key of theirs can be the MR's
	// once it is gone.
	Endpoint c, d;
	ASSERT_NO_FATAL_FAILURE(c.open());
	ASSERT_NO_FATAL_FAILURE(d.open());
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(d.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(c.connect(d.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(d.connect(c.qp->qp_num));
	// The last one closes the context, and its MR with it.
	ASSERT_EQ(ibv_destroy_qp(iqp), 0);
	iqp = nullptr;
	ASSERT_EQ(ibv_destroy_cq(icq), 0);
	icq = nullptr;
	std::uint32_t rkey = imr->rkey;
	ibv_unimport_mr(imr);
	imr = nullptr;
	ibv_unimport_pd(ipd);
	ipd = nullptr;
	ASSERT_EQ(ibv_close_device(ic), 0);
	ic = nullptr;
	// The key is gone (b's QP lost its peer: the fresh pair asks).
	ASSERT_EQ(c.post_send(IBV_WR_RDMA_WRITE, 1, 0, 16, IBV_SEND_SIGNALED,
			      reinterpret_cast<std::uintptr_t>(a.buf.data()), rkey),
		  0);
	auto w = poll_n(c.scq, 1);
	ASSERT_EQ(w.size(), 1u);
	EXPECT_EQ(w[0].status, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(Import, ClosingTheImportedContextFirstLeavesTheOriginal)
{
	ASSERT_EQ(ibv_destroy_qp(iqp), 0);
	iqp = nullptr;
	ASSERT_EQ(ibv_destroy_cq(icq), 0);
	icq = nullptr;
	ibv_unimport_mr(imr);
	imr = nullptr;
	ibv_unimport_pd(ipd);
	ipd = nullptr;
	ASSERT_EQ(ibv_close_device(ic), 0);
	ic = nullptr;
	// a's own objects are untouched: its QP and MR still work.
	Endpoint c;
	ASSERT_NO_FATAL_FAILURE(c.open());
	ASSERT_NO_FATAL_FAILURE(c.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	ASSERT_NO_FATAL_FAILURE(a.connect(c.qp->qp_num));
	ASSERT_NO_FATAL_FAILURE(c.connect(a.qp->qp_num));
	for (std::size_t i = 0; i < 100; i++)
		c.buf[i] = pattern(33, i);
	ASSERT_EQ(c.post_send(IBV_WR_RDMA_WRITE, 1, 0, 100, IBV_SEND_SIGNALED, a.addr(500),
			      a.mr->rkey),
		  0);
	EXPECT_EQ(one_status(c.scq), IBV_WC_SUCCESS);
	EXPECT_TRUE(has_pattern(a.buf.data() + 500, 100, 33));
}

// ------------------------------------------------------------------ misuse

TEST(ImportMisuse, FdsThatNameNoContext)
{
	errno = 0;
	EXPECT_EQ(ibv_import_device(-1), nullptr);
	EXPECT_EQ(errno, EINVAL);

	int p[2];
	ASSERT_EQ(pipe(p), 0);
	errno = 0;
	EXPECT_EQ(ibv_import_device(p[0]), nullptr);
	EXPECT_EQ(errno, EINVAL) << "a pipe is no context";
	EXPECT_GE(fcntl(p[0], F_GETFD), 0) << "a failed import leaves the fd open";
	close(p[1]);
	close(p[0]);
	errno = 0;
	EXPECT_EQ(ibv_import_device(p[0]), nullptr);
	EXPECT_EQ(errno, EINVAL) << "a closed fd";

	int s[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, s), 0);
	errno = 0;
	EXPECT_EQ(ibv_import_device(s[0]), nullptr);
	EXPECT_EQ(errno, EINVAL) << "a socket that is no context's";
	EXPECT_GE(fcntl(s[0], F_GETFD), 0);
	close(s[0]);
	close(s[1]);

	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(null, 0);
	errno = 0;
	EXPECT_EQ(ibv_import_device(null), nullptr);
	EXPECT_EQ(errno, ENODEV) << "a character device of no RDMA device";
	close(null);
}

TEST(ImportMisuse, HandlesOfNothingOrOfAnotherType)
{
	Endpoint a;
	ASSERT_NO_FATAL_FAILURE(a.open());
	int fd = dup(a.ctx->cmd_fd);
	ASSERT_GE(fd, 0);
	ibv_context *ic = ibv_import_device(fd);
	ASSERT_NE(ic, nullptr) << strerror(errno);
	// As Linux's uobject lookup: no such handle ENOENT, another type EINVAL.
	errno = 0;
	EXPECT_EQ(ibv_import_pd(ic, 0xfffff), nullptr);
	EXPECT_EQ(errno, ENOENT);
	errno = 0;
	EXPECT_EQ(ibv_import_pd(ic, a.mr->handle), nullptr);
	EXPECT_EQ(errno, EINVAL);
	ibv_pd *ipd = ibv_import_pd(ic, a.pd->handle);
	ASSERT_NE(ipd, nullptr) << strerror(errno);
	errno = 0;
	EXPECT_EQ(ibv_import_mr(ipd, 0xfffff), nullptr);
	EXPECT_EQ(errno, ENOENT);
	errno = 0;
	EXPECT_EQ(ibv_import_mr(ipd, a.pd->handle), nullptr);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ibv_import_mr(ipd, a.scq->handle), nullptr);
	EXPECT_EQ(errno, EINVAL);
	// The imported context has no async event fd of its own (the
	// context's is its opener's), as rdma-core's imported contexts.
	EXPECT_EQ(ic->async_fd, -1);
	ibv_async_event ev;
	errno = 0;
	EXPECT_EQ(ibv_get_async_event(ic, &ev), -1);
	EXPECT_EQ(errno, EBADF);
	ibv_unimport_pd(ipd);
	EXPECT_EQ(ibv_close_device(ic), 0);
}

// ----------------------------------------------------------- two processes

// Sends @fd with @len bytes of @data over the unix socket @s.
bool send_fd(int s, int fd, const void *data, std::size_t len)
{
	iovec iov{const_cast<void *>(data), len};
	alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
	msghdr m{};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl;
	m.msg_controllen = sizeof(ctl);
	cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(s, &m, 0) == ssize_t(len);
}

// Receives what send_fd() sent; the fd, or -1.
int recv_fd(int s, void *data, std::size_t len)
{
	iovec iov{data, len};
	alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
	msghdr m{};
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl;
	m.msg_controllen = sizeof(ctl);
	if (recvmsg(s, &m, MSG_CMSG_CLOEXEC) != ssize_t(len))
		return -1;
	cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

struct Offer {
	std::uint32_t pd_handle, mr_handle, parent_qpn;
	std::uint64_t buf;	// the parent's registered buffer
};

struct Answer {
	std::int32_t status;	// 0, or the step that failed
	std::uint32_t qpn;	// the child's QP on the imported PD
	std::uint64_t cbuf;	// the child's own buffer
	std::uint32_t crkey;
};

bool put(int s, const void *p, std::size_t n)
{
	return write(s, p, n) == ssize_t(n);
}

bool get(int s, void *p, std::size_t n)
{
	return read(s, p, n) == ssize_t(n);
}

constexpr std::size_t kChildBuf = 1 << 16;

// The child: imports the parent's context, PD and MR from the fd it is sent,
// creates its own CQ, QP and MR on the imported PD, and moves data to and
// from the parent through them.  Its exit status says which step failed.
int child(int s)
{
	Offer o{};
	int fd = recv_fd(s, &o, sizeof(o));
	if (fd < 0)
		return 2;
	Answer ans{};
	ibv_context *ic = ibv_import_device(fd);
	if (inproc_backend()) {
		// Another process's in-process core is out of reach.
		ans.status = !ic && errno == EOPNOTSUPP ? 0 : 3;
		put(s, &ans, sizeof(ans));
		return ans.status;
	}
	if (!ic)
		return 4;
	ibv_pd *ipd = ibv_import_pd(ic, o.pd_handle);
	ibv_mr *imr = ipd ? ibv_import_mr(ipd, o.mr_handle) : nullptr;
	if (!imr || reinterpret_cast<std::uintptr_t>(imr->addr) != o.buf)
		return 5;
	static unsigned char mem[kChildBuf];
	ibv_mr *cm = ibv_reg_mr(ipd, mem, sizeof(mem), kAccessAll);
	ibv_cq *cq = ibv_create_cq(ic, 16, nullptr, nullptr, 0);
	ibv_qp *qp = cq ? rc_qp(ipd, cq) : nullptr;
	if (!cm || !qp)
		return 6;
	// Connected to the parent's QP (on the same PD of the same context).
	Endpoint::connect_qp(qp, o.parent_qpn);
	if (::testing::Test::HasFailure())
		return 7;
	// (b) below: a receive for the parent's SEND.
	if (post_recv(qp, reinterpret_cast<std::uintptr_t>(mem) + 4096, 1024, cm->lkey))
		return 8;
	ans.qpn = qp->qp_num;
	ans.cbuf = reinterpret_cast<std::uintptr_t>(mem);
	ans.crkey = cm->rkey;
	if (!put(s, &ans, sizeof(ans)))
		return 9;
	char go;
	if (!get(s, &go, 1))
		return 10;
	// (a) An RDMA WRITE from the child's own memory into the parent's
	// buffer through the imported MR's rkey.
	for (std::size_t i = 0; i < 3000; i++)
		mem[i] = pattern(41, i);
	if (post(qp, IBV_WR_RDMA_WRITE, reinterpret_cast<std::uintptr_t>(mem), 3000, cm->lkey,
		 o.buf + 1000, imr->rkey) ||
	    one_status(cq) != IBV_WC_SUCCESS)
		ans.status = 11;
	if (!put(s, &ans, sizeof(ans)) || !get(s, &go, 1))
		return 12;
	// (b) The parent's SEND arrived in the child's memory.
	if (one_status(cq) != IBV_WC_SUCCESS || !has_pattern(mem + 4096, 200, 42))
		ans.status = 13;
	// (d) The parent's memory is no local buffer of the child's: the
	// software device copies only to or from the posting process
	// (docs/datapath.md, "Imported objects").
	if (!ans.status &&
	    (post(qp, IBV_WR_RDMA_WRITE, o.buf, 64, imr->lkey, ans.cbuf + 8192, cm->rkey) ||
	     one_status(cq) != IBV_WC_LOC_PROT_ERR))
		ans.status = 14;
	// What the child created belongs to the context, not to the child:
	// it stays after the child's exit (holding the PD) unless destroyed.
	if (!ans.status && (ibv_destroy_qp(qp) || ibv_destroy_cq(cq) || ibv_dereg_mr(cm)))
		ans.status = 15;
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	if (!ans.status && ibv_close_device(ic))
		ans.status = 16;
	put(s, &ans, sizeof(ans));
	return ans.status;
}

TEST(ImportProcesses, AChildImportsTheContextFromAFdPassedOverAUnixSocket)
{
	int s[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s), 0);
	Endpoint a;
	ASSERT_NO_FATAL_FAILURE(a.open());
	ASSERT_NO_FATAL_FAILURE(a.make_qp(IBV_QPT_RC));
	pid_t kid = fork();
	ASSERT_GE(kid, 0);
	if (kid == 0) {
		close(s[0]);
		alarm(30);
		_exit(child(s[1]));
	}
	close(s[1]);
	Offer o{a.pd->handle, a.mr->handle, a.qp->qp_num, a.addr(0)};
	int fd = dup(a.ctx->cmd_fd);
	ASSERT_GE(fd, 0);
	ASSERT_TRUE(send_fd(s[0], fd, &o, sizeof(o)));
	close(fd); // the child has its own copy now
	Answer ans{};
	ASSERT_TRUE(get(s[0], &ans, sizeof(ans)));
	if (!inproc_backend()) {
		ASSERT_EQ(ans.status, 0);
		ASSERT_NO_FATAL_FAILURE(a.connect(ans.qpn));
		char go = 1;
		ASSERT_TRUE(put(s[0], &go, 1));
		// (a) The child's bytes are in our buffer.
		ASSERT_TRUE(get(s[0], &ans, sizeof(ans)));
		EXPECT_EQ(ans.status, 0);
		EXPECT_TRUE(has_pattern(a.buf.data() + 1000, 3000, 41));
		// (b) A SEND to the child's QP lands in the child's memory.
		for (std::size_t i = 0; i < 200; i++)
			a.buf[30000 + i] = pattern(42, i);
		ASSERT_EQ(a.post_send(IBV_WR_SEND, 1, 30000, 200), 0);
		EXPECT_EQ(one_status(a.scq), IBV_WC_SUCCESS);
		// (c) Through the child's QP (the responder) into our MR:
		// the copy goes to the MR's process, which is not the QP's.
		for (std::size_t i = 0; i < 256; i++)
			a.buf[40000 + i] = pattern(43, i);
		ASSERT_EQ(a.post_send(IBV_WR_RDMA_WRITE, 2, 40000, 256, IBV_SEND_SIGNALED,
				      a.addr(50000), a.mr->rkey),
			  0);
		EXPECT_EQ(one_status(a.scq), IBV_WC_SUCCESS);
		EXPECT_TRUE(has_pattern(a.buf.data() + 50000, 256, 43));
		ASSERT_TRUE(put(s[0], &go, 1));
		ASSERT_TRUE(get(s[0], &ans, sizeof(ans)));
		EXPECT_EQ(ans.status, 0) << "13: the SEND did not arrive, 14: a foreign lkey "
					    "was not refused, 15/16: cleanup";
	}
	int st = 0;
	ASSERT_EQ(waitpid(kid, &st, 0), kid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
	close(s[0]);
}

} // namespace
