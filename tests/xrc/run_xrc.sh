#!/usr/bin/env bash
# Runs one XRC test program (tests/xrc) on the daemon backend with its own
# uabid on a private socket, and stops that daemon afterwards.  The
# program's exit status is the test's.
#
#   run_xrc.sh UABI_TOOL PROG [ARGS...]
set -u
tool=$1
shift
dir=$(mktemp -d /tmp/uabi-xrc-run.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon UABI_IDLE_EXIT=30 TMPDIR=$dir
cleanup() {
	"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT

if ! "$tool" --socket "$UABI_SOCKET" daemon start >"$dir/daemon.out" 2>&1; then
	echo "FAIL: cannot start uabid"
	cat "$dir/daemon.out"
	exit 1
fi
timeout -k 5 150 "$@"
rc=$?
((rc == 124)) && echo "FAIL: $1 timed out"
exit $rc
