#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# pingpong.sh UABI [SIZE]: Debian's unmodified ibv_rc_pingpong, server and
# client as two processes under `UABI run --`, on a free TCP port; both
# must exit 0 and report the bytes they moved.  Prints both outputs.
set -uo pipefail
uabi=$1
size=${2:-4096}
port=""
for _ in $(seq 50); do
	p=$((20000 + RANDOM % 20000))
	if ! ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
		port=$p
		break
	fi
done
[[ -n $port ]] || { echo "pingpong: no free port" >&2; exit 1; }
out=$(mktemp -d)
timeout 60 "$uabi" run -- ibv_rc_pingpong -p "$port" -s "$size" -n 100 >"$out/server" 2>&1 &
server=$!
for _ in $(seq 200); do
	ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
	sleep 0.05
done
crc=0
timeout 60 "$uabi" run -- ibv_rc_pingpong -p "$port" -s "$size" -n 100 localhost \
	>"$out/client" 2>&1 || crc=$?
src=0
wait "$server" || src=$?
echo "-- server (exit $src)"
cat "$out/server"
echo "-- client (exit $crc)"
cat "$out/client"
ok=1
((src == 0 && crc == 0)) || ok=0
for side in server client; do
	grep -qE "^$((size * 100 * 2)) bytes in [0-9.]+ seconds" "$out/$side" || ok=0
done
rm -rf "$out"
((ok)) || { echo "pingpong: FAILED" >&2; exit 1; }
echo "pingpong: both sides moved $((size * 100 * 2)) bytes"
