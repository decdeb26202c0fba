#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# /init of the guest of tests/wire/run-rxe.sh (busybox): rxe0 on eth0 at
# 10.77.0.2, then Debian's ibv_rc_pingpong against the host's wire engine
# at 10.77.0.1, as server and as client for each size.  Prints
# "UABI-RXE-STEP: name PASS|FAIL" lines and a last "UABI-RXE-RESULT".
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
fail=0
step() {
	echo "UABI-RXE-STEP: $1 $2"
	[ "$2" = PASS ] || fail=1
}
finish() {
	[ $fail = 0 ] && echo "UABI-RXE-RESULT: PASS" || echo "UABI-RXE-RESULT: FAIL"
	poweroff -f
}

ok=1
for ko in $(cat /modules); do
	insmod "$ko" || { echo "insmod $ko failed"; ok=0; }
done
ip link set lo up
ip link set eth0 up && ip addr add 10.77.0.2/24 dev eth0 || ok=0
rdma link add rxe0 type rxe netdev eth0 || ok=0
mkdir -p /dev/infiniband
for d in /sys/class/infiniband_verbs/uverbs*; do
	[ -e "$d/dev" ] || continue
	mknod "/dev/infiniband/${d##*/}" c $(tr ':' ' ' <"$d/dev")
done
# The GID of 10.77.0.2 for RoCE v2.
gidx=""
for t in /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/*; do
	i=${t##*/}
	g=$(cat /sys/class/infiniband/rxe0/ports/1/gids/$i 2>/dev/null)
	[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
	[ "$g" = "0000:0000:0000:0000:0000:ffff:0a4d:0002" ] && gidx=$i && break
done
if [ $ok = 1 ] && [ -n "$gidx" ]; then
	step rxe-setup PASS
else
	ip addr; ls /sys/class/infiniband 2>&1
	step rxe-setup FAIL
	finish
fi
echo "rxe0: RoCE v2 GID index $gidx"

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
	tries=0
	until timeout 240 ibv_rc_pingpong -d rxe0 -g "$gidx" -s "$size" -n "$iters" 10.77.0.1 >/tmp/pp.log 2>&1; do
		tries=$((tries + 1))
		grep -q "Couldn't connect" /tmp/pp.log && [ $tries -lt 300 ] || break
		sleep 0.5
	done
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
		tries=0
		while :; do
			timeout 240 $prog -d rxe0 $args 10.77.0.1 >/tmp/st.log 2>&1
			rc=$?
			[ $rc = 0 ] && break
			grep -qE "Couldn't connect|Unable to init the socket" /tmp/st.log && [ $tries -lt 300 ] || break
			tries=$((tries + 1))
			sleep 0.5
		done
		if [ $rc = 0 ]; then
			step "stack-client-$name" PASS
		else
			step "stack-client-$name" FAIL
		fi
		cat /tmp/st.log
	done </steps
fi
dmesg | grep -iE "rxe|bug|warn" | tail -20
finish
