// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The connection manager: CM channels (event queues with a pollable fd)
 * and CM IDs (endpoints).  Connections are made inside the core, between
 * IDs of any contexts of the device (docs/cm.md):
 *
 *   active                          passive (listener's channel)
 *   RESOLVE_ADDR, RESOLVE_ROUTE
 *   CONNECT  ----------------------> CONNECT_REQUEST (GET_EVENT creates the ID)
 *   CONNECT_RESPONSE <-------------- ACCEPT
 *   ACCEPT (the RTU) --------------> ESTABLISHED
 *   DISCONNECT or close: DISCONNECTED on both sides
 *
 * Locking: every CM ID's state, its peer link and the device's list of IDs
 * are under dev->lock; a channel's pending list is also under dev->lock
 * (events are queued and taken only with it held), and chan->lock orders
 * the host's signal and drain as in uabi_evq_push().  An ID holds its
 * channel (a dependency), so a channel outlives the IDs that queue on it;
 * a peer link is cut, under dev->lock, by whichever side goes first.
 *
 * One file past 800 lines: the state machine above, its events and the
 * listener table share every lock and helper.  Connections with the CM
 * of another host (CM MADs on QP1 over RoCEv2, docs/cm.md) are cm_mad.c's;
 * the handlers here hand an ID whose peer is across the wire to it.
 */
#include <uabi/core.h>

#include "cm.h"

static u16 next_port = CM_PORT_FIRST;	/* under dev->lock */

/* ------------------------------------------------------------- addresses */
u16 cm_addr_family(const struct uabi_cm_addr *a)
{
	u16 f;

	memcpy(&f, a->bytes, sizeof(f));
	return f;
}

u16 cm_addr_port(const struct uabi_cm_addr *a)
{
	return (u16)(a->bytes[2] << 8 | a->bytes[3]);
}

void cm_addr_set_port(struct uabi_cm_addr *a, u16 port)
{
	a->bytes[2] = (u8)(port >> 8);
	a->bytes[3] = (u8)port;
}

/* The IP address bytes of @a: offset and length; 0 for other families. */
u32 cm_addr_ip(const struct uabi_cm_addr *a, u32 *len)
{
	switch (cm_addr_family(a)) {
	case UABI_CM_AF_INET:
		*len = 4;
		return 4;
	case UABI_CM_AF_INET6:
		*len = 16;
		return 8;
	}
	*len = 0;
	return 0;
}

static bool addr_valid(const struct uabi_cm_addr *a)
{
	u32 len;

	return cm_addr_ip(a, &len) != 0;
}

static bool addr_any(const struct uabi_cm_addr *a)
{
	u32 len, off = cm_addr_ip(a, &len), i;

	for (i = 0; i < len; i++)
		if (a->bytes[off + i])
			return false;
	return true;
}

/* An IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address? */
static bool addr_multicast(const struct uabi_cm_addr *a)
{
	u32 len, off = cm_addr_ip(a, &len);

	if (len == 4)
		return (a->bytes[off] & 0xf0) == 0xe0;
	return len == 16 && a->bytes[off] == 0xff;
}

/* The loopback address of @a's family, port 0. */
static void addr_loopback(struct uabi_cm_addr *a)
{
	u16 f = cm_addr_family(a);

	memset(a, 0, sizeof(*a));
	memcpy(a->bytes, &f, sizeof(f));
	if (f == UABI_CM_AF_INET) {
		a->bytes[4] = 127;
		a->bytes[7] = 1;
	} else {
		a->bytes[8 + 15] = 1;
	}
}

/* Does an ID bound to @bound take traffic for @to? */
bool cm_addr_covers(const struct uabi_cm_addr *bound, const struct uabi_cm_addr *to)
{
	u32 blen, tlen, boff, toff;

	if (addr_any(bound))
		return true;
	boff = cm_addr_ip(bound, &blen);
	toff = cm_addr_ip(to, &tlen);
	return blen == tlen && !memcmp(bound->bytes + boff, to->bytes + toff, blen);
}

/* Does @id, bound in @family, keep to that family?  As Linux's cma: what
 * SET_OPTION's AFONLY said, else yes for IPv4 and no for IPv6 (the
 * bindv6only default); an unbound ID's family is IPv4's (LISTEN). */
static bool cm_afonly_in(const struct uabi_cm_id *id, u16 family)
{
	if (id->afonly_set)
		return id->afonly;
	return family != UABI_CM_AF_INET6;
}

static bool cm_afonly(const struct uabi_cm_id *id)
{
	return cm_afonly_in(id, cm_addr_family(&id->src));
}

/* Does the listener @l take a request for @to?  A wildcard takes its own
 * family's, and the other's unless it keeps to its family (Linux's
 * cma_match_private_data()). */
bool cm_listener_takes(const struct uabi_cm_id *l, const struct uabi_cm_addr *to)
{
	if (addr_any(&l->src) && cm_afonly(l) &&
	    cm_addr_family(&l->src) != cm_addr_family(to))
		return false;
	return cm_addr_covers(&l->src, to);
}

/* Keeps the family, the port and the IP address of @a; the rest (flow
 * info, scope) reads zero. */
static void addr_clean(struct uabi_cm_addr *a)
{
	struct uabi_cm_addr c;
	u32 len, off = cm_addr_ip(a, &len);

	memset(&c, 0, sizeof(c));
	memcpy(c.bytes, a->bytes, 4);
	if (len)
		memcpy(c.bytes + off, a->bytes + off, len);
	*a = c;
}

/*
 * Ports, listeners and connections are each user's own: the software
 * device lets a user's QPs reach only that user's (docs/security.md), so a
 * connection between users could carry nothing, and one user could squat
 * another's ports or fill its listeners' queues.
 */
static bool same_user(const struct uabi_cm_id *a, const struct uabi_cm_id *b)
{
	return a->uobj->ctx->user == b->uobj->ctx->user;
}

/* Who else holds @port of @ps for @addr (NULL: at all), as Linux's
 * cma_check_port(): IDs both set to reuse addresses (@reuse: the caller
 * honours that) and IDs both keeping to different families share it.
 * 0, -EADDRNOTAVAIL (a wildcard on either side) or -EADDRINUSE (the same
 * address).  dev->lock held. */
static int port_used(struct uabi_device *dev, const struct uabi_cm_id *self,
		     u16 ps, u16 port, const struct uabi_cm_addr *addr, bool reuse)
{
	struct uabi_cm_id *o;

	list_for_each_entry(o, &dev->cm_ids, dev_node) {
		if (o == self || o->ps != ps || !o->has_port || cm_addr_port(&o->src) != port ||
		    !same_user(o, self))
			continue;
		if (!addr)
			return -EADDRNOTAVAIL;
		if (reuse && self->reuseaddr && o->reuseaddr)
			continue;
		if (cm_afonly_in(self, cm_addr_family(addr)) && cm_afonly(o) &&
		    cm_addr_family(addr) != cm_addr_family(&o->src))
			continue;
		if (addr_any(addr) || addr_any(&o->src))
			return -EADDRNOTAVAIL;
		if (cm_addr_covers(&o->src, addr))
			return -EADDRINUSE;
	}
	return 0;
}

/* A free port of the device in @id's port space; dev->lock held. */
static int assign_port(struct uabi_device *dev, struct uabi_cm_id *id)
{
	u32 tries;

	for (tries = 0; tries <= CM_PORT_LAST - CM_PORT_FIRST; tries++) {
		u16 p = next_port;

		next_port = p == CM_PORT_LAST ? CM_PORT_FIRST : p + 1;
		if (!port_used(dev, id, id->ps, p, NULL, false)) {
			cm_addr_set_port(&id->src, p);
			id->has_port = true;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

/* ----------------------------------------------------------------- events */
struct uabi_cm_channel *cm_chan_of(struct uabi_cm_id *id)
{
	return uobj_data(id->channel);
}

/* Queues an event for @id; dev->lock held. */
struct cm_event_node *cm_push(struct uabi_cm_id *id, u32 event, s32 status,
				     const struct uabi_cm_conn_param *conn)
{
	struct uabi_cm_channel *ch = cm_chan_of(id);
	struct cm_event_node *n;

	/*
	 * As Linux's ucma: nothing is reported for an ID made from a request
	 * until the program accepts it (and gives it its context, the uid):
	 * the event would carry uid 0, which librdmacm takes for its own
	 * pointer.  The ID's state still changes, so its ACCEPT fails later
	 * (EINVAL).
	 */
	if (id->from_request && event != UABI_CM_EVENT_MULTICAST_JOIN &&
	    event != UABI_CM_EVENT_MULTICAST_ERROR)
		return NULL;
	if (ch->num_pending >= CM_MAX_PENDING)
		return NULL;	/* a consumer that never reads must not exhaust memory */
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	n->id = id;
	if (id->qp_type == UABI_QPT_UD) {
		/* one port, LID-addressed: the peer is reached at its LID */
		struct uabi_port_attr pa;
		struct uabi_device *dev = id->uobj->ctx->dev;

		memset(&pa, 0, sizeof(pa));
		if (!dev->ops->query_port(dev, 1, &pa))
			n->ev.ah.dlid = (u16)pa.lid;
		n->ev.ah.port_num = 1;
	}
	n->ev.event = event;
	n->ev.status = status;
	if (event == UABI_CM_EVENT_DISCONNECTED)
		id->disconnected = true;
	if (conn)
		n->ev.conn = *conn;
	spin_lock(&ch->lock);
	list_add_tail(&n->node, &ch->pending);
	ch->num_pending++;
	if (ch->wait)
		id->channel->ctx->host->evq_signal(ch->wait);
	spin_unlock(&ch->lock);
	return n;
}

void cm_unlink(struct uabi_cm_channel *ch, struct cm_event_node *n)
{
	spin_lock(&ch->lock);
	list_del(&n->node);
	ch->num_pending--;
	if (!ch->num_pending && ch->wait)
		uabi_uobj_of(ch)->ctx->host->evq_drain(ch->wait);
	spin_unlock(&ch->lock);
}

static void cm_free_node(struct cm_event_node *n)
{
	kfree(n->wire);
	kfree(n);
}

/* Drops @id's queued events; dev->lock held.  A request it made that the
 * listener has not taken stays there, to be reported and then rejected
 * (RC/UC), or is forgotten (UD). */
static void cm_drop_events(struct uabi_cm_id *id)
{
	struct uabi_cm_channel *ch = cm_chan_of(id);
	struct cm_event_node *n, *next;

	list_for_each_entry_safe(n, next, &ch->pending, node) {
		if (n->id != id)
			continue;
		if (n->wire) {
			cm_wire_drop_request(n);	/* refused over the wire */
		} else if (n->requester) {
			/* a listener going away: the requester is refused */
			n->requester->request = NULL;
			n->requester->state = UABI_CM_ROUTE_RESOLVED;
			cm_push(n->requester, UABI_CM_EVENT_REJECTED,
				UABI_CM_REJ_INVALID_SERVICE_ID, NULL);
		}
		cm_unlink(ch, n);
		cm_free_node(n);
	}
	if (id->request) {
		/* RC/UC: the listener still learns of the request, then of its
		 * REJ, as from the IB CM; a SIDR request just goes. */
		id->request->requester = NULL;
		id->request->gone = id->qp_type != UABI_QPT_UD;
		id->request = NULL;
	}
}

/* The connection parameters a peer sees of @id. */
static void conn_of(const struct uabi_cm_id *id, const struct uabi_cm_conn_param *in,
		    struct uabi_cm_conn_param *out)
{
	*out = *in;
	out->qp_num = id->qpn;
	out->qkey = 0;
	out->valid = 0;
}

/* Cuts @id from its peer, telling the peer @event; dev->lock held. */
static void cm_break(struct uabi_cm_id *id, u32 event, s32 status,
		     const struct uabi_cm_conn_param *conn)
{
	struct uabi_cm_id *peer = id->peer;

	if (!peer)
		return;
	peer->peer = NULL;
	id->peer = NULL;
	if (event == UABI_CM_EVENT_DISCONNECTED)
		peer->state = UABI_CM_DISCONNECTED;
	else
		peer->state = UABI_CM_ROUTE_RESOLVED;
	cm_push(peer, event, status, conn);
}

/* A connection inside this core timed out (cm_local_wait()), as the IB
 * CM's REQ or REP does: the side that waited gets UNREACHABLE
 * (-ETIMEDOUT), its peer the REJ, "timeout" (a request the listener has
 * not taken yet: reported, then rejected, as when its requester goes; a
 * SIDR request just goes).  dev->lock held. */
void cm_local_timeout(struct uabi_cm_id *id)
{
	kfree(id->held);	/* a request never taken: given up */
	id->held = NULL;
	if (id->state == UABI_CM_CONNECT) {
		if (id->request) {
			id->request->requester = NULL;
			id->request->gone = id->qp_type != UABI_QPT_UD;
			id->request = NULL;
		} else if (id->qp_type == UABI_QPT_UD) {
			if (id->peer)
				id->peer->peer = NULL;
			id->peer = NULL;
		} else {
			cm_break(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_TIMEOUT, NULL);
		}
		id->state = UABI_CM_ROUTE_RESOLVED;
	} else if (id->state == UABI_CM_REP_SENT) {
		cm_break(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_TIMEOUT, NULL);
		id->state = UABI_CM_DISCONNECTED;
	} else {
		return;
	}
	cm_push(id, UABI_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
}

u32 cm_psn(u32 qpn)
{
	return (qpn * 0x9e3779b1u) & 0xffffff;
}

static void fill_info(struct uabi_device *dev, const struct uabi_cm_id *id,
		      struct uabi_cm_id_info *info)
{
	struct uabi_device *link;
	struct uabi_port_attr pa;

	memset(info, 0, sizeof(*info));
	info->state = id->state;
	info->events_reported = id->events_reported;
	info->qp_type = id->qp_type;
	info->ps = id->ps;
	info->src = id->src;
	info->dst = id->dst;
	info->pkey = 0xffff;
	if (!id->on_device)
		return;
	link = cm_wire_link(id);
	if (link) {
		/* through a RoCE device: its GUID, so that librdmacm opens
		 * it; GIDs, no LIDs */
		info->node_guid = link->attr.node_guid;
		info->port_num = 1;
		info->mtu = id->mtu;
		memcpy(info->sgid, id->sgid, sizeof(info->sgid));
		memcpy(info->dgid, id->dgid, sizeof(info->dgid));
		if (id->state >= UABI_CM_ROUTE_RESOLVED && id->state != UABI_CM_LISTEN)
			info->num_paths = 1;
		return;
	}
	info->node_guid = dev->attr.node_guid;
	info->port_num = 1;
	memset(&pa, 0, sizeof(pa));
	if (!dev->ops->query_port(dev, 1, &pa)) {
		info->slid = (u16)pa.lid;
		info->dlid = (u16)pa.lid;
		info->mtu = (u8)pa.active_mtu;
	}
	if (dev->ops->query_gid && !dev->ops->query_gid(dev, 1, 0, info->sgid))
		memcpy(info->dgid, info->sgid, sizeof(info->dgid));
	if (id->state >= UABI_CM_ROUTE_RESOLVED && id->state != UABI_CM_LISTEN)
		info->num_paths = 1;
}

/* --------------------------------------------------------------- channel */
static int chan_create(struct uabi_call *call)
{
	struct uabi_cm_channel *ch = uobj_data(call->created);
	int ret;

	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->pending);
	ch->fd = -1;
	ret = call->ctx->host->evq_open(call, &ch->wait, &ch->fd);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_CM_CHANNEL_FD, &ch->fd, sizeof(ch->fd));
}

/* A connect request: the new ID, in the caller's context, takes the
 * requester as its peer; a requester gone meanwhile (RC/UC) is a REJ,
 * "timeout", right after the request.  dev->lock held. */
static int take_request(struct uabi_call *call, struct cm_event_node *n,
			struct uabi_cm_event *ev)
{
	struct uabi_cm_id *l = n->id, *r = n->requester, *id;
	struct uabi_uobject *uobj;
	int ret;

	uobj = uabi_uobj_alloc(call->ctx, UABI_OBJ_CM_ID);
	if (IS_ERR(uobj))
		return PTR_ERR(uobj);
	ret = uabi_uobj_add_dep(uobj, call->target);
	if (ret) {
		uabi_uobj_abort(uobj);
		return ret;
	}
	id = uobj_data(uobj);
	id->uobj = uobj;
	id->channel = call->target;
	id->ps = l->ps;
	id->qp_type = l->qp_type;
	id->uid = 0;		/* ACCEPT gives it one */
	id->from_request = true;
	INIT_LIST_HEAD(&id->mcasts);
	id->src = n->req_dst;
	cm_addr_set_port(&id->src, cm_addr_port(&l->src));
	id->dst = n->req_src;
	id->has_port = false;	/* the listener holds the port */
	id->on_device = true;
	id->state = UABI_CM_REQ_RCVD;
	id->peer = r;
	id->peer_qpn = n->req_qpn;
	id->peer_psn = n->req_psn;
	/* Its own send PSN now: the QP may reach RTS before ACCEPT. */
	id->psn = cm_psn(n->req_qpn ^ 0xa5a5a5);
	/* What the requester offers is what this side may accept. */
	id->responder_resources = n->ev.conn.initiator_depth;
	id->initiator_depth = n->ev.conn.responder_resources;
	id->retry_count = n->ev.conn.retry_count;
	id->rnr_retry_count = n->ev.conn.rnr_retry_count;
	if (r) {
		r->peer = id;
		r->request = NULL;
	}
	if (n->wire)
		cm_wire_take(id, n);
	list_add(&id->dev_node, &call->dev->cm_ids);
	uabi_uobj_commit(uobj);
	ev->handle = uobj->handle;
	if (n->gone || (!r && !n->wire)) {
		id->state = UABI_CM_DISCONNECTED;
		cm_push(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_TIMEOUT, NULL);
	}
	return 0;
}

static int chan_get_event(struct uabi_call *call)
{
	struct uabi_cm_channel *ch = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_event ev;
	struct cm_event_node *n;
	int ret = -EAGAIN;

	mutex_lock(&dev->lock);
	while (!list_empty(&ch->pending)) {
		n = list_first_entry(&ch->pending, struct cm_event_node, node);
		ev = n->ev;
		ev.uid = n->mc ? n->mc->uid : n->id->uid;
		ev.handle = n->id->uobj->handle;
		ev.qp_type = n->id->qp_type;
		if (ev.event == UABI_CM_EVENT_CONNECT_REQUEST) {
			if (!n->requester && !n->gone && !n->wire) {	/* gave up meanwhile */
				n->id->num_requests--;
				cm_unlink(ch, n);
				cm_free_node(n);
				continue;
			}
			ret = take_request(call, n, &ev);
			if (ret)
				break;	/* stays queued */
			n->id->num_requests--;
		}
		n->id->events_reported++;
		if (n->mc)
			n->mc->events_reported++;
		cm_unlink(ch, n);
		cm_free_node(n);
		ret = 0;
		break;
	}
	mutex_unlock(&dev->lock);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_CM_CHANNEL_EVENT, &ev, sizeof(ev));
}

static int chan_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_cm_channel *ch = uobj_data(uobj);
	struct uabi_device *dev = uobj->ctx->dev;
	struct cm_event_node *n, *next;

	/* Its IDs are gone (they depend on it), and their events with them. */
	mutex_lock(&dev->lock);
	list_for_each_entry_safe(n, next, &ch->pending, node) {
		cm_unlink(ch, n);
		cm_free_node(n);
	}
	mutex_unlock(&dev->lock);
	if (ch->wait)
		uobj->ctx->host->evq_release(ch->wait);
	return 0;
}

const struct uabi_object_def uabi_type_cm_channel = {
	.id = UABI_OBJ_CM_CHANNEL,
	.name = "cm_channel",
	.data_size = sizeof(struct uabi_cm_channel),
	.destroy = chan_destroy,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = chan_create,
		  UABI_ATTRS(UABI_FD_OUT(UABI_ATTR_CM_CHANNEL_FD, 0)) },
		{ .id = UABI_CM_CHANNEL_GET_EVENT, .handle_access = UABI_ACCESS_READ,
		  .handler = chan_get_event,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_CM_CHANNEL_EVENT, struct uabi_cm_event, MAND)) },
		UABI_DESTROY_METHOD,
	),
};

/* -------------------------------------------------------------------- ID */
static int id_create(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->created);
	struct uabi_uobject *ch = uabi_attr_uobj(call, UABI_ATTR_CM_ID_CHANNEL);
	struct uabi_cm_id_create c;
	int ret;

	ret = uabi_attr_get(call, UABI_ATTR_CM_ID_CREATE, &c, sizeof(c));
	if (ret)
		return ret;
	/* The port space decides the QP type, but for PS_IB (as Linux's
	 * ucma_get_qp_type()), which also carries XRC (rdma_xserver's
	 * XRC_RECV, rdma_xclient's XRC_SEND): connected as RC is. */
	switch (c.ps) {
	case UABI_CM_PS_TCP:
		c.qp_type = UABI_QPT_RC;
		break;
	case UABI_CM_PS_UDP:
	case UABI_CM_PS_IPOIB:
		c.qp_type = UABI_QPT_UD;
		break;
	case UABI_CM_PS_IB:
		if (c.qp_type != UABI_QPT_RC && c.qp_type != UABI_QPT_UC &&
		    c.qp_type != UABI_QPT_UD && c.qp_type != UABI_QPT_XRC_SEND &&
		    c.qp_type != UABI_QPT_XRC_RECV)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	ret = uabi_uobj_add_dep(call->created, ch);
	if (ret)
		return ret;
	id->uobj = call->created;
	id->channel = ch;
	id->uid = c.uid;
	id->ps = c.ps;
	id->qp_type = c.qp_type;
	id->state = UABI_CM_IDLE;
	INIT_LIST_HEAD(&id->mcasts);
	call->created->user_handle = c.uid;
	mutex_lock(&call->dev->lock);
	list_add(&id->dev_node, &call->dev->cm_ids);
	mutex_unlock(&call->dev->lock);
	return 0;
}

static int id_query(struct uabi_call *call)
{
	struct uabi_cm_id_info info;

	mutex_lock(&call->dev->lock);
	fill_info(call->dev, uobj_data(call->target), &info);
	mutex_unlock(&call->dev->lock);
	return uabi_attr_put(call, UABI_ATTR_CM_ID_INFO, &info, sizeof(info));
}

/* DESTROY: the count of events reported is final once the ID's queued
 * events are dropped, which happens here, before the answer. */
static int id_destroy_cmd(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_cm_id_info info;

	mutex_lock(&call->dev->lock);
	cm_drop_events(id);
	fill_info(call->dev, id, &info);
	mutex_unlock(&call->dev->lock);
	return uabi_attr_put(call, UABI_ATTR_CM_ID_INFO, &info, sizeof(info));
}

static int id_destroy(struct uabi_uobject *uobj, enum uabi_destroy_reason why)
{
	struct uabi_cm_id *id = uobj_data(uobj);
	struct uabi_device *dev = uobj->ctx->dev;

	if (!id->uobj)
		return 0;	/* rolled back before it was set up */
	mutex_lock(&dev->lock);
	cm_drop_events(id);
	kfree(id->held);	/* a request the listener never had room for */
	id->held = NULL;
	/* What the IB CM sends when an ID goes half-way through: a REJ,
	 * "timeout" from a requester, "consumer defined" from the others. */
	cm_wire_destroy(id);	/* a peer across the wire: the same MADs */
	switch (id->state) {
	case UABI_CM_CONNECT:
		cm_break(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_TIMEOUT, NULL);
		break;
	case UABI_CM_REQ_RCVD:
	case UABI_CM_REP_SENT:
	case UABI_CM_REP_RCVD:
		cm_break(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_CONSUMER_DEFINED, NULL);
		break;
	default:
		cm_break(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
		break;
	}
	list_del(&id->dev_node);
	mutex_unlock(&dev->lock);
	/* its events are gone: nothing points at its groups any more */
	while (!list_empty(&id->mcasts)) {
		struct cm_mcast *mc = list_first_entry(&id->mcasts, struct cm_mcast, node);

		list_del(&mc->node);
		kfree(mc);
	}
	return 0;
}

static int id_bind(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_addr a;
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_ADDR, &a, sizeof(a));
	if (!addr_valid(&a))
		return -EAFNOSUPPORT;
	addr_clean(&a);
	mutex_lock(&dev->lock);
	if (id->state != UABI_CM_IDLE) {
		ret = -EINVAL;
		goto out;
	}
	if (cm_addr_port(&a)) {
		ret = port_used(dev, id, id->ps, cm_addr_port(&a), &a, true);
		if (ret)
			goto out;
	}
	id->src = a;
	if (cm_addr_port(&a))
		id->has_port = true;
	else
		ret = assign_port(dev, id);
	if (ret) {
		memset(&id->src, 0, sizeof(id->src));
		goto out;
	}
	id->on_device = !addr_any(&a);
	id->state = UABI_CM_BOUND;
	/* A UD ID bound to an address of a RoCE device is on that device, as
	 * Linux binds an ID to the device of its address: librdmacm opens the
	 * device at bind, so mckey -b's QP and its multicast joins are there. */
	id->link_dev = 0;
	if (id->on_device && id->qp_type == UABI_QPT_UD && cm_wire_resolve(id, &a))
		id->link_dev = 0;
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_resolve_addr(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_resolve r;
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_RESOLVE, &r, sizeof(r));
	if (r.flags & ~(UABI_CM_RESOLVE_F_NOT_LOCAL | UABI_CM_RESOLVE_F_REMOTE))
		return -EINVAL;
	if ((r.flags & UABI_CM_RESOLVE_F_REMOTE) && !cm_addr_family(&r.src))
		return -EINVAL;	/* the route's source is needed */
	if (!addr_valid(&r.dst) || (cm_addr_family(&r.src) && !addr_valid(&r.src)))
		return -EAFNOSUPPORT;
	if (cm_addr_family(&r.src) && cm_addr_family(&r.src) != cm_addr_family(&r.dst))
		return -EINVAL;
	addr_clean(&r.src);
	addr_clean(&r.dst);
	mutex_lock(&dev->lock);
	if (id->state != UABI_CM_IDLE && id->state != UABI_CM_BOUND &&
	    id->state != UABI_CM_ADDR_RESOLVED) {
		ret = -EINVAL;
		goto out;
	}
	if (r.flags & UABI_CM_RESOLVE_F_NOT_LOCAL) {
		/* no device of ours behind that address, as Linux answers */
		cm_push(id, UABI_CM_EVENT_ADDR_ERROR, -ENODEV, NULL);
		goto out;
	}
	id->link_dev = 0;
	if (!(r.flags & UABI_CM_RESOLVE_F_REMOTE) && addr_multicast(&r.dst)) {
		/* A group joined from an address of a RoCE device (mckey -b):
		 * through that device, whose QPs reach the group on the wire;
		 * from any other source, on this host as before. */
		const struct uabi_cm_addr *from =
			id->state != UABI_CM_IDLE && !addr_any(&id->src) ? &id->src : &r.src;
		struct uabi_cm_addr save = id->dst;

		id->dst = r.dst;
		if (cm_addr_family(from) && cm_wire_resolve(id, from))
			id->link_dev = 0;
		id->dst = save;
	}
	if (r.flags & UABI_CM_RESOLVE_F_REMOTE) {
		/* another host's: through the RoCE device of the source (the
		 * address bound, else the route's) */
		struct uabi_cm_addr save = id->dst;
		const struct uabi_cm_addr *from =
			id->state != UABI_CM_IDLE && !addr_any(&id->src) ? &id->src : &r.src;

		id->dst = r.dst;
		if (cm_wire_resolve(id, from)) {
			id->dst = save;
			id->link_dev = 0;
			cm_push(id, UABI_CM_EVENT_ADDR_ERROR, -ENODEV, NULL);
			goto out;
		}
	}
	if (id->state == UABI_CM_IDLE) {
		/* The source: the one given, else the destination itself
		 * (every address resolves to this host), else, for a
		 * multicast group (mckey), the loopback address. */
		id->src = cm_addr_family(&r.src) ? r.src : r.dst;
		if (!cm_addr_family(&r.src) && addr_multicast(&r.dst))
			addr_loopback(&id->src);
		cm_addr_set_port(&id->src, cm_addr_port(&r.src));
		if (cm_addr_port(&id->src))
			ret = port_used(dev, id, id->ps, cm_addr_port(&id->src), &id->src, true);
		if (ret) {
			memset(&id->src, 0, sizeof(id->src));
			goto out;
		}
		if (cm_addr_port(&id->src))
			id->has_port = true;
		else
			ret = assign_port(dev, id);
		if (ret)
			goto out;
	} else if (addr_any(&id->src)) {
		u16 port = cm_addr_port(&id->src);

		id->src = (r.flags & UABI_CM_RESOLVE_F_REMOTE) ? r.src : r.dst;
		if (addr_multicast(&r.dst))
			addr_loopback(&id->src);
		cm_addr_set_port(&id->src, port);
	}
	id->dst = r.dst;
	id->on_device = true;
	id->state = UABI_CM_ADDR_RESOLVED;
	cm_push(id, UABI_CM_EVENT_ADDR_RESOLVED, 0, NULL);
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_resolve_route(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	int ret = 0;

	mutex_lock(&call->dev->lock);
	if (id->state == UABI_CM_ADDR_RESOLVED || id->state == UABI_CM_ROUTE_RESOLVED) {
		id->state = UABI_CM_ROUTE_RESOLVED;
		cm_push(id, UABI_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&call->dev->lock);
	return ret;
}

static int id_listen(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	u32 backlog = uabi_attr_get_u32(call, UABI_ATTR_CM_ID_BACKLOG, 0);
	int ret = 0;

	mutex_lock(&dev->lock);
	if (id->state == UABI_CM_IDLE) {
		/* Linux binds an unbound listener to the IPv4 wildcard */
		memset(&id->src, 0, sizeof(id->src));
		id->src.bytes[0] = UABI_CM_AF_INET;
		ret = assign_port(dev, id);
		if (ret)
			goto out;
		id->state = UABI_CM_BOUND;
	}
	if (id->state != UABI_CM_BOUND && id->state != UABI_CM_LISTEN) {
		ret = -EINVAL;
		goto out;
	}
	/* Linux: a listener does not share its port, whatever reuse said
	 * (without it, BIND saw to that already) */
	if (id->state == UABI_CM_BOUND && id->reuseaddr) {
		ret = port_used(dev, id, id->ps, cm_addr_port(&id->src), &id->src, false);
		if (ret)
			goto out;
		id->reuseaddr = false;
	}
	/* As Linux's ucma: 0 or more than the most (its max_backlog, 1024)
	 * is the most. */
	id->backlog = backlog && backlog <= CM_MAX_PENDING ? backlog : CM_MAX_PENDING;
	id->state = UABI_CM_LISTEN;
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static struct uabi_cm_id *find_listener(struct uabi_device *dev, const struct uabi_cm_id *from)
{
	struct uabi_cm_id *l;

	list_for_each_entry(l, &dev->cm_ids, dev_node)
		if (l->state == UABI_CM_LISTEN && l->ps == from->ps && same_user(l, from) &&
		    cm_addr_port(&l->src) == cm_addr_port(&from->dst) &&
		    cm_listener_takes(l, &from->dst))
			return l;
	return NULL;
}

/* CONNECT inside this core: @id's request (@c) to the listener of its
 * destination; none: refused as the IB CM refuses a REQ for no service.
 * False, changing nothing, if the listener's backlog is full.
 * dev->lock held. */
static bool offer_request(struct uabi_device *dev, struct uabi_cm_id *id,
			  const struct uabi_cm_conn_param *c)
{
	struct uabi_cm_conn_param out;
	struct uabi_cm_id *l = find_listener(dev, id);

	if (!l) {
		id->state = UABI_CM_ROUTE_RESOLVED;
		/* UD: the SIDR REP's "unsupported", which Linux reports so */
		if (id->qp_type == UABI_QPT_UD)
			cm_push(id, UABI_CM_EVENT_UNREACHABLE, -EINVAL, NULL);
		else
			cm_push(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_INVALID_SERVICE_ID,
				NULL);
		return true;
	}
	if (l->num_requests >= l->backlog)
		return false;
	conn_of(id, c, &out);
	if (id->qp_type == UABI_QPT_UD)
		out.qkey = id->ps == UABI_CM_PS_UDP ? CM_UDP_QKEY : c->qkey;
	id->request = cm_push(l, UABI_CM_EVENT_CONNECT_REQUEST, 0, &out);
	if (!id->request) {
		id->state = UABI_CM_ROUTE_RESOLVED;
		cm_push(id, UABI_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL);
		return true;
	}
	id->request->requester = id;
	id->request->req_qpn = id->qpn;
	id->request->req_psn = id->psn;
	id->request->req_src = id->src;
	id->request->req_dst = id->dst;
	l->num_requests++;
	cm_local_wait(id, CM_WAIT_LOCAL_REP);
	return true;
}

bool cm_local_offer(struct uabi_device *dev, struct uabi_cm_id *id)
{
	struct uabi_cm_conn_param *held = id->held;

	if (!offer_request(dev, id, held))
		return false;
	id->held = NULL;
	kfree(held);
	return true;
}

/* A CONNECT inside this core whose listener's backlog is full.  Linux's
 * ucma fails such a request with ENOMEM, for which its IB CM sends no REJ
 * (cm_destroy_id()): an RC/UC request is held and offered again at each
 * CM response timeout (cm_local_hold()).  A SIDR request is rejected, as
 * Linux's CM answers a failed one; so is any request when there is no
 * timer to offer it again, or no memory to keep it.  dev->lock held. */
static void hold_request(struct uabi_cm_id *id, const struct uabi_cm_conn_param *c)
{
	if (id->qp_type != UABI_QPT_UD) {
		id->held = kmalloc(sizeof(*c), GFP_KERNEL);
		if (id->held) {
			*id->held = *c;
			if (cm_local_hold(id))
				return;
			kfree(id->held);
			id->held = NULL;
		}
	}
	id->state = UABI_CM_ROUTE_RESOLVED;
	if (id->qp_type == UABI_QPT_UD)
		cm_push(id, UABI_CM_EVENT_UNREACHABLE, -EINVAL, NULL);
	else
		cm_push(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_CONSUMER_DEFINED, NULL);
}

static int id_connect(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_conn_param c;
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_CONN, &c, sizeof(c));
	if (c.private_data_len > UABI_CM_PRIVATE_DATA_MAX - 56)
		return -EINVAL;	/* an IB CM REQ carries 92 bytes; rdma_cm's header 36 */
	mutex_lock(&dev->lock);
	if (id->state != UABI_CM_ROUTE_RESOLVED) {
		ret = -EINVAL;
		goto out;
	}
	id->qpn = c.qp_num;
	id->psn = cm_psn(c.qp_num);
	id->responder_resources = c.responder_resources;
	id->initiator_depth = c.initiator_depth;
	id->retry_count = c.retry_count;
	id->rnr_retry_count = c.rnr_retry_count;
	id->state = UABI_CM_CONNECT;
	if (cm_wire_link(id)) {
		/* another host's: a REQ over the wire */
		ret = cm_wire_connect(id, &c);
		if (ret)
			id->state = UABI_CM_ROUTE_RESOLVED;
		goto out;
	}
	if (!offer_request(dev, id, &c))
		hold_request(id, &c);
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_accept(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target), *peer;
	struct uabi_device *dev = call->dev;
	struct uabi_cm_conn_param c, out;
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_CONN, &c, sizeof(c));
	if (c.private_data_len > UABI_CM_PRIVATE_DATA_MAX - 60)
		return -EINVAL;	/* an IB CM REP carries 196 bytes */
	mutex_lock(&dev->lock);
	peer = id->peer;
	id->from_request = false;	/* events are reported from now on */
	if (id->remote) {
		if (id->state == UABI_CM_REQ_RCVD && uabi_attr_present(call, UABI_ATTR_CM_ID_UID)) {
			id->uid = uabi_attr_get_u64(call, UABI_ATTR_CM_ID_UID, 0);
			id->uobj->user_handle = id->uid;
		}
		ret = cm_wire_accept(id, &c);
	} else if (id->qp_type == UABI_QPT_UD) {
		/* SIDR: the answer is the requester's ESTABLISHED; no
		 * connection remains between the two IDs. */
		if (id->state != UABI_CM_REQ_RCVD || !peer) {
			ret = -EINVAL;
			goto out;
		}
		if (uabi_attr_present(call, UABI_ATTR_CM_ID_UID)) {
			id->uid = uabi_attr_get_u64(call, UABI_ATTR_CM_ID_UID, 0);
			id->uobj->user_handle = id->uid;
		}
		id->qpn = c.qp_num;
		conn_of(id, &c, &out);
		out.qkey = id->ps == UABI_CM_PS_UDP ? CM_UDP_QKEY : c.qkey;
		peer->peer = NULL;
		id->peer = NULL;
		peer->state = UABI_CM_ESTABLISHED;
		id->state = UABI_CM_ESTABLISHED;
		cm_push(peer, UABI_CM_EVENT_ESTABLISHED, 0, &out);
	} else if (id->state == UABI_CM_REQ_RCVD && peer) {
		if (uabi_attr_present(call, UABI_ATTR_CM_ID_UID)) {
			id->uid = uabi_attr_get_u64(call, UABI_ATTR_CM_ID_UID, 0);
			id->uobj->user_handle = id->uid;
		}
		id->qpn = c.qp_num;
		id->responder_resources = c.responder_resources;
		id->initiator_depth = c.initiator_depth;
		conn_of(id, &c, &out);
		id->state = UABI_CM_REP_SENT;
		peer->state = UABI_CM_REP_RCVD;
		peer->peer_qpn = id->qpn;
		peer->peer_psn = id->psn;
		peer->responder_resources = c.initiator_depth;
		peer->initiator_depth = c.responder_resources;
		cm_push(peer, UABI_CM_EVENT_CONNECT_RESPONSE, 0, &out);
		cm_local_wait(id, CM_WAIT_LOCAL_RTU);
	} else if (id->state == UABI_CM_REP_RCVD && peer) {
		/* The active side's ACCEPT is its RTU (which changes nothing on
		 * a peer that NOTIFY established already). */
		memset(&out, 0, sizeof(out));
		out.qp_num = id->qpn;
		id->state = UABI_CM_ESTABLISHED;
		if (peer->state != UABI_CM_ESTABLISHED) {
			peer->state = UABI_CM_ESTABLISHED;
			cm_push(peer, UABI_CM_EVENT_ESTABLISHED, 0, &out);
		}
	} else {
		ret = -EINVAL;
	}
out:
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_reject(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_conn_param out;
	struct uabi_cm_reject r;
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_REJECT, &r, sizeof(r));
	if (r.private_data_len > 148)
		return -EINVAL;	/* an IB CM REJ carries 148 bytes */
	memset(&out, 0, sizeof(out));
	memcpy(out.private_data, r.private_data, r.private_data_len);
	out.private_data_len = r.private_data_len;
	mutex_lock(&dev->lock);
	if (id->remote) {
		ret = cm_wire_reject(id, &r);
	} else if ((id->state == UABI_CM_REQ_RCVD || id->state == UABI_CM_REP_RCVD) && id->peer) {
		if (id->qp_type == UABI_QPT_UD)
			cm_break(id, UABI_CM_EVENT_UNREACHABLE, -EINVAL, &out);
		else
			cm_break(id, UABI_CM_EVENT_REJECTED, UABI_CM_REJ_CONSUMER_DEFINED,
				 &out);
		id->state = UABI_CM_DISCONNECTED;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_disconnect(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	int ret = 0;

	mutex_lock(&dev->lock);
	if (id->remote) {
		ret = cm_wire_disconnect(id);
		mutex_unlock(&dev->lock);
		return ret;
	}
	switch (id->state) {
	case UABI_CM_ESTABLISHED:
	case UABI_CM_REP_SENT:
	case UABI_CM_REP_RCVD:
		cm_break(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
		id->state = UABI_CM_DISCONNECTED;
		cm_push(id, UABI_CM_EVENT_DISCONNECTED, 0, NULL);
		cm_timewait(id);	/* the peer's DREP is in at once */
		break;
	case UABI_CM_DISCONNECTED:
		cm_timewait(id);	/* the peer went first: our DREP */
		break;
	default:
		ret = -EINVAL;
	}
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_init_qp_attr(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	u32 state = uabi_attr_get_u32(call, UABI_ATTR_CM_ID_QP_STATE, 0);
	struct uabi_cm_qp_attr r;
	struct uabi_qp_attr *a = &r.attr;
	struct uabi_port_attr pa;
	bool ud = id->qp_type == UABI_QPT_UD;
	int ret = 0;

	memset(&r, 0, sizeof(r));
	memset(&pa, 0, sizeof(pa));
	ret = dev->ops->query_port(dev, 1, &pa);
	if (ret)
		return ret;
	mutex_lock(&dev->lock);
	a->qp_state = state;
	switch (state) {
	case UABI_QPS_INIT:
		a->port_num = 1;
		a->pkey_index = 0;
		r.mask = UABI_QP_STATE | UABI_QP_PKEY_INDEX | UABI_QP_PORT;
		if (ud) {
			a->qkey = CM_UDP_QKEY;
			r.mask |= UABI_QP_QKEY;
		} else {
			a->qp_access_flags = UABI_ACCESS_REMOTE_WRITE;
			if (id->responder_resources)
				a->qp_access_flags |= UABI_ACCESS_REMOTE_READ |
						      UABI_ACCESS_REMOTE_ATOMIC;
			r.mask |= UABI_QP_ACCESS_FLAGS;
		}
		break;
	case UABI_QPS_RTR:
		if (ud) {
			r.mask = UABI_QP_STATE;
			break;
		}
		if (id->state != UABI_CM_REQ_RCVD && id->state != UABI_CM_REP_SENT &&
		    id->state != UABI_CM_REP_RCVD && id->state != UABI_CM_ESTABLISHED) {
			ret = -EINVAL;
			break;
		}
		a->path_mtu = pa.active_mtu;
		a->dest_qp_num = id->peer_qpn;
		a->rq_psn = id->peer_psn;
		a->ah_attr.dlid = (u16)pa.lid;
		a->ah_attr.port_num = 1;
		if (id->remote) {
			/* RoCE: the peer by its GID, from ours */
			a->path_mtu = id->mtu;
			a->ah_attr.dlid = 0;
			a->ah_attr.is_global = 1;
			memcpy(a->ah_attr.grh.dgid, id->dgid, sizeof(a->ah_attr.grh.dgid));
			a->ah_attr.grh.sgid_index = id->gid_index;
			a->ah_attr.grh.hop_limit = CM_WIRE_HOP_LIMIT;
			a->ah_attr.grh.traffic_class = id->tos;
		}
		r.mask = UABI_QP_STATE | UABI_QP_AV | UABI_QP_PATH_MTU | UABI_QP_DEST_QPN |
			 UABI_QP_RQ_PSN;
		/* an XRC initiator has no receive side (as the IB CM answers) */
		if (id->qp_type != UABI_QPT_XRC_SEND) {
			a->max_dest_rd_atomic = id->responder_resources;
			a->min_rnr_timer = CM_RNR_TIMER;
			r.mask |= UABI_QP_MAX_DEST_RD_ATOMIC | UABI_QP_MIN_RNR_TIMER;
		}
		break;
	case UABI_QPS_RTS:
		if (ud) {
			r.mask = UABI_QP_STATE | UABI_QP_SQ_PSN;
			break;
		}
		if (id->state != UABI_CM_REQ_RCVD && id->state != UABI_CM_REP_SENT &&
		    id->state != UABI_CM_REP_RCVD && id->state != UABI_CM_ESTABLISHED) {
			ret = -EINVAL;
			break;
		}
		a->sq_psn = id->psn;
		a->timeout = id->ack_timeout_set ? id->ack_timeout
			     : id->remote	   ? CM_WIRE_QP_TIMEOUT
						   : CM_TIMEOUT;
		r.mask = UABI_QP_STATE | UABI_QP_TIMEOUT | UABI_QP_SQ_PSN;
		/* an XRC target sends no requests of its own */
		if (id->qp_type != UABI_QPT_XRC_RECV) {
			a->retry_cnt = id->retry_count;
			a->rnr_retry = id->rnr_retry_count;
			a->max_rd_atomic = id->initiator_depth;
			r.mask |= UABI_QP_RETRY_CNT | UABI_QP_RNR_RETRY | UABI_QP_MAX_QP_RD_ATOMIC;
		}
		break;
	default:
		ret = -EINVAL;
	}
	mutex_unlock(&dev->lock);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_CM_ID_QP_ATTR, &r, sizeof(r));
}

/* Moves the ID, and its queued events in their order, to another channel
 * of the context (rdma_migrate_id(3)); answers the count of events
 * reported, as DESTROY does. */
static int id_migrate(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_uobject *to = uabi_attr_uobj(call, UABI_ATTR_CM_ID_CHANNEL);
	struct uabi_cm_channel *from_ch = cm_chan_of(id), *to_ch = uobj_data(to);
	struct uabi_device *dev = call->dev;
	struct cm_event_node *n, *next;
	struct uabi_cm_id_info info;
	struct list_head moved;

	INIT_LIST_HEAD(&moved);
	mutex_lock(&dev->lock);
	if (to != id->channel) {
		list_for_each_entry_safe(n, next, &from_ch->pending, node) {
			if (n->id != id)
				continue;
			cm_unlink(from_ch, n);
			list_add_tail(&n->node, &moved);
		}
		uabi_uobj_replace_dep(id->uobj, id->channel, to);
		id->channel = to;
		list_for_each_entry_safe(n, next, &moved, node) {
			list_del(&n->node);
			spin_lock(&to_ch->lock);
			list_add_tail(&n->node, &to_ch->pending);
			to_ch->num_pending++;
			if (to_ch->wait)
				to->ctx->host->evq_signal(to_ch->wait);
			spin_unlock(&to_ch->lock);
		}
	}
	fill_info(dev, id, &info);
	mutex_unlock(&dev->lock);
	return uabi_attr_put(call, UABI_ATTR_CM_ID_INFO, &info, sizeof(info));
}

/* NOTIFY's events (enum ib_event_type's numbers, as ucma passes them). */
#define CM_IB_EVENT_COMM_EST 4
#define CM_IB_EVENT_PATH_MIG 6

/*
 * NOTIFY, as Linux's rdma_notify() and ib_cm_notify() answer it.
 * IB_EVENT_COMM_EST (the QP's first message came before the RTU) on an
 * ID that sent its REP establishes it as the RTU would, ESTABLISHED
 * reported; the RTU arriving later changes nothing.  On one established
 * already it is EISCONN.  IB_EVENT_PATH_MIG on an established connection:
 * there is no alternate path to move to, 0.  No device yet, any other
 * state or event: EINVAL.
 */
/* SET_OPTION: rdma_set_option() at level RDMA_OPTION_ID, with the checks
 * of Linux's rdma_set_service_type(), rdma_set_reuseaddr(),
 * rdma_set_afonly() and rdma_set_ack_timeout(); another option is
 * -ENOSYS, as Linux's ucma answers. */
static int id_set_option(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_option o;
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_OPTION, &o, sizeof(o));
	mutex_lock(&dev->lock);
	switch (o.name) {
	case UABI_CM_OPT_TOS:
		if (o.value > 0xff) {
			ret = -EINVAL;
			break;
		}
		id->tos = (u8)o.value;
		break;
	case UABI_CM_OPT_REUSEADDR:
		if (o.value > 1 ||
		    !((o.value && id->state != UABI_CM_LISTEN) || id->state == UABI_CM_IDLE)) {
			ret = -EINVAL;
			break;
		}
		id->reuseaddr = o.value;
		break;
	case UABI_CM_OPT_AFONLY:
		if (o.value > 1 || (id->state != UABI_CM_IDLE && id->state != UABI_CM_BOUND)) {
			ret = -EINVAL;
			break;
		}
		id->afonly_set = true;
		id->afonly = o.value;
		break;
	case UABI_CM_OPT_ACK_TIMEOUT:
		if (o.value > 0xff ||
		    (id->qp_type != UABI_QPT_RC && id->qp_type != UABI_QPT_XRC_SEND)) {
			ret = -EINVAL;
			break;
		}
		id->ack_timeout = (u8)o.value;
		id->ack_timeout_set = true;
		break;
	default:
		ret = -ENOSYS;
	}
	mutex_unlock(&dev->lock);
	return ret;
}

static int id_notify(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	u32 event = uabi_attr_get_u32(call, UABI_ATTR_CM_ID_EVENT_TYPE, ~0u);
	struct uabi_cm_conn_param conn;
	int ret = -EINVAL;

	mutex_lock(&dev->lock);
	if (!id->on_device)
		goto out;
	switch (event) {
	case CM_IB_EVENT_COMM_EST:
		if (id->state == UABI_CM_ESTABLISHED) {
			ret = -EISCONN;
		} else if (id->state == UABI_CM_REP_SENT) {
			id->state = UABI_CM_ESTABLISHED;
			id->wait = CM_WAIT_NONE;	/* no RTU waited for now */
			id->deadline = 0;
			memset(&conn, 0, sizeof(conn));
			conn.qp_num = id->peer ? id->peer->qpn : id->peer_qpn;
			cm_push(id, UABI_CM_EVENT_ESTABLISHED, 0, &conn);
			ret = 0;
		}
		break;
	case CM_IB_EVENT_PATH_MIG:
		if (id->state == UABI_CM_ESTABLISHED)
			ret = 0;
		break;
	}
out:
	mutex_unlock(&dev->lock);
	return ret;
}

/*
 * The MGID of an IP multicast address, as IPoIB maps one (RFC 4391; the
 * link-local scope and the default P_Key of a port with no IPoIB), with
 * the RDMA CM's signature in place of IPoIB's for the UDP port space, as
 * Linux's rdma_cm does.  An IPv6 address that is already an SA-assigned
 * MGID (ff1x:a01b::) is taken as it is.
 */
static void mcast_gid(const struct uabi_cm_id *id, const struct uabi_cm_addr *a, u8 *mgid)
{
	u32 len, off = cm_addr_ip(a, &len);
	const u8 *ip = a->bytes + off;

	memset(mgid, 0, 16);
	if (len == 16 && ip[0] == 0xff && (ip[1] & 0xf0) == 0x10 && ip[2] == 0xa0 &&
	    ip[3] == 0x1b) {
		memcpy(mgid, ip, 16);
		return;
	}
	mgid[0] = 0xff;
	mgid[1] = 0x12;
	mgid[2] = len == 4 ? 0x40 : 0x60;
	mgid[3] = id->ps == UABI_CM_PS_UDP ? 0x01 : 0x1b;
	mgid[4] = 0xff;
	mgid[5] = 0xff;
	if (len == 4) {
		memcpy(mgid + 12, ip, 4);
		mgid[12] &= 0x0f;
	} else {
		memcpy(mgid + 6, ip + 6, 10);
	}
}

/* The group's multicast LID: there is no subnet manager to assign one,
 * so it is a function of the MGID (every process finds the same); two
 * groups sharing one are still told apart by the GRH's MGID. */
static u16 mcast_lid(const u8 *mgid)
{
	u32 h = 2166136261u, i;

	for (i = 0; i < 16; i++)
		h = (h ^ mgid[i]) * 16777619u;
	return (u16)(0xc001 + h % 0x3ffe);
}

/* rdma_join_multicast(3): the group is joined at once (one host, no
 * subnet administrator); MULTICAST_JOIN tells the caller what to attach
 * its QP to.  Attaching is the caller's (librdmacm does it). */
static int id_join_mcast(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	struct uabi_device *dev = call->dev;
	struct uabi_cm_conn_param conn;
	struct cm_event_node *n;
	struct uabi_cm_mcast m;
	struct cm_mcast *mc;
	u8 mgid[16];
	int ret = 0;

	uabi_attr_get(call, UABI_ATTR_CM_ID_MCAST, &m, sizeof(m));
	if ((m.flags & ~UABI_CM_MCAST_F_MGID) || (m.join_flags != UABI_CM_MC_FULLMEMBER &&
						  m.join_flags != UABI_CM_MC_SENDONLY_FULLMEMBER))
		return -EINVAL;
	if (!addr_valid(&m.addr))
		return -EINVAL;
	/* an MGID: IPv6's form, a multicast GID */
	if ((m.flags & UABI_CM_MCAST_F_MGID) &&
	    (cm_addr_family(&m.addr) != UABI_CM_AF_INET6 || m.addr.bytes[8] != 0xff))
		return -EINVAL;
	mc = kzalloc(sizeof(*mc), GFP_KERNEL);
	if (!mc)
		return -ENOMEM;
	mutex_lock(&dev->lock);
	if (!id->on_device) {
		ret = -EINVAL;	/* no device yet: ucma_get_ctx_dev()'s answer */
		goto out;
	}
	if ((id->state != UABI_CM_BOUND && id->state != UABI_CM_ADDR_RESOLVED) ||
	    id->qp_type != UABI_QPT_UD) {
		ret = -EINVAL;
		goto out;
	}
	if (id->num_mcasts >= CM_MAX_MCAST) {
		ret = -ENOMEM;
		goto out;
	}
	memset(&conn, 0, sizeof(conn));
	conn.qp_num = CM_MCAST_QPN;
	conn.qkey = CM_UDP_QKEY;
	n = cm_push(id, UABI_CM_EVENT_MULTICAST_JOIN, 0, &conn);
	if (!n) {
		ret = -ENOMEM;
		goto out;
	}
	memset(&n->ev.ah, 0, sizeof(n->ev.ah));
	if (cm_wire_link(id)) {
		/* Through a RoCE device (RoCEv2, as Linux's rdma_cm without an
		 * SA): the MGID is the IP group itself (an IPv4 one mapped),
		 * no LID; the QP that is attached to it joins the IP group. */
		u32 len, off = cm_addr_ip(&m.addr, &len);

		memset(mgid, 0, sizeof(mgid));
		if (len == 4) {
			mgid[10] = 0xff;
			mgid[11] = 0xff;
			memcpy(mgid + 12, m.addr.bytes + off, 4);
		} else {
			memcpy(mgid, m.addr.bytes + off, 16);
		}
		n->ev.ah.grh.sgid_index = id->gid_index;
	} else {
		if (m.flags & UABI_CM_MCAST_F_MGID)
			memcpy(mgid, m.addr.bytes + 8, sizeof(mgid));
		else
			mcast_gid(id, &m.addr, mgid);
		n->ev.ah.dlid = mcast_lid(mgid);
	}
	memcpy(n->ev.ah.grh.dgid, mgid, sizeof(mgid));
	n->ev.ah.is_global = 1;
	n->ev.ah.port_num = 1;
	n->mc = mc;
	mc->uid = m.uid;
	mc->num = ++id->next_mcast;
	list_add_tail(&mc->node, &id->mcasts);
	id->num_mcasts++;
	mutex_unlock(&dev->lock);
	return uabi_attr_put(call, UABI_ATTR_CM_ID_MCAST_ID, &mc->num, sizeof(mc->num));
out:
	mutex_unlock(&dev->lock);
	kfree(mc);
	return ret;
}

/* rdma_leave_multicast(3): the group's queued events go with it; the
 * answer is how many were reported, which librdmacm waits for. */
static int id_leave_mcast(struct uabi_call *call)
{
	struct uabi_cm_id *id = uobj_data(call->target);
	u32 num = uabi_attr_get_u32(call, UABI_ATTR_CM_ID_MCAST_ID, 0);
	struct uabi_device *dev = call->dev;
	struct cm_event_node *n, *next;
	struct uabi_cm_channel *ch;
	struct cm_mcast *mc;
	u32 reported = 0;
	int ret = -ENOENT;

	mutex_lock(&dev->lock);
	ch = cm_chan_of(id);
	list_for_each_entry(mc, &id->mcasts, node) {
		if (mc->num != num)
			continue;
		list_for_each_entry_safe(n, next, &ch->pending, node) {
			if (n->mc != mc)
				continue;
			cm_unlink(ch, n);
			cm_free_node(n);
		}
		reported = mc->events_reported;
		list_del(&mc->node);
		id->num_mcasts--;
		kfree(mc);
		ret = 0;
		break;
	}
	mutex_unlock(&dev->lock);
	if (ret)
		return ret;
	return uabi_attr_put(call, UABI_ATTR_CM_ID_EVENTS, &reported, sizeof(reported));
}

static void id_fill_info(struct uabi_uobject *uobj, struct uabi_object_info *info)
{
	struct uabi_cm_id *id = uobj_data(uobj);

	info->qp_type = id->qp_type;
	info->qpn = id->qpn;
}

const struct uabi_object_def uabi_type_cm_id = {
	.id = UABI_OBJ_CM_ID,
	.name = "cm_id",
	.data_size = sizeof(struct uabi_cm_id),
	.destroy = id_destroy,
	.fill_info = id_fill_info,
	UABI_METHODS(
		{ .id = UABI_METHOD_CREATE, .flags = UABI_SPEC_F_METHOD_CREATES,
		  .handler = id_create,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_CM_ID_CHANNEL, UABI_OBJ_CM_CHANNEL,
					 UABI_ACCESS_READ, MAND),
			     UABI_IN(UABI_ATTR_CM_ID_CREATE, struct uabi_cm_id_create, MAND)) },
		{ .id = UABI_METHOD_QUERY, .flags = UABI_SPEC_F_METHOD_READONLY,
		  .handle_access = UABI_ACCESS_READ, .handler = id_query,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_CM_ID_INFO, struct uabi_cm_id_info, MAND)) },
		{ .id = UABI_METHOD_DESTROY, .handle_access = UABI_ACCESS_DESTROY,
		  .handler = id_destroy_cmd,
		  UABI_ATTRS(UABI_OUT(UABI_ATTR_CM_ID_INFO, struct uabi_cm_id_info, 0)) },
		{ .id = UABI_CM_ID_BIND, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_bind,
		  UABI_ATTRS(UABI_IN_MIN(UABI_ATTR_CM_ID_ADDR, struct uabi_cm_addr, 2, MAND)) },
		{ .id = UABI_CM_ID_RESOLVE_ADDR, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_resolve_addr,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_RESOLVE, struct uabi_cm_resolve, MAND)) },
		{ .id = UABI_CM_ID_RESOLVE_ROUTE, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_resolve_route },
		{ .id = UABI_CM_ID_LISTEN, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_listen,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_BACKLOG, u32, 0)) },
		{ .id = UABI_CM_ID_CONNECT, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_connect,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_CONN, struct uabi_cm_conn_param, MAND)) },
		{ .id = UABI_CM_ID_ACCEPT, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_accept,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_CONN, struct uabi_cm_conn_param, MAND),
			     UABI_IN(UABI_ATTR_CM_ID_UID, u64, 0)) },
		{ .id = UABI_CM_ID_REJECT, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_reject,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_REJECT, struct uabi_cm_reject, MAND)) },
		{ .id = UABI_CM_ID_DISCONNECT, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_disconnect },
		{ .id = UABI_CM_ID_INIT_QP_ATTR, .handle_access = UABI_ACCESS_READ,
		  .handler = id_init_qp_attr,
		  UABI_ATTRS(UABI_IN_ENUM(UABI_ATTR_CM_ID_QP_STATE, UABI_QPS_RESET,
					  UABI_QPS_ERR, MAND),
			     UABI_OUT(UABI_ATTR_CM_ID_QP_ATTR, struct uabi_cm_qp_attr, MAND)) },
		{ .id = UABI_CM_ID_NOTIFY, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_notify,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_EVENT_TYPE, u32, 0)) },
		{ .id = UABI_CM_ID_MIGRATE, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_migrate,
		  UABI_ATTRS(UABI_HANDLE(UABI_ATTR_CM_ID_CHANNEL, UABI_OBJ_CM_CHANNEL,
					 UABI_ACCESS_READ, MAND),
			     UABI_OUT(UABI_ATTR_CM_ID_INFO, struct uabi_cm_id_info, 0)) },
		{ .id = UABI_CM_ID_JOIN_MCAST, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_join_mcast,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_MCAST, struct uabi_cm_mcast, MAND),
			     UABI_OUT(UABI_ATTR_CM_ID_MCAST_ID, u32, MAND)) },
		{ .id = UABI_CM_ID_LEAVE_MCAST, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_leave_mcast,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_MCAST_ID, u32, MAND),
			     UABI_OUT(UABI_ATTR_CM_ID_EVENTS, u32, 0)) },
		{ .id = UABI_CM_ID_SET_OPTION, .handle_access = UABI_ACCESS_WRITE,
		  .handler = id_set_option,
		  UABI_ATTRS(UABI_IN(UABI_ATTR_CM_ID_OPTION, struct uabi_cm_option, MAND)) },
	),
};
