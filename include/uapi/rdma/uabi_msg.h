/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi uAPI: the framing of a message, the same bytes on every
 * transport (docs/uapi.md, "Message layout").
 *
 * A message is one struct uabi_msg_hdr followed by msg_hdr.count commands.
 * A command is one struct uabi_cmd_hdr followed by cmd_hdr.num_attrs
 * attributes.  An attribute is one struct uabi_attr followed by its payload,
 * padded with zero bytes to a multiple of 8.  Everything is fixed width, in
 * host byte order, and contains no pointer: the host copies the whole message
 * in, the core executes it and writes outputs in place, and the host copies
 * the whole message back.  <rdma/uabi_wire.h> walks these bytes.
 *
 * ABI rules: ids are append-only; reserved fields must be zero; structs grow
 * only at their end, and bytes a receiver does not know must be zero.
 */
#ifndef RDMA_UABI_MSG_H
#define RDMA_UABI_MSG_H

#include <rdma/uabi_types.h>

#define UABI_ABI_VERSION 1
#define UABI_MSG_MAGIC 0x75616269u /* "uabi" */

/* Hard limits, also enforced by every host before copying in. */
#define UABI_MAX_MSG_BYTES (256u * 1024u)
#define UABI_MAX_CHAIN_CMDS 1024u
#define UABI_MAX_CMD_ATTRS 64u

/* struct uabi_msg_hdr.flags */
enum {
	/* Destroy again everything the message created if any command fails. */
	UABI_MSG_F_ALL_OR_NOTHING = 1u << 0,
};

struct uabi_msg_hdr {
	__u32 magic;		/* UABI_MSG_MAGIC */
	__u32 length;		/* bytes of the whole message, this header included */
	__u16 abi_version;	/* UABI_ABI_VERSION */
	__u16 count;		/* number of commands that follow, >= 1 */
	__u32 flags;		/* UABI_MSG_F_* */
	__s32 status;		/* out: 0, or the first failing command's -errno */
	__u32 executed;		/* out: commands that ran to success */
	__u32 failed_index;	/* out: index of the failing command, or count */
	__u32 reserved;		/* must be zero */
};
UABI_ASSERT_SIZE(struct uabi_msg_hdr, 32);
UABI_ASSERT_OFFSET(struct uabi_msg_hdr, abi_version, 8);
UABI_ASSERT_OFFSET(struct uabi_msg_hdr, flags, 12);
UABI_ASSERT_OFFSET(struct uabi_msg_hdr, reserved, 28);

/* struct uabi_cmd_hdr.flags */
enum {
	/* cmd_hdr.handle is the index of an earlier command of this message;
	 * the handle that command created is used. */
	UABI_CMD_F_HANDLE_REF = 1u << 0,
};

#define UABI_CMD_STATUS_NOT_RUN 1 /* status of a command never reached */

struct uabi_cmd_hdr {
	__u32 length;		/* bytes of this command, header and attributes */
	__u16 object;		/* enum uabi_object, bit 15 = driver namespace */
	__u16 method;		/* enum uabi_method or object-specific method */
	__u32 handle;		/* in: object the method acts on */
	__u32 flags;		/* UABI_CMD_F_* */
	__u32 out_handle;	/* out: handle created by this command */
	__s32 status;		/* out: 0, -errno, or UABI_CMD_STATUS_NOT_RUN */
	__u16 num_attrs;
	__u16 reserved0;	/* must be zero */
	__u32 reserved1;	/* must be zero */
};
UABI_ASSERT_SIZE(struct uabi_cmd_hdr, 32);
UABI_ASSERT_OFFSET(struct uabi_cmd_hdr, handle, 8);
UABI_ASSERT_OFFSET(struct uabi_cmd_hdr, status, 20);
UABI_ASSERT_OFFSET(struct uabi_cmd_hdr, num_attrs, 24);
UABI_ASSERT_OFFSET(struct uabi_cmd_hdr, reserved1, 28);

/* struct uabi_attr.flags */
enum {
	/* The receiver must understand this attribute (-EPROTONOSUPPORT). */
	UABI_ATTR_F_MANDATORY = 1u << 0,
	/* Payload is a buffer the receiver fills. */
	UABI_ATTR_F_OUTPUT = 1u << 1,
	/* Set by the receiver on an output it wrote. */
	UABI_ATTR_F_VALID_OUTPUT = 1u << 2,
	/* Payload is a __u32 index of an earlier command of this message;
	 * the handle it created is used. */
	UABI_ATTR_F_CHAIN_REF = 1u << 3,
	/* Payload is a __s32 file descriptor: transports that cross a process
	 * boundary translate it (SCM_RIGHTS). */
	UABI_ATTR_F_FD = 1u << 4,
};
#define UABI_ATTR_F_ALL 0x1fu

struct uabi_attr {
	__u16 id;		/* object-specific; bit 15 = driver namespace */
	__u16 flags;		/* UABI_ATTR_F_* */
	__u32 len;		/* payload bytes, padding excluded */
	/* __u8 payload[len], then zero padding to 8 bytes */
};
UABI_ASSERT_SIZE(struct uabi_attr, 8);
UABI_ASSERT_OFFSET(struct uabi_attr, len, 4);

/* Payloads are padded to this; commands are multiples of it. */
#define UABI_ALIGN8(x) (((x) + 7u) & ~7u)

/* Object and attribute ids with this bit belong to the device's driver. */
#define UABI_DRIVER_NS 0x8000u

#endif /* RDMA_UABI_MSG_H */
