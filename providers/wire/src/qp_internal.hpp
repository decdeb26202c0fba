// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Private to providers/wire: a send queue entry of a wire QP.
#ifndef UABI_WIRE_QP_INTERNAL_HPP
#define UABI_WIRE_QP_INTERNAL_HPP

#include <uabi/wire/engine.hpp>

namespace uabi::wire {

struct Qp::SendQe {
	SendWr wr;
	std::uint64_t total = 0;	// bytes to send, or to read back
	std::uint32_t npkts = 1;	// PSNs it uses (a READ: its responses)
	std::uint32_t first_psn = 0;
	std::uint32_t sent = 0;		// packets sent (READ/atomic: the request, 0 or 1)
	std::uint64_t resp_off = 0;	// READ: bytes of response placed
	bool rd = false;		// READ or atomic: waits for a response
	bool local = false;		// BIND_MW, LOCAL_INV: no packet, no PSN
	bool done = false;		// acknowledged or answered
	bool failed = false;		// completes with @status
	std::uint32_t status = kWcOk;
};

} // namespace uabi::wire

#endif // UABI_WIRE_QP_INTERNAL_HPP
