/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The userspace host of the object core: the C entry points that the
 * in-process transport (through struct uabi_user_api) and the daemon call.  The kernel host (os/linux) has
 * the same three verbs behind open(), ioctl() and release().
 */
#ifndef UABI_HOST_USER_H
#define UABI_HOST_USER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uabi_context;

/* Who a context belongs to.  The in-process host uses the calling process;
 * the daemon fills it from SO_PEERCRED. */
struct uabi_user_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

/* Registers the software device once per process; safe to call repeatedly
 * and from several threads.  Returns 0 or -errno. */
int uabi_user_init(void);
/* Before uabi_user_init(), in-process only: this process's devices number
 * their QPs apart from other processes' (uabi_sw_set_domain_start()). */
void uabi_user_numbers_apart(void);

/* Opens a context on device 0.  peer == NULL means the calling process.
 * Returns NULL and sets errno on failure. */
struct uabi_context *uabi_user_open(const struct uabi_user_peer *peer);

/* Opens a context on device @index (0: uabi_sw0; RoCE devices follow,
 * docs/wire.md).  NULL and errno ENODEV for no such device. */
struct uabi_context *uabi_user_open_device(unsigned index, const struct uabi_user_peer *peer);

/* The name of device @index into @buf: 0, or -ENODEV past the last one. */
int uabi_user_device_name(unsigned index, char *buf, size_t len);

/* What the host reads of a RoCE device's interface (host_links.c). */
struct uabi_sw_link;
struct uabi_shm_ops;
int uabi_user_link_read(const char *ifname, struct uabi_sw_link *out);
void uabi_user_links_from_env(const struct uabi_shm_ops *shm, size_t heap_bytes);
/* Device @index's link, read again from its interface: 0, -ENODEV (no
 * such device, or not a RoCE one). */
int uabi_user_device_link(unsigned index, struct uabi_sw_link *link);

/* Device indexes run below this; a removed RoCE device leaves a hole. */
#define UABI_USER_MAX_DEVICES 4

/* What `uabi link` shows of a device (uabid). */
struct uabi_user_device_info {
	char name[64];
	char netdev[16];
	int roce;
	unsigned ip_mtu, carrier, num_gids, contexts;
	unsigned char gids[16][16];
};
/* Device @index, its interface read again: 0 or -ENODEV (none there). */
int uabi_user_device_query(unsigned index, struct uabi_user_device_info *out);
/* `uabi link add NAME netdev IFNAME`: the new device's index, or -EINVAL
 * (a bad name), -EEXIST (the name is taken), -ENODEV (no such interface
 * here), -ENOSPC (no room for another device). */
int uabi_user_link_add(const char *name, const char *ifname);
/* `uabi link del NAME`: 0, -ENODEV (no such device), -EOPNOTSUPP (not a
 * RoCE device), -EBUSY (contexts are open on it). */
int uabi_user_link_del(const char *name);

/*
 * The in-process host's CM across hosts (host_cm.c; docs/cm.md, "Across
 * hosts").  uabi_user_cm_start() registers its hooks with the core's CM
 * (once; the in-process module does, uabid has its own).  The process's
 * wire endpoint of RoCE device @index attaches a port that sends one MAD
 * from QP1 at @sgid to QP1 at @dgid (0 or -errno; called with the CM's
 * lock held: must not block or call into the core), and hands the MADs
 * that came for QP1 to uabi_user_cm_input() (every byte untrusted: the
 * CM checks the MAD).  One port per device: attach is -EBUSY while
 * another is attached; detach returns once no send through @port runs.
 */
struct uabi_user_cm_port {
	void *arg;
	int (*send)(void *arg, const unsigned char *sgid, const unsigned char *dgid,
		    unsigned char tclass, const void *mad, unsigned len);
};
void uabi_user_cm_start(void);
int uabi_user_cm_attach(unsigned index, const struct uabi_user_cm_port *port);
void uabi_user_cm_detach(unsigned index, const struct uabi_user_cm_port *port);
void uabi_user_cm_input(unsigned index, const unsigned char *sgid, const unsigned char *dgid,
			const void *mad, unsigned len);

/*
 * Executes one message in place: msg holds len bytes that the caller owns;
 * outputs are written into it.  Returns the message status (0, or the -errno
 * of the first failing command, or of the message header if the message
 * could not be parsed).  Fd attributes name fds of the calling process.
 */
int uabi_user_execute(struct uabi_context *ctx, void *msg, size_t len);

/* The same for a call of process @pid (uabid: the SO_PEERCRED pid of the
 * connection it came on), which may have imported the context
 * (docs/daemon.md, "Imported contexts"): what it creates is its own. */
int uabi_user_execute_as(struct uabi_context *ctx, void *msg, size_t len, pid_t pid);

/* Closes a context: every object it owns is destroyed, its XRC
 * registrations are dropped. */
void uabi_user_close(struct uabi_context *ctx);

/*
 * The calls above as one table: what the in-process module
 * (libuabi_inproc.so, loaded by the client library on demand) or the
 * object library uabi_inproc_builtin hands out.  @abi changes whenever
 * this table or the calls' meaning does; a client refuses any other.
 */
#define UABI_USER_API_ABI 3

struct uabi_user_api {
	unsigned abi;
	int (*init)(void);
	struct uabi_context *(*open)(const struct uabi_user_peer *peer);
	int (*execute)(struct uabi_context *ctx, void *msg, size_t len);
	void (*close)(struct uabi_context *ctx);
	struct uabi_context *(*open_device)(unsigned index, const struct uabi_user_peer *peer);
	int (*device_name)(unsigned index, char *buf, size_t len);
	int (*device_link)(unsigned index, struct uabi_sw_link *link);
	/* ABI 3: the CM across hosts (above; init starts it). */
	int (*cm_attach)(unsigned index, const struct uabi_user_cm_port *port);
	void (*cm_detach)(unsigned index, const struct uabi_user_cm_port *port);
	void (*cm_input)(unsigned index, const unsigned char *sgid, const unsigned char *dgid,
			 const void *mad, unsigned len);
};

const struct uabi_user_api *uabi_user_get_api(void);

#ifdef __cplusplus
}
#endif

#endif /* UABI_HOST_USER_H */
