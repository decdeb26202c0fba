#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of bench/qemu_vs_rxe.sh (busybox): in one boot, loads
# rdma_uabi.ko and Linux's rdma_rxe (bound to the guest's virtio NIC), then
# runs Debian's unmodified perftest, server and client as two processes of
# this guest, on each in turn, round after round:
#   module: `uabi --backend kernel run -- ib_... -d uabi_sw0`
#           (the drop-in libibverbs.so.1 on /dev/rdma_uabi)
#   rxe:    `ib_... -d rxe0 -x GIDX` (Debian's libibverbs and rxe provider;
#           the two processes talk through rxe's loopback)
# Each client's result row is printed after a "QVR-ROW: BACKEND TEST ROUND"
# line; the host (bench/qemu_vs_rxe.sh) takes the medians.  The last line
# is "QVR-RESULT: PASS" or "QVR-RESULT: FAIL".
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
cd /tmp
fail=0
finish() {
	[ $fail = 0 ] && echo "QVR-RESULT: PASS" || echo "QVR-RESULT: FAIL"
	poweroff -f
}
echo "QVR-GUEST: $(uname -r), $(nproc) cpu(s)"

# ---- the module
insmod /rdma_uabi.ko && [ -c /dev/rdma_uabi ] || { echo "QVR-FAIL: insmod rdma_uabi.ko"; fail=1; finish; }

# ---- rxe on eth0 (qemu's user-mode NIC; nothing leaves the guest)
for ko in $(cat /modules); do
	insmod "$ko" || { echo "QVR-FAIL: insmod $ko"; fail=1; }
done
ip link set lo up
ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || fail=1
rdma link add rxe0 type rxe netdev eth0 || fail=1
mkdir -p /dev/infiniband
for d in /sys/class/infiniband_verbs/uverbs*; do
	[ -e "$d/dev" ] || continue
	mknod "/dev/infiniband/${d##*/}" c $(tr ':' ' ' <"$d/dev")
done
# The RoCE v2 GID of 10.0.2.15.
gidx=""
for t in /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/*; do
	i=${t##*/}
	g=$(cat /sys/class/infiniband/rxe0/ports/1/gids/$i 2>/dev/null)
	[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
	[ "$g" = "0000:0000:0000:0000:0000:ffff:0a00:020f" ] && gidx=$i && break
done
[ -n "$gidx" ] || { echo "QVR-FAIL: no RoCE v2 GID for 10.0.2.15 on rxe0"; ls /sys/class/infiniband; fail=1; finish; }
echo "QVR-SETUP: rdma_uabi.ko loaded, rxe0 on eth0, RoCE v2 GID index $gidx"

# ---- perftest
rounds=$(cat /rounds)
port=26100
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu UABI_VERBS_LIB=/qvr/libibverbs.so.1 \
	UABI_UMAD_LIB= UABI_RDMACM_LIB=
# run BACKEND TEST ROUND PROG ARGS...: server, then client to 127.0.0.1.
run() {
	be=$1 test=$2 round=$3
	shift 3
	port=$((port + 1))
	if [ "$be" = module ]; then
		set -- /qvr/uabi --backend kernel run -- "$@" -d uabi_sw0 -p $port
	else
		set -- "$@" -d rxe0 -x "$gidx" -p $port
	fi
	timeout 600 "$@" >/tmp/srv.log 2>&1 &
	spid=$!
	tries=0
	while :; do
		sleep 1
		timeout 600 "$@" 127.0.0.1 >/tmp/cli.log 2>&1
		crc=$?
		[ $crc = 0 ] && break
		grep -qE "Couldn't connect|Unable to init the socket" /tmp/cli.log && [ $tries -lt 60 ] || break
		tries=$((tries + 1))
	done
	wait $spid
	src=$?
	echo "QVR-ROW: $be $test $round"
	# The result rows: size, iterations, then numbers.
	# (inf or 0 when perftest could not calibrate its cycle counter.)
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9a-z.-]+' /tmp/cli.log || echo "(no result row)"
	echo "QVR-STATUS: $be $test $round server=$src client=$crc"
	# The client's whole output, for the record.
	sed 's/^/client| /' /tmp/cli.log
	if [ $src != 0 ] || [ $crc != 0 ]; then
		fail=1
		tail -n 15 /tmp/srv.log
	fi
}
bw_args=$(cat /bw.args)
lat_args=$(cat /lat.args)
r=1
while [ $r -le "$rounds" ]; do
	# Alternate which goes first, round by round.
	if [ $((r % 2)) = 1 ]; then order="module rxe"; else order="rxe module"; fi
	for be in $order; do run $be write_bw $r ib_write_bw -F $bw_args; done
	for be in $order; do run $be send_lat $r ib_send_lat -F $lat_args; done
	r=$((r + 1))
done
dmesg | grep -iE "rxe|uabi|bug|warn|oops" | tail -20
finish
