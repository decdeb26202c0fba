// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The CM across hosts in the kernel host (docs/cm.md, "Across hosts"):
 * the core's one CM timer as delayed work.  The module has no RoCE device
 * yet (docs/wire.md, "Not built yet"), so it moves no MAD: a send answers
 * -ENETDOWN, and since no device of the module has an Ethernet port, no
 * address of another host resolves (ADDR_ERROR, as before).
 */
#include "linux_host.h"

#include <uabi/cm_wire.h>

#include <linux/jiffies.h>
#include <linux/workqueue.h>

static void cm_timer_fn(struct work_struct *work)
{
	uabi_cm_wire_timeout();
}

static DECLARE_DELAYED_WORK(cm_timer, cm_timer_fn);

static int cm_send(unsigned int link, const unsigned char *sgid, const unsigned char *dgid,
		   const void *mad, unsigned int len)
{
	return -ENETDOWN;
}

static void cm_arm(unsigned long long delay_ns)
{
	if (!delay_ns)
		cancel_delayed_work(&cm_timer);
	else
		mod_delayed_work(system_wq, &cm_timer, nsecs_to_jiffies(delay_ns) + 1);
}

static const struct uabi_cm_wire_ops cm_ops = {
	.send = cm_send,
	.arm = cm_arm,
};

void uabi_kcm_init(void)
{
	uabi_cm_wire_register(&cm_ops);
}

void uabi_kcm_exit(void)
{
	uabi_cm_wire_register(NULL);
	cancel_delayed_work_sync(&cm_timer);
}
