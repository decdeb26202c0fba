// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// uabid: the request slot of a connection (docs/daemon.md, "Request slot").
//
// A slot is a memfd of kSlotBytes that uabid makes, seals against resizing
// and maps, and hands to the client with an eventfd (its doorbell) and the
// read-only daemon page.  The client writes a message and bumps req_seq;
// uabid notices a req_seq other than the last it served, either while it
// polls (DaemonPage::polling set: the client rings no doorbell) or when the
// doorbell wakes epoll.  Every word of the slot is the client's to write at
// any moment, so uabid reads req_len once, bounds it, copies the message
// out before looking at it, answers with the copy, and never waits on a
// word of the slot: the only thing it does for a client that sleeps is one
// FUTEX_WAKE.  A client that stops mid-request, writes garbage or dies is
// served garbage or dropped through its socket, like any other.
#include "uabid.hpp"

#include <sys/eventfd.h>
#include <sys/mman.h>

namespace uabid {

// The daemon page: one for all connections, writable only here (sealed
// F_SEAL_FUTURE_WRITE before any client gets it: no writable mapping, no
// write(2), no resizing).  0 or -errno.
int Daemon::make_page()
{
	int fd = ::memfd_create("uabid-page", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	void *p = MAP_FAILED;
	if (::ftruncate(fd, kDaemonPageBytes) == 0)
		p = ::mmap(nullptr, kDaemonPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED ||
	    ::fcntl(fd, F_ADD_SEALS,
		    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0) {
		int e = errno;
		if (p != MAP_FAILED)
			::munmap(p, kDaemonPageBytes);
		::close(fd);
		return -e;
	}
	page_fd_ = fd;
	page_ = static_cast<DaemonPage *>(p);
	page_->polling = 0;
	return 0;
}

void Daemon::set_polling(bool on)
{
	if (page_)
		wire::store_release(&page_->polling, on);
}

// kOpSlot: a slot for a context connection (one; asking again: EBUSY).
bool Daemon::give_slot(Conn &c)
{
	if (c.kind != Conn::Context)
		return admin_reply(c, kOpSlot, -EINVAL, nullptr, 0);
	if (c.slot)
		return admin_reply(c, kOpSlot, -EBUSY, nullptr, 0);
	if (!page_) {
		if (int e = make_page())
			return admin_reply(c, kOpSlot, e, nullptr, 0);
	}
	int fd = ::memfd_create("uabid-slot", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int bell = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	void *p = MAP_FAILED;
	int err = 0;
	// Sealed before the client has it: it cannot shrink the file under our
	// mapping (SIGBUS), nor seal it against our writes.
	if (fd < 0 || bell < 0 || ::ftruncate(fd, kSlotBytes) < 0 ||
	    ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
	    (p = ::mmap(nullptr, kSlotBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
		    MAP_FAILED)
		err = -errno;
	epoll_event ev{};
	ev.events = EPOLLIN;
	ev.data.fd = bell;
	if (!err && ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, bell, &ev) < 0)
		err = -errno;
	if (!err) {
		try {
			slotted_.push_back(&c);
			doorbells_[bell] = &c;
		} catch (...) {
			std::erase(slotted_, &c);
			::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, bell, nullptr);
			err = -ENOMEM;
		}
	}
	if (err) {
		if (p != MAP_FAILED)
			::munmap(p, kSlotBytes);
		if (fd >= 0)
			::close(fd);
		if (bell >= 0)
			::close(bell);
		return admin_reply(c, kOpSlot, err, nullptr, 0);
	}
	c.slot = static_cast<SlotHdr *>(p);
	c.doorbell = bell;
	c.last_seq = 0;
	SlotReply r{kSlotBytes, kSlotDataOff, kDaemonPageBytes, 0};
	AdmHdr h{kAdmMagic, std::uint32_t(sizeof(h) + sizeof(r)), kProtoVersion, kOpSlot, 0, 0, 0};
	std::byte out[sizeof(h) + sizeof(r)];
	std::memcpy(out, &h, sizeof(h));
	std::memcpy(out + sizeof(h), &r, sizeof(r));
	const int fds[3] = {fd, bell, page_fd_};
	bool ok = send_reply(c, out, sizeof(out), fds, 3);
	::close(fd); // the mapping stays; the client has its own copy
	return ok;
}

void Daemon::release_slot(Conn &c)
{
	if (!c.slot)
		return;
	std::erase(slotted_, &c);
	doorbells_.erase(c.doorbell);
	::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.doorbell, nullptr);
	::close(c.doorbell);
	::munmap(c.slot, kSlotBytes);
	c.slot = nullptr;
	c.doorbell = -1;
}

// One pass over every slot, at most one request from each (a client waits
// for its reply before it sends again, so one is all a well-behaved client
// has).  Whether anything was served.
bool Daemon::serve_slots()
{
	bool any = false;
	// serve_slot() never drops a connection, so slotted_ stays as it is.
	for (std::size_t i = 0; i < slotted_.size(); i++) {
		Conn &c = *slotted_[i];
		// The request's first lines with its sequence number: a single
		// command with its attributes fits in them (DEVICE COUNTERS'
		// query is 208 bytes).
		wire::prefetch_lines(reinterpret_cast<const std::byte *>(c.slot) + kSlotDataOff, 256, 4);
		std::uint32_t seq = wire::load_acquire(&c.slot->req_seq);
		if (seq != c.last_seq) {
			serve_slot(c, seq);
			any = true;
		}
	}
	return any;
}

void Daemon::serve_slot(Conn &c, std::uint32_t seq)
{
	std::byte *data = reinterpret_cast<std::byte *>(c.slot) + kSlotDataOff;
	c.last_seq = seq;
	c.last_mono = wire::now_ns();
	// One read of the length, bounded; then the bytes are ours.
	const std::uint32_t n = __atomic_load_n(&c.slot->req_len, __ATOMIC_RELAXED);
	std::byte *p = buf_.data();
	std::uint32_t rlen = n;
	if (n < sizeof(uabi_msg_hdr) || n > kSlotCap || n > buf_.size()) {
		LOG_INPUT("connection %u: slot request of %u bytes", c.id, n);
		uabi_msg_hdr h{};
		h.magic = UABI_MSG_MAGIC;
		h.length = sizeof(h);
		h.abi_version = UABI_ABI_VERSION;
		h.status = -EINVAL;
		std::memcpy(p, &h, sizeof(h));
		rlen = sizeof(h);
	} else {
		std::memcpy(p, data, n);
		// Taken: a client still polling when its budget runs out keeps
		// polling while we execute (a long chain) instead of sleeping.
		wire::store_release(&c.slot->taken_seq, seq);
		// Fds travel only with the socket: a message with an fd
		// attribute here is refused before the core sees it, unless
		// the attribute is an input that names no fd (a negative value,
		// as XRCD OPEN's -1: on the socket too it reaches the core as
		// it is).
		bool has_fd = false;
		wire::walk(
			p, n, [](std::size_t, std::size_t) {},
			[&](std::size_t, std::size_t aoff, std::uint16_t flags) {
				if ((flags & UABI_ATTR_F_OUTPUT) ||
				    wire::get_s32(p, wire::payload_of(aoff)) >= 0)
					has_fd = true;
			});
		if (has_fd) {
			LOG_INPUT("connection %u: fd attribute in a slot request", c.id);
			uabi_msg_hdr h;
			std::memcpy(&h, p, sizeof(h));
			h.status = -EINVAL;
			h.executed = 0;
			h.failed_index = 0;
			std::memcpy(p, &h, sizeof(h));
		} else {
			uabi_user_execute_as(c.ctx, p, n, c.cred.pid);
			c.requests++;
			requests_++;
		}
	}
	std::memcpy(data, p, rlen);
	__atomic_store_n(&c.slot->rep_len, rlen, __ATOMIC_RELAXED);
	wire::store_release(&c.slot->rep_seq, seq);
	wire::full_fence();
	// The client's word: believing it costs at most one system call.
	if (wire::load_acquire(&c.slot->waiting))
		wire::futex_wake(&c.slot->rep_seq);
}

} // namespace uabid
