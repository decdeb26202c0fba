// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Locating the parts of an installed (or built) copy: see paths.hpp.
#include "paths.hpp"

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <initializer_list>
#include <unistd.h>

// Install directories relative to the prefix (GNUInstallDirs, set by
// newapi/CMakeLists.txt); the build directory, to recognise the build tree.
#ifndef UABI_BUILD_ROOT
#define UABI_BUILD_ROOT ""
#endif
#ifndef UABI_REL_BINDIR
#define UABI_REL_BINDIR "bin"
#endif
#ifndef UABI_REL_SBINDIR
#define UABI_REL_SBINDIR "sbin"
#endif
#ifndef UABI_REL_LIBDIR
#define UABI_REL_LIBDIR "lib"
#endif
#ifndef UABI_REL_VERBSDIR
#define UABI_REL_VERBSDIR "lib/rdma-uabi"
#endif

namespace uabi::paths {

namespace {

std::string dir_of(const std::string &path)
{
	auto slash = path.rfind('/');
	if (slash == std::string::npos)
		return ".";
	return slash == 0 ? "/" : path.substr(0, slash);
}

std::string real(const std::string &path)
{
	char buf[PATH_MAX];
	if (path.empty() || !::realpath(path.c_str(), buf))
		return {};
	return buf;
}

// The shared library or executable this code was linked into.
std::string object_path()
{
	Dl_info info{};
	if (::dladdr(reinterpret_cast<void *>(&object_path), &info) && info.dli_fname &&
	    info.dli_fname[0] == '/')
		return info.dli_fname;
	return {};
}

std::string exe_path()
{
	char buf[PATH_MAX];
	ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return {};
	buf[n] = 0;
	return buf;
}

bool under(const std::string &path, const std::string &dir)
{
	return !path.empty() && !dir.empty() && path.size() > dir.size() &&
	       path.compare(0, dir.size(), dir) == 0 &&
	       (dir.back() == '/' || path[dir.size()] == '/');
}

// dir minus the install directory it ends with, or "" if none.
std::string strip_install_dir(const std::string &dir)
{
	for (const char *rel : {UABI_REL_VERBSDIR, UABI_REL_LIBDIR, UABI_REL_SBINDIR,
				UABI_REL_BINDIR}) {
		std::string r(rel);
		// A directory outside the prefix (../etc, /opt/x) names no prefix.
		if (r.empty() || r[0] == '/' || r.compare(0, 2, "..") == 0)
			continue;
		if (dir.size() <= r.size() || dir.compare(dir.size() - r.size(), r.size(), r) != 0 ||
		    dir[dir.size() - r.size() - 1] != '/')
			continue;
		std::string prefix = dir.substr(0, dir.size() - r.size() - 1);
		return prefix.empty() ? "/" : prefix;
	}
	return {};
}

std::string join(const std::string &prefix, const char *rel)
{
	if (rel[0] == '/')
		return rel;
	return prefix.back() == '/' ? prefix + rel : prefix + "/" + rel;
}

} // namespace

bool in_build_tree()
{
	std::string root = real(UABI_BUILD_ROOT);
	if (root.empty())
		return false;
	return under(real(object_path()), root) || under(exe_path(), root);
}

std::string install_prefix(std::string *where)
{
	std::string obj = object_path();
	std::string exe = exe_path();
	if (where)
		*where = obj.empty() || obj == exe ? exe : obj + ", " + exe;
	// As loaded first (a library reached through a symlinked directory,
	// /lib -> usr/lib), then with symlinks resolved.
	for (const std::string &p : {obj, real(obj), exe}) {
		if (p.empty())
			continue;
		if (std::string prefix = strip_install_dir(dir_of(p)); !prefix.empty())
			return prefix;
	}
	return {};
}

std::string daemon_under(const std::string &prefix)
{
	return join(prefix, UABI_REL_SBINDIR "/uabid");
}

std::string verbs_library_under(const std::string &prefix)
{
	return join(prefix, UABI_REL_VERBSDIR "/libibverbs.so.1");
}

std::string umad_library_under(const std::string &prefix)
{
	return join(prefix, UABI_REL_VERBSDIR "/libuabi_umad.so");
}

std::string rdmacm_library_under(const std::string &prefix)
{
	return join(prefix, UABI_REL_VERBSDIR "/libuabi_rdmacm.so");
}

std::string inproc_module_under(const std::string &prefix)
{
	return join(prefix, UABI_REL_VERBSDIR "/libuabi_inproc.so");
}

} // namespace uabi::paths
