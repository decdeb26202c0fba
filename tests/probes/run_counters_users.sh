#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Each user sees its own traffic on the port (docs/fsview.md, "Port
# counters"; docs/security.md): on one `uabid --shared`, root moves known
# traffic (port_traffic --keep, its counters grow), then uid 65534 runs
# port_traffic --expect-fresh beside it — its counters start at 0, none of
# root's traffic shows — moves its own and clears its own; root's counters
# must then read exactly what they read before.
#
#   run_counters_users.sh UABID UABI_TOOL PORT_TRAFFIC
set -u
uabid=$1 tool=$2 traffic=$3
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (another user's traffic is made as uid 65534)"
	exit 77
fi
sp=""
for c in /usr/bin/setpriv /bin/setpriv setpriv; do
	if "$c" --help 2>&1 | grep -q reuid; then
		sp=$c
		break
	fi
done
[ -n "$sp" ] || { echo "FAIL: setpriv (util-linux) not found"; exit 1; }
dir=$(mktemp -d /tmp/uabi-counters.XXXXXX)
chmod 1777 "$dir"	# a shared directory, as /tmp is
sock=$dir/uabid.sock
export UABI_SOCKET=$sock UABI_BACKEND=daemon UABI_DAEMON_LOG=$dir/uabid.log
cleanup() {
	"$tool" --socket "$sock" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
if ! "$uabid" --shared --socket "$sock" --idle-exit 0 >"$dir/start.out" 2>&1 || [ ! -S "$sock" ]; then
	echo "FAIL: cannot start uabid --shared"
	cat "$dir/start.out"
	exit 1
fi
for f in "$tool" "$traffic"; do
	if ! $sp --reuid=65534 --regid=65534 --clear-groups test -x "$f" 2>/dev/null; then
		echo "FAIL: uid 65534 cannot run $f: the build tree must lie where every user may read it"
		exit 1
	fi
done
nobody="$sp --reuid=65534 --regid=65534 --clear-groups env HOME=$dir TMPDIR=$dir \
$tool run -- $traffic --expect-fresh"
timeout 180 "$tool" run -- "$traffic" --keep --then "$nobody"
rc=$?
[ $rc = 0 ] && echo "PASS: each user's counters are its own" && exit 0
echo "FAIL: each user's counters are its own (port_traffic exited $rc)"
exit 1
