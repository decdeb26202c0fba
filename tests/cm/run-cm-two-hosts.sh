#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The connection manager across hosts (docs/cm.md, "Across hosts"): two
# network namespaces joined by a veth pair (10.66.0.1 and 10.66.0.2,
# 10.66.1.1 and 10.66.1.2, fd66::1 and fd66::2, fe80::66:1 and fe80::66:2
# on the same ends; made and removed here; no other address is
# involved), each with a uabid of
# its own holding a RoCE device on its end (`uabi link add roce0 netdev
# IF`).  Unmodified librdmacm programs under `uabi run` connect across:
# their CM MADs go over QP1 as RoCEv2, their data over the RC QPs the CM
# moved to RTS.
#
#   rping -v -C 10 each way (payload checked on both sides), the same
#   with 20 pings over IPv6, and each way between the second IPv4
#   addresses and between the IPv6 link-local ones (the QPs send from
#   their connection's address, not the device's first of its family),
#   ucmatose (4 connections, data, disconnect; and with TOS 0x68: the IP
#   header of every datagram of its QPs and of its CM's MADs, both ways,
#   captured)
#   over IPv4 and over IPv6 and to a wildcard listener, rstream over IPv6 (64 KiB transfers,
#   verified), rdma_xserver/rdma_xclient (RC and XRC), udaddy (UD,
#   SIDR) over both, perftest's
#   ib_send_bw -R, ib_read_lat -R, ib_write_lat -R and ib_read_bw -R,
#   cmtime (100 connections), rdma_server/rdma_client, riostream (50 x
#   64 KiB, verified), while host B serves an rping: garbage at QP1
#   (cm_garbage: malformed packets and MADs, counted, nothing moved;
#   the rping works afterwards), a client with no listener (REJECTED,
#   reason 8) and udaddy with no UD listener (SIDR REP "unsupported");
#   a destination nobody answers (UNREACHABLE, -ETIMEDOUT, after
#   the REQ's retries: uabid's test knobs make them short), a client
#   killed mid-pings (the server ends by itself; in-process an ib_send_bw -b
#   client killed mid-transfer), and mckey (UD
#   multicast to 239.1.2.3, to ff0e::6612 on the IPv6-only devices and
#   to ff0e::6614 on the IPv4-first ones, across).  Neither uabid
#   holds an object at the end.
#
# With --inproc INPROC_LIB (ctest cm_two_hosts_inproc) there is no uabid:
# every program runs under `uabi run --backend inproc` with
# UABI_LINKS=roce0:<its end> and the same short CM timeouts, so the
# process's own core is the CM of its RoCE device and the process's own
# wire endpoint carries its MADs on QP1 (port 4791 of the device's
# addresses) and its QPs' data.  The same cases run, each written once
# here, but one: in-process a killed client sends no DREQ (its CM died
# with it), and its server ends only when its own send to it fails, so
# the client killed mid-transfer is ib_send_bw's, whose server always
# sends (killed_bw below), not rping's.  Garbage at QP1
# goes to the endpoint of a listening rping on host B, and "nothing left"
# is no process of ours left in either namespace.
#
# Usage: run-cm-two-hosts.sh [--inproc INPROC_LIB] UABI_TOOL [CM_GARBAGE [HALF_CONNECT]]
# (HALF_CONNECT: tests/cm/ucma_half_connect.c, for the half-connect case)
set -uo pipefail
inproc=
if [[ ${1:-} == --inproc ]]; then
	inproc=$(realpath "$2")
	shift 2
fi
tool=$(realpath "$1")
garbage=${2:+$(realpath "$2")}
half=${3:+$(realpath "$3")}
me=run-cm-two-hosts${inproc:+ --inproc}
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
for p in ip ss rping ucmatose timeout; do
	command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done

# UABI_TEST_NETNS_TAG: a word in the namespaces' names (several runs on
# one machine tell theirs apart).
tag=${UABI_TEST_NETNS_TAG:+$UABI_TEST_NETNS_TAG-}
# The in-process mode's names differ from uabid's (hC, not hB): both may
# run on one machine.
if [[ -n $inproc ]]; then
	A=hCa-$tag$$ B=hCb-$tag$$ vA=hCv1 vB=hCv2 wA=hCw1 wB=hCw2
else
	A=hBa-$tag$$ B=hBb-$tag$$ vA=hBv1 vB=hBv2 wA=hBw1 wB=hBw2
fi
log=$(mktemp -d /tmp/uabi-cm-two.XXXXXX)
cleanup() {
	for n in $A $B; do
		[[ -n $inproc ]] || ip netns exec "$n" env UABI_SOCKET="$log/$n.sock" "$tool" daemon stop >/dev/null 2>&1
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
}
trap cleanup EXIT
ip netns add $A && ip netns add $B || { echo "FAIL: ip netns add"; exit 1; }
ip -n $A link add $vA type veth peer name $vB netns $B || { echo "FAIL: veth"; exit 1; }
ip -n $A addr add 10.66.0.1/24 dev $vA && ip -n $B addr add 10.66.0.2/24 dev $vB
# IPv6 beside IPv4 on the same devices (no DAD: usable at once); the
# devices receive at their IPv4 address and answer at every other one.
ip -n $A addr add fd66::1/64 dev $vA nodad && ip -n $B addr add fd66::2/64 dev $vB nodad
# A second IPv4 address, and link-local IPv6 ones of our choosing (no
# DAD), each not the first of its family in the devices' GID tables.
ip -n $A addr add 10.66.1.1/24 dev $vA && ip -n $B addr add 10.66.1.2/24 dev $vB
ip -n $A addr add fe80::66:1/64 dev $vA nodad && ip -n $B addr add fe80::66:2/64 dev $vB nodad
# A second veth pair with IPv6 addresses only (fd67::1 and fd67::2), for
# a second RoCE device, roce1: an IPv6 multicast group on a device with
# no IPv4 address at all (and on the first pair's devices, whose first
# address is IPv4, below).
ip -n $A link add $wA type veth peer name $wB netns $B || { echo "FAIL: veth"; exit 1; }
ip -n $A addr add fd67::1/64 dev $wA nodad && ip -n $B addr add fd67::2/64 dev $wB nodad
for n in $A $B; do
	# nor DAD for the link-local address the kernel makes itself: an
	# in-process endpoint binds every address of its device when the
	# program opens it, and a tentative one cannot be bound
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	ip -n "$n" link set lo up
done
ip -n $A link set $vA up && ip -n $B link set $vB up
ip -n $A link set $wA up && ip -n $B link set $wB up

server_env=()
fails=0
fail() { echo "$me: $1: FAIL"; shift; for f in "$@"; do echo "--- $f"; tail -n 15 "$f"; done; fails=$((fails + 1)); }
pass() { echo "$me: $*: PASS"; }

# Short CM timeouts (a response timeout of 2^16 * 4.096 us, 268 ms, and 3
# retries), so that a REQ nobody answers is given up in ~1 s: uabid's, or
# read by each in-process program's core from its environment.
cm_knobs=(UABI_CM_RESPONSE_TIMEOUT=16 UABI_CM_RETRIES=3)
if [[ -z $inproc ]]; then
	for h in "$A $vA" "$B $vB"; do
		set -- $h
		if ! ip netns exec "$1" env UABI_SOCKET="$log/$1.sock" UABI_IDLE_EXIT=0 "${cm_knobs[@]}" \
			"$tool" link add roce0 netdev "$2" >"$log/$1.link" 2>&1 ||
			! grep -q "roce0/1 state ACTIVE .*receives 10.66.0.[12]:4791" "$log/$1.link"; then
			echo "$me: FAIL: uabi link add roce0 netdev $2 in $1"
			cat "$log/$1.link"
			exit 1
		fi
	done
	for h in "$A $wA" "$B $wB"; do
		set -- $h
		if ! ip netns exec "$1" env UABI_SOCKET="$log/$1.sock" "$tool" link add roce1 netdev "$2" \
			>"$log/$1.link1" 2>&1 || ! grep -q "roce1/1 state ACTIVE" "$log/$1.link1"; then
			echo "$me: FAIL: uabi link add roce1 netdev $2 in $1"
			cat "$log/$1.link1"
			exit 1
		fi
	done
fi

# stop_prog NS PROG: SIGTERM to the program PROG itself in NS (not to `on`'s
# subshell, nor to a uabid).
stop_prog() {
	local p
	for p in $(ip netns pids $1); do
		[[ $(cat /proc/$p/comm 2>/dev/null) == "$2" ]] && kill $p 2>/dev/null
	done
}
# wait_endpoint NS: until port 4791 is bound in NS (bounded, 5 s): uabid
# has it all along; in-process, a program's endpoint has it once its
# rdma_cm file is open.
wait_endpoint() {
	local i
	for i in $(seq 100); do
		[[ -n $(ip netns exec "$1" ss -Hlun 'sport = :4791') ]] && return
		sleep 0.05
	done
}
# on NS CMD...: CMD under `uabi run` on host NS's uabid, or in-process with
# the RoCE device on NS's end of the veth (with v6only set, roce1's: the
# second pair's end, as its device roce0).  on_argv NS sets on_cmd to the
# words before CMD: each of them execs the next, so in the background
# "${on_cmd[@]}" CMD's $! is CMD's pid.
on_argv() {
	local ns=$1 ifname=$vA
	[[ $ns == "$B" ]] && ifname=$vB
	[[ -n ${v6only:-} ]] && { ifname=$wA; [[ $ns == "$B" ]] && ifname=$wB; }
	if [[ -n $inproc ]]; then
		on_cmd=(ip netns exec "$ns" env UABI_BACKEND=inproc UABI_INPROC_LIB="$inproc"
			UABI_LINKS="roce0:$ifname" "${cm_knobs[@]}" "$tool" run --backend inproc --)
	else
		on_cmd=(ip netns exec "$ns" env UABI_SOCKET="$log/$ns.sock" UABI_AUTOSTART=0 "$tool" run --)
	fi
}
on() {
	local on_cmd
	on_argv "$1"
	shift
	"${on_cmd[@]}" "$@"
}
. "$(dirname "${BASH_SOURCE[0]}")/rping-expect.sh"
. "$(dirname "${BASH_SOURCE[0]}")/mckey-check.sh"
# rping_pair NAME SERVER-NS SERVER-ADDR CLIENT-NS PORT COUNT [CLIENT'S ADDR]
# (the server's address as the client names it, if not SERVER-ADDR: a
# link-local one's scope is the client's interface).  With while_serving
# set (a command), it is run once the server is up, before the client;
# server_env (an array) is the server's environment's additions.
rping_pair() {
	local name=$1 sns=$2 saddr=$3 cns=$4 port=$5 count=$6 caddr=${7:-$3}
	on "$sns" env "${server_env[@]}" timeout 60 rping -s -a "$saddr" -p "$port" -v -C "$count" \
		>"$log/$name.server.out" 2>"$log/$name.server.err" &
	local spid=$! crc=1 try
	if [[ -n ${while_serving:-} ]]; then
		wait_endpoint "$sns"
		$while_serving
	fi
	# the listener must be up before the client's REQ: a REJ (8) says
	# it is not yet, and the client tries again (bounded)
	for try in $(seq 40); do
		sleep 0.25
		on "$cns" timeout 60 rping -c -a "$caddr" -p "$port" -v -C "$count" \
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

rping_pair rping_a_to_b $B 10.66.0.2 $A 25500 10
rping_pair rping_b_to_a $A 10.66.0.1 $B 25501 10
# IPv6, on the same devices (they have IPv4 too): the CM's MADs and the
# data go between the IPv6 addresses.
rping_pair rping6_a_to_b $B fd66::2 $A 25510 20
rping_pair rping6_b_to_a $A fd66::1 $B 25511 20
# Addresses that are not the first of their family on the device: the
# CM's MADs leave from them, and so must the QPs' data (made to fail:
# with a context sending from the first address of each family only,
# these four failed and the rest passed).
rping_pair rping_second_a_to_b $B 10.66.1.2 $A 24100 10
rping_pair rping_second_b_to_a $A 10.66.1.1 $B 24101 10
rping_pair rping_ll_a_to_b $B fe80::66:2%$vB $A 24102 10 fe80::66:2%$vA
rping_pair rping_ll_b_to_a $A fe80::66:1%$vA $B 24103 10 fe80::66:1%$vB

# ucmatose_pair NAME SERVER-ADDR PORT [any]: 4 connections from A to B's
# server bound to SERVER-ADDR (with any: a wildcard listener, which never
# opens the RoCE device itself: in-process, the translator's context on it
# gives the process its endpoint), 10 messages each way on each,
# disconnect.
# The client's further arguments: ucma_client_extra.
ucma_client_extra=()
ucmatose_pair() {
	local name=$1 saddr=$2 port=$3 bind=(-b "$2") spid crc src try
	[[ ${4:-} == any ]] && bind=()
	on $B timeout 60 ucmatose "${bind[@]}" -p "$port" -c 4 -C 10 >"$log/$name.server.out" 2>&1 &
	spid=$!
	for try in $(seq 40); do
		sleep 0.25
		on $A timeout 60 ucmatose -s "$saddr" -p "$port" -c 4 -C 10 "${ucma_client_extra[@]}" \
			>"$log/$name.client.out" 2>&1
		crc=$?
		((crc != 0)) && kill -0 $spid 2>/dev/null && grep -q 'REJECTED' "$log/$name.client.out" || break
	done
	wait $spid
	src=$?
	if ((crc == 0 && src == 0)) && grep -q 'data transfers complete' "$log/$name.client.out" &&
		grep -q 'disconnecting' "$log/$name.server.out"; then
		pass "$name (4 connections, 10 messages each way)"
	else
		fail "$name (client $crc, server $src)" "$log/$name".*
	fi
}
ucmatose_pair ucmatose 10.66.0.2 25502
ucmatose_pair ucmatose6 fd66::2 25512
ucmatose_pair ucmatose_any 10.66.0.2 25514 any

# TOS (ucmatose -t: rdma_set_option()'s): the client's REQ carries it as
# the path's traffic class, and both sides' QPs send with it, the server's
# taking the REQ's: every datagram of the connections' QPs has it in its
# IP header, both ways, as rxe sends an AV's traffic class; and so does
# every MAD of their CMs on QP1 (REQ, REP, RTU, DREQ, DREP), as Linux's
# CM sends on the path's class and answers on the REQ's.  Captured on B's
# end of the veth.
if command -v dumpcap >/dev/null && command -v tshark >/dev/null; then
	ip netns exec $B dumpcap -q -P -i $vB -f "udp port 4791" -w "$log/tos.pcap" \
		2>"$log/tos.dumpcap.err" &
	dpid=$!
	sleep 1
	ucma_client_extra=(-t 0x68)
	ucmatose_pair ucmatose_tos 10.66.0.2 25516
	ucma_client_extra=()
	sleep 0.5
	kill $dpid 2>/dev/null
	wait $dpid 2>/dev/null
	# tos_all FILTER WHAT: every datagram FILTER picks has TOS 0x68, and
	# there are some each way.
	tos_all() {
		local all ab ba
		all=$(tshark -r "$log/tos.pcap" -Y "$1" 2>/dev/null | wc -l)
		ab=$(tshark -r "$log/tos.pcap" -Y "$1 && ip.dsfield == 0x68 && ip.src == 10.66.0.1" 2>/dev/null | wc -l)
		ba=$(tshark -r "$log/tos.pcap" -Y "$1 && ip.dsfield == 0x68 && ip.src == 10.66.0.2" 2>/dev/null | wc -l)
		if ((all > 0 && ab > 0 && ba > 0 && ab + ba == all)); then
			pass "TOS 0x68 in the IP header of all $all $2 ($ab A to B, $ba B to A)"
		else
			fail "TOS: $all $2, $ab A to B and $ba B to A with TOS 0x68" "$log"/tos.*
		fi
	}
	tos_all 'infiniband.bth.destqp != 1' "datagrams of the connections' QPs"
	tos_all 'infiniband.bth.destqp == 1' "CM MADs on QP1"
else
	fail "TOS: dumpcap and tshark not installed (make deps)"
fi

# rsockets over IPv6: 200 transfers of 64 KiB each way, verified (-T v):
# messages of many packets from the device's IPv6 source.
if command -v rstream >/dev/null; then
	on $B timeout 60 rstream -b fd66::2 -p 25513 -T v -S 65536 -C 200 >"$log/rstream6.server.out" 2>&1 &
	spid=$!
	for try in $(seq 40); do
		sleep 0.25
		on $A timeout 60 rstream -s fd66::2 -p 25513 -T v -S 65536 -C 200 >"$log/rstream6.client.out" 2>&1
		crc=$?
		((crc != 0)) && kill -0 $spid 2>/dev/null || break
	done
	wait $spid
	src=$?
	if ((crc == 0 && src == 0)) && grep -q '^custom  *64k  *200' "$log/rstream6.client.out"; then
		pass "rstream6 (200 x 64 KiB each way, verified)"
	else
		fail "rstream6 (client $crc, server $src)" "$log"/rstream6.*
	fi
fi

# rdma_xserver/rdma_xclient (PS_IB): RC, then XRC (the client's XRC_SEND
# QP to the server's XRC_RECV one, the SRQ number in the REP's private
# data; the REQ says XRC, the REP carries the target's QPN).  One
# 16-byte message each, which the server receives.
if command -v rdma_xserver >/dev/null && command -v rdma_xclient >/dev/null; then
	port=24110
	for mode in r x; do
		port=$((port + 1))
		on $B timeout 60 rdma_xserver -c $mode -p $port >"$log/xrc-$mode.server.out" 2>&1 &
		spid=$!
		for try in $(seq 40); do
			sleep 0.25
			rm -f "$log/xrc-$mode.trace"
			on $A env UABI_WIRE_TRACE="$log/xrc-$mode.trace" timeout 30 \
				rdma_xclient -c $mode -s 10.66.0.2 -p $port >"$log/xrc-$mode.client.out" 2>&1
			crc=$?
			((crc != 0)) && kill -0 $spid 2>/dev/null || break
		done
		wait $spid
		src=$?
		# the message on the wire: RC SEND_ONLY (0x04), XRC SEND_ONLY (0xa4)
		op=$([[ $mode == x ]] && echo a4 || echo 04)
		if ((crc == 0 && src == 0)) && grep -q 'rdma_xclient: end 0' "$log/xrc-$mode.client.out" &&
			grep -q 'rdma_xserver: end 0' "$log/xrc-$mode.server.out" &&
			grep -q " tx op $op " "$log/xrc-$mode.trace"; then
			pass "rdma_xserver/rdma_xclient -c $mode"
		else
			fail "rdma_xserver/rdma_xclient -c $mode (client $crc, server $src)" "$log"/xrc-$mode.*
		fi
	done
fi

# udaddy (UD: SIDR REQ and REP resolve the server's QPN and Q_Key; then
# datagrams both ways on 2 "connections").
# udaddy_pair NAME SERVER-ADDR: the server bound to SERVER-ADDR on B.
udaddy_pair() {
	local name=$1 saddr=$2 spid crc src try
	on $B timeout 60 udaddy -b "$saddr" -c 2 -C 10 >"$log/$name.server.out" 2>&1 &
	spid=$!
	for try in $(seq 40); do
		sleep 0.25
		on $A timeout 60 udaddy -s "$saddr" -c 2 -C 10 >"$log/$name.client.out" 2>&1
		crc=$?
		((crc != 0)) && kill -0 $spid 2>/dev/null && grep -q 'UNREACHABLE' "$log/$name.client.out" || break
	done
	wait $spid
	src=$?
	if ((crc == 0 && src == 0)) && grep -q 'return status 0' "$log/$name.client.out"; then
		pass "$name (SIDR, 2 connections, 10 datagrams each way)"
	else
		fail "$name (client $crc, server $src)" "$log/$name".*
	fi
}
if command -v udaddy >/dev/null; then
	udaddy_pair udaddy 10.66.0.2
	udaddy_pair udaddy6 fd66::2
fi

# perftest over rdma_cm (-R): SENDs, and READs (the responder resources
# and initiator depth the REQ and REP carry).  perftest's server takes a
# control connection, exchanges its parameters over it, then makes a new
# listener for the data QP's, while its client connects the second at
# once: when the second REQ comes first it is refused (REJ 8, as Linux's
# CM refuses a REQ with no listener) — perftest's own race, which its
# client means to outlive by trying again, but perftest 4.5's dies of it
# (SIGSEGV in rdma_resolve_addr() on the IDs its retry destroyed).  The
# client's REQ leaves within a millisecond of the last handshake message
# it got, and the server listens only once its send of that message is
# complete: the client's ACK for it, held (docs/wire.md, "Held ACKs"),
# left with the REQ, and the server lost every time (ib_read_lat, 12 of
# 12 in-process).  So the ACKs go at once here (UABI_WIRE_HOLD_ACKS=0),
# and a failed pair is run again whole (both sides new), at most 15
# times; the attempts are reported (in-process, about every other one
# still fails).
for t in "ib_send_bw -n 200" "ib_read_lat -n 200" "ib_write_lat -n 200" "ib_read_bw -n 200"; do
	command -v ${t%% *} >/dev/null || continue
	name=${t%% *}
	ok=0
	for attempt in $(seq 15); do
		on $B env UABI_WIRE_HOLD_ACKS=0 timeout 30 $t -R -p 25507 >"$log/$name.server.out" 2>&1 &
		spid=$!
		# listening by then (perftest prints nothing until a client
		# comes; a control REQ refused ends the client at once)
		if [[ -n $inproc ]]; then
			wait_endpoint $B
			sleep 0.2
		else
			sleep 1
		fi
		on $A env UABI_WIRE_HOLD_ACKS=0 timeout 30 $t -R -p 25507 10.66.0.2 >"$log/$name.client.out" 2>&1
		crc=$?
		# The client refused at its second REQ died: a uabid then
		# sends the DREQ for its first connection and the server ends;
		# in-process nobody does (the CM died with the client), and the
		# server would wait for its timeout: stopped now (failed either
		# way).
		((crc != 0)) && stop_prog $B $name
		wait $spid
		src=$?
		if ((crc == 0 && src == 0)); then
			ok=1
			break
		fi
	done
	if ((ok)); then
		pass "$name -R (attempt $attempt: $(grep -E '^ +[0-9]+ +[0-9]+' "$log/$name.client.out" | tail -1 | tr -s ' '))"
	else
		fail "$name -R (client $crc, server $src, 15 attempts)" "$log/$name".*
	fi
done

# prog_pair NAME PATTERN "SERVER ARGS" "CLIENT ARGS" [serves-on]: the
# server on B, the client on A, again while refused (the listener not up
# yet: REJECTED or "Connection refused", bounded); both must end with 0
# and the client print a line matching PATTERN.  With serves-on, the
# server (cmtime's) never ends by itself: it is stopped after the client.
prog_pair() {
	local name=$1 pat=$2 sargs=$3 cargs=$4 serves_on=${5:-} spid crc=1 src try
	command -v ${sargs%% *} >/dev/null && command -v ${cargs%% *} >/dev/null || {
		echo "$me: $name: not installed here"
		fails=$((fails + 1))
		return
	}
	on $B timeout 60 $sargs >"$log/$name.server.out" 2>"$log/$name.server.err" &
	spid=$!
	for try in $(seq 40); do
		sleep 0.25
		on $A timeout 60 $cargs >"$log/$name.client.out" 2>"$log/$name.client.err"
		crc=$?
		((crc != 0)) && kill -0 $spid 2>/dev/null &&
			grep -qE 'REJECTED|refused' "$log/$name.client.out" "$log/$name.client.err" || break
	done
	if [[ -n $serves_on ]]; then
		kill -0 $spid 2>/dev/null && src=0 || src=1 # still serving
		stop_prog $B ${sargs%% *}
		wait $spid
	else
		wait $spid
		src=$?
	fi
	# cmtime exits 0 whatever its connections met: each that did not go
	# as it should prints its event ("event: ...").
	local bad
	bad=$(cat "$log/$name".* | grep -c '^event: ')
	if ((crc == 0 && src == 0 && bad == 0)) && grep -qE "$pat" "$log/$name.client.out"; then
		pass "$name"
	else
		fail "$name (client $crc, server $src, $bad unexpected events)" "$log/$name".*
	fi
}
# cmtime: 100 connections set up and torn down across, step by step.
prog_pair cmtime '^connect +:' "cmtime" "cmtime -s 10.66.0.2 -c 100" serves-on
prog_pair rdma_server_client 'rdma_client: end 0' "rdma_server -p 25520" \
	"rdma_client -s 10.66.0.2 -p 25520"
# riostream (rsockets' RDMA-write I/O): 50 transfers of 64 KiB, verified.
prog_pair riostream '^custom +64k +50 ' "riostream -p 25521 -T v -S 65536 -C 50" \
	"riostream -s 10.66.0.2 -p 25521 -T v -S 65536 -C 50"

# Nobody at the address: the REQ is sent 1 + 3 times, 268 ms apart, then
# UNREACHABLE (-ETIMEDOUT, -110).
t0=$(date +%s%N)
on $A timeout 60 rping -c -a 10.66.0.9 -p 25504 -C 1 >"$log/unreach.out" 2>"$log/unreach.err"
crc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if ((crc != 0)) && grep -q 'RDMA_CM_EVENT_UNREACHABLE, error -110' "$log/unreach.err"; then
	pass "nobody there (UNREACHABLE -110 after ${ms} ms)"
else
	fail "nobody there (exit $crc after $ms ms)" "$log"/unreach.*
fi

# A client killed in the middle of its pings: its uabid destroys its IDs
# and sends the DREQ, the server's CM reports DISCONNECTED (or the
# server's RDMA READ to the dead client fails first, status 12, as on
# hardware); either way the server ends by itself, not by its timeout.
killed_rping() {
	on $B timeout 60 rping -s -a 10.66.0.2 -p 25506 -v >"$log/killed.server.out" 2>"$log/killed.server.err" &
	spid=$!
	cpid=""
	for try in $(seq 40); do
		sleep 0.25
		on_argv $A
		"${on_cmd[@]}" rping -c -a 10.66.0.2 -p 25506 -v -C 100000000 >"$log/killed.client.out" 2>"$log/killed.client.err" &
		cpid=$!
		# (its output is buffered: alive after 2 s is connected and pinging;
		# REJECTED, the listener not up yet, ends it at once)
		sleep 2
		kill -0 $cpid 2>/dev/null && break
		wait $cpid 2>/dev/null
		grep -q 'RDMA_CM_EVENT_REJECTED, error 8' "$log/killed.client.err" || break
	done
	kill -9 $cpid 2>/dev/null
	t0=$SECONDS
	wait $cpid 2>/dev/null
	wait $spid
	src=$?
	if grep -q 'ping data' "$log/killed.server.out" && ((src != 124 && src != 137)) &&
		grep -qE 'DISCONNECT EVENT|cq completion failed status 12' "$log/killed.server.err"; then
		pass "client killed mid-pings (the server ended by itself after $((SECONDS - t0)) s, exit $src: $(grep -oE 'DISCONNECT EVENT|status 12' "$log/killed.server.err" | head -1))"
	else
		fail "client killed mid-pings (server exit $src)" "$log"/killed.*
	fi
}
# In-process the CM was the killed process's own and nobody sends the
# DREQ (docs/cm.md, "The in-process host"): the server learns only from
# its own traffic to the dead client, whose retries run out (status 12),
# as against a dead host.  An rping server waiting for the client's next
# message with everything it sent acknowledged waits forever (seen: 1 run
# in a few, "server exit 124"), so in-process the server is one that
# always has traffic in flight: perftest's ib_send_bw -R -b (both ways)
# for a duration.  A pair whose client did not get going (perftest's own
# race between its two connections, above; that client crashes in its
# cleanup, which bash reports as a segmentation fault) is run again whole.
killed_bw() {
	local attempt port ok=0
	command -v ib_send_bw >/dev/null || { fail "client killed mid-transfer: ib_send_bw not installed"; return; }
	for attempt in $(seq 10); do
		port=$((25540 + attempt))
		on $B env UABI_WIRE_HOLD_ACKS=0 timeout 60 ib_send_bw -R -b -D 40 -p $port \
			>"$log/killed.server.out" 2>&1 &
		spid=$!
		wait_endpoint $B
		sleep 0.2
		on_argv $A
		# (no timeout(1) in between: the kill below must reach perftest;
		# each word execs the next)
		"${on_cmd[@]}" env UABI_WIRE_HOLD_ACKS=0 ib_send_bw -R -b -D 40 -p $port 10.66.0.2 \
			>"$log/killed.client.out" 2>&1 &
		cpid=$!
		# alive after 3 s: connected and sending both ways
		sleep 3
		if kill -0 $cpid 2>/dev/null && kill -0 $spid 2>/dev/null; then
			ok=1
			break
		fi
		kill $cpid 2>/dev/null
		stop_prog $B ib_send_bw
		wait $cpid 2>/dev/null
		wait $spid 2>/dev/null
	done
	if ((!ok)); then
		fail "client killed mid-transfer: no pair got going in 10 attempts" "$log"/killed.*
		return
	fi
	kill -9 $cpid 2>/dev/null
	t0=$SECONDS
	wait $cpid 2>/dev/null
	wait $spid
	src=$?
	# Its first error completion: a send's, status 12 (retries exceeded),
	# or a receive's, status 5 (flushed: the QP went to ERR with them).
	if ((src != 0 && src != 124 && src != 137)) &&
		grep -Eq 'Failed status (12|5):' "$log/killed.server.out"; then
		pass "client killed mid-transfer (attempt $attempt: the server's sends ran out of retries and it ended by itself after $((SECONDS - t0)) s, exit $src: $(grep -Eo 'Completion with error at (client|server)|Failed status [0-9]+' "$log/killed.server.out" | tr '\n' ' '))"
	else
		fail "client killed mid-transfer (server exit $src)" "$log"/killed.*
	fi
}
if [[ -n $inproc ]]; then
	killed_bw
else
	killed_rping
fi

# A client killed half-way through connecting (tests/cm/ucma_half_connect.c:
# raw ucma commands, as librdmacm would send the RTU by itself): once the
# server's REP is in, and right after its REQ.  With uabids the client's
# uabid destroys its ID and sends the IB CM's REJ across: the rping server
# sees REJECTED, "consumer defined" (28) after the REP; "timeout" (1) or
# 28 after the REQ, or its accept finds the request rejected (EINVAL, as
# on Linux).  In-process nobody is left to send the REJ: the server's REP
# runs out of its retries (the short CM timeouts: about 1 s) and it sees
# UNREACHABLE.  Either way it ends by itself within the CM's timeouts.
if [[ -n $half ]]; then
	port=25520
	for when in rep req; do
		port=$((port + 1))
		on $B timeout 30 rping -s -a 10.66.0.2 -p $port -v -C 1 \
			>"$log/half-$when.server.out" 2>"$log/half-$when.server.err" &
		spid=$!
		# The req client dies right after its REQ: it cannot see one
		# refused for want of a listener and try again, as the rep
		# client does; so the server gets a second first.
		[[ $when == req ]] && sleep 1
		for _ in $(seq 40); do
			sleep 0.25
			on $A timeout 30 "$half" $port $when 10.66.0.2 >"$log/half-$when.client.out" 2>&1
			crc=$?
			grep -q '^event 8 (status 8)' "$log/half-$when.client.out" || break
		done
		t0=$SECONDS
		wait $spid
		src=$?
		dt=$((SECONDS - t0))
		if [[ -n $inproc ]]; then
			want='RDMA_CM_EVENT_UNREACHABLE|RDMA_CM_EVENT_REJECTED|rdma_accept: Invalid argument'
		elif [[ $when == rep ]]; then
			want='RDMA_CM_EVENT_REJECTED, error 28$'
		else
			want='RDMA_CM_EVENT_REJECTED, error (1|28)$|rdma_accept: Invalid argument'
		fi
		if ((crc == 137 && src != 124 && src != 0 && dt < 20)) &&
			{ [[ $when == req ]] || grep -qx REP "$log/half-$when.client.out"; } &&
			grep -Eq "$want" "$log/half-$when.server.err"; then
			pass "client killed half-way ($when: the server ended by itself after $dt s, exit $src: $(grep -Eo 'RDMA_CM_EVENT_[A-Z]+, error -?[0-9]+|rdma_accept: Invalid argument' "$log/half-$when.server.err" | head -1))"
		else
			fail "client killed half-way ($when: client exit $crc, server exit $src after $dt s)" \
				"$log"/half-$when.*
		fi
	done
fi

# While host B serves (an rping server listening there: in-process, its
# endpoint has B's port 4791 and its core is B's CM; with uabids, B's
# uabid has them all along): garbage at QP1, a client for a port with no
# listener, udaddy with no UD listener, then the rping server's client.
# b_garbage: garbage at QP1 of host B, counted and dropped; the CM still
# connects (the rping after it).
b_garbage() {
	[[ -n $garbage ]] || return
	local before after refused dropped dropped0
	[[ -n $inproc ]] || before=$(ip netns exec $B env UABI_SOCKET="$log/$B.sock" "$tool" link | grep roce0)
	ip netns exec $A timeout 60 "$garbage" 10.66.0.1 10.66.0.2 4791 3000 7 >"$log/garbage.out" 2>&1
	grc=$?
	# in-process the counts are the endpoint's, in the server's
	# process: its trace is read once it has ended
	[[ -n $inproc ]] && return
	after=$(ip netns exec $B env UABI_SOCKET="$log/$B.sock" "$tool" link | grep roce0)
	refused=$(sed -E 's/.* qp1 in [0-9]+ refused ([0-9]+).*/\1/' <<<"$after")
	dropped=$(sed -E 's/.* cm taken [0-9]+ dropped ([0-9]+).*/\1/' <<<"$after")
	dropped0=$(sed -E 's/.* cm taken [0-9]+ dropped ([0-9]+).*/\1/' <<<"$before")
	echo "$me: host B after garbage: ${after#*relayed }"
	if ((grc == 0)) && ((refused > 0 && dropped > dropped0)); then
		pass "garbage at QP1 ($(cat "$log/garbage.out"); refused $refused, CM dropped $((dropped - dropped0)))"
	else
		fail "garbage at QP1 (exit $grc)" "$log/garbage.out"
	fi
}
b_serving() {
	b_garbage
	# No listener at the port: B's CM answers REJ, "invalid service ID".
	on $A timeout 30 rping -c -a 10.66.0.2 -p 25503 -C 1 >"$log/nolisten.out" 2>"$log/nolisten.err"
	local crc=$?
	if ((crc != 0)) && grep -q 'RDMA_CM_EVENT_REJECTED, error 8' "$log/nolisten.err"; then
		pass "no listener (REJECTED, reason 8)"
	else
		fail "no listener (exit $crc)" "$log"/nolisten.*
	fi
	# No UD listener: the SIDR REP says "unsupported" (status 1), not a
	# timeout (-110: nobody answered).
	command -v udaddy >/dev/null || return
	on $A timeout 30 udaddy -s 10.66.0.2 -c 1 -C 1 >"$log/udaddy-none.out" 2>&1
	crc=$?
	if ((crc != 0)) && grep -q 'UNREACHABLE' "$log/udaddy-none.out" &&
		! grep -q 'UNREACHABLE.*-110' "$log/udaddy-none.out"; then
		pass "udaddy with no listener (UNREACHABLE: $(grep -m1 -o 'UNREACHABLE.*' "$log/udaddy-none.out"))"
	else
		fail "udaddy with no listener (exit $crc)" "$log/udaddy-none.out"
	fi
}
grc=0
[[ -n $inproc ]] && server_env=(UABI_WIRE_TRACE="$log/garbage.trace")
while_serving=b_serving rping_pair rping_b_serving $B 10.66.0.2 $A 25505 10
server_env=()
if [[ -n $inproc && -n $garbage ]]; then
	# the datagrams for QP1 that B's endpoint parsed (their ICRC right:
	# the CM's own MADs too), of 3000 sent (1 in 7 with a bad ICRC)
	n=$(grep -c ' rx op .. qp 000001 ' "$log/garbage.trace")
	if ((grc == 0 && n > 2000)); then
		pass "garbage at QP1 ($(cat "$log/garbage.out"); $n for QP1 parsed by B's endpoint, rping after it)"
	else
		fail "garbage at QP1 (exit $grc, $n for QP1 parsed)" "$log/garbage.out"
	fi
fi

# mckey (UD multicast through the CM): each side binds to its RoCE
# device's address, so the join is RoCEv2's (the MGID ::ffff:239.1.2.3 or
# the IPv6 group itself, no LID) and the QP attached to it joins the IP
# group on the veth.  The receiver on host B joins first (its
# line-buffered "joined" line), then the sender on host A joins and sends
# 20 datagrams to the group; the receiver ends only once it has all 20.
# mckey_pair NAME GROUP MGID B'S-ADDR A'S-ADDR
mckey_pair() {
	local name=$1 group=$2 mgid=$3 baddr=$4 aaddr=$5 spid crc src
	on $B timeout 30 stdbuf -oL mckey -m "$group" -b "$baddr" -C 20 >"$log/$name.server.out" 2>&1 &
	spid=$!
	for _ in $(seq 300); do
		grep -q 'mckey: joined' "$log/$name.server.out" && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	on $A timeout 30 stdbuf -oL mckey -m "$group" -b "$aaddr" -s -C 20 >"$log/$name.client.out" 2>&1
	crc=$?
	wait $spid
	src=$?
	if ((crc == 0 && src == 0)) && mckey_ok receiver "$log/$name.server.out" "$mgid" &&
		mckey_ok sender "$log/$name.client.out" "$mgid"; then
		pass "$name ($group across: 20 datagrams received, $(grep -o 'joined dgid.*' "$log/$name.server.out"))"
	else
		fail "$name (sender $crc, receiver $src)" "$log/$name".*
	fi
}
if command -v mckey >/dev/null && command -v stdbuf >/dev/null; then
	mckey_pair mckey 239.1.2.3 ::ffff:239.1.2.3 10.66.0.2 10.66.0.1
	v6only=1 mckey_pair mckey6 ff0e::6612 ff0e::6612 fd67::2 fd67::1
	# An IPv6 group on the first pair's devices, whose first address is
	# IPv4: joined on the interface all the same, sent to from an IPv6
	# address of the device (docs/wire.md, "UD multicast").
	mckey_pair mckey6-dual ff0e::6614 ff0e::6614 fd66::2 fd66::1
fi

# DEVICE_REMOVAL (uabid only: an in-process device is the process's own,
# no `uabi link del` reaches it): host A's roce0 is deleted under an rping
# client connected through it, pinging without end.  The client's ID
# hears DEVICE_REMOVAL (rping says so and exits), its contexts close, and
# `uabi link del` then deletes the device within its wait (10 s); the
# server across hears DISCONNECTED (the client's uabid sends the DREQ as
# the dead client's ID goes) and ends too.  roce0 of A is gone afterwards.
# A listener on host A bound to roce0's address hears DEVICE_REMOVAL too,
# as Linux tells a listener bound to a device's address, and ends.
if [[ -z $inproc ]]; then
	on $B timeout 30 rping -s -a 10.66.0.2 -p 27190 >"$log/removal.server.out" 2>&1 &
	rspid=$!
	on $A timeout 30 rping -s -a 10.66.0.1 -p 27191 >"$log/removal.listener.out" 2>&1 &
	rlpid=$!
	for _ in $(seq 40); do
		sleep 0.25
		on $A timeout 30 rping -c -a 10.66.0.2 -p 27190 >"$log/removal.client.out" 2>&1 &
		rcpid=$!
		sleep 1
		kill -0 $rcpid 2>/dev/null && break
		wait $rcpid
	done
	t0=$SECONDS
	ip netns exec $A env UABI_SOCKET="$log/$A.sock" UABI_LINK_DEL_WAIT=10 "$tool" link del roce0 \
		>"$log/removal.del.out" 2>&1
	delrc=$?
	dt=$((SECONDS - t0))
	wait $rcpid
	rcrc=$?
	wait $rspid
	rsrc=$?
	wait $rlpid
	rlrc=$?
	links=$(ip netns exec $A env UABI_SOCKET="$log/$A.sock" "$tool" link 2>&1)
	if ((delrc == 0 && rcrc != 124 && rsrc != 124 && rlrc != 124)) &&
		grep -qi 'device removal' "$log/removal.client.out" &&
		grep -qi 'device removal' "$log/removal.listener.out" &&
		grep -q 'told DEVICE_REMOVAL' "$log/removal.del.out" &&
		[[ $links != *roce0* ]]; then
		pass "device-removal (uabi link del under a connected rping: client \"$(grep -i -m1 'device removal' "$log/removal.client.out")\", exit $rcrc; a listener bound to the device's address exit $rlrc; device deleted after ${dt} s; server exit $rsrc: \"$(tail -n1 "$log/removal.server.out")\")"
	else
		fail "device-removal (link del $delrc after ${dt} s, client $rcrc, listener $rlrc, server $rsrc; links: $(echo $links))" \
			"$log"/removal.*
	fi
fi

# Nothing left behind: no object in either uabid, or (in-process) no
# process of ours in either namespace.
if [[ -n $inproc ]]; then
	for n in $A $B; do
		[[ -z $(ip netns pids "$n" 2>/dev/null) ]] || fail "processes left in $n ($(ip netns pids "$n" | xargs -r ps -o comm= -p | xargs))"
	done
else
	sleep 0.5
	for h in $A $B; do
		left=$(ip netns exec $h env UABI_SOCKET="$log/$h.sock" "$tool" objects 2>&1)
		if [[ $left != *"no live objects"* ]]; then
			echo "$me: objects left in $h's uabid: FAIL"
			echo "$left"
			fails=$((fails + 1))
		fi
	done
	for h in $A $B; do
		echo "$me: $h: $(ip netns exec $h env UABI_SOCKET="$log/$h.sock" "$tool" link | grep roce0 | sed 's/.*relayed/relayed/')"
	done
fi
if ((fails)); then
	echo "$me: FAIL ($fails; ${SECONDS} s; logs in $log)"
	exit 1
fi
rm -rf "$log"
echo "$me: PASS (${SECONDS} s)"
