// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libFuzzer target: random legacy write() buffers into the translator, on a
// fresh in-process context per input, under ASan/UBSan.
//
// Byte 0 picks the dialect and the mode:
//   raw mode:        [u16 length][bytes]... each a legacy command as written;
//   structured mode: [verb][args]... each a verb of the old-path encoder with
//                    fuzzed arguments and small handles, so that the fuzzer
//                    spends its time on valid objects and their checks.
// Response pointers are never left to chance (they would let the translator
// write into the fuzzer's own memory, which is what a legacy caller may do
// to itself): they are rewritten to one of a scratch buffer, NULL, a
// PROT_NONE page and a read-only page.
#include <uabi/legacy.hpp>
#include <uabi/legacy_encoder.hpp>
#include <uabi/legacy_ofed.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace uabi;
using namespace uabi::legacy;

namespace
{

struct Pages {
	void *none, *ro;
	std::vector<std::byte> scratch;
	Pages() : scratch(1u << 20)
	{
		none = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ro = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (none == MAP_FAILED || ro == MAP_FAILED)
			abort();
	}
	std::uint64_t pick(std::uint8_t sel)
	{
		switch (sel & 3) {
		case 0:
			return reinterpret_cast<std::uintptr_t>(scratch.data());
		case 1:
			return 0;
		case 2:
			return reinterpret_cast<std::uintptr_t>(none);
		default:
			return reinterpret_cast<std::uintptr_t>(ro);
		}
	}
};

Pages &pages()
{
	static Pages p;
	return p;
}

// Commands whose first payload word is the response pointer.
bool has_response(std::uint32_t cmd, Dialect d)
{
	if (d == Dialect::Ofed && cmd >= UABI_OFED_CMD_CREATE_XRC_SRQ)
		return cmd == UABI_OFED_CMD_CREATE_XRC_SRQ ||
		       cmd == UABI_OFED_CMD_OPEN_XRC_DOMAIN ||
		       cmd == UABI_OFED_CMD_CREATE_XRC_RCV_QP ||
		       cmd == UABI_OFED_CMD_QUERY_XRC_RCV_QP;
	switch (cmd) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 5:
	case 9:
	case 10:
	case 11:
	case 12:
	case 14:
	case 15:
	case 17:
	case 18:
	case 19:
	case 20:
	case 21:
	case 22:
	case 24:
	case 25:
	case 27:
	case 28:
	case 29:
	case 32:
	case 34:
	case 35:
	case 36:
	case 37:
	case 39:
	case 40:
		return true;
	}
	return false;
}

struct Reader {
	const std::uint8_t *p;
	std::size_t n;
	std::uint8_t u8() { return n ? (n--, *p++) : 0; }
	std::uint16_t u16() { return std::uint16_t(u8() | u8() << 8); }
	std::uint32_t u32() { return std::uint32_t(u16() | std::uint32_t(u16()) << 16); }
	Handle h() { return u8() % 9; } // 0..8: mostly real handles
};

void raw_mode(Translator &t, Reader &r, Dialect d)
{
	while (r.n >= 3) {
		std::size_t len = r.u16() % 1024;
		std::uint8_t sel = r.u8();
		len = std::min(len, r.n);
		std::vector<std::byte> cmd(std::max<std::size_t>(len, 24));
		std::memcpy(cmd.data(), r.p, len);
		r.p += len;
		r.n -= len;
		std::uint32_t command = 0;
		std::memcpy(&command, cmd.data(), 4);
		std::uint64_t resp = pages().pick(sel);
		if (command & IB_USER_VERBS_CMD_FLAG_EXTENDED)
			std::memcpy(cmd.data() + 8, &resp, 8);
		else if (has_response(command & 0xff, d))
			std::memcpy(cmd.data() + 8, &resp, 8);
		t.execute(cmd.data(), len, cmd.size());
	}
}

void structured_mode(Encoder &e, Reader &r)
{
	static char buf[8192];
	while (r.n) {
		ibv_qp_attr a{};
		ibv_srq_attr sa{r.u16(), r.u8(), r.u8()};
		LegacyQpInit li;
		switch (r.u8() % 28) {
		case 0:
			(void)e.get_context();
			break;
		case 1:
			(void)e.query_device();
			break;
		case 2:
			(void)e.query_port(r.u8());
			break;
		case 3:
			(void)e.alloc_pd();
			break;
		case 4:
			(void)e.dealloc_pd(r.h());
			break;
		case 5:
			(void)e.reg_mr(r.h(), buf, r.u16(), reinterpret_cast<std::uintptr_t>(buf),
				       r.u8());
			break;
		case 6:
			(void)e.dereg_mr(r.h());
			break;
		case 7:
			(void)e.create_comp_channel();
			break;
		case 8:
			(void)e.create_cq(int(r.u16()), r.u8() & 1 ? -1 : int(r.u8()), r.u8() & 1,
					  r.u32());
			break;
		case 9:
			(void)e.resize_cq(r.h(), int(r.u16()));
			break;
		case 10:
			(void)e.destroy_cq(r.h());
			break;
		case 11:
		case 12:
			li.pd = r.h();
			li.send_cq = r.h();
			li.recv_cq = r.h();
			li.srq = r.u8() & 1 ? r.h() : 0;
			li.qp_type = ibv_qp_type(r.u8() % 12);
			li.cap.max_send_wr = r.u8();
			li.cap.max_recv_wr = r.u8();
			li.cap.max_send_sge = r.u8() % 4;
			li.cap.max_recv_sge = r.u8() % 4;
			(void)(r.u8() & 1 ? e.create_qp(li) : e.create_qp_ex(li));
			break;
		case 13:
			a.qp_state = ibv_qp_state(r.u8() % 8);
			a.port_num = r.u8() % 3;
			a.path_mtu = ibv_mtu(r.u8() % 7);
			a.dest_qp_num = r.u32();
			a.timeout = r.u8();
			a.ah_attr.port_num = r.u8() % 3;
			a.ah_attr.is_global = r.u8() & 1;
			a.alt_port_num = r.u8() % 3;
			(void)e.modify_qp(r.h(), a, int(r.u32() & 0x1fffff));
			break;
		case 14:
			(void)e.query_qp(r.h(), int(r.u32() & 0xffffff));
			break;
		case 15:
			(void)e.destroy_qp(r.h());
			break;
		case 16:
			(void)e.create_srq(r.h(), sa, 0);
			break;
		case 17:
			(void)e.create_xsrq(r.h(), ibv_srq_type(r.u8() % 4), r.h(), r.h(), sa, 0);
			break;
		case 18:
			(void)e.modify_srq(r.h(), sa, r.u8());
			break;
		case 19:
			(void)e.query_srq(r.h());
			break;
		case 20:
			(void)e.destroy_srq(r.h());
			break;
		case 21: {
			ibv_ah_attr ah{};
			ah.port_num = r.u8() % 3;
			ah.sl = r.u8();
			ah.is_global = r.u8() & 1;
			(void)e.create_ah(r.h(), ah, 0);
			break;
		}
		case 22:
			(void)e.destroy_ah(r.h());
			break;
		case 23:
			(void)e.open_xrcd(r.u8() & 1 ? -1 : int(r.u8() % 8), int(r.u32()));
			break;
		case 24:
			(void)e.close_xrcd(r.h());
			break;
		case 25:
			(void)e.open_qp(r.h(), r.u8() & 1 ? 0xffffffffu : 0x11 + r.u8(),
					ibv_qp_type(r.u8() % 12), 0);
			break;
		case 26:
			(void)e.modify_cq(r.h(), r.u8() % 3, r.u16(), r.u16());
			break;
		default: {
			ibv_qp_cap cap{};
			switch (r.u8() % 6) {
			case 0:
				(void)e.ofed_open_xrc_domain(-1, 0100);
				break;
			case 1:
				(void)e.ofed_create_xrc_rcv_qp(r.h(), cap, false);
				break;
			case 2:
				(void)e.ofed_reg_xrc_rcv_qp(r.h(), 0x11 + r.u8());
				break;
			case 3:
				(void)e.ofed_unreg_xrc_rcv_qp(r.h(), 0x11 + r.u8());
				break;
			case 4:
				(void)e.ofed_query_xrc_rcv_qp(r.h(), 0x11 + r.u8(), 0);
				break;
			default:
				(void)e.ofed_close_xrc_domain(r.h());
				break;
			}
		}
		}
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	Dialect d = (data[0] & 1) ? Dialect::Ofed : Dialect::Upstream;
	bool structured = data[0] & 2;
	auto t = Translator::open(Backend::Inproc, d);
	if (!t)
		abort();
	Reader r{data + 1, size - 1};
	if (structured) {
		Encoder e(**t);
		structured_mode(e, r);
	} else {
		raw_mode(**t, r, d);
	}
	// The event fds we were handed belong to us, as the kernel's would.
	int fds[256];
	int n = (*t)->event_fds(fds, 256);
	for (int i = 0; i < n && i < 256; i++)
		close(fds[i]);
	return 0;
}
