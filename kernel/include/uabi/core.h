/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Internal interface of the object core: objects, contexts, method tables,
 * the dispatcher's call bundle, and what hosts and drivers plug in.
 *
 * Locking, outermost first:
 *   dev->lock       device-wide shared state: XRC domains and receive QPs,
 *                   the QPN/key/number allocators of a driver.
 *   ctx->table_lock a context's handle table and object list; never held
 *                   while a handler runs.
 *   uobj->lock      per-object shared/exclusive try-lock taken by the
 *                   dispatcher for the duration of one command; a conflict
 *                   answers -EBUSY (as uverbs does) instead of waiting.
 *   evq->lock       an event queue's pending list (may be taken from any
 *                   context that raises an event).
 * Object lifetime is decided in objects.c only.
 */
#ifndef UABI_CORE_H
#define UABI_CORE_H

#include <uabi/port.h>
#include <rdma/uabi.h>

struct uabi_device;
struct uabi_context;
struct uabi_uobject;
struct uabi_call;

/* ------------------------------------------------------------ host hooks */
struct uabi_file_id {
	u64 dev;
	u64 ino;
};

struct uabi_peer {
	s32 pid;
	u32 uid;
	u32 gid;
};

/* What differs between the kernel module, the daemon and the in-process
 * host.  Everything else is shared code.  Hooks that act for the command
 * being executed get its struct uabi_call, whose host_call is what the
 * host passed to uabi_execute() (the kernel: where the fds the message
 * creates wait until the message is copied back). */
struct uabi_host_ops {
	/* Identity of the file behind an fd attribute (XRCD key). */
	int (*file_identity)(struct uabi_context *ctx, s32 fd,
			     struct uabi_file_id *id);
	/* A pollable fd for an event queue; *wait is the host's object. */
	int (*evq_open)(struct uabi_call *call, void **wait, s32 *fd);
	/* Both called under evq->lock (a spinlock in the kernel): they must
	 * not sleep. */
	void (*evq_signal)(void *wait);	/* an event is pending */
	void (*evq_drain)(void *wait);	/* the queue became empty */
	/* The event queue object is gone; the fd may live on. */
	void (*evq_release)(void *wait);
	/* May this context change what every user of the device sees (a
	 * port's state)?  Kernel: CAP_NET_ADMIN; uabid: its owner or root. */
	bool (*device_admin)(struct uabi_context *ctx);
	/* Is [addr, addr + len) mapped in the calling process (call->pid,
	 * which may have imported the context), as registering memory
	 * needs?  0 or -EFAULT.  NULL: not checked. */
	int (*check_range)(struct uabi_call *call, u64 addr, u64 len);
};

/*
 * Memory a device shares with the clients that map it (the software
 * device's arenas, docs/datapath.md).  Userspace hosts: a memfd mapped in
 * the hosting process, sealed so that no client can resize it (nor write
 * a read-only one).  Kernel host: vmalloc memory charged to the caller's
 * memory cgroup, and an anonymous inode whose mmap maps it.  Given to a
 * driver when the host creates the device.
 */
struct uabi_shm_ops {
	/* Zeroed memory of @size bytes; *kaddr is where the host (and so the
	 * driver) reaches it.  Unless @writable, clients can only ever map it
	 * read-only.  Returns the host's object or an ERR_PTR. */
	void *(*create)(const char *name, size_t size, bool writable, void **kaddr);
	/* An fd through which the client of @call maps it.  Userspace hosts
	 * return their own fd (transports that cross a process boundary
	 * send a copy); the kernel installs a new fd in the caller. */
	int (*get_fd)(void *shm, struct uabi_call *call, s32 *fd);
	/* The pages [off, off + len) (page-aligned) read zero again and,
	 * where the host can, go back to the system. */
	void (*discard)(void *shm, u64 off, u64 len);
	void (*destroy)(void *shm);
};

/* -------------------------------------------------------- method tables */
/* Attributes one method may declare (the kernel stack bounds this). */
#define UABI_MAX_SPEC_ATTRS 16

/* How a method holds an object (lock modes; not to be confused with the
 * uAPI's UABI_ACCESS_* memory access bits, whose names differ). */
enum uabi_access {
	UABI_ACCESS_NONE,	/* no handle */
	UABI_ACCESS_READ,	/* shared lock */
	UABI_ACCESS_WRITE,	/* exclusive lock */
	UABI_ACCESS_DESTROY,	/* exclusive lock, must have no dependents */
};

/* A value check the dispatcher makes on an input before the handler runs
 * (-EINVAL): a __u32 at check_off of the payload, read zero-extended. */
enum uabi_value_check {
	UABI_CHECK_NONE,
	UABI_CHECK_MASK,	/* no bit outside check_a */
	UABI_CHECK_RANGE,	/* check_a <= value <= check_b */
};

struct uabi_attr_spec {
	u16 id;
	u16 flags;		/* UABI_SPEC_F_* */
	u32 min_len;		/* shorter input is EINVAL; up to max_len, the
				 * missing tail reads as zero */
	u32 max_len;		/* known size; longer input must be zero-tailed */
	u16 handle_type;	/* UABI_SPEC_F_HANDLE: object type */
	u8 access;		/* UABI_SPEC_F_HANDLE: enum uabi_access */
	u8 check;		/* enum uabi_value_check */
	u16 check_off;
	u32 check_a, check_b;
};

struct uabi_method_def {
	u16 id;
	u16 flags;		/* UABI_SPEC_F_METHOD_* */
	u8 handle_access;	/* enum uabi_access for cmd_hdr.handle */
	u16 handle_type;	/* object type of cmd_hdr.handle, 0 = own type */
	/* UABI_SPEC_F_METHOD_CREATES: the type of the object it creates (0 =
	 * its own).  The dispatcher allocates it (charged to the caller's
	 * user, in call->created) before the handler runs, which fills its
	 * type data, and commits it after the handler succeeded or destroys
	 * it otherwise. */
	u16 creates;
	/* Changes objects other than its handle (XRC by qpn): never allowed
	 * in an all-or-nothing message, whose rollback could not undo it. */
	bool reaches_beyond_handle;
	/* Whether the device can do it at all (a driver op it needs is
	 * there); NULL: always.  An unsupported method is left out of
	 * discovery and answers -EOPNOTSUPP before its handler would run. */
	bool (*supported)(const struct uabi_device *dev);
	int (*handler)(struct uabi_call *call);
	const struct uabi_attr_spec *attrs;
	u16 num_attrs;
};

/* Why an object is destroyed; a type (and its driver) may act on it. */
enum uabi_destroy_reason {
	UABI_DESTROY_USER,	/* a DESTROY command, or an XRC unregistration */
	UABI_DESTROY_CLOSE,	/* its context is closing (close(), exit, death) */
	UABI_DESTROY_ROLLBACK,	/* undoing a create: the command or its
				 * all-or-nothing message failed */
};

struct uabi_object_def {
	u16 id;
	const char *name;
	u32 data_size;		/* bytes of type data after struct uabi_uobject */
	/* Releases what the type owns; called on DESTROY, on context close
	 * and on chain rollback (@why says which).  May fail only with
	 * -EBUSY. */
	int (*destroy)(struct uabi_uobject *uobj, enum uabi_destroy_reason why);
	/* Describes a live object for DEVICE / LIST_OBJECTS: the fields of
	 * @info that belong to the type (the core filled the common ones).
	 * Called under dev->lock with the object's shared lock held; NULL
	 * when the type has nothing to add. */
	void (*fill_info)(struct uabi_uobject *uobj, struct uabi_object_info *info);
	const struct uabi_method_def *methods;
	u16 num_methods;
};

#define UABI_METHODS(...) \
	.methods = (const struct uabi_method_def[]){ __VA_ARGS__ }, \
	.num_methods = sizeof((const struct uabi_method_def[]){ __VA_ARGS__ }) / \
		       sizeof(struct uabi_method_def)
#define UABI_ATTRS(...) \
	.attrs = (const struct uabi_attr_spec[]){ __VA_ARGS__ }, \
	.num_attrs = sizeof((const struct uabi_attr_spec[]){ __VA_ARGS__ }) / \
		     sizeof(struct uabi_attr_spec)
#define UABI_IN(_id, _type, _flags) \
	{ .id = (_id), .flags = (_flags), .min_len = sizeof(_type), \
	  .max_len = sizeof(_type) }
/* Bytes of _type up to the end of _field: an input's declared minimum. */
#define UABI_END(_type, _field) \
	(offsetof(_type, _field) + sizeof(((_type *)0)->_field))
/* An input struct accepted from _min bytes on (an older, shorter version
 * of it): the rest reads as zero. */
#define UABI_IN_MIN(_id, _type, _min, _flags) \
	{ .id = (_id), .flags = (_flags), .min_len = (_min), \
	  .max_len = sizeof(_type) }
/* A __u32 input of flag bits, all within _mask. */
#define UABI_IN_FLAGS(_id, _mask, _flags) \
	{ .id = (_id), .flags = (_flags), .min_len = sizeof(u32), \
	  .max_len = sizeof(u32), .check = UABI_CHECK_MASK, .check_a = (_mask) }
/* A __u32 input of an enum, from _lo to _hi. */
#define UABI_IN_ENUM(_id, _lo, _hi, _flags) \
	{ .id = (_id), .flags = (_flags), .min_len = sizeof(u32), \
	  .max_len = sizeof(u32), .check = UABI_CHECK_RANGE, .check_a = (_lo), \
	  .check_b = (_hi) }
/* An input struct (from _min bytes) with a __u32 field of flag bits, all
 * within _mask, or of an enum from _lo to _hi. */
#define UABI_IN_FIELD_FLAGS(_id, _type, _min, _field, _mask, _flags) \
	{ .id = (_id), .flags = (_flags), .min_len = (_min), \
	  .max_len = sizeof(_type), .check = UABI_CHECK_MASK, \
	  .check_off = offsetof(_type, _field), .check_a = (_mask) }
#define UABI_IN_FIELD_ENUM(_id, _type, _min, _field, _lo, _hi, _flags) \
	{ .id = (_id), .flags = (_flags), .min_len = (_min), \
	  .max_len = sizeof(_type), .check = UABI_CHECK_RANGE, \
	  .check_off = offsetof(_type, _field), .check_a = (_lo), \
	  .check_b = (_hi) }
#define UABI_OUT(_id, _type, _flags) \
	{ .id = (_id), .flags = UABI_SPEC_F_OUTPUT | (_flags), \
	  .min_len = sizeof(_type), .max_len = sizeof(_type) }
#define UABI_HANDLE(_id, _type, _access, _flags) \
	{ .id = (_id), .flags = UABI_SPEC_F_HANDLE | (_flags), \
	  .min_len = sizeof(u32), .max_len = sizeof(u32), \
	  .handle_type = (_type), .access = (_access) }
#define UABI_FD_IN(_id, _flags) \
	{ .id = (_id), .flags = UABI_SPEC_F_FD | (_flags), \
	  .min_len = sizeof(s32), .max_len = sizeof(s32) }
#define UABI_FD_OUT(_id, _flags) \
	{ .id = (_id), .flags = UABI_SPEC_F_FD | UABI_SPEC_F_OUTPUT | (_flags), \
	  .min_len = sizeof(s32), .max_len = sizeof(s32) }
#define MAND UABI_SPEC_F_MANDATORY

/* Handler of DESTROY methods: the dispatcher itself destroys the target
 * after the locks and dependency checks; types release in ->destroy. */
int uabi_destroy_handler(struct uabi_call *call);
#define UABI_DESTROY_METHOD \
	{ .id = UABI_METHOD_DESTROY, .handle_access = UABI_ACCESS_DESTROY, \
	  .handler = uabi_destroy_handler }

/* Fills a discovery buffer (discovery.c). */
int uabi_discover(struct uabi_device *dev, struct uabi_discovery *out, u32 len);

/* ---------------------------------------------------------------- objects */
#define UABI_MAX_DEPS 6

struct uabi_uobject {
	const struct uabi_object_def *def;
	struct uabi_context *ctx;
	u32 handle;
	u64 serial;		/* unique in its context, never reused */
	atomic_t usecnt;	/* objects depending on this one */
	atomic_t lock;		/* >0 shared holders, -1 exclusive */
	struct list_head ctx_node; /* context's object list, newest first */
	struct uabi_uobject *deps[UABI_MAX_DEPS];
	u8 num_deps;
	bool committed;
	u64 user_handle;
	u64 data[];		/* type data, data_size bytes */
};

static inline void *uobj_data(struct uabi_uobject *uobj)
{
	return uobj->data;
}

/* The uobject whose type data @data is (the inverse of uobj_data()): for
 * drivers that keep the core's type structs (a struct uabi_srq...) in
 * their tables and need the handle or user handle of one. */
static inline struct uabi_uobject *uabi_uobj_of(void *data)
{
	return container_of(data, struct uabi_uobject, data);
}

/* objects.c: the only place that decides object lifetime. */
struct uabi_uobject *uabi_uobj_lookup(struct uabi_context *ctx, u32 handle,
				      u16 type, u8 access);
void uabi_uobj_unlock(struct uabi_uobject *uobj, u8 access);
/* Destroys a locked, committed object; -EBUSY if something depends on it. */
int uabi_uobj_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why);
void uabi_uobj_commit(struct uabi_uobject *uobj);
void uabi_uobj_abort(struct uabi_uobject *uobj);
/* Takes the exclusive lock of an object found without the dispatcher. */
int uabi_uobj_trylock_destroy(struct uabi_uobject *uobj);

/* DEVICE / LIST_OBJECTS (objects.c): the live objects of the caller's
 * context or of every context of its user (@scope, UABI_LIST_*), ordered
 * by context and handle, after @after; at most @room entries into @out,
 * whose more says whether others were left. */
int uabi_list_objects(struct uabi_context *caller, u32 scope,
		      const struct uabi_object_cursor *after,
		      struct uabi_object_list *out, u32 room);

/* Records that @uobj needs @dep (same context) for its whole life:
 * @dep cannot be destroyed (-EBUSY) until @uobj is. */
int uabi_uobj_add_dep(struct uabi_uobject *uobj, struct uabi_uobject *dep);
/* @uobj needs @to instead of @from from now on (a re-registered MR's PD). */
void uabi_uobj_replace_dep(struct uabi_uobject *uobj, struct uabi_uobject *from,
			   struct uabi_uobject *to);

/* ------------------------------------------------------------------ users */
/*
 * What one user (uid) holds on a device, over all of its contexts: the
 * device's max_* attributes are limits per user, checked when an object
 * is created (uabi_uobj_alloc), so that no user can take what another
 * needs (docs/security.md).  A driver may keep its per-user state in
 * @drv (the software device: the user's own arena).  Found and counted
 * under dev->lock; the counts are atomic.
 */
struct uabi_user {
	struct list_head dev_node;	/* dev->users */
	u32 uid;
	u32 refcnt;			/* contexts */
	atomic_t counts[16];		/* objects, by type */
	void *drv;
};

/* Objects of @type one user may hold (the device's max_*). */
u32 uabi_user_limit(const struct uabi_device *dev, u16 type);

/* --------------------------------------------------------------- contexts */
struct uabi_context {
	struct uabi_device *dev;
	u32 id;				/* the device's number for it, from 1 */
	const struct uabi_host_ops *host;
	void *host_priv;
	struct uabi_peer peer;
	struct uabi_user *user;		/* peer.uid's, shared by its contexts */
	struct mutex table_lock;
	struct list_head dev_node;	/* dev->contexts */
	struct uabi_uobject **table;	/* handle -> object */
	u32 table_size;
	u32 next_hint;
	u64 next_serial;		/* under table_lock */
	struct list_head objects;	/* newest first */
	atomic_t counts[16];		/* live objects of this context */
	struct uabi_uobject *async_evq;	/* the context's async event queue */
	bool fatal_told;		/* heard DEVICE_FATAL (dev->lock) */
};

struct uabi_context *uabi_context_open(struct uabi_device *dev,
				       const struct uabi_host_ops *host,
				       void *host_priv,
				       const struct uabi_peer *peer);
void uabi_context_close(struct uabi_context *ctx);

/* Executes a message in place; see docs/uapi.md.  Returns the message
 * status (0 or -errno).  @host_call is the host's own state for this one
 * call (NULL if it keeps none); handlers and hooks find it in
 * call->host_call, so no host has to work out which call is running. */
int uabi_execute(struct uabi_context *ctx, void *msg, size_t len,
		 void *host_call);
/* The same for a call of process @pid, which need not be the context's
 * opener: a context can be shared (imported) by several processes, and
 * each object records the process whose call created it (call->pid). */
int uabi_execute_as(struct uabi_context *ctx, void *msg, size_t len,
		    void *host_call, s32 pid);

/* ------------------------------------------------------ the call bundle */
struct uabi_attr_slot {
	struct uabi_attr *attr;		/* NULL when absent */
	void *payload;
	struct uabi_uobject *uobj;	/* handle attributes, locked */
};

#define UABI_CALL_IDS 32

struct uabi_call {
	struct uabi_context *ctx;
	struct uabi_device *dev;
	const struct uabi_object_def *object;
	const struct uabi_method_def *method;
	struct uabi_cmd_hdr *hdr;
	struct uabi_uobject *target;	/* cmd_hdr.handle, locked */
	struct uabi_uobject *created;	/* METHOD_CREATES: the new object */
	bool all_or_nothing;		/* the message is UABI_MSG_F_ALL_OR_NOTHING */
	u32 index;			/* of this command in its message */
	void *host_call;		/* as passed to uabi_execute() */
	/* The process whose call this is: the context's opener, or one that
	 * imported the context (ibv_import_device(3)).  Objects that the data
	 * path reaches in a process's memory record it at creation. */
	s32 pid;
	/* The slot of the method's attribute of each id below
	 * UABI_CALL_IDS, -1 if it has none (others are looked for). */
	s8 slot_by_id[UABI_CALL_IDS];
	struct uabi_attr_slot slots[UABI_MAX_SPEC_ATTRS];
};

/* Attribute access for handlers; @id is looked up in the method's specs. */
bool uabi_attr_present(const struct uabi_call *call, u16 id);
/* Copies the payload, zero-filling up to @size; -ENOENT if absent. */
int uabi_attr_get(const struct uabi_call *call, u16 id, void *dst, size_t size);
/* Returns @dflt if the attribute is absent. */
u32 uabi_attr_get_u32(const struct uabi_call *call, u16 id, u32 dflt);
u64 uabi_attr_get_u64(const struct uabi_call *call, u16 id, u64 dflt);
struct uabi_uobject *uabi_attr_uobj(const struct uabi_call *call, u16 id);
/* Writes an output attribute; absent outputs are silently skipped. */
int uabi_attr_put(struct uabi_call *call, u16 id, const void *src, size_t size);
/* Output buffer of an attribute, and its length (for variable outputs). */
void *uabi_attr_out_buf(struct uabi_call *call, u16 id, u32 *len);

/* A new, uncommitted object of @type in @ctx, charged to its user (the
 * dispatcher's, for creating methods); -ENOMEM past the user's limit. */
struct uabi_uobject *uabi_uobj_alloc(struct uabi_context *ctx, u16 type);

/* The definition of a core or driver object type; NULL if unknown. */
const struct uabi_object_def *uabi_object_def(struct uabi_device *dev, u16 type);

/* --------------------------------------------------------------- devices */
#define UABI_MAX_PORTS 2

struct uabi_device_ops;

struct uabi_device {
	char name[64];
	const struct uabi_device_ops *ops;
	void *drv;
	struct uabi_device_attr attr;	/* cached at registration */
	struct mutex lock;
	struct list_head xrcds;		/* struct uabi_xrcd_shared */
	struct list_head rcv_qps;	/* struct uabi_qp with type XRC_RECV */
	struct list_head contexts;	/* for async events to every context */
	struct list_head users;		/* struct uabi_user */
	struct list_head cm_ids;	/* every CM ID (types_cm.c), under lock */
	atomic_t counts[16];
	atomic_t num_contexts;
	u32 last_context_id;		/* under lock */
};

int uabi_device_register(struct uabi_device *dev);
void uabi_device_unregister(struct uabi_device *dev);
struct uabi_device *uabi_device_get(u32 index);

static inline void uabi_count(struct uabi_context *ctx, u16 type, int delta)
{
	if (type < 16) {
		if (delta > 0) {
			atomic_inc(&ctx->counts[type]);
			atomic_inc(&ctx->dev->counts[type]);
		} else {
			atomic_dec(&ctx->counts[type]);
			atomic_dec(&ctx->dev->counts[type]);
		}
	}
}

/* -------------------------------------------------- core object types */
struct uabi_pd {
	struct uabi_user *user;
	void *drv;
};

struct uabi_mr {
	struct uabi_mr_reg reg;
	u32 lkey;
	u32 rkey;
	s32 pid;			/* the registering process (call->pid) */
	struct uabi_context *ctx;
	struct uabi_pd *pd;
	void *drv;
};

struct uabi_evq {
	spinlock_t lock;
	struct list_head pending;	/* struct uabi_event_node */
	u32 num_pending;
	void *wait;			/* host object behind the fd */
	s32 fd;
	bool is_async;
};

struct uabi_cq {
	u32 cqe;
	u32 cqn;
	u32 comp_vector;
	struct uabi_uobject *channel;	/* completion channel or NULL */
	struct uabi_uobject *uobj;
	s32 pid;			/* the creating process (call->pid) */
	void *drv;
};

struct uabi_srq {
	struct uabi_srq_attr attr;
	u32 srq_type;
	u32 srqn;
	struct uabi_xrcd_shared *xrcd;
	struct uabi_context *ctx;	/* creator */
	s32 pid;			/* the creating process (call->pid) */
	struct uabi_pd *pd;
	struct uabi_cq *cq;		/* XRC */
	void *drv;
};

struct uabi_ah {
	struct uabi_ah_attr attr;
	void *drv;
};

/* A memory window.  While bound it holds a use count on its MR's uobject
 * (the MR cannot be deregistered meanwhile: -EBUSY).  Its binding changes
 * only through uabi_mw_set_binding(), which the driver calls under the lock
 * that orders its binds and invalidations (an invalidation may come from
 * another context of the user: a peer's SEND_WITH_INV). */
struct uabi_mw {
	u32 type;			/* UABI_MW_TYPE_* */
	u32 rkey;			/* the current key */
	struct uabi_context *ctx;
	struct uabi_pd *pd;
	struct uabi_uobject *bound_mr;	/* NULL: not bound */
	u32 qpn;			/* type 2: bound through this QP (driver's) */
	void *drv;
};

/* The window is bound to @mr (NULL: to nothing) under @rkey: moves the
 * hold from the old MR to the new one. */
void uabi_mw_set_binding(struct uabi_mw *mw, struct uabi_mr *mr, u32 rkey);

/* A QP.  Ordinary QPs belong to one uobject; an XRC receive QP belongs to
 * its domain and lives while any registration (a QP uobject of type
 * XRC_RECV in some context) does. */
struct uabi_qp {
	u32 qpn;
	u32 qp_type;
	u32 state;
	struct uabi_qp_init init;
	struct uabi_qp_attr attr;	/* current attributes */
	struct uabi_cq *send_cq;
	struct uabi_cq *recv_cq;
	struct uabi_srq *srq;
	struct uabi_context *ctx;	/* creator; NULL for XRC_RECV */
	s32 pid;			/* the creating process; 0 for XRC_RECV */
	struct uabi_user *user;		/* whose: the creator's, or the domain's */
	struct uabi_pd *pd;		/* NULL for XRC_RECV */
	struct uabi_xrcd_shared *xrcd;	/* XRC_RECV */
	struct list_head dev_node;	/* dev->rcv_qps */
	struct list_head regs;		/* struct uabi_qp_handle (XRC_RECV) */
	u32 num_regs;
	struct list_head mcast;		/* groups attached (UD), types_qp.c */
	struct uabi_uobject *owner;	/* the QP's uobject; NULL for XRC_RECV */
	void *drv;
};

/* Type data of a QP uobject. */
struct uabi_qp_handle {
	struct uabi_qp *qp;
	struct uabi_uobject *uobj;
	struct list_head reg_node;	/* qp->regs (XRC_RECV) */
};

/* An XRC domain shared by every context that opened the same file. */
struct uabi_xrcd_shared {
	struct uabi_file_id id;
	u32 uid;			/* the user whose domain it is */
	bool anonymous;			/* opened with fd -1 */
	u32 refcnt;			/* under dev->lock */
	struct list_head dev_node;
	void *drv;
};

struct uabi_xrcd {
	struct uabi_xrcd_shared *shared;
};

/* QP state machine (qp_state.c).  Validates a transition of a QP of
 * @qp_type from @cur with @mask; 0 or -EINVAL. */
int uabi_qp_check_transition(u32 qp_type, u32 cur, u32 next, u32 mask);
/* Validates and applies @mask of @attr to @qp (state included): the
 * complete check runs before anything changes. */
int uabi_qp_modify(struct uabi_device *dev, struct uabi_qp *qp,
		   const struct uabi_qp_attr *attr, u32 mask);

/* Create-with-attributes: RESET up to attr->qp_state in one go. */
int uabi_qp_walk_to_state(struct uabi_device *dev, struct uabi_qp *qp,
			  const struct uabi_qp_attr *attr, u32 mask);
int uabi_check_ah_attr(struct uabi_device *dev, const struct uabi_ah_attr *ah);

/* Events */
void uabi_evq_push(struct uabi_uobject *evq_uobj, const struct uabi_event *ev);
/* Raises an async event on every context that should see it. */
void uabi_raise_async_event(struct uabi_device *dev, struct uabi_context *only,
			    const struct uabi_event *ev);
void uabi_raise_qp_event_locked(struct uabi_device *dev, struct uabi_qp *qp,
				struct uabi_uobject *owner, u32 event_type);
/* The device is going (its link deleted while in use): every context open
 * on it hears IBV_EVENT_DEVICE_FATAL once, so that its program closes it. */
void uabi_device_fatal(struct uabi_device *dev);
int uabi_evq_pop(struct uabi_uobject *evq_uobj, struct uabi_event *ev);
void uabi_evq_flush(struct uabi_evq *evq);
/* A completion event on the CQ's channel (called by a driver). */
void uabi_cq_comp_event(struct uabi_cq *cq);

/* Per-type definitions, one file each. */
extern const struct uabi_object_def uabi_type_device;
extern const struct uabi_object_def uabi_type_pd;
extern const struct uabi_object_def uabi_type_mr;
extern const struct uabi_object_def uabi_type_cq;
extern const struct uabi_object_def uabi_type_comp_channel;
extern const struct uabi_object_def uabi_type_async_event;
extern const struct uabi_object_def uabi_type_qp;
extern const struct uabi_object_def uabi_type_srq;
extern const struct uabi_object_def uabi_type_ah;
extern const struct uabi_object_def uabi_type_xrcd;
extern const struct uabi_object_def uabi_type_mw;
extern const struct uabi_object_def uabi_type_cm_channel;
extern const struct uabi_object_def uabi_type_cm_id;

/* XRC (types_xrcd.c) */
/* Registers the calling context on receive QP *qpn of @xrcd, creating it
 * when *qpn is UABI_XRC_QPN_CREATE (optionally walked to attr->qp_state).
 * The registration is call->created. */
int uabi_xrc_register(struct uabi_call *call, struct uabi_uobject *xrcd_uobj,
		      u32 *qpn, const struct uabi_qp_init *init,
		      u64 user_handle, const struct uabi_qp_attr *attr,
		      u32 mask);
/* Drops one registration; the QP goes with the last one. */
int uabi_xrc_unregister(struct uabi_device *dev, struct uabi_qp_handle *reg,
			enum uabi_destroy_reason why);
void uabi_qp_fill_query(struct uabi_call *call, const struct uabi_qp *qp,
			u16 attr_id);
struct uabi_qp_handle *uabi_xrc_find_reg(struct uabi_context *ctx,
					 struct uabi_xrcd_shared *xrcd, u32 qpn);
int uabi_qp_handle_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why);

#include <uabi/driver.h>

#endif /* UABI_CORE_H */
