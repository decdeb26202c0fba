#!/usr/bin/env bash
# Runs one XRC test program (tests/xrc) on the daemon backend with its own
# uabid on a private socket, and stops that daemon afterwards.  The
# program's exit status is the test's.
#
#   run_xrc.sh [--wire] UABI_TOOL PROG [ARGS...]
#
# --wire: on a RoCE device on lo (uabid's, at a port of its own) instead of
# uabi_sw0, so every XRC message is RoCEv2 packets and each receive QP is
# served on the wire by one process that holds it at a time (docs/wire.md,
# "XRC").  The test then also fails unless XRC requests crossed the wire
# (the packet trace) and uabid holds no object afterwards.
set -u
wire=0
[[ ${1-} == --wire ]] && wire=1 && shift
tool=$1
shift
dir=$(mktemp -d /tmp/uabi-xrc-run.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon UABI_IDLE_EXIT=30 TMPDIR=$dir
cleanup() {
	"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT

if ((wire)); then
	export UABI_WIRE_PORT=$((20000 + RANDOM % 20000))
fi
if ! "$tool" --socket "$UABI_SOCKET" daemon start >"$dir/daemon.out" 2>&1; then
	echo "FAIL: cannot start uabid"
	cat "$dir/daemon.out"
	exit 1
fi
if ((wire)); then
	if ! "$tool" link add xrc_lo netdev lo >"$dir/link.out" 2>&1; then
		echo "FAIL: uabi link add xrc_lo netdev lo"
		cat "$dir/link.out"
		exit 1
	fi
	export XRC_DEVICE=xrc_lo XRC_GID_INDEX=0 UABI_WIRE_TRACE=$dir/trace
fi
timeout -k 5 150 "$@"
rc=$?
((rc == 124)) && echo "FAIL: $1 timed out"
if ((wire)); then
	# XRC SEND requests (opcodes 0xa0..0xa5) received, by how many
	# processes (the trace line ends with the receiver's pid).
	rx=$(grep -cE " rx op a[0-5] " "$dir/trace" 2>/dev/null)
	servers=$(grep -E " rx op a[0-5] " "$dir/trace" 2>/dev/null | awk '{print $NF}' | sort -u | wc -l)
	if ((${rx:-0} > 0)); then
		echo "ok   wire: $rx XRC SEND packets received on the wire, traced by $servers process(es)"
	else
		echo "FAIL wire: no XRC SEND packet crossed the wire"
		rc=1
	fi
	left=$("$tool" objects 2>&1)
	if [[ $left != "no live objects" ]]; then
		echo "FAIL wire: objects left in uabid:"
		echo "$left"
		rc=1
	fi
fi
exit $rc
