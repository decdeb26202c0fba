#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# UD multicast to an IPv6 group across two hosts (docs/wire.md, "UD
# multicast"): two network namespaces joined by a veth pair with IPv6
# addresses only (fd00:77::1 and fd00:77::2, made and removed here; no
# other address is involved), each with a uabid of its own holding a RoCE
# device on its end, whose endpoint is therefore an IPv6 one.  Unmodified
# mckey under `uabi run`, each side bound to its device's address: the
# receiver on host B joins ff0e::1234 through the CM (the MGID is the
# group itself), then the sender on host A joins and sends 20 datagrams;
# the receiver ends only once it has all 20.  Then the other way round.
# With PCAP_ICRC, host A's end of the veth is captured: every RoCEv2
# packet must decode with Wireshark's InfiniBand dissector (none
# malformed) and pass pcap_icrc (ICRC over the real IPv6 header).
#
# Usage: run-mcast-v6.sh UABI_TOOL [PCAP_ICRC]
# UABI_TEST_NETNS_PREFIX: the namespaces' names start with it (default uabi-m6).
set -uo pipefail
tool=$(realpath "$1")
pcap_check=${2:+$(realpath "$2")}
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
for p in ip mckey stdbuf timeout; do
	command -v "$p" >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done

pre=${UABI_TEST_NETNS_PREFIX:-uabi-m6}
A=$pre-a-$$ B=$pre-b-$$
log=$(mktemp -d /tmp/uabi-mcast-v6.XXXXXX)
cleanup() {
	for n in $A $B; do
		ip netns exec "$n" env UABI_SOCKET="$log/$n.sock" "$tool" daemon stop >/dev/null 2>&1
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
}
trap cleanup EXIT
ip netns add $A && ip netns add $B || { echo "run-mcast-v6: FAIL: ip netns add"; exit 1; }
ip -n $A link add m6v1 type veth peer name m6v2 netns $B || { echo "run-mcast-v6: FAIL: veth"; exit 1; }
# No duplicate address detection: the addresses are usable at once.
ip -n $A addr add fd00:77::1/64 dev m6v1 nodad && ip -n $B addr add fd00:77::2/64 dev m6v2 nodad
for n in $A $B; do ip -n "$n" link set lo up; done
ip -n $A link set m6v1 up && ip -n $B link set m6v2 up

fails=0
for h in "$A m6v1 fd00:77::1" "$B m6v2 fd00:77::2"; do
	set -- $h
	if ! ip netns exec "$1" env UABI_SOCKET="$log/$1.sock" UABI_IDLE_EXIT=0 \
		"$tool" link add roce0 netdev "$2" >"$log/$1.link" 2>&1 ||
		! grep -q "roce0/1 state ACTIVE .*receives \[$3\]:4791" "$log/$1.link"; then
		echo "run-mcast-v6: FAIL: uabi link add roce0 netdev $2 in $1"
		cat "$log/$1.link"
		exit 1
	fi
done
on() {
	local ns=$1
	shift
	ip netns exec "$ns" env UABI_SOCKET="$log/$ns.sock" UABI_AUTOSTART=0 "$tool" run -- "$@"
}

cap_pid=""
if [[ -n $pcap_check ]]; then
	for p in dumpcap tshark; do
		command -v $p >/dev/null || { echo "run-mcast-v6: FAIL: missing $p (Debian's tshark)"; exit 1; }
	done
	ip netns exec $A dumpcap -q -P -i m6v1 -f "udp port 4791" -w "$log/mcast.pcap" 2>"$log/dumpcap.err" &
	cap_pid=$!
	sleep 1
fi

# mckey_pair NAME RECEIVER-NS RECEIVER-ADDR SENDER-NS SENDER-ADDR
mckey_pair() {
	local name=$1 rns=$2 raddr=$3 sns=$4 saddr=$5
	on "$rns" timeout 30 stdbuf -oL mckey -m ff0e::1234 -b "$raddr" -C 20 >"$log/$name.recv.out" 2>&1 &
	local rpid=$!
	for _ in $(seq 300); do
		grep -q 'mckey: joined' "$log/$name.recv.out" && break
		kill -0 $rpid 2>/dev/null || break
		sleep 0.1
	done
	on "$sns" timeout 30 stdbuf -oL mckey -m ff0e::1234 -b "$saddr" -s -C 20 >"$log/$name.send.out" 2>&1
	local crc=$?
	wait $rpid
	local rrc=$?
	if ((crc == 0 && rrc == 0)) && grep -q 'data transfers complete' "$log/$name.recv.out" &&
		grep -q 'return status 0' "$log/$name.recv.out" &&
		grep -q 'joined dgid: ff0e::1234 mlid 0x0' "$log/$name.send.out" &&
		grep -q 'joined dgid: ff0e::1234 mlid 0x0' "$log/$name.recv.out"; then
		echo "run-mcast-v6: $name: PASS (20 datagrams to ff0e::1234 received)"
	else
		echo "run-mcast-v6: $name: FAIL (sender $crc, receiver $rrc)"
		tail -n 8 "$log/$name".*
		fails=$((fails + 1))
	fi
}
mckey_pair mckey_a_to_b $B fd00:77::2 $A fd00:77::1
mckey_pair mckey_b_to_a $A fd00:77::1 $B fd00:77::2

if [[ -n $cap_pid ]]; then
	sleep 0.5
	kill -INT $cap_pid
	wait $cap_pid
	cap=$log/mcast.pcap
	total=$(tshark -r "$cap" -Y "udp.dstport == 4791" 2>/dev/null | wc -l)
	grp=$(tshark -r "$cap" -Y "ipv6.dst == ff0e::1234 && udp.dstport == 4791" 2>/dev/null | wc -l)
	ib=$(tshark -r "$cap" -d udp.port==4791,infiniband -Y "infiniband.bth.opcode" 2>/dev/null | wc -l)
	bad=$(tshark -r "$cap" -d udp.port==4791,infiniband \
		-Y '_ws.malformed || _ws.expert.severity >= "Error"' 2>/dev/null | wc -l)
	if ((grp >= 40 && ib == total && bad == 0)) && "$pcap_check" "$cap" >"$log/pcap_icrc" 2>&1; then
		echo "run-mcast-v6: capture: PASS ($total RoCEv2 packets, $grp to ff0e::1234, all decoded by tshark, none malformed; $(head -1 "$log/pcap_icrc" | cut -d: -f2-))"
	else
		echo "run-mcast-v6: capture: FAIL ($total packets to 4791, $grp to the group, $ib decoded as InfiniBand, $bad malformed or in error)"
		cat "$log/dumpcap.err" "$log/pcap_icrc" 2>/dev/null | tail -n 8
		fails=$((fails + 1))
	fi
fi

# Nothing left behind in either uabid.
sleep 0.5
for h in $A $B; do
	left=$(ip netns exec $h env UABI_SOCKET="$log/$h.sock" "$tool" objects 2>&1)
	if [[ $left != *"no live objects"* ]]; then
		echo "run-mcast-v6: objects left in $h's uabid: FAIL"
		echo "$left"
		fails=$((fails + 1))
	fi
done
if ((fails)); then
	echo "run-mcast-v6: FAIL ($fails; logs in $log)"
	exit 1
fi
rm -rf "$log"
echo "run-mcast-v6: PASS"
