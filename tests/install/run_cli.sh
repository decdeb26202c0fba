#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# The command line as a user types it: options before or after the command
# (before the program for run), --version, every message ending with a
# newline, bad input answered with one clear line and exit status 2.
#   run_cli.sh UABI UABID
set -uo pipefail
uabi=$1 uabid=$2
tmp=$(mktemp -d)
export UABI_SOCKET=$tmp/sock/uabid.sock
unset UABI_BACKEND
trap '"$uabi" daemon stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# run EXPECTED_STATUS ARGS...: runs uabi, keeps stdout/stderr in $out/$err,
# and checks the status and that every output ends with a newline.
n=0
run() {
	local want=$1
	shift
	n=$((n + 1))
	"$uabi" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
	((status == want)) || fail "uabi $*: exit $status, want $want (stderr: $err)"
	for f in out err; do
		if [[ -s $tmp/$f && $(tail -c1 "$tmp/$f" | od -An -c | tr -d ' ') != '\n' ]]; then
			fail "uabi $*: std$f does not end with a newline: $(tail -c 40 "$tmp/$f")"
		fi
	done
}

# usage_error ARGS...: exit 2, nothing on stdout, "uabi: ..." and the hint.
usage_error() {
	run 2 "$@"
	[[ -z $out ]] || fail "uabi $*: printed on stdout: $out"
	[[ $(head -1 <<<"$err") == "uabi: "* ]] || fail "uabi $*: no 'uabi: ' message: $err"
	echo "uabi $* -> $(head -1 <<<"$err")"
}

echo "== --version"
for v in --version -V version "status --version"; do
	run 0 $v
	[[ $out =~ ^uabi\ \(rdma-uabi\)\ [0-9]+\.[0-9]+ ]] || fail "uabi $v: '$out'"
done
echo "$out"
"$uabid" --version | grep -qE '^uabid \(rdma-uabi\) [0-9]' || fail "uabid --version"

echo "== options before or after the command, daemon not running"
run 3 --json status
before=$out
run 3 status --json
[[ $out == "$before" && $out == *'"running":false'* ]] || fail "status --json: '$out' vs '$before'"
run 3 status
[[ $err == *"uabid is not running"* ]] || fail "status: '$err'"
run 3 objects --json --socket "$UABI_SOCKET"

echo "== daemon start / status / objects / stop, options anywhere"
run 0 daemon start
[[ $out == "uabid started: pid "* ]] || fail "daemon start: '$out'"
run 0 daemon start
[[ $out == "uabid already running: pid "* ]] || fail "daemon start again: '$out'"
run 0 --socket "$UABI_SOCKET" daemon start
run 0 daemon --socket="$UABI_SOCKET" start
run 0 status --json
a=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["running"], d["pid"])' <<<"$out") ||
	fail "status --json: not JSON: $out"
run 0 --json status
b=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["running"], d["pid"])' <<<"$out")
[[ $a == "$b" && $a == "True "* ]] || fail "status --json '$a' vs --json status '$b'"
run 0 status --backend daemon
[[ $out == *"backend   daemon (UABI_BACKEND=daemon)"* ]] || fail "status --backend daemon: $out"
run 0 status
run 0 objects
run 0 objects --json
python3 -c 'import json,sys; assert isinstance(json.load(sys.stdin), list)' <<<"$out" ||
	fail "objects --json: $out"
run 0 --json objects

echo "== run: options before the program, the program's own after it"
run 0 run --backend inproc -- /bin/sh -c 'echo "$UABI_BACKEND"'
[[ $out == inproc ]] || fail "run --backend inproc: '$out'"
run 0 --backend=inproc run /bin/sh -c 'echo "$UABI_BACKEND"'
[[ $out == inproc ]] || fail "--backend=inproc run (no --): '$out'"
run 0 run -- /bin/sh -c 'echo "$# $*"' x --json --version -- status
[[ $out == "4 --json --version -- status" ]] || fail "run: the program's arguments: '$out'"
run 0 run /bin/sh -c 'echo "$UABI_BACKEND $UABI_SOCKET"'
[[ $out == "daemon $UABI_SOCKET" ]] || fail "run pins backend and socket: '$out'"
run 127 run -- /nonexistent/program
[[ $err == "uabi: run: /nonexistent/program: No such file or directory" ]] || fail "run missing: '$err'"

run 0 daemon stop
[[ $out == "uabid stopped (pid "* ]] || fail "daemon stop: '$out'"
run 0 daemon stop
[[ $out == "uabid is not running (socket $UABI_SOCKET)" ]] || fail "daemon stop again: '$out'"

echo "== bad input"
usage_error
usage_error frob
usage_error status --frob
usage_error --frob status
usage_error status extra
usage_error status --socket
usage_error status --socket=
usage_error status --backend
usage_error status --backend=nonsense
usage_error status --json=yes
usage_error daemon
usage_error daemon restart
usage_error run
usage_error run --backend inproc
UABI_BACKEND=nonsense usage_error status
[[ $err == *"UABI_BACKEND=nonsense: unknown backend"* ]] || fail "UABI_BACKEND=nonsense: '$err'"
"$uabid" --frob >/dev/null 2>"$tmp/err"
[[ $? == 2 && $(head -1 "$tmp/err") == "uabid: unknown option '--frob'" ]] ||
	fail "uabid --frob: $(head -1 "$tmp/err")"

echo "== help"
run 0 --help
[[ $out == usage:* ]] || fail "--help"
run 0 status --help
run 0 help

echo
echo "$n invocations, $failures failure(s)"
((failures == 0))
