// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Prints one real message before and after execution as a hex dump: the
// example in docs/uapi.md is this program's output (a test compares them).
#include <uabi/client.hpp>

#include <cstdio>

using namespace uabi;

static void dump(const char *title, const std::vector<std::byte> &b)
{
	printf("%s (%zu bytes)\n", title, b.size());
	for (size_t off = 0; off < b.size(); off += 16) {
		printf("%04zx:", off);
		for (size_t i = off; i < off + 16 && i < b.size(); i++)
			printf("%s%02x", (i - off) % 4 ? "" : " ",
			       static_cast<unsigned>(b[i]));
		printf("\n");
	}
}

int main()
{
	auto ctx = Context::open(Backend::Inproc);
	if (!ctx) {
		fprintf(stderr, "open: %s\n", strerror(ctx.error()));
		return 1;
	}
	Message m;
	Command c(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PKEY);
	c.add_in<uint32_t>(UABI_ATTR_DEVICE_PORT_NUM, 1);
	c.add_in<uint32_t>(UABI_ATTR_DEVICE_INDEX, 0);
	c.add_out<uint16_t>(UABI_ATTR_DEVICE_PKEY);
	m.add(std::move(c));
	dump("request", m.raw());
	if (auto r = ctx->execute(m); !r) {
		fprintf(stderr, "execute: %s\n", strerror(r.error()));
		return 1;
	}
	dump("response", m.raw());
	return 0;
}
