// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The in-process backend: the object core in this process.  The client
// library does not link the core; it loads libuabi_inproc.so the first
// time a context asks for this backend (or uses the core a program linked
// in through uabi_inproc_builtin).  docs/architecture.md.
#include <uabi/transport.hpp>

#include <uabi/host_user.h>

#include "paths.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

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

constexpr const char *kCtxFdName = "uabi-context";

} // namespace

// A context of the in-process core and the transports on it: the one that
// opened it and those that imported it (ibv_import_device(3) of a
// duplicate of its context fd).  The fd that names it is an empty memfd,
// sealed so that nobody can give it contents; its inode is unique while
// any copy is open, and the table below finds the context by it.  The
// core lives in this process's memory: a forked child's copy of the table
// is not used (pid), and another process has no entry at all.
struct InprocTransport::Shared {
	const uabi_user_api *api;
	::uabi_context *ctx;
	unsigned refs;
	pid_t pid;
	dev_t dev;
	ino_t ino;
	unsigned device; // the core's index of the context's device
};

namespace {

std::mutex g_shared_mu;
std::vector<InprocTransport::Shared *> g_shared; // under g_shared_mu

} // namespace

Result<std::vector<std::string>> InprocTransport::device_names()
{
	int err = 0;
	const uabi_user_api *api = inproc_api(&err);
	if (!api)
		return make_error(err ? err : ENOENT);
	if (int rc = api->init())
		return make_error(-rc);
	std::vector<std::string> names;
	char name[64];
	for (unsigned i = 0; api->device_name(i, name, sizeof(name)) == 0; i++)
		names.emplace_back(name);
	return names;
}

Result<std::unique_ptr<InprocTransport>> InprocTransport::open(unsigned device)
{
	int err = 0;
	const uabi_user_api *api = inproc_api(&err);
	if (!api)
		return make_error(err ? err : ENOENT);
	int rc = api->init();
	if (rc)
		return make_error(rc);
	int fd = ::memfd_create(kCtxFdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct stat st;
	if (fd < 0 || ::fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
	    ::fstat(fd, &st) < 0) {
		int e = errno;
		if (fd >= 0)
			::close(fd);
		return make_error(e);
	}
	::uabi_context *ctx = api->open_device(device, nullptr);
	if (!ctx) {
		int e = errno;
		::close(fd);
		return make_error(e);
	}
	auto *s = new (std::nothrow) Shared{api, ctx, 1, ::getpid(), st.st_dev, st.st_ino, device};
	auto *t = s ? new (std::nothrow) InprocTransport(s, fd) : nullptr;
	if (!t) {
		delete s;
		api->close(ctx);
		::close(fd);
		return make_error(ENOMEM);
	}
	std::lock_guard<std::mutex> g(g_shared_mu);
	g_shared.push_back(s);
	return std::unique_ptr<InprocTransport>(t);
}

Result<std::unique_ptr<InprocTransport>> InprocTransport::import(int fd)
{
	struct stat st;
	if (fd < 0 || ::fstat(fd, &st) < 0)
		return make_error(EINVAL);
	std::lock_guard<std::mutex> g(g_shared_mu);
	for (Shared *s : g_shared) {
		if (s->dev != st.st_dev || s->ino != st.st_ino)
			continue;
		if (s->pid != ::getpid())
			break; // a forked child's copy: the parent's core
		auto *t = new (std::nothrow) InprocTransport(s, fd);
		if (!t)
			return make_error(ENOMEM);
		s->refs++;
		return std::unique_ptr<InprocTransport>(t);
	}
	// Not ours: another process's in-process context (its memfd's name
	// says so), whose core we cannot reach, or no context at all.
	char link[64], target[128];
	std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = ::readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = 0;
		if (std::string(target).starts_with(std::string("/memfd:") + kCtxFdName))
			return make_error(EOPNOTSUPP);
	}
	return make_error(EINVAL);
}

InprocTransport::~InprocTransport()
{
	bool last;
	{
		std::lock_guard<std::mutex> g(g_shared_mu);
		last = --sh_->refs == 0;
		if (last)
			g_shared.erase(std::find(g_shared.begin(), g_shared.end(), sh_));
	}
	if (last) {
		sh_->api->close(sh_->ctx);
		delete sh_;
	}
	::close(fd_);
}

int InprocTransport::execute(std::span<std::byte> msg)
{
	return sh_->api->execute(sh_->ctx, msg.data(), msg.size());
}

int InprocTransport::cm_attach(const uabi_user_cm_port *port)
{
	return -sh_->api->cm_attach(sh_->device, port);
}

void InprocTransport::cm_detach(const uabi_user_cm_port *port)
{
	sh_->api->cm_detach(sh_->device, port);
}

void InprocTransport::cm_input(const unsigned char *sgid, const unsigned char *dgid, const void *mad,
			       unsigned len)
{
	sh_->api->cm_input(sh_->device, sgid, dgid, mad, len);
}

} // namespace uabi
