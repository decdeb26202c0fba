# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Sourced by the scripts that run unmodified mckey across hosts
# (tests/cm/run-cm-two-hosts.sh, tests/wire/run-kroce-cm.sh; the latter
# also in its qemu guest, beside kroce-cm-guest-init.sh).  POSIX sh.
#
# mckey_ok ROLE OUT MGID: mckey's output OUT (stdout and stderr) says it
# joined the group MGID with LID 0 (RoCE: no subnet manager), and with
# ROLE "receiver" that it received every datagram it was told to (-C N:
# mckey ends its transfer only once it has N, then prints "data transfers
# complete" and "return status 0"); ROLE "sender" asks the join only.
# Its exit status is the caller's to check.
mckey_ok() {
	grep -q "joined dgid: $3 mlid 0x0" "$2" || return 1
	[ "$1" = sender ] && return 0
	grep -q 'data transfers complete' "$2" && grep -q 'return status 0' "$2"
}
