#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Every device in the view (ctest label probes, docs/fsview.md): on a uabid
# of its own, a RoCE device on `lo` (`uabi link add`), then under `uabi run`
# the files a user of that device reads, with the values they would notice
# (link layer Ethernet, GID 0 = ::ffff:127.0.0.1 of type RoCE v2 on lo,
# uverbs1 = the RoCE device), check_devices (each device's files against
# its ibv_query_* answers and the umad numbering), and ibv_devinfo and
# ibstat as they print it.  Then the device is deleted, and the view shows
# uabi_sw0 alone again.
#
#   run_roce_view.sh UABI_TOOL CHECK_DEVICES [--view namespace|sysfs-path]
#                    [--as nobody]
#
# --as nobody: the same as uid 65534 (run as root; its uabid, its RoCE
# device and its view, in a user namespace).
set -u
tool=$1 check=$2
shift 2
view=namespace as=self
while [ $# -gt 0 ]; do
	case $1 in
	--view) view=$2; shift 2 ;;
	--as) as=$2; shift 2 ;;
	*) echo "run_roce_view: unknown argument $1"; exit 2 ;;
	esac
done

if [ "$as" = nobody ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: --as nobody needs root (the checks as this user are the other test)"
		exit 77
	fi
	d=$(mktemp -d /tmp/uabi-roce-view-nobody.XXXXXX)
	chown 65534:65534 "$d"
	chmod 700 "$d"
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$tool" 2>/dev/null; then
		echo "FAIL: uid 65534 cannot run $tool (setpriv missing, or a build tree others cannot read)"
		rm -rf "$d"
		exit 1
	fi
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HOME="$d" TMPDIR="$d" sh "$0" "$tool" "$check" --view "$view"
	rc=$?
	rm -rf "$d"
	exit $rc
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/uabi-roce-view.XXXXXX")
work=$dir/work
mkdir -p "$work"
export UABI_BACKEND=daemon UABI_FSVIEW=$view UABI_SOCKET=$dir/uabid.sock UABI_IDLE_EXIT=30
cleanup() {
	"$tool" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
if ! "$tool" daemon start >"$work/daemon.out" 2>&1; then
	echo "FAIL: cannot start uabid"
	cat "$work/daemon.out"
	exit 1
fi
dev=roce_lo
if ! "$tool" link add $dev netdev lo >"$work/link.out" 2>&1; then
	echo "FAIL: uabi link add $dev netdev lo"
	cat "$work/link.out"
	exit 1
fi
"$tool" link

echo "=== RoCE device in the view, uid $(id -u), view $view"
ok=1
bad() {
	echo "FAIL: $*"
	ok=0
}
run() {
	name=$1
	shift
	timeout 60 "$tool" run -- "$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	echo "--- $name: exit $rc"
	cat "$work/$name.out"
	[ -s "$work/$name.err" ] && sed 's/^/stderr: /' "$work/$name.err"
	[ $rc = 0 ] || bad "$name exited $rc"
	return 0
}
has() { grep -qF -- "$2" "$work/$1.out" || bad "$1: no line containing '$2'"; }
matches() { grep -qE -- "$2" "$work/$1.out" || bad "$1: no line matching /$2/"; }

# The files, read by a shell under the view (SYSFS_PATH in the fallback).
files='root=${SYSFS_PATH:-/sys}
ib=$root/class/infiniband/'$dev'
p=$ib/ports/1
ls $root/class/infiniband
for f in $p/link_layer $p/state $p/phys_state $p/gids/0 $p/gid_attrs/types/0 \
	$p/gid_attrs/ndevs/0 $ib/parent $ib/device/net/lo/ifindex $ib/device/net/lo/operstate \
	$root/class/infiniband_verbs/uverbs0/ibdev $root/class/infiniband_verbs/uverbs1/ibdev \
	$root/class/infiniband_mad/umad1/ibdev $root/class/infiniband_mad/umad1/port; do
	printf "%s=%s\n" "${f#$root/}" "$(cat $f)"
done
ls -d $p/counters 2>/dev/null
[ -e $root/class/infiniband_verbs/uverbs2 ] && echo "uverbs2 exists"
ls /dev/infiniband'
run files sh -c "$files"
has files "uabi_sw0"
has files "$dev"
has files "class/infiniband/$dev/ports/1/link_layer=Ethernet"
has files "class/infiniband/$dev/ports/1/state=4: ACTIVE"
has files "class/infiniband/$dev/ports/1/phys_state=5: LinkUp"
has files "class/infiniband/$dev/ports/1/gids/0=0000:0000:0000:0000:0000:ffff:7f00:0001"
has files "class/infiniband/$dev/ports/1/gid_attrs/types/0=RoCE v2"
has files "class/infiniband/$dev/ports/1/gid_attrs/ndevs/0=lo"
has files "class/infiniband/$dev/parent=lo"
has files "class/infiniband/$dev/device/net/lo/ifindex=$(cat /sys/class/net/lo/ifindex)"
has files "class/infiniband_verbs/uverbs0/ibdev=uabi_sw0"
has files "class/infiniband_verbs/uverbs1/ibdev=$dev"
has files "class/infiniband_mad/umad1/ibdev=$dev"
has files "class/infiniband_mad/umad1/port=1"
grep -q "ports/1/counters" "$work/files.out" && bad "a RoCE port shows PMA counters"
grep -q "uverbs2 exists" "$work/files.out" && bad "a third uverbs device"
if [ "$view" = namespace ]; then
	has files "uverbs1"
	has files "umad1"
fi

# Each device's files against its ibv_query_* answers, umad on the RoCE port.
run check_devices "$check" --expect 2
has check_devices "PASS: 2 devices"

# What the tools print.
run devinfo ibv_devinfo -v -d $dev
has devinfo "hca_id:	$dev"
matches devinfo "link_layer:[[:space:]]+Ethernet"
matches devinfo "GID\[ *0\]:[[:space:]]+::ffff:127\.0\.0\.1, RoCE v2"
run devinfo_all ibv_devinfo
has devinfo_all "hca_id:	uabi_sw0"
has devinfo_all "hca_id:	$dev"
if command -v ibstat >/dev/null 2>&1 || [ -x /usr/sbin/ibstat ]; then
	PATH=$PATH:/usr/sbin:/sbin
	run ibstat ibstat
	has ibstat "CA 'uabi_sw0'"
	has ibstat "CA '$dev'"
	has ibstat "Link layer: Ethernet"
	run ibstat_list ibstat -l
	has ibstat_list "uabi_sw0"
	has ibstat_list "$dev"
else
	bad "ibstat not found (infiniband-diags)"
fi

# The device gone: the next view shows uabi_sw0 alone.
"$tool" link del $dev || bad "uabi link del $dev"
run after sh -c 'ls ${SYSFS_PATH:-/sys}/class/infiniband ${SYSFS_PATH:-/sys}/class/infiniband_verbs'
has after "uabi_sw0"
grep -qF "$dev" "$work/after.out" && bad "$dev still in the view after uabi link del"
grep -qF "uverbs1" "$work/after.out" && bad "uverbs1 still in the view after uabi link del"
run check_after "$check" --expect 1
has check_after "PASS: 1 devices"

[ $ok = 1 ] && echo "PASS: RoCE device in the view ($view)" && exit 0
echo "FAIL: RoCE device in the view ($view)"
exit 1
