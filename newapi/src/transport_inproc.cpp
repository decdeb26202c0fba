// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The in-process backend: the object core in this process.  The client
// library does not link the core; it loads libuabi_inproc.so the first
// time a context asks for this backend (or uses the core a program linked
// in through uabi_inproc_builtin).  docs/architecture.md.
#include <uabi/transport.hpp>

#include <uabi/host_user.h>

#include "paths.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <new>
#include <string>

// Defined only in programs that link the core in (uabi_inproc_builtin).
#pragma weak uabi_user_get_api

#ifndef UABI_INPROC_BUILD_PATH
#define UABI_INPROC_BUILD_PATH ""
#endif

namespace uabi {

namespace {

constexpr const char *kModule = "libuabi_inproc.so";

const uabi_user_api *api_of(void *h)
{
	auto get = reinterpret_cast<const uabi_user_api *(*)()>(dlsym(h, "uabi_user_get_api"));
	const uabi_user_api *a = get ? get() : nullptr;
	return a && a->abi == UABI_USER_API_ABI ? a : nullptr;
}

// Where the module is looked for, first found first: UABI_INPROC_LIB; the
// directory of the library or program holding this code (an installed
// drop-in next to its module); this build tree's when running from it, or
// else the installed prefix's (paths.hpp); the loader's path.
const uabi_user_api *load_module(int *err)
{
	std::string tried;
	auto attempt = [&](const std::string &path) -> const uabi_user_api * {
		if (path.empty())
			return nullptr;
		void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			tried += tried.empty() ? "" : "; ";
			tried += dlerror();
			return nullptr;
		}
		if (const uabi_user_api *a = api_of(h))
			return a;
		tried += tried.empty() ? "" : "; ";
		tried += path + ": not a libuabi_inproc.so of this version";
		dlclose(h);
		return nullptr;
	};
	if (const char *env = std::getenv("UABI_INPROC_LIB"); env && *env) {
		if (const uabi_user_api *a = attempt(env))
			return a;
		std::fprintf(stderr, "uabi: UABI_INPROC_LIB: %s\n", tried.c_str());
		*err = ENOENT;
		return nullptr;
	}
	Dl_info info{};
	if (dladdr(reinterpret_cast<void *>(&load_module), &info) && info.dli_fname) {
		std::string self = info.dli_fname;
		auto slash = self.rfind('/');
		if (slash != std::string::npos)
			if (const uabi_user_api *a = attempt(self.substr(0, slash + 1) + kModule))
				return a;
	}
	if (paths::in_build_tree()) {
		if (const uabi_user_api *a = attempt(UABI_INPROC_BUILD_PATH))
			return a;
	} else if (std::string prefix = paths::install_prefix(); !prefix.empty()) {
		if (const uabi_user_api *a = attempt(paths::inproc_module_under(prefix)))
			return a;
	}
	if (const uabi_user_api *a = attempt(kModule))
		return a;
	std::fprintf(stderr, "uabi: the in-process backend needs %s: %s\n", kModule,
		     tried.c_str());
	*err = ENOENT;
	return nullptr;
}

// Loaded once per process; the core in it lives as long as the process.
const uabi_user_api *inproc_api(int *err)
{
	static std::once_flag once;
	static const uabi_user_api *api;
	static int load_err;
	std::call_once(once, [] {
		if (&uabi_user_get_api != nullptr)
			api = uabi_user_get_api();
		else
			api = load_module(&load_err);
	});
	*err = load_err;
	return api;
}

} // namespace

Result<std::unique_ptr<InprocTransport>> InprocTransport::open()
{
	int err = 0;
	const uabi_user_api *api = inproc_api(&err);
	if (!api)
		return make_error(err ? err : ENOENT);
	int rc = api->init();
	if (rc)
		return make_error(rc);
	::uabi_context *ctx = api->open(nullptr);
	if (!ctx)
		return make_error(errno);
	auto *t = new (std::nothrow) InprocTransport(api, ctx);
	if (!t) {
		api->close(ctx);
		return make_error(ENOMEM);
	}
	return std::unique_ptr<InprocTransport>(t);
}

InprocTransport::~InprocTransport()
{
	api_->close(ctx_);
}

int InprocTransport::execute(std::span<std::byte> msg)
{
	return api_->execute(ctx_, msg.data(), msg.size());
}

} // namespace uabi
