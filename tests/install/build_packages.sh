#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Makes the Debian packages of this build tree with CPack, as a maintainer
# would (docs/install.md): build_packages.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=$1 out=$2
command -v dpkg-shlibdeps >/dev/null ||
	{ echo "FAIL: dpkg-shlibdeps (dpkg-dev) is missing; scripts/install-deps.sh installs it" >&2; exit 1; }
rm -rf "$out"
cpack --config "$build/CPackConfig.cmake" -B "$out"
rm -rf "$out/_CPack_Packages"
for p in "rdma-uabi_*_amd64.deb" "rdma-uabi-dkms_*_all.deb"; do
	f=$(compgen -G "$out/$p") || { echo "FAIL: cpack made no $p" >&2; exit 1; }
	echo "$f: $(dpkg-deb -f "$f" Package Version Depends | tr '\n' ' ')"
	dpkg-deb -c "$f" >/dev/null
done
