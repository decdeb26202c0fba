#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# A RoCE device's port state in the view follows its interface (ctest label
# probes, docs/fsview.md): in a network namespace of its own, whose `lo` is
# down, a uabid of its own and `uabi link add rdown netdev lo`; the view
# shows the port DOWN/Disabled with an empty GID table and still names the
# interface (uabid's list of links says which); `ip link set lo up`, and
# the next view shows it ACTIVE/LinkUp with GID 0 ::ffff:127.0.0.1 (RoCE v2
# on lo).
#
#   run_roce_down.sh UABI_TOOL
set -u
tool=$1

if [ -z "${UABI_ROCE_DOWN_INSIDE:-}" ]; then
	# root: a network namespace; others: a user namespace with it.
	for u in "unshare -n" "unshare -rn"; do
		if $u true 2>/dev/null; then
			UABI_ROCE_DOWN_INSIDE=1 $u sh "$0" "$@"
			exit $?
		fi
	done
	echo "SKIP: no network namespace can be made here"
	exit 77
fi

dir=$(mktemp -d /tmp/uabi-roce-down.XXXXXX)
export UABI_BACKEND=daemon UABI_FSVIEW=namespace UABI_SOCKET=$dir/uabid.sock UABI_IDLE_EXIT=30
cleanup() {
	"$tool" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
ok=1
bad() {
	echo "FAIL: $*"
	ok=0
}
ip link set lo down 2>/dev/null
"$tool" daemon start >"$dir/daemon.out" 2>&1 || { cat "$dir/daemon.out"; echo "FAIL: uabid"; exit 1; }
"$tool" link add rdown netdev lo || { echo "FAIL: uabi link add rdown netdev lo"; exit 1; }

show='p=/sys/class/infiniband/rdown/ports/1
for f in $p/state $p/phys_state $p/link_layer $p/gids/0 $p/gid_attrs/types/0 $p/gid_attrs/ndevs/0 \
	/sys/class/infiniband/rdown/parent; do
	printf "%s=%s\n" "${f#/sys/class/infiniband/rdown/}" "$(cat $f)"
done
ls /sys/class/infiniband/rdown/device/net'
has() { grep -qxF -- "$2" "$dir/$1.out" || bad "$1: no line '$2'"; }

timeout 60 "$tool" run -- sh -c "$show" >"$dir/down.out" 2>&1
echo "--- lo down"
cat "$dir/down.out"
has down "ports/1/state=1: DOWN"
has down "ports/1/phys_state=3: Disabled"
has down "ports/1/link_layer=Ethernet"
has down "ports/1/gids/0=0000:0000:0000:0000:0000:0000:0000:0000"
has down "ports/1/gid_attrs/types/0="
has down "ports/1/gid_attrs/ndevs/0="
has down "parent=lo"
has down "lo"

ip link set lo up || bad "ip link set lo up"
# uabid's address monitor takes the new addresses in: wait until it lists
# them (bounded), then look.
i=0
until "$tool" link 2>/dev/null | grep -q "rdown/1 state ACTIVE.* gids [1-9]"; do
	i=$((i + 1))
	[ $i -gt 100 ] && { bad "uabid never saw lo up"; break; }
	sleep 0.1
done
timeout 60 "$tool" run -- sh -c "$show" >"$dir/up.out" 2>&1
echo "--- lo up"
cat "$dir/up.out"
has up "ports/1/state=4: ACTIVE"
has up "ports/1/phys_state=5: LinkUp"
has up "ports/1/gids/0=0000:0000:0000:0000:0000:ffff:7f00:0001"
has up "ports/1/gid_attrs/types/0=RoCE v2"
has up "ports/1/gid_attrs/ndevs/0=lo"

[ $ok = 1 ] && echo "PASS: a RoCE port's state and GIDs in the view follow its interface" && exit 0
echo "FAIL: a RoCE port's state and GIDs in the view"
exit 1
