// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Object lifetime: the per-context handle table, the shared/exclusive
 * try-locks, dependency counts, commit/abort of new objects, and context
 * teardown.  Nothing else frees a uobject.
 *
 * A uobject is reachable only through its context's table (under
 * table_lock) and through the deps[] of newer objects of the same context,
 * which hold a usecnt on it.  A command holds its objects' locks for its
 * whole duration, so an object that a command is using cannot be destroyed
 * by another thread: the destroyer's exclusive try-lock fails with -EBUSY.
 * Context close runs when no command of that context can still be running
 * (the host guarantees it: kernel release(), daemon connection teardown).
 */
#include <uabi/core.h>

#define UABI_HANDLE_FIRST 1	/* handle 0 is never valid */

/* ------------------------------------------------------------- locking */
static int uobj_trylock(struct uabi_uobject *uobj, u8 access)
{
	switch (access) {
	case UABI_ACCESS_READ:
		/* fails only while exclusively held (-1) */
		if (!atomic_add_unless(&uobj->lock, 1, -1))
			return -EBUSY;
		return 0;
	case UABI_ACCESS_WRITE:
	case UABI_ACCESS_DESTROY:
		if (atomic_cmpxchg(&uobj->lock, 0, -1) != 0)
			return -EBUSY;
		return 0;
	}
	return -EINVAL;
}

void uabi_uobj_unlock(struct uabi_uobject *uobj, u8 access)
{
	if (access == UABI_ACCESS_READ)
		atomic_dec(&uobj->lock);
	else
		atomic_set(&uobj->lock, 0);
}

int uabi_uobj_trylock_destroy(struct uabi_uobject *uobj)
{
	int ret = uobj_trylock(uobj, UABI_ACCESS_DESTROY);

	if (!ret && atomic_read(&uobj->usecnt)) {
		uabi_uobj_unlock(uobj, UABI_ACCESS_DESTROY);
		ret = -EBUSY;
	}
	return ret;
}

struct uabi_uobject *uabi_uobj_lookup(struct uabi_context *ctx, u32 handle,
				      u16 type, u8 access)
{
	struct uabi_uobject *uobj = NULL;
	int ret;

	mutex_lock(&ctx->table_lock);
	if (handle < ctx->table_size)
		uobj = ctx->table[handle];
	if (!uobj || !uobj->committed) {
		ret = -ENOENT;
	} else if (uobj->def->id != type) {
		ret = -EINVAL;
	} else if (access == UABI_ACCESS_DESTROY) {
		ret = uabi_uobj_trylock_destroy(uobj);
	} else {
		ret = uobj_trylock(uobj, access);
	}
	mutex_unlock(&ctx->table_lock);
	return ret ? ERR_PTR(ret) : uobj;
}

/* ------------------------------------------------------------- handles */
static int table_alloc(struct uabi_context *ctx, struct uabi_uobject *uobj)
{
	u32 i;

	mutex_lock(&ctx->table_lock);
	for (i = ctx->next_hint; i < ctx->table_size; i++)
		if (!ctx->table[i])
			goto found;
	if (ctx->table_size >= (1u << 24)) {
		mutex_unlock(&ctx->table_lock);
		return -EMFILE;
	}
	{
		u32 nsize = ctx->table_size ? ctx->table_size * 2 : 64;
		struct uabi_uobject **nt;

		/* kvmalloc: past 512K handles the table outgrows what
		 * kmalloc gives (krealloc would WARN there, then fail). */
		nt = kvmalloc_array(nsize, sizeof(*nt), GFP_KERNEL);
		if (!nt) {
			mutex_unlock(&ctx->table_lock);
			return -ENOMEM;
		}
		if (ctx->table_size)
			memcpy(nt, ctx->table, ctx->table_size * sizeof(*nt));
		memset(nt + ctx->table_size, 0,
		       (nsize - ctx->table_size) * sizeof(*nt));
		kvfree(ctx->table);
		i = max_t(u32, ctx->table_size, UABI_HANDLE_FIRST);
		ctx->table = nt;
		ctx->table_size = nsize;
	}
found:
	ctx->table[i] = uobj;
	ctx->next_hint = i + 1;
	uobj->handle = i;
	uobj->serial = ++ctx->next_serial;
	mutex_unlock(&ctx->table_lock);
	return 0;
}

static void table_remove(struct uabi_uobject *uobj)
{
	struct uabi_context *ctx = uobj->ctx;

	mutex_lock(&ctx->table_lock);
	ctx->table[uobj->handle] = NULL;
	if (uobj->handle < ctx->next_hint)
		ctx->next_hint = uobj->handle;
	if (uobj->committed)
		list_del(&uobj->ctx_node);
	mutex_unlock(&ctx->table_lock);
}

/* ----------------------------------------------------------- user quota */
/*
 * Limits per user, by object type: the device's max_* where the verbs have
 * one; completion channels and async event queues cost the host an fd each
 * (uabid holds them all in one process), so they are bounded too.
 */
#define UABI_MAX_CHANNELS_PER_USER 1024
#define UABI_MAX_CM_IDS_PER_USER 65536

u32 uabi_user_limit(const struct uabi_device *dev, u16 type)
{
	const struct uabi_device_attr *a = &dev->attr;

	switch (type) {
	case UABI_OBJ_PD:
		return a->max_pd;
	case UABI_OBJ_MR:
		return a->max_mr;
	case UABI_OBJ_CQ:
		return a->max_cq;
	case UABI_OBJ_QP:
		return a->max_qp;
	case UABI_OBJ_SRQ:
		return a->max_srq;
	case UABI_OBJ_AH:
		return a->max_ah;
	case UABI_OBJ_XRCD:
		return a->max_xrcd;
	case UABI_OBJ_MW:
		return a->max_mw;
	case UABI_OBJ_COMP_CHANNEL:
	case UABI_OBJ_ASYNC_EVENT:
	case UABI_OBJ_CM_CHANNEL:
		return UABI_MAX_CHANNELS_PER_USER;
	case UABI_OBJ_CM_ID:
		return UABI_MAX_CM_IDS_PER_USER;
	}
	return U32_MAX;
}

/* Charges one object of @type to the context's user; -ENOMEM over the
 * limit, as a driver answers past its max_*. */
static int user_charge(struct uabi_context *ctx, u16 type)
{
	atomic_t *c;

	if (type >= 16 || !ctx->user)
		return 0;
	c = &ctx->user->counts[type];
	if ((u32)atomic_inc_return(c) > uabi_user_limit(ctx->dev, type)) {
		atomic_dec(c);
		return -ENOMEM;
	}
	return 0;
}

static void user_uncharge(struct uabi_context *ctx, u16 type)
{
	if (type < 16 && ctx->user)
		atomic_dec(&ctx->user->counts[type]);
}

/* ------------------------------------------------------ create / destroy */
struct uabi_uobject *uabi_uobj_alloc(struct uabi_context *ctx, u16 type)
{
	const struct uabi_object_def *def = uabi_object_def(ctx->dev, type);
	struct uabi_uobject *uobj;
	int ret;

	if (WARN_ON(!def))
		return ERR_PTR(-EINVAL);
	ret = user_charge(ctx, type);
	if (ret)
		return ERR_PTR(ret);
	/* Charged to the caller's memory cgroup in the kernel. */
	uobj = kzalloc(sizeof(*uobj) + def->data_size, GFP_KERNEL_ACCOUNT);
	if (!uobj) {
		user_uncharge(ctx, type);
		return ERR_PTR(-ENOMEM);
	}
	uobj->def = def;
	uobj->ctx = ctx;
	INIT_LIST_HEAD(&uobj->ctx_node);
	ret = table_alloc(ctx, uobj);
	if (ret) {
		kfree(uobj);
		user_uncharge(ctx, type);
		return ERR_PTR(ret);
	}
	return uobj;
}

int uabi_uobj_add_dep(struct uabi_uobject *uobj, struct uabi_uobject *dep)
{
	if (WARN_ON(uobj->num_deps >= UABI_MAX_DEPS || dep->ctx != uobj->ctx))
		return -EINVAL;
	atomic_inc(&dep->usecnt);
	uobj->deps[uobj->num_deps++] = dep;
	return 0;
}

void uabi_uobj_replace_dep(struct uabi_uobject *uobj, struct uabi_uobject *from,
			   struct uabi_uobject *to)
{
	u8 i;

	for (i = 0; i < uobj->num_deps; i++) {
		if (uobj->deps[i] == from) {
			atomic_inc(&to->usecnt);
			atomic_dec(&from->usecnt);
			uobj->deps[i] = to;
			return;
		}
	}
	WARN_ON(1);
}

static void drop_deps(struct uabi_uobject *uobj)
{
	while (uobj->num_deps)
		atomic_dec(&uobj->deps[--uobj->num_deps]->usecnt);
}

void uabi_uobj_commit(struct uabi_uobject *uobj)
{
	struct uabi_context *ctx = uobj->ctx;

	mutex_lock(&ctx->table_lock);
	uobj->committed = true;
	list_add(&uobj->ctx_node, &ctx->objects);
	mutex_unlock(&ctx->table_lock);
	uabi_count(ctx, uobj->def->id, +1);
}

void uabi_uobj_abort(struct uabi_uobject *uobj)
{
	drop_deps(uobj);
	table_remove(uobj);
	user_uncharge(uobj->ctx, uobj->def->id);
	kfree(uobj);
}

int uabi_uobj_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	int ret;

	if (atomic_read(&uobj->usecnt))
		return -EBUSY;
	ret = uobj->def->destroy ? uobj->def->destroy(uobj, why) : 0;
	if (ret)
		return ret;
	drop_deps(uobj);
	table_remove(uobj);
	uabi_count(uobj->ctx, uobj->def->id, -1);
	user_uncharge(uobj->ctx, uobj->def->id);
	kfree(uobj);
	return 0;
}

/* -------------------------------------------------------------- contexts */
/* The user of @uid, made on its first context; called with dev->lock. */
static struct uabi_user *user_get_locked(struct uabi_device *dev, u32 uid)
{
	struct uabi_user *u;
	int ret;

	list_for_each_entry(u, &dev->users, dev_node) {
		if (u->uid == uid) {
			u->refcnt++;
			return u;
		}
	}
	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return ERR_PTR(-ENOMEM);
	u->uid = uid;
	u->refcnt = 1;
	if (dev->ops->user_open) {
		ret = dev->ops->user_open(dev, u);
		if (ret) {
			kfree(u);
			return ERR_PTR(ret);
		}
	}
	list_add_tail(&u->dev_node, &dev->users);
	return u;
}

static void user_put_locked(struct uabi_device *dev, struct uabi_user *u)
{
	if (--u->refcnt)
		return;
	list_del(&u->dev_node);
	if (dev->ops->user_close)
		dev->ops->user_close(dev, u);
	kfree(u);
}

struct uabi_context *uabi_context_open(struct uabi_device *dev,
				       const struct uabi_host_ops *host,
				       void *host_priv,
				       const struct uabi_peer *peer)
{
	struct uabi_context *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	struct uabi_user *user;

	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->dev = dev;
	ctx->host = host;
	ctx->host_priv = host_priv;
	ctx->peer = *peer;
	mutex_init(&ctx->table_lock);
	INIT_LIST_HEAD(&ctx->objects);
	mutex_lock(&dev->lock);
	user = user_get_locked(dev, peer->uid);
	if (IS_ERR(user)) {
		mutex_unlock(&dev->lock);
		kfree(ctx);
		return ERR_CAST(user);
	}
	ctx->user = user;
	if (!++dev->last_context_id)
		++dev->last_context_id;		/* 0 starts a listing */
	ctx->id = dev->last_context_id;
	list_add_tail(&ctx->dev_node, &dev->contexts);
	mutex_unlock(&dev->lock);
	atomic_inc(&dev->num_contexts);
	return ctx;
}

/*
 * No command of a closing context runs, but a listing of its user's
 * objects may be describing one under table_lock: the exclusive lock,
 * taken under table_lock, waits that out and makes later listings skip
 * the object (they never hold a shared lock without table_lock).
 */
static int close_destroy(struct uabi_uobject *uobj)
{
	int ret;

	mutex_lock(&uobj->ctx->table_lock);
	ret = uabi_uobj_trylock_destroy(uobj);	/* -EBUSY: dependents left */
	mutex_unlock(&uobj->ctx->table_lock);
	if (ret)
		return ret;
	ret = uabi_uobj_destroy(uobj, UABI_DESTROY_CLOSE);
	if (ret)
		uabi_uobj_unlock(uobj, UABI_ACCESS_DESTROY);
	return ret;
}

/*
 * Destroys everything the context owns.  Objects only depend on older
 * objects of their own context, so one newest-first pass normally frees
 * everything; the loop retries in case a destroy hook answered -EBUSY
 * because of an ordering it could not see.
 */
void uabi_context_close(struct uabi_context *ctx)
{
	struct uabi_device *dev = ctx->dev;
	bool progress = true;

	while (!list_empty(&ctx->objects) && progress) {
		struct uabi_uobject *uobj, *next;

		progress = false;
		list_for_each_entry_safe(uobj, next, &ctx->objects, ctx_node) {
			if (!close_destroy(uobj))
				progress = true;
		}
	}
	WARN_ON(!list_empty(&ctx->objects));

	mutex_lock(&dev->lock);
	list_del(&ctx->dev_node);
	user_put_locked(dev, ctx->user);
	mutex_unlock(&dev->lock);
	atomic_dec(&dev->num_contexts);
	kvfree(ctx->table);
	kfree(ctx);
}

/* ------------------------------------------------------------- listing */
static bool after_cursor(const struct uabi_object_cursor *after, u32 ctx_id,
			 u32 handle)
{
	return ctx_id > after->context ||
	       (ctx_id == after->context && handle > after->handle);
}

/* Called with dev->lock and ctx->table_lock held. */
static void describe(struct uabi_context *ctx, struct uabi_uobject *uobj,
		     struct uabi_object_info *o)
{
	memset(o, 0, sizeof(*o));
	o->context = ctx->id;
	o->pid = ctx->peer.pid;
	o->uid = ctx->peer.uid;
	o->type = uobj->def->id;
	o->handle = uobj->handle;
	o->user_handle = uobj->user_handle;
	/* A command holding it exclusively may be changing or destroying
	 * it: its type data is not read then. */
	if (uobj_trylock(uobj, UABI_ACCESS_READ)) {
		o->flags |= UABI_OBJECT_INFO_F_BUSY;
		return;
	}
	if (uobj->def->fill_info)
		uobj->def->fill_info(uobj, o);
	uabi_uobj_unlock(uobj, UABI_ACCESS_READ);
}

/*
 * dev->lock keeps the context list and shared XRC receive QPs still, each
 * context's table_lock its table; each object is read under its shared
 * lock.  Handles ascend with the table index, contexts with their id
 * along dev->contexts (appended in the order they opened).
 */
int uabi_list_objects(struct uabi_context *caller, u32 scope,
		      const struct uabi_object_cursor *after,
		      struct uabi_object_list *out, u32 room)
{
	struct uabi_device *dev = caller->dev;
	struct uabi_context *ctx;
	u32 i;

	out->count = 0;
	out->more = 0;
	mutex_lock(&dev->lock);
	list_for_each_entry(ctx, &dev->contexts, dev_node) {
		if (scope == UABI_LIST_CONTEXT ? ctx != caller
					       : ctx->user != caller->user)
			continue;
		if (ctx->id < after->context)
			continue;
		mutex_lock(&ctx->table_lock);
		for (i = UABI_HANDLE_FIRST; i < ctx->table_size && !out->more; i++) {
			struct uabi_uobject *uobj = ctx->table[i];

			if (!uobj || !uobj->committed ||
			    !after_cursor(after, ctx->id, i))
				continue;
			if (out->count == room)
				out->more = 1;
			else
				describe(ctx, uobj, &out->entries[out->count++]);
		}
		mutex_unlock(&ctx->table_lock);
		if (out->more)
			break;
	}
	mutex_unlock(&dev->lock);
	return 0;
}
