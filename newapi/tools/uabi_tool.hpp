// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// What the files of the `uabi` tool share.
#ifndef UABI_TOOL_HPP
#define UABI_TOOL_HPP

#include <uabi/transport.hpp>

#include <string>
#include <vector>

namespace uabi::tool {

// Exit codes: 0 fine, 1 failed, 2 usage, 3 the backend is not running.
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotRunning = 3;

// "uabi: <message>" and a hint, on stderr; the usage exit status.
int usage_error(const std::string &msg);
std::string json_str(const std::string &s);

// uabi link [add NAME netdev IFNAME | del NAME | show]  (uabi_link.cpp)
int cmd_link(const std::vector<std::string> &words, Backend backend, bool json);

} // namespace uabi::tool

#endif
