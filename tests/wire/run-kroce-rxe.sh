#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The kernel module's own RoCE device against Linux's rxe, two machines
# (docs/wire.md, "The kernel module's RoCE device against rxe"): rxe and
# the module cannot share one guest (both want UDP port 4791 of its
# addresses), so two qemu guests (TCG) of Debian's kernel, each with a
# virtio NIC on a tap device; both taps are ports of a bridge in a network
# namespace this script makes (no address of the host is involved).  One
# guest runs rxe0 at 10.79.0.2 with Debian's libibverbs and rxe provider,
# the other rdma_uabi.ko (built W=1) with `uabi link add kroce0 netdev
# eth0` at 10.79.0.3 and the programs under `uabi run`.  Debian's
# unmodified ibv_rc_pingpong -c (4 KiB, payload checked), ibv_ud_pingpong
# (512 B) and ib_write_bw (64 KiB) run between them, rxe serving first,
# then the module (tests/wire/kroce-rxe-guest-init.sh); then the
# connection manager, Linux's rdma_cm on rxe against the module's:
# Debian's rping (10 pings, payload checked here) and ucmatose (2
# connections), each side serving and connecting.  Every packet of
# both directions crosses both guests' kernel network stacks as RoCEv2:
# rxe checks the module's ICRC and headers, the module's relay and our
# engine check rxe's.  The bridge is captured (WORK/bridge.pcap): every
# RoCEv2 packet must have its ICRC right (the --pcap-check program).
#
# Usage: run-kroce-rxe.sh --tool UABI --verbs-lib LIB --umad-lib LIB
#                         --rdmacm-lib LIB --pcap-check BIN
#                         [--work-dir DIR] [--timeout SECONDS]
# Exit status 0 only if every step passed in both guests.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/scripts/qemu-lib.sh"
tool="" verbs="" umad="" rdmacm="" pcap_check="" work=""
timeout_s=${UABI_KXR_TIMEOUT:-700}
die() {
	echo "run-kroce-rxe: FAIL: $*" >&2
	exit 1
}
while (($#)); do
	case $1 in
	--tool) tool=$2; shift 2 ;;
	--verbs-lib) verbs=$2; shift 2 ;;
	--umad-lib) umad=$2; shift 2 ;;
	--rdmacm-lib) rdmacm=$2; shift 2 ;;
	--pcap-check) pcap_check=$2; shift 2 ;;
	--work-dir) work=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
[[ -x $tool && -e $verbs && -e $umad && -e $rdmacm && -x $pcap_check ]] ||
	die "--tool, --verbs-lib, --umad-lib, --rdmacm-lib and --pcap-check are required"
[[ $(id -u) == 0 ]] || die "needs root (a network namespace, a bridge and tap devices)"
work=${work:-$root/build/tests/wire/kroce-rxe}
mkdir -p "$work" || die "mkdir $work"
work=$(cd "$work" && pwd)
for prog in qemu-system-x86_64 make gcc cpio gzip ip modprobe ldd ldconfig strip timeout rdma \
	dumpcap tshark ibv_rc_pingpong ibv_ud_pingpong ib_write_bw rping ucmatose; do
	command -v "$prog" >/dev/null || die "missing $prog (scripts/install-deps.sh)"
done
qemu_busybox
qemu_kernel headers
t_start=$(date +%s)
qemu_build_module "$work" "$kver"

# The steps: NAME PROGRAM ARGS (GIDX: the guest's RoCE v2 GID index of its
# IPv4 address).  Ports of this test's own range.
steps=$work/steps
cat >"$steps" <<'EOS'
rc ibv_rc_pingpong -g GIDX -n 50 -s 4096 -c -p 25101
ud ibv_ud_pingpong -g GIDX -n 50 -s 512 -p 25102
write_bw ib_write_bw -x GIDX -F -n 200 -s 65536 -p 25103
EOS

# ------------------------------------------------------- two initramfs
progs() {
	local p
	for p in ibv_rc_pingpong ibv_ud_pingpong ib_write_bw rping ucmatose; do
		qemu_pack "$(command -v $p)"
	done
	# pthread_exit() loads libgcc_s at run time (rping's threads end so)
	qemu_pack "$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}')"
}
# rxe's guest.  rxe stops sending while more than 64 of a QP's packets
# are held by virtio_net with NAPI for transmit (docs/wire.md, "Interop"):
# both guests load it with napi_tx=0.
qemu_rfs_init "$work/rxe" "$here/kroce-rxe-guest-init.sh"
echo rxe >"$rfs/role"
cp "$steps" "$rfs/steps"
qemu_modules modules "$kver" virtio_pci virtio_net crc32_generic rdma_rxe rdma_ucm
qemu_modparam modules virtio_net napi_tx=0
qemu_pack "$(command -v rdma)"
progs
qemu_rxe_provider
qemu_cpio "$work/rxe.cpio.gz"
# The module's guest.
qemu_rfs_init "$work/kroce" "$here/kroce-rxe-guest-init.sh" kroce/lib
echo kroce >"$rfs/role"
cp "$steps" "$rfs/steps"
strip --strip-debug -o "$rfs/rdma_uabi.ko" "$ko" || die "strip the module"
qemu_modules modules "$kver" virtio_pci virtio_net
qemu_modparam modules virtio_net napi_tx=0
progs
qemu_pack "$tool" /kroce/uabi
qemu_pack "$verbs" /kroce/lib/libibverbs.so.1
qemu_pack "$umad" /kroce/lib/libuabi_umad.so
qemu_pack "$rdmacm" /kroce/lib/libuabi_rdmacm.so
for f in uabi lib/libibverbs.so.1 lib/libuabi_umad.so lib/libuabi_rdmacm.so; do
	strip --strip-debug "$rfs/kroce/$f" || die "strip $f"
done
qemu_cpio "$work/kroce.cpio.gz"

# ------------------------------------------------- the wire between them
tap=kxrtap0	# (qemu_netns's tap: rxe's guest's)
qemu_netns kxr "$tap" 10.79.0.1/24
ip -n "$ns" addr flush dev "$tap"
ip -n "$ns" tuntap add dev kxrtap1 mode tap || die "tuntap kxrtap1"
ip -n "$ns" link add kxrbr0 type bridge || die "bridge"
ip -n "$ns" link set "$tap" master kxrbr0 && ip -n "$ns" link set kxrtap1 master kxrbr0 &&
	ip -n "$ns" link set kxrtap1 up && ip -n "$ns" link set kxrbr0 up || die "bridge ports"
ip netns exec "$ns" dumpcap -q -P -i kxrbr0 -f "udp port 4791" -w "$work/bridge.pcap" 2>"$work/dumpcap.err" &
dumpcap=$!

echo "run-kroce-rxe: booting two guests of $vmlinuz (TCG): rxe0 at 10.79.0.2, kroce0 at 10.79.0.3, bridged in netns $ns"
boot() {	# NAME TAP MAC
	QEMU_NETNS=$ns qemu_boot "$work/$1.log" "$timeout_s" 2 "" \
		-netdev tap,id=n0,ifname="$2",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac="$3" -initrd "$work/$1.cpio.gz"
}
boot rxe "$tap" 52:54:00:79:00:02 &
q1=$!
boot kroce kxrtap1 52:54:00:79:00:03 &
q2=$!
wait $q1
wait $q2
sleep 1
kill "$dumpcap" 2>/dev/null
wait "$dumpcap" 2>/dev/null

fails=()
for g in rxe kroce; do
	log=$work/$g.log
	grep -E '^UABI-KXR-STEP: |^link kroce0' "$log"
	while read -r _ name verdict; do
		[[ $verdict == PASS ]] || fails+=("$g guest step $name: $verdict")
	done < <(grep '^UABI-KXR-STEP: ' "$log")
	grep -q '^UABI-KXR-RESULT: PASS' "$log" || fails+=("the $g guest did not report UABI-KXR-RESULT: PASS")
	grep -qE 'Kernel panic|Oops|BUG:' "$log" && fails+=("kernel panic/oops in the $g guest")
done
# Both directions of each program: rxe's steps and ours.
for s in rc ud write_bw rping ucmatose; do
	for r in server client; do
		for g in rxe kroce; do
			grep -q "^UABI-KXR-STEP: $g-$r-$s PASS" "$work/$g.log" || fails+=("no $g-$r-$s PASS")
		done
	done
done
# rping's payload, both sides in both guests (ibv_rc_pingpong -c checked
# its own: it says so only by ending well).
. "$root/tests/cm/rping-expect.sh"
out() { sed -n "/^UABI-OUT-BEGIN $2\$/,/^UABI-OUT-END $2\$/p" "$work/$1.log"; }
for g in rxe kroce; do
	diff <(out $g $g-client-rping | grep '^ping data: ') <(rping_expect 10 "ping data: ") >/dev/null ||
		fails+=("$g rping client: payload not what rping sent")
	diff <(out $g $g-server-rping | grep '^server ping data: ') <(rping_expect 10 "server ping data: ") \
		>/dev/null || fails+=("$g rping server: payload not what rping sent")
done
if "$pcap_check" "$work/bridge.pcap" >"$work/pcap_icrc.log" 2>&1; then
	echo "run-kroce-rxe: capture: $(head -1 "$work/pcap_icrc.log")"
else
	fails+=("capture: not every RoCEv2 packet right (see $work/pcap_icrc.log)")
	tail -n 5 "$work/pcap_icrc.log"
fi
for a in 10.79.0.2 10.79.0.3; do
	n=$(tshark -r "$work/bridge.pcap" -Y "ip.src == $a && udp.dstport == 4791" 2>/dev/null | wc -l)
	echo "run-kroce-rxe: capture: $n RoCEv2 datagrams from $a"
	((n > 0)) || fails+=("capture: no RoCEv2 datagram from $a")
done
echo "run-kroce-rxe: whole run $(($(date +%s) - t_start))s"
if ((${#fails[@]})); then
	for f in "${fails[@]}"; do echo "run-kroce-rxe: FAILED: $f"; done
	echo "run-kroce-rxe: guest logs: $work/rxe.log $work/kroce.log"
	exit 1
fi
echo "run-kroce-rxe: PASS"
