#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The connection manager against Linux's own (docs/cm.md, "Across
# hosts"): boots Debian's kernel under qemu (TCG) with a virtio NIC on a
# tap device in a network namespace this test makes (host side 10.77.0.1,
# guest 10.77.0.2; no other address is involved).  The guest loads rdma_rxe
# and rdma_ucm (the kernel's ib_cm and rdma_cm) and runs Debian's
# unmodified rping and ucmatose (tests/wire/rxe-cm-guest-init.sh); on the
# host, a uabid in the namespace holds `uabi link add roce0 netdev <tap>`
# and the same programs run under `uabi run`: their CM MADs cross as
# RoCEv2 on QP1 between our core's CM and the kernel's ib_cm, their data
# between our wire QPs and rxe's.
#
#   guest rping server    <- host rping client   (10 pings, payload checked)
#   guest rping client    -> host rping server
#   guest ucmatose server <- host ucmatose client (2 connections)
#   guest ucmatose client -> host ucmatose server
#   guest udaddy server   <- host udaddy client   (UD: SIDR REQ/REP)
#   guest udaddy client   -> host udaddy server
#   guest rdma_xserver -c r <- host rdma_xclient -c r (PS_IB; rxe has no XRC)
#   guest rdma_xclient -c r -> host rdma_xserver -c r
# (perftest's -R is left out here: its server takes a control connection,
# then listens again for the data QP's while its client connects at once;
# under TCG the client's second REQ came first, was refused (REJ 8, as
# Linux refuses a REQ with no listener) and the retry then met the
# server half-way.  cm_two_hosts runs perftest -R between two uabids.)
#
# Usage: run-rxe-cm.sh UABI_TOOL [--work-dir DIR]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/scripts/qemu-lib.sh"
die() {
	echo "run-rxe-cm: FAIL: $*" >&2
	exit 1
}
[[ $# -ge 1 ]] || die "usage: run-rxe-cm.sh UABI_TOOL [--work-dir DIR]"
tool=$(realpath "$1")
shift
work=""
while (($#)); do
	case $1 in
	--work-dir) work=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
timeout_s=${UABI_RXE_TIMEOUT:-600}
[[ $(id -u) == 0 ]] || { echo "SKIP: needs root (a network namespace and a tap device)"; exit 77; }
for prog in qemu-system-x86_64 cpio gzip ip modprobe ldd rping ucmatose udaddy rdma timeout; do
	command -v "$prog" >/dev/null || { echo "SKIP: missing $prog"; exit 77; }
done
[[ -x /bin/busybox ]] || { echo "SKIP: missing busybox (static)"; exit 77; }
ls /boot/vmlinuz-* >/dev/null 2>&1 || { echo "SKIP: no /boot/vmlinuz-*"; exit 77; }
qemu_busybox
qemu_kernel any
work=${work:-$root/build/tests/wire/rxe-cm}
mkdir -p "$work"

# ------------------------------------------------------------- initramfs
qemu_rfs_init "$work/initramfs" "$here/rxe-cm-guest-init.sh"
qemu_modules modules "$kver" virtio_pci virtio_net crc32_generic rdma_rxe rdma_ucm
# rxe stops sending while more than 64 of a QP's packets are held by the
# NIC's driver, and starts again only as they are released.  virtio_net
# with NAPI for transmit releases them when a later completion interrupt
# is handled, which under TCG can be never: seen as rxe resending a
# message half-way and then nothing (1 run in ~20 of wire_rxe's 64 KiB
# ping-pong, docs/wire.md "Interop").  Without it, each at transmit.
qemu_modparam modules virtio_net napi_tx=0
for p in rping ucmatose udaddy rdma; do qemu_pack "$(command -v $p)"; done
xrc=0
if command -v rdma_xserver >/dev/null && command -v rdma_xclient >/dev/null; then
	xrc=1
	for p in rdma_xserver rdma_xclient; do qemu_pack "$(command -v $p)"; done
fi
# pthread_exit() loads libgcc_s at run time (rping's threads end so)
qemu_pack "$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}')"
qemu_rxe_provider
qemu_cpio "$work/initramfs.cpio.gz"

# ---------------------------------------------------- the host's side
tap=hBtap0
sock=$work/uabid.sock
hs() { ip netns exec "$ns" env UABI_SOCKET="$sock" UABI_IDLE_EXIT=0 "$@"; }
qemu_cleanup_more() { hs "$tool" daemon stop >/dev/null 2>&1; }
qemu_netns hBrxe "$tap" 10.77.0.1/24
hs "$tool" daemon stop >/dev/null 2>&1
hs "$tool" link add roce0 netdev "$tap" >"$work/link.log" 2>&1 || die "uabi link add: $(cat "$work/link.log")"

echo "run-rxe-cm: booting $vmlinuz (TCG) with rxe and rdma_cm; host side 10.77.0.1 in netns $ns"
qemu_boot_tap "$work/guest.log" "$timeout_s" 52:54:00:77:00:02 &
qemu=$!
# Every packet on the tap, for a look afterwards (tshark -d udp.port==4791,infiniband).
cap=""
if command -v dumpcap >/dev/null; then
	ip netns exec "$ns" dumpcap -q -i "$tap" -w "$work/tap.pcapng" >/dev/null 2>&1 &
	cap=$!
fi

fails=()
. "$root/tests/cm/rping-expect.sh"
# The guest's output of step NAME.
guest_out() { awk -v n="$1" '$0 == "UABI-OUT-BEGIN " n {on = 1; next} $0 == "UABI-OUT-END " n {on = 0} on' "$work/guest.log"; }
# host_client NAME CMD...: the guest serves: connect until it listens
# (REJECTED, reason 8, while it does not; the guest boots first).
host_client() {
	local name=$1 rc=1 try
	shift
	for try in $(seq 1 400); do
		hs env UABI_WIRE_TRACE="$work/trace-$name.log" timeout 240 "$tool" run -- "$@" \
			>"$work/$name.out" 2>"$work/$name.err"
		rc=$?
		((rc == 0)) && break
		grep -qE 'REJECTED|ADDR_ERROR|UNREACHABLE|refused' "$work/$name.err" "$work/$name.out" || break
		kill -0 $qemu 2>/dev/null || break
		sleep 0.5
	done
	if ((rc == 0)); then
		echo "run-rxe-cm: host $name: PASS"
	else
		fails+=("host $name (see $work/$name.err)")
		echo "run-rxe-cm: host $name: FAIL"; tail -n 5 "$work/$name.out" "$work/$name.err"
	fi
}
host_server() {
	local name=$1
	shift
	if hs env UABI_WIRE_TRACE="$work/trace-$name.log" timeout 240 "$tool" run -- "$@" \
		>"$work/$name.out" 2>"$work/$name.err"; then
		echo "run-rxe-cm: host $name: PASS"
	else
		fails+=("host $name (see $work/$name.err)")
		echo "run-rxe-cm: host $name: FAIL"; tail -n 5 "$work/$name.out" "$work/$name.err"
	fi
}
host_client rping-client rping -c -a 10.77.0.2 -p 25600 -v -C 10
host_server rping-server rping -s -a 10.77.0.1 -p 25601 -v -C 10
host_client ucmatose-client ucmatose -s 10.77.0.2 -p 25602 -c 2 -C 10
host_server ucmatose-server ucmatose -p 25603 -c 2 -C 10
host_client udaddy-client udaddy -s 10.77.0.2 -c 1 -C 10
host_server udaddy-server udaddy -c 1 -C 10
# rdma_xserver/rdma_xclient against Linux's rdma_cm in their RC mode,
# each side as server and as client; each ends with "end 0" only when its
# message went through (the server received the client's 16 bytes).
# Their XRC mode (-c x) cannot run here: rxe has no XRC (the guest's
# librdmacm refuses it, "Operation not supported"); cm_two_hosts runs it
# between two uabids.
if ((xrc)); then
	host_client xrc-r-client rdma_xclient -c r -s 10.77.0.2 -p 25610
	host_server xrc-r-server rdma_xserver -c r -p 25612
	grep -q 'rdma_xclient: end 0' "$work/xrc-r-client.out" ||
		fails+=("host xrc-r-client: no 'rdma_xclient: end 0'")
	grep -q 'rdma_xserver: end 0' "$work/xrc-r-server.out" ||
		fails+=("host xrc-r-server: no 'rdma_xserver: end 0'")
else
	echo "run-rxe-cm: SKIP xrc (rdma_xserver/rdma_xclient not installed)"
fi
hs "$tool" link >"$work/link-end.log" 2>&1
wait "$qemu"
[[ -n $cap ]] && kill "$cap" 2>/dev/null
log=$work/guest.log
grep '^UABI-RXE-STEP: ' "$log"
grep -q '^UABI-RXE-RESULT: PASS' "$log" || fails+=("the guest did not report UABI-RXE-RESULT: PASS")
grep -qE 'Kernel panic|Oops|BUG:' "$log" && fails+=("kernel panic/oops in the guest")
# rping's payload, both sides of both runs.
diff <(grep '^ping data: ' "$work/rping-client.out") <(rping_expect 10 "ping data: ") >/dev/null ||
	fails+=("host rping-client: payload not what rping sent")
diff <(grep '^server ping data: ' "$work/rping-server.out") <(rping_expect 10 "server ping data: ") >/dev/null ||
	fails+=("host rping-server: payload not what rping sent")
diff <(guest_out rping-server | grep '^server ping data: ') <(rping_expect 10 "server ping data: ") >/dev/null ||
	fails+=("guest rping-server: payload not what rping sent")
diff <(guest_out rping-client | grep '^ping data: ') <(rping_expect 10 "ping data: ") >/dev/null ||
	fails+=("guest rping-client: payload not what rping sent")
echo "run-rxe-cm: uabid: $(grep roce0 "$work/link-end.log" | sed 's/.*relayed/relayed/')"
if ((${#fails[@]})); then
	for f in "${fails[@]}"; do echo "run-rxe-cm: FAILED: $f"; done
	echo "run-rxe-cm: guest log: $log"
	exit 1
fi
echo "run-rxe-cm: PASS"
