// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * RoCE devices of the userspace host (docs/wire.md, "The device"): a
 * software device bound to a network interface of this network namespace.
 * What the control half needs of the interface — its addresses as GIDs,
 * carrier, MTU, MAC — is read here with getifaddrs() and ioctl(), and read
 * again whenever a context is opened on the device, so addresses that come
 * and go are seen by the next context.
 */
#include <uabi/cm_wire.h>
#include <uabi/core.h>
#include <uabi/host_user.h>
#include "../../drivers/sw/sw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* GID order: IPv4 addresses (IPv4-mapped), then IPv6 ones, link-local
 * last; RoCE v2 for each (docs/wire.md). */
int uabi_user_link_read(const char *ifname, struct uabi_sw_link *out)
{
	struct ifaddrs *ifa, *a;
	struct ifreq ifr;
	int pass, fd;
	char path[64];
	FILE *f;

	if (!ifname || !*ifname || strlen(ifname) >= sizeof(out->netdev) || strchr(ifname, '/'))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out->netdev, ifname, strlen(ifname));
	if (!if_nametoindex(ifname))
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		out->ip_mtu = (u32)ifr.ifr_mtu;
	if (!ioctl(fd, SIOCGIFHWADDR, &ifr))
		memcpy(out->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr))
		out->carrier = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	/* The carrier as the interface reports it, when sysfs has it. */
	snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", ifname);
	f = fopen(path, "re");
	if (f) {
		int c = 0;

		if (fscanf(f, "%d", &c) == 1)
			out->carrier = out->carrier && c == 1;
		fclose(f);
	}
	if (getifaddrs(&ifa))
		return -errno;
	for (pass = 0; pass < 3; pass++) {
		for (a = ifa; a; a = a->ifa_next) {
			u8 *g = out->gids[out->num_gids];

			if (!a->ifa_addr || strcmp(a->ifa_name, ifname) ||
			    out->num_gids >= UABI_SW_LINK_GIDS)
				continue;
			if (pass == 0 && a->ifa_addr->sa_family == AF_INET) {
				const struct sockaddr_in *s = (const void *)a->ifa_addr;

				memset(g, 0, 16);
				g[10] = g[11] = 0xff;
				memcpy(g + 12, &s->sin_addr, 4);
				out->num_gids++;
			} else if (pass > 0 && a->ifa_addr->sa_family == AF_INET6) {
				const struct sockaddr_in6 *s = (const void *)a->ifa_addr;
				int ll = IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr);

				if (ll != (pass == 2))
					continue;
				memcpy(g, &s->sin6_addr, 16);
				out->num_gids++;
			}
		}
	}
	freeifaddrs(ifa);
	return 0;
}

/* Device @index of the host (initialised first): NULL and *err. */
static struct uabi_device *user_device(unsigned index, int *err)
{
	struct uabi_device *dev;

	*err = uabi_user_init();
	if (*err)
		return NULL;
	dev = uabi_device_get(index);
	if (!dev)
		*err = -ENODEV;
	return dev;
}

/* What RoCE devices are made with (the host's shared memory). */
static const struct uabi_shm_ops *link_shm;
static size_t link_heap;

/* A device name: 1 to 63 bytes of letters, digits, '_', '-' and '.', not
 * "." or "..", so that it is a file name in the sysfs view. */
static int link_name_ok(const char *name)
{
	size_t i, n = strlen(name);

	if (!n || n >= 64 || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

int uabi_user_link_add(const char *name, const char *ifname)
{
	struct uabi_sw_link link;
	struct uabi_device *dev;
	char other[64];
	unsigned i;
	int ret = uabi_user_init();

	if (ret)
		return ret;
	if (!name || !link_name_ok(name))
		return -EINVAL;
	for (i = 0; i < UABI_USER_MAX_DEVICES; i++)
		if (!uabi_user_device_name(i, other, sizeof(other)) && !strcmp(other, name))
			return -EEXIST;
	ret = uabi_user_link_read(ifname, &link);
	if (ret)
		return ret;
	dev = uabi_sw_create_roce(link_shm, link_heap, name, &link);
	if (IS_ERR(dev))
		return (int)PTR_ERR(dev);
	for (i = 0; i < UABI_USER_MAX_DEVICES; i++)
		if (uabi_device_get(i) == dev)
			return (int)i;
	return -EIO;
}

int uabi_user_link_del(const char *name)
{
	struct uabi_device *dev;
	struct uabi_sw_link link;
	unsigned i;
	int ret = uabi_user_init();

	if (ret)
		return ret;
	for (i = 0; i < UABI_USER_MAX_DEVICES; i++) {
		dev = uabi_device_get(i);
		if (!dev || strcmp(dev->name, name))
			continue;
		if (uabi_sw_link_get(dev, &link))
			return -EOPNOTSUPP;	/* uabi_sw0 is no link */
		/* The CM's IDs through it hear DEVICE_REMOVAL first and its
		 * contexts IBV_EVENT_DEVICE_FATAL (their programs then close
		 * them: `uabi link del` asks again while it is busy). */
		uabi_cm_link_removal(i, 0);
		mutex_lock(&dev->lock);
		ret = atomic_read(&dev->num_contexts) || !list_empty(&dev->rcv_qps) ? -EBUSY : 0;
		mutex_unlock(&dev->lock);
		if (ret) {
			uabi_device_fatal(dev);
			return ret;
		}
		uabi_cm_link_removal(i, 1);
		uabi_sw_destroy(dev);
		return 0;
	}
	return -ENODEV;
}

int uabi_user_device_query(unsigned index, struct uabi_user_device_info *out)
{
	struct uabi_sw_link link;
	int ret;
	struct uabi_device *dev = user_device(index, &ret);

	if (!dev)
		return ret;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", dev->name);
	out->contexts = (unsigned)atomic_read(&dev->num_contexts);
	if (uabi_user_device_link(index, &link))
		return 0;
	out->roce = 1;
	memcpy(out->netdev, link.netdev, sizeof(out->netdev));
	out->netdev[sizeof(out->netdev) - 1] = 0;
	out->ip_mtu = link.ip_mtu;
	out->carrier = link.carrier;
	out->num_gids = link.num_gids;
	memcpy(out->gids, link.gids, sizeof(out->gids));
	return 0;
}

/* UABI_LINKS="NAME:IFNAME[,NAME:IFNAME...]": the RoCE devices this host
 * creates beside uabi_sw0 (the in-process backend's way to `uabi link
 * add`; uabid takes them too).  A malformed entry or a missing interface
 * is reported and skipped. */
void uabi_user_links_from_env(const struct uabi_shm_ops *shm, size_t heap_bytes)
{
	const char *env = getenv("UABI_LINKS");
	char buf[256], *save = NULL, *tok;

	link_shm = shm;
	link_heap = heap_bytes;
	if (!env || !*env)
		return;
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		struct uabi_sw_link link;
		struct uabi_device *dev;
		int ret;

		if (!colon || colon == tok || strlen(tok) >= 64) {
			fprintf(stderr, "uabi: UABI_LINKS: \"%s\" is not NAME:IFNAME\n", tok);
			continue;
		}
		*colon = 0;
		if (!link_name_ok(tok)) {
			fprintf(stderr, "uabi: UABI_LINKS: \"%s\" is not a device name\n", tok);
			continue;
		}
		ret = uabi_user_link_read(colon + 1, &link);
		if (ret) {
			fprintf(stderr, "uabi: UABI_LINKS: %s: %s\n", colon + 1, strerror(-ret));
			continue;
		}
		dev = uabi_sw_create_roce(shm, heap_bytes, tok, &link);
		if (IS_ERR(dev))
			fprintf(stderr, "uabi: UABI_LINKS: %s: %s\n", tok, strerror((int)-PTR_ERR(dev)));
	}
}

int uabi_user_device_name(unsigned index, char *buf, size_t len)
{
	int ret;
	struct uabi_device *dev = user_device(index, &ret);

	if (!dev)
		return ret;
	snprintf(buf, len, "%s", dev->name);
	return 0;
}

int uabi_user_device_link(unsigned index, struct uabi_sw_link *link)
{
	char ifname[sizeof(link->netdev)];
	int ret;
	struct uabi_device *dev = user_device(index, &ret);

	if (!dev)
		return ret;
	ret = uabi_sw_link_get(dev, link);
	if (ret)
		return ret;
	/* Read the interface again: addresses and carrier may have changed
	 * (the read starts by clearing its output: the name goes first). */
	memcpy(ifname, link->netdev, sizeof(ifname));
	ifname[sizeof(ifname) - 1] = 0;
	if (!uabi_user_link_read(ifname, link))
		uabi_sw_link_update(dev, link);
	else if (!uabi_sw_link_get(dev, link))
		link->carrier = 0;	/* the interface is gone */
	return 0;
}
