#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# rdma_uabi.ko against Linux's Soft-RoCE (rxe), in one qemu (TCG) guest
# boot: Debian's kernel with the module and rdma_rxe loaded side by side
# (rxe bound to a virtio NIC on qemu's user-mode network: nothing leaves
# the guest), and Debian's unmodified perftest, `ib_write_bw -s 65536` and
# `ib_send_lat -s 2`, server and client as two processes of the guest, on
# the module (under `uabi run`, the drop-in libibverbs.so.1) and on rxe
# (Debian's libibverbs and rxe provider, rxe's loopback), alternately,
# ROUNDS times each (bench/qemu_vs_rxe-guest-init.sh).  Prints the medians
# and the ratios module ÷ rxe; with --out FILE also writes them as
# key=value lines (scripts/bench.sh hands them to scripts/bench_report.py).
#
# Usage: qemu_vs_rxe.sh [--build DIR] [--work-dir DIR] [--rounds N]
#                       [--bw-iters N] [--lat-iters N] [--out FILE]
# Needs: qemu-system-x86_64, the kernel image and headers of
# /boot/vmlinuz-*, busybox (static), perftest, rdma (iproute2), the rxe
# provider (ibverbs-providers), and the build's `uabi` and libibverbs.so.1.
# Exit status 0 only if every run in the guest passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=$root/build work="" out="" rounds=5 bw_iters=5000 lat_iters=1000
timeout_s=${UABI_QVR_TIMEOUT:-3000}
smp=${UABI_QEMU_SMP:-2}
die() {
	echo "qemu_vs_rxe: FAIL: $*" >&2
	exit 1
}
while (($#)); do
	case $1 in
	--build) build=$2; shift 2 ;;
	--work-dir) work=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--bw-iters) bw_iters=$2; shift 2 ;;
	--lat-iters) lat_iters=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h | --help) sed -n '3,22p' "$0"; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done
build=$(cd "$build" && pwd) || die "no build directory"
work=${work:-$build/bench/qemu_vs_rxe}
mkdir -p "$work" && work=$(cd "$work" && pwd) || die "cannot create $work"
for prog in qemu-system-x86_64 make cpio gzip strip ldd modprobe timeout ib_write_bw ib_send_lat rdma; do
	command -v "$prog" >/dev/null || die "missing $prog (scripts/install-deps.sh)"
done
busybox=/bin/busybox
[[ -x $busybox ]] || die "missing busybox (static)"
vmlinuz=""
for v in $(ls /boot/vmlinuz-* 2>/dev/null | sort -rV); do
	[[ -f /lib/modules/${v##*/vmlinuz-}/build/Makefile ]] && vmlinuz=$v && break
done
[[ -n $vmlinuz && -r $vmlinuz ]] || die "no readable /boot/vmlinuz-* with its headers"
kver=${vmlinuz##*/vmlinuz-}
uabi=$build/newapi/tools/uabi
verbs=$(find "$build/compat" -name 'libibverbs.so.1' 2>/dev/null | head -1)
[[ -x $uabi ]] || die "no $uabi (ninja -C $build uabi)"
[[ -n $verbs ]] || die "no drop-in libibverbs.so.1 under $build/compat (ninja -C $build uabi_verbs)"
provider=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
[[ -n $provider && -e /etc/libibverbs.d/rxe.driver ]] || die "no rxe provider (ibverbs-providers)"

# ------------------------------------------------------------- the module
echo "qemu_vs_rxe: building rdma_uabi.ko for $kver (W=1)"
src=$work/src
rm -rf "$src" && mkdir -p "$src/kernel/os" "$src/include/uapi"
cp -r "$root/kernel/Kbuild" "$root/kernel/core" "$root/kernel/drivers" "$root/kernel/include" "$src/kernel/" &&
	cp -r "$root/kernel/os/linux" "$src/kernel/os/" &&
	cp -r "$root/include/uapi/rdma" "$src/include/uapi/" || die "staging the sources"
make -C "/lib/modules/$kver/build" M="$src/kernel" W=1 -j"$(nproc)" modules >"$work/kbuild.log" 2>&1 ||
	{ cat "$work/kbuild.log"; die "Kbuild failed"; }
grep -E 'warning:|error:' "$work/kbuild.log" && die "Kbuild W=1 printed warnings"

# -------------------------------------------------------------- initramfs
rfs=$work/initramfs
rm -rf "$rfs" && mkdir -p "$rfs"/{bin,dev,proc,sys,tmp,qvr,etc/libibverbs.d,lib/modules}
cp "$busybox" "$rfs/bin/busybox" && ln -s busybox "$rfs/bin/sh"
install -m 755 "$here/qemu_vs_rxe-guest-init.sh" "$rfs/init"
strip --strip-debug -o "$rfs/rdma_uabi.ko" "$src/kernel/rdma_uabi.ko" || die "strip rdma_uabi.ko"
echo "$rounds" >"$rfs/rounds"
echo "-s 65536 -n $bw_iters" >"$rfs/bw.args"
echo "-s 2 -n $lat_iters" >"$rfs/lat.args"
# rxe and what it needs, in load order.
: >"$rfs/modules"
for m in virtio_pci virtio_net crc32_generic rdma_rxe; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}' |
		while read -r ko; do
			grep -qxF "/lib/modules/${ko##*/}" "$rfs/modules" && continue
			cp "$ko" "$rfs/lib/modules/" || exit 1
			echo "/lib/modules/${ko##*/}" >>"$rfs/modules"
		done || die "modules for $m"
done
# A file of this host at its path (or DEST), with its shared libraries at theirs.
pack() {
	local f=$1 dest=${2:-$1} lib
	mkdir -p "$rfs$(dirname "$dest")"
	cp -L "$f" "$rfs$dest" || die "copy $f"
	for lib in $(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		[[ -e $rfs$lib ]] && continue
		mkdir -p "$rfs$(dirname "$lib")"
		cp -L "$lib" "$rfs$lib" || die "copy $lib"
	done
}
pack "$(command -v ib_write_bw)"
pack "$(command -v ib_send_lat)"
pack "$(command -v rdma)"
pack "$provider"
cp /etc/libibverbs.d/rxe.driver "$rfs/etc/libibverbs.d/" || die "rxe.driver"
pack "$uabi" /qvr/uabi
pack "$verbs" /qvr/libibverbs.so.1
strip --strip-debug "$rfs/qvr/uabi" "$rfs/qvr/libibverbs.so.1" || die "strip"
(cd "$rfs" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) \
	>"$work/initramfs.cpio.gz" || die "cpio"

# -------------------------------------------------------------------- boot
echo "qemu_vs_rxe: booting $vmlinuz under TCG (-smp $smp), $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
timeout --foreground -k 10 "$timeout_s" \
	qemu-system-x86_64 -accel tcg -m 1G -smp "$smp" -nographic -no-reboot \
	-nic user,model=virtio-net-pci,restrict=on \
	-kernel "$vmlinuz" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 loglevel=5 rdinit=/init" </dev/null 2>&1 |
	sed -u 's/\r//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' >"$work/guest.log"
qemu_rc=${PIPESTATUS[0]}
guest_s=$(($(date +%s) - t0))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
log=$work/guest.log

# ----------------------------------------------------------------- results
python3 - "$log" "$out" "$kver" "$smp" "$rounds" "$bw_iters" "$lat_iters" "$guest_s" \
	"$load_start" "$load_end" <<'EOF'
import math, re, statistics, sys
log, out, kver, smp, rounds, bw_iters, lat_iters, secs, l0, l1 = sys.argv[1:]
rows = {}   # (backend, test) -> [values]
zero = {}   # (backend, test) -> runs perftest could not time
cur = None
for line in open(log, errors="replace"):
    m = re.match(r"QVR-ROW: (\S+) (\S+) (\d+)", line)
    if m:
        cur = (m.group(1), m.group(2))
        continue
    if cur and line.startswith("(no result row)"):
        zero[cur] = zero.get(cur, 0) + 1
        cur = None
        continue
    if cur and re.match(r"^\s*\d+\s+\d+\s+\S+\s+\S+\s+\S+", line):
        f = line.split()
        # ib_write_bw: bytes iters bw_peak bw_avg(MiB/s) msg_rate;
        # ib_send_lat: bytes iters t_min t_max t_typical ...
        v = float(f[3]) if cur[1] == "write_bw" else float(f[4])
        # perftest prints 0 or inf when it could not time the run (its
        # calibration of the cycle counter failed: seen with the host
        # overloaded): counted apart, not in the median.
        if math.isfinite(v) and v > 0:
            rows.setdefault(cur, []).append(v)
        else:
            zero[cur] = zero.get(cur, 0) + 1
        cur = None
def med(be, t):
    xs = rows.get((be, t), [])
    return (statistics.median(xs), min(xs), max(xs), len(xs)) if xs else None
res = {}
lines = []
for t, unit, what in (("write_bw", "MiB/s", "ib_write_bw 64 KiB, BW average"),
                      ("send_lat", "us", "ib_send_lat 2 B, t_typical")):
    for be in ("module", "rxe"):
        m = med(be, t)
        if m:
            res["%s_%s" % (be, t)] = "%.3f" % m[0]
            res["%s_%s_range" % (be, t)] = "%.3f-%.3f" % (m[1], m[2])
            res["%s_%s_n" % (be, t)] = str(m[3])
            z = zero.get((be, t), 0)
            res["%s_%s_untimed" % (be, t)] = str(z)
            lines.append("%-40s %-6s median %10.2f %s (%d runs, %.2f to %.2f)%s"
                         % (what, be, m[0], unit, m[3], m[1], m[2],
                            "; %d more untimed (0 or inf), left out" % z if z else ""))
mb, rb = med("module", "write_bw"), med("rxe", "write_bw")
ml, rl = med("module", "send_lat"), med("rxe", "send_lat")
if mb and rb and rb[0] > 0:
    res["ratio_write_bw"] = "%.3f" % (mb[0] / rb[0])
    lines.append("ib_write_bw module / rxe = %.2f (target >= 10)" % (mb[0] / rb[0]))
if ml and rl and rl[0] > 0:
    res["ratio_send_lat"] = "%.4f" % (ml[0] / rl[0])
    lines.append("ib_send_lat module / rxe = %.3f (target <= 0.2)" % (ml[0] / rl[0]))
res.update(kernel=kver, smp=smp, rounds=rounds, bw_iters=bw_iters, lat_iters=lat_iters,
           guest_seconds=secs, load_start=l0, load_end=l1)
print("\n".join(lines))
if out:
    with open(out, "w") as f:
        for k, v in res.items():
            f.write("%s=%s\n" % (k, v))
EOF
grep '^QVR-STATUS: ' "$log" | grep -v 'server=0 client=0'
echo "qemu_vs_rxe: guest ${guest_s}s, load at start $load_start, at end $load_end; log $log"
((qemu_rc == 124)) && die "qemu timed out after ${timeout_s}s"
grep -q '^QVR-RESULT: PASS' "$log" || die "the guest did not report QVR-RESULT: PASS (see $log)"
echo "qemu_vs_rxe: PASS"
