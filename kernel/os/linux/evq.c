// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Event queue fds of the kernel host: one anonymous-inode file per
 * completion channel or async event queue, which poll() reports readable
 * (EPOLLIN) while the queue holds events.
 *
 * Lifetime: the event queue object (the core's) and the file (the user's)
 * each hold a reference on the shared struct uabi_kwait, and whichever goes
 * last frees it.  So the fd may outlive the object (the queue was destroyed,
 * or its context closed, but the fd is still open: poll() then reports
 * EPOLLHUP and never blocks) and the object may outlive the fd (the fd was
 * closed: events still queue and GET_EVENT still works).  Each file also
 * pins the module (fops.owner), so rmmod waits for the last fd.
 *
 * Locking: ->pending is written by uabi_kevq_signal/drain, which the core
 * calls under the queue's spinlock (so they never sleep and keep the order
 * of the queue); ->dead is written once, by the object's release.  poll
 * reads both locklessly after poll_wait(): the waitqueue's lock orders a
 * write + wake_up against a concurrent poll_wait + read.
 */
#include "linux_host.h"

#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/poll.h>
#include <linux/wait.h>

struct uabi_kwait {
	struct kref ref;		/* the object's and the file's */
	wait_queue_head_t wq;
	bool pending;			/* the queue holds events */
	bool dead;			/* the object is gone */
	/* Reserved fd and its file until installed (struct uabi_kcall). */
	struct list_head call_node;
	struct file *file;
	int fd;
};

static atomic_t kwait_live = ATOMIC_INIT(0);

int uabi_kevq_live(void)
{
	return atomic_read(&kwait_live);
}

static void kwait_free(struct kref *ref)
{
	kfree(container_of(ref, struct uabi_kwait, ref));
	atomic_dec(&kwait_live);
}

static __poll_t kevq_poll(struct file *file, poll_table *pt)
{
	struct uabi_kwait *w = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &w->wq, pt);
	if (READ_ONCE(w->pending))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(w->dead))
		mask |= EPOLLHUP;
	return mask;
}

static int kevq_file_release(struct inode *inode, struct file *file)
{
	struct uabi_kwait *w = file->private_data;

	kref_put(&w->ref, kwait_free);
	return 0;
}

static const struct file_operations kevq_fops = {
	.owner = THIS_MODULE,
	.poll = kevq_poll,
	.release = kevq_file_release,
	.llseek = noop_llseek,
};

/* A reserved fd of a file that belongs to no core object (the arena). */
struct uabi_kfd {
	struct list_head node;		/* uabi_kcall.new_files */
	struct file *file;
	int fd;
	u32 cmd;			/* index of the command that made it */
};

void uabi_kcall_begin(struct uabi_kcall *call, const struct uabi_msg_hdr *msg)
{
	call->msg = msg;
	INIT_LIST_HEAD(&call->new_fds);
	INIT_LIST_HEAD(&call->new_files);
}

void uabi_kcall_end(struct uabi_kcall *call, bool install)
{
	const struct uabi_msg_hdr *m = call->msg;
	bool undone = m->status && (m->flags & UABI_MSG_F_ALL_OR_NOTHING);
	struct uabi_kwait *w, *next;
	struct uabi_kfd *kfd, *knext;

	/* Files of no object: kept only if their command succeeded (the
	 * first msg_hdr.executed commands did) and was not rolled back. */
	list_for_each_entry_safe(kfd, knext, &call->new_files, node) {
		list_del(&kfd->node);
		if (install && !undone && kfd->cmd < m->executed) {
			fd_install(kfd->fd, kfd->file);
		} else {
			put_unused_fd(kfd->fd);
			fput(kfd->file);
		}
		kfree(kfd);
	}

	list_for_each_entry_safe(w, next, &call->new_fds, call_node) {
		struct file *file = w->file;
		int fd = w->fd;

		list_del_init(&w->call_node);
		w->file = NULL;
		/* A queue that the same message (or a rollback) already
		 * destroyed gets no fd, as its fd would be closed by now in
		 * the userspace host. */
		if (install && !READ_ONCE(w->dead)) {
			fd_install(fd, file);
		} else {
			put_unused_fd(fd);
			fput(file);	/* may free w */
		}
	}
}

int uabi_kcall_reserve_file(struct uabi_call *ucall, struct file *file,
			    s32 *fd)
{
	struct uabi_kcall *call = ucall->host_call;
	struct uabi_kfd *kfd;
	int ufd;

	if (WARN_ON_ONCE(!call)) {
		fput(file);
		return -EINVAL;
	}
	kfd = kzalloc(sizeof(*kfd), GFP_KERNEL);
	if (!kfd) {
		fput(file);
		return -ENOMEM;
	}
	ufd = get_unused_fd_flags(O_CLOEXEC);
	if (ufd < 0) {
		kfree(kfd);
		fput(file);
		return ufd;
	}
	kfd->file = file;
	kfd->fd = ufd;
	kfd->cmd = ucall->index;
	list_add_tail(&kfd->node, &call->new_files);
	*fd = ufd;
	return 0;
}

/* Called by a creating handler, so from UABI_IOCTL_EXECUTE: the fd is
 * reserved in the caller's table and installed by uabi_kcall_end(). */
int uabi_kevq_open(struct uabi_call *ucall, void **wait, s32 *fd)
{
	struct uabi_kcall *call = ucall->host_call;
	struct uabi_kwait *w;
	struct file *file;
	int ufd;

	if (WARN_ON_ONCE(!call))
		return -EINVAL;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	kref_init(&w->ref);		/* the object's reference */
	init_waitqueue_head(&w->wq);
	INIT_LIST_HEAD(&w->call_node);
	atomic_inc(&kwait_live);

	ufd = get_unused_fd_flags(O_CLOEXEC);
	if (ufd < 0) {
		kref_put(&w->ref, kwait_free);
		return ufd;
	}
	kref_get(&w->ref);		/* the file's reference */
	file = anon_inode_getfile("[uabi_evq]", &kevq_fops, w,
				  O_RDONLY | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(ufd);
		kref_put(&w->ref, kwait_free);
		kref_put(&w->ref, kwait_free);
		return PTR_ERR(file);
	}
	w->file = file;
	w->fd = ufd;
	list_add_tail(&w->call_node, &call->new_fds);
	*wait = w;
	*fd = ufd;
	return 0;
}

void uabi_kevq_signal(void *wait)
{
	struct uabi_kwait *w = wait;

	WRITE_ONCE(w->pending, true);
	wake_up_poll(&w->wq, EPOLLIN | EPOLLRDNORM);
}

void uabi_kevq_drain(void *wait)
{
	struct uabi_kwait *w = wait;

	WRITE_ONCE(w->pending, false);
}

/* The object is destroyed (DESTROY, rollback or context close). */
void uabi_kevq_release(void *wait)
{
	struct uabi_kwait *w = wait;

	WRITE_ONCE(w->pending, false);
	WRITE_ONCE(w->dead, true);
	wake_up_poll(&w->wq, EPOLLHUP);
	kref_put(&w->ref, kwait_free);
}
