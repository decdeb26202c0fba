#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of tests/wire/run-kroce.sh (busybox): loads
# rdma_uabi.ko, adds the module's own RoCE device kroce0 on eth0
# (10.78.0.2) with `uabi link add`, checks what ibv_devinfo shows of it and
# the relay's rules (kroce_relay), then runs each step of /steps under
# `uabi run` against the host's uabid (10.78.0.1): server first, then
# client.  Prints "UABI-KROCE-STEP: name PASS|FAIL" lines and a last
# "UABI-KROCE-RESULT".
. /lib.sh
guest_marker UABI-KROCE
# What `uabi run` needs: the drop-in library, no umad or rdmacm shim.
export UABI_VERBS_LIB=/kroce/lib/libibverbs.so.1 UABI_UMAD_LIB= UABI_RDMACM_LIB=
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
U="/kroce/uabi --backend kernel"

ok=1
guest_insmod /modules || ok=0
dmesg -c >/tmp/boot.dmesg
insmod /rdma_uabi.ko || ok=0
ip link set lo up
ip link set eth0 up && ip addr add 10.78.0.2/24 dev eth0 || ok=0
$U link add kroce0 netdev eth0 || ok=0
$U link
$U link | grep -q "link kroce0/1 state ACTIVE .*netdev eth0 .*receives 10.78.0.2:4791" || ok=0
[ $ok = 1 ] && step setup PASS || { step setup FAIL; finish; }

# ibv_devices and ibv_devinfo, unmodified, see it: Ethernet, RoCE v2 GIDs.
$U run -- ibv_devices >/tmp/dev.log 2>&1
cat /tmp/dev.log
$U run -- ibv_devinfo -v -d kroce0 >/tmp/info.log 2>&1
grep -E "link_layer|GID\[|state:|active_mtu" /tmp/info.log
if grep -q kroce0 /tmp/dev.log && grep -q "link_layer:.*Ethernet" /tmp/info.log &&
	grep "GID\[ *0\]" /tmp/info.log | grep -q "10.78.0.2.*RoCE v2"; then
	step devinfo PASS
else
	cat /tmp/info.log
	step devinfo FAIL
fi

# The relay's rules, and uid 65534 against them.
if timeout 120 /kroce/kroce_relay kroce0 eth0 10.78.0.2; then
	step relay PASS
else
	step relay FAIL
fi

# Unmodified programs against the host's uabid: each line of /steps is
# "NAME PROGRAM ARGS..."; the guest serves first (the host's client
# retries until it listens), then connects to the host's server.
# Each program traces its packets (UABI_WIRE_TRACE); a failed step's trace
# goes to the console, for the host's log.
traced() {	# step name, then PASS or FAIL
	step "$1" "$2"
	[ "$2" = PASS ] && return
	echo "UABI-KROCE-TRACE-BEGIN $1"
	tail -n 60 /tmp/trace.log
	echo "UABI-KROCE-TRACE-END $1"
	$U link | grep "^link kroce0/"
}
while read -r name prog args; do
	[ -n "$name" ] || continue
	rm -f /tmp/trace.log
	if UABI_WIRE_TRACE=/tmp/trace.log timeout 240 $U run -- $prog -d kroce0 $args >/tmp/st.log 2>&1; then
		traced "server-$name" PASS
	else
		traced "server-$name" FAIL
	fi
	cat /tmp/st.log
	rm -f /tmp/trace.log
	if guest_retry 300 "Couldn't connect|Unable to init the socket" /tmp/st.log \
		env UABI_WIRE_TRACE=/tmp/trace.log timeout 240 $U run -- $prog -d kroce0 $args 10.78.0.1; then
		traced "client-$name" PASS
	else
		traced "client-$name" FAIL
	fi
	cat /tmp/st.log
done </steps

# The link follows the interface (the notifiers): an address that goes
# and comes moves where the module receives, carrier moves the port
# state.  Each awaited for at most 10 s (the notifiers' work is async).
await() {	# what, then a pattern `uabi link` must show for kroce0
	what=$1 pattern=$2 i=0
	while [ $i -lt 50 ]; do
		$U link | grep "^link kroce0/" | grep -qE "$pattern" && { step "$what" PASS; return; }
		i=$((i + 1))
		sleep 0.2
	done
	$U link
	step "$what" FAIL
}
# (Another subnet: deleting a primary address deletes the secondary
# addresses of its subnet too.)
ip addr add 10.79.0.3/24 dev eth0
ip addr del 10.78.0.2/24 dev eth0
await address-moves "gids 2 receives 10.79.0.3:4791"
$U run -- ibv_devinfo -v -d kroce0 | grep "GID\[ *0\]"
ip link set eth0 down
await carrier-down "state DOWN .*receives 10.79.0.3:4791"
ip link set eth0 up
await carrier-up "state ACTIVE .*receives 10.79.0.3:4791"
ip addr del 10.79.0.3/24 dev eth0
await no-ipv4 "receives \[fe80::5054:ff:fe78:2\]:4791"
if timeout 60 /kroce/kroce_relay --v6 kroce0 eth0 fe80::5054:ff:fe78:2; then
	step relay-ipv6 PASS
else
	step relay-ipv6 FAIL
fi
ip addr add 10.78.0.2/24 dev eth0
await address-back "receives 10.78.0.2:4791"

# Linux's rxe beside the module in one guest (docs/wire.md): what each
# one's socket at port 4791 leaves the other.  Reported, not judged.
rxe_load() {
	for ko in $(cat /rxe-modules); do
		grep -q "^$(basename "$ko" .ko) " /proc/modules && continue
		insmod "$ko" >/tmp/ins.log 2>&1 || echo "insmod ${ko##*/}: $(cat /tmp/ins.log)" >&2
	done
	grep -c '^rdma_rxe ' /proc/modules
}
[ -s /rxe-modules ] &&
	echo "UABI-KROCE-NOTE: rdma_rxe loads while kroce0 receives at 10.78.0.2:4791: $(rxe_load)"

# The module's count of what it received, then the device goes.
$U link
if $U link del kroce0 && ! $U link | grep -q kroce0; then
	step link-del PASS
else
	step link-del FAIL
fi
if [ -s /rxe-modules ]; then
	echo "UABI-KROCE-NOTE: rdma_rxe loads without a device of the module: $(rxe_load)"
	rdma link add rxe0 type rxe netdev eth0 >/tmp/rxe.log 2>&1
	echo "UABI-KROCE-NOTE: rdma link add rxe0 type rxe netdev eth0: exit $? $(cat /tmp/rxe.log)"
	$U link add kroce1 netdev eth0 >/tmp/k1.log 2>&1
	echo "UABI-KROCE-NOTE: uabi link add kroce1 netdev eth0 with rxe0 there: exit $? $(grep kroce1 /tmp/k1.log)"
	$U link del kroce1
	rdma link del rxe0 2>/dev/null
	for m in rdma_rxe ib_uverbs ib_core; do rmmod $m 2>/dev/null; done
	dmesg | grep -i rxe | tail -5
fi
if rmmod rdma_uabi; then
	step rmmod PASS
else
	step rmmod FAIL
fi
dmesg | grep -iE "rdma_uabi|bug|warn|leak" | tail -20
if dmesg | grep -qiE "BUG|WARNING|leak|Oops"; then
	step dmesg FAIL
else
	step dmesg PASS
fi
finish
