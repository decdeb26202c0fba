# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# Shell helpers of the install tests (sourced).  The throwaway root: an
# overlay whose lower layer is the host's / and whose upper layer is a
# directory of the test, mounted in a mount and pid namespace of its own and
# entered with chroot, so that apt, dpkg and dkms really run and everything
# they write lands in the upper layer (checked afterwards by
# check_upper.py); every process started in there dies with the namespace.

die() {
	echo "FAIL: $*" >&2
	exit 1
}

step() { printf '\n== %s\n' "$*"; }

need_root() {
	[[ $(id -u) -eq 0 ]] ||
		die "needs root (mount and pid namespaces, overlayfs, chroot); run as root"
	command -v unshare >/dev/null || die "unshare (util-linux) is missing"
}

# overlay_root WORK [--hide DIR]... -- CMD [ARGS...]
#   Runs CMD as root in the overlay root, with WORK/in bind-mounted at
#   /tmp/in (read-write), tmpfs on /tmp and /run, the host's /dev, a new
#   /proc and /sys.  Each --hide DIR gets an empty tmpfs over it inside the
#   root (the build and source trees: nothing may use them from there).
#   WORK/upper keeps the overlay's upper layer afterwards.  Returns CMD's
#   status.
overlay_root() {
	local work=$1
	shift
	local hide=()
	while [[ $1 == --hide ]]; do
		hide+=("$2")
		shift 2
	done
	[[ $1 == -- ]] && shift
	rm -rf "$work/upper" "$work/ovl-work" "$work/root"
	mkdir -p "$work/upper" "$work/ovl-work" "$work/root" "$work/in"
	unshare --mount --pid --fork --kill-child -- /bin/bash -c '
		set -e
		work=$1 nhide=$2
		shift 2
		root=$work/root
		mount --make-rprivate /
		mount -t overlay overlay \
			-o "lowerdir=/,upperdir=$work/upper,workdir=$work/ovl-work" "$root"
		mount -t proc proc "$root/proc"
		mount -t sysfs sysfs "$root/sys"
		mount --rbind /dev "$root/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
		mount -t tmpfs -o mode=755 tmpfs "$root/run"
		# A resolver configuration kept under /run (systemd-resolved)
		# stays reachable: apt-get update needs it.
		conf=$(readlink -f /etc/resolv.conf || true)
		if [[ $conf == /run/* && -f $conf ]]; then
			mkdir -p "$root$(dirname "$conf")"
			touch "$root$conf"
			mount --bind "$conf" "$root$conf"
		fi
		mkdir "$root/tmp/in"
		mount --bind "$work/in" "$root/tmp/in"
		for ((i = 0; i < nhide; i++)); do
			if [[ -d $root$1 ]]; then
				mount -t tmpfs -o mode=755 tmpfs "$root$1"
			fi
			shift
		done
		exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TERM=dumb LANG=C.UTF-8 "$@"
	' overlay_root "$work" "${#hide[@]}" "${hide[@]}" "$@"
}
