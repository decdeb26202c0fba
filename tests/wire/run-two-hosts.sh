#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# Two "hosts" on one machine (docs/wire.md, "Two hosts"): two network
# namespaces joined by a veth pair (10.88.0.1 and 10.88.0.2, made and
# removed here; no other address is involved), each program in a pid and
# mount namespace of its own, each with its own backend (in-process) and a
# RoCE device on its end of the veth (UABI_LINKS=roce0:IF).  Unmodified
# ibverbs-utils and perftest run across, over RoCEv2 only: the two sides
# share no memory and no pid namespace.  Then the same with tc netem on
# both ends (loss, reordering, duplicates, delay): RC completes; and a peer
# killed mid-transfer ends its partner in "transport retry counter
# exceeded" within the QP's timeout budget.
#
# With --daemon UABI_TOOL, each host runs a uabid of its own instead (the
# default backend), made in its network namespace by `uabi link add roce0
# netdev IF`: uabid receives at port 4791 for every process of its host
# and relays each datagram to the process that owns its QP.  The same
# programs run across; then two pairs at once, whose two servers (and two
# clients) share their host's port.
#
# With --pcap-check PCAP_ICRC, host 1's end of the veth is captured
# (dumpcap) during the pingpong programs, and every RoCEv2 packet of the
# capture must decode with Wireshark's InfiniBand dissector (tshark -d
# udp.port==4791,infiniband) without a malformed or error-level field, and
# pass PCAP_ICRC: headers parse and the ICRC is right over the real IP
# header (Wireshark does not check the ICRC).
#
# Usage: run-two-hosts.sh --verbs-lib LIB --inproc-lib LIB [--daemon UABI_TOOL]
#                         [--pcap-check PCAP_ICRC] [--quick] [--relay]
#
# --relay (with --daemon): uabid relays every datagram (UABI_WIRE_STEER=0)
# instead of steering bound QPs' datagrams to their processes' sockets.
set -uo pipefail

verbs="" inproc="" quick=0 tool="" pcap_check="" relay=0
while (($#)); do
	case $1 in
	--pcap-check) pcap_check=$2; shift 2 ;;
	--verbs-lib) verbs=$2; shift 2 ;;
	--inproc-lib) inproc=$2; shift 2 ;;
	--daemon) tool=$2; shift 2 ;;
	--relay) relay=1; shift ;;
	--quick) quick=1; shift ;;
	*) echo "run-two-hosts: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -f $verbs && -f $inproc ]] || { echo "run-two-hosts: --verbs-lib and --inproc-lib are required" >&2; exit 2; }
[[ -z $tool || -x $tool ]] || { echo "run-two-hosts: --daemon $tool is not executable" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "run-two-hosts: FAIL: needs root (network namespaces)"; exit 1; }
for p in ip tc unshare ibv_rc_pingpong ib_write_bw timeout; do
	command -v "$p" >/dev/null || { echo "run-two-hosts: FAIL: missing $p"; exit 1; }
done

A=uabi-h1-$$ B=uabi-h2-$$
log=$(mktemp -d /tmp/uabi-two-hosts.XXXXXX)
cleanup() {
	for n in $A $B; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
}
trap cleanup EXIT
ip netns add $A && ip netns add $B || { echo "run-two-hosts: FAIL: ip netns add"; exit 1; }
# Made inside the namespaces, so that runs at once never meet in the host's.
ip -n $A link add uabi-h1 type veth peer name uabi-h2 netns $B || { echo "run-two-hosts: FAIL: veth"; exit 1; }
ip -n $A addr add 10.88.0.1/24 dev uabi-h1 && ip -n $B addr add 10.88.0.2/24 dev uabi-h2
for n in $A $B; do ip -n "$n" link set lo up; done
ip -n $A link set uabi-h1 up && ip -n $B link set uabi-h2 up

fails=0
# host NS IF PROGRAM...: PROGRAM on host NS's RoCE device, in its own pid
# and mount namespace, over the drop-in library and the in-process core
# (or the host's uabid).
host() {
	local ns=$1 ifname=$2
	shift 2
	if [[ -n $tool ]]; then
		ip netns exec "$ns" env UABI_BACKEND=daemon UABI_SOCKET="$log/$ns/uabid.sock" \
			UABI_AUTOSTART=0 LD_PRELOAD="$verbs" unshare --pid --fork --mount --mount-proc "$@"
		return
	fi
	ip netns exec "$ns" env UABI_BACKEND=inproc UABI_WIRE_NETEM="${UABI_WIRE_NETEM:-}" UABI_INPROC_LIB="$inproc" UABI_LINKS="roce0:$ifname" \
		LD_PRELOAD="$verbs" unshare --pid --fork --mount --mount-proc "$@"
}
if [[ -n $tool ]]; then
	for h in "$A uabi-h1" "$B uabi-h2"; do
		set -- $h
		mkdir -p "$log/$1"
		if ! ip netns exec "$1" env UABI_SOCKET="$log/$1/uabid.sock" UABI_IDLE_EXIT=0 \
			UABI_WIRE_STEER=$((1 - relay)) "$tool" link add roce0 netdev "$2" >"$log/$1/link" 2>&1 ||
			! grep -q "roce0/1 state ACTIVE .*receives 10.88.0.[12]:4791" "$log/$1/link"; then
			echo "run-two-hosts: FAIL: uabi link add roce0 netdev $2 in $1"
			cat "$log/$1/link"
			exit 1
		fi
	done
	echo "run-two-hosts: uabid in each host: $(grep roce0 "$log/$A/link" | cut -d' ' -f1-13)"
fi
# pair NAME SERVER-ARGS... -- CLIENT-ARGS...: the server on host 1, the
# client on host 2 (connecting to 10.88.0.1); both must exit 0.
pair() {
	local name=$1
	shift
	local srv=() cli=()
	while (($#)) && [[ $1 != -- ]]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	host $A uabi-h1 timeout 120 "${srv[@]}" >"$log/$name.server" 2>&1 &
	local spid=$!
	sleep 0.5
	local crc=1
	for try in 1 2 3 4 5 6 7 8 9 10; do
		host $B uabi-h2 timeout 120 "${cli[@]}" 10.88.0.1 >"$log/$name.client" 2>&1
		crc=$?
		grep -qE "Couldn't connect|Unable to init the socket connection" "$log/$name.client" || break
		sleep 0.5
	done
	wait $spid
	local src=$?
	# On a lossy link ibv_rc_pingpong can end this way by itself: the
	# server got every message and exits, while the ACK of the client's
	# last one was lost; the client's retries then reach nobody.  Only
	# when the server finished every iteration (so every message arrived).
	# (Either way round: the side that finished first may be either.)
	local done_side="" failed_side=""
	if ((src == 0 && crc != 0)); then
		done_side=server failed_side=client
	elif ((src != 0 && crc == 0)); then
		done_side=client failed_side=server
	fi
	if [[ $name == netem_* && -n $done_side ]] &&
		grep -qE "retry counter exceeded|Failed status 12" "$log/$name.$failed_side" &&
		grep -qE "iters in|^ +[0-9]+ +[0-9]+ " "$log/$name.$done_side"; then
		echo "run-two-hosts: $name: PASS (the $done_side finished; the ACK of the $failed_side's last message was lost after it left)"
		return
	fi
	if ((crc == 0 && src == 0)); then
		echo "run-two-hosts: $name: PASS ($(grep -hE 'usec/iter|^ [0-9]+ +[0-9]+' "$log/$name.client" | tail -1 | tr -s ' '))"
	else
		echo "run-two-hosts: $name: FAIL (server $src, client $crc)"
		tail -n 5 "$log/$name.server" "$log/$name.client"
		fails=$((fails + 1))
	fi
}

n=1000
((quick)) && n=200
cap_pid=""
if [[ -n $pcap_check ]]; then
	for p in dumpcap tshark; do
		command -v $p >/dev/null || { echo "run-two-hosts: FAIL: missing $p (Debian's tshark)"; exit 1; }
	done
	# A UDP_SEGMENT send of the engine (docs/wire.md, "Sending in
	# batches") crosses a veth whole; a NIC puts its datagrams on the
	# wire one by one.  Each end cuts it up as it leaves, so that the
	# capture holds what a wire carries: the datagrams, with the IPv4 IDs
	# their ICRCs were made for.
	ip -n $A link set dev uabi-h1 gso_max_segs 1 && ip -n $B link set dev uabi-h2 gso_max_segs 1 ||
		{ echo "run-two-hosts: FAIL: gso_max_segs"; exit 1; }
	ip netns exec $A dumpcap -q -P -i uabi-h1 -f "udp port 4791" -w "$log/pingpong.pcap" 2>"$log/dumpcap.err" &
	cap_pid=$!
	sleep 1
fi
pair rc_pingpong ibv_rc_pingpong -d roce0 -g 0 -n $n -c -- ibv_rc_pingpong -d roce0 -g 0 -n $n -c
pair uc_pingpong ibv_uc_pingpong -d roce0 -g 0 -n $n -- ibv_uc_pingpong -d roce0 -g 0 -n $n
pair ud_pingpong ibv_ud_pingpong -d roce0 -g 0 -n $n -- ibv_ud_pingpong -d roce0 -g 0 -n $n
pair srq_pingpong ibv_srq_pingpong -d roce0 -g 0 -n $n -c -- ibv_srq_pingpong -d roce0 -g 0 -n $n -c
# XRC: SENDs to the other side's SRQs by number (XRCETH), through its XRC
# receive QPs; the MTU that fits the veth's 1500 bytes.
pair xsrq_pingpong ibv_xsrq_pingpong -d roce0 -g 0 -m 1024 -n $n -- ibv_xsrq_pingpong -d roce0 -g 0 -m 1024 -n $n
if [[ -n $cap_pid ]]; then
	sleep 0.5
	kill -INT $cap_pid
	wait $cap_pid
	ip -n $A link set dev uabi-h1 gso_max_segs 65535 && ip -n $B link set dev uabi-h2 gso_max_segs 65535
	cap=$log/pingpong.pcap
	total=$(tshark -r "$cap" -Y "udp.dstport == 4791" 2>/dev/null | wc -l)
	ib=$(tshark -r "$cap" -d udp.port==4791,infiniband -Y "infiniband.bth.opcode" 2>/dev/null | wc -l)
	bad=$(tshark -r "$cap" -d udp.port==4791,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Error"' 2>/dev/null | wc -l)
	if ((total > 0 && ib == total && bad == 0)) && "$pcap_check" "$cap" >"$log/pcap_icrc" 2>&1; then
		echo "run-two-hosts: capture: PASS ($total RoCEv2 packets, all decoded by tshark, none malformed; $(head -1 "$log/pcap_icrc" | cut -d: -f2-))"
	else
		echo "run-two-hosts: capture: FAIL ($total packets to 4791, $ib decoded as InfiniBand, $bad malformed or in error)"
		cat "$log/dumpcap.err" "$log/pcap_icrc" 2>/dev/null | tail -n 8
		fails=$((fails + 1))
	fi
fi
pair rc_pingpong_64k ibv_rc_pingpong -d roce0 -g 0 -n 200 -s 65536 -- ibv_rc_pingpong -d roce0 -g 0 -n 200 -s 65536
pair rc_pingpong_events ibv_rc_pingpong -d roce0 -g 0 -n $n -e -- ibv_rc_pingpong -d roce0 -g 0 -n $n -e
for t in send_bw write_bw read_bw atomic_bw send_lat write_lat read_lat atomic_lat; do
	pair "ib_$t" "ib_$t" -d roce0 -x 0 -F -n $n -p 19650 -- "ib_$t" -d roce0 -x 0 -F -n $n -p 19650
done
pair ib_send_bw_imm ib_send_bw -d roce0 -x 0 -F -n $n -p 19650 -I 0 -- ib_send_bw -d roce0 -x 0 -F -n $n -p 19650 -I 0

if [[ -n $tool ]]; then
	# Two pairs at once: two servers on host 1 and two clients on host 2,
	# each side's two processes receiving at their uabid's one port.
	host $A uabi-h1 timeout 120 ibv_rc_pingpong -d roce0 -g 0 -n $n -c -s 8192 -p 18601 >"$log/two.s1" 2>&1 &
	s1=$!
	host $A uabi-h1 timeout 120 ib_write_bw -d roce0 -x 0 -F -n $n -p 18602 >"$log/two.s2" 2>&1 &
	s2=$!
	sleep 1
	host $B uabi-h2 timeout 120 ibv_rc_pingpong -d roce0 -g 0 -n $n -c -s 8192 -p 18601 10.88.0.1 >"$log/two.c1" 2>&1 &
	c1=$!
	host $B uabi-h2 timeout 120 ib_write_bw -d roce0 -x 0 -F -n $n -p 18602 10.88.0.1 >"$log/two.c2" 2>&1 &
	c2=$!
	rcs=""
	for p in $s1 $s2 $c1 $c2; do
		wait $p
		rcs+=" $?"
	done
	ip netns exec $A env UABI_SOCKET="$log/$A/uabid.sock" "$tool" link >"$log/link.after"
	relayed=$(grep -o 'relayed [0-9]*' "$log/link.after" | cut -d' ' -f2)
	# Steered, uabid relays only what comes for no bound QP (stragglers
	# after a QP is gone); relaying, it carries everything.
	if ((relay)) && grep -q ' steered ' "$log/link.after"; then
		echo "run-two-hosts: uabid steers although UABI_WIRE_STEER=0: FAIL"
		fails=$((fails + 1))
	elif ((!relay)) && ! grep -q ' steered ' "$log/link.after"; then
		echo "run-two-hosts: uabid does not steer: FAIL"
		cat "$log/link.after"
		fails=$((fails + 1))
	elif ((relay && relayed < 1000)); then
		echo "run-two-hosts: uabid relayed only ${relayed:-0} datagrams: FAIL"
		fails=$((fails + 1))
	fi
	if [[ $rcs == " 0 0 0 0" ]]; then
		echo "run-two-hosts: two pairs sharing each host's port: PASS (host 1's uabid $( ((relay)) && echo relaying || echo steering), relayed ${relayed:-0} datagrams)"
	else
		echo "run-two-hosts: two pairs sharing each host's port: FAIL (exit codes$rcs)"
		tail -n 5 "$log"/two.*
		fails=$((fails + 1))
	fi
	# Nothing left behind in either uabid.
	for h in $A $B; do
		left=$(ip netns exec $h env UABI_SOCKET="$log/$h/uabid.sock" "$tool" objects)
		if [[ $left != "no live objects" ]]; then
			echo "run-two-hosts: objects left in $h's uabid: FAIL"
			echo "$left"
			fails=$((fails + 1))
		fi
	done
	for h in $A $B; do
		ip netns exec $h env UABI_SOCKET="$log/$h/uabid.sock" "$tool" daemon stop >/dev/null
	done
	if ((fails)); then
		echo "run-two-hosts: FAIL ($fails; logs in $log)"
		exit 1
	fi
	rm -rf "$log"
	echo "run-two-hosts: PASS (uabid)"
	exit 0
fi

# A lossy wire: both ends drop, reorder, repeat and delay — with the
# kernel's netem, or, on a kernel built without it (CONFIG_NET_SCH_NETEM),
# with the engine's own impairment of what it sends (UABI_WIRE_NETEM, the
# same percentages, no delay): said in the output either way.
netem=kernel
for pair_if in "$A uabi-h1" "$B uabi-h2"; do
	set -- $pair_if
	if ! ip netns exec "$1" tc qdisc add dev "$2" root netem loss 2% reorder 5% duplicate 1% delay 1ms \
		2>/dev/null; then
		netem=engine
	fi
done
if [[ $netem == engine ]]; then
	echo "run-two-hosts: this kernel has no netem qdisc: the engine drops 2 %, holds back 5 % and repeats 1 % of what it sends"
	export UABI_WIRE_NETEM="loss=2,reorder=5,duplicate=1"
fi
pair netem_rc_pingpong ibv_rc_pingpong -d roce0 -g 0 -n 300 -- ibv_rc_pingpong -d roce0 -g 0 -n 300
pair netem_rc_pingpong_64k ibv_rc_pingpong -d roce0 -g 0 -n 50 -s 65536 -- ibv_rc_pingpong -d roce0 -g 0 -n 50 -s 65536
pair netem_write_bw ib_write_bw -d roce0 -x 0 -F -n 300 -p 19651 -- ib_write_bw -d roce0 -x 0 -F -n 300 -p 19651
pair netem_read_lat ib_read_lat -d roce0 -x 0 -F -n 300 -p 19652 -- ib_read_lat -d roce0 -x 0 -F -n 300 -p 19652
unset UABI_WIRE_NETEM
for pair_if in "$A uabi-h1" "$B uabi-h2"; do
	set -- $pair_if
	ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null
done

# A peer that vanishes: a writer with RDMA WRITEs always outstanding
# (ib_write_bw for 20 s) whose server is killed ends in "Failed status
# 12" (RETRY_EXC_ERR) within timeout 14 (67 ms) x (retry_cnt 7 + 1), well
# under 5 s.  (A program waiting only for a message, with nothing of its
# own outstanding, never learns it: RC has no keepalive.)
host $A uabi-h1 timeout 60 ib_write_bw -d roce0 -x 0 -F -D 20 -p 19653 >"$log/vanish.server" 2>&1 &
spid=$!
sleep 0.5
cpid=""
for try in 1 2 3 4 5 6 7 8 9 10; do
	host $B uabi-h2 timeout 60 ib_write_bw -d roce0 -x 0 -F -D 20 -p 19653 10.88.0.1 \
		>"$log/vanish.client" 2>&1 &
	cpid=$!
	sleep 2
	grep -q "Unable to init the socket connection" "$log/vanish.client" || break
	wait $cpid
done
ip netns pids $A | xargs -r kill -9
t0=$(date +%s%N)
wait $cpid
crc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
wait $spid 2>/dev/null
if ((crc != 0)) && grep -q "Failed status 12" "$log/vanish.client" && ((ms < 5000)); then
	echo "run-two-hosts: vanished peer: PASS (RETRY_EXC_ERR ${ms} ms after the server was killed)"
else
	echo "run-two-hosts: vanished peer: FAIL (exit $crc after ${ms} ms)"
	tail -n 5 "$log/vanish.client"
	fails=$((fails + 1))
fi

if ((fails)); then
	echo "run-two-hosts: FAIL ($fails; logs in $log)"
	exit 1
fi
rm -rf "$log"
echo "run-two-hosts: PASS"
