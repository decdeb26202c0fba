/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
#ifndef UABI_SW_H
#define UABI_SW_H

#include <uabi/core.h>

/* Creates and registers the software device; ERR_PTR on failure. */
struct uabi_device *uabi_sw_create(void);
void uabi_sw_destroy(struct uabi_device *dev);

#endif
