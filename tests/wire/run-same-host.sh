#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Peers on one host keep shared memory on a RoCE device (docs/wire.md,
# "Peers on this host"): a uabid of its own with a RoCE device on lo, and
# unmodified programs between two processes of this host:
#  - by default no packet crosses the wire (UABI_WIRE_TRACE stays empty)
#    and the payloads check out;
#  - with UABI_WIRE_FORCE=1 on both sides every message is RoCEv2 packets;
#  - with it on one side only, that side sends packets and the other
#    shared memory, and the programs still pass;
#  - `uabi link del` under ibv_asyncwatch: it hears IBV_EVENT_DEVICE_FATAL,
#    and the device goes once the program is gone.
# Usage: run-same-host.sh UABI_TOOL
set -uo pipefail
tool=$1
dir=$(mktemp -d /tmp/uabi-same-host.XXXXXX)
chmod 755 "$dir"
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon
trap '"$tool" daemon stop >/dev/null 2>&1; rm -rf "$dir"' EXIT
UABI_WIRE_PORT=$((20000 + RANDOM % 20000)) UABI_IDLE_EXIT=0 "$tool" link add roce_lo netdev lo >"$dir/link" 2>&1 ||
	{ echo "run-same-host: FAIL: uabi link add"; cat "$dir/link"; exit 1; }
fails=0
port=$((30000 + RANDOM % 20000))

# run NAME SERVER_FORCE CLIENT_FORCE PROG ARGS...: server and client on
# roce_lo; fails unless both exit 0.  Traces in $dir/NAME.{server,client}.trace.
run() {
	local name=$1 sf=$2 cf=$3
	shift 3
	port=$((port + 1))
	UABI_WIRE_FORCE=$sf UABI_WIRE_TRACE=$dir/$name.server.trace timeout 60 \
		"$tool" run -- "$@" -p $port >"$dir/$name.server" 2>&1 &
	local s=$! crc=1
	for try in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		UABI_WIRE_FORCE=$cf UABI_WIRE_TRACE=$dir/$name.client.trace timeout 60 \
			"$tool" run -- "$@" -p $port 127.0.0.1 >"$dir/$name.client" 2>&1
		crc=$?
		grep -qE "Couldn't connect|Unable to init the socket connection" "$dir/$name.client" || break
	done
	wait $s
	local src=$?
	if ((src || crc)); then
		echo "run-same-host: $name: FAIL (server $src, client $crc)"
		tail -n 4 "$dir/$name.server" "$dir/$name.client"
		fails=$((fails + 1))
		return 1
	fi
}
packets() { [[ -f $1 ]] && wc -l <"$1" || echo 0; }
expect() { # NAME SERVER_PACKETS(0|many) CLIENT_PACKETS(0|many)
	local name=$1 sp cp
	sp=$(packets "$dir/$name.server.trace") cp=$(packets "$dir/$name.client.trace")
	local ok=1
	[[ $2 == 0 ]] && ((sp != 0)) && ok=0
	[[ $2 == many ]] && ((sp < 10)) && ok=0
	[[ $3 == 0 ]] && ((cp != 0)) && ok=0
	[[ $3 == many ]] && ((cp < 10)) && ok=0
	if ((ok)); then
		echo "run-same-host: $name: PASS (server traced $sp packet lines, client $cp)"
	else
		echo "run-same-host: $name: FAIL (server traced $sp packet lines, client $cp; wanted $2 and $3)"
		fails=$((fails + 1))
	fi
}

# MODE SERVER_FORCE CLIENT_FORCE, then the packets each side's trace must
# show for rc_pingpong and for ib_write_bw.  Mixed: the forced server sends
# packets (its trace: sent; the client's: received) and receives by shared
# memory; ib_write_bw's client writes by shared memory and its server
# sends nothing.
for f in "shared 0 0 0 0 0 0" "forced 1 1 many many many many" "mixed 1 0 many many 0 0"; do
	set -- $f
	mode=$1 sf=$2 cf=$3
	# ibv_rc_pingpong -c checks every payload it receives.
	run rc_$mode $sf $cf ibv_rc_pingpong -d roce_lo -g 0 -n 200 -c && expect rc_$mode $4 $5
	run write_bw_$mode $sf $cf ib_write_bw -d roce_lo -x 0 -F -n 200 && expect write_bw_$mode $6 $7
done
# Deleted under a program watching its async events (ibv_asyncwatch): it
# hears IBV_EVENT_DEVICE_FATAL, and once it is gone the device goes.
"$tool" run -- ibv_asyncwatch -d roce_lo >"$dir/asyncwatch" 2>&1 &
aw=$!
sleep 0.5
UABI_LINK_DEL_WAIT=30 "$tool" link del roce_lo >"$dir/del" 2>&1 &
del=$!
for i in $(seq 100); do
	grep -q IBV_EVENT_DEVICE_FATAL "$dir/asyncwatch" && break
	sleep 0.1
done
kill $aw 2>/dev/null
wait $aw 2>/dev/null
wait $del
drc=$?
if grep -q IBV_EVENT_DEVICE_FATAL "$dir/asyncwatch" && ((drc == 0)) && ! "$tool" link | grep -q "^link roce_lo/"; then
	echo "run-same-host: device-fatal: PASS ($(grep -m1 DEVICE_FATAL "$dir/asyncwatch" | sed 's/^ *//'))"
else
	echo "run-same-host: device-fatal: FAIL (link del exit $drc)"
	cat "$dir/asyncwatch" "$dir/del"
	fails=$((fails + 1))
fi
left=$("$tool" objects)
if [[ $left != "no live objects" ]]; then
	echo "run-same-host: objects left in uabid: FAIL"
	echo "$left"
	fails=$((fails + 1))
fi
if ((fails)); then
	echo "run-same-host: FAIL ($fails)"
	exit 1
fi
echo "run-same-host: PASS"
