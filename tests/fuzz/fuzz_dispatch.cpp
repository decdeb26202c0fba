// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libFuzzer target: random messages into the dispatcher of the in-process
// core, under ASan/UBSan.  Each input runs on a fresh context that is then
// closed, so teardown of whatever the input managed to create is fuzzed too.
//
// The first byte picks the mode: raw bytes as they are, or the bytes after
// a valid message header (magic, version, length and count fixed up) so
// that the fuzzer spends its time inside commands and attributes.
#include <uabi/host_user.h>
#include <rdma/uabi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > UABI_MAX_MSG_BYTES)
		return 0;
	if (uabi_user_init())
		abort();
	uabi_context *ctx = uabi_user_open(nullptr);
	if (!ctx)
		abort();

	const bool structured = data[0] & 1;
	const uint8_t count = data[1];
	data += 2;
	size -= 2;

	std::vector<uint8_t> msg;
	if (structured) {
		uabi_msg_hdr h{};
		h.magic = UABI_MSG_MAGIC;
		h.abi_version = UABI_ABI_VERSION;
		h.length = uint32_t(sizeof(h) + size);
		h.count = uint16_t(count % 8 + 1);
		h.flags = (count & 0x80) ? UABI_MSG_F_ALL_OR_NOTHING : 0;
		msg.resize(sizeof(h) + size);
		memcpy(msg.data(), &h, sizeof(h));
		if (size)
			memcpy(msg.data() + sizeof(h), data, size);
	} else {
		msg.assign(data, data + size);
	}
	if (!msg.empty())
		uabi_user_execute(ctx, msg.data(), msg.size());
	uabi_user_close(ctx);
	return 0;
}
