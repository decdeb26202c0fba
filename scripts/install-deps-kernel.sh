#!/usr/bin/env bash
# Installs what the kernel module's build and its qemu test need on Debian 12
# (tests/kernel/run-qemu.sh), only if something is missing.  Idempotent.
#   linux-headers-amd64  Kbuild for rdma_uabi.ko
#   linux-image-amd64    the kernel the qemu guest boots (/boot/vmlinuz-*)
#   qemu-system-x86      the guest (TCG; KVM is not needed)
#   busybox-static       the guest's userland
#   kmod cpio            insmod/modinfo on real machines; the initramfs
set -euo pipefail

pkgs=(linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static
      kmod cpio make gcc)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "deps-kernel: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "deps-kernel: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
	echo "deps-kernel: need root to apt-get install: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps-kernel: done"
