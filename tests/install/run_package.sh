#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# The Debian package as a user gets it: in a throwaway root (lib.sh),
# `apt install ./rdma-uabi_*.deb`, then `uabi run -- ibv_devinfo -v` and an
# ibv_rc_pingpong pair from the installed files (the build and source trees
# hidden), then `apt purge`, leaving nothing behind (dpkg's file list,
# the overlay's upper layer).
#   run_package.sh PKG_DIR WORK_DIR SOURCE_DIR BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
pkgdir=$1 work=$2 src=$3 build=$4
need_root

debs=("$pkgdir"/rdma-uabi_*.deb)
[[ -f ${debs[0]} ]] || die "no rdma-uabi_*.deb in $pkgdir (the package_build test makes it)"
((${#debs[@]} == 1)) || die "more than one rdma-uabi_*.deb in $pkgdir: ${debs[*]}"

step "what the package declares"
dpkg-deb -f "${debs[0]}" Package Version Architecture Depends Suggests
depends=$(dpkg-deb -f "${debs[0]}" Depends)
for lib in libc6 libstdc++6 libgcc-s1; do
	[[ $depends == *"$lib "* ]] || die "Depends lacks $lib: $depends"
done

rm -rf "$work"
mkdir -p "$work/in"
cp "${debs[0]}" "$here/pingpong.sh" "$work/in/"
chmod 755 "$work/in"
cat >"$work/in/steps.sh" <<'STEPS'
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
cd /tmp/in
echo "== apt install ./rdma-uabi_*.deb"
apt-get install -y --no-install-recommends ./rdma-uabi_*.deb
dpkg -L rdma-uabi >/tmp/in/files
echo "dpkg -L rdma-uabi: $(wc -l </tmp/in/files) paths"
for f in /usr/bin/uabi /usr/sbin/uabid /usr/share/man/man1/uabi.1.gz \
	/usr/share/man/man8/uabid.8.gz /usr/share/doc/rdma-uabi/README.md; do
	[[ -e $f ]] || { echo "missing: $f"; exit 1; }
done
verbs=$(grep '/rdma-uabi/libibverbs.so.1$' /tmp/in/files)
echo "drop-in library: $verbs"

echo "== the system's libibverbs stays the default"
sys=$(ldd /usr/bin/ibv_devinfo | awk '$1 == "libibverbs.so.1" { print $3 }')
echo "ibv_devinfo without uabi run loads $sys"
[[ -n $sys && $(readlink -f "$sys") != "$(readlink -f "$verbs")" ]] ||
	{ echo "the drop-in library replaced the system's"; exit 1; }

echo "== uabi --version; man finds uabi(1) and uabid(8)"
uabi --version
for page in "1 uabi" "8 uabid"; do
	f=$(man -w $page) || { echo "man $page: no page"; exit 1; }
	# -l: format the file itself (man-db caches no formatted copy then).
	man -l -P cat "$f" 2>/dev/null | grep -q "^NAME" || { echo "man $page: not formatted"; exit 1; }
	echo "man $page: $f"
done

echo "== uabi run -- ibv_devinfo -v"
uabi run -- ibv_devinfo -v >/tmp/devinfo
head -12 /tmp/devinfo
grep -q "hca_id:.*uabi_sw0" /tmp/devinfo
grep -q "state:.*PORT_ACTIVE" /tmp/devinfo
pid=$(uabi status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
exe=$(readlink "/proc/$pid/exe")
echo "the daemon, started on demand: pid $pid, $exe"
[[ $exe == /usr/sbin/uabid ]] || { echo "not the package's uabid"; exit 1; }

echo "== ibv_rc_pingpong, two processes"
/tmp/in/pingpong.sh uabi 65536

uabi daemon stop
echo "== apt purge rdma-uabi"
apt-get purge -y rdma-uabi
if dpkg -s rdma-uabi >/dev/null 2>&1; then echo "still installed"; exit 1; fi
left=0
while read -r f; do
	[[ -d $f ]] && continue
	if [[ -e $f || -L $f ]]; then echo "left behind: $f"; left=1; fi
done </tmp/in/files
((left == 0))
echo "every file of dpkg's list is gone"
STEPS

step "install, use, remove in a throwaway root"
overlay_root "$work" --hide "$build" --hide "$src" -- /bin/bash /tmp/in/steps.sh ||
	die "the steps in the throwaway root failed"

step "what the root kept"
python3 "$here/check_upper.py" "$work/upper" --package rdma-uabi ||
	die "the package left something behind"
echo "PASS: package installed, used and removed cleanly"
