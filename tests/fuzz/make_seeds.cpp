// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Writes a seed corpus for fuzz_dispatch: real messages built by the client
// library (one file each), so the fuzzer starts from valid commands.
#include <uabi/client.hpp>

#include <cstdio>
#include <string>

using namespace uabi;

static void save(const std::string &dir, const std::string &name, Message &m)
{
	auto &raw = m.raw();
	std::string path = dir + "/" + name;
	FILE *f = fopen(path.c_str(), "wb");
	if (!f)
		return;
	// Mode byte 0 (raw), then a count byte the raw mode ignores.
	const unsigned char prefix[2] = {0, 0};
	fwrite(prefix, 1, 2, f);
	fwrite(raw.data(), 1, raw.size(), f);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	std::string dir = argv[1];
	static char buf[4096];

	Chain qp_chain(UABI_MSG_F_ALL_OR_NOTHING);
	auto pd = qp_chain.alloc_pd();
	qp_chain.reg_mr(pd, buf, sizeof(buf), 7);
	auto cq = qp_chain.create_cq({.cqe = 16});
	uabi_qp_init init{};
	init.qp_type = UABI_QPT_RC;
	init.cap.max_send_wr = 4;
	init.cap.max_recv_wr = 4;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	auto qp = qp_chain.create_qp({.pd = pd, .send_cq = cq, .recv_cq = cq, .init = init});
	uabi_qp_attr a{};
	a.qp_state = UABI_QPS_INIT;
	a.port_num = 1;
	qp_chain.modify_qp(qp, a, UABI_QP_STATE | UABI_QP_PORT | UABI_QP_PKEY_INDEX |
				      UABI_QP_ACCESS_FLAGS);
	qp_chain.destroy(UABI_OBJ_QP, qp);
	save(dir, "qp_chain", qp_chain.message());

	Chain xrc;
	xrc.open_xrcd(-1, UABI_XRCD_O_CREAT);
	auto ch = xrc.create_comp_channel();
	xrc.create_cq({.cqe = 4, .channel = ch});
	xrc.create_async_event_queue();
	save(dir, "xrc_evq", xrc.message());

	Message q;
	Command dev(UABI_OBJ_DEVICE, UABI_DEVICE_QUERY_PORT);
	dev.add_in<uint32_t>(UABI_ATTR_DEVICE_PORT_NUM, 1);
	dev.add_out<uabi_port_attr>(UABI_ATTR_DEVICE_PORT_INFO);
	q.add(std::move(dev));
	save(dir, "query_port", q);
	return 0;
}
