// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// The same checks compiled as C++20: OFED-era C++ sources include the OFED
// header too, and C++ is stricter (enum conversions, jumps, casts), so every
// declaration is exercised from both languages by one source.
#include "ofed_header_api.c"
