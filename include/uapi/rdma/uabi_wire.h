/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * rdma-uabi: walking the framing of <rdma/uabi_msg.h>.
 *
 * Every program that reads a message — the dispatcher of the object core,
 * the daemon and its client transport looking for fd attributes, the kernel
 * transport looking for event queue fds, the client library reading its own
 * commands back — walks it with these functions, so that they all agree on
 * where each command and attribute is and on where the walk must stop.
 *
 * The length accounting rules (docs/uapi.md, "Message layout"):
 *  - a command starts with a whole struct uabi_cmd_hdr; its length counts
 *    that header and its attributes, is a multiple of 8, and does not reach
 *    past the end of the message;
 *  - an attribute starts with a whole struct uabi_attr inside its command,
 *    and its payload padded to a multiple of 8 ends inside the command too;
 *  - a command is well formed (uabi_wire_cmd_tiled) when it has at most
 *    UABI_MAX_CMD_ATTRS attributes, every padding byte is zero and its
 *    num_attrs attributes end exactly where the command does;
 *  - a message is well formed when its count commands end exactly where
 *    the message does (uabi_wire_complete after the last command).
 *
 * The walk never reads a byte past the bound it was given and reads every
 * header through a copy, so the buffer needs no alignment.  It only tells
 * where the framing stops holding; what to do there (reject the message
 * with EINVAL, stop quietly) is the caller's business.
 *
 * Usage, the commands of a message of len bytes and their attributes:
 *
 *	struct uabi_wire_iter c, a;
 *
 *	uabi_wire_cmds_init(&c, msg, len, UABI_MAX_CHAIN_CMDS);
 *	while (uabi_wire_next_cmd(&c)) {
 *		(c.off: where the command starts; c.hdr.cmd: its header)
 *		uabi_wire_attrs_init(&a, (const __u8 *)msg + c.off);
 *		while (uabi_wire_next_attr(&a))
 *			(a.off: where the attribute starts, counted from the
 *			 command; a.hdr.attr: its header)
 *		if (!uabi_wire_complete(&a))
 *			(an attribute broke the framing of the command)
 *	}
 *	if (!uabi_wire_complete(&c))
 *		(a command broke the framing, or bytes follow the last one)
 *
 * These are helpers shared by the kernel and userspace, not ABI: only the
 * bytes they walk are.
 */
#ifndef RDMA_UABI_WIRE_H
#define RDMA_UABI_WIRE_H

#include <rdma/uabi_msg.h>

/* Read-only for callers, apart from the _init functions. */
struct uabi_wire_iter {
	const __u8 *buf;	/* offsets below count from here */
	__u32 end;		/* the walk stays below this offset */
	__u32 next;		/* where the next element starts */
	__u32 left;		/* elements still to walk */
	__u32 off;		/* where the element returned last starts */
	union {			/* a copy of its header */
		struct uabi_cmd_hdr cmd;
		struct uabi_attr attr;
	} hdr;
};

/* A buffer that can hold a message: a whole header, at most
 * UABI_MAX_MSG_BYTES (what every host checks before it copies in). */
static inline int uabi_wire_msg_size_ok(__u64 len)
{
	return len >= sizeof(struct uabi_msg_hdr) && len <= UABI_MAX_MSG_BYTES;
}

/* The header of a message of @len bytes (uabi_wire_msg_size_ok) has the
 * magic and accounts for exactly those bytes. */
static inline int uabi_wire_msg_framed(const void *msg, __u64 len)
{
	struct uabi_msg_hdr h;

	__builtin_memcpy(&h, msg, sizeof(h));
	return h.magic == UABI_MSG_MAGIC && h.length == len;
}

/* Walks the commands of the @len bytes at @msg: the header's count of
 * them, but at most @max.  Nothing to walk if @len cannot hold a header. */
static inline void uabi_wire_cmds_init(struct uabi_wire_iter *it,
				       const void *msg, __u32 len, __u32 max)
{
	struct uabi_msg_hdr h;

	it->buf = (const __u8 *)msg;
	it->end = len;
	it->next = len;
	it->left = 0;
	it->off = 0;
	if (len < sizeof(h))
		return;
	__builtin_memcpy(&h, msg, sizeof(h));
	it->next = sizeof(h);
	it->left = h.count < max ? h.count : max;
}

/* Walks the attributes of the command at @cmd, whose framing
 * uabi_wire_next_cmd accepted: its num_attrs attributes, between its
 * header and its length.  Offsets count from @cmd. */
static inline void uabi_wire_attrs_init(struct uabi_wire_iter *it,
					const void *cmd)
{
	struct uabi_cmd_hdr h;

	__builtin_memcpy(&h, cmd, sizeof(h));
	it->buf = (const __u8 *)cmd;
	it->end = h.length;
	it->next = sizeof(h);
	it->left = h.num_attrs;
	it->off = 0;
}

/* Walks at most @max attributes laid out from offset @start up to offset
 * @end of @buf (attributes kept without their command header). */
static inline void uabi_wire_attrs_init_range(struct uabi_wire_iter *it,
					      const void *buf, __u32 start,
					      __u32 end, __u32 max)
{
	it->buf = (const __u8 *)buf;
	it->end = end;
	it->next = start <= end ? start : end;
	it->left = max;
	it->off = 0;
}

/* The next command, if one is left and its framing holds: 1 with it->off
 * and it->hdr.cmd set, else 0. */
static inline int uabi_wire_next_cmd(struct uabi_wire_iter *it)
{
	__u32 room = it->end - it->next;

	if (!it->left || room < sizeof(it->hdr.cmd))
		return 0;
	__builtin_memcpy(&it->hdr.cmd, it->buf + it->next, sizeof(it->hdr.cmd));
	if (it->hdr.cmd.length < sizeof(it->hdr.cmd) ||
	    it->hdr.cmd.length > room || it->hdr.cmd.length % 8)
		return 0;
	it->off = it->next;
	it->next += it->hdr.cmd.length;
	it->left--;
	return 1;
}

/* Bytes an attribute takes: header, payload, padding.  64-bit, so that no
 * payload length can wrap it. */
static inline __u64 uabi_wire_attr_size(const struct uabi_attr *a)
{
	return sizeof(*a) + (((__u64)a->len + 7) & ~(__u64)7);
}

/* The next attribute, if one is left and it fits: 1 with it->off and
 * it->hdr.attr set, else 0. */
static inline int uabi_wire_next_attr(struct uabi_wire_iter *it)
{
	__u32 room = it->end - it->next;

	if (!it->left || room < sizeof(it->hdr.attr))
		return 0;
	__builtin_memcpy(&it->hdr.attr, it->buf + it->next, sizeof(it->hdr.attr));
	if (uabi_wire_attr_size(&it->hdr.attr) > room)
		return 0;
	it->off = it->next;
	it->next += (__u32)uabi_wire_attr_size(&it->hdr.attr);
	it->left--;
	return 1;
}

/* Offset of the payload of the attribute returned last. */
static inline __u32 uabi_wire_payload(const struct uabi_wire_iter *it)
{
	return it->off + (__u32)sizeof(struct uabi_attr);
}

/* The padding after the payload of the attribute returned last is zero. */
static inline int uabi_wire_padding_zero(const struct uabi_wire_iter *it)
{
	const __u8 *p = it->buf + uabi_wire_payload(it) + it->hdr.attr.len;
	const __u8 *end = it->buf + it->next;

	while (p < end)
		if (*p++)
			return 0;
	return 1;
}

/* Bytes after the last element walked. */
static inline __u32 uabi_wire_rest(const struct uabi_wire_iter *it)
{
	return it->end - it->next;
}

/* Every element was walked and they end exactly at the end. */
static inline int uabi_wire_complete(const struct uabi_wire_iter *it)
{
	return !it->left && it->next == it->end;
}

/* The command at @cmd, whose framing uabi_wire_next_cmd accepted, is well
 * formed: at most UABI_MAX_CMD_ATTRS attributes, zero padding, and its
 * attributes tile it exactly. */
static inline int uabi_wire_cmd_tiled(const void *cmd)
{
	struct uabi_wire_iter it;

	uabi_wire_attrs_init(&it, cmd);
	if (it.left > UABI_MAX_CMD_ATTRS)
		return 0;
	while (uabi_wire_next_attr(&it))
		if (!uabi_wire_padding_zero(&it))
			return 0;
	return uabi_wire_complete(&it);
}

#endif /* RDMA_UABI_WIRE_H */
