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

/* The in-process host carries the CM's MADs itself (host_cm.c), and its
 * devices number their QPs apart from other processes' devices. */
static int inproc_init(void)
{
	int ret;

	uabi_user_numbers_apart();
	ret = uabi_user_init();

	if (!ret)
		uabi_user_cm_start();
	return ret;
}

static const struct uabi_user_api api = {
	.abi = UABI_USER_API_ABI,
	.init = inproc_init,
	.open = uabi_user_open,
	.execute = uabi_user_execute,
	.close = uabi_user_close,
	.open_device = uabi_user_open_device,
	.device_name = uabi_user_device_name,
	.device_link = uabi_user_device_link,
	.cm_attach = uabi_user_cm_attach,
	.cm_detach = uabi_user_cm_detach,
	.cm_input = uabi_user_cm_input,
};

const struct uabi_user_api *uabi_user_get_api(void)
{
	return &api;
}
