#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The connection manager across hosts on the in-process backend (docs/cm.md,
# "Across hosts"): two network namespaces joined by a veth pair (10.67.0.1
# and 10.67.0.2, fd67::1 and fd67::2; made and removed here), no uabid:
# each program runs under `uabi run --backend inproc` with
# UABI_LINKS=roce0:<its end>, so the process's own core has the RoCE
# device and the process's own wire endpoint carries its CM's MADs on
# QP1 (port 4791 of the device's addresses) and its QPs' data.
#
#   rping -v -C 10 each way (payload checked on both sides), the same
#   over IPv6, ucmatose (2 connections, a wildcard listener), udaddy (UD,
#   SIDR), and a
#   destination nobody answers (UNREACHABLE, -ETIMEDOUT, after the REQ's
#   retries: UABI_CM_RESPONSE_TIMEOUT=16 and UABI_CM_RETRIES=3 make them
#   ~1 s).
#
# Usage: run-cm-two-hosts-inproc.sh UABI_TOOL INPROC_LIB
set -uo pipefail
tool=$(realpath "$1")
inproc=$(realpath "$2")
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
for p in ip rping ucmatose udaddy timeout; do
	command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done

# UABI_TEST_NETNS_TAG: a word in the namespaces' names (several runs on
# one machine tell theirs apart).
tag=${UABI_TEST_NETNS_TAG:+$UABI_TEST_NETNS_TAG-}
A=hCa-$tag$$ B=hCb-$tag$$
log=$(mktemp -d /tmp/uabi-cm-inproc.XXXXXX)
cleanup() {
	for n in $A $B; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$log"
}
trap cleanup EXIT
ip netns add $A && ip netns add $B || { echo "FAIL: ip netns add"; exit 1; }
ip -n $A link add hCv1 type veth peer name hCv2 netns $B || { echo "FAIL: veth"; exit 1; }
ip -n $A addr add 10.67.0.1/24 dev hCv1 && ip -n $B addr add 10.67.0.2/24 dev hCv2
# IPv6 beside IPv4 (no DAD: usable at once, and bound by the endpoint
# when the program opens the device).
ip -n $A addr add fd67::1/64 dev hCv1 nodad && ip -n $B addr add fd67::2/64 dev hCv2 nodad
for n in $A $B; do
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$n" link set lo up
done
ip -n $A link set hCv1 up && ip -n $B link set hCv2 up

fails=0
fail() {
	echo "run-cm-two-hosts-inproc: $1: FAIL"
	shift
	for f in "$@"; do echo "--- $f"; tail -n 15 "$f"; done
	fails=$((fails + 1))
}
pass() { echo "run-cm-two-hosts-inproc: $*: PASS"; }

# on NS CMD...: CMD under `uabi run`, in-process, with the RoCE device on
# NS's end of the veth; short CM timeouts (2^16 * 4.096 us, 268 ms, and 3
# retries).
on() {
	local ns=$1 ifname=hCv1
	shift
	[[ $ns == "$B" ]] && ifname=hCv2
	ip netns exec "$ns" env UABI_BACKEND=inproc UABI_INPROC_LIB="$inproc" UABI_LINKS="roce0:$ifname" \
		UABI_CM_RESPONSE_TIMEOUT=16 UABI_CM_RETRIES=3 "$tool" run --backend inproc -- "$@"
}
# The lines rping -v prints for COUNT pings (rping.c's pattern).
rping_expect() {
	awk -v n="$1" -v prefix="$2" 'BEGIN {
		start = 65
		for (p = 0; p < n; p++) {
			s = sprintf("rdma-ping-%d: ", p); c = start
			while (length(s) < 63) { s = s sprintf("%c", c); c++; if (c > 122) c = 65 }
			print prefix s
			start++; if (start > 122) start = 65
		}
	}'
}
# rping_pair NAME SERVER-NS SERVER-ADDR CLIENT-NS PORT COUNT
rping_pair() {
	local name=$1 sns=$2 saddr=$3 cns=$4 port=$5 count=$6
	on "$sns" timeout 30 rping -s -a "$saddr" -p "$port" -v -C "$count" \
		>"$log/$name.server.out" 2>"$log/$name.server.err" &
	local spid=$! crc=1 try
	# the listener must be up before the client's REQ: a REJ (8) says
	# it is not yet, and the client tries again (bounded)
	for try in $(seq 40); do
		sleep 0.25
		on "$cns" timeout 30 rping -c -a "$saddr" -p "$port" -v -C "$count" \
			>"$log/$name.client.out" 2>"$log/$name.client.err"
		crc=$?
		((crc != 0)) && kill -0 $spid 2>/dev/null &&
			grep -q 'RDMA_CM_EVENT_REJECTED, error 8' "$log/$name.client.err" || break
	done
	wait $spid
	local src=$?
	if ((crc != 0 || src != 0)); then
		fail "$name (client $crc, server $src)" "$log/$name".*
		return
	fi
	if ! diff <(grep 'ping data: ' "$log/$name.client.out" | grep -v server) \
		<(rping_expect "$count" "ping data: ") >/dev/null ||
		! diff <(grep 'server ping data: ' "$log/$name.server.out") \
			<(rping_expect "$count" "server ping data: ") >/dev/null; then
		fail "$name: payload" "$log/$name".*
		return
	fi
	pass "$name ($count pings, payload checked on both sides)"
}

rping_pair rping_a_to_b $B 10.67.0.2 $A 25600 10
rping_pair rping_b_to_a $A 10.67.0.1 $B 25601 10
rping_pair rping6_a_to_b $B fd67::2 $A 25610 10
rping_pair rping6_b_to_a $A fd67::1 $B 25611 10

# ucmatose: 2 connections from A to B's server (a wildcard listener: the
# process's rdma_cm file holds the RoCE device's endpoint from its start),
# 10 messages each way on each, disconnect.
on $B timeout 30 ucmatose -p 25602 -c 2 -C 10 >"$log/ucmatose.server.out" 2>&1 &
spid=$!
for try in $(seq 40); do
	sleep 0.25
	on $A timeout 30 ucmatose -s 10.67.0.2 -p 25602 -c 2 -C 10 >"$log/ucmatose.client.out" 2>&1
	crc=$?
	((crc != 0)) && kill -0 $spid 2>/dev/null && grep -q 'REJECTED' "$log/ucmatose.client.out" || break
done
wait $spid
src=$?
if ((crc == 0 && src == 0)) && grep -q 'data transfers complete' "$log/ucmatose.client.out" &&
	grep -q 'disconnecting' "$log/ucmatose.server.out"; then
	pass "ucmatose (2 connections, 10 messages each way)"
else
	fail "ucmatose (client $crc, server $src)" "$log"/ucmatose.*
fi

# udaddy (UD: SIDR REQ and REP, then datagrams both ways).
on $B timeout 30 udaddy -b 10.67.0.2 -c 2 -C 10 >"$log/udaddy.server.out" 2>&1 &
spid=$!
for try in $(seq 40); do
	sleep 0.25
	on $A timeout 30 udaddy -s 10.67.0.2 -c 2 -C 10 >"$log/udaddy.client.out" 2>&1
	crc=$?
	((crc != 0)) && kill -0 $spid 2>/dev/null && grep -q 'UNREACHABLE' "$log/udaddy.client.out" || break
done
wait $spid
src=$?
if ((crc == 0 && src == 0)) && grep -q 'return status 0' "$log/udaddy.client.out"; then
	pass "udaddy (SIDR, 2 connections, 10 datagrams each way)"
else
	fail "udaddy (client $crc, server $src)" "$log"/udaddy.*
fi

# Nobody at the address: the REQ is sent 1 + 3 times, 268 ms apart, then
# UNREACHABLE (-ETIMEDOUT, -110), from the in-process host's CM timer.
t0=$(date +%s%N)
on $A timeout 30 rping -c -a 10.67.0.9 -p 25604 -C 1 >"$log/unreach.out" 2>"$log/unreach.err"
crc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if ((crc != 0 && ms < 10000)) && grep -q 'RDMA_CM_EVENT_UNREACHABLE, error -110' "$log/unreach.err"; then
	pass "nobody there (UNREACHABLE -110 after ${ms} ms)"
else
	fail "nobody there (exit $crc after $ms ms)" "$log"/unreach.*
fi

# Nothing of ours is left running in either namespace.
for n in $A $B; do
	if [[ -n $(ip netns pids "$n" 2>/dev/null) ]]; then
		fail "processes left in $n"
	fi
done
if ((fails)); then
	echo "run-cm-two-hosts-inproc: $fails failed"
	exit 1
fi
echo "run-cm-two-hosts-inproc: all passed"
