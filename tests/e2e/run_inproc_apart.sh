#!/usr/bin/env bash
# Two processes of one host on the in-process backend do not reach each
# other (docs/datapath.md, "Limitations"): each has a device of its own,
# and numbers its QPs apart from the other's, so an unmodified
# ibv_rc_pingpong pair fails as it would between two hosts no fabric
# joins: the client's sends run out of retries ("transport retry counter
# exceeded") rather than reaching a QP of its own process that has the
# server's number.
#
#   run_inproc_apart.sh UABI_TOOL PORT
set -u
tool=$1 port=$2
command -v ibv_rc_pingpong >/dev/null || { echo "SKIP: ibv_rc_pingpong not installed"; exit 77; }
dir=$(mktemp -d /tmp/uabi-apart.XXXXXX)
spid=
cleanup() {
	[[ -n $spid ]] && kill "$spid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
export UABI_BACKEND=inproc

qpn() { grep -m1 'local address' "$1" | grep -o 'QPN 0x[0-9a-f]*'; }

# Two processes whose pids are equal modulo 1024 share a range of QP
# numbers (the documented exception): then the pair is run again.
for attempt in 1 2 3; do
	timeout 20 "$tool" run --backend inproc -- ibv_rc_pingpong -g 0 -n 5 -p "$port" \
		>"$dir/server.out" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	timeout 20 "$tool" run --backend inproc -- ibv_rc_pingpong -g 0 -n 5 -p "$port" localhost \
		>"$dir/client.out" 2>&1
	crc=$?
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	spid=
	echo "--- attempt $attempt: client exit $crc"
	cat "$dir/client.out"
	echo "--- server"
	cat "$dir/server.out"
	if [[ -n $(qpn "$dir/client.out") && $(qpn "$dir/client.out") == $(qpn "$dir/server.out") ]]; then
		echo "(the two processes numbered their QPs alike: again)"
		port=$((port + 1))
		continue
	fi
	if ((crc != 0)) && grep -q 'transport retry counter exceeded' "$dir/client.out" &&
		! grep -q 'iters in' "$dir/client.out" "$dir/server.out"; then
		echo "PASS: the client's sends ran out of retries; neither side finished"
		exit 0
	fi
	echo "FAIL: the client did not fail as between hosts no fabric joins"
	exit 1
done
echo "FAIL: three attempts numbered their QPs alike"
exit 1
