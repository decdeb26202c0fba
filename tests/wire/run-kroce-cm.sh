#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# The connection manager across hosts on the kernel module's own RoCE
# device (docs/cm.md, "Across hosts"; docs/wire.md, "The kernel module's
# own RoCE device"): builds rdma_uabi.ko (W=1, warnings fail), boots
# Debian's kernel under qemu (TCG) with a virtio NIC on a tap device in a
# network namespace this script makes (host side 10.91.0.1, guest
# 10.91.0.2; no other address is involved).  The guest loads the module,
# runs `uabi link add kroce0 netdev eth0` and Debian's unmodified rping
# under `uabi --backend kernel run` (tests/wire/kroce-cm-guest-init.sh);
# in the namespace, a uabid holds `uabi link add roce0 netdev <tap>` and
# rping runs under `uabi run`.  Their CM MADs cross as RoCEv2 on QP1
# between the module's CM (the core's, in the kernel) and uabid's, their
# data between the module's device and uabid's.
#
#   guest rping server  <- host rping client  (10 pings, payload checked)
#   host: 3000 garbage datagrams at QP1 of the module's device (the
#         --garbage program, cm_garbage: random bytes, wrong Q_Keys, bad
#         ICRCs, short and random MADs, CM MADs with random bodies)
#   guest rping client  -> host rping server  (10 pings, payload checked)
#   then each of these with the guest as server, then as client:
#   rdma_xserver/rdma_xclient -c x (XRC: XRC_SEND to XRC_RECV, the REQ
#   marked XRC, the REP carrying the target QPN), ucmatose (2
#   connections, each client with TOS 0x68: both CMs' MADs of those
#   connections carry it in their IP header, captured), udaddy (UD, SIDR), rdma_server/rdma_client, rstream
#   and riostream (rsockets, 20 x 64 KiB each way, verified); then the
#   guest as client only: cmtime (50 connections)
#   mckey -m 239.1.2.3 -b <own address>: the guest receives 20 datagrams
#   from our sender, then we receive 20 from the guest's (both print
#   "joined dgid: ::ffff:239.1.2.3 mlid 0x0", each receiver gets all 20:
#   tests/cm/mckey-check.sh)
#   perftest's ib_send_bw, ib_write_lat and ib_read_bw -R -F -n 200, the
#   guest as server, then as client, held ACKs off: a pair is run again
#   whole while it fails, at most 30 times (UABI_KROCE_PERF_ATTEMPTS).
#   Under TCG perftest's own measure of the CPU's clock fails now and
#   then ("Can't produce a report") and its server may take its second
#   connection slower than our client asks for it: an attempt that
#   perftest could not time (that message, or an average of 0, inf or
#   nan) is tried again, never passed; a pass needs our client's result
#   line.  The guest hears our word (`tell`: we serve, our client ended
#   or died, again, pass, fail) on a TCP connection to its port 27099
#   (docs/cm.md)
#   the same two rpings over IPv6 (fd91::2 and fd91::1 beside each side's IPv4
#   address: the module's device receives and runs the CM at every
#   address of its GID table, not its first IPv4 one only)
#
# The module must count the garbage as dropped (its `uabi link`: relayed/
# dropped, and QP1's and the CM's counts) and still connect afterwards.
# DEVICE_REMOVAL: the guest deletes kroce0 under an rping client connected
# to our server without end: the client hears DEVICE_REMOVAL and exits,
# the device goes, our server ends; the guest adds kroce0 again.
# Then, while this side floods the module's QP1 with garbage, the guest
# deletes and adds its device 10 times and unloads the module with the
# device still there (no warning in dmesg).  The tap is captured (WORK/tap-{1,2}.pcap, before and after the
# garbage): every RoCEv2 packet must
# have its ICRC right over the real IP header, IPv4 ID included (the
# --pcap-check program, pcap_icrc), and the module's own MADs (from
# 10.91.0.2, UDP source port 4791: only the kernel's socket sends from
# it) must be among them.  The host's programs trace their wire
# (UABI_WIRE_TRACE) into WORK/trace-NAME.log.
#
# Usage: run-kroce-cm.sh --tool UABI --verbs-lib LIB --umad-lib LIB
#                        --rdmacm-lib LIB --pcap-check BIN --garbage BIN
#                        --half-connect BIN
#                        [--work-dir DIR] [--timeout SECONDS]
# Exit status 0 only if every step passed on both sides.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tool="" verbs="" umad="" rdmacm="" pcap_check="" garbage="" work=""
timeout_s=${UABI_KROCE_TIMEOUT:-800}
die() {
	echo "run-kroce-cm: FAIL: $*" >&2
	exit 1
}
while (($#)); do
	case $1 in
	--tool) tool=$2; shift 2 ;;
	--verbs-lib) verbs=$2; shift 2 ;;
	--umad-lib) umad=$2; shift 2 ;;
	--rdmacm-lib) rdmacm=$2; shift 2 ;;
	--pcap-check) pcap_check=$2; shift 2 ;;
	--garbage) garbage=$2; shift 2 ;;
	--half-connect) half=$2; shift 2 ;;
	--work-dir) work=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done
[[ -x $tool && -e $verbs && -e $umad && -e $rdmacm && -x $pcap_check && -x $garbage && -x ${half:-} ]] ||
	die "--tool, --verbs-lib, --umad-lib, --rdmacm-lib, --pcap-check, --garbage and --half-connect are required"
[[ $(id -u) == 0 ]] || die "needs root (a network namespace and a tap device)"
work=${work:-$root/build/tests/wire/kroce-cm}
mkdir -p "$work" || die "mkdir $work"
work=$(cd "$work" && pwd)
for prog in qemu-system-x86_64 make gcc cpio gzip ip modprobe ldd ldconfig strip timeout rping \
	dumpcap tshark stdbuf; do
	command -v "$prog" >/dev/null || die "missing $prog (scripts/install-deps.sh)"
done
busybox=/bin/busybox
[[ -x $busybox ]] || die "missing busybox (static)"
vmlinuz=""
for v in $(ls /boot/vmlinuz-* 2>/dev/null | sort -rV); do
	[[ -f /lib/modules/${v##*/vmlinuz-}/build/Makefile ]] && vmlinuz=$v && break
done
[[ -n $vmlinuz ]] || die "no /boot/vmlinuz-* with its headers (linux-image-amd64, linux-headers-amd64)"
kver=${vmlinuz#/boot/vmlinuz-}
t_start=$(date +%s)

# ------------------------------------------------------------- the module
# Staged and built at W=1 as every guest script does (sets ko).
. "$root/scripts/qemu-lib.sh"
qemu_build_module "$work" "$kver"

# ------------------------------------------------------------- initramfs
rfs=$work/initramfs
rm -rf "$rfs"
mkdir -p "$rfs"/{bin,dev,proc,sys,tmp,lib/modules,kcm/lib}
cp "$busybox" "$rfs/bin/busybox"
ln -s busybox "$rfs/bin/sh"
cp "$here/kroce-cm-guest-init.sh" "$rfs/init"
chmod 755 "$rfs/init"
strip --strip-debug -o "$rfs/rdma_uabi.ko" "$ko" || die "strip the module"
: >"$rfs/modules"
for m in virtio_pci virtio_net; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}' |
		while read -r ko; do
			grep -qxF "/lib/modules/${ko##*/}" "$rfs/modules" && continue
			cp "$ko" "$rfs/lib/modules/" || exit 1
			echo "/lib/modules/${ko##*/}" >>"$rfs/modules"
		done || die "modules for $m"
done
# A program at @dest (default: its own path) with its shared libraries at
# the paths they resolve to here.
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
pack "$(command -v rping)" /kcm/rping
# librdmacm's other programs, where this host has them (the guest runs
# what it was given; the host runs its side of the same list).
progs=()
for p in rdma_xserver rdma_xclient ucmatose udaddy rdma_server rdma_client rstream riostream \
	cmtime mckey ib_send_bw ib_write_lat ib_read_bw; do
	command -v "$p" >/dev/null || continue
	pack "$(command -v "$p")" "/kcm/$p"
	progs+=("$p")
done
have() { [[ " ${progs[*]} " == *" $1 "* ]]; }
# mckey's receiver line-buffered (its "joined" line is awaited), and how
# its output is judged (sourced there too).
pack "$(command -v stdbuf)" /kcm/stdbuf
pack /usr/libexec/coreutils/libstdbuf.so
cp "$root/tests/cm/mckey-check.sh" "$rfs/kcm/" || die "copy mckey-check.sh"
# pthread_exit() loads libgcc_s at run time (rping's threads end so)
pack "$(ldconfig -p | awk '/libgcc_s.so.1 .*x86-64/ {print $NF; exit}')"
pack "$half" /kcm/ucma_half_connect
pack "$tool" /kcm/uabi
pack "$verbs" /kcm/lib/libibverbs.so.1
pack "$umad" /kcm/lib/libuabi_umad.so
pack "$rdmacm" /kcm/lib/libuabi_rdmacm.so
for f in uabi lib/libibverbs.so.1 lib/libuabi_umad.so lib/libuabi_rdmacm.so; do
	strip --strip-debug "$rfs/kcm/$f" || die "strip $f"
done
(cd "$rfs" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) \
	>"$work/initramfs.cpio.gz" || die "cpio"

# ---------------------------------------------------- the host's side
ns=kcm9-kroce-cm-$$
tap=kcm9tap0
sock=$work/uabid/uabid.sock
mkdir -p "$work/uabid"
hs() { ip netns exec "$ns" env UABI_SOCKET="$sock" UABI_IDLE_EXIT=0 UABI_BACKEND=daemon "$@"; }
cleanup() {
	hs "$tool" daemon stop >/dev/null 2>&1
	ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$ns" 2>/dev/null
}
trap cleanup EXIT
ip netns add "$ns" || die "ip netns add"
ip -n "$ns" link set lo up
ip -n "$ns" tuntap add dev "$tap" mode tap || die "tuntap"
ip -n "$ns" addr add 10.91.0.1/24 dev "$tap"
ip -n "$ns" link set "$tap" up
hs "$tool" daemon stop >/dev/null 2>&1
hs "$tool" link add roce0 netdev "$tap" >"$work/link.log" 2>&1 || die "uabi link add: $(cat "$work/link.log")"

echo "run-kroce-cm: booting $vmlinuz (TCG) with rdma_uabi.ko; host side 10.91.0.1 in netns $ns"
ip netns exec "$ns" timeout --foreground -k 10 "$timeout_s" \
	qemu-system-x86_64 -accel tcg -m 1G -smp 2 -nographic -no-reboot \
	-netdev tap,id=n0,ifname="$tap",script=no,downscript=no \
	-device virtio-net-pci,netdev=n0,mac=52:54:00:91:00:02 \
	-kernel "$vmlinuz" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyS0 panic=-1 loglevel=5 rdinit=/init" </dev/null 2>&1 |
	sed -u 's/\r//g' >"$work/guest.log" &
qemu=$!
log=$work/guest.log
# The tap's RoCEv2 traffic, in two captures: before the garbage and
# between it and the flood (the garbage's bad ICRCs are meant to be wrong).
cap_start() {
	rm -f "$work/tap-$1.pcap"
	ip netns exec "$ns" dumpcap -q -P -i "$tap" -f "udp port 4791" -w "$work/tap-$1.pcap" \
		2>"$work/dumpcap-$1.err" &
	dumpcap=$!
}
cap_start 1

fails=()
. "$root/tests/cm/rping-expect.sh"
. "$root/tests/cm/mckey-check.sh"
# The guest's output of step NAME.
guest_out() { awk -v n="$1" '$0 == "UABI-OUT-BEGIN " n {on = 1; next} $0 == "UABI-OUT-END " n {on = 0} on' "$log"; }

# Each program as in kroce-cm-guest-init.sh, the same list in the same
# order: the guest serves first (connect once it says
# UABI-KCM-LISTEN-NAME, again while refused or not yet reachable), then
# connects to ours.  Stdout and stderr apart (rping's stderr lines would
# land inside its buffered stdout's lines); each client's wire trace kept.
# host_connect NAME PATTERN CMD... / host_serve NAME PATTERN CMD...: a
# failure unless CMD ends with 0 and, if PATTERN is not empty, prints a
# line matching it.
host_connect() {
	local name=$1 pat=$2 rc=1 try
	shift 2
	while kill -0 "$qemu" 2>/dev/null && ! grep -qE "^UABI-KCM-LISTEN-$name\$|^UABI-KCM-RESULT" "$log"; do
		sleep 1
	done
	if grep -qE "^UABI-KCM-LISTEN-$name\$" "$log"; then
		for try in $(seq 1 200); do
			rm -f "$work/trace-$name-client.log"
			hs env UABI_WIRE_TRACE="$work/trace-$name-client.log" timeout 240 "$tool" run -- \
				"$@" >"$work/$name-client.out" 2>"$work/$name-client.err"
			rc=$?
			((rc == 0)) && break
			grep -qE 'refused|REJECTED|UNREACHABLE|ADDR_ERROR' "$work/$name-client.out" \
				"$work/$name-client.err" || break
			kill -0 "$qemu" 2>/dev/null || break
			sleep 0.5
		done
	fi
	if ((rc == 0)) && { [[ -z $pat ]] || grep -qE "$pat" "$work/$name-client.out"; }; then
		echo "run-kroce-cm: host $name-client: PASS"
	else
		fails+=("host $name-client (see $work/$name-client.out and .err)")
		echo "run-kroce-cm: host $name-client: FAIL"; tail -n 5 "$work/$name-client.out" "$work/$name-client.err"
	fi
}
host_serve() {
	local name=$1 pat=$2
	shift 2
	if kill -0 "$qemu" 2>/dev/null &&
		hs env UABI_WIRE_TRACE="$work/trace-$name-server.log" timeout 300 "$tool" run -- \
			"$@" >"$work/$name-server.out" 2>"$work/$name-server.err" &&
		{ [[ -z $pat ]] || grep -qE "$pat" "$work/$name-server.out"; }; then
		echo "run-kroce-cm: host $name-server: PASS"
	else
		fails+=("host $name-server (see $work/$name-server.out and .err)")
		echo "run-kroce-cm: host $name-server: FAIL"; tail -n 5 "$work/$name-server.out" "$work/$name-server.err"
	fi
}
host_connect rping "" rping -c -a 10.91.0.2 -p 27001 -v -C 10
# Garbage at the module's QP1 (from this side's address, not its port
# 4791), before the guest connects.
sleep 2	# (what the capture has not read yet)
kill "$dumpcap" 2>/dev/null
wait "$dumpcap" 2>/dev/null
if ip netns exec "$ns" "$garbage" 10.91.0.1 10.91.0.2 4791 3000 9 >"$work/garbage.log" 2>&1; then
	echo "run-kroce-cm: garbage: $(tail -n 1 "$work/garbage.log")"
else
	fails+=("cm_garbage (see $work/garbage.log)")
fi
cap_start 2
host_serve rping "" rping -s -a 10.91.0.1 -p 27002 -v -C 10
# The guest's other programs (kroce-cm-guest-init.sh, the same list in
# the same order).
if have rdma_xserver && have rdma_xclient; then
	host_connect xrc "rdma_xclient: end 0" rdma_xclient -c x -s 10.91.0.2 -p 27011
	# the message on the wire as XRC: SEND_ONLY of the XRC transport (0xa4)
	grep -q ' tx op a4 ' "$work/trace-xrc-client.log" ||
		fails+=("host xrc-client: no XRC SEND (op 0xa4) in its wire trace")
	host_serve xrc "rdma_xserver: end 0" rdma_xserver -c x -p 27012
fi
if have ucmatose; then
	host_connect ucmatose "" ucmatose -s 10.91.0.2 -p 27013 -c 2 -C 10 -t 0x68
	host_serve ucmatose "" ucmatose -p 27014 -c 2 -C 10
fi
if have udaddy; then
	host_connect udaddy "" udaddy -s 10.91.0.2 -c 1 -C 10
	host_serve udaddy "" udaddy -c 1 -C 10
fi
if have rdma_server && have rdma_client; then
	host_connect rdma-server "rdma_client: end 0" rdma_client -s 10.91.0.2 -p 27015
	host_serve rdma-server "rdma_server: end 0" rdma_server -p 27016
fi
if have rstream; then
	host_connect rstream "^custom +64k +20 " rstream -s 10.91.0.2 -p 27017 -T v -S 65536 -C 20
	host_serve rstream "^custom +64k +20 " rstream -p 27018 -T v -S 65536 -C 20
fi
if have riostream; then
	host_connect riostream "^custom +64k +20 " riostream -s 10.91.0.2 -p 27019 -T v -S 65536 -C 20
	host_serve riostream "^custom +64k +20 " riostream -p 27020 -T v -S 65536 -C 20
fi
# cmtime: the guest connects 50 times; our server never ends by itself,
# so it is stopped once the guest reports its step (bounded by qemu).
if have cmtime; then
	hs timeout 300 "$tool" run -- cmtime -p 27021 >"$work/cmtime-server.out" 2>"$work/cmtime-server.err" &
	while kill -0 "$qemu" 2>/dev/null && ! grep -qE '^UABI-KCM-STEP: cmtime-client |^UABI-KCM-RESULT' "$log"; do
		sleep 1
	done
	for p in $(ip netns pids "$ns"); do
		[[ $(cat /proc/$p/comm 2>/dev/null) == cmtime ]] && kill $p 2>/dev/null
	done
	wait $!
fi
# await_guest PATTERN: until the guest's log has a line matching PATTERN;
# false if it ends first (qemu gone, or its result printed).
await_guest() {
	while kill -0 "$qemu" 2>/dev/null && ! grep -qE "$1|^UABI-KCM-RESULT" "$log"; do
		sleep 0.5
	done
	grep -qE "$1" "$log"
}
# tell WORD: the guest's next `hear` (kroce-cm-guest-init.sh) gets WORD, a
# connection to its port 27099 (again while refused: it is not listening
# yet; at most 300 s).
tell() {
	local i
	for i in $(seq 600); do
		kill -0 "$qemu" 2>/dev/null || return 1
		ip netns exec "$ns" timeout 5 bash -c "echo $1 >/dev/tcp/10.91.0.2/27099" 2>/dev/null &&
			return 0
		sleep 0.5
	done
	return 1
}
# verdict NAME OK: NAME's PASS or FAIL.
verdict() {
	if (($2)); then
		echo "run-kroce-cm: host $1: PASS"
	else
		fails+=("host $1 (see $work/$1.out)")
		echo "run-kroce-cm: host $1: FAIL"; tail -n 5 "$work/$1.out"
	fi
}
# mckey, UD multicast to 239.1.2.3 (tests/cm/mckey-check.sh judges each
# side): the guest receives, we send 20 datagrams once it joined; then we
# receive (line-buffered: our "joined" line is awaited, then the guest is
# told), the guest sends 20.  Each receiver ends only once it has all 20.
if have mckey; then
	ok=0
	if await_guest '^UABI-KCM-LISTEN-mckey$'; then
		hs timeout 60 "$tool" run -- mckey -m 239.1.2.3 -b 10.91.0.1 -s -C 20 \
			>"$work/mckey-sender.out" 2>&1 &&
			mckey_ok sender "$work/mckey-sender.out" ::ffff:239.1.2.3 && ok=1
	fi
	verdict mckey-sender $ok
	hs timeout 60 "$tool" run -- stdbuf -oL mckey -m 239.1.2.3 -b 10.91.0.1 -C 20 \
		>"$work/mckey-receiver.out" 2>&1 &
	pid=$! ok=0
	for _ in $(seq 300); do
		grep -q 'mckey: joined' "$work/mckey-receiver.out" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	tell joined
	wait $pid && mckey_ok receiver "$work/mckey-receiver.out" ::ffff:239.1.2.3 && ok=1
	verdict mckey-receiver $ok
fi

# perftest over rdma_cm (-R), the guest serving, then connecting: each
# pair run again whole (both sides new) while it fails, at most
# perf_attempts times, as tests/cm/run-cm-two-hosts.sh does for
# perftest's own race (held ACKs off): under TCG the guest's server loses
# it far more often (ib_write_lat's: 5 and 6 times in a row seen while
# other builds loaded the machine; a lost attempt costs 2-3 s), and
# perftest's own measure of the CPU's clock fails now and then ("Can't
# produce a report").  An attempt passes only if both sides end with 0
# and the client (ours or the guest's) prints its result line, timed
# (perf_timed); one that perftest could not time is tried again, never
# passed.
perf_attempts=${UABI_KROCE_PERF_ATTEMPTS:-30}
perf_port=27100	# our servers' ports: 27101 on
# perf_timed OUT [-r]: OUT has no "Can't produce a report", and its
# result line (the last line of numbers) has what perftest measured, its
# average (a bandwidth test's BW average, a latency test's t_avg), neither
# 0 nor inf/nan.  With -r OUT need not have a result line (ib_read_bw's
# server prints none).  (A send_bw server's BW peak is 0.00 by perftest's
# design: not looked at.)
perf_timed() {
	local line col=4
	! grep -q "Can't produce a report" "$1" || return 1
	grep -q 't_avg' "$1" && col=6
	line=$(grep -E '^ +[0-9]+ +[0-9]+ ' "$1" | tail -n 1)
	[[ -z $line && ${2:-} == -r ]] && return 0
	awk -v c="$col" '{ exit !(NF >= c && tolower($0) !~ /inf|nan/ && $c + 0 > 0) }' <<<"${line:-x}"
}
# host_perf ROLE NAME CMD...: our side of the guest's kperf NAME (ROLE
# client: the guest serves) or kperf_client NAME (ROLE server).  Our
# client connects again within an attempt only while its first
# connection is refused ("Unable to init the socket connection": the
# server not up yet; at most 60 times, a second apart), then the guest is
# told it ended (or died); our server is started at a new port, the
# guest told we serve there ("serving-PORT"), and once the guest's client
# ended it has 10 s to end by itself, else it is stopped (its client
# died).  Outputs: WORK/NAME-host-ROLE-N.out, the
# guest's WORK/NAME-guest-ROLE-N.out.
host_perf() {
	local role=$1 name=$2 n rc=1 grc try ok=0 timed= spid i grole=server cout sout t0=$SECONDS
	shift 2
	[[ $role == server ]] && grole=client
	for n in $(seq "$perf_attempts"); do
		rc=1 grc=
		if [[ $role == client ]]; then
			await_guest "^UABI-KCM-LISTEN-$name-$n\$" || break
			for try in $(seq 60); do
				hs env UABI_WIRE_HOLD_ACKS=0 timeout 60 "$tool" run -- "$@" \
					>"$work/$name-host-client-$n.out" 2>&1
				rc=$?
				((rc != 0)) && grep -q 'Unable to init the socket connection' \
					"$work/$name-host-client-$n.out" && kill -0 "$qemu" 2>/dev/null || break
				sleep 1
			done
			# (its server waits on for a client that died: stopped at once)
			if ((rc == 0)); then tell ended; else tell died; fi
			await_guest "^UABI-KCM-TRY: $name-server $n " || break
		else
			# a port of its own each time, so that a server of an
			# earlier attempt cannot be met (seen while the stop below
			# signalled only hs's subshell: the server lived on, the
			# next one's rdma_bind_addr failed and the guest's client
			# reached the old one)
			perf_port=$((perf_port + 1))
			hs env UABI_WIRE_HOLD_ACKS=0 timeout 60 "$tool" run -- "$@" -p $perf_port \
				>"$work/$name-host-server-$n.out" 2>&1 &
			spid=$!
			tell "serving-$perf_port" && await_guest "^UABI-KCM-TRY: $name-client $n "
			for i in $(seq 50); do
				kill -0 $spid 2>/dev/null || break
				sleep 0.2
			done
			# stopped: the program itself ($! is hs's subshell, which
			# a signal would end without reaching its children)
			for i in $(ip netns pids "$ns"); do
				[[ $(cat /proc/$i/comm 2>/dev/null) == "${1:0:15}" ]] && kill "$i" 2>/dev/null
			done
			wait $spid
			rc=$?
			grep -qE "^UABI-KCM-TRY: $name-client $n " "$log" || break
		fi
		grc=$(awk -v n="$name-$grole" -v k="$n" '$1 == "UABI-KCM-TRY:" && $2 == n && $3 == k {print $4}' "$log")
		guest_out "$name-$grole-$n" >"$work/$name-guest-$grole-$n.out"
		cout=$work/$name-host-client-$n.out sout=$work/$name-guest-server-$n.out
		[[ $role == server ]] && cout=$work/$name-guest-client-$n.out sout=$work/$name-host-server-$n.out
		timed=timed
		perf_timed "$cout" && perf_timed "$sout" -r || timed="not timed"
		echo "run-kroce-cm: $name -R attempt $n, we $role: ours $rc, the guest's $grc, $timed"
		if ((rc == 0)) && [[ $grc == 0 && $timed == timed ]]; then
			ok=1
			break
		fi
		((n < perf_attempts)) && tell again || break
	done
	if ((ok)); then
		tell pass
		echo "run-kroce-cm: host $name-$role: PASS (attempt $n, $((SECONDS - t0)) s: $(grep -E '^ +[0-9]+ +[0-9]+ ' "$cout" | tail -n 1 | tr -s ' '))"
	else
		tell fail
		fails+=("host $name-$role -R (attempt $n, $((SECONDS - t0)) s: ours $rc, the guest's ${grc:-none}, ${timed:-no result}; see $work/$name-*-$n.out)")
		echo "run-kroce-cm: host $name-$role: FAIL"; tail -n 5 "$work/$name-host-$role-$n.out"
	fi
}
if have ib_send_bw; then
	host_perf client ib_send_bw ib_send_bw -R -F -n 200 -p 27031 10.91.0.2
	host_perf server ib_send_bw ib_send_bw -R -F -n 200
fi
if have ib_write_lat; then
	host_perf client ib_write_lat ib_write_lat -R -F -n 200 -p 27032 10.91.0.2
	host_perf server ib_write_lat ib_write_lat -R -F -n 200
fi
if have ib_read_bw; then
	host_perf client ib_read_bw ib_read_bw -R -F -n 200 -p 27033 10.91.0.2
	host_perf server ib_read_bw ib_read_bw -R -F -n 200
fi

# IPv6 while IPv4 stays: fd91::1 beside 10.91.0.1 here, fd91::2 beside
# 10.91.0.2 in the guest (made to fail: with the module receiving and
# running its CM at its first IPv4 address only, as before, these two
# runs failed, the others passed); the same two runs.  Then fd91::1 goes.
ip -n "$ns" -6 addr add fd91::1/64 dev "$tap" nodad
sleep 1	# (uabid binds its socket at the new address on the notification)
host_connect rping6 "" rping -c -a fd91::2 -p 27003 -v -C 10
host_serve rping6 "" rping -s -a fd91::1 -p 27004 -v -C 10
ip -n "$ns" -6 addr del fd91::1/64 dev "$tap"

# A client killed half-way through connecting, in the guest (after our
# REP, then right after its REQ; tests/cm/ucma_half_connect.c): the
# module's CM sends the REJ as the dead program's ID goes, and our rping
# server sees REJECTED ("consumer defined", 28, after the REP; 1 or 28
# after the REQ, or its accept finds the request rejected) and ends by
# itself.  Both servers listen from the start: the guest's req client
# dies right after its REQ, so it cannot see a REQ refused for want of a
# listener and try again, as the rep client does (seen in CI: the req
# server, started once the rep one had ended, came after the guest's REQ
# and waited in vain).
declare -A half_pid
for when in rep req; do
	[[ $when == rep ]] && hport=27040 || hport=27041
	hs timeout 90 "$tool" run -- rping -s -a 10.91.0.1 -p $hport -v -C 1 \
		>"$work/half-$when-server.out" 2>"$work/half-$when-server.err" &
	half_pid[$when]=$!
done
for when in rep req; do
	hpid=${half_pid[$when]}
	await_guest "^UABI-KCM-STEP: half-$when-client " || true
	for _ in $(seq 30); do
		kill -0 $hpid 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 $hpid 2>/dev/null; then
		for p in $(ip netns pids "$ns"); do
			[[ $(cat /proc/$p/comm 2>/dev/null) == rping ]] && kill $p 2>/dev/null
		done
		wait $hpid
		fails+=("host half-$when-server: still waiting 15 s after the guest's client died")
	else
		wait $hpid
		hrc=$?
		want='RDMA_CM_EVENT_REJECTED, error 28$'
		[[ $when == req ]] && want='RDMA_CM_EVENT_REJECTED, error (1|28)$|rdma_accept: Invalid argument'
		if ((hrc != 0)) && grep -Eq "$want" "$work/half-$when-server.err"; then
			echo "run-kroce-cm: host half-$when-server: PASS (ended by itself, exit $hrc: $(grep -Eo 'RDMA_CM_EVENT_[A-Z]+, error -?[0-9]+|rdma_accept: Invalid argument' "$work/half-$when-server.err" | head -1))"
		else
			fails+=("host half-$when-server (exit $hrc; see $work/half-$when-server.err)")
			echo "run-kroce-cm: host half-$when-server: FAIL"; tail -n 5 "$work/half-$when-server.err"
		fi
	fi
done

# DEVICE_REMOVAL (kroce-cm-guest-init.sh): our rping server, without end,
# for the guest's client, whose device the guest then deletes under it;
# the server must end (DISCONNECTED) once the guest's step is reported.
hs timeout 200 "$tool" run -- rping -s -a 10.91.0.1 -p 27030 >"$work/removal-server.out" 2>&1 &
rmpid=$!
while kill -0 "$qemu" 2>/dev/null && ! grep -qE '^UABI-KCM-STEP: removal |^UABI-KCM-RESULT' "$log"; do
	sleep 1
done
for _ in $(seq 30); do
	kill -0 $rmpid 2>/dev/null || break
	sleep 0.5
done
if kill -0 $rmpid 2>/dev/null; then
	kill $rmpid 2>/dev/null
	for p in $(ip netns pids "$ns"); do
		[[ $(cat /proc/$p/comm 2>/dev/null) == rping ]] && kill $p 2>/dev/null
	done
	fails+=("host removal-server: still serving 15 s after the guest deleted its device")
else
	echo "run-kroce-cm: host removal-server: ended ($(tail -n 1 "$work/removal-server.out"))"
fi
wait $rmpid 2>/dev/null

# The flood while the guest deletes and adds its device and unloads the
# module: bursts of 500 until it says it is done (at most 60).
while kill -0 "$qemu" 2>/dev/null && ! grep -qE '^UABI-KCM-FLOOD$|^UABI-KCM-RESULT' "$log"; do
	sleep 1
done
sleep 2
kill "$dumpcap" 2>/dev/null	# (the garbage's ICRCs are meant to be wrong)
wait "$dumpcap" 2>/dev/null
bursts=0
while ((bursts < 60)) && kill -0 "$qemu" 2>/dev/null && ! grep -qE '^UABI-KCM-FLOOD-END|^UABI-KCM-RESULT' "$log"; do
	ip netns exec "$ns" "$garbage" 10.91.0.1 10.91.0.2 4791 500 $((100 + bursts)) >/dev/null 2>&1
	bursts=$((bursts + 1))
	sleep 0.2
done
echo "run-kroce-cm: flood: $bursts bursts of 500 garbage datagrams during the teardowns"
((bursts > 0)) || fails+=("no flood during the teardowns")
hs "$tool" link >"$work/link-end.log" 2>&1
cat "$work/link-end.log"
hs "$tool" daemon stop >/dev/null 2>&1
wait "$qemu"
# Every packet's ICRC over its real header; the module's MADs among them.
for c in 1 2; do
	cap=$work/tap-$c.pcap
	if "$pcap_check" "$cap" >"$work/pcap_icrc-$c.log" 2>&1; then
		echo "run-kroce-cm: capture $c: $(head -1 "$work/pcap_icrc-$c.log")"
	else
		fails+=("capture $c: not every RoCEv2 packet right (see $work/pcap_icrc-$c.log)")
		tail -n 5 "$work/pcap_icrc-$c.log"
	fi
	kmads=$(tshark -r "$cap" -Y "ip.src == 10.91.0.2 && udp.srcport == 4791 && udp.dstport == 4791" 2>/dev/null | wc -l)
	echo "run-kroce-cm: capture $c: $kmads datagrams from the module's socket (10.91.0.2:4791)"
	((kmads > 0)) || fails+=("capture $c: no datagram from the module's socket (10.91.0.2:4791)")
done
# ucmatose's clients set TOS 0x68 (rdma_set_option): the REQs the module
# sends and the REPs it answers ours with leave its socket with it, as
# Linux's CM sends on the path's traffic class; so do uabid's.
qp1_tos='udp.srcport == 4791 && udp.dstport == 4791 && infiniband.bth.destqp == 1 && ip.dsfield == 0x68'
ktos=$(tshark -r "$work/tap-2.pcap" -Y "ip.src == 10.91.0.2 && $qp1_tos" 2>/dev/null | wc -l)
htos=$(tshark -r "$work/tap-2.pcap" -Y "ip.src == 10.91.0.1 && $qp1_tos" 2>/dev/null | wc -l)
echo "run-kroce-cm: capture 2: CM MADs with TOS 0x68: $ktos from the module's socket, $htos from uabid's"
((ktos >= 4 && htos >= 4)) ||
	fails+=("capture 2: CM MADs with TOS 0x68: $ktos from the module, $htos from uabid (ucmatose -t 0x68 both ways: 4 or more each)")
kmads=$(tshark -r "$work/tap-2.pcap" -Y "ipv6.src == fd91::2 && udp.srcport == 4791 && udp.dstport == 4791" 2>/dev/null | wc -l)
echo "run-kroce-cm: capture 2: $kmads datagrams from the module's socket ([fd91::2]:4791)"
((kmads > 0)) || fails+=("capture 2: no datagram from the module's socket ([fd91::2]:4791)")
grep -E '^UABI-KCM-STEP: |^link ' "$log"
while read -r _ name verdict; do
	[[ $verdict == PASS ]] || fails+=("guest step $name: $verdict")
done < <(grep '^UABI-KCM-STEP: ' "$log")
grep -q '^UABI-KCM-RESULT: PASS' "$log" || fails+=("the guest did not report UABI-KCM-RESULT: PASS")
grep -qE 'Kernel panic|Oops|BUG:' "$log" && fails+=("kernel panic/oops in the guest")
# The module's count after the rpings: the garbage dropped.
kcount=$(sed -n '/^UABI-KCM-COUNTS$/q; /^link kroce0\//p' "$log" | tail -n 1 | grep -oE 'relayed [0-9]+ dropped [0-9]+')
kdropped=${kcount##* }
echo "run-kroce-cm: the module's kroce0 at the end: $kcount"
((${kdropped:-0} > 0)) || fails+=("the module counted no garbage as dropped")
# ... and in its QP1 and CM counts (UABI_IOCTL_LINK_QUERY_CM): garbage
# refused at QP1 (wrong Q_Keys, bad ICRCs, runts), MADs given to the CM,
# the rpings' MADs taken, the CM's own sent.
kcm=$(sed -n '/^UABI-KCM-COUNTS$/q; /^link kroce0\//p' "$log" | tail -n 1 |
	grep -oE 'qp1 in [0-9]+ refused [0-9]+ cm taken [0-9]+ dropped [0-9]+ sent [0-9]+')
read -r _ _ kqp1_in _ kqp1_refused _ _ kcm_taken _ kcm_dropped _ kcm_sent <<<"$kcm"
echo "run-kroce-cm: the module's QP1 and CM counts: $kcm"
((${kqp1_refused:-0} > 0)) || fails+=("the module's QP1 refused none of the garbage (uabi link: $kcm)")
((${kqp1_in:-0} > 0 && ${kcm_taken:-0} > 0 && ${kcm_sent:-0} > 0)) ||
	fails+=("the module's QP1/CM counts show no MAD given, taken or sent (uabi link: $kcm)")
((${kcm_dropped:-0} > 0)) || fails+=("the module's CM dropped none of the garbage's MADs (uabi link: $kcm)")
# rping's payload, both sides of both runs.
diff <(grep '^ping data: ' "$work/rping-client.out") <(rping_expect 10 "ping data: ") >/dev/null ||
	fails+=("host rping-client: payload not what rping sent")
diff <(grep '^server ping data: ' "$work/rping-server.out") <(rping_expect 10 "server ping data: ") >/dev/null ||
	fails+=("host rping-server: payload not what rping sent")
diff <(guest_out rping-server | grep '^server ping data: ') <(rping_expect 10 "server ping data: ") >/dev/null ||
	fails+=("guest rping-server: payload not what rping sent")
diff <(guest_out rping-client | grep '^ping data: ') <(rping_expect 10 "ping data: ") >/dev/null ||
	fails+=("guest rping-client: payload not what rping sent")
diff <(grep '^ping data: ' "$work/rping6-client.out") <(rping_expect 10 "ping data: ") >/dev/null ||
	fails+=("host rping6-client: payload not what rping sent")
diff <(grep '^server ping data: ' "$work/rping6-server.out") <(rping_expect 10 "server ping data: ") >/dev/null ||
	fails+=("host rping6-server: payload not what rping sent")
diff <(guest_out rping6-server | grep '^server ping data: ') <(rping_expect 10 "server ping data: ") >/dev/null ||
	fails+=("guest rping6-server: payload not what rping sent")
diff <(guest_out rping6-client | grep '^ping data: ') <(rping_expect 10 "ping data: ") >/dev/null ||
	fails+=("guest rping6-client: payload not what rping sent")
echo "run-kroce-cm: whole run $(($(date +%s) - t_start))s"
if ((${#fails[@]})); then
	for f in "${fails[@]}"; do echo "run-kroce-cm: FAILED: $f"; done
	echo "run-kroce-cm: guest log: $log"
	exit 1
fi
echo "run-kroce-cm: PASS"
