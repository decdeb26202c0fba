# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# shellcheck shell=bash
#
# What the qemu guest scripts share (sourced, bash): finding Debian's
# kernel image, building rdma_uabi.ko from a staged copy of the sources
# (W=1, a warning fails), packing an initramfs (static busybox, an /init,
# kernel modules in load order, host programs with their shared libraries
# at their own paths, scripts/qemu-guest-lib.sh as /lib.sh for the /init to
# source), booting it under TCG, and the network namespace with a tap
# device that a guest's NIC is plugged into.
#
# Used by tests/kernel/run-qemu.sh, tests/wire/run-{kroce,rxe,rxe-cm}.sh and
# bench/qemu_vs_rxe.sh.  The caller defines die() (prints, exits non-zero)
# before calling any of these.
#
# Environment: UABI_NS_TAG, a word put into the names of the network
# namespaces made here (beside the process id), so that runs of several
# worktrees or users on one machine are told apart at a glance.

qemu_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# qemu_busybox: sets busybox to a statically linked busybox (the guest has
# no shared libraries of its own), or dies.
qemu_busybox() {
	local b
	busybox=""
	for b in /bin/busybox /usr/bin/busybox; do
		if [[ -x $b ]] && file -L "$b" 2>/dev/null | grep -q 'statically linked'; then
			busybox=$b
			return 0
		fi
	done
	# Without file(1), trust the busybox-static package.
	if dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed'; then
		busybox=/bin/busybox
		return 0
	fi
	die "missing busybox (static) (scripts/install-deps.sh)"
}

# qemu_kernel headers|any: sets vmlinuz and kver to the newest installed
# /boot/vmlinuz-* (with "headers": the newest whose headers are installed,
# to build the module against), or dies.
qemu_kernel() {
	local v
	vmlinuz=""
	for v in $(ls /boot/vmlinuz-* 2>/dev/null | sort -rV); do
		if [[ $1 == any || -f /lib/modules/${v##*/vmlinuz-}/build/Makefile ]]; then
			vmlinuz=$v
			break
		fi
	done
	[[ -n $vmlinuz ]] ||
		die "no /boot/vmlinuz-*${1/any/} (linux-image-amd64, linux-headers-amd64: scripts/install-deps.sh)"
	[[ -r $vmlinuz ]] || die "cannot read $vmlinuz (run as root?)"
	kver=${vmlinuz##*/vmlinuz-}
	[[ -d /lib/modules/$kver ]] || die "no /lib/modules/$kver"
}

# qemu_build_module WORK KVER: builds rdma_uabi.ko with Kbuild at W=1 from a
# copy of kernel/ and the uAPI headers in WORK/src (Kbuild writes its
# objects beside the sources), log in WORK/kbuild.log; sets ko to the
# module; dies on a failure or any warning.
qemu_build_module() {
	local work=$1 kver=$2 root src
	root=$(cd "$qemu_lib_dir/.." && pwd)
	src=$work/src
	rm -rf "$src"
	mkdir -p "$src/kernel/os" "$src/include/uapi"
	cp -r "$root/kernel/Kbuild" "$root/kernel/core" "$root/kernel/drivers" "$root/kernel/include" \
		"$src/kernel/" && cp -r "$root/kernel/os/linux" "$src/kernel/os/" &&
		cp -r "$root/include/uapi/rdma" "$src/include/uapi/" || die "staging the module's sources"
	make -C "/lib/modules/$kver/build" M="$src/kernel" W=1 -j"$(nproc)" modules >"$work/kbuild.log" 2>&1 ||
		{ cat "$work/kbuild.log"; die "Kbuild failed"; }
	grep -E 'warning:|error:' "$work/kbuild.log" && die "Kbuild W=1 printed warnings"
	ko=$src/kernel/rdma_uabi.ko
	[[ -f $ko ]] || die "no rdma_uabi.ko after Kbuild"
}

# qemu_rfs_init RFS INIT [DIR...]: a fresh initramfs tree at RFS (sets rfs)
# with busybox, /bin/sh, INIT as /init, scripts/qemu-guest-lib.sh as
# /lib.sh, and the directories named (relative to RFS).
qemu_rfs_init() {
	local d
	rfs=$1
	[[ -n ${busybox:-} ]] || qemu_busybox
	rm -rf "$rfs"
	mkdir -p "$rfs"/{bin,dev,proc,sys,tmp} || die "mkdir $rfs"
	for d in "${@:3}"; do mkdir -p "$rfs/$d"; done
	cp "$busybox" "$rfs/bin/busybox" && ln -s busybox "$rfs/bin/sh" &&
		install -m 755 "$2" "$rfs/init" &&
		cp "$qemu_lib_dir/qemu-guest-lib.sh" "$rfs/lib.sh" || die "initramfs $rfs"
}

# qemu_modules LIST KVER MODULE...: each MODULE of KVER with what it
# depends on, in load order, copied to $rfs/lib/modules and appended to the
# list $rfs/LIST (one guest path a line; the guest insmods them in that
# order); a module already in $rfs/modules or $rfs/LIST is left out.
qemu_modules() {
	local list=$rfs/$1 kver=$2 m ko
	shift 2
	mkdir -p "$rfs/lib/modules"
	touch "$rfs/modules" "$list"
	for m in "$@"; do
		ko=""
		for ko in $(modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'); do
			grep -qxF "/lib/modules/${ko##*/}" "$rfs/modules" "$list" && continue
			cp "$ko" "$rfs/lib/modules/" || die "copy $ko"
			echo "/lib/modules/${ko##*/}" >>"$list"
		done
		[[ -n $ko ]] || die "no modules for $m"
	done
}

# qemu_modparam LIST MODULE PARAM...: MODULE, which qemu_modules put in
# LIST, is loaded with PARAMs (name=value, as insmod takes them).
qemu_modparam() {
	local list=$rfs/$1 m=$2
	shift 2
	grep -q "/$m\.ko[.a-z]*\$" "$list" || die "qemu_modparam: $m is not in $1"
	sed -i "s|/$m\.ko[.a-z]*\$|& $*|" "$list"
}

# qemu_pack FILE [DEST]: a file of this host at its own path in $rfs (or at
# DEST), with the shared libraries ldd finds for it at the paths they
# resolve to here (a script is copied alone).
qemu_pack() {
	local f=$1 dest=${2:-$1} lib
	mkdir -p "$rfs$(dirname "$dest")"
	cp -L "$f" "$rfs$dest" || die "copy $f"
	head -c 4 "$f" | grep -q ELF || return 0
	for lib in $(ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		[[ -e $rfs$lib ]] && continue
		mkdir -p "$rfs$(dirname "$lib")"
		cp -L "$lib" "$rfs$lib" || die "copy $lib"
	done
}

# qemu_cpio OUT: $rfs as a gzipped newc archive, every file root's.
qemu_cpio() {
	(cd "$rfs" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$1" ||
		die "cpio"
}

# qemu_boot LOG SECONDS SMP APPEND QEMU_ARG...: boots $vmlinuz with the
# initramfs given among the QEMU_ARGs (-initrd) under TCG, 1 GiB, console
# on the serial port, kernel arguments "console=ttyS0 panic=-1 loglevel=5
# APPEND rdinit=/init", killed after SECONDS; the console, without carriage
# returns and terminal escapes, goes to LOG (and, with QEMU_TEE=PREFIX, to
# stdout behind PREFIX).  Returns qemu's exit status (124: timed out).
# With QEMU_NETNS=NS, qemu runs in that network namespace (its tap).
qemu_boot() {
	local log=$1 secs=$2 smp=$3 append=$4 rc
	shift 4
	${QEMU_NETNS:+ip netns exec "$QEMU_NETNS"} timeout --foreground -k 10 "$secs" \
		qemu-system-x86_64 -accel tcg -m 1G -smp "$smp" -nographic -no-reboot "$@" \
		-kernel "$vmlinuz" -append "console=ttyS0 panic=-1 loglevel=5 ${append:+$append }rdinit=/init" \
		</dev/null 2>&1 | sed -u 's/\r//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' |
		if [[ -n ${QEMU_TEE:-} ]]; then tee "$log" | sed -u "s/^/$QEMU_TEE/"; else cat >"$log"; fi
	rc=${PIPESTATUS[0]}
	return "$rc"
}

# qemu_netns BASE TAP ADDR/PREFIX: a network namespace of this run (sets ns
# to BASE-[UABI_NS_TAG-]PID) with lo up and a tap device TAP at ADDR, up,
# for a guest's NIC (-netdev tap,ifname=TAP with QEMU_NETNS=$ns); an EXIT
# trap kills what runs in it and deletes it (then runs qemu_cleanup_more,
# when the caller defines it, first).
qemu_netns() {
	ns=$1-${UABI_NS_TAG:+$UABI_NS_TAG-}$$
	trap qemu_netns_cleanup EXIT
	ip netns add "$ns" || die "ip netns add $ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" tuntap add dev "$2" mode tap || die "tuntap $2"
	ip -n "$ns" addr add "$3" dev "$2"
	ip -n "$ns" link set "$2" up
}
qemu_netns_cleanup() {
	declare -F qemu_cleanup_more >/dev/null && qemu_cleanup_more
	ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$ns" 2>/dev/null
}

# qemu_boot_tap LOG SECONDS MAC: qemu_boot in the namespace $ns with a
# virtio NIC of MAC address MAC on its tap device $tap (qemu_netns), 2
# vCPUs, the initramfs WORK/initramfs.cpio.gz of $work.
qemu_boot_tap() {
	QEMU_NETNS=$ns qemu_boot "$1" "$2" 2 "" \
		-netdev tap,id=n0,ifname="$tap",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac="$3" -initrd "$work/initramfs.cpio.gz"
}

# qemu_rxe_provider: Debian's rxe provider of libibverbs in $rfs with its
# libraries, and the /etc/libibverbs.d entry that names it.
qemu_rxe_provider() {
	local provider
	provider=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
	[[ -n $provider && -e /etc/libibverbs.d/rxe.driver ]] ||
		die "no rxe provider of libibverbs (ibverbs-providers)"
	qemu_pack "$provider"
	mkdir -p "$rfs/etc/libibverbs.d"
	cp /etc/libibverbs.d/rxe.driver "$rfs/etc/libibverbs.d/" || die "no rxe.driver"
}
