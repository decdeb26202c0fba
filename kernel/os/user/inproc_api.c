// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The one entry point of the in-process backend: the userspace host's
 * four calls as a table.  Built twice: into libuabi_inproc.so, the module
 * the client library loads only when UABI_BACKEND=inproc asks for it (so
 * that nothing else, the drop-in libibverbs.so.1 above all, carries the
 * object core), and as the object library uabi_inproc_builtin, which
 * programs that cannot load modules (static binaries, fuzzers) link.
 */
#include <uabi/host_user.h>

static const struct uabi_user_api api = {
	.abi = UABI_USER_API_ABI,
	.init = uabi_user_init,
	.open = uabi_user_open,
	.execute = uabi_user_execute,
	.close = uabi_user_close,
	.open_device = uabi_user_open_device,
	.device_name = uabi_user_device_name,
	.device_link = uabi_user_device_link,
};

const struct uabi_user_api *uabi_user_get_api(void)
{
	return &api;
}
