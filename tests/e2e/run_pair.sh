#!/usr/bin/env bash
# Runs an unmodified RDMA program as server and client, two processes on
# localhost, on our libibverbs.so.1 (LD_PRELOAD) and the daemon backend,
# each test with its own uabid.  Checks both exit statuses and that both
# printed their success line.
#
#   run_pair.sh LIB UABI_TOOL PORT SECONDS EXPECT_REGEX PROG [ARGS...]
#
# The server runs `PROG -p PORT ARGS`, the client `PROG -p PORT ARGS
# localhost`.  EXPECT_REGEX (grep -E) must match a line of each output;
# prefixed with "client:", of the client's only (perftest's read and
# atomic latency servers print no result).
set -u
lib=$1 tool=$2 port=$3 secs=$4 expect=$5
shift 5
prog=$1
shift

# How the programs get our library: LD_PRELOAD (default), or with
# E2E_LOAD=libpath through LD_LIBRARY_PATH, where ours replaces the real
# one for every library that needs libibverbs.so.1 (perftest's libmlx5 and
# libefa too).  A sanitizer build's library needs its runtime loaded first.
if [[ ${E2E_LOAD:-preload} == libpath ]]; then
	export LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	lib=${E2E_PRELOAD_FIRST:-}
else
	lib=${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$lib
fi
dir=$(mktemp -d /tmp/uabi-e2e.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon UABI_IDLE_EXIT=30
cleanup() {
	[[ -n ${spid:-} ]] && kill "$spid" 2>/dev/null
	"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT

if ! "$tool" --socket "$UABI_SOCKET" daemon start >"$dir/daemon.out" 2>&1; then
	echo "FAIL: cannot start uabid"; cat "$dir/daemon.out"; exit 1
fi

LD_PRELOAD=$lib timeout "$secs" "$prog" -p "$port" "$@" >"$dir/server.out" 2>&1 &
spid=$!
# The client may connect only once the server listens.
for _ in $(seq 100); do
	ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.05
done
LD_PRELOAD=$lib timeout "$secs" "$prog" -p "$port" "$@" localhost >"$dir/client.out" 2>&1
crc=$?
wait "$spid"
src=$?
spid=

echo "--- server ($prog $*): exit $src"
cat "$dir/server.out"
echo "--- client: exit $crc"
cat "$dir/client.out"
ok=1
((src == 0 && crc == 0)) || ok=0
if [[ $expect == client:* ]]; then
	expect=${expect#client:}
else
	grep -Eq "$expect" "$dir/server.out" || { echo "server: no line matching /$expect/"; ok=0; }
fi
grep -Eq "$expect" "$dir/client.out" || { echo "client: no line matching /$expect/"; ok=0; }
# Nothing the real libibverbs would print (no provider, no stray device).
if grep -Eqi 'libibverbs: Warning|couldn.t load driver' "$dir/server.out" "$dir/client.out"; then
	echo "unexpected libibverbs warning"; ok=0
fi
((ok)) && echo PASS || echo FAIL
((ok))
