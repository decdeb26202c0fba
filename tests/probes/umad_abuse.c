/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The umad ABI of /dev/infiniband/umadN as a program sees it through libc
 * (run under `uabi run`, so through the umad shim; on Linux with ib_umad
 * the same program checks the kernel): the errnos of Linux's user_mad.c
 * for bad registrations, writes and reads, readiness through poll(),
 * timeouts after timeout_ms * (retries + 1), descriptors that are dup()ed
 * and closed.  No libibumad: the raw structures of <rdma/ib_user_mad.h>.
 * Exit status: the number of failed checks.
 */
#define _GNU_SOURCE
#include <rdma/ib_user_mad.h>
#include <rdma/rdma_user_ioctl.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			printf("ok   ");                                                           \
		} else {                                                                           \
			printf("FAIL ");                                                           \
			failures++;                                                                \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
	} while (0)

/* ret == -1 with errno e */
#define CHECK_ERRNO(ret, e, what)                                                                  \
	do {                                                                                       \
		long r_ = (long)(ret);                                                             \
		int e_ = errno;                                                                    \
		CHECK(r_ == -1 && e_ == (e), "%s: %ld, %s (want %s)", what, r_,                    \
		      r_ == -1 ? strerror(e_) : "no error", strerror(e));                          \
	} while (0)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int reg(int fd, uint8_t qpn, uint8_t cls, uint8_t version, uint8_t rmpp, uint32_t oui)
{
	struct ib_user_mad_reg_req r;
	memset(&r, 0, sizeof(r));
	r.qpn = qpn;
	r.mgmt_class = cls;
	r.mgmt_class_version = version;
	r.rmpp_version = rmpp;
	r.oui[0] = (uint8_t)(oui >> 16);
	r.oui[1] = (uint8_t)(oui >> 8);
	r.oui[2] = (uint8_t)oui;
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &r))
		return -1;
	return (int)r.id;
}

/* A new-ABI (64-byte header) umad with a 256-byte MAD. */
struct umad {
	struct ib_user_mad_hdr hdr;
	uint8_t mad[256];
};

static void dr_nodeinfo(struct umad *u, uint32_t agent, uint32_t tid, uint32_t timeout, uint32_t retries)
{
	memset(u, 0, sizeof(*u));
	u->hdr.id = agent;
	u->hdr.timeout_ms = timeout;
	u->hdr.retries = retries;
	u->hdr.qpn = htonl(0);
	u->hdr.lid = htons(0xffff);
	u->mad[0] = 1;	  /* BaseVersion */
	u->mad[1] = 0x81; /* directed route SMP */
	u->mad[2] = 1;
	u->mad[3] = 0x01; /* Get */
	uint32_t t = htonl(tid);
	memcpy(u->mad + 12, &t, 4);
	u->mad[16] = 0x00;
	u->mad[17] = 0x11; /* NodeInfo */
	u->mad[32] = u->mad[33] = u->mad[34] = u->mad[35] = 0xff; /* DrSLID, DrDLID */
}

static void lid_nodeinfo(struct umad *u, uint32_t agent, uint16_t lid, uint32_t tid, uint32_t timeout,
			 uint32_t retries)
{
	dr_nodeinfo(u, agent, tid, timeout, retries);
	u->mad[1] = 0x01;
	u->hdr.lid = htons(lid);
}

static int readable(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/infiniband/umad0";
	const size_t hs = sizeof(struct ib_user_mad_hdr);
	struct umad u;
	uint8_t big[1024];

	int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	CHECK(fd >= 0, "open %s: %s", path, fd >= 0 ? "fd" : strerror(errno));
	if (fd < 0)
		return 1;
	CHECK_ERRNO(open("/dev/infiniband/umad63", O_RDWR), ENOENT, "open a port the device has not");

	/* ioctl */
	CHECK_ERRNO(ioctl(fd, _IO(0x1b, 0x77)), ENOTTY, "unknown ioctl");
	CHECK(ioctl(fd, IB_USER_MAD_ENABLE_PKEY) == 0, "ENABLE_PKEY before any agent");
	CHECK_ERRNO(ioctl(fd, IB_USER_MAD_REGISTER_AGENT, NULL), EFAULT, "register, NULL argument");
	CHECK_ERRNO(ioctl(fd, IB_USER_MAD_REGISTER_AGENT, (void *)16), EFAULT, "register, unmapped argument");
	CHECK_ERRNO(reg(fd, 2, 0x04, 1, 0, 0), EINVAL, "register on QP 2");
	CHECK_ERRNO(reg(fd, 1, 0x01, 1, 0, 0), EINVAL, "subnet management class on QP 1");
	CHECK_ERRNO(reg(fd, 0, 0x04, 1, 0, 0), EINVAL, "performance class on QP 0");
	CHECK_ERRNO(reg(fd, 1, 0x04, 8, 0, 0), EINVAL, "class version 8");
	CHECK_ERRNO(reg(fd, 1, 0x60, 1, 0, 0), EINVAL, "class 0x60");
	CHECK_ERRNO(reg(fd, 1, 0x30, 1, 0, 0), EINVAL, "vendor class 0x30 without an OUI");
	CHECK_ERRNO(reg(fd, 1, 0x04, 1, 1, 0), EINVAL, "RMPP for a class without RMPP");
	CHECK_ERRNO(reg(fd, 1, 0x03, 2, 2, 0), EINVAL, "RMPP version 2");
	int smi = reg(fd, 0, 0x81, 1, 0, 0);
	CHECK(smi == 0, "directed-route SMP agent: id %d", smi);
	int ids[40], n = 0;
	for (int i = 0; i < 40; i++) {
		int id = reg(fd, 1, 0x04, 1, 0, 0);
		if (id < 0)
			break;
		ids[n++] = id;
	}
	CHECK(n == 31 && errno == ENOMEM, "32 agents per file, the 33rd ENOMEM (%d more, %s)", n,
	      strerror(errno));
	uint32_t bad = 32;
	CHECK_ERRNO(ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad), EINVAL, "unregister id 32");
	for (int i = 1; i < n; i++)
		ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &ids[i]);
	bad = (uint32_t)ids[1];
	CHECK_ERRNO(ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bad), EINVAL, "unregister twice");
	CHECK_ERRNO(ioctl(fd, IB_USER_MAD_ENABLE_PKEY), EINVAL, "ENABLE_PKEY after an agent");
	{
		/* Two agents may not take the same methods of a class. */
		struct ib_user_mad_reg_req r;
		memset(&r, 0, sizeof(r));
		r.qpn = 1;
		r.mgmt_class = 0x09; /* SNMP tunnelling: no agent of ours */
		r.mgmt_class_version = 1;
		r.method_mask[0] = 1ul << 1;
		int a = ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &r);
		int b = ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &r);
		int e = errno;
		CHECK(a == 0 && b == -1 && e == EINVAL, "same class and method twice: %d then %d (%s)", a,
		      b, strerror(e));
		ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &r.id);
	}

	/* read on an empty file */
	CHECK_ERRNO(read(fd, big, sizeof(big)), EAGAIN, "read, nothing received, O_NONBLOCK");
	CHECK_ERRNO(read(fd, big, hs - 1), EINVAL, "read, less than a header");
	CHECK(!readable(fd, 0), "poll: not readable while nothing is received");
	{
		struct pollfd p = {fd, POLLOUT, 0};
		CHECK(poll(&p, 1, 0) == 1 && (p.revents & POLLOUT), "poll: always writable");
	}

	/* write */
	dr_nodeinfo(&u, (uint32_t)smi, 0x1001, 1000, 0);
	CHECK_ERRNO(write(fd, &u, hs + 35), EINVAL, "write, shorter than header + RMPP header");
	{
		/* An address nothing is mapped at (the compiler would refuse NULL). */
		const void *volatile nowhere = (const void *)16;
		CHECK_ERRNO(write(fd, nowhere, sizeof(u)), EFAULT, "write, unmapped buffer");
	}
	memset(big, 0, sizeof(big));
	memcpy(big, &u, sizeof(u));
	CHECK_ERRNO(write(fd, big, hs + 257), EINVAL, "write, a MAD longer than 256 bytes");
	u.hdr.id = 40;
	CHECK_ERRNO(write(fd, &u, sizeof(u)), EINVAL, "write, agent id 40");
	u.hdr.id = (uint32_t)ids[1];
	CHECK_ERRNO(write(fd, &u, sizeof(u)), EINVAL, "write, an unregistered agent");

	/* a request the port's SMA answers */
	dr_nodeinfo(&u, (uint32_t)smi, 0x1001, 1000, 0);
	CHECK(write(fd, &u, sizeof(u)) == (ssize_t)sizeof(u), "write a directed-route NodeInfo Get");
	CHECK(readable(fd, 1000), "poll: readable with the answer");
	CHECK_ERRNO(read(fd, big, hs + 100), EINVAL, "read, buffer shorter than the MAD");
	ssize_t r = read(fd, big, sizeof(big));
	struct umad *a = (struct umad *)big;
	uint32_t tid_lo;
	memcpy(&tid_lo, a->mad + 12, 4);
	CHECK(r == (ssize_t)(hs + 256) && a->hdr.id == (uint32_t)smi && a->hdr.status == 0 &&
		      a->hdr.length == hs + 256 && a->mad[3] == 0x81 && ntohl(tid_lo) == 0x1001 &&
		      a->mad[8] | a->mad[9] | a->mad[10] | a->mad[11],
	      "read the answer: %zd bytes, agent %u, GetResp, our TID under the MAD layer's high word",
	      r, a->hdr.id);
	CHECK(a->mad[64 + 2] == 1, "NodeInfo: a channel adapter");
	CHECK(!readable(fd, 0), "poll: not readable once read");

	/* a request nobody answers: LID 7 */
	double t0 = now();
	int lidsmi = reg(fd, 0, 0x01, 1, 0, 0);
	lid_nodeinfo(&u, (uint32_t)lidsmi, 7, 0x2002, 150, 1);
	CHECK(write(fd, &u, sizeof(u)) == (ssize_t)sizeof(u), "write a NodeInfo Get to LID 7");
	CHECK_ERRNO(write(fd, &u, sizeof(u)), EINVAL, "the same TID again while it waits");
	CHECK(!readable(fd, 200), "nothing after 200 ms (timeout 150 ms, 1 retry)");
	CHECK(readable(fd, 2000), "readable once 300 ms are over");
	double waited = now() - t0;
	CHECK_ERRNO(read(fd, big, hs + 23), EINVAL, "read, shorter than header + 24");
	r = read(fd, big, sizeof(big));
	CHECK(r == (ssize_t)(hs + 24) && a->hdr.status == ETIMEDOUT && a->hdr.id == (uint32_t)lidsmi,
	      "the send comes back: %zd bytes, status %u (ETIMEDOUT) after %.0f ms", r, a->hdr.status,
	      waited * 1000);
	CHECK(waited >= 0.29 && waited < 2.5, "timed out after timeout x (retries + 1)");

	/* timeout 0: no answer is waited for; a response sent: nobody */
	dr_nodeinfo(&u, (uint32_t)smi, 0x3003, 0, 0);
	CHECK(write(fd, &u, sizeof(u)) == (ssize_t)sizeof(u), "write with timeout 0");
	dr_nodeinfo(&u, (uint32_t)smi, 0x3004, 100, 0);
	u.mad[3] = 0x81;
	CHECK(write(fd, &u, sizeof(u)) == (ssize_t)sizeof(u), "write a response");
	CHECK(!readable(fd, 300), "nothing comes back for either");

	/* dup: the copy is the same file, and outlives the original */
	dr_nodeinfo(&u, (uint32_t)smi, 0x4004, 1000, 0);
	int d = dup(fd);
	CHECK(d >= 0 && write(d, &u, sizeof(u)) == (ssize_t)sizeof(u), "write through a dup");
	CHECK(close(fd) == 0, "close the original");
	CHECK(read(d, big, sizeof(big)) == (ssize_t)(hs + 256), "read the answer through the dup");

	/* a blocking read waits for the timeout, and is bounded by it */
	int fl = fcntl(d, F_GETFL);
	fcntl(d, F_SETFL, fl & ~O_NONBLOCK);
	lid_nodeinfo(&u, (uint32_t)lidsmi, 9, 0x5005, 100, 0);
	t0 = now();
	CHECK(write(d, &u, sizeof(u)) == (ssize_t)sizeof(u), "write a NodeInfo Get to LID 9");
	r = read(d, big, sizeof(big));
	waited = now() - t0;
	CHECK(r == (ssize_t)(hs + 24) && a->hdr.status == ETIMEDOUT && waited >= 0.09 && waited < 2.5,
	      "blocking read: the timeout after %.0f ms (%zd bytes, status %u, errno %s)",
	      waited * 1000, r, a->hdr.status, r < 0 ? strerror(errno) : "-");
	CHECK(close(d) == 0, "close the dup");

	/* The access mode of the open counts. */
	{
		int ro = open(path, O_RDONLY | O_NONBLOCK);
		int wo = open(path, O_WRONLY | O_NONBLOCK);
		int ra = reg(ro, 0, 0x81, 1, 0, 0);
		dr_nodeinfo(&u, (uint32_t)ra, 0x7007, 1000, 0);
		CHECK_ERRNO(write(ro, &u, sizeof(u)), EBADF, "write on a read-only open");
		CHECK_ERRNO(read(wo, big, sizeof(big)), EBADF, "read on a write-only open");
		close(ro);
		close(wo);
	}

	/* The old ABI (no ENABLE_PKEY): 56-byte headers. */
	int old = open(path, O_RDWR | O_NONBLOCK);
	int oa = reg(old, 0, 0x81, 1, 0, 0);
	const size_t ohs = sizeof(struct ib_user_mad_hdr_old);
	dr_nodeinfo(&u, (uint32_t)oa, 0x6006, 1000, 0);
	memcpy(big, &u.hdr, ohs);
	memcpy(big + ohs, u.mad, 256);
	CHECK(oa >= 0 && write(old, big, ohs + 256) == (ssize_t)(ohs + 256), "old ABI: write 56 + 256");
	memset(big, 0, sizeof(big));
	r = read(old, big, sizeof(big));
	CHECK(r == (ssize_t)(ohs + 256) && big[ohs + 3] == 0x81, "old ABI: read 56 + 256 (%zd)", r);
	close(old);

	printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
	return failures;
}
