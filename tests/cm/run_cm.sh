#!/usr/bin/env bash
# Unmodified librdmacm programs (rdmacm-utils, perftest -R) under
# `uabi run`, server and client on one host, each case with its own uabid
# (docs/cm.md).  Asserts what a user sees: exit statuses, the payload rping
# verified, events, and that nothing is left behind.
#
#   run_cm.sh UABI_TOOL CASE [PROGRAM]
#
# With UABI_BACKEND=kernel, on the kernel module (tests/kernel/run-qemu.sh
# runs it so in its qemu guest); there UABI_CM_SLOW=1 (TCG) takes fewer
# connections and iterations, with the same checks.
set -u
tool=$(realpath "$1") case=$2 prog=${3:+$(realpath "$3")}
dir=$(mktemp -d /tmp/uabi-cm.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=${UABI_BACKEND:-daemon} UABI_IDLE_EXIT=30
pids=()
# The module's CM knobs this case changed, NAME:VALUE to put back.
kparams=/sys/module/rdma_uabi/parameters
ksaved=()
# cmtime -c 1000 everywhere: on the module in TCG it takes about 5 s.
n_cmtime=1000
if [[ ${UABI_CM_SLOW:-0} == 1 ]]; then
	n_send=200 n_perf=200 n_stream=50
else
	n_send=2000 n_perf=1000 n_stream=200
fi
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${ksaved[@]}"; do echo "${p#*:}" >"$kparams/${p%%:*}"; done
	"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.out "$dir"/*.err; do echo "--- $f"; cat "$f"; done
	# uabid's own account (what it refused and why), when it has one
	[[ -s $dir/uabid.log ]] && { echo "--- $dir/uabid.log (last 40 lines)"; tail -n 40 "$dir/uabid.log"; }
	exit 1
}
need() { command -v "$1" >/dev/null || { echo "SKIP: $1 not installed (rdmacm-utils, perftest)"; exit 77; }; }

# timeouts: short CM timeouts in this case's uabid (or, in-process, the
# program's core; a response timeout of
# 2^14 * 4.096 us, 67 ms; 2 retries; MRAs of 2^15 * 4.096 us, 134 ms), so
# that a stuck peer is given up in about 0.3 s.  On the module, which no
# environment reaches, the same values in its parameters of the same
# meaning, for this case only: put back on exit (the module is every
# case's and every user's).
if [[ $case == timeouts ]]; then
	export UABI_CM_RESPONSE_TIMEOUT=14 UABI_CM_RETRIES=2 UABI_CM_MRA_TIMEOUT=15
	if [[ $UABI_BACKEND == kernel ]]; then
		for p in cm_response_timeout:14 cm_retries:2 cm_mra_timeout:15; do
			old=$(cat "$kparams/${p%%:*}") || fail "the module has no parameter ${p%%:*}"
			ksaved+=("${p%%:*}:$old")
			echo "${p#*:}" >"$kparams/${p%%:*}" || fail "cannot set the module's ${p%%:*}"
		done
	fi
fi
if [[ $UABI_BACKEND == daemon ]] &&
   ! "$tool" --socket "$UABI_SOCKET" daemon start >"$dir/daemon.out" 2>&1; then
	fail "cannot start uabid"
fi

# server NAME SECONDS CMD...: starts CMD under `uabi run` in the background.
server() {
	local name=$1 secs=$2
	shift 2
	# stdout and stderr apart: rping's stderr lines would land inside
	# its buffered stdout's lines.
	timeout "$secs" "$tool" run -- "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
	spid=$!
	pids+=("$spid")
	sleep 0.5 # the listener is in the core before the client starts
}
# client NAME SECONDS CMD...: runs CMD under `uabi run`; its status in crc.
# While a server of this case is still starting (a loaded machine can take
# longer than the half second above to reach rdma_listen), a client
# REJECTED for want of a listener (reason 8; rping's and perftest's ways
# of saying it, $refused) tries again, for up to 10 s.
refused='RDMA_CM_EVENT_REJECTED(, error |; error: )8|Unexpected CM event bl blka 8$'
client() {
	local name=$1 secs=$2 try
	shift 2
	for try in $(seq 40); do
		timeout "$secs" "$tool" run -- "$@" >"$dir/$name.out" 2>"$dir/$name.err"
		crc=$?
		((crc != 0)) && [[ -n ${spid:-} ]] && kill -0 "$spid" 2>/dev/null &&
			grep -Eq "$refused" "$dir/$name.err" || break
		sleep 0.25
	done
}
# perf_pair PROG PORT N: perftest's PROG over rdma_cm, server and client,
# N iterations; crc and src their statuses.  perftest's client makes two
# connections, its own exchange's and then the test's, and its server
# listens for the second only once it has taken the first.  A client
# refused at the first (the server not listening yet: "Unexpected CM
# event bl blka 8") tries again by itself, as above.  One refused at the
# second (quicker than the server: "RDMA_CM_EVENT_REJECTED; error: 8",
# perftest's own race, on Linux too; seen here under load) cannot: the
# server has taken its first connection and waits for the test's, and
# would take a new client's first for it (seen: the server then
# synchronised over the dead client's connection and failed).  So the
# pair starts again, on the next port (up to 5 times); so it does when a
# side could not print its report because perftest's own sampling of the
# CPU's clock failed ("Can't produce a report", its r^2 below 0.9: seen
# under TCG, on either side), which is perftest's measure, not the
# transfer.
perf_pair() {
	local prog=$1 port=$2 n=$3 attempt refused='Unexpected CM event bl blka 8$'
	for attempt in 1 2 3 4 5; do
		server server 60 "$prog" -R -p $((port + attempt - 1)) -n "$n"
		client client 60 "$prog" -R -p $((port + attempt - 1)) -n "$n" 127.0.0.1
		if ((crc != 0)) && grep -q 'RDMA_CM_EVENT_REJECTED; error: 8' "$dir/client.err"; then
			kill "$spid" 2>/dev/null
			wait "$spid"
			echo "$prog: the client was refused its second connection (attempt $attempt), again"
			continue
		fi
		wait_server
		((crc != 0 || src != 0)) &&
			grep -q "Can't produce a report" "$dir/client.err" "$dir/server.err" || break
		echo "$prog: perftest could not sample the CPU's clock (attempt $attempt), again"
	done
}
wait_server() {
	wait "$spid"
	src=$?
}
# Nothing of the user's is left in the core.
no_objects() {
	local out
	# In-process (UABI_BACKEND=inproc: each program's own core, the CM's
	# timer the in-process host's) the core ended with its program:
	# there is nothing shared to list.
	[[ $UABI_BACKEND == inproc ]] && return
	out=$("$tool" --socket "$UABI_SOCKET" objects 2>&1)
	[[ $out == *"no live objects"* ]] || fail "objects left behind: $out"
}
. "$(dirname "${BASH_SOURCE[0]}")/rping-expect.sh"

case $case in
rping)
	need rping
	server server 30 rping -s -a 127.0.0.1 -p 7000 -v -C 100
	client client 30 rping -c -a 127.0.0.1 -p 7000 -v -C 100
	wait_server
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	rping_expect 100 "ping data: " >"$dir/expect"
	diff <(grep 'ping data: ' "$dir/client.out") "$dir/expect" >/dev/null ||
		fail "the client's payload is not what rping sent"
	rping_expect 100 "server ping data: " >"$dir/expect"
	diff <(grep 'server ping data: ' "$dir/server.out") "$dir/expect" >/dev/null ||
		fail "the server did not read what rping sent"
	no_objects
	;;
rping-ipv6)
	need rping
	server server 30 rping -s -a ::1 -p 7001 -v -C 10
	client client 30 rping -c -a ::1 -p 7001 -v -C 10
	wait_server
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	[[ $(grep -c 'ping data: rdma-ping-' "$dir/client.out") == 10 ]] || fail "10 pings"
	;;
host-address)
	# This host's own address resolves to the device too.
	need rping
	ip=$(hostname -I 2>/dev/null | awk '{print $1}')
	[[ -n $ip ]] || { echo "SKIP: no address on any interface"; exit 77; }
	server server 30 rping -s -a "$ip" -p 7006 -v -C 5
	client client 30 rping -c -a "$ip" -p 7006 -v -C 5
	wait_server
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	[[ $(grep -c 'ping data: rdma-ping-' "$dir/client.out") == 5 ]] || fail "5 pings"
	;;
not-local)
	# An address of no interface here: ADDR_ERROR (-ENODEV), and binding
	# to one EADDRNOTAVAIL, as Linux answers for an address without an
	# RDMA device.  198.51.100.0/24 is TEST-NET-2.
	need rping
	if hostname -I 2>/dev/null | grep -qw '198.51.100.77'; then
		echo "SKIP: 198.51.100.77 is local here"; exit 77
	fi
	client client 30 rping -c -a 198.51.100.77 -p 7007 -C 1
	((crc != 0)) || fail "rping connected to a non-local address"
	grep -q 'RDMA_CM_EVENT_ADDR_ERROR, error -19' "$dir/client.err" || fail "no ADDR_ERROR -19"
	client server 30 rping -s -a 198.51.100.77 -p 7007 -C 1
	((crc != 0)) || fail "rping bound a non-local address"
	grep -q 'rdma_bind_addr: Cannot assign requested address' "$dir/server.err" ||
		fail "bind: not EADDRNOTAVAIL"
	no_objects
	;;
no-listener)
	need rping
	client client 30 rping -c -a 127.0.0.1 -p 7002 -C 1
	((crc != 0)) || fail "rping connected to nobody"
	grep -q 'RDMA_CM_EVENT_REJECTED' "$dir/client.err" || fail "no REJECTED event"
	no_objects
	;;
killed-client)
	need rping
	need stdbuf
	# The server's lines unbuffered: the client is killed once pings go.
	server server 30 stdbuf -oL rping -s -a 127.0.0.1 -p 7003 -v
	# `uabi run` execs rping: $! is rping's pid.
	"$tool" run -- rping -c -a 127.0.0.1 -p 7003 -C 100000000 \
		>"$dir/client.out" 2>"$dir/client.err" &
	cpid=$!
	pids+=("$cpid")
	# Killed in the middle of its pings: once the server has one, and a
	# while after.
	for _ in $(seq 200); do
		grep -q 'server ping data: ' "$dir/server.out" && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q 'server ping data: ' "$dir/server.out" || fail "no ping reached the server"
	sleep 1
	kill -0 "$cpid" 2>/dev/null || fail "the client is gone before it was killed"
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null
	wait_server
	# The server learns it one of two ways, whichever comes first: the
	# DISCONNECTED event, or its RDMA READ to the dead client failing
	# (status 12, as on hardware), after which rping exits without
	# waiting for the event.  Either way it must end by itself, not by
	# the timeout, and leave nothing behind.
	grep -qE 'DISCONNECT EVENT|cq completion failed status 12' "$dir/server.err" ||
		fail "the server saw neither DISCONNECTED nor a failed completion"
	((src != 124 && src != 137)) || fail "the server did not end (exit $src)"
	no_objects
	;;
ucmatose)
	need ucmatose
	server server 30 ucmatose -c 4 -C 20
	client client 30 ucmatose -s 127.0.0.1 -c 4 -C 20
	wait_server
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	grep -q 'return status 0' "$dir/client.out" || fail "client status"
	grep -q 'disconnected' "$dir/server.out" || fail "server saw no disconnect"
	no_objects
	;;
udaddy)
	need udaddy
	server server 30 udaddy -c 2
	client client 30 udaddy -s 127.0.0.1 -c 2
	wait_server
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	grep -q 'return status 0' "$dir/client.out" || fail "client status"
	no_objects
	;;
cmtime)
	need cmtime
	server server 60 cmtime
	client client 60 cmtime -s 127.0.0.1 -c $n_cmtime
	((crc == 0)) || fail "client exit $crc"
	grep -Eq '^connect +:' "$dir/client.out" || fail "no timings"
	# cmtime exits 0 whatever its connections met; each one that did not
	# connect or disconnect as it should prints its event.
	bad=$(cat "$dir/client.out" "$dir/client.err" "$dir/server.out" "$dir/server.err" | grep -c '^event: ')
	((bad == 0)) || fail "$bad unexpected events in $n_cmtime connections, the first: $(cat "$dir"/*.out "$dir"/*.err | grep -m1 '^event: ')"
	echo "cmtime -c $n_cmtime: every connection made and ended; $(grep -E '^(connect|disconnect) +:' "$dir/client.out" | tr -s ' ' | tr '\n' ';')"
	;;
rdma-server-client)
	need rdma_server
	server server 30 rdma_server
	client client 30 rdma_client -s 127.0.0.1
	wait_server
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	grep -q 'rdma_client: end 0' "$dir/client.out" || fail "client status"
	no_objects
	;;
send-bw)
	need ib_send_bw
	perf_pair ib_send_bw 7004 $n_send
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	grep -q 'rdma_cm QPs.*ON' "$dir/client.out" || fail "not on rdma_cm"
	grep -Eq "^ 65536 +$n_send " "$dir/client.out" || fail "no result line"
	;;
rstream | riostream)
	# rsockets (librdmacm's own socket layer over rdma_cm and RC):
	# rstream's and riostream's data verified (-T v), then the same with
	# non-blocking calls (-T n).  Not -T a: its client polls before each
	# receive and gives up on POLLHUP even with data still to read, so it
	# fails whenever the server's close overtakes its last reads (a race
	# of the program, on any device; docs/cm.md).  Then -T v over AF_IB
	# addresses (-f gid: the IPv4-mapped GID of 127.0.0.1; rsockets then
	# frames its connection data as on an AF_IB connection).
	need "$case"
	port=7010
	for mode in v n gid; do
		port=$((port + 1))
		if [[ $mode == gid ]]; then
			saddr=(-f gid -b ::ffff:127.0.0.1) caddr=(-f gid -s ::ffff:127.0.0.1) mode=v
		else
			saddr=() caddr=(-s 127.0.0.1)
		fi
		server server 30 "$case" "${saddr[@]}" -p $port -T $mode -S 65536 -C $n_stream
		client client 30 "$case" "${caddr[@]}" -p $port -T $mode -S 65536 -C $n_stream
		wait_server
		((crc == 0 && src == 0)) || fail "-T $mode: exit statuses: client $crc server $src"
		for side in client server; do
			grep -Eq "^custom +64k +$n_stream +1 " "$dir/$side.out" ||
				fail "-T $mode: no result line from the $side"
		done
	done
	no_objects
	;;
write-lat | read-bw)
	# perftest over rdma_cm: RDMA WRITE latency, RDMA READ bandwidth.
	prog=ib_${case/-/_}
	need "$prog"
	perf_pair "$prog" 7020 $n_perf
	((crc == 0 && src == 0)) || fail "exit statuses: client $crc server $src"
	grep -q 'rdma_cm QPs.*ON' "$dir/client.out" || fail "not on rdma_cm"
	if [[ $case == write-lat ]]; then
		grep -Eq "^ 2 +$n_perf " "$dir/client.out" || fail "no result line"
	else
		grep -Eq "^ 65536 +$n_perf " "$dir/client.out" || fail "no result line"
	fi
	no_objects
	;;
xrc)
	# rdma_xserver/rdma_xclient: an RC connection, then XRC over rdma_cm
	# (PS_IB; XRC_SEND to XRC_RECV, the SRQ number in the REP's private
	# data).  Each client sends one 16-byte message the server receives.
	need rdma_xserver
	port=7030
	for mode in r x; do
		port=$((port + 1))
		server server 30 rdma_xserver -c $mode -p $port
		client client 30 rdma_xclient -c $mode -s 127.0.0.1 -p $port
		wait_server
		((crc == 0 && src == 0)) || fail "-c $mode: exit statuses: client $crc server $src"
		grep -q 'rdma_xclient: end 0' "$dir/client.out" || fail "-c $mode: client status"
		grep -q 'rdma_xserver: end 0' "$dir/server.out" || fail "-c $mode: server status"
	done
	no_objects
	;;
mckey)
	# UD multicast: a receiver joins the group, then a sender joins it and
	# sends 20 datagrams to it; the receiver ends only once it has all 20.
	# IPv4, then IPv6, then an MGID itself (-M: an AF_IB address, the
	# ID bound to 127.0.0.1 for its device), which must be the group
	# joined.  The sender starts once the receiver has joined (its
	# line-buffered "joined" line), so none is sent before it is in.
	need mckey
	need stdbuf
	for group in 239.1.2.3 ff0e::1234 mgid:ff12:401b:ffff::1234; do
		if [[ $group == mgid:* ]]; then
			group=${group#mgid:}
			how=(-M "$group" -b 127.0.0.1)
		else
			how=(-m "$group")
		fi
		timeout 30 "$tool" run -- stdbuf -oL mckey "${how[@]}" -C 20 \
			>"$dir/server.out" 2>"$dir/server.err" &
		spid=$!
		pids+=("$spid")
		for _ in $(seq 300); do
			grep -q 'mckey: joined' "$dir/server.out" && break
			kill -0 "$spid" 2>/dev/null || break
			sleep 0.1
		done
		client client 30 mckey "${how[@]}" -s -C 20
		wait_server
		((crc == 0 && src == 0)) || fail "$group: exit statuses: sender $crc receiver $src"
		grep -q 'data transfers complete' "$dir/server.out" ||
			fail "$group: the receiver did not get its datagrams"
		for side in client server; do
			grep -q 'return status 0' "$dir/$side.out" || fail "$group: $side status"
		done
		joined=$(grep 'mckey: joined' "$dir/server.out")
		[[ -n $joined && $joined == "$(grep 'mckey: joined' "$dir/client.out")" ]] ||
			fail "$group: the two joined different groups"
		[[ ${how[0]} == -m || $joined == *"dgid: $group "* ]] ||
			fail "$group: the MGID given is not the group joined: $joined"
	done
	no_objects
	;;
timeouts)
	# Inside one core, a listener that never takes its request and a
	# requester that never sends its RTU are timed out as the IB CM's REQ
	# and REP are (UNREACHABLE, -ETIMEDOUT; the peer REJECTED, 1).  And
	# a disconnect is followed by TIMEWAIT_EXIT after the IB CM's
	# time-wait, for each side once it has sent its DREP.  A request
	# beyond the listener's backlog is sent again, as Linux's CM drops
	# it unanswered, and times out if the backlog stays full.  NOTIFY
	# (COMM_EST) establishes an ID that sent its REP, as the RTU would.
	for mode in listener rtu timewait backlog notify; do
		timeout 60 "$tool" run -- "$prog" 7060 $mode >"$dir/$mode.out" 2>"$dir/$mode.err"
		rc=$?
		((rc == 0)) && grep -qx ok "$dir/$mode.out" || fail "$mode: exit $rc"
		echo "$mode: $(tr "\n" ";" <"$dir/$mode.out")"
	done
	no_objects
	;;
af-ib)
	# AF_IB addresses, and the GIDs and path records librdmacm then asks
	# QUERY for (tests/cm/ucma_af_ib.c says what is checked).
	timeout 60 "$tool" run -- "$prog" 7070 >"$dir/af-ib.out" 2>"$dir/af-ib.err"
	rc=$?
	((rc == 0)) && grep -qx ok "$dir/af-ib.out" || fail "exit $rc"
	cat "$dir/af-ib.out"
	no_objects
	;;
options)
	# rdma_set_option() (tests/cm/ucma_options.c says what is checked).
	timeout 60 "$tool" run -- "$prog" 7080 >"$dir/options.out" 2>"$dir/options.err"
	rc=$?
	((rc == 0)) && grep -qx ok "$dir/options.out" || fail "exit $rc"
	cat "$dir/options.out"
	no_objects
	;;
half-connect)
	# A client killed half-way through connecting: after the server's
	# accept (the REP), before its RTU; then right after its REQ.  The
	# IB CM rejects then: "consumer defined" (28) after the REP;
	# "timeout" (1) from a requester, or 28 if the server was quicker and
	# had accepted.  rping's server sees REJECTED (or its accept fails on
	# the rejected request) and ends by itself; nothing of either is left.  (The client is raw ucma commands:
	# librdmacm would send the RTU by itself.)
	need rping
	port=7040
	for when in rep req; do
		port=$((port + 1))
		server server 30 rping -s -a 127.0.0.1 -p $port -v -C 1
		for _ in $(seq 40); do
			timeout 30 "$tool" run -- "$prog" $port $when \
				>"$dir/client.out" 2>"$dir/client.err"
			crc=$?
			grep -q '^event 8 (status 8)' "$dir/client.out" || break
			sleep 0.25 # rping is not listening yet
		done
		((crc == 137)) || fail "$when: the client was not killed (exit $crc)"
		wait_server
		((src != 124 && src != 0)) || fail "$when: the server did not fail by itself (exit $src)"
		if [[ $when == rep ]]; then
			grep -qx REP "$dir/client.out" || fail "rep: the client got no REP"
			grep -q 'RDMA_CM_EVENT_REJECTED, error 28$' "$dir/server.err" ||
				fail "rep: the server saw no REJECTED (consumer defined)"
		else
			# Or rping's accept, racing its event thread, found
			# the request rejected first (EINVAL, as on Linux).
			grep -Eq 'RDMA_CM_EVENT_REJECTED, error (1|28)$|rdma_accept: Invalid argument' \
				"$dir/server.err" || fail "req: the server saw no REJECTED"
		fi
		no_objects
	done
	;;
other-user)
	# On a shared uabid, uid 65534 finds no listener of root's: each
	# user's ports and listeners are its own (docs/cm.md, "Whose").  On
	# the module, which every user shares already, the same.
	need rping
	need setpriv
	((EUID == 0)) || { echo "SKIP: needs root (setpriv to uid 65534)"; exit 77; }
	chmod 1777 "$dir"
	if [[ $UABI_BACKEND == daemon ]]; then
		"$tool" --socket "$UABI_SOCKET" daemon stop >/dev/null 2>&1
		uabid=$(dirname "$tool")/../daemon/uabid
		"$uabid" --shared --socket "$UABI_SOCKET" --idle-exit 0 >"$dir/shared.out" 2>&1 ||
			fail "cannot start uabid --shared"
		for _ in $(seq 100); do [[ -S $UABI_SOCKET ]] && break; sleep 0.05; done
		dpid=$(head -1 "$UABI_SOCKET.lock" 2>/dev/null | tr -dc 0-9)
		export UABI_DAEMON_PID=$dpid
		pids+=("$dpid")
	fi
	server server 30 rping -s -a 127.0.0.1 -p 7005 -v -C 1
	(cd / && timeout 30 setpriv --reuid 65534 --regid 65534 --clear-groups \
		env UABI_FSVIEW=off "$tool" run -- rping -c -a 127.0.0.1 -p 7005 -C 1) \
		>"$dir/nobody.out" 2>"$dir/nobody.err"
	nrc=$?
	((nrc != 0)) || fail "uid 65534 connected to root's listener"
	grep -q 'RDMA_CM_EVENT_REJECTED' "$dir/nobody.err" || fail "no REJECTED for uid 65534"
	client client 30 rping -c -a 127.0.0.1 -p 7005 -v -C 1
	wait_server
	((crc == 0 && src == 0)) || fail "root's own pair: client $crc server $src"
	;;
abuse)
	client client 30 "$prog"
	((crc == 0)) || fail "exit $crc"
	no_objects
	;;
*)
	echo "unknown case $case"; exit 2 ;;
esac
echo PASS
