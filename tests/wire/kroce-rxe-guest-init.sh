#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of both guests of tests/wire/run-kroce-rxe.sh (busybox); /role says
# which one this is:
#   rxe    Linux's rxe0 on eth0 at 10.79.0.2 (Debian's libibverbs and rxe
#          provider) and the kernel's rdma_cm, serves each step of /steps,
#          then connects to the other guest for it;
#   kroce  rdma_uabi.ko's own RoCE device kroce0 on eth0 at 10.79.0.3, the
#          programs under `uabi run` on it (the CM's programs through its
#          rdma_cm shim, the module's CM): connects to rxe's server first
#          (retrying until it listens), then serves.
# Then the connection manager the same way: rping (10 pings, -v: the host
# checks the payload) and ucmatose (2 connections).
# Prints "UABI-KXR-STEP: name PASS|FAIL" lines and a last
# "UABI-KXR-RESULT".
. /lib.sh
guest_marker UABI-KXR
role=$(cat /role)

ok=1
guest_insmod /modules || ok=0
if [ "$role" = rxe ]; then
	guest_rxe 10.79.0.2/24 || ok=0
	[ -e /dev/infiniband/rdma_cm ] || ok=0
	# The GID of 10.79.0.2 for RoCE v2.
	gidx=$(guest_rxe_gid rxe0 0000:0000:0000:0000:0000:ffff:0a4f:0002)
	[ -n "$gidx" ] || ok=0
	dev=rxe0 peer=10.79.0.3 RUN=
else
	export UABI_VERBS_LIB=/kroce/lib/libibverbs.so.1 UABI_UMAD_LIB=/kroce/lib/libuabi_umad.so
	export UABI_RDMACM_LIB=/kroce/lib/libuabi_rdmacm.so
	export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
	U="/kroce/uabi --backend kernel"
	insmod /rdma_uabi.ko || ok=0
	ip link set lo up
	ip link set eth0 up && ip addr add 10.79.0.3/24 dev eth0 || ok=0
	$U link add kroce0 netdev eth0 || ok=0
	$U link | grep -q "link kroce0/1 state ACTIVE .*receives 10.79.0.3:4791" || ok=0
	gidx=0 dev=kroce0 peer=10.79.0.2	# IPv4 addresses come first
	RUN="$U run --"
fi
echo "virtio_net napi_tx: $(cat /sys/module/virtio_net/parameters/napi_tx)"
if [ $ok = 1 ]; then
	step "$role-setup" PASS
else
	ip addr
	step "$role-setup" FAIL
	finish
fi

serve() {	# name prog args
	name=$1
	shift
	if timeout 240 $RUN "$@" -d $dev >/tmp/st.log 2>&1; then
		step "$role-server-$name" PASS
	else
		step "$role-server-$name" FAIL
	fi
	cat /tmp/st.log
}
connect() {	# name prog args (the peer's server retried until it listens)
	name=$1
	shift
	if guest_retry 400 "Couldn't connect|Unable to init the socket" /tmp/st.log \
		timeout 240 $RUN "$@" -d $dev $peer; then
		step "$role-client-$name" PASS
	else
		step "$role-client-$name" FAIL
	fi
	cat /tmp/st.log
}
while read -r name prog args; do
	[ -n "$name" ] || continue
	args=$(echo "$args" | sed "s/GIDX/$gidx/g")
	if [ "$role" = rxe ]; then
		serve "$name" $prog $args
		connect "$name" $prog $args
	else
		connect "$name" $prog $args
		serve "$name" $prog $args
	fi
done </steps
# The CM: cm_serve/cm_connect NAME CMD...; the client retries while the
# peer's listener is not up (REJECTED, reason 8, or UNREACHABLE).
show() {
	echo "UABI-OUT-BEGIN $1"
	cat "$2"
	echo "UABI-OUT-END $1"
}
cm_serve() {
	name=$1
	shift
	if timeout 240 $RUN "$@" >/tmp/cm.log 2>&1; then
		step "$role-server-$name" PASS
	else
		step "$role-server-$name" FAIL
	fi
	show "$role-server-$name" /tmp/cm.log
}
cm_connect() {
	name=$1
	shift
	if guest_retry 400 "REJECTED|UNREACHABLE|refused" /tmp/cm.log timeout 240 $RUN "$@"; then
		step "$role-client-$name" PASS
	else
		step "$role-client-$name" FAIL
	fi
	show "$role-client-$name" /tmp/cm.log
}
if [ "$role" = rxe ]; then
	cm_serve rping rping -s -a 10.79.0.2 -p 25110 -v -C 10
	cm_connect rping rping -c -a 10.79.0.3 -p 25111 -v -C 10
	cm_serve ucmatose ucmatose -p 25112 -c 2 -C 10
	cm_connect ucmatose ucmatose -s 10.79.0.3 -p 25113 -c 2 -C 10
else
	cm_connect rping rping -c -a 10.79.0.2 -p 25110 -v -C 10
	cm_serve rping rping -s -a 10.79.0.3 -p 25111 -v -C 10
	cm_connect ucmatose ucmatose -s 10.79.0.2 -p 25112 -c 2 -C 10
	cm_serve ucmatose ucmatose -p 25113 -c 2 -C 10
fi
[ "$role" = kroce ] && $U link | grep "^link kroce0/"
dmesg | grep -iE "rxe|rdma_uabi|bug|warn" | tail -20
finish
