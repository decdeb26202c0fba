#!/usr/bin/env bash
# The trust boundary on `uabid --shared` (docs/security.md): an unprivileged
# user (uid 65534) attacks while a victim of another uid (root) moves
# bytes, and every attack must end in an errno (or nothing):
#   7  symlinks planted in the shared socket directory: the daemon opens
#      nothing through them and the files they point at stay untouched;
#   1-5 tests/security/attacks.cpp as the attacker, while the victim runs
#      the in-order placement test (two processes, every byte checked);
#   6  fairness: the attacker floods chains of maximal CQ creates while the
#      victim times its round trips.
# Needs root (it switches uids); the exit status is 0 only if all passed.
#
#   run_security.sh UABID UABI_TOOL ATTACKS PLACEMENT
set -u
uabid=$1 tool=$2 attacks=$3 placement=$4
attacker=65534
fail=0
if [[ $(id -u) -ne 0 ]]; then
	echo "FAIL: run_security.sh needs root (it runs the attacker as uid $attacker)"
	exit 1
fi
# The attacker runs programs of the build tree: say so plainly when that
# user cannot (a clone inside a 0700 directory, as mktemp -d makes).
for f in "$tool" "$attacks" "$placement" "$uabid"; do
	if ! setpriv --reuid=$attacker --regid=$attacker --clear-groups test -x "$f" 2>/dev/null; then
		echo "FAIL: uid $attacker cannot run $f: the build tree must lie where every user may read it"
		exit 1
	fi
done
dir=$(mktemp -d /tmp/uabi-security.XXXXXX)
chmod 1777 "$dir"	# a shared directory, as /tmp is
sock=$dir/uabid.sock
export UABI_SOCKET=$sock UABI_BACKEND=daemon UABI_DAEMON_LOG=$dir/uabid.log
cleanup() {
	[[ -n ${vpid:-} ]] && kill "$vpid" 2>/dev/null
	"$tool" --socket "$sock" daemon stop >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
as_attacker() { "$attacks" drop-to "$attacker" "$@"; }
result() { # result OK WHAT
	if [[ $1 == 0 ]]; then echo "PASS: $2"; else echo "FAIL: $2"; fail=1; fi
}

# ---------------------------------------------------------------- attack 7
echo "# 7: symlinks planted in the shared directory"
echo "root's file" >"$dir/victim-lock"
echo "root's log" >"$dir/victim-log"
chmod 600 "$dir/victim-lock" "$dir/victim-log"
as_attacker ln -s "$dir/victim-lock" "$sock.lock"
"$uabid" --shared --socket "$sock" --idle-exit 0 >"$dir/start7.out" 2>&1
started=$?
"$tool" --socket "$sock" daemon stop >/dev/null 2>&1
[[ $(cat "$dir/victim-lock") == "root's file" ]]
result $(( started == 0 || $? != 0 )) "the lock file: a daemon refuses to start through a planted symlink (exit $started); root's file is untouched"
rm -f "$sock.lock"
as_attacker ln -s "$dir/victim-log" "$dir/uabid.log"
"$uabid" --shared --socket "$sock" --idle-exit 0 >"$dir/start7.out" 2>&1
started=$?
"$tool" --socket "$sock" daemon stop >/dev/null 2>&1
[[ $(cat "$dir/victim-log") == "root's log" ]]
result $? "the log: a daemon never writes through a planted symlink (started: exit $started); root's file is untouched"
rm -f "$dir/uabid.log"

# ------------------------------------------------------- the shared daemon
if ! "$uabid" --shared --socket "$sock" --idle-exit 0 >"$dir/start.out" 2>&1; then
	echo "FAIL: cannot start uabid --shared"; cat "$dir/start.out"; exit 1
fi
for _ in $(seq 100); do [[ -S $sock ]] && break; sleep 0.05; done
dpid=$(head -1 "$sock.lock" 2>/dev/null | tr -dc 0-9)
export UABI_DAEMON_PID=$dpid
stat -c '%A %U' "$sock.lock" "$dir/uabid.log" | sed 's/^/# /'

# The victim: two root processes moving bytes, every byte checked, the
# whole time the attacks run: placement's RDMA WRITEs and SENDs, run after
# run until the attacks are over.
victim() {
	local runs=0 mode
	while [[ ! -e $dir/attacks.done ]]; do
		for mode in write send; do
			if ! "$placement" --mode "$mode" --total 100000 --seconds 120 \
				>"$dir/victim.last" 2>&1; then
				cat "$dir/victim.last"
				echo "victim: run $runs ($mode) failed"
				return 1
			fi
			runs=$((runs + 1))
		done
	done
	echo "victim: $runs runs of 100,000 operations, every byte checked, 0 torn, 0 lost"
}
victim >"$dir/victim.out" 2>&1 &
vpid=$!
# A QP of the victim's the attacker aims at.
"$attacks" hold "$dir/victim.qpn" "$dir/attacks.done" &
hpid=$!
for _ in $(seq 200); do [[ -s $dir/victim.qpn ]] && break; sleep 0.05; done
# Its XRC files: one only root may read, one anyone may.
echo x >"$dir/xrc-private" && chmod 600 "$dir/xrc-private"
echo x >"$dir/xrc-public" && chmod 644 "$dir/xrc-public"

# ------------------------------------------------------------ attacks 1-5
# While the attacker holds its flood of silent connections, root connects.
(
	for _ in $(seq 600); do [[ -e $dir/held ]] && break; sleep 0.1; done
	if "$tool" --socket "$sock" status >/dev/null 2>&1; then
		echo "PASS: root connects while the attacker holds its silent connections"
	else
		echo "FAIL: root connects while the attacker holds its silent connections"
		touch "$dir/locked-out"
	fi
	touch "$dir/checked"
) &
cpid=$!
as_attacker "$attacks" attacker --victim-uid 0 --victim-qpn "$(cat "$dir/victim.qpn")" --xrc-file "$dir/xrc-private" \
	--open-xrc-file "$dir/xrc-public" --held-file "$dir/held" --checked-file "$dir/checked"
result $? "attacks 1-5 as uid $attacker"
wait "$cpid"
[[ ! -e $dir/locked-out ]] || fail=1

# ---------------------------------------------------------------- attack 6
echo "# 6: one user's chains of maximal CQ creates against another's round trips"
as_attacker "$attacks" flood --seconds 6 &
fpid=$!
sleep 1
"$attacks" probe --seconds 4 --p99-ms 250 --max-ms 1000
result $? "the victim's round trips stay bounded during the flood"
wait "$fpid"

# ------------------------------------------------------------ the victim
touch "$dir/attacks.done"
wait "$hpid"
wait "$vpid"
vrc=$?
vpid=
cat "$dir/victim.out"
result $vrc "the victim's RDMA WRITEs and SENDs byte-exact, none lost, during the attacks"
"$tool" --socket "$sock" status >/dev/null 2>&1
result $? "the shared daemon is alive at the end"
if grep -E 'WARNING|AddressSanitizer|runtime error' "$dir/uabid.log" "$dir/start.out"; then
	result 1 "the daemon's log is clean"
fi
echo "--- uabid.log (last lines)"
tail -15 "$dir/uabid.log"
((fail == 0)) && echo PASS || echo FAIL
exit $fail
