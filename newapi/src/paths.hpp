// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// Where the running copy of rdma-uabi keeps its other parts (uabid, the
// drop-in libibverbs.so.1): found from the file this code is linked into,
// never from a path fixed at build time, so that an installed prefix works
// wherever it was moved (docs/install.md, "Relocation").
//
// Internal to the client library and the tools; not an installed header.
#pragma once

#include <string>

namespace uabi::paths {

// Running from the build tree (the executable or the object this code is
// linked into lies under the build directory it was compiled in).
bool in_build_tree();

// The installation prefix of this copy: the executable's or this object's
// directory with the install directory it matches removed (bin, sbin, the
// library directory, the drop-in library's directory).  Empty when neither
// lies in such a directory.  `where` says what was looked at, for messages.
std::string install_prefix(std::string *where = nullptr);

// Paths of the parts under a prefix.
std::string daemon_under(const std::string &prefix);
std::string verbs_library_under(const std::string &prefix);
std::string umad_library_under(const std::string &prefix);
std::string rdmacm_library_under(const std::string &prefix);
std::string inproc_module_under(const std::string &prefix);

} // namespace uabi::paths
