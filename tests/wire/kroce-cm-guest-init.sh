#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of tests/wire/run-kroce-cm.sh (busybox): loads
# rdma_uabi.ko, adds the module's own RoCE device kroce0 on eth0
# (10.91.0.2), then runs Debian's unmodified rping under
# `uabi --backend kernel run` (librdmacm's file served by the ucma shim)
# against the host's uabid at 10.91.0.1: as server first (the host's
# client connects once we print UABI-KCM-LISTEN-rping, retrying while the
# listener is not up yet: REJECTED), then as client (retrying while the
# host's listener is not up: REJECTED); the same with rdma_xserver and
# rdma_xclient in their XRC mode, ucmatose, udaddy, rdma_server/rdma_client,
# rstream and riostream, and as client only cmtime; mckey to 239.1.2.3
# receiving, then sending; perftest's ib_send_bw, ib_write_lat and
# ib_read_bw -R as server, then as client (each pair tried again as the
# host says: the host's word comes on a TCP connection to our port 27099,
# busybox nc).
# Then the same rpings over IPv6.  Then, while the host floods QP1,
# the device is deleted and added again 10 times and the module unloads
# with the device still there.  Prints "UABI-KCM-STEP: name PASS|FAIL", each program's
# output between "UABI-OUT-BEGIN name" and "UABI-OUT-END name", and a
# last "UABI-KCM-RESULT".
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
fail=0
step() {
	echo "UABI-KCM-STEP: $1 $2"
	[ "$2" = PASS ] || fail=1
}
show() {
	echo "UABI-OUT-BEGIN $1"
	cat "$2"
	echo "UABI-OUT-END $1"
}
finish() {
	[ $fail = 0 ] && echo "UABI-KCM-RESULT: PASS" || echo "UABI-KCM-RESULT: FAIL"
	poweroff -f
}
export UABI_VERBS_LIB=/kcm/lib/libibverbs.so.1 UABI_UMAD_LIB=/kcm/lib/libuabi_umad.so
export UABI_RDMACM_LIB=/kcm/lib/libuabi_rdmacm.so
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
U="/kcm/uabi --backend kernel"

ok=1
for ko in $(cat /modules); do
	insmod "$ko" || { echo "insmod $ko failed"; ok=0; }
done
dmesg -c >/tmp/boot.dmesg	# the boot's messages: not judged below
insmod /rdma_uabi.ko || ok=0
ip link set lo up
ip link set eth0 up && ip addr add 10.91.0.2/24 dev eth0 || ok=0
$U link add kroce0 netdev eth0 || ok=0
$U link | grep -q "link kroce0/1 state ACTIVE .*receives 10.91.0.2:4791" || ok=0
$U link
[ $ok = 1 ] && step setup PASS || { step setup FAIL; finish; }

# Each program runs twice: the guest serves (the host connects once we
# print UABI-KCM-LISTEN-NAME), then connects to the host's server (retried
# while it is not up: REJECTED, UNREACHABLE or "Connection refused").
# kserve NAME PATTERN CMD... / kconnect NAME PATTERN CMD...: PASS when CMD
# ends with 0 and, if PATTERN is not empty, prints a line matching it.
kserve() {
	name=$1 pat=$2
	shift 2
	echo "UABI-KCM-LISTEN-$name"
	if timeout 300 $U run -- "$@" >/tmp/out 2>&1 && { [ -z "$pat" ] || grep -qE "$pat" /tmp/out; }; then
		step "$name-server" PASS
	else
		step "$name-server" FAIL
	fi
	show "$name-server" /tmp/out
}
kconnect() {
	name=$1 pat=$2
	shift 2
	tries=0
	while :; do
		timeout 300 $U run -- "$@" >/tmp/out 2>&1
		rc=$?
		[ $rc = 0 ] && break
		grep -qE "refused|REJECTED|UNREACHABLE" /tmp/out && [ $tries -lt 200 ] || break
		tries=$((tries + 1))
		sleep 0.5
	done
	# (cmtime exits 0 whatever its connections met: each that did not go
	# as it should prints its event, "event: ...")
	if [ $rc = 0 ] && { [ -z "$pat" ] || grep -qE "$pat" /tmp/out; } && ! grep -q '^event: ' /tmp/out; then
		step "$name-client" PASS
	else
		step "$name-client" FAIL
	fi
	show "$name-client" /tmp/out
}
kserve rping "" /kcm/rping -s -a 10.91.0.2 -p 27001 -v -C 10
kconnect rping "" /kcm/rping -c -a 10.91.0.1 -p 27002 -v -C 10

# (the host's list is the same, in the same order: run-kroce-cm.sh)
# XRC: rdma_xserver/rdma_xclient -c x (the client's XRC_SEND QP to the
# server's XRC_RECV one; the REQ says XRC, the REP carries the target QPN).
if [ -x /kcm/rdma_xserver ]; then
	kserve xrc "rdma_xserver: end 0" /kcm/rdma_xserver -c x -p 27011
	kconnect xrc "rdma_xclient: end 0" /kcm/rdma_xclient -c x -s 10.91.0.1 -p 27012
fi
if [ -x /kcm/ucmatose ]; then
	kserve ucmatose "" /kcm/ucmatose -p 27013 -c 2 -C 10
	# TOS 0x68: the module's CM sends its MADs with it (run-kroce-cm.sh
	# looks for them in its capture)
	kconnect ucmatose "" /kcm/ucmatose -s 10.91.0.1 -p 27014 -c 2 -C 10 -t 0x68
fi
if [ -x /kcm/udaddy ]; then	# UD: SIDR REQ/REP, 10 datagrams each way per connection
	kserve udaddy "" /kcm/udaddy -c 1 -C 10
	kconnect udaddy "" /kcm/udaddy -s 10.91.0.1 -c 1 -C 10
fi
if [ -x /kcm/rdma_server ]; then
	kserve rdma-server "rdma_server: end 0" /kcm/rdma_server -p 27015
	kconnect rdma-server "rdma_client: end 0" /kcm/rdma_client -s 10.91.0.1 -p 27016
fi
if [ -x /kcm/rstream ]; then	# rsockets: 20 x 64 KiB each way, verified
	kserve rstream "^custom +64k +20 " /kcm/rstream -p 27017 -T v -S 65536 -C 20
	kconnect rstream "^custom +64k +20 " /kcm/rstream -s 10.91.0.1 -p 27018 -T v -S 65536 -C 20
fi
if [ -x /kcm/riostream ]; then	# rsockets' RDMA-write I/O, the same
	kserve riostream "^custom +64k +20 " /kcm/riostream -p 27019 -T v -S 65536 -C 20
	kconnect riostream "^custom +64k +20 " /kcm/riostream -s 10.91.0.1 -p 27020 -T v -S 65536 -C 20
fi
# cmtime, the guest as client only: its server never ends by itself (the
# host stops its own once this step is reported).
if [ -x /kcm/cmtime ]; then	# 50 connections set up and torn down, step by step
	kconnect cmtime "^connect +:" /kcm/cmtime -s 10.91.0.1 -p 27021 -c 50
fi

# hear: the host's next word (its `tell`, run-kroce-cm.sh), one TCP
# connection to our port 27099; nothing within 300 s: empty.
hear() {
	timeout 300 nc -l -p 27099 </dev/null | tr -d '\r\n'
}
# mckey (UD multicast to 239.1.2.3 through the CM, each side bound to its
# own device's address; tests/cm/mckey-check.sh judges its output): we
# receive 20 datagrams from the host's sender (it sends once we print
# UABI-KCM-LISTEN-mckey: joined, the QP attached), then send 20 to the
# host's receiver once the host tells us it joined.  The group's
# datagrams come to mckey's own socket on the group (docs/wire.md, "UD
# multicast"), not through the module.
if [ -x /kcm/mckey ]; then
	. /kcm/mckey-check.sh
	timeout 60 $U run -- /kcm/stdbuf -oL /kcm/mckey -m 239.1.2.3 -b 10.91.0.2 -C 20 \
		>/tmp/out 2>&1 &
	pid=$!
	i=0
	while [ $i -lt 300 ] && kill -0 $pid 2>/dev/null && ! grep -q 'mckey: joined' /tmp/out; do
		i=$((i + 1))
		sleep 0.2
	done
	echo "UABI-KCM-LISTEN-mckey"
	wait $pid
	rc=$?
	if [ $rc = 0 ] && mckey_ok receiver /tmp/out ::ffff:239.1.2.3; then
		step mckey-receiver PASS
	else
		step mckey-receiver FAIL
	fi
	show mckey-receiver /tmp/out
	if [ "$(hear)" = joined ] &&
		timeout 60 $U run -- /kcm/mckey -m 239.1.2.3 -b 10.91.0.2 -s -C 20 >/tmp/out 2>&1 &&
		mckey_ok sender /tmp/out ::ffff:239.1.2.3; then
		step mckey-sender PASS
	else
		step mckey-sender FAIL
	fi
	show mckey-sender /tmp/out
fi

# perftest over rdma_cm (-R), we serve and the host connects: a run is an
# attempt (UABI-KCM-LISTEN-NAME-N, then UABI-KCM-TRY: NAME-server N STATUS
# once our server ended).  The host tells us when its client ended
# ("ended": a server that has not ended 10 s later is stopped) or died
# ("died": the server is stopped at once; as when perftest's own race
# refused its second connection, it would wait for it until its timeout).
# Then the host judges the attempt with its client's output and ours and
# tells us "again" (a new attempt, both sides new), "pass" or "fail"
# (run-kroce-cm.sh says why).  Held ACKs off, as in
# tests/cm/run-cm-two-hosts.sh.
kperf() {
	name=$1
	shift
	n=1
	while :; do
		echo "UABI-KCM-LISTEN-$name-$n"
		UABI_WIRE_HOLD_ACKS=0 timeout 120 $U run -- "$@" >/tmp/out 2>&1 &
		pid=$!
		i=0
		[ "$(hear)" = died ] && i=50
		while [ $i -lt 50 ] && kill -0 $pid 2>/dev/null; do
			i=$((i + 1))
			sleep 0.2
		done
		kill $pid 2>/dev/null	# (busybox's timeout execs the program: $pid is perftest)
		wait $pid
		echo "UABI-KCM-TRY: $name-server $n $?"
		show "$name-server-$n" /tmp/out
		verdict=$(hear)
		[ "$verdict" = again ] || break
		n=$((n + 1))
	done
	[ "$verdict" = pass ] && step "$name-server" PASS || step "$name-server" FAIL
}
# kperf_client NAME CMD...: the same, the host serving: an attempt starts
# when the host tells us "serving-PORT" (a new port each time); our
# client connects again only while its first connection is refused (the
# server not up yet: at most 60 times, a second apart); UABI-KCM-TRY:
# NAME-client N STATUS once it ended.
kperf_client() {
	name=$1
	shift
	n=1
	while :; do
		verdict=$(hear)
		case $verdict in serving-*) ;; *) break ;; esac
		tries=0
		while :; do
			UABI_WIRE_HOLD_ACKS=0 timeout 60 $U run -- "$@" -p "${verdict#serving-}" >/tmp/out 2>&1
			rc=$?
			[ $rc != 0 ] && grep -q 'Unable to init the socket connection' /tmp/out &&
				[ $tries -lt 60 ] || break
			tries=$((tries + 1))
			sleep 1
		done
		echo "UABI-KCM-TRY: $name-client $n $rc"
		show "$name-client-$n" /tmp/out
		verdict=$(hear)
		[ "$verdict" = again ] || break
		n=$((n + 1))
	done
	[ "$verdict" = pass ] && step "$name-client" PASS || step "$name-client" FAIL
}
if [ -x /kcm/ib_send_bw ]; then
	kperf ib_send_bw /kcm/ib_send_bw -R -F -n 200 -p 27031
	kperf_client ib_send_bw /kcm/ib_send_bw -R -F -n 200 10.91.0.1
fi
if [ -x /kcm/ib_write_lat ]; then
	kperf ib_write_lat /kcm/ib_write_lat -R -F -n 200 -p 27032
	kperf_client ib_write_lat /kcm/ib_write_lat -R -F -n 200 10.91.0.1
fi
if [ -x /kcm/ib_read_bw ]; then
	kperf ib_read_bw /kcm/ib_read_bw -R -F -n 200 -p 27033
	kperf_client ib_read_bw /kcm/ib_read_bw -R -F -n 200 10.91.0.1
fi

# IPv6 while IPv4 stays: fd91::2 comes beside 10.91.0.2 (the device
# keeps receiving at 10.91.0.2, its first address, and once duplicate
# address detection is over the module has a socket at fd91::2 too, where
# its CM answers and the QPs receive), and the same two runs against the
# host's fd91::1; then fd91::2 goes.
await() {	# what, then a pattern `uabi link` must show for kroce0 (20 s)
	i=0
	while [ $i -lt 100 ]; do
		$U link | grep "^link kroce0/" | grep -qE "$2" && return 0
		i=$((i + 1))
		sleep 0.2
	done
	$U link
	return 1
}
ip -6 addr add fd91::2/64 dev eth0	# (busybox: no nodad; the module binds after DAD)
i=0
while [ $i -lt 100 ] && ! ip -6 addr show dev eth0 | grep "fd91::2/" | grep -qv tentative; do
	i=$((i + 1))
	sleep 0.2
done
sleep 1.5	# (the module tries an address it could not bind again every second)
if await v6 "receives 10.91.0.2:4791"; then step v6-address PASS; else step v6-address FAIL; fi
kserve rping6 "" /kcm/rping -s -a fd91::2 -p 27003 -v -C 10
kconnect rping6 "" /kcm/rping -c -a fd91::1 -p 27004 -v -C 10
ip -6 addr del fd91::2/64 dev eth0
if await v4 "receives 10.91.0.2:4791"; then step v4-back PASS; else step v4-back FAIL; fi

# What the module counted so far (run-kroce-cm.sh reads the counts up to
# UABI-KCM-COUNTS: adding the device again below starts them anew).
$U link
echo "UABI-KCM-COUNTS"

# A client killed half-way through connecting (raw ucma commands that
# SIGKILL themselves once the host's REP is in, then right after the REQ):
# the module's CM sends the REJ as the dead program's ID goes; the host's
# rping server must see it (run-kroce-cm.sh judges that side).
for when in rep req; do
	[ $when = rep ] && hport=27040 || hport=27041
	tries=0
	while :; do
		timeout 30 $U run -- /kcm/ucma_half_connect $hport $when 10.91.0.1 >/tmp/half.out 2>&1
		hrc=$?
		grep -q '^event 8 (status 8)' /tmp/half.out && [ $tries -lt 60 ] || break
		tries=$((tries + 1))
		sleep 0.5
	done
	if [ $hrc = 137 ] && { [ $when = req ] || grep -qx REP /tmp/half.out; }; then
		step "half-$when-client" PASS
	else
		step "half-$when-client" FAIL
	fi
	show "half-$when-client" /tmp/half.out
done

# DEVICE_REMOVAL: an rping client connected through kroce0 to the host's
# server (run-kroce-cm.sh), pinging without end; `uabi link del kroce0`
# tells its ID DEVICE_REMOVAL, rping says so and exits, its file closes
# (its ID goes, the DREQ with it) and the device is deleted within the
# wait.  Then it comes back for what follows.
tries=0
while [ $tries -lt 60 ]; do
	timeout 120 $U run -- /kcm/rping -c -a 10.91.0.1 -p 27030 >/tmp/removal.out 2>&1 &
	rp=$!
	sleep 2
	kill -0 $rp 2>/dev/null && break
	wait $rp
	tries=$((tries + 1))
done
if kill -0 $rp 2>/dev/null; then
	UABI_LINK_DEL_WAIT=20 $U link del kroce0 2>/tmp/removal.del
	drc=$?
	wait $rp
	rrc=$?
	if [ $drc = 0 ] && [ $rrc != 124 ] && grep -qi "device removal" /tmp/removal.out &&
		grep -q "told DEVICE_REMOVAL" /tmp/removal.del && ! $U link | grep -q "^link kroce0/"; then
		step removal PASS
	else
		step removal FAIL
	fi
	show removal-client /tmp/removal.out
	show removal-del /tmp/removal.del
else
	step removal FAIL
	show removal-client /tmp/removal.out
fi
$U link | grep -q "^link kroce0/" || $U link add kroce0 netdev eth0 >/dev/null || step removal-add-again FAIL
await added "receives 10.91.0.2:4791" || step removal-add-again FAIL

# What the module counted.  Then the device goes and comes back 10 times
# while the host floods its QP1 (from UABI-KCM-FLOOD until
# UABI-KCM-FLOOD-END), and the module unloads with the device still
# there: datagrams queued for the CM or in flight meet every teardown.
$U link
echo "UABI-KCM-FLOOD"
sleep 1
ok=1 i=0
while [ $i -lt 10 ]; do
	$U link del kroce0 || ok=0
	$U link add kroce0 netdev eth0 >/dev/null || ok=0
	sleep 0.2
	i=$((i + 1))
done
[ $ok = 1 ] && step link-del-add PASS || step link-del-add FAIL
$U link | grep "^link kroce0/"
if rmmod rdma_uabi; then step rmmod PASS; else step rmmod FAIL; fi
echo "UABI-KCM-FLOOD-END"
dmesg | grep -iE "rdma_uabi|bug|warn|leak" | tail -20
if dmesg | grep -qiE "BUG|WARNING|leak|Oops"; then step dmesg FAIL; else step dmesg PASS; fi
finish
