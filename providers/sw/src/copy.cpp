// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Moving a message's bytes, in order (docs/datapath.md, "Placement order").
//
// Neither memcpy nor the kernel's copy behind process_vm_writev/readv stores
// in address order: glibc writes a large copy's first vector last, and a
// fast-string copy may make any of its stores visible first.  A reader that
// polls the last byte of a message and then reads the rest must never see a
// stale byte, so every copy here writes the message in three steps: the
// body, then the bytes of the aligned 8-byte word that holds the last byte,
// then the last byte.  Each step is a separate copy (separate iovec entries
// for the kernel, which copies them one after another: string operations
// are not reordered with later stores), so nothing of the tail is visible
// before the whole body is.
#include "internal.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>

namespace uabi::sw {

namespace {

// How many of the last bytes of a copy of @total bytes into @dst lie in the
// aligned 8-byte word holding the last byte (0 if @dst is shorter).
std::uint64_t tail_len(const iovec *dst, int ndst, std::uint64_t total)
{
	std::uint64_t left = total;
	for (int i = 0; i < ndst && left; i++) {
		std::uint64_t n = std::min<std::uint64_t>(dst[i].iov_len, left);
		left -= n;
		if (!left && n) {
			auto last = reinterpret_cast<std::uintptr_t>(dst[i].iov_base) + n - 1;
			return std::min<std::uint64_t>(n, (last & 7) + 1);
		}
	}
	return 0;
}

// The entries of @v covering bytes [from, to) of the list, appended to @out.
int slice(const iovec *v, int n, std::uint64_t from, std::uint64_t to, iovec *out)
{
	int k = 0;
	std::uint64_t pos = 0;
	for (int i = 0; i < n && pos < to; i++) {
		std::uint64_t a = pos, b = pos + v[i].iov_len;
		pos = b;
		std::uint64_t lo = std::max(a, from), hi = std::min(b, to);
		if (lo >= hi)
			continue;
		out[k].iov_base = static_cast<char *>(v[i].iov_base) + (lo - a);
		out[k].iov_len = hi - lo;
		k++;
	}
	return k;
}

// memcpy of bytes [from, to) between two lists; with @ordered, one byte at a
// time in address order, each store a release.
void copy_range(const iovec *dst, int ndst, const iovec *src, int nsrc, std::uint64_t from,
		std::uint64_t to, bool ordered)
{
	iovec d[kMaxIov], s[kMaxIov];
	int nd = slice(dst, ndst, from, to, d), ns = slice(src, nsrc, from, to, s);
	int di = 0, si = 0;
	std::size_t doff = 0, soff = 0;
	while (di < nd && si < ns) {
		std::size_t n = std::min(d[di].iov_len - doff, s[si].iov_len - soff);
		auto *dp = static_cast<std::uint8_t *>(d[di].iov_base) + doff;
		auto *sp = static_cast<const std::uint8_t *>(s[si].iov_base) + soff;
		if (ordered)
			for (std::size_t i = 0; i < n; i++)
				__atomic_store_n(dp + i, sp[i], __ATOMIC_RELEASE);
		else
			std::memmove(dp, sp, n);	// an application may overlap them
		doff += n;
		soff += n;
		if (doff == d[di].iov_len) {
			di++;
			doff = 0;
		}
		if (soff == s[si].iov_len) {
			si++;
			soff = 0;
		}
	}
}

std::uint64_t list_len(const iovec *v, int n)
{
	std::uint64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i].iov_len;
	return sum;
}

// UABI_SW_TAIL_FIRST: after the tail, wait 100 µs before the body, so that
// a reader on another CPU sees the disorder even on a loaded machine.
void tail_first_gap()
{
	const std::uint64_t until = now_ns() + 100'000;
	while (now_ns() < until)
		sched_yield();
}

} // namespace

// Between the body and the tail: the tail's first store is a release,
// which orders every earlier store before it (x86 keeps stores in order,
// string stores included, as a whole; elsewhere the release does it).  Only
// non-temporal stores escape that order, and glibc's memcpy uses them only
// for copies far larger than this bound (it fences them too): a full fence
// there costs nothing next to the copy, and a small message does not pay it.
constexpr std::uint64_t kFenceBody = 64 * 1024;

void local_copy(const iovec *dst, int ndst, const iovec *src, int nsrc, std::uint64_t total,
		bool tail_first)
{
	total = std::min({total, list_len(dst, ndst), list_len(src, nsrc)});
	const std::uint64_t body = total - tail_len(dst, ndst, total);
	if (tail_first) {	// the disorder the placement test must catch
		copy_range(dst, ndst, src, nsrc, body, total, true);
		tail_first_gap();
		copy_range(dst, ndst, src, nsrc, 0, body, false);
		return;
	}
	if (ndst == 1 && nsrc == 1) {	// the common case, without slicing
		auto *d = static_cast<std::uint8_t *>(dst[0].iov_base);
		const auto *s = static_cast<const std::uint8_t *>(src[0].iov_base);
		// memmove: source and destination may overlap (an RDMA WRITE of
		// a buffer onto itself in one process: its result is undefined
		// in RDMA, but must not be undefined behaviour here).
		std::memmove(d, s, body);
		if (body > kFenceBody)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (std::uint64_t i = body; i < total; i++)
			__atomic_store_n(d + i, s[i], __ATOMIC_RELEASE);
		return;
	}
	copy_range(dst, ndst, src, nsrc, 0, body, false);
	if (body < total) {
		if (body > kFenceBody)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		copy_range(dst, ndst, src, nsrc, body, total, true);
	}
}

int vm_copy(Device &dev, pid_t dst_pid, const iovec *dst, int ndst, pid_t src_pid,
	    const iovec *src, int nsrc, std::uint64_t total)
{
	if (!total)
		return 0;
	const pid_t self = dev.pid();
	if (dst_pid == self && src_pid == self && !dev.force_vm()) {
		local_copy(dst, ndst, src, nsrc, total, dev.tail_first());
		return 0;
	}
	if ((src_pid != self && dst_pid != self) || ndst > kMaxIov || nsrc > kMaxIov)
		return EINVAL;
	const std::uint64_t body = total - tail_len(dst, ndst, total);
	const bool writing = src_pid == self;
	const iovec *mine = writing ? src : dst, *theirs = writing ? dst : src;
	const int nmine = writing ? nsrc : ndst, ntheirs = writing ? ndst : nsrc;
	// Bytes [from, to) in one system call.  The kernel copies iovec entries
	// one after another, so the list of this process's side is cut where a
	// later copy must start (@cuts).
	auto run = [&](std::uint64_t from, std::uint64_t to,
		       std::initializer_list<std::uint64_t> cuts) -> int {
		iovec m[kMaxIov + 2], t[kMaxIov];
		int nm = 0;
		std::uint64_t a = from;
		for (std::uint64_t c : cuts)
			if (c > a && c < to) {
				nm += slice(mine, nmine, a, c, m + nm);
				a = c;
			}
		nm += slice(mine, nmine, a, to, m + nm);
		const int nt = slice(theirs, ntheirs, from, to, t);
		ssize_t n = writing ? process_vm_writev(dst_pid, m, unsigned(nm), t, unsigned(nt), 0)
				    : process_vm_readv(src_pid, m, unsigned(nm), t, unsigned(nt), 0);
		if (n < 0)
			return errno;
		return std::uint64_t(n) == to - from ? 0 : EFAULT;
	};
	if (dev.tail_first()) {	// the disorder the placement test must catch
		int err = run(body, total, {});
		tail_first_gap();
		return err ? err : run(0, body, {});
	}
	return run(0, total, {body, total - 1});
}

} // namespace uabi::sw
