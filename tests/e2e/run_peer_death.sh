#!/usr/bin/env bash
# A peer that dies mid-transfer yields error completions, never a hang:
# runs PROG as server and client (as run_pair.sh does), kills the server
# with SIGKILL while they exchange, and requires the client to report a
# failed work completion and exit within SECONDS.  The kill comes half a
# second after the client printed a line matching RUNNING_REGEX (the
# transfer has begun).
#
#   run_peer_death.sh LIB UABI_TOOL PORT SECONDS RUNNING_REGEX PROG [ARGS...]
#
# With SERVER_ENV (VAR=VALUE, given to the server only), the server is
# expected to die by itself (UABI_TEST_KILL_AFTER_ARM: a SIGKILL at a chosen
# moment of the data path, docs/datapath.md) instead of being killed.
set -u
lib=$1 tool=$2 port=$3 secs=$4 running=$5
shift 5
prog=$1
shift

# A sanitizer build's library needs its runtime loaded first.
lib=${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$lib
dir=$(mktemp -d /tmp/uabi-e2e.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon UABI_IDLE_EXIT=30
cleanup() {
	[[ -n ${spid:-} ]] && kill -9 "$spid" 2>/dev/null
	[[ -n ${cpid:-} ]] && kill -9 "$cpid" 2>/dev/null
	"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT

"$tool" --socket "$UABI_SOCKET" daemon start >/dev/null 2>&1 || { echo "FAIL: uabid"; exit 1; }
LD_PRELOAD=$lib ${SERVER_ENV:+env "$SERVER_ENV"} "$prog" -p "$port" "$@" >"$dir/server.out" 2>&1 &
spid=$!
for _ in $(seq 100); do
	ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
	sleep 0.05
done
LD_PRELOAD=$lib stdbuf -o0 -e0 "$prog" -p "$port" "$@" localhost >"$dir/client.out" 2>&1 &
cpid=$!
for _ in $(seq 600); do
	grep -Eq "$running" "$dir/client.out" && break
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.05
done
if [[ -n ${SERVER_ENV:-} ]]; then
	start=$(date +%s)
	while kill -0 "$spid" 2>/dev/null && (($(date +%s) - start < secs)); do
		sleep 0.05
	done
	wait "$spid" 2>/dev/null
	src=$?
	spid=
	if ((src != 137)); then
		echo "FAIL: the server did not die of SIGKILL (status $src)"; cat "$dir/server.out"; exit 1
	fi
else
	sleep 0.5
	if ! kill -0 "$cpid" 2>/dev/null; then
		echo "FAIL: the client ended before the server was killed"; cat "$dir/client.out"; exit 1
	fi
	kill -9 "$spid"
	wait "$spid" 2>/dev/null
	spid=
fi
start=$(date +%s)
while kill -0 "$cpid" 2>/dev/null && (($(date +%s) - start < secs)); do
	sleep 0.1
done
if kill -0 "$cpid" 2>/dev/null; then
	echo "FAIL: the client still runs ${secs}s after its peer died"; exit 1
fi
wait "$cpid"
crc=$?
cpid=
echo "--- client after the server's death: exit $crc, $(( $(date +%s) - start ))s"
cat "$dir/client.out"
if ((crc != 0)) && grep -Eqi 'failed status|completion with error|wc.*error' "$dir/client.out"; then
	echo PASS
	exit 0
fi
echo "FAIL: expected an error completion and a failing exit"
exit 1
