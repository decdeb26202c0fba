/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The XRC programs on a RoCE device (tests/xrc/run_xrc.sh --wire): the
 * device XRC_DEVICE names instead of the first one, and QPs addressed by
 * GID instead of LID.  Every role runs on that one device, so a peer's GID
 * is our own GID XRC_GID_INDEX.  Included after a verbs header (OFED's or
 * rdma-core's: the calls used here are the same in both).
 */
#ifndef UABI_TESTS_XRC_ROCE_H
#define UABI_TESTS_XRC_ROCE_H

#include "xrc_harness.h"

static struct ibv_context *xrc_gid_ctx;
static int xrc_gid_index = -1;

/* Opens the device the test runs on: XRC_DEVICE's, or the first. */
static inline struct ibv_context *xrc_open_device(void)
{
	int n = 0, pick = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_context *ctx = NULL;
	const char *want = getenv("XRC_DEVICE");
	const char *gid = getenv("XRC_GID_INDEX");

	if (!xrc_check(list && n >= 1, "ibv_get_device_list: %d device(s)", n))
		return NULL;
	for (int i = 0; want && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), want))
			pick = i;
	if (want && !xrc_check(!strcmp(ibv_get_device_name(list[pick]), want), "device %s listed", want)) {
		ibv_free_device_list(list);
		return NULL;
	}
	ctx = ibv_open_device(list[pick]);
	xrc_check(ctx != NULL, "ibv_open_device(%s)%s%s", ibv_get_device_name(list[pick]),
		  ctx ? "" : ": ", ctx ? "" : strerror(errno));
	ibv_free_device_list(list);
	if (ctx && gid && *gid) {
		xrc_gid_ctx = ctx;
		xrc_gid_index = atoi(gid);
	}
	return ctx;
}

/* On a RoCE device: the AV's GRH towards our own GID.  0 on failure. */
static inline int xrc_roce_av(struct ibv_ah_attr *ah)
{
	union ibv_gid g;

	if (!xrc_gid_ctx)
		return 1;
	if (!xrc_expect_ret(ibv_query_gid(xrc_gid_ctx, 1, xrc_gid_index, &g), 0, "ibv_query_gid(%d)",
			    xrc_gid_index))
		return 0;
	ah->is_global = 1;
	ah->grh.dgid = g;
	ah->grh.sgid_index = (uint8_t)xrc_gid_index;
	ah->grh.hop_limit = 64;
	return 1;
}

#endif
