#!/usr/bin/env bash
# Installs the Debian 12 packages rdma-uabi needs, only if some are missing.
# Usage: scripts/install-deps.sh [--no-kernel | --kernel-only]
#   kernel part: linux-headers-amd64 (Kbuild for rdma_uabi.ko),
#   linux-image-amd64 (the kernel the qemu guest boots), qemu-system-x86
#   (TCG; KVM is not needed), busybox-static (the guest's userland),
#   kmod and cpio (insmod on real machines; the initramfs), dkms (the
#   rdma-uabi-dkms package's build, ctest package_dkms).
#   Packaging and install tests (ctest label install): dpkg-dev
#   (dpkg-shlibdeps for CPack), pkg-config (the out-of-tree example),
#   man-db and bsdextrautils (man, col: the man pages).
#   tshark (dumpcap and Wireshark's dissectors: the wire tests' captures).
set -euo pipefail

userspace=(cmake ninja-build g++ clang libclang-rt-14-dev
	   libgtest-dev libgmock-dev libbenchmark-dev
	   libibverbs-dev ibverbs-utils perftest infiniband-diags srptools
	   rdmacm-utils
	   util-linux procps iproute2 python3 tshark
	   dpkg-dev pkg-config man-db bsdextrautils)
kernel=(linux-headers-amd64 linux-image-amd64 qemu-system-x86
	busybox-static kmod cpio make gcc dkms)
case "${1:-}" in
--no-kernel) pkgs=("${userspace[@]}") ;;
--kernel-only) pkgs=("${kernel[@]}") ;;
*) pkgs=("${userspace[@]}" "${kernel[@]}") ;;
esac

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if ((${#missing[@]} == 0)); then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
	echo "deps: need root to apt-get install: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
