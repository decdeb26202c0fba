// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The module's own RoCE devices (docs/wire.md, "The kernel module's own
 * RoCE device"): the software device bound to a network interface of the
 * initial network namespace, and the receiving half of its wire.
 *
 * - UABI_IOCTL_LINK_ADD (CAP_NET_ADMIN) makes the device: its link (MTU,
 *   carrier, MAC, GIDs from the interface's IPv4 and IPv6 addresses) is
 *   read here under RTNL and kept current by netdevice, inetaddr and
 *   inet6addr notifiers, which only schedule roce_work: the work reads
 *   every device's interface again and rebinds its socket when the
 *   receive address changed.
 * - Receiving: a kernel UDP socket on the device's first IPv4 address
 *   (else its first IPv6 one: the receive address) at port 4791, and one
 *   at port 4791 of every other address of its GID table, each with an
 *   encap_rcv hook as a tunnel driver has.  The hook, in softirq, reads only the BTH's
 *   destination QP (after checking that the datagram holds a BTH and an
 *   ICRC) and queues the skb to the relay of the context that bound that
 *   QPN (UABI_IOCTL_WIRE_BIND), with the addresses and ports in skb->cb
 *   as a struct uabi_relay_hdr.  The process reads its relay fd and runs
 *   the protocol itself (providers/wire); it sends from a socket of its
 *   own.  A full queue or an unbound QPN drops the datagram and counts it:
 *   nothing waits in softirq.
 * - The socket is made with sock_create_kern() and its encap fields are
 *   set here (what setup_udp_tunnel_sock() sets), so that the module needs
 *   no udp_tunnel.ko and insmod alone loads it.
 *
 * Locking: roce_lock (a mutex) guards roce_list, each device's socket and
 *   link, and device creation and deletion; contexts are opened on a RoCE
 *   device under it, so LINK_DEL's EBUSY check cannot race an open.  Order:
 *   kfile->lock, then roce_lock, then RTNL.  The QPN table of a device is
 *   an xarray (its own lock; read under RCU in softirq).  A relay is freed
 *   by RCU once its last reference (the context's, its fd's) goes, so the
 *   softirq that found it in the table may still queue to it.  A context
 *   may have several relays (each UABI_IOCTL_WIRE_RELAY makes one: the
 *   processes that share an imported context each read their own), and a
 *   bind names the relay by its fd.
 */
#include "linux_host.h"
#include "../../drivers/sw/sw.h"

#include <uabi/cm_wire.h>

#include <linux/anon_inodes.h>
#include <linux/if_ether.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/poll.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <linux/uio.h>
#include <linux/xarray.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#define ROCE_PORT 4791
/* BTH (12) and ICRC (4): the least a RoCEv2 datagram holds. */
#define ROCE_MIN_BYTES 16
/* Headers, a 4096-byte payload, ICRC: the most. */
#define ROCE_MAX_BYTES (4096 + 256)
/* A relay holds at most this many datagrams and bytes (truesize). */
#define RELAY_MAX_SKBS 4096
#define RELAY_MAX_BYTES (4 << 20)

struct uabi_krelay {
	refcount_t ref;			/* the context's, each relay fd's */
	struct uabi_kfile *owner;	/* the context's file; NULL once closed */
	struct list_head node;		/* owner->relays, under owner->lock */
	struct sk_buff_head queue;
	atomic_t bytes;			/* truesize queued */
	wait_queue_head_t wait;
	struct rcu_head rcu;
};

/*
 * A QPN a context bound (UABI_IOCTL_WIRE_BIND), under r->bind_lock.  The
 * QPN's datagrams go to the relay of one of them (r->qps): the first to
 * bind, while its context holds the QP, then the next one that still does.
 * Only an XRC receive QP is held by several contexts, each serving it in
 * turn (docs/wire.md, "XRC").  Records go with their context (release), so
 * @kf and its context are alive while the lock is held.
 */
struct uabi_kbind {
	struct list_head node;		/* r->binds */
	u32 qpn;
	struct uabi_kfile *kf;
	struct uabi_krelay *q;		/* the context's: lives as long */
};

struct uabi_kroce {
	struct list_head node;		/* roce_list */
	struct uabi_device *dev;
	char ifname[IFNAMSIZ];
	int ifindex;
	struct socket *sock;		/* NULL: no address to receive at */
	u8 addr[16];			/* where sock is bound */
	int bind_err;
	/* Sockets at the other addresses of the GID table (while sock is
	 * bound); others_missing: one could not be bound yet. */
	struct socket *osock[UABI_SW_LINK_GIDS];
	u8 oaddr[UABI_SW_LINK_GIDS][16];
	u32 nothers;
	bool others_missing;
	struct xarray qps;		/* QPN -> struct uabi_krelay */
	struct mutex bind_lock;		/* binds */
	struct list_head binds;		/* struct uabi_kbind, in bind order */
	atomic64_t rx_relayed;
	atomic64_t rx_dropped;
	atomic64_t qp1_in;		/* QP1: given to the CM */
	atomic64_t qp1_refused;		/* QP1: not a whole GSI SEND, bad ICRC */
};

static DEFINE_MUTEX(roce_lock);
static LIST_HEAD(roce_list);

static struct uabi_kroce *roce_of(struct uabi_device *dev)
{
	struct uabi_kroce *r;

	list_for_each_entry(r, &roce_list, node)
		if (r->dev == dev)
			return r;
	return NULL;
}

/* --------------------------------------------------------------- relays */
static void relay_free_rcu(struct rcu_head *h)
{
	struct uabi_krelay *q = container_of(h, struct uabi_krelay, rcu);

	skb_queue_purge(&q->queue);
	kfree(q);
}

static void relay_put(struct uabi_krelay *q)
{
	if (q && refcount_dec_and_test(&q->ref))
		call_rcu(&q->rcu, relay_free_rcu);
}

static ssize_t relay_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct uabi_krelay *q = iocb->ki_filp->private_data;
	struct sk_buff *skb;
	size_t n, body;
	int ret;

	for (;;) {
		skb = skb_dequeue(&q->queue);
		if (skb)
			break;
		if ((iocb->ki_filp->f_flags & O_NONBLOCK) || (iocb->ki_flags & IOCB_NOWAIT))
			return -EAGAIN;
		ret = wait_event_interruptible(q->wait, !skb_queue_empty_lockless(&q->queue));
		if (ret)
			return ret;
	}
	atomic_sub(skb->truesize, &q->bytes);
	/* One datagram per read, as from a datagram socket: what does not
	 * fit is dropped. */
	n = copy_to_iter(skb->cb, sizeof(struct uabi_relay_hdr), to);
	body = min_t(size_t, skb->len - sizeof(struct udphdr), iov_iter_count(to));
	if (n == sizeof(struct uabi_relay_hdr) && body) {
		if (skb_copy_datagram_iter(skb, sizeof(struct udphdr), to, body))
			n = 0;
		else
			n += body;
	}
	consume_skb(skb);
	return n ? (ssize_t)n : -EFAULT;
}

static __poll_t relay_poll(struct file *file, poll_table *pt)
{
	struct uabi_krelay *q = file->private_data;

	poll_wait(file, &q->wait, pt);
	return skb_queue_empty_lockless(&q->queue) ? 0 : EPOLLIN | EPOLLRDNORM;
}

static int relay_release(struct inode *inode, struct file *file)
{
	relay_put(file->private_data);
	return 0;
}

static const struct file_operations relay_fops = {
	.owner = THIS_MODULE,
	.read_iter = relay_read_iter,
	.poll = relay_poll,
	.release = relay_release,
	.llseek = no_llseek,
};

/* ------------------------------------------------------------ receiving */
static int roce_udp_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct uabi_kroce *r = rcu_dereference_sk_user_data(sk);
	struct uabi_relay_hdr *h = (struct uabi_relay_hdr *)skb->cb;
	struct uabi_krelay *q;
	u8 bth[4];
	u32 qpn;

	BUILD_BUG_ON(sizeof(*h) > sizeof(skb->cb));
	if (!r) {
		kfree_skb(skb);
		return 0;
	}
	if (skb->len < sizeof(struct udphdr) + ROCE_MIN_BYTES ||
	    skb->len > sizeof(struct udphdr) + ROCE_MAX_BYTES ||
	    skb_copy_bits(skb, sizeof(struct udphdr) + 4, bth, sizeof(bth)))
		goto drop;
	qpn = ((u32)bth[1] << 16) | ((u32)bth[2] << 8) | bth[3];
	if (qpn == 1 && uabi_kcm_rcv(r->dev, sk, skb))	/* QP1: the CM's (roce_cm.c) */
		return 0;
	q = xa_load(&r->qps, qpn);
	if (!q || skb_queue_len(&q->queue) >= RELAY_MAX_SKBS ||
	    atomic_read(&q->bytes) + (int)skb->truesize > RELAY_MAX_BYTES)
		goto drop;
	memset(h, 0, sizeof(*h));
	h->src_port = ntohs(udp_hdr(skb)->source);
	h->dst_port = ntohs(udp_hdr(skb)->dest);
	if (sk->sk_family == AF_INET6) {
		h->v6 = 1;
		memcpy(h->src, &ipv6_hdr(skb)->saddr, 16);
		memcpy(h->dst, &ipv6_hdr(skb)->daddr, 16);
	} else {
		memcpy(h->src, &ip_hdr(skb)->saddr, 4);
		memcpy(h->dst, &ip_hdr(skb)->daddr, 4);
	}
	/* Queued for a while, as on a socket: it pins no route, owner or
	 * connection-tracking entry meanwhile. */
	skb_dst_drop(skb);
	skb_orphan(skb);
	nf_reset_ct(skb);
	atomic_add(skb->truesize, &q->bytes);
	skb_queue_tail(&q->queue, skb);
	atomic64_inc(&r->rx_relayed);
	wake_up_interruptible_poll(&q->wait, EPOLLIN | EPOLLRDNORM);
	return 0;
drop:
	atomic64_inc(&r->rx_dropped);
	kfree_skb(skb);
	return 0;
}

static bool v4_mapped(const u8 *g)
{
	static const u8 prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g, prefix, sizeof(prefix));
}

/* The address a device receives at: its first IPv4 GID, else its first
 * IPv6 one (link-local ones come last). */
static bool receive_addr(const struct uabi_sw_link *l, u8 out[16])
{
	static const u8 zero[16];
	u32 i;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < l->num_gids && i < UABI_SW_LINK_GIDS; i++) {
			if ((pass == 0) != v4_mapped(l->gids[i]) || !memcmp(l->gids[i], zero, 16))
				continue;
			memcpy(out, l->gids[i], 16);
			return true;
		}
	return false;
}

static void roce_sock_close(struct socket *sock)
{
	rcu_assign_sk_user_data(sock->sk, NULL);
	kernel_sock_shutdown(sock, SHUT_RDWR);
	sock_release(sock);
}

/* A socket of @r at port 4791 of @addr (a GID), its datagrams to
 * roce_udp_rcv().  0 or an errno. */
static int roce_sock_open(struct uabi_kroce *r, const u8 *addr, struct socket **out)
{
	struct sockaddr_storage ss = {};
	struct socket *sock;
	bool v6 = !v4_mapped(addr);
	int ret, len;

	ret = sock_create_kern(&init_net, v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, IPPROTO_UDP, &sock);
	if (ret)
		return ret;
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		sock->sk->sk_ipv6only = 1;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ROCE_PORT);
		memcpy(&a->sin6_addr, addr, 16);
		if (ipv6_addr_type(&a->sin6_addr) & IPV6_ADDR_LINKLOCAL)
			a->sin6_scope_id = r->ifindex;
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(ROCE_PORT);
		memcpy(&a->sin_addr, addr + 12, 4);
		len = sizeof(*a);
		/* DF, hence IPv4 ID 0: the ID the ICRC of the CM's sends
		 * from it has (roce_cm.c). */
		ip_sock_set_mtu_discover(sock->sk, IP_PMTUDISC_DO);
	}
	ret = kernel_bind(sock, (struct sockaddr *)&ss, len);
	if (ret) {
		sock_release(sock);
		return ret;
	}
	/* A tunnel socket: every datagram goes to roce_udp_rcv(). */
	rcu_assign_sk_user_data(sock->sk, r);
	WRITE_ONCE(udp_sk(sock->sk)->encap_type, 1);
	WRITE_ONCE(udp_sk(sock->sk)->encap_rcv, roce_udp_rcv);
	udp_tunnel_encap_enable(sock->sk);
	*out = sock;
	return 0;
}

/* The CM sends from any of @r's sockets (the MAD's source address). */
static void roce_kcm_sync(struct uabi_kroce *r)
{
	struct socket *socks[1 + UABI_SW_LINK_GIDS];
	u8 addrs[1 + UABI_SW_LINK_GIDS][16];
	u32 i, n = 0;

	if (r->sock) {
		socks[n] = r->sock;
		memcpy(addrs[n++], r->addr, 16);
	}
	for (i = 0; i < r->nothers; i++) {
		socks[n] = r->osock[i];
		memcpy(addrs[n++], r->oaddr[i], 16);
	}
	uabi_kcm_set_socks(r->dev, socks, (const u8 (*)[16])addrs, n);
}

/* Sockets at every other address of the device's GID table, so that the
 * CM answers at, and QPs receive at, any of them (docs/cm.md, "Every
 * address of a device").  Those that stay are kept, those of addresses
 * that went are closed, new ones opened (one that cannot be bound yet,
 * an IPv6 address still tentative, is tried again: roce_retry_later()).
 * Caller holds roce_lock; @r->sock is bound. */
static void roce_bind_others(struct uabi_kroce *r, const struct uabi_sw_link *l)
{
	static const u8 zero[16];
	struct socket *nsock[UABI_SW_LINK_GIDS], *gone[UABI_SW_LINK_GIDS];
	u8 naddr[UABI_SW_LINK_GIDS][16];
	u32 i, j, n = 0, ngone = 0;
	bool missing = false, dup;

	for (i = 0; i < l->num_gids && i < UABI_SW_LINK_GIDS; i++) {
		const u8 *g = l->gids[i];

		if (!memcmp(g, zero, 16) || !memcmp(g, r->addr, 16))
			continue;
		dup = false;
		for (j = 0; j < n; j++)
			dup = dup || !memcmp(naddr[j], g, 16);
		if (dup)
			continue;
		nsock[n] = NULL;
		for (j = 0; j < r->nothers; j++)
			if (r->osock[j] && !memcmp(r->oaddr[j], g, 16)) {
				nsock[n] = r->osock[j];
				r->osock[j] = NULL;	/* kept */
			}
		if (!nsock[n] && roce_sock_open(r, g, &nsock[n])) {
			missing = true;
			continue;
		}
		memcpy(naddr[n++], g, 16);
	}
	for (j = 0; j < r->nothers; j++)
		if (r->osock[j])
			gone[ngone++] = r->osock[j];
	for (i = 0; i < n; i++) {
		r->osock[i] = nsock[i];
		memcpy(r->oaddr[i], naddr[i], 16);
	}
	r->nothers = n;
	r->others_missing = missing;
	/* No sender uses a socket that goes after this, */
	roce_kcm_sync(r);
	for (j = 0; j < ngone; j++)
		roce_sock_close(gone[j]);
	/* nor a softirq. */
	if (ngone)
		synchronize_rcu();
}

/* Caller holds roce_lock. */
static void roce_unbind(struct uabi_kroce *r)
{
	u32 i;

	if (!r->sock)
		return;
	uabi_kcm_detach(r->dev);
	for (i = 0; i < r->nothers; i++)
		roce_sock_close(r->osock[i]);
	r->nothers = 0;
	r->others_missing = false;
	roce_sock_close(r->sock);
	r->sock = NULL;
	memset(r->addr, 0, sizeof(r->addr));
	/* No softirq still uses r through the old sockets after this. */
	synchronize_rcu();
}

/* (Re)binds the device's socket to its receive address, when that
 * changed, and those at its other addresses.  Caller holds roce_lock. */
static void roce_bind(struct uabi_kroce *r, const struct uabi_sw_link *l)
{
	struct socket *sock;
	u8 addr[16];
	int ret;

	if (!receive_addr(l, addr)) {
		roce_unbind(r);
		r->bind_err = -EADDRNOTAVAIL;
		return;
	}
	if (r->sock && !memcmp(addr, r->addr, 16)) {
		roce_bind_others(r, l);
		return;
	}
	roce_unbind(r);
	ret = roce_sock_open(r, addr, &sock);
	if (ret) {
		r->bind_err = ret;
		pr_warn("rdma_uabi: device %s: cannot receive at port %d of %s: %d\n",
			r->dev->name, ROCE_PORT, r->ifname, ret);
		return;
	}
	r->sock = sock;
	memcpy(r->addr, addr, 16);
	r->bind_err = 0;
	{
		const struct uabi_kcm_counters c = {
			.rx_relayed = &r->rx_relayed, .rx_dropped = &r->rx_dropped,
			.qp1_in = &r->qp1_in, .qp1_refused = &r->qp1_refused,
		};

		uabi_kcm_attach(r->dev, r->ifindex, &c);
	}
	roce_bind_others(r, l);
}

/* ------------------------------------------------------------------ link */
/* GID order: IPv4 addresses (IPv4-mapped), then IPv6 ones, link-local
 * last; RoCE v2 for each (as the userspace host reads them). */
static int roce_read_link(const char *ifname, struct uabi_sw_link *out, int *ifindex)
{
	struct net_device *nd;
	struct in_device *in;
	u32 n = 0;

	memset(out, 0, sizeof(*out));
	strscpy(out->netdev, ifname, sizeof(out->netdev));
	rtnl_lock();
	nd = __dev_get_by_name(&init_net, ifname);
	if (!nd) {
		rtnl_unlock();
		return -ENODEV;
	}
	*ifindex = nd->ifindex;
	out->ip_mtu = nd->mtu;
	if (nd->addr_len == ETH_ALEN)
		memcpy(out->mac, nd->dev_addr, ETH_ALEN);
	out->carrier = netif_running(nd) && netif_carrier_ok(nd);
	in = __in_dev_get_rtnl(nd);
	if (in) {
		const struct in_ifaddr *ifa;

		in_dev_for_each_ifa_rtnl(ifa, in) {
			if (n == UABI_SW_LINK_GIDS)
				break;
			ipv6_addr_set_v4mapped(ifa->ifa_local, (struct in6_addr *)out->gids[n]);
			n++;
		}
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct inet6_dev *i6 = __in6_dev_get(nd);
		struct inet6_ifaddr *ifp;
		int pass;

		for (pass = 0; i6 && pass < 2; pass++) {
			read_lock_bh(&i6->lock);
			list_for_each_entry(ifp, &i6->addr_list, if_list) {
				bool ll = ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL;

				if (ll != (pass == 1) || n == UABI_SW_LINK_GIDS)
					continue;
				memcpy(out->gids[n++], &ifp->addr, 16);
			}
			read_unlock_bh(&i6->lock);
		}
	}
#endif
	out->num_gids = n;
	rtnl_unlock();
	return 0;
}

static void roce_work_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(roce_work, roce_work_fn);

/* A device with an address but no socket (or no socket yet at one of its
 * other addresses) tries again every second: an
 * IPv6 address cannot be bound while it is tentative (duplicate address
 * detection), whose end no notifier reports, and a port another socket
 * holds (EADDRINUSE) may be freed.  Caller holds roce_lock. */
static void roce_retry_later(void)
{
	struct uabi_sw_link link;
	struct uabi_kroce *r;
	u8 addr[16];

	list_for_each_entry(r, &roce_list, node)
		if ((r->sock && r->others_missing) ||
		    (!r->sock && !uabi_sw_link_get(r->dev, &link) && receive_addr(&link, addr))) {
			schedule_delayed_work(&roce_work, HZ);
			return;
		}
}

/* Reads the interface of every device again.  Caller holds roce_lock. */
static void roce_refresh_locked(void)
{
	struct uabi_sw_link link;
	struct uabi_kroce *r;

	list_for_each_entry(r, &roce_list, node) {
		if (!roce_read_link(r->ifname, &link, &r->ifindex)) {
			uabi_sw_link_update(r->dev, &link);
			roce_bind(r, &link);
		} else if (!uabi_sw_link_get(r->dev, &link)) {
			/* The interface is gone: no carrier, no address. */
			link.carrier = 0;
			link.num_gids = 0;
			uabi_sw_link_update(r->dev, &link);
			roce_unbind(r);
			r->bind_err = -ENODEV;
		}
	}
	roce_retry_later();
}

static void roce_work_fn(struct work_struct *w)
{
	mutex_lock(&roce_lock);
	roce_refresh_locked();
	mutex_unlock(&roce_lock);
}

static atomic_t roce_count = ATOMIC_INIT(0);

static void roce_changed(struct net_device *nd)
{
	if (nd && net_eq(dev_net(nd), &init_net) && atomic_read(&roce_count))
		mod_delayed_work(system_wq, &roce_work, 0);
}

static int roce_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	roce_changed(netdev_notifier_info_to_dev(ptr));
	return NOTIFY_DONE;
}

static int roce_inet_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	const struct in_ifaddr *ifa = ptr;

	roce_changed(ifa->ifa_dev ? ifa->ifa_dev->dev : NULL);
	return NOTIFY_DONE;
}

static int roce_inet6_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	const struct inet6_ifaddr *ifp = ptr;

	roce_changed(ifp->idev ? ifp->idev->dev : NULL);
	return NOTIFY_DONE;
}

static struct notifier_block roce_netdev_nb = { .notifier_call = roce_netdev_event };
static struct notifier_block roce_inet_nb = { .notifier_call = roce_inet_event };
static struct notifier_block roce_inet6_nb = { .notifier_call = roce_inet6_event };

/* ------------------------------------------------------------ devices */
/* The device at position @pos (0: uabi_sw0).  Caller holds roce_lock, so
 * that no RoCE device comes or goes meanwhile. */
static struct uabi_device *device_at(u32 pos, u32 *slot)
{
	struct uabi_device *dev;
	u32 i, k = 0;

	/* Past the registry's slots uabi_device_get() finds nothing. */
	for (i = 0; i < 16; i++) {
		dev = uabi_device_get(i);
		if (!dev)
			continue;
		if (k++ == pos) {
			if (slot)
				*slot = i;
			return dev;
		}
	}
	return NULL;
}

/* The device called @name, and its registry slot in @slot. */
static struct uabi_device *device_named(const char *name, u32 *slot)
{
	struct uabi_device *dev;
	u32 pos;

	for (pos = 0; (dev = device_at(pos, slot)); pos++)
		if (!strcmp(dev->name, name))
			return dev;
	return NULL;
}

/* A device name: 1 to 63 bytes of letters, digits, '_', '-' and '.', not
 * "." or "..", so that it is a file name in the sysfs view. */
static bool link_name_ok(const char *name)
{
	size_t i, n = strnlen(name, 64);

	if (!n || n >= 64 || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static int link_add(const struct uabi_link_req *req)
{
	struct uabi_sw_link link;
	struct uabi_device *dev;
	struct uabi_kroce *r;
	int ret, ifindex = 0;

	if (!link_name_ok(req->name) || !req->netdev[0] || strchr(req->netdev, '/'))
		return -EINVAL;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	mutex_lock(&roce_lock);
	ret = -EEXIST;
	if (device_named(req->name, NULL))
		goto err;
	ret = roce_read_link(req->netdev, &link, &ifindex);
	if (ret)
		goto err;
	dev = uabi_sw_create_roce(&uabi_kshm_ops, UABI_SW_HEAP_KERNEL, req->name, &link);
	if (IS_ERR(dev)) {
		ret = PTR_ERR(dev);
		goto err;
	}
	r->dev = dev;
	strscpy(r->ifname, req->netdev, sizeof(r->ifname));
	r->ifindex = ifindex;
	xa_init(&r->qps);
	mutex_init(&r->bind_lock);
	INIT_LIST_HEAD(&r->binds);
	atomic64_set(&r->rx_relayed, 0);
	atomic64_set(&r->rx_dropped, 0);
	atomic64_set(&r->qp1_in, 0);
	atomic64_set(&r->qp1_refused, 0);
	list_add_tail(&r->node, &roce_list);
	atomic_inc(&roce_count);
	roce_bind(r, &link);
	roce_retry_later();
	if (r->sock)
		pr_info("rdma_uabi: device %s on %s\n", dev->name, r->ifname);
	else
		pr_info("rdma_uabi: device %s on %s (not receiving: %d)\n", dev->name, r->ifname,
			r->bind_err);
	mutex_unlock(&roce_lock);
	return 0;
err:
	mutex_unlock(&roce_lock);
	kfree(r);
	return ret;
}

/* Caller holds roce_lock; no context is open on the device. */
static void roce_destroy(struct uabi_kroce *r)
{
	roce_unbind(r);
	list_del(&r->node);
	atomic_dec(&roce_count);
	WARN_ON(!xa_empty(&r->qps));
	WARN_ON(!list_empty(&r->binds));
	xa_destroy(&r->qps);
	uabi_sw_destroy(r->dev);
	kfree(r);
}

static int link_del(const struct uabi_link_req *req)
{
	struct uabi_device *dev;
	struct uabi_kroce *r;
	u32 slot = 0;
	int ret;

	mutex_lock(&roce_lock);
	dev = device_named(req->name, &slot);
	r = dev ? roce_of(dev) : NULL;
	ret = !dev ? -ENODEV : !r ? -EOPNOTSUPP : 0;
	if (!ret) {
		/* The CM's IDs through it hear DEVICE_REMOVAL first and its
		 * contexts IBV_EVENT_DEVICE_FATAL (their programs then close
		 * them: `uabi link del` asks again while it is busy).
		 * roce_lock, then the CM's mutex: the order roce_cm.c
		 * allows. */
		uabi_cm_link_removal(slot, 0);
		mutex_lock(&dev->lock);
		if (atomic_read(&dev->num_contexts) || !list_empty(&dev->rcv_qps))
			ret = -EBUSY;
		mutex_unlock(&dev->lock);
		if (ret)
			uabi_device_fatal(dev);
	}
	if (!ret) {
		uabi_cm_link_removal(slot, 1);
		pr_info("rdma_uabi: device %s deleted\n", dev->name);
		roce_destroy(r);
	}
	mutex_unlock(&roce_lock);
	return ret;
}

/* What UABI_IOCTL_LINK_QUERY (@info) or _QUERY_CM (@cm) answers for the
 * device at position @pos: one of the two is filled, the other NULL. */
static int link_query(u32 pos, struct uabi_link_info *info, struct uabi_link_cm_info *cm)
{
	struct uabi_cm_wire_stats st;
	struct uabi_sw_link link;
	struct uabi_device *dev;
	struct uabi_kroce *r;

	mutex_lock(&roce_lock);
	dev = device_at(pos, NULL);
	if (!dev) {
		mutex_unlock(&roce_lock);
		return -ENODEV;
	}
	r = roce_of(dev);
	if (cm) {
		memset(cm, 0, sizeof(*cm));
		cm->index = pos;
		strscpy(cm->name, dev->name, sizeof(cm->name));
		if (r) {
			cm->qp1_in = atomic64_read(&r->qp1_in);
			cm->qp1_refused = atomic64_read(&r->qp1_refused);
			/* roce_lock, then the CM's mutex: the order roce_cm.c allows */
			uabi_cm_wire_get_stats(&st);
			cm->cm_taken = st.received;
			cm->cm_dropped = st.dropped;
			cm->cm_sent = st.sent;
			cm->cm_resent = st.resent;
			cm->cm_timed_out = st.timed_out;
		}
		mutex_unlock(&roce_lock);
		return 0;
	}
	memset(info, 0, sizeof(*info));
	info->index = pos;
	strscpy(info->name, dev->name, sizeof(info->name));
	info->contexts = atomic_read(&dev->num_contexts);
	if (r && !uabi_sw_link_get(dev, &link)) {
		info->roce = 1;
		strscpy(info->netdev, link.netdev, sizeof(info->netdev));
		info->carrier = link.carrier;
		info->ip_mtu = link.ip_mtu;
		info->num_gids = link.num_gids;
		memcpy(info->addr, r->addr, 16);
		info->port = ROCE_PORT;
		info->relay_error = r->bind_err;
		info->rx_relayed = atomic64_read(&r->rx_relayed);
		info->rx_dropped = atomic64_read(&r->rx_dropped);
	}
	mutex_unlock(&roce_lock);
	return 0;
}

long uabi_kroce_link_ioctl(unsigned int cmd, void __user *arg)
{
	struct uabi_link_info info;
	struct uabi_link_req req;
	int ret;

	if (cmd == UABI_IOCTL_LINK_QUERY_CM) {
		struct uabi_link_cm_info cm;

		if (copy_from_user(&cm, arg, sizeof(cm)))
			return -EFAULT;
		ret = link_query(cm.index, NULL, &cm);
		if (!ret && copy_to_user(arg, &cm, sizeof(cm)))
			ret = -EFAULT;
		return ret;
	}
	if (cmd == UABI_IOCTL_LINK_QUERY) {
		if (copy_from_user(&info, arg, sizeof(info)))
			return -EFAULT;
		ret = link_query(info.index, &info, NULL);
		if (!ret && copy_to_user(arg, &info, sizeof(info)))
			ret = -EFAULT;
		return ret;
	}
	/* The devices are the machine's, as `rdma link add` needs. */
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (!memchr(req.name, 0, sizeof(req.name)) || !memchr(req.netdev, 0, sizeof(req.netdev)))
		return -EINVAL;
	return cmd == UABI_IOCTL_LINK_ADD ? link_add(&req) : link_del(&req);
}

struct uabi_context *uabi_kroce_context_open(u32 pos, const struct uabi_host_ops *host,
					     const struct uabi_peer *peer,
					     struct uabi_kroce **roce)
{
	struct uabi_context *ctx = ERR_PTR(-ENODEV);
	struct uabi_device *dev;

	mutex_lock(&roce_lock);
	dev = device_at(pos, NULL);
	if (dev) {
		ctx = uabi_context_open(dev, host, NULL, peer);
		*roce = roce_of(dev);
	}
	mutex_unlock(&roce_lock);
	return ctx;
}

/* ------------------------------------------------------- context relays */
int uabi_kroce_relay(struct uabi_kfile *kf, struct uabi_wire_relay __user *arg)
{
	struct uabi_wire_relay out = {};
	struct uabi_krelay *q;
	struct file *file;
	int fd, ret;

	if (!kf->roce)
		return -EOPNOTSUPP;
	mutex_lock(&roce_lock);
	ret = kf->roce->sock ? 0 : kf->roce->bind_err ? kf->roce->bind_err : -EADDRNOTAVAIL;
	mutex_unlock(&roce_lock);
	if (ret)
		return ret;
	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return -ENOMEM;
	refcount_set(&q->ref, 1);	/* the file's */
	skb_queue_head_init(&q->queue);
	init_waitqueue_head(&q->wait);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		kfree(q);
		return fd;
	}
	file = anon_inode_getfile("[uabi_relay]", &relay_fops, q, O_RDONLY | O_NONBLOCK);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		kfree(q);
		return PTR_ERR(file);
	}
	out.fd = fd;
	out.port = ROCE_PORT;
	if (copy_to_user(arg, &out, sizeof(out))) {
		fput(file);	/* frees the relay */
		put_unused_fd(fd);
		return -EFAULT;
	}
	refcount_inc(&q->ref);		/* the context's */
	q->owner = kf;
	list_add_tail(&q->node, &kf->relays);
	fd_install(fd, file);
	return 0;
}

/* Whether @qpn is the number of a QP among the objects of @ctx. */
static bool owns_qpn(struct uabi_context *ctx, u32 qpn)
{
	const u32 room = 32;
	struct uabi_object_cursor after = {};
	struct uabi_object_list *l;
	bool found = false;
	u32 i;

	l = kmalloc(struct_size(l, entries, room), GFP_KERNEL);
	if (!l)
		return false;
	do {
		uabi_list_objects(ctx, UABI_LIST_CONTEXT, &after, l, room);
		for (i = 0; i < l->count; i++)
			if (l->entries[i].type == UABI_OBJ_QP &&
			    !(l->entries[i].flags & UABI_OBJECT_INFO_F_BUSY) &&
			    (l->entries[i].qpn & 0xffffff) == qpn)
				found = true;
		if (l->count) {
			after.context = l->entries[l->count - 1].context;
			after.handle = l->entries[l->count - 1].handle;
		}
	} while (!found && l->more && l->count);
	kfree(l);
	return found;
}

/* @qpn's server unbound or went: the first context left that still holds
 * the QP serves it, or nobody.  Caller holds r->bind_lock. */
static void promote(struct uabi_kroce *r, u32 qpn)
{
	struct uabi_kbind *b;

	list_for_each_entry(b, &r->binds, node)
		if (b->qpn == qpn && owns_qpn(b->kf->ctx, qpn)) {
			if (xa_is_err(xa_store(&r->qps, qpn, b->q, GFP_KERNEL)))
				break;
			return;
		}
	xa_erase(&r->qps, qpn);
}

/* Caller holds r->bind_lock and checked that @kf's context holds @qpn. */
static int bind(struct uabi_kroce *r, struct uabi_kfile *kf, struct uabi_krelay *q, u32 qpn)
{
	struct uabi_krelay *cur = xa_load(&r->qps, qpn);
	struct uabi_kbind *b, *mine = NULL, *server = NULL;

	list_for_each_entry(b, &r->binds, node) {
		if (b->qpn != qpn)
			continue;
		if (b->kf == kf)
			mine = b;
		else if (b->q == cur)
			server = b;
	}
	if (!mine) {
		mine = kmalloc(sizeof(*mine), GFP_KERNEL);
		if (!mine)
			return -ENOMEM;
		mine->qpn = qpn;
		mine->kf = kf;
		list_add_tail(&mine->node, &r->binds);
	}
	mine->q = q;
	/* Another context serves it and still holds it: this one waits. */
	if (server && owns_qpn(server->kf->ctx, qpn))
		return 0;
	/* Else (nobody, or a QP gone whose number is reused): ours. */
	if (server) {
		list_del(&server->node);
		kfree(server);
	}
	return xa_err(xa_store(&r->qps, qpn, q, GFP_KERNEL));
}

static int unbind(struct uabi_kroce *r, struct uabi_kfile *kf, struct uabi_krelay *q, u32 qpn)
{
	struct uabi_kbind *b;

	list_for_each_entry(b, &r->binds, node)
		if (b->qpn == qpn && b->kf == kf && b->q == q) {
			list_del(&b->node);
			kfree(b);
			if (xa_load(&r->qps, qpn) == q)
				promote(r, qpn);
			return 0;
		}
	return -ENOENT;
}

int uabi_kroce_bind(struct uabi_kfile *kf, const struct uabi_wire_bind *b)
{
	struct uabi_krelay *q;
	struct fd f;
	int ret;

	if (!kf->roce || list_empty(&kf->relays))
		return -EOPNOTSUPP;
	if (b->qpn > 0xffffff || b->on > 1 || b->reserved)
		return -EINVAL;
	/* The relay: one this context made. */
	f = fdget(b->relay_fd);
	if (!f.file)
		return -EBADF;
	q = f.file->f_op == &relay_fops ? f.file->private_data : NULL;
	if (!q || q->owner != kf) {
		fdput(f);
		return -EBADF;
	}
	mutex_lock(&kf->roce->bind_lock);
	if (!b->on)
		ret = unbind(kf->roce, kf, q, b->qpn);
	else if (!owns_qpn(kf->ctx, b->qpn))
		/* Only a QP of this context's own: found among its objects,
		 * never by the number alone. */
		ret = -ENOENT;
	else
		ret = bind(kf->roce, kf, q, b->qpn);
	mutex_unlock(&kf->roce->bind_lock);
	fdput(f);
	return ret;
}

/* The context closes: its QPNs go nowhere from now on, its relays give
 * what they hold and then nothing more. */
static bool relay_of(struct uabi_kfile *kf, void *entry)
{
	struct uabi_krelay *q;

	list_for_each_entry(q, &kf->relays, node)
		if (q == entry)
			return true;
	return false;
}

void uabi_kroce_release(struct uabi_kfile *kf)
{
	struct uabi_krelay *q, *next;
	struct uabi_kbind *b, *bn;
	unsigned long idx;
	void *entry;

	/* What it served goes to the next context that holds it. */
	if (kf->roce) {
		struct uabi_kroce *r = kf->roce;

		mutex_lock(&r->bind_lock);
		list_for_each_entry_safe(b, bn, &r->binds, node) {
			if (b->kf != kf)
				continue;
			list_del(&b->node);
			if (xa_load(&r->qps, b->qpn) == b->q)
				promote(r, b->qpn);
			kfree(b);
		}
		mutex_unlock(&r->bind_lock);
	}
	/* Entries are compared, never dereferenced: another context's relay
	 * may be going away meanwhile. */
	if (kf->roce && !list_empty(&kf->relays))
		xa_for_each(&kf->roce->qps, idx, entry)
			if (relay_of(kf, entry))
				xa_cmpxchg(&kf->roce->qps, idx, entry, NULL, GFP_KERNEL);
	list_for_each_entry_safe(q, next, &kf->relays, node) {
		list_del(&q->node);
		q->owner = NULL;
		relay_put(q);
	}
}

/* ------------------------------------------------------ module init/exit */
int uabi_kroce_init(void)
{
	int ret;

	ret = register_netdevice_notifier(&roce_netdev_nb);
	if (ret)
		return ret;
	ret = register_inetaddr_notifier(&roce_inet_nb);
	if (ret)
		goto err_netdev;
	ret = register_inet6addr_notifier(&roce_inet6_nb);
	if (ret)
		goto err_inet;
	return 0;
err_inet:
	unregister_inetaddr_notifier(&roce_inet_nb);
err_netdev:
	unregister_netdevice_notifier(&roce_netdev_nb);
	return ret;
}

/* No context is left (every open file pinned the module). */
void uabi_kroce_exit(void)
{
	struct uabi_kroce *r, *next;

	unregister_inet6addr_notifier(&roce_inet6_nb);
	unregister_inetaddr_notifier(&roce_inet_nb);
	unregister_netdevice_notifier(&roce_netdev_nb);
	cancel_delayed_work_sync(&roce_work);
	mutex_lock(&roce_lock);
	list_for_each_entry_safe(r, next, &roce_list, node)
		roce_destroy(r);
	mutex_unlock(&roce_lock);
	/* Relays freed by RCU: their callbacks must run before the module's
	 * text goes. */
	rcu_barrier();
}
