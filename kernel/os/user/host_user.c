// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The userspace host of the object core: used in-process and by uabid.
 * It supplies what differs from the kernel: the identity of an fd's file
 * (fstat in this process) and pollable event fds (eventfd).
 */
#include <uabi/core.h>
#include <uabi/host_user.h>
#include "../../drivers/sw/sw.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The file an XRC domain is named by.  The fd must be one its sender could
 * read: fstat() alone would accept an O_PATH fd (opened without any
 * permission on the file) or a write-only one, and so let a user join a
 * domain keyed by a file it may not read.  EBADF, as fget() answers for
 * O_PATH in the kernel host. */
static int user_file_identity(struct uabi_context *ctx, s32 fd,
			      struct uabi_file_id *id)
{
	struct stat st;
	int fl;

	if (fd < 0)
		return -EBADF;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (fstat(fd, &st))
		return -EBADF;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

static int user_evq_open(struct uabi_call *call, void **wait, s32 *fd)
{
	/* Blocking, so that O_NONBLOCK on it is the application's own
	 * choice, as on a kernel uverbs channel (ibv_get_cq_event(3) honours
	 * it); the host itself never waits on it (see user_evq_drain). */
	int efd = eventfd(0, EFD_CLOEXEC);

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
	struct pollfd p = { .fd = wait_fd(wait), .events = POLLIN };
	uint64_t v;

	/* Only the host reads the counter, under the queue's lock: if it is
	 * readable now, read(2) returns at once whatever the fd's flags. */
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	    read(wait_fd(wait), &v, sizeof(v)) < 0) {
		/* EAGAIN: the application made it non-blocking, and raced */
	}
}

static void user_evq_release(void *wait)
{
	close(wait_fd(wait));
}

/* The hosting process's owner (uabid's; in-process: the process itself)
 * and root administer the device. */
static bool user_device_admin(struct uabi_context *ctx)
{
	return ctx->peer.uid == 0 || ctx->peer.uid == (u32)geteuid();
}

/*
 * Registered memory must be mapped, as pinning it is in Linux (EFAULT).
 * The calling process's /proc/PID/maps is read (its own process
 * in-process: the same file); ranges are in address order, so one pass checks that they cover
 * [addr, addr + len) without a hole.
 */
/*
 * This host's per-message state (call->host_call): the calling process's
 * mappings, read from /proc once per message, so that a chain of 100
 * registrations reads them once and not 100 times.  A message's commands
 * run while its sender waits for the answer; a mapping another of its
 * threads changes meanwhile is the same race as after the answer: the
 * data path's copies fail cleanly on memory that went away.
 */
struct user_call {
	unsigned int checked;	/* ranges checked in this message */
	bool loaded;
	bool failed;
	size_t n, cap;
	struct user_range {
		u64 lo, hi;
	} *r;
};

/* The mappings of @pid, adjacent ones merged. */
static void maps_load(struct user_call *uc, int pid)
{
	char path[64], line[512];
	FILE *f;

	uc->loaded = true;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		uc->failed = true;
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		bool whole = strchr(line, '\n') != NULL;

		/* a line longer than the buffer: skip its rest */
		while (!whole && fgets(path, sizeof(path), f))
			whole = strchr(path, '\n') != NULL;
		if (sscanf(line, "%llx-%llx", &lo, &hi) != 2 || hi <= lo)
			continue;
		if (uc->n && uc->r[uc->n - 1].hi == lo) {
			uc->r[uc->n - 1].hi = hi;
			continue;
		}
		if (uc->n == uc->cap) {
			size_t cap = uc->cap ? uc->cap * 2 : 256;
			struct user_range *r = realloc(uc->r, cap * sizeof(*r));

			if (!r) {
				uc->failed = true;
				break;
			}
			uc->r = r;
			uc->cap = cap;
		}
		uc->r[uc->n].lo = lo;
		uc->r[uc->n].hi = hi;
		uc->n++;
	}
	fclose(f);
}

/*
 * A range of up to 256 pages of this process: one process_vm_readv() of one
 * byte of each page answers whether every page is mapped (and readable) in
 * one system call, far cheaper than reading /proc.  -EAGAIN: cannot tell
 * that way (a larger range: /proc decides).
 */
#define CHECK_PAGES_MAX 256

static int pages_readable(pid_t pid, u64 addr, u64 end)
{
	const u64 page = 4096;
	struct iovec remote[CHECK_PAGES_MAX], local;
	char sink[CHECK_PAGES_MAX];
	u64 first = addr & ~(page - 1), n = (end - first + page - 1) / page, i;
	ssize_t got;

	if (n > CHECK_PAGES_MAX)
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		remote[i].iov_base = (void *)(uintptr_t)(i ? first + i * page : addr);
		remote[i].iov_len = 1;
	}
	local.iov_base = sink;
	local.iov_len = n;
	got = process_vm_readv(pid, &local, 1, remote, n, 0);
	if (got == (ssize_t)n)
		return 0;
	if (got < 0 && (errno == EPERM || errno == ENOSYS))
		return -EAGAIN;
	return -EFAULT;
}

static int user_check_range(struct uabi_call *call, u64 addr, u64 len)
{
	struct user_call one = { 0 }, *uc = call->host_call ? call->host_call : &one;
	u64 at = addr, end;
	size_t i;
	int ret;

	if (check_add_overflow(addr, len, &end))
		return -EFAULT;
	if (!len)
		return 0;
	/* In-process, one registration: a system call.  More in one message
	 * (a chain), or for another process: /proc, once per message.  uabid
	 * never reads a client's memory: a page of a userfaultfd region or of
	 * a file on the client's own FUSE mount would hold the daemon, and
	 * every other user with it, for as long as the client likes. */
	if (call->pid == getpid() && !uc->loaded && !uc->checked++) {
		ret = pages_readable(call->pid, addr, end);
		if (ret != -EAGAIN)
			return ret;
	}
	if (!uc->loaded)
		maps_load(uc, (int)call->pid);
	ret = -EFAULT;
	if (!uc->failed) {
		/* /proc lists mappings in address order */
		for (i = 0; i < uc->n && at < end; i++) {
			if (uc->r[i].lo > at)
				break;		/* a hole before the next mapping */
			if (uc->r[i].hi > at)
				at = uc->r[i].hi;
		}
		ret = at >= end ? 0 : -EFAULT;
	}
	if (uc == &one)
		free(one.r);
	return ret;
}

static const struct uabi_host_ops user_host_ops = {
	.file_identity = user_file_identity,
	.evq_open = user_evq_open,
	.evq_signal = user_evq_signal,
	.evq_drain = user_evq_drain,
	.evq_release = user_evq_release,
	.device_admin = user_device_admin,
	.check_range = user_check_range,
};

/*
 * Memory shared with clients (a user's sw arena): a memfd mapped here.  The
 * fd stays with the host; a transport that crosses a process boundary
 * sends a copy, an in-process client maps this one.  Clients hold the fd,
 * so it is sealed: no one can shrink it under the host's mapping (a SIGBUS
 * in uabid would end every user's objects) or grow it, and a read-only
 * part takes F_SEAL_FUTURE_WRITE: no new writable mapping, no write(2),
 * whoever holds the fd — the host keeps its own writable mapping.
 */
struct user_shm {
	int fd;
	void *addr;
	size_t size;
};

static void *user_shm_create(const char *name, size_t size, bool writable, void **kaddr)
{
	struct user_shm *shm = calloc(1, sizeof(*shm));
	int err, seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

	if (!shm)
		return ERR_PTR(-ENOMEM);
	shm->size = size;
	shm->addr = MAP_FAILED;
	shm->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (shm->fd < 0 || ftruncate(shm->fd, (off_t)size))
		goto err;
	shm->addr = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_NORESERVE, shm->fd, 0);
	if (shm->addr == MAP_FAILED)
		goto err;
	if (!writable)
		seals |= F_SEAL_FUTURE_WRITE;
	if (fcntl(shm->fd, F_ADD_SEALS, seals))
		goto err;
	*kaddr = shm->addr;
	return shm;
err:
	err = errno ? errno : ENOMEM;
	if (shm->addr != MAP_FAILED)
		munmap(shm->addr, size);
	if (shm->fd >= 0)
		close(shm->fd);
	free(shm);
	return ERR_PTR(-err);
}

static int user_shm_get_fd(void *p, struct uabi_call *call, s32 *fd)
{
	*fd = ((struct user_shm *)p)->fd;
	return 0;
}

/* The pages go back to the system; reading them gives zeros. */
static void user_shm_discard(void *p, u64 off, u64 len)
{
	struct user_shm *shm = p;

	if (fallocate(shm->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		      (off_t)len))
		memset((u8 *)shm->addr + off, 0, len);
}

static void user_shm_destroy(void *p)
{
	struct user_shm *shm = p;

	munmap(shm->addr, shm->size);
	close(shm->fd);
	free(shm);
}

static const struct uabi_shm_ops user_shm_ops = {
	.create = user_shm_create,
	.get_fd = user_shm_get_fd,
	.discard = user_shm_discard,
	.destroy = user_shm_destroy,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

static void do_init(void)
{
	struct uabi_device *dev = uabi_sw_create_shared(&user_shm_ops,
							UABI_SW_HEAP_USER);

	init_result = IS_ERR(dev) ? (int)PTR_ERR(dev) : 0;
	if (!init_result)
		uabi_user_links_from_env(&user_shm_ops, UABI_SW_HEAP_USER);
}

void uabi_user_numbers_apart(void)
{
	uabi_sw_set_domain_start((u32)getpid());
}

int uabi_user_init(void)
{
	pthread_once(&init_once, do_init);
	return init_result;
}

struct uabi_context *uabi_user_open(const struct uabi_user_peer *peer)
{
	return uabi_user_open_device(0, peer);
}

struct uabi_context *uabi_user_open_device(unsigned index, const struct uabi_user_peer *peer)
{
	struct uabi_peer p;
	struct uabi_device *dev;
	struct uabi_context *ctx;
	struct uabi_sw_link link;
	int ret = uabi_user_init();

	if (ret) {
		errno = -ret;
		return NULL;
	}
	/* A RoCE device's interface is read again for each context. */
	uabi_user_device_link(index, &link);
	dev = uabi_device_get(index);
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
	return uabi_user_execute_as(ctx, msg, len, ctx->peer.pid);
}

int uabi_user_execute_as(struct uabi_context *ctx, void *msg, size_t len, pid_t pid)
{
	struct user_call uc = { 0 };
	int ret = uabi_execute_as(ctx, msg, len, &uc, pid);

	free(uc.r);
	return ret;
}

void uabi_user_close(struct uabi_context *ctx)
{
	if (ctx)
		uabi_context_close(ctx);
}
