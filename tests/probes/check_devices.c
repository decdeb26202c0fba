/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Every device of the backend in the view (docs/fsview.md), as a program
 * linked with libibverbs sees it under `uabi run`: for each device of
 * ibv_get_device_list(), its dev_path (class/infiniband_verbs/uverbsN) names
 * it in `ibdev`, /dev/infiniband/uverbsN is a character device, its
 * class/infiniband directory has the node GUID and port files its
 * ibv_query_* answers give; on an Ethernet (RoCE) port every GID the
 * device reports (ibv_query_gid_ex) is in gids/K with gid_attrs/types/K
 * "RoCE v2" and gid_attrs/ndevs/K the interface of its ndev_ifindex, and
 * device/net/<that interface> exists.  The umad devices count every port
 * of every device in list order; a RoCE port's umad opens and refuses QP0
 * agents (EPROTONOSUPPORT) while it takes a QP1 agent.
 *
 *   check_devices [--expect N]   N: how many devices there must be
 *
 * Exit status 0 when every check holds; prints PASS or FAIL lines.
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <rdma/ib_user_mad.h>

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Not declared by <infiniband/verbs.h>, exported by libibverbs. */
extern const char *ibv_get_sysfs_path(void);

static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

/* The first line of a file, without its newline; -1 when it cannot be read. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void expect_file(const char *path, const char *want)
{
	char got[256];
	if (read_line(path, got, sizeof(got)) != 0)
		fail("%s: %s", path, strerror(errno));
	else if (strcmp(got, want) != 0)
		fail("%s: '%s', expected '%s'", path, got, want);
	else
		printf("ok   %s: %s\n", path, got);
}

/* "0123:4567:...": the 8 groups, as sysfs prints a GID. */
static void gid_text(const uint8_t *g, char *out, size_t size)
{
	size_t n = 0;
	for (int i = 0; i < 16 && n < size; i += 2)
		n += (size_t)snprintf(out + n, size - n, "%s%02x%02x", i ? ":" : "", g[i], g[i + 1]);
}

static void check_umad_roce(const char *sys, int umad, const char *dev)
{
	char path[512], got[256];
	snprintf(path, sizeof(path), "%s/class/infiniband_mad/umad%d/ibdev", sys, umad);
	if (read_line(path, got, sizeof(got)) || strcmp(got, dev)) {
		fail("%s: '%s', expected '%s'", path, got, dev);
		return;
	}
	snprintf(path, sizeof(path), "/dev/infiniband/umad%d", umad);
	int fd = open(path, O_RDWR);
	if (fd < 0) {
		fail("%s (a RoCE port's umad): open: %s", path, strerror(errno));
		return;
	}
	struct ib_user_mad_reg_req r;
	memset(&r, 0, sizeof(r));
	r.qpn = 0;
	r.mgmt_class = 0x01; /* SubnLid: QP0 */
	r.mgmt_class_version = 1;
	errno = 0;
	int ret = ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &r);
	if (ret != -1 || errno != EPROTONOSUPPORT)
		fail("%s: a QP0 agent on a RoCE port: %d (%s), expected EPROTONOSUPPORT", path,
		     ret, strerror(errno));
	else
		printf("ok   %s: QP0 agent refused (EPROTONOSUPPORT)\n", path);
	memset(&r, 0, sizeof(r));
	r.qpn = 1;
	r.mgmt_class = 0x04; /* PerfMgt: QP1 */
	r.mgmt_class_version = 1;
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &r) != 0)
		fail("%s: a QP1 agent on a RoCE port: %s", path, strerror(errno));
	else
		printf("ok   %s: QP1 agent %u\n", path, r.id);
	close(fd);
}

int main(int argc, char **argv)
{
	int expect = -1;
	if (argc > 2 && !strcmp(argv[1], "--expect"))
		expect = atoi(argv[2]);
	const char *sys = ibv_get_sysfs_path();
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list) {
		printf("FAIL: ibv_get_device_list: %s\n", strerror(errno));
		return 1;
	}
	if (expect >= 0 && n != expect)
		fail("%d devices, expected %d", n, expect);
	int umad = 0;
	for (int i = 0; i < n; i++) {
		struct ibv_device *d = list[i];
		const char *name = ibv_get_device_name(d);
		char path[1024], want[256];
		printf("--- device %d: %s\n", i, name);
		/* uverbsN: the Nth device, in the list and in the view. */
		snprintf(want, sizeof(want), "uverbs%d", i);
		const char *base = strrchr(d->dev_path, '/');
		if (!base || strcmp(base + 1, want))
			fail("%s: dev_path %s is not .../%s", name, d->dev_path, want);
		snprintf(path, sizeof(path), "%s/class/infiniband_verbs/uverbs%d/ibdev", sys, i);
		expect_file(path, name);
		snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d", i);
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISCHR(st.st_mode))
			fail("%s: not a character device", path);
		struct ibv_context *ctx = ibv_open_device(d);
		if (!ctx) {
			fail("%s: ibv_open_device: %s", name, strerror(errno));
			continue;
		}
		struct ibv_device_attr da;
		if (ibv_query_device(ctx, &da)) {
			fail("%s: ibv_query_device", name);
			ibv_close_device(ctx);
			continue;
		}
		uint64_t g = be64toh(da.node_guid);
		snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
			 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
			 (unsigned)g & 0xffff);
		snprintf(path, sizeof(path), "%s/class/infiniband/%s/node_guid", sys, name);
		expect_file(path, want);
		for (unsigned port = 1; port <= da.phys_port_cnt; port++, umad++) {
			struct ibv_port_attr pa;
			if (ibv_query_port(ctx, (uint8_t)port, &pa)) {
				fail("%s: ibv_query_port %u", name, port);
				continue;
			}
			const int eth = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
			char pd[400];
			snprintf(pd, sizeof(pd), "%s/class/infiniband/%s/ports/%u", sys, name, port);
			snprintf(path, sizeof(path), "%s/link_layer", pd);
			expect_file(path, eth ? "Ethernet" : "InfiniBand");
			snprintf(path, sizeof(path), "%s/class/infiniband_mad/umad%d/ibdev", sys, umad);
			expect_file(path, name);
			snprintf(path, sizeof(path), "%s/class/infiniband_mad/umad%d/port", sys, umad);
			snprintf(want, sizeof(want), "%u", port);
			expect_file(path, want);
			if (!eth)
				continue;
			snprintf(path, sizeof(path), "%s/counters", pd);
			if (access(path, F_OK) == 0)
				fail("%s: a RoCE port shows PMA counters", path);
			int shown = 0;
			for (int k = 0; k < pa.gid_tbl_len; k++) {
				struct ibv_gid_entry e;
				int ret = ibv_query_gid_ex(ctx, port, (uint32_t)k, &e, 0);
				if (ret == ENODATA)
					continue;
				if (ret) {
					fail("%s: ibv_query_gid_ex %d: %s", name, k, strerror(ret));
					continue;
				}
				char text[64], ifname[IF_NAMESIZE] = "";
				gid_text(e.gid.raw, text, sizeof(text));
				snprintf(path, sizeof(path), "%s/gids/%d", pd, k);
				expect_file(path, text);
				snprintf(path, sizeof(path), "%s/gid_attrs/types/%d", pd, k);
				expect_file(path, e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2"
										    : "IB/RoCE v1");
				if (!if_indextoname(e.ndev_ifindex, ifname)) {
					fail("%s: GID %d: ndev_ifindex %u names no interface", name,
					     k, e.ndev_ifindex);
					continue;
				}
				snprintf(path, sizeof(path), "%s/gid_attrs/ndevs/%d", pd, k);
				expect_file(path, ifname);
				snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/net/%s/ifindex",
					 sys, name, ifname);
				snprintf(want, sizeof(want), "%u", e.ndev_ifindex);
				expect_file(path, want);
				shown++;
			}
			if (!shown)
				fail("%s: a RoCE port without a GID", name);
			check_umad_roce(sys, umad, name);
		}
		ibv_close_device(ctx);
	}
	/* Nothing beyond the last device. */
	char path[512];
	snprintf(path, sizeof(path), "%s/class/infiniband_verbs/uverbs%d", sys, n);
	if (access(path, F_OK) == 0)
		fail("%s exists: more uverbs devices than ibv_get_device_list() lists", path);
	snprintf(path, sizeof(path), "%s/class/infiniband_mad/umad%d", sys, umad);
	if (access(path, F_OK) == 0)
		fail("%s exists: more umad devices than ports", path);
	ibv_free_device_list(list);
	if (failures) {
		printf("FAIL: %d checks of %d devices\n", failures, n);
		return 1;
	}
	printf("PASS: %d devices\n", n);
	return 0;
}
