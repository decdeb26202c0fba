/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The connection manager across hosts (docs/cm.md, "Across hosts"): CM
 * MADs on QP1 of a RoCE device.  The core builds and parses the MADs and
 * keeps every connection's state and timers; the host moves the MADs (in
 * RoCEv2 UD packets to and from UDP port 4791) and calls back when a timer
 * it was asked for runs out.  A host that registers nothing has no CM
 * across hosts: addresses of other hosts do not resolve.
 *
 * CM IDs live on the host's first device (device index 0: the context
 * librdmacm's translator opens); the RoCE device a connection goes through
 * is named by its index.  Safe to call from C and C++.
 */
#ifndef UABI_CM_WIRE_H
#define UABI_CM_WIRE_H

#ifdef __cplusplus
extern "C" {
#endif

#define UABI_CM_MAD_SIZE 256

struct uabi_cm_wire_ops {
	/* Sends one MAD (UABI_CM_MAD_SIZE bytes) from QP1 of RoCE device
	 * @link to QP1 at @dgid, from our address @sgid (GIDs: IPv6, or
	 * IPv4-mapped), in a datagram of traffic class @tclass (the IPv4
	 * TOS or IPv6 traffic class byte).  Called with the CM's lock held:
	 * must not block or call back into the core.  0 or -errno (the MAD
	 * is then lost, as on a wire; the timers send it again). */
	int (*send)(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
		    unsigned char tclass, const void *mad, unsigned len);
	/* uabi_cm_wire_timeout() is wanted @delay_ns from now (replacing any
	 * earlier request); 0: no timer is needed.  Same rules as send. */
	void (*arm)(unsigned long long delay_ns);
};

/* What the core counted of the MADs it was given (uabi_cm_wire_input). */
struct uabi_cm_wire_stats {
	unsigned long long received;	/* MADs taken for a connection */
	unsigned long long dropped;	/* malformed, unknown, or for no connection */
	unsigned long long sent;
	unsigned long long resent;	/* sent again after a timeout */
	unsigned long long timed_out;	/* handshakes given up after the retries */
};

/* Registers the host's hooks (once, before any context is opened). */
void uabi_cm_wire_register(const struct uabi_cm_wire_ops *ops);
/* A MAD that arrived at QP1 of RoCE device @link from @sgid, for our
 * address @dgid: every byte is untrusted; what is not a CM MAD this core
 * expects is counted and dropped. */
void uabi_cm_wire_input(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
			const void *mad, unsigned len);
/* The timer asked for by ops->arm ran out (early calls are harmless). */
void uabi_cm_wire_timeout(void);
void uabi_cm_wire_get_stats(struct uabi_cm_wire_stats *out);
/* Test knobs (uabid's UABI_CM_RESPONSE_TIMEOUT and UABI_CM_RETRIES): the
 * CM response timeout (4.096 us * 2^@timeout, 0..31) and the retries of a
 * REQ, REP or DREQ (0..15) of the connections made from now on. */
void uabi_cm_wire_set_timeouts(unsigned timeout, unsigned retries);
/* Test knob (uabid's UABI_CM_MRA_TIMEOUT): the service timeout (0..31)
 * of the MRAs this core sends, and of the waits of connections inside
 * it once their peer is known to be there; 24 (68.7 s), as Linux's
 * rdma_cm. */
void uabi_cm_wire_set_mra_timeout(unsigned timeout);

/* RoCE device @link is being deleted: every ID through it hears
 * DEVICE_REMOVAL once; @gone: it is deleted now, and the IDs are cut from
 * it.  Call without the CM's lock. */
void uabi_cm_link_removal(unsigned int link, int gone);

#ifdef __cplusplus
}
#endif

#endif
