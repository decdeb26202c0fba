// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#include "daemon_harness.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace uabi::dtest {

namespace {

void sleep_ms(int ms)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::vector<char *> make_env(const std::vector<std::string> &extra, std::vector<std::string> &store)
{
	store.clear();
	for (char **e = environ; e && *e; e++) {
		std::string s = *e;
		bool overridden = false;
		for (const auto &x : extra)
			if (s.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0)
				overridden = true;
		if (!overridden)
			store.push_back(s);
	}
	for (const auto &x : extra)
		store.push_back(x);
	std::vector<char *> v;
	for (auto &s : store)
		v.push_back(s.data());
	v.push_back(nullptr);
	return v;
}

} // namespace

// ------------------------------------------------------------------ Child

Child::Child(std::function<int(int in, int out)> fn)
{
	int down[2], up[2];
	if (pipe2(down, O_CLOEXEC) < 0 || pipe2(up, O_CLOEXEC) < 0)
		std::abort();
	std::fflush(nullptr);
	pid_ = fork();
	if (pid_ < 0)
		std::abort();
	if (pid_ == 0) {
		::close(down[1]);
		::close(up[0]);
		int rc = 99;
		rc = fn(down[0], up[1]);
		std::fflush(nullptr);
		_exit(rc); // no destructors of the parent's objects
	}
	::close(down[0]);
	::close(up[1]);
	to_ = down[1];
	from_ = up[0];
}

Child::Child(Child &&o) noexcept : pid_(o.pid_), to_(o.to_), from_(o.from_), reaped_(o.reaped_)
{
	o.pid_ = -1;
	o.to_ = o.from_ = -1;
}

Child &Child::operator=(Child &&o) noexcept
{
	std::swap(pid_, o.pid_);
	std::swap(to_, o.to_);
	std::swap(from_, o.from_);
	std::swap(reaped_, o.reaped_);
	return *this;
}

Child::~Child()
{
	if (pid_ > 0 && !reaped_) {
		::kill(pid_, SIGKILL);
		int st;
		waitpid(pid_, &st, 0);
	}
	if (to_ >= 0)
		::close(to_);
	if (from_ >= 0)
		::close(from_);
}

bool Child::send(std::uint64_t v)
{
	return put(to_, v);
}

bool Child::recv(std::uint64_t &v, int timeout_ms)
{
	return get(from_, v, timeout_ms);
}

void Child::kill(int sig)
{
	if (pid_ > 0 && !reaped_)
		::kill(pid_, sig);
}

int Child::wait(int timeout_ms)
{
	if (reaped_)
		return -1;
	for (int waited = 0; waited <= timeout_ms; waited += 5) {
		int st;
		pid_t r = waitpid(pid_, &st, WNOHANG);
		if (r == pid_) {
			reaped_ = true;
			return st;
		}
		sleep_ms(5);
	}
	return -1;
}

bool Child::exited_ok(int timeout_ms)
{
	int st = wait(timeout_ms);
	return st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

bool put(int fd, std::uint64_t v)
{
	return ::write(fd, &v, sizeof(v)) == sizeof(v);
}

bool get(int fd, std::uint64_t &v, int timeout_ms)
{
	pollfd p{fd, POLLIN, 0};
	int r;
	do
		r = ::poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return false;
	return ::read(fd, &v, sizeof(v)) == sizeof(v);
}

// ---------------------------------------------------------------- /proc

std::string read_file(const std::string &path)
{
	std::string s;
	FILE *f = std::fopen(path.c_str(), "r");
	if (!f)
		return s;
	char b[4096];
	std::size_t n;
	while ((n = std::fread(b, 1, sizeof(b), f)) > 0)
		s.append(b, n);
	std::fclose(f);
	return s;
}

bool process_gone(pid_t pid)
{
	if (::kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	// A zombie nobody reaped yet (its parent exited) is gone for us.
	std::string st = read_file("/proc/" + std::to_string(pid) + "/stat");
	auto rp = st.rfind(')');
	return st.empty() || (rp != std::string::npos && rp + 2 < st.size() && st[rp + 2] == 'Z');
}

long rss_kb(pid_t pid, const char *field)
{
	std::string s = read_file("/proc/" + std::to_string(pid) + "/status");
	std::string key = std::string(field) + ":";
	auto p = s.find(key);
	return p == std::string::npos ? -1 : std::strtol(s.c_str() + p + key.size(), nullptr, 10);
}

int fd_count(pid_t pid)
{
	std::string d = "/proc/" + std::to_string(pid) + "/fd";
	DIR *dir = opendir(d.c_str());
	if (!dir)
		return -1;
	int n = 0;
	while (dirent *e = readdir(dir))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n;
}

int run(const std::vector<std::string> &argv, std::string *out, const std::vector<std::string> &env)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	std::vector<char *> av;
	std::vector<std::string> a = argv;
	for (auto &s : a)
		av.push_back(s.data());
	av.push_back(nullptr);
	std::vector<std::string> store;
	auto envp = make_env(env, store);
	pid_t pid;
	int e = posix_spawn(&pid, av[0], &fa, nullptr, av.data(), envp.data());
	posix_spawn_file_actions_destroy(&fa);
	::close(pfd[1]);
	if (e) {
		::close(pfd[0]);
		return -1;
	}
	std::string s;
	char b[4096];
	ssize_t n;
	while ((n = ::read(pfd[0], b, sizeof(b))) > 0)
		s.append(b, std::size_t(n));
	::close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	if (out)
		*out = s;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// ------------------------------------------------------------ DaemonTest

void DaemonTest::SetUp()
{
	char tmpl[] = "/tmp/uabi-dtest-XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	dir_ = tmpl;
	socket_ = dir_ + "/uabid.sock";
	setenv("UABI_SOCKET", socket_.c_str(), 1);
	setenv("UABI_BACKEND", "daemon", 1);
	setenv("UABI_DAEMON_PATH", UABID_PATH, 1);
	setenv("UABI_AUTOSTART", "0", 1); // tests start their daemon themselves
	setenv("UABI_IDLE_EXIT", "0", 1);
	unsetenv("UABI_DAEMON_LOG");
}

void DaemonTest::TearDown()
{
	stop_daemon();
	if (!dir_.empty()) {
		std::string cmd = "rm -rf '" + dir_ + "'";
		if (std::system(cmd.c_str()) != 0) {
		}
	}
}

void DaemonTest::start_daemon(const std::vector<std::string> &args,
			      const std::vector<std::string> &env)
{
	std::vector<std::string> a = {UABID_PATH, "--foreground", "--socket",
				      socket_,	  "--idle-exit",  "0"};
	a.insert(a.end(), args.begin(), args.end());
	std::vector<char *> av;
	for (auto &s : a)
		av.push_back(s.data());
	av.push_back(nullptr);
	std::vector<std::string> store;
	auto envp = make_env(env, store);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	std::string errlog = dir_ + "/uabid.stderr";
	posix_spawn_file_actions_addopen(&fa, 2, errlog.c_str(), O_WRONLY | O_CREAT | O_APPEND,
					 0600);
	int e = posix_spawn(&daemon_pid_, av[0], &fa, nullptr, av.data(), envp.data());
	posix_spawn_file_actions_destroy(&fa);
	ASSERT_EQ(e, 0) << std::strerror(e);
	bool up = eventually([&] { return bool(daemon::connect(paths(), daemon::kHelloAdmin)); },
			     10000);
	ASSERT_TRUE(up) << "uabid did not come up: " << read_file(errlog);
}

void DaemonTest::stop_daemon()
{
	if (daemon_pid_ <= 0)
		return;
	::kill(daemon_pid_, SIGTERM);
	int st;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(daemon_pid_, &st, WNOHANG) == daemon_pid_) {
			daemon_pid_ = -1;
			// A clean exit: no crash, no sanitizer report.
			EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
				<< "uabid ended with status " << st << ":\n"
				<< read_file(dir_ + "/uabid.stderr");
			return;
		}
		sleep_ms(5);
	}
	::kill(daemon_pid_, SIGKILL);
	waitpid(daemon_pid_, &st, 0);
	daemon_pid_ = -1;
	ADD_FAILURE() << "uabid did not exit on SIGTERM";
}

daemon::Paths DaemonTest::paths() const
{
	return *daemon::paths_for_socket(socket_);
}

Result<daemon::Connection> DaemonTest::admin() const
{
	return daemon::connect(paths(), daemon::kHelloAdmin);
}

daemon::Status DaemonTest::status() const
{
	auto c = admin();
	EXPECT_TRUE(c) << std::strerror(c.error());
	if (!c)
		return {};
	auto s = daemon::query_status(*c);
	EXPECT_TRUE(s) << std::strerror(s.error());
	return s ? *s : daemon::Status{};
}

std::uint32_t DaemonTest::live_objects() const
{
	auto s = status();
	std::uint32_t n = 0;
	for (auto v : s.daemon.objects)
		n += v;
	return n;
}

std::uint32_t DaemonTest::contexts() const
{
	return status().daemon.contexts;
}

bool DaemonTest::eventually(const std::function<bool()> &fn, int timeout_ms)
{
	for (int waited = 0;; waited += 10) {
		if (fn())
			return true;
		if (waited >= timeout_ms)
			return false;
		sleep_ms(10);
	}
}

QpCreate rc_qp(Ref pd, Ref cq)
{
	QpCreate q;
	q.pd = pd;
	q.send_cq = cq;
	q.recv_cq = cq;
	q.init.qp_type = UABI_QPT_RC;
	q.init.cap.max_send_wr = 4;
	q.init.cap.max_recv_wr = 4;
	q.init.cap.max_send_sge = 1;
	q.init.cap.max_recv_sge = 1;
	return q;
}

} // namespace uabi::dtest
