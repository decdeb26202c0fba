// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabi_hello: a program built against an installed rdma-uabi (libuabi),
// with pkg-config (Makefile) or CMake (CMakeLists.txt).  It opens a context
// on the default backend (UABI_BACKEND; uabid is started if needed),
// creates a PD, an MR and a CQ, shows that the device counts them, and
// destroys them.  Exit status 0 only if every step worked.
#include <uabi/client.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failed(const char *what, int err)
{
	std::fprintf(stderr, "uabi_hello: %s: %s\n", what, std::strerror(err));
	return 1;
}

} // namespace

int main()
{
	auto backend = uabi::backend_from_env();
	if (!backend)
		return failed("UABI_BACKEND", backend.error());
	auto ctx = uabi::Context::open(*backend);
	if (!ctx)
		return failed("opening a context", ctx.error());
	auto dev = ctx->query_device();
	if (!dev)
		return failed("query_device", dev.error());
	std::printf("device %s on the %s backend\n", dev->name.c_str(),
		    ctx->transport().name());

	auto before = ctx->counters();
	auto pd = ctx->alloc_pd();
	if (!before || !pd)
		return failed("alloc_pd", before ? pd.error() : before.error());
	std::vector<char> buf(4096);
	auto mr = ctx->reg_mr(*pd, buf.data(), buf.size(), 1 /* local write */);
	if (!mr)
		return failed("reg_mr", mr.error());
	auto cq = ctx->create_cq(16);
	if (!cq)
		return failed("create_cq", cq.error());
	auto during = ctx->counters();
	if (!during)
		return failed("counters", during.error());
	std::printf("pd %u, mr lkey 0x%x rkey 0x%x, cq %u: the device counts %u pd, %u mr, "
		    "%u cq more\n",
		    unsigned(*pd), mr->lkey, mr->rkey, unsigned(cq->handle),
		    during->device[UABI_OBJ_PD] - before->device[UABI_OBJ_PD],
		    during->device[UABI_OBJ_MR] - before->device[UABI_OBJ_MR],
		    during->device[UABI_OBJ_CQ] - before->device[UABI_OBJ_CQ]);
	if (auto r = ctx->destroy_cq(cq->handle); !r)
		return failed("destroy_cq", r.error());
	if (auto r = ctx->dereg_mr(mr->handle); !r)
		return failed("dereg_mr", r.error());
	if (auto r = ctx->dealloc_pd(*pd); !r)
		return failed("dealloc_pd", r.error());
	std::printf("destroyed; done\n");
	return 0;
}
