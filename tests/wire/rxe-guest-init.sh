#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of tests/wire/run-rxe.sh (busybox): rxe0 on eth0 at
# 10.77.0.2, then Debian's ibv_rc_pingpong against the host's wire engine
# at 10.77.0.1, as server and as client for each size.  Prints
# "UABI-RXE-STEP: name PASS|FAIL" lines and a last "UABI-RXE-RESULT".
. /lib.sh
guest_marker UABI-RXE

ok=1
guest_insmod /modules || ok=0
guest_rxe 10.77.0.2/24 || ok=0
# The GID of 10.77.0.2 for RoCE v2.
gidx=$(guest_rxe_gid rxe0 0000:0000:0000:0000:0000:ffff:0a4d:0002)
if [ $ok = 1 ] && [ -n "$gidx" ]; then
	step rxe-setup PASS
else
	ip addr; ls /sys/class/infiniband 2>&1
	step rxe-setup FAIL
	finish
fi
echo "rxe0: RoCE v2 GID index $gidx"
echo "virtio_net napi_tx: $(cat /sys/module/virtio_net/parameters/napi_tx)"

iters=$(cat /iters)
for size in $(cat /sizes); do
	# Server first: the host's client keeps trying until we listen.
	if timeout 240 ibv_rc_pingpong -d rxe0 -g "$gidx" -s "$size" -n "$iters" >/tmp/pp.log 2>&1; then
		step "server-$size" PASS
	else
		step "server-$size" FAIL
	fi
	cat /tmp/pp.log
	# Then the client, until the host's server listens.
	guest_retry 300 "Couldn't connect" /tmp/pp.log \
		timeout 240 ibv_rc_pingpong -d rxe0 -g "$gidx" -s "$size" -n "$iters" 10.77.0.1
	if grep -q "iters in" /tmp/pp.log; then
		step "client-$size" PASS
	else
		step "client-$size" FAIL
	fi
	cat /tmp/pp.log
done
# Unmodified programs against the host's full stack (run-rxe.sh --stack):
# each line of /steps is "NAME PROGRAM ARGS..." with GIDX for the GID
# index; the guest serves first (the host's client retries until it
# listens), then connects to the host's server (retrying until it listens).
if [ -s /steps ]; then
	while read -r name prog args; do
		[ -n "$name" ] || continue
		args=$(echo "$args" | sed "s/GIDX/$gidx/g")
		if timeout 240 $prog -d rxe0 $args >/tmp/st.log 2>&1; then
			step "stack-server-$name" PASS
		else
			step "stack-server-$name" FAIL
		fi
		cat /tmp/st.log
		if guest_retry 300 "Couldn't connect|Unable to init the socket" /tmp/st.log \
			timeout 240 $prog -d rxe0 $args 10.77.0.1; then
			step "stack-client-$name" PASS
		else
			step "stack-client-$name" FAIL
		fi
		cat /tmp/st.log
	done </steps
fi
dmesg | grep -iE "rxe|bug|warn" | tail -20
finish
