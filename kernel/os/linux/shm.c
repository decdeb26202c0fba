// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Shared memory of the kernel host (struct uabi_shm_ops): the software
 * device's arena (docs/datapath.md).  The memory is vmalloc_user (zeroed,
 * whole pages); each fd that UABI_SW_ARENA_MAP hands out is a new
 * anonymous-inode file whose mmap maps the whole arena, or a part of it,
 * MAP_SHARED.
 *
 * Lifetime: the device holds one reference on the struct uabi_kshm, each
 * file one more, and whichever goes last frees the memory.  A mapping holds
 * its file (vma->vm_file), so the pages stay while any process maps them,
 * even after the device was destroyed.  Each file also pins the module
 * (fops.owner), so in practice module exit frees the memory itself.
 *
 * Trust: every context of the device maps the same arena (docs/kernel.md).
 */
#include "linux_host.h"

#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/vmalloc.h>

struct uabi_kshm {
	struct kref ref;		/* the device's and each file's */
	const char *name;		/* the driver's, static */
	void *addr;			/* vmalloc_user */
	size_t size;			/* bytes, a multiple of PAGE_SIZE */
};

static void kshm_free(struct kref *ref)
{
	struct uabi_kshm *s = container_of(ref, struct uabi_kshm, ref);

	vfree(s->addr);
	kfree(s);
}

static int kshm_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct uabi_kshm *s = file->private_data;
	unsigned long pages = s->size >> PAGE_SHIFT;
	unsigned long len = vma_pages(vma);

	/* A private mapping would copy on write: the peers would not see
	 * the writes of this process, nor it theirs. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff >= pages || len > pages - vma->vm_pgoff)
		return -EINVAL;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_DONTEXPAND);
#else
	vma->vm_flags |= VM_DONTEXPAND;
#endif
	return remap_vmalloc_range(vma, s->addr, vma->vm_pgoff);
}

static int kshm_release(struct inode *inode, struct file *file)
{
	struct uabi_kshm *s = file->private_data;

	kref_put(&s->ref, kshm_free);
	return 0;
}

static const struct file_operations kshm_fops = {
	.owner = THIS_MODULE,
	.mmap = kshm_mmap,
	.release = kshm_release,
	.llseek = noop_llseek,
};

static void *kshm_create(const char *name, size_t size, void **kaddr)
{
	struct uabi_kshm *s;

	if (!size)
		return ERR_PTR(-EINVAL);
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->size = PAGE_ALIGN(size);
	s->addr = vmalloc_user(s->size);	/* zeroed */
	if (!s->addr) {
		kfree(s);
		return ERR_PTR(-ENOMEM);
	}
	s->name = name;
	kref_init(&s->ref);			/* the device's reference */
	*kaddr = s->addr;
	return s;
}

/* From UABI_SW_ARENA_MAP, in the caller's task: a new file, whose fd is
 * installed once the message is copied back (uabi_kcall_reserve_file). */
static int kshm_get_fd(void *shm, struct uabi_context *ctx, s32 *fd)
{
	struct uabi_kshm *s = shm;
	struct file *file;

	kref_get(&s->ref);			/* the file's reference */
	file = anon_inode_getfile(s->name, &kshm_fops, s, O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		kref_put(&s->ref, kshm_free);
		return PTR_ERR(file);
	}
	return uabi_kcall_reserve_file(ctx, file, fd);
}

static void kshm_destroy(void *shm)
{
	struct uabi_kshm *s = shm;

	kref_put(&s->ref, kshm_free);
}

const struct uabi_shm_ops uabi_kshm_ops = {
	.create = kshm_create,
	.get_fd = kshm_get_fd,
	.destroy = kshm_destroy,
};
