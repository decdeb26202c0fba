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
 * and arena fds created by the message are reserved, not installed: they
 * reach the caller's fd table only once the message has been copied back,
 * so a failed or rolled-back command, or a bad output pointer, leaves no
 * stray fd behind.  new_fds and new_files are touched only by the ioctl's
 * own task.
 */
struct uabi_kcall {
	struct list_head node;		/* uabi_kfile.calls */
	struct task_struct *task;
	const struct uabi_msg_hdr *msg;	/* the kernel copy being executed */
	struct list_head new_fds;	/* struct uabi_kwait.call_node */
	struct list_head new_files;	/* struct uabi_kfd.node */
};

void uabi_kcall_begin(struct uabi_kfile *kf, struct uabi_kcall *call,
		      const struct uabi_msg_hdr *msg);
/* Installs the reserved fds when @install, else gives them back. */
void uabi_kcall_end(struct uabi_kfile *kf, struct uabi_kcall *call,
		    bool install);
/*
 * Reserves an fd in the caller's table for @file, a file of no core object
 * (the arena), from a handler running in UABI_IOCTL_EXECUTE.  Takes over
 * the caller's reference to @file, also on failure.  uabi_kcall_end()
 * installs it only if the command that reserved it succeeded and was not
 * rolled back (it ran before msg_hdr.executed, and an all-or-nothing
 * message succeeded as a whole).
 */
int uabi_kcall_reserve_file(struct uabi_context *ctx, struct file *file,
			    s32 *fd);

/* The arena memory (shm.c). */
extern const struct uabi_shm_ops uabi_kshm_ops;

/* Event queue fds (evq.c). */
int uabi_kevq_open(struct uabi_context *ctx, void **wait, s32 *fd);
void uabi_kevq_signal(void *wait);
void uabi_kevq_drain(void *wait);
void uabi_kevq_release(void *wait);
/* Wait objects still allocated; must be 0 at module exit. */
int uabi_kevq_live(void);

#endif /* UABI_LINUX_HOST_H */
