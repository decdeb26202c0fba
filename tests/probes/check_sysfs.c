/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The device as middleware finds it in the file system, checked against
 * what the device answers through libibverbs (run under `uabi run`, so the
 * drop-in library answers): every sysfs file a real device has, under
 * ibv_get_sysfs_path(), equal to ibv_query_device/port/gid/pkey, and the
 * /dev/infiniband nodes (character devices that open read-write, whose
 * numbers the sysfs dev files give).  The expected text is formatted here,
 * independently of compat/fsview, as Linux's sysfs prints it.
 *
 *   check_sysfs          check; one line per file, exit status = failures
 *   check_sysfs --print  print the device's answers as KEY=VALUE lines for
 *                        tests/probes/run_probes.sh to compare the
 *                        diagnostics' output with
 *   check_sysfs --no-dev skip /dev/infiniband (SYSFS_PATH without a view)
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* libibverbs exports it (IBVERBS_1.0) without declaring it in verbs.h:
 * where sysfs is, $SYSFS_PATH honoured, as MPI libraries ask. */
extern const char *ibv_get_sysfs_path(void);

static int failures;
static int checked;
static char root[256];

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

/* The file's content without its trailing newline; NULL if unreadable. */
static char *slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

/* <root>/<rel> must read exactly `want`. */
static void expect_file(const char *rel, const char *want)
{
	char path[1024], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	checked++;
	if (!slurp(path, buf, sizeof(buf))) {
		fail("%s: %s", path, strerror(errno));
		return;
	}
	if (strcmp(buf, want)) {
		fail("%s: \"%s\", the device says \"%s\"", path, buf, want);
		return;
	}
	printf("ok   %s = %s\n", rel, want);
}

static void expect_filef(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void expect_filef(const char *rel, const char *fmt, ...)
{
	char want[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	expect_file(rel, want);
}

/* The entries of <root>/<rel> named by numbers 0..n-1, and no others. */
static void expect_indexed_dir(const char *rel, unsigned n)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	checked++;
	DIR *d = opendir(path);
	if (!d) {
		fail("%s: %s", path, strerror(errno));
		return;
	}
	unsigned count = 0, bad = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *end;
		unsigned long v = strtoul(e->d_name, &end, 10);
		if (*end || v >= n)
			bad++;
		count++;
	}
	closedir(d);
	if (count != n || bad)
		fail("%s: %u entries (%u unexpected), the port's table has %u", path, count, bad, n);
	else
		printf("ok   %s/ holds 0..%u\n", rel, n - 1);
}

static void guid_str(uint64_t g, char *b, size_t n)
{
	snprintf(b, n, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static void gid_str(const union ibv_gid *g, char *b, size_t n)
{
	size_t o = 0;
	for (int i = 0; i < 16 && o < n; i += 2)
		o += (size_t)snprintf(b + o, n - o, "%s%02x%02x", i ? ":" : "", g->raw[i], g->raw[i + 1]);
}

static const char *state_name(int s)
{
	static const char *const n[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
	return s >= 0 && s < 6 ? n[s] : "UNKNOWN";
}

static const char *phys_name(int p)
{
	static const char *const n[] = {"<unknown>", "Sleep", "Polling", "Disabled",
					"PortConfigurationTraining", "LinkUp",
					"LinkErrorRecovery", "Phy Test"};
	return p >= 0 && p < 8 ? n[p] : "<unknown>";
}

static int lanes(uint8_t w)
{
	switch (w) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	}
	return 0;
}

static void rate_str(const struct ibv_port_attr *a, char *b, size_t n)
{
	const char *name = " SDR";
	int r = 25;
	switch (a->active_speed) {
	case 2: name = " DDR"; r = 50; break;
	case 4: name = " QDR"; r = 100; break;
	case 8: name = " FDR10"; r = 100; break;
	case 16: name = " FDR"; r = 140; break;
	case 32: name = " EDR"; r = 250; break;
	case 64: name = " HDR"; r = 500; break;
	case 128: name = " NDR"; r = 1000; break;
	}
	r *= lanes(a->active_width);
	snprintf(b, n, "%d%s Gb/sec (%dX%s)", r / 10, r % 10 ? ".5" : "", lanes(a->active_width), name);
}

/* A /dev/infiniband node: a character device that opens read-write, the
 * numbers of the sysfs file `devfile` (relative to root). */
static void expect_node(const char *name, const char *devfile)
{
	char path[256], buf[64], want[64];
	struct stat st;
	snprintf(path, sizeof(path), "/dev/infiniband/%s", name);
	checked++;
	if (stat(path, &st) || !S_ISCHR(st.st_mode)) {
		fail("%s: not a character device (%s)", path, strerror(errno));
		return;
	}
	if (access(path, R_OK | W_OK)) {
		fail("%s: access(R_OK|W_OK): %s", path, strerror(errno));
		return;
	}
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fail("%s: open(O_RDWR): %s", path, strerror(errno));
		return;
	}
	close(fd);
	printf("ok   %s: character device %u:%u, opens read-write\n", path, major(st.st_rdev),
	       minor(st.st_rdev));
	snprintf(want, sizeof(want), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	(void)buf;
	expect_file(devfile, want);
}

int main(int argc, char **argv)
{
	int print = argc > 1 && !strcmp(argv[1], "--print");
	int no_dev = argc > 1 && !strcmp(argv[1], "--no-dev");
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	if (!list || n < 1) {
		printf("FAIL: no RDMA device (%s)\n", strerror(errno));
		return 1;
	}
	struct ibv_context *ctx = ibv_open_device(list[0]);
	if (!ctx) {
		printf("FAIL: ibv_open_device: %s\n", strerror(errno));
		return 1;
	}
	const char *dev = ibv_get_device_name(list[0]);
	struct ibv_device_attr da;
	if (ibv_query_device(ctx, &da)) {
		printf("FAIL: ibv_query_device\n");
		return 1;
	}
	char b[256], p[1024];

	if (print) {
		/* The device's answers, for the diagnostics' output. */
		struct ibv_port_attr pa;
		union ibv_gid gid;
		if (ibv_query_port(ctx, 1, &pa) || ibv_query_gid(ctx, 1, 0, &gid))
			return 1;
		char gs[64];
		inet_ntop(AF_INET6, gid.raw, gs, sizeof(gs));
		printf("device=%s\n", dev);
		printf("ports=%u\n", da.phys_port_cnt);
		printf("node_guid=0x%016" PRIx64 "\n", be64toh(da.node_guid));
		printf("sys_image_guid=0x%016" PRIx64 "\n", be64toh(da.sys_image_guid));
		uint64_t pg;
		memcpy(&pg, gid.raw + 8, 8);
		printf("port_guid=0x%016" PRIx64 "\n", be64toh(pg));
		printf("port_guid_short=0x%" PRIx64 "\n", be64toh(pg));
		printf("fw_ver=%s\n", da.fw_ver);
		printf("hw_ver=%x\n", da.hw_ver);
		printf("lid=%u\n", pa.lid);
		printf("sm_lid=%u\n", pa.sm_lid);
		printf("lmc=%u\n", pa.lmc);
		printf("state=%u\n", pa.state);
		printf("state_name=%s\n", state_name(pa.state));
		printf("phys_state=%u\n", pa.phys_state);
		printf("phys_name=%s\n", phys_name(pa.phys_state));
		printf("cap_mask=0x%08x\n", pa.port_cap_flags);
		printf("gid_tbl_len=%d\n", pa.gid_tbl_len);
		printf("width=%dX\n", lanes(pa.active_width));
		gid_str(&gid, b, sizeof(b));
		printf("gid0=%s\n", b);
		printf("gid0_short=%s\n", gs);
		rate_str(&pa, b, sizeof(b));
		printf("rate=%s\n", b);
		return 0;
	}

	snprintf(root, sizeof(root), "%s", ibv_get_sysfs_path());
	printf("sysfs: %s (ibv_get_sysfs_path)\n", root);

	/* class/infiniband: this device, and no other. */
	snprintf(p, sizeof(p), "%s/class/infiniband", root);
	{
		checked++;
		DIR *d = opendir(p);
		int count = 0, ours = 0;
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			count++;
			ours += !strcmp(e->d_name, dev);
		}
		if (d)
			closedir(d);
		if (!d || count != 1 || !ours)
			fail("%s: %d entries, %s (%s)", p, count, ours ? "ours among them" : "not ours",
			     d ? "" : strerror(errno));
		else
			printf("ok   class/infiniband/ holds %s\n", dev);
	}
	char ib[160];
	snprintf(ib, sizeof(ib), "class/infiniband/%.64s", dev);
#define F(rel, ...) (snprintf(p, sizeof(p), "%s/%s", ib, rel), expect_filef(p, __VA_ARGS__))
	F("node_type", "%d: CA", IBV_NODE_CA);
	guid_str(be64toh(da.node_guid), b, sizeof(b));
	F("node_guid", "%s", b);
	guid_str(be64toh(da.sys_image_guid), b, sizeof(b));
	F("sys_image_guid", "%s", b);
	F("fw_ver", "%s", da.fw_ver);
	F("hw_rev", "%x", da.hw_ver);
	/* Files with no ibv_query counterpart: present and not empty. */
	static const char *const named[] = {"hca_type", "board_id", "node_desc"};
	for (unsigned i = 0; i < 3; i++) {
		char path[1024], buf[256];
		snprintf(path, sizeof(path), "%s/%s/%s", root, ib, named[i]);
		checked++;
		if (!slurp(path, buf, sizeof(buf)) || !buf[0] || strlen(buf) > 64)
			fail("%s: missing, empty or longer than 64 bytes", path);
		else
			printf("ok   %s/%s = %s\n", ib, named[i], buf);
	}
	snprintf(p, sizeof(p), "%s/%s/device", root, ib);
	{
		struct stat st;
		checked++;
		if (stat(p, &st) || !S_ISDIR(st.st_mode))
			fail("%s: not a directory", p);
		else
			printf("ok   %s/device/\n", ib);
	}

	for (unsigned port = 1; port <= da.phys_port_cnt; port++) {
		struct ibv_port_attr a;
		if (ibv_query_port(ctx, (uint8_t)port, &a)) {
			fail("ibv_query_port(%u)", port);
			continue;
		}
		char pd[200];
		snprintf(pd, sizeof(pd), "%s/ports/%u", ib, port);
#define P(rel, ...) (snprintf(p, sizeof(p), "%s/%s", pd, rel), expect_filef(p, __VA_ARGS__))
		P("state", "%d: %s", a.state, state_name(a.state));
		P("phys_state", "%u: %s", a.phys_state, phys_name(a.phys_state));
		P("lid", "0x%x", a.lid);
		P("sm_lid", "0x%x", a.sm_lid);
		P("lid_mask_count", "%u", a.lmc);
		P("sm_sl", "%u", a.sm_sl);
		P("cap_mask", "0x%08x", a.port_cap_flags);
		rate_str(&a, b, sizeof(b));
		P("rate", "%s", b);
		P("link_layer", "%s",
		  a.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
		snprintf(p, sizeof(p), "%s/gids", pd);
		expect_indexed_dir(p, (unsigned)a.gid_tbl_len);
		snprintf(p, sizeof(p), "%s/gid_attrs/types", pd);
		expect_indexed_dir(p, (unsigned)a.gid_tbl_len);
		snprintf(p, sizeof(p), "%s/gid_attrs/ndevs", pd);
		expect_indexed_dir(p, (unsigned)a.gid_tbl_len);
		for (int i = 0; i < a.gid_tbl_len; i++) {
			union ibv_gid g;
			struct ibv_gid_entry ge;
			char rel[64];
			if (ibv_query_gid(ctx, (uint8_t)port, i, &g) ||
			    ibv_query_gid_ex(ctx, port, (uint32_t)i, &ge, 0)) {
				fail("ibv_query_gid(%u, %d)", port, i);
				continue;
			}
			gid_str(&g, b, sizeof(b));
			snprintf(rel, sizeof(rel), "gids/%d", i);
			P(rel, "%s", b);
			snprintf(rel, sizeof(rel), "gid_attrs/types/%d", i);
			P(rel, "%s", ge.gid_type == IBV_GID_TYPE_IB ? "IB/RoCE v1" :
				     ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? "IB/RoCE v1" : "RoCE v2");
			/* An InfiniBand GID has no net device. */
			snprintf(rel, sizeof(rel), "gid_attrs/ndevs/%d", i);
			P(rel, "%s", "");
		}
		snprintf(p, sizeof(p), "%s/pkeys", pd);
		expect_indexed_dir(p, a.pkey_tbl_len);
		for (int i = 0; i < a.pkey_tbl_len; i++) {
			__be16 k;
			char rel[64];
			if (ibv_query_pkey(ctx, (uint8_t)port, i, &k)) {
				fail("ibv_query_pkey(%u, %d)", port, i);
				continue;
			}
			snprintf(rel, sizeof(rel), "pkeys/%d", i);
			P(rel, "0x%04x", be16toh(k));
		}
		/* The PMA's counters (their values are compared with perfquery's
		 * by run_probes.sh): all of them, decimal numbers. */
		static const char *const counters[] = {
			"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
			"port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
			"port_xmit_discards", "port_xmit_constraint_errors",
			"port_rcv_constraint_errors", "local_link_integrity_errors",
			"excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data",
			"port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
			/* Linux's, for a PMA with extended counters */
			"unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
			"multicast_rcv_packets"};
		for (unsigned i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
			char path[1024], buf[64];
			snprintf(path, sizeof(path), "%s/%s/counters/%s", root, pd, counters[i]);
			checked++;
			char *end = NULL;
			if (!slurp(path, buf, sizeof(buf)) || !buf[0] ||
			    (strtoull(buf, &end, 10), *end))
				fail("%s: not a decimal number", path);
			else
				printf("ok   %s/counters/%s = %s\n", pd, counters[i], buf);
		}
	}

	/* The uverbs and umad classes, and the nodes their dev files name. */
	expect_filef("class/infiniband_verbs/abi_version", "6");
	expect_filef("class/infiniband_verbs/uverbs0/ibdev", "%s", dev);
	expect_filef("class/infiniband_verbs/uverbs0/abi_version", "6");
	expect_filef("class/infiniband_mad/abi_version", "5");
	for (unsigned port = 1; port <= da.phys_port_cnt; port++) {
		char d[128];
		for (int k = 0; k < 2; k++) {
			snprintf(d, sizeof(d), "class/infiniband_mad/%s%u/ibdev", k ? "issm" : "umad", port - 1);
			expect_filef(d, "%s", dev);
			snprintf(d, sizeof(d), "class/infiniband_mad/%s%u/port", k ? "issm" : "umad", port - 1);
			expect_filef(d, "%u", port);
		}
	}
	if (!no_dev) {
		expect_node("uverbs0", "class/infiniband_verbs/uverbs0/dev");
		for (unsigned port = 1; port <= da.phys_port_cnt; port++) {
			char name[32], d[128];
			snprintf(name, sizeof(name), "umad%u", port - 1);
			snprintf(d, sizeof(d), "class/infiniband_mad/%s/dev", name);
			expect_node(name, d);
			snprintf(name, sizeof(name), "issm%u", port - 1);
			snprintf(d, sizeof(d), "class/infiniband_mad/%s/dev", name);
			expect_node(name, d);
		}
	}

	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%s: %d checked, %d failed\n", failures ? "FAIL" : "PASS", checked, failures);
	return failures ? 1 : 0;
}
