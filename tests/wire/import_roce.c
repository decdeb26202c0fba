// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// ibv_import_device() of a RoCE device's context (docs/wire.md): the
// import is that device (its name, link layer Ethernet) and its QPs are
// created on the wire.  Run under `uabi run` with a device called DEV.
// Exit 0 only if all of that holds.
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *want = argc > 1 ? argv[1] : "roce_lo";
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	struct ibv_context *c = NULL;
	for (int i = 0; l && i < n; i++)
		if (!strcmp(ibv_get_device_name(l[i]), want))
			c = ibv_open_device(l[i]);
	if (!c) {
		fprintf(stderr, "import_roce: no device %s\n", want);
		return 1;
	}
	struct ibv_context *d = ibv_import_device(dup(c->cmd_fd));
	if (!d) {
		perror("import_roce: ibv_import_device");
		return 1;
	}
	struct ibv_port_attr pa;
	if (ibv_query_port(d, 1, &pa))
		return 1;
	struct ibv_pd *pd = ibv_alloc_pd(d);
	struct ibv_cq *cq = pd ? ibv_create_cq(d, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 1, .max_recv_wr = 1,
					      .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = cq ? ibv_create_qp(pd, &qa) : NULL;
	const char *name = ibv_get_device_name(d->device);
	printf("import_roce: imported as %s, link layer %s, QP %s\n", name,
	       pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
	       qp ? "created" : "refused");
	if (strcmp(name, want) || pa.link_layer != IBV_LINK_LAYER_ETHERNET || !qp)
		return 1;
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(d);
	ibv_close_device(c);
	ibv_free_device_list(l);
	return 0;
}
