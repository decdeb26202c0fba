# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Sourced by the scripts that check rping's payload (tests/cm/run_cm.sh,
# tests/cm/run-cm-two-hosts.sh, tests/wire/run-kroce-cm.sh and
# run-rxe-cm.sh; run_cm.sh also in the qemu guest of
# tests/kernel/run-qemu.sh, beside it).
#
# rping_expect COUNT PREFIX: the lines rping -v prints for COUNT pings of
# 64 bytes, each after PREFIX: "rdma-ping-N: " then letters from 'A' + N
# on, wrapping after 'z' (rping.c's pattern).
rping_expect() {
	awk -v n="$1" -v prefix="$2" 'BEGIN {
		start = 65
		for (p = 0; p < n; p++) {
			s = sprintf("rdma-ping-%d: ", p); c = start
			while (length(s) < 63) { s = s sprintf("%c", c); c++; if (c > 122) c = 65 }
			print prefix s
			start++; if (start > 122) start = 65
		}
	}'
}
