/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The Linux host of the object core (rdma_uabi.ko): what main.c and evq.c
 * share.  Only this directory includes Linux headers beyond <uabi/port.h>.
 */
#ifndef UABI_LINUX_HOST_H
#define UABI_LINUX_HOST_H

#include <uabi/core.h>

#include <linux/file.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

/*
 * One open /dev/rdma_uabi: its context and the ioctls running on it.
 * The VFS guarantees that ->release runs only after every ioctl on the
 * file returned (each holds a file reference), which is the core's rule
 * for uabi_context_close().
 */
struct uabi_kfile {
	struct uabi_context *ctx;
	spinlock_t calls_lock;		/* protects calls */
	struct list_head calls;		/* struct uabi_kcall, one per ioctl */
};

/*
 * One UABI_IOCTL_EXECUTE in progress, on the ioctl's stack.  Event queue
 * fds created by the message are reserved, not installed: they reach the
 * caller's fd table only once the message has been copied back, so a
 * failed or rolled-back command, or a bad output pointer, leaves no stray
 * fd behind.  new_fds is touched only by the ioctl's own task.
 */
struct uabi_kcall {
	struct list_head node;		/* uabi_kfile.calls */
	struct task_struct *task;
	struct list_head new_fds;	/* struct uabi_kwait.call_node */
};

void uabi_kcall_begin(struct uabi_kfile *kf, struct uabi_kcall *call);
/* Installs the reserved fds when @install, else gives them back. */
void uabi_kcall_end(struct uabi_kfile *kf, struct uabi_kcall *call,
		    bool install);

/* Event queue fds (evq.c). */
int uabi_kevq_open(struct uabi_context *ctx, void **wait, s32 *fd);
void uabi_kevq_signal(void *wait);
void uabi_kevq_drain(void *wait);
void uabi_kevq_release(void *wait);
/* Wait objects still allocated; must be 0 at module exit. */
int uabi_kevq_live(void);

#endif /* UABI_LINUX_HOST_H */
