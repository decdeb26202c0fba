/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi uAPI: the kernel transport.
 *
 * The kernel module's character device, /dev/rdma_uabi.  Each open file is
 * one context; closing it destroys every object the context owns.
 * UABI_IOCTL_EXECUTE carries one message (<rdma/uabi_msg.h>), the same bytes
 * as every other transport: the module copies msg_len bytes in (at most
 * UABI_MAX_MSG_BYTES), executes them and copies the whole message back.  The
 * ioctl returns 0 once the message is back in user memory, whatever its
 * status (read msg_hdr.status); it fails only when the message could not be
 * carried: EFAULT (msg_ptr or the argument unreadable/unwritable), EINVAL
 * (msg_len below sizeof(struct uabi_msg_hdr) or above UABI_MAX_MSG_BYTES,
 * reserved not zero), ENOMEM, ENOTTY (another request code).  Fd attributes
 * name fds of the calling process; event queue fds are installed in it when
 * the ioctl succeeds and belong to the caller (close them after DESTROY).
 */
#ifndef RDMA_UABI_IOCTL_H
#define RDMA_UABI_IOCTL_H

#include <linux/ioctl.h>
#include <rdma/uabi_msg.h>

#define UABI_DEVICE_PATH "/dev/rdma_uabi"

struct uabi_ioctl {
	__aligned_u64 msg_ptr;	/* user address of the message */
	__u32 msg_len;		/* bytes of the message, == msg_hdr.length */
	__u32 reserved;		/* must be zero */
};
UABI_ASSERT_SIZE(struct uabi_ioctl, 16);
UABI_ASSERT_OFFSET(struct uabi_ioctl, msg_len, 8);

#define UABI_IOCTL_EXECUTE _IOWR(0x1b, 1, struct uabi_ioctl)

/*
 * RoCE devices of the module (docs/wire.md, "The kernel module's own RoCE
 * device"), each bound to a network interface of the initial network
 * namespace.  The module's devices are numbered by position: 0 is
 * uabi_sw0, RoCE devices follow in the order of the device registry.
 *
 * UABI_IOCTL_LINK_QUERY: @index in, the device at that position out
 *   (ENODEV past the last).  Any user.
 * UABI_IOCTL_LINK_QUERY_CM: the same for the connection manager's counts
 *   of the device at @index (struct uabi_link_cm_info; zeros for
 *   uabi_sw0).  Any user.  A module without it answers ENOTTY.
 * UABI_IOCTL_LINK_ADD / _DEL: CAP_NET_ADMIN (EPERM).  ADD: EINVAL (name
 *   not 1-63 of [A-Za-z0-9_.-], "." or "..", or an unterminated field),
 *   EEXIST (a device of that name), ENODEV (no such interface), ENOSPC
 *   (every slot of the registry taken).  DEL: ENODEV (no such device),
 *   EOPNOTSUPP (uabi_sw0), EBUSY (contexts are open on it).
 * UABI_IOCTL_OPEN_DEVICE: the context of this open file is on the device
 *   at position *arg from now on; only before the file's first
 *   UABI_IOCTL_EXECUTE (EBUSY after), ENODEV for no such device.
 * UABI_IOCTL_WIRE_RELAY: a context on a RoCE device: a new fd (O_CLOEXEC,
 *   O_NONBLOCK, read-only) from which read() gives one datagram per call,
 *   each behind a struct uabi_relay_hdr: the datagrams the module received
 *   at the device's port for the QPs bound to this relay; and that port.
 *   Each call makes a new queue (the processes sharing an imported context
 *   each have their own).  EOPNOTSUPP: not a RoCE device; EADDRNOTAVAIL:
 *   the device has no address to receive at.
 * UABI_IOCTL_WIRE_BIND: @on 1: datagrams for @qpn go to the relay
 *   @relay_fd names (EBADF: not a relay of this context; EINVAL: qpn
 *   above 24 bits, @on above 1, reserved not zero; ENOENT: no QP of this
 *   context has that number; EOPNOTSUPP: no UABI_IOCTL_WIRE_RELAY yet).
 *   @on 0: no more (ENOENT: not bound to that relay).
 */
struct uabi_link_info {
	__u32 index;		/* position (UABI_IOCTL_OPEN_DEVICE) */
	__u32 roce;		/* 1: bound to @netdev */
	char name[64];
	char netdev[16];
	__u32 carrier;		/* RoCE: the interface's carrier */
	__u32 ip_mtu;		/* RoCE: the interface's MTU */
	__u32 num_gids;
	__u32 contexts;		/* open on it */
	__u8 addr[16];		/* where the module receives (IPv4-mapped or
				 * IPv6), zero when it cannot */
	__u16 port;		/* ... at this UDP port (4791) */
	__u16 reserved0;
	__s32 relay_error;	/* -errno of the last bind, 0: bound */
	__aligned_u64 rx_relayed; /* datagrams queued to a context, and
				   * QP1 MADs given to the CM */
	__aligned_u64 rx_dropped; /* runts, unbound QPs, full queues, QP1
				   * datagrams the CM refused */
};
UABI_ASSERT_SIZE(struct uabi_link_info, 144);

struct uabi_link_cm_info {
	__u32 index;		/* position, as UABI_IOCTL_LINK_QUERY's */
	__u32 reserved;		/* out: zero */
	char name[64];		/* out: the device there */
	/* Datagrams for QP1 that were a whole UD SEND to the GSI with a right
	 * ICRC (handed to the CM) and that were not (refused); then the CM's
	 * own counts, for every device (docs/cm.md, "Across hosts"). */
	__aligned_u64 qp1_in;
	__aligned_u64 qp1_refused;
	__aligned_u64 cm_taken;		/* MADs that moved a connection */
	__aligned_u64 cm_dropped;	/* malformed, unknown, for no connection */
	__aligned_u64 cm_sent;
	__aligned_u64 cm_resent;
	__aligned_u64 cm_timed_out;
};
UABI_ASSERT_SIZE(struct uabi_link_cm_info, 128);

struct uabi_link_req {
	char name[64];		/* NUL-terminated */
	char netdev[16];	/* LINK_ADD: the interface (IFNAMSIZ) */
};
UABI_ASSERT_SIZE(struct uabi_link_req, 80);

struct uabi_wire_relay {
	__s32 fd;		/* out */
	__u16 port;		/* out: the device's UDP port */
	__u16 reserved;
};
UABI_ASSERT_SIZE(struct uabi_wire_relay, 8);

struct uabi_wire_bind {
	__u32 qpn;
	__u32 on;		/* 1 bind, 0 unbind */
	__s32 relay_fd;		/* a relay of this context (WIRE_RELAY's fd) */
	__u32 reserved;		/* must be zero */
};
UABI_ASSERT_SIZE(struct uabi_wire_bind, 16);

/* What precedes each datagram read from a relay fd: its IP addresses and
 * UDP ports as the module received it (the ICRC covers them). */
struct uabi_relay_hdr {
	__u8 v6;		/* 0: IPv4 (addresses in the first 4 bytes) */
	__u8 reserved[3];
	__u16 src_port;		/* host order */
	__u16 dst_port;
	__u8 src[16];
	__u8 dst[16];
};
UABI_ASSERT_SIZE(struct uabi_relay_hdr, 40);

#define UABI_IOCTL_LINK_QUERY _IOWR(0x1b, 0x10, struct uabi_link_info)
#define UABI_IOCTL_LINK_ADD _IOW(0x1b, 0x11, struct uabi_link_req)
#define UABI_IOCTL_LINK_DEL _IOW(0x1b, 0x12, struct uabi_link_req)
#define UABI_IOCTL_OPEN_DEVICE _IOW(0x1b, 0x13, __u32)
#define UABI_IOCTL_WIRE_RELAY _IOR(0x1b, 0x14, struct uabi_wire_relay)
#define UABI_IOCTL_WIRE_BIND _IOW(0x1b, 0x15, struct uabi_wire_bind)
#define UABI_IOCTL_LINK_QUERY_CM _IOWR(0x1b, 0x16, struct uabi_link_cm_info)

#endif /* RDMA_UABI_IOCTL_H */
