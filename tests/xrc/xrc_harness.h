/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What the XRC test programs share (tests/xrc): one line per checked point,
 * messages between the processes of a test over SOCK_SEQPACKET socketpairs,
 * and a timeout on every wait.  No verbs header here: the OFED programs and
 * the upstream peer include different ones.
 */
#ifndef UABI_TESTS_XRC_HARNESS_H
#define UABI_TESTS_XRC_HARNESS_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Every wait of a test is bounded by this (milliseconds). */
#define XRC_WAIT_MS 30000

static const char *xrc_role = "main";
static int xrc_failed;
static int xrc_passed;

static inline const char *xrc_errname(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	case EBUSY:
		return "EBUSY";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EEXIST:
		return "EEXIST";
	case ENOMEM:
		return "ENOMEM";
	case EFAULT:
		return "EFAULT";
	case EBADF:
		return "EBADF";
	case ENOSYS:
		return "ENOSYS";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EAGAIN:
		return "EAGAIN";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case EPROTO:
		return "EPROTO";
	default:
		return strerror(e);
	}
}

/* One line per checked point, written with one write(2) so that the lines
 * of concurrent processes do not mix. */
__attribute__((format(printf, 2, 3))) static inline int xrc_check(int ok, const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s %-4s ", ok ? "ok  " : "FAIL", xrc_role);
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, (size_t)n) < 0)
		(void)0;
	if (ok)
		xrc_passed++;
	else
		xrc_failed++;
	return ok;
}

/* An int-returning verb: a positive errno (or 0) expected. */
__attribute__((format(printf, 3, 4))) static inline int xrc_expect_ret(int got, int want,
								       const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (got == want)
		return xrc_check(1, "%s = %s", what, xrc_errname(got));
	return xrc_check(0, "%s = %s, want %s", what, xrc_errname(got), xrc_errname(want));
}

__attribute__((format(printf, 1, 2))) static inline void xrc_note(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "     %-4s ", xrc_role);
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, (size_t)n) < 0)
		(void)0;
}

static inline uint64_t xrc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------- messages */

struct xrc_msg {
	uint32_t op;
	uint32_t v[7];
};

static inline int xrc_send(int fd, uint32_t op, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3)
{
	struct xrc_msg m = {.op = op, .v = {v0, v1, v2, v3}};

	return send(fd, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}

/* Waits at most XRC_WAIT_MS for message @op; anything else (EOF, another
 * op, the timeout) is a failed check and answers -1. */
static inline int xrc_expect(int fd, uint32_t op, struct xrc_msg *out)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct xrc_msg m;
	int r;

	do
		r = poll(&p, 1, XRC_WAIT_MS);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		xrc_check(0, "message %u: %s", op, r == 0 ? "timed out" : strerror(errno));
		return -1;
	}
	ssize_t n = recv(fd, &m, sizeof(m), 0);
	if (n == 0) {
		xrc_check(0,
			  "waiting for message %u: the other process closed its socket "
			  "(it failed: see its lines)",
			  op);
		return -1;
	}
	if (n != (ssize_t)sizeof(m) || m.op != op) {
		xrc_check(0, "waiting for message %u: got %zd bytes, op %u", op, n,
			  n == (ssize_t)sizeof(m) ? m.op : 0);
		return -1;
	}
	if (out)
		*out = m;
	return 0;
}

/* The mixed test (ofed_xrc_mixed <-> upstream_xrc_peer): what the OFED
 * process asks of the upstream one; each is answered with XM_OK (v0..: the
 * results named below) once the peer's checks for it are done. */
enum {
	XM_OK = 100,
	XM_OPEN,     /* v0 qpn: ibv_open_qp it; answer: v0 srq num */
	XM_CONNECT,  /* v0 sender qpn, v1 lid: INIT, RTR of the opened QP */
	XM_RECV,     /* v0 first message, v1 count: poll and check them */
	XM_DESTROY1, /* ibv_destroy_qp of the opened QP; it must be gone */
	XM_CREATE2,  /* ibv_create_qp_ex(XRC_RECV); answer: v0 qpn */
	XM_DESTROY2, /* ibv_destroy_qp of it; the QP must still exist */
	XM_GONE2,    /* ibv_open_qp of it must fail now */
	XM_FINISH,   /* tear down, exit */
};

/* ------------------------------------------------------------- processes */

/* A child dies with its parent, so that a failing test leaves no process. */
static inline void xrc_child_setup(const char *role)
{
	xrc_role = role;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(3);
}

/* Waits at most @ms for @pid; -1 (and the child killed) on timeout. */
static inline int xrc_wait_pid(pid_t pid, int ms, int *status)
{
	uint64_t end = xrc_now_ms() + (uint64_t)ms;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (xrc_now_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -1;
		}
		usleep(2000);
	}
}

/* One check on a child's end: exited 0. */
static inline void xrc_check_exit(const char *who, int waited, int st)
{
	if (waited)
		xrc_check(0, "%s did not exit in time (killed)", who);
	else if (WIFSIGNALED(st))
		xrc_check(0, "%s exited 0: killed by signal %d", who, WTERMSIG(st));
	else
		xrc_check(WEXITSTATUS(st) == 0, "%s exited %d", who, WEXITSTATUS(st));
}

/* The payload of message @i (@len bytes): depends on both, so a message
 * landing in the wrong buffer, out of order or cut short shows. */
static inline unsigned char xrc_pattern(uint32_t i, uint32_t j)
{
	return (unsigned char)(i * 131u + j * 7u + (j >> 8) * 13u + 0x5a);
}

static inline void xrc_fill(unsigned char *p, uint32_t i, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		p[j] = xrc_pattern(i, j);
}

/* First mismatching byte, or -1. */
static inline long xrc_verify(const unsigned char *p, uint32_t i, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		if (p[j] != xrc_pattern(i, j))
			return (long)j;
	return -1;
}

/* Message sizes, small ones and several above 4 KiB. */
static const uint32_t xrc_sizes[] = {1,	   7,	 64,   100,   255,   1000,  4095, 4096,
				     4097, 8192, 9000, 16384, 32768, 65536, 12345};
#define XRC_NSIZES (sizeof(xrc_sizes) / sizeof(xrc_sizes[0]))
#define XRC_SLOT 65536u
static inline uint32_t xrc_size_of(uint32_t i)
{
	return xrc_sizes[i % XRC_NSIZES];
}

#endif
