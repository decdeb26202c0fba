// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The dispatcher: parses a message, validates every command against the
 * method tables before anything runs, then executes the commands in order
 * with handle lookup, locking and commit/abort done here so that handlers
 * stay short.  The rules and their errnos are listed in docs/uapi.md.
 */
#include <uabi/core.h>
#include <rdma/uabi_wire.h>

struct parsed_cmd {
	struct uabi_cmd_hdr *hdr;
	const struct uabi_object_def *object;
	const struct uabi_method_def *method;
	/* slot i belongs to method->attrs[i] */
	struct uabi_attr *attrs[UABI_MAX_SPEC_ATTRS];
	u64 created_serial;		/* committed object, for rollback; 0: none */
	u16 created_type;
};

struct exec_state {
	struct uabi_context *ctx;
	void *host_call;
	s32 pid;
	struct uabi_msg_hdr *msg;
	struct parsed_cmd *cmds;
	u32 count;
};

/* ------------------------------------------------------------ lookup */
const struct uabi_object_def *uabi_object_def(struct uabi_device *dev, u16 type)
{
	static const struct uabi_object_def *const core_types[] = {
		[UABI_OBJ_DEVICE] = &uabi_type_device,
		[UABI_OBJ_PD] = &uabi_type_pd,
		[UABI_OBJ_MR] = &uabi_type_mr,
		[UABI_OBJ_CQ] = &uabi_type_cq,
		[UABI_OBJ_COMP_CHANNEL] = &uabi_type_comp_channel,
		[UABI_OBJ_ASYNC_EVENT] = &uabi_type_async_event,
		[UABI_OBJ_QP] = &uabi_type_qp,
		[UABI_OBJ_SRQ] = &uabi_type_srq,
		[UABI_OBJ_AH] = &uabi_type_ah,
		[UABI_OBJ_XRCD] = &uabi_type_xrcd,
		[UABI_OBJ_MW] = &uabi_type_mw,
		[UABI_OBJ_CM_CHANNEL] = &uabi_type_cm_channel,
		[UABI_OBJ_CM_ID] = &uabi_type_cm_id,
	};
	u16 i;

	if (type & UABI_DRIVER_NS) {
		for (i = 0; i < dev->ops->num_objects; i++)
			if (dev->ops->objects[i]->id == type)
				return dev->ops->objects[i];
		return NULL;
	}
	if (type >= ARRAY_SIZE(core_types))
		return NULL;
	return core_types[type];
}

static const struct uabi_method_def *
find_method(const struct uabi_object_def *obj, u16 id)
{
	u16 i;

	for (i = 0; i < obj->num_methods; i++)
		if (obj->methods[i].id == id)
			return &obj->methods[i];
	return NULL;
}

static int find_spec(const struct uabi_method_def *m, u16 id)
{
	u16 i;

	/* Most methods list their attributes in the order of their ids,
	 * one apart: try that place first. */
	if (!m->num_attrs)
		return -1;
	i = id - m->attrs[0].id;
	if (i < m->num_attrs && m->attrs[i].id == id)
		return i;
	for (i = 0; i < m->num_attrs; i++)
		if (m->attrs[i].id == id)
			return i;
	return -1;
}

static bool all_zero(const u8 *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* -------------------------------------------------------------- parsing */
static bool creates(const struct parsed_cmd *pc)
{
	return pc->method->flags & UABI_SPEC_F_METHOD_CREATES;
}

static int check_ref(struct exec_state *st, u32 self, u32 ref)
{
	if (ref >= self || !creates(&st->cmds[ref]))
		return -EINVAL;
	return 0;
}

static int parse_attr(struct exec_state *st, u32 self, struct parsed_cmd *pc,
		      struct uabi_attr *a)
{
	const struct uabi_attr_spec *spec;
	u8 *payload = (u8 *)(a + 1);
	int idx;

	if (a->flags & ~UABI_ATTR_F_ALL)
		return -EINVAL;
	a->flags &= ~UABI_ATTR_F_VALID_OUTPUT;

	idx = find_spec(pc->method, a->id);
	if (idx < 0)
		return (a->flags & UABI_ATTR_F_MANDATORY) ? -EPROTONOSUPPORT : 0;
	spec = &pc->method->attrs[idx];
	if (pc->attrs[idx])
		return -EINVAL;			/* duplicate */

	if (!!(a->flags & UABI_ATTR_F_OUTPUT) != !!(spec->flags & UABI_SPEC_F_OUTPUT))
		return -EINVAL;
	if (!!(a->flags & UABI_ATTR_F_FD) != !!(spec->flags & UABI_SPEC_F_FD))
		return -EINVAL;
	if (a->flags & UABI_ATTR_F_CHAIN_REF) {
		u32 ref;

		if (!(spec->flags & UABI_SPEC_F_HANDLE) || a->len != sizeof(u32))
			return -EINVAL;
		memcpy(&ref, payload, sizeof(ref));
		if (check_ref(st, self, ref))
			return -EINVAL;
	}

	if (a->len < spec->min_len)
		return -EINVAL;
	if (a->len > spec->max_len && !(spec->flags & UABI_SPEC_F_OUTPUT)) {
		/* A newer client's larger struct: fine if we ignore nothing. */
		if (!all_zero(payload + spec->max_len, a->len - spec->max_len))
			return -EOPNOTSUPP;
	}
	pc->attrs[idx] = a;
	return 0;
}

/* Meaning: the object, method and attributes exist and fit their specs. */
static int parse_cmd(struct exec_state *st, u32 self)
{
	struct parsed_cmd *pc = &st->cmds[self];
	struct uabi_cmd_hdr *h = pc->hdr;
	struct uabi_wire_iter it;
	u32 i;
	int ret;

	if (!uabi_wire_cmd_tiled(h))
		return -EINVAL;
	if (h->reserved0 || h->reserved1)
		return -EPROTONOSUPPORT;
	if (h->flags & ~UABI_CMD_F_HANDLE_REF)
		return -EINVAL;
	pc->object = uabi_object_def(st->ctx->dev, h->object);
	if (!pc->object)
		return -EPROTONOSUPPORT;
	pc->method = find_method(pc->object, h->method);
	if (!pc->method)
		return -EPROTONOSUPPORT;
	if (WARN_ON(pc->method->num_attrs > UABI_MAX_SPEC_ATTRS))
		return -EINVAL;
	memset(pc->attrs, 0, sizeof(pc->attrs[0]) * pc->method->num_attrs);

	if (pc->method->handle_access == UABI_ACCESS_NONE) {
		if (h->handle || (h->flags & UABI_CMD_F_HANDLE_REF))
			return -EINVAL;
	} else if (h->flags & UABI_CMD_F_HANDLE_REF) {
		if (check_ref(st, self, h->handle))
			return -EINVAL;
	}

	uabi_wire_attrs_init(&it, h);
	while (uabi_wire_next_attr(&it)) {
		ret = parse_attr(st, self, pc,
				 (struct uabi_attr *)((u8 *)h + it.off));
		if (ret)
			return ret;
	}
	for (i = 0; i < pc->method->num_attrs; i++)
		if ((pc->method->attrs[i].flags & UABI_SPEC_F_MANDATORY) &&
		    !pc->attrs[i])
			return -EINVAL;
	return 0;
}

/*
 * An all-or-nothing message can be undone by destroying what it created;
 * so it may change nothing else: a command acting on an object that the
 * message did not create must be read-only.
 */
static int check_undoable(const struct parsed_cmd *pc)
{
	const struct uabi_method_def *m = pc->method;

	if (m->reaches_beyond_handle)
		return -EINVAL;
	if (m->flags & (UABI_SPEC_F_METHOD_CREATES | UABI_SPEC_F_METHOD_READONLY))
		return 0;
	if (m->handle_access != UABI_ACCESS_NONE &&
	    (pc->hdr->flags & UABI_CMD_F_HANDLE_REF))
		return 0;
	return -EINVAL;
}

static int parse_msg(struct exec_state *st, void *buf, size_t len)
{
	struct uabi_msg_hdr *m = buf;
	struct uabi_wire_iter it;
	u32 i;
	int ret;

	/* Frame every command first, so that each one that can be found
	 * reports NOT_RUN even when an earlier one is rejected. */
	uabi_wire_cmds_init(&it, buf, len, st->count);
	for (i = 0; i < st->count; i++) {
		struct uabi_cmd_hdr *h;

		m->failed_index = i;
		if (!uabi_wire_next_cmd(&it)) {
			if (uabi_wire_rest(&it) >= sizeof(*h))
				((struct uabi_cmd_hdr *)((u8 *)buf + it.next))->status =
					-EINVAL;
			return -EINVAL;
		}
		h = (struct uabi_cmd_hdr *)((u8 *)buf + it.off);
		h->status = UABI_CMD_STATUS_NOT_RUN;
		h->out_handle = 0;
		st->cmds[i].hdr = h;
		st->cmds[i].object = NULL;
		st->cmds[i].method = NULL;
		st->cmds[i].created_serial = 0;
		st->cmds[i].created_type = 0;
	}
	if (uabi_wire_rest(&it)) {
		m->failed_index = st->count;
		return -EINVAL;			/* bytes after the last command */
	}
	for (i = 0; i < st->count; i++) {
		m->failed_index = i;
		ret = parse_cmd(st, i);
		if (!ret && (m->flags & UABI_MSG_F_ALL_OR_NOTHING))
			ret = check_undoable(&st->cmds[i]);
		if (ret) {
			st->cmds[i].hdr->status = ret;
			return ret;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ execution */
static u32 resolve(struct exec_state *st, u32 value, bool is_ref)
{
	return is_ref ? st->cmds[value].hdr->out_handle : value;
}

/* The value checks the method table declares for its inputs (flag masks,
 * enum ranges): -EINVAL, before the method runs. */
static int check_values(const struct parsed_cmd *pc)
{
	const struct uabi_method_def *m = pc->method;
	u16 i;

	for (i = 0; i < m->num_attrs; i++) {
		const struct uabi_attr_spec *spec = &m->attrs[i];
		const struct uabi_attr *a = pc->attrs[i];
		u32 v = 0;

		if (!a || spec->check == UABI_CHECK_NONE)
			continue;
		if (a->len > spec->check_off)
			memcpy(&v, (const u8 *)(a + 1) + spec->check_off,
			       min_t(u32, a->len - spec->check_off, sizeof(v)));
		if (spec->check == UABI_CHECK_MASK ? (v & ~spec->check_a) != 0
						   : v < spec->check_a || v > spec->check_b)
			return -EINVAL;
	}
	return 0;
}

static void unlock_call(struct uabi_call *call, const struct parsed_cmd *pc)
{
	u16 i;

	for (i = 0; i < pc->method->num_attrs; i++) {
		if (call->slots[i].uobj)
			uabi_uobj_unlock(call->slots[i].uobj,
					 pc->method->attrs[i].access);
	}
	if (call->target)
		uabi_uobj_unlock(call->target, pc->method->handle_access);
}

static int exec_cmd(struct exec_state *st, u32 k)
{
	struct parsed_cmd *pc = &st->cmds[k];
	const struct uabi_method_def *m = pc->method;
	struct uabi_call call;
	u16 i;
	int ret = 0;

	/* Only the method's slots are ever looked at (slot_of() and
	 * unlock_call() stop at num_attrs): the others are not cleared. */
	memset(&call, 0, offsetof(struct uabi_call, slots));
	memset(call.slots, 0, sizeof(call.slots[0]) * m->num_attrs);
	call.ctx = st->ctx;
	call.dev = st->ctx->dev;
	call.object = pc->object;
	call.method = m;
	call.hdr = pc->hdr;
	call.all_or_nothing = st->msg->flags & UABI_MSG_F_ALL_OR_NOTHING;
	call.index = k;
	call.host_call = st->host_call;
	call.pid = st->pid;
	memset(call.slot_by_id, -1, sizeof(call.slot_by_id));
	for (i = 0; i < m->num_attrs; i++)
		if (m->attrs[i].id < UABI_CALL_IDS &&
		    call.slot_by_id[m->attrs[i].id] < 0)
			call.slot_by_id[m->attrs[i].id] = (s8)i;

	for (i = 0; i < m->num_attrs && !ret; i++) {
		const struct uabi_attr_spec *spec = &m->attrs[i];
		struct uabi_attr *a = pc->attrs[i];
		u32 h;

		if (!a)
			continue;
		call.slots[i].attr = a;
		call.slots[i].payload = a + 1;
		if (!(spec->flags & UABI_SPEC_F_HANDLE))
			continue;
		memcpy(&h, a + 1, sizeof(h));
		h = resolve(st, h, a->flags & UABI_ATTR_F_CHAIN_REF);
		call.slots[i].uobj = uabi_uobj_lookup(st->ctx, h, spec->handle_type,
						      spec->access);
		if (IS_ERR(call.slots[i].uobj)) {
			ret = PTR_ERR(call.slots[i].uobj);
			call.slots[i].uobj = NULL;
		}
	}
	if (!ret && m->handle_access != UABI_ACCESS_NONE) {
		u32 h = resolve(st, pc->hdr->handle,
				pc->hdr->flags & UABI_CMD_F_HANDLE_REF);
		u16 type = m->handle_type ? m->handle_type : pc->object->id;

		call.target = uabi_uobj_lookup(st->ctx, h, type, m->handle_access);
		if (IS_ERR(call.target)) {
			ret = PTR_ERR(call.target);
			call.target = NULL;
		}
	}

	if (!ret)
		ret = check_values(pc);
	if (!ret && m->supported && !m->supported(call.dev))
		ret = -EOPNOTSUPP;
	if (!ret && creates(pc)) {
		call.created = uabi_uobj_alloc(st->ctx, m->creates ? m->creates
								   : pc->object->id);
		if (IS_ERR(call.created)) {
			ret = PTR_ERR(call.created);
			call.created = NULL;
		}
	}
	if (!ret)
		ret = m->handler(&call);

	if (!ret && m->handle_access == UABI_ACCESS_DESTROY) {
		ret = uabi_uobj_destroy(call.target, UABI_DESTROY_USER);
		if (!ret)
			call.target = NULL;	/* gone, and its lock with it */
	}
	unlock_call(&call, pc);

	if (call.created) {
		if (ret) {
			uabi_uobj_abort(call.created);
		} else {
			uabi_uobj_commit(call.created);
			pc->hdr->out_handle = call.created->handle;
			pc->created_serial = call.created->serial;
			pc->created_type = call.created->def->id;
		}
	}
	return ret;
}

/*
 * Undoes an all-or-nothing message: destroys, newest first, what its
 * commands created.  A later command of the message (or another thread of
 * the context) may already have destroyed one of them, and its handle and
 * memory may have been reused since, so an object is only touched after a
 * lookup by handle finds it alive, of the saved type, with the saved
 * serial (which no other object of the context ever had).
 */
static void rollback(struct exec_state *st, u32 failed)
{
	u32 j = failed;

	while (j--) {
		struct parsed_cmd *pc = &st->cmds[j];
		struct uabi_uobject *uobj;

		if (!pc->created_serial)
			continue;
		uobj = uabi_uobj_lookup(st->ctx, pc->hdr->out_handle,
					pc->created_type, UABI_ACCESS_DESTROY);
		if (IS_ERR(uobj))
			continue;
		if (uobj->serial != pc->created_serial ||
		    uabi_uobj_destroy(uobj, UABI_DESTROY_ROLLBACK))
			uabi_uobj_unlock(uobj, UABI_ACCESS_DESTROY);
	}
}

int uabi_execute(struct uabi_context *ctx, void *buf, size_t len,
		 void *host_call)
{
	return uabi_execute_as(ctx, buf, len, host_call, ctx->peer.pid);
}

int uabi_execute_as(struct uabi_context *ctx, void *buf, size_t len,
		    void *host_call, s32 pid)
{
	struct uabi_msg_hdr *m = buf;
	struct exec_state st = { .ctx = ctx, .host_call = host_call, .pid = pid,
				 .msg = m };
	u32 k;
	int ret;

	if (!uabi_wire_msg_size_ok(len))
		return -EINVAL;
	m->status = -EINVAL;
	m->executed = 0;
	m->failed_index = 0;
	if (!uabi_wire_msg_framed(m, len))
		return -EINVAL;
	if (m->abi_version != UABI_ABI_VERSION || m->reserved) {
		m->status = -EPROTONOSUPPORT;
		return m->status;
	}
	if (!m->count || m->count > UABI_MAX_CHAIN_CMDS ||
	    (m->flags & ~UABI_MSG_F_ALL_OR_NOTHING))
		return -EINVAL;

	st.count = m->count;
	/* Not zeroed: parse_msg() sets what it reads of each command (a
	 * chain of 1000 would clear 170 KiB on every message). */
	st.cmds = kvmalloc_array(st.count, sizeof(*st.cmds), GFP_KERNEL);
	if (!st.cmds) {
		m->status = -ENOMEM;
		return m->status;
	}

	ret = parse_msg(&st, buf, len);
	if (ret)
		goto out;

	for (k = 0; k < st.count; k++) {
		m->failed_index = k;
		ret = exec_cmd(&st, k);
		st.cmds[k].hdr->status = ret;
		if (ret)
			break;
		m->executed++;
	}
	if (ret && (m->flags & UABI_MSG_F_ALL_OR_NOTHING))
		rollback(&st, k);
	if (!ret)
		m->failed_index = st.count;
out:
	m->status = ret;
	kvfree(st.cmds);
	return ret;
}

int uabi_destroy_handler(struct uabi_call *call)
{
	return 0;
}

/* ------------------------------------------------- attribute accessors */
static const struct uabi_attr_slot *slot_of(const struct uabi_call *call, u16 id)
{
	int idx = id < UABI_CALL_IDS ? call->slot_by_id[id] : find_spec(call->method, id);

	if (idx < 0 || !call->slots[idx].attr)
		return NULL;
	return &call->slots[idx];
}

bool uabi_attr_present(const struct uabi_call *call, u16 id)
{
	return slot_of(call, id) != NULL;
}

int uabi_attr_get(const struct uabi_call *call, u16 id, void *dst, size_t size)
{
	const struct uabi_attr_slot *s = slot_of(call, id);

	if (!s)
		return -ENOENT;
	memset(dst, 0, size);
	memcpy(dst, s->payload, min_t(size_t, size, s->attr->len));
	return 0;
}

u32 uabi_attr_get_u32(const struct uabi_call *call, u16 id, u32 dflt)
{
	u32 v;

	return uabi_attr_get(call, id, &v, sizeof(v)) ? dflt : v;
}

u64 uabi_attr_get_u64(const struct uabi_call *call, u16 id, u64 dflt)
{
	u64 v;

	return uabi_attr_get(call, id, &v, sizeof(v)) ? dflt : v;
}

struct uabi_uobject *uabi_attr_uobj(const struct uabi_call *call, u16 id)
{
	const struct uabi_attr_slot *s = slot_of(call, id);

	return s ? s->uobj : NULL;
}

void *uabi_attr_out_buf(struct uabi_call *call, u16 id, u32 *len)
{
	const struct uabi_attr_slot *s = slot_of(call, id);

	if (!s)
		return NULL;
	*len = s->attr->len;
	s->attr->flags |= UABI_ATTR_F_VALID_OUTPUT;
	return s->payload;
}

int uabi_attr_put(struct uabi_call *call, u16 id, const void *src, size_t size)
{
	u32 len;
	u8 *dst = uabi_attr_out_buf(call, id, &len);

	if (!dst)
		return 0;
	memcpy(dst, src, min_t(size_t, len, size));
	if (len > size)
		memset(dst + size, 0, len - size);
	return 0;
}
