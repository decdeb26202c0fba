// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Shared memory of the kernel host (struct uabi_shm_ops): the parts of the
 * software device's per-user arenas (docs/datapath.md, docs/security.md).
 * The memory is vmalloc'ed zeroed and charged to the memory cgroup of the
 * process that made it (GFP_KERNEL_ACCOUNT: a user's first context); each
 * fd that UABI_SW_ARENA_MAP hands out is a new anonymous-inode file whose
 * mmap maps the whole part, or a piece of it, MAP_SHARED.  A read-only
 * part maps only without PROT_WRITE and can never be made writable
 * (VM_MAYWRITE is cleared); the driver reaches it through the kernel
 * mapping alone.
 *
 * Lifetime: the device holds one reference on the struct uabi_kshm, each
 * file one more, and whichever goes last frees the memory.  A mapping holds
 * its file (vma->vm_file), so the pages stay while any process maps them,
 * even after the domain was destroyed.  Each file also pins the module
 * (fops.owner), so in practice module exit frees the memory itself.
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
	void *addr;			/* vmalloc */
	size_t size;			/* bytes, a multiple of PAGE_SIZE */
	bool writable;			/* may clients write it */
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
	unsigned long len = vma_pages(vma), i;
	int ret;

	/* A private mapping would copy on write: the peers would not see
	 * the writes of this process, nor it theirs.  (MAP_SHARED of the
	 * read-only file leaves VM_MAYSHARE alone.) */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff >= pages || len > pages - vma->vm_pgoff)
		return -EINVAL;
	if (!s->writable && (vma->vm_flags & VM_WRITE))
		return -EACCES;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	if (!s->writable)
		vm_flags_clear(vma, VM_MAYWRITE);
#else
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	if (!s->writable)
		vma->vm_flags &= ~VM_MAYWRITE;
#endif
	for (i = 0; i < len; i++) {
		void *kaddr = (u8 *)s->addr + ((vma->vm_pgoff + i) << PAGE_SHIFT);

		ret = vm_insert_page(vma, vma->vm_start + (i << PAGE_SHIFT),
				     vmalloc_to_page(kaddr));
		if (ret)
			return ret;
	}
	return 0;
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

static void *kshm_create(const char *name, size_t size, bool writable, void **kaddr)
{
	struct uabi_kshm *s;

	if (!size)
		return ERR_PTR(-EINVAL);
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->size = PAGE_ALIGN(size);
	s->addr = __vmalloc(s->size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!s->addr) {
		kfree(s);
		return ERR_PTR(-ENOMEM);
	}
	s->name = name;
	s->writable = writable;
	kref_init(&s->ref);			/* the device's reference */
	*kaddr = s->addr;
	return s;
}

/* From UABI_SW_ARENA_MAP, in the caller's task: a new file, whose fd is
 * installed once the message is copied back (uabi_kcall_reserve_file). */
static int kshm_get_fd(void *shm, struct uabi_call *call, s32 *fd)
{
	struct uabi_kshm *s = shm;
	struct file *file;

	kref_get(&s->ref);			/* the file's reference */
	file = anon_inode_getfile(s->name, &kshm_fops, s,
				  (s->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (IS_ERR(file)) {
		kref_put(&s->ref, kshm_free);
		return PTR_ERR(file);
	}
	return uabi_kcall_reserve_file(call, file, fd);
}

/* vmalloc'ed pages stay with the arena; they are zeroed for reuse (the
 * memory goes back when the user's last context closes). */
static void kshm_discard(void *shm, u64 off, u64 len)
{
	struct uabi_kshm *s = shm;

	if (off < s->size && len <= s->size - off)
		memset((u8 *)s->addr + off, 0, len);
}

static void kshm_destroy(void *shm)
{
	struct uabi_kshm *s = shm;

	kref_put(&s->ref, kshm_free);
}

const struct uabi_shm_ops uabi_kshm_ops = {
	.create = kshm_create,
	.get_fd = kshm_get_fd,
	.discard = kshm_discard,
	.destroy = kshm_destroy,
};
