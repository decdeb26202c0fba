#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
# The verbs suite on a RoCE device (docs/wire.md): a uabid of its own with
# `uabi link add roce_lo netdev lo` at a port of its own, and the suite's
# endpoints on roce_lo, addressed by GID.  With --wire, UABI_WIRE_FORCE=1:
# every QP's traffic is RoCEv2 through the loopback interface; without it
# RC and UC keep shared memory (peers on this host) and UD is the wire.
# Usage: run_verbs_roce.sh UABI_TOOL SUITE [--wire] [gtest args...]
set -uo pipefail
tool=$1 suite=$2
shift 2
force=0
if [[ ${1:-} == --wire ]]; then
	force=1
	shift
fi
dir=$(mktemp -d /tmp/uabi-verbs-roce.XXXXXX)
export UABI_SOCKET=$dir/uabid.sock UABI_BACKEND=daemon
trap '"$tool" daemon stop >/dev/null 2>&1; rm -rf "$dir"' EXIT
UABI_WIRE_PORT=${UABI_WIRE_PORT:-$((20000 + RANDOM % 20000))} UABI_IDLE_EXIT=0 "$tool" link add roce_lo netdev lo >"$dir/link" 2>&1 ||
	{ echo "run_verbs_roce: FAIL: uabi link add"; cat "$dir/link"; exit 1; }
UABI_TEST_DEVICE=roce_lo UABI_WIRE_FORCE=$force "$suite" "$@"
