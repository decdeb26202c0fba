// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Harness of the multi-process daemon tests: a private uabid per test (its
// own socket in a temporary directory), child processes with a pipe to talk
// to, and the daemon's view of things (status, live objects, RSS, fds).
#ifndef UABI_DAEMON_HARNESS_HPP
#define UABI_DAEMON_HARNESS_HPP

#include <uabi/client.hpp>
#include <uabi/transport_daemon.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace uabi::dtest {

// A child process running fn(in, out): in reads what the parent sends,
// out writes to the parent.  fn's return value is the exit status.
class Child {
public:
	Child() = default;
	explicit Child(std::function<int(int in, int out)> fn);
	Child(Child &&o) noexcept;
	Child &operator=(Child &&o) noexcept;
	~Child(); // SIGKILLs and reaps a child still running

	pid_t pid() const { return pid_; }
	bool send(std::uint64_t v);
	// false on timeout or end of stream
	bool recv(std::uint64_t &v, int timeout_ms = 10000);
	void kill(int sig = 9);
	// Exit status (as waitpid), or -1 on timeout.
	int wait(int timeout_ms = 10000);
	bool exited_ok(int timeout_ms = 10000);

private:
	pid_t pid_ = -1;
	int to_ = -1;
	int from_ = -1;
	bool reaped_ = false;
};

// Child side of the pipe protocol.
bool put(int fd, std::uint64_t v);
bool get(int fd, std::uint64_t &v, int timeout_ms = 10000);

bool process_gone(pid_t pid);
// A kB field of /proc/<pid>/status: VmRSS, RssAnon, RssShmem...
long rss_kb(pid_t pid, const char *field = "VmRSS");
int fd_count(pid_t pid);
std::string read_file(const std::string &path);

// Runs a command, returns its exit status and fills out with its stdout.
int run(const std::vector<std::string> &argv, std::string *out,
	const std::vector<std::string> &env = {});

// Each test gets a temporary directory, UABI_SOCKET in it, and (when
// started) its own uabid in the foreground, stopped by TearDown.
class DaemonTest : public ::testing::Test {
protected:
	void SetUp() override;
	void TearDown() override;

	// Starts `uabid --foreground --socket S --idle-exit 0 args...`.
	void start_daemon(const std::vector<std::string> &args = {},
			  const std::vector<std::string> &env = {});
	void stop_daemon();

	daemon::Paths paths() const;
	Result<daemon::Connection> admin() const;
	daemon::Status status() const;
	// Live objects of every context, all types.
	std::uint32_t live_objects() const;
	std::uint32_t contexts() const;
	// Polls until fn() is true (timeout: false).
	static bool eventually(const std::function<bool()> &fn, int timeout_ms = 5000);

	std::string dir_;
	std::string socket_;
	pid_t daemon_pid_ = -1;
};

// QP creation attributes the sw device accepts.
QpCreate rc_qp(Ref pd, Ref cq);

} // namespace uabi::dtest

#endif // UABI_DAEMON_HARNESS_HPP
