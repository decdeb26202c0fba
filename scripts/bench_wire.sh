#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# RoCEv2 between two network namespaces against plain UDP on the same veth
# (docs/bench.md, "RoCEv2 between two namespaces"; issue 18's speed
# targets).  Makes two namespaces joined by a veth pair (10.89.0.1 and
# 10.89.0.2, removed at the end; no other address is involved), then in
# one run:
#   UDP stream of 1040-byte datagrams (a 1024-byte RoCE payload with its
#   BTH and ICRC: what ib_write_bw sends at the veth's path MTU) against
#   ib_write_bw 64 KiB; UDP ping-pong of 20 bytes (a 2-byte SEND's
#   datagram) against ib_send_lat 2 B — on the in-process backend and on
#   uabid (the relay).  Needs root.
#
# Usage: bench_wire.sh BUILD_DIR [OUT_MARKDOWN]   (UABI_BENCH_QUICK=1: shorter)
set -uo pipefail
build=${1:?usage: bench_wire.sh BUILD_DIR [OUT_MARKDOWN]}
out=${2:-}
build=$(cd "$build" && pwd)
probe=$build/bench/udp_probe
tool=$build/newapi/tools/uabi
verbs=$build/compat/verbs/libibverbs.so.1
inproc=$build/kernel/libuabi_inproc.so
for f in "$probe" "$tool" "$verbs" "$inproc"; do
	[[ -e $f ]] || { echo "bench_wire: missing $f (build first)" >&2; exit 1; }
done
[[ $(id -u) == 0 ]] || { echo "bench_wire: needs root (network namespaces)" >&2; exit 1; }
secs=5 lat_n=5000
[[ ${UABI_BENCH_QUICK:-0} == 1 ]] && secs=2 lat_n=1000

A=uabi-bw1-$$ B=uabi-bw2-$$
work=$(mktemp -d /tmp/uabi-bench-wire.XXXXXX)
cleanup() {
	for n in $A $B; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
ip netns add $A && ip netns add $B || exit 1
ip -n $A link add uabi-bw1 type veth peer name uabi-bw2 netns $B || exit 1
ip -n $A addr add 10.89.0.1/24 dev uabi-bw1 && ip -n $B addr add 10.89.0.2/24 dev uabi-bw2
for n in $A $B; do ip -n $n link set lo up; done
ip -n $A link set uabi-bw1 up && ip -n $B link set uabi-bw2 up
sleep 1

step() { echo "bench_wire: $*" >&2; }

step "UDP stream, 1040-byte datagrams, ${secs} s"
ip netns exec $A "$probe" sink 19700 "$secs" >"$work/sink" &
sink=$!
sleep 0.3
ip netns exec $B "$probe" stream 10.89.0.1 19700 1040 "$secs" >/dev/null
wait $sink
udp_bw=$(grep -o '[0-9.]* MB/s' "$work/sink" | cut -d' ' -f1)
step "UDP ping-pong, 20 bytes, $lat_n times"
ip netns exec $A "$probe" echo 19701 "$lat_n" &
echo_pid=$!
sleep 0.3
udp_lat=$(ip netns exec $B "$probe" ping 10.89.0.1 19701 20 "$lat_n" | grep -o 'median [0-9.]*' | cut -d' ' -f2)
wait $echo_pid
# The same with both sides spinning on their sockets, as perftest spins
# on its CQ (a sleeping side waits for a wake-up, which on an idle
# virtual machine includes waking a halted CPU).
step "UDP ping-pong, 20 bytes, $lat_n times, both sides spinning"
ip netns exec $A env UDP_PROBE_SPIN=1 "$probe" echo 19704 "$lat_n" &
echo_pid=$!
sleep 0.3
udp_spin=$(ip netns exec $B env UDP_PROBE_SPIN=1 "$probe" ping 10.89.0.1 19704 20 "$lat_n" |
	grep -o 'median [0-9.]*' | cut -d' ' -f2)
wait $echo_pid

# run BACKEND NS IF PROG ARGS...: a perftest side on host NS.
run() {
	local be=$1 ns=$2 ifname=$3
	shift 3
	if [[ $be != inproc ]]; then
		ip netns exec "$ns" env UABI_BACKEND=daemon UABI_SOCKET="$work/$ns/$be.sock" UABI_AUTOSTART=0 \
			LD_PRELOAD="$verbs" timeout 120 "$@"
	else
		ip netns exec "$ns" env UABI_BACKEND=inproc UABI_INPROC_LIB="$inproc" UABI_LINKS="roce0:$ifname" \
			LD_PRELOAD="$verbs" timeout 120 "$@"
	fi
}
# perf BACKEND TAG PROG ARGS...: server on host 1, client on host 2; the
# client's result line in $work/TAG.
perf() {
	local be=$1 tag=$2
	shift 2
	run "$be" $A uabi-bw1 "$@" >"$work/$tag.server" 2>&1 &
	local s=$!
	sleep 0.5
	for try in 1 2 3 4 5; do
		run "$be" $B uabi-bw2 "$@" 10.89.0.1 >"$work/$tag" 2>&1
		grep -q "Unable to init the socket connection" "$work/$tag" || break
		sleep 0.5
	done
	wait $s
}
declare -A bw lat
# daemon: uabid steers each QP's datagrams to its process's socket;
# relay: uabid relays every datagram (UABI_WIRE_STEER=0).
stop_daemons() {
	for h in $A $B; do
		ip netns exec $h env UABI_SOCKET="$work/$h/$1.sock" "$tool" daemon stop >/dev/null 2>&1
	done
}
for be in inproc daemon relay; do
	if [[ $be != inproc ]]; then
		for h in "$A uabi-bw1" "$B uabi-bw2"; do
			set -- $h
			mkdir -p "$work/$1"
			ip netns exec "$1" env UABI_SOCKET="$work/$1/$be.sock" UABI_IDLE_EXIT=0 \
				UABI_WIRE_STEER=$([[ $be == relay ]] && echo 0 || echo 1) \
				"$tool" link add roce0 netdev "$2" >/dev/null || exit 1
		done
	fi
	step "$be: ib_write_bw 64 KiB, ${secs} s"
	perf $be bw-$be ib_write_bw -d roce0 -x 0 -F -s 65536 -D "$secs" -p 19702
	bw[$be]=$(awk '$1 == 65536 {print $4}' "$work/bw-$be" | tail -1)
	step "$be: ib_send_lat 2 B, $lat_n iterations"
	perf $be lat-$be ib_send_lat -d roce0 -x 0 -F -s 2 -n "$lat_n" -p 19703
	lat[$be]=$(awk '$1 == 2 {print $5}' "$work/lat-$be" | tail -1)
	[[ $be != inproc ]] && stop_daemons $be
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "?"; else printf "%.2f", a / b }'; }
{
	echo "| measure | UDP on the veth | in-process | ÷ UDP | uabid (steered) | ÷ UDP | uabid (relay) | ÷ UDP | target |"
	echo "|---|---|---|---|---|---|---|---|---|"
	echo "| 64 KiB writes, MB/s (UDP: 1040-byte stream) | ${udp_bw:-?} | ${bw[inproc]:-?} | $(ratio "${bw[inproc]:-}" "${udp_bw:-}") | ${bw[daemon]:-?} | $(ratio "${bw[daemon]:-}" "${udp_bw:-}") | ${bw[relay]:-?} | $(ratio "${bw[relay]:-}" "${udp_bw:-}") | ≥ 0.80 |"
	echo "| 2 B one way, µs (UDP: half round trip, sides sleeping in recv; perftest: typical) | ${udp_lat:-?} | ${lat[inproc]:-?} | $(ratio "${lat[inproc]:-}" "${udp_lat:-}") | ${lat[daemon]:-?} | $(ratio "${lat[daemon]:-}" "${udp_lat:-}") | ${lat[relay]:-?} | $(ratio "${lat[relay]:-}" "${udp_lat:-}") | ≤ 1.5 |"
	echo "| 2 B one way, µs (UDP: half round trip, sides spinning; perftest: typical) | ${udp_spin:-?} | ${lat[inproc]:-?} | $(ratio "${lat[inproc]:-}" "${udp_spin:-}") | ${lat[daemon]:-?} | $(ratio "${lat[daemon]:-}" "${udp_spin:-}") | ${lat[relay]:-?} | $(ratio "${lat[relay]:-}" "${udp_spin:-}") | ≤ 1.5 |"
} >"$work/table.md"
cat "$work/table.md"
[[ -n $out ]] && cp "$work/table.md" "$out"
exit 0
