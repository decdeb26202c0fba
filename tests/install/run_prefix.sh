#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# `cmake --install` into a prefix, then the prefix moved elsewhere and used
# with the build and source trees hidden (a mount namespace with an empty
# tmpfs over each): uabi run with the drop-in library, the daemon started
# from the prefix, an ibv_rc_pingpong pair, the out-of-tree example built
# with pkg-config and with find_package(rdma-uabi) and run, the man pages.
#   run_prefix.sh SOURCE_DIR BUILD_DIR WORK_DIR LIBDIR VERSION
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib.sh"
src=$1 build=$2 work=$3 libdir=$4 version=$5
need_root
command -v pkg-config >/dev/null || die "pkg-config is missing (scripts/install-deps.sh installs it)"

rm -rf "$work"
mkdir -p "$work"
# Outside the build tree, which is hidden below.
tmp=$(mktemp -d /tmp/uabi-prefix-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

step "cmake --install $build --prefix $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >"$work/install.log" ||
	{ cat "$work/install.log"; die "cmake --install failed"; }
p=$tmp/prefix
for f in bin/uabi sbin/uabid "$libdir/rdma-uabi/libibverbs.so.1" "$libdir/libuabi.so.0" \
	"$libdir/libuabi.so" include/uabi/client.hpp include/rdma/uabi.h \
	"$libdir/pkgconfig/rdma-uabi.pc" "$libdir/cmake/rdma-uabi/rdma-uabi-config.cmake" \
	share/man/man1/uabi.1.gz share/man/man8/uabid.8.gz share/doc/rdma-uabi/README.md \
	share/doc/rdma-uabi/docs/install.md "src/rdma-uabi-$version/dkms.conf" \
	"src/rdma-uabi-$version/kernel/Kbuild" "src/rdma-uabi-$version/include/uapi/rdma/uabi.h"; do
	[[ -e $p/$f ]] || die "not installed: $f"
done
# The drop-in library must never be where ld.so looks by default.
[[ ! -e $p/$libdir/libibverbs.so.1 && ! -e $p/$libdir/libibverbs.so ]] ||
	die "libibverbs.so.1 installed on the library path"
echo "layout as documented ($(find "$p" -type f | wc -l) files)"

step "the prefix moved to $tmp/moved"
mv "$p" "$tmp/moved"
p=$tmp/moved
cp -r "$src/newapi/examples/out-of-tree" "$tmp/example"
cp "$here/pingpong.sh" "$tmp/"

# A program outside any installation cannot guess the library: a clear error.
mkdir "$tmp/loose"
cp "$p/bin/uabi" "$tmp/loose/uabi"
rc=0
UABI_SOCKET=$tmp/sock/uabid.sock "$tmp/loose/uabi" run -- true 2>"$tmp/err" || rc=$?
cat "$tmp/err"
((rc == 1)) && grep -q "cannot tell where rdma-uabi is installed" "$tmp/err" ||
	die "uabi outside an installation: exit $rc, not the documented error"

cat >"$tmp/steps.sh" <<'STEPS'
set -euo pipefail
p=$1 tmp=$2 libdir=$3 src=$4 build=$5
export UABI_SOCKET=$tmp/sock/uabid.sock
uabi=$p/bin/uabi
for d in "$build" "$src"; do
	[[ ! -e $d || -z $(ls -A "$d") ]] || { echo "$d is not hidden"; exit 1; }
done
daemon_exe() {
	local pid
	pid=$("$uabi" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	readlink "/proc/$pid/exe"
}

echo "== $uabi --version"
"$uabi" --version
echo "== uabi run -- ibv_devinfo -v (build and source trees hidden)"
"$uabi" run -- ibv_devinfo -v >"$tmp/devinfo"
grep -q "hca_id:.*uabi_sw0" "$tmp/devinfo"
grep -q "state:.*PORT_ACTIVE" "$tmp/devinfo"
exe=$(daemon_exe)
echo "daemon started on demand: $exe"
[[ $exe == "$p/sbin/uabid" ]] || { echo "not the moved prefix's uabid"; exit 1; }
echo "== ibv_rc_pingpong pair"
"$tmp/pingpong.sh" "$uabi" 16384
"$uabi" daemon stop

echo "== the example with pkg-config (make)"
PKG_CONFIG_PATH=$p/$libdir/pkgconfig make -C "$tmp/example" -s uabi_hello
UABI_BACKEND=daemon "$tmp/example/uabi_hello" | tee "$tmp/hello.out"
grep -q "device uabi_sw0 on the daemon backend" "$tmp/hello.out"
grep -q "the device counts 1 pd, 1 mr, 1 cq more" "$tmp/hello.out"
exe=$(daemon_exe)
echo "libuabi started $exe"
[[ $exe == "$p/sbin/uabid" ]] || { echo "libuabi did not start the prefix's uabid"; exit 1; }
"$uabi" daemon stop

echo "== the example with find_package(rdma-uabi) (CMake)"
cmake -S "$tmp/example" -B "$tmp/example-build" -DCMAKE_PREFIX_PATH="$p" >/dev/null
cmake --build "$tmp/example-build" >/dev/null
UABI_BACKEND=inproc "$tmp/example-build/uabi_hello" | tee "$tmp/hello2.out"
grep -q "device uabi_sw0 on the inproc backend" "$tmp/hello2.out"
ldd "$tmp/example-build/uabi_hello" | grep "libuabi.so.0 => $p/"

echo "== the man pages list what --help lists"
for prog in bin/uabi sbin/uabid; do
	name=${prog#*/}
	page=$(ls "$p"/share/man/man*/"$name".[18].gz)
	text=$(man -l -P cat "$page" 2>/dev/null | col -b)
	grep -q "^NAME" <<<"$text" || { echo "man -l $page: not formatted"; exit 1; }
	warnings=$(zcat "$page" | groff -man -ww -z 2>&1)
	[[ -z $warnings ]] || { echo "groff warns about $page: $warnings"; exit 1; }
	for opt in $("$p/$prog" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -q -- "$opt" <<<"$text" || { echo "$name(${page##*.[a-z]*.}): $opt undocumented"; exit 1; }
	done
	echo "$page: every option of $name --help"
done
STEPS

step "use the moved prefix with the build and source trees hidden"
unshare --mount -- /bin/bash -c '
	set -e
	mount --make-rprivate /
	mount -t tmpfs tmpfs "$1"
	mount -t tmpfs tmpfs "$2"
	shift 2
	cd /
	exec /bin/bash "$@"' hide "$build" "$src" "$tmp/steps.sh" "$p" "$tmp" "$libdir" "$src" "$build" ||
	die "the moved prefix did not work"

step "the build tree present: the installed copy still uses its own uabid"
export UABI_SOCKET=$tmp/sock2/uabid.sock
"$p/bin/uabi" daemon start
pid=$("$p/bin/uabi" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
exe=$(readlink "/proc/$pid/exe")
"$p/bin/uabi" daemon stop
[[ $exe == "$p/sbin/uabid" ]] || die "the installed uabi started $exe"
echo "$exe"
echo "PASS: installed, moved and used without the build tree"
