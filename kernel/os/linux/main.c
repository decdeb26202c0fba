// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * rdma_uabi.ko: the object core hosted by the Linux kernel.
 *
 * Module init registers the software device and the misc character device
 * /dev/rdma_uabi.  Each open file is one context; UABI_IOCTL_EXECUTE
 * carries one message (<rdma/uabi.h>): copied in whole, executed in place
 * by the core, copied back whole.  Release closes the context, which
 * destroys every object it owned.
 *
 * Locking and lifetime of this glue (the core's are in <uabi/core.h>):
 *  - No lock of the glue is held while the core runs; the core's own locks
 *    are mutexes plus the event queue spinlock, under which the glue's
 *    evq_signal/evq_drain only set a flag and wake a waitqueue.
 *  - The context lives exactly as long as the struct file: ->release runs
 *    after the last ioctl on the file returned (each ioctl holds a file
 *    reference), so uabi_context_close() never races a command, as the
 *    core requires.  A forked child shares the parent's context through
 *    the inherited fd.
 *  - Every open file (and every event queue or arena fd, so every arena
 *    mapping) pins the module, so module exit runs with no context left.
 *  - The message is copied into a kernel buffer before the core parses it,
 *    so userspace cannot change it under the dispatcher.
 */
#include "linux_host.h"
#include "../../drivers/sw/sw.h"

#include <linux/mm.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>

static struct uabi_device *uabi_sw_dev;

/* XRCD key: the identity of the file behind an fd of the caller.  Called
 * from a handler, so from the ioctl, in the caller's task. */
static int kfile_identity(struct uabi_context *ctx, s32 fd,
			  struct uabi_file_id *id)
{
	struct inode *inode;
	struct file *file;

	if (fd < 0)
		return -EBADF;
	/* fget() refuses O_PATH; a write-only fd names a file its holder
	 * may not read: refused too (the userspace host does the same). */
	file = fget(fd);
	if (!file)
		return -EBADF;
	if (!(file->f_mode & FMODE_READ)) {
		fput(file);
		return -EBADF;
	}
	inode = file_inode(file);
	id->dev = huge_encode_dev(inode->i_sb->s_dev);
	id->ino = inode->i_ino;
	fput(file);
	return 0;
}

/* Port state and the like change what every user sees. */
static bool kdevice_admin(struct uabi_context *ctx)
{
	return capable(CAP_NET_ADMIN);
}

/* Registered memory must be mapped in the caller, as ib_umem_get() needs
 * it pinnable (-EFAULT otherwise).  One pass over the VMAs that cover the
 * range; the caller's mm is the ioctl's current. */
static int kcheck_range(struct uabi_call *call, u64 addr, u64 len)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	u64 at = addr, end;
	int ret = 0;

	if (check_add_overflow(addr, len, &end) || !mm)
		return -EFAULT;
	if (!len)
		return 0;
	mmap_read_lock(mm);
	while (at < end) {
		vma = find_vma(mm, (unsigned long)at);
		if (!vma || vma->vm_start > at) {
			ret = -EFAULT;
			break;
		}
		at = vma->vm_end;
	}
	mmap_read_unlock(mm);
	return ret;
}

static const struct uabi_host_ops linux_host_ops = {
	.file_identity = kfile_identity,
	.evq_open = uabi_kevq_open,
	.evq_signal = uabi_kevq_signal,
	.evq_drain = uabi_kevq_drain,
	.evq_release = uabi_kevq_release,
	.device_admin = kdevice_admin,
	.check_range = kcheck_range,
};

static int uabi_dev_open(struct inode *inode, struct file *filp)
{
	struct uabi_kfile *kf = kzalloc(sizeof(*kf), GFP_KERNEL_ACCOUNT);
	struct uabi_context *ctx;

	if (!kf)
		return -ENOMEM;
	mutex_init(&kf->lock);
	INIT_LIST_HEAD(&kf->relays);
	kf->peer.pid = task_tgid_vnr(current);
	kf->peer.uid = from_kuid_munged(current_user_ns(), current_uid());
	kf->peer.gid = from_kgid_munged(current_user_ns(), current_gid());
	ctx = uabi_context_open(uabi_sw_dev, &linux_host_ops, NULL, &kf->peer);
	if (IS_ERR(ctx)) {
		kfree(kf);
		return PTR_ERR(ctx);
	}
	kf->ctx = ctx;
	filp->private_data = kf;
	return nonseekable_open(inode, filp);
}

static int uabi_dev_release(struct inode *inode, struct file *filp)
{
	struct uabi_kfile *kf = filp->private_data;

	/* The QPNs first: the device cannot be deleted while the context
	 * is open. */
	uabi_kroce_release(kf);
	uabi_context_close(kf->ctx);
	kfree(kf);
	return 0;
}

/* The context is fixed from the first command on. */
static struct uabi_context *kfile_use(struct uabi_kfile *kf)
{
	if (!smp_load_acquire(&kf->used)) {
		mutex_lock(&kf->lock);
		smp_store_release(&kf->used, true);
		mutex_unlock(&kf->lock);
	}
	return kf->ctx;
}

/* UABI_IOCTL_OPEN_DEVICE: the file's context moves to another device
 * while it has never run a command (so it holds no object). */
static long kfile_open_device(struct uabi_kfile *kf, u32 __user *arg)
{
	struct uabi_context *ctx;
	struct uabi_kroce *roce = NULL;
	u32 pos;
	long ret = 0;

	if (get_user(pos, arg))
		return -EFAULT;
	mutex_lock(&kf->lock);
	if (kf->used) {
		ret = -EBUSY;
		goto out;
	}
	ctx = uabi_kroce_context_open(pos, &linux_host_ops, &kf->peer, &roce);
	if (IS_ERR(ctx)) {
		ret = PTR_ERR(ctx);
		goto out;
	}
	uabi_kroce_release(kf);
	uabi_context_close(kf->ctx);
	kf->ctx = ctx;
	kf->roce = roce;
out:
	mutex_unlock(&kf->lock);
	return ret;
}

static long kfile_wire(struct uabi_kfile *kf, unsigned int cmd, void __user *arg)
{
	struct uabi_wire_bind b;
	long ret;

	if (cmd == UABI_IOCTL_WIRE_BIND && copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	mutex_lock(&kf->lock);
	smp_store_release(&kf->used, true);
	if (cmd == UABI_IOCTL_WIRE_BIND)
		ret = uabi_kroce_bind(kf, &b);
	else
		ret = uabi_kroce_relay(kf, arg);
	mutex_unlock(&kf->lock);
	return ret;
}

static long uabi_dev_ioctl(struct file *filp, unsigned int cmd,
			   unsigned long arg)
{
	struct uabi_kfile *kf = filp->private_data;
	struct uabi_context *ctx;
	struct uabi_kcall call;
	struct uabi_ioctl io;
	void __user *umsg;
	void *msg;
	long ret;

	switch (cmd) {
	case UABI_IOCTL_EXECUTE:
		break;
	case UABI_IOCTL_LINK_QUERY:
	case UABI_IOCTL_LINK_QUERY_CM:
	case UABI_IOCTL_LINK_ADD:
	case UABI_IOCTL_LINK_DEL:
		return uabi_kroce_link_ioctl(cmd, (void __user *)arg);
	case UABI_IOCTL_OPEN_DEVICE:
		return kfile_open_device(kf, (u32 __user *)arg);
	case UABI_IOCTL_WIRE_RELAY:
	case UABI_IOCTL_WIRE_BIND:
		return kfile_wire(kf, cmd, (void __user *)arg);
	default:
		return -ENOTTY;
	}
	if (copy_from_user(&io, (const void __user *)arg, sizeof(io)))
		return -EFAULT;
	if (io.reserved)
		return -EINVAL;
	/* Hard limits before anything is allocated (the core checks the
	 * length again against msg_hdr.length). */
	if (io.msg_len < sizeof(struct uabi_msg_hdr) ||
	    io.msg_len > UABI_MAX_MSG_BYTES)
		return -EINVAL;
	umsg = u64_to_user_ptr(io.msg_ptr);
	msg = vmemdup_user(umsg, io.msg_len);
	if (IS_ERR(msg))
		return PTR_ERR(msg);	/* -EFAULT or -ENOMEM */

	ctx = kfile_use(kf);
	uabi_kcall_begin(&call, msg);
	/* The status travels in the message itself (msg_hdr.status); the
	 * core gives &call back to the hooks that reserve fds. */
	uabi_execute_as(ctx, msg, io.msg_len, &call, task_tgid_vnr(current));
	ret = copy_to_user(umsg, msg, io.msg_len) ? -EFAULT : 0;
	uabi_kcall_end(&call, ret == 0);
	kvfree(msg);
	return ret;
}

/* The device node maps nothing: the data-path arena is mapped through its
 * own fd, which UABI_SW_ARENA_MAP hands out (shm.c). */
static int uabi_dev_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return -ENODEV;
}

static const struct file_operations uabi_dev_fops = {
	.owner = THIS_MODULE,
	.open = uabi_dev_open,
	.release = uabi_dev_release,
	.unlocked_ioctl = uabi_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,	/* same layout on 32 bits */
	.mmap = uabi_dev_mmap,
	.llseek = no_llseek,
};

/* 0666 like /dev/infiniband/uverbs*: a context grants nothing beyond the
 * objects it creates itself. */
static struct miscdevice uabi_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "rdma_uabi",
	.fops = &uabi_dev_fops,
	.mode = 0666,
};

/* The ring heap of each user's arena, allocated whole when the user opens
 * a first context (docs/kernel.md, "The arena"); read-only once loaded. */
static unsigned int heap_mib = UABI_SW_HEAP_KERNEL >> 20;
module_param(heap_mib, uint, 0444);
MODULE_PARM_DESC(heap_mib, "MiB of ring heap in each user's arena, 1 to 1024 (default 16)");

static int __init uabi_module_init(void)
{
	struct uabi_device *dev;
	int ret;

	if (heap_mib < 1 || heap_mib > 1024) {
		pr_err("rdma_uabi: heap_mib=%u is not within 1 to 1024\n", heap_mib);
		return -EINVAL;
	}
	/* One arena for the device, shared by every context: see the trust
	 * model in docs/kernel.md. */
	dev = uabi_sw_create_shared(&uabi_kshm_ops, (size_t)heap_mib << 20);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	uabi_sw_dev = dev;	/* before the device node can be opened */
	uabi_kcm_init();
	ret = uabi_kroce_init();
	if (ret) {
		uabi_kcm_exit();
		uabi_sw_destroy(dev);
		uabi_sw_dev = NULL;
		return ret;
	}
	ret = misc_register(&uabi_misc);
	if (ret) {
		uabi_kroce_exit();
		uabi_kcm_exit();
		uabi_sw_destroy(dev);
		uabi_sw_dev = NULL;
		return ret;
	}
	pr_info("rdma_uabi: device %s on /dev/%s, %u MiB of ring heap per user\n", dev->name,
		uabi_misc.name, heap_mib);
	return 0;
}

static void __exit uabi_module_exit(void)
{
	struct uabi_device *dev = uabi_sw_dev;
	int i, n;

	misc_deregister(&uabi_misc);
	uabi_kroce_exit();
	uabi_kcm_exit();
	/* Every open file pinned the module: no context is left, so every
	 * object must be gone.  Anything else is a leak in the core. */
	for (i = 0; i < ARRAY_SIZE(dev->counts); i++) {
		n = atomic_read(&dev->counts[i]);
		if (n)
			pr_err("rdma_uabi: leak: %d live objects of type %d at exit\n",
			       n, i);
	}
	n = uabi_kevq_live();
	if (n)
		pr_err("rdma_uabi: leak: %d event queue wait objects at exit\n", n);
	uabi_sw_destroy(dev);
	uabi_sw_dev = NULL;
}

module_init(uabi_module_init);
module_exit(uabi_module_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("rdma-uabi: generic object uAPI for RDMA (software device)");
