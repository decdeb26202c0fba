#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The kernel module's own RoCE device against uabid (docs/wire.md, "The
# kernel module's own RoCE device"): builds rdma_uabi.ko (W=1, warnings
# fail), boots Debian's kernel under qemu (TCG) with a virtio NIC on a tap
# device that lives in a network namespace this script makes; the guest
# loads the module, runs `uabi link add kroce0 netdev eth0` (10.78.0.2) —
# the module receives at 10.78.0.2:4791 inside the kernel — and runs
# unmodified ibv_rc_pingpong -c, ibv_ud_pingpong and ib_write_bw under
# `uabi run` on kroce0; in the namespace, a uabid holds `uabi link add roce0
# netdev <tap>` (10.78.0.1) and the same programs run under `uabi run` on
# roce0.  Each side serves once and connects once.  The guest also checks
# what ibv_devinfo shows of kroce0 and runs kroce_relay (the relay's
# errnos, its drops, another context and uid 65534 refused).  Traffic goes
# only between the namespace and the guest this test creates.
#
# The host's programs trace their wire (UABI_WIRE_TRACE) into
# WORK/trace-{client,server}-NAME.log (the last packets are printed when
# one fails); the guest's do too, and a failed guest step's last packets
# are in the guest log between UABI-KROCE-TRACE-BEGIN/END lines.
#
# Usage: run-kroce.sh --tool UABI --verbs-lib LIB --relay-check BIN
#                     [--work-dir DIR] [--timeout SECONDS]
# Exit status 0 only if every step passed on both sides.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/scripts/qemu-lib.sh"
tool="" verbs="" relay="" work=""
timeout_s=${UABI_KROCE_TIMEOUT:-700}
die() {
	echo "run-kroce: FAIL: $*" >&2
	exit 1
}
while (($#)); do
	case $1 in
	--tool) tool=$2; shift 2 ;;
	--verbs-lib) verbs=$2; shift 2 ;;
	--relay-check) relay=$2; shift 2 ;;
	--work-dir) work=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
[[ -x $tool && -e $verbs && -x $relay ]] || die "--tool, --verbs-lib and --relay-check are required"
[[ $(id -u) == 0 ]] || die "needs root (a network namespace and a tap device)"
work=${work:-$root/build/tests/wire/kroce}
mkdir -p "$work" || die "mkdir $work"
work=$(cd "$work" && pwd)
for prog in qemu-system-x86_64 make gcc cpio gzip ip modprobe ldd strip timeout \
	ibv_rc_pingpong ibv_ud_pingpong ib_write_bw ibv_devinfo ibv_devices; do
	command -v "$prog" >/dev/null || die "missing $prog (scripts/install-deps.sh)"
done
qemu_busybox
qemu_kernel headers
t_start=$(date +%s)

# ------------------------------------------------------------- the module
qemu_build_module "$work" "$kver"

# ------------------------------------------------------------- initramfs
qemu_rfs_init "$work/initramfs" "$here/kroce-guest-init.sh" kroce/lib
strip --strip-debug -o "$rfs/rdma_uabi.ko" "$ko" || die "strip the module"
qemu_modules modules "$kver" virtio_pci virtio_net
# Linux's rxe, to see what it and the module leave each other in one
# guest (reported only; docs/wire.md).
: >"$rfs/rxe-modules"
if command -v rdma >/dev/null && modprobe -S "$kver" --show-depends rdma_rxe >/dev/null 2>&1; then
	qemu_modules rxe-modules "$kver" crc32_generic rdma_rxe
	qemu_pack "$(command -v rdma)"
fi
for p in ibv_rc_pingpong ibv_ud_pingpong ib_write_bw ibv_devinfo ibv_devices; do
	qemu_pack "$(command -v $p)"
done
qemu_pack "$tool" /kroce/uabi
qemu_pack "$verbs" /kroce/lib/libibverbs.so.1
qemu_pack "$relay" /kroce/kroce_relay
for f in uabi kroce_relay lib/libibverbs.so.1; do
	strip --strip-debug "$rfs/kroce/$f" || die "strip $f"
done
# The steps: NAME PROGRAM ARGS (the GID index of 10.78.0.x is 0 on both
# sides: IPv4 addresses come first).  Ports of this test's own range.
cat >"$rfs/steps" <<'EOS'
rc ibv_rc_pingpong -g 0 -n 50 -s 4096 -c -p 25001
ud ibv_ud_pingpong -g 0 -n 50 -s 512 -p 25002
write_bw ib_write_bw -x 0 -F -n 200 -s 65536 -p 25003
EOS
qemu_cpio "$work/initramfs.cpio.gz"

# ---------------------------------------------------- the host's side
tap=hAkroce0
qemu_netns hA-kroce "$tap" 10.78.0.1/24

echo "run-kroce: booting $vmlinuz (TCG) with rdma_uabi.ko; host side 10.78.0.1 in netns $ns"
qemu_boot_tap "$work/guest.log" "$timeout_s" 52:54:00:78:00:02 &
qemu=$!

fails=()
sock=$work/uabid/uabid.sock
mkdir -p "$work/uabid"
hs() { ip netns exec "$ns" env UABI_SOCKET="$sock" UABI_IDLE_EXIT=0 UABI_BACKEND=daemon "$@"; }
hs "$tool" daemon stop >/dev/null 2>&1
hs "$tool" link add roce0 netdev "$tap" >"$work/link.log" 2>&1 ||
	fails+=("uabi link add roce0 netdev $tap: $(cat "$work/link.log")")
while read -r name prog args; do
	# The guest serves first: connect until it listens (or the guest is
	# gone).
	rc=1
	for try in $(seq 1 600); do
		rm -f "$work/trace-client-$name.log"
		hs UABI_WIRE_TRACE="$work/trace-client-$name.log" timeout 240 "$tool" run -- \
			$prog -d roce0 $args 10.78.0.2 >"$work/client-$name.log" 2>&1
		rc=$?
		((rc == 0)) && break
		kill -0 "$qemu" 2>/dev/null || break
		grep -qE "Couldn't connect|Unable to init the socket" "$work/client-$name.log" || break
		sleep 0.5
	done
	if ((rc == 0)); then
		echo "run-kroce: host client $name: PASS"
	else
		fails+=("host client $name (see $work/client-$name.log)")
		echo "run-kroce: host client $name: FAIL"; tail -n 3 "$work/client-$name.log"
		echo "run-kroce: its last packets (µs, $work/trace-client-$name.log):"
		tail -n 20 "$work/trace-client-$name.log"
	fi
	rm -f "$work/trace-server-$name.log"
	if kill -0 "$qemu" 2>/dev/null &&
		hs UABI_WIRE_TRACE="$work/trace-server-$name.log" timeout 240 "$tool" run -- \
			$prog -d roce0 $args >"$work/server-$name.log" 2>&1; then
		echo "run-kroce: host server $name: PASS"
	else
		fails+=("host server $name (see $work/server-$name.log)")
		echo "run-kroce: host server $name: FAIL"; tail -n 3 "$work/server-$name.log"
		echo "run-kroce: its last packets (µs, $work/trace-server-$name.log):"
		tail -n 20 "$work/trace-server-$name.log"
	fi
done <"$rfs/steps"
hs "$tool" link >"$work/link-end.log" 2>&1
cat "$work/link-end.log"
hs "$tool" daemon stop >/dev/null 2>&1
wait "$qemu"
log=$work/guest.log
grep -E '^UABI-KROCE-STEP: |^kroce_relay: |^link ' "$log"
while read -r _ name verdict; do
	[[ $verdict == PASS ]] || fails+=("guest step $name: $verdict")
done < <(grep '^UABI-KROCE-STEP: ' "$log")
grep -q '^UABI-KROCE-RESULT: PASS' "$log" || fails+=("the guest did not report UABI-KROCE-RESULT: PASS")
grep -qE 'Kernel panic|Oops|BUG:' "$log" && fails+=("kernel panic/oops in the guest")
echo "run-kroce: whole run $(($(date +%s) - t_start))s"
if ((${#fails[@]})); then
	for f in "${fails[@]}"; do echo "run-kroce: FAILED: $f"; done
	echo "run-kroce: guest log: $log"
	exit 1
fi
echo "run-kroce: PASS"
