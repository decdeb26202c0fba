# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# shellcheck shell=sh
#
# What the /init scripts of the qemu guests share (busybox sh; packed as
# /lib.sh by scripts/qemu-lib.sh's qemu_rfs_init, sourced first thing by
# each /init): the console, busybox's applets, /proc, /sys and a /tmp; the
# PASS/FAIL step lines the host parses; kernel modules in load order;
# Linux's rxe on a NIC.

# The guest's first moments: /dev, the console as stdin/stdout/stderr,
# busybox's applets in /bin, /proc, /sys and a tmpfs on /tmp.
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec 0</dev/console 1>/dev/console 2>&1
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp

# guest_marker PREFIX: step and finish print "PREFIX-STEP: NAME VERDICT"
# and, last, "PREFIX-RESULT: PASS|FAIL" (then power off).
fail=0
guest_marker() {
	marker=$1
}
step() {
	echo "$marker-STEP: $1 $2"
	[ "$2" = PASS ] || fail=1
}
finish() {
	[ $fail = 0 ] && echo "$marker-RESULT: PASS" || echo "$marker-RESULT: FAIL"
	sync
	poweroff -f
}

# guest_insmod LIST: insmod each module of the file LIST, in order, a line
# each: its path, then its parameters (qemu_modparam); false if one failed
# (each failure printed).
guest_insmod() {
	ok_=0
	while read -r ko args; do
		[ -n "$ko" ] || continue
		insmod "$ko" $args || { echo "insmod $ko $args failed"; ok_=1; }
	done <"$1"
	return $ok_
}

# guest_uverbs: the /dev/infiniband nodes of the uverbs devices (and
# rdma_cm's) that are not there yet.
guest_uverbs() {
	mkdir -p /dev/infiniband
	for d in /sys/class/infiniband_verbs/uverbs* /sys/class/misc/rdma_cm; do
		[ -e "$d/dev" ] && [ ! -e "/dev/infiniband/${d##*/}" ] || continue
		mknod "/dev/infiniband/${d##*/}" c $(tr ':' ' ' <"$d/dev")
	done
}

# guest_rxe_gid DEV GID: prints the index of GID (sysfs form, e.g.
# 0000:0000:0000:0000:0000:ffff:0a00:020f) among DEV's RoCE v2 GIDs;
# nothing if it has none.
guest_rxe_gid() {
	for t in /sys/class/infiniband/$1/ports/1/gid_attrs/types/*; do
		i=${t##*/}
		[ "$(cat "$t" 2>/dev/null)" = "RoCE v2" ] || continue
		[ "$(cat /sys/class/infiniband/$1/ports/1/gids/$i 2>/dev/null)" = "$2" ] && echo "$i" && return
	done
}

# guest_retry TRIES PATTERN OUT CMD...: runs CMD (output to the file OUT)
# until it succeeds, or fails with output that does not match the extended
# regular expression PATTERN (the peer is not listening yet), or TRIES
# retries were made, half a second apart; returns CMD's last status.
guest_retry() {
	tries_=$1 pat_=$2 out_=$3
	shift 3
	while :; do
		"$@" >"$out_" 2>&1
		rc_=$?
		[ $rc_ = 0 ] && return 0
		grep -qE "$pat_" "$out_" && [ $tries_ -gt 0 ] || return $rc_
		tries_=$((tries_ - 1))
		sleep 0.5
	done
}

# guest_rxe ADDR/PREFIX: lo up, eth0 up at ADDR, rxe0 on eth0 and its
# /dev/infiniband node; false if a step failed.
guest_rxe() {
	ip link set lo up
	ip link set eth0 up && ip addr add "$1" dev eth0 &&
		rdma link add rxe0 type rxe netdev eth0 || return 1
	guest_uverbs
}
