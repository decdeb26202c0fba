// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Showing the tree: a private mount namespace over /sys/class and /dev, or
// a directory for SYSFS_PATH (docs/fsview.md, "How the view is made").
#include <uabi/fsview.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sched.h>
#include <set>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace uabi::fsview {

namespace {

// Every loop over a directory stops here: /dev and /sys/class hold a few
// hundred entries on real machines.
constexpr int kMaxEntries = 65536;
constexpr int kMaxDepth = 8;

int write_all(int fd, const std::string &s)
{
	std::size_t off = 0;
	while (off < s.size()) {
		ssize_t n = ::write(fd, s.data() + off, s.size() - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		off += std::size_t(n);
	}
	return 0;
}

int write_file(const std::string &path, const std::string &data, mode_t mode)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return errno;
	int err = write_all(fd, data);
	if (::fchmod(fd, mode) != 0 && !err)
		err = errno;
	if (::close(fd) != 0 && !err)
		err = errno;
	return err;
}

int proc_write(const char *path, const std::string &s)
{
	int fd = ::open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	int err = write_all(fd, s);
	::close(fd);
	return err;
}

std::string join(const std::string &a, const std::string &b)
{
	if (a.empty())
		return b;
	if (b.empty())
		return a;
	return a + "/" + b;
}

// The tree indexed by path (relative to the sysfs root).
struct Index {
	std::set<std::string> dirs;
	std::map<std::string, const File *> files;
	std::map<std::string, const Link *> links;
	// Directories whose host content the view replaces instead of
	// merging with (the infiniband classes: only our devices are shown).
	std::set<std::string> replace;

	explicit Index(const Tree &t)
	{
		for (const auto &d : t.dirs)
			dirs.insert(d);
		for (const auto &f : t.files)
			files[f.path] = &f;
		for (const auto &l : t.links)
			links[l.path] = &l;
		for (const auto &c : t.class_entries)
			if (c != "misc")
				replace.insert("class/" + c);
	}
	bool has(const std::string &p) const
	{
		return dirs.count(p) || files.count(p) || links.count(p);
	}
};

// A copy of the host's entry `src` at `dst` in the staging tmpfs: a
// directory or any non-directory is bind-mounted there (recursively, so
// /dev/pts and /dev/shm keep their mounts), a symlink is re-created.
int replicate(const std::string &src, const std::string &dst)
{
	struct stat st;
	if (::lstat(src.c_str(), &st) != 0)
		return errno == ENOENT ? 0 : errno; // gone meanwhile
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = ::readlink(src.c_str(), target, sizeof(target) - 1);
		if (n < 0)
			return errno;
		target[n] = '\0';
		return ::symlink(target, dst.c_str()) == 0 ? 0 : errno;
	}
	if (S_ISDIR(st.st_mode)) {
		if (::mkdir(dst.c_str(), st.st_mode & 07777) != 0)
			return errno;
	} else {
		int fd = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return errno;
		::close(fd);
	}
	if (::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
		return errno;
	return 0;
}

// Builds at `stage` the union of the host directory `host` (may be absent)
// and the tree's entries under `rel`, the tree winning.
int overlay(const Index &ix, const std::string &host, const std::string &stage,
	    const std::string &rel, int depth)
{
	if (depth > kMaxDepth)
		return ELOOP;
	if (!ix.replace.count(rel)) {
		if (DIR *d = ::opendir(host.c_str())) {
			int err = 0, count = 0;
			while (struct dirent *e = ::readdir(d)) {
				if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, ".."))
					continue;
				if (++count > kMaxEntries) {
					err = E2BIG;
					break;
				}
				std::string r = join(rel, e->d_name);
				std::string h = host + "/" + e->d_name;
				std::string s = stage + "/" + e->d_name;
				if (ix.dirs.count(r)) {
					struct stat st;
					// Ours and the host's: merge (class/misc).
					if (::lstat(h.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
						if (::mkdir(s.c_str(), 0755) != 0) {
							err = errno;
							break;
						}
						err = overlay(ix, h, s, r, depth + 1);
						if (err)
							break;
					}
					continue;
				}
				if (ix.has(r))
					continue; // ours replaces it
				err = replicate(h, s);
				if (err)
					break;
			}
			::closedir(d);
			if (err)
				return err;
		}
	}
	return 0;
}

// The tree's own entries under the sysfs root `root` (directories first:
// Tree::dirs lists parents before children).  Existing directories (made
// by overlay) are kept.
int write_entries(const Tree &t, const std::string &root)
{
	for (const auto &d : t.dirs) {
		std::string p = root + "/" + d;
		if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST)
			return errno;
	}
	for (const auto &f : t.files)
		if (int e = write_file(root + "/" + f.path, f.data, f.writable ? 0644 : 0444))
			return e;
	for (const auto &l : t.links) {
		std::string p = root + "/" + l.path;
		::unlink(p.c_str());
		if (::symlink(l.target.c_str(), p.c_str()) != 0)
			return errno;
	}
	return 0;
}

std::string mnt_ns_id()
{
	char b[64];
	ssize_t n = ::readlink("/proc/self/ns/mnt", b, sizeof(b) - 1);
	if (n <= 0)
		return {};
	b[n] = '\0';
	return b;
}

// A directory to mount the staging tmpfs on for the few moments it takes:
// in our private namespace, so nobody else sees it cover the directory.
const char *staging_point()
{
	for (const char *p : {"/tmp", "/mnt", "/run", "/media", "/srv"}) {
		struct stat st;
		if (::lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
			return p;
	}
	return nullptr;
}

int bind_over(const std::string &src, const std::string &dst)
{
	return ::mount(src.c_str(), dst.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0 ? 0 : errno;
}

int make_namespace()
{
	const uid_t uid = ::geteuid();
	const gid_t gid = ::getegid();
	if (::unshare(CLONE_NEWNS) == 0)
		return 0;
	if (errno != EPERM)
		return errno;
	// Not privileged here: a user namespace owns the new mount namespace.
	// Our uid and gid map to themselves, so the program sees who it is.
	if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return errno;
	if (int e = proc_write("/proc/self/setgroups", "deny"))
		return e;
	char map[64];
	std::snprintf(map, sizeof(map), "%u %u 1", unsigned(uid), unsigned(uid));
	if (int e = proc_write("/proc/self/uid_map", map))
		return e;
	std::snprintf(map, sizeof(map), "%u %u 1", unsigned(gid), unsigned(gid));
	if (int e = proc_write("/proc/self/gid_map", map))
		return e;
	return 0;
}

} // namespace

// 0 when enter_namespace() works in a child of this process, else its errno.
static int probe_namespace(const Tree &t)
{
	pid_t pid = ::fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		auto r = enter_namespace(t);
		::_exit(r ? 0 : (r.error() & 0xff ? r.error() & 0xff : EIO));
	}
	int status = 0;
	while (::waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(status))
		return EIO;
	return WEXITSTATUS(status);
}

Result<void> enter_namespace(const Tree &t)
{
	if (int e = make_namespace())
		return make_error(e);
	if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
		return make_error(errno);
	struct stat st;
	if (::stat("/sys/class", &st) != 0 || !S_ISDIR(st.st_mode) || ::stat("/dev", &st) != 0 ||
	    !S_ISDIR(st.st_mode))
		return make_error(ENOENT);
	const char *point = staging_point();
	if (!point)
		return make_error(ENOENT);
	if (::mount("uabi-fsview", point, "tmpfs", MS_NOSUID, "mode=0755,size=4m") != 0)
		return make_error(errno);
	const std::string stage = point;
	const Index ix(t);
	int err = 0;
	auto fail = [&](int e) {
		::umount2(point, MNT_DETACH);
		return make_error(e);
	};
	// <stage>/sys/class: the host's classes bound in, ours written.
	if (::mkdir((stage + "/sys").c_str(), 0755) != 0 ||
	    ::mkdir((stage + "/sys/class").c_str(), 0755) != 0)
		return fail(errno);
	if ((err = overlay(ix, "/sys/class", stage + "/sys/class", "class", 0)))
		return fail(err);
	if ((err = write_entries(t, stage + "/sys")))
		return fail(err);
	// <stage>/dev: the host's /dev bound in, /dev/infiniband ours.
	if (::mkdir((stage + "/dev").c_str(), 0755) != 0)
		return fail(errno);
	{
		Tree devtree;
		devtree.dirs = {"dev/infiniband"};
		devtree.class_entries = {};
		Index dix(devtree);
		dix.replace.insert("dev/infiniband");
		if ((err = overlay(dix, "/dev", stage + "/dev", "dev", 0)))
			return fail(err);
		if (::mkdir((stage + "/dev/infiniband").c_str(), 0755) != 0 && errno != EEXIST)
			return fail(errno);
		for (const DevNode &n : t.nodes) {
			std::string p = stage + "/dev/infiniband/" + n.name;
			int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd < 0)
				return fail(errno);
			::close(fd);
			if (::mount(n.source.c_str(), p.c_str(), nullptr, MS_BIND, nullptr) != 0)
				return fail(errno);
		}
	}
	if ((err = bind_over(stage + "/sys/class", "/sys/class")))
		return fail(err);
	if ((err = bind_over(stage + "/dev", "/dev")))
		return fail(err);
	// The staging mount goes; the two binds keep its tmpfs.
	if (::umount2(point, MNT_DETACH) != 0)
		return make_error(errno);
	::setenv(kActiveEnv, mnt_ns_id().c_str(), 1);
	return {};
}

Result<void> write_tree(const Tree &t, const std::string &dir)
{
	if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
		return make_error(errno);
	// A fresh copy each time, built aside and renamed into place: a
	// program already reading the old one keeps a consistent tree.
	char tmp[4096];
	std::snprintf(tmp, sizeof(tmp), "%s/.new.%d", dir.c_str(), int(::getpid()));
	std::string root = tmp;
	auto remove_tree = [](const std::string &p) {
		// Only what write_tree itself made: bounded depth and count.
		std::vector<std::string> stack{p}, order;
		for (std::size_t i = 0; i < stack.size() && i < std::size_t(kMaxEntries); i++) {
			order.push_back(stack[i]);
			if (DIR *d = ::opendir(stack[i].c_str())) {
				while (struct dirent *e = ::readdir(d)) {
					if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, ".."))
						continue;
					std::string c = stack[i] + "/" + e->d_name;
					struct stat st;
					if (::lstat(c.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
						stack.push_back(c);
					else
						::unlink(c.c_str());
				}
				::closedir(d);
			}
		}
		for (auto it = order.rbegin(); it != order.rend(); ++it)
			::rmdir(it->c_str());
	};
	remove_tree(root);
	const std::string sys = root + "/sys";
	if (::mkdir(root.c_str(), 0755) != 0 || ::mkdir(sys.c_str(), 0755) != 0) {
		int e = errno;
		remove_tree(root);
		return make_error(e);
	}
	int err = write_entries(t, sys);
	// Everything else of /sys through symlinks, so that SYSFS_PATH=sys
	// still finds devices/, bus/, class/net ...
	if (!err) {
		if (DIR *d = ::opendir("/sys")) {
			int count = 0;
			while (struct dirent *e = ::readdir(d)) {
				if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..") ||
				    !std::strcmp(e->d_name, "class") || ++count > kMaxEntries)
					continue;
				::symlink(("/sys/" + std::string(e->d_name)).c_str(),
					  (sys + "/" + e->d_name).c_str());
			}
			::closedir(d);
		}
		Index ix(t);
		if (DIR *d = ::opendir("/sys/class")) {
			int count = 0;
			while (struct dirent *e = ::readdir(d)) {
				std::string r = "class/" + std::string(e->d_name);
				if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..") ||
				    ix.has(r) || ++count > kMaxEntries)
					continue;
				::symlink(("/sys/" + r).c_str(), (sys + "/" + r).c_str());
			}
			::closedir(d);
		}
		// dev/infiniband/<node>: symlinks to the nodes' sources, for the
		// umad shim's paths (compat/umad).
		std::string dev = root + "/dev";
		if (::mkdir(dev.c_str(), 0755) != 0 || ::mkdir((dev + "/infiniband").c_str(), 0755) != 0)
			err = errno;
		for (const DevNode &n : t.nodes)
			if (!err && ::symlink(n.source.c_str(), (dev + "/infiniband/" + n.name).c_str()) != 0)
				err = errno;
	}
	if (err) {
		remove_tree(root);
		return make_error(err);
	}
	// Swap it in: the old tree (if any) is renamed away, then removed.
	std::string cur = dir + "/view";
	std::string old = std::string(tmp) + ".old";
	bool had_old = ::rename(cur.c_str(), old.c_str()) == 0;
	if (::rename(root.c_str(), cur.c_str()) != 0) {
		err = errno;
		remove_tree(root);
		return make_error(err);
	}
	if (had_old)
		remove_tree(old);
	return {};
}

Result<Mode> mode_from_env()
{
	const char *v = std::getenv("UABI_FSVIEW");
	if (!v || !*v || !std::strcmp(v, "auto"))
		return Mode::Auto;
	for (Mode m : {Mode::Namespace, Mode::SysfsPath, Mode::Off})
		if (!std::strcmp(v, mode_name(m)))
			return m;
	return make_error(EINVAL);
}

const char *mode_name(Mode m)
{
	switch (m) {
	case Mode::Auto: return "auto";
	case Mode::Namespace: return "namespace";
	case Mode::SysfsPath: return "sysfs-path";
	case Mode::Off: return "off";
	}
	return "?";
}

bool already_inside()
{
	const char *v = std::getenv(kActiveEnv);
	if (!v || !*v)
		return false;
	if (!std::strncmp(v, "mnt:", 4))
		return mnt_ns_id() == v;
	// sysfs-path: the directory must still hold a tree.
	struct stat st;
	return ::stat((std::string(v) + "/class/infiniband").c_str(), &st) == 0;
}

Result<Entered> enter(const Tree &t, Mode m,
		      const std::function<Result<std::string>()> &fallback)
{
	Entered out;
	if (m == Mode::Off)
		return out;
	if (m == Mode::Auto || m == Mode::Namespace) {
		// Tried first in a child, so that a failure half-way (a user
		// namespace made, a mount refused) leaves this process as it was.
		int err = probe_namespace(t);
		if (!err) {
			auto r = enter_namespace(t);
			if (r) {
				out.used = Mode::Namespace;
				out.root = "/sys";
				return out;
			}
			err = r.error();
		}
		if (m == Mode::Namespace)
			return make_error(err);
		out.reason = std::string("no private mount namespace (") + std::strerror(err) + ")";
	}
	auto dir = fallback();
	if (!dir)
		return make_error(dir.error());
	const std::string &fallback_dir = *dir;
	auto w = write_tree(t, fallback_dir);
	if (!w)
		return make_error(w.error());
	out.used = Mode::SysfsPath;
	out.root = fallback_dir + "/view/sys";
	::setenv("SYSFS_PATH", out.root.c_str(), 1);
	::setenv("UABI_FSVIEW_ROOT", (fallback_dir + "/view").c_str(), 1);
	::setenv(kActiveEnv, out.root.c_str(), 1);
	return out;
}

} // namespace uabi::fsview
