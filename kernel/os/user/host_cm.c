// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The CM across hosts in the in-process host (docs/cm.md, "Across
 * hosts"): the core's CM (core/cm_mad.c) gets the process's RoCE devices
 * for its MADs on QP1, and one timer.
 *
 * - The wire: the process's own endpoint of each RoCE device (the verbs
 *   layer's, providers/wire, bound to port 4791 of the device's
 *   addresses) checks what comes for QP1 as uabid does (a whole UD SEND
 *   to the GSI, its ICRC, the GSI's Q_Key, a 256-byte MAD) and hands the
 *   MAD to uabi_user_cm_input(); the CM's MADs leave through the port the
 *   endpoint attached (uabi_user_cm_attach()), from its socket at the
 *   MAD's source address.  A device no endpoint is attached to loses its
 *   MADs (-ENETDOWN), as a wire would: the CM's timers give up.
 * - The timer: one thread, started with the first request, sleeping on a
 *   condition variable until the deadline the CM asked for (none: until
 *   asked).  It holds no lock of ours while it calls the CM.
 *
 * Only the in-process module starts it (uabi_user_cm_start(), from
 * inproc_api.c): uabid, which links this host too, has its own.
 * Locking: the CM calls send and arm with its mutex held; port_lock and
 * timer_lock are taken inside it and nothing calls the CM holding them.
 * fork(): the child keeps no port (the endpoints' threads are the
 * parent's) and no timer thread (started again by its next request).
 */
#include <uabi/cm_wire.h>
#include <uabi/host_user.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t port_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uabi_user_cm_port ports[UABI_USER_MAX_DEVICES];	/* under port_lock */

static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cond;
static struct timespec timer_deadline;		/* under timer_lock; 0: none */
static int timer_armed, timer_stop;
static pid_t timer_pid;				/* whose thread runs; 0: none */
static pthread_t timer_thread;

static int cm_send(unsigned link, const unsigned char *sgid, const unsigned char *dgid,
		   unsigned char tclass, const void *mad, unsigned len)
{
	int ret = -ENETDOWN;

	if (link >= UABI_USER_MAX_DEVICES || len != UABI_CM_MAD_SIZE)
		return -EINVAL;
	pthread_mutex_lock(&port_lock);
	if (ports[link].send)
		ret = ports[link].send(ports[link].arg, sgid, dgid, tclass, mad, len);
	pthread_mutex_unlock(&port_lock);
	return ret;
}

static void *timer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&timer_lock);
	while (!timer_stop) {
		struct timespec now;

		if (!timer_armed) {
			pthread_cond_wait(&timer_cond, &timer_lock);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec < timer_deadline.tv_sec ||
		    (now.tv_sec == timer_deadline.tv_sec && now.tv_nsec < timer_deadline.tv_nsec)) {
			pthread_cond_timedwait(&timer_cond, &timer_lock, &timer_deadline);
			continue;
		}
		timer_armed = 0;
		pthread_mutex_unlock(&timer_lock);
		uabi_cm_wire_timeout();	/* may arm again */
		pthread_mutex_lock(&timer_lock);
	}
	pthread_mutex_unlock(&timer_lock);
	return NULL;
}

/* At exit: the thread ends before the process does (it holds no lock
 * anyone at exit waits for; a call into the CM in flight finishes). */
static void timer_exit(void)
{
	pthread_mutex_lock(&timer_lock);
	if (timer_pid != getpid()) {
		pthread_mutex_unlock(&timer_lock);
		return;
	}
	timer_stop = 1;
	pthread_cond_signal(&timer_cond);
	pthread_mutex_unlock(&timer_lock);
	pthread_join(timer_thread, NULL);
	timer_pid = 0;
}

static void cm_arm(unsigned long long delay_ns)
{
	pthread_mutex_lock(&timer_lock);
	if (!delay_ns) {
		timer_armed = 0;
	} else {
		struct timespec t;
		unsigned long long ns;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ns = (unsigned long long)t.tv_nsec + delay_ns % 1000000000ull;
		t.tv_sec += (time_t)(delay_ns / 1000000000ull + ns / 1000000000ull);
		t.tv_nsec = (long)(ns % 1000000000ull);
		timer_deadline = t;
		timer_armed = 1;
		/* No thread in this process yet (or only the parent's, before
		 * a fork): one now.  Signals stay with the program's threads. */
		if (timer_pid != getpid() && !timer_stop) {
			sigset_t all, old;

			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &old);
			if (!pthread_create(&timer_thread, NULL, timer_main, NULL))
				timer_pid = getpid();
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		}
	}
	pthread_cond_signal(&timer_cond);
	pthread_mutex_unlock(&timer_lock);
}

static const struct uabi_cm_wire_ops user_cm_ops = {
	.send = cm_send,
	.arm = cm_arm,
};

static void atfork_child(void)
{
	pthread_condattr_t a;

	pthread_mutex_init(&port_lock, NULL);
	memset(ports, 0, sizeof(ports));
	pthread_mutex_init(&timer_lock, NULL);
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&timer_cond, &a);
	pthread_condattr_destroy(&a);
	timer_pid = 0;
	timer_armed = 0;
}

/* uabid's knobs (docs/cm.md, "Timeouts"): a number up to @max, else the
 * default. */
static unsigned env_uint(const char *name, unsigned dflt, unsigned max)
{
	const char *v = getenv(name);
	char *end = NULL;
	unsigned long n;

	if (!v || !*v)
		return dflt;
	n = strtoul(v, &end, 10);
	return end && !*end && n <= max ? (unsigned)n : dflt;
}

static pthread_once_t start_once = PTHREAD_ONCE_INIT;

static void do_start(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&timer_cond, &a);
	pthread_condattr_destroy(&a);
	pthread_atfork(NULL, NULL, atfork_child);
	atexit(timer_exit);
	uabi_cm_wire_set_timeouts(env_uint("UABI_CM_RESPONSE_TIMEOUT", 20, 31),
				  env_uint("UABI_CM_RETRIES", 15, 15));
	uabi_cm_wire_set_mra_timeout(env_uint("UABI_CM_MRA_TIMEOUT", 24, 31));
	uabi_cm_wire_register(&user_cm_ops);
}

void uabi_user_cm_start(void)
{
	pthread_once(&start_once, do_start);
}

int uabi_user_cm_attach(unsigned index, const struct uabi_user_cm_port *port)
{
	int ret = 0;

	if (index >= UABI_USER_MAX_DEVICES || !port || !port->send)
		return -EINVAL;
	pthread_mutex_lock(&port_lock);
	if (ports[index].send)
		ret = -EBUSY;
	else
		ports[index] = *port;
	pthread_mutex_unlock(&port_lock);
	return ret;
}

void uabi_user_cm_detach(unsigned index, const struct uabi_user_cm_port *port)
{
	if (index >= UABI_USER_MAX_DEVICES || !port)
		return;
	/* A send in flight holds port_lock: none runs once this returns. */
	pthread_mutex_lock(&port_lock);
	if (ports[index].send == port->send && ports[index].arg == port->arg)
		memset(&ports[index], 0, sizeof(ports[index]));
	pthread_mutex_unlock(&port_lock);
}

void uabi_user_cm_input(unsigned index, const unsigned char *sgid, const unsigned char *dgid,
			const void *mad, unsigned len)
{
	if (index < UABI_USER_MAX_DEVICES)
		uabi_cm_wire_input(index, sgid, dgid, mad, len);
}
