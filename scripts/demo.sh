#!/usr/bin/env bash
# The project's main job (`make demo`): builds, then runs Debian's
# unmodified ibv_rc_pingpong, server and client as two processes, over the
# drop-in libibverbs.so.1 on the default backend (the kernel module's
# /dev/rdma_uabi if loaded, else uabid, started on demand).  Then the
# newapi example, which drives the object uAPI directly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --no-kernel
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build uabi uabid uabi_verbs uabi-demo
uabi=build/newapi/tools/uabi
port=${UABI_DEMO_PORT:-18515}
size=${UABI_DEMO_SIZE:-65536}

echo
echo "== ibv_rc_pingpong over rdma-uabi: $uabi run -- ibv_rc_pingpong -s $size"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
timeout 60 "$uabi" run -- ibv_rc_pingpong -p "$port" -s "$size" >"$out/server" 2>&1 &
server=$!
for _ in $(seq 100); do
	ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
	sleep 0.05
done
crc=0
timeout 60 "$uabi" run -- ibv_rc_pingpong -p "$port" -s "$size" localhost >"$out/client" 2>&1 || crc=$?
src=0
wait "$server" || src=$?
echo "-- server (exit $src)"
cat "$out/server"
echo "-- client (exit $crc)"
cat "$out/client"
echo
"$uabi" status || true
if ((src || crc)); then
	echo "demo: ibv_rc_pingpong failed" >&2
	exit 1
fi

echo
echo "== the newapi example on the in-process backend"
UABI_BACKEND=inproc build/newapi/uabi-demo
