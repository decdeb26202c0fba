// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Malformed and hostile input through /dev/rdma_uabi, run inside the qemu
 * guest by tests/kernel/run-qemu.sh (static binary, no libraries):
 *
 *   abuse    bad ioctl arguments: unknown request, NULL/unmapped/kernel/
 *            read-only pointers (EFAULT, never an oops), lengths below the
 *            header, above UABI_MAX_MSG_BYTES and disagreeing with the
 *            header, reserved bits; malformed messages (truncated header,
 *            bad magic, bad command framing, wrong and stale handles)
 *   fuzz     random mutations of a valid chain of commands
 *   threads  two threads racing creates and destroys on one context
 *   evq      event queue fds: poll readiness, wake-ups, an fd that
 *            outlives its object and an object that outlives its fd
 *   kill     a child creating PD/MR/CQ/QP/... objects is SIGKILLed: the
 *            device's live-object counts must return to zero
 *   arena    the software device's arena fd (UABI_SW_ARENA_MAP): mmap
 *            bounds, MAP_SHARED only, no expansion, a mapping that
 *            outlives its fd and context, and no fd leaked by a failed or
 *            rolled-back message
 *
 * With no argument every section runs.  Each check prints "ok" or
 * "not ok"; the last line is "ioctl_abuse: N checks, M failed" and the
 * exit status is 0 only when nothing failed.  Every section ends by
 * checking, from a fresh context, that no object is left on the device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/uabi.h>
#include <rdma/uabi_sw.h>

static const char *dev_path = UABI_DEVICE_PATH;
static int checks, failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static int open_dev(void)
{
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", dev_path, strerror(errno));
		exit(2);
	}
	return fd;
}

/* ------------------------------------------------------ message builder */
#define MSG_CAP 65536

struct msg {
	uint8_t *buf;
	uint32_t len;
	uint32_t cmd_off;	/* current command */
	uint16_t count;
};

static void msg_init(struct msg *m, void *buf, uint32_t flags)
{
	struct uabi_msg_hdr *h = buf;

	m->buf = buf;
	memset(h, 0, sizeof(*h));
	h->magic = UABI_MSG_MAGIC;
	h->abi_version = UABI_ABI_VERSION;
	h->flags = flags;
	m->len = sizeof(*h);
	m->count = 0;
	m->cmd_off = 0;
}

/* Starts a command; returns its index. */
static uint16_t cmd(struct msg *m, uint16_t object, uint16_t method,
		    uint32_t handle, uint32_t flags)
{
	struct uabi_cmd_hdr *c = (void *)(m->buf + m->len);

	memset(c, 0, sizeof(*c));
	c->length = sizeof(*c);
	c->object = object;
	c->method = method;
	c->handle = handle;
	c->flags = flags;
	m->cmd_off = m->len;
	m->len += sizeof(*c);
	return m->count++;
}

/* Adds an attribute to the current command; returns its payload offset. */
static uint32_t attr(struct msg *m, uint16_t id, uint16_t flags,
		     const void *data, uint32_t len)
{
	struct uabi_cmd_hdr *c = (void *)(m->buf + m->cmd_off);
	struct uabi_attr *a = (void *)(m->buf + m->len);
	uint32_t padded = UABI_ALIGN8(len);
	uint32_t off = m->len + sizeof(*a);

	a->id = id;
	a->flags = flags;
	a->len = len;
	memset(m->buf + off, 0, padded);
	if (data)
		memcpy(m->buf + off, data, len);
	m->len += sizeof(*a) + padded;
	c->length += sizeof(*a) + padded;
	c->num_attrs++;
	return off;
}

static uint32_t attr_u32(struct msg *m, uint16_t id, uint32_t v)
{
	return attr(m, id, 0, &v, sizeof(v));
}

static uint32_t attr_u64(struct msg *m, uint16_t id, uint64_t v)
{
	return attr(m, id, 0, &v, sizeof(v));
}

static uint32_t attr_out(struct msg *m, uint16_t id, uint32_t len)
{
	return attr(m, id, UABI_ATTR_F_OUTPUT, NULL, len);
}

static void msg_end(struct msg *m)
{
	struct uabi_msg_hdr *h = (void *)m->buf;

	h->length = m->len;
	h->count = m->count;
}

static struct uabi_msg_hdr *hdr(struct msg *m)
{
	return (void *)m->buf;
}

static struct uabi_cmd_hdr *cmd_at(struct msg *m, unsigned int index)
{
	uint32_t off = sizeof(struct uabi_msg_hdr);

	while (index--)
		off += ((struct uabi_cmd_hdr *)(m->buf + off))->length;
	return (void *)(m->buf + off);
}

static int do_ioctl(int fd, const void *buf, uint32_t len)
{
	struct uabi_ioctl io = {
		.msg_ptr = (uintptr_t)buf,
		.msg_len = len,
	};

	return ioctl(fd, UABI_IOCTL_EXECUTE, &io) < 0 ? -errno : 0;
}

/* Sends a message; returns -errno of the ioctl, or the message status. */
static int run(int fd, struct msg *m)
{
	int ret;

	msg_end(m);
	ret = do_ioctl(fd, m->buf, m->len);
	return ret ? ret : hdr(m)->status;
}

/* ------------------------------------------------------- object helpers */
static uint64_t scratch[MSG_CAP / 8];

/* One creating command with no attribute: PD, anonymous things. */
static int64_t create_simple(int fd, uint16_t object)
{
	struct msg m;
	int ret;

	msg_init(&m, scratch, 0);
	cmd(&m, object, UABI_METHOD_CREATE, 0, 0);
	ret = run(fd, &m);
	return ret ? (int64_t)ret : (int64_t)cmd_at(&m, 0)->out_handle;
}

static int destroy(int fd, uint16_t object, uint32_t handle)
{
	struct msg m;

	msg_init(&m, scratch, 0);
	cmd(&m, object, UABI_METHOD_DESTROY, handle, 0);
	return run(fd, &m);
}

/* Creates an event queue (COMP_CHANNEL or ASYNC_EVENT); *efd gets its fd. */
static int64_t create_evq(int fd, uint16_t object, int *efd)
{
	struct msg m;
	uint32_t off;
	int ret;

	msg_init(&m, scratch, 0);
	cmd(&m, object, UABI_METHOD_CREATE, 0, 0);
	off = attr(&m, UABI_ATTR_EVQ_FD, UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD,
		   NULL, sizeof(int32_t));
	ret = run(fd, &m);
	if (ret)
		return ret;
	memcpy(efd, m.buf + off, sizeof(*efd));
	return cmd_at(&m, 0)->out_handle;
}

static int get_event(int fd, uint32_t evq, struct uabi_event *ev)
{
	struct msg m;
	uint32_t off;
	int ret;

	msg_init(&m, scratch, 0);
	cmd(&m, UABI_OBJ_ASYNC_EVENT, UABI_EVQ_GET_EVENT, evq, 0);
	off = attr_out(&m, UABI_ATTR_EVQ_EVENT, sizeof(*ev));
	ret = run(fd, &m);
	if (!ret)
		memcpy(ev, m.buf + off, sizeof(*ev));
	return ret;
}

static int set_port_state(int fd, uint32_t state)
{
	struct msg m;

	msg_init(&m, scratch, 0);
	cmd(&m, UABI_SW_OBJ_PORT, UABI_SW_PORT_SET_STATE, 0, 0);
	attr_u32(&m, UABI_SW_ATTR_PORT_NUM, 1);
	attr_u32(&m, UABI_SW_ATTR_PORT_STATE, state);
	return run(fd, &m);
}

static int counters(int fd, struct uabi_counters *c)
{
	struct msg m;
	uint32_t off;
	int ret;

	msg_init(&m, scratch, 0);
	cmd(&m, UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS, 0, 0);
	off = attr_out(&m, UABI_ATTR_DEVICE_COUNTERS, sizeof(*c));
	ret = run(fd, &m);
	if (!ret)
		memcpy(c, m.buf + off, sizeof(*c));
	return ret;
}

static uint32_t live_objects(const struct uabi_counters *c)
{
	uint32_t i, n = 0;

	for (i = 0; i < 16; i++)
		n += c->device[i];
	return n;
}

static void describe(const struct uabi_counters *c, char *out, size_t len)
{
	size_t used = 0;
	uint32_t i;

	used += snprintf(out, len, "contexts=%u", c->contexts);
	for (i = 0; i < 16 && used < len; i++)
		if (c->device[i])
			used += snprintf(out + used, len - used, " type%u=%u",
					 i, c->device[i]);
}

/* From a fresh context: no object anywhere, only this context open.
 * Context teardown is synchronous with close() and exit() (a reaped
 * child's files were released before it could be reaped); the counters
 * are still read until they say so, for at most 5 s. */
static void check_device_empty(const char *when)
{
	struct uabi_counters c;
	char text[256];
	int fd = open_dev(), tries, ret = 0;

	for (tries = 0; tries < 5000; tries++) {
		ret = counters(fd, &c);
		if (ret || (live_objects(&c) == 0 && c.contexts == 1))
			break;
		usleep(1000);
	}
	if (ret) {
		check(0, "%s: COUNTERS failed: %d", when, ret);
	} else {
		describe(&c, text, sizeof(text));
		check(live_objects(&c) == 0 && c.contexts == 1,
		      "%s: no live object left (%s)", when, text);
	}
	close(fd);
}

/* The lowest free fd number: shows whether an fd leaked or was installed. */
static int lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ---------------------------------------------------------------- abuse */
static void *map_page(int prot)
{
	void *p = mmap(NULL, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static void build_pd_create(struct msg *m, void *buf)
{
	msg_init(m, buf, 0);
	cmd(m, UABI_OBJ_PD, UABI_METHOD_CREATE, 0, 0);
	msg_end(m);
}

static void section_abuse(void)
{
	int fd = open_dev();
	struct uabi_ioctl io;
	struct msg m;
	uint8_t *none = map_page(PROT_NONE);
	uint8_t *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *ro;
	int64_t pd, cq;
	int ret, before;

	/* The ioctl argument itself. */
	check(ioctl(fd, _IOWR(0x1b, 2, struct uabi_ioctl), &io) < 0 &&
	      errno == ENOTTY, "unknown request code: ENOTTY");
	check(ioctl(fd, _IO(0x1b, 1)) < 0 && errno == ENOTTY,
	      "request code of another size: ENOTTY");
	check(ioctl(fd, UABI_IOCTL_EXECUTE, NULL) < 0 && errno == EFAULT,
	      "NULL ioctl argument: EFAULT");
	check(ioctl(fd, UABI_IOCTL_EXECUTE, none) < 0 && errno == EFAULT,
	      "unmapped ioctl argument: EFAULT");
	check(ioctl(fd, UABI_IOCTL_EXECUTE, (void *)0xffff888000000000ull) < 0 &&
	      errno == EFAULT, "kernel-address ioctl argument: EFAULT");

	build_pd_create(&m, scratch);
	io = (struct uabi_ioctl){ (uintptr_t)scratch, m.len, 1 };
	check(ioctl(fd, UABI_IOCTL_EXECUTE, &io) < 0 && errno == EINVAL,
	      "reserved field set: EINVAL");

	/* Lengths. */
	check(do_ioctl(fd, scratch, 0) == -EINVAL, "msg_len 0: EINVAL");
	check(do_ioctl(fd, scratch, 1) == -EINVAL, "msg_len 1: EINVAL");
	check(do_ioctl(fd, scratch, sizeof(struct uabi_msg_hdr) - 1) == -EINVAL,
	      "truncated message header: EINVAL");
	check(do_ioctl(fd, scratch, UABI_MAX_MSG_BYTES + 1) == -EINVAL,
	      "msg_len above UABI_MAX_MSG_BYTES: EINVAL");
	check(do_ioctl(fd, scratch, 0xffffffffu) == -EINVAL,
	      "msg_len 0xffffffff: EINVAL");
	check(do_ioctl(fd, NULL, 0xffffffffu) == -EINVAL,
	      "huge msg_len with NULL pointer: EINVAL before any copy");

	/* The message pointer. */
	check(do_ioctl(fd, NULL, m.len) == -EFAULT, "NULL msg_ptr: EFAULT");
	check(do_ioctl(fd, none, m.len) == -EFAULT, "unmapped msg_ptr: EFAULT");
	check(do_ioctl(fd, (void *)0xffff888000000000ull, m.len) == -EFAULT,
	      "kernel-address msg_ptr: EFAULT");
	check(do_ioctl(fd, (void *)0x8000000000000000ull, m.len) == -EFAULT,
	      "non-canonical msg_ptr: EFAULT");
	/* A message whose tail runs into an unmapped page. */
	munmap(two + 4096, 4096);
	build_pd_create(&m, scratch);
	memcpy(two + 4096 - 16, scratch, 16);
	check(do_ioctl(fd, two + 4096 - 16, m.len) == -EFAULT,
	      "message crossing into an unmapped page: EFAULT");
	/* Readable but not writable: copied in and executed, the copy-out
	 * fails.  The PD exists until the context closes; an event queue
	 * created that way must not leave an fd behind. */
	ro = map_page(PROT_READ | PROT_WRITE);
	build_pd_create(&m, ro);
	mprotect(ro, 4096, PROT_READ);
	check(do_ioctl(fd, ro, m.len) == -EFAULT, "read-only message: EFAULT");
	mprotect(ro, 4096, PROT_READ | PROT_WRITE);
	msg_init(&m, ro, 0);
	cmd(&m, UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE, 0, 0);
	attr(&m, UABI_ATTR_EVQ_FD, UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, 4);
	msg_end(&m);
	mprotect(ro, 4096, PROT_READ);
	before = lowest_free_fd();
	check(do_ioctl(fd, ro, m.len) == -EFAULT,
	      "read-only message creating an event queue: EFAULT");
	check(lowest_free_fd() == before,
	      "no event queue fd installed when the copy-out failed");

	/* Malformed messages: the ioctl carries them, the core rejects. */
	build_pd_create(&m, scratch);
	hdr(&m)->magic ^= 1;
	check(run(fd, &m) == -EINVAL, "bad magic: status EINVAL");
	build_pd_create(&m, scratch);
	hdr(&m)->length += 8;
	check(do_ioctl(fd, scratch, m.len) == 0 && hdr(&m)->status == -EINVAL,
	      "msg_len below msg_hdr.length: status EINVAL");
	build_pd_create(&m, scratch);
	check(do_ioctl(fd, scratch, m.len + 8) == 0 &&
	      hdr(&m)->status == -EINVAL,
	      "msg_len above msg_hdr.length: status EINVAL");
	build_pd_create(&m, scratch);
	check(do_ioctl(fd, scratch, sizeof(struct uabi_msg_hdr)) == 0 &&
	      hdr(&m)->status == -EINVAL, "header only, count 1: status EINVAL");
	build_pd_create(&m, scratch);
	hdr(&m)->abi_version = 99;
	check(run(fd, &m) == -EPROTONOSUPPORT, "unknown ABI version: EPROTONOSUPPORT");
	build_pd_create(&m, scratch);
	hdr(&m)->count = 0;
	check(do_ioctl(fd, scratch, m.len) == 0 && hdr(&m)->status == -EINVAL,
	      "count 0: status EINVAL");
	build_pd_create(&m, scratch);
	hdr(&m)->count = 0xffff;
	check(do_ioctl(fd, scratch, m.len) == 0 && hdr(&m)->status == -EINVAL,
	      "count 65535: status EINVAL");
	build_pd_create(&m, scratch);
	hdr(&m)->count = 2;
	check(do_ioctl(fd, scratch, m.len) == 0 && hdr(&m)->status == -EINVAL,
	      "count beyond the commands present: status EINVAL");
	build_pd_create(&m, scratch);
	cmd_at(&m, 0)->length = 0xfffffff8u;
	check(do_ioctl(fd, scratch, m.len) == 0 && hdr(&m)->status == -EINVAL,
	      "command length past the message: status EINVAL");
	build_pd_create(&m, scratch);
	cmd_at(&m, 0)->num_attrs = 3;
	check(do_ioctl(fd, scratch, m.len) == 0 && hdr(&m)->status == -EINVAL,
	      "attributes announced but absent: status EINVAL");
	build_pd_create(&m, scratch);
	cmd_at(&m, 0)->object = 0x7fff;
	check(run(fd, &m) == -EPROTONOSUPPORT, "unknown object: EPROTONOSUPPORT");

	/* Wrong handles. */
	pd = create_simple(fd, UABI_OBJ_PD);
	check(pd > 0, "PD created: handle %lld", (long long)pd);
	check(destroy(fd, UABI_OBJ_PD, 0) == -ENOENT, "destroy handle 0: ENOENT");
	check(destroy(fd, UABI_OBJ_PD, 123456) == -ENOENT,
	      "destroy unknown handle: ENOENT");
	check(destroy(fd, UABI_OBJ_PD, 0xffffffffu) == -ENOENT,
	      "destroy handle 0xffffffff: ENOENT");
	check(destroy(fd, UABI_OBJ_CQ, (uint32_t)pd) == -EINVAL,
	      "PD handle used as a CQ: EINVAL");
	msg_init(&m, scratch, 0);
	cmd(&m, UABI_OBJ_CQ, UABI_METHOD_CREATE, 0, 0);
	attr_u32(&m, UABI_ATTR_CQ_CQE, 16);
	{
		uint32_t h = (uint32_t)pd;

		attr(&m, UABI_ATTR_CQ_CHANNEL, 0, &h, sizeof(h));
	}
	check(run(fd, &m) == -EINVAL, "PD handle given as a CQ's channel: EINVAL");
	msg_init(&m, scratch, 0);
	cmd(&m, UABI_OBJ_CQ, UABI_METHOD_CREATE, 0, 0);
	attr_u32(&m, UABI_ATTR_CQ_CQE, 16);
	cq = run(fd, &m) ? -1 : (int64_t)cmd_at(&m, 0)->out_handle;
	check(cq > 0, "CQ created");
	{
		/* Another context's handles mean nothing here. */
		int other = open_dev();

		check(destroy(other, UABI_OBJ_PD, (uint32_t)pd) == -ENOENT,
		      "another context's PD handle: ENOENT");
		close(other);
	}
	check(destroy(fd, UABI_OBJ_PD, (uint32_t)pd) == 0, "PD destroyed");
	check(destroy(fd, UABI_OBJ_PD, (uint32_t)pd) == -ENOENT,
	      "PD destroyed twice: ENOENT");
	check(destroy(fd, UABI_OBJ_CQ, (uint32_t)cq) == 0, "CQ destroyed");

	/* A bad fd attribute and an fd of another kind of file. */
	msg_init(&m, scratch, 0);
	cmd(&m, UABI_OBJ_XRCD, UABI_METHOD_CREATE, 0, 0);
	{
		int32_t bad = 9999;

		attr(&m, UABI_ATTR_XRCD_FD, UABI_ATTR_F_FD, &bad, sizeof(bad));
	}
	attr_u32(&m, UABI_ATTR_XRCD_OFLAGS, UABI_XRCD_O_CREAT);
	check(run(fd, &m) == -EBADF, "XRCD on a closed fd: EBADF");
	msg_init(&m, scratch, 0);
	cmd(&m, UABI_OBJ_XRCD, UABI_METHOD_CREATE, 0, 0);
	{
		int32_t self = fd;

		attr(&m, UABI_ATTR_XRCD_FD, UABI_ATTR_F_FD, &self, sizeof(self));
	}
	attr_u32(&m, UABI_ATTR_XRCD_OFLAGS, UABI_XRCD_O_CREAT);
	ret = run(fd, &m);
	check(ret == 0, "XRCD keyed by the device file itself: %d", ret);
	if (!ret)
		check(destroy(fd, UABI_OBJ_XRCD, cmd_at(&m, 0)->out_handle) == 0,
		      "XRCD destroyed");

	/* What the device does not do (yet). */
	check(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED &&
	      errno == ENODEV, "mmap: ENODEV");
	{
		char b[8];

		check(read(fd, b, sizeof(b)) < 0, "read on the device fails");
		check(write(fd, b, sizeof(b)) < 0, "write on the device fails");
	}

	munmap(none, 4096);
	munmap(two, 4096);
	munmap(ro, 4096);
	close(fd);
	check_device_empty("abuse");
}

/* ----------------------------------------------------------------- fuzz */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Memory the MRs register: it must be mapped in this process (EFAULT
 * otherwise, as pinning fails in Linux). */
static uint8_t mr_buf[1 << 16] __attribute__((aligned(4096)));

/* PD, channel, CQ, MR, QP, queries and destroys, chained by reference. */
static void build_chain(struct msg *m, void *buf)
{
	struct uabi_mr_reg reg = { .addr = (uintptr_t)mr_buf, .length = 4096,
				   .iova = 0x10000, .access = 1 };
	struct uabi_qp_init init = { .cap = { 4, 4, 1, 1, 0, 0 },
				     .qp_type = UABI_QPT_RC };
	uint32_t ref;

	msg_init(m, buf, rnd() & 1 ? UABI_MSG_F_ALL_OR_NOTHING : 0);
	cmd(m, UABI_OBJ_PD, UABI_METHOD_CREATE, 0, 0);			/* 0 */
	cmd(m, UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE, 0, 0);	/* 1 */
	attr(m, UABI_ATTR_EVQ_FD, UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, 4);
	cmd(m, UABI_OBJ_CQ, UABI_METHOD_CREATE, 0, 0);			/* 2 */
	attr_u32(m, UABI_ATTR_CQ_CQE, 8);
	ref = 1;
	attr(m, UABI_ATTR_CQ_CHANNEL, UABI_ATTR_F_CHAIN_REF, &ref, 4);
	attr_u64(m, UABI_ATTR_CQ_USER_HANDLE, 0x1234);
	attr_out(m, UABI_ATTR_CQ_RESP, sizeof(struct uabi_cq_resp));
	cmd(m, UABI_OBJ_MR, UABI_METHOD_CREATE, 0, 0);			/* 3 */
	ref = 0;
	attr(m, UABI_ATTR_MR_PD, UABI_ATTR_F_CHAIN_REF, &ref, 4);
	attr(m, UABI_ATTR_MR_REG, 0, &reg, sizeof(reg));
	attr_out(m, UABI_ATTR_MR_KEYS, sizeof(struct uabi_mr_keys));
	cmd(m, UABI_OBJ_QP, UABI_METHOD_CREATE, 0, 0);			/* 4 */
	ref = 0;
	attr(m, UABI_ATTR_QP_PD, UABI_ATTR_F_CHAIN_REF, &ref, 4);
	ref = 2;
	attr(m, UABI_ATTR_QP_SEND_CQ, UABI_ATTR_F_CHAIN_REF, &ref, 4);
	attr(m, UABI_ATTR_QP_RECV_CQ, UABI_ATTR_F_CHAIN_REF, &ref, 4);
	attr(m, UABI_ATTR_QP_INIT, 0, &init, sizeof(init));
	attr_out(m, UABI_ATTR_QP_RESP, sizeof(struct uabi_qp_resp));
	cmd(m, UABI_OBJ_QP, UABI_METHOD_QUERY, 4, UABI_CMD_F_HANDLE_REF); /* 5 */
	attr_out(m, UABI_ATTR_QP_ATTR, sizeof(struct uabi_qp_attr));
	cmd(m, UABI_OBJ_DEVICE, UABI_DEVICE_COUNTERS, 0, 0);		/* 6 */
	attr_out(m, UABI_ATTR_DEVICE_COUNTERS, sizeof(struct uabi_counters));
	if (rnd() & 1) {
		cmd(m, UABI_OBJ_QP, UABI_METHOD_DESTROY, 4, UABI_CMD_F_HANDLE_REF);
		cmd(m, UABI_OBJ_MR, UABI_METHOD_DESTROY, 3, UABI_CMD_F_HANDLE_REF);
	}
	msg_end(m);
}

static void close_fds_above(int keep)
{
	int fd;

	for (fd = keep + 1; fd < keep + 4096; fd++)
		close(fd);
}

static void section_fuzz(void)
{
	const char *env = getenv("UABI_ABUSE_FUZZ_ITERS");
	long iters = env ? atol(env) : 20000, i;
	long ok = 0, rejected = 0, other = 0;
	uint8_t *buf = (uint8_t *)scratch;
	int fd = open_dev();
	struct msg m;

	for (i = 0; i < iters; i++) {
		uint32_t len, n, k;
		int ret;

		build_chain(&m, buf);
		len = m.len;
		n = 1 + rnd() % 8;
		for (k = 0; k < n; k++) {
			switch (rnd() % 6) {
			case 0: /* flip a byte anywhere */
				buf[rnd() % len] ^= (uint8_t)(1 + rnd() % 255);
				break;
			case 1: /* a random 32-bit word at an aligned offset */
				((uint32_t *)buf)[rnd() % (len / 4)] = (uint32_t)rnd();
				break;
			case 2: /* a small word: handles, counts, lengths */
				((uint32_t *)buf)[rnd() % (len / 4)] = rnd() % 70;
				break;
			case 3: /* truncate, keeping the header's length */
				len = sizeof(struct uabi_msg_hdr) +
				      rnd() % (len - sizeof(struct uabi_msg_hdr) + 1);
				break;
			case 4: /* truncate and fix the header */
				len = sizeof(struct uabi_msg_hdr) +
				      8 * (rnd() % ((len - sizeof(struct uabi_msg_hdr)) / 8 + 1));
				hdr(&m)->length = len;
				break;
			default: /* 16-bit fields: object, method, ids, flags */
				((uint16_t *)buf)[rnd() % (len / 2)] = (uint16_t)rnd();
				break;
			}
		}
		ret = do_ioctl(fd, buf, len);
		if (ret) {
			other++;
			if (other < 5)
				printf("# fuzz %ld: ioctl failed: %d\n", i, ret);
		} else if (hdr(&m)->status == 0) {
			ok++;
		} else {
			rejected++;
		}
		if (i % 256 == 255) {
			/* Start over now and then: objects and fds pile up. */
			close(fd);
			close_fds_above(2);
			fd = open_dev();
		}
	}
	check(other == 0, "fuzz: %ld messages, %ld executed, %ld rejected, "
	      "%ld ioctl failures", iters, ok, rejected, other);
	close(fd);
	close_fds_above(2);
	check_device_empty("fuzz");
}

/* -------------------------------------------------------------- threads */
struct racer {
	int fd;
	int iters;
	int unexpected;
	unsigned int seed;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	uint64_t buf[64];
	struct msg m;
	int i;

	for (i = 0; i < r->iters; i++) {
		uint32_t h = 1 + rand_r(&r->seed) % 48;
		int ret;

		msg_init(&m, buf, 0);
		switch (rand_r(&r->seed) % 4) {
		case 0:
		case 1:
			cmd(&m, UABI_OBJ_PD, UABI_METHOD_CREATE, 0, 0);
			break;
		case 2:
			cmd(&m, UABI_OBJ_PD, UABI_METHOD_DESTROY, h, 0);
			break;
		default:
			cmd(&m, UABI_OBJ_MR, UABI_METHOD_CREATE, 0, 0);
			attr(&m, UABI_ATTR_MR_PD, 0, &h, 4);
			{
				struct uabi_mr_reg reg = { .addr = (uintptr_t)mr_buf,
							   .length = 4096,
							   .iova = 4096 };

				attr(&m, UABI_ATTR_MR_REG, 0, &reg, sizeof(reg));
			}
			break;
		}
		ret = run(r->fd, &m);
		/* Racing on shared handles: anything but these is a bug. */
		if (ret && ret != -ENOENT && ret != -EBUSY && ret != -EINVAL)
			r->unexpected++;
	}
	return NULL;
}

static void section_threads(void)
{
	struct racer r[2];
	pthread_t t[2];
	int fd = open_dev(), i;

	for (i = 0; i < 2; i++) {
		r[i] = (struct racer){ .fd = fd, .iters = 3000, .seed = 7u + i };
		pthread_create(&t[i], NULL, race, &r[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	check(r[0].unexpected + r[1].unexpected == 0,
	      "two threads racing creates and destroys: no unexpected status");
	close(fd);
	check_device_empty("threads");
}

/* ------------------------------------------------------------------ evq */
static int poll_mask(int efd, int timeout_ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	return n < 0 ? -errno : n == 0 ? 0 : p.revents;
}

struct poller {
	int efd;
	int revents;
	double waited;
	int tid;	/* the polling thread, once it runs */
};

/* Waits (at most 10 s) until task @tid of process @pid sleeps in poll(2)
 * or ppoll(2), as /proc/PID/task/TID/syscall shows ("running" while it
 * runs): what a test waits for before it acts on a blocked poller, rather
 * than sleeping and hoping. */
static int wait_blocked_in_poll(int pid, int tid)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	for (i = 0; i < 100000; i++) {
		FILE *f = fopen(path, "re");
		long nr = -1;

		if (f) {
			if (fscanf(f, "%ld", &nr) != 1)
				nr = -1;
			fclose(f);
		}
		if (nr == SYS_poll || nr == SYS_ppoll)
			return 1;
		usleep(100);
	}
	return 0;
}

/* Starts a thread blocked in poll() on @p->efd; returns once it is. */
static void start_poller(pthread_t *t, struct poller *p);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	double t0 = now();

	__atomic_store_n(&p->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	p->revents = poll_mask(p->efd, 20000);
	p->waited = now() - t0;
	return NULL;
}

static void start_poller(pthread_t *t, struct poller *p)
{
	int tid;

	pthread_create(t, NULL, poll_thread, p);
	while (!(tid = __atomic_load_n(&p->tid, __ATOMIC_ACQUIRE)))
		sched_yield();
	check(wait_blocked_in_poll(getpid(), tid), "the poller is blocked in poll()");
}

static void section_evq(void)
{
	int fd = open_dev();
	struct uabi_event ev;
	struct poller pl;
	pthread_t t;
	int64_t q;
	int efd = -1, ret;

	q = create_evq(fd, UABI_OBJ_ASYNC_EVENT, &efd);
	check(q > 0 && efd >= 0, "async event queue created, fd %d", efd);
	check(fcntl(efd, F_GETFD) == FD_CLOEXEC, "event fd is close-on-exec");
	check(poll_mask(efd, 0) == 0, "empty queue: not readable");

	check(set_port_state(fd, 1) == 0, "port 1 DOWN");
	check(poll_mask(efd, 0) == POLLIN, "event pending: readable");
	ret = get_event(fd, (uint32_t)q, &ev);
	check(ret == 0 && ev.event_type == 10 && ev.element == 1,
	      "GET_EVENT: PORT_ERR on port 1");
	check(poll_mask(efd, 0) == 0, "queue drained: not readable");
	check(get_event(fd, (uint32_t)q, &ev) == -EAGAIN, "empty queue: EAGAIN");

	/* A blocked poll() is woken by an event... */
	pl = (struct poller){ .efd = efd };
	start_poller(&t, &pl);
	check(set_port_state(fd, 4) == 0, "port 1 ACTIVE");
	pthread_join(t, NULL);
	check(pl.revents == POLLIN && pl.waited < 10,
	      "blocked poll woken by the event (%.2fs)", pl.waited);
	check(get_event(fd, (uint32_t)q, &ev) == 0 && ev.event_type == 9,
	      "GET_EVENT: PORT_ACTIVE");

	/* ...and by the object's destruction; the fd outlives the object. */
	pl = (struct poller){ .efd = efd };
	start_poller(&t, &pl);
	check(destroy(fd, UABI_OBJ_ASYNC_EVENT, (uint32_t)q) == 0,
	      "event queue destroyed, fd still open");
	pthread_join(t, NULL);
	check(pl.revents == POLLHUP && pl.waited < 10,
	      "blocked poll woken by DESTROY with POLLHUP");
	check(set_port_state(fd, 1) == 0 && set_port_state(fd, 4) == 0,
	      "events raised with no queue left");
	check(poll_mask(efd, 0) == POLLHUP, "orphan fd: POLLHUP, never readable");
	check(close(efd) == 0, "orphan fd closed");

	/* The object outlives its fd. */
	q = create_evq(fd, UABI_OBJ_ASYNC_EVENT, &efd);
	check(q > 0, "second async event queue");
	check(close(efd) == 0, "its fd closed first");
	check(set_port_state(fd, 1) == 0 && set_port_state(fd, 4) == 0,
	      "events raised after the fd closed");
	check(get_event(fd, (uint32_t)q, &ev) == 0 && ev.event_type == 10,
	      "GET_EVENT still works without the fd");
	check(destroy(fd, UABI_OBJ_ASYNC_EVENT, (uint32_t)q) == 0,
	      "queue destroyed after its fd");

	/* The context closes under an open event fd. */
	q = create_evq(fd, UABI_OBJ_COMP_CHANNEL, &efd);
	check(q > 0, "completion channel created, fd %d", efd);
	close(fd);
	check(poll_mask(efd, 0) == POLLHUP,
	      "context closed: its channel's fd reports POLLHUP");
	close(efd);

	/* An event queue created and destroyed by one message gets no fd. */
	fd = open_dev();
	{
		struct msg m;
		int before = lowest_free_fd();

		msg_init(&m, scratch, 0);
		cmd(&m, UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE, 0, 0);
		attr(&m, UABI_ATTR_EVQ_FD, UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD,
		     NULL, 4);
		cmd(&m, UABI_OBJ_COMP_CHANNEL, UABI_METHOD_DESTROY, 0,
		    UABI_CMD_F_HANDLE_REF);
		check(run(fd, &m) == 0, "channel created and destroyed in one message");
		check(lowest_free_fd() == before, "...and no fd installed for it");

		/* An all-or-nothing message that fails: rolled back, no fd. */
		msg_init(&m, scratch, UABI_MSG_F_ALL_OR_NOTHING);
		cmd(&m, UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE, 0, 0);
		attr(&m, UABI_ATTR_EVQ_FD, UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD,
		     NULL, 4);
		cmd(&m, UABI_OBJ_CQ, UABI_METHOD_QUERY, 4242, 0);
		attr_out(&m, UABI_ATTR_CQ_RESP, sizeof(struct uabi_cq_resp));
		check(run(fd, &m) == -ENOENT && hdr(&m)->executed == 1,
		      "all-or-nothing message failing after a channel was made");
		check(lowest_free_fd() == before, "...and leaves no fd behind");
	}
	close(fd);
	check_device_empty("evq");
}

/* ----------------------------------------------------------------- kill */

static int child_make_objects(int wfd)
{
	struct uabi_mr_reg reg = { .addr = (uintptr_t)mr_buf,
				   .length = sizeof(mr_buf),
				   .iova = (uintptr_t)mr_buf, .access = 1 };
	struct uabi_qp_init init = { .cap = { 16, 16, 1, 1, 0, 0 },
				     .qp_type = UABI_QPT_RC };
	struct uabi_srq_init sinit = { .attr = { 16, 1, 0, 0 } };
	int fd = open_dev(), k, efd = -1;
	uint32_t ref, made = 0, efd_off = 0;
	struct msg m;

	/* Two rounds, the second while another context of this process
	 * (a second open) holds objects too. */
	for (k = 0; k < 2; k++) {
		if (k)
			fd = open_dev();
		msg_init(&m, scratch, UABI_MSG_F_ALL_OR_NOTHING);
		cmd(&m, UABI_OBJ_PD, UABI_METHOD_CREATE, 0, 0);		 /* 0 */
		cmd(&m, UABI_OBJ_COMP_CHANNEL, UABI_METHOD_CREATE, 0, 0); /* 1 */
		attr(&m, UABI_ATTR_EVQ_FD, UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD,
		     NULL, 4);
		cmd(&m, UABI_OBJ_CQ, UABI_METHOD_CREATE, 0, 0);		 /* 2 */
		attr_u32(&m, UABI_ATTR_CQ_CQE, 64);
		ref = 1;
		attr(&m, UABI_ATTR_CQ_CHANNEL, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		cmd(&m, UABI_OBJ_MR, UABI_METHOD_CREATE, 0, 0);		 /* 3 */
		ref = 0;
		attr(&m, UABI_ATTR_MR_PD, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		attr(&m, UABI_ATTR_MR_REG, 0, &reg, sizeof(reg));
		cmd(&m, UABI_OBJ_SRQ, UABI_METHOD_CREATE, 0, 0);	 /* 4 */
		attr(&m, UABI_ATTR_SRQ_PD, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		attr(&m, UABI_ATTR_SRQ_INIT, 0, &sinit, sizeof(sinit));
		cmd(&m, UABI_OBJ_QP, UABI_METHOD_CREATE, 0, 0);		 /* 5 */
		attr(&m, UABI_ATTR_QP_PD, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		ref = 2;
		attr(&m, UABI_ATTR_QP_SEND_CQ, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		attr(&m, UABI_ATTR_QP_RECV_CQ, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		attr(&m, UABI_ATTR_QP_INIT, 0, &init, sizeof(init));
		cmd(&m, UABI_OBJ_AH, UABI_METHOD_CREATE, 0, 0);		 /* 6 */
		ref = 0;
		attr(&m, UABI_ATTR_AH_PD, UABI_ATTR_F_CHAIN_REF, &ref, 4);
		{
			struct uabi_ah_attr ah = { .dlid = 1, .port_num = 1 };

			attr(&m, UABI_ATTR_AH_ATTR, 0, &ah, sizeof(ah));
		}
		cmd(&m, UABI_OBJ_XRCD, UABI_METHOD_CREATE, 0, 0);	 /* 7 */
		{
			int32_t none = -1;

			attr(&m, UABI_ATTR_XRCD_FD, UABI_ATTR_F_FD, &none, 4);
		}
		cmd(&m, UABI_OBJ_ASYNC_EVENT, UABI_METHOD_CREATE, 0, 0); /* 8 */
		efd_off = attr(&m, UABI_ATTR_EVQ_FD,
			       UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, 4);
		if (run(fd, &m)) {
			fprintf(stderr, "child: chain failed: status %d at %u (%d)\n",
				hdr(&m)->status, hdr(&m)->failed_index,
				cmd_at(&m, hdr(&m)->failed_index)->status);
			return 1;
		}
		made += hdr(&m)->executed;
		memcpy(&efd, m.buf + efd_off, sizeof(efd));
	}
	if (write(wfd, &made, sizeof(made)) != sizeof(made))
		return 1;
	/* Wait to be killed, blocked in poll() on the async event queue. */
	for (;;) {
		struct pollfd p = { .fd = efd, .events = POLLIN };

		poll(&p, 1, -1);
		usleep(1000);
	}
}

static void section_kill(void)
{
	struct uabi_counters c;
	char text[256];
	int pipefd[2], fd, status = 0;
	uint32_t made = 0;
	pid_t pid;

	if (pipe(pipefd)) {
		perror("pipe");
		exit(2);
	}
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		_exit(child_make_objects(pipefd[1]));
	}
	close(pipefd[1]);
	if (read(pipefd[0], &made, sizeof(made)) != sizeof(made))
		made = 0;
	check(made == 18, "child created %u objects in two contexts", made);
	close(pipefd[0]);

	fd = open_dev();
	check(counters(fd, &c) == 0, "COUNTERS from a fresh context");
	describe(&c, text, sizeof(text));
	check(live_objects(&c) == made && c.contexts == 3,
	      "the child's objects are live: %s", text);
	check(c.device[UABI_OBJ_PD] == 2 && c.device[UABI_OBJ_MR] == 2 &&
	      c.device[UABI_OBJ_CQ] == 2 && c.device[UABI_OBJ_QP] == 2,
	      "two each of PD, MR, CQ, QP");
	close(fd);

	/* Killed while it sleeps in poll() on its event queue. */
	check(wait_blocked_in_poll(pid, pid), "the child is blocked in poll()");
	kill(pid, SIGKILL);
	check(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	      WTERMSIG(status) == SIGKILL, "child SIGKILLed");
	check_device_empty("after SIGKILL");
}

/* ----------------------------------------------------------------- main */
/* ---------------------------------------------------------------- arena */
/* UABI_SW_ARENA_MAP, optionally followed by a command that fails (PD
 * destroy of a handle that does not exist).  Returns the message status;
 * *afd and *rwfd get the fd attributes (read-only and writable part),
 * *st0 the first command's status. */
static int arena_map(int fd, uint32_t flags, int then_fail, int *afd, int *rwfd,
		     struct uabi_sw_arena_info *info, int32_t *st0)
{
	struct msg m;
	uint32_t off_fd, off_rw, off_info;
	int ret;

	msg_init(&m, scratch, flags);
	cmd(&m, UABI_SW_OBJ_ARENA, UABI_SW_ARENA_MAP, 0, 0);
	off_fd = attr(&m, UABI_SW_ATTR_ARENA_FD,
		      UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, sizeof(int32_t));
	off_rw = attr(&m, UABI_SW_ATTR_ARENA_RW_FD,
		      UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, sizeof(int32_t));
	off_info = attr_out(&m, UABI_SW_ATTR_ARENA_INFO, sizeof(*info));
	if (then_fail)
		cmd(&m, UABI_OBJ_PD, UABI_METHOD_DESTROY, 0x7ffffff0u, 0);
	ret = run(fd, &m);
	memcpy(afd, m.buf + off_fd, sizeof(*afd));
	memcpy(rwfd, m.buf + off_rw, sizeof(*rwfd));
	if (info)
		memcpy(info, m.buf + off_info, sizeof(*info));
	*st0 = cmd_at(&m, 0)->status;
	return ret;
}

/* The read-only part maps only read-only, whatever is tried. */
static void check_read_only_part(int afd, size_t size)
{
	uint8_t *p;

	check(mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0) == MAP_FAILED &&
	      errno == EACCES, "read-only part: PROT_WRITE mapping refused (EACCES)");
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, afd, 0);
	check(p != MAP_FAILED, "read-only part maps PROT_READ");
	if (p != MAP_FAILED) {
		check(mprotect(p, size, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
		      "read-only part: mprotect to PROT_WRITE refused (EACCES)");
		munmap(p, size);
	}
	check(write(afd, "x", 1) < 0 && errno == EBADF, "read-only part: write(2) refused");
}

static void section_arena(void)
{
	struct uabi_sw_arena_info info;
	int fd = open_dev(), fd2, afd, rwfd, afd2, rwfd2, free_fd, ret;
	int32_t st0;
	uint8_t *p, *q, *ro = MAP_FAILED;
	size_t size;

	free_fd = lowest_free_fd();
	ret = arena_map(fd, 0, 0, &afd, &rwfd, &info, &st0);
	check(ret == 0 && afd == free_fd && rwfd == free_fd + 1,
	      "ARENA_MAP: %d, fds %d %d (expected %d %d)", ret, afd, rwfd, free_fd,
	      free_fd + 1);
	if (ret) {
		close(fd);
		return;
	}
	check((fcntl(afd, F_GETFD) & FD_CLOEXEC) != 0 && (fcntl(rwfd, F_GETFD) & FD_CLOEXEC) != 0,
	      "arena fds are O_CLOEXEC");
	check(info.magic == UABI_SW_ARENA_MAGIC && info.version == UABI_SW_ARENA_VERSION &&
	      info.ro_size && info.ro_size % 4096 == 0 && info.rw_size % 4096 == 0 &&
	      info.heap_off + info.heap_size <= info.rw_size && info.uid == getuid(),
	      "arena info: magic %#x, sizes %llu + %llu, uid %u", info.magic,
	      (unsigned long long)info.ro_size, (unsigned long long)info.rw_size, info.uid);
	check_read_only_part(afd, info.ro_size);
	ro = mmap(NULL, info.ro_size, PROT_READ, MAP_SHARED, afd, 0);
	if (ro != MAP_FAILED)
		check(!memcmp(ro, &info, sizeof(info)),
		      "the read-only part starts with the layout");
	size = info.rw_size;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, rwfd, 0);
	check(p != MAP_FAILED, "mmap of the whole writable part, MAP_SHARED rw");
	check(mmap(NULL, size, PROT_READ, MAP_PRIVATE, rwfd, 0) == MAP_FAILED &&
	      errno == EINVAL, "MAP_PRIVATE: EINVAL");
	check(mmap(NULL, size + 4096, PROT_READ, MAP_SHARED, rwfd, 0) ==
	      MAP_FAILED && errno == EINVAL, "mmap past the end: EINVAL");
	check(mmap(NULL, 4096, PROT_READ, MAP_SHARED, rwfd, (off_t)size) ==
	      MAP_FAILED && errno == EINVAL, "mmap at offset size: EINVAL");
	check(mmap(NULL, 8192, PROT_READ, MAP_SHARED, rwfd, (off_t)size - 4096) ==
	      MAP_FAILED && errno == EINVAL, "mmap straddling the end: EINVAL");
	q = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rwfd, (off_t)size - 4096);
	check(q != MAP_FAILED, "mmap of the last page");
	if (q != MAP_FAILED) {
		if (p != MAP_FAILED)
			check(!memcmp(q, p + size - 4096, 4096),
			      "last page mapped at its offset");
		check(mremap(q, 4096, 8192, MREMAP_MAYMOVE) == MAP_FAILED,
		      "mremap cannot grow the mapping");
		munmap(q, 4096);
	}

	/* A second context of the same user maps the same arena. */
	fd2 = open_dev();
	ret = arena_map(fd2, 0, 0, &afd2, &rwfd2, NULL, &st0);
	check(ret == 0, "ARENA_MAP from a second context: %d", ret);
	if (!ret) {
		q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rwfd2, 0);
		check(q != MAP_FAILED, "second context maps the writable header");
		if (q != MAP_FAILED && p != MAP_FAILED) {
			/* The header's first page tail: unused by the layout. */
			p[4095] ^= 0x5a;
			check(q[4095] == p[4095], "both mappings share pages");
			p[4095] ^= 0x5a;
		}
		if (q != MAP_FAILED)
			munmap(q, 4096);
		close(afd2);
		close(rwfd2);
	}
	close(fd2);

	/* No fd leaked by a message that fails or is rolled back. */
	free_fd = lowest_free_fd();
	ret = arena_map(fd, UABI_MSG_F_ALL_OR_NOTHING, 1, &afd2, &rwfd2, NULL, &st0);
	check(ret != 0 && lowest_free_fd() == free_fd,
	      "all-or-nothing ARENA_MAP then failure: %d, no fd installed", ret);
	ret = arena_map(fd, 0, 1, &afd2, &rwfd2, NULL, &st0);
	if (st0 == 0) {
		check(ret != 0 && afd2 == free_fd && rwfd2 == free_fd + 1 &&
		      fcntl(afd2, F_GETFD) >= 0 && lowest_free_fd() == free_fd + 2,
		      "ARENA_MAP that succeeded before a failure keeps its fds %d %d",
		      afd2, rwfd2);
		close(afd2);
		close(rwfd2);
	} else {
		check(lowest_free_fd() == free_fd,
		      "ARENA_MAP not run (%d): no fd installed", st0);
	}
	{
		/* A bad output pointer: the message is not copied back. */
		struct msg m;

		msg_init(&m, scratch, 0);
		cmd(&m, UABI_SW_OBJ_ARENA, UABI_SW_ARENA_MAP, 0, 0);
		attr(&m, UABI_SW_ATTR_ARENA_FD,
		     UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, sizeof(int32_t));
		attr(&m, UABI_SW_ATTR_ARENA_RW_FD,
		     UABI_ATTR_F_OUTPUT | UABI_ATTR_F_FD, NULL, sizeof(int32_t));
		msg_end(&m);
		{
			void *rom = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (rom != MAP_FAILED) {
				memcpy(rom, m.buf, m.len);
				mprotect(rom, 4096, PROT_READ);
				ret = do_ioctl(fd, rom, m.len);
				check(ret == -EFAULT && lowest_free_fd() == free_fd,
				      "read-only message: %d, no fd installed", ret);
				munmap(rom, 4096);
			}
		}
	}

	/* The mapping outlives the fd and the context. */
	close(afd);
	close(rwfd);
	close(fd);
	if (ro != MAP_FAILED) {
		check(!memcmp(ro, &info, sizeof(info)),
		      "mapping readable after its fd and context closed");
		munmap(ro, info.ro_size);
	}
	if (p != MAP_FAILED)
		munmap(p, size);
	check_device_empty("arena");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} sections[] = {
		{ "abuse", section_abuse },
		{ "fuzz", section_fuzz },
		{ "threads", section_threads },
		{ "evq", section_evq },
		{ "kill", section_kill },
		{ "arena", section_arena },
	};
	unsigned int i;
	int a, ran = 0;

	if (getenv("UABI_DEVICE"))
		dev_path = getenv("UABI_DEVICE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	check_device_empty("start");
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		int wanted = argc < 2;

		for (a = 1; a < argc; a++)
			wanted |= !strcmp(argv[a], sections[i].name);
		if (!wanted)
			continue;
		printf("# section %s\n", sections[i].name);
		sections[i].fn();
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "usage: %s [abuse|fuzz|threads|evq|kill|arena]...\n",
			argv[0]);
		return 2;
	}
	printf("ioctl_abuse: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
