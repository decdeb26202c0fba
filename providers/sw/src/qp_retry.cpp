// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Deferred work requests: RNR and peer-not-ready retries with their IB
// timers, a peer found dead, and the progress that runs them
// (docs/datapath.md, "Semantics").
#include "qp_internal.hpp"

#include <climits>

namespace uabi::sw {

using namespace detail;

std::uint64_t Qp::deadline(const Pending &p)
{
	if (p.why == Outcome::Rnr) {
		std::uint8_t r = desc_->rnr_retry;
		if (r >= 7)
			return UINT64_MAX;
		return p.first_ns + std::uint64_t(r) * p.rnr_ns;
	}
	std::uint8_t t = desc_->timeout;
	if (!t)
		return UINT64_MAX;
	return p.first_ns + std::uint64_t(desc_->retry_cnt + 1) * (4096ull << std::min<int>(t, 31));
}

bool Qp::peer_dead()
{
	const uabi_sw_qp *dd = dev_.qp_desc(__atomic_load_n(&desc_->dest_qpn, __ATOMIC_RELAXED));
	if (!dd)
		return false;
	return process_dead(__atomic_load_n(&dd->pid, __ATOMIC_RELAXED));
}

bool Qp::run_pending_locked()
{
	while (!pending_.empty()) {
		if (state() == kErr) {
			flush_locked();
			return false;
		}
		Pending &p = pending_.front();
		Result r = execute(p.wr);
		if (r.outcome == Outcome::Done) {
			SendWr wr = p.wr;
			complete_send(wr, r.status, r.byte_len);
			pending_.pop_front();
			if (r.status != kWcSuccess) {
				enter_error();
				return false;
			}
			continue;
		}
		std::uint64_t now = now_ns();
		if (r.outcome != p.why) {
			p.why = r.outcome;
			p.first_ns = now;
		}
		if (r.outcome == Outcome::Rnr)
			p.rnr_ns = last_rnr_ns_;
		bool dead = false;
		if (now - p.last_check_ns >= kPeerCheckNs) {
			p.last_check_ns = now;
			dead = peer_dead();
		}
		if (dead || now >= deadline(p)) {
			std::uint32_t st = (p.why == Outcome::Rnr && !dead) ? kWcRnrRetryExcErr
									    : kWcRetryExcErr;
			SendWr wr = p.wr;
			complete_send(wr, st, 0);
			pending_.pop_front();
			enter_error();
			return false;
		}
		return true;
	}
	return false;
}

bool Qp::try_progress(bool *more)
{
	std::unique_lock<std::recursive_mutex> g(lock_, std::try_to_lock);
	if (!g.owns_lock()) {
		*more = true;
		return false;
	}
	run_pending_locked();
	*more = !pending_.empty();
	return true;
}

std::uint64_t Qp::next_deadline_ns()
{
	std::lock_guard<std::recursive_mutex> g(lock_);
	if (pending_.empty())
		return UINT64_MAX;
	return deadline(pending_.front());
}

} // namespace uabi::sw
