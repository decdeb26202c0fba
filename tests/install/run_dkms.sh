#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# rdma_uabi.ko through DKMS, as a user gets it: in a throwaway root
# (lib.sh), `apt install ./rdma-uabi-dkms_*.deb`, then `dkms build` and
# `dkms install` against the headers of Debian's kernel (linux-headers-amd64;
# nothing is loaded: building is the test), then `apt purge`, leaving
# nothing behind.  The host's /var/lib/dkms and /lib/modules are untouched.
#   run_dkms.sh PKG_DIR WORK_DIR SOURCE_DIR BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
pkgdir=$1 work=$2 src=$3 build=$4
need_root
command -v dkms >/dev/null || die "dkms is not installed (scripts/install-deps.sh installs it)"

debs=("$pkgdir"/rdma-uabi-dkms_*.deb)
[[ -f ${debs[0]} ]] || die "no rdma-uabi-dkms_*.deb in $pkgdir (the package_build test makes it)"
version=$(dpkg-deb -f "${debs[0]}" Version)
version=${version%-*}
# The kernel of Debian's headers metapackage: linux-headers-<kver>.
kver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	tr ',' '\n' | sed -nE 's/^ *linux-headers-([^ ]+).*/\1/p' | head -1)
[[ -n $kver && -e /lib/modules/$kver/build ]] ||
	die "no headers of Debian's kernel (linux-headers-amd64; scripts/install-deps.sh installs it)"
echo "module version $version, kernel $kver"

rm -rf "$work"
mkdir -p "$work/in"
cp "${debs[0]}" "$work/in/"
chmod 755 "$work/in"
cat >"$work/in/steps.sh" <<STEPS
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
name=rdma-uabi version=$version kver=$kver
cd /tmp/in
STEPS
cat >>"$work/in/steps.sh" <<'STEPS'
echo "== apt install ./rdma-uabi-dkms_*.deb"
apt-get install -y --no-install-recommends ./rdma-uabi-dkms_*.deb
dpkg -L rdma-uabi-dkms >/tmp/in/files
dkms status -m $name -v $version | tee /tmp/in/status
grep -q "^$name/$version" /tmp/in/status || { echo "not added to DKMS"; exit 1; }

echo "== dkms build for $kver"
dkms build -m $name -v $version -k $kver ||
	{ cat /var/lib/dkms/$name/$version/build/make.log; exit 1; }
ko=$(ls /var/lib/dkms/$name/$version/$kver/*/module/rdma_uabi.ko*)
echo "built: $ko"
modinfo "$ko" | grep -E '^(vermagic|license|description|name):'
modinfo -F vermagic "$ko" | grep -q "^$kver " || { echo "built for another kernel"; exit 1; }

echo "== dkms install for $kver"
dkms install -m $name -v $version -k $kver
modinfo -k $kver -n rdma_uabi | tee /tmp/in/installed
[[ $(cat /tmp/in/installed) == /lib/modules/$kver/* ]]
dkms status -m $name -v $version -k $kver | grep -q installed

echo "== apt purge rdma-uabi-dkms"
apt-get purge -y rdma-uabi-dkms
if dpkg -s rdma-uabi-dkms >/dev/null 2>&1; then echo "still installed"; exit 1; fi
[[ -z $(dkms status -m $name) ]] || { echo "DKMS still has $name"; exit 1; }
if modinfo -k $kver -n rdma_uabi 2>/dev/null; then echo "module still installed"; exit 1; fi
left=0
while read -r f; do
	[[ -d $f ]] && continue
	if [[ -e $f || -L $f ]]; then echo "left behind: $f"; left=1; fi
done </tmp/in/files
[[ ! -e /usr/src/$name-$version ]] || { echo "left behind: /usr/src/$name-$version"; left=1; }
((left == 0))
echo "every file of dpkg's list is gone, and DKMS's tree"
STEPS

step "install, build, remove in a throwaway root"
overlay_root "$work" --hide "$build" --hide "$src" -- /bin/bash /tmp/in/steps.sh ||
	die "the steps in the throwaway root failed"

step "what the root kept"
# DKMS's own machine key for signing modules (made once, kept by DKMS for
# every module it builds) is not ours.
python3 "$here/check_upper.py" "$work/upper" --package rdma-uabi-dkms \
	--allow var/lib/dkms/mok.key --allow var/lib/dkms/mok.pub ||
	die "the package left something behind"
echo "PASS: rdma_uabi.ko built and installed by DKMS for $kver; package removed cleanly"
