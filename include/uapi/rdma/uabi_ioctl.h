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

#endif /* RDMA_UABI_IOCTL_H */
