// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// libuabi.so is made of uabi_client's objects (newapi/CMakeLists.txt links
// the whole archive); CMake wants a source of the target's own, and this
// file is it.
