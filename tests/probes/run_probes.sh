#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# The device as middleware and the InfiniBand diagnostics see it (ctest
# label probes, docs/fsview.md): under `uabi run`, unmodified Debian
# binaries of infiniband-diags and srptools, and check_sysfs (every sysfs
# file against ibv_query_*), each program's output compared with what the
# device answers (check_sysfs --print), not with copies of it.
#
#   run_probes.sh UABI_TOOL CHECK_SYSFS [--abuse UMAD_ABUSE]
#                 [--traffic PORT_TRAFFIC]
#                 [--backend daemon|kernel] [--as nobody|self]
#                 [--view namespace|sysfs-path]
#
# daemon (default): a uabid of its own on a private socket; kernel: the
# module's /dev/rdma_uabi (the qemu guest).  --as nobody: the same checks
# as uid 65534 (run as root; the view then takes a user namespace).
# --view sysfs-path: the fallback without a mount namespace (SYSFS_PATH,
# and the umad shim serving /dev/infiniband and class/infiniband* to
# dynamically linked programs).  --traffic: port_traffic, which moves known
# traffic and checks that perfquery's counters follow it.  POSIX sh (the
# guest has busybox).
set -u
tool=$1 check=$2
shift 2
backend=daemon as=self view=namespace abuse="" traffic=""
while [ $# -gt 0 ]; do
	case $1 in
	--abuse) abuse=$2; shift 2 ;;
	--traffic) traffic=$2; shift 2 ;;
	--backend) backend=$2; shift 2 ;;
	--as) as=$2; shift 2 ;;
	--view) view=$2; shift 2 ;;
	*) echo "run_probes: unknown argument $1"; exit 2 ;;
	esac
done

# Re-run as nobody, with a socket directory nobody owns.
if [ "$as" = nobody ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: --as nobody needs root (the checks as this user are the other test)"
		exit 77
	fi
	d=$(mktemp -d /tmp/uabi-probes-nobody.XXXXXX)
	chown 65534:65534 "$d"
	chmod 700 "$d"
	# util-linux's setpriv (busybox's has no --reuid).
	sp=""
	for c in /usr/bin/setpriv /bin/setpriv setpriv; do
		if "$c" --help 2>&1 | grep -q reuid; then
			sp=$c
			break
		fi
	done
	if [ -n "$sp" ] && ! "$sp" --reuid=65534 --regid=65534 --clear-groups test -x "$tool" 2>/dev/null; then
		echo "FAIL: uid 65534 cannot run $tool: the build tree must lie where every user may read it"
		rc=1
	elif [ -n "$sp" ]; then
		"$sp" --reuid=65534 --regid=65534 --clear-groups \
			env HOME="$d" TMPDIR="$d" UABI_PROBES_DIR="$d" \
			sh "$0" "$tool" "$check" --backend "$backend" --view "$view" \
			${abuse:+--abuse "$abuse"} ${traffic:+--traffic "$traffic"}
		rc=$?
	else
		echo "FAIL: setpriv (util-linux) not found"
		rc=1
	fi
	rm -rf "$d"
	exit $rc
fi

dir=${UABI_PROBES_DIR:-}
own_dir=0
if [ -z "$dir" ]; then
	dir=$(mktemp -d /tmp/uabi-probes.XXXXXX)
	own_dir=1
fi
work=$dir/work
mkdir -p "$work"
export UABI_BACKEND=$backend UABI_FSVIEW=$view
if [ "$backend" = daemon ]; then
	export UABI_SOCKET=$dir/uabid.sock UABI_IDLE_EXIT=30
	if ! "$tool" daemon start >"$work/daemon.out" 2>&1; then
		echo "FAIL: cannot start uabid"
		cat "$work/daemon.out"
		exit 1
	fi
fi
cleanup() {
	[ "$backend" = daemon ] && "$tool" daemon stop >/dev/null 2>&1
	[ $own_dir = 1 ] && rm -rf "$dir"
}
trap cleanup EXIT

echo "=== probes as uid $(id -u), backend $backend, view $view"
ok=1
# run NAME PROG ARGS...: under uabi run, bounded; $work/NAME.{out,err,rc}
run() {
	name=$1
	shift
	timeout 60 "$tool" run -- "$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	echo "$rc" >"$work/$name.rc"
	echo "--- $*: exit $rc"
	cat "$work/$name.out"
	[ -s "$work/$name.err" ] && sed 's/^/stderr: /' "$work/$name.err"
	return 0
}
bad() {
	echo "FAIL: $*"
	ok=0
}
rc_is() { [ "$(cat "$work/$1.rc")" = "$2" ] || bad "$1 exited $(cat "$work/$1.rc"), expected $2"; }
no_stderr() { [ -s "$work/$1.err" ] && bad "$1 wrote to stderr"; return 0; }
# has NAME FIXED-STRING: a line of the output contains it
has() { grep -qF -- "$2" "$work/$1.out" || bad "$1: no line containing '$2'"; }
# matches NAME REGEX
matches() { grep -qE -- "$2" "$work/$1.out" || bad "$1: no line matching /$2/"; }

# ---- what the device answers (ibv_query_* through the drop-in library)
run values "$check" --print
rc_is values 0
while IFS='=' read -r k v; do
	case $k in
	[a-z]*) eval "v_$k=\$v" ;;
	esac
done <"$work/values.out"
[ -n "${v_device:-}" ] || { echo "FAIL: no device values"; exit 1; }
hexlid=$(printf '0x%x' "$v_lid")
hexsm=$(printf '0x%x' "$v_sm_lid")
guid_hex=${v_node_guid#0x}

# ---- every sysfs file against ibv_query_*, the /dev/infiniband nodes
if [ "$view" = namespace ]; then
	run check_sysfs "$check"
else
	# No /dev/infiniband without a namespace: the shim shows it to
	# dynamically linked programs (check_sysfs is one).
	run check_sysfs "$check"
fi
rc_is check_sysfs 0
has check_sysfs "PASS:"
# What the program starts sees it too (a grandchild here, as an MPI
# launcher's ranks), and a `uabi run` inside the view keeps it.
run grandchild sh -c "sh -c '$check' & wait"
rc_is grandchild 0
has grandchild "PASS:"
run nested "$tool" run -- "$check"
rc_is nested 0
has nested "PASS:"
# The checker fails where there is nothing to find (no view at all).
UABI_FSVIEW=off timeout 60 "$tool" run -- "$check" >"$work/noview.out" 2>&1
noview=$?
echo "--- check_sysfs without a view (UABI_FSVIEW=off): exit $noview (must fail)"
grep -E '^(FAIL|PASS)' "$work/noview.out" | tail -3 | sed 's/^/  (without a view) /'
[ $noview != 0 ] || bad "check_sysfs passed without a view"

# ---- the umad ABI itself: bad input, readiness, timeouts, dup/close
if [ -n "$abuse" ]; then
	run umad_abuse "$abuse"
	rc_is umad_abuse 0
	has umad_abuse "PASS:"
fi

# ---- sysfs readers: ibstat (libibumad), ibstatus (a shell script)
run ibstat ibstat
rc_is ibstat 0
no_stderr ibstat
has ibstat "CA '$v_device'"
has ibstat "Number of ports: $v_ports"
has ibstat "Firmware version: $v_fw_ver"
has ibstat "Hardware version: $v_hw_ver"
has ibstat "Node GUID: $v_node_guid"
has ibstat "System image GUID: $v_sys_image_guid"
has ibstat "Base lid: $v_lid"
has ibstat "SM lid: $v_sm_lid"
has ibstat "LMC: $v_lmc"
has ibstat "Capability mask: $v_cap_mask"
has ibstat "Port GUID: $v_port_guid"
has ibstat "Physical state: $v_phys_name"
has ibstat "Link layer: InfiniBand"
[ "$v_state" = 4 ] && has ibstat "State: Active"

run ibstatus ibstatus
rc_is ibstatus 0
no_stderr ibstatus
has ibstatus "Infiniband device '$v_device' port 1 status:"
has ibstatus "default gid:	 $v_gid0"
has ibstatus "base lid:	 $hexlid"
has ibstatus "sm lid:		 $hexsm"
has ibstatus "state:		 $v_state: $v_state_name"
has ibstatus "phys state:	 $v_phys_state: $v_phys_name"
has ibstatus "rate:		 $v_rate"

# ---- umad and the port's agents
run ibaddr ibaddr
rc_is ibaddr 0
no_stderr ibaddr
has ibaddr "GID $v_gid0_short LID start $hexlid end $hexlid"

run sminfo sminfo
rc_is sminfo 0
no_stderr sminfo
has sminfo "sm lid $v_sm_lid sm guid $v_port_guid_short, activity count 0 priority 0 state 3 SMINFO_MASTER"

run perfquery perfquery
rc_is perfquery 0
no_stderr perfquery
has perfquery "# Port counters: Lid $v_lid port 1"
# Each counter as the PMA answers it equals its sysfs file.
sysfs_counter() {
	timeout 30 "$tool" run -- cat "$1/class/infiniband/$v_device/ports/1/counters/$2" 2>/dev/null
}
root=/sys
[ "$view" = sysfs-path ] && root=$(timeout 30 "$tool" run -- sh -c 'echo $SYSFS_PATH')
for pair in SymbolErrorCounter:symbol_error LinkErrorRecoveryCounter:link_error_recovery \
	LinkDownedCounter:link_downed PortRcvErrors:port_rcv_errors \
	PortRcvRemotePhysicalErrors:port_rcv_remote_physical_errors \
	PortRcvSwitchRelayErrors:port_rcv_switch_relay_errors PortXmitDiscards:port_xmit_discards \
	PortXmitConstraintErrors:port_xmit_constraint_errors \
	PortRcvConstraintErrors:port_rcv_constraint_errors \
	LocalLinkIntegrityErrors:local_link_integrity_errors \
	ExcessiveBufferOverrunErrors:excessive_buffer_overrun_errors VL15Dropped:VL15_dropped \
	PortXmitData:port_xmit_data PortRcvData:port_rcv_data PortXmitPkts:port_xmit_packets \
	PortRcvPkts:port_rcv_packets PortXmitWait:port_xmit_wait; do
	mad=${pair%%:*} file=${pair#*:}
	want=$(sysfs_counter "$root" "$file")
	got=$(sed -n "s/^$mad:\.*\([0-9]*\)$/\1/p" "$work/perfquery.out")
	[ -n "$want" ] && [ "$want" = "$got" ] ||
		bad "perfquery $mad '$got', sysfs counters/$file '$want'"
done

run nodeinfo smpquery nodeinfo "$v_lid"
rc_is nodeinfo 0
no_stderr nodeinfo
matches nodeinfo "^NodeType:\.+Channel Adapter$"
matches nodeinfo "^NumPorts:\.+$v_ports$"
matches nodeinfo "^Guid:\.+$v_node_guid$"
matches nodeinfo "^SystemGuid:\.+$v_sys_image_guid$"
matches nodeinfo "^PortGuid:\.+$v_port_guid$"
matches nodeinfo "^LocalPort:\.+1$"

run nodeinfo_dr smpquery -D nodeinfo 0
rc_is nodeinfo_dr 0
no_stderr nodeinfo_dr
matches nodeinfo_dr "^Guid:\.+$v_node_guid$"

run portinfo smpquery portinfo "$v_lid"
rc_is portinfo 0
no_stderr portinfo
matches portinfo "^Lid:\.+$v_lid$"
matches portinfo "^SMLid:\.+$v_sm_lid$"
matches portinfo "^CapMask:\.+$(printf '0x%x' "$v_cap_mask")"
matches portinfo "^LinkState:\.+Active$"
matches portinfo "^PhysLinkState:\.+$v_phys_name$"
matches portinfo "^LinkWidthActive:\.+$v_width$"
matches portinfo "^GuidCap:\.+$v_gid_tbl_len$"

run node_desc cat "$root/class/infiniband/$v_device/node_desc"
desc=$(cat "$work/node_desc.out")
[ -n "$desc" ] || bad "empty node_desc"
# "<name>:....<value>": the value after the dots (their number varies).
value_of() { sed -n "s/^$2:\.*//p" "$work/$1.out" | head -1; }
run nodedesc smpquery nodedesc "$v_lid"
rc_is nodedesc 0
no_stderr nodedesc
[ "$(value_of nodedesc 'Node Description')" = "$desc" ] ||
	bad "nodedesc: '$(value_of nodedesc 'Node Description')', node_desc '$desc'"

# Nothing answers beyond the port: a request to another LID times out
# after the requester's timeout and retries (3 x 100 ms here).
run lost smpquery -t 100 nodeinfo 7
[ "$(cat "$work/lost.rc")" != 0 ] || bad "smpquery to LID 7 succeeded"

# The fabric: this port, nobody at the other end of its link (the
# neighbour's NodeInfo on the directed route 0,1 times out: one line).
beyond='DR path slid 0; dlid 0; 0,1 Attr 0x11:0) bad status 110'
for t in ibnetdiscover iblinkinfo; do
	run "$t" "$t"
	rc_is "$t" 0
	grep -qF "$beyond" "$work/$t.err" || bad "$t: no timeout of the query beyond the port"
	[ "$(wc -l <"$work/$t.err")" -le 1 ] || bad "$t: more on stderr than that timeout"
done
matches ibnetdiscover "^caguid=0x0*${guid_hex#0*}$"
matches ibnetdiscover "^Ca[[:space:]]+$v_ports \"H-$guid_hex\"[[:space:]]+# "
has ibnetdiscover "\"H-$guid_hex\"		# \"$desc\""
has iblinkinfo "CA: $desc:"
matches iblinkinfo "$v_port_guid +1 +1\[  \] ==\( +$v_width .*Active/  $v_phys_name\)==>"

# ---- srptools: finds the device, the SA reports no SRP target
for args in "" "-c"; do
	run ibsrpdm ibsrpdm $args
	rc_is ibsrpdm 0
	no_stderr ibsrpdm
	[ -s "$work/ibsrpdm.out" ] && bad "ibsrpdm $args reported targets"
done

# The SA of the one-port subnet: its one NodeRecord.
run saquery saquery
rc_is saquery 0
matches saquery "node_guid\.+$v_node_guid$"
[ "$(sed -n 's/^[[:space:]]*NodeDescription\.*//p' "$work/saquery.out")" = "$desc" ] ||
	bad "saquery: NodeDescription is not node_desc '$desc'"

# ---- the port counters follow this user's traffic: perfquery and
# perfquery -x before and after known traffic, -R and -x -R (port_traffic
# holds its context meanwhile; last, as it changes the counters the
# comparison with sysfs above read).
if [ -n "$traffic" ]; then
	run traffic "$traffic"
	rc_is traffic 0
	has traffic "PASS:"
fi

[ $ok = 1 ] && echo "PASS: probes as uid $(id -u), backend $backend, view $view" && exit 0
echo "FAIL: probes as uid $(id -u), backend $backend, view $view"
exit 1
