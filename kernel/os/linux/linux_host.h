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
#include <rdma/uabi_ioctl.h>

/*
 * One UABI_IOCTL_EXECUTE in progress, on the ioctl's stack; the core hands
 * it back to the hooks as call->host_call (uabi_execute()).  Event queue
 * and arena fds created by the message are reserved, not installed: they
 * reach the caller's fd table only once the message has been copied back,
 * so a failed or rolled-back command, or a bad output pointer, leaves no
 * stray fd behind.  Only the ioctl's own task touches it.
 */
struct uabi_kcall {
	const struct uabi_msg_hdr *msg;	/* the kernel copy being executed */
	struct list_head new_fds;	/* struct uabi_kwait.call_node */
	struct list_head new_files;	/* struct uabi_kfd.node */
};

void uabi_kcall_begin(struct uabi_kcall *kc, const struct uabi_msg_hdr *msg);
/* Installs the reserved fds when @install, else gives them back. */
void uabi_kcall_end(struct uabi_kcall *kc, bool install);
/*
 * Reserves an fd in the caller's table for @file, a file of no core object
 * (the arena), from the handler of @call.  Takes over the caller's
 * reference to @file, also on failure.  uabi_kcall_end() installs it only
 * if the command that reserved it succeeded and was not rolled back (its
 * index is below msg_hdr.executed, and an all-or-nothing message succeeded
 * as a whole).
 */
int uabi_kcall_reserve_file(struct uabi_call *call, struct file *file,
			    s32 *fd);

/* The arena memory (shm.c). */
extern const struct uabi_shm_ops uabi_kshm_ops;

/* Event queue fds (evq.c). */
int uabi_kevq_open(struct uabi_call *call, void **wait, s32 *fd);
void uabi_kevq_signal(void *wait);
void uabi_kevq_drain(void *wait);
void uabi_kevq_release(void *wait);
/* Wait objects still allocated; must be 0 at module exit. */
int uabi_kevq_live(void);

/* The CM across hosts on the RoCE devices (roce_cm.c): its hooks are
 * registered at module init, gone at exit (after uabi_kroce_exit()). */
void uabi_kcm_init(void);
void uabi_kcm_exit(void);
struct uabi_device;
struct socket;
struct sock;
struct sk_buff;
/* roce.c, under its roce_lock: @dev receives (attach; no socket yet) /
 * its sockets are now @socks, bound at @addrs (GIDs), and those it had
 * before no sender uses once this returns (set_socks) / it receives no
 * more, its sockets are about to be released (detach). */
#define UABI_KCM_SOCKS 16
/* The counters the CM's receive path adds to: the device's (its relay's
 * too) and its QP1's. */
struct uabi_kcm_counters {
	atomic64_t *rx_relayed, *rx_dropped;	/* QP1's datagrams counted too */
	atomic64_t *qp1_in, *qp1_refused;
};
void uabi_kcm_attach(struct uabi_device *dev, int ifindex, const struct uabi_kcm_counters *c);
void uabi_kcm_set_socks(struct uabi_device *dev, struct socket *const *socks, const u8 (*addrs)[16],
			u32 n);
void uabi_kcm_detach(struct uabi_device *dev);
/* roce.c's encap hook, in softirq: a datagram for QP1 of @dev.  true: it
 * is taken (queued for the CM, or dropped and counted); false: the device
 * has no CM link, the caller drops it. */
bool uabi_kcm_rcv(struct uabi_device *dev, struct sock *sk, struct sk_buff *skb);

/*
 * One open file of /dev/rdma_uabi (main.c): its context, on uabi_sw0 from
 * the open on, or on another device once UABI_IOCTL_OPEN_DEVICE chose it
 * (only before the first UABI_IOCTL_EXECUTE: @used), and what the context
 * receives from the wire when that device is a RoCE one (roce.c).  @lock
 * serialises the file's device-choosing and relay ioctls and @relays; EXECUTE takes it
 * once, to set @used, and after that reads @ctx without it.
 */
struct uabi_kroce;
struct uabi_krelay;

struct uabi_kfile {
	struct mutex lock;
	bool used;			/* smp_store_release under lock */
	struct uabi_context *ctx;
	struct uabi_peer peer;		/* the opener */
	struct uabi_kroce *roce;	/* the context's device, when RoCE */
	struct list_head relays;	/* struct uabi_krelay, UABI_IOCTL_WIRE_RELAY's */
};

/* RoCE devices and their receiving (roce.c). */
int uabi_kroce_init(void);
void uabi_kroce_exit(void);
/* UABI_IOCTL_LINK_QUERY, _QUERY_CM, _ADD and _DEL. */
long uabi_kroce_link_ioctl(unsigned int cmd, void __user *arg);
/* A context on the device at position @pos; *@roce its RoCE state (NULL
 * for uabi_sw0).  ERR_PTR(-ENODEV) for no such device. */
struct uabi_context *uabi_kroce_context_open(u32 pos, const struct uabi_host_ops *host,
					     const struct uabi_peer *peer,
					     struct uabi_kroce **roce);
/* Callers hold kf->lock. */
int uabi_kroce_relay(struct uabi_kfile *kf, struct uabi_wire_relay __user *arg);
int uabi_kroce_bind(struct uabi_kfile *kf, const struct uabi_wire_bind *b);
/* The file is released: unbinds its QPNs, drops its relays. */
void uabi_kroce_release(struct uabi_kfile *kf);

#endif /* UABI_LINUX_HOST_H */
