// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libFuzzer target: RoCEv2 packets from anyone into live QPs
// (docs/wire.md).  An endpoint on loopback serves an RC QP (with a READ
// and a SEND of its own outstanding, so responses have something to
// answer), a UC and a UD QP, all over one MR that sits between two guard
// pages; receive WQEs are kept posted.  An input is a list of packets
// (two length bytes, then the bytes), each handed to the endpoint as if
// its socket had received it from the connected peer — with the ICRC made
// right when the input's first byte is odd, so the fuzzer gets past it.
// Nothing may crash, leak, hang, or write outside the MR (the guards stay
// zero), whatever the packets say.
#include <uabi/wire/engine.hpp>

#include <arpa/inet.h>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/mman.h>
#include <vector>

using namespace uabi::wire;

namespace {

constexpr std::size_t kGuard = 4096, kMr = 1 << 16;
constexpr std::uint32_t kKey = 0x1200, kRc = 0x11, kUc = 0x12, kUd = 0x13;

class OneMr : public Memory {
public:
	explicit OneMr(std::uint8_t *p) : p_(p) {}
	bool lookup(std::uint32_t key, Region &out) override
	{
		if (key != kKey)
			return false;
		out = {reinterpret_cast<std::uint64_t>(p_), kMr, p_, 0xf, 1};
		return true;
	}

private:
	std::uint8_t *p_;
};

struct World {
	std::uint8_t *mem;	// guard | MR | guard
	std::unique_ptr<OneMr> mr;
	std::unique_ptr<Endpoint> ep;
	PeerAddr peer;
	std::unique_ptr<Qp> qp[3];
	std::atomic<std::uint32_t> done[3] = {};	// receive completions since the last repost

	World()
	{
		mem = static_cast<std::uint8_t *>(mmap(nullptr, kGuard * 2 + kMr, PROT_READ | PROT_WRITE,
						       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		if (mem == MAP_FAILED)
			abort();
		mr = std::make_unique<OneMr>(mem + kGuard);
		sockaddr_in a{};
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ep = Endpoint::open(PeerAddr::from(reinterpret_cast<sockaddr *>(&a), sizeof(a)));
		if (!ep)
			abort();
		a.sin_port = htons(9);	// nobody: what the QPs send goes nowhere
		peer = PeerAddr::from(reinterpret_cast<sockaddr *>(&a), sizeof(a));
		const std::uint32_t qpns[3] = {kRc, kUc, kUd}, types[3] = {kQptRc, kQptUc, kQptUd};
		for (int i = 0; i < 3; i++) {
			qp[i] = ep->create_qp(qpns[i], types[i], *mr, [](const Completion &) {},
					      [this, i](const Completion &) { done[i]++; }, 8, 16);
			reset(i);
		}
	}

	void reset(int i)
	{
		QpAttr a;
		a.pd = 1;
		a.access = 0xe;
		a.dest = peer;
		a.dest_qpn = 0x22;
		a.qkey = 0x1111;
		a.timeout = 0;	// never give up: the peer never answers
		for (std::uint32_t s : {kReset, kInit, kRtr, kRts}) {
			a.state = s;
			qp[i]->modify(a);
		}
		for (int k = 0; k < 16; k++)
			post_recv(i, k);
		if (i == 0) {
			SendWr w;
			w.opcode = kWrRead;
			w.sges = {{reinterpret_cast<std::uint64_t>(mem + kGuard), 3000, kKey}};
			w.remote_addr = 0x1000;
			w.rkey = 0x77;
			qp[0]->post_send(w);
			w.opcode = kWrSend;
			w.sges[0].length = 100;
			qp[0]->post_send(w);
		}
	}

	void post_recv(int i, int k)
	{
		std::uint8_t *at = mem + kGuard + std::size_t(k) * 4096;
		qp[i]->post_recv(1, {{reinterpret_cast<std::uint64_t>(at), 2000, kKey},
				     {reinterpret_cast<std::uint64_t>(at + 2048), 2048, kKey}});
	}

	void check_guards()
	{
		for (std::size_t j = 0; j < kGuard; j++)
			if (mem[j] || mem[kGuard + kMr + j])
				abort();	// a write outside the MR
	}
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
	static World *w = new World();	// one endpoint for the whole run
	if (!size)
		return 0;
	bool fix = data[0] & 1;
	std::size_t off = 1;
	std::vector<std::uint8_t> pkt;
	while (off + 2 <= size) {
		std::size_t n = std::size_t(data[off]) | std::size_t(data[off + 1]) << 8;
		off += 2;
		n = std::min(n, size - off);
		pkt.assign(data + off, data + off + n);
		off += n;
		w->ep->inject(pkt, w->peer, fix);
	}
	w->check_guards();
	for (int i = 0; i < 3; i++) {
		if (w->qp[i]->state() == kErr) {
			w->reset(i);
			w->done[i] = 0;
		}
		for (; w->done[i] > 0; w->done[i]--)
			w->post_recv(i, int(w->done[i] % 16));
	}
	return 0;
}
