#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# Tests rdma_uabi.ko in a real kernel: builds the module with Kbuild against
# the headers of the newest installed Debian kernel image, packs it with
# busybox and two static test binaries into an initramfs, boots that kernel
# under qemu (TCG), and inside the guest runs the conformance suite on the
# kernel backend and tests/kernel/ioctl_abuse.c, then unloads the module and
# checks the kernel log (tests/kernel/guest-init.sh).  The conformance tests
# that pass in the guest must be exactly those that pass in-process on the
# host (same binary, UABI_BACKEND=inproc).  With --e2e, the guest also runs
# the in-process verbs data-path tests (tests/e2e, e2e_inproc_verbs) on the
# kernel backend, so through the arena the module maps.  With --xrc (given
# once per program: ofed_xrc_mpi, ofed_xrc_mixed, upstream_xrc_peer of
# tests/xrc), it runs the multi-process XRC tests on the kernel backend,
# with each control path.  With --placement (tests/e2e/placement), it runs
# the in-order placement test between two processes on the kernel backend,
# once per mode (UABI_PLACEMENT_TOTAL operations each, default 1000000).
# With --security (tests/security's attacks program, and --placement), the
# attacks of docs/security.md run as uid 65534 beside a root victim.
# With --tool (the `uabi` command, and --security), `uabi objects` must list
# the QP another process of the user holds on the module.
#
# With --probes (the `uabi` tool; --probes-check, --probes-abuse,
# --probes-verbs-lib and --probes-umad-lib name check_sysfs, umad_abuse,
# the drop-in libibverbs.so.1 and libuabi_umad.so), the guest runs
# tests/probes/run_probes.sh on the kernel backend, as root and as uid
# 65534 (a user namespace): check_sysfs, umad_abuse and the unmodified
# infiniband-diags and srptools binaries of this host, packed with their
# shared libraries at the same paths (and setpriv, to change uid); with
# --probes-traffic (port_traffic), also the port counters following known
# traffic (perfquery, perfquery -x, their resets).  With
# --probes-rdmacm-lib (libuabi_rdmacm.so), the connection manager on the
# module: Debian's rping (step cm_rping), then the cases of
# tests/cm/run_cm.sh (steps cm_CASE) with this host's librdmacm programs,
# bash, timeout and stdbuf packed; a program not installed here makes its
# step a SKIP, which fails the test (make deps installs them).  With
# --cm-prog (given once per program: cm_ucma_abuse, cm_ucma_half_connect,
# cm_ucma_timeouts, cm_ucma_af_ib, cm_ucma_options of tests/cm), run_cm.sh's
# cases of those programs too (steps cm_abuse, cm_half-connect, cm_timeouts,
# cm_af-ib, cm_options;
# one not given fails its step), and this host's hostname and the dummy network driver (a
# non-loopback address for cm_host-address).
#
# With --bench (a dynamically linked bench_control), the guest also runs that
# benchmark on the kernel backend with the arguments of --bench-args (one
# string, split at spaces) and prints its JSON, which --bench-out saves on
# the host; with --bench-only it runs nothing else (scripts/bench.sh: no
# conformance or abuse binary is needed then).  --module-args ARGS (one
# string, split at spaces) are given to insmod, e.g. "heap_mib=64".
#
# Usage: run-qemu.sh [--work-dir DIR] [--conformance BIN] [--abuse BIN]
#                    [--e2e BIN] [--extras BIN] [--import BIN] [--xrc BIN]...
#                    [--placement BIN]
#                    [--security BIN] [--tool BIN]
#                    [--probes UABI_TOOL --probes-check BIN --probes-abuse BIN
#                     --probes-verbs-lib LIB --probes-umad-lib LIB
#                     [--probes-traffic BIN] [--probes-rdmacm-lib LIB]
#                     [--cm-prog BIN]...]
#                    [--kernel /boot/vmlinuz-VER]
#                    [--bench BIN [--bench-args ARGS] [--bench-out FILE]
#                     [--bench-only]] [--module-args ARGS] [--timeout SECONDS]
#   Without --conformance/--abuse the binaries are built in build/ (CMake).
#   --e2e, --extras (e2e_verbs_extras), --import (e2e_verbs_import), --xrc,
#   --placement, --security and
#   --tool take dynamically linked binaries: each is packed with
#   the shared libraries ldd finds for it, at the same paths.
#   Everything generated goes under the work directory (default
#   build/tests/kernel/qemu), never into the source tree.
# Exit status 0 only if every step passed (a SKIP fails).
# Missing tools FAIL the test.
#
# Environment: UABI_QEMU_SMP (default 2), UABI_QEMU_TIMEOUT (default 1650),
# UABI_CONFORMANCE_FILTER (a --gtest_filter for both conformance runs, for
# debugging; unset in CI), UABI_QEMU_ONLY (for debugging: the guest runs
# only the steps named, e.g. "placement security", "cm" for every cm_
# step or "cm_mckey cm_xrc" for those; unset in CI).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/scripts/qemu-lib.sh"
work=""
conformance=""
abuse=""
e2e=""
extras=""
import=""
xrc=()
placement=""
security=""
cm_bins=()
probes="" probes_check="" probes_abuse="" probes_verbs="" probes_umad="" probes_traffic="" probes_rdmacm=""
tool=""
bench=""
bench_args=""
bench_out=""
bench_only=0
module_args=""
vmlinuz=""
timeout_s=${UABI_QEMU_TIMEOUT:-1650}
smp=${UABI_QEMU_SMP:-2}

die() {
	echo "run-qemu: FAIL: $*" >&2
	echo "UABI-KERNEL summary: FAIL ($*)"
	exit 1
}

while (($#)); do
	case $1 in
	--work-dir) work=$2; shift 2 ;;
	--conformance) conformance=$2; shift 2 ;;
	--abuse) abuse=$2; shift 2 ;;
	--e2e) e2e=$2; shift 2 ;;
	--extras) extras=$2; shift 2 ;;
	--import) import=$2; shift 2 ;;
	--xrc) xrc+=("$2"); shift 2 ;;
	--placement) placement=$2; shift 2 ;;
	--security) security=$2; shift 2 ;;
	--probes) probes=$2; shift 2 ;;
	--probes-check) probes_check=$2; shift 2 ;;
	--probes-traffic) probes_traffic=$2; shift 2 ;;
	--probes-abuse) probes_abuse=$2; shift 2 ;;
	--probes-verbs-lib) probes_verbs=$2; shift 2 ;;
	--probes-umad-lib) probes_umad=$2; shift 2 ;;
	--probes-rdmacm-lib) probes_rdmacm=$2; shift 2 ;;
	--cm-prog) cm_bins+=("$2"); shift 2 ;;
	--tool) tool=$2; shift 2 ;;
	--bench) bench=$2; shift 2 ;;
	--bench-args) bench_args=$2; shift 2 ;;
	--bench-out) bench_out=$2; shift 2 ;;
	--bench-only) bench_only=1; shift ;;
	--module-args) module_args=$2; shift 2 ;;
	--kernel) vmlinuz=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	-h | --help) sed -n '3,70p' "$0"; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
done

t_start=$(date +%s)

# ----------------------------------------------------------- prerequisites
hint="install them with scripts/install-deps.sh --kernel-only"
missing=()
for prog in qemu-system-x86_64 make gcc cpio gzip strip timeout; do
	command -v "$prog" >/dev/null || missing+=("$prog")
done
((${#missing[@]} == 0)) || die "missing ${missing[*]}: $hint"
qemu_busybox

# The newest installed kernel image whose headers are installed, unless
# --kernel named one.
[[ -n $vmlinuz ]] || qemu_kernel headers
[[ -e $vmlinuz ]] || die "no kernel image $vmlinuz: $hint"
[[ -r $vmlinuz ]] || die "cannot read $vmlinuz (run as root?)"
kver=${vmlinuz##*/vmlinuz-}
kdir=/lib/modules/$kver/build
[[ -f $kdir/Makefile ]] ||
	die "no kernel headers for $kver in $kdir (package linux-headers-amd64): $hint"

# --------------------------------------------------------- test binaries
if ((bench_only)); then
	[[ -n $bench ]] || die "--bench-only without --bench"
	[[ -z $conformance && -z $abuse && -z $e2e && -z $placement && -z $security &&
	   -z $probes && ${#xrc[@]} -eq 0 ]] ||
		die "--bench-only runs no test binary"
elif [[ -z $conformance || -z $abuse ]]; then
	bdir=$root/build
	echo "run-qemu: building the static test binaries in $bdir"
	if [[ ! -f $bdir/CMakeCache.txt ]]; then
		cmake -S "$root" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
			>/dev/null || die "cmake configure failed"
	fi
	cmake --build "$bdir" --target uabi_conformance_static uabi_ioctl_abuse ||
		die "building the static test binaries failed (is tests/kernel added to tests/CMakeLists.txt?)"
	conformance=$(find "$bdir" -name uabi_conformance_static -type f -perm -u+x | head -1)
	abuse=$(find "$bdir" -name ioctl_abuse -type f -perm -u+x | head -1)
fi
((bench_only)) || [[ -x $conformance ]] || die "conformance binary '$conformance' not found"
((bench_only)) || [[ -x $abuse ]] || die "ioctl_abuse binary '$abuse' not found"
[[ -z $bench || -x $bench ]] || die "bench binary '$bench' not found"
[[ -z $e2e || -x $e2e ]] || die "e2e binary '$e2e' not found"
[[ -z $placement || -x $placement ]] || die "placement binary '$placement' not found"
[[ -z $security || -x $security ]] || die "security binary '$security' not found"
for b in "${xrc[@]}"; do
	[[ -x $b ]] || die "xrc binary '$b' not found"
done
for b in "${cm_bins[@]}"; do
	[[ -x $b ]] || die "--cm-prog binary '$b' not found"
done
# The diagnostics the probes run, from this host's packages.
probes_progs=(ibstat ibstatus ibaddr sminfo perfquery smpquery ibnetdiscover iblinkinfo
	saquery srp_daemon setpriv)
probes_paths=()
# The librdmacm programs the guest runs with tests/cm/run_cm.sh beside
# rping, when installed here (rdmacm-utils, perftest).
cm_progs=(rping ucmatose udaddy cmtime rdma_server rdma_client rdma_xserver rdma_xclient
	rstream riostream mckey ib_send_bw ib_write_lat ib_read_bw)
if [[ -n $probes ]]; then
	for b in "$probes" "$probes_check" "$probes_abuse" "$probes_verbs" "$probes_umad"; do
		[[ -n $b && -e $b ]] || die "--probes needs the tool, check_sysfs, umad_abuse and both libraries ('$b' not found)"
	done
	for prog in "${probes_progs[@]}"; do
		p=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "$prog") ||
			die "$prog not found (packages infiniband-diags, srptools, util-linux: scripts/install-deps.sh)"
		probes_paths+=("$p")
	done
fi
[[ -n $work ]] || work=$root/build/tests/kernel/qemu
mkdir -p "$work" || die "cannot create $work"
work=$(cd "$work" && pwd)

# ------------------------------------------------------------- the module
echo "run-qemu: building rdma_uabi.ko for $kver (W=1)"
t0=$(date +%s)
qemu_build_module "$work" "$kver"
echo "run-qemu: module built in $(($(date +%s) - t0))s, no W=1 warning"

# -------------------------------------------------------------- initramfs
echo "run-qemu: packing the initramfs"
qemu_rfs_init "$work/initramfs" "$here/guest-init.sh"
gtest_args=(--gtest_color=no)
[[ -z ${UABI_CONFORMANCE_FILTER:-} ]] ||
	gtest_args+=("--gtest_filter=$UABI_CONFORMANCE_FILTER")
printf '%s\n' "${gtest_args[@]}" >"$rfs/conformance.args"
[[ -z ${UABI_QEMU_ONLY:-} ]] || echo "$UABI_QEMU_ONLY" >"$rfs/only.steps"
strip --strip-debug -o "$rfs/rdma_uabi.ko" "$ko" || die "strip $ko"
[[ -z $module_args ]] || printf '%s\n' $module_args >"$rfs/module.args"
if ((bench_only)); then
	touch "$rfs/bench.only"
else
	strip -o "$rfs/uabi_conformance" "$conformance" || die "strip $conformance"
	strip -o "$rfs/ioctl_abuse" "$abuse" || die "strip $abuse"
fi
# A dynamically linked test binary, stripped, at $rfs/$2, with its shared
# libraries (our libibverbs.so.1 included) at the paths the binary resolves
# them to on this host, and all of them again in /e2e-libs, which the guest
# puts first on LD_LIBRARY_PATH: the build tree may live under /tmp, which
# the guest mounts a tmpfs over.
pack_dynamic() {
	local bin=$1 dest=$2 libs lib
	command -v ldd >/dev/null || die "missing ldd (for --e2e/--xrc)"
	mkdir -p "$(dirname "$rfs/$dest")"
	strip -o "$rfs/$dest" "$bin" || die "strip $bin"
	libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}') ||
		die "ldd $bin failed"
	mkdir -p "$rfs/e2e-libs"
	for lib in $libs; do
		mkdir -p "$rfs$(dirname "$lib")"
		cp -L "$lib" "$rfs$lib" || die "copying $lib failed"
		cp -L "$lib" "$rfs/e2e-libs/" || die "copying $lib failed"
	done
}
[[ -z $e2e ]] || pack_dynamic "$e2e" e2e_inproc_verbs
[[ -z $extras ]] || pack_dynamic "$extras" e2e_verbs_extras
[[ -z $import ]] || pack_dynamic "$import" e2e_verbs_import
[[ -z $security ]] || pack_dynamic "$security" security_attacks
[[ -z $tool ]] || pack_dynamic "$tool" uabi
if [[ -n $placement ]]; then
	pack_dynamic "$placement" placement
	echo "${UABI_PLACEMENT_TOTAL:-1000000}" >"$rfs/placement.total"
fi
for b in "${xrc[@]}"; do
	pack_dynamic "$b" "xrc/$(basename "$b")"
done
# Programs of this host (qemu_pack) are packed at their own paths with
# their shared libraries at theirs, not in /e2e-libs: the real
# libibverbs.so.1 of srp_daemon must not shadow the drop-in there.
if [[ -n $probes ]]; then
	mkdir -p "$rfs/probes/lib"
	for p in "${probes_paths[@]}"; do
		qemu_pack "$p"
	done
	ln -sf srp_daemon "$rfs$(dirname "$(PATH=/usr/sbin:/usr/bin command -v srp_daemon)")/ibsrpdm"
	qemu_pack "$probes" /probes/uabi
	# IBV_EVENT_DEVICE_FATAL when a RoCE device goes (guest step
	# device_fatal; missing, the step fails).
	p=$(command -v ibv_asyncwatch) && qemu_pack "$p" /probes/ibv_asyncwatch
	qemu_pack "$probes_check" /probes/check_sysfs
	qemu_pack "$probes_abuse" /probes/umad_abuse
	qemu_pack "$probes_verbs" /probes/lib/libibverbs.so.1
	qemu_pack "$probes_umad" /probes/lib/libuabi_umad.so
	# The connection manager on the module: Debian's rping under `uabi
	# run`, librdmacm's file served by the ucma shim.
	if [[ -n $probes_rdmacm ]]; then
		p=$(command -v rping) || die "rping not found (package rdmacm-utils: scripts/install-deps.sh)"
		qemu_pack "$p" /probes/rping
		qemu_pack "$probes_rdmacm" /probes/lib/libuabi_rdmacm.so
		strip --strip-debug "$rfs/probes/lib/libuabi_rdmacm.so" || die "strip libuabi_rdmacm.so"
		# The other programs of tests/cm/run_cm.sh, each where it is
		# installed here (one missing: its guest step is a SKIP, a
		# failure of the test), and
		# what that bash script needs beyond busybox: bash, coreutils'
		# timeout (124 when it kills) and stdbuf (for mckey).
		for prog in "${cm_progs[@]}"; do
			p=$(command -v "$prog") && qemu_pack "$p" "/usr/bin/$prog"
		done
		for prog in bash timeout stdbuf; do
			p=$(command -v "$prog") || die "$prog not found (for tests/cm/run_cm.sh in the guest)"
			qemu_pack "$p" "/usr/bin/$prog"
		done
		p=$(ls /usr/libexec/coreutils/libstdbuf.so /usr/lib/*/coreutils/libstdbuf.so 2>/dev/null | head -1)
		[[ -n $p ]] && qemu_pack "$p"
		cp "$root/tests/cm/run_cm.sh" "$rfs/probes/run_cm.sh" || die "copy run_cm.sh"
		cp "$root/tests/cm/rping-expect.sh" "$rfs/probes/rping-expect.sh" || die "copy rping-expect.sh"
		# run_cm.sh's raw ucma programs (and cm_ucma_timeouts' Debian
		# librdmacm, at its own path, with it).
		for b in "${cm_bins[@]}"; do
			qemu_pack "$b" "/probes/cm/$(basename "$b")"
			strip --strip-debug "$rfs/probes/cm/$(basename "$b")" || die "strip $b"
		done
		# cm_host-address: hostname -I (busybox's has no -I) lists the
		# address the guest puts on dummy0 (the guest has no NIC).
		p=$(command -v hostname) || die "hostname not found (package hostname)"
		qemu_pack "$p" /usr/bin/hostname
		qemu_modules cm.modules "$kver" dummy
	fi
	if [[ -n $probes_traffic ]]; then
		qemu_pack "$probes_traffic" /probes/port_traffic
		strip --strip-debug "$rfs/probes/port_traffic" || die "strip port_traffic"
	fi
	for b in uabi check_sysfs umad_abuse lib/libibverbs.so.1 lib/libuabi_umad.so; do
		strip --strip-debug "$rfs/probes/$b" || die "strip $b"
	done
	cp "$root/tests/probes/run_probes.sh" "$rfs/probes/run_probes.sh"
fi
if [[ -n $bench ]]; then
	pack_dynamic "$bench" bench/bench_control
	# One argument per line (none contains a space).
	printf '%s\n' $bench_args >"$rfs/bench.args"
fi
qemu_cpio "$work/initramfs.cpio.gz"

# ------------------------------------------- reference: in-process on host
if ((bench_only)); then
	: >"$work/inproc.log"
	: >"$work/inproc.ok"
	inproc_rc=0
else
	echo "run-qemu: reference run of the conformance suite in-process on the host"
	UABI_BACKEND=inproc "$conformance" "${gtest_args[@]}" >"$work/inproc.log" 2>&1
	inproc_rc=$?
	grep -E '^\[       OK \] ' "$work/inproc.log" | awk '{print $4}' | sort >"$work/inproc.ok"
fi

# -------------------------------------------------------------------- boot
# Tests run with the allocator's debug checks; a benchmark-only run
# measures the kernel as it is normally configured.
slub="slub_debug=FZPU,kmalloc-*"
((bench_only)) && slub=""
echo "run-qemu: booting $vmlinuz under TCG (-smp $smp, timeout ${timeout_s}s)"
t0=$(date +%s)
QEMU_TEE="guest| " qemu_boot "$work/guest.log" "$timeout_s" "$smp" "$slub" \
	-nic none -initrd "$work/initramfs.cpio.gz"
qemu_rc=$?
guest_s=$(($(date +%s) - t0))

# ----------------------------------------------------------------- verdict
fails=()
log=$work/guest.log
((qemu_rc == 124)) && fails+=("qemu timed out after ${timeout_s}s")
grep -q '^UABI-KERNEL-RESULT: PASS' "$log" ||
	fails+=("guest did not report UABI-KERNEL-RESULT: PASS")
while read -r _ name verdict; do
	# SKIP: a librdmacm program of a cm_ step is not installed here; a
	# step that did not run is no pass (make deps installs them).
	if [[ $verdict == SKIP ]]; then
		fails+=("guest step $name: SKIP (its program is not installed here: make deps)")
	elif [[ $verdict != PASS ]]; then
		fails+=("guest step $name: $verdict")
	fi
done < <(grep '^UABI-KERNEL-STEP: ' "$log")
grep -qE 'Kernel panic|Oops|BUG:' "$log" && fails+=("kernel panic/oops on the console")

sed -n '/^UABI-KERNEL-CONFORMANCE-BEGIN/,/^UABI-KERNEL-CONFORMANCE-END/p' "$log" |
	grep -E '^\[       OK \] ' | awk '{print $4}' | sort >"$work/kernel.ok"
n_inproc=$(wc -l <"$work/inproc.ok")
n_kernel=$(wc -l <"$work/kernel.ok")
kernel_summary=$(sed -n '/^UABI-KERNEL-CONFORMANCE-BEGIN/,/^UABI-KERNEL-CONFORMANCE-END/p' "$log" |
	grep -E '^\[  (PASSED|FAILED|SKIPPED) +\]|tests? ran' | tr '\n' ' ')
inproc_summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\]|tests? ran' "$work/inproc.log" | tr '\n' ' ')
((inproc_rc == 0)) || fails+=("the in-process reference run failed (exit $inproc_rc, see $work/inproc.log)")
((n_inproc > 0 || bench_only)) || fails+=("the in-process reference run passed no test")
if [[ -n ${UABI_QEMU_ONLY:-} && ! " $UABI_QEMU_ONLY " =~ " conformance " ]]; then
	echo "(UABI_QEMU_ONLY=$UABI_QEMU_ONLY: conformance not run, not compared)"
elif ! diff -q "$work/inproc.ok" "$work/kernel.ok" >/dev/null; then
	fails+=("conformance passes differ: inproc $n_inproc, kernel $n_kernel")
	echo "Conformance tests passing on one backend only (< inproc, > kernel):"
	diff "$work/inproc.ok" "$work/kernel.ok" | grep '^[<>]'
fi
abuse_line=$(grep -E '^ioctl_abuse: ' "$log" | tail -1)
if [[ -n $bench ]]; then
	bjson=$work/bench.json
	sed -n '/^UABI-KERNEL-BENCH-JSON-BEGIN/,/^UABI-KERNEL-BENCH-JSON-END/p' "$log" |
		sed '1d;$d' >"$bjson"
	if grep -q '"benchmarks"' "$bjson" && tail -1 "$bjson" | grep -q '^}'; then
		[[ -z $bench_out ]] || cp "$bjson" "$bench_out" || fails+=("cannot write $bench_out")
	else
		fails+=("no benchmark JSON from the guest")
	fi
fi

echo
echo "==== rdma_uabi kernel test summary ===="
echo "kernel:            $kver ($vmlinuz), qemu TCG -smp $smp"
echo "module:            $ko"
((bench_only)) && echo "(--bench-only: no test binary ran)"
echo "conformance:       inproc: ${inproc_summary:-none}"
echo "                   kernel: ${kernel_summary:-none}"
echo "                   passing: inproc $n_inproc, kernel $n_kernel"
[[ -z ${UABI_CONFORMANCE_FILTER:-} ]] ||
	echo "                   (UABI_CONFORMANCE_FILTER=$UABI_CONFORMANCE_FILTER)"
echo "ioctl_abuse:       ${abuse_line:-no result}"
grep '^UABI-KERNEL-STEP: ' "$log" | sed 's/^UABI-KERNEL-STEP: /step:              /'
echo "guest boot+tests:  ${guest_s}s; whole run $(($(date +%s) - t_start))s"
echo "logs:              $work/{guest,inproc,kbuild}.log"
if ((${#fails[@]})); then
	for f in "${fails[@]}"; do echo "FAILED: $f"; done
	echo "UABI-KERNEL summary: FAIL"
	exit 1
fi
skipped=$(grep '^UABI-KERNEL-STEP: .* SKIP$' "$log" | awk '{print $2}' | tr '\n' ' ')
echo "UABI-KERNEL summary: PASS${skipped:+ (not run, their programs not installed here: ${skipped% })}"
exit 0
