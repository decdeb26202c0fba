// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The userspace host of the object core: used in-process and by uabid.
 * It supplies what differs from the kernel: the identity of an fd's file
 * (fstat in this process) and pollable event fds (eventfd).
 */
#include <uabi/core.h>
#include <uabi/host_user.h>
#include "../../drivers/sw/sw.h"

#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

static int user_file_identity(struct uabi_context *ctx, s32 fd,
			      struct uabi_file_id *id)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		return -EBADF;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

static int user_evq_open(struct uabi_context *ctx, void **wait, s32 *fd)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (efd < 0)
		return -errno;
	*fd = efd;
	*wait = (void *)(intptr_t)(efd + 1);	/* never NULL */
	return 0;
}

static int wait_fd(void *wait)
{
	return (int)(intptr_t)wait - 1;
}

static void user_evq_signal(void *wait)
{
	uint64_t one = 1;

	if (write(wait_fd(wait), &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, still readable */
	}
}

static void user_evq_drain(void *wait)
{
	uint64_t v;

	if (read(wait_fd(wait), &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing was pending */
	}
}

static void user_evq_release(void *wait)
{
	close(wait_fd(wait));
}

static const struct uabi_host_ops user_host_ops = {
	.file_identity = user_file_identity,
	.evq_open = user_evq_open,
	.evq_signal = user_evq_signal,
	.evq_drain = user_evq_drain,
	.evq_release = user_evq_release,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

static void do_init(void)
{
	struct uabi_device *dev = uabi_sw_create();

	init_result = IS_ERR(dev) ? (int)PTR_ERR(dev) : 0;
}

int uabi_user_init(void)
{
	pthread_once(&init_once, do_init);
	return init_result;
}

struct uabi_context *uabi_user_open(const struct uabi_user_peer *peer)
{
	struct uabi_peer p;
	struct uabi_device *dev;
	struct uabi_context *ctx;
	int ret = uabi_user_init();

	if (ret) {
		errno = -ret;
		return NULL;
	}
	dev = uabi_device_get(0);
	if (!dev) {
		errno = ENODEV;
		return NULL;
	}
	if (peer) {
		p.pid = peer->pid;
		p.uid = peer->uid;
		p.gid = peer->gid;
	} else {
		p.pid = getpid();
		p.uid = getuid();
		p.gid = getgid();
	}
	ctx = uabi_context_open(dev, &user_host_ops, NULL, &p);
	if (IS_ERR(ctx)) {
		errno = (int)-PTR_ERR(ctx);
		return NULL;
	}
	return ctx;
}

int uabi_user_execute(struct uabi_context *ctx, void *msg, size_t len)
{
	return uabi_execute(ctx, msg, len);
}

void uabi_user_close(struct uabi_context *ctx)
{
	if (ctx)
		uabi_context_close(ctx);
}
