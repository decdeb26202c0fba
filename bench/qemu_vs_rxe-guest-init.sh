#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of bench/qemu_vs_rxe.sh (busybox): in one boot, loads
# rdma_uabi.ko and Linux's rdma_rxe, then runs Debian's unmodified
# perftest, server and client as two processes of this guest, on each
# backend in turn, round after round:
#   module: `uabi --backend kernel run -- ib_... -d uabi_sw0`
#           (the drop-in libibverbs.so.1 on /dev/rdma_uabi: shared memory)
#   rxe:    `ib_... -d rxe0 -x GIDX` (Debian's libibverbs and rxe provider;
#           rxe0 on eth0, the two processes talk through rxe's loopback)
#   kroce:  `UABI_WIRE_FORCE=1 uabi --backend kernel run -- ib_... -d kroce0
#           -x GIDX` (the module's own RoCE device on eth0, `uabi link add
#           kroce0 netdev eth0`; every message RoCEv2 packets from one
#           process's UDP socket to 10.0.2.15:4791, received in the kernel
#           and relayed to the other process)
# rxe and the module's RoCE device cannot both hold UDP port 4791 of one
# network namespace (rxe opens it when rdma_rxe loads): before each rxe run
# kroce0 is deleted and rdma_rxe loaded with rxe0 added, before each kroce
# run rxe0 is deleted and rdma_rxe unloaded (with --no-kroce, rxe stays).
# Each client's result row is printed after a "QVR-ROW: BACKEND TEST ROUND"
# line; the host (bench/qemu_vs_rxe.sh) takes the medians.  The last line
# is "QVR-RESULT: PASS" or "QVR-RESULT: FAIL".
. /lib.sh
guest_marker QVR
cd /tmp
echo "QVR-GUEST: $(uname -r), $(nproc) cpu(s)"
backends=$(cat /backends)

# ---- the module
insmod /rdma_uabi.ko && [ -c /dev/rdma_uabi ] || { echo "QVR-FAIL: insmod rdma_uabi.ko"; fail=1; finish; }
guest_insmod /modules || fail=1
ip link set lo up
ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || fail=1
U="/qvr/uabi --backend kernel"
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu UABI_VERBS_LIB=/qvr/libibverbs.so.1 \
	UABI_UMAD_LIB= UABI_RDMACM_LIB=

# ---- rxe0 and kroce0 on eth0 (qemu's user-mode NIC; nothing leaves the
# guest), one at a time.  on=rxe|kroce: which is up.
on=""
rxe_up() {
	[ "$on" = rxe ] && return 0
	kroce_down
	grep -q '^rdma_rxe ' /proc/modules || insmod "$(grep '/rdma_rxe.ko' /modules)" || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	guest_uverbs
	# The RoCE v2 GID of 10.0.2.15.
	gidx=$(guest_rxe_gid rxe0 0000:0000:0000:0000:0000:ffff:0a00:020f)
	[ -n "$gidx" ] || { echo "QVR-FAIL: no RoCE v2 GID for 10.0.2.15 on rxe0"; return 1; }
	on=rxe
}
rxe_down() {
	[ "$on" = rxe ] || return 0
	rdma link del rxe0 && rmmod rdma_rxe || { echo "QVR-FAIL: rxe0 does not go"; return 1; }
	on=""
}
kroce_up() {
	[ "$on" = kroce ] && return 0
	rxe_down
	$U link add kroce0 netdev eth0 || return 1
	# The RoCE v2 GID of 10.0.2.15, as ibv_devinfo shows it.
	kgidx=$($U run -- ibv_devinfo -v -d kroce0 |
		sed -n 's/^[[:space:]]*GID\[ *\([0-9]*\)\]:.*[:[:space:]]10\.0\.2\.15, RoCE v2$/\1/p' | head -1)
	[ -n "$kgidx" ] || { echo "QVR-FAIL: no RoCE v2 GID for 10.0.2.15 on kroce0"; $U link; return 1; }
	$U link | grep -q "^link kroce0/.* receives 10.0.2.15:4791" ||
		{ echo "QVR-FAIL: kroce0 does not receive at 10.0.2.15:4791"; $U link; return 1; }
	on=kroce
}
kroce_down() {
	[ "$on" = kroce ] || return 0
	$U link del kroce0 || { echo "QVR-FAIL: uabi link del kroce0"; return 1; }
	on=""
}
# What the module's device received and dropped, as `uabi link` counts.
kroce_counts() {
	$U link | sed -n 's/^link kroce0\/.* relayed \([0-9]*\) dropped \([0-9]*\).*/\1 \2/p'
}
rxe_up && echo "QVR-SETUP: rdma_uabi.ko loaded, rxe0 on eth0, RoCE v2 GID index $gidx" ||
	{ fail=1; finish; }
case " $backends " in
*" kroce "*)
	kroce_up && echo "QVR-SETUP: kroce0 on eth0, RoCE v2 GID index $kgidx" || { fail=1; finish; } ;;
esac

# ---- perftest
rounds=$(cat /rounds)
port=26100
# run BACKEND TEST ROUND PROG ARGS...: server, then client to 127.0.0.1.
run() {
	be=$1 test=$2 round=$3
	shift 3
	port=$((port + 1))
	case $be in
	module) set -- $U run -- "$@" -d uabi_sw0 -p $port ;;
	rxe) rxe_up || { fail=1; return; }
		set -- "$@" -d rxe0 -x "$gidx" -p $port ;;
	kroce) kroce_up || { fail=1; return; }
		set -- env UABI_WIRE_FORCE=1 $U run -- "$@" -d kroce0 -x "$kgidx" -p $port
		before=$(kroce_counts) ;;
	esac
	timeout 600 "$@" >/tmp/srv.log 2>&1 &
	spid=$!
	sleep 1
	guest_retry 120 "Couldn't connect|Unable to init the socket" /tmp/cli.log \
		timeout 600 "$@" 127.0.0.1
	crc=$?
	wait $spid
	src=$?
	echo "QVR-ROW: $be $test $round"
	# The result rows: size, iterations, then numbers.
	# (inf or 0 when perftest could not calibrate its cycle counter.)
	grep -E '^ *[0-9]+ +[0-9]+ +[0-9a-z.-]+' /tmp/cli.log || echo "(no result row)"
	echo "QVR-STATUS: $be $test $round server=$src client=$crc"
	# On the wire: the datagrams kroce0 relayed (and dropped) in this run.
	if [ $be = kroce ]; then
		set -- $before $(kroce_counts)
		echo "QVR-KROCE: $test $round relayed $(($3 - $1)) dropped $(($4 - $2))"
		[ $(($3 - $1)) -gt 0 ] || { echo "QVR-FAIL: nothing went over kroce0's wire"; fail=1; }
	fi
	# The client's whole output, for the record.
	sed 's/^/client| /' /tmp/cli.log
	if [ $src != 0 ] || [ $crc != 0 ]; then
		fail=1
		tail -n 15 /tmp/srv.log
	fi
}
bw_args=$(cat /bw.args)
lat_args=$(cat /lat.args)
# Each round alternates the order: forwards, then backwards.
rev=""
for be in $backends; do rev="$be $rev"; done
r=1
while [ $r -le "$rounds" ]; do
	if [ $((r % 2)) = 1 ]; then order=$backends; else order=$rev; fi
	for be in $order; do run $be write_bw $r ib_write_bw -F $bw_args; done
	for be in $order; do run $be send_lat $r ib_send_lat -F $lat_args; done
	r=$((r + 1))
done
$U link
kroce_down
dmesg | grep -iE "rxe|uabi|bug|warn|oops" | tail -20
finish
