#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The wire engine against Linux's own Soft-RoCE (docs/wire.md, "Interop"):
# boots Debian's kernel under qemu (TCG) with a virtio NIC on a tap device
# that lives in a network namespace of this host made for the test; the
# guest loads rdma_rxe, binds rxe0 to its NIC and runs Debian's unmodified
# ibv_rc_pingpong, first as server, then as client; on the host side of the
# tap, wire_pingpong (our engine, tests/wire/wire_pingpong.cpp) is its peer
# at 10.77.0.1:4791.  Every packet of both directions crosses a real kernel
# network stack as RoCEv2: rxe checks our ICRC and headers, we check its.
# Traffic goes only between the namespace and the guest this test creates.
#
# With --stack UABI_TOOL, the whole stack on the host side as well: a uabid
# in the namespace holds `uabi link add roce0 netdev <tap>`, and unmodified
# ibv_rc/ud/srq_pingpong and perftest (ib_write_bw, ib_read_lat,
# ib_atomic_lat, ib_send_bw with immediate) run under `uabi run` against
# the same programs on rxe, each side as server and as client.
#
# Usage: run-rxe.sh --pingpong BIN [--stack UABI_TOOL] [--work-dir DIR] [--iters N]
#                   [--sizes "1 4096 65536"]
# Exit status 0 only if every exchange in both roles passed on both sides.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/scripts/qemu-lib.sh"
pingpong="" work="" iters=200 sizes="1 4096 65536" stack=""
timeout_s=${UABI_RXE_TIMEOUT:-600}
die() {
	echo "run-rxe: FAIL: $*" >&2
	exit 1
}
while (($#)); do
	case $1 in
	--pingpong) pingpong=$2; shift 2 ;;
	--stack) stack=$2; shift 2 ;;
	--work-dir) work=$2; shift 2 ;;
	--iters) iters=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
[[ -x $pingpong ]] || die "--pingpong BIN (wire_pingpong) is required"
[[ $(id -u) == 0 ]] || die "needs root (a network namespace and a tap device)"
work=${work:-$root/build/tests/wire/rxe}
for prog in qemu-system-x86_64 cpio gzip ip modprobe ldd ibv_rc_pingpong rdma timeout; do
	command -v "$prog" >/dev/null || die "missing $prog (scripts/install-deps.sh)"
done
qemu_busybox
qemu_kernel any

# ------------------------------------------------------------- initramfs
qemu_rfs_init "$work/initramfs" "$here/rxe-guest-init.sh"
echo "$iters" >"$rfs/iters"
echo "$sizes" >"$rfs/sizes"
qemu_modules modules "$kver" virtio_pci virtio_net crc32_generic rdma_rxe
# rxe stops sending while more than 64 of a QP's packets are held by the
# NIC's driver, and starts again only as they are released.  virtio_net
# with NAPI for transmit releases them when a later completion interrupt
# is handled, which under TCG can be never: seen as rxe resending a
# message half-way and then nothing (1 run in ~20 of wire_rxe's 64 KiB
# ping-pong, docs/wire.md "Interop").  Without it, each at transmit.
qemu_modparam modules virtio_net napi_tx=0
# Programs with their libraries at their own paths; libibverbs finds the
# rxe provider through /etc/libibverbs.d.
qemu_pack "$(command -v ibv_rc_pingpong)"
qemu_pack "$(command -v rdma)"
# The whole-stack steps: NAME PROGRAM ARGS (GIDX: the GID index).
: >"$rfs/steps"
if [[ -n $stack ]]; then
	[[ -x $stack ]] || die "--stack $stack is not executable"
	cat >"$rfs/steps" <<EOS
rc ibv_rc_pingpong -g GIDX -n 50 -s 4096 -c
ud ibv_ud_pingpong -g GIDX -n 50 -s 512
srq ibv_srq_pingpong -g GIDX -n 20 -c
write_bw ib_write_bw -x GIDX -F -n 200 -s 65536 -p 18620
read_lat ib_read_lat -x GIDX -F -n 50 -p 18621
atomic_lat ib_atomic_lat -x GIDX -F -n 50 -p 18622
send_bw_imm ib_send_bw -x GIDX -F -n 200 -I 0 -p 18623
EOS
	for p in ibv_ud_pingpong ibv_srq_pingpong ib_write_bw ib_read_lat ib_atomic_lat ib_send_bw; do
		qemu_pack "$(command -v $p)"
	done
fi
qemu_rxe_provider
qemu_cpio "$work/initramfs.cpio.gz"

# ---------------------------------------------------- the host's side
tap=uabirxe0
qemu_netns uabi-rxe "$tap" 10.77.0.1/24

echo "run-rxe: booting $vmlinuz (TCG) with rxe; host side 10.77.0.1 in netns $ns"
qemu_boot_tap "$work/guest.log" "$timeout_s" 52:54:00:77:00:02 &
qemu=$!

fails=()
run_host() {	# name, then wire_pingpong's arguments
	local name=$1
	shift
	rm -f "$work/trace-$name.log"
	if UABI_WIRE_TRACE=$work/trace-$name.log ip netns exec "$ns" timeout 300 "$pingpong" --local 10.77.0.1 "$@" \
		>"$work/host-$name.log" 2>&1; then
		echo "run-rxe: host $name: PASS ($(grep -h 'usec/iter' "$work/host-$name.log"))"
	else
		fails+=("host $name (see $work/host-$name.log)")
		echo "run-rxe: host $name: FAIL"; tail -3 "$work/host-$name.log"
	fi
}
for size in $sizes; do
	# rxe serves, we connect (the guest waits for us); then the reverse.
	run_host "client-$size" --size "$size" --iters "$iters" --connect-timeout 240 10.77.0.2
	run_host "server-$size" --size "$size" --iters "$iters"
done
# The whole stack on the host: uabid in the namespace with a RoCE device
# on the tap, each step's counterpart under `uabi run`.
if [[ -n $stack ]]; then
	sock=$work/uabid/uabid.sock
	mkdir -p "$work/uabid"
	hs() { ip netns exec "$ns" env UABI_SOCKET="$sock" UABI_IDLE_EXIT=0 "$@"; }
	hs "$stack" daemon stop >/dev/null 2>&1
	hs "$stack" link add roce0 netdev "$tap" >"$work/link.log" 2>&1 ||
		fails+=("uabi link add roce0 netdev $tap: $(cat "$work/link.log")")
	while read -r name prog args; do
		args=${args//GIDX/0}
		# The guest serves first: connect until it listens.
		rc=1
		for try in $(seq 1 400); do
			hs timeout 240 "$stack" run -- $prog -d roce0 $args 10.77.0.2 >"$work/stack-client-$name.log" 2>&1
			rc=$?
			((rc == 0)) && break
			grep -qE "Couldn't connect|Unable to init the socket" "$work/stack-client-$name.log" || break
			sleep 0.5
		done
		if ((rc == 0)); then
			echo "run-rxe: host stack client $name: PASS"
		else
			fails+=("host stack client $name (see $work/stack-client-$name.log)")
			echo "run-rxe: host stack client $name: FAIL"; tail -n 3 "$work/stack-client-$name.log"
		fi
		if hs timeout 240 "$stack" run -- $prog -d roce0 $args >"$work/stack-server-$name.log" 2>&1; then
			echo "run-rxe: host stack server $name: PASS"
		else
			fails+=("host stack server $name (see $work/stack-server-$name.log)")
			echo "run-rxe: host stack server $name: FAIL"; tail -n 3 "$work/stack-server-$name.log"
		fi
	done <"$rfs/steps"
	hs "$stack" link >"$work/link-end.log" 2>&1
	hs "$stack" daemon stop >/dev/null 2>&1
fi
wait "$qemu"
log=$work/guest.log
grep -q '^UABI-RXE-RESULT: PASS' "$log" || fails+=("the guest did not report UABI-RXE-RESULT: PASS")
grep '^UABI-RXE-STEP: ' "$log"
grep -qE 'Kernel panic|Oops|BUG:' "$log" && fails+=("kernel panic/oops in the guest")
if ((${#fails[@]})); then
	for f in "${fails[@]}"; do echo "run-rxe: FAILED: $f"; done
	echo "run-rxe: guest log: $log"
	exit 1
fi
echo "run-rxe: PASS"
