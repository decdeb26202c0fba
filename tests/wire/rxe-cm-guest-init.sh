#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of tests/wire/run-rxe-cm.sh (busybox): rxe0 on eth0 at
# 10.77.0.2 with the kernel's rdma_cm (rdma_ucm), then Debian's unmodified
# rping and ucmatose against the host's uabid at 10.77.0.1: as server
# first (the host's client retries until we listen), then as client
# (retrying while the host's listener is not up: REJECTED, reason 8, or
# for udaddy UNREACHABLE; rdma_xclient's synchronous connect says
# "Connection refused").
# Prints "UABI-RXE-STEP: name PASS|FAIL", each program's output between
# "UABI-OUT-BEGIN name" and "UABI-OUT-END name", and "UABI-RXE-RESULT".
. /lib.sh
guest_marker UABI-RXE
show() {
	echo "UABI-OUT-BEGIN $1"
	cat "$2"
	echo "UABI-OUT-END $1"
}

ok=1
guest_insmod /modules || ok=0
guest_rxe 10.77.0.2/24 || ok=0
[ -e /dev/infiniband/rdma_cm ] || ok=0
if [ $ok = 1 ]; then step rxe-setup PASS; else ip addr; ls -l /dev/infiniband; step rxe-setup FAIL; finish; fi

# server NAME CMD...: runs CMD once (the host's client connects to it).
server() {
	name=$1
	shift
	if timeout 240 "$@" >/tmp/out 2>&1; then step "$name" PASS; else step "$name" FAIL; fi
	show "$name" /tmp/out
}
# client NAME CMD...: retries while the host's listener is not up yet.
client() {
	name=$1
	shift
	if guest_retry 200 "REJECTED|UNREACHABLE|refused" /tmp/out timeout 240 "$@"; then
		step "$name" PASS
	else
		step "$name" FAIL
	fi
	show "$name" /tmp/out
}
server rping-server rping -s -a 10.77.0.2 -p 25600 -v -C 10
client rping-client rping -c -a 10.77.0.1 -p 25601 -v -C 10
server ucmatose-server ucmatose -p 25602 -c 2 -C 10
client ucmatose-client ucmatose -s 10.77.0.1 -p 25603 -c 2 -C 10
server udaddy-server udaddy -c 1 -C 10
client udaddy-client udaddy -s 10.77.0.1 -c 1 -C 10
# rdma_xserver/rdma_xclient (PS_IB), RC mode (-c r) only: their XRC mode
# needs a device with XRC, which rxe is not (Linux's librdmacm refuses it
# on rxe: "rdma_get_request: Operation not supported").
if command -v rdma_xserver >/dev/null && command -v rdma_xclient >/dev/null; then
	server xrc-r-server rdma_xserver -c r -p 25610
	client xrc-r-client rdma_xclient -c r -s 10.77.0.1 -p 25612
fi
dmesg | grep -iE "rxe|cm|bug|warn" | tail -20
finish
