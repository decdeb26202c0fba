// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The umad ABI of one open file (umad_file.hpp): the rules and errnos of
// Linux's drivers/infiniband/core/user_mad.c and ib_register_mad_agent().
#include "umad_file.hpp"

#include <uabi/legacy.hpp>

#include <rdma/rdma_user_ioctl.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>

namespace uabi::umad {

namespace {

using legacy::copy_from_user;
using legacy::copy_to_user;

constexpr std::uint8_t kMaxMgmtVersion = 8; // class versions 0..7
constexpr std::uint8_t kMaxMgmtClass = 80;  // classes below 0x50, and 0x81
constexpr std::uint32_t kRegFlagsCap = IB_USER_MAD_USER_RMPP;
constexpr std::size_t kRmppHdr = 36;	    // IB_MGMT_RMPP_HDR
constexpr std::size_t kMadHdr = 24;	    // IB_MGMT_MAD_HDR

// Every file's agent's high TID word, as the MAD layer numbers its clients.
std::atomic<std::uint32_t> g_client_id{0};
std::atomic<std::uint64_t> g_seq{0};

// The method registrations of this process's agents: two agents may not
// receive the same class, version and method on a port (EINVAL).
struct Claim {
	const void *file;
	int agent;
	std::uint32_t port;
	std::uint8_t cls;
	std::uint8_t version;
	std::uint32_t oui;
	std::array<std::uint64_t, 2> methods;
};
std::mutex g_claims_mu;
std::vector<Claim> g_claims;

bool vendor_range2(std::uint8_t c)
{
	return c >= 0x30 && c <= 0x4f;
}

void drop_claims(const void *file, int agent)
{
	std::lock_guard<std::mutex> g(g_claims_mu);
	std::erase_if(g_claims, [&](const Claim &c) {
		return c.file == file && (agent < 0 || c.agent == agent);
	});
}

} // namespace

File::~File()
{
	drop_claims(this, -1);
	::close(efd_);
}

void File::signal_locked()
{
	if (!signaled_ && !recv_.empty()) {
		eventfd_write(efd_, 1);
		signaled_ = true;
	}
}

void File::queue(Packet p)
{
	if (recv_.size() >= kMaxQueued)
		return; // the receiver does not read: dropped, as on a full QP
	recv_.push_back(std::move(p));
	signal_locked();
}

// --------------------------------------------------------------- ioctl
int File::add_agent(std::uint32_t qpn, std::uint8_t cls, std::uint8_t version, std::uint32_t oui,
		    std::uint8_t rmpp, const std::uint64_t methods[2])
{
	// ib_register_mad_agent()'s checks, in its order.
	if (qpn != 0 && qpn != 1)
		return -EINVAL;
	if (rmpp && rmpp != 1)
		return -EINVAL;
	if (cls) {
		if (version >= kMaxMgmtVersion)
			return -EINVAL;
		if (cls >= kMaxMgmtClass && cls != kClassSubnDr)
			return -EINVAL;
		if (vendor_range2(cls) && !oui)
			return -EINVAL;
		if (!rmpp_class(cls) && rmpp)
			return -EINVAL;
		const bool smi = cls == kClassSubnLid || cls == kClassSubnDr;
		if ((qpn == 0) != smi)
			return -EINVAL;
	}
	// A RoCE port has no QP0 (ib_register_mad_agent(): EPROTONOSUPPORT).
	if (qpn == 0 && !ib_port_)
		return -EPROTONOSUPPORT;
	int id = 0;
	while (id < kMaxAgents && agents_[id].used)
		id++;
	if (id == kMaxAgents)
		return -ENOMEM;
	if (cls && (methods[0] || methods[1])) {
		std::lock_guard<std::mutex> g(g_claims_mu);
		for (const Claim &c : g_claims)
			if (c.port == port_ && c.cls == cls && c.version == version &&
			    (!vendor_range2(cls) || c.oui == oui) &&
			    ((c.methods[0] & methods[0]) || (c.methods[1] & methods[1])))
				return -EINVAL;
		g_claims.push_back({this, id, port_, cls, version, oui, {methods[0], methods[1]}});
	}
	Agent &a = agents_[id];
	a = Agent{};
	a.used = true;
	a.hi_tid = ++g_client_id;
	a.qpn = std::uint8_t(qpn);
	a.mgmt_class = cls;
	a.class_version = version;
	a.rmpp_version = rmpp;
	a.methods = {methods[0], methods[1]};
	a.oui = oui;
	return id;
}

long File::register_agent(void *arg, bool v2)
{
	if (!v2) {
		ib_user_mad_reg_req req;
		if (copy_from_user(&req, reinterpret_cast<std::uintptr_t>(arg), sizeof(req)))
			return -EFAULT;
		std::uint64_t methods[2] = {};
		std::memcpy(methods, req.method_mask, std::min(sizeof(methods), sizeof(req.method_mask)));
		if (!req.mgmt_class)
			methods[0] = methods[1] = 0;
		std::uint32_t oui = std::uint32_t(req.oui[0]) << 16 | std::uint32_t(req.oui[1]) << 8 | req.oui[2];
		std::lock_guard<std::mutex> g(mu_);
		int id = add_agent(req.qpn, req.mgmt_class, req.mgmt_class_version, oui,
				   req.rmpp_version, methods);
		if (id < 0)
			return id;
		std::uint32_t uid = std::uint32_t(id);
		if (copy_to_user(reinterpret_cast<std::uintptr_t>(arg) + offsetof(ib_user_mad_reg_req, id),
				 &uid, sizeof(uid))) {
			agents_[id].used = false;
			drop_claims(this, id);
			return -EFAULT;
		}
		already_used_ = true;
		return 0;
	}
	ib_user_mad_reg_req2 req;
	if (copy_from_user(&req, reinterpret_cast<std::uintptr_t>(arg), sizeof(req)))
		return -EFAULT;
	std::lock_guard<std::mutex> g(mu_);
	if (req.qpn != 0 && req.qpn != 1)
		return -EINVAL;
	if (req.flags & ~kRegFlagsCap) {
		// The flags this kernel knows go back to the caller.
		std::uint32_t cap = kRegFlagsCap;
		if (copy_to_user(reinterpret_cast<std::uintptr_t>(arg) + offsetof(ib_user_mad_reg_req2, flags),
				 &cap, sizeof(cap)))
			return -EFAULT;
		return -EINVAL;
	}
	if (req.mgmt_class && (req.oui & 0xff000000u))
		return -EINVAL;
	std::uint64_t methods[2] = {req.method_mask[0], req.method_mask[1]};
	if (!req.mgmt_class)
		methods[0] = methods[1] = 0;
	// IB_USER_MAD_USER_RMPP: the caller does RMPP itself; the kernel then
	// passes RMPP segments through as they are, as it does for
	// rmpp_version 0.
	std::uint8_t rmpp = (req.flags & IB_USER_MAD_USER_RMPP) ? 0 : req.rmpp_version;
	int id = add_agent(req.qpn, req.mgmt_class, req.mgmt_class_version, req.oui,
			   req.rmpp_version, methods);
	if (id < 0)
		return id;
	agents_[id].rmpp_version = rmpp;
	std::uint32_t uid = std::uint32_t(id);
	if (copy_to_user(reinterpret_cast<std::uintptr_t>(arg) + offsetof(ib_user_mad_reg_req2, id), &uid,
			 sizeof(uid))) {
		agents_[id].used = false;
		drop_claims(this, id);
		return -EFAULT;
	}
	if (!already_used_) {
		already_used_ = true;
		use_pkey_index_ = true;
	}
	return 0;
}

long File::unregister_agent(void *arg)
{
	std::uint32_t id;
	if (copy_from_user(&id, reinterpret_cast<std::uintptr_t>(arg), sizeof(id)))
		return -EFAULT;
	std::lock_guard<std::mutex> g(mu_);
	if (id >= std::uint32_t(kMaxAgents) || !agents_[id].used)
		return -EINVAL;
	agents_[id].used = false;
	drop_claims(this, int(id));
	// Its outstanding sends are cancelled: no timeout comes back for them
	// (a flushed send is not reported).  MADs already received stay queued
	// for read(), as in the kernel.
	std::erase_if(pending_, [&](const Pending &p) { return p.agent == id; });
	return 0;
}

long File::ioctl(unsigned long request, void *arg)
{
	switch (request) {
	case IB_USER_MAD_REGISTER_AGENT:
		return register_agent(arg, false);
	case IB_USER_MAD_UNREGISTER_AGENT:
		return unregister_agent(arg);
	case IB_USER_MAD_ENABLE_PKEY: {
		std::lock_guard<std::mutex> g(mu_);
		if (already_used_)
			return -EINVAL;
		use_pkey_index_ = true;
		return 0;
	}
	case IB_USER_MAD_REGISTER_AGENT2:
		return register_agent(arg, true);
	}
	return -ENOTTY;
}

// --------------------------------------------------------------- write
long File::write(const void *buf, std::size_t count)
{
	if (accmode_ == O_RDONLY)
		return -EBADF;
	const auto ubuf = reinterpret_cast<std::uintptr_t>(buf);
	std::size_t hs;
	{
		std::lock_guard<std::mutex> g(mu_);
		hs = hdr_size();
	}
	if (count < hs + kRmppHdr)
		return -EINVAL;
	Packet sent;
	if (copy_from_user(&sent.hdr, ubuf, hs))
		return -EFAULT;
	if (sent.hdr.id >= std::uint32_t(kMaxAgents))
		return -EINVAL;
	std::array<std::uint8_t, kMadSize> mad{};
	const std::size_t data_len = count - hs;
	if (copy_from_user(mad.data(), ubuf + hs, std::min(data_len, kMadSize)))
		return -EFAULT;
	const std::uint8_t cls = mad[1];
	std::uint32_t hi_tid;
	std::uint8_t rmpp_version;
	{
		std::lock_guard<std::mutex> g(mu_);
		const Agent &a = agents_[sent.hdr.id];
		if (!a.used)
			return -EINVAL;
		hi_tid = a.hi_tid;
		rmpp_version = a.rmpp_version;
	}
	// An RMPP-active send (several segments) only where the kernel does
	// RMPP for the agent; any other MAD is one MAD.
	const bool rmpp_active = rmpp_class(cls) && rmpp_version && (mad[kMadHdr + 2] & 1);
	if (!rmpp_active && data_len > kMadSize)
		return -EINVAL;
	const bool response = is_response(mad.data());
	if (!response) {
		// The MAD layer's high TID word routes the answer back to the agent.
		std::uint64_t tid = get64(mad.data() + 8);
		put64(mad.data() + 8, std::uint64_t(hi_tid) << 32 | (tid & 0xffffffffu));
	}
	const std::uint64_t tid = get64(mad.data() + 8);
	{
		std::lock_guard<std::mutex> g(mu_);
		if (!response)
			for (const Pending &p : pending_)
				if (p.tid == tid && p.mgmt_class == cls)
					return -EINVAL; // a second request with the same TID
		if (!response && sent.hdr.timeout_ms && pending_.size() >= kMaxPending)
			return -ENOMEM;
	}
	// To the port's agents, with the port's attributes of this moment.
	Address to;
	to.dlid = ntohs(sent.hdr.lid);
	to.dqpn = ntohl(sent.hdr.qpn);
	Answer ans;
	Fate fate = Fate::Lost;
	// A RoCE port: no agent answers (no SMA, SM or PMA on the Ethernet).
	if (ib_port_)
		if (auto snap = snap_())
			fate = send(*snap, port_, mad.data(), to, ans);
	// Only a request that waits (timeout_ms) gets anything back: its
	// response, or itself with ETIMEDOUT once every retry has timed out.
	if (response || !sent.hdr.timeout_ms)
		return long(count);
	std::lock_guard<std::mutex> g(mu_);
	if (!agents_[sent.hdr.id].used)
		return long(count);
	if (fate == Fate::Answered) {
		Packet p;
		p.hdr.id = sent.hdr.id;
		p.hdr.qpn = htonl(ans.sqpn);
		p.hdr.lid = htons(ans.slid);
		// An agent without kernel RMPP receives the segment as sent.
		std::size_t len = ans.rmpp && rmpp_version ? ans.length : kMadSize;
		p.data.assign(ans.mad.begin(), ans.mad.begin() + std::ptrdiff_t(len));
		queue(std::move(p));
		return long(count);
	}
	Pending pend;
	pend.seq = ++g_seq;
	pend.agent = sent.hdr.id;
	pend.tid = tid;
	pend.mgmt_class = cls;
	pend.pkt = std::move(sent);
	pend.pkt.send = true;
	pend.pkt.hdr.status = ETIMEDOUT;
	pend.pkt.data.assign(mad.begin(), mad.begin() + kMadHdr);
	const std::uint64_t wait_ms =
		std::uint64_t(pend.pkt.hdr.timeout_ms) * (std::uint64_t(pend.pkt.hdr.retries) + 1);
	const std::uint64_t seq = pend.seq;
	pending_.push_back(std::move(pend));
	schedule_timeout(shared_from_this(), seq,
			 std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms));
	return long(count);
}

void File::expire(std::uint64_t seq)
{
	std::lock_guard<std::mutex> g(mu_);
	auto it = std::find_if(pending_.begin(), pending_.end(),
			       [&](const Pending &p) { return p.seq == seq; });
	if (it == pending_.end())
		return;
	Packet p = std::move(it->pkt);
	pending_.erase(it);
	queue(std::move(p));
}

// ---------------------------------------------------------------- read
long File::read(int fd, void *buf, std::size_t count, bool nonblock)
{
	if (accmode_ == O_WRONLY)
		return -EBADF;
	const auto ubuf = reinterpret_cast<std::uintptr_t>(buf);
	// A blocking read waits for a MAD; every wait is a poll() on the
	// eventfd, which a queued MAD or an expired timeout makes readable.
	for (;;) {
		std::unique_lock<std::mutex> g(mu_);
		const std::size_t hs = hdr_size();
		if (count < hs)
			return -EINVAL;
		if (!recv_.empty()) {
			Packet &p = recv_.front();
			long ret;
			if (p.send) {
				// A send that timed out: its header and first 24 bytes.
				if (count < hs + p.data.size())
					return -EINVAL;
				ret = long(hs + p.data.size());
			} else {
				p.hdr.length = std::uint32_t(hs + p.data.size());
				if (count < hs + std::min(p.data.size(), kMadSize))
					return -EINVAL;
				if (count < hs + p.data.size()) {
					// A multi-segment message that does not fit: the
					// first segment, whose header tells its length.
					if (copy_to_user(ubuf, &p.hdr, hs) ||
					    copy_to_user(ubuf + hs, p.data.data(), kMadSize))
						return -EFAULT;
					return -ENOSPC;
				}
				ret = long(hs + p.data.size());
			}
			if (copy_to_user(ubuf, &p.hdr, hs) ||
			    copy_to_user(ubuf + hs, p.data.data(), p.data.size()))
				return -EFAULT; // the MAD stays queued, as in the kernel
			recv_.pop_front();
			if (recv_.empty() && signaled_) {
				eventfd_t v;
				eventfd_read(efd_, &v);
				signaled_ = false;
			}
			return ret;
		}
		if (nonblock)
			return -EAGAIN;
		g.unlock();
		struct pollfd pfd = {fd, POLLIN, 0};
		int n = ::poll(&pfd, 1, -1);
		if (n < 0 && errno == EINTR)
			return -EINTR;
		if (n < 0 || (pfd.revents & POLLNVAL))
			return -EBADF; // closed by another thread meanwhile
	}
}

// --------------------------------------------------------------- timer
namespace {

struct Timer {
	std::mutex mu;
	std::condition_variable cv;
	std::multimap<std::chrono::steady_clock::time_point,
		      std::pair<std::weak_ptr<File>, std::uint64_t>>
		due;
	bool running = false;

	void loop()
	{
		std::unique_lock<std::mutex> g(mu);
		for (;;) {
			if (due.empty()) {
				cv.wait(g);
				continue;
			}
			auto first = due.begin();
			if (std::chrono::steady_clock::now() < first->first) {
				cv.wait_until(g, first->first);
				continue;
			}
			auto [weak, seq] = first->second;
			due.erase(first);
			g.unlock();
			if (auto f = weak.lock())
				f->expire(seq);
			g.lock();
		}
	}
};

Timer &timer()
{
	// Never destroyed: the thread may outlive static destructors.
	static Timer *t = new Timer;
	return *t;
}

// fork(): the child gets the timer unlocked and without the parent's
// thread or waiting sends (its own next timeout starts a thread).
void before_fork()
{
	timer().mu.lock();
}

void after_fork_parent()
{
	timer().mu.unlock();
}

void after_fork_child()
{
	Timer &t = timer();
	t.due.clear();
	t.running = false;
	t.mu.unlock();
}

} // namespace

void schedule_timeout(const std::shared_ptr<File> &f, std::uint64_t seq,
		      std::chrono::steady_clock::time_point when)
{
	static std::once_flag once;
	std::call_once(once, [] { pthread_atfork(before_fork, after_fork_parent, after_fork_child); });
	Timer &t = timer();
	std::lock_guard<std::mutex> g(t.mu);
	t.due.emplace(when, std::make_pair(std::weak_ptr<File>(f), seq));
	if (!t.running) {
		t.running = true;
		std::thread([] { timer().loop(); }).detach();
	}
	t.cv.notify_one();
}

} // namespace uabi::umad
