#!/usr/bin/env bash
# ibverbs-utils' ibv_devices and ibv_devinfo -v, unmodified, over our
# libibverbs.so.1 (LD_PRELOAD) on the daemon backend (a uabid of its own):
# exit status 0, nothing on stderr, and the device's attributes as the
# software device has them (one ACTIVE port, LID 1, the GID from the node
# GUID, MTU 4096, XRC among the capabilities).  And what a program that
# needs the RDMA connection manager sees with the drop-in library alone,
# without the ucma shim `uabi run` adds (docs/cm.md; librdmacm starts by
# asking libibverbs where sysfs is): perftest's `ib_send_bw -R` must fail
# with its own error, not crash.
#
#   run_devinfo.sh LIB UABI_TOOL
set -u
lib=$1 tool=$2
lib=${E2E_PRELOAD_FIRST:+$E2E_PRELOAD_FIRST:}$lib
dir=$(mktemp -d /tmp/uabi-devinfo.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon UABI_IDLE_EXIT=30
cleanup() {
	"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
"$tool" --socket "$UABI_SOCKET" daemon start >"$dir/daemon.out" 2>&1 ||
	{ echo "FAIL: cannot start uabid"; cat "$dir/daemon.out"; exit 1; }

ok=1
# run NAME PROG ARGS...: output in $dir/NAME.out / .err
run() {
	local name=$1
	shift
	LD_PRELOAD=$lib timeout 30 "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	local rc=$?
	echo "--- $* : exit $rc"
	cat "$dir/$name.out"
	if ((rc != 0)); then echo "FAIL: $name exited $rc"; ok=0; fi
	if [[ -s $dir/$name.err ]]; then echo "FAIL: $name wrote to stderr:"; cat "$dir/$name.err"; ok=0; fi
}
# expect NAME REGEX: a line of NAME's output matches (grep -E)
expect() {
	grep -Eq "$2" "$dir/$1.out" || { echo "FAIL: $1: no line matching /$2/"; ok=0; }
}

run devices ibv_devices
expect devices '^[[:space:]]*uabi_sw0[[:space:]]+0275616269000001$'
[[ $(grep -c uabi_sw0 "$dir/devices.out") == 1 ]] || { echo "FAIL: not exactly one device"; ok=0; }

run devinfo ibv_devinfo -v
expect devinfo '^hca_id:[[:space:]]+uabi_sw0$'
expect devinfo 'node_guid:[[:space:]]+0275:6162:6900:0001$'
expect devinfo 'phys_port_cnt:[[:space:]]+1$'
expect devinfo '^[[:space:]]+XRC$'
expect devinfo 'atomic_cap:[[:space:]]+ATOMIC_HCA'
expect devinfo 'state:[[:space:]]+PORT_ACTIVE \(4\)'
expect devinfo 'active_mtu:[[:space:]]+4096 \(5\)'
expect devinfo 'port_lid:[[:space:]]+1$'
expect devinfo 'link_layer:[[:space:]]+InfiniBand'
expect devinfo 'GID\[  0\]:[[:space:]]+fe80:0000:0000:0000:0275:6162:6900:0001'
# One port, one GID.
[[ $(grep -c 'GID\[' "$dir/devinfo.out") == 1 ]] || { echo "FAIL: not exactly one GID"; ok=0; }

# A device that does not exist: ibv_devinfo's own error, exit status 255.
LD_PRELOAD=$lib timeout 30 ibv_devinfo -d nosuchdev >"$dir/bad.out" 2>&1
rc=$?
echo "--- ibv_devinfo -d nosuchdev: exit $rc"
cat "$dir/bad.out"
((rc != 0)) || { echo "FAIL: ibv_devinfo -d nosuchdev succeeded"; ok=0; }

# librdmacm: no rdma_cm device, so rdma_create_event_channel fails and
# perftest says so (exit status 1); it used to die of SIGSEGV in our
# ibv_get_sysfs_path().
if command -v ib_send_bw >/dev/null; then
	LD_PRELOAD=$lib timeout 30 ib_send_bw -R -p 1 localhost >"$dir/cm.out" 2>&1
	rc=$?
	echo "--- ib_send_bw -R localhost: exit $rc"
	cat "$dir/cm.out"
	((rc == 1)) || { echo "FAIL: ib_send_bw -R: exit $rc, expected its own error (1)"; ok=0; }
	grep -q 'rdma_create_event_channel failed' "$dir/cm.out" ||
		{ echo "FAIL: ib_send_bw -R: not perftest's rdma_cm error"; ok=0; }
else
	echo "FAIL: ib_send_bw (perftest) not found"
	ok=0
fi

((ok)) && echo PASS || exit 1
