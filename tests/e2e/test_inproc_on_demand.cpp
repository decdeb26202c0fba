// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The drop-in library carries no object core: it loads libuabi_inproc.so
// only when UABI_BACKEND=inproc asks (docs/architecture.md), and a missing
// module is a clean ENOENT from ibv_open_device.
#include <infiniband/verbs.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <string>

namespace {

bool module_mapped()
{
	std::ifstream maps("/proc/self/maps");
	std::string line;
	while (std::getline(maps, line))
		if (line.find("libuabi_inproc.so") != std::string::npos)
			return true;
	return false;
}

ibv_context *open_first()
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		return nullptr;
	ibv_context *ctx = n > 0 ? ibv_open_device(list[0]) : nullptr;
	int e = errno;
	ibv_free_device_list(list);
	errno = e;
	return ctx;
}

TEST(InprocOnDemand, TheCoreIsLoadedOnlyWhenTheInprocBackendIsAsked)
{
	EXPECT_EQ(dlsym(RTLD_DEFAULT, "uabi_execute"), nullptr) << "no core in the drop-in";
	EXPECT_FALSE(module_mapped()) << "before any device was opened";

	setenv("UABI_BACKEND", "daemon", 1);
	ibv_context *d = open_first();
	ASSERT_NE(d, nullptr) << std::strerror(errno);
	ibv_pd *pd = ibv_alloc_pd(d);
	EXPECT_NE(pd, nullptr);
	EXPECT_FALSE(module_mapped()) << "the daemon backend needs no core here";
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(d), 0);

	setenv("UABI_BACKEND", "inproc", 1);
	ibv_context *i = open_first();
	ASSERT_NE(i, nullptr) << std::strerror(errno);
	EXPECT_TRUE(module_mapped()) << "the in-process backend loaded it";
	pd = ibv_alloc_pd(i);
	EXPECT_NE(pd, nullptr);
	EXPECT_EQ(ibv_dealloc_pd(pd), 0);
	EXPECT_EQ(ibv_close_device(i), 0);
	EXPECT_EQ(dlsym(RTLD_DEFAULT, "uabi_execute"), nullptr)
	    << "the module keeps the core's symbols to itself";
}

// Run with UABI_INPROC_LIB naming a file that does not exist.
TEST(InprocOnDemand, AMissingModuleFailsTheOpenWithENOENT)
{
	const char *lib = std::getenv("UABI_INPROC_LIB");
	if (!lib || !*lib)
		GTEST_SKIP() << "needs UABI_INPROC_LIB (ctest e2e_inproc_missing_module)";
	setenv("UABI_BACKEND", "inproc", 1);
	errno = 0;
	EXPECT_EQ(open_first(), nullptr);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_FALSE(module_mapped());
}

} // namespace
