// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The CM across hosts in the kernel host (docs/cm.md, "Across hosts"):
 * the core's CM (core/cm_mad.c) gets the module's RoCE devices (roce.c)
 * for its MADs on QP1, and one timer.
 *
 * - Receiving: roce.c's encap hook hands every datagram for QP1 (the
 *   BTH's destination QP) to uabi_kcm_rcv(), in softirq.  It is queued,
 *   with its IP addresses (and the IPv4 header the ICRC covers) in
 *   skb->cb, to one queue of at most KCM_RXQ_MAX datagrams; a full queue
 *   drops it (counted in the device's rx_dropped).  A work item then
 *   takes it as uabid does: a whole UD SEND to the GSI (BTH version 0,
 *   the default P_Key, the GSI's Q_Key, a MAD's worth of payload) with
 *   its ICRC right goes to uabi_cm_wire_input() (counted in rx_relayed),
 *   anything else is dropped (rx_dropped).  The core judges the MAD.
 * - Sending (the send hook, called with the CM's mutex held): the MAD in
 *   a RoCEv2 UD SEND from QP1 to QP1 (BTH, DETH with the GSI's Q_Key, the
 *   MAD, the ICRC), sent from the device's own socket at the MAD's source
 *   address (roce.c has one at port 4791 of every address of the device:
 *   the connection's source GID is one of them) with MSG_DONTWAIT.  IPv4
 *   goes with DF set (IP_PMTUDISC_DO, set by roce.c), so that Linux gives
 *   it IPv4 ID 0 (an unconnected socket), the ID the ICRC is computed
 *   with.
 * - The timer: delayed work (the arm hook).
 *
 * Locking: kcm_lock (a mutex) guards the sockets of each link for the
 *   senders; roce.c attaches and detaches a device, and sets its sockets,
 *   under its roce_lock, so the order is roce_lock, then kcm_lock, and the CM's
 *   device mutex, then kcm_lock (the send hook).  Nothing calls into the
 *   core with kcm_lock held.  The softirq finds a device's link under
 *   RCU; a link is freed by RCU once detached.  Detaching waits for the
 *   receive work (flush_work() under roce_lock): the work takes the CM's
 *   device mutex, and nothing holding that mutex takes roce_lock.
 */
#include "linux_host.h"

#include <uabi/cm_wire.h>

#include <linux/crc32.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/net.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>

#define KCM_LINKS 16			/* the registry's device slots */
#define KCM_RXQ_MAX 256			/* datagrams waiting for the CM */
#define KCM_RX_BATCH 64			/* taken per run of the work */
#define ROCE_PORT 4791
#define BTH_BYTES 12
#define DETH_BYTES 8
#define ICRC_BYTES 4
#define OP_UD_SEND_ONLY 0x64
#define GSI_QKEY 0x80010000u
#define DEFAULT_PKEY 0xffff
/* The largest datagram the CM looks at: a MAD with pad, and room. */
#define KCM_MAX_BYTES (BTH_BYTES + DETH_BYTES + 2 * UABI_CM_MAD_SIZE + ICRC_BYTES)

struct kcm_link {
	struct uabi_device *dev;	/* constant while attached */
	u32 slot;			/* the device's index for the core */
	/* roce.c's sockets, each bound at port 4791 of one address (a GID)
	 * of the device; under kcm_lock (uabi_kcm_set_socks()). */
	struct socket *sock[UABI_KCM_SOCKS];
	u8 addr[UABI_KCM_SOCKS][16];
	u32 nsocks;
	int ifindex;
	u32 psn;			/* of QP1's sends, under kcm_lock */
	struct uabi_kcm_counters c;	/* roce.c's counters of the device */
	struct rcu_head rcu;
};

/* What the softirq keeps of a datagram for the work. */
struct kcm_cb {
	struct kcm_link *link;		/* compared, never dereferenced, later */
	u8 v6;
	u8 iph[32];			/* IPv4: the header (20 bytes); IPv6: src, dst */
};

static DEFINE_MUTEX(kcm_lock);
static struct kcm_link __rcu *kcm_links[KCM_LINKS];
static struct sk_buff_head kcm_rxq;

static void kcm_timer_fn(struct work_struct *work)
{
	uabi_cm_wire_timeout();
}

static DECLARE_DELAYED_WORK(kcm_timer, kcm_timer_fn);

static void kcm_rx_fn(struct work_struct *work);
static DECLARE_WORK(kcm_rx_work, kcm_rx_fn);

static bool v4_mapped(const u8 *g)
{
	static const u8 prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g, prefix, sizeof(prefix));
}

static void put16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static void put32(u8 *p, u32 v)
{
	put16(p, (u16)(v >> 16));
	put16(p + 2, (u16)v);
}

static u32 get32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/*
 * The ICRC of the RoCEv2 packet @pkt (@len bytes from the BTH, without
 * the ICRC) (IBTA vol. 1 annex A17): the reflected CRC-32 of 8 bytes of
 * ones (the LRH's place), the IP header with TOS/traffic class, flow
 * label, TTL/hop limit and checksum as ones, the UDP header with its
 * checksum as ones, the BTH with its reserved byte (F, B) as ones, the
 * rest of the packet.  @iph: the IPv4 header (20 bytes) or the IPv6
 * source and destination (32).
 */
static u32 kcm_icrc(bool v6, const u8 *iph, u16 sport, u16 dport, const u8 *pkt, u32 len)
{
	static const u8 ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	u8 ph[40 + 8 + BTH_BYTES];
	u32 n, udp_len = 8 + len + ICRC_BYTES, c;

	if (v6) {
		put32(ph, 0x6fffffffu);
		put16(ph + 4, (u16)udp_len);
		ph[6] = IPPROTO_UDP;
		ph[7] = 0xff;
		memcpy(ph + 8, iph, 32);
		n = 40;
	} else {
		memcpy(ph, iph, 20);
		ph[1] = 0xff;		/* TOS */
		ph[8] = 0xff;		/* TTL */
		ph[10] = 0xff;		/* checksum */
		ph[11] = 0xff;
		n = 20;
	}
	put16(ph + n, sport);
	put16(ph + n + 2, dport);
	put16(ph + n + 4, (u16)udp_len);
	put16(ph + n + 6, 0xffff);
	n += 8;
	memcpy(ph + n, pkt, BTH_BYTES);
	ph[n + 4] = 0xff;
	n += BTH_BYTES;
	c = crc32_le(~0u, ones, sizeof(ones));
	c = crc32_le(c, ph, n);
	c = crc32_le(c, pkt + BTH_BYTES, len - BTH_BYTES);
	return ~c;
}

/* ------------------------------------------------------------ sending */
static int kcm_send(unsigned int link, const unsigned char *sgid, const unsigned char *dgid,
		    unsigned char tclass, const void *mad, unsigned int len)
{
	u8 buf[BTH_BYTES + DETH_BYTES + UABI_CM_MAD_SIZE + ICRC_BYTES];
	union {
		struct cmsghdr h;
		u8 b[CMSG_SPACE(sizeof(int))];
	} ctl;
	int tc = tclass;
	u32 n = BTH_BYTES + DETH_BYTES + len, icrc;
	struct sockaddr_storage ss = {};
	struct msghdr msg = {};
	struct socket *sock = NULL;
	struct kcm_link *l;
	struct kvec kv;
	u8 iph[32];
	bool v6;
	u32 i;
	int ret;

	if (link >= KCM_LINKS || len != UABI_CM_MAD_SIZE)
		return -EINVAL;
	v6 = !v4_mapped(dgid);
	mutex_lock(&kcm_lock);
	l = rcu_dereference_protected(kcm_links[link], lockdep_is_held(&kcm_lock));
	ret = -ENETDOWN;
	if (!l)
		goto out;
	/* The socket at the MAD's source address (none: the address went,
	 * or it could not be bound yet). */
	for (i = 0; i < l->nsocks && !sock; i++)
		if (!memcmp(sgid, l->addr[i], 16))
			sock = l->sock[i];
	ret = -EADDRNOTAVAIL;
	if (!sock || v6 == v4_mapped(sgid))
		goto out;
	memset(buf, 0, BTH_BYTES + DETH_BYTES);
	buf[0] = OP_UD_SEND_ONLY;
	put16(buf + 2, DEFAULT_PKEY);
	buf[7] = 1;				/* destination QP 1 */
	l->psn = (l->psn + 1) & 0xffffff;
	buf[9] = (u8)(l->psn >> 16);
	buf[10] = (u8)(l->psn >> 8);
	buf[11] = (u8)l->psn;
	put32(buf + BTH_BYTES, GSI_QKEY);
	buf[BTH_BYTES + 7] = 1;			/* source QP 1 */
	memcpy(buf + BTH_BYTES + DETH_BYTES, mad, len);
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		memcpy(iph, sgid, 16);
		memcpy(iph + 16, dgid, 16);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ROCE_PORT);
		memcpy(&a->sin6_addr, dgid, 16);
		if (ipv6_addr_type(&a->sin6_addr) & IPV6_ADDR_LINKLOCAL)
			a->sin6_scope_id = l->ifindex;
		msg.msg_namelen = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		/* The header Linux sends: DF, ID 0 (unconnected socket). */
		memset(iph, 0, 20);
		iph[0] = 0x45;
		put16(iph + 2, (u16)(20 + 8 + n + ICRC_BYTES));
		put16(iph + 6, 0x4000);
		iph[9] = IPPROTO_UDP;
		memcpy(iph + 12, sgid + 12, 4);
		memcpy(iph + 16, dgid + 12, 4);
		a->sin_family = AF_INET;
		a->sin_port = htons(ROCE_PORT);
		memcpy(&a->sin_addr, dgid + 12, 4);
		msg.msg_namelen = sizeof(*a);
	}
	icrc = kcm_icrc(v6, iph, ROCE_PORT, ROCE_PORT, buf, n);
	buf[n] = (u8)icrc;
	buf[n + 1] = (u8)(icrc >> 8);
	buf[n + 2] = (u8)(icrc >> 16);
	buf[n + 3] = (u8)(icrc >> 24);
	msg.msg_name = &ss;
	msg.msg_flags = MSG_DONTWAIT;
	if (tc) {
		/* The traffic class of this datagram alone (the socket is the
		 * device's): IP_TOS or IPV6_TCLASS as ancillary data. */
		memset(&ctl, 0, sizeof(ctl));
		ctl.h.cmsg_level = v6 ? SOL_IPV6 : SOL_IP;
		ctl.h.cmsg_type = v6 ? IPV6_TCLASS : IP_TOS;
		ctl.h.cmsg_len = CMSG_LEN(sizeof(tc));
		memcpy(ctl.b + CMSG_ALIGN(sizeof(ctl.h)), &tc, sizeof(tc));
		msg.msg_control = &ctl;
		msg.msg_controllen = sizeof(ctl);
	}
	kv.iov_base = buf;
	kv.iov_len = n + ICRC_BYTES;
	ret = kernel_sendmsg(sock, &msg, &kv, 1, kv.iov_len);
	ret = ret < 0 ? ret : 0;
out:
	mutex_unlock(&kcm_lock);
	return ret;
}

static void kcm_arm(unsigned long long delay_ns)
{
	if (!delay_ns)
		cancel_delayed_work(&kcm_timer);
	else
		mod_delayed_work(system_wq, &kcm_timer, nsecs_to_jiffies(delay_ns) + 1);
}

static const struct uabi_cm_wire_ops kcm_ops = {
	.send = kcm_send,
	.arm = kcm_arm,
};

/* ---------------------------------------------------------- receiving */
bool uabi_kcm_rcv(struct uabi_device *dev, struct sock *sk, struct sk_buff *skb)
{
	struct kcm_cb *cb = (struct kcm_cb *)skb->cb;
	struct kcm_link *l = NULL;
	u32 i;

	BUILD_BUG_ON(sizeof(*cb) > sizeof(skb->cb));
	for (i = 0; i < KCM_LINKS && !l; i++) {
		l = rcu_dereference(kcm_links[i]);
		if (l && l->dev != dev)
			l = NULL;
	}
	if (!l)
		return false;
	if (skb->len > sizeof(struct udphdr) + KCM_MAX_BYTES ||
	    skb_queue_len(&kcm_rxq) >= KCM_RXQ_MAX)
		goto drop;
	memset(cb, 0, sizeof(*cb));
	cb->link = l;
	if (sk->sk_family == AF_INET6) {
		cb->v6 = 1;
		memcpy(cb->iph, &ipv6_hdr(skb)->saddr, 16);
		memcpy(cb->iph + 16, &ipv6_hdr(skb)->daddr, 16);
	} else {
		/* No IP options (the ICRC would cover them). */
		if (ip_hdr(skb)->ihl != 5)
			goto drop;
		memcpy(cb->iph, ip_hdr(skb), 20);
	}
	skb_dst_drop(skb);
	skb_orphan(skb);
	nf_reset_ct(skb);
	skb_queue_tail(&kcm_rxq, skb);
	queue_work(system_wq, &kcm_rx_work);
	return true;
drop:
	atomic64_inc(l->c.rx_dropped);
	atomic64_inc(l->c.qp1_refused);
	kfree_skb(skb);
	return true;
}

/* A datagram for QP1 is the CM's if it is a whole UD SEND to the GSI. */
static bool kcm_gsi_ok(const u8 *b, u32 len)
{
	u32 pad;

	if (len < BTH_BYTES + DETH_BYTES + UABI_CM_MAD_SIZE + ICRC_BYTES)
		return false;
	pad = (b[1] >> 4) & 3;
	if (b[0] != OP_UD_SEND_ONLY || (b[1] & 0xf) || ((b[2] << 8 | b[3]) & 0x7fff) != 0x7fff ||
	    get32(b + BTH_BYTES) != GSI_QKEY ||
	    len - BTH_BYTES - DETH_BYTES - ICRC_BYTES - pad < UABI_CM_MAD_SIZE)
		return false;
	return true;
}

static void kcm_rx_one(struct sk_buff *skb, u8 *b)
{
	const struct kcm_cb *cb = (const struct kcm_cb *)skb->cb;
	u8 sgid[16] = {}, dgid[16] = {};
	struct kcm_link *l;
	u32 len = skb->len - sizeof(struct udphdr), slot = 0, icrc;
	bool ok = false;
	u8 udp[8];

	if (skb->len >= sizeof(struct udphdr) + BTH_BYTES + ICRC_BYTES &&
	    !skb_copy_bits(skb, 0, udp, sizeof(udp)) &&
	    !skb_copy_bits(skb, sizeof(struct udphdr), b, len) && kcm_gsi_ok(b, len)) {
		icrc = kcm_icrc(cb->v6, cb->iph, (u16)(udp[0] << 8 | udp[1]),
				(u16)(udp[2] << 8 | udp[3]), b, len - ICRC_BYTES);
		ok = icrc == ((u32)b[len - 4] | (u32)b[len - 3] << 8 | (u32)b[len - 2] << 16 |
			      (u32)b[len - 1] << 24);
	}
	/* Counted only while the link is still the one that received it. */
	rcu_read_lock();
	for (slot = 0; slot < KCM_LINKS; slot++) {
		l = rcu_dereference(kcm_links[slot]);
		if (l && l == cb->link)
			break;
	}
	if (slot == KCM_LINKS) {
		rcu_read_unlock();
		return;
	}
	atomic64_inc(ok ? l->c.rx_relayed : l->c.rx_dropped);
	atomic64_inc(ok ? l->c.qp1_in : l->c.qp1_refused);
	rcu_read_unlock();
	if (!ok)
		return;
	if (cb->v6) {
		memcpy(sgid, cb->iph, 16);
		memcpy(dgid, cb->iph + 16, 16);
	} else {
		sgid[10] = sgid[11] = dgid[10] = dgid[11] = 0xff;
		memcpy(sgid + 12, cb->iph + 12, 4);
		memcpy(dgid + 12, cb->iph + 16, 4);
	}
	uabi_cm_wire_input(slot, sgid, dgid, b + BTH_BYTES + DETH_BYTES, UABI_CM_MAD_SIZE);
}

static void kcm_rx_fn(struct work_struct *work)
{
	/* The work runs on one CPU at a time: one buffer. */
	static u8 buf[KCM_MAX_BYTES];
	struct sk_buff *skb;
	int i;

	for (i = 0; i < KCM_RX_BATCH; i++) {
		skb = skb_dequeue(&kcm_rxq);
		if (!skb)
			return;
		kcm_rx_one(skb, buf);
		consume_skb(skb);
	}
	if (!skb_queue_empty(&kcm_rxq))
		queue_work(system_wq, &kcm_rx_work);
}

/* ------------------------------------------------------------- links */
void uabi_kcm_attach(struct uabi_device *dev, int ifindex, const struct uabi_kcm_counters *c)
{
	struct kcm_link *l;
	u32 slot;

	for (slot = 0; slot < KCM_LINKS; slot++)
		if (uabi_device_get(slot) == dev)
			break;
	if (slot == KCM_LINKS)
		return;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l) {
		pr_warn("rdma_uabi: device %s: no CM across hosts (no memory)\n", dev->name);
		return;
	}
	l->dev = dev;
	l->slot = slot;
	l->ifindex = ifindex;
	l->c = *c;
	get_random_bytes(&l->psn, sizeof(l->psn));
	mutex_lock(&kcm_lock);
	WARN_ON(rcu_access_pointer(kcm_links[slot]));
	rcu_assign_pointer(kcm_links[slot], l);
	mutex_unlock(&kcm_lock);
}

void uabi_kcm_set_socks(struct uabi_device *dev, struct socket *const *socks, const u8 (*addrs)[16],
			u32 n)
{
	struct kcm_link *l;
	u32 slot, i;

	mutex_lock(&kcm_lock);
	for (slot = 0; slot < KCM_LINKS; slot++) {
		l = rcu_dereference_protected(kcm_links[slot], lockdep_is_held(&kcm_lock));
		if (!l || l->dev != dev)
			continue;
		l->nsocks = 0;
		for (i = 0; i < n && i < UABI_KCM_SOCKS; i++) {
			l->sock[i] = socks[i];
			memcpy(l->addr[i], addrs[i], 16);
			l->nsocks++;
		}
		break;
	}
	mutex_unlock(&kcm_lock);
}

/* Drops the datagrams @l received that the work has not taken yet. */
static void kcm_purge(struct kcm_link *l)
{
	struct sk_buff *skb, *tmp;
	struct sk_buff_head gone;
	unsigned long flags;

	__skb_queue_head_init(&gone);
	spin_lock_irqsave(&kcm_rxq.lock, flags);
	skb_queue_walk_safe(&kcm_rxq, skb, tmp)
		if (((struct kcm_cb *)skb->cb)->link == l) {
			__skb_unlink(skb, &kcm_rxq);
			__skb_queue_tail(&gone, skb);
		}
	spin_unlock_irqrestore(&kcm_rxq.lock, flags);
	__skb_queue_purge(&gone);
}

void uabi_kcm_detach(struct uabi_device *dev)
{
	struct kcm_link *l = NULL;
	u32 slot;

	mutex_lock(&kcm_lock);
	for (slot = 0; slot < KCM_LINKS; slot++) {
		l = rcu_dereference_protected(kcm_links[slot], lockdep_is_held(&kcm_lock));
		if (l && l->dev == dev) {
			RCU_INIT_POINTER(kcm_links[slot], NULL);
			break;
		}
		l = NULL;
	}
	mutex_unlock(&kcm_lock);
	if (!l)
		return;
	/* No sender has the socket now; after a grace period no softirq
	 * queues to @l either: what it queued goes, and @l with it (the
	 * work compares it only, under RCU). */
	synchronize_rcu();
	kcm_purge(l);
	/* A MAD of @l the work already took reaches the core before the
	 * device can go (the work takes the CM's mutex, never roce_lock). */
	flush_work(&kcm_rx_work);
	kfree_rcu(l, rcu);
}

/* ------------------------------------------------- the CM's timeouts */
/* uabid's UABI_CM_RESPONSE_TIMEOUT, UABI_CM_RETRIES and
 * UABI_CM_MRA_TIMEOUT as module parameters, writable by root at any time
 * (/sys/module/rdma_uabi/parameters/), so that a test can make a stuck
 * peer's handshake end in a fraction of a second and then put them back
 * (tests/cm/run_cm.sh's timeouts); the defaults are Linux's rdma_cm's.
 * The module's loader and sysfs call the setters under the parameters'
 * own lock, so the three values here change one at a time. */
static unsigned int kcm_response_timeout = 20, kcm_retries = 15, kcm_mra_timeout = 24;

static int kcm_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v, max = kp->arg == &kcm_retries ? 15 : 31;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v > max)
		return -ERANGE;
	*(unsigned int *)kp->arg = v;
	uabi_cm_wire_set_timeouts(kcm_response_timeout, kcm_retries);
	uabi_cm_wire_set_mra_timeout(kcm_mra_timeout);
	return 0;
}

static const struct kernel_param_ops kcm_param_ops = {
	.set = kcm_param_set,
	.get = param_get_uint,
};

module_param_cb(cm_response_timeout, &kcm_param_ops, &kcm_response_timeout, 0644);
MODULE_PARM_DESC(cm_response_timeout,
		 "CM response timeout of the handshakes started from now on, 4.096 us * 2^t, 0 to 31 (default 20: 4.3 s)");
module_param_cb(cm_retries, &kcm_param_ops, &kcm_retries, 0644);
MODULE_PARM_DESC(cm_retries, "retries of a REQ, REP or DREQ, 0 to 15 (default 15)");
module_param_cb(cm_mra_timeout, &kcm_param_ops, &kcm_mra_timeout, 0644);
MODULE_PARM_DESC(cm_mra_timeout,
		 "service timeout of the MRAs sent and of the retries of a peer known to be there, 0 to 31 (default 24: 68.7 s)");

/* ---------------------------------------------------- module init/exit */
void uabi_kcm_init(void)
{
	skb_queue_head_init(&kcm_rxq);
	uabi_cm_wire_register(&kcm_ops);
}

/* After uabi_kroce_exit(): no socket is left, no context is open. */
void uabi_kcm_exit(void)
{
	cancel_work_sync(&kcm_rx_work);
	skb_queue_purge(&kcm_rxq);
	cancel_delayed_work_sync(&kcm_timer);
	uabi_cm_wire_register(NULL);
	/* kfree_rcu() of the links: done before the module's text goes. */
	rcu_barrier();
}
